/* tests for src/net/netdev.c: registration checks, TX accounting, completion latency, busy devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/fakedev.h"

static int never_xmit(void *d, brisk_pkt *p, uint64_t now)
{
    (void)d;
    (void)p;
    (void)now;
    return BRISK_ERR_BUSY;
}

static void test_add_validation(void **state)
{
    (void)state;
    brisk_stack *st = brisk_stack_new(NULL);
    static const struct brisk_netdev_ops ops = {.xmit = never_xmit};
    struct brisk_netdev_config c = {
        .name = "x", .mac = {2, 0, 0, 0, 0, 1}, .mtu = 1500, .ip = IP4(10, 0, 0, 1), .prefix_len = 24};
    int err;
    struct brisk_netdev_config bad = c;
    bad.mtu = 67;
    assert_null(brisk_netdev_add(st, &bad, &ops, NULL, &err));
    assert_int_equal(err, BRISK_ERR_INVAL);
    bad = c;
    bad.prefix_len = 33;
    assert_null(brisk_netdev_add(st, &bad, &ops, NULL, &err));
    assert_int_equal(err, BRISK_ERR_INVAL);
    bad = c;
    bad.mac[0] = 1;
    assert_null(brisk_netdev_add(st, &bad, &ops, NULL, &err));
    assert_int_equal(err, BRISK_ERR_INVAL);
    assert_non_null(brisk_netdev_add(st, &c, &ops, NULL, &err));
    assert_int_equal(err, BRISK_OK);
    assert_null(brisk_netdev_add(st, &c, &ops, NULL, &err)); /* same address twice */
    assert_int_equal(err, BRISK_ERR_EXIST);
    for (int i = 1; i < BRISK_MAX_NETDEVS; i++) {
        c.ip = IP4(10, 0, i, 1);
        assert_non_null(brisk_netdev_add(st, &c, &ops, NULL, &err));
    }
    c.ip = IP4(10, 1, 0, 1);
    assert_null(brisk_netdev_add(st, &c, &ops, NULL, &err));
    assert_int_equal(err, BRISK_ERR_TOOMANY);
    brisk_stack_free(st);
}

static void test_completion_latency_and_inflight(void **state)
{
    (void)state;
    brisk_stack *st = brisk_stack_new(NULL);
    struct fakedev f;
    fakedev_init(&f, st, 1, IP4(10, 0, 0, 1), 24);
    /* ARP requests are the frames here: each send to an unresolved address emits one. */
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 2), 1, 1, 8, 1000);
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 3), 1, 1, 8, 1000);
    struct brisk_netdev_stats s;
    brisk_netdev_get_stats(f.dev, &s);
    assert_int_equal(s.tx_packets, 2);
    assert_int_equal(s.tx_inflight, 2);
    assert_int_equal(s.tx_inflight_bytes, 2 * 42);
    assert_int_equal(brisk_stack_pkts_in_use(st), 4); /* 2 in the device, 2 queued behind ARP */
    brisk_netdev_tx_done(f.dev, f.held[0], 1000 + 800);
    brisk_netdev_tx_done(f.dev, f.held[1], 1000 + 1600);
    f.nheld = 0;
    brisk_netdev_get_stats(f.dev, &s);
    assert_int_equal(s.tx_inflight, 0);
    assert_int_equal(s.tx_inflight_bytes, 0);
    assert_int_equal(s.tx_completed, 2);
    assert_int_equal(s.tx_done_latency_ns, 800 - 800 / 8 + 1600 / 8); /* first sample, then EWMA 1/8 */
    assert_int_equal(s.tx_done_latency_max_ns, 1600);
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.TxCompletions, 2);
    fakedev_destroy(&f, 2000);
    brisk_stack_free(st);
}

/* With the link speed known, the completion overhead leaves out the time a frame waited for the wire behind
 * the frames queued before it: two 60-byte frames (ARP, padded) at 1 Gbit/s take 480 ns each on the wire. */
static void test_completion_overhead_excludes_ring_queueing(void **state)
{
    (void)state;
    brisk_stack *st = brisk_stack_new(NULL);
    struct fakedev f;
    fakedev_init(&f, st, 1, IP4(10, 0, 0, 1), 24);
    brisk_netdev_set_speed(f.dev, 1000000000ull);
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 2), 1, 1, 8, 1000);
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 3), 1, 1, 8, 1000);
    /* The first completes 100 ns after its wire time, the second 100 ns after its own (480 ns later). */
    brisk_netdev_tx_done(f.dev, f.held[0], 1000 + 480 + 100);
    brisk_netdev_tx_done(f.dev, f.held[1], 1000 + 960 + 100);
    f.nheld = 0;
    struct brisk_netdev_stats s;
    brisk_netdev_get_stats(f.dev, &s);
    assert_int_equal(s.tx_done_overhead_ns, 100);                     /* the same 100 ns both times */
    assert_int_equal(s.tx_done_latency_ns, 580 - 580 / 8 + 1060 / 8); /* the raw latency includes the wait */
    fakedev_destroy(&f, 2000);
    brisk_stack_free(st);
}

static void test_busy_device_drops_and_counts(void **state)
{
    (void)state;
    brisk_stack *st = brisk_stack_new(NULL);
    struct fakedev f;
    fakedev_init(&f, st, 1, IP4(10, 0, 0, 1), 24);
    f.busy = 1;
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 2), 1, 1, 8, 0);
    struct brisk_netdev_stats s;
    brisk_netdev_get_stats(f.dev, &s);
    assert_int_equal(s.tx_busy, 1);
    assert_int_equal(s.tx_packets, 0);
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    assert_int_equal(c.EthOutBusy, 1);
    assert_int_equal(brisk_stack_pkts_in_use(st), 1); /* only the queued echo */
    fakedev_destroy(&f, 0);
    brisk_stack_free(st);
}

/* A refused xmit stops the queue until the device's next completion; a driver can stop and wake it itself. */
static void test_queue_stop_and_wake(void **state)
{
    (void)state;
    brisk_stack *st = brisk_stack_new(NULL);
    struct fakedev f;
    fakedev_init(&f, st, 1, IP4(10, 0, 0, 1), 24);
    assert_false(brisk_netdev_stopped(f.dev));
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 2), 1, 1, 8, 1000); /* ARP request: accepted, held */
    assert_int_equal(f.nheld, 1);
    f.busy = 1;
    brisk_icmp_echo_send(st, IP4(10, 0, 0, 3), 1, 1, 8, 1000); /* refused */
    assert_true(brisk_netdev_stopped(f.dev));
    f.busy = 0;
    brisk_netdev_tx_done(f.dev, f.held[0], 2000); /* room again */
    f.nheld = 0;
    assert_false(brisk_netdev_stopped(f.dev));
    assert_int_equal(brisk_stack_next_deadline(st), 2000); /* the refused sender resumes at the next poll */
    brisk_stack_poll(st, 2000);

    brisk_netdev_stop_queue(f.dev);
    brisk_netdev_stop_queue(f.dev); /* once is counted */
    assert_true(brisk_netdev_stopped(f.dev));
    struct brisk_netdev_stats s;
    brisk_netdev_get_stats(f.dev, &s);
    assert_int_equal(s.queue_stops, 1);
    assert_int_equal(brisk_stack_next_deadline(st) == 2000, 0); /* nothing to resume yet */
    brisk_netdev_wake_queue(f.dev);
    assert_false(brisk_netdev_stopped(f.dev));
    assert_int_equal(brisk_stack_next_deadline(st), 2000); /* held senders resume at the next poll */
    brisk_stack_poll(st, 2000);
    fakedev_destroy(&f, 3000);
    brisk_stack_free(st);
}

static void test_input_rejects_foreign_device(void **state)
{
    (void)state;
    brisk_stack *a = brisk_stack_new(NULL);
    brisk_stack *b = brisk_stack_new(NULL);
    struct fakedev fa;
    fakedev_init(&fa, a, 1, IP4(10, 0, 0, 1), 24);
    uint8_t frame[60] = {0};
    assert_int_equal(brisk_stack_input(b, fa.dev, frame, sizeof(frame), 0), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_input(a, NULL, frame, sizeof(frame), 0), BRISK_ERR_INVAL);
    /* Not our MAC: counted, not processed. */
    frame[0] = 0x02;
    frame[5] = 0x09;
    assert_int_equal(brisk_stack_input(a, fa.dev, frame, sizeof(frame), 0), BRISK_OK);
    struct brisk_counters c;
    brisk_stack_get_counters(a, &c);
    assert_int_equal(c.EthInNotForUs, 1);
    fakedev_destroy(&fa, 0);
    brisk_stack_free(a);
    brisk_stack_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_validation),
        cmocka_unit_test(test_completion_latency_and_inflight),
        cmocka_unit_test(test_completion_overhead_excludes_ring_queueing),
        cmocka_unit_test(test_busy_device_drops_and_counts),
        cmocka_unit_test(test_queue_stop_and_wake),
        cmocka_unit_test(test_input_rejects_foreign_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
