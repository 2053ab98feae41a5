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

#define NIC_KEYS "tx_ring, completion, gso, bql, rx_batch, mtu"

/* ---- flows ---- */

static int bulk_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    double unused;
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
            return perr(p, v, "%s: '%s' is not a direction: up (a sends), down (b sends) or both", path, t);
        return 0;
    }
    return -1;
}

static int rr_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    uint64_t u = 0;
    double unused;
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
            rc = each_pair(p, node(p, pr->value), path, "bytes, dir, write, start", bulk_pair, f);
        } else if (!strcmp(kind, "rr")) {
            f->kind = SPEC_RR;
            f->conns = 1;
            f->transactions = 100;
            f->request = f->response = 1;
            f->nodelay = 1;
            rc = each_pair(p, node(p, pr->value), path, "connections, transactions, request, response, nodelay, start",
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

/* ---- rows ---- */

static int set_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_row *r = ctx;
    const char *t = scalar(p, v, path);
    if (!t)
        return 2;
    if (r->nsets == SPEC_MAX_SETS)
        return perr(p, v, "%s: at most %d settings per row", path, SPEC_MAX_SETS);
    char *a = r->sets[r->nsets];
    if (snprintf(a, sizeof(r->sets[0]), "%s=%s", k, t) >= (int)sizeof(r->sets[0]))
        return perr(p, v, "%s: too long", path);
    struct brisk_settings scratch;
    brisk_settings_default(&scratch);
    int rc = brisk_settings_set(&scratch, a);
    if (rc == BRISK_ERR_NOENT)
        return perr(p, v, "%s: no stack setting is called '%s' (brisk-lab settings)", path, k);
    if (rc != BRISK_OK)
        return perr(p, v, "%s: '%s' is not a valid value for %s (%s; brisk-lab settings)", path, t, k,
                    brisk_strerror(rc));
    r->nsets++;
    return 0;
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
    if (!strcmp(k, "profile")) {
        int rc = text_value(p, v, path, r->profile, sizeof(r->profile));
        struct brisk_settings scratch;
        brisk_settings_default(&scratch);
        if (!rc && brisk_settings_apply_profile(&scratch, r->profile) != BRISK_OK)
            return perr(p, v, "%s: no profile is called '%s' (brisk-lab profiles)", path, r->profile);
        return rc;
    }
    if (!strcmp(k, "set"))
        return each_pair(p, v, path, "any stack setting", set_pair, r);
    if (!strcmp(k, "link") || !strcmp(k, "nic")) {
        int rc = !strcmp(k, "link") ? each_pair(p, v, path, DIR_KEYS ", forward, reverse", link_pair, &r->link)
                                    : each_pair(p, v, path, NIC_KEYS, nic_pair, &r->nic);
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
        char path[32];
        snprintf(path, sizeof(path), "rows[%d]", s->nrows + 1);
        int rc = each_pair(p, e, path, "name, profile, set, link, nic", row_pair, r);
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

const char *const lab_spec_figures[SPEC_NFIGURES + 1] = {"complete",    "goodput_bps", "goodput_pct", "delivered_bytes",
                                        "retransmits", "rtos",        "queue_drops", "lost_frames",
                                        "transactions", "rr_p50_ns",  "rr_p99_ns",   "elapsed_ns",
                                        NULL};

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
        if (!known)
            return perr(p, e, "%s: figure '%s' is not one of: complete, goodput_bps, goodput_pct, delivered_bytes, "
                        "retransmits, rtos, queue_drops, lost_frames, transactions, rr_p50_ns, rr_p99_ns, "
                        "elapsed_ns",
                        path, x->figure[0] ? x->figure : "(missing)");
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
    if (!strcmp(k, "link"))
        return each_pair(p, v, path, DIR_KEYS ", forward, reverse", link_pair, &s->link);
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
        rc = each_pair(&p, root, "", "name, summary, seed, limit, link, nic, flows, rows, expect", top_pair, s);
    }
    if (!rc && !s->name[0])
        rc = perr(&p, root, "name: a scenario needs a name");
    if (!rc && s->nflows == 0)
        rc = perr(&p, root, "flows: a scenario needs at least one flow");
    if (!rc && s->nrows == 0) { /* one row: brisk's defaults */
        snprintf(s->rows[0].name, sizeof(s->rows[0].name), "brisk");
        s->nrows = 1;
    }
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
