/*
 * flow.c — one simulated bulk transfer (flow.h): the world every flow scenario shares.
 */
#include "lab/flow.h"

#include <inttypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/obs.h"
#include "lab/watch.h"

#define A_IP 0x0a000001u
#define B_IP 0x0a000002u

struct brisk_addr lab_addr(int family, uint32_t v4)
{
    if (family != 6)
        return brisk_addr_v4(v4);
    struct brisk_addr a = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8}};
    a.u.v6[7] = (uint8_t)(v4 >> 8); /* X: the subnet (10.0.X.0/24 -> 2001:db8:0:X::/64) */
    a.u.v6[15] = (uint8_t)v4;       /* Y: the interface */
    return a;
}

int lab_nic_family(brisk_sim_port *p, int family, uint32_t v4)
{
    if (family != 6)
        return 0;
    struct brisk_addr a = lab_addr(6, v4);
    int rc = p ? brisk_netdev_add_addr(brisk_sim_port_netdev(p), &a, 64) : BRISK_ERR_INVAL;
    if (rc != BRISK_OK) {
        char text[BRISK_ADDR_STRLEN];
        fprintf(stderr, "brisk-lab: family=6: cannot give a host %s/64 (%s%s)\n", brisk_addr_format(&a, text),
                brisk_strerror(rc), rc == BRISK_ERR_AFNOSUPPORT ? ": the ipv6 setting is off or the MTU is below 1280" : "");
        return 1;
    }
    return 0;
}

char *lab_addr_text(const struct brisk_addr *a, char *buf)
{
    char text[BRISK_ADDR_STRLEN];
    brisk_addr_format(a, text);
    snprintf(buf, BRISK_ADDR_STRLEN + 2, a->family == BRISK_AF_INET6 ? "[%s]" : "%s", text);
    return buf;
}

static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx);
}

static void describe(void *ctx, char *buf, size_t n)
{
    snprintf(buf, n, "%" PRIu64 " bytes delivered", brisk_sim_bulk_received(ctx));
}

static uint64_t bulk_bytes(void *ctx)
{
    return brisk_sim_bulk_received(ctx);
}

static void sample(void *ctx, uint64_t now)
{
    struct lab_timeline *tl = ctx;
    uint64_t bytes = tl->bytes(tl->ctx);
    if (tl->n == tl->cap) {
        size_t cap = tl->cap ? tl->cap * 2 : 256;
        double *t = realloc(tl->t_ms, cap * sizeof(*t));
        if (t)
            tl->t_ms = t;
        double *m = t ? realloc(tl->mbps, cap * sizeof(*m)) : NULL;
        if (m)
            tl->mbps = m;
        double *kb = m ? realloc(tl->kbytes, cap * sizeof(*kb)) : NULL;
        if (kb)
            tl->kbytes = kb;
        if (!t || !m || !kb)
            return; /* keep what we have; stop sampling */
        tl->cap = cap;
    }
    tl->t_ms[tl->n] = (double)now / 1e6;
    tl->kbytes[tl->n] = (double)bytes / 1e3;
    tl->mbps[tl->n++] = (double)(bytes - tl->last_bytes) * 8e3 / (double)tl->every_ns;
    tl->last_bytes = bytes;
    if (!tl->done(tl->ctx))
        brisk_sim_at(tl->w, now + tl->every_ns, sample, tl);
}

int lab_timeline_start(struct lab_timeline *tl, brisk_sim_world *w)
{
    tl->w = w;
    tl->last_bytes = tl->bytes(tl->ctx);
    if (tl->every_ns == 0)
        return 1;
    return brisk_sim_at(w, brisk_sim_now(w) + tl->every_ns, sample, tl) == BRISK_OK ? 0 : 1;
}

void lab_timeline_free(struct lab_timeline *tl)
{
    free(tl->t_ms);
    free(tl->mbps);
    free(tl->kbytes);
    tl->t_ms = tl->mbps = tl->kbytes = NULL;
    tl->n = tl->cap = 0;
}

static brisk_sim_host *host(brisk_sim_world *w, const char *name, const struct brisk_settings *s)
{
    if (!s)
        return brisk_sim_host_add(w, name, NULL);
    struct brisk_settings c = *s;
    c.seed = 0; /* derived from the world's seed */
    return brisk_sim_host_add(w, name, &c);
}

int lab_flow_run(const struct lab_flow *f, const struct brisk_settings *a_set,
                 const struct brisk_settings *b_set, struct lab_flow_result *out)
{
    memset(out, 0, sizeof(*out));
    brisk_sim_world *w = brisk_sim_world_new(f->seed);
    brisk_sim_host *a = w ? host(w, "a", a_set) : NULL, *b = w ? host(w, "b", b_set) : NULL;
    struct brisk_sim_nic_config nc;
    brisk_sim_nic_config_default(&nc);
    nc.dev.ip = A_IP;
    if (f->tx_ring)
        nc.tx_ring = f->tx_ring;
    nc.txc = f->txc;
    if (f->gso_max) {
        nc.dev.caps |= BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM;
        nc.dev.gso_max_size = f->gso_max;
    }
    brisk_sim_port *pa = a ? brisk_sim_nic_add(a, &nc) : NULL;
    brisk_sim_port *pb = b ? brisk_sim_nic_add_ip(b, B_IP, 24, 0) : NULL;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, f->rate_bps, f->rtt_ns / 2);
    lc.ab.impair = lc.ba.impair = f->impair;
    /* Burst loss stands for whole offloaded super-frames lost before segmentation: a direction that carries
     * only ACKs loses single frames at the same rate (an ACK is one frame on any path). */
    if (f->impair.loss_model == BRISK_SIM_LOSS_BURST && f->dir != BRISK_SIM_BULK_BOTH) {
        struct brisk_sim_impair *acks = f->dir == BRISK_SIM_BULK_DOWN ? &lc.ab.impair : &lc.ba.impair;
        acks->loss_model = BRISK_SIM_LOSS_RANDOM;
    }
    struct brisk_sim_bulk_config bc = {.bytes = f->bytes,
                                       .dir = f->dir ? f->dir : BRISK_SIM_BULK_UP,
                                       .write_size = f->write_size,
                                       .port = 5001,
                                       .seed = f->seed,
                                       .server_addr = lab_addr(f->family, B_IP)};
    brisk_sim_bulk *bulk = NULL;
    if (pa && pb && (lab_nic_family(pa, f->family, A_IP) != 0 || lab_nic_family(pb, f->family, B_IP) != 0)) {
        brisk_sim_world_free(w);
        return 1;
    }
    if (!pa || !pb || !brisk_sim_link_connect(w, pa, pb, &lc) ||
        !(bulk = brisk_sim_bulk_start(w, a, b, B_IP, &bc))) {
        fprintf(stderr, "brisk-lab: cannot build the flow's world (check the settings)\n");
        brisk_sim_world_free(w);
        return 1;
    }
    if (f->prepare && f->prepare(f->ctx, w, pa, bulk) != 0) {
        brisk_sim_bulk_free(bulk);
        brisk_sim_world_free(w);
        return 1;
    }
    if (f->timeline) {
        f->timeline->bytes = bulk_bytes;
        f->timeline->done = done;
        f->timeline->ctx = bulk;
        lab_timeline_start(f->timeline, w);
    }
    struct lab_watch wt;
    lab_watch_init(&wt, w, f->what ? f->what : "flow", done, bulk, describe);
    if (f->observe && (out->obs = lab_obs_new(f->observe, w, "")) != NULL) {
        struct lab_obs_flow of = {.client = a, .server = b, .client_port = pa, .server_port = pb,
                                  .server_addr = bc.server_addr, .port = bc.port, .dir = bc.dir, .bulk = bulk};
        if (lab_obs_add(out->obs, 1, &of) != 0) {
            lab_obs_free(out->obs);
            out->obs = NULL;
            brisk_sim_bulk_free(bulk);
            brisk_sim_world_free(w);
            return 1;
        }
        lab_obs_watch(out->obs, &wt);
    }
    out->finished = brisk_sim_run_while(w, lab_watch_done, &wt,
                                        f->limit_ns ? f->limit_ns : 3600ull * BRISK_NSEC_PER_SEC) &&
                    !wt.interrupted;
    lab_watch_end(&wt);
    out->interrupted = wt.interrupted;
    brisk_sim_bulk_result(bulk, &out->bulk);
    const struct brisk_sim_bulk_result *r = &out->bulk;
    out->hash_ok = r->hash_ok;
    out->complete = r->complete;
    out->correct = r->client.bad_at == UINT64_MAX && r->server.bad_at == UINT64_MAX;
    unsigned ndirs = bc.dir == BRISK_SIM_BULK_BOTH ? 2 : 1;
    out->expected = f->bytes * ndirs;
    out->delivered = r->client.received + r->server.received;
    out->elapsed_ns = brisk_sim_now(w);
    if (r->last_byte_at != BRISK_TIME_NONE && r->last_byte_at > r->connected_at)
        out->span_ns = r->last_byte_at - r->connected_at;
    /* What arrived, not what was asked for: an unfinished transfer's rate is that of the bytes it moved. */
    if (out->span_ns)
        out->goodput_bps = (double)out->delivered * 8e9 / (double)out->span_ns / ndirs;
    out->sender = r->client.info;
    brisk_stack_get_counters(brisk_sim_host_stack(a), &out->counters);
    lab_obs_end(out->obs, 1, r);
    lab_obs_finish(out->obs);
    brisk_sim_bulk_free(bulk);
    brisk_sim_world_free(w);
    return 0;
}
