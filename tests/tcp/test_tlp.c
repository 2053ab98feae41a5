/*
 * test_tlp.c — tail loss probes (src/tcp/tlp.c, RFC 8985 §7): when the probe fires, what it sends, the RTO
 * behind it, and how the ACK that ends the episode is judged.
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
#define FIN BRISK_TCP_FIN

/* A connection accepted at 0, handshake RTT 10 ms (SRTT 10 ms, RTO 200 ms), SACK negotiated unless `sack` is
 * 0.
 */
static void setup(struct tf_conn *f, const char *const *sets, int sack)
{
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    o.sack_perm = (uint8_t)sack;
    /* NewReno: the windows asserted below are RFC 5681's arithmetic (CUBIC is tests/unit/test_cc_cubic.c). */
    tf_conn_open(f, sets, (const char *const[]){"tcp_congestion=newreno", NULL}, &o, 10 * TF_MS);
}

static void finish(struct tf_conn *f)
{
    tf_conn_close(f);
}

/* brisk's PTO after the handshake's one 10 ms sample: max(2 SRTT, SRTT + 4 RTTVAR) = 10 + 4 x 5 ms. */
#define PTO_BRISK (30 * TF_MS)

/* Four segments, no ACK: at the PTO the last one goes again; the RTO (200 ms) is armed behind it. */
static void test_probe_resends_last_segment_at_pto(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL, 1);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 4 * m, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK);
    TF_EXPECT(&f.t, t1 + PTO_BRISK, ACK | PSH, f.d + 3 * m, 1001, m); /* PSH as first sent */
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_counters(&f.t).TCPLossProbes, 1);
    assert_int_equal(tf_info(f.c).tlp_probes, 1);
    /* One probe per episode: next comes the RTO, 200 ms after the probe, from snd.una. */
    tf_run(&f.t, t1 + PTO_BRISK + 200 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + PTO_BRISK + 200 * TF_MS, ACK, f.d, 1001, m);
    assert_int_equal(tf_info(f.c).rto_count, 1);
    finish(&f);
}

/* With unsent data and room in the peer's window, the probe is new data (cwnd does not apply to it). */
static void test_probe_prefers_new_data(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL, 1);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 12 * m, t1); /* IW10: ten go, two wait for cwnd */
    for (int k = 0; k < 10; k++)
        tf_take(&f.t);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK);
    TF_EXPECT(&f.t, t1 + PTO_BRISK, ACK, f.d + 10 * m, 1001, m);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* A lone segment: the PTO allows for the peer's delayed ACK (2 x 10 ms + 200 ms), which is later than the
 * RTO, so the probe fires at the RTO's time — a probe, not a timeout: no backoff, no collapse. */
static void test_lone_segment_probe_at_rto_time(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL, 1);
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 100, t1);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
    tf_run(&f.t, t1 + 200 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + 200 * TF_MS);
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK | PSH, f.d, 1001, 100);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.tlp_probes, 1);
    assert_int_equal(i.rto_count, 0);
    assert_int_equal(i.rto_ns, 200 * TF_MS); /* not backed off */
    /* The probe repaired the loss: one reduction (NewReno: half the window, IW10), not one segment. */
    f.p.ack = f.d + 100;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 210 * TF_MS);
    i = tf_info(f.c);
    assert_int_equal(i.tlp_recoveries, 1);
    assert_int_equal(i.cwnd, 5 * 1460);
    assert_int_equal(tf_counters(&f.t).TCPLossProbeRecovery, 1);
    finish(&f);
}

/* The ACK covers the probe with no D-SACK: the original was lost and the probe repaired it. */
static void test_probe_repairs_tail_loss(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL, 1);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 8 * m, t1);
    for (int k = 0; k < 8; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK);
    TF_EXPECT(&f.t, t1 + PTO_BRISK, ACK | PSH, f.d + 7 * m, 1001, m);
    f.p.ack = f.d + 8 * m;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 30 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.tlp_recoveries, 1);
    assert_int_equal(i.cwnd, 5 * m); /* ssthresh = half the window before this ACK (IW10) */
    assert_int_equal(i.ssthresh, 5 * m);
    assert_int_equal(i.rto_count, 0);
    finish(&f);
}

/* A D-SACK for the probe: both copies arrived, nothing was lost, the window stays. */
static void test_dsack_for_probe_means_no_loss(void **state)
{
    (void)state;
    struct tf_conn f;
    setup(&f, NULL, 1);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 8 * m, t1);
    for (int k = 0; k < 8; k++)
        tf_take(&f.t);
    tf_run(&f.t, t1 + PTO_BRISK);
    TF_EXPECT(&f.t, t1 + PTO_BRISK, ACK | PSH, f.d + 7 * m, 1001, m);
    uint32_t cwnd = tf_info(f.c).cwnd;
    f.p.ack = f.d + 8 * m;
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, ACK, t1 + 30 * TF_MS);
    h.opts.nsack = 1;
    h.opts.sack[0].start = f.d + 7 * m;
    h.opts.sack[0].end = f.d + 8 * m;
    tf_inject(&f.t, &h, NULL, 0, t1 + 30 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.tlp_recoveries, 0);
    assert_true(i.cwnd >= cwnd);
    assert_false(f.c->timer.tlp_on);
    finish(&f);
}

/* The probe timeout, per profile. brisk (RFC 8985 §7.2, RFC 9002 §6.2.1): PTO = max(2 SRTT, SRTT + 4
 * RTTVAR), plus tcp_delack_max for a lone segment, never later than the RTO. Linux 6.x (tcp_schedule_loss_probe): 2 SRTT + 2 ms (TCP_TIMEOUT_MIN_US),
 * or + rto_min for a lone segment, rounded up to the 1 ms tick, never later than the RTO — counted from the
 * oldest segment's transmission when the probe is re-armed by a send. Handshake RTT 10 ms: SRTT 10 ms; the
 * RTO is 200 ms in brisk's profile (the floor), 210 ms in Linux's (SRTT + rto_min). */
static void pto_timing(const char *profile)
{
    int lx = strncmp(profile, "linux-", 6) == 0;
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    uint64_t rto = lx ? 210 * TF_MS : 200 * TF_MS;

    /* Four segments: the probe at the PTO (Linux: 2 SRTT + 2 ms), then the RTO from the probe. */
    struct tf_conn f;
    setup(&f, (const char *const[]){p, NULL}, 1);
    assert_int_equal(tf_info(f.c).rto_ns, rto);
    tf_send_pattern(f.c, 0, 4 * m, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    uint64_t pto = lx ? 22 * TF_MS : PTO_BRISK;
    tf_run(&f.t, t1 + pto - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + pto);
    TF_EXPECT(&f.t, t1 + pto, ACK | PSH, f.d + 3 * m, 1001, m);
    tf_run(&f.t, t1 + pto + rto - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + pto + rto);
    TF_EXPECT(&f.t, t1 + pto + rto, ACK, f.d, 1001, m);
    finish(&f);

    /* A lone segment: 2 SRTT + 200 ms would be after the RTO, so the probe goes at the RTO's time. */
    setup(&f, (const char *const[]){p, NULL}, 1);
    tf_send_pattern(f.c, 0, 100, t1);
    tf_take(&f.t);
    tf_run(&f.t, t1 + rto - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + rto);
    TF_EXPECT(&f.t, t1 + rto, ACK | PSH, f.d, 1001, 100);
    assert_int_equal(tf_info(f.c).tlp_probes, 1);
    finish(&f);

    /* More data 10 ms later re-arms the probe from that send: brisk a PTO from it; Linux 2 SRTT + 2 ms, or
     * the RTO of the first segment if that came sooner (it does not here). */
    setup(&f, (const char *const[]){p, NULL}, 1);
    tf_send_pattern(f.c, 0, 4 * m, t1);
    for (int k = 0; k < 4; k++)
        tf_take(&f.t);
    tf_send_pattern(f.c, 4 * m, m, t1 + 10 * TF_MS);
    TF_EXPECT(&f.t, t1 + 10 * TF_MS, ACK | PSH, f.d + 4 * m, 1001, m);
    uint64_t at = t1 + 10 * TF_MS + pto;
    tf_run(&f.t, at - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, at);
    TF_EXPECT(&f.t, at, ACK | PSH, f.d + 4 * m, 1001, m);
    finish(&f);
}

static void test_pto_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strncmp(brisk_profile_name(i), "linux-", 6) == 0)
            pto_timing(brisk_profile_name(i));
}

static void test_pto_brisk(void **state)
{
    (void)state;
    pto_timing("brisk");
}

/* The ACK that ends the probe's episode, per profile. brisk reduces cwnd once when the ACK covers the
 * retransmitted probe without a D-SACK. Linux (tcp_process_tlp_ack) waits for an ACK beyond TLP.end_seq:
 * one that acknowledges exactly up to it leaves the window and the episode as they are, and the reduction
 * comes with the first ACK of later data. */
static void probe_ack(const char *profile)
{
    int lx = strncmp(profile, "linux-", 6) == 0;
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    struct tf_conn f;
    setup(&f, (const char *const[]){p, NULL}, 1);
    tf_send_pattern(f.c, 0, 8 * m, t1);
    for (int k = 0; k < 8; k++)
        tf_take(&f.t);
    assert_true(tf_run_to_seg(&f.t, t1 + 100 * TF_MS));
    TF_EXPECT(&f.t, TF_ANY_TIME, ACK | PSH, f.d + 7 * m, 1001, m);
    f.p.ack = f.d + 8 * m;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 30 * TF_MS);
    struct brisk_conn_info i = tf_info(f.c);
    assert_int_equal(i.tlp_recoveries, lx ? 0 : 1);
    assert_int_equal(f.c->timer.tlp_on, lx ? 1 : 0);
    if (lx) {
        /* New data and its ACK: beyond TLP.end_seq, the loss the probe repaired is answered now. */
        tf_send_pattern(f.c, 8 * m, m, t1 + 40 * TF_MS);
        tf_take(&f.t);
        f.p.ack = f.d + 9 * m;
        tf_peer_send(&f.p, ACK, NULL, 0, t1 + 50 * TF_MS);
        i = tf_info(f.c);
        assert_int_equal(i.tlp_recoveries, 1);
        assert_false(f.c->timer.tlp_on);
    }
    /* NewReno: half the window before the ACK that reduced it — IW10 in brisk's profile; in Linux's, 18
     * (the probe's ACK grew it by the eight segments it covered, tcp_abc_limit=0). */
    assert_int_equal(i.ssthresh, lx ? 9 * m : 5 * m);
    finish(&f);
}

static void test_probe_ack_linux_profiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strncmp(brisk_profile_name(i), "linux-", 6) == 0)
            probe_ack(brisk_profile_name(i));
}

static void test_probe_ack_brisk(void **state)
{
    (void)state;
    probe_ack("brisk");
}

/* The FIN and the probe, in every profile. A FIN sent after all the data went out is a segment of its own,
 * and the probe resends it alone, as Linux's tcp_send_loss_probe resends its last skb (tcp_send_fin queued
 * the FIN in an skb of its own); the probe's ACK tells whether the data arrived. A FIN that rode on the last
 * data segment goes again with that segment. */
static void fin_probe(const char *profile, int fin_alone)
{
    char p[64];
    snprintf(p, sizeof(p), "profile=%s", profile);
    struct tf_conn f;
    setup(&f, (const char *const[]){p, NULL}, 1);
    const uint32_t m = 1460;
    uint64_t t1 = TF_SEC;
    /* linux-6.x sends the two full segments as one GSO packet, PSH on its last (tcp_sw_gso). */
    uint8_t second = f.t.st->net.s.tcp_sw_gso ? ACK | PSH : ACK;
    if (fin_alone) {
        tf_send_pattern(f.c, 0, 3000, t1);
        TF_EXPECT(&f.t, t1, ACK, f.d, 1001, m);
        TF_EXPECT(&f.t, t1, second, f.d + m, 1001, m);
        TF_EXPECT(&f.t, t1, ACK | PSH, f.d + 2 * m, 1001, 80);
        assert_int_equal(brisk_shutdown_write(f.c, t1 + TF_MS), BRISK_OK);
        TF_EXPECT(&f.t, t1 + TF_MS, ACK | FIN, f.d + 3000, 1001, 0);
    } else {
        /* Corked: the data waits, and shutdown sends it with the FIN on its last segment. */
        assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_CORK, 1, t1), BRISK_OK);
        tf_send_pattern(f.c, 0, 3000, t1);
        TF_EXPECT(&f.t, t1, ACK, f.d, 1001, m);
        TF_EXPECT(&f.t, t1, second, f.d + m, 1001, m);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(brisk_shutdown_write(f.c, t1 + TF_MS), BRISK_OK);
        TF_EXPECT(&f.t, t1 + TF_MS, ACK | PSH | FIN, f.d + 2 * m, 1001, 80);
    }
    TF_EXPECT_NONE(&f.t);
    assert_true(tf_run_to_seg(&f.t, t1 + 100 * TF_MS));
    if (fin_alone)
        TF_EXPECT(&f.t, TF_ANY_TIME, ACK | FIN, f.d + 3000, 1001, 0);
    else
        TF_EXPECT(&f.t, TF_ANY_TIME, ACK | PSH | FIN, f.d + 2 * m, 1001, 80);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).tlp_probes, 1);
    finish(&f);
}

static void test_probe_after_fin(void **state)
{
    (void)state;
    for (size_t i = 0; i < brisk_profiles_count(); i++) {
        fin_probe(brisk_profile_name(i), 1);
        fin_probe(brisk_profile_name(i), 0);
    }
}

/* Without SACK, or with tcp_tlp=0, the RTO alone guards the tail. */
static void test_no_probe_without_sack_or_setting(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        static const char *const off[] = {"tcp_tlp=0", NULL};
        struct tf_conn f;
        setup(&f, variant ? off : NULL, variant ? 1 : 0);
        const uint32_t m = 1460;
        uint64_t t1 = TF_SEC;
        tf_send_pattern(f.c, 0, 4 * m, t1);
        for (int k = 0; k < 4; k++)
            tf_take(&f.t);
        tf_run(&f.t, t1 + 200 * TF_MS - 1);
        TF_EXPECT_NONE(&f.t);
        tf_run(&f.t, t1 + 200 * TF_MS);
        TF_EXPECT(&f.t, t1 + 200 * TF_MS, ACK, f.d, 1001, m);
        assert_int_equal(tf_info(f.c).tlp_probes, 0);
        assert_int_equal(tf_info(f.c).rto_count, 1);
        finish(&f);
    }
}

/* The lazy discipline moves the wheel only when a deadline moves earlier: a stream of sends and ACKs that
 * each push the probe deadline later costs nothing; the eager one re-arms on every event. */
static void test_lazy_vs_eager_wheel_ops(void **state)
{
    (void)state;
    uint64_t ops[2];
    for (int eager = 0; eager < 2; eager++) {
        static const char *const e[] = {"tcp_timer_eager=1", NULL};
        struct tf_conn f;
        setup(&f, eager ? e : NULL, 1);
        uint64_t before = tf_info(f.c).wheel_ops;
        uint64_t t = TF_SEC;
        for (int k = 0; k < 10; k++, t += TF_MS) { /* 100 bytes out, acked 1 ms later, ten times */
            tf_send_pattern(f.c, (uint64_t)k * 100, 100, t);
            tf_take(&f.t);
            f.p.ack = f.d + (uint32_t)(k + 1) * 100;
            tf_peer_send(&f.p, ACK, NULL, 0, t + TF_MS / 2);
        }
        ops[eager] = tf_info(f.c).wheel_ops - before;
        finish(&f);
    }
    assert_true(ops[0] <= 1);
    assert_true(ops[1] >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_resends_last_segment_at_pto),
        cmocka_unit_test(test_probe_prefers_new_data),
        cmocka_unit_test(test_lone_segment_probe_at_rto_time),
        cmocka_unit_test(test_probe_repairs_tail_loss),
        cmocka_unit_test(test_dsack_for_probe_means_no_loss),
        cmocka_unit_test(test_probe_after_fin),
        cmocka_unit_test(test_pto_linux_profiles),
        cmocka_unit_test(test_pto_brisk),
        cmocka_unit_test(test_probe_ack_linux_profiles),
        cmocka_unit_test(test_probe_ack_brisk),
        cmocka_unit_test(test_no_probe_without_sack_or_setting),
        cmocka_unit_test(test_lazy_vs_eager_wheel_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
