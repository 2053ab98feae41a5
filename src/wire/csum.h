/*
 * csum.h — the Internet checksum (RFC 1071) and its incremental update (RFC 1624).
 *
 * Sums are carried "unfolded" in a uint32_t: any value congruent, modulo 0xffff, to the one's-complement sum
 * of the big-endian 16-bit words seen so far. Accumulate with brisk_csum_add / brisk_csum_pseudo (adding two
 * unfolded sums with + is fine as long as it cannot overflow 32 bits — a handful of them never does), then
 * brisk_csum_fold gives the 16-bit value to store in a header (host order; store it with brisk_put16).
 * A received header is correct when brisk_csum_fold over it, checksum field included, is 0.
 */
#ifndef BRISK_WIRE_CSUM_H
#define BRISK_WIRE_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Adds `len` bytes at `data` (any alignment, any length; an odd trailing byte is padded with a zero byte) to
 * the unfolded sum `sum`, reading them as big-endian 16-bit words that start at data[0]. */
uint32_t brisk_csum_add(uint32_t sum, const void *data, size_t len);

/* Folds the carries of `sum` into 16 bits and complements: the checksum to store (host order). */
uint16_t brisk_csum_fold(uint32_t sum);

/* The unfolded sum of the IPv4 pseudo-header (RFC 9293 §3.1, RFC 768): addresses, protocol, L4 length. */
uint32_t brisk_csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t l4_len);

/* The unfolded sum of the IPv6 pseudo-header (RFC 8200 §8.1): source and destination address (16 bytes
 * each, as on the wire), the 32-bit upper-layer packet length and the 8-bit next header value (the upper
 * protocol, not an extension header's). With a routing header the destination is the final one. */
uint32_t brisk_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t l4_len);

/* RFC 1624 eqn. 3: the checksum `csum` of a header in which one 16-bit (32-bit, at an even offset) field
 * changed from `old` to `new`, without touching the rest of the header. */
uint16_t brisk_csum_update16(uint16_t csum, uint16_t old16, uint16_t new16);
uint16_t brisk_csum_update32(uint16_t csum, uint32_t old32, uint32_t new32);

/* The checksum of a buffer: brisk_csum_fold(brisk_csum_add(0, data, len)). */
uint16_t brisk_csum_buf(const void *data, size_t len);

/* The same for a header of a whole number of 32-bit words, at most 60 bytes (an IPv4 header, options
 * included): every packet has one, so it is summed word by word without the general loop's setup. */
uint16_t brisk_csum_hdr(const void *data, size_t len);

/* What a checksum-offloading device does with a CHECKSUM_PARTIAL packet (netdev.h): the 16-bit field at
 * buf + csum_start + csum_offset holds the folded, uncomplemented pseudo-header sum; sum the bytes from
 * csum_start to len (that field included) and store the final checksum there. Does nothing when the field
 * does not lie inside [csum_start, len). */
void brisk_csum_complete_partial(uint8_t *buf, size_t len, size_t csum_start, size_t csum_offset);

#endif
