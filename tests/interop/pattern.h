/*
 * pattern.h — the byte stream the interop peers send and check (brisk_peer.c, ksock.c).
 *
 * Byte i of the stream for a seed is byte (i mod 8) of mix(seed + i / 8), little-endian, where mix is the
 * splitmix64 finalizer: any window of the stream can be produced from its offset alone, so a receiver checks
 * every byte at memcmp speed without keeping anything, and a misplaced, duplicated or corrupted segment
 * shows as the offset of the first bad byte. Both ends also fold what they sent / received into a hash (a
 * 64-bit multiply-xor over 8-byte words, carried across calls) so a run can print one number per direction
 * and a script can compare them. Self-contained: the kernel-side helper does not link brisk.
 */
#ifndef BRISK_TESTS_INTEROP_PATTERN_H
#define BRISK_TESTS_INTEROP_PATTERN_H

#include <stddef.h>
#include <stdint.h>
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

/* Writes bytes [off, off + len) of the stream for `seed` into buf. */
static inline void pattern_fill(uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t pos = off + i;
        uint64_t w = pattern_mix(seed + pos / 8);
        uint8_t b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)(w >> (8 * k));
        size_t in = (size_t)(pos % 8), n = 8 - in;
        if (n > len - i)
            n = len - i;
        memcpy(buf + i, b + in, n);
        i += n;
    }
}

/* Offset (relative to buf) of the first byte of buf that differs from the stream at `off`, or len. */
static inline size_t pattern_check(uint64_t seed, uint64_t off, const uint8_t *buf, size_t len)
{
    uint8_t want[4096];
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < sizeof(want) ? len - done : sizeof(want);
        pattern_fill(seed, off + done, want, n);
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

#endif
