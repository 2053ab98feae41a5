/*
 * tcp.c — TCP header and option parse and emit, and TCP checksums.
 *
 * The header is RFC 9293 §3.1: ports, sequence and acknowledgment numbers, data offset, the eight flag bits
 * CWR..FIN (the four reserved bits are ignored on input and sent as zero), window, checksum, urgent pointer,
 * and up to 40 bytes of options. The checksum covers a pseudo-header (source and destination address, zero,
 * protocol, TCP length — RFC 9293 §3.1) and the whole segment.
 *
 * Options (RFC 9293 §3.2): EOL (kind 0) ends the list, NOP (kind 1) is a single pad byte, every other kind
 * is kind, length, data, where length counts the two leading bytes. brisk understands MSS (RFC 6691,
 * length 4), window scale (RFC 7323 §2, length 3), SACK-permitted (RFC 2018 §2, length 2), SACK (RFC 2018 §3,
 * length 2 + 8n with 1..4 blocks) and timestamps (RFC 7323 §3, length 10). parse_options walks the list
 * with a bounds check before every byte it reads. A malformed option does not cost the segment: RFC 9293
 * §3.1 asks only that unknown kinds be skipped by their length and RFC 1122 §4.2.2.5 that a TCP "be prepared
 * to handle an illegal option length ... without crashing", and a SYN dropped for a bad option is a
 * connection lost for nothing (issue 18: brisk used to drop it; Linux answers it). So brisk does what
 * Linux's tcp_parse_options does, case by case, and every profile does the same:
 *   - a length byte below 2 ("silly options"), a length running past the header, or a kind in the last
 *     byte with no room for its length: the list cannot be walked further, parsing stops there and the
 *     options before it stand;
 *   - a known kind with the wrong length (MSS not 4, WS not 3, SACK-permitted not 2, SACK not 2 + 8n, TS
 *     not 10): that option is ignored, skipped by its length, and parsing goes on.
 * Each counts one in opts.bad, which the stack adds to TcpInBadOptions (brisk's own counter: Linux counts
 * none of these). The checks are the ones a well-formed list already passes through, so a good segment
 * pays nothing more for them. When an option appears twice, the second occurrence overwrites the first
 * ("last wins", as in Linux): the result is deterministic and neither occurrence is more trustworthy.
 *
 * brisk_tcp_emit writes options in Linux's order and padding (tcp_options_write), so captures line up with
 * Linux's byte for byte: MSS; timestamps with SACK-permitted packed into their leading two bytes (or
 * NOP,NOP,TS); NOP,NOP,SACK-permitted when there are no timestamps; NOP,WS; NOP,NOP,SACK blocks. Every group
 * is 4-byte aligned, so the header needs no trailing padding. SACK blocks that would overflow the 40-byte
 * option space are left out from the end (brisk_tcp_sack_fit); RFC 2018 §4 puts the most recent block
 * first, so the ones dropped are the oldest.
 *
 * brisk_tcp_csum_fill computes the full checksum; brisk_tcp_csum_fill_partial stores only the pseudo-header
 * seed for a checksum-offloading device (see tcp.h for the exact convention).
 */
#include "wire/tcp.h"

#include <string.h>

#include "wire/csum.h"
#include "wire/ipv4.h"
#include "wire/wire.h"

#define OPTLEN_MSS       4
#define OPTLEN_WSCALE    3
#define OPTLEN_SACK_PERM 2
#define OPTLEN_TS        10
#define SACK_BLOCK_LEN   8

/* Reads the options in b[BRISK_TCP_HLEN, hlen) into o (zeroed by the caller); malformed ones are counted
 * in o->bad and ignored as Linux ignores them (the file's opening comment). */
static void parse_options(const uint8_t *b, size_t hlen, struct brisk_tcp_opts *o)
{
    size_t i = BRISK_TCP_HLEN;
    while (i < hlen) {
        uint8_t kind = b[i];
        if (kind == BRISK_TCPOPT_EOL)
            break;
        if (kind == BRISK_TCPOPT_NOP) {
            i++;
            continue;
        }
        if (hlen - i < 2)
            goto stop; /* no room for the length byte */
        size_t olen = b[i + 1];
        if (olen < 2 || olen > hlen - i)
            goto stop; /* "silly" or partial: the rest of the list cannot be walked */
        const uint8_t *d = b + i + 2;
        switch (kind) {
        case BRISK_TCPOPT_MSS:
            if (olen != OPTLEN_MSS)
                goto skip;
            o->mss_ok = 1;
            o->mss = brisk_get16(d);
            break;
        case BRISK_TCPOPT_WSCALE:
            if (olen != OPTLEN_WSCALE)
                goto skip;
            o->wscale_ok = 1;
            o->wscale = d[0];
            break;
        case BRISK_TCPOPT_SACK_PERM:
            if (olen != OPTLEN_SACK_PERM)
                goto skip;
            o->sack_perm = 1;
            break;
        case BRISK_TCPOPT_SACK: {
            /* olen <= 40 here, so n <= 4 whenever the length is 2 + 8n. */
            size_t n = (olen - 2) / SACK_BLOCK_LEN;
            if ((olen - 2) % SACK_BLOCK_LEN != 0 || n < 1)
                goto skip;
            o->nsack = (uint8_t)n;
            for (size_t k = 0; k < n; k++) {
                o->sack[k].start = brisk_get32(d + k * SACK_BLOCK_LEN);
                o->sack[k].end = brisk_get32(d + k * SACK_BLOCK_LEN + 4);
            }
            break;
        }
        case BRISK_TCPOPT_TS:
            if (olen != OPTLEN_TS)
                goto skip;
            o->ts_ok = 1;
            o->ts_val = brisk_get32(d);
            o->ts_ecr = brisk_get32(d + 4);
            break;
        default:
            break; /* unknown kind: skipped by its length */
        }
        i += olen;
        continue;
    skip: /* a known kind with the wrong length: ignored, the list goes on */
        o->bad++;
        i += olen;
    }
    return;
stop:
    o->bad++;
}

/* The TCP pseudo-header sums (RFC 9293 §3.1, RFC 8200 §8.1); len fits 16 bits (checked or guaranteed by the
 * caller). */
static uint32_t pseudo(uint32_t src, uint32_t dst, size_t len)
{
    return brisk_csum_pseudo(src, dst, BRISK_IP_PROTO_TCP, (uint16_t)len);
}

static uint32_t pseudo6(const uint8_t src[16], const uint8_t dst[16], size_t len)
{
    return brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_TCP, (uint32_t)len);
}

/* Either family's parse, given the pseudo-header sum's inputs (`src6` / `dst6` NULL: IPv4). */
static int parse(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, const uint8_t *src6,
                 const uint8_t *dst6, int verify_csum, struct brisk_tcp_repr *r)
{
    if (len < BRISK_TCP_HLEN)
        return BRISK_WIRE_TRUNCATED;
    size_t hlen = (size_t)(b[12] >> 4) * 4;
    if (hlen < BRISK_TCP_HLEN || len > UINT16_MAX)
        return BRISK_WIRE_BAD_HDRLEN;
    if (hlen > len)
        return BRISK_WIRE_TRUNCATED;
    if (verify_csum &&
        brisk_csum_fold(brisk_csum_add(src6 ? pseudo6(src6, dst6, len) : pseudo(src, dst, len), b, len)) != 0)
        return BRISK_WIRE_BAD_CSUM;

    struct brisk_tcp_opts opts;
    memset(&opts, 0, sizeof opts);
    parse_options(b, hlen, &opts);
    r->opts = opts;
    r->sport = brisk_get16(b);
    r->dport = brisk_get16(b + 2);
    r->seq = brisk_get32(b + 4);
    r->ack = brisk_get32(b + 8);
    r->hdr_len = (uint8_t)hlen;
    r->flags = b[13];
    r->window = brisk_get16(b + 14);
    r->urg = brisk_get16(b + 18);
    r->payload = b + hlen;
    r->payload_len = len - hlen;
    return (int)hlen;
}

int brisk_tcp_parse(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, int verify_csum,
                    struct brisk_tcp_repr *r)
{
    return parse(b, len, src, dst, NULL, NULL, verify_csum, r);
}

int brisk_tcp_parse6(const uint8_t *b, size_t len, const uint8_t src[16], const uint8_t dst[16],
                     int verify_csum, struct brisk_tcp_repr *r)
{
    return parse(b, len, 0, 0, src, dst, verify_csum, r);
}

unsigned brisk_tcp_sack_fit(const struct brisk_tcp_opts *o)
{
    size_t used = 0;
    if (o->mss_ok)
        used += 4;
    if (o->ts_ok)
        used += 12; /* SACKOK,2 or NOP,NOP + TS */
    else if (o->sack_perm)
        used += 4; /* NOP,NOP,SACKOK,2 */
    if (o->wscale_ok)
        used += 4; /* NOP,WS,3,shift */
    size_t room = BRISK_TCP_OPTS_MAX - used;
    size_t fit = room >= 4 ? (room - 4) / SACK_BLOCK_LEN : 0; /* NOP,NOP,SACK,len + blocks */
    size_t n = o->nsack < BRISK_TCP_MAX_SACK ? o->nsack : BRISK_TCP_MAX_SACK;
    return (unsigned)(n < fit ? n : fit);
}

size_t brisk_tcp_opts_len(const struct brisk_tcp_opts *o)
{
    /* One presence byte at a time, ts_ok first: the caller has just stored them byte by byte, and a test of
     * ts_ok || sack_perm as one 16-bit load (as the compiler merges it) cannot be forwarded from those stores
     * and stalls every segment sent. */
    size_t len = 0;
    if (o->mss_ok)
        len += 4;
    if (o->ts_ok)
        len += 12;
    else if (o->sack_perm)
        len += 4;
    if (o->wscale_ok)
        len += 4;
    unsigned n = brisk_tcp_sack_fit(o);
    if (n > 0)
        len += 4 + n * SACK_BLOCK_LEN;
    return len;
}

/* Writes the options at p; returns the bytes written (== brisk_tcp_opts_len). `restrict`: the options are
 * not in the packet, so their loads need not wait for the bytes stored before them (a uint8_t store may
 * alias anything), and a packet line that aliases the caller's stack frame modulo 4 KB does not stall
 * each load. */
static size_t emit_options(uint8_t *restrict p, const struct brisk_tcp_opts *restrict o)
{
    uint8_t *start = p;
    if (o->mss_ok) {
        p[0] = BRISK_TCPOPT_MSS;
        p[1] = OPTLEN_MSS;
        brisk_put16(p + 2, o->mss);
        p += 4;
    }
    if (o->ts_ok) {
        /* SACK-permitted fits in the two bytes NOP,NOP would otherwise pad the timestamps with. */
        if (o->sack_perm) {
            p[0] = BRISK_TCPOPT_SACK_PERM;
            p[1] = OPTLEN_SACK_PERM;
        } else {
            p[0] = BRISK_TCPOPT_NOP;
            p[1] = BRISK_TCPOPT_NOP;
        }
        p[2] = BRISK_TCPOPT_TS;
        p[3] = OPTLEN_TS;
        brisk_put32(p + 4, o->ts_val);
        brisk_put32(p + 8, o->ts_ecr);
        p += 12;
    } else if (o->sack_perm) {
        p[0] = BRISK_TCPOPT_NOP;
        p[1] = BRISK_TCPOPT_NOP;
        p[2] = BRISK_TCPOPT_SACK_PERM;
        p[3] = OPTLEN_SACK_PERM;
        p += 4;
    }
    if (o->wscale_ok) {
        p[0] = BRISK_TCPOPT_NOP;
        p[1] = BRISK_TCPOPT_WSCALE;
        p[2] = OPTLEN_WSCALE;
        p[3] = o->wscale;
        p += 4;
    }
    unsigned n = brisk_tcp_sack_fit(o);
    if (n > 0) {
        p[0] = BRISK_TCPOPT_NOP;
        p[1] = BRISK_TCPOPT_NOP;
        p[2] = BRISK_TCPOPT_SACK;
        p[3] = (uint8_t)(2 + n * SACK_BLOCK_LEN);
        p += 4;
        for (unsigned k = 0; k < n; k++) {
            brisk_put32(p, o->sack[k].start);
            brisk_put32(p + 4, o->sack[k].end);
            p += SACK_BLOCK_LEN;
        }
    }
    return (size_t)(p - start);
}

size_t brisk_tcp_emit(uint8_t *restrict b, const struct brisk_tcp_repr *restrict r)
{
    size_t hlen = BRISK_TCP_HLEN + emit_options(b + BRISK_TCP_HLEN, &r->opts);
    brisk_put16(b, r->sport);
    brisk_put16(b + 2, r->dport);
    brisk_put32(b + 4, r->seq);
    brisk_put32(b + 8, r->ack);
    b[12] = (uint8_t)(hlen / 4 << 4);
    b[13] = r->flags;
    brisk_put16(b + 14, r->window);
    brisk_put16(b + BRISK_TCP_CSUM_OFF, 0);
    brisk_put16(b + 18, r->urg);
    return hlen;
}

static void fill(uint8_t *seg, size_t seg_len, uint32_t ph)
{
    brisk_put16(seg + BRISK_TCP_CSUM_OFF, 0);
    brisk_put16(seg + BRISK_TCP_CSUM_OFF, brisk_csum_fold(brisk_csum_add(ph, seg, seg_len)));
}

void brisk_tcp_csum_fill(uint8_t *seg, size_t seg_len, uint32_t src, uint32_t dst)
{
    if (seg_len >= BRISK_TCP_HLEN && seg_len <= UINT16_MAX)
        fill(seg, seg_len, pseudo(src, dst, seg_len));
}

void brisk_tcp_csum_fill6(uint8_t *seg, size_t seg_len, const uint8_t src[16], const uint8_t dst[16])
{
    if (seg_len >= BRISK_TCP_HLEN && seg_len <= UINT16_MAX)
        fill(seg, seg_len, pseudo6(src, dst, seg_len));
}

void brisk_tcp_csum_fill_partial(uint8_t *seg, size_t seg_len, uint32_t src, uint32_t dst)
{
    if (seg_len >= BRISK_TCP_HLEN && seg_len <= UINT16_MAX)
        brisk_put16(seg + BRISK_TCP_CSUM_OFF, (uint16_t)~brisk_csum_fold(pseudo(src, dst, seg_len)));
}

void brisk_tcp_csum_fill_partial6(uint8_t *seg, size_t seg_len, const uint8_t src[16], const uint8_t dst[16])
{
    if (seg_len >= BRISK_TCP_HLEN && seg_len <= UINT16_MAX)
        brisk_put16(seg + BRISK_TCP_CSUM_OFF, (uint16_t)~brisk_csum_fold(pseudo6(src, dst, seg_len)));
}
