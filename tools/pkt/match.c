/*
 * match.c — the script's packets on the wire, for both backends: frames built for inbound packets, outbound
 * frames parsed and compared with the script.
 *
 * Sequence numbers follow packetdrill: the script peer's numbers are used as written (its ISN is whatever its
 * SYN says), and the stack's are relative to the ISN of its SYN or SYN-ACK, which the script writes as 0
 * (usually): inbound ACKs and SACK blocks get the stack's ISN added, outbound sequence numbers have it taken
 * away. TCP timestamps map the same way: the first outbound TSval seen anchors the stack's clock to the
 * script's value, every outbound (script value, live value) pair is remembered, and an inbound TSecr takes
 * the live value of the script value it names (or, failing that, the anchor plus the difference).
 *
 * An inbound packet becomes an Ethernet frame from the gateway, checksums filled in, handed to the backend's
 * inject (the brisk stack's input, or a write to the kernel's TAP device). An outbound packet is waited for
 * through the backend (the virtual clock run deadline by deadline, or the TAP read in real time) and compared
 * field by field in packetdrill's order — IP header (protocol, length, TOS and TTL if given), TCP flags,
 * sequence number, ack, window (if given), urgent pointer, options kind by kind (TSval only with
 * --tcp_ts_tick_usecs), the payload, then the time. Packets of other connections are ignored, as packetdrill
 * ignores them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/run.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/wire.h"

void net_sut_connecting(struct run *r)
{
    memset(&r->sut, 0, sizeof(r->sut));
    r->sut.exists = 1;
    r->sut.passive = 0;
    r->sut.rport = r->connect_port;
}

/* ---- sequence and timestamp mapping ---- */

static uint32_t local_offset(const struct run *r)
{
    return r->sut.have_local_isn ? r->sut.live_local_isn - r->sut.script_local_isn : 0;
}

static void ts_remember(struct run *r, uint32_t script, uint32_t live)
{
    for (unsigned i = 0; i < r->sut.nts; i++) {
        if (r->sut.ts_script[i] == script) {
            r->sut.ts_live[i] = live;
            return;
        }
    }
    unsigned i = r->sut.nts < RUN_TSMAP ? r->sut.nts++ : (r->sut.ts_next++ % RUN_TSMAP);
    r->sut.ts_script[i] = script;
    r->sut.ts_live[i] = live;
}

static uint32_t ts_ecr_live(const struct run *r, uint32_t script)
{
    for (unsigned i = 0; i < r->sut.nts; i++)
        if (r->sut.ts_script[i] == script)
            return r->sut.ts_live[i];
    if (r->sut.have_ts)
        return script - r->sut.first_script_ts + r->sut.first_live_ts;
    return script;
}

/* ---- inbound ---- */

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Ethernet + IPv4 from the gateway around an L4 payload of l4_len bytes already at frame + 34. */
static size_t frame_ip(struct run *r, uint8_t *frame, uint8_t proto, uint8_t tos, size_t l4_len)
{
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_IPV4};
    memcpy(eth.dst, r->local_mac, 6);
    memcpy(eth.src, r->gw_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_ipv4_repr ip = {.tos = tos,
                                 .total_len = (uint16_t)(BRISK_IPV4_HLEN + l4_len),
                                 .df = 1,
                                 .ttl = 64,
                                 .proto = proto,
                                 .src = r->remote_ip,
                                 .dst = r->local_ip};
    brisk_ipv4_emit(frame + BRISK_ETH_HLEN, &ip);
    return BRISK_ETH_HLEN + BRISK_IPV4_HLEN + l4_len;
}

static int inbound_tcp(struct run *r, const struct pkt_event *ev)
{
    const struct pkt_tcp *p = &ev->tcp;
    if (!r->sut.exists) {
        /* A packet with no connection yet: it starts one (to the listener, or to nothing — a test of what
         * the stack answers when no socket matches). */
        memset(&r->sut, 0, sizeof(r->sut));
        r->sut.exists = 1;
        r->sut.passive = 1;
        r->sut.rport = r->next_eph++;
        r->sut.lport = r->bind_port;
        r->sut.remote_isn = p->seq;
    }
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_TCP_HLEN_MAX + 65535];
    uint8_t *t = frame + BRISK_ETH_HLEN + BRISK_IPV4_HLEN;
    size_t hlen = BRISK_TCP_HLEN + p->opts_len;
    if (BRISK_IPV4_HLEN + hlen + p->len > r->mtu + 0u && p->len > 0)
        return run_fail(r, PKT_BAD_SCRIPT, ev, "inbound segment of %u bytes is larger than the MTU (%u)",
                        (unsigned)(BRISK_IPV4_HLEN + hlen + p->len), r->mtu);
    uint32_t off = local_offset(r);
    put16(t, p->sport ? p->sport : r->sut.rport);
    put16(t + 2, p->dport ? p->dport : r->sut.lport);
    put32(t + 4, p->seq);
    put32(t + 8, (p->flags & BRISK_TCP_ACK) ? p->ack + off : p->ack);
    t[12] = (uint8_t)((hlen / 4) << 4);
    t[13] = p->flags;
    put16(t + 14, (uint16_t)p->win);
    put16(t + 16, 0);
    put16(t + 18, p->urg);
    uint8_t *o = t + BRISK_TCP_HLEN;
    memcpy(o, p->opts, p->opts_len);
    /* Map the SACK blocks and TSecr the script named to live values; "opt" bytes (maybe malformed: the
     * list need not be walkable) go as written. */
    for (size_t i = 0; i < p->opts_len; i++) {
        if (!(p->opts_map >> i & 1))
            continue;
        uint8_t kind = o[i];
        uint8_t len = o[i + 1];
        if (kind == BRISK_TCPOPT_SACK) {
            for (size_t b = i + 2; b + 8 <= (size_t)i + len; b += 8) {
                put32(o + b, get32(o + b) + off);
                put32(o + b + 4, get32(o + b + 4) + off);
            }
        } else if (kind == BRISK_TCPOPT_TS && (p->flags & BRISK_TCP_ACK)) {
            put32(o + i + 6, ts_ecr_live(r, get32(o + i + 6)));
        }
    }
    memset(t + hlen, 0, p->len);
    size_t seg = hlen + p->len;
    brisk_tcp_csum_fill(t, seg, r->remote_ip, r->local_ip);
    size_t n = frame_ip(r, frame, BRISK_IP_PROTO_TCP, p->tos >= 0 ? (uint8_t)p->tos : 0, seg);
    r->be->inject(r, frame, n);
    return 0;
}

static int inbound_icmp(struct run *r, const struct pkt_event *ev)
{
    const struct pkt_icmp *ic = &ev->icmp;
    if (!r->sut.exists)
        return run_fail(r, PKT_BAD_SCRIPT, ev, "an ICMP packet needs a connection to quote");
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_ICMP_HLEN + BRISK_IPV4_HLEN + BRISK_TCP_HLEN];
    uint8_t *q = frame + BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_ICMP_HLEN;
    /* The quoted datagram: one of ours, from the stack to the peer. */
    struct brisk_ipv4_repr qip = {.total_len = (uint16_t)(BRISK_IPV4_HLEN + BRISK_TCP_HLEN + ic->len),
                                  .df = 1,
                                  .ttl = 64,
                                  .proto = BRISK_IP_PROTO_TCP,
                                  .src = r->local_ip,
                                  .dst = r->remote_ip};
    brisk_ipv4_emit(q, &qip);
    uint8_t *qt = q + BRISK_IPV4_HLEN;
    memset(qt, 0, BRISK_TCP_HLEN);
    put16(qt, r->sut.lport);
    put16(qt + 2, r->sut.rport);
    put32(qt + 4, (ic->has_echoed ? ic->seq : 0) + local_offset(r));
    qt[12] = 5 << 4;
    qt[13] = BRISK_TCP_ACK;
    struct brisk_icmp_repr icmp = {.type = ic->type,
                                   .code = ic->code,
                                   .next_hop_mtu = ic->mtu >= 0 ? (uint16_t)ic->mtu : 0,
                                   .payload = q,
                                   .payload_len = BRISK_IPV4_HLEN + BRISK_TCP_HLEN};
    size_t l4 = brisk_icmp_emit(frame + BRISK_ETH_HLEN + BRISK_IPV4_HLEN, &icmp);
    size_t n = frame_ip(r, frame, BRISK_IP_PROTO_ICMP, 0, l4);
    r->be->inject(r, frame, n);
    return 0;
}

int net_inbound(struct run *r, const struct pkt_event *ev)
{
    if (r->cfg->verbose)
        printf("%9.6f inbound line %d\n", (double)r->now / 1e9, ev->line);
    return ev->is_icmp ? inbound_icmp(r, ev) : inbound_tcp(r, ev);
}

/* ---- outbound ---- */

struct outseg {
    uint64_t at;
    struct brisk_ipv4_repr ip;
    struct brisk_tcp_repr h;
    const uint8_t *opts;
    size_t optlen;
};

/* Parses a transmitted frame as TCP from the stack; 0 if it is something else. */
static int parse_out(const struct run_frame *f, struct outseg *o)
{
    struct brisk_eth_repr eth;
    if (brisk_eth_parse(f->data, f->len, &eth) < 0 || eth.type != BRISK_ETH_P_IPV4)
        return 0;
    const uint8_t *ipb = f->data + BRISK_ETH_HLEN;
    int hl = brisk_ipv4_parse(ipb, f->len - BRISK_ETH_HLEN, &o->ip);
    if (hl < 0 || o->ip.proto != BRISK_IP_PROTO_TCP)
        return 0;
    const uint8_t *t = ipb + hl;
    size_t tl = o->ip.total_len - (size_t)hl;
    if (brisk_tcp_parse(t, tl, o->ip.src, o->ip.dst, 1, &o->h) < 0)
        return -1; /* a TCP segment with a bad checksum or header: a stack bug to report */
    o->opts = t + BRISK_TCP_HLEN;
    o->optlen = o->h.hdr_len - BRISK_TCP_HLEN;
    o->at = f->at;
    return 1;
}

/* Whether the segment belongs to the script's connection (learning a connecting socket's port). */
static int is_sut(struct run *r, const struct outseg *o)
{
    if (!r->sut.exists || o->ip.src != r->local_ip || o->ip.dst != r->remote_ip)
        return 0;
    if (!r->sut.passive && r->sut.lport == 0) {
        if ((o->h.flags & (BRISK_TCP_SYN | BRISK_TCP_ACK)) == BRISK_TCP_SYN && o->h.dport == r->sut.rport) {
            r->sut.lport = o->h.sport;
            return 1;
        }
        return 0;
    }
    return o->h.sport == r->sut.lport && o->h.dport == r->sut.rport;
}

static void flags_str(uint8_t f, char *b)
{
    size_t n = 0;
    static const struct {
        uint8_t bit;
        char c;
    } map[] = {{BRISK_TCP_FIN, 'F'}, {BRISK_TCP_SYN, 'S'}, {BRISK_TCP_RST, 'R'}, {BRISK_TCP_PSH, 'P'},
               {BRISK_TCP_URG, 'U'}, {BRISK_TCP_ECE, 'E'}, {BRISK_TCP_CWR, 'W'}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (f & map[i].bit)
            b[n++] = map[i].c;
    if (f & BRISK_TCP_ACK)
        b[n++] = '.';
    if (n == 0)
        b[n++] = '-';
    b[n] = 0;
}

/* "mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7" from raw option bytes. */
static void opts_str(const uint8_t *o, size_t n, char *b, size_t cap)
{
    size_t w = 0;
    b[0] = 0;
    for (size_t i = 0; i < n && w + 40 < cap;) {
        if (w)
            b[w++] = ',';
        uint8_t kind = o[i];
        if (kind == BRISK_TCPOPT_NOP || kind == BRISK_TCPOPT_EOL) {
            w += (size_t)snprintf(b + w, cap - w, kind ? "nop" : "eol");
            i++;
            continue;
        }
        if (i + 1 >= n || o[i + 1] < 2 || i + o[i + 1] > n) {
            w += (size_t)snprintf(b + w, cap - w, "(malformed)");
            break;
        }
        uint8_t len = o[i + 1];
        if (kind == BRISK_TCPOPT_MSS && len == 4)
            w += (size_t)snprintf(b + w, cap - w, "mss %u", (unsigned)(o[i + 2] << 8 | o[i + 3]));
        else if (kind == BRISK_TCPOPT_WSCALE && len == 3)
            w += (size_t)snprintf(b + w, cap - w, "wscale %u", o[i + 2]);
        else if (kind == BRISK_TCPOPT_SACK_PERM && len == 2)
            w += (size_t)snprintf(b + w, cap - w, "sackOK");
        else if (kind == BRISK_TCPOPT_TS && len == 10)
            w += (size_t)snprintf(b + w, cap - w, "TS val %u ecr %u", get32(o + i + 2), get32(o + i + 6));
        else if (kind == BRISK_TCPOPT_SACK && len >= 10) {
            w += (size_t)snprintf(b + w, cap - w, "sack");
            for (size_t k = i + 2; k + 8 <= (size_t)i + len && w + 24 < cap; k += 8)
                w += (size_t)snprintf(b + w, cap - w, " %u:%u", get32(o + k), get32(o + k + 4));
        } else
            w += (size_t)snprintf(b + w, cap - w, "kind %u len %u", kind, len);
        i += len;
    }
}

static void seg_str(uint64_t at_ns, uint8_t flags, uint32_t seq, uint32_t len, uint32_t ack, int has_ack,
                    int win, const uint8_t *opts, size_t optlen, int opts_any, char *b, size_t cap)
{
    char f[12], o[256];
    flags_str(flags, f);
    int n = snprintf(b, cap, "%9.6f %s %u:%u(%u)", (double)at_ns / 1e9, f, seq, seq + len, len);
    if (has_ack && n > 0 && (size_t)n < cap)
        n += snprintf(b + n, cap - (size_t)n, " ack %u", ack);
    if (win >= 0 && n > 0 && (size_t)n < cap)
        n += snprintf(b + n, cap - (size_t)n, " win %d", win);
    if (opts_any && n > 0 && (size_t)n < cap)
        snprintf(b + n, cap - (size_t)n, " <...>");
    else if (optlen && n > 0 && (size_t)n < cap) {
        opts_str(opts, optlen, o, sizeof(o));
        snprintf(b + n, cap - (size_t)n, " <%s>", o);
    }
}

/* Fails the outbound event with packetdrill's "live packet field X: expected: E vs actual: A", then both
 * packets. */
static int out_mismatch(struct run *r, const struct pkt_event *ev, int64_t t_us, const struct outseg *o,
                        uint32_t seq, const uint8_t *aopts, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static int out_mismatch(struct run *r, const struct pkt_event *ev, int64_t t_us, const struct outseg *o,
                        uint32_t seq, const uint8_t *aopts, const char *fmt, ...)
{
    char what[256], sp[512], ap[512];
    va_list va;
    va_start(va, fmt);
    vsnprintf(what, sizeof(what), fmt, va);
    va_end(va);
    const struct pkt_tcp *p = &ev->tcp;
    seg_str((uint64_t)t_us * 1000, p->flags, p->seq, p->len, p->ack, p->has_ack || (p->flags & BRISK_TCP_ACK),
            p->win, p->opts, p->opts_len, p->opts_any, sp, sizeof(sp));
    seg_str(o->at, o->h.flags, seq, (uint32_t)o->h.payload_len, o->h.ack, (o->h.flags & BRISK_TCP_ACK) != 0,
            o->h.window, aopts, o->optlen, 0, ap, sizeof(ap));
    return run_fail(r, PKT_FAIL, ev, "error handling packet: %s\nscript packet: %s\nactual packet: %s", what,
                    sp, ap);
}

static int check_out(struct run *r, const struct pkt_event *ev, int64_t t_us, int64_t t_end_us,
                     struct outseg *o)
{
    const struct pkt_tcp *p = &ev->tcp;
    /* A SYN or SYN-ACK fixes the stack's ISN in both spaces. */
    if ((o->h.flags & BRISK_TCP_SYN) && (p->flags & BRISK_TCP_SYN) && !r->sut.have_local_isn) {
        r->sut.have_local_isn = 1;
        r->sut.live_local_isn = o->h.seq;
        r->sut.script_local_isn = p->seq;
    }
    uint32_t seq = o->h.seq - local_offset(r);
    /* Options in script space: TSval rebased on the first one seen. */
    uint8_t aopts[PKT_OPTS_MAX];
    size_t alen = o->optlen < sizeof(aopts) ? o->optlen : sizeof(aopts);
    memcpy(aopts, o->opts, alen);
    int64_t ts_dev = 0;
    int have_ts_pair = 0;
    const uint8_t *sts = NULL;
    for (size_t i = 0; i + 10 <= p->opts_len;) {
        if (p->opts[i] <= BRISK_TCPOPT_NOP) {
            i++;
            continue;
        }
        if (p->opts[i] == BRISK_TCPOPT_TS)
            sts = p->opts + i;
        i += p->opts[i + 1];
    }
    for (size_t i = 0; i < alen;) {
        if (aopts[i] <= BRISK_TCPOPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= alen || aopts[i + 1] < 2 || i + aopts[i + 1] > alen)
            break;
        if (aopts[i] == BRISK_TCPOPT_TS && aopts[i + 1] == 10 && sts) {
            uint32_t live = get32(aopts + i + 2), script = get32(sts + 2);
            ts_remember(r, script, live);
            if (!r->sut.have_ts) {
                r->sut.have_ts = 1;
                r->sut.first_script_ts = script;
                r->sut.first_live_ts = live;
            }
            uint32_t mapped = r->sut.first_script_ts + (live - r->sut.first_live_ts);
            put32(aopts + i + 2, mapped);
            ts_dev = (int32_t)(mapped - script);
            have_ts_pair = 1;
        }
        i += aopts[i + 1];
    }
    if (o->ip.tos != (p->tos >= 0 ? p->tos : o->ip.tos))
        return out_mismatch(r, ev, t_us, o, seq, aopts, "live packet field tos: expected: %d vs actual: %u",
                            p->tos, o->ip.tos);
    if (!p->opts_any && o->optlen != p->opts_len)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet field tcp_data_offset: expected: %u vs actual: %u",
                            (unsigned)(BRISK_TCP_HLEN + p->opts_len) / 4, o->h.hdr_len / 4u);
    static const struct {
        uint8_t bit;
        const char *name;
    } fl[] = {{BRISK_TCP_FIN, "tcp_fin"}, {BRISK_TCP_SYN, "tcp_syn"}, {BRISK_TCP_RST, "tcp_rst"},
              {BRISK_TCP_PSH, "tcp_psh"}, {BRISK_TCP_ACK, "tcp_ack"}, {BRISK_TCP_URG, "tcp_urg"},
              {BRISK_TCP_ECE, "tcp_ece"}, {BRISK_TCP_CWR, "tcp_cwr"}};
    for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
        int e = (p->flags & fl[i].bit) != 0, a = (o->h.flags & fl[i].bit) != 0;
        if (e != a)
            return out_mismatch(r, ev, t_us, o, seq, aopts,
                                "live packet field %s: expected: %d vs actual: %d", fl[i].name, e, a);
    }
    if (seq != p->seq)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet field tcp_seq: expected: %u vs actual: %u", p->seq, seq);
    if (o->h.ack != p->ack)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet field tcp_ack_seq: expected: %u vs actual: %u", p->ack, o->h.ack);
    if (p->win >= 0 && o->h.window != p->win)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet field tcp_window: expected: %d vs actual: %u", p->win, o->h.window);
    if (o->h.urg != p->urg)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet field tcp_urg_ptr: expected: %u vs actual: %u", p->urg, o->h.urg);
    if (!p->opts_any) {
        for (size_t i = 0; i < alen;) {
            uint8_t k = aopts[i];
            if (k != p->opts[i])
                return out_mismatch(r, ev, t_us, o, seq, aopts, "bad outbound TCP options");
            if (k <= BRISK_TCPOPT_NOP) {
                i++;
                continue;
            }
            uint8_t len = aopts[i + 1];
            if (i + 1 >= alen || len < 2 || i + len > alen || p->opts[i + 1] != len)
                return out_mismatch(r, ev, t_us, o, seq, aopts, "bad lengths for outbound TCP option %u", k);
            if (k == BRISK_TCPOPT_TS) {
                if (r->tcp_ts_tick_us && have_ts_pair &&
                    (ts_dev < 0 ? -ts_dev : ts_dev) * r->tcp_ts_tick_us > run_tolerance(r, t_us))
                    return out_mismatch(r, ev, t_us, o, seq, aopts,
                                        "bad outbound TCP timestamp value, tolerance %" PRId64,
                                        run_tolerance(r, t_us));
            } else if (memcmp(aopts + i + 2, p->opts + i + 2, (size_t)len - 2) != 0) {
                return out_mismatch(r, ev, t_us, o, seq, aopts, "bad value outbound TCP option %u", k);
            }
            i += len;
        }
    }
    if (o->h.payload_len != p->len)
        return out_mismatch(r, ev, t_us, o, seq, aopts,
                            "live packet payload: expected %u bytes vs actual %zu bytes", p->len,
                            o->h.payload_len);
    for (size_t i = 0; i < o->h.payload_len; i++)
        if (o->h.payload[i] != 0)
            return out_mismatch(r, ev, t_us, o, seq, aopts, "incorrect outbound data payload");
    int64_t at_us = (int64_t)(o->at / 1000);
    if (ev->tkind != TIME_ANY && !run_time_ok(r, at_us, t_us, t_end_us)) {
        char sp[512], ap[512];
        seg_str((uint64_t)t_us * 1000, p->flags, p->seq, p->len, p->ack, 1, p->win, p->opts, p->opts_len,
                p->opts_any, sp, sizeof(sp));
        seg_str(o->at, o->h.flags, seq, (uint32_t)o->h.payload_len, o->h.ack, 1, o->h.window, aopts, alen, 0,
                ap, sizeof(ap));
        if (t_end_us != t_us)
            return run_fail(
                r, PKT_FAIL, ev,
                "timing error: expected outbound packet in time range %.6f~%.6f sec but happened at "
                "%.6f sec\nscript packet: %s\nactual packet: %s",
                (double)t_us / 1e6, (double)t_end_us / 1e6, (double)at_us / 1e6, sp, ap);
        return run_fail(
            r, PKT_FAIL, ev,
            "timing error: expected outbound packet at %.6f sec but happened at %.6f sec; tolerance "
            "%.6f sec\nscript packet: %s\nactual packet: %s",
            (double)t_us / 1e6, (double)at_us / 1e6, (double)run_tolerance(r, t_us) / 1e6, sp, ap);
    }
    return 0;
}

int net_outbound(struct run *r, const struct pkt_event *ev, int64_t t_us, int64_t t_end_us)
{
    if (ev->is_icmp)
        return run_fail(r, PKT_UNSUPPORTED, ev, "outbound ICMP packets are not checked by brisk-pkt");
    uint64_t limit;
    if (ev->tkind == TIME_ANY)
        limit = r->now + r->be->any_wait_ns;
    else
        limit = (uint64_t)(t_end_us + run_tolerance(r, t_us)) * 1000 + r->be->late_search_ns;
    for (;;) {
        while (r->nout > 0) {
            struct run_frame f = r->outq[0];
            memmove(r->outq, r->outq + 1, (r->nout - 1) * sizeof(*r->outq));
            r->nout--;
            struct outseg o;
            int rc = parse_out(&f, &o);
            if (rc < 0) {
                free(f.data);
                return run_fail(r, PKT_FAIL, ev,
                                "the stack sent a malformed TCP segment (bad checksum or header)");
            }
            if (rc == 0 || !is_sut(r, &o)) {
                if (r->cfg->verbose)
                    printf("%9.6f (ignored a frame of another connection)\n", (double)f.at / 1e9);
                free(f.data);
                continue;
            }
            if (r->cfg->verbose) {
                char b[512];
                seg_str(o.at, o.h.flags, o.h.seq - local_offset(r), (uint32_t)o.h.payload_len, o.h.ack, 1,
                        o.h.window, o.opts, o.optlen, 0, b, sizeof(b));
                printf("outbound %s\n", b);
            }
            rc = check_out(r, ev, t_us, t_end_us, &o);
            free(f.data);
            return rc;
        }
        uint64_t ran_to;
        int w = r->be->wait_out(r, limit, &ran_to);
        if (w < 0)
            return -1;
        if (w == 0) {
            if (ev->tkind == TIME_ANY)
                return run_fail(r, PKT_FAIL, ev, "expected an outbound packet; none was sent");
            return run_fail(
                r, PKT_FAIL, ev,
                "timing error: expected outbound packet at %.6f sec; none was sent (the stack was run "
                "to %.6f sec)",
                (double)t_us / 1e6, (double)ran_to / 1e9);
        }
    }
}
