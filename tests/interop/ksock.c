/*
 * ksock.c — the kernel side of the interop tests: the same roles as brisk_peer.c, played by a Linux TCP
 * socket, run inside the test's network namespace (`ip netns exec NS ksock ...`).
 *
 * Roles (see brisk_peer.c): source, sink, echo, rr, rst — over one connection, listening or connecting
 * (connect retries until the other side listens). It checks every received byte against the pattern stream
 * (pattern.h) and prints one key=value line on stdout with the same keys as brisk_peer, plus what the kernel
 * negotiated (TCP_INFO: options, window scales, MSS). `--expect eof|reset` states how the connection must
 * end; the exit status is 0 when it did and every byte was right, 1 otherwise, 2 on bad usage.
 *
 * Deliberately plain: blocking setup, then a non-blocking poll() loop, so the source keeps reading while it
 * writes (an echoing peer would otherwise deadlock on full buffers).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "interop/pattern.h"

#define BUF_LEN (256 * 1024)
#define MAX_RR  1000000

enum mode { M_SOURCE, M_SINK, M_ECHO, M_RR, M_RST };

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: ksock (--listen PORT [--ipv6] | --connect ADDR:PORT | --connect [IPV6]:PORT)\n"
            "             [--mode source|sink|echo|rr|rst]\n"
            "             [--bytes N] [--size N] [--count N] [--seed N] [--nodelay] [--timeout SECS]\n"
            "             [--expect eof|reset]\n");
}

static int bad(const char *what, const char *val)
{
    fprintf(stderr, "ksock: invalid %s: '%s'\n", what, val ? val : "(missing)");
    usage();
    return 2;
}

int main(int argc, char **argv)
{
    enum mode mode = M_SINK;
    uint64_t bytes = 0, size = 1, count = 1000, seed = 1, timeout = 120, listen_port = 0;
    int nodelay = 0, expect_reset = 0, ipv6 = 0;
    struct sockaddr_storage dst;
    socklen_t dst_len = 0;
    memset(&dst, 0, sizeof(dst));
    int roles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--nodelay")) {
            nodelay = 1;
            continue;
        }
        if (!strcmp(a, "--ipv6")) { /* listen on :: (IPv6, and IPv4 as mapped addresses) */
            ipv6 = 1;
            continue;
        }
        if (!v)
            return bad(a, NULL);
        i++;
        if (!strcmp(a, "--listen")) {
            if (pattern_parse_count(v, &listen_port) || listen_port == 0 || listen_port > 65535)
                return bad(a, v);
            roles++;
        } else if (!strcmp(a, "--connect")) {
            /* ADDR:PORT or [IPV6]:PORT */
            char host[64];
            const char *h = v, *c = strrchr(v, ':');
            size_t hl = c ? (size_t)(c - v) : 0;
            int v6 = v[0] == '[';
            if (v6 && c && c > v && c[-1] == ']') {
                h = v + 1;
                hl -= 2;
            }
            uint64_t port;
            if (!c || hl == 0 || hl >= sizeof(host))
                return bad(a, v);
            memcpy(host, h, hl);
            host[hl] = '\0';
            if (pattern_parse_count(c + 1, &port) || port == 0 || port > 65535)
                return bad(a, v);
            if (v6) {
                struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;
                d6->sin6_family = AF_INET6;
                d6->sin6_port = htons((uint16_t)port);
                if (inet_pton(AF_INET6, host, &d6->sin6_addr) != 1)
                    return bad(a, v);
                dst_len = sizeof(*d6);
            } else {
                struct sockaddr_in *d4 = (struct sockaddr_in *)&dst;
                d4->sin_family = AF_INET;
                d4->sin_port = htons((uint16_t)port);
                if (inet_pton(AF_INET, host, &d4->sin_addr) != 1)
                    return bad(a, v);
                dst_len = sizeof(*d4);
            }
            roles++;
        } else if (!strcmp(a, "--mode")) {
            static const char *names[] = {"source", "sink", "echo", "rr", "rst"};
            int m = -1;
            for (int k = 0; k < 5; k++)
                if (!strcmp(v, names[k]))
                    m = k;
            if (m < 0)
                return bad(a, v);
            mode = (enum mode)m;
        } else if (!strcmp(a, "--bytes")) {
            if (pattern_parse_count(v, &bytes))
                return bad(a, v);
        } else if (!strcmp(a, "--size")) {
            if (pattern_parse_count(v, &size) || size == 0 || size > 65536)
                return bad(a, v);
        } else if (!strcmp(a, "--count")) {
            if (pattern_parse_count(v, &count) || count == 0 || count > MAX_RR)
                return bad(a, v);
        } else if (!strcmp(a, "--seed")) {
            if (pattern_parse_count(v, &seed))
                return bad(a, v);
        } else if (!strcmp(a, "--timeout")) {
            if (pattern_parse_count(v, &timeout) || timeout == 0)
                return bad(a, v);
        } else if (!strcmp(a, "--expect")) {
            if (strcmp(v, "eof") && strcmp(v, "reset"))
                return bad(a, v);
            expect_reset = !strcmp(v, "reset");
        } else {
            return bad("option", a);
        }
    }
    if (roles != 1)
        return bad("arguments", "need exactly one of --listen / --connect");
    if (mode == M_RR && listen_port)
        return bad("mode", "rr is a client role (use --connect)");

    uint64_t deadline = clock_ns() + timeout * 1000000000ull;
    int fd = -1;
    const char *result = "error";
    int err = 0;
    if (listen_port) {
        int ls = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)listen_port)};
        struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)listen_port)};
        struct sockaddr *sap = ipv6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa;
        socklen_t sal = ipv6 ? sizeof(sa6) : sizeof(sa);
        if (ls < 0 || bind(ls, sap, sal) < 0 || listen(ls, 4) < 0) {
            fprintf(stderr, "ksock: listen on %llu: %s\n", (unsigned long long)listen_port, strerror(errno));
            return 1;
        }
        printf("listening\n");
        fflush(stdout);
        struct pollfd pl = {.fd = ls, .events = POLLIN};
        if (poll(&pl, 1, (int)(timeout * 1000)) == 1)
            fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        close(ls);
        if (fd < 0) {
            fprintf(stderr, "ksock: no connection within %llu s\n", (unsigned long long)timeout);
            return 1;
        }
    } else {
        /* The brisk side may not listen yet: retry refused / unreachable attempts until the deadline. */
        for (;;) {
            fd = socket(dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (nodelay) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            }
            if (connect(fd, (struct sockaddr *)&dst, dst_len) == 0)
                break;
            err = errno;
            close(fd);
            fd = -1;
            if (clock_ns() > deadline) {
                fprintf(stderr, "ksock: connect: %s\n", strerror(err));
                return 1;
            }
            usleep(20000);
        }
    }
    if (nodelay) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

    uint8_t *buf = malloc(BUF_LEN), *echo = malloc(BUF_LEN);
    uint64_t *lat = mode == M_RR ? calloc(MAX_RR, sizeof(uint64_t)) : NULL;
    if (!buf || !echo || (mode == M_RR && !lat)) {
        fprintf(stderr, "ksock: out of memory\n");
        return 1;
    }
    struct pattern pat;
    if (pattern_init(&pat, seed) < 0) {
        fprintf(stderr, "ksock: out of memory\n");
        return 1;
    }
    struct pattern_hash txh;
    struct pattern_rx rx;
    pattern_hash_init(&txh);
    pattern_rx_init(&rx);
    uint64_t tx_off = 0, rr_done = 0, rr_got = 0, rr_sent_at = 0;
    size_t echo_len = 0;
    int rx_eof = 0, tx_fin = 0, done = 0, reset = 0;
    uint64_t t_start = clock_ns(), t_end = 0;

    if (mode == M_RR) {
        pattern_fill(&pat, 0, buf, size);
        if (send(fd, buf, size, 0) != (ssize_t)size) {
            fprintf(stderr, "ksock: first request: %s\n", strerror(errno));
            return 1;
        }
        pattern_hash_add(&txh, buf, size);
        tx_off = size;
        rr_sent_at = clock_ns();
    }
    while (!done) {
        uint64_t now = clock_ns();
        if (now > deadline) {
            result = "timeout";
            break;
        }
        /* Writing. */
        if (mode == M_SOURCE || mode == M_RST) {
            while (tx_off < bytes) {
                size_t n = bytes - tx_off < BUF_LEN ? (size_t)(bytes - tx_off) : BUF_LEN;
                const uint8_t *src = pattern_at(&pat, tx_off, &n);
                ssize_t k = send(fd, src, n, MSG_NOSIGNAL);
                if (k <= 0)
                    break;
                pattern_hash_add(&txh, src, (size_t)k);
                tx_off += (uint64_t)k;
            }
            if (mode == M_SOURCE && tx_off == bytes && !tx_fin) {
                shutdown(fd, SHUT_WR);
                tx_fin = 1;
            }
            if (mode == M_RST && tx_off == bytes) {
                int outq = 0;
                ioctl(fd, SIOCOUTQ, &outq);
                if (outq == 0) { /* everything acknowledged: now reset */
                    struct linger lg = {.l_onoff = 1, .l_linger = 0};
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
                    close(fd);
                    fd = -1;
                    result = "closed";
                    t_end = clock_ns();
                    break;
                }
            }
        }
        if (mode == M_ECHO) {
            while (echo_len) {
                ssize_t k = send(fd, echo, echo_len, MSG_NOSIGNAL);
                if (k <= 0)
                    break;
                pattern_hash_add(&txh, echo, (size_t)k);
                tx_off += (uint64_t)k;
                memmove(echo, echo + k, echo_len - (size_t)k);
                echo_len -= (size_t)k;
            }
            if (rx_eof && !echo_len && !tx_fin) {
                shutdown(fd, SHUT_WR);
                tx_fin = 1;
            }
        }
        if (mode == M_SINK && rx_eof && !tx_fin) {
            shutdown(fd, SHUT_WR);
            tx_fin = 1;
        }
        if (rx_eof && (tx_fin || mode == M_RST)) {
            result = "eof";
            break;
        }
        /* Reading. */
        int want_out = (mode == M_SOURCE && tx_off < bytes) || (mode == M_ECHO && echo_len) ||
                       (mode == M_RST && tx_off < bytes);
        struct pollfd pf = {.fd = fd, .events = (short)(POLLIN | (want_out ? POLLOUT : 0))};
        if (mode == M_RST && tx_off == bytes && !rx_eof)
            poll(&pf, 1, 1); /* waiting for the ACKs before the reset */
        else
            poll(&pf, 1, 100);
        for (;;) {
            uint8_t *dst_buf = buf;
            size_t room = BUF_LEN;
            if (mode == M_ECHO) {
                dst_buf = echo + echo_len;
                room = BUF_LEN - echo_len;
                if (!room)
                    break;
            }
            ssize_t n = recv(fd, dst_buf, room, 0);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                    break;
                err = errno;
                if (err == ECONNRESET || err == EPIPE)
                    reset = 1;
                done = 1;
                break;
            }
            if (n == 0) {
                if (!rx_eof && mode == M_SINK)
                    t_end = clock_ns();
                rx_eof = 1;
                break;
            }
            pattern_rx_take(&pat, &rx, dst_buf, (size_t)n);
            if (mode == M_ECHO)
                echo_len += (size_t)n;
            if (mode == M_RR) {
                rr_got += (uint64_t)n;
                if (rr_got >= size) {
                    uint64_t t = clock_ns();
                    if (rr_done < MAX_RR)
                        lat[rr_done] = t - rr_sent_at;
                    rr_done++;
                    rr_got = 0;
                    if (rr_done == count) {
                        t_end = t;
                        shutdown(fd, SHUT_WR);
                        tx_fin = 1;
                    } else {
                        pattern_fill(&pat, tx_off, buf, size);
                        if (send(fd, buf, size, MSG_NOSIGNAL) != (ssize_t)size) {
                            err = errno;
                            done = 1;
                            break;
                        }
                        pattern_hash_add(&txh, buf, size);
                        tx_off += size;
                        rr_sent_at = clock_ns();
                    }
                }
            }
        }
    }
    if (reset)
        result = "reset";
    if (!t_end)
        t_end = clock_ns();

    struct tcp_info ti;
    memset(&ti, 0, sizeof(ti));
    socklen_t tl = sizeof(ti);
    if (fd >= 0)
        getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    double secs = (double)(t_end - t_start) / 1e9;
    uint64_t moved = mode == M_SINK ? rx.off : tx_off;
    printf("side=kernel mode=%d result=%s err=%s tx_bytes=%llu tx_hash=%016llx rx_bytes=%llu rx_hash=%016llx "
           "rx_bad=%d rx_bad_at=%llu secs=%.6f mbps=%.1f mss=%u ts=%d sack=%d ws=%d snd_wscale=%u "
           "rcv_wscale=%u retrans=%u",
           (int)mode, result, err ? strerror(err) : "none", (unsigned long long)tx_off,
           (unsigned long long)pattern_hash_final(&txh), (unsigned long long)rx.off,
           (unsigned long long)pattern_hash_final(&rx.h), rx.bad, (unsigned long long)rx.bad_at, secs,
           secs > 0 ? (double)moved * 8 / secs / 1e6 : 0.0, ti.tcpi_snd_mss,
           (ti.tcpi_options & TCPI_OPT_TIMESTAMPS) != 0, (ti.tcpi_options & TCPI_OPT_SACK) != 0,
           (ti.tcpi_options & TCPI_OPT_WSCALE) != 0, ti.tcpi_snd_wscale, ti.tcpi_rcv_wscale,
           ti.tcpi_total_retrans);
    if (mode == M_RR && rr_done) {
        uint64_t n = rr_done < MAX_RR ? rr_done : MAX_RR;
        qsort(lat, n, sizeof(uint64_t), cmp_u64);
        printf(" rr=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f", (unsigned long long)rr_done,
               (double)lat[n / 2] / 1e3, (double)lat[n * 9 / 10] / 1e3, (double)lat[n * 99 / 100] / 1e3);
    }
    printf("\n");
    fflush(stdout);
    if (fd >= 0)
        close(fd);
    free(buf);
    free(echo);
    free(lat);
    pattern_free(&pat);

    int ok = !rx.bad && !strcmp(result, expect_reset ? "reset" : (mode == M_RST ? "closed" : "eof"));
    if (mode == M_SOURCE || mode == M_RST)
        ok = ok && tx_off == bytes;
    if (mode == M_RR)
        ok = ok && rr_done == count;
    return ok ? 0 : 1;
}
