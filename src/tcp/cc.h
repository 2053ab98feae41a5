/*
 * cc.h — TCP congestion control as an ops table, and the RFC 5681 / RFC 6582 building blocks algorithms
 * share.
 *
 * The connection owns a struct brisk_cc_state and a pointer to the algorithm's const ops; it calls the ops at
 * the events below and reads cwnd / ssthresh back. Algorithms keep anything of their own in priv[]. All sizes
 * are bytes, all times uint64 ns passed in by the caller. Nothing allocates.
 *
 * What the connection decides (not the algorithm): which ACK is a duplicate, when to enter recovery (three
 * duplicate ACKs, or SACK / RACK loss marking, and RFC 6582's check that the ACK is above `recover`), which
 * ACK is partial or full, whether the sender was application-limited, and RTT samples. On an RTO it also
 * records recover = snd_nxt itself (RFC 6582 3.2 step 4), since on_rto() is not given snd_nxt.
 *
 * Call sequence:
 *   init                         once per connection (after the MSS is known)
 *   on_ack                       each ACK advancing snd_una outside fast recovery (also after an RTO)
 *   on_enter_recovery            loss detected by duplicate ACKs / SACK; then, until recovery ends,
 *   on_recovery_ack              each duplicate ACK (dupack = 1) or partial ACK (dupack = 0)
 *   on_exit_recovery             the full ACK (covers `recover`)
 *   on_rto                       the retransmission timer expired (also ends recovery)
 *   on_idle_restart              before sending after an idle period longer than the RTO
 *   on_undo (optional, may be NULL)  the last reduction (recovery or RTO) proved spurious (F-RTO, D-SACK,
 *                                timestamps: RFC 5682 / RFC 3522 / RFC 9438 4.9): restore the window
 *
 * Rounds. Algorithms that work per round trip (HyStart++, RFC 9406) need the end of the current round: the
 * snd_nxt when it began. A connection that knows sequence numbers sets snd_una / snd_nxt in the state and
 * seq_valid = 1 before each on_ack; one that does not leaves seq_valid 0 and the algorithm derives the same
 * marker from the cumulative acknowledged bytes and `flight` (which is snd_nxt - snd_una before the ACK).
 *
 * Algorithms. NewReno (cc_newreno.c) is the helpers below as they stand. CUBIC (cc_cubic.c, RFC 9438 with
 * HyStart++ from hystart.c) computes its own ssthresh and window growth but reuses the slow start,
 * fast-recovery and RTO helpers below with its own ssthresh. PRR (RFC 6937) replaces only the cwnd arithmetic
 * during recovery: the connection calls on_enter_recovery (which sets ssthresh and recover), lets PRR drive
 * cwnd per ACK instead of calling on_recovery_ack, and calls on_exit_recovery at the end.
 */
#ifndef BRISK_TCP_CC_H
#define BRISK_TCP_CC_H

#include <stdint.h>

#include "tcp/cc_cubic.h"

/* Room for the largest algorithm's private state: CUBIC's 160 bytes (each algorithm asserts that it fits). */
#define BRISK_CC_PRIV_WORDS 20

struct brisk_cc_state { /* what every algorithm reads/writes, owned by the connection */
    /* Algorithm-private state. First, so that an algorithm's rarely used private fields can lead (CUBIC's
     * undo copy) and the fields every ACK touches follow on, next to the ones below: a connection places
     * this struct so that its hot part starts a cache line (tcp.h). */
    union {
        uint64_t words[BRISK_CC_PRIV_WORDS];
        struct brisk_cubic cubic; /* cc_cubic.c's, used in place by its per-ACK code */
    } priv;
    uint32_t mss;            /* sender MSS, bytes */
    uint32_t cwnd;           /* congestion window, bytes */
    uint32_t ssthresh;       /* bytes; UINT32_MAX initially (RFC 5681 3.1: "arbitrarily high") */
    uint32_t recover;        /* RFC 6582 "recover": snd_nxt when recovery began */
    uint32_t snd_una;        /* optional, valid when seq_valid: SND.UNA after the ACK passed to on_ack */
    uint32_t snd_nxt;        /* optional, valid when seq_valid: SND.NXT when on_ack is called */
    uint8_t in_recovery;     /* fast recovery in progress */
    uint8_t in_loss;         /* an RTO fired and no ACK has advanced snd_una since: a further RTO (the
                                retransmission was lost too) holds ssthresh (RFC 5681 3.1) */
    uint8_t seq_valid;       /* the connection keeps snd_una / snd_nxt above up to date before on_ack */
    uint8_t abc_limit;       /* slow start credits at most this many SMSS per ACK (RFC 3465's L; init sets
                                BRISK_CC_ABC_L); 0: every whole SMSS acknowledged, uncapped (Linux) */
    uint32_t ss_credit;      /* abc_limit 0: acknowledged bytes short of a whole SMSS, credited later */
    uint64_t bytes_acked_ca; /* appropriate byte counting accumulator in congestion avoidance */
};

/* RFC 3465's L, the slow-start limit init sets (the tcp_abc_limit setting's default). */
#define BRISK_CC_ABC_L 2u

struct brisk_cc_ops {
    const char *name; /* "newreno" */
    /* Sets mss, cwnd = initial_cwnd_segs * mss (RFC 6928 IW10: the caller passes 10 by default; 0 counts as
     * 1), ssthresh = UINT32_MAX, and clears everything else. */
    void (*init)(struct brisk_cc_state *s, uint32_t mss, uint32_t initial_cwnd_segs);
    /* A cumulative ACK advanced snd_una by `acked` bytes, not in recovery. flight = bytes in flight before
     * the ACK, rtt = a sample or 0, app_limited = the sender was not using the window. */
    void (*on_ack)(struct brisk_cc_state *s, uint32_t acked, uint32_t flight, uint64_t rtt, int app_limited,
                   uint64_t now);
    /* Loss detected by duplicate ACKs / SACK: enter fast recovery (RFC 5681 3.2 step 2-3 / RFC 6582).
     * flight = FlightSize, snd_nxt for `recover`. A no-op when already in recovery. */
    void (*on_enter_recovery)(struct brisk_cc_state *s, uint32_t flight, uint32_t snd_nxt, uint64_t now);
    /* In recovery: a duplicate ACK (dupack=1) or a partial ACK acking `acked` bytes (RFC 6582 3.2 step 5). */
    void (*on_recovery_ack)(struct brisk_cc_state *s, uint32_t acked, int dupack, uint32_t flight,
                            uint64_t now);
    /* Recovery ended by a full ACK (RFC 6582 3.2 step 3: cwnd = min(ssthresh, max(flight, mss) + mss)), where
     * flight is the FlightSize after the full ACK was applied. */
    void (*on_exit_recovery)(struct brisk_cc_state *s, uint32_t flight, uint64_t now);
    /* Retransmission timeout (RFC 5681 3.1 eq. 4: ssthresh = max(flight/2, 2*mss); cwnd = 1 mss). Ends
     * recovery. flight = FlightSize when the timer fired. */
    void (*on_rto)(struct brisk_cc_state *s, uint32_t flight, uint64_t now);
    /* After an idle period longer than RTO (RFC 5681 4.1 restart window: cwnd = min(IW, cwnd)). */
    void (*on_idle_restart)(struct brisk_cc_state *s, uint32_t initial_cwnd_segs);
    /* Optional (NULL when the algorithm cannot undo): the congestion event that last reduced cwnd was
     * spurious. Restores cwnd, ssthresh and the algorithm's own state to what they were before it, and ends
     * recovery / loss state. */
    void (*on_undo)(struct brisk_cc_state *s, uint64_t now);
    /* Optional (may be NULL): new data is about to be sent with nothing in flight, the last data having
     * gone at last_tx (Linux's CA_EVENT_TX_START; the linux-* profiles' restart-after-idle check calls it).
     */
    void (*on_tx_start)(struct brisk_cc_state *s, uint64_t last_tx, uint64_t now);
};

/* The algorithm called `name` ("newreno"), NULL if unknown or name is NULL. */
const struct brisk_cc_ops *brisk_cc_find(const char *name);

/* The known algorithms, for tools and settings validation: i in [0, brisk_cc_count()). NULL past the end. */
unsigned brisk_cc_count(void);
const struct brisk_cc_ops *brisk_cc_get(unsigned i);

/* The algorithm the stack setting tcp_congestion names (cc_select.c); NewReno if it names none. */
struct brisk_settings;
const struct brisk_cc_ops *brisk_cc_for_stack(const struct brisk_settings *s);

extern const struct brisk_cc_ops brisk_cc_newreno;
extern const struct brisk_cc_ops brisk_cc_cubic;
/* CUBIC as Linux 6.x computes it (cc_cubic_linux.c): what the name "cubic" selects when the tcp_cubic setting
 * is "linux" (the linux-* profiles; cc_select.c). Not in the registry: the setting chooses between the two.
 */
extern const struct brisk_cc_ops brisk_cc_cubic_linux;

/* CUBIC's state (cc_cubic.c), for tests and connection info. Windows in bytes, times in ns. */
struct brisk_cc_cubic_info {
    uint32_t w_max;      /* RFC 9438 W_max; 0 before the first congestion event or after an RTO */
    uint32_t cwnd_prior; /* cwnd just before the last reduction */
    uint32_t cwnd_epoch; /* cwnd when the current congestion-avoidance epoch began */
    uint32_t w_est;      /* Reno-friendly estimate W_est (whole bytes) */
    uint64_t k;          /* K of the current epoch, ns */
    uint64_t t_epoch;    /* start of the current epoch (shifted by application-limited time); 0 = none */
    uint64_t srtt;       /* the RTT CUBIC uses for W_cubic(t + RTT), ns (0 = no sample yet) */
    int hystart;         /* enum brisk_hystart_phase of the initial slow start */
};
/* Fills *out from a state whose algorithm is brisk_cc_cubic. */
void brisk_cc_cubic_get_info(const struct brisk_cc_state *s, struct brisk_cc_cubic_info *out);
/* Linux CUBIC's state (cc_cubic_linux.c), in packets as Linux keeps it, for tests. */
struct brisk_cc_cubic_linux_info {
    uint32_t cnt;       /* packets acked per +1 packet */
    uint32_t last_max;  /* W_max, packets; 0 = none */
    uint32_t origin;    /* the curve's plateau, packets */
    uint32_t k;         /* K in 2^-10 s */
    uint32_t delay_min; /* µs */
    uint32_t tcp_cwnd;  /* the Reno estimate, packets */
    int epoch;          /* an epoch is running */
    int hystart_found;  /* HyStart ended slow start (or will not act again until an RTO) */
};
/* Fills *out from a state whose algorithm is brisk_cc_cubic_linux. */
void brisk_cc_cubic_linux_get_info(const struct brisk_cc_state *s, struct brisk_cc_cubic_linux_info *out);
/* floor(cbrt(x)), exact. */
uint64_t brisk_cc_icbrt64(uint64_t x);
/* W_cubic(t) = C (t - K)^3 + W_max in bytes for the given mss, w_max (bytes), k and t (ns), computed with the
 * fixed-point arithmetic CUBIC uses on its per-ACK path; saturates at 0 and UINT32_MAX. */
uint32_t brisk_cc_cubic_window(uint32_t mss, uint32_t w_max, uint64_t k, uint64_t t);
/* K = cbrt((w_max - cwnd_epoch) / C) in ns (RFC 9438 eq. 2), 0 when cwnd_epoch >= w_max. */
uint64_t brisk_cc_cubic_k(uint32_t mss, uint32_t w_max, uint32_t cwnd_epoch);

/* ---------------------------------------------------------------------------------------------------------
 * Building blocks (cc.c), so every algorithm applies RFC 5681 / 6582 the same way.
 * ------------------------------------------------------------------------------------------------------- */

/* a + b, saturating at UINT32_MAX: windows never wrap. */
static inline uint32_t brisk_cc_add(uint32_t a, uint64_t b)
{
    uint64_t v = (uint64_t)a + b;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* RFC 5681 3.1 eq. (4): max(flight / 2, 2 * mss). */
uint32_t brisk_cc_loss_ssthresh(uint32_t flight, uint32_t mss);

/* The slow-start increase an ACK of `acked` bytes earns: with abc_limit L > 0, appropriate byte counting
 * (RFC 3465 2.2): min(acked, L * mss); with abc_limit 0, Linux's packet counting (tcp_slow_start: cwnd grows
 * by every segment the ACK covers): every whole mss of acked bytes, the remainder kept in ss_credit for the
 * next ACK. Consumes the credit it uses; does not touch cwnd. */
uint32_t brisk_cc_ss_increase(struct brisk_cc_state *s, uint32_t acked);

/* Slow start: cwnd += brisk_cc_ss_increase(acked), but not beyond ssthresh. Returns the acked bytes left over
 * once cwnd reached ssthresh (0 if it did not), for congestion avoidance to count (Linux hands the surplus
 * on the same way); bytes beyond RFC 3465's L limit are not left over, they are simply not credited. Call
 * only when cwnd < ssthresh. */
uint32_t brisk_cc_slow_start(struct brisk_cc_state *s, uint32_t acked);

/* Additive increase by byte counting: adds `acked` to bytes_acked_ca and, for each `w` bytes it holds (w = 0
 * counts as 1), moves w bytes out and grows cwnd by one mss. With w = cwnd this is RFC 3465 2.1 / RFC 5681
 * 3.1's one MSS per window of data acknowledged. */
void brisk_cc_cong_avoid(struct brisk_cc_state *s, uint32_t w, uint32_t acked);

/* Enters fast recovery with the given ssthresh: cwnd = ssthresh + 3 mss (RFC 5681 3.2 step 3), recover =
 * snd_nxt (RFC 6582 3.2 step 2), in_recovery = 1, in_loss = 0, bytes_acked_ca = 0. */
void brisk_cc_recovery_enter(struct brisk_cc_state *s, uint32_t ssthresh, uint32_t snd_nxt);

/* An ACK during fast recovery. A duplicate ACK inflates cwnd by one mss (RFC 5681 3.2 step 4). A partial ACK
 * of `acked` bytes deflates cwnd by `acked` and adds one mss back if acked >= mss (RFC 6582 3.2 step 5); cwnd
 * never drops below one mss (the RFC assumes it cannot; with odd flight accounting it could). */
void brisk_cc_recovery_ack(struct brisk_cc_state *s, uint32_t acked, int dupack);

/* Leaves fast recovery on the full ACK: cwnd = min(ssthresh, max(flight, mss) + mss) (RFC 6582 3.2 step 3,
 * option 1, which avoids the burst "cwnd = ssthresh" could release), at least one mss. */
void brisk_cc_recovery_exit(struct brisk_cc_state *s, uint32_t flight);
/* The two above as ops (on_recovery_ack, on_exit_recovery), acting only while in recovery: the standard
 * RFC 5681 / 6582 recovery arithmetic that NewReno and CUBIC share. */
void brisk_cc_op_recovery_ack(struct brisk_cc_state *s, uint32_t acked, int dupack, uint32_t flight,
                              uint64_t now);
void brisk_cc_op_exit_recovery(struct brisk_cc_state *s, uint32_t flight, uint64_t now);

/* An RTO: ssthresh = `ssthresh` unless in_loss already (a repeated timeout of the retransmission holds
 * ssthresh: RFC 5681 3.1, whose FlightSize would by now be tiny), then cwnd = one mss (the loss window),
 * in_loss = 1, in_recovery = 0, bytes_acked_ca = 0. */
void brisk_cc_rto_collapse(struct brisk_cc_state *s, uint32_t ssthresh);

/* RFC 5681 4.1 restart window: cwnd = min(IW, cwnd) with IW = initial_cwnd_segs * mss. When that shrinks
 * cwnd, ssthresh first becomes max(ssthresh, 3/4 cwnd), as in RFC 2861 section 3 and Linux, so slow start
 * climbs straight back to the operating point the connection had rather than crawling up from IW in
 * congestion avoidance. */
void brisk_cc_idle_restart(struct brisk_cc_state *s, uint32_t initial_cwnd_segs);

/* Linux's tcp_cwnd_restart, in whole segments as Linux counts: ssthresh first becomes max(ssthresh, 3/4
 * cwnd) (tcp_current_ssthresh; unchanged in recovery), then cwnd is halved `halvings` times (once per RTO of
 * idle time beyond the first) but not below the restart window min(IW, cwnd). The algorithm's own state is
 * left alone (Linux's CUBIC only shifts its epoch by the idle time, which brisk's does as the sender stops
 * being application-limited). */
void brisk_cc_idle_restart_halving(struct brisk_cc_state *s, uint32_t initial_cwnd_segs, uint32_t halvings);

/* cwnd = initial_cwnd_segs * mss (0 segments count as 1, mss 0 as 1), saturating. */
uint32_t brisk_cc_initial_window(uint32_t mss, uint32_t initial_cwnd_segs);

#endif
