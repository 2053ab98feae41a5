/* tests for src/core/pktbuf.c: size classes, headroom, reuse without allocation, the pool bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/pktbuf.h"

static void test_classes_and_headroom(void **state)
{
    (void)state;
    struct brisk_pktpool p;
    brisk_pktpool_init(&p, 64u << 20);
    brisk_pkt *a = brisk_pkt_alloc(&p, 1514);
    brisk_pkt *b = brisk_pkt_alloc(&p, 9014);
    brisk_pkt *c = brisk_pkt_alloc(&p, 65535 + 14);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_null(brisk_pkt_alloc(&p, BRISK_PKT_ROOM_LARGE + 1));
    assert_int_equal(p.alloc_fails, 1);
    assert_int_equal(a->pool_class, 0);
    assert_int_equal(b->pool_class, 1);
    assert_int_equal(c->pool_class, 2);
    assert_int_equal(brisk_pkt_headroom(a), BRISK_PKT_HEADROOM);
    assert_int_equal(a->len, 0);
    assert_true(brisk_pkt_tailroom(a) >= 1514);
    assert_int_equal(((uintptr_t)a->data) % 64, 0);
    uint8_t *body = brisk_pkt_put(a, 100);
    uint8_t *hdr = brisk_pkt_push(a, 54);
    assert_ptr_equal(hdr + 54, body);
    assert_int_equal(a->len, 154);
    brisk_pkt_pull(a, 14);
    assert_int_equal(a->len, 140);
    assert_int_equal(p.in_use, 3);
    brisk_pkt_free(&p, a);
    brisk_pkt_free(&p, b);
    brisk_pkt_free(&p, c);
    assert_int_equal(p.in_use, 0);
    brisk_pktpool_destroy(&p);
}

static void test_reuse_without_growth(void **state)
{
    (void)state;
    struct brisk_pktpool p;
    brisk_pktpool_init(&p, 64u << 20);
    brisk_pkt *held[100];
    for (int i = 0; i < 100; i++)
        held[i] = brisk_pkt_alloc(&p, 1500);
    for (int i = 0; i < 100; i++)
        brisk_pkt_free(&p, held[i]);
    uint64_t bytes = p.bytes;
    size_t slabs = p.nslabs;
    /* The steady state: alloc/free cycles never grow the pool. */
    for (int round = 0; round < 10000; round++) {
        brisk_pkt *x = brisk_pkt_alloc(&p, 1500);
        brisk_pkt *y = brisk_pkt_alloc(&p, 200);
        assert_non_null(x);
        assert_non_null(y);
        assert_int_equal(x->len, 0);
        assert_int_equal(x->flags, 0);
        assert_int_equal(x->gso_segs, 1);
        x->flags = 0xff; /* must be cleared on reuse */
        brisk_pkt_free(&p, y);
        brisk_pkt_free(&p, x);
    }
    assert_int_equal(p.bytes, bytes);
    assert_int_equal(p.nslabs, slabs);
    brisk_pktpool_destroy(&p);
}

static void test_bound(void **state)
{
    (void)state;
    struct brisk_pktpool p;
    brisk_pktpool_init(&p, 1u << 20);
    int n = 0;
    brisk_pkt *list = NULL;
    for (;;) {
        brisk_pkt *x = brisk_pkt_alloc(&p, 1500);
        if (!x)
            break;
        x->next = list;
        list = x;
        n++;
    }
    assert_true(n > 300); /* ~1 MB / ~2.3 KB */
    assert_true(p.bytes <= (1u << 20));
    assert_int_equal(p.alloc_fails, 1);
    /* Freed buffers are usable again. */
    brisk_pkt *x = list;
    list = list->next;
    brisk_pkt_free(&p, x);
    assert_non_null(x = brisk_pkt_alloc(&p, 1500));
    brisk_pkt_free(&p, x);
    while (list) {
        x = list;
        list = list->next;
        brisk_pkt_free(&p, x);
    }
    assert_int_equal(p.in_use, 0);
    brisk_pktpool_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_and_headroom),
        cmocka_unit_test(test_reuse_without_growth),
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
