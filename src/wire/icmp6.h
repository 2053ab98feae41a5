/*
 * icmp6.h — ICMPv6 (RFC 4443) and the Neighbour Discovery messages and options (RFC 4861 §4).
 */
#ifndef BRISK_WIRE_ICMP6_H
#define BRISK_WIRE_ICMP6_H

#include <stddef.h>
#include <stdint.h>

#include "wire/ipv6.h"

#define BRISK_ICMP6_HLEN 8 /* type, code, checksum and the 4 bytes every error and echo has */

/* Message types (RFC 4443 §2.1, RFC 4861 §4). */
enum {
    BRISK_ICMP6_DEST_UNREACH = 1,
    BRISK_ICMP6_PKT_TOO_BIG = 2,
    BRISK_ICMP6_TIME_EXCEEDED = 3,
    BRISK_ICMP6_PARAM_PROB = 4, /* codes: BRISK_IPV6_PP_* (ipv6.h) */
    BRISK_ICMP6_ECHO_REQUEST = 128,
    BRISK_ICMP6_ECHO_REPLY = 129,
    BRISK_ICMP6_ND_RS = 133, /* router solicitation */
    BRISK_ICMP6_ND_RA = 134, /* router advertisement */
    BRISK_ICMP6_ND_NS = 135, /* neighbour solicitation */
    BRISK_ICMP6_ND_NA = 136, /* neighbour advertisement */
    BRISK_ICMP6_ND_REDIRECT = 137,
};

/* Destination unreachable codes (RFC 4443 §3.1). */
enum {
    BRISK_ICMP6_UNREACH_NOROUTE = 0,
    BRISK_ICMP6_UNREACH_ADMIN = 1,
    BRISK_ICMP6_UNREACH_SCOPE = 2,
    BRISK_ICMP6_UNREACH_ADDR = 3,
    BRISK_ICMP6_UNREACH_PORT = 4,
    BRISK_ICMP6_UNREACH_POLICY = 5,
    BRISK_ICMP6_UNREACH_REJECT = 6,
};

/* Time exceeded codes (RFC 4443 §3.3). */
enum {
    BRISK_ICMP6_TIME_HOPLIMIT = 0,
    BRISK_ICMP6_TIME_REASSEMBLY = 1,
};

/* An error carries as much of the invoking packet as fits in a minimum-MTU packet (RFC 4443 §2.4 (c)):
 * 1280 - 40 - 8 bytes. brisk_icmp6_quote_len(n) is what to copy of an n-byte packet. */
#define BRISK_ICMP6_QUOTE_MAX (BRISK_IPV6_MIN_MTU - BRISK_IPV6_HLEN - BRISK_ICMP6_HLEN)

static inline size_t brisk_icmp6_quote_len(size_t n)
{
    return n < BRISK_ICMP6_QUOTE_MAX ? n : BRISK_ICMP6_QUOTE_MAX;
}

/* Every ND message arrives with IP hop limit 255 or it came from off-link (RFC 4861 §6.1, §7.1, §8.1). */
#define BRISK_ND_HOP_LIMIT 255

/* ND option types (RFC 4861 §4.6) and their lengths in 8-byte units where fixed. */
enum {
    BRISK_ND_OPT_SLLA = 1,   /* source link-layer address */
    BRISK_ND_OPT_TLLA = 2,   /* target link-layer address */
    BRISK_ND_OPT_PREFIX = 3, /* prefix information */
    BRISK_ND_OPT_REDIR = 4,  /* redirected header */
    BRISK_ND_OPT_MTU = 5,
};
#define BRISK_ND_OPT_LLA_LEN    8  /* an Ethernet address: length 1 */
#define BRISK_ND_OPT_PREFIX_LEN 32 /* length 4 */
#define BRISK_ND_OPT_MTU_LEN    8  /* length 1 */

#define BRISK_ND_INFINITY 0xffffffffu /* a lifetime that never ends (RFC 4861 §4.6.2) */

struct brisk_nd_prefix {
    uint8_t prefix_len;                          /* bits, 0..128 */
    uint8_t onlink, autonomous;                  /* the L and A flags */
    uint32_t valid_lifetime, preferred_lifetime; /* seconds; BRISK_ND_INFINITY */
    uint8_t prefix[16];
};

/* What the options of an ND message hold, as brisk_icmp6_parse finds them. The first of each single
 * option counts (a duplicate is ignored, as Linux's ndisc_parse_options keeps the first); prefix options
 * can be many, read them with brisk_nd_opt_next. */
struct brisk_nd_opts {
    uint8_t have_sll, have_tll, have_mtu, have_redir;
    uint8_t sll[6], tll[6]; /* Ethernet addresses */
    uint32_t mtu;
    uint8_t nprefix;      /* prefix information options of the right length (saturates at 255) */
    uint8_t bad;          /* known options of the wrong length, ignored (saturates at 255) */
    const uint8_t *redir; /* the redirected header's packet (after its 8-byte option header) */
    size_t redir_len;
};

struct brisk_icmp6_repr {
    uint8_t type, code;
    uint16_t id, seq; /* echo request / reply */
    uint32_t mtu;     /* packet too big */
    uint32_t pointer; /* parameter problem: offset in the invoking packet */

    /* Neighbour Discovery. nd is set by parse for RS / RA / NS / NA / redirect: the caller must drop the
     * message unless the IP hop limit was BRISK_ND_HOP_LIMIT (the parser does not see it). */
    uint8_t nd;
    uint8_t target[16];                           /* NS, NA, redirect */
    uint8_t dest[16];                             /* redirect: the destination being redirected */
    uint8_t na_router, na_solicited, na_override; /* NA: the R, S, O flags */
    uint8_t ra_hop_limit;                         /* RA: cur hop limit, 0 = unspecified */
    uint8_t ra_managed, ra_other;                 /* RA: the M and O flags */
    uint8_t ra_flags;          /* RA: the whole flag byte (parse); emit ORs M and O into it */
    uint16_t ra_lifetime;      /* RA: router lifetime, seconds; 0 = not a default router */
    uint32_t ra_reachable;     /* RA: reachable time, ms; 0 = unspecified */
    uint32_t ra_retrans;       /* RA: retrans timer, ms; 0 = unspecified */
    struct brisk_nd_opts opts; /* parse only */

    /* After the type's fixed part: echo data, the invoking packet of an error, ND options. */
    const uint8_t *payload;
    size_t payload_len;
};

/* The fixed part of a message of this type: 8 for errors (every type below 128) and echo, 8 / 16 / 24 / 24
 * / 40 for RS / RA / NS / NA / redirect, 4 for any other informational type. */
size_t brisk_icmp6_fixed_len(uint8_t type);

/* Parses the ICMPv6 message b[0, len) — len is the upper-layer length (what the extension header walk
 * left of the payload) — sent from src to dst, and verifies the checksum over the pseudo-header and the
 * whole message (RFC 4443 §2.3; mandatory). Checks, in this order:
 *   len >= 4 (BRISK_WIRE_TRUNCATED), the checksum (BAD_CSUM), len >= the type's fixed part (TRUNCATED),
 *   and for ND messages RFC 4861's validity rules that need no state (BAD_ND): code 0; every option's
 *   length nonzero and inside the message (§4.6); NS and NA targets not multicast (§7.1); an NS from the
 *   unspecified address goes to a solicited-node address and has no source link-layer address option, an
 *   RS from it has none either (§6.1.1, §7.1.1); an NA to a multicast address has S clear (§7.1.2); RA
 *   and redirect come from a link-local address (§6.1.2, §8.1); a redirect's destination is not multicast
 *   and its target is link-local or the destination itself (§8.1).
 * Not checked here: the IP hop limit (r->nd says it must be 255), and whatever needs state (a redirect from
 * the current first-hop router, the NA of an address being checked for duplicates). Known options of the
 * wrong length are ignored and counted in opts.bad, not fatal: RFC 4861 asks only that unknown ones be
 * skipped. Returns the fixed part's length; the payload points into b. */
int brisk_icmp6_parse(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                      struct brisk_icmp6_repr *r);

/* Writes the message: copies the payload to b + fixed part (memmove: it may already sit there, or overlap),
 * writes the fixed fields of r->type (the others zero), and stores the checksum for src -> dst. Returns the
 * message length. ND options go in as payload, built with the brisk_nd_opt_*_emit functions below. */
size_t brisk_icmp6_emit(uint8_t *b, const struct brisk_icmp6_repr *r, const uint8_t src[16],
                        const uint8_t dst[16]);

/* One ND option as brisk_nd_opt_next finds it. */
struct brisk_nd_opt {
    uint8_t type;
    const uint8_t *data; /* the whole option, type and length bytes included */
    size_t len;          /* bytes: the length field * 8 */
};

/* Steps through the options opts[0, len) (an ND message's payload) from *pos: returns 1 and the option at
 * *pos (moving *pos past it), 0 at the end, or BRISK_WIRE_BAD_ND for a zero length or one running past the
 * end (RFC 4861 §4.6: the message is invalid). */
int brisk_nd_opt_next(const uint8_t *opts, size_t len, size_t *pos, struct brisk_nd_opt *o);

/* Reads a prefix information option (RFC 4861 §4.6.2). Returns 0, or BRISK_WIRE_BAD_OPTION (not a prefix
 * option, not 32 bytes, or a prefix length above 128). RFC 4862 §5.5.3's rules (preferred lifetime above
 * the valid one, a link-local prefix) are the caller's: they say what to do with a well-formed option. */
int brisk_nd_opt_prefix(const struct brisk_nd_opt *o, struct brisk_nd_prefix *p);

/* ND option emitters: each writes one option at b and returns its length. */
size_t brisk_nd_opt_lla_emit(uint8_t *b, uint8_t type, const uint8_t mac[6]); /* SLLA or TLLA: 8 */
size_t brisk_nd_opt_prefix_emit(uint8_t *b, const struct brisk_nd_prefix *p); /* 32 */
size_t brisk_nd_opt_mtu_emit(uint8_t *b, uint32_t mtu);                       /* 8 */

#endif
