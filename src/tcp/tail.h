/*
 * tail.h (internal) — the small-tail decision: Nagle, TCP_CORK, MSG_MORE and auto-corking (tail.c).
 */
#ifndef BRISK_TCP_TAIL_H
#define BRISK_TCP_TAIL_H

#include <stdint.h>

#include "brisk/brisk.h"
#include "core/timer.h"

/* TCP_CORK holds a partial segment at most this long (Linux tcp(7): a 200 ms ceiling). */
#define TCP_CORK_CEILING_NS (200 * BRISK_NSEC_PER_MSEC)

/* Linux's nonagle bits for one call of the transmit function (tcp_sw_gso): tcp_nonagle. */
#define TCP_NAGLE_OFF  0x1u /* TCP_NODELAY */
#define TCP_NAGLE_CORK 0x2u /* TCP_CORK, or MSG_MORE for the write's own push */
/* TCP_NAGLE_PUSH passes Nagle and TCP_CORK: TCP_NODELAY just set, a push from inside a write. */
#define TCP_NAGLE_PUSH 0x4u

/* Whether the queue's last piece, shorter than a segment (`len` bytes at snd.nxt, no FIN to go with it),
 * waits for more data in this call of the transmit function (`why`, enum tcp_xmit_why): BRISK_HOLD_CORK
 * (TCP_CORK or MSG_MORE; the timer that ends it is armed), BRISK_HOLD_AUTOCORK (the connection is marked for
 * a completion resume), BRISK_HOLD_NAGLE, or BRISK_HOLD_NONE: it goes. Both ways new data leaves ask it,
 * output.c's segments (brisk's rules) and piece.c's packets (Linux's, under tcp_sw_gso). */
int tcp_tail_hold(brisk_sock *c, int why, uint32_t len, uint64_t now);
/* Linux's nonagle bits (TCP_NAGLE_*) for a call of the transmit function for `why` (tcp_sw_gso). */
unsigned tcp_nonagle(const brisk_sock *c, int why);
/* Linux's tcp_nagle_check: whether a partial segment (`partial`) waits under the nonagle bits `na`: under
 * TCP_NAGLE_CORK, or with no bit set while a small segment is unacknowledged (Minshall). */
int tcp_nagle_check(const brisk_sock *c, int partial, unsigned na);
/* A TCP_CORK or MSG_MORE hold began or goes on: the timer that ends it (RFC 9293 MUST-60). */
void tcp_cork_arm(brisk_sock *c, uint32_t flight, uint64_t now);
/* An acceptable ACK arrived with nothing in flight (Linux's tcp_ack_probe): under tcp_cork_probe_timer the
 * probe timer of a held tail restarts with the transmit function that follows. */
void tcp_cork_ack(brisk_sock *c);
/* The cork timer (struct brisk_sock.timer.cork) fired: the held head goes, with PSH. */
void tcp_cork_fired(struct brisk_timer *t, void *arg, uint64_t now);

#endif
