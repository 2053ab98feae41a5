/*
 * syncookie.h (internal) — SYN cookies (RFC 4987 §3.6): a listener whose SYN queue is full answers a SYN
 * without keeping state, and rebuilds the connection from the returning ACK. See syncookie.c.
 */
#ifndef BRISK_TCP_SYNCOOKIE_H
#define BRISK_TCP_SYNCOOKIE_H

#include "tcp/tcp.h"

/* Period of the cookie's time counter, and how many periods a cookie stays valid. */
#define BRISK_SYNCOOKIE_PERIOD_NS (64ull * BRISK_NSEC_PER_SEC)
#define BRISK_SYNCOOKIE_MAX_AGE   2

/* Whether listener l answers this SYN with a cookie: tcp_syncookies 2 (always), or 1 with the SYN queue
 * (tcp_max_syn_backlog) full; never when the accept queue is full (the connection could not be queued). */
int brisk_syncookie_use(const brisk_sock *l);

/* Sends the cookie SYN-ACK for the SYN `seg` (on the 4-tuple id, laddr ours) and counts SyncookiesSent. */
void brisk_syncookie_send(brisk_sock *l, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg,
                          uint64_t now);

/* An ACK (no SYN, no RST) to listener l without a connection: if tcp_syncookies is on and SEG.ACK - 1 is a
 * cookie we issued within BRISK_SYNCOOKIE_MAX_AGE periods for this 4-tuple and SEG.SEQ - 1, makes the child
 * in SYN-RECEIVED with the options the cookie carried (hashed, counted against the SYN queue) and returns it:
 * the caller then processes `seg` on it as for any SYN-RECEIVED connection, which establishes it onto the
 * accept queue. Returns NULL otherwise (SyncookiesFailed counted when cookies are on). */
brisk_sock *brisk_syncookie_check(brisk_sock *l, const struct brisk_tuple *id,
                                  const struct brisk_tcp_repr *seg, uint64_t now);

/* After the caller processed the ACK on a child from brisk_syncookie_check: a child the ACK did not
 * establish (it cannot retransmit a SYN-ACK it never stored) is dropped. */
void brisk_syncookie_settle(struct brisk_net *net, brisk_sock *c, const struct brisk_tuple *id, uint64_t now);

/* The cookie's pieces, for tests: the MSS table (ascending) and the ISN an encoder gives. */
#define BRISK_SYNCOOKIE_NMSS 8
extern const uint16_t brisk_syncookie_mss[BRISK_SYNCOOKIE_NMSS];

#endif
