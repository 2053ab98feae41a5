/*
 * ipv4.c — IPv4 header parse and emit (RFC 791 §3.1; the host requirements of RFC 1122 §3.2.1).
 *
 * brisk_ipv4_parse validates a received header in the order RFC 1122 §3.2.1.1-2 and Linux's ip_rcv_core
 * suggest — length, version, header length, total length, checksum — so each malformed datagram gets exactly
 * one reason, and it never reads a byte before checking the buffer holds it. Options (IHL > 5) are skipped:
 * a host may ignore the ones it does not implement (RFC 1122 §3.2.1.8), and brisk implements none.
 * Fragments are parsed like any datagram; brisk_ipv4_is_fragment lets the stack drop them (no reassembly).
 *
 * Source addresses: RFC 1122 §3.2.1.3 lists forms that must never appear as the source of a datagram on the
 * wire, and a host discards such datagrams. The parser rejects (BRISK_WIRE_BAD_ADDR) the ones that are
 * invalid whatever the local configuration: multicast 224/4, limited broadcast 255.255.255.255, "this
 * network" 0/8 (0.0.0.0 is allowed only while a host boots with BOOTP/DHCP, which brisk does not speak) and
 * loopback 127/8 (must not leave a host). Checks that depend on configuration — a directed broadcast of our
 * own subnet, our own address as source — are the stack's (src/net/ip_input.c). The destination is not
 * checked here for the same reason.
 *
 * brisk_ipv4_parse_quoted reads the header an ICMP error quotes, which is cut short by design; and
 * brisk_ipv4_emit writes the fixed 20-byte header brisk sends (no options) with its checksum.
 */
#include "wire/ipv4.h"

#include "wire/csum.h"
#include "wire/wire.h"

#define IP_FLAG_DF      0x4000
#define IP_FLAG_MF      0x2000
#define IP_FRAG_OFFMASK 0x1fff

/* Reads the fields of a header whose length (hlen) has been checked. Inline: every packet received comes
 * here, and with a second caller (the ICMP error's quoted header) LTO stopped inlining it. */
__attribute__((always_inline)) static inline void read_fields(const uint8_t *b, size_t hlen, struct brisk_ipv4_repr *r)
{
    uint16_t frag = brisk_get16(b + 6);
    r->hdr_len = (uint8_t)hlen;
    r->tos = b[1];
    r->total_len = brisk_get16(b + 2);
    r->id = brisk_get16(b + 4);
    r->df = (frag & IP_FLAG_DF) != 0;
    r->mf = (frag & IP_FLAG_MF) != 0;
    r->frag_off = (uint16_t)((frag & IP_FRAG_OFFMASK) * 8);
    r->ttl = b[8];
    r->proto = b[9];
    r->src = brisk_get32(b + 12);
    r->dst = brisk_get32(b + 16);
}

/* Version and IHL, the checks both parsers share. Returns the header length or a reason. */
static int check_header_len(const uint8_t *b, size_t len)
{
    if (len < BRISK_IPV4_HLEN)
        return BRISK_WIRE_TRUNCATED;
    if (b[0] >> 4 != 4)
        return BRISK_WIRE_BAD_VERSION;
    size_t hlen = (size_t)(b[0] & 0x0f) * 4;
    if (hlen < BRISK_IPV4_HLEN)
        return BRISK_WIRE_BAD_HDRLEN;
    if (hlen > len)
        return BRISK_WIRE_TRUNCATED;
    return (int)hlen;
}

/* RFC 1122 §3.2.1.3 sources that no host may send from, whatever the local configuration. */
static int bad_source(uint32_t src)
{
    return brisk_ipv4_is_multicast(src) || brisk_ipv4_is_broadcast_limited(src) ||
           brisk_ipv4_is_zeronet(src) || brisk_ipv4_is_loopback(src);
}

int brisk_ipv4_parse(const uint8_t *b, size_t len, struct brisk_ipv4_repr *r)
{
    int hlen = check_header_len(b, len);
    if (hlen < 0)
        return hlen;
    uint16_t total = brisk_get16(b + 2);
    if (total < hlen)
        return BRISK_WIRE_BAD_TOTLEN;
    if (total > len)
        return BRISK_WIRE_TRUNCATED;
    if (brisk_csum_hdr(b, (size_t)hlen) != 0)
        return BRISK_WIRE_BAD_CSUM;
    if (bad_source(brisk_get32(b + 12)))
        return BRISK_WIRE_BAD_ADDR;
    read_fields(b, (size_t)hlen, r);
    return hlen;
}

int brisk_ipv4_parse_quoted(const uint8_t *b, size_t len, struct brisk_ipv4_repr *r)
{
    int hlen = check_header_len(b, len);
    if (hlen < 0)
        return hlen;
    if (len - (size_t)hlen < 8)
        return BRISK_WIRE_TRUNCATED;
    read_fields(b, (size_t)hlen, r);
    return hlen;
}

size_t brisk_ipv4_emit(uint8_t *b, const struct brisk_ipv4_repr *r)
{
    uint16_t frag = (uint16_t)((r->frag_off / 8) & IP_FRAG_OFFMASK);
    if (r->df)
        frag |= IP_FLAG_DF;
    if (r->mf)
        frag |= IP_FLAG_MF;
    b[0] = 0x45;
    b[1] = r->tos;
    brisk_put16(b + 2, r->total_len);
    brisk_put16(b + 4, r->id);
    brisk_put16(b + 6, frag);
    b[8] = r->ttl;
    b[9] = r->proto;
    brisk_put32(b + 12, r->src);
    brisk_put32(b + 16, r->dst);
    /* The checksum from the field values rather than from the bytes just stored: reading back words that
     * straddle those 8- and 16-bit stores defeats store-to-load forwarding (a stall per packet). */
    uint32_t sum = 0x4500u + r->tos + r->total_len + r->id + frag + ((uint32_t)r->ttl << 8 | r->proto) +
                   (r->src >> 16) + (r->src & 0xffffu) + (r->dst >> 16) + (r->dst & 0xffffu);
    sum = (sum & 0xffffu) + (sum >> 16); /* ten 16-bit terms: two folds suffice */
    sum += sum >> 16;
    brisk_put16(b + 10, (uint16_t)~sum);
    return BRISK_IPV4_HLEN;
}
