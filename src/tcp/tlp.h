/*
 * tlp.h (internal) — tail loss probes (tlp.c, RFC 8985 §7)
 */
#ifndef BRISK_TCP_TLP_H
#define BRISK_TCP_TLP_H

#include <stdint.h>
#include "brisk/brisk.h"
#include "wire/tcp.h"

/* The probe timeout if a probe may be armed now, else 0. */
uint64_t tcp_tlp_timeout(const brisk_sock *c);
/* Linux's timers: the delay tcp_schedule_loss_probe would arm, given how far off the RTO is (`rto_delta`,
 * ns; 0 = not known), or 0 if it would arm none. */
uint64_t tcp_tlp_timeout_linux(const brisk_sock *c, uint64_t rto_delta);
/* The PTO expired: send the probe (new data if the window allows, else the last segment again). */
void tcp_tlp_fire(brisk_sock *c, uint64_t now);
/* An ACK arrived while a probe is outstanding: end the episode, reducing cwnd if the probe repaired a loss.
 * `dup`: the ACK is a pure duplicate (it advances nothing, carries nothing, SACKs nothing new, leaves the
 * window): with Linux's timers that too ends the episode (both copies arrived). */
void tcp_tlp_ack(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t prior_cwnd, int dup, uint64_t now);

#endif
