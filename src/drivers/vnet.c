/*
 * vnet.c — virtio_net_hdr, the offload contract between a TAP device opened with IFF_VNET_HDR and its user
 * (Linux include/uapi/linux/virtio_net.h; virtio 1.x spec §5.1.6 "Device Operation").
 *
 * Transmit (brisk -> kernel). With TUN_F_CSUM | TUN_F_TSO4 negotiated, brisk hands the kernel what it hands
 * an offloading NIC: a CHECKSUM_PARTIAL packet becomes flags = NEEDS_CSUM with csum_start (from the start of
 * the Ethernet frame) and csum_offset (of the field inside the TCP header), and a TSO super-frame also gets
 * gso_type = TCPV4 (TCPV6 for an IPv6 frame), gso_size = payload bytes per wire segment and hdr_len = bytes of headers repeated in each
 * segment. The kernel then segments (or, delivering locally, does not need to) and completes the checksum.
 * Without offloads the kernel expects finished frames, so a partial checksum is completed here.
 *
 * Receive (kernel -> brisk). With offloads on, the kernel may hand brisk GRO'd super-frames (gso_type set;
 * their IPv4 total length covers the whole super-frame, which brisk's TCP takes as one segment) and frames
 * whose checksum it never computed (NEEDS_CSUM: the field holds the pseudo-header sum). The header comes
 * from the kernel but the frame's offsets are checked as if hostile: csum_start and csum_offset must put the
 * two checksum bytes inside the frame, after the Ethernet header. The completed checksum is then verified
 * again by brisk's TCP like any other — the driver gives no "already verified" shortcut (DATA_VALID is
 * ignored), so a lying header cannot smuggle a corrupt segment in.
 *
 * A TAP's header is in the host's byte order unless TUNSETVNETLE / TUNSETVNETBE were used, which brisk does
 * not do; the fields are therefore copied in native order.
 */
#include "drivers/vnet.h"

#include <linux/virtio_net.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/eth.h"

_Static_assert(sizeof(struct virtio_net_hdr) == BRISK_VNET_HDR_LEN, "virtio_net_hdr is 10 bytes");

int brisk_vnet_tx_hdr(brisk_pkt *pkt, int offload, uint8_t *hdr)
{
    struct virtio_net_hdr h;
    memset(&h, 0, sizeof(h));
    int partial = (pkt->flags & BRISK_PKT_CSUM_PARTIAL) != 0;
    size_t len = pkt->len;
    if (partial && ((size_t)pkt->csum_start + pkt->csum_offset + 2 > len || pkt->csum_start < BRISK_ETH_HLEN))
        return BRISK_VNET_BAD_CSUM;
    if (!offload) {
        if (pkt->gso_size)
            return BRISK_VNET_NO_OFFLOAD;
        if (partial)
            brisk_csum_complete_partial(pkt->data, len, pkt->csum_start, pkt->csum_offset);
        memcpy(hdr, &h, sizeof(h));
        return 0;
    }
    if (partial) {
        h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
        h.csum_start = pkt->csum_start;
        h.csum_offset = pkt->csum_offset;
    }
    if (pkt->gso_size) {
        /* csum_start is the TCP header: its data offset gives the headers every segment repeats. */
        if (!partial || (size_t)pkt->csum_start + 13 >= len)
            return BRISK_VNET_BAD_GSO;
        size_t hdr_len = (size_t)pkt->csum_start + (size_t)(pkt->data[pkt->csum_start + 12] >> 4) * 4;
        if (hdr_len > len)
            return BRISK_VNET_BAD_GSO;
        /* The frame's EtherType says which: IPv6 super-frames are TSO6's (TUN_F_TSO6). */
        int v6 = len >= BRISK_ETH_HLEN && pkt->data[12] == 0x86 && pkt->data[13] == 0xdd;
        h.gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
        h.gso_size = pkt->gso_size;
        h.hdr_len = (uint16_t)hdr_len;
    }
    memcpy(hdr, &h, sizeof(h));
    return 0;
}

int brisk_vnet_rx(const uint8_t *buf, size_t n, struct brisk_vnet_rx *info)
{
    struct brisk_vnet_rx dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof(*info));
    if (n < BRISK_VNET_HDR_LEN + BRISK_ETH_HLEN || n - BRISK_VNET_HDR_LEN > 0x7fffffff)
        return BRISK_VNET_SHORT;
    struct virtio_net_hdr h;
    memcpy(&h, buf, sizeof(h));
    size_t len = n - BRISK_VNET_HDR_LEN;
    if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
        /* Built by the kernel's own stack with checksum offload and never on a wire: nothing to verify (as a
         * Linux virtio-net guest treats it, CHECKSUM_PARTIAL). The offsets are still checked, so a frame
         * whose header lies is dropped rather than trusted. */
        size_t start = h.csum_start, off = h.csum_offset;
        if (start < BRISK_ETH_HLEN || start > len || off > len - start || len - start - off < 2)
            return BRISK_VNET_BAD_CSUM;
        info->csum_valid = 1;
    } else if (h.flags & VIRTIO_NET_HDR_F_DATA_VALID) {
        info->csum_valid = 1; /* the kernel (or the NIC below it) verified it */
    }
    info->gso = (h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_NONE;
    info->gso_size = info->gso ? h.gso_size : 0;
    return (int)len;
}
