/*
 * nic.c — simulated NICs: a TX ring, segmentation and checksum offload, TX-completion models, and the glue
 * that makes the NIC a brisk netdev (netdev.h).
 *
 * The TX ring is what makes completion timing matter (docs/design.md principle 3). A packet accepted by xmit
 * holds one of `tx_ring` descriptors until its completion is reported with brisk_netdev_tx_done(); a full
 * ring refuses packets with BRISK_ERR_BUSY, as a driver whose queue is stopped would. xmit turns the packet
 * into wire frames — cut into MSS frames by brisk_gso_cut when it is a super-frame and the NIC has CAP_GSO,
 * checksum completed when it is CHECKSUM_PARTIAL and the NIC has CAP_CSUM, padded to the 60-byte Ethernet
 * minimum — and copies them into the link's queue, so the packet itself is untouched until completion.
 *
 * Checksum offload is modelled lazily: the frame keeps the stack's pseudo-header seed and a note of where
 * the checksum goes (sim_frame.csum, SIM_CSUM_PENDING), and the checksum is computed when something looks at
 * the bytes — a capture, a corrupting or inspecting impairment, a receiver without CAP_CSUM. A receiving NIC
 * with CAP_CSUM hands a frame its peer's offload produced, and no link corrupted, to its stack as
 * checksum-valid, so neither the "hardware" nor the receiving stack spends CPU on a checksum that cannot
 * fail: the simulator's cost stays the stacks' cost, as it is for two stacks joined by a veth pair.
 *
 * A descriptor is "done" when the last of its wire frames has finished serializing (or was dropped at the
 * queue, which a real NIC would never see, but then the frame is just as done). When it is reported depends
 * on the completion model:
 *   IMMEDIATE  at that moment — an ideal NIC with per-packet TX interrupts;
 *   DELAY D    D later — a slow completion path such as Xen netfront's dom0 round trip (seed 001);
 *   COALESCE   in batches: all pending descriptors at once when `frames` wire frames are pending, or
 *              timeout_ns after the oldest pending one became done — mvneta's or mlx4's TX-done coalescing
 *              (seed 003), which starves a flow whose in-flight budget is below the frame threshold.
 * A completion is always its own event, never a call made from inside the stack's xmit. A NIC whose port is
 * not connected drops what it is given and completes it at once.
 *
 * Functions: brisk_sim_nic_add / nic_config_default / nic_stats / port_netdev / txc_parse (API),
 * brisk_sim_nic_xmit (the netdev op), emit_frame and gso_emit (wire frames), brisk_sim_nic_frame_done and
 * desc_done (completion scheduling), brisk_sim_nic_on_txc / on_batch (completion events), brisk_sim_nic_rx.
 */
#include <stdlib.h>
#include <string.h>

#include "net/gso.h"
#include "sim/internal.h"
#include "wire/csum.h"

/* Headers of a GSO segment at most: Ethernet, IPv4 and TCP, both with the longest options. */
#define GSO_MAX_HDRS (14 + 60 + 60)

static const struct brisk_netdev_ops nic_ops = {.xmit = brisk_sim_nic_xmit};

void brisk_sim_nic_config_default(struct brisk_sim_nic_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    memcpy(c->dev.name, "eth0", 5);
    c->dev.mtu = 1500;
    c->dev.gso_max_size = 65535;
    c->dev.prefix_len = 24;
    c->tx_ring = 1024;
    c->txc.model = BRISK_SIM_TXC_IMMEDIATE;
}

static int txc_valid(const struct brisk_sim_txc *t)
{
    switch (t->model) {
    case BRISK_SIM_TXC_IMMEDIATE:
    case BRISK_SIM_TXC_DELAY:
        return 1;
    case BRISK_SIM_TXC_COALESCE:
        return t->frames >= 1;
    }
    return 0;
}

static int mac_is_zero(const uint8_t *mac)
{
    for (int i = 0; i < 6; i++)
        if (mac[i])
            return 0;
    return 1;
}

brisk_sim_port *brisk_sim_nic_add_ip(brisk_sim_host *h, uint32_t ip, uint8_t prefix_len, uint32_t caps)
{
    struct brisk_sim_nic_config c;
    brisk_sim_nic_config_default(&c);
    c.dev.ip = ip;
    c.dev.prefix_len = prefix_len;
    c.dev.caps = caps;
    return brisk_sim_nic_add(h, &c);
}

brisk_sim_port *brisk_sim_nic_add(brisk_sim_host *h, const struct brisk_sim_nic_config *c)
{
    struct brisk_sim_nic_config dflt;
    if (!h)
        return NULL;
    if (!c) {
        brisk_sim_nic_config_default(&dflt);
        c = &dflt;
    }
    if (c->tx_ring < 1 || c->tx_ring > SIM_TX_RING_MAX || !txc_valid(&c->txc) ||
        c->rx_batch > SIM_RX_BATCH_MAX)
        return NULL;
    brisk_sim_world *w = h->w;
    brisk_sim_port *p = calloc(1, sizeof(*p));
    struct sim_nic *n = calloc(1, sizeof(*n));
    struct sim_desc *descs = calloc(c->tx_ring, sizeof(*descs));
    size_t scratch_len =
        (c->dev.caps & BRISK_NETDEV_CAP_GSO) ? GSO_MAX_HDRS : 0; /* headers only: brisk_gso_cut */
    uint8_t *scratch = scratch_len ? malloc(scratch_len) : NULL;
    struct brisk_rx_frame *rxv = c->rx_batch ? calloc(c->rx_batch, sizeof(*rxv)) : NULL;
    struct sim_frame **rxf = c->rx_batch ? calloc(c->rx_batch, sizeof(*rxf)) : NULL;
    uint64_t nev = 1 + (uint64_t)c->tx_ring; /* completion batch, descriptors */
    if (!p || !n || !descs || (scratch_len && !scratch) || (c->rx_batch && (!rxv || !rxf)) ||
        brisk_sim_reserve(w, nev)) {
        free(p);
        free(n);
        free(descs);
        free(scratch);
        free(rxv);
        free(rxf);
        return NULL;
    }
    n->cfg = *c;
    if (mac_is_zero(n->cfg.dev.mac)) {
        /* Locally administered unicast, from the host and NIC index: unique in the world, reproducible. */
        const uint8_t mac[6] = {
            0x02, 0x00, 0x00, (uint8_t)(h->index >> 8), (uint8_t)h->index, (uint8_t)(h->nnics + 1)};
        memcpy(n->cfg.dev.mac, mac, 6);
    }
    int err;
    n->dev = brisk_netdev_add(h->st, &n->cfg.dev, &nic_ops, n, &err);
    if (!n->dev) {
        w->ev_objects -= nev;
        free(p);
        free(n);
        free(descs);
        free(scratch);
        free(rxv);
        free(rxf);
        return NULL;
    }
    n->port = p;
    n->host = h;
    n->descs = descs;
    for (uint32_t i = c->tx_ring; i-- > 0;) {
        descs[i].ev.type = SIM_EV_TXC;
        descs[i].ev.heap_idx = SIM_EV_IDLE;
        descs[i].nic = n;
        descs[i].next = n->free_descs;
        n->free_descs = &descs[i];
    }
    n->batch.type = SIM_EV_TXC_BATCH;
    n->batch.heap_idx = SIM_EV_IDLE;
    n->rxpoll.type = SIM_EV_RX_POLL;
    n->rxpoll.heap_idx = SIM_EV_IDLE;
    n->rxv = rxv;
    n->rxf = rxf;
    n->scratch = scratch;
    n->scratch_len = scratch_len;
    n->tx_done = brisk_netdev_tx_done;

    p->w = w;
    p->kind = SIM_PORT_NIC;
    snprintf(p->name, sizeof(p->name), "%s.%.15s", h->name, n->cfg.dev.name);
    p->nic = n;
    if (w->ports_tail)
        w->ports_tail->next = p;
    else
        w->ports = p;
    w->ports_tail = p;
    h->nnics++;
    brisk_sim_frame_size_hint(w, (size_t)c->dev.mtu + 14);
    brisk_sim_host_touch(h); /* the stack may have something to say on a new device */
    return p;
}

brisk_netdev *brisk_sim_port_netdev(brisk_sim_port *p)
{
    return p && p->nic ? p->nic->dev : NULL;
}

void brisk_sim_nic_stats(const brisk_sim_port *p, struct brisk_sim_nic_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!p)
        return;
    out->tx_frames = p->tx_frames;
    out->rx_frames = p->rx_frames;
    if (p->nic) {
        out->tx_busy = p->nic->tx_busy;
        out->tx_completions = p->nic->tx_completions;
        out->ring_used = p->nic->ring_used;
        out->ring_max_used = p->nic->ring_max_used;
    }
}

/* ---------------------------------------------------------------------------------------------------------
 * Transmit
 * ------------------------------------------------------------------------------------------------------- */

/* Copies one wire frame of descriptor d — headers and payload, which may be two pieces — into a frame buffer
 * and offers it to the link. `csum`: the TCP checksum at csum_start + csum_offset is a CHECKSUM_PARTIAL seed
 * the NIC's offload completes; it is completed lazily (brisk_sim_frame_csum), which changes no byte anyone
 * sees: zero padding adds nothing to the one's-complement sum. */
static void emit_frame(struct sim_nic *n, struct sim_desc *d, const uint8_t *hdrs, size_t hlen,
                       const uint8_t *payload, size_t plen, int csum, uint16_t csum_start,
                       uint16_t csum_offset)
{
    brisk_sim_port *p = n->port;
    size_t len = hlen + plen;
    size_t wire_len = len < SIM_ETH_ZLEN ? SIM_ETH_ZLEN : len;
    d->nframes++;
    struct sim_frame *f = brisk_sim_frame_get(p->w, wire_len);
    if (!f) { /* out of memory: the frame is lost before the wire, the packet still completes */
        n->tx_errors++;
        return;
    }
    memcpy(f->data, hdrs, hlen);
    if (plen) /* a whole packet comes as hdrs alone (payload NULL) */
        memcpy(f->data + hlen, payload, plen);
    if (csum && (size_t)csum_start + csum_offset + 2 <= len) {
        f->csum = SIM_CSUM_PENDING;
        f->csum_start = csum_start;
        f->csum_offset = csum_offset;
    }
    if (wire_len > len)
        memset(f->data + len, 0, wire_len - len);
    f->desc = d;
    d->frames_left++;
    p->tx_frames++;
    brisk_sim_link_offer(p->tx, f);
}

/* A TSO NIC fills in every frame's checksum: here, lazily. */
static void gso_emit(void *ctx, const struct brisk_gso_piece *pc)
{
    struct sim_nic *n = ctx;
    emit_frame(n, n->cutting, pc->hdrs, pc->hdr_len, pc->payload, pc->payload_len, 1, pc->csum_start,
               pc->csum_offset);
}

int brisk_sim_nic_xmit(void *driver, brisk_pkt *pkt, uint64_t now)
{
    struct sim_nic *n = driver;
    /* The world's clock is the only clock: a frame cannot enter the link at any other time. */
    (void)now;
    if (!n || !pkt)
        return BRISK_ERR_INVAL;
    if (n->ring_used >= n->cfg.tx_ring) {
        n->tx_busy++;
        return BRISK_ERR_BUSY;
    }
    struct sim_desc *d = n->free_descs;
    n->free_descs = d->next;
    d->next = NULL;
    d->pkt = pkt;
    d->nframes = 0;
    /* Held at 1 while cutting, so a frame dropped at the queue cannot complete the packet half-way. */
    d->frames_left = 1;
    if (++n->ring_used > n->ring_max_used)
        n->ring_max_used = n->ring_used;
    if (n->ring_used == n->cfg.tx_ring) /* full: stop the queue now rather than refuse the next packet */
        brisk_netdev_stop_queue(n->dev);

    if (n->port->tx) {
        uint32_t caps = n->cfg.dev.caps;
        int partial = (pkt->flags & BRISK_PKT_CSUM_PARTIAL) != 0;
        if (pkt->gso_size && (caps & BRISK_NETDEV_CAP_GSO)) {
            n->cutting = d;
            int r = brisk_gso_cut(pkt->data, pkt->len, pkt->gso_size, BRISK_GSO_CSUM_PARTIAL, n->scratch,
                                  n->scratch_len, gso_emit, n);
            n->cutting = NULL;
            if (r < 0) /* a malformed super-frame: nothing reaches the wire, the packet completes */
                n->tx_errors++;
        } else {
            /* Without CAP_GSO / CAP_CSUM the bytes go out as given, as they would from a real NIC: a stack
             * that relies on an offload the device lacks shows up as oversized frames or bad checksums. */
            emit_frame(n, d, pkt->data, pkt->len, NULL, 0, partial && (caps & BRISK_NETDEV_CAP_CSUM),
                       pkt->csum_start, pkt->csum_offset);
        }
    }
    brisk_sim_nic_frame_done(d); /* drops the cutting hold */
    return BRISK_OK;
}

/* ---------------------------------------------------------------------------------------------------------
 * Completion
 * ------------------------------------------------------------------------------------------------------- */

/* Every wire frame of d is serialized or dropped, now: schedule its report per the model. */
static void desc_done(struct sim_desc *d)
{
    struct sim_nic *n = d->nic;
    brisk_sim_world *w = n->port->w;
    const struct brisk_sim_txc *m = &n->cfg.txc;
    if (d->nframes == 0 || m->model == BRISK_SIM_TXC_IMMEDIATE) {
        brisk_sim_sched(w, &d->ev, w->now);
        return;
    }
    if (m->model == BRISK_SIM_TXC_DELAY) {
        brisk_sim_sched(w, &d->ev, sim_time_add(w->now, m->delay_ns));
        return;
    }
    int first = n->pend_head == NULL;
    d->next = NULL;
    if (n->pend_tail)
        n->pend_tail->next = d;
    else
        n->pend_head = d;
    n->pend_tail = d;
    n->pend_frames += d->nframes;
    if (n->pend_frames >= m->frames) {
        if (n->batch.heap_idx == SIM_EV_IDLE || n->batch.time != w->now)
            brisk_sim_sched(w, &n->batch, w->now);
    } else if (first) {
        brisk_sim_sched(w, &n->batch, sim_time_add(w->now, m->timeout_ns));
    }
}

void brisk_sim_nic_frame_done(struct sim_desc *d)
{
    if (--d->frames_left == 0)
        desc_done(d);
}

static void desc_complete(struct sim_nic *n, struct sim_desc *d)
{
    brisk_pkt *pkt = d->pkt;
    /* Free the slot before reporting, so the stack sees the room it is being told about. */
    d->pkt = NULL;
    d->next = n->free_descs;
    n->free_descs = d;
    n->ring_used--;
    n->tx_completions++;
    brisk_netdev_wake_queue(n->dev); /* a slot is free (a no-op unless the queue was stopped) */
    n->tx_done(n->dev, pkt, n->port->w->now);
}

void brisk_sim_nic_on_txc(struct sim_desc *d)
{
    struct sim_nic *n = d->nic;
    desc_complete(n, d);
    brisk_sim_host_touch(n->host);
}

void brisk_sim_nic_on_batch(struct sim_nic *n)
{
    struct sim_desc *d = n->pend_head;
    n->pend_head = n->pend_tail = NULL;
    n->pend_frames = 0;
    while (d) {
        struct sim_desc *next = d->next;
        desc_complete(n, d);
        d = next;
    }
    brisk_sim_host_touch(n->host);
}

/* A frame whose checksum only the sending NIC's offload produced (or will) is byte for byte what the sending
 * stack built: a NIC with receive checksum offload passes it as valid, as veth and loopback pass
 * CHECKSUM_PARTIAL along. Any other frame is checked by the stack (a real NIC would check it in hardware; the
 * verdict is the same, only where the CPU time goes differs). */
static unsigned rx_flags(struct sim_nic *n, struct sim_frame *f)
{
    if (f->csum != SIM_CSUM_NONE && (n->cfg.dev.caps & BRISK_NETDEV_CAP_CSUM))
        return BRISK_RX_CSUM_VALID;
    brisk_sim_frame_csum(f);
    return 0;
}

int brisk_sim_nic_rx(struct sim_nic *n, struct sim_frame *f)
{
    brisk_sim_world *w = n->port->w;
    if (n->cfg.rx_batch) {
        /* NAPI: the frame waits in the ring for a poll, which runs once nothing else is due at this instant
         * (the interrupt is taken when the burst is over): every frame of a burst arriving together joins
         * it. */
        f->next = NULL;
        if (n->rxq_tail)
            n->rxq_tail->next = f;
        else
            n->rxq_head = f;
        n->rxq_tail = f;
        n->rxq_len++;
        if (n->cfg.rx_coalesce_ns && n->rxq_len < n->cfg.rx_batch) {
            /* Interrupt moderation: the first frame of a batch starts the wait; later ones join it. */
            if (n->rxpoll.heap_idx == SIM_EV_IDLE && !n->poll_queued)
                brisk_sim_sched(w, &n->rxpoll, sim_time_add(w->now, n->cfg.rx_coalesce_ns));
            return 1;
        }
        if (n->rxpoll.heap_idx != SIM_EV_IDLE)
            brisk_sim_unsched(w, &n->rxpoll); /* a full batch: the interrupt now */
        brisk_sim_poll_queue(w, n);
        return 1;
    }
    unsigned flags = rx_flags(n, f);
    brisk_stack_input_flags(n->host->st, n->dev, f->data, f->len, flags, w->now);
    brisk_sim_host_touch(n->host);
    return 0;
}

void brisk_sim_nic_on_rx_poll(struct sim_nic *n)
{
    brisk_sim_world *w = n->port->w;
    n->rx_polls++;
    uint32_t k = 0;
    while (k < n->cfg.rx_batch && n->rxq_head) {
        struct sim_frame *f = n->rxq_head;
        n->rxq_head = f->next;
        n->rxf[k] = f;
        n->rxv[k].data = f->data;
        n->rxv[k].len = f->len;
        n->rxv[k].flags = rx_flags(n, f);
        k++;
    }
    n->rxq_len -= k;
    if (!n->rxq_head)
        n->rxq_tail = NULL;
    else
        brisk_sim_poll_queue(w, n); /* over budget: the rest in the next poll */
    brisk_stack_input_batch(n->host->st, n->dev, n->rxv, k, w->now);
    for (uint32_t i = 0; i < k; i++)
        brisk_sim_frame_put(w, n->rxf[i]);
    brisk_sim_host_touch(n->host);
}

void brisk_sim_nic_destroy(struct sim_nic *n)
{
    for (uint32_t i = 0; i < n->cfg.tx_ring; i++)
        if (n->descs[i].pkt)
            n->tx_done(n->dev, n->descs[i].pkt, n->port->w->now);
    for (struct sim_frame *f = n->rxq_head, *next; f; f = next) {
        next = f->next;
        brisk_sim_frame_put(n->port->w, f);
    }
    free(n->descs);
    free(n->scratch);
    free(n->rxv);
    free(n->rxf);
    n->port->nic = NULL;
    free(n);
}

/* ---------------------------------------------------------------------------------------------------------
 * "immediate" | "delay D" | "coalesce N T", with spaces or colons between the words
 * ------------------------------------------------------------------------------------------------------- */

int brisk_sim_txc_parse(const char *s, struct brisk_sim_txc *out)
{
    char buf[96];
    char *tok[4];
    int ntok = 0;
    if (!s || !out)
        return BRISK_ERR_INVAL;
    size_t len = strlen(s);
    if (len >= sizeof(buf))
        return BRISK_ERR_INVAL;
    memcpy(buf, s, len + 1);
    for (char *q = buf;;) {
        while (*q == ' ' || *q == '\t' || *q == ':')
            q++;
        if (!*q)
            break;
        if (ntok == 4)
            return BRISK_ERR_INVAL;
        tok[ntok++] = q;
        while (*q && *q != ' ' && *q != '\t' && *q != ':')
            q++;
        if (*q)
            *q++ = '\0';
    }
    struct brisk_sim_txc t = {.model = BRISK_SIM_TXC_IMMEDIATE};
    int rc;
    if (ntok == 1 && !strcmp(tok[0], "immediate")) {
        /* nothing more */
    } else if (ntok == 2 && !strcmp(tok[0], "delay")) {
        t.model = BRISK_SIM_TXC_DELAY;
        if ((rc = brisk_parse_time(tok[1], &t.delay_ns)) != BRISK_OK)
            return rc;
    } else if (ntok == 3 && !strcmp(tok[0], "coalesce")) {
        uint64_t frames;
        t.model = BRISK_SIM_TXC_COALESCE;
        if ((rc = brisk_parse_uint(tok[1], &frames)) != BRISK_OK)
            return rc;
        if (frames < 1 || frames > UINT32_MAX)
            return BRISK_ERR_RANGE;
        t.frames = (uint32_t)frames;
        if ((rc = brisk_parse_time(tok[2], &t.timeout_ns)) != BRISK_OK)
            return rc;
    } else {
        return BRISK_ERR_INVAL;
    }
    *out = t;
    return BRISK_OK;
}
