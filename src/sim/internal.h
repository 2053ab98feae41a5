/*
 * internal.h — the simulator's private structures, shared by world.c, link.c, fault.c, nic.c, capture.c,
 * router.c and router_qdisc.c.
 *
 * Everything that happens in a world is an event: a small struct embedded in the object it concerns (a host's
 * wake-up, a NIC descriptor's completion, a NIC's coalescing timer, a frame's end of serialization or
 * delivery) or taken from a free list (brisk_sim_at callbacks). The queue is an indexed binary heap keyed by
 * (time, insertion sequence): each event knows its heap slot, so it can be moved or removed in O(log n) and
 * there are never stale entries to skip. Heap capacity is reserved whenever an event object is created, so
 * scheduling itself never allocates and never fails.
 *
 * Tests may include this header for white-box access (tests/sim/test_nic.c forges packets through the NIC's
 * xmit and intercepts completions with sim_nic.tx_done); nothing outside libbrisk_sim and its tests should.
 */
#ifndef BRISK_SIM_INTERNAL_H
#define BRISK_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "brisk/sim.h"
#include "core/rand.h"
#include "wire/csum.h"

#define SIM_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - (size_t)offsetof(type, member)))

/* Largest frame a raw port may send; NIC frames are bounded by pkt->len (uint32). */
#define SIM_RAW_FRAME_MAX (1u << 20)
/* Shortest Ethernet frame on the wire without FCS: a NIC pads shorter ones with zeros, as hardware does. */
#define SIM_ETH_ZLEN 60
/* Largest receive poll budget of a NIC (brisk_sim_nic_config.rx_batch). */
#define SIM_RX_BATCH_MAX 256u
/* Largest TX ring a NIC may have (each descriptor reserves a heap slot). */
#define SIM_TX_RING_MAX 65536u

/* Saturating addition of times: BRISK_TIME_NONE stays far away, and nothing wraps into the past. */
static inline uint64_t sim_time_add(uint64_t t, uint64_t d)
{
    return t > UINT64_MAX - d ? UINT64_MAX : t + d;
}

/* ---- events (world.c) ---- */
enum sim_ev_type {
    SIM_EV_CALL,      /* struct sim_call: a brisk_sim_at callback */
    SIM_EV_WAKE,      /* brisk_sim_host.wake: the stack's next deadline */
    SIM_EV_TX_END,    /* struct sim_frame: end of serialization on a link direction */
    SIM_EV_DELIVER,   /* struct sim_frame: arrival at the receiving port */
    SIM_EV_TXC,       /* struct sim_desc: TX completion of one descriptor */
    SIM_EV_TXC_BATCH, /* struct sim_nic: coalesced completion of every pending descriptor */
    SIM_EV_RX_POLL,   /* struct sim_nic: rx_coalesce_ns after a batch's first frame, its poll */
};

#define SIM_EV_IDLE UINT32_MAX  /* heap_idx of an event that is not queued */
#define SIM_EV_NOWQ 0x80000000u /* heap_idx flag: the event is in the now-queue, at this ring position */

struct sim_event {
    uint64_t time;     /* when it fires (valid while queued) */
    uint32_t heap_idx; /* slot in the heap, SIM_EV_NOWQ | ring slot in the now-queue, SIM_EV_IDLE when not
                          queued */
    uint8_t type;      /* enum sim_ev_type */
};

struct sim_heap_ent {
    uint64_t time; /* copies of the key, so comparisons do not chase pointers */
    uint64_t seq;  /* insertion sequence: ties run in scheduling order */
    struct sim_event *ev;
};

struct sim_call {
    struct sim_event ev;
    void (*fn)(void *ctx, uint64_t now);
    void *ctx;
    struct sim_call *next_free;
};

/* ---- frames in flight ---- */
struct sim_link_dir;
struct sim_desc;

struct sim_frame {
    struct sim_event ev;      /* TX_END while at the head of its direction's queue, then DELIVER */
    struct sim_frame *next;   /* queue order, or the world's free list */
    struct sim_link_dir *dir; /* direction it travels on */
    struct sim_desc *desc;    /* NIC descriptor it belongs to (NULL: raw port, or a duplicate) */
    uint32_t len;             /* bytes on the wire */
    uint32_t cap;             /* bytes available in data[] */
    uint8_t csum;             /* SIM_CSUM_*: who vouches for the TCP checksum */
    uint16_t csum_start, csum_offset;
    uint64_t enq_ns; /* when a router's queueing discipline accepted it (router_qdisc.c: the sojourn) */
    uint8_t data[];
};

/* The checksum of a frame whose sending NIC offloads it:
 *   PENDING  still the pseudo-header seed the stack left for the NIC — the NIC's "hardware" fills it in only
 *            when someone looks (brisk_sim_frame_csum);
 *   FILLED   filled in by the NIC model and untouched since;
 * either way the bytes are exactly what the sending stack built, so a receiving NIC with CAP_CSUM hands the
 * frame over as checksum-valid. NONE: anything else (a checksum computed in software by the sender, a raw
 * port's frame, a frame a link corrupted): the receiving stack verifies it. */
#define SIM_CSUM_NONE    0u
#define SIM_CSUM_PENDING 1u
#define SIM_CSUM_FILLED  2u

/* Completes a pending checksum: the frame is about to be seen (captured, corrupted, inspected, or delivered
 * to a device that checks). Zero padding after the packet adds nothing to the sum. */
static inline void brisk_sim_frame_csum(struct sim_frame *f)
{
    if (f->csum == SIM_CSUM_PENDING) {
        brisk_csum_complete_partial(f->data, f->len, f->csum_start, f->csum_offset);
        f->csum = SIM_CSUM_FILLED;
    }
}

/* ---- impairments (fault.c) ---- */
#define SIM_FATE_LOST    0x1u
#define SIM_FATE_CORRUPT 0x2u
#define SIM_FATE_DUP     0x4u
#define SIM_FATE_REORDER 0x8u

struct sim_fault {
    struct brisk_rand rng; /* this direction's own stream */
    uint64_t index;        /* 0-based index of the next frame that completes serialization */
    size_t mask_pos;       /* first loss_mask entry not yet passed */
    int ge_bad;            /* Gilbert-Elliott state: 1 = bad */
    uint32_t burst_left;   /* BURST: frames of the running loss burst still to drop */
    uint64_t burst_until;  /* BURST: frames that start after this are not part of the running burst */
};

/* ---- links (link.c) ---- */
struct sim_link_dir {
    brisk_sim_link *link;
    brisk_sim_port *src, *dst;
    struct brisk_sim_link_dir cfg;
    struct sim_frame *q_head, *q_tail; /* accepted, not yet done serializing; the head is on the wire */
    uint64_t q_bytes;
    uint32_t q_packets;
    struct sim_fault fault;
    struct brisk_sim_link_stats st;
};

struct brisk_sim_link {
    brisk_sim_world *w;
    uint32_t index;             /* creation order in the world: keys the random streams */
    struct sim_link_dir dir[2]; /* 0 = a -> b, 1 = b -> a */
    brisk_sim_link *next;       /* world's list */
};

/* ---- capture (capture.c) ---- */
struct sim_capture {
    FILE *f;
    char *buf;     /* stdio buffer: records are written without per-frame syscalls */
    uint64_t left; /* records still to write (UINT64_MAX: no limit) */
    uint32_t snap; /* bytes kept per record */
};

/* ---- NICs (nic.c) ---- */
struct sim_nic;

struct sim_desc {
    struct sim_event ev; /* TXC */
    struct sim_nic *nic;
    brisk_pkt *pkt;        /* owned by the NIC from xmit until completion; NULL when the slot is free */
    uint32_t frames_left;  /* wire frames not yet serialized or dropped (+1 while xmit is still cutting) */
    uint32_t nframes;      /* wire frames this packet became */
    struct sim_desc *next; /* free list or coalescing list */
};

struct sim_nic {
    brisk_sim_port *port;
    brisk_sim_host *host;
    brisk_netdev *dev;
    struct brisk_sim_nic_config cfg;
    struct sim_desc *descs; /* tx_ring descriptors */
    struct sim_desc *free_descs;
    struct sim_desc *pend_head, *pend_tail; /* COALESCE: finished, waiting to be reported */
    uint64_t pend_frames;                   /* wire frames in the pending descriptors */
    struct sim_event batch;                 /* COALESCE: releases every pending descriptor */
    uint8_t *scratch;                       /* GSO segment being built */
    size_t scratch_len;
    struct sim_desc *cutting;              /* descriptor whose packet brisk_gso_segment is cutting */
    struct sim_frame *rxq_head, *rxq_tail; /* rx_batch: arrived, waiting for the poll */
    uint32_t rxq_len;                       /* frames in it */
    struct sim_event rxpoll;                /* rx_coalesce_ns: the moderated poll's deadline */
    struct sim_nic *poll_next;             /* rx_batch: the world's list of NICs waiting to be polled */
    int poll_queued;
    struct brisk_rx_frame *rxv; /* rx_batch entries: one poll's frames for the stack */
    struct sim_frame **rxf;     /* and the frames they point into */
    uint64_t rx_polls;
    uint64_t tx_busy, tx_completions, tx_errors;
    uint32_t ring_used, ring_max_used;
    /* How completions are reported: brisk_netdev_tx_done, unless a white-box test intercepts them. */
    void (*tx_done)(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now);
};

/* ---- router queueing disciplines (router_qdisc.c) ---- */
struct sim_codel {
    uint64_t first_above; /* RFC 8289 first_above_time: 0 = the sojourn is not above target */
    uint64_t drop_next;   /* when the next drop is due while dropping */
    uint32_t count, lastcount;
    int dropping;
};

#define SIM_FQ_NONE 0u /* not on a list: empty and idle */
#define SIM_FQ_NEW  1u
#define SIM_FQ_OLD  2u

struct sim_fq_flow {
    struct sim_frame *head, *tail;
    uint64_t bytes;
    uint32_t packets;
    int32_t deficit;
    uint8_t list;      /* SIM_FQ_* */
    int32_t next;      /* next flow on its list, -1 = last */
    struct sim_codel codel;
};

struct sim_fq_list {
    int32_t head, tail; /* flow indices, -1 = empty */
};

struct sim_qdisc {
    struct brisk_sim_qdisc cfg; /* with the defaults filled in */
    uint32_t packets;           /* backlog */
    uint64_t bytes;
    struct sim_frame *head, *tail; /* drop-tail */
    struct sim_fq_flow *flows;     /* fq_codel: cfg.flows queues, allocated at setup */
    struct sim_fq_list new_flows, old_flows;
    uint64_t perturb;   /* the flow hash's key (RFC 8290 §4.1.1: a per-instance perturbation) */
    uint32_t maxpacket; /* largest frame seen: CoDel's MAXPACKET */
    struct brisk_sim_qdisc_stats st;
};

/* Fills in the defaults and allocates the flow queues. BRISK_OK, BRISK_ERR_INVAL or BRISK_ERR_NOMEM. */
int brisk_sim_qdisc_init(struct sim_qdisc *q, const struct brisk_sim_qdisc *cfg, uint64_t perturb);
/* Frees the queued frames and the flow queues. */
void brisk_sim_qdisc_destroy(struct sim_qdisc *q);
/* Takes ownership of f at time now (f->len and data set: an Ethernet frame). Drops go to the world's free
 * list and the counters. */
void brisk_sim_qdisc_enqueue(brisk_sim_world *w, struct sim_qdisc *q, struct sim_frame *f, uint64_t now);
/* The next frame to transmit at time now (CoDel's drops happen here), or NULL when the queue is empty. */
struct sim_frame *brisk_sim_qdisc_dequeue(brisk_sim_world *w, struct sim_qdisc *q, uint64_t now);
/* The fq_codel queue a frame hashes to (tests). */
uint32_t brisk_sim_qdisc_flow_of(const struct sim_qdisc *q, const uint8_t *frame, size_t len);

/* ---- routers (router.c, router6.c) ---- */
struct sim_rport {
    brisk_sim_router *r;
    brisk_sim_port *port;
    uint32_t index;
    uint8_t mac[6];
    uint32_t ip;
    uint8_t prefix_len;
    uint8_t has_ip6;     /* an IPv6 address was added (brisk_sim_router_port_add_addr6): IPv6 is forwarded */
    uint8_t prefix6_len;
    uint8_t ip6[16];     /* the port's global IPv6 address */
    uint8_t ll6[16];     /* its link-local address, from its MAC (RFC 4291 §2.5.6) */
    uint8_t mtu_icmp; /* a DF datagram (any IPv6 one) over mtu draws fragmentation needed / packet too big
                         (else: a black hole) */
    uint32_t mtu;     /* largest datagram sent (65535: no limit) */
    struct sim_qdisc q;
};
/* A frame arrives at a router port: the router takes ownership. */
void brisk_sim_router_rx(struct sim_rport *rp, struct sim_frame *f);
/* The port's link finished serializing a frame: the next one may go. */
void brisk_sim_router_tx_done(struct sim_rport *rp);
/* World teardown: frees the router's frames, ports' queues and itself; returns the next on the world's list. */
brisk_sim_router *brisk_sim_router_destroy(brisk_sim_router *r);

/* ---- ports and hosts ---- */
enum sim_port_kind { SIM_PORT_RAW, SIM_PORT_NIC, SIM_PORT_ROUTER };

struct brisk_sim_port {
    brisk_sim_world *w;
    enum sim_port_kind kind;
    char name[32];
    struct sim_link_dir *tx; /* direction this port transmits on; NULL until connected */
    struct sim_capture *cap; /* NULL unless capturing */
    brisk_sim_observe_fn obs; /* NULL unless observed (brisk_sim_port_observe) */
    void *obs_ctx;
    uint64_t tx_frames;      /* wire frames handed to the link */
    uint64_t rx_frames;      /* frames delivered to this port */
    brisk_sim_rx_fn rx;      /* raw ports */
    void *rx_ctx;
    struct sim_nic *nic;     /* NIC ports */
    struct sim_rport *rport; /* router ports */
    brisk_sim_port *next;    /* world's list */
};

struct brisk_sim_host {
    brisk_sim_world *w;
    char *name;
    brisk_stack *st;
    uint32_t index; /* creation order: keys the derived stack seed and default MACs */
    uint32_t nnics;
    struct sim_event wake; /* the one live wake-up, at the stack's next deadline */
    int dirty;             /* on the world's dirty list: poll after the current event */
    brisk_sim_host *next_dirty;
    brisk_sim_host *next; /* world's list */
};

struct brisk_sim_world {
    uint64_t seed;
    uint64_t now;
    uint64_t seq; /* next insertion sequence */
    struct sim_heap_ent *heap;
    uint32_t heap_len, heap_cap;
    /* Events scheduled for the current instant (most of them when links have no delay and completions are
     * immediate), in scheduling order: a ring of heap_cap slots, so it can hold every event there is. They
     * run after the heap's events for the same instant, which were all scheduled earlier (world.c). A
     * cancelled entry stays as a NULL hole. */
    struct sim_event **nowq;
    uint32_t nowq_head, nowq_len;
    uint64_t ev_objects; /* events that exist (queued or not): the heap never needs more slots */
    struct sim_call *free_calls;
    struct sim_frame *free_frames;
    size_t frame_cap; /* size of new frame buffers: the largest frame seen */
    brisk_sim_host *hosts, *hosts_tail;
    brisk_sim_port *ports, *ports_tail;
    brisk_sim_link *links, *links_tail;
    brisk_sim_router *routers, *routers_tail;
    uint32_t nhosts, nlinks, nrouters;
    brisk_sim_host *dirty_head, *dirty_tail;
    /* NICs with received frames waiting for a poll, which runs when nothing else is due at the instant. */
    struct sim_nic *poll_head, *poll_tail;
    int running;  /* inside brisk_sim_run_*: kicks are deferred to the end of the event */
    int flushing; /* polling dirty hosts: kicks join the list being drained */
    struct brisk_sim_stats stats;
};

/* ---- world.c ---- */
/* Queues `ev` at `t` (>= now), or moves it there if already queued; either way it gets a fresh sequence. */
void brisk_sim_sched(brisk_sim_world *w, struct sim_event *ev, uint64_t t);
/* Removes `ev` from the queue if queued. */
void brisk_sim_unsched(brisk_sim_world *w, struct sim_event *ev);
/* Makes room in the heap for `n` more event objects. BRISK_OK or BRISK_ERR_NOMEM. */
int brisk_sim_reserve(brisk_sim_world *w, uint64_t n);
/* A frame buffer of at least `len` bytes (len set), from the free list when possible; NULL when out of
 * memory. */
struct sim_frame *brisk_sim_frame_get(brisk_sim_world *w, size_t len);
void brisk_sim_frame_put(brisk_sim_world *w, struct sim_frame *f);
/* Grows the size of new frame buffers to at least `len` (a NIC's MTU + 14). */
void brisk_sim_frame_size_hint(brisk_sim_world *w, size_t len);

/* ---- link.c ---- */
/* Hands frame `f` (len set, desc set or NULL) to direction `d` at the current time; takes ownership. */
void brisk_sim_link_offer(struct sim_link_dir *d, struct sim_frame *f);
void brisk_sim_link_tx_end(brisk_sim_world *w, struct sim_frame *f);
void brisk_sim_link_deliver(brisk_sim_world *w, struct sim_frame *f);
/* Frees the frames queued on a link (world teardown). */
void brisk_sim_link_destroy(brisk_sim_world *w, brisk_sim_link *l);

/* ---- fault.c ---- */
/* BRISK_OK if every probability is in [0, 1], the loss model is known and the mask is sorted; else INVAL. */
int brisk_sim_fault_check(const struct brisk_sim_impair *im);
void brisk_sim_fault_init(struct sim_fault *f, uint64_t seed);
/* Decides the fate of the next frame to finish serializing (SIM_FATE_* bits), which was on the wire from
 * start to end; corrupts it in place. */
unsigned brisk_sim_fault_apply(struct sim_fault *f, const struct brisk_sim_impair *im, uint8_t *data,
                               size_t len, uint64_t start, uint64_t end);

/* ---- nic.c ---- */
/* The netdev xmit op of a simulated NIC (driver = struct sim_nic *). */
int brisk_sim_nic_xmit(void *driver, brisk_pkt *pkt, uint64_t now);
/* One wire frame of descriptor `d` finished serializing or was dropped at the queue, at the current time. */
void brisk_sim_nic_frame_done(struct sim_desc *d);
void brisk_sim_nic_on_txc(struct sim_desc *d);
void brisk_sim_nic_on_batch(struct sim_nic *n);
/* A frame arrives at the NIC: into the stack. */
/* A frame arrives at a NIC. Returns 1 when the NIC keeps it (it waits for a receive poll, which puts it),
 * 0 when it is done with it. */
int brisk_sim_nic_rx(struct sim_nic *n, struct sim_frame *f);
void brisk_sim_nic_on_rx_poll(struct sim_nic *n);
/* Puts a NIC on the world's poll list (once). */
void brisk_sim_poll_queue(brisk_sim_world *w, struct sim_nic *n);
/* World teardown: reports packets still held, then frees the NIC. */
void brisk_sim_nic_destroy(struct sim_nic *n);

/* ---- capture.c ---- */
void brisk_sim_capture_write(struct sim_capture *c, uint64_t t, const uint8_t *data, size_t len);
void brisk_sim_capture_close(struct sim_capture *c);

/* ---- hosts (world.c) ---- */
/* Marks the host for a poll and a deadline re-read after the current event (= brisk_sim_host_kick). */
void brisk_sim_host_touch(brisk_sim_host *h);

#endif
