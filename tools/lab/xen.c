/*
 * xen.c — seed 001 (xen-netfront, 2015): a NIC whose TX completions come late caps a single flow under the
 * Linux 3.19 TSQ rule, limit = min(tcp_limit_output_bytes = 128 KB, max(2 buffers, rate >> 10)): the flow can
 * only keep 128 KB below TCP, and each byte stays there for the completion latency, so it moves about
 * 128 KB per latency (5.5 Gbit/s dom0, 2.8 Gbit/s domU in the report). Letting the limit exceed the sysctl
 * ("patched": max instead of min) gave 8 Gbit/s. brisk's default measures the device's completion latency and
 * holds that much data (x2), so it needs no tuning.
 *
 * One flow per row, same path and NIC; the rows differ only in settings (compatibility profiles). Columns:
 * transfer time, goodput (and % of line rate), the TSQ budget at the end, TSQ throttles, and how long each
 * hold reason held data back over the transfer (brisk_conn_info). Every row that reaches its budget is held
 * by TSQ most of the time — queueing no more than the budget is TSQ's job; what tells the rows apart is
 * whether that budget keeps the link busy: the 3.19 row is held for its whole, three times longer, transfer.
 */
#include <string.h>

#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"latency", LAB_TIME, "190us", "TX-completion delay of the sender's NIC (375us for the domU case)", NULL, NULL},
    {"rate", LAB_RATE, "10G", "link rate", "1", NULL},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay", NULL, NULL},
    {"bytes", LAB_SIZE, "50M", "bytes per flow", "1", NULL},
    {"seed", LAB_UINT, "1", "world seed", NULL, NULL},
    {"sample", LAB_TIME, "1ms", "throughput sampling interval (plot)", NULL, NULL},
};

struct row {
    const char *key, *label, *profile;
    const char *const *extra; /* settings on top of the profile */
};

static const char *const patched[] = {"tcp_tsq_rule=1", NULL}; /* max(cap, rate x hold) instead of min */

static const struct row rows[] = {
    {"linux_3_19", "linux-3.19 (min rule: 128 KB cap)", "linux-3.19", NULL},
    {"patched", "linux-3.19 patched (max rule)", "linux-3.19", patched},
    {"linux_6_x", "linux-6.x (4 MB cap)", "linux-6.x", NULL},
    {"brisk", "brisk (adaptive hold)", "brisk", NULL},
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

static int run(struct lab_run *r)
{
    struct lab_flow f = {.rate_bps = lab_u(r, "rate"),
                         .rtt_ns = lab_u(r, "rtt"),
                         .bytes = lab_u(r, "bytes"),
                         .seed = lab_u(r, "seed"),
                         .tx_ring = 4096,
                         .prepare = prepare,
                         .ctx = r};
    f.txc.model = BRISK_SIM_TXC_DELAY;
    f.txc.delay_ns = lab_u(r, "latency");
    uint64_t lat = f.txc.delay_ns;
    /* The 3.19 model: the row's cap (128 KB unless --set) of truesize per (latency + one frame), in payload
     * terms: a full frame carries 1448 payload bytes (timestamps on) and costs 1514 + tcp_buf_overhead. */
    struct brisk_settings s319;
    if (lab_row_settings(r, rows[0].profile, rows[0].extra, &s319) != BRISK_OK)
        return 1;
    double truesize = 1514.0 + s319.tcp_buf_overhead;
    double model = (double)s319.tcp_limit_output_bytes / truesize * 1448 * 8 * 1e9 /
                   ((double)lat + 1514 * 8e9 / (double)f.rate_bps);
    lab_report_begin(r);
    lab_report_rate(r, "model_3_19_bps", "3.19 model: cap / latency", model);
    struct lab_table t;
    lab_table_init(&t, "rows", "one bulk flow per profile, same NIC (rows)", cols, NCOLS);
    struct lab_timeline tl[NROWS];
    struct lab_series thr[NROWS];
    memset(tl, 0, sizeof(tl));
    int rc = 0;
    for (size_t k = 0; k < NROWS && rc == 0; k++) {
        struct brisk_settings s;
        struct lab_flow_result res;
        tl[k].every_ns = lab_u(r, "sample");
        f.timeline = r->plot_dir ? &tl[k] : NULL;
        if (lab_row_settings(r, rows[k].profile, rows[k].extra, &s) != BRISK_OK ||
            lab_flow_run(&f, &s, NULL, &res) != 0) {
            rc = 1;
            break;
        }
        fprintf(stderr, "brisk-lab xen-tsq: %s done\n", rows[k].label);
        int i = lab_table_row(&t, rows[k].key, rows[k].label);
        lab_table_how(&t, i, rows[k].profile, rows[k].extra, NULL);
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
        double g319 = lab_table_get(&t, 0, "goodput_bps"), pb = lab_table_get(&t, 3, "goodput_pct");
        int intact = 1;
        for (int i = 0; i < t.nrows; i++)
            intact &= lab_table_get(&t, i, "hash_ok") != 0;
        lab_report_shape(r, intact && g319 >= 0.85 * model && g319 <= 1.15 * model && pb >= 90,
                         "linux-3.19 ~ 128 KB / completion latency (within 15%); brisk >= 90% of line rate",
                         "linux-3.19 %.2f Gbit/s vs model %.2f (%+.1f%%); brisk %.1f%% of line rate",
                         g319 / 1e9, model / 1e9, 100 * (g319 / model - 1), pb);
    }
    lab_report_end(r);
    if (rc == 0 && r->plot_dir)
        lab_plot(r->plot_dir, "throughput", "xen-tsq: goodput over time per profile (190 us TX completions)",
                 "virtual time (ms)", "Mbit/s", thr, NROWS);
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
