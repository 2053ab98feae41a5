/*
 * icmp_err.c — what TCP does with an ICMP error about a segment it sent (RFC 1122 §4.2.3.9, RFC 5927).
 *
 * src/net/icmp.c hands over destination unreachable, time exceeded and parameter problem messages whose
 * quoted datagram is TCP, and src/net/icmp6.c the same ICMPv6 errors (RFC 4443 §3) and packet too big. brisk_tcp_icmp_error() first checks that the quote names one of our connections —
 * its 4-tuple (addresses and ports) and a sequence number in SND.UNA..SND.NXT, the bytes we have in flight
 * (RFC 5927 §4.1; Linux tcp_v4_err's `between(seq, snd_una, snd_nxt)`) — so that a blind attacker has to
 * guess the window as it would for a RST; anything else is counted (IcmpInErrors: no such connection,
 * OutOfWindowIcmps: a sequence number outside the window) and dropped. TIME-WAIT ignores errors.
 *
 * Then the error becomes a BRISK_ERR_* code, the errno Linux reports for it (icmp_err_convert: port
 * unreachable ECONNREFUSED, protocol unreachable ENOPROTOOPT, net unreachable ENETUNREACH, host unreachable
 * and time exceeded EHOSTUNREACH, parameter problem EPROTO, ...), and what it does depends on the state:
 *
 *   opening (SYN-SENT, or SYN-RECEIVED of a simultaneous open): under tcp_syn_icmp_errors=rfc1122 (brisk's
 *     default) a hard error — protocol or port unreachable, RFC 1122 §4.2.3.9 "codes 2-4" — fails the
 *     connect with its error, and a soft one (every other code, time exceeded, parameter problem) is kept:
 *     RFC 1122 says TCP MUST NOT abort on it, because a route that is failing now may work by the next SYN.
 *     Under "linux" (every linux-* profile) every error fails the connect at once (tcp_v4_err's SYN_SENT
 *     case; RFC 5461 describes this widespread practice).
 *   half-open child of a listener (SYN-RECEIVED): the quote must be our SYN-ACK itself (sequence number =
 *     ISS). rfc1122: a hard error drops the child. linux: net or host unreachable, time exceeded and
 *     parameter problem drop it, other codes are ignored (tcp_req_err: "POSIX does not want network errors
 *     returned from accept()"). The child dies silently; the listener never saw it.
 *   synchronized states: every error is soft, in every profile — RFC 5927 §7 recommends treating even hard
 *     errors as soft once connected (an ICMP port unreachable is the cheapest blind reset there is), and
 *     Linux does the same (without IP_RECVERR).
 *
 * A kept (soft) error is reported only if the connection later times out — in place of BRISK_ERR_TIMEDOUT
 * (tcp_timeout_error; Linux's tcp_write_err reports sk_err_soft) — and is forgotten as soon as the peer
 * sends a segment again (Linux clears sk_err_soft on an ACK). Redirects and source quench never reach TCP.
 *
 * ICMPv6's errors mean what Linux's icmpv6_err_convert says (no route ENETUNREACH, port unreachable
 * ECONNREFUSED and hard, administratively prohibited / policy / reject route "fatal" to a half-open child,
 * time exceeded EHOSTUNREACH, parameter problem EPROTO, an unrecognised Next Header hard as IPv4's protocol
 * unreachable); the state rules are the same.
 *
 * Fragmentation needed (RFC 1191) and IPv6's packet too big (RFC 8201) are path MTU discovery, in any state but LISTEN and CLOSED (Linux's
 * tcp_v4_err / tcp_v4_mtu_reduced; a half-open child ignores it, as tcp_req_err does): once validated as
 * above, the destination's path MTU is lowered (net/pmtu.c) and, if that shrinks the connection's MSS, every
 * segment in flight is taken as lost — the router dropped them all — and goes again at the new size, without
 * a congestion response (Linux's tcp_simple_retransmit: the units changed, not the load). A report below
 * route_min_pmtu also keeps a soft EMSGSIZE: if the path is smaller than the floor, the connection will time
 * out with that error.
 */
#include "tcp/tcp.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/wire.h"

/* What an ICMP or ICMPv6 error means to TCP, whichever family brought it. */
struct verdict {
    int err;             /* the BRISK_ERR_* it reports; 0: TCP does not act on it */
    uint8_t hard;        /* RFC 1122 §4.2.3.9's hard errors (protocol or port unreachable) */
    uint8_t linux_child; /* what Linux's tcp_req_err drops a half-open child for */
    uint8_t mtu;         /* fragmentation needed / packet too big: path MTU discovery, not an error */
};

/* IPv4 (RFC 792, RFC 1812; Linux icmp_err_convert). */
static struct verdict verdict4(uint8_t type, uint8_t code)
{
    static const int unreach[16] = {
        BRISK_ERR_NETUNREACH,  /* 0 net unreachable */
        BRISK_ERR_UNREACH,     /* 1 host unreachable */
        BRISK_ERR_NOPROTOOPT,  /* 2 protocol unreachable */
        BRISK_ERR_CONNREFUSED, /* 3 port unreachable */
        0,                     /* 4 fragmentation needed: path MTU discovery, not an error */
        BRISK_ERR_OPNOTSUPP,   /* 5 source route failed */
        BRISK_ERR_NETUNREACH,  /* 6 destination network unknown */
        BRISK_ERR_HOSTDOWN,    /* 7 destination host unknown */
        BRISK_ERR_NONET,       /* 8 source host isolated */
        BRISK_ERR_NETUNREACH,  /* 9 network administratively prohibited */
        BRISK_ERR_UNREACH,     /* 10 host administratively prohibited */
        BRISK_ERR_NETUNREACH,  /* 11 network unreachable for TOS */
        BRISK_ERR_UNREACH,     /* 12 host unreachable for TOS */
        BRISK_ERR_UNREACH,     /* 13 communication administratively prohibited (RFC 1812) */
        BRISK_ERR_UNREACH,     /* 14 host precedence violation */
        BRISK_ERR_UNREACH,     /* 15 precedence cutoff in effect */
    };
    struct verdict v = {0};
    switch (type) {
    case BRISK_ICMP_DEST_UNREACH:
        v.mtu = code == 4;
        v.err = code < 16 ? unreach[code] : 0;
        v.hard = code == BRISK_ICMP_UNREACH_PROTO || code == BRISK_ICMP_UNREACH_PORT;
        v.linux_child = code == BRISK_ICMP_UNREACH_NET || code == BRISK_ICMP_UNREACH_HOST;
        break;
    case BRISK_ICMP_TIME_EXCEEDED:
        v.err = BRISK_ERR_UNREACH;
        v.linux_child = 1;
        break;
    case BRISK_ICMP_PARAM_PROB:
        v.err = BRISK_ERR_PROTO;
        v.linux_child = 1;
        break;
    }
    return v;
}

/* IPv6 (RFC 4443 §3; Linux icmpv6_err_convert, whose "fatal" errors are the ones tcp_req_err drops a child
 * for, and RFC 1122's hard errors carried over: port unreachable, and an unrecognised Next Header — IPv6's
 * protocol unreachable). */
static struct verdict verdict6(uint8_t type, uint8_t code)
{
    struct verdict v = {0};
    switch (type) {
    case BRISK_ICMP6_DEST_UNREACH:
        switch (code) {
        case BRISK_ICMP6_UNREACH_NOROUTE:
            v.err = BRISK_ERR_NETUNREACH;
            break;
        case BRISK_ICMP6_UNREACH_PORT:
            v.err = BRISK_ERR_CONNREFUSED;
            v.hard = v.linux_child = 1;
            break;
        case BRISK_ICMP6_UNREACH_ADMIN:
        case BRISK_ICMP6_UNREACH_POLICY:
        case BRISK_ICMP6_UNREACH_REJECT:
            v.err = BRISK_ERR_UNREACH; /* Linux: EACCES, fatal */
            v.linux_child = 1;
            break;
        case BRISK_ICMP6_UNREACH_SCOPE:
        case BRISK_ICMP6_UNREACH_ADDR:
            v.err = BRISK_ERR_UNREACH;
            break;
        }
        break;
    case BRISK_ICMP6_PKT_TOO_BIG:
        v.mtu = 1;
        break;
    case BRISK_ICMP6_TIME_EXCEEDED:
        v.err = BRISK_ERR_UNREACH;
        break;
    case BRISK_ICMP6_PARAM_PROB:
        v.err = BRISK_ERR_PROTO;
        v.hard = code == BRISK_IPV6_PP_NEXTHDR;
        v.linux_child = 1;
        break;
    }
    return v;
}

static void keep_soft(brisk_sock *c, int err)
{
    c->soft.err = err;
    c->soft.segs_in = c->stat.segs_in;
}

int tcp_timeout_error(const brisk_sock *c)
{
    if (c->soft.err && c->soft.segs_in == c->stat.segs_in)
        return c->soft.err;
    return BRISK_ERR_TIMEDOUT;
}

/* Fragmentation needed: the path MTU to the peer is `mtu` (RFC 1191), the message already validated. */
static void mtu_reduced(brisk_sock *c, uint32_t mtu, uint64_t now)
{
    if (c->state == BRISK_TCP_LISTEN || c->state == BRISK_TCP_CLOSED || !c->rt.dev)
        return;
    int below_min;
    brisk_pmtu_update(c->net, &c->id.raddr, mtu, c->rt.dev->cfg.mtu, &below_min, now);
    if (below_min)
        keep_soft(c, BRISK_ERR_MSGSIZE);
    if (!c->mss_full)
        return; /* the handshake is not done: the MSS it agrees on reads the path MTU (tcp_snd_mss) */
    uint32_t old = c->mss_full;
    c->mss_full = tcp_snd_mss(c);
    if (c->mss_full >= old)
        return;
    tcp_sync_mss(c);
    tcp_simple_retransmit(c, now);
}

/* An error about the segment whose first 8 bytes are th, sent on the 4-tuple id (laddr ours). */
static void tuple_error(struct brisk_net *net, const struct brisk_tuple *id, const uint8_t *th, struct verdict v,
                        uint32_t info, uint64_t now)
{
    uint32_t seq = brisk_get32(th + 4);
    brisk_sock *c = tcp_conn_lookup(net, id);
    if (!c) {
        if (tcp_tw_lookup(net, id))
            return;            /* TIME-WAIT, as a record: ignored as below */
        if (id->laddr.family == BRISK_AF_INET6)
            net->c.Icmp6InErrors++; /* as Linux counts ICMP6_MIB_INERRORS for an error matching no socket */
        else
            net->c.IcmpInErrors++; /* as Linux counts ICMP_MIB_INERRORS for an error matching no socket */
        return;
    }
    if (c->state == BRISK_TCP_TIME_WAIT)
        return;
    int child = c->state == BRISK_TCP_SYN_RECEIVED && c->listener;
    /* Only the bytes in flight could have drawn the error (a child's: its SYN-ACK alone). */
    if (child ? seq != c->snd.iss : !brisk_seq_leq(c->snd.una, seq) || !brisk_seq_leq(seq, c->snd.max)) {
        net->c.OutOfWindowIcmps++;
        return;
    }
    if (v.mtu) {
        if (!child)
            mtu_reduced(c, info, now);
        return;
    }
    if (!v.err)
        return;
    int linux_rule = net->s.tcp_syn_icmp_errors == TCP_SYN_ICMP_LINUX;
    if (child) {
        if (linux_rule ? v.linux_child : v.hard)
            tcp_conn_fail(c, v.err, now); /* no application to tell: the child is freed with its listener's
                                             count of half-open connections */
        return;
    }
    if (c->state == BRISK_TCP_SYN_SENT || c->state == BRISK_TCP_SYN_RECEIVED) {
        if (linux_rule || v.hard) {
            tcp_conn_fail(c, v.err, now); /* connect fails with the error; nothing is sent */
            return;
        }
    }
    keep_soft(c, v.err);
}

void brisk_tcp_icmp_error(void *ctx, uint8_t type, uint8_t code, uint32_t info, const struct brisk_ipv4_repr *quoted,
                          const uint8_t *th, size_t len, uint64_t now)
{
    if (len < 8) /* ports and sequence number: RFC 792's 64 bits (the caller checked) */
        return;
    /* The quote is a datagram we sent: its source is our end of the connection. */
    struct brisk_tuple id = {.laddr = brisk_addr4(quoted->src),
                             .raddr = brisk_addr4(quoted->dst),
                             .lport = brisk_get16(th),
                             .rport = brisk_get16(th + 2)};
    tuple_error(((struct brisk_tcp *)ctx)->net, &id, th, verdict4(type, code), info, now);
}

void brisk_tcp_icmp6_error(void *ctx, uint8_t type, uint8_t code, uint32_t info,
                           const struct brisk_ipv6_repr *quoted, const uint8_t *th, size_t len, uint64_t now)
{
    if (len < 8)
        return;
    struct brisk_tuple id = {.laddr = brisk_addr6(quoted->src),
                             .raddr = brisk_addr6(quoted->dst),
                             .lport = brisk_get16(th),
                             .rport = brisk_get16(th + 2)};
    tuple_error(((struct brisk_tcp *)ctx)->net, &id, th, verdict6(type, code), info, now);
}
