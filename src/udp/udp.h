/*
 * udp.h (internal) — UDP (RFC 768), the second transport on the network layer, at TCP's rank (net.h lists
 * the layers): its sockets, the per-stack port table, and the entry points the stack registers in the IP
 * protocol table (input and icmp_error for IPv4, input6 and icmp6_error for IPv6) and calls from its event
 * dispatch (brisk_udp_deliver).
 *
 * A socket is an endpoint, not a connection: a local address and port (bound, or chosen at the first
 * connect or send) and, once connected, a remote one that filters what it receives and names where send
 * goes. Either family: the local address is 0.0.0.0 (IPv4's any address: IPv4 only), :: (any address of
 * either family, as a Linux IPv6 socket without IPV6_V6ONLY) or one of the stack's addresses (its family
 * only). Received datagrams wait in a bounded queue of pool packets (rcvbuf bytes of truesize, as Linux's
 * sk_rmem_alloc against sk_rcvbuf); sends go straight down to IP, nothing is kept.
 *
 * Files: socket.c (the calls, the port table), input.c (demultiplexing, the receive queue, ICMP errors in
 * and out), output.c (send).
 */
#ifndef BRISK_UDP_UDP_H
#define BRISK_UDP_UDP_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"
#include "core/evq.h"
#include "net/net.h"

#define BRISK_UDP_PORT_BUCKETS 256u   /* port table chains (by local port) */
#define BRISK_UDP_EPH_LO       32768u /* ephemeral ports, Linux's ip_local_port_range */
#define BRISK_UDP_EPH_HI       60999u

/* What a queued datagram's packet holds ahead of its payload: the sender. (A struct brisk_addr so that IPv6
 * needs no other layout.) */
struct brisk_udp_meta {
    struct brisk_addr from;
    uint16_t port;
    uint16_t pad;
};

struct brisk_udp {
    struct brisk_evq_node ev; /* the stack's event queue (proto 17) */
    struct brisk_net *net;
    struct brisk_udp *hnext;         /* port table chain */
    struct brisk_udp *anext, *aprev; /* every socket of the stack */
    struct brisk_addr laddr;         /* once bound: 0.0.0.0 (IPv4's any), :: (either family's) or ours */
    struct brisk_addr raddr;         /* the peer, once connected (rport) */
    uint16_t lport, rport;           /* 0: not bound (lport), not connected (rport) */
    uint8_t bound;                   /* in the port table */
    uint8_t tos;                     /* IP_TOS of what it sends */
    int error;                       /* pending error (an ICMP report), read once: BRISK_OK if none */
    uint8_t send_refused; /* a send failed for want of a buffer or device room: WRITABLE when there is */
    brisk_udp_fn fn;
    void *ctx;
    /* The receive queue: pool packets, each a struct brisk_udp_meta then the payload. */
    brisk_pkt *rq_head, *rq_tail;
    uint64_t rq_bytes; /* truesize of what is queued */
    uint32_t rq_len;   /* datagrams queued */
    uint32_t rcvbuf;   /* bound on rq_bytes (BRISK_SO_RCVBUF; the udp_rcvbuf setting) */
};

/* Per-stack UDP state: the ctx of the protocol table's entry 17 (udp_of). */
struct brisk_udp_table {
    struct brisk_net *net;
    struct brisk_evq *evq;
    struct brisk_udp *ports[BRISK_UDP_PORT_BUCKETS]; /* bound sockets by local port */
    struct brisk_udp *all;                           /* every socket (anext) */
    uint64_t nsocks;                                 /* sockets alive */
    uint64_t refused;                                /* sockets with send_refused set */
};

static inline struct brisk_udp_table *udp_of(const struct brisk_net *net)
{
    return (struct brisk_udp_table *)net->ip_proto[BRISK_IP_PROTO_UDP].ctx;
}

/* The protocol table entry (input.c). */
extern const struct brisk_ip_proto_ops brisk_udp_proto;

/* The stack's side (socket.c). */
struct brisk_udp_table *brisk_udp_init(struct brisk_net *net, struct brisk_evq *evq);
void brisk_udp_destroy(struct brisk_udp_table *t); /* frees every socket still open */
brisk_udp *udp_socket(struct brisk_udp_table *t, int *err);
/* The event queue's delivery of a UDP socket's node (the stack's dispatch). */
void brisk_udp_deliver(struct brisk_evq_node *n, uint64_t now);
/* After a TX completion made room: WRITABLE to every socket a send was refused to (the stack's poll). */
void brisk_udp_run_blocked(struct brisk_net *net);

/* Port table (socket.c). */
/* The socket a datagram from src:sport to dst:dport (addresses of one family, built by core/addr.h) goes
 * to: a connected socket whose peer it is, else one bound to dst, else one bound to its family's any
 * address, else one bound to :: (Linux's scoring); NULL if none. */
brisk_udp *udp_lookup(struct brisk_udp_table *t, const struct brisk_addr *dst, uint16_t dport,
                      const struct brisk_addr *src, uint16_t sport);
/* Binds u to laddr:port (0: an ephemeral port). BRISK_ERR_ADDRINUSE, BRISK_ERR_ADDRNOTAVAIL. */
int udp_bind_port(brisk_udp *u, const struct brisk_addr *laddr, uint16_t port);
/* Binds an unbound socket to an ephemeral port on :: (0.0.0.0 with the ipv6 setting off): Linux's autobind
 * at the first connect or send; a brisk socket has no family, so it stays open to both. */
int udp_autobind(brisk_udp *u);

static inline void udp_raise(brisk_udp *u, unsigned events)
{
    brisk_evq_raise(udp_of(u->net)->evq, &u->ev, events);
}

/* An address of the public API as the stack keeps it (core/addr.h's form, reserved bytes zero) into *out:
 * BRISK_AF_UNSPEC is 0.0.0.0, and an any address is refused unless any_ok. BRISK_ERR_INVAL (unknown family,
 * an any address), BRISK_ERR_AFNOSUPPORT (IPv6 with the ipv6 setting off) (socket.c). */
int udp_addr(const struct brisk_net *net, const struct brisk_addr *a, int any_ok, struct brisk_addr *out);
/* May u exchange datagrams with a peer of dst's family? BRISK_OK (unbound, or bound to ::),
 * BRISK_ERR_AFNOSUPPORT (an IPv6 peer for a socket bound to an IPv4 address, 0.0.0.0 included, as Linux's
 * AF_INET socket), BRISK_ERR_INVAL (an IPv4 peer for one bound to an IPv6 address, as brisk's TCP). */
int udp_family_ok(const brisk_udp *u, const struct brisk_addr *dst);

/* Frees every queued datagram (input.c). */
void udp_rq_purge(brisk_udp *u);

#endif
