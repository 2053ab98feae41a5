/*
 * test_conn.c — the connection tables as introspection sees them (conn.c): brisk_stack_foreach_socket visits
 * every listener and every live connection, whatever its state — half-open children, established children
 * the application has not accepted, connections of its own, orphans finishing their close — once each, and
 * no socket in CLOSED; a non-zero return stops the walk and is returned; bad arguments are BRISK_ERR_INVAL.
 * And the calls with a struct brisk_addr (bind, connect, the socket's tuple): an IPv4 address does what the
 * uint32_t call does, the SYN goes to it; IPv6 is refused with BRISK_ERR_AFNOSUPPORT, an unset or unknown
 * family with BRISK_ERR_INVAL, and "any" (unset, 0.0.0.0, ::) binds to any address.
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

#define MAXSEEN 16

struct seen {
    int n;
    brisk_sock *s[MAXSEEN];
    struct brisk_conn_info info[MAXSEEN];
    int stop_at; /* return 7 when this many were seen (0: never) */
};

static int collect(void *ctx, brisk_sock *s)
{
    struct seen *w = ctx;
    assert_true(w->n < MAXSEEN);
    w->s[w->n] = s;
    assert_int_equal(brisk_conn_info(s, &w->info[w->n]), BRISK_OK);
    w->n++;
    return w->stop_at && w->n == w->stop_at ? 7 : 0;
}

/* The socket seen with remote port rport (listeners: rport 0), its index, or -1; asserts it was seen once. */
static int find(const struct seen *w, int state, uint16_t rport)
{
    int at = -1;
    for (int i = 0; i < w->n; i++)
        if (w->info[i].state == state && w->info[i].rport == rport) {
            assert_int_equal(at, -1);
            at = i;
        }
    return at;
}

/* The peer's SYN from `port` to the listener on 80; the SYN-ACK is taken. */
static void peer_syn(struct tf *t, struct tf_peer *p, uint16_t port, uint64_t now)
{
    while (tf_pending(t))
        tf_take(t);
    tf_peer_init(p, t, port, 80, 5000u * port);
    p->nxt = p->iss;
    struct brisk_tcp_repr h = tf_peer_hdr(p, SYN, now);
    h.opts = tf_opts_full();
    h.opts.ts_val = 1;
    tf_inject(t, &h, NULL, 0, now);
    p->nxt = p->iss + 1;
    struct tf_seg *sa = tf_take(t);
    assert_int_equal(sa->h.flags, SYN | ACK);
    p->l_iss = sa->h.seq;
    p->ack = p->l_iss + 1;
    p->ts = 1;
}

static void test_foreach_every_kind(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    brisk_sock *l = tf_listen(&t, 80);
    /* An accepted connection, which the application then closes with data unsent-acknowledged: an orphan in
     * FIN-WAIT-1. */
    struct tf_peer p1;
    tf_peer_init(&p1, &t, 40001, 80, 1000);
    brisk_sock *c1 = tf_open_passive(&p1, l, NULL, 0, TF_MS);
    assert_int_equal(brisk_close(c1, 2 * TF_MS), BRISK_OK);
    while (tf_pending(&t))
        tf_take(&t);
    /* An accepted connection that stays ESTABLISHED, with 100 bytes unread. */
    struct tf_peer p2;
    tf_peer_init(&p2, &t, 40002, 80, 2000);
    brisk_sock *c2 = tf_open_passive(&p2, l, NULL, 3 * TF_MS, TF_MS);
    tf_peer_send_data(&p2, 100, 5 * TF_MS);
    /* A half-open child (SYN-RECEIVED), and an established child nobody accepted. */
    struct tf_peer p3, p4;
    peer_syn(&t, &p3, 40003, 6 * TF_MS);
    peer_syn(&t, &p4, 40004, 7 * TF_MS);
    tf_peer_send(&p4, ACK, NULL, 0, 8 * TF_MS);
    /* An active open waiting for its SYN-ACK. */
    int err;
    brisk_sock *a = brisk_socket(t.st, &err);
    assert_non_null(a);
    assert_int_equal(brisk_connect(a, TF_PEER_IP, 9, 9 * TF_MS), BRISK_ERR_INPROGRESS);
    /* Sockets in CLOSED are not visited: a fresh one, and one bound to a port without listening. */
    brisk_sock *fresh = brisk_socket(t.st, &err);
    brisk_sock *bound = brisk_socket(t.st, &err);
    assert_int_equal(brisk_bind(bound, 0, 7777), BRISK_OK);
    while (tf_pending(&t))
        tf_take(&t);

    struct seen w = {0};
    assert_int_equal(brisk_stack_foreach_socket(t.st, collect, &w), BRISK_OK);
    assert_int_equal(w.n, 6);
    int i;
    assert_int_not_equal(i = find(&w, BRISK_TCP_LISTEN, 0), -1);
    assert_ptr_equal(w.s[i], l);
    assert_int_equal(w.info[i].lport, 80);
    assert_int_not_equal(i = find(&w, BRISK_TCP_FIN_WAIT_1, 40001), -1);
    assert_int_not_equal(i = find(&w, BRISK_TCP_ESTABLISHED, 40002), -1);
    assert_ptr_equal(w.s[i], c2);
    assert_int_equal(w.info[i].raddr, TF_PEER_IP);
    assert_int_equal(w.info[i].laddr, TF_LOCAL_IP);
    assert_int_equal(w.info[i].bytes_received, 100);
    assert_int_equal(w.info[i].rcv_queued, 100);
    assert_int_not_equal(find(&w, BRISK_TCP_SYN_RECEIVED, 40003), -1);
    assert_int_not_equal(i = find(&w, BRISK_TCP_ESTABLISHED, 40004), -1);
    assert_int_not_equal(i = find(&w, BRISK_TCP_SYN_SENT, 9), -1);
    assert_ptr_equal(w.s[i], a);
    for (i = 0; i < w.n; i++)
        assert_true(w.s[i] != fresh && w.s[i] != bound);

    /* A non-zero return stops the walk at once and is passed back. */
    struct seen w2 = {.stop_at = 2};
    assert_int_equal(brisk_stack_foreach_socket(t.st, collect, &w2), 7);
    assert_int_equal(w2.n, 2);
    /* Same tables, same order. */
    assert_ptr_equal(w2.s[0], w.s[0]);
    assert_ptr_equal(w2.s[1], w.s[1]);

    brisk_close(fresh, 10 * TF_MS);
    brisk_close(bound, 10 * TF_MS);
    brisk_abort(a, 10 * TF_MS);
    brisk_abort(c2, 10 * TF_MS);
    brisk_close(l, 10 * TF_MS);
    tf_run(&t, 3600 * TF_SEC); /* the orphan's FIN goes unanswered until tcp_retries2 */
    while (tf_pending(&t))
        tf_take(&t);
    /* Everything gone: nothing is visited. */
    struct seen w3 = {0};
    assert_int_equal(brisk_stack_foreach_socket(t.st, collect, &w3), BRISK_OK);
    assert_int_equal(w3.n, 0);
    assert_int_equal(t.st->tcp->nsocks, 0);
    tf_free(&t);
}

static void test_foreach_bad_arguments(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    struct seen w = {0};
    assert_int_equal(brisk_stack_foreach_socket(NULL, collect, &w), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_foreach_socket(t.st, NULL, &w), BRISK_ERR_INVAL);
    assert_int_equal(brisk_stack_foreach_socket(t.st, collect, &w), BRISK_OK);
    assert_int_equal(w.n, 0);
    tf_free(&t);
}

static void test_addr_calls(void **state)
{
    (void)state;
    struct tf t;
    tf_init(&t, NULL);
    int err;
    brisk_sock *s = brisk_socket(t.st, &err);
    assert_non_null(s);
    struct brisk_tuple tu;
    assert_int_equal(brisk_sock_tuple(s, &tu), BRISK_OK);
    assert_int_equal(tu.laddr.family, BRISK_AF_UNSPEC); /* neither bound nor connected */
    assert_int_equal(tu.raddr.family, BRISK_AF_UNSPEC);

    struct brisk_addr v6, peer6, bad, none, local = brisk_addr_v4(TF_LOCAL_IP), other = brisk_addr_v4(IP4(10, 0, 0, 9));
    assert_int_equal(brisk_addr_parse("2001:db8::1", &v6), BRISK_OK);
    assert_int_equal(brisk_addr_parse("::", &peer6), BRISK_OK);
    memset(&none, 0, sizeof(none));
    bad = local;
    bad.family = 5;
    assert_int_equal(brisk_bind_addr(s, &v6, 80), BRISK_ERR_ADDRNOTAVAIL); /* not one of ours */
    assert_int_equal(brisk_bind_addr(s, &bad, 80), BRISK_ERR_INVAL);
    assert_int_equal(brisk_bind_addr(s, NULL, 80), BRISK_ERR_INVAL);
    assert_int_equal(brisk_bind_addr(s, &other, 80), BRISK_ERR_ADDRNOTAVAIL); /* as brisk_bind */
    assert_int_equal(brisk_bind_addr(s, &local, 4242), BRISK_OK);
    assert_int_equal(brisk_sock_tuple(s, &tu), BRISK_OK);
    assert_true(brisk_addr_equal(&tu.laddr, &local));
    assert_int_equal(tu.lport, 4242);

    struct brisk_addr dst = brisk_addr_v4(TF_PEER_IP);
    assert_int_equal(brisk_connect_addr(s, &v6, 80, 0), BRISK_ERR_INVAL); /* bound to IPv4: IPv4 only */
    assert_int_equal(brisk_connect_addr(s, &none, 80, 0), BRISK_ERR_INVAL); /* connect needs an address */
    assert_int_equal(brisk_connect_addr(s, &peer6, 80, 0), BRISK_ERR_INVAL);
    assert_int_equal(brisk_connect_addr(s, &dst, 80, 0), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(&t);
    assert_int_equal(syn->h.flags, SYN);
    assert_int_equal(syn->dst, TF_PEER_IP);
    assert_int_equal(syn->h.sport, 4242);
    assert_int_equal(syn->h.dport, 80);
    assert_int_equal(brisk_sock_tuple(s, &tu), BRISK_OK);
    assert_true(brisk_addr_equal(&tu.raddr, &dst));
    assert_int_equal(tu.rport, 80);
    assert_int_equal(brisk_sock_tuple(NULL, &tu), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sock_tuple(s, NULL), BRISK_ERR_INVAL);

    /* Any address, three ways: each socket binds, to any (BRISK_AF_UNSPEC is IPv4's, :: stays IPv6's). */
    const struct brisk_addr *anys[] = {&none, &peer6, NULL};
    struct brisk_addr zero4 = brisk_addr_v4(0);
    anys[2] = &zero4;
    for (int i = 0; i < 3; i++) {
        brisk_sock *l = brisk_socket(t.st, &err);
        assert_int_equal(brisk_bind_addr(l, anys[i], (uint16_t)(5000 + i)), BRISK_OK);
        assert_int_equal(brisk_sock_tuple(l, &tu), BRISK_OK);
        assert_int_equal(tu.laddr.family, i == 1 ? BRISK_AF_INET6 : BRISK_AF_INET);
        assert_true(brisk_addr_is_any(&tu.laddr));
        assert_int_equal(tu.lport, 5000 + i);
        brisk_close(l, 0);
    }
    brisk_abort(s, 0);
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreach_every_kind),
        cmocka_unit_test(test_foreach_bad_arguments),
        cmocka_unit_test(test_addr_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
