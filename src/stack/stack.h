/*
 * stack.h — the stack instance, private to the library: the top of the layers (net.h lists them). A stack
 * is its network layer (struct brisk_net: settings, counters, pool, timers, devices, IP), the transport
 * protocols registered on it, and the queue of socket events its entry points deliver on their way out.
 * There is no other state, so any number of stacks live side by side in one process.
 */
#ifndef BRISK_STACK_STACK_H
#define BRISK_STACK_STACK_H

#include "brisk/brisk.h"
#include "core/evq.h"
#include "net/net.h"

struct brisk_tcp;
struct brisk_udp_table;

struct brisk_stack {
    struct brisk_net net;        /* first: its hot head (settings, counters, pool) at the struct's start */
    struct brisk_tcp *tcp;       /* TCP (src/tcp/), registered as IP protocol 6 */
    struct brisk_udp_table *udp; /* UDP (src/udp/), registered as IP protocol 17 */
    struct brisk_evq evq;        /* sockets with events to deliver */
};

#endif
