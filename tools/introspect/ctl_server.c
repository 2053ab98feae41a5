/*
 * ctl_server.c — the control socket on a brisk_loop (ctl.h): an AF_UNIX stream listener and up to
 * CTL_CLIENTS connections, each a non-blocking descriptor watched by the loop, so every request is answered
 * on the stack's own thread between two events: the stack is never read while it changes, and no lock is
 * needed.
 *
 * Bounds. A connection holds one request line (CTL_REQ_MAX) and one answer being written. While an answer
 * is not fully written the connection is watched for writability only: a client that does not read stops
 * being read (its further requests wait in its socket buffer) and costs the process nothing but its answer.
 * A line longer than CTL_REQ_MAX gets an error answer, then the connection is closed; a connection beyond
 * CTL_CLIENTS takes the slot of the idlest one if that has been idle for CTL_IDLE_NS, else it gets a "busy"
 * answer and is closed. Writes use MSG_NOSIGNAL: a client that went away is a
 * closed connection, never a SIGPIPE.
 *
 * The socket file is made with mode 0600 (umask around bind, then chmod): the stack's addresses and
 * counters are for its owner. A socket file left by a process that died is replaced (connect() is refused
 * on it); one a live process answers on, or a file that is not a socket, is left alone and refused.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "brisk/tap.h"
#include "introspect/ctl.h"

struct ctl_conn {
    int fd; /* -1: free slot */
    char in[CTL_REQ_MAX];
    size_t inlen;
    char *out; /* the answer being written, NULL when none */
    size_t outlen, outoff;
    int close_after; /* close once `out` is written (overlong line) */
    int eof;         /* the client shut its side: answer what is buffered, then close */
    uint64_t active; /* when it was accepted or last had readiness: the idlest is evicted for a new one */
};

struct ctl_server {
    brisk_loop *l;
    brisk_tap *tap;
    int fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct ctl_source src;
    struct ctl_conn conns[CTL_CLIENTS];
};

static void conn_close(struct ctl_server *s, struct ctl_conn *c)
{
    brisk_loop_unwatch_fd(s->l, c->fd);
    close(c->fd);
    free(c->out);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

/* Writes what the socket takes of the pending answer. Returns 0 when it is all written, 1 when some is
 * left, -1 when the connection failed. */
static int conn_flush(struct ctl_conn *c)
{
    while (c->out && c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
        }
        c->outoff += (size_t)n;
    }
    free(c->out);
    c->out = NULL;
    c->outlen = c->outoff = 0;
    return 0;
}

static void conn_queue(struct ctl_conn *c, char *line)
{
    c->out = line;
    c->outlen = line ? strlen(line) : 0;
    c->outoff = 0;
}

/* Answers the requests already buffered, one at a time: stops at the first answer the socket does not take
 * whole. Returns -1 when the connection is to be closed. */
static int conn_serve(struct ctl_server *s, struct ctl_conn *c, uint64_t now)
{
    for (;;) {
        int f = conn_flush(c);
        if (f < 0)
            return -1;
        if (f > 0) {
            brisk_loop_modify_fd(s->l, c->fd, BRISK_LOOP_OUT);
            return 0;
        }
        if (c->close_after)
            return -1;
        if (c->eof && !memchr(c->in, '\n', c->inlen))
            return -1;
        char *nl = memchr(c->in, '\n', c->inlen);
        if (!nl) {
            if (c->inlen == sizeof(c->in)) {
                char msg[64];
                snprintf(msg, sizeof(msg), "request longer than %d bytes", CTL_REQ_MAX - 1);
                char *line = ctl_error(&s->src, now, msg);
                conn_queue(c, line);
                c->close_after = 1;
                c->inlen = 0;
                continue;
            }
            brisk_loop_modify_fd(s->l, c->fd, BRISK_LOOP_IN);
            return 0;
        }
        size_t len = (size_t)(nl - c->in);
        char *line = ctl_handle(&s->src, c->in, len, now);
        memmove(c->in, nl + 1, c->inlen - len - 1);
        c->inlen -= len + 1;
        if (!line)
            return -1; /* out of memory: drop the connection, keep serving */
        conn_queue(c, line);
    }
}

static void on_conn(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)l;
    struct ctl_server *s = ctx;
    struct ctl_conn *c = NULL;
    for (int i = 0; i < CTL_CLIENTS; i++)
        if (s->conns[i].fd == fd)
            c = &s->conns[i];
    if (!c)
        return;
    c->active = now;
    if ((ready & BRISK_LOOP_IN) && !c->out && !c->eof) {
        ssize_t n = recv(fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_close(s, c);
            return;
        }
        if (n == 0)
            c->eof = 1;
        if (n > 0)
            c->inlen += (size_t)n;
    } else if ((ready & BRISK_LOOP_ERR) && !(ready & BRISK_LOOP_OUT)) {
        conn_close(s, c);
        return;
    }
    if (conn_serve(s, c, now) < 0)
        conn_close(s, c);
}

/* A free slot; when there is none, the slot of the connection that has been idle longest if that is more than
 * CTL_IDLE_NS, closed: a client that connects and then does nothing (or hangs) cannot lock the tools out. */
static struct ctl_conn *conn_slot(struct ctl_server *s, uint64_t now)
{
    struct ctl_conn *idlest = NULL;
    for (int i = 0; i < CTL_CLIENTS; i++) {
        struct ctl_conn *c = &s->conns[i];
        if (c->fd < 0)
            return c;
        if (!idlest || c->active < idlest->active)
            idlest = c;
    }
    if (idlest && now - idlest->active > CTL_IDLE_NS) {
        conn_close(s, idlest);
        return idlest;
    }
    return NULL;
}

static void on_listen(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)ready;
    struct ctl_server *s = ctx;
    for (int k = 0; k < 4; k++) { /* a few per iteration: the stack's own work comes first */
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return;
        struct ctl_conn *c = conn_slot(s, now);
        if (!c || brisk_loop_watch_fd(l, cfd, BRISK_LOOP_IN, on_conn, s) != BRISK_OK) {
            static const char busy[] = "{\"ok\":false,\"error\":\"busy: too many control connections\"}\n";
            ssize_t w = send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(cfd);
            continue;
        }
        c->fd = cfd;
        c->active = now;
    }
}

static void add_driver_stats(void *ctx, json_t *m)
{
    struct ctl_server *s = ctx;
    struct brisk_loop_stats ls;
    brisk_loop_get_stats(s->l, &ls);
    const struct {
        const char *name;
        uint64_t v;
    } loop[] = {{"LoopIterations", ls.iterations},
                {"LoopWakeupsFd", ls.wakeups_fd},
                {"LoopWakeupsTimer", ls.wakeups_timer},
                {"LoopPolls", ls.polls},
                {"LoopTimerArms", ls.timer_arms}};
    for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
        json_object_set_new(m, loop[i].name, json_integer((json_int_t)loop[i].v));
    if (!s->tap)
        return;
    struct brisk_tap_stats t;
    brisk_tap_get_stats(s->tap, &t);
    const struct {
        const char *name;
        uint64_t v;
    } tap[] = {
        {"TapRxFrames", t.rx_frames},
        {"TapRxBytes", t.rx_bytes},
        {"TapRxGsoFrames", t.rx_gso_frames},
        {"TapRxCsumValid", t.rx_csum_valid},
        {"TapRxBatches", t.rx_batches},
        {"TapRxErrors", t.rx_errors},
        {"TapRxFaultDrops", t.rx_fault_drops},
        {"TapTxFrames", t.tx_frames},
        {"TapTxBytes", t.tx_bytes},
        {"TapTxGsoFrames", t.tx_gso_frames},
        {"TapTxEagain", t.tx_eagain},
        {"TapTxBusy", t.tx_busy},
        {"TapTxErrors", t.tx_errors},
        {"TapTxFaultDrops", t.tx_fault_drops},
        {"TapTxCompletions", t.tx_completions},
    };
    for (size_t i = 0; i < sizeof(tap) / sizeof(tap[0]); i++)
        json_object_set_new(m, tap[i].name, json_integer((json_int_t)tap[i].v));
}

static void why_set(char *why, size_t n, const char *fmt, const char *a, const char *b)
{
    if (why && n)
        snprintf(why, n, fmt, a, b);
}

/* Binds fd to path with mode 0600; replaces a stale socket file. Returns 0 or -1 with why. */
static int bind_path(int fd, const char *path, char *why, size_t why_len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, path, strlen(path) + 1);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode)) {
            why_set(why, why_len, "%s exists and is not a socket%s", path, "");
            return -1;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            why_set(why, why_len, "%s is in use by a running process%s", path, "");
            return -1;
        }
        unlink(path); /* left by a process that died */
    }
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    umask(old);
    if (rc < 0 || chmod(path, 0600) < 0) {
        why_set(why, why_len, "cannot bind %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

struct ctl_server *ctl_server_new(brisk_loop *l, struct brisk_tap *tap, const char *path, const char *program,
                                  char *why, size_t why_len)
{
    struct ctl_server *s = calloc(1, sizeof(*s));
    if (!s) {
        why_set(why, why_len, "out of memory%s%s", "", "");
        return NULL;
    }
    if (!path || !path[0] || strlen(path) >= sizeof(s->path)) {
        why_set(why, why_len, "control socket path must be 1 ... %s bytes%s", "107", "");
        free(s);
        return NULL;
    }
    s->l = l;
    s->tap = tap;
    s->fd = -1;
    for (int i = 0; i < CTL_CLIENTS; i++)
        s->conns[i].fd = -1;
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        why_set(why, why_len, "socket: %s%s", strerror(errno), "");
        free(s);
        return NULL;
    }
    if (bind_path(s->fd, path, why, why_len) < 0) {
        close(s->fd);
        free(s);
        return NULL;
    }
    snprintf(s->path, sizeof(s->path), "%s", path);
    if (listen(s->fd, CTL_CLIENTS) < 0 ||
        brisk_loop_watch_fd(l, s->fd, BRISK_LOOP_IN, on_listen, s) != BRISK_OK) {
        why_set(why, why_len, "cannot listen on %s: %s", path, strerror(errno));
        unlink(s->path);
        close(s->fd);
        free(s);
        return NULL;
    }
    s->src = (struct ctl_source){.st = brisk_loop_stack(l),
                                 .program = program,
                                 .pid = (uint64_t)getpid(),
                                 .started_ns = brisk_loop_clock(),
                                 .extra = add_driver_stats,
                                 .extra_ctx = s};
    return s;
}

void ctl_server_free(struct ctl_server *s)
{
    if (!s)
        return;
    for (int i = 0; i < CTL_CLIENTS; i++)
        if (s->conns[i].fd >= 0)
            conn_close(s, &s->conns[i]);
    brisk_loop_unwatch_fd(s->l, s->fd);
    close(s->fd);
    unlink(s->path);
    free(s);
}
