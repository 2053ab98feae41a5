/*
 * rwin.c — the receive window: what each segment advertises, what the receive buffer admits, and when the
 * application's read is worth an ACK. Two sets of rules, chosen by tcp_rcv_window:
 *
 * rfc9293 (brisk's default). The window is the free space of rcv.rcvbuf counted in payload bytes (in-order
 * data not yet read plus out-of-order data held). Receiver silly-window avoidance (RFC 9293 §3.8.6.2.2): the
 * right edge moves only by min(rcvbuf / 2, MSS) or more, and never moves left (a window offered is not
 * withdrawn: RFC 9293 §3.8.6, SHLD-14); the scale is the smallest that lets the window field say rcvbuf
 * (RFC 7323 §2.3). A read that opened the window by two segments, or reopened one smaller than a segment, is
 * advertised at once.
 *
 * linux (every linux-* profile). Linux 6.x chooses its window from memory, not from payload: each received
 * segment is charged what its buffer (skb) costs, its truesize, and the window is that memory's free part
 * converted back to payload by the connection's measured payload / truesize ratio (scaling_ratio). How the
 * window moves through a connection's life follows from a handful of Linux functions, modelled here one to
 * one (the names are Linux's, the code is not):
 *   - tcp_select_initial_window: the SYN's window is the full space (rcvbuf x ratio, the ratio 50 % until a
 *     segment is measured) rounded down to whole MSS (our MSS less the timestamp option on a SYN-ACK: 45 x
 *     1448 = 65160 for the 128 KB default), at most 65535 in the field; the scale is ilog2(max(space,
 *     tcp_rmem[2], rmem_max)) - 15 (7 for 6 MB), bounded by window_clamp, which SO_RCVBUF sets to the full
 *     space (tcp_connect_init, tcp_openreq_init_rwin);
 *   - tcp_init_buffer_space, once established: window_clamp becomes the full space less one segment
 *     (tcp_app_win), and rcv_ssthresh, the window as far as it has grown, is bounded by it (64088);
 *   - tcp_select_window / __tcp_select_window, per segment: the free space, at most rcv_ssthresh, rounded up
 *     to the scale unit (or, unscaled, to whole segments of the peer's size, kept while within one of
 *     them); a zero window once the free space falls below a segment or 1/16 of the buffer while under half
 *     of it; never less than what the previous window still promises (65160 - 1000 is sent as 510 << 7);
 *   - tcp_measure_rcv_mss and tcp_grow_window, per in-order segment: the peer's segment size (rcv_mss), the
 *     ratio from the first segment of each new size (window_clamp follows, tcp_set_window_clamp), and
 *     rcv_ssthresh grown by two segments per segment received while memory allows, each growth also asking
 *     for one more immediate ACK (icsk_ack.quick |= 1);
 *   - memory as Linux charges it (tcp_queue_rcv / tcp_try_coalesce): a segment that starts a buffer costs
 *     its frame plus 64 bytes of headroom rounded to 64, plus 576 (skb_shared_info and sk_buff: a tun or
 *     build_skb driver's buffer, the TAP device the kernel oracle uses); one that joins the previous buffer
 *     as a page fragment costs that less the 256-byte sk_buff, one that fits the buffer's tail room nothing;
 *     a buffer takes 18 segments (17 fragments, MAX_SKB_FRAGS). Out-of-order segments are charged the same
 *     way in their own queue (tcp_data_queue_ofo) and keep their buffers when a hole fills (tcp_ofo_queue).
 *     Reading frees a buffer only once all of it was read;
 *   - tcp_rcv_space_adjust / tcp_rcvbuf_grow, per buffer read: receive buffer autotuning (DRS). Once per
 *     receiver RTT (from timestamps, tcp_rcv_rtt_measure_ts, or one window's time, tcp_rcv_rtt_measure),
 *     what was read beyond what the last round trip read doubles, with slow-start headroom, into rcvbuf up
 *     to tcp_rmem[2] and window_clamp with it (unless SO_RCVBUF was set or tcp_moderate_rcvbuf is 0);
 *   - tcp_cleanup_rbuf, after a read: an ACK if one was owed and more than a segment came since the last
 *     window, or the read emptied the queue after a pushed small segment; or if the window can now be at
 *     least twice what the last one still promises while that is at most half of window_clamp;
 *   - admission: a segment ending past the right edge is dropped unless nothing is queued (tcp_sequence);
 *     in order into a zero window, dropped (tcp_data_queue); past memory, tcp_prune_queue: rcvbuf grows to
 *     what is charged (tcp_clamp_window), then the unread queue is copied into compact buffers
 *     (tcp_collapse), and a segment that still does not fit is dropped with the next window 0
 *     (ICSK_ACK_NOMEM). In-order data the peer sends as predicted skips those checks while memory reserved
 *     in pages ahead covers it (header prediction, sk_forward_alloc), which lets small segments overrun the
 *     buffer before the first prune.
 * Not modelled: pruning the out-of-order queue (the segment that does not fit is dropped instead), the
 * out-of-order queue's collapsing, memory pressure across sockets, TCP_WINDOW_CLAMP, SO_RCVLOWAT, and the
 * pages the send side reserves in the same sk_forward_alloc (so header prediction's memory is the receive
 * side's alone). The state is struct tcp_rwin (rwin.h), cold in the connection; the brisk rules never touch
 * it, and the hooks only Linux's rules need are called behind tcp_rwin_linux (tcp.h).
 *
 *   tcp_rwin_open / _listen_syn / _synack / _established   the handshake's windows
 *   tcp_rwin_select                          the window field of each segment sent
 *   tcp_rwin_acceptable / _admit / _data / _ofo / _ofo_drain / _rtt_ts / _seen / _ack_due   segments arriving
 *   tcp_rwin_read                            the application read: memory, autotuning, the ACK it is worth
 *   tcp_rwin_rcvbuf_opt / _inherit / _free / _ssthresh   SO_RCVBUF, children, the end, tcp_info
 */
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp.h"

/* Linux's constants for x86-64, where its sizes matter to the window. */
#define RMEM_TO_WIN_SCALE 8    /* TCP_RMEM_TO_WIN_SCALE: scaling_ratio's fixed point */
#define DEFAULT_RATIO     128  /* TCP_DEFAULT_SCALING_RATIO: 50 % until a segment is measured */
#define SKB_SHINFO        320  /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) */
#define SKB_STRUCT        256  /* SKB_DATA_ALIGN(sizeof(struct sk_buff)) */
#define RX_HEADROOM       64   /* NET_SKB_PAD: headroom a tun / build_skb driver reserves */
#define SKB_FRAGS         17   /* MAX_SKB_FRAGS */
#define SOCK_MIN_RCVBUF   2304 /* 2048 + sizeof(struct sk_buff) */
#define MAX_QUICKACKS     16   /* TCP_MAX_QUICKACKS */
#define MSS_DEFAULT       536  /* TCP_MSS_DEFAULT */
#define MIN_MSS           88   /* TCP_MIN_MSS */
#define COLLAPSE_CHUNK    3776 /* SKB_MAX_ORDER(0, 0): one page less skb_shared_info */
#define RSKB_INITIAL      16u
#define RSKB_MAX          (1u << 20)

#define RWIN_PUSHED  0x1u /* ICSK_ACK_PUSHED */
#define RWIN_PUSHED2 0x2u /* ICSK_ACK_PUSHED2 */

static int linux_rules(const brisk_sock *c)
{
    return tcp_rwin_linux(c);
}

/* ---- memory and window arithmetic (tcp_win_from_space and friends) ---- */

/* Payload that `space` bytes of memory hold at the connection's ratio (negative stays negative). */
static int64_t win_from_space(const brisk_sock *c, int64_t space)
{
    if (space <= 0)
        return space;
    return (space * c->rw.ratio) >> RMEM_TO_WIN_SCALE;
}

/* Memory that a window of `win` payload bytes needs (tcp_space_from_win). */
static uint64_t space_from_win(const brisk_sock *c, uint64_t win)
{
    return (win << RMEM_TO_WIN_SCALE) / c->rw.ratio;
}

/* tcp_space: the free part of the buffer as payload. */
static int64_t free_space(const brisk_sock *c)
{
    return win_from_space(c, (int64_t)c->rcv.rcvbuf - (int64_t)c->rw.rmem);
}

/* tcp_full_space. */
static int64_t full_space(const brisk_sock *c)
{
    return win_from_space(c, c->rcv.rcvbuf);
}

static uint32_t align_up(uint32_t v, uint32_t unit)
{
    return (v + unit - 1) & ~(unit - 1);
}

/* The truesize of the buffer a frame of `frame` bytes arrives in (tun_build_skb / build_skb: the frame and
 * its headroom in a cache-aligned area, then skb_shared_info, plus the sk_buff). */
static uint32_t frame_truesize(uint32_t frame)
{
    return align_up(frame + RX_HEADROOM, 64) + SKB_SHINFO + SKB_STRUCT;
}

/* The linear room after a frame in such a buffer. */
static uint32_t frame_tailroom(uint32_t frame)
{
    return align_up(frame + RX_HEADROOM, 64) - RX_HEADROOM - frame;
}

/* The truesize of a buffer tcp_collapse allocates for `len` bytes: kmalloc's power-of-two size class for
 * the data and skb_shared_info, plus the sk_buff. */
static uint32_t collapse_truesize(uint32_t len)
{
    uint32_t need = align_up(len, 64) + SKB_SHINFO;
    uint32_t size = 64;
    while (size < need)
        size <<= 1;
    return size + SKB_STRUCT;
}

/* Receive memory charged (sk_mem_charge with sk_rmem_alloc) and freed (sock_rfree: sk_mem_uncharge, then
 * sk_mem_reclaim gives whole pages back, leaving less than one reserved). */
static void mem_charge(struct tcp_rwin *rw, uint32_t n)
{
    rw->rmem += n;
    rw->fwd -= (int32_t)n;
}

static void mem_uncharge(struct tcp_rwin *rw, uint32_t n)
{
    rw->rmem -= n;
    rw->fwd += (int32_t)n;
    if (rw->fwd >= 4096)
        rw->fwd &= 4095;
}

/* sk_rmem_schedule: reserve whole pages for `size` bytes ahead of charging them (no memory pressure). */
static void mem_schedule(struct tcp_rwin *rw, uint32_t size)
{
    int32_t delta = (int32_t)size - rw->fwd;
    if (delta > 0)
        rw->fwd += (delta + 4095) & ~4095;
}

/* The window the last advertisement still promises (tcp_receive_window). */
static uint32_t promised(const brisk_sock *c)
{
    int32_t w = (int32_t)(c->rw.wup + c->rw.wnd - c->rcv.nxt);
    return w > 0 ? (uint32_t)w : 0;
}

/* ---- buffer queues ---- */

static struct tcp_rskb *q_at(const struct tcp_rskbq *q, uint32_t i)
{
    return &q->r[(q->head + i) & (q->cap - 1)];
}

/* Room for one more buffer; 0 when the ring cannot grow (the caller merges into the tail instead). */
static int q_room(struct tcp_rskbq *q)
{
    if (q->len < q->cap)
        return 1;
    uint32_t cap = q->cap ? q->cap * 2 : RSKB_INITIAL;
    struct tcp_rskb *n = cap <= RSKB_MAX ? malloc((size_t)cap * sizeof(*n)) : NULL;
    if (!n)
        return 0;
    for (uint32_t i = 0; i < q->len; i++)
        n[i] = *q_at(q, i);
    free(q->r);
    q->r = n;
    q->cap = cap;
    q->head = 0;
    return 1;
}

static void q_free(struct tcp_rskbq *q)
{
    free(q->r);
    memset(q, 0, sizeof(*q));
}

/* Appends [seq, seq + len) that came in a frame of `frame` bytes to the receive queue, coalesced into the
 * last buffer where Linux's tcp_try_coalesce would (skb_try_coalesce: copied into its tail room, or its
 * buffer stolen as a page fragment, up to MAX_SKB_FRAGS), and charges the memory. */
static void q_charge(brisk_sock *c, uint32_t seq, uint32_t len, uint32_t frame)
{
    struct tcp_rskbq *q = &c->rw.q;
    struct tcp_rskb *tail = q->len ? q_at(q, q->len - 1) : NULL;
    uint32_t ts = frame_truesize(frame);
    if (tail && tail->end == seq) {
        if (len == 0 || (tail->frags == 0 && len <= tail->tailroom)) {
            tail->tailroom = (uint16_t)(tail->tailroom - len);
            tail->end += len;
            return;
        }
        if (tail->frags < SKB_FRAGS) {
            tail->frags++;
            tail->tailroom = 0;
            tail->truesize += ts - SKB_STRUCT;
            tail->end += len;
            mem_charge(&c->rw, ts - SKB_STRUCT);
            return;
        }
    }
    if (!q_room(q)) {
        if (!tail)
            return;           /* no ring at all: the buffer goes uncharged */
        tail->truesize += ts; /* the ring cannot grow: charge it to the last buffer */
        tail->end = seq + len;
        mem_charge(&c->rw, ts);
        return;
    }
    struct tcp_rskb *b = q_at(q, q->len++);
    b->seq = seq;
    b->end = seq + len;
    b->truesize = ts;
    b->frags = 0;
    b->tailroom = (uint16_t)frame_tailroom(frame);
    mem_charge(&c->rw, ts);
}

/* ---- the handshake ---- */

/* What tcp_select_initial_window chooses for a SYN. */
struct initial {
    uint32_t wnd;   /* rcv_wnd: the window offered */
    uint32_t clamp; /* window_clamp */
    uint8_t ws;     /* rcv_wscale */
};

/* tcp_select_initial_window: a SYN offering `space` bytes of window in segments of `mss`, with window
 * scaling if `wscale_ok`, under window_clamp `clamp` (0: none). */
static struct initial select_initial(const struct brisk_settings *s, uint32_t clamp, int64_t space64,
                                     uint32_t mss, int wscale_ok)
{
    struct initial r = {0, 0, 0};
    if (!clamp)
        clamp = (uint32_t)TCP_MAX_WIN << TCP_MAX_WSCALE;
    uint32_t space = space64 < 0 ? 0 : space64 > UINT32_MAX ? UINT32_MAX : (uint32_t)space64;
    if (space > clamp)
        space = clamp;
    if (mss && space > mss)
        space = space / mss * mss; /* whole segments */
    r.wnd = space;
    if (wscale_ok) {
        /* The scale for the largest window the buffer may ever grow to. */
        uint32_t top = space;
        if (top < s->tcp_rmem_max)
            top = s->tcp_rmem_max;
        if (top < s->rmem_max)
            top = s->rmem_max;
        if (top > clamp)
            top = clamp;
        int log = 31 - __builtin_clz(top ? top : 1);
        r.ws = (uint8_t)(log - 15 < 0 ? 0 : log - 15 > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : log - 15);
    }
    uint32_t max = (uint32_t)TCP_MAX_WIN << r.ws;
    r.clamp = clamp < max ? clamp : max;
    return r;
}

void tcp_rwin_open(brisk_sock *c, int passive, uint32_t cookie_mss)
{
    if (!linux_rules(c)) {
        /* The smallest scale that lets the window field say rcvbuf (RFC 7323 §2.3); the SYN offers what the
         * buffer holds, at most what an unscaled field says (tcp_rwin_select). */
        int ws = passive ? c->opt.ws : c->net->s.tcp_window_scaling;
        c->rcv.wscale = ws ? tcp_wscale_for(c->rcv.rcvbuf) : 0;
        if (cookie_mss) { /* a SYN cookie's child: its SYN-ACK offered what the buffer held */
            c->rcv.last_win = c->rcv.rcvbuf < TCP_MAX_WIN ? c->rcv.rcvbuf : TCP_MAX_WIN;
            c->rcv.adv = c->rcv.nxt + c->rcv.last_win;
        }
        return;
    }
    struct tcp_rwin *rw = &c->rw;
    const struct brisk_settings *s = &c->net->s;
    rw->ratio = DEFAULT_RATIO;
    int64_t full = full_space(c);
    /* The user enforced a smaller buffer (SO_RCVBUF): the window never exceeds it (tcp_connect_init,
     * tcp_openreq_init_rwin). */
    uint32_t clamp = rw->locked ? (uint32_t)full : 0;
    uint32_t mss = tcp_local_mss(c);
    struct initial in;
    if (cookie_mss) /* cookie_v4_check: chosen again, in segments of the MSS the cookie kept */
        in = select_initial(s, clamp, full, cookie_mss, c->opt.ws);
    else if (passive) /* tcp_openreq_init_rwin: segments the timestamp option leaves; scaled if asked */
        in = select_initial(s, clamp, full, mss - (c->opt.ts ? 12u : 0u), c->opt.ws);
    else /* tcp_connect_init: the whole MSS (no timestamp seen yet); scaled if the setting allows */
        in = select_initial(s, clamp, full, mss, s->tcp_window_scaling != 0);
    rw->wnd = in.wnd;
    rw->clamp = in.clamp;
    c->rcv.wscale = in.ws;
    rw->ssthresh = rw->wnd;
    rw->wup = c->rcv.nxt;
    c->rcv.adv = c->rcv.nxt + rw->wnd;
    c->rcv.last_win = rw->wnd;
}

uint16_t tcp_rwin_listen_syn(const brisk_sock *l, uint32_t mss, int ts, int ws_ok, uint8_t *wscale)
{
    if (!linux_rules(l)) {
        *wscale = tcp_wscale_for(l->rcv.rcvbuf);
        return (uint16_t)(l->rcv.rcvbuf < TCP_MAX_WIN ? l->rcv.rcvbuf : TCP_MAX_WIN);
    }
    /* A SYN cookie's SYN-ACK offers what tcp_openreq_init_rwin would, the listener's buffer at 50 %. */
    int64_t full = ((int64_t)l->rcv.rcvbuf * DEFAULT_RATIO) >> RMEM_TO_WIN_SCALE;
    struct initial in =
        select_initial(&l->net->s, l->rw.locked ? (uint32_t)full : 0, full, mss - (ts ? 12u : 0u), ws_ok);
    *wscale = in.ws;
    return (uint16_t)(in.wnd < TCP_MAX_WIN ? in.wnd : TCP_MAX_WIN);
}

void tcp_rwin_synack(brisk_sock *c)
{
    if (!linux_rules(c)) {
        /* Our SYN offered an unscaled window before we knew where the peer's sequence space starts. */
        uint32_t space = tcp_rcv_space(c);
        c->rcv.adv = c->rcv.nxt + (space < TCP_MAX_WIN ? space : TCP_MAX_WIN);
        return;
    }
    /* tcp_rcv_synsent_state_process: the window counts from the SYN-ACK on; without the peer's scale option,
     * no window beyond 65535. */
    c->rw.wup = c->rcv.nxt;
    c->rcv.adv = c->rcv.nxt + c->rw.wnd;
    if (!c->opt.ws && c->rw.clamp > TCP_MAX_WIN)
        c->rw.clamp = TCP_MAX_WIN;
}

void tcp_rwin_established(brisk_sock *c, uint64_t now)
{
    if (!linux_rules(c))
        return;
    struct tcp_rwin *rw = &c->rw;
    uint32_t app_win = c->net->s.tcp_app_win;
    /* The timestamp option is taken from every segment's MSS once it is known to be in use. */
    rw->advmss = tcp_local_mss(c) - (c->opt.ts ? 12u : 0u);
    rw->hdr_len = 20u + (c->opt.ts ? 12u : 0u);
    /* tcp_initialize_rcv_mss: a guess of the peer's segment size, low rather than high. */
    uint32_t hint = c->snd.mss;
    if (hint > rw->wnd / 2)
        hint = rw->wnd / 2;
    if (hint > MSS_DEFAULT)
        hint = MSS_DEFAULT;
    if (hint < MIN_MSS)
        hint = MIN_MSS;
    rw->rcv_mss = hint;
    /* tcp_init_buffer_space: window_clamp keeps room for the application (tcp_app_win) and one segment. */
    uint32_t maxwin = (uint32_t)full_space(c);
    if (rw->clamp >= maxwin) {
        rw->clamp = maxwin;
        if (app_win && maxwin > 4 * rw->advmss) {
            uint32_t keep = app_win < 32 ? maxwin - (maxwin >> app_win) : maxwin;
            rw->clamp = keep > 4 * rw->advmss ? keep : 4 * rw->advmss;
        }
    }
    if (app_win && rw->clamp > 2 * rw->advmss && rw->clamp + rw->advmss > maxwin)
        rw->clamp = maxwin - rw->advmss > 2 * rw->advmss ? maxwin - rw->advmss : 2 * rw->advmss;
    if (rw->ssthresh > rw->clamp)
        rw->ssthresh = rw->clamp;
    uint32_t space = rw->ssthresh < rw->wnd ? rw->ssthresh : rw->wnd;
    if (space > 10 * rw->advmss)
        space = 10 * rw->advmss;
    rw->rcvq.space = space;
    rw->rcvq.seq = c->rcv.buf.base;
    rw->rcvq.time = now;
    /* Linux counts immediate ACKs from the first data segment on (tcp_incr_quickack), not from the open. */
    c->ack.quick = 0;
    /* Header prediction: on from the passive open, from an active one only without window scaling
     * (tcp_finish_connect); the peer's window as the handshake left it. */
    rw->peer_win = (uint16_t)(c->snd.wnd >> c->snd.wscale);
    rw->fast = c->listener || !c->snd.wscale;
    rw->slow = 1;
}

/* ---- the window of each segment ---- */

/* __tcp_select_window: the window the buffer allows now, before the rule that it never shrinks. */
static uint32_t select_raw(brisk_sock *c)
{
    struct tcp_rwin *rw = &c->rw;
    int64_t mss = rw->rcv_mss;
    int64_t free = free_space(c);
    int64_t allowed = full_space(c);
    int64_t full = rw->clamp < allowed ? rw->clamp : allowed;
    uint32_t unit = 1u << c->rcv.wscale;
    if (mss > full) {
        mss = full;
        if (mss <= 0)
            return 0;
    }
    if (free < full / 2) {
        c->ack.quick = 0; /* Linux: no more quick ACKs while the buffer fills */
        if (free < 0)
            return 0;
        free &= ~(int64_t)(unit - 1); /* it might become the window: never raise it by the scale */
        /* Below a segment, or below 1/16 of the buffer: a zero window, before memory runs out. */
        if (free < allowed / 16 || free < mss)
            return 0;
    }
    if (free > rw->ssthresh)
        free = rw->ssthresh;
    if (c->rcv.wscale)
        return align_up((uint32_t)free, unit); /* never scaled away to zero */
    /* Unscaled: whole segments of the peer's size, the current window kept while within one of them. */
    int64_t window = rw->wnd;
    if (window <= free - mss || window > free)
        window = free / mss * mss;
    else if (mss == full && free > window + full / 2)
        window = free;
    return (uint32_t)window;
}

/* RFC 9293 rules: the window to advertise now, bytes, and the new right edge rcv.adv. */
static uint32_t select_rfc(brisk_sock *c)
{
    uint32_t space = tcp_rcv_space(c);
    uint32_t max = TCP_MAX_WIN << c->rcv.wscale;
    if (space > max)
        space = max;
    uint32_t promise = brisk_seq_gt(c->rcv.adv, c->rcv.nxt) ? c->rcv.adv - c->rcv.nxt : 0;
    /* Receiver SWS avoidance: move the right edge only by a worthwhile amount. */
    uint32_t mss = c->snd.mss ? c->snd.mss : TCP_DEFAULT_MSS;
    uint32_t step = c->rcv.rcvbuf / 2 < mss ? c->rcv.rcvbuf / 2 : mss;
    uint32_t win = space;
    if (space < promise || space - promise < step)
        win = promise; /* never shrink the right edge (RFC 9293 §3.8.6.2.2) */
    if (win > max)
        win = max;
    /* Round up to the scale unit so the edge we announce is never left of the one we promised. */
    uint32_t unit = (1u << c->rcv.wscale) - 1;
    if (win <= max - unit)
        win = (win + unit) & ~unit;
    c->rcv.adv = c->rcv.nxt + win;
    return win;
}

/* tcp_select_window: the window for a segment now; the right edge never moves left (tcp_shrink_window 0). */
static uint32_t select_linux(brisk_sock *c)
{
    struct tcp_rwin *rw = &c->rw;
    uint32_t win;
    if (rw->nomem) {
        win = 0; /* a segment was dropped for memory: say so (ICSK_ACK_NOMEM) */
    } else {
        uint32_t cur = promised(c);
        win = select_raw(c);
        if (win < cur)
            win = align_up(cur, 1u << c->rcv.wscale);
    }
    rw->wnd = win;
    rw->wup = c->rcv.nxt;
    rw->nomem = 0;
    if (win == 0)
        rw->fast = 0; /* header prediction stays off while the window is closed */
    rw->pushed = 0;   /* the ACK this segment carries settles what made an ACK due */
    c->rcv.adv = rw->wup + rw->wnd;
    uint32_t max = TCP_MAX_WIN << c->rcv.wscale;
    return win < max ? win : max;
}

uint16_t tcp_rwin_select(brisk_sock *c, int syn)
{
    uint32_t win;
    if (syn) {
        /* A SYN's window is never scaled (RFC 7323 §2.2). */
        if (linux_rules(c)) {
            c->rcv.adv = c->rcv.nxt + c->rw.wnd;
            c->rw.wup = c->rcv.nxt;
            win = c->rw.wnd < TCP_MAX_WIN ? c->rw.wnd : TCP_MAX_WIN;
        } else {
            uint32_t space = tcp_rcv_space(c);
            win = space < TCP_MAX_WIN ? space : TCP_MAX_WIN;
            c->rcv.adv = c->rcv.nxt + win;
        }
        c->rcv.last_win = win;
        return (uint16_t)win;
    }
    win = linux_rules(c) ? select_linux(c) : select_rfc(c);
    if (win == 0 && c->rcv.last_win != 0)
        c->net->c.TCPToZeroWindowAdv++;
    else if (win != 0 && c->rcv.last_win == 0)
        c->net->c.TCPFromZeroWindowAdv++;
    c->rcv.last_win = win;
    return (uint16_t)(win >> c->rcv.wscale);
}

/* ---- segments arriving ---- */

int tcp_rwin_acceptable(const brisk_sock *c, uint32_t seq, uint32_t seglen)
{
    /* tcp_sequence (Linux 6.17 on): a segment that ends past the right edge is taken only when nothing is
     * queued for the application, however much of it lies inside. */
    if (!linux_rules(c) || seglen == 0)
        return 1;
    uint32_t edge = c->rcv.nxt + promised(c);
    if (!brisk_seq_gt(seq + seglen, edge))
        return 1;
    return !brisk_seq_gt(seq, edge) && c->rcv.buf.len == 0;
}

/* tcp_incr_quickack: immediate ACKs for about half a window of the peer's segments, at most 16. */
static void incr_quickack(brisk_sock *c)
{
    uint32_t quick = c->rw.wnd / (2 * c->rw.rcv_mss);
    if (quick == 0)
        quick = 2;
    if (quick > MAX_QUICKACKS)
        quick = MAX_QUICKACKS;
    if (quick > c->ack.quick)
        c->ack.quick = (uint8_t)quick;
}

/* tcp_enter_quickack_mode: immediate ACKs again, and not interactive. */
static void enter_quickack(brisk_sock *c)
{
    incr_quickack(c);
    c->ack.pingpong = 0;
    c->ack.ato = c->net->s.tcp_delack_min_ns;
}

/* tcp_collapse of the receive queue: from the first buffer that is bloated (its memory holds more than its
 * payload's worth of window) or partly read, the unread bytes are copied into compact buffers of at most
 * one page each; the buffers before it stay. */
static void collapse(brisk_sock *c)
{
    struct tcp_rwin *rw = &c->rw;
    struct tcp_rskbq *q = &rw->q;
    uint32_t start = c->rcv.nxt - c->rcv.fin - (uint32_t)c->rcv.buf.len; /* copied_seq */
    uint32_t i = 0;
    for (; i < q->len; i++) {
        struct tcp_rskb *b = q_at(q, i);
        if (win_from_space(c, b->truesize) > (int64_t)(b->end - b->seq) || brisk_seq_lt(b->seq, start))
            break;
    }
    if (i == q->len)
        return;
    uint32_t from = brisk_seq_gt(q_at(q, i)->seq, start) ? q_at(q, i)->seq : start;
    uint32_t end = q_at(q, q->len - 1)->end;
    uint32_t old = 0; /* what the collapsed buffers charged: freed once the copies are charged */
    for (uint32_t k = i; k < q->len; k++)
        old += q_at(q, k)->truesize;
    c->net->c.TCPRcvCollapsed += q->len - i;
    q->len = i;
    while (brisk_seq_lt(from, end)) {
        uint32_t n = end - from < COLLAPSE_CHUNK ? end - from : COLLAPSE_CHUNK;
        if (!q_room(q))
            break;
        struct tcp_rskb *b = q_at(q, q->len++);
        b->seq = from;
        b->end = from + n;
        b->truesize = collapse_truesize(n);
        b->frags = 0;
        b->tailroom = (uint16_t)(b->truesize - SKB_STRUCT - SKB_SHINFO - n);
        mem_charge(rw, b->truesize);
        from += n;
    }
    mem_uncharge(rw, old);
}

/* tcp_can_ingest: memory for a segment of `len` bytes. */
static int can_ingest(const brisk_sock *c, uint32_t len)
{
    return (uint64_t)c->rw.rmem + len <= c->rcv.rcvbuf;
}

/* tcp_fast_path_check: header prediction resumes with nothing out of order, a window open and memory left. */
static void fast_path_check(brisk_sock *c)
{
    struct tcp_rwin *rw = &c->rw;
    if (rw->ooo.len == 0 && rw->wnd != 0 && rw->rmem < c->rcv.rcvbuf)
        rw->fast = 1;
}

int tcp_rwin_admit(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t seq, uint32_t len)
{
    if (!linux_rules(c))
        return 1;
    struct tcp_rwin *rw = &c->rw;
    uint32_t truesize = frame_truesize(BRISK_ETH_HLEN + (uint32_t)brisk_route_l3_hlen(&c->rt) + seg->hdr_len +
                                        (uint32_t)seg->payload_len);
    int in_order = seq == c->rcv.nxt;
    /* Header prediction (tcp_rcv_established's fast path): in-order data with only ACK (and PSH), the usual
     * header and the window the last segment had, is queued without the memory checks while the memory
     * reserved ahead (sk_forward_alloc) covers its buffer. */
    uint8_t f = seg->flags & (uint8_t)~BRISK_TCP_PSH;
    if (in_order && rw->fast && f == BRISK_TCP_ACK && seg->hdr_len == rw->hdr_len &&
        seg->window == rw->peer_win && (int32_t)truesize <= rw->fwd) {
        rw->slow = 0;
        return 1;
    }
    rw->slow = 1;
    if (!in_order)
        rw->fast = 0; /* tcp_data_queue_ofo disables header prediction */
    if (in_order && promised(c) == 0 && len) {
        /* tcp_data_queue: nothing but a bare FIN goes into a zero window; the sender hears at once, and
         * soon again (tcp_enter_quickack_mode). */
        c->net->c.TCPZeroWindowDrop++;
        enter_quickack(c);
        return 0;
    }
    /* tcp_try_rmem_schedule: memory for the segment, and pages reserved for its buffer. */
    if (!can_ingest(c, len)) {
        /* tcp_prune_queue: the buffer first grows to what is charged, if it may (tcp_clamp_window) ... */
        c->net->c.PruneCalled++;
        c->ack.quick = 0;
        uint32_t rmem2 = c->net->s.tcp_rmem_max;
        if (c->rcv.rcvbuf < rmem2 && !rw->locked)
            c->rcv.rcvbuf = rw->rmem < rmem2 ? rw->rmem : rmem2;
        if (rw->rmem > c->rcv.rcvbuf)
            rw->ssthresh = rw->clamp < 2 * rw->advmss ? rw->clamp : 2 * rw->advmss;
        /* ... then the unread data is copied compactly (tcp_collapse). */
        if (!can_ingest(c, len))
            collapse(c);
        if (!can_ingest(c, len)) {
            /* Linux would prune the out-of-order queue next; brisk drops the segment, and for in-order data
             * advertises a zero window at once (ICSK_ACK_NOMEM | ICSK_ACK_NOW). */
            rw->fast = 0;
            if (in_order)
                rw->nomem = 1;
            return -1;
        }
    }
    mem_schedule(rw, truesize);
    return 1;
}

void tcp_rwin_seen(brisk_sock *c, const struct brisk_tcp_repr *seg)
{
    if (!linux_rules(c))
        return;
    /* A new window from the peer re-arms header prediction for it (tcp_ack_update_window). */
    if (seg->window != c->rw.peer_win) {
        c->rw.peer_win = seg->window;
        c->rw.fast = 0;
        fast_path_check(c);
    }
}

/* tcp_rcv_rtt_update: a receiver RTT sample in us; win_dep: from one window's time (a minimum is kept). */
static void rtt_update(struct tcp_rwin *rw, uint32_t sample, int win_dep)
{
    int64_t est = rw->rtt.us;
    int64_t m = sample;
    if (est != 0) {
        if (!win_dep) {
            m -= est >> 3;
            est += m;
        } else {
            m <<= 3;
            if (m < est)
                est = m;
        }
    } else {
        est = m << 3;
    }
    rw->rtt.us = est < 0 ? 0 : est > UINT32_MAX ? UINT32_MAX : (uint32_t)est;
}

void tcp_rwin_rtt_ts(brisk_sock *c, const struct brisk_tcp_repr *seg, uint64_t now)
{
    /* tcp_rcv_rtt_measure_ts: a segment of at least rcv_mss echoing a new timestamp of ours measures the
     * time since we sent it. */
    if (!linux_rules(c) || !c->opt.ts || !seg->opts.ts_ok)
        return;
    struct tcp_rwin *rw = &c->rw;
    if (seg->opts.ts_ecr == rw->rtt.last_tsecr)
        return;
    rw->rtt.last_tsecr = seg->opts.ts_ecr;
    uint32_t seglen = (uint32_t)seg->payload_len + ((seg->flags & BRISK_TCP_FIN) ? 1u : 0u);
    if (seglen < rw->rcv_mss)
        return;
    uint32_t ticks = tcp_ts_now(c, now) - seg->opts.ts_ecr;
    if (ticks >= (uint32_t)INT32_MAX / 1000)
        return;
    rtt_update(rw, (ticks ? ticks : 1) * 1000u, 0);
}

/* tcp_set_window_clamp: window_clamp follows a new ratio; growing it lets rcv_ssthresh reach the window
 * last advertised. */
static void set_clamp(struct tcp_rwin *rw, int64_t val)
{
    uint32_t clamp = val > SOCK_MIN_RCVBUF / 2 ? (uint32_t)val : SOCK_MIN_RCVBUF / 2;
    if (clamp == rw->clamp)
        return;
    uint32_t old = rw->clamp;
    rw->clamp = clamp;
    if (clamp < old) {
        if (rw->ssthresh > clamp)
            rw->ssthresh = clamp;
    } else {
        uint32_t s = rw->wnd < clamp ? rw->wnd : clamp;
        if (s > rw->ssthresh)
            rw->ssthresh = s;
    }
}

/* tcp_measure_rcv_mss: the peer's segment size, and the payload / memory ratio of the first segment of
 * each new size. */
static void measure_rcv_mss(brisk_sock *c, uint32_t len, uint32_t truesize, uint32_t hdr_len, uint8_t flags)
{
    struct tcp_rwin *rw = &c->rw;
    uint32_t lss = rw->last_seg;
    rw->last_seg = 0;
    if (len >= rw->rcv_mss) {
        if (len != rw->rcv_mss) {
            uint32_t ratio = (len << RMEM_TO_WIN_SCALE) / truesize;
            ratio = ratio ? ratio : 1;
            ratio = ratio > 255 ? 255 : ratio;
            if (ratio != rw->ratio) {
                rw->ratio = (uint8_t)ratio;
                set_clamp(rw, win_from_space(c, c->rcv.rcvbuf));
                if (rw->clamp < rw->rcvq.space)
                    rw->rcvq.space = rw->clamp;
            }
        }
        rw->rcv_mss = len < rw->advmss ? len : rw->advmss;
        if (flags & BRISK_TCP_PSH)
            rw->pushed |= RWIN_PUSHED;
        return;
    }
    /* A short segment: it sets rcv_mss only when two in a row have the same size and look like full ones
     * (at least 536 bytes with the header, or 88 without PSH, URG, SYN or FIN). */
    uint32_t whole = len + hdr_len;
    int remnant = (flags & (BRISK_TCP_FIN | BRISK_TCP_URG | BRISK_TCP_SYN | BRISK_TCP_PSH)) != 0;
    if (whole >= MSS_DEFAULT + 20 || (whole >= MIN_MSS + 20 && !remnant)) {
        uint32_t size = whole - rw->hdr_len;
        rw->last_seg = size;
        if (size == lss) {
            rw->rcv_mss = size;
            return;
        }
    }
    if (rw->pushed & RWIN_PUSHED)
        rw->pushed |= RWIN_PUSHED2;
    rw->pushed |= RWIN_PUSHED;
}

/* tcp_grow_window: rcv_ssthresh grows by two segments per segment whose memory the buffer's ratio covers
 * (or, for a costlier one, while the window is small enough for its cost, __tcp_grow_window). */
static void grow_window(brisk_sock *c, uint32_t len, uint32_t truesize)
{
    struct tcp_rwin *rw = &c->rw;
    int64_t lim = free_space(c);
    if ((int64_t)rw->clamp < lim)
        lim = rw->clamp;
    int64_t room = lim - (int64_t)rw->ssthresh;
    if (room <= 0)
        return;
    int64_t incr = 0;
    if (win_from_space(c, truesize) <= (int64_t)len) {
        incr = 2 * (int64_t)rw->advmss;
    } else {
        int64_t ts = win_from_space(c, truesize) >> 1;
        int64_t window = win_from_space(c, c->net->s.tcp_rmem_max) >> 1;
        while ((int64_t)rw->ssthresh <= window) {
            if (ts <= (int64_t)len) {
                incr = 2 * (int64_t)rw->rcv_mss;
                break;
            }
            ts >>= 1;
            window >>= 1;
        }
    }
    if (!incr)
        return;
    if (incr < 2 * (int64_t)len)
        incr = 2 * (int64_t)len;
    rw->ssthresh += (uint32_t)(incr < room ? incr : room);
    c->ack.quick |= 1; /* the sender should hear of it soon */
}

/* tcp_rcv_rtt_measure: without timestamps, the time one window of data takes is an RTT sample (at most). */
static void rtt_measure_win(brisk_sock *c, uint64_t now)
{
    struct tcp_rwin *rw = &c->rw;
    if (rw->rtt.time != 0) {
        if (brisk_seq_lt(c->rcv.nxt, rw->rtt.seq))
            return;
        uint64_t us = (now - rw->rtt.time) / 1000;
        rtt_update(rw, us ? (us > UINT32_MAX ? UINT32_MAX : (uint32_t)us) : 1, 1);
    }
    rw->rtt.seq = c->rcv.nxt + rw->wnd;
    rw->rtt.time = now ? now : 1;
}

void tcp_rwin_data(brisk_sock *c, const struct brisk_tcp_repr *seg, uint32_t seq, uint32_t len,
                   uint32_t frame, int first, uint64_t gap, uint64_t now)
{
    if (!linux_rules(c))
        return;
    /* tcp_queue_rcv, then tcp_event_data_recv (the segment is already in the queue). */
    q_charge(c, seq, len, frame);
    if (c->rw.slow)
        fast_path_check(c); /* tcp_data_queue re-enables header prediction where it may */
    if (len == 0)
        return;
    uint32_t truesize = frame_truesize(frame);
    measure_rcv_mss(c, len, truesize, seg->hdr_len, seg->flags);
    rtt_measure_win(c, now);
    if (first || gap > brisk_rtt_rto(&c->rtt))
        incr_quickack(c); /* the first data, or data after a silence longer than the RTO */
    if (len >= 128)
        grow_window(c, len, truesize);
}

/* tcp_rcvbuf_grow: twice what the last round trip read, plus as much again per doubling of it (the sender
 * may be in slow start), plus the span held out of order, as memory, up to tcp_rmem[2]. */
static void rcvbuf_grow(brisk_sock *c, uint32_t newval)
{
    struct tcp_rwin *rw = &c->rw;
    const struct brisk_settings *s = &c->net->s;
    uint32_t oldval = rw->rcvq.space;
    rw->rcvq.space = newval;
    if (!s->tcp_moderate_rcvbuf || rw->locked)
        return;
    uint32_t rcvwin = newval << 1;
    if (oldval && newval > oldval) {
        uint64_t grow = (uint64_t)rcvwin * (newval - oldval) / oldval;
        rcvwin += (uint32_t)(grow << 1);
    }
    if (rw->ooo.len)
        rcvwin += rw->ooo.r[rw->ooo.len - 1].end - c->rcv.nxt;
    uint64_t buf = rcvwin > INT32_MAX ? UINT64_MAX : space_from_win(c, rcvwin);
    if (buf > s->tcp_rmem_max)
        buf = s->tcp_rmem_max;
    if (buf > c->rcv.rcvbuf) {
        c->rcv.rcvbuf = (uint32_t)buf;
        rw->clamp = (uint32_t)win_from_space(c, c->rcv.rcvbuf);
    }
}

int tcp_rwin_ack_due(brisk_sock *c)
{
    /* __tcp_ack_snd_check: more than one full segment since the last window, and the window does not fall
     * behind the one last advertised (while it does, tcp_recvmsg sends the ACK when reading opens it). */
    return (uint32_t)(c->rcv.nxt - c->rw.wup) > c->rw.rcv_mss && select_raw(c) >= c->rw.wnd;
}

/* ---- the out-of-order queue ---- */

/* Removes out-of-order buffers [i, j). */
static void ooo_remove(struct tcp_rwin *rw, uint32_t i, uint32_t j)
{
    struct tcp_rskbq *o = &rw->ooo;
    for (uint32_t k = i; k < j; k++)
        mem_uncharge(rw, o->r[k].truesize);
    memmove(&o->r[i], &o->r[j], (o->len - j) * sizeof(o->r[0]));
    o->len -= j - i;
}

void tcp_rwin_ofo(brisk_sock *c, uint32_t seq, uint32_t len, uint32_t frame)
{
    if (!linux_rules(c) || len == 0)
        return;
    /* tcp_data_queue_ofo: coalesced into the buffer it continues (tcp_ooo_try_coalesce), else a buffer of
     * its own in sequence order, replacing one it covers from the same start; later buffers it covers go
     * (merge_right). */
    struct tcp_rwin *rw = &c->rw;
    struct tcp_rskbq *o = &rw->ooo;
    uint32_t end = seq + len;
    uint32_t ts = frame_truesize(frame);
    uint32_t p = 0;
    while (p < o->len && brisk_seq_lt(o->r[p].seq, seq))
        p++;
    uint32_t i;
    if (p > 0 && !brisk_seq_lt(o->r[p - 1].end, end))
        return; /* all of it is held already */
    struct tcp_rskb *prev = p > 0 ? &o->r[p - 1] : NULL;
    if (prev && prev->end == seq && prev->frags == 0 && len <= prev->tailroom) {
        prev->tailroom = (uint16_t)(prev->tailroom - len);
        prev->end = end;
        i = p - 1;
    } else if (prev && prev->end == seq && prev->frags < SKB_FRAGS) {
        prev->frags++;
        prev->tailroom = 0;
        prev->truesize += ts - SKB_STRUCT;
        prev->end = end;
        mem_charge(rw, ts - SKB_STRUCT);
        i = p - 1;
    } else if (p < o->len && o->r[p].seq == seq) {
        if (!brisk_seq_lt(o->r[p].end, end))
            return; /* held already */
        mem_charge(rw, ts);
        mem_uncharge(rw, o->r[p].truesize);
        o->r[p] = (struct tcp_rskb){seq, end, ts, 0, (uint16_t)frame_tailroom(frame)};
        i = p;
    } else {
        if (!q_room(o))
            return; /* uncharged: the ring cannot grow */
        memmove(&o->r[p + 1], &o->r[p], (o->len - p) * sizeof(o->r[0]));
        o->len++;
        o->r[p] = (struct tcp_rskb){seq, end, ts, 0, (uint16_t)frame_tailroom(frame)};
        mem_charge(rw, ts);
        i = p;
    }
    uint32_t j = i + 1;
    while (j < o->len && !brisk_seq_lt(o->r[i].end, o->r[j].end))
        j++;
    if (j > i + 1)
        ooo_remove(rw, i + 1, j);
    if (c->opt.sack && len >= 128)
        grow_window(c, len, ts); /* without SACK the window stays put, forcing duplicate ACKs */
    /* Out-of-order data may need a bigger buffer than reading shows (tcp_rcvbuf_grow with no new sample),
     * once the connection belongs to the application. */
    if (!c->listener && !c->orphan)
        rcvbuf_grow(c, rw->rcvq.space);
}

void tcp_rwin_ofo_drain(brisk_sock *c, uint32_t nxt)
{
    if (!linux_rules(c))
        return;
    /* tcp_ofo_queue, from rcv.nxt as it was before the hole filled: a buffer now in order moves to the
     * receive queue, joining its last buffer if it continues it (tcp_try_coalesce: it gives up its sk_buff,
     * or costs nothing copied into tail room), else whole; one wholly below rcv.nxt is freed. */
    struct tcp_rwin *rw = &c->rw;
    struct tcp_rskbq *o = &rw->ooo;
    struct tcp_rskbq *q = &rw->q;
    uint32_t n = 0;
    for (; n < o->len && !brisk_seq_gt(o->r[n].seq, nxt); n++) {
        struct tcp_rskb b = o->r[n];
        if (!brisk_seq_gt(b.end, nxt)) {
            mem_uncharge(rw, b.truesize);
            continue;
        }
        struct tcp_rskb *tail = q->len ? q_at(q, q->len - 1) : NULL;
        uint32_t len = b.end - b.seq;
        if (tail && tail->end == b.seq && tail->frags == 0 && len <= tail->tailroom) {
            tail->tailroom = (uint16_t)(tail->tailroom - len);
            tail->end = b.end;
            mem_uncharge(rw, b.truesize);
        } else if (tail && tail->end == b.seq && tail->frags + b.frags + 1u <= SKB_FRAGS) {
            tail->frags = (uint16_t)(tail->frags + b.frags + 1u);
            tail->tailroom = 0;
            tail->truesize += b.truesize - SKB_STRUCT;
            tail->end = b.end;
            mem_charge(rw, b.truesize - SKB_STRUCT);
            mem_uncharge(rw, b.truesize);
        } else if (q_room(q)) {
            *q_at(q, q->len++) = b;
        } else if (tail) {
            tail->truesize += b.truesize; /* the ring cannot grow: charged to the last buffer */
            tail->end = b.end;
        } else {
            mem_uncharge(rw, b.truesize);
        }
        nxt = b.end;
    }
    if (n) {
        memmove(&o->r[0], &o->r[n], (o->len - n) * sizeof(o->r[0]));
        o->len -= n;
    }
}

/* ---- the application reads ---- */

/* tcp_rcv_space_adjust, after each buffer's part of a read: once per receiver RTT, what was read (less what
 * is still queued) beyond the last measure grows the buffer. */
static void space_adjust(brisk_sock *c, uint64_t read_total, uint64_t queued, uint64_t now)
{
    struct tcp_rwin *rw = &c->rw;
    if (!rw->rtt.us)
        return;
    uint64_t us = now > rw->rcvq.time ? (now - rw->rcvq.time) / 1000 : 0;
    if (us < rw->rtt.us >> 3)
        return;
    int64_t copied = (int64_t)(read_total - rw->rcvq.seq) - (int64_t)queued;
    if (copied > (int64_t)rw->rcvq.space)
        rcvbuf_grow(c, copied > INT32_MAX ? INT32_MAX : (uint32_t)copied);
    rw->rcvq.seq = read_total;
    rw->rcvq.time = now;
}

/* tcp_cleanup_rbuf: whether the read that took `copied` bytes is worth an ACK now. */
static int read_ack(brisk_sock *c, uint32_t copied)
{
    struct tcp_rwin *rw = &c->rw;
    if (c->ack.pending) {
        /* An ACK is owed: send it if more than a segment came since the last window, or if this read
         * emptied the queue after a pushed small segment (and the connection is not interactive). */
        if ((uint32_t)(c->rcv.nxt - rw->wup) > rw->rcv_mss)
            return 1;
        if (copied && ((rw->pushed & RWIN_PUSHED2) || ((rw->pushed & RWIN_PUSHED) && !c->ack.pingpong)) &&
            rw->rmem == 0)
            return 1;
    }
    /* A window raised "significantly": at least twice what the last one still promises, while that is at
     * most half of window_clamp. Not after the peer's FIN: nothing more will come. */
    if (!copied || c->rcv.fin)
        return 0;
    uint32_t now_win = promised(c);
    if (2 * (uint64_t)now_win > rw->clamp)
        return 0;
    uint32_t win = select_raw(c);
    return win && win >= 2 * (uint64_t)now_win;
}

/* RFC 9293 rules: advertise the space a read made if it is worth a segment (receiver SWS avoidance). */
static int read_ack_rfc(brisk_sock *c)
{
    uint32_t cur = brisk_seq_gt(c->rcv.adv, c->rcv.nxt) ? c->rcv.adv - c->rcv.nxt : 0;
    uint32_t space = tcp_rcv_space(c);
    uint32_t max = TCP_MAX_WIN << c->rcv.wscale; /* what a window field can say: more is no update */
    if (space > max)
        space = max;
    uint32_t mss = c->snd.mss ? c->snd.mss : TCP_DEFAULT_MSS;
    return space > cur && (space - cur >= 2 * mss || (cur < mss && space >= mss));
}

int tcp_rwin_read(brisk_sock *c, uint32_t n, uint64_t now)
{
    if (!linux_rules(c)) {
        if (c->state != BRISK_TCP_ESTABLISHED && c->state != BRISK_TCP_FIN_WAIT_1 &&
            c->state != BRISK_TCP_FIN_WAIT_2)
            return 0;
        return read_ack_rfc(c);
    }
    /* tcp_recvmsg, buffer by buffer: the part read, autotuning after it, and the buffer freed once all of it
     * was read. A buffer that holds only the peer's FIN goes with the last data before it. */
    struct tcp_rwin *rw = &c->rw;
    struct tcp_rskbq *q = &rw->q;
    uint64_t total = c->rcv.buf.base;                                   /* bytes read, this read included */
    uint32_t stop = c->rcv.nxt - c->rcv.fin - (uint32_t)c->rcv.buf.len; /* copied_seq after it */
    uint32_t at = stop - n;                                             /* copied_seq before it */
    while (q->len) {
        struct tcp_rskb *b = q_at(q, 0);
        if (b->seq == b->end) {
            if (c->rcv.buf.len || brisk_seq_gt(b->end, stop))
                break;
        } else {
            uint32_t upto = brisk_seq_lt(b->end, stop) ? b->end : stop;
            if (brisk_seq_lt(at, upto)) {
                uint32_t left = stop - upto; /* read by this call after this buffer */
                space_adjust(c, total - left, c->rcv.buf.len + left, now);
                at = upto;
            }
            if (brisk_seq_gt(b->end, stop))
                break;
        }
        mem_uncharge(rw, b->truesize);
        q->head = (q->head + 1) & (q->cap - 1);
        q->len--;
    }
    return read_ack(c, n);
}

/* ---- socket options, accounting ---- */

uint32_t tcp_rwin_rcvbuf_opt(brisk_sock *c, uint64_t v)
{
    if (!linux_rules(c))
        return (uint32_t)v;
    /* sock_setsockopt(SO_RCVBUF): at most rmem_max, doubled for Linux's bookkeeping, at least
     * SOCK_MIN_RCVBUF; the buffer no longer autotunes. */
    uint64_t max = c->net->s.rmem_max;
    uint64_t b = (v < max ? v : max) * 2;
    c->rw.locked = 1;
    return (uint32_t)(b > SOCK_MIN_RCVBUF ? b : SOCK_MIN_RCVBUF);
}

void tcp_rwin_inherit(brisk_sock *c, const brisk_sock *l)
{
    c->rw.locked = l->rw.locked;
}

void tcp_rwin_free(brisk_sock *c)
{
    q_free(&c->rw.q);
    q_free(&c->rw.ooo);
    c->rw.rmem = 0;
}

uint32_t tcp_rwin_ssthresh(const brisk_sock *c)
{
    if (linux_rules(c))
        return c->rw.ssthresh;
    uint32_t max = TCP_MAX_WIN << c->rcv.wscale;
    return c->rcv.rcvbuf < max ? c->rcv.rcvbuf : max;
}
