/*
 * test_synflood.c — a simulated SYN flood (RFC 4987) against a host that is busy with a bulk transfer.
 *
 * Host b (10.0.0.2) has two NICs: one to host a (10.0.0.1) over a 1 Gbit/s link carrying a 40 MB bulk
 * transfer a -> b (port 5001), one (10.0.1.2) to a raw port — the attacker — that is b's default gateway
 * 10.0.1.254 and sends spoofed SYNs at the line rate of its 1 Gbit/s link to b's listener on port 80, from
 * random source addresses and ports, while the transfer runs; and one (10.0.2.2) to host c (10.0.2.1), which
 * in the middle of the flood opens a new connection to port 80 and sends 10 KB on it.
 *
 * Asserted: the bulk transfer completes byte-exact; the new connection is established through a SYN cookie
 * (the flood keeps the SYN queue full) and its 10 KB arrive intact; the flood is answered with cookie
 * SYN-ACKs; b's memory stays under its bound all along — live sockets never more than the SYN queue plus the
 * few real ones, packet buffers under a fixed bound — and nothing leaks once everything is over.
 *
 * The second case floods from spoofed addresses on the transfer's own subnet, so that every answer needs ARP
 * (see test_local_subnet_flood_goodput): the transfer's goodput during and after the flood, against the same
 * transfer without one, and the neighbour layer's bounds.
 *
 * The count: 1,000,000 SYNs in the normal build (a few seconds of wall time); the sanitizer build, ten times
 * slower, sends 100,000 and says so. BRISK_SYNFLOOD_SYNS=<n> overrides either (the full million under ASan is
 * the documented long run).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brisk/sim.h"
#include "core/rand.h"
#include "stack/stack.h"
#include "support/testutil.h"
#include "wire/arp.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC
#define SEC  BRISK_NSEC_PER_SEC

#define A_IP  0x0a000001u /* 10.0.0.1 */
#define B_IP  0x0a000002u /* 10.0.0.2 */
#define B2_IP 0x0a000102u /* 10.0.1.2 */
#define GW_IP 0x0a0001feu /* 10.0.1.254: the attacker's port */
#define C_IP  0x0a000201u /* 10.0.2.1: the new legitimate client */
#define B3_IP 0x0a000202u /* 10.0.2.2 */

#define SYN_QUEUE  256 /* tcp_max_syn_backlog */
#define BATCH      32  /* SYNs per attacker event */
#define FRAME_LEN  54  /* Ethernet + IPv4 + bare TCP */
#define BULK_BYTES (40ull * 1000 * 1000)

#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SYNS 100000ull
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEFAULT_SYNS 100000ull
#endif
#endif
#ifndef DEFAULT_SYNS
#define DEFAULT_SYNS 1000000ull
#endif

struct flood {
    brisk_sim_world *w;
    brisk_sim_port *raw;
    brisk_stack *b;
    uint8_t b_mac[6];
    struct brisk_rand rng;
    uint64_t total, sent; /* SYNs to send, sent */
    uint64_t synacks;     /* SYN-ACKs b sent to spoofed sources */
    uint64_t interval;    /* ns between batches: line rate */
    uint64_t max_sockets, max_pkts;
    /* the legitimate connection */
    brisk_stack *c;
    brisk_sim_host *hc;
    brisk_sock *client, *server;
    uint64_t legit_at;
    int connected;
    uint64_t connected_at;
    uint64_t got, bad;
    uint32_t dst;               /* the address flooded */
    uint32_t src_net, src_mask; /* nonzero: spoof sources on this local subnet instead of 100.64/10 */
};

static const uint8_t gw_mac[6] = {0x02, 0xaa, 0, 0, 0, 0xfe};

static void attacker_rx(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, uint64_t now)
{
    (void)now;
    struct flood *f = ctx;
    struct brisk_eth_repr e;
    if (brisk_eth_parse(frame, len, &e) < 0)
        return;
    if (e.type == BRISK_ETH_P_ARP) {
        struct brisk_arp_repr a;
        if (brisk_arp_parse(frame + BRISK_ETH_HLEN, len - BRISK_ETH_HLEN, &a) < 0 ||
            a.op != BRISK_ARP_OP_REQUEST || a.tpa != GW_IP)
            return;
        uint8_t out[60] = {0};
        struct brisk_eth_repr re = {.type = BRISK_ETH_P_ARP};
        memcpy(re.dst, a.sha, 6);
        memcpy(re.src, gw_mac, 6);
        brisk_eth_emit(out, &re);
        struct brisk_arp_repr ra = {.op = BRISK_ARP_OP_REPLY, .spa = GW_IP, .tpa = a.spa};
        memcpy(ra.sha, gw_mac, 6);
        memcpy(ra.tha, a.sha, 6);
        brisk_arp_emit(out + BRISK_ETH_HLEN, &ra);
        brisk_sim_raw_send(p, out, sizeof(out));
        return;
    }
    struct brisk_ipv4_repr ip;
    struct brisk_tcp_repr t;
    if (e.type != BRISK_ETH_P_IPV4 ||
        brisk_ipv4_parse(frame + BRISK_ETH_HLEN, len - BRISK_ETH_HLEN, &ip) < 0 ||
        ip.proto != BRISK_IP_PROTO_TCP)
        return;
    const uint8_t *l4 = frame + BRISK_ETH_HLEN + ip.hdr_len;
    if (brisk_tcp_parse(l4, (size_t)ip.total_len - ip.hdr_len, ip.src, ip.dst, 1, &t) >= 0 &&
        t.flags == (BRISK_TCP_SYN | BRISK_TCP_ACK))
        f->synacks++;
}

/* A spoofed source: anywhere in 100.64.0.0/10 (shared address space), reached through the gateway — or, when
 * the flood says so, anywhere in one of b's own subnets, so that every answer needs ARP. */
static void spoofed_syn(struct flood *f, uint8_t *frame)
{
    uint64_t r = brisk_rand_u64(&f->rng);
    uint32_t src = 0x64400000u | (uint32_t)(r & 0x003fffffu);
    if (f->src_mask) {
        /* A host address of the subnet that is neither a, nor b, nor the subnet or broadcast address. */
        uint32_t host_bits = ~f->src_mask;
        uint32_t h = 3 + (uint32_t)((r & 0xffffffffu) % (host_bits - 3));
        src = f->src_net | h;
    }
    struct brisk_tcp_repr t = {.sport = (uint16_t)(1024 + ((r >> 22) % 64000)),
                               .dport = 80,
                               .seq = (uint32_t)(r >> 32),
                               .flags = BRISK_TCP_SYN,
                               .window = 65535};
    uint8_t seg[BRISK_TCP_HLEN];
    brisk_tcp_emit(seg, &t);
    brisk_tcp_csum_fill(seg, sizeof(seg), src, f->dst);
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV4};
    memcpy(e.dst, f->b_mac, 6);
    memcpy(e.src, gw_mac, 6);
    brisk_eth_emit(frame, &e);
    struct brisk_ipv4_repr ip = {
        .total_len = 40, .id = (uint16_t)r, .ttl = 60, .proto = 6, .src = src, .dst = f->dst};
    brisk_ipv4_emit(frame + BRISK_ETH_HLEN, &ip);
    memcpy(frame + BRISK_ETH_HLEN + BRISK_IPV4_HLEN, seg, sizeof(seg));
}

static void watch_memory(struct flood *f)
{
    uint64_t s = brisk_stack_sockets(f->b), p = brisk_stack_pkts_in_use(f->b);
    if (s > f->max_sockets)
        f->max_sockets = s;
    if (p > f->max_pkts)
        f->max_pkts = p;
}

static void flood_batch(void *ctx, uint64_t now)
{
    struct flood *f = ctx;
    uint8_t frame[FRAME_LEN];
    for (int i = 0; i < BATCH && f->sent < f->total; i++, f->sent++) {
        spoofed_syn(f, frame);
        assert_int_equal(brisk_sim_raw_send(f->raw, frame, sizeof(frame)), BRISK_OK);
    }
    watch_memory(f);
    if (f->sent < f->total)
        brisk_sim_at(f->w, now + f->interval, flood_batch, f);
}

/* The legitimate connection: a connects to b:80 and sends 10 KB; b accepts and reads. */
#define LEGIT_BYTES 10000

static void server_cb(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct flood *f = ctx;
    if (!(ev & BRISK_EV_READABLE))
        return;
    uint8_t buf[4096];
    int64_t n;
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        for (int64_t i = 0; i < n; i++)
            if (buf[i] != (uint8_t)((f->got + (uint64_t)i) * 7))
                f->bad++;
        f->got += (uint64_t)n;
    }
}

static void listener_cb(void *ctx, brisk_sock *l, unsigned ev, uint64_t now)
{
    struct flood *f = ctx;
    if (!(ev & BRISK_EV_ACCEPT))
        return;
    int err;
    brisk_sock *c;
    while ((c = brisk_accept(l, &err)) != NULL) {
        assert_null(f->server); /* only the legitimate peer can complete a handshake */
        f->server = c;
        brisk_sock_set_callback(c, server_cb, f);
        server_cb(f, c, BRISK_EV_READABLE, now);
    }
}

static void client_cb(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct flood *f = ctx;
    if (ev & BRISK_EV_CONNECTED) {
        f->connected = 1;
        f->connected_at = now;
        uint8_t buf[LEGIT_BYTES];
        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = (uint8_t)(i * 7);
        assert_int_equal(brisk_send(s, buf, sizeof(buf), 0, now), LEGIT_BYTES);
    }
}

static void legit_connect(void *ctx, uint64_t now)
{
    struct flood *f = ctx;
    int err;
    f->client = brisk_socket(f->c, &err);
    assert_non_null(f->client);
    brisk_sock_set_callback(f->client, client_cb, f);
    assert_int_equal(brisk_connect(f->client, B3_IP, 80, now), BRISK_ERR_INPROGRESS);
    f->legit_at = now;
    brisk_sim_host_kick(f->hc);
}

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

/* The world both cases flood: a <-> b carrying the transfer (their NICs on prefix `ab_prefix`), the attacker's
 * link into b's second NIC at f->dst (the simulator's links are point to point; b's answers go where the
 * sources are), and the legitimate client c on a third link of its own, so that its SYN does not wait behind
 * the bulk data in a's ring; b listens on port 80. Sets f's world, stacks, b_mac and the attacker's batch
 * interval (line rate of its link); returns b's listener, and a's and b's hosts. */
static brisk_sock *flood_world(struct flood *f, uint64_t seed, unsigned ab_prefix, brisk_sim_host **ha,
                              brisk_sim_host **hb)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_set(&s, "tcp_max_syn_backlog=256"), BRISK_OK);
    assert_int_equal(brisk_settings_set(&s, "tcp_syncookies=1"), BRISK_OK);
    f->w = brisk_sim_world_new(seed);
    *ha = brisk_sim_host_add(f->w, "a", &s);
    *hb = brisk_sim_host_add(f->w, "b", &s);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(*ha, A_IP, ab_prefix, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(*hb, B_IP, ab_prefix, 0);
    brisk_sim_port *pb2 = brisk_sim_nic_add_ip(*hb, f->dst, 24, 0);
    f->raw = brisk_sim_raw_port_add(f->w, "attacker", attacker_rx, f);
    assert_non_null(f->raw);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    assert_non_null(brisk_sim_link_connect(f->w, pa, pb, &lc));
    assert_non_null(brisk_sim_link_connect(f->w, f->raw, pb2, &lc));
    f->hc = brisk_sim_host_add(f->w, "c", &s);
    brisk_sim_port *pc = brisk_sim_nic_add_ip(f->hc, C_IP, 24, 0);
    brisk_sim_port *pb3 = brisk_sim_nic_add_ip(*hb, B3_IP, 24, 0);
    assert_non_null(brisk_sim_link_connect(f->w, pc, pb3, &lc));
    f->c = brisk_sim_host_stack(f->hc);
    f->b = brisk_sim_host_stack(*hb);
    const struct brisk_netdev_config *cfg = brisk_netdev_config_of(brisk_sim_port_netdev(pb2));
    assert_non_null(cfg);
    memcpy(f->b_mac, cfg->mac, sizeof(f->b_mac));
    f->interval = (uint64_t)BATCH * FRAME_LEN * 8 * SEC / GBIT;

    int err;
    brisk_sock *l = brisk_socket(f->b, &err);
    assert_non_null(l);
    assert_int_equal(brisk_bind(l, 0, 80), BRISK_OK);
    assert_int_equal(brisk_listen(l, 64), BRISK_OK);
    brisk_sock_set_callback(l, listener_cb, f);
    return l;
}

static void test_syn_flood_during_bulk(void **state)
{
    (void)state;
    static struct flood f;
    memset(&f, 0, sizeof(f));
    f.total = DEFAULT_SYNS;
    f.dst = B2_IP;
    const char *env = getenv("BRISK_SYNFLOOD_SYNS");
    if (env && *env)
        f.total = strtoull(env, NULL, 0);
    uint64_t seed = brisk_test_seed(42);
    brisk_rand_seed(&f.rng, seed);

    brisk_sim_host *ha, *hb;
    brisk_sock *l = flood_world(&f, seed, 24, &ha, &hb);
    assert_int_equal(brisk_stack_set_gateway(f.b, GW_IP), BRISK_OK); /* the spoofed sources are remote */

    struct brisk_sim_bulk_config bc = {
        .bytes = BULK_BYTES, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = seed};
    brisk_sim_bulk *bulk = brisk_sim_bulk_start(f.w, ha, hb, B_IP, &bc);
    assert_non_null(bulk);
    uint64_t flood_start = 5 * MS;
    uint64_t flood_len = f.total / BATCH * f.interval;
    assert_int_equal(brisk_sim_at(f.w, flood_start, flood_batch, &f), BRISK_OK);
    /* The legitimate connection a third of the way into the flood, when the SYN queue is long full. */
    assert_int_equal(brisk_sim_at(f.w, flood_start + flood_len / 3 + 1 * MS, legit_connect, &f), BRISK_OK);

    assert_true(brisk_sim_run_while(f.w, bulk_done, bulk, 600 * SEC));
    /* Let the flood and the legitimate exchange finish too. */
    brisk_sim_run_until(f.w, flood_start + flood_len + 100 * MS);
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(bulk, &r);
    struct brisk_counters cb;
    brisk_stack_get_counters(f.b, &cb);
    printf("# SYN flood: %" PRIu64 " spoofed SYNs at 1 Gbit/s line rate over %.1f ms (virtual), seed %" PRIu64
           "%s\n",
           f.sent, (double)flood_len / 1e6, seed,
           f.total < 1000000
               ? " — fewer than the full 1,000,000: BRISK_SYNFLOOD_SYNS=1000000 for the long run"
               : "");
    printf("#   b: SyncookiesSent %" PRIu64 "  SyncookiesRecv %" PRIu64 "  SyncookiesFailed %" PRIu64
           "  ListenOverflows %" PRIu64 "  TcpPassiveOpens %" PRIu64 "\n",
           cb.SyncookiesSent, cb.SyncookiesRecv, cb.SyncookiesFailed, cb.ListenOverflows, cb.TcpPassiveOpens);
    printf("#   SYN-ACKs on the attacker's wire %" PRIu64 "; b's peak: %" PRIu64 " sockets, %" PRIu64
           " packet buffers\n",
           f.synacks, f.max_sockets, f.max_pkts);
    printf("#   bulk %s, %.1f MB in %.1f ms; legitimate connection %s via a cookie, %" PRIu64 " bytes %s\n",
           r.hash_ok ? "byte-exact" : "BROKEN", (double)BULK_BYTES / 1e6,
           (double)(r.last_byte_at - r.connected_at) / 1e6, f.connected ? "established" : "NOT established",
           f.got, f.bad ? "CORRUPT" : "intact");

    assert_int_equal(f.sent, f.total);
    /* The transfer: complete, byte-exact, and it overlapped the flood. */
    assert_true(r.hash_ok);
    assert_true(r.last_byte_at > flood_start);
    /* The flood was answered statelessly: the SYN queue took SYN_QUEUE, the rest got cookies (minus the
     * SYN-ACKs b's NIC ring refused when the answers outran the link: counted drops, not state). */
    assert_int_equal(cb.TcpPassiveOpens, SYN_QUEUE + 1 + 1); /* queue, the bulk connection, the legit one */
    assert_true(cb.SyncookiesSent >= f.total - SYN_QUEUE);
    assert_true(f.synacks > 0 && f.synacks <= cb.SyncookiesSent + SYN_QUEUE * 6);
    /* The legitimate connection went through a cookie, and its data arrived intact. */
    assert_true(f.connected);
    assert_true(f.connected_at < flood_start + flood_len); /* while the flood went on */
    assert_int_equal(cb.SyncookiesRecv, 1);
    assert_non_null(f.server);
    assert_int_equal(f.got, LEGIT_BYTES);
    assert_int_equal(f.bad, 0);
    /* Memory under bound all along: the SYN queue, two listeners, the bulk and legit connections (and the
     * bulk's listener); packet buffers bounded by the rings and windows, not by the flood. */
    assert_true(f.max_sockets <= SYN_QUEUE + 6);
    assert_true(f.max_pkts <= 4096);

    brisk_sim_bulk_free(bulk);
    brisk_abort(f.client, brisk_sim_now(f.w));
    brisk_abort(f.server, brisk_sim_now(f.w));
    brisk_close(l, brisk_sim_now(f.w));
    brisk_sim_run_until(f.w, brisk_sim_now(f.w) + 200 * SEC);
    assert_int_equal(brisk_stack_sockets(f.b), 0);
    assert_int_equal(brisk_stack_sockets(brisk_sim_host_stack(ha)), 0);
    assert_int_equal(brisk_stack_sockets(f.c), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(f.b), 0);
    brisk_sim_world_free(f.w);
}

/*
 * A flood from the transfer's own subnet. The spoofed sources are on the link between a and b (10.0.0.0/16),
 * so b cannot answer a single SYN without resolving the source first: every SYN-ACK and cookie asks the
 * neighbour layer for an address that will never answer. The question is what that costs the transfer that
 * runs beside it. Measured in virtual time: the bytes b's bulk receiver read while the flood lasted and in a
 * window after it, against the same windows of the same transfer (same seed) without a flood. Asserted: both
 * within 20 % of the flood-free figures, the bulk's neighbour never evicted, and the unresolved entries,
 * their queued packets and the ARP requests they send bounded by the settings, not by the flood.
 */
#define LOCAL_NET    0x0a000000u /* 10.0.0.0 */
#define LOCAL_PREFIX 16
#define LOCAL_MASK   0xffff0000u
#define LOCAL_SYNS   200000ull
#define LOCAL_START  (20 * MS)
#define LOCAL_AFTER                                                                                          \
    (3 * SEC) /* the window after the flood: resolving entries and SYN-ACK retries outlive it */
#define LOCAL_BYTES (420ull * 1000 * 1000)

struct goodput {
    brisk_sim_bulk *bulk;
    uint64_t at_start, at_end, at_after; /* bytes received at the flood's start, end, end + LOCAL_AFTER */
    uint64_t max_unres, max_pkts;
    struct brisk_counters c;
    uint64_t counted_at; /* virtual time of c */
    int legit_in_time;   /* the legitimate client connected while the flood went on */
    uint64_t legit_got;  /* and the bytes of it b read intact */
    uint64_t flood_len;
};

/* Neighbour entries still resolving (the test reads the table directly: a white-box bound). */
static uint64_t unresolved(const brisk_stack *st)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < st->net.neigh.size; i++)
        n += st->net.neigh.e[i].state == BRISK_NEIGH_INCOMPLETE;
    return n;
}

static void sample_start(void *ctx, uint64_t now)
{
    (void)now;
    struct goodput *g = ctx;
    g->at_start = brisk_sim_bulk_received(g->bulk);
}

static void sample_end(void *ctx, uint64_t now)
{
    (void)now;
    struct goodput *g = ctx;
    g->at_end = brisk_sim_bulk_received(g->bulk);
}

static void sample_after(void *ctx, uint64_t now)
{
    (void)now;
    struct goodput *g = ctx;
    g->at_after = brisk_sim_bulk_received(g->bulk);
}

static void run_local(int flood, uint64_t syns, struct goodput *g)
{
    static struct flood f;
    memset(&f, 0, sizeof(f));
    memset(g, 0, sizeof(*g));
    f.total = flood ? syns : 0;
    f.dst = 0x0a010002u; /* 10.1.0.2 */
    f.src_net = LOCAL_NET;
    f.src_mask = LOCAL_MASK;
    uint64_t seed = brisk_test_seed(42);
    brisk_rand_seed(&f.rng, seed);

    brisk_sim_host *ha, *hb;
    brisk_sock *l = flood_world(&f, seed, LOCAL_PREFIX, &ha, &hb);

    struct brisk_sim_bulk_config bc = {
        .bytes = LOCAL_BYTES, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = seed};
    g->bulk = brisk_sim_bulk_start(f.w, ha, hb, B_IP, &bc);
    assert_non_null(g->bulk);
    g->flood_len = syns / BATCH * f.interval;
    if (flood)
        assert_int_equal(brisk_sim_at(f.w, LOCAL_START, flood_batch, &f), BRISK_OK);
    assert_int_equal(brisk_sim_at(f.w, LOCAL_START + g->flood_len / 2, legit_connect, &f), BRISK_OK);
    assert_int_equal(brisk_sim_at(f.w, LOCAL_START, sample_start, g), BRISK_OK);
    assert_int_equal(brisk_sim_at(f.w, LOCAL_START + g->flood_len, sample_end, g), BRISK_OK);
    assert_int_equal(brisk_sim_at(f.w, LOCAL_START + g->flood_len + LOCAL_AFTER, sample_after, g), BRISK_OK);
    /* Step the clock so that the neighbour table can be watched while the flood runs. */
    uint64_t end = LOCAL_START + g->flood_len + LOCAL_AFTER + 1;
    for (uint64_t t = 0; t < end; t += 1 * MS) {
        brisk_sim_run_until(f.w, t);
        uint64_t unres = unresolved(f.b);
        if (unres > g->max_unres)
            g->max_unres = unres;
        watch_memory(&f);
    }
    g->max_pkts = f.max_pkts;
    assert_true(brisk_sim_run_while(f.w, bulk_done, g->bulk, 600 * SEC));
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(g->bulk, &r);
    assert_true(r.hash_ok);
    brisk_stack_get_counters(f.b, &g->c);
    g->counted_at = brisk_sim_now(f.w);
    g->legit_in_time = f.connected && f.connected_at < LOCAL_START + g->flood_len;
    g->legit_got = f.bad ? 0 : f.got;

    brisk_sim_bulk_free(g->bulk);
    g->bulk = NULL;
    brisk_abort(f.client, brisk_sim_now(f.w));
    brisk_abort(f.server, brisk_sim_now(f.w));
    brisk_close(l, brisk_sim_now(f.w));
    brisk_sim_run_until(f.w, brisk_sim_now(f.w) + 200 * SEC);
    assert_int_equal(brisk_stack_sockets(f.b), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(f.b), 0);
    brisk_sim_world_free(f.w);
}

static double mbit(uint64_t bytes, uint64_t ns)
{
    return (double)bytes * 8 * 1e3 / (double)ns;
}

static void test_local_subnet_flood_goodput(void **state)
{
    (void)state;
    uint64_t syns = LOCAL_SYNS;
    const char *env = getenv("BRISK_SYNFLOOD_LOCAL_SYNS");
    if (env && *env)
        syns = strtoull(env, NULL, 0);
    struct goodput base, fl;
    run_local(0, syns, &base);
    run_local(1, syns, &fl);
    double b_during = mbit(base.at_end - base.at_start, base.flood_len);
    double b_after = mbit(base.at_after - base.at_end, LOCAL_AFTER);
    double f_during = mbit(fl.at_end - fl.at_start, fl.flood_len);
    double f_after = mbit(fl.at_after - fl.at_end, LOCAL_AFTER);
    printf("# local-subnet SYN flood: %" PRIu64
           " SYNs from random 10.0.0.0/16 sources over %.1f ms (virtual)\n",
           syns, (double)fl.flood_len / 1e6);
    printf("#   bulk goodput during the flood %.0f Mbit/s (%.0f without), the %.1f s after %.0f Mbit/s (%.0f "
           "without)\n",
           f_during, b_during, (double)LOCAL_AFTER / 1e9, f_after, b_after);
    printf("#   b: ArpOutRequests %" PRIu64 "  ArpCacheEvictions %" PRIu64 "  NeighTableOverflow %" PRIu64
           "  NeighUnresolvedLimit %" PRIu64 "  NeighUnresolvedDiscards %" PRIu64 "  SyncookiesSent %" PRIu64
           "; peak %" PRIu64 " unresolved neighbours, %" PRIu64 " packet buffers (%" PRIu64 " without)\n",
           fl.c.ArpOutRequests, fl.c.ArpCacheEvictions, fl.c.NeighTableOverflow, fl.c.NeighUnresolvedLimit,
           fl.c.NeighUnresolvedDiscards, fl.c.SyncookiesSent, fl.max_unres, fl.max_pkts, base.max_pkts);
    printf("#   legitimate client from 10.0.2.1 %s during the flood, %" PRIu64 " bytes intact\n",
           fl.legit_in_time ? "connected" : "did NOT connect", fl.legit_got);
    assert_true(f_during >= 0.8 * b_during);
    assert_true(f_after >= 0.8 * b_after);
    /* The bulk's neighbour was never evicted, and the flood's cost in the neighbour layer was bounded by the
     * settings (arp_unres_max 64, arp_retries 3, unres_qlen 16), not by its 200,000 SYNs. */
    assert_int_equal(fl.c.ArpCacheEvictions, 0);
    assert_int_equal(fl.c.NeighTableOverflow, 0);
    assert_true(fl.max_unres <= 64);
    /* arp_unres_max x (the time the counters cover / arp_retrans + arp_retries), and the two real peers. */
    assert_true(fl.c.ArpOutRequests <= 64 * (fl.counted_at / SEC + 1 + 3) + 2);
    assert_true(fl.max_pkts <= base.max_pkts + SYN_QUEUE + 64 * 16);
    assert_true(fl.c.NeighUnresolvedLimit > 0);
    /* The legitimate client got in while the flood went on, through a cookie (the SYN queue was full). */
    assert_true(base.legit_in_time && fl.legit_in_time);
    assert_int_equal(base.legit_got, LEGIT_BYTES);
    assert_int_equal(fl.legit_got, LEGIT_BYTES);
    assert_int_equal(base.c.SyncookiesRecv, 0);
    assert_int_equal(fl.c.SyncookiesRecv, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syn_flood_during_bulk),
        cmocka_unit_test(test_local_subnet_flood_goodput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
