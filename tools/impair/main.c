/*
 * main.c — brisk-impair: a path impairment of the project's own for real-network tests (this machine's
 * kernel has no netem). It takes the packets an iptables NFQUEUE rule sends to queue N and gives each the
 * verdict model.c decides: drop (random, Gilbert-Elliott or burst loss, rate-limiter overflow), pass now, or
 * pass later (delay, reordering by time displacement, waiting for the token bucket), and sends a copy of
 * some (duplication).
 *
 *   brisk-impair --queue N [--seed N] [--loss P] [--gilbert p_gb,p_bg,loss_good,loss_bad] [--burst N]
 *                [--delay T] [--reorder P --reorder-delay T] [--duplicate P]
 *                [--rate R [--rate-burst SIZE] [--rate-queue SIZE]] [--max-held N] [--gso]
 *                [--mark N] [--duration T] [--json]
 *
 * Holding a packet is holding its verdict: NFQUEUE keeps the packet in the kernel until userspace answers for
 * its id, and answers may come in any order, so a delayed packet costs an id in hold.c's heap and a slot in
 * the kernel's queue (sized --max-held plus room for arrivals). When --max-held packets are already held, a
 * packet that should be held is dropped instead and counted (dropped_held_limit), as netem's limit drops. The
 * loop sleeps in ppoll until a packet arrives or the earliest hold ends (nanosecond timeout, no timerfd).
 *
 * Duplication sends the copy through a raw IPv4 socket with SO_MARK --mark, so the queueing rules must skip
 * that mark (`-m mark ! --mark M`): the copy goes out at once, routed from this namespace — a packet that was
 * on its way in is delivered locally through loopback. Offloaded (GSO) frames are segmented by the kernel
 * before they are queued unless --gso asks for them whole: a lost 64 KB frame is then a burst of ~45 segments,
 * as a path that loses offloaded frames does.
 *
 * Stats (packets seen, dropped by cause, delayed, reordered, duplicated, and the kernel's own queue drops
 * from /proc/net/netfilter/nfnetlink_queue) go to stdout at exit — after --duration, on SIGINT or SIGTERM —
 * as key=value or, with --json, one JSON object. Held packets are released at exit, never lost. Bad command
 * lines print a message naming the problem and exit 2; failing to bind the queue exits 1.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>

#include "brisk/brisk.h"
#include "common/json.h"
#include "impair/hold.h"
#include "impair/model.h"

struct opts {
    uint32_t queue;
    int have_queue;
    uint64_t seed;
    struct impair_params p;
    uint64_t max_held;
    uint64_t duration_ns;
    uint32_t mark;
    int gso, json;
};

struct run {
    struct opts *o;
    struct nfq_q_handle *qh;
    struct impair_state model;
    struct impair_hold hold;
    int raw; /* raw IPv4 socket for duplicates, or -1 */
    uint64_t dropped_held_limit, dup_failed, verdict_errors, enobufs, released_at_exit;
    uint64_t max_held_seen;
};

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

static void usage(FILE *f)
{
    fprintf(f,
            "usage: brisk-impair --queue N [--seed N] [--loss P] [--gilbert p_gb,p_bg,loss_good,loss_bad]\n"
            "                    [--burst N] [--delay T] [--reorder P --reorder-delay T] [--duplicate P]\n"
            "                    [--rate R [--rate-burst SIZE] [--rate-queue SIZE]] [--max-held N] [--gso]\n"
            "                    [--mark N] [--duration T] [--json]\n"
            "  takes the packets of NFQUEUE queue N (iptables ... -j NFQUEUE --queue-num N) and drops, delays,\n"
            "  reorders, duplicates or rate-limits them; seeded, decided per packet in arrival order.\n"
            "  P: 0.01 or 1%%; T: 20ms, 1.5ms, 10s; R: 1G, 100M (bit/s); SIZE: 64K, 1M.\n"
            "  duplicates are sent with SO_MARK N (default 0x1b15): exclude it from the queueing rule.\n");
}

static int bad(const char *what, const char *val)
{
    if (val)
        fprintf(stderr, "brisk-impair: %s: '%s'\n", what, val);
    else
        fprintf(stderr, "brisk-impair: %s\n", what);
    fprintf(stderr, "brisk-impair: --help for usage\n");
    return 2;
}

/* Four comma-separated probabilities. */
static int parse_gilbert(const char *s, struct impair_params *p)
{
    double v[4];
    char buf[128];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    for (int i = 0; i < 4; i++) {
        if (!tok || brisk_parse_prob(tok, &v[i]) != BRISK_OK)
            return -1;
        tok = strtok_r(NULL, ",", &save);
    }
    if (tok)
        return -1;
    p->gilbert = 1;
    p->ge_p_gb = v[0];
    p->ge_p_bg = v[1];
    p->ge_loss_good = v[2];
    p->ge_loss_bad = v[3];
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.seed = 1, .max_held = 20000, .mark = 0x1b15};
    o->p.rate_burst_bytes = 16 * 1024;
    o->p.rate_queue_bytes = 1024 * 1024;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--gso")) {
            o->gso = 1;
            continue;
        }
        if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return bad("unexpected argument", a);
        if (i + 1 >= argc)
            return bad("option needs a value", a);
        const char *v = argv[++i];
        uint64_t u;
        if (!strcmp(a, "--queue")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u > 65535)
                return bad("--queue takes a queue number 0-65535", v);
            o->queue = (uint32_t)u;
            o->have_queue = 1;
        } else if (!strcmp(a, "--seed")) {
            if (brisk_parse_uint(v, &o->seed) != BRISK_OK)
                return bad("--seed takes an unsigned integer", v);
        } else if (!strcmp(a, "--loss")) {
            if (brisk_parse_prob(v, &o->p.loss) != BRISK_OK)
                return bad("--loss takes a probability (0.01 or 1%)", v);
        } else if (!strcmp(a, "--gilbert")) {
            if (parse_gilbert(v, &o->p) != 0)
                return bad("--gilbert takes four probabilities p_gb,p_bg,loss_good,loss_bad", v);
        } else if (!strcmp(a, "--burst")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u < 1 || u > 1000000)
                return bad("--burst takes a packet count 1-1000000", v);
            o->p.burst = (uint32_t)u;
        } else if (!strcmp(a, "--delay")) {
            if (brisk_parse_time(v, &o->p.delay_ns) != BRISK_OK || o->p.delay_ns > UINT64_C(60000000000))
                return bad("--delay takes a time up to 60s (20ms, 1.5ms)", v);
        } else if (!strcmp(a, "--reorder")) {
            if (brisk_parse_prob(v, &o->p.reorder) != BRISK_OK)
                return bad("--reorder takes a probability (0.05 or 5%)", v);
        } else if (!strcmp(a, "--reorder-delay")) {
            if (brisk_parse_time(v, &o->p.reorder_delay_ns) != BRISK_OK ||
                o->p.reorder_delay_ns > UINT64_C(60000000000))
                return bad("--reorder-delay takes a time up to 60s (1ms)", v);
        } else if (!strcmp(a, "--duplicate")) {
            if (brisk_parse_prob(v, &o->p.duplicate) != BRISK_OK)
                return bad("--duplicate takes a probability (0.01 or 1%)", v);
        } else if (!strcmp(a, "--rate")) {
            if (brisk_parse_rate(v, &o->p.rate_bps) != BRISK_OK || o->p.rate_bps == 0)
                return bad("--rate takes a rate in bit/s > 0 (100M, 1G)", v);
        } else if (!strcmp(a, "--rate-burst")) {
            if (brisk_parse_size(v, &o->p.rate_burst_bytes) != BRISK_OK || o->p.rate_burst_bytes > (1u << 30))
                return bad("--rate-burst takes a size up to 1G (16K)", v);
        } else if (!strcmp(a, "--rate-queue")) {
            if (brisk_parse_size(v, &o->p.rate_queue_bytes) != BRISK_OK || o->p.rate_queue_bytes > (1u << 30))
                return bad("--rate-queue takes a size up to 1G (1M)", v);
        } else if (!strcmp(a, "--max-held")) {
            if (brisk_parse_uint(v, &o->max_held) != BRISK_OK || o->max_held < 1 || o->max_held > 1000000)
                return bad("--max-held takes a packet count 1-1000000", v);
        } else if (!strcmp(a, "--mark")) {
            if (brisk_parse_uint(v, &u) != BRISK_OK || u == 0 || u > UINT32_MAX)
                return bad("--mark takes a non-zero 32-bit mark", v);
            o->mark = (uint32_t)u;
        } else if (!strcmp(a, "--duration")) {
            if (brisk_parse_time(v, &o->duration_ns) != BRISK_OK || o->duration_ns == 0)
                return bad("--duration takes a time > 0 (10s, 500ms)", v);
        } else {
            return bad("unknown option", a);
        }
    }
    if (!o->have_queue)
        return bad("--queue N is required (the NFQUEUE number of the iptables rule)", NULL);
    const char *why = impair_model_check(&o->p);
    if (why)
        return bad(why, NULL);
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void verdict(struct run *r, uint32_t id, uint32_t v)
{
    if (nfq_set_verdict(r->qh, id, v, 0, NULL) < 0)
        r->verdict_errors++;
}

/* The packet's length from its IP header (the queue copies only what duplication needs, and an offloaded
 * frame's header carries its whole length). */
static uint32_t packet_len(const unsigned char *d, int got)
{
    if (got >= 20 && (d[0] >> 4) == 4) {
        uint32_t tot = (uint32_t)d[2] << 8 | d[3];
        return tot > (uint32_t)got ? tot : (uint32_t)got;
    }
    if (got >= 40 && (d[0] >> 4) == 6)
        return 40 + ((uint32_t)d[4] << 8 | d[5]);
    return got > 0 ? (uint32_t)got : 0;
}

static void send_copy(struct run *r, const unsigned char *d, int got)
{
    if (r->raw < 0 || got < 20 || (d[0] >> 4) != 4 || packet_len(d, got) != (uint32_t)got) {
        r->dup_failed++; /* not IPv4, or not copied whole */
        return;
    }
    struct sockaddr_in to = {.sin_family = AF_INET};
    memcpy(&to.sin_addr, d + 16, 4);
    if (sendto(r->raw, d, (size_t)got, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) != got)
        r->dup_failed++;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *arg)
{
    (void)qh;
    (void)msg;
    struct run *r = arg;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (!ph)
        return 0;
    uint32_t id = ntohl(ph->packet_id);
    unsigned char *d = NULL;
    int got = nfq_get_payload(nfa, &d);
    uint64_t now = now_ns();
    struct impair_verdict v = impair_model_decide(&r->model, &r->o->p, packet_len(d, got), now);
    if (v.drop) {
        verdict(r, id, NF_DROP);
        return 0;
    }
    if (v.duplicate)
        send_copy(r, d, got);
    if (!v.hold_ns) {
        verdict(r, id, NF_ACCEPT);
        return 0;
    }
    if (impair_hold_push(&r->hold, now + v.hold_ns, id) != 0) {
        r->dropped_held_limit++;
        verdict(r, id, NF_DROP);
        return 0;
    }
    if (r->hold.len > r->max_held_seen)
        r->max_held_seen = r->hold.len;
    return 0;
}

static void release_due(struct run *r, uint64_t now)
{
    struct impair_held e;
    while (impair_hold_pop(&r->hold, now, &e))
        verdict(r, e.id, NF_ACCEPT);
}

/* The kernel's counters for our queue: packets it dropped because the queue was full (queue_dropped) or
 * because the netlink socket could not take them (user_dropped). -1 when unreadable. */
static void kernel_drops(uint32_t queue, int64_t *qdrop, int64_t *udrop)
{
    *qdrop = *udrop = -1;
    FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
    if (!f)
        return;
    unsigned long long q, port, total, mode, range, qd, ud;
    while (fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %*[^\n]", &q, &port, &total, &mode, &range, &qd,
                  &ud) == 7) {
        if (q == queue) {
            *qdrop = (int64_t)qd;
            *udrop = (int64_t)ud;
        }
    }
    fclose(f);
}

static void report(const struct run *r, int64_t qdrop, int64_t udrop, double secs)
{
    const struct impair_stats *s = &r->model.stats;
    uint64_t dropped = r->dropped_held_limit;
    for (int c = 1; c < IMPAIR_CAUSE_COUNT; c++)
        dropped += s->dropped[c];
    if (r->o->json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_u64(&j, "queue", r->o->queue);
        json_u64(&j, "seed", r->o->seed);
        json_double(&j, "seconds", secs);
        json_u64(&j, "seen", s->seen);
        json_u64(&j, "passed", s->passed - r->dropped_held_limit);
        json_u64(&j, "dropped", dropped);
        json_object_begin(&j, "dropped_by");
        for (int c = 1; c < IMPAIR_CAUSE_COUNT; c++)
            json_u64(&j, impair_cause_name((enum impair_cause)c), s->dropped[c]);
        json_u64(&j, "held_limit", r->dropped_held_limit);
        json_object_end(&j);
        json_u64(&j, "delayed", s->delayed);
        json_u64(&j, "reordered", s->reordered);
        json_u64(&j, "rate_queued", s->rate_queued);
        json_u64(&j, "duplicated", s->duplicated);
        json_u64(&j, "duplicate_failed", r->dup_failed);
        json_u64(&j, "gilbert_bad_packets", s->gilbert_bad_packets);
        json_u64(&j, "max_held", r->max_held_seen);
        json_u64(&j, "released_at_exit", r->released_at_exit);
        json_u64(&j, "verdict_errors", r->verdict_errors);
        json_u64(&j, "enobufs", r->enobufs);
        json_i64(&j, "kernel_queue_dropped", qdrop);
        json_i64(&j, "kernel_user_dropped", udrop);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("brisk-impair: queue=%" PRIu32 " seed=%" PRIu64 " seconds=%.3f seen=%" PRIu64 " passed=%" PRIu64
               " dropped=%" PRIu64,
               r->o->queue, r->o->seed, secs, s->seen, s->passed - r->dropped_held_limit, dropped);
        for (int c = 1; c < IMPAIR_CAUSE_COUNT; c++)
            printf(" dropped_%s=%" PRIu64, impair_cause_name((enum impair_cause)c), s->dropped[c]);
        printf(" dropped_held_limit=%" PRIu64 " delayed=%" PRIu64 " reordered=%" PRIu64 " rate_queued=%" PRIu64
               " duplicated=%" PRIu64 " duplicate_failed=%" PRIu64 " max_held=%" PRIu64
               " released_at_exit=%" PRIu64 " verdict_errors=%" PRIu64 " enobufs=%" PRIu64
               " kernel_queue_dropped=%" PRId64 " kernel_user_dropped=%" PRId64 "\n",
               r->dropped_held_limit, s->delayed, s->reordered, s->rate_queued, s->duplicated, r->dup_failed,
               r->max_held_seen, r->released_at_exit, r->verdict_errors, r->enobufs, qdrop, udrop);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;

    struct run r = {.o = &o, .raw = -1};
    impair_model_init(&r.model, o.seed);
    if (impair_hold_init(&r.hold, (size_t)o.max_held) != 0) {
        fprintf(stderr, "brisk-impair: cannot allocate %" PRIu64 " held-packet slots\n", o.max_held);
        return 1;
    }
    struct nfq_handle *h = nfq_open();
    if (!h) {
        fprintf(stderr, "brisk-impair: cannot open NFQUEUE (needs root / CAP_NET_ADMIN): %s\n", strerror(errno));
        return 1;
    }
    r.qh = nfq_create_queue(h, (uint16_t)o.queue, on_packet, &r);
    if (!r.qh) {
        fprintf(stderr, "brisk-impair: cannot bind queue %" PRIu32 " (in use, or no permission): %s\n", o.queue,
                strerror(errno));
        nfq_close(h);
        return 1;
    }
    /* Duplicates need the whole packet; otherwise the headers are enough (the length is in the IP header). */
    uint32_t range = o.p.duplicate > 0 ? 0xffff : 128;
    if (nfq_set_mode(r.qh, NFQNL_COPY_PACKET, range) < 0) {
        fprintf(stderr, "brisk-impair: cannot set the copy mode: %s\n", strerror(errno));
        return 1;
    }
    /* Room in the kernel for every held packet and a burst of arrivals, so the kernel itself drops nothing. */
    uint64_t maxlen = o.max_held + 65536;
    nfq_set_queue_maxlen(r.qh, (uint32_t)maxlen);
    if (o.gso)
        nfq_set_queue_flags(r.qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    nfnl_rcvbufsiz(nfq_nfnlh(h), 64u << 20);
    if (o.p.duplicate > 0) {
        r.raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
        if (r.raw < 0 || setsockopt(r.raw, SOL_SOCKET, SO_MARK, &o.mark, sizeof(o.mark)) < 0)
            fprintf(stderr, "brisk-impair: no raw socket for duplicates (%s): they will be counted as failed\n",
                    strerror(errno));
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &orig); /* signals arrive only inside ppoll: no lost wake-up */

    int fd = nfq_fd(h);
    static char buf[256 * 1024];
    uint64_t start = now_ns();
    uint64_t end = o.duration_ns ? start + o.duration_ns : UINT64_MAX;
    while (!stop_signal) {
        uint64_t now = now_ns();
        if (now >= end)
            break;
        release_due(&r, now);
        uint64_t wake = impair_hold_next(&r.hold);
        if (end < wake)
            wake = end;
        struct timespec ts, *tp = NULL;
        if (wake != UINT64_MAX) {
            uint64_t d = wake > now ? wake - now : 0;
            ts.tv_sec = (time_t)(d / 1000000000u);
            ts.tv_nsec = (long)(d % 1000000000u);
            tp = &ts;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = ppoll(&pfd, 1, tp, &orig);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "brisk-impair: poll: %s\n", strerror(errno));
            break;
        }
        if (n == 0)
            continue;
        /* Drain what is queued, a bounded batch at a time so that due releases are not starved. */
        for (int batch = 0; batch < 256; batch++) {
            ssize_t got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (got < 0) {
                if (errno == ENOBUFS) {
                    r.enobufs++;
                    continue;
                }
                break;
            }
            nfq_handle_packet(h, buf, (int)got);
            if ((batch & 15) == 15)
                release_due(&r, now_ns());
        }
    }
    /* Nothing held is lost at exit: the rest pass now. */
    struct impair_held e;
    while (impair_hold_pop(&r.hold, UINT64_MAX, &e)) {
        verdict(&r, e.id, NF_ACCEPT);
        r.released_at_exit++;
    }
    int64_t qdrop, udrop;
    kernel_drops(o.queue, &qdrop, &udrop);
    double secs = (double)(now_ns() - start) / 1e9;
    nfq_destroy_queue(r.qh);
    nfq_close(h);
    if (r.raw >= 0)
        close(r.raw);
    impair_hold_free(&r.hold);
    report(&r, qdrop, udrop, secs);
    return 0;
}
