/*
 * cc_cubic_linux.c — CUBIC as Linux 6.x computes it (tcp_cubic.c), for the linux-* profiles
 * (tcp_cubic=linux).
 *
 * The curve is RFC 9438's, W(t) = C (t - K)^3 + W_max, but Linux's arithmetic departs from the RFC (and from
 * brisk's own cc_cubic.c) in ways a script sees within a few round trips, each measured on Linux 6.18
 * (tests/conformance/cc/):
 *
 *   packets       windows are whole packets; a loss sets ssthresh = max(cwnd x 717 / 1024, 2) from cwnd, not
 *                 the flight, and W_max = cwnd, or cwnd (1024 + 717) / 2048 below the previous W_max (fast
 *                 convergence). Growth is Linux's tcp_cong_avoid_ai: +1 packet per `cnt` packets acked,
 *                 where cnt = cwnd / (target - cwnd) for target = the curve's value, in whole packets
 *                 (rounded down), at t + delay_min; 100 cwnd (almost none) when the target is not above
 *                 cwnd; at most 20 before any loss (no W_max: 5 % per round trip); at least 2 (1.5x per RTT).
 *   time          t counts jiffies (1 ms here, as brisk's other Linux timers) since the epoch began, plus the
 *                 connection's minimum RTT (not the smoothed one) rounded up to a jiffy, in units of 2^-10 s;
 *                 C = 410 / 1024. cnt is recomputed at most once a jiffy, and while cwnd stays the same only
 *                 every HZ / 32 (31 ms). K is an exact cube root here, where Linux has a table lookup and one
 *                 Newton step (within 0.2 %).
 *   idle          the epoch moves forward by the time since the last send whenever new data goes with
 *                 nothing in flight (CA_EVENT_TX_START) — so a sender whose every flight is acknowledged
 *                 before it sends again stays at one point of the curve. brisk sees that moment either on
 *                 the ACK that empties the flight (the data that follows it leaves at once) or on the write
 *                 that finds nothing in flight (on_tx_start, from the connection's restart-after-idle check).
 *   Reno region   tcp_friendliness: a Reno window estimate grows by 1 per (15 cwnd / 8) packets acked (beta
 *                 717: alpha 0.53), and cnt is lowered so cwnd keeps up with it; no switch to alpha = 1 at
 *                 cwnd_prior as in RFC 9438 §4.3.
 *   slow start    Linux's HyStart (hystart.c, brisk_hystart_linux_*): a delay increase over delay_min, or a
 *                 long ACK train, once cwnd >= 16, ends slow start with ssthresh = cwnd. Then the first epoch
 *                 has no W_max: K = 0 and the curve is convex from cwnd, with cnt <= 20.
 *   RTO           ssthresh = 0.7 cwnd (kept if the timeout interrupts a recovery), then every CUBIC variable
 * is reset — W_max, delay_min — and HyStart is armed again for the slow start that follows. undo Linux's
 * tcp_reno_undo_cwnd: the connection restores cwnd and ssthresh (undo.c); the curve starts a new epoch, as in
 * Linux, which resets its epoch on every reduction.
 *
 * The per-ACK path divides by the MSS twice and by cnt once; nothing allocates.
 */
#include "tcp/cc.h"
#include "tcp/hystart.h"

#include <stddef.h>
#include <string.h>

#define NS_PER_MS     1000000ull
#define NS_PER_US     1000ull
#define JIFFY_HZ      1000u /* the jiffy brisk's Linux rules count in (timer.c, rtt.c) */
#define BETA          717u  /* beta_cubic x 1024 */
#define BETA_SCALE    1024u
#define C_SCALED      410u /* C x 1024: bic_scale 41 x 10 */
#define T_SHIFT       10   /* curve time in units of 2^-10 s (Linux's BICTCP_HZ) */
#define RENO_SCALE    15u  /* 8 (1024 + beta) / 3 / (1024 - beta): Reno's +1 per 15/8 cwnd acked */
#define OFFS_MAX      ((1u << 18) - 1) /* |t - K| bound (256 s): C x offs^3 stays in 64 bits */
#define CNT_NO_GROWTH 100u             /* cnt = 100 cwnd when the curve is not above cwnd */
#define CNT_FIRST_MAX 20u              /* before any W_max: at most 1/20 growth per round trip */
#define GSO_MAX_SIZE  65536u           /* Linux's sk_gso_max_size on the TAP and loopback devices */
#define ACK_DELAY_MAX 1000u            /* µs: hystart_ack_delay's cap */

struct lcubic {
    struct brisk_hystart_linux hs;
    uint32_t cnt;         /* packets acked per +1 packet (Linux ca->cnt) */
    uint32_t last_max;    /* packets: W_max (last_max_cwnd), 0 = none */
    uint32_t last_cwnd;   /* cwnd when cnt was last computed */
    uint32_t last_time;   /* jiffy when cnt was last computed */
    uint32_t origin;      /* packets: the plateau of the curve (bic_origin_point) */
    uint32_t k;           /* K in 2^-10 s */
    uint32_t delay_min;   /* µs: the connection's minimum RTT, 0 = none */
    uint32_t epoch_start; /* jiffy: the epoch's start, moved on by idle time */
    uint32_t ack_cnt;     /* packets acked in the epoch, for the Reno estimate */
    uint32_t tcp_cwnd;    /* packets: the Reno estimate */
    uint32_t cwnd_cnt;    /* packets acked towards the next +1 (Linux tp->snd_cwnd_cnt) */
    uint32_t acked_rem;   /* bytes acked short of a whole packet, counted with the next ACK */
    uint32_t srtt_us;     /* smoothed RTT, for HyStart's ACK-train allowance */
    uint32_t lsnd;        /* jiffy of the last send, when the flight drained */
    uint32_t drain_time;  /* jiffy of the ACK that drained it */
    uint8_t epoch;        /* an epoch is running */
    uint8_t drained;      /* the flight drained: the next send is Linux's CA_EVENT_TX_START */
};

_Static_assert(sizeof(struct lcubic) <= sizeof(((struct brisk_cc_state *)0)->priv.words), "lcubic fits priv");

static void load(const struct brisk_cc_state *s, struct lcubic *c)
{
    memcpy(c, s->priv.words, sizeof(*c));
}

static void store(struct brisk_cc_state *s, const struct lcubic *c)
{
    memcpy(s->priv.words, c, sizeof(*c));
}

static uint32_t jiffies(uint64_t now)
{
    return (uint32_t)(now / NS_PER_MS);
}

static uint32_t packets(const struct brisk_cc_state *s)
{
    return s->cwnd / s->mss;
}

static void set_packets(struct brisk_cc_state *s, uint32_t w)
{
    s->cwnd = brisk_cc_add(0, (uint64_t)(w ? w : 1) * s->mss);
}

/* ssthresh after a loss, in packets: max(cwnd beta, 2). */
static uint32_t loss_ssthresh(uint32_t w)
{
    uint32_t v = (uint32_t)((uint64_t)w * BETA / BETA_SCALE);
    return v > 2 ? v : 2;
}

static void lcubic_init(struct brisk_cc_state *s, uint32_t mss, uint32_t initial_cwnd_segs)
{
    memset(s, 0, sizeof(*s));
    s->mss = mss ? mss : 1;
    s->cwnd = brisk_cc_initial_window(s->mss, initial_cwnd_segs);
    s->ssthresh = UINT32_MAX;
    s->abc_limit = BRISK_CC_ABC_L;
    struct lcubic c;
    memset(&c, 0, sizeof(c));
    brisk_hystart_linux_reset(&c.hs, 0, 0, 1);
    store(s, &c);
}

/* The epoch moves on by the time since the last send (capped at `now`): Linux's CA_EVENT_TX_START. */
static void tx_start(struct lcubic *c, uint32_t lsnd, uint32_t now)
{
    c->drained = 0;
    int32_t delta = (int32_t)(now - lsnd);
    if (!c->epoch || delta <= 0)
        return;
    c->epoch_start += (uint32_t)delta;
    if ((int32_t)(c->epoch_start - now) > 0)
        c->epoch_start = now;
}

/* K = cbrt((W_max - cwnd) / C) in 2^-10 s: (W_max - cwnd) x 2^40 / 410, cube-rooted. */
static uint32_t k_of(uint32_t diff)
{
    uint64_t a = (uint64_t)diff * ((1ull << (10 + 3 * T_SHIFT)) / C_SCALED); /* < 2^32 x 2^32 */
    return (uint32_t)brisk_cc_icbrt64(a);
}

/* Linux's bictcp_update: cnt for this ACK of `acked` packets at window w. */
static void update_cnt(struct lcubic *c, uint32_t w, uint32_t acked, uint32_t now)
{
    c->ack_cnt += acked;
    if (c->last_cwnd == w && (int32_t)(now - c->last_time) <= (int32_t)(JIFFY_HZ / 32))
        return;
    if (!(c->epoch && now == c->last_time)) { /* the curve at most once a jiffy */
        c->last_cwnd = w;
        c->last_time = now;
        if (!c->epoch) {
            c->epoch = 1;
            c->epoch_start = now;
            c->ack_cnt = acked;
            c->tcp_cwnd = w;
            if (c->last_max <= w) {
                c->k = 0;
                c->origin = w;
            } else {
                c->k = k_of(c->last_max - w);
                c->origin = c->last_max;
            }
        }
        uint64_t t = (uint32_t)(now - c->epoch_start);
        t += (c->delay_min + 999u) / 1000u; /* usecs_to_jiffies */
        t = (t << T_SHIFT) / JIFFY_HZ;
        int below = t < c->k;
        uint64_t offs = below ? c->k - t : t - c->k;
        if (offs > OFFS_MAX)
            offs = OFFS_MAX;
        uint64_t delta = (C_SCALED * offs * offs * offs) >> (10 + 3 * T_SHIFT);
        uint64_t target = below ? (delta >= c->origin ? 0 : c->origin - delta) : c->origin + delta;
        if (target > w)
            c->cnt = (uint32_t)(w / (target - w));
        else
            c->cnt = (uint32_t)((uint64_t)CNT_NO_GROWTH * w > UINT32_MAX ? UINT32_MAX : CNT_NO_GROWTH * w);
        if (c->last_max == 0 && c->cnt > CNT_FIRST_MAX)
            c->cnt = CNT_FIRST_MAX;
    }
    /* The Reno-friendly estimate, and cnt no larger than keeps up with it. */
    uint32_t per = (uint32_t)(((uint64_t)w * RENO_SCALE) >> 3);
    if (per == 0)
        per = 1;
    if (c->ack_cnt > per) {
        uint32_t n = (c->ack_cnt - 1) / per;
        c->ack_cnt -= n * per;
        c->tcp_cwnd += n;
    }
    if (c->tcp_cwnd > w) {
        uint32_t max_cnt = w / (c->tcp_cwnd - w);
        if (c->cnt > max_cnt)
            c->cnt = max_cnt;
    }
    if (c->cnt < 2)
        c->cnt = 2;
}

/* Linux's tcp_cong_avoid_ai: +1 per cnt packets acked; credit earned at a larger cnt is paid first. */
static uint32_t avoid_ai(struct lcubic *c, uint32_t w, uint32_t acked)
{
    uint32_t cnt = c->cnt ? c->cnt : 1;
    if (c->cwnd_cnt >= cnt) {
        c->cwnd_cnt = 0;
        w++;
    }
    c->cwnd_cnt += acked;
    if (c->cwnd_cnt >= cnt) {
        uint32_t d = c->cwnd_cnt / cnt;
        c->cwnd_cnt -= d * cnt;
        w += d;
    }
    return w;
}

static void lcubic_on_ack(struct brisk_cc_state *s, uint32_t acked, uint32_t flight, uint64_t rtt,
                          int app_limited, uint64_t now)
{
    if (s->in_recovery || acked == 0)
        return;
    struct lcubic c;
    load(s, &c);
    s->in_loss = 0;
    uint32_t j = jiffies(now), now_us = (uint32_t)(now / NS_PER_US);
    uint32_t outstanding = flight > acked ? flight - acked : 0;
    if (c.drained)
        tx_start(&c, c.lsnd, c.drain_time); /* the data after the draining ACK left with it */
    c.hs.acked += acked;

    /* Linux's pkts_acked, before the window grows: delay_min, and HyStart in slow start. */
    if (rtt && !(c.epoch && (int32_t)(j - c.epoch_start) < (int32_t)JIFFY_HZ)) {
        /* (Samples in the first second of an epoch are discarded: right after recovery they are inflated.) */
        uint64_t us64 = rtt / NS_PER_US;
        uint32_t us = us64 == 0 ? 1 : us64 > UINT32_MAX ? UINT32_MAX : (uint32_t)us64;
        if (c.delay_min == 0 || c.delay_min > us)
            c.delay_min = us;
        c.srtt_us = c.srtt_us ? c.srtt_us - c.srtt_us / 8 + us / 8 : us;
        if (!c.hs.found && s->cwnd < s->ssthresh) {
            /* hystart_ack_delay: GSO aggregation at the slow-start pacing rate 2 cwnd / srtt, at most 1 ms.
             */
            uint64_t ack_delay = (uint64_t)GSO_MAX_SIZE * 2 * c.srtt_us / (s->cwnd ? s->cwnd : 1);
            if (ack_delay > ACK_DELAY_MAX)
                ack_delay = ACK_DELAY_MAX;
            if (brisk_hystart_linux_update(&c.hs, packets(s), us, c.delay_min, (uint32_t)ack_delay,
                                           outstanding, now_us))
                s->ssthresh = s->cwnd;
        }
    }

    if (!app_limited) { /* Linux's tcp_is_cwnd_limited: no growth otherwise */
        uint32_t left = acked;
        if (s->cwnd < s->ssthresh)
            left = brisk_cc_slow_start(s, acked);
        if (left) {
            uint64_t bytes = (uint64_t)c.acked_rem + left;
            uint32_t pk = (uint32_t)(bytes / s->mss);
            c.acked_rem = (uint32_t)(bytes % s->mss);
            if (pk) {
                uint32_t w = packets(s);
                update_cnt(&c, w, pk, j);
                uint32_t nw = avoid_ai(&c, w, pk);
                if (nw != w)
                    set_packets(s, nw);
            }
        }
    }
    if (outstanding == 0 && rtt && c.epoch) {
        /* The flight drained: the next new data is sent with nothing in flight. The last send was the
         * newest segment acknowledged, rtt ago. */
        c.drained = 1;
        c.lsnd = jiffies(now > rtt ? now - rtt : 0);
        c.drain_time = j;
    }
    store(s, &c);
}

static void lcubic_on_tx_start(struct brisk_cc_state *s, uint64_t last_tx, uint64_t now)
{
    struct lcubic c;
    load(s, &c);
    tx_start(&c, c.drained ? c.lsnd : jiffies(last_tx), jiffies(now));
    store(s, &c);
}

static void lcubic_on_enter_recovery(struct brisk_cc_state *s, uint32_t prior_cwnd, uint32_t snd_nxt,
                                     uint64_t now)
{
    (void)now;
    if (s->in_recovery)
        return;
    struct lcubic c;
    load(s, &c);
    uint32_t w = prior_cwnd / s->mss;
    c.epoch = 0;
    c.drained = 0;
    if (w < c.last_max) /* fast convergence */
        c.last_max = (uint32_t)((uint64_t)w * (BETA_SCALE + BETA) / (2 * BETA_SCALE));
    else
        c.last_max = w;
    c.cwnd_cnt = 0;
    c.acked_rem = 0;
    brisk_cc_recovery_enter(s, brisk_cc_add(0, (uint64_t)loss_ssthresh(w) * s->mss), snd_nxt);
    store(s, &c);
}

static void lcubic_on_rto(struct brisk_cc_state *s, uint32_t flight, uint64_t now)
{
    struct lcubic c;
    load(s, &c);
    /* tcp_enter_loss: ssthresh from cwnd, but not again inside the recovery or loss episode it ends. */
    uint32_t ssthresh =
        s->in_recovery ? s->ssthresh : brisk_cc_add(0, (uint64_t)loss_ssthresh(packets(s)) * s->mss);
    brisk_cc_rto_collapse(s, ssthresh);
    /* cubictcp_state(TCP_CA_Loss): everything CUBIC learnt is forgotten, HyStart starts over. */
    struct brisk_hystart_linux hs = c.hs;
    memset(&c, 0, sizeof(c));
    c.hs = hs;
    brisk_hystart_linux_reset(&c.hs, flight, (uint32_t)(now / NS_PER_US), 1);
    store(s, &c);
}

static void lcubic_on_idle_restart(struct brisk_cc_state *s, uint32_t initial_cwnd_segs)
{
    brisk_cc_idle_restart(s, initial_cwnd_segs); /* the epoch moves on in on_tx_start */
}

void brisk_cc_cubic_linux_get_info(const struct brisk_cc_state *s, struct brisk_cc_cubic_linux_info *out)
{
    struct lcubic c;
    load(s, &c);
    out->cnt = c.cnt;
    out->last_max = c.last_max;
    out->origin = c.origin;
    out->k = c.k;
    out->delay_min = c.delay_min;
    out->tcp_cwnd = c.tcp_cwnd;
    out->epoch = c.epoch;
    out->hystart_found = c.hs.found;
}

const struct brisk_cc_ops brisk_cc_cubic_linux = {
    .name = "cubic",
    .init = lcubic_init,
    .on_ack = lcubic_on_ack,
    .on_enter_recovery = lcubic_on_enter_recovery,
    .on_recovery_ack = brisk_cc_op_recovery_ack,
    .on_exit_recovery = brisk_cc_op_exit_recovery, /* the epoch starts with the next growth */
    .on_rto = lcubic_on_rto,
    .on_idle_restart = lcubic_on_idle_restart,
    .on_undo = NULL, /* tcp_reno_undo_cwnd: undo.c restores cwnd and ssthresh */
    .on_tx_start = lcubic_on_tx_start,
};
