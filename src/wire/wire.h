/*
 * wire.h — what every parser and emitter in src/wire/ shares: the reasons a parse can fail, and big-endian
 * loads and stores.
 *
 * src/wire/ is pure: each module turns bytes into a `repr` struct (parse) or a repr into bytes (emit), and
 * nothing else. No state, no allocation, no trust in the input: a parser checks that a field lies inside the
 * buffer before it reads it, and reports a malformed header as one of the negative reasons below, which the
 * stack turns into a counted drop. A parser returns the header length (>= 0) on success.
 *
 * Every multi-byte field on the wire is big-endian ("network order"). brisk keeps every value in a repr in
 * host order — addresses included — and converts only here, with brisk_get16/32 and brisk_put16/32, which
 * assemble bytes one at a time: no alignment requirement, no aliasing question, and compilers turn them into
 * a single load/store plus a byte swap.
 */
#ifndef BRISK_WIRE_WIRE_H
#define BRISK_WIRE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Why a parser rejected its input. The stack maps each reason to a counter. */
enum brisk_wire_err {
    BRISK_WIRE_TRUNCATED = -1,   /* buffer shorter than the header or the declared length */
    BRISK_WIRE_BAD_VERSION = -2, /* IPv4 version != 4, IPv6 version != 6 */
    BRISK_WIRE_BAD_HDRLEN = -3,  /* IPv4 IHL < 5, TCP data offset < 5 */
    BRISK_WIRE_BAD_TOTLEN = -4,  /* IPv4 total length < header length */
    BRISK_WIRE_BAD_CSUM = -5,    /* checksum mismatch */
    BRISK_WIRE_BAD_OPTION = -6,  /* malformed TCP option (GSO only: a received one is ignored, opts.bad) */
    BRISK_WIRE_UNSUPPORTED = -7, /* VLAN-tagged Ethernet; ARP that is not Ethernet/IPv4 or has a bad op */
    BRISK_WIRE_BAD_ADDR = -8,    /* IPv4 / IPv6 source that no host may use (see ipv4.c, ipv6.c) */
    BRISK_WIRE_BAD_EXTHDR = -9,  /* malformed IPv6 extension header chain (ipv6.h: brisk_ipv6_ext.bad) */
    BRISK_WIRE_BAD_ND = -10,     /* Neighbour Discovery message failing RFC 4861's validity checks */
};

/* The short name of a parse result: "ok" for any value >= 0, "truncated", "bad_version", ... for the
 * reasons above, "unknown" for anything else. Never NULL. */
static inline const char *brisk_wire_err_name(int err)
{
    if (err >= 0)
        return "ok";
    switch (err) {
    case BRISK_WIRE_TRUNCATED:
        return "truncated";
    case BRISK_WIRE_BAD_VERSION:
        return "bad_version";
    case BRISK_WIRE_BAD_HDRLEN:
        return "bad_hdrlen";
    case BRISK_WIRE_BAD_TOTLEN:
        return "bad_totlen";
    case BRISK_WIRE_BAD_CSUM:
        return "bad_csum";
    case BRISK_WIRE_BAD_OPTION:
        return "bad_option";
    case BRISK_WIRE_UNSUPPORTED:
        return "unsupported";
    case BRISK_WIRE_BAD_ADDR:
        return "bad_addr";
    case BRISK_WIRE_BAD_EXTHDR:
        return "bad_exthdr";
    case BRISK_WIRE_BAD_ND:
        return "bad_nd";
    default:
        return "unknown";
    }
}

/* Big-endian loads and stores at any alignment. On a little-endian host one swapped 16- or 32-bit access
 * each: built from bytes, the compiler merges a header's fields in stack slots and reloads them as one
 * vector, a load that cannot be forwarded from those stores (it was half of brisk_tcp_emit's time). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BRISK_WIRE_SWAP16(v) __builtin_bswap16(v)
#define BRISK_WIRE_SWAP32(v) __builtin_bswap32(v)
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BRISK_WIRE_SWAP16(v) (v)
#define BRISK_WIRE_SWAP32(v) (v)
#else
#error "brisk needs __BYTE_ORDER__ (gcc or clang)"
#endif

static inline uint16_t brisk_get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return BRISK_WIRE_SWAP16(v);
}

static inline uint32_t brisk_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return BRISK_WIRE_SWAP32(v);
}

static inline void brisk_put16(uint8_t *p, uint16_t v)
{
    v = BRISK_WIRE_SWAP16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void brisk_put32(uint8_t *p, uint32_t v)
{
    v = BRISK_WIRE_SWAP32(v);
    memcpy(p, &v, sizeof(v));
}

#endif
