/*
 * brisk-bench — in-process benchmarks. Figures, not tests: they print what this machine did.
 *
 *   brisk-bench sim [--json] [--quick]    simulated packet events per wall second
 *
 * `sim` floods a 10 Gbit/s simulated link with full-size ICMP echo requests from host a to host b (which
 * answers each) for a fixed virtual duration, and divides the simulator's event count by the wall-clock and
 * CPU time the run took. It is the simulator's speed with the real stack on both ends — ARP, IPv4, ICMP,
 * checksums, the packet pool and the timer wheel all run for every frame — so it bounds how fast the lab can
 * go. --quick runs a tenth as long (a CI smoke run).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "brisk/sim.h"
#include "common/json.h"

#define A_IP 0x0a000001u
#define B_IP 0x0a000002u

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct flood {
    brisk_sim_world *w;
    brisk_sim_host *a;
    uint64_t period;    /* virtual ns between bursts */
    uint32_t burst;     /* requests per burst */
    uint64_t until;     /* stop sending at */
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

static int bench_sim(int json, int quick)
{
    struct flood f = {.period = 10000, .burst = 8};
    f.w = brisk_sim_world_new(1);
    f.a = brisk_sim_host_add(f.w, "a", NULL);
    brisk_sim_host *b = brisk_sim_host_add(f.w, "b", NULL);
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
        printf("sim: %" PRIu64 " events, %" PRIu64 " frames delivered, %" PRIu64 " echo replies in %.3f s wall "
               "(%.3f s CPU)\n",
               events, frames, f.replies, wall, cpu);
        printf("     %.2f M events/s, %.2f M frames/s, virtual/wall time %.2fx\n", (double)events / wall / 1e6,
               (double)frames / wall / 1e6, (double)virt / 1e9 / wall);
    }
    brisk_sim_world_free(f.w);
    return 0;
}

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: brisk-bench sim [--json] [--quick]\n");
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 2);
    int json = 0, quick = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else
            return fprintf(stderr, "brisk-bench: unknown option '%s'\n", argv[i]), usage(stderr, 2);
    }
    if (strcmp(argv[1], "sim") == 0)
        return bench_sim(json, quick);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout, 0);
    fprintf(stderr, "brisk-bench: unknown benchmark '%s'\n", argv[1]);
    return usage(stderr, 2);
}
