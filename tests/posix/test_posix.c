/* tests for src/posix/posix.c: libbrisk_posix's calls, errno and readiness, with two instances (two stacks,
 * two stack threads) joined by an in-process wire — an AF_UNIX datagram socketpair carrying Ethernet frames,
 * the device below — so no privileges are needed. Real time, but only behaviour is asserted (values, errno,
 * readiness, "not before the timeout"), never speed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <linux/sockios.h>
#include <unistd.h>
#include <cmocka.h>

#include "brisk/loop.h"
#include "brisk/netdev.h"
#include "posix/posix.h"

/* ---- the wire: one end per instance ------------------------------------------------------------------- */

#define WIRE_RING 1024
struct wire_end {
    int fd;
    uint32_t ip;
    uint8_t mac[6];
    brisk_loop *l;
    brisk_netdev *dev;
    int hook;
    brisk_pkt *sent[WIRE_RING];
    int nsent;
};

static int wire_xmit(void *driver, brisk_pkt *pkt, uint64_t now)
{
    (void)now;
    struct wire_end *w = driver;
    if (w->nsent == WIRE_RING)
        return BRISK_ERR_BUSY;
    if (send(w->fd, pkt->data, pkt->len, MSG_DONTWAIT) < 0 && errno == EAGAIN)
        return BRISK_ERR_BUSY;
    w->sent[w->nsent++] = pkt; /* completed from the hook, never inside xmit */
    brisk_loop_wake_hook(w->l, w->hook);
    return BRISK_OK;
}

static const struct brisk_netdev_ops wire_ops = {wire_xmit};

static uint64_t wire_hook(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)l;
    struct wire_end *w = ctx;
    for (int i = 0; i < w->nsent; i++)
        brisk_netdev_tx_done(w->dev, w->sent[i], now);
    w->nsent = 0;
    return BRISK_TIME_NONE;
}

static void wire_rx(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)ready;
    struct wire_end *w = ctx;
    uint8_t buf[2048];
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0)
            break;
        brisk_stack_input(brisk_loop_stack(l), w->dev, buf, (size_t)n, now);
    }
}

static int wire_open(void *ctx, brisk_loop *l, char *why, size_t why_len)
{
    struct wire_end *w = ctx;
    struct brisk_netdev_config c;
    memset(&c, 0, sizeof(c));
    snprintf(c.name, sizeof(c.name), "wire%u", w->mac[5]);
    memcpy(c.mac, w->mac, 6);
    c.mtu = 1500;
    c.ip = w->ip;
    c.prefix_len = 24;
    int err;
    w->l = l;
    w->dev = brisk_netdev_add(brisk_loop_stack(l), &c, &wire_ops, w, &err);
    /* fd00:9::1 / ::2 beside 10.9.0.1 / .2: the IPv6 tests (test_ipv6_*) */
    struct brisk_addr a6 = {.family = BRISK_AF_INET6, .u.v6 = {0xfd, 0x00, 0, 9, [15] = (uint8_t)(w->ip & 0xff)}};
    if (!w->dev || (err = brisk_netdev_add_addr(w->dev, &a6, 64)) != BRISK_OK ||
        (w->hook = brisk_loop_add_hook(l, wire_hook, w)) < 0 ||
        brisk_loop_watch_fd(l, w->fd, BRISK_LOOP_IN, wire_rx, w) < 0) {
        snprintf(why, why_len, "wire device: %s", brisk_strerror(err));
        return -1;
    }
    return 0;
}

/* ---- the two instances -------------------------------------------------------------------------------- */

#define IP_A 0x0a090001u /* 10.9.0.1 */
#define IP_B 0x0a090002u /* 10.9.0.2 */

static struct wire_end wa, wb;
static brisk_posix *pa, *pb;
static int next_port = 7000;

static int setup(void **state)
{
    (void)state;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    int big = 4 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    wa = (struct wire_end){.fd = sv[0], .ip = IP_A, .mac = {0x02, 0, 0, 0, 0, 1}};
    wb = (struct wire_end){.fd = sv[1], .ip = IP_B, .mac = {0x02, 0, 0, 0, 0, 2}};
    struct brisk_posix_config c;
    char why[160];
    brisk_posix_config_default(&c);
    c.open_dev = wire_open;
    c.dev_ctx = &wa;
    c.settings.seed = 1;
    c.exit_wait_ns = 2 * BRISK_NSEC_PER_SEC;
    /* Both ways a caller waits for its command run in every test: a's callers spin first (busy polling, the
     * default on two CPUs), b's sleep at once. */
    c.spin_ns = 50 * BRISK_NSEC_PER_USEC;
    pa = brisk_posix_new(&c, why, sizeof(why));
    c.dev_ctx = &wb;
    c.settings.seed = 2;
    c.spin_ns = 0;
    pb = brisk_posix_new(&c, why, sizeof(why));
    return pa && pb ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    brisk_posix_free(pa);
    brisk_posix_free(pb);
    close(wa.fd);
    close(wb.fd);
    return 0;
}

static struct sockaddr_in sin_of(uint32_t ip, int port)
{
    struct sockaddr_in s;
    memset(&s, 0, sizeof(s));
    s.sin_family = AF_INET;
    s.sin_addr.s_addr = htonl(ip);
    s.sin_port = htons((uint16_t)port);
    return s;
}

/* A listener on B at a fresh port. */
static int listener(int *port)
{
    *port = next_port++;
    int l = brisk_posix_socket(pb, 0);
    assert_true(l >= 0);
    int one = 1;
    assert_int_equal(brisk_posix_setsockopt(pb, l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    struct sockaddr_in s = sin_of(0, *port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&s, sizeof(s)), 0);
    assert_int_equal(brisk_posix_listen(pb, l, 8), 0);
    return l;
}

/* A connection: *c on A (blocking connect), *s on B (blocking accept); the listener is closed. */
static void pair(int *c, int *s)
{
    int port;
    int l = listener(&port);
    *c = brisk_posix_socket(pa, 0);
    assert_true(*c >= 0);
    struct sockaddr_in to = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, *c, (struct sockaddr *)&to, sizeof(to)), 0);
    struct sockaddr_in from;
    socklen_t len = sizeof(from);
    *s = brisk_posix_accept4(pb, l, (struct sockaddr *)&from, &len, 0);
    assert_true(*s >= 0);
    assert_int_equal(len, sizeof(from));
    assert_int_equal(ntohl(from.sin_addr.s_addr), IP_A);
    assert_int_equal(brisk_posix_close(pb, l), 0);
}

static struct sockaddr_in6 sin6_of(uint8_t last, int port)
{
    struct sockaddr_in6 s;
    memset(&s, 0, sizeof(s));
    s.sin6_family = AF_INET6;
    s.sin6_port = htons((uint16_t)port);
    if (last) {
        s.sin6_addr.s6_addr[0] = 0xfd;
        s.sin6_addr.s6_addr[3] = 9;
        s.sin6_addr.s6_addr[15] = last;
    }
    return s;
}

/* ::ffff:a.b.c.d */
static struct sockaddr_in6 sin6_mapped(uint32_t ip, int port)
{
    struct sockaddr_in6 s = sin6_of(0, port);
    s.sin6_addr.s6_addr[10] = s.sin6_addr.s6_addr[11] = 0xff;
    uint32_t n = htonl(ip);
    memcpy(&s.sin6_addr.s6_addr[12], &n, 4);
    return s;
}

static short revents(int fd, short ev, int ms)
{
    struct pollfd p = {fd, ev, 0};
    int n = poll(&p, 1, ms);
    return n > 0 ? p.revents : 0;
}

/* A failed connection's readiness, waited for with POLLOUT: OUT | ERR | HUP. The facade shows ERR by closing
 * the mirror's other end, and the kernel wakes this end's waiters at that close before it frees the bytes
 * that hide OUT, so for microseconds ERR | HUP can be seen without OUT (docs/posix.md "Readiness"); a poll a
 * moment later has all three, as one poll of a Linux socket would. */
static short failed_revents(int fd)
{
    short r = revents(fd, POLLOUT, 2000);
    for (int i = 0; i < 100 && (r & (POLLERR | POLLHUP)) && !(r & POLLOUT); i++) {
        usleep(1000); /* ERR and HUP are level: each poll returns at once, so the wait is here */
        r = revents(fd, POLLOUT, 0);
    }
    return r;
}

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- tests -------------------------------------------------------------------------------------------- */

/* SO_RCVTIMEO of ms on fd, idle: a blocking read fails with EAGAIN, not before the time. */
static void rcvtimeo_expires(brisk_posix *p, int fd, int ms)
{
    char b[16];
    struct timeval tv = {0, ms * 1000};
    assert_int_equal(brisk_posix_setsockopt(p, fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    uint64_t t0 = ms_now();
    assert_int_equal(brisk_posix_recv(p, fd, b, sizeof(b), 0), -1);
    assert_int_equal(errno, EAGAIN);
    assert_true(ms_now() - t0 >= (uint64_t)ms);
}

struct bulk {
    int fd;
    size_t len;
    ssize_t ret;
};

static void *bulk_writer(void *arg)
{
    struct bulk *b = arg;
    uint8_t *buf = malloc(b->len);
    for (size_t i = 0; i < b->len; i++)
        buf[i] = (uint8_t)(i * 7 + (i >> 12));
    b->ret = brisk_posix_send(pa, b->fd, buf, b->len, 0); /* blocking: returns when all is queued */
    free(buf);
    return NULL;
}

/* Blocking connect / accept, names, 3 MB byte-exact through a blocking writer thread, EOF after close. */
static void test_connect_accept_bulk(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    assert_true(fcntl(c, F_GETFD) >= 0); /* real descriptors */
    /* the application asked for no CLOEXEC and is told so; the kernel's flag is set all the same (a brisk
     * socket cannot outlive exec: nothing would serve it) */
    assert_int_equal(brisk_posix_fcntl(pa, c, F_GETFD, 0), 0);
    assert_true(fcntl(c, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(brisk_posix_fcntl(pa, c, F_SETFD, FD_CLOEXEC), 0);
    assert_int_equal(brisk_posix_fcntl(pa, c, F_GETFD, 0), FD_CLOEXEC);
    assert_true(c != s);
    struct sockaddr_in n;
    socklen_t len = sizeof(n);
    assert_int_equal(brisk_posix_getpeername(pa, c, (struct sockaddr *)&n, &len), 0);
    assert_int_equal(ntohl(n.sin_addr.s_addr), IP_B);
    len = sizeof(n);
    assert_int_equal(brisk_posix_getsockname(pa, c, (struct sockaddr *)&n, &len), 0);
    assert_int_equal(ntohl(n.sin_addr.s_addr), IP_A);
    assert_true(ntohs(n.sin_port) != 0);

    struct bulk b = {c, 3 << 20, 0};
    pthread_t t;
    pthread_create(&t, NULL, bulk_writer, &b);
    uint8_t buf[70000];
    size_t got = 0;
    int bad = 0;
    while (got < b.len) {
        ssize_t r = brisk_posix_recv(pb, s, buf, sizeof(buf), 0);
        assert_true(r > 0);
        for (ssize_t i = 0; i < r; i++, got++)
            bad += buf[i] != (uint8_t)(got * 7 + (got >> 12));
    }
    pthread_join(t, NULL);
    assert_int_equal(b.ret, (ssize_t)b.len);
    assert_int_equal(bad, 0);
    struct tcp_info ti;
    socklen_t tl = sizeof(ti);
    assert_int_equal(brisk_posix_getsockopt(pa, c, IPPROTO_TCP, TCP_INFO, &ti, &tl), 0);
    assert_int_equal(tl, sizeof(ti));
    assert_int_equal(ti.tcpi_state, TCP_ESTABLISHED);
    assert_int_equal(ti.tcpi_snd_mss, 1448); /* 1460 less the timestamps option */
    assert_true(ti.tcpi_snd_cwnd >= 10);
    assert_true(ti.tcpi_options & TCPI_OPT_TIMESTAMPS);
    uint8_t big[256]; /* Linux's longer struct: tcpi_bytes_received at offset 128 */
    tl = sizeof(big);
    assert_int_equal(brisk_posix_getsockopt(pb, s, IPPROTO_TCP, TCP_INFO, big, &tl), 0);
    uint64_t rcvd;
    memcpy(&rcvd, big + 128, sizeof(rcvd));
    assert_int_equal(rcvd, b.len);
    assert_int_equal(brisk_posix_close(pa, c), 0);
    assert_int_equal(brisk_posix_recv(pb, s, buf, sizeof(buf), 0), 0); /* the FIN */
    assert_true(revents(s, POLLIN | POLLRDHUP, 0) & POLLRDHUP);
    assert_int_equal(brisk_posix_close(pb, s), 0);
    assert_false(brisk_posix_owns(pa, c));
}

/* Non-blocking connect: EINPROGRESS, POLLOUT, SO_ERROR 0, then 0 once and EISCONN. */
static void test_nonblocking_connect(void **state)
{
    (void)state;
    int port;
    int l = listener(&port);
    int c = brisk_posix_socket(pa, SOCK_NONBLOCK | SOCK_CLOEXEC);
    assert_true(c >= 0);
    assert_true(brisk_posix_fcntl(pa, c, F_GETFD, 0) & FD_CLOEXEC);
    assert_true(fcntl(c, F_GETFL) & O_NONBLOCK);
    assert_true(revents(c, POLLOUT, 0) & POLLOUT); /* a new socket: writable, as tcp_poll says */
    struct sockaddr_in to = sin_of(IP_B, port);
    errno = 0;
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EINPROGRESS);
    assert_true(revents(c, POLLOUT, 2000) & POLLOUT);
    int e = -1;
    socklen_t len = sizeof(e);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_ERROR, &e, &len), 0);
    assert_int_equal(e, 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EISCONN);
    /* the listener is readable with the connection queued; accept4 passes the flags on */
    assert_true(revents(l, POLLIN, 2000) & POLLIN);
    int s = brisk_posix_accept4(pb, l, NULL, NULL, SOCK_NONBLOCK);
    assert_true(s >= 0);
    assert_true(fcntl(s, F_GETFL) & O_NONBLOCK);
    assert_int_equal(brisk_posix_fcntl(pb, l, F_SETFL, O_NONBLOCK), 0);
    assert_int_equal(brisk_posix_accept4(pb, l, NULL, NULL, 0), -1); /* the queue is empty */
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(revents(l, POLLIN, 0), 0);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
    brisk_posix_close(pb, l);
}

/* Refused: POLLOUT | POLLERR | POLLHUP, SO_ERROR ECONNREFUSED once; a blocking connect fails with it. */
static void test_refused(void **state)
{
    (void)state;
    int c = brisk_posix_socket(pa, SOCK_NONBLOCK);
    struct sockaddr_in to = sin_of(IP_B, 6999);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EINPROGRESS);
    short r = failed_revents(c);
    assert_true(r & POLLOUT);
    assert_true(r & POLLERR);
    assert_true(r & POLLHUP);
    int e = 0;
    socklen_t len = sizeof(e);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_ERROR, &e, &len), 0);
    assert_int_equal(e, ECONNREFUSED);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_ERROR, &e, &len), 0);
    assert_int_equal(e, 0);
    brisk_posix_close(pa, c);

    c = brisk_posix_socket(pa, 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, ECONNREFUSED);
    brisk_posix_close(pa, c);
}

/* connect() again after a failed connect, as Linux allows: the same number connects, with its options and
 * O_NONBLOCK kept and the failure's POLLERR / POLLHUP gone; a blocking one is refused again (ECONNREFUSED,
 * not ECONNABORTED); a dup'd socket is not renewed. */
static void test_reconnect(void **state)
{
    (void)state;
    int c = brisk_posix_socket(pa, SOCK_NONBLOCK);
    int port = 7101, on = 1;
    assert_int_equal(brisk_posix_setsockopt(pa, c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)), 0);
    struct sockaddr_in to = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EINPROGRESS);
    assert_true(failed_revents(c) & POLLERR);
    int e = 0;
    socklen_t len = sizeof(e);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_ERROR, &e, &len), 0);
    assert_int_equal(e, ECONNREFUSED);
    /* now something listens there */
    int l = brisk_posix_socket(pb, 0);
    struct sockaddr_in any = sin_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, sizeof(any)), 0);
    assert_int_equal(brisk_posix_listen(pb, l, 4), 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EINPROGRESS);
    short r = revents(c, POLLOUT, 2000);
    assert_true(r & POLLOUT);
    assert_false(r & (POLLERR | POLLHUP));
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), 0);
    assert_true(fcntl(c, F_GETFL) & O_NONBLOCK);
    int v = 0;
    len = sizeof(v);
    assert_int_equal(brisk_posix_getsockopt(pa, c, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
    assert_int_equal(v, 1);
    int s = brisk_posix_accept4(pb, l, NULL, NULL, 0);
    assert_true(s >= 0);
    char buf[8];
    assert_int_equal(brisk_posix_send(pa, c, "again", 5, 0), 5);
    assert_int_equal(brisk_posix_recv(pb, s, buf, 5, MSG_WAITALL), 5);
    assert_memory_equal(buf, "again", 5);
    assert_int_equal(brisk_posix_send(pb, s, "back", 4, 0), 4);
    assert_true(revents(c, POLLIN, 2000) & POLLIN);
    assert_int_equal(brisk_posix_recv(pa, c, buf, sizeof(buf), 0), 4);
    assert_memory_equal(buf, "back", 4);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
    brisk_posix_close(pb, l);

    /* blocking: refused, and refused again */
    to = sin_of(IP_B, port + 1);
    c = brisk_posix_socket(pa, 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, ECONNREFUSED);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, ECONNREFUSED);
    /* a second number for it: not renewed */
    int d = brisk_posix_dupfd(pa, c, 0, 0);
    assert_true(d >= 0);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, ECONNABORTED);
    brisk_posix_close(pa, d);
    brisk_posix_close(pa, c);
}

/* EAGAIN, readiness following the data both ways, FIONREAD, MSG_PEEK. */
static void test_readiness(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int on = 1;
    assert_int_equal(brisk_posix_ioctl(pa, c, FIONBIO, &on), 0);
    assert_true(fcntl(c, F_GETFL) & O_NONBLOCK);
    char buf[16];
    assert_int_equal(brisk_posix_recv(pa, c, buf, sizeof(buf), 0), -1);
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(revents(c, POLLIN, 0), 0);
    assert_int_equal(brisk_posix_send(pa, c, buf, 0, 0), 0); /* an empty write is no error */
    assert_true(revents(c, POLLOUT, 0) & POLLOUT);
    assert_int_equal(brisk_posix_send(pb, s, "hello", 5, 0), 5);
    assert_true(revents(c, POLLIN, 2000) & POLLIN);
    int n = 0;
    assert_int_equal(brisk_posix_ioctl(pa, c, FIONREAD, &n), 0);
    assert_int_equal(n, 5);
    assert_int_equal(brisk_posix_recv(pa, c, buf, 2, MSG_PEEK), 2);
    assert_memory_equal(buf, "he", 2);
    assert_int_equal(brisk_posix_recv(pa, c, buf, sizeof(buf), 0), 5);
    assert_memory_equal(buf, "hello", 5);
    assert_int_equal(revents(c, POLLIN, 0), 0); /* drained: not readable any more */
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
}

/* A non-blocking writer fills the buffer: EAGAIN and no POLLOUT, then POLLOUT again once the peer reads. */
static void test_write_full(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int fl = fcntl(c, F_GETFL);
    assert_int_equal(brisk_posix_fcntl(pa, c, F_SETFL, fl | O_NONBLOCK), 0);
    static char buf[65536];
    size_t sent = 0;
    /* Until EAGAIN, and again while the stack thread still makes room: the peer's receive window may not be
     * full at the first EAGAIN, and ACKs for what is in flight then free buffer space after it (CI, loaded:
     * POLLOUT came back between the EAGAIN and the poll). Full means still not writable 200 ms later. */
    int eagain = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 10000; i++) {
            ssize_t r = brisk_posix_send(pa, c, buf, sizeof(buf), 0);
            if (r < 0) {
                assert_int_equal(errno, EAGAIN);
                eagain = 1;
                break;
            }
            sent += (size_t)r;
        }
        if (!(revents(c, POLLOUT, 200) & POLLOUT))
            break;
    }
    assert_true(sent > 0);
    assert_true(eagain);
    assert_int_equal(revents(c, POLLOUT, 0) & POLLOUT, 0);
    int q = 0;
    assert_int_equal(brisk_posix_ioctl(pa, c, SIOCOUTQ, &q), 0);
    assert_true(q > 0);
    size_t got = 0;
    while (got < sent) {
        ssize_t r = brisk_posix_recv(pb, s, buf, sizeof(buf), 0);
        assert_true(r > 0);
        got += (size_t)r;
    }
    assert_true(revents(c, POLLOUT, 2000) & POLLOUT);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
}

/* One epoll set with a brisk socket and a pipe; level- and edge-triggered. */
static void test_epoll_mixed(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = c};
    assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev), 0);
    ev.data.fd = pp[0];
    assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev), 0);
    struct epoll_event out[4];
    assert_int_equal(epoll_wait(ep, out, 4, 0), 0);
    assert_int_equal(write(pp[1], "p", 1), 1);
    assert_int_equal(epoll_wait(ep, out, 4, 1000), 1);
    assert_int_equal(out[0].data.fd, pp[0]);
    char b[8];
    assert_int_equal(read(pp[0], b, 1), 1);
    assert_int_equal(brisk_posix_send(pb, s, "abc", 3, 0), 3);
    assert_int_equal(epoll_wait(ep, out, 4, 2000), 1);
    assert_int_equal(out[0].data.fd, c);
    assert_int_equal(epoll_wait(ep, out, 4, 0), 1); /* level-triggered: still readable */
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), 3);
    assert_int_equal(epoll_wait(ep, out, 4, 0), 0);

    /* edge-triggered: one event per arrival, none while nothing new comes */
    ev.events = EPOLLIN | EPOLLET | EPOLLRDHUP;
    ev.data.fd = c;
    assert_int_equal(epoll_ctl(ep, EPOLL_CTL_MOD, c, &ev), 0);
    assert_int_equal(brisk_posix_send(pb, s, "d", 1, 0), 1);
    assert_int_equal(epoll_wait(ep, out, 4, 2000), 1);
    assert_int_equal(epoll_wait(ep, out, 4, 50), 0);
    assert_int_equal(brisk_posix_send(pb, s, "e", 1, 0), 1);
    assert_int_equal(epoll_wait(ep, out, 4, 2000), 1); /* new data: a new edge though still readable */
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), 2);
    /* the peer's FIN: EPOLLRDHUP */
    assert_int_equal(brisk_posix_shutdown(pb, s, SHUT_WR), 0);
    assert_int_equal(epoll_wait(ep, out, 4, 2000), 1);
    assert_true(out[0].events & EPOLLRDHUP);
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), 0);
    close(ep);
    close(pp[0]);
    close(pp[1]);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
}

static volatile sig_atomic_t sigpipes;
static void on_sigpipe(int sig)
{
    (void)sig;
    sigpipes++;
}

/* A reset: ECONNRESET once, then EPIPE with SIGPIPE unless MSG_NOSIGNAL; POLLERR | POLLHUP. */
static void test_reset_epipe(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    struct linger lg = {1, 0};
    assert_int_equal(brisk_posix_setsockopt(pb, s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
    assert_int_equal(brisk_posix_close(pb, s), 0); /* RST */
    short r = revents(c, POLLIN, 2000);
    assert_true(r & POLLERR);
    assert_true(r & POLLHUP);
    char b[4];
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), -1);
    assert_int_equal(errno, ECONNRESET);
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigpipe;
    sigaction(SIGPIPE, &sa, &old);
    sigpipes = 0;
    assert_int_equal(brisk_posix_send(pa, c, "x", 1, MSG_NOSIGNAL), -1);
    assert_int_equal(errno, EPIPE);
    assert_int_equal(sigpipes, 0);
    assert_int_equal(brisk_posix_send(pa, c, "x", 1, 0), -1);
    assert_int_equal(errno, EPIPE);
    assert_int_equal(sigpipes, 1);
    sigaction(SIGPIPE, &old, NULL);
    brisk_posix_close(pa, c);
}

/* ENOTCONN, EADDRINUSE, EINVAL paths; half-close; SO_RCVTIMEO. */
static void test_errors_and_timeouts(void **state)
{
    (void)state;
    int f = brisk_posix_socket(pa, 0);
    char b[4];
    assert_int_equal(brisk_posix_recv(pa, f, b, sizeof(b), 0), -1);
    assert_int_equal(errno, ENOTCONN);
    struct sockaddr_in n;
    socklen_t len = sizeof(n);
    assert_int_equal(brisk_posix_getpeername(pa, f, (struct sockaddr *)&n, &len), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(brisk_posix_shutdown(pa, f, SHUT_WR), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(brisk_posix_recv(pa, 1000000, b, 1, 0), -1);
    assert_int_equal(errno, EBADF);

    int port;
    int l = listener(&port);
    int d = brisk_posix_socket(pb, 0);
    struct sockaddr_in at = sin_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, d, (struct sockaddr *)&at, sizeof(at)), -1);
    assert_int_equal(errno, EADDRINUSE);
    brisk_posix_close(pb, d);
    brisk_posix_close(pb, l);
    brisk_posix_close(pa, f);

    int c, s;
    pair(&c, &s);
    rcvtimeo_expires(pa, c, 100);
    /* half-close: the side that shut down keeps receiving */
    assert_int_equal(brisk_posix_shutdown(pa, c, SHUT_WR), 0);
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), 0), 0);
    assert_int_equal(brisk_posix_send(pb, s, "ok", 2, 0), 2);
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), MSG_WAITALL), 2);
    assert_memory_equal(b, "ok", 2);
    assert_int_equal(brisk_posix_send(pa, c, "x", 1, MSG_NOSIGNAL), -1);
    assert_int_equal(errno, EPIPE);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
}

/* Options read back; the common ones reach the socket. */
static void test_options(void **state)
{
    (void)state;
    int c = brisk_posix_socket(pa, 0);
    int v = 1, g = 0;
    socklen_t len = sizeof(g);
    assert_int_equal(brisk_posix_setsockopt(pa, c, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)), 0);
    assert_int_equal(brisk_posix_getsockopt(pa, c, IPPROTO_TCP, TCP_NODELAY, &g, &len), 0);
    assert_int_equal(g, 1);
    assert_int_equal(brisk_posix_setsockopt(pa, c, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)), 0);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_KEEPALIVE, &g, &len), 0);
    assert_int_equal(g, 1);
    v = 30;
    assert_int_equal(brisk_posix_setsockopt(pa, c, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof(v)), 0);
    assert_int_equal(brisk_posix_getsockopt(pa, c, IPPROTO_TCP, TCP_KEEPIDLE, &g, &len), 0);
    assert_int_equal(g, 30);
    v = 100000;
    assert_int_equal(brisk_posix_setsockopt(pa, c, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)), 0);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_SNDBUF, &g, &len), 0);
    assert_int_equal(g, 200000); /* doubled, as Linux reads it back */
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_TYPE, &g, &len), 0);
    assert_int_equal(g, SOCK_STREAM);
    struct timeval tv = {2, 500000}, tg;
    socklen_t tl = sizeof(tg);
    assert_int_equal(brisk_posix_setsockopt(pa, c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
    assert_int_equal(brisk_posix_getsockopt(pa, c, SOL_SOCKET, SO_SNDTIMEO, &tg, &tl), 0);
    assert_int_equal(tg.tv_sec, 2);
    assert_int_equal(tg.tv_usec, 500000);
    assert_int_equal(brisk_posix_setsockopt(pa, c, SOL_SOCKET, SO_RCVTIMEO, &v, 1), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(brisk_posix_setsockopt(pa, c, 9999, 1, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    int d = brisk_posix_fcntl(pa, c, F_DUPFD, 100);
    assert_true(d >= 100);
    assert_int_equal(brisk_posix_fcntl(pa, d, F_GETFD, 0), 0);
    brisk_posix_close(pa, d);
    brisk_posix_close(pa, c);
    struct brisk_posix_stats st;
    brisk_posix_get_stats(pa, &st);
    assert_true(st.commands > 0);
    assert_true(st.wakeups > 0 && st.wakeups <= st.commands);
}

/* bind to port 0 picks a port at once; SO_LINGER above 0 makes close wait for the FIN's ACK; MSG_OOB. */
static void test_bind0_linger_oob(void **state)
{
    (void)state;
    int l = brisk_posix_socket(pb, 0);
    struct sockaddr_in any = sin_of(0, 0), n;
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, sizeof(any)), 0);
    socklen_t len = sizeof(n);
    assert_int_equal(brisk_posix_getsockname(pb, l, (struct sockaddr *)&n, &len), 0);
    int port = ntohs(n.sin_port);
    assert_true(port >= 32768);
    assert_int_equal(brisk_posix_listen(pb, l, 4), 0);
    int c = brisk_posix_socket(pa, 0);
    struct sockaddr_in to = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), 0);
    int s = brisk_posix_accept4(pb, l, NULL, NULL, 0);
    assert_true(s >= 0);
    char b[8];
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), MSG_OOB | MSG_DONTWAIT), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(brisk_posix_send(pa, c, "u", 1, MSG_OOB), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    struct linger lg = {1, 5};
    assert_int_equal(brisk_posix_setsockopt(pa, c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
    assert_int_equal(brisk_posix_send(pa, c, "bye", 3, 0), 3);
    struct brisk_posix_stats st;
    assert_int_equal(brisk_posix_close(pa, c), 0);
    brisk_posix_get_stats(pa, &st);
    assert_int_equal(st.closing, 0); /* close returned once the FIN was acknowledged */
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), MSG_WAITALL), 3);
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), 0), 0);
    brisk_posix_close(pb, s);
    brisk_posix_close(pb, l);
}

/* dup: a second number for the socket, with its readiness; the last close releases it; dup3 onto another
 * brisk socket's number releases that one. */
static void test_dup(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int d = brisk_posix_dupfd(pa, c, 0, 1);
    assert_true(d >= 0 && d != c);
    assert_true(brisk_posix_owns(pa, d));
    assert_int_equal(brisk_posix_fcntl(pa, d, F_GETFD, 0), FD_CLOEXEC);
    assert_int_equal(brisk_posix_send(pb, s, "dup", 3, 0), 3);
    assert_true(revents(d, POLLIN, 2000) & POLLIN); /* both numbers see the socket's readiness */
    assert_true(revents(c, POLLIN, 0) & POLLIN);
    char b[8];
    assert_int_equal(brisk_posix_recv(pa, d, b, sizeof(b), 0), 3);
    assert_int_equal(brisk_posix_close(pa, c), 0); /* not the last name: the connection stays */
    assert_false(brisk_posix_owns(pa, c));
    assert_int_equal(brisk_posix_send(pa, d, "xy", 2, 0), 2);
    assert_int_equal(brisk_posix_recv(pb, s, b, 2, MSG_WAITALL), 2);
    /* dup3 of another brisk socket onto d: d's socket loses its last name and closes (the peer sees EOF) */
    int e = brisk_posix_socket(pa, 0);
    assert_int_equal(brisk_posix_dup3(pa, e, d, 0), d);
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), 0), 0);
    assert_int_equal(brisk_posix_recv(pa, d, b, sizeof(b), MSG_DONTWAIT), -1);
    assert_int_equal(errno, ENOTCONN); /* d now names e, a new socket */
    brisk_posix_close(pa, d);
    brisk_posix_close(pa, e);
    brisk_posix_close(pb, s);
    struct brisk_posix_stats st;
    brisk_posix_get_stats(pa, &st);
    assert_int_equal(st.sockets_open, 0);
}

/* ---- fork ------------------------------------------------------------------------------------------- */

#define FORK_ECHO 300000

/* The child of test_fork, with B's handlers run around its fork: it uses the accepted socket s the parent
 * has closed since, and accepts on the listener l they both hold. Returns the number of the first check
 * that failed (its exit status), 0 when all held. */
static int fork_child_main(int s, int l)
{
    char b[16];
    if (!brisk_posix_is_remote(pb))
        return 1;
    if (brisk_posix_send(pb, s, "child-hello", 11, 0) != 11)
        return 2;
    if (brisk_posix_recv(pb, s, b, 4, MSG_WAITALL) != 4 || memcmp(b, "ping", 4) != 0)
        return 3; /* a blocking read: the child waits on its own copy of the descriptor */
    if (brisk_posix_send(pb, s, "pong", 4, 0) != 4)
        return 4;
    struct sockaddr_in from;
    socklen_t len = sizeof(from);
    int a = brisk_posix_accept4(pb, l, (struct sockaddr *)&from, &len, SOCK_CLOEXEC);
    if (a < 0 || !brisk_posix_owns(pb, a) || len != sizeof(from) || ntohl(from.sin_addr.s_addr) != IP_A)
        return 5;
    if (brisk_posix_fcntl(pb, a, F_GETFD, 0) != FD_CLOEXEC)
        return 6;
    int one = 1, v = 0;
    socklen_t vl = sizeof(v);
    if (brisk_posix_setsockopt(pb, a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
        brisk_posix_getsockopt(pb, a, IPPROTO_TCP, TCP_NODELAY, &v, &vl) != 0 || v != 1 || vl != sizeof(v))
        return 7;
    int d = brisk_posix_dupfd(pb, a, 0, 0); /* a second number in the child: the socket stays at one close */
    if (d < 0 || brisk_posix_close(pb, a) != 0)
        return 8;
    static uint8_t buf[100000];
    size_t moved = 0;
    while (moved < FORK_ECHO) {
        ssize_t r = brisk_posix_recv(pb, d, buf, sizeof(buf), 0); /* more than one request carries */
        if (r <= 0)
            return 9;
        if (brisk_posix_send(pb, d, buf, (size_t)r, 0) != r)
            return 10;
        moved += (size_t)r;
    }
    if (brisk_posix_close(pb, d) != 0 || brisk_posix_close(pb, s) != 0)
        return 11; /* s: the last holder closes it, so the peer sees the FIN */
    if (brisk_posix_send(pb, s, "x", 1, 0) != -1 || errno != EBADF)
        return 12;
    return 0; /* l is left open: the child's exit lets go of it */
}

/* A child of fork() uses inherited sockets through the parent's stack thread: a connection the parent has
 * closed since (it lives while the child holds it, and closes at the child's close), and a listener both
 * hold (the child accepts on it; it stays the parent's after the child exits). */
static void test_fork(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int port;
    int l = listener(&port);
    /* A child made without fork()'s handlers (a raw fork system call, as _Fork or clone make one) is not
     * served: its call fails with EBADF at once rather than queueing a command nobody runs. */
    pid_t raw = (pid_t)syscall(SYS_fork);
    if (raw == 0) {
        alarm(5); /* a hang is the failure this guards against */
        _exit(brisk_posix_send(pb, s, "x", 1, 0) == -1 && errno == EBADF ? 0 : 1);
    }
    int status = -1;
    assert_true(raw > 0);
    assert_int_equal(waitpid(raw, &status, 0), raw);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    brisk_posix_fork_prepare(pb);
    pid_t pid = fork();
    if (pid == 0) {
        brisk_posix_fork_child(pb);
        _exit(fork_child_main(s, l));
    }
    brisk_posix_fork_parent(pb);
    assert_true(pid > 0);
    struct brisk_posix_stats st;
    brisk_posix_get_stats(pb, &st);
    assert_int_equal(st.children, 1);
    assert_int_equal(st.held_by_children, 2);
    assert_int_equal(brisk_posix_close(pb, s), 0); /* as a forking server does: the child has it */
    char b[16];
    assert_int_equal(brisk_posix_recv(pa, c, b, 11, MSG_WAITALL), 11);
    assert_memory_equal(b, "child-hello", 11);
    assert_int_equal(brisk_posix_send(pa, c, "ping", 4, 0), 4);
    assert_int_equal(brisk_posix_recv(pa, c, b, 4, MSG_WAITALL), 4);
    assert_memory_equal(b, "pong", 4);
    /* the child accepts, and echoes 300 KB */
    int c2 = brisk_posix_socket(pa, 0);
    struct sockaddr_in to = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c2, (struct sockaddr *)&to, sizeof(to)), 0);
    struct bulk w = {c2, FORK_ECHO, 0};
    pthread_t t;
    pthread_create(&t, NULL, bulk_writer, &w);
    uint8_t *got = malloc(FORK_ECHO);
    assert_int_equal(brisk_posix_recv(pa, c2, got, FORK_ECHO, MSG_WAITALL), FORK_ECHO);
    pthread_join(t, NULL);
    assert_int_equal(w.ret, FORK_ECHO);
    for (size_t i = 0; i < FORK_ECHO; i++)
        if (got[i] != (uint8_t)(i * 7 + (i >> 12)))
            fail_msg("echo differs at byte %zu", i);
    free(got);
    /* the child's close of s was the last: FIN; the accepted one too */
    assert_int_equal(brisk_posix_recv(pa, c, b, sizeof(b), 0), 0);
    assert_int_equal(brisk_posix_recv(pa, c2, b, sizeof(b), 0), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* the child's exit ended its channel: it holds nothing; l is the parent's alone and still listens */
    for (int i = 0; i < 200; i++) {
        brisk_posix_get_stats(pb, &st);
        if (!st.children)
            break;
        usleep(5000);
    }
    assert_int_equal(st.children, 0);
    assert_int_equal(st.held_by_children, 0);
    int c3 = brisk_posix_socket(pa, 0);
    assert_int_equal(brisk_posix_connect(pa, c3, (struct sockaddr *)&to, sizeof(to)), 0);
    int s3 = brisk_posix_accept4(pb, l, NULL, NULL, 0);
    assert_true(s3 >= 0);
    assert_int_equal(brisk_posix_send(pb, s3, "p", 1, 0), 1);
    assert_int_equal(brisk_posix_recv(pa, c3, b, 1, 0), 1);
    brisk_posix_close(pb, s3);
    brisk_posix_close(pb, l);
    brisk_posix_close(pa, c3);
    brisk_posix_close(pa, c2);
    brisk_posix_close(pa, c);
    brisk_posix_get_stats(pb, &st);
    assert_int_equal(st.sockets_open, 0);
}

static void on_usr1(int sig)
{
    (void)sig;
}

struct reader {
    int fd;
    ssize_t ret;
    int err;
};

static void *blocked_reader(void *arg)
{
    struct reader *r = arg;
    char b[8];
    r->ret = brisk_posix_recv(pa, r->fd, b, sizeof(b), 0);
    r->err = errno;
    return NULL;
}

/* A signal during a blocking read: EINTR with a handler installed without SA_RESTART; with SA_RESTART the
 * read goes on and returns the data that comes later. */
static void test_signal_restart(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    for (int restart = 0; restart < 2; restart++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_usr1;
        sa.sa_flags = restart ? SA_RESTART : 0;
        sigaction(SIGUSR1, &sa, &old);
        struct reader r = {c, 0, 0};
        pthread_t t;
        pthread_create(&t, NULL, blocked_reader, &r);
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL); /* the reader is in its wait by now */
        pthread_kill(t, SIGUSR1);
        nanosleep(&ts, NULL);
        if (restart)
            assert_int_equal(brisk_posix_send(pb, s, "late", 4, 0), 4);
        pthread_join(t, NULL);
        sigaction(SIGUSR1, &old, NULL);
        if (restart) {
            assert_int_equal(r.ret, 4);
        } else {
            assert_int_equal(r.ret, -1);
            assert_int_equal(r.err, EINTR);
        }
    }
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
}

/* ---- UDP ------------------------------------------------------------------------------------------------ */

/* A UDP socket on p, bound to port (0: an ephemeral one) on any address; its port in *got. */
static int udp_bound(brisk_posix *p, int flags, int port, int *got)
{
    int u = brisk_posix_socket_udp(p, flags);
    assert_true(u >= 0);
    struct sockaddr_in s = sin_of(0, port);
    assert_int_equal(brisk_posix_bind(p, u, (struct sockaddr *)&s, sizeof(s)), 0);
    socklen_t len = sizeof(s);
    assert_int_equal(brisk_posix_getsockname(p, u, (struct sockaddr *)&s, &len), 0);
    assert_int_equal(len, sizeof(s));
    *got = ntohs(s.sin_port);
    return u;
}

/* Datagrams between the two stacks: names, truncation, peek, readiness, FIONREAD, the blocking and
 * non-blocking paths, a 200-datagram echo compared byte for byte. */
static void test_udp_datagrams(void **state)
{
    (void)state;
    int bport, aport, v;
    int b = udp_bound(pb, SOCK_NONBLOCK, next_port++, &bport);
    int a = udp_bound(pa, 0, 0, &aport);
    assert_true(aport >= 32768 && aport <= 60999); /* bind to port 0: an ephemeral port at once */
    char buf[2048];
    assert_int_equal(brisk_posix_recv(pb, b, buf, sizeof(buf), 0), -1);
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(revents(b, POLLIN | POLLOUT, 0), POLLOUT);
    /* a datagram gathered from three buffers, to msg_name */
    uint8_t d[300];
    for (int i = 0; i < 300; i++)
        d[i] = (uint8_t)(i * 13);
    struct sockaddr_in to = sin_of(IP_B, bport), from;
    struct iovec iv[3] = {{d, 100}, {d + 100, 0}, {d + 100, 200}};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = iv;
    m.msg_iovlen = 3;
    m.msg_name = &to;
    m.msg_namelen = sizeof(to);
    assert_int_equal(brisk_posix_sendmsg(pa, a, &m, 0), 300);
    assert_int_equal(revents(b, POLLIN, 2000), POLLIN);
    assert_int_equal(brisk_posix_ioctl(pb, b, FIONREAD, &v), 0);
    assert_int_equal(v, 300); /* the next datagram's size, as Linux's */
    /* MSG_PEEK into a short buffer: truncated, still queued */
    struct iovec pv = {buf, 10};
    memset(&m, 0, sizeof(m));
    m.msg_iov = &pv;
    m.msg_iovlen = 1;
    m.msg_name = &from;
    m.msg_namelen = sizeof(from);
    assert_int_equal(brisk_posix_recvmsg(pb, b, &m, MSG_PEEK), 10);
    assert_int_equal(m.msg_flags & MSG_TRUNC, MSG_TRUNC);
    assert_int_equal(m.msg_namelen, sizeof(from));
    assert_int_equal(ntohl(from.sin_addr.s_addr), IP_A);
    assert_int_equal(ntohs(from.sin_port), aport);
    assert_memory_equal(buf, d, 10);
    assert_int_equal(revents(b, POLLIN, 0), POLLIN);
    assert_int_equal(brisk_posix_ioctl(pb, b, FIONREAD, &v), 0);
    assert_int_equal(v, 300);
    /* recvfrom with MSG_TRUNC: the datagram's whole length, 100 bytes of it copied */
    socklen_t fl = sizeof(from);
    memset(&from, 0, sizeof(from));
    assert_int_equal(brisk_posix_recvfrom(pb, b, buf, 100, MSG_TRUNC, (struct sockaddr *)&from, &fl), 300);
    assert_int_equal(fl, sizeof(from));
    assert_int_equal(ntohs(from.sin_port), aport);
    assert_memory_equal(buf, d, 100);
    assert_int_equal(revents(b, POLLIN, 0), 0);
    assert_int_equal(brisk_posix_ioctl(pb, b, FIONREAD, &v), 0);
    assert_int_equal(v, 0);
    /* a truncated read without the flag: the copied bytes, MSG_TRUNC in msg_flags, the rest gone */
    assert_int_equal(brisk_posix_sendto(pa, a, d, 300, 0, (struct sockaddr *)&to, sizeof(to)), 300);
    assert_int_equal(revents(b, POLLIN, 2000), POLLIN);
    pv.iov_len = 50;
    m.msg_namelen = sizeof(from);
    assert_int_equal(brisk_posix_recvmsg(pb, b, &m, 0), 50);
    assert_int_equal(m.msg_flags, MSG_TRUNC);
    assert_int_equal(brisk_posix_recv(pb, b, buf, sizeof(buf), MSG_DONTWAIT), -1);
    assert_int_equal(errno, EAGAIN);
    /* the echo: b answers each datagram to its sender; a reads blocking */
    for (int i = 0; i < 200; i++) {
        size_t n = (size_t)(i * 1472 / 199);
        uint8_t out[1472], back[1472];
        for (size_t k = 0; k < n; k++)
            out[k] = (uint8_t)(k * 7 + (size_t)i);
        assert_int_equal(brisk_posix_sendto(pa, a, out, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
        assert_int_equal(revents(b, POLLIN, 2000), POLLIN);
        fl = sizeof(from);
        ssize_t r = brisk_posix_recvfrom(pb, b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        assert_int_equal(r, (ssize_t)n);
        assert_int_equal(brisk_posix_sendto(pb, b, buf, n, 0, (struct sockaddr *)&from, fl), (ssize_t)n);
        assert_int_equal(brisk_posix_recv(pa, a, back, sizeof(back), 0), (ssize_t)n); /* a blocking read */
        if (n)
            assert_memory_equal(back, out, n);
    }
    /* edge-triggered epoll: an edge per datagram while already readable; level-triggered: the level */
    int ep = epoll_create1(0), lp = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = b}, got[2];
    assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev), 0);
    ev.events = EPOLLIN;
    assert_int_equal(epoll_ctl(lp, EPOLL_CTL_ADD, b, &ev), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(brisk_posix_sendto(pa, a, "e", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
        assert_int_equal(epoll_wait(ep, got, 2, 2000), 1);
        assert_int_equal(epoll_wait(ep, got, 2, 0), 0); /* no new edge without a new datagram */
        assert_int_equal(epoll_wait(lp, got, 2, 0), 1);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(brisk_posix_recv(pb, b, buf, sizeof(buf), 0), 1);
    assert_int_equal(epoll_wait(lp, got, 2, 0), 0);
    close(ep);
    close(lp);
    /* what is refused */
    static uint8_t big[70000];
    assert_int_equal(brisk_posix_sendto(pa, a, big, 1473, 0, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EMSGSIZE); /* over the MTU less 28: brisk does not fragment */
    assert_int_equal(brisk_posix_sendto(pa, a, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EMSGSIZE);
    assert_int_equal(brisk_posix_send(pa, a, "x", 1, 0), -1);
    assert_int_equal(errno, EDESTADDRREQ);
    assert_int_equal(brisk_posix_getpeername(pa, a, (struct sockaddr *)&from, &fl), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(brisk_posix_listen(pa, a, 1), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(brisk_posix_bind(pa, a, (struct sockaddr *)&to, sizeof(to)), -1);
    assert_int_equal(errno, EINVAL); /* bound already */
    /* connect: send without an address, getpeername; AF_UNSPEC dissolves it */
    assert_int_equal(brisk_posix_connect(pa, a, (struct sockaddr *)&to, sizeof(to)), 0);
    fl = sizeof(from);
    assert_int_equal(brisk_posix_getpeername(pa, a, (struct sockaddr *)&from, &fl), 0);
    assert_int_equal(ntohl(from.sin_addr.s_addr), IP_B);
    assert_int_equal(ntohs(from.sin_port), bport);
    assert_int_equal(brisk_posix_send(pa, a, "conn", 4, 0), 4);
    assert_int_equal(revents(b, POLLIN, 2000), POLLIN);
    assert_int_equal(brisk_posix_recv(pb, b, buf, sizeof(buf), 0), 4);
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    assert_int_equal(brisk_posix_connect(pa, a, &un, sizeof(un)), 0);
    assert_int_equal(brisk_posix_getpeername(pa, a, (struct sockaddr *)&from, &fl), -1);
    assert_int_equal(errno, ENOTCONN);
    rcvtimeo_expires(pa, a, 150); /* on the blocking socket */
    /* shutdown of the unconnected socket: ENOTCONN, but reads end (0) and it is readable for good */
    assert_int_equal(brisk_posix_shutdown(pa, a, SHUT_RD), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(brisk_posix_recv(pa, a, buf, sizeof(buf), 0), 0);
    assert_int_equal(revents(a, POLLIN | POLLRDHUP, 0), POLLIN | POLLRDHUP);
    assert_int_equal(brisk_posix_close(pa, a), 0);
    assert_int_equal(brisk_posix_close(pb, b), 0);
}

/* ICMP port unreachable on a connected socket: POLLIN, SO_ERROR ECONNREFUSED once, or the next read's. */
static void test_udp_refused_options(void **state)
{
    (void)state;
    int port;
    int u = udp_bound(pa, SOCK_NONBLOCK, 0, &port), v = 0;
    struct sockaddr_in to = sin_of(IP_B, next_port++); /* nothing on B there */
    socklen_t vl = sizeof(v);
    assert_int_equal(brisk_posix_connect(pa, u, (struct sockaddr *)&to, sizeof(to)), 0);
    assert_int_equal(brisk_posix_send(pa, u, "q", 1, 0), 1);
    assert_int_equal(revents(u, POLLIN, 2000) & POLLIN, POLLIN);
    assert_int_equal(brisk_posix_getsockopt(pa, u, SOL_SOCKET, SO_ERROR, &v, &vl), 0);
    assert_int_equal(v, ECONNREFUSED);
    assert_int_equal(brisk_posix_getsockopt(pa, u, SOL_SOCKET, SO_ERROR, &v, &vl), 0);
    assert_int_equal(v, 0);
    assert_int_equal(revents(u, POLLIN, 0), 0); /* read: the readiness it gave is gone */
    char buf[16];
    assert_int_equal(brisk_posix_send(pa, u, "q", 1, 0), 1);
    assert_int_equal(revents(u, POLLIN, 2000) & POLLIN, POLLIN);
    assert_int_equal(brisk_posix_recv(pa, u, buf, sizeof(buf), 0), -1);
    assert_int_equal(errno, ECONNREFUSED);
    assert_int_equal(brisk_posix_recv(pa, u, buf, sizeof(buf), 0), -1);
    assert_int_equal(errno, EAGAIN);
    /* options */
    vl = sizeof(v);
    assert_int_equal(brisk_posix_getsockopt(pa, u, SOL_SOCKET, SO_TYPE, &v, &vl), 0);
    assert_int_equal(v, SOCK_DGRAM);
    assert_int_equal(brisk_posix_getsockopt(pa, u, SOL_SOCKET, SO_PROTOCOL, &v, &vl), 0);
    assert_int_equal(v, IPPROTO_UDP);
    assert_int_equal(brisk_posix_getsockopt(pa, u, SOL_SOCKET, SO_RCVBUF, &v, &vl), 0);
    assert_int_equal(v, 212992);
    /* set, then read back: (level, name, value set, value read) */
    static const int rt[][4] = {
        {SOL_SOCKET, SO_RCVBUF, 65536, 131072}, /* doubled, as Linux reads it back */
        {SOL_SOCKET, SO_SNDBUF, 10000, 20000},  /* recorded, doubled */
        {SOL_SOCKET, SO_BROADCAST, 1, 1},
        {IPPROTO_IP, IP_TOS, 0x10, 0x10},
    };
    for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
        v = rt[i][2];
        assert_int_equal(brisk_posix_setsockopt(pa, u, rt[i][0], rt[i][1], &v, sizeof(v)), 0);
        assert_int_equal(brisk_posix_getsockopt(pa, u, rt[i][0], rt[i][1], &v, &vl), 0);
        assert_int_equal(v, rt[i][3]);
    }
    assert_int_equal(brisk_posix_setsockopt(pa, u, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    assert_int_equal(brisk_posix_getsockopt(pa, u, IPPROTO_TCP, TCP_INFO, buf, &vl), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    assert_int_equal(brisk_posix_send(pa, u, "q", 1, MSG_MORE), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(brisk_posix_close(pa, u), 0);
    struct brisk_posix_stats st;
    brisk_posix_get_stats(pa, &st);
    assert_int_equal(st.sockets_open, 0);
}

/* A fork's child receives and answers on an inherited UDP socket, and makes one of its own. */
static void test_udp_fork(void **state)
{
    (void)state;
    int bport, aport;
    int b = udp_bound(pb, 0, next_port++, &bport);
    int a = udp_bound(pa, 0, 0, &aport);
    brisk_posix_fork_prepare(pb);
    pid_t pid = fork();
    if (pid == 0) {
        brisk_posix_fork_child(pb);
        char buf[2000];
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t r = brisk_posix_recvfrom(pb, b, buf, 10, MSG_TRUNC, (struct sockaddr *)&from, &fl);
        if (r != 1000 || fl != sizeof(from) || ntohl(from.sin_addr.s_addr) != IP_A)
            _exit(1);
        if (brisk_posix_sendto(pb, b, "child", 5, 0, (struct sockaddr *)&from, fl) != 5)
            _exit(2);
        int u = brisk_posix_socket_udp(pb, 0);
        if (u < 0 || brisk_posix_sendto(pb, u, "made", 4, 0, (struct sockaddr *)&from, fl) != 4)
            _exit(3);
        int t = -1;
        socklen_t tl = sizeof(t);
        if (brisk_posix_getsockopt(pb, u, SOL_SOCKET, SO_TYPE, &t, &tl) != 0 || t != SOCK_DGRAM)
            _exit(4);
        _exit(brisk_posix_close(pb, u) == 0 && brisk_posix_close(pb, b) == 0 ? 0 : 5);
    }
    brisk_posix_fork_parent(pb);
    assert_true(pid > 0);
    static uint8_t d[1000];
    struct sockaddr_in to = sin_of(IP_B, bport);
    assert_int_equal(brisk_posix_sendto(pa, a, d, sizeof(d), 0, (struct sockaddr *)&to, sizeof(to)), 1000);
    char buf[16];
    assert_int_equal(brisk_posix_recv(pa, a, buf, sizeof(buf), 0), 5);
    assert_memory_equal(buf, "child", 5);
    assert_int_equal(brisk_posix_recv(pa, a, buf, sizeof(buf), 0), 4);
    assert_memory_equal(buf, "made", 4);
    int status = -1;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    brisk_posix_close(pa, a);
    brisk_posix_close(pb, b);
}

/* AF_INET6 TCP: a listener on [::], a connection over IPv6 (fd00:9::1 -> fd00:9::2), sockaddr_in6 from
 * accept, getsockname and getpeername, data both ways, SO_DOMAIN; the address checks Linux makes. */
static void test_ipv6_stream(void **state)
{
    (void)state;
    int port = next_port++;
    int l = brisk_posix_socket_in(pb, AF_INET6, SOCK_STREAM, 0);
    assert_true(l >= 0);
    struct sockaddr_in6 any = sin6_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, 16), -1); /* shorter than RFC 2133's */
    assert_int_equal(errno, EINVAL);
    struct sockaddr_in6 v4 = any; /* a sockaddr_in6's length, family AF_INET */
    v4.sin6_family = AF_INET;
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&v4, sizeof(v4)), -1);
    assert_int_equal(errno, EAFNOSUPPORT);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, sizeof(any)), 0);
    assert_int_equal(brisk_posix_listen(pb, l, 8), 0);
    int v = 0;
    socklen_t vl = sizeof(v);
    assert_int_equal(brisk_posix_getsockopt(pb, l, SOL_SOCKET, SO_DOMAIN, &v, &vl), 0);
    assert_int_equal(v, AF_INET6);

    int c = brisk_posix_socket_in(pa, AF_INET6, SOCK_STREAM, 0);
    assert_true(c >= 0);
    struct sockaddr_in6 to = sin6_of(2, port);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to, sizeof(to)), 0);
    struct sockaddr_in6 from;
    socklen_t len = sizeof(from);
    int s = brisk_posix_accept4(pb, l, (struct sockaddr *)&from, &len, 0);
    assert_true(s >= 0);
    assert_int_equal(len, sizeof(from));
    assert_int_equal(from.sin6_family, AF_INET6);
    struct sockaddr_in6 want = sin6_of(1, 0);
    assert_memory_equal(&from.sin6_addr, &want.sin6_addr, 16);
    struct sockaddr_in6 me, peer;
    len = sizeof(me);
    assert_int_equal(brisk_posix_getsockname(pa, c, (struct sockaddr *)&me, &len), 0);
    assert_int_equal(len, sizeof(me));
    assert_memory_equal(&me.sin6_addr, &want.sin6_addr, 16);
    assert_int_equal(ntohs(me.sin6_port), ntohs(from.sin6_port));
    len = sizeof(peer);
    assert_int_equal(brisk_posix_getpeername(pa, c, (struct sockaddr *)&peer, &len), 0);
    assert_memory_equal(&peer.sin6_addr, &to.sin6_addr, 16);
    assert_int_equal(ntohs(peer.sin6_port), port);
    char b[64];
    memset(b, 'x', sizeof(b));
    assert_int_equal(brisk_posix_send(pa, c, b, sizeof(b), 0), sizeof(b));
    assert_int_equal(brisk_posix_recv(pb, s, b, sizeof(b), MSG_WAITALL), sizeof(b));
    assert_int_equal(brisk_posix_send(pb, s, "v6", 2, 0), 2);
    assert_int_equal(brisk_posix_recv(pa, c, b, 2, MSG_WAITALL), 2);
    assert_memory_equal(b, "v6", 2);
    /* an AF_INET socket has no IPv6 level */
    int c4 = brisk_posix_socket(pa, 0);
    v = 1;
    assert_int_equal(brisk_posix_setsockopt(pa, c4, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    assert_int_equal(brisk_posix_socket_in(pa, AF_INET6, SOCK_RAW, 0), -1);
    assert_int_equal(errno, EPROTONOSUPPORT);
    assert_int_equal(brisk_posix_socket_in(pa, AF_UNIX, SOCK_STREAM, 0), -1);
    assert_int_equal(errno, EAFNOSUPPORT);
    brisk_posix_close(pa, c4);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);
    brisk_posix_close(pb, l);
}

/* Dual stack: an IPv4 client reaches the [::] listener and is seen as ::ffff:10.9.0.1; an AF_INET6 client
 * connects to ::ffff:10.9.0.2 over IPv4. With IPV6_V6ONLY the [::] listener shares its port with one on
 * 0.0.0.0, each taking its family; a v6-only socket refuses v4-mapped addresses (bind EINVAL, connect
 * ENETUNREACH), and the option is fixed once bound (EINVAL). */
static void test_ipv6_dual_stack(void **state)
{
    (void)state;
    int port = next_port++;
    int l = brisk_posix_socket_in(pb, AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 any = sin6_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, sizeof(any)), 0);
    assert_int_equal(brisk_posix_listen(pb, l, 8), 0);
    int c = brisk_posix_socket(pa, 0);
    struct sockaddr_in to4 = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to4, sizeof(to4)), 0);
    struct sockaddr_in6 from;
    socklen_t len = sizeof(from);
    int s = brisk_posix_accept4(pb, l, (struct sockaddr *)&from, &len, 0);
    assert_true(s >= 0);
    struct sockaddr_in6 want = sin6_mapped(IP_A, 0);
    assert_memory_equal(&from.sin6_addr, &want.sin6_addr, 16);
    struct sockaddr_in6 me;
    len = sizeof(me);
    assert_int_equal(brisk_posix_getsockname(pb, s, (struct sockaddr *)&me, &len), 0);
    want = sin6_mapped(IP_B, 0);
    assert_memory_equal(&me.sin6_addr, &want.sin6_addr, 16);
    brisk_posix_close(pa, c);
    brisk_posix_close(pb, s);

    int c6 = brisk_posix_socket_in(pa, AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 mapped = sin6_mapped(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c6, (struct sockaddr *)&mapped, sizeof(mapped)), 0);
    s = brisk_posix_accept4(pb, l, NULL, NULL, 0);
    assert_true(s >= 0);
    len = sizeof(me);
    assert_int_equal(brisk_posix_getsockname(pa, c6, (struct sockaddr *)&me, &len), 0);
    want = sin6_mapped(IP_A, 0);
    assert_memory_equal(&me.sin6_addr, &want.sin6_addr, 16);
    struct sockaddr_in sb;
    len = sizeof(sb);
    assert_int_equal(brisk_posix_getpeername(pb, s, (struct sockaddr *)&sb, &len), 0);
    assert_int_equal(len, sizeof(struct sockaddr_in6)); /* the [::] listener's children are AF_INET6 */
    brisk_posix_close(pa, c6);
    brisk_posix_close(pb, s);
    /* without IPV6_V6ONLY, [::] holds the port for IPv4 too */
    int l4 = brisk_posix_socket(pb, 0);
    struct sockaddr_in any4 = sin_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l4, (struct sockaddr *)&any4, sizeof(any4)), -1);
    assert_int_equal(errno, EADDRINUSE);
    brisk_posix_close(pb, l4);
    brisk_posix_close(pb, l);

    /* IPV6_V6ONLY: [::]:port and 0.0.0.0:port side by side */
    port = next_port++;
    int on = 1, v = 0;
    socklen_t vl = sizeof(v);
    l = brisk_posix_socket_in(pb, AF_INET6, SOCK_STREAM, 0);
    assert_int_equal(brisk_posix_setsockopt(pb, l, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)), 0);
    assert_int_equal(brisk_posix_getsockopt(pb, l, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl), 0);
    assert_int_equal(v, 1);
    mapped = sin6_mapped(IP_B, port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&mapped, sizeof(mapped)), -1);
    assert_int_equal(errno, EINVAL);
    any = sin6_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l, (struct sockaddr *)&any, sizeof(any)), 0);
    assert_int_equal(brisk_posix_setsockopt(pb, l, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(brisk_posix_listen(pb, l, 8), 0);
    l4 = brisk_posix_socket(pb, 0);
    any4 = sin_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, l4, (struct sockaddr *)&any4, sizeof(any4)), 0);
    assert_int_equal(brisk_posix_listen(pb, l4, 8), 0);
    c = brisk_posix_socket(pa, 0);
    to4 = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_connect(pa, c, (struct sockaddr *)&to4, sizeof(to4)), 0);
    c6 = brisk_posix_socket_in(pa, AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 to6 = sin6_of(2, port);
    assert_int_equal(brisk_posix_connect(pa, c6, (struct sockaddr *)&to6, sizeof(to6)), 0);
    int s4 = brisk_posix_accept4(pb, l4, NULL, NULL, 0);
    struct sockaddr_in6 f6;
    len = sizeof(f6);
    int s6 = brisk_posix_accept4(pb, l, (struct sockaddr *)&f6, &len, 0);
    assert_true(s4 >= 0 && s6 >= 0);
    want = sin6_of(1, 0);
    assert_memory_equal(&f6.sin6_addr, &want.sin6_addr, 16);
    assert_int_equal(brisk_posix_fcntl(pb, l, F_SETFL, O_NONBLOCK), 0);
    assert_int_equal(brisk_posix_accept4(pb, l, NULL, NULL, 0), -1); /* the IPv4 one went to l4 */
    assert_int_equal(errno, EAGAIN);
    int cv = brisk_posix_socket_in(pa, AF_INET6, SOCK_STREAM, 0);
    assert_int_equal(brisk_posix_setsockopt(pa, cv, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)), 0);
    assert_int_equal(brisk_posix_connect(pa, cv, (struct sockaddr *)&mapped, sizeof(mapped)), -1);
    assert_int_equal(errno, ENETUNREACH);
    brisk_posix_close(pa, cv);
    brisk_posix_close(pa, c);
    brisk_posix_close(pa, c6);
    brisk_posix_close(pb, s4);
    brisk_posix_close(pb, s6);
    brisk_posix_close(pb, l4);
    brisk_posix_close(pb, l);
}

/* AF_INET6 UDP: a socket on [::] at B receives from an AF_INET6 sender over IPv6 (sockaddr_in6 from
 * recvfrom, fd00:9::1) and from an AF_INET one over IPv4 (::ffff:10.9.0.1), and answers each with sendto to
 * the address it got; a connected AF_INET6 socket's send / recv and getpeername; IPV6_V6ONLY reads 0 and
 * cannot be set (brisk's UDP has no IPv6-only sockets). */
static void test_ipv6_udp(void **state)
{
    (void)state;
    int port = next_port++;
    int u = brisk_posix_socket_in(pb, AF_INET6, SOCK_DGRAM, 0);
    assert_true(u >= 0);
    int v = 1;
    socklen_t vl = sizeof(v);
    assert_int_equal(brisk_posix_getsockopt(pb, u, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl), 0);
    assert_int_equal(v, 0);
    v = 1;
    assert_int_equal(brisk_posix_setsockopt(pb, u, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    struct sockaddr_in6 any = sin6_of(0, port);
    assert_int_equal(brisk_posix_bind(pb, u, (struct sockaddr *)&any, sizeof(any)), 0);

    int c6 = brisk_posix_socket_in(pa, AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 to6 = sin6_of(2, port);
    assert_int_equal(brisk_posix_sendto(pa, c6, "six", 3, 0, (struct sockaddr *)&to6, sizeof(to6)), 3);
    char b[16];
    struct sockaddr_in6 from;
    socklen_t fl = sizeof(from);
    assert_int_equal(brisk_posix_recvfrom(pb, u, b, sizeof(b), 0, (struct sockaddr *)&from, &fl), 3);
    assert_int_equal(fl, sizeof(from));
    assert_int_equal(from.sin6_family, AF_INET6);
    struct sockaddr_in6 want = sin6_of(1, 0);
    assert_memory_equal(&from.sin6_addr, &want.sin6_addr, 16);
    assert_int_equal(brisk_posix_sendto(pb, u, "SIX", 3, 0, (struct sockaddr *)&from, fl), 3);
    assert_int_equal(brisk_posix_recv(pa, c6, b, sizeof(b), 0), 3);
    assert_memory_equal(b, "SIX", 3);

    int c4 = brisk_posix_socket_udp(pa, 0);
    struct sockaddr_in to4 = sin_of(IP_B, port);
    assert_int_equal(brisk_posix_sendto(pa, c4, "four", 4, 0, (struct sockaddr *)&to4, sizeof(to4)), 4);
    fl = sizeof(from);
    assert_int_equal(brisk_posix_recvfrom(pb, u, b, sizeof(b), 0, (struct sockaddr *)&from, &fl), 4);
    want = sin6_mapped(IP_A, 0);
    assert_memory_equal(&from.sin6_addr, &want.sin6_addr, 16);
    assert_int_equal(brisk_posix_sendto(pb, u, "FOUR", 4, 0, (struct sockaddr *)&from, fl), 4); /* over IPv4 */
    struct sockaddr_in f4;
    socklen_t f4l = sizeof(f4);
    assert_int_equal(brisk_posix_recvfrom(pa, c4, b, sizeof(b), 0, (struct sockaddr *)&f4, &f4l), 4);
    assert_memory_equal(b, "FOUR", 4);
    assert_int_equal(ntohl(f4.sin_addr.s_addr), IP_B);

    int cc = brisk_posix_socket_in(pa, AF_INET6, SOCK_DGRAM, 0);
    assert_int_equal(brisk_posix_connect(pa, cc, (struct sockaddr *)&to6, sizeof(to6)), 0);
    struct sockaddr_in6 peer;
    socklen_t pl = sizeof(peer);
    assert_int_equal(brisk_posix_getpeername(pa, cc, (struct sockaddr *)&peer, &pl), 0);
    assert_int_equal(pl, sizeof(peer));
    assert_memory_equal(&peer.sin6_addr, &to6.sin6_addr, 16);
    assert_int_equal(brisk_posix_send(pa, cc, "conn", 4, 0), 4);
    fl = sizeof(from);
    assert_int_equal(brisk_posix_recvfrom(pb, u, b, sizeof(b), 0, (struct sockaddr *)&from, &fl), 4);
    assert_memory_equal(b, "conn", 4);
    brisk_posix_close(pa, cc);
    brisk_posix_close(pa, c4);
    brisk_posix_close(pa, c6);
    brisk_posix_close(pb, u);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_accept_bulk), cmocka_unit_test(test_nonblocking_connect),
        cmocka_unit_test(test_refused),             cmocka_unit_test(test_reconnect),             cmocka_unit_test(test_readiness),
        cmocka_unit_test(test_write_full),          cmocka_unit_test(test_epoll_mixed),
        cmocka_unit_test(test_reset_epipe),         cmocka_unit_test(test_errors_and_timeouts),
        cmocka_unit_test(test_options),             cmocka_unit_test(test_bind0_linger_oob),
        cmocka_unit_test(test_dup),                 cmocka_unit_test(test_fork),
        cmocka_unit_test(test_signal_restart),      cmocka_unit_test(test_udp_datagrams),
        cmocka_unit_test(test_udp_refused_options), cmocka_unit_test(test_udp_fork),
        cmocka_unit_test(test_ipv6_stream),         cmocka_unit_test(test_ipv6_dual_stack),
        cmocka_unit_test(test_ipv6_udp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
