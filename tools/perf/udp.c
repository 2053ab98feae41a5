/*
 * udp.c — the arithmetic of iperf3's UDP test: connect datagrams, the data header, the receiver's figures and
 * the sender's pacing (udp.h says what each is).
 *
 * iperf3 runs a UDP stream over one UDP socket per side, "connected" by a 4-byte datagram: the client sends
 * it to the server's port, the server learns the client's address and port from it and answers with another
 * 4-byte datagram, and the stream is open. iperf3 writes those as host-order ints; Debian's 3.12 on x86 puts
 * "9876" and "6789" on the wire, older versions 123456789 and 987654321. Every data datagram then begins with
 * the sender's clock and the packet number (udp.h has the layout). The receiver derives loss, reordering and
 * jitter from those alone, the way iperf3's iperf_udp_recv does, so that both tools report the same figures
 * for the same datagrams; jitter is RFC 3550 §6.4.1's interarrival jitter (RFC 1889 A.8), in seconds.
 *
 * Everything read here comes off the wire: every length is checked before a byte is read, and a datagram too
 * short for its header is counted and otherwise ignored (iperf3 would read stale bytes from its buffer).
 */
#include "perf/udp.h"

#include <string.h>

const uint8_t perf_udp_connect_msg[PERF_UDP_CONNECT_LEN] = {'9', '8', '7', '6'};
const uint8_t perf_udp_connect_reply[PERF_UDP_CONNECT_LEN] = {'6', '7', '8', '9'};
/* iperf3 before the readable values: 123456789 and 987654321, in the sender's byte order. */
static const uint8_t legacy_msg[2][4] = {{0x15, 0xcd, 0x5b, 0x07}, {0x07, 0x5b, 0xcd, 0x15}};
static const uint8_t legacy_reply[2][4] = {{0xb1, 0x68, 0xde, 0x3a}, {0x3a, 0xde, 0x68, 0xb1}};

static int is_one_of(const uint8_t *d, size_t len, const uint8_t now[4], const uint8_t legacy[2][4])
{
    if (len != PERF_UDP_CONNECT_LEN)
        return 0;
    return !memcmp(d, now, 4) || !memcmp(d, legacy[0], 4) || !memcmp(d, legacy[1], 4);
}

int perf_udp_is_connect_msg(const uint8_t *d, size_t len)
{
    return is_one_of(d, len, perf_udp_connect_msg, legacy_msg);
}

int perf_udp_is_connect_reply(const uint8_t *d, size_t len)
{
    return is_one_of(d, len, perf_udp_connect_reply, legacy_reply);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t perf_udp_header_put(uint8_t *buf, size_t cap, const struct perf_udp_header *h, int counters64)
{
    size_t len = counters64 ? PERF_UDP_HDR_LEN64 : PERF_UDP_HDR_LEN32;
    if (cap < len)
        return 0;
    put32(buf, h->sec);
    put32(buf + 4, h->usec);
    if (counters64) {
        put32(buf + 8, (uint32_t)(h->pcount >> 32));
        put32(buf + 12, (uint32_t)h->pcount);
    } else {
        put32(buf + 8, (uint32_t)h->pcount); /* iperf3 wraps the 32-bit count the same way */
    }
    return len;
}

int perf_udp_header_parse(const uint8_t *buf, size_t len, int counters64, struct perf_udp_header *h)
{
    if (len < (counters64 ? PERF_UDP_HDR_LEN64 : PERF_UDP_HDR_LEN32))
        return 0;
    h->sec = get32(buf);
    h->usec = get32(buf + 4);
    h->pcount = counters64 ? (uint64_t)get32(buf + 8) << 32 | get32(buf + 12) : get32(buf + 8);
    return 1;
}

void perf_udp_stamp(uint64_t now_ns, struct perf_udp_header *h)
{
    h->sec = (uint32_t)(now_ns / 1000000000u);
    h->usec = (uint32_t)(now_ns % 1000000000u / 1000u);
}

void perf_udp_rx_update(struct perf_udp_rx *rx, const struct perf_udp_header *h, uint64_t arrival_ns)
{
    if (h->pcount >= rx->packet_count + 1) {
        rx->lost += h->pcount - 1 - rx->packet_count; /* the gap, if any */
        rx->packet_count = h->pcount;
    } else {
        rx->out_of_order++;
        if (rx->lost > 0) /* it was counted lost in a gap */
            rx->lost--;
    }
    /* Transit in whole microseconds on the header's 32-bit-second scale, both stamps alike; iperf3 takes the
     * absolute difference (its time difference is unsigned), which only matters when the clocks disagree. */
    struct perf_udp_header a;
    perf_udp_stamp(arrival_ns, &a);
    int64_t us = ((int64_t)a.sec - (int64_t)h->sec) * 1000000 + ((int64_t)a.usec - (int64_t)h->usec);
    double transit = (double)(us < 0 ? -us : us) / 1e6;
    if (!rx->have_transit) {
        rx->prev_transit = transit;
        rx->have_transit = 1;
    }
    double d = transit - rx->prev_transit;
    if (d < 0)
        d = -d;
    rx->prev_transit = transit;
    rx->jitter += (d - rx->jitter) / 16.0;
}

void perf_udp_rx_datagram(struct perf_udp_rx *rx, const uint8_t *d, size_t len, int counters64,
                          uint64_t arrival_ns)
{
    struct perf_udp_header h;
    if (!perf_udp_header_parse(d, len, counters64, &h)) {
        rx->short_drops++;
        return;
    }
    rx->datagrams++;
    rx->bytes += len;
    perf_udp_rx_update(rx, &h, arrival_ns);
}

uint64_t perf_udp_pace_next(uint64_t rate, uint64_t start_ns, uint64_t bytes)
{
    if (!rate)
        return start_ns;
    /* In doubles: bytes * 8e9 overflows 64 bits past 2.3 GB; 53 bits of ns are 104 days of test. */
    return start_ns + (uint64_t)((double)bytes * 8e9 / (double)rate);
}
