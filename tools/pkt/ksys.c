/*
 * ksys.c — a script's system calls made for real, on the kernel's own descriptors, on a second thread.
 *
 * Each call is prepared on the main thread: its arguments are evaluated by call.c exactly as for the virtual
 * backend (a script fd becomes the live descriptor it was mapped to, "..." the script's default address and
 * port, an iovec list its total length, payloads zeros), into a struct kop naming the function that makes the
 * call. The worker thread makes it and notes when it returned; the main thread then checks what the call
 * filled in (getsockopt's value, poll's revents, epoll_wait's events — call.c's checks), the return time
 * (sys_check_end) and the result and errno (sys_finish, which maps a returned descriptor to the script's
 * number). The constants a script names are Linux's own (sym.c), so they are passed through unchanged, and an
 * option or flag the virtual backend would call unsupported is simply handed to the kernel.
 *
 * Blocking follows packetdrill. A call written start...end is handed over and the script moves on once the
 * worker sleeps inside the kernel (its /proc state is 'S') or the call returns; its outcome is checked when
 * it returns, against `end`. A call written without "..." must return within the tolerance of its start:
 * the main thread waits that long (reading the wire meanwhile), then fails the script if it still runs.
 * Another call while a start...end call runs waits for it up to a second, as packetdrill's does.
 *
 * %{ }% blocks read getsockopt(TCP_INFO) of the script's connection — the most recently mapped socket that is
 * not listening — under the same tcpi_* names as the virtual backend (run.c), plus a few only the kernel has
 * (tcpi_rcv_mss, tcpi_rcv_ssthresh, tcpi_rcv_space, tcpi_rcv_rtt, tcpi_reordering, tcpi_delivered,
 * tcpi_data_segs_in, tcpi_data_segs_out, tcpi_bytes_retrans, tcpi_dsack_dups).
 */
#define _GNU_SOURCE /* unshare, ppoll, accept4, epoll_create1 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pkt/kern.h"

#ifndef SIOCOUTQNSD
#define SIOCOUTQNSD 0x894B
#endif
/* Linux's TCP states as tcp_info reports them (include/net/tcp_states.h, not in the UAPI headers). */
#define LINUX_TCP_CLOSE  7
#define LINUX_TCP_LISTEN 10

/* How long a start...end call is given to start sleeping in the kernel before the script moves on anyway. */
#define KSYS_SLEEP_WAIT_NS BRISK_NSEC_PER_SEC
/* The slice the main thread waits in while it watches for that. */
#define KSYS_SLICE_NS (100 * 1000)

/* ---- what the worker runs ---- */

static int64_t k_socket(struct kop *o)
{
    int fd = socket((int)o->a[0], (int)o->a[1], (int)o->a[2]);
    if (fd >= 0 && o->a[3]) {
        /* The namespace's default congestion control (kernel.c: kern_baseline), which the kernel may not let
         * the namespace default to; a failure leaves the kernel's own default. */
        int e = errno;
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->opt.name, (socklen_t)strlen(o->opt.name));
        errno = e;
    }
    return fd;
}

static int64_t k_bind(struct kop *o)
{
    return bind((int)o->a[0], (struct sockaddr *)&o->sa, sizeof(o->sa));
}

static int64_t k_listen(struct kop *o)
{
    return listen((int)o->a[0], (int)o->a[1]);
}

static int64_t k_accept(struct kop *o)
{
    return accept4((int)o->a[0], NULL, NULL, (int)o->a[1]);
}

static int64_t k_connect(struct kop *o)
{
    return connect((int)o->a[0], (struct sockaddr *)&o->sa, sizeof(o->sa));
}

static int64_t k_write(struct kop *o)
{
    return write((int)o->a[0], o->buf, o->len);
}

static int64_t k_send(struct kop *o)
{
    return send((int)o->a[0], o->buf, o->len, (int)o->a[1]);
}

static int64_t k_writev(struct kop *o)
{
    struct iovec iov = {.iov_base = o->buf, .iov_len = o->len};
    return writev((int)o->a[0], &iov, 1);
}

static int64_t k_sendmsg(struct kop *o)
{
    struct iovec iov = {.iov_base = o->buf, .iov_len = o->len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    return sendmsg((int)o->a[0], &m, (int)o->a[1]);
}

static int64_t k_read(struct kop *o)
{
    return read((int)o->a[0], o->buf, o->len);
}

static int64_t k_recv(struct kop *o)
{
    return recv((int)o->a[0], o->buf, o->len, (int)o->a[1]);
}

static int64_t k_readv(struct kop *o)
{
    struct iovec iov = {.iov_base = o->buf, .iov_len = o->len};
    return readv((int)o->a[0], &iov, 1);
}

static int64_t k_recvmsg(struct kop *o)
{
    struct iovec iov = {.iov_base = o->buf, .iov_len = o->len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    return recvmsg((int)o->a[0], &m, (int)o->a[1]);
}

static int64_t k_setsockopt(struct kop *o)
{
    return setsockopt((int)o->a[0], (int)o->a[1], (int)o->a[2], &o->opt, o->optlen);
}

static int64_t k_getsockopt(struct kop *o)
{
    return getsockopt((int)o->a[0], (int)o->a[1], (int)o->a[2], &o->opt, &o->optlen);
}

static int64_t k_fcntl(struct kop *o)
{
    return fcntl((int)o->a[0], (int)o->a[1], o->a[2]);
}

static int64_t k_ioctl(struct kop *o)
{
    return ioctl((int)o->a[0], (unsigned long)o->a[1], &o->opt.i);
}

static int64_t k_shutdown(struct kop *o)
{
    return shutdown((int)o->a[0], (int)o->a[1]);
}

static int64_t k_close(struct kop *o)
{
    return close((int)o->a[0]);
}

static int64_t k_poll(struct kop *o)
{
    return poll(o->pfd, (nfds_t)o->a[0], (int)o->a[1]);
}

static int64_t k_epoll_create(struct kop *o)
{
    return o->a[1] ? epoll_create1((int)o->a[0]) : epoll_create((int)o->a[0]);
}

static int64_t k_epoll_ctl(struct kop *o)
{
    return epoll_ctl((int)o->a[0], (int)o->a[1], (int)o->a[2], o->a[1] == EPOLL_CTL_DEL ? NULL : &o->eev[0]);
}

static int64_t k_epoll_wait(struct kop *o)
{
    return epoll_wait((int)o->a[0], o->eev, (int)o->a[1], (int)o->a[2]);
}

static void *worker(void *arg)
{
    struct kern *k = arg;
    pthread_mutex_lock(&k->mu);
    k->tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&k->cv);
    for (;;) {
        while (k->state != KC_QUEUED && k->state != KC_EXIT)
            pthread_cond_wait(&k->cv, &k->mu);
        if (k->state == KC_EXIT)
            break;
        k->state = KC_RUNNING;
        k->in_call = 1;
        pthread_mutex_unlock(&k->mu);
        errno = 0;
        int64_t ret = k->op.fn(&k->op);
        int e = errno;
        uint64_t end = kern_mono();
        pthread_mutex_lock(&k->mu);
        k->op.ret = ret;
        k->op.err = ret < 0 ? e : 0;
        k->op.end_ns = end;
        k->in_call = 0;
        k->state = KC_DONE;
        uint64_t one = 1;
        ssize_t w = write(k->wake, &one, sizeof(one));
        (void)w;
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Whether the worker is asleep inside its call (packetdrill's test for "the call blocks"). */
static int worker_sleeping(struct kern *k)
{
    pthread_mutex_lock(&k->mu);
    int in = k->in_call && k->state == KC_RUNNING;
    pid_t tid = k->tid;
    pthread_mutex_unlock(&k->mu);
    if (!in)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* "tid (comm) S ..." */
    return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

int ksys_init(struct run *r)
{
    struct kern *k = r->kern;
    for (int i = 0; i < RUN_FDS; i++)
        r->script_fd[i] = -1;
    if (pthread_mutex_init(&k->mu, NULL) != 0 || pthread_cond_init(&k->cv, NULL) != 0)
        return run_fail(r, PKT_FAIL, NULL, "cannot make the system-call thread's lock");
    k->state = KC_IDLE;
    if (pthread_create(&k->thread, NULL, worker, k) != 0)
        return run_fail(r, PKT_FAIL, NULL, "cannot start the system-call thread");
    k->have_thread = 1;
    pthread_mutex_lock(&k->mu);
    while (k->tid == 0)
        pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
    return 0;
}

void ksys_free(struct run *r)
{
    struct kern *k = r->kern;
    if (!k->have_thread)
        return;
    pthread_mutex_lock(&k->mu);
    int idle = k->state == KC_IDLE || k->state == KC_DONE;
    if (idle) {
        k->state = KC_EXIT;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    if (!idle)
        return; /* stuck in the kernel: the child's exit ends it */
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    k->have_thread = 0;
    free(k->op.buf);
    k->op.buf = NULL;
}

/* ---- preparing each call (main thread) ---- */

typedef int (*prep_fn)(struct run *r, const struct pkt_event *ev, struct kop *o);
typedef int (*post_fn)(struct run *r, const struct pkt_event *ev, struct kop *o);

static int p_socket(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int64_t dom, type, proto;
    if (sys_need_args(r, ev, 3) < 0)
        return -1;
    if (sys_arg(ev, 0)->kind == EX_ELLIPSIS)
        dom = AF_INET; /* packetdrill: the family of --ip_version */
    else if (sys_arg_int(r, ev, 0, &dom) < 0)
        return -1;
    if (sys_arg_int(r, ev, 1, &type) < 0)
        return -1;
    if (sys_arg(ev, 2)->kind == EX_ELLIPSIS)
        proto = IPPROTO_TCP;
    else if (sys_arg_int(r, ev, 2, &proto) < 0)
        return -1;
    o->a[0] = (long)dom;
    o->a[1] = (long)type;
    o->a[2] = (long)proto;
    int64_t base = type & ~(int64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC);
    o->a[3] =
        (dom == AF_INET || dom == AF_INET6) && base == SOCK_STREAM && (proto == IPPROTO_TCP || proto == 0);
    snprintf(o->opt.name, sizeof(o->opt.name), "%s", r->kern->cc);
    o->fn = k_socket;
    return 0;
}

static void sa_set(struct kop *o, uint32_t addr, uint16_t port)
{
    memset(&o->sa, 0, sizeof(o->sa));
    o->sa.sin_family = AF_INET;
    o->sa.sin_port = htons(port);
    o->sa.sin_addr.s_addr = htonl(addr);
}

static int p_bind(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    if (sys_need_args(r, ev, 3) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0)
        return -1;
    uint32_t addr = r->local_ip;
    uint16_t port = r->bind_port;
    if (sys_sockaddr_arg(r, ev, 1, &addr, &port) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = port;
    sa_set(o, addr, port);
    o->fn = k_bind;
    return 0;
}

static int post_bind(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    (void)ev;
    if (o->ret == 0 && o->a[1])
        r->bind_port = (uint16_t)o->a[1];
    return 0;
}

static int p_listen(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t backlog;
    if (sys_need_args(r, ev, 2) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &backlog) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = (long)backlog;
    o->fn = k_listen;
    return 0;
}

static int p_accept(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t flags = 0;
    if (sys_arg_fd(r, ev, 0, &fd) < 0)
        return -1;
    if (!strcmp(ev->sys.name, "accept4") && ev->sys.nargs == 4 && sys_arg_int(r, ev, 3, &flags) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = (long)flags;
    o->fn = k_accept;
    return 0;
}

/* Linux's TCP state of a descriptor (LINUX_TCP_CLOSE for a new socket), or -1 if it has none. */
static int tcp_state(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return -1;
    return ti.tcpi_state;
}

static int p_connect(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    if (sys_need_args(r, ev, 3) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0)
        return -1;
    uint32_t addr = r->remote_ip;
    uint16_t port = r->connect_port;
    if (sys_sockaddr_arg(r, ev, 1, &addr, &port) < 0)
        return -1;
    if (addr != r->remote_ip)
        return sys_unsup(r, ev, "connect to an address other than the script's remote address");
    if (tcp_state(fd) == LINUX_TCP_CLOSE) {
        /* The first connect of this socket: its SYN starts the script's connection (a second one on a
         * non-blocking socket only asks how it went). */
        r->connect_port = port;
        net_sut_connecting(r);
    }
    o->a[0] = fd;
    sa_set(o, addr, port);
    o->fn = k_connect;
    return 0;
}

static int p_write(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t len, flags;
    if (sys_arg_fd(r, ev, 0, &fd) < 0 || sys_out_len(r, ev, &len, &flags) < 0)
        return -1;
    if (len < 0 || len > SYS_IO_MAX)
        return sys_bad(r, ev, "payload length out of range");
    if (!(o->buf = calloc(1, len ? (size_t)len : 1)))
        return run_fail(r, PKT_FAIL, ev, "out of memory for a %" PRId64 "-byte payload", len);
    o->len = (size_t)len;
    o->a[0] = fd;
    o->a[1] = (long)flags;
    const char *n = ev->sys.name;
    o->fn = !strcmp(n, "write")     ? k_write
            : !strcmp(n, "writev")  ? k_writev
            : !strcmp(n, "sendmsg") ? k_sendmsg
                                    : k_send;
    return 0;
}

static int p_read(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t len = 0, flags = 0;
    const char *n = ev->sys.name;
    if (sys_arg_fd(r, ev, 0, &fd) < 0)
        return -1;
    if (!strcmp(n, "read") || !strcmp(n, "recv") || !strcmp(n, "recvfrom")) {
        if (sys_arg_int(r, ev, 2, &len) < 0)
            return -1;
        if (strcmp(n, "read") != 0 && ev->sys.nargs >= 4 && sys_arg_int(r, ev, 3, &flags) < 0)
            return -1;
    } else if (sys_out_len(r, ev, &len, &flags) < 0) {
        return -1;
    }
    if (len < 0 || len > SYS_IO_MAX)
        return sys_bad(r, ev, "length out of range");
    if (!(o->buf = malloc(len ? (size_t)len : 1)))
        return run_fail(r, PKT_FAIL, ev, "out of memory for a %" PRId64 "-byte buffer", len);
    o->len = (size_t)len;
    o->a[0] = fd;
    o->a[1] = (long)flags;
    o->fn = !strcmp(n, "read")      ? k_read
            : !strcmp(n, "readv")   ? k_readv
            : !strcmp(n, "recvmsg") ? k_recvmsg
                                    : k_recv;
    return 0;
}

static int p_setsockopt(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t level, name;
    if (sys_need_args(r, ev, 5) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &level) < 0 ||
        sys_arg_int(r, ev, 2, &name) < 0)
        return -1;
    const struct expr *val = sys_arg(ev, 3);
    o->a[0] = fd;
    o->a[1] = (long)level;
    o->a[2] = (long)name;
    o->fn = k_setsockopt;
    if (level == SOL_SOCKET && name == SO_LINGER) {
        if (val->kind != EX_STRUCT || val->nkids != 2)
            return sys_bad(r, ev, "expected {onoff=N, linger=N}");
        int64_t on, secs;
        const struct expr *a = val->kids[0], *b = val->kids[1];
        if (sys_eval_int(r, ev, a->kind == EX_ASSIGN ? a->kids[1] : a, &on) < 0 ||
            sys_eval_int(r, ev, b->kind == EX_ASSIGN ? b->kids[1] : b, &secs) < 0)
            return -1;
        o->opt.linger.l_onoff = (int)on;
        o->opt.linger.l_linger = (int)secs;
        o->optlen = sizeof(o->opt.linger);
        return 0;
    }
    if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
        if (val->kind != EX_STRING)
            return sys_bad(r, ev, "expected a string");
        snprintf(o->opt.name, sizeof(o->opt.name), "%s", val->text);
        o->optlen = (socklen_t)strlen(o->opt.name);
        return 0;
    }
    int64_t v;
    if (sys_opt_value(r, ev, &v) < 0)
        return -1;
    o->opt.i = (int)v;
    o->optlen = sizeof(o->opt.i);
    return 0;
}

static int p_getsockopt(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t level, name;
    if (sys_need_args(r, ev, 5) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &level) < 0 ||
        sys_arg_int(r, ev, 2, &name) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = (long)level;
    o->a[2] = (long)name;
    o->a[3] = level == IPPROTO_TCP && name == TCP_CONGESTION;
    o->optlen = o->a[3] ? (socklen_t)sizeof(o->opt.name) - 1 : (socklen_t)sizeof(o->opt.i);
    o->fn = k_getsockopt;
    return 0;
}

static int post_getsockopt(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    if (o->ret != 0)
        return 0;
    if (o->a[3])
        return sys_check_congestion(r, ev, sys_arg(ev, 3), o->opt.name);
    return sys_check_value(r, ev, "getsockopt", sys_arg(ev, 3), o->opt.i);
}

static int p_fcntl(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t cmd, v = 0;
    if (sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &cmd) < 0)
        return -1;
    if (ev->sys.nargs >= 3 && sys_arg_int(r, ev, 2, &v) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = (long)cmd;
    o->a[2] = (long)v;
    o->fn = k_fcntl;
    return 0;
}

static int p_ioctl(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t req, v = 0;
    if (sys_need_args(r, ev, 3) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &req) < 0)
        return -1;
    if (req == FIONBIO) {
        if (sys_arg_int(r, ev, 2, &v) < 0)
            return -1;
    } else if (req != FIONREAD && req != SIOCOUTQ && req != SIOCOUTQNSD) {
        return sys_unsup(r, ev, "this ioctl");
    }
    o->a[0] = fd;
    o->a[1] = (long)req;
    o->opt.i = (int)v;
    o->fn = k_ioctl;
    return 0;
}

static int post_ioctl(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    if (o->ret != 0 || o->a[1] == FIONBIO)
        return 0;
    return sys_check_value(r, ev, "ioctl", sys_arg(ev, 2), o->opt.i);
}

static int p_shutdown(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    int64_t how;
    if (sys_need_args(r, ev, 2) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0 || sys_arg_int(r, ev, 1, &how) < 0)
        return -1;
    o->a[0] = fd;
    o->a[1] = (long)how;
    o->fn = k_shutdown;
    return 0;
}

static int p_close(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int fd;
    if (sys_need_args(r, ev, 1) < 0 || sys_arg_fd(r, ev, 0, &fd) < 0)
        return -1;
    o->a[0] = fd;
    o->fn = k_close;
    return 0;
}

static int post_close(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    (void)ev;
    if (o->ret == 0)
        for (int i = 0; i < RUN_FDS; i++)
            if (r->script_fd[i] == (int)o->a[0])
                r->script_fd[i] = -1;
    return 0;
}

static int p_poll(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    const struct expr *list;
    int64_t timeout;
    if (sys_poll_args(r, ev, &list, &timeout) < 0)
        return -1;
    for (size_t k = 0; k < list->nkids; k++) {
        int64_t sfd, events;
        if (sys_poll_entry(r, ev, list->kids[k], &sfd, &events) < 0)
            return -1;
        o->pfd[k] = (struct pollfd){.fd = sys_live_fd(r, sfd), .events = (short)events};
    }
    o->a[0] = (long)list->nkids;
    o->a[1] = (long)timeout;
    o->fn = k_poll;
    return 0;
}

static int post_poll(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    if (o->ret < 0)
        return 0;
    unsigned got[SYS_POLL_MAX];
    for (long k = 0; k < o->a[0]; k++)
        got[k] = (unsigned short)o->pfd[k].revents;
    return sys_check_revents(r, ev, sys_arg(ev, 0), got);
}

static int p_epoll_create(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int64_t v = 1;
    if (ev->sys.nargs >= 1 && sys_arg_int(r, ev, 0, &v) < 0)
        return -1;
    o->a[0] = (long)v;
    o->a[1] = !strcmp(ev->sys.name, "epoll_create1");
    o->fn = k_epoll_create;
    return 0;
}

static int p_epoll_ctl(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int epfd, fd;
    int64_t op, events = 0, data = 0;
    if (sys_need_args(r, ev, 4) < 0 || sys_arg_fd(r, ev, 0, &epfd) < 0 || sys_arg_int(r, ev, 1, &op) < 0 ||
        sys_arg_fd(r, ev, 2, &fd) < 0)
        return -1;
    if (op != EPOLL_CTL_DEL && sys_epoll_event_arg(r, ev, sys_arg(ev, 3), &events, &data) < 0)
        return -1;
    o->eev[0].events = (uint32_t)events;
    o->eev[0].data.u64 = (uint64_t)data; /* the script's {fd=N}: epoll_wait reports N back */
    o->a[0] = epfd;
    o->a[1] = (long)op;
    o->a[2] = fd;
    o->fn = k_epoll_ctl;
    return 0;
}

static int p_epoll_wait(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    int epfd;
    int64_t maxev, timeout;
    if (sys_need_args(r, ev, 4) < 0 || sys_arg_fd(r, ev, 0, &epfd) < 0 || sys_arg_int(r, ev, 2, &maxev) < 0 ||
        sys_arg_int(r, ev, 3, &timeout) < 0)
        return -1;
    o->a[0] = epfd;
    o->a[1] = (long)(maxev > RUN_EPOLL_MAX ? RUN_EPOLL_MAX : maxev);
    o->a[2] = (long)timeout;
    o->fn = k_epoll_wait;
    return 0;
}

static int post_epoll_wait(struct run *r, const struct pkt_event *ev, struct kop *o)
{
    if (o->ret < 0)
        return 0;
    uint32_t gotev[RUN_EPOLL_MAX];
    uint64_t gotdata[RUN_EPOLL_MAX];
    for (int64_t i = 0; i < o->ret; i++) {
        gotev[i] = o->eev[i].events;
        gotdata[i] = o->eev[i].data.u64;
    }
    return sys_check_epoll(r, ev, (int)o->ret, gotev, gotdata);
}

static const struct {
    const char *name;
    prep_fn prep;
    post_fn post; /* checks what the call filled in, before its result and time; NULL: nothing */
} calls[] = {
    {"socket", p_socket, NULL},
    {"bind", p_bind, post_bind},
    {"listen", p_listen, NULL},
    {"accept", p_accept, NULL},
    {"accept4", p_accept, NULL},
    {"connect", p_connect, NULL},
    {"write", p_write, NULL},
    {"send", p_write, NULL},
    {"sendto", p_write, NULL},
    {"sendmsg", p_write, NULL},
    {"writev", p_write, NULL},
    {"read", p_read, NULL},
    {"recv", p_read, NULL},
    {"recvfrom", p_read, NULL},
    {"recvmsg", p_read, NULL},
    {"readv", p_read, NULL},
    {"setsockopt", p_setsockopt, NULL},
    {"getsockopt", p_getsockopt, post_getsockopt},
    {"fcntl", p_fcntl, NULL},
    {"ioctl", p_ioctl, post_ioctl},
    {"shutdown", p_shutdown, NULL},
    {"close", p_close, post_close},
    {"poll", p_poll, post_poll},
    {"epoll_create", p_epoll_create, NULL},
    {"epoll_create1", p_epoll_create, NULL},
    {"epoll_ctl", p_epoll_ctl, NULL},
    {"epoll_wait", p_epoll_wait, post_epoll_wait},
    {"epoll_pwait", p_epoll_wait, post_epoll_wait},
};

static post_fn post_of(const char *name)
{
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (!strcmp(calls[i].name, name))
            return calls[i].post;
    return NULL;
}

/* ---- running a call ---- */

/* Checks a returned call: what it filled in, when it returned, its result. */
static int complete(struct run *r, const struct pkt_event *ev)
{
    struct kern *k = r->kern;
    struct kop *o = &k->op;
    k->op_done = 0;
    int64_t at = (int64_t)((o->end_ns > k->t0 ? o->end_ns - k->t0 : 0) / 1000);
    post_fn post = post_of(ev->sys.name);
    int rc = 0;
    if (post)
        rc = post(r, ev, o);
    free(o->buf);
    o->buf = NULL;
    if (rc < 0 || sys_check_end(r, ev, at) < 0)
        return -1;
    struct sys_out out = o->ret < 0 ? sys_errno(o->err) : sys_ok(o->ret);
    return sys_finish(r, ev, &out);
}

void ksys_reap(struct run *r)
{
    const struct pkt_event *ev = r->call.ev;
    r->call.active = 0;
    if (r->cfg->verbose)
        printf("%9.6f %s returned %" PRId64 "\n", (double)(r->kern->op.end_ns - r->kern->t0) / 1e9,
               ev->sys.name, r->kern->op.ret);
    complete(r, ev);
}

/* Waits (packetdrill: up to a second) for a start...end call still running; 0 when none is. */
static int await_idle(struct run *r)
{
    uint64_t limit = r->now + BRISK_NSEC_PER_SEC;
    while (r->call.active && !r->stopped && r->now < limit)
        kern_pump(r, limit, 0, 0);
    if (r->stopped)
        return -1;
    return r->call.active ? 1 : 0;
}

int ksys_event(struct run *r, const struct pkt_event *ev)
{
    struct kern *k = r->kern;
    int busy = await_idle(r);
    if (busy < 0)
        return -1;
    if (busy)
        return run_fail(r, PKT_FAIL, r->call.ev,
                        "blocking system call while another blocking system call is already in progress");
    size_t i;
    for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (!strcmp(calls[i].name, ev->sys.name))
            break;
    if (i == sizeof(calls) / sizeof(calls[0]))
        return run_fail(r, PKT_UNSUPPORTED, ev, "the system call '%s' is not made by brisk-pkt --kernel",
                        ev->sys.name);
    memset(&r->call, 0, sizeof(r->call));
    r->call.ev = ev;
    sys_call_times(r, ev);
    if (r->cfg->verbose)
        printf("%9.6f %s (line %d)\n", (double)r->now / 1e9, ev->sys.name, ev->line);
    memset(&k->op, 0, sizeof(k->op));
    if (calls[i].prep(r, ev, &k->op) < 0) {
        free(k->op.buf);
        k->op.buf = NULL;
        return -1;
    }
    k->op_done = 0;
    pthread_mutex_lock(&k->mu);
    k->state = KC_QUEUED;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    if (ev->sys.blocking) {
        /* Later events run once the call sleeps in the kernel; it is checked when it returns. */
        uint64_t limit = r->now + KSYS_SLEEP_WAIT_NS;
        for (;;) {
            kern_pump(r, r->now + KSYS_SLICE_NS, 0, 1);
            if (r->stopped)
                return -1;
            if (k->op_done)
                return complete(r, ev);
            if (worker_sleeping(k) || r->now >= limit) {
                r->call.active = 1;
                return 0;
            }
        }
    }
    /* It must return within the tolerance of its start. */
    uint64_t limit = (uint64_t)(r->call.start_us + run_tolerance(r, r->call.start_us)) * 1000;
    do
        kern_pump(r, limit, 0, 1);
    while (!r->stopped && !k->op_done && r->now < limit);
    if (r->stopped)
        return -1;
    if (!k->op_done)
        return run_fail(
            r, PKT_FAIL, ev,
            "%s call blocked (still running at %.6f sec); the script expects it to return at %.6f (write "
            "start...end for a blocking call)",
            ev->sys.name, (double)r->now / 1e9, (double)r->call.start_us / 1e6);
    return complete(r, ev);
}

void ksys_finish(struct run *r)
{
    int busy = await_idle(r);
    if (busy > 0)
        run_fail(r, PKT_FAIL, r->call.ev,
                 "runtime error: exiting while a blocking system call is in progress");
}

/* ---- tcp_info for %{ }% ---- */

int ksys_info(struct run *r, const struct pkt_event *ev, struct pkt_var *out, size_t cap, size_t *n)
{
    /* The script's connection: the most recently mapped socket that is not listening (else a listener). */
    int fd = -1;
    for (int i = RUN_FDS - 1; i >= 0 && fd < 0; i--) {
        int st = tcp_state(r->script_fd[i]);
        if (st >= 0 && st != LINUX_TCP_LISTEN)
            fd = r->script_fd[i];
    }
    for (int i = RUN_FDS - 1; i >= 0 && fd < 0; i--)
        if (tcp_state(r->script_fd[i]) >= 0)
            fd = r->script_fd[i];
    if (fd < 0)
        return run_fail(r, PKT_BAD_SCRIPT, ev, "a %%{ }%% block needs a socket to read tcp_info from");
    /* Linux appends to struct tcp_info; a kernel newer than these headers fills tcpi_rcv_wnd, the u32 after
     * tcpi_snd_wnd (read from the bytes, so it is there with any header that has tcpi_snd_wnd). */
    uint8_t raw[1024];
    memset(raw, 0, sizeof(raw));
    socklen_t len = sizeof(raw);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, raw, &len) < 0)
        return run_fail(r, PKT_FAIL, ev, "getsockopt(TCP_INFO): %s", strerror(errno));
    struct tcp_info ti;
    memcpy(&ti, raw, sizeof(ti));
    uint32_t rcv_wnd = 0;
    size_t off = offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof(ti.tcpi_snd_wnd);
    if (len >= off + sizeof(rcv_wnd))
        memcpy(&rcv_wnd, raw + off, sizeof(rcv_wnd));
    struct pkt_var v[] = {
        {"tcpi_state", ti.tcpi_state},
        {"tcpi_ca_state", ti.tcpi_ca_state},
        {"tcpi_retransmits", ti.tcpi_retransmits},
        {"tcpi_backoff", ti.tcpi_backoff},
        {"tcpi_probes", ti.tcpi_probes},
        {"tcpi_options", ti.tcpi_options},
        {"tcpi_snd_wscale", ti.tcpi_snd_wscale},
        {"tcpi_rcv_wscale", ti.tcpi_rcv_wscale},
        {"tcpi_rto", ti.tcpi_rto},
        {"tcpi_ato", ti.tcpi_ato},
        {"tcpi_snd_mss", ti.tcpi_snd_mss},
        {"tcpi_advmss", ti.tcpi_advmss},
        {"tcpi_unacked", ti.tcpi_unacked},
        {"tcpi_sacked", ti.tcpi_sacked},
        {"tcpi_lost", ti.tcpi_lost},
        {"tcpi_retrans", ti.tcpi_retrans},
        {"tcpi_last_data_sent", ti.tcpi_last_data_sent},
        {"tcpi_last_data_recv", ti.tcpi_last_data_recv},
        {"tcpi_last_ack_recv", ti.tcpi_last_ack_recv},
        {"tcpi_pmtu", ti.tcpi_pmtu},
        {"tcpi_rtt", ti.tcpi_rtt},
        {"tcpi_rttvar", ti.tcpi_rttvar},
        {"tcpi_snd_ssthresh", ti.tcpi_snd_ssthresh},
        {"tcpi_snd_cwnd", ti.tcpi_snd_cwnd},
        {"tcpi_total_retrans", ti.tcpi_total_retrans},
        {"tcpi_pacing_rate", (int64_t)ti.tcpi_pacing_rate},
        {"tcpi_bytes_acked", (int64_t)ti.tcpi_bytes_acked},
        {"tcpi_bytes_received", (int64_t)ti.tcpi_bytes_received},
        {"tcpi_bytes_sent", (int64_t)ti.tcpi_bytes_sent},
        {"tcpi_segs_out", ti.tcpi_segs_out},
        {"tcpi_segs_in", ti.tcpi_segs_in},
        {"tcpi_notsent_bytes", ti.tcpi_notsent_bytes},
        {"tcpi_min_rtt", ti.tcpi_min_rtt},
        {"tcpi_snd_wnd", ti.tcpi_snd_wnd},
        {"tcpi_rcv_wnd", rcv_wnd},
        /* the kernel's only */
        {"tcpi_rcv_mss", ti.tcpi_rcv_mss},
        {"tcpi_rcv_ssthresh", ti.tcpi_rcv_ssthresh},
        {"tcpi_rcv_space", ti.tcpi_rcv_space},
        {"tcpi_rcv_rtt", ti.tcpi_rcv_rtt},
        {"tcpi_reordering", ti.tcpi_reordering},
        {"tcpi_delivered", ti.tcpi_delivered},
        {"tcpi_data_segs_in", ti.tcpi_data_segs_in},
        {"tcpi_data_segs_out", ti.tcpi_data_segs_out},
        {"tcpi_bytes_retrans", (int64_t)ti.tcpi_bytes_retrans},
        {"tcpi_dsack_dups", ti.tcpi_dsack_dups},
    };
    size_t k = sizeof(v) / sizeof(v[0]);
    if (k > cap)
        k = cap;
    memcpy(out, v, k * sizeof(v[0]));
    *n = k;
    return 0;
}
