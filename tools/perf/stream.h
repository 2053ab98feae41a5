/*
 * stream.h — one iperf3 data stream on a brisk socket: over TCP the cookie that opens it, then blocks of -l
 * bytes one way; over UDP (iperf3 -u) datagrams of -l bytes with iperf3's header, paced at -b. Shared by the
 * iperf3 client and server engines.
 */
#ifndef BRISK_PERF_STREAM_H
#define BRISK_PERF_STREAM_H

#include <stdint.h>

#include "perf/iperf_proto.h"
#include "perf/udp.h"

struct perf_stream {
    brisk_sock *s;
    int id;                            /* iperf3 stream id (1, 3, 4, ...) */
    int sender;                        /* this side writes on it */
    uint8_t cookie[IPERF_COOKIE_SIZE]; /* client: the cookie to send; server: the cookie being read */
    uint32_t cookie_done;              /* bytes of the cookie sent / received so far */
    int connected;                     /* the TCP connection is established */
    uint64_t bytes;              /* payload bytes written (sender) or read (receiver), cookie excluded */
    uint32_t blk_off;            /* sender: bytes of the current block already written */
    uint64_t last_ns;            /* when the last payload byte moved */
    int eof;                     /* receiver: the peer's FIN was read */
    int error;                   /* BRISK_ERR_* seen on the socket */
    struct brisk_conn_info info; /* snapshot taken before the socket is closed */
    int info_ok;
    /* UDP (iperf3 -u): s is NULL; the datagrams go over u or the server's one socket. */
    int udp;
    brisk_udp *u;                  /* client: the stream's own socket; server: NULL (the engine's socket) */
    struct brisk_addr laddr, peer; /* the stream's two ends (start.connected[]) */
    uint16_t lport, peer_port;
    int udp_open;          /* client: the server answered the connect datagram */
    uint64_t packets;      /* sender: datagrams sent, i.e. the last packet number */
    uint64_t pace_start;   /* sender: the pacing's origin (TEST_RUNNING) */
    struct perf_udp_rx rx; /* receiver: what the datagrams told (bytes counts in `bytes` as well) */
};

/* Writes whole blocks (block[0..blksize)) until the socket refuses or `budget` bytes were written in this
 * call; a block cut short by a full buffer is finished first on the next call, so the peer sees -l sized
 * writes as iperf3 makes them. Returns bytes written (>= 0) or the socket's error. */
int64_t perf_stream_send(struct perf_stream *st, const uint8_t *block, uint32_t blksize, uint64_t budget,
                         uint64_t now);
/* Reads everything available into scratch (discarded). Returns bytes read (>= 0) or the socket's error;
 * sets eof at the peer's FIN. With count 0 the bytes are drained without adding to st->bytes (after the
 * figures were reported). */
int64_t perf_stream_recv(struct perf_stream *st, uint8_t *scratch, size_t cap, int count, uint64_t now);
/* UDP sender: sends the datagrams the pacing at `rate` (bit/s, 0 = as fast as the socket takes them) allows
 * by `now`, at most `burst` of them: each the block (blksize bytes) with a fresh header written into it,
 * stamped `stamp_ns`. To u's connected peer, or to dst:port (the server's shared socket). Returns the bytes
 * sent
 * (>= 0; BRISK_ERR_AGAIN stops it quietly: WRITABLE follows) or the socket's error (also kept in st->error).
 */
int64_t perf_stream_udp_send(struct perf_stream *st, brisk_udp *u, const struct brisk_addr *dst,
                             uint16_t port, uint8_t *block, uint32_t blksize, int counters64, uint64_t rate,
                             uint32_t burst, uint64_t now, uint64_t stamp_ns);
/* When the sender's next datagram is due (BRISK_TIME_NONE: not a UDP sender). */
uint64_t perf_stream_udp_due(const struct perf_stream *st, uint64_t rate);
/* UDP receiver: counts one datagram of len bytes that arrived at arrival_ns (count 0: after the figures were
 * reported, only drained). */
void perf_stream_udp_datagram(struct perf_stream *st, const uint8_t *d, size_t len, int counters64, int count,
                              uint64_t arrival_ns, uint64_t now);
/* Snapshots brisk_conn_info, then closes (gracefully; brisk aborts when unread data remains, like Linux). */
void perf_stream_close(struct perf_stream *st, uint64_t now);
/* The stream's part of a report (perf.h), for the client and the server alike: its own figures and
 * brisk_conn_info (the snapshot taken at close, else the live socket's), and the peer's figures for the same
 * stream from its results (`remote`), which also add to r's remote_sent / remote_received. r->duration_ns is
 * set already. */
struct perf_report;
struct perf_stream_report;
void perf_stream_report_fill(const struct perf_stream *st, const struct iperf_stream_result *remote,
                             const struct iperf_udp_result *remote_udp, size_t nremote, struct perf_report *r,
                             struct perf_stream_report *o);
/* A stream's own UDP figures for the results exchange (zero for a TCP stream). */
void perf_stream_udp_result(const struct perf_stream *st, struct iperf_udp_result *out);

#endif
