/*
 * cc_cubic.c — CUBIC congestion control (RFC 9438) with HyStart++ (RFC 9406) in the initial slow start.
 *
 * Reno grows one segment per round trip, so on a long fat path it takes thousands of round trips to refill
 * the window a loss halved. CUBIC grows as a function of the time since the last reduction instead:
 *
 *   W_cubic(t) = C (t - K)^3 + W_max          RFC 9438 eq. 1, C = 0.4 segments / s^3
 *   K = cbrt((W_max - cwnd_epoch) / C)         eq. 2: the time the curve takes back to W_max
 *
 * W_max is the window where the last loss happened. Below it the curve is concave (fast at first, flat near
 * W_max: probe carefully where the loss was); past it convex (slow, then ever faster: the path may have
 * freed capacity). Events:
 *
 *   on_ack, slow start   standard slow start (cc.c: RFC 3465 L = 2, or every whole segment acknowledged
 *                        in the linux-* profiles, like Linux's tcp_slow_start), refined in the initial slow
 *                        start by HyStart++ (hystart.c): a rising per-round minimum RTT moves to Conservative
 *                        Slow Start (a quarter of the growth) and after CSS_ROUNDS rounds to congestion
 *                        avoidance with ssthresh = cwnd, before the queue overflows.
 *   on_ack, congestion   the first ACK starts an epoch: t_epoch = now, cwnd_epoch = cwnd, K from eq. 2. If
 *   avoidance            there is no W_max above cwnd (no loss yet: HyStart++ ended slow start; or an RTO
 *                        cleared it) K = 0 and W_max = cwnd_epoch (RFC 9438 4.8 / 4.10). Per ACK:
 *                        - the Reno-friendly estimate W_est += alpha_cubic * acked / cwnd with alpha_cubic =
 *                          3 (1 - beta) / (1 + beta) = 9/17, or 1 once W_est >= cwnd_prior (4.3);
 *                        - if W_cubic(t) < W_est, cwnd = W_est (the Reno-friendly region: at small BDP CUBIC
 *                          must not be slower than Reno);
 *                        - otherwise target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd] (4.2: never more
 *                          than a 50 % increase per round trip), and cwnd grows by (target - cwnd) / cwnd per
 *                          acknowledged segment, by byte counting (cc.c's brisk_cc_cong_avoid with the
 *                          window w = cwnd * SMSS / (target - cwnd) bytes per SMSS of growth).
 *                        While the sender is application-limited the window does not grow and the time does
 *                        not count: t excludes those periods (4.2, 5.8), so a flow resuming after a lull
 *                        continues the curve where it left it rather than jumping ahead.
 *   on_enter_recovery    multiplicative decrease (4.6): cwnd_prior = cwnd, ssthresh = max(0.7 FlightSize,
 *                        2 SMSS); W_max = cwnd, or with fast convergence (4.7) cwnd (1 + beta) / 2 when
 *                        cwnd < W_max (the flow is losing ground: release bandwidth to newer flows). The
 *                        recovery itself is cc.c's NewReno recovery with that ssthresh.
 *   on_rto               ssthresh = max(0.7 FlightSize, 2 SMSS) (held on a repeated timeout), cwnd = 1 SMSS
 *                        (RFC 5681); W_max is forgotten so the next epoch starts with K = 0 (4.8).
 *   on_idle_restart      RFC 5681 restart window; the epoch ends (a new one starts after slow start, so the
 *                        idle time never counts towards t).
 *   on_undo              a spurious reduction (4.9): cwnd, ssthresh, W_max, K and the epoch as before it.
 *
 * Arithmetic. The per-ACK path is integer-only. Time is taken in units of 2^-12 s (244 µs) for the curve:
 * |t - K| < 2^21 units (512 s), whose cube fits in 64 bits, and C (t - K)^3 is formed in segments with 10
 * fractional bits and then scaled by SMSS into bytes; past 512 s the window has saturated anyway. K comes
 * from an exact integer cube root (bit by bit, 22 steps). W_est is kept in bytes with 10 fractional bits. The
 * RTT in W_cubic(t + RTT) is a smoothed RTT (gain 1/8) of the samples the connection passes.
 */
#include "tcp/cc.h"

#include <stddef.h>
#include <string.h>

#define NSEC_PER_SEC   1000000000ull
#define T_SHIFT        12                 /* curve time unit: 2^-12 s */
#define T_MAX_UNITS    ((1ull << 21) - 1) /* |t - K| bound: the cube stays below 2^63 */
#define SEG_FRAC_SHIFT 10                 /* fractional bits of curve values in segments */
#define WEST_SHIFT     10                 /* fractional bits of W_est in bytes */
#define C_NUM          2u                 /* C = 0.4 = 2/5 */
#define C_DEN          5u
#define BETA_NUM       7u /* beta_cubic = 0.7 = 7/10 */
#define BETA_DEN       10u
#define ALPHA_NUM      9u /* alpha_cubic = 3 (1 - beta) / (1 + beta) = 0.9 / 1.7 = 9/17 */
#define ALPHA_DEN      17u
#define ACKED_MAX      (1u << 30) /* bound per ACK so the W_est product fits in 64 bits */

/* Every connection carries priv[] whatever its algorithm, so it is sized to this, the largest need. */
_Static_assert(sizeof(struct brisk_cubic) <= sizeof(((struct brisk_cc_state *)0)->priv.words),
               "cubic state fits priv");
_Static_assert(offsetof(struct brisk_cubic, saved) == 0 &&
                   offsetof(struct brisk_cubic, hs) == sizeof(struct brisk_cubic_saved),
               "the undo copy leads, the per-ACK state follows");

/* The state is a member of the connection's priv union (cc.h): the per-ACK code works on it in place; the
 * rare events (a loss, an RTO, an undo) take a copy and put it back whole. */
static void load(const struct brisk_cc_state *s, struct brisk_cubic *c)
{
    *c = s->priv.cubic;
}

static void store(struct brisk_cc_state *s, const struct brisk_cubic *c)
{
    s->priv.cubic = *c;
}

/* floor(cbrt(x)), bit by bit: three bits of x per bit of the root. */
uint64_t brisk_cc_icbrt64(uint64_t x)
{
    uint64_t y = 0;
    for (int sh = 63; sh >= 0; sh -= 3) {
        y *= 2;
        uint64_t b = 3 * y * (y + 1) + 1;
        if ((x >> sh) >= b) { /* x >= b << sh without overflowing */
            x -= b << sh;
            y++;
        }
    }
    return y;
}

/* ns -> curve units and back, rounded to nearest so that a value survives the round trip. */
static uint64_t ns_to_units(uint64_t ns)
{
    if (ns >= (UINT64_MAX >> T_SHIFT) - NSEC_PER_SEC)
        return UINT64_MAX >> 1; /* 52 days and more: far past any K, so the curve saturates */
    return ((ns << T_SHIFT) + NSEC_PER_SEC / 2) / NSEC_PER_SEC;
}

static uint64_t units_to_ns(uint64_t u)
{
    return (u * NSEC_PER_SEC + (1ull << (T_SHIFT - 1))) >> T_SHIFT; /* u < 2^22: no overflow */
}

uint64_t brisk_cc_cubic_k(uint32_t mss, uint32_t w_max, uint32_t cwnd_epoch)
{
    if (cwnd_epoch >= w_max)
        return 0;
    if (mss == 0)
        mss = 1;
    /* K^3 in units^3 = (delta / mss segments) / C * 2^(3 T_SHIFT); delta / mss carries 20 fractional bits. */
    uint64_t q = ((uint64_t)(w_max - cwnd_epoch) << 20) / mss;
    uint64_t lim = (UINT64_MAX >> (3 * T_SHIFT - 20)) / C_DEN;
    uint64_t k3 = q > lim ? UINT64_MAX : (q * C_DEN / C_NUM) << (3 * T_SHIFT - 20);
    uint64_t ku = brisk_cc_icbrt64(k3);
    if (ku > T_MAX_UNITS)
        ku = T_MAX_UNITS;
    return units_to_ns(ku);
}

uint32_t brisk_cc_cubic_window(uint32_t mss, uint32_t w_max, uint64_t k, uint64_t t)
{
    uint64_t tu = ns_to_units(t), ku = ns_to_units(k);
    int below = tu < ku;
    uint64_t d = below ? ku - tu : tu - ku;
    if (d > T_MAX_UNITS)
        d = T_MAX_UNITS;
    uint64_t cube = d * d * d; /* < 2^63 */
    uint64_t seg_fx = (cube / C_DEN * C_NUM) >> (3 * T_SHIFT - SEG_FRAC_SHIFT);
    uint64_t off = (seg_fx * (mss ? mss : 1)) >> SEG_FRAC_SHIFT; /* < 2^39 * 2^32 / 2^10: fits */
    if (below)
        return off >= w_max ? 0 : (uint32_t)(w_max - off);
    return brisk_cc_add(w_max, off);
}

static void cubic_init(struct brisk_cc_state *s, uint32_t mss, uint32_t initial_cwnd_segs)
{
    memset(s, 0, sizeof(*s));
    s->mss = mss ? mss : 1;
    s->cwnd = brisk_cc_initial_window(s->mss, initial_cwnd_segs);
    s->ssthresh = UINT32_MAX;
    s->abc_limit = BRISK_CC_ABC_L;
    struct brisk_cubic c;
    memset(&c, 0, sizeof(c));
    brisk_hystart_init(&c.hs);
    store(s, &c);
}

/* Starts a congestion-avoidance epoch at `now` with the current cwnd (RFC 9438 4.2). */
static void epoch_start(struct brisk_cc_state *s, struct brisk_cubic *c, uint64_t now)
{
    c->epoch = 1;
    c->t_epoch = now;
    c->cwnd_epoch = s->cwnd;
    if (c->w_max <= s->cwnd) {
        /* No loss above us to return to (HyStart++ exit, after an RTO, or the window grew past W_max in
         * slow start): the curve starts convex at this window (4.8, 4.10). */
        c->w_max = s->cwnd;
        c->k = 0;
    } else {
        c->k = brisk_cc_cubic_k(s->mss, c->w_max, s->cwnd);
    }
    c->w_est = (uint64_t)s->cwnd << WEST_SHIFT;
    s->bytes_acked_ca = 0;
}

static void cubic_cong_avoid(struct brisk_cc_state *s, struct brisk_cubic *c, uint32_t acked, uint64_t now)
{
    if (!c->epoch)
        epoch_start(s, c, now);
    uint64_t t = now > c->t_epoch ? now - c->t_epoch : 0;

    /* W_est += alpha_cubic * acked / cwnd (in segments: the same in bytes, times SMSS), RFC 9438 4.3. */
    uint64_t a = acked < ACKED_MAX ? acked : ACKED_MAX;
    uint64_t num = a * s->mss << WEST_SHIFT;
    if ((c->w_est >> WEST_SHIFT) >= c->cwnd_prior)
        c->w_est += num / s->cwnd; /* alpha_cubic = 1 once W_est has reached cwnd_prior */
    else
        c->w_est += num * ALPHA_NUM / ((uint64_t)ALPHA_DEN * s->cwnd);
    uint64_t w_est = c->w_est >> WEST_SHIFT;

    uint32_t w_cubic = brisk_cc_cubic_window(s->mss, c->w_max, c->k, t);
    if (w_cubic < w_est) {
        /* Reno-friendly region: do at least what Reno would. */
        if (w_est > s->cwnd)
            s->cwnd = w_est > UINT32_MAX ? UINT32_MAX : (uint32_t)w_est;
        return;
    }
    /* Concave or convex region: head for where the curve will be one RTT from now, at most 1.5 cwnd. */
    uint64_t target = brisk_cc_cubic_window(s->mss, c->w_max, c->k, t + c->srtt);
    uint64_t cap = (uint64_t)s->cwnd + s->cwnd / 2;
    if (target > cap)
        target = cap;
    if (target <= s->cwnd)
        return;
    uint64_t w = (uint64_t)s->cwnd * s->mss / (target - s->cwnd);
    brisk_cc_cong_avoid(s, w > UINT32_MAX ? UINT32_MAX : (uint32_t)w, acked);
}

static void cubic_on_ack(struct brisk_cc_state *s, uint32_t acked, uint32_t flight, uint64_t rtt,
                         int app_limited, uint64_t now)
{
    if (s->in_recovery || acked == 0)
        return; /* recovery ACKs go through on_recovery_ack */
    struct brisk_cubic *c = &s->priv.cubic;
    s->in_loss = 0;
    if (rtt)
        c->srtt = c->srtt ? c->srtt - c->srtt / 8 + rtt / 8 : rtt;

    enum brisk_hystart_phase phase = BRISK_HYSTART_DONE;
    if (s->ssthresh == UINT32_MAX && c->hs.phase != BRISK_HYSTART_DONE) { /* initial slow start only */
        /* The round marker: bytes still unacknowledged up to SND.NXT. */
        uint32_t outstanding = s->seq_valid ? s->snd_nxt - s->snd_una : (flight > acked ? flight - acked : 0);
        phase = brisk_hystart_on_ack(&c->hs, acked, outstanding, rtt);
        if (phase == BRISK_HYSTART_DONE)
            s->ssthresh = s->cwnd; /* RFC 9406 4.2: CSS_ROUNDS of CSS, enter congestion avoidance */
    }

    if (app_limited) {
        /* No growth, and the time until the window is used again does not count towards t. */
        if (!c->app_limited) {
            c->app_limited = 1;
            c->app_limited_since = now;
        }
        return;
    }
    if (c->app_limited) {
        if (c->epoch && now > c->app_limited_since)
            c->t_epoch += now - c->app_limited_since;
        c->app_limited = 0;
    }

    if (s->cwnd < s->ssthresh) {
        if (phase == BRISK_HYSTART_CSS) {
            /* A quarter of what slow start would have credited, counted the same way. */
            uint32_t inc = brisk_cc_ss_increase(s, acked);
            s->cwnd = brisk_cc_add(s->cwnd, brisk_hystart_css_increase(inc));
            if (s->cwnd > s->ssthresh)
                s->cwnd = s->ssthresh;
            return;
        }
        acked = brisk_cc_slow_start(s, acked);
        if (acked == 0)
            return;
    }
    cubic_cong_avoid(s, c, acked, now);
}

static void save_for_undo(const struct brisk_cc_state *s, struct brisk_cubic *c)
{
    c->saved = (struct brisk_cubic_saved){.k = c->k,
                                    .t_epoch = c->t_epoch,
                                    .w_est = c->w_est,
                                    .cwnd = s->cwnd,
                                    .ssthresh = s->ssthresh,
                                    .w_max = c->w_max,
                                    .cwnd_prior = c->cwnd_prior,
                                    .cwnd_epoch = c->cwnd_epoch,
                                    .epoch = c->epoch,
                                    .hystart_phase = (uint8_t)c->hs.phase,
                                    .valid = 1};
}

/* RFC 9438 4.6: ssthresh = max(FlightSize * beta_cubic, 2 SMSS). */
static uint32_t cubic_ssthresh(uint32_t flight, uint32_t mss)
{
    uint64_t v = (uint64_t)flight * BETA_NUM / BETA_DEN;
    uint64_t floor = 2 * (uint64_t)mss;
    v = v > floor ? v : floor;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The reduction common to a loss in recovery and an RTO: remember where it happened (4.6, 4.7). */
static void cubic_reduce(struct brisk_cc_state *s, struct brisk_cubic *c)
{
    c->cwnd_prior = s->cwnd;
    if (s->cwnd < c->w_max) /* fast convergence: W_max = cwnd (1 + beta) / 2 */
        c->w_max = (uint32_t)((uint64_t)s->cwnd * (BETA_DEN + BETA_NUM) / (2 * BETA_DEN));
    else
        c->w_max = s->cwnd;
    c->epoch = 0;
    c->app_limited = 0;
    brisk_hystart_stop(&c->hs);
}

static void cubic_on_enter_recovery(struct brisk_cc_state *s, uint32_t flight, uint32_t snd_nxt, uint64_t now)
{
    (void)now;
    if (s->in_recovery)
        return; /* one reduction per window of data */
    struct brisk_cubic c;
    load(s, &c);
    save_for_undo(s, &c);
    cubic_reduce(s, &c);
    brisk_cc_recovery_enter(s, cubic_ssthresh(flight, s->mss), snd_nxt);
    store(s, &c);
}

static void cubic_on_rto(struct brisk_cc_state *s, uint32_t flight, uint64_t now)
{
    (void)now;
    struct brisk_cubic c;
    load(s, &c);
    if (!s->in_loss) {
        save_for_undo(s, &c);
        cubic_reduce(s, &c);
    }
    /* After a timeout the next epoch starts at the window slow start reaches, with K = 0 (4.8). */
    c.w_max = 0;
    c.epoch = 0;
    brisk_cc_rto_collapse(s, cubic_ssthresh(flight, s->mss));
    store(s, &c);
}

static void cubic_on_idle_restart(struct brisk_cc_state *s, uint32_t initial_cwnd_segs)
{
    struct brisk_cubic c;
    load(s, &c);
    brisk_cc_idle_restart(s, initial_cwnd_segs);
    /* The idle time must not count towards t (RFC 9438 5.8): a new epoch begins when congestion avoidance
     * resumes, from the window it resumes at, towards the same W_max. */
    c.epoch = 0;
    c.app_limited = 0;
    store(s, &c);
}

static void cubic_on_undo(struct brisk_cc_state *s, uint64_t now)
{
    (void)now;
    struct brisk_cubic c;
    load(s, &c);
    if (!c.saved.valid)
        return;
    const struct brisk_cubic_saved *v = &c.saved;
    if (s->cwnd < v->cwnd)
        s->cwnd = v->cwnd;
    if (s->ssthresh < v->ssthresh)
        s->ssthresh = v->ssthresh;
    c.w_max = v->w_max;
    c.cwnd_prior = v->cwnd_prior;
    c.cwnd_epoch = v->cwnd_epoch;
    c.k = v->k;
    c.t_epoch = v->t_epoch;
    c.w_est = v->w_est;
    c.epoch = v->epoch;
    c.hs.phase = v->hystart_phase;
    c.saved.valid = 0;
    s->in_recovery = 0;
    s->in_loss = 0;
    s->bytes_acked_ca = 0;
    store(s, &c);
}

void brisk_cc_cubic_get_info(const struct brisk_cc_state *s, struct brisk_cc_cubic_info *out)
{
    struct brisk_cubic c;
    load(s, &c);
    out->w_max = c.w_max;
    out->cwnd_prior = c.cwnd_prior;
    out->cwnd_epoch = c.cwnd_epoch;
    uint64_t w_est = c.w_est >> WEST_SHIFT;
    out->w_est = w_est > UINT32_MAX ? UINT32_MAX : (uint32_t)w_est;
    out->k = c.k;
    out->t_epoch = c.epoch ? c.t_epoch : 0;
    out->srtt = c.srtt;
    out->hystart = (int)c.hs.phase;
}

const struct brisk_cc_ops brisk_cc_cubic = {
    .name = "cubic",
    .init = cubic_init,
    .on_ack = cubic_on_ack,
    .on_enter_recovery = cubic_on_enter_recovery,
    .on_recovery_ack = brisk_cc_op_recovery_ack,
    .on_exit_recovery = brisk_cc_op_exit_recovery, /* the epoch starts with the next ACK */
    .on_rto = cubic_on_rto,
    .on_idle_restart = cubic_on_idle_restart,
    .on_undo = cubic_on_undo,
};
