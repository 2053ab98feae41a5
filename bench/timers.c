/*
 * timers.c — brisk-bench timers: the timer wheel (src/core/timer.h) with a million timers armed.
 *
 * A stack with many connections holds one or more armed timers per connection; what matters is that arm,
 * cancel and expire stay O(1) and cheap when the wheel is that full (the wheel's lists then miss the cache,
 * which is the realistic case). The benchmark fills a wheel with 10^6 timers whose expiries are spread
 * uniformly over [1 ms, 1 s) ahead (the span of TCP's retransmission, delayed-ACK and TLP timers), then
 * times, in CPU time:
 *   arm     arming a second set of timers (10^6, or 2 x 10^5 with --quick) on top of the population;
 *   rearm   re-arming each of them for a new expiry (disarm + arm, what a connection does on every ACK under
 *           the eager discipline);
 *   cancel  cancelling each of them: the wheel is back to 10^6;
 *   expire  advancing the wheel in 100 µs steps past the last expiry: every population timer fires (its
 *           callback counts it), including the cascades from coarse levels; the figure is per fired timer.
 * Expiries come from a fixed xorshift generator, so every run does the same operations.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "common/json.h"
#include "core/timer.h"

#define POPULATION 1000000u

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void on_fire(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    (void)now;
    (*(uint64_t *)arg)++;
}

int bench_timers(int json, int quick)
{
    uint32_t nops = quick ? 200000u : 1000000u;
    const uint64_t t0 = BRISK_NSEC_PER_SEC, span_lo = BRISK_NSEC_PER_MSEC, span = BRISK_NSEC_PER_SEC;
    struct brisk_timer_wheel *w = malloc(sizeof(*w));
    struct brisk_timer *pop = calloc(POPULATION, sizeof(*pop)), *ops = calloc(nops, sizeof(*ops));
    uint64_t *when = calloc(nops, sizeof(*when));
    if (!w || !pop || !ops || !when) {
        fprintf(stderr, "brisk-bench timers: out of memory\n");
        free(w), free(pop), free(ops), free(when);
        return 1;
    }
    uint64_t fired = 0, rng = 0x9e3779b97f4a7c15ull;
    brisk_timer_wheel_init(w, t0);
    fprintf(stderr, "brisk-bench timers: %u armed timers, %u operations of each kind...\n", POPULATION, nops);
    for (uint32_t i = 0; i < POPULATION; i++) {
        brisk_timer_init(&pop[i], on_fire, &fired);
        brisk_timer_arm(w, &pop[i], t0 + span_lo + xorshift(&rng) % (span - span_lo));
    }
    for (uint32_t i = 0; i < nops; i++) {
        brisk_timer_init(&ops[i], on_fire, &fired);
        when[i] = t0 + span_lo + xorshift(&rng) % (span - span_lo);
    }
    double c0 = bench_cpu_seconds();
    for (uint32_t i = 0; i < nops; i++)
        brisk_timer_arm(w, &ops[i], when[i]);
    double arm = bench_cpu_seconds() - c0;
    for (uint32_t i = 0; i < nops; i++)
        when[i] = t0 + span_lo + xorshift(&rng) % (span - span_lo);
    c0 = bench_cpu_seconds();
    for (uint32_t i = 0; i < nops; i++)
        brisk_timer_arm(w, &ops[i], when[i]);
    double rearm = bench_cpu_seconds() - c0;
    c0 = bench_cpu_seconds();
    for (uint32_t i = 0; i < nops; i++)
        brisk_timer_cancel(w, &ops[i]);
    double cancel = bench_cpu_seconds() - c0;
    size_t armed = brisk_timer_count(w);
    c0 = bench_cpu_seconds();
    for (uint64_t now = t0; now <= t0 + span + 100000; now += 100000)
        brisk_timer_advance(w, now);
    double expire = bench_cpu_seconds() - c0;
    int ok = armed == POPULATION && fired == POPULATION && brisk_timer_count(w) == 0;
    struct brisk_timer_stats st = w->stats;
    free(w), free(pop), free(ops), free(when);
    if (!ok) {
        fprintf(stderr, "brisk-bench timers: %" PRIu64 " of %u timers fired\n", fired, POPULATION);
        return 1;
    }
    double ns_arm = arm * 1e9 / nops, ns_rearm = rearm * 1e9 / nops, ns_cancel = cancel * 1e9 / nops,
           ns_expire = expire * 1e9 / POPULATION;
    if (json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "timers");
        json_u64(&j, "armed", POPULATION);
        json_u64(&j, "operations", nops);
        json_double(&j, "ns_per_arm", ns_arm);
        json_double(&j, "ns_per_rearm", ns_rearm);
        json_double(&j, "ns_per_cancel", ns_cancel);
        json_double(&j, "ns_per_expire", ns_expire);
        json_u64(&j, "cascades", st.cascades);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf(
            "timers: %u armed: %.1f ns per arm, %.1f ns per re-arm, %.1f ns per cancel, %.1f ns per expire "
            "(%" PRIu64 " cascades)\n",
            POPULATION, ns_arm, ns_rearm, ns_cancel, ns_expire, st.cascades);
    }
    return 0;
}
