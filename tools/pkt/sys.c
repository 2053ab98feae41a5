/*
 * sys.c — the system calls of a script, emulated on brisk's socket API with Linux's semantics.
 *
 * brisk's API never blocks; Linux sockets block unless O_NONBLOCK (or MSG_DONTWAIT) says otherwise. Each
 * call here is an attempt that either completes (a result and an errno, compared with the script's) or
 * reports that a blocking socket would wait. Then the interpreter keeps the call pending and retries it
 * whenever the stack has done something (run.c): a "start...end" call completes while later events run, and
 * its return time is checked against `end`; a call written without "..." must return at once (within the
 * tolerance), as the script says it does.
 *
 * Descriptors are numbered like the kernel's (lowest free, from 3); the script's numbers are mapped to them
 * as packetdrill maps them. Errors follow Linux: a connection's error is reported once (ECONNRESET,
 * ETIMEDOUT, ECONNREFUSED, also through SO_ERROR), after which reads see end of file and writes EPIPE.
 * Payload bytes are zeros both ways (packetdrill's convention); reads discard what they read.
 *
 * What a call needs that brisk lacks (UDP, IPv6, an unknown socket option) is "unsupported": the script
 * tests something this stack does not have, which is not a failure of the stack.
 *
 * Arguments are read and outcomes checked by call.c, which the kernel backend (ksys.c) shares: only the
 * doing of each call is here, and socket options (sysopt.c), poll and epoll (syswait.c) and the tcp_info of
 * %{ }% blocks (tcpinfo.c) have files of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "pkt/run.h"
#include "pkt/vsys.h"


int vsys_errno(int e)
{
    switch (e) {
    case BRISK_ERR_AGAIN: return EAGAIN;
    case BRISK_ERR_PIPE: return EPIPE;
    case BRISK_ERR_NOTCONN: return ENOTCONN;
    case BRISK_ERR_ISCONN: return EISCONN;
    case BRISK_ERR_RESET: return ECONNRESET;
    case BRISK_ERR_CONNREFUSED: return ECONNREFUSED;
    case BRISK_ERR_TIMEDOUT: return ETIMEDOUT;
    case BRISK_ERR_ADDRINUSE: return EADDRINUSE;
    case BRISK_ERR_ADDRNOTAVAIL: return EADDRNOTAVAIL;
    case BRISK_ERR_INPROGRESS: return EINPROGRESS;
    case BRISK_ERR_UNREACH: return EHOSTUNREACH;
    case BRISK_ERR_NOROUTE: return ENETUNREACH;
    case BRISK_ERR_NETUNREACH: return ENETUNREACH;
    case BRISK_ERR_HOSTDOWN: return EHOSTDOWN;
    case BRISK_ERR_NONET: return ENONET;
    case BRISK_ERR_NOPROTOOPT: return ENOPROTOOPT;
    case BRISK_ERR_PROTO: return EPROTO;
    case BRISK_ERR_OPNOTSUPP: return EOPNOTSUPP;
    case BRISK_ERR_AFNOSUPPORT: return EAFNOSUPPORT;
    case BRISK_ERR_NOMEM:
    case BRISK_ERR_NOBUFS: return ENOBUFS;
    case BRISK_ERR_MSGSIZE: return EMSGSIZE;
    default: return EINVAL;
    }
}

struct run_fd *vsys_sockfd(struct run *r, int fd)
{
    if (fd < 0 || fd >= RUN_FDS || r->fds[fd].kind != FD_SOCK)
        return NULL;
    return &r->fds[fd];
}

/* ---- descriptors ---- */

static void sock_cb(void *ctx, brisk_sock *s, unsigned events, uint64_t now)
{
    (void)events;
    (void)now;
    sys_wakeup(ctx, s);
}

void sys_wakeup(struct run *r, brisk_sock *s)
{
    for (int i = 0; i < RUN_FDS; i++) {
        if (r->fds[i].kind == FD_SOCK && r->fds[i].s == s) {
            r->fds[i].wakeups++;
            if (brisk_sock_error(s) != BRISK_OK && !r->fds[i].err_reported)
                r->fds[i].err_pending = 1;
        }
    }
}

int vsys_fd_alloc(struct run *r)
{
    for (int i = 3; i < RUN_FDS; i++)
        if (r->fds[i].kind == FD_FREE)
            return i;
    return -1;
}

/* Descriptor fd becomes socket s, with our callback on it. */
static void fd_set_sock(struct run *r, int fd, brisk_sock *s, int nonblock)
{
    memset(&r->fds[fd], 0, sizeof(r->fds[fd]));
    r->fds[fd].kind = FD_SOCK;
    r->fds[fd].s = s;
    r->fds[fd].nonblock = nonblock;
    brisk_sock_set_callback(s, sock_cb, r);
}

int sys_init(struct run *r)
{
    memset(r->fds, 0, sizeof(r->fds));
    for (int i = 0; i < RUN_FDS; i++)
        r->script_fd[i] = -1;
    return 0;
}

void sys_free(struct run *r)
{
    for (int i = 0; i < RUN_FDS; i++) {
        if (r->fds[i].kind == FD_SOCK && r->fds[i].s) {
            brisk_sock_set_callback(r->fds[i].s, NULL, NULL);
            brisk_abort(r->fds[i].s, r->now);
        }
        r->fds[i].kind = FD_FREE;
    }
}

brisk_sock *sys_sut_sock(struct run *r)
{
    /* The most recently opened connection (accepted or connecting): the script's connection. */
    for (int i = RUN_FDS - 1; i >= 3; i--)
        if (r->fds[i].kind == FD_SOCK && !r->fds[i].listening && r->fds[i].s)
            return r->fds[i].s;
    for (int i = RUN_FDS - 1; i >= 3; i--)
        if (r->fds[i].kind == FD_SOCK && r->fds[i].s)
            return r->fds[i].s;
    return NULL;
}

/* The connection's error, reported once (Linux sock_error clears sk_err). 0 if none to report. */
int vsys_take_error(struct run_fd *f)
{
    int e = brisk_sock_error(f->s);
    if (e == BRISK_OK || f->err_reported)
        return 0;
    f->err_reported = 1;
    f->err_pending = 0;
    return vsys_errno(e);
}

/* poll(2) readiness of a descriptor, Linux's view. */
unsigned vsys_fd_poll(struct run_fd *f)
{
    unsigned m = brisk_sock_poll(f->s);
    if (!(f->err_pending || (brisk_sock_error(f->s) != BRISK_OK && !f->err_reported)))
        m &= ~BRISK_POLL_ERR;
    if (f->shut_rd)
        m |= BRISK_POLL_IN | BRISK_POLL_RDHUP;
    /* The brisk bits are poll(2)'s: IN 0x1, OUT 0x4, ERR 0x8, HUP 0x10, RDHUP 0x2000. */
    unsigned p = 0;
    if (m & BRISK_POLL_IN)
        p |= POLLIN | POLLRDNORM;
    if (m & BRISK_POLL_OUT)
        p |= POLLOUT | POLLWRNORM;
    if (m & BRISK_POLL_ERR)
        p |= POLLERR;
    if (m & BRISK_POLL_HUP)
        p |= POLLHUP;
    if (m & BRISK_POLL_RDHUP)
        p |= POLLRDHUP;
    return p;
}

/* ---- the calls ---- */

static struct sys_out do_socket(struct run *r, const struct pkt_event *ev, int *rc)
{
    int64_t dom, type, proto;
    if ((*rc = sys_need_args(r, ev, 3)) < 0)
        return SYS_WAIT;
    if (sys_arg(ev, 0)->kind == EX_ELLIPSIS)
        dom = AF_INET; /* packetdrill: the family of --ip_version */
    else if ((*rc = sys_arg_int(r, ev, 0, &dom)) < 0)
        return SYS_WAIT;
    if ((*rc = sys_arg_int(r, ev, 1, &type)) < 0)
        return SYS_WAIT;
    if (sys_arg(ev, 2)->kind == EX_ELLIPSIS)
        proto = IPPROTO_TCP;
    else if ((*rc = sys_arg_int(r, ev, 2, &proto)) < 0)
        return SYS_WAIT;
    if (dom != AF_INET) {
        *rc = sys_unsup(r, ev, dom == AF_INET6 ? "IPv6 (brisk has no IPv6 yet)"
                                               : "address family other than AF_INET");
        return SYS_WAIT;
    }
    int nonblock = (type & SOCK_NONBLOCK) != 0;
    type &= ~(int64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (type != SOCK_STREAM || (proto != IPPROTO_TCP && proto != 0)) {
        *rc = sys_unsup(r, ev, "only SOCK_STREAM / IPPROTO_TCP sockets (brisk has no UDP yet)");
        return SYS_WAIT;
    }
    int fd = vsys_fd_alloc(r);
    if (fd < 0)
        return sys_errno(EMFILE);
    int err = 0;
    brisk_sock *s = brisk_socket(r->st, &err);
    if (!s)
        return sys_errno(ENOBUFS);
    fd_set_sock(r, fd, s, nonblock);
    return sys_ok(fd);
}

static struct sys_out do_bind(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    if ((*rc = sys_need_args(r, ev, 3)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    uint32_t addr = r->local_ip;
    uint16_t port = r->bind_port;
    if ((*rc = sys_sockaddr_arg(r, ev, 1, &addr, &port)) < 0)
        return SYS_WAIT;
    int e = brisk_bind(f->s, addr, port);
    if (e == BRISK_OK && port)
        r->bind_port = port;
    return e == BRISK_OK ? sys_ok(0) : sys_errno(vsys_errno(e));
}

static struct sys_out do_listen(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t backlog;
    if ((*rc = sys_need_args(r, ev, 2)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 1, &backlog)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (backlog < 1)
        backlog = 1;
    int e = brisk_listen(f->s, (int)(backlog > 65535 ? 65535 : backlog));
    if (e != BRISK_OK)
        return sys_errno(vsys_errno(e));
    f->listening = 1;
    return sys_ok(0);
}

static struct sys_out do_accept(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    if ((*rc = sys_arg_fd(r, ev, 0, &fd)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (!f->listening)
        return sys_errno(EINVAL);
    int err = 0;
    brisk_sock *c = brisk_accept(f->s, &err);
    if (!c)
        return f->nonblock ? sys_errno(EAGAIN) : SYS_WAIT;
    int nfd = vsys_fd_alloc(r);
    if (nfd < 0) {
        brisk_abort(c, r->now);
        return sys_errno(EMFILE);
    }
    /* accept4(..., SOCK_NONBLOCK) */
    int64_t flags = 0;
    if (!strcmp(ev->sys.name, "accept4") && ev->sys.nargs == 4 && sys_arg_int(r, ev, 3, &flags) < 0)
        flags = 0;
    fd_set_sock(r, nfd, c, (flags & SOCK_NONBLOCK) != 0);
    return sys_ok(nfd);
}

static struct sys_out do_connect(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    if ((*rc = sys_need_args(r, ev, 3)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    struct brisk_conn_info ci;
    brisk_conn_info(f->s, &ci);
    if (f->connecting || r->call.active) {
        /* Second connect on a non-blocking socket, or a blocking connect being completed. */
        int e = vsys_take_error(f);
        if (e) {
            f->connecting = 0;
            return sys_errno(e);
        }
        if (ci.state == BRISK_TCP_SYN_SENT)
            return f->nonblock && !r->call.active ? sys_errno(EALREADY) : SYS_WAIT;
        /* Linux: the connect that first sees the connection established returns 0 (a non-blocking socket's
         * second connect included); the next one says EISCONN. */
        f->connecting = 0;
        return sys_ok(0);
    }
    if (ci.state != BRISK_TCP_CLOSED)
        return sys_errno(ci.state == BRISK_TCP_LISTEN ? EINVAL : EISCONN);
    uint32_t addr = r->remote_ip;
    uint16_t port = r->connect_port;
    if ((*rc = sys_sockaddr_arg(r, ev, 1, &addr, &port)) < 0)
        return SYS_WAIT;
    if (addr != r->remote_ip) {
        *rc = sys_unsup(r, ev, "connect to an address other than the script's remote address");
        return SYS_WAIT;
    }
    r->connect_port = port;
    net_sut_connecting(r);
    int e = brisk_connect(f->s, addr, port, r->now);
    if (e != BRISK_ERR_INPROGRESS)
        return sys_errno(vsys_errno(e));
    f->connecting = 1;
    if (f->nonblock)
        return sys_errno(EINPROGRESS);
    return SYS_WAIT;
}

static struct sys_out do_write(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t len, flags;
    if ((*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 || (*rc = sys_out_len(r, ev, &len, &flags)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (len < 0 || len > SYS_IO_MAX) {
        *rc = sys_bad(r, ev, "payload length out of range");
        return SYS_WAIT;
    }
    if (flags & ~(int64_t)(MSG_MORE | MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR)) {
        *rc = sys_unsup(r, ev, "send flags other than MSG_MORE, MSG_DONTWAIT, MSG_NOSIGNAL, MSG_EOR");
        return SYS_WAIT;
    }
#ifdef BRISK_MSG_EOR
    unsigned bflags = ((flags & MSG_MORE) ? BRISK_MSG_MORE : 0) | ((flags & MSG_EOR) ? BRISK_MSG_EOR : 0);
#else
    if (flags & MSG_EOR) {
        *rc = sys_unsup(r, ev, "MSG_EOR");
        return SYS_WAIT;
    }
    unsigned bflags = (flags & MSG_MORE) ? BRISK_MSG_MORE : 0;
#endif
    int nonblock = f->nonblock || (flags & MSG_DONTWAIT);
    int e = vsys_take_error(f);
    if (e)
        return r->call.done ? sys_ok((int64_t)r->call.done) : sys_errno(e);
    if (f->err_reported)
        return r->call.done ? sys_ok((int64_t)r->call.done) : sys_errno(EPIPE);
    /* The call's bytes in one brisk_send, as Linux's tcp_sendmsg copies a call as one stream (a split
     * would put a write's end, and its PSH mark, inside it). */
    uint64_t done = r->call.done;
    uint8_t *zeros = calloc(1, (size_t)(len - (int64_t)done) + 1);
    if (!zeros)
        return sys_errno(ENOBUFS);
    struct sys_out res = SYS_WAIT;
    while ((int64_t)done < len) {
        size_t chunk = (size_t)(len - (int64_t)done);
        int64_t n = brisk_send(f->s, zeros, chunk, bflags, r->now);
        if (n == BRISK_ERR_AGAIN) {
            struct brisk_conn_info ci;
            brisk_conn_info(f->s, &ci);
            if (ci.state == BRISK_TCP_SYN_SENT || ci.state == BRISK_TCP_SYN_RECEIVED) {
                if (nonblock)
                    res = sys_errno(EAGAIN);
                else
                    r->call.done = done;
                goto out;
            }
            if (done > 0 && nonblock)
                break;
            if (nonblock) {
                res = sys_errno(EAGAIN);
                goto out;
            }
            r->call.done = done;
            /* A blocked writer pushes what it queued (Linux: tcp_push before sk_stream_wait_memory). */
            if (done > 0)
                brisk_send(f->s, zeros, 0, 0, r->now);
            goto out; /* SYS_WAIT */
        }
        if (n < 0) {
            if (done > 0)
                break;
            if (n == BRISK_ERR_PIPE || n == BRISK_ERR_NOTCONN) {
                res = sys_errno(EPIPE);
            } else {
                e = vsys_take_error(f);
                res = sys_errno(e ? e : vsys_errno((int)n));
            }
            goto out;
        }
        done += (uint64_t)n;
        if ((size_t)n < chunk && nonblock)
            break;
    }
    r->call.done = 0;
    res = sys_ok((int64_t)done);
out:
    free(zeros);
    return res;
}

static struct sys_out do_read(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t len = 0, flags = 0;
    const char *n = ev->sys.name;
    if ((*rc = sys_arg_fd(r, ev, 0, &fd)) < 0)
        return SYS_WAIT;
    if (!strcmp(n, "read") || !strcmp(n, "recv") || !strcmp(n, "recvfrom")) {
        if ((*rc = sys_arg_int(r, ev, 2, &len)) < 0)
            return SYS_WAIT;
        if (strcmp(n, "read") != 0 && ev->sys.nargs >= 4 && (*rc = sys_arg_int(r, ev, 3, &flags)) < 0)
            return SYS_WAIT;
    } else if ((*rc = sys_out_len(r, ev, &len, &flags)) < 0) {
        return SYS_WAIT;
    }
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (len < 0 || len > SYS_IO_MAX) {
        *rc = sys_bad(r, ev, "length out of range");
        return SYS_WAIT;
    }
    if (flags & ~(int64_t)(MSG_PEEK | MSG_DONTWAIT | MSG_WAITALL | MSG_TRUNC)) {
        *rc = sys_unsup(r, ev, "receive flags other than MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL, MSG_TRUNC");
        return SYS_WAIT;
    }
    int nonblock = f->nonblock || (flags & MSG_DONTWAIT);
    if (f->listening)
        return sys_errno(ENOTCONN);
    if (f->shut_rd) {
        /* Linux: after SHUT_RD, what is queued can still be read; then end of file. */
        struct brisk_conn_info ci;
        brisk_conn_info(f->s, &ci);
        if (ci.rcv_queued == 0)
            return sys_ok(0);
    }
    uint64_t want = (uint64_t)len;
    uint64_t got = r->call.done;
    while (got < want) {
        /* Take all that is there, up to len, as one read: the spans first, then one consume (Linux's
         * receive-window rules account a read as a whole, as tcp_recvmsg does). */
        const uint8_t *data;
        uint64_t take = 0;
        int64_t k = BRISK_ERR_AGAIN;
        while (got + take < want &&
               (k = brisk_recv_peek(f->s, (flags & MSG_PEEK) ? got + take : take, &data)) > 0)
            take += (uint64_t)k < want - got - take ? (uint64_t)k : want - got - take;
        if (take) {
            if (!(flags & MSG_PEEK))
                brisk_recv_consume(f->s, (size_t)take, r->now);
            got += take;
            continue;
        }
        if (k == 0 || got > 0) {
            if (k == BRISK_ERR_AGAIN && (flags & MSG_WAITALL) && !nonblock) {
                r->call.done = got;
                return SYS_WAIT;
            }
            break; /* end of stream, or some data read */
        }
        if (k == BRISK_ERR_AGAIN)
            return nonblock ? sys_errno(EAGAIN) : SYS_WAIT;
        int e = vsys_take_error(f);
        if (e)
            return sys_errno(e);
        if (f->err_reported)
            return sys_ok(0);
        return sys_errno(vsys_errno((int)k));
    }
    r->call.done = 0;
    return sys_ok((int64_t)got);
}

static struct sys_out do_fcntl(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t cmd, v = 0;
    if ((*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 || (*rc = sys_arg_int(r, ev, 1, &cmd)) < 0)
        return SYS_WAIT;
    if (fd < 0 || fd >= RUN_FDS || r->fds[fd].kind == FD_FREE)
        return sys_errno(EBADF);
    struct run_fd *f = &r->fds[fd];
    switch (cmd) {
    case F_GETFL:
        return sys_ok(O_RDWR | (f->nonblock ? O_NONBLOCK : 0));
    case F_SETFL:
        if ((*rc = sys_arg_int(r, ev, 2, &v)) < 0)
            return SYS_WAIT;
        f->nonblock = (v & O_NONBLOCK) != 0;
        return sys_ok(0);
    case F_GETFD:
    case F_SETFD:
        return sys_ok(0);
    default:
        *rc = sys_unsup(r, ev, "this fcntl command");
        return SYS_WAIT;
    }
}

static struct sys_out do_ioctl(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t req;
    if ((*rc = sys_need_args(r, ev, 3)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 1, &req)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (req == FIONBIO) {
        int64_t v;
        if ((*rc = sys_arg_int(r, ev, 2, &v)) < 0)
            return SYS_WAIT;
        f->nonblock = v != 0;
        return sys_ok(0);
    }
    struct brisk_conn_info ci;
    brisk_conn_info(f->s, &ci);
    int64_t actual;
    if (req == FIONREAD) {
        if (f->listening)
            return sys_errno(EINVAL);
        actual = (int64_t)ci.inq; /* tcp_inq: 0 while the handshake is in progress */
    } else if (req == SIOCOUTQ) {
        if (f->listening)
            return sys_errno(EINVAL);
        actual = (int64_t)ci.snd_queued;
    } else if (req == SIOCOUTQNSD) {
        if (f->listening)
            return sys_errno(EINVAL);
        actual = (int64_t)ci.notsent;
    } else {
        *rc = sys_unsup(r, ev, "this ioctl");
        return SYS_WAIT;
    }
    const struct expr *want = sys_arg(ev, 2);
    if ((*rc = sys_check_value(r, ev, "ioctl", want, actual)) < 0)
        return SYS_WAIT;
    return sys_ok(0);
}

static struct sys_out do_shutdown(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    int64_t how;
    if ((*rc = sys_need_args(r, ev, 2)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 1, &how)) < 0)
        return SYS_WAIT;
    struct run_fd *f = vsys_sockfd(r, fd);
    if (!f)
        return sys_errno(EBADF);
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
        return sys_errno(EINVAL);
    struct brisk_conn_info ci;
    brisk_conn_info(f->s, &ci);
    if (ci.state == BRISK_TCP_CLOSED || ci.state == BRISK_TCP_LISTEN || ci.state == BRISK_TCP_SYN_SENT)
        return sys_errno(ENOTCONN);
    if (how != SHUT_WR)
        f->shut_rd = 1;
    if (how != SHUT_RD) {
        int e = brisk_shutdown_write(f->s, r->now);
        if (e != BRISK_OK && e != BRISK_ERR_NOTCONN)
            return sys_errno(vsys_errno(e));
    }
    return sys_ok(0);
}

static void fd_release(struct run *r, int fd)
{
    for (int i = 0; i < RUN_FDS; i++) {
        if (r->fds[i].kind == FD_EPOLL) {
            for (int k = 0; k < r->fds[i].nep; k++) {
                if (r->fds[i].ep[k].fd == fd) {
                    r->fds[i].ep[k] = r->fds[i].ep[--r->fds[i].nep];
                    k--;
                }
            }
        }
    }
    for (int i = 0; i < RUN_FDS; i++)
        if (r->script_fd[i] == fd)
            r->script_fd[i] = -1;
    memset(&r->fds[fd], 0, sizeof(r->fds[fd]));
}

static struct sys_out do_close(struct run *r, const struct pkt_event *ev, int *rc)
{
    int fd;
    if ((*rc = sys_need_args(r, ev, 1)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0)
        return SYS_WAIT;
    if (fd < 0 || fd >= RUN_FDS || r->fds[fd].kind == FD_FREE)
        return sys_errno(EBADF);
    struct run_fd *f = &r->fds[fd];
    if (f->kind == FD_SOCK) {
        struct brisk_conn_info ci;
        brisk_conn_info(f->s, &ci);
        /* SO_LINGER with a timeout on a blocking socket: the FIN goes now, close waits until it is
         * acknowledged or the time is up (Linux tcp_close: sk_stream_wait_close), then returns 0 either way.
         * Unread data still aborts at once (RFC 2525 §2.17), as without linger. */
        if (f->linger_on && f->linger_ns && !f->nonblock && ci.rcv_queued == 0 &&
            (ci.state == BRISK_TCP_ESTABLISHED || ci.state == BRISK_TCP_CLOSE_WAIT ||
             ci.state == BRISK_TCP_FIN_WAIT_1 || ci.state == BRISK_TCP_LAST_ACK ||
             ci.state == BRISK_TCP_CLOSING)) {
            if (!r->call.started) {
                brisk_shutdown_write(f->s, r->now);
                r->call.deadline_ns = r->now + f->linger_ns;
                r->call.started = 1;
                brisk_conn_info(f->s, &ci);
            }
            if ((ci.state == BRISK_TCP_FIN_WAIT_1 || ci.state == BRISK_TCP_LAST_ACK ||
                 ci.state == BRISK_TCP_CLOSING) && r->now < r->call.deadline_ns) {
                r->call.wake_ns = r->call.deadline_ns;
                return SYS_WAIT;
            }
        }
        brisk_sock_set_callback(f->s, NULL, NULL);
        brisk_close(f->s, r->now);
    }
    fd_release(r, fd);
    return sys_ok(0);
}

/* ---- dispatch, result check, blocking ---- */

static struct sys_out attempt(struct run *r, const struct pkt_event *ev, int *rc, uint64_t *wake)
{
    const char *n = ev->sys.name;
    *rc = 0;
    *wake = 0;
    if (!strcmp(n, "socket"))
        return do_socket(r, ev, rc);
    if (!strcmp(n, "bind"))
        return do_bind(r, ev, rc);
    if (!strcmp(n, "listen"))
        return do_listen(r, ev, rc);
    if (!strcmp(n, "accept") || !strcmp(n, "accept4"))
        return do_accept(r, ev, rc);
    if (!strcmp(n, "connect"))
        return do_connect(r, ev, rc);
    if (!strcmp(n, "write") || !strcmp(n, "send") || !strcmp(n, "sendto") || !strcmp(n, "sendmsg") ||
        !strcmp(n, "writev"))
        return do_write(r, ev, rc);
    if (!strcmp(n, "read") || !strcmp(n, "recv") || !strcmp(n, "recvfrom") || !strcmp(n, "recvmsg") ||
        !strcmp(n, "readv"))
        return do_read(r, ev, rc);
    if (!strcmp(n, "setsockopt"))
        return vsys_setsockopt(r, ev, rc);
    if (!strcmp(n, "getsockopt"))
        return vsys_getsockopt(r, ev, rc);
    if (!strcmp(n, "fcntl"))
        return do_fcntl(r, ev, rc);
    if (!strcmp(n, "ioctl"))
        return do_ioctl(r, ev, rc);
    if (!strcmp(n, "shutdown"))
        return do_shutdown(r, ev, rc);
    if (!strcmp(n, "close"))
        return do_close(r, ev, rc);
    if (!strcmp(n, "poll"))
        return vsys_poll(r, ev, rc, wake);
    if (!strcmp(n, "epoll_create") || !strcmp(n, "epoll_create1"))
        return vsys_epoll_create(r, ev, rc);
    if (!strcmp(n, "epoll_ctl"))
        return vsys_epoll_ctl(r, ev, rc);
    if (!strcmp(n, "epoll_wait") || !strcmp(n, "epoll_pwait"))
        return vsys_epoll_wait(r, ev, rc, wake);
    char m[96];
    snprintf(m, sizeof(m), "the system call '%s' is not emulated", n);
    *rc = run_fail(r, PKT_UNSUPPORTED, ev, "%s", m);
    return SYS_WAIT;
}

int sys_retry(struct run *r)
{
    if (!r->call.active || r->stopped)
        return 0;
    const struct pkt_event *ev = r->call.ev;
    int rc;
    uint64_t wake;
    struct sys_out o = attempt(r, ev, &rc, &wake);
    if (rc < 0)
        return -1;
    if (wake)
        r->call.wake_ns = wake;
    if (!o.done)
        return 0;
    r->call.active = 0;
    r->call.done = 0;
    if (r->cfg->verbose)
        printf("%9.6f %s returned %" PRId64 "\n", (double)r->now / 1e9, ev->sys.name, o.ret);
    if (sys_check_end(r, ev, run_now_us(r)) < 0 || sys_finish(r, ev, &o) < 0)
        return -1;
    return 0;
}

int sys_event(struct run *r, const struct pkt_event *ev)
{
    if (r->call.active) {
        /* packetdrill waits (up to a second) for a blocking call to finish before it starts the next. */
        uint64_t limit = r->now + BRISK_NSEC_PER_SEC;
        while (r->call.active && !r->stopped && r->now < limit) {
            uint64_t d = brisk_stack_next_deadline(r->st);
            if (r->call.wake_ns && r->call.wake_ns < d)
                d = r->call.wake_ns;
            if (d == BRISK_TIME_NONE || d > limit)
                d = limit;
            net_advance(r, d);
        }
        if (r->stopped)
            return -1;
        if (r->call.active)
            return run_fail(r, PKT_FAIL, r->call.ev,
                            "blocking system call while another blocking system call is already in progress");
    }
    memset(&r->call, 0, sizeof(r->call));
    r->call.ev = ev;
    sys_call_times(r, ev);
    if (r->cfg->verbose)
        printf("%9.6f %s (line %d)\n", (double)r->now / 1e9, ev->sys.name, ev->line);
    int rc;
    uint64_t wake;
    struct sys_out o = attempt(r, ev, &rc, &wake);
    if (rc < 0)
        return -1;
    if (o.done) {
        memset(&r->call, 0, sizeof(r->call));
        r->call.start_us = run_now_us(r);
        net_settle(r);
        if (r->stopped)
            return -1;
        if (ev->sys.blocking) {
            r->call.end_us = ev->tkind == TIME_REL ? r->call.start_us - ev->t_us + ev->sys.end_us : ev->sys.end_us;
            r->call.ev = ev;
            if (sys_check_end(r, ev, run_now_us(r)) < 0)
                return -1;
        }
        return sys_finish(r, ev, &o);
    }
    /* It blocks. */
    r->call.active = 1;
    if (wake)
        r->call.wake_ns = wake;
    net_settle(r); /* what the attempt sent (a SYN, a pushed write) completes now */
    if (r->stopped)
        return -1;
    if (!r->call.active)
        return 0; /* it completed during the settle (sys_retry checked it) */
    if (ev->sys.blocking)
        return 0; /* later events run while it waits */
    /* Not marked blocking: run the stack until the call returns, but no further than the tolerance allows
     * (then it is reported as having blocked). */
    uint64_t limit = (uint64_t)(r->call.start_us + run_tolerance(r, r->call.start_us)) * 1000 + 1000;
    while (r->call.active && !r->stopped) {
        uint64_t d = brisk_stack_next_deadline(r->st);
        if (r->call.wake_ns && r->call.wake_ns < d)
            d = r->call.wake_ns;
        if (d == BRISK_TIME_NONE || d > limit) {
            r->now = limit > r->now ? limit : r->now;
            return sys_check_end(r, ev, run_now_us(r));
        }
        net_advance(r, d);
    }
    return r->stopped ? -1 : 0;
}
