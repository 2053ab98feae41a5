/*
 * brisk-bench — in-process benchmarks. Figures, not tests: they print what this machine did.
 *
 *   brisk-bench sim [--json] [--quick]    simulated packet events per wall second
 *   brisk-bench bulk [--json] [--quick] [--mode no_offload|csum|gro|gso|gso_gro]
 *                                         TCP bulk between two stacks, MTU 1500: no offloads, checksum
 *                                         offload, + GRO, 64 KB GSO, GSO + GRO (bulk.c); --mode runs one
 *                                         of them (profiling)
 *   brisk-bench rr [--json] [--quick]     1-byte request / response, 1 and 256 flows, lazy vs eager timers
 *   brisk-bench rr [--flows N] [--tx N] [--eager]
 *                                         one run of N flows x N transactions (profiling: deterministic work)
 *   brisk-bench memcpy [--json] [--quick] the single-copy limit (memcpy.c)
 *   brisk-bench timers [--json] [--quick] timer wheel arm / cancel / expire at 10^6 armed timers (timers.c)
 *   brisk-bench conns [--json] [--quick]  handshake + close rate, memory per idle connection (conns.c)
 *   ... [--set name=value]...             bulk, rr, conns, sim: brisk settings of both hosts (settings.c)
 *   ... -6                                bulk, rr: over IPv6 (2001:db8::1 -> ::2) instead of IPv4
 *
 * `sim` floods a 10 Gbit/s simulated link with full-size ICMP echo requests from host a to host b (which
 * answers each) for a fixed virtual duration, and divides the simulator's event count by the wall-clock and
 * CPU time the run took. It is the simulator's speed with the real stack on both ends — ARP, IPv4, ICMP,
 * checksums, the packet pool and the timer wheel all run for every frame — so it bounds how fast the lab can
 * go. --quick runs a tenth as long (a CI smoke run).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "brisk/sim.h"
#include "common/json.h"

#define A_IP         BENCH_A_IP
#define B_IP         BENCH_B_IP
#define wall_seconds bench_wall_seconds
#define cpu_seconds  bench_cpu_seconds

struct flood {
    brisk_sim_world *w;
    brisk_sim_host *a;
    uint64_t period; /* virtual ns between bursts */
    uint32_t burst;  /* requests per burst */
    uint64_t until;  /* stop sending at */
    uint64_t seq, errors, replies;
};

static void on_reply(void *ctx, const struct brisk_echo_reply *r, uint64_t now)
{
    (void)r;
    (void)now;
    ((struct flood *)ctx)->replies++;
}

static void burst(void *ctx, uint64_t now)
{
    struct flood *f = ctx;
    brisk_stack *st = brisk_sim_host_stack(f->a);
    for (uint32_t i = 0; i < f->burst; i++)
        if (brisk_icmp_echo_send(st, B_IP, 1, (uint16_t)f->seq++, 1472, now) != BRISK_OK)
            f->errors++;
    brisk_sim_host_kick(f->a);
    if (now + f->period < f->until)
        brisk_sim_at(f->w, now + f->period, burst, f);
}

static int bench_sim(int json, int quick, const char *const *sets)
{
    struct flood f = {.period = 10000, .burst = 8};
    struct brisk_settings s;
    brisk_settings_default(&s);
    bench_settings(&s, sets); /* checked by main */
    f.w = brisk_sim_world_new(1);
    f.a = brisk_sim_host_add(f.w, "a", &s);
    brisk_sim_host *b = brisk_sim_host_add(f.w, "b", &s);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(f.a, A_IP, 24, 0), *pb = brisk_sim_nic_add_ip(b, B_IP, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10000000000ull, 10000);
    if (!f.w || !pa || !pb || !brisk_sim_link_connect(f.w, pa, pb, &lc)) {
        fprintf(stderr, "brisk-bench: cannot build the world\n");
        return 1;
    }
    brisk_icmp_set_echo_handler(brisk_sim_host_stack(f.a), on_reply, &f);
    brisk_stack_resolve(brisk_sim_host_stack(f.a), B_IP, 0);
    brisk_sim_host_kick(f.a);
    brisk_sim_run_until(f.w, BRISK_NSEC_PER_MSEC);

    uint64_t virt = quick ? 20 * BRISK_NSEC_PER_MSEC : 200 * BRISK_NSEC_PER_MSEC;
    uint64_t t0 = brisk_sim_now(f.w);
    f.until = t0 + virt;
    struct brisk_sim_stats s0, s1;
    brisk_sim_world_stats(f.w, &s0);
    brisk_sim_at(f.w, t0, burst, &f);
    fprintf(stderr, "brisk-bench sim: %.0f ms of virtual time at 10 Gbit/s...\n", (double)virt / 1e6);
    double w0 = wall_seconds(), c0 = cpu_seconds();
    brisk_sim_run_until(f.w, f.until + BRISK_NSEC_PER_MSEC);
    double wall = wall_seconds() - w0, cpu = cpu_seconds() - c0;
    brisk_sim_world_stats(f.w, &s1);
    uint64_t events = s1.events - s0.events, frames = s1.frames_delivered - s0.frames_delivered;

    if (json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "sim");
        bench_json_sets(&j, sets);
        json_u64(&j, "virtual_ns", virt);
        json_u64(&j, "events", events);
        json_u64(&j, "frames_delivered", frames);
        json_u64(&j, "echo_replies", f.replies);
        json_u64(&j, "send_errors", f.errors);
        json_double(&j, "wall_s", wall);
        json_double(&j, "cpu_s", cpu);
        json_double(&j, "events_per_wall_s", (double)events / wall);
        json_double(&j, "frames_per_wall_s", (double)frames / wall);
        json_double(&j, "virtual_over_wall", (double)virt / 1e9 / wall);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("sim: %" PRIu64 " events, %" PRIu64 " frames delivered, %" PRIu64
               " echo replies in %.3f s wall "
               "(%.3f s CPU)\n",
               events, frames, f.replies, wall, cpu);
        printf("     %.2f M events/s, %.2f M frames/s, virtual/wall time %.2fx\n",
               (double)events / wall / 1e6, (double)frames / wall / 1e6, (double)virt / 1e9 / wall);
    }
    brisk_sim_world_free(f.w);
    return 0;
}

static int rr_done(void *ctx)
{
    return brisk_sim_rr_done(ctx);
}

/* One rr measurement: `flows` flows of 1-byte request / response over a zero-delay, infinite-rate link,
 * `eager` selecting the 2019 timer discipline. Fills the figures; returns nonzero on failure. */
static int rr_once(uint32_t flows, uint32_t tx, int eager, const char *const *sets, int v6, double *tps_cpu,
                   double *ops_per_tx, double *cpu_s)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.tcp_timer_eager = (uint32_t)eager;
    bench_settings(&s, sets); /* checked by main */
    brisk_sim_world *w = brisk_sim_world_new(1);
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &s), *b = brisk_sim_host_add(w, "b", &s);
    /* NICs with checksum offload, as every NIC (and veth, and loopback) has: the figure is the stacks' cost,
     * not RFC 1071's. */
    brisk_sim_port *pa = brisk_sim_nic_add_ip(a, A_IP, 24, BRISK_NETDEV_CAP_CSUM),
                   *pb = brisk_sim_nic_add_ip(b, B_IP, 24, BRISK_NETDEV_CAP_CSUM);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 0, 0);
    if (!w || !pa || !pb || !brisk_sim_link_connect(w, pa, pb, &lc))
        return 1;
    struct brisk_sim_rr_config rc = {.flows = flows, .transactions = tx, .nodelay = 1};
    if (bench_family(v6, pa, pb, &rc.server_addr) != 0)
        return 1;
    brisk_sim_rr *rr = brisk_sim_rr_start(w, a, b, B_IP, &rc);
    double c0 = cpu_seconds();
    int ok = rr && brisk_sim_run_while(w, rr_done, rr, 3600ull * BRISK_NSEC_PER_SEC);
    double cpu = cpu_seconds() - c0;
    struct brisk_sim_rr_result r;
    brisk_sim_rr_result(rr, &r);
    brisk_sim_rr_free(rr);
    brisk_sim_world_free(w);
    if (!ok || r.errors || r.transactions != (uint64_t)flows * tx)
        return 1;
    *tps_cpu = (double)r.transactions / cpu;
    *ops_per_tx = (double)(r.client_wheel_ops + r.server_wheel_ops) / (double)r.transactions;
    *cpu_s = cpu;
    return 0;
}

/* One rr run as the command line asked (`--flows`, `--tx`, `--eager`): the same work every time, for
 * cachegrind / callgrind / perf. Transactions per flow default to the table's (200,000 in all, 20,000 with
 * --quick). */
static int bench_rr_one(int json, int quick, uint32_t flows, uint32_t tx, int eager, const char *const *sets,
                        int v6)
{
    if (flows == 0)
        flows = 1;
    if (tx == 0) {
        uint32_t total = quick ? 20000u : 200000u;
        tx = total > flows ? total / flows : 1;
    }
    fprintf(stderr, "brisk-bench rr: %u flows x %u transactions, %s timers, %s, one run...\n", flows, tx,
            eager ? "eager" : "lazy", v6 ? "IPv6" : "IPv4");
    double tps, ops, cpu;
    if (rr_once(flows, tx, eager, sets, v6, &tps, &ops, &cpu) != 0) {
        fprintf(stderr, "brisk-bench rr: the run did not complete\n");
        return 1;
    }
    if (json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "rr");
        bench_json_sets(&j, sets);
        json_array_begin(&j, "runs");
        json_object_begin(&j, NULL);
        json_u64(&j, "flows", flows);
        json_str(&j, "timers", eager ? "eager" : "lazy");
        json_u64(&j, "transactions", (uint64_t)flows * tx);
        json_double(&j, "cpu_s", cpu);
        json_double(&j, "transactions_per_cpu_s", tps);
        json_double(&j, "wheel_ops_per_transaction", ops);
        json_object_end(&j);
        json_array_end(&j);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("rr: %3u flows, %-5s timers: %9.0f transactions per CPU-second, %.3f wheel operations per "
               "transaction (both hosts), one run of %" PRIu64 " transactions\n",
               flows, eager ? "eager" : "lazy", tps, ops, (uint64_t)flows * tx);
    }
    return 0;
}

/* Request / response through two stacks (both on this core, with the simulator): transactions per CPU-second
 * and timer-wheel operations per transaction (both hosts together), for 1 and 256 flows, brisk's lazy
 * deadlines beside the eager discipline of seed 004. The CPU time includes handshakes and the simulator. */
static int bench_rr(int json, int quick, const char *const *sets, int v6)
{
    static const uint32_t nflows[] = {1, 256};
    struct json j;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "rr");
        bench_json_sets(&j, sets);
        json_array_begin(&j, "runs");
    }
    for (size_t i = 0; i < 2; i++) {
        uint32_t tx = (quick ? 20000u : 200000u) / nflows[i];
        double tps[2] = {0, 0}, ops[2] = {0, 0}, cpu[2] = {0, 0};
        fprintf(stderr,
                "brisk-bench rr: %u flows x %u transactions, lazy and eager timers, best of 3 each...\n",
                nflows[i], tx);
        /* Interleaved, best of three: the runs share the process (its allocator, its caches), so neither
         * discipline always goes first. */
        for (int rep = 0; rep < 3; rep++) {
            for (int eager = 0; eager < 2; eager++) {
                double t1, o1, c1;
                if (rr_once(nflows[i], tx, eager, sets, v6, &t1, &o1, &c1) != 0) {
                    fprintf(stderr, "brisk-bench rr: the run did not complete\n");
                    return 1;
                }
                if (t1 > tps[eager]) {
                    tps[eager] = t1;
                    ops[eager] = o1;
                    cpu[eager] = c1;
                }
            }
        }
        for (int eager = 0; eager < 2; eager++) {
            if (json) {
                json_object_begin(&j, NULL);
                json_u64(&j, "flows", nflows[i]);
                json_str(&j, "timers", eager ? "eager" : "lazy");
                json_u64(&j, "transactions", (uint64_t)nflows[i] * tx);
                json_double(&j, "cpu_s", cpu[eager]);
                json_double(&j, "transactions_per_cpu_s", tps[eager]);
                json_double(&j, "wheel_ops_per_transaction", ops[eager]);
                json_object_end(&j);
            } else {
                printf("rr: %3u flows, %-5s timers: %9.0f transactions per CPU-second, %.3f wheel operations "
                       "per "
                       "transaction (both hosts)\n",
                       nflows[i], eager ? "eager" : "lazy", tps[eager], ops[eager]);
            }
        }
    }
    if (json) {
        json_array_end(&j);
        json_object_end(&j);
        json_finish(&j);
    }
    return 0;
}

static int usage(FILE *f, int rc)
{
    fprintf(
        f,
        "usage: brisk-bench sim|bulk|rr|memcpy|timers|conns [--json] [--quick]\n"
        "       brisk-bench bulk ... [--mode no_offload|csum|gro|gso|gso_gro] [--ring N]   (one run; NIC TX "
        "ring size)\n"
        "       brisk-bench rr ... [--flows N] [--tx N] [--eager]   (one run: N flows x N transactions "
        "each)\n"
        "       brisk-bench bulk|rr|conns|sim ... [--set name=value]...   (brisk settings of both hosts)\n"
        "       brisk-bench bulk|rr ... -6   (over IPv6)\n");
    return rc;
}

/* Parses the options (a bad one, --set included, is a usage error before anything runs) and runs the
 * benchmark. */
static int run(int argc, char **argv, const char **sets, size_t *nsets)
{
    int json = 0, quick = 0;
    const char *mode = NULL;
    uint32_t ring = 0, flows = 0, tx = 0;
    int eager = 0, rr_one = 0, v6 = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "-6") == 0)
            v6 = 1;
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            mode = argv[++i];
        else if (strcmp(argv[i], "--ring") == 0 && i + 1 < argc) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || v < 1 || v > 65536)
                return fprintf(stderr, "brisk-bench: --ring wants 1 ... 65536 descriptors\n"),
                       usage(stderr, 2);
            ring = (uint32_t)v;
        } else if ((strcmp(argv[i], "--flows") == 0 || strcmp(argv[i], "--tx") == 0) && i + 1 < argc) {
            /* Bounds: the rr application's flow limit, and its per-transaction latency array (8 bytes each,
             * flows x tx of them) kept under 160 MB. */
            int is_flows = argv[i][2] == 'f';
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || argv[i][0] == '-' || argv[i][0] == '\0' || v < 1 ||
                v > (is_flows ? 45000ul : 20000000ul))
                return fprintf(stderr, "brisk-bench: %s wants 1 ... %s\n", is_flows ? "--flows" : "--tx",
                               is_flows ? "45000 flows" : "20000000 transactions per flow"),
                       usage(stderr, 2);
            *(is_flows ? &flows : &tx) = (uint32_t)v;
            rr_one = 1;
        } else if (strcmp(argv[i], "--eager") == 0) {
            eager = rr_one = 1;
        } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            struct brisk_settings probe;
            brisk_settings_default(&probe);
            const char *a = argv[++i];
            int err = brisk_settings_set(&probe, a);
            if (err == BRISK_ERR_NOENT)
                return fprintf(stderr, "brisk-bench: --set %s: not a brisk setting\n", a), usage(stderr, 2);
            if (err != BRISK_OK)
                return fprintf(stderr, "brisk-bench: --set %s: %s (name=value)\n", a, brisk_strerror(err)),
                       usage(stderr, 2);
            sets[(*nsets)++] = a;
        } else
            return fprintf(stderr, "brisk-bench: unknown option '%s'\n", argv[i]), usage(stderr, 2);
    }
    if (rr_one && strcmp(argv[1], "rr") != 0)
        return fprintf(stderr, "brisk-bench: --flows, --tx and --eager apply to rr only\n"), usage(stderr, 2);
    const char *const *set = *nsets ? sets : NULL;
    if (strcmp(argv[1], "sim") == 0)
        return bench_sim(json, quick, set);
    if (strcmp(argv[1], "bulk") == 0)
        return bench_bulk(json, quick, mode, ring, set, v6);
    if (mode || ring)
        return fprintf(stderr, "brisk-bench: --mode and --ring apply to bulk only\n"), usage(stderr, 2);
    if (v6 && strcmp(argv[1], "rr") != 0)
        return fprintf(stderr, "brisk-bench: -6 applies to bulk and rr\n"), usage(stderr, 2);
    if (rr_one && (uint64_t)(flows ? flows : 1) * (tx ? tx : 1) > 20000000u)
        return fprintf(stderr, "brisk-bench: --flows x --tx wants at most 20000000 transactions\n"),
               usage(stderr, 2);
    if (strcmp(argv[1], "rr") == 0)
        return rr_one ? bench_rr_one(json, quick, flows, tx, eager, set, v6) : bench_rr(json, quick, set, v6);
    if (set && (strcmp(argv[1], "memcpy") == 0 || strcmp(argv[1], "timers") == 0))
        return fprintf(stderr, "brisk-bench: --set applies to bulk, rr, conns and sim (they run stacks)\n"),
               usage(stderr, 2);
    if (strcmp(argv[1], "memcpy") == 0)
        return bench_memcpy(json, quick);
    if (strcmp(argv[1], "timers") == 0)
        return bench_timers(json, quick);
    if (strcmp(argv[1], "conns") == 0)
        return bench_conns(json, quick, set);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout, 0);
    fprintf(stderr, "brisk-bench: unknown benchmark '%s'\n", argv[1]);
    return usage(stderr, 2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 2);
    /* Room for every --set assignment (at most one per two arguments). */
    const char **sets = calloc((size_t)argc, sizeof(*sets));
    if (!sets)
        return fprintf(stderr, "brisk-bench: out of memory\n"), 1;
    size_t nsets = 0;
    int rc = run(argc, argv, sets, &nsets);
    free(sets);
    return rc;
}
