/*
 * profiles.c — compatibility profiles: named sets of settings that reproduce historical Linux transmit-path
 * behaviour, for comparison in the lab (docs/design.md, "Settings and compatibility profiles"). A profile is
 * only knobs: the mechanisms that run are brisk's own, configured the way each kernel behaved (see
 * docs/transmit-engine.md for the history each line encodes). None of them paces: Linux paces a
 * flow only under the fq qdisc or when its congestion control asks (BBR), not by default.
 *
 * Where Linux departs from the RFCs outside the transmit path, every linux-* profile takes Linux's side,
 * since all these versions behaved alike there (LINUX_RECEIVE, LINUX_SOCKETS below), and each takes the
 * receive window of Linux 6.x (LINUX_RCVWIN).
 */
#include <string.h>

#include "brisk/brisk.h"

struct profile {
    const char *name;
    const char *help;
    const char *const *sets;
};

/* Receive path and loss recovery where Linux departs from the RFCs, the same in every Linux version these
 * profiles name (docs/recovery.md, "Linux and the RFCs"): recovery without SACK the Linux way, an ACK of
 * unsent data dropped silently in ESTABLISHED (3.x's tcp_ack; 6.x answers it, LINUX_6_INVALID), a SYN-ACK's
 * text discarded, the ACK of the peer's FIN delayed
 * (tcp_fin's pingpong mode), a half-open connection dropped (with a RST) by a SYN in its window
 * (tcp_check_req). */
#define LINUX_RECEIVE                                                                                        \
    "tcp_nosack_prr=1", "tcp_unsent_ack_reply=0", "tcp_synack_data=0", "tcp_fin_delack=1",                   \
        "tcp_synrecv_reset=1"
/* Invalid segments in Linux 6.x: one ACK per 500 ms per connection to out-of-window and PAWS-failed segments,
 * to an ACK of unsent data (measured on 6.18: answered in ESTABLISHED too, with or without text) and as
 * challenge ACK (tcp_invalid_ratelimit, 4.0's ACK-loop mitigation), no stack-wide challenge-ACK limit
 * (tcp_challenge_ack_limit INT_MAX since 6.0; brisk's bound is 2^30), and a RST accepted at RCV.NXT - 1 after
 * a FIN and at the highest SACK edge (tcp_reset_check, 4.x). And SACK compression (4.18; sysctls as on 6.18:
 * tcp_comp_sack_nr 44, delay 1 ms, slack 100 us): past three duplicate ACKs, out-of-order segments share one
 * ACK (src/tcp/ackcomp.c). */
#define LINUX_6_INVALID                                                                                      \
    "tcp_invalid_ratelimit=500ms", "tcp_challenge_ack_limit=1073741824", "tcp_rst_edges=1",                  \
        "tcp_unsent_ack_reply=1", "tcp_comp_sack_nr=44"
/* Connection errors (docs/sockets.md): any ICMP error ends a connect (tcp_v4_err, every version since 2.x),
 * where RFC 1122 §4.2.3.9 lets only hard errors do so; tcp_retries2 is a time, not a count
 * (retransmits_timed_out since 2.6.32), where RFC 1122 §4.2.3.5 allows either. */
#define LINUX_SOCKETS "tcp_syn_icmp_errors=linux", "tcp_retries2_timed=1"
/* The send path where Linux departs from brisk's defaults, the same in every version these profiles name
 * (docs/transmit-engine.md, "Writes, pieces, records and PSH"): PSH on the end of each write and on forced
 * pushes, a TCP_CORK / MSG_MORE tail released by the zero-window probe timer, no segment cut short by the
 * peer's window but by that timer (tcp_snd_wnd_test), segments of at most half the peer's largest window
 * (tcp_bound_to_half_wnd), and a writer woken once a third of its buffer is free (sk_stream_write_space). */
#define LINUX_SEND                                                                                           \
    "tcp_push_each_write=1", "tcp_cork_probe_timer=1", "tcp_sws_partial=0", "tcp_half_window_mss=1",         \
        "tcp_wspace_hysteresis=1"
/* Linux 6.x only, as measured on 6.18 (tests/kernel): every send a GSO packet cut from skb-sized pieces
 * (software GSO on any device), with PSH forced on its last segment (4.9), grown from the next piece
 * (tcp_grow_skb, 6.10), autosized with the min-RTT term (tcp_tso_rtt_log, 5.18). The 3.x profiles keep
 * brisk's segment-by-segment sends, which the lab's TSQ seeds (xen-tsq, mvneta) are calibrated with. */
#define LINUX_6_SEND "tcp_sw_gso=1", "tcp_tso_rtt_log=9"
/* Congestion control and timers where Linux 6.x departs from the RFCs brisk follows (docs/timers.md,
 * docs/recovery.md, "Linux and the RFCs"): slow start counting every segment an ACK covers, Linux's RTO
 * estimator, its TLP and RACK timer arithmetic, its restart after idle, its CUBIC (tcp_cubic.c, with its
 * HyStart; docs/recovery.md). Applied to every linux-* profile as the other groups are, though the 3.x
 * kernels' TLP predates 6.x's rules and RACK came in 4.4 (docs/timers.md). */
#define LINUX_CC_TIMERS                                                                                      \
    "tcp_abc_limit=0", "tcp_rtt_estimator=linux", "tcp_loss_timers=linux", "tcp_slow_start_after_idle=1",    \
        "tcp_cubic=linux", "tcp_recovery_probe=0"
/* The receive window Linux 6.x advertises (docs/receive.md, "The advertised window"): chosen from receive
 * memory as Linux charges it, in Linux's default buffer (tcp_rmem "4096 131072 6291456"; net.core.rmem_max
 * 4 MB since 6.x). Earlier versions computed the memory-to-window ratio from tcp_adv_win_scale instead of
 * measuring it, which the rule here does not reproduce; the 6.x rule stands in for them. */
#define LINUX_RCVWIN "tcp_rcv_window=linux", "tcp_rcvbuf=128K", "tcp_rmem_max=6M", "rmem_max=4M"

static const char *const p_3_12[] = {"tcp_tsq_rule=cap",
                                     "tcp_limit_output_bytes=128K",
                                     "tcp_tsq_shortcut=0",
                                     "tcp_tsq_adaptive=0",
                                     "tcp_autocorking=0",
                                     "tcp_pacing=0",
                                     LINUX_RECEIVE,
                                     LINUX_SOCKETS,
                                     LINUX_SEND,
                                     LINUX_CC_TIMERS,
                                     LINUX_RCVWIN,
                                     NULL};
static const char *const p_3_14_rc2[] = {"tcp_tsq_rule=floor",
                                         "tcp_limit_output_bytes=128K",
                                         "tcp_tsq_shortcut=0",
                                         "tcp_tsq_adaptive=0",
                                         "tcp_autocorking=1",
                                         "tcp_resume_nagle=1",
                                         "tcp_autocork_first_packet=1",
                                         "tcp_pacing=0",
                                         LINUX_RECEIVE,
                                         LINUX_SOCKETS,
                                         LINUX_SEND,
                                         LINUX_CC_TIMERS,
                                         LINUX_RCVWIN,
                                         NULL};
static const char *const p_3_14[] = {"tcp_tsq_rule=floor",
                                     "tcp_limit_output_bytes=128K",
                                     "tcp_tsq_shortcut=0",
                                     "tcp_tsq_adaptive=0",
                                     "tcp_autocorking=1",
                                     "tcp_resume_nagle=0",
                                     "tcp_autocork_first_packet=0",
                                     "tcp_pacing=0",
                                     LINUX_RECEIVE,
                                     LINUX_SOCKETS,
                                     LINUX_SEND,
                                     LINUX_CC_TIMERS,
                                     LINUX_RCVWIN,
                                     NULL};
static const char *const p_3_19[] = {"tcp_tsq_rule=ceiling",
                                     "tcp_limit_output_bytes=128K",
                                     "tcp_tsq_shortcut=0",
                                     "tcp_tsq_adaptive=0",
                                     "tcp_autocorking=1",
                                     "tcp_pacing=0",
                                     LINUX_RECEIVE,
                                     LINUX_SOCKETS,
                                     LINUX_SEND,
                                     LINUX_CC_TIMERS,
                                     LINUX_RCVWIN,
                                     NULL};
static const char *const p_6_x[] = {"tcp_tsq_rule=ceiling",
                                    "tcp_limit_output_bytes=4M",
                                    "tcp_tsq_shortcut=1",
                                    "tcp_tsq_adaptive=0",
                                    "tcp_autocorking=1",
                                    "tcp_pacing=0",
                                    LINUX_RECEIVE,
                                    LINUX_6_INVALID,
                                    LINUX_SOCKETS,
                                    LINUX_SEND,
                                    LINUX_CC_TIMERS,
                                    LINUX_RCVWIN,
                                    LINUX_6_SEND,
                                    "ipfrag_evict=0", /* 4.17 on: full reassembly memory drops fragments */
                                    NULL};
static const char *const p_brisk[] = {NULL};

static const struct profile profiles[] = {
    {"linux-3.12", "static 128 KB TSQ cap, no auto-corking", p_3_12},
    {"linux-3.14-rc2",
     "auto-corking that may hold the first packet and resumes with Nagle on; TSQ floor 128 KB", p_3_14_rc2},
    {"linux-3.14", "auto-corking fixed (a181ceb501b3, bf06200e732d); TSQ max(128 KB, rate x 1 ms)", p_3_14},
    {"linux-3.19", "TSQ min(128 KB, max(2 buffers, rate x 1 ms)): the cap became a ceiling (605ad7f184b6)",
     p_3_19},
    {"linux-6.x", "TSQ ceiling 4 MB, send with at most one segment unacknowledged (f921a4a5bffa)", p_6_x},
    {"brisk", "brisk's defaults: 4 MB ceiling, one-segment shortcut, hold >= 2 x measured completion latency",
     p_brisk},
};

#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

size_t brisk_profiles_count(void)
{
    return NPROFILES;
}

const char *brisk_profile_name(size_t i)
{
    return i < NPROFILES ? profiles[i].name : NULL;
}

const char *brisk_profile_help(size_t i)
{
    return i < NPROFILES ? profiles[i].help : NULL;
}

const char *const *brisk_profile_settings(size_t i)
{
    return i < NPROFILES ? profiles[i].sets : NULL;
}

int brisk_settings_apply_profile(struct brisk_settings *s, const char *name)
{
    if (!s || !name)
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < NPROFILES; i++) {
        if (strcmp(profiles[i].name, name) != 0)
            continue;
        struct brisk_settings t = *s;
        for (const char *const *a = profiles[i].sets; *a; a++) {
            int rc = brisk_settings_set(&t, *a);
            if (rc != BRISK_OK)
                return rc;
        }
        *s = t;
        return BRISK_OK;
    }
    return BRISK_ERR_NOENT;
}
