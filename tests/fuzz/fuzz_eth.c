/*
 * fuzz_eth.c — the Ethernet header parser (src/wire/eth.c) on arbitrary bytes: never reads past the buffer
 * (ASan), and whatever it accepts re-emits byte for byte.
 */
#include <string.h>

#include "fuzz/harness.h"
#include "wire/eth.h"
#include "wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_eth_repr r;
    int rc = brisk_eth_parse(data, size, &r);
    if (rc < 0) {
        if (rc != BRISK_WIRE_TRUNCATED && rc != BRISK_WIRE_UNSUPPORTED)
            fh_fail("eth: unexpected reason %d", rc);
        if (rc == BRISK_WIRE_TRUNCATED && size >= BRISK_ETH_HLEN)
            fh_fail("eth: %zu bytes called truncated", size);
        return 0;
    }
    if (rc != BRISK_ETH_HLEN || size < BRISK_ETH_HLEN)
        fh_fail("eth: header length %d", rc);
    if (r.type == BRISK_ETH_P_VLAN || r.type == BRISK_ETH_P_QINQ)
        fh_fail("eth: a VLAN tag accepted");
    uint8_t out[BRISK_ETH_HLEN];
    brisk_eth_emit(out, &r);
    if (memcmp(out, data, BRISK_ETH_HLEN) != 0)
        fh_fail("eth: emit(parse(x)) != x");
    return 0;
}
