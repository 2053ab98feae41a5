/*
 * recovery.h (internal) — loss recovery: the episode state, PRR, recovery without SACK and undo (recovery.c,
 * prr.c, undo.c)
 */
#ifndef BRISK_TCP_RECOVERY_H
#define BRISK_TCP_RECOVERY_H

#include <stdint.h>
#include "brisk/brisk.h"
#include "wire/tcp.h"

/* Undo (undo.c): the window before the current episode's reduction, and its retransmissions. */
struct tcp_undo {
    uint8_t frto;   /* F-RTO: the first ACK after a timeout decides whether it was spurious */
    uint8_t active; /* an episode's reduction may still be undone */
    uint8_t eifel;  /* the episode retransmitted, and no ACK since has shown a repair (undo.c) */
    uint32_t prior_cwnd, prior_ssthresh;
    uint32_t retrans; /* retransmissions of the episode not yet reported duplicate by a D-SACK */
};

/* PRR (prr.c, RFC 6937): during recovery, how much was delivered and sent. */
struct tcp_prr {
    uint32_t recover_fs; /* flight when recovery began */
    uint32_t delivered;  /* bytes newly acked or SACKed since */
    uint32_t out;        /* bytes sent since */
};

/* Recovery without SACK the Linux way (recovery.c, tcp_nosack_prr): the segment at snd.una is marked
 * lost, and was retransmitted since (Linux's lost_out and retrans_out for a connection without SACK). */
struct tcp_reno {
    uint8_t lost;
    uint8_t retrans;
};

/* Loss recovery's state that only SACKed data or an undoable episode reads (rack.c, undo.c). */
struct tcp_recov {
    uint32_t fack;          /* RACK.fack (RFC 8985 §6.2 step 3): the highest end SACKed, while sb.sacked */
    uint32_t dsack_round;   /* RACK.dsack_round: snd.nxt when a D-SACK last widened the window */
    uint32_t rtx_tsval;     /* TSval of the episode's first retransmission (Eifel, undo.c) */
    uint8_t dsack_round_on; /* dsack_round is set (brisk's rules) */
    uint8_t rtx_sent;       /* the undoable episode has retransmitted: rtx_tsval is valid */
};

/* The congestion state as TCP moves it (Linux's tcp_ca_state, of which brisk has two): the loss recovery
 * episode in progress or not. The TCP side sets it only through tcp_set_ca_state (below); the congestion
 * control algorithms' own helpers (cc.c) keep the same flag in step inside their hooks. */
enum tcp_ca_state {
    TCP_CA_OPEN = 0,     /* no episode (Linux's Open, Disorder and CWR) */
    TCP_CA_RECOVERY = 1, /* fast recovery until snd.una reaches cc.recover (RFC 6582, RFC 6675) */
};

/* undo.c — F-RTO and D-SACK undo */
/* A new episode whose reduction may be undone back to prior_cwnd and the current ssthresh. */
void tcp_undo_begin(brisk_sock *c, uint32_t prior_cwnd);
/* A retransmission went out at now (output.c). */
void tcp_undo_retransmitted(brisk_sock *c, uint64_t now);
/* An ACK's D-SACK block reported `segs` segments received twice. */
void tcp_undo_dsack(brisk_sock *c, uint32_t segs, uint64_t now);
/* An ACK that advanced snd.una in fast recovery while undo.eifel (the episode retransmitted, brisk's rules):
 * Eifel's test. Returns 1 if it undid the episode. */
int tcp_undo_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now);
void tcp_frto_start(brisk_sock *c);
/* The first ACK after an F-RTO timeout: returns 1 if the timeout was spurious (and undone). */
int tcp_frto_ack(brisk_sock *c, int advanced, uint32_t delivered_orig, uint64_t now);

/* prr.c — proportional rate reduction */
void tcp_prr_start(brisk_sock *c, uint32_t flight, uint32_t prior_cwnd);
/* An ACK in recovery delivered `delivered` bytes: set cwnd to what may be sent now. */
void tcp_prr_ack(brisk_sock *c, uint32_t delivered);
/* The same, saying whether the ACK advanced snd.una and whether it marked segments newly lost (Linux's
 * slow-start bound reads both). */
void tcp_prr_ack_ex(brisk_sock *c, uint32_t delivered, int una_advanced, int newly_lost);
/* Linux's tcp_cwnd_reduction in packets: `in_flight` packets in the network, `delivered` packets newly
 * acknowledged or SACKed by this ACK (prr.delivered counts packets, prr.recover_fs is the window at entry,
 * prr.out bytes sent). The SACK path (tcp_loss_timers=linux) and recovery without SACK (tcp_nosack_prr)
 * both size the window with it. */
void tcp_prr_linux(brisk_sock *c, uint32_t in_flight, uint32_t delivered, int advanced, int newly_lost);

/* recovery.c — SACK-based loss recovery driven by RACK */
/* After an ACK or the RACK timer: detect losses, enter recovery if needed, and arm the reordering deadline.
 */
void tcp_recovery_check(brisk_sock *c, uint32_t prior_cwnd, uint64_t now);
/* The RACK reordering deadline expired with Linux's timers (tcp_loss_timers=linux): Linux's
 * tcp_rack_reo_timeout. */
void tcp_recovery_reo_timeout(brisk_sock *c, uint64_t now);
/* Retransmits lost segments while the window allows; returns the hold reason that stopped it, or NONE. */
int tcp_retransmit_lost(brisk_sock *c, uint64_t now);
/* The first lost segment again, whatever the window (the RTO's retransmission, RFC 6298 §5.4). */
void tcp_retransmit_first_lost(brisk_sock *c, uint64_t now);
/* Without SACK: the segment at snd.una again, at most one MSS of bytes already sent (RFC 6582 §3.2). */
void tcp_retransmit_head(brisk_sock *c, uint64_t now);
/* Without SACK: pipe, the bytes in flight less what duplicate ACKs say has left the network — RFC 3042's
 * limited transmit before recovery, or Linux's accounting with tcp_nosack_prr (docs/recovery.md). */
uint32_t tcp_reno_pipe(const brisk_sock *c);
/* Without SACK and with tcp_nosack_prr: an ACK that advanced snd.una by `acked` bytes (already applied) or
 * a duplicate ACK, processed as Linux 6.x does (tcp_fastretrans_alert for a Reno connection, PRR, then the
 * retransmission of the head when it is marked lost); prior_cwnd is cwnd before the ACK. */
void tcp_reno_ack(brisk_sock *c, uint32_t acked, int dupack, uint32_t prior_cwnd, uint64_t now);

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_RECOVERY_INLINE)
#define BRISK_TCP_RECOVERY_INLINE

/* The path MTU shrank (icmp_err.c): every segment in flight was larger than the new MSS, so all of it is
 * lost and goes again at the new size (Linux's tcp_simple_retransmit). With the scoreboard, all not SACKed
 * is marked lost and the next ACK runs the usual recovery episode (one window reduction: Linux keeps the
 * window, brisk does not yet); without it, the transmit function goes back to snd.una. */
void tcp_simple_retransmit(brisk_sock *c, uint64_t now);

/* The one place TCP changes its congestion state (Linux's tcp_set_ca_state). */
static inline void tcp_set_ca_state(brisk_sock *c, enum tcp_ca_state state)
{
    c->cc.in_recovery = (uint8_t)(state == TCP_CA_RECOVERY);
}

#endif
