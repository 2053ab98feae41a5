/*
 * stream.c — moving an iperf3 data stream's bytes over a brisk socket.
 *
 * iperf3 writes blocks of -l bytes (128 KB for TCP) and counts what the socket accepted; its receiver reads
 * whatever is there and counts it. The content carries nothing (iperf3 fills its block with random bytes), so
 * the receiver discards it. brisk sockets are non-blocking: a send takes what fits in the send buffer, so a
 * block may be written in pieces; the next call finishes it before starting another.
 *
 * A UDP stream (iperf3 -u) moves whole datagrams instead: the sender writes iperf3's header (udp.h) into the
 * block before each one and sends it when the pacing says it is due; the receiver counts each datagram's
 * bytes and feeds its header to the loss / reordering / jitter arithmetic. brisk never sends part of a
 * datagram, so a refused send (no packet buffer, device full) sends nothing and is tried again at WRITABLE.
 */
#include "perf/stream.h"

#include "perf/perf.h"

#include <string.h>

int64_t perf_stream_send(struct perf_stream *st, const uint8_t *block, uint32_t blksize, uint64_t budget,
                         uint64_t now)
{
    uint64_t done = 0;
    while (st->s && !st->error && done < budget) {
        uint64_t want = blksize - st->blk_off;
        if (want > budget - done)
            want = budget - done;
        int64_t n = brisk_send(st->s, block + st->blk_off, (size_t)want, 0, now);
        if (n == BRISK_ERR_AGAIN)
            break;
        if (n < 0) {
            st->error = (int)n;
            return n;
        }
        done += (uint64_t)n;
        st->bytes += (uint64_t)n;
        st->blk_off = (uint32_t)((st->blk_off + (uint64_t)n) % blksize);
        st->last_ns = now;
        if ((uint64_t)n < want)
            break; /* the buffer is full: WRITABLE will come */
    }
    return (int64_t)done;
}

int64_t perf_stream_recv(struct perf_stream *st, uint8_t *scratch, size_t cap, int count, uint64_t now)
{
    int64_t total = 0;
    while (st->s && !st->eof && !st->error) {
        int64_t n = brisk_recv(st->s, scratch, cap, now);
        if (n > 0) {
            if (count) {
                st->bytes += (uint64_t)n;
                st->last_ns = now;
            }
            total += n;
        } else if (n == 0) {
            st->eof = 1;
        } else if (n == BRISK_ERR_AGAIN) {
            break;
        } else {
            st->error = (int)n;
            return n;
        }
    }
    return total;
}

int64_t perf_stream_udp_send(struct perf_stream *st, brisk_udp *u, const struct brisk_addr *dst,
                             uint16_t port, uint8_t *block, uint32_t blksize, int counters64, uint64_t rate,
                             uint32_t burst, uint64_t now, uint64_t stamp_ns)
{
    int64_t done = 0;
    for (uint32_t k = 0; k < burst && !st->error && u; k++) {
        if (perf_udp_pace_next(rate, st->pace_start, st->bytes) > now)
            break;
        struct perf_udp_header h = {.pcount = st->packets + 1};
        perf_udp_stamp(stamp_ns, &h);
        perf_udp_header_put(block, blksize, &h, counters64); /* -l is at least the header's length */
        int64_t n = dst ? brisk_udp_sendto(u, block, blksize, dst, port, now)
                        : brisk_udp_send(u, block, blksize, now);
        if (n == BRISK_ERR_AGAIN)
            break;
        if (n < 0) {
            st->error = (int)n;
            return n;
        }
        st->packets++;
        st->bytes += (uint64_t)n;
        st->last_ns = now;
        done += n;
    }
    return done;
}

uint64_t perf_stream_udp_due(const struct perf_stream *st, uint64_t rate)
{
    if (!st->udp || !st->sender || st->error)
        return BRISK_TIME_NONE;
    return perf_udp_pace_next(rate, st->pace_start, st->bytes);
}

void perf_stream_udp_datagram(struct perf_stream *st, const uint8_t *d, size_t len, int counters64, int count,
                              uint64_t arrival_ns, uint64_t now)
{
    if (!count)
        return;
    uint64_t before = st->rx.bytes;
    perf_udp_rx_datagram(&st->rx, d, len, counters64, arrival_ns);
    st->bytes += st->rx.bytes - before;
    st->last_ns = now;
}

void perf_stream_close(struct perf_stream *st, uint64_t now)
{
    if (st->u) {
        brisk_udp_close(st->u);
        st->u = NULL;
    }
    if (!st->s)
        return;
    if (!st->info_ok && brisk_conn_info(st->s, &st->info) == BRISK_OK)
        st->info_ok = 1;
    brisk_sock *s = st->s;
    st->s = NULL;
    brisk_close(s, now);
}

void perf_stream_udp_result(const struct perf_stream *st, struct iperf_udp_result *out)
{
    memset(out, 0, sizeof(*out));
    if (!st->udp)
        return;
    out->jitter = st->sender ? 0 : st->rx.jitter;
    out->errors = st->sender ? 0 : st->rx.lost;
    out->packets = st->sender ? st->packets : st->rx.packet_count;
}

void perf_stream_report_fill(const struct perf_stream *st, const struct iperf_stream_result *remote,
                             const struct iperf_udp_result *remote_udp, size_t nremote, struct perf_report *r,
                             struct perf_stream_report *o)
{
    o->id = st->id;
    o->sender = st->sender;
    o->bytes = st->bytes;
    o->seconds_ns = r->duration_ns;
    o->remote_retrans = -1;
    if (st->udp) {
        o->udp = 1;
        o->laddr = st->laddr;
        o->lport = st->lport;
        o->raddr = st->peer;
        o->rport = st->peer_port;
        o->packets = st->sender ? st->packets : st->rx.packet_count;
        o->lost = st->sender ? 0 : st->rx.lost;
        o->out_of_order = st->sender ? 0 : st->rx.out_of_order;
        o->jitter = st->sender ? 0 : st->rx.jitter;
        o->short_drops = st->rx.short_drops;
    }
    struct brisk_conn_info live;
    const struct brisk_conn_info *ip = NULL;
    if (st->info_ok) /* the snapshot taken at close */
        ip = &st->info;
    else if (st->s && brisk_conn_info(st->s, &live) == BRISK_OK) /* a test still running */
        ip = &live;
    if (ip) {
        o->laddr = ip->tuple.laddr;
        o->lport = ip->lport;
        o->raddr = ip->tuple.raddr;
        o->rport = ip->rport;
        o->retransmits = ip->retransmits;
        o->mss = ip->mss;
        o->srtt_ns = ip->srtt_ns;
        o->have_info = 1;
        o->info = *ip;
    }
    for (size_t k = 0; k < nremote; k++) {
        if (remote[k].id != st->id)
            continue;
        o->remote_bytes = remote[k].bytes;
        o->remote_retrans = remote[k].retransmits;
        o->remote_seconds = remote[k].end_time - remote[k].start_time;
        o->remote_packets = remote_udp[k].packets;
        o->remote_lost = remote_udp[k].errors;
        o->remote_jitter = remote_udp[k].jitter;
        if (st->sender)
            r->remote_received += remote[k].bytes;
        else
            r->remote_sent += remote[k].bytes;
    }
}
