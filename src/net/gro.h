/*
 * gro.h (internal) — receive coalescing (gro.c): its state, allocated with the stack, and a batch of frames.
 */
#ifndef BRISK_NET_GRO_H
#define BRISK_NET_GRO_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/netdev.h"

struct brisk_net;

/* A coalesced segment's text in pieces: the texts of consecutive in-order segments of one connection, each
 * still in its own frame (handed to the protocol's gro_input, net.h). */
struct brisk_gro_piece {
    const uint8_t *data;
    uint32_t len;
};

int brisk_gro_init(struct brisk_net *net);
void brisk_gro_destroy(struct brisk_net *net);
/* A batch of frames (arguments checked by brisk_stack_input_batch): runs of one connection go to its
 * protocol's gro_input, every other frame through brisk_net_rx_one. */
void brisk_gro_receive(struct brisk_net *net, brisk_netdev *dev, const struct brisk_rx_frame *frames,
                       size_t n, uint64_t now);

#endif
