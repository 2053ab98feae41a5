/*
 * kernel.c — brisk-pkt's kernel backend: a script against this machine's Linux, in real time, the way
 * packetdrill runs it.
 *
 * Each script runs in a child process that enters a network namespace of its own (unshare(CLONE_NEWNET)),
 * so nothing it does touches the host and everything it made dies with it: no cleanup, no leftover device,
 * sysctls written freely (the tcp ones are per namespace). In there the child brings loopback up and makes a
 * TAP device "tun0" (IFF_TAP | IFF_NO_PI, no IFF_VNET_HDR: no offloads are negotiated, so the kernel
 * segments and checksums every frame itself and hands over MSS-sized frames, as brisk's virtual device does;
 * TCP still builds GSO packets, segmented in software on the way), with the script's addresses
 * (192.168.0.1/16 by default, --local_ip, --netmask_ip, --mtu), the MAC the frames match.c builds are
 * addressed to, a default route via the gateway (--gateway_ip) and a permanent neighbour entry for it
 * (SIOCSARP), so no ARP exchange interrupts a script; an ARP request that still comes is answered. IPv6 is
 * off on the namespace's devices: the only frames are the script's. What the namespace copied from the host
 * is set back to Linux's defaults (kern_baseline).
 *
 * Time 0 is when the device is ready and the init command has run; `now` is CLOCK_MONOTONIC since then. The
 * child runs at the lowest real-time priority, as packetdrill does (timing_setup), so a busy machine does not
 * make its wake-ups late.
 * kern_pump is the one place the main thread waits: it sleeps in ppoll on the TAP descriptor and the worker's
 * eventfd, reads every outbound frame as it comes (its arrival time is its time in the script) and notes a
 * returned system call. advance, waiting for an outbound packet and waiting for a call are all kern_pump with
 * a deadline. Commands write their sysctls to /proc/sys (only under net/: nothing outside the namespace).
 *
 * The child reports its result through a pipe. A system call that hangs is bounded like the rest: a call
 * written without "..." fails once its tolerance is past, a start...end call still running at the end fails
 * a second later (packetdrill's rule), and the child then exits, which ends the thread stuck in the kernel.
 * kernel_probe says, before any script runs, why this machine cannot do this (not root, no /dev/net/tun, no
 * namespaces); brisk-pkt exits 77 then.
 */
#define _GNU_SOURCE /* unshare, ppoll, accept4, epoll_create1 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <net/route.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pkt/kern.h"
#include "wire/arp.h"
#include "wire/eth.h"

#define KERN_IFNAME "tun0"

uint64_t kern_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t kern_now(const struct kern *k)
{
    uint64_t m = kern_mono();
    return m > k->t0 ? m - k->t0 : 0;
}

/* ---- the namespace's network ---- */

static int say(char *why, size_t n, const char *what, int e)
{
    snprintf(why, n, "%s: %s", what, strerror(e));
    return -1;
}

static void sin_set(struct sockaddr *sa, uint32_t addr)
{
    struct sockaddr_in *in = (struct sockaddr_in *)sa;
    memset(in, 0, sizeof(*in));
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(addr);
}

static int if_up(int ctl, const char *name, char *why, size_t n)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0)
        return say(why, n, "SIOCGIFFLAGS", errno);
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0)
        return say(why, n, "SIOCSIFFLAGS", errno);
    return 0;
}

static void proc_write(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return; /* no IPv6 in this kernel: nothing to turn off */
    ssize_t w = write(fd, value, strlen(value));
    (void)w;
    close(fd);
}

/* Opens the TAP device; 0 or -1 with why set. */
static int tap_open(char *why, size_t n)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return say(why, n, "/dev/net/tun", errno);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", KERN_IFNAME);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(fd);
        return say(why, n, "TUNSETIFF", e);
    }
    return fd;
}

/* The device, its address, the route and the gateway's neighbour entry. */
static int net_setup(struct run *r, struct kern *k, char *why, size_t n)
{
    int ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (ctl < 0)
        return say(why, n, "socket", errno);
    int rc = -1;
    if (if_up(ctl, "lo", why, n) < 0)
        goto out;
    proc_write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
    proc_write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
    if ((k->tap = tap_open(why, n)) < 0)
        goto out;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", KERN_IFNAME);
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    memcpy(ifr.ifr_hwaddr.sa_data, r->local_mac, 6);
    if (ioctl(ctl, SIOCSIFHWADDR, &ifr) < 0) {
        say(why, n, "SIOCSIFHWADDR", errno);
        goto out;
    }
    ifr.ifr_mtu = (int)r->mtu;
    if (ioctl(ctl, SIOCSIFMTU, &ifr) < 0) {
        say(why, n, "SIOCSIFMTU", errno);
        goto out;
    }
    sin_set(&ifr.ifr_addr, r->local_ip);
    if (ioctl(ctl, SIOCSIFADDR, &ifr) < 0) {
        say(why, n, "SIOCSIFADDR", errno);
        goto out;
    }
    sin_set(&ifr.ifr_netmask, r->prefix ? 0xffffffffu << (32 - r->prefix) : 0);
    if (ioctl(ctl, SIOCSIFNETMASK, &ifr) < 0) {
        say(why, n, "SIOCSIFNETMASK", errno);
        goto out;
    }
    if (if_up(ctl, KERN_IFNAME, why, n) < 0)
        goto out;
    struct rtentry rt;
    memset(&rt, 0, sizeof(rt));
    sin_set(&rt.rt_dst, 0);
    sin_set(&rt.rt_genmask, 0);
    sin_set(&rt.rt_gateway, r->gateway_ip);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    rt.rt_dev = ifr.ifr_name;
    if (ioctl(ctl, SIOCADDRT, &rt) < 0) {
        say(why, n, "SIOCADDRT (default route via the gateway)", errno);
        goto out;
    }
    struct arpreq ar;
    memset(&ar, 0, sizeof(ar));
    sin_set(&ar.arp_pa, r->gateway_ip);
    ar.arp_ha.sa_family = ARPHRD_ETHER;
    memcpy(ar.arp_ha.sa_data, r->gw_mac, 6);
    ar.arp_flags = ATF_PERM | ATF_COM;
    snprintf(ar.arp_dev, sizeof(ar.arp_dev), "%s", KERN_IFNAME);
    if (ioctl(ctl, SIOCSARP, &ar) < 0) {
        say(why, n, "SIOCSARP (the gateway's neighbour entry)", errno);
        goto out;
    }
    int fl = fcntl(k->tap, F_GETFL);
    if (fl < 0 || fcntl(k->tap, F_SETFL, fl | O_NONBLOCK) < 0) {
        say(why, n, "O_NONBLOCK on the TAP device", errno);
        goto out;
    }
    rc = 0;
out:
    close(ctl);
    return rc;
}

/* ---- frames ---- */

static void arp_reply(struct run *r, const struct brisk_arp_repr *req)
{
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, req->sha, 6);
    memcpy(eth.src, r->gw_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REPLY, .spa = r->gateway_ip, .tpa = req->spa};
    memcpy(a.sha, r->gw_mac, 6);
    memcpy(a.tha, req->sha, 6);
    brisk_arp_emit(frame + BRISK_ETH_HLEN, &a);
    ssize_t w = write(r->kern->tap, frame, sizeof(frame));
    (void)w; /* the neighbour entry is permanent: this answer is a fallback only */
}

/* Queues one frame the kernel sent, stamped with the time it was read. IPv4 only; ARP is answered. */
static void frame_in(struct run *r, const uint8_t *b, size_t len, uint64_t at)
{
    struct brisk_eth_repr eth;
    if (brisk_eth_parse(b, len, &eth) < 0)
        return;
    if (eth.type == BRISK_ETH_P_ARP) {
        struct brisk_arp_repr a;
        if (brisk_arp_parse(b + BRISK_ETH_HLEN, len - BRISK_ETH_HLEN, &a) >= 0 &&
            a.op == BRISK_ARP_OP_REQUEST && a.tpa == r->gateway_ip)
            arp_reply(r, &a);
        return;
    }
    if (eth.type != BRISK_ETH_P_IPV4)
        return;
    if (r->nout == r->outcap) {
        size_t cap = r->outcap ? r->outcap * 2 : 256;
        struct run_frame *q = realloc(r->outq, cap * sizeof(*q));
        if (!q) {
            run_fail(r, PKT_FAIL, r->cur, "out of memory queueing an outbound frame");
            return;
        }
        r->outq = q;
        r->outcap = cap;
    }
    uint8_t *copy = malloc(len);
    if (!copy) {
        run_fail(r, PKT_FAIL, r->cur, "out of memory queueing an outbound frame");
        return;
    }
    memcpy(copy, b, len);
    r->outq[r->nout++] = (struct run_frame){.at = at, .data = copy, .len = len};
}

static void tap_drain(struct run *r)
{
    uint8_t *buf = r->kern->frame;
    for (;;) {
        ssize_t n = read(r->kern->tap, buf, sizeof(r->kern->frame));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                run_fail(r, PKT_FAIL, r->cur, "reading the TAP device: %s", strerror(errno));
            return;
        }
        frame_in(r, buf, (size_t)n, kern_now(r->kern));
    }
}

/* Notes a call the worker has finished; a start...end call running in the background is checked now (1). */
static int worker_check(struct run *r)
{
    struct kern *k = r->kern;
    uint64_t v;
    if (read(k->wake, &v, sizeof(v)) != (ssize_t)sizeof(v))
        return 0;
    pthread_mutex_lock(&k->mu);
    if (k->state == KC_DONE) {
        k->state = KC_IDLE;
        k->op_done = 1;
    }
    pthread_mutex_unlock(&k->mu);
    if (!k->op_done || !r->call.active)
        return 0;
    ksys_reap(r);
    return 1;
}

void kern_pump(struct run *r, uint64_t until, int for_frame, int for_call)
{
    struct kern *k = r->kern;
    for (;;) {
        tap_drain(r);
        int reaped = worker_check(r);
        r->now = kern_now(k);
        if (r->stopped || reaped || (for_frame && r->nout) || (for_call && k->op_done) || r->now >= until)
            return;
        uint64_t left = until - r->now;
        struct timespec ts = {.tv_sec = (time_t)(left / BRISK_NSEC_PER_SEC),
                              .tv_nsec = (long)(left % BRISK_NSEC_PER_SEC)};
        struct pollfd p[2] = {{.fd = k->tap, .events = POLLIN}, {.fd = k->wake, .events = POLLIN}};
        if (ppoll(p, 2, &ts, NULL) < 0 && errno != EINTR) {
            run_fail(r, PKT_FAIL, r->cur, "ppoll: %s", strerror(errno));
            return;
        }
    }
}

/* ---- commands: sysctls written to /proc/sys ---- */

static int kern_sysctl(void *ctx, const char *name, const char *value, char *err, size_t errlen)
{
    struct run *r = ctx;
    char path[256];
    int n = snprintf(path, sizeof(path), "/proc/sys/%s", name);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        snprintf(err, errlen, "sysctl %s: name too long", name);
        return PKT_BAD_SCRIPT;
    }
    /* net.ipv4.tcp_sack -> net/ipv4/tcp_sack; the /proc form is already a path. */
    if (!strchr(name, '/'))
        for (char *c = path + 10; *c; c++)
            if (*c == '.')
                *c = '/';
    /* Only the namespace's own settings: a script must not reach the host's (kernel/, vm/, fs/). */
    if (strncmp(path + 10, "net/", 4) != 0 || strstr(path, "..")) {
        snprintf(err, errlen, "unsupported: sysctl %s (only net.* sysctls are written, in the namespace)",
                 name);
        return PKT_UNSUPPORTED;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%ssysctl %s: %s%s", e == ENOENT ? "unsupported: " : "", name, strerror(e),
                 e == ENOENT ? " (not in this kernel, or not per network namespace)" : "");
        return e == ENOENT ? PKT_UNSUPPORTED : PKT_FAIL;
    }
    char line[256];
    snprintf(line, sizeof(line), "%s\n", value);
    ssize_t w = write(fd, line, strlen(line));
    int e = errno;
    close(fd);
    if (!strcmp(path, "/proc/sys/net/ipv4/tcp_congestion_control")) {
        /* Every TCP socket gets it (kern_baseline): a restricted algorithm (EPERM here) is still honoured. */
        snprintf(r->kern->cc, sizeof(r->kern->cc), "%s", value);
        if (w < 0 && e == EPERM)
            return PKT_PASS;
    }
    if (w != (ssize_t)strlen(line)) {
        snprintf(err, errlen, "sysctl %s=%s: the kernel refused it: %s", name, value, strerror(e));
        return PKT_BAD_SCRIPT;
    }
    return PKT_PASS;
}

static int kern_command(struct run *r, const struct pkt_event *ev, size_t index)
{
    (void)index;
    char err[320];
    if (r->cfg->verbose)
        printf("%9.6f command (line %d)\n", (double)r->now / 1e9, ev->line);
    int rc = pkt_command_run(ev->text, kern_sysctl, r, err, sizeof(err));
    if (rc != PKT_PASS)
        return run_fail(r, rc, ev, "%s", err);
    return 0;
}

/* ---- the backend table ---- */

/* What a new namespace copies from the host instead of taking Linux's defaults (tcp_sk_init copies tcp_rmem
 * and tcp_wmem from the initial namespace, and its congestion control when that is a module): set back to the
 * defaults, so a script sees Linux as it ships, not this host's tuning (this machine's host runs bbr with a
 * 32 MB tcp_rmem maximum, which makes every SYN-ACK say wscale 10). The init command may change them again.
 * The congestion control is the one that cannot always be written: a namespace other than the first may only
 * default to an algorithm in net.ipv4.tcp_allowed_congestion_control, which is the host's (EPERM otherwise),
 * so each TCP socket the script makes is given it (TCP_CONGESTION, which root may set to any). */
static const char *const kern_baseline[][2] = {
    {"net.ipv4.tcp_rmem", "4096 131072 6291456"},
    {"net.ipv4.tcp_wmem", "4096 16384 4194304"},
    {"net.ipv4.tcp_congestion_control", "cubic"},
};

static int kern_init(struct run *r, const struct brisk_settings *s)
{
    (void)s; /* brisk's settings: the kernel has its sysctls instead */
    struct kern *k = calloc(1, sizeof(*k));
    if (!k)
        return run_fail(r, PKT_FAIL, NULL, "out of memory");
    k->tap = k->wake = -1;
    r->kern = k;
    char why[256];
    if (net_setup(r, k, why, sizeof(why)) < 0)
        return run_fail(r, PKT_FAIL, NULL, "setting up the namespace's TAP device: %s", why);
    k->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (k->wake < 0)
        return run_fail(r, PKT_FAIL, NULL, "eventfd: %s", strerror(errno));
    if (ksys_init(r) < 0)
        return -1;
    char err[320];
    for (size_t i = 0; i < sizeof(kern_baseline) / sizeof(kern_baseline[0]); i++)
        if (kern_sysctl(r, kern_baseline[i][0], kern_baseline[i][1], err, sizeof(err)) != PKT_PASS)
            return run_fail(r, PKT_FAIL, NULL, "restoring Linux's default: %s", err);
    if (r->s->init_cmd) {
        int rc = pkt_command_run(r->s->init_cmd, kern_sysctl, r, err, sizeof(err));
        if (rc != PKT_PASS)
            return run_fail(r, rc, NULL, "init command: %s", err);
    }
    k->t0 = kern_mono();
    tap_drain(r); /* anything the set-up sent is before time 0 */
    for (size_t i = 0; i < r->nout; i++)
        free(r->outq[i].data);
    r->nout = 0;
    r->now = 0;
    return 0;
}

static void kern_free(struct run *r)
{
    struct kern *k = r->kern;
    for (size_t i = 0; i < r->nout; i++)
        free(r->outq[i].data);
    free(r->outq);
    r->outq = NULL;
    r->nout = 0;
    if (!k)
        return;
    ksys_free(r);
    if (k->tap >= 0)
        close(k->tap);
    if (k->have_thread)
        return; /* the worker is inside a call that never returned, and will use k and its eventfd if it does:
                   left for the process's exit, which comes next */
    if (k->wake >= 0)
        close(k->wake);
    free(k);
    r->kern = NULL;
}

static void kern_sync(struct run *r)
{
    kern_pump(r, 0, 0, 0);
}

static void kern_advance(struct run *r, uint64_t t)
{
    do
        kern_pump(r, t, 0, 0);
    while (!r->stopped && r->now < t);
}

static void kern_inject(struct run *r, const uint8_t *frame, size_t len)
{
    ssize_t w = write(r->kern->tap, frame, len);
    if (w != (ssize_t)len)
        run_fail(r, PKT_FAIL, r->cur, "writing the frame to the TAP device: %s",
                 w < 0 ? strerror(errno) : "short write");
}

static int kern_wait_out(struct run *r, uint64_t limit, uint64_t *ran_to)
{
    do
        kern_pump(r, limit, 1, 0);
    while (!r->stopped && !r->nout && r->now < limit);
    if (r->stopped)
        return -1;
    if (r->nout)
        return 1;
    *ran_to = r->now;
    return 0;
}

const struct run_backend kernel_backend = {
    .name = "kernel",
    .late_search_ns = 2 * BRISK_NSEC_PER_SEC,
    .any_wait_ns = 10 * BRISK_NSEC_PER_SEC,
    .sysctls_to_settings = 0,
    .init = kern_init,
    .free = kern_free,
    .sync = kern_sync,
    .advance = kern_advance,
    .inject = kern_inject,
    .wait_out = kern_wait_out,
    .syscall = ksys_event,
    .command = kern_command,
    .info = ksys_info,
    .finish = ksys_finish,
};

/* ---- the child process ---- */

/* As packetdrill does for steady timing: the lowest real-time priority (round robin) when there is more than
 * one CPU, so a busy machine does not delay the wake-up at an event's time by milliseconds; memory locked;
 * timers without slack. Each is best effort: without them the run is only noisier. The child only ever
 * sleeps in ppoll or in a system call, so it never holds a CPU. */
static void timing_setup(void)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
        struct sched_param sp = {.sched_priority = sched_get_priority_min(SCHED_RR)};
        sched_setscheduler(0, SCHED_RR, &sp);
    }
    mlockall(MCL_CURRENT | MCL_FUTURE);
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

void kernel_run(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *res)
{
    memset(res, 0, sizeof(*res));
    /* A script written for brisk's own profile ("--profile=brisk": a deliberate difference from Linux) says
     * what brisk does, not what Linux does: there is nothing to check against the kernel. */
    for (size_t i = 0; i < s->nopt; i++) {
        if (!strcmp(s->opt_name[i], "profile") && strncmp(s->opt_value[i], "linux", 5) != 0) {
            res->status = PKT_UNSUPPORTED;
            snprintf(res->msg, sizeof(res->msg),
                     "%s: unsupported: the script describes brisk's profile \"%s\", not Linux", s->path,
                     s->opt_value[i]);
            return;
        }
    }
    int p[2];
    if (pipe(p) < 0) {
        res->status = PKT_FAIL;
        snprintf(res->msg, sizeof(res->msg), "%s: pipe: %s", s->path, strerror(errno));
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        res->status = PKT_FAIL;
        snprintf(res->msg, sizeof(res->msg), "%s: fork: %s", s->path, strerror(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        signal(SIGPIPE, SIG_IGN); /* a write to a reset connection is EPIPE, as in packetdrill */
        timing_setup();
        struct pkt_result cres;
        memset(&cres, 0, sizeof(cres));
        if (unshare(CLONE_NEWNET) != 0) {
            cres.status = PKT_FAIL;
            snprintf(cres.msg, sizeof(cres.msg), "%s: cannot make a network namespace: %s", s->path,
                     strerror(errno));
        } else {
            struct run *r = run_new(s, cfg, &cres, &kernel_backend);
            if (r)
                run_script(r);
        }
        fflush(stdout);
        ssize_t w = write(p[1], &cres, sizeof(cres));
        (void)w;
        _exit(0); /* ends a worker thread still inside a call */
    }
    close(p[1]);
    int got = read_full(p[0], res, sizeof(*res));
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (got < 0) {
        memset(res, 0, sizeof(*res));
        res->status = PKT_FAIL;
        if (WIFSIGNALED(st))
            snprintf(res->msg, sizeof(res->msg), "%s: the kernel run died (signal %d)", s->path,
                     WTERMSIG(st));
        else
            snprintf(res->msg, sizeof(res->msg), "%s: the kernel run ended without a verdict (status %d)",
                     s->path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
}

int kernel_probe(char *why, size_t n)
{
    if (geteuid() != 0) {
        snprintf(why, n, "needs root (it makes a network namespace and a TAP device)");
        return -1;
    }
    if (access("/dev/net/tun", R_OK | W_OK) != 0) {
        snprintf(why, n, "no usable /dev/net/tun: %s", strerror(errno));
        return -1;
    }
    /* Try it: a namespace and a TAP device in a child, which reports what failed. */
    int p[2];
    if (pipe(p) < 0) {
        snprintf(why, n, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        char msg[256] = "";
        if (unshare(CLONE_NEWNET) != 0) {
            say(msg, sizeof(msg), "cannot make a network namespace (unshare CLONE_NEWNET)", errno);
        } else {
            int fd = tap_open(msg, sizeof(msg));
            if (fd >= 0)
                close(fd);
        }
        ssize_t w = write(p[1], msg, strlen(msg));
        (void)w;
        _exit(0);
    }
    close(p[1]);
    char msg[256];
    ssize_t k = read(p[0], msg, sizeof(msg) - 1);
    close(p[0]);
    waitpid(pid, NULL, 0);
    if (k > 0) {
        msg[k] = 0;
        snprintf(why, n, "%s", msg);
        return -1;
    }
    return 0;
}
