#include "support/fakedev.h"

#include <stdlib.h>
#include <string.h>

#include "wire/eth.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"

static int fake_xmit(void *driver, brisk_pkt *pkt, uint64_t now)
{
    struct fakedev *f = driver;
    if (f->busy || f->nheld == FAKEDEV_MAX || f->ntx == FAKEDEV_MAX)
        return BRISK_ERR_BUSY;
    struct fakedev_frame *fr = &f->tx[f->ntx++];
    fr->data = malloc(pkt->len);
    memcpy(fr->data, pkt->data, pkt->len);
    fr->len = pkt->len;
    fr->at = now;
    f->held[f->nheld++] = pkt;
    return BRISK_OK;
}

static const struct brisk_netdev_ops fake_ops = {.xmit = fake_xmit};

void fakedev_init(struct fakedev *f, brisk_stack *st, uint8_t last, uint32_t ip, uint8_t prefix)
{
    memset(f, 0, sizeof(*f));
    f->st = st;
    struct brisk_netdev_config *c = &f->cfg;
    strcpy(c->name, "fake0");
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, last};
    memcpy(c->mac, mac, 6);
    c->mtu = 1500;
    c->ip = ip;
    c->prefix_len = prefix;
    int err;
    f->dev = brisk_netdev_add(st, c, &fake_ops, f, &err);
    if (!f->dev)
        abort();
}

void fakedev_complete_all(struct fakedev *f, uint64_t now)
{
    for (size_t i = 0; i < f->nheld; i++)
        brisk_netdev_tx_done(f->dev, f->held[i], now);
    f->nheld = 0;
}

void fakedev_clear(struct fakedev *f)
{
    for (size_t i = 0; i < f->ntx; i++)
        free(f->tx[i].data);
    f->ntx = 0;
}

void fakedev_destroy(struct fakedev *f, uint64_t now)
{
    fakedev_complete_all(f, now);
    fakedev_clear(f);
}

size_t fakedev_ipv4_frame(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6], uint32_t src,
                          uint32_t dst, uint8_t proto, const uint8_t *l4, size_t l4_len)
{
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV4};
    memcpy(e.dst, dst_mac, 6);
    memcpy(e.src, src_mac, 6);
    brisk_eth_emit(buf, &e);
    struct brisk_ipv4_repr ip = {.hdr_len = 20,
                                 .total_len = (uint16_t)(20 + l4_len),
                                 .id = 1,
                                 .df = 1,
                                 .ttl = 64,
                                 .proto = proto,
                                 .src = src,
                                 .dst = dst};
    brisk_ipv4_emit(buf + BRISK_ETH_HLEN, &ip);
    memcpy(buf + BRISK_ETH_HLEN + 20, l4, l4_len);
    return BRISK_ETH_HLEN + 20 + l4_len;
}

size_t fakedev_ipv6_frame(uint8_t *buf, const uint8_t dst_mac[6], const uint8_t src_mac[6], const uint8_t src[16],
                          const uint8_t dst[16], uint8_t next_header, uint8_t hop_limit, const uint8_t *payload,
                          size_t len)
{
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_IPV6};
    memcpy(e.dst, dst_mac, 6);
    memcpy(e.src, src_mac, 6);
    brisk_eth_emit(buf, &e);
    struct brisk_ipv6_repr ip = {.payload_len = (uint16_t)len, .next_header = next_header, .hop_limit = hop_limit};
    memcpy(ip.src, src, 16);
    memcpy(ip.dst, dst, 16);
    brisk_ipv6_emit(buf + BRISK_ETH_HLEN, &ip);
    if (len) /* payload may be NULL for an empty one */
        memcpy(buf + BRISK_ETH_HLEN + BRISK_IPV6_HLEN, payload, len);
    return BRISK_ETH_HLEN + BRISK_IPV6_HLEN + len;
}

void fakedev_ipv6_solicit_from(struct fakedev *f, const uint8_t peer_mac[6], uint64_t now)
{
    uint8_t us[16], peer[16], sn[16], mac[6], opts[8], msg[64], frame[200];
    brisk_ipv6_link_local_from_mac(us, f->cfg.mac);
    brisk_ipv6_link_local_from_mac(peer, peer_mac);
    brisk_nd_opt_lla_emit(opts, BRISK_ND_OPT_SLLA, peer_mac);
    struct brisk_icmp6_repr r = {.type = BRISK_ICMP6_ND_NS, .payload = opts, .payload_len = 8};
    memcpy(r.target, us, 16);
    brisk_ipv6_solicited_node(sn, us);
    brisk_ipv6_multicast_mac(mac, sn);
    size_t n = brisk_icmp6_emit(msg, &r, peer, sn);
    n = fakedev_ipv6_frame(frame, mac, peer_mac, peer, sn, BRISK_IP_PROTO_ICMPV6, 255, msg, n);
    brisk_stack_input(f->st, f->dev, frame, n, now);
}
