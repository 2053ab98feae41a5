/*
 * sysopt.c — setsockopt and getsockopt of a script, on brisk's socket options with Linux's meanings.
 *
 * Each Linux option a script sets maps onto a brisk_sockopt (TCP_NODELAY, TCP_CORK, TCP_MAXSEG, the
 * keepalive trio, TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT, TCP_CONGESTION, SO_SNDBUF / SO_RCVBUF with Linux's
 * doubling, SO_LINGER, IP_TOS, ...), and getsockopt reads it back in Linux's units; an option brisk lacks is
 * "unsupported", never a silent success. Part of the virtual backend (sys.c); the kernel backend's options
 * are the kernel's own (ksys.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pkt/vsys.h"

static const char *cc_name_linux_to_brisk(const char *n)
{
    if (!strcmp(n, "reno"))
        return "newreno";
    return n;
}

/* Whether the stack advertises Linux's receive window, where SO_RCVBUF is Linux's sk_rcvbuf itself. */
static int linux_rcv_window(const struct run *r)
{
    return brisk_stack_settings(r->st)->tcp_rcv_window == 1; /* tcp_rcv_window=linux */
}

/* The (fd, level, name, ...) head both calls share: *rc < 0 if the script's arguments are bad, NULL with
 * *bad set if fd is not a socket. */
static struct run_fd *opt_head(struct run *r, const struct pkt_event *ev, int *rc, int64_t *level, int64_t *name,
                               int *bad)
{
    int fd;
    *bad = 0;
    if ((*rc = sys_need_args(r, ev, 5)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &fd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 1, level)) < 0 || (*rc = sys_arg_int(r, ev, 2, name)) < 0)
        return NULL;
    struct run_fd *f = vsys_sockfd(r, fd);
    *bad = f == NULL;
    return f;
}

struct sys_out vsys_setsockopt(struct run *r, const struct pkt_event *ev, int *rc)
{
    int64_t level, name, v = 0;
    int bad;
    struct run_fd *f = opt_head(r, ev, rc, &level, &name, &bad);
    if (!f)
        return bad ? sys_errno(EBADF) : SYS_WAIT;
    const struct expr *val = sys_arg(ev, 3);
    enum brisk_sockopt bo = 0;
    uint64_t bv = 0;
    if (level == SOL_SOCKET && name == SO_LINGER) {
        if (val->kind != EX_STRUCT || val->nkids != 2) {
            *rc = sys_bad(r, ev, "expected {onoff=N, linger=N}");
            return SYS_WAIT;
        }
        int64_t on, secs;
        const struct expr *a = val->kids[0], *b = val->kids[1];
        if ((*rc = sys_eval_int(r, ev, a->kind == EX_ASSIGN ? a->kids[1] : a, &on)) < 0 ||
            (*rc = sys_eval_int(r, ev, b->kind == EX_ASSIGN ? b->kids[1] : b, &secs)) < 0)
            return SYS_WAIT;
        f->linger_on = on != 0;
        f->linger_ns = secs > 0 ? (uint64_t)secs * BRISK_NSEC_PER_SEC : 0;
        int e = brisk_setsockopt(f->s, BRISK_SO_LINGER0, f->linger_on && secs == 0, r->now);
        return e == BRISK_OK ? sys_ok(0) : sys_errno(vsys_errno(e));
    }
    if (level == SOL_TCP && name == TCP_CONGESTION) {
        if (val->kind != EX_STRING) {
            *rc = sys_bad(r, ev, "expected a string");
            return SYS_WAIT;
        }
        int e = brisk_set_congestion(f->s, cc_name_linux_to_brisk(val->text));
        return e == BRISK_OK ? sys_ok(0) : sys_errno(ENOENT);
    }
    if ((*rc = sys_opt_value(r, ev, &v)) < 0)
        return SYS_WAIT;
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_REUSEADDR:
        case SO_REUSEPORT:
            return sys_ok(0); /* brisk binds a port in TIME-SYS_WAIT anyway */
        case SO_KEEPALIVE:
            bo = BRISK_SO_KEEPALIVE;
            bv = v != 0;
            break;
        case SO_SNDBUF:
            /* Linux doubles the value for its bookkeeping overhead and reports the double; brisk's bound is
             * on payload bytes. */
            bo = BRISK_SO_SNDBUF;
            bv = (uint64_t)(v < 2304 ? 2304 : v);
            f->sndbuf = bv;
            break;
        case SO_RCVBUF:
            bo = BRISK_SO_RCVBUF;
            if (linux_rcv_window(r)) {
                /* Linux's own option: the stack doubles and caps it as Linux does (src/tcp/rwin.c). */
                bv = (uint64_t)(v < 0 ? 0 : v);
            } else {
                bv = (uint64_t)(v < 1152 ? 1152 : v);
            }
            f->rcvbuf = bv;
            break;
        default:
            *rc = sys_unsup(r, ev, "this SOL_SOCKET option");
            return SYS_WAIT;
        }
    } else if (level == SOL_TCP || level == IPPROTO_TCP) {
        switch (name) {
        case TCP_NODELAY: bo = BRISK_SO_NODELAY; bv = v != 0; break;
        case TCP_CORK: bo = BRISK_SO_CORK; bv = v != 0; break;
        case TCP_MAXSEG: bo = BRISK_SO_MAXSEG; bv = (uint64_t)v; break;
        case TCP_NOTSENT_LOWAT: bo = BRISK_SO_NOTSENT_LOWAT; bv = (uint64_t)v; break;
        case TCP_QUICKACK: bo = BRISK_SO_QUICKACK; bv = v != 0; break;
        case TCP_INQ:
            /* Linux: 0 or 1, whether recvmsg reports the queue (the count itself is FIONREAD's). */
            if (v < 0 || v > 1)
                return sys_errno(EINVAL);
            f->inq_cmsg = (int)v;
            return sys_ok(0);
        case TCP_KEEPIDLE: bo = BRISK_SO_KEEPIDLE; bv = (uint64_t)v * BRISK_NSEC_PER_SEC; break;
        case TCP_KEEPINTVL: bo = BRISK_SO_KEEPINTVL; bv = (uint64_t)v * BRISK_NSEC_PER_SEC; break;
        case TCP_KEEPCNT: bo = BRISK_SO_KEEPCNT; bv = (uint64_t)v; break;
        case TCP_USER_TIMEOUT: bo = BRISK_SO_USER_TIMEOUT; bv = (uint64_t)v * BRISK_NSEC_PER_MSEC; break;
        default:
            *rc = sys_unsup(r, ev, "this SOL_TCP option");
            return SYS_WAIT;
        }
        if ((name == TCP_KEEPIDLE || name == TCP_KEEPINTVL || name == TCP_KEEPCNT) && v < 1)
            return sys_errno(EINVAL);
    } else if ((level == SOL_IP || level == IPPROTO_IP) && name == IP_TOS) {
        bo = BRISK_SO_TOS;
        bv = (uint64_t)v & 0xffu; /* Linux keeps the low byte of the int */
    } else {
        *rc = sys_unsup(r, ev, "this option level");
        return SYS_WAIT;
    }
    if (v < 0)
        return sys_errno(EINVAL);
    int e = brisk_setsockopt(f->s, bo, bv, r->now);
    return e == BRISK_OK ? sys_ok(0) : sys_errno(vsys_errno(e));
}

/* getsockopt(fd, level, name, [expected], [len]): compares the value itself. */
struct sys_out vsys_getsockopt(struct run *r, const struct pkt_event *ev, int *rc)
{
    int64_t level, name;
    int bad;
    struct run_fd *f = opt_head(r, ev, rc, &level, &name, &bad);
    if (!f)
        return bad ? sys_errno(EBADF) : SYS_WAIT;
    const struct expr *want = sys_arg(ev, 3);
    int64_t actual;
    uint64_t v = 0;
    int e = BRISK_OK;
    if (level == SOL_TCP && name == TCP_CONGESTION) {
        const char *n = brisk_get_congestion(f->s);
        const char *ln = n && !strcmp(n, "newreno") ? "reno" : n;
        if ((*rc = sys_check_congestion(r, ev, want, ln)) < 0)
            return SYS_WAIT;
        return sys_ok(0);
    }
    if (level == SOL_SOCKET && name == SO_ERROR) {
        int err = vsys_take_error(f);
        actual = err;
    } else if (level == SOL_SOCKET && name == SO_SNDBUF) {
        e = brisk_getsockopt(f->s, BRISK_SO_SNDBUF, &v);
        actual = (int64_t)v * 2;
    } else if (level == SOL_SOCKET && name == SO_RCVBUF) {
        e = brisk_getsockopt(f->s, BRISK_SO_RCVBUF, &v);
        actual = linux_rcv_window(r) ? (int64_t)v : (int64_t)v * 2; /* linux: already sk_rcvbuf */
    } else if (level == SOL_SOCKET && name == SO_KEEPALIVE) {
        e = brisk_getsockopt(f->s, BRISK_SO_KEEPALIVE, &v);
        actual = (int64_t)v;
    } else if ((level == SOL_IP || level == IPPROTO_IP) && name == IP_TOS) {
        e = brisk_getsockopt(f->s, BRISK_SO_TOS, &v);
        actual = (int64_t)v;
    } else if (level == SOL_TCP && name == TCP_INQ) {
        actual = f->inq_cmsg; /* Linux reports whether recvmsg adds the TCP_CM_INQ message, not the count */
    } else if (level == SOL_TCP) {
        enum brisk_sockopt bo;
        switch (name) {
        case TCP_NODELAY: bo = BRISK_SO_NODELAY; break;
        case TCP_CORK: bo = BRISK_SO_CORK; break;
        case TCP_MAXSEG: bo = BRISK_SO_MAXSEG; break;
        case TCP_NOTSENT_LOWAT: bo = BRISK_SO_NOTSENT_LOWAT; break;
        case TCP_KEEPIDLE: bo = BRISK_SO_KEEPIDLE; break;
        case TCP_KEEPINTVL: bo = BRISK_SO_KEEPINTVL; break;
        case TCP_KEEPCNT: bo = BRISK_SO_KEEPCNT; break;
        case TCP_QUICKACK: bo = BRISK_SO_QUICKACK; break;
        case TCP_USER_TIMEOUT: bo = BRISK_SO_USER_TIMEOUT; break;
        default:
            *rc = sys_unsup(r, ev, "this SOL_TCP option");
            return SYS_WAIT;
        }
        e = brisk_getsockopt(f->s, bo, &v);
        actual = (int64_t)v;
        if (name == TCP_KEEPIDLE || name == TCP_KEEPINTVL)
            actual = (int64_t)(v / BRISK_NSEC_PER_SEC);
        if (name == TCP_USER_TIMEOUT)
            actual = (int64_t)(v / BRISK_NSEC_PER_MSEC);
        if (name == TCP_MAXSEG) {
            /* Linux reports the connection's MSS once it has one (mss_cache), else the user's value, else
             * the default 536. */
            struct brisk_conn_info ci;
            brisk_conn_info(f->s, &ci);
            if (ci.state != BRISK_TCP_CLOSED && ci.state != BRISK_TCP_LISTEN && ci.mss)
                actual = ci.mss;
            else if (!v)
                actual = 536;
        }
    } else {
        *rc = sys_unsup(r, ev, "this option level");
        return SYS_WAIT;
    }
    if (e != BRISK_OK)
        return sys_errno(vsys_errno(e));
    if ((*rc = sys_check_value(r, ev, "getsockopt", want, actual)) < 0)
        return SYS_WAIT;
    return sys_ok(0);
}
