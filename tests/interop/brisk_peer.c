/*
 * brisk_peer.c — the brisk side of the interop tests: one TCP connection over a TAP device, driven by
 * brisk_loop, whose peer is a kernel socket (ksock.c) in a network namespace.
 *
 * It opens the TAP (brisk_tap_open), prints "tap NAME" on stderr so the script can configure the kernel side,
 * then listens or connects (after the kernel answers ARP, which is how it knows the other side is ready) and
 * plays one role:
 *   source  send --bytes of the pattern stream (pattern.h), then FIN (half-close), and keep reading and
 *           checking whatever comes back until the peer's FIN — with an echoing peer that is the half-close
 *           test;
 *   sink    read and check until the peer's FIN, then FIN;
 *   echo    send back what arrives; FIN after the peer's FIN and the last echoed byte;
 *   rr      --count request/response transactions of --size bytes each with NODELAY; latency percentiles;
 *   rst     send --bytes (may be 0), then abort with RST.
 * Or, with --udp-echo / --udp-client in place of --listen / --connect, UDP over the same TAP:
 *   --udp-echo PORT    a socket on [::]:PORT (with --ip6; else 0.0.0.0:PORT) sends every datagram back to
 *                      its sender, of either family, until --count datagrams have gone back;
 *   --udp-client ADDR:PORT
 *                      a socket connected to ADDR:PORT (either family) sends --count datagrams of --size
 *                      pattern bytes, each once the last one's echo came back byte for byte (resent after
 *                      500 ms of silence, 5 times at most); --expect refused: the first send must draw the
 *                      peer's ICMP or ICMPv6 port unreachable, reported on the socket as ECONNREFUSED.
 * With --ctl PATH it answers brisk-ss and brisk-nstat on that control socket while it runs
 * (tools/introspect/ctl.h, docs/introspection.md).
 * At the end it prints one line of key=value pairs on stdout (the same keys as ksock) and exits 0 when the
 * connection ended the way the role expects (clean FIN both ways; "reset" for rst), 1 otherwise, 2 on bad
 * usage, 77 when the TAP cannot be opened (no root, no /dev/net/tun).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/loop.h"
#include "brisk/tap.h"
#include "interop/pattern.h"
#include "introspect/ctl.h"

#define BUF_LEN (256 * 1024)
#define MAX_RR  1000000
#define UDP_RESEND_NS (500 * BRISK_NSEC_PER_MSEC) /* --udp-client: silence before a datagram is sent again */
#define UDP_RESENDS   5
#define UDP_LINGER_NS (200 * BRISK_NSEC_PER_MSEC) /* --udp-echo: the last echo's time to leave the TAP */

enum mode { M_SOURCE, M_SINK, M_ECHO, M_RR, M_RST };

struct peer {
    /* options */
    enum mode mode;
    uint64_t bytes, seed, size, count, timeout_ns, connect_delay_ns, busy_poll_ns;
    int listen_port, nodelay, expect_reset;
    int udp;            /* 1: --udp-echo (listen_port is its port), 2: --udp-client (dst, dst_port) */
    int expect_refused; /* --expect refused (--udp-client) */
    struct brisk_addr dst; /* --connect's address, either family */
    uint16_t dst_port;
    struct brisk_addr ip6; /* --ip6: a static IPv6 address on the TAP (BRISK_AF_UNSPEC: none) */
    uint8_t ip6_prefix;
    struct brisk_addr gw6; /* --gw6: the default IPv6 router, through the TAP */
    /* runtime */
    brisk_stack *st;
    brisk_loop *loop;
    brisk_tap *tap;
    brisk_sock *ls, *s;
    int resolved, connected, tx_fin, rx_eof, closed, error, hook;
    uint64_t next_resolve, connect_at;
    uint64_t t_start, t_end;
    uint64_t tx_off;
    struct pattern_rx rx; /* what arrived: offset, first bad byte, hash */
    struct pattern pat;
    struct pattern_hash txh;
    uint8_t *buf;
    /* echo backlog: bytes received and not yet sent back */
    uint8_t *echo;
    size_t echo_len;
    /* rr */
    uint64_t rr_done, rr_sent_at, rr_got;
    uint64_t *lat;
    /* UDP */
    brisk_udp *u;
    uint64_t udp_rx, udp_tx, udp_bad, udp_resends, udp_v4, udp_v6; /* datagrams */
    uint64_t udp_sent_at, udp_stop_at;
    int udp_done;
};

static void finish(struct peer *p, uint64_t now)
{
    if (!p->t_end)
        p->t_end = now;
    brisk_loop_stop(p->loop);
}

/* Sends pattern bytes (source, rst) from tx_off up to `limit`. */
static void send_pattern(struct peer *p, uint64_t limit, uint64_t now)
{
    while (p->tx_off < limit) {
        size_t n = limit - p->tx_off < BUF_LEN ? (size_t)(limit - p->tx_off) : BUF_LEN;
        const uint8_t *src = pattern_at(&p->pat, p->tx_off, &n); /* straight from the table */
        int64_t k = brisk_send(p->s, src, n, 0, now);
        if (k <= 0)
            return;
        pattern_hash_add(&p->txh, src, (size_t)k);
        p->tx_off += (uint64_t)k;
    }
}

static void flush_echo(struct peer *p, uint64_t now)
{
    while (p->echo_len) {
        int64_t k = brisk_send(p->s, p->echo, p->echo_len, 0, now);
        if (k <= 0)
            return;
        pattern_hash_add(&p->txh, p->echo, (size_t)k);
        p->tx_off += (uint64_t)k;
        memmove(p->echo, p->echo + k, p->echo_len - (size_t)k);
        p->echo_len -= (size_t)k;
    }
}

static void rr_send(struct peer *p, uint64_t now)
{
    pattern_fill(&p->pat, p->tx_off, p->buf, p->size);
    int64_t k = brisk_send(p->s, p->buf, p->size, 0, now);
    if (k != (int64_t)p->size) { /* a request always fits an empty send buffer */
        p->error = k < 0 ? (int)k : BRISK_ERR_AGAIN;
        finish(p, now);
        return;
    }
    pattern_hash_add(&p->txh, p->buf, p->size);
    p->tx_off += p->size;
    p->rr_sent_at = now;
    p->rr_got = 0;
}

static void do_tx(struct peer *p, uint64_t now)
{
    switch (p->mode) {
    case M_SOURCE:
        send_pattern(p, p->bytes, now);
        if (p->tx_off == p->bytes && !p->tx_fin) {
            p->tx_fin = 1;
            brisk_shutdown_write(p->s, now);
        }
        break;
    case M_RST:
        send_pattern(p, p->bytes, now); /* the hook aborts once all of it is acknowledged */
        break;
    case M_ECHO:
        flush_echo(p, now);
        if (p->rx_eof && !p->echo_len && !p->tx_fin) {
            p->tx_fin = 1;
            brisk_shutdown_write(p->s, now);
        }
        break;
    case M_SINK:
        if (p->rx_eof && !p->tx_fin) {
            p->tx_fin = 1;
            brisk_shutdown_write(p->s, now);
        }
        break;
    case M_RR:
        break;
    }
}

static void do_rx(struct peer *p, uint64_t now)
{
    for (;;) {
        size_t room = BUF_LEN;
        uint8_t *dst = p->buf;
        if (p->mode == M_ECHO) {
            room = BUF_LEN - p->echo_len;
            dst = p->echo + p->echo_len;
            if (room == 0)
                return; /* the peer waits for our window: resumes when the echo drains */
        }
        int64_t n = brisk_recv(p->s, dst, room, now);
        if (n == BRISK_ERR_AGAIN)
            return;
        if (n < 0) {
            p->error = (int)n;
            finish(p, now);
            return;
        }
        if (n == 0) {
            p->rx_eof = 1;
            if (p->mode == M_SINK && !p->t_end)
                p->t_end = now;
            return;
        }
        pattern_rx_take(&p->pat, &p->rx, dst, (size_t)n);
        if (p->mode == M_ECHO) {
            p->echo_len += (size_t)n;
            flush_echo(p, now);
        } else if (p->mode == M_RR) {
            p->rr_got += (uint64_t)n;
            if (p->rr_got >= p->size) {
                if (p->rr_done < MAX_RR)
                    p->lat[p->rr_done] = now - p->rr_sent_at;
                p->rr_done++;
                if (p->rr_done == p->count) {
                    p->tx_fin = 1;
                    brisk_shutdown_write(p->s, now);
                    if (!p->t_end)
                        p->t_end = now;
                } else {
                    rr_send(p, now);
                }
            }
        }
    }
}

static void on_sock(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct peer *p = ctx;
    if (s != p->s)
        return;
    if (ev & BRISK_EV_ERROR) {
        p->error = brisk_sock_error(s);
        p->closed = 1;
        finish(p, now);
        return;
    }
    if (ev & BRISK_EV_CONNECTED) {
        p->connected = 1;
        p->t_start = now;
        if (p->mode == M_RR)
            rr_send(p, now);
    }
    if (ev & BRISK_EV_READABLE)
        do_rx(p, now);
    if (p->s && (ev & (BRISK_EV_WRITABLE | BRISK_EV_CONNECTED | BRISK_EV_READABLE)))
        do_tx(p, now);
    if (p->s && (ev & BRISK_EV_CLOSED)) {
        p->closed = 1;
        finish(p, now);
    }
}

static void on_listener(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    struct peer *p = ctx;
    if (!(ev & BRISK_EV_ACCEPT) || p->s)
        return;
    int err;
    brisk_sock *s = brisk_accept(ls, &err);
    if (!s)
        return;
    p->s = s;
    if (p->nodelay)
        brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now);
    brisk_sock_set_callback(s, on_sock, p);
    on_sock(p, s, BRISK_EV_CONNECTED | BRISK_EV_READABLE | BRISK_EV_WRITABLE, now);
}

/* RST once everything queued went out and was acknowledged, so the peer sees the data, then the reset. */
static uint64_t rst_check(struct peer *p, uint64_t now)
{
    struct brisk_conn_info ci;
    if (!p->s || p->tx_off < p->bytes || brisk_conn_info(p->s, &ci) != BRISK_OK || ci.unacked || ci.notsent)
        return now + BRISK_NSEC_PER_MSEC;
    brisk_abort(p->s, now);
    p->s = NULL;
    p->closed = 1;
    finish(p, now);
    return BRISK_TIME_NONE;
}

/* Before the first connect: 0 once the kernel side answers ARP (its interface is then up and addressed;
 * IPv6's ND queues the first packet itself) and --connect-delay has passed, else when to look again. Marks
 * the peer resolved when it returns 0. */
static uint64_t until_ready(struct peer *p, uint64_t now)
{
    if (now < p->next_resolve)
        return p->next_resolve;
    int rc = p->dst.family == BRISK_AF_INET ? brisk_stack_resolve(p->st, p->dst.u.v4, now) : BRISK_OK;
    if (rc == BRISK_ERR_AGAIN || rc == BRISK_ERR_UNREACH) {
        p->next_resolve = now + 20 * BRISK_NSEC_PER_MSEC;
        return p->next_resolve;
    }
    if (!p->connect_at) {
        p->connect_at = now + p->connect_delay_ns;
        if (p->connect_delay_ns)
            return p->connect_at;
    }
    if (now < p->connect_at)
        return p->connect_at;
    p->resolved = 1;
    return 0;
}

/* Connects once the kernel side is ready (until_ready); in rst mode, waits for the moment to abort. */
static uint64_t on_hook(void *ctx, brisk_loop *l, uint64_t now)
{
    struct peer *p = ctx;
    (void)l;
    if (p->resolved || p->listen_port) {
        if (p->mode != M_RST || p->closed)
            return BRISK_TIME_NONE;
        return p->connected ? rst_check(p, now) : now + BRISK_NSEC_PER_MSEC;
    }
    /* IPv4: ARP first, so the SYN is not the frame that waits for resolution */
    uint64_t wait = until_ready(p, now);
    if (wait)
        return wait;
    int err;
    p->s = brisk_socket(p->st, &err);
    if (!p->s) {
        p->error = err;
        finish(p, now);
        return BRISK_TIME_NONE;
    }
    brisk_sock_set_callback(p->s, on_sock, p);
    if (p->nodelay)
        brisk_setsockopt(p->s, BRISK_SO_NODELAY, 1, now);
    int rc = brisk_connect_addr(p->s, &p->dst, p->dst_port, now);
    if (rc != BRISK_ERR_INPROGRESS) {
        p->error = rc;
        finish(p, now);
    }
    return now;
}

/* --udp-client: datagram number udp_rx (its pattern bytes at udp_rx * size), sent or sent again. */
static void udp_client_send(struct peer *p, uint64_t now)
{
    pattern_fill(&p->pat, p->udp_rx * p->size, p->buf, p->size);
    int64_t k = brisk_udp_send(p->u, p->buf, p->size, now);
    p->udp_sent_at = now;
    if (k == (int64_t)p->size) {
        p->udp_tx++;
        p->tx_off += p->size;
        return;
    }
    if (k == BRISK_ERR_AGAIN)
        return; /* resent by the hook */
    p->error = (int)k; /* a pending ICMP report is read here too */
    p->udp_done = 1;
    finish(p, now);
}

static void on_udp(void *ctx, brisk_udp *u, unsigned ev, uint64_t now)
{
    struct peer *p = ctx;
    if ((ev & BRISK_EV_ERROR) && p->udp == 2) {
        p->error = brisk_udp_error(u);
        p->udp_done = 1;
        finish(p, now);
        return;
    }
    if (!(ev & BRISK_EV_READABLE))
        return;
    struct brisk_addr from;
    uint16_t port;
    unsigned flags;
    int64_t n;
    while ((n = brisk_udp_recvfrom(u, p->buf, BUF_LEN, &from, &port, &flags)) >= 0) {
        if (from.family == BRISK_AF_INET6)
            p->udp_v6++;
        else
            p->udp_v4++;
        p->rx.off += (uint64_t)n;
        if (p->udp == 1) { /* echo */
            if (p->udp_done)
                continue;
            p->udp_rx++;
            if (brisk_udp_sendto(u, p->buf, (size_t)n, &from, port, now) == n) {
                p->udp_tx++;
                p->tx_off += (uint64_t)n;
            } else {
                p->udp_bad++;
            }
            if (p->udp_tx + p->udp_bad >= p->count) {
                p->udp_done = 1;
                p->udp_stop_at = now + UDP_LINGER_NS;
            }
            continue;
        }
        /* client: the echo of the datagram in flight, byte for byte (a late duplicate of an earlier one is
         * not it: counted bad) */
        uint8_t *want = p->buf + p->size;
        pattern_fill(&p->pat, p->udp_rx * p->size, want, p->size);
        if ((uint64_t)n != p->size || memcmp(p->buf, want, p->size) != 0 || (flags & BRISK_MSG_TRUNC)) {
            p->udp_bad++;
            continue;
        }
        p->udp_rx++;
        if (p->udp_rx == p->count || p->expect_refused) {
            p->udp_done = 1;
            finish(p, now);
            return;
        }
        udp_client_send(p, now);
    }
    if (n != BRISK_ERR_AGAIN && p->udp == 2) { /* a pending error read by recvfrom */
        p->error = (int)n;
        p->udp_done = 1;
        finish(p, now);
    }
}

/* --udp-echo's and --udp-client's hook: the client starts once the peer's ARP answer is in (IPv4) and
 * resends after silence; the echo stops after its linger. */
static uint64_t on_udp_hook(void *ctx, brisk_loop *l, uint64_t now)
{
    struct peer *p = ctx;
    (void)l;
    if (p->udp == 1) {
        if (!p->udp_stop_at)
            return BRISK_TIME_NONE;
        if (now >= p->udp_stop_at) {
            finish(p, now);
            return BRISK_TIME_NONE;
        }
        return p->udp_stop_at;
    }
    if (p->udp_done)
        return BRISK_TIME_NONE;
    if (!p->resolved) {
        uint64_t wait = until_ready(p, now);
        if (wait)
            return wait;
        int err;
        p->u = brisk_udp_socket(p->st, &err);
        if (!p->u || (err = brisk_udp_connect(p->u, &p->dst, p->dst_port)) != BRISK_OK) {
            p->error = err;
            p->udp_done = 1;
            finish(p, now);
            return BRISK_TIME_NONE;
        }
        brisk_udp_set_callback(p->u, on_udp, p);
        p->t_start = now;
        udp_client_send(p, now);
        return now + UDP_RESEND_NS;
    }
    if (now - p->udp_sent_at < UDP_RESEND_NS)
        return p->udp_sent_at + UDP_RESEND_NS;
    if (p->udp_resends++ == UDP_RESENDS) {
        p->error = BRISK_ERR_TIMEDOUT;
        p->udp_done = 1;
        finish(p, now);
        return BRISK_TIME_NONE;
    }
    udp_client_send(p, now);
    return now + UDP_RESEND_NS;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The UDP roles' result line and exit status: 0 when the role ended as expected. */
static int udp_report(struct peer *p, int rc, struct ctl_server *ctl)
{
    const char *result;
    if (rc == BRISK_ERR_TIMEDOUT)
        result = "timeout";
    else if (brisk_loop_signal(p->loop))
        result = "signal";
    else if (p->error == BRISK_ERR_CONNREFUSED)
        result = "refused";
    else if (p->error)
        result = "error";
    else
        result = "done";
    struct brisk_counters c;
    brisk_stack_get_counters(p->st, &c);
    printf("side=brisk mode=%s result=%s err=%s udp_tx=%llu udp_rx=%llu udp_bad=%llu udp_resends=%llu "
           "udp_from_v4=%llu udp_from_v6=%llu tx_bytes=%llu rx_bytes=%llu UdpInDatagrams=%llu "
           "Udp6InDatagrams=%llu UdpOutDatagrams=%llu Udp6OutDatagrams=%llu UdpInErrors=%llu "
           "Udp6InErrors=%llu IcmpInDestUnreachs=%llu Icmp6InDestUnreachs=%llu\n",
           p->udp == 1 ? "udp-echo" : "udp-client", result, p->error ? brisk_strerror(p->error) : "none",
           (unsigned long long)p->udp_tx, (unsigned long long)p->udp_rx, (unsigned long long)p->udp_bad,
           (unsigned long long)p->udp_resends, (unsigned long long)p->udp_v4, (unsigned long long)p->udp_v6,
           (unsigned long long)p->tx_off, (unsigned long long)p->rx.off, (unsigned long long)c.UdpInDatagrams,
           (unsigned long long)c.Udp6InDatagrams, (unsigned long long)c.UdpOutDatagrams,
           (unsigned long long)c.Udp6OutDatagrams, (unsigned long long)c.UdpInErrors,
           (unsigned long long)c.Udp6InErrors, (unsigned long long)c.IcmpInDestUnreachs,
           (unsigned long long)c.Icmp6InDestUnreachs);
    fflush(stdout);
    int ok;
    if (p->expect_refused)
        ok = p->error == BRISK_ERR_CONNREFUSED && p->udp_rx == 0;
    else if (p->udp == 1)
        ok = p->udp_done && !p->udp_bad && p->udp_tx == p->count;
    else
        ok = p->udp_done && !p->error && !p->udp_bad && p->udp_rx == p->count;
    if (p->u)
        brisk_udp_close(p->u);
    ctl_server_free(ctl);
    brisk_stack_free(p->st);
    brisk_tap_close(p->tap);
    brisk_loop_free(p->loop);
    free(p->buf);
    free(p->echo);
    free(p->lat);
    pattern_free(&p->pat);
    return ok ? 0 : 1;
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: brisk-peer --tap NAME --ip ADDR/PREFIX [--ip6 ADDR/PREFIX] [--gw ADDR] [--gw6 ADDR]\n"
        "         (--listen PORT | --connect ADDR:PORT | --connect [IPV6]:PORT |\n"
        "          --udp-echo PORT | --udp-client ADDR:PORT | --udp-client [IPV6]:PORT)\n"
        "         [--mode source|sink|echo|rr|rst] [--bytes N] [--size N] [--count N] [--seed N]\n"
        "         [--nodelay] [--gso 0|1] [--mtu N] [--loss P] [--rx-loss P] [--txc-delay T]\n"
        "         [--tx-ring N] [--busy-poll T] [--connect-delay T] [--timeout T]\n"
        "         [--expect eof|reset|refused]\n"
        "         [--profile NAME] [--set name=value]... [--ctl PATH]\n");
}

static int bad(const char *what, const char *val)
{
    fprintf(stderr, "brisk-peer: invalid %s: '%s'\n", what, val ? val : "(missing)");
    usage();
    return 2;
}

int main(int argc, char **argv)
{
    struct peer P;
    memset(&P, 0, sizeof(P));
    struct peer *p = &P;
    p->mode = M_SINK;
    p->seed = 1;
    p->size = 1;
    p->count = 1000;
    p->timeout_ns = 120 * BRISK_NSEC_PER_SEC;
    struct brisk_tap_config tc;
    brisk_tap_config_default(&tc);
    tc.ip = 0;
    struct brisk_settings set;
    brisk_settings_default(&set);
    int have_ip = 0, have_role = 0;
    const char *ctl_path = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        double d;
        if (!strcmp(a, "--nodelay")) {
            p->nodelay = 1;
            continue;
        }
        if (!v)
            return bad(a, NULL);
        i++;
        if (!strcmp(a, "--tap")) {
            if (strlen(v) >= sizeof(tc.ifname))
                return bad(a, v);
            snprintf(tc.ifname, sizeof(tc.ifname), "%s", v);
        } else if (!strcmp(a, "--ip")) {
            if (brisk_tap_parse_cidr(v, &tc.ip, &tc.prefix_len) != BRISK_OK)
                return bad(a, v);
            have_ip = 1;
        } else if (!strcmp(a, "--gw6")) {
            if (!v || brisk_addr_parse(v, &p->gw6) != BRISK_OK || p->gw6.family != BRISK_AF_INET6)
                return bad(a, v);
        } else if (!strcmp(a, "--gw")) {
            if (brisk_ip_parse(v, &tc.gateway) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--listen") || !strcmp(a, "--udp-echo")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u == 0 || u > 65535)
                return bad(a, v);
            p->listen_port = (int)u;
            p->udp = !strcmp(a, "--udp-echo");
            have_role++;
        } else if (!strcmp(a, "--connect") || !strcmp(a, "--udp-client")) {
            p->udp = !strcmp(a, "--udp-client") ? 2 : 0;
            /* ADDR:PORT, or [IPV6]:PORT */
            char host[BRISK_ADDR_STRLEN];
            const char *h = v, *c = strrchr(v, ':');
            size_t hl = c ? (size_t)(c - v) : 0;
            if (v[0] == '[' && c && c > v && c[-1] == ']') {
                h = v + 1;
                hl -= 2;
            }
            if (!c || hl == 0 || hl >= sizeof(host))
                return bad(a, v);
            memcpy(host, h, hl);
            host[hl] = '\0';
            if (brisk_addr_parse(host, &p->dst) != BRISK_OK || brisk_parse_uint(c + 1, &u) != BRISK_OK ||
                u == 0 || u > 65535 || (p->dst.family == BRISK_AF_INET6) != (v[0] == '['))
                return bad(a, v);
            p->dst_port = (uint16_t)u;
            have_role++;
        } else if (!strcmp(a, "--ip6")) {
            char host[BRISK_ADDR_STRLEN];
            const char *sl = v ? strchr(v, '/') : NULL;
            if (!sl || (size_t)(sl - v) >= sizeof(host))
                return bad(a, v);
            memcpy(host, v, (size_t)(sl - v));
            host[sl - v] = '\0';
            if (brisk_addr_parse(host, &p->ip6) != BRISK_OK || p->ip6.family != BRISK_AF_INET6 ||
                brisk_parse_uint(sl + 1, &u) != BRISK_OK || u > 128)
                return bad(a, v);
            p->ip6_prefix = (uint8_t)u;
        } else if (!strcmp(a, "--mode")) {
            static const char *names[] = {"source", "sink", "echo", "rr", "rst"};
            int m = -1;
            for (int k = 0; k < 5; k++)
                if (!strcmp(v, names[k]))
                    m = k;
            if (m < 0)
                return bad(a, v);
            p->mode = (enum mode)m;
        } else if (!strcmp(a, "--bytes")) {
            if (brisk_parse_size(v, &p->bytes) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--size")) {
            if (brisk_parse_size(v, &p->size) != BRISK_OK || p->size == 0 || p->size > 65536)
                return bad(a, v);
        } else if (!strcmp(a, "--count")) {
            if (brisk_parse_uint(v, &p->count) != BRISK_OK || p->count == 0 || p->count > MAX_RR)
                return bad(a, v);
        } else if (!strcmp(a, "--seed")) {
            if (brisk_parse_uint(v, &p->seed) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--gso")) {
            int b;
            if (brisk_parse_bool(v, &b) != BRISK_OK)
                return bad(a, v);
            tc.gso = b;
        } else if (!strcmp(a, "--mtu")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u < 68 || u > 65535)
                return bad(a, v);
            tc.mtu = (uint32_t)u;
        } else if (!strcmp(a, "--loss") || !strcmp(a, "--rx-loss")) {
            if (brisk_parse_prob(v, &d) != BRISK_OK)
                return bad(a, v);
            if (!strcmp(a, "--loss"))
                tc.fault.tx_loss = d;
            else
                tc.fault.rx_loss = d;
        } else if (!strcmp(a, "--tx-ring")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u == 0 || u > 65536)
                return bad(a, v);
            tc.tx_ring = (uint32_t)u;
        } else if (!strcmp(a, "--txc-delay")) {
            if (brisk_parse_time(v, &tc.txc_delay_ns) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--busy-poll")) {
            if (brisk_parse_time(v, &p->busy_poll_ns) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--connect-delay")) {
            if (brisk_parse_time(v, &p->connect_delay_ns) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--timeout")) {
            if (brisk_parse_time(v, &p->timeout_ns) != BRISK_OK || p->timeout_ns == 0)
                return bad(a, v);
        } else if (!strcmp(a, "--expect")) {
            if (strcmp(v, "eof") && strcmp(v, "reset") && strcmp(v, "refused"))
                return bad(a, v);
            p->expect_reset = !strcmp(v, "reset");
            p->expect_refused = !strcmp(v, "refused");
        } else if (!strcmp(a, "--ctl")) {
            if (!*v)
                return bad(a, v);
            ctl_path = v;
        } else if (!strcmp(a, "--profile")) {
            if (brisk_settings_apply_profile(&set, v) != BRISK_OK)
                return bad(a, v);
        } else if (!strcmp(a, "--set")) {
            int rc = brisk_settings_set(&set, v);
            if (rc != BRISK_OK) {
                fprintf(stderr, "brisk-peer: --set %s: %s\n", v, brisk_strerror(rc));
                return 2;
            }
        } else {
            return bad("option", a);
        }
    }
    if (!have_ip || have_role != 1)
        return bad("arguments",
                   "need --ip and exactly one of --listen / --connect / --udp-echo / --udp-client");
    if (p->mode == M_RR && p->listen_port)
        return bad("mode", "rr is a client role (use --connect)");
    if (p->expect_refused && p->udp != 2)
        return bad("--expect", "refused is --udp-client's");
    if (p->udp && p->size > 65507)
        return bad("--size", "a UDP datagram holds at most 65507 bytes");
    tc.fault.seed = p->seed;

    p->buf = malloc(BUF_LEN);
    p->echo = malloc(BUF_LEN);
    p->lat = calloc(MAX_RR, sizeof(uint64_t));
    if (!p->buf || pattern_init(&p->pat, p->seed) < 0) {
        fprintf(stderr, "brisk-peer: out of memory\n");
        return 1;
    }
    pattern_hash_init(&p->txh);
    pattern_rx_init(&p->rx);
    int err;
    p->st = brisk_stack_new(&set);
    p->loop = p->st ? brisk_loop_new(p->st, &err) : NULL;
    if (!p->buf || !p->echo || !p->lat || !p->loop) {
        fprintf(stderr, "brisk-peer: out of memory\n");
        return 1;
    }
    brisk_loop_stop_on_signals(p->loop);
    brisk_loop_set_busy_poll(p->loop, p->busy_poll_ns);
    char why[160];
    p->tap = brisk_tap_open(p->loop, &tc, &err, why, sizeof(why));
    if (!p->tap) {
        fprintf(stderr, "brisk-peer: cannot open the TAP: %s\n", why);
        return err == BRISK_ERR_INVAL ? 77 : 1;
    }
    fprintf(stderr, "tap %s\n", brisk_tap_ifname(p->tap));
    struct ctl_server *ctl = NULL;
    if (ctl_path && !(ctl = ctl_server_new(p->loop, p->tap, ctl_path, "brisk-peer", why, sizeof(why)))) {
        fprintf(stderr, "brisk-peer: --ctl: %s\n", why);
        return 1;
    }
    if (p->ip6.family && (err = brisk_netdev_add_addr(brisk_tap_netdev(p->tap), &p->ip6, p->ip6_prefix)) != BRISK_OK) {
        fprintf(stderr, "brisk-peer: --ip6: %s\n", brisk_strerror(err));
        return 1;
    }
    if (p->gw6.family && (err = brisk_stack_set_gateway6(p->st, brisk_tap_netdev(p->tap), &p->gw6)) != BRISK_OK) {
        fprintf(stderr, "brisk-peer: --gw6: %s\n", brisk_strerror(err));
        return 1;
    }
    uint64_t now = brisk_loop_clock();
    if (p->udp == 1) {
        /* With an IPv6 address, on :: (either family, as a Linux IPv6 socket); else on 0.0.0.0. */
        struct brisk_addr any = brisk_addr_v4(0);
        if (p->ip6.family)
            brisk_addr_parse("::", &any);
        p->u = brisk_udp_socket(p->st, &err);
        if (!p->u || (err = brisk_udp_bind(p->u, &any, (uint16_t)p->listen_port)) != BRISK_OK) {
            fprintf(stderr, "brisk-peer: --udp-echo: %s\n", brisk_strerror(err));
            return 1;
        }
        brisk_udp_set_callback(p->u, on_udp, p);
    } else if (p->listen_port) {
        /* With an IPv6 address, on :: (either family, as a Linux IPv6 socket); else on 0.0.0.0. */
        struct brisk_addr any = brisk_addr_v4(0);
        if (p->ip6.family)
            brisk_addr_parse("::", &any);
        p->ls = brisk_socket(p->st, &err);
        if (!p->ls || (err = brisk_bind_addr(p->ls, &any, (uint16_t)p->listen_port)) != BRISK_OK ||
            (err = brisk_listen(p->ls, 4)) != BRISK_OK) {
            fprintf(stderr, "brisk-peer: listen: %s\n", brisk_strerror(err));
            return 1;
        }
        brisk_sock_set_callback(p->ls, on_listener, p);
    }
    p->hook = brisk_loop_add_hook(p->loop, p->udp ? on_udp_hook : on_hook, p);
    int rc = brisk_loop_run(p->loop, now + p->timeout_ns);
    now = brisk_loop_clock();
    if (p->udp)
        return udp_report(p, rc, ctl);

    const char *result;
    if (rc == BRISK_ERR_TIMEDOUT)
        result = "timeout";
    else if (brisk_loop_signal(p->loop))
        result = "signal";
    else if (p->error == BRISK_ERR_RESET)
        result = "reset";
    else if (p->error)
        result = "error";
    else if (p->rx_eof)
        result = "eof";
    else
        result = "closed";

    struct brisk_conn_info ci;
    memset(&ci, 0, sizeof(ci));
    if (p->s)
        brisk_conn_info(p->s, &ci);
    double secs = p->t_end > p->t_start ? (double)(p->t_end - p->t_start) / 1e9 : 0;
    uint64_t moved = p->mode == M_SINK ? p->rx.off : p->tx_off;
    printf("side=brisk mode=%d result=%s err=%s tx_bytes=%llu tx_hash=%016llx rx_bytes=%llu "
           "rx_hash=%016llx rx_bad=%d rx_bad_at=%llu secs=%.6f mbps=%.1f mss=%u ts=%u sack=%u ws=%u "
           "snd_wscale=%u rcv_wscale=%u retrans=%llu rto=%llu",
           (int)p->mode, result, p->error ? brisk_strerror(p->error) : "none", (unsigned long long)p->tx_off,
           (unsigned long long)pattern_hash_final(&p->txh), (unsigned long long)p->rx.off,
           (unsigned long long)pattern_hash_final(&p->rx.h), p->rx.bad, (unsigned long long)p->rx.bad_at,
           secs, secs > 0 ? (double)moved * 8 / secs / 1e6 : 0.0, ci.mss, ci.ts_ok, ci.sack_ok, ci.ws_ok,
           ci.snd_wscale, ci.rcv_wscale, (unsigned long long)ci.retransmits,
           (unsigned long long)ci.rto_count);
    if (p->mode == M_RR && p->rr_done) {
        uint64_t n = p->rr_done < MAX_RR ? p->rr_done : MAX_RR;
        qsort(p->lat, n, sizeof(uint64_t), cmp_u64);
        printf(" rr=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f", (unsigned long long)p->rr_done,
               (double)p->lat[n / 2] / 1e3, (double)p->lat[n * 9 / 10] / 1e3,
               (double)p->lat[n * 99 / 100] / 1e3);
    }
    if (p->s) { /* where the sender's time went (docs/design.md principle 5), in ms per hold reason */
        printf(" srtt_us=%.1f cwnd=%u pacing_mbps=%.1f holds=", (double)ci.srtt_ns / 1e3, ci.cwnd,
               (double)ci.pacing_rate * 8 / 1e6);
        for (int h = 1; h < BRISK_HOLD_COUNT; h++)
            printf("%s%s:%.0f", h > 1 ? "," : "", brisk_hold_name(h), (double)ci.hold_ns[h] / 1e6);
    }
    struct brisk_tap_stats ts;
    brisk_tap_get_stats(p->tap, &ts);
    struct brisk_netdev_stats ns;
    brisk_netdev_get_stats(brisk_tap_netdev(p->tap), &ns);
    struct brisk_loop_stats ls;
    brisk_loop_get_stats(p->loop, &ls);
    struct brisk_counters sc;
    brisk_stack_get_counters(p->st, &sc);
    printf(" pmtu_lowered=%llu timeouts=%llu", (unsigned long long)sc.PmtuLowered,
           (unsigned long long)sc.TCPTimeouts);
    printf(" loop_iter=%llu loop_timer=%llu loop_fd=%llu loop_arms=%llu", (unsigned long long)ls.iterations,
           (unsigned long long)ls.wakeups_timer, (unsigned long long)ls.wakeups_fd,
           (unsigned long long)ls.timer_arms);
    printf(" tap_tx=%llu tap_tx_gso=%llu tap_rx=%llu tap_rx_gso=%llu tap_rx_batches=%llu gro_segs=%llu "
           "gro_merged=%llu tap_eagain=%llu tap_busy=%llu tap_drops=%llu txc_latency_us=%.1f\n",
           (unsigned long long)ts.tx_frames, (unsigned long long)ts.tx_gso_frames,
           (unsigned long long)ts.rx_frames, (unsigned long long)ts.rx_gso_frames,
           (unsigned long long)ts.rx_batches, (unsigned long long)ns.rx_gro_segs,
           (unsigned long long)ns.rx_gro_merged, (unsigned long long)ts.tx_eagain,
           (unsigned long long)ts.tx_busy, (unsigned long long)(ts.tx_fault_drops + ts.rx_fault_drops),
           (double)ns.tx_done_latency_ns / 1e3);
    fflush(stdout);

    int ok;
    switch (p->expect_reset ? M_RST + 1 : (int)p->mode) {
    case M_RST:
        ok = p->closed && !p->error;
        break;
    case M_RR:
        ok = p->rr_done == p->count && !p->error && !p->rx.bad;
        break;
    case M_SINK:
        ok = p->rx_eof && !p->error && !p->rx.bad && p->closed;
        break;
    case M_RST + 1: /* --expect reset: the peer reset the connection after sending good data */
        ok = p->error == BRISK_ERR_RESET && !p->rx.bad;
        break;
    default:
        ok = p->rx_eof && !p->error && !p->rx.bad && p->closed && p->tx_off >= p->bytes;
        break;
    }
    if (p->s)
        brisk_close(p->s, now);
    ctl_server_free(ctl);
    brisk_stack_free(p->st);
    brisk_tap_close(p->tap);
    brisk_loop_free(p->loop);
    free(p->buf);
    free(p->echo);
    free(p->lat);
    pattern_free(&p->pat);
    return ok ? 0 : 1;
}
