/*
 * tcpforge.h — forging TCP segments into one stack and reading back the exact segments it sends, for the
 * white-box TCP tests in tests/tcp/.
 *
 * One `struct tf` is one stack (10.0.0.1/24 on a fakedev) and the wire to a scripted peer at 10.0.0.2 whose
 * MAC the stack already knows (an ARP request from the peer pre-fills the cache, so segments leave at once).
 * Every frame the stack transmits is completed at once, parsed (Ethernet, IPv4, TCP with the checksum
 * verified) and queued; a test takes the segments in order with TF_EXPECT / tf_take and asserts flags,
 * sequence and acknowledgment numbers, payload length, window, options and the virtual time of transmission.
 * Time is whatever the test says: tf_run(t, until) polls the stack at every deadline up to `until`, so a
 * timer's segment carries exactly the time the timer was due.
 *
 * `struct tf_peer` is the peer's side of one connection: its sequence numbers, the ACK it sends, its window
 * and timestamps, so a test can say "the peer sends 100 bytes now" in one line and still forge anything
 * (old timestamps, out-of-window RSTs, ACKs of unsent data) by building the header itself (tf_peer_hdr) and
 * injecting it (tf_inject).
 */
#ifndef BRISK_TCPFORGE_H
#define BRISK_TCPFORGE_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"
#include "support/fakedev.h"
#include "wire/tcp.h"

#define TF_LOCAL_IP IP4(10, 0, 0, 1)
#define TF_PEER_IP  IP4(10, 0, 0, 2)
#define TF_US       BRISK_NSEC_PER_USEC
#define TF_MS       BRISK_NSEC_PER_MSEC
#define TF_SEC      BRISK_NSEC_PER_SEC
/* For TF_EXPECT's `at`: do not check the time. */
#define TF_ANY_TIME UINT64_MAX

/* One segment the stack sent. */
struct tf_seg {
    uint64_t at;             /* the `now` of the transmission */
    uint32_t src, dst;       /* IPv4, host order */
    struct brisk_tcp_repr h; /* parsed header and options; h.payload points into `frame` */
    uint32_t len;            /* payload bytes */
    uint8_t *frame;          /* the whole frame (owned by the struct tf) */
};

struct tf {
    brisk_stack *st;
    struct fakedev f;
    struct tf_seg *q; /* every TCP segment sent, oldest first */
    size_t nq, cap;
    size_t head;          /* next segment tf_take returns */
    size_t nother;        /* frames that were not TCP over IPv4 (ARP, ICMP) */
    uint32_t last_tsval;  /* TSval of the latest segment sent with a timestamp (the peer echoes it) */
    int hold_completions; /* nonzero: collecting frames does not complete them (a slow-completion device) */
};

/* Creates the stack with brisk's defaults changed by `sets` ("name=value" strings, NULL-terminated; NULL
 * for none; "profile=NAME" applies a compatibility profile first, under everything else) and the device, and
 * teaches it the peer's MAC. arp_reachable is raised to a day unless `sets`
 * says otherwise, so long virtual times never trigger ARP probes. */
void tf_init(struct tf *t, const char *const *sets);
/* The assignments of compatibility profile `name` (brisk_profile_settings), for tf_init; fails the test if
 * there is no such profile. */
const char *const *tf_profile_sets(const char *name);
/* Completes and forgets every frame, asserts no packet buffer is still in use (a leak: callers abort their
 * connections first if they hold out-of-order data), frees the stack. */
void tf_free(struct tf *t);

/* Moves what the device recorded into the queue, completing the frames at the stack's current time.
 * tf_take, tf_pending, tf_run and tf_inject call it; tests need it only for direct device inspection. */
void tf_collect(struct tf *t);
/* Polls the stack at each deadline up to and including `until`, then at `until` itself. */
void tf_run(struct tf *t, uint64_t until);
/* Polls the stack deadline by deadline until it sends a segment (returns 1) or the next deadline is past
 * `limit` (returns 0, the clock stays at the last deadline polled). */
int tf_run_to_seg(struct tf *t, uint64_t limit);
/* Segments sent and not yet taken. */
size_t tf_pending(struct tf *t);
/* The next segment sent, or a test failure if there is none. */
#define tf_take(t) tf_take_at((t), __FILE__, __LINE__)
struct tf_seg *tf_take_at(struct tf *t, const char *file, int line);
/* Takes the next segment and checks it: time (TF_ANY_TIME to skip), exact flags, seq, ack, payload length.
 * On a mismatch prints the segment and fails the test at the caller's line. */
#define TF_EXPECT(t, at, flags, seq, ack, len)                                                               \
    tf_expect_at((t), (at), (flags), (seq), (ack), (len), __FILE__, __LINE__)
struct tf_seg *tf_expect_at(struct tf *t, uint64_t at, uint8_t flags, uint32_t seq, uint32_t ack,
                            uint32_t len, const char *file, int line);
/* Fails the test if a segment is waiting. */
#define TF_EXPECT_NONE(t) tf_expect_none_at((t), __FILE__, __LINE__)
void tf_expect_none_at(struct tf *t, const char *file, int line);
/* Prints a segment ("at 1.000000000 S. seq 100 ack 0 win 65535 len 0 <mss 1460,...>") to stderr. */
void tf_print_seg(const struct tf_seg *s);

/* Feeds one segment from the peer (10.0.0.2) to the stack (10.0.0.1) at `now`, with a correct checksum. */
void tf_inject(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len, uint64_t now);
/* The same with the TCP checksum XORed with `csum_xor` (0: correct) and the device's receive flags
 * (BRISK_RX_*, brisk_stack_input_flags); returns what brisk_stack_input_flags returned. */
int tf_inject_rx(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len,
                 uint16_t csum_xor, unsigned rx_flags, uint64_t now);

/* The Ethernet frame tf_inject_rx would feed (malloc'ed: the caller frees it); its length in *frame_len. */
uint8_t *tf_frame(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len,
                  uint16_t csum_xor, size_t *frame_len);

/* The TOS byte of the IPv4 header that carried a segment. */
uint8_t tf_seg_tos(const struct tf_seg *s);
/* An ICMP error (type, code) from `from` (the peer, or a router on the path) about segment `s`: the message
 * quotes its IPv4 header and the first `tcp_bytes` bytes of its TCP header (RFC 792: at least 8); a quote
 * may be edited through `edit` (NULL: none) before the checksum, to forge ports or sequence numbers. */
void tf_inject_icmp(struct tf *t, uint32_t from, uint8_t type, uint8_t code, const struct tf_seg *s,
                    size_t tcp_bytes, void (*edit)(uint8_t *quote, size_t len), uint64_t now);
/* The same with the next-hop MTU field of a "fragmentation needed" (type 3, code 4; RFC 1191). */
void tf_inject_icmp_mtu(struct tf *t, uint32_t from, uint8_t type, uint8_t code, uint16_t mtu,
                        const struct tf_seg *s, size_t tcp_bytes, void (*edit)(uint8_t *quote, size_t len),
                        uint64_t now);

/* The peer's side of one connection. */
struct tf_peer {
    struct tf *t;
    uint16_t port;    /* the peer's port */
    uint16_t lport;   /* the stack's port */
    uint32_t iss;     /* the peer's initial sequence number */
    uint32_t nxt;     /* the peer's next sequence number */
    uint32_t l_iss;   /* the stack's initial sequence number (from its SYN or SYN-ACK) */
    uint32_t ack;     /* the acknowledgment number the peer sends */
    uint16_t win;     /* the raw window the peer advertises */
    uint8_t ts;       /* send timestamps (set when the handshake negotiated them) */
    uint32_t ts_base; /* the peer's TSval is ts_base + now in ms */
};

/* A peer at 10.0.0.2:port talking to the stack's lport, with initial sequence number iss and window 65535. */
void tf_peer_init(struct tf_peer *p, struct tf *t, uint16_t port, uint16_t lport, uint32_t iss);
/* The header the peer would send now: seq = nxt, ack = ack (0 unless flags has ACK), window, and a
 * timestamp (TSval from now, TSecr = the stack's latest TSval) when p->ts. The test may change anything. */
struct brisk_tcp_repr tf_peer_hdr(const struct tf_peer *p, uint8_t flags, uint64_t now);
/* Sends tf_peer_hdr(p, flags, now) with `len` payload bytes and advances nxt by what the segment occupies. */
void tf_peer_send(struct tf_peer *p, uint8_t flags, const void *data, size_t len, uint64_t now);
/* Sends `len` bytes of tf_pattern data starting at stream offset nxt - iss - 1, with ACK|PSH. */
void tf_peer_send_data(struct tf_peer *p, size_t len, uint64_t now);

/* The SYN options of a modern peer: MSS 1460, window scale 7, SACK-permitted, timestamps. */
struct brisk_tcp_opts tf_opts_full(void);

/* Passive open: the peer's SYN (options `syn_opts`, NULL for tf_opts_full()) to `listener` at `now`, the
 * stack's SYN-ACK (asserted: SYN|ACK, ack = iss + 1, sent at `now`), the peer's ACK at now + rtt; returns the
 * accepted connection. The peer uses timestamps from then on if both offered them. */
brisk_sock *tf_open_passive(struct tf_peer *p, brisk_sock *listener, const struct brisk_tcp_opts *syn_opts,
                            uint64_t now, uint64_t rtt);
/* Active open: connect() to the peer at `now`, the stack's SYN (asserted), the peer's SYN-ACK (options
 * `synack_opts`, NULL for tf_opts_full(); window p->win) at now + rtt, the stack's ACK (asserted). p->lport
 * is filled in from the SYN. `ev` (may be NULL) is attached as the socket's callback before connect. Returns
 * the socket. */
struct tf_events;
brisk_sock *tf_open_active(struct tf_peer *p, const struct brisk_tcp_opts *synack_opts, uint64_t now,
                           uint64_t rtt, struct tf_events *ev);
/* A listening socket on port. */
brisk_sock *tf_listen(struct tf *t, uint16_t port);

/* The usual fixture of the TCP tests: one connection accepted at 0 — the stack listens on port 80, the peer
 * (port 40000, ISS 1000) connects with `syn_opts` and the handshake takes `rtt`. `sets` go to tf_init, `more`
 * (NULL-terminated, may be NULL) are applied after it, for settings a test always needs on top of its own. */
struct tf_conn {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    uint32_t d; /* the stack's first data byte */
};
void tf_conn_open(struct tf_conn *f, const char *const *sets, const char *const *more,
                  const struct brisk_tcp_opts *syn_opts, uint64_t rtt);
/* Completes what the device holds, aborts the connection (unless the test cleared f->c), drains what the
 * stack sent, closes the listener, checks no socket is left, frees. */
void tf_conn_close(struct tf_conn *f);

/* Deterministic payload bytes: byte i of a stream is tf_pattern_byte(i). */
uint8_t tf_pattern_byte(uint64_t i);
void tf_pattern(uint8_t *buf, size_t len, uint64_t off);
/* Whether seg's payload equals the pattern at stream offset `off`. */
int tf_payload_is(const struct tf_seg *s, uint64_t off);
/* The application sends `len` bytes of the pattern from stream offset `off` (asserted accepted whole). */
void tf_send_pattern(brisk_sock *c, uint64_t off, size_t len, uint64_t now);
/* The peer's pure ACK of `ack`, with one SACK block [start, end) unless start == end. */
void tf_peer_sack(struct tf_peer *p, uint32_t ack, uint32_t start, uint32_t end, uint64_t now);

/* An event recorder for brisk_sock_set_callback(s, tf_events_cb, &ev). */
struct tf_events {
    unsigned all;   /* every event seen, OR-ed */
    unsigned calls; /* callbacks */
    uint64_t at[8]; /* time each event bit was last seen (bit i of BRISK_EV_*) */
};
void tf_events_cb(void *ctx, brisk_sock *s, unsigned events, uint64_t now);

/* A counters snapshot. */
struct brisk_counters tf_counters(struct tf *t);
/* A brisk_conn_info snapshot (asserts success). */
struct brisk_conn_info tf_info(const brisk_sock *s);

#endif
