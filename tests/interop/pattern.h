/*
 * pattern.h — the byte stream the interop peers send and check (brisk_peer.c, ksock.c,
 * bench/lwip/lwip_tap.c), and the little those peers share besides: the receiving side's bookkeeping and
 * their byte-count parser.
 *
 * The stream is a seeded pseudo-random byte sequence with a prime period of about 1 MiB (the splitmix64
 * finalizer over word indexes), kept in one table: any window of it follows from its offset alone, so a
 * receiver checks every byte at memcmp speed, and a misplaced, duplicated or corrupted segment shows as the
 * offset of the first bad byte. Both ends also fold what they sent / received into a hash (a
 * 64-bit multiply-xor over 8-byte words, carried across calls) so a run can print one number per direction
 * and a script can compare them. Self-contained: the kernel-side helper does not link brisk.
 */
#ifndef BRISK_TESTS_INTEROP_PATTERN_H
#define BRISK_TESTS_INTEROP_PATTERN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t pattern_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* The stream repeats with a prime period of about 1 MiB, kept in a table: sending is a copy (or a send
 * straight from the table) and checking a memcmp, so the peers cost little more CPU than the stacks they
 * test. Byte i is byte (i mod P) mod 8 of mix(seed + (i mod P) / 8); a segment misplaced by anything but a
 * multiple of P (1048573 bytes) still shows. */
#define PATTERN_PERIOD 1048573u

struct pattern {
    uint8_t *tab; /* PATTERN_PERIOD bytes */
};

/* Returns 0, or -1 when out of memory. */
static inline int pattern_init(struct pattern *p, uint64_t seed)
{
    p->tab = (uint8_t *)malloc(PATTERN_PERIOD + 8);
    if (!p->tab)
        return -1;
    for (size_t i = 0; i < PATTERN_PERIOD; i += 8) {
        uint64_t w = pattern_mix(seed + i / 8);
        for (int k = 0; k < 8; k++)
            p->tab[i + (size_t)k] = (uint8_t)(w >> (8 * k));
    }
    return 0;
}

static inline void pattern_free(struct pattern *p)
{
    free(p->tab);
    p->tab = NULL;
}

/* The longest run of the stream at `off` that lies contiguous in the table (at most `len`): send it as is. */
static inline const uint8_t *pattern_at(const struct pattern *p, uint64_t off, size_t *len)
{
    size_t at = (size_t)(off % PATTERN_PERIOD);
    if (*len > PATTERN_PERIOD - at)
        *len = PATTERN_PERIOD - at;
    return p->tab + at;
}

/* Writes bytes [off, off + len) of the stream into buf. */
static inline void pattern_fill(const struct pattern *p, uint64_t off, uint8_t *buf, size_t len)
{
    while (len) {
        size_t n = len;
        const uint8_t *src = pattern_at(p, off, &n);
        memcpy(buf, src, n);
        buf += n;
        off += n;
        len -= n;
    }
}

/* Offset (relative to buf) of the first byte of buf that differs from the stream at `off`, or len. */
static inline size_t pattern_check(const struct pattern *p, uint64_t off, const uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t n = len - done;
        const uint8_t *want = pattern_at(p, off + done, &n);
        if (memcmp(want, buf + done, n) != 0) {
            for (size_t k = 0; k < n; k++)
                if (want[k] != buf[done + k])
                    return done + k;
        }
        done += n;
    }
    return len;
}

/* Streaming hash: the same bytes give the same value however they are split across calls. */
struct pattern_hash {
    uint64_t h;
    uint64_t word;
    unsigned fill; /* bytes in `word` */
    uint64_t bytes;
};

static inline void pattern_hash_init(struct pattern_hash *s)
{
    memset(s, 0, sizeof(*s));
    s->h = 0x6a09e667f3bcc908ull;
}

static inline void pattern_hash_word(struct pattern_hash *s, uint64_t w)
{
    s->h = (s->h ^ w) * 0x9e3779b97f4a7c15ull;
    s->h ^= s->h >> 29;
}

static inline void pattern_hash_add(struct pattern_hash *s, const uint8_t *p, size_t len)
{
    s->bytes += len;
    size_t i = 0;
    while (i < len && s->fill) {
        s->word |= (uint64_t)p[i++] << (8 * s->fill);
        if (++s->fill == 8) {
            pattern_hash_word(s, s->word);
            s->word = 0;
            s->fill = 0;
        }
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t w = 0;
        for (int k = 0; k < 8; k++)
            w |= (uint64_t)p[i + (size_t)k] << (8 * k);
        pattern_hash_word(s, w);
    }
    for (; i < len; i++) {
        s->word |= (uint64_t)p[i] << (8 * s->fill);
        s->fill++;
    }
}

static inline uint64_t pattern_hash_final(const struct pattern_hash *s)
{
    struct pattern_hash t = *s;
    if (t.fill)
        pattern_hash_word(&t, t.word ^ ((uint64_t)t.fill << 60));
    return pattern_mix(t.h ^ t.bytes);
}

/* The receiving side of a checked transfer: where the next byte belongs, the first wrong byte, the hash. */
struct pattern_rx {
    uint64_t off;    /* bytes received so far */
    int bad;         /* a byte differed */
    uint64_t bad_at; /* offset of the first that did */
    struct pattern_hash h;
};

static inline void pattern_rx_init(struct pattern_rx *r)
{
    memset(r, 0, sizeof(*r));
    pattern_hash_init(&r->h);
}

/* Takes n received bytes: checks them against the stream (until the first bad byte) and hashes them. */
static inline void pattern_rx_take(const struct pattern *p, struct pattern_rx *r, const uint8_t *b, size_t n)
{
    if (!r->bad) {
        size_t at = pattern_check(p, r->off, b, n);
        if (at < n) {
            r->bad = 1;
            r->bad_at = r->off + at;
        }
    }
    pattern_hash_add(&r->h, b, n);
    r->off += n;
}

/* A byte count for the command line: decimal with an optional K, M or G (binary multiples); -1 if malformed,
 * negative or too large for 64 bits. */
static inline int pattern_parse_count(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'K')
        mul = 1024ull, end++;
    else if (*end == 'M')
        mul = 1024ull * 1024, end++;
    else if (*end == 'G')
        mul = 1024ull * 1024 * 1024, end++;
    if (errno || *end || end == s || (uint64_t)v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

#endif
