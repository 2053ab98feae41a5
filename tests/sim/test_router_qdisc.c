/*
 * test_router_qdisc.c — a router port's queueing disciplines (src/sim/router_qdisc.c), white-box: frames are
 * enqueued and dequeued at chosen virtual times, without links, so every expected drop time and service
 * order is worked out from RFC 8289 / RFC 8290 by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sim/internal.h"
#include "wire/ipv4.h"

#define MS BRISK_NSEC_PER_MSEC

/* Out of line: inlined under LTO, gcc takes data[] (a flexible array) for an object of size 0 and warns
 * (-Wstringop-overflow) about a memset it cannot see is within the frame's capacity. */
__attribute__((noinline)) static void zero(uint8_t *p, size_t n)
{
    memset(p, 0, n);
}

/* A TCP/IPv4 frame of `len` bytes from 10.0.0.<src> port `sport` to 10.0.1.1:80, tagged with `id` in the
 * IP identification field. */
static struct sim_frame *frame(brisk_sim_world *w, uint8_t src, uint16_t sport, uint32_t len, uint16_t id)
{
    struct sim_frame *f = brisk_sim_frame_get(w, len);
    assert_non_null(f);
    assert_true(f->cap >= len);
    zero(f->data, len);
    f->data[12] = 0x08;
    struct brisk_ipv4_repr h = {.total_len = (uint16_t)(len - 14), .id = id, .ttl = 64, .proto = 6,
                                .src = 0x0a000000u | src, .dst = 0x0a000101u};
    brisk_ipv4_emit(f->data + 14, &h);
    f->data[34] = (uint8_t)(sport >> 8);
    f->data[35] = (uint8_t)sport;
    f->data[37] = 80;
    return f;
}

static uint16_t id_of(const struct sim_frame *f)
{
    return (uint16_t)(f->data[18] << 8 | f->data[19]);
}

static void init(struct sim_qdisc *q, enum brisk_sim_qdisc_kind kind, uint32_t limit)
{
    struct brisk_sim_qdisc c = {.kind = kind, .limit_packets = limit};
    assert_int_equal(brisk_sim_qdisc_init(q, &c, 42), BRISK_OK);
}

/* Two source ports that hash to different queues of q. */
static void two_flows(brisk_sim_world *w, const struct sim_qdisc *q, uint16_t *a, uint16_t *b)
{
    struct sim_frame *fa = frame(w, 1, 1000, 100, 0);
    uint32_t qa = brisk_sim_qdisc_flow_of(q, fa->data, fa->len);
    *a = 1000;
    for (uint16_t p = 1001;; p++) {
        struct sim_frame *fb = frame(w, 2, p, 100, 0);
        uint32_t qb = brisk_sim_qdisc_flow_of(q, fb->data, fb->len);
        brisk_sim_frame_put(w, fb);
        if (qb != qa) {
            *b = p;
            break;
        }
    }
    brisk_sim_frame_put(w, fa);
}

static void test_droptail_drops_arrivals_over_the_limit(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_DROPTAIL, 3);
    for (uint16_t i = 0; i < 5; i++)
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, i), 0);
    assert_int_equal(q.st.enqueued, 3);
    assert_int_equal(q.st.dropped_overflow, 2);
    assert_int_equal(q.st.max_packets, 3);
    assert_int_equal(q.st.max_bytes, 3 * 1514);
    for (uint16_t i = 0; i < 3; i++) { /* the first three, in order: the tail was dropped */
        struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, 7 * MS);
        assert_non_null(f);
        assert_int_equal(id_of(f), i);
        brisk_sim_frame_put(w, f);
    }
    assert_null(brisk_sim_qdisc_dequeue(w, &q, 7 * MS));
    assert_int_equal(q.st.sojourn_max_ns, 7 * MS);
    assert_int_equal(q.st.sojourn_sum_ns, 21 * MS);
    /* Byte limit too. */
    brisk_sim_qdisc_destroy(&q);
    struct brisk_sim_qdisc c = {.kind = BRISK_SIM_QDISC_DROPTAIL, .limit_bytes = 3000};
    assert_int_equal(brisk_sim_qdisc_init(&q, &c, 1), BRISK_OK);
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, 0), 0);
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, 1), 0);
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 60, 2), 0);
    assert_int_equal(q.st.dropped_overflow, 1);
    assert_int_equal(q.packets, 2);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* DRR: two backlogged flows of equal packets alternate; with 1514- and 514-byte packets the bytes are shared,
 * not the packets (3 small per big one). */
static void test_drr_shares_bytes_between_flows(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    uint16_t pa, pb;
    two_flows(w, &q, &pa, &pb);
    for (uint16_t i = 0; i < 40; i++) {
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, pa, 1514, (uint16_t)(0x100 + i)), 0);
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 2, pb, 514, (uint16_t)(0x200 + i)), 0);
    }
    uint64_t bytes[2] = {0, 0};
    uint32_t n[2] = {0, 0};
    char order[41] = {0};
    for (int i = 0; i < 40; i++) {
        struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, 1 * MS); /* below target: no CoDel */
        assert_non_null(f);
        int k = id_of(f) >= 0x200;
        order[i] = k ? 'b' : 'a';
        bytes[k] += f->len;
        n[k]++;
        brisk_sim_frame_put(w, f);
    }
    assert_int_equal(n[0] + n[1], 40);
    /* One quantum per turn: a's 1514 bytes, then three of b's 514 (1542 bytes: b's deficit ends 28 below zero,
     * and the debt, carried into its next turns, is still short of a packet after these ten rounds). */
    assert_memory_equal(order, "abbbabbbabbbabbbabbbabbbabbbabbbabbbabbb", 40);
    /* 40 dequeues in rounds of one 1514-byte packet and three 514-byte ones: 10 and 30. */
    assert_int_equal(n[0], 10);
    assert_int_equal(n[1], 30);
    assert_true(bytes[0] > bytes[1] - 1514 && bytes[0] < bytes[1] + 1514);
    assert_int_equal(q.st.dropped_codel, 0);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* A flow that arrives while another is backlogged is new: it is served before the old one's next packet. */
static void test_new_flow_served_first(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    uint16_t pa, pb;
    two_flows(w, &q, &pa, &pb);
    for (uint16_t i = 0; i < 10; i++)
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, pa, 1514, i), 0);
    for (int i = 0; i < 3; i++) /* flow a has used its quantum and more: it is old now */
        brisk_sim_frame_put(w, brisk_sim_qdisc_dequeue(w, &q, 0));
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 2, pb, 100, 0x999), 0);
    struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, 0);
    assert_int_equal(id_of(f), 0x999);
    brisk_sim_frame_put(w, f);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* A new flow that empties goes to the end of old_flows, not off the lists, so a packet arriving for it right
 * after does not make it new again and jump ahead of the old flows (RFC 8290 §4.2). */
static void test_emptied_new_flow_becomes_old(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    uint16_t pa, pb;
    two_flows(w, &q, &pa, &pb);
    for (uint16_t i = 0; i < 20; i++)
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, pa, 500, (uint16_t)(0x100 + i)), 0);
    /* a: 500-byte packets; after five dequeues it is on old_flows with 528 bytes of deficit left. */
    for (int i = 0; i < 5; i++)
        brisk_sim_frame_put(w, brisk_sim_qdisc_dequeue(w, &q, 0));
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 2, pb, 100, 0x201), 0);
    struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, 0);
    assert_int_equal(id_of(f), 0x201); /* b is new: first */
    brisk_sim_frame_put(w, f);
    f = brisk_sim_qdisc_dequeue(w, &q, 0); /* b is found empty (to old_flows); a goes on */
    assert_int_equal(id_of(f), 0x105);
    brisk_sim_frame_put(w, f);
    brisk_sim_qdisc_enqueue(w, &q, frame(w, 2, pb, 100, 0x202), 0);
    f = brisk_sim_qdisc_dequeue(w, &q, 0); /* a's deficit (28) is not spent: a again, b waits its turn */
    assert_int_equal(id_of(f), 0x106);
    brisk_sim_frame_put(w, f);
    f = brisk_sim_qdisc_dequeue(w, &q, 0);
    assert_int_equal(id_of(f), 0x202);
    brisk_sim_frame_put(w, f);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* Over the limit, fq_codel drops from the head of the fattest queue, whoever arrived. */
static void test_overflow_drops_from_the_fattest_queue(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 10);
    uint16_t pa, pb;
    two_flows(w, &q, &pa, &pb);
    for (uint16_t i = 0; i < 8; i++)
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, pa, 1514, (uint16_t)(0x100 + i)), 0);
    for (uint16_t i = 0; i < 3; i++) /* the 11th packet is b's, but a is the fattest */
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 2, pb, 1514, (uint16_t)(0x200 + i)), 0);
    assert_int_equal(q.st.dropped_overflow, 1);
    assert_int_equal(q.packets, 10);
    struct sim_frame *probe = frame(w, 1, pa, 60, 0);
    uint32_t qa = brisk_sim_qdisc_flow_of(&q, probe->data, probe->len);
    brisk_sim_frame_put(w, probe);
    assert_int_equal(q.flows[qa].packets, 7);
    assert_int_equal(id_of(q.flows[qa].head), 0x101); /* the head (0x100) went */
    /* Every one of b's packets is still there. */
    uint32_t seen_b = 0;
    for (struct sim_frame *f; (f = brisk_sim_qdisc_dequeue(w, &q, 0));) {
        seen_b += id_of(f) >= 0x200;
        brisk_sim_frame_put(w, f);
    }
    assert_int_equal(seen_b, 3);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* CoDel in one queue: a standing queue whose sojourn stays above the 5 ms target. The first drop comes one
 * interval (100 ms) after the sojourn was first seen above target, the next ones at interval / sqrt(count)
 * after each other (100, 70.7, 57.7 ms ...); the sojourn falling below target ends the dropping state. */
static void test_codel_drops_after_an_interval_above_target(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q;
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    /* One packet enqueued per ms, one dequeued per ms, the queue kept 10 packets deep: each packet's sojourn
     * is 10 ms. */
    uint16_t id = 0;
    for (; id < 10; id++)
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, id), 0);
    uint64_t drops_at[8];
    unsigned nd = 0;
    uint64_t first_deq = 10 * MS;
    for (uint64_t t = first_deq; t <= 400 * MS; t += MS) {
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, id++), t);
        uint64_t before = q.st.dropped_codel;
        struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, t);
        assert_non_null(f);
        brisk_sim_frame_put(w, f);
        if (q.st.dropped_codel != before && nd < 8)
            drops_at[nd++] = t;
    }
    assert_true(nd >= 4);
    /* Seen above target at the first dequeue (10 ms): first drop at 110 ms. */
    assert_int_equal(drops_at[0], 110 * MS);
    /* Then 100 ms / sqrt(1) (count is 1 after the first drop), / sqrt(2), / sqrt(3), rounded up to the 1 ms
     * dequeue clock. */
    assert_int_equal(drops_at[1], 210 * MS);
    assert_int_equal(drops_at[2], 281 * MS); /* 210 + 70.71 */
    assert_int_equal(drops_at[3], 339 * MS); /* 280.71 + 57.74 */
    /* Now serve two per arrival: the queue drains, the sojourn falls below target, the dropping state ends
     * and the drops stop. */
    uint64_t drops = 0;
    for (uint64_t t = 401 * MS; t <= 600 * MS; t += MS) {
        if (t == 420 * MS)
            drops = q.st.dropped_codel;
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, id++), t);
        for (int k = 0; k < 2; k++) {
            struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, t);
            if (f)
                brisk_sim_frame_put(w, f);
        }
    }
    assert_int_equal(q.st.dropped_codel, drops);
    for (uint32_t i = 0; i < q.cfg.flows; i++)
        assert_int_equal(q.flows[i].codel.dropping, 0);
    /* A queue that never stays above target for an interval is never dropped from. */
    brisk_sim_qdisc_destroy(&q);
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    for (uint64_t t = 0; t < 1000 * MS; t += MS) {
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, 0), t);
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, 0), t);
        struct sim_frame *f = brisk_sim_qdisc_dequeue(w, &q, t + 4 * MS);
        brisk_sim_frame_put(w, f);
        f = brisk_sim_qdisc_dequeue(w, &q, t + 4 * MS);
        brisk_sim_frame_put(w, f);
    }
    assert_int_equal(q.st.dropped_codel, 0);
    assert_int_equal(q.st.sojourn_max_ns, 4 * MS);
    /* Nor one that holds a single packet, however long it waits (a slow link): with no more than MAXPACKET
     * left behind there is no standing queue to drain (RFC 8289 §5.4). */
    brisk_sim_qdisc_destroy(&q);
    init(&q, BRISK_SIM_QDISC_FQ_CODEL, 0);
    for (uint64_t t = 0; t < 1000 * MS; t += 10 * MS) {
        brisk_sim_qdisc_enqueue(w, &q, frame(w, 1, 1000, 1514, 0), t);
        brisk_sim_frame_put(w, brisk_sim_qdisc_dequeue(w, &q, t + 8 * MS));
    }
    assert_int_equal(q.st.dropped_codel, 0);
    assert_int_equal(q.st.dequeued, 100);
    brisk_sim_qdisc_destroy(&q);
    brisk_sim_world_free(w);
}

/* The flow hash is keyed: two instances with different keys place a set of flows differently, the same key
 * the same way. */
static void test_flow_hash_is_keyed(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    struct sim_qdisc q1, q2, q3;
    struct brisk_sim_qdisc c = {.kind = BRISK_SIM_QDISC_FQ_CODEL};
    assert_int_equal(brisk_sim_qdisc_init(&q1, &c, 1), BRISK_OK);
    assert_int_equal(brisk_sim_qdisc_init(&q2, &c, 2), BRISK_OK);
    assert_int_equal(brisk_sim_qdisc_init(&q3, &c, 1), BRISK_OK);
    int differ = 0;
    for (uint16_t p = 1000; p < 1016; p++) {
        struct sim_frame *f = frame(w, 1, p, 60, 0);
        uint32_t a = brisk_sim_qdisc_flow_of(&q1, f->data, f->len), b = brisk_sim_qdisc_flow_of(&q2, f->data, f->len);
        assert_int_equal(a, brisk_sim_qdisc_flow_of(&q3, f->data, f->len));
        assert_true(a < 1024 && b < 1024);
        differ += a != b;
        brisk_sim_frame_put(w, f);
    }
    assert_true(differ >= 12);
    /* Short and non-IPv4 frames hash without reading past their end. */
    uint8_t tiny[14] = {0};
    tiny[12] = 0x08;
    assert_true(brisk_sim_qdisc_flow_of(&q1, tiny, sizeof(tiny)) < 1024);
    assert_true(brisk_sim_qdisc_flow_of(&q1, tiny, 3) < 1024);
    brisk_sim_qdisc_destroy(&q1);
    brisk_sim_qdisc_destroy(&q2);
    brisk_sim_qdisc_destroy(&q3);
    struct brisk_sim_qdisc bad = {.kind = BRISK_SIM_QDISC_FQ_CODEL, .flows = 100000};
    assert_int_equal(brisk_sim_qdisc_init(&q1, &bad, 1), BRISK_ERR_INVAL);
    enum brisk_sim_qdisc_kind k;
    assert_int_equal(brisk_sim_qdisc_parse("fq_codel", &k), BRISK_OK);
    assert_int_equal(k, BRISK_SIM_QDISC_FQ_CODEL);
    assert_int_equal(brisk_sim_qdisc_parse("droptail", &k), BRISK_OK);
    assert_int_equal(k, BRISK_SIM_QDISC_DROPTAIL);
    assert_int_equal(brisk_sim_qdisc_parse("red", &k), BRISK_ERR_INVAL);
    brisk_sim_world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_droptail_drops_arrivals_over_the_limit),
        cmocka_unit_test(test_drr_shares_bytes_between_flows),
        cmocka_unit_test(test_new_flow_served_first),
        cmocka_unit_test(test_emptied_new_flow_becomes_old),
        cmocka_unit_test(test_overflow_drops_from_the_fattest_queue),
        cmocka_unit_test(test_codel_drops_after_an_interval_above_target),
        cmocka_unit_test(test_flow_hash_is_keyed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
