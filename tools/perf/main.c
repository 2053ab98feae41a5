/*
 * main.c — brisk-perf: iperf3-compatible throughput tests, request/response latency and an echo server, with
 * a brisk stack on a TAP device as one end and anything that speaks TCP (the Linux kernel, iperf3) as the
 * other.
 *
 *   brisk-perf server  [--port N] [-1|--one-off] [--json]                          TAP [STACK]
 *   brisk-perf client  ADDR [-p N] [-t TIME] [-n BYTES] [-P N] [-R] [-l LEN] [-N] [-M MSS] [-w WIN] [--json]
 *                          [-u [-b RATE] [--udp-counters-64bit]]                   TAP [STACK]
 *   brisk-perf rr      ADDR [-p N] [-t TIME] [-n COUNT] [-P N] [-l REQ] [--resp N] [--no-nodelay] [--json]
 *                                                                                  TAP [STACK]
 *   brisk-perf echo    [--port N] [--no-nodelay]                                   TAP [STACK]
 *   TAP:   --tap NAME --ip ADDR/PREFIX [--ip6 ADDR/PREFIX] [--gw ADDR] [--mtu N] [--no-gso] [--txc-delay
 * TIME] [--loss P]
 *          [--wait TIME] [--busy-poll TIME] [-i INTERVAL] [--stats] [--ctl PATH]
 *   STACK: [--profile NAME] [--set name=value ...] [--seed N]
 *
 * The loop (brisk/loop.h) runs the stack; one hook drives the protocol engine (perf.h): it calls the engine's
 * tick when its deadline comes and stops the loop when the engine is done. The engine's kick (its deadline
 * moved inside a socket callback) wakes the hook. A client first waits until the server's (or the gateway's)
 * MAC resolves — the kernel side of the TAP is usually configured by a script after brisk-perf created it —
 * for at most --wait (30 s).
 *
 * Times take brisk's syntax ("10s", "500ms") or, like iperf3, a plain number of seconds ("-t 10"). Bad input
 * prints a message and exits with 2; a test that fails exits with 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "brisk/loop.h"
#include "brisk/tap.h"
#include "introspect/ctl.h"
#include "perf/perf.h"
#include "perf/udp.h"

enum mode { M_SERVER, M_CLIENT, M_RR, M_ECHO };

struct opts {
    enum mode mode;
    struct brisk_addr server; /* client, rr: IPv4 or IPv6 */
    struct brisk_addr ip6;    /* --ip6: a static IPv6 address on the TAP (BRISK_AF_UNSPEC: none) */
    uint8_t ip6_prefix;
    struct perf_params p;
    struct perf_rr_params rr;
    int once, json, stats;
    struct brisk_tap_config tap;
    int have_tap, have_ip;
    uint64_t wait_ns, busy_poll_ns;
    uint64_t interval_ns; /* -i: interval reports (0 = none) */
    struct brisk_settings settings;
    const char *ctl_path; /* --ctl: the control socket brisk-ss / brisk-nstat ask (docs/introspection.md) */
};

struct run {
    struct opts *o;
    brisk_loop *loop;
    brisk_stack *st;
    int hook;
    int started; /* client engines: started after resolution */
    uint64_t wait_until;
    struct perf_iperf_client *client;
    struct perf_iperf_server *server;
    struct perf_rr_client *rr;
    struct perf_echo_server *echo;
    int exit_code;
    uint32_t iv_printed; /* intervals of the current test printed so far */
    int iv_done;         /* server: the engine's intervals are a reported test's: wait for the next one */
    int shown_connected; /* text mode: this test's "connected" lines are out */
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: brisk-perf server [--port N] [-1|--one-off] [--json] TAP [STACK]\n"
        "       brisk-perf client ADDR [-p N] [-t TIME] [-n BYTES] [-P N] [-R] [-l LEN] [-N] [-M MSS]\n"
        "                             [-w WIN] [-u [-b RATE] [--udp-counters-64bit]] [--json] TAP [STACK]\n"
        "       brisk-perf rr ADDR [-p N] [-t TIME] [-n COUNT] [-P N] [-l REQ] [--resp N] [--no-nodelay]\n"
        "                          [--json] TAP [STACK]\n"
        "       brisk-perf echo [--port N] [--no-nodelay] TAP [STACK]\n"
        "  TAP:   --tap NAME --ip ADDR/PREFIX [--ip6 ADDR/PREFIX] [--gw ADDR] [--mtu N] [--no-gso]\n"
        "         [--txc-delay TIME]\n"
        "         [--loss P] [--wait TIME] [--busy-poll TIME] [-i INTERVAL] [--stats] [--ctl PATH]\n"
        "  STACK: [--profile NAME] [--set name=value ...] [--seed N]\n"
        "  server and client speak iperf3's protocol (interoperate with iperf3 -c / iperf3 -s, port 5201);\n"
        "  -u: UDP streams paced at -b per stream (1M, 100M; 0 = unlimited; default 1 Mbit/s as iperf3)\n");
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "brisk-perf: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 2;
}

/* A time in brisk's syntax, or a plain number of seconds (iperf3's -t 10). */
static int parse_secs(const char *s, uint64_t *out)
{
    if (brisk_parse_time(s, out) == BRISK_OK)
        return BRISK_OK;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end || errno || !(d >= 0) || d > 1e6)
        return BRISK_ERR_INVAL;
    *out = (uint64_t)(d * 1e9);
    return BRISK_OK;
}

static int parse_u32(const char *s, uint64_t lo, uint64_t hi, uint32_t *out, int size)
{
    uint64_t v;
    if ((size ? brisk_parse_size(s, &v) : brisk_parse_uint(s, &v)) != BRISK_OK || v < lo || v > hi)
        return BRISK_ERR_INVAL;
    *out = (uint32_t)v;
    return BRISK_OK;
}

/* Parses argv; returns 0, or 2 after a message. */
static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    perf_params_default(&o->p);
    perf_rr_params_default(&o->rr);
    brisk_tap_config_default(&o->tap);
    brisk_settings_default(&o->settings);
    o->wait_ns = 30 * BRISK_NSEC_PER_SEC;
    o->interval_ns = BRISK_NSEC_PER_SEC;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *m = argv[1];
    if (!strcmp(m, "server"))
        o->mode = M_SERVER;
    else if (!strcmp(m, "client"))
        o->mode = M_CLIENT;
    else if (!strcmp(m, "rr"))
        o->mode = M_RR;
    else if (!strcmp(m, "echo"))
        o->mode = M_ECHO;
    else if (!strcmp(m, "-h") || !strcmp(m, "--help") || !strcmp(m, "help")) {
        usage(stdout);
        exit(0);
    } else
        return bad("unknown command '%s'%s (server, client, rr, echo)", m, "");
    int i = 2;
    if (o->mode == M_CLIENT || o->mode == M_RR) {
        if (i >= argc || argv[i][0] == '-')
            return bad("%s needs the server's address (brisk-perf %s ADDR ...)", m, m);
        /* IPv4, or IPv6 with or without brackets (iperf3 -c takes both) */
        char host[BRISK_ADDR_STRLEN];
        const char *h = argv[i];
        size_t hl = strlen(h);
        if (hl > 2 && h[0] == '[' && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (hl >= sizeof(host))
            return bad("'%s' is not an IPv4 or IPv6 address%s", argv[i], "");
        memcpy(host, h, hl);
        host[hl] = '\0';
        if (brisk_addr_parse(host, &o->server) != BRISK_OK)
            return bad("'%s' is not an IPv4 or IPv6 address%s", argv[i], "");
        i++;
    }
    int n_given = 0, t_given = 0, l_given = 0, b_given = 0, tcp_only = 0;
    const char *l_arg = NULL;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        uint32_t u32;
        if (!strcmp(a, "--json")) {
            o->json = 1;
            takes = 0;
        } else if (!strcmp(a, "-1") || !strcmp(a, "--one-off")) {
            o->once = 1;
            takes = 0;
        } else if (!strcmp(a, "-R") || !strcmp(a, "--reverse")) {
            o->p.reverse = 1;
            takes = 0;
        } else if (!strcmp(a, "-N") || !strcmp(a, "--no-delay")) {
            o->p.nodelay = 1;
            tcp_only = 'N';
            takes = 0;
        } else if (!strcmp(a, "--no-nodelay")) {
            o->rr.nodelay = 0;
            takes = 0;
        } else if (!strcmp(a, "--stats")) {
            o->stats = 1;
            takes = 0;
        } else if (!strcmp(a, "--no-gso")) {
            o->tap.gso = 0;
            takes = 0;
        } else if (!strcmp(a, "-u") || !strcmp(a, "--udp")) {
            o->p.udp = 1;
            takes = 0;
        } else if (!strcmp(a, "--udp-counters-64bit")) {
            o->p.counters64 = 1;
            takes = 0;
        }
        if (!takes)
            continue;
        if (!v)
            return bad("option %s needs a value%s", a, "");
        i++;
        if (!strcmp(a, "-p") || !strcmp(a, "--port")) {
            if (parse_u32(v, 1, 65535, &u32, 0))
                return bad("bad port '%s'%s (1 ... 65535)", v, "");
            o->p.port = o->rr.port = (uint16_t)u32;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--time")) {
            uint64_t t;
            if (parse_secs(v, &t) || t == 0 || t > 86400 * BRISK_NSEC_PER_SEC)
                return bad("bad duration '%s'%s (like 10, 10s or 500ms; up to a day)", v, "");
            o->p.duration_ns = o->rr.duration_ns = t;
            t_given = 1;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--bytes")) {
            uint64_t n;
            if (o->mode == M_RR) {
                if (brisk_parse_uint(v, &n) || n == 0)
                    return bad("bad transaction count '%s'%s", v, "");
                o->rr.count = n;
            } else {
                if (brisk_parse_size(v, &n) || n == 0 || n > (UINT64_C(1) << 60))
                    return bad("bad byte count '%s'%s (like 100M, 1G)", v, "");
                o->p.bytes = n;
            }
            n_given = 1;
        } else if (!strcmp(a, "-P") || !strcmp(a, "--parallel")) {
            if (parse_u32(v, 1, PERF_MAX_STREAMS, &u32, 0))
                return bad("bad stream count '%s'%s (1 ... 128)", v, "");
            o->p.parallel = o->rr.parallel = u32;
        } else if (!strcmp(a, "-l") || !strcmp(a, "--length")) {
            if (parse_u32(v, 1, 1u << 24, &u32, 1))
                return bad("bad length '%s'%s (1 ... 16M)", v, "");
            o->p.blksize = u32;
            o->rr.req_size = u32;
            l_given = 1;
            l_arg = v;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--bitrate") || !strcmp(a, "--bandwidth")) {
            /* iperf3's units: bit/s in powers of 1000 ("100M"); 0 = unlimited */
            if (brisk_parse_rate(v, &o->p.rate) || o->p.rate > (UINT64_C(1) << 44))
                return bad("bad bitrate '%s'%s (bit/s like 100M, 1G, 0 = unlimited; up to 17T)", v, "");
            b_given = 1;
        } else if (!strcmp(a, "--resp")) {
            if (parse_u32(v, 1, 1u << 24, &u32, 1))
                return bad("bad response size '%s'%s (1 ... 16M)", v, "");
            o->rr.resp_size = u32;
        } else if (!strcmp(a, "-M") || !strcmp(a, "--set-mss")) {
            if (parse_u32(v, 88, 65495, &u32, 0))
                return bad("bad MSS '%s'%s (88 ... 65495)", v, "");
            o->p.mss = u32;
            tcp_only = 'M';
        } else if (!strcmp(a, "-w") || !strcmp(a, "--window")) {
            if (parse_u32(v, 4096, 1u << 30, &u32, 1))
                return bad("bad window '%s'%s (4K ... 1G)", v, "");
            o->p.window = u32;
        } else if (!strcmp(a, "--tap")) {
            if (strlen(v) == 0 || strlen(v) >= sizeof(o->tap.ifname))
                return bad("bad interface name '%s'%s (1 ... 15 characters)", v, "");
            snprintf(o->tap.ifname, sizeof(o->tap.ifname), "%s", v);
            o->have_tap = 1;
        } else if (!strcmp(a, "--ip")) {
            if (brisk_tap_parse_cidr(v, &o->tap.ip, &o->tap.prefix_len))
                return bad("bad address '%s'%s (like 10.9.0.1/24)", v, "");
            o->have_ip = 1;
        } else if (!strcmp(a, "--ip6")) {
            char host[BRISK_ADDR_STRLEN];
            const char *sl = strchr(v, '/');
            if (!sl || (size_t)(sl - v) >= sizeof(host))
                return bad("bad IPv6 address '%s'%s (like fd00::1/64)", v, "");
            memcpy(host, v, (size_t)(sl - v));
            host[sl - v] = '\0';
            if (brisk_addr_parse(host, &o->ip6) != BRISK_OK || o->ip6.family != BRISK_AF_INET6 ||
                parse_u32(sl + 1, 1, 128, &u32, 0))
                return bad("bad IPv6 address '%s'%s (like fd00::1/64)", v, "");
            o->ip6_prefix = (uint8_t)u32;
        } else if (!strcmp(a, "--gw")) {
            if (brisk_ip_parse(v, &o->tap.gateway))
                return bad("bad gateway '%s'%s", v, "");
        } else if (!strcmp(a, "--mtu")) {
            if (parse_u32(v, 576, 65535, &u32, 0))
                return bad("bad MTU '%s'%s (576 ... 65535)", v, "");
            o->tap.mtu = u32;
        } else if (!strcmp(a, "--txc-delay")) {
            if (brisk_parse_time(v, &o->tap.txc_delay_ns))
                return bad("bad completion delay '%s'%s (like 190us)", v, "");
        } else if (!strcmp(a, "--loss")) {
            double p;
            if (brisk_parse_prob(v, &p))
                return bad("bad loss probability '%s'%s (like 1%% or 0.01)", v, "");
            o->tap.fault.tx_loss = o->tap.fault.rx_loss = p;
        } else if (!strcmp(a, "--wait")) {
            if (parse_secs(v, &o->wait_ns))
                return bad("bad wait time '%s'%s", v, "");
        } else if (!strcmp(a, "-i") || !strcmp(a, "--interval")) {
            /* iperf3's bounds: 0 (off) or 0.1 ... 60 s; every interval is kept for the JSON. */
            if (parse_secs(v, &o->interval_ns) ||
                (o->interval_ns &&
                 (o->interval_ns < 100 * BRISK_NSEC_PER_MSEC || o->interval_ns > 60 * BRISK_NSEC_PER_SEC)))
                return bad("bad interval '%s'%s (0 = no interval reports, or 0.1 ... 60 s: 1, 1s, 500ms)", v,
                           "");
        } else if (!strcmp(a, "--busy-poll")) {
            if (brisk_parse_time(v, &o->busy_poll_ns))
                return bad("bad busy-poll time '%s'%s", v, "");
        } else if (!strcmp(a, "--ctl")) {
            if (!v[0] || strlen(v) >= 108)
                return bad("bad control socket path '%s'%s (1 ... 107 bytes)", v, "");
            o->ctl_path = v;
        } else if (!strcmp(a, "--profile")) {
            if (brisk_settings_apply_profile(&o->settings, v))
                return bad("unknown profile '%s'%s (brisk-lab profiles lists them)", v, "");
        } else if (!strcmp(a, "--set")) {
            int rc = brisk_settings_set(&o->settings, v);
            if (rc == BRISK_ERR_NOENT)
                return bad("unknown setting in '%s'%s (brisk-lab settings lists them)", v, "");
            if (rc)
                return bad("bad setting '%s': %s", v, brisk_strerror(rc));
        } else if (!strcmp(a, "--seed")) {
            uint64_t seed;
            if (brisk_parse_uint(v, &seed))
                return bad("bad seed '%s'%s", v, "");
            o->settings.seed = seed;
            o->tap.fault.seed = seed;
        } else {
            return bad("unknown option '%s' for %s", a, m);
        }
    }
    if (!o->have_tap || !o->have_ip)
        return bad("%s needs --tap NAME and --ip ADDR/PREFIX%s", m, "");
    if (o->mode == M_CLIENT) {
        if (n_given && !t_given)
            o->p.duration_ns = 0; /* like iperf3: -n bounds the test instead of the time */
        if ((b_given || o->p.counters64) && !o->p.udp)
            return bad("%s needs -u (brisk-perf paces UDP streams only)%s",
                       b_given ? "-b" : "--udp-counters-64bit", "");
        if (o->p.udp && tcp_only)
            return bad("-%s is a TCP option; it does not go with -u%s", tcp_only == 'N' ? "N" : "M", "");
        if (o->p.udp && l_given && (o->p.blksize < PERF_UDP_MIN_LEN || o->p.blksize > PERF_UDP_MAX_LEN))
            return bad(
                "bad length '%s' for -u%s (16 ... 65507: the header, up to an IPv4 datagram's payload)",
                l_arg, "");
        if (o->p.udp && !l_given)
            o->p.blksize = 0; /* iperf3's UDP default: the control connection's MSS */
        if (o->p.udp && !b_given)
            o->p.rate = PERF_UDP_DEFAULT_RATE;
    }
    if (o->mode == M_RR) {
        if (n_given && !t_given)
            o->rr.duration_ns = 0;
        if (!l_given)
            o->rr.req_size = 64;
    }
    return 0;
}

static void print_intervals(struct run *run, const struct perf_intervals_view *v);

static void on_server_report(void *ctx, const struct perf_report *r)
{
    struct run *run = ctx;
    print_intervals(run, &r->intervals); /* the last, partial interval closed with the test */
    run->iv_printed = 0;
    run->iv_done = 1;
    run->shown_connected = 0;
    if (run->o->json)
        perf_report_json(stdout, r);
    else
        perf_report_print(stdout, r);
    fflush(stdout);
    if (!r->complete)
        run->exit_code = 1;
}

/* An engine's deadline moved (or it touched the stack from its tick): run the hook again at once. */
static void kick(void *ctx)
{
    struct run *run = ctx;
    if (run->hook >= 0)
        brisk_loop_wake_hook(run->loop, run->hook);
}

static uint64_t fine_clock(void *ctx)
{
    (void)ctx;
    return brisk_loop_clock();
}

/* The engines' CPU clock, read as iperf3 reads it: the process's user and system time from getrusage, over
 * elapsed monotonic time; Unix time for start.timestamp. */
static void cpu_sample(void *ctx, struct perf_cpu_sample *out)
{
    (void)ctx;
    struct rusage ru;
    memset(out, 0, sizeof(*out));
    out->mono_ns = brisk_loop_clock();
    out->unix_s = (uint64_t)time(NULL);
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        out->user_ns =
            (uint64_t)ru.ru_utime.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ru.ru_utime.tv_usec * 1000;
        out->system_ns =
            (uint64_t)ru.ru_stime.tv_sec * BRISK_NSEC_PER_SEC + (uint64_t)ru.ru_stime.tv_usec * 1000;
    }
}

static int start_client(struct run *run, uint64_t now)
{
    struct perf_env env = {.st = run->st, .log = stderr, .seed = brisk_loop_clock() ^ run->o->settings.seed};
    env.kick = kick;
    env.kick_ctx = run;
    env.clock = fine_clock;
    env.interval_ns = run->o->interval_ns;
    env.cpu = cpu_sample;
    int err;
    if (run->o->mode == M_CLIENT)
        run->client = perf_iperf_client_new(&env, &run->o->p, &run->o->server, now, &err);
    else
        run->rr = perf_rr_client_new(&env, &run->o->rr, &run->o->server, now, &err);
    if (!run->client && !run->rr) {
        if (err == BRISK_ERR_AFNOSUPPORT && run->o->p.udp)
            fprintf(stderr, "brisk-perf: cannot start: %s: UDP over %s is off in this stack\n",
                    brisk_strerror(err), run->o->server.family == BRISK_AF_INET6 ? "IPv6 (the ipv6 setting)" : "this family");
        else
            fprintf(stderr, "brisk-perf: cannot start: %s\n", brisk_strerror(err));
        return err;
    }
    run->started = 1;
    return BRISK_OK;
}

/* Prints the intervals closed since the last call: iperf3's interval lines on stdout, or with --json (stdout
 * holds the document) one progress line per interval on stderr. */
static void print_intervals(struct run *run, const struct perf_intervals_view *v)
{
    for (; run->iv_printed < v->n; run->iv_printed++) {
        uint32_t i = run->iv_printed;
        if (!run->o->json) {
            perf_interval_print(stdout, v, i, i == 0);
            continue;
        }
        const struct perf_interval *iv = &v->iv[i];
        const struct perf_interval_stream *st = &v->st[(size_t)i * v->nstreams];
        uint64_t bytes = 0, retr = 0, cwnd = 0, rtt = 0, n = 0;
        for (uint32_t k = 0; k < v->nstreams; k++) {
            bytes += st[k].bytes;
            if (st[k].have_tcp) {
                retr += st[k].retransmits;
                cwnd += st[k].snd_cwnd;
                rtt += st[k].rtt_us;
                n++;
            }
        }
        double secs = (double)(iv->end_ns - iv->start_ns) / 1e9;
        char sender[96] = "";
        if (n) /* a sending side's line also carries iperf3's Retr and Cwnd columns (and the mean RTT) */
            snprintf(sender, sizeof(sender), "  retr %llu  cwnd %llu KB  srtt %llu us",
                     (unsigned long long)retr, (unsigned long long)(cwnd / 1024),
                     (unsigned long long)(rtt / n));
        fprintf(stderr, "brisk-perf: %6.2f-%-6.2f s %8.2f Mbit/s  (%llu bytes)%s\n",
                (double)iv->start_ns / 1e9, (double)iv->end_ns / 1e9,
                secs > 0 ? (double)bytes * 8 / secs / 1e6 : 0.0, (unsigned long long)bytes, sender);
    }
    fflush(run->o->json ? stderr : stdout);
}

/* Text mode, once per test when it runs: iperf3's "connected" lines. */
static void show_connected(struct run *run)
{
    uint64_t bytes;
    int running = run->client ? perf_iperf_client_progress(run->client, &bytes)
                              : perf_iperf_server_progress(run->server, &bytes);
    if (run->o->json || run->shown_connected || !running)
        return;
    struct perf_report *r = malloc(sizeof(*r)); /* large (every stream's brisk_conn_info): once per test */
    if (!r)
        return;
    if (run->client)
        perf_iperf_client_report(run->client, r);
    else
        perf_iperf_server_report(run->server, r);
    perf_report_print_connected(stdout, r);
    fflush(stdout);
    free(r);
    run->shown_connected = 1;
}

/* After every engine tick (interval boundaries are engine deadlines): print what closed. */
static void progress(struct run *run)
{
    struct perf_intervals_view v;
    uint64_t bytes;
    if (run->client || run->server)
        show_connected(run);
    if (run->client) {
        perf_iperf_client_intervals(run->client, &v);
    } else if (run->server) {
        if (run->iv_done) { /* the reported test's intervals stay in the engine until the next test runs */
            if (!perf_iperf_server_progress(run->server, &bytes))
                return;
            run->iv_done = 0;
            run->iv_printed = 0;
        }
        perf_iperf_server_intervals(run->server, &v);
    } else {
        return;
    }
    print_intervals(run, &v);
}

/* --stats: the TAP driver's, the loop's and the stack's counters on stderr (non-zero counters only). */
static void print_stats(brisk_tap *tap, brisk_loop *loop, brisk_stack *st)
{
    struct brisk_tap_stats t;
    struct brisk_loop_stats l;
    struct brisk_counters c;
    brisk_tap_get_stats(tap, &t);
    brisk_loop_get_stats(loop, &l);
    brisk_stack_get_counters(st, &c);
    fprintf(
        stderr,
        "tap: rx %llu frames in %llu batches (%llu GRO'd by the kernel, %llu checksum-valid, %llu errors, "
        "%llu fault drops), tx %llu frames "
        "(%llu GSO, %llu EAGAIN, %llu busy, %llu errors, %llu fault drops), %llu completions\n",
        (unsigned long long)t.rx_frames, (unsigned long long)t.rx_batches,
        (unsigned long long)t.rx_gso_frames, (unsigned long long)t.rx_csum_valid,
        (unsigned long long)t.rx_errors, (unsigned long long)t.rx_fault_drops,
        (unsigned long long)t.tx_frames, (unsigned long long)t.tx_gso_frames, (unsigned long long)t.tx_eagain,
        (unsigned long long)t.tx_busy, (unsigned long long)t.tx_errors, (unsigned long long)t.tx_fault_drops,
        (unsigned long long)t.tx_completions);
    struct brisk_netdev_stats ns;
    brisk_netdev_get_stats(brisk_tap_netdev(tap), &ns);
    fprintf(stderr, "receive coalescing: %llu segments joined from %llu more frames\n",
            (unsigned long long)ns.rx_gro_segs, (unsigned long long)ns.rx_gro_merged);
    fprintf(stderr, "loop: %llu iterations, %llu woken by descriptors, %llu by the timer, %llu polls\n",
            (unsigned long long)l.iterations, (unsigned long long)l.wakeups_fd,
            (unsigned long long)l.wakeups_timer, (unsigned long long)l.polls);
    fprintf(stderr, "stack:");
    for (size_t i = 0; i < brisk_counters_count(); i++) {
        uint64_t v = brisk_counter_value(&c, i);
        if (v)
            fprintf(stderr, " %s=%llu", brisk_counter_name(i), (unsigned long long)v);
    }
    fprintf(stderr, "\n");
}

/* The loop hook: start the client once the next hop resolves, run the engine's timers, stop when done. */
static uint64_t hook(void *ctx, brisk_loop *l, uint64_t now)
{
    struct run *run = ctx;
    if ((run->o->mode == M_CLIENT || run->o->mode == M_RR) && !run->started) {
        /* IPv4: ARP first (the SYN should not be the frame that waits); IPv6's ND queues the SYN. */
        int rc = run->o->server.family == BRISK_AF_INET
                     ? brisk_stack_resolve(run->st, run->o->server.u.v4, now)
                     : BRISK_OK;
        if (rc == BRISK_OK) {
            if (start_client(run, now) < 0) {
                run->exit_code = 1;
                brisk_loop_stop(l);
                return BRISK_TIME_NONE;
            }
        } else if (rc != BRISK_ERR_AGAIN && rc != BRISK_ERR_UNREACH) {
            fprintf(stderr, "brisk-perf: no route to the server: %s\n", brisk_strerror(rc));
            run->exit_code = 1;
            brisk_loop_stop(l);
            return BRISK_TIME_NONE;
        } else if (now >= run->wait_until) {
            fprintf(stderr, "brisk-perf: the server's address did not resolve (ARP) within --wait\n");
            run->exit_code = 1;
            brisk_loop_stop(l);
            return BRISK_TIME_NONE;
        } else {
            return now + 100 * BRISK_NSEC_PER_MSEC; /* ask again: resolution retries on its own */
        }
    }
    uint64_t d = BRISK_TIME_NONE;
    if (run->client) {
        if (now >= perf_iperf_client_deadline(run->client))
            perf_iperf_client_tick(run->client, now);
        if (perf_iperf_client_done(run->client)) {
            brisk_loop_stop(l);
            return BRISK_TIME_NONE;
        }
        d = perf_iperf_client_deadline(run->client);
    } else if (run->rr) {
        if (now >= perf_rr_client_deadline(run->rr))
            perf_rr_client_tick(run->rr, now);
        if (perf_rr_client_done(run->rr)) {
            brisk_loop_stop(l);
            return BRISK_TIME_NONE;
        }
        d = perf_rr_client_deadline(run->rr);
    } else if (run->server) {
        if (now >= perf_iperf_server_deadline(run->server))
            perf_iperf_server_tick(run->server, now);
        if (perf_iperf_server_done(run->server)) {
            brisk_loop_stop(l);
            return BRISK_TIME_NONE;
        }
        d = perf_iperf_server_deadline(run->server);
    }
    progress(run);
    return d;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    struct run run = {.o = &o, .hook = -1};
    int err;
    brisk_stack *st = brisk_stack_new(&o.settings);
    if (!st) {
        fprintf(stderr, "brisk-perf: cannot create the stack (settings out of range or out of memory)\n");
        return 1;
    }
    run.st = st;
    brisk_loop *loop = brisk_loop_new(st, &err);
    if (!loop) {
        fprintf(stderr, "brisk-perf: cannot create the event loop: %s\n", brisk_strerror(err));
        brisk_stack_free(st);
        return 1;
    }
    run.loop = loop;
    char why[160] = "";
    brisk_tap *tap = brisk_tap_open(loop, &o.tap, &err, why, sizeof(why));
    if (!tap) {
        fprintf(stderr, "brisk-perf: cannot open TAP device %s: %s\n", o.tap.ifname,
                why[0] ? why : brisk_strerror(err));
        brisk_loop_free(loop);
        brisk_stack_free(st);
        return 1;
    }
    if (o.ip6.family &&
        (err = brisk_netdev_add_addr(brisk_tap_netdev(tap), &o.ip6, o.ip6_prefix)) != BRISK_OK) {
        fprintf(stderr, "brisk-perf: --ip6: %s\n", brisk_strerror(err));
        brisk_tap_close(tap);
        brisk_loop_free(loop);
        brisk_stack_free(st);
        return 1;
    }
    /* The control socket (tools/introspect/): brisk-ss and brisk-nstat ask it, answered on this thread by
     * the loop between events. Freed (the file removed) before the stack, which its answers read. */
    struct ctl_server *ctl = NULL;
    if (o.ctl_path && !(ctl = ctl_server_new(loop, tap, o.ctl_path, "brisk-perf", why, sizeof(why)))) {
        fprintf(stderr, "brisk-perf: cannot open the control socket: %s\n", why);
        brisk_stack_free(st);
        brisk_tap_close(tap);
        brisk_loop_free(loop);
        return 1;
    }
    brisk_loop_stop_on_signals(loop);
    if (o.busy_poll_ns)
        brisk_loop_set_busy_poll(loop, o.busy_poll_ns);
    uint64_t now = brisk_loop_clock();
    struct perf_env env = {.st = st, .log = stderr, .seed = now, .kick = kick, .kick_ctx = &run};
    env.interval_ns = o.interval_ns;
    env.clock = fine_clock; /* UDP: each datagram's arrival time, for the jitter */
    env.cpu = cpu_sample;
    run.hook = brisk_loop_add_hook(loop, hook, &run);
    /* Servers listen on the TAP's IPv4 address, or with --ip6 on :: (both families, as iperf3 -s). */
    struct brisk_addr bind_addr = brisk_addr_v4(o.tap.ip);
    if (o.ip6.family)
        brisk_addr_parse("::", &bind_addr);
    if (o.mode == M_SERVER) {
        run.server = perf_iperf_server_new(&env, &bind_addr, o.p.port, o.once, &err);
        if (run.server)
            perf_iperf_server_on_report(run.server, on_server_report, &run);
    } else if (o.mode == M_ECHO) {
        run.echo = perf_echo_server_new(&env, &bind_addr, o.rr.port, o.rr.nodelay, &err);
    } else {
        err = BRISK_OK;
        run.wait_until = now + o.wait_ns;
    }
    if (err) {
        fprintf(stderr, "brisk-perf: cannot listen: %s\n", brisk_strerror(err));
        run.exit_code = 1;
    } else {
        char ba[BRISK_ADDR_STRLEN];
        if (o.mode == M_SERVER || o.mode == M_ECHO)
            fprintf(stderr, "brisk-perf: %s listening on %s port %u (%s)\n",
                    o.mode == M_SERVER ? "iperf3 server" : "echo server", brisk_addr_format(&bind_addr, ba),
                    o.p.port, brisk_tap_ifname(tap));
        if (brisk_loop_run(loop, BRISK_TIME_NONE) < 0) {
            fprintf(stderr, "brisk-perf: the event loop failed: %s\n", strerror(errno));
            run.exit_code = 1;
        }
        now = brisk_loop_clock();
        if (run.client) {
            struct perf_report r;
            perf_iperf_client_report(run.client, &r);
            print_intervals(&run, &r.intervals);
            if (o.json)
                perf_report_json(stdout, &r);
            else
                perf_report_print(stdout, &r);
            if (!r.complete)
                run.exit_code = 1;
        } else if (run.rr) {
            struct perf_rr_report r;
            perf_rr_client_report(run.rr, &r);
            if (o.json)
                perf_rr_report_json(stdout, &r);
            else
                perf_rr_report_print(stdout, &r);
            if (!r.complete)
                run.exit_code = 1;
        } else if (run.echo) {
            fprintf(stderr, "brisk-perf: echo server: %u connections, %llu bytes echoed\n",
                    perf_echo_server_connections(run.echo),
                    (unsigned long long)perf_echo_server_bytes(run.echo));
        }
        if (brisk_loop_signal(loop) && (run.client || run.rr) && o.mode != M_SERVER)
            run.exit_code = 1;
    }
    if (o.stats)
        print_stats(tap, loop, st);
    /* Let closing connections send their FIN / IPERF_DONE before the device goes away. */
    if (run.hook >= 0)
        brisk_loop_remove_hook(loop, run.hook);
    brisk_loop_run(loop, brisk_loop_clock() + 100 * BRISK_NSEC_PER_MSEC);
    now = brisk_loop_clock();
    perf_iperf_client_free(run.client, now);
    perf_rr_client_free(run.rr, now);
    perf_iperf_server_free(run.server, now);
    perf_echo_server_free(run.echo, now);
    ctl_server_free(ctl);
    brisk_stack_free(st);
    brisk_tap_close(tap);
    brisk_loop_free(loop);
    return run.exit_code;
}
