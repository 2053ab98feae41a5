/*
 * fuzz_ipv6.c — the IPv6 header parsers and the extension header walker (src/wire/ipv6.c, RFC 8200) on
 * arbitrary bytes: brisk_ipv6_parse, brisk_ipv6_parse_quoted, and brisk_ipv6_ext_walk over the packet as
 * received and as an ICMPv6 error would quote it (cut short, its payload length longer than the buffer).
 * What they accept lies inside the buffer: the upper-layer offset, the parameter problem pointer, the
 * fragment and routing headers; a verdict is consistent with its reason; re-emitting the fixed header
 * parses back to the same fields and walks to the same result.
 *
 * Seeds (corpus/ipv6/): the kernel's packets of tests/wire/test_ipv6.c (an echo request, the
 * hop-by-hop + destination options datagram, both fragments of a 65,500-byte datagram) with their source
 * moved off ::1, and hand-built edge cases: a routing header type 0 with a segment left, an unknown option
 * of type bits 10, hop-by-hop after destination options, a first fragment with an incomplete chain.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

static void check_walk(const uint8_t *data, size_t size, const struct brisk_ipv6_repr *r, int rc,
                       const struct brisk_ipv6_ext *x, const char *what)
{
    size_t end = BRISK_IPV6_HLEN + (size_t)r->payload_len;
    if (end > size)
        end = size;
    if (rc == BRISK_WIRE_BAD_EXTHDR) {
        if (x->bad == BRISK_IPV6_BAD_NONE || !x->discard)
            fh_fail("%s: malformed without a reason (%u) or a discard", what, x->bad);
    } else if (rc < 0) {
        if (rc != BRISK_WIRE_TRUNCATED || size >= BRISK_IPV6_HLEN)
            fh_fail("%s: walk returned %d on %zu bytes", what, rc, size);
        return;
    } else {
        if (rc < BRISK_IPV6_HLEN || (size_t)rc > end)
            fh_fail("%s: walk stopped at %d outside [40, %zu]", what, rc, end);
        if (x->bad != BRISK_IPV6_BAD_NONE)
            fh_fail("%s: a reason (%u) on a well-formed chain", what, x->bad);
        if (!x->discard && (x->proto_off != rc || x->nh_ptr >= x->proto_off))
            fh_fail("%s: upper layer at %u (nh %u), walk at %d", what, x->proto_off, x->nh_ptr, rc);
        if (!x->discard && x->proto_off > BRISK_IPV6_HLEN && x->nh_ptr < BRISK_IPV6_HLEN)
            fh_fail("%s: upper layer after a header named by the fixed header's field", what);
        if (x->discard && x->opt_action == BRISK_IPV6_OPT_SKIP && !(x->rh && x->rh_segleft))
            fh_fail("%s: a discard with no cause", what);
    }
    if (x->nhdrs > BRISK_IPV6_EXT_MAX + 1)
        fh_fail("%s: %u headers walked", what, x->nhdrs);
    if (x->icmp && (!x->discard || x->icmp_ptr >= end || x->icmp_code > BRISK_IPV6_PP_CHAIN))
        fh_fail("%s: ICMP code %u at %u of %zu", what, x->icmp_code, x->icmp_ptr, end);
    if (x->icmp && x->icmp_code != BRISK_IPV6_PP_OPTION && brisk_ipv6_is_multicast(r->dst))
        fh_fail("%s: code %u to a multicast destination", what, x->icmp_code);
    if (x->frag) {
        if (x->frag_hdr_off < BRISK_IPV6_HLEN || (size_t)x->frag_hdr_off + BRISK_IPV6_FRAG_HLEN > end)
            fh_fail("%s: fragment header at %u", what, x->frag_hdr_off);
        if (x->frag_off % 8 || x->frag_atomic != (x->frag_off == 0 && !x->frag_mf))
            fh_fail("%s: fragment offset %u M %u atomic %u", what, x->frag_off, x->frag_mf, x->frag_atomic);
        if (data[x->frag_prev_nh] != BRISK_IP_PROTO_FRAGMENT && x->frag_prev_nh != 6)
            fh_fail("%s: the field naming the fragment header holds %u", what, data[x->frag_prev_nh]);
    }
    if (x->rh && (x->rh_off < BRISK_IPV6_HLEN || (size_t)x->rh_off + 8 > end))
        fh_fail("%s: routing header at %u", what, x->rh_off);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_ipv6_repr q, r;
    struct brisk_ipv6_ext x, y;

    /* As a quote: the fixed header only, then a walk that must stay inside the buffer. */
    int qrc = brisk_ipv6_parse_quoted(data, size, &q);
    if (qrc >= 0) {
        if (qrc != BRISK_IPV6_HLEN)
            fh_fail("ipv6 quoted: header length %d", qrc);
        check_walk(data, size, &q, brisk_ipv6_ext_walk(data, size, &q, &x), &x, "quoted");
    }

    int rc = brisk_ipv6_parse(data, size, &r);
    if (rc < 0)
        return 0;
    if (rc != BRISK_IPV6_HLEN || BRISK_IPV6_HLEN + (size_t)r.payload_len > size)
        fh_fail("ipv6: header %d, payload %u of %zu bytes", rc, r.payload_len, size);
    if (qrc != rc)
        fh_fail("ipv6: the quoted parser refused a valid header (%d)", qrc);
    size_t plen = BRISK_IPV6_HLEN + r.payload_len;
    int wrc = brisk_ipv6_ext_walk(data, plen, &r, &x);
    check_walk(data, plen, &r, wrc, &x, "walk");

    /* The fixed header re-emitted, the payload copied: the same fields, the same walk. */
    uint8_t *out = malloc(plen);
    if (!out)
        abort();
    if (brisk_ipv6_emit(out, &r) != BRISK_IPV6_HLEN)
        fh_fail("ipv6: emit length");
    memcpy(out + BRISK_IPV6_HLEN, data + BRISK_IPV6_HLEN, r.payload_len);
    struct brisk_ipv6_repr b;
    if (brisk_ipv6_parse(out, plen, &b) != BRISK_IPV6_HLEN)
        fh_fail("ipv6: an emitted header does not parse");
    if (b.traffic_class != r.traffic_class || b.flow_label != r.flow_label ||
        b.payload_len != r.payload_len || b.next_header != r.next_header || b.hop_limit != r.hop_limit ||
        memcmp(b.src, r.src, 16) != 0 || memcmp(b.dst, r.dst, 16) != 0)
        fh_fail("ipv6: parse(emit(parse(x))) differs from parse(x)");
    int wrc2 = brisk_ipv6_ext_walk(out, plen, &b, &y);
    if (wrc2 != wrc || y.proto != x.proto || y.proto_off != x.proto_off || y.bad != x.bad ||
        y.discard != x.discard || y.icmp != x.icmp || y.icmp_ptr != x.icmp_ptr)
        fh_fail("ipv6: the walk differs on the re-emitted packet");
    free(out);
    return 0;
}
