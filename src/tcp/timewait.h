/*
 * timewait.h (internal) — TIME-WAIT records: what is left of a closed connection while it waits 2 MSL
 * (timewait.c).
 */
#ifndef BRISK_TCP_TIMEWAIT_H
#define BRISK_TCP_TIMEWAIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/timer.h"
#include "net/ip.h"

struct brisk_sock;
struct brisk_tcp;
struct brisk_tcp_repr;
struct brisk_ipv4_repr;

/* One connection in TIME-WAIT whose application is gone: what answering its peer for 2 MSL needs, and no
 * more (Linux's inet_timewait_sock). Carved from the stack's record slabs (struct tcp_tw_table). */
struct tcp_tw {
    struct tcp_tw *hnext;     /* hash chain (struct tcp_tw_table.buckets), or the pool's free list */
    struct tcp_tw *bnext;     /* the list of records whose ACK the device refused */
    struct brisk_net *net;    /* the timer callback's way back */
    struct brisk_timer timer; /* the 2 MSL expiry, moved here from the socket's misc timer */
    brisk_netdev *dev;        /* the socket's route (its source is id.laddr): its ACKs leave as the socket's did */
    struct brisk_addr nexthop;
    uint64_t ts_recent_age;   /* when TS.Recent was set (PAWS' 24-day validity, RFC 7323 §5.5) */
    uint64_t oow_ack_at;      /* last rate-limited answer to an invalid segment (tcp_invalid_ratelimit) */
    struct brisk_tuple id;    /* the socket's 4-tuple */
    uint32_t snd_max;      /* the sequence number of our ACKs */
    uint32_t rcv_nxt;      /* past the peer's FIN */
    uint32_t rcv_adv;      /* the right edge we advertised (RFC 9293's window test) */
    uint32_t rw_edge;      /* Linux's rcv_wup + rcv_wnd (tcp_rwin_acceptable's edge) */
    uint32_t wup;          /* Last.ACK.sent: which segments may set TS.Recent */
    uint32_t ts_recent;    /* RFC 7323 TS.Recent */
    uint32_t ts_offset;    /* our timestamp clock's offset */
    uint16_t window;       /* the window field of our ACKs (scaled) */
    uint8_t tos;           /* IP_TOS */
    uint8_t ts : 1;        /* timestamps negotiated */
    uint8_t buf_empty : 1; /* nothing was queued for the application (tcp_rwin_acceptable) */
    uint8_t refused : 1;   /* on the refused list: an ACK is owed */
};

/* The records of one stack: their hash (same keyed tuple hash as the connections'), their slabs and free
 * list, and the refused list. */
struct tcp_tw_table {
    struct tcp_tw **buckets;
    uint32_t nbuckets;
    uint32_t count;         /* records in the table */
    struct tcp_tw *free;    /* carved, unused records */
    struct tcp_tw *refused; /* records owing an ACK the device refused */
    void **slabs;
    size_t nslabs, slab_cap;
    uint64_t bytes;   /* carved: the whole memory the records take, slabs included */
    uint64_t settled; /* sockets replaced by a record */
    uint64_t kept;    /* TIME-WAIT sockets kept whole (see tcp_tw_settle) */
};

/* Per-record allocation size (the slab stride): issue 19 asks at most 256 bytes per TIME-WAIT connection,
 * allocator overhead included (a slab of 64 adds under a byte each). */
#define TCP_TW_SIZE ((sizeof(struct tcp_tw) + 7) & ~(size_t)7)
_Static_assert(TCP_TW_SIZE <= 256, "a TIME-WAIT record within 256 bytes");

int tcp_tw_init(struct brisk_tcp *t);
void tcp_tw_destroy(struct brisk_tcp *t);
/* Replaces orphan c in TIME-WAIT by a record and frees c, when nothing of c's but what a record holds can
 * still matter (see timewait.c); returns 1 if it did (c is gone), 0 if c stays whole. */
int tcp_tw_settle(struct brisk_sock *c, uint64_t now);
/* The record for a tuple, or NULL. */
struct tcp_tw *tcp_tw_lookup(struct brisk_net *net, const struct brisk_tuple *id);
/* A segment for a record's tuple: answered as the TIME-WAIT socket would have. */
void tcp_tw_input(struct tcp_tw *tw, const struct brisk_tcp_repr *seg, uint64_t now);
/* Resends the ACKs the device refused (from brisk_tcp_run_blocked). */
void tcp_tw_run_refused(struct brisk_net *net, uint64_t now);
/* Whether a record holds local port lport on an address overlapping laddr, of a socket IPv6-only or not
 * (tcp_laddr_overlap; a record's own address is never an any address). */
int tcp_tw_port_in_use(struct brisk_net *net, const struct brisk_addr *laddr, int v6only, uint16_t lport);

#endif
