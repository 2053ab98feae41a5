/*
 * test_sbuf.c — the chunked byte stream (src/tcp/sbuf.c) and its chunk pool.
 *
 * Directed cases pin the contract (an empty stream holds no chunk, spans end at chunk boundaries, short
 * appends at the pool bound, chunk reuse without pool growth, O(1) sequential reads through the cursors
 * while consume frees chunks under them). The randomized test runs well over 100k append / consume /
 * copyout / span / clear operations against a flat reference array and checks the bookkeeping after every
 * one; its seed comes from brisk_test_seed() and is printed on failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "support/testutil.h"
#include "tcp/sbuf.h"

#define CAP BRISK_CHUNK_DATA

/* Deterministic content: byte i of a test stream. */
static uint8_t pattern(uint64_t pos)
{
    return (uint8_t)(brisk_mix64(pos + 0x9e3779b97f4a7c15ull) >> 56);
}

static void fill_pattern(uint8_t *dst, uint64_t pos, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = pattern(pos + i);
}

static void test_empty_and_small(void **state)
{
    (void)state;
    struct brisk_chunkpool p;
    struct brisk_sbuf b;
    brisk_chunkpool_init(&p, 1u << 20);
    brisk_sbuf_init(&b);
    const uint8_t *sp = (const uint8_t *)&b;
    assert_int_equal(brisk_sbuf_span(&b, 0, &sp), 0);
    assert_null(sp);
    assert_int_equal(brisk_sbuf_mem(&b), 0);
    assert_int_equal(brisk_sbuf_append(&p, &b, "", 0), 0);
    assert_null(b.head); /* appending nothing takes no chunk */

    assert_int_equal(brisk_sbuf_append(&p, &b, "hello world", 11), 11);
    assert_int_equal(b.len, 11);
    assert_int_equal(p.in_use, 1);
    assert_int_equal(brisk_sbuf_mem(&b), BRISK_CHUNK_SIZE);
    char out[32] = {0};
    assert_int_equal(brisk_sbuf_copyout(&b, 6, out, sizeof(out)), 5); /* stops at len */
    assert_memory_equal(out, "world", 5);
    assert_int_equal(brisk_sbuf_copyout(&b, 11, out, 4), 0);
    assert_int_equal(brisk_sbuf_span(&b, 3, &sp), 8);
    assert_memory_equal(sp, "lo world", 8);

    brisk_sbuf_consume(&p, &b, 6);
    assert_int_equal(b.len, 5);
    assert_int_equal(brisk_sbuf_copyout(&b, 0, out, 5), 5);
    assert_memory_equal(out, "world", 5);
    brisk_sbuf_consume(&p, &b, 5);
    /* Empty again: the last chunk went back too. */
    assert_int_equal(b.len, 0);
    assert_null(b.head);
    assert_null(b.tail);
    assert_int_equal(brisk_sbuf_mem(&b), 0);
    assert_int_equal(p.in_use, 0);
    /* And it is usable after emptying. */
    assert_int_equal(brisk_sbuf_append(&p, &b, "xy", 2), 2);
    assert_int_equal(brisk_sbuf_copyout(&b, 0, out, 2), 2);
    assert_memory_equal(out, "xy", 2);
    brisk_sbuf_clear(&p, &b);
    assert_int_equal(p.in_use, 0);
    assert_int_equal(b.len, 0);
    brisk_chunkpool_destroy(&p);
}

static void test_spans_at_chunk_boundaries(void **state)
{
    (void)state;
    struct brisk_chunkpool p;
    struct brisk_sbuf b;
    brisk_chunkpool_init(&p, 64u << 20);
    brisk_sbuf_init(&b);
    size_t total = 3 * (size_t)CAP + 100;
    uint8_t *src = malloc(total);
    assert_non_null(src);
    fill_pattern(src, 0, total);
    assert_int_equal(brisk_sbuf_append(&p, &b, src, total), total);
    assert_int_equal(b.nchunks, 4);
    assert_int_equal(brisk_sbuf_mem(&b), 4ull * BRISK_CHUNK_SIZE);
    const uint8_t *sp;
    assert_int_equal(brisk_sbuf_span(&b, 0, &sp), CAP);
    assert_int_equal(brisk_sbuf_span(&b, CAP - 1, &sp), 1);
    assert_int_equal(sp[0], src[CAP - 1]);
    assert_int_equal(brisk_sbuf_span(&b, CAP, &sp), CAP);
    assert_int_equal(sp[0], src[CAP]);
    assert_int_equal(brisk_sbuf_span(&b, 3 * (size_t)CAP + 10, &sp), 90);
    assert_int_equal(brisk_sbuf_span(&b, total, &sp), 0);

    /* Consuming into the second chunk frees the first and shifts offsets. */
    brisk_sbuf_consume(&p, &b, CAP + 10);
    assert_int_equal(b.nchunks, 3);
    assert_int_equal(p.in_use, 3);
    assert_int_equal(brisk_sbuf_span(&b, 0, &sp), CAP - 10);
    assert_int_equal(sp[0], src[CAP + 10]);
    /* Exactly a chunk's end: the emptied chunk is returned at once. */
    brisk_sbuf_consume(&p, &b, CAP - 10);
    assert_int_equal(b.nchunks, 2);
    assert_int_equal(brisk_sbuf_span(&b, 0, &sp), CAP);
    assert_int_equal(sp[0], src[2 * (size_t)CAP]);
    uint8_t out[200];
    assert_int_equal(brisk_sbuf_copyout(&b, CAP - 100, out, sizeof(out)), 200); /* across the boundary */
    assert_memory_equal(out, src + 3 * (size_t)CAP - 100, 200);
    brisk_sbuf_clear(&p, &b);
    assert_int_equal(p.in_use, 0);
    free(src);
    brisk_chunkpool_destroy(&p);
}

static void test_pool_bound(void **state)
{
    (void)state;
    struct brisk_chunkpool p;
    struct brisk_sbuf a, b;
    /* Room for 5 chunks: the slab is carved short rather than refused. */
    brisk_chunkpool_init(&p, 5ull * BRISK_CHUNK_SIZE + 100);
    brisk_sbuf_init(&a);
    brisk_sbuf_init(&b);
    size_t big = 8 * (size_t)CAP;
    uint8_t *src = malloc(big);
    assert_non_null(src);
    fill_pattern(src, 0, big);
    assert_int_equal(brisk_sbuf_append(&p, &a, src, 3 * (size_t)CAP), 3 * (size_t)CAP);
    /* Only two chunks are left: a short append, counted. */
    assert_int_equal(brisk_sbuf_append(&p, &b, src, big), 2 * (size_t)CAP);
    assert_int_equal(p.alloc_fails, 1);
    assert_true(p.bytes <= p.bytes_limit);
    assert_int_equal(p.in_use, 5);
    assert_int_equal(brisk_sbuf_append(&p, &b, src, 1), 0);
    assert_int_equal(b.len, 2 * (size_t)CAP);
    uint8_t out[64];
    assert_int_equal(brisk_sbuf_copyout(&b, 2 * (size_t)CAP - 64, out, 64), 64);
    assert_memory_equal(out, src + 2 * (size_t)CAP - 64, 64);
    /* Consuming from one stream frees memory for the other. */
    brisk_sbuf_consume(&p, &a, CAP);
    assert_int_equal(brisk_sbuf_append(&p, &b, src, 100), 100);
    assert_int_equal(b.len, 2 * (size_t)CAP + 100);
    brisk_sbuf_clear(&p, &a);
    brisk_sbuf_clear(&p, &b);
    assert_int_equal(p.in_use, 0);
    assert_int_equal(p.nfree, p.ntotal);
    assert_true(p.bytes <= p.bytes_limit);
    free(src);
    brisk_chunkpool_destroy(&p);
}

static void test_steady_state_reuse(void **state)
{
    (void)state;
    struct brisk_chunkpool p;
    struct brisk_sbuf b[4];
    brisk_chunkpool_init(&p, 256u << 20);
    static uint8_t src[100000];
    fill_pattern(src, 0, sizeof(src));
    for (int i = 0; i < 4; i++)
        brisk_sbuf_init(&b[i]);
    uint64_t bytes = 0, ntotal = 0;
    size_t nslabs = 0;
    /* Four streams cycle through bounded windows of data: after the first rounds the pool must not grow. */
    for (int round = 0; round < 3000; round++) {
        for (int i = 0; i < 4; i++) {
            size_t n = (size_t)(round * 7919 + i * 104729) % sizeof(src);
            assert_int_equal(brisk_sbuf_append(&p, &b[i], src, n), n);
            if (b[i].len > 200000)
                brisk_sbuf_consume(&p, &b[i], (size_t)b[i].len - 50000);
        }
        if (round == 100) {
            bytes = p.bytes;
            nslabs = p.nslabs;
            ntotal = p.ntotal;
        }
    }
    assert_int_equal(p.bytes, bytes);
    assert_int_equal(p.nslabs, nslabs);
    assert_int_equal(p.ntotal, ntotal);
    assert_int_equal(p.alloc_fails, 0);
    uint64_t held = 0;
    for (int i = 0; i < 4; i++) {
        held += b[i].nchunks;
        brisk_sbuf_clear(&p, &b[i]);
    }
    assert_true(held > 0);
    assert_int_equal(p.in_use, 0);
    brisk_chunkpool_destroy(&p);
}

/* Transmit (at snd_nxt) and SACK-driven retransmission (at a hole far from both ends) read sequentially and
 * interleaved while ACKs consume the front: locating each read must cost O(1) chunk steps, not a walk from
 * the head. */
static void test_sequential_reads_are_o1(void **state)
{
    (void)state;
    struct brisk_chunkpool p;
    struct brisk_sbuf b;
    brisk_chunkpool_init(&p, 64u << 20);
    brisk_sbuf_init(&b);
    size_t total = 512 * (size_t)CAP; /* 8 MB */
    uint8_t *src = malloc(total);
    assert_non_null(src);
    fill_pattern(src, 0, total);
    assert_int_equal(brisk_sbuf_append(&p, &b, src, total), total);

    uint64_t una = 0, rtx = total / 4, nxt = total / 2;
    const size_t mss = 1448;
    static uint8_t seg[64 * 1024];
    uint64_t reads = 0;
    b.walk_steps = 0;
    while (nxt < total) {
        /* A TSO burst of new data. */
        size_t n = brisk_sbuf_copyout(&b, (size_t)(nxt - una), seg, 44 * mss);
        assert_memory_equal(seg, src + nxt, n);
        nxt += n;
        reads++;
        /* Retransmissions, zero-copy spans. */
        for (int k = 0; k < 16; k++) {
            const uint8_t *sp;
            size_t s = brisk_sbuf_span(&b, (size_t)(rtx - una), &sp);
            assert_true(s > 0);
            if (s > mss)
                s = mss;
            assert_memory_equal(sp, src + rtx, s);
            rtx += s;
            reads++;
        }
        /* ACKs creep forward at the front, freeing chunks under nobody's cursor. */
        brisk_sbuf_consume(&p, &b, 5000);
        una += 5000;
    }
    assert_true(una < total / 4 && rtx > total / 4 + 16 * (size_t)CAP);
    /* Each read steps at most over the chunks it newly enters (plus the first walk of each reader); from
     * the head every read would take hundreds. */
    uint64_t bound = reads + 2 * (total / CAP);
    if (b.walk_steps > bound)
        fail_msg("walk_steps %" PRIu64 " > %" PRIu64 " for %" PRIu64 " reads", b.walk_steps, bound, reads);
    brisk_sbuf_clear(&p, &b);
    assert_int_equal(p.in_use, 0);
    free(src);
    brisk_chunkpool_destroy(&p);
}

/* ---------------------------------------------------------------------------------------------------------
 * Randomized against a flat reference.
 * ------------------------------------------------------------------------------------------------------- */
struct ref {
    uint8_t *buf; /* bytes held are buf[front, front + len) */
    size_t front, len, cap;
    uint64_t next_pos; /* pattern position of the next appended byte */
};

struct rnd {
    uint64_t seed, op;
};

#define CHECK(R, c)                                                                                          \
    do {                                                                                                     \
        if (!(c))                                                                                            \
            fail_msg("%s:%d: %s (seed %" PRIu64 ", op %" PRIu64 ")", __FILE__, __LINE__, #c, (R)->seed,      \
                     (R)->op);                                                                               \
    } while (0)

static void ref_push(struct ref *f, const uint8_t *src, size_t n)
{
    if (f->front + f->len + n > f->cap) {
        memmove(f->buf, f->buf + f->front, f->len);
        f->front = 0;
    }
    assert_true(f->len + n <= f->cap);
    memcpy(f->buf + f->front + f->len, src, n);
    f->len += n;
}

static size_t rand_len(struct brisk_rand *rng)
{
    uint64_t k = brisk_rand_below(rng, 100);
    if (k < 40)
        return (size_t)brisk_rand_below(rng, 65);
    if (k < 90)
        return (size_t)brisk_rand_below(rng, 3000);
    if (k < 98)
        return (size_t)brisk_rand_below(rng, 20000);
    return (size_t)brisk_rand_below(rng, 70000);
}

static void check_books(struct rnd *R, const struct brisk_chunkpool *p, const struct brisk_sbuf *b,
                        const struct ref *f)
{
    CHECK(R, b->len == f->len);
    if (b->len == 0) {
        CHECK(R, b->head == NULL && b->tail == NULL && b->nchunks == 0);
    } else {
        /* Every chunk but the tail is full: the count follows from head_off and len. */
        uint64_t want = (b->head_off + b->len + CAP - 1) / CAP;
        CHECK(R, b->nchunks == want);
        CHECK(R, b->head_off < CAP && b->tail_len >= 1 && b->tail_len <= CAP);
    }
    CHECK(R, brisk_sbuf_mem(b) == (uint64_t)b->nchunks * BRISK_CHUNK_SIZE);
    CHECK(R, p->in_use == b->nchunks);
    CHECK(R, p->bytes <= p->bytes_limit);
    CHECK(R, p->nfree + p->in_use == p->ntotal);
}

static void run_random(uint64_t seed, uint64_t ops, uint64_t pool_limit)
{
    struct rnd R = {.seed = seed};
    struct brisk_rand rng;
    brisk_rand_seed(&rng, seed);
    struct brisk_chunkpool p;
    struct brisk_sbuf b;
    brisk_chunkpool_init(&p, pool_limit);
    brisk_sbuf_init(&b);
    struct ref f = {.cap = 4u << 20};
    f.buf = malloc(f.cap);
    uint8_t *tmp = malloc(80000);
    uint8_t *out = malloc(80000);
    assert_non_null(f.buf);
    assert_non_null(tmp);
    assert_non_null(out);
    uint64_t short_appends = 0, clears = 0;
    for (R.op = 0; R.op < ops; R.op++) {
        uint64_t k = brisk_rand_below(&rng, 1000);
        if (k < 350) {
            size_t n = rand_len(&rng);
            if (f.len + n > 1500000) /* keep the stream (and the test) bounded */
                n = 0;
            fill_pattern(tmp, f.next_pos, n);
            size_t got = brisk_sbuf_append(&p, &b, tmp, n);
            CHECK(&R, got <= n);
            if (got < n) {
                /* Only the pool bound may shorten an append, and only by what no chunk could take. */
                CHECK(&R, pool_limit - p.bytes < BRISK_CHUNK_SIZE && p.nfree == 0);
                short_appends++;
            }
            ref_push(&f, tmp, got);
            f.next_pos += got;
        } else if (k < 550) {
            size_t n = f.len ? (size_t)brisk_rand_below(&rng, f.len + 1) : 0;
            if (brisk_rand_below(&rng, 4))
                n = n < 5000 ? n : (size_t)brisk_rand_below(&rng, 5000);
            brisk_sbuf_consume(&p, &b, n);
            f.front += n;
            f.len -= n;
        } else if (k < 800) {
            size_t off = (size_t)brisk_rand_below(&rng, f.len + 20);
            size_t n = rand_len(&rng);
            memset(out, 0xa5, n + 1);
            size_t got = brisk_sbuf_copyout(&b, off, out, n);
            size_t want = off >= f.len ? 0 : (f.len - off < n ? f.len - off : n);
            CHECK(&R, got == want);
            CHECK(&R, memcmp(out, f.buf + f.front + off, got) == 0);
            CHECK(&R, out[got] == 0xa5); /* nothing written past the count */
        } else if (k < 990) {
            size_t off = (size_t)brisk_rand_below(&rng, f.len + 5);
            const uint8_t *sp;
            size_t n = brisk_sbuf_span(&b, off, &sp);
            if (off >= f.len) {
                CHECK(&R, n == 0 && sp == NULL);
            } else {
                CHECK(&R, n > 0 && n <= f.len - off);
                /* A span runs to the end of the data or of its chunk, never shorter. */
                CHECK(&R, n == f.len - off || (b.head_off + off + n) % CAP == 0);
                CHECK(&R, n <= CAP);
                CHECK(&R, memcmp(sp, f.buf + f.front + off, n) == 0);
            }
        } else if (k < 999) {
            /* A sequential sweep: consecutive spans from a random offset, as transmit does. */
            size_t off = (size_t)brisk_rand_below(&rng, f.len + 1);
            for (int i = 0; i < 8 && off < f.len; i++) {
                const uint8_t *sp;
                size_t n = brisk_sbuf_span(&b, off, &sp);
                CHECK(&R, n > 0 && memcmp(sp, f.buf + f.front + off, n) == 0);
                off += n;
            }
        } else {
            brisk_sbuf_clear(&p, &b);
            f.front = f.len = 0;
            clears++;
        }
        check_books(&R, &p, &b, &f);
    }
    brisk_sbuf_clear(&p, &b);
    CHECK(&R, p.in_use == 0);
    CHECK(&R, p.nfree == p.ntotal);
    if (pool_limit < (1u << 20))
        CHECK(&R, short_appends > 0);
    print_message("sbuf random: seed %" PRIu64 ", %" PRIu64 " ops, %" PRIu64 " short appends, %" PRIu64
                  " clears, pool %" PRIu64 " chunks\n",
                  seed, ops, short_appends, clears, p.ntotal);
    free(f.buf);
    free(tmp);
    free(out);
    brisk_chunkpool_destroy(&p);
}

static void test_random_against_reference(void **state)
{
    (void)state;
    run_random(brisk_test_seed(0x5b0f), 150000, 64u << 20);
}

static void test_random_tight_pool(void **state)
{
    (void)state;
    /* 7.5 chunks: appends run into the bound all the time. */
    run_random(brisk_test_seed(0x5b0f) ^ 0xdeadbeef, 60000, 7ull * BRISK_CHUNK_SIZE + BRISK_CHUNK_SIZE / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_small),
        cmocka_unit_test(test_spans_at_chunk_boundaries),
        cmocka_unit_test(test_pool_bound),
        cmocka_unit_test(test_steady_state_reuse),
        cmocka_unit_test(test_sequential_reads_are_o1),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_random_tight_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
