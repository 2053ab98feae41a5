/*
 * ipv4.h — IPv4 headers (RFC 791, RFC 1122 §3.2.1) and address helpers.
 */
#ifndef BRISK_WIRE_IPV4_H
#define BRISK_WIRE_IPV4_H

#include <stddef.h>
#include <stdint.h>

#define BRISK_IPV4_HLEN     20 /* without options; brisk never emits options */
#define BRISK_IPV4_HLEN_MAX 60

#define BRISK_IP_PROTO_ICMP 1
#define BRISK_IP_PROTO_TCP  6
#define BRISK_IP_PROTO_UDP  17

struct brisk_ipv4_repr {
    uint8_t hdr_len;    /* bytes, 20..60 (parse); emit always writes 20 */
    uint8_t tos;        /* DSCP + ECN */
    uint16_t total_len; /* header + payload */
    uint16_t id;
    uint8_t df, mf;    /* flags, 0 or 1 */
    uint16_t frag_off; /* fragment offset in BYTES (field * 8) */
    uint8_t ttl, proto;
    uint32_t src, dst; /* host order */
};

/* Parses the header at b, where len is what the frame holds after the link header (it may be longer than
 * total_len: Ethernet pads short frames, and the padding is ignored). Checks, in this order:
 *   len >= 20 (BRISK_WIRE_TRUNCATED), version 4 (BAD_VERSION), IHL >= 5 (BAD_HDRLEN), IHL * 4 <= len
 *   (TRUNCATED), total_len >= IHL * 4 (BAD_TOTLEN), total_len <= len (TRUNCATED), header checksum
 *   (BAD_CSUM), source address usable by a host (BAD_ADDR: see ipv4.c).
 * Options are skipped, not interpreted. Returns hdr_len; the payload is b[hdr_len, total_len). */
int brisk_ipv4_parse(const uint8_t *b, size_t len, struct brisk_ipv4_repr *r);

/* Parses the datagram an ICMP error quotes (RFC 792): an IPv4 header plus at least the first 8 bytes of its
 * payload, enough for the transport ports. Unlike brisk_ipv4_parse it checks neither total_len against len
 * (the quote is cut short by design) nor the checksum nor the addresses: the quoted datagram is one we sent,
 * and routers on the way may have rewritten it (RFC 1812 §4.3.2.3; NAT). Returns the quoted header length
 * (the transport header starts there), BRISK_WIRE_TRUNCATED (shorter than 20, or than the header + 8),
 * BRISK_WIRE_BAD_VERSION or BRISK_WIRE_BAD_HDRLEN. */
int brisk_ipv4_parse_quoted(const uint8_t *b, size_t len, struct brisk_ipv4_repr *r);

/* Writes a 20-byte header (r->hdr_len is ignored) with its checksum; returns BRISK_IPV4_HLEN. frag_off must
 * be a multiple of 8. */
size_t brisk_ipv4_emit(uint8_t *b, const struct brisk_ipv4_repr *r);

static inline int brisk_ipv4_is_fragment(const struct brisk_ipv4_repr *r)
{
    return r->mf || r->frag_off;
}

/* 224.0.0.0/4 */
static inline int brisk_ipv4_is_multicast(uint32_t a)
{
    return (a & 0xf0000000u) == 0xe0000000u;
}

/* 255.255.255.255 */
static inline int brisk_ipv4_is_broadcast_limited(uint32_t a)
{
    return a == 0xffffffffu;
}

/* 127.0.0.0/8 */
static inline int brisk_ipv4_is_loopback(uint32_t a)
{
    return (a >> 24) == 127;
}

/* 0.0.0.0/8, "this network" */
static inline int brisk_ipv4_is_zeronet(uint32_t a)
{
    return (a >> 24) == 0;
}

/* The netmask of a prefix length: 0 -> 0, 24 -> 255.255.255.0, 32 (or more) -> all ones. */
static inline uint32_t brisk_ipv4_mask(unsigned prefix_len)
{
    if (prefix_len == 0)
        return 0;
    if (prefix_len >= 32)
        return 0xffffffffu;
    return 0xffffffffu << (32 - prefix_len);
}

#endif
