/*
 * rtt.h — TCP's round-trip-time estimator and retransmission timeout (RFC 6298, RFC 7323 section 4).
 *
 * One struct brisk_rtt per connection. The connection feeds it RTT samples it has already validated (Karn's
 * algorithm, RFC 6298 section 3, or an RFC 7323 timestamp echo) together with the current time; the
 * estimator keeps SRTT, RTTVAR, the base RTO, a windowed minimum RTT and the exponential backoff — by RFC
 * 6298's equations, or by Linux 6.x's (brisk_rtt_use_linux, the linux-* profiles). It never reads a clock
 * and never allocates. All times are uint64 nanoseconds. See rtt.c for the arithmetic.
 */
#ifndef BRISK_TCP_RTT_H
#define BRISK_TCP_RTT_H

#include <stdint.h>

#include "brisk/brisk.h"

/* G, the clock granularity of RFC 6298 section 2: brisk's clock is in ns, but 1 us keeps RTO > SRTT by a
 * meaningful margin when RTTVAR decays to nothing on a perfectly steady path. */
#define BRISK_RTT_GRANULARITY (1 * BRISK_NSEC_PER_USEC)

/* The RTO used for data after the handshake needed a retransmission and gave no RTT sample (RFC 6298 5.7). */
#define BRISK_RTT_SYN_FALLBACK (3 * BRISK_NSEC_PER_SEC)

/* Default window of the min-RTT filter (Linux's net.ipv4.tcp_min_rtt_wlen): a path's propagation delay
 * changes rarely, and a long window keeps min_rtt from creeping up to a standing queue's delay. */
#define BRISK_RTT_MIN_RTT_WIN_DEFAULT (300 * BRISK_NSEC_PER_SEC)

/* Samples are clamped to [1 ns, BRISK_RTT_SAMPLE_MAX] (about 4.9 hours). Anything longer is not a round trip;
 * the bound is what lets the fixed-point arithmetic in rtt.c stay inside 64 bits. */
#define BRISK_RTT_SAMPLE_MAX (UINT64_C(1) << 44)

/* Upper bound on `expected` of brisk_rtt_sample_n(): beyond this the gains would be too small to matter. */
#define BRISK_RTT_EXPECTED_MAX 65536u

/* One entry of the min-RTT filter (private). */
struct brisk_rtt_minsample {
    uint64_t t; /* when it was measured */
    uint64_t v; /* the RTT */
};

struct brisk_rtt {
    uint64_t rto;       /* base RTO (before backoff), ns; always within [rto_min, rto_max] */
    uint64_t srtt_fp;   /* SRTT in units of 2^-16 ns: brisk_rtt_srtt() rounds it */
    uint64_t rttvar_fp; /* RTTVAR in units of 2^-16 ns: brisk_rtt_rttvar() rounds it (Linux: mdev) */
    /* From settings; min_rtt_win may be changed after init. */
    uint64_t rto_min, rto_max, min_rtt_win;
    /* Linux's estimator only (brisk_rtt_use_linux): the RTO's variance term and the round it decays by. */
    uint32_t rttvar_us;   /* Linux rttvar_us: RTO = SRTT + this, never below rto_min */
    uint32_t mdev_max_us; /* Linux mdev_max_us: the largest 4 x mdev of the current round */
    uint32_t rtt_seq;     /* Linux rtt_seq: snd_nxt when the current round began */
    uint8_t samples;      /* samples taken, saturating at 255: only whether there was one matters */
    uint8_t backoff;      /* exponential backoff shift (RFC 6298 5.5); brisk_rtt_rto() applies it */
    uint8_t syn_rtx;      /* brisk_rtt_syn_timeout() was called (private) */
    uint8_t linux_est;    /* Linux's estimator instead of RFC 6298's (brisk_rtt_use_linux) */
    struct brisk_rtt_minsample minf[3]; /* private: best, second best, third best, in increasing time */
};

/* Smoothed RTT, ns (the fixed-point state rounded); 0 before the first sample. */
static inline uint64_t brisk_rtt_srtt(const struct brisk_rtt *r)
{
    return (r->srtt_fp + (UINT64_C(1) << 15)) >> 16;
}

/* RTT variation, ns (rounded likewise). */
static inline uint64_t brisk_rtt_rttvar(const struct brisk_rtt *r)
{
    return (r->rttvar_fp + (UINT64_C(1) << 15)) >> 16;
}

/* Minimum RTT over the last min_rtt_win ns (3-sample windowed min filter); 0 before the first sample. Updated
 * by samples only: it is the minimum as of the last sample. */
static inline uint64_t brisk_rtt_min(const struct brisk_rtt *r)
{
    return r->minf[0].v;
}

/* Initialises the estimator with no sample: RTO = rto_initial (RFC 6298 2.1 recommends 1 s), clamped to
 * [rto_min, rto_max]; backoff 0; min_rtt_win = BRISK_RTT_MIN_RTT_WIN_DEFAULT. If rto_max < rto_min, rto_max
 * is raised to rto_min (the floor wins). */
void brisk_rtt_init(struct brisk_rtt *r, uint64_t rto_initial, uint64_t rto_min, uint64_t rto_max);

/* Takes one RTT sample `rtt` measured at `now` (RFC 6298 2.2-2.3): the first sets SRTT = R, RTTVAR = R/2;
 * later ones RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R. RTO = SRTT + max(G, 4
 * RTTVAR) clamped to [rto_min, rto_max]. Resets the backoff to 0 (RFC 6298 5.7: a new ACK). The caller
 * applies Karn's algorithm: no sample from a retransmitted segment unless timestamps make it unambiguous. */
void brisk_rtt_sample(struct brisk_rtt *r, uint64_t rtt, uint64_t now);

/* The same with the gains divided by `expected` (alpha' = 1/(8 expected), beta' = 1/(4 expected)): RFC 7323
 * appendix G, for timestamp-based samples taken on every ACK, so SRTT keeps about one RTT's worth of history
 * however many samples a window yields. `expected` is clamped to [1, BRISK_RTT_EXPECTED_MAX]; 1 is exactly
 * brisk_rtt_sample(). With Linux's estimator (brisk_rtt_use_linux) both are a sample that ends the current
 * round and ignore `expected`: brisk_rtt_sample_ack() is the one that knows the round. */
void brisk_rtt_sample_n(struct brisk_rtt *r, uint64_t rtt, uint64_t now, uint32_t expected);

/* Switches the estimator to Linux 6.x's (tcp_rtt_estimator=linux: the linux-* profiles). Call right after
 * brisk_rtt_init, before any sample. From then on samples follow Linux's tcp_rtt_estimator in integer
 * microseconds: SRTT with gain 1/8; mdev, the mean deviation, with gain 1/4 (1/32 when the sample is below
 * SRTT); the RTO's variance term rttvar is the largest 4 x mdev of each round trip (a round ends when
 * snd_una passes the snd_nxt it began at), never below rto_min, and decays by a quarter of its excess each
 * round; RTO = SRTT + rttvar rounded up to whole milliseconds (Linux's jiffies), at most rto_max. The first
 * sample sets SRTT = R, mdev = R / 2, rttvar = max(2 R, rto_min). No RFC 7323 appendix G gains (Linux takes
 * one sample per ACK with the full gains). brisk_rtt_rttvar() then reads mdev, as Linux's tcpi_rttvar. */
void brisk_rtt_use_linux(struct brisk_rtt *r);

/* The sample of an ACK that advanced snd_una to `snd_una` while snd_nxt was `snd_nxt`: `rtt` for SRTT and
 * RTTVAR, `min_rtt` for the min-RTT filter (Linux measures the first from the oldest segment the ACK covers,
 * the second from the newest; brisk passes the newest for both), `expected` as for brisk_rtt_sample_n. With
 * Linux's estimator the sequence numbers delimit its rounds; RFC 6298's ignores them. */
void brisk_rtt_sample_ack(struct brisk_rtt *r, uint64_t rtt, uint64_t min_rtt, uint64_t now,
                          uint32_t expected, uint32_t snd_una, uint32_t snd_nxt);

/* RFC 7323 appendix G's ExpectedSamples = ceil(flight / (2 mss)) (the 2: delayed ACKs), at least 1. */
uint32_t brisk_rtt_expected_samples(uint32_t flight, uint32_t mss);

/* The RTO to arm: min(rto << backoff, rto_max), without overflow. */
uint64_t brisk_rtt_rto(const struct brisk_rtt *r);

/* Doubles the RTO (RFC 6298 5.5) by incrementing the backoff, unless brisk_rtt_rto() already equals rto_max:
 * the shift saturates there, so it stays small. It is not a retransmission count; the caller keeps its own.
 */
void brisk_rtt_backoff(struct brisk_rtt *r);

/* RFC 6298 5.7, first half. Call each time the SYN's (or the SYN-ACK's) retransmission timer expires. It only
 * records that the handshake needed a retransmission: the handshake's own backoff (1 s, 2 s, 4 s, ...) goes
 * on unchanged. brisk_rtt_established() applies the consequence. */
void brisk_rtt_syn_timeout(struct brisk_rtt *r);

/* RFC 6298 5.7, second half. Call once, when the handshake completes (data transmission begins). Resets the
 * backoff: the handshake's ACK is a new acknowledgment. If brisk_rtt_syn_timeout() was called and no RTT
 * sample was taken (Karn's algorithm rejects a retransmitted handshake's, timestamps may not), the base RTO
 * becomes max(RTO, 3 s), within [rto_min, rto_max], instead of the aggressive 1 s initial value. A sample
 * taken later replaces it as usual. */
void brisk_rtt_established(struct brisk_rtt *r);

#endif
