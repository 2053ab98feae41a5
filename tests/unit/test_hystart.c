/*
 * test_hystart.c — HyStart++ (src/tcp/hystart.c, RFC 9406) against a small sender model: a window-limited
 * sender whose ACKs carry the RTT of the round their segment was sent in. A flat RTT never leaves slow start;
 * a rise of at least RttThresh (clamped to 4..16 ms) after N_RTT_SAMPLE samples enters CSS, a smaller one
 * does not; CSS returns to slow start when the RTT falls below its baseline; CSS_ROUNDS rounds of CSS end
 * slow start; fewer than N_RTT_SAMPLE samples decide nothing; a loss stops HyStart++ for good; rounds follow
 * SND.NXT exactly. Linux's HyStart (brisk_hystart_linux_*): the delay test against the connection's minimum
 * RTT from the ninth sample of a round, at 16 packets and more only; the ACK train past half the minimum RTT,
 * broken by a gap of more than 2 ms; the delay threshold's clamp; a new round at the ACK past SND.NXT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tcp/hystart.h"

#define MSS 1000u
#define MS  1000000ull

/* The sender: cwnd in bytes (grows as the phase says), snd_una / snd_nxt, and for each segment in flight the
 * round it was sent in (its RTT is rtt_of_round[that round]). */
struct model {
    struct brisk_hystart h;
    uint64_t cwnd, una, nxt;
    uint32_t sent_round[4096]; /* by segment number (seq / MSS) modulo the array */
    uint32_t round;            /* the round the sender is in: bumps when an ACK passes round_end */
    uint64_t round_end;
    uint64_t rtt_of_round[256];
    enum brisk_hystart_phase last;
    int done_at_round; /* the model round in which on_ack first said DONE, -1 = never */
    int css_at_round;  /* the model round in which CSS was first entered, -1 = never */
};

static void model_init(struct model *m, uint64_t cwnd_segs)
{
    memset(m, 0, sizeof(*m));
    brisk_hystart_init(&m->h);
    m->cwnd = cwnd_segs * MSS;
    m->done_at_round = -1;
    m->css_at_round = -1;
    m->last = BRISK_HYSTART_SS;
}

static void model_send(struct model *m)
{
    while (m->nxt - m->una < m->cwnd) {
        m->sent_round[(m->nxt / MSS) % 4096] = m->round;
        m->nxt += MSS;
    }
}

/* Runs until the sender has completed `rounds` rounds (or HyStart++ is done). rtt 0 in the table = no
 * sample on those ACKs. */
static void model_run(struct model *m, uint32_t rounds)
{
    if (m->nxt == 0)
        model_send(m); /* the initial window, "round 0"; round_end 0: the first ACK begins round 1 */
    while (m->round < rounds) {
        uint32_t r = m->sent_round[(m->una / MSS) % 4096];
        m->una += MSS;
        if (m->una > m->round_end) { /* the sender's view of rounds: the model's own bookkeeping */
            m->round++;
            m->round_end = m->nxt;
        }
        enum brisk_hystart_phase p =
            brisk_hystart_on_ack(&m->h, MSS, (uint32_t)(m->nxt - m->una), m->rtt_of_round[r % 256]);
        if (p == BRISK_HYSTART_CSS && m->css_at_round < 0)
            m->css_at_round = (int)m->round;
        if (p == BRISK_HYSTART_DONE) {
            if (m->done_at_round < 0)
                m->done_at_round = (int)m->round;
            m->last = p;
            return;
        }
        m->cwnd += p == BRISK_HYSTART_SS ? MSS : brisk_hystart_css_increase(MSS);
        m->last = p;
        model_send(m);
    }
}

static void test_init(void **state)
{
    (void)state;
    struct brisk_hystart h;
    memset(&h, 0x5a, sizeof(h));
    brisk_hystart_init(&h);
    assert_int_equal(h.phase, BRISK_HYSTART_SS);
    assert_true(h.last_round_min_rtt == UINT64_MAX);
    assert_true(h.current_round_min_rtt == UINT64_MAX);
    assert_int_equal(h.rounds, 0);
}

static void test_flat_rtt_never_exits(void **state)
{
    (void)state;
    uint64_t rtts[] = {100000, 50 * MS, 300 * MS};
    for (int k = 0; k < 3; k++) {
        struct model m;
        model_init(&m, 10);
        for (int i = 0; i < 256; i++)
            m.rtt_of_round[i] = rtts[k];
        model_run(&m, 9);
        assert_int_equal(m.last, BRISK_HYSTART_SS);
        assert_int_equal(m.css_at_round, -1);
        /* Slow start doubled the window in each of rounds 1..8, and round 9 has begun with one ACK. */
        assert_int_equal(m.cwnd, ((10u << 8) + 1) * MSS);
        /* HyStart++'s rounds are the sender's rounds (both begin round 1 with the first ACK). */
        assert_int_equal(m.h.rounds, m.round);
    }
}

/* Rounds 0..3 at `base`, then `base + rise`. Returns the model. */
static struct model rise_run(uint64_t base, uint64_t rise, uint32_t rounds)
{
    struct model m;
    model_init(&m, 10);
    for (int i = 0; i < 256; i++)
        m.rtt_of_round[i] = i < 4 ? base : base + rise;
    model_run(&m, rounds);
    return m;
}

static void test_rtt_rise_enters_css(void **state)
{
    (void)state;
    /* base 40 ms: RttThresh = max(4 ms, min(40 / 8, 16 ms)) = 5 ms. */
    struct model m = rise_run(40 * MS, 5 * MS, 6);
    /* The round whose ACKs carry the higher RTT is round 5 (the ACKs of segments sent in round 4): CSS from
     * the 8th sample of it. */
    assert_int_equal(m.css_at_round, 5);
    assert_int_equal(m.h.phase, BRISK_HYSTART_CSS);
    assert_true(m.h.css_baseline_min_rtt == 45 * MS);
    m = rise_run(40 * MS, 5 * MS - 1, 8);
    assert_int_equal(m.css_at_round, -1);
    assert_int_equal(m.h.phase, BRISK_HYSTART_SS);
}

static void test_rtt_thresh_clamped(void **state)
{
    (void)state;
    /* base 200 ms: lastRoundMinRTT / 8 = 25 ms, clamped to MAX_RTT_THRESH = 16 ms. */
    assert_int_equal(rise_run(200 * MS, 16 * MS, 6).css_at_round, 5);
    assert_int_equal(rise_run(200 * MS, 16 * MS - 1, 8).css_at_round, -1);
    /* base 10 ms: 1.25 ms, raised to MIN_RTT_THRESH = 4 ms. */
    assert_int_equal(rise_run(10 * MS, 4 * MS, 6).css_at_round, 5);
    assert_int_equal(rise_run(10 * MS, 4 * MS - 1, 8).css_at_round, -1);
    /* 100 µs data-centre RTT: even a tenfold rise (0.9 ms) is not 4 ms of queueing. */
    assert_int_equal(rise_run(100000, 900000, 8).css_at_round, -1);
}

static void test_css_rounds_then_done(void **state)
{
    (void)state;
    struct model m = rise_run(40 * MS, 10 * MS, 30);
    assert_int_equal(m.css_at_round, 5);
    /* CSS_ROUNDS (5) rounds of CSS: DONE as round 5 + 5 begins. */
    assert_int_equal(m.done_at_round, 5 + (int)BRISK_HYSTART_CSS_ROUNDS);
    assert_int_equal(m.h.phase, BRISK_HYSTART_DONE);
    /* In CSS the window grew by a quarter of slow start's rate: less than doubling per round. */
    uint64_t ss_only = 10u * MSS << 10; /* what 10 rounds of slow start would reach */
    assert_true(m.cwnd < ss_only / 8);
    /* Further ACKs change nothing. */
    assert_int_equal(brisk_hystart_on_ack(&m.h, MSS, 0, 1 * MS), BRISK_HYSTART_DONE);
}

static void test_css_back_to_slow_start_when_rtt_falls(void **state)
{
    (void)state;
    struct model m;
    model_init(&m, 10);
    for (int i = 0; i < 256; i++)
        m.rtt_of_round[i] = (i == 4 || i == 5) ? 50 * MS : 40 * MS; /* a two-round bump */
    model_run(&m, 6);
    assert_int_equal(m.css_at_round, 5);
    assert_int_equal(m.h.phase, BRISK_HYSTART_CSS);
    model_run(&m, 8);
    /* Round 7's ACKs (sent in round 6) are back at 40 ms < the 50 ms baseline: slow start again. */
    assert_int_equal(m.h.phase, BRISK_HYSTART_SS);
    assert_true(m.h.css_baseline_min_rtt == UINT64_MAX);
    model_run(&m, 9);
    assert_int_equal(m.done_at_round, -1);
    assert_int_equal(m.h.phase, BRISK_HYSTART_SS);
}

static void test_few_samples_decide_nothing(void **state)
{
    (void)state;
    /* A window of 7 segments, one new segment sent per ACK: 6 segments outstanding after each ACK, so a round
     * is 7 ACKs and never N_RTT_SAMPLE (8) samples. The RTT may rise tenfold: no decision. */
    struct brisk_hystart h;
    brisk_hystart_init(&h);
    for (int i = 0; i < 120; i++) {
        uint64_t rtt = (uint64_t)(i < 20 ? 10 : 100) * MS;
        assert_int_equal(brisk_hystart_on_ack(&h, MSS, 6 * MSS, rtt), BRISK_HYSTART_SS);
    }
    assert_int_equal(h.rounds, 18); /* ACK 1 begins round 1, then a round every 7 ACKs */
    /* ACKs without an RTT sample count for rounds but not as samples. */
    brisk_hystart_init(&h);
    for (int i = 0; i < 100; i++)
        assert_int_equal(brisk_hystart_on_ack(&h, MSS, 0, 0), BRISK_HYSTART_SS);
    assert_int_equal(h.rtt_sample_count, 0);
    assert_int_equal(h.rounds, 100);
}

static void test_stop(void **state)
{
    (void)state;
    struct model m = rise_run(40 * MS, 0, 3);
    brisk_hystart_stop(&m.h);
    assert_int_equal(brisk_hystart_on_ack(&m.h, MSS, 10 * MSS, 500 * MS), BRISK_HYSTART_DONE);
    assert_int_equal(brisk_hystart_on_ack(&m.h, MSS, 10 * MSS, 1 * MS), BRISK_HYSTART_DONE);
}

/* Linux's HyStart: one round of ACKs every `gap_us`, each for one MSS with `rtt_us`, at window `cwnd`
 * packets (the window is not grown: the caller's business). Returns the 1-based ACK that said "exit", 0 if
 * none. The round starts at the first ACK: `end` is passed by it (outstanding = the rest of the round). */
static int linux_round(struct brisk_hystart_linux *h, uint32_t cwnd, unsigned acks, uint32_t gap_us,
                       uint32_t rtt_us, uint32_t delay_min, uint32_t *now_us)
{
    for (unsigned i = 0; i < acks; i++, *now_us += gap_us) {
        h->acked += MSS;
        if (brisk_hystart_linux_update(h, cwnd, rtt_us, delay_min, 1000, (acks - 1 - i) * MSS, *now_us))
            return (int)i + 1;
    }
    return 0;
}

static void test_linux_delay(void **state)
{
    (void)state;
    struct brisk_hystart_linux h;
    memset(&h, 0, sizeof(h));
    uint32_t now = 1000000;
    /* delay_min 100 ms: threshold 12.5 ms. RTT 112 ms: not enough; 113 ms: the ninth sample says exit. */
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 20, 5000, 112000, 100000, &now), 0);
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 20, 5000, 113000, 100000, &now), 9);
    assert_true(h.found);
    /* Found: nothing more until a reset with `all`. */
    assert_int_equal(linux_round(&h, 20, 20, 5000, 200000, 100000, &now), 0);
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_false(h.found);
    /* Below 16 packets no sample counts. */
    assert_int_equal(linux_round(&h, 15, 20, 5000, 200000, 100000, &now), 0);
    /* The clamp: delay_min 10 ms gives 4 ms (not 1.25), 400 ms gives 16 ms (not 50). */
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 12, 5000, 14000, 10000, &now), 0);
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 12, 5000, 14001, 10000, &now), 9);
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 12, 5000, 416001, 400000, &now), 9);
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 12, 5000, 416000, 400000, &now), 0);
}

static void test_linux_ack_train(void **state)
{
    (void)state;
    struct brisk_hystart_linux h;
    memset(&h, 0, sizeof(h));
    uint32_t now = 1000000;
    /* delay_min 18.8 ms, allowance 1 ms: the train must last more than 9.9 ms. ACKs 1.5 ms apart: the
     * eighth (10.5 ms after the first) says exit; the RTT is flat, so the delay test does not. */
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 20, 1500, 18800, 18800, &now), 8);
    /* 2.5 ms apart: never a train. */
    brisk_hystart_linux_reset(&h, 0, now, 1);
    assert_int_equal(linux_round(&h, 20, 20, 2500, 18800, 18800, &now), 0);
    /* A train that starts late in the round is measured from the round's start: one gap of 3 ms after the
     * first ACK breaks it for the whole round (last_ack is not moved by ACKs outside the train). */
    brisk_hystart_linux_reset(&h, 0, now, 1);
    h.acked += MSS;
    assert_int_equal(brisk_hystart_linux_update(&h, 20, 18800, 18800, 1000, 19 * MSS, now), 0);
    now += 3000;
    assert_int_equal(linux_round(&h, 20, 19, 1000, 18800, 18800, &now), 0);
}

static void test_linux_rounds(void **state)
{
    (void)state;
    struct brisk_hystart_linux h;
    memset(&h, 0, sizeof(h));
    uint32_t now = 0;
    brisk_hystart_linux_reset(&h, 0, now, 1);
    /* First ACK: a new round ending 9 MSS later; eight samples of 200 ms at delay_min 100 ms ... */
    h.acked += MSS;
    brisk_hystart_linux_update(&h, 20, 200000, 100000, 1000, 9 * MSS, now += 5000);
    assert_int_equal(h.end, 10 * MSS);
    for (int i = 0; i < 7; i++) {
        h.acked += MSS;
        assert_int_equal(brisk_hystart_linux_update(&h, 20, 200000, 100000, 1000, 20 * MSS, now += 5000), 0);
    }
    /* ... and the ACK reaching the round's end exactly is still the round's: its sample is the ninth, the
     * first checked, and lowers the round's minimum to delay_min: no exit. */
    h.acked = 10 * MSS;
    assert_int_equal(brisk_hystart_linux_update(&h, 20, 100000, 100000, 1000, 20 * MSS, now += 5000), 0);
    assert_int_equal(h.sample_cnt, 8);
    h.acked += MSS; /* past the end: a new round, the samples start over */
    assert_int_equal(brisk_hystart_linux_update(&h, 20, 200000, 100000, 1000, 20 * MSS, now += 5000), 0);
    assert_int_equal(h.sample_cnt, 1);
    assert_int_equal(h.end, 31 * MSS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_flat_rtt_never_exits),
        cmocka_unit_test(test_rtt_rise_enters_css),
        cmocka_unit_test(test_rtt_thresh_clamped),
        cmocka_unit_test(test_css_rounds_then_done),
        cmocka_unit_test(test_css_back_to_slow_start_when_rtt_falls),
        cmocka_unit_test(test_few_samples_decide_nothing),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_linux_delay),
        cmocka_unit_test(test_linux_ack_train),
        cmocka_unit_test(test_linux_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
