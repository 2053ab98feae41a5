/*
 * test_ipfrag.c — IPv4 reassembly (src/net/ipfrag.c and its hook in ip_input.c).
 *
 * A 1,000-byte ICMP echo request cut into fragments must come back as one echo reply carrying the same
 * bytes, whatever the order the fragments arrive in and however often one repeats; overlapping fragments
 * drop the datagram (IpReasmOverlaps); a datagram left incomplete times out after ipfrag_time with an ICMP
 * Time Exceeded (code 1) quoting its first fragment, and silently without one; the memory bound holds under
 * a flood, evicting the oldest datagrams under brisk's profile and refusing fragments under linux-6.x; the
 * bounds (a datagram past 65,535 bytes, an empty fragment, a fragment with MF whose length is not a multiple
 * of 8) are Linux's; and a TCP segment cut into fragments reaches a real connection, which ACKs it. After
 * every step brisk_ipfrag_check holds; the stack is freed with datagrams still held (ASan: no leak).
 *
 * IPv6 (the test6_* cases, through ip6_input.c): the same echo as ICMPv6 comes back whole in order, in
 * reverse, shuffled, interleaved with another datagram and behind a hop-by-hop header; the 32-bit
 * identification keys; an overlap drops the datagram and its later fragments until ip6frag_time (RFC 5722);
 * the timeout sends an ICMPv6 Time Exceeded code 1 quoting the first fragment, not without it nor about a
 * multicast packet; ip6frag_high_thresh bounds IPv6's table apart from IPv4's; an atomic fragment is answered
 * at once; RFC 8200 §4.5's and RFC 7112's parameter problems, and the 65,535-byte payload limit once whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/ipfrag.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "support/tcpforge.h"
#include "wire/arp.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

#define SEC  BRISK_NSEC_PER_SEC
#define MS   BRISK_NSEC_PER_MSEC
#define US   IP4(10, 0, 0, 1)
#define PEER IP4(10, 0, 0, 2)

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct env {
    brisk_stack *st;
    struct fakedev f;
    uint64_t now;
    uint8_t echo[8 + 1000]; /* an ICMP echo request with 1,000 bytes of data */
};

static struct env *env_new(const char *const *sets)
{
    struct env *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_set(&s, "arp_reachable=86400s"), BRISK_OK); /* no ARP probes */
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&s, *sets), BRISK_OK);
    e->st = brisk_stack_new(&s);
    assert_non_null(e->st);
    fakedev_init(&e->f, e->st, 1, US, 24);
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, bcast_mac, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = PEER, .tpa = US};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(e->st, e->f.dev, frame, sizeof(frame), 0);
    fakedev_clear(&e->f);
    e->now = 1 * MS;
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    struct brisk_icmp_repr r = {
        .type = BRISK_ICMP_ECHO, .id = 0x4242, .seq = 1, .payload = data, .payload_len = sizeof data};
    assert_int_equal(brisk_icmp_emit(e->echo, &r), sizeof e->echo);
    return e;
}

static void env_free(struct env *e)
{
    fakedev_destroy(&e->f, e->st->net.now);
    assert_int_equal(brisk_stack_pkts_in_use(e->st), 0);
    brisk_stack_free(e->st); /* frees whatever reassembly still holds: ASan would see a leak */
    free(e);
}

static struct brisk_counters counters(struct env *e)
{
    struct brisk_counters c;
    brisk_stack_get_counters(e->st, &c);
    return c;
}

static void check(struct env *e)
{
    int rc = brisk_ipfrag_check(e->st->net.ipfrag);
    if (rc)
        fail_msg("brisk_ipfrag_check: %d", rc);
}

/* Sends `len` bytes of `data` as the fragment at `off` of the datagram (ICMP, id) from src to dst. */
static void frag_data(struct env *e, uint32_t src, uint32_t dst, const uint8_t *mac, uint16_t id, uint32_t off,
                      const uint8_t *data, uint32_t len, int mf)
{
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + 1600];
    assert_true(len <= 1600);
    size_t n = fakedev_ipv4_frame(frame, mac ? mac : e->f.cfg.mac, peer_mac, src, dst, BRISK_IP_PROTO_ICMP,
                                  data, len);
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(frame + 14, n - 14, &ip), 20);
    ip.id = id;
    ip.df = 0;
    ip.mf = (uint8_t)mf;
    ip.frag_off = (uint16_t)off;
    brisk_ipv4_emit(frame + 14, &ip);
    brisk_stack_input(e->st, e->f.dev, frame, n, e->now);
    check(e);
}

/* The echo request's bytes [off, off + len) as the fragment at off. */
static void frag(struct env *e, uint16_t id, uint32_t off, uint32_t len, int mf)
{
    frag_data(e, PEER, US, NULL, id, off, e->echo + off, len, mf);
}

/* The echo request in fragments of 256 bytes (the last 240): offsets 0, 256, 512, 768. */
#define NFRAG 4
static const uint32_t foff[NFRAG] = {0, 256, 512, 768};
static const uint32_t flen[NFRAG] = {256, 256, 256, 240};

static void frag_i(struct env *e, uint16_t id, int i)
{
    frag(e, id, foff[i], flen[i], i < NFRAG - 1);
}

/* The stack's frames since the last call, and a check that the n-th is the echo reply to e->echo. */
static void expect_echo_reply(struct env *e)
{
    if (e->f.ntx != 1)
        fail_msg("%zu frames sent, want one echo reply", e->f.ntx);
    const uint8_t *f = e->f.tx[0].data;
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(f + 14, e->f.tx[0].len - 14, &ip), 20);
    assert_int_equal(ip.proto, BRISK_IP_PROTO_ICMP);
    assert_int_equal(ip.dst, PEER);
    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(f + 34, ip.total_len - 20u, &r), 8);
    assert_int_equal(r.type, BRISK_ICMP_ECHO_REPLY);
    assert_int_equal(r.id, 0x4242);
    assert_int_equal(r.payload_len, 1000);
    assert_memory_equal(r.payload, e->echo + 8, 1000);
    fakedev_destroy(&e->f, e->now);
}

static void test_in_order(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    for (int i = 0; i < NFRAG; i++) {
        assert_int_equal(e->f.ntx, 0);
        frag_i(e, 1, i);
    }
    expect_echo_reply(e);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpReasmReqds, NFRAG);
    assert_int_equal(c.IpReasmOKs, 1);
    assert_int_equal(c.IpReasmFails, 0);
    assert_int_equal(c.IcmpInEchos, 1);
    assert_int_equal(c.IpInDelivers, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    assert_int_equal(brisk_ipfrag_mem(e->st->net.ipfrag), 0);
    env_free(e);
}

static void test_reverse_and_shuffled(void **state)
{
    (void)state;
    static const int orders[][NFRAG] = {{3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}, {0, 2, 1, 3}};
    for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++) {
        struct env *e = env_new(NULL);
        for (int i = 0; i < NFRAG; i++)
            frag_i(e, 7, orders[k][i]);
        expect_echo_reply(e);
        assert_int_equal(counters(e).IpReasmOKs, 1);
        assert_int_equal(brisk_ipfrag_mem(e->st->net.ipfrag), 0);
        env_free(e);
    }
}

/* A fragment sent twice is a duplicate: dropped alone, nothing counted against the datagram. So is a part
 * of what one run already holds. */
static void test_duplicate(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    frag_i(e, 9, 0);
    frag_i(e, 9, 1);
    frag_i(e, 9, 1);
    frag_i(e, 9, 0);
    frag(e, 9, 128, 256, 1); /* inside the run [0, 512) the first two built */
    frag_i(e, 9, 2);
    frag_i(e, 9, 3);
    expect_echo_reply(e);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpReasmReqds, 7);
    assert_int_equal(c.IpReasmOKs, 1);
    assert_int_equal(c.IpReasmFails, 0);
    assert_int_equal(c.IpReasmOverlaps, 0);
    /* A repeat after the datagram completed starts a new one (Linux too: the queue is gone). */
    frag_i(e, 9, 3);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    env_free(e);
}

/* A partial overlap drops the whole datagram (RFC 5722's rule, Linux's for IPv4); so does a fragment that
 * spans two runs which touch, as in Linux (the second run began below the highest fragment). */
static void test_overlap(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    frag_i(e, 3, 0);
    frag(e, 3, 248, 256, 1); /* [248, 504) over [0, 256)'s end */
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpReasmOverlaps, 1);
    assert_int_equal(c.IpReasmFails, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    /* The rest of the datagram now makes a new, incomplete one: no reply. */
    for (int i = 1; i < NFRAG; i++)
        frag_i(e, 3, i);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).IpReasmOKs, 0);

    /* Below the highest fragment: [0,256) then [512,768) then [256,512) — three runs; [128,384) covers held
     * data but spans two runs: an overlap. */
    frag_i(e, 4, 0);
    frag_i(e, 4, 2);
    frag_i(e, 4, 1);
    frag(e, 4, 128, 256, 1);
    assert_int_equal(counters(e).IpReasmOverlaps, 2);
    /* The tail case: past the highest fragment but starting inside it. */
    frag_i(e, 5, 2);
    frag(e, 5, 760, 240, 0);
    assert_int_equal(counters(e).IpReasmOverlaps, 3);
    assert_int_equal(counters(e).IpReasmFails, 3);
    env_free(e);
}

/* The first fragment and one more, never the rest: after ipfrag_time, IpReasmTimeout and an ICMP Time
 * Exceeded, code 1, quoting the first fragment's header and data (RFC 792, RFC 1122 §3.3.2). */
static void test_timeout_with_icmp(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    frag_i(e, 11, 0);
    e->now += 10 * SEC;
    frag_i(e, 11, 2); /* does not extend the timer */
    assert_int_equal(brisk_stack_next_deadline(e->st) <= 1 * MS + 30 * SEC, 1);
    brisk_stack_poll(e->st, 1 * MS + 30 * SEC - 1);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    brisk_stack_poll(e->st, 1 * MS + 30 * SEC);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    assert_int_equal(brisk_ipfrag_mem(e->st->net.ipfrag), 0);
    assert_int_equal(e->f.ntx, 1);
    const uint8_t *f = e->f.tx[0].data;
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(f + 14, e->f.tx[0].len - 14, &ip), 20);
    assert_int_equal(ip.proto, BRISK_IP_PROTO_ICMP);
    assert_int_equal(ip.dst, PEER);
    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(f + 34, ip.total_len - 20u, &r), 8);
    assert_int_equal(r.type, BRISK_ICMP_TIME_EXCEEDED);
    assert_int_equal(r.code, 1);
    struct brisk_ipv4_repr q;
    assert_true(r.payload_len >= 28);
    assert_int_equal(brisk_ipv4_parse_quoted(r.payload, r.payload_len, &q), 20);
    assert_int_equal(q.id, 11);
    assert_int_equal(q.mf, 1);
    assert_int_equal(q.frag_off, 0);
    assert_int_equal(q.src, PEER);
    assert_memory_equal(r.payload + 20, e->echo, 8); /* the first 64 bits of the datagram's data */
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpReasmTimeout, 1);
    assert_int_equal(c.IpReasmFails, 1);
    assert_int_equal(c.IcmpOutTimeExcds, 1);
    fakedev_destroy(&e->f, e->now);

    /* Without the first fragment: the timeout is silent. */
    e->now = 31 * SEC;
    frag_i(e, 12, 1);
    frag_i(e, 12, 3);
    brisk_stack_poll(e->st, 61 * SEC + 1);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).IpReasmTimeout, 2);
    assert_int_equal(counters(e).IcmpOutTimeExcds, 1);
    /* Nor about a datagram sent to the broadcast address. */
    e->now = 70 * SEC;
    frag_data(e, PEER, IP4(10, 0, 0, 255), bcast_mac, 13, 0, e->echo, 256, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    brisk_stack_poll(e->st, 101 * SEC);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).IpReasmTimeout, 3);
    /* ipfrag_time is a setting. */
    env_free(e);
    e = env_new((const char *const[]){"ipfrag_time=2s", NULL});
    frag_i(e, 14, 0);
    brisk_stack_poll(e->st, 1 * MS + 2 * SEC);
    assert_int_equal(counters(e).IpReasmTimeout, 1);
    assert_int_equal(e->f.ntx, 1);
    env_free(e);
}

/* A flood of first fragments, each of a datagram that never completes, against a 16 KB bound. */
static void flood(struct env *e, uint16_t from, uint16_t n)
{
    for (uint16_t id = from; id < from + n; id++) {
        frag_i(e, id, 0);
        /* linux-6.x's rule lets the bound be crossed by one datagram: its bookkeeping and first fragment. */
        assert_true(brisk_ipfrag_mem(e->st->net.ipfrag) <= 16384 + 512);
    }
}

static void test_memory_bound_evicts_oldest(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"ipfrag_high_thresh=16K", NULL});
    frag_i(e, 1000, 0); /* the victim to be: the oldest */
    flood(e, 1, 200);
    assert_true(brisk_ipfrag_mem(e->st->net.ipfrag) <= 16384);
    uint32_t held = brisk_ipfrag_queues(e->st->net.ipfrag);
    assert_true(held >= 20 && held < 60);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.IpReasmFails, 201 - held); /* each eviction is one failed datagram */
    /* The oldest are gone: the victim's rest no longer completes it... */
    for (int i = 1; i < NFRAG; i++)
        frag_i(e, 1000, i);
    assert_int_equal(e->f.ntx, 0);
    /* ...while a datagram sent whole during the flood goes through. */
    for (int i = 0; i < NFRAG; i++)
        frag_i(e, 2000, i);
    expect_echo_reply(e);
    assert_int_equal(counters(e).IpReasmOKs, 1);
    env_free(e);
}

/* linux-6.x: above the bound every fragment is refused (Linux 4.17+'s inet_frag_find), even one that would
 * complete a datagram, until timeouts free memory. */
static void test_memory_bound_linux_refuses(void **state)
{
    (void)state;
    const char *const *prof = tf_profile_sets("linux-6.x");
    const char *sets[64];
    size_t n = 0;
    for (; prof[n]; n++)
        sets[n] = prof[n];
    sets[n++] = "ipfrag_high_thresh=16K";
    sets[n] = NULL;
    struct env *e = env_new(sets);
    for (int i = 0; i < NFRAG - 1; i++)
        frag_i(e, 2000, i);
    flood(e, 1, 200);
    uint32_t held = brisk_ipfrag_queues(e->st->net.ipfrag);
    assert_true(held >= 10 && held < 60);
    assert_true(brisk_ipfrag_mem(e->st->net.ipfrag) > 16384); /* by at most the fragment that crossed it */
    assert_int_equal(counters(e).IpReasmFails, 201 - held);
    frag_i(e, 2000, NFRAG - 1);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).IpReasmOKs, 0);
    /* After the timeout, memory is back and reassembly works again. */
    brisk_stack_poll(e->st, 31 * SEC);
    e->now = 31 * SEC;
    fakedev_destroy(&e->f, e->now); /* the Time Exceeded messages */
    assert_int_equal(brisk_ipfrag_mem(e->st->net.ipfrag), 0);
    for (int i = 0; i < NFRAG; i++)
        frag_i(e, 3000, i);
    expect_echo_reply(e);
    env_free(e);
}

/* ipfrag_high_thresh=0: no reassembly at all (Linux's rule). */
static void test_reassembly_off(void **state)
{
    (void)state;
    struct env *e = env_new((const char *const[]){"ipfrag_high_thresh=0", NULL});
    for (int i = 0; i < NFRAG; i++)
        frag_i(e, 1, i);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).IpReasmFails, NFRAG);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    env_free(e);
}

/* Linux's bounds (ip_frag_queue): data past 65,535 bytes, an empty fragment, a second or contradicting last
 * fragment drop the datagram; MF with a length that is not a multiple of 8 is cut to one (and is empty,
 * dropping the datagram, below 8 bytes). */
static void test_bounds(void **state)
{
    (void)state;
    struct env *e = env_new(NULL);
    uint8_t big[1600];
    memset(big, 0x5a, sizeof big);
    /* A last fragment at offset 65,528 with 1,480 bytes: the "ping of death", dropped with its datagram. */
    frag_i(e, 22, 0);
    frag_data(e, PEER, US, NULL, 22, 65528, big, 1480, 0);
    assert_int_equal(counters(e).IpReasmFails, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    /* The largest datagram: 65,515 bytes after a 20-byte header. One byte more is dropped, MF or not. */
    frag_data(e, PEER, US, NULL, 23, 65488, big, 27, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    frag_data(e, PEER, US, NULL, 24, 65488, big, 28, 0);
    frag_data(e, PEER, US, NULL, 25, 65512, big, 8, 1);
    assert_int_equal(counters(e).IpReasmFails, 3);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    env_free(e); /* datagram 23 still held: freed with the stack */

    e = env_new(NULL);
    /* Empty fragments: with MF at offset 256 (after data), with MF clear at the end. */
    frag_i(e, 31, 0);
    frag(e, 31, 256, 0, 1);
    assert_int_equal(counters(e).IpReasmFails, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    /* MF with 7 bytes: nothing left after the cut, the datagram is dropped. */
    frag(e, 32, 0, 7, 1);
    assert_int_equal(counters(e).IpReasmFails, 2);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    /* MF with 261 bytes: cut to 256; the next fragment at 256 then fits and the datagram completes. */
    frag(e, 33, 0, 261, 1);
    frag(e, 33, 256, 256, 1);
    frag(e, 33, 512, 496, 0);
    expect_echo_reply(e);
    /* A second last fragment with another end, and data past the end: both drop the datagram. */
    frag(e, 34, 512, 496, 0);
    frag(e, 34, 256, 248, 0);
    assert_int_equal(counters(e).IpReasmFails, 3);
    frag(e, 35, 256, 248, 0);
    frag(e, 35, 504, 256, 1);
    assert_int_equal(counters(e).IpReasmFails, 4);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 0);
    env_free(e);
}

/* A TCP segment of 1,400 bytes cut into three fragments (reverse order) reaches an accepted connection:
 * the data is read back and ACKed, as if it had come whole. */
static void test_tcp_segment_in_fragments(void **state)
{
    (void)state;
    struct tf_conn f;
    tf_conn_open(&f, NULL, NULL, NULL, TF_MS);
    uint64_t now = 10 * TF_MS;
    struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK | BRISK_TCP_PSH, now);
    uint8_t seg[BRISK_TCP_HLEN_MAX + 1400];
    size_t hl = brisk_tcp_emit(seg, &h);
    uint8_t *data = seg + hl;
    tf_pattern(data, 1400, 0);
    size_t slen = hl + 1400;
    brisk_tcp_csum_fill(seg, slen, TF_PEER_IP, TF_LOCAL_IP);
    static const uint8_t peer[6] = {0x02, 0, 0, 0, 0, 0x02};
    const uint32_t cut[4] = {0, 512, 1024, (uint32_t)slen};
    for (int i = 2; i >= 0; i--) {
        uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + 1600];
        size_t n = fakedev_ipv4_frame(frame, f.t.f.cfg.mac, peer, TF_PEER_IP, TF_LOCAL_IP, BRISK_IP_PROTO_TCP,
                                      seg + cut[i], cut[i + 1] - cut[i]);
        struct brisk_ipv4_repr ip;
        assert_int_equal(brisk_ipv4_parse(frame + 14, n - 14, &ip), 20);
        ip.id = 0x1234;
        ip.df = 0;
        ip.mf = i < 2;
        ip.frag_off = (uint16_t)cut[i];
        brisk_ipv4_emit(frame + 14, &ip);
        /* The device vouches for the checksum of the frame it saw: that says nothing of the segment. */
        brisk_stack_input_flags(f.t.st, f.t.f.dev, frame, n, BRISK_RX_CSUM_VALID, now);
        assert_int_equal(brisk_ipfrag_check(f.t.st->net.ipfrag), 0);
        if (i > 0)
            assert_int_equal(tf_pending(&f.t), 0);
    }
    f.p.nxt += 1400;
    struct brisk_counters c = tf_counters(&f.t);
    assert_int_equal(c.IpReasmOKs, 1);
    assert_int_equal(c.TcpInCsumErrors, 0);
    uint8_t got[2000];
    assert_int_equal(brisk_recv(f.c, got, sizeof got, now), 1400);
    assert_memory_equal(got, data, 1400);
    tf_run(&f.t, now + 500 * TF_MS);
    struct tf_seg *a = tf_take(&f.t);
    assert_int_equal(a->h.flags & BRISK_TCP_ACK, BRISK_TCP_ACK);
    assert_int_equal(a->h.ack, 1001 + 1400);

    /* The same segment with one byte changed in its second fragment: reassembled, then refused by TCP's
     * checksum, which the device's verdict on the last fragment did not cover. */
    now += TF_MS;
    h = tf_peer_hdr(&f.p, BRISK_TCP_ACK | BRISK_TCP_PSH, now);
    hl = brisk_tcp_emit(seg, &h);
    tf_pattern(seg + hl, 1400, 1400);
    brisk_tcp_csum_fill(seg, slen, TF_PEER_IP, TF_LOCAL_IP);
    seg[600] ^= 0x40;
    for (int i = 0; i < 3; i++) {
        uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + 1600];
        size_t n = fakedev_ipv4_frame(frame, f.t.f.cfg.mac, peer, TF_PEER_IP, TF_LOCAL_IP, BRISK_IP_PROTO_TCP,
                                      seg + cut[i], cut[i + 1] - cut[i]);
        struct brisk_ipv4_repr ip;
        assert_int_equal(brisk_ipv4_parse(frame + 14, n - 14, &ip), 20);
        ip.id = 0x1235;
        ip.df = 0;
        ip.mf = i < 2;
        ip.frag_off = (uint16_t)cut[i];
        brisk_ipv4_emit(frame + 14, &ip);
        brisk_stack_input_flags(f.t.st, f.t.f.dev, frame, n, BRISK_RX_CSUM_VALID, now);
    }
    c = tf_counters(&f.t);
    assert_int_equal(c.IpReasmOKs, 2);
    assert_int_equal(c.TcpInCsumErrors, 1);
    tf_conn_close(&f);
}

/* ---- IPv6 (RFC 8200 §4.5) -------------------------------------------------------------------------------
 * The same queue rules under IPv6's key, bound and timeout; an echo request of 1,008 ICMPv6 bytes cut into
 * fragments of 256 (the last 240) must come back as one echo reply. */

static uint8_t us_ll[16], peer_ll[16];
static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

static void check6(struct env *e)
{
    int rc = brisk_ipfrag_check(e->st->net.ip6frag);
    if (rc)
        fail_msg("brisk_ipfrag_check (IPv6): %d", rc);
}

/* The IPv4 environment, plus the peer's MAC taught by a neighbour solicitation (answers go straight out)
 * and e->echo rewritten as an ICMPv6 echo request with the same 1,000 data bytes. */
static struct env *env6_new(const char *const *sets)
{
    struct env *e = env_new(sets);
    brisk_ipv6_link_local_from_mac(us_ll, e->f.cfg.mac);
    brisk_ipv6_link_local_from_mac(peer_ll, peer_mac);
    fakedev_ipv6_solicit_from(&e->f, peer_mac, e->now);
    assert_int_equal(e->f.ntx, 1);
    fakedev_destroy(&e->f, e->now);
    uint8_t data[1000];
    memcpy(data, e->echo + 8, sizeof data);
    struct brisk_icmp6_repr q = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 0x4242, .seq = 1, .payload = data,
                                 .payload_len = sizeof data};
    assert_int_equal(brisk_icmp6_emit(e->echo, &q, peer_ll, us_ll), sizeof e->echo);
    return e;
}

/* One IPv6 fragment from the peer to dst: [a hop-by-hop header if hbh][fragment header: nh, off, m, id]
 * [len bytes of data]. */
static void frag6_to(struct env *e, const uint8_t dst[16], uint32_t id, uint32_t off, const uint8_t *data,
                     uint32_t len, int m, uint8_t nh, int hbh)
{
    uint8_t pl[16 + 1600], frame[BRISK_ETH_HLEN + BRISK_IPV6_HLEN + sizeof pl], mac[6];
    assert_true(len <= 1600);
    size_t n = 0;
    if (hbh) { /* Next Header 44, length 0, PadN of 4 */
        const uint8_t h[8] = {BRISK_IP_PROTO_FRAGMENT, 0, 1, 4, 0, 0, 0, 0};
        memcpy(pl, h, 8);
        n = 8;
    }
    n += brisk_ipv6_frag_emit(pl + n, nh, (uint16_t)off, m, id);
    memcpy(pl + n, data, len);
    n += len;
    if (brisk_ipv6_is_multicast(dst))
        brisk_ipv6_multicast_mac(mac, dst);
    else
        memcpy(mac, e->f.cfg.mac, 6);
    n = fakedev_ipv6_frame(frame, mac, peer_mac, peer_ll, dst,
                           hbh ? BRISK_IP_PROTO_HOPOPTS : BRISK_IP_PROTO_FRAGMENT, 64, pl, n);
    brisk_stack_input(e->st, e->f.dev, frame, n, e->now);
    check6(e);
}

/* The echo request's bytes [off, off + len) as the fragment at off of datagram id (later fragments name UDP
 * in their fragment header: only the first one's counts, RFC 8200 §4.5). */
static void frag6(struct env *e, uint32_t id, uint32_t off, uint32_t len, int m)
{
    frag6_to(e, us_ll, id, off, e->echo + off, len, m, off ? BRISK_IP_PROTO_UDP : BRISK_IP_PROTO_ICMPV6, 0);
}

/* The same cut as IPv4's: the ICMPv6 echo request is 1,008 bytes too. */
static void frag6_i(struct env *e, uint32_t id, int i)
{
    frag6(e, id, foff[i], flen[i], i < NFRAG - 1);
}

/* Frame i sent by the stack, parsed as IPv6 + ICMPv6 to the peer. */
static void sent6(struct env *e, size_t i, struct brisk_ipv6_repr *ip, struct brisk_icmp6_repr *r)
{
    assert_true(i < e->f.ntx);
    const uint8_t *b = e->f.tx[i].data;
    size_t len = e->f.tx[i].len;
    assert_int_equal(brisk_ipv6_parse(b + 14, len - 14, ip), 40);
    assert_int_equal(ip->next_header, BRISK_IP_PROTO_ICMPV6);
    assert_memory_equal(ip->dst, peer_ll, 16);
    assert_true(brisk_icmp6_parse(b + 54, ip->payload_len, ip->src, ip->dst, r) > 0);
}

/* How many of the frames sent since the last clear are ICMPv6 messages of `type`. */
static size_t sent_of_type6(struct env *e, uint8_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < e->f.ntx; i++) {
        struct brisk_ipv6_repr ip;
        struct brisk_icmp6_repr r;
        sent6(e, i, &ip, &r);
        n += r.type == type;
    }
    return n;
}

static void expect_echo6_reply(struct env *e, size_t i)
{
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent6(e, i, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_ECHO_REPLY);
    assert_int_equal(r.id, 0x4242);
    assert_int_equal(r.payload_len, 1000);
    assert_memory_equal(r.payload, e->echo + 8, 1000);
}

static void test6_orders(void **state)
{
    (void)state;
    static const int orders[][NFRAG] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}};
    for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++) {
        struct env *e = env6_new(NULL);
        for (int i = 0; i < NFRAG; i++) {
            assert_int_equal(e->f.ntx, 0);
            frag6_i(e, 0x10000 + 7, orders[k][i]);
        }
        assert_int_equal(e->f.ntx, 1);
        expect_echo6_reply(e, 0);
        struct brisk_counters c = counters(e);
        assert_int_equal(c.Ip6ReasmReqds, NFRAG);
        assert_int_equal(c.Ip6ReasmOKs, 1);
        assert_int_equal(c.Ip6ReasmFails, 0);
        assert_int_equal(c.Icmp6InEchos, 1);
        assert_int_equal(c.IpReasmReqds, 0); /* IPv4's table and counters are apart */
        assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
        assert_int_equal(brisk_ipfrag_mem(e->st->net.ip6frag), 0);
        env_free(e);
    }
}

/* Two datagrams interleaved, one behind a hop-by-hop header (the unfragmentable part); the same 16-bit id
 * with other high bits is a third datagram (the 32-bit identification is the key). */
static void test6_interleaved(void **state)
{
    (void)state;
    struct env *e = env6_new(NULL);
    static const int order[NFRAG] = {2, 0, 3, 1};
    for (int i = 0; i < NFRAG; i++) {
        int j = order[i];
        frag6_i(e, 0x00010001, j);
        frag6_to(e, us_ll, 0x00020001, foff[j], e->echo + foff[j], flen[j], j < NFRAG - 1, BRISK_IP_PROTO_ICMPV6,
                 1);
        if (i == 0)
            frag6_i(e, 0x00030001, 0);
    }
    assert_int_equal(e->f.ntx, 2);
    expect_echo6_reply(e, 0);
    expect_echo6_reply(e, 1);
    assert_int_equal(counters(e).Ip6ReasmOKs, 2);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 1);
    env_free(e); /* the third still held: freed with the stack */
}

/* RFC 5722: an overlap drops the datagram, and the fragments still to come for it, silently, until the
 * timeout; afterwards the identification is free again. */
static void test6_overlap(void **state)
{
    (void)state;
    struct env *e = env6_new(NULL);
    frag6_i(e, 3, 0);
    frag6(e, 3, 248, 256, 1); /* [248, 504) over [0, 256)'s end */
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Ip6ReasmOverlaps, 1);
    assert_int_equal(c.Ip6ReasmFails, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 1); /* held empty */
    for (int i = 0; i < NFRAG; i++)
        frag6_i(e, 3, i); /* the whole datagram again: nothing taken */
    assert_int_equal(e->f.ntx, 0);
    c = counters(e);
    assert_int_equal(c.Ip6ReasmOKs, 0);
    assert_int_equal(c.Ip6ReasmFails, 1);
    assert_int_equal(c.Ip6ReasmReqds, 2 + NFRAG);
    /* The timeout frees it without an error and without counting a second failure. */
    brisk_stack_poll(e->st, 1 * MS + 60 * SEC);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    assert_int_equal(brisk_ipfrag_mem(e->st->net.ip6frag), 0);
    c = counters(e);
    assert_int_equal(c.Ip6ReasmTimeout, 0);
    assert_int_equal(c.Ip6ReasmFails, 1);
    e->now = 61 * SEC;
    for (int i = 0; i < NFRAG; i++)
        frag6_i(e, 3, i);
    assert_int_equal(e->f.ntx, 1);
    expect_echo6_reply(e, 0);
    /* An exact duplicate is dropped alone (RFC 8200 §4.5 allows it). */
    fakedev_destroy(&e->f, e->now);
    frag6_i(e, 4, 0);
    frag6_i(e, 4, 0);
    for (int i = 1; i < NFRAG; i++)
        frag6_i(e, 4, i);
    assert_int_equal(e->f.ntx, 1);
    assert_int_equal(counters(e).Ip6ReasmOverlaps, 1);
    env_free(e);
}

/* The first fragment and one more: after ip6frag_time (60 s), Ip6ReasmTimeout and an ICMPv6 Time Exceeded
 * code 1 quoting the first fragment (its fragment header included). */
static void test6_timeout(void **state)
{
    (void)state;
    struct env *e = env6_new(NULL);
    frag6_i(e, 11, 0);
    e->now += 10 * SEC;
    frag6_i(e, 11, 2); /* does not extend the timer */
    brisk_stack_poll(e->st, 1 * MS + 60 * SEC - 1);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 1);
    brisk_stack_poll(e->st, 1 * MS + 60 * SEC);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    assert_int_equal(brisk_ipfrag_mem(e->st->net.ip6frag), 0);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_ipv6_repr ip, qip;
    struct brisk_icmp6_repr r;
    sent6(e, 0, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_TIME_EXCEEDED);
    assert_int_equal(r.code, 1);
    assert_memory_equal(ip.src, us_ll, 16);
    assert_int_equal(r.payload_len, 40 + 8 + 256);
    assert_int_equal(brisk_ipv6_parse_quoted(r.payload, r.payload_len, &qip), 40);
    assert_int_equal(qip.next_header, BRISK_IP_PROTO_FRAGMENT);
    assert_int_equal(qip.payload_len, 8 + 256);
    assert_memory_equal(qip.src, peer_ll, 16);
    const uint8_t *fh = r.payload + 40;
    assert_int_equal(fh[0], BRISK_IP_PROTO_ICMPV6);
    assert_int_equal(brisk_get16(fh + 2), 1); /* offset 0, M 1 */
    assert_int_equal(brisk_get32(fh + 4), 11);
    assert_memory_equal(r.payload + 48, e->echo, 256);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Ip6ReasmTimeout, 1);
    assert_int_equal(c.Ip6ReasmFails, 1);
    fakedev_destroy(&e->f, e->now);

    /* Without the first fragment: silent. To all-nodes: no error either (RFC 4443 §2.4 (e.3)). */
    e->now = 61 * SEC;
    frag6_i(e, 12, 1);
    frag6_to(e, all_nodes, 13, 0, e->echo, 256, 1, BRISK_IP_PROTO_ICMPV6, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 2);
    brisk_stack_poll(e->st, 122 * SEC);
    assert_int_equal(sent_of_type6(e, BRISK_ICMP6_TIME_EXCEEDED), 0); /* (NUD probes the peer meanwhile) */
    assert_int_equal(counters(e).Ip6ReasmTimeout, 3);
    env_free(e);

    /* ip6frag_time is a setting of its own: ipfrag_time does not move it. */
    e = env6_new((const char *const[]){"ip6frag_time=2s", "ipfrag_time=1s", NULL});
    frag6_i(e, 14, 0);
    brisk_stack_poll(e->st, 1 * MS + 2 * SEC - 1);
    assert_int_equal(counters(e).Ip6ReasmTimeout, 0);
    brisk_stack_poll(e->st, 1 * MS + 2 * SEC);
    assert_int_equal(counters(e).Ip6ReasmTimeout, 1);
    assert_int_equal(e->f.ntx, 1);
    env_free(e);
}

/* ip6frag_high_thresh bounds IPv6's table alone: a flood of first fragments stays within 16 KB, evicting the
 * oldest (brisk), and a packet sent whole meanwhile gets through; 0 turns IPv6 reassembly off. */
static void test6_memory_bound(void **state)
{
    (void)state;
    struct env *e = env6_new((const char *const[]){"ip6frag_high_thresh=16K", NULL});
    frag_i(e, 1, 0); /* an IPv4 datagram held meanwhile, in its own table */
    for (uint32_t id = 1; id <= 200; id++) {
        frag6_i(e, id, 0);
        assert_true(brisk_ipfrag_mem(e->st->net.ip6frag) <= 16384);
    }
    uint32_t held = brisk_ipfrag_queues(e->st->net.ip6frag);
    assert_true(held >= 20 && held < 60);
    assert_int_equal(counters(e).Ip6ReasmFails, 200 - held);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ipfrag), 1);
    assert_int_equal(counters(e).IpReasmFails, 0);
    for (int i = 0; i < NFRAG; i++)
        frag6_i(e, 5000, i);
    assert_int_equal(e->f.ntx, 1);
    expect_echo6_reply(e, 0);
    env_free(e);

    e = env6_new((const char *const[]){"ip6frag_high_thresh=0", NULL});
    for (int i = 0; i < NFRAG; i++)
        frag6_i(e, 1, i);
    assert_int_equal(e->f.ntx, 0);
    assert_int_equal(counters(e).Ip6ReasmFails, NFRAG);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    for (int i = 0; i < NFRAG; i++) /* IPv4 still reassembles (e->echo's bytes: ICMPv6's, here a bad ICMP) */
        frag_i(e, 1, i);
    assert_int_equal(counters(e).IpReasmOKs, 1);
    env_free(e);
}

/* An atomic fragment (offset 0, M 0) is a whole packet: answered at once, no queue (RFC 6946). */
static void test6_atomic(void **state)
{
    (void)state;
    struct env *e = env6_new(NULL);
    frag6_to(e, us_ll, 21, 0, e->echo, sizeof e->echo, 0, BRISK_IP_PROTO_ICMPV6, 0);
    assert_int_equal(e->f.ntx, 1);
    expect_echo6_reply(e, 0);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Ip6ReasmReqds, 1);
    assert_int_equal(c.Ip6ReasmOKs, 1);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    /* It does not touch a datagram being reassembled under the same identification. */
    fakedev_destroy(&e->f, e->now);
    frag6_i(e, 21, 0);
    frag6_to(e, us_ll, 21, 0, e->echo, sizeof e->echo, 0, BRISK_IP_PROTO_ICMPV6, 0);
    for (int i = 1; i < NFRAG; i++)
        frag6_i(e, 21, i);
    assert_int_equal(e->f.ntx, 2);
    assert_int_equal(counters(e).Ip6ReasmOKs, 3);
    env_free(e);
}

/* RFC 8200 §4.5's parameter problems: M set and a length not a multiple of 8 (code 0 at the payload length),
 * offset + length past 65,535 (code 0 at the fragment offset). Neither is queued. A packet whose
 * unfragmentable part makes it longer than 65,535 bytes of payload once whole is dropped (Linux's
 * ip6_frag_reasm). A first fragment without its whole header chain is RFC 7112's code 3 at pointer 0. */
static void test6_bad_lengths(void **state)
{
    (void)state;
    struct env *e = env6_new(NULL);
    frag6(e, 41, 0, 100, 1);
    assert_int_equal(e->f.ntx, 1);
    struct brisk_ipv6_repr ip;
    struct brisk_icmp6_repr r;
    sent6(e, 0, &ip, &r);
    assert_int_equal(r.type, BRISK_ICMP6_PARAM_PROB);
    assert_int_equal(r.code, BRISK_IPV6_PP_HEADER);
    assert_int_equal(r.pointer, 4);
    uint8_t big[1400];
    memset(big, 0x33, sizeof big);
    frag6_to(e, us_ll, 42, 65528, big, 16, 0, BRISK_IP_PROTO_ICMPV6, 0);
    assert_int_equal(e->f.ntx, 2);
    sent6(e, 1, &ip, &r);
    assert_int_equal(r.code, BRISK_IPV6_PP_HEADER);
    assert_int_equal(r.pointer, 42);
    uint8_t cut[8] = {BRISK_IP_PROTO_NONE, 1}; /* a 16-byte destination options header, 8 bytes of it */
    frag6_to(e, us_ll, 46, 0, cut, 8, 1, BRISK_IP_PROTO_DSTOPTS, 0);
    assert_int_equal(e->f.ntx, 3);
    sent6(e, 2, &ip, &r);
    assert_int_equal(r.code, BRISK_IPV6_PP_CHAIN);
    assert_int_equal(r.pointer, 0);
    struct brisk_counters c = counters(e);
    assert_int_equal(c.Ip6InHdrErrors, 3);
    assert_int_equal(c.Ip6ReasmReqds, 3);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    fakedev_destroy(&e->f, e->now);

    /* 65,535 bytes of fragments behind an 8-byte hop-by-hop header: 65,543 bytes of payload once whole. */
    for (uint32_t off = 0; off < 65535; off += 1392) {
        uint32_t len = 65535 - off < 1392 ? 65535 - off : 1392;
        frag6_to(e, us_ll, 43, off, big, len, off + len < 65535, BRISK_IP_PROTO_NONE, 1);
    }
    c = counters(e);
    assert_int_equal(c.Ip6ReasmFails, 1);
    assert_int_equal(c.Ip6ReasmOKs, 0);
    assert_int_equal(brisk_ipfrag_queues(e->st->net.ip6frag), 0);
    /* The same without the hop-by-hop header fits exactly: No Next Header, delivered to nobody. */
    for (uint32_t off = 0; off < 65535; off += 1392) {
        uint32_t len = 65535 - off < 1392 ? 65535 - off : 1392;
        frag6_to(e, us_ll, 44, off, big, len, off + len < 65535, BRISK_IP_PROTO_NONE, 0);
    }
    c = counters(e);
    assert_int_equal(c.Ip6ReasmOKs, 1);
    assert_int_equal(c.Ip6InDiscards, 1);

    env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_reverse_and_shuffled),
        cmocka_unit_test(test_duplicate),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_timeout_with_icmp),
        cmocka_unit_test(test_memory_bound_evicts_oldest),
        cmocka_unit_test(test_memory_bound_linux_refuses),
        cmocka_unit_test(test_reassembly_off),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_tcp_segment_in_fragments),
        cmocka_unit_test(test6_orders),
        cmocka_unit_test(test6_interleaved),
        cmocka_unit_test(test6_overlap),
        cmocka_unit_test(test6_timeout),
        cmocka_unit_test(test6_memory_bound),
        cmocka_unit_test(test6_atomic),
        cmocka_unit_test(test6_bad_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
