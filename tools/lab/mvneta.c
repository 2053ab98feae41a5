/*
 * mvneta.c — seed 003 (Armada 370 / mvneta, GbE): the driver reclaimed TX descriptors only after 16 frames
 * or a 10 ms timer. With a small TSQ budget fewer than 16 frames fit below TCP, so every batch waits for the
 * timer and the flow collapses (4.76 MB/s at tcp_limit_output_bytes = 32 KB in the report, recovering by
 * 128 KB). The sweep runs the Linux 3.12 rules (a static cap, no shortcut) at each cap, then brisk's default
 * on the same NIC. (The report's send-window column depends on CPU caches the lab does not model.)
 */
#include <stdio.h>
#include <string.h>

#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"rate", LAB_RATE, "1G", "link rate"},
    {"rtt", LAB_TIME, "200us", "round-trip propagation delay"},
    {"frames", LAB_UINT, "16", "completion batch: frames"},
    {"timeout", LAB_TIME, "10ms", "completion batch: timer"},
    {"bytes", LAB_SIZE, "5M", "bytes per flow"},
    {"seed", LAB_UINT, "1", "world seed"},
};

static const uint32_t caps_kb[] = {32, 64, 128, 256, 512};
#define NCAPS (sizeof(caps_kb) / sizeof(caps_kb[0]))

static int run(struct lab_run *r)
{
    struct lab_flow f = {.rate_bps = lab_u(r, "rate"),
                         .rtt_ns = lab_u(r, "rtt"),
                         .bytes = lab_u(r, "bytes"),
                         .seed = lab_u(r, "seed"),
                         .tx_ring = 532 /* mvneta's default TX queue size */};
    if (f.rate_bps == 0 || f.bytes == 0 || lab_u(r, "frames") == 0 || lab_u(r, "frames") > 4096) {
        fprintf(stderr, "brisk-lab mvneta: need rate > 0, bytes > 0, 0 < frames <= 4096\n");
        return 2;
    }
    f.txc.model = BRISK_SIM_TXC_COALESCE;
    f.txc.frames = (uint32_t)lab_u(r, "frames");
    f.txc.timeout_ns = lab_u(r, "timeout");
    double x[NCAPS], y[NCAPS], yb[NCAPS];
    lab_report_begin(r);
    lab_report_group_begin(r, "linux_3_12", "linux-3.12 rules, tcp_limit_output_bytes sweep");
    for (size_t i = 0; i < NCAPS; i++) {
        struct brisk_settings s = r->settings;
        brisk_settings_apply_profile(&s, "linux-3.12");
        s.tcp_limit_output_bytes = caps_kb[i] * 1024u;
        struct lab_flow_result res;
        if (lab_flow_run(&f, &s, NULL, &res) != 0)
            return 1;
        char key[32], label[64];
        snprintf(key, sizeof(key), "cap_%uK", caps_kb[i]);
        snprintf(label, sizeof(label), "cap %u KB", caps_kb[i]);
        lab_report_group_begin(r, key, label);
        lab_report_bool(r, "hash_ok", "every byte arrived intact", res.hash_ok);
        lab_report_rate(r, "goodput_bps", "goodput", res.goodput_bps);
        lab_report_double(r, "goodput_pct", "goodput / line rate",
                          100.0 * res.goodput_bps / (double)f.rate_bps, "%");
        lab_report_time(r, "held_tsq_ns", "time held by TSQ", res.sender.hold_ns[BRISK_HOLD_TSQ]);
        lab_report_group_end(r);
        x[i] = caps_kb[i];
        y[i] = res.goodput_bps / 8e6; /* MB/s, as the report */
        fprintf(stderr, "brisk-lab mvneta: cap %u KB done\n", caps_kb[i]);
    }
    lab_report_group_end(r);
    struct lab_flow_result bres;
    if (lab_flow_run(&f, &r->settings, NULL, &bres) != 0)
        return 1;
    lab_report_group_begin(r, "brisk", "brisk default (same NIC)");
    lab_report_bool(r, "hash_ok", "every byte arrived intact", bres.hash_ok);
    lab_report_rate(r, "goodput_bps", "goodput", bres.goodput_bps);
    lab_report_double(r, "goodput_pct", "goodput / line rate", 100.0 * bres.goodput_bps / (double)f.rate_bps,
                      "%");
    lab_report_group_end(r);
    lab_report_end(r);
    if (r->plot_dir) {
        for (size_t i = 0; i < NCAPS; i++)
            yb[i] = bres.goodput_bps / 8e6;
        struct lab_series ser[2] = {{"linux-3.12 rules", x, y, NCAPS}, {"brisk default", x, yb, NCAPS}};
        lab_plot(r->plot_dir, "limit_sweep",
                 "mvneta: goodput vs tcp_limit_output_bytes (coalesced completion)",
                 "tcp_limit_output_bytes (KB)", "MB/s", ser, 2);
    }
    return 0;
}

const struct lab_scenario lab_scenario_mvneta = {
    .name = "mvneta",
    .summary = "seed 003: coalesced TX completion on GbE starving a small TSQ budget, beside brisk",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
