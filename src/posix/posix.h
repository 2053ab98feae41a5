/*
 * posix.h — libbrisk_posix: POSIX-shaped TCP and UDP sockets (AF_INET, SOCK_STREAM and SOCK_DGRAM) over a
 * brisk stack that a thread of its own runs, for programs written against the BSD socket calls (docs/posix.md).
 *
 * An instance (brisk_posix_new) owns one stack, its real-time loop (loop.h) and the device the caller's
 * `open_dev` puts on it, and starts the stack thread, which alone ever touches them. Every call below runs
 * on the caller's thread only as far as packing its arguments: the work is a command handed to the stack
 * thread (a queue and an eventfd; the caller sleeps on a semaphore until it is done), so the stack needs no
 * lock and the per-segment path takes none.
 *
 * Each socket is a real kernel descriptor: the application's end of an AF_UNIX socketpair whose readiness
 * the stack thread keeps equal to the brisk socket's (brisk_sock_poll): readable, writable, RDHUP, HUP and
 * ERR as Linux's tcp_poll reports them. poll / select / epoll therefore work on the number as on any other
 * descriptor, in one set with pipes, files and kernel sockets, and descriptor numbers never collide with
 * the kernel's.
 *
 * Calls return what the POSIX call they are named after returns, and set errno as Linux does on the common
 * paths (the mapping is brisk_posix_errno). `fd` arguments that are not brisk sockets give EBADF here; the
 * preload library (preload.c) sends those to the kernel before ever calling in.
 *
 * A child of fork() goes on using the instance (brisk_posix_fork_*, below): its calls become requests to the
 * stack thread, which stays in the process that started it.
 */
#ifndef BRISK_POSIX_POSIX_H
#define BRISK_POSIX_POSIX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "brisk/brisk.h"
#include "brisk/loop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct brisk_posix brisk_posix;

struct brisk_posix_config {
    struct brisk_settings settings; /* the stack's settings (profile and BRISK_SET applied by the caller) */
    /* Called once by brisk_posix_new, on the caller's thread before the stack thread starts: puts the
     * device(s) on the loop's stack (brisk_tap_open, or a test's own device). Returns 0, or -1 with a
     * one-line reason in why. */
    int (*open_dev)(void *ctx, brisk_loop *l, char *why, size_t why_len);
    /* Called after the stack thread has stopped and the stack is freed (may be NULL). */
    void (*close_dev)(void *ctx);
    void *dev_ctx;
    /* How long brisk_posix_free waits for closed connections to have their data and FIN acknowledged (the
     * kernel keeps sending after a process exits; a brisk stack cannot). Default 10 s. */
    uint64_t exit_wait_ns;
    int log; /* 1: one line on stderr per socket event of note (BRISK_LOG) */
    /* Busy polling of the hand-off (BRISK_BUSY_POLL): the stack thread keeps polling (the loop's busy poll)
     * and a caller waits for its command spinning, this long before either sleeps; 0: they sleep at once.
     * The default is 0: spinning wins on idle CPUs and loses badly on a busy machine (docs/posix.md). */
    uint64_t spin_ns;
};

void brisk_posix_config_default(struct brisk_posix_config *c);

/* Creates the instance and starts the stack thread. NULL with a reason in why on failure (the device did
 * not open, out of descriptors or memory). */
brisk_posix *brisk_posix_new(const struct brisk_posix_config *c, char *why, size_t why_len);
/* Waits (up to exit_wait_ns) for closed connections to finish, stops the stack thread and frees
 * everything. Descriptors of sockets still open are closed. NULL is a no-op. */
void brisk_posix_free(brisk_posix *p);

/* Nonzero if fd is one of this instance's sockets. Lock-free: one array load. */
int brisk_posix_owns(const brisk_posix *p, int fd);

/* The size of the descriptor table: every brisk socket's number is below it. */
int brisk_posix_table_size(const brisk_posix *p);

/* The errno for a BRISK_ERR_* code (BRISK_ERR_RESET -> ECONNRESET, ...). */
int brisk_posix_errno(int brisk_err);

/* socket(AF_INET, SOCK_STREAM | flags, 0): flags SOCK_NONBLOCK | SOCK_CLOEXEC. */
int brisk_posix_socket(brisk_posix *p, int flags);
/* socket(AF_INET, SOCK_DGRAM | flags, 0 or IPPROTO_UDP): a brisk UDP socket (docs/posix.md, "UDP"). Every
 * call below takes it as well; listen and accept fail with EOPNOTSUPP. */
int brisk_posix_socket_udp(brisk_posix *p, int flags);
/* socket(domain, type | flags, 0): domain AF_INET or AF_INET6 (else EAFNOSUPPORT), type SOCK_STREAM or
 * SOCK_DGRAM (else EPROTONOSUPPORT). An AF_INET6 socket takes and gives sockaddr_in6, IPv4 peers as
 * ::ffff:a.b.c.d unless IPV6_V6ONLY (docs/posix.md "IPv6"), for TCP and UDP alike. */
int brisk_posix_socket_in(brisk_posix *p, int domain, int type, int flags);
int brisk_posix_bind(brisk_posix *p, int fd, const struct sockaddr *sa, socklen_t len);
int brisk_posix_listen(brisk_posix *p, int fd, int backlog);
int brisk_posix_accept4(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len, int flags);
int brisk_posix_connect(brisk_posix *p, int fd, const struct sockaddr *sa, socklen_t len);
/* recvmsg / sendmsg on TCP: msg_name is ignored on send (a connected socket: Linux ignores it too, or fails
 * EISCONN for a different address; here it is ignored) and left empty on receive; no control messages.
 * Flags: MSG_DONTWAIT, MSG_PEEK, MSG_WAITALL, MSG_TRUNC (discard) on receive; MSG_DONTWAIT, MSG_NOSIGNAL,
 * MSG_MORE, MSG_EOR on send. EPIPE raises SIGPIPE in the calling thread unless MSG_NOSIGNAL.
 * On UDP: one datagram per call; msg_name is the destination on send (else the connected peer, else
 * EDESTADDRREQ) and the sender on receive; msg_flags gets MSG_TRUNC for a datagram longer than the buffers,
 * and MSG_TRUNC among the flags returns its whole length. Receive flags MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC
 * (MSG_WAITALL is ignored, as by Linux); send flags MSG_DONTWAIT, MSG_NOSIGNAL (MSG_MORE: EOPNOTSUPP). */
ssize_t brisk_posix_recvmsg(brisk_posix *p, int fd, struct msghdr *m, int flags);
ssize_t brisk_posix_sendmsg(brisk_posix *p, int fd, const struct msghdr *m, int flags);
/* recvfrom / sendto: recvmsg / sendmsg with msg_name (sa may be NULL; TCP ignores it, and gives *salen 0). */
ssize_t brisk_posix_recvfrom(brisk_posix *p, int fd, void *buf, size_t len, int flags, struct sockaddr *sa,
                            socklen_t *salen);
ssize_t brisk_posix_sendto(brisk_posix *p, int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *sa, socklen_t salen);
ssize_t brisk_posix_recv(brisk_posix *p, int fd, void *buf, size_t len, int flags);
ssize_t brisk_posix_send(brisk_posix *p, int fd, const void *buf, size_t len, int flags);
int brisk_posix_shutdown(brisk_posix *p, int fd, int how);
/* Releases the socket (the connection closes gracefully in the background, as in the kernel) and closes
 * the descriptor. */
int brisk_posix_close(brisk_posix *p, int fd);
int brisk_posix_getsockname(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len);
int brisk_posix_getpeername(brisk_posix *p, int fd, struct sockaddr *sa, socklen_t *len);
int brisk_posix_setsockopt(brisk_posix *p, int fd, int level, int name, const void *val, socklen_t len);
int brisk_posix_getsockopt(brisk_posix *p, int fd, int level, int name, void *val, socklen_t *len);
/* fcntl F_GETFL / F_SETFL (O_NONBLOCK); other commands act on the descriptor itself (F_GETFD, F_SETFD,
 * F_DUPFD / F_DUPFD_CLOEXEC as brisk_posix_dupfd). */
int brisk_posix_fcntl(brisk_posix *p, int fd, int cmd, long arg);
/* dup / F_DUPFD[_CLOEXEC] (the lowest free number >= minfd) and dup2 / dup3 (newfd; a brisk socket there is
 * closed first, a kernel descriptor there is replaced as by the kernel): another number for the same
 * socket, which is released when its last number is closed. */
int brisk_posix_dupfd(brisk_posix *p, int fd, int minfd, int cloexec);
int brisk_posix_dup3(brisk_posix *p, int fd, int newfd, int flags);
/* Drops fd from the brisk sockets without closing the number (the caller is about to dup2 a kernel
 * descriptor onto it); the socket is released if fd was its last number. */
int brisk_posix_forget(brisk_posix *p, int fd);
/* ioctl FIONREAD (SIOCINQ), SIOCOUTQ, FIONBIO; others fail with ENOTTY. */
int brisk_posix_ioctl(brisk_posix *p, int fd, unsigned long req, void *arg);

/* fork(): called around it (the preload library's pthread_atfork handlers) so that the child's calls on
 * the sockets it inherits, and on sockets it makes, are served by this process's stack thread, which goes
 * on running here (docs/posix.md, "fork and exec"). prepare makes the child's channel and has the stack
 * record what the child holds, then holds the stack thread still until parent (called in this process
 * after the fork, whether it succeeded or not); child (in the child) closes the stack's descriptors there
 * and turns p into the child's view: every call from then on is a request over the channel. A process made
 * so forks the same way (its requests then register the grandchild). A socket is released when no process
 * holds it any more. */
void brisk_posix_fork_prepare(brisk_posix *p);
void brisk_posix_fork_parent(brisk_posix *p);
void brisk_posix_fork_child(brisk_posix *p);
/* Nonzero in a fork's child: p's stack runs in another process. */
int brisk_posix_is_remote(const brisk_posix *p);
/* In a fork's child, the descriptor of its channel to the stack (-1 otherwise), which the preload library
 * keeps from the program's close / close_range / closefrom (a daemon closing every descriptor it did not
 * open): were it closed, the number could be reused and requests written into another file. */
int brisk_posix_channel(const brisk_posix *p);
/* Moves the channel to another number (the program dup2s onto its number). 0, or -1 with errno. */
int brisk_posix_move_channel(brisk_posix *p);

/* Counters of the hand-off, for docs and tests. */
struct brisk_posix_stats {
    uint64_t commands;      /* commands run on the stack thread */
    uint64_t wakeups;       /* eventfd writes by callers (the queue was empty) */
    uint64_t mirror_ops;    /* system calls made to keep descriptors' readiness equal to the sockets' */
    uint64_t sockets_open;  /* sockets the application holds */
    uint64_t closing;       /* closed by the application, still finishing (FIN not yet acknowledged) */
    uint64_t children;      /* processes forked from this one (and from those) holding a channel to it */
    uint64_t held_by_children; /* sockets such processes hold */
};
void brisk_posix_get_stats(brisk_posix *p, struct brisk_posix_stats *out);
/* One line (a newline added) on stderr with a single write(2) straight to the kernel, so that the facade's
 * messages neither go through stdio nor interleave with a program's own. */
void brisk_posix_vsay(const char *fmt, va_list ap);
void brisk_posix_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
