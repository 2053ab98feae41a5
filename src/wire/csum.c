/*
 * csum.c — the Internet checksum: RFC 1071 (computation), RFC 1624 (incremental update), and the device side
 * of checksum offload.
 *
 * The checksum is the one's complement of the one's-complement sum of the data as big-endian 16-bit words.
 * Two properties of one's-complement addition (RFC 1071 §2) make it cheap:
 *   - it is associative and commutative, and 2^16 == 1 modulo 0xffff, so words may be summed 32 bits at a
 *     time into a wide accumulator and the carries folded back in at the end;
 *   - it is byte-order independent: summing byte-swapped words gives the byte-swapped sum. So
 *     brisk_csum_add loads 8 bytes at a time in *host* order (memcpy: any alignment, no aliasing UB), adds
 *     their two 32-bit halves to 64-bit accumulators, folds to 16 bits, and swaps the bytes once at the end
 *     on a little-endian host.
 * The result keeps the property the naive 16-bit loop has: the folded sum is 0 only for all-zero data, so
 * brisk_csum_fold never disagrees with a reference implementation about 0x0000 vs 0xffff.
 *
 * brisk_csum_update16/32 implement RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), which — unlike RFC 1141's
 * eqn. 2 — gives the same answer as recomputing even when the new sum is 0xffff (checksum 0x0000).
 *
 * brisk_csum_pseudo and brisk_csum_pseudo6 sum the IPv4 (RFC 9293 §3.1, RFC 768) and IPv6 (RFC 8200 §8.1)
 * pseudo-headers that TCP, UDP and ICMPv6 checksums cover.
 *
 * brisk_csum_complete_partial is what a NIC with checksum offload does with a CHECKSUM_PARTIAL packet; the
 * simulator's NIC model and software GSO use it.
 */
#include "wire/csum.h"

#include <string.h>

#include "wire/wire.h"

/* Bytes summed before the accumulators are folded: each 32-byte step adds < 2^35, so 2^30 bytes stay far
 * below 2^64 and any size_t length is correct. */
#define RUN_MAX ((size_t)1 << 30)

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* Folds a wide sum into 16 bits with end-around carries; nonzero stays nonzero. */
static uint32_t fold16(uint64_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint32_t)s;
}

static uint64_t halves(uint64_t w)
{
    return (w & 0xffffffffu) + (w >> 32);
}

uint32_t brisk_csum_add(uint32_t sum, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t total = 0; /* host-order words, folded to 16 bits after each run */

    while (len >= 8) {
        size_t n = len < RUN_MAX ? len & ~(size_t)7 : RUN_MAX;
        uint64_t a = 0, b = 0; /* two accumulators: two independent add chains */
        len -= n;
        for (; n >= 32; n -= 32, p += 32) {
            a += halves(load64(p)) + halves(load64(p + 8));
            b += halves(load64(p + 16)) + halves(load64(p + 24));
        }
        for (; n > 0; n -= 8, p += 8)
            a += halves(load64(p));
        total = fold16(total + fold16(a) + fold16(b));
    }
    if (len > 0) {
        /* The tail continues the word sequence, so a zero pad after it is the RFC's odd-byte padding. */
        uint8_t tail[8] = {0};
        memcpy(tail, p, len);
        total = fold16(total + halves(load64(tail)));
    }

    uint32_t s16 = fold16(total);
    if (host_is_little_endian())
        s16 = ((s16 & 0xff) << 8) | (s16 >> 8);
    uint64_t r = (uint64_t)sum + s16;
    return (uint32_t)((r & 0xffffffffu) + (r >> 32));
}

uint16_t brisk_csum_fold(uint32_t sum)
{
    return (uint16_t)~fold16(sum);
}

uint32_t brisk_csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t l4_len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + l4_len;
}

uint32_t brisk_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t l4_len)
{
    /* Sixteen 16-bit words of address and four small terms: at most 20 * 0xffff, no overflow. */
    uint32_t sum = (l4_len >> 16) + (l4_len & 0xffff) + proto;
    for (size_t i = 0; i < 16; i += 2)
        sum += brisk_get16(src + i) + brisk_get16(dst + i);
    return sum;
}

uint16_t brisk_csum_update16(uint16_t csum, uint16_t old16, uint16_t new16)
{
    /* ~HC is the old sum; adding ~m removes m from it, adding m' puts the new value in. */
    uint32_t s = (uint32_t)(uint16_t)~csum + (uint16_t)~old16 + new16;
    return (uint16_t)~fold16(s);
}

uint16_t brisk_csum_update32(uint16_t csum, uint32_t old32, uint32_t new32)
{
    uint32_t old_hi = old32 >> 16, old_lo = old32 & 0xffff;
    uint32_t s = (uint32_t)(uint16_t)~csum;
    s += (0xffff - old_hi) + (0xffff - old_lo); /* ~m over 16 bits, for each half */
    s += (new32 >> 16) + (new32 & 0xffff);
    return (uint16_t)~fold16(s);
}

uint16_t brisk_csum_buf(const void *data, size_t len)
{
    return brisk_csum_fold(brisk_csum_add(0, data, len));
}

uint16_t brisk_csum_hdr(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t s = 0;
    for (size_t i = 0; i + 4 <= len; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        s += w; /* host-order 32-bit words: at most 15 of them, no overflow */
    }
    uint32_t s16 = fold16(s);
    if (host_is_little_endian())
        s16 = ((s16 & 0xff) << 8) | (s16 >> 8);
    return (uint16_t)~s16;
}

void brisk_csum_complete_partial(uint8_t *buf, size_t len, size_t csum_start, size_t csum_offset)
{
    if (csum_start > len || csum_offset > len - csum_start || len - csum_start - csum_offset < 2)
        return;
    /* The field already holds the pseudo-header sum, so summing over it folds that in. */
    uint32_t sum = brisk_csum_add(0, buf + csum_start, len - csum_start);
    brisk_put16(buf + csum_start + csum_offset, brisk_csum_fold(sum));
}
