/*
 * net.c — the network layer's instance (net.h): its creation from the settings, the transport protocol
 * table, and a received frame's first step, dispatched by EtherType: ARP to neigh.c, IPv4 to ip_input.c,
 * IPv6 to ip6_input.c (while the ipv6 setting is on; off, 0x86DD is an unknown EtherType as before).
 *
 * The Ethernet destination must be the receiving device's MAC, broadcast, or (IPv6) the 33:33 MAC of a
 * group the device joined; anything else (another host's unicast, other multicast) is counted and dropped,
 * as a NIC with a multicast filter and without promiscuous mode would.
 */
#include "net/net.h"

#include <string.h>

#include "core/settings.h"
#include "net/gro.h"
#include "net/ip.h"
#include "net/ip6.h"
#include "net/ipfrag.h"
#include "wire/eth.h"

int brisk_net_init(struct brisk_net *net, const struct brisk_settings *s)
{
    memset(net, 0, sizeof(*net));
    int rc = brisk_settings_check(s);
    if (rc != BRISK_OK)
        return rc;
    net->s = *s;
    brisk_pktpool_init(&net->pool, s->pkt_pool_bytes);
    brisk_timer_wheel_init(&net->wheel, 0);
    brisk_rand_seed(&net->rand, s->seed);
    net->ip.next_id = (uint16_t)brisk_rand_u32(&net->rand);
    net->icmp.tokens_ns = (uint64_t)s->icmp_ratelimit_burst * s->icmp_ratelimit_ns;
    net->ip6.tokens_ns = net->icmp.tokens_ns;
    if (brisk_neigh_init(net) != BRISK_OK || brisk_gro_init(net) != BRISK_OK ||
        brisk_ipfrag_init(net) != BRISK_OK || brisk_nd_init(net) != BRISK_OK)
        return BRISK_ERR_NOMEM;
    return BRISK_OK;
}

void brisk_net_destroy(struct brisk_net *net)
{
    brisk_nd_destroy(net);
    brisk_ipfrag_destroy(net);
    brisk_gro_destroy(net);
    brisk_neigh_destroy(net);
    brisk_pktpool_destroy(&net->pool);
}

int brisk_net_proto_add(struct brisk_net *net, uint8_t proto, const struct brisk_ip_proto_ops *ops, void *ctx)
{
    if (!net || !ops || !ops->input || proto == BRISK_IP_PROTO_ICMP)
        return BRISK_ERR_INVAL;
    if (net->ip_proto[proto].ops)
        return BRISK_ERR_EXIST;
    net->ip_proto[proto].ops = ops;
    net->ip_proto[proto].ctx = ctx;
    return BRISK_OK;
}

void brisk_net_rx_one(struct brisk_net *net, brisk_netdev *dev, const uint8_t *frame, size_t len,
                      unsigned flags, uint64_t now)
{
    net->c.EthInFrames++;
    dev->stats.rx_packets++;
    dev->stats.rx_bytes += len;
    if (flags & BRISK_RX_CSUM_VALID)
        dev->stats.rx_csum_valid++;

    struct brisk_eth_repr eth;
    if (brisk_eth_parse(frame, len, &eth) < 0) {
        net->c.EthInErrors++;
        return;
    }
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (memcmp(eth.dst, dev->cfg.mac, 6) != 0 && memcmp(eth.dst, bcast, 6) != 0 &&
        !brisk_netdev_ip6_mac_joined(dev, eth.dst)) {
        net->c.EthInNotForUs++;
        return;
    }
    const uint8_t *payload = frame + BRISK_ETH_HLEN;
    size_t plen = len - BRISK_ETH_HLEN;
    switch (eth.type) {
    case BRISK_ETH_P_ARP:
        brisk_neigh_arp_input(net, dev, payload, plen, now);
        break;
    case BRISK_ETH_P_IPV4:
        brisk_ip_input(net, dev, payload, plen, memcmp(eth.dst, bcast, 6) == 0, flags, now);
        break;
    case BRISK_ETH_P_IPV6:
        if (!net->s.ipv6) {
            net->c.EthInUnknownType++;
            break;
        }
        brisk_ip6_input(net, dev, payload, plen, eth.dst[0] & 1, flags, now);
        break;
    default:
        net->c.EthInUnknownType++;
        break;
    }
}
