/*
 * rwin.h — the receive window: what a connection advertises, and when reading is worth an ACK (rwin.c).
 */
#ifndef BRISK_TCP_RWIN_H
#define BRISK_TCP_RWIN_H

#include <stdint.h>

/* tcp_rcv_window: which rules choose the advertised window. */
#define TCP_RWIN_RFC9293 0 /* the free payload space of rcvbuf, RFC 9293's receiver SWS avoidance */
#define TCP_RWIN_LINUX   1 /* Linux 6.x: receive memory as Linux charges it, rcv_ssthresh, autotuning */

/* One buffer (skb) of Linux's receive queue or out-of-order queue, as rwin.c models it: the sequence range
 * it holds and the memory it charges. In-order segments coalesce into the last buffer as Linux's
 * tcp_try_coalesce does, so one buffer is up to TCP_RSKB_SEGS segments. */
struct tcp_rskb {
    uint32_t seq, end; /* sequence range held */
    uint32_t truesize; /* memory charged for it (sk_rmem_alloc) */
    uint16_t frags;    /* segments coalesced into it as page fragments */
    uint16_t tailroom; /* bytes its linear buffer still takes by copy (0 once it has fragments) */
};

/* A sequence of buffers in sequence order: a ring (the receive queue: appended at the tail, read from the
 * head) that doubles when full, the SACK scoreboard's way (sack.c). */
struct tcp_rskbq {
    struct tcp_rskb *r;
    uint32_t cap, head, len; /* cap a power of two; buffer i is r[(head + i) & (cap - 1)] */
};

/* Linux's receive-window state (tcp_rcv_window=linux; untouched otherwise), under Linux's names. Cold:
 * read per segment only by the Linux rules. */
struct tcp_rwin {
    uint32_t rmem;     /* sk_rmem_alloc: memory charged by both queues */
    uint32_t clamp;    /* window_clamp: the largest window to advertise */
    uint32_t ssthresh; /* rcv_ssthresh: the window as far as it has grown */
    uint32_t wnd;      /* rcv_wnd: the window last advertised, bytes */
    uint32_t wup;      /* rcv_wup: rcv.nxt when it was */
    uint32_t advmss;   /* our MSS less the timestamp option (tp->advmss once established) */
    uint32_t rcv_mss;  /* icsk_ack.rcv_mss: the peer's segment size as seen */
    uint32_t last_seg; /* icsk_ack.last_seg_size */
    uint32_t hdr_len;  /* tcp_header_len: 20, 32 with timestamps */
    uint8_t ratio;     /* scaling_ratio: payload per byte of memory, in 1/256 */
    uint8_t locked;    /* SO_RCVBUF was set (SOCK_RCVBUF_LOCK): no autotuning */
    uint8_t pushed;    /* ICSK_ACK_PUSHED / PUSHED2 (RWIN_PUSHED*): a small or PSH segment is unacked */
    uint8_t nomem;     /* ICSK_ACK_NOMEM: a segment was dropped for memory; the next window is 0 */
    uint8_t fast;      /* header prediction on (pred_flags): in-order data may bypass the memory checks */
    uint8_t slow;      /* the segment being queued took the slow path (tcp_data_queue) */
    uint16_t peer_win; /* the window field of the peer's last segment (what pred_flags expects) */
    int32_t fwd;       /* sk_forward_alloc: memory reserved in pages ahead of the charges */
    struct {
        uint32_t space; /* rcvq_space.space: bytes read in the last measured round trip */
        uint64_t seq;   /* bytes read (rcv.buf.base) when the measure began */
        uint64_t time;  /* when it began */
    } rcvq;
    struct {
        uint32_t us;         /* rcv_rtt_est.rtt_us: the receiver's RTT estimate, us << 3 */
        uint32_t seq;        /* rcv_rtt_est.seq: the sequence number that ends the window-based sample */
        uint32_t last_tsecr; /* rcv_rtt_last_tsecr */
        uint64_t time;       /* rcv_rtt_est.time: when the window-based sample began (0: none) */
    } rtt;
    struct tcp_rskbq q;   /* the receive queue, oldest first */
    struct tcp_rskbq ooo; /* the out-of-order queue, in sequence order (never wraps: head 0) */
};

#endif

#if defined(BRISK_TCP_SOCK_COMPLETE) && !defined(BRISK_TCP_RWIN_INLINE)
#define BRISK_TCP_RWIN_INLINE

/* rwin.c — the receive window: RFC 9293's rules, or Linux's (tcp_rcv_window; see rwin.c). The per-segment
 * hooks that only Linux's rules need are called behind tcp_rwin_linux, so brisk's rules pay one test. */
static inline int tcp_rwin_linux(const brisk_sock *c)
{
    return c->net->s.tcp_rcv_window == TCP_RWIN_LINUX;
}
/* The window and scale a SYN offers (passive: the SYN-ACK of a child whose options are negotiated): sets
 * rcv.wscale and, under Linux's rules, the initial rcv_wnd, window_clamp and rcv_ssthresh. cookie_mss: a
 * SYN cookie's child, with the MSS the cookie kept (its right edge is set too), else 0. */
void tcp_rwin_open(brisk_sock *c, int passive, uint32_t cookie_mss);
/* The window field and *wscale of a SYN cookie's SYN-ACK from listener l, for a SYN with these options. */
uint16_t tcp_rwin_listen_syn(const brisk_sock *l, uint32_t mss, int ts, int ws_ok, uint8_t *wscale);
/* SYN-SENT got the SYN-ACK (options negotiated): the right edge our SYN offered, from the peer's ISN on. */
void tcp_rwin_synack(brisk_sock *c);
/* The connection became ESTABLISHED (Linux: tcp_init_buffer_space). */
void tcp_rwin_established(brisk_sock *c, uint64_t now);
/* The window field of a segment about to go (a SYN's unscaled); sets rcv.adv and rcv.last_win. */
uint16_t tcp_rwin_select(brisk_sock *c, int syn);
/* Under Linux's rules, whether a segment occupying [seq, seq + seglen) that passed RFC 9293's window test is
 * taken (one ending past the right edge only when nothing is queued); 1 under RFC 9293's. */
int tcp_rwin_acceptable(const brisk_sock *c, uint32_t seq, uint32_t seglen);
/* Under Linux's rules, whether `len` bytes of segment `seg` at `seq` may be queued: 1 yes, 0 no (an in-order
 * segment into a zero window), -1 no (receive memory, after pruning); 1 under RFC 9293's (brisk trims to the
 * window). */
int tcp_rwin_admit(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t seq, uint32_t len);
/* A segment was processed (Linux's rules follow the peer's window for header prediction). */
void tcp_rwin_seen(brisk_sock *c, const struct brisk_tcp_repr *seg);
/* An accepted segment that found the connection ESTABLISHED: Linux's receiver RTT sample from its echoed
 * timestamp (tcp_rcv_rtt_measure_ts, which only tcp_rcv_established runs). */
void tcp_rwin_rtt_ts(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now);
/* In-order text [seq, seq + len) that came in a frame of `frame` bytes joined the receive stream (rcv.nxt
 * already past it; len 0: a bare FIN): Linux's memory charge, rcv_mss, ratio, window growth, quick ACKs.
 * first: the connection's first data; gap: the time since the previous data segment. */
void tcp_rwin_data(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t seq, uint32_t len,
                   uint32_t frame, int first, uint64_t gap, uint64_t now);
/* Under Linux's rules, whether in-order data received makes an ACK due now (not only delayed). */
int tcp_rwin_ack_due(brisk_sock *c);
/* Out-of-order text [seq, seq + len) in a frame of `frame` bytes was stored. */
void tcp_rwin_ofo(brisk_sock *c, uint32_t seq, uint32_t len, uint32_t frame);
/* rcv.nxt advanced from `nxt` over data held out of order. */
void tcp_rwin_ofo_drain(brisk_sock *c, uint32_t nxt);
/* The application took n bytes (rcv.buf already consumed): memory freed, autotuning; returns 1 when the
 * read is worth an ACK now (the window it opened). */
int tcp_rwin_read(brisk_sock *c, uint32_t n, uint64_t now);
/* The receive buffer SO_RCVBUF value v gives under Linux's rules (doubled, capped by rmem_max; autotuning
 * off from now on); v itself under RFC 9293's. */
uint32_t tcp_rwin_rcvbuf_opt(brisk_sock *c, uint64_t v);
/* A child takes its listener's receive-buffer lock. */
void tcp_rwin_inherit(brisk_sock *c, const brisk_sock *l);
void tcp_rwin_free(brisk_sock *c);
/* Linux's rcv_ssthresh (under RFC 9293's rules, the largest window the buffer allows). */
uint32_t tcp_rwin_ssthresh(const brisk_sock *c);

#endif
