/*
 * test_pmtu.c — path MTU discovery for TCP over IPv4 (RFC 1191; src/net/pmtu.c, src/tcp/icmp_err.c): an
 * ICMP "fragmentation needed" quoting a segment in flight lowers the destination's path MTU, the MSS
 * shrinks to it and what was in flight goes again at the new size; a quote outside the window is ignored
 * (RFC 5927); a report below route_min_pmtu sets the floor and keeps a soft EMSGSIZE; a larger report never
 * raises it; a new connection to the same destination starts at the path MTU until it expires.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"
#include "wire/icmp.h"
#include "wire/wire.h"

#define ROUTER  IP4(10, 0, 0, 254)
#define UNREACH BRISK_ICMP_DEST_UNREACH
#define FRAG    4 /* fragmentation needed and DF set */

/* A connection (timestamps on: MSS 1448 at MTU 1500) that has sent ten full segments, none acknowledged;
 * the first of them in *first (copied). */
static void flight(struct tf_conn *f, const char *const *sets, struct tf_seg *first)
{
    tf_conn_open(f, sets, NULL, NULL, 10 * TF_MS);
    assert_int_equal(tf_info(f->c).mss, 1448);
    tf_send_pattern(f->c, 0, 10 * 1448, 20 * TF_MS);
    *first = *tf_take(&f->t);
    assert_int_equal(first->len, 1448);
    for (int i = 1; i < 10; i++)
        assert_int_equal(tf_take(&f->t)->len, 1448);
}

static void test_lowers_and_resends(void **state)
{
    (void)state;
    struct tf_conn f;
    struct tf_seg first;
    flight(&f, NULL, &first);
    tf_inject_icmp_mtu(&f.t, ROUTER, UNREACH, FRAG, 1400, &first, 20, NULL, 21 * TF_MS);
    assert_int_equal(tf_counters(&f.t).PmtuLowered, 1);
    assert_int_equal(tf_info(f.c).mss, 1400 - 40 - 12);
    /* The window goes again from snd.una, in segments of the new size. */
    struct tf_seg *s = tf_take(&f.t);
    assert_int_equal(s->h.seq, first.h.seq);
    assert_int_equal(s->len, 1348);
    assert_int_equal(s->at, 21 * TF_MS);
    assert_true(tf_payload_is(s, 0));
    while (tf_pending(&f.t))
        assert_true(tf_take(&f.t)->len <= 1348);
    /* The peer acknowledges what arrived: every new segment is of the new size. */
    f.p.ack = first.h.seq + 1348;
    tf_peer_send(&f.p, BRISK_TCP_ACK, NULL, 0, 30 * TF_MS);
    tf_send_pattern(f.c, 10 * 1448, 4 * 1448, 31 * TF_MS);
    while (tf_pending(&f.t))
        assert_true(tf_take(&f.t)->len <= 1348);
    tf_conn_close(&f);
}

/* A quote whose sequence number is not in flight is not ours to believe (RFC 5927 §4.1). */
static void edit_seq(uint8_t *quote, size_t len)
{
    assert_true(len >= 28);
    brisk_put32(quote + 20 + 4, brisk_get32(quote + 20 + 4) + 1000000);
}

static void test_out_of_window_ignored(void **state)
{
    (void)state;
    struct tf_conn f;
    struct tf_seg first;
    flight(&f, NULL, &first);
    tf_inject_icmp_mtu(&f.t, ROUTER, UNREACH, FRAG, 1400, &first, 20, edit_seq, 21 * TF_MS);
    assert_int_equal(tf_counters(&f.t).PmtuLowered, 0);
    assert_int_equal(tf_counters(&f.t).OutOfWindowIcmps, 1);
    assert_int_equal(tf_info(f.c).mss, 1448);
    assert_false(tf_pending(&f.t));
    tf_conn_close(&f);
}

/* Below route_min_pmtu (552), or 0 (a router older than RFC 1191): the floor, and a soft EMSGSIZE kept; a
 * later report of more never raises it. */
static void test_floor_and_never_raised(void **state)
{
    (void)state;
    static const uint16_t low[] = {300, 0};
    for (int i = 0; i < 2; i++) {
        struct tf_conn f;
        struct tf_seg first;
        flight(&f, NULL, &first);
        tf_inject_icmp_mtu(&f.t, ROUTER, UNREACH, FRAG, low[i], &first, 20, NULL, 21 * TF_MS);
        assert_int_equal(tf_info(f.c).mss, 552 - 40 - 12);
        assert_int_equal(f.c->soft.err, BRISK_ERR_MSGSIZE);
        while (tf_pending(&f.t))
            assert_true(tf_take(&f.t)->len <= 500);
        tf_inject_icmp_mtu(&f.t, ROUTER, UNREACH, FRAG, 1400, &first, 20, NULL, 22 * TF_MS);
        assert_int_equal(tf_info(f.c).mss, 500);
        assert_int_equal(tf_counters(&f.t).PmtuLowered, 1);
        tf_conn_close(&f);
    }
}

/* A new connection to the same destination: its SYN still announces the device's MSS, but it sends
 * segments of the path MTU until route_mtu_expires has passed. */
static void test_cache_and_expiry(void **state)
{
    (void)state;
    static const char *const sets[] = {"route_mtu_expires=1s", NULL};
    struct tf_conn f;
    struct tf_seg first;
    flight(&f, sets, &first);
    tf_inject_icmp_mtu(&f.t, ROUTER, UNREACH, FRAG, 1300, &first, 20, NULL, 21 * TF_MS);
    assert_int_equal(tf_info(f.c).mss, 1248);
    while (tf_pending(&f.t))
        tf_take(&f.t);
    uint64_t at[] = {100 * TF_MS, 2 * TF_SEC};
    uint32_t want[] = {1248, 1448};
    for (int i = 0; i < 2; i++) {
        struct tf_peer p;
        tf_peer_init(&p, &f.t, (uint16_t)(9000 + i), 0, 5000);
        brisk_sock *a = tf_open_active(&p, NULL, at[i], 10 * TF_MS, NULL);
        assert_int_equal(tf_info(a).mss, want[i]);
        brisk_abort(a, at[i] + 20 * TF_MS);
        while (tf_pending(&f.t))
            tf_take(&f.t);
    }
    tf_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lowers_and_resends),
        cmocka_unit_test(test_out_of_window_ignored),
        cmocka_unit_test(test_floor_and_never_raised),
        cmocka_unit_test(test_cache_and_expiry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
