/* posix-epoll-mixed — an ordinary Linux program (no brisk header) that tests/posix/test_preload.sh runs
 * under brisk-run: readiness of AF_INET TCP sockets in one epoll set with a pipe, poll and select on the
 * same, against a kernel echo server (socat ... PIPE).
 *
 *   posix-epoll-mixed ADDR PORT CLOSED_PORT BYTES
 *
 * 1. a non-blocking connect to CLOSED_PORT: EINPROGRESS, then EPOLLOUT | EPOLLERR | EPOLLHUP and SO_ERROR
 *    ECONNREFUSED;
 * 2. a non-blocking connect to PORT, in an epoll set with a pipe: EPOLLOUT and SO_ERROR 0, the pipe's
 *    EPOLLIN alone when a byte is written to it, poll() and select() agreeing;
 * 3. BYTES of a pattern sent and the echo read back through the same epoll loop (non-blocking writes on
 *    EPOLLOUT, reads on EPOLLIN), byte-exact; then shutdown(SHUT_WR), EPOLLRDHUP and a read of 0.
 * Prints "ok - ..." per step and "local ADDR" (the socket's own address: brisk's, under brisk-run). Exit 0
 * if everything held, 1 with "FAIL - ..." otherwise, 2 for bad arguments. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

static int fails;
static void check(int cond, const char *what)
{
    printf("%s - %s\n", cond ? "ok  " : "FAIL", what);
    fails += !cond;
}

static int nb_connect(const char *addr, int port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof(to));
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, addr, &to.sin_addr);
    int r = connect(s, (struct sockaddr *)&to, sizeof(to));
    check(s >= 0 && r == -1 && errno == EINPROGRESS, "non-blocking connect: EINPROGRESS");
    return s;
}

static int so_error(int s)
{
    int e = -1;
    socklen_t len = sizeof(e);
    getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len);
    return e;
}

static unsigned char pat(size_t i)
{
    return (unsigned char)(i * 131 + (i >> 10));
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: posix-epoll-mixed ADDR PORT CLOSED_PORT BYTES\n");
        return 2;
    }
    const char *addr = argv[1];
    int port = atoi(argv[2]), closed = atoi(argv[3]);
    size_t bytes = strtoull(argv[4], NULL, 10);
    if (port <= 0 || port > 65535 || closed <= 0 || closed > 65535 || !bytes) {
        fprintf(stderr, "posix-epoll-mixed: bad PORT, CLOSED_PORT or BYTES\n");
        return 2;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev, out[8];

    /* 1. refused */
    int r = nb_connect(addr, closed);
    ev.events = EPOLLOUT;
    ev.data.fd = r;
    epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev);
    int n = epoll_wait(ep, out, 8, 3000);
    /* The facade shows ERR by closing the mirror's other end, and the kernel wakes this end's waiters at that
     * close before it frees the other end's queue, which holds the bytes that hide OUT: for microseconds
     * ERR | HUP can be seen without OUT (docs/posix.md). Level-triggered, the next wait has all three. */
    if (n == 1 && (out[0].events & (EPOLLERR | EPOLLHUP)) && !(out[0].events & EPOLLOUT))
        n = epoll_wait(ep, out, 8, 100);
    check(n == 1 && (out[0].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == (EPOLLOUT | EPOLLERR | EPOLLHUP),
          "refused: EPOLLOUT | EPOLLERR | EPOLLHUP");
    check(so_error(r) == ECONNREFUSED, "refused: SO_ERROR is ECONNREFUSED");
    epoll_ctl(ep, EPOLL_CTL_DEL, r, NULL);
    close(r);

    /* 2. connected, in one set with a pipe */
    int s = nb_connect(addr, port);
    int pp[2];
    if (pipe2(pp, O_NONBLOCK | O_CLOEXEC) < 0)
        return 1;
    check(s != pp[0] && s != pp[1], "socket and pipe have distinct descriptor numbers");
    ev.events = EPOLLOUT;
    ev.data.fd = s;
    epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
    ev.events = EPOLLIN;
    ev.data.fd = pp[0];
    epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev);
    n = epoll_wait(ep, out, 8, 3000);
    check(n == 1 && out[0].data.fd == s && out[0].events == EPOLLOUT, "connected: EPOLLOUT on the socket alone");
    check(so_error(s) == 0, "connected: SO_ERROR 0");
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    char mine[INET_ADDRSTRLEN] = "?";
    if (getsockname(s, (struct sockaddr *)&me, &ml) == 0)
        inet_ntop(AF_INET, &me.sin_addr, mine, sizeof(mine));
    printf("local %s\n", mine);
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = s;
    epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev);
    check(write(pp[1], "p", 1) == 1, "pipe written");
    n = epoll_wait(ep, out, 8, 1000);
    check(n == 1 && out[0].data.fd == pp[0], "mixed set: the pipe readable, the socket not");
    struct pollfd pf[2] = {{s, POLLIN | POLLOUT, 0}, {pp[0], POLLIN, 0}};
    n = poll(pf, 2, 0);
    check(n == 2 && pf[0].revents == POLLOUT && pf[1].revents == POLLIN, "poll agrees: socket POLLOUT, pipe POLLIN");
    fd_set rd, wr;
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_SET(s, &rd);
    FD_SET(pp[0], &rd);
    FD_SET(s, &wr);
    struct timeval tv = {0, 0};
    n = select((s > pp[0] ? s : pp[0]) + 1, &rd, &wr, NULL, &tv);
    check(n == 2 && !FD_ISSET(s, &rd) && FD_ISSET(pp[0], &rd) && FD_ISSET(s, &wr), "select agrees");
    char c;
    if (read(pp[0], &c, 1) != 1)
        return 1;

    /* 3. echo through the event loop */
    unsigned char *buf = malloc(65536);
    size_t sent = 0, got = 0, bad = 0;
    int rdhup = 0, eof = 0, shut = 0;
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
    epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev);
    while (!eof) {
        n = epoll_wait(ep, out, 8, 5000);
        if (n <= 0) {
            int inq = -1;
            ioctl(s, FIONREAD, &inq);
            struct pollfd q = {s, POLLIN | POLLOUT | POLLRDHUP, 0};
            poll(&q, 1, 0);
            printf("stalled: FIONREAD %d, poll revents 0x%x\n", inq, (unsigned)q.revents);
            check(0, "echo: an event within 5 s");
            break;
        }
        for (int i = 0; i < n; i++) {
            if (out[i].data.fd != s)
                continue;
            if (out[i].events & EPOLLRDHUP)
                rdhup = 1;
            if ((out[i].events & EPOLLOUT) && sent < bytes) {
                size_t k = bytes - sent < 65536 ? bytes - sent : 65536;
                unsigned char w[65536];
                for (size_t j = 0; j < k; j++)
                    w[j] = pat(sent + j);
                ssize_t m = write(s, w, k);
                if (m > 0)
                    sent += (size_t)m;
                else if (errno != EAGAIN)
                    check(0, "echo: write");
            }
            if (sent == bytes && !shut) {
                shutdown(s, SHUT_WR);
                ev.events = EPOLLIN | EPOLLRDHUP;
                epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev);
                shut = 1;
            }
            if (out[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
                for (;;) {
                    ssize_t m = read(s, buf, 65536);
                    if (m > 0) {
                        for (ssize_t j = 0; j < m; j++)
                            bad += buf[j] != pat(got + (size_t)j);
                        got += (size_t)m;
                        continue;
                    }
                    if (m == 0)
                        eof = 1;
                    else if (errno != EAGAIN) {
                        printf("read: %s\n", strerror(errno));
                        eof = -1;
                    }
                    break;
                }
            }
        }
    }
    printf("sent %zu received %zu\n", sent, got);
    check(eof == 1 && sent == bytes && got == bytes && bad == 0, "echo: every byte back, in order, then EOF");
    n = epoll_wait(ep, out, 8, 0); /* level-triggered: the FIN's RDHUP stays reported */
    if (n == 1 && (out[0].events & EPOLLRDHUP) && (out[0].events & EPOLLIN))
        rdhup = 1;
    check(rdhup, "echo: EPOLLRDHUP | EPOLLIN after the peer's FIN");
    close(s);
    close(ep);
    free(buf);
    return fails ? 1 : 0;
}
