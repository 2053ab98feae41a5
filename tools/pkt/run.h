/*
 * run.h (brisk-pkt internal) — the state of one script's run, shared by every module, and the backend table.
 *
 * A script runs against a backend: the virtual one (net.c, sys.c: one brisk stack on a virtual clock, where
 * `now` only moves when the interpreter moves it, so a script's seconds of TCP run in microseconds and every
 * run is the same) or the kernel one (kernel.c, ksys.c: this machine's Linux in a network namespace behind a
 * TAP device, in real time, as packetdrill runs it). The interpreter (run.c), the packet building and
 * matching (match.c) and the system calls' arguments and checks (call.c) are the same code for both; a
 * backend only moves the clock, injects and collects frames, makes the calls and reads tcp_info.
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
#define RUN_VARS      64   /* tcpi_* values a backend may give a %{ }% block */
#define SYS_IO_MAX    (64u << 20) /* largest payload one call may move (a script's write of 10 MB is legal;
                                     this bounds a malformed one) */
#define SYS_POLL_MAX  16   /* poll entries one call may have */

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

struct run;

/* What a backend does; run.c, match.c and call.c do the rest. Functions returning int return 0, or -1 after
 * run_fail. */
struct run_backend {
    const char *name;
    uint64_t late_search_ns; /* how far past its window an outbound packet is looked for (to say when) */
    uint64_t any_wait_ns;    /* how long a "*" outbound packet is waited for */
    int sysctls_to_settings; /* the init command and time-0 sysctls become brisk settings (make_settings) */
    /* Makes the network and the descriptor table (s: brisk's settings, which only the virtual one uses). */
    int (*init)(struct run *r, const struct brisk_settings *s);
    /* Releases everything init made; called whether init ran or not. */
    void (*free)(struct run *r);
    /* Brings r->now up to the live clock before an event (NULL: the clock moves only when moved). */
    void (*sync)(struct run *r);
    /* Moves the clock to t (ns), doing on the way what the stack and a pending call do. */
    void (*advance)(struct run *r, uint64_t t);
    /* Delivers an inbound frame (Ethernet, from the gateway) to the stack under test. */
    void (*inject)(struct run *r, const uint8_t *frame, size_t len);
    /* Waits until r->outq holds a frame or the clock passes `limit` (ns): 1 a frame is queued, 0 none came
     * (*ran_to: how far the wait went), -1 the run stopped. */
    int (*wait_out)(struct run *r, uint64_t limit, uint64_t *ran_to);
    /* Runs a system call event at the current time (blocking rules: sys.c, ksys.c). */
    int (*syscall)(struct run *r, const struct pkt_event *ev);
    /* Runs a `command` event (index: its place in the script). */
    int (*command)(struct run *r, const struct pkt_event *ev, size_t index);
    /* The tcpi_* values of the script's connection for a %{ }% block: up to cap into v, *n set. */
    int (*info)(struct run *r, const struct pkt_event *ev, struct pkt_var *v, size_t cap, size_t *n);
    /* The script has ended: waits (packetdrill: up to a second) for a blocking call still running. */
    void (*finish)(struct run *r);
};

/* The backends: net.c (a brisk stack, virtual time) and kernel.c (this machine's Linux, real time). */
extern const struct run_backend virtual_backend;
extern const struct run_backend kernel_backend;

struct kern;

struct run {
    const struct pkt_script *s;
    const struct pkt_config *cfg;
    struct pkt_result *res;
    const struct run_backend *be;
    struct kern *kern; /* the kernel backend's state (kernel.c), NULL in a virtual run */
    char err[1024]; /* message of the failure being reported */

    brisk_stack *st;
    brisk_netdev *dev;
    uint64_t now; /* ns since the script's time 0 (virtual, or live since the start of a kernel run) */

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

/* match.c: the script's packets on the wire, for both backends */
/* Builds and injects an inbound packet event (TCP or ICMP); returns 0 or -1 (run_fail called). */
int net_inbound(struct run *r, const struct pkt_event *ev);
/* Waits for and checks an outbound packet event; returns 0 or -1. */
int net_outbound(struct run *r, const struct pkt_event *ev, int64_t t_us, int64_t t_end_us);
/* The connection the script's packets go to is being made by connect() / a listener. */
void net_sut_connecting(struct run *r);

/* net.c: the virtual backend's wire */
int net_init(struct run *r, const struct brisk_settings *s);
void net_free(struct run *r);
/* Completes every transmitted frame and runs the stack's deferred work at `now`, until quiet. */
void net_settle(struct run *r);
/* Moves the clock to t (ns), polling the stack at each deadline on the way (and retrying a pending call). */
void net_advance(struct run *r, uint64_t t);

/* sys.c: the virtual backend's system calls */
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
/* The backend's info: brisk_conn_info of the script's connection under Linux's tcp_info names. */
int sys_info(struct run *r, const struct pkt_event *ev, struct pkt_var *v, size_t cap, size_t *n);

/* call.c: a system call's arguments and outcome, for both backends */
/* The outcome of one attempt. */
struct sys_out {
    int done;    /* 0: a blocking socket would wait */
    int64_t ret; /* result */
    int err;     /* errno when ret == -1 */
};

static inline struct sys_out sys_ok(int64_t v)
{
    return (struct sys_out){.done = 1, .ret = v};
}

static inline struct sys_out sys_errno(int e)
{
    return (struct sys_out){.done = 1, .ret = -1, .err = e};
}

#define SYS_WAIT ((struct sys_out){.done = 0})

/* Fail the event as unsupported (the script needs what brisk-pkt lacks) / malformed, "NAME call: what". */
int sys_unsup(struct run *r, const struct pkt_event *ev, const char *what);
int sys_bad(struct run *r, const struct pkt_event *ev, const char *what);
/* An integer argument: a number, a symbol, a | b, htons(N), inet_addr("A") (host order), [N]. */
int sys_eval_int(struct run *r, const struct pkt_event *ev, const struct expr *e, int64_t *v);
/* Argument i, or NULL past the end. */
const struct expr *sys_arg(const struct pkt_event *ev, size_t i);
int sys_need_args(struct run *r, const struct pkt_event *ev, size_t n);
int sys_arg_int(struct run *r, const struct pkt_event *ev, size_t i, int64_t *v);
/* A script fd to the live descriptor; -1 (EBADF) when the script names none. */
int sys_live_fd(const struct run *r, int64_t script_fd);
int sys_arg_fd(struct run *r, const struct pkt_event *ev, size_t i, int *fd);
/* The address of bind / connect: "..." leaves *addr / *port (the script's defaults), else
 * {sa_family=AF_INET, sin_port=htons(P), sin_addr=inet_addr("A")} (host order). */
int sys_sockaddr_arg(struct run *r, const struct pkt_event *ev, size_t i, uint32_t *addr, uint16_t *port);
/* Payload length of write / send / sendto / sendmsg / writev (and readv / recvmsg), and the flags. */
int sys_out_len(struct run *r, const struct pkt_event *ev, int64_t *len, int64_t *flags);
/* An int socket option's value (argument 3): "[1]" or "1". */
int sys_opt_value(struct run *r, const struct pkt_event *ev, int64_t *v);
/* {events=..., fd=N} (or ptr= / u32= / u64=). */
int sys_epoll_event_arg(struct run *r, const struct pkt_event *ev, const struct expr *e, int64_t *events,
                        int64_t *data);
/* poll(list, nfds, timeout): the list checked against nfds (at most SYS_POLL_MAX entries), the timeout. */
int sys_poll_args(struct run *r, const struct pkt_event *ev, const struct expr **list, int64_t *timeout);
/* One {fd=N, events=...} entry of poll's list: the script fd and the events asked. */
int sys_poll_entry(struct run *r, const struct pkt_event *ev, const struct expr *p, int64_t *sfd,
                   int64_t *events);
/* Compares each entry's revents with got[k]. */
int sys_check_revents(struct run *r, const struct pkt_event *ev, const struct expr *list,
                      const unsigned *got);
/* Compares epoll_wait's n events (events, data) with the script's event argument. */
int sys_check_epoll(struct run *r, const struct pkt_event *ev, int n, const uint32_t *gotev,
                    const uint64_t *gotdata);
/* Compares a value a call filled in ("getsockopt", "ioctl") with the script's (... matches anything). */
int sys_check_value(struct run *r, const struct pkt_event *ev, const char *what, const struct expr *want,
                    int64_t actual);
/* Compares getsockopt(TCP_CONGESTION)'s name (Linux's: "reno", "cubic") with a string argument. */
int sys_check_congestion(struct run *r, const struct pkt_event *ev, const struct expr *want,
                         const char *name);
/* Compares a completed call's result and errno with the script; maps a returned descriptor. */
int sys_finish(struct run *r, const struct pkt_event *ev, const struct sys_out *o);
/* Sets r->call's start (now) and end (the script's "...end", relative to the same base as the start). */
void sys_call_times(struct run *r, const struct pkt_event *ev);
/* Checks the time a call returned (`at`, us) against its end (start...end) or its start (otherwise). */
int sys_check_end(struct run *r, const struct pkt_event *ev, int64_t at);

/* run.c */
/* Time checks shared by packets and calls: whether `actual_us` is within the tolerance of [lo, hi]. */
int run_time_ok(const struct run *r, int64_t actual_us, int64_t lo_us, int64_t hi_us);
int64_t run_tolerance(const struct run *r, int64_t script_us);
/* The virtual backend's command: sysctls at time 0 were applied with the settings; later ones cannot be. */
int run_command_virtual(struct run *r, const struct pkt_event *ev, size_t index);
/* A run with the script's defaults (addresses, ports, MTU, tolerance) on backend be; NULL (res says why) when
 * out of memory. */
struct run *run_new(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *res,
                    const struct run_backend *be);
/* Makes the settings, initialises the backend, runs the events and frees r. */
void run_script(struct run *r);

/* kernel.c */
/* Runs the script against this machine's kernel in a child process (its own network namespace). */
void kernel_run(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *res);

static inline int64_t run_now_us(const struct run *r)
{
    return (int64_t)(r->now / 1000);
}

#endif
