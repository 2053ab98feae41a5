/*
 * udp.h — iperf3's UDP test (iperf3 -u) as brisk-perf speaks it: the "connect" datagrams that open a stream,
 * the header every data datagram carries, the receiver's loss / out-of-order / jitter arithmetic and the
 * sender's pacing. The engines (iperf_client.c, iperf_server.c) own the sockets; this is the arithmetic, kept
 * apart so tests can drive it with exact inputs.
 */
#ifndef BRISK_PERF_UDP_H
#define BRISK_PERF_UDP_H

#include <stddef.h>
#include <stdint.h>

/* The 4-byte datagrams of iperf3's UDP "connect", as they are on the wire (iperf3 3.12 writes a host-order
 * int; these are the bytes an x86 / little-endian iperf3 sends, the only order it reads back). */
#define PERF_UDP_CONNECT_LEN 4
extern const uint8_t perf_udp_connect_msg[PERF_UDP_CONNECT_LEN];   /* client -> server: "9876" */
extern const uint8_t perf_udp_connect_reply[PERF_UDP_CONNECT_LEN]; /* server -> client: "6789" */
/* 1 if d[0..len) is a connect message (today's, or older iperf3's 123456789 in either byte order). */
int perf_udp_is_connect_msg(const uint8_t *d, size_t len);
/* 1 if d[0..len) is a connect reply (today's, or the legacy 987654321 in either byte order). */
int perf_udp_is_connect_reply(const uint8_t *d, size_t len);

/* The data header: the sender's clock at the send (seconds and microseconds, CLOCK_MONOTONIC in iperf3, 32
 * bits each) and the packet number (1, 2, 3, ... per stream), all big-endian; the number has 64 bits with
 * --udp-counters-64bit, else 32. The rest of the datagram is filler. */
#define PERF_UDP_HDR_LEN32    12
#define PERF_UDP_HDR_LEN64    16
#define PERF_UDP_MIN_LEN      16               /* iperf3's smallest -l for UDP: either header fits */
#define PERF_UDP_MAX_LEN      (65535 - 8 - 20) /* iperf3's largest: an IPv4 datagram's payload */
#define PERF_UDP_DEFAULT_LEN  1460             /* iperf3's -l when the control connection's MSS is unknown */
#define PERF_UDP_DEFAULT_RATE (1024u * 1024u)  /* iperf3's -b for UDP: 1 Mbit/s (as iperf3 counts it) */

struct perf_udp_header {
    uint32_t sec, usec; /* sent at */
    uint64_t pcount;    /* packet number */
};
/* Writes h at buf (the 12- or 16-byte header); returns its length, or 0 when cap is smaller. */
size_t perf_udp_header_put(uint8_t *buf, size_t cap, const struct perf_udp_header *h, int counters64);
/* Reads the header of a datagram of len bytes: 1 and *h, or 0 when the datagram is too short for it. */
int perf_udp_header_parse(const uint8_t *buf, size_t len, int counters64, struct perf_udp_header *h);
/* The header's time fields for a clock reading in ns (seconds truncated to 32 bits, as iperf3 does). */
void perf_udp_stamp(uint64_t now_ns, struct perf_udp_header *h);

/*
 * What a receiver learns from one stream's datagrams, as iperf3 counts it (iperf_udp_recv):
 *   - packet_count is the highest packet number seen; a number beyond packet_count + 1 counts the gap as
 * lost;
 *   - a number at or below packet_count is out of order, and takes one back from the lost (it was counted in
 *     a gap) while there are any;
 *   - jitter is RFC 3550 §6.4.1's (RFC 1889 A.8): the transit time of each datagram (arrival less its sent
 *     stamp; the two clocks need not agree, only differences count) against the previous one's, smoothed
 *     J += (|D| - J) / 16. The first datagram only sets the reference.
 * Datagrams too short for the header are counted apart (short_drops) and change nothing else.
 */
struct perf_udp_rx {
    uint64_t datagrams;    /* accepted (with a header) */
    uint64_t bytes;        /* their payload bytes */
    uint64_t packet_count; /* highest packet number seen */
    uint64_t lost;         /* iperf3's cnt_error */
    uint64_t out_of_order; /* numbers at or below the highest seen */
    uint64_t short_drops;  /* datagrams shorter than the header */
    double jitter;         /* seconds */
    double prev_transit;   /* seconds */
    int have_transit;
};
/* Counts one datagram of len bytes arriving at arrival_ns (the receiver's clock, the same kind the sender
 * stamps with for the figure to be a one-way delay variation). */
void perf_udp_rx_datagram(struct perf_udp_rx *rx, const uint8_t *d, size_t len, int counters64,
                          uint64_t arrival_ns);
/* The same for a parsed header (the arithmetic alone). */
void perf_udp_rx_update(struct perf_udp_rx *rx, const struct perf_udp_header *h, uint64_t arrival_ns);

/* iperf3's pacing: a datagram may go while the average rate since the stream's start is below -b (bit/s), so
 * datagram k (k = 0, 1, ...) leaves at start + k * len * 8 / rate and a late sender catches up in a burst.
 * Returns when the next datagram may go after `bytes` were sent (start_ns for rate 0: unlimited). */
uint64_t perf_udp_pace_next(uint64_t rate, uint64_t start_ns, uint64_t bytes);

#endif
