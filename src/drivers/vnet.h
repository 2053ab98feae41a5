/*
 * vnet.h (internal) — the virtio_net_hdr that prefixes every frame on a TAP opened with IFF_VNET_HDR: how a
 * brisk packet's offload fields become one, and how a received one is checked and acted on (vnet.c).
 */
#ifndef BRISK_DRIVERS_VNET_H
#define BRISK_DRIVERS_VNET_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/netdev.h"

#define BRISK_VNET_HDR_LEN 10 /* struct virtio_net_hdr, without num_buffers */

/* Why a frame was refused (negative), for counters and tests. */
enum brisk_vnet_err {
    BRISK_VNET_SHORT = -1,     /* shorter than the header plus an Ethernet header */
    BRISK_VNET_BAD_CSUM = -2,  /* csum_start / csum_offset outside the frame */
    BRISK_VNET_BAD_GSO = -3,   /* a super-frame the device cannot describe (not TCP, no room for headers) */
    BRISK_VNET_NO_OFFLOAD = -4 /* offload fields set on a packet for a device without offloads */
};

/* Fills hdr[BRISK_VNET_HDR_LEN] for transmitting `pkt` (pkt->data / len is the Ethernet frame). `offload`
 * says whether TUN_F_CSUM | TUN_F_TSO4 are on: then a CHECKSUM_PARTIAL packet is described as NEEDS_CSUM and
 * a super-frame (gso_size > 0) as GSO_TCPV4 with hdr_len covering Ethernet, IPv4 and TCP headers. Without
 * offload a partial checksum is completed in pkt's buffer here and a super-frame is refused. Returns 0 or a
 * brisk_vnet_err. */
int brisk_vnet_tx_hdr(brisk_pkt *pkt, int offload, uint8_t *hdr);

struct brisk_vnet_rx {
    int gso;           /* the kernel handed a super-frame (gso_type != NONE) */
    uint16_t gso_size; /* its payload bytes per wire segment (0 when not a super-frame) */
    int csum_valid;    /* NEEDS_CSUM or DATA_VALID: the checksum need not be verified (BRISK_RX_CSUM_VALID) */
};

/* Checks a frame read from the TAP (`buf`, `n` bytes, header first); the frame is not modified. A partial
 * checksum (NEEDS_CSUM) is left as it is: the frame comes from the kernel's own stack, so it is passed on as
 * checksum-valid, like one the kernel marks DATA_VALID. On success returns the Ethernet frame's length; it
 * starts at buf + BRISK_VNET_HDR_LEN. Otherwise a brisk_vnet_err: the frame must be dropped. */
int brisk_vnet_rx(const uint8_t *buf, size_t n, struct brisk_vnet_rx *info);

#endif
