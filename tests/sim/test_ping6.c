/*
 * test_ping6.c — ping6 between two simulated hosts: IPv6 end to end through the simulator (net/ip6_*.c,
 * ndisc.c, icmp6.c over src/sim's NICs and link).
 *
 * Host a pings b's link-local address (from its MAC) and its static global address: the first echo waits
 * behind one multicast solicitation, b answers it (learning a from its source link-layer option, so its
 * replies need no multicast solicitation, only NUD's unicast probe 5 s later), and every echo comes back with the right source, sequence
 * and an RTT of one round trip of the link. Through a default router (b's link-local address) a ping to
 * an off-link address leaves for b's MAC, and b, a host, drops it (Ip6InAddrErrors). A ping to an address
 * nobody holds gives up after arp_retries solicitations. The same seed gives the same capture, byte for
 * byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "brisk/brisk.h"
#include "brisk/netdev.h"
#include "brisk/sim.h"

#define US   1000ull
#define MS   BRISK_NSEC_PER_MSEC
#define SEC  BRISK_NSEC_PER_SEC
#define GBIT 1000000000ull

struct pinger {
    int replies;
    struct brisk_addr from[16];
    uint16_t seq[16];
    uint64_t rtt[16];
};

static void on_reply(void *ctx, const struct brisk_echo_reply_addr *r, uint64_t now)
{
    struct pinger *p = ctx;
    if (p->replies < 16) {
        p->from[p->replies] = r->from;
        p->seq[p->replies] = r->seq;
        p->rtt[p->replies] = now - r->sent_at;
    }
    p->replies++;
}

struct rig {
    brisk_sim_world *w;
    brisk_sim_host *a, *b;
    brisk_sim_port *pa, *pb;
    struct pinger ping;
    struct brisk_addr b_ll, b_global, target;
    uint16_t seq;
};

static const struct brisk_addr a_global = {.family = BRISK_AF_INET6,
                                           .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
static const struct brisk_addr b_global = {.family = BRISK_AF_INET6,
                                           .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};

static void rig_open(struct rig *r, const char *pcap)
{
    memset(r, 0, sizeof(*r));
    r->w = brisk_sim_world_new(5);
    r->a = brisk_sim_host_add(r->w, "a", NULL);
    r->b = brisk_sim_host_add(r->w, "b", NULL);
    r->pa = brisk_sim_nic_add_ip(r->a, 0x0a000001, 24, 0);
    r->pb = brisk_sim_nic_add_ip(r->b, 0x0a000002, 24, 0);
    assert_non_null(r->pa);
    assert_non_null(r->pb);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    assert_non_null(brisk_sim_link_connect(r->w, r->pa, r->pb, &lc));
    if (pcap)
        assert_int_equal(brisk_sim_capture(r->pa, pcap), BRISK_OK);
    brisk_netdev *da = brisk_sim_port_netdev(r->pa), *db = brisk_sim_port_netdev(r->pb);
    assert_int_equal(brisk_netdev_add_addr(da, &a_global, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(db, &b_global, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_get_addr6(db, 0, &r->b_ll, NULL), BRISK_OK);
    r->b_global = b_global;
    brisk_icmp_set_echo_addr_handler(brisk_sim_host_stack(r->a), on_reply, &r->ping);
}

static void rig_close(struct rig *r)
{
    brisk_sim_world_free(r->w);
}

static void ping_at(void *ctx, uint64_t now)
{
    struct rig *r = ctx;
    assert_int_equal(brisk_icmp_echo_send_addr(brisk_sim_host_stack(r->a), &r->target, 1, r->seq++, 56, now),
                     BRISK_OK);
    brisk_sim_host_kick(r->a);
}

static struct brisk_counters counters(brisk_sim_host *h)
{
    struct brisk_counters c;
    brisk_stack_get_counters(brisk_sim_host_stack(h), &c);
    return c;
}

static void pings(struct rig *r, const struct brisk_addr *dst, int n)
{
    r->target = *dst;
    uint64_t t0 = brisk_sim_now(r->w);
    for (int i = 0; i < n; i++)
        assert_int_equal(brisk_sim_at(r->w, t0 + (uint64_t)(i + 1) * 100 * MS, ping_at, r), BRISK_OK);
    brisk_sim_run_until(r->w, t0 + (uint64_t)(n + 1) * 100 * MS + 5 * SEC);
}

static void test_ping6_link_local_and_global(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, NULL);
    pings(&r, &r.b_ll, 3);
    assert_int_equal(r.ping.replies, 3);
    for (int i = 0; i < 3; i++) {
        assert_true(brisk_addr_equal(&r.ping.from[i], &r.b_ll));
        assert_int_equal(r.ping.seq[i], i);
    }
    /* The first waited for one solicitation's round trip; the others took one round trip (2 x 50 us,
     * plus serialization at 1 Gbit/s). */
    assert_true(r.ping.rtt[0] > r.ping.rtt[1]);
    assert_true(r.ping.rtt[1] >= 100 * US && r.ping.rtt[1] < 110 * US);
    struct brisk_counters ca = counters(r.a), cb = counters(r.b);
    assert_int_equal(ca.Icmp6OutNeighborSolicits, 1);
    assert_int_equal(cb.Icmp6OutNeighborAdvertisements, 1);
    /* a's solicitation taught b its MAC (STALE): b's replies needed no multicast solicitation, only the
     * unicast probe of RFC 4861 §7.3.3, DELAY_FIRST_PROBE_TIME (5 s) after the first use, that a answers. */
    assert_int_equal(cb.Icmp6OutNeighborSolicits, 1);
    assert_int_equal(ca.Icmp6OutNeighborAdvertisements, 1);
    assert_int_equal(cb.Icmp6InEchos, 3);
    assert_int_equal(cb.Icmp6OutEchoReplies, 3);

    pings(&r, &r.b_global, 2);
    assert_int_equal(r.ping.replies, 5);
    assert_true(brisk_addr_equal(&r.ping.from[3], &b_global));
    ca = counters(r.a);
    assert_int_equal(ca.Icmp6OutNeighborSolicits, 2); /* the global address is another neighbour entry */
    assert_int_equal(ca.Icmp6InEchoReplies, 5);
    assert_int_equal(ca.IpOutRequests + ca.ArpOutRequests, 0); /* nothing IPv4 */
    rig_close(&r);
}

static void test_ping6_gateway_and_unreachable(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, NULL);
    struct brisk_addr far = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, 0, 7, [15] = 1}};
    assert_int_equal(brisk_icmp_echo_send_addr(brisk_sim_host_stack(r.a), &far, 1, 0, 8, 0), BRISK_ERR_NOROUTE);
    assert_int_equal(brisk_stack_set_gateway6(brisk_sim_host_stack(r.a), brisk_sim_port_netdev(r.pa), &r.b_ll),
                     BRISK_OK);
    pings(&r, &far, 2);
    assert_int_equal(r.ping.replies, 0);
    assert_int_equal(counters(r.b).Ip6InAddrErrors, 2); /* b got them at its MAC, and is no router */

    struct brisk_addr nobody = b_global;
    nobody.u.v6[15] = 0x99;
    pings(&r, &nobody, 2);
    assert_int_equal(r.ping.replies, 0);
    struct brisk_counters ca = counters(r.a);
    assert_int_equal(ca.Nd6ResolveFailed, 1);
    assert_int_equal(ca.Nd6UnresolvedDiscards, 2);
    rig_close(&r);
}

static long file_bytes(const char *path, uint8_t **out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)n);
    assert_int_equal(fread(*out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return n;
}

static void test_ping6_capture_deterministic(void **state)
{
    (void)state;
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "/tmp/brisk-ping6-%d-1.pcap", (int)getpid());
    snprintf(p2, sizeof p2, "/tmp/brisk-ping6-%d-2.pcap", (int)getpid());
    for (int k = 0; k < 2; k++) {
        struct rig r;
        rig_open(&r, k ? p2 : p1);
        pings(&r, &r.b_global, 3);
        assert_int_equal(r.ping.replies, 3);
        rig_close(&r);
    }
    uint8_t *a, *b;
    long na = file_bytes(p1, &a), nb = file_bytes(p2, &b);
    assert_int_equal(na, nb);
    assert_true(na > 24 + 8 * (16 + 86)); /* NS, NA, three echoes and replies */
    assert_memory_equal(a, b, (size_t)na);
    free(a);
    free(b);
    if (!getenv("BRISK_KEEP_PCAP"))
        unlink(p1);
    unlink(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping6_link_local_and_global),
        cmocka_unit_test(test_ping6_gateway_and_unreachable),
        cmocka_unit_test(test_ping6_capture_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
