/*
 * test_cwnd.c — the congestion window as the wire shows it, profile by profile, where brisk's own profile and
 * the linux-* profiles deliberately differ (docs/timers.md, "Where the linux-* profiles differ").
 *
 * Slow start and stretch ACKs: brisk credits at most RFC 3465's L = 2 segments per ACK; Linux's
 * tcp_slow_start counts every segment an ACK covers (tcp_abc_limit=0 in the linux-* profiles), so an ACK of
 * four segments releases eight new ones there and six here. Restart after idle (tcp_slow_start_after_idle):
 * after an idle period longer than the RTO, brisk restarts at min(IW, cwnd) (RFC 5681 §4.1); Linux's
 * tcp_cwnd_restart halves cwnd once per RTO of idle time, down to that restart window; both measure the idle
 * time from the last data sent, and both also check when a window update lets waiting data go. Leaving slow
 * start on a rising RTT: Linux's CUBIC has the original HyStart, which sets ssthresh = cwnd as soon as a
 * round's minimum RTT is up by the delay threshold (tcp_cubic=linux in the linux-* profiles); brisk's has RFC
 * 9406's HyStart++, which slows down (Conservative Slow Start) and leaves ssthresh open for five rounds more.
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

#define M 1000u /* the peer's MSS: whole numbers of segments, as in Linux's packetdrill scripts */

/* A connection accepted at 0 under `profile`, MSS 1000 (no timestamps), SACK, handshake RTT 100 ms. */
static void setup(struct tf_conn *f, const char *profile, const char *const *more)
{
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    o.mss = M;
    tf_conn_open(f, (const char *const[]){p, NULL}, more, &o, 100 * TF_MS);
    assert_int_equal(tf_info(f->c).mss, M);
}

/* Takes `n` full segments sent at `at` from sequence number `seq`; returns the sequence number after them. */
static uint32_t expect_segments(struct tf_conn *f, uint64_t at, uint32_t seq, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        struct tf_seg *s = tf_take(&f->t);
        if (s->at != at || s->h.seq != seq || s->len != M) {
            tf_print_seg(s);
            fail_msg("segment %u of %u: expected seq %u len %u at %llu", k + 1, n, seq, M,
                     (unsigned long long)at);
        }
        seq += M;
    }
    return seq;
}

static int is_linux(const char *profile)
{
    return strncmp(profile, "linux-", 6) == 0;
}

/* The packetdrill script slow-start-ack-per-4pkt: IW10 of 30000 bytes, then ACKs of four segments. */
static void stretch_acks(const char *profile)
{
    struct tf_conn f;
    setup(&f, profile, NULL);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 30 * M, t1);
    uint32_t nxt = expect_segments(&f, t1, f.d, 10);
    TF_EXPECT_NONE(&f.t);
    /* Linux: cwnd 10 + 4 = 14 with 6 in flight, so 8 go; brisk: 10 + 2 (L = 2), 6 go. */
    uint64_t t2 = t1 + 110 * TF_MS;
    tf_peer_sack(&f.p, f.d + 4 * M, 0, 0, t2);
    unsigned grow = is_linux(profile) ? 4 : 2;
    assert_int_equal(tf_info(f.c).cwnd, (10 + grow) * M);
    nxt = expect_segments(&f, t2, nxt, 4 + grow);
    TF_EXPECT_NONE(&f.t);
    uint64_t t3 = t2 + 10 * TF_MS;
    tf_peer_sack(&f.p, f.d + 8 * M, 0, 0, t3);
    assert_int_equal(tf_info(f.c).cwnd, (10 + 2 * grow) * M);
    expect_segments(&f, t3, nxt, 4 + grow);
    TF_EXPECT_NONE(&f.t);
    tf_conn_close(&f);
}

static void test_stretch_acks_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (is_linux(brisk_profile_name(i)))
            stretch_acks(brisk_profile_name(i));
}

static void test_stretch_acks_brisk(void **state)
{
    (void)state;
    stretch_acks("brisk");
}

/* Grows cwnd by the ACKs of one write (the packetdrill script slow-start-after-idle: 26 segments, here as
 * many as the first ACK lets go after IW10): an ACK of the ten, then of the rest. Returns the time of the
 * last ACK, 100 ms after the last data went; cwnd is then 36 segments in Linux's profiles (every segment
 * counted), 14 in brisk's (L = 2 per ACK). The next byte to write is grown_end(). */
static uint64_t grow_window(struct tf_conn *f, const char *profile)
{
    uint64_t t1 = TF_SEC;
    unsigned burst = is_linux(profile) ? 16 : 12; /* what the first ACK lets go: all of the rest */
    tf_send_pattern(f->c, 0, (10 + burst) * M, t1);
    uint32_t nxt = expect_segments(f, t1, f->d, 10);
    uint64_t t2 = t1 + 100 * TF_MS;
    tf_peer_sack(&f->p, f->d + 10 * M, 0, 0, t2);
    nxt = expect_segments(f, t2, nxt, burst);
    TF_EXPECT_NONE(&f->t);
    uint64_t t3 = t2 + 100 * TF_MS;
    tf_peer_sack(&f->p, nxt, 0, 0, t3);
    assert_int_equal(tf_info(f->c).cwnd, (is_linux(profile) ? 36 : 14) * M);
    return t3;
}

/* After an idle period longer than the RTO the next write finds cwnd restarted. brisk (RFC 5681 §4.1): at
 * min(IW, cwnd) = 10 segments, however long the idle time; Linux (tcp_cwnd_restart): halved once per RTO
 * idle beyond the first, not below 10 — after 400 ms with a 300 ms RTO, 36 -> 18; after 2 s, 10. Shorter
 * than the RTO: no restart in either. The RTO is 300 ms in Linux's profiles (SRTT + rto_min), 282 ms in
 * brisk's (RFC 6298 with RFC 7323 appendix G gains over three 100 ms samples). */
static uint32_t grown_end(const char *profile)
{
    return (is_linux(profile) ? 26 : 22) * M;
}

static void idle_restart(const char *profile, uint64_t idle, unsigned expect_segs)
{
    struct tf_conn f;
    setup(&f, profile, NULL);
    uint64_t t = grow_window(&f, profile);
    uint64_t rto = tf_info(f.c).rto_ns;
    if (is_linux(profile))
        assert_int_equal(rto, 300 * TF_MS);
    else
        assert_true(rto > 250 * TF_MS && rto < 300 * TF_MS);
    assert_true(idle < rto ? expect_segs > 10 : expect_segs <= 18);
    /* Idle is measured from the last data sent (Linux's lsndtime): the second burst, 100 ms before. */
    uint64_t at = t - 100 * TF_MS + idle;
    tf_send_pattern(f.c, grown_end(profile), 40 * M, at);
    expect_segments(&f, at, f.d + grown_end(profile), expect_segs);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).cwnd, expect_segs * M);
    tf_conn_close(&f);
}

static void test_idle_restart_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++) {
        const char *p = brisk_profile_name(i);
        if (!is_linux(p))
            continue;
        idle_restart(p, 250 * TF_MS, 36);  /* shorter than the RTO: the window stands */
        idle_restart(p, 400 * TF_MS, 18);  /* one RTO and a bit: halved once */
        idle_restart(p, 700 * TF_MS, 10);  /* halved twice: 9, but not below IW */
        idle_restart(p, 2000 * TF_MS, 10); /* long idle: the restart window */
    }
}

static void test_idle_restart_brisk(void **state)
{
    (void)state;
    idle_restart("brisk", 200 * TF_MS, 14); /* shorter than the RTO: the window stands */
    idle_restart("brisk", 400 * TF_MS, 10); /* RFC 5681: min(IW, cwnd) at once */
    idle_restart("brisk", 2000 * TF_MS, 10);
}

/* The same without the setting: cwnd kept (tcp_slow_start_after_idle=0, Linux's sysctl at 0). */
static void test_idle_restart_off(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, "linux-6.x", (const char *const[]){"tcp_slow_start_after_idle=0", NULL});
    uint64_t t = grow_window(&f, "linux-6.x");
    tf_send_pattern(f.c, 26 * M, 40 * M, t + 2 * TF_SEC);
    expect_segments(&f, t + 2 * TF_SEC, f.d + 26 * M, 36);
    TF_EXPECT_NONE(&f.t);
    tf_conn_close(&f);
}

/* Data that waited behind a zero window: when the window opens after an idle period longer than the RTO,
 * cwnd restarts before the data goes (Linux's tcp_ack_update_window; RFC 5681 §4.1 asks the same of any
 * idle sender). The window probes carry no data, so the idle time runs from the last data sent. Every
 * profile ends at the restart window of 10 segments (Linux's halvings reach it after 3 s). */
static void window_update_restart(const char *profile)
{
    struct tf_conn f;
    setup(&f, profile, NULL);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 26 * M, t1);
    uint32_t nxt = expect_segments(&f, t1, f.d, 10);
    uint64_t t2 = t1 + 100 * TF_MS;
    tf_peer_sack(&f.p, f.d + 10 * M, 0, 0, t2);
    nxt = expect_segments(&f, t2, nxt, is_linux(profile) ? 16 : 12);
    /* Everything acknowledged, window closed; 20 more segments wait. */
    uint64_t t3 = t2 + 100 * TF_MS;
    f.p.win = 0;
    tf_peer_sack(&f.p, nxt, 0, 0, t3);
    tf_send_pattern(f.c, (nxt - f.d), 20 * M, t3);
    TF_EXPECT_NONE(&f.t);
    /* Window probes (no data) until the window opens 3 s later. */
    uint64_t t4 = t3 + 3 * TF_SEC;
    tf_run(&f.t, t4 - 1);
    while (tf_pending(&f.t))
        assert_int_equal(tf_take(&f.t)->len, 0);
    f.p.win = 65535;
    tf_peer_sack(&f.p, nxt, 0, 0, t4);
    expect_segments(&f, t4, nxt, 10);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).cwnd, 10 * M);
    tf_conn_close(&f);
}

static void test_window_update_restart(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        window_update_restart(brisk_profile_name(i));
}

/* The packetdrill script cc/hystart-delay.pkt: IW10 of 100 KB; the first round's RTT is 100 ms, the second's
 * 120 ms, ACKs of two segments 5 ms apart. Linux's HyStart: at the ninth sample of the second round ssthresh
 * = cwnd = 36 segments (and the next ACKs release only what they acknowledge). brisk's HyStart++ enters CSS
 * at the eighth sample and keeps ssthresh open. Returns nothing: cwnd and ssthresh are asserted. */
static void hystart_delay(const char *profile)
{
    struct tf_conn f;
    setup(&f, profile, (const char *const[]){"tcp_pacing=0", NULL});
    uint64_t t = TF_SEC;
    tf_send_pattern(f.c, 0, 100 * M, t);
    uint32_t una = f.d;
    expect_segments(&f, t, f.d, 10);
    for (unsigned round = 0; round < 2; round++) {
        t += (round ? 120 : 100) * TF_MS;
        for (unsigned i = 0; i < (round ? 10u : 5u); i++, t += 5 * TF_MS) {
            una += 2 * M;
            tf_peer_sack(&f.p, una, 0, 0, t);
            unsigned sent = 0;
            while (tf_pending(&f.t)) {
                tf_take(&f.t);
                sent++;
            }
            struct brisk_conn_info ci = tf_info(f.c);
            if (round == 0 || i < 7) {
                assert_int_equal(ci.ssthresh, UINT32_MAX);
                assert_int_equal(sent, 4);
            } else if (is_linux(profile)) {
                /* The ninth ACK: found; from there CUBIC's first epoch barely grows (at most 1/20 a round).
                 */
                assert_int_equal(ci.ssthresh, i == 7 ? UINT32_MAX : 36 * M);
                assert_int_equal(ci.cwnd, 36 * M);
                assert_int_equal(sent, i == 7 ? 4 : 2);
            } else {
                /* CSS: a quarter of 2 SMSS per ACK, ssthresh still open. */
                assert_int_equal(ci.ssthresh, UINT32_MAX);
                assert_int_equal(ci.cwnd, 34 * M + (i - 6) * M / 2);
            }
        }
        t -= 5 * TF_MS;
    }
    tf_conn_close(&f);
}

static void test_hystart_delay_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (is_linux(brisk_profile_name(i)))
            hystart_delay(brisk_profile_name(i));
}

static void test_hystart_delay_brisk(void **state)
{
    (void)state;
    hystart_delay("brisk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stretch_acks_linux_profiles),
        cmocka_unit_test(test_stretch_acks_brisk),
        cmocka_unit_test(test_idle_restart_linux_profiles),
        cmocka_unit_test(test_idle_restart_brisk),
        cmocka_unit_test(test_idle_restart_off),
        cmocka_unit_test(test_window_update_restart),
        cmocka_unit_test(test_hystart_delay_linux_profiles),
        cmocka_unit_test(test_hystart_delay_brisk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
