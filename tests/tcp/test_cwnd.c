/*
 * test_cwnd.c — the congestion window as the wire shows it, profile by profile, where brisk's own profile and
 * the linux-* profiles deliberately differ (docs/timers.md, "Where the linux-* profiles differ").
 *
 * Slow start and stretch ACKs: brisk credits at most RFC 3465's L = 2 segments per ACK; Linux's
 * tcp_slow_start counts every segment an ACK covers (tcp_abc_limit=0 in the linux-* profiles), so an ACK of
 * four segments releases eight new ones there and six here. Restart after idle (tcp_slow_start_after_idle):
 * after an idle period longer than the RTO, brisk restarts at min(IW, cwnd) (RFC 5681 §4.1); Linux's
 * tcp_cwnd_restart halves cwnd once per RTO of idle time, down to that restart window; both measure the idle
 * time from the last data sent, and both also check when a window update lets waiting data go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stretch_acks_linux_profiles),
        cmocka_unit_test(test_stretch_acks_brisk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
