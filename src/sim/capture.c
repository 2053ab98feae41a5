/*
 * capture.c — per-port packet capture to a classic pcap file with nanosecond timestamps.
 *
 * Format (the libpcap savefile format, as documented by tcpdump.org and draft-ietf-opsawg-pcap): a 24-byte
 * global header — magic 0xa1b23c4d (the nanosecond variant), version 2.4, zone 0, sigfigs 0, snaplen 65535,
 * linktype 1 (Ethernet) — then per frame a 16-byte record header (seconds, nanoseconds, captured length,
 * original length) and the bytes. Every field is written little-endian explicitly, not in host order, so a
 * capture is byte-identical on any machine; readers detect the byte order from the magic.
 *
 * Timestamps are the world's virtual time, and records are written from inside events in event order, so the
 * same seed and configuration give the same file byte for byte (docs/design.md principle 6). Writes go
 * through a large stdio buffer: no system call per frame. brisk_sim_world_free flushes and closes the file.
 *
 * Functions: brisk_sim_capture (opens a port's capture), brisk_sim_capture_write (one record),
 * brisk_sim_capture_close; brisk_sim_port_observe, the same two moments handed to a function instead of a
 * file (the lab's time-sequence graphs read the headers as the frames pass).
 */
#include <stdlib.h>

#include "sim/internal.h"

#define PCAP_MAGIC_NS          0xa1b23c4du
#define PCAP_SNAPLEN           65535u
#define PCAP_LINKTYPE_ETHERNET 1u
#define CAPTURE_BUF_BYTES      (1u << 16)

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

int brisk_sim_capture(brisk_sim_port *p, const char *path)
{
    return brisk_sim_capture_slice(p, path, UINT64_MAX, PCAP_SNAPLEN);
}

int brisk_sim_capture_slice(brisk_sim_port *p, const char *path, uint64_t max_frames, uint32_t snaplen)
{
    if (!p || !path || p->cap || snaplen < 14)
        return BRISK_ERR_INVAL;
    struct sim_capture *c = calloc(1, sizeof(*c));
    char *buf = malloc(CAPTURE_BUF_BYTES);
    if (!c || !buf) {
        free(c);
        free(buf);
        return BRISK_ERR_NOMEM;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(c);
        free(buf);
        return BRISK_ERR_NOENT;
    }
    setvbuf(f, buf, _IOFBF, CAPTURE_BUF_BYTES);
    uint8_t hdr[24];
    put_le32(hdr, PCAP_MAGIC_NS);
    put_le16(hdr + 4, 2);
    put_le16(hdr + 6, 4);
    put_le32(hdr + 8, 0);  /* thiszone: timestamps are UTC-less virtual time */
    put_le32(hdr + 12, 0); /* sigfigs */
    if (snaplen > PCAP_SNAPLEN)
        snaplen = PCAP_SNAPLEN;
    put_le32(hdr + 16, snaplen);
    put_le32(hdr + 20, PCAP_LINKTYPE_ETHERNET);
    fwrite(hdr, 1, sizeof(hdr), f);
    c->f = f;
    c->buf = buf;
    c->left = max_frames;
    c->snap = snaplen;
    p->cap = c;
    return BRISK_OK;
}

int brisk_sim_port_observe(brisk_sim_port *p, brisk_sim_observe_fn fn, void *ctx)
{
    if (!p || (fn && p->obs))
        return BRISK_ERR_INVAL;
    p->obs = fn;
    p->obs_ctx = fn ? ctx : NULL;
    return BRISK_OK;
}

void brisk_sim_capture_write(struct sim_capture *c, uint64_t t, const uint8_t *data, size_t len)
{
    if (c->left == 0)
        return;
    if (c->left != UINT64_MAX)
        c->left--;
    uint32_t orig = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    uint32_t incl = orig > c->snap ? c->snap : orig;
    uint8_t rec[16];
    put_le32(rec, (uint32_t)(t / BRISK_NSEC_PER_SEC));
    put_le32(rec + 4, (uint32_t)(t % BRISK_NSEC_PER_SEC));
    put_le32(rec + 8, incl);
    put_le32(rec + 12, orig);
    fwrite(rec, 1, sizeof(rec), c->f);
    fwrite(data, 1, incl, c->f);
}

void brisk_sim_capture_close(struct sim_capture *c)
{
    if (!c)
        return;
    fclose(c->f); /* flushes; the buffer must outlive the FILE */
    free(c->buf);
    free(c);
}
