/*
 * udp.c — UDP header parse and emit, and UDP checksums over IPv4 and IPv6 (RFC 768; RFC 8200 §8.1;
 * RFC 1122 §4.1.3.4).
 *
 * The header is four 16-bit fields (RFC 768): source port, destination port, length (header and data) and
 * checksum. The checksum is the Internet checksum over a pseudo-header and the datagram: for IPv4 the
 * addresses, zero, protocol 17 and the UDP length (RFC 768); for IPv6 the addresses, the 32-bit
 * upper-layer length and next header 17 (RFC 8200 §8.1). Both use the UDP length field, not the IP
 * payload length: when the IP payload is longer, the extra bytes are not UDP's (brisk ignores them, as
 * Linux's __udp4_lib_rcv trims them) and RFC 768 does not count them.
 *
 * Zero is special. A checksum of 0 on the wire means "the sender computed none" over IPv4 (RFC 768;
 * RFC 1122 §4.1.3.4 lets a host accept those), and is invalid over IPv6, where the checksum is mandatory
 * (RFC 8200 §8.1: "IPv6 receivers must discard UDP packets containing a zero checksum"). So a computed
 * checksum of 0 is sent as 0xffff, its one's-complement twin (RFC 768): the receiver's sum over it is
 * the same.
 *
 * As brisk_tcp_emit, brisk_udp_emit writes only the header: the payload is put after it by the caller
 * (the socket's data, copied once), then the checksum is filled over both.
 */
#include "wire/udp.h"

#include "wire/csum.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

/* The checks both families share; returns BRISK_UDP_HLEN or a reason, and fills r. */
static int parse_common(const uint8_t *b, size_t len, struct brisk_udp_repr *r)
{
    if (len < BRISK_UDP_HLEN)
        return BRISK_WIRE_TRUNCATED;
    uint16_t ulen = brisk_get16(b + 4);
    if (ulen < BRISK_UDP_HLEN)
        return BRISK_WIRE_BAD_HDRLEN;
    if (ulen > len)
        return BRISK_WIRE_TRUNCATED;
    r->sport = brisk_get16(b);
    r->dport = brisk_get16(b + 2);
    r->len = ulen;
    r->csum = brisk_get16(b + 6);
    r->payload = b + BRISK_UDP_HLEN;
    r->payload_len = (size_t)ulen - BRISK_UDP_HLEN;
    return BRISK_UDP_HLEN;
}

int brisk_udp_parse(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, int verify_csum,
                    struct brisk_udp_repr *r)
{
    struct brisk_udp_repr t;
    int rc = parse_common(b, len, &t);
    if (rc < 0)
        return rc;
    if (verify_csum && t.csum != 0) {
        uint32_t sum = brisk_csum_pseudo(src, dst, BRISK_IP_PROTO_UDP, t.len);
        if (brisk_csum_fold(brisk_csum_add(sum, b, t.len)) != 0)
            return BRISK_WIRE_BAD_CSUM;
    }
    *r = t;
    return rc;
}

int brisk_udp_parse6(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                     int verify_csum, struct brisk_udp_repr *r)
{
    struct brisk_udp_repr t;
    int rc = parse_common(b, len, &t);
    if (rc < 0)
        return rc;
    if (t.csum == 0)
        return BRISK_WIRE_BAD_CSUM;
    if (verify_csum) {
        uint32_t sum = brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_UDP, t.len);
        if (brisk_csum_fold(brisk_csum_add(sum, b, t.len)) != 0)
            return BRISK_WIRE_BAD_CSUM;
    }
    *r = t;
    return rc;
}

size_t brisk_udp_emit(uint8_t *b, const struct brisk_udp_repr *r)
{
    brisk_put16(b, r->sport);
    brisk_put16(b + 2, r->dport);
    brisk_put16(b + 4, (uint16_t)(BRISK_UDP_HLEN + r->payload_len));
    brisk_put16(b + 6, 0);
    return BRISK_UDP_HLEN;
}

/* Stores the checksum for a datagram whose pseudo-header sums to `pseudo`. */
static void fill(uint8_t *dg, size_t dg_len, uint32_t pseudo)
{
    brisk_put16(dg + BRISK_UDP_CSUM_OFF, 0);
    uint16_t c = brisk_csum_fold(brisk_csum_add(pseudo, dg, dg_len));
    brisk_put16(dg + BRISK_UDP_CSUM_OFF, c == 0 ? 0xffff : c);
}

void brisk_udp_csum_fill(uint8_t *dg, size_t dg_len, uint32_t src, uint32_t dst)
{
    fill(dg, dg_len, brisk_csum_pseudo(src, dst, BRISK_IP_PROTO_UDP, (uint16_t)dg_len));
}

void brisk_udp_csum_fill6(uint8_t *dg, size_t dg_len, const uint8_t src[16], const uint8_t dst[16])
{
    fill(dg, dg_len, brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_UDP, (uint32_t)dg_len));
}
