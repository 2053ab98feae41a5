/*
 * vsys.h — what the virtual backend's system call files share (sys.c, sysopt.c, syswait.c, tcpinfo.c).
 */
#ifndef BRISK_PKT_VSYS_H
#define BRISK_PKT_VSYS_H

#include "pkt/run.h"

#ifndef TCP_INQ
#define TCP_INQ 36
#endif
#ifndef SIOCOUTQNSD
#define SIOCOUTQNSD 0x894B
#endif
#ifndef POLLRDHUP
#define POLLRDHUP 0x2000
#endif

/* Linux's errno for a BRISK_ERR_* code. */
int vsys_errno(int brisk_err);
/* The socket descriptor fd of the run, or NULL if fd is not one. */
struct run_fd *vsys_sockfd(struct run *r, int fd);
/* The lowest free descriptor number (from 3), or -1. */
int vsys_fd_alloc(struct run *r);
/* The connection's error as an errno, reported once (Linux's sock_error clears sk_err); 0 if none. */
int vsys_take_error(struct run_fd *f);
/* poll(2) readiness of a socket descriptor, Linux's view. */
unsigned vsys_fd_poll(struct run_fd *f);

/* The calls the dispatcher (sys.c) hands on. */
struct sys_out vsys_setsockopt(struct run *r, const struct pkt_event *ev, int *rc);
struct sys_out vsys_getsockopt(struct run *r, const struct pkt_event *ev, int *rc);
struct sys_out vsys_poll(struct run *r, const struct pkt_event *ev, int *rc, uint64_t *wake);
struct sys_out vsys_epoll_create(struct run *r, const struct pkt_event *ev, int *rc);
struct sys_out vsys_epoll_ctl(struct run *r, const struct pkt_event *ev, int *rc);
struct sys_out vsys_epoll_wait(struct run *r, const struct pkt_event *ev, int *rc, uint64_t *wake);

#endif
