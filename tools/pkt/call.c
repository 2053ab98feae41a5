/*
 * call.c — what both backends do the same way for a system call: read its arguments, check its result.
 *
 * A script's call is evaluated here (symbols through sym.c, htons / inet_addr, sockaddr and msghdr
 * structures, iovec lengths, epoll_event and pollfd entries), then made by the backend — emulated on brisk's
 * socket API by sys.c, or made for real on the kernel's descriptors by ksys.c — and its outcome compared
 * with the script here: the result and errno (mapping a returned descriptor to the script's number), the
 * values a call fills in (getsockopt, ioctl, poll's revents, epoll_wait's events) and the time it returned.
 * Every message is the same whichever backend ran the call, so a script's failure reads the same against
 * brisk and against Linux.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "pkt/run.h"

int sys_unsup(struct run *r, const struct pkt_event *ev, const char *what)
{
    return run_fail(r, PKT_UNSUPPORTED, ev, "%s call: %s", ev->sys.name, what);
}

int sys_bad(struct run *r, const struct pkt_event *ev, const char *what)
{
    return run_fail(r, PKT_BAD_SCRIPT, ev, "%s call: %s", ev->sys.name, what);
}

int sys_eval_int(struct run *r, const struct pkt_event *ev, const struct expr *e, int64_t *v)
{
    switch (e->kind) {
    case EX_INT:
        *v = e->num;
        return 0;
    case EX_WORD:
        if (pkt_sym(e->text, v))
            return 0;
        {
            char m[128];
            snprintf(m, sizeof(m), "unknown symbol '%s'", e->text);
            return sys_unsup(r, ev, m);
        }
    case EX_OR: {
        int64_t a, b;
        if (sys_eval_int(r, ev, e->kids[0], &a) < 0 || sys_eval_int(r, ev, e->kids[1], &b) < 0)
            return -1;
        *v = a | b;
        return 0;
    }
    case EX_CALL:
        if ((!strcmp(e->text, "htons") || !strcmp(e->text, "htonl") || !strcmp(e->text, "ntohs")) &&
            e->nkids == 1)
            return sys_eval_int(r, ev, e->kids[0], v);
        if (!strcmp(e->text, "inet_addr") && e->nkids == 1 && e->kids[0]->kind == EX_STRING) {
            uint32_t a;
            if (brisk_ip_parse(e->kids[0]->text, &a) != BRISK_OK)
                return sys_bad(r, ev, "inet_addr of a malformed address");
            *v = a;
            return 0;
        }
        return sys_unsup(r, ev, "unknown function in an argument");
    case EX_LIST:
        if (e->nkids == 1)
            return sys_eval_int(r, ev, e->kids[0], v);
        return sys_bad(r, ev, "expected [value]");
    default:
        return sys_bad(r, ev, "expected an integer argument");
    }
}

const struct expr *sys_arg(const struct pkt_event *ev, size_t i)
{
    return i < ev->sys.nargs ? ev->sys.args[i] : NULL;
}

int sys_need_args(struct run *r, const struct pkt_event *ev, size_t n)
{
    if (ev->sys.nargs != n) {
        char m[64];
        snprintf(m, sizeof(m), "expected %zu arguments but got %zu", n, ev->sys.nargs);
        return sys_bad(r, ev, m);
    }
    return 0;
}

int sys_arg_int(struct run *r, const struct pkt_event *ev, size_t i, int64_t *v)
{
    const struct expr *e = sys_arg(ev, i);
    if (!e)
        return sys_bad(r, ev, "argument list too short");
    return sys_eval_int(r, ev, e, v);
}

int sys_live_fd(const struct run *r, int64_t script_fd)
{
    if (script_fd < 0 || script_fd >= RUN_FDS)
        return -1;
    return r->script_fd[script_fd];
}

int sys_arg_fd(struct run *r, const struct pkt_event *ev, size_t i, int *fd)
{
    int64_t v;
    if (sys_arg_int(r, ev, i, &v) < 0)
        return -1;
    *fd = sys_live_fd(r, v);
    return 0;
}

int sys_sockaddr_arg(struct run *r, const struct pkt_event *ev, size_t i, uint32_t *addr, uint16_t *port)
{
    const struct expr *e = sys_arg(ev, i);
    if (!e)
        return sys_bad(r, ev, "argument list too short");
    if (e->kind == EX_ELLIPSIS)
        return 0;
    if (e->kind != EX_STRUCT)
        return sys_bad(r, ev,
                       "expected ... or {sa_family=AF_INET, sin_port=htons(P), sin_addr=inet_addr(\"A\")}");
    for (size_t k = 0; k < e->nkids; k++) {
        const struct expr *a = e->kids[k];
        if (a->kind != EX_ASSIGN || a->kids[0]->kind != EX_WORD)
            return sys_bad(r, ev, "expected name=value in a sockaddr");
        const char *n = a->kids[0]->text;
        int64_t v;
        if (sys_eval_int(r, ev, a->kids[1], &v) < 0)
            return -1;
        if (!strcmp(n, "sa_family") || !strcmp(n, "sin_family")) {
            if (v != AF_INET)
                return sys_unsup(r, ev, "address family other than AF_INET");
        } else if (!strcmp(n, "sin_port")) {
            *port = (uint16_t)v;
        } else if (!strcmp(n, "sin_addr")) {
            *addr = (uint32_t)v;
        } else {
            return sys_bad(r, ev, "unknown sockaddr field");
        }
    }
    return 0;
}

int sys_out_len(struct run *r, const struct pkt_event *ev, int64_t *len, int64_t *flags)
{
    const char *n = ev->sys.name;
    *flags = 0;
    if (!strcmp(n, "write") || !strcmp(n, "send") || !strcmp(n, "sendto")) {
        if (sys_arg_int(r, ev, 2, len) < 0)
            return -1;
        if (strcmp(n, "write") != 0 && ev->sys.nargs >= 4 && sys_arg_int(r, ev, 3, flags) < 0)
            return -1;
        return 0;
    }
    /* writev(fd, [{..., n}, ...], cnt) / sendmsg(fd, {msg_name(...)=..., msg_iov(k)=[{..., n}], ...}, flags)
     */
    const struct expr *iov = NULL;
    if (!strcmp(n, "writev") || !strcmp(n, "readv")) {
        iov = sys_arg(ev, 1);
    } else {
        const struct expr *m = sys_arg(ev, 1);
        if (!m || m->kind != EX_STRUCT)
            return sys_bad(r, ev, "expected a msghdr {msg_name(...)=..., msg_iov(N)=[...], msg_flags=0}");
        for (size_t k = 0; k < m->nkids; k++) {
            const struct expr *a = m->kids[k];
            if (a->kind == EX_ASSIGN && a->kids[0]->kind == EX_CALL && !strcmp(a->kids[0]->text, "msg_iov"))
                iov = a->kids[1];
            if (a->kind == EX_ASSIGN && a->kids[0]->kind == EX_WORD &&
                !strcmp(a->kids[0]->text, "msg_control"))
                return sys_unsup(r, ev, "control messages (msg_control)");
        }
        if (ev->sys.nargs >= 3 && sys_arg_int(r, ev, 2, flags) < 0)
            return -1;
    }
    if (!iov || iov->kind != EX_LIST)
        return sys_bad(r, ev, "expected an iovec list [{..., N}, ...]");
    *len = 0;
    for (size_t k = 0; k < iov->nkids; k++) {
        const struct expr *v = iov->kids[k];
        int64_t l;
        if (v->kind != EX_STRUCT || v->nkids != 2 || sys_eval_int(r, ev, v->kids[1], &l) < 0 || l < 0)
            return r->stopped ? -1 : sys_bad(r, ev, "expected an iovec {..., N}");
        *len += l;
    }
    return 0;
}

int sys_opt_value(struct run *r, const struct pkt_event *ev, int64_t *v)
{
    const struct expr *e = sys_arg(ev, 3);
    if (!e)
        return sys_bad(r, ev, "argument list too short");
    return sys_eval_int(r, ev, e, v);
}

int sys_epoll_event_arg(struct run *r, const struct pkt_event *ev, const struct expr *e, int64_t *events,
                        int64_t *data)
{
    if (e->kind != EX_STRUCT)
        return sys_bad(r, ev, "expected {events=..., fd=N}");
    *events = 0;
    *data = 0;
    for (size_t j = 0; j < e->nkids; j++) {
        const struct expr *a = e->kids[j];
        if (a->kind != EX_ASSIGN || a->kids[0]->kind != EX_WORD)
            return sys_bad(r, ev, "expected {events=..., fd=N}");
        const char *n = a->kids[0]->text;
        if (!strcmp(n, "events")) {
            if (sys_eval_int(r, ev, a->kids[1], events) < 0)
                return -1;
        } else if (!strcmp(n, "fd") || !strcmp(n, "ptr") || !strcmp(n, "u32") || !strcmp(n, "u64")) {
            if (sys_eval_int(r, ev, a->kids[1], data) < 0)
                return -1;
        } else {
            return sys_bad(r, ev, "unknown epoll_event field");
        }
    }
    return 0;
}

int sys_poll_args(struct run *r, const struct pkt_event *ev, const struct expr **list, int64_t *timeout)
{
    int64_t nfds;
    if (sys_need_args(r, ev, 3) < 0 || sys_arg_int(r, ev, 1, &nfds) < 0 || sys_arg_int(r, ev, 2, timeout) < 0)
        return -1;
    *list = sys_arg(ev, 0);
    if ((*list)->kind != EX_LIST || (int64_t)(*list)->nkids != nfds)
        return sys_bad(r, ev, "expected [{fd=N, events=..., revents=...}, ...] with nfds entries");
    if ((*list)->nkids > SYS_POLL_MAX)
        return sys_unsup(r, ev, "more than 16 poll entries");
    return 0;
}

int sys_poll_entry(struct run *r, const struct pkt_event *ev, const struct expr *p, int64_t *sfd,
                   int64_t *events)
{
    *sfd = -1;
    *events = 0;
    for (size_t j = 0; p->kind == EX_STRUCT && j < p->nkids; j++) {
        const struct expr *a = p->kids[j];
        if (a->kind != EX_ASSIGN || a->kids[0]->kind != EX_WORD)
            continue;
        if (!strcmp(a->kids[0]->text, "fd") && sys_eval_int(r, ev, a->kids[1], sfd) < 0)
            return -1;
        if (!strcmp(a->kids[0]->text, "events") && sys_eval_int(r, ev, a->kids[1], events) < 0)
            return -1;
    }
    return 0;
}

int sys_check_revents(struct run *r, const struct pkt_event *ev, const struct expr *list, const unsigned *got)
{
    for (size_t k = 0; k < list->nkids; k++) {
        const struct expr *p = list->kids[k];
        int64_t want = 0;
        for (size_t j = 0; p->kind == EX_STRUCT && j < p->nkids; j++) {
            const struct expr *a = p->kids[j];
            if (a->kind == EX_ASSIGN && a->kids[0]->kind == EX_WORD && !strcmp(a->kids[0]->text, "revents") &&
                sys_eval_int(r, ev, a->kids[1], &want) < 0)
                return -1;
        }
        if ((unsigned)want != got[k])
            return run_fail(r, PKT_FAIL, ev, "poll: entry %zu: expected revents 0x%x but got 0x%x", k,
                            (unsigned)want, got[k]);
    }
    return 0;
}

int sys_check_epoll(struct run *r, const struct pkt_event *ev, int n, const uint32_t *gotev,
                    const uint64_t *gotdata)
{
    /* The script's event argument: one {events=..., fd=N}, or a list of them. */
    const struct expr *want = sys_arg(ev, 1);
    const struct expr *const *items = &want;
    size_t nitems = 1;
    if (want->kind == EX_LIST) {
        items = (const struct expr *const *)want->kids;
        nitems = want->nkids;
    } else if (want->kind == EX_ELLIPSIS) {
        nitems = 0;
    }
    for (size_t i = 0; i < nitems && i < (size_t)n; i++) {
        int64_t wev, wdata;
        if (sys_epoll_event_arg(r, ev, items[i], &wev, &wdata) < 0)
            return -1;
        if ((uint32_t)wev != gotev[i] || (uint64_t)wdata != gotdata[i])
            return run_fail(r, PKT_FAIL, ev,
                            "epoll_wait: event %zu: expected {events=0x%x, data=%" PRId64
                            "} but got {events=0x%x, "
                            "data=%" PRIu64 "}",
                            i, (unsigned)wev, wdata, gotev[i], gotdata[i]);
    }
    return 0;
}

int sys_check_value(struct run *r, const struct pkt_event *ev, const char *what, const struct expr *want,
                    int64_t actual)
{
    if (want->kind == EX_ELLIPSIS)
        return 0;
    int64_t w;
    if (sys_eval_int(r, ev, want, &w) < 0)
        return -1;
    if (w != actual)
        return run_fail(r, PKT_FAIL, ev, "%s: expected value %" PRId64 " but got %" PRId64, what, w, actual);
    return 0;
}

int sys_check_congestion(struct run *r, const struct pkt_event *ev, const struct expr *want, const char *name)
{
    if (want->kind == EX_STRING && (!name || strcmp(want->text, name) != 0))
        return run_fail(r, PKT_FAIL, ev, "getsockopt TCP_CONGESTION: expected \"%s\" but got \"%s\"",
                        want->text, name ? name : "");
    return 0;
}

/* The expected result as a number, or 0 with *any set for "...". */
static int expected(struct run *r, const struct pkt_event *ev, int64_t *v, int *any)
{
    *any = ev->sys.result->kind == EX_ELLIPSIS;
    if (*any)
        return 0;
    return sys_eval_int(r, ev, ev->sys.result, v);
}

int sys_finish(struct run *r, const struct pkt_event *ev, const struct sys_out *o)
{
    int64_t want;
    int any;
    if (expected(r, ev, &want, &any) < 0)
        return -1;
    const char *n = ev->sys.name;
    int returns_fd = !strcmp(n, "socket") || !strcmp(n, "accept") || !strcmp(n, "accept4") ||
                     !strcmp(n, "epoll_create") || !strcmp(n, "epoll_create1");
    if (returns_fd && o->ret >= 0 && !any && want >= 0 && want < RUN_FDS) {
        r->script_fd[want] = (int)o->ret;
        return 0;
    }
    if (!any && o->ret != want) {
        if (o->ret == -1) {
            const char *en = pkt_errno_name(o->err);
            return run_fail(r, PKT_FAIL, ev,
                            "%s call: expected result %" PRId64 " but got -1 with errno %d (%s)", n, want,
                            o->err, en ? en : "?");
        }
        return run_fail(r, PKT_FAIL, ev, "%s call: expected result %" PRId64 " but got %" PRId64, n, want,
                        o->ret);
    }
    if (o->ret == -1 && ev->sys.errno_name) {
        int64_t e;
        if (!pkt_sym(ev->sys.errno_name, &e))
            return run_fail(r, PKT_BAD_SCRIPT, ev, "unknown errno name %s", ev->sys.errno_name);
        if (e != o->err) {
            const char *en = pkt_errno_name(o->err);
            return run_fail(r, PKT_FAIL, ev, "%s call: expected errno %s but got %s", n, ev->sys.errno_name,
                            en ? en : "?");
        }
    } else if (o->ret == -1 && !ev->sys.errno_name && !any) {
        return run_fail(r, PKT_BAD_SCRIPT, ev, "%s call: a result of -1 needs an errno name", n);
    }
    return 0;
}

void sys_call_times(struct run *r, const struct pkt_event *ev)
{
    r->call.start_us = run_now_us(r);
    r->call.end_us = ev->tkind == TIME_REL ? r->call.start_us - ev->t_us + ev->sys.end_us : ev->sys.end_us;
}

int sys_check_end(struct run *r, const struct pkt_event *ev, int64_t at)
{
    if (!ev->sys.blocking) {
        if (!run_time_ok(r, at, r->call.start_us, r->call.start_us))
            return run_fail(r, PKT_FAIL, ev,
                            "%s call blocked until %.6f sec; the script expects it to return at %.6f (write "
                            "start...end for a blocking call)",
                            ev->sys.name, (double)at / 1e6, (double)r->call.start_us / 1e6);
        return 0;
    }
    if (!run_time_ok(r, at, r->call.end_us, r->call.end_us))
        return run_fail(r, PKT_FAIL, ev,
                        "timing error: expected system call return at %.6f sec but happened at %.6f sec; "
                        "tolerance %.6f sec",
                        (double)r->call.end_us / 1e6, (double)at / 1e6,
                        (double)run_tolerance(r, r->call.end_us) / 1e6);
    return 0;
}
