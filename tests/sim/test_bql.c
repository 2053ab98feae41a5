/*
 * test_bql.c — byte queue limits through the simulator (src/net/bql.c): what the ring limit buys (the
 * queueing delay other traffic sees behind bulk flows) and what it costs (nothing, on a NIC whose completions
 * are wire-accurate), how it adapts to coalesced completions, and why a NIC with late completions must not
 * opt in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "brisk/netdev.h"
#include "brisk/sim.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC

#define MAX_FLOWS 8
#define MAX_PINGS 4096

struct run {
    /* inputs */
    uint64_t rate;
    const char *txc;
    uint32_t caps; /* sender NIC capabilities (BRISK_NETDEV_CAP_BQL or not) */
    int flows;
    uint64_t bytes; /* per flow */
    /* pinger */
    brisk_stack *sa;
    brisk_sim_world *w;
    uint16_t seq;
    uint64_t rtt[MAX_PINGS];
    unsigned nrtt;
    brisk_sim_bulk *bulk[MAX_FLOWS];
    /* outputs */
    double goodput_bps; /* all flows together, first connect to last byte */
    int hash_ok;
    struct brisk_netdev_stats dev;
    uint64_t device_holds; /* hold events with reason DEVICE, all flows */
    uint64_t rtt_p50, rtt_max;
};

static int all_done(void *ctx)
{
    struct run *r = ctx;
    for (int i = 0; i < r->flows; i++)
        if (!brisk_sim_bulk_done(r->bulk[i]))
            return 0;
    return 1;
}

static void on_reply(void *ctx, const struct brisk_echo_reply *rep, uint64_t now)
{
    struct run *r = ctx;
    if (r->nrtt < MAX_PINGS)
        r->rtt[r->nrtt++] = now - rep->sent_at;
}

/* Every millisecond, a 56-byte echo request from the bulk sender: it queues behind whatever the ring holds.
 */
static void ping_tick(void *ctx, uint64_t now)
{
    struct run *r = ctx;
    if (all_done(r))
        return;
    brisk_icmp_echo_send(r->sa, 0x0a000002u, 7, r->seq++, 56, now);
    brisk_sim_at(r->w, now + 1 * MS, ping_tick, r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void run(struct run *r)
{
    brisk_sim_world *w = brisk_sim_world_new(11);
    r->w = w;
    brisk_sim_host *a = brisk_sim_host_add(w, "a", NULL);
    brisk_sim_host *b = brisk_sim_host_add(w, "b", NULL);
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.dev.ip = 0x0a000001u;
    nc.dev.caps = r->caps;
    nc.tx_ring = 4096;
    assert_int_equal(brisk_sim_txc_parse(r->txc, &nc.txc), BRISK_OK);
    brisk_sim_port *pa = brisk_sim_nic_add(a, &nc);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, r->rate, 50 * US);
    assert_non_null(brisk_sim_link_connect(w, pa, pb, &lc));
    r->sa = brisk_sim_host_stack(a);
    brisk_icmp_set_echo_handler(r->sa, on_reply, r);
    for (int i = 0; i < r->flows; i++) {
        struct brisk_sim_bulk_config bc = {.bytes = r->bytes,
                                           .dir = BRISK_SIM_BULK_UP,
                                           .port = (uint16_t)(5001 + i),
                                           .seed = (uint64_t)i + 1};
        r->bulk[i] = brisk_sim_bulk_start(w, a, b, 0x0a000002u, &bc);
        assert_non_null(r->bulk[i]);
    }
    brisk_sim_at(w, 20 * MS, ping_tick, r); /* after slow start, while every flow is running */
    assert_true(brisk_sim_run_while(w, all_done, r, 60 * BRISK_NSEC_PER_SEC));

    uint64_t first = UINT64_MAX, last = 0;
    r->hash_ok = 1;
    r->device_holds = 0;
    for (int i = 0; i < r->flows; i++) {
        struct brisk_sim_bulk_result br;
        brisk_sim_bulk_result(r->bulk[i], &br);
        r->hash_ok &= br.hash_ok;
        if (br.connected_at < first)
            first = br.connected_at;
        if (br.last_byte_at > last)
            last = br.last_byte_at;
        r->device_holds += br.client.info.hold_events[BRISK_HOLD_DEVICE];
        brisk_sim_bulk_free(r->bulk[i]);
    }
    r->goodput_bps = (double)r->bytes * r->flows * 8e9 / (double)(last - first);
    brisk_netdev_get_stats(brisk_sim_port_netdev(pa), &r->dev);
    assert_true(r->nrtt > 10);
    qsort(r->rtt, r->nrtt, sizeof(r->rtt[0]), cmp_u64);
    r->rtt_p50 = r->rtt[r->nrtt / 2];
    r->rtt_max = r->rtt[r->nrtt - 1];
    brisk_sim_world_free(w);
}

static void show(const char *what, const struct run *r)
{
    printf("# %-34s %7.1f Mbit/s  ping p50 %8.1f us max %8.1f us  limit %7" PRIu64 " B  stops %6" PRIu64
           "  grows %4" PRIu64 "  shrinks %3" PRIu64 "  device holds %6" PRIu64 "\n",
           what, r->goodput_bps / 1e6, (double)r->rtt_p50 / 1e3, (double)r->rtt_max / 1e3, r->dev.bql_limit,
           r->dev.bql_stops, r->dev.bql_grows, r->dev.bql_shrinks, r->device_holds);
}

/* Four bulk flows share a 1 Gbit/s NIC with per-packet completions and nothing drops. Without BQL each flow
 * may keep its TSQ budget below TCP, and with no loss the windows — hence the pacing rates the budgets scale
 * with — keep growing, and the ring fills with milliseconds of bulk data that a ping waits behind.
 * With BQL the ring holds what the completion cadence needs — a couple of frames — and the flows wait in TCP
 * instead ("device" holds), at the same goodput. */
static void test_bql_cuts_ring_delay_at_line_rate(void **state)
{
    (void)state;
    struct run off = {.rate = 1 * GBIT, .txc = "immediate", .caps = 0, .flows = 4, .bytes = 20u << 20};
    struct run on = off;
    on.caps = BRISK_NETDEV_CAP_BQL;
    run(&off);
    run(&on);
    show("4 flows, 1G, no BQL", &off);
    show("4 flows, 1G, BQL", &on);
    assert_true(off.hash_ok && on.hash_ok);
    assert_true(on.goodput_bps >= 0.97 * off.goodput_bps);
    assert_true(on.goodput_bps >= 0.93 * 1e9);
    assert_true(on.rtt_p50 * 5 < off.rtt_p50);
    assert_true(on.dev.bql_stops > 0 && on.device_holds > 0);
    assert_true(on.dev.bql_limit < 64 * 1024); /* a few frames, not the flows' TSQ budgets */
    assert_int_equal(off.dev.bql_stops, 0);
}

/* mvneta-style coalescing (seed 003): completions come 16 frames at a time or after 10 ms. A limit below the
 * batch starves the ring until the timer; each starved event grows the limit past what the batch needs, so
 * the flow runs at line rate after a short learning period. */
static void test_bql_grows_past_coalescing(void **state)
{
    (void)state;
    struct run on = {.rate = 1 * GBIT,
                     .txc = "coalesce:16:10ms",
                     .caps = BRISK_NETDEV_CAP_BQL,
                     .flows = 1,
                     .bytes = 200u << 20};
    run(&on);
    show("1 flow, 1G, coalesce 16/10ms, BQL", &on);
    assert_true(on.hash_ok);
    assert_true(on.goodput_bps >= 0.90 * 1e9);
    assert_true(on.dev.bql_grows > 0);
    assert_true(on.dev.bql_limit >= 16 * 1514); /* at least one completion batch */
}

/* Why BQL is a driver opt-in: on a NIC whose completions arrive 190 us after the wire is done (seed 001's
 * Xen netfront), every completion looks like a slow wire with work still queued, the limit shrinks towards a
 * few frames, and the flow runs at a fraction of line rate — the failure the capability bit prevents. */
static void test_bql_on_late_completions_collapses(void **state)
{
    (void)state;
    struct run off = {.rate = 10 * GBIT, .txc = "delay:190us", .caps = 0, .flows = 1, .bytes = 100u << 20};
    struct run on = off;
    on.caps = BRISK_NETDEV_CAP_BQL;
    run(&off);
    run(&on);
    show("1 flow, 10G, 190us completions", &off);
    show("1 flow, 10G, 190us completions, BQL", &on);
    assert_true(off.hash_ok && on.hash_ok);
    assert_true(off.goodput_bps >= 0.9 * 10e9);
    assert_true(on.goodput_bps < 0.5 * off.goodput_bps);
}

/* The setting overrides the driver: bql=0 leaves a BQL-capable NIC unlimited. */
static void test_bql_setting_off(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_set(&s, "bql=0"), BRISK_OK);
    brisk_sim_world *w = brisk_sim_world_new(1);
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &s);
    brisk_sim_port *p = brisk_sim_nic_add_ip(a, 0x0a000001u, 24, BRISK_NETDEV_CAP_BQL);
    struct brisk_netdev_stats st;
    brisk_netdev_get_stats(brisk_sim_port_netdev(p), &st);
    assert_int_equal(st.bql_limit, 0);
    assert_false(brisk_netdev_stopped(brisk_sim_port_netdev(p)));
    brisk_sim_world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bql_cuts_ring_delay_at_line_rate),
        cmocka_unit_test(test_bql_grows_past_coalescing),
        cmocka_unit_test(test_bql_on_late_completions_collapses),
        cmocka_unit_test(test_bql_setting_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
