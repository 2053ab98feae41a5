/*
 * tap.h — the TAP driver: a brisk stack on a Linux TAP device, so that its peer is the real kernel TCP stack.
 *
 * brisk_tap_open() opens /dev/net/tun with IFF_TAP | IFF_NO_PI | IFF_VNET_HDR and creates (TUNSETIFF) the
 * interface `ifname` in the caller's network namespace, registers it as a brisk netdev on the loop's stack
 * and its descriptor on the loop. The kernel side of the interface is then configured by the caller (or a
 * script: scripts/netns.sh); the descriptor stays valid when the interface is moved into another namespace
 * (`ip link set NAME netns NS`), which is how tests keep traffic inside a namespace of their own.
 *
 * Every frame on the descriptor carries a struct virtio_net_hdr (10 bytes, TUNSETVNETHDRSZ). With gso on,
 * TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4) lets the kernel take brisk's TCP super-frames (up to gso_max_size
 * bytes, described by gso_type TCPV4 / gso_size / csum_start / csum_offset) and hand brisk GRO'd super-frames
 * and frames whose checksum it left partial (VIRTIO_NET_HDR_F_NEEDS_CSUM); the driver completes such
 * checksums before brisk_stack_input, which then verifies every checksum as usual. With gso off, frames are
 * MTU-sized and fully checksummed both ways.
 *
 * TX completion (netdev.h): a packet is done when write() has copied it into the kernel — reported from the
 * driver's loop hook right after, never from inside xmit — or txc_delay_ns later, to reproduce a slow
 * completion path (seed 001's Xen netfront) on a real path. A write that fails with EAGAIN keeps the packet
 * in the driver's ring (tx_ring descriptors); a full ring makes xmit return BRISK_ERR_BUSY. The driver then
 * watches for writability, writes the backlog and completes it, which wakes the stack's refused senders.
 *
 * Faults: `fault` drops frames with a seeded probability in either direction (src/drivers/fault.c), to test
 * recovery against the kernel. A dropped TX packet counts as transmitted and completes normally.
 */
#ifndef BRISK_TAP_H
#define BRISK_TAP_H

#include "brisk/brisk.h"
#include "brisk/loop.h"
#include "brisk/netdev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seeded random frame loss, applied by the fault wrapper around the device. */
struct brisk_fault_config {
    double tx_loss; /* probability [0, 1] that a frame brisk transmits is dropped */
    double rx_loss; /* probability [0, 1] that a received frame is dropped before brisk_stack_input */
    uint64_t seed;  /* same seed => same drop decisions for the same frame sequence */
};

struct brisk_tap_config {
    char ifname[16];       /* interface name; "brisk%d" lets the kernel pick (brisk_tap_ifname) */
    uint8_t mac[6];        /* brisk's MAC; all zero = a locally administered MAC derived from ifname */
    uint32_t mtu;          /* IPv4 MTU (68 ... 65535), default 1500; also set on the interface */
    uint32_t ip;           /* brisk's IPv4 address, host byte order (required) */
    uint8_t prefix_len;    /* 1 ... 32, default 24 */
    uint32_t gateway;      /* default gateway, host order, 0 = none; must lie in ip/prefix_len */
    int gso;               /* 1 (default): TSO4 + checksum offload both ways; 0: plain MTU frames */
    uint32_t gso_max_size; /* largest IP datagram brisk hands the kernel with gso, default 65535 */
    uint32_t tx_ring;      /* packets written or waiting for write and not yet completed, default 256 */
    uint64_t txc_delay_ns; /* report each completion this long after write() returned, default 0 */
    uint32_t rx_budget;    /* frames read per readiness callback, default 64 */
    struct brisk_fault_config fault; /* default: no loss */
};

/* Fills `c` with the defaults above (ifname "brisk0", no IP). */
void brisk_tap_config_default(struct brisk_tap_config *c);

/* Parses "a.b.c.d/len" (len 1 ... 32; "/len" optional with *prefix_len left unchanged) for --ip options.
 * Returns BRISK_OK or BRISK_ERR_INVAL; outputs untouched on error. */
int brisk_tap_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix_len);

typedef struct brisk_tap brisk_tap;

/* Opens the TAP device, brings the interface up with cfg->mtu, registers the netdev (and the gateway) on
 * brisk_loop_stack(loop), and its descriptor and completion hook on `loop`. Returns NULL with *err set:
 * BRISK_ERR_INVAL (bad config; or opening /dev/net/tun or an ioctl failed — not root, no tun module, busy
 * name: `why` says which, with the system's error text), BRISK_ERR_NOMEM, BRISK_ERR_EXIST (ip already on the
 * stack), BRISK_ERR_TOOMANY (the stack's or loop's tables are full), BRISK_ERR_NOROUTE (gateway outside the
 * prefix). `why` (may be NULL) receives a one-line English reason of at most why_len bytes. */
brisk_tap *brisk_tap_open(brisk_loop *loop, const struct brisk_tap_config *cfg, int *err, char *why,
                          size_t why_len);

/* Unregisters the descriptor and hook from the loop, closes the descriptor (the kernel deletes the
 * interface) and frees the driver. The stack keeps a pointer to the driver: free the stack first
 * (packets still in the driver's ring belong to the stack's pool and go with it). NULL is a no-op. */
void brisk_tap_close(brisk_tap *t);

brisk_netdev *brisk_tap_netdev(const brisk_tap *t);
/* The interface name the kernel gave (resolves "brisk%d"). */
const char *brisk_tap_ifname(const brisk_tap *t);
/* The TAP descriptor (non-blocking), e.g. for tools that poll themselves. */
int brisk_tap_fd(const brisk_tap *t);

struct brisk_tap_stats {
    uint64_t rx_frames, rx_bytes; /* frames read from the descriptor (bytes without the vnet header) */
    uint64_t rx_gso_frames;       /* received super-frames (gso_type != NONE, GRO'd by the kernel) */
    uint64_t rx_csum_valid;       /* received frames the kernel vouched for (NEEDS_CSUM / DATA_VALID): their
                                     TCP checksum is not verified again (BRISK_RX_CSUM_VALID) */
    uint64_t rx_batches;          /* batches handed to the stack (brisk_stack_input_batch) */
    uint64_t rx_errors;           /* frames dropped: short, bad vnet header, csum offsets out of bounds */
    uint64_t rx_fault_drops;      /* frames dropped by the fault wrapper */
    uint64_t tx_frames, tx_bytes; /* frames written (bytes without the vnet header) */
    uint64_t tx_gso_frames;       /* super-frames written with gso_type TCPV4 */
    uint64_t tx_eagain;           /* writes that met a full kernel queue (packet kept in the ring) */
    uint64_t tx_busy;             /* xmit refused: ring full */
    uint64_t tx_errors;           /* writes that failed otherwise (packet dropped, completed) */
    uint64_t tx_fault_drops;      /* frames dropped by the fault wrapper */
    uint64_t tx_completions;      /* completions reported */
};
void brisk_tap_get_stats(const brisk_tap *t, struct brisk_tap_stats *out);

#ifdef __cplusplus
}
#endif
#endif
