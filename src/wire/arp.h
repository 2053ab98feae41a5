/*
 * arp.h — ARP for IPv4 over Ethernet (RFC 826).
 */
#ifndef BRISK_WIRE_ARP_H
#define BRISK_WIRE_ARP_H

#include <stddef.h>
#include <stdint.h>

#define BRISK_ARP_LEN 28 /* the Ethernet/IPv4 packet: 8 fixed bytes + 2 * (6 + 4) addresses */

#define BRISK_ARP_OP_REQUEST 1
#define BRISK_ARP_OP_REPLY   2

struct brisk_arp_repr {
    uint16_t op;    /* BRISK_ARP_OP_REQUEST or BRISK_ARP_OP_REPLY */
    uint8_t sha[6]; /* sender hardware address */
    uint32_t spa;   /* sender protocol address, host order */
    uint8_t tha[6]; /* target hardware address (zero in a request) */
    uint32_t tpa;   /* target protocol address, host order */
};

/* Parses an ARP packet (the Ethernet payload). Returns BRISK_ARP_LEN (bytes past it, e.g. Ethernet padding,
 * are ignored), BRISK_WIRE_TRUNCATED (len < 28) or BRISK_WIRE_UNSUPPORTED (hardware type not Ethernet,
 * protocol not IPv4, address lengths not 6/4, op neither request nor reply). */
int brisk_arp_parse(const uint8_t *b, size_t len, struct brisk_arp_repr *r);

/* Writes the 28-byte packet at b; returns BRISK_ARP_LEN. */
size_t brisk_arp_emit(uint8_t *b, const struct brisk_arp_repr *r);

#endif
