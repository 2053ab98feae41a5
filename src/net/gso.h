/*
 * gso.h — software segmentation of TCP super-frames: what a NIC with TSO does, for devices that cannot.
 */
#ifndef BRISK_NET_GSO_H
#define BRISK_NET_GSO_H

#include <stddef.h>
#include <stdint.h>

/* Receives one wire frame; `frame` is only valid during the call (the next frame reuses the buffer). */
typedef void (*brisk_gso_emit_fn)(void *ctx, const uint8_t *frame, size_t len);

/* Cuts `frame` — one Ethernet + IPv4 (or IPv6) + TCP super-frame whose TCP payload may exceed gso_size — into
 * frames of at most gso_size payload bytes each, builds them one at a time in `scratch` and hands each to
 * `emit`, in order. Each frame carries a copy of the Ethernet, IP (IPv4 options included; IPv6's fixed header,
 * TCP directly behind it) and TCP (options included) headers with: IPv4 total length, id = original id + i
 * and header checksum set, or IPv6's payload length; TCP sequence number
 * advanced; FIN and PSH only on the last frame, CWR only on the first; the urgent pointer rebased (URG
 * cleared once the urgent data lies behind); and a full TCP checksum. The input's TCP checksum is not read,
 * so it may be complete or a CHECKSUM_PARTIAL seed (`csum_partial` says which; either way the output is the
 * same). A frame whose payload fits gso_size comes out once, checksum completed.
 *
 * The input must be well formed: its IPv4 header is parsed with brisk_ipv4_parse (checksum included), its
 * TCP header with brisk_tcp_parse. scratch must not overlap frame. Nothing is emitted unless all checks pass.
 * Returns the number of frames, or a negative BRISK_WIRE_* reason from those parsers, or BRISK_ERR_INVAL
 * (brisk.h): NULL argument, gso_size 0, neither IPv4 nor IPv6, not TCP (an IPv6 extension header), an IPv4
 * fragment, a SYN or RST that would need
 * cutting, or scratch_len shorter than the headers plus min(payload, gso_size). Note BRISK_ERR_INVAL ==
 * BRISK_WIRE_TRUNCATED (-1). */
int brisk_gso_segment(const uint8_t *frame, size_t len, uint16_t gso_size, int csum_partial, uint8_t *scratch,
                      size_t scratch_len, brisk_gso_emit_fn emit, void *ctx);

/* One wire frame in two pieces: its headers (in the caller's header buffer, valid during the call) and its
 * payload (a slice of the super-frame). `csum_start` is the offset of the TCP header in hdrs. */
struct brisk_gso_piece {
    const uint8_t *hdrs;
    size_t hdr_len;
    const uint8_t *payload;
    size_t payload_len;
    uint16_t csum_start, csum_offset;
};
typedef void (*brisk_gso_piece_fn)(void *ctx, const struct brisk_gso_piece *piece);

/* Flags for brisk_gso_cut. */
#define BRISK_GSO_CSUM_PARTIAL 0x1u /* leave each frame's TCP checksum as the pseudo-header sum (offload) */

/* The same cut without assembling frames: the headers of each frame are built in `hdrbuf` (hdrbuf_len >= the
 * super-frame's headers) and handed over beside the payload slice, so a caller that copies the frame anyway
 * (a NIC model writing it to the wire) copies each payload byte once. With BRISK_GSO_CSUM_PARTIAL each TCP
 * checksum field holds that frame's pseudo-header sum, as a CHECKSUM_PARTIAL packet does, and the caller
 * completes it (csum_start / csum_offset) or hands the frame on to something that trusts it; otherwise the
 * checksum is complete. Same checks and return values as brisk_gso_segment. */
int brisk_gso_cut(const uint8_t *frame, size_t len, uint16_t gso_size, unsigned flags, uint8_t *hdrbuf,
                  size_t hdrbuf_len, brisk_gso_piece_fn emit, void *ctx);

#endif
