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
 *
 * Before each row the file's ${...} values are computed from the parameters into a copy of the description
 * (world_of), so a row runs exactly the world a C scenario built from the same numbers; a file with a
 * `report:` then computes its columns, values and lines from the rows' figures (expr.h), in that order, and
 * draws its plots — which is how the seed files give the figures their C scenarios gave, byte for byte.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/expr.h"
#include "lab/onoff.h"
#include "lab/pdu.h"
#include "lab/flow.h"
#include "lab/obs.h"
#include "lab/plot.h"
#include "lab/rrplot.h"
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
    if (n->has_csum) {
        /* Checksum offload; without it no TSO either (Linux turns TSO off with tx checksumming). */
        if (n->csum)
            nc->dev.caps |= BRISK_NETDEV_CAP_CSUM;
        else
            nc->dev.caps &= ~(BRISK_NETDEV_CAP_CSUM | BRISK_NETDEV_CAP_GSO);
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
    lab_pdu *pdu;
    lab_onoff *onoff;
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

static int all_done(void *ctx);

/* The bytes every bulk flow's receivers have read (the timeline's count and the progress line). */
static uint64_t bulk_got(void *ctx)
{
    const struct world_run *wr = ctx;
    uint64_t got = 0;
    for (int i = 0; i < wr->n; i++) {
        if (wr->fl[i].bulk)
            got += brisk_sim_bulk_received(wr->fl[i].bulk);
        if (wr->fl[i].pdu)
            got += lab_pdu_delivered(wr->fl[i].pdu);
        if (wr->fl[i].onoff)
            got += lab_onoff_delivered(wr->fl[i].onoff);
    }
    return got;
}

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
        if (wr->fl[i].pdu && !lab_pdu_done(wr->fl[i].pdu))
            done = 0;
        if (wr->fl[i].onoff && !lab_onoff_done(wr->fl[i].onoff))
            done = 0;
    }
    if (wr->win_state == 1 && one_bulk_done)
        window_sample(wr, 1);
    return done;
}

static void describe(void *ctx, char *buf, size_t n)
{
    snprintf(buf, n, "%" PRIu64 " bytes delivered", bulk_got(ctx));
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
    return lab_spec_figure_index(name);
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

/* The world of a row: hosts (NULL for routers), the address each host's flows are addressed to (of the
 * run's family), the links and the routers' ports. */
struct topo {
    brisk_sim_host *host[SPEC_MAX_NODES];
    brisk_sim_router *router[SPEC_MAX_NODES];
    struct brisk_addr host_addr[SPEC_MAX_NODES];
    brisk_sim_port *port[SPEC_MAX_LINKS][2]; /* each link's a and b ends */
    brisk_sim_link *link[SPEC_MAX_LINKS];
    uint64_t rate[SPEC_MAX_LINKS][2];        /* each end's transmit rate */
    int nlinks;
    brisk_sim_port *capture; /* the port --capture records: the first flow's client NIC */
};

/* Link i is the subnet 10.0.(i + 1).0/24: its first node .1, its second .2 (with family 6 also
 * 2001:db8:0:(i + 1)::/64, ::1 and ::2: lab_addr). */
static uint32_t link_ip(int i, int side)
{
    return 0x0a000000u | (uint32_t)(i + 1) << 8 | (uint32_t)(side + 1);
}

static int build_topology(brisk_sim_world *w, const struct lab_spec *s, const struct spec_row *row,
                          const struct brisk_settings *set, int family, struct topo *t)
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
                struct brisk_addr a6 = lab_addr(6, ip);
                if (t->port[i][side] && family == 6 &&
                    brisk_sim_router_port_add_addr6(t->port[i][side], &a6, 64) != BRISK_OK)
                    return 1;
            } else {
                struct brisk_sim_nic_config nc;
                brisk_sim_nic_config_default(&nc);
                apply_nic(&nc, &s->nic);
                apply_nic(&nc, &row->nic);
                nc.dev.ip = ip;
                t->host_addr[nd] = lab_addr(family, ip);
                t->port[i][side] = brisk_sim_nic_add(t->host[nd], &nc);
                if (t->port[i][side] && lab_nic_family(t->port[i][side], family, ip) != 0)
                    return 1;
                /* A host's default gateway: the router across its link (IPv6's too, as a static route). */
                brisk_stack *hst = brisk_sim_host_stack(t->host[nd]);
                struct brisk_addr gw6 = lab_addr(6, link_ip(i, 1 - side));
                if (t->port[i][side] && t->router[ends[1 - side]] &&
                    (brisk_stack_set_gateway(hst, link_ip(i, 1 - side)) != BRISK_OK ||
                     (family == 6 && brisk_stack_set_gateway6(hst, brisk_sim_port_netdev(t->port[i][side]), &gw6) != BRISK_OK)))
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
            struct brisk_addr net6 = lab_addr(6, link_ip(i, 0)), gw6 = lab_addr(6, gw);
            if (family == 6 && brisk_sim_router_route_add6(t->router[r], &net6, 64, &gw6) != BRISK_OK)
                return 1;
        }
    }
    const struct spec_flow *f0 = &s->flows[0];
    t->capture = t->port[lab_spec_host_link(s, f0->from)][s->tlinks[lab_spec_host_link(s, f0->from)].a == f0->from ? 0 : 1];
    return 0;
}

/* Host b's settings (the file's `peer`): the row's, the run's (defaults, --profile, --set) or brisk's
 * defaults alone, then the file's peer_set. NULL: the defaults, the host's seed derived from the world's. */
static const struct brisk_settings *peer_settings(const struct lab_run *r, const struct lab_spec *s,
                                                  const struct brisk_settings *row_set, struct brisk_settings *buf)
{
    if (s->peer == SPEC_PEER_ROW && !s->npeer_sets)
        return row_set;
    if (s->peer == SPEC_PEER_DEFAULTS && !s->npeer_sets)
        return NULL;
    if (s->peer == SPEC_PEER_ROW)
        *buf = *row_set;
    else if (s->peer == SPEC_PEER_RUN)
        *buf = r->settings;
    else
        brisk_settings_default(buf);
    if (s->peer != SPEC_PEER_ROW)
        buf->seed = s->has_stack_seed ? s->stack_seed : 0;
    for (int i = 0; i < s->npeer_sets; i++)
        brisk_settings_set(buf, s->peer_sets[i]); /* checked by the parser, computed by expand_sets */
    return buf;
}

static int build_pair(const struct lab_run *r, brisk_sim_world *w, const struct lab_spec *s,
                      const struct spec_row *row, const struct brisk_settings *set, struct topo *t)
{
    struct brisk_settings pb;
    const struct brisk_settings *hs[2] = {set, set};
    hs[s->peer_host] = peer_settings(r, s, set, &pb);
    /* Made in this order (first: b makes b's host, NIC and link end first, as seed 000's target was): the
     * order decides each host's seed and each NIC's address. */
    int o0 = s->first_b, o1 = !s->first_b;
    t->host[o0] = brisk_sim_host_add(w, o0 ? "b" : "a", hs[o0]);
    t->host[o1] = brisk_sim_host_add(w, o1 ? "b" : "a", hs[o1]);
    struct brisk_sim_nic_config na, nb;
    brisk_sim_nic_config_default(&na);
    brisk_sim_nic_config_default(&nb);
    apply_nic(&na, &s->nic);
    apply_nic(&na, &row->nic);
    na.dev.ip = A_IP;
    nb.dev.ip = B_IP;
    nb.dev.mtu = na.dev.mtu;
    t->host_addr[0] = lab_addr(r->family, A_IP);
    t->host_addr[1] = lab_addr(r->family, B_IP);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 1000000000ull, 50 * BRISK_NSEC_PER_USEC);
    apply_link(&lc, &s->link);
    apply_link(&lc, &row->link);
    t->nlinks = 1;
    t->rate[0][0] = lc.ab.rate_bps;
    t->rate[0][1] = lc.ba.rate_bps;
    const struct brisk_sim_nic_config *nics[2] = {&na, &nb};
    t->port[0][o0] = t->host[o0] ? brisk_sim_nic_add(t->host[o0], nics[o0]) : NULL;
    t->port[0][o1] = t->host[o1] ? brisk_sim_nic_add(t->host[o1], nics[o1]) : NULL;
    /* IPv6 addresses after both NICs: the order of NIC creation (their MACs, the hosts' seeds) is IPv4's. */
    for (int h = 0; h < 2; h++)
        if (t->port[0][h] && lab_nic_family(t->port[0][h], r->family, h ? B_IP : A_IP) != 0)
            return 1;
    if (s->first_b) { /* the link's first end is b: its forward direction is b -> a */
        struct brisk_sim_link_dir d = lc.ab;
        lc.ab = lc.ba;
        lc.ba = d;
    }
    t->link[0] = t->port[0][0] && t->port[0][1] ? brisk_sim_link_connect(w, t->port[0][o0], t->port[0][o1], &lc) : NULL;
    t->capture = t->port[0][s->capture_b];
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

/* The host a flow's client runs on. */
static brisk_sim_host *client_of(const struct lab_spec *s, const struct topo *t, const struct spec_flow *f)
{
    (void)s;
    return t->host[f->from];
}

/* ---- expressions: names resolved against the run (expr.h; the scopes are spec.h's) ---- */

struct eval_ctx {
    const struct lab_run *r;
    const struct lab_spec *s;
    enum spec_scope scope;
    const struct row_figs *figs;          /* every row run so far (nrows) */
    const struct brisk_settings *sets;    /* each row's settings */
    const struct lab_table *t;            /* the table's cells (REPORT scope) */
    int nrows, row;                       /* row: the current row (COLUMN scope) */
    const double *values;                 /* report values computed so far */
    int nvalues;
};

static double setting_of(const struct brisk_settings *set, const char *name, int *ok)
{
    int i = lab_spec_setting_index(name);
    *ok = i >= 0;
    return i >= 0 ? (double)brisk_settings_value(set, (size_t)i) : NAN;
}

static int eval_lookup(void *ctx, const char *name, double *out)
{
    const struct eval_ctx *c = ctx;
    const struct lab_spec *s = c->s;
    int ok;
    if (c->scope == SPEC_SCOPE_REPORT)
        for (int i = 0; i < c->nvalues; i++)
            if (!strcmp(s->report.values[i].name, name))
                return *out = c->values[i], 0;
    if (c->scope == SPEC_SCOPE_COLUMN && fig_index(name) >= 0)
        return *out = get_fig(&c->figs[c->row], 0, name), 0;
    int p = lab_spec_param_index(s, name);
    if (p >= 0) {
        *out = s->params[p].kind == LAB_PROB ? c->r->v[p].p : (double)c->r->v[p].u;
        return 0;
    }
    if (!strcmp(name, "family")) /* the lab's own setting (4 or 6), for models that depend on headers */
        return *out = (double)c->r->family, 0;
    if (c->scope == SPEC_SCOPE_WORLD)
        return -1;
    if (!strncmp(name, "set.", 4)) {
        *out = setting_of(c->scope == SPEC_SCOPE_COLUMN ? &c->sets[c->row] : &c->r->settings, name + 4, &ok);
        return ok ? 0 : -1;
    }
    int row;
    const char *rest = lab_spec_split_row(s, name, &row);
    if (!rest || row >= c->nrows)
        return -1;
    if (!strncmp(rest, "set.", 4)) {
        *out = setting_of(&c->sets[row], rest + 4, &ok);
        return ok ? 0 : -1;
    }
    int col = c->scope == SPEC_SCOPE_REPORT && c->t ? lab_spec_col_index(s, rest) : -1;
    if (col >= 0 && row < c->t->nrows)
        return *out = c->t->rows[row].v[col], 0;
    if (fig_index(rest) < 0)
        return -1;
    *out = get_fig(&c->figs[row], 0, rest);
    return 0;
}

/* Evaluates text in c's scope; on error a message naming the file and line, and nonzero. */
static int eval(const struct eval_ctx *c, int line, const char *text, double *out)
{
    char err[160];
    if (lab_expr_eval(text, eval_lookup, (void *)c, out, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "%s:%d: %s (in '%s')\n", c->s->path, line, err, text);
    return 1;
}

static int format(const struct eval_ctx *c, int line, const char *text, char *out, size_t cap)
{
    char err[160];
    if (lab_expr_format(text, eval_lookup, (void *)c, out, cap, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "%s:%d: %s (in '%s')\n", c->s->path, line, err, text);
    return 1;
}

/* The file with its ${...} values computed from the parameters, and row k's flow changes applied: the world
 * row k runs in (w: a copy of s). Returns 0, or 2 after a message (a value out of its range). */
static int world_of(const struct lab_run *r, const struct lab_spec *s, int k, struct lab_spec *w)
{
    memcpy(w, s, sizeof(*w));
    struct eval_ctx c = {.r = r, .s = s, .scope = SPEC_SCOPE_WORLD};
    for (int i = 0; i < s->nbinds; i++) {
        const struct spec_bind *b = &s->binds[i];
        double v;
        if (eval(&c, b->line, b->expr, &v) != 0)
            return 2;
        char *dst = (char *)w + b->off;
        if (b->width < 0) {
            if (!(v >= 0 && v <= 1)) {
                fprintf(stderr, "%s:%d: %s: ${%s} = %g is not a probability (0 to 1)\n", s->path, b->line, b->path,
                        b->expr, v);
                return 2;
            }
            memcpy(dst, &v, sizeof(v));
            continue;
        }
        double f = floor(v);
        if (!(f >= (double)b->lo && f <= (double)b->hi) || f >= 18446744073709551616.0) {
            fprintf(stderr, "%s:%d: %s: ${%s} = %g is out of range: expected %llu to %llu\n", s->path, b->line,
                    b->path, b->expr, v, (unsigned long long)b->lo, (unsigned long long)b->hi);
            return 2;
        }
        uint64_t u = (uint64_t)f;
        if (b->width == 8) {
            memcpy(dst, &u, sizeof(u));
        } else {
            uint32_t u32 = (uint32_t)u;
            memcpy(dst, &u32, sizeof(u32));
        }
    }
    /* Settings written NAME: ${EXPR} (a row's set, peer_set): the value computed, in the setting's unit. */
    for (int k2 = -1; k2 < w->nrows; k2++) {
        char(*sets)[96] = k2 < 0 ? w->peer_sets : w->rows[k2].sets;
        int n = k2 < 0 ? w->npeer_sets : w->rows[k2].nsets;
        for (int i = 0; i < n; i++) {
            char *eq = strchr(sets[i], '=');
            size_t len = eq ? strlen(eq + 1) : 0;
            if (!eq || len < 4 || eq[1] != '$' || eq[2] != '{' || eq[len] != '}')
                continue;
            char ex[96], name[96];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - sets[i]), sets[i]);
            snprintf(ex, sizeof(ex), "%.*s", (int)len - 3, eq + 3);
            double v;
            int si = lab_spec_setting_index(name);
            if (eval(&c, k2 < 0 ? s->peer_line : w->rows[k2].line, ex, &v) != 0 || si < 0)
                return 2;
            snprintf(eq + 1, sizeof(sets[0]) - (size_t)(eq + 1 - sets[i]), "%.0f%s", floor(v),
                     brisk_settings_desc((size_t)si)->kind == BRISK_VAL_TIME ? "ns" : "");
        }
    }
    /* The row's changes to the flows: the keys it gave (its own ${...} values are computed above). */
    const struct spec_row *row = &w->rows[k];
    for (int i = 0; i < row->nflows; i++) {
        const struct spec_flow *o = &row->flows[i];
        struct spec_flow *f = &w->flows[i];
        unsigned m = o->set_mask;
        if (m & SPEC_FLOW_BYTES)
            f->bytes = o->bytes;
        if (m & SPEC_FLOW_DIR)
            f->dir = o->dir;
        if (m & SPEC_FLOW_WRITE)
            f->write_size = o->write_size;
        if (m & SPEC_FLOW_START)
            f->start_ns = o->start_ns;
        if (m & SPEC_FLOW_CONNS)
            f->conns = o->conns;
        if (m & SPEC_FLOW_TRANSACTIONS)
            f->transactions = o->transactions;
        if (m & SPEC_FLOW_REQUEST)
            f->request = o->request;
        if (m & SPEC_FLOW_RESPONSE)
            f->response = o->response;
        if (m & SPEC_FLOW_NODELAY)
            f->nodelay = o->nodelay;
        if (m & SPEC_FLOW_PORT)
            f->port = o->port;
        if (m & SPEC_FLOW_IOS)
            f->ios = o->ios;
        if (m & SPEC_FLOW_HEADER)
            f->header = o->header;
        if (m & SPEC_FLOW_PAYLOAD)
            f->payload = o->payload;
        if (m & SPEC_FLOW_MORE)
            f->more = o->more;
        if (m & SPEC_FLOW_BURST)
            f->burst = o->burst;
        if (m & SPEC_FLOW_ON)
            f->on_ns = o->on_ns;
        if (m & SPEC_FLOW_OFF)
            f->off_ns = o->off_ns;
        if (m & SPEC_FLOW_CYCLES)
            f->cycles = o->cycles;
    }
    return 0;
}

/* Runs row k of s (its world computed into w); its settings go to *set_out; tl (if any) samples the bytes
 * delivered. Returns 0, 1 (the world could not be built) or 2 (a ${...} value out of range). */
/* The p-th percentile of n sorted values, by nearest rank (0 for none). */
static uint64_t nearest_rank(const uint64_t *sorted, uint32_t n, unsigned p)
{
    if (n == 0)
        return 0;
    uint32_t i = (uint32_t)(((uint64_t)n * p + 99) / 100);
    return sorted[i ? i - 1 : 0];
}

static int run_row(struct lab_run *r, const struct lab_spec *spec, int rowi, struct lab_spec *ws,
                   struct row_figs *rf, struct brisk_settings *set_out, struct lab_timeline *tl, struct spec_cdf *cdf,
                   struct lab_obs **obs, struct lab_rr_plot *rrp)
{
    int brc = world_of(r, spec, rowi, ws);
    if (brc)
        return brc;
    const struct lab_spec *s = ws;
    const struct spec_row *row = &s->rows[rowi];
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
        return 2;
    *set_out = set;
    set.seed = s->has_stack_seed ? s->stack_seed : 0; /* 0: each host's from the world's seed */

    brisk_sim_world *w = brisk_sim_world_new(s->seed);
    struct topo *t = calloc(1, sizeof(*t));
    struct world_run wr = {.w = w, .n = 0};
    int rc = !w || !t ? 1 : s->topology ? build_topology(w, s, row, &set, r->family, t) : build_pair(r, w, s, row, &set, t);
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
                                               .port = f->port ? f->port : (uint16_t)(5001 + i),
                                               .seed = s->seed + (uint64_t)i,
                                               .start_at = f->start_ns,
                                               .server_addr = t->host_addr[f->to]};
            fr->bulk = brisk_sim_bulk_start(w, client, server, 0, &bc);
            rc = fr->bulk ? 0 : 1;
            if (rc == 0 && (*obs || (*obs = lab_obs_new(r, w, row->name)) != NULL)) {
                struct lab_obs_flow of = {client, server, host_port(s, t, f->from), host_port(s, t, f->to),
                                          t->host_addr[f->to], bc.port, f->dir, fr->bulk};
                rc = lab_obs_add(*obs, i + 1, &of);
            }
            if (f->start_ns > wr.win_from)
                wr.win_from = f->start_ns;
        } else if (f->kind == SPEC_PDU) {
            struct lab_pdu_config pc = {.ios = f->ios,
                                        .request = f->request,
                                        .header = f->header,
                                        .payload = f->payload,
                                        .more = f->more,
                                        .port = f->port};
            fr->pdu = lab_pdu_start(client, server, &t->host_addr[f->to], &pc);
            rc = fr->pdu ? 0 : 1;
        } else if (f->kind == SPEC_ONOFF) {
            struct lab_onoff_config oc = {.burst = f->burst,
                                          .on_ns = f->on_ns,
                                          .off_ns = f->off_ns,
                                          .cycles = f->cycles,
                                          .start_ns = f->start_ns,
                                          .port = f->port ? f->port : (uint16_t)(7001 + i)};
            fr->onoff = lab_onoff_start(w, client, server, &t->host_addr[f->to], &oc);
            rc = fr->onoff ? 0 : 1;
        } else {
            struct brisk_sim_rr_config cc = {.flows = f->conns,
                                             .request_size = f->request,
                                             .response_size = f->response,
                                             .transactions = f->transactions,
                                             .port = f->port ? f->port : (uint16_t)(6001 + i),
                                             .nodelay = f->nodelay,
                                             .start_at = f->start_ns,
                                             .server_addr = t->host_addr[f->to]};
            fr->rr = brisk_sim_rr_start(w, client, server, 0, &cc);
            rc = fr->rr ? 0 : 1;
        }
    }
    if (rc) {
        fprintf(stderr, "brisk-lab %s: row %s: cannot build its world (check the row's settings)\n", s->name,
                row->name);
    } else {
        if (tl) {
            tl->every_ns = s->sample_ns;
            tl->bytes = bulk_got;
            tl->done = all_done;
            tl->ctx = &wr;
            lab_timeline_start(tl, w);
        }
        struct lab_watch wt;
        lab_watch_init(&wt, w, s->name, all_done, &wr, describe);
        lab_obs_watch(*obs, &wt);
        brisk_sim_run_while(w, lab_watch_done, &wt, s->limit_ns);
        lab_watch_end(&wt);
        rf->interrupted = wt.interrupted;
        if (wr.win_state == 1) /* no flow finished: the window is the whole run */
            window_sample(&wr, 1);

        uint64_t first = UINT64_MAX, last = 0, delivered = 0, transactions = 0, capacity = 0;
        uint64_t onoff_bytes = 0; /* delivered, but not over the bulk flows' time: not in the row's goodput */
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
                /* The sender's side (the client's connection and stack): a row's, its last bulk flow's. */
                struct brisk_counters cc;
                brisk_stack_get_counters(brisk_sim_host_stack(client_of(s, t, fr->f)), &cc);
                for (int fl = 0; fl <= i + 1; fl += i + 1) {
                    set_fig(rf, fl, "hash_ok", br.hash_ok);
                    set_fig(rf, fl, "transfer_ns",
                            br.last_byte_at != BRISK_TIME_NONE && br.last_byte_at > br.connected_at
                                ? (double)(br.last_byte_at - br.connected_at)
                                : 0);
                    set_fig(rf, fl, "tsq_limit", (double)br.client.info.tsq_limit);
                    set_fig(rf, fl, "tsq_throttles", (double)cc.TSQThrottles);
                    for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
                        char key[40];
                        snprintf(key, sizeof(key), "held_%s_ns", brisk_hold_name(h));
                        set_fig(rf, fl, key, (double)br.client.info.hold_ns[h]);
                    }
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
            } else if (fr->pdu) {
                struct lab_pdu_result pr;
                lab_pdu_result(fr->pdu, wt.interrupted, &pr);
                struct brisk_counters sc;
                brisk_stack_get_counters(brisk_sim_host_stack(t->host[fr->f->to]), &sc);
                uint32_t n = pr.ok ? fr->f->ios : 0;
                for (int fl = 0; fl <= i + 1; fl += i + 1) { /* a row's: its last pdu flow's */
                    set_fig(rf, fl, "io_total_ns", (double)pr.total_ns);
                    set_fig(rf, fl, "io_p50_ns", (double)nearest_rank(pr.lat, n, 50));
                    set_fig(rf, fl, "io_p99_ns", (double)nearest_rank(pr.lat, n, 99));
                    set_fig(rf, fl, "data_segs", (double)sc.TCPOrigDataSent);
                    set_fig(rf, fl, "autocork", (double)sc.TCPAutoCorking);
                    for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
                        char key[40];
                        snprintf(key, sizeof(key), "held_%s_ns", brisk_hold_name(h));
                        set_fig(rf, fl, key, (double)pr.server.hold_ns[h]);
                        snprintf(key, sizeof(key), "holds_%s", brisk_hold_name(h));
                        set_fig(rf, fl, key, (double)pr.server.hold_events[h]);
                    }
                }
                set_fig(rf, i + 1, "complete", pr.ok);
                set_fig(rf, i + 1, "delivered_bytes", (double)pr.delivered);
                delivered += pr.delivered;
                complete &= pr.ok;
                if (cdf) { /* the I/O times' distribution, in us, for a cdf plot */
                    free(cdf->x);
                    free(cdf->y);
                    cdf->x = malloc((n ? n : 1) * sizeof(double));
                    cdf->y = malloc((n ? n : 1) * sizeof(double));
                    cdf->n = cdf->x && cdf->y ? n : 0;
                    for (size_t j = 0; j < cdf->n; j++) {
                        cdf->x[j] = (double)pr.lat[j] / 1e3;
                        cdf->y[j] = (double)(j + 1) / (double)cdf->n;
                    }
                }
            } else if (fr->onoff) {
                struct lab_onoff_result orr;
                lab_onoff_result(fr->onoff, wt.interrupted, &orr);
                set_fig(rf, i + 1, "complete", orr.ok);
                set_fig(rf, i + 1, "delivered_bytes", (double)orr.delivered);
                struct brisk_counters occ;
                brisk_stack_get_counters(brisk_sim_host_stack(t->host[fr->f->from]), &occ);
                for (int fl = 0; fl <= i + 1; fl += i + 1) { /* a row's: its last onoff flow's */
                    /* The sender's: what held its bursts back (cwnd after a restart, pacing, TSQ, autocork). */
                    set_fig(rf, fl, "data_segs", (double)occ.TCPOrigDataSent);
                    set_fig(rf, fl, "autocork", (double)occ.TCPAutoCorking);
                    set_fig(rf, fl, "tsq_throttles", (double)occ.TSQThrottles);
                    for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
                        char key[40];
                        snprintf(key, sizeof(key), "held_%s_ns", brisk_hold_name(h));
                        set_fig(rf, fl, key, (double)orr.client.hold_ns[h]);
                        snprintf(key, sizeof(key), "holds_%s", brisk_hold_name(h));
                        set_fig(rf, fl, key, (double)orr.client.hold_events[h]);
                    }
                    set_fig(rf, fl, "bursts", (double)orr.done);
                    if (!orr.done)
                        continue;
                    set_fig(rf, fl, "burst_first_ns", (double)orr.first_ns);
                    set_fig(rf, fl, "burst_p50_ns", (double)nearest_rank(orr.lat, orr.done, 50));
                    set_fig(rf, fl, "burst_max_ns", (double)orr.lat[orr.done - 1]);
                    set_fig(rf, fl, "burst_cwnd_bytes", (double)orr.cwnd[(orr.done + 1) / 2 - 1]);
                    if (orr.on_ns)
                        set_fig(rf, fl, "on_goodput_bps", (double)orr.delivered * 8e9 / (double)orr.on_ns);
                }
                delivered += orr.delivered;
                onoff_bytes += orr.delivered;
                complete &= orr.ok;
            } else {
                struct brisk_sim_rr_result rr;
                brisk_sim_rr_result(fr->rr, &rr);
                lab_rr_plot_keep(rrp, fr->rr); /* the file's one rr flow (lab_spec_run decides) */
                int ok = rr.errors == 0 && rr.transactions == (uint64_t)fr->f->conns * fr->f->transactions;
                set_fig(rf, i + 1, "complete", ok);
                set_fig(rf, i + 1, "transactions", (double)rr.transactions);
                if (rr.transactions) {
                    set_fig(rf, i + 1, "rr_p50_ns", (double)rr.lat_p50);
                    set_fig(rf, i + 1, "rr_p99_ns", (double)rr.lat_p99);
                    set_fig(rf, 0, "rr_p50_ns", (double)rr.lat_p50); /* the row's: its last rr flow's */
                    set_fig(rf, 0, "rr_p99_ns", (double)rr.lat_p99);
                }
                for (int fl = 0; fl <= i + 1; fl += i + 1) { /* a row's: its last rr flow's */
                    set_fig(rf, fl, "rr_connections", (double)fr->f->conns);
                    set_fig(rf, fl, "rr_max_ns", (double)rr.lat_max);
                    set_fig(rf, fl, "rr_wheel_ops_client", (double)rr.client_wheel_ops);
                    set_fig(rf, fl, "rr_wheel_ops_server", (double)rr.server_wheel_ops);
                    set_fig(rf, fl, "rr_timer_fires", (double)(rr.client_timer_fires + rr.server_timer_fires));
                    set_fig(rf, fl, "rr_probes", (double)rr.tlp_probes);
                    set_fig(rf, fl, "rr_rtos", (double)rr.rtos);
                    set_fig(rf, fl, "rr_errors", (double)rr.errors);
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
            double gp = (double)(delivered - onoff_bytes) * 8e9 / (double)(last - first);
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
        lab_pdu_free(wr.fl[i].pdu, brisk_sim_now(w));
        lab_onoff_free(wr.fl[i].onoff, brisk_sim_now(w));
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
/* A file with onoff flows and no columns of its own: the default table and these (a file without onoff
 * flows keeps its table, JSON and CSV as they were). */
static const struct lab_col onoff_cols[] = {
    {"bursts", "bursts", LAB_COL_U64, 0},
    {"burst_p50_ns", "burst p50", LAB_COL_TIME, 0},
    {"burst_max_ns", "burst max", LAB_COL_TIME, 0},
    {"on_goodput_bps", "goodput on", LAB_COL_RATE, LAB_HIDE_ZERO},
};
#define NCOLS_ONOFF ((int)(sizeof(onoff_cols) / sizeof(onoff_cols[0])))

/* With family 6, the hosts' IPv6 addresses (a line above the table; "addresses" in the JSON). */
static void report_addresses(struct lab_run *r, const struct lab_spec *s)
{
    char text[SPEC_MAX_NODES * (SPEC_NAME + BRISK_ADDR_STRLEN + 3)], a6[BRISK_ADDR_STRLEN];
    size_t n = (size_t)snprintf(text, sizeof(text), "IPv6:");
    for (int i = 0; i < (s->topology ? s->nnodes : 2) && n < sizeof(text); i++) {
        if (s->topology && s->nodes[i].router)
            continue;
        uint32_t v4 = i ? B_IP : A_IP;
        if (s->topology) {
            int l = lab_spec_host_link(s, i);
            if (l < 0)
                continue;
            v4 = link_ip(l, s->tlinks[l].a == i ? 0 : 1);
        }
        struct brisk_addr a = lab_addr(6, v4);
        n += (size_t)snprintf(text + n, sizeof(text) - n, " %s %s", s->topology ? s->nodes[i].name : i ? "b" : "a",
                              brisk_addr_format(&a, a6));
    }
    lab_report_note(r, "addresses", text);
}

/* Whether bound e holds for the row's figure; *got gets the figure (NAN: not measured, which fails). */
static int holds(const struct spec_expect *e, const struct row_figs *rf, double *got)
{
    *got = get_fig(rf, (int)e->flow, e->figure);
    if (*got != *got)
        return 0;
    return (!e->has_min || *got >= e->min) && (!e->has_max || *got <= e->max);
}

/* The expected shape: each bound or check against the rows it names; the headline and the expected text
 * are the file's (report.headline / expected) or the bounds' own. */
static void report_shape(struct lab_run *r, const struct lab_spec *s, const struct row_figs *figs,
                         const struct lab_table *t, const struct eval_ctx *ec)
{
    char expect[160] = "", head[160] = "";
    size_t el = 0, hl = 0;
    int pass = 1;
    for (int i = 0; i < s->nexpect; i++) {
        const struct spec_expect *e = &s->expect[i];
        if (e->check[0]) {
            double v;
            int ok = eval(ec, e->line, e->check, &v) == 0 && v != 0;
            if (!ok)
                fprintf(stderr, "%s:%d: expected %s; it does not hold\n", s->path, e->line, e->check);
            pass &= ok;
            if (el < sizeof(expect))
                el += (size_t)snprintf(expect + el, sizeof(expect) - el, "%s%s", el ? "; " : "", e->text);
            continue;
        }
        double lo = INFINITY, hi = -INFINITY;
        int rows = 0;
        for (int k = 0; k < t->nrows; k++) {
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
                fprintf(stderr, "%s:%d: expected %s; row %s has %s = ", s->path, e->line, e->text, s->rows[k].name,
                        e->figure);
                if (got == got)
                    fprintf(stderr, "%g\n", got);
                else
                    fprintf(stderr, "nothing (not measured)\n");
            }
        }
        /* The headline: the figure as measured (over every row a bound names: its range). */
        if (hl < sizeof(head)) {
            if (lo > hi)
                hl += (size_t)snprintf(head + hl, sizeof(head) - hl, "%s%s not measured", hl ? "; " : "", e->figure);
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
    if (s->report.headline[0] && format(ec, s->report.headline_line, s->report.headline, head, sizeof(head)) != 0)
        pass = 0;
    lab_report_shape(r, pass, s->report.expected[0] ? s->report.expected : expect, "%s", head);
}

/* The file's plots (report.plots): timelines of the rows it names, or series computed from the figures. */
static void report_plots(const struct lab_run *r, const struct lab_spec *s, const struct lab_table *t,
                         const struct lab_timeline *tl, const struct spec_cdf *cdf, const struct eval_ctx *ec)
{
    for (int i = 0; i < s->report.nplots; i++) {
        const struct spec_plot *pl = &s->report.plots[i];
        struct lab_series ser[SPEC_MAX_ROWS];
        double ys[SPEC_MAX_SERIES][SPEC_MAX_POINTS];
        size_t n = 0;
        struct lab_plot_opts o = {.logx = pl->logx, .log2x = pl->log2x, .steps = pl->steps};
        if (pl->timeline || pl->cdf) {
            for (int k = 0; k < t->nrows; k++) {
                if (!lab_spec_rows_row(s, i, k))
                    continue;
                if (pl->cdf)
                    ser[n++] = (struct lab_series){t->rows[k].label, cdf[k].x, cdf[k].y, cdf[k].n};
                else
                    ser[n++] = (struct lab_series){t->rows[k].label, tl[k].t_ms,
                                                   pl->cumulative ? tl[k].kbytes : tl[k].mbps, tl[k].n};
            }
        } else {
            for (int k = 0; k < pl->nseries; k++) {
                const struct spec_series *se = &pl->series[k];
                for (int j = 0; j < se->n; j++)
                    if (eval(ec, pl->line, se->y[j], &ys[k][j]) != 0)
                        return;
                ser[n++] = (struct lab_series){se->name, se->x, ys[k], (size_t)se->n};
            }
        }
        for (int k = 0; k < pl->nrefs; k++) {
            o.refs[k].name = pl->ref_name[k];
            if (eval(ec, pl->line, pl->ref_y[k], &o.refs[k].y) != 0)
                return;
        }
        o.nrefs = pl->nrefs;
        lab_plot_ex(r->plot_dir, pl->name, pl->title, pl->xlabel, pl->ylabel, ser, n, &o);
    }
}

int lab_spec_plots_row(const struct lab_spec *s, int plot, int row)
{
    return s->report.plots[plot].timeline && lab_spec_rows_row(s, plot, row);
}

/* Whether a plot's rows (timeline: or cdf:) include row `row` (no list: every row). */
int lab_spec_rows_row(const struct lab_spec *s, int plot, int row)
{
    const struct spec_plot *pl = &s->report.plots[plot];
    if (!pl->nrows)
        return 1;
    for (int j = 0; j < pl->nrows; j++)
        if (!strcmp(pl->rows[j], s->rows[row].name))
            return 1;
    return 0;
}

int lab_spec_run(struct lab_run *r, const struct lab_spec *s)
{
    const struct spec_report *rp = &s->report;
    /* The file's requirements on its parameters: refused before anything runs. */
    struct eval_ctx wc = {.r = r, .s = s, .scope = SPEC_SCOPE_WORLD};
    for (int i = 0; i < s->nrequire; i++) {
        double v;
        if (eval(&wc, s->require[i].line, s->require[i].check, &v) != 0)
            return 2;
        if (v == 0) {
            char msg[SPEC_TEXT * 2];
            if (format(&wc, s->require[i].line, s->require[i].message, msg, sizeof(msg)) != 0)
                return 2;
            fprintf(stderr, "brisk-lab %s: %s\n", s->name, msg);
            return 2;
        }
    }
    struct row_figs *figs = calloc((size_t)s->nrows, sizeof(*figs));
    struct brisk_settings *sets = calloc((size_t)s->nrows, sizeof(*sets));
    struct lab_timeline *tl = calloc((size_t)s->nrows, sizeof(*tl));
    struct spec_cdf *cdf = calloc((size_t)s->nrows, sizeof(*cdf));
    struct lab_spec *w = malloc(sizeof(*w));
    struct lab_col *rcols = calloc(SPEC_MAX_COLS, sizeof(*rcols));
    struct lab_table *t = calloc(1, sizeof(*t));
    struct lab_obs *obs[SPEC_MAX_ROWS] = {0}; /* per row: its bulk flows' time-sequence graphs, ss lines */
    const char *labels[SPEC_MAX_ROWS];
    /* rr-timers' plots (rrplot.h) for a file with one request / response flow whose table has the wheel
     * operations per transaction, client and server. */
    int rr_flows = 0, ops_cols = 0;
    for (int i = 0; i < s->nflows; i++)
        rr_flows += s->flows[i].kind == SPEC_RR;
    for (int c = 0; c < rp->ncols; c++)
        ops_cols += !strcmp(rp->cols[c].key, "ops_client") || !strcmp(rp->cols[c].key, "ops_server");
    struct lab_rr_plot rrplot = {0};
    struct lab_rr_plot *rrp = r->plot_dir && rr_flows == 1 && ops_cols == 2 ? &rrplot : NULL;
    if (!figs || !sets || !tl || !cdf || !w || !rcols || !t) {
        free(figs), free(sets), free(tl), free(cdf), free(w), free(rcols), free(t);
        return 1;
    }
    lab_report_begin(r);
    if (r->family == 6)
        report_addresses(r, s);
    if (!rp->on && s->summary[0])
        lab_report_note(r, "summary", s->summary);
    if (rp->note[0])
        lab_report_note(r, rp->note_key, rp->note);
    const struct lab_col *tcols = cols;
    int ncols = s->topology ? NCOLS_TOPO : NCOLS_PAIR;
    if (rp->ncols) {
        for (int c = 0; c < rp->ncols; c++)
            rcols[c] = (struct lab_col){rp->cols[c].key, rp->cols[c].head, rp->cols[c].kind, rp->cols[c].hide};
        tcols = rcols;
        ncols = rp->ncols;
    } else {
        int onoff = 0;
        for (int i = 0; i < s->nflows; i++)
            onoff |= s->flows[i].kind == SPEC_ONOFF;
        if (onoff && ncols + NCOLS_ONOFF <= SPEC_MAX_COLS) {
            memcpy(rcols, cols, (size_t)ncols * sizeof(*rcols));
            memcpy(rcols + ncols, onoff_cols, sizeof(onoff_cols));
            tcols = rcols;
            ncols += NCOLS_ONOFF;
        }
    }
    lab_table_init(t, "rows", rp->title[0] ? rp->title : "one world per row: every flow of the file (rows)", tcols,
                   ncols);
    int rc = 0;
    for (int k = 0; k < s->nrows && rc == 0; k++) {
        const struct spec_row *row = &s->rows[k];
        int sampled = 0;
        for (int i = 0; i < rp->nplots && r->plot_dir; i++)
            sampled |= lab_spec_plots_row(s, i, k);
        labels[k] = row->name;
        if ((rc = run_row(r, s, k, w, &figs[k], &sets[k], sampled ? &tl[k] : NULL, &cdf[k], &obs[k], rrp)) != 0)
            break;
        fprintf(stderr, "brisk-lab %s: row %s done\n", s->name, row->name);
        int i = lab_table_row(t, row->name, row->label[0] ? row->label : row->name);
        const char *extra[SPEC_MAX_SETS + 1];
        for (int a = 0; a < row->nsets; a++)
            extra[a] = row->sets[a];
        extra[row->nsets] = NULL;
        char how[SPEC_TEXT * 2];
        if (row->how_fmt[0] && format(&wc, row->line, row->how_fmt, how, sizeof(how)) != 0) {
            rc = 2;
            break;
        }
        lab_table_how(t, i, row->profile[0] ? row->profile : "brisk", extra,
                      row->how_fmt[0] ? how : row->how[0] ? row->how : NULL);
        for (int c = 0; c < ncols && !rp->ncols; c++) {
            double v = get_fig(&figs[k], 0, tcols[c].key);
            lab_table_set(t, i, tcols[c].key, v == v ? v : 0);
        }
        if (figs[k].interrupted)
            break;
    }
    /* The file's columns, once every row has run (a column may compare a row with another). */
    struct eval_ctx ec = {.r = r, .s = s, .scope = SPEC_SCOPE_COLUMN, .figs = figs, .sets = sets, .nrows = t->nrows};
    for (int k = 0; rc == 0 && k < t->nrows && rp->ncols; k++) {
        ec.row = k;
        for (int c = 0; c < rp->ncols && rc == 0; c++) {
            double v = get_fig(&figs[k], 0, rp->cols[c].key);
            if (rp->cols[c].value[0] && eval(&ec, rp->cols[c].line, rp->cols[c].value, &v) != 0)
                rc = 2;
            t->rows[k].v[c] = v == v ? v : 0;
        }
    }
    /* Named values, then the lines above the table. */
    double values[SPEC_MAX_VALUES];
    ec = (struct eval_ctx){.r = r, .s = s, .scope = SPEC_SCOPE_REPORT, .figs = figs, .sets = sets, .t = t,
                           .nrows = t->nrows, .values = values};
    for (int i = 0; rc == 0 && i < rp->nvalues; i++, ec.nvalues++)
        if (eval(&ec, rp->values[i].line, rp->values[i].expr, &values[i]) != 0)
            rc = 2;
    for (int i = 0; rc == 0 && i < rp->nlines; i++) {
        const struct spec_line *l = &rp->lines[i];
        double v;
        if (eval(&ec, l->line, l->value, &v) != 0) {
            rc = 2;
            break;
        }
        if (l->kind == LAB_COL_RATE)
            lab_report_rate(r, l->key, l->label, v);
        else if (l->kind == LAB_COL_TIME)
            lab_report_time(r, l->key, l->label, (uint64_t)v);
        else if (l->kind == LAB_COL_U64 || l->kind == LAB_COL_SIZE)
            lab_report_u64(r, l->key, l->label, (uint64_t)v);
        else
            lab_report_double(r, l->key, l->label, v, NULL);
    }
    if (rc == 0)
        lab_report_table(r, t);
    /* Per-flow figures in the JSON (the table shows each row's total); a file with its own report keeps to it. */
    if (rc == 0 && r->json_out && !rp->on) {
        json_object_begin(&r->j, "flows");
        for (int k = 0; k < t->nrows; k++) {
            json_array_begin(&r->j, s->rows[k].name);
            for (int f = 1; f <= s->nflows; f++) {
                json_object_begin(&r->j, NULL);
                json_str(&r->j, "kind", lab_spec_flow_kind_name(s->flows[f - 1].kind));
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
            for (int k = 0; k < t->nrows; k++)
                json_str(&r->j, s->rows[k].name, figs[k].bottleneck);
            json_object_end(&r->j);
        }
    }
    if (rc == 0)
        lab_obs_report(r, obs, labels, t->nrows, !s->reproduces[0]);
    for (int k = 0; k < s->nrows; k++)
        lab_obs_free(obs[k]);
    if (rc == 0 && s->nexpect)
        report_shape(r, s, figs, t, &ec);
    lab_report_end(r);
    if (rc == 0 && r->plot_dir)
        report_plots(r, s, t, tl, cdf, &ec);
    if (rc == 0 && rrp)
        lab_rr_plot_draw(rrp, r, t);
    lab_rr_plot_free(&rrplot);
    for (int k = 0; k < s->nrows; k++) {
        lab_timeline_free(&tl[k]);
        free(cdf[k].x);
        free(cdf[k].y);
    }
    free(figs), free(sets), free(tl), free(cdf), free(w), free(rcols), free(t);
    return rc;
}
