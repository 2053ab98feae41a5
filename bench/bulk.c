/*
 * bulk.c — brisk-bench bulk: TCP bulk transfer between two stacks back to back.
 *
 * Link rate 0 (no serialization time) and no delay: what TCP costs per byte with everything else out of the
 * way. Five runs, same bytes: MTU 1500 without offloads (every segment built, checksummed and sent on its
 * own), with checksum offload only, and with the simulated NIC offering GSO and checksum offload
 * (BRISK_NETDEV_CAP_GSO | CSUM): the sender builds up to 64 KB super-segments (TSO, the tcp_tso setting) and
 * the NIC cuts them into MSS frames, so sender-side per-segment work is paid once per 64 KB while the
 * receiver still takes 1500-byte frames. The "+ GRO" runs give both NICs receive polling (rx_batch 64, NAPI
 * style): the frames of a burst reach the stack together and its receive coalescing (src/net/gro.c) joins
 * each flow's in-order frames, so TCP processes — and acknowledges — up to 64 KB at a time while every frame
 * on the wire is still at most 1500 bytes. One thread runs both stacks and the simulator, so the CPU time is
 * the whole system's ("both stacks on one core"). Each run checks that the stream arrived byte-exact.
 *
 * Figures: goodput in Gbit/s of wall time, in Gbit/s per CPU-second, and that as a share of the single-copy
 * limit (memcpy of 1448-byte chunks, memcpy.c).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "brisk/netdev.h"
#include "brisk/sim.h"
#include "common/json.h"

struct bulk_run {
    const char *name, *key;
    uint32_t caps;
    uint32_t rx_batch; /* NIC receive poll budget: 0 = frame by frame, else batches through GRO */
    double wall, cpu;
    uint64_t wire_frames; /* frames on the wire, both directions */
    int v6;               /* -6: over IPv6 */
};

static int bulk_done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

static brisk_sim_port *add_nic(brisk_sim_host *h, uint32_t ip, uint32_t caps, uint32_t ring,
                               uint32_t rx_batch)
{
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.dev.ip = ip;
    nc.dev.prefix_len = 24;
    nc.dev.caps = caps;
    if (ring)
        nc.tx_ring = ring;
    nc.rx_batch = rx_batch;
    return brisk_sim_nic_add(h, &nc);
}

static int bulk_once(struct bulk_run *run, uint64_t bytes, uint32_t ring, const char *const *sets)
{
    struct brisk_settings s;
    brisk_settings_default(&s);
    bench_settings(&s, sets); /* checked by main */
    brisk_sim_world *w = brisk_sim_world_new(1);
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &s), *b = brisk_sim_host_add(w, "b", &s);
    brisk_sim_port *pa = add_nic(a, BENCH_A_IP, run->caps, ring, run->rx_batch);
    brisk_sim_port *pb = add_nic(b, BENCH_B_IP, run->caps, ring, run->rx_batch);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 0, 0);
    if (!w || !pa || !pb || !brisk_sim_link_connect(w, pa, pb, &lc)) {
        fprintf(stderr, "brisk-bench: cannot build the world\n");
        brisk_sim_world_free(w);
        return 1;
    }
    struct brisk_sim_bulk_config bc = {.bytes = bytes, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = 1};
    if (bench_family(run->v6, pa, pb, &bc.server_addr) != 0) {
        fprintf(stderr, "brisk-bench: cannot add the IPv6 addresses\n");
        brisk_sim_world_free(w);
        return 1;
    }
    brisk_sim_bulk *bulk = brisk_sim_bulk_start(w, a, b, BENCH_B_IP, &bc);
    fprintf(stderr, "brisk-bench bulk: %.1f GB through two stacks (MTU 1500, %s%s)...\n", (double)bytes / 1e9,
            run->name, run->v6 ? ", IPv6" : "");
    struct brisk_sim_stats s0, s1;
    brisk_sim_world_stats(w, &s0);
    double w0 = bench_wall_seconds(), c0 = bench_cpu_seconds();
    int ok = bulk && brisk_sim_run_while(w, bulk_done, bulk, 3600ull * BRISK_NSEC_PER_SEC);
    run->wall = bench_wall_seconds() - w0;
    run->cpu = bench_cpu_seconds() - c0;
    brisk_sim_world_stats(w, &s1);
    run->wire_frames = s1.frames_delivered - s0.frames_delivered;
    struct brisk_sim_bulk_result r;
    memset(&r, 0, sizeof(r));
    if (bulk)
        brisk_sim_bulk_result(bulk, &r);
    brisk_sim_bulk_free(bulk);
    brisk_sim_world_free(w);
    if (!ok || !r.hash_ok) {
        fprintf(stderr, "brisk-bench bulk: the transfer (%s) did not complete byte-exact\n", run->name);
        return 1;
    }
    return 0;
}

int bench_bulk(int json, int quick, const char *mode, uint32_t ring, const char *const *sets, int v6)
{
    uint64_t bytes = quick ? 200000000ull : 2000000000ull;
    struct bulk_run runs[] = {
        {.name = "no offload", .key = "no_offload", .caps = 0},
        {.name = "csum offload", .key = "csum", .caps = BRISK_NETDEV_CAP_CSUM},
        {.name = "csum + GRO", .key = "gro", .caps = BRISK_NETDEV_CAP_CSUM, .rx_batch = 64},
        {.name = "64 KB GSO", .key = "gso", .caps = BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM},
        {.name = "GSO + GRO",
         .key = "gso_gro",
         .caps = BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM,
         .rx_batch = 64},
    };
    size_t nruns = sizeof(runs) / sizeof(runs[0]);
    if (mode) { /* one run: move it to the front */
        size_t k = 0;
        while (k < nruns && strcmp(runs[k].key, mode) != 0)
            k++;
        if (k == nruns) {
            fprintf(stderr, "brisk-bench bulk: unknown mode '%s' (no_offload, csum, gro, gso, gso_gro)\n",
                    mode);
            return 2;
        }
        runs[0] = runs[k];
        nruns = 1;
    }
    for (size_t i = 0; i < nruns; i++) {
        runs[i].v6 = v6;
        if (bulk_once(&runs[i], bytes, ring, sets) != 0)
            return 1;
    }
    double memcpy_gbps = bench_memcpy_gbps(quick ? 0.05 : 0.3);
    struct json j;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "bulk");
        bench_json_sets(&j, sets);
        json_u64(&j, "bytes", bytes);
        json_double(&j, "memcpy_1448_gbps", memcpy_gbps);
        json_array_begin(&j, "runs");
    }
    for (size_t i = 0; i < nruns; i++) {
        const struct bulk_run *r = &runs[i];
        double gbps = (double)bytes * 8 / r->wall / 1e9, gbps_cpu = (double)bytes * 8 / r->cpu / 1e9;
        if (json) {
            json_object_begin(&j, NULL);
            json_str(&j, "mode", r->key);
            json_bool(&j, "gso", (r->caps & BRISK_NETDEV_CAP_GSO) != 0);
            json_bool(&j, "csum_offload", (r->caps & BRISK_NETDEV_CAP_CSUM) != 0);
            json_bool(&j, "gro", r->rx_batch != 0);
            json_u64(&j, "mtu", 1500);
            json_double(&j, "wall_s", r->wall);
            json_double(&j, "cpu_s", r->cpu);
            json_double(&j, "gbps", gbps);
            json_double(&j, "gbps_per_cpu_s", gbps_cpu);
            json_double(&j, "share_of_single_copy", gbps_cpu / memcpy_gbps);
            json_u64(&j, "wire_frames", r->wire_frames);
            json_object_end(&j);
        } else {
            printf("bulk: MTU 1500, %-12s: %.2f GB in %.3f s CPU (%.3f s wall): %.2f Gbit/s goodput, %.2f "
                   "Gbit/s "
                   "per CPU-second (both stacks, one core), %.1f %% of the single-copy limit\n",
                   r->name, (double)bytes / 1e9, r->cpu, r->wall, gbps, gbps_cpu,
                   100 * gbps_cpu / memcpy_gbps);
        }
    }
    if (json) {
        json_array_end(&j);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("      memcpy of 1448-byte chunks: %.1f Gbit/s per CPU-second (brisk-bench memcpy)\n",
               memcpy_gbps);
    }
    return 0;
}
