/*
 * stream.c — moving an iperf3 data stream's bytes over a brisk socket.
 *
 * iperf3 writes blocks of -l bytes (128 KB for TCP) and counts what the socket accepted; its receiver reads
 * whatever is there and counts it. The content carries nothing (iperf3 fills its block with random bytes), so
 * the receiver discards it. brisk sockets are non-blocking: a send takes what fits in the send buffer, so a
 * block may be written in pieces; the next call finishes it before starting another.
 */
#include "perf/stream.h"

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

void perf_stream_close(struct perf_stream *st, uint64_t now)
{
    if (!st->s)
        return;
    if (!st->info_ok && brisk_conn_info(st->s, &st->info) == BRISK_OK)
        st->info_ok = 1;
    brisk_sock *s = st->s;
    st->s = NULL;
    brisk_close(s, now);
}
