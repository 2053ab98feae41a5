/*
 * fuzz_arp.c — the ARP parser (src/wire/arp.c, RFC 826): bounds, and an accepted packet re-emits byte for
 * byte (the parser accepts only Ethernet/IPv4 with a request or reply op, which is all emit can write).
 */
#include <string.h>

#include "fuzz/harness.h"
#include "wire/arp.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_arp_repr r;
    int rc = brisk_arp_parse(data, size, &r);
    if (rc < 0) {
        if (rc != BRISK_WIRE_TRUNCATED && rc != BRISK_WIRE_UNSUPPORTED)
            fh_fail("arp: unexpected reason %d", rc);
        return 0;
    }
    if (rc != BRISK_ARP_LEN || size < BRISK_ARP_LEN)
        fh_fail("arp: length %d from %zu bytes", rc, size);
    if (r.op != BRISK_ARP_OP_REQUEST && r.op != BRISK_ARP_OP_REPLY)
        fh_fail("arp: op %u accepted", r.op);
    uint8_t out[BRISK_ARP_LEN];
    if (brisk_arp_emit(out, &r) != BRISK_ARP_LEN || memcmp(out, data, BRISK_ARP_LEN) != 0)
        fh_fail("arp: emit(parse(x)) != x");
    return 0;
}
