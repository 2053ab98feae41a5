/*
 * preload.c — libbrisk_preload.so: unmodified programs on brisk by LD_PRELOAD (docs/posix.md).
 *
 * The library defines the socket calls under their libc names; the dynamic linker resolves a program's
 * calls (and its libraries') to these before libc's. Each one asks whether its descriptor is a brisk socket
 * — one array load (brisk_posix_owns) — and either hands it to libbrisk_posix (posix.c) or calls libc's
 * own function, found with dlsym(RTLD_NEXT). socket(AF_INET, SOCK_STREAM[|SOCK_NONBLOCK|SOCK_CLOEXEC],
 * 0 or IPPROTO_TCP) makes a brisk TCP socket, socket(AF_INET, SOCK_DGRAM[|...], 0 or IPPROTO_UDP) a brisk
 * UDP one, and AF_INET6 the same (sockaddr_in6; IPv4 peers as ::ffff:a.b.c.d); every other family and type
 * (raw, AF_UNIX, netlink...) goes to the kernel. poll, select and epoll are not interposed: a brisk socket is a real descriptor whose
 * readiness the stack thread keeps (posix.c).
 *
 * Configuration, read when the first brisk socket is made (the stack starts then, not before: a
 * program that never opens one never starts a thread):
 *   BRISK_TAP      the TAP interface to open (required; created persistent beforehand by brisk-run, or
 *                  created by brisk_tap_open in the process's namespace)
 *   BRISK_IP       brisk's address, a.b.c.d/len (required)
 *   BRISK_GW       default gateway (optional)
 *   BRISK_IP6      a static IPv6 address ADDR[/len] (optional, len default 64; the link-local one is always
 *                  there)
 *   BRISK_GW6      the default IPv6 router (optional)
 *   BRISK_PROFILE  a settings profile (brisk_settings_apply_profile)
 *   BRISK_SET      "name=value,name=value" applied after the profile
 *   BRISK_SEED     the stack's seed (default: from the clock and the pid, so that successive runs do not
 *                  reuse ports and sequence numbers the peer may still hold in TIME-WAIT)
 *   BRISK_MTU, BRISK_GSO (0/1)   the TAP's MTU and offloads
 *   BRISK_TXC_DELAY  report each TAP write's completion this long after it (default 0: at the end of the
 *                  loop iteration that wrote it), to stand for a NIC whose TX completions come late
 *   BRISK_LOG      1: a line on stderr at start and per connect / accept / close / error
 *   BRISK_EXIT_WAIT  how long exit waits for closed connections to be acknowledged (default 10s)
 *   BRISK_CTL      a path: the stack answers brisk-ss and brisk-nstat on an AF_UNIX control socket there
 *                  (tools/introspect/ctl.h), served by the stack thread between two events, like brisk-perf's
 *                  --ctl; the socket file is removed at exit
 * A bad value is reported on stderr, naming it, and the socket call fails with EINVAL; a TAP that does not
 * open fails it with the reason (ENODEV).
 *
 * fork(): pthread_atfork handlers (brisk_posix_fork_prepare / _parent / _child) give the child a channel
 * to the stack thread, which stays in the process that started it: the child's calls on the sockets it
 * inherited, and on sockets it makes (socket, accept), are served there, and a socket lives while any
 * process holds it (posix.c, "fork"). A child of a process that had not started brisk starts its own stack
 * as usual. If the stack's process exits first, the children's calls fail with EBADF and a message.
 * exec: a brisk socket never outlives exec — the new program has no stack to serve it — so its descriptor
 * is close-on-exec in the kernel whatever the program asked (F_GETFD and FIOCLEX / FIONCLEX keep the
 * program's own view): the new program finds the number closed (EBADF) rather than an AF_UNIX socket that
 * would swallow its writes. The stack thread's own descriptors are all close-on-exec too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "brisk/tap.h"
#include "introspect/ctl.h"
#include "posix/posix.h"

#define EXPORT __attribute__((visibility("default")))

/* glibc's fortified entry points (what -D_FORTIFY_SOURCE programs call); declared by its headers only for
 * fortified builds. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *sa, socklen_t *len);

/* The process's one instance: an LD_PRELOAD library is process-wide by nature. */
static brisk_posix *g_p;
static brisk_tap *g_tap;
static struct brisk_tap_config g_tapcfg;
static struct brisk_addr g_ip6, g_gw6; /* BRISK_IP6 (with g_ip6_prefix), BRISK_GW6; BRISK_AF_UNSPEC: none */
static uint8_t g_ip6_prefix;
static struct ctl_server *g_ctl;
static const char *g_ctl_path; /* BRISK_CTL, NULL when unset */
static pthread_mutex_t g_init = PTHREAD_MUTEX_INITIALIZER;
static int g_failed;    /* errno of a start that failed (later sockets fail the same way) */
static brisk_posix *g_fork_p; /* the instance a fork in progress prepared (g_p then) */
/* Set while this thread starts or stops the stack: the library's own sockets then are the kernel's (the
 * TAP driver configures the interface through an AF_INET datagram socket, which would otherwise come back
 * here, to a stack not yet made, under g_init). */
static __thread int t_inside;

#define say brisk_posix_say

/* ---- libc's functions ---------------------------------------------------------------------------------- */

#define REAL(name) real_##name
#define DECLARE_REAL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)
DECLARE_REAL(int, socket, int, int, int);
DECLARE_REAL(int, bind, int, const struct sockaddr *, socklen_t);
DECLARE_REAL(int, listen, int, int);
DECLARE_REAL(int, accept, int, struct sockaddr *, socklen_t *);
DECLARE_REAL(int, accept4, int, struct sockaddr *, socklen_t *, int);
DECLARE_REAL(int, connect, int, const struct sockaddr *, socklen_t);
DECLARE_REAL(ssize_t, read, int, void *, size_t);
DECLARE_REAL(ssize_t, write, int, const void *, size_t);
DECLARE_REAL(ssize_t, readv, int, const struct iovec *, int);
DECLARE_REAL(ssize_t, writev, int, const struct iovec *, int);
DECLARE_REAL(ssize_t, recv, int, void *, size_t, int);
DECLARE_REAL(ssize_t, send, int, const void *, size_t, int);
DECLARE_REAL(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *, socklen_t *);
DECLARE_REAL(ssize_t, sendto, int, const void *, size_t, int, const struct sockaddr *, socklen_t);
DECLARE_REAL(ssize_t, recvmsg, int, struct msghdr *, int);
DECLARE_REAL(ssize_t, sendmsg, int, const struct msghdr *, int);
DECLARE_REAL(int, shutdown, int, int);
DECLARE_REAL(int, close, int);
DECLARE_REAL(int, getsockname, int, struct sockaddr *, socklen_t *);
DECLARE_REAL(int, getpeername, int, struct sockaddr *, socklen_t *);
DECLARE_REAL(int, setsockopt, int, int, int, const void *, socklen_t);
DECLARE_REAL(int, getsockopt, int, int, int, void *, socklen_t *);
DECLARE_REAL(int, fcntl, int, int, ...);
DECLARE_REAL(int, fcntl64, int, int, ...);
DECLARE_REAL(int, ioctl, int, unsigned long, ...);
DECLARE_REAL(int, dup, int);
DECLARE_REAL(int, dup2, int, int);
DECLARE_REAL(int, dup3, int, int, int);
DECLARE_REAL(ssize_t, __read_chk, int, void *, size_t, size_t);
DECLARE_REAL(ssize_t, __recv_chk, int, void *, size_t, size_t, int);
DECLARE_REAL(ssize_t, __recvfrom_chk, int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
DECLARE_REAL(ssize_t, sendfile, int, int, off_t *, size_t);
DECLARE_REAL(int, close_range, unsigned, unsigned, int);
DECLARE_REAL(void, closefrom, int);

static void resolve(void)
{
#define R(name) real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name)
    R(socket); R(bind); R(listen); R(accept); R(accept4); R(connect); R(read); R(write); R(readv);
    R(writev); R(recv); R(send); R(recvfrom); R(sendto); R(recvmsg); R(sendmsg); R(shutdown); R(close);
    R(getsockname); R(getpeername); R(setsockopt); R(getsockopt); R(fcntl); R(fcntl64); R(ioctl); R(dup);
    R(dup2); R(dup3); R(__read_chk); R(__recv_chk); R(__recvfrom_chk); R(sendfile);
    R(close_range); R(closefrom);
#undef R
}

static void on_fork_prepare(void)
{
    g_fork_p = __atomic_load_n(&g_p, __ATOMIC_ACQUIRE);
    brisk_posix_fork_prepare(g_fork_p);
}

static void on_fork_parent(void)
{
    brisk_posix_fork_parent(g_fork_p);
}

static void on_fork_child(void)
{
    brisk_posix_fork_child(g_fork_p);
}

__attribute__((constructor)) static void preload_init(void)
{
    resolve();
    /* Registered first, so that its prepare runs last and its child handler first: the program's own
     * handlers (which may close or use sockets) see a child already served. */
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

__attribute__((destructor)) static void preload_fini(void)
{
    if (g_p && !brisk_posix_is_remote(g_p)) { /* a fork's child has no stack to stop */
        brisk_posix *p = g_p;
        g_p = NULL; /* from here every descriptor is the kernel's again */
        t_inside = 1;
        brisk_posix_free(p);
        t_inside = 0;
    }
}

/* Is fd a brisk socket? (In a fork's child too: its calls go to the stack over its channel.) */
static int ours(int fd)
{
    brisk_posix *p = g_p;
    return p && brisk_posix_owns(p, fd);
}
#define ROUTE(fd, brisk_call, real_call)                                                                     \
    do {                                                                                                     \
        if (ours(fd))                                                                                        \
            return brisk_call;                                                                               \
        return real_call;                                                                                    \
    } while (0)

/* ---- configuration and start ------------------------------------------------------------------------------ */

static int open_tap(void *ctx, brisk_loop *l, char *why, size_t why_len)
{
    (void)ctx;
    int err = 0;
    g_tap = brisk_tap_open(l, &g_tapcfg, &err, why, why_len);
    if (!g_tap)
        return -1;
    brisk_netdev *dev = brisk_tap_netdev(g_tap);
    if (g_ip6.family && (err = brisk_netdev_add_addr(dev, &g_ip6, g_ip6_prefix)) != BRISK_OK) {
        snprintf(why, why_len, "BRISK_IP6: %s", brisk_strerror(err));
        brisk_tap_close(g_tap);
        g_tap = NULL;
        return -1;
    }
    if (g_gw6.family && (err = brisk_stack_set_gateway6(brisk_loop_stack(l), dev, &g_gw6)) != BRISK_OK) {
        snprintf(why, why_len, "BRISK_GW6: %s", brisk_strerror(err));
        brisk_tap_close(g_tap);
        g_tap = NULL;
        return -1;
    }
    /* Made here, before the stack thread starts: the loop is not thread-safe, and from then on the control
     * socket's descriptors are served by that thread only. Its socket calls (AF_UNIX) pass to the kernel. */
    if (g_ctl_path) {
        char cwhy[160];
        g_ctl = ctl_server_new(l, g_tap, g_ctl_path, program_invocation_short_name, cwhy, sizeof(cwhy));
        if (!g_ctl) {
            snprintf(why, why_len, "BRISK_CTL: %s", cwhy);
            brisk_tap_close(g_tap);
            g_tap = NULL;
            return -1;
        }
    }
    return 0;
}

static void close_tap(void *ctx)
{
    (void)ctx;
    ctl_server_free(g_ctl);
    g_ctl = NULL;
    brisk_tap_close(g_tap);
    g_tap = NULL;
}

static int env_uint(const char *name, uint64_t max, uint64_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    if (brisk_parse_uint(v, out) < 0 || *out > max) {
        say("brisk: %s=%s: not a number in 0 ... %llu", name, v, (unsigned long long)max);
        return -1;
    }
    return 1;
}

/* Builds the configuration from the environment; 0, or -1 with the reason printed. */
static int configure(struct brisk_posix_config *c)
{
    brisk_posix_config_default(c);
    brisk_tap_config_default(&g_tapcfg);
    const char *tap = getenv("BRISK_TAP"), *ip = getenv("BRISK_IP");
    if (!tap || !*tap || !ip || !*ip) {
        say("brisk: BRISK_TAP and BRISK_IP must be set (brisk-run sets them): AF_INET TCP and UDP sockets fail");
        return -1;
    }
    if (strlen(tap) >= sizeof(g_tapcfg.ifname)) {
        say("brisk: BRISK_TAP=%s: longer than %zu characters", tap, sizeof(g_tapcfg.ifname) - 1);
        return -1;
    }
    snprintf(g_tapcfg.ifname, sizeof(g_tapcfg.ifname), "%s", tap);
    if (brisk_tap_parse_cidr(ip, &g_tapcfg.ip, &g_tapcfg.prefix_len) < 0) {
        say("brisk: BRISK_IP=%s: not an IPv4 address a.b.c.d/len", ip);
        return -1;
    }
    const char *gw = getenv("BRISK_GW");
    if (gw && *gw && brisk_ip_parse(gw, &g_tapcfg.gateway) < 0) {
        say("brisk: BRISK_GW=%s: not an IPv4 address", gw);
        return -1;
    }
    uint64_t v;
    int r;
    const char *ip6 = getenv("BRISK_IP6"), *gw6 = getenv("BRISK_GW6");
    if (ip6 && *ip6) {
        char host[64];
        const char *slash = strchr(ip6, '/');
        size_t hl = slash ? (size_t)(slash - ip6) : strlen(ip6);
        uint64_t plen = 64;
        if (hl >= sizeof(host) || (memcpy(host, ip6, hl), host[hl] = 0, brisk_addr_parse(host, &g_ip6)) != BRISK_OK ||
            g_ip6.family != BRISK_AF_INET6 || (slash && (brisk_parse_uint(slash + 1, &plen) < 0 || plen > 128))) {
            say("brisk: BRISK_IP6=%s: not an IPv6 address ADDR[/len] (len 0 ... 128, default 64)", ip6);
            return -1;
        }
        g_ip6_prefix = (uint8_t)plen;
    }
    if (gw6 && *gw6 && (brisk_addr_parse(gw6, &g_gw6) != BRISK_OK || g_gw6.family != BRISK_AF_INET6)) {
        say("brisk: BRISK_GW6=%s: not an IPv6 address", gw6);
        return -1;
    }
    if ((r = env_uint("BRISK_MTU", 65535, &v)) < 0)
        return -1;
    if (r)
        g_tapcfg.mtu = (uint32_t)v;
    if ((r = env_uint("BRISK_GSO", 1, &v)) < 0)
        return -1;
    if (r)
        g_tapcfg.gso = (int)v;
    if ((r = env_uint("BRISK_LOG", 1, &v)) < 0)
        return -1;
    c->log = r ? (int)v : 0;
    const char *ew = getenv("BRISK_EXIT_WAIT");
    if (ew && *ew && brisk_parse_time(ew, &c->exit_wait_ns) < 0) {
        say("brisk: BRISK_EXIT_WAIT=%s: not a time (\"10s\", \"500ms\", \"0\")", ew);
        return -1;
    }
    const char *bp = getenv("BRISK_BUSY_POLL");
    if (bp && *bp && brisk_parse_time(bp, &c->spin_ns) < 0) {
        say("brisk: BRISK_BUSY_POLL=%s: not a time (\"50us\", \"0\" to sleep at once)", bp);
        return -1;
    }
    const char *txc = getenv("BRISK_TXC_DELAY");
    if (txc && *txc && brisk_parse_time(txc, &g_tapcfg.txc_delay_ns) < 0) {
        say("brisk: BRISK_TXC_DELAY=%s: not a time (\"100us\", \"0\")", txc);
        return -1;
    }
    const char *ctl = getenv("BRISK_CTL");
    g_ctl_path = ctl && *ctl ? ctl : NULL;
    const char *prof = getenv("BRISK_PROFILE");
    if (prof && *prof && brisk_settings_apply_profile(&c->settings, prof) < 0) {
        say("brisk: BRISK_PROFILE=%s: no such profile", prof);
        return -1;
    }
    const char *set = getenv("BRISK_SET");
    if (set && *set) {
        char buf[1024];
        if (strlen(set) >= sizeof(buf)) {
            say("brisk: BRISK_SET: longer than %zu characters", sizeof(buf) - 1);
            return -1;
        }
        snprintf(buf, sizeof(buf), "%s", set);
        char *save = NULL;
        for (char *a = strtok_r(buf, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            int rc = brisk_settings_set(&c->settings, a);
            if (rc < 0) {
                say("brisk: BRISK_SET: %s: %s", a, brisk_strerror(rc));
                return -1;
            }
        }
    }
    if ((r = env_uint("BRISK_SEED", UINT64_MAX, &v)) < 0)
        return -1;
    if (r) {
        c->settings.seed = v;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->settings.seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    c->open_dev = open_tap;
    c->close_dev = close_tap;
    return 0;
}

/* Starts the stack on the first AF_INET stream or datagram socket; errno-style result. */
static int start(void)
{
    if (g_p)
        return 0;
    pthread_mutex_lock(&g_init);
    int rc = 0;
    if (g_failed) {
        rc = g_failed;
    } else if (!g_p) {
        struct brisk_posix_config c;
        if (configure(&c) < 0) {
            rc = g_failed = EINVAL;
        } else {
            char why[200];
            t_inside = 1;
            brisk_posix *p = brisk_posix_new(&c, why, sizeof(why));
            t_inside = 0;
            if (!p) {
                say("brisk: cannot start on TAP %s: %s", g_tapcfg.ifname, why);
                rc = g_failed = ENODEV;
            } else {
                if (c.log) {
                    char a[16];
                    say("brisk: pid %d: stack on %s, %s/%u", (int)getpid(), brisk_tap_ifname(g_tap),
                        brisk_ip_format(g_tapcfg.ip, a), g_tapcfg.prefix_len);
                }
                __atomic_store_n(&g_p, p, __ATOMIC_RELEASE);
            }
        }
    }
    pthread_mutex_unlock(&g_init);
    return rc;
}

/* ---- the interposed calls ------------------------------------------------------------------------------- */

EXPORT int socket(int domain, int type, int protocol)
{
    int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
    int tcp = base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP);
    int udp = base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP);
    if ((domain != AF_INET && domain != AF_INET6) || (!tcp && !udp) || t_inside)
        return REAL(socket)(domain, type, protocol);
    int e = start();
    if (e) {
        errno = e;
        return -1;
    }
    int fl = type & (SOCK_NONBLOCK | SOCK_CLOEXEC);
    return brisk_posix_socket_in(g_p, domain, tcp ? SOCK_STREAM : SOCK_DGRAM, fl);
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
    ROUTE(fd, brisk_posix_bind(g_p, fd, sa, len), REAL(bind)(fd, sa, len));
}

EXPORT int listen(int fd, int backlog)
{
    ROUTE(fd, brisk_posix_listen(g_p, fd, backlog), REAL(listen)(fd, backlog));
}

EXPORT int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
    ROUTE(fd, brisk_posix_accept4(g_p, fd, sa, len, 0), REAL(accept)(fd, sa, len));
}

EXPORT int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
    ROUTE(fd, brisk_posix_accept4(g_p, fd, sa, len, flags), REAL(accept4)(fd, sa, len, flags));
}

EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
    ROUTE(fd, brisk_posix_connect(g_p, fd, sa, len), REAL(connect)(fd, sa, len));
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    ROUTE(fd, brisk_posix_recv(g_p, fd, buf, n, 0), REAL(read)(fd, buf, n));
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        return REAL(__read_chk)(fd, buf, n, buflen); /* libc reports the overflow */
    ROUTE(fd, brisk_posix_recv(g_p, fd, buf, n, 0), REAL(__read_chk)(fd, buf, n, buflen));
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    ROUTE(fd, brisk_posix_send(g_p, fd, buf, n, 0), REAL(write)(fd, buf, n));
}

/* readv / writev as a message of their buffers; a negative count is EINVAL, as the kernel says. */
static int iov_msg(struct msghdr *m, const struct iovec *iov, int n)
{
    memset(m, 0, sizeof(*m));
    if (n < 0) {
        errno = EINVAL;
        return -1;
    }
    m->msg_iov = (struct iovec *)iov;
    m->msg_iovlen = (size_t)n;
    return 0;
}

static ssize_t brisk_readv(int fd, const struct iovec *iov, int n)
{
    struct msghdr m;
    return iov_msg(&m, iov, n) < 0 ? -1 : brisk_posix_recvmsg(g_p, fd, &m, 0);
}

static ssize_t brisk_writev(int fd, const struct iovec *iov, int n)
{
    struct msghdr m;
    return iov_msg(&m, iov, n) < 0 ? -1 : brisk_posix_sendmsg(g_p, fd, &m, 0);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
    ROUTE(fd, brisk_readv(fd, iov, n), REAL(readv)(fd, iov, n));
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
    ROUTE(fd, brisk_writev(fd, iov, n), REAL(writev)(fd, iov, n));
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    ROUTE(fd, brisk_posix_recv(g_p, fd, buf, n, flags), REAL(recv)(fd, buf, n, flags));
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        return REAL(__recv_chk)(fd, buf, n, buflen, flags);
    ROUTE(fd, brisk_posix_recv(g_p, fd, buf, n, flags), REAL(__recv_chk)(fd, buf, n, buflen, flags));
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *sa, socklen_t *len)
{
    ROUTE(fd, brisk_posix_recvfrom(g_p, fd, buf, n, flags, sa, len), REAL(recvfrom)(fd, buf, n, flags, sa, len));
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *sa,
                              socklen_t *len)
{
    if (n > buflen)
        return REAL(__recvfrom_chk)(fd, buf, n, buflen, flags, sa, len);
    ROUTE(fd, brisk_posix_recvfrom(g_p, fd, buf, n, flags, sa, len),
          REAL(__recvfrom_chk)(fd, buf, n, buflen, flags, sa, len));
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    ROUTE(fd, brisk_posix_send(g_p, fd, buf, n, flags), REAL(send)(fd, buf, n, flags));
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa, socklen_t len)
{
    /* A TCP socket ignores the address (Linux: tcp_sendmsg never looks at msg_name); UDP's destination. */
    ROUTE(fd, brisk_posix_sendto(g_p, fd, buf, n, flags, sa, len), REAL(sendto)(fd, buf, n, flags, sa, len));
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    ROUTE(fd, brisk_posix_recvmsg(g_p, fd, m, flags), REAL(recvmsg)(fd, m, flags));
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    ROUTE(fd, brisk_posix_sendmsg(g_p, fd, m, flags), REAL(sendmsg)(fd, m, flags));
}

EXPORT int shutdown(int fd, int how)
{
    ROUTE(fd, brisk_posix_shutdown(g_p, fd, how), REAL(shutdown)(fd, how));
}

/* A fork's channel to the stack (posix.h: brisk_posix_channel) is not the program's to close: to it the
 * number is not open. */
static int is_channel(int fd)
{
    brisk_posix *p = g_p;
    return p && fd >= 0 && fd == brisk_posix_channel(p);
}

/* The program dup2s onto the channel's number: the channel moves out of the way first. */
static int clear_channel(int fd)
{
    return is_channel(fd) ? brisk_posix_move_channel(g_p) : 0;
}

EXPORT int close(int fd)
{
    int o = ours(fd);
    if (o > 0)
        return brisk_posix_close(g_p, fd);
    if (is_channel(fd)) {
        errno = EBADF;
        return -1;
    }
    return REAL(close)(fd);
}

EXPORT int getsockname(int fd, struct sockaddr *sa, socklen_t *len)
{
    ROUTE(fd, brisk_posix_getsockname(g_p, fd, sa, len), REAL(getsockname)(fd, sa, len));
}

EXPORT int getpeername(int fd, struct sockaddr *sa, socklen_t *len)
{
    ROUTE(fd, brisk_posix_getpeername(g_p, fd, sa, len), REAL(getpeername)(fd, sa, len));
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    ROUTE(fd, brisk_posix_setsockopt(g_p, fd, level, name, val, len), REAL(setsockopt)(fd, level, name, val, len));
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    ROUTE(fd, brisk_posix_getsockopt(g_p, fd, level, name, val, len), REAL(getsockopt)(fd, level, name, val, len));
}

/* fcntl's third argument is an int or a pointer, by command; passing it on as a long is what glibc's own
 * wrapper does (the kernel takes an unsigned long). */
static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, long arg)
{
    ROUTE(fd, brisk_posix_fcntl(g_p, fd, cmd, arg), real(fd, cmd, arg));
}

EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(REAL(fcntl), fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(REAL(fcntl64) ? REAL(fcntl64) : REAL(fcntl), fd, cmd, arg);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int o = ours(fd);
    if (o > 0 && (req == FIONREAD || req == FIONBIO || req == TIOCOUTQ))
        return brisk_posix_ioctl(g_p, fd, req, arg);
    if (o > 0 && (req == FIOCLEX || req == FIONCLEX)) /* what Python's set_inheritable uses */
        return brisk_posix_fcntl(g_p, fd, F_SETFD, req == FIOCLEX ? FD_CLOEXEC : 0);
    return REAL(ioctl)(fd, req, arg); /* interface queries (SIOCGIF*) work on any socket */
}

/* dup / dup2 / dup3: another number for a brisk socket names the same socket (posix.c: do_dup); a kernel
 * descriptor duplicated onto a brisk socket's number replaces it, as the kernel would. */
EXPORT int dup(int fd)
{
    ROUTE(fd, brisk_posix_dupfd(g_p, fd, 0, 0), REAL(dup)(fd));
}

EXPORT int dup3(int fd, int fd2, int flags)
{
    int o = ours(fd);
    if (o > 0) {
        if (fd == fd2) {
            errno = EINVAL;
            return -1;
        }
        return clear_channel(fd2) < 0 ? -1 : brisk_posix_dup3(g_p, fd, fd2, flags);
    }
    if (fd != fd2 && ours(fd2) > 0 && fcntl(fd, F_GETFD) >= 0)
        brisk_posix_forget(g_p, fd2);
    if (fd != fd2 && clear_channel(fd2) < 0)
        return -1;
    return REAL(dup3)(fd, fd2, flags);
}

EXPORT int dup2(int fd, int fd2)
{
    int o = ours(fd);
    if (o > 0)
        return fd == fd2 ? fd : clear_channel(fd2) < 0 ? -1 : brisk_posix_dup3(g_p, fd, fd2, 0);
    if (fd != fd2 && ours(fd2) > 0 && fcntl(fd, F_GETFD) >= 0)
        brisk_posix_forget(g_p, fd2);
    if (fd != fd2 && clear_channel(fd2) < 0)
        return -1;
    return REAL(dup2)(fd, fd2);
}

/* close_range / closefrom: the brisk sockets in the range leave brisk first (released if it was their last
 * number), then the kernel closes every number — never a closed number left in brisk's table for the next
 * descriptor to inherit. With CLOSE_RANGE_UNSHARE the closing happens in a private copy of the descriptor
 * table (a child about to exec), and CLOSE_RANGE_CLOEXEC only marks: brisk's state is left alone. */
static void forget_range(unsigned first, unsigned last)
{
    if (!g_p)
        return;
    unsigned end = (unsigned)brisk_posix_table_size(g_p); /* every brisk number is below it */
    if (last < end)
        end = last + 1;
    for (unsigned fd = first; fd < end; fd++)
        if (brisk_posix_owns(g_p, (int)fd))
            brisk_posix_forget(g_p, (int)fd);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    if (flags == 0 && first <= last)
        forget_range(first, last);
    if (!REAL(close_range)) {
        errno = ENOSYS;
        return -1;
    }
    int ch = g_p ? brisk_posix_channel(g_p) : -1;
    if (ch < 0 || (unsigned)ch < first || (unsigned)ch > last || (flags & CLOSE_RANGE_CLOEXEC))
        return REAL(close_range)(first, last, flags);
    /* around a fork's channel (close-on-exec already: marking it is harmless) */
    if ((unsigned)ch > first && REAL(close_range)(first, (unsigned)ch - 1, flags) < 0)
        return -1;
    if ((unsigned)ch < last && REAL(close_range)((unsigned)ch + 1, last, flags) < 0)
        return -1;
    return 0;
}

EXPORT void closefrom(int lowfd)
{
    int ch = g_p ? brisk_posix_channel(g_p) : -1;
    if (lowfd >= 0 && ch >= lowfd && REAL(close_range)) {
        close_range((unsigned)lowfd, ~0u, 0); /* around the channel */
        return;
    }
    if (lowfd >= 0)
        forget_range((unsigned)lowfd, ~0u);
    if (REAL(closefrom))
        REAL(closefrom)(lowfd);
}

/* sendfile onto a brisk socket: by copy, in 64 KB pieces read from in_fd. */
static ssize_t brisk_sendfile(int out, int in, off_t *off, size_t count)
{
    char buf[65536];
    size_t done = 0;
    off_t pos = off ? *off : 0;
    while (done < count) {
        size_t want = count - done < sizeof(buf) ? count - done : sizeof(buf);
        ssize_t r = off ? pread(in, buf, want, pos) : REAL(read)(in, buf, want);
        if (r <= 0) {
            if (r < 0 && !done)
                return -1;
            break;
        }
        ssize_t w = brisk_posix_send(g_p, out, buf, (size_t)r, 0);
        if (w <= 0) {
            if (!done)
                return -1;
            break;
        }
        done += (size_t)w;
        pos += w;
        if (w < r) {
            if (!off)
                lseek(in, w - r, SEEK_CUR); /* give back what was read and not sent */
            break;
        }
    }
    if (off)
        *off = pos;
    return (ssize_t)done;
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
    ROUTE(out, brisk_sendfile(out, in, off, count), REAL(sendfile)(out, in, off, count));
}

/* The name programs built with _FILE_OFFSET_BITS=64 call; the same function on 64-bit Linux. */
EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
    ROUTE(out, brisk_sendfile(out, in, off, count), REAL(sendfile)(out, in, off, count));
}
