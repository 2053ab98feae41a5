/*
 * test_blind.c — blind-attacker injection into a running transfer (RFC 5961): in-window RSTs not at
 * RCV.NXT, SYNs, and data whose acknowledgment number is not acceptable, injected at random offsets of the
 * receive window while 40 MB flow a -> b.
 *
 * Host b has a second NIC on which an attacker (a raw port) sends segments that claim to come from a's
 * address and port, to b's port 5001, without seeing the connection's traffic. The test itself is
 * omniscient — it reads b's connection state to aim inside the window, which is the attacker's best case —
 * but never gives the attacker an exact RCV.NXT for a RST or an acceptable ACK for data: those are the
 * guesses RFC 5961 makes 2^32 / window times harder, not impossible.
 *
 * Injections start at 2 ms and stop 8 MB before the end; each lands at least 256 KB inside the window (the
 * left edge moves on while the injection travels). Asserted: the transfer completes, byte-exact, never reset;
 * every in-window RST is answered with a challenge ACK (TCPRSTChallenge), every SYN too (TCPSYNChallenge),
 * every injected data segment is dropped on its ACK (TCPACKOutOfWindow); challenge ACKs are sent and
 * rate-limited per tcp_challenge_ack_limit.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "brisk/sim.h"
#include "core/rand.h"
#include "stack/stack.h"
#include "support/testutil.h"
#include "tcp/tcp.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

#define GBIT 1000000000ull
#define US   BRISK_NSEC_PER_USEC
#define MS   BRISK_NSEC_PER_MSEC
#define SEC  BRISK_NSEC_PER_SEC

#define A_IP  0x0a000001u
#define B_IP  0x0a000002u
#define B2_IP 0x0a000102u

#define BULK_BYTES  (40ull * 1000 * 1000)
#define EVERY       (50 * US)
#define STOP_BEFORE (8ull << 20)
#define MIN_OFF     (256u << 10) /* the window's left edge moves at most ~10 KB before an injection lands */

struct blind {
    brisk_sim_world *w;
    brisk_sim_port *raw;
    brisk_stack *b;
    uint8_t b_mac[6];
    struct brisk_rand rng;
    brisk_sim_bulk *bulk;
    uint64_t rst, syn, data; /* injected */
    uint64_t skipped;        /* attempts while the connection was not there (before / after) */
};

static const uint8_t att_mac[6] = {0x02, 0xbb, 0, 0, 0, 1};

/* b's end of the bulk connection (port 5001, from a), while it still receives (b, with nothing to send,
 * closes its own direction at once: FIN-WAIT-2 is the state it receives in). */
static brisk_sock *victim(brisk_stack *st)
{
    struct brisk_tcp *t = st->tcp;
    for (uint32_t i = 0; i < t->nconns_buckets; i++)
        for (brisk_sock *c = t->conns[i]; c; c = c->hnext)
            if (c->id.lport == 5001 && c->id.raddr.u.v4 == A_IP && c->state >= BRISK_TCP_ESTABLISHED &&
                !c->rcv.fin)
                return c;
    return NULL;
}

static void inject(struct blind *f, const struct brisk_tcp_repr *h, size_t payload)
{
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + BRISK_TCP_HLEN_MAX + 512];
    uint8_t *seg = frame + BRISK_ETH_HLEN + BRISK_IPV4_HLEN;
    size_t hl = brisk_tcp_emit(seg, h);
    for (size_t i = 0; i < payload; i++)
        seg[hl + i] = 0xA5; /* what must never reach the application */
    brisk_tcp_csum_fill(seg, hl + payload, A_IP, B_IP);
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV4};
    memcpy(e.dst, f->b_mac, 6);
    memcpy(e.src, att_mac, 6);
    brisk_eth_emit(frame, &e);
    struct brisk_ipv4_repr ip = {.total_len = (uint16_t)(BRISK_IPV4_HLEN + hl + payload),
                                 .ttl = 64,
                                 .proto = BRISK_IP_PROTO_TCP,
                                 .src = A_IP,
                                 .dst = B_IP};
    brisk_ipv4_emit(frame + BRISK_ETH_HLEN, &ip);
    assert_int_equal(brisk_sim_raw_send(f->raw, frame, BRISK_ETH_HLEN + BRISK_IPV4_HLEN + hl + payload),
                     BRISK_OK);
}

static void attack(void *ctx, uint64_t now)
{
    struct blind *f = ctx;
    /* Stop well before the end, so every injection lands while the connection still receives. */
    if (brisk_sim_bulk_received(f->bulk) > BULK_BYTES - STOP_BEFORE)
        return;
    brisk_sim_at(f->w, now + EVERY, attack, f);
    brisk_sock *c = victim(f->b);
    uint32_t wnd = c ? c->rcv.adv - c->rcv.nxt : 0;
    if (!c || brisk_seq_leq(c->rcv.adv, c->rcv.nxt) || wnd < 2 * MIN_OFF) {
        f->skipped++;
        return;
    }
    uint64_t r = brisk_rand_u64(&f->rng);
    /* In the window, never RCV.NXT itself, and far enough in that the in-flight data cannot overtake it. */
    uint32_t off = MIN_OFF + (uint32_t)((r >> 8) % (wnd - MIN_OFF));
    struct brisk_tcp_repr h = {
        .sport = c->id.rport, .dport = c->id.lport, .seq = c->rcv.nxt + off, .window = 512};
    switch (r % 3) {
    case 0:
        h.flags = BRISK_TCP_RST;
        f->rst++;
        inject(f, &h, 0);
        break;
    case 1:
        h.flags = BRISK_TCP_SYN;
        f->syn++;
        inject(f, &h, 0);
        break;
    default:
        /* Data with an ACK of bytes b never sent: RFC 5961 §5.2 drops it whole. */
        h.flags = BRISK_TCP_ACK | BRISK_TCP_PSH;
        h.ack = c->snd.max + 1 + (uint32_t)(r >> 40);
        f->data++;
        inject(f, &h, 100 + (size_t)(r >> 56));
        break;
    }
}

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

static void test_blind_injection_during_bulk(void **state)
{
    (void)state;
    static struct blind f;
    memset(&f, 0, sizeof(f));
    uint64_t seed = brisk_test_seed(7);
    brisk_rand_seed(&f.rng, seed);
    f.w = brisk_sim_world_new(seed);
    brisk_sim_host *ha = brisk_sim_host_add(f.w, "a", NULL);
    brisk_sim_host *hb = brisk_sim_host_add(f.w, "b", NULL);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(ha, A_IP, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(hb, B_IP, 24, 0);
    brisk_sim_port *pb2 = brisk_sim_nic_add_ip(hb, B2_IP, 24, 0);
    f.raw = brisk_sim_raw_port_add(f.w, "attacker", NULL, NULL);
    assert_non_null(f.raw);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1 * GBIT, 50 * US);
    assert_non_null(brisk_sim_link_connect(f.w, pa, pb, &lc));
    assert_non_null(brisk_sim_link_connect(f.w, f.raw, pb2, &lc));
    f.b = brisk_sim_host_stack(hb);
    memcpy(f.b_mac, brisk_netdev_config_of(brisk_sim_port_netdev(pb2))->mac, 6);

    struct brisk_sim_bulk_config bc = {
        .bytes = BULK_BYTES, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = seed};
    f.bulk = brisk_sim_bulk_start(f.w, ha, hb, B_IP, &bc);
    assert_non_null(f.bulk);
    assert_int_equal(brisk_sim_at(f.w, 2 * MS, attack, &f), BRISK_OK);
    assert_true(brisk_sim_run_while(f.w, bulk_done, f.bulk, 120 * SEC));
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(f.bulk, &r);
    struct brisk_counters c;
    brisk_stack_get_counters(f.b, &c);
    printf("# blind injection, seed %" PRIu64 ": %" PRIu64 " in-window RSTs, %" PRIu64 " SYNs, %" PRIu64
           " data segments with unacceptable ACKs over %.1f ms\n",
           seed, f.rst, f.syn, f.data, (double)(r.last_byte_at - r.connected_at) / 1e6);
    printf("#   b: TCPRSTChallenge %" PRIu64 "  TCPSYNChallenge %" PRIu64 "  TCPACKOutOfWindow %" PRIu64
           "  TCPChallengeACK %" PRIu64 "  TCPChallengeACKLimited %" PRIu64 "  TcpEstabResets %" PRIu64 "\n",
           c.TCPRSTChallenge, c.TCPSYNChallenge, c.TCPACKOutOfWindow, c.TCPChallengeACK,
           c.TCPChallengeACKLimited, c.TcpEstabResets);
    printf("#   transfer %s, client error %d, server error %d\n", r.hash_ok ? "byte-exact" : "BROKEN",
           r.client.error, r.server.error);

    assert_true(f.rst > 100 && f.syn > 100 && f.data > 100);
    assert_true(r.complete);
    assert_true(r.hash_ok);
    assert_int_equal(r.client.error, BRISK_OK);
    assert_int_equal(r.server.error, BRISK_OK);
    assert_int_equal(c.TcpEstabResets, 0);
    assert_int_equal(c.TCPRSTChallenge, f.rst);
    assert_int_equal(c.TCPSYNChallenge, f.syn);
    assert_int_equal(c.TCPACKOutOfWindow, f.data);
    /* Every one of them asked for a challenge ACK; the per-second limit let at most its share through. */
    assert_int_equal(c.TCPChallengeACK + c.TCPChallengeACKLimited, f.rst + f.syn + f.data);
    assert_true(c.TCPChallengeACK > 0);
    assert_true(c.TCPChallengeACK <= brisk_stack_settings(f.b)->tcp_challenge_ack_limit);

    brisk_sim_bulk_free(f.bulk);
    brisk_sim_run_until(f.w, brisk_sim_now(f.w) + 120 * SEC);
    assert_int_equal(brisk_stack_sockets(f.b), 0);
    assert_int_equal(brisk_stack_tcp_chunks_in_use(f.b), 0);
    brisk_sim_world_free(f.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blind_injection_during_bulk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
