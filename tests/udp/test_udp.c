/* tests for src/udp/: bind rules and ephemeral ports, receive and truncation, the bounded receive queue,
 * checksums, ICMP port unreachable both ways, path MTU, WRITABLE after a refused send (a fake device), and an
 * echo between two simulated hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "brisk/sim.h"
#include "stack/stack.h"
#include "support/fakedev.h"
#include "support/simnet.h"
#include "udp/udp.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"
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
    assert_int_equal(brisk_udp_bind(u, &v6, 5001), BRISK_ERR_AFNOSUPPORT);
    struct brisk_addr bad = {.family = 9};
    assert_int_equal(brisk_udp_bind(u, &bad, 5001), BRISK_ERR_INVAL);
    assert_int_equal(brisk_udp_bind(NULL, &a_any, 5001), BRISK_ERR_INVAL);
    /* Distinct specific addresses share a port; "any" then overlaps both. */
    assert_int_equal(brisk_udp_bind(u, &a_us, 6000), BRISK_OK);
    assert_int_equal(brisk_udp_bind(u, &a_us2, 6001), BRISK_ERR_INVAL); /* already bound */
    brisk_udp *u2 = bound(st, IP4(10, 0, 1, 1), 6000);
    brisk_udp *u3 = brisk_udp_socket(st, &err);
    assert_int_equal(brisk_udp_bind(u3, &a_any, 6000), BRISK_ERR_ADDRINUSE);
    /* v6 "any" is "any" (a dual-stack bind later; IPv4 now). */
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
    assert_int_equal(brisk_udp_sendto(u, data, 1, &v6, 53, 1), BRISK_ERR_AFNOSUPPORT);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
