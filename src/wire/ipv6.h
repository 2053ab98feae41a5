/*
 * ipv6.h — IPv6 headers (RFC 8200 §3), the extension header chain (RFC 8200 §4; RFC 5095, RFC 6946,
 * RFC 7112, RFC 8504 §5.3) and address helpers (RFC 4291).
 */
#ifndef BRISK_WIRE_IPV6_H
#define BRISK_WIRE_IPV6_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BRISK_IPV6_HLEN    40
#define BRISK_IPV6_MIN_MTU 1280 /* RFC 8200 §5: every link carries this much */
#define BRISK_IPV6_ALEN    16

/* Next Header values (IANA "Assigned Internet Protocol Numbers") the walker knows. TCP and UDP are the
 * IPv4 numbers (ipv4.h). */
#define BRISK_IP_PROTO_HOPOPTS  0
#define BRISK_IP_PROTO_ROUTING  43
#define BRISK_IP_PROTO_FRAGMENT 44
#define BRISK_IP_PROTO_ESP      50
#define BRISK_IP_PROTO_AH       51
#define BRISK_IP_PROTO_ICMPV6   58
#define BRISK_IP_PROTO_NONE     59 /* "No Next Header": nothing follows */
#define BRISK_IP_PROTO_DSTOPTS  60

#define BRISK_IPV6_FRAG_HLEN 8

/* Bounds on what one packet may make the walker do (ipv6.c says why these numbers). */
#define BRISK_IPV6_EXT_MAX  8 /* extension headers in one chain */
#define BRISK_IPV6_OPTS_MAX 8 /* non-padding options in one hop-by-hop or destination options header */
#define BRISK_IPV6_PAD_MAX  7 /* consecutive padding bytes (Pad1 and PadN together) */

struct brisk_ipv6_repr {
    uint8_t traffic_class; /* DSCP + ECN */
    uint32_t flow_label;   /* 20 bits */
    uint16_t payload_len;  /* bytes after the fixed header, extension headers included */
    uint8_t next_header;   /* the first header after the fixed one */
    uint8_t hop_limit;
    uint8_t src[BRISK_IPV6_ALEN], dst[BRISK_IPV6_ALEN]; /* as on the wire */
};

/* Parses the fixed header at b, where len is what the frame holds after the link header (it may be longer
 * than 40 + payload_len: Ethernet pads short frames, and the padding is ignored). Checks, in this order:
 *   len >= 40 (BRISK_WIRE_TRUNCATED), version 6 (BAD_VERSION), 40 + payload_len <= len (TRUNCATED), the
 *   source is not multicast nor the loopback address (BAD_ADDR, RFC 4291 §2.7 and §2.5.3).
 * A payload length of 0 is an empty payload: brisk does not take jumbograms (RFC 2675), whose hop-by-hop
 * header then lies outside the payload (the walker calls the chain malformed; a jumbo option inside a
 * payload it does see is an unknown option of type bits 11). Returns BRISK_IPV6_HLEN; the payload is
 * b[40, 40 + payload_len). Extension headers are the walker's (brisk_ipv6_ext_walk). */
int brisk_ipv6_parse(const uint8_t *b, size_t len, struct brisk_ipv6_repr *r);

/* Parses the packet an ICMPv6 error quotes (RFC 4443 §2.4 (c): as much of it as fits in 1280 bytes): the
 * fixed header only, version 6, nothing else — the payload length is the original's, longer than the
 * quote by design, and the addresses are ours. Returns BRISK_IPV6_HLEN, BRISK_WIRE_TRUNCATED (len < 40)
 * or BRISK_WIRE_BAD_VERSION. Walk the quote with brisk_ipv6_ext_walk(b, len, r, ...) to find its
 * transport header. */
int brisk_ipv6_parse_quoted(const uint8_t *b, size_t len, struct brisk_ipv6_repr *r);

/* Writes the 40-byte fixed header; returns BRISK_IPV6_HLEN. */
size_t brisk_ipv6_emit(uint8_t *b, const struct brisk_ipv6_repr *r);

/* Writes an 8-byte fragment header (RFC 8200 §4.5) at b: next header `nh`, offset in BYTES (a multiple of
 * 8, below 65536), the M flag, the identification. Returns BRISK_IPV6_FRAG_HLEN. */
size_t brisk_ipv6_frag_emit(uint8_t *b, uint8_t nh, uint16_t frag_off, int mf, uint32_t id);

/* Why the walker called a chain malformed (brisk_ipv6_ext.bad when it returns BRISK_WIRE_BAD_EXTHDR). */
enum brisk_ipv6_bad {
    BRISK_IPV6_BAD_NONE = 0,
    BRISK_IPV6_BAD_LEN,        /* a header (or its fixed part) runs past the payload */
    BRISK_IPV6_BAD_HBH_POS,    /* a hop-by-hop header not right after the fixed header (RFC 8200 §4.1) */
    BRISK_IPV6_BAD_TOO_MANY,   /* more than BRISK_IPV6_EXT_MAX extension headers */
    BRISK_IPV6_BAD_OPT_LEN,    /* an option runs past the end of its header */
    BRISK_IPV6_BAD_OPT_COUNT,  /* more than BRISK_IPV6_OPTS_MAX non-padding options in one header */
    BRISK_IPV6_BAD_PAD,        /* more than 7 padding bytes in a row, or a PadN whose data is not zero */
    BRISK_IPV6_BAD_FRAG_TWICE, /* a second fragment header */
    BRISK_IPV6_BAD_FRAG_LEN,   /* M set and the fragment not a multiple of 8 bytes (RFC 8200 §4.5) */
    BRISK_IPV6_BAD_FRAG_SIZE,  /* offset + fragment length beyond 65535 (RFC 8200 §4.5) */
    BRISK_IPV6_BAD_FRAG_CHAIN, /* a first fragment without the whole header chain (RFC 8200 §4.5, 7112) */
};

/* What the two high bits of an unrecognised option's type ask for (RFC 8200 §4.2). */
enum brisk_ipv6_optact {
    BRISK_IPV6_OPT_SKIP = 0,               /* 00: skip it, go on */
    BRISK_IPV6_OPT_DISCARD = 1,            /* 01: discard the packet */
    BRISK_IPV6_OPT_DISCARD_ICMP = 2,       /* 10: discard, parameter problem code 2 even to multicast */
    BRISK_IPV6_OPT_DISCARD_ICMP_UCAST = 3, /* 11: the same, but no ICMP when the destination is multicast */
};

static inline enum brisk_ipv6_optact brisk_ipv6_opt_action(uint8_t type)
{
    return (enum brisk_ipv6_optact)(type >> 6);
}

/* Option types the walker handles itself (RFC 8200 §4.2). Every other one is unrecognised. */
#define BRISK_IPV6_OPT_PAD1 0
#define BRISK_IPV6_OPT_PADN 1

/* ICMPv6 parameter problem codes (RFC 4443 §3.4, RFC 7112 §6): what icmp_code holds. */
#define BRISK_IPV6_PP_HEADER  0 /* erroneous header field */
#define BRISK_IPV6_PP_NEXTHDR 1 /* unrecognised Next Header */
#define BRISK_IPV6_PP_OPTION  2 /* unrecognised IPv6 option */
#define BRISK_IPV6_PP_CHAIN   3 /* first fragment has an incomplete header chain */

/* What the walk found. Offsets count from the first byte of the fixed IPv6 header, which is what an ICMPv6
 * parameter problem's pointer counts from (RFC 4443 §3.4). They fit 16 bits: the walk ends within
 * BRISK_IPV6_EXT_MAX headers of at most 2048 bytes each. */
struct brisk_ipv6_ext {
    uint8_t proto;      /* the upper-layer protocol, BRISK_IP_PROTO_NONE, ESP or AH (not walked) */
    uint16_t proto_off; /* where its header starts */
    uint16_t nh_ptr;    /* the Next Header field that named proto (parameter problem code 1 if unknown) */
    uint8_t nhdrs;      /* extension headers stepped over */
    uint8_t nopts;      /* unrecognised options skipped (type bits 00) */

    /* The verdict: discard (an option, a routing header or a malformed chain asks for it) and whether to
     * answer with an ICMPv6 parameter problem of icmp_code at icmp_ptr. RFC 4443 §2.4 (e.3) is applied
     * (no error to a multicast destination, except for option type bits 10); the rest of §2.4 (e) — the
     * link-layer destination, the source address, rate limiting — is the caller's. */
    uint8_t discard, icmp, icmp_code;
    uint16_t icmp_ptr;
    uint8_t bad; /* enum brisk_ipv6_bad */

    /* The unrecognised option that decided the verdict (when opt_action != SKIP). */
    uint8_t opt_type, opt_action;

    /* Routing header (RFC 8200 §4.4), if one was met. */
    uint8_t rh, rh_type, rh_segleft;
    uint16_t rh_off;

    /* Fragment header (RFC 8200 §4.5), if one was met. */
    uint8_t frag, frag_mf, frag_atomic; /* atomic: offset 0 and M 0 (RFC 6946) */
    uint8_t frag_nh;                    /* the fragment header's Next Header */
    uint16_t frag_off;                  /* bytes (the field * 8) */
    uint32_t frag_id;
    uint16_t frag_hdr_off; /* where the fragment header starts: the unfragmentable part ends */
    uint16_t frag_prev_nh; /* the Next Header field that names the fragment header */
};

/* Walks the extension headers of the packet at b (the fixed header first; r from brisk_ipv6_parse or
 * _parse_quoted), within b[40, min(len, 40 + r->payload_len)). Steps over hop-by-hop (only as the first),
 * destination options, routing and fragment headers, up to the first other Next Header value: the upper
 * layer. Every length is checked against the end before a byte past it is read.
 *
 * Returns the offset where the walk stopped (>= 40; proto_off when it reached the upper layer) when the
 * chain is well-formed. Then:
 *   - x->discard: an unrecognised option whose type bits are not 00, or a routing header with segments
 *     left (brisk implements no routing type, so every one is unrecognised — type 0 included, RFC 5095 §3;
 *     a routing header with 0 segments left is ignored, RFC 8200 §4.4). The walk stopped there: proto is
 *     not meaningful. icmp / icmp_code / icmp_ptr say what to answer.
 *   - otherwise, x->frag && !x->frag_atomic: a fragment, for reassembly. A non-first one (offset > 0) stops
 *     the walk at its fragment header: proto is frag_nh and proto_off the fragment's data. A first one is
 *     walked through (its chain must be complete, RFC 7112): proto is the real upper layer.
 *   - otherwise the packet is whole (an atomic fragment is walked as a whole packet, RFC 6946 §4).
 * Returns BRISK_WIRE_TRUNCATED when len < 40, or BRISK_WIRE_BAD_EXTHDR with x->bad saying why; x->icmp,
 * icmp_code and icmp_ptr say whether a parameter problem is due (hop-by-hop not first: code 1 at the
 * Next Header that named it; fragment length or size: code 0 at the payload length or fragment offset;
 * an incomplete first fragment: code 3 at 0). */
int brisk_ipv6_ext_walk(const uint8_t *b, size_t len, const struct brisk_ipv6_repr *r,
                        struct brisk_ipv6_ext *x);

/* The short name of an enum brisk_ipv6_bad value ("len", "hbh_pos", ...), "none" for 0. Never NULL. */
const char *brisk_ipv6_bad_name(unsigned bad);

/* ff00::/8 (RFC 4291 §2.7) */
static inline int brisk_ipv6_is_multicast(const uint8_t a[16])
{
    return a[0] == 0xff;
}

/* fe80::/10 (RFC 4291 §2.5.6) */
static inline int brisk_ipv6_is_link_local(const uint8_t a[16])
{
    return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/* :: (RFC 4291 §2.5.2) */
static inline int brisk_ipv6_is_unspecified(const uint8_t a[16])
{
    static const uint8_t zero[16];
    return memcmp(a, zero, 16) == 0;
}

/* ::1 (RFC 4291 §2.5.3) */
static inline int brisk_ipv6_is_loopback(const uint8_t a[16])
{
    static const uint8_t one[16] = {[15] = 1};
    return memcmp(a, one, 16) == 0;
}

/* ff02::1:ffXX:XXXX, the solicited-node multicast address of `a` (RFC 4291 §2.7.1): where a Neighbour
 * Solicitation for `a` goes. */
static inline void brisk_ipv6_solicited_node(uint8_t out[16], const uint8_t a[16])
{
    static const uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
    memcpy(out, prefix, 13);
    memcpy(out + 13, a + 13, 3);
}

/* Is `a` a solicited-node multicast address (ff02::1:ff00:0/104)? */
static inline int brisk_ipv6_is_solicited_node(const uint8_t a[16])
{
    static const uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
    return memcmp(a, prefix, 13) == 0;
}

/* The Ethernet address an IPv6 multicast address maps to: 33:33 and its last 32 bits (RFC 2464 §7). */
static inline void brisk_ipv6_multicast_mac(uint8_t mac[6], const uint8_t a[16])
{
    mac[0] = 0x33;
    mac[1] = 0x33;
    memcpy(mac + 2, a + 12, 4);
}

/* fe80::/64 with the modified EUI-64 interface identifier of an Ethernet address (RFC 4291 §2.5.6 and
 * appendix A, RFC 4862 §5.3): the universal/local bit flipped, ff:fe in the middle. */
static inline void brisk_ipv6_link_local_from_mac(uint8_t out[16], const uint8_t mac[6])
{
    memset(out, 0, 16);
    out[0] = 0xfe;
    out[1] = 0x80;
    out[8] = (uint8_t)(mac[0] ^ 0x02);
    out[9] = mac[1];
    out[10] = mac[2];
    out[11] = 0xff;
    out[12] = 0xfe;
    out[13] = mac[3];
    out[14] = mac[4];
    out[15] = mac[5];
}

#endif
