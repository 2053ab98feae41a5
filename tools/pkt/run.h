/*
 * run.h (brisk-pkt internal) — the state of one script's run, shared by run.c, net.c and sys.c.
 *
 * The clock is virtual: `now` only moves when the interpreter moves it, to the next event's time or to the
 * stack's next deadline, so a script's seconds of TCP run in microseconds and every run is the same.
 */
#ifndef BRISK_PKT_RUN_H
#define BRISK_PKT_RUN_H

#include <stdint.h>

#include "brisk/netdev.h"
#include "pkt/pkt.h"

#define RUN_FDS       64   /* descriptors a script may hold */
#define RUN_HELD      1024 /* frames transmitted and not yet completed */
#define RUN_EPOLL_MAX 16   /* interest entries per epoll instance */
#define RUN_TSMAP     256  /* outbound TSval mappings remembered (script value -> live value) */

/* One frame the stack transmitted. */
struct run_frame {
    uint64_t at; /* virtual ns */
    uint8_t *data;
    size_t len;
};

enum fd_kind { FD_FREE, FD_SOCK, FD_EPOLL };

struct run_epoll_entry {
    int fd;          /* live fd watched */
    uint32_t events; /* EPOLL* asked */
    uint64_t data;   /* what epoll_wait reports (the script writes {events=..., fd=N}: data.fd = N) */
    int disabled;    /* EPOLLONESHOT fired */
};

struct run_fd {
    enum fd_kind kind;
    /* FD_SOCK */
    brisk_sock *s;
    int nonblock;
    int listening;
    int connecting;    /* connect() started, not yet reported done */
    int shut_rd;       /* shutdown(SHUT_RD) */
    int err_reported;  /* the connection's error was returned once; later calls see EOF / EPIPE */
    int err_pending;   /* the error is still to be reported (SO_ERROR, or the next call) */
    uint32_t wakeups;  /* socket callbacks since the last epoll report (edge-triggered epoll) */
    uint64_t linger_ns; /* SO_LINGER on with a timeout: close waits up to this long */
    int linger_on;
    int inq_cmsg;      /* setsockopt(TCP_INQ, 1): recvmsg would add TCP_CM_INQ */
    uint64_t sndbuf, rcvbuf; /* as set (getsockopt doubles them, as Linux) */
    /* FD_EPOLL */
    struct run_epoll_entry ep[RUN_EPOLL_MAX];
    int nep;
};

/* The connection the script's packets belong to (packetdrill's "socket under test"). */
struct run_sut {
    int exists;
    int passive;          /* created by an inbound SYN to a listener (else by connect) */
    uint16_t lport, rport; /* live ports: the stack's and the script peer's */
    uint32_t script_local_isn, live_local_isn;
    int have_local_isn;
    uint32_t remote_isn;  /* the script peer's ISN: script and live values are the same */
    /* TCP timestamps: the first outbound TSval seen, in both spaces, and exact script -> live values. */
    int have_ts;
    uint32_t first_script_ts, first_live_ts;
    uint32_t ts_script[RUN_TSMAP], ts_live[RUN_TSMAP];
    unsigned nts, ts_next;
    /* The last segment injected, for reading the connection's fields (not needed beyond messages). */
};

/* A system call still running: a "start...end" call that blocked, or one being completed. */
struct run_call {
    int active;
    const struct pkt_event *ev;
    int64_t start_us, end_us; /* script times, absolute */
    uint64_t done;        /* progress of a blocking write / read: bytes so far */
    int started;          /* a lingering close sent its FIN */
    uint64_t deadline_ns; /* a lingering close gives up waiting then */
    uint64_t wake_ns;     /* a poll / epoll_wait timeout: the clock must stop there (0: none) */
};

struct run {
    const struct pkt_script *s;
    const struct pkt_config *cfg;
    struct pkt_result *res;
    char err[1024]; /* message of the failure being reported */

    brisk_stack *st;
    brisk_netdev *dev;
    uint64_t now; /* virtual ns */

    /* addresses (host order) and ports */
    uint32_t local_ip, remote_ip, gateway_ip, prefix;
    uint16_t bind_port, connect_port, next_eph;
    uint8_t local_mac[6], gw_mac[6];
    uint32_t mtu;

    /* transmitted frames not yet consumed by the script, oldest first */
    struct run_frame *outq;
    size_t nout, outcap;
    brisk_pkt *held[RUN_HELD];
    size_t nheld;

    struct run_fd fds[RUN_FDS];
    int script_fd[RUN_FDS]; /* live fd of script fd i, -1 none */
    struct run_sut sut;
    struct run_call call;

    int64_t tolerance_us;
    int tolerance_percent;
    int64_t tcp_ts_tick_us; /* 0: outbound TSvals are mapped, not checked */
    int64_t last_script_us; /* script time of the previous event */
    int64_t prev_event_us;  /* script time of the previous event (for inbound-after-inbound anchoring) */
    int prev_inbound;
    const struct pkt_event *cur; /* the event being run */
    int stopped;                 /* a verdict other than PASS is set */
};

/* Stops the run with a verdict (FAIL, BAD_SCRIPT, UNSUPPORTED) and a message; returns -1. */
int run_fail(struct run *r, int status, const struct pkt_event *ev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* net.c */
int net_init(struct run *r, const struct brisk_settings *s);
void net_free(struct run *r);
/* Completes every transmitted frame and runs the stack's deferred work at `now`, until quiet. */
void net_settle(struct run *r);
/* Moves the clock to t (ns), polling the stack at each deadline on the way (and retrying a pending call). */
void net_advance(struct run *r, uint64_t t);
/* Injects an inbound packet event (TCP or ICMP); returns 0 or -1 (run_fail called). */
int net_inbound(struct run *r, const struct pkt_event *ev);
/* Waits for and checks an outbound packet event; returns 0 or -1. */
int net_outbound(struct run *r, const struct pkt_event *ev, int64_t t_us, int64_t t_end_us);
/* The connection the script's packets go to is being made by connect() / a listener. */
void net_sut_connecting(struct run *r);

/* sys.c */
int sys_init(struct run *r);
void sys_free(struct run *r);
/* Runs a system call event at the current time. A call that would block on a blocking socket becomes
 * r->call (when the event says start...end) or is run to completion with the clock (otherwise). */
int sys_event(struct run *r, const struct pkt_event *ev);
/* Retries the pending call (after the stack did something); returns 0, or -1 when it failed its check. */
int sys_retry(struct run *r);
/* The socket the %{ }% blocks read (the script's connection), or NULL. */
brisk_sock *sys_sut_sock(struct run *r);
/* Called by the socket callbacks: counts a wakeup on the descriptor of s. */
void sys_wakeup(struct run *r, brisk_sock *s);

/* run.c */
/* Time checks shared by packets and calls: whether `actual_us` is within the tolerance of [lo, hi]. */
int run_time_ok(const struct run *r, int64_t actual_us, int64_t lo_us, int64_t hi_us);
int64_t run_tolerance(const struct run *r, int64_t script_us);

static inline int64_t run_now_us(const struct run *r)
{
    return (int64_t)(r->now / 1000);
}

#endif
