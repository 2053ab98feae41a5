/*
 * spec_parse.c — reading a scenario file (spec.h) with libyaml, and checking every key and value.
 *
 * The whole document is loaded (yaml_parser_load) and walked with the schema below; each node keeps its
 * line, so every message names the file, the line and the key path ("link.forward.rate") and says what was
 * expected: an unknown key lists the keys allowed there, a bad value the syntax of its kind (the same units
 * as --set: 64K, 1G, 100us, 1%). The first problem ends the load (exit 2): a file either describes a whole
 * experiment or is refused. A sweep (a row with a `sweep:` key, below) is written out into rows here, so
 * nothing after the parse knows a row came from one.
 */
#include "lab/spec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "lab/expr.h"

struct parser {
    const char *path;
    yaml_document_t *doc;
    FILE *err; /* where messages go; NULL: nowhere (the fuzz target) */
    struct lab_spec *s; /* ${...} values are bound to fields inside it (by offset) */
    const char *note;   /* a row written out by a sweep: its values ("v=64"), said after each message */
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
    if (p->note)
        fprintf(p->err, " (sweep: %s)", p->note);
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

/* Whether a value is written ${EXPR}: computed from the parameters before each row (spec_bind). */
static int is_bind(const char *t)
{
    size_t n = strlen(t);
    return n > 3 && t[0] == '$' && t[1] == '{' && t[n - 1] == '}';
}

/* Binds the field at dst (inside the spec) to the expression of t; 0, or 2 after a message. */
static int bind(const struct parser *p, const yaml_node_t *n, const char *key, const char *t, void *dst, int width,
                int integer, uint64_t lo, uint64_t hi)
{
    struct lab_spec *s = p->s;
    char *base = (char *)s, *d = dst;
    if (d < base || d + (width < 0 ? -width : width) > base + sizeof(*s))
        return perr(p, n, "%s: this value cannot be computed (${...}); write it out", key);
    if (s->nbinds == SPEC_MAX_BINDS)
        return perr(p, n, "%s: at most %d ${...} values in a file", key, SPEC_MAX_BINDS);
    size_t len = strlen(t) - 3;
    struct spec_bind *b = &s->binds[s->nbinds];
    if (len >= sizeof(b->expr))
        return perr(p, n, "%s: an expression of at most %zu characters", key, sizeof(b->expr) - 1);
    memset(b, 0, sizeof(*b));
    memcpy(b->expr, t + 2, len);
    b->expr[len] = '\0';
    snprintf(b->path, sizeof(b->path), "%s", key);
    b->line = (int)n->start_mark.line + 1;
    b->off = (size_t)(d - base);
    b->width = width;
    b->integer = integer;
    b->lo = lo;
    b->hi = hi;
    s->nbinds++;
    return 0;
}

static int value(const struct parser *p, const yaml_node_t *n, const char *key, enum kind k, uint64_t *u,
                 double *d)
{
    const char *t = scalar(p, n, key);
    if (!t)
        return 2;
    if (is_bind(t) && k != K_BOOL) {
        /* A placeholder the later checks accept; the run writes the computed value over it. */
        if (k == K_PROB)
            *d = 0;
        else
            *u = 1;
        return k == K_PROB ? bind(p, n, key, t, d, -8, 0, 0, 0) : bind(p, n, key, t, u, 8, 1, 0, UINT64_MAX);
    }
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
    const char *t = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : "";
    if (is_bind(t)) {
        *out = (uint32_t)(lo ? lo : hi ? 1 : 0);
        return bind(p, n, key, t, out, 4, 1, lo, hi);
    }
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
    if (!strcmp(k, "csum")) {
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        n->has_csum = 1;
        n->csum = u != 0;
        return rc;
    }
    if (!strcmp(k, "completion")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        /* ${...} arguments: the model is parsed with "1" in their place, then each is bound to its field
         * (delay TIME; coalesce FRAMES TIMEOUT). */
        char lit[128], args[3][SPEC_EXPR];
        int bound[3] = {0, 0, 0}, ntok = 0;
        size_t ll = 0;
        for (const char *c = t; *c;) {
            if (*c == ' ' || *c == '\t' || *c == ':') {
                c++;
                continue;
            }
            if (ntok == 3)
                return perr(p, v, "%s: '%s' is not a completion model: immediate, delay 190us, coalesce 16 10ms",
                            path, t);
            const char *e = c;
            if (c[0] == '$' && c[1] == '{') {
                e = strchr(c, '}');
                if (!e || (size_t)(e - c + 1) >= sizeof(args[0]))
                    return perr(p, v, "%s: a ${...} argument without its '}'", path);
                e++;
                memcpy(args[ntok], c, (size_t)(e - c));
                args[ntok][e - c] = '\0';
                bound[ntok] = 1;
                /* the placeholder: a frame count for coalesce's first argument, else a time */
                const char *ph = ntok == 1 && !strncmp(lit, " coalesce", 9) ? "1" : "1ns";
                if (ll + 5 >= sizeof(lit))
                    return perr(p, v, "%s: too long", path);
                ll += (size_t)snprintf(lit + ll, sizeof(lit) - ll, " %s", ph);
            } else {
                while (*e && *e != ' ' && *e != '\t' && *e != ':')
                    e++;
                if (ll + (size_t)(e - c) + 2 >= sizeof(lit))
                    return perr(p, v, "%s: too long", path);
                lit[ll++] = ' ';
                memcpy(lit + ll, c, (size_t)(e - c));
                ll += (size_t)(e - c);
            }
            ntok++;
            c = e;
        }
        lit[ll] = '\0';
        if (bound[0] || brisk_sim_txc_parse(lit, &n->completion) != BRISK_OK)
            return perr(p, v, "%s: '%s' is not a completion model: immediate, delay 190us, coalesce 16 10ms",
                        path, t);
        n->has_completion = 1;
        for (int i = 1; i < ntok; i++) {
            if (!bound[i])
                continue;
            int rc;
            if (n->completion.model == BRISK_SIM_TXC_DELAY)
                rc = bind(p, v, path, args[i], &n->completion.delay_ns, 8, 1, 0, UINT64_MAX);
            else if (i == 1)
                rc = bind(p, v, path, args[i], &n->completion.frames, 4, 1, 1, UINT32_MAX);
            else
                rc = bind(p, v, path, args[i], &n->completion.timeout_ns, 8, 1, 0, UINT64_MAX);
            if (rc)
                return rc;
        }
        return 0;
    }
    return -1;
}

#define NIC_KEYS "tx_ring, completion, gso, csum, bql, rx_batch, rx_coalesce, mtu"

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

/* A server port: 1 to 65535. */
static int u16_value(const struct parser *p, const yaml_node_t *n, const char *key, uint16_t *out)
{
    uint64_t v = 0;
    double unused;
    if (value(p, n, key, K_UINT, &v, &unused))
        return 2;
    if (v < 1 || v > 65535)
        return perr(p, n, "%s: a port is 1 to 65535", key);
    *out = (uint16_t)v;
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
    if (!strcmp(k, "port"))
        return f->set_mask |= SPEC_FLOW_PORT, u16_value(p, v, path, &f->port);
    if (!strcmp(k, "bytes")) {
        f->set_mask |= SPEC_FLOW_BYTES;
        int rc = value(p, v, path, K_SIZE, &f->bytes, &unused);
        if (!rc && f->bytes == 0)
            return perr(p, v, "%s: a transfer needs at least one byte", path);
        return rc;
    }
    if (!strcmp(k, "write"))
        return f->set_mask |= SPEC_FLOW_WRITE, u32_value(p, v, path, K_SIZE, 1, 1u << 30, &f->write_size);
    if (!strcmp(k, "start"))
        return f->set_mask |= SPEC_FLOW_START, value(p, v, path, K_TIME, &f->start_ns, &unused);
    if (!strcmp(k, "dir")) {
        f->set_mask |= SPEC_FLOW_DIR;
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
    if (!strcmp(k, "port"))
        return f->set_mask |= SPEC_FLOW_PORT, u16_value(p, v, path, &f->port);
    if (!strcmp(k, "connections"))
        return f->set_mask |= SPEC_FLOW_CONNS, u32_value(p, v, path, K_UINT, 1, 45000, &f->conns);
    if (!strcmp(k, "transactions"))
        return f->set_mask |= SPEC_FLOW_TRANSACTIONS, u32_value(p, v, path, K_UINT, 1, 1000000, &f->transactions);
    if (!strcmp(k, "request"))
        return f->set_mask |= SPEC_FLOW_REQUEST, u32_value(p, v, path, K_SIZE, 1, 1u << 20, &f->request);
    if (!strcmp(k, "response"))
        return f->set_mask |= SPEC_FLOW_RESPONSE, u32_value(p, v, path, K_SIZE, 1, 1u << 20, &f->response);
    if (!strcmp(k, "start"))
        return f->set_mask |= SPEC_FLOW_START, value(p, v, path, K_TIME, &f->start_ns, &unused);
    if (!strcmp(k, "nodelay")) {
        f->set_mask |= SPEC_FLOW_NODELAY;
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        f->nodelay = u != 0;
        return rc;
    }
    return -1;
}

/* The file's flows, or (row != NULL) a row's changes to them: the same keys, only those given change. */
static int pdu_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    uint64_t u = 0;
    double unused;
    int ep = endpoint_pair(p, k, v, path, f);
    if (ep != 1)
        return ep;
    if (!strcmp(k, "port"))
        return f->set_mask |= SPEC_FLOW_PORT, u16_value(p, v, path, &f->port);
    if (!strcmp(k, "ios"))
        return f->set_mask |= SPEC_FLOW_IOS, u32_value(p, v, path, K_UINT, 1, 1000000, &f->ios);
    if (!strcmp(k, "request"))
        return f->set_mask |= SPEC_FLOW_REQUEST, u32_value(p, v, path, K_SIZE, 1, 4096, &f->request);
    if (!strcmp(k, "header"))
        return f->set_mask |= SPEC_FLOW_HEADER, u32_value(p, v, path, K_SIZE, 1, 4096, &f->header);
    if (!strcmp(k, "payload"))
        return f->set_mask |= SPEC_FLOW_PAYLOAD, u32_value(p, v, path, K_SIZE, 1, 4096, &f->payload);
    if (!strcmp(k, "more")) {
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        f->set_mask |= SPEC_FLOW_MORE;
        f->more = u != 0;
        return rc;
    }
    return -1;
}

/* An on/off source (onoff.h): bursts bounded by bytes and / or time, idle between them, so many cycles. */
static int onoff_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_flow *f = ctx;
    double unused;
    int ep = endpoint_pair(p, k, v, path, f);
    if (ep != 1)
        return ep;
    if (!strcmp(k, "port"))
        return f->set_mask |= SPEC_FLOW_PORT, u16_value(p, v, path, &f->port);
    if (!strcmp(k, "start"))
        return f->set_mask |= SPEC_FLOW_START, value(p, v, path, K_TIME, &f->start_ns, &unused);
    if (!strcmp(k, "cycles"))
        return f->set_mask |= SPEC_FLOW_CYCLES, u32_value(p, v, path, K_UINT, 1, 1000000, &f->cycles);
    if (!strcmp(k, "burst")) {
        f->set_mask |= SPEC_FLOW_BURST;
        int rc = value(p, v, path, K_SIZE, &f->burst, &unused);
        if (!rc && (f->burst == 0 || f->burst > (1ull << 32)))
            return perr(p, v, "%s: a burst is 1 byte to 4G", path);
        return rc;
    }
    if (!strcmp(k, "on") || !strcmp(k, "off")) {
        uint64_t *t = !strcmp(k, "on") ? &f->on_ns : &f->off_ns;
        f->set_mask |= !strcmp(k, "on") ? SPEC_FLOW_ON : SPEC_FLOW_OFF;
        int rc = value(p, v, path, K_TIME, t, &unused);
        if (!rc && ((t == &f->on_ns && *t == 0) || *t > 1000 * BRISK_NSEC_PER_SEC))
            return perr(p, v, "%s: expected a time %sat most 1000s", path, t == &f->on_ns ? "above 0 and " : "of ");
        return rc;
    }
    return -1;
}

static int flow_list(const struct parser *p, const yaml_node_t *n, struct spec_flow *list, int *count,
                     const char *where, int changes)
{
    if (need_list(p, n, where))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (*count == SPEC_MAX_FLOWS)
            return perr(p, e, "%s: at most %d", where, SPEC_MAX_FLOWS);
        if (e->type != YAML_MAPPING_NODE || e->data.mapping.pairs.top - e->data.mapping.pairs.start != 1)
            return perr(p, e, "%s: each flow is one 'bulk:', 'rr:', 'pdu:' or 'onoff:' mapping", where);
        yaml_node_pair_t *pr = e->data.mapping.pairs.start;
        const char *kind = scalar(p, node(p, pr->key), where);
        if (!kind)
            return 2;
        struct spec_flow *f = &list[*count];
        memset(f, 0, sizeof(*f));
        f->line = (int)e->start_mark.line + 1;
        char path[64];
        snprintf(path, sizeof(path), "%s[%d].%s", where, *count + 1, kind);
        int rc;
        if (!strcmp(kind, "bulk")) {
            f->kind = SPEC_BULK;
            f->bytes = 10ull << 20;
            f->dir = BRISK_SIM_BULK_UP;
            rc = each_pair(p, node(p, pr->value), path, "from, to, bytes, dir, write, start, port", bulk_pair, f);
        } else if (!strcmp(kind, "rr")) {
            f->kind = SPEC_RR;
            f->conns = 1;
            f->transactions = 100;
            f->request = f->response = 1;
            f->nodelay = 1;
            rc = each_pair(p, node(p, pr->value), path, "from, to, connections, transactions, request, response, nodelay, start, port",
                           rr_pair, f);
        } else if (!strcmp(kind, "pdu")) {
            f->kind = SPEC_PDU;
            f->ios = 100;
            f->request = 48;
            f->header = 48;
            f->payload = 512;
            rc = each_pair(p, node(p, pr->value), path, "from, to, ios, request, header, payload, more, port",
                           pdu_pair, f);
        } else if (!strcmp(kind, "onoff")) {
            f->kind = SPEC_ONOFF;
            f->cycles = 10;
            f->off_ns = 100 * BRISK_NSEC_PER_MSEC;
            rc = each_pair(p, node(p, pr->value), path, "from, to, burst, on, off, cycles, start, port", onoff_pair,
                           f);
            /* A row's change may give only some keys; the file's flow needs a bound on its ON period. */
            if (!rc && !changes && !(f->set_mask & (SPEC_FLOW_BURST | SPEC_FLOW_ON)))
                return perr(p, node(p, pr->value), "%s: an ON period needs a bound: burst (bytes), on (a time) or both",
                            path);
        } else {
            return perr(p, e, "%s[%d]: unknown flow kind '%s' (expected bulk, rr, pdu or onoff)", where, *count + 1,
                        kind);
        }
        if (rc)
            return rc;
        (*count)++;
    }
    if (*count == 0)
        return perr(p, n, "%s: the list is empty", where);
    return 0;
}

static int flows(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    return flow_list(p, n, s->flows, &s->nflows, "flows", 0);
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
    if (is_bind(t)) { /* computed at run time (peer_set: "${delack}"): the name is checked here */
        (*n)++;
        if (lab_spec_setting_index(k) < 0)
            return perr(p, v, "%s: no stack setting is called '%s' (brisk-lab settings)", path, k);
        return 0;
    }
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

static int peer_set_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path,
                         void *ctx)
{
    struct lab_spec *s = ctx;
    return setting_into(p, k, v, path, s->peer_sets, &s->npeer_sets, SPEC_MAX_HOST_SETS, "peer");
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
    if (!strcmp(k, "label"))
        return text_value(p, v, path, r->label, sizeof(r->label));
    if (!strcmp(k, "how"))
        return text_value(p, v, path, r->how_fmt, sizeof(r->how_fmt));
    if (!strcmp(k, "flows")) {
        char where[48];
        snprintf(where, sizeof(where), "%s", path);
        r->flows_line = (int)v->start_mark.line + 1;
        return flow_list(p, v, r->flows, &r->nflows, where, 1);
    }
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

/* One row written out (a mapping of row keys) into s->rows[s->nrows]. */
static int row_one(const struct parser *p, const yaml_node_t *e, struct lab_spec *s)
{
    if (s->nrows == SPEC_MAX_ROWS)
        return perr(p, e, "rows: at most %d", SPEC_MAX_ROWS);
    struct spec_row *r = &s->rows[s->nrows];
    memset(r, 0, sizeof(*r));
    r->line = (int)e->start_mark.line + 1;
    char path[32];
    snprintf(path, sizeof(path), "rows[%d]", s->nrows + 1);
    int rc = each_pair(p, e, path, "name, label, how, profile, set, link, nic, router, links, flows, sweep", row_pair,
                       r);
    if (rc)
        return rc;
    if (!r->name[0])
        return perr(p, e, "%s: a row needs a name", path);
    for (int i = 0; i < s->nrows; i++)
        if (!strcmp(s->rows[i].name, r->name))
            return perr(p, e, "%s: a second row called '%s'", path, r->name);
    s->nrows++;
    return 0;
}

/* ---- sweeps: one row written for many values ----
 *
 * A row with a `sweep` key is a template: `sweep: {VAR: [VALUES] | {from, to, step | times}, ...}` gives each
 * variable its values (several variables: every combination, the first varying slowest), and the row is
 * written out once per combination with ${VAR} in any of its texts replaced by the value, as if the file said
 * it by hand. The template is copied into a document of its own with the values in place (each node keeping
 * its line, so a message names the template's line) and read by the same code as a hand-written row: a
 * generated row is a hand-written row. A ${...} expression naming a variable is computed when the file is
 * read if it names nothing else (batch-${v * 2}); naming parameters too, it stays an expression of the
 * parameters with the value written in (${rate / 16}). */
#define SWEEP_VARS  4
#define SWEEP_VALUE 48
#define SWEEP_DEPTH 8 /* a row's keys nest 5 deep at most (rows: flows: [{bulk: {bytes: 1M}}]) */
struct sweep {
    char name[SWEEP_VARS][32];
    char value[SWEEP_VARS][SPEC_MAX_ROWS][SWEEP_VALUE];
    int n[SWEEP_VARS];
    int nvars;
    int idx[SWEEP_VARS]; /* the combination being written out */
};

/* A number of a range, written as a hand-written row would: 16, 0.5, 1e-06. */
static void sweep_number(double x, char *out, size_t cap)
{
    if (x == 0)
        snprintf(out, cap, "0");
    else if (x == floor(x) && fabs(x) < 1e15)
        snprintf(out, cap, "%.0f", x);
    else
        snprintf(out, cap, "%.12g", x);
}

static int sweep_double(const struct parser *p, const yaml_node_t *v, const char *path, double *out)
{
    const char *t = scalar(p, v, path);
    if (!t)
        return 2;
    char *end;
    *out = strtod(t, &end);
    if (!*t || *end || !isfinite(*out))
        return perr(p, v, "%s: '%s' is not a number (a range is plain numbers: write units after ${VAR})", path, t);
    return 0;
}

struct sweep_range {
    int has_from, has_to, has_step, has_times;
    double from, to, step, times;
};

static int range_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct sweep_range *g = ctx;
    if (!strcmp(k, "from"))
        return g->has_from = 1, sweep_double(p, v, path, &g->from);
    if (!strcmp(k, "to"))
        return g->has_to = 1, sweep_double(p, v, path, &g->to);
    if (!strcmp(k, "step"))
        return g->has_step = 1, sweep_double(p, v, path, &g->step);
    if (!strcmp(k, "times"))
        return g->has_times = 1, sweep_double(p, v, path, &g->times);
    return -1;
}

static int sweep_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct sweep *sw = ctx;
    if (sw->nvars == SWEEP_VARS)
        return perr(p, v, "%s: at most %d variables in a sweep", path, SWEEP_VARS);
    int i = sw->nvars;
    if (strlen(k) >= sizeof(sw->name[0]) || !((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_'))
        return perr(p, v, "%s: '%s' is not a variable name (letters, digits and '_')", path, k);
    for (const char *c = k; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (*c >= '0' && *c <= '9')))
            return perr(p, v, "%s: '%s' is not a variable name (letters, digits and '_')", path, k);
    snprintf(sw->name[i], sizeof(sw->name[i]), "%s", k);
    sw->n[i] = 0;
    if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            if (sw->n[i] == SPEC_MAX_ROWS)
                return perr(p, v, "%s: more than %d values (a file has at most %d rows)", path, SPEC_MAX_ROWS,
                            SPEC_MAX_ROWS);
            if (text_value(p, node(p, *it), path, sw->value[i][sw->n[i]], SWEEP_VALUE))
                return 2;
            sw->n[i]++;
        }
    } else if (v->type == YAML_MAPPING_NODE) {
        struct sweep_range g = {0};
        if (each_pair(p, v, path, "from, to, step, times", range_pair, &g))
            return 2;
        if (!g.has_from || !g.has_to || g.has_step == g.has_times)
            return perr(p, v, "%s: a range is {from: A, to: B, step: S} or {from: A, to: B, times: F}", path);
        if (g.from > g.to)
            return perr(p, v, "%s: from %g is above to %g", path, g.from, g.to);
        if (g.has_step && !(g.step > 0))
            return perr(p, v, "%s: step must be above 0", path);
        if (g.has_times && !(g.times > 1 && g.from > 0))
            return perr(p, v, "%s: times must be above 1, from above 0", path);
        /* Values from + i * step (not a running sum) or from * times^i, up to `to` give or take rounding. */
        double x = g.from, slack = fabs(g.to) * 1e-9;
        for (int j = 0; x <= g.to + slack; j++) {
            if (sw->n[i] == SPEC_MAX_ROWS)
                return perr(p, v, "%s: more than %d values (a file has at most %d rows)", path, SPEC_MAX_ROWS,
                            SPEC_MAX_ROWS);
            sweep_number(x, sw->value[i][sw->n[i]++], SWEEP_VALUE);
            x = g.has_step ? g.from + (j + 1) * g.step : x * g.times;
        }
    } else {
        return perr(p, v, "%s: expected a list of values or a range {from, to, step | times}", path);
    }
    if (sw->n[i] == 0)
        return perr(p, v, "%s: the list of values is empty", path);
    for (int j = 0; j < i; j++)
        if (!strcmp(sw->name[j], k))
            return perr(p, v, "%s: a second variable called '%s'", path, k);
    sw->nvars++;
    return 0;
}

static int sweep_var(const struct sweep *sw, const char *name, size_t len)
{
    for (int i = 0; i < sw->nvars; i++)
        if (strlen(sw->name[i]) == len && !strncmp(sw->name[i], name, len))
            return i;
    return -1;
}

static int sweep_no_names(void *ctx, const char *name, double *out)
{
    (void)ctx, (void)name, (void)out;
    return -1;
}

static int put(char *out, size_t cap, size_t *len, const char *t, size_t n)
{
    if (*len + n >= cap)
        return -1;
    memcpy(out + *len, t, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

/* t with the combination's values in place of ${VAR} (and in ${...} expressions naming a variable); -1 when
 * the result does not fit. */
static int sweep_text(const struct sweep *sw, const char *t, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    while (*t) {
        const char *open = strstr(t, "${"), *close = open ? strchr(open + 2, '}') : NULL;
        if (!close) /* no more ${...}: the rest as it is */
            return put(out, cap, &len, t, strlen(t));
        if (put(out, cap, &len, t, (size_t)(open - t)))
            return -1;
        const char *in = open + 2;
        size_t n = (size_t)(close - in);
        while (n && (*in == ' ' || *in == '\t'))
            in++, n--;
        while (n && (in[n - 1] == ' ' || in[n - 1] == '\t'))
            n--;
        int var = sweep_var(sw, in, n);
        if (var >= 0) { /* ${VAR}: the value, as written */
            const char *val = sw->value[var][sw->idx[var]];
            if (put(out, cap, &len, val, strlen(val)))
                return -1;
            t = close + 1;
            continue;
        }
        /* An expression: each name that is a variable becomes (value). */
        char ex[SPEC_EXPR];
        size_t el = 0;
        int used = 0;
        ex[0] = '\0';
        for (const char *c = open + 2; c < close;) {
            const char *e = c;
            if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_') {
                while (e < close && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_' ||
                                     (*e >= '0' && *e <= '9') || *e == '.'))
                    e++;
                int v = sweep_var(sw, c, (size_t)(e - c));
                if (v >= 0) {
                    const char *val = sw->value[v][sw->idx[v]];
                    int plain = *val && strspn(val, "0123456789.") == strlen(val); /* else (value) */
                    if ((!plain && put(ex, sizeof(ex), &el, "(", 1)) || put(ex, sizeof(ex), &el, val, strlen(val)) ||
                        (!plain && put(ex, sizeof(ex), &el, ")", 1)))
                        return -1;
                    used = 1;
                    c = e;
                    continue;
                }
            } else if (*c >= '0' && *c <= '9') { /* a number (1e6 is no name) */
                while (e < close && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') ||
                                     *e == '.'))
                    e++;
            } else {
                e++;
            }
            if (put(ex, sizeof(ex), &el, c, (size_t)(e - c)))
                return -1;
            c = e;
        }
        double x;
        char num[SWEEP_VALUE], msg[64];
        if (!used) { /* an expression of the parameters alone: left to them */
            if (put(out, cap, &len, open, (size_t)(close + 1 - open)))
                return -1;
        } else if (lab_expr_eval(ex, sweep_no_names, NULL, &x, msg, sizeof(msg)) == 0) {
            sweep_number(x, num, sizeof(num));
            if (put(out, cap, &len, num, strlen(num)))
                return -1;
        } else if (put(out, cap, &len, "${", 2) || put(out, cap, &len, ex, el) || put(out, cap, &len, "}", 1)) {
            return -1;
        }
        t = close + 1;
    }
    return 0;
}

/* Copies node n of the template into out with the values in place (the `sweep` key left out); the new node's
 * id, or 0 after a message. */
static int sweep_copy(const struct parser *p, const yaml_node_t *n, yaml_document_t *out, const struct sweep *sw,
                      int depth)
{
    if (depth > SWEEP_DEPTH) {
        perr(p, n, "rows: a swept row nests at most %d levels", SWEEP_DEPTH);
        return 0;
    }
    int id = 0;
    if (n->type == YAML_SCALAR_NODE) {
        char text[SPEC_EXPR];
        if (sweep_text(sw, (const char *)n->data.scalar.value, text, sizeof(text))) {
            perr(p, n, "rows: '%s' with the sweep's values in place is over %zu characters",
                 (const char *)n->data.scalar.value, sizeof(text) - 1);
            return 0;
        }
        id = yaml_document_add_scalar(out, NULL, (yaml_char_t *)text, (int)strlen(text), YAML_PLAIN_SCALAR_STYLE);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        id = yaml_document_add_sequence(out, NULL, YAML_FLOW_SEQUENCE_STYLE);
        for (yaml_node_item_t *it = n->data.sequence.items.start; id && it < n->data.sequence.items.top; it++) {
            int c = sweep_copy(p, node(p, *it), out, sw, depth + 1);
            if (!c || !yaml_document_append_sequence_item(out, id, c))
                return 0;
        }
    } else {
        id = yaml_document_add_mapping(out, NULL, YAML_FLOW_MAPPING_STYLE);
        for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; id && pr < n->data.mapping.pairs.top; pr++) {
            const yaml_node_t *k = node(p, pr->key);
            if (depth == 0 && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "sweep"))
                continue;
            int kc = sweep_copy(p, k, out, sw, depth + 1), vc = kc ? sweep_copy(p, node(p, pr->value), out, sw, depth + 1) : 0;
            if (!vc || !yaml_document_append_mapping_pair(out, id, kc, vc))
                return 0;
        }
    }
    if (!id) {
        perr(p, n, "rows: out of memory writing out a sweep");
        return 0;
    }
    yaml_node_t *c = yaml_document_get_node(out, id);
    c->start_mark = n->start_mark;
    c->end_mark = n->end_mark;
    return id;
}

/* A template row (the mapping e, whose `sweep` key is v): every combination of its variables' values, written
 * out as rows. */
static int row_sweep(const struct parser *p, const yaml_node_t *e, const yaml_node_t *v, struct lab_spec *s)
{
    struct sweep *sw = calloc(1, sizeof(*sw));
    if (!sw)
        return perr(p, v, "rows: out of memory");
    char path[32];
    snprintf(path, sizeof(path), "rows[%d].sweep", s->nrows + 1);
    int rc = each_pair(p, v, path, "variable names", sweep_pair, sw);
    if (!rc && sw->nvars == 0)
        rc = perr(p, v, "%s: a sweep needs a variable: sweep: {v: [16, 32, 64]}", path);
    double total = 1;
    for (int i = 0; i < sw->nvars; i++)
        total *= sw->n[i];
    if (!rc && s->nrows + total > SPEC_MAX_ROWS)
        rc = perr(p, v, "%s: %.0f rows, and the file has %d already: a file has at most %d rows", path, total,
                  s->nrows, SPEC_MAX_ROWS);
    for (int k = 0; !rc && k < (int)total; k++) {
        for (int i = sw->nvars - 1, rest = k; i >= 0; i--) { /* the first variable varies slowest */
            sw->idx[i] = rest % sw->n[i];
            rest /= sw->n[i];
        }
        char note[SPEC_TEXT];
        size_t nl = 0;
        note[0] = '\0';
        for (int i = 0; i < sw->nvars; i++)
            nl += (size_t)snprintf(note + nl, sizeof(note) - nl, "%s%s=%s", i ? ", " : "", sw->name[i],
                                   sw->value[i][sw->idx[i]]);
        yaml_document_t out;
        if (!yaml_document_initialize(&out, NULL, NULL, NULL, 1, 1)) {
            rc = perr(p, v, "rows: out of memory");
            break;
        }
        struct parser src = *p, q = *p; /* reading the template, reading the row written out */
        src.note = q.note = note;
        q.doc = &out;
        if (!sweep_copy(&src, e, &out, sw, 0))
            rc = 2;
        else
            rc = row_one(&q, yaml_document_get_node(&out, 1), s);
        yaml_document_delete(&out);
    }
    free(sw);
    return rc;
}

static int rows(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "rows"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it), *sweep = NULL;
        if (e->type == YAML_MAPPING_NODE)
            for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
                const yaml_node_t *k = node(p, pr->key);
                if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "sweep"))
                    sweep = node(p, pr->value);
            }
        int rc = sweep ? row_sweep(p, e, sweep, s) : row_one(p, e, s);
        if (rc)
            return rc;
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
    "codel_drops",  "overflow_drops",
    /* bulk flows: the sender's connection and stack (a row's: its last bulk flow's) */
    "hash_ok", "transfer_ns", "tsq_limit", "tsq_throttles", "held_cwnd_ns", "held_rwnd_ns", "held_nagle_ns",
    "held_cork_ns", "held_tsq_ns", "held_autocork_ns", "held_pacing_ns", "held_device_ns",
    /* rr flows: their measurement window (all connected -> last response; a row's: its last rr flow's) */
    "rr_connections", "rr_max_ns", "rr_wheel_ops_client", "rr_wheel_ops_server", "rr_timer_fires", "rr_probes",
    "rr_rtos", "rr_errors",
    /* pdu flows (held_* above: the server's connection, the one sending the responses) */
    "io_total_ns", "io_p50_ns", "io_p99_ns", "data_segs", "autocork", "holds_cwnd", "holds_rwnd", "holds_nagle",
    "holds_cork", "holds_tsq", "holds_autocork", "holds_pacing", "holds_device",
    /* onoff flows: per burst, first write -> last byte read (a row's: its last onoff flow's) */
    "bursts", "burst_first_ns", "burst_p50_ns", "burst_max_ns", "on_goodput_bps", "burst_cwnd_bytes", NULL};

const char *lab_spec_flow_kind_name(enum spec_flow_kind k)
{
    return k == SPEC_BULK ? "bulk" : k == SPEC_RR ? "rr" : k == SPEC_PDU ? "pdu" : "onoff";
}

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
    if (!strcmp(k, "check"))
        return text_value(p, v, path, x->e->check, sizeof(x->e->check));
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
        int rc = each_pair(p, e, path, "figure, row, flow, min, max, check", expect_pair, &c);
        if (rc)
            return rc;
        if (x->check[0]) { /* an expression over the rows (checked with the others at the end) */
            if (x->figure[0] || c.min || c.max || x->row[0] || x->flow)
                return perr(p, e, "%s: check stands alone (no figure, row, flow, min or max beside it)", path);
            size_t cl = strnlen(x->check, sizeof(x->text) - 1);
            memcpy(x->text, x->check, cl); /* (not snprintf: gcc cannot tell the two fields apart) */
            x->text[cl] = 0;
            s->nexpect++;
            continue;
        }
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

/* ---- parameters, requirements and the report ---- */

static int ident_value(const struct parser *p, const yaml_node_t *n, const char *key, char *out, size_t cap)
{
    if (text_value(p, n, key, out, cap))
        return 2;
    for (const char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (c > out && *c >= '0' && *c <= '9')))
            return perr(p, n, "%s: '%s' is not a name for expressions (letters, digits and '_')", key, out);
    return 0;
}

static int param_parse(enum lab_kind kind, const char *t, uint64_t *u, double *d)
{
    switch (kind) {
    case LAB_UINT: return brisk_parse_uint(t, u);
    case LAB_SIZE: return brisk_parse_size(t, u);
    case LAB_TIME: return brisk_parse_time(t, u);
    case LAB_RATE: return brisk_parse_rate(t, u);
    case LAB_PROB: return brisk_parse_prob(t, d);
    }
    return BRISK_ERR_INVAL;
}

static int param_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_param *pm = ctx;
    if (!strcmp(k, "name"))
        return ident_value(p, v, path, pm->name, sizeof(pm->name));
    if (!strcmp(k, "default"))
        return text_value(p, v, path, pm->dflt, sizeof(pm->dflt));
    if (!strcmp(k, "min"))
        return text_value(p, v, path, pm->min, sizeof(pm->min));
    if (!strcmp(k, "max"))
        return text_value(p, v, path, pm->max, sizeof(pm->max));
    if (!strcmp(k, "help"))
        return text_value(p, v, path, pm->help, sizeof(pm->help));
    if (!strcmp(k, "kind")) {
        const char *t = scalar(p, v, path);
        static const char *const kinds[] = {"uint", "size", "time", "rate", "prob"};
        static const enum lab_kind lk[] = {LAB_UINT, LAB_SIZE, LAB_TIME, LAB_RATE, LAB_PROB};
        for (int i = 0; t && i < 5; i++)
            if (!strcmp(t, kinds[i]))
                return pm->kind = lk[i], 0;
        return t ? perr(p, v, "%s: '%s' is not a kind: uint, size, time, rate or prob", path, t) : 2;
    }
    return -1;
}

static int params(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "params"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (s->nparams == SPEC_MAX_PARAMS)
            return perr(p, e, "params: at most %d", SPEC_MAX_PARAMS);
        struct spec_param *pm = &s->params[s->nparams];
        memset(pm, 0, sizeof(*pm));
        pm->kind = (enum lab_kind)-1;
        char path[32];
        snprintf(path, sizeof(path), "params[%d]", s->nparams + 1);
        if (each_pair(p, e, path, "name, kind, default, help, min, max", param_pair, pm))
            return 2;
        if (!pm->name[0] || !pm->dflt[0] || (int)pm->kind < 0)
            return perr(p, e, "%s: a parameter needs name, kind and default", path);
        uint64_t u = 0, lo = 0, hi = UINT64_MAX;
        double d = 0, dlo = 0, dhi = 1;
        if (param_parse(pm->kind, pm->dflt, &u, &d) != BRISK_OK)
            return perr(p, e, "%s.default: '%s' is not a %s", path, pm->dflt,
                        pm->kind == LAB_PROB ? "probability" : kind_text(pm->kind == LAB_UINT ? K_UINT
                                                                        : pm->kind == LAB_SIZE ? K_SIZE
                                                                        : pm->kind == LAB_TIME ? K_TIME
                                                                                               : K_RATE));
        if ((pm->min[0] && param_parse(pm->kind, pm->min, &lo, &dlo) != BRISK_OK) ||
            (pm->max[0] && param_parse(pm->kind, pm->max, &hi, &dhi) != BRISK_OK))
            return perr(p, e, "%s: min / max are not in the parameter's syntax", path);
        if (pm->kind == LAB_PROB ? d < dlo || d > dhi : u < lo || u > hi)
            return perr(p, e, "%s.default: %s lies outside min..max", path, pm->dflt);
        for (int i = 0; i < s->nparams; i++)
            if (!strcmp(s->params[i].name, pm->name))
                return perr(p, e, "%s: a second parameter called '%s'", path, pm->name);
        s->nparams++;
    }
    return 0;
}

static int require_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_require *q = ctx;
    if (!strcmp(k, "check"))
        return text_value(p, v, path, q->check, sizeof(q->check));
    if (!strcmp(k, "message"))
        return text_value(p, v, path, q->message, sizeof(q->message));
    return -1;
}

static int requires(const struct parser *p, const yaml_node_t *n, struct lab_spec *s)
{
    if (need_list(p, n, "require"))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (s->nrequire == SPEC_MAX_REQUIRE)
            return perr(p, e, "require: at most %d", SPEC_MAX_REQUIRE);
        struct spec_require *q = &s->require[s->nrequire];
        q->line = (int)e->start_mark.line + 1;
        char path[32];
        snprintf(path, sizeof(path), "require[%d]", s->nrequire + 1);
        if (each_pair(p, e, path, "check, message", require_pair, q))
            return 2;
        if (!q->check[0] || !q->message[0])
            return perr(p, e, "%s: a requirement needs check and message", path);
        s->nrequire++;
    }
    return 0;
}

static int col_kind(const struct parser *p, const yaml_node_t *v, const char *path, enum lab_col_kind *out)
{
    static const char *const names[] = {"u64", "double", "pct", "time", "rate", "size", "bool"};
    static const enum lab_col_kind kinds[] = {LAB_COL_U64,  LAB_COL_DOUBLE, LAB_COL_PCT, LAB_COL_TIME,
                                              LAB_COL_RATE, LAB_COL_SIZE,   LAB_COL_BOOL};
    const char *t = scalar(p, v, path);
    for (int i = 0; t && i < 7; i++)
        if (!strcmp(t, names[i]))
            return *out = kinds[i], 0;
    return t ? perr(p, v, "%s: '%s' is not a kind: u64, double, pct, time, rate, size or bool", path, t) : 2;
}

static int col_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_col *c = ctx;
    if (!strcmp(k, "key"))
        return ident_value(p, v, path, c->key, sizeof(c->key));
    if (!strcmp(k, "head"))
        return text_value(p, v, path, c->head, sizeof(c->head));
    if (!strcmp(k, "kind"))
        return col_kind(p, v, path, &c->kind);
    if (!strcmp(k, "value"))
        return text_value(p, v, path, c->value, sizeof(c->value));
    if (!strcmp(k, "hide")) {
        const char *t = scalar(p, v, path);
        if (t && !strcmp(t, "zero"))
            return c->hide = LAB_HIDE_ZERO, 0;
        if (t && !strcmp(t, "always"))
            return c->hide = LAB_HIDE_TEXT, 0;
        if (t && !strcmp(t, "never"))
            return c->hide = 0, 0;
        return t ? perr(p, v, "%s: '%s': expected zero (hidden when every row is 0), always or never", path, t) : 2;
    }
    return -1;
}

static int line_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_line *l = ctx;
    if (!strcmp(k, "key"))
        return ident_value(p, v, path, l->key, sizeof(l->key));
    if (!strcmp(k, "label"))
        return text_value(p, v, path, l->label, sizeof(l->label));
    if (!strcmp(k, "kind"))
        return col_kind(p, v, path, &l->kind);
    if (!strcmp(k, "value"))
        return text_value(p, v, path, l->value, sizeof(l->value));
    return -1;
}

static int series_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_series *se = ctx;
    if (!strcmp(k, "name"))
        return text_value(p, v, path, se->name, sizeof(se->name));
    if (strcmp(k, "x") && strcmp(k, "y"))
        return -1;
    if (need_list(p, v, path))
        return 2;
    int n = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++, n++) {
        yaml_node_t *e = node(p, *it);
        if (n == SPEC_MAX_POINTS)
            return perr(p, e, "%s: at most %d points", path, SPEC_MAX_POINTS);
        if (!strcmp(k, "y")) {
            if (text_value(p, e, path, se->y[n], sizeof(se->y[n])))
                return 2;
            continue;
        }
        const char *t = scalar(p, e, path);
        char *end;
        if (!t)
            return 2;
        se->x[n] = strtod(t, &end);
        if (end == t || *end)
            return perr(p, e, "%s: '%s' is not a number", path, t);
    }
    if (se->n && se->n != n)
        return perr(p, v, "%s: x and y need as many points", path);
    se->n = n;
    return 0;
}

static int plot_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_plot *pl = ctx;
    uint64_t u = 0;
    double unused;
    if (!strcmp(k, "name"))
        return ident_value(p, v, path, pl->name, sizeof(pl->name));
    if (!strcmp(k, "title"))
        return text_value(p, v, path, pl->title, sizeof(pl->title));
    if (!strcmp(k, "xlabel"))
        return text_value(p, v, path, pl->xlabel, sizeof(pl->xlabel));
    if (!strcmp(k, "ylabel"))
        return text_value(p, v, path, pl->ylabel, sizeof(pl->ylabel));
    if (!strcmp(k, "logx") || !strcmp(k, "log2x") || !strcmp(k, "steps") || !strcmp(k, "cumulative")) {
        int rc = value(p, v, path, K_BOOL, &u, &unused);
        *(!strcmp(k, "logx")    ? &pl->logx
          : !strcmp(k, "log2x") ? &pl->log2x
          : !strcmp(k, "steps") ? &pl->steps
                                : &pl->cumulative) = u != 0;
        return rc;
    }
    if (!strcmp(k, "timeline") || !strcmp(k, "cdf")) { /* the rows it draws: a list of names, or all */
        if (pl->timeline || pl->cdf)
            return perr(p, v, "%s: a plot draws timeline or cdf, not both", path);
        *(!strcmp(k, "cdf") ? &pl->cdf : &pl->timeline) = 1;
        if (v->type == YAML_SCALAR_NODE && !strcmp((const char *)v->data.scalar.value, "all"))
            return 0;
        if (need_list(p, v, path))
            return 2;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            if (pl->nrows == SPEC_MAX_ROWS)
                return perr(p, v, "%s: at most %d rows", path, SPEC_MAX_ROWS);
            if (text_value(p, node(p, *it), path, pl->rows[pl->nrows], sizeof(pl->rows[0])))
                return 2;
            pl->nrows++;
        }
        return 0;
    }
    if (!strcmp(k, "series")) {
        if (need_list(p, v, path))
            return 2;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            if (pl->nseries == SPEC_MAX_SERIES)
                return perr(p, v, "%s: at most %d series", path, SPEC_MAX_SERIES);
            if (each_pair(p, node(p, *it), path, "name, x, y", series_pair, &pl->series[pl->nseries]))
                return 2;
            pl->nseries++;
        }
        return 0;
    }
    if (!strcmp(k, "refs")) { /* horizontal reference lines: [{name: ..., y: EXPR}] */
        if (need_list(p, v, path))
            return 2;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            yaml_node_t *e = node(p, *it);
            if (pl->nrefs == 4)
                return perr(p, e, "%s: at most 4 reference lines", path);
            if (need_mapping(p, e, path) || e->data.mapping.pairs.top - e->data.mapping.pairs.start != 2)
                return perr(p, e, "%s: a reference line is {name: TEXT, y: EXPR}", path);
            for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
                const char *key = scalar(p, node(p, pr->key), path);
                if (!key)
                    return 2;
                if (!strcmp(key, "name") ? text_value(p, node(p, pr->value), path, pl->ref_name[pl->nrefs], 64)
                    : !strcmp(key, "y")  ? text_value(p, node(p, pr->value), path, pl->ref_y[pl->nrefs], 96)
                                         : perr(p, e, "%s: a reference line is {name: TEXT, y: EXPR}", path))
                    return 2;
            }
            pl->nrefs++;
        }
        return 0;
    }
    return -1;
}

/* A list of mappings into an array: each item through fn. */
static int items(const struct parser *p, const yaml_node_t *n, const char *where, const char *keys, pair_fn fn,
                 void *arr, size_t size, int max, int *count)
{
    if (need_list(p, n, where))
        return 2;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(p, *it);
        if (*count == max)
            return perr(p, e, "%s: at most %d", where, max);
        char *item = (char *)arr + size * (size_t)*count;
        memset(item, 0, size);
        *(int *)item = (int)e->start_mark.line + 1; /* every item struct begins with its line */
        char path[48];
        snprintf(path, sizeof(path), "%s[%d]", where, *count + 1);
        if (each_pair(p, e, path, keys, fn, item))
            return 2;
        (*count)++;
    }
    return 0;
}

static int value_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_report *rp = ctx;
    if (rp->nvalues == SPEC_MAX_VALUES)
        return perr(p, v, "%s: at most %d values", path, SPEC_MAX_VALUES);
    struct spec_value *sv = &rp->values[rp->nvalues];
    sv->line = (int)v->start_mark.line + 1;
    if (strlen(k) >= sizeof(sv->name))
        return perr(p, v, "%s: a name of at most %zu characters", path, sizeof(sv->name) - 1);
    snprintf(sv->name, sizeof(sv->name), "%s", k);
    if (text_value(p, v, path, sv->expr, sizeof(sv->expr)))
        return 2;
    rp->nvalues++;
    return 0;
}

static int note_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_report *rp = ctx;
    if (strlen(k) >= sizeof(rp->note_key))
        return perr(p, v, "%s: too long a key", path);
    snprintf(rp->note_key, sizeof(rp->note_key), "%s", k);
    return text_value(p, v, path, rp->note, sizeof(rp->note));
}

static int report_pair(const struct parser *p, const char *k, const yaml_node_t *v, const char *path, void *ctx)
{
    struct spec_report *rp = ctx;
    if (!strcmp(k, "title"))
        return text_value(p, v, path, rp->title, sizeof(rp->title));
    if (!strcmp(k, "note"))
        return each_pair(p, v, path, "one KEY: TEXT", note_pair, rp);
    if (!strcmp(k, "columns"))
        return items(p, v, path, "key, head, kind, hide, value", col_pair, rp->cols, sizeof(rp->cols[0]),
                     SPEC_MAX_COLS, &rp->ncols);
    if (!strcmp(k, "lines"))
        return items(p, v, path, "key, label, kind, value", line_pair, rp->lines, sizeof(rp->lines[0]),
                     SPEC_MAX_LINES, &rp->nlines);
    if (!strcmp(k, "values"))
        return each_pair(p, v, path, "NAME: EXPR", value_pair, rp);
    if (!strcmp(k, "headline"))
        return rp->headline_line = (int)v->start_mark.line + 1,
               text_value(p, v, path, rp->headline, sizeof(rp->headline));
    if (!strcmp(k, "expected"))
        return text_value(p, v, path, rp->expected, sizeof(rp->expected));
    if (!strcmp(k, "plots"))
        return items(p, v, path, "name, title, xlabel, ylabel, logx, log2x, steps, cumulative, timeline, cdf, series, refs",
                     plot_pair, rp->plots, sizeof(rp->plots[0]), SPEC_MAX_PLOTS, &rp->nplots);
    return -1;
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
    if (!strcmp(k, "reproduces"))
        return text_value(p, v, path, s->reproduces, sizeof(s->reproduces));
    if (!strcmp(k, "params"))
        return params(p, v, s);
    if (!strcmp(k, "require"))
        return requires(p, v, s);
    if (!strcmp(k, "stack_seed"))
        return s->has_stack_seed = 1, value(p, v, path, K_UINT, &s->stack_seed, &unused);
    if (!strcmp(k, "sample"))
        return value(p, v, path, K_TIME, &s->sample_ns, &unused);
    if (!strcmp(k, "peer")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        s->peer_line = (int)v->start_mark.line + 1;
        if (!strcmp(t, "row"))
            return s->peer = SPEC_PEER_ROW, 0;
        if (!strcmp(t, "run"))
            return s->peer = SPEC_PEER_RUN, 0;
        if (!strcmp(t, "defaults"))
            return s->peer = SPEC_PEER_DEFAULTS, 0;
        return perr(p, v, "%s: '%s': expected row (host b runs each row's settings, the default), run (the "
                    "defaults, --profile and --set only) or defaults (brisk's alone)", path, t);
    }
    if (!strcmp(k, "peer_host") || !strcmp(k, "first") || !strcmp(k, "capture")) {
        const char *t = scalar(p, v, path);
        if (!t)
            return 2;
        if (strcmp(t, "a") && strcmp(t, "b"))
            return perr(p, v, "%s: '%s': expected a or b", path, t);
        s->peer_line = (int)v->start_mark.line + 1;
        *(!strcmp(k, "peer_host") ? &s->peer_host : !strcmp(k, "first") ? &s->first_b : &s->capture_b) = t[0] == 'b';
        return 0;
    }
    if (!strcmp(k, "peer_set"))
        return s->peer_line = (int)v->start_mark.line + 1,
               each_pair(p, v, path, "any stack setting", peer_set_pair, s);
    if (!strcmp(k, "report")) {
        s->report.on = 1;
        return each_pair(p, v, path, "title, note, columns, lines, values, headline, expected, plots", report_pair,
                         &s->report);
    }
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
    if (s->peer_line)
        return lerr(path, err, s->peer_line, "peer: a file with a topology gives each host its profile and set");
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

/* ---- names in expressions (shared with spec_run.c's evaluation) ---- */

int lab_spec_param_index(const struct lab_spec *s, const char *name)
{
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(s->params[i].name, name))
            return i;
    return -1;
}

int lab_spec_figure_index(const char *name)
{
    for (int i = 0; lab_spec_figures[i]; i++)
        if (!strcmp(lab_spec_figures[i], name))
            return i;
    return -1;
}

int lab_spec_setting_index(const char *name)
{
    for (size_t i = 0; i < brisk_settings_count(); i++)
        if (!strcmp(brisk_settings_desc(i)->name, name))
            return (int)i;
    return -1;
}

int lab_spec_col_index(const struct lab_spec *s, const char *name)
{
    for (int i = 0; i < s->report.ncols; i++)
        if (!strcmp(s->report.cols[i].key, name))
            return i;
    return -1;
}

const char *lab_spec_split_row(const struct lab_spec *s, const char *name, int *row)
{
    for (int k = 0; k < s->nrows; k++) {
        size_t n = strlen(s->rows[k].name);
        if (!strncmp(name, s->rows[k].name, n) && name[n] == '.') {
            *row = k;
            return name + n + 1;
        }
    }
    return NULL;
}

/* Check mode: every name that will mean something at run time is 1; the rest are errors. */
struct check_ctx {
    const struct lab_spec *s;
    enum spec_scope scope;
    int nvalues; /* values defined before this one */
};

static int check_lookup(void *ctx, const char *name, double *out)
{
    const struct check_ctx *c = ctx;
    *out = 1;
    if (lab_spec_param_index(c->s, name) >= 0 || !strcmp(name, "family"))
        return 0;
    if (c->scope == SPEC_SCOPE_WORLD)
        return -1;
    for (int i = 0; i < c->nvalues; i++)
        if (!strcmp(c->s->report.values[i].name, name))
            return 0;
    if (!strncmp(name, "set.", 4))
        return lab_spec_setting_index(name + 4) >= 0 ? 0 : -1;
    if (c->scope == SPEC_SCOPE_COLUMN && lab_spec_figure_index(name) >= 0)
        return 0;
    int row;
    const char *rest = lab_spec_split_row(c->s, name, &row);
    if (!rest)
        return -1;
    if (!strncmp(rest, "set.", 4))
        return lab_spec_setting_index(rest + 4) >= 0 ? 0 : -1;
    if (c->scope == SPEC_SCOPE_REPORT && lab_spec_col_index(c->s, rest) >= 0)
        return 0;
    return lab_spec_figure_index(rest) >= 0 ? 0 : -1;
}

static int check_expr(const char *path, FILE *err, int line, const char *what, const char *text,
                      const struct lab_spec *s, enum spec_scope scope, int nvalues, int format)
{
    struct check_ctx c = {s, scope, nvalues};
    char msg[160], out[512];
    double v;
    int rc = format ? lab_expr_format(text, check_lookup, &c, out, sizeof(out), msg, sizeof(msg))
                    : lab_expr_eval(text, check_lookup, &c, &v, msg, sizeof(msg));
    if (rc == 0)
        return 0;
    return lerr(path, err, line, "%s: %s (in '%s'%s)", what, msg, text,
                scope == SPEC_SCOPE_WORLD ? "; ${...} values use the parameters only" : "");
}

/* Every expression of the file, checked once the whole file is read (names may come in any order). */
static int check_exprs(const char *path, FILE *err, struct lab_spec *s)
{
    const struct spec_report *rp = &s->report;
    int rc = 0;
    for (int i = 0; !rc && i < s->nbinds; i++)
        rc = check_expr(path, err, s->binds[i].line, s->binds[i].path, s->binds[i].expr, s, SPEC_SCOPE_WORLD, 0, 0);
    for (int i = 0; !rc && i < s->nrequire; i++)
        rc = check_expr(path, err, s->require[i].line, "require", s->require[i].check, s, SPEC_SCOPE_WORLD, 0, 0);
    for (int i = 0; !rc && i < s->nrows; i++)
        if (s->rows[i].how_fmt[0])
            rc = check_expr(path, err, s->rows[i].line, "how", s->rows[i].how_fmt, s, SPEC_SCOPE_WORLD, 0, 1);
    for (int i = 0; !rc && i < rp->ncols; i++) {
        const struct spec_col *c = &rp->cols[i];
        if (!c->key[0] || !c->head[0])
            return lerr(path, err, c->line, "report.columns[%d]: a column needs key and head", i + 1);
        if (c->value[0])
            rc = check_expr(path, err, c->line, "value", c->value, s, SPEC_SCOPE_COLUMN, 0, 0);
        else if (lab_spec_figure_index(c->key) < 0)
            return lerr(path, err, c->line,
                        "report.columns[%d]: '%s' is no figure: give its value (an expression)", i + 1, c->key);
    }
    for (int i = 0; !rc && i < rp->nvalues; i++)
        rc = check_expr(path, err, rp->values[i].line, rp->values[i].name, rp->values[i].expr, s, SPEC_SCOPE_REPORT,
                        i, 0);
    for (int i = 0; !rc && i < rp->nlines; i++) {
        if (!rp->lines[i].key[0] || !rp->lines[i].label[0] || !rp->lines[i].value[0])
            return lerr(path, err, rp->lines[i].line, "report.lines[%d]: a line needs key, label and value", i + 1);
        rc = check_expr(path, err, rp->lines[i].line, "value", rp->lines[i].value, s, SPEC_SCOPE_REPORT,
                        rp->nvalues, 0);
    }
    for (int i = 0; !rc && i < s->nexpect; i++)
        if (s->expect[i].check[0])
            rc = check_expr(path, err, s->expect[i].line, "check", s->expect[i].check, s, SPEC_SCOPE_REPORT,
                            rp->nvalues, 0);
    if (!rc && rp->headline[0])
        rc = check_expr(path, err, rp->headline_line, "headline", rp->headline, s, SPEC_SCOPE_REPORT, rp->nvalues, 1);
    for (int i = 0; !rc && i < rp->nplots; i++) {
        const struct spec_plot *pl = &rp->plots[i];
        if (!pl->name[0])
            return lerr(path, err, pl->line, "report.plots[%d]: a plot needs a name (its file)", i + 1);
        if ((pl->timeline || pl->cdf) == !!pl->nseries)
            return lerr(path, err, pl->line, "report.plots[%d]: a plot draws timeline, cdf or series (one of them)",
                        i + 1);
        for (int k = 0; k < pl->nrows; k++) {
            int found = 0;
            for (int j = 0; j < s->nrows && !found; j++)
                found = !strcmp(s->rows[j].name, pl->rows[k]);
            if (!found)
                return lerr(path, err, pl->line, "report.plots[%d]: no row is called '%s'", i + 1, pl->rows[k]);
        }
        for (int k = 0; !rc && k < pl->nseries; k++)
            for (int j = 0; !rc && j < pl->series[k].n; j++)
                rc = check_expr(path, err, pl->line, "series y", pl->series[k].y[j], s, SPEC_SCOPE_REPORT,
                                rp->nvalues, 0);
        for (int k = 0; !rc && k < pl->nrefs; k++)
            rc = check_expr(path, err, pl->line, "refs y", pl->ref_y[k], s, SPEC_SCOPE_REPORT, rp->nvalues, 0);
    }
    /* Settings computed from the parameters (NAME: ${EXPR}). */
    for (int k = -1; !rc && k < s->nrows; k++) {
        char(*sets)[96] = k < 0 ? s->peer_sets : s->rows[k].sets;
        int n = k < 0 ? s->npeer_sets : s->rows[k].nsets;
        for (int i = 0; !rc && i < n; i++) {
            const char *eq = strchr(sets[i], '=');
            if (eq && is_bind(eq + 1)) {
                char ex[96];
                snprintf(ex, sizeof(ex), "%.*s", (int)strlen(eq + 1) - 3, eq + 3);
                rc = check_expr(path, err, k < 0 ? s->peer_line : s->rows[k].line, sets[i], ex, s, SPEC_SCOPE_WORLD,
                                0, 0);
            }
        }
    }
    /* A row's flows change the file's, in order and of the same kind. */
    for (int k = 0; !rc && k < s->nrows; k++) {
        const struct spec_row *r = &s->rows[k];
        if (r->nflows > s->nflows)
            return lerr(path, err, r->flows_line, "rows[%d].flows: %d change(s) for %d flow(s)", k + 1, r->nflows,
                        s->nflows);
        for (int i = 0; i < r->nflows; i++)
            if (r->flows[i].kind != s->flows[i].kind)
                return lerr(path, err, r->flows[i].line, "rows[%d].flows[%d]: flow %d is %s %s flow", k + 1, i + 1,
                            i + 1, s->flows[i].kind == SPEC_ONOFF ? "an" : "a",
                            lab_spec_flow_kind_name(s->flows[i].kind));
    }
    return rc;
}

void lab_spec_scenario(const struct lab_spec *s, struct lab_scenario *sc)
{
    struct lab_spec *m = (struct lab_spec *)s; /* the framework's view of the parameters lives in the spec */
    for (int i = 0; i < s->nparams; i++) {
        const struct spec_param *pm = &s->params[i];
        m->lab_params[i] = (struct lab_param){pm->name, pm->kind, pm->dflt, pm->help[0] ? pm->help : pm->name,
                                              pm->min[0] ? pm->min : NULL, pm->max[0] ? pm->max : NULL};
    }
    memset(sc, 0, sizeof(*sc));
    sc->name = s->name;
    sc->summary = s->summary;
    sc->seed = s->reproduces[0] ? s->reproduces : NULL;
    sc->params = s->lab_params;
    sc->nparams = s->nparams;
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
    s->peer_host = 1;
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
    struct parser p = {path, &doc, err, s, NULL};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        rc = perr(&p, NULL, "the file is empty"); else {
        rc = each_pair(&p, root, "", "name, summary, seed, limit, link, nic, hosts, routers, links, flows, rows, expect, reproduces, "
                       "params, require, stack_seed, sample, peer, peer_host, peer_set, first, capture, report",
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
    if (!rc)
        rc = check_exprs(path, err, s);
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
