/*
 * test_tso.c — TSO autosizing end to end: on a NIC that segments (CAP_GSO | CAP_CSUM) the sender hands down
 * super-segments sized at transmit time and the NIC cuts them into MTU-sized frames; the transfer stays
 * byte-exact at line rate with an order of magnitude fewer packets through the stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <inttypes.h>
#include <stdio.h>
#include <cmocka.h>

#include "support/simnet.h"

static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

struct out {
    int hash_ok;
    double gbps;
    uint64_t stack_packets, wire_frames, rx_frames, rx_bytes;
};

static struct out run(uint32_t caps, const char *const *sets)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&s, *sets), BRISK_OK);
    struct simnet n;
    simnet_init(&n, 1, &s, caps, 10000000000ull, 50000, NULL);
    struct brisk_sim_bulk_config c = {.bytes = 100000000, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = 3};
    brisk_sim_bulk *b = brisk_sim_bulk_start(n.w, n.a, n.b, SIMNET_B_IP, &c);
    assert_true(brisk_sim_run_while(n.w, done, b, 60ull * BRISK_NSEC_PER_SEC));
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(b, &r);
    struct brisk_netdev_stats tx, rx;
    brisk_netdev_get_stats(brisk_sim_port_netdev(n.pa), &tx);
    brisk_netdev_get_stats(brisk_sim_port_netdev(n.pb), &rx);
    struct brisk_sim_nic_stats ns;
    brisk_sim_nic_stats(n.pa, &ns);
    struct out o = {
        .hash_ok = r.hash_ok,
        .gbps = 1e8 * 8.0 / (double)(r.last_byte_at - r.connected_at),
        .stack_packets = tx.tx_packets,
        .wire_frames = ns.tx_frames,
        .rx_frames = rx.rx_packets,
        .rx_bytes = rx.rx_bytes,
    };
    brisk_sim_bulk_free(b);
    simnet_free(&n);
    return o;
}

static void test_tso_bursts_cut_by_the_nic(void **state)
{
    (void)state;
    struct out tso = run(BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM, NULL);
    struct out plain = run(0, NULL);
    struct out off =
        run(BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM, (const char *const[]){"tcp_tso=0", NULL});
    printf("# TSO: %.3f Gbit/s, %" PRIu64 " packets -> %" PRIu64 " frames; no GSO: %.3f Gbit/s, %" PRIu64
           " packets; tcp_tso=0: %" PRIu64 " packets\n",
           tso.gbps, tso.stack_packets, tso.wire_frames, plain.gbps, plain.stack_packets, off.stack_packets);
    assert_true(tso.hash_ok && plain.hash_ok && off.hash_ok);
    assert_true(tso.gbps >= 9.0);
    assert_true(tso.stack_packets * 5 < tso.wire_frames);     /* bursts of several segments */
    assert_int_equal(plain.stack_packets, plain.wire_frames); /* no GSO: one frame per packet */
    assert_int_equal(off.stack_packets, off.wire_frames);     /* TSO off: same, even on a GSO NIC */
    /* Every frame the receiver got fits the MTU. */
    assert_true(tso.rx_bytes <= tso.rx_frames * 1514);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tso_bursts_cut_by_the_nic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
