/*
 * harness.h — what brisk's fuzz targets share: a stack on a fake device in a known state (a listener, an
 * accepted connection, or a connection we opened), hostile frames fed into it with the checksums optionally
 * repaired (so mutations reach TCP instead of dying at the checksum), time driven by the input, invariants
 * checked after every step, and a leak check once everything is closed.
 *
 * A violated invariant calls fh_fail(), which prints the reason and aborts: libFuzzer reports that as a crash
 * and saves the input, and the replay build (replay_main.c) fails the ctest that replays the corpus.
 *
 * Wire layout of the single-frame targets: [flags u8][Ethernet frame]. Sequence targets:
 * [flags u8]([delay u16][len u16][frame or action])..., see fuzz_seq.c. Flags: FH_FIX_CSUM repairs the IPv4
 * header checksum and the TCP / ICMP checksum; FH_FIX_ADDR rewrites the Ethernet destination to the device's
 * MAC and the IPv4 source / destination to the peer / the stack.
 */
#ifndef BRISK_FUZZ_HARNESS_H
#define BRISK_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"
#include "support/fakedev.h"
#include "wire/tcp.h"

#define FH_LOCAL_IP  IP4(10, 0, 0, 1)
#define FH_PEER_IP   IP4(10, 0, 0, 2)
#define FH_PORT      80    /* the stack's listening port, and the peer's port for an active open */
#define FH_PEER_PORT 40000 /* the peer's port for a passive open */
#define FH_PEER_ISS  1000u

#define FH_FIX_CSUM 0x01
#define FH_FIX_ADDR 0x02
#define FH_COOKIES  0x08 /* single-frame listener and sequence targets: tcp_syncookies=2 (every SYN) */
#define FH_REL_SEQ                                                                                           \
    0x20 /* sequence target: a TCP frame's SEQ is relative to the connection's RCV.NXT and its               \
            ACK to SND.UNA (the harness adds them before repairing the checksum), so mutated                 \
            numbers stay near the window instead of landing anywhere in 2^32 */

enum fh_scenario {
    FH_LISTEN,  /* a listener on FH_PORT, nothing else */
    FH_PASSIVE, /* a listener and a connection it accepted from FH_PEER_IP:FH_PEER_PORT (full options) */
    FH_ACTIVE,  /* a connection we opened to FH_PEER_IP:FH_PORT (full options) */
    FH_NSCENARIOS,
};

struct fh {
    brisk_stack *st;
    struct fakedev f;
    brisk_sock *listener; /* NULL unless LISTEN / PASSIVE */
    brisk_sock *conn;     /* the application's connection (NULL once it is closed or aborted) */
    brisk_udp *udp;       /* a UDP socket on FH_PORT in every scenario (a small receive buffer) */
    uint64_t now;
    /* The peer's view of the connection after the handshake (for seed generation). */
    uint16_t peer_port, local_port;
    uint32_t peer_nxt, peer_ack, peer_tsval, local_tsval;
    uint64_t frames_out;        /* frames the stack transmitted */
    struct brisk_tcp_repr last; /* the last TCP segment the stack sent (payload pointer cleared) */
    int have_last;
    uint32_t local_end; /* the highest sequence number the stack has used + 1 (what the peer acknowledges) */
};

/* Failure: prints and aborts. */
void fh_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Builds the stack and the scenario at time 1 ms. */
void fh_init(struct fh *h, enum fh_scenario sc);
/* The same with one more setting ("name=value", NULL for none), e.g. "tcp_syncookies=2". */
void fh_init_with(struct fh *h, enum fh_scenario sc, const char *extra);
/* Feeds one frame (copied; repaired per `flags`) at h->now, then collects what the stack sent. */
void fh_input(struct fh *h, const uint8_t *frame, size_t len, unsigned flags);
/* Feeds n frames (each copied and repaired, in order) as one receive batch (brisk_stack_input_batch, so
 * receive coalescing sees them), then collects what the stack sent. n <= FH_BATCH_MAX. */
#define FH_BATCH_MAX 64
void fh_input_batch(struct fh *h, const uint8_t *const *frames, const size_t *lens, size_t n, unsigned flags);
/* Polls the stack at every deadline up to `until` (bounded number of polls), completing transmitted frames.
 */
void fh_run(struct fh *h, uint64_t until);
/* An application call on h->conn (or the listener), see fuzz_seq.c for op and arg. */
void fh_app_call(struct fh *h, unsigned op, unsigned arg);
/* Checks invariants of the stack and every connection it knows. */
void fh_check(struct fh *h);
/* Closes everything, runs time out, checks nothing leaked, frees the stack. */
void fh_finish(struct fh *h);

/* A frame from the peer carrying TCP header `t` and `len` payload bytes, checksums correct. Returns its
 * length; buf must hold 14 + 20 + 60 + len. */
size_t fh_tcp_frame(const struct fh *h, uint8_t *buf, const struct brisk_tcp_repr *t, const void *payload,
                    size_t len);

/* The entry point every target defines (libFuzzer's), and the replay build's driver calls. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
