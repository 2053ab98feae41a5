/*
 * spec_run.c — running a scenario file (spec.h): one world per row, every flow in it, one table.
 *
 * Each row builds the same world — host a (10.0.0.1) and host b (10.0.0.2) on one link, host a's NIC as the
 * file says, host b's a default NIC with the same MTU — with the file's link and NIC changed by the row's,
 * and stack settings made as for any scenario's row (defaults, --profile, the row's profile, --set, the
 * row's own `set`). The flows start at their start times (bulk flows on ports 5001 + i, rr on 6001 + i) and
 * the row ends when every flow has finished or failed, or at the file's limit. The figures are measured,
 * never filled in: goodput is the bytes the receivers read over the time from the first connection to the
 * last byte, `complete` says whether every flow finished correctly, and an rr figure of a row without rr
 * flows is left out. Then the expected shape: every bound of `expect` checked against the rows it names.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/obs.h"
#include "lab/spec.h"
#include "lab/watch.h"

#define A_IP 0x0a000001u
#define B_IP 0x0a000002u

/* ---- the world of one row ---- */

static void apply_dir(struct brisk_sim_link_dir *d, const struct spec_link_dir *s)
{
    if (s->has_rate)
        d->rate_bps = s->rate_bps;
    if (s->has_delay)
        d->delay_ns = s->delay_ns;
    if (s->has_queue_packets)
        d->queue_packets = s->queue_packets;
    if (s->has_queue_bytes)
        d->queue_bytes = s->queue_bytes;
    if (s->has_loss) {
        d->impair.loss_model = s->loss > 0 ? BRISK_SIM_LOSS_RANDOM : BRISK_SIM_LOSS_NONE;
        d->impair.loss = s->loss;
    }
    if (s->has_gilbert) {
        d->impair.loss_model = BRISK_SIM_LOSS_GILBERT;
        d->impair.ge_p_good_to_bad = s->ge_p_good_bad;
        d->impair.ge_p_bad_to_good = s->ge_p_bad_good;
        d->impair.ge_loss_good = s->ge_loss_good;
        d->impair.ge_loss_bad = s->ge_loss_bad;
    }
    if (s->has_reorder)
        d->impair.reorder = s->reorder;
    if (s->has_reorder_delay)
        d->impair.reorder_delay_ns = s->reorder_delay_ns;
    if (s->has_duplicate)
        d->impair.duplicate = s->duplicate;
    if (s->has_corrupt)
        d->impair.corrupt = s->corrupt;
}

static void apply_link(struct brisk_sim_link_config *lc, const struct spec_link *l)
{
    apply_dir(&lc->ab, &l->both);
    apply_dir(&lc->ba, &l->both);
    apply_dir(&lc->ab, &l->forward);
    apply_dir(&lc->ba, &l->reverse);
}

static void apply_nic(struct brisk_sim_nic_config *nc, const struct spec_nic *n)
{
    if (n->has_tx_ring)
        nc->tx_ring = n->tx_ring;
    if (n->has_completion)
        nc->txc = n->completion;
    if (n->has_rx_batch)
        nc->rx_batch = n->rx_batch;
    if (n->has_rx_coalesce)
        nc->rx_coalesce_ns = n->rx_coalesce_ns;
    if (n->has_mtu)
        nc->dev.mtu = n->mtu;
    if (n->has_gso) {
        nc->dev.caps &= ~(BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM);
        if (n->gso) {
            nc->dev.caps |= BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM;
            nc->dev.gso_max_size = n->gso;
        }
    }
    if (n->has_bql) {
        nc->dev.caps &= ~BRISK_NETDEV_CAP_BQL;
        if (n->bql)
            nc->dev.caps |= BRISK_NETDEV_CAP_BQL;
    }
}

static void apply_qdisc(struct brisk_sim_qdisc *q, const struct spec_qdisc *c)
{
    if (c->has_kind)
        q->kind = c->q.kind;
    if (c->has_limit_packets)
        q->limit_packets = c->q.limit_packets;
    if (c->has_limit_bytes)
        q->limit_bytes = c->q.limit_bytes;
    if (c->has_flows)
        q->flows = c->q.flows;
    if (c->has_quantum)
        q->quantum = c->q.quantum;
    if (c->has_target)
        q->target_ns = c->q.target_ns;
    if (c->has_interval)
        q->interval_ns = c->q.interval_ns;
}

struct flow_run {
    const struct spec_flow *f;
    brisk_sim_bulk *bulk;
    brisk_sim_rr *rr;
    uint64_t win0, win1; /* bytes received at the window's start and end */
};

/* The fairness window: from the moment every bulk flow has started (its start time) to the moment the first
 * one finishes — the stretch in which all of them compete — sampled from the run's done predicate. */
struct world_run {
    brisk_sim_world *w;
    struct flow_run fl[SPEC_MAX_FLOWS];
    int n;
    uint64_t win_from; /* the last bulk flow's start time */
    int win_state;     /* 0: not begun, 1: running, 2: over */
    uint64_t win_t0, win_t1;
};

static void window_sample(struct world_run *wr, int end)
{
    for (int i = 0; i < wr->n; i++)
        if (wr->fl[i].bulk) {
            uint64_t got = brisk_sim_bulk_received(wr->fl[i].bulk);
            if (end)
                wr->fl[i].win1 = got;
            else
                wr->fl[i].win0 = got;
        }
    if (end)
        wr->win_t1 = brisk_sim_now(wr->w);
    else
        wr->win_t0 = brisk_sim_now(wr->w);
    wr->win_state = end ? 2 : 1;
}

static int all_done(void *ctx)
{
    struct world_run *wr = ctx;
    if (wr->win_state == 0 && brisk_sim_now(wr->w) >= wr->win_from)
        window_sample(wr, 0);
    int done = 1, one_bulk_done = 0;
    for (int i = 0; i < wr->n; i++) {
        if (wr->fl[i].bulk) {
            int d = brisk_sim_bulk_done(wr->fl[i].bulk);
            one_bulk_done |= d;
            done &= d;
        }
        if (wr->fl[i].rr && !brisk_sim_rr_done(wr->fl[i].rr))
            done = 0;
    }
    if (wr->win_state == 1 && one_bulk_done)
        window_sample(wr, 1);
    return done;
}

static void describe(void *ctx, char *buf, size_t n)
{
    const struct world_run *wr = ctx;
    uint64_t got = 0;
    for (int i = 0; i < wr->n; i++)
        if (wr->fl[i].bulk)
            got += brisk_sim_bulk_received(wr->fl[i].bulk);
    snprintf(buf, n, "%" PRIu64 " bytes delivered", got);
}

/* The figures of one row: its total (flow 0) and each flow's. NAN: not measured (no such flow kind). */
#define NFIG SPEC_NFIGURES
struct row_figs {
    double v[SPEC_MAX_FLOWS + 1][NFIG];
    int interrupted;
    char bottleneck[64]; /* the busiest router queue, "r1 -> r2" ("" without routers) */
};

static int fig_index(const char *name)
{
    for (int i = 0; lab_spec_figures[i]; i++)
        if (!strcmp(lab_spec_figures[i], name))
            return i;
    return -1;
}

static void set_fig(struct row_figs *rf, int flow, const char *name, double v)
{
    int i = fig_index(name);
    if (i >= 0)
        rf->v[flow][i] = v;
}

static double get_fig(const struct row_figs *rf, int flow, const char *name)
{
    int i = fig_index(name);
    return i >= 0 ? rf->v[flow][i] : NAN;
}

/* The world of a row: hosts (NULL for routers), the IPv4 address each node has on each link, the links and
 * the routers' ports. */
struct topo {
    brisk_sim_host *host[SPEC_MAX_NODES];
    brisk_sim_router *router[SPEC_MAX_NODES];
    uint32_t host_ip[SPEC_MAX_NODES];
    brisk_sim_port *port[SPEC_MAX_LINKS][2]; /* each link's a and b ends */
    brisk_sim_link *link[SPEC_MAX_LINKS];
    uint64_t rate[SPEC_MAX_LINKS][2];        /* each end's transmit rate */
    int nlinks;
    brisk_sim_port *capture; /* the port --capture records: the first flow's client NIC */
};

/* Link i is the subnet 10.0.(i + 1).0/24: its first node .1, its second .2. */
static uint32_t link_ip(int i, int side)
{
    return 0x0a000000u | (uint32_t)(i + 1) << 8 | (uint32_t)(side + 1);
}

static int build_topology(brisk_sim_world *w, const struct lab_spec *s, const struct spec_row *row,
                          const struct brisk_settings *set, struct topo *t)
{
    for (int i = 0; i < s->nnodes; i++) {
        const struct spec_node *nd = &s->nodes[i];
        if (nd->router) {
            t->router[i] = brisk_sim_router_add(w, nd->name);
        } else {
            struct brisk_settings hs = *set;
            /* The host's own profile and settings over the row's (checked by the parser). */
            if (nd->profile[0] && brisk_settings_apply_profile(&hs, nd->profile) != BRISK_OK)
                return 1;
            for (int k = 0; k < nd->nsets; k++)
                if (brisk_settings_set(&hs, nd->sets[k]) != BRISK_OK)
                    return 1;
            t->host[i] = brisk_sim_host_add(w, nd->name, &hs);
        }
        if (!t->router[i] && !t->host[i])
            return 1;
    }
    t->nlinks = s->ntlinks;
    for (int i = 0; i < s->ntlinks; i++) {
        const struct spec_tlink *l = &s->tlinks[i];
        int ends[2] = {l->a, l->b};
        for (int side = 0; side < 2; side++) {
            int nd = ends[side];
            uint32_t ip = link_ip(i, side);
            if (t->router[nd]) {
                struct brisk_sim_qdisc q = {.kind = BRISK_SIM_QDISC_DROPTAIL};
                /* The router's, this link's end, the row's for every router, the row's for this link. */
                apply_qdisc(&q, &s->nodes[nd].qdisc);
                apply_qdisc(&q, &l->queue);
                apply_qdisc(&q, &row->router);
                for (int j = 0; j < row->nlinks; j++)
                    if (row->links[j].index == i)
                        apply_qdisc(&q, &row->links[j].queue);
                t->port[i][side] = brisk_sim_router_port_add(t->router[nd], ip, 24, &q);
            } else {
                struct brisk_sim_nic_config nc;
                brisk_sim_nic_config_default(&nc);
                apply_nic(&nc, &s->nic);
                apply_nic(&nc, &row->nic);
                nc.dev.ip = ip;
                t->host_ip[nd] = ip;
                t->port[i][side] = brisk_sim_nic_add(t->host[nd], &nc);
                /* A host's default gateway: the router across its link. */
                if (t->port[i][side] && t->router[ends[1 - side]] &&
                    brisk_stack_set_gateway(brisk_sim_host_stack(t->host[nd]), link_ip(i, 1 - side)) != BRISK_OK)
                    return 1;
            }
            if (!t->port[i][side])
                return 1;
        }
        struct brisk_sim_link_config lc;
        brisk_sim_link_config_symmetric(&lc, 1000000000ull, 50 * BRISK_NSEC_PER_USEC);
        apply_link(&lc, &l->link);
        for (int j = 0; j < row->nlinks; j++)
            if (row->links[j].index == i)
                apply_link(&lc, &row->links[j].link);
        t->rate[i][0] = lc.ab.rate_bps;
        t->rate[i][1] = lc.ba.rate_bps;
        t->link[i] = brisk_sim_link_connect(w, t->port[i][0], t->port[i][1], &lc);
        if (!t->link[i])
            return 1;
    }
    /* Routes: each router reaches every link it is not on through the first link of its shortest path. */
    for (int r = 0; r < s->nnodes; r++) {
        if (!t->router[r])
            continue;
        for (int i = 0; i < s->ntlinks; i++) {
            if (s->tlinks[i].a == r || s->tlinks[i].b == r)
                continue;
            int first = lab_spec_first_link(s, r, i);
            if (first < 0)
                continue;
            uint32_t gw = link_ip(first, s->tlinks[first].a == r ? 1 : 0);
            if (brisk_sim_router_route_add(t->router[r], link_ip(i, 0) & 0xffffff00u, 24, gw) != BRISK_OK)
                return 1;
        }
    }
    const struct spec_flow *f0 = &s->flows[0];
    t->capture = t->port[lab_spec_host_link(s, f0->from)][s->tlinks[lab_spec_host_link(s, f0->from)].a == f0->from ? 0 : 1];
    return 0;
}

static int build_pair(brisk_sim_world *w, const struct lab_spec *s, const struct spec_row *row,
                      const struct brisk_settings *set, struct topo *t)
{
    t->host[0] = brisk_sim_host_add(w, "a", set);
    t->host[1] = brisk_sim_host_add(w, "b", set);
    struct brisk_sim_nic_config na, nb;
    brisk_sim_nic_config_default(&na);
    brisk_sim_nic_config_default(&nb);
    apply_nic(&na, &s->nic);
    apply_nic(&na, &row->nic);
    na.dev.ip = A_IP;
    nb.dev.ip = B_IP;
    nb.dev.mtu = na.dev.mtu;
    t->host_ip[0] = A_IP;
    t->host_ip[1] = B_IP;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1000000000ull, 50 * BRISK_NSEC_PER_USEC);
    apply_link(&lc, &s->link);
    apply_link(&lc, &row->link);
    t->nlinks = 1;
    t->rate[0][0] = lc.ab.rate_bps;
    t->rate[0][1] = lc.ba.rate_bps;
    t->port[0][0] = t->host[0] ? brisk_sim_nic_add(t->host[0], &na) : NULL;
    t->port[0][1] = t->host[1] ? brisk_sim_nic_add(t->host[1], &nb) : NULL;
    t->link[0] = t->port[0][0] && t->port[0][1] ? brisk_sim_link_connect(w, t->port[0][0], t->port[0][1], &lc) : NULL;
    t->capture = t->port[0][0];
    return t->link[0] ? 0 : 1;
}

/* Jain's fairness index of n shares: (sum x)^2 / (n sum x^2), 1 when all are equal, 1/n when one has all. */
static double jain(const double *x, int n)
{
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    return sq > 0 ? sum * sum / ((double)n * sq) : NAN;
}

/* The router figures: the busiest queue (where frames waited longest in total) and the drops of all. */
static void router_figs(const struct lab_spec *s, const struct topo *t, struct row_figs *rf, uint64_t *capacity)
{
    struct brisk_sim_qdisc_stats best = {0};
    int have = 0;
    uint64_t codel = 0, overflow = 0;
    for (int i = 0; i < t->nlinks; i++)
        for (int side = 0; side < 2; side++) {
            struct brisk_sim_qdisc_stats q;
            if (brisk_sim_router_port_stats(t->port[i][side], &q) != BRISK_OK)
                continue;
            codel += q.dropped_codel;
            overflow += q.dropped_overflow;
            if (q.dequeued && (!have || q.sojourn_sum_ns > best.sojourn_sum_ns)) {
                best = q;
                have = 1;
                *capacity = t->rate[i][side];
                const struct spec_tlink *l = &s->tlinks[i];
                snprintf(rf->bottleneck, sizeof(rf->bottleneck), "%s -> %s", side ? l->bn : l->an,
                         side ? l->an : l->bn);
            }
        }
    if (!have)
        return;
    set_fig(rf, 0, "queue_max_ns", (double)best.sojourn_max_ns);
    set_fig(rf, 0, "queue_avg_ns", (double)best.sojourn_sum_ns / (double)best.dequeued);
    set_fig(rf, 0, "queue_max_packets", (double)best.max_packets);
    set_fig(rf, 0, "codel_drops", (double)codel);
    set_fig(rf, 0, "overflow_drops", (double)overflow);
}

/* A host's NIC (obs.h observes the sender's). */
static brisk_sim_port *host_port(const struct lab_spec *s, const struct topo *t, int node)
{
    if (!s->topology)
        return t->port[0][node ? 1 : 0];
    int l = lab_spec_host_link(s, node);
    return l < 0 ? NULL : t->port[l][s->tlinks[l].a == node ? 0 : 1];
}

static int run_row(struct lab_run *r, const struct lab_spec *s, const struct spec_row *row, struct row_figs *rf,
                   struct lab_obs **obs)
{
    for (int f = 0; f <= SPEC_MAX_FLOWS; f++)
        for (int k = 0; k < NFIG; k++)
            rf->v[f][k] = NAN;
    rf->bottleneck[0] = 0;
    const char *extra[SPEC_MAX_SETS + 1];
    for (int i = 0; i < row->nsets; i++)
        extra[i] = row->sets[i];
    extra[row->nsets] = NULL;
    struct brisk_settings set;
    if (lab_row_settings(r, row->profile[0] ? row->profile : NULL, extra, &set) != BRISK_OK)
        return 1;
    set.seed = 0; /* from the world's seed */

    brisk_sim_world *w = brisk_sim_world_new(s->seed);
    struct topo *t = calloc(1, sizeof(*t));
    struct world_run wr = {.w = w, .n = 0};
    int rc = !w || !t ? 1 : s->topology ? build_topology(w, s, row, &set, t) : build_pair(w, s, row, &set, t);
    if (rc == 0 && lab_capture(r, t->capture) != 0)
        rc = 1;
    for (int i = 0; rc == 0 && i < s->nflows; i++) {
        const struct spec_flow *f = &s->flows[i];
        struct flow_run *fr = &wr.fl[wr.n++];
        fr->f = f;
        brisk_sim_host *client = t->host[f->from], *server = t->host[f->to];
        if (f->kind == SPEC_BULK) {
            struct brisk_sim_bulk_config bc = {.bytes = f->bytes,
                                               .dir = f->dir,
                                               .write_size = f->write_size,
                                               .port = (uint16_t)(5001 + i),
                                               .seed = s->seed + (uint64_t)i,
                                               .start_at = f->start_ns};
            fr->bulk = brisk_sim_bulk_start(w, client, server, t->host_ip[f->to], &bc);
            rc = fr->bulk ? 0 : 1;
            if (rc == 0 && (*obs || (*obs = lab_obs_new(r, w, row->name)) != NULL)) {
                struct lab_obs_flow of = {client, server, host_port(s, t, f->from), host_port(s, t, f->to),
                                          t->host_ip[f->to], bc.port, f->dir, fr->bulk};
                rc = lab_obs_add(*obs, i + 1, &of);
            }
            if (f->start_ns > wr.win_from)
                wr.win_from = f->start_ns;
        } else {
            struct brisk_sim_rr_config cc = {.flows = f->conns,
                                             .request_size = f->request,
                                             .response_size = f->response,
                                             .transactions = f->transactions,
                                             .port = (uint16_t)(6001 + i),
                                             .nodelay = f->nodelay,
                                             .start_at = f->start_ns};
            fr->rr = brisk_sim_rr_start(w, client, server, t->host_ip[f->to], &cc);
            rc = fr->rr ? 0 : 1;
        }
    }
    if (rc) {
        fprintf(stderr, "brisk-lab %s: row %s: cannot build its world (check the row's settings)\n", s->name,
                row->name);
    } else {
        struct lab_watch wt;
        lab_watch_init(&wt, w, s->name, all_done, &wr, describe);
        lab_obs_watch(*obs, &wt);
        brisk_sim_run_while(w, lab_watch_done, &wt, s->limit_ns);
        lab_watch_end(&wt);
        rf->interrupted = wt.interrupted;
        if (wr.win_state == 1) /* no flow finished: the window is the whole run */
            window_sample(&wr, 1);

        uint64_t first = UINT64_MAX, last = 0, delivered = 0, transactions = 0, capacity = 0;
        int complete = 1, up = 0, down = 0;
        double shares[SPEC_MAX_FLOWS];
        int nshares = 0;
        for (int i = 0; i < wr.n; i++) {
            struct flow_run *fr = &wr.fl[i];
            if (fr->bulk) {
                struct brisk_sim_bulk_result br;
                brisk_sim_bulk_result(fr->bulk, &br);
                lab_obs_end(*obs, i + 1, &br);
                uint64_t got = br.client.received + br.server.received;
                int ok = br.complete && br.client.bad_at == UINT64_MAX && br.server.bad_at == UINT64_MAX;
                set_fig(rf, i + 1, "complete", ok);
                set_fig(rf, i + 1, "delivered_bytes", (double)got);
                if (br.last_byte_at != BRISK_TIME_NONE && br.last_byte_at > br.connected_at) {
                    set_fig(rf, i + 1, "goodput_bps", (double)got * 8e9 / (double)(br.last_byte_at - br.connected_at));
                    first = br.connected_at < first ? br.connected_at : first;
                    last = br.last_byte_at > last ? br.last_byte_at : last;
                }
                if (wr.win_state == 2 && wr.win_t1 > wr.win_t0) {
                    shares[nshares] = (double)(fr->win1 - fr->win0) * 8e9 / (double)(wr.win_t1 - wr.win_t0);
                    set_fig(rf, i + 1, "window_bps", shares[nshares]);
                    nshares++;
                }
                delivered += got;
                complete &= ok;
                up |= fr->f->dir != BRISK_SIM_BULK_DOWN;
                down |= fr->f->dir != BRISK_SIM_BULK_UP;
            } else {
                struct brisk_sim_rr_result rr;
                brisk_sim_rr_result(fr->rr, &rr);
                int ok = rr.errors == 0 && rr.transactions == (uint64_t)fr->f->conns * fr->f->transactions;
                set_fig(rf, i + 1, "complete", ok);
                set_fig(rf, i + 1, "transactions", (double)rr.transactions);
                if (rr.transactions) {
                    set_fig(rf, i + 1, "rr_p50_ns", (double)rr.lat_p50);
                    set_fig(rf, i + 1, "rr_p99_ns", (double)rr.lat_p99);
                    set_fig(rf, 0, "rr_p50_ns", (double)rr.lat_p50); /* the row's: its last rr flow's */
                    set_fig(rf, 0, "rr_p99_ns", (double)rr.lat_p99);
                }
                transactions += rr.transactions;
                complete &= ok;
            }
        }
        uint64_t retrans = 0, rtos = 0, qdrops = 0, lost = 0;
        for (int i = 0; i < SPEC_MAX_NODES; i++) {
            if (!t->host[i])
                continue;
            struct brisk_counters c;
            brisk_stack_get_counters(brisk_sim_host_stack(t->host[i]), &c);
            retrans += c.TcpRetransSegs;
            rtos += c.TCPTimeouts;
        }
        for (int i = 0; i < t->nlinks; i++)
            for (int d = 0; d < 2; d++) {
                struct brisk_sim_link_stats ls;
                brisk_sim_link_stats(t->link[i], d, &ls);
                qdrops += ls.queue_drops;
                lost += ls.lost;
            }
        set_fig(rf, 0, "complete", complete && !wt.interrupted);
        set_fig(rf, 0, "delivered_bytes", (double)delivered);
        if (s->topology) {
            router_figs(s, t, rf, &capacity);
            double cd = get_fig(rf, 0, "codel_drops"), od = get_fig(rf, 0, "overflow_drops");
            if (cd == cd)
                qdrops += (uint64_t)cd + (uint64_t)od; /* every drop at a queue, the routers' included */
            if (!capacity) /* no router carried anything: the slowest link */
                for (int i = 0; i < t->nlinks; i++)
                    for (int d = 0; d < 2; d++)
                        if (!capacity || (t->rate[i][d] && t->rate[i][d] < capacity))
                            capacity = t->rate[i][d];
        } else {
            /* Of what the directions the bulk flows use can carry: a -> b, b -> a, or both. */
            capacity = (up ? t->rate[0][0] : 0) + (down ? t->rate[0][1] : 0);
        }
        if (nshares >= 2) /* of one flow it says nothing */
            set_fig(rf, 0, "fairness", jain(shares, nshares));
        if (last > first) {
            double gp = (double)delivered * 8e9 / (double)(last - first);
            set_fig(rf, 0, "goodput_bps", gp);
            if (capacity)
                set_fig(rf, 0, "goodput_pct", 100.0 * gp / (double)capacity);
        }
        if (transactions)
            set_fig(rf, 0, "transactions", (double)transactions);
        set_fig(rf, 0, "retransmits", (double)retrans);
        set_fig(rf, 0, "rtos", (double)rtos);
        set_fig(rf, 0, "queue_drops", (double)qdrops);
        set_fig(rf, 0, "lost_frames", (double)lost);
        set_fig(rf, 0, "elapsed_ns", (double)brisk_sim_now(w));
    }
    lab_obs_finish(*obs);
    for (int i = 0; i < wr.n; i++) {
        if (wr.fl[i].bulk)
            brisk_sim_bulk_free(wr.fl[i].bulk);
        if (wr.fl[i].rr)
            brisk_sim_rr_free(wr.fl[i].rr);
    }
    brisk_sim_world_free(w);
    free(t);
    return rc;
}

/* ---- the report ---- */

static const struct lab_col cols[] = {
    {"complete", "complete", LAB_COL_BOOL, 0},
    {"goodput_bps", "goodput", LAB_COL_RATE, LAB_HIDE_ZERO},
    {"goodput_pct", "% line", LAB_COL_PCT, LAB_HIDE_ZERO},
    {"delivered_bytes", "delivered", LAB_COL_SIZE, LAB_HIDE_ZERO},
    {"retransmits", "retrans", LAB_COL_U64, 0},
    {"rtos", "RTOs", LAB_COL_U64, 0},
    {"queue_drops", "queue drops", LAB_COL_U64, LAB_HIDE_ZERO},
    {"lost_frames", "lost", LAB_COL_U64, LAB_HIDE_ZERO},
    {"transactions", "transactions", LAB_COL_U64, LAB_HIDE_ZERO},
    {"rr_p50_ns", "rr p50", LAB_COL_TIME, LAB_HIDE_ZERO},
    {"rr_p99_ns", "rr p99", LAB_COL_TIME, LAB_HIDE_ZERO},
    {"elapsed_ns", "virtual time", LAB_COL_TIME, 0},
    /* A topology's table has these too (a two-host file's keeps its columns; `expect` and the per-flow JSON
     * have every figure either way). */
    {"fairness", "fairness", LAB_COL_DOUBLE, LAB_HIDE_ZERO},
    {"queue_avg_ns", "queue avg", LAB_COL_TIME, LAB_HIDE_ZERO},
    {"queue_max_ns", "queue max", LAB_COL_TIME, LAB_HIDE_ZERO},
    {"queue_max_packets", "max pkts", LAB_COL_U64, LAB_HIDE_ZERO},
    {"codel_drops", "codel drops", LAB_COL_U64, LAB_HIDE_ZERO},
    {"overflow_drops", "overflow", LAB_COL_U64, LAB_HIDE_ZERO},
};
#define NCOLS_TOPO ((int)(sizeof(cols) / sizeof(cols[0])))
#define NCOLS_PAIR 12

/* Whether bound e holds for the row's figure; *got gets the figure (NAN: not measured, which fails). */
static int holds(const struct spec_expect *e, const struct row_figs *rf, double *got)
{
    *got = get_fig(rf, (int)e->flow, e->figure);
    if (*got != *got)
        return 0;
    return (!e->has_min || *got >= e->min) && (!e->has_max || *got <= e->max);
}

int lab_spec_run(struct lab_run *r, const struct lab_spec *s)
{
    struct row_figs *figs = calloc((size_t)s->nrows, sizeof(*figs));
    struct lab_obs *obs[SPEC_MAX_ROWS] = {0};
    const char *labels[SPEC_MAX_ROWS];
    if (!figs)
        return 1;
    lab_report_begin(r);
    if (s->summary[0])
        lab_report_note(r, "summary", s->summary);
    struct lab_table t;
    const int ncols = s->topology ? NCOLS_TOPO : NCOLS_PAIR;
    lab_table_init(&t, "rows", "one world per row: every flow of the file (rows)", cols, ncols);
    int rc = 0;
    for (int k = 0; k < s->nrows && rc == 0; k++) {
        const struct spec_row *row = &s->rows[k];
        labels[k] = row->name;
        if (run_row(r, s, row, &figs[k], &obs[k]) != 0) {
            rc = 1;
            break;
        }
        fprintf(stderr, "brisk-lab %s: row %s done\n", s->name, row->name);
        int i = lab_table_row(&t, row->name, row->name);
        const char *extra[SPEC_MAX_SETS + 1];
        for (int a = 0; a < row->nsets; a++)
            extra[a] = row->sets[a];
        extra[row->nsets] = NULL;
        lab_table_how(&t, i, row->profile[0] ? row->profile : "brisk", extra, row->how[0] ? row->how : NULL);
        for (int c = 0; c < ncols; c++) {
            double v = get_fig(&figs[k], 0, cols[c].key);
            lab_table_set(&t, i, cols[c].key, v == v ? v : 0);
        }
        if (figs[k].interrupted)
            break;
    }
    if (rc == 0)
        lab_report_table(r, &t);
    /* Per-flow figures in the JSON (the table shows each row's total). */
    if (rc == 0 && r->json_out) {
        json_object_begin(&r->j, "flows");
        for (int k = 0; k < t.nrows; k++) {
            json_array_begin(&r->j, s->rows[k].name);
            for (int f = 1; f <= s->nflows; f++) {
                json_object_begin(&r->j, NULL);
                json_str(&r->j, "kind", s->flows[f - 1].kind == SPEC_BULK ? "bulk" : "rr");
                for (int i = 0; lab_spec_figures[i]; i++) {
                    double v = figs[k].v[f][i];
                    if (v == v)
                        json_double(&r->j, lab_spec_figures[i], v);
                }
                json_object_end(&r->j);
            }
            json_array_end(&r->j);
        }
        json_object_end(&r->j);
        if (s->topology) { /* which router queue the queue_* figures describe, per row */
            json_object_begin(&r->j, "bottleneck");
            for (int k = 0; k < t.nrows; k++)
                json_str(&r->j, s->rows[k].name, figs[k].bottleneck);
            json_object_end(&r->j);
        }
    }
    if (rc == 0)
        lab_obs_report(r, obs, labels, t.nrows);
    for (int k = 0; k < s->nrows; k++)
        lab_obs_free(obs[k]);
    if (rc == 0 && s->nexpect) {
        char expect[160] = "", head[160] = "";
        size_t el = 0, hl = 0;
        int pass = 1;
        for (int i = 0; i < s->nexpect; i++) {
            const struct spec_expect *e = &s->expect[i];
            double lo = INFINITY, hi = -INFINITY;
            int rows = 0;
            for (int k = 0; k < t.nrows; k++) {
                if (e->row[0] && strcmp(e->row, s->rows[k].name))
                    continue;
                double got;
                int ok = holds(e, &figs[k], &got);
                pass &= ok;
                rows++;
                if (got == got) {
                    lo = got < lo ? got : lo;
                    hi = got > hi ? got : hi;
                }
                if (!ok) {
                    fprintf(stderr, "%s:%d: expected %s; row %s has %s = ", s->path, e->line, e->text,
                            s->rows[k].name, e->figure);
                    if (got == got)
                        fprintf(stderr, "%g\n", got);
                    else
                        fprintf(stderr, "nothing (not measured)\n");
                }
            }
            /* The headline: the figure as measured (over every row a bound names: its range). */
            if (hl < sizeof(head)) {
                if (lo > hi)
                    hl += (size_t)snprintf(head + hl, sizeof(head) - hl, "%s%s not measured", hl ? "; " : "",
                                           e->figure);
                else if (rows == 1 || lo == hi)
                    hl += (size_t)snprintf(head + hl, sizeof(head) - hl, "%s%s %s=%.4g", hl ? "; " : "",
                                           e->row[0] ? e->row : "all rows", e->figure, lo);
                else
                    hl += (size_t)snprintf(head + hl, sizeof(head) - hl, "%s%s %s=%.4g..%.4g", hl ? "; " : "",
                                           e->row[0] ? e->row : "rows", e->figure, lo, hi);
            }
            if (el < sizeof(expect))
                el += (size_t)snprintf(expect + el, sizeof(expect) - el, "%s%s", el ? "; " : "", e->text);
        }
        lab_report_shape(r, pass, expect, "%s", head);
    }
    lab_report_end(r);
    free(figs);
    return rc;
}
