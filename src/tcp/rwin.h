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
