/*
 * test_rr_timers.c — seed 004 through the simulator: timer-wheel work per transaction of many 1-byte request
 * / response flows under brisk's lazy retransmit and delayed-ACK deadlines and under the eager discipline
 * Linux had until 2019 (re-arm RTO and TLP on every send and ACK), and that the lazy timers still fire on
 * time when segments are lost.
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

#include "brisk/sim.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC

static int done(void *ctx)
{
    return brisk_sim_rr_done(ctx);
}

/* `flows` flows x `tx` transactions between a and b (10 Gbit/s, 50 us one way), sender settings `set` (may be
 * NULL), frames a -> b lost with probability `loss`. */
static struct brisk_sim_rr_result run(uint32_t flows, uint32_t tx, const char *set, double loss,
                                      uint32_t resp)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    if (set)
        assert_int_equal(brisk_settings_set(&s, set), BRISK_OK);
    brisk_sim_world *w = brisk_sim_world_new(3);
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &s);
    brisk_sim_host *b = brisk_sim_host_add(w, "b", &s);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(a, 0x0a000001u, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    lc.ab.impair.loss = loss;
    lc.ba.impair.loss = loss;
    lc.ab.impair.loss_model = lc.ba.impair.loss_model =
        loss > 0 ? BRISK_SIM_LOSS_RANDOM : BRISK_SIM_LOSS_NONE;
    assert_non_null(brisk_sim_link_connect(w, pa, pb, &lc));
    struct brisk_sim_rr_config rc = {
        .flows = flows, .transactions = tx, .nodelay = 1, .request_size = 1, .response_size = resp};
    brisk_sim_rr *rr = brisk_sim_rr_start(w, a, b, 0x0a000002u, &rc);
    assert_non_null(rr);
    assert_true(brisk_sim_run_while(w, done, rr, 600 * BRISK_NSEC_PER_SEC));
    struct brisk_sim_rr_result r;
    brisk_sim_rr_result(rr, &r);
    brisk_sim_rr_free(rr);
    brisk_sim_world_free(w);
    return r;
}

static void show(const char *what, const struct brisk_sim_rr_result *r)
{
    double t = (double)r->transactions;
    printf("# %-30s %7" PRIu64
           " transactions  wheel ops / transaction: client %.3f server %.3f  fires %.3f/%.3f"
           "  latency p50 %.1f us p99 %.1f us max %.1f us  probes %" PRIu64 " rtos %" PRIu64 "\n",
           what, r->transactions, (double)r->client_wheel_ops / t, (double)r->server_wheel_ops / t,
           (double)r->client_timer_fires / t, (double)r->server_timer_fires / t, (double)r->lat_p50 / 1e3,
           (double)r->lat_p99 / 1e3, (double)r->lat_max / 1e3, r->tlp_probes, r->rtos);
}

/* 256 flows x 40 transactions: lazy deadlines touch the wheel at most once per transaction on either host
 * (in practice far less: a deadline that only moves later costs nothing), the eager discipline at least three
 * times. Same transactions, same latency — only the timer work differs. */
static void test_wheel_ops_per_transaction(void **state)
{
    (void)state;
    struct brisk_sim_rr_result lazy = run(256, 40, NULL, 0, 1);
    struct brisk_sim_rr_result eager = run(256, 40, "tcp_timer_eager=1", 0, 1);
    show("256 flows, lazy (brisk)", &lazy);
    show("256 flows, eager (Linux 2019)", &eager);
    assert_int_equal(lazy.errors, 0);
    assert_int_equal(eager.errors, 0);
    assert_int_equal(lazy.transactions, 256 * 40);
    assert_int_equal(eager.transactions, 256 * 40);
    assert_true(lazy.client_wheel_ops <= lazy.transactions);
    assert_true(lazy.server_wheel_ops <= lazy.transactions);
    assert_true(eager.client_wheel_ops >= 3 * eager.transactions);
    assert_true(eager.server_wheel_ops >= 3 * eager.transactions);
    assert_int_equal(lazy.lat_p50, eager.lat_p50);
}

/* One flow, 1 % loss each way: every transaction completes; a lost request or response is resent by a tail
 * loss probe at the RTO's time (a lone segment waits out the peer's possible delayed ACK), so no transaction
 * waits for a backed-off RTO — the lazy deadline fires on time. */
static void test_lazy_timers_fire_on_time_with_loss(void **state)
{
    (void)state;
    struct brisk_sim_rr_result r = run(1, 2000, NULL, 0.01, 1);
    show("1 flow, 1 % loss, lazy", &r);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.transactions, 2000);
    assert_true(r.tlp_probes > 0);
    assert_true(r.lat_p50 < 200 * US);
    /* A loss costs one RTO's time (200 ms) and a round trip; only a lost probe too (two losses) costs a
     * second, unbacked-off, RTO after it. */
    assert_true(r.lat_p99 >= 200 * MS && r.lat_p99 < 200 * MS + 2 * MS);
    assert_true(r.lat_max < 400 * MS + 2 * MS);
    assert_true(r.rtos * 4 < r.tlp_probes);
}

/* Responses of 14 segments with 1 % loss complete byte-counted and probes fire. Without loss nothing is
 * probed or timed out: the probe deadline, pushed later by every ACK, never expires in a healthy exchange. (A
 * loss among the last three segments still needs an RTO until RACK marks it lost from the probe's SACK —
 * issue 5.) */
static void test_multi_segment_responses_with_loss(void **state)
{
    (void)state;
    struct brisk_sim_rr_result r = run(1, 1000, NULL, 0.01, 14 * 1448);
    show("1 flow, 20 KB responses, 1 % loss", &r);
    assert_int_equal(r.errors, 0);
    assert_int_equal(r.transactions, 1000);
    assert_true(r.tlp_probes > 0);
    struct brisk_sim_rr_result clean = run(1, 1000, NULL, 0, 14 * 1448);
    show("1 flow, 20 KB responses, no loss", &clean);
    assert_int_equal(clean.tlp_probes, 0);
    assert_int_equal(clean.rtos, 0);
    assert_true(clean.lat_max < 1 * MS);
}

/* Drops the first transmission of every segment with PSH from port 5001 (the last segment of each response).
 */
struct tail_dropper {
    uint32_t last_seq;
    int have;
    uint64_t seen, dropped;
};

static int drop_response_tails(void *ctx, const uint8_t *f, size_t len)
{
    struct tail_dropper *t = ctx;
    if (len < 14 + 20 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 6)
        return 0;
    size_t ihl = (size_t)(f[14] & 0x0f) * 4;
    const uint8_t *tcp = f + 14 + ihl;
    if (len < 14 + ihl + 20 || ((tcp[0] << 8) | tcp[1]) != 5001 || !(tcp[13] & 0x08))
        return 0;
    uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
    if (t->have && seq == t->last_seq)
        return 0; /* its retransmission goes through */
    if (t->seen++ == 0)
        return 0; /* not the first response: see below */
    t->have = 1;
    t->last_seq = seq;
    t->dropped++;
    return 1;
}

/* The last segment of every 14-segment response (after the first) is lost once: the tail loss probe (2 SRTT
 * after the last ACK) resends it and the response completes in about two round trips more — never an RTO.
 * Each repair also costs a window reduction (RFC 8985 §7.4), so the responses behind it take a few more round
 * trips than a clean one. (The first response is spared: the peer is still in quickack mode then,
 * acknowledges all 13 segments, and a lone outstanding segment's probe waits out a possible delayed ACK, RFC
 * 8985 §7.2 — 200 ms, as in Linux.) */
static void test_tail_drop_recovers_in_two_rtts(void **state)
{
    (void)state;
    struct tail_dropper td = {0};
    brisk_sim_world *w = brisk_sim_world_new(5);
    brisk_sim_host *a = brisk_sim_host_add(w, "a", NULL);
    brisk_sim_host *b = brisk_sim_host_add(w, "b", NULL);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(a, 0x0a000001u, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10 * GBIT, 50 * US);
    lc.ba.impair.drop_fn = drop_response_tails;
    lc.ba.impair.drop_ctx = &td;
    assert_non_null(brisk_sim_link_connect(w, pa, pb, &lc));
    if (getenv("RR_PCAP"))
        brisk_sim_capture(pb, getenv("RR_PCAP"));
    struct brisk_sim_rr_config rc = {
        .flows = 1, .transactions = 200, .nodelay = 1, .request_size = 100, .response_size = 14 * 1448};
    brisk_sim_rr *rr = brisk_sim_rr_start(w, a, b, 0x0a000002u, &rc);
    assert_non_null(rr);
    assert_true(brisk_sim_run_while(w, done, rr, 600 * BRISK_NSEC_PER_SEC));
    struct brisk_sim_rr_result r;
    brisk_sim_rr_result(rr, &r);
    show("1 flow, every response's tail dropped", &r);
    assert_int_equal(r.transactions, 200);
    assert_int_equal(td.dropped, 199);
    assert_int_equal(r.rtos, 0);
    assert_int_equal(r.tlp_probes, 199);
    /* The probe goes 2 SRTT after the last ACK and its ACK one RTT later (a capture shows 202 + 101 us); the
     * reduced window paces the next responses more slowly: every transaction stays under 1 ms, where an RTO
     * would cost 200 ms. */
    assert_true(r.lat_max < 1000 * US);
    brisk_sim_rr_free(rr);
    brisk_sim_world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wheel_ops_per_transaction),
        cmocka_unit_test(test_lazy_timers_fire_on_time_with_loss),
        cmocka_unit_test(test_multi_segment_responses_with_loss),
        cmocka_unit_test(test_tail_drop_recovers_in_two_rtts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
