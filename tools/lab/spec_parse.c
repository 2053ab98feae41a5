/*
 * spec_parse.c — reading a scenario file (spec.h) with libyaml, and checking every key and value.
 *
 * The whole document is loaded (yaml_parser_load) and walked with the schema below; each node keeps its
 * line, so every message names the file, the line and the key path ("link.forward.rate") and says what was
 * expected: an unknown key lists the keys allowed there, a bad value the syntax of its kind (the same units
 * as --set: 64K, 1G, 100us, 1%). The first problem ends the load (exit 2): a file either describes a whole
 * experiment or is refused.
 */
#include "lab/spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct parser {
    const char *path;
    yaml_document_t *doc;
    FILE *err; /* where messages go; NULL: nowhere (the fuzz target) */
};

static int perr(const struct parser *p, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(const struct parser *p, const yaml_node_t *n, const char *fmt, ...)
{
    if (!p->err)
        return 2;
    fprintf(p->err, "%s:%zu: ", p->path, n ? n->start_mark.line + 1 : 1);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->err, fmt, ap);
    va_end(ap);
    fputc('\n', p->err);
    return 2;
}

static yaml_node_t *node(const struct parser *p, int id)
{
    return yaml_document_get_node(p->doc, id);
}

/* The scalar text of n (NUL-terminated by libyaml), or NULL after a message. */
static const char *scalar(const struct parser *p, const yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE) {
        perr(p, n, "%s: expected a single value, not a %s", key,
             n->type == YAML_MAPPING_NODE ? "mapping" : "list");
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

static int need_mapping(const struct parser *p, const yaml_node_t *n, const char *key)
{
    if (n->type == YAML_MAPPING_NODE)
        return 0;
    return perr(p, n, "%s: expected a mapping (key: value lines)", key);
}

static int need_list(const struct parser *p, const yaml_node_t *n, const char *key)
{
    if (n->type == YAML_SEQUENCE_NODE)
        return 0;
    return perr(p, n, "%s: expected a list (lines beginning with '- ')", key);
}

/* Typed values, in --set's syntax. Each returns 0 or 2 after a message naming the key. */
enum kind { K_UINT, K_SIZE, K_TIME, K_RATE, K_PROB, K_BOOL };

static const char *kind_text(enum kind k)
{
    switch (k) {
    case K_UINT: return "a whole number";
    case K_SIZE: return "a size like 1500, 64K, 4M";
    case K_TIME: return "a time like 100us, 10ms, 1s";
    case K_RATE: return "a rate like 1G, 100M (bit/s)";
    case K_PROB: return "a probability like 0.01 or 1%";
    case K_BOOL: return "on or off";
    }
    return "a value";
}

static int value(const struct parser *p, const yaml_node_t *n, const char *key, enum kind k, uint64_t *u,
                 double *d)
{
    const char *t = scalar(p, n, key);
    if (!t)
        return 2;
    int rc = BRISK_ERR_INVAL, b = 0;
    switch (k) {
    case K_UINT: rc = brisk_parse_uint(t, u); break;
    case K_SIZE: rc = brisk_parse_size(t, u); break;
    case K_TIME: rc = brisk_parse_time(t, u); break;
    case K_RATE: rc = brisk_parse_rate(t, u); break;
    case K_PROB: rc = brisk_parse_prob(t, d); break;
    case K_BOOL:
        rc = brisk_parse_bool(t, &b);
        *u = (uint64_t)b;
        break;
    }
    if (rc != BRISK_OK)
        return perr(p, n, "%s: '%s' is not %s", key, t, kind_text(k));
    return 0;
}

static int u32_value(const struct parser *p, const yaml_node_t *n, const char *key, enum kind k, uint64_t lo,
                     uint64_t hi, uint32_t *out)
{
    uint64_t v = 0;
    double unused;
    if (value(p, n, key, k, &v, &unused))
        return 2;
    if (v < lo || v > hi)
        return perr(p, n, "%s: %llu is out of range: expected %llu to %llu", key, (unsigned long long)v,
                    (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint32_t)v;
    return 0;
}

static int text_value(const struct parser *p, const yaml_node_t *n, const char *key, char *out, size_t cap)
{
    const char *t = scalar(p, n, key);
    if (!t)
        return 2;
    if (strlen(t) >= cap || !*t)
        return perr(p, n, "%s: expected a text of 1 to %zu characters", key, cap - 1);
    snprintf(out, cap, "%s", t);
    return 0;
}

/* Calls fn for each key: value pair of mapping n; fn returns 0, 2 (error printed) or -1 (unknown key: the
 * message lists `allowed`). */
typedef int (*pair_fn)(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx);

static int each_pair(const struct parser *p, const yaml_node_t *n, const char *path, const char *allowed,
                     pair_fn fn, void *ctx)
{
    if (need_mapping(p, n, path))
        return 2;
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = node(p, pr->key), *v = node(p, pr->value);
        const char *name = scalar(p, k, path);
        if (!name)
            return 2;
        char full[128];
        snprintf(full, sizeof(full), "%s%s%s", path, *path ? "." : "", name);
        int rc = fn(p, name, v, full, ctx);
        if (rc < 0)
            return perr(p, k, "unknown key '%s' (expected one of: %s)", full, allowed);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- link ---- */

static int gilbert_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_link_dir *d = ctx;
    uint64_t u;
    if (!strcmp(k, "p_good_bad"))
        return value(p, v, path, K_PROB, &u, &d->ge_p_good_bad);
    if (!strcmp(k, "p_bad_good"))
        return value(p, v, path, K_PROB, &u, &d->ge_p_bad_good);
    if (!strcmp(k, "loss_good"))
        return value(p, v, path, K_PROB, &u, &d->ge_loss_good);
    if (!strcmp(k, "loss_bad"))
        return value(p, v, path, K_PROB, &u, &d->ge_loss_bad);
    return -1;
}

#define DIR_KEYS                                                                                             \
    "rate, delay, queue_packets, queue_bytes, loss, gilbert, reorder, reorder_delay, duplicate, corrupt"

static int dir_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_link_dir *d = ctx;
    uint64_t u = 0;
    double unused;
    int rc;
    if (!strcmp(k, "rate")) {
        if ((rc = value(p, v, path, K_RATE, &d->rate_bps, &unused)))
            return rc;
        if (d->rate_bps == 0)
            return perr(p, v, "%s: the rate must be above 0", path);
        d->has_rate = 1;
        return 0;
    }
    if (!strcmp(k, "delay"))
        return d->has_delay = 1, value(p, v, path, K_TIME, &d->delay_ns, &unused);
    if (!strcmp(k, "queue_packets"))
        return d->has_queue_packets = 1, u32_value(p, v, path, K_UINT, 1, 1u << 24, &d->queue_packets);
    if (!strcmp(k, "queue_bytes"))
        return d->has_queue_bytes = 1, value(p, v, path, K_SIZE, &d->queue_bytes, &unused);
    if (!strcmp(k, "loss"))
        return d->has_loss = 1, value(p, v, path, K_PROB, &u, &d->loss);
    if (!strcmp(k, "gilbert")) {
        d->has_gilbert = 1;
        return each_pair(p, v, path, "p_good_bad, p_bad_good, loss_good, loss_bad", gilbert_pair, d);
    }
    if (!strcmp(k, "reorder"))
        return d->has_reorder = 1, value(p, v, path, K_PROB, &u, &d->reorder);
    if (!strcmp(k, "reorder_delay"))
        return d->has_reorder_delay = 1, value(p, v, path, K_TIME, &d->reorder_delay_ns, &unused);
    if (!strcmp(k, "duplicate"))
        return d->has_duplicate = 1, value(p, v, path, K_PROB, &u, &d->duplicate);
    if (!strcmp(k, "corrupt"))
        return d->has_corrupt = 1, value(p, v, path, K_PROB, &u, &d->corrupt);
    return -1;
}

static int link_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_link *l = ctx;
    if (!strcmp(k, "forward"))
        return each_pair(p, v, path, DIR_KEYS, dir_pair, &l->forward);
    if (!strcmp(k, "reverse"))
        return each_pair(p, v, path, DIR_KEYS, dir_pair, &l->reverse);
    return dir_pair(p, k, v, path, &l->both);
}

/* ---- NIC ---- */

static int nic_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_nic *n = ctx;
    uint64_t u = 0;
    double unused;
    if (!strcmp(k, "tx_ring"))
        return n->has_tx_ring = 1, u32_value(p, v, path, K_UINT, 1, 1u << 20, &n->tx_ring);
    if (!strcmp(k, "gso"))
        return n->has_gso = 1, u32_value(p, v, path, K_SIZE, 0, 65535, &n->gso);
    if (!strcmp(k, "rx_batch"))
        return n->has_rx_batch = 1, u32_value(p, v, path, K_UINT, 0, 256, &n->rx_batch);
    if (!strcmp(k, "rx_coalesce"))
        return n->has_rx_coalesce = 1, value(p, v, path, K_TIME, &n->rx_coalesce_ns, &unused);
    if (!strcmp(k, "mtu"))
        return n->has_mtu = 1, u32_value(p, v, path, K_UINT, 576, 9000, &n->mtu);
    if (!strcmp(k, "bql")) {
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        n->has_bql = 1;
        n->bql = u != 0;
        return rc;
    }
    if (!strcmp(k, "completion")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        if (brisk_sim_txc_parse(t, &n->completion) != BRISK_OK)
            return perr(p, v, "%s: '%s' is not a completion model: immediate, delay 190us, coalesce 16 10ms",
                        path, t);
        n->has_completion = 1;
        return 0;
    }
    return -1;
}

#define NIC_KEYS "tx_ring, completion, gso, bql, rx_batch, rx_coalesce, mtu"

/* ---- flows ---- */

/* A node's name: letters, digits, '-' and '_', so it reads well in a report and in a key path. */
static int name_value(const struct parser *p, const yaml_node_t *n, const char *key, char *out)
{
    if (text_value(p, n, key, out, SPEC_NAME))
        return 2;
    for (const char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_'))
            return perr(p, n, "%s: '%s' is not a name (letters, digits, '-' and '_')", key, out);
    return 0;
}

/* from / to: which hosts a flow joins (resolved when the whole file is read). 1 = not one of them. */
static int endpoint_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path,
                         struct spec_flow *f)
{
    if (!strcmp(k, "from"))
        return name_value(p, v, path, f->from_name);
    if (!strcmp(k, "to"))
        return name_value(p, v, path, f->to_name);
    return 1;
}

static int bulk_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    double unused;
    int ep = endpoint_pair(p, k, v, path, f);
    if (ep != 1)
        return ep;
    if (!strcmp(k, "bytes")) {
        int rc = value(p, v, path, K_SIZE, &f->bytes, &unused);
        if (!rc && f->bytes == 0)
            return perr(p, v, "%s: a transfer needs at least one byte", path);
        return rc;
    }
    if (!strcmp(k, "write"))
        return u32_value(p, v, path, K_SIZE, 1, 1u << 30, &f->write_size);
    if (!strcmp(k, "start"))
        return value(p, v, path, K_TIME, &f->start_ns, &unused);
    if (!strcmp(k, "dir")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        if (!strcmp(t, "up"))
            f->dir = BRISK_SIM_BULK_UP;
        else if (!strcmp(t, "down"))
            f->dir = BRISK_SIM_BULK_DOWN;
        else if (!strcmp(t, "both"))
            f->dir = BRISK_SIM_BULK_BOTH;
        else
            return perr(p, v, "%s: '%s' is not a direction: up (from sends), down (to sends) or both", path, t);
        return 0;
    }
    return -1;
}

static int rr_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    uint64_t u = 0;
    double unused;
    int ep = endpoint_pair(p, k, v, path, f);
    if (ep != 1)
        return ep;
    if (!strcmp(k, "connections"))
        return u32_value(p, v, path, K_UINT, 1, 45000, &f->conns);
    if (!strcmp(k, "transactions"))
        return u32_value(p, v, path, K_UINT, 1, 1000000, &f->transactions);
    if (!strcmp(k, "request"))
        return u32_value(p, v, path, K_SIZE, 1, 1u << 20, &f->request);
    if (!strcmp(k, "response"))
        return u32_value(p, v, path, K_SIZE, 1, 1u << 20, &f->response);
    if (!strcmp(k, "start"))
        return value(p, v, path, K_TIME, &f->start_ns, &unused);
    if (!strcmp(k, "nodelay")) {
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        f->nodelay = u != 0;
        return rc;
    }
    return -1;
}

static int flows(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "flows"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (s->nflows == SPEC_MAX_FLOWS)
            return perr(p, e, "flows: at most %d", SPEC_MAX_FLOWS);
        if (e->type != YAML_MAPPING_NODE || e->data.mapping.pairs.top - e->data.mapping.pairs.start != 1)
            return perr(p, e, "flows: each flow is one 'bulk:' or 'rr:' mapping");
        yaml_node_pair_t *pr = e->data.mapping.pairs.start;
        const char *kind = scalar(p, node(p, pr->key), "flows");
        if (!kind)
            return 2;
        struct spec_flow *f = &s->flows[s->nflows];
        memset(f, 0, sizeof(*f));
        f->line = (int)e->start_mark.line + 1;
        char path[32];
        snprintf(path, sizeof(path), "flows[%d].%s", s->nflows + 1, kind);
        int rc;
        if (!strcmp(kind, "bulk")) {
            f->kind = SPEC_BULK;
            f->bytes = 10ull << 20;
            f->dir = BRISK_SIM_BULK_UP;
            rc = each_pair(p, node(p, pr->value), path, "from, to, bytes, dir, write, start", bulk_pair, f);
        } else if (!strcmp(kind, "rr")) {
            f->kind = SPEC_RR;
            f->conns = 1;
            f->transactions = 100;
            f->request = f->response = 1;
            f->nodelay = 1;
            rc = each_pair(p, node(p, pr->value), path, "from, to, connections, transactions, request, response, nodelay, start",
                           rr_pair, f);
        } else {
            return perr(p, e, "flows[%d]: unknown flow kind '%s' (expected bulk or rr)", s->nflows + 1, kind);
        }
        if (rc)
            return rc;
        s->nflows++;
    }
    if (s->nflows == 0)
        return perr(p, n, "flows: the list is empty");
    return 0;
}

/* ---- routers' queues ---- */

#define QDISC_KEYS "qdisc, queue_packets, queue_bytes, flows, quantum, target, interval"

static int qdisc_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_qdisc *q = ctx;
    uint64_t u = 0;
    double unused;
    if (!strcmp(k, "qdisc")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        if (brisk_sim_qdisc_parse(t, &q->q.kind) != BRISK_OK)
            return perr(p, v, "%s: '%s' is not a queueing discipline: droptail or fq_codel", path, t);
        q->has_kind = 1;
        return 0;
    }
    if (!strcmp(k, "queue_packets"))
        return q->has_limit_packets = 1, u32_value(p, v, path, K_UINT, 1, 1u << 20, &q->q.limit_packets);
    if (!strcmp(k, "queue_bytes")) {
        int rc = value(p, v, path, K_SIZE, &q->q.limit_bytes, &unused);
        if (!rc && (q->q.limit_bytes < 64 || q->q.limit_bytes > (1ull << 32)))
            return perr(p, v, "%s: expected 64 bytes to 4G", path);
        return q->has_limit_bytes = 1, rc;
    }
    if (!strcmp(k, "flows"))
        return q->has_flows = 1, u32_value(p, v, path, K_UINT, 1, 65536, &q->q.flows);
    if (!strcmp(k, "quantum"))
        return q->has_quantum = 1, u32_value(p, v, path, K_SIZE, 64, 1u << 20, &q->q.quantum);
    if (!strcmp(k, "target") || !strcmp(k, "interval")) {
        int rc = value(p, v, path, K_TIME, &u, &unused);
        if (!rc && (u == 0 || u > 1000 * BRISK_NSEC_PER_SEC))
            return perr(p, v, "%s: expected a time above 0 and at most 1000s", path);
        if (!strcmp(k, "target"))
            q->has_target = 1, q->q.target_ns = u;
        else
            q->has_interval = 1, q->q.interval_ns = u;
        return rc;
    }
    return -1;
}

/* ---- the topology: hosts, routers, links ---- */

static int add_node(const struct parser *p, const yaml_node_t *n, const char *key, struct lab_spec *s,
                    struct spec_node **out)
{
    if (s->nnodes == SPEC_MAX_NODES)
        return perr(p, n, "%s: at most %d hosts and routers together", key, SPEC_MAX_NODES);
    struct spec_node *nd = &s->nodes[s->nnodes];
    memset(nd, 0, sizeof(*nd));
    nd->line = (int)n->start_mark.line + 1;
    *out = nd;
    s->topology = 1;
    if (!s->topo_line)
        s->topo_line = nd->line;
    return 0;
}

static int check_unique(const struct parser *p, const yaml_node_t *n, const char *key, struct lab_spec *s)
{
    const char *name = s->nodes[s->nnodes].name;
    for (int i = 0; i < s->nnodes; i++)
        if (!strcmp(s->nodes[i].name, name))
            return perr(p, n, "%s: a second host or router called '%s' (line %d)", key, name, s->nodes[i].line);
    s->nnodes++;
    return 0;
}

static int host_set_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path,
                         void *ctx);
static int profile_value(const struct parser *p, const yaml_node_t *v, const char *path, char *out, size_t cap);

static int host_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_node *nd = ctx;
    if (!strcmp(k, "name"))
        return name_value(p, v, path, nd->name);
    if (!strcmp(k, "profile"))
        return profile_value(p, v, path, nd->profile, sizeof(nd->profile));
    if (!strcmp(k, "set"))
        return each_pair(p, v, path, "any stack setting", host_set_pair, nd);
    return -1;
}

static int hosts(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "hosts"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        char key[32];
        snprintf(key, sizeof(key), "hosts[%d]", (int)(it - n->data.sequence.items.start) + 1);
        struct spec_node *nd = NULL;
        if (add_node(p, e, key, s, &nd))
            return 2;
        if (e && e->type == YAML_MAPPING_NODE) { /* {name: b, profile: linux-6.x, set: {...}} */
            if (each_pair(p, e, key, "name, profile, set", host_pair, nd))
                return 2;
            if (!nd->name[0])
                return perr(p, e, "%s: a host needs a name", key);
        } else if (name_value(p, e, key, nd->name)) {
            return 2;
        }
        if (check_unique(p, e, key, s))
            return 2;
    }
    return 0;
}

static int router_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_node *nd = ctx;
    if (!strcmp(k, "name"))
        return name_value(p, v, path, nd->name);
    return qdisc_pair(p, k, v, path, &nd->qdisc);
}

static int routers(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "routers"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        char key[32];
        snprintf(key, sizeof(key), "routers[%d]", (int)(it - n->data.sequence.items.start) + 1);
        struct spec_node *nd = NULL;
        if (add_node(p, e, key, s, &nd))
            return 2;
        nd->router = 1;
        if (each_pair(p, e, key, "name, " QDISC_KEYS, router_pair, nd))
            return 2;
        if (!nd->name[0])
            return perr(p, e, "%s: a router needs a name", key);
        if (check_unique(p, e, key, s))
            return 2;
    }
    return 0;
}

struct tlink_ctx {
    struct spec_tlink *l;
    int has_between;
};

static int tlink_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct tlink_ctx *c = ctx;
    if (!strcmp(k, "name"))
        return name_value(p, v, path, c->l->name);
    if (!strcmp(k, "queue"))
        return each_pair(p, v, path, QDISC_KEYS, qdisc_pair, &c->l->queue);
    if (!strcmp(k, "between")) {
        if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top - v->data.sequence.items.start != 2)
            return perr(p, v, "%s: expected the two nodes it joins, as [NAME, NAME]", path);
        c->has_between = 1;
        return name_value(p, node(p, v->data.sequence.items.start[0]), path, c->l->an) ||
                       name_value(p, node(p, v->data.sequence.items.start[1]), path, c->l->bn)
                   ? 2
                   : 0;
    }
    return link_pair(p, k, v, path, &c->l->link);
}

static int links(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "links"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        char key[32];
        snprintf(key, sizeof(key), "links[%d]", s->ntlinks + 1);
        if (s->ntlinks == SPEC_MAX_LINKS)
            return perr(p, e, "links: at most %d", SPEC_MAX_LINKS);
        struct spec_tlink *l = &s->tlinks[s->ntlinks];
        memset(l, 0, sizeof(*l));
        l->line = (int)e->start_mark.line + 1;
        struct tlink_ctx c = {l, 0};
        if (each_pair(p, e, key, "between, name, queue, " DIR_KEYS ", forward, reverse", tlink_pair, &c))
            return 2;
        if (!c.has_between)
            return perr(p, e, "%s.between: a link needs the two nodes it joins, as between: [NAME, NAME]", key);
        for (int i = 0; l->name[0] && i < s->ntlinks; i++)
            if (!strcmp(s->tlinks[i].name, l->name))
                return perr(p, e, "%s.name: a second link called '%s' (line %d)", key, l->name, s->tlinks[i].line);
        s->ntlinks++;
        s->topology = 1;
        if (!s->topo_line)
            s->topo_line = l->line;
    }
    if (s->ntlinks == 0)
        return perr(p, n, "links: the list is empty");
    return 0;
}

static int row_link_key(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_row_link *rl = ctx;
    if (!strcmp(k, "queue"))
        return each_pair(p, v, path, QDISC_KEYS, qdisc_pair, &rl->queue);
    return link_pair(p, k, v, path, &rl->link);
}

/* A row's changes to named links: links: {NAME: {rate: ..., forward: {...}, queue: {...}}}. */
static int row_link_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_row *r = ctx;
    if (r->nlinks == SPEC_MAX_ROW_LINKS)
        return perr(p, v, "%s: a row changes at most %d links", path, SPEC_MAX_ROW_LINKS);
    struct spec_row_link *rl = &r->links[r->nlinks];
    memset(rl, 0, sizeof(*rl));
    if (strlen(k) >= SPEC_NAME)
        return perr(p, v, "%s: no link has so long a name", path);
    snprintf(rl->name, sizeof(rl->name), "%s", k);
    rl->line = (int)v->start_mark.line + 1;
    if (each_pair(p, v, path, "queue, " DIR_KEYS ", forward, reverse", row_link_key, rl))
        return 2;
    r->nlinks++;
    return 0;
}

/* ---- rows ---- */

/* One "name: value" stack setting into sets[*n] as "name=value", checked against the settings table. */
static int setting_into(const struct parser *p, const char *k, const yaml_node_t *v, const char *path,
                        char (*sets)[96], int *n, int max, const char *per)
{
    const char *t = scalar(p, v, path);
    if (!t)
        return 2;
    if (*n == max)
        return perr(p, v, "%s: at most %d settings per %s", path, max, per);
    char *a = sets[*n];
    if (snprintf(a, sizeof(sets[0]), "%s=%s", k, t) >= (int)sizeof(sets[0]))
        return perr(p, v, "%s: too long", path);
    struct brisk_settings scratch;
    brisk_settings_default(&scratch);
    int rc = brisk_settings_set(&scratch, a);
    if (rc == BRISK_ERR_NOENT)
        return perr(p, v, "%s: no stack setting is called '%s' (brisk-lab settings)", path, k);
    if (rc != BRISK_OK)
        return perr(p, v, "%s: '%s' is not a valid value for %s (%s; brisk-lab settings)", path, t, k,
                    brisk_strerror(rc));
    (*n)++;
    return 0;
}

static int set_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_row *r = ctx;
    return setting_into(p, k, v, path, r->sets, &r->nsets, SPEC_MAX_SETS, "row");
}

static int host_set_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path,
                         void *ctx)
{
    struct spec_node *nd = ctx;
    return setting_into(p, k, v, path, nd->sets, &nd->nsets, SPEC_MAX_HOST_SETS, "host");
}

/* A profile name, checked: 0, or 2 with the message printed. */
static int profile_value(const struct parser *p, const yaml_node_t *v, const char *path, char *out, size_t cap)
{
    int rc = text_value(p, v, path, out, cap);
    struct brisk_settings scratch;
    brisk_settings_default(&scratch);
    if (!rc && brisk_settings_apply_profile(&scratch, out) != BRISK_OK)
        return perr(p, v, "%s: no profile is called '%s' (brisk-lab profiles)", path, out);
    return rc;
}

/* Appends n's scalars as "path=value" to buf (the row's changes, for the report's row definitions). */
static void flatten(const struct parser *p, const yaml_node_t *n, const char *path, char *buf, size_t cap)
{
    size_t len = strlen(buf);
    if (n->type == YAML_SCALAR_NODE) {
        snprintf(buf + len, cap - len, "%s%s=%s", len ? ", " : "", path, (const char *)n->data.scalar.value);
        return;
    }
    if (n->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = node(p, pr->key);
        char sub[128];
        snprintf(sub, sizeof(sub), "%s.%s", path,
                 k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "?");
        flatten(p, node(p, pr->value), sub, buf, cap);
    }
}

static int row_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_row *r = ctx;
    if (!strcmp(k, "name"))
        return text_value(p, v, path, r->name, sizeof(r->name));
    if (!strcmp(k, "profile"))
        return profile_value(p, v, path, r->profile, sizeof(r->profile));
    if (!strcmp(k, "set"))
        return each_pair(p, v, path, "any stack setting", set_pair, r);
    if (!strcmp(k, "link") || !strcmp(k, "nic") || !strcmp(k, "router") || !strcmp(k, "links")) {
        int rc;
        if (!strcmp(k, "link")) {
            r->link_line = (int)v->start_mark.line + 1;
            rc = each_pair(p, v, path, DIR_KEYS ", forward, reverse", link_pair, &r->link);
        } else if (!strcmp(k, "nic")) {
            rc = each_pair(p, v, path, NIC_KEYS, nic_pair, &r->nic);
        } else if (!strcmp(k, "router")) {
            rc = each_pair(p, v, path, QDISC_KEYS, qdisc_pair, &r->router);
        } else {
            rc = each_pair(p, v, path, "the names of links", row_link_pair, r);
        }
        if (!rc)
            flatten(p, v, k, r->how, sizeof(r->how));
        return rc;
    }
    return -1;
}

static int rows(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "rows"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (s->nrows == SPEC_MAX_ROWS)
            return perr(p, e, "rows: at most %d", SPEC_MAX_ROWS);
        struct spec_row *r = &s->rows[s->nrows];
        memset(r, 0, sizeof(*r));
        r->line = (int)e->start_mark.line + 1;
        char path[32];
        snprintf(path, sizeof(path), "rows[%d]", s->nrows + 1);
        int rc = each_pair(p, e, path, "name, profile, set, link, nic, router, links", row_pair, r);
        if (rc)
            return rc;
        if (!r->name[0])
            return perr(p, e, "%s: a row needs a name", path);
        for (int i = 0; i < s->nrows; i++)
            if (!strcmp(s->rows[i].name, r->name))
                return perr(p, e, "%s: a second row called '%s'", path, r->name);
        s->nrows++;
    }
    if (s->nrows == 0)
        return perr(p, n, "rows: the list is empty (leave rows out for one row of brisk's defaults)");
    return 0;
}

/* ---- the expected shape ---- */

const char *const lab_spec_figures[SPEC_NFIGURES + 1] = {
    "complete",     "goodput_bps", "goodput_pct",   "delivered_bytes", "retransmits",
    "rtos",         "queue_drops", "lost_frames",   "transactions",    "rr_p50_ns",
    "rr_p99_ns",    "elapsed_ns",
    /* topologies: the fairness of the bulk flows, and the busiest router queue */
    "window_bps",   "fairness",    "queue_max_ns",  "queue_avg_ns",    "queue_max_packets",
    "codel_drops",  "overflow_drops", NULL};

/* A bound's value in the figure's unit: rates for _bps, times for _ns, sizes for _bytes, numbers else. */
static int bound(const struct parser *p, const yaml_node_t *v, const char *path, const char *figure, double *out)
{
    size_t n = strlen(figure);
    uint64_t u = 0;
    double unused;
    enum kind k = K_UINT;
    if (n > 4 && !strcmp(figure + n - 4, "_bps"))
        k = K_RATE;
    else if (n > 3 && !strcmp(figure + n - 3, "_ns"))
        k = K_TIME;
    else if (n > 6 && !strcmp(figure + n - 6, "_bytes"))
        k = K_SIZE;
    if (k != K_UINT) {
        if (value(p, v, path, k, &u, &unused))
            return 2;
        *out = (double)u;
        return 0;
    }
    const char *t = scalar(p, v, path);
    if (!t)
        return 2;
    char *end;
    *out = strtod(t, &end);
    if (end == t || (*end && strcmp(end, "%")))
        return perr(p, v, "%s: '%s' is not a number", path, t);
    return 0;
}

struct expect_ctx {
    struct spec_expect *e;
    const yaml_node_t *min, *max;
};

static int expect_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct expect_ctx *x = ctx;
    if (!strcmp(k, "figure"))
        return text_value(p, v, path, x->e->figure, sizeof(x->e->figure));
    if (!strcmp(k, "row"))
        return text_value(p, v, path, x->e->row, sizeof(x->e->row));
    if (!strcmp(k, "flow"))
        return u32_value(p, v, path, K_UINT, 1, SPEC_MAX_FLOWS, &x->e->flow);
    if (!strcmp(k, "min"))
        return x->min = v, 0;
    if (!strcmp(k, "max"))
        return x->max = v, 0;
    return -1;
}

static int expects(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "expect"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (s->nexpect == SPEC_MAX_EXPECT)
            return perr(p, e, "expect: at most %d bounds", SPEC_MAX_EXPECT);
        struct spec_expect *x = &s->expect[s->nexpect];
        memset(x, 0, sizeof(*x));
        x->line = (int)e->start_mark.line + 1;
        struct expect_ctx c = {x, NULL, NULL};
        char path[32];
        snprintf(path, sizeof(path), "expect[%d]", s->nexpect + 1);
        int rc = each_pair(p, e, path, "figure, row, flow, min, max", expect_pair, &c);
        if (rc)
            return rc;
        int known = 0;
        for (const char *const *f = lab_spec_figures; *f && !known; f++)
            known = !strcmp(*f, x->figure);
        if (!known) {
            char list[512];
            size_t ll = 0;
            for (const char *const *f = lab_spec_figures; *f && ll < sizeof(list); f++)
                ll += (size_t)snprintf(list + ll, sizeof(list) - ll, "%s%s", ll ? ", " : "", *f);
            return perr(p, e, "%s: figure '%s' is not one of: %s", path, x->figure[0] ? x->figure : "(missing)",
                        list);
        }
        if (!c.min && !c.max)
            return perr(p, e, "%s: a bound needs min, max or both", path);
        char key[48];
        snprintf(key, sizeof(key), "%s.min", path);
        if (c.min && (rc = bound(p, c.min, key, x->figure, &x->min)))
            return rc;
        snprintf(key, sizeof(key), "%s.max", path);
        if (c.max && (rc = bound(p, c.max, key, x->figure, &x->max)))
            return rc;
        x->has_min = c.min != NULL;
        x->has_max = c.max != NULL;
        if (x->flow && (int)x->flow > s->nflows)
            return perr(p, e, "%s: flow %u: the file has %d flow(s)", path, x->flow, s->nflows);
        char where[64];
        if (x->flow)
            snprintf(where, sizeof(where), "%s flow %u", x->row[0] ? x->row : "every row", x->flow);
        else
            snprintf(where, sizeof(where), "%s", x->row[0] ? x->row : "every row");
        /* Through a local: gcc without LTO cannot tell that x->figure and x->text do not overlap. */
        char text[sizeof(x->text)];
        snprintf(text, sizeof(text), "%s: %s%s%s%s%s", where, x->figure, c.min ? " >= " : "",
                 c.min ? (const char *)c.min->data.scalar.value : "", c.max ? " <= " : "",
                 c.max ? (const char *)c.max->data.scalar.value : "");
        memcpy(x->text, text, sizeof(text));
        s->nexpect++;
    }
    return 0;
}

/* ---- the document ---- */

static int top_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct lab_spec *s = ctx;
    double unused;
    if (!strcmp(k, "name"))
        return text_value(p, v, path, s->name, sizeof(s->name));
    if (!strcmp(k, "summary"))
        return text_value(p, v, path, s->summary, sizeof(s->summary));
    if (!strcmp(k, "seed"))
        return value(p, v, path, K_UINT, &s->seed, &unused);
    if (!strcmp(k, "limit")) {
        int rc = value(p, v, path, K_TIME, &s->limit_ns, &unused);
        if (!rc && s->limit_ns == 0)
            return perr(p, v, "%s: the limit must be above 0", path);
        return rc;
    }
    if (!strcmp(k, "link")) {
        s->link_line = (int)v->start_mark.line + 1;
        return each_pair(p, v, path, DIR_KEYS ", forward, reverse", link_pair, &s->link);
    }
    if (!strcmp(k, "hosts"))
        return hosts(p, v, s);
    if (!strcmp(k, "routers"))
        return routers(p, v, s);
    if (!strcmp(k, "links"))
        return links(p, v, s);
    if (!strcmp(k, "nic"))
        return each_pair(p, v, path, NIC_KEYS, nic_pair, &s->nic);
    if (!strcmp(k, "flows"))
        return flows(p, v, s);
    if (!strcmp(k, "rows"))
        return rows(p, v, s);
    if (!strcmp(k, "expect"))
        return expects(p, v, s);
    return -1;
}

/* ---- the topology, once the whole file is read ---- */

static int lerr(const char *path, FILE *err, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int lerr(const char *path, FILE *err, int line, const char *fmt, ...)
{
    if (!err)
        return 2;
    fprintf(err, "%s:%d: ", path, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
    return 2;
}

static int node_index(const struct lab_spec *s, const char *name)
{
    for (int i = 0; i < s->nnodes; i++)
        if (!strcmp(s->nodes[i].name, name))
            return i;
    return -1;
}

int lab_spec_host_link(const struct lab_spec *s, int host)
{
    for (int i = 0; i < s->ntlinks; i++)
        if (s->tlinks[i].a == host || s->tlinks[i].b == host)
            return i;
    return -1;
}

int lab_spec_first_link(const struct lab_spec *s, int from, int target)
{
    const struct spec_tlink *t = &s->tlinks[target];
    if (t->a == from || t->b == from)
        return target;
    /* Breadth first over the nodes, entering a node only if it forwards (a router); first[] is the link the
     * path left `from` by. The file's order breaks ties, so every run routes alike. */
    int first[SPEC_MAX_NODES], queue[SPEC_MAX_NODES], qh = 0, qt = 0;
    for (int i = 0; i < s->nnodes; i++)
        first[i] = -2;
    first[from] = -1;
    queue[qt++] = from;
    while (qh < qt) {
        int n = queue[qh++];
        if (n != from && !s->nodes[n].router)
            continue;
        for (int i = 0; i < s->ntlinks; i++) {
            const struct spec_tlink *l = &s->tlinks[i];
            int m = l->a == n ? l->b : l->b == n ? l->a : -1;
            if (m < 0)
                continue;
            if (i == target) /* n is on the target link, and forwards onto it */
                return n == from ? i : first[n];
            if (first[m] != -2)
                continue;
            first[m] = n == from ? i : first[n];
            queue[qt++] = m;
        }
    }
    return -1;
}

static int resolve(const char *path, FILE *err, struct lab_spec *s)
{
    if (!s->topology) {
        /* Two hosts, a and b: a flow may name them, and only them. */
        for (int i = 0; i < s->nflows; i++) {
            struct spec_flow *f = &s->flows[i];
            int from = !f->from_name[0] || !strcmp(f->from_name, "a") ? 0 : !strcmp(f->from_name, "b") ? 1 : -1;
            int to = !f->to_name[0] ? 1 - (from == 1) : !strcmp(f->to_name, "a") ? 0 : !strcmp(f->to_name, "b") ? 1 : -1;
            if (from < 0 || to < 0 || from == to)
                return lerr(path, err, f->line,
                            "flows[%d]: without a topology (hosts, routers, links) the hosts are a and b: a flow "
                            "goes from one to the other",
                            i + 1);
            f->from = from;
            f->to = to;
        }
        for (int k = 0; k < s->nrows; k++)
            if (s->rows[k].nlinks || s->rows[k].router.has_kind || s->rows[k].router.has_limit_packets ||
                s->rows[k].router.has_limit_bytes)
                return lerr(path, err, s->rows[k].line,
                            "rows[%d]: links / router: the file has no topology (hosts, routers, links)", k + 1);
        return 0;
    }
    if (s->link_line)
        return lerr(path, err, s->link_line, "link: a file with a topology describes each of its links under links");
    if (s->ntlinks == 0)
        return lerr(path, err, s->topo_line, "links: a topology needs links between its hosts and routers");
    int nhosts = 0;
    for (int i = 0; i < s->nnodes; i++)
        nhosts += !s->nodes[i].router;
    if (nhosts < 2)
        return lerr(path, err, s->topo_line, "hosts: a topology needs at least two hosts");
    int degree[SPEC_MAX_NODES] = {0};
    for (int i = 0; i < s->ntlinks; i++) {
        struct spec_tlink *l = &s->tlinks[i];
        l->a = node_index(s, l->an);
        l->b = node_index(s, l->bn);
        if (l->a < 0 || l->b < 0)
            return lerr(path, err, l->line, "links[%d].between: no host or router is called '%s'", i + 1,
                        l->a < 0 ? l->an : l->bn);
        if (l->a == l->b)
            return lerr(path, err, l->line, "links[%d].between: a link joins two different nodes", i + 1);
        for (int k = 0; k < i; k++)
            if ((s->tlinks[k].a == l->a && s->tlinks[k].b == l->b) || (s->tlinks[k].a == l->b && s->tlinks[k].b == l->a))
                return lerr(path, err, l->line, "links[%d].between: %s and %s are already joined (line %d)", i + 1,
                            l->an, l->bn, s->tlinks[k].line);
        degree[l->a]++;
        degree[l->b]++;
    }
    for (int i = 0; i < s->nnodes; i++) {
        const struct spec_node *nd = &s->nodes[i];
        if (!nd->router && degree[i] != 1)
            return lerr(path, err, nd->line, "hosts: host '%s' is on %d links: a host has one NIC, on one link",
                        nd->name, degree[i]);
        if (nd->router && degree[i] == 0)
            return lerr(path, err, nd->line, "routers: router '%s' is on no link", nd->name);
        if (nd->router && degree[i] > 64)
            return lerr(path, err, nd->line, "routers: router '%s' has more than 64 ports", nd->name);
    }
    for (int i = 0; i < s->nflows; i++) {
        struct spec_flow *f = &s->flows[i];
        if (!f->from_name[0] || !f->to_name[0])
            return lerr(path, err, f->line, "flows[%d]: a flow in a topology names its hosts: from: NAME, to: NAME",
                        i + 1);
        f->from = node_index(s, f->from_name);
        f->to = node_index(s, f->to_name);
        const char *bad = f->from < 0 ? f->from_name : f->to < 0 ? f->to_name : NULL;
        if (bad)
            return lerr(path, err, f->line, "flows[%d]: no host is called '%s'", i + 1, bad);
        if (s->nodes[f->from].router || s->nodes[f->to].router)
            return lerr(path, err, f->line, "flows[%d]: '%s' is a router: flows run between hosts", i + 1,
                        s->nodes[f->from].router ? f->from_name : f->to_name);
        if (f->from == f->to)
            return lerr(path, err, f->line, "flows[%d]: from and to are the same host", i + 1);
        if (lab_spec_first_link(s, f->from, lab_spec_host_link(s, f->to)) < 0)
            return lerr(path, err, f->line, "flows[%d]: no path from %s to %s through the routers", i + 1,
                        f->from_name, f->to_name);
    }
    for (int k = 0; k < s->nrows; k++) {
        struct spec_row *r = &s->rows[k];
        if (r->link_line)
            return lerr(path, err, r->link_line,
                        "rows[%d].link: a file with a topology changes its links by name: links: {NAME: {...}}", k + 1);
        for (int j = 0; j < r->nlinks; j++) {
            struct spec_row_link *rl = &r->links[j];
            rl->index = -1;
            for (int i = 0; i < s->ntlinks && rl->index < 0; i++)
                if (!strcmp(s->tlinks[i].name, rl->name))
                    rl->index = i;
            if (rl->index < 0)
                return lerr(path, err, rl->line, "rows[%d].links.%s: no link is called '%s' (give it name: %s)", k + 1,
                            rl->name, rl->name, rl->name);
        }
    }
    return 0;
}

int lab_spec_is_file(const char *arg)
{
    size_t n = strlen(arg);
    return strchr(arg, '/') || (n > 5 && !strcmp(arg + n - 5, ".yaml")) || (n > 4 && !strcmp(arg + n - 4, ".yml"));
}

int lab_spec_load(const char *path, struct lab_spec *s)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        memset(s, 0, sizeof(*s));
        fprintf(stderr, "brisk-lab: cannot read scenario file %s: %m\n", path);
        return 2;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= SPEC_MAX_FILE) {
                fprintf(stderr, "%s: a scenario file is at most %d KB\n", path, SPEC_MAX_FILE / 1024);
                free(text);
                fclose(f);
                return 2;
            }
            cap = cap ? cap * 2 : 4096;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return 1;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int rc = ferror(f) ? (fprintf(stderr, "brisk-lab: cannot read scenario file %s: %m\n", path), 2)
                       : lab_spec_parse(path, (const unsigned char *)text, len, s, stderr);
    free(text);
    fclose(f);
    return rc;
}

int lab_spec_parse(const char *path, const unsigned char *text, size_t len, struct lab_spec *s, FILE *err)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->seed = 1;
    s->limit_ns = 60 * BRISK_NSEC_PER_SEC;
    yaml_parser_t yp;
    yaml_document_t doc;
    yaml_parser_initialize(&yp);
    yaml_parser_set_input_string(&yp, text, len);
    int rc = 0;
    if (!yaml_parser_load(&yp, &doc)) {
        if (err)
            fprintf(err, "%s:%zu:%zu: not YAML: %s\n", path, yp.problem_mark.line + 1, yp.problem_mark.column + 1,
                    yp.problem ? yp.problem : "malformed");
        yaml_parser_delete(&yp);
        return 2;
    }
    struct parser p = {path, &doc, err};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        rc = perr(&p, NULL, "the file is empty"); else {
        rc = each_pair(&p, root, "", "name, summary, seed, limit, link, nic, hosts, routers, links, flows, rows, expect",
                       top_pair, s);
    }
    if (!rc && !s->name[0])
        rc = perr(&p, root, "name: a scenario needs a name");
    if (!rc && s->nflows == 0)
        rc = perr(&p, root, "flows: a scenario needs at least one flow");
    if (!rc && s->nrows == 0) { /* one row: brisk's defaults */
        snprintf(s->rows[0].name, sizeof(s->rows[0].name), "brisk");
        s->nrows = 1;
    }
    if (!rc)
        rc = resolve(path, err, s);
    for (int i = 0; !rc && i < s->nexpect; i++) {
        int found = !s->expect[i].row[0];
        for (int k = 0; k < s->nrows && !found; k++)
            found = !strcmp(s->rows[k].name, s->expect[i].row);
        if (!found && err)
            fprintf(err, "%s:%d: expect[%d]: no row is called '%s'\n", path, s->expect[i].line, i + 1,
                    s->expect[i].row);
        if (!found)
            rc = 2;
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&yp);
    return rc;
}
