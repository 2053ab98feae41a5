/*
 * udp.h — UDP headers and checksums over IPv4 and IPv6 (RFC 768; RFC 8200 §8.1; RFC 1122 §4.1.3.4).
 */
#ifndef BRISK_WIRE_UDP_H
#define BRISK_WIRE_UDP_H

#include <stddef.h>
#include <stdint.h>

#define BRISK_UDP_HLEN     8
#define BRISK_UDP_CSUM_OFF 6 /* offset of the checksum field */

struct brisk_udp_repr {
    uint16_t sport, dport;
    uint16_t len;  /* the length field, header included (parse); emit writes 8 + payload_len */
    uint16_t csum; /* as received (parse): 0 = the sender computed none (IPv4 only); ignored by emit */
    const uint8_t *payload; /* parse: points into the datagram; ignored by emit */
    size_t payload_len;     /* len - 8 */
};

/* Parses the datagram b[0, len) — len is the whole IP payload — carried over IPv4 from src to dst (host
 * order, for the pseudo-header). Returns BRISK_UDP_HLEN or:
 *   BRISK_WIRE_TRUNCATED   len < 8, or the length field is larger than len
 *   BRISK_WIRE_BAD_HDRLEN  the length field is below 8
 *   BRISK_WIRE_BAD_CSUM    verify_csum, the checksum field is not 0 and the sum is wrong
 * A checksum field of 0 means the sender computed none (RFC 768): accepted, r->csum is 0. A length field
 * shorter than len is the datagram; the bytes after it are not UDP's and are ignored (as Linux trims
 * them), and the checksum covers only the datagram. */
int brisk_udp_parse(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, int verify_csum,
                    struct brisk_udp_repr *r);

/* The same over IPv6 (len is the upper-layer length the extension header walk left), where the checksum
 * is mandatory (RFC 8200 §8.1): a checksum field of 0 is BRISK_WIRE_BAD_CSUM whatever verify_csum says.
 * brisk takes no zero-checksum tunnels (RFC 6935, 6936). */
int brisk_udp_parse6(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                     int verify_csum, struct brisk_udp_repr *r);

/* Writes the 8-byte header at b with length 8 + payload_len and a zero checksum; returns BRISK_UDP_HLEN.
 * The caller puts the payload after the header, then fills the checksum (or, over IPv4, may leave 0:
 * "no checksum"). payload_len must be at most 65535 - 8. */
size_t brisk_udp_emit(uint8_t *b, const struct brisk_udp_repr *r);

/* Stores the checksum of the datagram dg[0, dg_len) (header + payload) sent over IPv4 from src to dst, or
 * over IPv6: a computed 0 is sent as 0xffff (RFC 768), since 0 would mean "none" or be invalid. */
void brisk_udp_csum_fill(uint8_t *dg, size_t dg_len, uint32_t src, uint32_t dst);
void brisk_udp_csum_fill6(uint8_t *dg, size_t dg_len, const uint8_t src[16], const uint8_t dst[16]);

#endif
