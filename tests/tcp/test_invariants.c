/*
 * test_invariants.c — the connection invariant checker (src/tcp/invariants.c): a real connection, with data
 * in flight, a SACK scoreboard and out-of-order data held, satisfies every invariant; each corruption of one
 * piece of its state (sequence variables, scoreboard totals and order, reassembly totals, below-TCP
 * accounting, timer kinds) is reported by name; and tcp_check_invariants aborts the process on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stack/stack.h"
#include "support/tcpforge.h"
#include "tcp/tcp.h"

#define ACK BRISK_TCP_ACK
#define M   1460u

struct fix {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    uint32_t d; /* the stack's first data sequence number */
    char buf[256];
};

/* A connection with four segments in flight, the third SACKed, and two out-of-order pieces received. */
static void setup(struct fix *f)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, NULL);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    f->c = tf_open_passive(&f->p, f->l, &o, 0, 10 * TF_MS);
    f->d = f->p.l_iss + 1;
    static uint8_t data[4 * M];
    tf_pattern(data, sizeof(data), 0);
    uint64_t now = TF_SEC;
    assert_int_equal(brisk_send(f->c, data, sizeof(data), 0, now), (int64_t)sizeof(data));
    while (tf_pending(&f->t))
        tf_take(&f->t);
    /* SACK of the third segment: a hole below it. */
    f->p.ack = f->d;
    struct brisk_tcp_repr h = tf_peer_hdr(&f->p, ACK, now + 10 * TF_MS);
    h.opts.nsack = 1;
    h.opts.sack[0].start = f->d + 2 * M;
    h.opts.sack[0].end = f->d + 3 * M;
    tf_inject(&f->t, &h, NULL, 0, now + 10 * TF_MS);
    /* Two adjacent pieces from the peer beyond a 100-byte hole. */
    uint32_t nxt = f->p.nxt;
    for (int i = 0; i < 2; i++) {
        f->p.nxt = nxt + 100 + (uint32_t)i * 200; /* two pieces of one run */
        tf_peer_send_data(&f->p, 200, now + 11 * TF_MS);
    }
    f->p.nxt = nxt;
    while (tf_pending(&f->t))
        tf_take(&f->t);
    assert_int_equal(f->c->sb.len, 4);
    assert_int_equal(f->c->sb.sacked, M);
    assert_int_equal(f->c->rcv.ooo.nsegs, 2);
}

static void finish(struct fix *f)
{
    brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    tf_free(&f->t);
}

static const char *violation(struct fix *f, const brisk_sock *c)
{
    return tcp_invariants_violation(c, f->buf, sizeof(f->buf));
}

/* The message names the broken invariant. */
static void expect(struct fix *f, const char *what)
{
    const char *m = violation(f, f->c);
    if (!m || !strstr(m, what)) {
        fprintf(stderr, "expected a violation containing \"%s\", got \"%s\"\n", what, m ? m : "(none)");
        fail();
    }
}

static void test_healthy_connection_passes(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    assert_null(violation(&f, f.c));
    assert_null(violation(&f, f.l));
    /* And after recovery has retransmitted, acknowledged everything and the pieces were filled in. */
    tf_run(&f.t, 3 * TF_SEC);
    assert_null(violation(&f, f.c));
    f.p.ack = f.d + 4 * M;
    tf_peer_send_data(&f.p, 100, 3 * TF_SEC);
    assert_null(violation(&f, f.c));
    assert_int_equal(f.c->rcv.ooo.nsegs, 0);
    assert_int_equal(f.c->snd.una, f.d + 4 * M);
    finish(&f);
}

static void test_sequence_corruptions_caught(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    uint32_t una = f.c->snd.una;
    f.c->snd.una = f.c->snd.nxt + 1;
    expect(&f, "snd.una");
    f.c->snd.una = una;
    f.c->snd.max += 5 * M; /* sent beyond the data in the buffer */
    expect(&f, "snd.max");
    f.c->snd.max -= 5 * M;
    f.c->rcv.nxt += 1; /* rcv.nxt no longer the bytes received */
    expect(&f, "rcv.nxt");
    f.c->rcv.nxt -= 1;
    f.c->rcv.fin_pending = 1; /* a FIN before held data */
    f.c->rcv.fin_seq = f.c->rcv.nxt + 50;
    expect(&f, "held FIN");
    f.c->rcv.fin_pending = 0;
    assert_null(violation(&f, f.c));
    finish(&f);
}

static void test_scoreboard_corruptions_caught(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    f.c->sb.sacked += 1;
    expect(&f, "scoreboard totals");
    f.c->sb.sacked -= 1;
    struct tcp_sb_rec *r = tcp_sb_at(f.c, 1);
    r->flags |= TCP_SB_RETRANS; /* retransmitted without being lost */
    expect(&f, "retransmitted but not lost");
    r->flags &= ~TCP_SB_RETRANS;
    struct tcp_sb_rec saved = *tcp_sb_at(f.c, 3);
    *tcp_sb_at(f.c, 3) = *tcp_sb_at(f.c, 0); /* a record repeated: out of order */
    expect(&f, "out of order or overlapping");
    *tcp_sb_at(f.c, 3) = saved;
    tcp_sb_at(f.c, 3)->end += M; /* beyond what was sent */
    expect(&f, "beyond snd.max");
    tcp_sb_at(f.c, 3)->end -= M;
    assert_null(violation(&f, f.c));
    finish(&f);
}

static void test_reassembly_and_accounting_corruptions_caught(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    f.c->rcv.ooo.bytes += 1;
    expect(&f, "reassembly totals");
    f.c->rcv.ooo.bytes -= 1;
    brisk_pkt *p = f.c->rcv.ooo.head;
    uint32_t seq = p->seq;
    p->seq = f.c->rcv.nxt - 1; /* held data the receiver already passed */
    expect(&f, "before rcv.nxt");
    p->seq = seq;
    f.c->tsq.wmem = 0;
    f.c->tsq.pkts = 3; /* packets below TCP charged nothing */
    expect(&f, "below-TCP accounting");
    f.c->tsq.pkts = 0;
    assert_null(violation(&f, f.c));
    finish(&f);
}

static void test_timer_corruptions_caught(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    uint8_t kind = f.c->timer.rtx_kind;
    assert_int_not_equal(kind, TCP_RTX_NONE);
    f.c->timer.rtx_kind = TCP_RTX_NONE; /* data outstanding, nothing to bring it back */
    expect(&f, "no retransmit deadline");
    f.c->timer.rtx_kind = kind;
    uint64_t dl = f.c->timer.rtx_deadline;
    f.c->timer.rtx_deadline = f.c->timer.rtx.expires - 1; /* the wheel entry would fire late */
    expect(&f, "no wheel entry at or before it");
    f.c->timer.rtx_deadline = dl;
    uint8_t st = f.c->state;
    f.c->state = BRISK_TCP_TIME_WAIT; /* TIME-WAIT without its timer */
    expect(&f, "TIME-WAIT");
    f.c->state = st;
    f.l->lq.len += 1;
    assert_non_null(violation(&f, f.l));
    f.l->lq.len -= 1;
    assert_null(violation(&f, f.c));
    finish(&f);
}

/* tcp_check_invariants returns on a healthy connection and aborts the process on a broken one. */
static void test_check_aborts(void **state)
{
    (void)state;
    struct fix f;
    setup(&f);
    tcp_check_invariants(f.c);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Keep the child's report off the test's output. */
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        f.c->sb.lost += M;
        tcp_check_invariants(f.c);
        _exit(0); /* not reached if the check works */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    finish(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_connection_passes),
        cmocka_unit_test(test_sequence_corruptions_caught),
        cmocka_unit_test(test_scoreboard_corruptions_caught),
        cmocka_unit_test(test_reassembly_and_accounting_corruptions_caught),
        cmocka_unit_test(test_timer_corruptions_caught),
        cmocka_unit_test(test_check_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
