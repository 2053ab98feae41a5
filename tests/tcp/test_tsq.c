/*
 * test_tsq.c — white-box tests of below-TCP accounting and TCP Small Queues (src/tcp/tsq.c): the charge per
 * packet, the budget rules, the throttle / resume cycle through the stack's poll (never from the completion
 * itself), the one-segment shortcut, hold reasons, a device that orphans what it takes, and a connection
 * freed while its packets are still below it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "support/txconn.h"
#include "tcp/tcp.h"

#define ACK               TXC_ACK
#define PSH               TXC_PSH
#define TRUESIZE(payload) TXC_TRUESIZE(payload)

static void test_charge_and_release(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, NULL);
    size_t held0 = f.t.f.nheld;
    txc_send(f.c, 3000, TF_MS);
    /* Two full segments and a 80-byte tail (NODELAY is off but nothing small is unacknowledged). */
    assert_int_equal(f.t.f.nheld - held0, 3);
    assert_int_equal(f.c->tsq.pkts, 3);
    assert_int_equal(f.c->tsq.wmem, 2 * TRUESIZE(1460) + TRUESIZE(80));
    assert_int_equal(tf_info(f.c).wmem, f.c->tsq.wmem);
    fakedev_complete_all(&f.t.f, 2 * TF_MS);
    assert_int_equal(f.c->tsq.wmem, 0);
    assert_int_equal(f.c->tsq.pkts, 0);
    /* A pure ACK is not charged. */
    tf_peer_send_data(&f.p, 100, 3 * TF_MS);
    tf_run(&f.t, 300 * TF_MS);
    assert_int_equal(f.c->tsq.wmem, 0);
    tf_conn_close(&f);
}

static void test_budget_rules(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_limit_output_bytes=100K", "tcp_tsq_adaptive=0", NULL});
    brisk_sock *c = f.c;
    /* A known pacing rate: cwnd 100 segments over a 1 ms SRTT in congestion avoidance (120 %). */
    c->cc.cwnd = 146000;
    c->cc.ssthresh = 100000;
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    uint64_t rate = tcp_pacing_rate(c);
    assert_int_equal(rate, 146000ull * 1000 * 120 / 100);
    uint64_t hold = BRISK_NSEC_PER_SEC >> 10; /* pacing shift 10: 976.562 µs */
    uint64_t by_rate = rate * hold / BRISK_NSEC_PER_SEC;
    f.t.st->net.s.tcp_tsq_rule = BRISK_TSQ_CEILING;
    assert_int_equal(tcp_tsq_limit(c), by_rate < 102400 ? by_rate : 102400);
    f.t.st->net.s.tcp_tsq_rule = BRISK_TSQ_FLOOR;
    assert_int_equal(tcp_tsq_limit(c), by_rate > 102400 ? by_rate : 102400);
    f.t.st->net.s.tcp_tsq_rule = BRISK_TSQ_CAP;
    assert_int_equal(tcp_tsq_limit(c), 102400);
    /* The ceiling rule never goes below two buffers. */
    f.t.st->net.s.tcp_tsq_rule = BRISK_TSQ_CEILING;
    c->rtt.srtt_fp = 10 * BRISK_NSEC_PER_SEC << 16;
    assert_int_equal(tcp_tsq_limit(c), 2 * TRUESIZE(1460));
    /* Adaptive: the hold time covers twice the device's completion overhead (latency beyond the wire), not
     * the raw latency, which includes the ring's own queueing. */
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    f.t.st->net.s.tcp_tsq_adaptive = 1;
    f.t.f.dev->stats.tx_done_overhead_ns = 5 * TF_MS;
    f.t.f.dev->stats.tx_done_latency_ns = 50 * TF_MS;
    f.t.st->net.s.tcp_limit_output_bytes = 64u << 20;
    assert_int_equal(tcp_tsq_limit(c), rate * 10 * TF_MS / BRISK_NSEC_PER_SEC);
    f.t.f.dev->stats.tx_done_overhead_ns = 0;
    f.t.f.dev->stats.tx_done_latency_ns = 0;
    tf_conn_close(&f);
}

/* The table's contract (struct tcp_tsq_rule): every rule is non-decreasing in the rate term and never below
 * min(cap, two buffers), the floor under which tcp_tsq_holds holds nothing without asking the rule; and each
 * has a name the setting takes, whose index is the rule. */
static void test_rule_table_contract(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {0, 1, 2048, 4608, 65536, 131072, 4u << 20, 1ull << 40, UINT64_MAX};
    const size_t n = sizeof(sizes) / sizeof(sizes[0]);
    const char *names[BRISK_TSQ_RULES] = {"cap", "floor", "ceiling"};
    for (int r = 0; r < BRISK_TSQ_RULES; r++) {
        assert_non_null(tcp_tsq_rules[r].limit);
        assert_non_null(tcp_tsq_rules[r].since);
        for (size_t a = 0; a < n; a++)
            for (size_t t = 0; t < n; t++)
                for (size_t b = 0; b < n; b++) {
                    uint64_t cap = sizes[a], two = sizes[t];
                    uint64_t lim = tcp_tsq_rules[r].limit(cap, sizes[b], two);
                    assert_true(lim >= (cap < two ? cap : two));
                    if (b + 1 < n)
                        assert_true(tcp_tsq_rules[r].limit(cap, sizes[b + 1], two) >= lim);
                }
        struct brisk_settings s;
        brisk_settings_default(&s);
        char set[64];
        snprintf(set, sizeof set, "tcp_tsq_rule=%s", names[r]);
        assert_int_equal(brisk_settings_set(&s, set), BRISK_OK);
        assert_int_equal(s.tcp_tsq_rule, (uint32_t)r);
    }
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(s.tcp_tsq_rule, BRISK_TSQ_CEILING);
    assert_int_equal(brisk_settings_set(&s, "tcp_tsq_rule=2"), BRISK_ERR_INVAL); /* names, not numbers */
    assert_int_equal(brisk_settings_set(&s, "tcp_tsq_rule=min"), BRISK_ERR_INVAL);
}

/* Over budget: marked throttled, held with reason "tsq"; a completion only parks it; the stack's poll sends.
 */
static void test_throttle_and_resume_via_poll(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_limit_output_bytes=16K", "tcp_tsq_rule=cap", "tcp_tsq_shortcut=0",
                                       NULL});
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    txc_send(c, 100000, TF_MS);
    /* Sends while the charge is within 16 KB: 8 segments (7 x 2284 = 15988 <= 16384, the 8th goes over). */
    assert_int_equal(f.t.f.ntx - n0, 8);
    assert_true(c->tsq.throttled);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_TSQ);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TSQThrottles, 1);
    /* The completion of one packet frees room but transmits nothing by itself. */
    brisk_netdev_tx_done(f.t.f.dev, f.t.f.held[0], 2 * TF_MS);
    memmove(f.t.f.held, f.t.f.held + 1, (f.t.f.nheld - 1) * sizeof(f.t.f.held[0]));
    f.t.f.nheld--;
    assert_int_equal(f.t.f.ntx - n0, 8);
    assert_false(c->tsq.throttled);
    assert_int_equal(brisk_stack_next_deadline(f.t.st), 2 * TF_MS); /* work to do now */
    brisk_stack_poll(f.t.st, 2 * TF_MS);
    assert_int_equal(f.t.f.ntx - n0, 9); /* exactly the room one completion made */
    k = tf_counters(&f.t);
    assert_int_equal(k.TSQResumes, 1);
    assert_int_equal(k.TSQThrottles, 2);
    assert_true(tf_info(c).hold_events[BRISK_HOLD_TSQ] >= 1);
    assert_true(tf_info(c).hold_ns[BRISK_HOLD_TSQ] >= TF_MS);
    tf_conn_close(&f);
}

/* A device that frees its senders as it takes a packet (BRISK_NETDEV_CAP_ORPHAN, Linux's tun: skb_orphan in
 * its xmit) holds the buffers, but their charge ends at the xmit: the budget that held the connection above
 * after 8 segments never holds it, in one call or later, and nothing waits for completions to resume it.
 * brisk-pkt's device is such a one; before the capability its TSQ could hold a burst within one call. */
static void test_orphaning_device(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_limit_output_bytes=16K", "tcp_tsq_rule=cap", "tcp_tsq_shortcut=0",
                                       NULL});
    f.t.f.dev->cfg.caps |= BRISK_NETDEV_CAP_ORPHAN;
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    txc_send(c, 100000, TF_MS);
    assert_int_equal(f.t.f.ntx - n0, 10); /* the initial window, whole */
    assert_false(c->tsq.throttled);
    assert_int_equal(c->tsq.wmem, 0);
    assert_int_equal(c->tsq.pkts, 0);
    assert_int_equal(tf_counters(&f.t).TSQThrottles, 0);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_CWND);
    assert_true(f.t.f.nheld >= 10); /* the device still has the buffers */
    tf_conn_close(&f);
}

/* With at most one segment unacknowledged the connection is never held (Linux f921a4a5bffa). */
static void test_one_segment_shortcut(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_limit_output_bytes=2048", "tcp_tsq_rule=cap", NULL});
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    txc_send(c, 1460, TF_MS); /* over the 2 KB cap at once, but nothing was unacknowledged */
    assert_int_equal(f.t.f.ntx - n0, 1);
    txc_send(c, 1460, TF_MS); /* one segment unacknowledged: still allowed */
    assert_int_equal(f.t.f.ntx - n0, 2);
    txc_send(c, 1460, TF_MS); /* two unacknowledged and over budget: held */
    assert_int_equal(f.t.f.ntx - n0, 2);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_TSQ);
    /* The ACK of the first (its buffer still below TCP) leaves one unacknowledged: the third goes. */
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, 2 * TF_MS);
    h.ack = c->snd.iss + 1 + 1460;
    assert_int_equal(c->snd.nxt, c->snd.iss + 1 + 2 * 1460);
    tf_inject(&f.t, &h, NULL, 0, 2 * TF_MS);
    assert_int_equal(c->snd.nxt, c->snd.iss + 1 + 3 * 1460);
    tf_conn_close(&f);
}

/* A connection aborted while its packets are below TCP lives on as a zombie until the last completion. */
static void test_zombie_until_last_completion(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, NULL);
    uint64_t socks = f.t.st->tcp->nsocks;
    txc_send(f.c, 5000, TF_MS);
    assert_true(f.c->tsq.pkts > 0);
    brisk_abort(f.c, 2 * TF_MS);
    f.c = NULL;
    assert_int_equal(f.t.st->tcp->nsocks, socks); /* still counted: its packets are in the device */
    assert_non_null(f.t.st->tcp->zombies);
    fakedev_complete_all(&f.t.f, 3 * TF_MS);
    assert_int_equal(f.t.st->tcp->nsocks, socks - 1);
    assert_null(f.t.st->tcp->zombies);
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charge_and_release),
        cmocka_unit_test(test_budget_rules),
        cmocka_unit_test(test_rule_table_contract),
        cmocka_unit_test(test_throttle_and_resume_via_poll),
        cmocka_unit_test(test_orphaning_device),
        cmocka_unit_test(test_one_segment_shortcut),
        cmocka_unit_test(test_zombie_until_last_completion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
