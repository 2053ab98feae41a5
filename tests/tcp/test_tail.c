/*
 * test_tail.c — white-box tests of the small-tail decision (src/tcp/tail.c): auto-corking until the
 * completion of this connection's data below TCP, never for the first packet (unless the compat knob), the
 * resume's Nagle mode, and the decision itself under both disciplines (brisk's and Linux's nonagle bits) for
 * each reason the transmit function runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#include <cmocka.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "support/txconn.h"
#include "tcp/tcp.h"

#define ACK               TXC_ACK
#define PSH               TXC_PSH
#define TRUESIZE(payload) TXC_TRUESIZE(payload)

/* Completes every packet the fake device holds and lets the stack run its deferred work at `now`. */
static void complete_and_poll(struct tf_conn *f, uint64_t now)
{
    fakedev_complete_all(&f->t.f, now);
    brisk_stack_poll(f->t.st, now);
}

/* Auto-corking: the small tail waits while this connection's data is below TCP, and goes on completion. */
static void test_autocork_holds_tail_until_completion(void **state)
{
    (void)state;
    struct tf_conn f;
    txc_open(&f, (const char *const[]){"tcp_autocorking=1", NULL});
    brisk_sock *c = f.c;
    assert_int_equal(brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS), BRISK_OK);
    size_t n0 = f.t.f.ntx;
    txc_send(c, 100, TF_MS); /* the first packet is never held */
    assert_int_equal(f.t.f.ntx - n0, 1);
    txc_send(c, 100, TF_MS); /* in flight and below TCP: corked, even with NODELAY */
    assert_int_equal(f.t.f.ntx - n0, 1);
    assert_int_equal(tf_info(c).hold, BRISK_HOLD_AUTOCORK);
    txc_send(c, 100, TF_MS); /* more joins the tail */
    assert_int_equal(f.t.f.ntx - n0, 1);
    assert_int_equal(tf_counters(&f.t).TCPAutoCorking, 1);
    complete_and_poll(&f, TF_MS + 500);
    assert_int_equal(f.t.f.ntx - n0, 2); /* one 200-byte segment, at the completion */
    assert_int_equal(c->snd.nxt - c->snd.una, 300);
    assert_int_equal(tf_info(c).hold_ns[BRISK_HOLD_AUTOCORK], 500);
    tf_conn_close(&f);
}

/* a181ceb501b3: with nothing unacknowledged, never hold — unless the compat knob restores the old rule. */
static void test_autocork_first_packet(void **state)
{
    (void)state;
    for (int bug = 0; bug <= 1; bug++) {
        struct tf_conn f;
        txc_open(&f, bug ? (const char *const[]){"tcp_autocorking=1", "tcp_autocork_first_packet=1", NULL}
                         : (const char *const[]){"tcp_autocorking=1", NULL});
        brisk_sock *c = f.c;
        brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS);
        txc_send(c, 100, TF_MS);
        /* The peer acknowledges it before the device reports completion (a slow-completion NIC). */
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, 2 * TF_MS);
        h.ack = c->snd.iss + 1 + 100;
        f.t.hold_completions = 1; /* the data packet stays below TCP */
        tf_inject(&f.t, &h, NULL, 0, 2 * TF_MS);
        f.t.hold_completions = 0;
        assert_int_equal(c->snd.una, c->snd.max);
        assert_true(c->tsq.wmem > 0);
        uint32_t before = c->snd.nxt;
        txc_send(c, 100, 3 * TF_MS);
        if (bug)
            assert_int_equal(c->snd.nxt, before); /* held with nothing in flight: the TCP_RR regression */
        else
            assert_int_equal(c->snd.nxt, before + 100);
        tf_conn_close(&f);
    }
}

/* bf06200e732d: the completion resume must use the connection's own Nagle mode. With the compat knob a
 * NODELAY sender's corked tail waits for the ACK of the previous small segment instead. */
static void test_resume_uses_current_nagle_mode(void **state)
{
    (void)state;
    for (int bug = 0; bug <= 1; bug++) {
        struct tf_conn f;
        txc_open(&f, bug ? (const char *const[]){"tcp_autocorking=1", "tcp_resume_nagle=1", NULL}
                         : (const char *const[]){"tcp_autocorking=1", NULL});
        brisk_sock *c = f.c;
        brisk_setsockopt(c, BRISK_SO_NODELAY, 1, TF_MS);
        uint32_t d = c->snd.nxt;
        txc_send(c, 48, TF_MS);  /* the PDU header leaves */
        txc_send(c, 512, TF_MS); /* the payload is auto-corked behind it */
        assert_int_equal(c->snd.nxt, d + 48);
        complete_and_poll(&f, TF_MS + 100);
        if (!bug) {
            assert_int_equal(c->snd.nxt, d + 48 + 512); /* resumed with NODELAY: out at the completion */
        } else {
            assert_int_equal(c->snd.nxt, d + 48); /* resumed with Nagle on: waits for the ACK of 48 bytes */
            assert_int_equal(tf_info(c).hold, BRISK_HOLD_NAGLE);
            struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, 40 * TF_MS);
            h.ack = d + 48;
            f.t.hold_completions = 1; /* keep counting what the ACK releases, not what collecting completes */
            tf_inject(&f.t, &h, NULL, 0, 40 * TF_MS); /* the peer's delayed ACK */
            f.t.hold_completions = 0;
            assert_int_equal(c->snd.nxt, d + 48 + 512);
        }
        tf_conn_close(&f);
    }
}

/* The decision itself, for each reason the transmit function runs and under both disciplines: a 100-byte
 * segment is in flight, unacknowledged and below TCP, and a 50-byte tail is asked about. brisk's rules ask
 * cork / MSG_MORE, then auto-cork, then Nagle; Linux's (tcp_sw_gso) Nagle with its nonagle bits first. */
static void test_tail_decision(void **state)
{
    (void)state;
    for (int sw = 0; sw <= 1; sw++) {
        struct tf_conn f;
        txc_open(&f, (const char *const[]){"tcp_autocorking=1", NULL});
        brisk_sock *c = f.c;
        txc_send(c, 100, TF_MS); /* the first small segment: it goes */
        assert_int_equal(c->snd.nxt - c->snd.una, 100);
        assert_true(c->tsq.wmem > 0);
        f.t.st->net.s.tcp_sw_gso = (uint32_t)sw; /* read by tcp_tail_hold only; restored before the close */
        uint64_t now = 2 * TF_MS;
        /* Nagle: a small segment is unacknowledged. Auto-corking only on the application's send, and under
         * Linux's rules only once Nagle lets the tail through. */
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_NAGLE);
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_SEND, 50, now),
                         sw ? BRISK_HOLD_NAGLE : BRISK_HOLD_AUTOCORK);
        c->tsq.throttled = 0;
        c->snd.nodelay = 1;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_NONE);
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_SEND, 50, now), BRISK_HOLD_AUTOCORK);
        c->tsq.throttled = 0;
        /* A completion resume keeps TCP_NODELAY, unless the 3.14-rc compat knob forces Nagle there. */
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_RESUME, 50, now), BRISK_HOLD_NONE);
        f.t.st->net.s.tcp_resume_nagle = 1;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_RESUME, 50, now), BRISK_HOLD_NAGLE);
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_NONE);
        f.t.st->net.s.tcp_resume_nagle = 0;
        /* MSG_MORE holds whatever TCP_NODELAY says; TCP_CORK yields to a TCP_NODELAY just set. */
        c->snd.more = 1;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_CORK);
        c->snd.more = 0;
        c->snd.cork = 1;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_CORK);
        c->snd.push_once = 1;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_NONE);
        c->snd.push_once = 0;
        c->snd.cork = 0;
        tcp_timer_cancel(c, &c->timer.cork);
        /* Once the small segment is acknowledged, Nagle has nothing to wait for. */
        c->snd.nodelay = 0;
        struct brisk_tcp_repr h = tf_peer_hdr(&f.p, BRISK_TCP_ACK, now);
        h.ack = c->snd.nxt;
        f.t.hold_completions = 1;
        tf_inject(&f.t, &h, NULL, 0, now);
        f.t.hold_completions = 0;
        assert_int_equal(tcp_tail_hold(c, TCP_XMIT_INPUT, 50, now), BRISK_HOLD_NONE);
        f.t.st->net.s.tcp_sw_gso = 0;
        tf_conn_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_autocork_holds_tail_until_completion),
        cmocka_unit_test(test_autocork_first_packet),
        cmocka_unit_test(test_resume_uses_current_nagle_mode),
        cmocka_unit_test(test_tail_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
