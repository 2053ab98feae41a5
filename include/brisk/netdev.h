/*
 * netdev.h — the driver API: how a device (simulated NIC, TAP, anything that moves Ethernet frames) plugs
 * into a brisk stack.
 *
 * A driver registers a device with brisk_netdev_add(): its MAC, MTU, capabilities, IPv4 address and a small
 * vtable. The stack hands the driver packets through ops->xmit(); the driver owns a packet from a successful
 * xmit until it reports the transmission complete with brisk_netdev_tx_done() — the moment the buffer may be
 * reused (the DMA is done, in hardware terms). TX completion is first-class in brisk: every decision about
 * how much data may sit below TCP is made from these reports, so a driver must report each packet exactly
 * once, and should report it when the hardware really is done with it, not earlier.
 *
 * Received frames go the other way through brisk_stack_input() (brisk.h).
 */
#ifndef BRISK_NETDEV_H
#define BRISK_NETDEV_H

#include "brisk/brisk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device capabilities. */
#define BRISK_NETDEV_CAP_CSUM 0x1u /* the device completes TCP/UDP checksums (CHECKSUM_PARTIAL packets) */
#define BRISK_NETDEV_CAP_GSO  0x2u /* the device segments TCP super-frames (gso_size > 0) into MSS frames */
/* The driver reports each completion when the packet has left the wire, so byte queue limits may size the
 * ring from completions (src/net/bql.c). Leave it off when completions come late for other reasons. */
#define BRISK_NETDEV_CAP_BQL 0x4u
/* The driver frees its senders of a packet as it takes it, whenever it completes it (Linux's tun device calls
 * skb_orphan in its xmit): TCP's bytes below it (TCP Small Queues, auto-corking) are released at the xmit. */
#define BRISK_NETDEV_CAP_ORPHAN 0x8u

/* Packet flags. */
#define BRISK_PKT_CSUM_PARTIAL                                                                               \
    0x1u /* the L4 checksum field holds the pseudo-header sum only; the device                               \
            must fold in the bytes from csum_start to the end and store the                                  \
            complement at csum_start + csum_offset */

/*
 * A packet buffer. Drivers read `data` / `len` and the offload fields; the rest belongs to the stack.
 * Buffers come from the stack's pool and have headroom in front of `data` for headers.
 */
typedef struct brisk_pkt {
    uint8_t *data;        /* first byte of the Ethernet frame */
    uint32_t len;         /* frame length in bytes (a GSO super-frame may exceed the MTU) */
    uint16_t flags;       /* BRISK_PKT_* */
    uint16_t gso_size;    /* 0, or the TCP payload bytes per wire segment of this super-frame */
    uint16_t csum_start;  /* offset from data of the header whose checksum is partial */
    uint16_t csum_offset; /* offset of the checksum field from csum_start */
    uint16_t gso_segs;    /* number of wire segments this packet becomes (1 without GSO) */
    uint16_t pool_class;  /* stack-private: which pool size class owns the buffer */
    uint32_t truesize;    /* memory charged for this buffer (payload + headers + per-buffer overhead) */
    uint64_t xmit_time;   /* `now` of the xmit; the stack measures TX-completion latency from it */
    uint64_t wire_done; /* stack-private: when the last frame should have left the wire (link speed known) */
    void *owner;        /* stack-private: the connection charged for this packet, or NULL */
    uint32_t seq, end_seq;  /* stack-private: TCP sequence range of the payload (reassembly, queues) */
    struct brisk_pkt *next; /* stack-private list link (free list, neighbour queue) */
    uint8_t *head;          /* stack-private: start of the buffer */
    uint32_t cap;           /* stack-private: bytes from head to the end of the buffer */
} brisk_pkt;

/*
 * Receive flags: what the device already checked about a frame it hands to brisk_stack_input_flags().
 *
 * BRISK_RX_CSUM_VALID — the TCP or UDP checksum need not be verified: the device verified it (Linux's
 * CHECKSUM_UNNECESSARY, virtio's VIRTIO_NET_HDR_F_DATA_VALID), or the frame never had one computed because it
 * was built on this host with checksum offload and handed over without leaving memory (virtio's NEEDS_CSUM on
 * receive, what a veth or loopback device passes along). The IPv4 header checksum is always verified. Pass
 * it only for frames the device vouches for: a frame flagged wrongly bypasses corruption detection.
 */
#define BRISK_RX_CSUM_VALID 0x1u

/* brisk_stack_input() with receive flags (BRISK_RX_*). */
int brisk_stack_input_flags(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len,
                            unsigned flags, uint64_t now);

/* One received frame of a batch (brisk_stack_input_batch). */
struct brisk_rx_frame {
    const uint8_t *data; /* the Ethernet frame */
    size_t len;
    unsigned flags; /* BRISK_RX_* */
};

/*
 * Hands the stack a batch of frames received together — what one poll of the device's receive ring found (a
 * NAPI poll, in Linux terms). The result is that of brisk_stack_input_flags() on each frame in order, except
 * that with the `gro` setting on (the default) a connection's in-order TCP segments whose headers agree but
 * for the sequence number are coalesced into one segment before TCP sees them (receive coalescing, Linux's
 * GRO; src/net/gro.c; each connection's segments stay in order, different connections' may pass each other):
 * TCP then does its per-segment work — lookup, ACK processing, the ACK it owes — once per coalesced segment
 * instead of once per frame. The ACKs a batch owes for in-order data are held to its end, after the
 * application has seen the data (so a draining reader's window update rides along): one cumulative ACK per
 * connection and batch; anything that needs an ACK at once (out of order data, a filled hole, a FIN) still
 * gets it at once. Frames must stay valid for the call only; nothing is kept. Socket events are delivered
 * once, after the batch. Returns BRISK_OK, or BRISK_ERR_INVAL (bad arguments, a frame NULL with a length,
 * unknown flags) without taking any frame.
 */
int brisk_stack_input_batch(brisk_stack *st, brisk_netdev *dev, const struct brisk_rx_frame *frames, size_t n,
                            uint64_t now);

struct brisk_netdev_ops {
    /* Takes ownership of `pkt` on BRISK_OK; the driver must later call brisk_netdev_tx_done(dev, pkt, t)
     * exactly once. Returns BRISK_ERR_BUSY (ring full; the stack keeps the packet) or another BRISK_ERR_*. */
    int (*xmit)(void *driver, brisk_pkt *pkt, uint64_t now);
};

struct brisk_netdev_config {
    char name[16];         /* for tools and logs ("eth0") */
    uint8_t mac[6];        /* unicast MAC */
    uint32_t mtu;          /* IPv4 MTU in bytes (68 ... 65535); frames are mtu + 14 */
    uint32_t caps;         /* BRISK_NETDEV_CAP_* */
    uint32_t gso_max_size; /* largest super-frame the device takes (bytes of IP datagram) when CAP_GSO */
    uint32_t ip;           /* IPv4 address, host byte order (0 = none) */
    uint8_t prefix_len;    /* 0 ... 32 */
};

/* Adds a device. `ops` and `driver` must outlive the stack. Returns the device, or NULL with *err set
 * (BRISK_ERR_INVAL bad config, BRISK_ERR_TOOMANY too many devices, BRISK_ERR_NOMEM). */
brisk_netdev *brisk_netdev_add(brisk_stack *st, const struct brisk_netdev_config *cfg,
                               const struct brisk_netdev_ops *ops, void *driver, int *err);

/* The driver reports that `pkt` (handed over by xmit at pkt->xmit_time) is done; the stack frees it. Reports
 * made with the same `now` form one completion event (one interrupt's worth) for byte queue limits. */
void brisk_netdev_tx_done(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now);

const struct brisk_netdev_config *brisk_netdev_config_of(const brisk_netdev *dev);

/* Adds a static IPv6 address with its on-link prefix (0 ... 128) to the device (up to 3 besides the
 * link-local one it has from its MAC). BRISK_OK, BRISK_ERR_INVAL (NULL, a prefix above 128, a multicast,
 * unspecified or loopback address), BRISK_ERR_AFNOSUPPORT (not IPv6, the ipv6 setting off, or a device MTU
 * below IPv6's 1280), BRISK_ERR_EXIST (the stack has it already), BRISK_ERR_TOOMANY. No duplicate address
 * detection is done (docs/ipv6.md). */
int brisk_netdev_add_addr(brisk_netdev *dev, const struct brisk_addr *addr, uint8_t prefix_len);
/* The device's n-th IPv6 address (0: the link-local one) and its prefix length: BRISK_OK, or
 * BRISK_ERR_NOENT past the last. */
int brisk_netdev_get_addr6(const brisk_netdev *dev, unsigned n, struct brisk_addr *addr, uint8_t *prefix_len);

/* The link speed in bit/s (ethtool's "speed"; 0 = unknown). With it the stack can tell how much of a
 * completion's latency was the packet waiting for the wire behind others (tx_done_overhead_ns). */
void brisk_netdev_set_speed(brisk_netdev *dev, uint64_t bps);

/*
 * Queue flow control from the driver (Linux's netif_stop_queue / netif_wake_queue). A driver whose ring has
 * just filled stops the queue, so the stack holds its data segments (reason "device") instead of building
 * one only for xmit to refuse it; it wakes the queue from its completion path once there is room, and the
 * held senders resume at the next brisk_stack_poll(). Pure ACKs are never held (they may still meet a full
 * ring). A driver that never calls these still works, at the price of the refused packets: an xmit that
 * returns BRISK_ERR_BUSY stops the queue until the device's next completion.
 */
void brisk_netdev_stop_queue(brisk_netdev *dev);
void brisk_netdev_wake_queue(brisk_netdev *dev);

/* Nonzero while the device's queue is stopped — by the driver, by a refused xmit, or by byte queue limits —
 * and TCP data waits for a completion or a wake. */
int brisk_netdev_stopped(const brisk_netdev *dev);

struct brisk_netdev_stats {
    uint64_t tx_packets, tx_bytes; /* accepted by xmit */
    uint64_t tx_busy;              /* xmit refused with BRISK_ERR_BUSY */
    uint64_t queue_stops;          /* the driver stopped the queue (brisk_netdev_stop_queue) */
    uint64_t tx_completed;         /* completions reported */
    uint64_t tx_inflight;          /* accepted and not yet completed */
    uint64_t tx_inflight_bytes;
    uint64_t rx_packets, rx_bytes;
    uint64_t
        rx_csum_valid;    /* frames passed with BRISK_RX_CSUM_VALID: TCP checksum not verified in software */
    uint64_t rx_gro_segs; /* coalesced segments handed to TCP (each joining two or more frames) */
    uint64_t rx_gro_merged;      /* frames joined into an earlier frame's segment: TCP segments saved */
    uint64_t tx_done_latency_ns; /* smoothed xmit -> completion latency (EWMA 1/8), 0 before a sample */
    uint64_t tx_done_latency_max_ns;
    /* Smoothed completion time minus the time the packet should have left the wire, from the link speed and
     * the bytes queued ahead of it: the completion delay the device adds, without the ring's own queueing.
     * Equal to tx_done_latency_ns while the speed is unknown. */
    uint64_t tx_done_overhead_ns;
    /* Byte queue limits (devices with CAP_BQL while the bql setting is on; zero otherwise). */
    uint64_t bql_limit;   /* current ring byte limit */
    uint64_t bql_stops;   /* times the queue stopped at the limit */
    uint64_t bql_grows;   /* limit raised after the ring starved */
    uint64_t bql_shrinks; /* limit lowered after a hold time of slack */
};
void brisk_netdev_get_stats(const brisk_netdev *dev, struct brisk_netdev_stats *out);

#ifdef __cplusplus
}
#endif
#endif
