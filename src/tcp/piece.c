/*
 * piece.c — the send queue as Linux's write queue of skbs, and the packets Linux cuts from it (tcp_sw_gso).
 *
 * Linux keeps unsent data in skbs that the application's writes fill at write time, each up to a size goal
 * (tcp_xmit_size_goal: half the largest window the peer offered, at most the route's GSO size, in whole
 * segments), and every route can do GSO, in software if the device cannot (sk_setup_caps: NETIF_F_GSO is
 * always on). So on any device its transmit function (tcp_write_xmit) sends packets of several segments, cut
 * from the head skb: up to tcp_cwnd_test's quota (half the congestion window, what the window has left) and
 * tcp_tso_segs (tcp_tso_autosize: about a millisecond of data at the pacing rate, more on short paths), with
 * what tcp_grow_skb takes from the next skb when the head is short, cut again where tcp_mss_split_point says
 * (the peer's window, Nagle's rule for a last partial segment) and held when tcp_tso_should_defer expects an
 * ACK to make a bigger packet possible soon. A packet of more than one segment carries PSH on its last
 * (__tcp_transmit_skb forces it on every GSO packet so that the receiver's GRO flushes); a one-segment
 * packet carries PSH only if its skb had it — a write's end (tcp_push), a forced push, a window probe. What
 * the wire shows therefore depends on the skbs: `. 1:1001, P. 1001:2001` for a 2-segment packet, and a
 * segment that ends a write may go without PSH when a later write joined its skb or a window split it off.
 *
 * brisk's send buffer is one byte stream, and the transmit function cuts segments from it at transmit time,
 * so this file only keeps what Linux's skbs would say about that stream: where pieces begin and end (struct
 * tcp_pieces, in piece.h: a few grids of equal pieces, since every piece but the last is full), with PSH and
 * record ends as marks (mark.c) at piece ends. The write path (socket.c, queue_write) opens pieces as
 * tcp_sendmsg_locked opens skbs; tcp_write_xmit (output.c) hands new data to tcp_xmit_packets here, which
 * takes the quota, the autosized packet limit, the head piece grown as tcp_grow_skb grows the head skb, the
 * deferral rule and the split point, and sends each packet as its wire segments (one GSO frame on a device
 * that segments). brisk's own profile (tcp_sw_gso=0) uses the pieces only to find where a TCP_NOTSENT_LOWAT
 * write stops. brisk's window is bytes where Linux's is segments: the quota reads it in segments of the MSS.
 *
 *   tcp_piece_end / _tail / _begin / _advance   the pieces
 *   tcp_tso_segs, tcp_cwnd_quota                 how many segments a packet may have
 *   tcp_piece_grow                               the head piece made longer (tcp_grow_skb)
 *   tcp_tso_defer                                waiting for a bigger packet (tcp_tso_should_defer)
 *   tcp_xmit_packets                             Linux's tcp_write_xmit loop for new data
 */
#include "tcp/tcp.h"

static uint32_t slot(const brisk_sock *c, uint32_t i)
{
    return (c->pieces.first + i) & (TCP_RUNS - 1);
}

/* Drops runs wholly behind snd.nxt (their successor begins at or before it): no piece of theirs is unsent. */
static void prune(brisk_sock *c)
{
    struct tcp_pieces *p = &c->pieces;
    while (p->n >= 2 && brisk_seq_leq(p->origin[slot(c, 1)], c->snd.nxt)) {
        p->first = (uint8_t)((p->first + 1) & (TCP_RUNS - 1));
        p->n--;
    }
}

/* The run whose grid holds byte x: the last one beginning at or before it; -1 if none does. */
static int run_of(const brisk_sock *c, uint32_t x)
{
    for (int i = (int)c->pieces.n - 1; i >= 0; i--) {
        if (brisk_seq_leq(c->pieces.origin[slot(c, (uint32_t)i)], x))
            return i;
    }
    return -1;
}

uint32_t tcp_piece_end(brisk_sock *c, uint32_t x)
{
    const struct tcp_pieces *p = &c->pieces;
    uint32_t end = tcp_data_end(c);
    if (p->head_set && brisk_seq_lt(x, p->head_end))
        return p->head_end;
    int i = run_of(c, x);
    uint32_t b = end;
    if (i >= 0) {
        uint32_t o = p->origin[slot(c, (uint32_t)i)], s = p->size[slot(c, (uint32_t)i)];
        b = o + ((x - o) / s + 1) * s;
        if ((uint32_t)i + 1 < p->n && brisk_seq_lt(p->origin[slot(c, (uint32_t)i + 1)], b))
            b = p->origin[slot(c, (uint32_t)i + 1)];
    } else if (p->n) {
        b = p->origin[slot(c, 0)];
    }
    if (brisk_seq_gt(b, end))
        b = end;
    if (c->snd.marks) /* a record ends a piece (BRISK_MSG_EOR) */
        b = x + tcp_mark_eor_clip(c, x, b - x);
    return b;
}

uint32_t tcp_piece_tail(brisk_sock *c)
{
    const struct tcp_pieces *p = &c->pieces;
    uint32_t end = tcp_data_end(c);
    uint32_t x = end - 1;
    /* Never before snd.max: the write queue holds unsent bytes only (an RTO's rewind of snd.nxt resends bytes
     * that Linux would hold in its retransmission queue, not in skbs a write may join). */
    uint32_t start = c->snd.max;
    if (p->head_set) {
        if (brisk_seq_lt(x, p->head_end))
            return start;
        start = p->head_end;
    }
    int i = run_of(c, x);
    if (i >= 0) {
        uint32_t o = p->origin[slot(c, (uint32_t)i)], s = p->size[slot(c, (uint32_t)i)];
        uint32_t g = o + (x - o) / s * s;
        if (brisk_seq_gt(g, start))
            start = g;
    }
    if (c->snd.marks) {
        uint32_t e = tcp_mark_eor_before(c, end);
        if (brisk_seq_gt(e, start))
            start = e;
    }
    return start;
}

void tcp_piece_restart(brisk_sock *c, uint32_t at, uint32_t size)
{
    struct tcp_pieces *p = &c->pieces;
    p->first = 0;
    p->n = 1;
    p->origin[0] = at;
    p->size[0] = size;
}

void tcp_piece_begin(brisk_sock *c, uint32_t at, uint32_t size)
{
    struct tcp_pieces *p = &c->pieces;
    prune(c);
    if (p->n) {
        uint32_t k = slot(c, p->n - 1u);
        uint32_t o = p->origin[k];
        if (o == at) {
            p->size[k] = size; /* a run that begins right here: its first piece takes the new goal */
            return;
        }
        if (p->size[k] == size && brisk_seq_gt(at, o) && (at - o) % size == 0)
            return; /* the next piece of the same grid */
    }
    if (p->n == TCP_RUNS) {
        /* No room: the second run joins the first's grid (its boundaries become approximate). Eight live
         * grids need eight changes of the size goal while the data sits unsent. */
        for (uint32_t i = 1; i + 1 < p->n; i++) {
            p->origin[slot(c, i)] = p->origin[slot(c, i + 1)];
            p->size[slot(c, i)] = p->size[slot(c, i + 1)];
        }
        p->n--;
        p->forgotten++;
    }
    p->origin[slot(c, p->n)] = at;
    p->size[slot(c, p->n)] = size;
    p->n++;
}

void tcp_piece_advance(brisk_sock *c)
{
    if (c->pieces.head_set && !brisk_seq_lt(c->snd.nxt, c->pieces.head_end))
        c->pieces.head_set = 0;
    prune(c);
}

uint32_t tcp_gso_limit(const brisk_sock *c)
{
    const brisk_netdev *dev = c->rt.dev;
    if (dev && (dev->cfg.caps & BRISK_NETDEV_CAP_GSO) && dev->cfg.gso_max_size > BRISK_TCP_GSO_HDR_ROOM &&
        dev->cfg.gso_max_size - BRISK_TCP_GSO_HDR_ROOM < TCP_SW_GSO_MAX)
        return dev->cfg.gso_max_size - BRISK_TCP_GSO_HDR_ROOM;
    return TCP_SW_GSO_MAX;
}

uint32_t tcp_tso_segs(const brisk_sock *c, uint32_t mss)
{
    const struct brisk_settings *s = &c->net->s;
    uint64_t gso = tcp_gso_limit(c);
    uint64_t rate = tcp_pacing_rate(c);
    uint64_t bytes = rate == UINT64_MAX ? UINT64_MAX : rate >> s->tcp_pacing_shift;
    /* Linux 5.18+: short paths get more, gso >> (min_rtt in us >> tcp_tso_rtt_log) (a full GSO packet under
     * 512 us with the default 9, half one under 1 ms, nothing from 16 ms on). No sample, no addition. */
    uint64_t min_rtt = brisk_rtt_min(&c->rtt) / BRISK_NSEC_PER_USEC;
    if (s->tcp_tso_rtt_log && brisk_rtt_min(&c->rtt) && bytes != UINT64_MAX) {
        uint64_t r = min_rtt >> s->tcp_tso_rtt_log;
        if (r < 32)
            bytes += gso >> r;
    }
    if (bytes > gso)
        bytes = gso;
    uint64_t segs = bytes / (mss ? mss : 1);
    return segs < s->tcp_min_tso_segs ? s->tcp_min_tso_segs : (uint32_t)segs;
}

/* The congestion window and what is in flight, in segments as Linux counts them (a partial one counts
 * whole). brisk's window is bytes: it is read in segments of the MSS. */
static uint32_t cwnd_segs(const brisk_sock *c)
{
    uint32_t w = c->cc.cwnd / c->snd.mss;
    return w ? w : 1;
}

static uint32_t in_flight_segs(const brisk_sock *c)
{
    return (tcp_pipe(c) + c->snd.mss - 1) / c->snd.mss;
}

uint32_t tcp_cwnd_quota(const brisk_sock *c, uint32_t max_segs)
{
    uint32_t cwnd = cwnd_segs(c), in_flight = in_flight_segs(c);
    if (in_flight >= cwnd)
        return 0;
    uint32_t half = cwnd >> 1 ? cwnd >> 1 : 1;
    uint32_t q = cwnd - in_flight < half ? cwnd - in_flight : half;
    return q < max_segs ? q : max_segs;
}

uint32_t tcp_piece_grow(brisk_sock *c, uint32_t want)
{
    uint32_t nxt = c->snd.nxt;
    uint32_t b1 = tcp_piece_end(c, nxt);
    if (b1 - nxt >= want || b1 == tcp_data_end(c))
        return b1;
    unsigned kind = c->snd.marks ? tcp_mark_at(c, b1) : 0;
    if (kind & TCP_MARK_EOR)
        return b1; /* a record takes nothing after it (tcp_skb_can_collapse) */
    uint32_t b2 = tcp_piece_end(c, b1);
    uint32_t g = nxt + want;
    if (brisk_seq_gt(g, b2))
        g = b2;
    /* The head keeps its own flags at its new end, and takes the next piece's when it takes all of it
     * (tcp_eat_one_skb): its PSH mark moves from b1 to g, where the next piece's own mark may already be. */
    if (kind & TCP_MARK_PSH)
        tcp_mark_move(c, b1, g);
    c->pieces.head_set = 1;
    c->pieces.head_end = g;
    return g;
}

/* When the oldest unacknowledged segment was last sent (Linux: the retransmission queue's head skb). */
static int rtx_head_time(const brisk_sock *c, uint64_t *at)
{
    if (tcp_flight(c) == 0)
        return 0;
    if (tcp_sb_active(c) && c->sb.len) {
        *at = tcp_sb_at(c, 0)->xmit;
        return 1;
    }
    if (c->txt.len) {
        *at = tcp_txt_at(c, c->txt.head);
        return 1;
    }
    return 0;
}

int tcp_tso_defer(brisk_sock *c, uint32_t hlen, int tail, uint32_t max_segs, uint64_t now, int *rwnd)
{
    *rwnd = 0;
    if (c->cc.in_recovery || c->cc.in_loss)
        return 0;
    /* Only right after a send (1 ms): a connection that was quiet does not wait. */
    if (now > c->pieces.wstamp + BRISK_NSEC_PER_MSEC)
        return 0;
    uint32_t mss = c->snd.mss;
    uint32_t cwnd = cwnd_segs(c), in_flight = in_flight_segs(c);
    uint32_t wnd_end = c->snd.una + c->snd.wnd;
    uint64_t send_win = brisk_seq_gt(wnd_end, c->snd.nxt) ? wnd_end - c->snd.nxt : 0;
    uint64_t cong_win = (uint64_t)(cwnd > in_flight ? cwnd - in_flight : 0) * mss;
    uint64_t limit = send_win < cong_win ? send_win : cong_win;
    if (limit >= (uint64_t)max_segs * mss)
        return 0; /* a full-sized packet can go */
    if (!tail && limit >= hlen)
        return 0; /* the piece will not grow, and all of it can go */
    uint64_t chunk = (uint64_t)cwnd * mss;
    if (c->snd.wnd < chunk)
        chunk = c->snd.wnd;
    if (limit >= chunk / 3) /* Linux's tcp_tso_win_divisor, 3: a third of a window is worth sending */
        return 0;
    uint64_t head;
    if (!rtx_head_time(c, &head))
        return 0;
    /* Wait only for an ACK due within min(srtt / 2, 1 ms). */
    uint64_t srtt = brisk_rtt_srtt(&c->rtt);
    uint64_t threshold = srtt / 2 < BRISK_NSEC_PER_MSEC ? srtt / 2 : BRISK_NSEC_PER_MSEC;
    if ((int64_t)(head + srtt - now - threshold) > 0)
        return 0;
    if (cong_win < send_win) {
        if (cong_win <= hlen)
            return 1;
    } else if (send_win <= hlen) {
        *rwnd = 1;
        return 1;
    }
    /* Nothing will join a piece that carries the FIN or ends a record. */
    if (tail && c->snd.fin_queued)
        return 0;
    if (c->snd.marks && (tcp_mark_at(c, c->snd.nxt + hlen) & TCP_MARK_EOR))
        return 0;
    return 1;
}

/* Linux's tcp_mss_split_point: how much of a multi-segment head piece of `hlen` bytes goes in this packet —
 * `quota` segments, or what the peer's window takes of the queue's last piece, less a partial last segment
 * that Nagle or TCP_CORK holds. */
static uint32_t split_point(const brisk_sock *c, uint32_t hlen, int tail, uint32_t quota, uint32_t mss,
                            uint32_t window, unsigned na)
{
    uint32_t max_len = mss * quota;
    if (max_len <= window && !tail)
        return max_len;
    uint32_t needed = hlen < window ? hlen : window;
    if (max_len <= needed)
        return max_len;
    uint32_t partial = needed % mss;
    return tcp_nagle_check(c, partial != 0, na) ? needed - partial : needed;
}

/* Sends [seq, seq + len) as one packet: one GSO frame on a device that segments, else its wire segments one
 * by one; `last` (PSH, FIN) goes on its last segment. Returns 0, or -1 when the device refused part of it
 * (what went is accounted for, the rest stays unsent). */
static int send_packet(brisk_sock *c, uint32_t seq, uint32_t len, uint32_t mss, uint8_t last, uint64_t now)
{
    if ((c->rt.dev->cfg.caps & BRISK_NETDEV_CAP_GSO) && c->net->s.tcp_tso) {
        uint8_t flags = BRISK_TCP_ACK | last;
        if (tcp_transmit(c, seq, len, flags, now) < 0)
            return -1;
        if (c->snd.marks)
            tcp_mark_sent(c, seq, seq + len);
        tcp_pace_sent(c, len, now);
        tcp_advance_nxt(c, len, flags, mss);
        if (len > mss && len % mss)
            c->snd.sml = c->snd.nxt; /* its last segment is small (tcp_minshall_update) */
        return 0;
    }
    uint32_t end = seq + len;
    while (seq != end) {
        uint32_t n = end - seq < mss ? end - seq : mss;
        uint8_t flags = BRISK_TCP_ACK | (seq + n == end ? last : 0);
        if (tcp_transmit(c, seq, n, flags, now) < 0)
            return -1;
        tcp_pace_sent(c, n, now);
        tcp_advance_nxt(c, n, flags, mss);
        seq += n;
    }
    if (c->snd.marks)
        tcp_mark_sent(c, end - len, end);
    return 0;
}

/*
 * tcp_sw_gso: the packets Linux's tcp_write_xmit sends from new data (piece.c has the rules). Per packet:
 * the congestion window's quota of segments, the head piece grown to it, the first segment within the peer's
 * window (tcp_snd_wnd_test, the FIN included for a one-segment packet), Nagle and TCP_CORK for a
 * one-segment piece, TSO deferral for a longer one, and the split point. A packet of several segments
 * carries PSH on its last; one segment carries PSH where a mark says (tcp_psh). Returns the hold reason.
 */
int tcp_xmit_packets(brisk_sock *c, int why, uint32_t mss, uint64_t now, int *sent, uint32_t *sent_new)
{
    unsigned na = tcp_nonagle(c, why);
    int one = (c->snd.push_mode & TCP_PUSH_ONE) != 0;
    uint32_t max_segs = tcp_tso_segs(c, mss);
    for (;;) {
        uint32_t data_end = tcp_data_end(c);
        if (tcp_notsent(c) == 0)
            return tcp_send_fin_alone(c, now, sent);
        uint32_t flight = tcp_flight(c);
        uint32_t wnd_end = c->snd.una + c->snd.wnd;
        uint32_t wnd_avail = brisk_seq_gt(wnd_end, c->snd.nxt) ? wnd_end - c->snd.nxt : 0;
        uint32_t quota = tcp_cwnd_quota(c, max_segs);
        if (quota == 0)
            return BRISK_HOLD_CWND;
        uint32_t hend = tcp_piece_grow(c, quota * mss);
        uint32_t hlen = hend - c->snd.nxt;
        int tail = hend == data_end;
        int fin = tail && c->snd.fin_queued;
        uint32_t segs = (hlen + mss - 1) / mss;
        if ((hlen > mss ? mss : hlen + (fin ? 1u : 0u)) > wnd_avail) {
            /* With nothing in flight no ACK will open the window: the probe timer sends what fits. */
            if (flight == 0 && c->timer.rtx_kind != TCP_RTX_RTO)
                tcp_arm_persist(c, now);
            return BRISK_HOLD_RWND;
        }
        uint32_t len = hlen;
        if (segs == 1) {
            /* The small-tail decision is the connection's for the queue's last piece only; one in the
             * middle gets no more data (tcp_nagle_test with TCP_NAGLE_PUSH). The FIN's piece always goes. */
            if (tail && !fin && hlen < mss) {
                int th = tcp_tail_hold(c, why, hlen, now);
                if (th != BRISK_HOLD_NONE)
                    return th;
            }
        } else {
            int rwnd;
            if (!one && tcp_tso_defer(c, hlen, tail, max_segs, now, &rwnd))
                return rwnd ? BRISK_HOLD_RWND : BRISK_HOLD_CWND;
            uint32_t limit = split_point(c, hlen, tail, quota, mss, wnd_avail, na);
            if (limit < hlen)
                len = limit; /* tso_fragment: the rest of the piece stays, with its flags */
        }
        int below = tcp_below_holds(c, now);
        if (below != BRISK_HOLD_NONE)
            return below;
        uint32_t seq = c->snd.nxt;
        /* The flags of the packet's piece go with its end only: a packet cut from the piece has none. */
        uint8_t last = tcp_psh(c, seq, len);
        if (len / mss + (len % mss ? 1u : 0u) > 1)
            last = BRISK_TCP_PSH; /* forced on every GSO packet (__tcp_transmit_skb) */
        if (len == hlen && fin)
            last |= BRISK_TCP_FIN;
        uint32_t before = c->snd.nxt;
        int rc = send_packet(c, seq, len, mss, last, now);
        if (c->snd.nxt != before) {
            *sent = 1;
            *sent_new += c->snd.nxt - before;
            tcp_piece_advance(c);
        }
        if (rc < 0) {
            tcp_block(c); /* the device or the pool refused: resume on the next TX completion */
            return BRISK_HOLD_DEVICE;
        }
        if (one)
            return BRISK_HOLD_NONE;
    }
}
