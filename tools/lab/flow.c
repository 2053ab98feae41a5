/*
 * flow.c — one simulated bulk flow (flow.h): the world the comparison scenarios share.
 */
#include "lab/flow.h"

#include <stdio.h>
#include <string.h>

static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

int lab_flow_run(const struct lab_flow *f, const struct brisk_settings *s, struct lab_flow_result *out)
{
    memset(out, 0, sizeof(*out));
    brisk_sim_world *w = brisk_sim_world_new(f->seed);
    struct brisk_settings ss = *s;
    ss.seed = 0;
    brisk_sim_host *a = brisk_sim_host_add(w, "a", &ss), *b = brisk_sim_host_add(w, "b", NULL);
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.dev.ip = 0x0a000001u;
    nc.tx_ring = f->tx_ring;
    nc.txc = f->txc;
    brisk_sim_port *pa = brisk_sim_nic_add(a, &nc), *pb = brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, f->rate_bps, f->rtt_ns / 2);
    struct brisk_sim_bulk_config bc = {
        .bytes = f->bytes, .dir = BRISK_SIM_BULK_UP, .port = 5001, .seed = f->seed};
    brisk_sim_bulk *bulk = NULL;
    if (!w || !pa || !pb || !brisk_sim_link_connect(w, pa, pb, &lc) ||
        !(bulk = brisk_sim_bulk_start(w, a, b, 0x0a000002u, &bc))) {
        fprintf(stderr, "brisk-lab: cannot build the flow's world\n");
        brisk_sim_world_free(w);
        return 1;
    }
    brisk_sim_run_while(w, done, bulk, 3600ull * BRISK_NSEC_PER_SEC);
    struct brisk_sim_bulk_result r;
    brisk_sim_bulk_result(bulk, &r);
    out->hash_ok = r.hash_ok;
    if (r.last_byte_at != BRISK_TIME_NONE && r.last_byte_at > r.connected_at)
        out->goodput_bps = (double)f->bytes * 8e9 / (double)(r.last_byte_at - r.connected_at);
    out->elapsed_ns = brisk_sim_now(w);
    out->sender = r.client.info;
    brisk_stack_get_counters(brisk_sim_host_stack(a), &out->counters);
    brisk_sim_bulk_free(bulk);
    brisk_sim_world_free(w);
    return 0;
}
