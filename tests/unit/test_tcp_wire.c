/*
 * test_tcp_wire.c — TCP header/option parse and emit and TCP checksums (src/wire/tcp.c).
 *
 * Known answers are segments Linux sent over lo (captured with tcpdump): brisk must parse them, emit the same
 * bytes from the parsed repr (option layout included), reproduce Linux's CHECKSUM_PARTIAL seed, and complete
 * it to the checksum tcpdump computed. Round trips cover every option combination with every SACK count, and
 * a table of malformed headers — truncation at every length, every data offset — asserts the exact reason
 * code, and every length of every option kind asserts what is taken and what is counted bad (the named
 * malformed-option cases of issue 18 are in tests/wire/test_tcp_options.c). Each parse reads an
 * exactly-sized heap copy, so ASan sees overreads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "support/testutil.h"
#include "wire/csum.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define LO 0x7f000001u

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Parses an exactly-sized heap copy; the repr's payload pointer is rebased onto b. */
static int parse_exact(const uint8_t *b, size_t len, uint32_t src, uint32_t dst, int verify,
                       struct brisk_tcp_repr *r)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    int rc = brisk_tcp_parse(p, len, src, dst, verify, r);
    if (rc >= 0)
        r->payload = b + (r->payload - p);
    free(p);
    return rc;
}

/* Segments captured on lo: 127.0.0.1:45936 -> 127.0.0.1:40123 and back. The checksum fields hold what
 * Linux wrote (its CHECKSUM_PARTIAL seed); tcpdump reported the full checksums given in the comments. */
static const uint8_t linux_syn[40] = {
    0xb3, 0x70, 0x9c, 0xbb, 0xb7, 0xff, 0x2e, 0x87, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02,
    0xff, 0xd7, 0xfe, 0x30, 0x00, 0x00, 0x02, 0x04, 0xff, 0xd7, 0x04, 0x02, 0x08, 0x0a,
    0x21, 0xd4, 0x34, 0xb5, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x0a,
}; /* full checksum 0xc2c2 */
static const uint8_t linux_synack[40] = {
    0x9c, 0xbb, 0xb3, 0x70, 0xa9, 0x54, 0x18, 0xd0, 0xb7, 0xff, 0x2e, 0x88, 0xa0, 0x12,
    0xff, 0xcb, 0xfe, 0x30, 0x00, 0x00, 0x02, 0x04, 0xff, 0xd7, 0x04, 0x02, 0x08, 0x0a,
    0xc8, 0x61, 0xaf, 0x97, 0x21, 0xd4, 0x34, 0xb5, 0x01, 0x03, 0x03, 0x0a,
}; /* full checksum 0x889f */
static const uint8_t linux_data_hdr[32] = {
    0xb3, 0x70, 0x9c, 0xbb, 0xb7, 0xff, 0x2e, 0x88, 0xa9, 0x54, 0x18, 0xd1, 0x80, 0x18, 0x00, 0x40,
    0xfe, 0x3e, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a, 0x21, 0xd4, 0x34, 0xb5, 0xc8, 0x61, 0xaf, 0x97,
}; /* + "hello brisk wire test\n": full checksum 0x5247 */
static const char linux_data[] = "hello brisk wire test\n";

/* The captured segment with its full checksum in place. */
static size_t full_segment(const uint8_t *hdr, size_t hlen, const char *data, uint16_t csum, uint8_t *out)
{
    size_t dlen = data ? strlen(data) : 0;
    memcpy(out, hdr, hlen);
    if (dlen)
        memcpy(out + hlen, data, dlen);
    brisk_put16(out + 16, csum);
    return hlen + dlen;
}

static void test_known_linux_syn(void **state)
{
    (void)state;
    uint8_t seg[40];
    full_segment(linux_syn, 40, NULL, 0xc2c2, seg);
    struct brisk_tcp_repr r;
    assert_int_equal(parse_exact(seg, 40, LO, LO, 1, &r), 40);
    assert_int_equal(r.sport, 45936);
    assert_int_equal(r.dport, 40123);
    assert_int_equal(r.seq, 3086954119u);
    assert_int_equal(r.ack, 0);
    assert_int_equal(r.flags, BRISK_TCP_SYN);
    assert_int_equal(r.hdr_len, 40);
    assert_int_equal(r.window, 65495);
    assert_int_equal(r.urg, 0);
    assert_true(r.opts.mss_ok);
    assert_int_equal(r.opts.mss, 65495);
    assert_true(r.opts.sack_perm);
    assert_true(r.opts.ts_ok);
    assert_int_equal(r.opts.ts_val, 567555253u);
    assert_int_equal(r.opts.ts_ecr, 0);
    assert_true(r.opts.wscale_ok);
    assert_int_equal(r.opts.wscale, 10);
    assert_int_equal(r.opts.nsack, 0);
    assert_int_equal(r.payload_len, 0);

    /* Emit lays the options out exactly as Linux did; the seed and the full checksum match too. */
    uint8_t out[60];
    memset(out, 0xee, sizeof out);
    assert_int_equal(brisk_tcp_opts_len(&r.opts), 20);
    assert_int_equal(brisk_tcp_emit(out, &r), 40);
    assert_int_equal(brisk_get16(out + 16), 0);
    brisk_tcp_csum_fill_partial(out, 40, LO, LO);
    assert_memory_equal(out, linux_syn, 40);
    brisk_tcp_csum_fill(out, 40, LO, LO);
    assert_memory_equal(out, seg, 40);
    /* A wrong pseudo-header (another source address) fails the check. */
    assert_int_equal(parse_exact(seg, 40, LO + 1, LO, 1, &r), BRISK_WIRE_BAD_CSUM);
    assert_int_equal(parse_exact(seg, 40, LO + 1, LO, 0, &r), 40);
}

static void test_known_linux_synack_and_data(void **state)
{
    (void)state;
    uint8_t seg[80], out[80];
    struct brisk_tcp_repr r;

    full_segment(linux_synack, 40, NULL, 0x889f, seg);
    assert_int_equal(parse_exact(seg, 40, LO, LO, 1, &r), 40);
    assert_int_equal(r.flags, BRISK_TCP_SYN | BRISK_TCP_ACK);
    assert_int_equal(r.ack, 3086954120u);
    assert_int_equal(r.opts.ts_ecr, 567555253u);
    assert_int_equal(brisk_tcp_emit(out, &r), 40);
    brisk_tcp_csum_fill_partial(out, 40, LO, LO);
    assert_memory_equal(out, linux_synack, 40);
    brisk_tcp_csum_fill(out, 40, LO, LO);
    assert_memory_equal(out, seg, 40);

    size_t n = full_segment(linux_data_hdr, 32, linux_data, 0x5247, seg);
    assert_int_equal(n, 54);
    assert_int_equal(parse_exact(seg, n, LO, LO, 1, &r), 32);
    assert_int_equal(r.flags, BRISK_TCP_PSH | BRISK_TCP_ACK);
    assert_int_equal(r.window, 64);
    assert_false(r.opts.mss_ok || r.opts.sack_perm || r.opts.wscale_ok);
    assert_true(r.opts.ts_ok);
    assert_int_equal(r.payload_len, 22);
    assert_ptr_equal(r.payload, seg + 32);
    assert_int_equal(brisk_tcp_emit(out, &r), 32);
    memcpy(out + 32, r.payload, r.payload_len);
    brisk_tcp_csum_fill_partial(out, n, LO, LO);
    assert_int_equal(brisk_get16(out + 16), 0xfe3e); /* Linux's seed for a 54-byte segment */
    /* A device completing the seed (here after a 34-byte Ethernet + IPv4 prefix) gets tcpdump's answer. */
    uint8_t frame[34 + 54];
    memset(frame, 0x77, 34);
    memcpy(frame + 34, out, n);
    brisk_csum_complete_partial(frame, sizeof frame, 34, BRISK_TCP_CSUM_OFF);
    assert_memory_equal(frame + 34, seg, n);
    brisk_tcp_csum_fill(out, n, LO, LO);
    assert_memory_equal(out, seg, n);
}

static int opts_equal(const struct brisk_tcp_opts *a, const struct brisk_tcp_opts *b)
{
    if (a->mss_ok != b->mss_ok || a->wscale_ok != b->wscale_ok || a->sack_perm != b->sack_perm ||
        a->ts_ok != b->ts_ok || a->nsack != b->nsack)
        return 0;
    if (a->mss_ok && a->mss != b->mss)
        return 0;
    if (a->wscale_ok && a->wscale != b->wscale)
        return 0;
    if (a->ts_ok && (a->ts_val != b->ts_val || a->ts_ecr != b->ts_ecr))
        return 0;
    for (unsigned k = 0; k < a->nsack; k++)
        if (a->sack[k].start != b->sack[k].start || a->sack[k].end != b->sack[k].end)
            return 0;
    return 1;
}

static void test_round_trip_every_combination(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(9293);
    uint64_t rs = seed;
    static const uint8_t flag_sets[] = {BRISK_TCP_SYN,
                                        BRISK_TCP_SYN | BRISK_TCP_ACK,
                                        BRISK_TCP_ACK,
                                        BRISK_TCP_ACK | BRISK_TCP_PSH,
                                        BRISK_TCP_FIN | BRISK_TCP_ACK,
                                        BRISK_TCP_RST,
                                        BRISK_TCP_RST | BRISK_TCP_ACK,
                                        BRISK_TCP_SYN | BRISK_TCP_ECE | BRISK_TCP_CWR,
                                        BRISK_TCP_ACK | BRISK_TCP_URG,
                                        0xff,
                                        0};
    static uint8_t buf[60 + 1500];
    int combos = 0;
    for (unsigned mask = 0; mask < 16; mask++) {
        for (unsigned nsack = 0; nsack <= BRISK_TCP_MAX_SACK; nsack++) {
            for (size_t fi = 0; fi < sizeof flag_sets; fi++) {
                uint64_t a = rng_next(&rs), b = rng_next(&rs);
                struct brisk_tcp_repr in;
                memset(&in, 0, sizeof in);
                in.sport = (uint16_t)a;
                in.dport = (uint16_t)(a >> 16);
                in.seq = (uint32_t)(a >> 32);
                in.ack = (uint32_t)b;
                in.flags = flag_sets[fi];
                in.window = (uint16_t)(b >> 32);
                in.urg = (uint16_t)(b >> 48);
                in.hdr_len = 99; /* ignored by emit */
                in.opts.mss_ok = mask & 1;
                in.opts.wscale_ok = (mask >> 1) & 1;
                in.opts.sack_perm = (mask >> 2) & 1;
                in.opts.ts_ok = (mask >> 3) & 1;
                in.opts.mss = (uint16_t)rng_next(&rs);
                in.opts.wscale = (uint8_t)rng_next(&rs); /* any value survives: clamping is the caller's */
                in.opts.ts_val = (uint32_t)rng_next(&rs);
                in.opts.ts_ecr = (uint32_t)rng_next(&rs);
                in.opts.nsack = (uint8_t)nsack;
                for (unsigned k = 0; k < BRISK_TCP_MAX_SACK; k++) {
                    in.opts.sack[k].start = (uint32_t)rng_next(&rs);
                    in.opts.sack[k].end = (uint32_t)rng_next(&rs);
                }
                size_t plen = (size_t)(rng_next(&rs) % 1501);

                /* The expected option bytes, counted by hand from the layout. */
                size_t want_opts = (in.opts.mss_ok ? 4 : 0) +
                                   (in.opts.ts_ok       ? 12
                                    : in.opts.sack_perm ? 4
                                                        : 0) +
                                   (in.opts.wscale_ok ? 4 : 0);
                unsigned fit = nsack;
                while (fit > 0 && want_opts + 4 + 8 * fit > 40)
                    fit--;
                assert_int_equal(brisk_tcp_sack_fit(&in.opts), fit);
                if (fit)
                    want_opts += 4 + 8 * fit;
                assert_int_equal(brisk_tcp_opts_len(&in.opts), want_opts);

                memset(buf, 0xee, sizeof buf);
                size_t hlen = brisk_tcp_emit(buf, &in);
                assert_int_equal(hlen, 20 + want_opts);
                assert_int_equal(hlen % 4, 0);
                assert_true(hlen <= 60);
                assert_int_equal(buf[hlen], 0xee); /* nothing written past the header */
                for (size_t i = 0; i < plen; i++)
                    buf[hlen + i] = (uint8_t)rng_next(&rs);
                uint32_t src = (uint32_t)rng_next(&rs), dst = (uint32_t)rng_next(&rs);
                brisk_tcp_csum_fill(buf, hlen + plen, src, dst);

                struct brisk_tcp_repr out;
                int rc = parse_exact(buf, hlen + plen, src, dst, 1, &out);
                struct brisk_tcp_opts want = in.opts;
                want.nsack = (uint8_t)fit;
                if (rc != (int)hlen || out.sport != in.sport || out.dport != in.dport || out.seq != in.seq ||
                    out.ack != in.ack || out.flags != in.flags || out.window != in.window ||
                    out.urg != in.urg || out.hdr_len != hlen || out.payload != buf + hlen ||
                    out.payload_len != plen || !opts_equal(&want, &out.opts))
                    fail_msg("seed %llu: mask %u nsack %u flags %02x: round trip differs (rc %d %s)",
                             (unsigned long long)seed, mask, nsack, in.flags, rc, brisk_wire_err_name(rc));
                combos++;
            }
        }
    }
    assert_int_equal(combos, 16 * 5 * (int)sizeof flag_sets);
}

static void test_option_layout(void **state)
{
    (void)state;
    uint8_t b[60];
    struct brisk_tcp_repr r;
    memset(&r, 0, sizeof r);

    /* SACK-permitted without timestamps: NOP,NOP,SACKOK,2. */
    r.opts.sack_perm = 1;
    assert_int_equal(brisk_tcp_emit(b, &r), 24);
    const uint8_t sackok[4] = {1, 1, 4, 2};
    assert_memory_equal(b + 20, sackok, 4);

    /* Timestamps without SACK-permitted: NOP,NOP,TS; then NOP,WS. */
    r.opts.sack_perm = 0;
    r.opts.ts_ok = 1;
    r.opts.ts_val = 0x01020304;
    r.opts.ts_ecr = 0x05060708;
    r.opts.wscale_ok = 1;
    r.opts.wscale = 7;
    assert_int_equal(brisk_tcp_emit(b, &r), 36);
    const uint8_t ts_ws[16] = {1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 3, 3, 7};
    assert_memory_equal(b + 20, ts_ws, 16);
    assert_int_equal(b[12], 9 << 4);

    /* With timestamps, four SACK blocks do not fit: three are sent (the first three), as Linux does. */
    r.opts.wscale_ok = 0;
    r.opts.nsack = 4;
    for (unsigned k = 0; k < 4; k++) {
        r.opts.sack[k].start = 0x1000u * (k + 1);
        r.opts.sack[k].end = 0x1000u * (k + 1) + 0x100;
    }
    assert_int_equal(brisk_tcp_sack_fit(&r.opts), 3);
    assert_int_equal(brisk_tcp_emit(b, &r), 60);
    const uint8_t sack_hdr[4] = {1, 1, 5, 26};
    assert_memory_equal(b + 32, sack_hdr, 4);
    assert_int_equal(brisk_get32(b + 36), 0x1000);
    assert_int_equal(brisk_get32(b + 52), 0x3000);
    assert_int_equal(brisk_get32(b + 56), 0x3100);

    /* Without timestamps all four fit: 4 + 32 = 36 bytes. */
    r.opts.ts_ok = 0;
    assert_int_equal(brisk_tcp_emit(b, &r), 56);
    assert_int_equal(b[23], 34);

    /* Everything a SYN can carry plus SACK blocks: the blocks give way. */
    r.opts.ts_ok = r.opts.mss_ok = r.opts.wscale_ok = r.opts.sack_perm = 1;
    assert_int_equal(brisk_tcp_sack_fit(&r.opts), 2); /* 20 used, 4 + 16 */
    assert_int_equal(brisk_tcp_emit(b, &r), 60);
    /* No options: a bare 20-byte header, data offset 5. */
    memset(&r.opts, 0, sizeof r.opts);
    r.opts.nsack = 200; /* out of range counts are clamped, never trusted */
    assert_int_equal(brisk_tcp_sack_fit(&r.opts), 4);
    r.opts.nsack = 0;
    assert_int_equal(brisk_tcp_emit(b, &r), 20);
    assert_int_equal(b[12], 0x50);
}

static void test_truncated_every_length(void **state)
{
    (void)state;
    uint8_t seg[80];
    size_t n = full_segment(linux_data_hdr, 32, linux_data, 0x5247, seg);
    struct brisk_tcp_repr r;
    for (size_t len = 0; len <= n; len++) {
        for (int verify = 0; verify <= 1; verify++) {
            int want;
            if (len < 32)
                want = BRISK_WIRE_TRUNCATED; /* the header (20, or the 32 the data offset claims) is cut */
            else if (len < n && verify)
                want = BRISK_WIRE_BAD_CSUM; /* a cut payload: only the checksum can tell */
            else
                want = 32;
            int rc = parse_exact(seg, len, LO, LO, verify, &r);
            if (rc != want)
                fail_msg("len %zu verify %d: got %d (%s), want %d", len, verify, rc, brisk_wire_err_name(rc),
                         want);
            if (rc >= 0)
                assert_int_equal(r.payload_len, len - 32);
        }
    }
}

static void test_bad_data_offset(void **state)
{
    (void)state;
    uint8_t seg[60];
    memset(seg, BRISK_TCPOPT_NOP, sizeof seg);
    memcpy(seg, linux_data_hdr, 20);
    struct brisk_tcp_repr r;
    for (unsigned doff = 0; doff < 16; doff++) {
        seg[12] = (uint8_t)(doff << 4);
        for (size_t len = 20; len <= 60; len += 4) {
            int want = doff < 5         ? BRISK_WIRE_BAD_HDRLEN
                       : doff * 4 > len ? BRISK_WIRE_TRUNCATED
                                        : (int)doff * 4;
            int rc = parse_exact(seg, len, LO, LO, 0, &r);
            if (rc != want)
                fail_msg("doff %u len %zu: got %d (%s), want %d", doff, len, rc, brisk_wire_err_name(rc),
                         want);
        }
    }
    /* The reserved bits next to the data offset are ignored. */
    seg[12] = 0x5f;
    assert_int_equal(parse_exact(seg, 20, LO, LO, 0, &r), 20);
    /* A "segment" longer than any IPv4 payload. */
    uint8_t *big = calloc(1, 65536);
    assert_non_null(big);
    big[12] = 0x50;
    assert_int_equal(brisk_tcp_parse(big, 65536, LO, LO, 0, &r), BRISK_WIRE_BAD_HDRLEN);
    assert_int_equal(brisk_tcp_parse(big, 65535, LO, LO, 0, &r), 20);
    free(big);
}

/* A 60-byte header whose option space holds `opt` (olen bytes) followed by NOPs. */
static void header_with_options(uint8_t *seg, const uint8_t *opt, size_t olen)
{
    memcpy(seg, linux_data_hdr, 20);
    seg[12] = 0xf0;
    memset(seg + 20, BRISK_TCPOPT_NOP, 40);
    if (olen)
        memcpy(seg + 20, opt, olen);
}

static void test_every_option_length(void **state)
{
    (void)state;
    /* Each kind with each length byte 0..255 placed at the start of a 40-byte option space. */
    static const struct {
        uint8_t kind;
        int good_len; /* -1: any length >= 2 (unknown kind); 5 = SACK (2 + 8n, n 1..4) */
    } kinds[] = {{BRISK_TCPOPT_MSS, 4},
                 {BRISK_TCPOPT_WSCALE, 3},
                 {BRISK_TCPOPT_SACK_PERM, 2},
                 {BRISK_TCPOPT_SACK, 5},
                 {BRISK_TCPOPT_TS, 10},
                 {6, -1},
                 {30, -1},
                 {254, -1},
                 {255, -1}};
    uint8_t seg[60];
    struct brisk_tcp_repr r;
    int bad = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        for (unsigned olen = 0; olen < 256; olen++) {
            uint8_t opt[2] = {kinds[k].kind, (uint8_t)olen};
            header_with_options(seg, opt, 2);
            int ok;
            if (olen < 2 || olen > 40)
                ok = 0;
            else if (kinds[k].good_len == -1)
                ok = 1;
            else if (kinds[k].kind == BRISK_TCPOPT_SACK)
                ok = olen >= 10 && (olen - 2) % 8 == 0 && (olen - 2) / 8 <= 4;
            else
                ok = (int)olen == kinds[k].good_len;
            /* A malformed option costs nothing but itself (Linux's tcp_parse_options): the segment parses. */
            for (int verify = 0; verify <= 1; verify++) {
                brisk_tcp_csum_fill(seg, 60, LO, LO); /* a correct checksum: only the option is wrong */
                int rc = parse_exact(seg, 60, LO, LO, verify, &r);
                if (rc != 60 || r.opts.bad != !ok)
                    fail_msg("kind %u len %u verify %d: got %d (%s) bad %u, want 60 bad %d", kinds[k].kind,
                             olen, verify, rc, brisk_wire_err_name(rc), r.opts.bad, !ok);
                int seen = r.opts.mss_ok + r.opts.wscale_ok + r.opts.sack_perm + r.opts.ts_ok + (r.opts.nsack > 0);
                if (seen != (ok && kinds[k].good_len != -1))
                    fail_msg("kind %u len %u: %d options taken", kinds[k].kind, olen, seen);
            }
            bad += !ok;
        }
    }
    assert_true(bad > 2000);
}

static void test_option_edge_cases(void **state)
{
    (void)state;
    uint8_t seg[60];
    struct brisk_tcp_repr r;

    /* A kind in the last byte of the header, with no room for its length. */
    header_with_options(seg, NULL, 0);
    seg[59] = BRISK_TCPOPT_MSS;
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.bad, 1);
    assert_false(r.opts.mss_ok);
    seg[59] = 77;
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.bad, 1);
    seg[59] = BRISK_TCPOPT_EOL; /* but EOL or NOP there is fine */
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.bad, 0);

    /* An option ending exactly at the header end is fine; one byte further is not. */
    header_with_options(seg, NULL, 0);
    seg[56] = BRISK_TCPOPT_MSS;
    seg[57] = 4;
    brisk_put16(seg + 58, 1460);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.mss, 1460);
    header_with_options(seg, NULL, 0);
    seg[57] = BRISK_TCPOPT_MSS;
    seg[58] = 4;
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.bad, 1);
    assert_false(r.opts.mss_ok);

    /* Options must lie inside the header, not the payload: a 24-byte header whose MSS spills over. */
    uint8_t seg2[40];
    memcpy(seg2, linux_data_hdr, 20);
    seg2[12] = 0x60;
    const uint8_t spill[] = {1, 1, 2, 4, 0x05, 0xb4, 0, 0};
    memcpy(seg2 + 20, spill, sizeof spill);
    memset(seg2 + 28, 0x55, 12);
    assert_int_equal(parse_exact(seg2, 40, LO, LO, 0, &r), 24);
    assert_int_equal(r.opts.bad, 1);
    assert_false(r.opts.mss_ok);
    assert_int_equal(r.payload_len, 16);

    /* EOL ends the list: garbage after it is not looked at. */
    const uint8_t eol[] = {2, 4, 0x05, 0xb4, 0, 2, 0, 5, 1};
    header_with_options(seg, eol, sizeof eol);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_true(r.opts.mss_ok);
    assert_int_equal(r.opts.mss, 1460);
    assert_false(r.opts.sack_perm);

    /* Unknown kinds are skipped by their length; what follows is still read. */
    const uint8_t unknown[] = {30, 6, 0xde, 0xad, 0xbe, 0xef, 1, 3, 3, 14, 4, 2};
    header_with_options(seg, unknown, sizeof unknown);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_true(r.opts.wscale_ok);
    assert_int_equal(r.opts.wscale, 14);
    assert_true(r.opts.sack_perm);
    assert_false(r.opts.mss_ok || r.opts.ts_ok);

    /* Duplicates: the last one wins, for every kind. */
    const uint8_t dup1[] = {2, 4,  0x05, 0xb4, 2, 4, 0x02, 0x18, /* MSS 1460, MSS 536 */
                            3, 3,  2,    3,    3, 9,             /* WS 2, WS 9 */
                            8, 10, 0,    0,    0, 1, 0,    0,    0, 2,
                            8, 10, 0,    0,    0, 3, 0,    0,    0, 4}; /* TS 1/2, 3/4 */
    header_with_options(seg, dup1, sizeof dup1);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.mss, 536);
    assert_int_equal(r.opts.wscale, 9);
    assert_int_equal(r.opts.ts_val, 3);
    assert_int_equal(r.opts.ts_ecr, 4);
    const uint8_t dup2[] = {5, 10, 0, 0,  0, 1, 0, 0, 0, 2,                         /* SACK (1,2) */
                            5, 18, 0, 0,  0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, /* SACK (3,4) (5,6) */
                            1, 1,  8, 10, 0, 0, 0, 7, 0, 0, 0, 8};                  /* NOP NOP TS 7/8 */
    assert_int_equal(sizeof dup2, 40);
    header_with_options(seg, dup2, sizeof dup2);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.nsack, 2);
    assert_int_equal(r.opts.sack[0].start, 3);
    assert_int_equal(r.opts.sack[0].end, 4);
    assert_int_equal(r.opts.sack[1].start, 5);
    assert_int_equal(r.opts.sack[1].end, 6);
    assert_int_equal(r.opts.ts_val, 7);
    assert_int_equal(r.opts.ts_ecr, 8);
    /* A later, shorter SACK list replaces an earlier longer one entirely. */
    const uint8_t dup3[] = {5, 18, 0, 0, 0, 3,  0, 0, 0, 4, 0, 0, 0, 5,
                            0, 0,  0, 6, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2};
    header_with_options(seg, dup3, sizeof dup3);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.nsack, 1);
    assert_int_equal(r.opts.sack[0].start, 1);

    /* Options do not disturb each other: SACK blocks before SACK-permitted and timestamps survive them. */
    const uint8_t mixed[] = {5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 9, 2, 4, 1, 0};
    header_with_options(seg, mixed, sizeof mixed);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.nsack, 1);
    assert_int_equal(r.opts.sack[0].end, 2);
    assert_true(r.opts.sack_perm && r.opts.ts_ok && r.opts.mss_ok);
    assert_int_equal(r.opts.mss, 256);
    assert_int_equal(r.opts.ts_val, 9);

    /* SACK with 4 blocks: the largest legal list. */
    uint8_t four[34] = {5, 34};
    for (unsigned i = 0; i < 8; i++)
        brisk_put32(four + 2 + 4 * i, 100 + i);
    header_with_options(seg, four, sizeof four);
    assert_int_equal(parse_exact(seg, 60, LO, LO, 0, &r), 60);
    assert_int_equal(r.opts.nsack, 4);
    assert_int_equal(r.opts.sack[3].end, 107);
}

static void test_bad_checksum_every_bit(void **state)
{
    (void)state;
    uint8_t seg[80], b[80];
    size_t n = full_segment(linux_data_hdr, 32, linux_data, 0x5247, seg);
    struct brisk_tcp_repr r;
    for (size_t bit = 0; bit < 8 * n; bit++) {
        if (bit / 8 == 12)
            continue; /* the data offset: other reasons, tested above */
        memcpy(b, seg, n);
        b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = parse_exact(b, n, LO, LO, 1, &r);
        if (rc != BRISK_WIRE_BAD_CSUM)
            fail_msg("bit %zu: got %d (%s)", bit, rc, brisk_wire_err_name(rc));
    }
}

static void test_partial_completes_to_full(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(6691);
    uint64_t rs = seed;
    static uint8_t frame[34 + 60 + 2000], want[60 + 2000];
    for (int it = 0; it < 2000; it++) {
        size_t prefix = (size_t)(rng_next(&rs) % 40);
        size_t len = 20 + (size_t)(rng_next(&rs) % 2000);
        for (size_t i = 0; i < prefix + len; i++)
            frame[i] = (uint8_t)rng_next(&rs);
        frame[prefix + 12] = 0x50;
        uint32_t src = (uint32_t)rng_next(&rs), dst = (uint32_t)rng_next(&rs);
        if (it == 0)
            src = dst = 0; /* the smallest pseudo-header sum */
        memcpy(want, frame + prefix, len);
        brisk_tcp_csum_fill(want, len, src, dst);
        brisk_tcp_csum_fill_partial(frame + prefix, len, src, dst);
        uint16_t seedv = brisk_get16(frame + prefix + 16);
        uint16_t expect_seed = (uint16_t)~brisk_csum_fold(brisk_csum_pseudo(src, dst, 6, (uint16_t)len));
        brisk_csum_complete_partial(frame, prefix + len, prefix, BRISK_TCP_CSUM_OFF);
        if (seedv != expect_seed || memcmp(frame + prefix, want, len) != 0)
            fail_msg("seed %llu iteration %d: len %zu: partial+complete differs from full",
                     (unsigned long long)seed, it, len);
        struct brisk_tcp_repr r;
        assert_int_equal(brisk_tcp_parse(want, len, src, dst, 1, &r), 20);
    }
}

static void test_csum_fill_bounds(void **state)
{
    (void)state;
    uint8_t b[20];
    memset(b, 0xab, sizeof b);
    brisk_tcp_csum_fill(b, 19, LO, LO); /* shorter than a header: left alone */
    brisk_tcp_csum_fill_partial(b, 19, LO, LO);
    for (size_t i = 0; i < sizeof b; i++)
        assert_int_equal(b[i], 0xab);
    brisk_tcp_csum_fill(b, 20, LO, LO);
    assert_int_not_equal(brisk_get16(b + 16), 0xabab);
}

static void test_seq_helpers(void **state)
{
    (void)state;
    assert_true(brisk_seq_lt(1, 2));
    assert_false(brisk_seq_lt(2, 2));
    assert_true(brisk_seq_leq(2, 2));
    assert_true(brisk_seq_lt(0xffffffffu, 0)); /* across the wrap */
    assert_true(brisk_seq_gt(5, 0xfffffff0u));
    assert_true(brisk_seq_geq(0, 0xffffffffu));
    assert_false(brisk_seq_geq(0xffffffffu, 0));
    assert_true(brisk_seq_lt(1000, 1000 + 0x7fffffffu)); /* just under half the space ahead */
    assert_true(brisk_seq_gt(1000 + 0x7fffffffu, 1000));
    assert_true(brisk_seq_gt(1000, 1000 + 0x80000001u)); /* more than half ahead means behind */
    assert_int_equal(brisk_seq_max(0xfffffff0u, 16), 16);
    assert_int_equal(brisk_seq_min(0xfffffff0u, 16), 0xfffffff0u);
    assert_int_equal(brisk_seq_max(7, 7), 7);
    uint64_t rs = brisk_test_seed(7323);
    for (int i = 0; i < 100000; i++) {
        uint32_t a = (uint32_t)rng_next(&rs);
        uint32_t d = (uint32_t)(rng_next(&rs) % 0x7fffffffu) + 1; /* 1 .. 2^31 - 1 */
        uint32_t b = a + d;
        assert_true(brisk_seq_lt(a, b) && brisk_seq_leq(a, b) && brisk_seq_gt(b, a) && brisk_seq_geq(b, a));
        assert_false(brisk_seq_lt(b, a) || brisk_seq_gt(a, b) || brisk_seq_leq(b, a) || brisk_seq_geq(a, b));
        assert_int_equal(brisk_seq_max(a, b), b);
        assert_int_equal(brisk_seq_min(b, a), a);
    }
}

/* Random headers with random option bytes: never an out-of-bounds read (ASan), every accept consistent. */
static void test_fuzz(void **state)
{
    (void)state;
    uint64_t seed = brisk_test_seed(2018);
    uint64_t rs = seed;
    uint8_t b[80];
    int accepted = 0;
    static const uint8_t kinds[] = {0, 1, 2, 3, 4, 5, 8, 30};
    for (int it = 0; it < 300000; it++) {
        size_t len = (size_t)(rng_next(&rs) % (sizeof b + 1));
        for (size_t i = 0; i < sizeof b; i++) {
            uint64_t w = rng_next(&rs);
            /* Bias option bytes towards known kinds and small lengths. */
            b[i] = (w & 1) ? kinds[(w >> 1) % 8] : (uint8_t)((w >> 8) % ((w & 2) ? 12 : 256));
        }
        b[12] = (uint8_t)((5 + rng_next(&rs) % 11) << 4);
        struct brisk_tcp_repr r;
        int rc = parse_exact(b, len, LO, LO, 0, &r);
        if (rc >= 0) {
            accepted++;
            if (rc != r.hdr_len || r.hdr_len > len || r.hdr_len + r.payload_len != len || r.opts.nsack > 4)
                fail_msg("seed %llu iteration %d: inconsistent accept", (unsigned long long)seed, it);
        } else if (rc != BRISK_WIRE_TRUNCATED) {
            fail_msg("seed %llu iteration %d: unexpected reason %d", (unsigned long long)seed, it, rc);
        }
    }
    assert_true(accepted > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_linux_syn),
        cmocka_unit_test(test_known_linux_synack_and_data),
        cmocka_unit_test(test_round_trip_every_combination),
        cmocka_unit_test(test_option_layout),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_bad_data_offset),
        cmocka_unit_test(test_every_option_length),
        cmocka_unit_test(test_option_edge_cases),
        cmocka_unit_test(test_bad_checksum_every_bit),
        cmocka_unit_test(test_partial_completes_to_full),
        cmocka_unit_test(test_csum_fill_bounds),
        cmocka_unit_test(test_seq_helpers),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
