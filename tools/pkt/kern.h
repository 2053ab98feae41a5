/*
 * kern.h (brisk-pkt internal) — the kernel backend's state, shared by kernel.c (the namespace, the TAP
 * device, the clock) and ksys.c (the real system calls on a second thread).
 *
 * Every system call of a script runs on one worker thread, as packetdrill runs its blocking calls: the main
 * thread prepares the call (arguments evaluated by call.c), hands it over, and keeps reading the TAP device
 * (outbound frames get their arrival time) while it waits — until the call returns (a call written without
 * "...", which must return within the tolerance), or until the worker sleeps in the kernel (a start...end
 * call, which returns while later events run). The worker only makes the call and notes when it returned;
 * the main thread compares the outcome, so every check and message stays on one thread.
 */
#ifndef BRISK_PKT_KERN_H
#define BRISK_PKT_KERN_H

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "pkt/run.h"

/* One system call, as the worker makes it. */
struct kop {
    int64_t (*fn)(struct kop *op); /* makes the call: returns its result, -1 with errno on failure */
    long a[4];                     /* integer arguments (descriptor first) */
    void *buf;                     /* payload or receive buffer (malloc'ed, zeros) */
    size_t len;
    struct sockaddr_in sa;
    struct pollfd pfd[SYS_POLL_MAX];
    struct epoll_event eev[RUN_EPOLL_MAX];
    union {
        int i;
        struct linger linger;
        char name[32];
    } opt; /* a socket option's or ioctl's value */
    socklen_t optlen;
    /* the outcome */
    int64_t ret;
    int err;
    uint64_t end_ns; /* CLOCK_MONOTONIC when it returned */
};

enum kcall_state { KC_IDLE, KC_QUEUED, KC_RUNNING, KC_DONE, KC_EXIT };

#define KERN_FRAME_MAX 65536

struct kern {
    int tap;     /* the TAP device (non-blocking) */
    int wake;    /* eventfd the worker signals when a call has returned */
    uint64_t t0; /* CLOCK_MONOTONIC ns of the script's time 0 */
    char cc[32]; /* the congestion control every TCP socket is given (kernel.c: kern_baseline) */
    /* the worker */
    pthread_t thread;
    int have_thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum kcall_state state; /* under mu */
    int in_call;            /* under mu: the worker is inside op->fn (its sleep means the call blocks) */
    pid_t tid;              /* the worker's thread id (its /proc state says whether it sleeps) */
    struct kop op;          /* the call being made (the worker owns it from QUEUED to DONE) */
    int op_done;            /* a call returned and its outcome has not been taken */
    uint8_t frame[KERN_FRAME_MAX]; /* one frame read from the TAP device */
};

/* kernel.c */
/* CLOCK_MONOTONIC in ns. */
uint64_t kern_mono(void);
/* Waits until the live clock reaches `until` (ns since time 0), reading outbound frames into r->outq as they
 * come and checking a start...end call that returns. Returns early when a start...end call was checked, when
 * `for_frame` and a frame is queued, or when `for_call` and the worker has returned (k->op_done); callers
 * loop. r->now follows the clock. */
void kern_pump(struct run *r, uint64_t until, int for_frame, int for_call);

/* ksys.c */
int ksys_init(struct run *r);
void ksys_free(struct run *r);
int ksys_event(struct run *r, const struct pkt_event *ev);
/* The pending start...end call has returned (k->op_done): checks it. */
void ksys_reap(struct run *r);
int ksys_info(struct run *r, const struct pkt_event *ev, struct pkt_var *v, size_t cap, size_t *n);
void ksys_finish(struct run *r);

#endif
