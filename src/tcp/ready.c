/*
 * ready.c — socket readiness: what poll(2) would report for a brisk socket (brisk_sock_poll, brisk.h).
 *
 * brisk's own API is event-driven (callbacks say what changed), but event loops and POSIX-style facades —
 * brisk-pkt's emulation of Linux system calls, and the coming libbrisk_posix — need the level: "would a read
 * wait now?". The rules are Linux's tcp_poll, so that a program sees the same readiness on brisk as on the
 * kernel:
 *
 *   - a listener is readable when its accept queue holds a connection;
 *   - a connection is readable when in-order data waits, the peer's FIN has arrived (the read returns 0), or
 *     the connection ended (the read returns its error or 0); the FIN also sets RDHUP;
 *   - writable, once the handshake is done, when the send buffer has room — in the linux-* profiles
 *     (tcp_wspace_hysteresis) only when its free space is at least half of what it holds
 *     (sk_stream_is_writeable: a writer is woken when a third of the buffer is free, not per byte; brisk's
 *     default tops the buffer up as segments leave, which keeps the bytes in cache until they are sent:
 *     brisk-bench bulk 20 -> 26 Gbit/s per CPU-second) — and, with TCP_NOTSENT_LOWAT, when the unsent bytes are below half the mark (tcp_stream_memory_free is
 *     asked with wake = 1, which doubles the unsent count); after shutdown of the sending side, always
 *     (the write fails at once with EPIPE);
 *   - HUP when both directions are closed or the connection is over (CLOSED; TIME-WAIT, which Linux hands
 *     to a separate mini-socket, is over as far as the application's socket is concerned);
 *   - ERR while the connection's error is set.
 * A SYN-SENT or SYN-RECEIVED connection is neither readable nor writable.
 */
#include "tcp/tcp.h"

static int over(const brisk_sock *s)
{
    return s->state == BRISK_TCP_CLOSED || s->state == BRISK_TCP_TIME_WAIT;
}

unsigned brisk_sock_poll(const brisk_sock *s)
{
    if (!s)
        return 0;
    if (s->state == BRISK_TCP_LISTEN)
        return s->lq.len > 0 ? BRISK_POLL_IN : 0;
    unsigned m = 0;
    int rcv_shut = s->rcv.fin || over(s);
    int snd_shut = s->snd.fin_queued || over(s);
    if ((rcv_shut && snd_shut) || over(s))
        m |= BRISK_POLL_HUP;
    if (rcv_shut)
        m |= BRISK_POLL_IN | BRISK_POLL_RDHUP;
    if (s->state != BRISK_TCP_SYN_SENT && s->state != BRISK_TCP_SYN_RECEIVED) {
        if (s->rcv.buf.len > 0)
            m |= BRISK_POLL_IN;
        if (snd_shut) {
            m |= BRISK_POLL_OUT;
        } else {
            uint64_t queued = s->snd.buf.len;
            uint64_t free = queued < s->snd.sndbuf ? s->snd.sndbuf - queued : 0;
            int room = queued < s->snd.sndbuf && (!s->net->s.tcp_wspace_hysteresis || 2 * free >= queued);
            if (room && s->snd.lowat && 2 * (uint64_t)tcp_notsent(s) >= s->snd.lowat)
                room = 0;
            if (room)
                m |= BRISK_POLL_OUT;
        }
    }
    if (s->error)
        m |= BRISK_POLL_ERR;
    return m;
}
