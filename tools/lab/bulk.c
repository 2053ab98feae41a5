/*
 * bulk.c — one TCP bulk transfer between two simulated hosts: how close does a flow get to line rate, and
 * does every byte arrive?
 *
 * Host a connects to host b over one link (rate, RTT, impairments as parameters) and sends `bytes` (or
 * receives, or both ways at once); the application writes whenever the socket is writable and the receiver
 * checks every byte against the sender's stream (src/sim/app_bulk.c). The report gives goodput from the
 * connection's establishment to the last byte read, as bit/s and as a share of the link rate, the virtual
 * time, retransmissions and timeouts per side, and the byte-exact verdict.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/obs.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"bytes", LAB_SIZE, "100M", "bytes to transfer (per direction)", "1", NULL},
    {"dir", LAB_UINT, "1", "1 = a sends to b, 2 = b sends to a, 3 = both at once", "1", "3"},
    {"rate", LAB_RATE, "10G", "link rate, both directions", "1", NULL},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay (each way half)", NULL, NULL},
    {"loss", LAB_PROB, "0", "random loss probability per frame, both directions", NULL, NULL},
    {"burst", LAB_UINT, "0",
     "loss in runs of up to this many frames within one's wire time (0, 1: independent)", NULL, "1048576"},
    {"reorder", LAB_PROB, "0", "probability a frame is held back (reordering)", NULL, NULL},
    {"reorder_delay", LAB_TIME, "0", "how long a reordered frame is held back (0: rtt/4)", NULL, NULL},
    {"duplicate", LAB_PROB, "0", "probability a frame is delivered twice", NULL, NULL},
    {"corrupt", LAB_PROB, "0", "probability a frame has a byte flipped", NULL, NULL},
    {"write", LAB_SIZE, "64K", "bytes per send() call", "1", "1G"},
    {"seed", LAB_UINT, "1", "world seed (impairments, stack seeds, data)", NULL, NULL},
    {"limit", LAB_TIME, "600s", "give up after this much virtual time", NULL, NULL},
    {"sample", LAB_TIME, "1ms", "throughput sampling interval (plot)", NULL, NULL},
    {"txc_delay", LAB_TIME, "0", "sender NIC: complete transmissions this long after serialization", NULL, NULL},
    {"txc_coalesce", LAB_UINT, "0", "sender NIC: complete in batches of this many frames (0 = off)", NULL, "1048576"},
    {"txc_timeout", LAB_TIME, "10ms", "sender NIC: ... or when the oldest waited this long", NULL, NULL},
    {"tx_ring", LAB_UINT, "1024", "sender NIC: TX descriptors", "1", "1048576"},
    {"gso", LAB_SIZE, "0", "sender NIC: TSO, segmenting super-frames up to this size (0 = MTU frames only)",
     NULL, "65535"},
};

/* Before the transfer runs: the capture (if asked). */
static int prepare(void *ctx, brisk_sim_world *w, brisk_sim_port *a, brisk_sim_bulk *bulk)
{
    (void)w;
    (void)bulk;
    return lab_capture(ctx, a);
}

static void side(struct lab_run *r, const char *key, const char *label, const struct brisk_sim_bulk_side *s)
{
    lab_report_group_begin(r, key, label);
    lab_report_u64(r, "sent", "bytes sent", s->sent);
    lab_report_u64(r, "received", "bytes received", s->received);
    lab_report_u64(r, "retransmits", "segments retransmitted", s->info.retransmits);
    lab_report_u64(r, "rto", "retransmission timeouts", s->info.rto_count);
    lab_report_u64(r, "fast_retransmits", "fast retransmits", s->info.fast_retransmits);
    if (s->info.srtt_ns)
        lab_report_time(r, "srtt_ns", "smoothed RTT", s->info.srtt_ns);
    else /* Karn: no segment was acknowledged without having been retransmitted */
        lab_report_none(r, "srtt_ns", "smoothed RTT", "no sample");
    lab_report_u64(r, "cwnd", "final cwnd (bytes)", s->info.cwnd);
    lab_report_u64(r, "mss", "MSS", s->info.mss);
    lab_report_u64(r, "tsq_limit", "TSQ budget at the end (bytes)", s->info.tsq_limit);
    if (s->error) {
        char text[96];
        snprintf(text, sizeof(text), "%s (%s)", brisk_error_name(s->error), brisk_strerror(s->error));
        if (r->json_out)
            json_i64(&r->j, "error", s->error);
        lab_report_str(r, "error_name", "socket error", text);
    }
    lab_report_group_begin(r, "held_ns", "time data was held back, by reason");
    for (int k = BRISK_HOLD_NONE + 1; k < BRISK_HOLD_COUNT; k++)
        lab_report_time(r, brisk_hold_name(k), brisk_hold_name(k), s->info.hold_ns[k]);
    lab_report_group_end(r);
    lab_report_group_end(r);
}

static int run(struct lab_run *r)
{
    uint64_t bytes = lab_u(r, "bytes"), dir = lab_u(r, "dir"), rate = lab_u(r, "rate"), rtt = lab_u(r, "rtt");
    struct lab_timeline tl = {.every_ns = lab_u(r, "sample")};
    struct lab_flow f = {.rate_bps = rate,
                         .rtt_ns = rtt,
                         .bytes = bytes,
                         .seed = lab_u(r, "seed"),
                         .family = r->family,
                         .dir = (enum brisk_sim_bulk_dir)dir,
                         .write_size = (uint32_t)lab_u(r, "write"),
                         .tx_ring = (uint32_t)lab_u(r, "tx_ring"),
                         .gso_max = (uint32_t)lab_u(r, "gso"),
                         .limit_ns = lab_u(r, "limit"),
                         .prepare = prepare,
                         .ctx = r,
                         .timeline = r->plot_dir ? &tl : NULL,
                         .what = "bulk",
                         .observe = r};
    if (lab_u(r, "txc_coalesce")) {
        f.txc.model = BRISK_SIM_TXC_COALESCE;
        f.txc.frames = (uint32_t)lab_u(r, "txc_coalesce");
        f.txc.timeout_ns = lab_u(r, "txc_timeout");
    } else if (lab_u(r, "txc_delay")) {
        f.txc.model = BRISK_SIM_TXC_DELAY;
        f.txc.delay_ns = lab_u(r, "txc_delay");
    }
    if (lab_p(r, "loss") > 0) {
        f.impair.loss_model = lab_u(r, "burst") > 1 ? BRISK_SIM_LOSS_BURST : BRISK_SIM_LOSS_RANDOM;
        f.impair.loss = lab_p(r, "loss");
        f.impair.burst_len = (uint32_t)lab_u(r, "burst");
    }
    f.impair.reorder = lab_p(r, "reorder");
    f.impair.reorder_delay_ns = lab_u(r, "reorder_delay") ? lab_u(r, "reorder_delay") : rtt / 4;
    f.impair.duplicate = lab_p(r, "duplicate");
    f.impair.corrupt = lab_p(r, "corrupt");
    struct lab_flow_result fr;
    int rc = lab_flow_run(&f, &r->settings, &r->settings, &fr);
    if (rc != 0) {
        lab_timeline_free(&tl);
        return rc;
    }
    const struct brisk_sim_bulk_result res = fr.bulk;
    uint64_t elapsed = fr.elapsed_ns, span = fr.span_ns;
    double gp = fr.goodput_bps;
    char text[160];

    lab_report_begin(r);
    if (r->family == 6) { /* which addresses the flow ran between (an IPv4 report reads as it always did) */
        char ta[BRISK_ADDR_STRLEN + 2], tb[BRISK_ADDR_STRLEN + 2];
        struct brisk_addr a = lab_addr(6, 0x0a000001u), b = lab_addr(6, 0x0a000002u);
        snprintf(text, sizeof(text), "a %s -> b %s:5001", lab_addr_text(&a, ta), lab_addr_text(&b, tb));
        lab_report_str(r, "addresses", "addresses", text);
    }
    /* Complete (every byte, both FINs, no error) and correct (no byte differs) are separate verdicts: a
     * transfer cut short by the limit or a reset is incomplete, yet what it delivered may be correct. */
    if (r->json_out)
        json_bool(&r->j, "hash_ok", res.hash_ok);
    lab_report_bool(r, "complete", "transfer complete", fr.complete);
    if (fr.correct) {
        lab_report_bool(r, "correct", "every byte received correct", 1);
    } else {
        const struct brisk_sim_bulk_side *bad = res.server.bad_at != UINT64_MAX ? &res.server : &res.client;
        snprintf(text, sizeof(text), "no (host %s: first wrong byte at offset %" PRIu64 ")",
                 bad == &res.server ? "b" : "a", bad->bad_at);
        if (r->json_out)
            json_bool(&r->j, "correct", 0);
        lab_report_text(r, "every byte received correct", text);
    }
    snprintf(text, sizeof(text), "%" PRIu64 " of %" PRIu64 " (%.1f %%)", fr.delivered, fr.expected,
             fr.expected ? 100.0 * (double)fr.delivered / (double)fr.expected : 0.0);
    if (r->json_out) {
        json_u64(&r->j, "delivered_bytes", fr.delivered);
        json_u64(&r->j, "expected_bytes", fr.expected);
    }
    lab_report_text(r, "bytes delivered", text);
    lab_report_bool(r, "finished", "ended before the limit", fr.finished);
    if (fr.interrupted)
        lab_report_bool(r, "interrupted", "interrupted (figures are partial)", 1);
    if (span) {
        lab_report_rate(r, "goodput_bps", fr.complete ? "goodput" : "goodput while it ran", gp);
        lab_report_rate(r, "line_rate_bps", "line rate", (double)rate);
        lab_report_double(r, "goodput_pct", "goodput / line rate", 100.0 * gp / (double)rate, "%");
        lab_report_time(r, "transfer_ns", "connect to last byte", span);
    } else {
        lab_report_none(r, "goodput_bps", "goodput", "none (no byte delivered)");
        lab_report_rate(r, "line_rate_bps", "line rate", (double)rate);
    }
    lab_report_time(r, "elapsed_ns", "virtual time elapsed", elapsed);
    lab_report_u64(r, "retransmits", "segments retransmitted",
                   res.client.info.retransmits + res.server.info.retransmits);
    side(r, "a", "host a (client)", &res.client);
    side(r, "b", "host b (server)", &res.server);
    lab_obs_report(r, &fr.obs, NULL, 1, 1);
    lab_obs_free(fr.obs);
    lab_report_end(r);
    if (r->plot_dir && tl.n) {
        struct lab_series ser = {"goodput (both receivers)", tl.t_ms, tl.mbps, tl.n};
        lab_plot(r->plot_dir, "throughput", "bulk: goodput over time", "virtual time (ms)", "Mbit/s", &ser,
                 1);
    }
    lab_timeline_free(&tl);
    /* A run that failed says so, and exits 1 (cmd_run). */
    if (fr.interrupted)
        return 1; /* cmd_run says so */
    if (!fr.complete || !fr.correct) {
        int err = res.client.error ? res.client.error : res.server.error;
        fprintf(stderr, "brisk-lab bulk: FAILED: %s; %" PRIu64 " of %" PRIu64 " bytes delivered",
                fr.correct ? "the transfer did not complete" : "a received byte differs from the one sent",
                fr.delivered, fr.expected);
        if (err)
            fprintf(stderr, "; socket error %s", brisk_error_name(err));
        fprintf(stderr, "%s\n", fr.finished ? "" : "; stopped at the limit");
        return 1;
    }
    return 0;
}

const struct lab_scenario lab_scenario_bulk = {
    .name = "bulk",
    .summary = "one TCP bulk transfer between two simulated hosts",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
