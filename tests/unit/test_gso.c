/*
 * test_gso.c — software segmentation (src/net/gso.c): a 64 KB super-frame cut at 1448 bytes, odd payload
 * and segment sizes, URG rebasing, IPv4 options and id wrap, CHECKSUM_PARTIAL and complete inputs giving the
 * same output, and malformed inputs refused — with the expected code and without emitting anything. Every
 * output frame is re-parsed with the wire parsers, TCP checksum verified.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/brisk.h"
#include "net/gso.h"
#include "stack/stack.h"
#include "support/testutil.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define SRC_IP 0x0a000001u
#define DST_IP 0x0a000002u

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* What the emit callback saw. */
struct sink {
    uint8_t *data; /* frames back to back */
    size_t used, cap;
    size_t off[70000], len[70000];
    size_t n;
};

static void sink_emit(void *ctx, const uint8_t *frame, size_t len)
{
    struct sink *s = ctx;
    assert_true(s->n < sizeof s->off / sizeof s->off[0]);
    assert_true(s->used + len <= s->cap);
    memcpy(s->data + s->used, frame, len);
    s->off[s->n] = s->used;
    s->len[s->n] = len;
    s->used += len;
    s->n++;
}

static struct sink *sink_new(void)
{
    struct sink *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->cap = 8u << 20;
    s->data = malloc(s->cap);
    assert_non_null(s->data);
    return s;
}

static void sink_free(struct sink *s)
{
    free(s->data);
    free(s);
}

/* The parameters of a forged super-frame. */
struct sf {
    size_t payload;
    uint8_t flags;
    uint16_t urg;
    uint16_t ip_id;
    uint32_t seq;
    int ip_opts;      /* add a 4-byte IPv4 option (NOP x 3 + EOL) */
    int csum_partial; /* leave the CHECKSUM_PARTIAL seed instead of the full checksum */
};

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};

/* Builds the super-frame into b; returns its length. The payload bytes come from `rs`. */
static size_t forge(uint8_t *b, const struct sf *p, uint64_t *rs)
{
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_IPV4};
    memcpy(eth.dst, mac_b, 6);
    memcpy(eth.src, mac_a, 6);
    brisk_eth_emit(b, &eth);

    struct brisk_tcp_repr tcp;
    memset(&tcp, 0, sizeof tcp);
    tcp.sport = 40000;
    tcp.dport = 5201;
    tcp.seq = p->seq;
    tcp.ack = 0x11223344;
    tcp.flags = p->flags;
    tcp.window = 501;
    tcp.urg = p->urg;
    tcp.opts.ts_ok = 1;
    tcp.opts.ts_val = 1000;
    tcp.opts.ts_ecr = 2000;
    size_t ip_hlen = p->ip_opts ? 24 : 20;
    uint8_t *th = b + BRISK_ETH_HLEN + ip_hlen;
    size_t thlen = brisk_tcp_emit(th, &tcp);
    for (size_t i = 0; i < p->payload; i++)
        th[thlen + i] = (uint8_t)rng_next(rs);
    if (p->csum_partial)
        brisk_tcp_csum_fill_partial(th, thlen + p->payload, SRC_IP, DST_IP);
    else
        brisk_tcp_csum_fill(th, thlen + p->payload, SRC_IP, DST_IP);

    struct brisk_ipv4_repr ip = {.tos = 0x02,
                                 .total_len = (uint16_t)(ip_hlen + thlen + p->payload),
                                 .id = p->ip_id,
                                 .df = 1,
                                 .ttl = 64,
                                 .proto = BRISK_IP_PROTO_TCP,
                                 .src = SRC_IP,
                                 .dst = DST_IP};
    uint8_t *iph = b + BRISK_ETH_HLEN;
    brisk_ipv4_emit(iph, &ip);
    if (p->ip_opts) {
        iph[0] = 0x46;
        iph[20] = iph[21] = iph[22] = 1;
        iph[23] = 0;
        brisk_put16(iph + 10, 0);
        brisk_put16(iph + 10, brisk_csum_buf(iph, 24));
    }
    return BRISK_ETH_HLEN + ip_hlen + thlen + p->payload;
}

/* Segments `frame` with an exactly-sized scratch buffer; returns the result. */
static int run(const uint8_t *frame, size_t len, uint16_t gso, int partial, struct sink *s)
{
    size_t scratch_len = 14 + 60 + 60 + gso;
    uint8_t *scratch = malloc(scratch_len);
    assert_non_null(scratch);
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread of the input */
    assert_non_null(copy);
    memcpy(copy, frame, len);
    int rc = brisk_gso_segment(copy, len, gso, partial, scratch, scratch_len, sink_emit, s);
    free(copy);
    free(scratch);
    return rc;
}

/* Checks every output frame against the super-frame and the rules; fails with the context on error. */
static void check_output(const uint8_t *frame, size_t len, uint16_t gso, const struct sink *s,
                         const char *what)
{
    struct brisk_ipv4_repr oip;
    struct brisk_tcp_repr otcp;
    int orc = brisk_ipv4_parse(frame + 14, len - 14, &oip);
    assert_true(orc == 20 || orc == 24);
    orc = brisk_tcp_parse(frame + 14 + oip.hdr_len, oip.total_len - oip.hdr_len, oip.src, oip.dst, 0, &otcp);
    assert_int_equal(orc, 32);
    size_t payload = otcp.payload_len;
    size_t want_n = payload == 0 ? 1 : (payload + gso - 1) / gso;
    if (s->n != want_n)
        fail_msg("%s: %zu frames, want %zu", what, s->n, want_n);

    size_t off = 0;
    for (size_t i = 0; i < s->n; i++) {
        const uint8_t *f = s->data + s->off[i];
        size_t flen = s->len[i];
        assert_memory_equal(f, frame, 14); /* Ethernet header copied */
        struct brisk_ipv4_repr ip;
        int rc = brisk_ipv4_parse(f + 14, flen - 14, &ip);
        if (rc < 0)
            fail_msg("%s: frame %zu: IPv4 %s", what, i, brisk_wire_err_name(rc));
        assert_int_equal(ip.total_len, flen - 14);
        assert_int_equal(ip.id, (uint16_t)(oip.id + i));
        assert_int_equal(ip.hdr_len, oip.hdr_len);
        assert_memory_equal(f + 14 + 20, frame + 14 + 20, oip.hdr_len - 20u); /* IPv4 options copied */
        assert_true(ip.df == oip.df && ip.ttl == oip.ttl && ip.tos == oip.tos && ip.src == oip.src &&
                    ip.dst == oip.dst && ip.proto == BRISK_IP_PROTO_TCP && !brisk_ipv4_is_fragment(&ip));
        struct brisk_tcp_repr t;
        rc = brisk_tcp_parse(f + 14 + ip.hdr_len, ip.total_len - ip.hdr_len, ip.src, ip.dst, 1, &t);
        if (rc < 0)
            fail_msg("%s: frame %zu: TCP %s", what, i, brisk_wire_err_name(rc));
        size_t want_len = payload - off < gso ? payload - off : gso;
        if (t.payload_len != want_len)
            fail_msg("%s: frame %zu: %zu payload bytes, want %zu", what, i, t.payload_len, want_len);
        assert_memory_equal(t.payload, otcp.payload + off, t.payload_len); /* concatenation is the original */
        assert_int_equal(t.seq, otcp.seq + (uint32_t)off);
        assert_int_equal(t.ack, otcp.ack);
        assert_int_equal(t.window, otcp.window);
        assert_int_equal(t.sport, otcp.sport);
        assert_int_equal(t.dport, otcp.dport);
        assert_int_equal(t.hdr_len, otcp.hdr_len);
        assert_true(t.opts.ts_ok && t.opts.ts_val == otcp.opts.ts_val && t.opts.ts_ecr == otcp.opts.ts_ecr);

        uint8_t want_flags = otcp.flags;
        if (i + 1 < s->n)
            want_flags &= (uint8_t) ~(BRISK_TCP_FIN | BRISK_TCP_PSH);
        if (i > 0)
            want_flags &= (uint8_t)~BRISK_TCP_CWR;
        uint16_t want_urg = otcp.urg;
        if (otcp.flags & BRISK_TCP_URG) {
            if (otcp.urg > off) {
                want_urg = (uint16_t)(otcp.urg - off);
            } else {
                want_flags &= (uint8_t)~BRISK_TCP_URG;
                want_urg = 0;
            }
        }
        if (t.flags != want_flags)
            fail_msg("%s: frame %zu of %zu: flags %02x, want %02x", what, i, s->n, t.flags, want_flags);
        assert_int_equal(t.urg, want_urg);
        off += t.payload_len;
    }
    assert_int_equal(off, payload);
}

static void test_64k_superframe(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(1448);
    uint64_t rs = seed;
    static uint8_t frame[14 + 65535];
    /* The largest IPv4 datagram: 65535 - 20 (IPv4) - 32 (TCP + timestamps) = 65483 payload bytes. */
    struct sf p = {.payload = 65483,
                   .flags = BRISK_TCP_ACK | BRISK_TCP_PSH | BRISK_TCP_FIN | BRISK_TCP_CWR | BRISK_TCP_ECE,
                   .ip_id = 0x4000,
                   .seq = 0xffff0000u,
                   .csum_partial = 1}; /* the sequence space wraps */
    size_t len = forge(frame, &p, &rs);
    assert_int_equal(len, 14 + 65535);

    struct sink *a = sink_new(), *b = sink_new();
    int n = run(frame, len, 1448, 1, a);
    if (n != 46) /* ceil(65483 / 1448): 45 full frames and one of 323 bytes */
        fail_msg("seed %llu: %d frames", (unsigned long long)seed, n);
    check_output(frame, len, 1448, a, "64k partial");
    assert_int_equal(a->len[45], 14 + 20 + 32 + 323);
    /* The first and last frames, spelled out. */
    struct brisk_tcp_repr t;
    assert_int_equal(brisk_tcp_parse(a->data + a->off[0] + 34, a->len[0] - 34, SRC_IP, DST_IP, 1, &t), 32);
    assert_int_equal(t.flags, BRISK_TCP_ACK | BRISK_TCP_CWR | BRISK_TCP_ECE);
    assert_int_equal(brisk_tcp_parse(a->data + a->off[45] + 34, a->len[45] - 34, SRC_IP, DST_IP, 1, &t), 32);
    assert_int_equal(t.flags, BRISK_TCP_ACK | BRISK_TCP_PSH | BRISK_TCP_FIN | BRISK_TCP_ECE);
    assert_int_equal(t.seq, (uint32_t)(0xffff0000u + 45u * 1448u)); /* wrapped past 0 */

    /* The same super-frame with a complete checksum gives byte-identical output. */
    rs = seed;
    p.csum_partial = 0;
    len = forge(frame, &p, &rs);
    assert_int_equal(run(frame, len, 1448, 0, b), 46);
    assert_int_equal(a->used, b->used);
    assert_memory_equal(a->data, b->data, a->used);
    sink_free(a);
    sink_free(b);
}

/* brisk_gso_cut's pieces, with a partial checksum: each piece's seed and offsets as announced. */
struct cut_sink {
    struct sink *s;
    int complete; /* complete each partial checksum the way a device would */
};

static void cut_emit(void *ctx, const struct brisk_gso_piece *pc)
{
    struct cut_sink *c = ctx;
    uint8_t f[14 + 60 + 60 + 1448];
    assert_true(pc->hdr_len + pc->payload_len <= sizeof f);
    assert_int_equal(pc->csum_start, 14 + 20);
    assert_int_equal(pc->csum_offset, BRISK_TCP_CSUM_OFF);
    memcpy(f, pc->hdrs, pc->hdr_len);
    memcpy(f + pc->hdr_len, pc->payload, pc->payload_len);
    size_t len = pc->hdr_len + pc->payload_len;
    if (c->complete) {
        /* The field holds this frame's pseudo-header seed: not yet a valid checksum... */
        assert_int_not_equal(
            brisk_tcp_parse(f + 34, len - 34, SRC_IP, DST_IP, 1, &(struct brisk_tcp_repr){0}), 32);
        brisk_csum_complete_partial(f, len, pc->csum_start, pc->csum_offset);
    }
    sink_emit(c->s, f, len);
}

/* brisk_gso_cut hands out headers and payload slices that assemble into exactly brisk_gso_segment's frames:
 * with complete checksums, and with partial ones that a device completes. The payload pointers are slices
 * of the super-frame itself (no copy was made). */
static void test_cut_matches_segment(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(2024);
    uint64_t rs = seed;
    static uint8_t frame[14 + 65535];
    struct sf p = {.payload = 40000 + (size_t)(rng_next(&rs) % 20000),
                   .flags = BRISK_TCP_ACK | BRISK_TCP_PSH,
                   .seq = (uint32_t)rng_next(&rs),
                   .csum_partial = 1};
    size_t len = forge(frame, &p, &rs);
    struct sink *want = sink_new(), *full = sink_new(), *part = sink_new();
    int n = run(frame, len, 1448, 1, want);
    assert_true(n > 1);
    uint8_t hdrbuf[14 + 60 + 60];
    struct cut_sink cf = {.s = full, .complete = 0}, cp = {.s = part, .complete = 1};
    assert_int_equal(brisk_gso_cut(frame, len, 1448, 0, hdrbuf, sizeof hdrbuf, cut_emit, &cf), n);
    assert_int_equal(
        brisk_gso_cut(frame, len, 1448, BRISK_GSO_CSUM_PARTIAL, hdrbuf, sizeof hdrbuf, cut_emit, &cp), n);
    if (full->used != want->used || memcmp(full->data, want->data, want->used) != 0)
        fail_msg("seed %llu: complete-checksum pieces differ from brisk_gso_segment",
                 (unsigned long long)seed);
    if (part->used != want->used || memcmp(part->data, want->data, want->used) != 0)
        fail_msg("seed %llu: partial-checksum pieces, completed, differ", (unsigned long long)seed);
    /* A header buffer shorter than the headers is refused before anything is emitted. */
    struct sink *none = sink_new();
    struct cut_sink cn = {.s = none, .complete = 0};
    assert_int_equal(brisk_gso_cut(frame, len, 1448, 0, hdrbuf, 14 + 20 + 31, cut_emit, &cn),
                     BRISK_ERR_INVAL);
    assert_int_equal(none->n, 0);
    sink_free(want);
    sink_free(full);
    sink_free(part);
    sink_free(none);
}

static void test_odd_sizes(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(536);
    uint64_t rs = seed;
    static uint8_t frame[14 + 65535];
    static const size_t payloads[] = {0, 1, 535, 536, 537, 1447, 1448, 1449, 2896, 2897, 9000, 20000};
    static const uint16_t gsos[] = {1, 7, 536, 1448, 9000, 65535};
    for (size_t pi = 0; pi < sizeof payloads / sizeof payloads[0]; pi++) {
        for (size_t gi = 0; gi < sizeof gsos / sizeof gsos[0]; gi++) {
            if (gsos[gi] < 100 && payloads[pi] > 3000)
                continue; /* keeps the test fast; small sizes are covered by the smaller payloads */
            for (int partial = 0; partial <= 1; partial++) {
                struct sf p = {.payload = payloads[pi],
                               .flags = BRISK_TCP_ACK | BRISK_TCP_PSH,
                               .ip_id = 0xfffe, /* ids wrap */
                               .seq = (uint32_t)rng_next(&rs),
                               .ip_opts = (int)(pi & 1),
                               .csum_partial = partial};
                size_t len = forge(frame, &p, &rs);
                struct sink *s = sink_new();
                int n = run(frame, len, gsos[gi], partial, s);
                char what[96];
                snprintf(what, sizeof what, "seed %llu payload %zu gso %u partial %d",
                         (unsigned long long)seed, payloads[pi], gsos[gi], partial);
                if (n < 0 || (size_t)n != s->n)
                    fail_msg("%s: returned %d, emitted %zu", what, n, s->n);
                check_output(frame, len, gsos[gi], s, what);
                sink_free(s);
            }
        }
    }
}

static void test_single_frame_completed(void **state)
{
    (void)state;
    uint64_t rs = brisk_test_seed(1);
    uint8_t frame[14 + 24 + 32 + 1448];
    /* Exactly one MSS, CHECKSUM_PARTIAL: one frame, identical to the input except the completed checksum. */
    struct sf p = {
        .payload = 1448, .flags = BRISK_TCP_ACK | BRISK_TCP_PSH, .ip_id = 9, .seq = 1, .csum_partial = 1};
    size_t len = forge(frame, &p, &rs);
    struct sink *s = sink_new();
    assert_int_equal(run(frame, len, 1448, 1, s), 1);
    assert_int_equal(s->len[0], len);
    uint8_t want[sizeof frame];
    memcpy(want, frame, len);
    brisk_tcp_csum_fill(want + 34, len - 34, SRC_IP, DST_IP);
    assert_memory_not_equal(want, frame, len); /* the input really was partial */
    assert_memory_equal(s->data, want, len);
    sink_free(s);

    /* Ethernet padding after a small frame is not copied out. */
    uint8_t small[80];
    memset(small, 0, sizeof small);
    p.payload = 0;
    p.flags = BRISK_TCP_ACK;
    len = forge(small, &p, &rs);
    assert_int_equal(len, 66);
    s = sink_new();
    assert_int_equal(run(small, sizeof small, 1448, 1, s), 1);
    assert_int_equal(s->len[0], 66);
    check_output(small, sizeof small, 1448, s, "padded ack");
    sink_free(s);
}

static void test_urgent_pointer(void **state)
{
    (void)state;
    uint64_t rs = brisk_test_seed(6093);
    static uint8_t frame[14 + 20 + 32 + 6000];
    struct sf p = {.payload = 6000, .flags = BRISK_TCP_ACK | BRISK_TCP_URG, .urg = 3000, .seq = 77};
    size_t len = forge(frame, &p, &rs);
    struct sink *s = sink_new();
    assert_int_equal(run(frame, len, 1448, 0, s), 5);
    check_output(frame, len, 1448, s, "urgent");
    static const uint16_t want_urg[] = {3000, 1552, 104, 0, 0};
    for (size_t i = 0; i < 5; i++) {
        const uint8_t *th = s->data + s->off[i] + 34;
        assert_int_equal(brisk_get16(th + 18), want_urg[i]);
        assert_int_equal((th[13] & BRISK_TCP_URG) != 0, want_urg[i] != 0);
    }
    /* Urgent data ending exactly where a frame starts: that frame has none. */
    p.urg = 2 * 1448;
    len = forge(frame, &p, &rs);
    s->n = s->used = 0;
    assert_int_equal(run(frame, len, 1448, 0, s), 5);
    check_output(frame, len, 1448, s, "urgent at a boundary");
    static const uint16_t want_urg2[] = {2896, 1448, 0, 0, 0};
    for (size_t i = 0; i < 5; i++) {
        const uint8_t *th = s->data + s->off[i] + 34;
        assert_int_equal(brisk_get16(th + 18), want_urg2[i]);
        assert_int_equal((th[13] & BRISK_TCP_URG) != 0, want_urg2[i] != 0);
    }
    sink_free(s);
}

/* Expects `rc` from segmenting `frame` and that nothing was emitted. */
static void expect_reject(struct sink *s, const uint8_t *frame, size_t len, uint16_t gso, int want,
                          const char *what)
{
    s->n = s->used = 0;
    int rc = run(frame, len, gso, 1, s);
    if (rc != want || s->n != 0)
        fail_msg("%s (len %zu): got %d (%s) and %zu frames, want %d", what, len, rc, brisk_wire_err_name(rc),
                 s->n, want);
}

/* Re-fixes the IPv4 header checksum after an edit. */
static void fix_ip(uint8_t *frame)
{
    uint8_t *ip = frame + 14;
    size_t hl = (size_t)(ip[0] & 0x0f) * 4;
    brisk_put16(ip + 10, 0);
    brisk_put16(ip + 10, brisk_csum_buf(ip, hl < 20 ? 20 : hl));
}

static void test_malformed(void **state)
{
    (void)state;
    uint64_t rs = brisk_test_seed(2);
    enum { PAY = 3000 };
    static uint8_t good[14 + 20 + 32 + PAY], f[sizeof good];
    struct sf p = {.payload = PAY, .flags = BRISK_TCP_ACK, .seq = 5, .csum_partial = 1};
    size_t len = forge(good, &p, &rs);
    assert_int_equal(len, sizeof good);

    /* Arguments. */
    uint8_t scratch[14 + 60 + 60 + 1448];
    struct sink *s = sink_new();
    assert_int_equal(brisk_gso_segment(good, len, 0, 1, scratch, sizeof scratch, sink_emit, s),
                     BRISK_ERR_INVAL);
    assert_int_equal(brisk_gso_segment(NULL, len, 1448, 1, scratch, sizeof scratch, sink_emit, s),
                     BRISK_ERR_INVAL);
    assert_int_equal(brisk_gso_segment(good, len, 1448, 1, NULL, sizeof scratch, sink_emit, s),
                     BRISK_ERR_INVAL);
    assert_int_equal(brisk_gso_segment(good, len, 1448, 1, scratch, sizeof scratch, NULL, s),
                     BRISK_ERR_INVAL);
    /* Scratch: headers (66) + one segment is the minimum. */
    assert_int_equal(brisk_gso_segment(good, len, 1448, 1, scratch, 66 + 1447, sink_emit, s),
                     BRISK_ERR_INVAL);
    assert_int_equal(s->n, 0);
    assert_int_equal(brisk_gso_segment(good, len, 1448, 1, scratch, 66 + 1448, sink_emit, s), 3);
    assert_int_equal(s->n, 3);

    /* Truncated at every length: each is refused as truncated (Ethernet, IPv4 header, or total length). */
    for (size_t l = 0; l < len; l++)
        expect_reject(s, good, l, 1448, BRISK_WIRE_TRUNCATED, "truncated");

    /* Not IPv4 / not TCP / a fragment: BRISK_ERR_INVAL. A VLAN tag: unsupported. */
    memcpy(f, good, len);
    brisk_put16(f + 12, BRISK_ETH_P_ARP);
    expect_reject(s, f, len, 1448, BRISK_ERR_INVAL, "ARP ethertype");
    brisk_put16(f + 12, 0x86dd); /* an IPv4 header under IPv6's EtherType: IPv6's parser says version 4 */
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_VERSION, "IPv6 ethertype over an IPv4 header");
    brisk_put16(f + 12, BRISK_ETH_P_VLAN);
    expect_reject(s, f, len, 1448, BRISK_WIRE_UNSUPPORTED, "VLAN");
    memcpy(f, good, len);
    f[14 + 9] = BRISK_IP_PROTO_UDP;
    fix_ip(f);
    expect_reject(s, f, len, 1448, BRISK_ERR_INVAL, "UDP");
    memcpy(f, good, len);
    f[14 + 6] |= 0x20; /* MF */
    fix_ip(f);
    expect_reject(s, f, len, 1448, BRISK_ERR_INVAL, "fragment");

    /* A bad IPv4 header. */
    memcpy(f, good, len);
    f[14 + 8] ^= 1; /* TTL changed, checksum not fixed */
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_CSUM, "IPv4 checksum");
    memcpy(f, good, len);
    f[14] = 0x65;
    fix_ip(f);
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_VERSION, "IPv4 version");
    memcpy(f, good, len);
    brisk_put16(f + 14 + 2, 19);
    fix_ip(f);
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_TOTLEN, "IPv4 total length");

    /* A bad TCP header. */
    memcpy(f, good, len);
    f[34 + 12] = 0x40;
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_HDRLEN, "TCP data offset");
    memcpy(f, good, len);
    f[34 + 22] = BRISK_TCPOPT_MSS; /* NOP,NOP,TS,10 becomes NOP,NOP,MSS,10: wrong length for MSS */
    expect_reject(s, f, len, 1448, BRISK_WIRE_BAD_OPTION, "TCP option");

    /* SYN or RST that would need cutting. */
    static const uint8_t no_cut[] = {BRISK_TCP_SYN, BRISK_TCP_SYN | BRISK_TCP_ACK, BRISK_TCP_RST,
                                     BRISK_TCP_RST | BRISK_TCP_ACK};
    for (size_t i = 0; i < sizeof no_cut; i++) {
        memcpy(f, good, len);
        f[34 + 13] = no_cut[i];
        expect_reject(s, f, len, 1448, BRISK_ERR_INVAL, "SYN/RST");
        /* ... but it is fine when it fits one frame. */
        s->n = s->used = 0;
        assert_int_equal(run(f, len, 3000, 1, s), 1);
        assert_int_equal(s->data[34 + 13], no_cut[i]);
    }
    sink_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_64k_superframe), cmocka_unit_test(test_cut_matches_segment),
        cmocka_unit_test(test_odd_sizes),      cmocka_unit_test(test_single_frame_completed),
        cmocka_unit_test(test_urgent_pointer), cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
