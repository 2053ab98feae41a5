/* tests for src/drivers/tap.c: configuration and address parsing (no privileges needed), then — as root, in a
 * network namespace of the test's own (unshare) — the device as the stack sees it (name, MAC, offload
 * capabilities), and the TX ring: a full ring refuses with BRISK_ERR_BUSY, delayed completions come no
 * earlier than txc_delay after the write, and a completion frees the ring for the next packet; eager receive
 * (frames from a packet socket on the kernel side: which ones go to the stack alone). Without root
 * or /dev/net/tun the device tests are skipped with the reason printed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "brisk/tap.h"

#define MS BRISK_NSEC_PER_MSEC

static int have_netns; /* set by the group setup: the device tests may run */
static char skip_reason[128];

static void test_parse_cidr(void **state)
{
    (void)state;
    uint32_t ip = 0;
    uint8_t plen = 24;
    assert_int_equal(brisk_tap_parse_cidr("10.1.2.3/16", &ip, &plen), BRISK_OK);
    assert_int_equal(ip, 0x0a010203u);
    assert_int_equal(plen, 16);
    assert_int_equal(brisk_tap_parse_cidr("192.168.0.1", &ip, &plen), BRISK_OK); /* prefix kept */
    assert_int_equal(ip, 0xc0a80001u);
    assert_int_equal(plen, 16);
    assert_int_equal(brisk_tap_parse_cidr("1.2.3.4/32", &ip, &plen), BRISK_OK);
    assert_int_equal(plen, 32);
    static const char *bad[] = {"",           "/24",        "1.2.3.4/",  "1.2.3.4/0", "1.2.3.4/33",
                                "1.2.3.4/2a", "1.2.3/24",   "1.2.3.4.5", "256.1.1.1", "1.2.3.4/024",
                                " 1.2.3.4",   "1.2.3.4/-1", "a.b.c.d"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ip = 7;
        plen = 7;
        assert_int_equal(brisk_tap_parse_cidr(bad[i], &ip, &plen), BRISK_ERR_INVAL);
        assert_int_equal(ip, 7); /* untouched on error */
        assert_int_equal(plen, 7);
    }
    assert_int_equal(brisk_tap_parse_cidr(NULL, &ip, &plen), BRISK_ERR_INVAL);
}

/* Bad configurations are refused before any system call, with a reason. */
static void test_config(void **state)
{
    (void)state;
    struct brisk_tap_config c;
    brisk_tap_config_default(&c);
    assert_string_equal(c.ifname, "brisk0");
    assert_int_equal(c.mtu, 1500);
    assert_int_equal(c.gso, 1);
    assert_int_equal(c.tx_ring, 256);
    brisk_stack *st = brisk_stack_new(NULL);
    int err;
    brisk_loop *l = brisk_loop_new(st, &err);
    assert_non_null(l);
    char why[128];

    err = 0;
    assert_null(brisk_tap_open(l, &c, &err, why, sizeof(why))); /* no IP */
    assert_int_equal(err, BRISK_ERR_INVAL);
    assert_true(strlen(why) > 0);
    c.ip = 0x0a000002u;
    c.mtu = 67;
    assert_null(brisk_tap_open(l, &c, &err, why, sizeof(why)));
    assert_int_equal(err, BRISK_ERR_INVAL);
    c.mtu = 1500;
    c.mac[0] = 1; /* multicast */
    assert_null(brisk_tap_open(l, &c, &err, NULL, 0));
    assert_int_equal(err, BRISK_ERR_INVAL);
    c.mac[0] = 0;
    c.tx_ring = 0;
    assert_null(brisk_tap_open(l, &c, &err, NULL, 0));
    assert_int_equal(err, BRISK_ERR_INVAL);
    c.tx_ring = 8;
    c.fault.tx_loss = 1.5;
    assert_null(brisk_tap_open(l, &c, &err, why, sizeof(why)));
    assert_int_equal(err, BRISK_ERR_RANGE);
    c.fault.tx_loss = 0;
    c.gateway = 0x0b000001u; /* outside 10.0.0.0/24 */
    assert_null(brisk_tap_open(l, &c, &err, why, sizeof(why)));
    assert_int_equal(err, BRISK_ERR_NOROUTE);
    assert_non_null(strstr(why, "gateway"));
    assert_null(brisk_tap_open(NULL, &c, &err, NULL, 0));
    assert_int_equal(err, BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_sockets(st), 0);
    brisk_tap_close(NULL);
    brisk_loop_free(l);
    brisk_stack_free(st);
}

static int setup_netns(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        snprintf(skip_reason, sizeof(skip_reason), "not root");
        return 0;
    }
    int fd = open("/dev/net/tun", O_RDWR);
    if (fd < 0) {
        snprintf(skip_reason, sizeof(skip_reason), "cannot open /dev/net/tun");
        return 0;
    }
    close(fd);
    if (unshare(CLONE_NEWNET) != 0) {
        snprintf(skip_reason, sizeof(skip_reason), "cannot create a network namespace");
        return 0;
    }
    have_netns = 1;
    return 0;
}

#define NEED_NETNS()                                                                                         \
    do {                                                                                                     \
        if (!have_netns) {                                                                                   \
            printf("SKIP: %s\n", skip_reason);                                                               \
            skip();                                                                                          \
        }                                                                                                    \
    } while (0)

struct env {
    brisk_stack *st;
    brisk_loop *l;
    brisk_tap *t;
};

static void env_open(struct env *e, struct brisk_tap_config *c)
{
    e->st = brisk_stack_new(NULL);
    assert_non_null(e->st);
    int err;
    e->l = brisk_loop_new(e->st, &err);
    assert_non_null(e->l);
    char why[160] = "";
    e->t = brisk_tap_open(e->l, c, &err, why, sizeof(why));
    if (!e->t)
        fail_msg("brisk_tap_open: %s (%s)", brisk_strerror(err), why);
}

static void env_close(struct env *e)
{
    brisk_stack_free(e->st);
    brisk_tap_close(e->t);
    brisk_loop_free(e->l);
}

/* The device the stack sees: the kernel's name for "bt%d", a locally administered MAC, offloads per gso. */
static void test_device(void **state)
{
    (void)state;
    NEED_NETNS();
    for (int gso = 0; gso < 2; gso++) {
        struct brisk_tap_config c;
        brisk_tap_config_default(&c);
        snprintf(c.ifname, sizeof(c.ifname), "bt%%d");
        c.ip = 0x0a010002u;
        c.gso = gso;
        struct env e;
        env_open(&e, &c);
        assert_string_equal(brisk_tap_ifname(e.t), "bt0"); /* the namespace is new: the first one */
        assert_true(brisk_tap_fd(e.t) >= 0);
        const struct brisk_netdev_config *nc = brisk_netdev_config_of(brisk_tap_netdev(e.t));
        assert_string_equal(nc->name, "bt0");
        assert_int_equal(nc->mac[0], 0x02); /* locally administered, unicast */
        assert_int_equal(nc->caps, gso ? (BRISK_NETDEV_CAP_CSUM | BRISK_NETDEV_CAP_GSO) : 0u);
        assert_int_equal(nc->mtu, 1500);
        env_close(&e);
    }
}

/* The ring: two descriptors, completions 50 ms after the write. */
static void test_ring_and_delayed_completion(void **state)
{
    (void)state;
    NEED_NETNS();
    struct brisk_tap_config c;
    brisk_tap_config_default(&c);
    snprintf(c.ifname, sizeof(c.ifname), "btring");
    c.ip = 0x0a010002u;
    c.tx_ring = 2;
    c.txc_delay_ns = 50 * MS;
    struct env e;
    env_open(&e, &c);
    const uint32_t bcast = 0x0a0100ffu; /* directed broadcast: no ARP needed, straight to the device */
    uint64_t t0 = brisk_loop_clock();
    assert_int_equal(brisk_icmp_echo_send(e.st, bcast, 1, 1, 56, t0), BRISK_OK);
    assert_int_equal(brisk_icmp_echo_send(e.st, bcast, 1, 2, 56, t0), BRISK_OK);
    assert_int_equal(brisk_icmp_echo_send(e.st, bcast, 1, 3, 56, t0), BRISK_ERR_BUSY); /* ring full */
    struct brisk_tap_stats ts;
    brisk_tap_get_stats(e.t, &ts);
    assert_int_equal(ts.tx_frames, 2); /* written at once... */
    assert_int_equal(ts.tx_busy, 1);
    assert_int_equal(ts.tx_completions, 0); /* ...completed later, never from inside xmit */

    /* 20 ms of loop: the completions are due 50 ms after the writes, so none may have come. */
    assert_int_equal(brisk_loop_run(e.l, t0 + 20 * MS), BRISK_ERR_TIMEDOUT);
    brisk_tap_get_stats(e.t, &ts);
    assert_int_equal(ts.tx_completions, 0);
    struct brisk_netdev_stats ns;
    brisk_netdev_get_stats(brisk_tap_netdev(e.t), &ns);
    assert_int_equal(ns.tx_inflight, 2);

    /* By 200 ms both are complete, each no earlier than 50 ms after its xmit. */
    assert_int_equal(brisk_loop_run(e.l, t0 + 200 * MS), BRISK_ERR_TIMEDOUT);
    brisk_tap_get_stats(e.t, &ts);
    assert_int_equal(ts.tx_completions, 2);
    brisk_netdev_get_stats(brisk_tap_netdev(e.t), &ns);
    assert_int_equal(ns.tx_inflight, 0);
    assert_int_equal(ns.tx_completed, 2);
    assert_true(ns.tx_done_latency_ns >= 50 * MS);
    assert_int_equal(brisk_stack_pkts_in_use(e.st), 0);

    /* The ring has room again. */
    assert_int_equal(brisk_icmp_echo_send(e.st, bcast, 1, 4, 56, brisk_loop_clock()), BRISK_OK);
    env_close(&e);
}

/* The kernel's side of the TAP, as a packet socket bound to the interface: what it sends, brisk reads. */
static int kernel_side(const char *ifname)
{
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = (int)if_nametoindex(ifname);
    assert_true(sll.sll_ifindex > 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
    return fd;
}

/* n frames from the kernel side: ARP requests for brisk's address (brisk answers each) or frames of an
 * unknown EtherType (brisk drops them without a word). */
static void kernel_send(int fd, const uint8_t mac[6], int n, int arp)
{
    for (int i = 0; i < n; i++) {
        uint8_t f[60];
        memset(f, 0, sizeof(f));
        memcpy(f, mac, 6);
        static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 1};
        memcpy(f + 6, src, 6);
        if (arp) {
            static const uint8_t req[] = {0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1};
            memcpy(f + 12, req, sizeof(req));
            memcpy(f + 22, src, 6);
            static const uint8_t spa[4] = {10, 1, 0, 1}, tpa[4] = {10, 1, 0, 2};
            memcpy(f + 28, spa, 4);
            memcpy(f + 38, tpa, 4);
        } else {
            f[12] = 0x88; /* IEEE 802 local experimental EtherType */
            f[13] = 0xb5;
        }
        assert_int_equal(send(fd, f, sizeof(f), 0), (ssize_t)sizeof(f)); /* queued on the TAP on return */
    }
}

/* Eager receive: after a wakeup that found one frame, the next frame goes to the stack alone, before the
 * driver reads on; two frames queued back to back switch gathering back on, for the rest of that wakeup and
 * the next; a frame read right after brisk answered (an ARP reply) does not count as queued behind. */
static void test_eager_receive(void **state)
{
    (void)state;
    NEED_NETNS();
    /* No IPv6 on the new interface: its router solicitations and reports would arrive at random times. */
    FILE *f = fopen("/proc/sys/net/ipv6/conf/default/disable_ipv6", "w");
    if (f) {
        fputs("1", f);
        fclose(f);
    }
    struct brisk_tap_config c;
    brisk_tap_config_default(&c);
    snprintf(c.ifname, sizeof(c.ifname), "bteager");
    c.ip = 0x0a010002u;
    struct env e;
    env_open(&e, &c);
    const uint8_t *mac = brisk_netdev_config_of(brisk_tap_netdev(e.t))->mac;
    int k = kernel_side("bteager");
    for (int i = 0; i < 3; i++) /* whatever the interface's start queued */
        assert_int_equal(brisk_loop_run_once(e.l, 20 * MS), BRISK_OK);
    struct brisk_tap_stats a, b;
    static const struct {
        int frames, arp;
        uint64_t batches;
    } step[] = {
        {1, 0, 1}, /* one frame: eager from here on */
        {3, 0, 2}, /* the first alone, then two back to back: gathered, and gathering stays on */
        {3, 0, 1}, /* gathered */
        {1, 0, 1}, /* one: eager again */
        {2, 1, 2}, /* each answered at once; the second, read after the answer, still alone */
        {2, 0, 2}, /* still eager (the ARP wakeup never found two queued): alone, then gathered */
    };
    for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
        brisk_tap_get_stats(e.t, &a);
        kernel_send(k, mac, step[i].frames, step[i].arp);
        assert_int_equal(brisk_loop_run_once(e.l, 0), BRISK_OK);
        brisk_tap_get_stats(e.t, &b);
        assert_int_equal(b.rx_frames - a.rx_frames, (uint64_t)step[i].frames);
        assert_int_equal(b.rx_batches - a.rx_batches, step[i].batches);
        if (step[i].arp)
            assert_int_equal(b.tx_frames - a.tx_frames, (uint64_t)step[i].frames); /* the ARP replies */
    }
    close(k);
    env_close(&e);

    /* A ring with one descriptor: after an answer took it, the driver stops reading until the hook has
     * completed it, rather than handing the stack a frame whose answer the device would refuse. */
    snprintf(c.ifname, sizeof(c.ifname), "bteager1");
    c.tx_ring = 1;
    env_open(&e, &c);
    mac = brisk_netdev_config_of(brisk_tap_netdev(e.t))->mac;
    k = kernel_side("bteager1");
    for (int i = 0; i < 3; i++)
        assert_int_equal(brisk_loop_run_once(e.l, 20 * MS), BRISK_OK);
    brisk_tap_get_stats(e.t, &a);
    kernel_send(k, mac, 1, 0); /* eager on */
    assert_int_equal(brisk_loop_run_once(e.l, 0), BRISK_OK);
    kernel_send(k, mac, 2, 1);
    assert_int_equal(brisk_loop_run_once(e.l, 0), BRISK_OK);
    brisk_tap_get_stats(e.t, &b);
    assert_int_equal(b.rx_frames - a.rx_frames, 2); /* the second request waits in the TAP's queue */
    assert_int_equal(brisk_loop_run_once(e.l, 0), BRISK_OK);
    brisk_tap_get_stats(e.t, &b);
    assert_int_equal(b.rx_frames - a.rx_frames, 3);
    assert_int_equal(b.tx_frames - a.tx_frames, 2); /* both answered */
    assert_int_equal(b.tx_busy, 0);
    close(k);
    env_close(&e);
}

int main(void)
{
    const struct CMUnitTest plain[] = {
        cmocka_unit_test(test_parse_cidr),
        cmocka_unit_test(test_config),
    };
    const struct CMUnitTest dev[] = {
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_ring_and_delayed_completion),
        cmocka_unit_test(test_eager_receive),
    };
    int rc = cmocka_run_group_tests(plain, NULL, NULL);
    return rc | cmocka_run_group_tests(dev, setup_netns, NULL);
}
