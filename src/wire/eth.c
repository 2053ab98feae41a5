/*
 * eth.c — Ethernet II header parse and emit (RFC 894 framing: destination MAC, source MAC, EtherType).
 *
 * brisk_eth_parse checks the length, reads the three fields and refuses VLAN-tagged frames (802.1Q 0x8100,
 * 802.1ad 0x88a8, and the pre-standard 0x9100 QinQ tag): brisk has no VLAN devices, and a tagged frame parsed
 * as untagged would hand the tag's bytes to the next layer. brisk_eth_emit writes the header; the FCS and
 * the 60-byte minimum-frame padding are the device's business.
 */
#include "wire/eth.h"

#include <string.h>

#include "wire/wire.h"

int brisk_eth_parse(const uint8_t *b, size_t len, struct brisk_eth_repr *r)
{
    if (len < BRISK_ETH_HLEN)
        return BRISK_WIRE_TRUNCATED;
    uint16_t type = brisk_get16(b + 12);
    if (type == BRISK_ETH_P_VLAN || type == BRISK_ETH_P_QINQ || type == 0x9100)
        return BRISK_WIRE_UNSUPPORTED;
    memcpy(r->dst, b, BRISK_ETH_ALEN);
    memcpy(r->src, b + 6, BRISK_ETH_ALEN);
    r->type = type;
    return BRISK_ETH_HLEN;
}

void brisk_eth_emit(uint8_t *b, const struct brisk_eth_repr *r)
{
    memcpy(b, r->dst, BRISK_ETH_ALEN);
    memcpy(b + 6, r->src, BRISK_ETH_ALEN);
    brisk_put16(b + 12, r->type);
}
