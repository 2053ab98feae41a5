/*
 * world.c — the simulator's virtual clock, its event queue, and the driving of hosts.
 *
 * A world is a discrete-event simulation: nothing happens between events, and the clock jumps from one
 * event's time to the next. The queue is an indexed binary heap keyed by (time, insertion sequence), so
 * events at the same instant run in the order they were scheduled and a run is a pure function of
 * configuration and seed (docs/design.md principle 6). Each event knows its heap slot, which lets a host's
 * wake-up move to a new deadline in O(log n) instead of leaving stale entries behind. Event objects are
 * embedded in what they concern (frames, descriptors, hosts, NICs) or come from a free list (brisk_sim_at),
 * and frame buffers are recycled through a free list sized by the largest frame seen, so a running world
 * allocates nothing once it is warm.
 *
 * Host driving. A brisk stack is sans-IO: it only acts when called. After every event that touches a host (a
 * frame delivered to one of its NICs, a TX completion, its wake-up, an application kick) the host is put on a
 * dirty list; once the event is over, world_flush() calls brisk_stack_poll() and moves the host's one wake-up
 * event to max(now, brisk_stack_next_deadline()). Polling after the event, never inside it, is what keeps the
 * world from calling into a stack re-entrantly (from inside its xmit, say).
 *
 * Functions: brisk_sim_world_new/free, brisk_sim_run_until/run_while (the loop; world_step runs one event),
 * brisk_sim_at (callbacks), brisk_sim_sched/unsched (queue), brisk_sim_frame_get/put (buffers),
 * brisk_sim_host_add/kick and world_flush (hosts).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"

/* ---------------------------------------------------------------------------------------------------------
 * Event queue
 * ------------------------------------------------------------------------------------------------------- */

static int ent_before(const struct sim_heap_ent *a, const struct sim_heap_ent *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_place(brisk_sim_world *w, uint32_t i, struct sim_heap_ent e)
{
    w->heap[i] = e;
    e.ev->heap_idx = i;
}

/* Moves the entry at slot i up or down until the heap order holds again. */
static void heap_fix(brisk_sim_world *w, uint32_t i)
{
    struct sim_heap_ent e = w->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!ent_before(&e, &w->heap[parent]))
            break;
        heap_place(w, i, w->heap[parent]);
        i = parent;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= w->heap_len)
            break;
        if (c + 1 < w->heap_len && ent_before(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!ent_before(&w->heap[c], &e))
            break;
        heap_place(w, i, w->heap[c]);
        i = c;
    }
    heap_place(w, i, e);
}

static void heap_remove_at(brisk_sim_world *w, uint32_t i)
{
    w->heap[i].ev->heap_idx = SIM_EV_IDLE;
    uint32_t last = --w->heap_len;
    if (i != last) {
        heap_place(w, i, w->heap[last]);
        heap_fix(w, i);
    }
}

int brisk_sim_reserve(brisk_sim_world *w, uint64_t n)
{
    uint64_t need = w->ev_objects + n;
    if (need > (SIM_EV_NOWQ - 1))
        return BRISK_ERR_NOMEM;
    if (need > w->heap_cap) {
        uint64_t cap = w->heap_cap ? w->heap_cap : 64;
        while (cap < need)
            cap *= 2;
        if (cap > SIM_EV_NOWQ - 1)
            cap = SIM_EV_NOWQ - 1;
        struct sim_heap_ent *h = realloc(w->heap, (size_t)cap * sizeof(*h));
        if (!h)
            return BRISK_ERR_NOMEM;
        w->heap = h;
        struct sim_event **q = malloc((size_t)cap * sizeof(*q));
        if (!q)
            return BRISK_ERR_NOMEM; /* the larger heap is kept; heap_cap still says the old size */
        /* The now-queue moves to the front of the new ring; its events learn their new slots. */
        for (uint32_t i = 0; i < w->nowq_len; i++) {
            struct sim_event *ev = w->nowq[(w->nowq_head + i) % w->heap_cap];
            q[i] = ev;
            if (ev)
                ev->heap_idx = SIM_EV_NOWQ | i;
        }
        free(w->nowq);
        w->nowq = q;
        w->nowq_head = 0;
        w->heap_cap = (uint32_t)cap;
    }
    w->ev_objects = need;
    return BRISK_OK;
}

/* Takes ev out of wherever it is queued. */
static void dequeue(brisk_sim_world *w, struct sim_event *ev)
{
    if (ev->heap_idx == SIM_EV_IDLE)
        return;
    if (ev->heap_idx & SIM_EV_NOWQ) {
        w->nowq[ev->heap_idx & ~SIM_EV_NOWQ] = NULL; /* a hole, skipped when reached */
        ev->heap_idx = SIM_EV_IDLE;
        return;
    }
    heap_remove_at(w, ev->heap_idx);
}

/* Closes the holes cancelled entries left in the now-queue (in order). The ring has a slot per event object,
 * but an event re-scheduled for the current instant leaves a hole each time: this makes room again. */
static void nowq_compact(brisk_sim_world *w)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->nowq_len; i++) {
        struct sim_event *ev = w->nowq[(w->nowq_head + i) % w->heap_cap];
        if (!ev)
            continue;
        uint32_t slot = (w->nowq_head + n++) % w->heap_cap;
        w->nowq[slot] = ev;
        ev->heap_idx = SIM_EV_NOWQ | slot;
    }
    w->nowq_len = n;
}

void brisk_sim_sched(brisk_sim_world *w, struct sim_event *ev, uint64_t t)
{
    if (t < w->now) /* callers compute from now; never let an event run in the past */
        t = w->now;
    if (t == w->now) {
        /* The now-queue: after everything already due at this instant, as a heap entry with the next
         * sequence number would be, without the heap's log n. Capacity covers every event object. */
        dequeue(w, ev);
        ev->time = t;
        w->seq++;
        if (w->nowq_len == w->heap_cap)
            nowq_compact(w); /* full of holes: every live event has a slot, ev's is free */
        uint32_t slot = (w->nowq_head + w->nowq_len++) % w->heap_cap;
        w->nowq[slot] = ev;
        ev->heap_idx = SIM_EV_NOWQ | slot;
        return;
    }
    ev->time = t;
    struct sim_heap_ent e = {.time = t, .seq = w->seq++, .ev = ev};
    if (ev->heap_idx != SIM_EV_IDLE && !(ev->heap_idx & SIM_EV_NOWQ)) {
        w->heap[ev->heap_idx] = e;
        heap_fix(w, ev->heap_idx);
        return;
    }
    dequeue(w, ev);
    /* Capacity was reserved when the event object was created, so this cannot overflow. */
    uint32_t i = w->heap_len++;
    w->heap[i] = e;
    ev->heap_idx = i;
    heap_fix(w, i);
}

void brisk_sim_unsched(brisk_sim_world *w, struct sim_event *ev)
{
    dequeue(w, ev);
}

/* Drops cancelled entries from the front of the now-queue. */
static void nowq_trim(brisk_sim_world *w)
{
    while (w->nowq_len && !w->nowq[w->nowq_head]) {
        w->nowq_head = (w->nowq_head + 1) % w->heap_cap;
        w->nowq_len--;
    }
}

/* The time of the next event, BRISK_TIME_NONE when none is queued. */
static inline uint64_t next_time(brisk_sim_world *w)
{
    nowq_trim(w);
    if (w->nowq_len || w->poll_head)
        return w->now; /* the heap cannot hold anything earlier than now */
    return w->heap_len ? w->heap[0].time : BRISK_TIME_NONE;
}

/* ---------------------------------------------------------------------------------------------------------
 * Frame buffers
 * ------------------------------------------------------------------------------------------------------- */

void brisk_sim_frame_size_hint(brisk_sim_world *w, size_t len)
{
    if (len > w->frame_cap)
        w->frame_cap = len;
}

struct sim_frame *brisk_sim_frame_get(brisk_sim_world *w, size_t len)
{
    brisk_sim_frame_size_hint(w, len);
    struct sim_frame *f = w->free_frames;
    if (f) {
        w->free_frames = f->next;
        if (f->cap >= len)
            goto ready;
        /* A buffer from before a larger frame was seen: replace it with one of the current size. */
        free(f);
        w->ev_objects--;
    }
    if (brisk_sim_reserve(w, 1) != BRISK_OK)
        return NULL;
    f = malloc(sizeof(*f) + w->frame_cap);
    if (!f) {
        w->ev_objects--;
        return NULL;
    }
    f->cap = (uint32_t)w->frame_cap;
    f->ev.heap_idx = SIM_EV_IDLE;
ready:
    f->next = NULL;
    f->dir = NULL;
    f->desc = NULL;
    f->len = (uint32_t)len;
    f->csum = SIM_CSUM_NONE;
    return f;
}

void brisk_sim_frame_put(brisk_sim_world *w, struct sim_frame *f)
{
    f->next = w->free_frames;
    w->free_frames = f;
}

/* ---------------------------------------------------------------------------------------------------------
 * World
 * ------------------------------------------------------------------------------------------------------- */

brisk_sim_world *brisk_sim_world_new(uint64_t seed)
{
    brisk_sim_world *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->seed = seed;
    return w;
}

void brisk_sim_world_free(brisk_sim_world *w)
{
    if (!w)
        return;
    /* Queued events first, while every object they are embedded in still exists. Callbacks and frames in
     * propagation belong to the queue alone; a frame on the wire (TX_END) is also its link's, freed there. */
    for (uint32_t i = 0; i < w->heap_len + w->nowq_len; i++) {
        struct sim_event *ev =
            i < w->heap_len ? w->heap[i].ev : w->nowq[(w->nowq_head + i - w->heap_len) % w->heap_cap];
        if (!ev)
            continue;
        if (ev->type == SIM_EV_CALL)
            free(SIM_CONTAINER(ev, struct sim_call, ev));
        else if (ev->type == SIM_EV_DELIVER)
            free(SIM_CONTAINER(ev, struct sim_frame, ev));
    }
    w->heap_len = 0;
    w->nowq_len = 0;
    for (brisk_sim_port *p = w->ports; p; p = p->next) {
        brisk_sim_capture_close(p->cap);
        p->cap = NULL;
    }
    /* Packets still held by NICs go back to their stacks before the stacks go. */
    for (brisk_sim_port *p = w->ports; p; p = p->next)
        if (p->nic)
            brisk_sim_nic_destroy(p->nic);
    for (brisk_sim_host *h = w->hosts, *next; h; h = next) {
        next = h->next;
        brisk_stack_free(h->st);
        free(h->name);
        free(h);
    }
    for (brisk_sim_router *r = w->routers; r;)
        r = brisk_sim_router_destroy(r);
    for (brisk_sim_port *p = w->ports, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    for (brisk_sim_link *l = w->links, *next; l; l = next) {
        next = l->next;
        brisk_sim_link_destroy(w, l);
        free(l);
    }
    for (struct sim_call *c = w->free_calls, *next; c; c = next) {
        next = c->next_free;
        free(c);
    }
    for (struct sim_frame *f = w->free_frames, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    free(w->heap);
    free(w->nowq);
    free(w);
}

uint64_t brisk_sim_now(const brisk_sim_world *w)
{
    return w->now;
}

void brisk_sim_world_stats(const brisk_sim_world *w, struct brisk_sim_stats *out)
{
    *out = w->stats;
}

int brisk_sim_at(brisk_sim_world *w, uint64_t at, void (*fn)(void *ctx, uint64_t now), void *ctx)
{
    if (!w || !fn || at < w->now || at == BRISK_TIME_NONE)
        return BRISK_ERR_INVAL;
    struct sim_call *c = w->free_calls;
    if (c) {
        w->free_calls = c->next_free;
    } else {
        if (brisk_sim_reserve(w, 1) != BRISK_OK)
            return BRISK_ERR_NOMEM;
        c = malloc(sizeof(*c));
        if (!c) {
            w->ev_objects--;
            return BRISK_ERR_NOMEM;
        }
        c->ev.type = SIM_EV_CALL;
        c->ev.heap_idx = SIM_EV_IDLE;
    }
    c->fn = fn;
    c->ctx = ctx;
    brisk_sim_sched(w, &c->ev, at);
    return BRISK_OK;
}

void brisk_sim_poll_queue(brisk_sim_world *w, struct sim_nic *n)
{
    if (n->poll_queued)
        return;
    n->poll_queued = 1;
    n->poll_next = NULL;
    if (w->poll_tail)
        w->poll_tail->poll_next = n;
    else
        w->poll_head = n;
    w->poll_tail = n;
}

/* Polls every dirty host and re-arms its wake-up. A poll may make more hosts dirty (an echo handler kicking
 * another host), so this drains the list rather than walking a snapshot. */
static void world_flush(brisk_sim_world *w)
{
    if (w->flushing)
        return;
    w->flushing = 1;
    while (w->dirty_head) {
        brisk_sim_host *h = w->dirty_head;
        w->dirty_head = h->next_dirty;
        if (!w->dirty_head)
            w->dirty_tail = NULL;
        h->dirty = 0;
        brisk_stack_poll(h->st, w->now);
        uint64_t d = brisk_stack_next_deadline(h->st);
        if (d == BRISK_TIME_NONE)
            brisk_sim_unsched(w, &h->wake);
        else if (h->wake.heap_idx == SIM_EV_IDLE || h->wake.time != (d > w->now ? d : w->now))
            brisk_sim_sched(w, &h->wake, d); /* sched clamps to now: never a wake-up in the past */
    }
    w->flushing = 0;
}

static void world_dispatch(brisk_sim_world *w, struct sim_event *ev)
{
    switch ((enum sim_ev_type)ev->type) {
    case SIM_EV_CALL: {
        struct sim_call *c = SIM_CONTAINER(ev, struct sim_call, ev);
        void (*fn)(void *, uint64_t) = c->fn;
        void *ctx = c->ctx;
        /* Recycle first: the callback may schedule again and reuse this very object. */
        c->next_free = w->free_calls;
        w->free_calls = c;
        fn(ctx, w->now);
        break;
    }
    case SIM_EV_WAKE:
        brisk_sim_host_touch(SIM_CONTAINER(ev, brisk_sim_host, wake));
        break;
    case SIM_EV_TX_END:
        brisk_sim_link_tx_end(w, SIM_CONTAINER(ev, struct sim_frame, ev));
        break;
    case SIM_EV_DELIVER:
        brisk_sim_link_deliver(w, SIM_CONTAINER(ev, struct sim_frame, ev));
        break;
    case SIM_EV_TXC:
        brisk_sim_nic_on_txc(SIM_CONTAINER(ev, struct sim_desc, ev));
        break;
    case SIM_EV_TXC_BATCH:
        brisk_sim_nic_on_batch(SIM_CONTAINER(ev, struct sim_nic, batch));
        break;
    case SIM_EV_RX_POLL:
        brisk_sim_poll_queue(w, SIM_CONTAINER(ev, struct sim_nic, rxpoll)); /* the moderated interrupt */
        break;
    }
}

/* Runs the next event (there is one: next_time() said so). The heap's events for this instant were all
 * scheduled before now reached it, so before anything in the now-queue: they go first. */
static void world_step(brisk_sim_world *w)
{
    struct sim_event *ev;
    if (w->poll_head && !w->nowq_len && (!w->heap_len || w->heap[0].time > w->now)) {
        /* Nothing else is due at this instant: the receive polls waiting for the end of it (rx_batch). */
        struct sim_nic *n = w->poll_head;
        w->poll_head = n->poll_next;
        if (!w->poll_head)
            w->poll_tail = NULL;
        n->poll_next = NULL;
        n->poll_queued = 0;
        brisk_sim_nic_on_rx_poll(n);
        world_flush(w);
        w->stats.events++;
        return;
    }
    if (w->heap_len && (!w->nowq_len || w->heap[0].time <= w->now)) {
        ev = w->heap[0].ev;
        w->now = w->heap[0].time;
        heap_remove_at(w, 0);
    } else {
        ev = w->nowq[w->nowq_head];
        w->nowq_head = (w->nowq_head + 1) % w->heap_cap;
        w->nowq_len--;
        ev->heap_idx = SIM_EV_IDLE;
    }
    world_dispatch(w, ev);
    world_flush(w);
    w->stats.events++;
}

uint64_t brisk_sim_run_until(brisk_sim_world *w, uint64_t until)
{
    if (!w || w->running)
        return 0;
    w->running = 1;
    world_flush(w);
    uint64_t n = 0;
    for (uint64_t t; (t = next_time(w)) != BRISK_TIME_NONE && t <= until;) {
        world_step(w);
        n++;
    }
    if (until != BRISK_TIME_NONE && until > w->now)
        w->now = until;
    w->running = 0;
    return n;
}

int brisk_sim_run_while(brisk_sim_world *w, int (*done)(void *ctx), void *ctx, uint64_t limit)
{
    if (!w || !done || w->running)
        return 0;
    w->running = 1;
    world_flush(w);
    int ret = done(ctx) != 0;
    for (uint64_t t; !ret && (t = next_time(w)) != BRISK_TIME_NONE && t <= limit;) {
        world_step(w);
        ret = done(ctx) != 0;
    }
    if (!ret && limit != BRISK_TIME_NONE && limit > w->now)
        w->now = limit;
    w->running = 0;
    return ret;
}

/* ---------------------------------------------------------------------------------------------------------
 * Hosts
 * ------------------------------------------------------------------------------------------------------- */

brisk_sim_host *brisk_sim_host_add(brisk_sim_world *w, const char *name, const struct brisk_settings *s)
{
    if (!w)
        return NULL;
    struct brisk_settings set;
    if (s)
        set = *s;
    else
        brisk_settings_default(&set);
    if (!s || !s->seed) {
        /* Keyed by the host's index only, so adding a host never changes another's seed. */
        set.seed = brisk_mix64(w->seed ^ brisk_mix64(0x686f7374ull + w->nhosts));
        if (!set.seed)
            set.seed = 1;
    }
    char dflt[24];
    if (!name) {
        snprintf(dflt, sizeof(dflt), "host%u", w->nhosts);
        name = dflt;
    }
    if (brisk_sim_reserve(w, 1) != BRISK_OK)
        return NULL;
    brisk_sim_host *h = calloc(1, sizeof(*h));
    size_t nlen = strlen(name);
    char *nm = malloc(nlen + 1);
    brisk_stack *st = h && nm ? brisk_stack_new(&set) : NULL;
    if (!st) {
        free(nm);
        free(h);
        w->ev_objects--;
        return NULL;
    }
    memcpy(nm, name, nlen + 1);
    h->w = w;
    h->name = nm;
    h->st = st;
    h->index = w->nhosts++;
    h->wake.type = SIM_EV_WAKE;
    h->wake.heap_idx = SIM_EV_IDLE;
    if (w->hosts_tail)
        w->hosts_tail->next = h;
    else
        w->hosts = h;
    w->hosts_tail = h;
    brisk_sim_host_touch(h);
    return h;
}

brisk_stack *brisk_sim_host_stack(brisk_sim_host *h)
{
    return h ? h->st : NULL;
}

const char *brisk_sim_host_name(const brisk_sim_host *h)
{
    return h ? h->name : NULL;
}

void brisk_sim_host_touch(brisk_sim_host *h)
{
    brisk_sim_world *w = h->w;
    if (!h->dirty) {
        h->dirty = 1;
        h->next_dirty = NULL;
        if (w->dirty_tail)
            w->dirty_tail->next_dirty = h;
        else
            w->dirty_head = h;
        w->dirty_tail = h;
    }
    /* Outside any event (application code between runs) there is nothing to wait for: poll right away. */
    if (!w->running)
        world_flush(w);
}

void brisk_sim_host_kick(brisk_sim_host *h)
{
    if (h)
        brisk_sim_host_touch(h);
}
