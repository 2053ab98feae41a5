/*
 * ipfrag.h (internal) — IP reassembly for both families (ipfrag.c): fragments held per datagram until it is
 * whole, bounded in bytes and in time. IPv4's datagrams are keyed by (source, destination, identification,
 * protocol) and bounded by ipfrag_high_thresh and ipfrag_time; IPv6's by (source, destination,
 * identification, and the device for a link-local or multicast destination) and bounded by
 * ip6frag_high_thresh and ip6frag_time. Each family has its own table (net->ipfrag, net->ip6frag).
 */
#ifndef BRISK_NET_IPFRAG_H
#define BRISK_NET_IPFRAG_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"

struct brisk_ipfrag;

/* The stack's two reassembly tables (net->ipfrag, net->ip6frag): BRISK_OK or BRISK_ERR_NOMEM. destroy frees
 * every datagram still held (their timers are cancelled) and is safe on a stack whose init failed. */
int brisk_ipfrag_init(struct brisk_net *net);
void brisk_ipfrag_destroy(struct brisk_net *net);

/* IPv4: takes the fragment p[0, ip->total_len) (parsed into ip; for us, brisk_ipv4_is_fragment) at `now`;
 * `bcast`: it came to a broadcast address (no ICMP error is sent about it).
 * Returns NULL while the datagram is incomplete or when the fragment (or its whole datagram) was dropped,
 * or the whole datagram: a malloc'ed IPv4 header (the first fragment's, options included, with total
 * length, flags and offset fixed and a fresh checksum) followed by the payload, *len its length. The caller
 * delivers it as any other datagram and frees it. */
uint8_t *brisk_ipfrag_input(struct brisk_net *net, const struct brisk_ipv4_repr *ip, const uint8_t *p,
                            int bcast, size_t *len, uint64_t now);

/* IPv6: takes the fragment p[0, end) that came on dev (ip its fixed header, x the walker's report of it:
 * x->frag && !x->frag_atomic, the chain well-formed and not discarded; `l2_mcast`: it came to a multicast
 * MAC). The same return as IPv4's: NULL, or the whole packet, malloc'ed — the first fragment's
 * unfragmentable part with the payload length set and the fragment header gone (the Next Header that named
 * it now names what the first fragment's fragment header named, RFC 8200 §4.5), then the fragmentable
 * part; *len its length. */
uint8_t *brisk_ip6frag_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                             const struct brisk_ipv6_ext *x, const uint8_t *p, size_t end, int l2_mcast,
                             size_t *len, uint64_t now);

/* Bytes charged to the table's bound now, and datagrams in reassembly (for tests, tools and the fuzzer);
 * fr is net->ipfrag or net->ip6frag (NULL: 0). */
uint64_t brisk_ipfrag_mem(const struct brisk_ipfrag *fr);
uint32_t brisk_ipfrag_queues(const struct brisk_ipfrag *fr);

/* Checks a table's invariants (each datagram's fragments ordered and disjoint, its byte count and charge,
 * the totals, the hash chains and the age list, every timer armed). O(fragments): for tests and the fuzzer.
 * 0 when consistent, else a negative number naming the first broken invariant. */
int brisk_ipfrag_check(const struct brisk_ipfrag *fr);

#endif
