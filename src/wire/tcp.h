/*
 * tcp.h — TCP header and options (RFC 9293 §3.1; MSS RFC 6691, window scale and timestamps RFC 7323, SACK
 * RFC 2018), TCP checksums, and sequence-number comparisons.
 */
#ifndef BRISK_WIRE_TCP_H
#define BRISK_WIRE_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "wire/eth.h"
#include "wire/ipv4.h"

#define BRISK_TCP_HLEN           20 /* without options */
#define BRISK_TCP_HLEN_MAX       60
#define BRISK_TCP_OPTS_MAX       40 /* option space: 60 - 20 */
#define BRISK_TCPOLEN_TS_ALIGNED 12 /* the timestamp option with two NOPs, as on every segment once agreed   \
                                     */
/* The headers each wire segment of established TCP carries: Ethernet, IPv4, TCP with timestamps (66 bytes):
 * what a packet of n segments adds to its payload on the wire (pacing, the device's wire-time estimate). */
#define BRISK_TCP_SEG_WIRE_HDRS (BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_TCP_HLEN + BRISK_TCPOLEN_TS_ALIGNED)
/* Room a super-segment's headers may take at their largest (IPv4 + the longest TCP header): what a device's
 * gso_max_size leaves for payload. */
#define BRISK_TCP_GSO_HDR_ROOM (BRISK_IPV4_HLEN + BRISK_TCP_HLEN_MAX)
#define BRISK_TCP_CSUM_OFF     16 /* offset of the checksum field (BRISK_PKT_CSUM_PARTIAL's csum_offset) */

#define BRISK_TCP_FIN 0x01
#define BRISK_TCP_SYN 0x02
#define BRISK_TCP_RST 0x04
#define BRISK_TCP_PSH 0x08
#define BRISK_TCP_ACK 0x10
#define BRISK_TCP_URG 0x20
#define BRISK_TCP_ECE 0x40
#define BRISK_TCP_CWR 0x80

/* Option kinds (IANA "TCP Option Kind Numbers"). */
#define BRISK_TCPOPT_EOL       0
#define BRISK_TCPOPT_NOP       1
#define BRISK_TCPOPT_MSS       2
#define BRISK_TCPOPT_WSCALE    3
#define BRISK_TCPOPT_SACK_PERM 4
#define BRISK_TCPOPT_SACK      5
#define BRISK_TCPOPT_TS        8

#define BRISK_TCP_MAX_SACK 4

struct brisk_tcp_opts {
    uint8_t mss_ok, wscale_ok, sack_perm, ts_ok; /* presence */
    uint16_t mss;
    uint8_t wscale; /* as received (the caller clamps to 14 per RFC 7323 §2.3) */
    uint8_t bad;    /* malformed options met and ignored (0..40; see brisk_tcp_parse) */
    uint32_t ts_val, ts_ecr;
    uint8_t nsack; /* SACK blocks present (0..4) */
    struct {
        uint32_t start, end;
    } sack[BRISK_TCP_MAX_SACK];
};

struct brisk_tcp_repr {
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;   /* BRISK_TCP_FIN ... BRISK_TCP_CWR */
    uint8_t hdr_len; /* bytes incl. options (parse); ignored by emit */
    uint16_t window; /* raw, unscaled */
    uint16_t urg;
    struct brisk_tcp_opts opts;
    const uint8_t *payload; /* parse: points into the segment; ignored by emit */
    size_t payload_len;
};

/* Parses the segment b[0, len) — len is the whole IP payload — from src to dst (host order, for the
 * pseudo-header). Returns the header length or:
 *   BRISK_WIRE_TRUNCATED   len < 20, or the data offset points past len
 *   BRISK_WIRE_BAD_HDRLEN  data offset < 5, or len > 65535 (cannot be an IPv4 payload)
 *   BRISK_WIRE_BAD_CSUM    verify_csum and the checksum (pseudo-header included) is wrong
 * A malformed option never fails the parse: as Linux's tcp_parse_options, a length byte below 2, a length
 * running past the header, or a kind with no room for its length byte ends the option list (what came
 * before it stands), and a known kind with the wrong length (MSS 4, WS 3, SACK-permitted 2, SACK 2 + 8n,
 * TS 10) is skipped by its length like an unknown one. Each such option counts one in opts.bad.
 * Option presence is reported whatever the segment's flags: ignoring MSS or WS outside a SYN is the
 * caller's business (RFC 7323 §2.2). An option that appears twice: the last one wins. EOL ends the list;
 * unknown kinds are skipped by their length. */
int brisk_tcp_parse(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, int verify_csum,
                    struct brisk_tcp_repr *r);
/* The same for a segment carried by IPv6: the checksum covers RFC 8200 §8.1's pseudo-header. */
int brisk_tcp_parse6(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                     int verify_csum, struct brisk_tcp_repr *r);

/* The bytes brisk_tcp_emit writes for these options (a multiple of 4, at most 40). */
size_t brisk_tcp_opts_len(const struct brisk_tcp_opts *o);

/* The number of SACK blocks brisk_tcp_emit writes for these options: o->nsack (at most 4), reduced so that
 * everything fits the 40-byte option space (3 with timestamps, as in Linux). */
unsigned brisk_tcp_sack_fit(const struct brisk_tcp_opts *o);

/* Writes the header and options at b (Linux layout: MSS; SACK-permitted and timestamps sharing a word, or
 * NOP,NOP,TS; NOP,NOP,SACK-permitted without timestamps; NOP,WS; NOP,NOP,SACK blocks), the data offset, and
 * a zero checksum. Returns the header length. r->hdr_len and r->payload are ignored: the caller puts the
 * payload after the header, then fills the checksum. */
size_t brisk_tcp_emit(uint8_t *restrict b, const struct brisk_tcp_repr *restrict r);

/* Stores the full checksum of the segment seg[0, seg_len) (header + payload) sent from src to dst. */
void brisk_tcp_csum_fill(uint8_t *seg, size_t seg_len, uint32_t src, uint32_t dst);
void brisk_tcp_csum_fill6(uint8_t *seg, size_t seg_len, const uint8_t src[16], const uint8_t dst[16]);

/* Stores the CHECKSUM_PARTIAL seed (Linux convention): the pseudo-header sum of (src, dst, TCP, seg_len),
 * folded to 16 bits but NOT complemented, i.e. ~brisk_csum_fold(brisk_csum_pseudo(...)). A device then sums
 * the segment from its first byte — over this seed — and stores the complement of the fold:
 * brisk_csum_complete_partial(frame, len, tcp_offset, BRISK_TCP_CSUM_OFF) gives exactly the bytes
 * brisk_tcp_csum_fill would have written. */
void brisk_tcp_csum_fill_partial(uint8_t *seg, size_t seg_len, uint32_t src, uint32_t dst);
void brisk_tcp_csum_fill_partial6(uint8_t *seg, size_t seg_len, const uint8_t src[16], const uint8_t dst[16]);

/* Sequence-number comparisons modulo 2^32 (RFC 9293 §3.4): a is "less than" b when the signed 32-bit
 * difference a - b is negative, i.e. b is less than 2^31 ahead of a. */
static inline int brisk_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static inline int brisk_seq_leq(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) <= 0;
}

static inline int brisk_seq_gt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

static inline int brisk_seq_geq(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}

static inline uint32_t brisk_seq_max(uint32_t a, uint32_t b)
{
    return brisk_seq_gt(a, b) ? a : b;
}

static inline uint32_t brisk_seq_min(uint32_t a, uint32_t b)
{
    return brisk_seq_lt(a, b) ? a : b;
}

#endif
