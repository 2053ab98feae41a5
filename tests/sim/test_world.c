/*
 * test_world.c — the virtual clock, the event queue, and the driving of hosts (brisk stacks) by the world.
 *
 * The first half uses brisk_sim_at callbacks only: events run in (time, scheduling order), the clock stops
 * where run_until / run_while say. The second half runs real stacks: a host's timers fire exactly at
 * brisk_stack_next_deadline(), application kicks are honoured, and two hosts pinging over a link see an RTT
 * of exactly 2 * (serialization + propagation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "sim/internal.h"
#include "support/testutil.h"

static uint64_t g_seed;

/* ---------------------------------------------------------------------------------------------------------
 * Event queue
 * ------------------------------------------------------------------------------------------------------- */

struct order_log {
    brisk_sim_world *w;
    size_t n;
    uint64_t t[8192];
    uint32_t tag[8192];
};

struct tagged {
    struct order_log *log;
    uint32_t tag;
    uint64_t want_t;
};

static void on_tagged(void *ctx, uint64_t now)
{
    struct tagged *tg = ctx;
    struct order_log *log = tg->log;
    assert_int_equal(now, tg->want_t);
    assert_int_equal(brisk_sim_now(log->w), now);
    log->t[log->n] = now;
    log->tag[log->n] = tg->tag;
    log->n++;
}

/* Tiny xorshift for choosing times in the test itself. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_events_run_in_time_then_schedule_order(void **state)
{
    (void)state;
    enum { N = 5000 };
    static struct order_log log;
    static struct tagged tg[N];
    memset(&log, 0, sizeof(log));
    log.w = brisk_sim_world_new(1);
    uint64_t s = g_seed | 1;
    for (uint32_t i = 0; i < N; i++) {
        tg[i].log = &log;
        tg[i].tag = i;
        tg[i].want_t = next_rand(&s) % 300; /* many ties */
        assert_int_equal(brisk_sim_at(log.w, tg[i].want_t, on_tagged, &tg[i]), BRISK_OK);
    }
    assert_int_equal(brisk_sim_run_until(log.w, BRISK_TIME_NONE), N);
    assert_int_equal(log.n, N);
    for (size_t i = 1; i < N; i++) {
        int ok = log.t[i] > log.t[i - 1] || (log.t[i] == log.t[i - 1] && log.tag[i] > log.tag[i - 1]);
        if (!ok)
            fail_msg("event %zu out of order (seed %llu)", i, (unsigned long long)g_seed);
    }
    struct brisk_sim_stats st;
    brisk_sim_world_stats(log.w, &st);
    assert_int_equal(st.events, N);
    assert_int_equal(st.frames_delivered, 0);
    brisk_sim_world_free(log.w);
}

struct chain {
    brisk_sim_world *w;
    int order[8];
    int n;
};

static void chain_late(void *ctx, uint64_t now)
{
    (void)now;
    struct chain *c = ctx;
    c->order[c->n++] = 3;
}

static void chain_first(void *ctx, uint64_t now)
{
    struct chain *c = ctx;
    c->order[c->n++] = 1;
    /* Scheduled "now" from inside an event: runs after everything already queued for this instant. */
    assert_int_equal(brisk_sim_at(c->w, now, chain_late, c), BRISK_OK);
    assert_int_equal(brisk_sim_at(c->w, now - 1, chain_late, c), BRISK_ERR_INVAL);
    /* The world is running: a nested run does nothing. */
    assert_int_equal(brisk_sim_run_until(c->w, now + 100), 0);
}

static void chain_second(void *ctx, uint64_t now)
{
    (void)now;
    struct chain *c = ctx;
    c->order[c->n++] = 2;
}

static void test_same_instant_scheduling(void **state)
{
    (void)state;
    struct chain c = {.w = brisk_sim_world_new(1)};
    assert_int_equal(brisk_sim_at(c.w, 10, chain_first, &c), BRISK_OK);
    assert_int_equal(brisk_sim_at(c.w, 10, chain_second, &c), BRISK_OK);
    brisk_sim_run_until(c.w, BRISK_TIME_NONE);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.order[0], 1);
    assert_int_equal(c.order[1], 2);
    assert_int_equal(c.order[2], 3);
    brisk_sim_world_free(c.w);
}

/* White box: an event re-scheduled for the current instant many times over (each time it leaves a hole in
 * the now-queue) still runs once, after everything scheduled for that instant before its last re-schedule
 * (here a call queued before the instant began). */
struct resched {
    brisk_sim_world *w;
    brisk_sim_host *h;
    int order[4], n;
};

static void resched_first(void *ctx, uint64_t now)
{
    struct resched *r = ctx;
    r->order[r->n++] = 1;
    for (int i = 0; i < 100000; i++) /* far more than the ring's slots */
        brisk_sim_sched(r->w, &r->h->wake, now);
}

static void resched_last(void *ctx, uint64_t now)
{
    (void)now;
    struct resched *r = ctx;
    r->order[r->n++] = 3;
    assert_true(r->h->wake.heap_idx & SIM_EV_NOWQ); /* still waiting: this call was queued before it */
}

static void test_reschedule_at_the_same_instant(void **state)
{
    (void)state;
    struct resched r = {.w = brisk_sim_world_new(1)};
    r.h = brisk_sim_host_add(r.w, "h", NULL);
    brisk_sim_run_until(r.w, 5);
    assert_int_equal(brisk_sim_at(r.w, 10, resched_first, &r), BRISK_OK);
    assert_int_equal(brisk_sim_at(r.w, 10, resched_last, &r), BRISK_OK);
    struct brisk_sim_stats s0, s1;
    brisk_sim_world_stats(r.w, &s0);
    brisk_sim_run_until(r.w, 10);
    brisk_sim_world_stats(r.w, &s1);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.order[0], 1);
    assert_int_equal(r.order[1], 3);
    assert_int_equal(s1.events - s0.events, 3); /* the two calls and the wake, once */
    brisk_sim_world_free(r.w);
}

static void count_cb(void *ctx, uint64_t now)
{
    (void)now;
    (*(int *)ctx)++;
}

static int reached(void *ctx)
{
    return *(int *)ctx >= 3;
}

static void test_run_until_and_run_while(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    int count = 0;
    assert_int_equal(brisk_sim_now(w), 0);
    for (uint64_t t = 100; t <= 1000; t += 100)
        assert_int_equal(brisk_sim_at(w, t, count_cb, &count), BRISK_OK);
    assert_int_equal(brisk_sim_at(w, 5, NULL, &count), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_at(NULL, 5, count_cb, &count), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_at(w, BRISK_TIME_NONE, count_cb, &count), BRISK_ERR_INVAL);

    /* Events at exactly `until` run; the clock then rests at `until`. */
    assert_int_equal(brisk_sim_run_until(w, 250), 2);
    assert_int_equal(brisk_sim_now(w), 250);
    assert_int_equal(brisk_sim_run_until(w, 300), 1);
    assert_int_equal(brisk_sim_now(w), 300);
    assert_int_equal(brisk_sim_run_until(w, 299), 0); /* the past: nothing, clock unchanged */
    assert_int_equal(brisk_sim_now(w), 300);
    assert_int_equal(brisk_sim_at(w, 299, count_cb, &count), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_at(w, 300, count_cb, &count), BRISK_OK); /* now itself is fine */
    assert_int_equal(brisk_sim_run_until(w, 300), 1);
    assert_int_equal(count, 4);

    /* run_while: stops as soon as done() holds, at that event's time. */
    count = 0;
    assert_int_equal(brisk_sim_run_while(w, reached, &count, BRISK_TIME_NONE), 1);
    assert_int_equal(count, 3);
    assert_int_equal(brisk_sim_now(w), 600);
    /* Already done: runs nothing. */
    assert_int_equal(brisk_sim_run_while(w, reached, &count, BRISK_TIME_NONE), 1);
    assert_int_equal(brisk_sim_now(w), 600);
    /* The limit comes first: returns 0 with the clock at the limit. */
    count = -10;
    assert_int_equal(brisk_sim_run_while(w, reached, &count, 850), 0);
    assert_int_equal(count, -8);
    assert_int_equal(brisk_sim_now(w), 850);
    /* The queue runs dry. */
    assert_int_equal(brisk_sim_run_while(w, reached, &count, 5000), 0);
    assert_int_equal(count, -6);
    assert_int_equal(brisk_sim_now(w), 5000);
    /* Running to completion leaves the clock at the last event. */
    assert_int_equal(brisk_sim_at(w, 7000, count_cb, &count), BRISK_OK);
    assert_int_equal(brisk_sim_run_until(w, BRISK_TIME_NONE), 1);
    assert_int_equal(brisk_sim_now(w), 7000);
    struct brisk_sim_stats st;
    brisk_sim_world_stats(w, &st);
    assert_int_equal(st.events, 12);
    brisk_sim_world_free(w);
}

static void test_free_with_pending_events(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    int count = 0;
    for (int i = 0; i < 100; i++)
        assert_int_equal(brisk_sim_at(w, (uint64_t)i * 10, count_cb, &count), BRISK_OK);
    brisk_sim_run_until(w, 495);
    assert_int_equal(count, 50);
    brisk_sim_world_free(w); /* the other 50 are freed unrun (ASan would see a leak) */
    brisk_sim_world_free(NULL);
}

/* ---------------------------------------------------------------------------------------------------------
 * Hosts
 * ------------------------------------------------------------------------------------------------------- */

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static brisk_sim_port *add_nic(brisk_sim_host *h, uint32_t ip, uint8_t mac_last)
{
    struct brisk_sim_nic_config c;
    brisk_sim_nic_config_default(&c);
    c.dev.ip = ip;
    c.dev.prefix_len = 24;
    const uint8_t mac[6] = {0x02, 0, 0, 0, 0, mac_last};
    memcpy(c.dev.mac, mac, 6);
    brisk_sim_port *p = brisk_sim_nic_add(h, &c);
    assert_non_null(p);
    return p;
}

struct peer_log {
    size_t n;
    uint64_t t[16];
    uint32_t len[16];
    uint16_t ethertype[16];
};

static void peer_rx(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, uint64_t now)
{
    (void)p;
    struct peer_log *pl = ctx;
    assert_true(pl->n < 16);
    pl->t[pl->n] = now;
    pl->len[pl->n] = (uint32_t)len;
    pl->ethertype[pl->n] = (uint16_t)(frame[12] << 8 | frame[13]);
    pl->n++;
}

static void test_host_identity_and_seeds(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(g_seed);
    brisk_sim_host *h0 = brisk_sim_host_add(w, "alpha", NULL);
    brisk_sim_host *h1 = brisk_sim_host_add(w, NULL, NULL);
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.seed = 4242;
    brisk_sim_host *h2 = brisk_sim_host_add(w, "gamma", &s);
    assert_non_null(h0);
    assert_non_null(h1);
    assert_non_null(h2);
    assert_string_equal(brisk_sim_host_name(h0), "alpha");
    assert_string_equal(brisk_sim_host_name(h1), "host1");
    uint64_t s0 = brisk_stack_settings(brisk_sim_host_stack(h0))->seed;
    uint64_t s1 = brisk_stack_settings(brisk_sim_host_stack(h1))->seed;
    assert_int_not_equal(s0, 0);
    assert_int_not_equal(s1, 0);
    assert_int_not_equal(s0, s1);
    assert_int_equal(brisk_stack_settings(brisk_sim_host_stack(h2))->seed, 4242);
    /* Derived seeds depend on the world seed and the host index only. */
    brisk_sim_world *w2 = brisk_sim_world_new(g_seed);
    brisk_sim_host *g0 = brisk_sim_host_add(w2, "other-name", NULL);
    assert_int_equal(brisk_stack_settings(brisk_sim_host_stack(g0))->seed, s0);
    brisk_sim_world_free(w2);
    brisk_sim_world *w3 = brisk_sim_world_new(g_seed + 1);
    brisk_sim_host *k0 = brisk_sim_host_add(w3, "alpha", NULL);
    assert_int_not_equal(brisk_stack_settings(brisk_sim_host_stack(k0))->seed, s0);
    brisk_sim_world_free(w3);
    brisk_sim_world_free(w);
}

/* An unresolved neighbour: the stack sends arp_retries requests arp_retrans apart. Each retry is a timer the
 * world must fire exactly at brisk_stack_next_deadline(), with nothing else happening in between. */
static void test_host_timers_fire_at_the_deadline(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(g_seed);
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.arp_retries = 3;
    s.arp_retrans_ns = 1000000;
    brisk_sim_host *h = brisk_sim_host_add(w, "a", &s);
    brisk_stack *st = brisk_sim_host_stack(h);
    brisk_sim_port *nic = add_nic(h, IP(10, 0, 0, 1), 1);
    struct peer_log pl = {0};
    brisk_sim_port *peer = brisk_sim_raw_port_add(w, "peer", peer_rx, &pl);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 20000);
    assert_non_null(brisk_sim_link_connect(w, nic, peer, &c));

    const uint64_t t0 = 3000000;
    brisk_sim_run_until(w, t0);
    assert_int_equal(pl.n, 0);
    /* Application code between runs: the request leaves at once, the retry timer needs the kick. */
    assert_int_equal(brisk_icmp_echo_send(st, IP(10, 0, 0, 2), 7, 1, 56, t0), BRISK_OK);
    brisk_sim_host_kick(h);
    /* The world follows the stack's deadlines (which may come early, on wheel-level boundaries) and polls
     * at each one, so every retry leaves exactly when its timer expires. */
    uint64_t d = brisk_stack_next_deadline(st);
    assert_true(d > t0 && d <= t0 + 1000000);
    brisk_sim_run_until(w, t0 + 1000000 - 1);
    assert_int_equal(pl.n, 1);
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    assert_int_equal(pl.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(pl.ethertype[i], 0x0806);
        assert_int_equal(pl.len[i], 60); /* the NIC pads the 42-byte request to the Ethernet minimum */
        assert_int_equal(pl.t[i], t0 + i * 1000000 + 480 + 20000);
    }
    assert_int_equal(brisk_stack_next_deadline(st), BRISK_TIME_NONE);
    struct brisk_counters ct;
    brisk_stack_get_counters(st, &ct);
    assert_int_equal(ct.ArpOutRequests, 3);
    assert_int_equal(ct.ArpResolveFailed, 1);
    struct brisk_sim_nic_stats ns;
    brisk_sim_nic_stats(nic, &ns);
    assert_int_equal(ns.tx_frames, 3);
    assert_int_equal(ns.tx_completions, 3);
    assert_int_equal(ns.ring_used, 0);
    brisk_sim_world_free(w);
}

struct pinger {
    brisk_sim_host *h;
    brisk_stack *st;
    uint32_t dst;
    uint16_t seq;
    size_t replies;
    uint64_t rtt[8];
    uint16_t rseq[8];
};

static void on_echo(void *ctx, const struct brisk_echo_reply *r, uint64_t now)
{
    struct pinger *pg = ctx;
    assert_true(pg->replies < 8);
    pg->rtt[pg->replies] = now - r->sent_at;
    pg->rseq[pg->replies] = r->seq;
    pg->replies++;
}

/* Sends a ping from inside an event, as application code driven by the world would. */
static void ping_now(void *ctx, uint64_t now)
{
    struct pinger *pg = ctx;
    assert_int_equal(brisk_icmp_echo_send(pg->st, pg->dst, 1, ++pg->seq, 56, now), BRISK_OK);
    brisk_sim_host_kick(pg->h);
}

static void ping_pair(uint64_t rate, uint64_t delay, const char *txc, uint64_t want_rtt)
{
    brisk_sim_world *w = brisk_sim_world_new(g_seed);
    brisk_sim_host *ha = brisk_sim_host_add(w, "a", NULL);
    brisk_sim_host *hb = brisk_sim_host_add(w, "b", NULL);
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    assert_int_equal(brisk_sim_txc_parse(txc, &nc.txc), BRISK_OK);
    nc.dev.ip = IP(192, 168, 1, 1);
    brisk_sim_port *pa = brisk_sim_nic_add(ha, &nc);
    nc.dev.ip = IP(192, 168, 1, 2);
    brisk_sim_port *pb = brisk_sim_nic_add(hb, &nc);
    assert_non_null(pa);
    assert_non_null(pb);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, rate, delay);
    brisk_sim_link *l = brisk_sim_link_connect(w, pa, pb, &c);
    assert_non_null(l);
    struct pinger pg = {.h = ha, .st = brisk_sim_host_stack(ha), .dst = IP(192, 168, 1, 2)};
    brisk_icmp_set_echo_handler(pg.st, on_echo, &pg);
    /* The first ping waits for ARP; the next ones find the neighbour resolved. */
    assert_int_equal(brisk_sim_at(w, 1000000, ping_now, &pg), BRISK_OK);
    assert_int_equal(brisk_sim_at(w, 50000000, ping_now, &pg), BRISK_OK);
    assert_int_equal(brisk_sim_at(w, 90000000, ping_now, &pg), BRISK_OK);
    brisk_sim_run_until(w, 200000000);
    assert_int_equal(pg.replies, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(pg.rseq[i], i + 1);
    assert_true(pg.rtt[0] > want_rtt); /* plus the ARP exchange */
    assert_int_equal(pg.rtt[1], want_rtt);
    assert_int_equal(pg.rtt[2], want_rtt);
    struct brisk_counters cb;
    brisk_stack_get_counters(brisk_sim_host_stack(hb), &cb);
    assert_int_equal(cb.IcmpInEchos, 3);
    assert_int_equal(cb.IcmpOutEchoReps, 3);
    struct brisk_sim_link_stats s;
    brisk_sim_link_stats(l, 0, &s);
    assert_int_equal(s.frames_sent, 4); /* ARP request + 3 echo requests */
    struct brisk_sim_stats ws;
    brisk_sim_world_stats(w, &ws);
    assert_int_equal(ws.frames_delivered, 8);
    brisk_sim_world_free(w);
}

static void test_two_hosts_ping_rtt(void **state)
{
    (void)state;
    /* 98-byte echo frames (14 + 20 + 8 + 56). */
    ping_pair(1000000000ull, 50000, "immediate", 2 * (784 + 50000));
    ping_pair(10000000000ull, 50000, "immediate", 2 * (79 + 50000)); /* 78.4 ns rounds up */
    ping_pair(100000000ull, 1000, "immediate", 2 * (7840 + 1000));
    /* A slow completion holds ring slots but not the frames: the RTT does not change. */
    ping_pair(1000000000ull, 50000, "delay 190us", 2 * (784 + 50000));
    ping_pair(1000000000ull, 50000, "coalesce 16 10ms", 2 * (784 + 50000));
}

int main(void)
{
    g_seed = brisk_test_seed(1234);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_run_in_time_then_schedule_order),
        cmocka_unit_test(test_same_instant_scheduling),
        cmocka_unit_test(test_reschedule_at_the_same_instant),
        cmocka_unit_test(test_run_until_and_run_while),
        cmocka_unit_test(test_free_with_pending_events),
        cmocka_unit_test(test_host_identity_and_seeds),
        cmocka_unit_test(test_host_timers_fire_at_the_deadline),
        cmocka_unit_test(test_two_hosts_ping_rtt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
