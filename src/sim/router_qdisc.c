/*
 * router_qdisc.c — a router port's output queue: drop-tail, or fq_codel (RFC 8290) with CoDel (RFC 8289).
 *
 * A router port's link serializes one frame at a time; everything waiting for it waits here (router.c hands
 * the link the next frame when the previous one's serialization ends, as a qdisc feeds a driver), so this is
 * where a bottleneck's queue builds and where the queueing delay of a path is decided.
 *
 * Drop-tail: one FIFO, limit_packets and / or limit_bytes; an arrival that does not fit is dropped — the
 * buffer fills and stays full under a loss-based congestion control, the "bufferbloat" of a deep FIFO.
 *
 * fq_codel (RFC 8290):
 *   - §4.1.1 classification: the 5-tuple (addresses, protocol, ports; the addresses and protocol alone for a
 *     datagram without ports; IPv6's addresses, next header and ports alike; the EtherType for a frame that
 *     is neither) hashed with a key of this instance
 *     (the perturbation, derived from the world seed: reproducible, but not the same in every world) into one
 *     of `flows` queues;
 *   - §4.1.2 when the total backlog exceeds the limit, the packet at the head of the queue with the largest
 *     byte backlog is dropped (the fattest flow pays for the overflow, not the arriving one) — Linux drops a
 *     batch of up to half that queue at once to save the O(flows) scan; one at a time is the RFC's text;
 *   - §4.2 scheduling: deficit round robin over two lists. A queue that becomes non-empty while on neither
 *     list joins the tail of new_flows with a deficit of one quantum; dequeue serves new_flows first, then
 *     old_flows; a queue whose deficit is spent gets another quantum and moves to the tail of old_flows; a
 *     queue found empty moves from new_flows to the tail of old_flows (if old_flows is non-empty: so a flow
 *     cannot cycle back into new_flows and starve the others), or leaves old_flows;
 *   - §4.3 each queue runs CoDel on its own packets: the sojourn time is measured from enqueue to dequeue.
 *
 * CoDel (RFC 8289 §5, the reference pseudo-code's control law): when the sojourn time of the packets
 * dequeued has stayed at or above `target` for a whole `interval` (and more than one MAXPACKET is queued),
 * enter the dropping state and drop; while dropping, drop again at intervals of interval / sqrt(count),
 * count growing by one per drop; leave the state as soon as a packet's sojourn falls below target. Re-entering
 * soon after leaving (within 16 intervals) resumes the count near where it was (count - lastcount), so a
 * persistent queue meets a drop rate that keeps rising instead of starting over. ECN marking is not modelled
 * (a drop every time): brisk's stacks do not negotiate ECN.
 *
 * The square root is an integer one (isqrt64 below), so a drop time is exact and identical on every machine.
 * Nothing here allocates once the queues exist: frames are linked through their own `next`.
 *
 * Functions: brisk_sim_qdisc_parse, brisk_sim_qdisc_init / destroy, brisk_sim_qdisc_enqueue / dequeue,
 * flow_hash (classification), fq_drop_fattest (overflow), codel_dequeue / codel_do_dequeue (CoDel).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"

#define DFLT_DROPTAIL_LIMIT 1000u
#define DFLT_FQ_LIMIT       10240u
#define DFLT_FQ_FLOWS       1024u
#define DFLT_QUANTUM        1514u
#define DFLT_TARGET_NS      (5 * BRISK_NSEC_PER_MSEC)
#define DFLT_INTERVAL_NS    (100 * BRISK_NSEC_PER_MSEC)
#define MAX_FQ_FLOWS        65536u
#define MAX_INTERVAL_NS     (1000 * BRISK_NSEC_PER_SEC)

int brisk_sim_qdisc_parse(const char *s, enum brisk_sim_qdisc_kind *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    if (!strcmp(s, "droptail") || !strcmp(s, "drop-tail") || !strcmp(s, "fifo")) {
        *out = BRISK_SIM_QDISC_DROPTAIL;
        return BRISK_OK;
    }
    if (!strcmp(s, "fq_codel") || !strcmp(s, "fq-codel")) {
        *out = BRISK_SIM_QDISC_FQ_CODEL;
        return BRISK_OK;
    }
    return BRISK_ERR_INVAL;
}

int brisk_sim_qdisc_init(struct sim_qdisc *q, const struct brisk_sim_qdisc *cfg, uint64_t perturb)
{
    memset(q, 0, sizeof(*q));
    if (cfg)
        q->cfg = *cfg;
    struct brisk_sim_qdisc *c = &q->cfg;
    if (c->kind != BRISK_SIM_QDISC_DROPTAIL && c->kind != BRISK_SIM_QDISC_FQ_CODEL)
        return BRISK_ERR_INVAL;
    if (!c->limit_packets)
        c->limit_packets = c->kind == BRISK_SIM_QDISC_DROPTAIL ? DFLT_DROPTAIL_LIMIT : DFLT_FQ_LIMIT;
    if (!c->flows)
        c->flows = DFLT_FQ_FLOWS;
    if (!c->quantum)
        c->quantum = DFLT_QUANTUM;
    if (!c->target_ns)
        c->target_ns = DFLT_TARGET_NS;
    if (!c->interval_ns)
        c->interval_ns = DFLT_INTERVAL_NS;
    if (c->flows > MAX_FQ_FLOWS || c->interval_ns > MAX_INTERVAL_NS || c->quantum > (1u << 30))
        return BRISK_ERR_INVAL;
    q->perturb = perturb;
    q->new_flows.head = q->new_flows.tail = -1;
    q->old_flows.head = q->old_flows.tail = -1;
    if (c->kind == BRISK_SIM_QDISC_FQ_CODEL) {
        q->flows = calloc(c->flows, sizeof(*q->flows));
        if (!q->flows)
            return BRISK_ERR_NOMEM;
        for (uint32_t i = 0; i < c->flows; i++)
            q->flows[i].next = -1;
    }
    return BRISK_OK;
}

static void free_chain(struct sim_frame *f)
{
    while (f) {
        struct sim_frame *next = f->next;
        free(f);
        f = next;
    }
}

void brisk_sim_qdisc_destroy(struct sim_qdisc *q)
{
    free_chain(q->head);
    q->head = q->tail = NULL;
    if (q->flows)
        for (uint32_t i = 0; i < q->cfg.flows; i++)
            free_chain(q->flows[i].head);
    free(q->flows);
    q->flows = NULL;
}

/* ---- classification ---- */

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The keyed hash of the frame's flow. Every read is bounded by len: a short or odd frame hashes on what it
 * has (its EtherType, its addresses). */
static uint64_t flow_hash(uint64_t key, const uint8_t *f, size_t len)
{
    if (len < 14)
        return brisk_mix64(key ^ 1);
    uint32_t type = rd16(f + 12);
    if (type == 0x86dd && len >= 14 + 40) {
        /* IPv6: both addresses and the next header, and the ports when it is TCP or UDP (an extension
         * header chain is not walked: its packets hash on addresses and the first header, as one flow). */
        const uint8_t *ip = f + 14;
        uint64_t h = key;
        for (int i = 0; i < 32; i += 8)
            h = brisk_mix64(h ^ ((uint64_t)rd32(ip + 8 + i) << 32 | rd32(ip + 12 + i)));
        uint32_t nh = ip[6];
        uint64_t rest = (uint64_t)nh << 32;
        if ((nh == 6 || nh == 17) && len >= 14 + 40 + 4)
            rest |= rd32(ip + 40);
        return brisk_mix64(h ^ brisk_mix64(rest + 4));
    }
    if (type != 0x0800 || len < 14 + 20)
        return brisk_mix64(key ^ brisk_mix64(type + 2));
    const uint8_t *ip = f + 14;
    uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4u, proto = ip[9];
    uint64_t addrs = (uint64_t)rd32(ip + 12) << 32 | rd32(ip + 16);
    uint64_t rest = (uint64_t)proto << 32;
    /* Ports only in a first fragment (offset 0) that holds them. */
    int first = (rd16(ip + 6) & 0x1fff) == 0;
    if ((proto == 6 || proto == 17) && first && ihl >= 20 && len >= 14 + ihl + 4)
        rest |= rd32(ip + ihl);
    return brisk_mix64(key ^ brisk_mix64(addrs) ^ brisk_mix64(rest + 3));
}

uint32_t brisk_sim_qdisc_flow_of(const struct sim_qdisc *q, const uint8_t *frame, size_t len)
{
    /* The high half times the count: a multiply instead of a modulo, uniform enough for any count. */
    return (uint32_t)(((flow_hash(q->perturb, frame, len) >> 32) * q->cfg.flows) >> 32);
}

/* ---- fq_codel's flow lists ---- */

static void list_push_tail(struct sim_qdisc *q, struct sim_fq_list *l, int32_t i, uint8_t which)
{
    struct sim_fq_flow *fl = &q->flows[i];
    fl->next = -1;
    fl->list = which;
    if (l->tail >= 0)
        q->flows[l->tail].next = i;
    else
        l->head = i;
    l->tail = i;
}

static int32_t list_pop_head(struct sim_qdisc *q, struct sim_fq_list *l)
{
    int32_t i = l->head;
    l->head = q->flows[i].next;
    if (l->head < 0)
        l->tail = -1;
    q->flows[i].next = -1;
    q->flows[i].list = SIM_FQ_NONE;
    return i;
}

/* ---- per-queue FIFOs ---- */

static void fifo_push(struct sim_frame **head, struct sim_frame **tail, struct sim_frame *f)
{
    f->next = NULL;
    if (*tail)
        (*tail)->next = f;
    else
        *head = f;
    *tail = f;
}

static struct sim_frame *fifo_pop(struct sim_frame **head, struct sim_frame **tail)
{
    struct sim_frame *f = *head;
    if (f) {
        *head = f->next;
        if (!*head)
            *tail = NULL;
        f->next = NULL;
    }
    return f;
}

static struct sim_frame *flow_pop(struct sim_qdisc *q, struct sim_fq_flow *fl)
{
    struct sim_frame *f = fifo_pop(&fl->head, &fl->tail);
    if (f) {
        fl->packets--;
        fl->bytes -= f->len;
        q->packets--;
        q->bytes -= f->len;
    }
    return f;
}

static int over_limit(const struct sim_qdisc *q)
{
    return q->packets > q->cfg.limit_packets || (q->cfg.limit_bytes && q->bytes > q->cfg.limit_bytes);
}

/* RFC 8290 §4.1.2: the head of the queue with the largest byte backlog (the lowest index among equals).
 * Returns 0 when there was nothing to drop. */
static int fq_drop_fattest(brisk_sim_world *w, struct sim_qdisc *q)
{
    uint32_t fat = 0;
    for (uint32_t i = 1; i < q->cfg.flows; i++)
        if (q->flows[i].bytes > q->flows[fat].bytes)
            fat = i;
    struct sim_frame *f = flow_pop(q, &q->flows[fat]);
    if (!f)
        return 0;
    q->st.dropped_overflow++;
    brisk_sim_frame_put(w, f);
    return 1;
}

void brisk_sim_qdisc_enqueue(brisk_sim_world *w, struct sim_qdisc *q, struct sim_frame *f, uint64_t now)
{
    f->enq_ns = now;
    if (f->len > q->maxpacket)
        q->maxpacket = f->len;
    if (q->cfg.kind == BRISK_SIM_QDISC_DROPTAIL) {
        if (q->packets + 1 > q->cfg.limit_packets || (q->cfg.limit_bytes && q->bytes + f->len > q->cfg.limit_bytes)) {
            q->st.dropped_overflow++;
            brisk_sim_frame_put(w, f);
            return;
        }
        fifo_push(&q->head, &q->tail, f);
    } else {
        int32_t i = (int32_t)brisk_sim_qdisc_flow_of(q, f->data, f->len);
        struct sim_fq_flow *fl = &q->flows[i];
        fifo_push(&fl->head, &fl->tail, f);
        fl->packets++;
        fl->bytes += f->len;
        if (fl->list == SIM_FQ_NONE) {
            list_push_tail(q, &q->new_flows, i, SIM_FQ_NEW);
            fl->deficit = (int32_t)q->cfg.quantum;
        }
    }
    q->packets++;
    q->bytes += f->len;
    q->st.enqueued++;
    while (q->cfg.kind == BRISK_SIM_QDISC_FQ_CODEL && over_limit(q) && fq_drop_fattest(w, q))
        ;
    if (q->packets > q->st.max_packets)
        q->st.max_packets = q->packets;
    if (q->bytes > q->st.max_bytes)
        q->st.max_bytes = q->bytes;
}

/* ---- CoDel (RFC 8289) ---- */

/* floor(sqrt(x)), exactly, by bits. */
static uint64_t isqrt64(uint64_t x)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

/* t + interval / sqrt(count), in 16-bit fixed point: sqrt(count << 32) = sqrt(count) << 16. */
static uint64_t control_law(uint64_t t, uint64_t interval, uint32_t count)
{
    uint64_t s = isqrt64((uint64_t)count << 32);
    return t + (interval << 16) / (s ? s : 1);
}

/* RFC 8289's dodequeue: the head packet, and whether its sojourn has been above target for an interval. */
static struct sim_frame *codel_do_dequeue(struct sim_qdisc *q, struct sim_fq_flow *fl, uint64_t now, int *ok_to_drop)
{
    *ok_to_drop = 0;
    struct sim_frame *f = flow_pop(q, fl);
    if (!f) {
        fl->codel.first_above = 0;
        return NULL;
    }
    uint64_t sojourn = now - f->enq_ns;
    if (sojourn < q->cfg.target_ns || fl->bytes <= q->maxpacket) {
        fl->codel.first_above = 0; /* below target, or too little queued to matter: not a standing queue */
    } else if (fl->codel.first_above == 0) {
        fl->codel.first_above = now + q->cfg.interval_ns;
    } else if (now >= fl->codel.first_above) {
        *ok_to_drop = 1;
    }
    return f;
}

static void codel_drop(brisk_sim_world *w, struct sim_qdisc *q, struct sim_frame *f)
{
    q->st.dropped_codel++;
    brisk_sim_frame_put(w, f);
}

static struct sim_frame *codel_dequeue(brisk_sim_world *w, struct sim_qdisc *q, struct sim_fq_flow *fl, uint64_t now)
{
    struct sim_codel *c = &fl->codel;
    uint64_t interval = q->cfg.interval_ns;
    int ok;
    struct sim_frame *f = codel_do_dequeue(q, fl, now, &ok);
    if (!f) {
        c->dropping = 0;
        return NULL;
    }
    if (c->dropping) {
        if (!ok) {
            c->dropping = 0; /* the sojourn fell below target: leave the dropping state */
        }
        while (c->dropping && now >= c->drop_next) {
            codel_drop(w, q, f);
            c->count++;
            f = codel_do_dequeue(q, fl, now, &ok);
            if (!f || !ok)
                c->dropping = 0;
            else
                c->drop_next = control_law(c->drop_next, interval, c->count);
        }
    } else if (ok) {
        codel_drop(w, q, f);
        f = codel_do_dequeue(q, fl, now, &ok);
        c->dropping = 1;
        /* Re-entering soon after the last episode: resume near its drop rate (RFC 8289 §5.6). */
        uint32_t delta = c->count - c->lastcount;
        c->count = 1;
        if (delta > 1 && (int64_t)(now - c->drop_next) < (int64_t)(16 * interval))
            c->count = delta;
        c->drop_next = control_law(now, interval, c->count);
        c->lastcount = c->count;
    }
    return f;
}

/* ---- dequeue ---- */

static struct sim_frame *fq_dequeue(brisk_sim_world *w, struct sim_qdisc *q, uint64_t now)
{
    for (;;) {
        struct sim_fq_list *l = q->new_flows.head >= 0 ? &q->new_flows : &q->old_flows;
        if (l->head < 0)
            return NULL;
        int32_t i = l->head;
        struct sim_fq_flow *fl = &q->flows[i];
        if (fl->deficit <= 0) {
            fl->deficit += (int32_t)q->cfg.quantum;
            list_pop_head(q, l);
            list_push_tail(q, &q->old_flows, i, SIM_FQ_OLD);
            continue;
        }
        struct sim_frame *f = codel_dequeue(w, q, fl, now);
        if (!f) {
            list_pop_head(q, l);
            /* An emptied new flow goes to old_flows rather than straight off the lists, so it cannot come back
             * as "new" at once and keep the old flows waiting (RFC 8290 §4.2). */
            if (l == &q->new_flows && q->old_flows.head >= 0)
                list_push_tail(q, &q->old_flows, i, SIM_FQ_OLD);
            continue;
        }
        fl->deficit -= (int32_t)f->len;
        return f;
    }
}

struct sim_frame *brisk_sim_qdisc_dequeue(brisk_sim_world *w, struct sim_qdisc *q, uint64_t now)
{
    struct sim_frame *f;
    if (q->cfg.kind == BRISK_SIM_QDISC_DROPTAIL) {
        f = fifo_pop(&q->head, &q->tail);
        if (f) {
            q->packets--;
            q->bytes -= f->len;
        }
    } else {
        f = fq_dequeue(w, q, now);
    }
    if (f) {
        uint64_t sojourn = now - f->enq_ns;
        q->st.dequeued++;
        q->st.bytes_dequeued += f->len;
        q->st.sojourn_sum_ns += sojourn;
        if (sojourn > q->st.sojourn_max_ns)
            q->st.sojourn_max_ns = sojourn;
    }
    return f;
}
