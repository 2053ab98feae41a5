/*
 * xen.c — seed 001 (xen-netfront, 2015): a NIC whose TX completions come late caps a single flow under the
 * Linux 3.19 TSQ rule, limit = min(tcp_limit_output_bytes = 128 KB, max(2 buffers, rate >> 10)): the flow can
 * only keep 128 KB below TCP, and each byte stays there for the completion latency, so it moves about
 * 128 KB per latency (5.5 Gbit/s dom0, 2.8 Gbit/s domU in the report). Letting the limit exceed the sysctl
 * ("patched": max instead of min) gave 8 Gbit/s. brisk's default measures the device's completion latency and
 * holds that much data (x2), so it needs no tuning.
 *
 * One flow per row, same path and NIC; the rows differ only in settings (compatibility profiles).
 */
#include <string.h>

#include "lab/flow.h"
#include "lab/lab.h"

static const struct lab_param params[] = {
    {"latency", LAB_TIME, "190us", "TX-completion delay of the sender's NIC (375us for the domU case)"},
    {"rate", LAB_RATE, "10G", "link rate"},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay"},
    {"bytes", LAB_SIZE, "50M", "bytes per flow"},
    {"seed", LAB_UINT, "1", "world seed"},
};

struct row {
    const char *key, *label, *profile;
    const char *const *extra; /* settings on top of the profile */
};

static const char *const patched[] = {"tcp_tsq_rule=1", NULL}; /* max(cap, rate x hold) instead of min */

static const struct row rows[] = {
    {"linux_3_19", "linux-3.19 (min rule, 128 KB cap)", "linux-3.19", NULL},
    {"patched", "linux-3.19 patched (max rule)", "linux-3.19", patched},
    {"linux_6_x", "linux-6.x (4 MB cap)", "linux-6.x", NULL},
    {"brisk", "brisk (adaptive hold)", "brisk", NULL},
};

static int run(struct lab_run *r)
{
    struct lab_flow f = {.rate_bps = lab_u(r, "rate"),
                         .rtt_ns = lab_u(r, "rtt"),
                         .bytes = lab_u(r, "bytes"),
                         .seed = lab_u(r, "seed"),
                         .tx_ring = 4096};
    if (f.rate_bps == 0 || f.bytes == 0) {
        fprintf(stderr, "brisk-lab xen-tsq: need rate > 0 and bytes > 0\n");
        return 2;
    }
    f.txc.model = BRISK_SIM_TXC_DELAY;
    f.txc.delay_ns = lab_u(r, "latency");
    lab_report_begin(r);
    uint64_t lat = f.txc.delay_ns;
    /* The 3.19 model: 128 KB of truesize per (latency + one frame), in payload terms. */
    double model =
        131072.0 / (1448 + 66 + 790) * 1448 * 8 * 1e9 / ((double)lat + 1514 * 8e9 / (double)f.rate_bps);
    lab_report_rate(r, "model_3_19_bps", "3.19 model: 128 KB per latency", model);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct brisk_settings s = r->settings;
        if (brisk_settings_apply_profile(&s, rows[i].profile) != BRISK_OK)
            return 1;
        for (const char *const *a = rows[i].extra; a && *a; a++)
            brisk_settings_set(&s, *a);
        struct lab_flow_result res;
        if (lab_flow_run(&f, &s, NULL, &res) != 0)
            return 1;
        fprintf(stderr, "brisk-lab xen-tsq: %s done\n", rows[i].label);
        lab_report_group_begin(r, rows[i].key, rows[i].label);
        lab_report_bool(r, "hash_ok", "every byte arrived intact", res.hash_ok);
        lab_report_rate(r, "goodput_bps", "goodput", res.goodput_bps);
        lab_report_double(r, "goodput_pct", "goodput / line rate",
                          100.0 * res.goodput_bps / (double)f.rate_bps, "%");
        lab_report_u64(r, "tsq_limit", "TSQ budget at the end (bytes)", res.sender.tsq_limit);
        lab_report_time(r, "held_tsq_ns", "time held by TSQ", res.sender.hold_ns[BRISK_HOLD_TSQ]);
        lab_report_u64(r, "tsq_throttles", "TSQ throttles", res.counters.TSQThrottles);
        lab_report_group_end(r);
    }
    lab_report_end(r);
    return 0;
}

const struct lab_scenario lab_scenario_xen = {
    .name = "xen-tsq",
    .summary = "seed 001: slow TX completion capped by the 3.19 TSQ rule, beside brisk",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
