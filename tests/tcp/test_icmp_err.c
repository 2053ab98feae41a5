/*
 * test_icmp_err.c — ICMP errors about our segments (src/tcp/icmp_err.c; RFC 1122 §4.2.3.9, RFC 5927).
 *
 * A connect whose SYN draws a port or protocol unreachable fails at once with the error's code, in every
 * profile; a soft error (net / host unreachable, time exceeded, parameter problem) fails it at once under the
 * linux-* profiles (tcp_v4_err) and is kept under brisk's (RFC 1122: MUST NOT abort), to be reported when the
 * connect times out. Half-open children follow tcp_req_err (linux) or the hard / soft split (rfc1122).
 * Established connections keep every error as soft, reported only by a timeout and forgotten when the peer
 * is heard from again. Quotes that match no connection (ports, a sequence number outside SND.UNA..SND.NXT,
 * too short to say) are counted and change nothing; TIME-WAIT ignores errors.
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
#include "wire/icmp.h"
#include "wire/wire.h"

#define SYN BRISK_TCP_SYN
#define ACK BRISK_TCP_ACK
#define FIN BRISK_TCP_FIN
#define PSH BRISK_TCP_PSH

#define ROUTER  IP4(10, 0, 0, 254)
#define UNREACH BRISK_ICMP_DEST_UNREACH

/* Applies a compatibility profile to a tcpforge stack, keeping auto-corking off as tf_init wants it. */
static void use_profile(struct tf *t, const char *profile)
{
    assert_int_equal(brisk_settings_apply_profile(&t->st->net.s, profile), BRISK_OK);
    assert_int_equal(brisk_settings_set(&t->st->net.s, "tcp_autocorking=0"), BRISK_OK);
}

/* A connect from the stack to the peer's port 9 at `now`, under `profile`, with its SYN (copied: the
 * segment queue may move). */
struct opening {
    struct tf t;
    brisk_sock *s;
    struct tf_events ev;
    struct tf_seg syn;
};

static void connect_at(struct opening *o, const char *profile, const char *const *sets, uint64_t now)
{
    memset(o, 0, sizeof(*o));
    tf_init(&o->t, sets);
    use_profile(&o->t, profile);
    int err;
    o->s = brisk_socket(o->t.st, &err);
    assert_non_null(o->s);
    brisk_sock_set_callback(o->s, tf_events_cb, &o->ev);
    assert_int_equal(brisk_connect(o->s, TF_PEER_IP, 9, now), BRISK_ERR_INPROGRESS);
    o->syn = *tf_take(&o->t);
    assert_int_equal(o->syn.h.flags, SYN);
    assert_int_equal(o->syn.at, now);
}

static void opening_free(struct opening *o)
{
    brisk_close(o->s, o->t.st->net.now);
    while (tf_pending(&o->t))
        tf_take(&o->t);
    assert_int_equal(brisk_stack_sockets(o->t.st), 0);
    tf_free(&o->t);
}

/* The connect failed at `at` with `err`; nothing more is sent, nothing is left to time out. */
static void assert_failed(struct opening *o, uint64_t at, int err)
{
    assert_int_equal(o->ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
    assert_int_equal(o->ev.at[5], at);
    assert_int_equal(brisk_sock_error(o->s), err);
    assert_int_equal(tf_info(o->s).state, BRISK_TCP_CLOSED);
    tf_run(&o->t, at + 600 * TF_SEC);
    TF_EXPECT_NONE(&o->t);
}

/* The SYN retransmitted at `at`. */
static void expect_syn(struct opening *o, uint64_t at)
{
    tf_run(&o->t, at - 1);
    TF_EXPECT_NONE(&o->t);
    tf_run(&o->t, at);
    TF_EXPECT(&o->t, at, SYN, o->syn.h.seq, 0, 0);
}

static const char *const profiles[] = {"brisk", "linux-3.12", "linux-3.14", "linux-3.19", "linux-6.x"};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

/* Hard errors end a connect at once in every profile: port unreachable is "connection refused", protocol
 * unreachable ENOPROTOOPT (Linux icmp_err_convert). Before icmp_err.c the SYN was retransmitted on until
 * tcp_syn_retries ran out. */
static void test_hard_error_fails_connect(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROFILES; i++) {
        for (uint8_t code = BRISK_ICMP_UNREACH_PROTO; code <= BRISK_ICMP_UNREACH_PORT; code++) {
            struct opening o;
            connect_at(&o, profiles[i], NULL, TF_SEC);
            /* From the peer itself, quoting the IP header and the 8 bytes RFC 792 asks for. */
            tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, code, &o.syn, 8, NULL, TF_SEC + 30 * TF_MS);
            assert_failed(&o, TF_SEC + 30 * TF_MS,
                          code == BRISK_ICMP_UNREACH_PORT ? BRISK_ERR_CONNREFUSED : BRISK_ERR_NOPROTOOPT);
            struct brisk_counters k = tf_counters(&o.t);
            assert_int_equal(k.IcmpInDestUnreachs, 1);
            assert_int_equal(k.TcpAttemptFails, 1);
            assert_int_equal(k.TcpOutRsts, 0); /* nothing to reset: the peer never saw us */
            opening_free(&o);
        }
    }
}

/* The soft errors and the codes brisk reports for them (Linux's errno for each). */
static const struct {
    uint8_t type, code;
    int err;
} soft_errors[] = {
    {UNREACH, BRISK_ICMP_UNREACH_NET, BRISK_ERR_NETUNREACH},
    {UNREACH, BRISK_ICMP_UNREACH_HOST, BRISK_ERR_UNREACH},
    {UNREACH, 5, BRISK_ERR_OPNOTSUPP},
    {UNREACH, 7, BRISK_ERR_HOSTDOWN},
    {UNREACH, 8, BRISK_ERR_NONET},
    {UNREACH, 13, BRISK_ERR_UNREACH},
    {BRISK_ICMP_TIME_EXCEEDED, 0, BRISK_ERR_UNREACH},
    {BRISK_ICMP_PARAM_PROB, 0, BRISK_ERR_PROTO},
};
#define NSOFT (sizeof(soft_errors) / sizeof(soft_errors[0]))

/* The profiles differ here. linux-*: any error from a router on the path ends the connect at once
 * (tcp_v4_err, every version). */
static void test_soft_error_fails_connect_linux(void **state)
{
    (void)state;
    for (size_t i = 1; i < NPROFILES; i++) {
        for (size_t e = 0; e < NSOFT; e++) {
            struct opening o;
            connect_at(&o, profiles[i], NULL, 0);
            tf_inject_icmp(&o.t, ROUTER, soft_errors[e].type, soft_errors[e].code, &o.syn, 20, NULL,
                           5 * TF_MS);
            assert_failed(&o, 5 * TF_MS, soft_errors[e].err);
            opening_free(&o);
        }
    }
}

/* brisk (RFC 1122 §4.2.3.9): a soft error does not end the connect; the SYN goes on, and if the connect
 * times out the error is what it reports instead of BRISK_ERR_TIMEDOUT. */
static void test_soft_error_kept_rfc1122(void **state)
{
    (void)state;
    for (size_t e = 0; e < NSOFT; e++) {
        struct opening o;
        connect_at(&o, "brisk", (const char *const[]){"tcp_syn_retries=2", NULL}, 0);
        tf_inject_icmp(&o.t, ROUTER, soft_errors[e].type, soft_errors[e].code, &o.syn, 8, NULL, 5 * TF_MS);
        TF_EXPECT_NONE(&o.t);
        assert_int_equal(o.ev.all, 0);
        assert_int_equal(tf_info(o.s).state, BRISK_TCP_SYN_SENT);
        expect_syn(&o, TF_SEC);
        expect_syn(&o, 3 * TF_SEC);
        tf_run(&o.t, 7 * TF_SEC);
        assert_failed(&o, 7 * TF_SEC, soft_errors[e].err);
        assert_int_equal(tf_counters(&o.t).TCPAbortOnTimeout, 1);
        opening_free(&o);
    }
    /* Without one, the timeout is a timeout. */
    struct opening o;
    connect_at(&o, "brisk", (const char *const[]){"tcp_syn_retries=1", NULL}, 0);
    expect_syn(&o, TF_SEC);
    tf_run(&o.t, 3 * TF_SEC);
    assert_failed(&o, 3 * TF_SEC, BRISK_ERR_TIMEDOUT);
    opening_free(&o);
}

/* A soft error kept in SYN-SENT does not outlive the handshake: the connection it named is established. */
static void test_soft_error_then_synack(void **state)
{
    (void)state;
    struct opening o;
    connect_at(&o, "brisk", NULL, 0);
    tf_inject_icmp(&o.t, ROUTER, UNREACH, BRISK_ICMP_UNREACH_HOST, &o.syn, 8, NULL, 5 * TF_MS);
    struct tf_peer p;
    tf_peer_init(&p, &o.t, 9, o.syn.h.sport, 5000);
    p.ack = o.syn.h.seq + 1;
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN | ACK, 10 * TF_MS);
    tf_inject(&o.t, &h, NULL, 0, 10 * TF_MS);
    p.nxt++;
    TF_EXPECT(&o.t, 10 * TF_MS, ACK, o.syn.h.seq + 1, 5001, 0);
    assert_int_equal(o.ev.all, BRISK_EV_CONNECTED | BRISK_EV_WRITABLE);
    assert_int_equal(tf_info(o.s).state, BRISK_TCP_ESTABLISHED);
    brisk_abort(o.s, 20 * TF_MS);
    tf_take(&o.t); /* its RST */
    tf_free(&o.t);
}

/* Quotes that match no connection change nothing: another port (IcmpInErrors, as Linux counts it), a
 * sequence number outside SND.UNA..SND.NXT (OutOfWindowIcmps: RFC 5927 §4.1), a quote too short for the
 * sequence number (malformed), fragmentation needed (no path MTU discovery). Then a real one acts. */
static void port_plus_one(uint8_t *q, size_t len)
{
    (void)len;
    brisk_put16(q + 20, (uint16_t)(brisk_get16(q + 20) + 1));
}
static void seq_minus_one(uint8_t *q, size_t len)
{
    (void)len;
    brisk_put32(q + 24, brisk_get32(q + 24) - 1);
}
static void seq_plus_two(uint8_t *q, size_t len)
{
    (void)len;
    brisk_put32(q + 24, brisk_get32(q + 24) + 2);
}

static void test_unmatched_quotes_ignored(void **state)
{
    (void)state;
    struct opening o;
    connect_at(&o, "linux-6.x", NULL, 0);
    tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &o.syn, 8, port_plus_one, TF_MS);
    assert_int_equal(tf_counters(&o.t).IcmpInErrors, 1);
    tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &o.syn, 8, seq_minus_one, 2 * TF_MS);
    tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &o.syn, 8, seq_plus_two, 3 * TF_MS);
    assert_int_equal(tf_counters(&o.t).OutOfWindowIcmps, 2);
    tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &o.syn, 7, NULL, 4 * TF_MS);
    assert_int_equal(tf_counters(&o.t).IcmpInErrors, 2);
    tf_inject_icmp(&o.t, ROUTER, UNREACH, BRISK_ICMP_UNREACH_FRAG_NEEDED, &o.syn, 8, NULL, 5 * TF_MS);
    assert_int_equal(o.ev.all, 0);
    assert_int_equal(tf_info(o.s).state, BRISK_TCP_SYN_SENT);
    expect_syn(&o, TF_SEC);
    tf_inject_icmp(&o.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &o.syn, 8, NULL, TF_SEC + TF_MS);
    assert_failed(&o, TF_SEC + TF_MS, BRISK_ERR_CONNREFUSED);
    opening_free(&o);
}

/* An established connection: accepted on port 80 from the peer's port 40000. */
struct fix {
    struct tf t;
    struct tf_peer p;
    brisk_sock *l, *c;
    struct tf_events ev;
    uint32_t d;
};

static void setup(struct fix *f, const char *profile, const char *const *sets)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    use_profile(&f->t, profile);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    struct brisk_tcp_opts o = tf_opts_full();
    o.ts_ok = 0;
    o.sack_perm = 0; /* no tail loss probes: the RTO alone */
    f->c = tf_open_passive(&f->p, f->l, &o, 0, 100 * TF_MS);
    brisk_sock_set_callback(f->c, tf_events_cb, &f->ev);
    f->d = f->p.l_iss + 1;
}

static void finish(struct fix *f)
{
    if (f->c)
        brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(brisk_stack_sockets(f->t.st), 0);
    tf_free(&f->t);
}

/* Once connected every error is soft, in every profile (RFC 5927 §7; Linux without IP_RECVERR): even a
 * port unreachable only colours the timeout's error. tcp_retries2=2: retransmissions at +300, +900 ms, the
 * abort at +2.1 s. */
static void test_established_errors_are_soft(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPROFILES; i += NPROFILES - 1) {
        struct fix f;
        setup(&f, profiles[i], (const char *const[]){"tcp_retries2=2", NULL});
        uint64_t t1 = TF_SEC;
        tf_send_pattern(f.c, 0, 100, t1);
        struct tf_seg data = *TF_EXPECT(&f.t, t1, ACK | PSH, f.d, 1001, 100);
        tf_inject_icmp(&f.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &data, 8, NULL, t1 + 50 * TF_MS);
        assert_int_equal(f.ev.all, 0);
        assert_int_equal(tf_info(f.c).state, BRISK_TCP_ESTABLISHED);
        tf_run(&f.t, t1 + 300 * TF_MS);
        TF_EXPECT(&f.t, t1 + 300 * TF_MS, ACK | PSH, f.d, 1001, 100);
        tf_run(&f.t, t1 + 900 * TF_MS);
        TF_EXPECT(&f.t, t1 + 900 * TF_MS, ACK | PSH, f.d, 1001, 100);
        tf_run(&f.t, t1 + 2100 * TF_MS - 1);
        assert_int_equal(f.ev.all, 0);
        tf_run(&f.t, t1 + 2100 * TF_MS);
        TF_EXPECT_NONE(&f.t);
        assert_int_equal(f.ev.all, BRISK_EV_ERROR | BRISK_EV_CLOSED);
        assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_CONNREFUSED);
        finish(&f);
    }
}

/* A kept error is forgotten once the peer is heard from: the timeout after that is a timeout. The quoted
 * sequence number may be any byte in flight (SND.UNA..SND.NXT), here the last one's. */
static void quote_last_byte(uint8_t *q, size_t len)
{
    (void)len;
    brisk_put32(q + 24, brisk_get32(q + 24) + 2000);
}

static void test_soft_error_cleared_by_peer(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, "brisk", (const char *const[]){"tcp_retries2=1", NULL});
    uint64_t t1 = TF_SEC;
    tf_send_pattern(f.c, 0, 2000, t1);
    struct tf_seg data = *TF_EXPECT(&f.t, t1, ACK, f.d, 1001, 1460);
    TF_EXPECT(&f.t, t1, ACK | PSH, f.d + 1460, 1001, 540);
    tf_inject_icmp(&f.t, ROUTER, UNREACH, BRISK_ICMP_UNREACH_HOST, &data, 8, quote_last_byte, t1 + TF_MS);
    assert_int_equal(tf_counters(&f.t).OutOfWindowIcmps, 0);
    /* The peer is alive after all (a window update): the error no longer describes the connection. */
    tf_peer_send(&f.p, ACK, NULL, 0, t1 + 2 * TF_MS);
    tf_run(&f.t, t1 + 300 * TF_MS);
    TF_EXPECT(&f.t, t1 + 300 * TF_MS, ACK, f.d, 1001, 1460);
    tf_run(&f.t, t1 + 900 * TF_MS);
    assert_int_equal(brisk_sock_error(f.c), BRISK_ERR_TIMEDOUT);
    finish(&f);
}

/* TIME-WAIT ignores errors: nothing of the connection is left to report them to. */
static void test_time_wait_ignores(void **state)
{
    (void)state;
    struct fix f;
    setup(&f, "linux-6.x", NULL);
    assert_int_equal(brisk_shutdown_write(f.c, TF_SEC), BRISK_OK);
    struct tf_seg fin = *TF_EXPECT(&f.t, TF_SEC, FIN | ACK, f.d, 1001, 0);
    f.p.ack = f.d + 1;
    tf_peer_send(&f.p, FIN | ACK, NULL, 0, 2 * TF_SEC);
    TF_EXPECT(&f.t, 2 * TF_SEC, ACK, f.d + 1, 1002, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    f.ev.all = 0;
    tf_inject_icmp(&f.t, TF_PEER_IP, UNREACH, BRISK_ICMP_UNREACH_PORT, &fin, 8, NULL, 3 * TF_SEC);
    assert_int_equal(f.ev.all, 0);
    assert_int_equal(tf_info(f.c).state, BRISK_TCP_TIME_WAIT);
    assert_int_equal(brisk_sock_error(f.c), BRISK_OK);
    finish(&f);
}

/* A half-open child and an error quoting its SYN-ACK. linux (tcp_req_err): net / host unreachable, time
 * exceeded and parameter problem drop it silently, port unreachable does not. rfc1122: the reverse — the
 * hard error drops it, the soft one leaves the SYN-ACK's retransmission going. */
static int child_alive(struct tf *t)
{
    return tcp_conn_lookup(&t->st->net, TCP_TUPLE4(TF_LOCAL_IP, 80, TF_PEER_IP, 40000)) != NULL;
}

static void child_case(const char *profile, uint8_t code, int dropped)
{
    struct tf t;
    tf_init(&t, NULL);
    use_profile(&t, profile);
    brisk_sock *l = tf_listen(&t, 80);
    struct tf_peer p;
    tf_peer_init(&p, &t, 40000, 80, 1000);
    struct brisk_tcp_repr h = tf_peer_hdr(&p, SYN, 0);
    h.opts = tf_opts_full();
    tf_inject(&t, &h, NULL, 0, 0);
    struct tf_seg synack = *tf_take(&t);
    assert_int_equal(synack.h.flags, SYN | ACK);
    /* A quote of anything but the SYN-ACK itself is out of window. */
    tf_inject_icmp(&t, ROUTER, UNREACH, code, &synack, 8, seq_plus_two, 10 * TF_MS);
    assert_int_equal(tf_counters(&t).OutOfWindowIcmps, 1);
    assert_true(child_alive(&t));
    tf_inject_icmp(&t, ROUTER, UNREACH, code, &synack, 8, NULL, 20 * TF_MS);
    assert_int_equal(child_alive(&t), !dropped);
    assert_int_equal(l->lq.syn_count, dropped ? 0 : 1);
    tf_run(&t, TF_SEC);
    if (dropped) {
        TF_EXPECT_NONE(&t);
    } else {
        TF_EXPECT(&t, TF_SEC, SYN | ACK, synack.h.seq, 1001, 0);
    }
    int err;
    assert_null(brisk_accept(l, &err));
    brisk_close(l, TF_SEC);
    while (tf_pending(&t))
        tf_take(&t);
    assert_int_equal(brisk_stack_sockets(t.st), 0);
    tf_free(&t);
}

static void test_child_errors(void **state)
{
    (void)state;
    child_case("linux-6.x", BRISK_ICMP_UNREACH_HOST, 1);
    child_case("linux-6.x", BRISK_ICMP_UNREACH_NET, 1);
    child_case("linux-6.x", BRISK_ICMP_UNREACH_PORT, 0);
    child_case("brisk", BRISK_ICMP_UNREACH_HOST, 0);
    child_case("brisk", BRISK_ICMP_UNREACH_PORT, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard_error_fails_connect),
        cmocka_unit_test(test_soft_error_fails_connect_linux),
        cmocka_unit_test(test_soft_error_kept_rfc1122),
        cmocka_unit_test(test_soft_error_then_synack),
        cmocka_unit_test(test_unmatched_quotes_ignored),
        cmocka_unit_test(test_established_errors_are_soft),
        cmocka_unit_test(test_soft_error_cleared_by_peer),
        cmocka_unit_test(test_time_wait_ignores),
        cmocka_unit_test(test_child_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
