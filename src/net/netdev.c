/*
 * netdev.c — devices: registration, transmit, and TX completion.
 *
 * TX completion is first-class in brisk (docs/design.md, principle 3). A packet handed to a driver stays
 * owned by the driver until it calls brisk_netdev_tx_done(); only then is the buffer returned to the pool.
 * Every completion is also a measurement: the time from xmit to completion is smoothed per device (an EWMA
 * with gain 1/8, like SRTT) — the figure brisk's adaptive TSQ later sizes its budget from, and the one that
 * tells a user "this NIC completes in 190 µs".
 *
 * Devices whose driver opts in (BRISK_NETDEV_CAP_BQL) also get byte queue limits (bql.c): every accepted
 * packet is queued bytes, every completion done bytes, and the queue stops when too many are in progress.
 * A driver that frees its senders at once (BRISK_NETDEV_CAP_ORPHAN, as Linux's tun orphans its skbs) has its
 * packets' charge to their connection released at the xmit, while it still holds the buffers.
 *
 * Devices live in a small array inside the stack; brisk_netdev_for_addr() picks the one whose prefix covers
 * an address (longest prefix first), which is all the routing a host with directly connected networks needs.
 */
#include "net/netdev.h"

#include <string.h>

#include "net/net.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"

brisk_netdev *brisk_netdev_register(struct brisk_net *net, const struct brisk_netdev_config *cfg,
                                    const struct brisk_netdev_ops *ops, void *driver, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (!net || !cfg || !ops || !ops->xmit || cfg->mtu < 68 || cfg->mtu > 65535 || cfg->prefix_len > 32) {
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    if (cfg->mac[0] & 1) { /* a multicast MAC cannot be a device address */
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    if (net->ndevs == BRISK_MAX_NETDEVS) {
        *err = BRISK_ERR_TOOMANY;
        return NULL;
    }
    if (cfg->ip && brisk_netdev_is_local(net, cfg->ip)) {
        *err = BRISK_ERR_EXIST;
        return NULL;
    }
    brisk_netdev *dev = &net->devs[net->ndevs++];
    memset(dev, 0, sizeof(*dev));
    dev->net = net;
    dev->cfg = *cfg;
    dev->cfg.name[sizeof(dev->cfg.name) - 1] = '\0';
    if (!(dev->cfg.caps & BRISK_NETDEV_CAP_GSO))
        dev->cfg.gso_max_size = 0;
    else if (dev->cfg.gso_max_size == 0 || dev->cfg.gso_max_size > 65535)
        dev->cfg.gso_max_size = 65535;
    dev->mask = brisk_ipv4_mask(cfg->prefix_len);
    dev->ops = ops;
    dev->driver = driver;
    if ((cfg->caps & BRISK_NETDEV_CAP_BQL) && net->s.bql) {
        dev->bql_on = 1;
        brisk_bql_init(&dev->bql, net->s.bql_limit_min, net->s.bql_limit_max, net->s.bql_hold_time_ns,
                       net->now);
        dev->stats.bql_limit = dev->bql.limit;
    }
    /* IPv6 needs 1280-byte links (RFC 8200 §5); on one, the device has its link-local address at once:
     * the simulator skips duplicate address detection (RFC 4862 §5.4 allows DupAddrDetectTransmits 0). */
    if (net->s.ipv6 && cfg->mtu >= BRISK_IPV6_MIN_MTU) {
        brisk_ipv6_link_local_from_mac(dev->ip6[0].addr, cfg->mac);
        dev->ip6[0].prefix_len = 64;
        dev->nip6 = 1;
    }
    *err = BRISK_OK;
    return dev;
}

const struct brisk_netdev_config *brisk_netdev_config_of(const brisk_netdev *dev)
{
    return &dev->cfg;
}

void brisk_netdev_get_stats(const brisk_netdev *dev, struct brisk_netdev_stats *out)
{
    *out = dev->stats;
    if (dev->bql_on) {
        out->bql_limit = dev->bql.limit;
        out->bql_grows = dev->bql.grows;
        out->bql_shrinks = dev->bql.shrinks;
    }
}

void brisk_netdev_set_speed(brisk_netdev *dev, uint64_t bps)
{
    if (!dev)
        return;
    dev->speed_bps = bps;
    /* Divided once here rather than per packet; 2^-16 ns resolution (exact for 100M, 1G, 10G, 25G). */
    dev->wire_ns_fp = bps ? (uint64_t)(((unsigned __int128)8u * BRISK_NSEC_PER_SEC << 16) / bps) : 0;
}

/* When pkt's last frame should leave the wire if the device sends back to back at its link speed: its frames
 * (one per GSO segment, each repeating ~66 bytes of headers, at least 60 bytes) start when the ones before
 * them are done. Only an estimate — the driver may add framing — but queueing behind our own frames is what
 * it must remove from a completion's latency, and that it gets right. */
static uint64_t wire_done_estimate(brisk_netdev *dev, const brisk_pkt *pkt, uint64_t now)
{
    uint64_t segs = pkt->gso_segs > 1 ? pkt->gso_segs : 1;
    uint64_t bytes = pkt->len + (segs - 1) * BRISK_TCP_SEG_WIRE_HDRS;
    if (bytes < BRISK_ETH_ZLEN * segs)
        bytes = BRISK_ETH_ZLEN * segs;
    uint64_t start = dev->wire_free_at > now ? dev->wire_free_at : now;
    dev->wire_free_at = start + (uint64_t)(((unsigned __int128)bytes * dev->wire_ns_fp) >> 16);
    return dev->wire_free_at;
}

int brisk_netdev_stopped(const brisk_netdev *dev)
{
    return dev && (dev->xoff | dev->drv_xoff | dev->busy_xoff);
}

void brisk_netdev_stop_queue(brisk_netdev *dev)
{
    if (dev && !dev->drv_xoff) {
        dev->drv_xoff = 1;
        dev->stats.queue_stops++;
    }
}

void brisk_netdev_wake_queue(brisk_netdev *dev)
{
    if (dev && dev->drv_xoff) {
        dev->drv_xoff = 0;
        dev->net->tx_wake = 1; /* held senders resume at the next poll (never from inside the driver) */
    }
}

int brisk_netdev_xmit(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now)
{
    struct brisk_net *net = dev->net;
    pkt->xmit_time = now;
    pkt->wire_done = now;
    uint32_t len = pkt->len;
    int rc = dev->ops->xmit(dev->driver, pkt, now);
    if (rc != BRISK_OK) {
        if (rc == BRISK_ERR_BUSY) {
            dev->stats.tx_busy++;
            net->c.EthOutBusy++;
            net->tx_wake_wanted = 1;
            dev->busy_xoff = 1; /* build nothing more for it until a completion makes room */
        }
        net->c.IpOutDiscards++;
        brisk_pkt_free(&net->pool, pkt);
        return rc;
    }
    net->c.EthOutFrames++;
    if ((dev->cfg.caps & BRISK_NETDEV_CAP_ORPHAN) && pkt->owner && net->pool.owned_free)
        net->pool.owned_free(net->pool.owned_ctx, pkt); /* the owner's charge ends here (it clears owner) */
    if (dev->speed_bps)
        pkt->wire_done = wire_done_estimate(dev, pkt, now);
    dev->stats.tx_packets++;
    dev->stats.tx_bytes += len;
    dev->stats.tx_inflight++;
    dev->stats.tx_inflight_bytes += len;
    if (dev->bql_on && brisk_bql_sent(&dev->bql, len) && !dev->xoff) {
        dev->xoff = 1; /* soft limit: this packet went, the next data segment waits (bql.c) */
        dev->stats.bql_stops++;
    }
    return BRISK_OK;
}

void brisk_netdev_tx_done(brisk_netdev *dev, brisk_pkt *pkt, uint64_t now)
{
    if (!dev || !pkt)
        return;
    struct brisk_net *net = dev->net;
    now = brisk_net_clock(net, now);
    uint64_t lat = now >= pkt->xmit_time ? now - pkt->xmit_time : 0;
    struct brisk_netdev_stats *s = &dev->stats;
    uint64_t over = now >= pkt->wire_done ? now - pkt->wire_done : 0;
    if (s->tx_completed == 0) {
        s->tx_done_latency_ns = lat;
        s->tx_done_overhead_ns = over;
    } else { /* srtt-style EWMA, gain 1/8, in integer ns */
        s->tx_done_latency_ns = s->tx_done_latency_ns - (s->tx_done_latency_ns >> 3) + (lat >> 3);
        s->tx_done_overhead_ns = s->tx_done_overhead_ns - (s->tx_done_overhead_ns >> 3) + (over >> 3);
    }
    if (lat > s->tx_done_latency_max_ns)
        s->tx_done_latency_max_ns = lat;
    s->tx_completed++;
    s->tx_inflight--;
    dev->busy_xoff = 0;
    s->tx_inflight_bytes -= pkt->len <= s->tx_inflight_bytes ? pkt->len : s->tx_inflight_bytes;
    net->c.TxCompletions++;
    if (dev->bql_on) {
        brisk_bql_done(&dev->bql, pkt->len, now);
        if (dev->xoff && brisk_bql_avail(&dev->bql) >= 0) {
            dev->xoff = 0;
            net->tx_wake = 1; /* TCP data held for the device resumes at the next poll */
        }
    }
    brisk_pkt_free(&net->pool, pkt);
    if (net->tx_wake_wanted) { /* room again: the next poll resumes refused senders (never from here) */
        net->tx_wake_wanted = 0;
        net->tx_wake = 1;
    }
}

brisk_netdev *brisk_netdev_for_addr(struct brisk_net *net, uint32_t addr)
{
    brisk_netdev *best = NULL;
    for (uint32_t i = 0; i < net->ndevs; i++) {
        brisk_netdev *d = &net->devs[i];
        if (!d->cfg.ip || (addr & d->mask) != (d->cfg.ip & d->mask))
            continue;
        if (!best || d->cfg.prefix_len > best->cfg.prefix_len)
            best = d;
    }
    return best;
}

int brisk_netdev_is_broadcast(const brisk_netdev *dev, uint32_t addr)
{
    if (addr == 0xffffffffu)
        return 1;
    /* /31 (RFC 3021) and /32 have no broadcast address. */
    return dev->cfg.ip && dev->cfg.prefix_len < 31 && (addr & dev->mask) == (dev->cfg.ip & dev->mask) &&
           (addr | dev->mask) == 0xffffffffu;
}

int brisk_netdev_is_local(const struct brisk_net *net, uint32_t addr)
{
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (net->devs[i].cfg.ip && net->devs[i].cfg.ip == addr)
            return 1;
    return 0;
}

/* IPv6 addresses (RFC 4291). The link-local address sits in slot 0; brisk_netdev_add_addr appends. */

static int prefix_match(const uint8_t a[16], const uint8_t b[16], unsigned plen)
{
    unsigned bytes = plen / 8, bits = plen % 8;
    if (memcmp(a, b, bytes) != 0)
        return 0;
    if (!bits)
        return 1;
    uint8_t m = (uint8_t)(0xff << (8 - bits));
    return (a[bytes] & m) == (b[bytes] & m);
}

int brisk_netdev_add_addr(brisk_netdev *dev, const struct brisk_addr *addr, uint8_t prefix_len)
{
    if (!dev || !addr || prefix_len > 128)
        return BRISK_ERR_INVAL;
    if (addr->family != BRISK_AF_INET6)
        return addr->family == BRISK_AF_INET ? BRISK_ERR_AFNOSUPPORT : BRISK_ERR_INVAL;
    const uint8_t *a = addr->u.v6;
    if (brisk_ipv6_is_multicast(a) || brisk_ipv6_is_unspecified(a) || brisk_ipv6_is_loopback(a))
        return BRISK_ERR_INVAL;
    struct brisk_net *net = dev->net;
    if (!net->s.ipv6 || dev->nip6 == 0)
        return BRISK_ERR_AFNOSUPPORT;
    for (uint32_t i = 0; i < net->ndevs; i++)
        if (brisk_netdev_ip6_is_mine(&net->devs[i], a))
            return BRISK_ERR_EXIST;
    if (dev->nip6 == BRISK_NETDEV_IP6_MAX)
        return BRISK_ERR_TOOMANY;
    memcpy(dev->ip6[dev->nip6].addr, a, 16);
    dev->ip6[dev->nip6].prefix_len = prefix_len;
    dev->nip6++;
    return BRISK_OK;
}

int brisk_netdev_get_addr6(const brisk_netdev *dev, unsigned n, struct brisk_addr *addr, uint8_t *prefix_len)
{
    if (!dev || !addr)
        return BRISK_ERR_INVAL;
    if (n >= dev->nip6)
        return BRISK_ERR_NOENT;
    memset(addr, 0, sizeof(*addr));
    addr->family = BRISK_AF_INET6;
    memcpy(addr->u.v6, dev->ip6[n].addr, 16);
    if (prefix_len)
        *prefix_len = dev->ip6[n].prefix_len;
    return BRISK_OK;
}

int brisk_netdev_ip6_is_mine(const brisk_netdev *dev, const uint8_t a[16])
{
    for (uint32_t i = 0; i < dev->nip6; i++)
        if (memcmp(dev->ip6[i].addr, a, 16) == 0)
            return 1;
    return 0;
}

int brisk_netdev_ip6_joined(const brisk_netdev *dev, const uint8_t a[16])
{
    static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
    if (!dev->nip6)
        return 0;
    if (memcmp(a, all_nodes, 16) == 0)
        return 1;
    if (!brisk_ipv6_is_solicited_node(a))
        return 0;
    for (uint32_t i = 0; i < dev->nip6; i++)
        if (memcmp(dev->ip6[i].addr + 13, a + 13, 3) == 0)
            return 1;
    return 0;
}

int brisk_netdev_ip6_mac_joined(const brisk_netdev *dev, const uint8_t mac[6])
{
    if (!dev->nip6 || mac[0] != 0x33 || mac[1] != 0x33)
        return 0;
    if (mac[2] == 0 && mac[3] == 0 && mac[4] == 0 && mac[5] == 1) /* all-nodes */
        return 1;
    if (mac[2] != 0xff)
        return 0;
    for (uint32_t i = 0; i < dev->nip6; i++)
        if (memcmp(dev->ip6[i].addr + 13, mac + 3, 3) == 0)
            return 1;
    return 0;
}

int brisk_netdev_ip6_onlink(const brisk_netdev *dev, const uint8_t a[16], uint64_t now)
{
    for (uint32_t i = 0; i < dev->nip6; i++)
        if (prefix_match(a, dev->ip6[i].addr, dev->ip6[i].prefix_len))
            return 1;
    for (uint32_t i = 0; i < BRISK_NETDEV_PREFIX6_MAX; i++) {
        const struct brisk_netdev_prefix6 *p = &dev->prefix6[i];
        if (p->prefix_len && now < p->expires && prefix_match(a, p->prefix, p->prefix_len))
            return 1;
    }
    return 0;
}
