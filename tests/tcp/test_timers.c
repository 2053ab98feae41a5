/*
 * test_timers.c — retransmission and keepalive timing, and loss recovery.
 *
 * RTO (RFC 6298): the value after the handshake's sample and after data samples (SRTT + 4 RTTVAR, at least
 * tcp_rto_min; Linux's SRTT + max(4 mdev, rto_min) in the linux-* profiles), restart on new ACKs (§5.3),
 * exponential backoff (§5.5), go-back to SND.UNA with cwnd at one segment (RFC 5681 §3.1) and the abort with
 * BRISK_ERR_TIMEDOUT after tcp_retries2 expiries. Fast retransmit on the third duplicate ACK and NewReno
 * recovery (RFC 5681 §3.2, RFC 6582), for many initial sequence numbers. Keepalive (RFC 1122 §4.2.3.6):
 * probes with SEG.SEQ = SND.NXT - 1 after KEEPIDLE, then every KEEPINTVL, abort after KEEPCNT unanswered.
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

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define RST BRISK_TCP_RST
#define FIN BRISK_TCP_FIN
#define PSH BRISK_TCP_PSH

struct fix {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    struct tf_events ev;
    uint32_t d; /* our first data byte */
};

/* A connection accepted at 0 from a peer without timestamps (MSS 1460), handshake RTT `rtt`. */
/* These tests are about the RTO alone: tail loss probes (tests/tcp/test_tlp.c) would go first. */
static const char *const no_tlp[] = {"tcp_tlp=0", NULL};

/* setup() with or without timestamps (RFC 7323) on the peer's side. */
static void setup_ts(struct fix *f, const char *const *sets, uint64_t rtt, int ts)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    /* NewReno: the windows asserted below are RFC 5681's arithmetic (CUBIC is tests/unit/test_cc_cubic.c). */
    assert_int_equal(brisk_settings_set(&f->t.st->net.s, "tcp_congestion=newreno"), BRISK_OK);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = (uint8_t)ts;
    f->c = tf_open_passive(&f->p, f->l, &o, 0, rtt);
    brisk_sock_set_callback(f->c, tf_events_cb, &f->ev);
    f->d = f->p.l_iss + 1;
}

static void setup(struct fix *f, const char *const *sets, uint64_t rtt)
{
    setup_ts(f, sets, rtt, 0);
}

static void finish(struct fix *f)
{
    if (f->c)
        brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(f->t.st->tcp->nsocks, 0);
    tf_free(&f->t);
}

static void send_pattern(brisk_sock *c, uint64_t off, size_t len, uint64_t now)
{
    uint8_t buf[16384];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, off);
    assert_int_equal(brisk_send(c, buf, len, 0, now), (int64_t)len);
}

static void test_rto_backoff_and_abort(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_retries2=3", "tcp_tlp=0", NULL}, 100 * TF_MS);
    /* The handshake's sample: SRTT 100 ms, RTTVAR 50 ms, RTO = 100 + 4 x 50 = 300 ms (RFC 6298 §2.2). */
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.srtt_ns, 100 * TF_MS);
    assert_int_equal(i.rttvar_ns, 50 * TF_MS);
    assert_int_equal(i.rto_ns, 300 * TF_MS);
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 1000, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 1000);
    /* Retransmissions at RTO, doubling: +300, +600, +1200 ms; each the same bytes. */
    uint64_t at = t1;
    for (int k = 0; k < 3; k++) {
        at += (300 * TF_MS) << k;
        tf_run(&f.t, at - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, at);
        struct tf_seg *s = TF_EXPECT(&f.t, at, ACK | PSH, f.d, 1001, 1000);
        assert_true(tf_payload_is(s, 0));
        assert_int_equal(tf_info(f.c).rto_ns, (600 * TF_MS) << k);
        assert_int_equal(tf_info(f.c).cwnd, 1460);
    }
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPTimeouts, 3);
    assert_int_equal(k.TcpRetransSegs, 3);
    /* The fourth expiry (+2400 ms) exceeds tcp_retries2 = 3: BRISK_ERR_TIMEDOUT, nothing sent. */
    at += 2400 * TF_MS;
    tf_run(&f.t, at - 1);
    assert_int_equal(f.ev.all, 0);
    tf_run(&f.t, at);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(f.ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(f.ev.at[5], at);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
    assert_int_equal(tf_counters(&f.t).TCPAbortOnTimeout, 1);
    uint8_t buf[10];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), at), BRISK_ERR_TIMEDOUT);
    tf_run(&f.t, at + 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* tcp_retries2 as Linux counts it (tcp_retries2_timed=1, the linux-* profiles): not the timeouts but the time
 * that many backoffs from tcp_rto_min would take, from the first retransmission (retransmits_timed_out with
 * tcp_model_timeout: 1.4 s for 2). On a 700 ms path the RTO is 2.1 s: brisk's count retransmits at +2.1 s and
 * +6.3 s and gives up at +14.7 s; Linux's clock gives up at the second expiry, +6.3 s, without retransmitting
 * (measured on 6.18). On a 100 ms path (RTO 300 ms) both end at the third expiry. Before the setting every
 * profile counted. */
static void test_retries2_timed(void **state)
{
    (void)state;
    for (int timed = 0; timed <= 1; timed++) {
        struct fix f;
        setup(
            &f,
            (const char *const[]){"tcp_retries2=2", "tcp_tlp=0", timed ? "tcp_retries2_timed=1" : NULL, NULL},
            700 * TF_MS);
        uint64_t rto = tf_info(f.c).rto_ns;
        assert_int_equal(rto, 2100 * TF_MS); /* 700 + 4 x 350 */
        uint64_t t1 = TF_SEC;
        send_pattern(f.c, 0, 100, t1);
        TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
        tf_run(&f.t, t1 + rto);
        TF_EXPECT(&f.t, t1 + rto, ACK | PSH, f.d, 1001, 100);
        uint64_t second = t1 + 3 * rto;
        tf_run(&f.t, second);
        if (timed) {
            TF_EXPECT_NONE(&f.t);
            assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
            assert_int_equal(f.ev.at[5], second);
        } else {
            TF_EXPECT(&f.t, second, ACK | PSH, f.d, 1001, 100);
            tf_run(&f.t, t1 + 7 * rto - 1);
            assert_int_equal(f.ev.all, 0);
            tf_run(&f.t, t1 + 7 * rto);
            TF_EXPECT_NONE(&f.t);
            assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
        }
        finish(&f);
    }
    /* A 100 ms path: RTO 300 ms, retransmissions at +300, +900 ms; the third expiry (+2100 ms) ends it both
     * ways (1.8 s since the first retransmission, past 1.4 s; and past two timeouts). */
    for (int timed = 0; timed <= 1; timed++) {
        struct fix f;
        setup(
            &f,
            (const char *const[]){"tcp_retries2=2", "tcp_tlp=0", timed ? "tcp_retries2_timed=1" : NULL, NULL},
            100 * TF_MS);
        uint64_t t1 = TF_SEC;
        send_pattern(f.c, 0, 100, t1);
        TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
        tf_run(&f.t, t1 + 900 * TF_MS);
        TF_EXPECT(&f.t, t1 + 300 * TF_MS, ACK | PSH, f.d, 1001, 100);
        TF_EXPECT(&f.t, t1 + 900 * TF_MS, ACK | PSH, f.d, 1001, 100);
        tf_run(&f.t, t1 + 2100 * TF_MS - 1);
        assert_int_equal(f.ev.all, 0);
        tf_run(&f.t, t1 + 2100 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
        finish(&f);
    }
}

static void test_rto_min_and_restart_on_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, no_tlp, 2 * TF_MS);
    /* A 2 ms path: SRTT + 4 RTTVAR = 6 ms, raised to tcp_rto_min (200 ms). */
    assert_int_equal(tf_info(f.c).rto_ns, 200 * TF_MS);
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 2920, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1001, 1460);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d + 1460, 1001, 1460);
    /* The first segment's ACK 50 ms later restarts the timer for the rest (RFC 6298 §5.3). */
    f.p.ack = f.d + 1460;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 50 * TF_MS);
    tf_run(&f.t, t1 + 250 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + 250 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&f.t, t1 + 250 * TF_MS, ACK | PSH, f.d + 1460, 1001, 1460);
    assert_true(tf_payload_is(s, 1460));
    /* Everything acknowledged: no timer. */
    f.p.ack = f.d + 2920;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 260 * TF_MS);
    tf_run(&f.t, t1 + 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* RFC 6298 §2.3 with the handshake's sample (R = 100 ms) followed by one of 50 ms. */
static void test_rto_after_data_sample(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, no_tlp, 100 * TF_MS);
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 1000, t1);
    tf_take(&f.t);
    f.p.ack = f.d + 1000;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 50 * TF_MS);
    /* RTTVAR = 3/4 x 50 + 1/4 x |100 - 50| = 50 ms; SRTT = 7/8 x 100 + 1/8 x 50 = 93.75 ms; RTO = 293.75. */
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.srtt_ns, 93750 * TF_US);
    assert_int_equal(i.rttvar_ns, 50 * TF_MS);
    assert_int_equal(i.rto_ns, 293750 * TF_US);
    uint64_t t2 = 2 * TF_SEC;
    send_pattern(f.c, 1000, 500, t2);
    TF_EXPECT(&f.t, t2, ACK | PSH, f.d + 1000, 1001, 500);
    tf_run(&f.t, t2 + 293750 * TF_US - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t2 + 293750 * TF_US);
    TF_EXPECT(&f.t, t2 + 293750 * TF_US, ACK | PSH, f.d + 1000, 1001, 500);
    /* Karn: the ACK of a retransmitted segment gives no sample; the backoff stays until one does. */
    f.p.ack = f.d + 1500;
    tf_peer_send(&f.p, ACK, NULL, 0, t2 + 400 * TF_MS);
    i = tf_info(f.c);
    assert_int_equal(i.srtt_ns, 93750 * TF_US);
    finish(&f);
}

/* The RTO a steady 100 ms path gets, per profile: brisk's RFC 6298 estimator decays RTTVAR with every sample
 * (after a data sample of 100 ms: 100 + 4 x 37.5 = 250 ms); Linux's keeps SRTT + max(4 mdev, rto_min) per
 * round trip (tcp_rtt_estimator's mdev_max / rttvar_us): 100 + 200 = 300 ms. The linux-* profiles fire at
 * Linux's time, 50 ms after brisk's, and back off from there. */
static void rto_on_steady_path(const char *profile, uint64_t rto)
{
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    struct fix f;
    setup(&f, (const char *const[]){p, "tcp_tlp=0", NULL}, 100 * TF_MS);
    assert_int_equal(tf_info(f.c).rto_ns, 300 * TF_MS); /* the first sample: the same in both (3 R) */
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 1000, t1);
    tf_take(&f.t);
    f.p.ack = f.d + 1000;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 100 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.srtt_ns, 100 * TF_MS);
    assert_int_equal(i.rttvar_ns, 37500 * TF_US); /* RFC 6298's RTTVAR; Linux's mdev: the same numbers */
    assert_int_equal(i.rto_ns, rto);
    uint64_t t2 = 2 * TF_SEC;
    send_pattern(f.c, 1000, 1000, t2);
    TF_EXPECT(&f.t, t2, ACK | PSH, f.d + 1000, 1001, 1000);
    tf_run(&f.t, t2 + rto - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t2 + rto);
    TF_EXPECT(&f.t, t2 + rto, ACK | PSH, f.d + 1000, 1001, 1000);
    tf_run(&f.t, t2 + 3 * rto - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t2 + 3 * rto);
    TF_EXPECT(&f.t, t2 + 3 * rto, ACK | PSH, f.d + 1000, 1001, 1000);
    finish(&f);
}

static void test_rto_steady_path_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strncmp(brisk_profile_name(i), "linux-", 6) == 0)
            rto_on_steady_path(brisk_profile_name(i), 300 * TF_MS);
}

static void test_rto_steady_path_brisk(void **state)
{
    (void)state;
    rto_on_steady_path("brisk", 250 * TF_MS);
}

/* Sends 1000 bytes at `t1` and lets the RTO resend them three times (+200, +400, +800 ms, with TLP off and
 * the 200 ms floor); returns the TSval of each transmission in tsval[0..3]. */
static void lose_three_times(struct fix *f, uint64_t t1, uint32_t tsval[4])
{
    send_pattern(f->c, 0, 1000, t1);
    tsval[0] = TF_EXPECT(&f->t, t1, ACK | PSH, f->d, 1001, 1000)->h.opts.ts_val;
    uint64_t at = t1;
    for (int k = 0; k < 3; k++) {
        at += (200 * TF_MS) << k;
        tf_run(&f->t, at);
        tsval[k + 1] = TF_EXPECT(&f->t, at, ACK | PSH, f->d, 1001, 1000)->h.opts.ts_val;
    }
    assert_int_equal(tf_info(f->c).rto_ns, 1600 * TF_MS);
}

/* Only retransmitted data is acknowledged (Karn: no timed sample), but the ACK shows the path works again:
 * the backed-off RTO is reset (Linux does the same on a timestamp-validated ACK). Its echoed timestamp is a
 * round-trip sample only when it is the latest transmission's. An earlier copy's echo means that copy arrived
 * and its ACK was lost; the receiver keeps echoing it (TS.Recent is not updated by whole duplicates, RFC 7323
 * §5.3 R2), and "now - TSecr" is then the time since that copy, not a round trip. */
static void test_backoff_reset_by_timestamp_echo(void **state)
{
    (void)state;
    uint64_t t1 = TF_SEC, t_ack = t1 + 1400 * TF_MS + 5 * TF_MS;
    uint32_t tsval[4];
    for (int fresh = 0; fresh <= 1; fresh++) {
        struct fix f;
        setup_ts(&f, no_tlp, 10 * TF_MS, 1);
        struct brisk_conn_info before = tf_info(f.c);
        assert_int_equal(before.srtt_ns, 10 * TF_MS);
        lose_three_times(&f, t1, tsval);
        f.p.ack = f.d + 1000;
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK, t_ack);
        /* Stale: the first retransmission's timestamp (1.2 s ago); fresh: the last one's (5 ms ago). */
        h.opts.ts_ecr = fresh ? tsval[3] : tsval[1];
        tf_inject(&f.t, &h, NULL, 0, t_ack);
        struct brisk_conn_info i = tf_info(f.c);
        if (fresh) /* 7/8 x 10 ms + 1/8 x 5 ms */
            assert_int_equal(i.srtt_ns, 9375 * TF_US);
        else /* no sample: a 1.2 s one would have made SRTT 159 ms and the RTO over 1 s */
            assert_int_equal(i.srtt_ns, before.srtt_ns);
        assert_int_equal(i.rto_ns, 200 * TF_MS); /* the backoff is gone either way */
        finish(&f);
    }
}

/* After an RTO: cwnd one segment, ssthresh half the flight, go back to SND.UNA, slow start again. */
static void test_rto_go_back_n(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, no_tlp, 10 * TF_MS);
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 4 * 1460, t1);
    for (uint32_t k = 0; k < 4; k++)
        TF_EXPECT(&f.t, t1, k == 3 ? ACK | PSH : ACK, f.d + k * 1460, 1001, 1460);
    uint64_t rto = tf_info(f.c).rto_ns;
    assert_int_equal(rto, 200 * TF_MS);
    tf_run(&f.t, t1 + rto);
    TF_EXPECT(&f.t, t1 + rto, ACK, f.d, 1001, 1460); /* one segment: the loss window */
    TF_EXPECT_NONE(&f.t);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.cwnd, 1460);
    assert_int_equal(i.ssthresh, 2 * 1460); /* max(FlightSize / 2, 2 SMSS) = max(2920, 2920) */
    /* Its ACK: slow start (cwnd 2 segments), the next two go again. */
    f.p.ack = f.d + 1460;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + rto + 10 * TF_MS);
    TF_EXPECT(&f.t, t1 + rto + 10 * TF_MS, ACK, f.d + 1460, 1001, 1460);
    TF_EXPECT(&f.t, t1 + rto + 10 * TF_MS, ACK, f.d + 2920, 1001, 1460);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).cwnd, 2920);
    /* The receiver had the rest: one ACK covers everything, nothing more is resent. */
    f.p.ack = f.d + 4 * 1460;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + rto + 20 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).unacked, 0);
    assert_int_equal(tf_counters(&f.t).TcpRetransSegs, 3);
    finish(&f);
}

/* Fast retransmit and NewReno recovery (connections without SACK: with it, RACK and PRR recover — see
 * tests/tcp/test_rack.c), for connections whose ISS lies anywhere in sequence space. */
static void fast_retransmit_once(uint64_t seed, int *upper_half)
{
    char seedset[64];
    snprintf(seedset, sizeof(seedset), "seed=%llu", (unsigned long long)seed);
    struct fix f;
    setup(&f, (const char *const[]){seedset, "tcp_sack=0", NULL}, 10 * TF_MS);
    *upper_half = (f.d & 0x80000000u) != 0;
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 10 * m, t1); /* the initial window */
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    /* The first segment arrives, the second is lost: ACK of 1, then duplicates. */
    f.p.ack = f.d + m;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 10 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).cwnd, 11 * m);
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 11 * TF_MS);
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 12 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 13 * TF_MS);
    if (tf_pending(&f.t) == 0)
        fail_msg("seed %llu (ISS %u): no fast retransmit on the third duplicate ACK",
                 (unsigned long long)seed, f.p.l_iss);
    struct tf_seg *s = TF_EXPECT(&f.t, t1 + 13 * TF_MS, ACK, f.d + m, 1001, m);
    assert_true(tf_payload_is(s, m));
    TF_EXPECT_NONE(&f.t);
    /* RFC 5681 §3.2: ssthresh = max(FlightSize / 2, 2 SMSS) = 9 x 1460 / 2; cwnd = ssthresh + 3 SMSS. */
    uint32_t ssthresh = 9 * m / 2;
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.ssthresh, ssthresh);
    assert_int_equal(i.cwnd, ssthresh + 3 * m);
    assert_int_equal(tf_counters(&f.t).TCPFastRetrans, 1);
    /* More duplicates inflate cwnd by one SMSS each (step 4); no new data is queued, nothing is sent. */
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 14 * TF_MS);
    assert_int_equal(tf_info(f.c).cwnd, ssthresh + 4 * m);
    TF_EXPECT_NONE(&f.t);
    /* A partial ACK (segments 2-5, segment 6 also lost): retransmit 6 at once; cwnd deflates by the amount
     * acknowledged and grows by one SMSS (RFC 6582 §3.2 step 5). */
    f.p.ack = f.d + 5 * m;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 20 * TF_MS);
    s = TF_EXPECT(&f.t, t1 + 20 * TF_MS, ACK, f.d + 5 * m, 1001, m);
    assert_true(tf_payload_is(s, 5 * m));
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).cwnd, ssthresh + 4 * m - 4 * m + m);
    /* The full ACK (everything up to "recover"): recovery ends, cwnd = min(ssthresh, max(flight, SMSS) +
     * SMSS) (step 3, option 1). */
    f.p.ack = f.d + 10 * m;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 30 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    i = tf_info(f.c);
    assert_int_equal(i.cwnd, 2 * m);
    assert_int_equal(i.ssthresh, ssthresh);
    assert_int_equal(i.unacked, 0);
    assert_int_equal(i.fast_retransmits, 1);
    finish(&f);
}

static void test_fast_retransmit_newreno(void **state)
{
    (void)state;
    /* RFC 6582's "recover" starts at the ISS; a connection whose ISS is in the upper half of sequence space
     * must recover as well as one in the lower half. Try seeds until both halves were covered. */
    int seen[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 64 && !(seen[0] >= 2 && seen[1] >= 2); seed++) {
        int upper;
        fast_retransmit_once(seed, &upper);
        seen[upper]++;
    }
    assert_true(seen[0] >= 2 && seen[1] >= 2);
}

/* RFC 6582 §3.2 step 1 / §4.2: duplicate ACKs for data sent before an RTO do not start a fast retransmit. */
static void test_no_fast_retransmit_after_rto(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, no_tlp, 10 * TF_MS);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    send_pattern(f.c, 0, 6 * m, t1);
    for (int k = 0; k < 6; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, 1001, m);
    /* Three duplicates of the original ACK (the pre-RTO flight arriving): no fast retransmit. */
    for (int k = 0; k < 3; k++)
        tf_peer_send(&f.p, ACK, NULL, 0, t1 + 201 * TF_MS + (uint64_t)k * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPFastRetrans, 0);
    finish(&f);
}

static void test_keepalive(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, 10 * TF_MS);
    /* Idle 10 s, then probes every 2 s, 3 unanswered probes abort. Options set before enabling. */
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPIDLE, 10 * TF_SEC, TF_MS), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPINTVL, 2 * TF_SEC, TF_MS), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPCNT, 3, TF_MS), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPALIVE, 1, TF_MS), BRISK_OK);
    /* Input keeps it quiet: the last segment from the peer at 5 s. */
    tf_peer_send_data(&f.p, 10, 5 * TF_SEC);
    TF_EXPECT(&f.t, 5 * TF_SEC, ACK, f.d, 1011, 0);
    uint8_t buf[16];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), 5 * TF_SEC), 10);
    /* First probe at 5 + 10 s: SEG.SEQ = SND.NXT - 1, no data, ACK = RCV.NXT. */
    tf_run(&f.t, 15 * TF_SEC - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 15 * TF_SEC);
    TF_EXPECT(&f.t, 15 * TF_SEC, ACK, f.d - 1, 1011, 0);
    /* Answered: the idle period starts over from the answer. */
    tf_peer_send(&f.p, ACK, NULL, 0, 15 * TF_SEC + 10 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 25 * TF_SEC + 10 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 25 * TF_SEC + 10 * TF_MS);
    uint64_t p1 = 25 * TF_SEC + 10 * TF_MS;
    TF_EXPECT(&f.t, p1, ACK, f.d - 1, 1011, 0);
    /* Unanswered: every KEEPINTVL, then BRISK_ERR_TIMEDOUT after the third. */
    tf_run(&f.t, p1 + 2 * TF_SEC);
    TF_EXPECT(&f.t, p1 + 2 * TF_SEC, ACK, f.d - 1, 1011, 0);
    tf_run(&f.t, p1 + 4 * TF_SEC);
    TF_EXPECT(&f.t, p1 + 4 * TF_SEC, ACK, f.d - 1, 1011, 0);
    assert_int_equal(f.ev.all, BRISK_EV_READABLE);
    tf_run(&f.t, p1 + 6 * TF_SEC - 1);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    tf_run(&f.t, p1 + 6 * TF_SEC);
    /* The abort tells the peer, in case only the path back was lost (Linux tcp_keepalive_timer). */
    TF_EXPECT(&f.t, p1 + 6 * TF_SEC, RST | ACK, f.d, 1011, 0);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(f.ev.all, BRISK_EV_READABLE | BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
    struct brisk_counters k = tf_counters(&f.t);
    assert_int_equal(k.TCPKeepAlive, 4);
    assert_int_equal(k.TCPAbortOnTimeout, 1);
    finish(&f);
}

/* Keepalive as Linux's tcp_keepalive_timer runs it: no probe while data is outstanding (the RTO watches the
 * peer), the timer looking again a keepalive time later; and probes in FIN-WAIT-2 of a half-closed
 * connection, as in ESTABLISHED (SEG.SEQ = SND.NXT - 1, our FIN's sequence number). Before, brisk probed with
 * data in flight and never in FIN-WAIT-2 (Linux 6.18: tests/conformance/keepalive/data-outstanding.pkt,
 * fin-wait-2.pkt). */
static void test_keepalive_outstanding_and_fin_wait_2(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_tlp=0", NULL}, 10 * TF_MS);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPIDLE, TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPINTVL, TF_SEC, 0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPALIVE, 1, 100 * TF_MS), BRISK_OK);
    send_pattern(f.c, 0, 100, 100 * TF_MS);
    TF_EXPECT(&f.t, 100 * TF_MS, ACK | PSH, f.d, 1001, 100);
    /* RTO 200 ms: retransmissions at 0.3, 0.7, 1.5 s and nothing else, though the keepalive time passed. */
    tf_run(&f.t, 2 * TF_SEC);
    TF_EXPECT(&f.t, 300 * TF_MS, ACK | PSH, f.d, 1001, 100);
    TF_EXPECT(&f.t, 700 * TF_MS, ACK | PSH, f.d, 1001, 100);
    TF_EXPECT(&f.t, 1500 * TF_MS, ACK | PSH, f.d, 1001, 100);
    TF_EXPECT_NONE(&f.t);
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, 2 * TF_SEC);
    /* Half-close; the peer acknowledges our FIN: FIN-WAIT-2, probed a keepalive time after that ACK. */
    assert_int_equal(brisk_shutdown_write(f.c, 2 * TF_SEC + 100 * TF_MS), BRISK_OK);
    TF_EXPECT(&f.t, 2 * TF_SEC + 100 * TF_MS, FIN | ACK, f.d + 100, 1001, 0);
    f.p.ack = f.d + 101;
    tf_peer_send(&f.p, ACK, NULL, 0, 2 * TF_SEC + 110 * TF_MS);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_2);
    tf_run(&f.t, 3 * TF_SEC + 110 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 3 * TF_SEC + 110 * TF_MS);
    TF_EXPECT(&f.t, 3 * TF_SEC + 110 * TF_MS, ACK, f.d + 100, 1001, 0);
    /* Closing it now starts the orphan's FIN-WAIT-2 timeout in place of the keepalive. */
    brisk_close(f.c, 3 * TF_SEC + 200 * TF_MS);
    f.c = NULL;
    tf_run(&f.t, 3 * TF_SEC + 200 * TF_MS + 60 * TF_SEC);
    while (tf_pending(&f.t))
        assert_int_equal(tf_take(&f.t)->h.seq, f.d + 100); /* at most the probes before the close's timeout */
    assert_null(tcp_conn_lookup(&f.t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000)));
    finish(&f);
}

/* KEEPIDLE changed after keepalive was enabled takes effect at once (as Linux re-arms the timer). */
static void test_keepalive_idle_set_after_enable(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, 10 * TF_MS);
    uint64_t t0 = 10 * TF_MS; /* the handshake's last segment */
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPALIVE, 1, t0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPIDLE, 5 * TF_SEC, t0), BRISK_OK);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPINTVL, 1 * TF_SEC, t0), BRISK_OK);
    /* Idle since 10 ms: the first probe 5 s later, not after the 2 h default idle time. */
    tf_run(&f.t, 5 * TF_SEC + 10 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 5 * TF_SEC + 10 * TF_MS);
    TF_EXPECT(&f.t, 5 * TF_SEC + 10 * TF_MS, ACK, f.d - 1, 1001, 0);
    tf_run(&f.t, 6 * TF_SEC + 10 * TF_MS);
    TF_EXPECT(&f.t, 6 * TF_SEC + 10 * TF_MS, ACK, f.d - 1, 1001, 0);
    /* Switching keepalive off stops the probes. */
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_KEEPALIVE, 0, 6 * TF_SEC + 20 * TF_MS), BRISK_OK);
    tf_run(&f.t, 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    finish(&f);
}

/* Without SO_KEEPALIVE an idle connection stays silent forever (RFC 1122: keepalives off by default). */
static void test_no_keepalive_by_default(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL, 10 * TF_MS);
    tf_run(&f.t, 3 * 3600 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rto_backoff_and_abort),
        cmocka_unit_test(test_retries2_timed),
        cmocka_unit_test(test_rto_min_and_restart_on_ack),
        cmocka_unit_test(test_rto_after_data_sample),
        cmocka_unit_test(test_rto_steady_path_linux_profiles),
        cmocka_unit_test(test_rto_steady_path_brisk),
        cmocka_unit_test(test_backoff_reset_by_timestamp_echo),
        cmocka_unit_test(test_rto_go_back_n),
        cmocka_unit_test(test_fast_retransmit_newreno),
        cmocka_unit_test(test_no_fast_retransmit_after_rto),
        cmocka_unit_test(test_keepalive),
        cmocka_unit_test(test_keepalive_outstanding_and_fin_wait_2),
        cmocka_unit_test(test_keepalive_idle_set_after_enable),
        cmocka_unit_test(test_no_keepalive_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
