/*
 * evq.h — the stack's queue of sockets with events to deliver: an intrusive FIFO of nodes, each embedded in
 * a socket, with the events raised on it since its last delivery.
 *
 * Events are raised in the middle of input, timer or call processing, when the raising code's structures
 * may be half updated; application callbacks run only when the entry point (brisk_stack_input, _poll, a
 * socket call) is about to return, so they may call back into the stack. A socket is queued once however
 * many events it gets; its pending mask accumulates. Delivery pops sockets in the order they were first
 * raised and hands each to the queue's dispatch function (set by the stack: it knows which protocol owns a
 * node, `proto`). A dispatch may raise more events (on any socket, the one delivered included): they join the
 * same loop, and a delivery started inside a callback returns at once (the outer loop finishes the work).
 * A socket the dispatch cannot deliver yet (no callback) keeps its mask: brisk_evq_raise(q, n, 0) requeues
 * it.
 */
#ifndef BRISK_CORE_EVQ_H
#define BRISK_CORE_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct brisk_evq_node {
    struct brisk_evq_node *next; /* the next socket with events, while queued */
    unsigned pending;            /* BRISK_EV_* not yet delivered */
    uint8_t queued;              /* on the queue */
    uint8_t proto;               /* the owner's IP protocol number (the stack's dispatch switches on it) */
};

struct brisk_evq {
    struct brisk_evq_node *head, *tail;
    int delivering; /* inside brisk_evq_deliver */
    /* Delivers `n`: takes n->pending (zeroing it) if the owner can take it now. */
    void (*dispatch)(void *ctx, struct brisk_evq_node *n, uint64_t now);
    void *ctx;
};

/* Adds `events` to n's mask and queues it if not queued (events 0: queues it for what it already has). */
static inline void brisk_evq_raise(struct brisk_evq *q, struct brisk_evq_node *n, unsigned events)
{
    n->pending |= events;
    if (n->queued)
        return;
    n->queued = 1;
    n->next = NULL;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
}

/* Takes n off the queue (its socket is being freed); its mask stays. O(queue length). */
void brisk_evq_remove(struct brisk_evq *q, struct brisk_evq_node *n);

/* Dispatches every queued node, those queued meanwhile included, unless a delivery is already running. */
void brisk_evq_deliver(struct brisk_evq *q, uint64_t now);

#endif
