/*
 * eth.h — Ethernet II headers (IEEE 802.3 framing with an EtherType, RFC 894).
 */
#ifndef BRISK_WIRE_ETH_H
#define BRISK_WIRE_ETH_H

#include <stddef.h>
#include <stdint.h>

#define BRISK_ETH_HLEN 14
#define BRISK_ETH_ALEN 6
#define BRISK_ETH_ZLEN 60 /* the shortest frame, without its FCS: shorter ones are padded */

#define BRISK_ETH_P_IPV4 0x0800
#define BRISK_ETH_P_ARP  0x0806
#define BRISK_ETH_P_IPV6 0x86dd
#define BRISK_ETH_P_VLAN 0x8100 /* 802.1Q tag: rejected */
#define BRISK_ETH_P_QINQ 0x88a8 /* 802.1ad service tag: rejected */

struct brisk_eth_repr {
    uint8_t dst[BRISK_ETH_ALEN];
    uint8_t src[BRISK_ETH_ALEN];
    uint16_t type; /* EtherType, host order */
};

/* Parses the 14-byte header at b. Returns BRISK_ETH_HLEN, BRISK_WIRE_TRUNCATED (len < 14) or
 * BRISK_WIRE_UNSUPPORTED (a VLAN tag: brisk does not do VLANs). Any other EtherType is returned as is:
 * the caller decides which ones it handles. */
int brisk_eth_parse(const uint8_t *b, size_t len, struct brisk_eth_repr *r);

/* Writes the 14-byte header at b. */
void brisk_eth_emit(uint8_t *b, const struct brisk_eth_repr *r);

/* Group addresses have the I/G bit (the low bit of the first octet) set; broadcast is all ones. */
static inline int brisk_eth_is_multicast(const uint8_t *mac)
{
    return mac[0] & 1;
}

static inline int brisk_eth_is_broadcast(const uint8_t *mac)
{
    return (mac[0] & mac[1] & mac[2] & mac[3] & mac[4] & mac[5]) == 0xff;
}

#endif
