/*
 * fuzz_udp.c — the UDP parsers (src/wire/udp.c, RFC 768, RFC 8200 §8.1) on arbitrary bytes. Input:
 * [flags u8][datagram]; flags bit 0 parses over IPv6 (2001:db8::1 -> 2001:db8::2) instead of IPv4
 * (10.0.0.2 -> 10.0.0.1), bit 1 repairs the checksum first (as a sender would compute it, 0 sent as
 * 0xffff), bit 2 parses without verifying (a device verified). What parse accepts lies inside the buffer,
 * a zero checksum never passes over IPv6, and emitting the repr with the same payload parses back to it.
 *
 * Seeds (corpus/udp/): the kernel's datagrams of tests/wire/test_udp.c over both families, a datagram
 * whose checksum computes to 0, one with bytes after its length, one with a zero checksum over IPv6.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/udp.h"
#include "wire/wire.h"

#define F_V6       0x01
#define F_FIX_CSUM 0x02
#define F_NOVERIFY 0x04

static const uint8_t s6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, d6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
#define S4 0x0a000002u
#define D4 0x0a000001u

static int parse(const uint8_t *b, size_t len, unsigned flags, struct brisk_udp_repr *r)
{
    int verify = !(flags & F_NOVERIFY);
    return (flags & F_V6) ? brisk_udp_parse6(b, len, s6, d6, verify, r)
                          : brisk_udp_parse(b, len, S4, D4, verify, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    size_t len = size - 1;
    uint8_t *b = malloc(len ? len : 1);
    if (!b)
        abort();
    memcpy(b, data + 1, len);
    if ((flags & F_FIX_CSUM) && len >= 8) {
        size_t ulen = brisk_get16(b + 4);
        if (ulen >= 8 && ulen <= len) {
            if (flags & F_V6)
                brisk_udp_csum_fill6(b, ulen, s6, d6);
            else
                brisk_udp_csum_fill(b, ulen, S4, D4);
            if (brisk_get16(b + 6) == 0)
                fh_fail("udp: a filled checksum of 0");
        }
    }

    struct brisk_udp_repr r;
    int rc = parse(b, len, flags, &r);
    if (rc < 0) {
        free(b);
        return 0;
    }
    if (rc != BRISK_UDP_HLEN || r.len < 8 || r.len > len || r.payload != b + 8 || r.payload_len != r.len - 8u)
        fh_fail("udp: header %d, length %u of %zu", rc, r.len, len);
    if ((flags & F_V6) && r.csum == 0)
        fh_fail("udp: a zero checksum accepted over IPv6");

    uint8_t *out = malloc(r.len);
    if (!out)
        abort();
    if (brisk_udp_emit(out, &r) != BRISK_UDP_HLEN)
        fh_fail("udp: emit length");
    memcpy(out + 8, r.payload, r.payload_len);
    if (flags & F_V6)
        brisk_udp_csum_fill6(out, r.len, s6, d6);
    else
        brisk_udp_csum_fill(out, r.len, S4, D4);
    struct brisk_udp_repr e;
    if (parse(out, r.len, flags & ~(unsigned)F_NOVERIFY, &e) != BRISK_UDP_HLEN)
        fh_fail("udp: an emitted datagram does not parse");
    if (e.sport != r.sport || e.dport != r.dport || e.len != r.len || e.payload_len != r.payload_len ||
        memcmp(e.payload, r.payload, r.payload_len) != 0)
        fh_fail("udp: parse(emit(parse(x))) differs from parse(x)");
    /* A verified datagram keeps its checksum through the trip (a recomputation gives the same value). */
    if (!(flags & F_NOVERIFY) && r.csum != 0 && e.csum != r.csum)
        fh_fail("udp: checksum %#x recomputed as %#x", r.csum, e.csum);
    free(out);
    free(b);
    return 0;
}
