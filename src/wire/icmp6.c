/*
 * icmp6.c — ICMPv6 message parse and emit (RFC 4443), Neighbour Discovery messages and options (RFC 4861
 * §4, with the validity rules of §6.1.1, §6.1.2, §7.1.1, §7.1.2 and §8.1 that need no state).
 *
 * Every ICMPv6 message is type, code, checksum and a body (RFC 4443 §2.1). The checksum is mandatory and
 * covers the IPv6 pseudo-header (RFC 8200 §8.1, next header 58) and the whole message (RFC 4443 §2.3), so
 * the parser takes the addresses and checks it before it believes a single field. Each type has a fixed
 * part, then a variable one that the repr returns as a payload slice:
 *   - errors (types 0..127, RFC 4443 §3): 4 more bytes — unused, the MTU of packet too big (§3.2), the
 *     pointer of parameter problem (§3.4) — then as much of the invoking packet as fits in 1280 bytes
 *     (§2.4 (c)), which brisk_ipv6_parse_quoted and brisk_ipv6_ext_walk read. An unknown error type has
 *     the same shape (§2.4 (a): it still goes to the upper layer that sent the packet);
 *   - echo request / reply (§4): identifier, sequence number, data;
 *   - ND (RFC 4861 §4.1-4.5): router solicitation (4 reserved), router advertisement (cur hop limit, the
 *     M and O flags, router lifetime, reachable time, retrans timer), neighbour solicitation (4 reserved,
 *     target), neighbour advertisement (R, S, O flags, target), redirect (4 reserved, target, destination),
 *     each followed by options;
 *   - any other informational type (MLD, ...): the 4-byte header, the rest as payload.
 *
 * ND options are type, length in units of 8 bytes (type and length included), data (§4.6). A length of 0
 * invalidates the whole message (§4.6: "Nodes MUST silently discard an ND packet that contains an option
 * with length zero"), as does one running past the message; both are BRISK_WIRE_BAD_ND. Unknown option
 * types are skipped (§4.6). A known option of the wrong length (a link-layer address option that is not
 * an Ethernet one, a short prefix option) is ignored and counted: it cannot be read as what it claims,
 * and dropping the message for it would drop a neighbour's other, good, information. Of the single
 * options (link-layer addresses, MTU, redirected header) the first counts, as in Linux.
 *
 * Validity rules a parser can check (BRISK_WIRE_BAD_ND) are checked here, since they need only the
 * message and its addresses; the IP hop limit of 255, which proves the sender is on-link, is not in what
 * the parser sees: r->nd tells the caller to check it. RFC 4861's ICMP length minimums — 8 (RS), 16 (RA),
 * 24 (NS, NA), 40 (redirect) — are the fixed parts: a shorter message is BRISK_WIRE_TRUNCATED, like any
 * message shorter than its type's fixed part.
 *
 * brisk_icmp6_emit moves the payload first and writes the header after, so an echo reply is built in place
 * over the request (RFC 4443 §4.2: the reply carries the request's data), and an error over an invoking
 * packet already copied after the header.
 */
#include "wire/icmp6.h"

#include <string.h>

#include "wire/csum.h"
#include "wire/wire.h"

#define NA_FLAG_R 0x80
#define NA_FLAG_S 0x40
#define NA_FLAG_O 0x20
#define RA_FLAG_M 0x80
#define RA_FLAG_O 0x40
#define PI_FLAG_L 0x80
#define PI_FLAG_A 0x40

static int is_nd(uint8_t type)
{
    return type >= BRISK_ICMP6_ND_RS && type <= BRISK_ICMP6_ND_REDIRECT;
}

size_t brisk_icmp6_fixed_len(uint8_t type)
{
    switch (type) {
    case BRISK_ICMP6_ECHO_REQUEST:
    case BRISK_ICMP6_ECHO_REPLY:
    case BRISK_ICMP6_ND_RS:
        return 8;
    case BRISK_ICMP6_ND_RA:
        return 16;
    case BRISK_ICMP6_ND_NS:
    case BRISK_ICMP6_ND_NA:
        return 24;
    case BRISK_ICMP6_ND_REDIRECT:
        return 40;
    default:
        return type < 128 ? BRISK_ICMP6_HLEN : 4;
    }
}

static uint8_t sat_inc(uint8_t v)
{
    return v == 255 ? v : (uint8_t)(v + 1);
}

int brisk_nd_opt_next(const uint8_t *opts, size_t len, size_t *pos, struct brisk_nd_opt *o)
{
    size_t i = *pos;
    if (i >= len)
        return 0;
    if (len - i < 2)
        return BRISK_WIRE_BAD_ND; /* a type byte without its length */
    size_t olen = (size_t)opts[i + 1] * 8;
    if (olen == 0 || olen > len - i)
        return BRISK_WIRE_BAD_ND;
    o->type = opts[i];
    o->data = opts + i;
    o->len = olen;
    *pos = i + olen;
    return 1;
}

int brisk_nd_opt_prefix(const struct brisk_nd_opt *o, struct brisk_nd_prefix *p)
{
    if (o->type != BRISK_ND_OPT_PREFIX || o->len != BRISK_ND_OPT_PREFIX_LEN || o->data[2] > 128)
        return BRISK_WIRE_BAD_OPTION;
    const uint8_t *d = o->data;
    p->prefix_len = d[2];
    p->onlink = (d[3] & PI_FLAG_L) != 0;
    p->autonomous = (d[3] & PI_FLAG_A) != 0;
    p->valid_lifetime = brisk_get32(d + 4);
    p->preferred_lifetime = brisk_get32(d + 8);
    memcpy(p->prefix, d + 16, 16);
    return 0;
}

/* Walks the options of an ND message into r->opts. Returns 0 or BRISK_WIRE_BAD_ND. */
static int read_options(struct brisk_icmp6_repr *r)
{
    struct brisk_nd_opts *n = &r->opts;
    struct brisk_nd_opt o;
    size_t pos = 0;
    int rc;
    while ((rc = brisk_nd_opt_next(r->payload, r->payload_len, &pos, &o)) > 0) {
        switch (o.type) {
        case BRISK_ND_OPT_SLLA:
        case BRISK_ND_OPT_TLLA: {
            if (o.len != BRISK_ND_OPT_LLA_LEN) {
                n->bad = sat_inc(n->bad);
                break;
            }
            uint8_t *have = o.type == BRISK_ND_OPT_SLLA ? &n->have_sll : &n->have_tll;
            if (!*have) {
                *have = 1;
                memcpy(o.type == BRISK_ND_OPT_SLLA ? n->sll : n->tll, o.data + 2, 6);
            }
            break;
        }
        case BRISK_ND_OPT_PREFIX: {
            struct brisk_nd_prefix p;
            if (brisk_nd_opt_prefix(&o, &p) != 0)
                n->bad = sat_inc(n->bad);
            else
                n->nprefix = sat_inc(n->nprefix);
            break;
        }
        case BRISK_ND_OPT_MTU:
            if (o.len != BRISK_ND_OPT_MTU_LEN) {
                n->bad = sat_inc(n->bad);
            } else if (!n->have_mtu) {
                n->have_mtu = 1;
                n->mtu = brisk_get32(o.data + 4);
            }
            break;
        case BRISK_ND_OPT_REDIR:
            /* 2 bytes of type and length, 6 reserved, then the packet (§4.6.3); length >= 1 holds them. */
            if (!n->have_redir) {
                n->have_redir = 1;
                n->redir = o.data + 8;
                n->redir_len = o.len - 8;
            }
            break;
        default:
            break; /* unknown: skipped (§4.6) */
        }
    }
    return rc;
}

/* The fixed fields of an ND message, then the rules of RFC 4861 that need no state. */
static int read_nd(const uint8_t *b, const uint8_t src[16], const uint8_t dst[16], struct brisk_icmp6_repr *r)
{
    r->nd = 1;
    if (r->code != 0)
        return BRISK_WIRE_BAD_ND;
    switch (r->type) {
    case BRISK_ICMP6_ND_RA:
        r->ra_hop_limit = b[4];
        r->ra_flags = b[5];
        r->ra_managed = (b[5] & RA_FLAG_M) != 0;
        r->ra_other = (b[5] & RA_FLAG_O) != 0;
        r->ra_lifetime = brisk_get16(b + 6);
        r->ra_reachable = brisk_get32(b + 8);
        r->ra_retrans = brisk_get32(b + 12);
        break;
    case BRISK_ICMP6_ND_NA:
        r->na_router = (b[4] & NA_FLAG_R) != 0;
        r->na_solicited = (b[4] & NA_FLAG_S) != 0;
        r->na_override = (b[4] & NA_FLAG_O) != 0;
        memcpy(r->target, b + 8, 16);
        break;
    case BRISK_ICMP6_ND_NS:
        memcpy(r->target, b + 8, 16);
        break;
    case BRISK_ICMP6_ND_REDIRECT:
        memcpy(r->target, b + 8, 16);
        memcpy(r->dest, b + 24, 16);
        break;
    default: /* RS: reserved only */
        break;
    }
    int rc = read_options(r);
    if (rc < 0)
        return rc;

    int src_unspec = brisk_ipv6_is_unspecified(src);
    switch (r->type) {
    case BRISK_ICMP6_ND_RS: /* §6.1.1 */
        if (src_unspec && r->opts.have_sll)
            return BRISK_WIRE_BAD_ND;
        break;
    case BRISK_ICMP6_ND_RA: /* §6.1.2 */
        if (!brisk_ipv6_is_link_local(src))
            return BRISK_WIRE_BAD_ND;
        break;
    case BRISK_ICMP6_ND_NS: /* §7.1.1 */
        if (brisk_ipv6_is_multicast(r->target))
            return BRISK_WIRE_BAD_ND;
        if (src_unspec && (!brisk_ipv6_is_solicited_node(dst) || r->opts.have_sll))
            return BRISK_WIRE_BAD_ND;
        break;
    case BRISK_ICMP6_ND_NA: /* §7.1.2 */
        if (brisk_ipv6_is_multicast(r->target))
            return BRISK_WIRE_BAD_ND;
        if (brisk_ipv6_is_multicast(dst) && r->na_solicited)
            return BRISK_WIRE_BAD_ND;
        break;
    default: /* redirect, §8.1 */
        if (!brisk_ipv6_is_link_local(src) || brisk_ipv6_is_multicast(r->dest))
            return BRISK_WIRE_BAD_ND;
        if (!brisk_ipv6_is_link_local(r->target) && memcmp(r->target, r->dest, 16) != 0)
            return BRISK_WIRE_BAD_ND;
        break;
    }
    return 0;
}

int brisk_icmp6_parse(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                      struct brisk_icmp6_repr *r)
{
    if (len < 4)
        return BRISK_WIRE_TRUNCATED;
    uint32_t sum = brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_ICMPV6, (uint32_t)len);
    if (brisk_csum_fold(brisk_csum_add(sum, b, len)) != 0)
        return BRISK_WIRE_BAD_CSUM;
    size_t fixed = brisk_icmp6_fixed_len(b[0]);
    if (len < fixed)
        return BRISK_WIRE_TRUNCATED;
    memset(r, 0, sizeof *r);
    r->type = b[0];
    r->code = b[1];
    r->payload = b + fixed;
    r->payload_len = len - fixed;
    switch (r->type) {
    case BRISK_ICMP6_PKT_TOO_BIG:
        r->mtu = brisk_get32(b + 4);
        break;
    case BRISK_ICMP6_PARAM_PROB:
        r->pointer = brisk_get32(b + 4);
        break;
    case BRISK_ICMP6_ECHO_REQUEST:
    case BRISK_ICMP6_ECHO_REPLY:
        r->id = brisk_get16(b + 4);
        r->seq = brisk_get16(b + 6);
        break;
    default:
        if (is_nd(r->type)) {
            int rc = read_nd(b, src, dst, r);
            if (rc < 0)
                return rc;
        }
        break;
    }
    return (int)fixed;
}

size_t brisk_icmp6_emit(uint8_t *b, const struct brisk_icmp6_repr *r, const uint8_t src[16],
                        const uint8_t dst[16])
{
    size_t fixed = brisk_icmp6_fixed_len(r->type);
    if (r->payload_len > 0 && r->payload != b + fixed)
        memmove(b + fixed, r->payload, r->payload_len);
    memset(b, 0, fixed);
    b[0] = r->type;
    b[1] = r->code;
    switch (r->type) {
    case BRISK_ICMP6_PKT_TOO_BIG:
        brisk_put32(b + 4, r->mtu);
        break;
    case BRISK_ICMP6_PARAM_PROB:
        brisk_put32(b + 4, r->pointer);
        break;
    case BRISK_ICMP6_ECHO_REQUEST:
    case BRISK_ICMP6_ECHO_REPLY:
        brisk_put16(b + 4, r->id);
        brisk_put16(b + 6, r->seq);
        break;
    case BRISK_ICMP6_ND_RA:
        b[4] = r->ra_hop_limit;
        b[5] = (uint8_t)(r->ra_flags | (r->ra_managed ? RA_FLAG_M : 0) | (r->ra_other ? RA_FLAG_O : 0));
        brisk_put16(b + 6, r->ra_lifetime);
        brisk_put32(b + 8, r->ra_reachable);
        brisk_put32(b + 12, r->ra_retrans);
        break;
    case BRISK_ICMP6_ND_NA:
        b[4] = (uint8_t)((r->na_router ? NA_FLAG_R : 0) | (r->na_solicited ? NA_FLAG_S : 0) |
                         (r->na_override ? NA_FLAG_O : 0));
        memcpy(b + 8, r->target, 16);
        break;
    case BRISK_ICMP6_ND_NS:
        memcpy(b + 8, r->target, 16);
        break;
    case BRISK_ICMP6_ND_REDIRECT:
        memcpy(b + 8, r->target, 16);
        memcpy(b + 24, r->dest, 16);
        break;
    default:
        break;
    }
    size_t len = fixed + r->payload_len;
    uint32_t sum = brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_ICMPV6, (uint32_t)len);
    brisk_put16(b + 2, brisk_csum_fold(brisk_csum_add(sum, b, len)));
    return len;
}

size_t brisk_nd_opt_lla_emit(uint8_t *b, uint8_t type, const uint8_t mac[6])
{
    b[0] = type;
    b[1] = BRISK_ND_OPT_LLA_LEN / 8;
    memcpy(b + 2, mac, 6);
    return BRISK_ND_OPT_LLA_LEN;
}

size_t brisk_nd_opt_prefix_emit(uint8_t *b, const struct brisk_nd_prefix *p)
{
    memset(b, 0, BRISK_ND_OPT_PREFIX_LEN);
    b[0] = BRISK_ND_OPT_PREFIX;
    b[1] = BRISK_ND_OPT_PREFIX_LEN / 8;
    b[2] = p->prefix_len;
    b[3] = (uint8_t)((p->onlink ? PI_FLAG_L : 0) | (p->autonomous ? PI_FLAG_A : 0));
    brisk_put32(b + 4, p->valid_lifetime);
    brisk_put32(b + 8, p->preferred_lifetime);
    memcpy(b + 16, p->prefix, 16);
    return BRISK_ND_OPT_PREFIX_LEN;
}

size_t brisk_nd_opt_mtu_emit(uint8_t *b, uint32_t mtu)
{
    memset(b, 0, BRISK_ND_OPT_MTU_LEN);
    b[0] = BRISK_ND_OPT_MTU;
    b[1] = BRISK_ND_OPT_MTU_LEN / 8;
    brisk_put32(b + 4, mtu);
    return BRISK_ND_OPT_MTU_LEN;
}
