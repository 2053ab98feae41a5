/*
 * fuzz_ipfrag.c — IPv4 reassembly (src/net/ipfrag.c) under any sequence of fragments: orders, overlaps,
 * duplicates, contradicting ends, offsets up to 65,528, empty and odd-sized fragments, identifiers and
 * sources that collide or not, time passing (timeouts, with their ICMP errors), a memory bound small enough
 * to be hit, under brisk's eviction and under Linux's refusal. The fragments are built here, headers and
 * checksums right, so every input reaches reassembly; what reassembles goes on to ICMP or TCP.
 *
 * Input: [mode u8][tlen u16][template: tlen bytes] then records [delay u16][id u8][flags u8][off u16][len u16]
 * (big-endian):
 *   mode   bit 0: linux-6.x's rule when memory is full (ipfrag_evict=0); bit 1: ipfrag_high_thresh 16 KB
 *          (else 4 MB); bit 2: the template is a TCP segment from the peer and its checksum is filled in,
 *          so that reassembling it reaches the connection; bit 3: a listener only (else an accepted
 *          connection from FH_PEER_PORT).
 *   delay  milliseconds of virtual time to run first (ipfrag_time is 2 s here).
 *   flags  bit 0 MF; bit 1 DF; bits 2-3 the protocol (TCP, ICMP, UDP, 99); bit 4 from 10.0.0.3 instead of
 *          the peer; bit 5 to the subnet's broadcast address.
 *   off    the fragment offset field (its low 13 bits, units of 8 bytes); len: payload bytes (at most 1480).
 *   The fragment carries template[off * 8, off * 8 + len), zeros past the template's end.
 * After every record the harness's invariants and brisk_ipfrag_check hold, and the memory held stays within
 * the bound (by one fragment under Linux's rule); at the end everything is freed (ASan: no leak).
 * BRISK_FUZZ_TRACE=1 prints the reassembly counters of each input (for writing seeds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "net/ipfrag.h"
#include "stack/stack.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define MAX_RECORDS 512
#define TEMPLATE_MAX 4096

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    unsigned mode = data[0];
    size_t tlen = brisk_get16(data + 1);
    if (tlen > TEMPLATE_MAX)
        tlen = TEMPLATE_MAX;
    if (tlen > size - 3)
        tlen = size - 3;
    static uint8_t tpl[TEMPLATE_MAX];
    memcpy(tpl, data + 3, tlen);
    if ((mode & 4) && tlen >= BRISK_TCP_HLEN)
        brisk_tcp_csum_fill(tpl, tlen, FH_PEER_IP, FH_LOCAL_IP);
    size_t off = 3 + tlen;

    char thresh[48];
    strcpy(thresh, (mode & 2) ? "ipfrag_high_thresh=16K" : "ipfrag_high_thresh=4M");
    struct fh h;
    fh_init_with(&h, (mode & 8) ? FH_LISTEN : FH_PASSIVE, "ipfrag_time=2s");
    /* The harness takes one extra setting: the rest are set on the live stack's copy before any fragment. */
    if (brisk_settings_set(&h.st->net.s, thresh) != BRISK_OK ||
        brisk_settings_set(&h.st->net.s, (mode & 1) ? "ipfrag_evict=0" : "ipfrag_evict=1") != BRISK_OK)
        fh_fail("settings");
    uint64_t high = h.st->net.s.ipfrag_high_thresh;

    static const uint8_t protos[4] = {BRISK_IP_PROTO_TCP, BRISK_IP_PROTO_ICMP, BRISK_IP_PROTO_UDP, 99};
    for (unsigned n = 0; n < MAX_RECORDS && off + 8 <= size; n++, off += 8) {
        const uint8_t *r = data + off;
        uint16_t delay = brisk_get16(r);
        uint8_t id = r[2], fl = r[3];
        uint32_t foff = (uint32_t)(brisk_get16(r + 4) & 0x1fff) * 8;
        uint32_t len = brisk_get16(r + 6) % 1481;
        fh_run(&h, h.now + (uint64_t)delay * BRISK_NSEC_PER_MSEC);

        uint8_t payload[1480];
        memset(payload, 0, len);
        if (foff < tlen)
            memcpy(payload, tpl + foff, tlen - foff < len ? tlen - foff : len);
        uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + 1480];
        uint32_t src = (fl & 0x10) ? IP4(10, 0, 0, 3) : FH_PEER_IP;
        uint32_t dst = (fl & 0x20) ? IP4(10, 0, 0, 255) : FH_LOCAL_IP;
        size_t flen = fakedev_ipv4_frame(frame, h.f.cfg.mac, peer_mac, src, dst, protos[(fl >> 2) & 3], payload,
                                         len);
        struct brisk_ipv4_repr ip;
        if (brisk_ipv4_parse(frame + BRISK_ETH_HLEN, flen - BRISK_ETH_HLEN, &ip) < 0)
            fh_fail("ipfrag: the harness built a bad header");
        ip.id = (uint16_t)(0x100 + id);
        ip.mf = fl & 1;
        ip.df = (fl >> 1) & 1;
        ip.frag_off = (uint16_t)foff;
        brisk_ipv4_emit(frame + BRISK_ETH_HLEN, &ip);
        fh_input(&h, frame, flen, 0);

        fh_check(&h);
        int rc = brisk_ipfrag_check(h.st->net.ipfrag);
        if (rc)
            fh_fail("ipfrag: brisk_ipfrag_check %d after record %u", rc, n);
        uint64_t mem = brisk_ipfrag_mem(h.st->net.ipfrag);
        if (mem > high + ((mode & 1) ? 2048 : 0))
            fh_fail("ipfrag: %llu bytes held, bound %llu", (unsigned long long)mem, (unsigned long long)high);
    }
    if (getenv("BRISK_FUZZ_TRACE")) {
        struct brisk_counters c;
        brisk_stack_get_counters(h.st, &c);
        fprintf(stderr, "ipfrag: reqds %llu oks %llu fails %llu timeout %llu overlaps %llu; tcp in %llu; "
                        "time exceeded %llu; echo replies %llu\n",
                (unsigned long long)c.IpReasmReqds, (unsigned long long)c.IpReasmOKs,
                (unsigned long long)c.IpReasmFails, (unsigned long long)c.IpReasmTimeout,
                (unsigned long long)c.IpReasmOverlaps, (unsigned long long)c.TcpInSegs,
                (unsigned long long)c.IcmpOutTimeExcds, (unsigned long long)c.IcmpOutEchoReps);
    }
    fh_finish(&h);
    return 0;
}
