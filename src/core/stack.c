/*
 * stack.c — the stack instance: creation, the entry points a driver or loop calls (brisk_stack_input and
 * brisk_stack_input_batch, brisk_stack_poll, brisk_stack_next_deadline) and the counters snapshot.
 *
 * Input is dispatched by EtherType here: ARP to net/neigh.c, IPv4 to net/ip_input.c. The Ethernet destination
 * must be the receiving device's MAC or broadcast; anything else (another host's unicast, multicast) is
 * counted and dropped, as a NIC without promiscuous mode would.
 *
 * A batch goes through receive coalescing (net/gro.c) when the gro setting is on; frames it does not join
 * take the same per-frame path as brisk_stack_input.
 *
 * Socket events raised while processing (TCP) are delivered on the way out of input and poll, when every
 * structure is consistent again, so application callbacks may call back into the stack.
 *
 * poll() advances the stack's one timer wheel; next_deadline() is the wheel's next expiry. All time comes
 * from the caller (`now`); the stack keeps the latest value it has seen so timers armed from input processing
 * are relative to the right clock even if a caller's times arrive slightly out of order.
 */
#include "core/stack.h"

#include <stdlib.h>
#include <string.h>

#include "net/ip.h"
#include "net/ipfrag.h"
#include "tcp/tcp.h"
#include "wire/eth.h"

brisk_stack *brisk_stack_new(const struct brisk_settings *s)
{
    struct brisk_settings dflt;
    if (!s) {
        brisk_settings_default(&dflt);
        s = &dflt;
    }
    if (brisk_settings_check(s) != BRISK_OK)
        return NULL;
    brisk_stack *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->s = *s;
    brisk_pktpool_init(&st->pool, s->pkt_pool_bytes);
    brisk_timer_wheel_init(&st->wheel, 0);
    brisk_rand_seed(&st->rand, s->seed);
    st->ip.next_id = (uint16_t)brisk_rand_u32(&st->rand);
    st->icmp.tokens_ns = (uint64_t)s->icmp_ratelimit_burst * s->icmp_ratelimit_ns;
    if (brisk_neigh_init(st) != BRISK_OK || brisk_tcp_init(st) != BRISK_OK ||
        brisk_gro_init(st) != BRISK_OK || brisk_ipfrag_init(st) != BRISK_OK) {
        brisk_gro_destroy(st);
        brisk_tcp_destroy(st);
        brisk_neigh_destroy(st);
        brisk_pktpool_destroy(&st->pool);
        free(st);
        return NULL;
    }
    return st;
}

void brisk_stack_free(brisk_stack *st)
{
    if (!st)
        return;
    brisk_ipfrag_destroy(st);
    brisk_gro_destroy(st);
    brisk_tcp_destroy(st);
    brisk_neigh_destroy(st);
    brisk_pktpool_destroy(&st->pool);
    free(st);
}

const struct brisk_settings *brisk_stack_settings(const brisk_stack *st)
{
    return &st->s;
}

void brisk_stack_get_counters(const brisk_stack *st, struct brisk_counters *out)
{
    *out = st->c;
    out->TimerArms = st->wheel.stats.arms;
    out->TimerCancels = st->wheel.stats.cancels;
    out->TimerFires = st->wheel.stats.fires;
    out->PktAllocFails = st->pool.alloc_fails;
}

uint64_t brisk_stack_pkts_in_use(const brisk_stack *st)
{
    return st->pool.in_use;
}

int brisk_stack_input(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len, uint64_t now)
{
    return brisk_stack_input_flags(st, dev, frame, len, 0, now);
}

/* brisk_stack_rx_one's body, inline in the single-frame entry point (one call less per frame). */
static inline void rx_one(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len,
                          unsigned flags, uint64_t now)
{
    st->c.EthInFrames++;
    dev->stats.rx_packets++;
    dev->stats.rx_bytes += len;
    if (flags & BRISK_RX_CSUM_VALID)
        dev->stats.rx_csum_valid++;

    struct brisk_eth_repr eth;
    if (brisk_eth_parse(frame, len, &eth) < 0) {
        st->c.EthInErrors++;
        return;
    }
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (memcmp(eth.dst, dev->cfg.mac, 6) != 0 && memcmp(eth.dst, bcast, 6) != 0) {
        st->c.EthInNotForUs++;
        return;
    }
    const uint8_t *payload = frame + BRISK_ETH_HLEN;
    size_t plen = len - BRISK_ETH_HLEN;
    switch (eth.type) {
    case BRISK_ETH_P_ARP:
        brisk_neigh_arp_input(st, dev, payload, plen, now);
        break;
    case BRISK_ETH_P_IPV4:
        brisk_ip_input(st, dev, payload, plen, memcmp(eth.dst, bcast, 6) == 0, flags, now);
        break;
    default:
        st->c.EthInUnknownType++;
        break;
    }
}

int brisk_stack_input_flags(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len,
                            unsigned flags, uint64_t now)
{
    if (!st || !dev || dev->st != st || (!frame && len) || (flags & ~BRISK_RX_CSUM_VALID))
        return BRISK_ERR_INVAL;
    now = brisk_stack_clock(st, now);
    rx_one(st, dev, frame, len, flags, now);
    brisk_tcp_deliver_events(st, now);
    return BRISK_OK;
}

int brisk_stack_input_batch(brisk_stack *st, brisk_netdev *dev, const struct brisk_rx_frame *frames, size_t n,
                            uint64_t now)
{
    if (!st || !dev || dev->st != st || (!frames && n))
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < n; i++)
        if ((!frames[i].data && frames[i].len) || (frames[i].flags & ~BRISK_RX_CSUM_VALID))
            return BRISK_ERR_INVAL;
    now = brisk_stack_clock(st, now);
    if (st->s.gro) {
        /* The held ACKs go after the application has seen the data: a reader that drains the stream gets
         * its window update into the same ACK instead of one ACK before and one after. */
        brisk_tcp_batch_begin(st);
        brisk_gro_receive(st, dev, frames, n, now);
        brisk_tcp_deliver_events(st, now);
        brisk_tcp_batch_end(st, now);
    } else {
        for (size_t i = 0; i < n; i++)
            brisk_stack_rx_one(st, dev, frames[i].data, frames[i].len, frames[i].flags, now);
    }
    brisk_tcp_deliver_events(st, now);
    return BRISK_OK;
}

void brisk_stack_rx_one(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len, unsigned flags,
                        uint64_t now)
{
    rx_one(st, dev, frame, len, flags, now);
}

int brisk_stack_poll(brisk_stack *st, uint64_t now)
{
    if (!st)
        return BRISK_ERR_INVAL;
    now = brisk_stack_clock(st, now);
    if (st->tx_wake) {
        st->tx_wake = 0;
        brisk_tcp_run_blocked(st, now);
    }
    brisk_timer_advance(&st->wheel, now);
    brisk_tcp_deliver_events(st, now);
    return BRISK_OK;
}

uint64_t brisk_stack_next_deadline(const brisk_stack *st)
{
    if (!st)
        return BRISK_TIME_NONE;
    if (st->tx_wake)
        return st->now; /* senders to resume after a TX completion */
    return brisk_timer_next(&st->wheel);
}

int brisk_stack_set_gateway(brisk_stack *st, uint32_t gw)
{
    if (!st)
        return BRISK_ERR_INVAL;
    if (gw == 0) {
        st->gateway = 0;
        return BRISK_OK;
    }
    for (uint32_t i = 0; i < st->ndevs; i++) {
        const brisk_netdev *d = &st->devs[i];
        if (d->cfg.ip && (gw & d->mask) == (d->cfg.ip & d->mask)) {
            st->gateway = gw;
            return BRISK_OK;
        }
    }
    return BRISK_ERR_NOROUTE;
}
