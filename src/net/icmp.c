/*
 * icmp.c — ICMP for a host (RFC 792, RFC 1122 §3.2.2): echo reply, echo requests for tools, errors.
 *
 * Echo. A request addressed to us is answered from the address it was sent to, with the same identifier,
 * sequence number and data (RFC 1122 §3.2.2.6). Requests to a broadcast address are ignored, as Linux does by
 * default (icmp_echo_ignore_broadcasts): answering them turns a host into a smurf amplifier. The stack's own
 * requests (brisk_icmp_echo_send) carry the sending time in their first 8 data bytes, so a reply yields an
 * RTT without any per-request state; replies go to the callback registered with brisk_icmp_set_echo_handler.
 *
 * Errors. brisk_icmp_send_error() quotes the offending datagram's header and as much of its data as fits in a
 * 576-byte message (RFC 1812 §4.3.2.3; RFC 1122 asks for at least 8 bytes) and never answers an ICMP error,
 * a broadcast or a non-initial fragment (RFC 1122 §3.2.2). Errors are rate limited by a token bucket — one
 * token per icmp_ratelimit, icmp_ratelimit_burst deep — so a stream of bad packets cannot make the stack a
 * reflector. Suppressed errors are counted (IcmpOutRateLimited).
 *
 * Errors received. Destination unreachable, time exceeded and parameter problem quote the datagram that
 * caused them (RFC 792: its IP header and at least 8 bytes after it); when that datagram is TCP, the quote
 * goes to TCP's error handler (src/tcp/icmp_err.c), which checks it against the connection it names and
 * decides (RFC 1122 §4.2.3.9, RFC 5927). A quote too short to hold the ports and sequence number is a
 * malformed message (IcmpInErrors).
 */
#include <string.h>

#include "core/tbucket.h"
#include "net/ip.h"
#include "net/netdev.h"
#include "wire/icmp.h"
#include "wire/wire.h"

#define ICMP_ERR_MAX 576u /* the largest error datagram, IP header included */

/* Routes an ICMP message of `len` bytes to dst and allocates its buffer, sized and filled to `len`. */
static brisk_pkt *icmp_alloc(struct brisk_net *net, uint32_t dst, uint32_t src, size_t len,
                             struct brisk_route *rt, int *err)
{
    if (brisk_ip_route(net, dst, rt) != BRISK_OK) {
        net->c.IpOutNoRoutes++;
        *err = BRISK_ERR_NOROUTE;
        return NULL;
    }
    if (src && brisk_netdev_is_local(net, src))
        rt->src.u.v4 = src;
    if (len + BRISK_IPV4_HLEN > rt->dev->cfg.mtu) {
        *err = BRISK_ERR_MSGSIZE;
        return NULL;
    }
    brisk_pkt *pkt = brisk_pkt_alloc(&net->pool, (uint32_t)len);
    if (!pkt) {
        net->c.IpOutDiscards++;
        *err = BRISK_ERR_NOBUFS;
        return NULL;
    }
    brisk_pkt_put(pkt, (uint32_t)len);
    return pkt;
}

static int send_icmp(struct brisk_net *net, uint32_t dst, uint32_t src, const struct brisk_icmp_repr *r,
                     uint64_t now)
{
    struct brisk_route rt;
    int err;
    brisk_pkt *pkt = icmp_alloc(net, dst, src, BRISK_ICMP_HLEN + r->payload_len, &rt, &err);
    if (!pkt)
        return err;
    brisk_icmp_emit(pkt->data, r);
    net->c.IcmpOutMsgs++;
    return brisk_ip_output(net, &rt, dst, BRISK_IP_PROTO_ICMP, 0, pkt, now);
}

static void echo_reply(struct brisk_net *net, const struct brisk_ipv4_repr *ip,
                       const struct brisk_icmp_repr *req, uint64_t now)
{
    struct brisk_icmp_repr r = {
        .type = BRISK_ICMP_ECHO_REPLY,
        .id = req->id,
        .seq = req->seq,
        .payload = req->payload,
        .payload_len = req->payload_len,
    };
    if (send_icmp(net, ip->src, ip->dst, &r, now) == BRISK_OK)
        net->c.IcmpOutEchoReps++;
}

/* An error message: the datagram it quotes, to the protocol that sent it (its icmp_error handler, net.h). */
static void error_input(struct brisk_net *net, const struct brisk_icmp_repr *r, uint64_t now)
{
    struct brisk_ipv4_repr q;
    int hl = brisk_ipv4_parse_quoted(r->payload, r->payload_len, &q);
    if (hl < 0) {
        net->c.IcmpInErrors++;
        return;
    }
    const struct brisk_ip_proto *tp = &net->ip_proto[q.proto];
    if (tp->ops && tp->ops->icmp_error)
        tp->ops->icmp_error(tp->ctx, r->type, r->code, r->next_hop_mtu, &q, r->payload + hl,
                            r->payload_len - (size_t)hl, now);
}

void brisk_icmp_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv4_repr *ip,
                      const uint8_t *p, size_t len, int bcast, uint64_t now)
{
    (void)dev;
    net->c.IcmpInMsgs++;
    struct brisk_icmp_repr r;
    if (brisk_icmp_parse(p, len, &r) < 0) {
        net->c.IcmpInErrors++;
        return;
    }
    switch (r.type) {
    case BRISK_ICMP_ECHO:
        net->c.IcmpInEchos++;
        if (!bcast)
            echo_reply(net, ip, &r, now);
        break;
    case BRISK_ICMP_ECHO_REPLY: {
        net->c.IcmpInEchoReps++;
        if (net->ip6.echo_fn) { /* the callback of either family (brisk_icmp_set_echo_addr_handler) */
            struct brisk_echo_reply_addr ea = {.from = brisk_addr_v4(ip->src), .id = r.id, .seq = r.seq,
                                               .len = (uint16_t)r.payload_len, .hops = ip->ttl};
            if (r.payload_len >= 8)
                ea.sent_at = ((uint64_t)brisk_get32(r.payload) << 32) | brisk_get32(r.payload + 4);
            net->ip6.echo_fn(net->ip6.echo_ctx, &ea, now);
        }
        if (!net->icmp.echo_fn)
            break;
        struct brisk_echo_reply er = {
            .from = ip->src,
            .id = r.id,
            .seq = r.seq,
            .len = (uint16_t)r.payload_len,
            .ttl = ip->ttl,
        };
        if (r.payload_len >= 8)
            er.sent_at = ((uint64_t)brisk_get32(r.payload) << 32) | brisk_get32(r.payload + 4);
        net->icmp.echo_fn(net->icmp.echo_ctx, &er, now);
        break;
    }
    case BRISK_ICMP_DEST_UNREACH:
        net->c.IcmpInDestUnreachs++;
        error_input(net, &r, now);
        break;
    case BRISK_ICMP_TIME_EXCEEDED:
        net->c.IcmpInTimeExcds++;
        error_input(net, &r, now);
        break;
    case BRISK_ICMP_PARAM_PROB:
        net->c.IcmpInParmProbs++;
        error_input(net, &r, now);
        break;
    default:
        break;
    }
}

/* The error rate limit (core/tbucket.h) on this protocol's own bucket, with ICMP's settings. */
static int ratelimit_allows(struct brisk_net *net, uint64_t now)
{
    return brisk_tbucket_take(&net->icmp.tokens_ns, &net->icmp.tokens_at, net->s.icmp_ratelimit_ns,
                              net->s.icmp_ratelimit_burst, now);
}

static int is_icmp_error(uint8_t type)
{
    return type == BRISK_ICMP_DEST_UNREACH || type == BRISK_ICMP_TIME_EXCEEDED || type == 4 /* quench */ ||
           type == 5 /* redirect */ || type == 12 /* parameter problem */;
}

void brisk_icmp_send_error(struct brisk_net *net, uint8_t type, uint8_t code, const uint8_t *orig,
                           size_t orig_len, uint64_t now)
{
    struct brisk_ipv4_repr ip;
    int hl = brisk_ipv4_parse(orig, orig_len, &ip);
    if (hl < 0 || ip.frag_off != 0)
        return;
    if (ip.proto == BRISK_IP_PROTO_ICMP && (orig_len <= (size_t)hl || is_icmp_error(orig[hl])))
        return;
    if (ip.src == 0 || ip.src == 0xffffffffu || brisk_ipv4_is_multicast(ip.src) ||
        brisk_ipv4_is_multicast(ip.dst))
        return;
    if (!ratelimit_allows(net, now)) {
        net->c.IcmpOutRateLimited++;
        return;
    }
    size_t quote = ip.total_len < orig_len ? ip.total_len : orig_len;
    if (quote > ICMP_ERR_MAX - BRISK_IPV4_HLEN - BRISK_ICMP_HLEN)
        quote = ICMP_ERR_MAX - BRISK_IPV4_HLEN - BRISK_ICMP_HLEN;
    struct brisk_icmp_repr r = {.type = type, .code = code, .payload = orig, .payload_len = quote};
    if (send_icmp(net, ip.src, ip.dst, &r, now) == BRISK_OK) {
        if (type == BRISK_ICMP_DEST_UNREACH)
            net->c.IcmpOutDestUnreachs++;
        else if (type == BRISK_ICMP_TIME_EXCEEDED)
            net->c.IcmpOutTimeExcds++;
    }
}

void brisk_icmp_echo_handler(struct brisk_net *net, brisk_echo_fn fn, void *ctx)
{
    if (!net)
        return;
    net->icmp.echo_fn = fn;
    net->icmp.echo_ctx = ctx;
}

/* The echo payload's bytes: 0, 1, ... 255, repeated (as ping's pattern), copied a table at a time. */
static const uint8_t ramp[256] = {
    0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18,  19,
    20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,
    40,  41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,  59,
    60,  61,  62,  63,  64,  65,  66,  67,  68,  69,  70,  71,  72,  73,  74,  75,  76,  77,  78,  79,
    80,  81,  82,  83,  84,  85,  86,  87,  88,  89,  90,  91,  92,  93,  94,  95,  96,  97,  98,  99,
    100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119,
    120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139,
    140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159,
    160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179,
    180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199,
    200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219,
    220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239,
    240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
};

int brisk_icmp_echo_request(struct brisk_net *net, uint32_t dst, uint16_t id, uint16_t seq,
                            uint16_t payload_len, uint64_t now)
{
    if (!net || dst == 0)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(net, now);
    struct brisk_route rt;
    int err;
    brisk_pkt *pkt = icmp_alloc(net, dst, 0, (size_t)BRISK_ICMP_HLEN + payload_len, &rt, &err);
    if (!pkt)
        return err;
    uint8_t *b = pkt->data;
    uint8_t *data = b + BRISK_ICMP_HLEN;
    for (size_t i = 0; i < payload_len; i += sizeof ramp)
        memcpy(data + i, ramp, payload_len - i < sizeof ramp ? payload_len - i : sizeof ramp);
    if (payload_len >= 8) {
        brisk_put32(data, (uint32_t)(now >> 32));
        brisk_put32(data + 4, (uint32_t)now);
    }
    struct brisk_icmp_repr r = {
        .type = BRISK_ICMP_ECHO, .id = id, .seq = seq, .payload = data, .payload_len = payload_len};
    brisk_icmp_emit(b, &r);
    net->c.IcmpOutMsgs++;
    net->c.IcmpOutEchos++;
    return brisk_ip_output(net, &rt, dst, BRISK_IP_PROTO_ICMP, 0, pkt, now);
}
