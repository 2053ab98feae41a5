/*
 * arp.c — ARP packet parse and emit, restricted to the one combination brisk speaks: Ethernet hardware
 * addresses and IPv4 protocol addresses (RFC 826).
 *
 * RFC 826's packet is generic (hardware type, protocol type, and the two address lengths say how long the
 * four addresses are). brisk_arp_parse accepts only htype 1 / ptype 0x0800 / hlen 6 / plen 4, which fixes
 * the packet at 28 bytes, and only the request and reply opcodes; everything else is "unsupported" for the
 * stack to count. brisk_arp_emit writes the same fixed layout. The decisions RFC 826 describes (merge the
 * sender into the cache, answer requests for our address) belong to src/net/neigh.c.
 */
#include "wire/arp.h"

#include <string.h>

#include "wire/eth.h"
#include "wire/wire.h"

#define ARP_HTYPE_ETHER 1

int brisk_arp_parse(const uint8_t *b, size_t len, struct brisk_arp_repr *r)
{
    if (len < BRISK_ARP_LEN)
        return BRISK_WIRE_TRUNCATED;
    if (brisk_get16(b) != ARP_HTYPE_ETHER || brisk_get16(b + 2) != BRISK_ETH_P_IPV4 || b[4] != 6 || b[5] != 4)
        return BRISK_WIRE_UNSUPPORTED;
    uint16_t op = brisk_get16(b + 6);
    if (op != BRISK_ARP_OP_REQUEST && op != BRISK_ARP_OP_REPLY)
        return BRISK_WIRE_UNSUPPORTED;
    r->op = op;
    memcpy(r->sha, b + 8, 6);
    r->spa = brisk_get32(b + 14);
    memcpy(r->tha, b + 18, 6);
    r->tpa = brisk_get32(b + 24);
    return BRISK_ARP_LEN;
}

size_t brisk_arp_emit(uint8_t *b, const struct brisk_arp_repr *r)
{
    brisk_put16(b, ARP_HTYPE_ETHER);
    brisk_put16(b + 2, BRISK_ETH_P_IPV4);
    b[4] = 6;
    b[5] = 4;
    brisk_put16(b + 6, r->op);
    memcpy(b + 8, r->sha, 6);
    brisk_put32(b + 14, r->spa);
    memcpy(b + 18, r->tha, 6);
    brisk_put32(b + 24, r->tpa);
    return BRISK_ARP_LEN;
}
