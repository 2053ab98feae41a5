/*
 * test_ctl.c — the control protocol (tools/introspect/ctl.c) over a scripted stack, and its server
 * (ctl_server.c) over a real brisk_loop and AF_UNIX socket with the clients' code (ctl_client.c) in another
 * thread: the answers carry the stack's real state (a listener and a connection with the bytes it received
 * and sent, its cwnd and RTT; the counters by name), bad requests are error answers on a connection that
 * stays usable, an overlong line ends its connection, a connection beyond CTL_CLIENTS is told "busy" until
 * an idle one can be evicted, and the socket file is 0600 and removed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "introspect/ctl.h"
#include "support/tcpforge.h"

/* A stack listening on 80 with one connection that received 3000 bytes and sent 1000 (acknowledged). */
static brisk_sock *conn_fixture(struct tf *t, struct tf_peer *p, brisk_sock **l)
{
    tf_init(t, NULL);
    *l = tf_listen(t, 80);
    tf_peer_init(p, t, 40000, 80, 1000);
    brisk_sock *c = tf_open_passive(p, *l, NULL, 0, 10 * TF_MS);
    tf_peer_send_data(p, 3000, 20 * TF_MS);
    tf_send_pattern(c, 0, 1000, 30 * TF_MS);
    tf_run(t, 31 * TF_MS);
    p->ack = p->l_iss + 1 + 1000;
    tf_peer_send(p, BRISK_TCP_ACK, NULL, 0, 40 * TF_MS);
    while (tf_pending(t))
        tf_take(t);
    return c;
}

static json_t *ask(const struct ctl_source *src, const char *req, uint64_t now)
{
    char *line = ctl_handle(src, req, strlen(req), now);
    assert_non_null(line);
    size_t n = strlen(line);
    assert_true(n > 1 && line[n - 1] == '\n');
    assert_null(memchr(line, '\n', n - 1)); /* exactly one line */
    json_error_t e;
    json_t *o = json_loadb(line, n - 1, 0, &e);
    free(line);
    assert_non_null(o);
    return o;
}

static int64_t num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_true(json_is_integer(v));
    return (int64_t)json_integer_value(v);
}

static void test_sockets_answer(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    brisk_sock *c = conn_fixture(&t, &p, &l);
    struct ctl_source src = {.st = t.st, .program = "test", .pid = 42, .started_ns = 5};
    json_t *o = ask(&src, "sockets", 50 * TF_MS);
    assert_true(json_is_true(json_object_get(o, "ok")));
    assert_int_equal(num(o, "pid"), 42);
    assert_int_equal(num(o, "now_ns"), 50 * TF_MS);
    json_t *a = json_object_get(o, "sockets");
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 2);
    json_t *est = NULL, *lis = NULL;
    size_t i;
    json_t *s;
    json_array_foreach(a, i, s)
    {
        const char *st = json_string_value(json_object_get(s, "state"));
        if (!strcmp(st, "ESTABLISHED"))
            est = s;
        else if (!strcmp(st, "LISTEN"))
            lis = s;
    }
    assert_non_null(est);
    assert_non_null(lis);
    assert_int_equal(num(lis, "lport"), 80);
    struct brisk_conn_info ci = tf_info(c);
    assert_string_equal(json_string_value(json_object_get(est, "raddr")), "10.0.0.2");
    assert_string_equal(json_string_value(json_object_get(est, "laddr")), "10.0.0.1");
    assert_int_equal(num(est, "rport"), 40000);
    assert_int_equal(num(est, "bytes_received"), 3000);
    assert_int_equal(num(est, "recv_q"), 3000);
    assert_int_equal(num(est, "bytes_acked"), 1000);
    assert_int_equal(num(est, "bytes_sent"), 1000);
    assert_int_equal(num(est, "send_q"), 0);
    assert_int_equal(num(est, "cwnd"), ci.cwnd);
    assert_true(ci.cwnd > 0);
    assert_int_equal(num(est, "srtt_ns"), ci.srtt_ns);
    assert_true(ci.srtt_ns > 0);
    assert_int_equal(num(est, "rto_ns"), ci.rto_ns);
    assert_int_equal(num(est, "mss"), ci.mss);
    assert_int_equal(num(est, "pacing_rate"), ci.pacing_rate);
    assert_string_equal(json_string_value(json_object_get(est, "cc")), brisk_get_congestion(c));
    json_t *holds = json_object_get(est, "holds");
    assert_int_equal(json_object_size(holds), BRISK_HOLD_COUNT - 1);
    for (int r = 1; r < BRISK_HOLD_COUNT; r++) {
        json_t *h = json_object_get(holds, brisk_hold_name(r));
        assert_non_null(h);
        assert_int_equal(num(h, "events"), ci.hold_events[r]);
        assert_int_equal(num(h, "ns"), ci.hold_ns[r]);
    }
    json_decref(o);
    brisk_abort(c, 60 * TF_MS);
    brisk_close(l, 60 * TF_MS);
    tf_free(&t);
}

static void extra(void *ctx, json_t *m)
{
    (void)ctx;
    json_object_set_new(m, "TestExtra", json_integer(7));
}

static void test_counters_and_errors(void **state)
{
    (void)state;
    struct tf t;
    struct tf_peer p;
    brisk_sock *l;
    brisk_sock *c = conn_fixture(&t, &p, &l);
    struct ctl_source src = {.st = t.st, .program = "test", .extra = extra};
    json_t *o = ask(&src, "  counters \r", 50 * TF_MS);
    assert_true(json_is_true(json_object_get(o, "ok")));
    json_t *m = json_object_get(o, "counters");
    struct brisk_counters cs = tf_counters(&t);
    assert_int_equal(json_object_size(m), brisk_counters_count() + 1);
    for (size_t k = 0; k < brisk_counters_count(); k++)
        assert_int_equal(num(m, brisk_counter_name(k)), brisk_counter_value(&cs, k));
    assert_true(num(m, "TcpInSegs") >= 4);
    assert_int_equal(num(m, "TestExtra"), 7);
    json_decref(o);
    o = ask(&src, "info", 0);
    assert_true(json_is_true(json_object_get(o, "ok")));
    assert_int_equal(num(o, "sockets"), 2);
    json_decref(o);
    /* Bad requests: an error answer naming what is wrong. */
    const char *bad[] = {"",
                         "   ",
                         "sockets please",
                         "SOCKETS",
                         "counters\x01",
                         "\xff\xfe",
                         "a very long request that goes on and on and on beyond thirty-two bytes"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        o = ask(&src, bad[k], 0);
        assert_true(json_is_false(json_object_get(o, "ok")));
        const char *e = json_string_value(json_object_get(o, "error"));
        assert_non_null(e);
        assert_true(strlen(e) < 100);
        json_decref(o);
    }
    /* A request with a NUL inside is not "sockets". */
    char *line = ctl_handle(&src, "sockets\0x", 9, 0);
    assert_non_null(strstr(line, "\"ok\":false"));
    free(line);
    brisk_abort(c, 60 * TF_MS);
    brisk_close(l, 60 * TF_MS);
    tf_free(&t);
}

/* ---- the server on a real loop ---- */

struct client_run {
    char path[108];
    brisk_loop *loop;
    int sockets_ok, counters_ok, bad_ok, long_ok, after_ok, busy_ok, evict_ok;
    char why[256];
};

static int raw_exchange(const char *path, const char *send_buf, size_t len, char *out, size_t cap)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        return -1;
    if (send(fd, send_buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    for (;;) { /* until the server closes */
        ssize_t n = recv(fd, out + got, cap - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    out[got] = 0;
    close(fd);
    return (int)got;
}

static void *client(void *arg)
{
    struct client_run *r = arg;
    json_t *o = ctl_request(r->path, "sockets", r->why, sizeof(r->why));
    r->sockets_ok = o && json_array_size(json_object_get(o, "sockets")) == 1;
    json_decref(o);
    o = ctl_request(r->path, "counters", r->why, sizeof(r->why));
    r->counters_ok = o &&
                     json_is_integer(json_object_get(json_object_get(o, "counters"), "LoopIterations")) &&
                     json_is_integer(json_object_get(json_object_get(o, "counters"), "TcpInSegs"));
    json_decref(o);
    /* An unknown request: ctl_request reports the server's error. */
    o = ctl_request(r->path, "frobnicate", r->why, sizeof(r->why));
    r->bad_ok = !o && strstr(r->why, "unknown request 'frobnicate'") != NULL;
    /* Two requests in one write, one bad, then EOF: two answers, then the server closes. */
    char out[65536];
    int n = raw_exchange(r->path, "bogus\ninfo\n", 11, out, sizeof(out));
    r->after_ok = n > 0 && strstr(out, "\"ok\":false") && strstr(out, "\"ok\":true") &&
                  strchr(out, '\n') != strrchr(out, '\n');
    /* An overlong line: an error answer and the connection closed (raw_exchange returns at EOF). */
    char big[CTL_REQ_MAX * 3];
    memset(big, 'x', sizeof(big));
    n = raw_exchange(r->path, big, sizeof(big), out, sizeof(out));
    r->long_ok = n > 0 && strstr(out, "longer than") != NULL;
    /* CTL_CLIENTS connections that say nothing: one more is answered busy ... */
    int idle[CTL_CLIENTS];
    for (int i = 0; i < CTL_CLIENTS; i++) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", r->path);
        idle[i] = socket(AF_UNIX, SOCK_STREAM, 0);
        if (idle[i] >= 0 && connect(idle[i], (struct sockaddr *)&a, sizeof(a)) < 0) {
            close(idle[i]);
            idle[i] = -1;
        }
    }
    o = ctl_request(r->path, "info", r->why, sizeof(r->why));
    r->busy_ok = !o && strstr(r->why, "busy") != NULL;
    json_decref(o);
    /* ... until the idlest has been idle for CTL_IDLE_NS: it is closed for the new one. */
    usleep((useconds_t)(CTL_IDLE_NS / 1000 + 100000));
    o = ctl_request(r->path, "info", r->why, sizeof(r->why));
    r->evict_ok = o != NULL;
    json_decref(o);
    for (int i = 0; i < CTL_CLIENTS; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    brisk_loop_stop(r->loop);
    return NULL;
}

static void test_server_on_loop(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    brisk_stack *st = brisk_stack_new(&s);
    int err;
    brisk_loop *loop = brisk_loop_new(st, &err);
    assert_non_null(loop);
    int e2;
    brisk_sock *ls = brisk_socket(st, &e2);
    assert_int_equal(brisk_bind(ls, 0, 5201), BRISK_OK);
    assert_int_equal(brisk_listen(ls, 4), BRISK_OK);
    struct client_run r = {.loop = loop};
    snprintf(r.path, sizeof(r.path), "/tmp/brisk-test-ctl.%d", (int)getpid());
    /* A stale file that is not a socket is refused, not removed. */
    FILE *f = fopen(r.path, "w");
    assert_non_null(f);
    fclose(f);
    char why[160];
    assert_null(ctl_server_new(loop, NULL, r.path, "test", why, sizeof(why)));
    assert_non_null(strstr(why, "not a socket"));
    unlink(r.path);
    struct ctl_server *srv = ctl_server_new(loop, NULL, r.path, "test", why, sizeof(why));
    assert_non_null(srv);
    struct stat sb;
    assert_int_equal(lstat(r.path, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0600);
    /* A second server on the same path is refused while the first answers. */
    assert_null(ctl_server_new(loop, NULL, r.path, "test", why, sizeof(why)));
    assert_non_null(strstr(why, "in use"));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, client, &r), 0);
    int rc = brisk_loop_run(loop, brisk_loop_clock() + 20 * BRISK_NSEC_PER_SEC);
    pthread_join(th, NULL);
    assert_int_equal(rc, BRISK_OK);
    assert_true(r.sockets_ok);
    assert_true(r.counters_ok);
    assert_true(r.bad_ok);
    assert_true(r.after_ok);
    assert_true(r.long_ok);
    assert_true(r.busy_ok);
    assert_true(r.evict_ok);
    ctl_server_free(srv);
    assert_int_equal(lstat(r.path, &sb), -1);
    /* Without a server: the clients' message says so. */
    assert_null(ctl_request(r.path, "sockets", why, sizeof(why)));
    assert_non_null(strstr(why, "no control socket"));
    brisk_close(ls, brisk_loop_clock());
    brisk_stack_free(st);
    brisk_loop_free(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sockets_answer),
        cmocka_unit_test(test_counters_and_errors),
        cmocka_unit_test(test_server_on_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
