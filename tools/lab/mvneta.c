/*
 * mvneta.c — seed 003 (Armada 370 / mvneta, GbE): the driver reclaimed TX descriptors only after 16 frames
 * or a 10 ms timer. With a small TSQ budget fewer than 16 frames fit below TCP, so every batch waits for the
 * timer and the flow collapses (4.76 MB/s at tcp_limit_output_bytes = 32 KB in the report, recovering by
 * 128 KB). The sweep runs the Linux 3.12 rules (a static cap, no shortcut) at each cap, then brisk's rules at
 * the same caps, then brisk's default (4 MB ceiling) on the same NIC. A cap "allows" line rate once it holds
 * a whole completion batch (frames x truesize, 16 x 2304 B = 36 KB): below that no rule can avoid the timer.
 * The plot puts the report's own figures beside the lab's (a reference, not an input: nothing is fitted).
 * (The report's send-window column depends on CPU caches the lab does not model.)
 */
#include <stdio.h>
#include <string.h>

#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"rate", LAB_RATE, "1G", "link rate", "1", NULL},
    {"rtt", LAB_TIME, "200us", "round-trip propagation delay", NULL, NULL},
    {"frames", LAB_UINT, "16", "completion batch: frames", "1", "4096"},
    {"timeout", LAB_TIME, "10ms", "completion batch: timer", NULL, NULL},
    {"bytes", LAB_SIZE, "5M", "bytes per flow", "1", NULL},
    {"seed", LAB_UINT, "1", "world seed", NULL, NULL},
    {"sample", LAB_TIME, "1ms", "throughput sampling interval (plot)", NULL, NULL},
};

static const uint32_t caps_kb[] = {32, 64, 128, 256, 512};
/* The report's MB/s at each cap (256 KB send window, Armada 370): drawn as a reference curve only. */
static const double reported_mbs[] = {4.76, 32.1, 56.2, 58.5, 59.3};
#define NCAPS (sizeof(caps_kb) / sizeof(caps_kb[0]))
#define NROWS (2 * NCAPS + 1)

#define HELD_COL(name)                                                                                       \
    {                                                                                                        \
        "held_" name "_ns", name, LAB_COL_TIME, LAB_HIDE_ZERO                                                \
    }

static const struct lab_col cols[] = {
    {"hash_ok", "intact", LAB_COL_BOOL, 0},
    {"cap", "cap", LAB_COL_SIZE, 0},
    {"transfer_ns", "time", LAB_COL_TIME, 0},
    {"goodput_bps", "goodput", LAB_COL_RATE, 0},
    {"goodput_MBps", "MB/s", LAB_COL_DOUBLE, 0},
    {"goodput_pct", "% line", LAB_COL_PCT, 0},
    {"tsq_throttles", "TSQ throttles", LAB_COL_U64, 0},
    HELD_COL("cwnd"),
    HELD_COL("rwnd"),
    HELD_COL("tsq"),
    HELD_COL("pacing"),
    HELD_COL("device"),
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))

static int prepare(void *ctx, brisk_sim_world *w, brisk_sim_port *a, brisk_sim_bulk *bulk)
{
    (void)w;
    (void)bulk;
    return lab_capture(ctx, a); /* the first row's flow only: 3.12 rules at 32 KB, the collapse */
}

static void fill(struct lab_table *t, int i, uint64_t cap, const struct lab_flow_result *res, uint64_t rate)
{
    lab_table_set(t, i, "hash_ok", res->hash_ok);
    lab_table_set(t, i, "cap", (double)cap);
    lab_table_set(t, i, "transfer_ns", (double)res->span_ns);
    lab_table_set(t, i, "goodput_bps", res->goodput_bps);
    lab_table_set(t, i, "goodput_MBps", res->goodput_bps / 8e6);
    lab_table_set(t, i, "goodput_pct", 100.0 * res->goodput_bps / (double)rate);
    lab_table_set(t, i, "tsq_throttles", (double)res->counters.TSQThrottles);
    lab_table_set(t, i, "held_cwnd_ns", (double)res->sender.hold_ns[BRISK_HOLD_CWND]);
    lab_table_set(t, i, "held_rwnd_ns", (double)res->sender.hold_ns[BRISK_HOLD_RWND]);
    lab_table_set(t, i, "held_tsq_ns", (double)res->sender.hold_ns[BRISK_HOLD_TSQ]);
    lab_table_set(t, i, "held_pacing_ns", (double)res->sender.hold_ns[BRISK_HOLD_PACING]);
    lab_table_set(t, i, "held_device_ns", (double)res->sender.hold_ns[BRISK_HOLD_DEVICE]);
}

static int run(struct lab_run *r)
{
    struct lab_flow f = {.rate_bps = lab_u(r, "rate"),
                         .rtt_ns = lab_u(r, "rtt"),
                         .bytes = lab_u(r, "bytes"),
                         .seed = lab_u(r, "seed"),
                         .tx_ring = 532 /* mvneta's default TX queue size */,
                         .prepare = prepare,
                         .ctx = r};
    f.txc.model = BRISK_SIM_TXC_COALESCE;
    f.txc.frames = (uint32_t)lab_u(r, "frames");
    f.txc.timeout_ns = lab_u(r, "timeout");
    lab_report_begin(r);
    struct lab_table t;
    lab_table_init(&t, "rows",
                   "tcp_limit_output_bytes sweep: linux-3.12 rules, brisk's rules, brisk's default", cols,
                   NCOLS);
    double x[NCAPS], y312[NCAPS], yb[NCAPS], yrep[NCAPS];
    struct lab_timeline tl[NCAPS + 1];
    struct lab_series thr[NCAPS + 1];
    memset(tl, 0, sizeof(tl));
    int rc = 0;
    for (size_t k = 0; k < NROWS && rc == 0; k++) {
        /* Rows 0..NCAPS-1: linux-3.12 at each cap; then brisk at each cap; then brisk's default. */
        int is312 = k < NCAPS, dflt = k == NROWS - 1;
        size_t ci = k % NCAPS;
        char cap[32], key[32], label[64];
        snprintf(cap, sizeof(cap), "tcp_limit_output_bytes=%uK", caps_kb[ci]);
        const char *const extra[] = {cap, NULL};
        struct brisk_settings s;
        if (lab_row_settings(r, is312 ? "linux-3.12" : "brisk", dflt ? NULL : extra, &s) != BRISK_OK) {
            rc = 1;
            break;
        }
        struct lab_timeline *tk = is312 ? &tl[ci] : dflt ? &tl[NCAPS] : NULL;
        if (tk)
            tk->every_ns = lab_u(r, "sample");
        f.timeline = r->plot_dir ? tk : NULL;
        struct lab_flow_result res;
        if (lab_flow_run(&f, &s, NULL, &res) != 0) {
            rc = 1;
            break;
        }
        if (dflt) {
            snprintf(key, sizeof(key), "brisk_default");
            snprintf(label, sizeof(label), "brisk default");
        } else {
            snprintf(key, sizeof(key), "%s_cap_%uK", is312 ? "linux_3_12" : "brisk", caps_kb[ci]);
            snprintf(label, sizeof(label), "%s cap %u KB", is312 ? "linux-3.12" : "brisk", caps_kb[ci]);
        }
        int i = lab_table_row(&t, key, label);
        lab_table_how(&t, i, is312 ? "linux-3.12" : "brisk", dflt ? NULL : extra, NULL);
        fill(&t, i, s.tcp_limit_output_bytes, &res, f.rate_bps);
        if (tk)
            thr[tk - tl] = (struct lab_series){is312 ? "" : "brisk default", tk->t_ms, tk->mbps, tk->n};
        fprintf(stderr, "brisk-lab mvneta: %s done\n", label);
    }
    char thr_names[NCAPS][32];
    if (rc == 0) {
        lab_report_table(r, &t);
        for (size_t i = 0; i < NCAPS; i++) {
            x[i] = caps_kb[i];
            /* Mbit/s, the unit of every lab plot (the report's MB/s x 8). */
            y312[i] = lab_table_get(&t, (int)i, "goodput_bps") / 1e6;
            yb[i] = lab_table_get(&t, (int)(NCAPS + i), "goodput_bps") / 1e6;
            yrep[i] = reported_mbs[i] * 8;
            snprintf(thr_names[i], sizeof(thr_names[i]), "linux-3.12 cap %u KB", caps_kb[i]);
            thr[i].name = thr_names[i];
        }
        /* The shape: 3.12 collapses at 32 KB and is back by 128 KB; brisk >= 90 % wherever its cap holds a
         * completion batch. */
        double batch = (double)lab_u(r, "frames") * (1514.0 + r->settings.tcp_buf_overhead);
        double p32 = lab_table_get(&t, 0, "goodput_pct"), p128 = lab_table_get(&t, 2, "goodput_pct");
        double bmin = 100;
        int intact = 1;
        for (size_t i = 0; i < NROWS; i++) {
            intact &= lab_table_get(&t, (int)i, "hash_ok") != 0;
            if (i >= NCAPS && lab_table_get(&t, (int)i, "cap") >= batch &&
                lab_table_get(&t, (int)i, "goodput_pct") < bmin)
                bmin = lab_table_get(&t, (int)i, "goodput_pct");
        }
        lab_report_shape(r, intact && p32 < 10 && p128 > 80 && bmin >= 90,
                         "3.12 rules collapse at 32 KB (< 10%) and recover by 128 KB (> 80%); brisk >= 90% "
                         "wherever its cap holds a completion batch",
                         "linux-3.12: %.1f%% of line rate at 32 KB, %.1f%% at 128 KB; brisk at least %.1f%% "
                         "where the cap allows (>= %.0f KB)",
                         p32, p128, bmin, batch / 1024);
    }
    lab_report_end(r);
    if (rc == 0 && r->plot_dir) {
        struct lab_series ser[3] = {{"linux-3.12 rules (lab)", x, y312, NCAPS},
                                    {"brisk rules (lab)", x, yb, NCAPS},
                                    {"reported: Armada 370, 256 KB window", x, yrep, NCAPS}};
        struct lab_plot_opts sweep = {.log2x = 1, .nrefs = 1, .refs = {{"line rate", (double)f.rate_bps / 1e6}}};
        lab_plot_ex(r->plot_dir, "limit_sweep", "mvneta: goodput vs tcp_limit_output_bytes (coalesced completion)",
                    "tcp_limit_output_bytes (KB, doubling)", "Mbit/s", ser, 3, &sweep);
        struct lab_plot_opts logx = {.logx = 1, .steps = 0};
        lab_plot_ex(r->plot_dir, "throughput", "mvneta: goodput over time (linux-3.12 caps, brisk default)",
                    "virtual time (ms, log scale)", "Mbit/s", thr, NCAPS + 1, &logx);
    }
    for (size_t k = 0; k <= NCAPS; k++)
        lab_timeline_free(&tl[k]);
    return rc;
}

const struct lab_scenario lab_scenario_mvneta = {
    .name = "mvneta",
    .summary = "seed 003: coalesced TX completion on GbE starving a small TSQ budget, beside brisk",
    .seed = "003_a294ab22193c465d",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
