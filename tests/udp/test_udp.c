/* tests for src/udp/: bind rules and ephemeral ports, receive and truncation, the bounded receive queue,
 * checksums, ICMP port unreachable both ways, path MTU, WRITABLE after a refused send (a fake device), and an
 * echo between two simulated hosts; then UDP over IPv6: the bind rules across families, the mandatory
 * checksum, ICMPv6 port unreachable both ways, sends and Packet Too Big (a fake device), and between two
 * dual-stack simulated hosts an echo over both families, its capture per seed, a refused port and a 1280-byte
 * tunnel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "brisk/sim.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "support/simnet.h"
#include "udp/udp.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/udp.h"
#include "wire/wire.h"

#define US    IP4(10, 0, 0, 1)
#define PEER  IP4(10, 0, 0, 2)
#define BCAST IP4(10, 0, 0, 255)

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* A stack on a fake device at 10.0.0.1/24 that knows the peer's MAC (from an ARP request of the peer's). */
static brisk_stack *new_stack(struct fakedev *f, uint64_t seed)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.seed = seed;
    brisk_stack *st = brisk_stack_new(&s);
    assert_non_null(st);
    fakedev_init(f, st, 1, US, 24);
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, bcast_mac, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = PEER, .tpa = US};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + 14, &a);
    brisk_stack_input(st, f->dev, frame, sizeof(frame), 0);
    fakedev_clear(f);
    return st;
}

static void free_stack(brisk_stack *st, struct fakedev *f)
{
    fakedev_destroy(f, 0);
    assert_int_equal(brisk_stack_pkts_in_use(st), 0);
    brisk_stack_free(st);
}

static struct brisk_counters counters(const brisk_stack *st)
{
    struct brisk_counters c;
    brisk_stack_get_counters(st, &c);
    return c;
}

/* A frame carrying a UDP datagram from src:sport to dst:dport with a correct checksum. */
static size_t udp_frame(uint8_t *frame, const uint8_t *dst_mac, uint32_t src, uint16_t sport, uint32_t dst,
                        uint16_t dport, const uint8_t *data, size_t len)
{
    uint8_t dg[1500];
    struct brisk_udp_repr r = {.sport = sport, .dport = dport, .payload_len = len};
    brisk_udp_emit(dg, &r);
    if (len)
        memcpy(dg + 8, data, len);
    brisk_udp_csum_fill(dg, 8 + len, src, dst);
    return fakedev_ipv4_frame(frame, dst_mac, peer_mac, src, dst, BRISK_IP_PROTO_UDP, dg, 8 + len);
}

static void inject(brisk_stack *st, struct fakedev *f, uint16_t sport, uint16_t dport, const uint8_t *data,
                   size_t len, uint64_t now)
{
    uint8_t frame[1600];
    size_t n = udp_frame(frame, f->cfg.mac, PEER, sport, US, dport, data, len);
    assert_int_equal(brisk_stack_input(st, f->dev, frame, n, now), BRISK_OK);
}

static brisk_udp *bound(brisk_stack *st, uint32_t addr, uint16_t port)
{
    int err;
    brisk_udp *u = brisk_udp_socket(st, &err);
    assert_non_null(u);
    struct brisk_addr a = brisk_addr_v4(addr);
    assert_int_equal(brisk_udp_bind(u, &a, port), BRISK_OK);
    return u;
}

struct evlog {
    unsigned events;
    int calls;
};

static void ev_cb(void *ctx, brisk_udp *u, unsigned events, uint64_t now)
{
    (void)u;
    (void)now;
    struct evlog *l = ctx;
    l->events |= events;
    l->calls++;
}

static void test_bind_rules(void **state)
{
    (void)state;
    struct fakedev f, f2;
    brisk_stack *st = new_stack(&f, 1);
    fakedev_init(&f2, st, 3, IP4(10, 0, 1, 1), 24);
    int err;
    brisk_udp *any = bound(st, 0, 5000);
    brisk_udp *u = brisk_udp_socket(st, &err);
    struct brisk_addr a_any = {.family = BRISK_AF_UNSPEC}, a_us = brisk_addr_v4(US);
    struct brisk_addr a_us2 = brisk_addr_v4(IP4(10, 0, 1, 1)), a_other = brisk_addr_v4(IP4(10, 0, 0, 9));
    assert_int_equal(brisk_udp_bind(u, &a_any, 5000), BRISK_ERR_ADDRINUSE);
    assert_int_equal(brisk_udp_bind(u, &a_us, 5000), BRISK_ERR_ADDRINUSE); /* overlaps "any" */
    assert_int_equal(brisk_udp_bind(u, &a_other, 5001), BRISK_ERR_ADDRNOTAVAIL);
    struct brisk_addr v6 = {.family = BRISK_AF_INET6};
    v6.u.v6[15] = 1;
    assert_int_equal(brisk_udp_bind(u, &v6, 5001), BRISK_ERR_ADDRNOTAVAIL); /* ::1: not an address of ours */
    struct brisk_addr bad = {.family = 9};
    assert_int_equal(brisk_udp_bind(u, &bad, 5001), BRISK_ERR_INVAL);
    assert_int_equal(brisk_udp_bind(NULL, &a_any, 5001), BRISK_ERR_INVAL);
    /* Distinct specific addresses share a port; "any" then overlaps both. */
    assert_int_equal(brisk_udp_bind(u, &a_us, 6000), BRISK_OK);
    assert_int_equal(brisk_udp_bind(u, &a_us2, 6001), BRISK_ERR_INVAL); /* already bound */
    brisk_udp *u2 = bound(st, IP4(10, 0, 1, 1), 6000);
    brisk_udp *u3 = brisk_udp_socket(st, &err);
    assert_int_equal(brisk_udp_bind(u3, &a_any, 6000), BRISK_ERR_ADDRINUSE);
    /* :: overlaps IPv4's addresses too, but port 6002 is free. */
    struct brisk_addr v6any = {.family = BRISK_AF_INET6};
    assert_int_equal(brisk_udp_bind(u3, &v6any, 6002), BRISK_OK);
    /* The port is free again once its socket closes. */
    assert_int_equal(brisk_udp_close(any), BRISK_OK);
    brisk_udp *again = bound(st, 0, 5000);
    struct brisk_tuple t;
    assert_int_equal(brisk_udp_tuple(u2, &t), BRISK_OK);
    assert_int_equal(t.laddr.family, BRISK_AF_INET);
    assert_int_equal(t.laddr.u.v4, IP4(10, 0, 1, 1));
    assert_int_equal(t.lport, 6000);
    assert_int_equal(t.raddr.family, BRISK_AF_UNSPEC);
    assert_int_equal(brisk_stack_udp_sockets(st), 4);
    brisk_udp_close(again);
    brisk_udp_close(u);
    brisk_udp_close(u2);
    brisk_udp_close(u3);
    assert_int_equal(brisk_stack_udp_sockets(st), 0);
    fakedev_destroy(&f2, 0);
    free_stack(st, &f);
}

static uint16_t eph_port(brisk_stack *st)
{
    brisk_udp *u = bound(st, 0, 0);
    struct brisk_tuple t;
    brisk_udp_tuple(u, &t);
    return t.lport; /* left open: the stack frees it */
}

static void test_ephemeral_ports(void **state)
{
    (void)state;
    struct fakedev f, g;
    brisk_stack *st = new_stack(&f, 7), *st2 = new_stack(&g, 7);
    uint16_t seen[64];
    for (int i = 0; i < 64; i++) {
        seen[i] = eph_port(st);
        assert_in_range(seen[i], 32768, 60999);
        for (int j = 0; j < i; j++)
            assert_int_not_equal(seen[i], seen[j]);
        assert_int_equal(eph_port(st2), seen[i]); /* same seed, same ports */
    }
    /* A send and a connect bind an unbound socket. */
    int err;
    brisk_udp *s = brisk_udp_socket(st, &err), *c = brisk_udp_socket(st, &err);
    struct brisk_addr peer = brisk_addr_v4(PEER);
    assert_int_equal(brisk_udp_sendto(s, "x", 1, &peer, 9, 1), 1);
    assert_int_equal(brisk_udp_connect(c, &peer, 9), BRISK_OK);
    struct brisk_tuple ts, tc;
    brisk_udp_tuple(s, &ts);
    brisk_udp_tuple(c, &tc);
    assert_in_range(ts.lport, 32768, 60999);
    assert_in_range(tc.lport, 32768, 60999);
    assert_int_equal(tc.raddr.u.v4, PEER);
    assert_int_equal(tc.rport, 9);
    /* The datagram on the wire names the chosen port. */
    assert_int_equal(f.ntx, 1);
    assert_int_equal(brisk_get16(f.tx[0].data + 34), ts.lport);
    /* Sockets left open go with the stack, their buffers back to the pool. */
    inject(st, &f, 9, ts.lport, (const uint8_t *)"q", 1, 2);
    assert_int_equal(counters(st).UdpInDatagrams, 1);
    fakedev_destroy(&f, 0);
    fakedev_destroy(&g, 0);
    brisk_stack_free(st);
    brisk_stack_free(st2);
}

static void test_receive_truncate(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    brisk_udp *u = bound(st, 0, 7000);
    struct evlog log = {0};
    brisk_udp_set_callback(u, ev_cb, &log);
    uint8_t data[1000], buf[1000];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 13 + 1);
    inject(st, &f, 4321, 7000, data, sizeof(data), 10);
    inject(st, &f, 4322, 7000, data, 0, 11);
    assert_true(log.events & BRISK_EV_READABLE);
    assert_true(brisk_udp_poll(u) & BRISK_POLL_IN);
    uint64_t inq;
    assert_int_equal(brisk_udp_getsockopt(u, BRISK_SO_INQ, &inq), BRISK_OK);
    assert_int_equal(inq, sizeof(data));
    struct brisk_addr from;
    uint16_t port;
    unsigned flags = 99;
    assert_int_equal(brisk_udp_recvfrom(u, buf, 100, &from, &port, &flags), 100);
    assert_int_equal(flags, BRISK_MSG_TRUNC);
    assert_memory_equal(buf, data, 100);
    assert_int_equal(from.family, BRISK_AF_INET);
    assert_int_equal(from.u.v4, PEER);
    assert_int_equal(port, 4321);
    /* The rest of a truncated datagram is gone; the next is the empty one. */
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, &flags), 0);
    assert_int_equal(flags, 0);
    assert_int_equal(port, 4322);
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_AGAIN);
    assert_false(brisk_udp_poll(u) & BRISK_POLL_IN);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.UdpInDatagrams, 2);
    assert_int_equal(c.UdpInErrors, 0);
    /* Malformed: a length field beyond the datagram. */
    uint8_t frame[100];
    size_t n = udp_frame(frame, f.cfg.mac, PEER, 1, US, 7000, data, 20);
    brisk_put16(frame + 34 + 4, 40);
    brisk_stack_input(st, f.dev, frame, n, 12);
    assert_int_equal(counters(st).UdpInErrors, 1);
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_AGAIN);
    brisk_udp_close(u);
    free_stack(st, &f);
}

static void test_queue_bound(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    brisk_udp *u = bound(st, 0, 7000);
    assert_int_equal(brisk_udp_setsockopt(u, BRISK_SO_RCVBUF, 100), BRISK_ERR_RANGE);
    assert_int_equal(brisk_udp_setsockopt(u, BRISK_SO_RCVBUF, 10000), BRISK_OK);
    uint8_t data[200] = {1};
    uint64_t held = brisk_stack_pkts_in_use(st); /* the device's (the ARP reply) */
    inject(st, &f, 1, 7000, data, sizeof(data), 1);
    uint64_t one = u->rq_bytes; /* one datagram's truesize */
    assert_true(one > sizeof(data));
    for (int i = 1; i < 20; i++)
        inject(st, &f, 1, 7000, data, sizeof(data), 1);
    /* Taken while what is queued does not exceed rcvbuf: floor(10000 / one) + 1 datagrams. */
    uint64_t want = 10000 / one + 1;
    assert_int_equal(u->rq_len, want);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.UdpInDatagrams, want);
    assert_int_equal(c.UdpRcvbufErrors, 20 - want);
    assert_int_equal(c.UdpInErrors, 20 - want);
    assert_int_equal(brisk_stack_pkts_in_use(st), held + want); /* the queue is pool packets */
    /* Draining makes room again. */
    uint8_t buf[300];
    while (brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL) >= 0)
        ;
    inject(st, &f, 1, 7000, data, sizeof(data), 2);
    assert_int_equal(u->rq_len, 1);
    /* The default bound is the udp_rcvbuf setting. */
    uint64_t v;
    brisk_udp *u2 = bound(st, 0, 7001);
    assert_int_equal(brisk_udp_getsockopt(u2, BRISK_SO_RCVBUF, &v), BRISK_OK);
    assert_int_equal(v, brisk_stack_settings(st)->udp_rcvbuf);
    brisk_udp_close(u2);
    brisk_udp_close(u); /* frees what is queued */
    free_stack(st, &f);
}

static void test_checksum(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    brisk_udp *u = bound(st, 0, 7000);
    uint8_t data[64] = {5, 6, 7}, frame[200];
    size_t n = udp_frame(frame, f.cfg.mac, PEER, 1, US, 7000, data, sizeof(data));
    frame[n - 1] ^= 0x40; /* a payload bit flipped */
    brisk_stack_input(st, f.dev, frame, n, 1);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.UdpInCsumErrors, 1);
    assert_int_equal(c.UdpInErrors, 1);
    assert_int_equal(c.UdpInDatagrams, 0);
    assert_int_equal(u->rq_len, 0);
    assert_int_equal(f.ntx, 0); /* dropped silently */
    /* The same frame, vouched for by the device, is taken as it is. */
    brisk_stack_input_flags(st, f.dev, frame, n, BRISK_RX_CSUM_VALID, 2);
    assert_int_equal(u->rq_len, 1);
    /* A checksum field of 0: the sender computed none (RFC 768). */
    n = udp_frame(frame, f.cfg.mac, PEER, 1, US, 7000, data, sizeof(data));
    brisk_put16(frame + 34 + 6, 0);
    brisk_stack_input(st, f.dev, frame, n, 3);
    assert_int_equal(u->rq_len, 2);
    assert_int_equal(counters(st).UdpInCsumErrors, 1);
    brisk_udp_close(u);
    free_stack(st, &f);
}

/* The one frame the stack sent: an ICMP error (returned: its payload, the quote). */
static const uint8_t *icmp_out(struct fakedev *f, uint8_t type, uint8_t code, size_t *qlen)
{
    assert_int_equal(f->ntx, 1);
    const uint8_t *o = f->tx[0].data;
    struct brisk_ipv4_repr ip;
    assert_int_equal(brisk_ipv4_parse(o + 14, f->tx[0].len - 14, &ip), 20);
    assert_int_equal(ip.proto, BRISK_IP_PROTO_ICMP);
    assert_int_equal(ip.dst, PEER);
    struct brisk_icmp_repr r;
    assert_int_equal(brisk_icmp_parse(o + 34, ip.total_len - 20u, &r), 8);
    assert_int_equal(r.type, type);
    assert_int_equal(r.code, code);
    *qlen = r.payload_len;
    return r.payload;
}

static void test_port_unreachable_out(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    uint8_t data[30] = {9}, frame[200];
    size_t n = udp_frame(frame, f.cfg.mac, PEER, 1234, US, 53, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 1);
    size_t qlen;
    const uint8_t *q = icmp_out(&f, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, &qlen);
    assert_int_equal(qlen, 20 + 8 + sizeof(data)); /* the whole datagram, header and all */
    assert_memory_equal(q, frame + 14, qlen);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.UdpNoPorts, 1);
    assert_int_equal(c.IcmpOutDestUnreachs, 1);
    fakedev_clear(&f);
    /* A socket connected elsewhere does not take it either. */
    int err;
    brisk_udp *u = bound(st, 0, 53);
    struct brisk_addr other = brisk_addr_v4(IP4(10, 0, 0, 3));
    assert_int_equal(brisk_udp_connect(u, &other, 1234), BRISK_OK);
    brisk_stack_input(st, f.dev, frame, n, BRISK_NSEC_PER_SEC);
    (void)icmp_out(&f, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, &qlen);
    fakedev_clear(&f);
    brisk_udp_close(u);
    /* Broadcasts get none: to the directed broadcast, to 255.255.255.255, and to us through the broadcast
     * MAC; each counted. */
    n = udp_frame(frame, bcast_mac, PEER, 1234, BCAST, 53, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 2 * BRISK_NSEC_PER_SEC);
    n = udp_frame(frame, bcast_mac, PEER, 1234, 0xffffffffu, 53, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 3 * BRISK_NSEC_PER_SEC);
    n = udp_frame(frame, bcast_mac, PEER, 1234, US, 53, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 4 * BRISK_NSEC_PER_SEC);
    assert_int_equal(f.ntx, 0);
    c = counters(st);
    assert_int_equal(c.UdpNoPorts, 5);
    assert_int_equal(c.IcmpOutDestUnreachs, 2);
    /* ... while a socket bound to any address receives the broadcast. */
    brisk_udp *b = bound(st, 0, 53);
    n = udp_frame(frame, bcast_mac, PEER, 1234, BCAST, 53, data, sizeof(data));
    brisk_stack_input(st, f.dev, frame, n, 5 * BRISK_NSEC_PER_SEC);
    assert_int_equal(b->rq_len, 1);
    brisk_udp_close(b);
    /* The ICMP limiter bounds a flood of datagrams to closed ports. */
    uint64_t before = counters(st).IcmpOutDestUnreachs;
    n = udp_frame(frame, f.cfg.mac, PEER, 1234, US, 54, data, sizeof(data));
    for (int i = 0; i < 100; i++)
        brisk_stack_input(st, f.dev, frame, n, 10 * BRISK_NSEC_PER_SEC);
    c = counters(st);
    assert_true(c.IcmpOutDestUnreachs - before < 100);
    assert_int_equal(c.IcmpOutDestUnreachs - before + (c.IcmpOutRateLimited), 100);
    (void)err;
    free_stack(st, &f);
}

/* Injects an ICMP error from the peer quoting the first frame the stack sent. */
static void inject_icmp(brisk_stack *st, struct fakedev *f, size_t which, uint8_t type, uint8_t code,
                        uint16_t mtu, uint64_t now)
{
    const uint8_t *o = f->tx[which].data + 14;
    size_t olen = f->tx[which].len - 14;
    uint8_t icmp[600], frame[700];
    struct brisk_icmp_repr r = {.type = type,
                                .code = code,
                                .next_hop_mtu = mtu,
                                .payload = o,
                                .payload_len = olen < 548 ? olen : 548};
    size_t n = brisk_icmp_emit(icmp, &r);
    n = fakedev_ipv4_frame(frame, f->cfg.mac, peer_mac, PEER, US, BRISK_IP_PROTO_ICMP, icmp, n);
    brisk_stack_input(st, f->dev, frame, n, now);
}

static void test_connrefused(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    int err;
    brisk_udp *u = brisk_udp_socket(st, &err);
    struct evlog log = {0};
    brisk_udp_set_callback(u, ev_cb, &log);
    struct brisk_addr peer = brisk_addr_v4(PEER);
    assert_int_equal(brisk_udp_connect(u, &peer, 9999), BRISK_OK);
    assert_int_equal(brisk_udp_send(u, "hello", 5, 1), 5);
    assert_int_equal(f.ntx, 1);
    /* A soft error (host unreachable) is not reported. */
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_HOST, 0, 2);
    assert_int_equal(log.events, 0);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    /* A quote naming another port of the peer's is no news of ours (IcmpInErrors). */
    uint64_t inerr = counters(st).IcmpInErrors;
    brisk_put16(f.tx[0].data + 34 + 2, 9998);
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, 0, 3);
    assert_int_equal(log.events, 0);
    assert_int_equal(counters(st).IcmpInErrors, inerr + 1);
    brisk_put16(f.tx[0].data + 34 + 2, 9999);
    /* Port unreachable: the error, once. */
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, 0, 4);
    assert_true(log.events & BRISK_EV_ERROR);
    assert_true(brisk_udp_poll(u) & BRISK_POLL_ERR);
    uint8_t buf[16];
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_CONNREFUSED);
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_AGAIN);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    /* Again, read by the next send this time. */
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, 0, 5);
    assert_int_equal(brisk_udp_send(u, "again", 5, 6), BRISK_ERR_CONNREFUSED);
    assert_int_equal(brisk_udp_send(u, "again", 5, 7), 5);
    /* Fragmentation needed: the path MTU, and EMSGSIZE once on the connected socket (Linux under its
     * default IP_PMTUDISC_WANT). */
    log.events = 0;
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_FRAG_NEEDED, 1000, 7);
    assert_true(log.events & BRISK_EV_ERROR);
    assert_int_equal(brisk_udp_error(u), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    assert_int_equal(counters(st).PmtuLowered, 1);
    /* Disconnected, the socket hears no more of it (Linux without IP_RECVERR). */
    struct brisk_addr unspec = {.family = BRISK_AF_UNSPEC};
    assert_int_equal(brisk_udp_connect(u, &unspec, 0), BRISK_OK);
    assert_int_equal(brisk_udp_send(u, "x", 1, 8), BRISK_ERR_NOTCONN);
    log.events = 0;
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_PORT, 0, 9);
    assert_int_equal(log.events, 0);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    brisk_udp_close(u);
    free_stack(st, &f);
}

static void test_send(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    brisk_udp *u = bound(st, US, 4000);
    assert_int_equal(brisk_udp_setsockopt(u, BRISK_SO_TOS, 0x28), BRISK_OK);
    struct brisk_addr peer = brisk_addr_v4(PEER);
    static uint8_t data[1500];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i ^ 0x5a);
    assert_int_equal(brisk_udp_sendto(u, data, 1472, &peer, 53, 1), 1472);
    assert_int_equal(brisk_udp_sendto(u, data, 1473, &peer, 53, 1), BRISK_ERR_MSGSIZE); /* never fragmented */
    assert_int_equal(brisk_udp_sendto(u, data, 0, &peer, 53, 1), 0);
    assert_int_equal(brisk_udp_send(u, data, 1, 1), BRISK_ERR_NOTCONN);
    assert_int_equal(brisk_udp_sendto(u, data, 1, &peer, 0, 1), BRISK_ERR_INVAL);
    struct brisk_addr v6 = {.family = BRISK_AF_INET6};
    assert_int_equal(brisk_udp_sendto(u, data, 1, &v6, 53, 1), BRISK_ERR_INVAL); /* :: names no peer */
    v6.u.v6[0] = 0x20;
    v6.u.v6[15] = 2;
    assert_int_equal(brisk_udp_sendto(u, data, 1, &v6, 53, 1), BRISK_ERR_AFNOSUPPORT); /* bound to IPv4 */
    struct brisk_addr far = brisk_addr_v4(IP4(192, 0, 2, 1));
    assert_int_equal(brisk_udp_sendto(u, data, 1, &far, 53, 1), BRISK_ERR_NOROUTE);
    assert_int_equal(f.ntx, 2);
    for (size_t k = 0; k < 2; k++) {
        struct brisk_ipv4_repr ip;
        const uint8_t *o = f.tx[k].data;
        assert_int_equal(brisk_ipv4_parse(o + 14, f.tx[k].len - 14, &ip), 20);
        assert_int_equal(ip.proto, BRISK_IP_PROTO_UDP);
        assert_int_equal(ip.src, US);
        assert_int_equal(ip.dst, PEER);
        assert_int_equal(ip.tos, 0x28);
        assert_true(ip.df);
        struct brisk_udp_repr r;
        assert_int_equal(brisk_udp_parse(o + 34, ip.total_len - 20u, ip.src, ip.dst, 1, &r), 8);
        assert_int_not_equal(r.csum, 0); /* always computed */
        assert_int_equal(r.sport, 4000);
        assert_int_equal(r.dport, 53);
        assert_int_equal(r.payload_len, k == 0 ? 1472 : 0);
        assert_memory_equal(r.payload, data, r.payload_len);
    }
    assert_int_equal(counters(st).UdpOutDatagrams, 2);
    /* Fragmentation needed for the peer lowers the path MTU: the next send over it is refused. */
    inject_icmp(st, &f, 0, BRISK_ICMP_DEST_UNREACH, BRISK_ICMP_UNREACH_FRAG_NEEDED, 1000, 2);
    assert_int_equal(counters(st).PmtuLowered, 1);
    assert_int_equal(brisk_udp_sendto(u, data, 973, &peer, 53, 3), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_sendto(u, data, 972, &peer, 53, 3), 972);
    brisk_udp_close(u);
    free_stack(st, &f);
}

static void test_writable_after_refusal(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack(&f, 1);
    brisk_udp *u = bound(st, 0, 4000);
    struct evlog log = {0};
    brisk_udp_set_callback(u, ev_cb, &log);
    struct brisk_addr peer = brisk_addr_v4(PEER);
    assert_int_equal(brisk_udp_sendto(u, "a", 1, &peer, 53, 1), 1);
    f.busy = 1;
    assert_int_equal(brisk_udp_sendto(u, "b", 1, &peer, 53, 2), BRISK_ERR_AGAIN);
    assert_false(brisk_udp_poll(u) & BRISK_POLL_OUT);
    brisk_stack_poll(st, 3);
    assert_int_equal(log.events, 0);
    f.busy = 0;
    fakedev_complete_all(&f, 4);
    brisk_stack_poll(st, 4);
    assert_int_equal(log.events, BRISK_EV_WRITABLE);
    assert_true(brisk_udp_poll(u) & BRISK_POLL_OUT);
    assert_int_equal(brisk_udp_sendto(u, "b", 1, &peer, 53, 5), 1);
    brisk_udp_close(u);
    free_stack(st, &f);
}

/* Echo between two simulated hosts: b echoes whatever comes to port 7; a sends datagrams of many sizes, each
 * after the last one's echo, and compares. */
struct echo {
    struct simnet n;
    brisk_udp *srv, *cli;
    uint8_t sent[1472];
    size_t sent_len;
    int round, done, bad;
};

static size_t echo_size(int round)
{
    return (size_t)((round * 977) % 1473);
}

static void echo_send(struct echo *e, uint64_t now)
{
    e->sent_len = echo_size(e->round);
    for (size_t i = 0; i < e->sent_len; i++)
        e->sent[i] = (uint8_t)(i * 31 + (size_t)e->round);
    if (brisk_udp_send(e->cli, e->sent, e->sent_len, now) != (int64_t)e->sent_len)
        e->bad++;
    brisk_sim_host_kick(e->n.a);
}

static void srv_cb(void *ctx, brisk_udp *u, unsigned events, uint64_t now)
{
    struct echo *e = ctx;
    if (!(events & BRISK_EV_READABLE))
        return;
    uint8_t buf[1500];
    struct brisk_addr from;
    uint16_t port;
    unsigned flags;
    int64_t n;
    while ((n = brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, &flags)) >= 0)
        if (brisk_udp_sendto(u, buf, (size_t)n, &from, port, now) != n)
            e->bad++;
    brisk_sim_host_kick(e->n.b);
}

static void cli_cb(void *ctx, brisk_udp *u, unsigned events, uint64_t now)
{
    struct echo *e = ctx;
    if (!(events & BRISK_EV_READABLE))
        return;
    uint8_t buf[1500];
    struct brisk_addr from;
    uint16_t port;
    unsigned flags;
    int64_t n = brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, &flags);
    if (n != (int64_t)e->sent_len || memcmp(buf, e->sent, e->sent_len) || from.u.v4 != SIMNET_B_IP ||
        port != 7 || flags)
        e->bad++;
    if (++e->round == 200) {
        e->done = 1;
        return;
    }
    echo_send(e, now);
}

static int echo_done(void *ctx)
{
    return ((struct echo *)ctx)->done;
}

static void run_echo(uint32_t caps)
{
    static struct echo e;
    memset(&e, 0, sizeof(e));
    simnet_init(&e.n, 5, NULL, caps, 1000000000ull, 50 * BRISK_NSEC_PER_USEC, NULL);
    brisk_stack *sa = brisk_sim_host_stack(e.n.a), *sb = brisk_sim_host_stack(e.n.b);
    int err;
    e.srv = brisk_udp_socket(sb, &err);
    struct brisk_addr any = {.family = BRISK_AF_UNSPEC}, b = brisk_addr_v4(SIMNET_B_IP);
    assert_int_equal(brisk_udp_bind(e.srv, &any, 7), BRISK_OK);
    brisk_udp_set_callback(e.srv, srv_cb, &e);
    e.cli = brisk_udp_socket(sa, &err);
    assert_int_equal(brisk_udp_connect(e.cli, &b, 7), BRISK_OK);
    brisk_udp_set_callback(e.cli, cli_cb, &e);
    echo_send(&e, 0);
    assert_true(brisk_sim_run_while(e.n.w, echo_done, &e, 10 * BRISK_NSEC_PER_SEC));
    assert_int_equal(e.bad, 0);
    struct brisk_counters ca, cb;
    brisk_stack_get_counters(sa, &ca);
    brisk_stack_get_counters(sb, &cb);
    assert_int_equal(ca.UdpOutDatagrams, 200);
    assert_int_equal(ca.UdpInDatagrams, 200);
    assert_int_equal(cb.UdpInDatagrams, 200);
    assert_int_equal(cb.UdpOutDatagrams, 200);
    assert_int_equal(ca.UdpInErrors + cb.UdpInErrors, 0);
    brisk_udp_close(e.srv);
    brisk_udp_close(e.cli);
    simnet_free(&e.n);
}

static void test_echo_sim(void **state)
{
    (void)state;
    run_echo(0);
    run_echo(BRISK_NETDEV_CAP_CSUM | BRISK_NETDEV_CAP_GSO); /* offloads on: UDP's checksum stays software */
}

/* ---------------------------------------------------------------------------------------------------------
 * UDP over IPv6: the fake device gets 2001:db8::1/64 beside 10.0.0.1, and learns the peer 2001:db8::2's MAC
 * from a neighbour solicitation of the peer's.
 * ------------------------------------------------------------------------------------------------------- */
static const uint8_t G_US[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t G_PEER[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};
static const uint8_t ALL_NODES[16] = {0xff, 0x02, [15] = 1};

static struct brisk_addr addr6(const uint8_t v6[16])
{
    struct brisk_addr a = {.family = BRISK_AF_INET6};
    memcpy(a.u.v6, v6, 16);
    return a;
}

static brisk_stack *new_stack6(struct fakedev *f, uint64_t seed)
{
    brisk_stack *st = new_stack(f, seed);
    struct brisk_addr g = addr6(G_US);
    assert_int_equal(brisk_netdev_add_addr(f->dev, &g, 64), BRISK_OK);
    /* The peer's neighbour solicitation for our global address, with its link-layer address (RFC 4861
     * §7.2.3: the stack records it, STALE, and sends to it at once). */
    uint8_t opts[8], msg[64], sn[16], mac[6], frame[200];
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_SLLA, peer_mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = 8};
    memcpy(r.target, G_US, 16);
    brisk_ipv6_solicited_node(sn, G_US);
    brisk_ipv6_multicast_mac(mac, sn);
    size_t n = brisk_icmp6_emit(msg, &r, G_PEER, sn);
    n = fakedev_ipv6_frame(frame, mac, peer_mac, G_PEER, sn, BRISK_IP_PROTO_ICMPV6, 255, msg, n);
    assert_int_equal(brisk_stack_input(st, f->dev, frame, n, 0), BRISK_OK);
    fakedev_clear(f);
    return st;
}

/* A frame carrying a UDP datagram over IPv6 from src:sport to dst:dport with a correct checksum, after the
 * `ext` bytes of extension headers (ext_nh the first one's type) if any. */
static size_t udp6_frame(uint8_t *frame, const uint8_t src[16], uint16_t sport, const uint8_t dst[16],
                         uint16_t dport, const uint8_t *data, size_t len, const uint8_t *ext, size_t ext_len,
                         uint8_t ext_nh)
{
    uint8_t pl[1600];
    uint8_t *dg = pl + ext_len;
    if (ext_len)
        memcpy(pl, ext, ext_len);
    struct brisk_udp_repr r = {.sport = sport, .dport = dport, .payload_len = len};
    brisk_udp_emit(dg, &r);
    if (len)
        memcpy(dg + 8, data, len);
    brisk_udp_csum_fill6(dg, 8 + len, src, dst);
    uint8_t mac[6];
    if (brisk_ipv6_is_multicast(dst))
        brisk_ipv6_multicast_mac(mac, dst);
    else
        memcpy(mac, (uint8_t[6]){0x02, 0, 0, 0, 0, 0x01}, 6); /* fakedev_init's MAC for last byte 1 */
    return fakedev_ipv6_frame(frame, mac, peer_mac, src, dst, ext_len ? ext_nh : BRISK_IP_PROTO_UDP, 64, pl,
                              ext_len + 8 + len);
}

static void inject6(brisk_stack *st, struct fakedev *f, uint16_t sport, uint16_t dport, const uint8_t *data,
                    size_t len, unsigned flags, uint64_t now)
{
    uint8_t frame[1700];
    size_t n = udp6_frame(frame, G_PEER, sport, G_US, dport, data, len, NULL, 0, 0);
    assert_int_equal(brisk_stack_input_flags(st, f->dev, frame, n, flags, now), BRISK_OK);
}

static brisk_udp *bound6(brisk_stack *st, const uint8_t v6[16], uint16_t port)
{
    int err;
    brisk_udp *u = brisk_udp_socket(st, &err);
    assert_non_null(u);
    struct brisk_addr a = addr6(v6);
    assert_int_equal(brisk_udp_bind(u, &a, port), BRISK_OK);
    return u;
}

/* The frames the stack sent that are IPv6 packets of `proto` (ICMPv6 errors only, not ND), oldest first:
 * how many, and the k-th one's IPv6 header (out) and upper-layer bytes (returned). */
static const uint8_t *tx6(const struct fakedev *f, uint8_t proto, size_t k, size_t *count,
                          struct brisk_ipv6_repr *ip, size_t *l4_len)
{
    const uint8_t *found = NULL;
    size_t n = 0;
    for (size_t i = 0; i < f->ntx; i++) {
        const uint8_t *o = f->tx[i].data;
        struct brisk_ipv6_repr h;
        if (brisk_get16(o + 12) != BRISK_ETH_P_IPV6 || brisk_ipv6_parse(o + 14, f->tx[i].len - 14, &h) < 0 ||
            h.next_header != proto || (proto == BRISK_IP_PROTO_ICMPV6 && o[54] >= 128))
            continue;
        if (n++ == k) {
            found = o + 54;
            if (ip)
                *ip = h;
            if (l4_len)
                *l4_len = h.payload_len;
        }
    }
    if (count)
        *count = n;
    return found;
}

/* Bind rules across the families: 0.0.0.0 is IPv4's, :: both (no IPV6_V6ONLY), a specific address its own. */
static void test_bind_families(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack6(&f, 1);
    int err;
    static const uint8_t any6[16];
    struct brisk_addr a_any6 = addr6(any6), a_any4 = brisk_addr_v4(0), a_g = addr6(G_US);
    struct brisk_addr a_us = brisk_addr_v4(US), a_peer6 = addr6(G_PEER);
    brisk_udp *v4any = bound(st, 0, 7000);
    brisk_udp *u = brisk_udp_socket(st, &err);
    assert_int_equal(brisk_udp_bind(u, &a_any6, 7000), BRISK_ERR_ADDRINUSE); /* :: covers 0.0.0.0 */
    assert_int_equal(brisk_udp_bind(u, &a_peer6, 7000), BRISK_ERR_ADDRNOTAVAIL);
    assert_int_equal(brisk_udp_bind(u, &a_g, 7000), BRISK_OK); /* beside 0.0.0.0: IPv6 only */
    brisk_udp *dual = bound6(st, any6, 7001);
    brisk_udp *w = brisk_udp_socket(st, &err);
    assert_int_equal(brisk_udp_bind(w, &a_any4, 7001), BRISK_ERR_ADDRINUSE);
    assert_int_equal(brisk_udp_bind(w, &a_us, 7001), BRISK_ERR_ADDRINUSE);
    assert_int_equal(brisk_udp_bind(w, &a_g, 7001), BRISK_ERR_ADDRINUSE);
    assert_int_equal(brisk_udp_bind(w, &a_us, 7002), BRISK_OK);
    brisk_udp *g2 = bound6(st, G_US, 7002); /* a specific address of each family */
    struct brisk_tuple t;
    assert_int_equal(brisk_udp_tuple(dual, &t), BRISK_OK);
    assert_true(brisk_addr_equal(&t.laddr, &a_any6));
    assert_int_equal(t.lport, 7001);
    assert_int_equal(brisk_udp_tuple(g2, &t), BRISK_OK);
    assert_true(brisk_addr_equal(&t.laddr, &a_g));

    /* The receiver of each family's datagram: 7000 is 0.0.0.0's for IPv4 and 2001:db8::1's for IPv6; 7001
     * takes both on ::; 7002 each family's own. */
    uint8_t buf[64];
    struct brisk_addr from;
    uint16_t port;
    inject(st, &f, 1111, 7000, (const uint8_t *)"v4", 2, 1);
    inject6(st, &f, 2222, 7000, (const uint8_t *)"v6", 2, 0, 1);
    assert_int_equal(brisk_udp_recvfrom(v4any, buf, sizeof(buf), &from, &port, NULL), 2);
    assert_memory_equal(buf, "v4", 2);
    assert_int_equal(brisk_udp_recvfrom(v4any, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_AGAIN);
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, NULL), 2);
    assert_memory_equal(buf, "v6", 2);
    assert_true(brisk_addr_equal(&from, &a_peer6));
    assert_int_equal(port, 2222);
    inject(st, &f, 1111, 7001, (const uint8_t *)"a", 1, 2);
    inject6(st, &f, 2222, 7001, (const uint8_t *)"b", 1, 0, 2);
    assert_int_equal(brisk_udp_recvfrom(dual, buf, sizeof(buf), &from, &port, NULL), 1);
    assert_int_equal(from.family, BRISK_AF_INET); /* an IPv4 sender as IPv4, never v4-mapped */
    assert_int_equal(from.u.v4, PEER);
    assert_int_equal(port, 1111);
    assert_int_equal(brisk_udp_recvfrom(dual, buf, sizeof(buf), &from, &port, NULL), 1);
    assert_true(brisk_addr_equal(&from, &a_peer6));
    inject(st, &f, 1, 7002, (const uint8_t *)"c", 1, 3);
    inject6(st, &f, 1, 7002, (const uint8_t *)"d", 1, 0, 3);
    assert_int_equal(w->rq_len, 1);
    assert_int_equal(g2->rq_len, 1);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.UdpInDatagrams, 3);
    assert_int_equal(c.Udp6InDatagrams, 3);
    assert_int_equal(c.UdpNoPorts + c.Udp6NoPorts, 0);

    /* A socket bound to IPv4 gets no IPv6 datagram: 0.0.0.0:7003 alone, a datagram over IPv6 to 7003 finds
     * no socket. */
    brisk_udp *only4 = bound(st, 0, 7003);
    inject6(st, &f, 1, 7003, (const uint8_t *)"e", 1, 0, 4);
    assert_int_equal(only4->rq_len, 0);
    assert_int_equal(counters(st).Udp6NoPorts, 1);
    /* A link-local destination is not 2001:db8::1's. */
    uint8_t ll[16], frame[200];
    brisk_ipv6_link_local_from_mac(ll, f.cfg.mac);
    size_t n = udp6_frame(frame, G_PEER, 1, ll, 7002, (const uint8_t *)"f", 1, NULL, 0, 0);
    brisk_stack_input(st, f.dev, frame, n, 5);
    assert_int_equal(g2->rq_len, 1);
    assert_int_equal(counters(st).Udp6NoPorts, 2);

    brisk_udp_close(only4);
    brisk_udp_close(v4any);
    brisk_udp_close(u);
    brisk_udp_close(dual);
    brisk_udp_close(w);
    brisk_udp_close(g2);
    free_stack(st, &f);

    /* With the ipv6 setting off, IPv6 addresses are refused. */
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.ipv6 = 0;
    brisk_stack *st4 = brisk_stack_new(&s);
    brisk_udp *x = brisk_udp_socket(st4, &err);
    assert_int_equal(brisk_udp_bind(x, &a_any6, 9), BRISK_ERR_AFNOSUPPORT);
    assert_int_equal(brisk_udp_sendto(x, "x", 1, &a_peer6, 9, 1), BRISK_ERR_AFNOSUPPORT);
    assert_int_equal(brisk_udp_connect(x, &a_peer6, 9), BRISK_ERR_AFNOSUPPORT);
    brisk_udp_close(x);
    brisk_stack_free(st4);
}

/* RFC 8200 §8.1: the checksum is mandatory. A zero field is dropped and counted as Linux counts it
 * (Udp6InCsumErrors and Udp6InErrors, no port unreachable), even when the device vouched for the sum. */
static void test_ipv6_checksum(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack6(&f, 1);
    static const uint8_t any6[16];
    brisk_udp *u = bound6(st, any6, 7000);
    uint8_t data[64] = {5, 6, 7}, frame[300];
    size_t n = udp6_frame(frame, G_PEER, 1, G_US, 7000, data, sizeof(data), NULL, 0, 0);
    frame[n - 1] ^= 0x40; /* a payload bit flipped */
    brisk_stack_input(st, f.dev, frame, n, 1);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.Udp6InCsumErrors, 1);
    assert_int_equal(c.Udp6InErrors, 1);
    assert_int_equal(c.Udp6InDatagrams, 0);
    assert_int_equal(c.UdpInCsumErrors + c.UdpInErrors, 0); /* IPv4's MIB untouched */
    assert_int_equal(u->rq_len, 0);
    assert_int_equal(f.ntx, 0);
    /* The same frame, vouched for by the device, is taken as it is (offload as over IPv4). */
    brisk_stack_input_flags(st, f.dev, frame, n, BRISK_RX_CSUM_VALID, 2);
    assert_int_equal(u->rq_len, 1);
    /* A zero checksum field: dropped with or without the device's word, for an open or a closed port. */
    n = udp6_frame(frame, G_PEER, 1, G_US, 7000, data, sizeof(data), NULL, 0, 0);
    brisk_put16(frame + 54 + 6, 0);
    brisk_stack_input(st, f.dev, frame, n, 3);
    brisk_stack_input_flags(st, f.dev, frame, n, BRISK_RX_CSUM_VALID, 4);
    brisk_put16(frame + 54 + 2, 7999); /* no socket there: the checksum is judged first */
    brisk_stack_input(st, f.dev, frame, n, 5);
    c = counters(st);
    assert_int_equal(u->rq_len, 1);
    assert_int_equal(c.Udp6InCsumErrors, 4);
    assert_int_equal(c.Udp6InErrors, 4);
    assert_int_equal(c.Udp6NoPorts, 0);
    assert_int_equal(f.ntx, 0);
    /* Malformed: a length field beyond the payload, and one below 8; bytes after the length field's end
     * are not UDP's and are ignored. */
    n = udp6_frame(frame, G_PEER, 1, G_US, 7000, data, 20, NULL, 0, 0);
    brisk_put16(frame + 54 + 4, 40);
    brisk_stack_input_flags(st, f.dev, frame, n, BRISK_RX_CSUM_VALID, 6);
    brisk_put16(frame + 54 + 4, 7);
    brisk_stack_input_flags(st, f.dev, frame, n, BRISK_RX_CSUM_VALID, 6);
    c = counters(st);
    assert_int_equal(c.Udp6InErrors, 6);
    assert_int_equal(c.Udp6InCsumErrors, 4);
    assert_int_equal(u->rq_len, 1);
    brisk_udp_close(u);
    free_stack(st, &f);
}

/* The one ICMPv6 error the stack sent: checked against type, code, source and destination; returns the
 * quote. */
static const uint8_t *icmp6_out(struct fakedev *f, uint8_t type, uint8_t code, size_t *qlen)
{
    size_t count, l4;
    struct brisk_ipv6_repr ip;
    const uint8_t *m = tx6(f, BRISK_IP_PROTO_ICMPV6, 0, &count, &ip, &l4);
    assert_int_equal(count, 1);
    assert_memory_equal(ip.src, G_US, 16);
    assert_memory_equal(ip.dst, G_PEER, 16);
    struct brisk_icmp6_repr r;
    assert_true(brisk_icmp6_parse(m, l4, ip.src, ip.dst, &r) >= 0); /* its checksum too */
    assert_int_equal(r.type, type);
    assert_int_equal(r.code, code);
    *qlen = r.payload_len;
    return r.payload;
}

/* A closed port: ICMPv6 port unreachable (RFC 4443 §3.1 code 4) quoting the packet whole, extension
 * headers included; none for a multicast destination (§2.4 (e.2)); the error bucket bounds a flood. */
static void test_ipv6_port_unreachable_out(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack6(&f, 1);
    uint8_t data[30] = {9}, frame[300];
    size_t n = udp6_frame(frame, G_PEER, 1234, G_US, 53, data, sizeof(data), NULL, 0, 0);
    brisk_stack_input(st, f.dev, frame, n, 1);
    size_t qlen;
    const uint8_t *q = icmp6_out(&f, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, &qlen);
    assert_int_equal(qlen, 40 + 8 + sizeof(data));
    assert_memory_equal(q, frame + 14, qlen);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.Udp6NoPorts, 1);
    assert_int_equal(c.Icmp6OutDestUnreachs, 1);
    assert_int_equal(c.UdpNoPorts + c.IcmpOutDestUnreachs, 0);
    fakedev_clear(&f);
    /* After a destination options header (a PadN option): the quote starts at the fixed header still. */
    uint8_t dopt[8] = {BRISK_IP_PROTO_UDP, 0, 1, 4, 0, 0, 0, 0};
    n = udp6_frame(frame, G_PEER, 1234, G_US, 53, data, sizeof(data), dopt, 8, BRISK_IP_PROTO_DSTOPTS);
    brisk_stack_input(st, f.dev, frame, n, BRISK_NSEC_PER_SEC);
    q = icmp6_out(&f, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, &qlen);
    assert_int_equal(qlen, 40 + 8 + 8 + sizeof(data));
    assert_memory_equal(q, frame + 14, qlen);
    fakedev_clear(&f);
    /* To all-nodes: counted, never answered. */
    n = udp6_frame(frame, G_PEER, 1234, ALL_NODES, 53, data, sizeof(data), NULL, 0, 0);
    brisk_stack_input(st, f.dev, frame, n, 2 * BRISK_NSEC_PER_SEC);
    assert_int_equal(f.ntx, 0);
    c = counters(st);
    assert_int_equal(c.Udp6NoPorts, 3);
    assert_int_equal(c.Icmp6OutDestUnreachs, 2);
    /* ... while a socket on :: takes the multicast datagram. */
    static const uint8_t any6[16];
    brisk_udp *m = bound6(st, any6, 53);
    brisk_stack_input(st, f.dev, frame, n, 3 * BRISK_NSEC_PER_SEC);
    assert_int_equal(m->rq_len, 1);
    brisk_udp_close(m);
    /* The ICMPv6 error bucket (its own, icmp_ratelimit) bounds a flood of datagrams to closed ports. */
    n = udp6_frame(frame, G_PEER, 1234, G_US, 54, data, sizeof(data), NULL, 0, 0);
    uint64_t before = counters(st).Icmp6OutDestUnreachs;
    for (int i = 0; i < 100; i++)
        brisk_stack_input(st, f.dev, frame, n, 10 * BRISK_NSEC_PER_SEC);
    c = counters(st);
    assert_true(c.Icmp6OutDestUnreachs - before < 100);
    assert_int_equal(c.Icmp6OutDestUnreachs - before + c.Icmp6OutRateLimited, 100);
    assert_int_equal(c.IcmpOutRateLimited, 0);
    /* Unicast to us in a frame to the all-nodes MAC (33:33:00:00:00:01): counted, never answered
     * (§2.4 (e.3)), even with tokens in the bucket again. */
    n = udp6_frame(frame, G_PEER, 1234, G_US, 55, data, sizeof(data), NULL, 0, 0);
    memcpy(frame, (uint8_t[6]){0x33, 0x33, 0, 0, 0, 1}, 6);
    fakedev_clear(&f);
    uint64_t noports = counters(st).Udp6NoPorts;
    brisk_stack_input(st, f.dev, frame, n, 60 * BRISK_NSEC_PER_SEC);
    assert_int_equal(f.ntx, 0);
    assert_int_equal(counters(st).Udp6NoPorts, noports + 1);
    free_stack(st, &f);
}

/* Injects an ICMPv6 error from the peer quoting the k-th UDP packet the stack sent. */
static void inject_icmp6(brisk_stack *st, struct fakedev *f, size_t k, uint8_t type, uint8_t code,
                         uint32_t info, uint64_t now)
{
    struct brisk_ipv6_repr ip;
    size_t l4;
    const uint8_t *dg = tx6(f, BRISK_IP_PROTO_UDP, k, NULL, &ip, &l4);
    assert_non_null(dg);
    const uint8_t *pkt = dg - 40;
    size_t plen = 40 + l4;
    if (plen > BRISK_ICMP6_QUOTE_MAX)
        plen = BRISK_ICMP6_QUOTE_MAX;
    uint8_t msg[1300], frame[1400];
    struct brisk_icmp6_repr r = {.type = type, .code = code, .payload = pkt, .payload_len = plen};
    if (type == BRISK_ICMP6_PKT_TOO_BIG)
        r.mtu = info;
    else if (type == BRISK_ICMP6_PARAM_PROB)
        r.pointer = info;
    size_t n = brisk_icmp6_emit(msg, &r, G_PEER, G_US);
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x01};
    n = fakedev_ipv6_frame(frame, mac, peer_mac, G_PEER, G_US, BRISK_IP_PROTO_ICMPV6, 64, msg, n);
    brisk_stack_input(st, f->dev, frame, n, now);
}

/* ICMPv6 errors about a connected socket's datagrams, as Linux's icmpv6_err_convert maps them: the hard ones
 * reported once (port unreachable ECONNREFUSED, ...), the soft ones not. */
static void test_ipv6_connrefused(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack6(&f, 1);
    int err;
    brisk_udp *u = brisk_udp_socket(st, &err);
    struct evlog log = {0};
    brisk_udp_set_callback(u, ev_cb, &log);
    struct brisk_addr peer = addr6(G_PEER);
    assert_int_equal(brisk_udp_connect(u, &peer, 9999), BRISK_OK);
    struct brisk_tuple t;
    brisk_udp_tuple(u, &t);
    static const uint8_t any6[16];
    struct brisk_addr a_any6 = addr6(any6);
    assert_true(brisk_addr_equal(&t.laddr, &a_any6)); /* autobound to :: */
    assert_true(brisk_addr_equal(&t.raddr, &peer));
    assert_int_equal(brisk_udp_send(u, "hello", 5, 1), 5);
    size_t count;
    assert_non_null(tx6(&f, BRISK_IP_PROTO_UDP, 0, &count, NULL, NULL));
    assert_int_equal(count, 1);
    /* Soft errors (no route, address unreachable, time exceeded) are not reported. */
    inject_icmp6(st, &f, 0, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_NOROUTE, 0, 2);
    inject_icmp6(st, &f, 0, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_ADDR, 0, 2);
    inject_icmp6(st, &f, 0, BRISK_ICMP6_TIME_EXCEEDED, 0, 0, 2);
    assert_int_equal(log.events, 0);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    struct brisk_counters c = counters(st);
    assert_int_equal(c.Icmp6InDestUnreachs, 2);
    assert_int_equal(c.Icmp6InTimeExcds, 1);
    /* A quote naming another port of the peer's is no news of ours (Icmp6InErrors). */
    uint64_t inerr = c.Icmp6InErrors;
    uint8_t *dst_port = (uint8_t *)tx6(&f, BRISK_IP_PROTO_UDP, 0, NULL, NULL, NULL) + 2;
    brisk_put16(dst_port, 9998);
    inject_icmp6(st, &f, 0, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, 0, 3);
    assert_int_equal(log.events, 0);
    assert_int_equal(counters(st).Icmp6InErrors, inerr + 1);
    brisk_put16(dst_port, 9999);
    /* Port unreachable: ECONNREFUSED, once. */
    inject_icmp6(st, &f, 0, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, 0, 4);
    assert_true(log.events & BRISK_EV_ERROR);
    assert_true(brisk_udp_poll(u) & BRISK_POLL_ERR);
    uint8_t buf[16];
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_CONNREFUSED);
    assert_int_equal(brisk_udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), BRISK_ERR_AGAIN);
    /* Administratively prohibited, policy, reject route: Linux's EACCES (BRISK_ERR_UNREACH); parameter
     * problem EPROTO; each read by the next send. */
    static const struct {
        uint8_t type, code;
        int err;
    } hard[] = {
        {BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_ADMIN, BRISK_ERR_UNREACH},
        {BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_POLICY, BRISK_ERR_UNREACH},
        {BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_REJECT, BRISK_ERR_UNREACH},
        {BRISK_ICMP6_DEST_UNREACH, 9, BRISK_ERR_PROTO},
        {BRISK_ICMP6_PARAM_PROB, BRISK_IPV6_PP_NEXTHDR, BRISK_ERR_PROTO},
        {BRISK_ICMP6_PARAM_PROB, 0, BRISK_ERR_PROTO},
    };
    for (size_t i = 0; i < sizeof(hard) / sizeof(hard[0]); i++) {
        inject_icmp6(st, &f, 0, hard[i].type, hard[i].code, 6, 5 + i);
        assert_int_equal(brisk_udp_send(u, "again", 5, 5 + i), hard[i].err);
        assert_int_equal(brisk_udp_send(u, "again", 5, 5 + i), 5);
    }
    /* Disconnected, the socket hears no more of it (Linux without IPV6_RECVERR). */
    struct brisk_addr unspec = {.family = BRISK_AF_UNSPEC};
    assert_int_equal(brisk_udp_connect(u, &unspec, 0), BRISK_OK);
    log.events = 0;
    inject_icmp6(st, &f, 0, BRISK_ICMP6_DEST_UNREACH, BRISK_ICMP6_UNREACH_PORT, 0, 20);
    assert_int_equal(log.events, 0);
    assert_int_equal(brisk_udp_error(u), BRISK_OK);
    brisk_udp_close(u);
    free_stack(st, &f);
}

/* Sends over IPv6: the packet on the wire (source, traffic class, checksum), the family rules, MSGSIZE at
 * the device MTU less 48, and at the path MTU a Packet Too Big taught (1280 at least, RFC 8201 §4). */
static void test_ipv6_send(void **state)
{
    (void)state;
    struct fakedev f;
    brisk_stack *st = new_stack6(&f, 1);
    brisk_udp *u = bound6(st, G_US, 4000);
    assert_int_equal(brisk_udp_setsockopt(u, BRISK_SO_TOS, 0x28), BRISK_OK);
    struct brisk_addr peer = addr6(G_PEER), peer4 = brisk_addr_v4(PEER);
    static uint8_t data[1500];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i ^ 0x5a);
    assert_int_equal(brisk_udp_sendto(u, data, 1452, &peer, 53, 1), 1452);
    assert_int_equal(brisk_udp_sendto(u, data, 1453, &peer, 53, 1), BRISK_ERR_MSGSIZE); /* never fragmented */
    assert_int_equal(brisk_udp_sendto(u, data, 0, &peer, 53, 1), 0);
    assert_int_equal(brisk_udp_sendto(u, data, 1, &peer4, 53, 1), BRISK_ERR_INVAL); /* bound to IPv6 */
    struct brisk_addr far = addr6(G_PEER);
    far.u.v6[3] = 0xb9; /* 2001:db9::2: off-link, and no router */
    assert_int_equal(brisk_udp_sendto(u, data, 1, &far, 53, 1), BRISK_ERR_NOROUTE);
    size_t count;
    tx6(&f, BRISK_IP_PROTO_UDP, 0, &count, NULL, NULL);
    assert_int_equal(count, 2);
    for (size_t k = 0; k < 2; k++) {
        struct brisk_ipv6_repr ip;
        size_t l4;
        const uint8_t *dg = tx6(&f, BRISK_IP_PROTO_UDP, k, NULL, &ip, &l4);
        assert_memory_equal(ip.src, G_US, 16);
        assert_memory_equal(ip.dst, G_PEER, 16);
        assert_int_equal(ip.traffic_class, 0x28);
        assert_int_equal(ip.hop_limit, 64);
        struct brisk_udp_repr r;
        assert_int_equal(brisk_udp_parse6(dg, l4, ip.src, ip.dst, 1, &r), 8);
        assert_int_not_equal(r.csum, 0);
        assert_int_equal(r.sport, 4000);
        assert_int_equal(r.dport, 53);
        assert_int_equal(r.payload_len, k == 0 ? 1452 : 0);
        assert_memory_equal(r.payload, data, r.payload_len);
    }
    struct brisk_counters c = counters(st);
    assert_int_equal(c.Udp6OutDatagrams, 2);
    assert_int_equal(c.UdpOutDatagrams, 0);
    /* Packet Too Big for the peer: the path MTU is 1280, so 1232 bytes of payload. */
    inject_icmp6(st, &f, 0, BRISK_ICMP6_PKT_TOO_BIG, 0, 1280, 2);
    c = counters(st);
    assert_int_equal(c.Icmp6InPktTooBigs, 1);
    assert_int_equal(c.PmtuLowered, 1);
    assert_int_equal(brisk_udp_sendto(u, data, 1233, &peer, 53, 3), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_sendto(u, data, 1232, &peer, 53, 3), 1232);
    /* One reporting less than IPv6's minimum MTU leaves 1280 (RFC 8201 §4). */
    inject_icmp6(st, &f, 0, BRISK_ICMP6_PKT_TOO_BIG, 0, 600, 4);
    assert_int_equal(brisk_udp_sendto(u, data, 1232, &peer, 53, 5), 1232);
    brisk_udp_close(u);

    /* A connected socket is told EMSGSIZE by the Packet Too Big, once (Linux, IPV6_MTU_DISCOVER "want"). */
    struct fakedev g;
    brisk_stack *st2 = new_stack6(&g, 2);
    int err;
    brisk_udp *cu = brisk_udp_socket(st2, &err);
    assert_int_equal(brisk_udp_connect(cu, &peer, 53), BRISK_OK);
    assert_int_equal(brisk_udp_send(cu, data, 1452, 1), 1452);
    inject_icmp6(st2, &g, 0, BRISK_ICMP6_PKT_TOO_BIG, 0, 1400, 2);
    assert_int_equal(brisk_udp_send(cu, data, 1352, 3), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_send(cu, data, 1353, 3), BRISK_ERR_MSGSIZE); /* over 1400 - 48 */
    assert_int_equal(brisk_udp_send(cu, data, 1352, 3), 1352);
    /* A socket bound to :: sends both families; one bound to an IPv4 address only IPv4. */
    static const uint8_t any6[16];
    brisk_udp *d = bound6(st2, any6, 4001);
    assert_int_equal(brisk_udp_sendto(d, "4", 1, &peer4, 53, 4), 1);
    assert_int_equal(brisk_udp_sendto(d, "6", 1, &peer, 53, 4), 1);
    brisk_udp *b4 = bound(st2, US, 4002);
    assert_int_equal(brisk_udp_sendto(b4, "6", 1, &peer, 53, 4), BRISK_ERR_AFNOSUPPORT);
    assert_int_equal(brisk_udp_connect(b4, &peer, 53), BRISK_ERR_AFNOSUPPORT);
    c = counters(st2);
    assert_int_equal(c.UdpOutDatagrams, 1);
    assert_int_equal(c.Udp6OutDatagrams, 3);
    brisk_udp_close(cu);
    brisk_udp_close(d);
    brisk_udp_close(b4);
    free_stack(st2, &g);
    free_stack(st, &f);
}

/* Two simulated hosts with both families on one link (as tests/sim/test_tcp6.c's rig): a's 10.0.0.1 and
 * 2001:db8::1, b's 10.0.0.2 and 2001:db8::2; neighbours found by ARP and ND. */
static const struct brisk_addr A6 = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
static const struct brisk_addr B6 = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};

struct rig6 {
    brisk_sim_world *w;
    brisk_sim_host *a, *b;
    brisk_sim_port *pa, *pb;
};

static void rig6_open(struct rig6 *r, uint64_t seed, uint32_t caps, const struct brisk_sim_link_config *lc_in,
                      const char *pcap)
{
    memset(r, 0, sizeof(*r));
    r->w = brisk_sim_world_new(seed);
    r->a = brisk_sim_host_add(r->w, "a", NULL);
    r->b = brisk_sim_host_add(r->w, "b", NULL);
    r->pa = brisk_sim_nic_add_ip(r->a, SIMNET_A_IP, 24, caps);
    r->pb = brisk_sim_nic_add_ip(r->b, SIMNET_B_IP, 24, caps);
    assert_non_null(r->pa);
    assert_non_null(r->pb);
    struct brisk_sim_link_config lc;
    if (lc_in)
        lc = *lc_in;
    else
        brisk_sim_link_config_symmetric(&lc, 1000000000ull, 50 * BRISK_NSEC_PER_USEC);
    assert_non_null(brisk_sim_link_connect(r->w, r->pa, r->pb, &lc));
    if (pcap)
        assert_int_equal(brisk_sim_capture(r->pa, pcap), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pa), &A6, 64), BRISK_OK);
    assert_int_equal(brisk_netdev_add_addr(brisk_sim_port_netdev(r->pb), &B6, 64), BRISK_OK);
}

/* Echo over both families: b's server on [::]:7 echoes each datagram to its sender; a's clients, one
 * connected to [2001:db8::2]:7 and one to 10.0.0.2:7, take turns sending datagrams of 0..1452 bytes, each
 * after the last one's echo, and compare them byte for byte and their sender's address. */
struct echo6 {
    brisk_sim_world *w;
    brisk_sim_host *a, *b;
    brisk_udp *srv, *cli[2]; /* cli[0] over IPv6, cli[1] over IPv4 */
    uint8_t sent[1472];
    size_t sent_len;
    int round, rounds, done, bad;
};

static void echo6_send(struct echo6 *e, uint64_t now)
{
    int v4 = e->round & 1;
    size_t max = v4 ? 1472 : 1452;
    e->sent_len = (size_t)(e->round * 977) % (max + 1);
    for (size_t i = 0; i < e->sent_len; i++)
        e->sent[i] = (uint8_t)(i * 31 + (size_t)e->round);
    if (brisk_udp_send(e->cli[v4], e->sent, e->sent_len, now) != (int64_t)e->sent_len)
        e->bad++;
    brisk_sim_host_kick(e->a);
}

static void srv6_cb(void *ctx, brisk_udp *u, unsigned events, uint64_t now)
{
    struct echo6 *e = ctx;
    if (!(events & BRISK_EV_READABLE))
        return;
    uint8_t buf[1500];
    struct brisk_addr from;
    uint16_t port;
    int64_t n;
    while ((n = brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, NULL)) >= 0)
        if (brisk_udp_sendto(u, buf, (size_t)n, &from, port, now) != n)
            e->bad++;
    brisk_sim_host_kick(e->b);
}

static void cli6_cb(void *ctx, brisk_udp *u, unsigned events, uint64_t now)
{
    struct echo6 *e = ctx;
    if (!(events & BRISK_EV_READABLE))
        return;
    uint8_t buf[1500];
    struct brisk_addr from;
    uint16_t port;
    unsigned flags;
    int64_t n = brisk_udp_recvfrom(u, buf, sizeof(buf), &from, &port, &flags);
    int v4 = e->round & 1;
    struct brisk_addr want = v4 ? brisk_addr_v4(SIMNET_B_IP) : B6;
    if (u != e->cli[v4] || n != (int64_t)e->sent_len || memcmp(buf, e->sent, e->sent_len) ||
        !brisk_addr_equal(&from, &want) || port != 7 || flags)
        e->bad++;
    if (++e->round == e->rounds) {
        e->done = 1;
        return;
    }
    echo6_send(e, now);
}

static int echo6_done(void *ctx)
{
    return ((struct echo6 *)ctx)->done;
}

static void run_echo6(uint32_t caps, uint64_t seed, const char *pcap)
{
    static struct echo6 e;
    memset(&e, 0, sizeof(e));
    struct rig6 r;
    rig6_open(&r, seed, caps, NULL, pcap);
    e.w = r.w;
    e.a = r.a;
    e.b = r.b;
    e.rounds = 400;
    brisk_stack *sa = brisk_sim_host_stack(r.a), *sb = brisk_sim_host_stack(r.b);
    int err;
    e.srv = brisk_udp_socket(sb, &err);
    static const uint8_t any6[16];
    struct brisk_addr any = addr6(any6), b4 = brisk_addr_v4(SIMNET_B_IP);
    assert_int_equal(brisk_udp_bind(e.srv, &any, 7), BRISK_OK);
    brisk_udp_set_callback(e.srv, srv6_cb, &e);
    for (int i = 0; i < 2; i++) {
        e.cli[i] = brisk_udp_socket(sa, &err);
        assert_int_equal(brisk_udp_connect(e.cli[i], i ? &b4 : &B6, 7), BRISK_OK);
        brisk_udp_set_callback(e.cli[i], cli6_cb, &e);
    }
    echo6_send(&e, 0);
    assert_true(brisk_sim_run_while(r.w, echo6_done, &e, 10 * BRISK_NSEC_PER_SEC));
    assert_int_equal(e.bad, 0);
    struct brisk_counters ca, cb;
    brisk_stack_get_counters(sa, &ca);
    brisk_stack_get_counters(sb, &cb);
    assert_int_equal(ca.Udp6OutDatagrams, 200);
    assert_int_equal(ca.UdpOutDatagrams, 200);
    assert_int_equal(ca.Udp6InDatagrams, 200);
    assert_int_equal(ca.UdpInDatagrams, 200);
    assert_int_equal(cb.Udp6InDatagrams, 200); /* b's one socket on ::, each family in its own MIB */
    assert_int_equal(cb.UdpInDatagrams, 200);
    assert_int_equal(cb.Udp6OutDatagrams, 200);
    assert_int_equal(cb.UdpOutDatagrams, 200);
    assert_int_equal(ca.Udp6InErrors + cb.Udp6InErrors + ca.UdpInErrors + cb.UdpInErrors, 0);
    brisk_udp_close(e.srv);
    brisk_udp_close(e.cli[0]);
    brisk_udp_close(e.cli[1]);
    brisk_sim_world_free(r.w);
}

static void test_echo6_sim(void **state)
{
    (void)state;
    run_echo6(0, 11, NULL);
    run_echo6(BRISK_NETDEV_CAP_CSUM | BRISK_NETDEV_CAP_GSO, 12, NULL);
}

/* The same seed gives the same capture of the dual-stack echo, byte for byte. */
static void test_echo6_same_seed_same_pcap(void **state)
{
    (void)state;
    char p1[] = "/tmp/brisk-udp6-XXXXXX", p2[] = "/tmp/brisk-udp6-XXXXXX";
    int f1 = mkstemp(p1), f2 = mkstemp(p2);
    assert_true(f1 >= 0 && f2 >= 0);
    close(f1);
    close(f2);
    run_echo6(0, 13, p1);
    run_echo6(0, 13, p2);
    FILE *a = fopen(p1, "rb"), *b = fopen(p2, "rb");
    assert_non_null(a);
    assert_non_null(b);
    long n = 0;
    int ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        assert_int_equal(ca, cb);
        n++;
    } while (ca != EOF);
    assert_true(n > 400 * 60); /* 800 datagrams each way, and ND / ARP */
    fclose(a);
    fclose(b);
    unlink(p1);
    unlink(p2);
}

/* Between the two hosts: a datagram to a closed port of b's over IPv6 draws b's ICMPv6 port unreachable,
 * which a's connected socket reports as ECONNREFUSED. */
static void test_refused6_sim(void **state)
{
    (void)state;
    struct rig6 r;
    rig6_open(&r, 14, 0, NULL, NULL);
    brisk_stack *sa = brisk_sim_host_stack(r.a);
    int err;
    brisk_udp *u = brisk_udp_socket(sa, &err);
    struct evlog log = {0};
    brisk_udp_set_callback(u, ev_cb, &log);
    assert_int_equal(brisk_udp_connect(u, &B6, 9), BRISK_OK);
    assert_int_equal(brisk_udp_send(u, "anyone?", 7, 0), 7);
    brisk_sim_host_kick(r.a);
    brisk_sim_run_until(r.w, 100 * BRISK_NSEC_PER_MSEC);
    assert_true(log.events & BRISK_EV_ERROR);
    assert_int_equal(brisk_udp_error(u), BRISK_ERR_CONNREFUSED);
    struct brisk_counters ca, cb;
    brisk_stack_get_counters(sa, &ca);
    brisk_stack_get_counters(brisk_sim_host_stack(r.b), &cb);
    assert_int_equal(cb.Udp6NoPorts, 1);
    assert_int_equal(cb.Icmp6OutDestUnreachs, 1);
    assert_int_equal(ca.Icmp6InDestUnreachs, 1);
    brisk_udp_close(u);
    brisk_sim_world_free(r.w);
}

/* A path of MTU 1280 from a to b (a tunnel): the first larger packet is dropped and draws one Packet Too
 * Big (from b's address, as test_tcp6.c's tunnel); a's next send of that size is BRISK_ERR_MSGSIZE, and
 * 1232 bytes go through. */
struct tunnel6 {
    brisk_sim_world *w;
    brisk_sim_host *a;
    brisk_sim_port *pa;
    uint8_t ptb[14 + 40 + 8 + 1232];
    size_t ptb_len;
    int dropped;
};

static void tunnel6_inject(void *ctx, uint64_t now)
{
    struct tunnel6 *t = ctx;
    brisk_stack_input(brisk_sim_host_stack(t->a), brisk_sim_port_netdev(t->pa), t->ptb, t->ptb_len, now);
    brisk_sim_host_kick(t->a);
}

static int tunnel6_drop(void *ctx, const uint8_t *f, size_t len)
{
    struct tunnel6 *t = ctx;
    if (len <= 14 + 1280 || brisk_get16(f + 12) != BRISK_ETH_P_IPV6)
        return 0;
    if (t->dropped++)
        return 1;
    size_t q = len - 14 > 1232 ? 1232 : len - 14;
    uint8_t msg[8 + 1232];
    struct brisk_icmp6_repr r = {
        .type = BRISK_ICMP6_PKT_TOO_BIG, .mtu = 1280, .payload = f + 14, .payload_len = q};
    size_t n = brisk_icmp6_emit(msg, &r, f + 14 + 24, f + 14 + 8);
    t->ptb_len =
        fakedev_ipv6_frame(t->ptb, f + 6, f, f + 14 + 24, f + 14 + 8, BRISK_IP_PROTO_ICMPV6, 64, msg, n);
    assert_int_equal(brisk_sim_at(t->w, brisk_sim_now(t->w) + 20 * BRISK_NSEC_PER_USEC, tunnel6_inject, t),
                     BRISK_OK);
    return 1;
}

static void test_packet_too_big_sim(void **state)
{
    (void)state;
    static struct tunnel6 t;
    memset(&t, 0, sizeof(t));
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1000000000ull, 50 * BRISK_NSEC_PER_USEC);
    lc.ab.impair.drop_fn = tunnel6_drop;
    lc.ab.impair.drop_ctx = &t;
    struct rig6 r;
    rig6_open(&r, 15, 0, &lc, NULL);
    t.w = r.w;
    t.a = r.a;
    t.pa = r.pa;
    brisk_stack *sa = brisk_sim_host_stack(r.a), *sb = brisk_sim_host_stack(r.b);
    int err;
    brisk_udp *srv = brisk_udp_socket(sb, &err);
    assert_int_equal(brisk_udp_bind(srv, &B6, 7), BRISK_OK);
    brisk_udp *u = brisk_udp_socket(sa, &err);
    static uint8_t data[1452];
    assert_int_equal(brisk_udp_sendto(u, data, 1452, &B6, 7, 0), 1452);
    brisk_sim_host_kick(r.a);
    brisk_sim_run_until(r.w, 10 * BRISK_NSEC_PER_MSEC);
    assert_int_equal(t.dropped, 1);
    struct brisk_counters ca;
    brisk_stack_get_counters(sa, &ca);
    assert_int_equal(ca.Icmp6InPktTooBigs, 1);
    assert_int_equal(ca.PmtuLowered, 1);
    uint64_t now = brisk_sim_now(r.w);
    assert_int_equal(brisk_udp_sendto(u, data, 1452, &B6, 7, now), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_sendto(u, data, 1233, &B6, 7, now), BRISK_ERR_MSGSIZE);
    assert_int_equal(brisk_udp_sendto(u, data, 1232, &B6, 7, now), 1232);
    /* IPv4 to the same host is another path: its MTU is the device's. */
    struct brisk_addr b4 = brisk_addr_v4(SIMNET_B_IP);
    assert_int_equal(brisk_udp_sendto(u, data, 1452, &b4, 7, now), 1452);
    brisk_sim_host_kick(r.a);
    brisk_sim_run_until(r.w, now + 10 * BRISK_NSEC_PER_MSEC);
    assert_int_equal(t.dropped, 1);
    assert_int_equal(srv->rq_len, 1); /* the 1232-byte datagram; the IPv4 one is for no socket of b's */
    brisk_udp_close(u);
    brisk_udp_close(srv);
    brisk_sim_world_free(r.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_rules),
        cmocka_unit_test(test_ephemeral_ports),
        cmocka_unit_test(test_receive_truncate),
        cmocka_unit_test(test_queue_bound),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_port_unreachable_out),
        cmocka_unit_test(test_connrefused),
        cmocka_unit_test(test_send),
        cmocka_unit_test(test_writable_after_refusal),
        cmocka_unit_test(test_echo_sim),
        cmocka_unit_test(test_bind_families),
        cmocka_unit_test(test_ipv6_checksum),
        cmocka_unit_test(test_ipv6_port_unreachable_out),
        cmocka_unit_test(test_ipv6_connrefused),
        cmocka_unit_test(test_ipv6_send),
        cmocka_unit_test(test_echo6_sim),
        cmocka_unit_test(test_echo6_same_seed_same_pcap),
        cmocka_unit_test(test_refused6_sim),
        cmocka_unit_test(test_packet_too_big_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
