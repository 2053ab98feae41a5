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

#include <string.h>
#include <cmocka.h>

#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK               BRISK_TCP_ACK
#define PSH               BRISK_TCP_PSH
#define TRUESIZE(payload) ((payload) + 20u + 20u + 14u + 790u) /* TCP + IP + Ethernet headers + overhead */

/* tcpforge's connection fixture with TSQ on (and the test's settings after it), no timestamps (MSS 1460
 * exactly), a 100 us handshake. */
static void setup(struct tf_conn *f, const char *const *sets)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    tf_conn_open(f, (const char *const[]){"tcp_tsq=1", NULL}, sets, &o, 100 * TF_US);
}

static void send_bytes(brisk_sock *c, size_t len, uint64_t now)
{
    static uint8_t buf[200000];
    tf_pattern(buf, len, 0);
    assert_int_equal(brisk_send(c, buf, len, 0, now), (int64_t)len);
}

static void test_charge_and_release(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    size_t held0 = f.t.f.nheld;
    send_bytes(f.c, 3000, TF_MS);
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
    setup(&f, (const char *const[]){"tcp_limit_output_bytes=100K", "tcp_tsq_adaptive=0", NULL});
    brisk_sock *c = f.c;
    /* A known pacing rate: cwnd 100 segments over a 1 ms SRTT in congestion avoidance (120 %). */
    c->cc.cwnd = 146000;
    c->cc.ssthresh = 100000;
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    uint64_t rate = tcp_pacing_rate(c);
    assert_int_equal(rate, 146000ull * 1000 * 120 / 100);
    uint64_t hold = BRISK_NSEC_PER_SEC >> 10; /* pacing shift 10: 976.562 µs */
    uint64_t by_rate = rate * hold / BRISK_NSEC_PER_SEC;
    f.t.st->s.tcp_tsq_rule = 2;
    assert_int_equal(tcp_tsq_limit(c), by_rate < 102400 ? by_rate : 102400);
    f.t.st->s.tcp_tsq_rule = 1;
    assert_int_equal(tcp_tsq_limit(c), by_rate > 102400 ? by_rate : 102400);
    f.t.st->s.tcp_tsq_rule = 0;
    assert_int_equal(tcp_tsq_limit(c), 102400);
    /* Rule 2 never goes below two buffers. */
    f.t.st->s.tcp_tsq_rule = 2;
    c->rtt.srtt_fp = 10 * BRISK_NSEC_PER_SEC << 16;
    assert_int_equal(tcp_tsq_limit(c), 2 * TRUESIZE(1460));
    /* Adaptive: the hold time covers twice the device's completion overhead (latency beyond the wire), not
     * the raw latency, which includes the ring's own queueing. */
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    f.t.st->s.tcp_tsq_adaptive = 1;
    f.t.f.dev->stats.tx_done_overhead_ns = 5 * TF_MS;
    f.t.f.dev->stats.tx_done_latency_ns = 50 * TF_MS;
    f.t.st->s.tcp_limit_output_bytes = 64u << 20;
    assert_int_equal(tcp_tsq_limit(c), rate * 10 * TF_MS / BRISK_NSEC_PER_SEC);
    f.t.f.dev->stats.tx_done_overhead_ns = 0;
    f.t.f.dev->stats.tx_done_latency_ns = 0;
    tf_conn_close(&f);
}

/* Over budget: marked throttled, held with reason "tsq"; a completion only parks it; the stack's poll sends.
 */
static void test_throttle_and_resume_via_poll(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f,
          (const char *const[]){"tcp_limit_output_bytes=16K", "tcp_tsq_rule=0", "tcp_tsq_shortcut=0", NULL});
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    send_bytes(c, 100000, TF_MS);
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
    setup(&f,
          (const char *const[]){"tcp_limit_output_bytes=16K", "tcp_tsq_rule=0", "tcp_tsq_shortcut=0", NULL});
    f.t.f.dev->cfg.caps |= BRISK_NETDEV_CAP_ORPHAN;
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    send_bytes(c, 100000, TF_MS);
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
    setup(&f, (const char *const[]){"tcp_limit_output_bytes=2048", "tcp_tsq_rule=0", NULL});
    brisk_sock *c = f.c;
    size_t n0 = f.t.f.ntx;
    send_bytes(c, 1460, TF_MS); /* over the 2 KB cap at once, but nothing was unacknowledged */
    assert_int_equal(f.t.f.ntx - n0, 1);
    send_bytes(c, 1460, TF_MS); /* one segment unacknowledged: still allowed */
    assert_int_equal(f.t.f.ntx - n0, 2);
    send_bytes(c, 1460, TF_MS); /* two unacknowledged and over budget: held */
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
    setup(&f, NULL);
    uint64_t socks = f.t.st->tcp->nsocks;
    send_bytes(f.c, 5000, TF_MS);
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

/* Completes every packet the fake device holds and lets the stack run its deferred work at `now`. */
static void complete_and_poll(struct tf_conn *f, uint64_t now)
{
    fakedev_complete_all(&f->t.f, now);
    brisk_stack_poll(f->t.st, now);
}

/* Auto-corking: the small tail waits while this connection's data is below TCP, and goes on completion. */
static void test_autocork_holds_tail_until_completion(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_autocorking=1", NULL});
    brisk_sock *c = f.c;
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS), BRISK_OK);
    size_t n0 = f.t.f.ntx;
    send_bytes(c, 100, TF_MS); /* the first packet is never held */
    assert_int_equal(f.t.f.ntx - n0, 1);
    send_bytes(c, 100, TF_MS); /* in flight and below TCP: corked, even with NODELAY */
    assert_int_equal(f.t.f.ntx - n0, 1);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_AUTOCORK);
    send_bytes(c, 100, TF_MS); /* more joins the tail */
    assert_int_equal(f.t.f.ntx - n0, 1);
    assert_int_equal(tf_counters(&f.t).TCPAutoCorking, 1);
    complete_and_poll(&f, TF_MS + 500);
    assert_int_equal(f.t.f.ntx - n0, 2); /* one 200-byte segment, at the completion */
    assert_int_equal(c->snd.nxt - c->snd.una, 300);
    assert_int_equal(tf_info(c).hold_ns[BRISK_HOLD_AUTOCORK], 500);
    tf_conn_close(&f);
}

/* a181ceb501b3: with nothing unacknowledged, never hold — unless the compat knob restores the old rule. */
static void test_autocork_first_packet(void **state)
{
    (void)state;
    for (int bug = 0; bug <= 1; bug++) {
        struct tf_conn f;
        setup(&f, bug ? (const char *const[]){"tcp_autocorking=1", "tcp_autocork_first_packet=1", NULL}
                      : (const char *const[]){"tcp_autocorking=1", NULL});
        brisk_sock *c = f.c;
        brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS);
        send_bytes(c, 100, TF_MS);
        /* The peer acknowledges it before the device reports completion (a slow-completion NIC). */
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, 2 * TF_MS);
        h.ack = c->snd.iss + 1 + 100;
        f.t.hold_completions = 1; /* the data packet stays below TCP */
        tf_inject(&f.t, &h, NULL, 0, 2 * TF_MS);
        f.t.hold_completions = 0;
        assert_int_equal(c->snd.una, c->snd.max);
        assert_true(c->tsq.wmem > 0);
        uint32_t before = c->snd.nxt;
        send_bytes(c, 100, 3 * TF_MS);
        if (bug)
            assert_int_equal(c->snd.nxt, before); /* held with nothing in flight: the TCP_RR regression */
        else
            assert_int_equal(c->snd.nxt, before + 100);
        tf_conn_close(&f);
    }
}

/* bf06200e732d: the completion resume must use the connection's own Nagle mode. With the compat knob a
 * NODELAY sender's corked tail waits for the ACK of the previous small segment instead. */
static void test_resume_uses_current_nagle_mode(void **state)
{
    (void)state;
    for (int bug = 0; bug <= 1; bug++) {
        struct tf_conn f;
        setup(&f, bug ? (const char *const[]){"tcp_autocorking=1", "tcp_resume_nagle=1", NULL}
                      : (const char *const[]){"tcp_autocorking=1", NULL});
        brisk_sock *c = f.c;
        brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS);
        uint32_t d = c->snd.nxt;
        send_bytes(c, 48, TF_MS);  /* the PDU header leaves */
        send_bytes(c, 512, TF_MS); /* the payload is auto-corked behind it */
        assert_int_equal(c->snd.nxt, d + 48);
        complete_and_poll(&f, TF_MS + 100);
        if (!bug) {
            assert_int_equal(c->snd.nxt, d + 48 + 512); /* resumed with NODELAY: out at the completion */
        } else {
            assert_int_equal(c->snd.nxt, d + 48); /* resumed with Nagle on: waits for the ACK of 48 bytes */
            assert_int_equal(tf_info(c).hold, BRISK_HOLD_NAGLE);
            struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, 40 * TF_MS);
            h.ack = d + 48;
            f.t.hold_completions = 1; /* keep counting what the ACK releases, not what collecting completes */
            tf_inject(&f.t, &h, NULL, 0, 40 * TF_MS); /* the peer's delayed ACK */
            f.t.hold_completions = 0;
            assert_int_equal(c->snd.nxt, d + 48 + 512);
        }
        tf_conn_close(&f);
    }
}

/* TSO autosizing: on a GSO device the transmit function sends bursts of whole segments — at least
 * tcp_min_tso_segs, about a pacing interval of data, at most half the congestion window. */
static void test_tso_size_goal(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    brisk_sock *c = f.c;
    assert_int_equal(tcp_size_goal(c, 1460), 1460); /* no GSO on the device: one segment */
    f.t.f.dev->cfg.caps |= BRISK_NETDEV_CAP_GSO;
    f.t.f.dev->cfg.gso_max_size = 65535;
    /* cwnd 10 segments: half is 5, below the rate-based size, so bursts of 5 x 1460. */
    assert_int_equal(c->cc.cwnd, 14600);
    assert_int_equal(tcp_size_goal(c, 1460), 5 * 1460);
    send_bytes(c, 20000, TF_MS);
    tf_collect(&f.t);
    struct tf_seg *s1 = tf_take(&f.t), *s2 = tf_take(&f.t);
    assert_int_equal(s1->len, 5 * 1460);
    assert_int_equal(s2->len, 5 * 1460);
    TF_EXPECT_NONE(&f.t); /* the congestion window is full */
    /* A big window: the rate-based size, capped by the device's 64 KB. */
    c->cc.cwnd = 1000 * 1460;
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    uint64_t bytes = tcp_pacing_rate(c) >> 10;
    uint32_t want = (uint32_t)(bytes < 65455 ? bytes : 65455) / 1460 * 1460;
    assert_int_equal(tcp_size_goal(c, 1460), want);
    /* A slow path: never below tcp_min_tso_segs. */
    c->rtt.srtt_fp = 10 * TF_SEC << 16;
    assert_int_equal(tcp_size_goal(c, 1460), 2 * 1460);
    tf_conn_close(&f);
}

/* Pacing: each packet's departure time is the previous one's plus its wire bytes at the pacing rate; the
 * pacing timer sends what waits, with hold reason "pacing" meanwhile. */
static void test_pacing_departure_times(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_pacing=1", NULL});
    brisk_sock *c = f.c;
    /* 14600 B cwnd over a 1 ms SRTT in slow start (200 %): 29.2 MB/s, so a 1460-byte segment (1526 bytes
     * with headers) leaves every 52.260 us. */
    c->rtt.srtt_fp = TF_MS << 16; /* SRTT 1 ms (fixed point, rtt.h) */
    assert_int_equal(tcp_pacing_rate(c), 29200000);
    uint64_t gap = 1526ull * BRISK_NSEC_PER_SEC / 29200000;
    uint64_t t0 = TF_SEC;
    send_bytes(c, 3 * 1460, t0);
    TF_EXPECT(&f.t, t0, ACK, c->snd.iss + 1, 1001, 1460);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_PACING);
    tf_run(&f.t, t0 + gap - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t0 + gap);
    TF_EXPECT(&f.t, t0 + gap, ACK, c->snd.iss + 1 + 1460, 1001, 1460);
    tf_run(&f.t, t0 + 2 * gap);
    TF_EXPECT(&f.t, t0 + 2 * gap, ACK | PSH, c->snd.iss + 1 + 2920, 1001, 1460);
    assert_true(tf_counters(&f.t).PacingHolds >= 2);
    assert_int_equal(tf_info(c).hold_ns[BRISK_HOLD_PACING], 2 * gap);
    tf_conn_close(&f);
}

/* A pacing timer that fires late (a userspace loop woken tens of microseconds after the deadline): the
 * departures it missed go out at once, up to tcp_pacing_catchup's worth, and the schedule goes on from
 * there; with no allowance the late wakeup sends one segment and the lost time is gone. */
static void test_pacing_late_timer_catches_up(void **state)
{
    (void)state;
    for (int allowance = 0; allowance <= 1; allowance++) {
        struct tf_conn f;
        setup(&f, allowance ? (const char *const[]){"tcp_pacing=1", "tcp_pacing_catchup=200us", NULL}
                            : (const char *const[]){"tcp_pacing=1", "tcp_pacing_catchup=0", NULL});
        brisk_sock *c = f.c;
        c->rtt.srtt_fp = TF_MS << 16; /* 29.2 MB/s: a segment every 52.260 us, as above */
        uint64_t gap = 1526ull * BRISK_NSEC_PER_SEC / 29200000;
        uint64_t t0 = TF_SEC;
        send_bytes(c, 10 * 1460, t0);
        TF_EXPECT(&f.t, t0, ACK, c->snd.iss + 1, 1001, 1460);
        TF_EXPECT_NONE(&f.t);
        /* The timer was due at t0 + gap; the loop runs 5.5 gaps after t0 (235 us late). */
        uint64_t late = t0 + 5 * gap + gap / 2;
        brisk_stack_poll(f.t.st, late);
        tf_collect(&f.t);
        if (!allowance) {
            TF_EXPECT(&f.t, late, ACK, c->snd.iss + 1 + 1460, 1001, 1460);
            TF_EXPECT_NONE(&f.t);
            assert_int_equal(c->pace.next, late + gap); /* the schedule restarts from the late wakeup */
        } else {
            /* The schedule resumes from late - 200 us = t0 + 1.67 gaps (the missed departure at t0 + gap lies
             * beyond the allowance): departures at 1.67, 2.67, 3.67 and 4.67 gaps are all due by 5.5. */
            for (uint32_t i = 1; i <= 4; i++)
                TF_EXPECT(&f.t, late, ACK, c->snd.iss + 1 + i * 1460, 1001, 1460);
            TF_EXPECT_NONE(&f.t);
            assert_true(c->pace.next > late && c->pace.next <= late + gap);
        }
        tf_conn_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charge_and_release),
        cmocka_unit_test(test_budget_rules),
        cmocka_unit_test(test_throttle_and_resume_via_poll),
        cmocka_unit_test(test_orphaning_device),
        cmocka_unit_test(test_one_segment_shortcut),
        cmocka_unit_test(test_zombie_until_last_completion),
        cmocka_unit_test(test_autocork_holds_tail_until_completion),
        cmocka_unit_test(test_autocork_first_packet),
        cmocka_unit_test(test_resume_uses_current_nagle_mode),
        cmocka_unit_test(test_pacing_late_timer_catches_up),
        cmocka_unit_test(test_tso_size_goal),
        cmocka_unit_test(test_pacing_departure_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
