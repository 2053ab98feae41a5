/*
 * syncookie.c — SYN cookies (RFC 4987 §3.6, after D. J. Bernstein): when a listener's SYN queue is full (a
 * SYN flood), it still answers every SYN, but keeps nothing: the state it would have kept is folded into the
 * initial sequence number of its SYN-ACK, under a keyed MAC, and rebuilt from the acknowledgment number of
 * the peer's ACK. A blind attacker cannot forge that ACK without the stack's secret, and a flood of spoofed
 * SYNs costs one SYN-ACK each and no memory.
 *
 * The cookie (our ISN, 32 bits):
 *     bits 31-30  T mod 4, T = now / BRISK_SYNCOOKIE_PERIOD_NS (64 s), the coarse time counter
 *     bits 29-27  index into brisk_syncookie_mss[], the largest table MSS not above the peer's MSS
 *     bits 26-0   MAC = SipHash-2-4 under the stack's secret of (addresses, ports, the peer's ISN, T, index)
 * The returning ACK is valid when SEG.ACK - 1 carries a MAC that verifies for T = now's counter or the one
 * before (so a cookie lives 64 to 128 s) with SEG.SEQ - 1 as the peer's ISN. The MAC covers the MSS index,
 * so a forged index fails like a forged MAC; 27 bits leave a blind guess one chance in 2^27 per ACK, for
 * each of the two counter values.
 *
 * Options. The MSS rides in the cookie. Window scale and SACK-permitted do not fit: as Linux does, brisk
 * carries them in the low five bits of the SYN-ACK's TSval (bits 0-3 the peer's shift, 15 for none; bit 4
 * SACK-permitted) when the peer offered timestamps, and the peer echoes them back in every TSecr. TSval is
 * rounded down to make room, so it never runs ahead of the clock; the connection later uses the same TSval
 * offset (a keyed hash of the 4-tuple instead of a random draw), so its timestamps continue monotonically
 * from the SYN-ACK's. Without timestamps the SYN-ACK offers neither window scaling nor SACK — the handshake
 * could not honour them afterwards (RFC 4987 §3.6: the cost of cookies).
 *
 * The child. A valid ACK makes the connection in SYN-RECEIVED with the decoded options — exactly the state
 * a SYN-queue entry would have had — and input.c then processes the ACK on it like any third handshake
 * segment: it becomes ESTABLISHED and goes onto the accept queue (data and a FIN on the ACK are processed
 * too). A child the ACK does not establish is dropped: it has no SYN-ACK to retransmit.
 *
 * Settings: tcp_syncookies 0 never, 1 when the SYN queue is full (default), 2 for every SYN. Counters (Linux
 * names): SyncookiesSent, SyncookiesRecv (valid ACKs), SyncookiesFailed (ACKs to a listener that carried no
 * valid cookie while cookies are on; Linux counts these only shortly after a SYN-queue overflow).
 */
#include "tcp/syncookie.h"

#include <string.h>

#include "net/neigh.h"
#include "wire/wire.h"

const uint16_t brisk_syncookie_mss[BRISK_SYNCOOKIE_NMSS] = {216, 536, 1200, 1300, 1360, 1400, 1440, 1460};

#define MAC_BITS   27u
#define MAC_MASK   ((1u << MAC_BITS) - 1)
#define TS_WS_NONE 0xfu
#define TS_SACK    0x10u
#define TS_BITS    0x1fu

static uint32_t counter(uint64_t now)
{
    return (uint32_t)(now / BRISK_SYNCOOKIE_PERIOD_NS);
}

/* The 4-tuple as the MACs take it: addresses (4 or 16 bytes each, network order), then the ports. Returns
 * the bytes written (12 or 36). */
static size_t put_tuple(uint8_t *b, const struct brisk_tuple *id)
{
    size_t n;
    if (id->laddr.family == BRISK_AF_INET6) {
        memcpy(b, id->laddr.u.v6, 16);
        memcpy(b + 16, id->raddr.u.v6, 16);
        n = 32;
    } else {
        brisk_put32(b, id->laddr.u.v4);
        brisk_put32(b + 4, id->raddr.u.v4);
        n = 8;
    }
    brisk_put16(b + n, id->lport);
    brisk_put16(b + n + 2, id->rport);
    return n + 4;
}

static uint32_t mac(const struct brisk_net *net, const struct brisk_tuple *id, uint32_t peer_isn, uint32_t t,
                    unsigned mss_idx)
{
    uint8_t b[46];
    b[0] = 'c'; /* domain separation from the other uses of the same key (tuple hash, ISNs, TS offsets) */
    size_t n = 1 + put_tuple(b + 1, id);
    brisk_put32(b + n, peer_isn);
    brisk_put32(b + n + 4, t);
    b[n + 8] = (uint8_t)mss_idx;
    return (uint32_t)brisk_siphash24(tcp_of(net)->key, b, n + 9) & MAC_MASK;
}

/* The TSval offset of a cookie connection: keyed per 4-tuple, so the SYN-ACK and the child agree. */
static uint32_t ts_offset(const struct brisk_net *net, const struct brisk_tuple *id)
{
    uint8_t b[37];
    b[0] = 't';
    size_t n = 1 + put_tuple(b + 1, id);
    return (uint32_t)brisk_siphash24(tcp_of(net)->key, b, n);
}

int brisk_syncookie_use(const brisk_sock *l)
{
    const struct brisk_settings *s = &l->net->s;
    if (s->tcp_syncookies == 0 || l->lq.len >= l->lq.backlog)
        return 0;
    return s->tcp_syncookies >= 2 || l->lq.syn_count >= s->tcp_max_syn_backlog;
}

static uint32_t local_mss(const brisk_sock *l, const struct brisk_route *rt)
{
    uint32_t mss = rt->dev->cfg.mtu - (uint32_t)brisk_route_l3_hlen(rt) - BRISK_TCP_HLEN;
    if (l->opt.mss_clamp && l->opt.mss_clamp < mss)
        mss = l->opt.mss_clamp;
    return mss;
}

void brisk_syncookie_send(brisk_sock *l, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg,
                          uint64_t now)
{
    struct brisk_net *net = l->net;
    const struct brisk_settings *s = &net->s;
    struct brisk_route rt;
    if (brisk_route_lookup(net, &id->raddr, &rt) != BRISK_OK)
        return;
    /* A cookie for a source the neighbour layer could not even begin to resolve (a flood from spoofed local
     * addresses has taken every resolving slot) would be built only to be dropped: skip the work. */
    if (!brisk_route_admit(net, &rt, now))
        return;
    rt.src = id->laddr;
    const struct brisk_tcp_opts *o = &seg->opts;
    uint32_t peer_mss = o->mss_ok && o->mss ? o->mss : TCP_DEFAULT_MSS;
    unsigned idx = 0;
    while (idx + 1 < BRISK_SYNCOOKIE_NMSS && brisk_syncookie_mss[idx + 1] <= peer_mss)
        idx++;
    uint32_t t = counter(now);
    uint32_t isn = (t & 3u) << 30 | idx << MAC_BITS |
                   mac(net, id, seg->seq, t, idx);

    struct brisk_tcp_repr h = {.sport = seg->dport,
                               .dport = seg->sport,
                               .seq = isn,
                               .ack = seg->seq + 1,
                               .flags = BRISK_TCP_SYN | BRISK_TCP_ACK};
    h.opts.mss_ok = 1;
    h.opts.mss = (uint16_t)local_mss(l, &rt);
    int ts_ok = s->tcp_timestamps && o->ts_ok;
    int ws_ok = ts_ok && s->tcp_window_scaling && o->wscale_ok;
    uint8_t wscale; /* the window the listener's buffer offers, and its scale (rwin.c) */
    h.window = tcp_rwin_listen_syn(l, h.opts.mss, ts_ok, ws_ok, &wscale);
    if (ts_ok) {
        /* Window scale and SACK can be honoured only if the peer echoes them back in TSecr. */
        uint32_t bits = TS_WS_NONE;
        if (ws_ok) {
            bits = o->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : o->wscale;
            h.opts.wscale_ok = 1;
            h.opts.wscale = wscale;
        }
        if (s->tcp_sack && o->sack_perm) {
            bits |= TS_SACK;
            h.opts.sack_perm = 1;
        }
        uint32_t clock =
            (uint32_t)(now / BRISK_NSEC_PER_MSEC) + ts_offset(net, id);
        uint32_t tsval = (clock & ~TS_BITS) | bits;
        if ((int32_t)(tsval - clock) > 0)
            tsval -= TS_BITS + 1; /* never ahead of the clock the connection will use */
        h.opts.ts_ok = 1;
        h.opts.ts_val = tsval;
        h.opts.ts_ecr = o->ts_val;
    }
    net->c.SyncookiesSent++;
    tcp_send_bare(net, &rt, &id->raddr, &h, l->tos, now); /* the listener's IP_TOS */
}

brisk_sock *brisk_syncookie_check(brisk_sock *l, const struct brisk_tuple *id,
                                  const struct brisk_tcp_repr *seg, uint64_t now)
{
    struct brisk_net *net = l->net;
    const struct brisk_settings *s = &net->s;
    if (s->tcp_syncookies == 0 ||
        (seg->flags & (BRISK_TCP_SYN | BRISK_TCP_RST | BRISK_TCP_ACK)) != BRISK_TCP_ACK)
        return NULL;
    uint32_t isn = seg->ack - 1, peer_isn = seg->seq - 1;
    unsigned idx = (isn >> MAC_BITS) & 7u;
    uint32_t t_now = counter(now);
    int valid = 0;
    for (uint32_t age = 0; age < BRISK_SYNCOOKIE_MAX_AGE && !valid; age++) {
        uint32_t t = t_now - age;
        if ((t & 3u) == isn >> 30 && age <= t_now &&
            mac(net, id, peer_isn, t, idx) == (isn & MAC_MASK))
            valid = 1;
    }
    if (!valid) {
        net->c.SyncookiesFailed++;
        return NULL;
    }
    if (l->lq.len >= l->lq.backlog) { /* nowhere to queue it: drop, the peer retransmits (as Linux) */
        net->c.ListenOverflows++;
        return NULL;
    }
    brisk_sock *c = tcp_child_new(l, id, seg);
    if (!c)
        return NULL;
    net->c.SyncookiesRecv++;

    /* Options: the MSS from the cookie; scale and SACK from the echoed TSval, if timestamps are on. */
    c->opt.peer_mss = brisk_syncookie_mss[idx];
    const struct brisk_tcp_opts *o = &seg->opts;
    c->opt.ts = s->tcp_timestamps && o->ts_ok && o->ts_ecr != 0;
    unsigned ws = TS_WS_NONE;
    if (c->opt.ts) {
        c->opt.ts_recent = o->ts_val;
        c->opt.ts_recent_age = now;
        ws = o->ts_ecr & TS_WS_NONE;
        c->opt.sack = s->tcp_sack && (o->ts_ecr & TS_SACK);
    }
    c->opt.ws = s->tcp_window_scaling && ws <= TCP_MAX_WSCALE;
    c->snd.wscale = c->opt.ws ? (uint8_t)ws : 0;
    c->mss_full = tcp_snd_mss(c);
    c->snd.mss = c->mss_full;

    /* Sequence state as if we had sent the SYN-ACK from a SYN-queue entry. */
    c->opt.ts_offset = ts_offset(net, &c->id);
    c->snd.iss = isn;
    c->snd.una = isn;
    c->snd.nxt = c->snd.max = isn + 1;
    c->snd.wnd = seg->window;
    c->rcv.irs = peer_isn;
    c->rcv.nxt = seg->seq;
    /* The window and scale the SYN-ACK offered, chosen again from the buffer as Linux's cookie_v4_check
     * does (rwin.c); the right edge counts from the peer's first byte. */
    tcp_rwin_open(c, 1, brisk_syncookie_mss[idx]);
    c->rcv.wup = c->rcv.nxt; /* the cookie's SYN-ACK acknowledged the SYN */
    c->rtt_probe.at = BRISK_TIME_NONE; /* the SYN-ACK's send time is not known: no handshake RTT sample */
    tcp_set_state(c, BRISK_TCP_SYN_RECEIVED, now);
    tcp_conn_hash_add(c);
    c->listener = l;
    l->lq.syn_count++;
    net->c.TcpPassiveOpens++;
    return c;
}

void brisk_syncookie_settle(struct brisk_net *net, brisk_sock *c, const struct brisk_tuple *id, uint64_t now)
{
    /* Processing the ACK may have freed the child (never for a segment without RST, but look it up rather
     * than trust the pointer). */
    if (tcp_conn_lookup(net, id) == c && c->state == BRISK_TCP_SYN_RECEIVED)
        tcp_conn_done(c, now);
}
