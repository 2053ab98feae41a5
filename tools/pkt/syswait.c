/*
 * syswait.c — poll, epoll_create / epoll_ctl / epoll_wait of a script, on brisk_sock_poll.
 *
 * Readiness is brisk_sock_poll's level as Linux's tcp_poll reports it (sys.c, vsys_fd_poll). A call with a
 * timeout that finds nothing ready blocks like any blocking call (sys.c): it is retried whenever the stack
 * has done something and wakes by itself at its timeout. An epoll entry is level-triggered unless EPOLLET:
 * then it reports only after a wakeup (a callback from the stack) since its last report, as Linux reports
 * an edge-triggered entry once per wakeup; a new or modified entry reports what is ready at once.
 * EPOLLONESHOT disables the entry after one report until EPOLL_CTL_MOD.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "pkt/vsys.h"

static uint64_t call_wake_at(struct run *r, int64_t timeout_ms)
{
    if (timeout_ms < 0)
        return 0;
    return (uint64_t)r->call.start_us * 1000 + (uint64_t)timeout_ms * BRISK_NSEC_PER_MSEC;
}

struct sys_out vsys_poll(struct run *r, const struct pkt_event *ev, int *rc, uint64_t *wake)
{
    const struct expr *list;
    int64_t timeout;
    if ((*rc = sys_poll_args(r, ev, &list, &timeout)) < 0)
        return SYS_WAIT;
    int ready = 0;
    unsigned got[SYS_POLL_MAX];
    for (size_t k = 0; k < list->nkids; k++) {
        int64_t sfd, events;
        if ((*rc = sys_poll_entry(r, ev, list->kids[k], &sfd, &events)) < 0)
            return SYS_WAIT;
        struct run_fd *f = vsys_sockfd(r, sys_live_fd(r, sfd));
        got[k] = f ? vsys_fd_poll(f) & ((unsigned)events | POLLERR | POLLHUP) : POLLNVAL;
        if (got[k])
            ready++;
    }
    if (ready == 0 && timeout != 0) {
        uint64_t w = call_wake_at(r, timeout);
        if (!w || r->now < w) {
            *wake = w;
            return SYS_WAIT;
        }
    }
    if ((*rc = sys_check_revents(r, ev, list, got)) < 0)
        return SYS_WAIT;
    return sys_ok(ready);
}

struct sys_out vsys_epoll_create(struct run *r, const struct pkt_event *ev, int *rc)
{
    (void)rc;
    (void)ev;
    int fd = vsys_fd_alloc(r);
    if (fd < 0)
        return sys_errno(EMFILE);
    memset(&r->fds[fd], 0, sizeof(r->fds[fd]));
    r->fds[fd].kind = FD_EPOLL;
    return sys_ok(fd);
}

struct sys_out vsys_epoll_ctl(struct run *r, const struct pkt_event *ev, int *rc)
{
    int epfd, fd;
    int64_t op, events = 0, data = 0;
    if ((*rc = sys_need_args(r, ev, 4)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &epfd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 1, &op)) < 0 || (*rc = sys_arg_fd(r, ev, 2, &fd)) < 0)
        return SYS_WAIT;
    if (epfd < 0 || r->fds[epfd].kind != FD_EPOLL || !vsys_sockfd(r, fd))
        return sys_errno(EBADF);
    struct run_fd *e = &r->fds[epfd];
    if (op != EPOLL_CTL_DEL && (*rc = sys_epoll_event_arg(r, ev, sys_arg(ev, 3), &events, &data)) < 0)
        return SYS_WAIT;
    int k;
    for (k = 0; k < e->nep; k++)
        if (e->ep[k].fd == fd)
            break;
    if (op == EPOLL_CTL_ADD) {
        if (k < e->nep)
            return sys_errno(EEXIST);
        if (e->nep == RUN_EPOLL_MAX)
            return sys_errno(ENOSPC);
        e->ep[e->nep++] = (struct run_epoll_entry){.fd = fd, .events = (uint32_t)events, .data = (uint64_t)data};
        r->fds[fd].wakeups = 1; /* a new edge-triggered entry reports what is ready now */
        return sys_ok(0);
    }
    if (k == e->nep)
        return sys_errno(ENOENT);
    if (op == EPOLL_CTL_DEL) {
        e->ep[k] = e->ep[--e->nep];
        return sys_ok(0);
    }
    if (op == EPOLL_CTL_MOD) {
        e->ep[k].events = (uint32_t)events;
        e->ep[k].data = (uint64_t)data;
        e->ep[k].disabled = 0;
        r->fds[fd].wakeups = 1;
        return sys_ok(0);
    }
    return sys_errno(EINVAL);
}

struct sys_out vsys_epoll_wait(struct run *r, const struct pkt_event *ev, int *rc, uint64_t *wake)
{
    int epfd;
    int64_t maxev, timeout;
    if ((*rc = sys_need_args(r, ev, 4)) < 0 || (*rc = sys_arg_fd(r, ev, 0, &epfd)) < 0 ||
        (*rc = sys_arg_int(r, ev, 2, &maxev)) < 0 || (*rc = sys_arg_int(r, ev, 3, &timeout)) < 0)
        return SYS_WAIT;
    if (epfd < 0 || r->fds[epfd].kind != FD_EPOLL)
        return sys_errno(EBADF);
    if (maxev < 1)
        return sys_errno(EINVAL);
    struct run_fd *e = &r->fds[epfd];
    uint32_t gotev[RUN_EPOLL_MAX];
    int gotk[RUN_EPOLL_MAX], n = 0;
    for (int k = 0; k < e->nep && n < maxev; k++) {
        struct run_epoll_entry *en = &e->ep[k];
        struct run_fd *f = vsys_sockfd(r, en->fd);
        if (!f || en->disabled)
            continue;
        uint32_t m = vsys_fd_poll(f) & (en->events | EPOLLERR | EPOLLHUP);
        if (!m)
            continue;
        if ((en->events & EPOLLET) && f->wakeups == 0)
            continue;
        gotev[n] = m;
        gotk[n] = k;
        n++;
    }
    if (n == 0 && timeout != 0) {
        uint64_t w = call_wake_at(r, timeout);
        if (!w || r->now < w) {
            *wake = w;
            return SYS_WAIT;
        }
    }
    for (int i = 0; i < n; i++) {
        struct run_epoll_entry *en = &e->ep[gotk[i]];
        if (en->events & EPOLLET)
            r->fds[en->fd].wakeups = 0;
        if (en->events & EPOLLONESHOT)
            en->disabled = 1;
    }
    uint64_t gotdata[RUN_EPOLL_MAX];
    for (int i = 0; i < n; i++)
        gotdata[i] = e->ep[gotk[i]].data;
    if ((*rc = sys_check_epoll(r, ev, n, gotev, gotdata)) < 0)
        return SYS_WAIT;
    return sys_ok(n);
}

