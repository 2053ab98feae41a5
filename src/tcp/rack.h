/*
 * rack.h (internal) — RACK-TLP's loss detection state and interface (rack.c, RFC 8985 §6)
 */
#ifndef BRISK_TCP_RACK_H
#define BRISK_TCP_RACK_H

#include <stdint.h>
#include "brisk/brisk.h"
#include "tcp/sack.h"

/* RACK (rack.c, RFC 8985 §6): the most recently sent segment known delivered. */
struct tcp_rack {
    uint64_t xmit_ts;  /* its transmission time */
    uint32_t end_seq;  /* its end */
    uint32_t reo_mult; /* reordering window in units of min_rtt / 4 (grows with D-SACKs) */
    uint8_t reord;     /* reordering seen (D-SACK; Linux: a hole filled without retransmission) */
    uint8_t advanced;  /* Linux timers: a delivery moved RACK since its last detection pass */
    uint32_t recoveries_since_dsack;
    uint64_t rtt; /* the RTT it measured */
};

/* A segment was delivered (acked or SACKed): remember the most recently sent such (with Linux's timers,
 * RACK.rtt is the last delivered segment's, whenever it was sent: tcp_sb_ack delivers in Linux's order). */
void tcp_rack_delivered(brisk_sock *c, const struct tcp_sb_rec *r, uint64_t now);
/* Marks lost every segment sent a reordering window before the latest delivered one. Returns how many were
 * newly marked; *wait (0 = none) is the time until the next one could be — with Linux's timers
 * (tcp_loss_timers=linux) the time until the last of them could be, plus 2 ms, in whole milliseconds. */
uint32_t tcp_rack_detect(brisk_sock *c, uint64_t now, uint64_t *wait);
void tcp_rack_dsack(brisk_sock *c);
void tcp_rack_recovery_done(brisk_sock *c);

#endif
