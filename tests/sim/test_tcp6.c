/*
 * test_tcp6.c — TCP over IPv6 between two simulated hosts: the handshake, bulk data both ways, request /
 * response, loss recovery, software and NIC segmentation (GSO), SYN cookies, a RST for a closed port, and the
 * IPv4 connections of the same hosts beside them; and a path whose MTU is 1280 (a tunnel) that says so with
 * one ICMPv6 Packet Too Big.
 *
 * Each host has IPv4 10.0.0.x/24 and IPv6 2001:db8::x/64 on one NIC; the IPv6 neighbours are found by ND.
 * Figures checked are what IPv6 changes: the MSS (MTU - 60 - 12 of timestamps: 1428 on a 1500-byte link,
 * against IPv4's 1448), byte-exact delivery, retransmissions only under loss, and the same seed giving the
 * same capture byte for byte.
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
#include "wire/csum.h"
#include "wire/wire.h"

#define US   1000ull
#define MS   BRISK_NSEC_PER_MSEC
#define SEC  BRISK_NSEC_PER_SEC
#define GBIT 1000000000ull

static const struct brisk_addr a6 = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
static const struct brisk_addr b6 = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};

struct rig {
    brisk_sim_world *w;
    brisk_sim_host *a, *b;
    brisk_sim_port *pa, *pb;
};

static void rig_open(struct rig *r, uint64_t seed, uint32_t caps, double loss, const char *b_set,
                     const char *pcap)
{
    memset(r, 0, sizeof(*r));
    r->w = brisk_sim_world_new(seed);
    r->a = brisk_sim_host_add(r->w, "a", NULL);
    struct brisk_settings sb;
    brisk_settings_default(&sb);
    if (b_set)
        assert_int_equal(brisk_settings_set(&sb, b_set), BRISK_OK);
    r->b = brisk_sim_host_add(r->w, "b", &sb);
    r->pa = brisk_sim_nic_add_ip(r->a, 0x0a000001, 24, caps);
    r->pb = brisk_sim_nic_add_ip(r->b, 0x0a000002, 24, caps);
    assert_non_null(r->pa);
    assert_non_null(r->pb);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    lc.ab.impair.loss = loss;
    lc.ab.impair.loss_model = loss > 0 ? BRISK_SIM_LOSS_RANDOM : BRISK_SIM_LOSS_NONE;
    assert_non_null(brisk_sim_link_connect(r->w, r->pa, r->pb, &lc));
    if (pcap)
        assert_int_equal(brisk_sim_capture(r->pa, pcap), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pa), &a6, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pb), &b6, 64), BRISK_OK);
}

static struct brisk_counters counters(brisk_sim_host *h)
{
    struct brisk_counters c;
    brisk_stack_get_counters(brisk_sim_host_stack(h), &c);
    return c;
}

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

static struct brisk_sim_bulk_result bulk(struct rig *r, const struct brisk_addr *server, uint64_t bytes, int dir)
{
    struct brisk_sim_bulk_config c = {.bytes = bytes, .dir = dir, .port = 5001, .seed = 3, .server_addr = *server};
    brisk_sim_bulk *b = brisk_sim_bulk_start(r->w, r->a, r->b, 0, &c);
    assert_non_null(b);
    brisk_sim_run_while(r->w, bulk_done, b, brisk_sim_now(r->w) + 60 * SEC);
    struct brisk_sim_bulk_result res;
    brisk_sim_bulk_result(b, &res);
    brisk_sim_bulk_free(b);
    brisk_sim_run_until(r->w, brisk_sim_now(r->w) + 130 * SEC); /* TIME-WAIT and orphans gone */
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(r->a)), 0);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(r->b)), 0);
    return res;
}

/* 20 MB each way over IPv6, then over IPv4 on the same hosts: both byte-exact, no retransmission on a clean
 * link, IPv6's MSS 20 bytes below IPv4's. */
static void test_bulk_both_ways(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 1, 0, 0, NULL, NULL);
    struct brisk_sim_bulk_result res = bulk(&r, &b6, 20u << 20, BRISK_SIM_BULK_BOTH);
    assert_true(res.hash_ok);
    assert_int_equal(res.client.error, BRISK_OK);
    assert_int_equal(res.client.received, 20u << 20);
    assert_int_equal(res.server.received, 20u << 20);
    assert_int_equal(res.client.info.mss, 1500 - 40 - 20 - 12);
    assert_int_equal(res.client.info.advmss, 1500 - 60);
    assert_int_equal(res.client.info.retransmits, 0);
    struct brisk_counters ca = counters(r.a), cb = counters(r.b);
    assert_true(ca.Ip6OutRequests > 10000 && cb.Ip6OutRequests > 10000);
    assert_int_equal(ca.TcpInCsumErrors + cb.TcpInCsumErrors, 0);
    assert_int_equal(ca.TcpActiveOpens, 1);
    assert_int_equal(cb.TcpPassiveOpens, 1);

    struct brisk_addr b4 = brisk_addr_v4(0x0a000002);
    res = bulk(&r, &b4, 5u << 20, BRISK_SIM_BULK_UP);
    assert_true(res.hash_ok);
    assert_int_equal(res.client.info.mss, 1500 - 40 - 12);
    assert_int_equal(counters(r.b).TcpPassiveOpens, 2);
    brisk_sim_world_free(r.w);
}

/* With the NICs segmenting (GSO) and offloading checksums: the super-frames are IPv6 ones, cut by the NIC
 * model (net/gso.c), and arrive whole. */
static void test_bulk_gso(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 2, BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM, 0, NULL, NULL);
    struct brisk_sim_bulk_result res = bulk(&r, &b6, 20u << 20, BRISK_SIM_BULK_UP);
    assert_true(res.hash_ok);
    assert_int_equal(res.client.info.retransmits, 0);
    struct brisk_counters ca = counters(r.a);
    /* Far fewer IPv6 datagrams left the stack than wire segments: most were super-frames. */
    assert_true(ca.Ip6OutRequests * 4 < res.client.info.segs_out);
    assert_int_equal(counters(r.b).TcpInCsumErrors, 0);
    brisk_sim_world_free(r.w);
}

/* 1 % loss on the data direction: SACK recovery over IPv6 delivers every byte. */
static void test_bulk_loss(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 3, 0, 0.01, NULL, NULL);
    struct brisk_sim_bulk_result res = bulk(&r, &b6, 10u << 20, BRISK_SIM_BULK_UP);
    assert_true(res.hash_ok);
    assert_true(res.client.info.retransmits > 0);
    assert_int_equal(res.client.error, BRISK_OK);
    brisk_sim_world_free(r.w);
}

static int rr_done(void *ctx)
{
    return brisk_sim_rr_done(ctx);
}

/* Request / response over IPv6: 8 flows x 200 transactions, every one answered. */
static void test_rr(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 4, 0, 0, NULL, NULL);
    struct brisk_sim_rr_config c = {.flows = 8, .transactions = 200, .nodelay = 1, .server_addr = b6};
    brisk_sim_rr *rr = brisk_sim_rr_start(r.w, r.a, r.b, 0, &c);
    assert_non_null(rr);
    brisk_sim_run_while(r.w, rr_done, rr, 30 * SEC);
    struct brisk_sim_rr_result res;
    brisk_sim_rr_result(rr, &res);
    assert_int_equal(res.transactions, 8 * 200);
    assert_int_equal(res.errors, 0);
    brisk_sim_rr_free(rr);
    brisk_sim_world_free(r.w);
}

/* SYN cookies for every SYN (tcp_syncookies=2) on the IPv6 listener: the cookie's MAC covers the 128-bit
 * addresses, the ACK rebuilds the connection, and the data flows. */
static void test_syncookies(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 5, 0, 0, "tcp_syncookies=2", NULL);
    struct brisk_sim_bulk_result res = bulk(&r, &b6, 1u << 20, BRISK_SIM_BULK_BOTH);
    assert_true(res.hash_ok);
    struct brisk_counters cb = counters(r.b);
    assert_int_equal(cb.SyncookiesSent, 1);
    assert_int_equal(cb.SyncookiesRecv, 1);
    assert_int_equal(cb.SyncookiesFailed, 0);
    brisk_sim_world_free(r.w);
}

static void on_event(void *ctx, brisk_sock *s, unsigned events, uint64_t now)
{
    (void)s;
    (void)now;
    *(unsigned *)ctx |= events;
}

/* A connect to an IPv6 port nobody listens on is refused by the peer's RST; a connect to an IPv6 address
 * from a socket bound to IPv4 is refused at once. */
static void test_refused(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 6, 0, 0, NULL, NULL);
    brisk_stack *st = brisk_sim_host_stack(r.a);
    int err;
    brisk_sock *s = brisk_socket(st, &err);
    unsigned ev = 0;
    brisk_sock_set_callback(s, on_event, &ev);
    assert_int_equal(brisk_connect_addr(s, &b6, 9, brisk_sim_now(r.w)), BRISK_ERR_INPROGRESS);
    brisk_sim_host_kick(r.a);
    brisk_sim_run_until(r.w, brisk_sim_now(r.w) + 100 * MS);
    assert_true(ev & BRISK_EV_ERROR);
    assert_int_equal(brisk_sock_error(s), BRISK_ERR_CONNREFUSED);
    assert_int_equal(counters(r.b).TcpNoPort, 1);
    struct brisk_tuple t;
    assert_int_equal(brisk_sock_tuple(s, &t), BRISK_OK);
    assert_true(brisk_addr_equal(&t.laddr, &a6)); /* the source the route chose */
    assert_true(brisk_addr_equal(&t.raddr, &b6));
    brisk_close(s, brisk_sim_now(r.w));

    brisk_sock *s4 = brisk_socket(st, &err);
    assert_int_equal(brisk_bind(s4, 0x0a000001, 0), BRISK_OK);
    assert_int_equal(brisk_connect_addr(s4, &b6, 9, brisk_sim_now(r.w)), BRISK_ERR_INVAL);
    brisk_close(s4, brisk_sim_now(r.w));
    brisk_sim_world_free(r.w);
}

/* Receive coalescing over IPv6 (net/gro.c): NICs that poll in batches (64 frames, 20 us moderation), the same
 * hosts' IPv6 and then IPv4 bulk transfer. IPv6 frames join as IPv4's do — the receiver's device merges most
 * of them, every frame is still counted (Ip6InReceives), and the receiver sends about as few ACKs per byte
 * as over IPv4 — and the bytes arrive exact. With gro=0 nothing merges: the check can fail. */
static void gro_rig(struct rig *r, uint64_t seed, int gro)
{
    memset(r, 0, sizeof(*r));
    r->w = brisk_sim_world_new(seed);
    struct brisk_settings set;
    brisk_settings_default(&set);
    set.gro = (uint32_t)gro;
    r->a = brisk_sim_host_add(r->w, "a", &set);
    r->b = brisk_sim_host_add(r->w, "b", &set);
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.rx_batch = 64;
    nc.rx_coalesce_ns = 20 * US;
    nc.dev.prefix_len = 24;
    nc.dev.ip = 0x0a000001;
    nc.dev.mac[5] = 1;
    r->pa = brisk_sim_nic_add(r->a, &nc);
    nc.dev.ip = 0x0a000002;
    nc.dev.mac[5] = 2;
    r->pb = brisk_sim_nic_add(r->b, &nc);
    assert_non_null(r->pa);
    assert_non_null(r->pb);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    assert_non_null(brisk_sim_link_connect(r->w, r->pa, r->pb, &lc));
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pa), &a6, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pb), &b6, 64), BRISK_OK);
}

struct gro_fig {
    uint64_t merged, acks, frames;
};

static struct gro_fig gro_bulk(struct rig *r, const struct brisk_addr *server)
{
    struct brisk_netdev_stats d0, d1;
    brisk_netdev_get_stats(brisk_sim_port_netdev(r->pb), &d0);
    struct brisk_counters c0 = counters(r->b);
    struct brisk_sim_bulk_result res = bulk(r, server, 20u << 20, BRISK_SIM_BULK_UP);
    assert_true(res.hash_ok);
    assert_int_equal(res.server.received, 20u << 20);
    brisk_netdev_get_stats(brisk_sim_port_netdev(r->pb), &d1);
    struct brisk_counters c1 = counters(r->b);
    struct gro_fig f = {.merged = d1.rx_gro_merged - d0.rx_gro_merged,
                        .acks = c1.TcpOutSegs - c0.TcpOutSegs,
                        .frames = server->family == BRISK_AF_INET6 ? c1.Ip6InReceives - c0.Ip6InReceives
                                                                    : c1.IpInReceives - c0.IpInReceives};
    return f;
}

static void test_gro(void **state)
{
    (void)state;
    struct rig r;
    gro_rig(&r, 8, 1);
    struct gro_fig v6 = gro_bulk(&r, &b6);
    struct brisk_addr b4 = brisk_addr_v4(0x0a000002);
    struct gro_fig v4 = gro_bulk(&r, &b4);
    print_message("gro: IPv6 %llu frames, %llu merged, %llu ACKs; IPv4 %llu frames, %llu merged, %llu ACKs\n",
                  (unsigned long long)v6.frames, (unsigned long long)v6.merged, (unsigned long long)v6.acks,
                  (unsigned long long)v4.frames, (unsigned long long)v4.merged, (unsigned long long)v4.acks);
    uint64_t segs6 = (20u << 20) / 1428;
    assert_true(v6.frames >= segs6);              /* every frame counted, merged or not */
    assert_true(v6.merged * 2 > v6.frames);       /* most frames joined an earlier one */
    assert_true(v6.acks * 4 < segs6);             /* far fewer than one ACK per two segments */
    assert_true(v6.acks * 10 < v4.acks * 13);     /* and about as few as IPv4's (1448-byte segments) */
    brisk_sim_world_free(r.w);

    gro_rig(&r, 8, 0);
    v6 = gro_bulk(&r, &b6);
    assert_int_equal(v6.merged, 0);
    assert_true(v6.acks * 3 > segs6); /* ACKs per two segments (and quick ACKs) without coalescing */
    brisk_sim_world_free(r.w);
}

/* Upper-layer reachability confirmation (RFC 4861 §7.3.1): a 12 s transfer from a to b over a 10 Mbit/s link
 * with arp_reachable=1s on both. The sender's new data is acknowledged all along, which confirms b to a's
 * Neighbour Discovery: its entry never goes through DELAY to a probe, so a sends one solicitation in all
 * (the first resolution). The receiver makes no forward progress of its own (its ACKs acknowledge nothing
 * new to it), so its entry for a is probed as NUD says — as Linux's would be. */
static void test_nud_confirm(void **state)
{
    (void)state;
    struct brisk_sim_world *w = brisk_sim_world_new(9);
    struct brisk_settings set;
    brisk_settings_default(&set);
    assert_int_equal(brisk_settings_set(&set, "arp_reachable=1s"), BRISK_OK);
    struct rig r = {.w = w};
    r.a = brisk_sim_host_add(w, "a", &set);
    r.b = brisk_sim_host_add(w, "b", &set);
    r.pa = brisk_sim_nic_add_ip(r.a, 0x0a000001, 24, 0);
    r.pb = brisk_sim_nic_add_ip(r.b, 0x0a000002, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10000000ull, 1 * MS);
    assert_non_null(brisk_sim_link_connect(w, r.pa, r.pb, &lc));
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r.pa), &a6, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r.pb), &b6, 64), BRISK_OK);
    uint64_t t0 = brisk_sim_now(w);
    struct brisk_sim_bulk_config c = {.bytes = 15u << 20, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = 3,
                                      .server_addr = b6};
    brisk_sim_bulk *b = brisk_sim_bulk_start(w, r.a, r.b, 0, &c);
    assert_non_null(b);
    brisk_sim_run_while(w, bulk_done, b, t0 + 60 * SEC);
    struct brisk_sim_bulk_result res;
    brisk_sim_bulk_result(b, &res);
    brisk_sim_bulk_free(b);
    assert_true(res.hash_ok);
    assert_true(brisk_sim_now(w) - t0 > 10 * SEC); /* long enough for NUD's 1 s + 5 s DELAY, twice */
    struct brisk_counters ca = counters(r.a), cb = counters(r.b);
    print_message("nud: a sent %llu solicitations, b %llu, over %.1f s\n",
                  (unsigned long long)ca.Icmp6OutNeighborSolicits, (unsigned long long)cb.Icmp6OutNeighborSolicits,
                  (double)(brisk_sim_now(w) - t0) / 1e9);
    assert_int_equal(ca.Icmp6OutNeighborSolicits, 1); /* the first resolution only */
    assert_true(cb.Icmp6OutNeighborSolicits >= 1);   /* the receiver's probes */
    assert_int_equal(ca.Nd6ResolveFailed + cb.Nd6ResolveFailed, 0);
    brisk_sim_world_free(w);
}

/* BRISK_SO_V6ONLY (IPV6_V6ONLY): on b, a listener on [::]:80 IPv6-only beside one on 0.0.0.0:80 (which
 * without the option is EADDRINUSE: :: covers IPv4); each family's connection reaches its own listener.
 * An IPv6-only socket neither binds to IPv4 nor connects to it, and the option is fixed once bound. */
static brisk_sock *connect_to(struct rig *r, const struct brisk_addr *to, unsigned *ev)
{
    int err;
    brisk_sock *c = brisk_socket(brisk_sim_host_stack(r->a), &err);
    brisk_sock_set_callback(c, on_event, ev);
    assert_int_equal(brisk_connect_addr(c, to, 80, brisk_sim_now(r->w)), BRISK_ERR_INPROGRESS);
    brisk_sim_host_kick(r->a);
    return c;
}

static void test_v6only(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, 7, 0, 0, NULL, NULL);
    brisk_stack *st = brisk_sim_host_stack(r.b);
    uint64_t now = brisk_sim_now(r.w);
    const struct brisk_addr any6 = {.family = BRISK_AF_INET6};
    int err;
    brisk_sock *plain = brisk_socket(st, &err);
    assert_int_equal(brisk_bind_addr(plain, &any6, 80), BRISK_OK);
    assert_int_equal(brisk_listen(plain, 8), BRISK_OK);
    brisk_sock *l4 = brisk_socket(st, &err);
    assert_int_equal(brisk_bind(l4, 0, 80), BRISK_ERR_ADDRINUSE); /* :: without the option covers it */
    brisk_close(plain, now);

    brisk_sock *l6 = brisk_socket(st, &err);
    uint64_t v = 9;
    assert_int_equal(brisk_setsockopt(l6, BRISK_SO_V6ONLY, 2, now), BRISK_ERR_RANGE);
    assert_int_equal(brisk_setsockopt(l6, BRISK_SO_V6ONLY, 1, now), BRISK_OK);
    assert_int_equal(brisk_getsockopt(l6, BRISK_SO_V6ONLY, &v), BRISK_OK);
    assert_int_equal(v, 1);
    assert_int_equal(brisk_bind(l6, 0x0a000002, 80), BRISK_ERR_AFNOSUPPORT);
    assert_int_equal(brisk_bind(l6, 0, 80), BRISK_ERR_AFNOSUPPORT); /* not even 0.0.0.0 */
    assert_int_equal(brisk_bind_addr(l6, &any6, 80), BRISK_OK);
    assert_int_equal(brisk_setsockopt(l6, BRISK_SO_V6ONLY, 0, now), BRISK_ERR_INVAL); /* bound: fixed */
    assert_int_equal(brisk_listen(l6, 8), BRISK_OK);
    assert_int_equal(brisk_bind(l4, 0, 80), BRISK_OK); /* shares the port with the IPv6-only :: */
    brisk_sock *other = brisk_socket(st, &err);
    assert_int_equal(brisk_bind_addr(other, &any6, 80), BRISK_ERR_ADDRINUSE); /* [::]:80 listens: taken */
    brisk_close(other, now);
    assert_int_equal(brisk_listen(l4, 8), BRISK_OK);

    unsigned e6 = 0, e4 = 0;
    brisk_sock *c6 = connect_to(&r, &b6, &e6);
    brisk_sock *c4 = connect_to(&r, &(struct brisk_addr){.family = BRISK_AF_INET, .u.v4 = 0x0a000002}, &e4);
    brisk_sim_run_until(r.w, brisk_sim_now(r.w) + 100 * MS);
    assert_true(e6 & BRISK_EV_CONNECTED);
    assert_true(e4 & BRISK_EV_CONNECTED);
    brisk_sock *a6c = brisk_accept(l6, &err), *a4c = brisk_accept(l4, &err);
    assert_non_null(a6c);
    assert_non_null(a4c);
    assert_null(brisk_accept(l6, &err)); /* one each: the IPv4 connection did not reach [::]:80 */
    assert_null(brisk_accept(l4, &err));
    struct brisk_tuple t;
    assert_int_equal(brisk_sock_tuple(a6c, &t), BRISK_OK);
    assert_int_equal(t.raddr.family, BRISK_AF_INET6);
    assert_int_equal(brisk_sock_tuple(a4c, &t), BRISK_OK);
    assert_int_equal(t.raddr.family, BRISK_AF_INET);

    /* an IPv6-only client reaches IPv6 only */
    brisk_sock *c = brisk_socket(brisk_sim_host_stack(r.a), &err);
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_V6ONLY, 1, now), BRISK_OK);
    assert_int_equal(brisk_connect(c, 0x0a000002, 80, brisk_sim_now(r.w)), BRISK_ERR_AFNOSUPPORT);
    brisk_close(c, now);

    /* with only the IPv6-only listener, an IPv4 SYN to port 80 finds no socket: RST, refused */
    brisk_close(l4, brisk_sim_now(r.w));
    unsigned e = 0;
    uint64_t noport = counters(r.b).TcpNoPort;
    brisk_sock *c2 = connect_to(&r, &(struct brisk_addr){.family = BRISK_AF_INET, .u.v4 = 0x0a000002}, &e);
    brisk_sim_run_until(r.w, brisk_sim_now(r.w) + 100 * MS);
    assert_int_equal(brisk_sock_error(c2), BRISK_ERR_CONNREFUSED);
    assert_int_equal(counters(r.b).TcpNoPort, noport + 1);
    uint64_t end = brisk_sim_now(r.w);
    brisk_sock *open[] = {c2, c6, c4, a6c, a4c, l6};
    for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++)
        brisk_abort(open[i], end);
    brisk_sim_run_until(r.w, end + 10 * MS);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(r.a)), 0);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(r.b)), 0);
    brisk_sim_world_free(r.w);
}

/* A path of MTU 1280 from a to b (a tunnel): every larger frame is dropped, and the first one draws one
 * ICMPv6 Packet Too Big (RFC 8201, from b's address as a router's would be from its own) quoting it. */
struct tunnel {
    brisk_sim_world *w;
    brisk_sim_host *a;
    brisk_sim_port *pa;
    uint8_t ptb[14 + 40 + 8 + 1232];
    size_t ptb_len;
    int dropped, sent;
};

static void inject_ptb(void *ctx, uint64_t now)
{
    struct tunnel *t = ctx;
    assert_int_equal(brisk_stack_input(brisk_sim_host_stack(t->a), brisk_sim_port_netdev(t->pa), t->ptb,
                                       t->ptb_len, now),
                     BRISK_OK);
    brisk_sim_host_kick(t->a);
}

static int tunnel_drop(void *ctx, const uint8_t *f, size_t len)
{
    struct tunnel *t = ctx;
    if (len <= 14 + 1280 || brisk_get16(f + 12) != 0x86dd)
        return 0;
    t->dropped++;
    if (t->sent++)
        return 1;
    size_t q = len - 14 > 1232 ? 1232 : len - 14; /* as much as fits in 1280 bytes (RFC 4443 §3.2) */
    uint8_t *p = t->ptb;
    memcpy(p, f + 6, 6); /* to a's MAC, from b's */
    memcpy(p + 6, f, 6);
    brisk_put16(p + 12, 0x86dd);
    uint8_t *ip = p + 14, *ic = ip + 40;
    memset(ip, 0, 40);
    ip[0] = 0x60;
    brisk_put16(ip + 4, (uint16_t)(8 + q));
    ip[6] = 58; /* ICMPv6 */
    ip[7] = 64;
    memcpy(ip + 8, f + 14 + 24, 16); /* from the packet's destination (b), to its source (a) */
    memcpy(ip + 24, f + 14 + 8, 16);
    memset(ic, 0, 8);
    ic[0] = 2; /* packet too big */
    brisk_put32(ic + 4, 1280);
    memcpy(ic + 8, f + 14, q);
    uint32_t sum = brisk_csum_add(brisk_csum_pseudo6(ip + 8, ip + 24, 58, (uint32_t)(8 + q)), ic, 8 + q);
    brisk_put16(ic + 2, brisk_csum_fold(sum));
    t->ptb_len = 14 + 40 + 8 + q;
    assert_int_equal(brisk_sim_at(t->w, brisk_sim_now(t->w) + 20 * US, inject_ptb, t), BRISK_OK);
    return 1;
}

static void test_packet_too_big(void **state)
{
    (void)state;
    struct tunnel t;
    memset(&t, 0, sizeof(t));
    struct rig r;
    memset(&r, 0, sizeof(r));
    r.w = t.w = brisk_sim_world_new(8);
    r.a = t.a = brisk_sim_host_add(r.w, "a", NULL);
    r.b = brisk_sim_host_add(r.w, "b", NULL);
    r.pa = t.pa = brisk_sim_nic_add_ip(r.a, 0x0a000001, 24, 0);
    r.pb = brisk_sim_nic_add_ip(r.b, 0x0a000002, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    lc.ab.impair.drop_fn = tunnel_drop;
    lc.ab.impair.drop_ctx = &t;
    assert_non_null(brisk_sim_link_connect(r.w, r.pa, r.pb, &lc));
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r.pa), &a6, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r.pb), &b6, 64), BRISK_OK);
    struct brisk_sim_bulk_result res = bulk(&r, &b6, 4u << 20, BRISK_SIM_BULK_UP);
    assert_true(res.hash_ok);
    assert_int_equal(t.sent > 0, 1);
    assert_int_equal(counters(r.a).PmtuLowered, 1);
    assert_int_equal(counters(r.a).Icmp6InPktTooBigs, 1);
    assert_int_equal(res.client.info.mss, 1280 - 60 - 12); /* the path's, timestamps off it */
    assert_int_equal(res.client.info.rto_count, 0);      /* resent at once, not after a timeout */
    /* Only the flight in the air when the PTB came was too large. */
    assert_true(t.dropped < 64);
    brisk_sim_world_free(r.w);
}

/* The same seed gives the same IPv6 capture, byte for byte. */
static void test_same_seed_same_pcap(void **state)
{
    (void)state;
    char p1[] = "/tmp/brisk-tcp6-XXXXXX", p2[] = "/tmp/brisk-tcp6-XXXXXX";
    int f1 = mkstemp(p1), f2 = mkstemp(p2);
    assert_true(f1 >= 0 && f2 >= 0);
    close(f1);
    close(f2);
    const char *paths[2] = {p1, p2};
    for (int i = 0; i < 2; i++) {
        struct rig r;
        rig_open(&r, 7, 0, 0.01, NULL, paths[i]);
        struct brisk_sim_bulk_result res = bulk(&r, &b6, 1u << 20, BRISK_SIM_BULK_UP);
        assert_true(res.hash_ok);
        brisk_sim_world_free(r.w);
    }
    FILE *a = fopen(p1, "rb"), *b = fopen(p2, "rb");
    assert_non_null(a);
    assert_non_null(b);
    long n = 0;
    int ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        assert_int_equal(ca, cb);
        n++;
    } while (ca != EOF);
    assert_true(n > 1000000);
    fclose(a);
    fclose(b);
    unlink(p1);
    unlink(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bulk_both_ways), cmocka_unit_test(test_bulk_gso),
        cmocka_unit_test(test_bulk_loss),      cmocka_unit_test(test_rr),
        cmocka_unit_test(test_syncookies),     cmocka_unit_test(test_refused),
        cmocka_unit_test(test_packet_too_big),  cmocka_unit_test(test_same_seed_same_pcap),
        cmocka_unit_test(test_v6only),          cmocka_unit_test(test_gro),
        cmocka_unit_test(test_nud_confirm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
