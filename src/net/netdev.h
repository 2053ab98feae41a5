/*
 * netdev.h (internal) — a device as the stack holds it (struct brisk_netdev; drivers see only the opaque
 * handle of brisk/netdev.h), and the stack's side of the driver API: handing packets to a device.
 */
#ifndef BRISK_NET_NETDEV_H
#define BRISK_NET_NETDEV_H

#include "brisk/brisk.h"
#include "brisk/netdev.h"
#include "net/bql.h"

struct brisk_net;

/* IPv6 addresses per device: the link-local one (slot 0, from the MAC, while the ipv6 setting is on) and
 * the static ones brisk_netdev_add_addr gives it. */
#define BRISK_NETDEV_IP6_MAX 4

struct brisk_netdev_ip6 {
    uint8_t addr[16];
    uint8_t prefix_len; /* on-link prefix (RFC 4861 §5.1's prefix list, one per address) */
};

/* On-link prefixes learnt from router advertisements (RFC 4861 §6.3.4), per device. */
#define BRISK_NETDEV_PREFIX6_MAX 4

struct brisk_netdev_prefix6 {
    uint8_t prefix[16];
    uint8_t prefix_len; /* 0: slot unused */
    uint64_t expires;   /* UINT64_MAX: infinite valid lifetime */
};

struct brisk_netdev {
    struct brisk_net *net;          /* owner */
    struct brisk_netdev_config cfg; /* as registered */
    uint32_t mask;                  /* netmask of cfg.prefix_len, host order */
    const struct brisk_netdev_ops *ops;
    void *driver;
    struct brisk_netdev_stats stats;
    struct brisk_bql bql;  /* byte queue limits, when bql_on */
    uint64_t speed_bps;    /* link speed, 0 = unknown */
    uint64_t wire_ns_fp;   /* ns per byte on the wire at that speed, in units of 2^-16 ns */
    uint64_t wire_free_at; /* when the frames handed over so far should all have left the wire */
    uint8_t bql_on;
    uint8_t xoff;      /* stopped by BQL until a completion brings the ring under its limit */
    uint8_t drv_xoff;  /* stopped by the driver (brisk_netdev_stop_queue) until it wakes the queue */
    uint8_t busy_xoff; /* xmit refused a packet (BRISK_ERR_BUSY): stopped until the next completion */
    uint8_t nip6;      /* addresses in ip6[]: 0 when IPv6 is off or the MTU is below 1280 */
    struct brisk_netdev_ip6 ip6[BRISK_NETDEV_IP6_MAX];
    struct brisk_netdev_prefix6 prefix6[BRISK_NETDEV_PREFIX6_MAX];
};

/* Registers a device (brisk_netdev_add's body: the stack layer checks the handle and passes its net). */
brisk_netdev *brisk_netdev_register(struct brisk_net *net, const struct brisk_netdev_config *cfg,
                                    const struct brisk_netdev_ops *ops, void *driver, int *err);

/* Hands a finished frame to the device. Takes ownership of pkt in every case: on failure the packet is freed
 * and counted. Returns BRISK_OK or the driver's error (BRISK_ERR_BUSY when the ring is full). */
int brisk_netdev_xmit(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now);

/* The device whose prefix contains addr (longest prefix), or NULL. */
brisk_netdev *brisk_netdev_for_addr(struct brisk_net *net, uint32_t addr);

/* Nonzero when addr is the limited broadcast or dev's directed broadcast (prefixes up to /30). */
int brisk_netdev_is_broadcast(const brisk_netdev *dev, uint32_t addr);

/* Nonzero when addr is one of the stack's own addresses. */
int brisk_netdev_is_local(const struct brisk_net *net, uint32_t addr);

/* IPv6 (netdev.c). Nonzero when a is one of dev's addresses. */
int brisk_netdev_ip6_is_mine(const brisk_netdev *dev, const uint8_t a[16]);
/* Nonzero when dev has joined the multicast group a: all-nodes ff02::1, or the solicited-node group of one
 * of its addresses (RFC 4291 §2.8: the groups a node must join). */
int brisk_netdev_ip6_joined(const brisk_netdev *dev, const uint8_t a[16]);
/* Nonzero when mac is the 33:33 MAC of a group dev has joined (RFC 2464 §7): such frames are for us. */
int brisk_netdev_ip6_mac_joined(const brisk_netdev *dev, const uint8_t mac[6]);
/* Nonzero when a lies in the on-link prefix of one of dev's addresses or of a prefix an RA taught. */
int brisk_netdev_ip6_onlink(const brisk_netdev *dev, const uint8_t a[16], uint64_t now);

#endif
