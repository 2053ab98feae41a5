/*
 * fuzz_icmp.c — the ICMP parser (src/wire/icmp.c, RFC 792 / 1191) on arbitrary bytes: the payload it returns
 * lies inside the buffer, and emitting the repr parses back to the same type, code and type-specific fields.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/icmp.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_icmp_repr r;
    int rc = brisk_icmp_parse(data, size, &r);
    if (rc < 0)
        return 0;
    if (rc != BRISK_ICMP_HLEN || size < BRISK_ICMP_HLEN)
        fh_fail("icmp: header length %d", rc);
    if (r.payload != data + BRISK_ICMP_HLEN || r.payload_len != size - BRISK_ICMP_HLEN)
        fh_fail("icmp: payload outside the message");
    uint8_t *out = malloc(size);
    if (!out)
        abort();
    if (brisk_icmp_emit(out, &r) != size)
        fh_fail("icmp: emit length");
    struct brisk_icmp_repr b;
    if (brisk_icmp_parse(out, size, &b) != BRISK_ICMP_HLEN)
        fh_fail("icmp: an emitted message does not parse");
    if (b.type != r.type || b.code != r.code || b.id != r.id || b.seq != r.seq ||
        b.next_hop_mtu != r.next_hop_mtu || b.payload_len != r.payload_len ||
        memcmp(b.payload, r.payload, r.payload_len) != 0)
        fh_fail("icmp: parse(emit(parse(x))) differs from parse(x)");
    free(out);
    return 0;
}
