/*
 * netdev.h (internal) — the stack's side of the driver API: handing packets to a device.
 */
#ifndef BRISK_NET_NETDEV_H
#define BRISK_NET_NETDEV_H

#include "core/stack.h"

/* Hands a finished frame to the device. Takes ownership of pkt in every case: on failure the packet is freed
 * and counted. Returns BRISK_OK or the driver's error (BRISK_ERR_BUSY when the ring is full). */
int brisk_netdev_xmit(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now);

/* The device whose prefix contains addr (longest prefix), or NULL. */
brisk_netdev *brisk_netdev_for_addr(brisk_stack *st, uint32_t addr);

/* Nonzero when addr is the limited broadcast or dev's directed broadcast (prefixes up to /30). */
int brisk_netdev_is_broadcast(const brisk_netdev *dev, uint32_t addr);

/* Nonzero when addr is one of the stack's own addresses. */
int brisk_netdev_is_local(const brisk_stack *st, uint32_t addr);

#endif
