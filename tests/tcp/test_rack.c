/*
 * test_rack.c — SACK-based recovery with forged ACKs: RACK marks a hole lost one reordering window after a
 * later segment is SACKed (RFC 8985 §6) — at once with three SACKed before reordering is seen (DupThresh) —
 * tolerates reordering inside the window, detects a lost
 * retransmission without an RTO, widens its window on a D-SACK; PRR paces the recovery round (RFC 6937); the
 * scoreboard's pipe (RFC 6675) and retransmission order. Sources: src/tcp/sack.c, rack.c, prr.c, recovery.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK BRISK_TCP_ACK
#define PSH BRISK_TCP_PSH
#define M   1460u

/* Accepted at 0, handshake RTT 10 ms (SRTT = min RTT = 10 ms: reordering window 2.5 ms), SACK on, no TS. */
static void setup(struct tf_conn *f, const char *const *sets)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    /* NewReno: the windows asserted below are RFC 5681's arithmetic (CUBIC is tests/unit/test_cc_cubic.c). */
    tf_conn_open(f, sets, (const char *const[]){"tcp_congestion=newreno", NULL}, &o, 10 * TF_MS);
}

static void finish(struct tf_conn *f)
{
    tf_conn_close(f);
}

/* Segment k (0-based) of the stream. */
static uint32_t seg(const struct tf_conn *f, uint32_t k)
{
    return f->d + k * M;
}

/* Ten segments out; the first is lost, `sacked` of the others (at most two: below the duplicate-ACK
 * threshold) are SACKed from T on, 10 us apart: the last SACK (at T + 10 us) measures RACK.rtt = T + 10 us -
 * t1, so the hole's deadline is t1 + that + 2.5 ms. */
#define REO_AT(T) ((T) + 10 * TF_US + 2500 * TF_US)
static void lose_first_of_ten(struct tf_conn *f, uint64_t t1, uint64_t T, uint32_t extra_segs)
{
    tf_send_pattern(f->c, 0, (10 + extra_segs) * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f->t);
    TF_EXPECT_NONE(&f->t);
    for (uint32_t k = 1; k < 3; k++)
        tf_peer_sack(&f->p, seg(f, 0), seg(f, 1), seg(f, k + 1), T + (k - 1) * 10 * TF_US);
}

/* The hole is lost one round trip (RACK.rtt, measured by the latest SACKed segment) plus the reordering
 * window (min RTT / 4 = 2.5 ms) after it was sent: the REO deadline fires and the retransmission goes — with
 * two segments SACKed, below the duplicate-ACK threshold, and no RTO. */
static void test_hole_lost_after_reordering_window(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    lose_first_of_ten(&f, t1, T, 0);
    /* Two SACKs: still within the window (the window lets two new segments go: pipe is 8 of 10). */
    while (tf_pending(&f.t))
        assert_true(brisk_seq_geq(tf_take(&f.t)->h.seq, seg(&f, 10)));
    assert_int_equal(f.c->sb.sacked, 2 * M);
    assert_int_equal(f.c->timer.rtx_kind, TCP_RTX_REO);
    tf_run(&f.t, REO_AT(T) - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, REO_AT(T));
    TF_EXPECT(&f.t, REO_AT(T), ACK, seg(&f, 0), 1001, M);
    TF_EXPECT_NONE(&f.t);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.fast_retransmits, 1);
    assert_int_equal(i.rto_count, 0);
    assert_int_equal(tcp_pipe(f.c), tcp_flight(f.c) - 2 * M); /* lost, retransmitted: only the SACKed out */
    finish(&f);
}

/* The duplicate-ACK threshold (RFC 8985 §6.2 step 4): before any reordering has been seen, three SACKed
 * segments make the reordering window zero, so the hole in front of them is lost at that ACK — a burst loss
 * starts its repair at once instead of a quarter of a round trip later. */
static void test_dupthresh_before_reordering(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 10 * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, 3), T);
    TF_EXPECT_NONE(&f.t); /* two: the window holds */
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, 4), T + 10 * TF_US);
    TF_EXPECT(&f.t, T + 10 * TF_US, ACK, seg(&f, 0), 1001, M);
    assert_int_equal(tf_info(f.c).fast_retransmits, 1);
    assert_int_equal(tf_info(f.c).ssthresh, 5 * M); /* NewReno: flight / 2 */
    /* Its ACK covers everything: recovery ends at ssthresh (RFC 6937). */
    tf_peer_sack(&f.p, seg(&f, 10), 0, 0, T + 10 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.cwnd, 5 * M);
    assert_int_equal(i.rto_count, 0);
    assert_int_equal(f.c->sb.len, 0);
    finish(&f);
}

/* Once the path has shown reordering — a hole filled by its original transmission below SACKed data (RFC 8985
 * §6.2 step 3) — the window stays min RTT / 4 however many segments are SACKed: nine SACKs, and the hole
 * waits for its deadline. */
static void test_reordering_seen_keeps_window(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_pacing=0", NULL});
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 2 * M, t1);
    tf_take(&f.t);
    tf_take(&f.t);
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, 2), T); /* segment 1 first, */
    tf_peer_sack(&f.p, seg(&f, 2), 0, 0, T + 100 * TF_US);     /* then segment 0, late: reordering */
    assert_int_equal(tf_info(f.c).retransmits, 0);
    uint64_t t2 = T + 1 * TF_MS, T2 = t2 + 10 * TF_MS;
    tf_send_pattern(f.c, 2 * M, 10 * M, t2);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    TF_EXPECT_NONE(&f.t);
    for (uint32_t k = 1; k < 10; k++)
        tf_peer_sack(&f.p, seg(&f, 2), seg(&f, 3), seg(&f, 3 + k), T2 + (k - 1) * 10 * TF_US);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(f.c->timer.rtx_kind, TCP_RTX_REO);
    uint64_t at = T2 + 80 * TF_US + 2500 * TF_US;
    tf_run(&f.t, at - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, at);
    TF_EXPECT(&f.t, at, ACK, seg(&f, 2), 1001, M);
    finish(&f);
}

/* Reordering inside the window: the "missing" segment arrives 1 ms after the SACKs; nothing is resent. */
static void test_reordering_within_window_not_retransmitted(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    lose_first_of_ten(&f, t1, T, 0);
    tf_peer_sack(&f.p, seg(&f, 10), 0, 0, T + 1 * TF_MS);
    tf_run(&f.t, T + 300 * TF_MS);
    while (tf_pending(&f.t)) /* nothing but (possibly) pure ACKs: no data at all */
        assert_int_equal(tf_take(&f.t)->h.payload_len, 0);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.retransmits, 0);
    assert_int_equal(i.fast_retransmits, 0);
    assert_int_equal(i.cwnd, 10 * M + 2 * M); /* slow start grew (2 MSS per ACK at most): no reduction */
    finish(&f);
}

/* A lost retransmission: a segment sent after it is SACKed, and RACK marks the retransmission lost at once
 * (in recovery, before any reordering was seen, the window is zero) and sends it again — long before the
 * 200 ms RTO, which is all NewReno would have. */
static void test_lost_retransmission_detected(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_pacing=0", NULL});
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    lose_first_of_ten(&f, t1, T, 20); /* twenty more queued: the SACKs free the window for segments 10-18 */
    uint32_t hi = 0;
    while (tf_pending(&f.t)) {
        struct tf_seg *x = tf_take(&f.t);
        assert_true(brisk_seq_geq(x->h.seq, seg(&f, 10))); /* new data only, so far */
        hi = x->h.seq + x->h.payload_len;
    }
    uint64_t R1 = REO_AT(T);
    tf_run(&f.t, R1);
    TF_EXPECT(&f.t, R1, ACK, seg(&f, 0), 1001, M); /* the retransmission, which will be lost */
    /* Everything sent before it arrives: SACK 1 .. hi. PRR releases new data behind it. */
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), hi, R1 + 10 * TF_MS);
    uint32_t first_new = 0;
    while (tf_pending(&f.t)) {
        struct tf_seg *x = tf_take(&f.t);
        if (!first_new && x->h.payload_len)
            first_new = x->h.seq;
    }
    assert_int_equal(first_new, hi);
    /* That segment, sent 10 ms after the retransmission, is SACKed: the retransmission is lost. */
    uint64_t T2 = R1 + 20 * TF_MS;
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), hi + M, T2);
    TF_EXPECT(&f.t, T2, ACK, seg(&f, 0), 1001, M);
    assert_int_equal(tf_info(f.c).rto_count, 0);
    finish(&f);
}

/* A D-SACK for a retransmission shows the path reorders: the window grows by min RTT / 4, once per round
 * trip that brings D-SACKs (RFC 8985 §6.2 step 4, RACK.dsack_round): a second D-SACK before snd.una passes
 * what was sent at the first is the same evidence, and a D-SACK after it widens the window again. */
static void test_dsack_widens_window(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 20 * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    /* Segments 0 and 1 held back, 2-4 SACKed: both lost (three SACKed), both retransmitted as PRR allows. */
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 2), seg(&f, 5), T);
    TF_EXPECT(&f.t, T, ACK, seg(&f, 0), 1001, M);
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 2), seg(&f, 8), T + 10 * TF_US); /* PRR: room for the next */
    TF_EXPECT(&f.t, T + 10 * TF_US, ACK, seg(&f, 1), 1001, M);
    assert_int_equal(f.c->rack.reo_mult, 0); /* 0 stands for 1 */
    assert_false(f.c->rack.reord);
    /* The originals arrive after all (ACK of the ten), then the copies, each reported by a D-SACK. */
    tf_peer_sack(&f.p, seg(&f, 10), 0, 0, T + 3 * TF_MS);
    while (tf_pending(&f.t))
        tf_take(&f.t);
    tf_peer_sack(&f.p, seg(&f, 10), seg(&f, 0), seg(&f, 1), T + 4 * TF_MS);
    assert_int_equal(f.c->rack.reo_mult, 2);
    assert_true(f.c->rack.reord);
    tf_peer_sack(&f.p, seg(&f, 10), seg(&f, 1), seg(&f, 2), T + 4 * TF_MS + 10 * TF_US);
    assert_int_equal(f.c->rack.reo_mult, 2); /* the same round trip */
    /* A round trip later (snd.una past snd.nxt of the first D-SACK), another D-SACK widens it again. */
    uint32_t una = f.c->snd.nxt;
    tf_peer_sack(&f.p, una, 0, 0, T + 20 * TF_MS);
    tf_peer_sack(&f.p, una, seg(&f, 0), seg(&f, 1), T + 21 * TF_MS);
    assert_int_equal(f.c->rack.reo_mult, 3);
    finish(&f);
}

/* PRR (RFC 6937 §3): while pipe is above ssthresh it sends ssthresh / RecoverFS of what is delivered — here
 * one segment per two SACKed (20 in flight, ssthresh 10), never two for one ACK; once pipe reaches ssthresh
 * the slow-start bound keeps it there, so the round ends with pipe = ssthresh exactly. */
static void test_prr_proportional(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_initial_cwnd=20", "tcp_pacing=0", NULL});
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 20 * M, t1);
    for (int k = 0; k < 20; k++)
        tf_take(&f.t);
    TF_EXPECT_NONE(&f.t);
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, 2), T);
    tf_run(&f.t, T + 2500 * TF_US);
    TF_EXPECT(&f.t, T + 2500 * TF_US, ACK, seg(&f, 0), 1001, M);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).ssthresh, 10 * M);
    tf_send_pattern(f.c, 20 * M, 20 * M, T + 2600 * TF_US); /* more data: PRR, not the application, limits */
    TF_EXPECT_NONE(&f.t);
    int sent = 0, max_burst = 0;
    for (uint32_t k = 2; k < 20; k++) {
        tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, k + 1), T + 3 * TF_MS + k * 10 * TF_US);
        int burst = 0;
        while (tf_pending(&f.t)) {
            struct tf_seg *x = tf_take(&f.t);
            if (x->h.payload_len) {
                assert_int_equal(x->h.seq, seg(&f, 20 + (uint32_t)sent)); /* new data, in order */
                sent++;
                burst++;
            }
        }
        if (burst > max_burst)
            max_burst = burst;
    }
    assert_int_equal(sent, 9);
    assert_int_equal(max_burst, 1);
    assert_int_equal(tcp_pipe(f.c), 10 * M);
    finish(&f);
}

/* Without SACK the scoreboard stays empty and recovery is NewReno's (tests/tcp/test_timers.c). */
static void test_no_scoreboard_without_sack(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, (const char *const[]){"tcp_sack=0", NULL});
    tf_send_pattern(f.c, 0, 4 * M, TF_SEC);
    assert_int_equal(f.c->sb.len, 0);
    assert_null(f.c->sb.r);
    finish(&f);
}

/* RACK's reordering timer, per profile, for a hole in front of one SACKed segment and in front of three.
 * Both: the window is zero once three segments are SACKed and no reordering has been seen (RFC 8985 §6.2
 * step 4's duplicate-ACK threshold; Linux's tcp_rack_reo_wnd), so the hole is lost at once. With one SACKed:
 * brisk (RFC 8985 §6.2-6.3) waits min RTT / 4 = 2.5 ms and fires at the first deadline; Linux 6.x waits for
 * the last deadline plus 2 ms, on the 1 ms tick (tcp_rack_mark_lost), and when it fires the RTO is re-armed
 * from the oldest segment's transmission (tcp_rack_reo_timeout, tcp_rearm_rto). */
static void reo_timer(const char *profile, uint32_t sacked)
{
    int lx = strncmp(profile, "linux-", 6) == 0;
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    struct tf_conn f;
    setup(&f, (const char *const[]){p, NULL});
    uint64_t t1 = TF_SEC, T = t1 + 10 * TF_MS;
    tf_send_pattern(f.c, 0, 10 * M, t1);
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    /* RACK.rtt = 10 ms (the SACKed segments went with the hole), so the hole's deadline is T + window. */
    tf_peer_sack(&f.p, seg(&f, 0), seg(&f, 1), seg(&f, 1 + sacked), T);
    uint64_t at;
    if (sacked >= 3)
        at = T;
    else if (!lx)
        at = T + 2500 * TF_US;
    else
        at = T + 5 * TF_MS; /* 2.5 ms + 2 ms, rounded up to the tick */
    if (at > T) {
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(f.c->timer.rtx_kind, TCP_RTX_REO);
        tf_run(&f.t, at - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, at);
    }
    TF_EXPECT(&f.t, at, ACK, seg(&f, 0), 1001, M);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).fast_retransmits, 1);
    /* Linux: the RTO from the hole's retransmission (the oldest outstanding segment): 210 ms. brisk: the
     * recovery probe's deadline (tcp_recovery_probe, tlp.c), a PTO after the retransmission. */
    if (lx) {
        assert_int_equal(f.c->timer.rtx_kind, TCP_RTX_RTO);
        assert_int_equal(f.c->timer.rtx_deadline, at + 210 * TF_MS);
    } else {
        assert_int_equal(f.c->timer.rtx_kind, TCP_RTX_TLP);
        uint64_t srtt = brisk_rtt_srtt(&f.c->rtt), var = srtt + 4 * brisk_rtt_rttvar(&f.c->rtt);
        assert_int_equal(f.c->timer.rtx_deadline, at + (var > 2 * srtt ? var : 2 * srtt));
    }
    finish(&f);
}

static void test_reo_timer_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++) {
        if (strncmp(brisk_profile_name(i), "linux-", 6) != 0)
            continue;
        reo_timer(brisk_profile_name(i), 1);
        reo_timer(brisk_profile_name(i), 3);
    }
}

static void test_reo_timer_brisk(void **state)
{
    (void)state;
    reo_timer("brisk", 1);
    reo_timer("brisk", 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hole_lost_after_reordering_window),
        cmocka_unit_test(test_dupthresh_before_reordering),
        cmocka_unit_test(test_reordering_seen_keeps_window),
        cmocka_unit_test(test_reordering_within_window_not_retransmitted),
        cmocka_unit_test(test_lost_retransmission_detected),
        cmocka_unit_test(test_dsack_widens_window),
        cmocka_unit_test(test_prr_proportional),
        cmocka_unit_test(test_no_scoreboard_without_sack),
        cmocka_unit_test(test_reo_timer_linux_profiles),
        cmocka_unit_test(test_reo_timer_brisk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
