/*
 * tap_echo.c — a TCP echo server: brisk on a Linux TAP device, answering the kernel (or anything the TAP
 * is bridged to) with its own TCP/IP stack (pkg-config brisk-drivers).
 *
 * The pieces: a stack (brisk.h), the real-time loop that supplies time and waits on descriptors (loop.h),
 * the TAP driver that registers itself as the stack's device and its descriptor on the loop (tap.h), and a
 * listening socket whose connections send back every byte they receive and close after the peer's FIN.
 *
 * Needs root (or CAP_NET_ADMIN) and /dev/net/tun. Try it:
 *   sudo ./tap_echo --tap be0 --ip 10.9.0.2/24 &
 *   sudo ip addr add 10.9.0.1/24 dev be0 && sudo ip link set be0 up
 *   echo hello | nc -N 10.9.0.2 7
 * Usage: tap_echo --ip ADDR/PREFIX [--tap NAME] [--port N] [--once]
 * --once: exit after the first connection is over, printing the bytes it echoed (0 when it ended cleanly).
 * Otherwise it runs until SIGINT / SIGTERM. Exit status 1 when the TAP cannot be opened, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <brisk/loop.h>
#include <brisk/tap.h>

#define MAX_CONNS 16
#define BUF_SIZE  (64 * 1024)

struct conn {
    struct server *srv;
    brisk_sock *s;
    uint8_t buf[BUF_SIZE]; /* received, not yet sent back */
    size_t len;
    uint64_t echoed;
    int eof, fin_sent;
};

struct server {
    brisk_loop *loop;
    brisk_sock *listener;
    struct conn conns[MAX_CONNS];
    int once, failed;
    uint64_t served;
};

/* The connection is over (closed cleanly, reset, timed out): release it and its slot. */
static void conn_end(struct conn *c, int error, uint64_t now)
{
    struct server *srv = c->srv;
    fprintf(stderr, "tap_echo: connection done: %llu bytes echoed%s%s\n", (unsigned long long)c->echoed,
            error ? ", " : "", error ? brisk_strerror(error) : "");
    srv->served = c->echoed;
    srv->failed = error != 0;
    brisk_close(c->s, now);
    c->s = NULL;
    if (srv->once)
        brisk_loop_stop(srv->loop);
}

/* Reads what fits in the buffer, sends back what the send buffer takes, until neither moves; then, after
 * the peer's FIN and the last byte, our FIN. */
static void conn_pump(struct conn *c, uint64_t now)
{
    for (;;) {
        int moved = 0;
        if (c->len < sizeof(c->buf) && !c->eof) {
            int64_t n = brisk_recv(c->s, c->buf + c->len, sizeof(c->buf) - c->len, now);
            if (n > 0) {
                c->len += (size_t)n;
                moved = 1;
            } else if (n == 0) {
                c->eof = 1;
            } else if (n != BRISK_ERR_AGAIN) {
                conn_end(c, (int)n, now);
                return;
            }
        }
        if (c->len) {
            int64_t k = brisk_send(c->s, c->buf, c->len, 0, now);
            if (k > 0) {
                memmove(c->buf, c->buf + k, c->len - (size_t)k);
                c->len -= (size_t)k;
                c->echoed += (uint64_t)k;
                moved = 1;
            } else if (k != BRISK_ERR_AGAIN) {
                conn_end(c, (int)k, now);
                return;
            }
        }
        if (!moved)
            break;
    }
    if (c->eof && !c->len && !c->fin_sent) {
        c->fin_sent = 1;
        brisk_shutdown_write(c->s, now);
    }
}

static void on_conn(void *ctx, brisk_sock *s, unsigned events, uint64_t now)
{
    struct conn *c = ctx;
    (void)s;
    if (events & BRISK_EV_ERROR) {
        conn_end(c, brisk_sock_error(c->s), now);
        return;
    }
    conn_pump(c, now);
    if (c->s && (events & BRISK_EV_CLOSED)) /* both FINs sent and acknowledged */
        conn_end(c, BRISK_OK, now);
}

static void on_listener(void *ctx, brisk_sock *ls, unsigned events, uint64_t now)
{
    struct server *srv = ctx;
    if (!(events & BRISK_EV_ACCEPT))
        return;
    for (;;) {
        struct conn *c = NULL;
        for (int i = 0; i < MAX_CONNS && !c; i++)
            if (!srv->conns[i].s)
                c = &srv->conns[i];
        if (!c)
            return; /* all slots busy: the rest wait in the listener's queue */
        int err;
        brisk_sock *s = brisk_accept(ls, &err);
        if (!s)
            return;
        memset(c, 0, sizeof(*c));
        c->srv = srv;
        c->s = s;
        brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now); /* an echo answers at once */
        brisk_sock_set_callback(s, on_conn, c);
        conn_pump(c, now); /* data may have come with the handshake */
    }
}

static int usage(const char *why, const char *arg)
{
    fprintf(stderr, "tap_echo: %s%s%s\nusage: tap_echo --ip ADDR/PREFIX [--tap NAME] [--port N] [--once]\n",
            why, arg ? ": " : "", arg ? arg : "");
    return 2;
}

int main(int argc, char **argv)
{
    static struct server srv; /* the connections' buffers: 1 MB, not on the stack */
    struct brisk_tap_config tc;
    brisk_tap_config_default(&tc); /* "brisk0", MTU 1500, TSO and checksum offload with the kernel */
    tc.ip = 0;
    uint64_t port = 7;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--once")) {
            srv.once = 1;
            continue;
        }
        if (!v)
            return usage("missing value or unknown option", a);
        i++;
        if (!strcmp(a, "--ip")) {
            if (brisk_tap_parse_cidr(v, &tc.ip, &tc.prefix_len) != BRISK_OK)
                return usage("bad --ip (want a.b.c.d/len)", v);
        } else if (!strcmp(a, "--tap")) {
            if (strlen(v) == 0 || strlen(v) >= sizeof(tc.ifname))
                return usage("bad --tap (an interface name of 1 to 15 characters)", v);
            snprintf(tc.ifname, sizeof(tc.ifname), "%s", v);
        } else if (!strcmp(a, "--port")) {
            if (brisk_parse_uint(v, &port) != BRISK_OK || port == 0 || port > 65535)
                return usage("bad --port", v);
        } else {
            return usage("unknown option", a);
        }
    }
    if (!tc.ip)
        return usage("--ip is required", NULL);

    /* Stack, loop, device: created in this order, freed in the reverse (loop.h). */
    int err;
    brisk_stack *st = brisk_stack_new(NULL);
    srv.loop = st ? brisk_loop_new(st, &err) : NULL;
    if (!srv.loop) {
        fprintf(stderr, "tap_echo: out of memory\n");
        return 1;
    }
    brisk_loop_stop_on_signals(srv.loop);
    char why[160];
    brisk_tap *tap = brisk_tap_open(srv.loop, &tc, &err, why, sizeof(why));
    if (!tap) {
        fprintf(stderr, "tap_echo: cannot open the TAP device: %s\n", why);
        return 1;
    }
    srv.listener = brisk_socket(st, &err);
    if (!srv.listener || (err = brisk_bind(srv.listener, 0, (uint16_t)port)) != BRISK_OK ||
        (err = brisk_listen(srv.listener, 16)) != BRISK_OK) {
        fprintf(stderr, "tap_echo: cannot listen on port %llu: %s\n", (unsigned long long)port,
                brisk_strerror(err));
        return 1;
    }
    brisk_sock_set_callback(srv.listener, on_listener, &srv);
    /* Scripts wait for this line, then configure the kernel's side of the interface. */
    fprintf(stderr, "tap_echo: listening on port %llu, device %s\n", (unsigned long long)port,
            brisk_tap_ifname(tap));

    brisk_loop_run(srv.loop, BRISK_TIME_NONE);

    uint64_t now = brisk_loop_clock();
    for (int i = 0; i < MAX_CONNS; i++)
        if (srv.conns[i].s)
            brisk_abort(srv.conns[i].s, now);
    brisk_close(srv.listener, now);
    brisk_stack_free(st);
    brisk_tap_close(tap);
    brisk_loop_free(srv.loop);
    if (srv.once)
        printf("%llu\n", (unsigned long long)srv.served);
    return srv.once && srv.failed ? 1 : 0;
}
