/*
 * harness.c — the fuzz targets' stack, scenarios, frame repair, invariants and leak check (see harness.h).
 *
 * The stack runs with brisk's defaults except where a fuzz run needs time to pass quickly (TIME-WAIT and
 * FIN-WAIT-2 in 1 s) and ARP entries that never expire (the peer's MAC is taught once, as tcpforge does), so
 * every input sees the same stack: fixed seed, so the same ISNs, and seeds generated from these scenarios
 * stay valid. Every transmitted frame is completed at once and parsed: a frame the stack emits that does not
 * parse is itself a failure (hostile input must never make us send garbage).
 *
 * The invariants (fh_check) are the ones the TCP code relies on and that no input may break: sequence
 * variables ordered (snd.una <= snd.nxt <= snd.max), the send buffer covering what is in flight, buffers
 * within their bounds, listener queues within their limits, packet and socket counts within the pool and the
 * table; and for the UDP socket every scenario has on port 80 (8 KB receive buffer, so floods overflow it),
 * its queue's counts and bound. UDP datagrams the stack sends (echoes from the recv call) must parse with
 * their checksum. They read the internal structs: this is white-box testing of the stack's own promises.
 */
#include "fuzz/harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tcp/tcp.h"
#include "udp/udp.h"
#include "wire/arp.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/ipv4.h"
#include "wire/udp.h"
#include "wire/wire.h"

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

void fh_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz invariant violated: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* The last TCP segment the stack sent (for the handshakes). */
struct seen {
    int have;
    struct brisk_tcp_repr h;
};

static void collect(struct fh *h, struct seen *last)
{
    for (size_t i = 0; i < h->f.ntx; i++) {
        const uint8_t *d = h->f.tx[i].data;
        size_t n = h->f.tx[i].len;
        h->frames_out++;
        struct brisk_eth_repr eth;
        if (brisk_eth_parse(d, n, &eth) < 0)
            fh_fail("the stack sent a frame without an Ethernet header (%zu bytes)", n);
        if (eth.type == BRISK_ETH_P_IPV6) { /* IPv6: the header, its chain, and an ICMPv6 message's checksum */
            struct brisk_ipv6_repr ip6;
            struct brisk_ipv6_ext x;
            struct brisk_icmp6_repr m;
            const uint8_t *p6 = d + BRISK_ETH_HLEN;
            int rc = brisk_ipv6_parse(p6, n - BRISK_ETH_HLEN, &ip6);
            if (rc < 0)
                fh_fail("the stack sent an IPv6 packet that does not parse: %s", brisk_wire_err_name(rc));
            size_t end = BRISK_IPV6_HLEN + (size_t)ip6.payload_len;
            rc = brisk_ipv6_ext_walk(p6, end, &ip6, &x);
            if (rc < 0 || x.discard)
                fh_fail("the stack sent an IPv6 packet with a bad chain");
            if (x.proto == BRISK_IP_PROTO_ICMPV6 &&
                (rc = brisk_icmp6_parse(p6 + x.proto_off, end - x.proto_off, ip6.src, ip6.dst, &m)) < 0)
                fh_fail("the stack sent an ICMPv6 message that does not parse: %s", brisk_wire_err_name(rc));
            continue;
        }
        if (eth.type != BRISK_ETH_P_IPV4)
            continue;
        struct brisk_ipv4_repr ip;
        int rc = brisk_ipv4_parse(d + BRISK_ETH_HLEN, n - BRISK_ETH_HLEN, &ip);
        if (rc < 0)
            fh_fail("the stack sent an IPv4 datagram that does not parse: %s", brisk_wire_err_name(rc));
        if (ip.proto == BRISK_IP_PROTO_UDP) {
            struct brisk_udp_repr u;
            rc = brisk_udp_parse(d + BRISK_ETH_HLEN + ip.hdr_len, (size_t)ip.total_len - ip.hdr_len, ip.src,
                                 ip.dst, 1, &u);
            if (rc < 0 || u.csum == 0)
                fh_fail("the stack sent a UDP datagram that does not parse: %s", brisk_wire_err_name(rc));
            continue;
        }
        if (ip.proto != BRISK_IP_PROTO_TCP)
            continue;
        struct brisk_tcp_repr t;
        const uint8_t *l4 = d + BRISK_ETH_HLEN + ip.hdr_len;
        rc = brisk_tcp_parse(l4, (size_t)ip.total_len - ip.hdr_len, ip.src, ip.dst, 1, &t);
        if (rc < 0)
            fh_fail("the stack sent a TCP segment that does not parse: %s", brisk_wire_err_name(rc));
        if (t.opts.ts_ok)
            h->local_tsval = t.opts.ts_val;
        h->last = t;
        h->last.payload = NULL;
        uint32_t end = t.seq + (uint32_t)t.payload_len + ((t.flags & BRISK_TCP_SYN) ? 1u : 0u) +
                       ((t.flags & BRISK_TCP_FIN) ? 1u : 0u);
        if (!h->have_last || brisk_seq_gt(end, h->local_end) || (t.flags & BRISK_TCP_SYN))
            h->local_end = end;
        h->have_last = 1;
        if (last) {
            last->have = 1;
            last->h = t;
            last->h.payload = NULL;
        }
    }
    fakedev_clear(&h->f);
    fakedev_complete_all(&h->f, h->st->net.now);
}

void fh_run(struct fh *h, uint64_t until)
{
    for (unsigned guard = 0;; guard++) {
        collect(h, NULL);
        uint64_t d = brisk_stack_next_deadline(h->st);
        if (d == BRISK_TIME_NONE || d > until)
            break;
        if (guard > 200000)
            fh_fail("the stack keeps asking to be polled (deadline %llu)", (unsigned long long)d);
        brisk_stack_poll(h->st, d);
    }
    if (until > h->now)
        h->now = until;
    brisk_stack_poll(h->st, h->now);
    collect(h, NULL);
}

static void repair(uint8_t *b, size_t len, unsigned flags)
{
    if (len < BRISK_ETH_HLEN + BRISK_IPV4_HLEN || brisk_get16(b + 12) != BRISK_ETH_P_IPV4)
        return;
    uint8_t *ip = b + BRISK_ETH_HLEN;
    size_t iplen = len - BRISK_ETH_HLEN;
    if (flags & FH_FIX_ADDR) {
        memcpy(b, (const uint8_t[6]){0x02, 0, 0, 0, 0, 1}, 6);
        brisk_put32(ip + 12, FH_PEER_IP);
        brisk_put32(ip + 16, FH_LOCAL_IP);
    }
    if (!(flags & FH_FIX_CSUM))
        return;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (ihl < BRISK_IPV4_HLEN || ihl > iplen)
        return;
    brisk_put16(ip + 10, 0);
    brisk_put16(ip + 10, brisk_csum_buf(ip, ihl));
    size_t total = brisk_get16(ip + 2);
    if (total < ihl || total > iplen)
        return;
    uint8_t *l4 = ip + ihl;
    size_t l4len = total - ihl;
    uint32_t src = brisk_get32(ip + 12), dst = brisk_get32(ip + 16);
    if (ip[9] == BRISK_IP_PROTO_TCP) {
        brisk_tcp_csum_fill(l4, l4len, src, dst);
    } else if (ip[9] == BRISK_IP_PROTO_UDP && l4len >= BRISK_UDP_HLEN) {
        size_t ulen = brisk_get16(l4 + 4); /* the checksum covers the length field's datagram */
        if (ulen >= BRISK_UDP_HLEN && ulen <= l4len)
            brisk_udp_csum_fill(l4, ulen, src, dst);
    } else if (ip[9] == BRISK_IP_PROTO_ICMP && l4len >= BRISK_ICMP_HLEN) {
        brisk_put16(l4 + 2, 0);
        brisk_put16(l4 + 2, brisk_csum_buf(l4, l4len));
    }
}

/* FH_REL_SEQ: makes SEQ and ACK absolute for the connection the frame's ports (and the fixed addresses) name.
 */
static void relative(const struct fh *h, uint8_t *b, size_t len)
{
    if (len < BRISK_ETH_HLEN + BRISK_IPV4_HLEN || brisk_get16(b + 12) != BRISK_ETH_P_IPV4)
        return;
    uint8_t *ip = b + BRISK_ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (ip[9] != BRISK_IP_PROTO_TCP || ihl < BRISK_IPV4_HLEN || BRISK_ETH_HLEN + ihl + BRISK_TCP_HLEN > len)
        return;
    uint8_t *t = ip + ihl;
    brisk_sock *c = tcp_conn_lookup(&h->st->net, TCP_TUPLE4(FH_LOCAL_IP, brisk_get16(t + 2), FH_PEER_IP, brisk_get16(t)));
    if (!c)
        return;
    brisk_put32(t + 4, brisk_get32(t + 4) + c->rcv.nxt);
    brisk_put32(t + 8, brisk_get32(t + 8) + c->snd.una);
}

void fh_input(struct fh *h, const uint8_t *frame, size_t len, unsigned flags)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    if (len)
        memcpy(copy, frame, len);
    if (flags & FH_REL_SEQ)
        relative(h, copy, len);
    repair(copy, len, flags);
    if (brisk_stack_input(h->st, h->f.dev, copy, len, h->now) != BRISK_OK)
        fh_fail("brisk_stack_input refused a frame");
    free(copy);
    collect(h, NULL);
}

void fh_input_batch(struct fh *h, const uint8_t *const *frames, const size_t *lens, size_t n, unsigned flags)
{
    struct brisk_rx_frame v[FH_BATCH_MAX] = {{0}};
    uint8_t *copy[FH_BATCH_MAX] = {0};
    if (n > FH_BATCH_MAX)
        abort();
    for (size_t i = 0; i < n; i++) {
        copy[i] = malloc(lens[i] ? lens[i] : 1);
        if (!copy[i])
            abort();
        if (lens[i])
            memcpy(copy[i], frames[i], lens[i]);
        if (flags & FH_REL_SEQ)
            relative(h, copy[i], lens[i]);
        repair(copy[i], lens[i], flags);
        v[i].data = copy[i];
        v[i].len = lens[i];
        v[i].flags = 0;
    }
    if (brisk_stack_input_batch(h->st, h->f.dev, v, n, h->now) != BRISK_OK)
        fh_fail("brisk_stack_input_batch refused a batch");
    for (size_t i = 0; i < n; i++)
        free(copy[i]);
    collect(h, NULL);
}

size_t fh_tcp_frame(const struct fh *h, uint8_t *buf, const struct brisk_tcp_repr *t, const void *payload,
                    size_t len)
{
    uint8_t seg[BRISK_TCP_HLEN_MAX + 2048];
    if (len > 2048)
        abort();
    size_t hl = brisk_tcp_emit(seg, t);
    if (len)
        memcpy(seg + hl, payload, len);
    brisk_tcp_csum_fill(seg, hl + len, FH_PEER_IP, FH_LOCAL_IP);
    return fakedev_ipv4_frame(buf, h->f.cfg.mac, peer_mac, FH_PEER_IP, FH_LOCAL_IP, BRISK_IP_PROTO_TCP, seg,
                              hl + len);
}

static void inject(struct fh *h, const struct brisk_tcp_repr *t, struct seen *last)
{
    uint8_t frame[256];
    size_t n = fh_tcp_frame(h, frame, t, NULL, 0);
    if (brisk_stack_input(h->st, h->f.dev, frame, n, h->now) != BRISK_OK)
        abort();
    collect(h, last);
}

static struct brisk_tcp_opts full_opts(uint32_t tsval, uint32_t tsecr)
{
    struct brisk_tcp_opts o = {.mss_ok = 1,
                               .mss = 1460,
                               .wscale_ok = 1,
                               .wscale = 7,
                               .sack_perm = 1,
                               .ts_ok = 1,
                               .ts_val = tsval,
                               .ts_ecr = tsecr};
    return o;
}

static void open_passive(struct fh *h)
{
    struct seen last = {0};
    struct brisk_tcp_repr syn = {.sport = FH_PEER_PORT,
                                 .dport = FH_PORT,
                                 .seq = FH_PEER_ISS,
                                 .flags = BRISK_TCP_SYN,
                                 .window = 65535,
                                 .opts = full_opts(100, 0)};
    inject(h, &syn, &last);
    if (!last.have || last.h.flags != (BRISK_TCP_SYN | BRISK_TCP_ACK))
        fh_fail("setup: no SYN-ACK");
    h->now += BRISK_NSEC_PER_MSEC;
    struct brisk_tcp_repr ack = {.sport = FH_PEER_PORT,
                                 .dport = FH_PORT,
                                 .seq = FH_PEER_ISS + 1,
                                 .ack = last.h.seq + 1,
                                 .flags = BRISK_TCP_ACK,
                                 .window = 1024,
                                 .opts = full_opts(101, last.h.opts.ts_val)};
    ack.opts.mss_ok = ack.opts.wscale_ok = ack.opts.sack_perm = 0;
    inject(h, &ack, NULL);
    int err;
    h->conn = brisk_accept(h->listener, &err);
    if (!h->conn)
        fh_fail("setup: accept failed");
    h->peer_port = FH_PEER_PORT;
    h->local_port = FH_PORT;
    h->peer_nxt = FH_PEER_ISS + 1;
    h->peer_ack = last.h.seq + 1;
    h->peer_tsval = 101;
}

static void open_active(struct fh *h)
{
    int err;
    h->conn = brisk_socket(h->st, &err);
    if (!h->conn || brisk_connect(h->conn, FH_PEER_IP, FH_PORT, h->now) != BRISK_ERR_INPROGRESS)
        fh_fail("setup: connect failed");
    struct seen last = {0};
    collect(h, &last);
    if (!last.have || last.h.flags != BRISK_TCP_SYN)
        fh_fail("setup: no SYN");
    h->local_port = last.h.sport;
    h->now += BRISK_NSEC_PER_MSEC;
    struct brisk_tcp_repr sa = {.sport = FH_PORT,
                                .dport = h->local_port,
                                .seq = FH_PEER_ISS,
                                .ack = last.h.seq + 1,
                                .flags = BRISK_TCP_SYN | BRISK_TCP_ACK,
                                .window = 65535,
                                .opts = full_opts(100, last.h.opts.ts_val)};
    inject(h, &sa, NULL);
    struct brisk_conn_info i;
    if (brisk_conn_info(h->conn, &i) != BRISK_OK || i.state != BRISK_TCP_ESTABLISHED)
        fh_fail("setup: active open did not complete");
    h->peer_port = FH_PORT;
    h->peer_nxt = FH_PEER_ISS + 1;
    h->peer_ack = last.h.seq + 1;
    h->peer_tsval = 100;
}

void fh_init(struct fh *h, enum fh_scenario sc)
{
    fh_init_with(h, sc, NULL);
}

void fh_init_with(struct fh *h, enum fh_scenario sc, const char *extra)
{
    memset(h, 0, sizeof(*h));
    struct brisk_settings s;
    brisk_settings_default(&s);
    static const char *const sets[] = {"arp_reachable=86400s", "tcp_time_wait=1s", "tcp_fin_timeout=1s",
                                       "pkt_pool_bytes=4M", NULL};
    for (const char *const *p = sets; *p; p++)
        if (brisk_settings_set(&s, *p) != BRISK_OK)
            fh_fail("setting %s", *p);
    if (extra && brisk_settings_set(&s, extra) != BRISK_OK)
        fh_fail("setting %s", extra);
    h->st = brisk_stack_new(&s);
    if (!h->st)
        abort();
    fakedev_init(&h->f, h->st, 1, FH_LOCAL_IP, 24);
    h->now = BRISK_NSEC_PER_MSEC;
    /* The peer's ARP request teaches the stack its MAC (RFC 826 merge). */
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memset(eth.dst, 0xff, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = FH_PEER_IP, .tpa = FH_LOCAL_IP};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + BRISK_ETH_HLEN, &a);
    brisk_stack_input(h->st, h->f.dev, frame, sizeof(frame), h->now);
    collect(h, NULL);
    int uerr;
    struct brisk_addr any = {.family = BRISK_AF_UNSPEC};
    h->udp = brisk_udp_socket(h->st, &uerr);
    if (!h->udp || brisk_udp_bind(h->udp, &any, FH_PORT) != BRISK_OK ||
        brisk_udp_setsockopt(h->udp, BRISK_SO_RCVBUF, 8192) != BRISK_OK)
        fh_fail("setup: UDP bind failed");
    if (sc == FH_LISTEN || sc == FH_PASSIVE) {
        int err;
        h->listener = brisk_socket(h->st, &err);
        if (!h->listener || brisk_bind(h->listener, 0, FH_PORT) != BRISK_OK ||
            brisk_listen(h->listener, 16) != BRISK_OK)
            fh_fail("setup: listen failed");
    }
    if (sc == FH_PASSIVE)
        open_passive(h);
    else if (sc == FH_ACTIVE)
        open_active(h);
    fh_check(h);
}

void fh_app_call(struct fh *h, unsigned op, unsigned arg)
{
    uint8_t buf[64 * 256 + 1];
    brisk_sock *c = h->conn;
    switch (op) {
    case 0:
        if (c)
            brisk_recv(c, buf, 64u * (arg + 1), h->now);
        if (h->udp) { /* a datagram, perhaps truncated, echoed to whoever it says sent it */
            struct brisk_addr from;
            uint16_t port;
            int64_t n = brisk_udp_recvfrom(h->udp, buf, 16u * arg, &from, &port, NULL);
            if (n >= 0)
                brisk_udp_sendto(h->udp, buf, (size_t)n, &from, port ? port : 7, h->now);
        }
        break;
    case 1:
        if (c) {
            size_t n = 64u * arg + 1;
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)(i * 131u);
            brisk_send(c, buf, n, (arg & 1) ? BRISK_MSG_MORE : 0, h->now);
        }
        break;
    case 2:
        if (c)
            brisk_shutdown_write(c, h->now);
        break;
    case 3:
        if (c)
            brisk_close(c, h->now);
        h->conn = NULL;
        break;
    case 4:
        if (c)
            brisk_setsockopt(c, (arg & 2) ? BRISK_SO_CORK : BRISK_SO_NODELAY, arg & 1, h->now);
        break;
    case 5:
        if (h->listener) {
            int err;
            brisk_sock *a = brisk_accept(h->listener, &err);
            if (a) {
                if (!h->conn)
                    h->conn = a;
                else
                    brisk_close(a, h->now);
            }
        }
        break;
    case 6:
        if (c)
            brisk_abort(c, h->now);
        h->conn = NULL;
        break;
    default:
        fh_run(h, h->now + 100 * BRISK_NSEC_PER_MSEC);
        break;
    }
}

static void check_conn(const struct fh *h, const brisk_sock *c)
{
    const struct brisk_settings *s = &h->st->net.s;
    if (c->net != &h->st->net)
        fh_fail("socket of another stack in the table");
    if (c->state > BRISK_TCP_TIME_WAIT)
        fh_fail("state %u out of range", c->state);
    if (c->state == BRISK_TCP_LISTEN) {
        if (c->lq.syn_count > s->tcp_max_syn_backlog)
            fh_fail("SYN queue %u over tcp_max_syn_backlog %u", c->lq.syn_count, s->tcp_max_syn_backlog);
        if (c->lq.len > c->lq.backlog)
            fh_fail("accept queue %u over backlog %u", c->lq.len, c->lq.backlog);
        uint32_t n = 0;
        for (const brisk_sock *ch = c->lq.head; ch; ch = ch->aq_next)
            if (++n > c->lq.len)
                fh_fail("accept queue longer than its count");
        if (n != c->lq.len)
            fh_fail("accept queue holds %u, count says %u", n, c->lq.len);
        return;
    }
    if (c->state == BRISK_TCP_CLOSED)
        return;
    if (brisk_seq_gt(c->snd.una, c->snd.nxt))
        fh_fail("snd.una %u after snd.nxt %u (state %s)", c->snd.una, c->snd.nxt,
                brisk_tcp_state_name(c->state));
    if (brisk_seq_gt(c->snd.nxt, c->snd.max))
        fh_fail("snd.nxt %u after snd.max %u", c->snd.nxt, c->snd.max);
    /* What was sent and not acknowledged lies in the buffer, plus at most SYN and FIN. */
    if ((uint64_t)(c->snd.max - c->snd.una) > c->snd.buf.len + 2)
        fh_fail("%u bytes in flight but the send buffer holds %llu", c->snd.max - c->snd.una,
                (unsigned long long)c->snd.buf.len);
    if (c->snd.buf.len > c->snd.sndbuf)
        fh_fail("send buffer %llu over sndbuf %u", (unsigned long long)c->snd.buf.len, c->snd.sndbuf);
    if (c->rcv.buf.len > c->rcv.rcvbuf)
        fh_fail("receive buffer %llu over rcvbuf %u", (unsigned long long)c->rcv.buf.len, c->rcv.rcvbuf);
    if (c->rcv.ooo.nsegs > s->tcp_ooo_max_segs)
        fh_fail("%u out-of-order pieces over tcp_ooo_max_segs", c->rcv.ooo.nsegs);
    if (c->snd.mss == 0 && c->state >= BRISK_TCP_ESTABLISHED)
        fh_fail("zero MSS in %s", brisk_tcp_state_name(c->state));
    if (c->snd.wscale > TCP_MAX_WSCALE || c->rcv.wscale > TCP_MAX_WSCALE)
        fh_fail("window scale over 14");
    if (c->state < BRISK_TCP_ESTABLISHED)
        return;
    /* Sequence space accounts for every byte: what RCV.NXT passed is SYN, the bytes received (read or still
     * buffered) and the FIN; what SND.UNA passed is SYN, the bytes acknowledged and at most the FIN. */
    if ((uint32_t)(c->rcv.nxt - c->rcv.irs - 1u - c->rcv.fin) != (uint32_t)c->stat.bytes_received)
        fh_fail("rcv.nxt - irs = %u but %llu bytes received (fin %u)", c->rcv.nxt - c->rcv.irs,
                (unsigned long long)c->stat.bytes_received, c->rcv.fin);
    if (c->rcv.buf.base + c->rcv.buf.len != c->stat.bytes_received)
        fh_fail("receive stream %llu read + %llu buffered != %llu received",
                (unsigned long long)c->rcv.buf.base, (unsigned long long)c->rcv.buf.len,
                (unsigned long long)c->stat.bytes_received);
    uint32_t d = c->snd.una - c->snd.iss - 1u - (uint32_t)c->stat.bytes_acked;
    if (d > (c->snd.fin_queued ? 1u : 0u))
        fh_fail("snd.una - iss = %u but %llu bytes acknowledged", c->snd.una - c->snd.iss,
                (unsigned long long)c->stat.bytes_acked);
    if (c->snd.buf.base != c->stat.bytes_acked)
        fh_fail("send stream consumed %llu, %llu acknowledged", (unsigned long long)c->snd.buf.base,
                (unsigned long long)c->stat.bytes_acked);
}

void fh_check(struct fh *h)
{
    brisk_stack *st = h->st;
    struct brisk_tcp *t = st->tcp;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < t->nconns_buckets; i++)
        for (const brisk_sock *c = t->conns[i]; c; c = c->hnext) {
            check_conn(h, c);
            if (++seen > t->nsocks)
                fh_fail("more sockets in the table than alive");
        }
    for (uint32_t i = 0; i < t->nlisten_buckets; i++)
        for (const brisk_sock *c = t->listen[i]; c; c = c->hnext)
            check_conn(h, c);
    if (h->conn)
        check_conn(h, h->conn);
    if (st->net.pool.bytes > st->net.pool.bytes_limit + (1u << 20))
        fh_fail("packet pool %llu bytes over its bound", (unsigned long long)st->net.pool.bytes);
    if (h->udp) {
        const brisk_udp *u = h->udp;
        uint64_t bytes = 0, last = 0;
        uint32_t n = 0;
        for (const brisk_pkt *p = u->rq_head; p; p = p->next) {
            if (++n > u->rq_len || p->len < sizeof(struct brisk_udp_meta))
                fh_fail("UDP receive queue longer than its count, or a datagram without its sender");
            bytes += (last = brisk_pkt_truesize(p));
        }
        if (n != u->rq_len || bytes != u->rq_bytes)
            fh_fail("UDP receive queue holds %u (%llu bytes), counts say %u (%llu)", n,
                    (unsigned long long)bytes, u->rq_len, (unsigned long long)u->rq_bytes);
        if (bytes - last > u->rcvbuf)
            fh_fail("UDP receive queue %llu bytes over rcvbuf %u by more than a datagram",
                    (unsigned long long)bytes, u->rcvbuf);
    }
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    if (c.UdpInDatagrams + c.UdpNoPorts + c.UdpInErrors > c.IpInDelivers)
        fh_fail("more UDP datagrams counted than IP delivered");
    if (c.IpInDelivers > c.IpInReceives || c.IpInReceives > c.EthInFrames || c.TcpInSegs > c.IpInDelivers + c.Ip6InDelivers)
        fh_fail("input counters out of order");
    if (c.TcpPassiveOpens > c.TcpInSegs)
        fh_fail("more passive opens than segments");
}

void fh_finish(struct fh *h)
{
    fh_check(h);
    if (h->conn)
        brisk_abort(h->conn, h->now);
    h->conn = NULL;
    if (h->listener)
        brisk_close(h->listener, h->now);
    h->listener = NULL;
    if (h->udp)
        brisk_udp_close(h->udp);
    h->udp = NULL;
    collect(h, NULL);
    /* Orphans finish on their own: TIME-WAIT, FIN-WAIT-2, retransmissions up to tcp_retries2 backoffs. */
    fh_run(h, h->now + 3ull * 86400 * BRISK_NSEC_PER_SEC);
    if (brisk_stack_sockets(h->st) != 0)
        fh_fail("%llu sockets alive after everything closed", (unsigned long long)brisk_stack_sockets(h->st));
    if (brisk_stack_udp_sockets(h->st) != 0)
        fh_fail("%llu UDP sockets alive after everything closed",
                (unsigned long long)brisk_stack_udp_sockets(h->st));
    if (brisk_stack_pkts_in_use(h->st) != 0)
        fh_fail("%llu packet buffers in use after everything closed",
                (unsigned long long)brisk_stack_pkts_in_use(h->st));
    if (brisk_stack_tcp_chunks_in_use(h->st) != 0)
        fh_fail("%llu TCP buffer chunks in use after everything closed",
                (unsigned long long)brisk_stack_tcp_chunks_in_use(h->st));
    fakedev_destroy(&h->f, h->now);
    brisk_stack_free(h->st);
    h->st = NULL;
}
