/*
 * xen.c — seed 001 (xen-netfront, 2015): a NIC whose TX completions come late caps a single flow under the
 * Linux 3.19 TSQ rule, limit = min(tcp_limit_output_bytes = 128 KB, max(2 buffers, rate >> 10)): the flow can
 * only keep 128 KB below TCP — "two 64 KB skbs in flight", since xen-netfront does TSO — and each stays there
 * for the completion latency, so it moves two super-frames per latency (5.5 Gbit/s domU->dom0, 2.8 Gbit/s
 * domU->domU in the report). Letting the limit exceed the sysctl ("patched": max instead of min) gave
 * 8 Gbit/s. brisk's default measures the device's completion latency and holds that much data (x2), so it
 * needs no tuning.
 *
 * One flow per row, same path and NIC (TSO up to 64 KB super-frames; `gso=0` for MTU frames); the 3.19 and
 * patched rows run at both of the report's cases, a completion latency of `latency` (domU->dom0) and of
 * `latency_domu`, the others at `latency`; the rows differ otherwise only in settings (compatibility
 * profiles). Columns: transfer time, goodput (and % of line rate), the TSQ budget at the end, TSQ throttles,
 * and how long each hold reason held data back over the transfer (brisk_conn_info). Every row that reaches
 * its budget is held by TSQ most of the time — queueing no more than the budget is TSQ's job; what tells the
 * rows apart is whether that budget keeps the link busy.
 */
#include <stdio.h>
#include <string.h>

#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"latency", LAB_TIME, "190us", "TX-completion delay of the sender's NIC, domU->dom0", NULL, NULL},
    {"latency_domu", LAB_TIME, "375us", "TX-completion delay, domU->domU (the 3.19 rows' second case)", NULL,
     NULL},
    {"rate", LAB_RATE, "10G", "link rate", "1", NULL},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay", NULL, NULL},
    {"bytes", LAB_SIZE, "50M", "bytes per flow", "1", NULL},
    {"seed", LAB_UINT, "1", "world seed", NULL, NULL},
    {"gso", LAB_SIZE, "65535", "sender NIC: TSO super-frames up to this size (0 = MTU frames)", NULL, "65535"},
    {"sample", LAB_TIME, "1ms", "throughput sampling interval (plot)", NULL, NULL},
};

struct row {
    const char *key, *label, *profile;
    const char *const *extra; /* settings on top of the profile */
    int domu;                 /* completions `latency_domu` late instead of `latency` */
};

static const char *const patched[] = {"tcp_tsq_rule=floor", NULL}; /* max(cap, rate x hold) instead of min */

/* The 3.19 rows first (the model and the shape read rows 0 and 2), brisk last. */
static const struct row rows[] = {
    {"linux_3_19", "linux-3.19 (min rule: 128 KB cap) to dom0", "linux-3.19", NULL, 0},
    {"patched", "linux-3.19 patched (max rule) to dom0", "linux-3.19", patched, 0},
    {"linux_3_19_domu", "linux-3.19 (min rule) to domU", "linux-3.19", NULL, 1},
    {"patched_domu", "linux-3.19 patched (max rule) to domU", "linux-3.19", patched, 1},
    {"linux_6_x", "linux-6.x (4 MB cap) to dom0", "linux-6.x", NULL, 0},
    {"brisk", "brisk (adaptive hold) to dom0", "brisk", NULL, 0},
};

/* Per hold reason: how long it held data back during the transfer. */
#define HELD_COL(name)                                                                                       \
    {                                                                                                        \
        "held_" name "_ns", name, LAB_COL_TIME, LAB_HIDE_ZERO                                                \
    }

static const struct lab_col cols[] = {
    {"hash_ok", "intact", LAB_COL_BOOL, 0},
    {"transfer_ns", "time", LAB_COL_TIME, 0},
    {"goodput_bps", "goodput", LAB_COL_RATE, 0},
    {"goodput_pct", "% line", LAB_COL_PCT, 0},
    {"tsq_limit", "TSQ budget", LAB_COL_U64, 0},
    {"tsq_throttles", "TSQ throttles", LAB_COL_U64, 0},
    HELD_COL("cwnd"),
    HELD_COL("rwnd"),
    HELD_COL("nagle"),
    HELD_COL("cork"),
    HELD_COL("tsq"),
    HELD_COL("autocork"),
    HELD_COL("pacing"),
    HELD_COL("device"),
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static int prepare(void *ctx, brisk_sim_world *w, brisk_sim_port *a, brisk_sim_bulk *bulk)
{
    (void)w;
    (void)bulk;
    return lab_capture(ctx, a); /* the first row's flow only */
}

/*
 * The 3.19 model: the rate at which a 128 KB cap of truesize lets a flow move data through completions that
 * come `lat` after each frame's serialization. TSQ throttles when the charge exceeds the cap, so with
 * super-frames of charge ts it keeps floor(cap / ts) + 1 of them in flight (two 64 KB frames under 128 KB),
 * each completing lat after its serialization (ser): n frames per (lat + ser). With MTU frames the charge
 * streams, cap / ts frames per (lat + one frame).
 */
static double model_319(const struct brisk_settings *s, uint64_t lat, uint64_t rate, uint32_t gso)
{
    const double mss = 1448, wire = 1514; /* payload and frame bytes of a full segment, timestamps on */
    if (!gso) {
        double truesize = wire + s->tcp_buf_overhead;
        return (double)s->tcp_limit_output_bytes / truesize * mss * 8 * 1e9 / ((double)lat + wire * 8e9 / (double)rate);
    }
    double segs = (double)((gso - 20u - 60u) / 1448u); /* a super-frame's segments (tcp_size_goal's room) */
    double ts = segs * mss + 32 + 20 + 14 + s->tcp_buf_overhead;
    double n = (double)(uint64_t)((double)s->tcp_limit_output_bytes / ts) + 1;
    double ser = segs * wire * 8e9 / (double)rate;
    return n * segs * mss * 8 * 1e9 / ((double)lat + ser);
}

static int run(struct lab_run *r)
{
    struct lab_flow f = {.rate_bps = lab_u(r, "rate"),
                         .rtt_ns = lab_u(r, "rtt"),
                         .bytes = lab_u(r, "bytes"),
                         .seed = lab_u(r, "seed"),
                         .tx_ring = 4096,
                         .gso_max = (uint32_t)lab_u(r, "gso"),
                         .prepare = prepare,
                         .ctx = r,
                         .what = "xen-tsq"};
    f.txc.model = BRISK_SIM_TXC_DELAY;
    uint64_t lat[2] = {lab_u(r, "latency"), lab_u(r, "latency_domu")};
    if (f.gso_max && f.gso_max < 1500) {
        fprintf(stderr, "brisk-lab xen-tsq: gso=%u is smaller than a frame: 0 (MTU frames) or 1500..65535\n",
                f.gso_max);
        return 2;
    }
    struct brisk_settings s319;
    if (lab_row_settings(r, rows[0].profile, rows[0].extra, &s319) != BRISK_OK)
        return 1;
    double model[2] = {model_319(&s319, lat[0], f.rate_bps, f.gso_max),
                       model_319(&s319, lat[1], f.rate_bps, f.gso_max)};
    lab_report_begin(r);
    lab_report_rate(r, "model_3_19_bps", "3.19 model, dom0 latency", model[0]);
    lab_report_rate(r, "model_3_19_domu_bps", "3.19 model, domU latency", model[1]);
    struct lab_table t;
    lab_table_init(&t, "rows", "one bulk flow per row, same NIC (rows)", cols, NCOLS);
    struct lab_timeline tl[NROWS];
    struct lab_series thr[NROWS];
    memset(tl, 0, sizeof(tl));
    int rc = 0;
    for (size_t k = 0; k < NROWS && rc == 0; k++) {
        struct brisk_settings s;
        struct lab_flow_result res;
        tl[k].every_ns = lab_u(r, "sample");
        f.timeline = r->plot_dir ? &tl[k] : NULL;
        f.txc.delay_ns = lat[rows[k].domu];
        if (lab_row_settings(r, rows[k].profile, rows[k].extra, &s) != BRISK_OK ||
            lab_flow_run(&f, &s, NULL, &res) != 0) {
            rc = 1;
            break;
        }
        fprintf(stderr, "brisk-lab xen-tsq: %s done\n", rows[k].label);
        int i = lab_table_row(&t, rows[k].key, rows[k].label);
        char how[64];
        snprintf(how, sizeof(how), "TX completion %.0f us after serialization", (double)f.txc.delay_ns / 1e3);
        lab_table_how(&t, i, rows[k].profile, rows[k].extra, how);
        lab_table_set(&t, i, "hash_ok", res.hash_ok);
        lab_table_set(&t, i, "transfer_ns", (double)res.span_ns);
        lab_table_set(&t, i, "goodput_bps", res.goodput_bps);
        lab_table_set(&t, i, "goodput_pct", 100.0 * res.goodput_bps / (double)f.rate_bps);
        lab_table_set(&t, i, "tsq_limit", (double)res.sender.tsq_limit);
        lab_table_set(&t, i, "tsq_throttles", (double)res.counters.TSQThrottles);
        for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
            char key[40];
            snprintf(key, sizeof(key), "held_%s_ns", brisk_hold_name(h));
            lab_table_set(&t, i, key, (double)res.sender.hold_ns[h]);
        }
        thr[k] = (struct lab_series){rows[k].label, tl[k].t_ms, tl[k].mbps, tl[k].n};
    }
    if (rc == 0) {
        lab_report_table(r, &t);
        double g[2] = {lab_table_get(&t, 0, "goodput_bps"), lab_table_get(&t, 2, "goodput_bps")};
        double pb = lab_table_get(&t, (int)NROWS - 1, "goodput_pct");
        int intact = 1, on_model = 1;
        for (int i = 0; i < t.nrows; i++)
            intact &= lab_table_get(&t, i, "hash_ok") != 0;
        for (int i = 0; i < 2; i++)
            on_model &= g[i] >= 0.85 * model[i] && g[i] <= 1.15 * model[i];
        lab_report_shape(r, intact && on_model && pb >= 90,
                         "linux-3.19 ~ its cap per completion latency at both latencies (within 15%); brisk >= "
                         "90% of line rate",
                         "linux-3.19 %.2f / %.2f Gbit/s (report 5.5 / 2.8) vs model %.2f / %.2f; brisk %.1f%% of "
                         "line rate",
                         g[0] / 1e9, g[1] / 1e9, model[0] / 1e9, model[1] / 1e9, pb);
    }
    lab_report_end(r);
    if (rc == 0 && r->plot_dir) {
        struct lab_plot_opts po = {.nrefs = 3,
                                   .refs = {{"line rate", (double)f.rate_bps / 1e6},
                                            {"3.19 model, dom0 latency", model[0] / 1e6},
                                            {"3.19 model, domU latency", model[1] / 1e6}}};
        lab_plot_ex(r->plot_dir, "throughput", "xen-tsq: goodput over time per row", "virtual time (ms)",
                    "Mbit/s", thr, NROWS, &po);
    }
    for (size_t k = 0; k < NROWS; k++)
        lab_timeline_free(&tl[k]);
    return rc;
}

const struct lab_scenario lab_scenario_xen = {
    .name = "xen-tsq",
    .summary = "seed 001: slow TX completion capped by the 3.19 TSQ rule, beside brisk",
    .seed = "001_cd98dec3b40c8800",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
