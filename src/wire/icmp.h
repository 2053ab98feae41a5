/*
 * icmp.h — ICMP for IPv4 (RFC 792, RFC 1122 §3.2.2; next-hop MTU from RFC 1191).
 */
#ifndef BRISK_WIRE_ICMP_H
#define BRISK_WIRE_ICMP_H

#include <stddef.h>
#include <stdint.h>

#define BRISK_ICMP_HLEN 8

enum {
    BRISK_ICMP_ECHO_REPLY = 0,
    BRISK_ICMP_DEST_UNREACH = 3,
    BRISK_ICMP_ECHO = 8,
    BRISK_ICMP_TIME_EXCEEDED = 11,
    BRISK_ICMP_PARAM_PROB = 12,
};

/* Destination-unreachable codes brisk looks at. */
enum {
    BRISK_ICMP_UNREACH_NET = 0,
    BRISK_ICMP_UNREACH_HOST = 1,
    BRISK_ICMP_UNREACH_PROTO = 2,
    BRISK_ICMP_UNREACH_PORT = 3,
    BRISK_ICMP_UNREACH_FRAG_NEEDED = 4, /* carries the next-hop MTU (RFC 1191) */
};

struct brisk_icmp_repr {
    uint8_t type, code;
    uint16_t id, seq;       /* echo / echo reply; 0 for other types */
    uint16_t next_hop_mtu;  /* dest unreachable code 4 (RFC 1191); 0 otherwise */
    const uint8_t *payload; /* the bytes after the 8-byte header (echo data, or the quoted datagram) */
    size_t payload_len;
};

/* Parses the ICMP message b[0, len) — len is the IP payload length — and verifies its checksum over all of
 * it. Returns BRISK_ICMP_HLEN, BRISK_WIRE_TRUNCATED (len < 8) or BRISK_WIRE_BAD_CSUM. The payload points into
 * b. Any type is accepted: the caller decides what it handles. */
int brisk_icmp_parse(const uint8_t *b, size_t len, struct brisk_icmp_repr *r);

/* Writes the header at b, copies the payload to b + 8 (memmove: the payload may already sit there or
 * overlap) and stores the checksum. Returns BRISK_ICMP_HLEN + payload_len. id/seq are written for echo and
 * echo reply, next_hop_mtu for dest unreachable code 4, zeros otherwise. */
size_t brisk_icmp_emit(uint8_t *b, const struct brisk_icmp_repr *r);

#endif
