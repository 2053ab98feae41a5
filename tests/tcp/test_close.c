/*
 * test_close.c — closing connections (RFC 9293 §3.6, §3.10.4, §3.10.7.4 "eighth"; RFC 2525 §2.17; RFC 1122
 * §4.2.2.13): active close through FIN-WAIT-1, FIN-WAIT-2 and TIME-WAIT (tcp_time_wait) to the socket being
 * freed; the orphaned FIN-WAIT-2 timeout; passive close through CLOSE-WAIT and LAST-ACK; simultaneous close
 * through CLOSING; half-close (shutdown_write, then still receiving); and the aborts: close with unread data,
 * LINGER 0 and brisk_abort, each a RST.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define RST BRISK_TCP_RST
#define FIN BRISK_TCP_FIN
#define PSH BRISK_TCP_PSH

struct fix {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    struct tf_events ev;
    uint32_t d; /* our next sequence number */
};

static void setup(struct fix *f, const char *const *sets)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    f->c = tf_open_passive(&f->p, f->l, NULL, 0, 10 * TF_MS);
    brisk_sock_set_callback(f->c, tf_events_cb, &f->ev);
    f->d = f->p.l_iss + 1;
}

static void finish(struct fix *f)
{
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(f->t.st->tcp->nsocks, 0);
    tf_free(&f->t);
}

/* The connection (orphaned or not) by its 4-tuple, NULL once freed. */
static brisk_sock *lookup(struct fix *f)
{
    return tcp_conn_lookup(&f->t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000));
}

static int state_of(struct fix *f)
{
    brisk_sock *s = lookup(f);
    if (!s && tcp_tw_lookup(&f->t.st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000)))
        return BRISK_TCP_TIME_WAIT; /* an orphan's TIME-WAIT goes on as a record (timewait.c) */
    return s ? s->state : -1;
}

static void test_active_close_to_time_wait(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_time_wait=10s", NULL});
    uint64_t t1 = TF_SEC;
    assert_int_equal(brisk_send(f.c, "bye", 3, 0, t1), 3);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 3);
    /* close(): the FIN goes after the data (FIN-WAIT-1); the handle is gone, the connection is not. */
    assert_int_equal(brisk_close(f.c, t1 + TF_MS), BRISK_OK);
    f.c = NULL;
    struct tf_seg *s = TF_EXPECT(&f.t, t1 + TF_MS, FIN | ACK, f.d + 3, 1001, 0);
    assert_true(s->h.opts.ts_ok);
    assert_int_equal(state_of(&f), BRISK_TCP_FIN_WAIT_1);
    /* The peer acknowledges data and FIN: FIN-WAIT-2. */
    f.p.ack = f.d + 4;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 20 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(state_of(&f), BRISK_TCP_FIN_WAIT_2);
    /* The peer's FIN: acknowledged at once, TIME-WAIT. */
    uint64_t t2 = t1 + 30 * TF_MS;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t2);
    TF_EXPECT(&f.t, t2, ACK, f.d + 4, 1002, 0);
    assert_int_equal(state_of(&f), BRISK_TCP_TIME_WAIT);
    /* A stray ACK in TIME-WAIT is ignored; the connection lasts tcp_time_wait, then is freed. */
    tf_peer_send(&f.p, ACK, NULL, 0, t2 + TF_SEC);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t2 + 10 * TF_SEC - 1);
    assert_int_equal(state_of(&f), BRISK_TCP_TIME_WAIT);
    tf_run(&f.t, t2 + 10 * TF_SEC);
    assert_int_equal(state_of(&f), -1);
    assert_int_equal(f.t.st->tcp->nsocks, 1); /* the listener */
    TF_EXPECT_NONE(&f.t);
    /* The 4-tuple is free: a new SYN from the peer makes a new connection. */
    tf_peer_init(&f.p, &f.t, 40000, 80, 500000);
    brisk_sock *c = tf_open_passive(&f.p, f.l, NULL, t2 + 11 * TF_SEC, 0);
    brisk_abort(c, t2 + 11 * TF_SEC);
    finish(&f);
}

/* RFC 9293 §3.10.7.4: in TIME-WAIT, a retransmission of the peer's FIN is acknowledged and restarts the
 * 2 MSL timeout. */
static void test_time_wait_retransmitted_fin(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_time_wait=10s", NULL});
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    uint64_t t2 = 2 * TF_SEC;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t2);
    TF_EXPECT(&f.t, t2, ACK, f.d + 1, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    assert_int_equal(f.ev.all, BRISK_EV_READABLE | BRISK_EV_FIN_ACKED | BRISK_EV_CLOSED);
    /* Our ACK was lost: the peer's FIN again, 5 s later. */
    f.p.nxt--;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t2 + 5 * TF_SEC);
    TF_EXPECT(&f.t, t2 + 5 * TF_SEC, ACK, f.d + 1, 1002, 0);
    /* The wait restarted: still TIME-WAIT 10 s after the first FIN, over 10 s after the second. */
    tf_run(&f.t, t2 + 15 * TF_SEC - 1);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    tf_run(&f.t, t2 + 15 * TF_SEC);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
    /* Not orphaned: the application still holds it; closing now frees it without a segment. */
    assert_int_equal(brisk_close(f.c, t2 + 16 * TF_SEC), BRISK_OK);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

static void test_orphan_fin_wait_2_timeout(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_fin_timeout=5s", NULL});
    brisk_close(f.c, TF_SEC);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + 10 * TF_MS);
    assert_int_equal(state_of(&f), BRISK_TCP_FIN_WAIT_2);
    /* The peer's ACKs do not keep it (new data would reset it: test_data_after_close_resets). */
    tf_peer_send(&f.p, ACK, NULL, 0, 2 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    /* tcp_fin_timeout after entering FIN-WAIT-2 the orphan is dropped, silently. */
    tf_run(&f.t, 6 * TF_SEC + 10 * TF_MS - 1);
    assert_int_equal(state_of(&f), BRISK_TCP_FIN_WAIT_2);
    tf_run(&f.t, 6 * TF_SEC + 10 * TF_MS);
    assert_null(lookup(&f));
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* A FIN that arrives out of order (its data ahead of a hole) is kept: when the hole fills, the connection
 * goes to CLOSE-WAIT at once and one ACK covers the data and the FIN — no retransmission of the FIN needed.
 */
static void test_out_of_order_fin_is_kept(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC;
    uint8_t data[100];
    tf_pattern(data, sizeof(data), 0);
    uint32_t start = f.p.nxt;
    f.p.nxt = start + 50; /* the first 50 bytes are "lost" */
    tf_peer_send(&f.p, FIN | ACK | PSH, data + 50, 50, t1);
    struct tf_seg *s = TF_EXPECT(&f.t, t1, ACK, f.d, start, 0); /* a duplicate ACK with a SACK block */
    assert_int_equal(s->h.opts.nsack, 1);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
    f.p.nxt = start;
    tf_peer_send(&f.p, ACK | PSH, data, 50, t1 + TF_MS);
    TF_EXPECT(&f.t, t1 + TF_MS, ACK, f.d, start + 101, 0); /* 100 bytes and the FIN */
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSE_WAIT);
    uint8_t buf[200];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + TF_MS), 100);
    assert_memory_equal(buf, data, 100);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + TF_MS), 0);
    brisk_abort(f.c, t1 + 2 * TF_MS);
    finish(&f);
}

static void test_passive_close(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    /* Data and FIN in one segment: both acknowledged at once, CLOSE-WAIT, readable. */
    uint64_t t1 = TF_SEC;
    uint8_t data[50];
    tf_pattern(data, sizeof(data), 0);
    tf_peer_send(&f.p, FIN | ACK | PSH, data, sizeof(data), t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1052, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSE_WAIT);
    assert_int_equal(f.ev.all, BRISK_EV_READABLE);
    uint8_t buf[100];
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1), 50);
    assert_memory_equal(buf, data, 50);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1), 0); /* end of stream */
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1), 0);
    /* We may still send in CLOSE-WAIT. */
    assert_int_equal(brisk_send(f.c, "reply", 5, 0, t1 + TF_MS), 5);
    TF_EXPECT(&f.t, t1 + TF_MS, ACK | PSH, f.d, 1052, 5);
    /* close(): FIN after the data, LAST-ACK. */
    brisk_close(f.c, t1 + 2 * TF_MS);
    f.c = NULL;
    TF_EXPECT(&f.t, t1 + 2 * TF_MS, FIN | ACK, f.d + 5, 1052, 0);
    assert_int_equal(state_of(&f), BRISK_TCP_LAST_ACK);
    /* An ACK of the data only: still LAST-ACK. */
    f.p.ack = f.d + 5;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 10 * TF_MS);
    assert_int_equal(state_of(&f), BRISK_TCP_LAST_ACK);
    /* The FIN is retransmitted when its ACK does not come: the RTO (200 ms, the minimum, for a 10 ms path)
     * restarted with the ACK of the data (RFC 6298 §5.3). */
    tf_run(&f.t, t1 + 210 * TF_MS - 1);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, t1 + 210 * TF_MS);
    TF_EXPECT(&f.t, t1 + 210 * TF_MS, FIN | ACK, f.d + 5, 1052, 0);
    /* The ACK of the FIN: CLOSED and freed, no reply. */
    f.p.ack = f.d + 6;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 250 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_null(lookup(&f));
    finish(&f);
}

static void test_passive_close_not_orphaned(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, TF_SEC);
    TF_EXPECT(&f.t, TF_SEC, ACK, f.d, 1002, 0);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC + TF_MS), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC + TF_MS, FIN | ACK, f.d, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_LAST_ACK);
    assert_int_equal(brisk_send(f.c, "x", 1, 0, TF_SEC + TF_MS), BRISK_ERR_PIPE);
    f.p.ack = f.d + 1;
    f.ev.all = 0;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + 5 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
    assert_int_equal(f.ev.all, BRISK_EV_FIN_ACKED | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(f.c), BRISK_OK);
    brisk_close(f.c, 2 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

static void test_simultaneous_close(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_time_wait=4s", NULL});
    uint64_t t1 = TF_SEC;
    assert_int_equal(brisk_shutdown_write(f.c, t1), BRISK_OK);
    TF_EXPECT(&f.t, t1, FIN | ACK, f.d, 1001, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_1);
    /* The peer's FIN crosses ours (it does not acknowledge ours): CLOSING, and an ACK of it. */
    f.p.ack = f.d;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 5 * TF_MS);
    TF_EXPECT(&f.t, t1 + 5 * TF_MS, ACK, f.d + 1, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSING);
    /* The ACK of our FIN: TIME-WAIT, for tcp_time_wait. */
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 10 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    assert_true(f.ev.all & BRISK_EV_CLOSED);
    assert_int_equal(f.ev.at[4], t1 + 10 * TF_MS);
    tf_run(&f.t, t1 + 10 * TF_MS + 4 * TF_SEC - 1);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    tf_run(&f.t, t1 + 10 * TF_MS + 4 * TF_SEC);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSED);
    TF_EXPECT_NONE(&f.t);
    brisk_close(f.c, t1 + 5 * TF_SEC);
    finish(&f);
}

/* A simultaneous close whose ACK of the peer's FIN the device refuses (ring full). The ACK of our FIN then
 * takes the connection to TIME-WAIT before the ring drains; the refused ACK must still go out on the wake —
 * it is the only ACK of the peer's FIN, and without it the peer sits in CLOSING until its RTO (found by
 * tests/sim/test_tsq_stress.c once brisk_sim_bulk reported whole connections: a 200 ms stall). */
static void test_simultaneous_close_refused_ack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    f.t.hold_completions = 1;
    uint64_t t1 = TF_SEC;
    assert_int_equal(brisk_shutdown_write(f.c, t1), BRISK_OK);
    TF_EXPECT(&f.t, t1, FIN | ACK, f.d, 1001, 0);
    f.t.f.busy = 1;
    f.p.ack = f.d;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 5 * TF_MS);
    TF_EXPECT_NONE(&f.t); /* the ACK of the peer's FIN: refused */
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSING);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 6 * TF_MS);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    /* The ring drains: the completion's wake sends it. */
    f.t.f.busy = 0;
    fakedev_complete_all(&f.t.f, t1 + 7 * TF_MS);
    tf_run(&f.t, t1 + 7 * TF_MS);
    TF_EXPECT(&f.t, t1 + 7 * TF_MS, ACK, f.d + 1, 1002, 0);
    TF_EXPECT_NONE(&f.t);
    brisk_close(f.c, t1 + 8 * TF_MS);
    tf_run(&f.t, t1 + 200 * TF_SEC);
    finish(&f);
}

/* FIN and ACK of our FIN in one segment from FIN-WAIT-1: straight to TIME-WAIT. */
static void test_fin_ack_in_fin_wait_1(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, TF_SEC + TF_MS);
    TF_EXPECT(&f.t, TF_SEC + TF_MS, ACK, f.d + 1, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    brisk_close(f.c, TF_SEC + 2 * TF_MS); /* closing in TIME-WAIT: the stack finishes the wait */
    f.c = NULL;
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(state_of(&f), BRISK_TCP_TIME_WAIT);
    tf_run(&f.t, TF_SEC + TF_MS + 60 * TF_SEC); /* the default tcp_time_wait */
    assert_null(lookup(&f));
    finish(&f);
}

static void test_half_close_still_receives(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC;
    assert_int_equal(brisk_shutdown_write(f.c, t1), BRISK_OK);
    TF_EXPECT(&f.t, t1, FIN | ACK, f.d, 1001, 0);
    assert_int_equal(brisk_send(f.c, "x", 1, 0, t1), BRISK_ERR_PIPE);
    assert_int_equal(brisk_shutdown_write(f.c, t1), BRISK_OK); /* idempotent */
    TF_EXPECT_NONE(&f.t);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + TF_MS);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_2);
    /* The peer keeps sending: delivered and acknowledged as usual. */
    for (int k = 0; k < 3; k++) {
        tf_peer_send_data(&f.p, 1000, t1 + (uint64_t)(2 + k) * TF_MS);
        TF_EXPECT(&f.t, t1 + (uint64_t)(2 + k) * TF_MS, ACK, f.d + 1, f.p.nxt, 0);
    }
    uint8_t buf[4000], want[3000];
    tf_pattern(want, sizeof(want), 0);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 10 * TF_MS), 3000);
    assert_memory_equal(buf, want, 3000);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 10 * TF_MS), BRISK_ERR_AGAIN);
    /* Not orphaned: no FIN-WAIT-2 timeout, the half-closed connection may last. */
    tf_run(&f.t, t1 + 600 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_2);
    /* Then the peer's FIN: TIME-WAIT, end of stream. */
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 601 * TF_SEC);
    TF_EXPECT(&f.t, t1 + 601 * TF_SEC, ACK, f.d + 1, f.p.nxt, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 601 * TF_SEC), 0);
    brisk_abort(f.c, t1 + 602 * TF_SEC); /* abort in TIME-WAIT: no RST, just gone */
    TF_EXPECT_NONE(&f.t);
    assert_null(lookup(&f));
    finish(&f);
}

/* RFC 2525 §2.17 / RFC 9293 §3.10.4: closing with unread data aborts with a RST. */
static void test_close_with_unread_data_resets(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    tf_peer_send_data(&f.p, 100, TF_SEC);
    TF_EXPECT(&f.t, TF_SEC, ACK, f.d, 1101, 0);
    assert_int_equal(brisk_send(f.c, "abc", 3, 0, TF_SEC), 3);
    TF_EXPECT(&f.t, TF_SEC, ACK | PSH, f.d, 1101, 3);
    brisk_close(f.c, TF_SEC + TF_MS);
    f.c = NULL;
    TF_EXPECT(&f.t, TF_SEC + TF_MS, RST | ACK, f.d + 3, 1101, 0);
    TF_EXPECT_NONE(&f.t);
    assert_null(lookup(&f));
    assert_int_equal(tf_counters(&f.t).TCPAbortOnClose, 1);
    /* Nothing is retransmitted for it. */
    tf_run(&f.t, 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    /* The peer's next segment meets no connection: RST. */
    f.p.ack = f.d + 3;
    tf_peer_send_data(&f.p, 10, 101 * TF_SEC);
    TF_EXPECT(&f.t, 101 * TF_SEC, RST, f.d + 3, 0, 0);
    finish(&f);
}

static void test_linger0_close_resets(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_LINGER0, 1, 0), BRISK_OK);
    assert_int_equal(brisk_send(f.c, "abc", 3, 0, TF_SEC), 3);
    TF_EXPECT(&f.t, TF_SEC, ACK | PSH, f.d, 1001, 3);
    brisk_close(f.c, TF_SEC + TF_MS);
    TF_EXPECT(&f.t, TF_SEC + TF_MS, RST | ACK, f.d + 3, 1001, 0);
    TF_EXPECT_NONE(&f.t);
    assert_null(lookup(&f));
    assert_int_equal(tf_counters(&f.t).TCPAbortOnClose, 1);
    finish(&f);
}

static void test_abort_resets(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    /* Unsent data does not matter: RST at SND.NXT (the first byte never sent). */
    assert_int_equal(brisk_setsockopt(f.c, BRISK_SO_CORK, 1, 0), BRISK_OK);
    assert_int_equal(brisk_send(f.c, "abc", 3, 0, TF_SEC), 3);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(brisk_abort(f.c, TF_SEC + TF_MS), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC + TF_MS, RST | ACK, f.d, 1001, 0);
    assert_null(lookup(&f));
    assert_int_equal(tf_counters(&f.t).TcpOutRsts, 1);
    /* Aborting a connecting socket sends nothing (there is no peer state to reset). */
    int err;
    brisk_sock *s = brisk_socket(f.t.st, &err);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, 9, 2 * TF_SEC), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&f.t);
    assert_int_equal(syn->h.flags, SYN);
    brisk_abort(s, 2 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    tf_run(&f.t, 100 * TF_SEC);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* The peer resets a half-closed connection: the error is reported, nothing is sent. */
static void test_rst_in_fin_wait_2(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    tf_take(&f.t);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + TF_MS);
    f.ev.all = 0;
    tf_peer_send(&f.p, RST, NULL, 0, TF_SEC + 2 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(f.ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_RESET);
    brisk_close(f.c, TF_SEC + 3 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    finish(&f);
}

/* A FIN that went with unacknowledged data is resent with it after an RTO (RFC 9293 §3.10.4: the FIN
 * follows all data and is retransmitted until acknowledged). The tail loss probe that would go first (the
 * bare FIN: test_tlp.c) is off here. */
static void test_fin_retransmitted_after_data(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, (const char *const[]){"tcp_tlp=0", NULL});
    uint8_t data[300];
    tf_pattern(data, sizeof(data), 0);
    assert_int_equal(brisk_send(f.c, data, sizeof(data), 0, TF_SEC), 300);
    TF_EXPECT(&f.t, TF_SEC, ACK | PSH, f.d, 1001, 300);
    brisk_close(f.c, TF_SEC);
    f.c = NULL;
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d + 300, 1001, 0);
    /* Nothing acknowledged: at RTO (200 ms) the data goes again, the FIN riding on it. */
    tf_run(&f.t, TF_SEC + 200 * TF_MS);
    struct tf_seg *s = TF_EXPECT(&f.t, TF_SEC + 200 * TF_MS, FIN | ACK | PSH, f.d, 1001, 300);
    assert_true(tf_payload_is(s, 0));
    TF_EXPECT_NONE(&f.t);
    /* The data is acknowledged, the FIN is not: only the FIN goes again, at the next (doubled) RTO. */
    f.p.ack = f.d + 300;
    tf_peer_send(&f.p, ACK, NULL, 0, TF_SEC + 210 * TF_MS);
    TF_EXPECT_NONE(&f.t);
    assert_int_equal(state_of(&f), BRISK_TCP_FIN_WAIT_1);
    assert_true(tf_run_to_seg(&f.t, 10 * TF_SEC));
    s = TF_EXPECT(&f.t, TF_ANY_TIME, FIN | ACK, f.d + 300, 1001, 0);
    assert_true(s->at > TF_SEC + 210 * TF_MS);
    f.p.ack = f.d + 301;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, s->at + TF_MS);
    TF_EXPECT(&f.t, s->at + TF_MS, ACK, f.d + 301, 1002, 0);
    assert_int_equal(state_of(&f), BRISK_TCP_TIME_WAIT);
    tf_run(&f.t, s->at + TF_MS + 60 * TF_SEC);
    assert_null(lookup(&f));
    finish(&f);
}

/* New data after close(), in FIN-WAIT-1 (our FIN not yet acknowledged) or FIN-WAIT-2 (acknowledged, by the
 * same segment here): the application will never read it, so the connection is reset — a RST in reply to the
 * segment (SEQ = its ACK) and the socket freed (RFC 1122 §4.2.2.13; Linux tcp_rcv_state_process, or the
 * FIN-WAIT-2 timewait socket). A FIN alone, or a duplicate, still gets the usual ACK. Before the fix brisk
 * acknowledged and discarded the data and went on closing. */
static void test_data_after_close_resets(void **state)
{
    (void)state;
    for (int acks_fin = 0; acks_fin <= 1; acks_fin++) {
        struct fix f;
        setup(&f, NULL);
        uint64_t t1 = TF_SEC;
        brisk_close(f.c, t1);
        f.c = NULL;
        TF_EXPECT(&f.t, t1, FIN | ACK, f.d, 1001, 0);
        f.p.ack = f.d + (uint32_t)acks_fin;
        uint8_t data[100];
        tf_pattern(data, sizeof(data), 0);
        tf_peer_send(&f.p, ACK | PSH, data, sizeof(data), t1 + 10 * TF_MS);
        TF_EXPECT(&f.t, t1 + 10 * TF_MS, RST, f.d + (uint32_t)acks_fin, 0, 0);
        TF_EXPECT_NONE(&f.t);
        assert_null(lookup(&f));
        assert_int_equal(tf_counters(&f.t).TCPAbortOnData, 1);
        finish(&f);
    }
    /* Half-closed, not closed: the data is the application's to read. */
    struct fix f;
    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send_data(&f.p, 100, TF_SEC + 10 * TF_MS);
    TF_EXPECT(&f.t, TF_SEC + 10 * TF_MS, ACK, f.d + 1, 1101, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_FIN_WAIT_2);
    brisk_abort(f.c, TF_SEC + 20 * TF_MS);
    finish(&f);
}

/* A retransmitted FIN in CLOSE-WAIT (our ACK was lost) is acknowledged with a D-SACK of its sequence number,
 * as Linux does (tcp_data_queue); in TIME-WAIT with a bare ACK, as Linux's timewait socket answers. Before,
 * brisk reported duplicates with data only. */
static void test_duplicate_fin_dsack(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, NULL);
    uint64_t t1 = TF_SEC;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1);
    TF_EXPECT(&f.t, t1, ACK, f.d, 1002, 0);
    f.p.nxt = 1001;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 100 * TF_MS);
    struct tf_seg *a = TF_EXPECT(&f.t, t1 + 100 * TF_MS, ACK, f.d, 1002, 0);
    assert_int_equal(a->h.opts.nsack, 1);
    assert_int_equal(a->h.opts.sack[0].start, 1001);
    assert_int_equal(a->h.opts.sack[0].end, 1002);
    brisk_close(f.c, t1 + 200 * TF_MS);
    f.c = NULL;
    TF_EXPECT(&f.t, t1 + 200 * TF_MS, FIN | ACK, f.d, 1002, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 210 * TF_MS);
    assert_null(lookup(&f));
    finish(&f);

    setup(&f, NULL);
    assert_int_equal(brisk_shutdown_write(f.c, t1), BRISK_OK);
    TF_EXPECT(&f.t, t1, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 10 * TF_MS);
    TF_EXPECT(&f.t, t1 + 10 * TF_MS, ACK, f.d + 1, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    f.p.nxt = 1001;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1 + 100 * TF_MS);
    a = TF_EXPECT(&f.t, t1 + 100 * TF_MS, ACK, f.d + 1, 1002, 0);
    assert_int_equal(a->h.opts.nsack, 0);
    brisk_abort(f.c, t1 + 200 * TF_MS);
    finish(&f);
}

/* The linux-6.x profile's settings (tcp_fin_delack=1 among them). */
static const char *const *linux_sets(void)
{
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strcmp(brisk_profile_name(i), "linux-6.x") == 0)
            return brisk_profile_settings(i);
    fail();
    return NULL;
}

/* The peer closes first: its FIN takes ESTABLISHED to CLOSE-WAIT. brisk's profile acknowledges it at once.
 * linux-6.x (tcp_fin_delack=1) delays it as Linux's tcp_fin does (pingpong mode): after the ACK timeout
 * (40 ms), or on our FIN when the application closes first; at once when nothing was ever received (Linux's
 * ACK timeout is still 0) or when a full segment and the FIN are unacknowledged. Before the fix every
 * profile acknowledged at once (Linux 6.18: tests/conformance/close/peer-fin-eof.pkt, fin-ack-rides-on-fin,
 * peer-fin-full-segment, poll/poll-fin-rdhup). */
static void test_peer_fin_ack_delayed(void **state)
{
    (void)state;
    for (int lx = 0; lx <= 1; lx++) {
        uint8_t data[1448], buf[2000];
        tf_pattern(data, sizeof(data), 0);
        uint64_t t1 = TF_SEC;
        /* 50 bytes and the FIN in one segment. */
        struct fix f;
        setup(&f, lx ? linux_sets() : NULL);
        tf_peer_send(&f.p, FIN | ACK | PSH, data, 50, t1);
        assert_int_equal(tf_info(f.c).state, BRISK_TCP_CLOSE_WAIT);
        if (!lx) {
            TF_EXPECT(&f.t, t1, ACK, f.d, 1052, 0);
        } else {
            TF_EXPECT_NONE(&f.t);
            tf_run(&f.t, t1 + 40 * TF_MS - 1);
            TF_EXPECT_NONE(&f.t);
            tf_run(&f.t, t1 + 40 * TF_MS);
            TF_EXPECT(&f.t, t1 + 40 * TF_MS, ACK, f.d, 1052, 0);
        }
        assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 50 * TF_MS), 50);
        assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 50 * TF_MS), 0);
        TF_EXPECT_NONE(&f.t);
        brisk_abort(f.c, t1 + 50 * TF_MS);
        finish(&f);

        /* The application reads and closes within the ACK timeout: Linux's FIN carries the ACK, and the
         * delayed ACK is not sent after it. */
        setup(&f, lx ? linux_sets() : NULL);
        tf_peer_send(&f.p, FIN | ACK | PSH, data, 50, t1);
        if (!lx)
            TF_EXPECT(&f.t, t1, ACK, f.d, 1052, 0);
        assert_int_equal(brisk_recv(f.c, buf, sizeof(buf), t1 + 10 * TF_MS), 50);
        brisk_close(f.c, t1 + 10 * TF_MS);
        f.c = NULL;
        TF_EXPECT(&f.t, t1 + 10 * TF_MS, FIN | ACK, f.d, 1052, 0);
        tf_run(&f.t, t1 + 100 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        f.p.ack = f.d + 1;
        tf_peer_send(&f.p, ACK, NULL, 0, t1 + 110 * TF_MS);
        assert_null(lookup(&f));
        finish(&f);

        /* A FIN before any data: at once in both (Linux's ACK timeout is still 0: the next tick). */
        setup(&f, lx ? linux_sets() : NULL);
        tf_peer_send(&f.p, FIN | ACK, NULL, 0, t1);
        TF_EXPECT(&f.t, t1, ACK, f.d, 1002, 0);
        brisk_abort(f.c, t1);
        finish(&f);

        /* A full-sized segment (1448 bytes with timestamps) and the FIN: more than one segment's worth of
         * sequence space unacknowledged, at once in both. */
        setup(&f, lx ? linux_sets() : NULL);
        tf_peer_send(&f.p, ACK, data, 100, t1); /* quick-ACK mode: acknowledged at once */
        TF_EXPECT(&f.t, t1, ACK, f.d, 1101, 0);
        tf_peer_send(&f.p, FIN | ACK | PSH, data, tf_info(f.c).mss, t1 + 10 * TF_MS);
        TF_EXPECT(&f.t, t1 + 10 * TF_MS, ACK, f.d, 1101 + tf_info(f.c).mss + 1, 0);
        brisk_abort(f.c, t1 + 10 * TF_MS);
        finish(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_active_close_to_time_wait),
        cmocka_unit_test(test_time_wait_retransmitted_fin),
        cmocka_unit_test(test_orphan_fin_wait_2_timeout),
        cmocka_unit_test(test_passive_close),
        cmocka_unit_test(test_out_of_order_fin_is_kept),
        cmocka_unit_test(test_passive_close_not_orphaned),
        cmocka_unit_test(test_simultaneous_close),
        cmocka_unit_test(test_simultaneous_close_refused_ack),
        cmocka_unit_test(test_fin_ack_in_fin_wait_1),
        cmocka_unit_test(test_half_close_still_receives),
        cmocka_unit_test(test_close_with_unread_data_resets),
        cmocka_unit_test(test_linger0_close_resets),
        cmocka_unit_test(test_abort_resets),
        cmocka_unit_test(test_rst_in_fin_wait_2),
        cmocka_unit_test(test_fin_retransmitted_after_data),
        cmocka_unit_test(test_peer_fin_ack_delayed),
        cmocka_unit_test(test_data_after_close_resets),
        cmocka_unit_test(test_duplicate_fin_dsack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
