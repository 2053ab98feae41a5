/*
 * ipfrag.h (internal) — IPv4 reassembly (ipfrag.c): fragments held per (source, destination,
 * identification, protocol) until the datagram is whole, bounded by ipfrag_high_thresh bytes and
 * ipfrag_time.
 */
#ifndef BRISK_NET_IPFRAG_H
#define BRISK_NET_IPFRAG_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "wire/ipv4.h"

struct brisk_ipfrag;

/* The stack's reassembly state (net->ipfrag): BRISK_OK or BRISK_ERR_NOMEM. destroy frees every datagram
 * still held (their timers are cancelled) and is safe on a stack whose init failed. */
int brisk_ipfrag_init(struct brisk_net *net);
void brisk_ipfrag_destroy(struct brisk_net *net);

/* Takes the fragment p[0, ip->total_len) (parsed into ip; for us, brisk_ipv4_is_fragment) at `now`;
 * `bcast`: it came to a broadcast address (no ICMP error is sent about it).
 * Returns NULL while the datagram is incomplete or when the fragment (or its whole datagram) was dropped,
 * or the whole datagram: a malloc'ed IPv4 header (the first fragment's, options included, with total
 * length, flags and offset fixed and a fresh checksum) followed by the payload, *len its length. The caller
 * delivers it as any other datagram and frees it. */
uint8_t *brisk_ipfrag_input(struct brisk_net *net, const struct brisk_ipv4_repr *ip, const uint8_t *p,
                            int bcast, size_t *len, uint64_t now);

/* Bytes charged to ipfrag_high_thresh now, and datagrams in reassembly (for tests, tools and the fuzzer). */
uint64_t brisk_ipfrag_mem(const struct brisk_net *net);
uint32_t brisk_ipfrag_queues(const struct brisk_net *net);

/* Checks the reassembly state's invariants (each datagram's fragments ordered and disjoint, its byte count
 * and charge, the totals, the hash chains and the age list, every timer armed). O(fragments): for tests and
 * the fuzzer. 0 when consistent, else a negative number naming the first broken invariant. */
int brisk_ipfrag_check(const struct brisk_net *net);

#endif
