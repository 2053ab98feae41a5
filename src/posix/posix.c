/*
 * posix.c — libbrisk_posix (posix.h): blocking and non-blocking BSD socket calls for AF_INET TCP (and UDP:
 * the section "UDP" below) over a brisk stack run by a thread of its own; docs/posix.md describes the model.
 *
 * Threads: hand-off by command queue. The stack thread runs brisk_loop_run (loop.h) over the device and
 * one eventfd. An application thread packs a call into a `struct cmd` on its own stack, appends it to a
 * mutex-held list (the eventfd is written only when the list was empty), and sleeps on the command's
 * semaphore; the stack thread, woken, takes the whole list and runs each command against the stack with
 * the loop's `now`, copying data straight between the sleeping caller's buffers and the socket buffers.
 * The mutex guards the list only: it is taken once per call by the caller and once per wakeup by the stack
 * thread, never per segment, and nothing in the stack, the loop or the driver is shared — they stay as
 * single-threaded as brisk is (loop.h: nothing there is thread-safe). Chosen over a mutex around the stack
 * because the loop would have to release it around its epoll_wait and be woken for every timer or TX
 * completion an application thread's call made due; with the queue both come for free: the command runs
 * inside an iteration, which re-arms the timer and runs the driver's completion hook after it. The price is
 * a thread switch per call each way (brisk_posix_stats counts commands and wakeups).
 *
 * Blocking: a command never waits. A call that would block returns EAGAIN from the stack thread; the
 * application thread then sleeps in poll(2) on the socket's own descriptor — whose readiness is the
 * socket's, below — until it is ready or SO_RCVTIMEO / SO_SNDTIMEO passes, and retries. A signal ends the
 * wait with EINTR (as a socket call interrupted by a handler installed without SA_RESTART).
 *
 * Readiness: the descriptor the application holds is one end (A) of an AF_UNIX stream socketpair; the stack
 * thread holds the other end (B) and a duplicate of A (A2, so that its own operations never land on a number
 * the application has closed and reused). After every command and every socket event it makes A's poll
 * state equal to brisk_sock_poll (Linux's tcp_poll rules, ready.c):
 *   IN     bytes queued from B to A ("tokens"): written when the socket becomes readable, read back (through
 *          A2) when it is not;
 *   OUT    A is writable while its own sent bytes that B has not read are below a quarter of its SO_SNDBUF
 *          (unix_writable), which is set to the minimum: a 4 KB write from A2 hides OUT, B reading it back
 *          shows it again;
 *   RDHUP  the peer's FIN: shutdown(B, SHUT_WR) (A: RCV_SHUTDOWN, so IN | RDHUP for good, as a FIN is);
 *   HUP    both directions closed or the connection over: shutdown(B, SHUT_RDWR) with OUT shown
 *          (HUP | IN | RDHUP | OUT, as tcp_poll reports a closed socket);
 *   ERR    the connection's error: one byte left unread in B, then B closed, which sets ECONNRESET as A's
 *          socket error (unix_release_sock): ERR | HUP | IN | RDHUP | OUT, as for a reset TCP socket.
 * The last three cannot be undone, and need not be: TCP's are final too. Level-triggered poll, select and
 * epoll see exactly the socket's level; edge-triggered epoll sees an edge at every change, and one per
 * arrival of data or connection while already readable (another token, up to MAX_TOKENS: Linux's
 * sk_data_ready wakes per segment), not per ACK that frees send space while already writable. The
 * writability rule is sampled after commands and events and, for connected sockets whose OUT is hidden,
 * once per loop iteration (the `watch` list), because a send that queued everything may leave the buffer
 * over the hysteresis mark with no BRISK_EV_WRITABLE to come.
 *
 * Close: the connection goes on in the background, as the kernel's does. The facade closes with an
 * internal linger time so that the handle survives until the FIN is acknowledged (brisk_close returns
 * BRISK_ERR_INPROGRESS, docs/sockets.md), then closes again; brisk_posix_free waits, bounded, for those.
 *
 * Fork: a child of fork() sends its calls to this process's stack thread over a channel of its own, one
 * request message per call, and a socket lives while this process or any forked one holds it (the section
 * "fork" below).
 */
#define _GNU_SOURCE
#include "posix/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/sockios.h>

#define MAX_TOKENS     8
#define FILL_BYTES     4096
#define CLOSE_LINGER   (3600ull * BRISK_NSEC_PER_SEC) /* internal: keeps the handle until the FIN is acked */
#define TABLE_MAX      (1 << 20)
#define UDP_SNDBUF_DEFAULT 212992u /* what SO_SNDBUF reads on a new UDP socket (Linux's wmem_default) */
#define UDP_MAX        65507u      /* the largest UDP payload over IPv4 (65535 less the headers) */

/* The facade's own system calls on its socketpairs go straight to the kernel: in the preload library the
 * libc names are the interposed ones, and A is a brisk descriptor. */
static ssize_t sys_send(int fd, const void *b, size_t n, int fl)
{
    return syscall(SYS_sendto, fd, b, n, fl | MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
}
static ssize_t sys_recv(int fd, void *b, size_t n)
{
    return syscall(SYS_recvfrom, fd, b, n, MSG_DONTWAIT, NULL, NULL);
}
static int sys_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}
static int sys_shutdown(int fd, int how)
{
    return (int)syscall(SYS_shutdown, fd, how);
}
static int sys_fcntl(int fd, int cmd, long arg)
{
    return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

enum role { R_FRESH, R_CONNECTING, R_CONNECTED, R_LISTEN };

struct psock {
    brisk_posix *p;
    brisk_sock *s;   /* NULL once released (and for a UDP socket) */
    brisk_udp *u;    /* a UDP socket's (the section "UDP"); NULL once released, and for TCP */
    int dgram;       /* a UDP socket: also known in a fork's child, whose copy has no stack behind it */
    int fd;          /* A: the application's descriptor (-1 once closed) */
    int fd2;         /* the stack thread's duplicate of A */
    int peer;        /* B (-1 once closed for ERR) */
    int nonblock;
    enum role role;
    int err;         /* pending error (brisk code) for SO_ERROR / the next call */
    int err_given;   /* the connection's error was returned once: reads give 0, writes EPIPE after */
    int connect_told; /* a completed connect was reported (a second connect() gives EISCONN) */
    int rd_shut;
    int v6only;      /* IPV6_V6ONLY (AF_INET6): a v4-mapped address is refused */
    int domain;      /* AF_INET or AF_INET6: the sockaddr family its calls take and give */
    struct brisk_addr baddr; /* the address bind() gave (TCP) */
    uint16_t bport;
    int bound;
    uint64_t rcvtimeo, sndtimeo;
    int reuseaddr, reuseport, linger_on, linger_s;
    /* the mirror */
    int tokens, hidden_out, m_rdhup, m_hup, m_err;
    int widx; /* index in p->watch, -1 */
    int refs; /* descriptor numbers naming the socket (dup): the last close releases it */
    int xrefs; /* processes forked from this one that hold it (struct kin): it is released when both are 0 */
    uint64_t handle; /* how a fork's child names it to this stack: the parent's psock address (never
                      * dereferenced before it is found in the child's set) */
    int stub;        /* in a fork's child: made for it (accept, socket), not inherited; freed at its last
                      * close */
    struct psock *anext, *aprev; /* every live socket (p->all), for fork */
    /* closed by the application, finishing: on p->closing's list; a close() waiting for SO_LINGER */
    struct psock *cnext, *cprev;
    struct cmd *lwait;
    /* UDP (the section "UDP"): shut directions, options the API has no place for, and the datagram a
     * MSG_PEEK took from brisk's queue, held here until a read consumes it (held: 64 KB, made at need) */
    int wr_shut, broadcast;
    uint32_t sndbuf;
    uint8_t *held;
    uint32_t held_len;
    struct brisk_addr held_from;
    uint16_t held_port;
    int held_has;
};

struct cmd {
    void (*fn)(brisk_posix *p, struct cmd *c);
    int fd;
    int flags;
    int a;
    const struct iovec *iov;
    int iovcnt;
    size_t skip; /* bytes of iov already done by earlier commands of the same call */
    const void *in;
    socklen_t inlen;
    void *out;
    socklen_t *outlen;
    int64_t ret;  /* >= 0, or -errno */
    int sigpipe;
    int nonblock; /* the socket's state, for the caller's blocking decisions */
    uint64_t timeo;
    struct psock *ps;   /* a fork's request: the socket, already found in its holder's set */
    struct kin *kin;    /* a fork's request: the process asking (a socket made for it is its, not ours) */
    struct psock *made; /* a fork's socket() / accept(): the socket made, to pass */
    int dgram;          /* out: the socket is UDP (a receive is one datagram, whatever MSG_WAITALL says) */
    size_t moved;       /* out of a receive: the bytes put in the caller's buffers (with MSG_TRUNC, a TCP
                         * receive moves none and a UDP one returns the datagram's length) */
    int mflags;         /* out of a receive: msg_flags (MSG_TRUNC: a datagram longer than the buffers) */
    _Atomic uint32_t state; /* CMD_PENDING, CMD_SLEEPING (the caller waits on the futex) or CMD_DONE */
    sem_t linger; /* posted when a lingering close's FIN is acknowledged (or the connection ends) */
    struct cmd *next;
};

struct brisk_posix {
    struct brisk_posix_config cfg;
    brisk_stack *st;
    brisk_loop *l;
    pthread_t thread;
    int running;
    int efd;
    int hook;
    pthread_mutex_t qlock;
    struct cmd *qhead, *qtail;
    _Atomic(struct psock *) *tab;
    atomic_uchar *cloexec; /* per number: the FD_CLOEXEC the application asked for (the kernel's is always set) */
    int tabsz;
    struct psock **watch;
    int nwatch, capwatch;
    struct psock *closing; /* list of sockets finishing their close */
    uint32_t eph; /* next port tried by an implicit bind at listen */
    struct brisk_posix_stats stats;
    uint8_t *ubuf; /* a UDP send gathered from several buffers (64 KB, made at need; stack thread) */
    struct psock *all; /* every socket not yet released */
    int hi;            /* 1 + the highest number ever put in the table */
    pid_t pid;         /* the process whose thread runs the stack */
    /* fork (the section "fork" below): the processes forked from this one, on the stack thread */
    struct kin *kins;
    int kep;              /* an epoll set of the kins' channels, one descriptor of the loop (-1: none yet) */
    uint8_t *kbuf, *rbuf; /* a request read, a reply built */
    pthread_mutex_t forklock; /* held from fork's prepare to its parent / child handler */
    sem_t fork_go;            /* posted by the parent's handler: the stack thread, waiting, goes on */
    int fork_sv[2];           /* the channel being made for the child */
    /* in a fork's child: its requests go to the stack over `chan` */
    int remote;
    int chan;
    int dead;  /* the channel ended: the stack is gone */
    int told;  /* the stack-gone message was printed */
    pthread_mutex_t rlock; /* one request at a time on chan; the child's table and counts */
    /* A page the kernel zeroes in a child made without fork()'s handlers (MADV_WIPEONFORK: _Fork, clone):
     * 1 here and in children set up by brisk_posix_fork_child, 0 in such a child, which would otherwise
     * queue commands nobody runs, or share its parent's channel. NULL if it could not be made. */
    volatile uint8_t *alive;
    int unserved_told;
};

/* The UDP commands (the section "UDP" below): the do_* commands hand a UDP socket to these. */
static void on_udp_event(void *ctx, brisk_udp *u, unsigned ev, uint64_t now);
static void udp_bind(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_connect(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_recv(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_send(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_shutdown(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_getname(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_setsockopt(brisk_posix *p, struct cmd *c, struct psock *ps);
static int udp_getsockopt(brisk_posix *p, struct cmd *c, struct psock *ps);
static void udp_ioctl(brisk_posix *p, struct cmd *c, struct psock *ps);

/* ---------------------------------------------------------------------------------------------------- */

int brisk_posix_errno(int e)
{
    switch (e) {
    case BRISK_OK: return 0;
    case BRISK_ERR_INVAL: return EINVAL;
    case BRISK_ERR_NOMEM: return ENOMEM;
    case BRISK_ERR_NOENT: return ENOENT;
    case BRISK_ERR_RANGE: return EINVAL;
    case BRISK_ERR_NOROUTE: return ENETUNREACH;
    case BRISK_ERR_AGAIN: return EAGAIN;
    case BRISK_ERR_BUSY: return EAGAIN;
    case BRISK_ERR_NOBUFS: return ENOBUFS;
    case BRISK_ERR_MSGSIZE: return EMSGSIZE;
    case BRISK_ERR_EXIST: return EEXIST;
    case BRISK_ERR_UNREACH: return EHOSTUNREACH;
    case BRISK_ERR_TOOMANY: return ENOBUFS;
    case BRISK_ERR_CONNREFUSED: return ECONNREFUSED;
    case BRISK_ERR_RESET: return ECONNRESET;
    case BRISK_ERR_TIMEDOUT: return ETIMEDOUT;
    case BRISK_ERR_NOTCONN: return ENOTCONN;
    case BRISK_ERR_ISCONN: return EISCONN;
    case BRISK_ERR_ADDRINUSE: return EADDRINUSE;
    case BRISK_ERR_PIPE: return EPIPE;
    case BRISK_ERR_INPROGRESS: return EINPROGRESS;
    case BRISK_ERR_ADDRNOTAVAIL: return EADDRNOTAVAIL;
    case BRISK_ERR_NETUNREACH: return ENETUNREACH;
    case BRISK_ERR_HOSTDOWN: return EHOSTDOWN;
    case BRISK_ERR_NONET: return ENONET;
    case BRISK_ERR_NOPROTOOPT: return ENOPROTOOPT;
    case BRISK_ERR_PROTO: return EPROTO;
    case BRISK_ERR_OPNOTSUPP: return EOPNOTSUPP;
    case BRISK_ERR_AFNOSUPPORT: return EAFNOSUPPORT;
    default: return EIO;
    }
}

void brisk_posix_config_default(struct brisk_posix_config *c)
{
    memset(c, 0, sizeof(*c));
    brisk_settings_default(&c->settings);
    c->exit_wait_ns = 10 * BRISK_NSEC_PER_SEC;
    /* spin_ns 0: busy polling is asked for (BRISK_BUSY_POLL), never assumed. It pays only while the two
     * threads run at once on two otherwise idle CPUs; on a busy machine the spinner takes the CPU from the
     * thread that would answer (docs/posix.md, "Busy polling": 8,506 -> 110 requests/s with both CPUs
     * loaded). */
}

int brisk_posix_owns(const brisk_posix *p, int fd)
{
    return p && fd >= 0 && fd < p->tabsz && atomic_load_explicit(&p->tab[fd], memory_order_acquire) != NULL;
}

int brisk_posix_table_size(const brisk_posix *p)
{
    return p ? p->tabsz : 0;
}

void brisk_posix_vsay(const char *fmt, va_list ap)
{
    char line[320];
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (syscall(SYS_write, 2, line, (size_t)n) < 0)
        return;
}

void brisk_posix_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    brisk_posix_vsay(fmt, ap);
    va_end(ap);
}
#define say brisk_posix_say

static void plog(brisk_posix *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plog(brisk_posix *p, const char *fmt, ...)
{
    if (!p->cfg.log)
        return;
    va_list ap;
    va_start(ap, fmt);
    brisk_posix_vsay(fmt, ap);
    va_end(ap);
}

/* ---- the mirror (stack thread) --------------------------------------------------------------------- */

static void watch_set(brisk_posix *p, struct psock *ps, int on)
{
    if (on && ps->widx < 0) {
        if (p->nwatch == p->capwatch) {
            int cap = p->capwatch ? 2 * p->capwatch : 16;
            struct psock **w = realloc(p->watch, (size_t)cap * sizeof(*w));
            if (!w)
                return; /* then only events move OUT: the hysteresis case may lag until the next one */
            p->watch = w;
            p->capwatch = cap;
        }
        ps->widx = p->nwatch;
        p->watch[p->nwatch++] = ps;
    } else if (!on && ps->widx >= 0) {
        struct psock *last = p->watch[--p->nwatch];
        p->watch[ps->widx] = last;
        last->widx = ps->widx;
        ps->widx = -1;
    }
}

static void token_add(brisk_posix *p, struct psock *ps)
{
    if (ps->peer < 0 || ps->tokens >= MAX_TOKENS)
        return;
    p->stats.mirror_ops++;
    if (sys_send(ps->peer, "r", 1, 0) == 1)
        ps->tokens++;
}

static void tokens_drain(brisk_posix *p, struct psock *ps)
{
    char b[64];
    p->stats.mirror_ops++;
    while (sys_recv(ps->fd2, b, sizeof(b)) > 0)
        p->stats.mirror_ops++;
    ps->tokens = 0;
}

static void out_hide(brisk_posix *p, struct psock *ps)
{
    static const char fill[FILL_BYTES];
    for (int i = 0; i < 4; i++) {
        p->stats.mirror_ops++;
        if (sys_send(ps->fd2, fill, sizeof(fill), 0) < 0)
            break;
        struct pollfd pf = {ps->fd2, POLLOUT, 0};
        p->stats.mirror_ops++;
        if (syscall(SYS_poll, &pf, 1, 0) == 0)
            break;
    }
    ps->hidden_out = 1;
}

static void out_show(brisk_posix *p, struct psock *ps)
{
    char b[FILL_BYTES];
    p->stats.mirror_ops++;
    while (sys_recv(ps->peer, b, sizeof(b)) > 0)
        p->stats.mirror_ops++;
    ps->hidden_out = 0;
}

/* HUP: both directions over (B shut both ways, OUT shown, as tcp_poll and datagram_poll report it). Final. */
static void show_hup(brisk_posix *p, struct psock *ps)
{
    if (ps->m_hup)
        return;
    if (ps->hidden_out)
        out_show(p, ps);
    p->stats.mirror_ops++;
    sys_shutdown(ps->peer, SHUT_RDWR);
    ps->m_hup = ps->m_rdhup = 1;
}

/* RDHUP: nothing more will be received (B's write side shut: A is readable for good). Final. */
static void show_rdhup(brisk_posix *p, struct psock *ps)
{
    if (ps->m_rdhup)
        return;
    p->stats.mirror_ops++;
    sys_shutdown(ps->peer, SHUT_WR);
    ps->m_rdhup = 1;
}

/* A UDP socket's poll state for the mirror (Linux's udp_poll / datagram_poll): IN while a datagram (or the
 * one a MSG_PEEK holds here) or an error waits, OUT unless a send was refused for room; a shut receive side
 * is RDHUP and IN for good, both sides shut HUP. An ICMP error shows as IN only — its ERR would have to be
 * taken back when it is read (SO_ERROR, recv), and the mirror's ERR (B closed) cannot be; the reader that
 * wakes gets the error. Returns 0 when the state is final (HUP) and nothing is left to do. */
static int udp_mirror(brisk_posix *p, struct psock *ps, int *in, int *out)
{
    if (ps->rd_shut && ps->wr_shut) {
        show_hup(p, ps);
        return 0;
    }
    if (ps->rd_shut)
        show_rdhup(p, ps);
    unsigned m = brisk_udp_poll(ps->u);
    *in = (m & BRISK_POLL_IN) || ps->held_has;
    *out = (m & BRISK_POLL_OUT) != 0;
    return 1;
}

/* Makes A's poll state the socket's (the table in the file's opening comment). */
static void sync_mirror(brisk_posix *p, struct psock *ps)
{
    if ((!ps->s && !ps->u) || ps->fd2 < 0 || ps->m_err)
        return;
    int want_in, want_out;
    if (ps->u) {
        if (!udp_mirror(p, ps, &want_in, &want_out))
            return;
    } else if (ps->role == R_FRESH) {
        want_in = 0; /* tcp_poll on a new socket: OUT | HUP; HUP is not shown (it could not be undone) */
        want_out = 1;
    } else if (ps->role == R_LISTEN) {
        want_in = (brisk_sock_poll(ps->s) & BRISK_POLL_IN) != 0;
        want_out = 0;
    } else {
        unsigned m = brisk_sock_poll(ps->s);
        if (m & BRISK_POLL_ERR) {
            /* A byte B never reads, then B closed: A's socket error becomes ECONNRESET. */
            p->stats.mirror_ops += 2;
            if (!ps->hidden_out && sys_send(ps->fd2, "e", 1, 0) < 0)
                p->stats.mirror_ops++;
            sys_close(ps->peer);
            ps->peer = -1;
            ps->m_err = ps->m_hup = ps->m_rdhup = 1;
            watch_set(p, ps, 0);
            return;
        }
        if (m & BRISK_POLL_HUP) {
            show_hup(p, ps);
            watch_set(p, ps, 0);
            return;
        }
        if ((m & BRISK_POLL_RDHUP) || ps->rd_shut)
            show_rdhup(p, ps);
        want_in = (m & BRISK_POLL_IN) != 0;
        want_out = (m & BRISK_POLL_OUT) != 0;
    }
    if (want_in && !ps->tokens && !ps->m_rdhup)
        token_add(p, ps);
    else if (!want_in && ps->tokens)
        tokens_drain(p, ps);
    if (want_out && ps->hidden_out)
        out_show(p, ps);
    else if (!want_out && !ps->hidden_out)
        out_hide(p, ps);
    watch_set(p, ps, ps->role == R_CONNECTED && ps->hidden_out);
}

static void on_event(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    (void)now;
    struct psock *ps = ctx;
    brisk_posix *p = ps->p;
    if (ev & BRISK_EV_ERROR) {
        ps->err = brisk_sock_error(s);
        plog(p, "brisk: fd %d: %s", ps->fd, brisk_strerror(ps->err));
    }
    if ((ev & BRISK_EV_CONNECTED) && ps->role == R_CONNECTING)
        ps->role = R_CONNECTED;
    if ((ev & (BRISK_EV_READABLE | BRISK_EV_ACCEPT)) && ps->tokens)
        token_add(p, ps); /* an edge for edge-triggered epoll, as each arrival wakes in Linux */
    sync_mirror(p, ps);
}

/* Callback of a closed socket that lingers (internally) until its FIN is acknowledged. */
static void on_closing(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct psock *ps = ctx;
    if (!(ev & (BRISK_EV_FIN_ACKED | BRISK_EV_CLOSED | BRISK_EV_ERROR)))
        return;
    brisk_posix *p = ps->p;
    brisk_close(s, now); /* releases the handle from the state reached */
    p->stats.closing--;
    if (ps->lwait)
        sem_post(&ps->lwait->linger);
    if (ps->cprev)
        ps->cprev->cnext = ps->cnext;
    else
        p->closing = ps->cnext;
    if (ps->cnext)
        ps->cnext->cprev = ps->cprev;
    free(ps);
}

static uint64_t on_hook(void *ctx, brisk_loop *l, uint64_t now)
{
    (void)l;
    (void)now;
    brisk_posix *p = ctx;
    for (int i = p->nwatch - 1; i >= 0; i--)
        if (i < p->nwatch)
            sync_mirror(p, p->watch[i]);
    return BRISK_TIME_NONE;
}

/* ---- the hand-off ------------------------------------------------------------------------------------ */

/* A command's completion, as a word the caller may spin on and then sleep on (a futex), in place of a
 * semaphore: spinning needs a flag the stack thread sets, and with a semaphore beside it the stack thread
 * would touch the command after the caller may have seen the flag and returned (the command lives on the
 * caller's stack). One atomic exchange ends the command: after it the stack thread touches only the word's
 * address, to wake a sleeper (harmless if the caller has gone: a futex wake on a live stack page). */
enum { CMD_PENDING, CMD_SLEEPING, CMD_DONE };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void cmd_done(struct cmd *c)
{
    if (atomic_exchange_explicit(&c->state, CMD_DONE, memory_order_acq_rel) == CMD_SLEEPING)
        syscall(SYS_futex, &c->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Waits for the stack thread to end c: spinning up to spin_ns (the thread answers within microseconds when
 * it runs on another CPU, and a sleep costs a wake-up that, on a virtual machine, is tens of microseconds),
 * then on the futex. */
static void cmd_wait(struct cmd *c, uint64_t spin_ns)
{
    if (spin_ns) {
        uint64_t until = 0;
        for (unsigned i = 0;; i++) {
            if (atomic_load_explicit(&c->state, memory_order_acquire) == CMD_DONE)
                return;
            if ((i & 63) == 0) {
                uint64_t t = mono_ns();
                if (!until)
                    until = t + spin_ns;
                else if (t >= until)
                    break;
            }
            cpu_relax();
        }
    }
    uint32_t expect = CMD_PENDING;
    if (!atomic_compare_exchange_strong_explicit(&c->state, &expect, CMD_SLEEPING, memory_order_acq_rel,
                                                 memory_order_acquire))
        return; /* done meanwhile */
    while (atomic_load_explicit(&c->state, memory_order_acquire) != CMD_DONE)
        syscall(SYS_futex, &c->state, FUTEX_WAIT_PRIVATE, CMD_SLEEPING, NULL, NULL, 0); /* EINTR, EAGAIN: again */
}

static void do_fork_hold(brisk_posix *p, struct cmd *c);

static void on_cmds(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)l;
    (void)ready;
    (void)now;
    brisk_posix *p = ctx;
    uint64_t v;
    /* Drain first: a caller that finds the list empty after we took it writes again. */
    if (syscall(SYS_read, fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        return;
    pthread_mutex_lock(&p->qlock);
    struct cmd *c = p->qhead;
    p->qhead = p->qtail = NULL;
    pthread_mutex_unlock(&p->qlock);
    while (c) {
        struct cmd *next = c->next;
        p->stats.commands++;
        c->fn(p, c);
        int forking = c->fn == do_fork_hold && c->ret == 0;
        cmd_done(c); /* c belongs to the caller again */
        if (forking) /* until the parent's fork handler: the child's copy is of a thread standing still */
            while (sem_wait(&p->fork_go) < 0)
                ;
        c = next;
    }
}

static void *stack_main(void *arg)
{
    brisk_posix *p = arg;
    int rc = brisk_loop_run(p->l, BRISK_TIME_NONE);
    if (rc != BRISK_OK) {
        /* epoll_wait or the timerfd failed: every caller would wait for ever on its command. Say so and
         * stop the process rather than hang it. */
        fprintf(stderr, "brisk: the stack thread's loop failed (%s): aborting\n", strerror(errno));
        abort();
    }
    return NULL;
}

static int64_t remote_call(brisk_posix *p, struct cmd *c);

/* Runs c->fn on the stack thread and waits for it; returns c->ret with errno set when negative. In a fork's
 * child the command goes to the stack over the child's channel instead (remote_call). */
static int unserved(brisk_posix *p)
{
    if (!p->alive || *p->alive)
        return 0;
    if (!p->unserved_told++)
        say("brisk: pid %d: a process made without fork()'s handlers (_Fork, clone) uses a brisk socket: brisk "
            "serves only children of fork() (docs/posix.md, fork): failing with EBADF",
            (int)getpid());
    errno = EBADF;
    return 1;
}

static int64_t call(brisk_posix *p, struct cmd *c)
{
    if (unserved(p))
        return -1;
    if (p->remote)
        return remote_call(p, c);
    int cancel;
    /* Not cancellable while the stack thread may use c, which lives on this thread's stack. */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    atomic_init(&c->state, CMD_PENDING);
    c->next = NULL;
    pthread_mutex_lock(&p->qlock);
    int was_empty = p->qhead == NULL;
    if (p->qtail)
        p->qtail->next = c;
    else
        p->qhead = c;
    p->qtail = c;
    if (was_empty)
        p->stats.wakeups++;
    pthread_mutex_unlock(&p->qlock);
    if (was_empty) {
        uint64_t one = 1;
        if (syscall(SYS_write, p->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
            abort(); /* the eventfd is ours: failing to write it is a bug, and a silent hang otherwise */
    }
    cmd_wait(c, p->cfg.spin_ns); /* EINTR does not end it: the stack thread may still be using c */
    pthread_setcancelstate(cancel, NULL);
    if (c->ret < 0) {
        errno = (int)-c->ret;
        return -1;
    }
    return c->ret;
}

static struct psock *lookup(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = c->ps; /* a fork's request names its socket itself */
    if (!ps && (c->fd < 0 || c->fd >= p->tabsz))
        return NULL;
    if (!ps)
        ps = atomic_load_explicit(&p->tab[c->fd], memory_order_relaxed);
    if (ps) {
        c->nonblock = ps->nonblock; /* for the caller's decision to wait */
        c->dgram = ps->dgram;
    }
    return ps;
}

/* ---- creation and release ---------------------------------------------------------------------------- */

static void kin_hold(brisk_posix *p, struct kin *k, struct psock *ps);

/* A psock for brisk socket s (NULL: make one; a UDP socket when dgram), with a fresh socketpair; registered
 * in the table, or for a fork's request (kin) held by that process, A to be passed to it (the caller closes
 * this process's copy). */
static struct psock *psock_new(brisk_posix *p, brisk_sock *s, int dgram, int flags, struct kin *kin, int *err)
{
    int sv[2];
    if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        *err = errno;
        return NULL;
    }
    if (!kin && sv[0] >= p->tabsz) {
        sys_close(sv[0]);
        sys_close(sv[1]);
        *err = EMFILE;
        return NULL;
    }
    int fd2 = sys_fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
    struct psock *ps = calloc(1, sizeof(*ps));
    if (fd2 < 0 || !ps) {
        *err = fd2 < 0 ? errno : ENOMEM;
        free(ps);
        if (fd2 >= 0)
            sys_close(fd2);
        sys_close(sv[0]);
        sys_close(sv[1]);
        return NULL;
    }
    int one = 1; /* clamped to the minimum, so that a 4 KB write hides POLLOUT */
    syscall(SYS_setsockopt, sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
    /* A stays close-on-exec whatever the application asked: no stack would serve it after exec, and an
     * inherited socketpair end would swallow what the new program writes. fcntl(F_GETFD) reports the
     * application's choice. */
    if (!kin)
        atomic_store_explicit(&p->cloexec[sv[0]], (flags & SOCK_CLOEXEC) != 0, memory_order_relaxed);
    if (flags & SOCK_NONBLOCK)
        sys_fcntl(sv[0], F_SETFL, O_RDWR | O_NONBLOCK);
    int berr = 0;
    brisk_udp *u = NULL;
    if (dgram)
        u = brisk_udp_socket(p->st, &berr);
    else if (!s)
        s = brisk_socket(p->st, &berr);
    if (!s && !u) {
        *err = brisk_posix_errno(berr);
        free(ps);
        sys_close(fd2);
        sys_close(sv[0]);
        sys_close(sv[1]);
        return NULL;
    }
    ps->p = p;
    ps->s = s;
    ps->u = u;
    ps->dgram = dgram;
    ps->sndbuf = UDP_SNDBUF_DEFAULT;
    ps->fd = sv[0];
    ps->fd2 = fd2;
    ps->peer = sv[1];
    ps->nonblock = (flags & SOCK_NONBLOCK) != 0;
    ps->widx = -1;
    ps->handle = (uint64_t)(uintptr_t)ps;
    ps->anext = p->all;
    if (p->all)
        p->all->aprev = ps;
    p->all = ps;
    p->stats.sockets_open++;
    if (kin) {
        kin_hold(p, kin, ps);
        return ps;
    }
    ps->refs = 1;
    if (ps->fd >= p->hi)
        p->hi = ps->fd + 1;
    atomic_store_explicit(&p->tab[ps->fd], ps, memory_order_release);
    return ps;
}

static void do_socket(brisk_posix *p, struct cmd *c)
{
    int err = 0;
    int domain = AF_INET;
    if (c->in && c->inlen == sizeof(int))
        memcpy(&domain, c->in, sizeof(int));
    struct psock *ps = psock_new(p, NULL, c->a == SOCK_DGRAM, c->flags, c->kin, &err);
    if (!ps) {
        c->ret = -err;
        return;
    }
    ps->domain = domain;
    if (ps->u)
        brisk_udp_set_callback(ps->u, on_udp_event, ps);
    else
        brisk_sock_set_callback(ps->s, on_event, ps);
    c->made = ps;
    c->ret = ps->fd;
}

/* The last descriptor naming the socket has left the table; the connection, if any, finishes in the
 * background. The caller closes that descriptor itself afterwards (closing it here would free the number
 * before the call returns). */
static void release(brisk_posix *p, struct psock *ps, struct cmd *c, uint64_t now)
{
    p->stats.sockets_open--;
    if (ps->aprev)
        ps->aprev->anext = ps->anext;
    else
        p->all = ps->anext;
    if (ps->anext)
        ps->anext->aprev = ps->aprev;
    ps->anext = ps->aprev = NULL;
    watch_set(p, ps, 0);
    sys_close(ps->fd2);
    if (ps->peer >= 0)
        sys_close(ps->peer);
    ps->fd = ps->fd2 = ps->peer = -1;
    if (ps->u) { /* nothing to finish: queued datagrams go with it, as Linux's udp_destroy_sock */
        brisk_udp_close(ps->u);
        free(ps->held);
        free(ps);
        return;
    }
    brisk_sock *s = ps->s;
    ps->s = NULL;
    if (ps->role != R_CONNECTED || (ps->linger_on && ps->linger_s == 0)) {
        if (ps->linger_on && ps->linger_s == 0)
            brisk_setsockopt(s, BRISK_SO_LINGER0, 1, now);
        brisk_sock_set_callback(s, NULL, NULL);
        brisk_close(s, now); /* listener, unconnected, connecting: gone at once; LINGER 0: RST */
        free(ps);
        return;
    }
    brisk_setsockopt(s, BRISK_SO_LINGER, CLOSE_LINGER, now);
    ps->s = s;
    brisk_sock_set_callback(s, on_closing, ps);
    if (brisk_close(s, now) == BRISK_ERR_INPROGRESS) {
        p->stats.closing++;
        ps->cnext = p->closing;
        if (p->closing)
            p->closing->cprev = ps;
        p->closing = ps;
        if (c && ps->linger_on && ps->linger_s > 0) {
            /* Linux's close() sleeps until the FIN is acknowledged or the linger time passes
             * (sk_stream_wait_close), on a non-blocking socket too: the caller waits on c->linger. */
            ps->lwait = c;
            c->a = 1;
            c->timeo = (uint64_t)ps->linger_s * BRISK_NSEC_PER_SEC;
        }
        return;
    }
    free(ps);
}

/* One of this process's numbers for ps has left the table: the socket is released with the last one,
 * unless a fork's child still holds it — then it lives on for the child ("orphaned": no number here), as a
 * kernel socket lives while any process holds its file. */
static void unref(brisk_posix *p, struct psock *ps, struct cmd *c, uint64_t now)
{
    if (--ps->refs > 0)
        return;
    if (ps->xrefs) {
        plog(p, "brisk: fd %d closed here, still held by %d forked process(es)", ps->fd, ps->xrefs);
        ps->fd = -1;
        return;
    }
    release(p, ps, c, now);
}

/* A lingering close() whose time passed stops waiting: its command is about to go away. */
static void do_unlinger(brisk_posix *p, struct cmd *c)
{
    for (struct psock *ps = p->closing; ps; ps = ps->cnext)
        if (ps->lwait == c->out)
            ps->lwait = NULL;
    c->ret = 0;
}

static void do_close(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    plog(p, "brisk: close fd %d", c->fd);
    atomic_store_explicit(&p->tab[c->fd], NULL, memory_order_release);
    unref(p, ps, c, brisk_loop_now(p->l));
    c->ret = 0;
}

/* dup / dup3 / F_DUPFD: another number for the same socket — the kernel's duplicate of A shares its open
 * file, so its readiness is the socket's too. c->a: -1 lowest free >= c->flags (F_DUPFD), else the target
 * of dup3 with flags c->flags. */
static void do_dup(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    long r;
    if (c->a < 0) {
        r = syscall(SYS_fcntl, c->fd, F_DUPFD_CLOEXEC, (long)c->flags);
    } else {
        if (c->a >= p->tabsz) {
            c->ret = -EBADF;
            return;
        }
        struct psock *old = atomic_load_explicit(&p->tab[c->a], memory_order_relaxed);
        if (old == ps) {
            c->ret = c->a; /* already a name of this socket; dup3 only sets the flag */
            atomic_store_explicit(&p->cloexec[c->a], (c->flags & O_CLOEXEC) != 0, memory_order_relaxed);
            return;
        }
        r = syscall(SYS_dup3, c->fd, c->a, O_CLOEXEC); /* closes whatever c->a was, atomically */
        if (r >= 0 && old) {
            atomic_store_explicit(&p->tab[c->a], NULL, memory_order_release);
            unref(p, old, NULL, brisk_loop_now(p->l));
        }
    }
    if (r < 0) {
        c->ret = -errno;
        return;
    }
    if (r >= p->tabsz) {
        sys_close((int)r);
        c->ret = -EMFILE;
        return;
    }
    ps->refs++;
    if (r >= p->hi)
        p->hi = (int)r + 1;
    atomic_store_explicit(&p->cloexec[r], c->a < 0 ? c->inlen != 0 : (c->flags & O_CLOEXEC) != 0,
                          memory_order_relaxed);
    atomic_store_explicit(&p->tab[r], ps, memory_order_release);
    c->ret = r;
}

/* A brisk socket's number is about to be reused by the caller's dup2 / dup3 of a kernel descriptor: drop
 * it from the table (releasing the socket if it was the last name) without closing the number. */
static void do_forget(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    atomic_store_explicit(&p->tab[c->fd], NULL, memory_order_release);
    unref(p, ps, NULL, brisk_loop_now(p->l));
    c->ret = 0;
}

/* ---- addresses --------------------------------------------------------------------------------------- */

static int sin_parse(const void *sa, socklen_t len, uint32_t *addr, uint16_t *port, int connect)
{
    if (!sa)
        return -EFAULT;
    if (len < (socklen_t)sizeof(struct sockaddr_in))
        return -EINVAL;
    struct sockaddr_in sin;
    memcpy(&sin, sa, sizeof(sin));
    /* bind accepts AF_UNSPEC for an AF_INET socket, as Linux does for INADDR_ANY */
    if (sin.sin_family != AF_INET && !(sin.sin_family == AF_UNSPEC && !connect))
        return -EAFNOSUPPORT;
    *addr = ntohl(sin.sin_addr.s_addr);
    *port = ntohs(sin.sin_port);
    return 0;
}

static void sin_put(void *out, socklen_t *len, uint32_t addr, uint16_t port)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(addr);
    sin.sin_port = htons(port);
    if (out && len) {
        size_t n = *len < (socklen_t)sizeof(sin) ? (size_t)*len : sizeof(sin);
        memcpy(out, &sin, n);
    }
    if (len)
        *len = sizeof(sin);
}

/* A TCP socket's sockaddr (bind, connect) as a brisk address, as Linux's inet_bind / inet6_bind and the
 * connects read it: an AF_INET socket takes sockaddr_in (bind: AF_UNSPEC as INADDR_ANY); an AF_INET6 one
 * sockaddr_in6 (at least the 24 bytes of RFC 2133's, without the scope id), where ::ffff:a.b.c.d names
 * IPv4 address a.b.c.d — refused on an IPV6_V6ONLY socket (bind EINVAL, connect ENETUNREACH) — and :: any
 * address of either family (brisk's own ::, IPv6 only with IPV6_V6ONLY). The scope id of a link-local
 * address is not checked: the stack's IPv6 addresses are on one device. */
static int sa_parse(const struct psock *ps, const void *sa, socklen_t len, struct brisk_addr *addr, uint16_t *port,
                    int connect)
{
    if (ps->domain != AF_INET6) {
        uint32_t a4;
        int rc = sin_parse(sa, len, &a4, port, connect);
        if (rc == 0)
            *addr = brisk_addr_v4(a4);
        return rc;
    }
    if (!sa)
        return -EFAULT;
    if (len < 24)
        return -EINVAL;
    struct sockaddr_in6 sin6;
    memset(&sin6, 0, sizeof(sin6));
    memcpy(&sin6, sa, len < (socklen_t)sizeof(sin6) ? (size_t)len : sizeof(sin6));
    if (sin6.sin6_family != AF_INET6)
        return -EAFNOSUPPORT;
    *port = ntohs(sin6.sin6_port);
    const uint8_t *b = sin6.sin6_addr.s6_addr;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(b, mapped, sizeof(mapped))) {
        if (ps->v6only)
            return connect ? -ENETUNREACH : -EINVAL;
        *addr = brisk_addr_v4((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
        return 0;
    }
    *addr = (struct brisk_addr){.family = BRISK_AF_INET6};
    memcpy(addr->u.v6, b, 16);
    return 0;
}

/* A TCP socket's address as its family's sockaddr: sockaddr_in, or for AF_INET6 sockaddr_in6 with an IPv4
 * address as ::ffff:a.b.c.d (Linux's view of an IPv4 connection on a dual-stack socket) and any as ::.
 * *len becomes the full size, as getsockname's; at most the caller's *len bytes are written. */
static void sa_put(const struct psock *ps, void *out, socklen_t *len, const struct brisk_addr *a, uint16_t port)
{
    if (ps->domain != AF_INET6) {
        sin_put(out, len, a->family == BRISK_AF_INET ? a->u.v4 : 0, port);
        return;
    }
    struct sockaddr_in6 sin6;
    memset(&sin6, 0, sizeof(sin6));
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    uint8_t *b = sin6.sin6_addr.s6_addr;
    if (a->family == BRISK_AF_INET6) {
        memcpy(b, a->u.v6, 16);
    } else if (a->family == BRISK_AF_INET && a->u.v4) {
        b[10] = b[11] = 0xff;
        b[12] = (uint8_t)(a->u.v4 >> 24);
        b[13] = (uint8_t)(a->u.v4 >> 16);
        b[14] = (uint8_t)(a->u.v4 >> 8);
        b[15] = (uint8_t)a->u.v4;
    }
    if (out && len) {
        size_t n = *len < (socklen_t)sizeof(sin6) ? (size_t)*len : sizeof(sin6);
        memcpy(out, &sin6, n);
    }
    if (len)
        *len = sizeof(sin6);
}

/* An address and port for logs: a.b.c.d:p or [v6]:p. */
static const char *addr_text(const struct brisk_addr *a, uint16_t port, char *buf, size_t n)
{
    char t[BRISK_ADDR_STRLEN];
    snprintf(buf, n, a->family == BRISK_AF_INET6 ? "[%s]:%u" : "%s:%u", brisk_addr_format(a, t), port);
    return buf;
}

/* Binds an ephemeral port, as Linux does at bind(port 0) and at listen() unbound (inet_autobind). */
static int autobind(brisk_posix *p, struct psock *ps, const struct brisk_addr *addr)
{
    int rc = BRISK_ERR_ADDRINUSE;
    for (int i = 0; i < 28232 && rc == BRISK_ERR_ADDRINUSE; i++) {
        uint16_t port = (uint16_t)(32768 + (p->eph++ % 28232));
        rc = brisk_bind_addr(ps->s, addr, port);
        if (rc == BRISK_OK) {
            ps->bound = 1;
            ps->baddr = *addr;
            ps->bport = port;
        }
    }
    return rc;
}

static void do_bind(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    struct brisk_addr addr;
    uint16_t port;
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_bind(p, c, ps);
        return;
    }
    int rc = sa_parse(ps, c->in, c->inlen, &addr, &port, 0);
    if (rc < 0) {
        c->ret = rc;
        return;
    }
    if (ps->bound || ps->role != R_FRESH) {
        c->ret = -EINVAL;
        return;
    }
    rc = port ? brisk_bind_addr(ps->s, &addr, port) : autobind(p, ps, &addr);
    if (rc < 0) {
        c->ret = -brisk_posix_errno(rc);
        return;
    }
    ps->bound = 1;
    ps->baddr = addr;
    if (port)
        ps->bport = port;
    c->ret = 0;
}

static void do_listen(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        c->ret = -EOPNOTSUPP; /* Linux: a datagram socket does not listen */
        return;
    }
    if (ps->role != R_FRESH && ps->role != R_LISTEN) {
        c->ret = -EINVAL;
        return;
    }
    if (!ps->bound) { /* an AF_INET6 socket listens on :: (both families unless IPV6_V6ONLY) */
        struct brisk_addr any = {.family = ps->domain == AF_INET6 ? BRISK_AF_INET6 : BRISK_AF_INET};
        int rc = autobind(p, ps, &any);
        if (rc < 0) {
            c->ret = -brisk_posix_errno(rc);
            return;
        }
    }
    int rc = brisk_listen(ps->s, c->a);
    if (rc < 0) {
        c->ret = -brisk_posix_errno(rc);
        return;
    }
    ps->role = R_LISTEN;
    sync_mirror(p, ps);
    c->ret = 0;
}

static void do_accept(brisk_posix *p, struct cmd *c)
{
    struct psock *ls = lookup(p, c);
    if (!ls) {
        c->ret = -EBADF;
        return;
    }
    if (ls->u) {
        c->ret = -EOPNOTSUPP;
        return;
    }
    c->timeo = ls->rcvtimeo;
    if (ls->role != R_LISTEN) {
        c->ret = -EINVAL;
        return;
    }
    int berr = 0;
    brisk_sock *s = brisk_accept(ls->s, &berr);
    if (!s) {
        c->ret = -brisk_posix_errno(berr);
        sync_mirror(p, ls);
        return;
    }
    int err = 0;
    struct psock *ps = psock_new(p, s, 0, c->flags, c->kin, &err);
    if (!ps) {
        brisk_abort(s, brisk_loop_now(p->l));
        c->ret = -err;
        sync_mirror(p, ls);
        return;
    }
    ps->role = R_CONNECTED;
    ps->connect_told = 1;
    ps->domain = ls->domain;
    /* What Linux's accepted socket inherits from the listener (sk_clone) among the facade's own options;
     * the TCP ones are brisk's, which the listener passes on itself. */
    ps->rcvtimeo = ls->rcvtimeo;
    ps->sndtimeo = ls->sndtimeo;
    ps->linger_on = ls->linger_on;
    ps->linger_s = ls->linger_s;
    ps->reuseaddr = ls->reuseaddr;
    brisk_sock_set_callback(s, on_event, ps); /* kept events (data, FIN, an error) arrive now */
    sync_mirror(p, ps);
    sync_mirror(p, ls);
    struct brisk_tuple t;
    brisk_sock_tuple(s, &t);
    sa_put(ps, c->out, c->outlen, &t.raddr, t.rport);
    char a[64];
    plog(p, "brisk: fd %d accepted from %s%s", ps->fd, addr_text(&t.raddr, t.rport, a, sizeof(a)),
         c->kin ? " for a forked process" : "");
    c->made = ps;
    c->ret = ps->fd;
}

/* A connect() after a failed one (Linux: tcp_done left the socket TCP_CLOSE and SS_UNCONNECTED, and connect
 * starts over): the socket gets a new brisk socket and a new socketpair. Both are needed because the failure's
 * marks cannot be undone — brisk_connect refuses a socket that holds an error, and the mirror showed ERR by
 * closing B. The new pair's end is dup3'd onto the application's number, so the number, its O_NONBLOCK and
 * its close-on-exec flag stay; an epoll set that held the old descriptor loses it with the old file (the
 * kernel drops the registration), so an epoll program must add it again (docs/posix.md). The options the
 * application set (those a fresh socket does not have) are carried over, and a port it bound is bound again,
 * as Linux keeps a user-bound port (SOCK_BINDPORT_LOCK) and releases an automatic one. A socket with more
 * than one number (dup) is not renewed (ECONNABORTED, as before): the other numbers name the old file. */
static int sock_renew(brisk_posix *p, struct psock *ps)
{
    static const enum brisk_sockopt carry[] = {
        BRISK_SO_NODELAY,   BRISK_SO_CORK,     BRISK_SO_SNDBUF,  BRISK_SO_RCVBUF,       BRISK_SO_NOTSENT_LOWAT,
        BRISK_SO_KEEPALIVE, BRISK_SO_KEEPIDLE, BRISK_SO_KEEPINTVL, BRISK_SO_KEEPCNT,     BRISK_SO_MAXSEG,
        BRISK_SO_USER_TIMEOUT, BRISK_SO_TOS, BRISK_SO_V6ONLY,
    };
    if (ps->refs != 1 || ps->xrefs)
        return -ECONNABORTED; /* other numbers, or other processes, hold the old file */
    uint64_t now = brisk_loop_now(p->l);
    int berr = 0, sv[2];
    brisk_sock *ns = brisk_socket(p->st, &berr);
    if (!ns)
        return -brisk_posix_errno(berr);
    for (size_t i = 0; i < sizeof(carry) / sizeof(carry[0]); i++) {
        uint64_t was = 0, fresh = 0;
        if (brisk_getsockopt(ps->s, carry[i], &was) == BRISK_OK && brisk_getsockopt(ns, carry[i], &fresh) == BRISK_OK &&
            was != fresh)
            brisk_setsockopt(ns, carry[i], was, now);
    }
    const char *cc = brisk_get_congestion(ps->s);
    if (cc && strcmp(cc, brisk_get_congestion(ns)) != 0)
        brisk_set_congestion(ns, cc);
    int fl = sys_fcntl(ps->fd2, F_GETFL, 0);
    if (fl < 0 || syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        brisk_close(ns, now);
        return -errno;
    }
    /* The old brisk socket goes first, so that the port it held is free to bind again. */
    brisk_sock_set_callback(ps->s, NULL, NULL);
    brisk_close(ps->s, now);
    ps->s = ns;
    brisk_sock_set_callback(ns, on_event, ps);
    if (syscall(SYS_dup3, sv[0], ps->fd, O_CLOEXEC) < 0) {
        int e = errno;
        sys_close(sv[0]);
        sys_close(sv[1]);
        return -e;
    }
    sys_close(sv[0]);
    int one = 1;
    syscall(SYS_setsockopt, ps->fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
    sys_fcntl(ps->fd, F_SETFL, fl & O_NONBLOCK ? O_RDWR | O_NONBLOCK : O_RDWR);
    sys_close(ps->fd2);
    ps->fd2 = sys_fcntl(ps->fd, F_DUPFD_CLOEXEC, 0);
    if (ps->peer >= 0)
        sys_close(ps->peer);
    ps->peer = sv[1];
    watch_set(p, ps, 0);
    ps->tokens = ps->hidden_out = ps->m_rdhup = ps->m_hup = ps->m_err = 0;
    ps->role = R_FRESH;
    ps->err = ps->err_given = ps->connect_told = ps->rd_shut = 0;
    if (ps->bound) {
        int rc = brisk_bind_addr(ns, &ps->baddr, ps->bport);
        if (rc < 0)
            return -brisk_posix_errno(rc);
    }
    return 0;
}

/* connect(): the first call starts the open; later calls report on it (Linux's __inet_stream_connect). */
static void do_connect(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_connect(p, c, ps);
        return;
    }
    c->timeo = ps->sndtimeo;
    if (ps->err && !ps->err_given && ps->role == R_CONNECTING) {
        c->ret = -brisk_posix_errno(ps->err);
        ps->err_given = 1;
        ps->err = 0;
        return;
    }
    switch (ps->role) {
    case R_CONNECTED:
        c->ret = ps->connect_told ? -EISCONN : 0;
        ps->connect_told = 1;
        return;
    case R_CONNECTING:
        if (!ps->err_given) {
            c->ret = -EALREADY;
            return;
        }
        int renewed = sock_renew(p, ps); /* the failure was reported: this connect starts over */
        if (renewed < 0) {
            c->ret = renewed;
            return;
        }
        break;
    case R_LISTEN:
        c->ret = -EISCONN;
        return;
    case R_FRESH:
        break;
    }
    struct brisk_addr addr;
    uint16_t port;
    int rc = sa_parse(ps, c->in, c->inlen, &addr, &port, 1);
    if (rc < 0) {
        c->ret = rc;
        return;
    }
    rc = brisk_connect_addr(ps->s, &addr, port, brisk_loop_now(p->l));
    if (rc != BRISK_ERR_INPROGRESS) {
        c->ret = -brisk_posix_errno(rc < 0 ? rc : BRISK_ERR_INVAL);
        return;
    }
    ps->role = R_CONNECTING;
    char a[64];
    plog(p, "brisk: fd %d connecting to %s", ps->fd, addr_text(&addr, port, a, sizeof(a)));
    sync_mirror(p, ps);
    c->ret = -EINPROGRESS;
}

/* ---- data -------------------------------------------------------------------------------------------- */

/* The first iov byte after `skip`: index and offset. */
static int iov_seek(const struct iovec *iov, int n, size_t skip, size_t *off)
{
    int i = 0;
    while (i < n && skip >= iov[i].iov_len) {
        skip -= iov[i].iov_len;
        i++;
    }
    *off = skip;
    return i;
}

/* The error a call on a connection gives once its data is used up: the error once, then EOF / EPIPE. */
static int conn_error(struct psock *ps, int reading)
{
    if (ps->err && !ps->err_given) {
        ps->err_given = 1;
        int e = ps->err;
        ps->err = 0;
        return -brisk_posix_errno(e);
    }
    return reading ? 0 : -EPIPE;
}

static void do_recv(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_recv(p, c, ps);
        return;
    }
    c->timeo = ps->rcvtimeo;
    if (ps->role == R_FRESH || ps->role == R_LISTEN) {
        c->ret = -ENOTCONN;
        return;
    }
    if (c->flags & MSG_OOB) {
        c->ret = -EINVAL; /* brisk keeps no urgent data: Linux's tcp_recv_urg with none */
        return;
    }
    uint64_t now = brisk_loop_now(p->l);
    size_t off;
    int i = iov_seek(c->iov, c->iovcnt, c->skip, &off);
    int64_t total = 0, r = 0;
    if (c->flags & MSG_PEEK) {
        size_t at = 0;
        for (; i < c->iovcnt; i++, off = 0) {
            size_t want = c->iov[i].iov_len - off;
            while (want) {
                const uint8_t *d;
                r = brisk_recv_peek(ps->s, at, &d);
                if (r <= 0)
                    goto done;
                size_t n = (size_t)r < want ? (size_t)r : want;
                memcpy((uint8_t *)c->iov[i].iov_base + off, d, n);
                off += n;
                at += n;
                want -= n;
                total += (int64_t)n;
            }
        }
    } else if (c->flags & MSG_TRUNC) {
        uint64_t inq = 0;
        size_t len = 0;
        for (int k = i; k < c->iovcnt; k++)
            len += c->iov[k].iov_len;
        len -= off;
        brisk_getsockopt(ps->s, BRISK_SO_INQ, &inq);
        if (inq) {
            total = brisk_recv_consume(ps->s, inq < len ? inq : len, now);
        } else {
            const uint8_t *d;
            r = brisk_recv_peek(ps->s, 0, &d);
        }
    } else {
        for (; i < c->iovcnt; i++, off = 0) {
            size_t want = c->iov[i].iov_len - off;
            if (!want)
                continue;
            r = brisk_recv(ps->s, (uint8_t *)c->iov[i].iov_base + off, want, now);
            if (r <= 0)
                break;
            total += r;
            if ((size_t)r < want)
                break;
        }
    }
done:
    c->moved = (c->flags & (MSG_PEEK | MSG_TRUNC)) == MSG_TRUNC ? 0 : (size_t)(total > 0 ? total : 0);
    if (total > 0) {
        c->ret = total;
    } else if (r == 0 || ps->rd_shut) {
        c->ret = 0;
    } else if (r == BRISK_ERR_AGAIN) {
        c->ret = -EAGAIN;
    } else if (r == BRISK_ERR_NOTCONN) {
        c->ret = ps->err || ps->err_given ? conn_error(ps, 1) : -ENOTCONN;
    } else {
        if (!ps->err && !ps->err_given)
            ps->err = (int)r;
        c->ret = conn_error(ps, 1);
    }
    sync_mirror(p, ps);
}

static void do_send(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_send(p, c, ps);
        return;
    }
    c->timeo = ps->sndtimeo;
    if (c->flags & MSG_OOB) {
        c->ret = -EOPNOTSUPP; /* no urgent pointer in brisk */
        return;
    }
    if (ps->err && !ps->err_given) {
        c->ret = conn_error(ps, 0);
        if (c->ret == -EPIPE)
            c->sigpipe = 1;
        sync_mirror(p, ps);
        return;
    }
    if (ps->role == R_CONNECTING) {
        c->ret = -EAGAIN; /* sk_stream_wait_connect: a blocking caller waits for the handshake */
        return;
    }
    if (ps->role != R_CONNECTED) {
        c->ret = -EPIPE; /* Linux: a write on a never-connected TCP socket */
        c->sigpipe = 1;
        return;
    }
    uint64_t now = brisk_loop_now(p->l);
    size_t off;
    int i = iov_seek(c->iov, c->iovcnt, c->skip, &off);
    if (i == c->iovcnt) {
        c->ret = 0; /* nothing to send: write(fd, buf, 0) returns 0 */
        return;
    }
    int last = c->iovcnt - 1;
    while (last > i && c->iov[last].iov_len == 0)
        last--;
    int64_t total = 0, r = 0;
    for (; i < c->iovcnt; i++, off = 0) {
        size_t want = c->iov[i].iov_len - off;
        if (!want)
            continue;
        unsigned fl = 0;
        if (i < last || (c->flags & MSG_MORE))
            fl |= BRISK_MSG_MORE; /* one write's pieces go out as one stream of segments */
        if (i == last && (c->flags & MSG_EOR))
            fl |= BRISK_MSG_EOR;
        r = brisk_send(ps->s, (const uint8_t *)c->iov[i].iov_base + off, want, fl, now);
        if (r <= 0)
            break;
        total += r;
        if ((size_t)r < want)
            break;
    }
    if (total > 0 && r < 0 && r != BRISK_ERR_AGAIN && i < c->iovcnt) {
        /* A piece was held with MSG_MORE and the rest refused: push what is queued. */
        brisk_send(ps->s, "", 0, 0, now);
    }
    if (total > 0) {
        c->ret = total;
    } else if (r == BRISK_ERR_AGAIN || r == 0) {
        c->ret = -EAGAIN;
    } else if (r == BRISK_ERR_PIPE || r == BRISK_ERR_NOTCONN) {
        c->ret = conn_error(ps, 0);
    } else {
        if (!ps->err && !ps->err_given)
            ps->err = (int)r;
        c->ret = conn_error(ps, 0);
    }
    if (c->ret == -EPIPE)
        c->sigpipe = 1;
    sync_mirror(p, ps);
}

static void do_shutdown(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_shutdown(p, c, ps);
        return;
    }
    if (c->a != SHUT_RD && c->a != SHUT_WR && c->a != SHUT_RDWR) {
        c->ret = -EINVAL;
        return;
    }
    if (ps->role != R_CONNECTED && ps->role != R_CONNECTING) {
        c->ret = -ENOTCONN;
        return;
    }
    if (c->a != SHUT_WR)
        ps->rd_shut = 1;
    if (c->a != SHUT_RD && ps->role == R_CONNECTED) {
        int rc = brisk_shutdown_write(ps->s, brisk_loop_now(p->l));
        if (rc < 0 && rc != BRISK_ERR_NOTCONN) {
            c->ret = -brisk_posix_errno(rc);
            return;
        }
    }
    sync_mirror(p, ps);
    c->ret = 0;
}

static void do_getname(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_getname(p, c, ps);
        return;
    }
    struct brisk_conn_info ci;
    int live = (ps->role == R_CONNECTED || ps->role == R_CONNECTING) && brisk_conn_info(ps->s, &ci) == BRISK_OK &&
               ci.state != BRISK_TCP_CLOSED;
    if (c->a) { /* peer */
        if (!live || ps->role != R_CONNECTED) {
            c->ret = -ENOTCONN;
            return;
        }
        sa_put(ps, c->out, c->outlen, &ci.tuple.raddr, ci.rport);
    } else if (live) {
        sa_put(ps, c->out, c->outlen, &ci.tuple.laddr, ci.lport);
    } else {
        sa_put(ps, c->out, c->outlen, &ps->baddr, ps->bport);
    }
    c->ret = 0;
}

/* ---- options ----------------------------------------------------------------------------------------- */

static int opt_int(const struct cmd *c, int *v)
{
    if (!c->in || c->inlen < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(v, c->in, sizeof(int));
    return 0;
}

static int opt_timeval(const struct cmd *c, uint64_t *ns)
{
    struct timeval tv;
    if (!c->in || c->inlen < (socklen_t)sizeof(tv))
        return -EINVAL;
    memcpy(&tv, c->in, sizeof(tv));
    if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
        return -EDOM;
    if (tv.tv_sec < 0)
        *ns = 0;
    else
        *ns = (uint64_t)tv.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)tv.tv_usec * BRISK_NSEC_PER_USEC;
    return 0;
}

/* The brisk option for a (level, name) that maps one to one, and its scale to the API's unit. */
static int opt_map(const struct psock *ps, int level, int name, enum brisk_sockopt *o, uint64_t *scale)
{
    *scale = 1;
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_KEEPALIVE: *o = BRISK_SO_KEEPALIVE; return 1;
        case SO_RCVBUF: *o = BRISK_SO_RCVBUF; return 1;
        case SO_SNDBUF: *o = BRISK_SO_SNDBUF; return 1;
        default: return 0;
        }
    }
    if (level == IPPROTO_TCP) {
        switch (name) {
        case TCP_NODELAY: *o = BRISK_SO_NODELAY; return 1;
        case TCP_CORK: *o = BRISK_SO_CORK; return 1;
        case TCP_KEEPIDLE: *o = BRISK_SO_KEEPIDLE; *scale = BRISK_NSEC_PER_SEC; return 1;
        case TCP_KEEPINTVL: *o = BRISK_SO_KEEPINTVL; *scale = BRISK_NSEC_PER_SEC; return 1;
        case TCP_KEEPCNT: *o = BRISK_SO_KEEPCNT; return 1;
        case TCP_MAXSEG: *o = BRISK_SO_MAXSEG; return 1;
        case TCP_QUICKACK: *o = BRISK_SO_QUICKACK; return 1;
        case TCP_USER_TIMEOUT: *o = BRISK_SO_USER_TIMEOUT; *scale = BRISK_NSEC_PER_MSEC; return 1;
        case TCP_NOTSENT_LOWAT: *o = BRISK_SO_NOTSENT_LOWAT; return 1;
        default: return 0;
        }
    }
    if (level == IPPROTO_IP && name == IP_TOS) {
        *o = BRISK_SO_TOS;
        return 1;
    }
    if (level == IPPROTO_IPV6 && ps->domain == AF_INET6) { /* an AF_INET socket has no IPv6 level */
        switch (name) {
        case IPV6_V6ONLY: *o = BRISK_SO_V6ONLY; return 1;
        case IPV6_TCLASS: *o = BRISK_SO_TOS; return 1; /* brisk's TOS is IPv6's traffic class */
        default: return 0;
        }
    }
    return 0;
}

static void do_setsockopt(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    int level = c->a, name = c->flags, v = 0, rc;
    uint64_t now = brisk_loop_now(p->l);
    enum brisk_sockopt o;
    uint64_t scale;
    c->ret = 0;
    if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO)) {
        uint64_t ns;
        rc = opt_timeval(c, &ns);
        if (rc < 0)
            c->ret = rc;
        else if (name == SO_RCVTIMEO)
            ps->rcvtimeo = ns;
        else
            ps->sndtimeo = ns;
        return;
    }
    if (level == SOL_SOCKET && name == SO_LINGER) {
        struct linger lg;
        if (!c->in || c->inlen < (socklen_t)sizeof(lg)) {
            c->ret = -EINVAL;
            return;
        }
        memcpy(&lg, c->in, sizeof(lg));
        ps->linger_on = lg.l_onoff != 0;
        ps->linger_s = lg.l_linger < 0 ? 0 : lg.l_linger;
        return;
    }
    if (ps->u) {
        udp_setsockopt(p, c, ps);
        return;
    }
    if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
        char nm[32];
        size_t n = c->in ? (c->inlen < sizeof(nm) - 1 ? (size_t)c->inlen : sizeof(nm) - 1) : 0;
        memcpy(nm, c->in, n);
        nm[n] = '\0';
        c->ret = brisk_set_congestion(ps->s, nm) < 0 ? -ENOENT : 0;
        return;
    }
    rc = opt_int(c, &v);
    if (rc < 0) {
        c->ret = rc;
        return;
    }
    if (level == SOL_SOCKET && (name == SO_REUSEADDR || name == SO_REUSEPORT)) {
        /* Recorded and read back. brisk's bind refuses a port only while a listener or connection holds
         * it, which is what SO_REUSEADDR gives a Linux server restarting over its TIME-WAITs. */
        if (name == SO_REUSEADDR)
            ps->reuseaddr = v != 0;
        else
            ps->reuseport = v != 0;
        return;
    }
    if (!opt_map(ps, level, name, &o, &scale)) {
        c->ret = -ENOPROTOOPT;
        return;
    }
    uint64_t val = v < 0 ? 0 : (uint64_t)v * scale;
    if (o == BRISK_SO_V6ONLY)
        val = v != 0;
    if (o == BRISK_SO_SNDBUF)
        val *= 2; /* Linux doubles SO_SNDBUF for its overhead and reads it back doubled */
    rc = brisk_setsockopt(ps->s, o, val, now);
    if (rc == BRISK_ERR_RANGE && (o == BRISK_SO_SNDBUF || o == BRISK_SO_RCVBUF))
        rc = BRISK_OK; /* Linux clamps buffer sizes silently */
    if (rc == BRISK_OK && o == BRISK_SO_V6ONLY)
        ps->v6only = (int)val;
    if (rc < 0)
        c->ret = -EINVAL;
    sync_mirror(p, ps);
}

/* Linux's struct tcp_info (UAPI, stable layout): glibc's struct is its first 104 bytes; the rest as
 * linux/tcp.h has it up to tcpi_snd_wnd. */
struct tcp_info_linux {
    struct tcp_info base;
    uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
    uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
    uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
    uint32_t delivered, delivered_ce;
    uint64_t bytes_sent, bytes_retrans;
    uint32_t dsack_dups, reord_seen, rcv_ooopack, snd_wnd;
};

static uint8_t linux_state(int st)
{
    static const uint8_t map[] = {
        [BRISK_TCP_CLOSED] = 7,      [BRISK_TCP_LISTEN] = 10,    [BRISK_TCP_SYN_SENT] = 2,
        [BRISK_TCP_SYN_RECEIVED] = 3, [BRISK_TCP_ESTABLISHED] = 1, [BRISK_TCP_FIN_WAIT_1] = 4,
        [BRISK_TCP_FIN_WAIT_2] = 5,  [BRISK_TCP_CLOSE_WAIT] = 8, [BRISK_TCP_CLOSING] = 11,
        [BRISK_TCP_LAST_ACK] = 9,    [BRISK_TCP_TIME_WAIT] = 6,
    };
    return st >= 0 && st < (int)sizeof(map) ? map[st] : 7;
}

static uint32_t u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* getsockopt(TCP_INFO) from brisk_conn_info, in Linux's units: times in us (last_* in ms ago), windows and
 * the segment counts in segments of the send MSS. */
static void tcp_info_fill(const struct psock *ps, uint64_t now, struct tcp_info_linux *t)
{
    struct brisk_conn_info ci;
    memset(t, 0, sizeof(*t));
    if (brisk_conn_info(ps->s, &ci) != BRISK_OK)
        return;
    uint32_t mss = ci.mss ? ci.mss : 1;
    struct tcp_info *b = &t->base;
    b->tcpi_state = linux_state(ps->role == R_LISTEN ? BRISK_TCP_LISTEN : ci.state);
    b->tcpi_ca_state = (uint8_t)ci.ca_state;
    b->tcpi_retransmits = (uint8_t)(ci.backoff > 255 ? 255 : ci.backoff);
    b->tcpi_backoff = b->tcpi_retransmits;
    b->tcpi_options = (uint8_t)((ci.ts_ok ? TCPI_OPT_TIMESTAMPS : 0) | (ci.sack_ok ? TCPI_OPT_SACK : 0) |
                                (ci.ws_ok ? TCPI_OPT_WSCALE : 0));
    b->tcpi_snd_wscale = ci.snd_wscale & 15;
    b->tcpi_rcv_wscale = ci.rcv_wscale & 15;
    b->tcpi_rto = u32(ci.rto_ns / 1000);
    b->tcpi_ato = u32(ci.ato_ns / 1000);
    b->tcpi_snd_mss = ci.mss;
    b->tcpi_rcv_mss = ci.rcv_mss;
    b->tcpi_unacked = u32((ci.unacked + mss - 1) / mss);
    b->tcpi_sacked = ci.sacked_bytes / mss;
    b->tcpi_lost = ci.lost_bytes / mss;
    b->tcpi_retrans = ci.retrans_bytes / mss;
    b->tcpi_last_data_sent = ci.last_data_sent_ns ? u32((now - ci.last_data_sent_ns) / 1000000) : 0;
    b->tcpi_last_data_recv = ci.last_data_recv_ns ? u32((now - ci.last_data_recv_ns) / 1000000) : 0;
    b->tcpi_last_ack_recv = ci.last_recv_ns ? u32((now - ci.last_recv_ns) / 1000000) : 0;
    b->tcpi_pmtu = ci.mss + 40;
    b->tcpi_rcv_ssthresh = ci.rcv_ssthresh;
    b->tcpi_rtt = u32(ci.srtt_ns / 1000);
    b->tcpi_rttvar = u32(ci.rttvar_ns / 1000);
    b->tcpi_snd_ssthresh = ci.ssthresh / mss;
    b->tcpi_snd_cwnd = ci.cwnd / mss;
    b->tcpi_advmss = ci.advmss;
    b->tcpi_reordering = ci.reordering ? ci.reordering : 3;
    b->tcpi_rcv_rtt = ci.rcv_rtt_us;
    b->tcpi_rcv_space = ci.rcv_space;
    b->tcpi_total_retrans = u32(ci.retransmits);
    t->pacing_rate = ci.pacing_rate;
    t->max_pacing_rate = UINT64_MAX;
    t->bytes_acked = ci.bytes_acked;
    t->bytes_received = ci.bytes_received;
    t->segs_out = u32(ci.segs_out);
    t->segs_in = u32(ci.segs_in);
    t->notsent_bytes = u32(ci.notsent);
    t->min_rtt = ci.min_rtt_ns ? u32(ci.min_rtt_ns / 1000) : UINT32_MAX;
    t->bytes_sent = ci.bytes_sent;
    t->snd_wnd = ci.snd_wnd;
}

static void put_int(struct cmd *c, int v)
{
    if (!c->out || !c->outlen) {
        c->ret = -EFAULT;
        return;
    }
    size_t n = *c->outlen < (socklen_t)sizeof(int) ? (size_t)*c->outlen : sizeof(int);
    memcpy(c->out, &v, n);
    *c->outlen = (socklen_t)n;
    c->ret = 0;
}

static void do_getsockopt(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u && udp_getsockopt(p, c, ps))
        return;
    int level = c->a, name = c->flags;
    enum brisk_sockopt o;
    uint64_t scale, v = 0;
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_ERROR: {
            int e = ps->err && !ps->err_given ? brisk_posix_errno(ps->err) : 0;
            if (e) {
                ps->err_given = 1;
                ps->err = 0;
            }
            put_int(c, e);
            return;
        }
        case SO_TYPE: put_int(c, SOCK_STREAM); return;
        case SO_DOMAIN: put_int(c, ps->domain); return;
        case SO_PROTOCOL: put_int(c, IPPROTO_TCP); return;
        case SO_ACCEPTCONN: put_int(c, ps->role == R_LISTEN); return;
        case SO_REUSEADDR: put_int(c, ps->reuseaddr); return;
        case SO_REUSEPORT: put_int(c, ps->reuseport); return;
        case SO_RCVTIMEO:
        case SO_SNDTIMEO: {
            uint64_t ns = name == SO_RCVTIMEO ? ps->rcvtimeo : ps->sndtimeo;
            struct timeval tv = {(time_t)(ns / BRISK_NSEC_PER_SEC), (suseconds_t)(ns % BRISK_NSEC_PER_SEC / 1000)};
            if (!c->out || !c->outlen || *c->outlen < (socklen_t)sizeof(tv)) {
                c->ret = -EINVAL;
                return;
            }
            memcpy(c->out, &tv, sizeof(tv));
            *c->outlen = sizeof(tv);
            c->ret = 0;
            return;
        }
        case SO_LINGER: {
            struct linger lg = {ps->linger_on, ps->linger_s};
            if (!c->out || !c->outlen || *c->outlen < (socklen_t)sizeof(lg)) {
                c->ret = -EINVAL;
                return;
            }
            memcpy(c->out, &lg, sizeof(lg));
            *c->outlen = sizeof(lg);
            c->ret = 0;
            return;
        }
        default: break;
        }
    }
    if (ps->u) {
        c->ret = -ENOPROTOOPT; /* udp_getsockopt answered every option a UDP socket has */
        return;
    }
    if (level == IPPROTO_TCP && name == TCP_INFO) {
        struct tcp_info_linux t;
        if (!c->out || !c->outlen) {
            c->ret = -EFAULT;
            return;
        }
        tcp_info_fill(ps, brisk_loop_now(p->l), &t);
        size_t n = *c->outlen < (socklen_t)sizeof(t) ? (size_t)*c->outlen : sizeof(t);
        memcpy(c->out, &t, n);
        *c->outlen = (socklen_t)n;
        c->ret = 0;
        return;
    }
    if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
        const char *nm = brisk_get_congestion(ps->s);
        if (!c->out || !c->outlen) {
            c->ret = -EFAULT;
            return;
        }
        size_t n = strlen(nm) + 1;
        if (n > (size_t)*c->outlen)
            n = (size_t)*c->outlen;
        memcpy(c->out, nm, n);
        *c->outlen = (socklen_t)n;
        c->ret = 0;
        return;
    }
    if (!opt_map(ps, level, name, &o, &scale)) {
        c->ret = -ENOPROTOOPT;
        return;
    }
    if (brisk_getsockopt(ps->s, o, &v) < 0) {
        c->ret = -EINVAL;
        return;
    }
    v /= scale;
    put_int(c, v > 0x7fffffff ? 0x7fffffff : (int)v);
}

static void do_nonblock(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    ps->nonblock = c->a != 0;
    c->ret = 0;
}

static void do_ioctl(brisk_posix *p, struct cmd *c)
{
    struct psock *ps = lookup(p, c);
    if (!ps) {
        c->ret = -EBADF;
        return;
    }
    if (ps->u) {
        udp_ioctl(p, c, ps);
        return;
    }
    uint64_t v = 0;
    if (c->a == 0) { /* FIONREAD */
        if (ps->role == R_LISTEN) {
            c->ret = -EINVAL;
            return;
        }
        brisk_getsockopt(ps->s, BRISK_SO_INQ, &v);
    } else { /* SIOCOUTQ */
        struct brisk_conn_info ci;
        if (ps->role == R_LISTEN) {
            c->ret = -EINVAL;
            return;
        }
        if (brisk_conn_info(ps->s, &ci) == BRISK_OK)
            v = ci.snd_queued;
    }
    int iv = v > 0x7fffffff ? 0x7fffffff : (int)v;
    memcpy(c->out, &iv, sizeof(iv));
    c->ret = 0;
}

static void do_stats(brisk_posix *p, struct cmd *c)
{
    p->stats.held_by_children = 0;
    for (struct psock *ps = p->all; ps; ps = ps->anext)
        p->stats.held_by_children += ps->xrefs > 0;
    memcpy(c->out, &p->stats, sizeof(p->stats));
    c->ret = 0;
}

static void do_close_all(brisk_posix *p, struct cmd *c)
{
    uint64_t now = brisk_loop_now(p->l);
    for (int fd = 0; fd < p->tabsz; fd++) {
        struct psock *ps = atomic_load_explicit(&p->tab[fd], memory_order_relaxed);
        if (ps) {
            atomic_store_explicit(&p->tab[fd], NULL, memory_order_release);
            unref(p, ps, NULL, now);
            sys_close(fd);
        }
    }
    c->ret = 0;
}

/* ---- UDP ----------------------------------------------------------------------------------------------
 *
 * socket(AF_INET, SOCK_DGRAM) is a brisk UDP socket (brisk.h's UDP section, docs/udp.md) behind the same
 * descriptor, mirror, hand-off and fork channel as a TCP one; only the commands differ. Each maps one to one
 * onto a brisk_udp_* call, with Linux's udp.c for what the POSIX side adds:
 *   - send: one datagram per call, gathered from the caller's buffers (into p->ubuf when there are several:
 *     brisk_udp_sendto takes one buffer); no destination and not connected is EDESTADDRREQ; a datagram
 *     over the path MTU is EMSGSIZE (brisk never fragments: Linux's IP_PMTUDISC_DO); no buffer or device
 *     room is EAGAIN, and a blocking caller waits for POLLOUT. MSG_MORE would build one datagram from
 *     several calls (UDP_CORK), which brisk cannot: EOPNOTSUPP rather than datagrams split apart.
 *   - receive: one datagram per call, its sender in msg_name; a longer one is truncated with MSG_TRUNC in
 *     msg_flags, and MSG_TRUNC in the flags returns its whole length. MSG_PEEK, which brisk's queue does not
 *     offer, takes the datagram out of it into a buffer of the socket's own (`held`, made at the first
 *     peek), which the next reads see first and a non-peeking one consumes; readiness and FIONREAD count it.
 *     An ICMP error for the connected peer is returned once by the next read, send or SO_ERROR (brisk keeps
 *     it: brisk_udp_error).
 *   - shutdown: as Linux's inet_shutdown, ENOTCONN on an unconnected socket but the directions shut anyway,
 *     so that a thread blocked in recvfrom wakes (reads return 0 once the queue is empty; sends EPIPE).
 * The socket is its own: none of TCP's states (role stays R_FRESH), renewal or lingering close.
 */

static void on_udp_event(void *ctx, brisk_udp *u, unsigned ev, uint64_t now)
{
    (void)u;
    (void)now;
    struct psock *ps = ctx;
    if (ev & BRISK_EV_ERROR)
        plog(ps->p, "brisk: fd %d: an ICMP error for the UDP peer", ps->fd);
    if ((ev & BRISK_EV_READABLE) && ps->tokens)
        token_add(ps->p, ps); /* an edge per arrival, as for TCP */
    sync_mirror(ps->p, ps);
}

static void udp_bind(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    (void)p;
    struct brisk_addr a;
    uint16_t port;
    int rc = sa_parse(ps, c->in, c->inlen, &a, &port, 0);
    if (rc < 0) {
        c->ret = rc;
        return;
    }
    rc = brisk_udp_bind(ps->u, &a, port); /* port 0: an ephemeral one now; bound already: INVAL */
    c->ret = rc < 0 ? -brisk_posix_errno(rc) : 0;
}

static void udp_connect(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    sa_family_t fam = AF_INET;
    if (c->in && c->inlen >= (socklen_t)sizeof(fam))
        memcpy(&fam, c->in, sizeof(fam));
    struct brisk_addr a = {.family = BRISK_AF_UNSPEC};
    uint16_t port = 0;
    if (fam != AF_UNSPEC) { /* AF_UNSPEC dissolves the association (Linux's udp_disconnect) */
        int rc = sa_parse(ps, c->in, c->inlen, &a, &port, 1);
        if (rc < 0) {
            c->ret = rc;
            return;
        }
    }
    int rc = brisk_udp_connect(ps->u, &a, port);
    c->ret = rc < 0 ? -brisk_posix_errno(rc) : 0;
    if (rc == BRISK_OK && fam != AF_UNSPEC) {
        char s[64];
        plog(p, "brisk: fd %d: UDP connected to %s", ps->fd, addr_text(&a, port, s, sizeof(s)));
    }
    sync_mirror(p, ps); /* a new peer drops an old one's error */
}

/* Copies n bytes from src into the caller's buffers (from byte `skip`); returns the bytes copied. */
static size_t iov_put(const struct iovec *iov, int cnt, size_t skip, const uint8_t *src, size_t n)
{
    size_t off, done = 0;
    for (int i = iov_seek(iov, cnt, skip, &off); i < cnt && done < n; i++, off = 0) {
        size_t k = iov[i].iov_len - off < n - done ? iov[i].iov_len - off : n - done;
        memcpy((uint8_t *)iov[i].iov_base + off, src + done, k);
        done += k;
    }
    return done;
}

/* The next datagram into ps->held (MSG_PEEK, or buffers brisk cannot fill in one call): 0, or -errno. */
static int udp_hold(struct psock *ps)
{
    if (!ps->held && !(ps->held = malloc(UDP_MAX)))
        return -ENOMEM;
    struct brisk_addr from;
    uint16_t port = 0;
    unsigned fl = 0;
    int64_t r = brisk_udp_recvfrom(ps->u, ps->held, UDP_MAX, &from, &port, &fl);
    if (r < 0)
        return -brisk_posix_errno((int)r);
    ps->held_len = (uint32_t)r;
    ps->held_from = from;
    ps->held_port = port;
    ps->held_has = 1;
    return 0;
}

static void udp_recv(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    c->timeo = ps->rcvtimeo;
    if (c->flags & MSG_ERRQUEUE) {
        c->ret = -EAGAIN; /* no IP_RECVERR: the error queue is always empty (Linux's ip_recv_error) */
        return;
    }
    if (c->flags & MSG_OOB) {
        c->ret = -EOPNOTSUPP;
        return;
    }
    size_t off, len = 0;
    int first = iov_seek(c->iov, c->iovcnt, c->skip, &off), pieces = 0;
    for (int k = first; k < c->iovcnt; k++) {
        size_t n = c->iov[k].iov_len - (k == first ? off : 0);
        len += n;
        pieces += n > 0;
    }
    struct brisk_addr from = {.family = BRISK_AF_UNSPEC};
    uint32_t dlen = 0;
    uint16_t port = 0;
    int e = 0;
    if (!ps->held_has && pieces == 1 && !(c->flags & MSG_PEEK)) {
        /* straight into the caller's one buffer: the common case, no copy of our own */
        uint64_t inq = 0;
        unsigned fl = 0;
        brisk_udp_getsockopt(ps->u, BRISK_SO_INQ, &inq); /* the length MSG_TRUNC returns */
        int64_t r = brisk_udp_recvfrom(ps->u, (uint8_t *)c->iov[first].iov_base + off, len, &from, &port, &fl);
        if (r >= 0) {
            dlen = (fl & BRISK_MSG_TRUNC) ? (uint32_t)inq : (uint32_t)r;
            c->moved = (size_t)r;
        } else {
            e = -brisk_posix_errno((int)r);
        }
    } else {
        /* peeking, several buffers or none: through the socket's own buffer */
        e = ps->held_has ? 0 : udp_hold(ps);
        if (!e) {
            from = ps->held_from;
            port = ps->held_port;
            dlen = ps->held_len;
            c->moved = iov_put(c->iov, c->iovcnt, c->skip, ps->held, dlen < len ? dlen : len);
            ps->held_has = (c->flags & MSG_PEEK) != 0;
        }
    }
    if (e) {
        c->ret = e == -EAGAIN && ps->rd_shut ? 0 : e; /* shut: 0 once the queue is empty, as Linux's */
    } else {
        c->mflags = dlen > c->moved ? MSG_TRUNC : 0;
        c->ret = (c->flags & MSG_TRUNC) ? (int64_t)dlen : (int64_t)c->moved;
        if (c->outlen)
            sa_put(ps, c->out, c->outlen, &from, port);
    }
    sync_mirror(p, ps);
}

static void udp_send(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    c->timeo = ps->sndtimeo;
    if (c->flags & (MSG_OOB | MSG_MORE)) {
        c->ret = -EOPNOTSUPP; /* MSG_MORE: one datagram from several calls (UDP_CORK), which brisk lacks */
        return;
    }
    if (ps->wr_shut) {
        c->ret = -EPIPE;
        c->sigpipe = 1;
        return;
    }
    struct brisk_addr dst;
    uint16_t port = 0;
    if (c->in && ps->domain != AF_INET6) { /* sendto's address, connected or not (Linux takes it either way) */
        struct sockaddr_in sin;
        if (c->inlen < (socklen_t)sizeof(sin)) {
            c->ret = -EINVAL;
            return;
        }
        memcpy(&sin, c->in, sizeof(sin));
        if (sin.sin_family != AF_INET && sin.sin_family != AF_UNSPEC) {
            c->ret = -EAFNOSUPPORT; /* AF_UNSPEC is taken as AF_INET, as udp_sendmsg does */
            return;
        }
        dst = brisk_addr_v4(ntohl(sin.sin_addr.s_addr));
        port = ntohs(sin.sin_port);
    } else if (c->in) { /* udpv6_sendmsg: sockaddr_in6 (a v4-mapped address sends over IPv4) */
        int rc = sa_parse(ps, c->in, c->inlen, &dst, &port, 1);
        if (rc < 0) {
            c->ret = rc;
            return;
        }
    }
    size_t off, len = 0;
    int first = iov_seek(c->iov, c->iovcnt, c->skip, &off), pieces = 0, one = first;
    for (int k = first; k < c->iovcnt; k++) {
        size_t n = c->iov[k].iov_len - (k == first ? off : 0);
        len += n;
        if (n && !pieces++)
            one = k;
    }
    const uint8_t *buf = NULL;
    if (len > UDP_MAX) {
        c->ret = -EMSGSIZE;
        return;
    }
    if (pieces == 1) {
        buf = (const uint8_t *)c->iov[one].iov_base + (one == first ? off : 0);
    } else if (pieces > 1) {
        if (!p->ubuf && !(p->ubuf = malloc(UDP_MAX))) {
            c->ret = -ENOMEM;
            return;
        }
        size_t at = 0;
        for (int k = iov_seek(c->iov, c->iovcnt, c->skip, &off); k < c->iovcnt; k++, off = 0) {
            memcpy(p->ubuf + at, (const uint8_t *)c->iov[k].iov_base + off, c->iov[k].iov_len - off);
            at += c->iov[k].iov_len - off;
        }
        buf = p->ubuf;
    }
    int64_t r = brisk_udp_sendto(ps->u, buf ? buf : (const uint8_t *)"", len, c->in ? &dst : NULL, port,
                                 brisk_loop_now(p->l));
    if (r == BRISK_ERR_NOTCONN)
        c->ret = -EDESTADDRREQ; /* no destination and no peer (udp_sendmsg) */
    else
        c->ret = r < 0 ? -brisk_posix_errno((int)r) : r;
    sync_mirror(p, ps);
}

static void udp_shutdown(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    if (c->a != SHUT_RD && c->a != SHUT_WR && c->a != SHUT_RDWR) {
        c->ret = -EINVAL;
        return;
    }
    if (c->a != SHUT_WR)
        ps->rd_shut = 1;
    if (c->a != SHUT_RD)
        ps->wr_shut = 1;
    struct brisk_tuple t;
    brisk_udp_tuple(ps->u, &t);
    sync_mirror(p, ps); /* a reader waiting on A wakes */
    c->ret = t.rport ? 0 : -ENOTCONN;
}

static void udp_getname(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    (void)p;
    struct brisk_tuple t;
    brisk_udp_tuple(ps->u, &t);
    if (c->a && !t.rport) {
        c->ret = -ENOTCONN;
        return;
    }
    sa_put(ps, c->out, c->outlen, c->a ? &t.raddr : &t.laddr, c->a ? t.rport : t.lport);
    c->ret = 0;
}

/* setsockopt past the facade's own (timeouts, SO_LINGER, which do_setsockopt took): what a UDP socket has.
 * SO_RCVBUF is doubled as Linux does (it charges a datagram's whole buffer, as brisk does) and clamped to
 * what brisk takes; SO_SNDBUF, SO_BROADCAST, SO_REUSEADDR and SO_REUSEPORT are recorded and read back:
 * brisk's UDP has no send buffer, no broadcast gate and no shared ports. Anything else: ENOPROTOOPT. */
static void udp_setsockopt(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    (void)p;
    int level = c->a, name = c->flags, v;
    int rc = opt_int(c, &v);
    if (rc < 0) {
        c->ret = rc;
        return;
    }
    c->ret = 0;
    uint64_t dv = v < 0 ? 0 : 2 * (uint64_t)v;
    if (level == SOL_SOCKET && name == SO_RCVBUF) {
        dv = dv < 2048 ? 2048 : dv > (1u << 30) ? (1u << 30) : dv;
        brisk_udp_setsockopt(ps->u, BRISK_SO_RCVBUF, dv);
    } else if (level == SOL_SOCKET && name == SO_SNDBUF) {
        ps->sndbuf = (uint32_t)(dv < 4608 ? 4608 : dv > (1u << 30) ? (1u << 30) : dv); /* SOCK_MIN_SNDBUF */
    } else if (level == SOL_SOCKET && name == SO_BROADCAST) {
        ps->broadcast = v != 0;
    } else if (level == SOL_SOCKET && name == SO_REUSEADDR) {
        ps->reuseaddr = v != 0;
    } else if (level == SOL_SOCKET && name == SO_REUSEPORT) {
        ps->reuseport = v != 0;
    } else if ((level == IPPROTO_IP && name == IP_TOS) ||
               (level == IPPROTO_IPV6 && name == IPV6_TCLASS && ps->domain == AF_INET6)) {
        /* one byte for both families: IPv4's TOS is IPv6's traffic class (IPV6_TCLASS -1: the default 0) */
        if (brisk_udp_setsockopt(ps->u, BRISK_SO_TOS, (uint64_t)(v < 0 ? 0 : v & 0xff)) < 0)
            c->ret = -EINVAL;
    } else if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY && ps->domain == AF_INET6) {
        /* brisk's UDP has no IPv6-only sockets yet: :: always takes IPv4 too (docs/posix.md) */
        c->ret = v ? -ENOPROTOOPT : 0;
    } else {
        c->ret = -ENOPROTOOPT;
    }
}

/* getsockopt of what differs on a UDP socket: 1 when answered; 0 leaves the option to do_getsockopt's own
 * (timeouts, SO_LINGER, SO_DOMAIN), which answers ENOPROTOOPT past them. */
static int udp_getsockopt(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    int level = c->a, name = c->flags;
    uint64_t v = 0;
    if ((level == IPPROTO_IP && name == IP_TOS) ||
        (level == IPPROTO_IPV6 && name == IPV6_TCLASS && ps->domain == AF_INET6)) {
        brisk_udp_getsockopt(ps->u, BRISK_SO_TOS, &v);
        put_int(c, (int)v);
        return 1;
    }
    if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY && ps->domain == AF_INET6) {
        put_int(c, 0);
        return 1;
    }
    if (level != SOL_SOCKET)
        return 0;
    switch (name) {
    case SO_ERROR:
        put_int(c, brisk_posix_errno(brisk_udp_error(ps->u)));
        sync_mirror(p, ps); /* read: no longer readable for it */
        return 1;
    case SO_TYPE: put_int(c, SOCK_DGRAM); return 1;
    case SO_PROTOCOL: put_int(c, IPPROTO_UDP); return 1;
    case SO_ACCEPTCONN: put_int(c, 0); return 1;
    case SO_REUSEADDR: put_int(c, ps->reuseaddr); return 1;
    case SO_REUSEPORT: put_int(c, ps->reuseport); return 1;
    case SO_BROADCAST: put_int(c, ps->broadcast); return 1;
    case SO_SNDBUF: put_int(c, (int)ps->sndbuf); return 1;
    case SO_RCVBUF:
        brisk_udp_getsockopt(ps->u, BRISK_SO_RCVBUF, &v);
        put_int(c, v > 0x7fffffff ? 0x7fffffff : (int)v);
        return 1;
    default: return 0;
    }
}

/* FIONREAD: the next datagram's length (0 if none), as Linux's udp_ioctl; SIOCOUTQ: 0, nothing is kept. */
static void udp_ioctl(brisk_posix *p, struct cmd *c, struct psock *ps)
{
    (void)p;
    uint64_t v = 0;
    if (c->a == 0) {
        if (ps->held_has)
            v = ps->held_len;
        else
            brisk_udp_getsockopt(ps->u, BRISK_SO_INQ, &v);
    }
    int iv = (int)v;
    memcpy(c->out, &iv, sizeof(iv));
    c->ret = 0;
}

/* ---- the application side ---------------------------------------------------------------------------- */


static void cmd_init(struct cmd *c, void (*fn)(brisk_posix *, struct cmd *), int fd)
{
    memset(c, 0, sizeof(*c));
    c->fn = fn;
    c->fd = fd;
}

/* ---- fork ---------------------------------------------------------------------------------------------
 *
 * A child of fork() has no stack thread: its calls on the sockets it inherited, and on sockets it makes,
 * are requests to the stack thread of the process that runs the stack, which goes on running there. Each
 * forked process has a channel of its own, an AF_UNIX SOCK_SEQPACKET socketpair made in fork's prepare
 * handler: the stack thread reads one end (all channels in one epoll set, `kep`, which is one descriptor of
 * the loop), the child keeps the other. A request is one message — struct req, its input (a sockaddr, an
 * option) and for a send up to CHUNK bytes of data — and so is the answer: struct rep, the output (as long
 * as the child asked) and for a receive the data, scattered straight into the caller's buffers. A socket
 * made for the child (socket, accept) passes its A with SCM_RIGHTS; the stack keeps A2 and B as for its
 * own. Readiness needs nothing new: the child's number names the same open file as the stack's A2, whose
 * state the stack thread keeps, so poll, select and epoll in the child see it, and a blocking call waits on
 * it, exactly as in the parent.
 *
 * Holding: a kin is the stack's record of one such process and the set of sockets it holds (inherited at
 * its fork or made for it since, less those it closed). A socket is released when this process's numbers
 * for it (refs) and the processes holding it (xrefs) are both none, as a kernel socket lives while any
 * process holds its file. The child says when it closes its last number of a socket (DROP). Its exit — or
 * its exec, the channel being close-on-exec like A — ends the channel, and all it held is let go. A forked
 * process's own fork sends the grandchild's channel, with what the grandchild inherits, over its channel
 * (FORK). The stack thread waits while the parent forks (do_fork_hold until brisk_posix_fork_parent), so
 * that the child's copy of the table, the lists and the descriptors is one the thread was not changing.
 *
 * Handles: the child names a socket by its psock's address in the stack's process, which its copy of the
 * table holds (or a socket made for it came with). The stack looks the value up in the requester's set
 * before using it, comparing values only: a handle it does not hold is EBADF, never a stray pointer.
 */

#define CHUNK     65536 /* the most data one request or answer carries */
#define SMALL_MAX 512   /* the most input (sockaddr, option value) or output one carries */
#define PIECES    64    /* the most of a caller's buffers one request or answer covers */

enum {
    OP_SOCKET, OP_BIND, OP_LISTEN, OP_ACCEPT, OP_CONNECT, OP_RECV, OP_SEND, OP_SHUTDOWN, OP_GETNAME,
    OP_SETSOCKOPT, OP_GETSOCKOPT, OP_NONBLOCK, OP_IOCTL,
    OP_NFN, /* the commands above run as the parent's; the two below are the channel's own */
    OP_DROP = OP_NFN, OP_FORK,
};

static void (*const remote_fn[OP_NFN])(brisk_posix *, struct cmd *) = {
    [OP_SOCKET] = do_socket,         [OP_BIND] = do_bind,         [OP_LISTEN] = do_listen,
    [OP_ACCEPT] = do_accept,         [OP_CONNECT] = do_connect,   [OP_RECV] = do_recv,
    [OP_SEND] = do_send,             [OP_SHUTDOWN] = do_shutdown, [OP_GETNAME] = do_getname,
    [OP_SETSOCKOPT] = do_setsockopt, [OP_GETSOCKOPT] = do_getsockopt, [OP_NONBLOCK] = do_nonblock,
    [OP_IOCTL] = do_ioctl,
};

#define HAS_IN     1u /* c->in was given (inlen bytes follow the header) */
#define HAS_OUT    2u /* c->out was given (outcap bytes) */
#define HAS_OUTLEN 4u /* c->outlen was given (its value: outlen) */

struct req {
    uint32_t op, has;
    uint64_t handle; /* the socket (not for OP_SOCKET) */
    int64_t a, flags;
    uint32_t inlen, outcap, outlen;
    uint32_t datalen; /* OP_SEND, OP_FORK: bytes after the input; OP_RECV: bytes wanted */
};

struct rep {
    int64_t ret; /* as c->ret; 0 with a descriptor passed for a socket made */
    uint64_t timeo, handle;
    int32_t sigpipe, nonblock, dgram, mflags;
    uint32_t outlen, datalen; /* datalen: c->moved of a receive */
};

#define KBUF_SIZE (sizeof(struct req) + SMALL_MAX + CHUNK)
#define RBUF_SIZE (sizeof(struct rep) + SMALL_MAX + CHUNK)

struct kin {
    brisk_posix *p;
    int fd; /* the stack's end of the process's channel */
    /* the sockets it holds: open addressing, NULL free, TOMB deleted */
    struct psock **set;
    size_t cap, n, used; /* used: n and the tombstones */
    struct kin *next, *prev;
};
#define TOMB ((struct psock *)1)

static size_t kin_hash(uint64_t h, size_t cap)
{
    h ^= h >> 29;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* The slot of handle h in k's set, or -1. */
static long kin_find(const struct kin *k, uint64_t h)
{
    if (!k->cap)
        return -1;
    for (size_t i = kin_hash(h, k->cap), n = 0; n < k->cap; i = (i + 1) & (k->cap - 1), n++) {
        struct psock *e = k->set[i];
        if (!e)
            return -1;
        if (e != TOMB && (uint64_t)(uintptr_t)e == h)
            return (long)i;
    }
    return -1;
}

/* Room for `more` insertions without growing (so that kin_hold cannot fail). 0, or -1 out of memory. */
static int kin_reserve(struct kin *k, size_t more)
{
    if ((k->used + more) * 4 <= k->cap * 3)
        return 0;
    size_t cap = 16;
    while ((k->n + more) * 2 > cap)
        cap *= 2;
    struct psock **set = calloc(cap, sizeof(*set));
    if (!set)
        return -1;
    for (size_t i = 0; i < k->cap; i++) {
        struct psock *e = k->set[i];
        if (e && e != TOMB) {
            size_t j = kin_hash((uint64_t)(uintptr_t)e, cap);
            while (set[j])
                j = (j + 1) & (cap - 1);
            set[j] = e;
        }
    }
    free(k->set);
    k->set = set;
    k->cap = cap;
    k->used = k->n;
    return 0;
}

/* k holds ps from now on (room reserved beforehand). */
static void kin_hold(brisk_posix *p, struct kin *k, struct psock *ps)
{
    (void)p;
    uint64_t h = (uint64_t)(uintptr_t)ps;
    if (kin_find(k, h) >= 0 || kin_reserve(k, 1) < 0)
        return;
    size_t i = kin_hash(h, k->cap);
    while (k->set[i] && k->set[i] != TOMB)
        i = (i + 1) & (k->cap - 1);
    if (!k->set[i])
        k->used++;
    k->set[i] = ps;
    k->n++;
    ps->xrefs++;
}

/* k lets go of the socket in slot i: released if nothing else holds it. */
static void kin_let(brisk_posix *p, struct kin *k, long i)
{
    struct psock *ps = k->set[i];
    k->set[i] = TOMB;
    k->n--;
    if (--ps->xrefs == 0 && ps->refs == 0)
        release(p, ps, NULL, brisk_loop_now(p->l));
}

static void on_kins(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now);

static struct kin *kin_new(brisk_posix *p, int fd)
{
    if (!p->kbuf) {
        p->kbuf = malloc(KBUF_SIZE);
        p->rbuf = malloc(RBUF_SIZE);
        if (!p->kbuf || !p->rbuf) {
            free(p->kbuf);
            free(p->rbuf);
            p->kbuf = p->rbuf = NULL;
            return NULL;
        }
    }
    if (p->kep < 0) {
        int e = epoll_create1(EPOLL_CLOEXEC);
        if (e < 0)
            return NULL;
        if (brisk_loop_watch_fd(p->l, e, BRISK_LOOP_IN, on_kins, p) < 0) {
            sys_close(e);
            return NULL;
        }
        p->kep = e;
    }
    struct kin *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    k->p = p;
    k->fd = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = k};
    if (epoll_ctl(p->kep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        free(k);
        return NULL;
    }
    k->next = p->kins;
    if (p->kins)
        p->kins->prev = k;
    p->kins = k;
    p->stats.children++;
    return k;
}

/* The process's channel ended (exit, exec, a broken request): everything it held is let go. */
static void kin_gone(brisk_posix *p, struct kin *k)
{
    epoll_ctl(p->kep, EPOLL_CTL_DEL, k->fd, NULL);
    sys_close(k->fd);
    plog(p, "brisk: a forked process's channel ended: %zu socket(s) it held let go", k->n);
    for (size_t i = 0; i < k->cap; i++)
        if (k->set[i] && k->set[i] != TOMB)
            kin_let(p, k, (long)i);
    if (k->prev)
        k->prev->next = k->next;
    else
        p->kins = k->next;
    if (k->next)
        k->next->prev = k->prev;
    p->stats.children--;
    free(k->set);
    free(k);
}

/* The parent's fork (prepare handler): a kin for the child, holding every socket this process holds; the
 * stack thread then waits (on_cmds) until brisk_posix_fork_parent. c->a: the stack's end of the channel. */
static void do_fork_hold(brisk_posix *p, struct cmd *c)
{
    struct kin *k = kin_new(p, c->a);
    size_t n = 0;
    for (struct psock *ps = p->all; ps; ps = ps->anext)
        n += ps->refs > 0;
    if (!k || kin_reserve(k, n) < 0) {
        if (k)
            kin_gone(p, k);
        else
            sys_close(c->a); /* the child finds its channel ended, and says so */
        c->ret = -ENOMEM;
        return;
    }
    for (struct psock *ps = p->all; ps; ps = ps->anext)
        if (ps->refs > 0)
            kin_hold(p, k, ps);
    c->ret = 0;
}

/* A forked process forks (OP_FORK): the grandchild's channel `fd`, holding the `n` handles listed that the
 * requester holds. */
static void kin_fork(brisk_posix *p, struct kin *k, int fd, const uint8_t *list, size_t n)
{
    struct kin *nk = kin_new(p, fd);
    if (!nk) {
        sys_close(fd);
        return;
    }
    if (kin_reserve(nk, n) < 0) {
        kin_gone(p, nk);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t h;
        memcpy(&h, list + 8 * i, 8);
        long at = kin_find(k, h);
        if (at >= 0)
            kin_hold(p, nk, k->set[at]);
    }
}

/* Reads and serves one request of k's. */
static void kin_serve(brisk_posix *p, struct kin *k)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } cm;
    struct iovec iv = {p->kbuf, KBUF_SIZE};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iv;
    m.msg_iovlen = 1;
    m.msg_control = cm.buf;
    m.msg_controllen = sizeof(cm.buf);
    ssize_t r = syscall(SYS_recvmsg, k->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    int passed = -1;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); r > 0 && h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
            if (passed < 0)
                passed = f;
            else
                sys_close(f);
        }
    }
    struct req q;
    int bad = r < (ssize_t)sizeof(q) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
    if (!bad) {
        memcpy(&q, p->kbuf, sizeof(q));
        size_t body = (size_t)r - sizeof(q);
        int with_data = q.op == OP_SEND || q.op == OP_FORK;
        bad = q.op > OP_FORK || q.inlen > SMALL_MAX || q.outcap > SMALL_MAX || q.outlen > SMALL_MAX ||
              q.datalen > CHUNK || body != q.inlen + (with_data ? q.datalen : 0) ||
              (q.op == OP_FORK) != (passed >= 0) || (q.op == OP_FORK && q.datalen % 8);
    }
    if (r <= 0 || bad) {
        /* the process ended, or sent what no copy of this library sends: either way it is done with */
        if (passed >= 0)
            sys_close(passed);
        if (r > 0)
            say("brisk: a forked process sent a malformed request: its channel is closed");
        kin_gone(p, k);
        return;
    }
    const uint8_t *in = p->kbuf + sizeof(q);
    if (q.op == OP_FORK) {
        kin_fork(p, k, passed, in + q.inlen, q.datalen / 8);
        return;
    }
    struct rep a;
    memset(&a, 0, sizeof(a));
    uint8_t *out = p->rbuf + sizeof(a);
    long at = q.op == OP_SOCKET ? -1 : kin_find(k, q.handle);
    struct cmd c;
    memset(&c, 0, sizeof(c));
    if (q.op == OP_DROP) {
        if (at >= 0)
            kin_let(p, k, at);
        return; /* no answer: close() does not wait */
    }
    if (q.op != OP_SOCKET && at < 0) {
        c.ret = -EBADF;
    } else if ((q.op == OP_SOCKET || q.op == OP_ACCEPT) && kin_reserve(k, 1) < 0) {
        c.ret = -ENOMEM;
    } else {
        socklen_t olen = q.outlen;
        struct iovec d = {NULL, 0};
        memset(out, 0, q.outcap);
        c.fn = remote_fn[q.op];
        c.fd = -1;
        c.ps = at >= 0 ? k->set[at] : NULL;
        c.kin = k;
        c.a = (int)q.a;
        c.flags = (int)q.flags;
        c.in = (q.has & HAS_IN) ? in : NULL;
        c.inlen = q.inlen;
        c.out = (q.has & HAS_OUT) ? out : NULL;
        c.outlen = (q.has & HAS_OUTLEN) ? &olen : NULL;
        if (q.op == OP_SEND)
            d = (struct iovec){(void *)(in + q.inlen), q.datalen};
        else if (q.op == OP_RECV)
            d = (struct iovec){out + q.outcap, q.datalen};
        c.iov = &d;
        c.iovcnt = 1;
        p->stats.commands++;
        c.fn(p, &c);
        a.outlen = c.outlen ? olen : q.outcap;
        if (q.op == OP_RECV && c.ret >= 0)
            a.datalen = (uint32_t)c.moved;
    }
    a.ret = c.ret;
    a.timeo = c.timeo;
    a.sigpipe = c.sigpipe;
    a.nonblock = c.nonblock;
    a.dgram = c.dgram;
    a.mflags = c.mflags;
    int give = -1;
    if (c.made && c.ret >= 0) {
        give = c.made->fd;
        a.handle = c.made->handle;
        a.ret = 0;
    }
    struct iovec ov[3] = {{&a, sizeof(a)}, {out, q.outcap}, {out + q.outcap, a.datalen}};
    memset(&m, 0, sizeof(m));
    m.msg_iov = ov;
    m.msg_iovlen = 3;
    if (give >= 0) {
        memset(&cm, 0, sizeof(cm));
        m.msg_control = cm.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int));
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &give, sizeof(int));
    }
    ssize_t w = syscall(SYS_sendmsg, k->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (give >= 0) {
        sys_close(give); /* the child has its own now; the stack keeps A2 */
        c.made->fd = -1;
    }
    if (w < 0)
        kin_gone(p, k); /* it exited while asking */
}

static void on_kins(void *ctx, brisk_loop *l, int fd, unsigned ready, uint64_t now)
{
    (void)l;
    (void)ready;
    (void)now;
    brisk_posix *p = ctx;
    struct epoll_event ev[16];
    int n = epoll_wait(fd, ev, 16, 0);
    for (int i = 0; i < n; i++)
        kin_serve(p, ev[i].data.ptr); /* a kin is in one batch once; serving one frees no other */
}

/* ---- fork: the child's side ------------------------------------------------------------------------- */

static void remote_gone(brisk_posix *p, int fd)
{
    p->dead = 1;
    char what[40] = "";
    if (fd >= 0)
        snprintf(what, sizeof(what), " descriptor %d:", fd);
    if (!p->told++)
        say("brisk: pid %d:%s the brisk stack serving this process (in pid %d, which it was forked from) has "
            "ended or could not be reached: brisk sockets fail here with EBADF (docs/posix.md, fork)",
            (int)getpid(), what, (int)p->pid);
}

/* Up to PIECES of iov's buffers from byte `skip`, at most CHUNK bytes, into out; returns the count. */
static int iov_window(const struct iovec *iov, int n, size_t skip, struct iovec *out, uint32_t *len)
{
    size_t off;
    int i = iov_seek(iov, n, skip, &off), k = 0;
    size_t left = CHUNK;
    for (; i < n && k < PIECES && left; i++, off = 0) {
        size_t take = iov[i].iov_len - off;
        if (!take)
            continue;
        if (take > left)
            take = left;
        out[k++] = (struct iovec){(uint8_t *)iov[i].iov_base + off, take};
        left -= take;
    }
    *len = (uint32_t)(CHUNK - left);
    return k;
}

/* Sends one request (rlock held); 0, or -1 once the channel has ended. */
static int remote_send(brisk_posix *p, struct msghdr *m, int fd)
{
    if (unserved(p))
        return -1;
    if (p->dead) {
        remote_gone(p, fd);
        return -1;
    }
    ssize_t w;
    while ((w = syscall(SYS_sendmsg, p->chan, m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (w < 0) {
        remote_gone(p, fd);
        return -1;
    }
    return 0;
}

static void remote_drop(brisk_posix *p, uint64_t handle)
{
    struct req q;
    memset(&q, 0, sizeof(q));
    q.op = OP_DROP;
    q.handle = handle;
    struct iovec iv = {&q, sizeof(q)};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iv;
    m.msg_iovlen = 1;
    if (!p->dead)
        remote_send(p, &m, -1);
}

/* One of the child's numbers for ps left its table (rlock held): the last one tells the stack. */
static void remote_unref(brisk_posix *p, struct psock *ps)
{
    if (--ps->refs > 0)
        return;
    remote_drop(p, ps->handle);
    if (ps->stub)
        free(ps);
}

/* A socket made for the child (socket, accept): number fd, the stack's handle. */
static int remote_adopt(brisk_posix *p, int fd, uint64_t handle, int cloexec, int dgram)
{
    struct psock *ps = fd < p->tabsz ? calloc(1, sizeof(*ps)) : NULL;
    if (!ps) {
        int e = fd < p->tabsz ? ENOMEM : EMFILE;
        sys_close(fd);
        remote_drop(p, handle);
        return -e;
    }
    ps->handle = handle;
    ps->stub = 1;
    ps->dgram = dgram;
    ps->refs = 1;
    ps->fd = ps->fd2 = ps->peer = -1;
    ps->widx = -1;
    if (fd >= p->hi)
        p->hi = fd + 1;
    atomic_store_explicit(&p->cloexec[fd], cloexec != 0, memory_order_relaxed);
    atomic_store_explicit(&p->tab[fd], ps, memory_order_release);
    return fd;
}

/* The child's entry for fd (its copy of the table, and the numbers it has made since), or NULL. */
static struct psock *remote_slot(brisk_posix *p, int fd)
{
    return fd >= 0 && fd < p->tabsz ? atomic_load_explicit(&p->tab[fd], memory_order_acquire) : NULL;
}

static int remote_op(void (*fn)(brisk_posix *, struct cmd *))
{
    for (int i = 0; i < OP_NFN; i++)
        if (remote_fn[i] == fn)
            return i;
    return -1;
}

/* call() in a fork's child: the command as a request over the channel, its answer into c. */
static int64_t remote_call(brisk_posix *p, struct cmd *c)
{
    if (c->fn == do_stats) {
        memset(c->out, 0, sizeof(struct brisk_posix_stats)); /* the stack's counters are the parent's */
        return 0;
    }
    if (c->fn == do_close_all || c->fn == do_unlinger)
        return 0;
    int op = remote_op(c->fn);
    if (op < 0) {
        errno = EINVAL;
        return -1;
    }
    struct req q;
    memset(&q, 0, sizeof(q));
    q.op = (uint32_t)op;
    q.a = c->a;
    q.flags = c->flags;
    if (c->in) {
        q.has |= HAS_IN; /* every input taken is far shorter: a sockaddr, an option's value or name */
        q.inlen = c->inlen < SMALL_MAX ? c->inlen : SMALL_MAX;
    }
    if (c->outlen) {
        q.has |= HAS_OUTLEN;
        q.outlen = *c->outlen < SMALL_MAX ? *c->outlen : SMALL_MAX;
    }
    if (c->out) {
        q.has |= HAS_OUT;
        q.outcap = op == OP_IOCTL ? sizeof(int) : q.outlen;
    }
    uint8_t outbuf[SMALL_MAX];
    struct rep a;
    struct iovec sv[2 + PIECES], rv[2 + PIECES];
    int ns = 0, nr = 0;
    sv[ns++] = (struct iovec){&q, sizeof(q)};
    if (q.inlen)
        sv[ns++] = (struct iovec){(void *)c->in, q.inlen};
    rv[nr++] = (struct iovec){&a, sizeof(a)};
    if (q.outcap)
        rv[nr++] = (struct iovec){outbuf, q.outcap};
    size_t left = 0; /* a send's bytes beyond this request's window */
    if (op == OP_SEND) {
        ns += iov_window(c->iov, c->iovcnt, c->skip, sv + ns, &q.datalen);
        for (int i = 0; i < c->iovcnt; i++)
            left += c->iov[i].iov_len;
        left -= c->skip + q.datalen;
    }
    else if (op == OP_RECV)
        nr += iov_window(c->iov, c->iovcnt, c->skip, rv + nr, &q.datalen);
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } cm;
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = sv;
    m.msg_iovlen = (size_t)ns;
    pthread_mutex_lock(&p->rlock);
    struct psock *ps = NULL;
    if (op != OP_SOCKET) {
        ps = remote_slot(p, c->fd);
        if (!ps || (ps->dgram && left)) {
            pthread_mutex_unlock(&p->rlock);
            errno = ps ? EMSGSIZE : EBADF; /* a datagram is one request: at most CHUNK bytes, PIECES buffers */
            return -1;
        }
        q.handle = ps->handle;
    }
    if (remote_send(p, &m, c->fd) < 0) {
        pthread_mutex_unlock(&p->rlock);
        errno = EBADF;
        return -1;
    }
    memset(&m, 0, sizeof(m));
    m.msg_iov = rv;
    m.msg_iovlen = (size_t)nr;
    m.msg_control = cm.buf;
    m.msg_controllen = sizeof(cm.buf);
    ssize_t r;
    while ((r = syscall(SYS_recvmsg, p->chan, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ; /* the request is in the stack's hands: its answer must be read */
    int got = -1;
    struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
        h->cmsg_len >= CMSG_LEN(sizeof(int)))
        memcpy(&got, CMSG_DATA(h), sizeof(int));
    if (r < (ssize_t)sizeof(a)) {
        if (got >= 0)
            sys_close(got);
        remote_gone(p, c->fd);
        pthread_mutex_unlock(&p->rlock);
        errno = EBADF;
        return -1;
    }
    c->ret = a.ret;
    c->timeo = a.timeo;
    c->sigpipe = a.sigpipe;
    c->nonblock = a.nonblock;
    c->dgram = a.dgram;
    c->mflags = a.mflags;
    c->moved = a.datalen;
    if (c->out)
        memcpy(c->out, outbuf, a.outlen < q.outcap ? a.outlen : q.outcap);
    if (c->outlen)
        *c->outlen = a.outlen;
    if (op == OP_SOCKET || op == OP_ACCEPT) {
        if (c->ret == 0 && got >= 0)
            c->ret = remote_adopt(p, got, a.handle, c->flags & SOCK_CLOEXEC, op == OP_SOCKET && c->a == SOCK_DGRAM);
        else if (got >= 0)
            sys_close(got);
    } else if (got >= 0) {
        sys_close(got);
    }
    pthread_mutex_unlock(&p->rlock);
    if (c->ret < 0) {
        errno = (int)-c->ret;
        return -1;
    }
    return c->ret;
}

/* close / forget / dup in the child: the kernel's part here, the stack told at a socket's last number. */
static int remote_forget(brisk_posix *p, int fd)
{
    pthread_mutex_lock(&p->rlock);
    struct psock *ps = remote_slot(p, fd);
    if (!ps) {
        pthread_mutex_unlock(&p->rlock);
        errno = EBADF;
        return -1;
    }
    atomic_store_explicit(&p->tab[fd], NULL, memory_order_release);
    remote_unref(p, ps);
    pthread_mutex_unlock(&p->rlock);
    return 0;
}

/* target < 0: the lowest free number >= minfd (F_DUPFD); else dup3 onto target. */
static int remote_dup(brisk_posix *p, int fd, int target, int minfd, int cloexec)
{
    pthread_mutex_lock(&p->rlock);
    struct psock *ps = remote_slot(p, fd);
    long r = -1;
    errno = EBADF;
    if (ps && target < 0) {
        r = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)minfd);
    } else if (ps && target < p->tabsz) {
        struct psock *old = atomic_load_explicit(&p->tab[target], memory_order_relaxed);
        if (old == ps) {
            atomic_store_explicit(&p->cloexec[target], cloexec != 0, memory_order_relaxed);
            pthread_mutex_unlock(&p->rlock);
            return target;
        }
        r = syscall(SYS_dup3, fd, target, O_CLOEXEC);
        if (r >= 0 && old) {
            atomic_store_explicit(&p->tab[target], NULL, memory_order_release);
            remote_unref(p, old);
        }
    }
    if (r >= p->tabsz) {
        sys_close((int)r);
        r = -1;
        errno = EMFILE;
    }
    if (r >= 0) {
        ps->refs++;
        if (r >= p->hi)
            p->hi = (int)r + 1;
        atomic_store_explicit(&p->cloexec[r], cloexec != 0, memory_order_relaxed);
        atomic_store_explicit(&p->tab[r], ps, memory_order_release);
    }
    pthread_mutex_unlock(&p->rlock);
    return (int)r;
}

int brisk_posix_is_remote(const brisk_posix *p)
{
    return p && p->remote;
}

int brisk_posix_channel(const brisk_posix *p)
{
    return p && p->remote ? p->chan : -1;
}

int brisk_posix_move_channel(brisk_posix *p)
{
    if (!p || !p->remote || p->chan < 0)
        return 0;
    pthread_mutex_lock(&p->rlock);
    int n = sys_fcntl(p->chan, F_DUPFD_CLOEXEC, p->chan + 1);
    if (n >= 0) {
        sys_close(p->chan);
        p->chan = n;
    }
    pthread_mutex_unlock(&p->rlock);
    return n < 0 ? -1 : 0;
}

void brisk_posix_fork_prepare(brisk_posix *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->forklock);
    p->fork_sv[0] = p->fork_sv[1] = -1;
    int sv[2];
    if (syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        sv[0] = sv[1] = -1; /* the child finds no channel and says so at its first call */
    } else {
        /* Room for a whole request or answer whatever net.core.wmem_default says (a message must fit the
         * sender's buffer); the kernel caps it at wmem_max, which is above it by default. */
        int sz = (int)(KBUF_SIZE + RBUF_SIZE);
        syscall(SYS_setsockopt, sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
        syscall(SYS_setsockopt, sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    }
    if (!p->remote) {
        if (sv[0] >= 0) {
            struct cmd c;
            cmd_init(&c, do_fork_hold, -1);
            c.a = sv[0]; /* the stack's from now on */
            if (call(p, &c) == 0)
                p->fork_sv[0] = 1; /* the stack thread waits for brisk_posix_fork_parent */
        }
    } else {
        /* Held until the fork is over, so that the grandchild's copy of the table is whole. */
        pthread_mutex_lock(&p->rlock);
        if (sv[0] >= 0) {
            uint8_t *list = malloc(CHUNK);
            struct req q;
            memset(&q, 0, sizeof(q));
            q.op = OP_FORK;
            for (int fd = 0; list && fd < p->hi && q.datalen + 8 <= CHUNK; fd++) {
                struct psock *ps = atomic_load_explicit(&p->tab[fd], memory_order_relaxed);
                if (ps) {
                    memcpy(list + q.datalen, &ps->handle, 8);
                    q.datalen += 8;
                }
            }
            struct iovec iv[2] = {{&q, sizeof(q)}, {list, q.datalen}};
            union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
            } cm;
            memset(&cm, 0, sizeof(cm));
            struct msghdr m;
            memset(&m, 0, sizeof(m));
            m.msg_iov = iv;
            m.msg_iovlen = 2;
            m.msg_control = cm.buf;
            m.msg_controllen = CMSG_SPACE(sizeof(int));
            struct cmsghdr *h = CMSG_FIRSTHDR(&m);
            h->cmsg_level = SOL_SOCKET;
            h->cmsg_type = SCM_RIGHTS;
            h->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(h), &sv[0], sizeof(int));
            if (!list || p->dead || remote_send(p, &m, -1) < 0) {
                sys_close(sv[1]);
                sv[1] = -1;
            }
            free(list);
            sys_close(sv[0]); /* in flight, or not wanted */
        }
        p->fork_sv[0] = 2;
    }
    p->fork_sv[1] = sv[1];
}

void brisk_posix_fork_parent(brisk_posix *p)
{
    if (!p)
        return;
    if (p->fork_sv[1] >= 0)
        sys_close(p->fork_sv[1]);
    if (p->fork_sv[0] == 1)
        sem_post(&p->fork_go);
    else if (p->fork_sv[0] == 2)
        pthread_mutex_unlock(&p->rlock);
    p->fork_sv[0] = p->fork_sv[1] = -1;
    pthread_mutex_unlock(&p->forklock);
}

void brisk_posix_fork_child(brisk_posix *p)
{
    if (!p)
        return;
    int ch = p->fork_sv[1];
    p->fork_sv[0] = p->fork_sv[1] = -1;
    /* Locked by the thread that forked, which is this one: fresh ones. */
    pthread_mutex_init(&p->forklock, NULL);
    pthread_mutex_init(&p->rlock, NULL);
    if (p->remote) {
        if (p->chan >= 0)
            sys_close(p->chan); /* the parent's channel */
    } else {
        /* The stack's descriptors, which this process would otherwise hold open with no thread behind them:
         * a B held here would keep the ERR mark (B's close) from reaching A, another child's channel would
         * never end, the TAP would stay attached after the stack's process exits. */
        int fds[96];
        int n = brisk_loop_fds(p->l, fds, 96);
        for (int i = 0; i < n; i++)
            sys_close(fds[i]);
        for (struct kin *k = p->kins; k; k = k->next)
            sys_close(k->fd);
        for (struct psock *ps = p->all; ps; ps = ps->anext) {
            if (ps->fd2 >= 0)
                sys_close(ps->fd2);
            if (ps->peer >= 0)
                sys_close(ps->peer);
        }
        p->remote = 1;
    }
    p->chan = ch;
    p->dead = ch < 0;
    p->told = 0;
    if (p->alive)
        *p->alive = 1; /* the kernel zeroed this process's copy */
}


static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Waits for events on fd until `deadline` (0 = none). 1 ready, 0 timed out, -1 interrupted (errno EINTR). */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline) {
            uint64_t now = clock_ns();
            if (now >= deadline)
                return 0;
            uint64_t left = (deadline - now + BRISK_NSEC_PER_MSEC - 1) / BRISK_NSEC_PER_MSEC;
            ms = left > 0x7fffffff ? 0x7fffffff : (int)left;
        }
        struct pollfd pf = {fd, events, 0};
        int n = poll(&pf, 1, ms);
        if (n > 0)
            return 1;
        if (n < 0)
            return errno == EINTR ? -1 : 1;
    }
}

/* Whether a wait a signal interrupted is restarted: Linux restarts a socket call without a timeout when the
 * handler was installed with SA_RESTART (sock_intr_errno: -ERESTARTSYS), and fails it with EINTR otherwise.
 * Which signal it was is not known here, so the call restarts only when every caught signal's handler has
 * SA_RESTART — exact whenever they agree, and EINTR (which callers must handle anyway) when they do not. */
static int restart_ok(uint64_t timeo)
{
    if (timeo)
        return 0;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) < 0)
            continue;
        if (!(sa.sa_flags & SA_SIGINFO) && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
            continue;
        if (!(sa.sa_flags & SA_RESTART))
            return 0;
    }
    return 1;
}

static uint64_t deadline_of(uint64_t timeo)
{
    return timeo ? clock_ns() + timeo : 0;
}

/* socket(): domain AF_INET or AF_INET6 (do_socket's input), type SOCK_STREAM or SOCK_DGRAM (its c->a). */
static int make_socket(brisk_posix *p, int domain, int type, int flags)
{
    struct cmd c;
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
        errno = EINVAL;
        return -1;
    }
    cmd_init(&c, do_socket, -1);
    c.flags = flags;
    c.a = type;
    c.in = &domain;
    c.inlen = sizeof(domain);
    return (int)call(p, &c);
}

int brisk_posix_socket(brisk_posix *p, int flags)
{
    return make_socket(p, AF_INET, SOCK_STREAM, flags);
}

int brisk_posix_socket_in(brisk_posix *p, int domain, int type, int flags)
{
    if (domain != AF_INET && domain != AF_INET6) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    if (type != SOCK_STREAM && type != SOCK_DGRAM) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    return make_socket(p, domain, type, flags);
}

int brisk_posix_socket_udp(brisk_posix *p, int flags)
{
    return make_socket(p, AF_INET, SOCK_DGRAM, flags);
}

int brisk_posix_bind(brisk_posix *p, int fd, const struct sockaddr *sa, socklen_t len)
{
    struct cmd c;
    cmd_init(&c, do_bind, fd);
    c.in = sa;
    c.inlen = len;
    return (int)call(p, &c);
}

int brisk_posix_listen(brisk_posix *p, int fd, int backlog)
{
    struct cmd c;
    cmd_init(&c, do_listen, fd);
    c.a = backlog;
    return (int)call(p, &c);
}

int brisk_posix_accept4(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
        errno = EINVAL;
        return -1;
    }
    uint64_t deadline = 0;
    for (int first = 1;; first = 0) {
        struct cmd c;
        cmd_init(&c, do_accept, fd);
        c.flags = flags;
        c.out = sa;
        c.outlen = len;
        int r = (int)call(p, &c);
        if (r >= 0 || errno != EAGAIN || c.nonblock)
            return r;
        if (first)
            deadline = deadline_of(c.timeo);
        int w = wait_fd(fd, POLLIN, deadline);
        if (w < 0 && restart_ok(c.timeo))
            continue;
        if (w <= 0) {
            errno = w < 0 ? EINTR : EAGAIN;
            return -1;
        }
    }
}

int brisk_posix_connect(brisk_posix *p, int fd, const struct sockaddr *sa, socklen_t len)
{
    struct cmd c;
    cmd_init(&c, do_connect, fd);
    c.in = sa;
    c.inlen = len;
    int r = (int)call(p, &c);
    if (r == 0 || errno != EINPROGRESS || c.nonblock)
        return r;
    uint64_t deadline = deadline_of(c.timeo);
    for (;;) {
        int w = wait_fd(fd, POLLOUT, deadline);
        if (w <= 0) {
            errno = w < 0 ? EINTR : EINPROGRESS; /* Linux: SO_SNDTIMEO ends a connect with EINPROGRESS */
            return -1;
        }
        cmd_init(&c, do_connect, fd);
        c.in = sa;
        c.inlen = len;
        r = (int)call(p, &c);
        if (r == 0 || errno != EALREADY)
            return r;
    }
}

static void sigpipe(void)
{
    raise(SIGPIPE);
}

/* The bytes a message's buffers hold, or -1 with EFAULT for a message that has none to give. */
static int msg_len(const struct msghdr *m, size_t *len)
{
    if (!m || (m->msg_iovlen && !m->msg_iov)) {
        errno = EFAULT;
        return -1;
    }
    *len = 0;
    for (size_t i = 0; i < m->msg_iovlen; i++)
        *len += m->msg_iov[i].iov_len;
    return 0;
}

/* A blocking call that could not finish waits for its descriptor (`ev`) until its SO_RCVTIMEO /
 * SO_SNDTIMEO deadline, counted from the first try. Returns 1 to try again; 0 when the call is over with
 * the `moved` bytes it has; -1 when it fails with errno set (EINTR, or EAGAIN at the deadline). */
static int wait_more(int fd, short ev, const struct cmd *c, int first, uint64_t *deadline, size_t moved)
{
    if (first)
        *deadline = deadline_of(c->timeo);
    int w = wait_fd(fd, ev, *deadline);
    if (w < 0 && !moved && restart_ok(c->timeo))
        return 1;
    if (w <= 0) {
        if (moved)
            return 0;
        errno = w < 0 ? EINTR : EAGAIN;
        return -1;
    }
    return 1;
}

ssize_t brisk_posix_recvmsg(brisk_posix *p, int fd, struct msghdr *m, int flags)
{
    size_t len;
    if (msg_len(m, &len) < 0)
        return -1;
    size_t got = 0;
    uint64_t deadline = 0;
    /* UDP: the sender's address; TCP leaves none (Linux sets msg_namelen 0) */
    socklen_t namelen = m->msg_name ? m->msg_namelen : 0;
    int named = 0, mflags = 0;
    for (int first = 1;; first = 0) {
        struct cmd c;
        cmd_init(&c, do_recv, fd);
        c.iov = m->msg_iov;
        c.iovcnt = (int)m->msg_iovlen;
        c.skip = got;
        c.flags = flags;
        c.out = m->msg_name;
        c.outlen = m->msg_name ? &namelen : NULL;
        ssize_t r = (ssize_t)call(p, &c);
        if (r >= 0 && c.dgram) { /* one datagram per call, whatever MSG_WAITALL asks (as Linux's) */
            got = (size_t)r;
            named = m->msg_name != NULL;
            mflags = c.mflags;
            break;
        }
        if (r > 0) {
            got += (size_t)r;
            if (!(flags & MSG_WAITALL) || got >= len || (flags & (MSG_PEEK | MSG_TRUNC)))
                break;
        } else if (r == 0) {
            break;
        } else if (errno != EAGAIN || c.nonblock || (flags & MSG_DONTWAIT)) {
            if (got)
                break;
            return -1;
        }
        int more = wait_more(fd, POLLIN, &c, first, &deadline, got);
        if (more < 0)
            return -1;
        if (more == 0)
            break;
    }
    m->msg_namelen = named ? namelen : 0;
    m->msg_controllen = 0;
    m->msg_flags = mflags;
    return (ssize_t)got;
}

ssize_t brisk_posix_sendmsg(brisk_posix *p, int fd, const struct msghdr *m, int flags)
{
    size_t len;
    if (msg_len(m, &len) < 0)
        return -1;
    size_t done = 0;
    uint64_t deadline = 0;
    for (int first = 1;; first = 0) {
        struct cmd c;
        cmd_init(&c, do_send, fd);
        c.iov = m->msg_iov;
        c.iovcnt = (int)m->msg_iovlen;
        c.skip = done;
        c.flags = flags;
        c.in = m->msg_name; /* UDP's destination; TCP ignores it, as tcp_sendmsg does */
        c.inlen = m->msg_namelen;
        ssize_t r = (ssize_t)call(p, &c);
        if (r >= 0) {
            done += (size_t)r;
            if (done >= len || c.nonblock || (flags & MSG_DONTWAIT))
                return (ssize_t)done;
        } else {
            if (c.sigpipe && !(flags & MSG_NOSIGNAL) && !done)
                sigpipe();
            if (done)
                return (ssize_t)done;
            if (errno != EAGAIN || c.nonblock || (flags & MSG_DONTWAIT))
                return -1;
        }
        int more = wait_more(fd, POLLOUT, &c, first, &deadline, done);
        if (more <= 0)
            return more < 0 ? -1 : (ssize_t)done;
    }
}

ssize_t brisk_posix_recv(brisk_posix *p, int fd, void *buf, size_t len, int flags)
{
    struct iovec iov = {buf, len};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    return brisk_posix_recvmsg(p, fd, &m, flags);
}

ssize_t brisk_posix_send(brisk_posix *p, int fd, const void *buf, size_t len, int flags)
{
    struct iovec iov = {(void *)buf, len};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    return brisk_posix_sendmsg(p, fd, &m, flags);
}

ssize_t brisk_posix_recvfrom(brisk_posix *p, int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                            socklen_t *salen)
{
    struct iovec iov = {buf, len};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (sa && salen) {
        m.msg_name = sa;
        m.msg_namelen = *salen;
    }
    ssize_t r = brisk_posix_recvmsg(p, fd, &m, flags);
    if (r >= 0 && sa && salen)
        *salen = m.msg_namelen;
    return r;
}

ssize_t brisk_posix_sendto(brisk_posix *p, int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *sa, socklen_t salen)
{
    struct iovec iov = {(void *)buf, len};
    struct msghdr m;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_name = (void *)sa;
    m.msg_namelen = sa ? salen : 0;
    return brisk_posix_sendmsg(p, fd, &m, flags);
}

int brisk_posix_shutdown(brisk_posix *p, int fd, int how)
{
    struct cmd c;
    cmd_init(&c, do_shutdown, fd);
    c.a = how;
    return (int)call(p, &c);
}

int brisk_posix_close(brisk_posix *p, int fd)
{
    if (p->remote)
        return remote_forget(p, fd) < 0 ? -1 : sys_close(fd);
    struct cmd c;
    cmd_init(&c, do_close, fd);
    sem_init(&c.linger, 0, 0);
    if (call(p, &c) < 0) {
        sem_destroy(&c.linger);
        return -1;
    }
    int r = sys_close(fd);
    if (c.a == 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = (uint64_t)ts.tv_nsec + c.timeo;
        ts.tv_sec += (time_t)(t / BRISK_NSEC_PER_SEC);
        ts.tv_nsec = (long)(t % BRISK_NSEC_PER_SEC);
        int w;
        while ((w = sem_timedwait(&c.linger, &ts)) < 0 && errno == EINTR)
            ;
        if (w < 0) { /* the linger time passed: the connection goes on closing in the background */
            struct cmd u;
            cmd_init(&u, do_unlinger, -1);
            u.out = &c;
            call(p, &u);
        }
    }
    sem_destroy(&c.linger);
    return r;
}

int brisk_posix_getsockname(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len)
{
    struct cmd c;
    cmd_init(&c, do_getname, fd);
    c.out = sa;
    c.outlen = len;
    return (int)call(p, &c);
}

int brisk_posix_getpeername(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len)
{
    struct cmd c;
    cmd_init(&c, do_getname, fd);
    c.a = 1;
    c.out = sa;
    c.outlen = len;
    return (int)call(p, &c);
}

int brisk_posix_setsockopt(brisk_posix *p, int fd, int level, int name, const void *val, socklen_t len)
{
    struct cmd c;
    cmd_init(&c, do_setsockopt, fd);
    c.a = level;
    c.flags = name;
    c.in = val;
    c.inlen = len;
    return (int)call(p, &c);
}

int brisk_posix_getsockopt(brisk_posix *p, int fd, int level, int name, void *val, socklen_t *len)
{
    struct cmd c;
    cmd_init(&c, do_getsockopt, fd);
    c.a = level;
    c.flags = name;
    c.out = val;
    c.outlen = len;
    return (int)call(p, &c);
}

int brisk_posix_dupfd(brisk_posix *p, int fd, int minfd, int cloexec)
{
    struct cmd c;
    if (minfd < 0) {
        errno = EINVAL;
        return -1;
    }
    if (p->remote)
        return remote_dup(p, fd, -1, minfd, cloexec);
    cmd_init(&c, do_dup, fd);
    c.a = -1;
    c.flags = minfd;
    c.inlen = cloexec != 0;
    return (int)call(p, &c);
}

int brisk_posix_dup3(brisk_posix *p, int fd, int newfd, int flags)
{
    struct cmd c;
    if (newfd < 0 || (flags & ~O_CLOEXEC)) {
        errno = newfd < 0 ? EBADF : EINVAL;
        return -1;
    }
    if (p->remote)
        return remote_dup(p, fd, newfd, 0, flags & O_CLOEXEC);
    cmd_init(&c, do_dup, fd);
    c.a = newfd;
    c.flags = flags;
    return (int)call(p, &c);
}

int brisk_posix_forget(brisk_posix *p, int fd)
{
    if (p->remote)
        return remote_forget(p, fd);
    struct cmd c;
    cmd_init(&c, do_forget, fd);
    return (int)call(p, &c);
}

static int set_nonblock(brisk_posix *p, int fd, int on)
{
    struct cmd c;
    cmd_init(&c, do_nonblock, fd);
    c.a = on;
    return (int)call(p, &c);
}

int brisk_posix_fcntl(brisk_posix *p, int fd, int cmd, long arg)
{
    if (!brisk_posix_owns(p, fd)) {
        errno = EBADF;
        return -1;
    }
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
        return brisk_posix_dupfd(p, fd, (int)arg, cmd == F_DUPFD_CLOEXEC);
    if (cmd == F_GETFD)
        return atomic_load_explicit(&p->cloexec[fd], memory_order_relaxed) ? FD_CLOEXEC : 0;
    if (cmd == F_SETFD) {
        atomic_store_explicit(&p->cloexec[fd], (arg & FD_CLOEXEC) != 0, memory_order_relaxed);
        return 0;
    }
    int r = sys_fcntl(fd, cmd, arg);
    if (r < 0)
        return -1;
    if (cmd == F_SETFL && set_nonblock(p, fd, (arg & O_NONBLOCK) != 0) < 0)
        return -1;
    return r;
}

int brisk_posix_ioctl(brisk_posix *p, int fd, unsigned long req, void *arg)
{
    struct cmd c;
    if (req == FIONBIO) {
        int on;
        if (!arg) {
            errno = EFAULT;
            return -1;
        }
        memcpy(&on, arg, sizeof(on));
        int fl = sys_fcntl(fd, F_GETFL, 0);
        if (fl < 0)
            return -1;
        sys_fcntl(fd, F_SETFL, on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK));
        return set_nonblock(p, fd, on);
    }
    if (req != FIONREAD && req != SIOCOUTQ) {
        errno = ENOTTY;
        return -1;
    }
    if (!arg) {
        errno = EFAULT;
        return -1;
    }
    cmd_init(&c, do_ioctl, fd);
    c.a = req == FIONREAD ? 0 : 1;
    c.out = arg;
    return (int)call(p, &c);
}

void brisk_posix_get_stats(brisk_posix *p, struct brisk_posix_stats *out)
{
    struct cmd c;
    cmd_init(&c, do_stats, -1);
    c.out = out;
    call(p, &c);
}

/* ---- instance ---------------------------------------------------------------------------------------- */

static void teardown(brisk_posix *p)
{
    while (p->closing) {
        struct psock *ps = p->closing;
        p->closing = ps->cnext;
        free(ps); /* its connection goes with the stack */
    }
    while (p->kins) {
        struct kin *k = p->kins;
        p->kins = k->next;
        sys_close(k->fd); /* the child's next call finds the channel ended, and says so */
        free(k->set);
        free(k);
    }
    while (p->all) { /* held by forked processes only */
        struct psock *ps = p->all;
        p->all = ps->anext;
        sys_close(ps->fd2);
        if (ps->peer >= 0)
            sys_close(ps->peer);
        free(ps->held);
        free(ps);
    }
    free(p->ubuf);
    if (p->kep >= 0)
        sys_close(p->kep);
    free(p->kbuf);
    free(p->rbuf);
    if (p->alive)
        munmap((void *)p->alive, 4096);
    sem_destroy(&p->fork_go);
    pthread_mutex_destroy(&p->forklock);
    pthread_mutex_destroy(&p->rlock);
    if (p->st)
        brisk_stack_free(p->st);
    if (p->cfg.close_dev && p->running >= 0)
        p->cfg.close_dev(p->cfg.dev_ctx);
    if (p->l)
        brisk_loop_free(p->l);
    if (p->efd >= 0)
        sys_close(p->efd);
    pthread_mutex_destroy(&p->qlock);
    free(p->tab);
    free(p->cloexec);
    free(p->watch);
    free(p);
}

brisk_posix *brisk_posix_new(const struct brisk_posix_config *cfg, char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    brisk_posix *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    p->cfg = *cfg;
    p->efd = -1;
    p->kep = p->chan = -1;
    p->fork_sv[0] = p->fork_sv[1] = -1;
    p->pid = getpid();
    pthread_mutex_init(&p->forklock, NULL);
    pthread_mutex_init(&p->rlock, NULL);
    sem_init(&p->fork_go, 0, 0);
    void *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pg != MAP_FAILED && madvise(pg, 4096, MADV_WIPEONFORK) == 0) {
        p->alive = pg;
        *p->alive = 1;
    } else if (pg != MAP_FAILED) {
        munmap(pg, 4096); /* a kernel before 4.14: such children go undetected */
    }
    p->running = -1; /* the device is not open yet */
    pthread_mutex_init(&p->qlock, NULL);
    struct rlimit rl;
    /* Sized by the hard limit, so that a program raising its soft limit later still fits; the table is
     * calloc'd, so untouched pages cost no memory. */
    rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_max : 1024;
    if (n < 1024 || n == RLIM_INFINITY)
        n = n == RLIM_INFINITY ? TABLE_MAX : 1024;
    p->tabsz = n > TABLE_MAX ? TABLE_MAX : (int)n;
    p->tab = calloc((size_t)p->tabsz, sizeof(*p->tab));
    p->cloexec = calloc((size_t)p->tabsz, sizeof(*p->cloexec));
    p->st = brisk_stack_new(&cfg->settings);
    int err = 0;
    if (p->tab && p->cloexec && p->st)
        p->l = brisk_loop_new(p->st, &err);
    if (!p->tab || !p->cloexec || !p->st || !p->l) {
        snprintf(why, why_len, "cannot create the stack: %s", p->st ? brisk_strerror(err) : "bad settings or memory");
        teardown(p);
        return NULL;
    }
    if (cfg->open_dev && cfg->open_dev(cfg->dev_ctx, p->l, why, why_len) < 0) {
        teardown(p);
        return NULL;
    }
    p->running = 0;
    p->eph = (uint32_t)(cfg->settings.seed * 2654435761u);
    brisk_loop_set_busy_poll(p->l, cfg->spin_ns);
    p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->efd < 0 || brisk_loop_watch_fd(p->l, p->efd, BRISK_LOOP_IN, on_cmds, p) < 0 ||
        (p->hook = brisk_loop_add_hook(p->l, on_hook, p)) < 0) {
        snprintf(why, why_len, "cannot set up the command queue: %s", strerror(errno));
        teardown(p);
        return NULL;
    }
    /* The stack thread takes no signals: handlers run on the application's threads, and its epoll_wait
     * is never interrupted. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&p->thread, NULL, stack_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(why, why_len, "cannot start the stack thread: %s", strerror(rc));
        teardown(p);
        return NULL;
    }
    p->running = 1;
    return p;
}

void brisk_posix_free(brisk_posix *p)
{
    if (!p)
        return;
    struct cmd c;
    cmd_init(&c, do_close_all, -1);
    call(p, &c);
    struct brisk_posix_stats k;
    brisk_posix_get_stats(p, &k);
    if (k.children)
        say("brisk: pid %d: exiting while %llu process(es) forked from it still hold %llu brisk socket(s): the "
            "stack ends with this process, so those connections end without FIN or RST, and the processes' "
            "calls on them fail with EBADF from now on (docs/posix.md, fork)",
            (int)getpid(), (unsigned long long)k.children, (unsigned long long)k.held_by_children);
    uint64_t until = clock_ns() + p->cfg.exit_wait_ns;
    for (;;) {
        struct brisk_posix_stats s;
        brisk_posix_get_stats(p, &s);
        if (!s.closing)
            break;
        if (clock_ns() >= until) {
            fprintf(stderr, "brisk: exiting with %llu connection(s) still closing\n", (unsigned long long)s.closing);
            break;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (p->cfg.log) {
        struct brisk_posix_stats s;
        brisk_posix_get_stats(p, &s);
        plog(p, "brisk: %llu commands, %llu wakeups, %llu mirror system calls", (unsigned long long)s.commands,
             (unsigned long long)s.wakeups, (unsigned long long)s.mirror_ops);
    }
    brisk_loop_stop(p->l);
    pthread_join(p->thread, NULL);
    teardown(p);
}
