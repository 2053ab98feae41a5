/*
 * ipv6.c — IPv6 fixed header parse and emit (RFC 8200 §3) and the extension header walker (RFC 8200 §4).
 *
 * The fixed header is 40 bytes: version (6), traffic class, a 20-bit flow label, the payload length (every
 * byte after the fixed header, extension headers included), the first Next Header, the hop limit and two
 * 16-byte addresses. brisk_ipv6_parse checks the version and that the payload the length announces is in
 * the buffer, and rejects sources that RFC 4291 says never appear on a link: multicast (§2.7) and the
 * loopback address (§2.5.3), as ipv4.c rejects 224/4 and 127/8. What depends on configuration (is the
 * destination ours, the unspecified source that only DAD and RS may use) is the stack's.
 *
 * The walker (brisk_ipv6_ext_walk) follows the Next Header chain from the fixed header to the upper layer:
 *   - hop-by-hop options (0) only right after the fixed header (RFC 8200 §4.1); met anywhere else it is an
 *     unrecognised Next Header (§4: discard, parameter problem code 1 at the field that named it);
 *   - hop-by-hop and destination options (60, §4.3 and §4.6) hold type-length-value options (§4.2). Pad1
 *     and PadN are padding; brisk recognises no other option, so every one is acted on by the two high bits
 *     of its type: 00 skip, 01 discard, 10 discard and parameter problem code 2 pointing at the type, 11 the
 *     same but no ICMP to a multicast destination. The first option that asks for a discard ends the walk:
 *     the options are processed in order (§4.2) and nothing after it can change the verdict;
 *   - routing (43, §4.4): with Segments Left 0 the header is ignored whatever its type; otherwise an
 *     unrecognised type means discard and parameter problem code 0 at the type field. A host implements no
 *     routing type, so that is every type — RFC 5095 §3 asks exactly this for type 0 (its amplification
 *     attack needs a node that executes it). The type and Segments Left are reported for the counters;
 *   - fragment (44, §4.5): offset, M flag and identification reported. A fragment with offset 0 and M 0 is
 *     an atomic fragment (RFC 6946): processed as a whole packet, never handed to reassembly, so the walk
 *     goes on past it. A first fragment (offset 0, M 1) is walked on too, since RFC 7112 (and RFC 8200
 *     §4.5) require it to hold the whole header chain, upper-layer header included: one that does not is
 *     discarded with parameter problem code 3 at pointer 0. A later fragment's bytes are the middle of the
 *     original packet, so the walk stops at its fragment header. §4.5's two per-fragment checks are pure
 *     and done here: M set and a length not a multiple of 8 (code 0 at the payload length), offset plus
 *     length beyond 65535 (code 0 at the fragment offset). A second fragment header is malformed: a source
 *     fragments once, and the report has room for one;
 *   - anything else (TCP, UDP, ICMPv6, No Next Header 59, ESP, AH and every unknown value) is the upper
 *     layer and ends the walk; the caller decides, with nh_ptr for a parameter problem code 1.
 *
 * Bounds, all from RFC 8504 §5.3, which lets a host limit what a chain may cost it:
 *   - at most BRISK_IPV6_EXT_MAX (8) extension headers. A host following §4.1's recommended order meets at
 *     most five before the upper layer or ESP / AH (hop-by-hop, destination options, routing, fragment,
 *     destination options); 8 leaves room for a repetition, which §4.1 allows, and a 64 KB payload of
 *     8-byte headers can no longer make the walker loop eight thousand times;
 *   - at most BRISK_IPV6_OPTS_MAX (8) non-padding options per header, Linux's max_hbh_opts_cnt and
 *     max_dst_opts_cnt defaults;
 *   - at most 7 padding bytes in a row, PadN data all zero (Linux's ip6_parse_tlv checks the same): no
 *     alignment needs more, and longer padding is a covert channel or a way to make the walk long.
 * A chain that breaks a bound, or whose header or option runs past the payload, is malformed
 * (BRISK_WIRE_BAD_EXTHDR, x->bad says which) and dropped without ICMP, as Linux drops it.
 */
#include "wire/ipv6.h"

#include "wire/ipv4.h"
#include "wire/wire.h"

#define NH_FIELD_OFF   6 /* the fixed header's Next Header field */
#define PLEN_FIELD_OFF 4 /* the fixed header's Payload Length field */

static int bad_source(const uint8_t src[16])
{
    return brisk_ipv6_is_multicast(src) || brisk_ipv6_is_loopback(src);
}

static void read_fields(const uint8_t *b, struct brisk_ipv6_repr *r)
{
    uint32_t w = brisk_get32(b);
    r->traffic_class = (uint8_t)(w >> 20);
    r->flow_label = w & 0xfffff;
    r->payload_len = brisk_get16(b + 4);
    r->next_header = b[6];
    r->hop_limit = b[7];
    memcpy(r->src, b + 8, 16);
    memcpy(r->dst, b + 24, 16);
}

int brisk_ipv6_parse(const uint8_t *b, size_t len, struct brisk_ipv6_repr *r)
{
    if (len < BRISK_IPV6_HLEN)
        return BRISK_WIRE_TRUNCATED;
    if (b[0] >> 4 != 6)
        return BRISK_WIRE_BAD_VERSION;
    if ((size_t)brisk_get16(b + 4) > len - BRISK_IPV6_HLEN)
        return BRISK_WIRE_TRUNCATED;
    if (bad_source(b + 8))
        return BRISK_WIRE_BAD_ADDR;
    read_fields(b, r);
    return BRISK_IPV6_HLEN;
}

int brisk_ipv6_parse_quoted(const uint8_t *b, size_t len, struct brisk_ipv6_repr *r)
{
    if (len < BRISK_IPV6_HLEN)
        return BRISK_WIRE_TRUNCATED;
    if (b[0] >> 4 != 6)
        return BRISK_WIRE_BAD_VERSION;
    read_fields(b, r);
    return BRISK_IPV6_HLEN;
}

size_t brisk_ipv6_emit(uint8_t *b, const struct brisk_ipv6_repr *r)
{
    brisk_put32(b, 6u << 28 | (uint32_t)r->traffic_class << 20 | (r->flow_label & 0xfffff));
    brisk_put16(b + 4, r->payload_len);
    b[6] = r->next_header;
    b[7] = r->hop_limit;
    memcpy(b + 8, r->src, 16);
    memcpy(b + 24, r->dst, 16);
    return BRISK_IPV6_HLEN;
}

size_t brisk_ipv6_frag_emit(uint8_t *b, uint8_t nh, uint16_t frag_off, int mf, uint32_t id)
{
    b[0] = nh;
    b[1] = 0;
    brisk_put16(b + 2, (uint16_t)((frag_off & 0xfff8) | (mf ? 1 : 0)));
    brisk_put32(b + 4, id);
    return BRISK_IPV6_FRAG_HLEN;
}

const char *brisk_ipv6_bad_name(unsigned bad)
{
    static const char *const names[] = {
        [BRISK_IPV6_BAD_NONE] = "none",
        [BRISK_IPV6_BAD_LEN] = "len",
        [BRISK_IPV6_BAD_HBH_POS] = "hbh_pos",
        [BRISK_IPV6_BAD_TOO_MANY] = "too_many",
        [BRISK_IPV6_BAD_OPT_LEN] = "opt_len",
        [BRISK_IPV6_BAD_OPT_COUNT] = "opt_count",
        [BRISK_IPV6_BAD_PAD] = "pad",
        [BRISK_IPV6_BAD_FRAG_TWICE] = "frag_twice",
        [BRISK_IPV6_BAD_FRAG_LEN] = "frag_len",
        [BRISK_IPV6_BAD_FRAG_SIZE] = "frag_size",
        [BRISK_IPV6_BAD_FRAG_CHAIN] = "frag_chain",
    };
    if (bad >= sizeof names / sizeof names[0])
        return "unknown";
    return names[bad];
}

/* Fails the walk: the reason, and the parameter problem it calls for (icmp_code < 0: none). Errors of code
 * 0, 1 and 3 go only to a unicast destination (RFC 4443 §2.4 (e.3)). */
static int fail(struct brisk_ipv6_ext *x, enum brisk_ipv6_bad why, int icmp_code, size_t ptr, int dst_mc)
{
    x->bad = (uint8_t)why;
    x->discard = 1;
    if (icmp_code >= 0 && !dst_mc) {
        x->icmp = 1;
        x->icmp_code = (uint8_t)icmp_code;
        x->icmp_ptr = (uint16_t)ptr;
    }
    return BRISK_WIRE_BAD_EXTHDR;
}

/* A first fragment (offset 0, M 1) must hold its whole header chain (RFC 7112 §5). */
static int first_fragment(const struct brisk_ipv6_ext *x)
{
    return x->frag && x->frag_off == 0 && x->frag_mf;
}

/* The chain ran past the end: malformed, or in a first fragment an incomplete chain. */
static int fail_len(struct brisk_ipv6_ext *x, int dst_mc)
{
    if (first_fragment(x))
        return fail(x, BRISK_IPV6_BAD_FRAG_CHAIN, BRISK_IPV6_PP_CHAIN, 0, dst_mc);
    return fail(x, BRISK_IPV6_BAD_LEN, -1, 0, dst_mc);
}

/* The least of an upper-layer header a first fragment must hold (RFC 7112 §5): its fixed part, for the
 * protocols whose length brisk knows; 0 for the others. */
static size_t upper_min(uint8_t proto)
{
    switch (proto) {
    case BRISK_IP_PROTO_TCP:
        return 20;
    case BRISK_IP_PROTO_UDP:
        return 8;
    case BRISK_IP_PROTO_ICMPV6:
        return 4;
    default:
        return 0;
    }
}

/* The options of the hop-by-hop or destination options header b[off, off + hlen) (RFC 8200 §4.2). Returns
 * 0 (x->discard set if an option asks for it) or a reason. */
static enum brisk_ipv6_bad walk_options(const uint8_t *b, size_t off, size_t hlen, int dst_mc,
                                        struct brisk_ipv6_ext *x)
{
    size_t i = off + 2, end = off + hlen;
    unsigned pad = 0, nopts = 0;
    while (i < end) {
        uint8_t type = b[i];
        if (type == BRISK_IPV6_OPT_PAD1) {
            if (++pad > BRISK_IPV6_PAD_MAX)
                return BRISK_IPV6_BAD_PAD;
            i++;
            continue;
        }
        if (end - i < 2)
            return BRISK_IPV6_BAD_OPT_LEN; /* no room for the length byte */
        size_t olen = 2 + (size_t)b[i + 1];
        if (olen > end - i)
            return BRISK_IPV6_BAD_OPT_LEN;
        if (type == BRISK_IPV6_OPT_PADN) {
            pad += (unsigned)olen;
            if (pad > BRISK_IPV6_PAD_MAX)
                return BRISK_IPV6_BAD_PAD;
            for (size_t k = i + 2; k < i + olen; k++)
                if (b[k] != 0)
                    return BRISK_IPV6_BAD_PAD;
            i += olen;
            continue;
        }
        pad = 0;
        if (++nopts > BRISK_IPV6_OPTS_MAX)
            return BRISK_IPV6_BAD_OPT_COUNT;
        enum brisk_ipv6_optact act = brisk_ipv6_opt_action(type);
        if (act != BRISK_IPV6_OPT_SKIP) {
            x->opt_type = type;
            x->opt_action = (uint8_t)act;
            x->discard = 1;
            if (act == BRISK_IPV6_OPT_DISCARD_ICMP || (act == BRISK_IPV6_OPT_DISCARD_ICMP_UCAST && !dst_mc)) {
                x->icmp = 1;
                x->icmp_code = BRISK_IPV6_PP_OPTION;
                x->icmp_ptr = (uint16_t)i;
            }
            return BRISK_IPV6_BAD_NONE;
        }
        x->nopts++;
        i += olen;
    }
    return BRISK_IPV6_BAD_NONE;
}

int brisk_ipv6_ext_walk(const uint8_t *b, size_t len, const struct brisk_ipv6_repr *r,
                        struct brisk_ipv6_ext *x)
{
    memset(x, 0, sizeof *x);
    if (len < BRISK_IPV6_HLEN)
        return BRISK_WIRE_TRUNCATED;
    size_t declared_end = BRISK_IPV6_HLEN + (size_t)r->payload_len; /* what the sender sent */
    size_t end = declared_end < len ? declared_end : len;           /* what we may read */
    int dst_mc = brisk_ipv6_is_multicast(r->dst);
    uint8_t nh = r->next_header;
    size_t nh_ptr = NH_FIELD_OFF;
    size_t off = BRISK_IPV6_HLEN;

    for (;;) {
        size_t hlen;
        switch (nh) {
        case BRISK_IP_PROTO_HOPOPTS: /* the same TLV format as destination options */
        case BRISK_IP_PROTO_DSTOPTS: {
            if (nh == BRISK_IP_PROTO_HOPOPTS && off != BRISK_IPV6_HLEN)
                return fail(x, BRISK_IPV6_BAD_HBH_POS, BRISK_IPV6_PP_NEXTHDR, nh_ptr, dst_mc);
            if (++x->nhdrs > BRISK_IPV6_EXT_MAX)
                return fail(x, BRISK_IPV6_BAD_TOO_MANY, -1, 0, dst_mc);
            if (end - off < 8)
                return fail_len(x, dst_mc);
            hlen = ((size_t)b[off + 1] + 1) * 8;
            if (hlen > end - off)
                return fail_len(x, dst_mc);
            enum brisk_ipv6_bad why = walk_options(b, off, hlen, dst_mc, x);
            if (why != BRISK_IPV6_BAD_NONE)
                return fail(x, why, -1, 0, dst_mc);
            if (x->discard)
                return (int)off;
            break;
        }
        case BRISK_IP_PROTO_ROUTING:
            if (++x->nhdrs > BRISK_IPV6_EXT_MAX)
                return fail(x, BRISK_IPV6_BAD_TOO_MANY, -1, 0, dst_mc);
            if (end - off < 8)
                return fail_len(x, dst_mc);
            hlen = ((size_t)b[off + 1] + 1) * 8;
            if (hlen > end - off)
                return fail_len(x, dst_mc);
            x->rh = 1;
            x->rh_type = b[off + 2];
            x->rh_segleft = b[off + 3];
            x->rh_off = (uint16_t)off;
            if (x->rh_segleft != 0) {
                /* An unrecognised routing type with work left (RFC 8200 §4.4): every type, for a host. */
                x->discard = 1;
                if (!dst_mc) {
                    x->icmp = 1;
                    x->icmp_code = BRISK_IPV6_PP_HEADER;
                    x->icmp_ptr = (uint16_t)(off + 2);
                }
                return (int)off;
            }
            break;
        case BRISK_IP_PROTO_FRAGMENT: {
            if (++x->nhdrs > BRISK_IPV6_EXT_MAX)
                return fail(x, BRISK_IPV6_BAD_TOO_MANY, -1, 0, dst_mc);
            if (x->frag)
                return fail(x, BRISK_IPV6_BAD_FRAG_TWICE, -1, 0, dst_mc);
            if (end - off < BRISK_IPV6_FRAG_HLEN)
                return fail_len(x, dst_mc);
            hlen = BRISK_IPV6_FRAG_HLEN;
            uint16_t w = brisk_get16(b + off + 2);
            x->frag = 1;
            x->frag_nh = b[off];
            x->frag_off = w & 0xfff8;
            x->frag_mf = w & 1;
            x->frag_atomic = x->frag_off == 0 && !x->frag_mf;
            x->frag_id = brisk_get32(b + off + 4);
            x->frag_hdr_off = (uint16_t)off;
            x->frag_prev_nh = (uint16_t)nh_ptr;
            /* The fragment's data: from after this header to the end the payload length declares. */
            size_t data_len = declared_end - (off + hlen);
            if (x->frag_mf && data_len % 8 != 0)
                return fail(x, BRISK_IPV6_BAD_FRAG_LEN, BRISK_IPV6_PP_HEADER, PLEN_FIELD_OFF, dst_mc);
            if ((size_t)x->frag_off + data_len > 65535)
                return fail(x, BRISK_IPV6_BAD_FRAG_SIZE, BRISK_IPV6_PP_HEADER, off + 2, dst_mc);
            if (x->frag_off != 0) {
                /* The middle of someone's packet: reassembly's, not ours to walk. */
                x->proto = x->frag_nh;
                x->proto_off = (uint16_t)(off + hlen);
                x->nh_ptr = (uint16_t)off;
                return (int)(off + hlen);
            }
            break;
        }
        default:
            x->proto = nh;
            x->proto_off = (uint16_t)off;
            x->nh_ptr = (uint16_t)nh_ptr;
            if (first_fragment(x) && end - off < upper_min(nh))
                return fail_len(x, dst_mc);
            return (int)off;
        }
        nh = b[off];
        nh_ptr = off;
        off += hlen;
    }
}
