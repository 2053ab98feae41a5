/*
 * evq.c — the stack's event queue (evq.h): removal and the delivery loop.
 */
#include "core/evq.h"

#include <stddef.h>

void brisk_evq_remove(struct brisk_evq *q, struct brisk_evq_node *n)
{
    if (!n->queued)
        return;
    struct brisk_evq_node **pp = &q->head, *prev = NULL;
    while (*pp && *pp != n) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = n->next;
        if (q->tail == n)
            q->tail = prev;
    }
    n->queued = 0;
    n->next = NULL;
}

void brisk_evq_deliver(struct brisk_evq *q, uint64_t now)
{
    if (q->delivering)
        return;
    q->delivering = 1;
    while (q->head) {
        struct brisk_evq_node *n = q->head;
        q->head = n->next;
        if (!q->head)
            q->tail = NULL;
        n->queued = 0;
        n->next = NULL;
        q->dispatch(q->ctx, n, now);
    }
    q->delivering = 0;
}
