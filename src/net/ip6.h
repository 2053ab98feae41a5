/*
 * ip6.h (internal) — IPv6 input and output (ip6_input.c, ip6_output.c) and ICMPv6 (icmp6.c).
 */
#ifndef BRISK_NET_IP6_H
#define BRISK_NET_IP6_H

#include "net/net.h"
#include "net/iproute.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"

/* The route to dst: link-local (and link-scope multicast) destinations through the first IPv6 device, an
 * on-link prefix's device, else the default router. The source is the device's address that suits dst
 * (ip6_output.c). BRISK_OK or BRISK_ERR_NOROUTE. */
int brisk_ip6_route(struct brisk_net *net, const uint8_t dst[16], struct brisk_route *rt);

/* The source address dev uses toward dst (link-local for a link-local dst; else a global address whose
 * prefix holds dst, else the first global one, else link-local) into src. */
void brisk_ip6_select_src(const brisk_netdev *dev, const uint8_t dst[16], uint8_t src[16]);

/* Sends pkt (pkt->data at the upper-layer header, len = its bytes) to dst: prepends the IPv6 header
 * (`hop_limit`, 0 = ip_default_ttl; traffic class `tclass`), resolves the next hop and hands it to the device. Takes ownership of
 * pkt. BRISK_OK (sent or queued behind ND), BRISK_ERR_MSGSIZE (above the device MTU: brisk does not
 * fragment), or the neighbour cache's or device's error. */
int brisk_ip6_output(struct brisk_net *net, const struct brisk_route *rt, const uint8_t dst[16], uint8_t proto,
                     uint8_t hop_limit, uint8_t tclass, brisk_pkt *pkt, uint64_t now);

/* Processes a received IPv6 packet (the Ethernet payload); `l2_mcast`: it came to a multicast MAC. */
void brisk_ip6_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len, int l2_mcast,
                     unsigned rx_flags, uint64_t now);

/* ICMPv6 (icmp6.c): a message for us; `p` the upper-layer bytes after the extension headers. */
void brisk_icmp6_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                       const uint8_t *p, size_t len, uint64_t now);

/* Sends an ICMPv6 error (type < 128) about the packet `orig` (its fixed header first, orig_len bytes of it
 * at hand) that arrived on dev, with `info` (the MTU or the parameter problem's pointer), subject to
 * RFC 4443 §2.4 (e): never about an ICMPv6 error, never to an unspecified or multicast source, nor about a
 * packet to a multicast address or link-layer multicast unless `mcast_ok` (option type bits 10, packet too
 * big); and to the rate limit (§2.4 (f)). */
void brisk_icmp6_send_error(struct brisk_net *net, brisk_netdev *dev, uint8_t type, uint8_t code, uint32_t info,
                            const uint8_t *orig, size_t orig_len, int l2_mcast, int mcast_ok, uint64_t now);

/* brisk_icmp6_send_error about the packet a transport's input6 handler was given (`ip` its fixed header,
 * `l4` / `l4_len` the upper-layer bytes ip6_input.c handed over), from the device that owns ip->dst: a
 * transport's error (UDP's port unreachable) without the packet's start or device in its arguments. */
void brisk_icmp6_send_error_l4(struct brisk_net *net, uint8_t type, uint8_t code, uint32_t info,
                               const struct brisk_ipv6_repr *ip, const uint8_t *l4, size_t l4_len,
                               uint64_t now);

/* The public echo call's IPv6 body (brisk_icmp_echo_send_addr). */
int brisk_icmp6_echo_request(struct brisk_net *net, const uint8_t dst[16], uint16_t id, uint16_t seq,
                             uint16_t payload_len, uint64_t now);

/* Builds an ICMPv6 message of `len` bytes for dst from src on dev (the buffer sized and filled to len, for
 * the caller to emit into) or NULL (counted: Ip6OutDiscards). */
brisk_pkt *brisk_icmp6_alloc(struct brisk_net *net, size_t len);

#endif
