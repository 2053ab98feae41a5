/* tests for src/drivers/vnet.c: the virtio_net_hdr brisk writes for plain, checksum-offloaded and TSO
 * packets, and the checks and checksum completion on headers read from the kernel, hostile offsets
 * included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/virtio_net.h>

#include "drivers/vnet.h"
#include "support/fakedev.h"
#include "wire/csum.h"
#include "wire/tcp.h"

#define SRC IP4(10, 0, 0, 1)
#define DST IP4(10, 0, 0, 2)

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1}, mac_b[6] = {2, 0, 0, 0, 0, 2};

/* An Ethernet + IPv4 + TCP frame with `opt` bytes of TCP options (NOPs) and `payload` bytes; the TCP
 * checksum is left partial (pseudo-header sum) when `partial`, else complete. Returns the frame length. */
static size_t make_frame(uint8_t *buf, size_t opt, size_t payload, int partial)
{
    uint8_t seg[8192];
    size_t hl = 20 + opt, len = hl + payload;
    memset(seg, 0, sizeof(seg));
    seg[0] = 0x13, seg[1] = 0x89; /* port 5001 */
    seg[2] = 0xc3, seg[3] = 0x50;
    seg[12] = (uint8_t)((hl / 4) << 4);
    seg[13] = 0x18; /* PSH ACK */
    seg[14] = 0xff;
    memset(seg + 20, 1, opt);
    for (size_t i = 0; i < payload; i++)
        seg[hl + i] = (uint8_t)(i * 7 + 3);
    if (partial)
        brisk_tcp_csum_fill_partial(seg, len, SRC, DST);
    else
        brisk_tcp_csum_fill(seg, len, SRC, DST);
    return fakedev_ipv4_frame(buf, mac_b, mac_a, SRC, DST, 6, seg, len);
}

static int tcp_csum_ok(const uint8_t *frame, size_t len)
{
    const uint8_t *seg = frame + 34;
    size_t sl = len - 34;
    uint32_t sum = brisk_csum_pseudo(SRC, DST, 6, (uint16_t)sl) + brisk_csum_add(0, seg, sl);
    return brisk_csum_fold(sum) == 0;
}

static brisk_pkt pkt_of(uint8_t *frame, size_t len, int partial, uint16_t gso_size)
{
    brisk_pkt p;
    memset(&p, 0, sizeof(p));
    p.data = frame;
    p.len = (uint32_t)len;
    if (partial) {
        p.flags = BRISK_PKT_CSUM_PARTIAL;
        p.csum_start = 34;
        p.csum_offset = BRISK_TCP_CSUM_OFF;
    }
    p.gso_size = gso_size;
    return p;
}

static struct virtio_net_hdr hdr_of(const uint8_t *b)
{
    struct virtio_net_hdr h;
    memcpy(&h, b, sizeof(h));
    return h;
}

static void test_tx_plain(void **state)
{
    (void)state;
    uint8_t f[2048], hdr[BRISK_VNET_HDR_LEN];
    size_t len = make_frame(f, 0, 100, 0);
    brisk_pkt p = pkt_of(f, len, 0, 0);
    for (int offload = 0; offload < 2; offload++) {
        memset(hdr, 0xaa, sizeof(hdr));
        assert_int_equal(brisk_vnet_tx_hdr(&p, offload, hdr), 0);
        static const uint8_t zero[BRISK_VNET_HDR_LEN];
        assert_memory_equal(hdr, zero, sizeof(zero)); /* nothing for the kernel to do */
    }
}

/* Without offloads the kernel expects a finished checksum: the driver completes it. */
static void test_tx_partial_no_offload(void **state)
{
    (void)state;
    uint8_t f[2048], hdr[BRISK_VNET_HDR_LEN];
    size_t len = make_frame(f, 12, 333, 1);
    assert_false(tcp_csum_ok(f, len));
    brisk_pkt p = pkt_of(f, len, 1, 0);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 0, hdr), 0);
    assert_true(tcp_csum_ok(f, len));
    assert_int_equal(hdr_of(hdr).flags, 0);
    /* A super-frame cannot go to a device without TSO. */
    p = pkt_of(f, len, 1, 100);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 0, hdr), BRISK_VNET_NO_OFFLOAD);
}

/* With offloads: NEEDS_CSUM with the offsets, and for TSO the GSO type, size and header length. */
static void test_tx_offload(void **state)
{
    (void)state;
    uint8_t f[2048], hdr[BRISK_VNET_HDR_LEN];
    size_t len = make_frame(f, 12, 1500, 1);
    brisk_pkt p = pkt_of(f, len, 1, 0);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 1, hdr), 0);
    struct virtio_net_hdr h = hdr_of(hdr);
    assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    assert_int_equal(h.csum_start, 34);
    assert_int_equal(h.csum_offset, 16);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    assert_false(tcp_csum_ok(f, len)); /* left to the kernel */

    p = pkt_of(f, len, 1, 1436);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 1, hdr), 0);
    h = hdr_of(hdr);
    assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(h.gso_size, 1436);
    assert_int_equal(h.hdr_len, 14 + 20 + 32);

    /* TSO needs the partial checksum (the kernel recomputes per segment); bad offsets are refused. */
    p = pkt_of(f, len, 0, 1436);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 1, hdr), BRISK_VNET_BAD_GSO);
    p = pkt_of(f, len, 1, 0);
    p.csum_start = (uint16_t)(len - 17);
    assert_int_equal(brisk_vnet_tx_hdr(&p, 1, hdr), BRISK_VNET_BAD_CSUM);
    p.csum_start = 10;
    assert_int_equal(brisk_vnet_tx_hdr(&p, 1, hdr), BRISK_VNET_BAD_CSUM);
}

static size_t rx_buf(uint8_t *buf, const struct virtio_net_hdr *h, size_t opt, size_t payload, int partial)
{
    memcpy(buf, h, sizeof(*h));
    return BRISK_VNET_HDR_LEN + make_frame(buf + BRISK_VNET_HDR_LEN, opt, payload, partial);
}

static void test_rx_checksum_valid(void **state)
{
    (void)state;
    uint8_t b[8192], copy[8192];
    /* NEEDS_CSUM: the kernel's own frame with a partial checksum, passed on checksum-valid, not modified. */
    struct virtio_net_hdr h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16};
    size_t n = rx_buf(b, &h, 0, 1000, 1);
    memcpy(copy, b, n);
    struct brisk_vnet_rx info;
    int len = brisk_vnet_rx(b, n, &info);
    assert_int_equal(len, (int)(n - BRISK_VNET_HDR_LEN));
    assert_true(info.csum_valid);
    assert_false(info.gso);
    assert_memory_equal(copy, b, n);
    assert_false(tcp_csum_ok(b + BRISK_VNET_HDR_LEN, (size_t)len)); /* still the seed */

    /* A GRO'd super-frame from the kernel: reported with its segment size, checksum-valid. */
    h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
    h.gso_size = 1448;
    n = rx_buf(b, &h, 12, 3000, 1);
    len = brisk_vnet_rx(b, n, &info);
    assert_true(len > 0);
    assert_true(info.gso);
    assert_true(info.csum_valid);
    assert_int_equal(info.gso_size, 1448);

    /* DATA_VALID: verified below us, also checksum-valid. */
    struct virtio_net_hdr dv = {.flags = VIRTIO_NET_HDR_F_DATA_VALID};
    n = rx_buf(b, &dv, 0, 100, 0);
    assert_int_equal(brisk_vnet_rx(b, n, &info), (int)(n - BRISK_VNET_HDR_LEN));
    assert_true(info.csum_valid);

    /* No flags: the frame passes untouched and unvouched for (a corrupt checksum is the stack's to find). */
    struct virtio_net_hdr plain = {0};
    n = rx_buf(b, &plain, 0, 10, 1);
    memcpy(copy, b, n);
    assert_int_equal(brisk_vnet_rx(b, n, &info), (int)(n - BRISK_VNET_HDR_LEN));
    assert_false(info.csum_valid);
    assert_memory_equal(copy, b, n);
}

/* Offsets from the header are checked against the frame: a header that lies drops the frame. */
static void test_rx_hostile(void **state)
{
    (void)state;
    uint8_t b[8192] = {0};
    struct brisk_vnet_rx info;
    assert_int_equal(brisk_vnet_rx(b, 0, &info), BRISK_VNET_SHORT);
    assert_int_equal(brisk_vnet_rx(b, BRISK_VNET_HDR_LEN + 13, &info), BRISK_VNET_SHORT);
    struct virtio_net_hdr h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16};
    size_t n = rx_buf(b, &h, 0, 0, 1); /* 54-byte frame: the field is at 50..51 */
    size_t flen = n - BRISK_VNET_HDR_LEN;
    struct {
        uint16_t start, off;
        int ok;
    } cases[] = {
        {34, 16, 1},
        {(uint16_t)(flen - 2), 0, 1},       /* the last two bytes */
        {(uint16_t)(flen - 1), 0, 0},       /* one byte short */
        {(uint16_t)flen, 0, 0},             /* at the end */
        {34, (uint16_t)(flen - 34 - 1), 0}, /* offset runs past the end */
        {0xffff, 0xffff, 0},                /* overflow bait */
        {2, 16, 0},                         /* inside the Ethernet header */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = rx_buf(b, &h, 0, 0, 1);
        struct virtio_net_hdr bad = h;
        bad.csum_start = cases[i].start;
        bad.csum_offset = cases[i].off;
        memcpy(b, &bad, sizeof(bad));
        int rc = brisk_vnet_rx(b, n, &info);
        if (cases[i].ok)
            assert_int_equal(rc, (int)flen);
        else
            assert_int_equal(rc, BRISK_VNET_BAD_CSUM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tx_plain),   cmocka_unit_test(test_tx_partial_no_offload),
        cmocka_unit_test(test_tx_offload), cmocka_unit_test(test_rx_checksum_valid),
        cmocka_unit_test(test_rx_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
