/*
 * stack.c — the stack instance: creation (the network layer, then the transport protocols registered in its
 * protocol table), the entry points a driver or loop calls (brisk_stack_input and brisk_stack_input_batch,
 * brisk_stack_poll, brisk_stack_next_deadline), event delivery, and the public calls that take a stack.
 *
 * A frame goes down to the network layer (net/net.c dispatches it by EtherType). A batch goes through
 * receive coalescing (net/gro.c) when the gro setting is on; frames it does not join take the same
 * per-frame path as brisk_stack_input.
 *
 * Socket events raised while processing are queued (core/evq.h) and delivered on the way out of input, poll
 * and every socket call, when every structure is consistent again, so application callbacks may call back
 * into the stack. The queue's dispatch hands each socket to its protocol's delivery (TCP's
 * brisk_tcp_deliver, UDP's brisk_udp_deliver).
 *
 * poll() advances the stack's one timer wheel; next_deadline() is the wheel's next expiry. All time comes
 * from the caller (`now`); the stack keeps the latest value it has seen so timers armed from input processing
 * are relative to the right clock even if a caller's times arrive slightly out of order.
 */
#include "stack/stack.h"

#include <stdlib.h>
#include <string.h>

#include "net/gro.h"
#include "net/ip.h"
#include "net/ip6.h"
#include "net/neigh.h"
#include "net/netdev.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

static void dispatch(void *ctx, struct brisk_evq_node *n, uint64_t now)
{
    (void)ctx;
    switch (n->proto) {
    case BRISK_IP_PROTO_TCP:
        brisk_tcp_deliver(n, now);
        break;
    case BRISK_IP_PROTO_UDP:
        brisk_udp_deliver(n, now);
        break;
    default: /* no other protocol raises events */
        n->pending = 0;
        break;
    }
}

static void deliver_events(brisk_stack *st, uint64_t now)
{
    brisk_evq_deliver(&st->evq, now);
}

brisk_stack *brisk_stack_new(const struct brisk_settings *s)
{
    struct brisk_settings dflt;
    if (!s) {
        brisk_settings_default(&dflt);
        s = &dflt;
    }
    brisk_stack *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->evq.dispatch = dispatch;
    st->evq.ctx = st;
    if (brisk_net_init(&st->net, s) != BRISK_OK || !(st->tcp = brisk_tcp_init(&st->net, &st->evq)) ||
        brisk_net_proto_add(&st->net, BRISK_IP_PROTO_TCP, &brisk_tcp_proto, st->tcp) != BRISK_OK ||
        !(st->udp = brisk_udp_init(&st->net, &st->evq)) ||
        brisk_net_proto_add(&st->net, BRISK_IP_PROTO_UDP, &brisk_udp_proto, st->udp) != BRISK_OK) {
        brisk_stack_free(st);
        return NULL;
    }
    return st;
}

void brisk_stack_free(brisk_stack *st)
{
    if (!st)
        return;
    brisk_tcp_destroy(st->tcp);
    memset(&st->net.ip_proto[BRISK_IP_PROTO_TCP], 0, sizeof(st->net.ip_proto[0]));
    brisk_udp_destroy(st->udp);
    memset(&st->net.ip_proto[BRISK_IP_PROTO_UDP], 0, sizeof(st->net.ip_proto[0]));
    brisk_net_destroy(&st->net);
    free(st);
}

const struct brisk_settings *brisk_stack_settings(const brisk_stack *st)
{
    return &st->net.s;
}

void brisk_stack_get_counters(const brisk_stack *st, struct brisk_counters *out)
{
    *out = st->net.c;
    out->TimerArms = st->net.wheel.stats.arms;
    out->TimerCancels = st->net.wheel.stats.cancels;
    out->TimerFires = st->net.wheel.stats.fires;
    out->PktAllocFails = st->net.pool.alloc_fails;
}

uint64_t brisk_stack_pkts_in_use(const brisk_stack *st)
{
    return st->net.pool.in_use;
}

int brisk_stack_input(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len, uint64_t now)
{
    return brisk_stack_input_flags(st, dev, frame, len, 0, now);
}

int brisk_stack_input_flags(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len,
                            unsigned flags, uint64_t now)
{
    if (!st || !dev || dev->net != &st->net || (!frame && len) || (flags & ~BRISK_RX_CSUM_VALID))
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(&st->net, now);
    brisk_net_rx_one(&st->net, dev, frame, len, flags, now);
    deliver_events(st, now);
    return BRISK_OK;
}

int brisk_stack_input_batch(brisk_stack *st, brisk_netdev *dev, const struct brisk_rx_frame *frames, size_t n,
                            uint64_t now)
{
    if (!st || !dev || dev->net != &st->net || (!frames && n))
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < n; i++)
        if ((!frames[i].data && frames[i].len) || (frames[i].flags & ~BRISK_RX_CSUM_VALID))
            return BRISK_ERR_INVAL;
    now = brisk_net_clock(&st->net, now);
    if (st->net.s.gro) {
        /* The held ACKs go after the application has seen the data: a reader that drains the stream gets
         * its window update into the same ACK instead of one ACK before and one after. */
        brisk_tcp_batch_begin(&st->net);
        brisk_gro_receive(&st->net, dev, frames, n, now);
        deliver_events(st, now);
        brisk_tcp_batch_end(&st->net, now);
    } else {
        for (size_t i = 0; i < n; i++)
            brisk_net_rx_one(&st->net, dev, frames[i].data, frames[i].len, frames[i].flags, now);
    }
    deliver_events(st, now);
    return BRISK_OK;
}

int brisk_stack_poll(brisk_stack *st, uint64_t now)
{
    if (!st)
        return BRISK_ERR_INVAL;
    now = brisk_net_clock(&st->net, now);
    if (st->net.tx_wake) {
        st->net.tx_wake = 0;
        brisk_tcp_run_blocked(&st->net, now);
        brisk_udp_run_blocked(&st->net);
    }
    brisk_timer_advance(&st->net.wheel, now);
    deliver_events(st, now);
    return BRISK_OK;
}

uint64_t brisk_stack_next_deadline(const brisk_stack *st)
{
    if (!st)
        return BRISK_TIME_NONE;
    if (st->net.tx_wake)
        return st->net.now; /* senders to resume after a TX completion */
    return brisk_timer_next(&st->net.wheel);
}

int brisk_stack_set_gateway(brisk_stack *st, uint32_t gw)
{
    if (!st)
        return BRISK_ERR_INVAL;
    struct brisk_net *net = &st->net;
    if (gw == 0) {
        net->gateway = 0;
        return BRISK_OK;
    }
    for (uint32_t i = 0; i < net->ndevs; i++) {
        const brisk_netdev *d = &net->devs[i];
        if (d->cfg.ip && (gw & d->mask) == (d->cfg.ip & d->mask)) {
            net->gateway = gw;
            return BRISK_OK;
        }
    }
    return BRISK_ERR_NOROUTE;
}

/* The public calls that take a stack, for the layer that does the work. */

brisk_netdev *brisk_netdev_add(brisk_stack *st, const struct brisk_netdev_config *cfg,
                               const struct brisk_netdev_ops *ops, void *driver, int *err)
{
    if (!st) {
        if (err)
            *err = BRISK_ERR_INVAL;
        return NULL;
    }
    return brisk_netdev_register(&st->net, cfg, ops, driver, err);
}

int brisk_stack_resolve(brisk_stack *st, uint32_t dst, uint64_t now)
{
    if (!st)
        return BRISK_ERR_INVAL;
    return brisk_neigh_resolve(&st->net, dst, now);
}

void brisk_icmp_set_echo_handler(brisk_stack *st, brisk_echo_fn fn, void *ctx)
{
    if (st)
        brisk_icmp_echo_handler(&st->net, fn, ctx);
}

int brisk_icmp_echo_send(brisk_stack *st, uint32_t dst, uint16_t id, uint16_t seq, uint16_t payload_len,
                         uint64_t now)
{
    if (!st)
        return BRISK_ERR_INVAL;
    return brisk_icmp_echo_request(&st->net, dst, id, seq, payload_len, now);
}

int brisk_stack_set_gateway6(brisk_stack *st, brisk_netdev *dev, const struct brisk_addr *gw)
{
    if (!st || (dev && dev->net != &st->net))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = &st->net;
    if (!net->s.ipv6 || (gw && gw->family != BRISK_AF_INET6))
        return BRISK_ERR_AFNOSUPPORT;
    if (!gw || brisk_ipv6_is_unspecified(gw->u.v6)) {
        net->ip6.gw_dev = NULL;
        net->ip6.gw_static = 0;
        return BRISK_OK;
    }
    if (brisk_ipv6_is_multicast(gw->u.v6) || brisk_ipv6_is_loopback(gw->u.v6))
        return BRISK_ERR_INVAL;
    for (uint32_t i = 0; i < net->ndevs && !dev; i++)
        if (!brisk_ipv6_is_link_local(gw->u.v6) && net->devs[i].nip6 &&
            brisk_netdev_ip6_onlink(&net->devs[i], gw->u.v6, net->now))
            dev = &net->devs[i];
    if (!dev || !dev->nip6)
        return BRISK_ERR_NOROUTE;
    net->ip6.gw_dev = dev;
    memcpy(net->ip6.gw, gw->u.v6, 16);
    net->ip6.gw_static = 1;
    net->ip6.gw_expires = UINT64_MAX;
    return BRISK_OK;
}

void brisk_icmp_set_echo_addr_handler(brisk_stack *st, brisk_echo_addr_fn fn, void *ctx)
{
    if (!st)
        return;
    st->net.ip6.echo_fn = fn;
    st->net.ip6.echo_ctx = ctx;
}

int brisk_icmp_echo_send_addr(brisk_stack *st, const struct brisk_addr *dst, uint16_t id, uint16_t seq,
                              uint16_t payload_len, uint64_t now)
{
    if (!st || !dst)
        return BRISK_ERR_INVAL;
    if (dst->family == BRISK_AF_INET)
        return brisk_icmp_echo_request(&st->net, dst->u.v4, id, seq, payload_len, now);
    if (dst->family != BRISK_AF_INET6)
        return BRISK_ERR_INVAL;
    return brisk_icmp6_echo_request(&st->net, dst->u.v6, id, seq, payload_len, now);
}

brisk_sock *brisk_socket(brisk_stack *st, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!st) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    return tcp_socket(st->tcp, err);
}

uint64_t brisk_stack_sockets(const brisk_stack *st)
{
    return st ? st->tcp->nsocks : 0;
}

int brisk_stack_foreach_socket(brisk_stack *st, int (*fn)(void *ctx, brisk_sock *s), void *ctx)
{
    if (!st || !fn)
        return BRISK_ERR_INVAL;
    return tcp_foreach_socket(st->tcp, fn, ctx);
}

uint64_t brisk_stack_tcp_chunks_in_use(const brisk_stack *st)
{
    return st ? st->tcp->chunks.in_use : 0;
}

brisk_udp *brisk_udp_socket(brisk_stack *st, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!st) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    return udp_socket(st->udp, err);
}

uint64_t brisk_stack_udp_sockets(const brisk_stack *st)
{
    return st ? st->udp->nsocks : 0;
}
