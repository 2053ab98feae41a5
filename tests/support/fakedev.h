/*
 * fakedev.h — a device for white-box tests: it records every frame the stack transmits and completes them
 * only when the test says so, so a test can forge input at chosen times and assert the exact output.
 */
#ifndef BRISK_FAKEDEV_H
#define BRISK_FAKEDEV_H

#include "brisk/netdev.h"

#define FAKEDEV_MAX 256

struct fakedev_frame {
    uint8_t *data; /* a copy of the frame (malloc'd) */
    size_t len;
    uint64_t at; /* `now` of the xmit */
};

struct fakedev {
    brisk_stack *st;
    brisk_netdev *dev;
    struct brisk_netdev_config cfg;
    struct fakedev_frame tx[FAKEDEV_MAX]; /* recorded frames, oldest first */
    size_t ntx;
    brisk_pkt *held[FAKEDEV_MAX]; /* packets not yet completed */
    size_t nheld;
    int busy; /* nonzero: xmit answers BRISK_ERR_BUSY */
};

/* Adds a device with MAC 02:00:00:00:00:<last>, address ip/prefix, MTU 1500. Asserts success. */
void fakedev_init(struct fakedev *f, brisk_stack *st, uint8_t last, uint32_t ip, uint8_t prefix);
/* Completes every held packet at `now`. */
void fakedev_complete_all(struct fakedev *f, uint64_t now);
/* Forgets the recorded frames (completes nothing). */
void fakedev_clear(struct fakedev *f);
/* Completes held packets and frees recorded frames. */
void fakedev_destroy(struct fakedev *f, uint64_t now);

/* Builds an Ethernet+IPv4 header pair around `l4` into buf and returns the frame length. */
size_t fakedev_ipv4_frame(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6], uint32_t src,
                          uint32_t dst, uint8_t proto, const uint8_t *l4, size_t l4_len);

/* Builds an Ethernet+IPv6 header pair around `payload` (extension headers and upper layer, as given) into
 * buf and returns the frame length. */
size_t fakedev_ipv6_frame(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6], const uint8_t src[16],
                          const uint8_t dst[16], uint8_t next_header, uint8_t hop_limit, const uint8_t *payload,
                          size_t len);

/* Teaches the stack the MAC of a peer on f's link: a neighbour solicitation from the peer's link-local
 * address (from peer_mac) for f's link-local address, with the peer's link-layer address, input at `now`.
 * The stack answers with an advertisement, left in f->tx. */
void fakedev_ipv6_solicit_from(struct fakedev *f, const uint8_t peer_mac[6], uint64_t now);

#define IP4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

#endif
