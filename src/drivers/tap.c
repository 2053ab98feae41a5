/*
 * tap.c — the TAP driver (tap.h): a brisk netdev whose wire is a Linux TAP device, so its peer is the kernel.
 *
 * Opening. /dev/net/tun, TUNSETIFF with IFF_TAP | IFF_NO_PI | IFF_VNET_HDR (every frame is prefixed with a
 * virtio_net_hdr, vnet.c), TUNSETVNETHDRSZ 10, and TUNSETOFFLOAD with TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 when gso is on
 * — the kernel then accepts brisk's TSO super-frames and sends brisk its own (CAP_GSO | CAP_CSUM on the
 * netdev). The interface's MTU is set and the interface brought up in the caller's namespace.
 *
 * Transmit and the ring. The driver owns tx_ring descriptors. xmit puts the packet in the next one and, if
 * nothing waits before it, writes it at once (writev of the header and the frame: no copy in brisk). A
 * written packet's completion is due txc_delay_ns after the write; the driver's loop hook reports due
 * completions in FIFO order — never from inside xmit, which the stack calls in the middle of its own work. If
 * the kernel refuses a write (EAGAIN) the packet stays in its descriptor as backlog, the descriptor watch
 * adds writability, and the backlog goes out when the kernel has room; its completions then wake the stack's
 * refused senders (netdev.c). xmit answers BRISK_ERR_BUSY only when every descriptor is taken, like a NIC
 * whose queue is stopped.
 *
 * Receive. When the descriptor is readable, up to rx_budget frames are read, each into its own slot of a
 * batch (slots of one MTU frame, or of a 64 KB super-frame with gso: 64 or 16 of them), checked and
 * checksum-completed (vnet.c), and handed to the stack as one batch (brisk_stack_input_batch) whenever the
 * slots are full or the descriptor is empty: the stack's receive coalescing then joins a flow's in-order
 * frames, so it processes and acknowledges a burst of MTU frames at once — fewer ACKs, hence fewer writes.
 * Level-triggered epoll brings the driver back next iteration if more are queued, after the stack has had its
 * poll.
 *
 * Eager receive (request / response). Gathering costs a read that only says EAGAIN, and it costs it before
 * the stack sees the frame, so the answer (the next request, an ACK) leaves one system call later than it
 * could. When frames come one at a time that buys nothing, so the driver adapts, as NAPI does between
 * interrupts and polling: it counts the frames it finds queued back to back (read one after another with
 * nothing transmitted between them — a frame read right after brisk wrote may be the answer to that write,
 * and says nothing about a queue). If the last wakeup never found two, each frame goes to the stack as soon
 * as it is read; the answer is written; the driver then reads on (re-reading the clock, since the write may
 * have let the peer run), so that when the peer answers within that write — both ends on one CPU — the next
 * transaction needs no epoll_wait and no EAGAIN: one read and one write, as lwIP's harness does. Two frames
 * back to back switch gathering on again for the rest of the wakeup and the next one. An answer that took
 * the ring's last descriptor ends the wakeup: the next answer could not be written before the hook has
 * reported completions.
 *
 * Faults (fault.c). With a loss probability set, a super-frame is first cut into wire segments in software
 * (brisk_gso_segment, into a scratch buffer — no allocation) so that loss hits single wire segments, as on a
 * real lossy link, rather than 44-segment bursts. In that mode a segment the kernel refuses with EAGAIN is
 * counted and lost too (the super-frame cannot be half kept).
 *
 * Functions: brisk_tap_config_default / parse_cidr / open / close / getters (API), tap_xmit (the netdev op),
 * tx_write / tx_one / tx_flush (transmit), on_fd / rx_frame / rx_flush (receive), on_hook (completions).
 */
#define _GNU_SOURCE
#include "brisk/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "drivers/fault.h"
#include "drivers/vnet.h"
#include "net/gso.h"
#include "wire/eth.h"

#define RX_BUF_LEN  (BRISK_VNET_HDR_LEN + BRISK_ETH_HLEN + 65535 + 64)
#define SCRATCH_HDR 256 /* room for the longest headers beyond the MTU in a software-segmented frame */

struct brisk_tap {
    brisk_loop *loop;
    brisk_stack *st;
    brisk_netdev *dev;
    int fd;
    int hook;
    int offload;       /* TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 negotiated */
    unsigned watching; /* BRISK_LOOP_* events watched on fd */
    char ifname[IFNAMSIZ];
    struct brisk_tap_config cfg;
    struct brisk_fault fault;
    /* The ring: ring[(head + i) % cap] for i < count; the first nwritten were written (or dropped) and await
     * completion at due[], the rest wait to be written. */
    brisk_pkt **ring;
    uint64_t *due;
    uint32_t cap, head, count, nwritten;
    uint8_t *rxbuf; /* rx_slots slots of rx_slot_len bytes: one read each */
    size_t rx_slot_len;
    uint32_t rx_slots;
    struct brisk_rx_frame *rxv; /* the batch being gathered: rxn frames in the slots */
    uint32_t rxn;
    uint8_t *scratch; /* software segmentation, mtu + 14 + SCRATCH_HDR bytes */
    size_t scratch_len;
    uint64_t now; /* for the segmentation callbacks */
    int seg_eagain;
    int rx_eager;      /* hand each frame to the stack as soon as it is read (see Eager receive above) */
    uint64_t tx_calls; /* tap_xmit calls: did handing a frame to the stack make it transmit? */
    struct brisk_tap_stats stats;
};

static int tap_xmit(void *driver, brisk_pkt *pkt, uint64_t now);
static const struct brisk_netdev_ops tap_ops = {.xmit = tap_xmit};

void brisk_tap_config_default(struct brisk_tap_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    memcpy(c->ifname, "brisk0", 7);
    c->mtu = 1500;
    c->prefix_len = 24;
    c->gso = 1;
    c->gso_max_size = 65535;
    c->tx_ring = 256;
    c->rx_budget = 64;
}

int brisk_tap_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix_len)
{
    if (!s || !ip || !prefix_len)
        return BRISK_ERR_INVAL;
    char buf[32];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n == 0 || n >= sizeof(buf))
        return BRISK_ERR_INVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    uint32_t addr;
    if (brisk_ip_parse(buf, &addr) != BRISK_OK)
        return BRISK_ERR_INVAL;
    uint8_t plen = *prefix_len;
    if (slash) {
        const char *p = slash + 1;
        if (!*p || strlen(p) > 2)
            return BRISK_ERR_INVAL;
        unsigned v = 0;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return BRISK_ERR_INVAL;
            v = v * 10 + (unsigned)(*p - '0');
        }
        if (v < 1 || v > 32)
            return BRISK_ERR_INVAL;
        plen = (uint8_t)v;
    }
    *ip = addr;
    *prefix_len = plen;
    return BRISK_OK;
}

static void say(char *why, size_t why_len, const char *fmt, ...)
{
    if (!why || why_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* A locally administered unicast MAC from the interface name (FNV-1a), so runs are reproducible. */
static void derive_mac(const char *name, uint8_t mac[6])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    mac[0] = 0x02;
    mac[1] = 0x62; /* 'b' */
    for (int i = 2; i < 6; i++)
        mac[i] = (uint8_t)(h >> (8 * i));
}

static int mac_is_zero(const uint8_t mac[6])
{
    for (int i = 0; i < 6; i++)
        if (mac[i])
            return 0;
    return 1;
}

/* Sets the interface's MTU and brings it up, in the caller's namespace. */
static int iface_up(const char *name, uint32_t mtu, char *why, size_t why_len)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        say(why, why_len, "socket(AF_INET): %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    ifr.ifr_mtu = (int)mtu;
    if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
        say(why, why_len, "set MTU %u on %s: %s", mtu, name, strerror(errno));
        close(s);
        return -1;
    }
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
        say(why, why_len, "bring %s up: %s", name, strerror(errno));
        close(s);
        return -1;
    }
    close(s);
    return 0;
}

static int open_tun(brisk_tap *t, char *why, size_t why_len)
{
    t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (t->fd < 0) {
        say(why, why_len, "open /dev/net/tun: %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->cfg.ifname);
    if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
        say(why, why_len, "TUNSETIFF %s: %s", t->cfg.ifname, strerror(errno));
        return -1;
    }
    snprintf(t->ifname, sizeof(t->ifname), "%s", ifr.ifr_name);
    int hdrsz = BRISK_VNET_HDR_LEN;
    if (ioctl(t->fd, TUNSETVNETHDRSZ, &hdrsz) < 0) {
        say(why, why_len, "TUNSETVNETHDRSZ: %s", strerror(errno));
        return -1;
    }
    unsigned long off = t->cfg.gso ? (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) : 0;
    if (ioctl(t->fd, TUNSETOFFLOAD, off) < 0) {
        say(why, why_len, "TUNSETOFFLOAD: %s", strerror(errno));
        return -1;
    }
    t->offload = t->cfg.gso != 0;
    return iface_up(t->ifname, t->cfg.mtu, why, why_len);
}

static void on_fd(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now);
static uint64_t on_hook(void *ctx, brisk_loop *l, uint64_t now);

static int config_ok(const struct brisk_tap_config *c)
{
    return c->ifname[0] && memchr(c->ifname, '\0', sizeof(c->ifname)) && c->mtu >= 68 && c->mtu <= 65535 &&
           c->ip && c->prefix_len >= 1 && c->prefix_len <= 32 && c->tx_ring >= 1 && c->tx_ring <= 65536 &&
           c->rx_budget >= 1 && !(c->mac[0] & 1) && (!c->gso || c->gso_max_size >= c->mtu);
}

brisk_tap *brisk_tap_open(brisk_loop *loop, const struct brisk_tap_config *cfg, int *err, char *why,
                          size_t why_len)
{
    int dummy;
    if (!err)
        err = &dummy;
    if (why && why_len)
        why[0] = '\0';
    if (!loop || !cfg || !config_ok(cfg)) {
        say(why, why_len, "invalid TAP configuration (name, MTU 68-65535, IP and prefix 1-32 required)");
        *err = BRISK_ERR_INVAL;
        return NULL;
    }
    brisk_tap *t = calloc(1, sizeof(*t));
    if (!t) {
        *err = BRISK_ERR_NOMEM;
        return NULL;
    }
    t->fd = -1;
    t->hook = -1;
    t->loop = loop;
    t->st = brisk_loop_stack(loop);
    t->cfg = *cfg;
    if (t->cfg.gso_max_size > 65535)
        t->cfg.gso_max_size = 65535;
    t->cap = cfg->tx_ring;
    t->scratch_len = BRISK_VNET_HDR_LEN + BRISK_ETH_HLEN + cfg->mtu + SCRATCH_HDR;
    t->ring = calloc(t->cap, sizeof(*t->ring));
    t->due = calloc(t->cap, sizeof(*t->due));
    /* A batch of MTU frames is cheap; super-frames take 64 KB a slot, so fewer of them. */
    t->rx_slot_len = cfg->gso ? RX_BUF_LEN : BRISK_VNET_HDR_LEN + BRISK_ETH_HLEN + (size_t)cfg->mtu + 64;
    t->rx_slots = cfg->rx_budget < (cfg->gso ? 16u : 64u) ? cfg->rx_budget : (cfg->gso ? 16u : 64u);
    t->rxbuf = malloc(t->rx_slot_len * t->rx_slots);
    t->rxv = calloc(t->rx_slots, sizeof(*t->rxv));
    t->scratch = malloc(t->scratch_len);
    if (!t->ring || !t->due || !t->rxbuf || !t->rxv || !t->scratch) {
        *err = BRISK_ERR_NOMEM;
        goto fail;
    }
    if (brisk_fault_init(&t->fault, &cfg->fault) != BRISK_OK) {
        say(why, why_len, "loss probabilities must lie in [0, 1]");
        *err = BRISK_ERR_RANGE;
        goto fail;
    }
    uint32_t mask = cfg->prefix_len >= 32 ? 0xffffffffu : ~(0xffffffffu >> cfg->prefix_len);
    if (cfg->gateway && ((cfg->gateway ^ cfg->ip) & mask) != 0) {
        say(why, why_len, "gateway is not inside %u.%u.%u.%u/%u", cfg->ip >> 24, (cfg->ip >> 16) & 255,
            (cfg->ip >> 8) & 255, cfg->ip & 255, cfg->prefix_len);
        *err = BRISK_ERR_NOROUTE;
        goto fail; /* before any system call */
    }
    if (open_tun(t, why, why_len) < 0) {
        *err = BRISK_ERR_INVAL;
        goto fail;
    }
    /* Everything that can be undone first: the stack cannot forget a device once added. */
    int rc = brisk_loop_watch_fd(loop, t->fd, BRISK_LOOP_IN, on_fd, t);
    if (rc != BRISK_OK) {
        *err = rc;
        say(why, why_len, "cannot watch the TAP descriptor: %s", brisk_strerror(rc));
        goto fail;
    }
    t->watching = BRISK_LOOP_IN;
    t->hook = brisk_loop_add_hook(loop, on_hook, t);
    if (t->hook < 0) {
        *err = t->hook;
        say(why, why_len, "cannot add the TAP's loop hook: %s", brisk_strerror(*err));
        goto fail;
    }
    struct brisk_netdev_config nc;
    memset(&nc, 0, sizeof(nc));
    snprintf(nc.name, sizeof(nc.name), "%s", t->ifname);
    if (mac_is_zero(cfg->mac))
        derive_mac(t->ifname, nc.mac);
    else
        memcpy(nc.mac, cfg->mac, 6);
    nc.mtu = cfg->mtu;
    nc.caps = t->offload ? (BRISK_NETDEV_CAP_CSUM | BRISK_NETDEV_CAP_GSO) : 0;
    nc.gso_max_size = t->offload ? t->cfg.gso_max_size : 0;
    nc.ip = cfg->ip;
    nc.prefix_len = cfg->prefix_len;
    t->dev = brisk_netdev_add(t->st, &nc, &tap_ops, t, err);
    if (!t->dev) {
        say(why, why_len, "cannot add the device to the stack: %s", brisk_strerror(*err));
        goto fail;
    }
    if (cfg->gateway)
        brisk_stack_set_gateway(t->st, cfg->gateway); /* inside the device's prefix: cannot fail */
    *err = BRISK_OK;
    return t;

fail:
    if (t->hook >= 0)
        brisk_loop_remove_hook(loop, t->hook);
    if (t->fd >= 0) {
        brisk_loop_unwatch_fd(loop, t->fd); /* BRISK_ERR_NOENT if it was never watched */
        close(t->fd);
    }
    free(t->ring);
    free(t->due);
    free(t->rxbuf);
    free(t->rxv);
    free(t->scratch);
    free(t);
    return NULL;
}

void brisk_tap_close(brisk_tap *t)
{
    if (!t)
        return;
    if (t->fd >= 0) {
        brisk_loop_unwatch_fd(t->loop, t->fd);
        close(t->fd);
    }
    if (t->hook >= 0)
        brisk_loop_remove_hook(t->loop, t->hook);
    free(t->ring);
    free(t->due);
    free(t->rxbuf);
    free(t->rxv);
    free(t->scratch);
    free(t);
}

brisk_netdev *brisk_tap_netdev(const brisk_tap *t)
{
    return t ? t->dev : NULL;
}

const char *brisk_tap_ifname(const brisk_tap *t)
{
    return t ? t->ifname : "";
}

int brisk_tap_fd(const brisk_tap *t)
{
    return t ? t->fd : -1;
}

void brisk_tap_get_stats(const brisk_tap *t, struct brisk_tap_stats *out)
{
    if (t && out)
        *out = t->stats;
}

/* ----- transmit ----------------------------------------------------------------------------------------- */

enum { TX_DONE = 0, TX_AGAIN = 1 };

/* One writev of header + frame. TX_DONE when written or lost for good (counted), TX_AGAIN on EAGAIN. */
static int tx_write(brisk_tap *t, const uint8_t *hdr, const uint8_t *frame, size_t len, int gso)
{
    struct iovec iov[2] = {{.iov_base = (void *)hdr, .iov_len = BRISK_VNET_HDR_LEN},
                           {.iov_base = (void *)frame, .iov_len = len}};
    ssize_t n = writev(t->fd, iov, 2);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
            t->stats.tx_eagain++;
            return TX_AGAIN;
        }
        t->stats.tx_errors++;
        return TX_DONE;
    }
    t->stats.tx_frames++;
    t->stats.tx_bytes += len;
    if (gso)
        t->stats.tx_gso_frames++;
    return TX_DONE;
}

static void seg_emit(void *ctx, const uint8_t *frame, size_t len)
{
    brisk_tap *t = ctx;
    if (brisk_fault_drop_tx(&t->fault)) {
        t->stats.tx_fault_drops++;
        return;
    }
    static const uint8_t zero_hdr[BRISK_VNET_HDR_LEN];
    if (tx_write(t, zero_hdr, frame, len, 0) == TX_AGAIN)
        t->seg_eagain++;
}

/* Transmits one packet, or decides it is lost. */
static int tx_one(brisk_tap *t, brisk_pkt *pkt)
{
    if (t->cfg.fault.tx_loss > 0) {
        if (pkt->gso_size) { /* loss per wire segment: cut the super-frame here */
            t->seg_eagain = 0;
            int rc = brisk_gso_segment(pkt->data, pkt->len, pkt->gso_size,
                                       (pkt->flags & BRISK_PKT_CSUM_PARTIAL) != 0, t->scratch, t->scratch_len,
                                       seg_emit, t);
            if (rc < 0)
                t->stats.tx_errors++;
            return TX_DONE;
        }
        if (brisk_fault_drop_tx(&t->fault)) {
            t->stats.tx_fault_drops++;
            return TX_DONE;
        }
    }
    uint8_t hdr[BRISK_VNET_HDR_LEN];
    if (brisk_vnet_tx_hdr(pkt, t->offload, hdr) < 0) {
        t->stats.tx_errors++;
        return TX_DONE;
    }
    return tx_write(t, hdr, pkt->data, pkt->len, pkt->gso_size != 0);
}

static void watch(brisk_tap *t, unsigned events)
{
    if (t->watching != events && brisk_loop_modify_fd(t->loop, t->fd, events) == BRISK_OK)
        t->watching = events;
}

/* Writes the backlog in order until the kernel refuses; returns how many left the backlog. */
static uint32_t tx_flush(brisk_tap *t, uint64_t now)
{
    uint32_t moved = 0;
    while (t->nwritten < t->count) {
        uint32_t i = (t->head + t->nwritten) % t->cap;
        if (tx_one(t, t->ring[i]) == TX_AGAIN)
            break;
        t->due[i] = now + t->cfg.txc_delay_ns;
        t->nwritten++;
        moved++;
    }
    watch(t, t->nwritten < t->count ? (BRISK_LOOP_IN | BRISK_LOOP_OUT) : BRISK_LOOP_IN);
    return moved;
}

static int tap_xmit(void *driver, brisk_pkt *pkt, uint64_t now)
{
    brisk_tap *t = driver;
    t->tx_calls++;
    if (t->count == t->cap) {
        t->stats.tx_busy++;
        return BRISK_ERR_BUSY;
    }
    int was_idle = t->nwritten == 0;
    t->ring[(t->head + t->count) % t->cap] = pkt;
    t->count++;
    if (t->nwritten + 1 == t->count) /* nothing waits before it */
        tx_flush(t, now);
    if (t->hook >= 0 && (was_idle || t->cfg.txc_delay_ns == 0))
        brisk_loop_wake_hook(t->loop, t->hook);
    return BRISK_OK;
}

/* ----- completions -------------------------------------------------------------------------------------- */

static uint64_t on_hook(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)l;
    brisk_tap *t = ctx;
    while (t->nwritten > 0 && t->due[t->head] <= now) {
        brisk_pkt *pkt = t->ring[t->head];
        t->head = (t->head + 1) % t->cap;
        t->count--;
        t->nwritten--;
        t->stats.tx_completions++;
        brisk_netdev_tx_done(t->dev, pkt, now);
    }
    return t->nwritten > 0 ? t->due[t->head] : BRISK_TIME_NONE;
}

/* ----- receive ------------------------------------------------------------------------------------------ */

static void seg_input(void *ctx, const uint8_t *frame, size_t len)
{
    brisk_tap *t = ctx;
    if (brisk_fault_drop_rx(&t->fault)) {
        t->stats.rx_fault_drops++;
        return;
    }
    brisk_stack_input(t->st, t->dev, frame, len, t->now);
}

/* Hands the frames gathered so far to the stack, as one batch. */
static void rx_flush(brisk_tap *t, uint64_t now)
{
    if (!t->rxn)
        return;
    t->stats.rx_batches++;
    brisk_stack_input_batch(t->st, t->dev, t->rxv, t->rxn, now);
    t->rxn = 0;
}

/* The frame just read into slot t->rxn: checked, then added to the batch (or segmented and lost per wire
 * segment under a fault's loss). */
static void rx_frame(brisk_tap *t, size_t n, uint64_t now)
{
    uint8_t *buf = t->rxbuf + (size_t)t->rxn * t->rx_slot_len;
    struct brisk_vnet_rx info;
    int len = brisk_vnet_rx(buf, n, &info);
    if (len < 0) {
        t->stats.rx_errors++;
        return;
    }
    const uint8_t *frame = buf + BRISK_VNET_HDR_LEN;
    t->stats.rx_frames++;
    t->stats.rx_bytes += (uint64_t)len;
    t->stats.rx_gso_frames += info.gso ? 1u : 0u;
    t->stats.rx_csum_valid += info.csum_valid ? 1u : 0u;
    if (t->cfg.fault.rx_loss > 0) {
        if (info.gso && info.gso_size) { /* loss per wire segment, as on transmit */
            rx_flush(t, now);            /* what came before goes first */
            t->now = now;
            if (brisk_gso_segment(frame, (size_t)len, info.gso_size, 0, t->scratch, t->scratch_len, seg_input,
                                  t) < 0)
                t->stats.rx_errors++;
            return;
        }
        if (brisk_fault_drop_rx(&t->fault)) {
            t->stats.rx_fault_drops++;
            return;
        }
    }
    struct brisk_rx_frame *f = &t->rxv[t->rxn++];
    f->data = frame;
    f->len = (size_t)len;
    f->flags = info.csum_valid ? BRISK_RX_CSUM_VALID : 0u;
}

static void on_fd(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    brisk_tap *t = ctx;
    if ((ready & BRISK_LOOP_OUT) && t->nwritten < t->count) {
        if (tx_flush(t, now) > 0 && t->hook >= 0)
            brisk_loop_wake_hook(t->loop, t->hook);
    }
    if (!(ready & (BRISK_LOOP_IN | BRISK_LOOP_ERR)))
        return;
    uint32_t run = 0, longest = 0; /* frames read back to back, with nothing transmitted between them */
    for (uint32_t i = 0; i < t->cfg.rx_budget; i++) {
        ssize_t n = read(fd, t->rxbuf + (size_t)t->rxn * t->rx_slot_len, t->rx_slot_len);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                t->stats.rx_errors++;
            break;
        }
        if (++run > longest)
            longest = run;
        rx_frame(t, (size_t)n, now);
        if (t->rxn == t->rx_slots) {
            rx_flush(t, now);
            /* Processing the batch took real time, and what it sent was stamped `now`: frames read after it
             * must not be, or an ACK of that data would time its round trip as nearly zero (a min_rtt of a
             * few microseconds, which RACK's reordering window and TSO sizing take as the path's). */
            now = brisk_loop_update_now(l);
        } else if (t->rx_eager && run < 2) {
            uint64_t calls = t->tx_calls;
            rx_flush(t, now);
            if (t->tx_calls != calls) { /* it answered: what comes next may be the peer's reply */
                if (t->count == t->cap)
                    break; /* no descriptor left for the next answer: let the hook complete some first */
                run = 0;
                now = brisk_loop_update_now(l);
            }
        }
    }
    rx_flush(t, now);
    t->rx_eager = longest < 2;
}
