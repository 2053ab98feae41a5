/*
 * bench.h — what the brisk-bench benchmarks share: the clocks they read, the addresses of the two simulated
 * hosts, and one entry point per benchmark (one benchmark per file, main.c dispatches).
 *
 * Every benchmark prints figures on stdout (a table line, or one JSON object with --json) and its progress on
 * stderr; --quick shrinks the run to a CI smoke size (well under 5 s). None of them asserts a speed.
 */
#ifndef BRISK_BENCH_H
#define BRISK_BENCH_H

#include <stdint.h>
#include <time.h>

struct brisk_settings;
struct json;

#define BENCH_A_IP 0x0a000001u
#define BENCH_B_IP 0x0a000002u

static inline double bench_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time: every benchmark runs in one thread, so this is the CPU the work itself took. */
static inline double bench_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The single-copy limit: memcpy bandwidth, Gbit/s of CPU time, of 1448-byte chunks (one MSS of payload with
 * timestamps) through a 1 MB working set, copied for at least `seconds` of CPU. */
double bench_memcpy_gbps(double seconds);

/* `--set name=value` (settings.c): applies `sets` (NULL-terminated, may be NULL) to s; BRISK_OK or the first
 * error. */
int bench_settings(struct brisk_settings *s, const char *const *sets);
/* The sets as the JSON array "set" (nothing when there are none). */
void bench_json_sets(struct json *j, const char *const *sets);

int bench_memcpy(int json, int quick);
/* mode: NULL for every run, or the key of one ("no_offload", "csum", "gro", "gso", "gso_gro"). sets: --set.
 */
int bench_bulk(int json, int quick, const char *mode, uint32_t ring, const char *const *sets, int v6);
/* -6: gives the two hosts' ports IPv6 addresses (2001:db8::1 and ::2, beside their IPv4 ones) and the
 * server's into *server, so the run is over IPv6; without it *server is BRISK_AF_UNSPEC (the IPv4 address).
 * 0, or nonzero if an address could not be added. */
struct brisk_sim_port;
struct brisk_addr;
int bench_family(int v6, struct brisk_sim_port *pa, struct brisk_sim_port *pb, struct brisk_addr *server);
int bench_timers(int json, int quick);
int bench_conns(int json, int quick, const char *const *sets);

#endif
