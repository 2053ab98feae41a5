/*
 * ip.h (internal) — IPv4 input and output (ip_input.c, ip_output.c) and ICMP (icmp.c).
 */
#ifndef BRISK_NET_IP_H
#define BRISK_NET_IP_H

#include "net/net.h"
#include "net/iproute.h"
#include "wire/ipv4.h"


/* Looks up the route to dst: a directly connected prefix (longest first), else the default gateway.
 * Returns BRISK_OK or BRISK_ERR_NOROUTE. */
int brisk_ip_route(struct brisk_net *net, uint32_t dst, struct brisk_route *rt);

/* Sends pkt (pkt->data at the transport header, len = transport bytes) to dst: prepends the IPv4 header,
 * resolves the next hop and hands it to the device. Takes ownership of pkt in all cases. `rt` may be NULL
 * (looked up here). Returns BRISK_OK (sent or queued behind ARP), BRISK_ERR_NOROUTE, BRISK_ERR_MSGSIZE
 * (larger than the MTU and not a GSO packet), or the device's error. */
int brisk_ip_output(struct brisk_net *net, const struct brisk_route *rt, uint32_t dst, uint8_t proto,
                    uint8_t tos, brisk_pkt *pkt, uint64_t now);

/* Processes a received IPv4 datagram (the Ethernet payload). `l2_bcast`: it came to the broadcast MAC;
 * `rx_flags`: BRISK_RX_* from the device (netdev.h). */
void brisk_ip_input(struct brisk_net *net, brisk_netdev *dev, const uint8_t *p, size_t len, int l2_bcast,
                    unsigned rx_flags, uint64_t now);

/* ICMP (icmp.c). */
void brisk_icmp_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv4_repr *ip,
                      const uint8_t *p, size_t len, int bcast, uint64_t now);
/* Sends an ICMP error about the datagram `orig` (its IP header and at least 8 bytes after, when present),
 * subject to RFC 1122 §3.2.2's "never in reply to" rules and the rate limit. */
void brisk_icmp_send_error(struct brisk_net *net, uint8_t type, uint8_t code, const uint8_t *orig,
                           size_t orig_len, uint64_t now);
/* The public echo calls' bodies (brisk_icmp_set_echo_handler, brisk_icmp_echo_send in brisk.h). */
void brisk_icmp_echo_handler(struct brisk_net *net, brisk_echo_fn fn, void *ctx);
int brisk_icmp_echo_request(struct brisk_net *net, uint32_t dst, uint16_t id, uint16_t seq,
                            uint16_t payload_len, uint64_t now);

#endif
