/*
 * ackcomp.h — compressed ACKs for out-of-order data (Linux's SACK compression, 4.18 on; ackcomp.c): the
 * receiver's answer to a run of segments that arrive past a hole.
 */
#ifndef BRISK_TCP_ACKCOMP_H
#define BRISK_TCP_ACKCOMP_H

#include <stdint.h>

struct brisk_sock;

/* In struct brisk_sock's ack group: `comp` ACKs held since the last one sent, and in `comp_dup` the
 * duplicate ACKs sent at once for the current RCV.NXT (at most TCP_ACKCOMP_DUPACKS) and, in its top bit,
 * whether the delayed-ACK timer is armed for the compressed ACK (not for an ordinary delayed ACK). */
#define TCP_ACKCOMP_DUPACKS 3u    /* Linux's TCP_FASTRETRANS_THRESH: the sender's fast retransmit needs them */
#define TCP_ACKCOMP_ARMED   0x80u /* in comp_dup */

/* An out-of-order segment [seq, seq + len) that would be acknowledged at once is about to be held: if it
 * starts a fifth SACK block while ACKs are held, the held ACK goes now, with the four blocks it knew (the
 * new block would push the oldest out of the option). */
void tcp_ackcomp_new_block(struct brisk_sock *c, uint32_t seq, uint32_t len, uint64_t now);
/* The out-of-order segment was held: 1 when its ACK goes at once, 0 when it is compressed (the delayed-ACK
 * timer then sends one ACK for the run, after a few percent of the RTT). */
int tcp_ackcomp_ooo(struct brisk_sock *c, uint64_t now);
/* The delayed-ACK timer fired: 1 if it was the compressed ACK's (sent here), else 0. */
int tcp_ackcomp_fired(struct brisk_sock *c, uint64_t now);

#endif
