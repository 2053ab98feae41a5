/*
 * fuzz_ipv4.c — the IPv4 header parsers (src/wire/ipv4.c, RFC 791): brisk_ipv4_parse and the ICMP-quote
 * variant brisk_ipv4_parse_quoted on arbitrary bytes. What parse accepts lies inside the buffer (header,
 * total length), and re-emitting its repr (without the options, which brisk never sends) parses back to the
 * same fields.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_ipv4_repr q;
    int qrc = brisk_ipv4_parse_quoted(data, size, &q);
    if (qrc >= 0 && (qrc < BRISK_IPV4_HLEN || qrc > BRISK_IPV4_HLEN_MAX || (size_t)qrc + 8 > size))
        fh_fail("ipv4 quoted: header length %d of %zu bytes", qrc, size);

    struct brisk_ipv4_repr r;
    int rc = brisk_ipv4_parse(data, size, &r);
    if (rc < 0)
        return 0;
    if (rc != r.hdr_len || rc < BRISK_IPV4_HLEN || rc > BRISK_IPV4_HLEN_MAX)
        fh_fail("ipv4: header length %d", rc);
    if (r.total_len < r.hdr_len || r.total_len > size)
        fh_fail("ipv4: total length %u outside [%u, %zu]", r.total_len, r.hdr_len, size);
    /* The quote parser wants 8 bytes after the header (the transport ports), by its contract. */
    if (qrc != rc && (size_t)rc + 8 <= size)
        fh_fail("ipv4: the quoted parser disagrees on a valid header (%d vs %d)", qrc, rc);
    if (r.frag_off % 8)
        fh_fail("ipv4: fragment offset %u not a multiple of 8", r.frag_off);

    struct brisk_ipv4_repr e = r;
    e.total_len = (uint16_t)(r.total_len - r.hdr_len + BRISK_IPV4_HLEN);
    uint8_t *out = calloc(1, e.total_len);
    if (!out)
        abort();
    if (brisk_ipv4_emit(out, &e) != BRISK_IPV4_HLEN)
        fh_fail("ipv4: emit length");
    struct brisk_ipv4_repr b;
    if (brisk_ipv4_parse(out, e.total_len, &b) != BRISK_IPV4_HLEN)
        fh_fail("ipv4: an emitted header does not parse");
    if (b.tos != r.tos || b.id != r.id || b.df != r.df || b.mf != r.mf || b.frag_off != r.frag_off ||
        b.ttl != r.ttl || b.proto != r.proto || b.src != r.src || b.dst != r.dst ||
        b.total_len != e.total_len)
        fh_fail("ipv4: parse(emit(parse(x))) differs from parse(x)");
    free(out);
    return 0;
}
