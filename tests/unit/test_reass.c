/*
 * test_reass.c — out-of-order reassembly and SACK blocks (src/tcp/reass.c).
 *
 * Directed cases pin the contract: existing bytes win on overlap, duplicates and old data store nothing,
 * the piece / size-class layout and its memory accounting, SACK order (RFC 2018 §4) through merges and pops,
 * D-SACK lookups, the 2^32 wrap, pops with a byte limit (0, 1, part of a piece, exactly a piece, across
 * pieces and the wrap; the run left behind keeps its SACK place and stays linked), the bounds (a flood of
 * 1-byte segments stops at max_segs / max_mem with BRISK_ERR_NOMEM, all-or-nothing), pool exhaustion, and
 * every buffer back in the pool after clear.
 *
 * The randomized test plays a receiver: a stream cut into segments that arrive shuffled, duplicated and
 * overlapping, across the wrap in half the trials, some with tight bounds. In-order data goes straight to
 * the output (as tcp input does) or through insert; a pop with a random byte limit follows every arrival.
 * A reference bitmap of held bytes with each byte's latest arrival predicts every return value, the bytes
 * held, the runs and their SACK order, D-SACK lookups and (in bounded trials) exactly when NOMEM must happen;
 * the test also walks the piece list to check it is sorted, disjoint and accounted. At the end the output
 * must equal the stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/brisk.h"
#include "core/pktbuf.h"
#include "core/rand.h"
#include "support/testutil.h"
#include "tcp/reass.h"
#include "wire/tcp.h"

#define NOLIMIT_MEM  UINT64_MAX
#define NOLIMIT_SEGS UINT32_MAX

struct sink {
    uint8_t *buf;
    size_t len, cap;
    int calls;
};

static void sink_deliver(void *ctx, const uint8_t *data, uint32_t n)
{
    struct sink *s = ctx;
    assert_true(n > 0);
    assert_true(s->len + n <= s->cap);
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->calls++;
}

static uint8_t pattern(uint64_t i)
{
    return (uint8_t)(brisk_mix64(i * 0x9e3779b97f4a7c15ull + 7) >> 56);
}

static uint8_t *make_stream(size_t n)
{
    uint8_t *s = malloc(n ? n : 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = pattern(i);
    return s;
}

/* Truesize of a buffer holding `len` bytes as one piece: learned by storing it into a scratch store. */
static uint64_t piece_mem(struct brisk_pktpool *pool, uint32_t len)
{
    struct brisk_reass r;
    brisk_reass_init(&r);
    static uint8_t zero[BRISK_PKT_ROOM_SMALL];
    assert_true(len <= sizeof(zero));
    assert_int_equal(brisk_reass_insert(pool, &r, 0, 1, zero, len, NOLIMIT_MEM, NOLIMIT_SEGS), (int)len);
    uint64_t m = r.mem;
    brisk_reass_clear(pool, &r);
    return m;
}

static void test_basic_hole_fill(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    const uint32_t isn = 1000;
    uint8_t *st = make_stream(100);
    uint32_t b[4][2];
    struct sink out = {.buf = malloc(100), .cap = 100};

    assert_int_equal(brisk_reass_sack(&r, b, 4), 0);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 10, st + 10, 10, NOLIMIT_MEM, NOLIMIT_SEGS),
                     10);
    assert_int_equal(r.nsegs, 1);
    assert_int_equal(r.bytes, 10);
    assert_int_equal(pool.in_use, 1);
    assert_int_equal(brisk_reass_sack(&r, b, 4), 1);
    assert_int_equal(b[0][0], isn + 10);
    assert_int_equal(b[0][1], isn + 20);
    /* Nothing at rcv_nxt yet. */
    assert_int_equal(brisk_reass_pop(&pool, &r, isn, UINT32_MAX, sink_deliver, &out), 0);
    assert_int_equal(out.calls, 0);

    /* Overlapping on the left: only the new part is stored, as a separate piece of the same run. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 5, st + 5, 10, NOLIMIT_MEM, NOLIMIT_SEGS), 5);
    assert_int_equal(r.nsegs, 2);
    assert_int_equal(r.bytes, 15);
    assert_int_equal(r.nruns, 1);
    assert_int_equal(brisk_reass_sack(&r, b, 4), 1);
    assert_int_equal(b[0][0], isn + 5);
    assert_int_equal(b[0][1], isn + 20);
    assert_true(brisk_reass_holds(&r, isn + 5, 15));
    assert_true(brisk_reass_holds(&r, isn + 12, 1));
    assert_false(brisk_reass_holds(&r, isn + 4, 2));
    assert_false(brisk_reass_holds(&r, isn + 19, 2));
    assert_false(brisk_reass_holds(&r, isn + 5, 0));

    /* A separate run beyond. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 30, st + 30, 5, NOLIMIT_MEM, NOLIMIT_SEGS), 5);
    assert_int_equal(r.nruns, 2);
    assert_int_equal(brisk_reass_sack(&r, b, 4), 2);
    assert_int_equal(b[0][0], isn + 30);
    assert_int_equal(b[1][0], isn + 5);

    /* The first hole fills (through insert, at rcv_nxt): pop delivers the first run, not the second. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn, st, 5, NOLIMIT_MEM, NOLIMIT_SEGS), 5);
    assert_int_equal(brisk_reass_pop(&pool, &r, isn, UINT32_MAX, sink_deliver, &out), 20);
    assert_int_equal(out.len, 20);
    assert_memory_equal(out.buf, st, 20);
    assert_int_equal(r.nsegs, 1);
    assert_int_equal(r.bytes, 5);
    assert_int_equal(r.nruns, 1);
    assert_int_equal(brisk_reass_sack(&r, b, 4), 1);
    assert_int_equal(b[0][0], isn + 30);
    assert_int_equal(b[0][1], isn + 35);
    /* rcv_nxt advanced by in-order data delivered elsewhere, into the held run: the overlap is discarded. */
    memcpy(out.buf + out.len, st + 20, 12);
    out.len += 12;
    assert_int_equal(brisk_reass_pop(&pool, &r, isn + 32, UINT32_MAX, sink_deliver, &out), 3);
    assert_int_equal(out.len, 35);
    assert_memory_equal(out.buf, st, 35);
    assert_int_equal(r.nsegs, 0);
    assert_int_equal(r.bytes, 0);
    assert_int_equal(r.mem, 0);
    assert_int_equal(r.nruns, 0);
    assert_null(r.head);
    assert_int_equal(brisk_reass_sack(&r, b, 4), 0);
    assert_int_equal(pool.in_use, 0);
    free(out.buf);
    free(st);
    brisk_pktpool_destroy(&pool);
}

static void test_existing_bytes_win(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    struct sink out = {.buf = malloc(64), .cap = 64};
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 10, (const uint8_t *)"AAAA", 4, NOLIMIT_MEM, 100), 4);
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 20, (const uint8_t *)"CC", 2, NOLIMIT_MEM, 100), 2);
    /* Covers both runs and the gaps around and between them: three gaps stored, the held bytes kept. */
    assert_int_equal(
        brisk_reass_insert(&pool, &r, 0, 8, (const uint8_t *)"bbxxxxbbbbbbxxbb", 16, NOLIMIT_MEM, 100), 10);
    assert_int_equal(r.nsegs, 5);
    assert_int_equal(r.nruns, 1);
    /* A full duplicate stores nothing and takes no buffer. */
    uint64_t in_use = pool.in_use;
    assert_int_equal(
        brisk_reass_insert(&pool, &r, 0, 9, (const uint8_t *)"zzzzzzzzzzzz", 12, NOLIMIT_MEM, 100), 0);
    assert_int_equal(pool.in_use, in_use);
    /* Data entirely before rcv_nxt is not out of order at all; partly before is trimmed. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 8, 0, (const uint8_t *)"01234567", 8, NOLIMIT_MEM, 100),
                     0);
    assert_int_equal(brisk_reass_insert(&pool, &r, 5, 0, (const uint8_t *)"01234567", 8, NOLIMIT_MEM, 100),
                     3);
    assert_int_equal(brisk_reass_pop(&pool, &r, 5, UINT32_MAX, sink_deliver, &out), 19);
    assert_int_equal(out.len, 19);
    assert_memory_equal(out.buf, "567bbAAAAbbbbbbCCbb", 19);
    assert_int_equal(pool.in_use, 0);
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 0, NULL, 0, NOLIMIT_MEM, 100), 0);
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 1, out.buf, 0x80000000u, NOLIMIT_MEM, 100),
                     BRISK_ERR_INVAL);
    assert_null(r.head);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

/* A jumbo segment is cut into full small buffers plus a remainder; a 64 KB one takes one large buffer. */
static void test_piece_layout(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t *st = make_stream(200000);
    struct sink out = {.buf = malloc(200000), .cap = 200000};
    uint64_t small = piece_mem(&pool, 1);
    assert_true(small >= BRISK_PKT_ROOM_SMALL + BRISK_PKT_HEADROOM);

    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 100, st + 100, 9000, NOLIMIT_MEM, 100), 9000);
    assert_int_equal(r.nsegs, 5); /* 4 x 2048 + 808 */
    assert_int_equal(r.mem, 5 * small);
    assert_int_equal(r.nruns, 1);
    for (brisk_pkt *p = r.head; p; p = p->next) {
        assert_int_equal(p->truesize, small);
        assert_int_equal(p->len, p->end_seq - p->seq);
    }
    uint64_t before = r.mem;
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 20000, st + 20000, 70000, NOLIMIT_MEM, 100), 70000);
    assert_int_equal(r.nsegs, 5 + 4);                /* 65600 + 2048 + 2048 + 304 */
    assert_true(r.mem - before < 70000 + 70000 / 8); /* little waste */
    assert_int_equal(brisk_reass_sack(&r, (uint32_t(*)[2])(uint32_t[2][2]){{0}}, 0), 0);
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 0, st, 100, NOLIMIT_MEM, 100), 100);
    assert_int_equal(brisk_reass_pop(&pool, &r, 0, UINT32_MAX, sink_deliver, &out), 9100);
    assert_int_equal(brisk_reass_insert(&pool, &r, 9100, 9100, st + 9100, 10900, NOLIMIT_MEM, 100), 10900);
    assert_int_equal(brisk_reass_pop(&pool, &r, 9100, UINT32_MAX, sink_deliver, &out), 80900);
    assert_int_equal(out.len, 90000);
    assert_memory_equal(out.buf, st, 90000);
    assert_int_equal(r.nsegs, 0);
    assert_int_equal(r.mem, 0);
    assert_int_equal(pool.in_use, 0);
    free(st);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

static void expect_blocks(const struct brisk_reass *r, int max, int n, const uint32_t (*want)[2])
{
    uint32_t b[16][2];
    memset(b, 0xee, sizeof(b));
    assert_int_equal(brisk_reass_sack(r, b, max), n);
    for (int i = 0; i < n; i++) {
        if (b[i][0] != want[i][0] || b[i][1] != want[i][1])
            fail_msg("block %d: [%u, %u) want [%u, %u)", i, b[i][0], b[i][1], want[i][0], want[i][1]);
    }
    assert_int_equal(b[n][0], 0xeeeeeeeeu); /* nothing written past the count */
}

static void test_sack_order(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t d[100] = {0};
    struct sink out = {.buf = malloc(1000), .cap = 1000};
    /* Runs A..F at 10, 20, 30, 40, 50, 60 (5 bytes each) arriving in that order. */
    for (uint32_t i = 1; i <= 6; i++)
        assert_int_equal(brisk_reass_insert(&pool, &r, 0, 10 * i, d, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{60, 65}, {50, 55}, {40, 45}, {30, 35}});
    expect_blocks(&r, 2, 2, (const uint32_t[][2]){{60, 65}, {50, 55}});
    /* Beyond the remembered four: the older runs, latest first. */
    expect_blocks(&r, 16, 6,
                  (const uint32_t[][2]){{60, 65}, {50, 55}, {40, 45}, {30, 35}, {20, 25}, {10, 15}});
    /* A duplicate arrival in B makes B the most recent (RFC 2018: first the block of the latest segment). */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 21, d, 2, NOLIMIT_MEM, 100), 0);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{20, 25}, {60, 65}, {50, 55}, {40, 45}});
    /* Extending A on the right: A is newest, now [10, 17). */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 15, d, 2, NOLIMIT_MEM, 100), 2);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{10, 17}, {20, 25}, {60, 65}, {50, 55}});
    /* Filling D..E merges two remembered runs: the list is topped up with the next latest (C). */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 45, d, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{40, 55}, {10, 17}, {20, 25}, {60, 65}});
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 55, d, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{40, 65}, {10, 17}, {20, 25}, {30, 35}});
    assert_int_equal(r.nruns, 4);
    /* A pop removes A (remembered): the rest stay in order. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 0, d, 10, NOLIMIT_MEM, 100), 10);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{0, 17}, {40, 65}, {20, 25}, {30, 35}});
    assert_int_equal(brisk_reass_pop(&pool, &r, 0, UINT32_MAX, sink_deliver, &out), 17);
    expect_blocks(&r, 4, 3, (const uint32_t[][2]){{40, 65}, {20, 25}, {30, 35}});
    /* D-SACK lookups. */
    assert_true(brisk_reass_holds(&r, 40, 25));
    assert_true(brisk_reass_holds(&r, 47, 10)); /* across piece boundaries inside a run */
    assert_false(brisk_reass_holds(&r, 35, 6));
    assert_false(brisk_reass_holds(&r, 60, 6));
    assert_false(brisk_reass_holds(&r, 10, 1));
    brisk_reass_clear(&pool, &r);
    assert_int_equal(pool.in_use, 0);
    assert_int_equal(brisk_reass_sack(&r, (uint32_t(*)[2])out.buf, 4), 0);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

/* A pop that removes remembered runs refills the list from older runs. */
static void test_sack_refill_after_pop(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t d[16] = {0};
    struct sink out = {.buf = malloc(1000), .cap = 1000};
    /* Runs arrive from the top down, so the lowest ones are the most recent. */
    for (uint32_t i = 8; i >= 1; i--)
        assert_int_equal(brisk_reass_insert(&pool, &r, 0, 10 * i, d, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{10, 15}, {20, 25}, {30, 35}, {40, 45}});
    /* rcv_nxt jumps to 33 (in-order data delivered elsewhere): runs 10, 20 and half of 30 go. */
    assert_int_equal(brisk_reass_pop(&pool, &r, 33, UINT32_MAX, sink_deliver, &out), 2);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{40, 45}, {50, 55}, {60, 65}, {70, 75}});
    expect_blocks(&r, 8, 5, (const uint32_t[][2]){{40, 45}, {50, 55}, {60, 65}, {70, 75}, {80, 85}});
    assert_int_equal(r.nruns, 5);
    brisk_reass_clear(&pool, &r);
    assert_int_equal(pool.in_use, 0);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

static void test_wrap(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t *st = make_stream(3000);
    struct sink out = {.buf = malloc(3000), .cap = 3000};
    const uint32_t isn = 0xfffffc00u; /* 1024 bytes before the wrap */
    /* Pieces on both sides of 2^32 and one across it. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 2000, st + 2000, 1000, NOLIMIT_MEM, 100), 1000);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 500, st + 500, 300, NOLIMIT_MEM, 100), 300);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 1000, st + 1000, 100, NOLIMIT_MEM, 100), 100);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 700, st + 700, 1400, NOLIMIT_MEM, 100), 1100);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{isn + 500, isn + 3000}});
    assert_int_equal(isn + 3000, 3000u - 1024u);
    assert_true(brisk_reass_holds(&r, 0xfffffff0u, 0x20));
    assert_false(brisk_reass_holds(&r, isn + 499, 10));
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn, st, 500, NOLIMIT_MEM, 100), 500);
    assert_int_equal(brisk_reass_pop(&pool, &r, isn, UINT32_MAX, sink_deliver, &out), 3000);
    assert_memory_equal(out.buf, st, 3000);
    assert_int_equal(pool.in_use, 0);
    free(st);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

/* Pops at sequence isn + ro with limit max: expects `want` bytes, st[ro, ro + want), in `calls` calls. */
static void pop_expect(struct brisk_pktpool *pool, struct brisk_reass *r, uint32_t isn, uint32_t ro,
                       uint32_t max, const uint8_t *st, uint32_t want, int calls)
{
    uint8_t buf[256];
    struct sink out = {.buf = buf, .cap = sizeof(buf)};
    assert_int_equal(brisk_reass_pop(pool, r, isn + ro, max, sink_deliver, &out), want);
    assert_int_equal(out.len, want);
    assert_int_equal(out.calls, calls);
    if (want)
        assert_memory_equal(buf, st + ro, want);
}

/* A limited pop delivers exactly what fits and leaves the rest held, trimmed to start at the new rcv_nxt:
 * limits of 0, 1, part of a piece, exactly a piece, across pieces, across the 2^32 wrap, exactly the rest. */
static void test_pop_limits(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t *st = make_stream(200);
    const uint32_t isn = 0xffffffc0u; /* the wrap is at stream offset 64 */
    uint64_t small = piece_mem(&pool, 1);
    /* One run [0, 100) of four pieces, the last across the wrap, and a run [120, 130). */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 10, st + 10, 10, NOLIMIT_MEM, 100), 10);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 20, st + 20, 30, NOLIMIT_MEM, 100), 30);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 50, st + 50, 50, NOLIMIT_MEM, 100), 50);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 120, st + 120, 10, NOLIMIT_MEM, 100), 10);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn, st, 10, NOLIMIT_MEM, 100), 10);
    assert_int_equal(r.nsegs, 5);
    assert_int_equal(r.mem, 5 * small);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn, isn + 100}, {isn + 120, isn + 130}});

    /* 0: nothing delivered, nothing changes. */
    pop_expect(&pool, &r, isn, 0, 0, st, 0, 0);
    assert_int_equal(r.nsegs, 5);
    assert_int_equal(r.bytes, 110);
    assert_int_equal(r.mem, 5 * small);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn, isn + 100}, {isn + 120, isn + 130}});
    /* 1, then part of a piece: the front piece is trimmed in place, keeping its buffer. */
    pop_expect(&pool, &r, isn, 0, 1, st, 1, 1);
    assert_int_equal(r.head->seq, isn + 1);
    assert_int_equal(r.head->len, 9);
    assert_int_equal(r.bytes, 109);
    assert_int_equal(r.mem, 5 * small);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn + 1, isn + 100}, {isn + 120, isn + 130}});
    assert_false(brisk_reass_holds(&r, isn, 1));
    assert_true(brisk_reass_holds(&r, isn + 1, 99));
    pop_expect(&pool, &r, isn, 1, 4, st, 4, 1);
    assert_int_equal(r.head->seq, isn + 5);
    /* Exactly the rest of the piece: it is freed, the next piece of the run becomes the run's first. */
    pop_expect(&pool, &r, isn, 5, 5, st, 5, 1);
    assert_int_equal(r.nsegs, 4);
    assert_int_equal(r.bytes, 100);
    assert_int_equal(r.mem, 4 * small);
    assert_int_equal(r.nruns, 2);
    assert_int_equal(r.head->seq, isn + 10);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn + 10, isn + 100}, {isn + 120, isn + 130}});
    /* An insert that walks over the run (through its new first piece) and extends it. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn + 10, isn + 100, st + 100, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn + 10, isn + 105}, {isn + 120, isn + 130}});
    /* Across pieces: one whole, part of the next. */
    pop_expect(&pool, &r, isn, 10, 25, st, 25, 2);
    assert_int_equal(r.head->seq, isn + 35);
    assert_int_equal(r.nsegs, 4);
    /* Across the wrap, ending inside the piece that straddles it. */
    pop_expect(&pool, &r, isn, 35, 40, st, 40, 2);
    assert_int_equal(r.head->seq, 11u);
    assert_int_equal(r.head->seq, isn + 75);
    assert_int_equal(r.nsegs, 3);
    assert_int_equal(r.bytes, 30 + 10);
    expect_blocks(&r, 4, 2, (const uint32_t[][2]){{isn + 75, isn + 105}, {isn + 120, isn + 130}});
    /* Inserts after a limited pop: the gap fills, a duplicate straddling rcv_nxt stores nothing. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn + 75, isn + 105, st + 105, 15, NOLIMIT_MEM, 100), 15);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn + 75, isn + 70, st + 70, 10, NOLIMIT_MEM, 100), 0);
    assert_int_equal(r.nruns, 1);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{isn + 75, isn + 130}});
    /* rcv_nxt moves 5 bytes into the run (data delivered elsewhere): a pop of 0 still drops those bytes. */
    pop_expect(&pool, &r, isn, 80, 0, st, 0, 0);
    assert_int_equal(r.head->seq, isn + 80);
    assert_int_equal(r.bytes, 50);
    assert_int_equal(r.nsegs, 4);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{isn + 80, isn + 130}});
    /* Exactly everything held: four pieces, the store empties. */
    pop_expect(&pool, &r, isn, 80, 50, st, 50, 4);
    assert_null(r.head);
    assert_null(r.tail);
    assert_int_equal(r.nsegs, 0);
    assert_int_equal(r.bytes, 0);
    assert_int_equal(r.mem, 0);
    assert_int_equal(r.nruns, 0);
    assert_int_equal(r.nrecent, 0);
    assert_int_equal(pool.in_use, 0);
    pop_expect(&pool, &r, isn, 130, UINT32_MAX, st, 0, 0);
    free(st);
    brisk_pktpool_destroy(&pool);
}

/* A pop that stops inside a run hands the run's bookkeeping (arrival stamp, place in the SACK order, the link
 * from its last piece) to the run's new first piece. */
static void test_pop_limit_keeps_runs(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t *st = make_stream(200);
    /* Arrival order: R1 [100, 105); F [0, 30) in three pieces; R2..R5 at 40, 50, 60, 70. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 100, st + 100, 5, NOLIMIT_MEM, 100), 5);
    for (uint32_t o = 0; o < 30; o += 10)
        assert_int_equal(brisk_reass_insert(&pool, &r, 0, o, st + o, 10, NOLIMIT_MEM, 100), 10);
    for (uint32_t o = 40; o <= 70; o += 10)
        assert_int_equal(brisk_reass_insert(&pool, &r, 0, o, st + o, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 16, 6,
                  (const uint32_t[][2]){{70, 75}, {60, 65}, {50, 55}, {40, 45}, {0, 30}, {100, 105}});
    /* F, outside the remembered four, loses a piece and a half: still older than R2, newer than R1. */
    pop_expect(&pool, &r, 0, 0, 15, st, 15, 2);
    expect_blocks(&r, 16, 6,
                  (const uint32_t[][2]){{70, 75}, {60, 65}, {50, 55}, {40, 45}, {15, 30}, {100, 105}});
    /* An arrival in F makes it the newest; a pop to the next piece boundary keeps it there. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 15, 16, st + 16, 2, NOLIMIT_MEM, 100), 0);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{15, 30}, {70, 75}, {60, 65}, {50, 55}});
    pop_expect(&pool, &r, 0, 15, 5, st, 5, 1);
    expect_blocks(&r, 4, 4, (const uint32_t[][2]){{20, 30}, {70, 75}, {60, 65}, {50, 55}});
    assert_true(brisk_reass_holds(&r, 20, 10));
    /* The rest of F, exactly: the run leaves, the remembered list is topped up with R2. */
    pop_expect(&pool, &r, 0, 20, 10, st, 10, 1);
    assert_int_equal(r.nruns, 5);
    expect_blocks(&r, 16, 5, (const uint32_t[][2]){{70, 75}, {60, 65}, {50, 55}, {40, 45}, {100, 105}});
    /* R1 grows to three pieces; rcv_nxt jumps into it (data delivered elsewhere) and a pop of 4 delivers
     * across its first two pieces: R2..R5 are discarded whole, the first piece partly. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 30, 105, st + 105, 5, NOLIMIT_MEM, 100), 5);
    assert_int_equal(brisk_reass_insert(&pool, &r, 30, 110, st + 110, 5, NOLIMIT_MEM, 100), 5);
    pop_expect(&pool, &r, 0, 103, 4, st, 4, 2);
    assert_int_equal(r.nruns, 1);
    assert_int_equal(r.nsegs, 2);
    assert_int_equal(r.bytes, 8);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{107, 115}});
    /* Appending past the tail finds the run's first through the tail: the new first piece. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 107, 115, st + 115, 5, NOLIMIT_MEM, 100), 5);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{107, 120}});
    assert_true(brisk_reass_holds(&r, 107, 13));
    assert_false(brisk_reass_holds(&r, 106, 2));
    pop_expect(&pool, &r, 0, 107, UINT32_MAX, st, 13, 3);
    assert_null(r.head);
    assert_int_equal(r.nruns, 0);
    assert_int_equal(r.mem, 0);
    assert_int_equal(pool.in_use, 0);
    free(st);
    brisk_pktpool_destroy(&pool);
}

/* The common cases cost O(1): the flight that keeps arriving above a hole, and the retransmissions that fill
 * the first hole, step over no pieces however many are held; a retransmission overlapping the highest piece
 * steps over whole runs, not pieces. */
static void test_fast_paths(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t *st = make_stream(1200000);
    struct sink out = {.buf = malloc(1200000), .cap = 1200000};
    const uint32_t isn = 0xfff00000u, mss = 1000;
    /* Segment 0..99 lost; 100..1099 arrive in order. */
    for (uint32_t i = 100; i < 1100; i++)
        assert_int_equal(
            brisk_reass_insert(&pool, &r, isn, isn + i * mss, st + i * mss, mss, NOLIMIT_MEM, 5000),
            (int)mss);
    assert_int_equal(r.walk_steps, 0);
    assert_int_equal(r.nruns, 1);
    /* Retransmissions of 99 down to 1 arrive first (reordered), each at the end of the first hole. */
    for (uint32_t i = 99; i >= 1; i--)
        assert_int_equal(
            brisk_reass_insert(&pool, &r, isn, isn + i * mss, st + i * mss, mss, NOLIMIT_MEM, 5000),
            (int)mss);
    assert_int_equal(r.walk_steps, 0);
    assert_int_equal(r.nsegs, 1099);
    /* A partial duplicate of the last segment and beyond: one run stepped over, then one piece. */
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn + 1099 * mss + 500, st + 1099 * mss + 500, 1000,
                                        NOLIMIT_MEM, 5000),
                     500);
    assert_true(r.walk_steps <= 4);
    assert_int_equal(brisk_reass_insert(&pool, &r, isn, isn, st, mss, NOLIMIT_MEM, 5000), (int)mss);
    assert_int_equal(brisk_reass_pop(&pool, &r, isn, UINT32_MAX, sink_deliver, &out), 1100 * mss + 500);
    assert_memory_equal(out.buf, st, 1100 * mss + 500);
    assert_int_equal(pool.in_use, 0);
    free(st);
    free(out.buf);
    brisk_pktpool_destroy(&pool);
}

/* A peer floods 1-byte segments at every other sequence number. */
static void flood(uint64_t max_mem, uint32_t max_segs, uint32_t expect_held)
{
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 256u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    const uint32_t rcv_nxt = 0xffffff00u;
    uint8_t x = 'x';
    uint32_t stored = 0, refused = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        int rc = brisk_reass_insert(&pool, &r, rcv_nxt, rcv_nxt + 1 + 2 * i, &x, 1, max_mem, max_segs);
        if (rc == 1) {
            assert_int_equal(refused, 0); /* once full, stays full */
            stored++;
        } else {
            assert_int_equal(rc, BRISK_ERR_NOMEM);
            refused++;
        }
        assert_true(r.mem <= max_mem);
        assert_true(r.nsegs <= max_segs);
    }
    assert_int_equal(stored, expect_held);
    assert_int_equal(r.nsegs, expect_held);
    assert_int_equal(r.nruns, expect_held);
    assert_int_equal(pool.in_use, expect_held);
    assert_int_equal(pool.alloc_fails, 0);
    /* Refused segments left no trace: the SACK blocks are still the last stored ones. */
    uint32_t b[4][2];
    assert_int_equal(brisk_reass_sack(&r, b, 4), 4);
    assert_int_equal(b[0][0], rcv_nxt + 1 + 2 * (expect_held - 1));
    assert_int_equal(b[3][0], rcv_nxt + 1 + 2 * (expect_held - 4));
    /* The pool never grew past what the held pieces need (plus one slab of slack). */
    assert_true(pool.bytes <= r.mem + 64 * (r.mem / r.nsegs));
    /* A duplicate of held data still succeeds (stores nothing) while full. */
    assert_int_equal(brisk_reass_insert(&pool, &r, rcv_nxt, rcv_nxt + 1, &x, 1, max_mem, max_segs), 0);
    brisk_reass_clear(&pool, &r);
    assert_int_equal(pool.in_use, 0);
    assert_int_equal(r.mem, 0);
    assert_int_equal(r.nsegs, 0);
    brisk_pktpool_destroy(&pool);
}

static void test_flood_bounds(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 1u << 20);
    uint64_t small = piece_mem(&pool, 1);
    brisk_pktpool_destroy(&pool);
    flood(UINT64_MAX, 1000, 1000);               /* bounded by pieces */
    flood(300 * small + small / 2, 100000, 300); /* bounded by memory */
}

/* A segment needing several pieces is refused whole when the last one would cross a bound. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 64u << 20);
    struct brisk_reass r;
    brisk_reass_init(&r);
    uint8_t d[64] = {0};
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(brisk_reass_insert(&pool, &r, 0, 10 + 10 * i, d, 5, NOLIMIT_MEM, 100), 5);
    uint64_t mem = r.mem, small = r.mem / 5;
    /* [5, 65) has six gaps. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 5, d, 60, NOLIMIT_MEM, 10), BRISK_ERR_NOMEM);
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 5, d, 60, mem + 6 * small - 1, 100), BRISK_ERR_NOMEM);
    assert_int_equal(r.nsegs, 5);
    assert_int_equal(r.bytes, 25);
    assert_int_equal(r.mem, mem);
    assert_int_equal(r.nruns, 5);
    assert_int_equal(pool.in_use, 5);
    expect_blocks(&r, 2, 2, (const uint32_t[][2]){{50, 55}, {40, 45}});
    /* Exactly at the bounds it fits. */
    assert_int_equal(brisk_reass_insert(&pool, &r, 0, 5, d, 60, mem + 6 * small, 11), 35);
    expect_blocks(&r, 4, 1, (const uint32_t[][2]){{5, 65}});
    brisk_reass_clear(&pool, &r);

    /* Pool exhaustion: BRISK_ERR_NOBUFS, nothing stored, no buffer kept. */
    struct brisk_pktpool tiny;
    brisk_pktpool_init(&tiny, 3 * small + small / 2);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(brisk_reass_insert(&tiny, &r, 0, 10 + 10 * i, d, 5, NOLIMIT_MEM, 100), 5);
    assert_int_equal(brisk_reass_insert(&tiny, &r, 0, 5, d, 40, NOLIMIT_MEM, 100), BRISK_ERR_NOBUFS);
    assert_int_equal(tiny.in_use, 3);
    assert_int_equal(r.nsegs, 3);
    assert_int_equal(r.bytes, 15);
    assert_int_equal(r.nruns, 3);
    brisk_reass_clear(&tiny, &r);
    assert_int_equal(tiny.in_use, 0);
    brisk_pktpool_destroy(&tiny);
    assert_int_equal(pool.in_use, 0);
    brisk_pktpool_destroy(&pool);
}

/* ---------------------------------------------------------------------------------------------------------
 * Randomized receiver against a reference bitmap.
 * ------------------------------------------------------------------------------------------------------- */
struct rnd {
    uint64_t seed;
    int trial;
    uint64_t op;
    uint64_t refused, wrapped, stored, limited; /* totals, to show what the run covered */
};

#define CHECK(R, c)                                                                                          \
    do {                                                                                                     \
        if (!(c))                                                                                            \
            fail_msg("%s:%d: %s (seed %" PRIu64 ", trial %d, op %" PRIu64 ")", __FILE__, __LINE__, #c,       \
                     (R)->seed, (R)->trial, (R)->op);                                                        \
    } while (0)

struct seg {
    uint32_t off, len;
};

struct model {
    uint32_t L;      /* stream length */
    uint8_t *held;   /* held[i]: byte i is in the store (only i >= ro) */
    uint64_t *touch; /* latest arrival index covering byte i, or carried over from bytes that left the front
                        of its run (the store keeps a run's stamp when a pop or rcv_nxt cuts into it) */
    uint32_t ro;     /* rcv_nxt as a stream offset */
    uint32_t nheld;
};

struct refrun {
    uint32_t start, end; /* stream offsets */
    uint64_t stamp;
};

static int cmp_stamp_desc(const void *a, const void *b)
{
    const struct refrun *x = a, *y = b;
    return x->stamp < y->stamp ? 1 : x->stamp > y->stamp ? -1 : 0;
}

/* The reference runs above ro, most recent first. */
static uint32_t ref_runs(const struct model *m, struct refrun *runs)
{
    uint32_t n = 0;
    for (uint32_t i = m->ro; i < m->L;) {
        if (!m->held[i]) {
            i++;
            continue;
        }
        struct refrun rr = {.start = i, .stamp = 0};
        while (i < m->L && m->held[i]) {
            if (m->touch[i] > rr.stamp)
                rr.stamp = m->touch[i];
            i++;
        }
        rr.end = i;
        runs[n++] = rr;
    }
    qsort(runs, n, sizeof(runs[0]), cmp_stamp_desc);
    return n;
}

/* Walks the store: sorted, disjoint, accounted. */
static void check_store(struct rnd *R, const struct brisk_reass *r, const struct brisk_pktpool *pool,
                        uint32_t isn, const struct model *m, uint64_t piece_mem_small, int bounded,
                        int drained)
{
    uint32_t n = 0, bytes = 0, runs = 0;
    uint64_t mem = 0;
    const brisk_pkt *prev = NULL;
    for (const brisk_pkt *p = r->head; p; p = p->next) {
        CHECK(R, p->len == p->end_seq - p->seq && p->len > 0);
        /* Nothing held before rcv_nxt after a pop; nothing at it either unless the pop's limit stopped it. */
        CHECK(R, drained ? brisk_seq_gt(p->seq, isn + m->ro) : brisk_seq_geq(p->seq, isn + m->ro));
        if (prev)
            CHECK(R, brisk_seq_geq(p->seq, prev->end_seq));
        if (!prev || prev->end_seq != p->seq)
            runs++;
        if (bounded)
            CHECK(R, p->truesize == piece_mem_small);
        n++;
        bytes += p->len;
        mem += p->truesize;
        prev = p;
    }
    CHECK(R, r->tail == prev);
    CHECK(R, r->nsegs == n && r->bytes == bytes && r->mem == mem && r->nruns == runs);
    CHECK(R, r->bytes == m->nheld);
    CHECK(R, pool->in_use == n);
}

static void check_sack(struct rnd *R, struct brisk_rand *rng, const struct brisk_reass *r, uint32_t isn,
                       const struct model *m, struct refrun *runs)
{
    uint32_t nr = ref_runs(m, runs);
    CHECK(R, r->nruns == nr);
    /* The remembered runs are kept topped up, so building up to BRISK_REASS_RECENT blocks needs no scan. */
    CHECK(R, r->nrecent == (nr < BRISK_REASS_RECENT ? nr : BRISK_REASS_RECENT));
    int maxes[3] = {4, 1 + (int)brisk_rand_below(rng, 4), 64};
    for (int k = 0; k < 3; k++) {
        uint32_t b[64][2];
        int max = maxes[k];
        int n = brisk_reass_sack(r, b, max);
        CHECK(R, n == (int)(nr < (uint32_t)max ? nr : (uint32_t)max));
        for (int i = 0; i < n; i++) {
            CHECK(R, b[i][0] == isn + runs[i].start);
            CHECK(R, b[i][1] == isn + runs[i].end);
        }
    }
    /* D-SACK lookups at random. */
    for (int k = 0; k < 4; k++) {
        uint32_t a = (uint32_t)brisk_rand_below(rng, m->L);
        uint32_t l = (uint32_t)brisk_rand_below(rng, 40);
        if (a + l > m->L)
            l = m->L - a;
        int want = l > 0 && a >= m->ro;
        for (uint32_t i = a; want && i < a + l; i++)
            want = m->held[i];
        CHECK(R, brisk_reass_holds(r, isn + a, l) == want);
    }
}

static void run_trial(struct rnd *R, struct brisk_rand *rng, struct brisk_pktpool *pool, uint64_t small)
{
    uint32_t nsegs = 10 + (uint32_t)brisk_rand_below(rng, 200);
    int bounded = brisk_rand_below(rng, 3) == 0;
    uint32_t mss_max = bounded ? BRISK_PKT_ROOM_SMALL / 3 : 1460; /* bounded: every gap is one small piece */
    uint32_t mss = 1 + (uint32_t)brisk_rand_below(rng, brisk_rand_chance(rng, 0.3) ? 16 : mss_max);
    uint32_t L = nsegs * mss - (uint32_t)brisk_rand_below(rng, mss);
    /* Half the trials start just before 2^32, so the stream crosses the wrap. */
    uint32_t isn = brisk_rand_chance(rng, 0.5) ? (uint32_t)(0xffffffffu - (uint32_t)brisk_rand_below(rng, L))
                                               : brisk_rand_u32(rng);
    uint32_t max_segs = bounded ? 1 + (uint32_t)brisk_rand_below(rng, 40) : NOLIMIT_SEGS;
    uint64_t max_mem =
        bounded && brisk_rand_chance(rng, 0.5) ? small * (1 + brisk_rand_below(rng, 40)) + 7 : NOLIMIT_MEM;
    uint8_t *st = make_stream(L);
    struct model m = {.L = L};
    m.held = calloc(L, 1);
    m.touch = calloc(L, sizeof(m.touch[0]));
    struct refrun *runs = malloc(L * sizeof(*runs));
    struct sink out = {.buf = malloc(L), .cap = L};
    /* Arrivals: every segment once, some twice, some random overlapping ranges; shuffled locally or fully. */
    uint32_t cap = 3 * nsegs + 8, na = 0;
    struct seg *arr = malloc(cap * sizeof(*arr));
    assert_true(m.held && m.touch && runs && out.buf && arr);
    for (uint32_t o = 0; o < L; o += mss) {
        struct seg s = {o, o + mss <= L ? mss : L - o};
        arr[na++] = s;
        if (brisk_rand_chance(rng, 0.15))
            arr[na++] = s;
        if (brisk_rand_chance(rng, 0.2)) {
            uint32_t a = (uint32_t)brisk_rand_below(rng, L);
            uint32_t l = 1 + (uint32_t)brisk_rand_below(rng, bounded ? mss : 3 * mss);
            arr[na++] = (struct seg){a, a + l <= L ? l : L - a};
        }
    }
    uint32_t window = brisk_rand_chance(rng, 0.3) ? na : 1 + (uint32_t)brisk_rand_below(rng, 20);
    for (uint32_t i = 0; i < na; i++) {
        uint32_t j = i + (uint32_t)brisk_rand_below(rng, window < na - i ? window : na - i);
        struct seg t = arr[i];
        arr[i] = arr[j];
        arr[j] = t;
    }

    struct brisk_reass r;
    brisk_reass_init(&r);
    uint64_t stamp = 0, refused = 0;
    /* The shuffled arrivals, then an in-order retransmission of everything (the stream completes even
     * after refusals). */
    for (uint32_t i = 0; i < na + nsegs; i++) {
        R->op = i;
        struct seg s;
        if (i < na) {
            s = arr[i];
        } else {
            uint32_t o = (i - na) * mss;
            s = (struct seg){o, o + mss <= L ? mss : L - o};
        }
        uint32_t e = s.off + s.len;
        int direct = s.off <= m.ro && e > m.ro && (i >= na || brisk_rand_chance(rng, 0.5));
        if (direct) {
            /* tcp input's fast path: in-order bytes straight to the receive stream. */
            memcpy(out.buf + out.len, st + m.ro, e - m.ro);
            out.len += e - m.ro;
            /* If the held run around e survives (cut at its front), it keeps the stamp of its cut bytes. */
            uint64_t carry = 0;
            for (uint32_t k = e; k > m.ro && m.held[k - 1]; k--)
                carry = carry > m.touch[k - 1] ? carry : m.touch[k - 1];
            if (e < L && m.held[e] && carry > m.touch[e])
                m.touch[e] = carry;
            for (uint32_t k = m.ro; k < e; k++) {
                m.nheld -= m.held[k];
                m.held[k] = 0;
            }
            m.ro = e;
        } else {
            uint32_t a = s.off > m.ro ? s.off : m.ro;
            uint32_t gaps = 0, fresh = 0;
            for (uint32_t k = a; k < e; k++) {
                if (!m.held[k]) {
                    fresh++;
                    if (k == a || m.held[k - 1])
                        gaps++;
                }
            }
            /* Bounded trials use segments below one small buffer's room: one piece per gap. */
            int want_nomem = bounded && gaps > 0 &&
                             ((uint64_t)r.nsegs + gaps > max_segs || r.mem + gaps * small > max_mem);
            uint32_t before_segs = r.nsegs;
            uint64_t before_mem = r.mem;
            int rc =
                brisk_reass_insert(pool, &r, isn + m.ro, isn + s.off, st + s.off, s.len, max_mem, max_segs);
            if (want_nomem) {
                CHECK(R, rc == BRISK_ERR_NOMEM);
                CHECK(R, r.nsegs == before_segs && r.mem == before_mem);
                refused++;
            } else {
                CHECK(R, rc == (int)fresh);
                R->stored += fresh;
                if (bounded)
                    CHECK(R, r.nsegs == before_segs + gaps);
                if (a < e) {
                    stamp++;
                    for (uint32_t k = a; k < e; k++) {
                        m.nheld += !m.held[k];
                        m.held[k] = 1;
                        m.touch[k] = stamp;
                    }
                }
            }
        }
        CHECK(R, r.nsegs <= max_segs && r.mem <= max_mem);
        /* Pop after every arrival, as tcp input does whenever rcv_nxt may have moved, with the room the
         * receive stream has: often unlimited, else 0, 1 or up to a few segments. */
        uint32_t lim;
        uint64_t pick = brisk_rand_below(rng, 8);
        if (pick == 0)
            lim = 0;
        else if (pick == 1)
            lim = 1;
        else if (pick <= 4)
            lim = 1 + (uint32_t)brisk_rand_below(rng, 3 * mss);
        else
            lim = UINT32_MAX;
        size_t before = out.len;
        uint32_t got = brisk_reass_pop(pool, &r, isn + m.ro, lim, sink_deliver, &out);
        uint32_t avail = 0;
        while (m.ro + avail < L && m.held[m.ro + avail])
            avail++;
        uint32_t want = avail < lim ? avail : lim;
        uint64_t carry = 0;
        for (uint32_t k = 0; k < want; k++) {
            carry = carry > m.touch[m.ro] ? carry : m.touch[m.ro];
            m.held[m.ro++] = 0;
            m.nheld--;
        }
        if (want < avail && carry > m.touch[m.ro])
            m.touch[m.ro] = carry;
        R->limited += want < avail;
        CHECK(R, got == want);
        CHECK(R, out.len == before + got);
        CHECK(R, out.len == m.ro && memcmp(out.buf, st, out.len) == 0);
        check_store(R, &r, pool, isn, &m, small, bounded, want == avail);
        check_sack(R, rng, &r, isn, &m, runs);
    }
    CHECK(R, m.ro == L && out.len == L && memcmp(out.buf, st, L) == 0);
    CHECK(R, r.head == NULL && r.nsegs == 0 && r.bytes == 0 && r.mem == 0 && r.nruns == 0);
    CHECK(R, pool->in_use == 0);
    R->refused += refused;
    R->wrapped += isn > isn + L;
    /* Leave something held and clear it: every buffer goes back. */
    uint8_t x = 1;
    brisk_reass_insert(pool, &r, isn, isn + 5, &x, 1, NOLIMIT_MEM, NOLIMIT_SEGS);
    brisk_reass_insert(pool, &r, isn, isn + 9, &x, 1, NOLIMIT_MEM, NOLIMIT_SEGS);
    CHECK(R, pool->in_use == 2);
    brisk_reass_clear(pool, &r);
    CHECK(R, pool->in_use == 0 && r.head == NULL && r.nsegs == 0);
    free(st);
    free(m.held);
    free(m.touch);
    free(runs);
    free(out.buf);
    free(arr);
}

static void test_random_against_reference(void **state)
{
    (void)state;
    struct rnd R = {.seed = brisk_test_seed(0x4ea55)};
    struct brisk_rand rng;
    brisk_rand_seed(&rng, R.seed);
    struct brisk_pktpool pool;
    brisk_pktpool_init(&pool, 256u << 20);
    uint64_t small = piece_mem(&pool, 1);
    uint64_t ops = 0;
    for (R.trial = 0; R.trial < 200; R.trial++) {
        run_trial(&R, &rng, &pool, small);
        ops += R.op + 1;
    }
    print_message("reass random: seed %" PRIu64 ", %d trials (%" PRIu64 " across the wrap), %" PRIu64
                  " arrivals, %" PRIu64 " bytes stored out of order, %" PRIu64
                  " refused at the bounds, %" PRIu64 " pops stopped by their limit\n",
                  R.seed, R.trial, R.wrapped, ops, R.stored, R.refused, R.limited);
    CHECK(&R, R.wrapped > 0 && R.refused > 0 && R.limited > 0);
    CHECK(&R, pool.in_use == 0);
    brisk_pktpool_destroy(&pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_hole_fill),
        cmocka_unit_test(test_existing_bytes_win),
        cmocka_unit_test(test_piece_layout),
        cmocka_unit_test(test_sack_order),
        cmocka_unit_test(test_sack_refill_after_pop),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_pop_limits),
        cmocka_unit_test(test_pop_limit_keeps_runs),
        cmocka_unit_test(test_fast_paths),
        cmocka_unit_test(test_flood_bounds),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_random_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
