/*
 * rtt.c — the RFC 6298 retransmission-timer estimator, RFC 7323 appendix G gains, Linux's estimator for the
 * linux-* profiles, and a windowed min-RTT.
 *
 * The estimator. RFC 6298 section 2 keeps two exponentially weighted moving averages of the RTT samples R:
 * SRTT (gain alpha = 1/8) and RTTVAR, the mean deviation |SRTT - R| (gain beta = 1/4, updated first, with
 * the old SRTT), and sets RTO = SRTT + max(G, K * RTTVAR) with K = 4. The first sample seeds SRTT = R and
 * RTTVAR = R/2 (2.2). Before any sample RTO is the initial value, 1 s by default (2.1). brisk clamps the RTO
 * into [rto_min, rto_max]: RFC 6298 2.4 asks for a 1 s floor, but like Linux brisk takes the floor from
 * settings (200 ms by default there), and 2.5 allows a ceiling of at least 60 s.
 *
 * Precision. Integer nanoseconds alone would drift: (7 SRTT + R) / 8 truncates every time, so a steady path
 * would settle up to 7 ns away from its real RTT, and RTTVAR would carry the error. brisk keeps SRTT and
 * RTTVAR in fixed point with 16 fractional bits and rounds each EWMA step to nearest, so the state tracks the
 * real-valued recurrence to a small fraction of a nanosecond (the step error is at most half a unit, and
 * the recurrence contracts it), converges to exactly R on a constant input, and SRTT / RTTVAR as read
 * (brisk_rtt_srtt / brisk_rtt_rttvar in rtt.h) and the rto field are the fixed-point values rounded to ns.
 * Samples are clamped to [1 ns, 2^44 ns]: with that, 4 * RTTVAR and SRTT stay below 2^62 and 2^60 fixed-point
 * units, so nothing can overflow.
 *
 * Timestamps. With RFC 7323 timestamps a sender can take a sample on every ACK, many per RTT; with the
 * section 2 gains SRTT would then forget the path within a fraction of an RTT. RFC 7323 section 4 points to
 * appendix G, which divides both gains by ExpectedSamples = ceil(FlightSize / (2 SMSS)).
 * brisk_rtt_sample_n() takes that divisor; brisk_rtt_sample() is the divisor 1.
 *
 * Backoff. The caller arms brisk_rtt_rto() = min(rto << backoff, rto_max) (RFC 6298 5.5-5.6); on expiry it
 * calls brisk_rtt_backoff(), which stops incrementing once the product reaches rto_max, so the shift stays
 * small and the computation never overflows. A new sample resets the backoff (5.7 permits this when a new ACK
 * arrives; the caller only takes samples that Karn's algorithm allows, so the backoff survives until an
 * unambiguous ACK). The other half of 5.7 takes two calls, because the fallback must not disturb the
 * handshake's own backoff: brisk_rtt_syn_timeout() at each SYN / SYN-ACK timeout only takes note, and
 * brisk_rtt_established() then starts data with a 3 s RTO instead of the 1 s initial one if the handshake
 * needed a retransmission and yielded no sample.
 *
 * Minimum RTT. Pacing, TLP and RACK want the path's propagation delay, i.e. the minimum RTT over a recent
 * window. A windowed minimum over all samples would need the whole window's samples; Kathleen Nichols'
 * estimator keeps three: the best, the best since the best, and the best since that, each with its time. A
 * new sample at or below the best (or a window with nothing left in it) restarts all three; otherwise it
 * replaces the entries it beats. When the best ages out of the window the later ones move up. To keep the
 * fallbacks recent, the second (third) entry is refreshed with the new sample if it still coincides with the
 * best (second) after a quarter (half) of the window. After every update all three entries lie within the
 * window, so min_rtt is always a real sample from the window and never below the true windowed minimum; it is
 * above it only when that minimum arrived while better, older samples still held the filter and they have
 * since expired, and then by no more than what the sub-window refreshes let through.
 *
 * Linux's estimator (brisk_rtt_use_linux; tcp_rtt_estimator=linux in the linux-* profiles). Linux 6.x does
 * not compute RFC 6298's RTO. Its tcp_rtt_estimator keeps SRTT the same way (gain 1/8, in integer us) and
 * mdev, the mean deviation, with gain 1/4 — but only 1/32 when the sample is below SRTT, so a fast sample
 * cannot raise the RTO. The variance term of the RTO, rttvar, is not mdev itself: it is the largest 4 x mdev
 * seen in the current round trip, never less than rto_min (mdev_max starts each round at rto_min), and when
 * a round ends (an ACK takes snd_una past rtt_seq, the snd_nxt at the round's start) it decays by a quarter
 * of its excess over that round's maximum. tcp_set_rto then arms SRTT + rttvar, rounded up to the 1 ms tick
 * (usecs_to_jiffies), capped at the maximum. So on a steady path Linux's RTO is SRTT + rto_min — about RTT +
 * 200 ms — where RFC 6298's decays to max(rto_min, SRTT + 4 RTTVAR) -> rto_min: after a few samples of 100
 * ms, 250 ms against Linux's 300. The first sample sets mdev = R / 2 (4 x mdev = 2 R) and rttvar = max(2 R,
 * rto_min): RTO = 3 R, or R + rto_min. brisk keeps Linux's state in its own words exactly (srtt_fp and
 * rttvar_fp hold Linux's srtt_us and mdev_us scaled to ns; rttvar_us, mdev_max_us and rtt_seq are Linux's),
 * so the SRTT that TLP, RACK and pacing read is Linux's, and brisk_rtt_rttvar() reads mdev as tcpi_rttvar.
 *
 * Functions: brisk_rtt_init, brisk_rtt_use_linux, brisk_rtt_sample_ack (an ACK's sample: either estimator,
 * the min filter, the backoff reset), brisk_rtt_sample / brisk_rtt_sample_n (the same without an ACK's
 * sequence numbers), brisk_rtt_expected_samples, brisk_rtt_rto, brisk_rtt_backoff, brisk_rtt_syn_timeout,
 * brisk_rtt_established.
 */
#include "tcp/rtt.h"
#include "wire/tcp.h"

#define FP_SHIFT 16
#define FP_HALF  (UINT64_C(1) << (FP_SHIFT - 1))

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t fp_round(uint64_t fp)
{
    return (fp + FP_HALF) >> FP_SHIFT;
}

static uint64_t elapsed(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0; /* a clock that steps back counts as no time */
}

/* old + (target - old) / div, rounded to nearest, without signed arithmetic. */
static uint64_t ewma(uint64_t old, uint64_t target, uint64_t div)
{
    if (target >= old)
        return old + (target - old + div / 2) / div;
    return old - (old - target + div / 2) / div;
}

/* Each slot is stored from s itself: a chained assignment made the compiler copy a slot it had just written
 * with a wider load, which waits for those stores to reach the cache (a store-forwarding stall, and a miss
 * when the socket's line is cold). */
static void minf_reset(struct brisk_rtt *r, struct brisk_rtt_minsample s)
{
    r->minf[0] = s;
    r->minf[1] = s;
    r->minf[2] = s;
}

static void minf_update(struct brisk_rtt *r, uint64_t now, uint64_t rtt)
{
    struct brisk_rtt_minsample s = {.t = now, .v = rtt};
    struct brisk_rtt_minsample *f = r->minf;
    uint64_t win = r->min_rtt_win;

    if (r->samples == 0 || rtt <= f[0].v || elapsed(now, f[2].t) > win) {
        minf_reset(r, s); /* a new best, or nothing in the window is left */
        return;
    }
    if (rtt <= f[1].v) {
        f[1] = s;
        f[2] = s;
    } else if (rtt <= f[2].v) {
        f[2] = s;
    }

    uint64_t age = elapsed(now, f[0].t);
    if (age > win) {
        /* The best left the window: promote the later candidates. The second may be out of it too. */
        f[0] = f[1];
        f[1] = f[2];
        f[2] = s;
        if (elapsed(now, f[0].t) > win) {
            f[0] = f[1];
            f[1] = f[2];
        }
    } else if (f[1].t == f[0].t && age > win / 4) {
        /* no distinct second choice a quarter window on: take one from now */
        f[1] = s;
        f[2] = s;
    } else if (f[2].t == f[1].t && age > win / 2) {
        f[2] = s;
    }
}

/* Linux's state lives in the same words as RFC 6298's, exactly: its SRTT (srtt_us, 8 x SRTT in us) as
 * srtt_us x 125 ns and its mdev (mdev_us, 4 x mdev in us) as mdev_us x 250 ns, so brisk_rtt_srtt() and
 * brisk_rtt_rttvar() read them in ns like any other state. */
#define US               BRISK_NSEC_PER_USEC
#define LINUX_SAMPLE_MAX (UINT32_MAX >> 3) /* us: 8 x SRTT must fit Linux's 32 bits (a 536 s round trip) */

static uint32_t linux_srtt8(const struct brisk_rtt *r)
{
    return (uint32_t)((r->srtt_fp >> FP_SHIFT) / 125);
}

static uint32_t linux_mdev4(const struct brisk_rtt *r)
{
    return (uint32_t)((r->rttvar_fp >> FP_SHIFT) / 250);
}

/* Linux 6.x's tcp_rtt_estimator and tcp_set_rto, in its units (us; SRTT x 8, mdev x 4). `new_round`: snd_una
 * passed rtt_seq, the snd_nxt at the start of the current round. Out of line: inlined, its registers made
 * brisk_rtt_sample_ack's frame cost RFC 6298's samples 20 instructions each (callgrind rr 256 flows). */
__attribute__((noinline)) static void linux_sample(struct brisk_rtt *r, uint64_t rtt, int new_round, uint32_t snd_nxt)
{
    int64_t m = (int64_t)(rtt / US < LINUX_SAMPLE_MAX ? rtt / US : LINUX_SAMPLE_MAX);
    uint32_t rto_min_us = (uint32_t)(r->rto_min / US < UINT32_MAX ? r->rto_min / US : UINT32_MAX);
    int64_t srtt8, mdev4;
    if (r->samples == 0) {
        srtt8 = m << 3;
        mdev4 = m << 1; /* RTO = 3 x R until the next samples say better */
        r->rttvar_us = (uint32_t)mdev4 > rto_min_us ? (uint32_t)mdev4 : rto_min_us;
        r->mdev_max_us = r->rttvar_us;
        r->rtt_seq = snd_nxt;
    } else {
        srtt8 = linux_srtt8(r);
        mdev4 = linux_mdev4(r);
        m -= srtt8 >> 3; /* the error against SRTT */
        srtt8 += m;      /* SRTT += error / 8 */
        if (m < 0) {
            /* Below SRTT: mdev moves with a gain of 1/32 only, so that a sample that improves on SRTT does
             * not inflate the RTO (Linux's variant of the Eifel finding), while a smaller deviation can still
             * shrink it. */
            m = -m - (mdev4 >> 2);
            if (m > 0)
                m >>= 3;
        } else {
            m -= mdev4 >> 2;
        }
        mdev4 += m; /* mdev += (|error| - mdev) / 4 */
        if (mdev4 > r->mdev_max_us) {
            r->mdev_max_us = (uint32_t)mdev4;
            if (r->mdev_max_us > r->rttvar_us)
                r->rttvar_us = r->mdev_max_us;
        }
        if (new_round) {
            /* Once per round trip rttvar decays towards the round's largest mdev, which then restarts at the
             * floor: rttvar never drops below rto_min, so the RTO stays at least SRTT + rto_min. */
            if (r->mdev_max_us < r->rttvar_us)
                r->rttvar_us -= (r->rttvar_us - r->mdev_max_us) >> 2;
            r->rtt_seq = snd_nxt;
            r->mdev_max_us = rto_min_us;
        }
    }
    if (srtt8 < 1)
        srtt8 = 1;
    r->srtt_fp = ((uint64_t)srtt8 * 125) << FP_SHIFT;
    r->rttvar_fp = ((uint64_t)mdev4 * 250) << FP_SHIFT;
    /* __tcp_set_rto: usecs_to_jiffies rounds up to the 1 ms tick; tcp_bound_rto caps at the maximum. */
    uint64_t rto = ((uint64_t)(srtt8 >> 3) + r->rttvar_us) * US;
    rto = (rto + BRISK_NSEC_PER_MSEC - 1) / BRISK_NSEC_PER_MSEC * BRISK_NSEC_PER_MSEC;
    r->rto = clamp_u64(rto, r->rto_min, r->rto_max);
}

void brisk_rtt_use_linux(struct brisk_rtt *r)
{
    r->linux_est = 1;
}

void brisk_rtt_init(struct brisk_rtt *r, uint64_t rto_initial, uint64_t rto_min, uint64_t rto_max)
{
    *r = (struct brisk_rtt){0};
    if (rto_max < rto_min)
        rto_max = rto_min;
    r->rto_min = rto_min;
    r->rto_max = rto_max;
    r->min_rtt_win = BRISK_RTT_MIN_RTT_WIN_DEFAULT;
    r->rto = clamp_u64(rto_initial, rto_min, rto_max);
}

uint32_t brisk_rtt_expected_samples(uint32_t flight, uint32_t mss)
{
    if (mss == 0)
        return 1;
    uint64_t per = 2 * (uint64_t)mss;
    uint64_t n = ((uint64_t)flight + per - 1) / per;
    return n == 0 ? 1 : (uint32_t)n;
}

/* RFC 6298 2.2-2.4 with the gains divided by n (RFC 7323 appendix G). */
static void rfc_sample(struct brisk_rtt *r, uint64_t rtt, uint32_t expected)
{
    uint64_t n = clamp_u64(expected, 1, BRISK_RTT_EXPECTED_MAX);
    uint64_t rfp = rtt << FP_SHIFT;
    if (r->samples == 0) {
        r->srtt_fp = rfp;       /* RFC 6298 2.2 */
        r->rttvar_fp = rfp / 2; /* exact: rfp is a multiple of 2^16 */
    } else {
        /* RFC 6298 2.3, RTTVAR first, with the SRTT before this sample. */
        uint64_t dev = r->srtt_fp > rfp ? r->srtt_fp - rfp : rfp - r->srtt_fp;
        r->rttvar_fp = ewma(r->rttvar_fp, dev, 4 * n);
        r->srtt_fp = ewma(r->srtt_fp, rfp, 8 * n);
    }
    uint64_t var4 = 4 * r->rttvar_fp;
    uint64_t g = BRISK_RTT_GRANULARITY << FP_SHIFT;
    r->rto = clamp_u64(fp_round(r->srtt_fp + (var4 > g ? var4 : g)), r->rto_min, r->rto_max);
}

/* What every sample does after the estimator's update. */
static inline void sample_done(struct brisk_rtt *r, uint64_t now, uint64_t min_rtt)
{
    minf_update(r, now, min_rtt);
    if (r->samples < UINT8_MAX)
        r->samples++;
    r->backoff = 0; /* RFC 6298 5.7; Linux's tcp_ack_update_rtt resets it on a valid sample too */
}

void brisk_rtt_sample_ack(struct brisk_rtt *r, uint64_t rtt, uint64_t min_rtt, uint64_t now,
                          uint32_t expected, uint32_t snd_una, uint32_t snd_nxt)
{
    rtt = clamp_u64(rtt, 1, BRISK_RTT_SAMPLE_MAX);
    min_rtt = clamp_u64(min_rtt, 1, BRISK_RTT_SAMPLE_MAX);
    if (r->linux_est)
        linux_sample(r, rtt, brisk_seq_gt(snd_una, r->rtt_seq), snd_nxt);
    else
        rfc_sample(r, rtt, expected);
    sample_done(r, now, min_rtt);
}

void brisk_rtt_sample_n(struct brisk_rtt *r, uint64_t rtt, uint64_t now, uint32_t expected)
{
    if (r->linux_est) {
        /* Without an ACK's sequence numbers Linux's round counts as ended (rtt_seq + 1 is after rtt_seq). */
        brisk_rtt_sample_ack(r, rtt, rtt, now, expected, r->rtt_seq + 1, r->rtt_seq);
        return;
    }
    /* brisk_rtt_sample_ack's RFC 6298 case with min_rtt = rtt, without its second clamp and sequence numbers:
     * each of brisk's per-ACK samples comes here (input.c). */
    rtt = clamp_u64(rtt, 1, BRISK_RTT_SAMPLE_MAX);
    rfc_sample(r, rtt, expected);
    sample_done(r, now, rtt);
}

void brisk_rtt_sample(struct brisk_rtt *r, uint64_t rtt, uint64_t now)
{
    brisk_rtt_sample_n(r, rtt, now, 1);
}

uint64_t brisk_rtt_rto(const struct brisk_rtt *r)
{
    uint64_t rto = r->rto < r->rto_max ? r->rto : r->rto_max;
    if (rto == 0)
        return 0;
    if (r->backoff >= 64 || rto > (r->rto_max >> r->backoff))
        return r->rto_max; /* rto << backoff would exceed rto_max (or overflow) */
    return rto << r->backoff;
}

void brisk_rtt_backoff(struct brisk_rtt *r)
{
    /* Once the backed-off RTO has reached the ceiling more doubling changes nothing; 63 bounds the shift
     * even for a zero RTO, which never grows. */
    if (brisk_rtt_rto(r) < r->rto_max && r->backoff < 63)
        r->backoff++;
}

void brisk_rtt_syn_timeout(struct brisk_rtt *r)
{
    r->syn_rtx = 1;
}

void brisk_rtt_established(struct brisk_rtt *r)
{
    r->backoff = 0;
    if (!r->syn_rtx || r->samples != 0)
        return; /* the handshake went through first time, or a valid sample (timestamps) beats the fallback */
    uint64_t rto = r->rto > BRISK_RTT_SYN_FALLBACK ? r->rto : BRISK_RTT_SYN_FALLBACK;
    r->rto = clamp_u64(rto, r->rto_min, r->rto_max);
}
