/*
 * icmp6.c — ICMPv6 for a host (RFC 4443): echo reply, echo requests for tools, errors with their rules and
 * rate limit; Neighbour Discovery messages go on to ndisc.c.
 *
 * Input. The parser (wire/icmp6.c) verifies the checksum over the pseudo-header (mandatory in IPv6) and
 * the type's length; a failure is Icmp6InErrors (and Icmp6InCsumErrors for the checksum). An echo request
 * to one of our unicast addresses is answered from that address with the same identifier, sequence number
 * and data (§4.2). One to a multicast group is not answered, as IPv4 ignores broadcast pings: Linux answers
 * (echo_ignore_multicast 0), but a reply per member to a forged source is an amplifier, and RFC 4443 §4.2
 * makes the reply to a multicast request a MAY. The stack's own requests carry their sending time in the
 * first 8 data bytes, so a reply gives an RTT without per-request state (as icmp.c); replies go to the
 * callback of brisk_icmp_set_echo_addr_handler.
 *
 * Errors received (§3) are counted by type and handed, with the packet they quote, to the protocol that
 * sent it (the protocol table's icmp6_error): its transport header is found by walking the quote's
 * extension headers, and at least 8 of its bytes must be there (ports and TCP's sequence number). Packet too
 * big (RFC 8201) goes the same way: TCP validates it against the connection before the path MTU is lowered
 * (RFC 5927 §4.1), as IPv4's fragmentation needed.
 *
 * Errors sent (§2.4): a parameter problem (the only error ip6_input.c raises: bad chains, unrecognised
 * options and next headers), and a transport's (UDP's port unreachable, through brisk_icmp6_send_error_l4).
 * Never about an ICMPv6 error message or a packet whose source does not name a single node (unspecified,
 * multicast), never about a packet to a multicast group or a link-layer multicast unless the caller says the
 * RFC allows it (option type bits 10, packet too big); the quote is as much of the packet as fits in 1280
 * bytes (§2.4 (c)). Rate limited by a token bucket of its own with ICMP's settings (icmp_ratelimit,
 * icmp_ratelimit_burst; §2.4 (f) asks for a limit and suggests a token bucket), so IPv4 and IPv6 errors do
 * not starve each other; suppressed ones are Icmp6OutRateLimited.
 */
#include <string.h>

#include "core/addr.h"
#include "core/tbucket.h"
#include "net/ip6.h"
#include "net/ndisc.h"
#include "net/netdev.h"
#include "wire/wire.h"

brisk_pkt *brisk_icmp6_alloc(struct brisk_net *net, size_t len)
{
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, (uint32_t)len);
    if (!pkt) {
        net->c.Ip6OutDiscards++;
        return NULL;
    }
    brisk_pkt_put(pkt, (uint32_t)len);
    return pkt;
}

/* The route of an answer to `dst` about a packet that came in on dev: a link-local or multicast dst is
 * reached on dev itself, whichever device brisk_ip6_route would pick (struct brisk_addr has no zone). */
static int answer_route(struct brisk_net *net, brisk_netdev *dev, const uint8_t dst[16], struct brisk_route *rt)
{
    if ((brisk_ipv6_is_link_local(dst) || brisk_ipv6_is_multicast(dst)) && dev->nip6) {
        rt->dev = dev;
        rt->nexthop = brisk_addr6(dst);
        uint8_t src[16];
        brisk_ip6_select_src(dev, dst, src);
        rt->src = brisk_addr6(src);
        return BRISK_OK;
    }
    if (brisk_ip6_route(net, dst, rt) != BRISK_OK) {
        net->c.Ip6OutNoRoutes++;
        return BRISK_ERR_NOROUTE;
    }
    return BRISK_OK;
}

/* Emits r into a new packet and sends it to dst along rt. */
static int send_icmp6(struct brisk_net *net, const struct brisk_route *rt, const uint8_t dst[16],
                      const struct brisk_icmp6_repr *r, uint64_t now)
{
    size_t len = brisk_icmp6_fixed_len(r->type) + r->payload_len;
    if (len + BRISK_IPV6_HLEN > rt->dev->cfg.mtu)
        return BRISK_ERR_MSGSIZE;
    brisk_pkt *pkt = brisk_icmp6_alloc(net, len);
    if (!pkt)
        return BRISK_ERR_NOBUFS;
    brisk_icmp6_emit(pkt->data, r, rt->src.u.v6, dst);
    net->c.Icmp6OutMsgs++;
    return brisk_ip6_output(net, rt, dst, BRISK_IP_PROTO_ICMPV6, 0, 0, pkt, now);
}

static void echo_reply(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                       const struct brisk_icmp6_repr *req, uint64_t now)
{
    struct brisk_route rt;
    if (answer_route(net, dev, ip->src, &rt) != BRISK_OK)
        return;
    memcpy(rt.src.u.v6, ip->dst, 16); /* from the address the request went to */
    struct brisk_icmp6_repr r = {
        .type = BRISK_ICMP6_ECHO_REPLY,
        .id = req->id,
        .seq = req->seq,
        .payload = req->payload,
        .payload_len = req->payload_len,
    };
    if (send_icmp6(net, &rt, ip->src, &r, now) == BRISK_OK)
        net->c.Icmp6OutEchoReplies++;
}

/* An error message: the packet it quotes, to the protocol that sent it (its icmp6_error handler, net.h). */
static void error_up(struct brisk_net *net, const struct brisk_icmp6_repr *r, uint32_t info, uint64_t now)
{
    struct brisk_ipv6_repr q;
    struct brisk_ipv6_ext x;
    if (brisk_ipv6_parse_quoted(r->payload, r->payload_len, &q) < 0 ||
        brisk_ipv6_ext_walk(r->payload, r->payload_len, &q, &x) < 0 || x.discard || x.proto_off > r->payload_len ||
        r->payload_len - x.proto_off < 8) {
        net->c.Icmp6InErrors++;
        return;
    }
    const struct brisk_ip_proto *tp = &net->ip_proto[x.proto];
    if (tp->ops && tp->ops->icmp6_error)
        tp->ops->icmp6_error(tp->ctx, r->type, r->code, info, &q, r->payload + x.proto_off,
                             r->payload_len - x.proto_off, now);
}

void brisk_icmp6_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                       const uint8_t *p, size_t len, uint64_t now)
{
    net->c.Icmp6InMsgs++;
    struct brisk_icmp6_repr r;
    int rc = brisk_icmp6_parse(p, len, ip->src, ip->dst, &r);
    if (rc < 0) {
        net->c.Icmp6InErrors++;
        if (rc == BRISK_WIRE_BAD_CSUM)
            net->c.Icmp6InCsumErrors++;
        return;
    }
    if (r.nd) {
        brisk_nd_input(net, dev, ip, &r, now);
        return;
    }
    switch (r.type) {
    case BRISK_ICMP6_ECHO_REQUEST:
        net->c.Icmp6InEchos++;
        if (!brisk_ipv6_is_multicast(ip->dst))
            echo_reply(net, dev, ip, &r, now);
        break;
    case BRISK_ICMP6_ECHO_REPLY: {
        net->c.Icmp6InEchoReplies++;
        if (!net->ip6.echo_fn)
            break;
        struct brisk_echo_reply_addr er = {
            .from = {.family = BRISK_AF_INET6},
            .id = r.id,
            .seq = r.seq,
            .len = (uint16_t)r.payload_len,
            .hops = ip->hop_limit,
        };
        memcpy(er.from.u.v6, ip->src, 16);
        if (r.payload_len >= 8)
            er.sent_at = ((uint64_t)brisk_get32(r.payload) << 32) | brisk_get32(r.payload + 4);
        net->ip6.echo_fn(net->ip6.echo_ctx, &er, now);
        break;
    }
    case BRISK_ICMP6_DEST_UNREACH:
        net->c.Icmp6InDestUnreachs++;
        error_up(net, &r, 0, now);
        break;
    case BRISK_ICMP6_PKT_TOO_BIG:
        net->c.Icmp6InPktTooBigs++;
        error_up(net, &r, r.mtu, now);
        break;
    case BRISK_ICMP6_TIME_EXCEEDED:
        net->c.Icmp6InTimeExcds++;
        error_up(net, &r, 0, now);
        break;
    case BRISK_ICMP6_PARAM_PROB:
        net->c.Icmp6InParmProblems++;
        error_up(net, &r, r.pointer, now);
        break;
    default: /* §2.4 (b): an unknown informational message is discarded; an unknown error goes up (none) */
        break;
    }
}

/* The error rate limit (core/tbucket.h) on this protocol's own bucket, with ICMP's settings. */
static int ratelimit_allows(struct brisk_net *net, uint64_t now)
{
    return brisk_tbucket_take(&net->ip6.tokens_ns, &net->ip6.tokens_at, net->s.icmp_ratelimit_ns,
                              net->s.icmp_ratelimit_burst, now);
}

/* Is the packet b[0, len) an ICMPv6 error message? Its headers are skipped by their lengths alone, without
 * judging their options (the packet is being refused, perhaps for those very options, and the walker stops
 * at the verdict): at most BRISK_IPV6_EXT_MAX of them, each bounds-checked. A chain that cannot be skipped
 * is not an ICMPv6 error as far as anyone can tell, and may be answered. */
static int about_icmp6_error(const uint8_t *b, size_t len, uint8_t nh)
{
    size_t off = BRISK_IPV6_HLEN;
    for (unsigned i = 0; i <= BRISK_IPV6_EXT_MAX; i++) {
        if (nh == BRISK_IP_PROTO_ICMPV6)
            return off < len && b[off] < 128;
        if (off + 8 > len)
            return 0;
        if (nh == BRISK_IP_PROTO_FRAGMENT) {
            if ((brisk_get16(b + off + 2) & 0xfff8) != 0)
                return 0; /* a later fragment: no upper-layer header in it */
            nh = b[off];
            off += 8;
        } else if (nh == BRISK_IP_PROTO_HOPOPTS || nh == BRISK_IP_PROTO_DSTOPTS ||
                   nh == BRISK_IP_PROTO_ROUTING) {
            nh = b[off];
            off += ((size_t)b[off + 1] + 1) * 8;
        } else {
            return 0;
        }
    }
    return 0;
}

void brisk_icmp6_send_error(struct brisk_net *net, brisk_netdev *dev, uint8_t type, uint8_t code, uint32_t info,
                            const uint8_t *orig, size_t orig_len, int l2_mcast, int mcast_ok, uint64_t now)
{
    struct brisk_ipv6_repr ip;
    if (brisk_ipv6_parse_quoted(orig, orig_len, &ip) < 0)
        return;
    if (brisk_ipv6_is_unspecified(ip.src) || brisk_ipv6_is_multicast(ip.src))
        return; /* §2.4 (e.4) */
    if ((brisk_ipv6_is_multicast(ip.dst) || l2_mcast) && !mcast_ok)
        return; /* §2.4 (e.2), (e.3) */
    size_t end = (size_t)BRISK_IPV6_HLEN + ip.payload_len;
    if (end > orig_len)
        end = orig_len;
    if (about_icmp6_error(orig, end, ip.next_header))
        return; /* §2.4 (e.1): never about an error message */
    if (!ratelimit_allows(net, now)) {
        net->c.Icmp6OutRateLimited++;
        return;
    }
    struct brisk_route rt;
    if (answer_route(net, dev, ip.src, &rt) != BRISK_OK)
        return;
    if (!brisk_ipv6_is_multicast(ip.dst) && brisk_netdev_ip6_is_mine(rt.dev, ip.dst))
        memcpy(rt.src.u.v6, ip.dst, 16); /* from the address the offending packet went to */
    struct brisk_icmp6_repr r = {.type = type, .code = code, .payload = orig,
                                 .payload_len = brisk_icmp6_quote_len(end)};
    if (type == BRISK_ICMP6_PARAM_PROB)
        r.pointer = info;
    else if (type == BRISK_ICMP6_PKT_TOO_BIG)
        r.mtu = info;
    if (send_icmp6(net, &rt, ip.src, &r, now) != BRISK_OK)
        return;
    if (type == BRISK_ICMP6_PARAM_PROB)
        net->c.Icmp6OutParmProblems++;
    else if (type == BRISK_ICMP6_DEST_UNREACH)
        net->c.Icmp6OutDestUnreachs++;
}

void brisk_icmp6_send_error_l4(struct brisk_net *net, uint8_t type, uint8_t code, uint32_t info,
                               const struct brisk_ipv6_repr *ip, const uint8_t *l4, size_t l4_len,
                               uint64_t now)
{
    /* ip6_input.c delivers exactly the upper-layer bytes of a packet it holds whole (reassembled ones
     * included), so they end where the packet ends and its fixed header starts 40 + payload_len bytes
     * before that end — as IPv4's transports find their header hdr_len bytes before theirs. The addresses
     * there are checked against ip, in case a caller ever breaks that promise. */
    size_t whole = (size_t)BRISK_IPV6_HLEN + ip->payload_len;
    if (whole < BRISK_IPV6_HLEN + l4_len)
        return;
    const uint8_t *orig = l4 + l4_len - whole;
    if (memcmp(orig + 8, ip->src, 16) != 0 || memcmp(orig + 24, ip->dst, 16) != 0)
        return;
    brisk_netdev *dev = NULL;
    for (uint32_t i = 0; i < net->ndevs && !dev; i++)
        if (brisk_netdev_ip6_is_mine(&net->devs[i], ip->dst))
            dev = &net->devs[i];
    for (uint32_t i = 0; i < net->ndevs && !dev; i++)
        if (net->devs[i].nip6) /* a multicast destination: refused below, but a device is needed to say so */
            dev = &net->devs[i];
    if (!dev)
        return;
    /* A unicast destination in a link-layer multicast frame is not known here (the device's flags say only
     * checksums): such packets are rare (RFC 4443 §2.4 (e.3)), and the rate limit bounds them anyway. */
    brisk_icmp6_send_error(net, dev, type, code, info, orig, whole, 0, 0, now);
}

int brisk_icmp6_echo_request(struct brisk_net *net, const uint8_t dst[16], uint16_t id, uint16_t seq,
                             uint16_t payload_len, uint64_t now)
{
    if (!net->s.ipv6)
        return BRISK_ERR_AFNOSUPPORT;
    if (brisk_ipv6_is_unspecified(dst) || brisk_ipv6_is_loopback(dst))
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(net, now);
    struct brisk_route rt;
    if (brisk_ip6_route(net, dst, &rt) != BRISK_OK) {
        net->c.Ip6OutNoRoutes++;
        return BRISK_ERR_NOROUTE;
    }
    size_t len = (size_t)BRISK_ICMP6_HLEN + payload_len;
    if (len + BRISK_IPV6_HLEN > rt.dev->cfg.mtu)
        return BRISK_ERR_MSGSIZE;
    brisk_pkt *pkt = brisk_icmp6_alloc(net, len);
    if (!pkt)
        return BRISK_ERR_NOBUFS;
    uint8_t *data = pkt->data + BRISK_ICMP6_HLEN;
    for (size_t i = 0; i < payload_len; i++) /* ping's pattern, as icmp.c's ramp */
        data[i] = (uint8_t)i;
    if (payload_len >= 8) {
        brisk_put32(data, (uint32_t)(now >> 32));
        brisk_put32(data + 4, (uint32_t)now);
    }
    struct brisk_icmp6_repr r = {
        .type = BRISK_ICMP6_ECHO_REQUEST, .id = id, .seq = seq, .payload = data, .payload_len = payload_len};
    brisk_icmp6_emit(pkt->data, &r, rt.src.u.v6, dst);
    net->c.Icmp6OutMsgs++;
    net->c.Icmp6OutEchos++;
    return brisk_ip6_output(net, &rt, dst, BRISK_IP_PROTO_ICMPV6, 0, 0, pkt, now);
}
