/*
 * link.c — point-to-point links, and raw ports (a test or scripted peer sending and receiving frames itself).
 *
 * Each direction of a link is a drop-tail queue in front of a transmitter, then a wire:
 *
 *   offer (now)   -> over queue_packets / queue_bytes? drop (counted; a NIC frame still completes)
 *                 -> queued; if the transmitter is idle, serialization starts now
 *   TX_END event  -> at start + ceil(bytes * 8 * 1e9 / rate_bps) ns; the frame gets the next index on this
 *                    direction and its fate from the impairments (fault.c); the next queued frame starts
 *   DELIVER event -> at end + delay_ns (+ reorder_delay_ns if held back), handed to the peer port
 *
 * The queue counts every accepted frame that has not finished serializing, the one on the wire included — the
 * way a switch port's buffer or a NIC's FIFO is occupied until the last bit leaves — so offering N frames at
 * once to a queue of K packets keeps exactly K. A rate of 0 means an infinitely fast transmitter (no
 * serialization delay); a frame is still a separate event so that completions never run inside an xmit.
 *
 * A router port's direction is fed by the router's queueing discipline one frame at a time (router.c): when a
 * frame's serialization ends and nothing else is queued here, the router is told, and offers its next.
 *
 * Capture: a port's transmitted frames are recorded when their serialization starts, received ones when they
 * are delivered, both from inside events, so a pcap is in event order.
 *
 * Functions: brisk_sim_link_connect / link_config_symmetric / link_stats (API), brisk_sim_link_offer,
 * tx_start, brisk_sim_link_tx_end, brisk_sim_link_deliver (the pipeline), brisk_sim_raw_port_add / raw_send.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"

/* ceil(bytes * 8 * 1e9 / rate): bytes * 8e9 fits 64 bits for any frame below 2 GiB, the common path; larger
 * values take the 128-bit route so that the result is exact for every input. */
static uint64_t ser_time(uint64_t bytes, uint64_t rate_bps)
{
    if (!rate_bps)
        return 0;
    if (bytes <= 0x7fffffffu) {
        uint64_t num = bytes * 8u * BRISK_NSEC_PER_SEC;
        return num / rate_bps + (num % rate_bps != 0);
    }
    __extension__ typedef unsigned __int128 u128;
    u128 num = (u128)bytes * 8u * BRISK_NSEC_PER_SEC;
    u128 q = num / rate_bps + (num % rate_bps != 0);
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* One random stream per direction, keyed by the link's index and the direction only: adding a link, or
 * traffic in the other direction, leaves this direction's randomness untouched. */
static uint64_t dir_seed(uint64_t world_seed, uint32_t link_index, unsigned dir)
{
    uint64_t key = ((uint64_t)link_index << 1 | dir) + UINT64_C(0x6c696e6b); /* "link" */
    return brisk_mix64(world_seed ^ brisk_mix64(key));
}

void brisk_sim_link_config_symmetric(struct brisk_sim_link_config *c, uint64_t rate_bps, uint64_t delay_ns)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    c->ab.rate_bps = c->ba.rate_bps = rate_bps;
    c->ab.delay_ns = c->ba.delay_ns = delay_ns;
}

brisk_sim_link *brisk_sim_link_connect(brisk_sim_world *w, brisk_sim_port *a, brisk_sim_port *b,
                                       const struct brisk_sim_link_config *c)
{
    if (!w || !a || !b || !c || a == b || a->w != w || b->w != w || a->tx || b->tx)
        return NULL;
    if (brisk_sim_fault_check(&c->ab.impair) != BRISK_OK || brisk_sim_fault_check(&c->ba.impair) != BRISK_OK)
        return NULL;
    brisk_sim_link *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->w = w;
    l->index = w->nlinks++;
    const struct brisk_sim_link_dir *cfg[2] = {&c->ab, &c->ba};
    brisk_sim_port *src[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct sim_link_dir *d = &l->dir[i];
        d->link = l;
        d->src = src[i];
        d->dst = src[1 - i];
        d->cfg = *cfg[i];
        brisk_sim_fault_init(&d->fault, dir_seed(w->seed, l->index, (unsigned)i));
        src[i]->tx = d;
        if (src[i]->kind == SIM_PORT_NIC) /* the NIC's driver reads its link speed, like ethtool */
            brisk_netdev_set_speed(brisk_sim_port_netdev(src[i]), d->cfg.rate_bps);
    }
    if (w->links_tail)
        w->links_tail->next = l;
    else
        w->links = l;
    w->links_tail = l;
    return l;
}

void brisk_sim_link_stats(const brisk_sim_link *l, int dir, struct brisk_sim_link_stats *out)
{
    if (!out)
        return;
    if (!l || dir < 0 || dir > 1) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = l->dir[dir].st;
}

static void tx_start(brisk_sim_world *w, struct sim_link_dir *d, struct sim_frame *f)
{
    if (d->src->cap) {
        brisk_sim_frame_csum(f);
        brisk_sim_capture_write(d->src->cap, w->now, f->data, f->len);
    }
    if (d->src->obs)
        d->src->obs(d->src->obs_ctx, d->src, f->data, f->len, 0, w->now);
    f->ev.type = SIM_EV_TX_END;
    brisk_sim_sched(w, &f->ev, sim_time_add(w->now, ser_time(f->len, d->cfg.rate_bps)));
}

void brisk_sim_link_offer(struct sim_link_dir *d, struct sim_frame *f)
{
    brisk_sim_world *w = d->link->w;
    d->st.frames_in++;
    d->st.bytes_in += f->len;
    if ((d->cfg.queue_packets && d->q_packets >= d->cfg.queue_packets) ||
        (d->cfg.queue_bytes && d->q_bytes + f->len > d->cfg.queue_bytes)) {
        d->st.queue_drops++;
        if (f->desc) /* a frame dropped at the queue is done with, as far as its NIC is concerned */
            brisk_sim_nic_frame_done(f->desc);
        brisk_sim_frame_put(w, f);
        return;
    }
    f->dir = d;
    f->next = NULL;
    if (d->q_tail)
        d->q_tail->next = f;
    else
        d->q_head = f;
    d->q_tail = f;
    d->q_packets++;
    d->q_bytes += f->len;
    if (d->q_bytes > d->st.queue_max_bytes)
        d->st.queue_max_bytes = d->q_bytes;
    if (d->q_head == f)
        tx_start(w, d, f);
}

static void deliver_at(brisk_sim_world *w, struct sim_frame *f, uint64_t t)
{
    f->ev.type = SIM_EV_DELIVER;
    brisk_sim_sched(w, &f->ev, t);
}

void brisk_sim_link_tx_end(brisk_sim_world *w, struct sim_frame *f)
{
    struct sim_link_dir *d = f->dir;
    /* The frame leaves the queue: it is always the head, since only the head is serializing. */
    d->q_head = f->next;
    if (!d->q_head)
        d->q_tail = NULL;
    d->q_packets--;
    d->q_bytes -= f->len;
    d->st.frames_sent++;
    d->st.bytes_sent += f->len;
    if (f->desc) {
        brisk_sim_nic_frame_done(f->desc);
        f->desc = NULL;
    }

    /* Impairments that read or flip bytes see the wire's bytes, checksum included. */
    if (d->cfg.impair.corrupt > 0 || d->cfg.impair.drop_fn)
        brisk_sim_frame_csum(f);
    /* When it started serializing: only burst loss asks (a division per frame saved otherwise). */
    uint64_t ser = d->cfg.impair.loss_model == BRISK_SIM_LOSS_BURST ? ser_time(f->len, d->cfg.rate_bps) : 0;
    unsigned fate = brisk_sim_fault_apply(&d->fault, &d->cfg.impair, f->data, f->len,
                                          w->now > ser ? w->now - ser : 0, w->now);
    if (fate & SIM_FATE_LOST) {
        d->st.lost++;
        brisk_sim_frame_put(w, f);
    } else {
        uint64_t t = sim_time_add(w->now, d->cfg.delay_ns);
        if (fate & SIM_FATE_CORRUPT) {
            d->st.corrupted++;
            f->csum = SIM_CSUM_NONE; /* nobody vouches for it any more */
        }
        if (fate & SIM_FATE_REORDER) {
            d->st.reordered++;
            t = sim_time_add(t, d->cfg.impair.reorder_delay_ns);
        }
        deliver_at(w, f, t);
        if (fate & SIM_FATE_DUP) {
            /* The copy is queued right after the original, so it arrives immediately behind it. */
            struct sim_frame *g = brisk_sim_frame_get(w, f->len);
            if (g) {
                memcpy(g->data, f->data, f->len);
                g->csum = f->csum;
                g->csum_start = f->csum_start;
                g->csum_offset = f->csum_offset;
                g->dir = d;
                d->st.duplicated++;
                deliver_at(w, g, t);
            }
        }
    }
    if (d->q_head)
        tx_start(w, d, d->q_head);
    else if (d->src->rport) /* a router's queue feeds the idle transmitter its next frame */
        brisk_sim_router_tx_done(d->src->rport);
}

void brisk_sim_link_deliver(brisk_sim_world *w, struct sim_frame *f)
{
    struct sim_link_dir *d = f->dir;
    brisk_sim_port *p = d->dst;
    d->st.delivered++;
    w->stats.frames_delivered++;
    p->rx_frames++;
    if (p->cap) {
        brisk_sim_frame_csum(f);
        brisk_sim_capture_write(p->cap, w->now, f->data, f->len);
    }
    if (p->obs)
        p->obs(p->obs_ctx, p, f->data, f->len, 1, w->now);
    if (p->nic) {
        if (brisk_sim_nic_rx(p->nic, f))
            return; /* waiting for the NIC's receive poll */
    } else if (p->rport) {
        brisk_sim_router_rx(p->rport, f); /* forwarded (the same buffer) or dropped there */
        return;
    } else if (p->rx) {
        brisk_sim_frame_csum(f);
        p->rx(p->rx_ctx, p, f->data, f->len, w->now);
    }
    brisk_sim_frame_put(w, f);
}

void brisk_sim_link_destroy(brisk_sim_world *w, brisk_sim_link *l)
{
    (void)w;
    for (int i = 0; i < 2; i++) {
        for (struct sim_frame *f = l->dir[i].q_head, *next; f; f = next) {
            next = f->next;
            free(f);
        }
        l->dir[i].q_head = l->dir[i].q_tail = NULL;
    }
}

/* ---------------------------------------------------------------------------------------------------------
 * Raw ports
 * ------------------------------------------------------------------------------------------------------- */

brisk_sim_port *brisk_sim_raw_port_add(brisk_sim_world *w, const char *name, brisk_sim_rx_fn rx, void *ctx)
{
    if (!w)
        return NULL;
    brisk_sim_port *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->w = w;
    p->kind = SIM_PORT_RAW;
    snprintf(p->name, sizeof(p->name), "%s", name ? name : "raw");
    p->rx = rx;
    p->rx_ctx = ctx;
    if (w->ports_tail)
        w->ports_tail->next = p;
    else
        w->ports = p;
    w->ports_tail = p;
    return p;
}

int brisk_sim_raw_send(brisk_sim_port *p, const uint8_t *frame, size_t len)
{
    if (!p || p->kind != SIM_PORT_RAW || !frame || !len || len > SIM_RAW_FRAME_MAX)
        return BRISK_ERR_INVAL;
    if (!p->tx) /* an unplugged cable: the frame goes nowhere */
        return BRISK_OK;
    struct sim_frame *f = brisk_sim_frame_get(p->w, len);
    if (!f)
        return BRISK_ERR_NOMEM;
    memcpy(f->data, frame, len);
    p->tx_frames++;
    brisk_sim_link_offer(p->tx, f);
    return BRISK_OK;
}
