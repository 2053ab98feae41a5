/*
 * rr_timers.c — seed 004 (netdev, 2019): 256 parallel netperf TCP_RR flows on 128 CPUs spent over half their
 * time in the timer base's lock, because Linux re-armed the shared RTO / tail-loss-probe timer on every send
 * and ACK. brisk keeps one lazy deadline per connection (src/tcp/timer.c): the wheel moves only when the
 * deadline moves earlier, so a request / response exchange, whose deadlines only ever move later, barely
 * touches it.
 *
 * Rows: the eager discipline (tcp_timer_eager=1, as Linux until 2019) and brisk's lazy one, on the same N
 * flows of 1-byte request / 1-byte response; then both again on one flow with random loss, to show the lazy
 * timers still fire on time (a lost request or response is resent by a tail loss probe at the RTO's time).
 * Columns: transactions, timer-wheel operations per transaction on each host (TCPTimerWheelOps over the
 * measurement window: all flows connected -> last response), wheel expirations per transaction, latency,
 * probes, RTOs.
 */
#include <string.h>

#include "brisk/sim.h"
#include "lab/lab.h"
#include "lab/rrplot.h"
#include "lab/watch.h"

static const struct lab_param params[] = {
    {"flows", LAB_UINT, "256", "parallel request/response flows (clean rows)", "1", "45000"},
    {"transactions", LAB_UINT, "40", "transactions per flow (clean rows)", "1", "100000"},
    {"loss", LAB_PROB, "1%", "frame loss each way (lossy rows)", NULL, NULL},
    {"loss_transactions", LAB_UINT, "2000", "transactions of the one lossy flow", "1", "1000000"},
    {"rate", LAB_RATE, "10G", "link rate", "1", NULL},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay", NULL, NULL},
    {"seed", LAB_UINT, "1", "world seed", NULL, NULL},
};

static const char *const eager[] = {"tcp_timer_eager=1", NULL};

struct row {
    const char *key, *label, *profile;
    const char *const *extra;
    int lossy;
};

static const struct row rows[] = {
    {"eager", "eager (Linux until 2019)", "linux-6.x", eager, 0},
    {"brisk", "brisk (lazy deadlines)", "brisk", NULL, 0},
    {"eager_loss", "eager: 1 flow with loss", "linux-6.x", eager, 1},
    {"brisk_loss", "brisk: 1 flow with loss", "brisk", NULL, 1},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const struct lab_col cols[] = {
    {"flows", "flows", LAB_COL_U64, 0},
    {"transactions", "transactions", LAB_COL_U64, 0},
    {"ops_client", "wheel ops/tx client", LAB_COL_DOUBLE, 0},
    {"ops_server", "wheel ops/tx server", LAB_COL_DOUBLE, 0},
    {"fires", "expiries/tx", LAB_COL_DOUBLE, 0},
    {"lat_p50_ns", "p50", LAB_COL_TIME, 0},
    {"lat_p99_ns", "p99", LAB_COL_TIME, 0},
    {"lat_max_ns", "max", LAB_COL_TIME, 0},
    {"tlp_probes", "probes", LAB_COL_U64, 0},
    {"rtos", "RTOs", LAB_COL_U64, 0},
    {"errors", "failed flows", LAB_COL_U64, LAB_HIDE_ZERO},
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))

static int done(void *ctx)
{
    return brisk_sim_rr_done(ctx);
}

/* One row's world: client a, server b, one link; returns nonzero after a message if it cannot run. */
static int run_row(struct lab_run *r, const struct brisk_settings *s, int lossy,
                   struct brisk_sim_rr_result *out, struct lab_rr_plot *plot)
{
    brisk_sim_world *w = brisk_sim_world_new(lab_u(r, "seed"));
    brisk_sim_host *a = w ? brisk_sim_host_add(w, "client", s) : NULL;
    brisk_sim_host *b = w ? brisk_sim_host_add(w, "server", s) : NULL;
    brisk_sim_port *pa = a ? brisk_sim_nic_add_ip(a, 0x0a000001u, 24, 0) : NULL;
    brisk_sim_port *pb = b ? brisk_sim_nic_add_ip(b, 0x0a000002u, 24, 0) : NULL;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, lab_u(r, "rate"), lab_u(r, "rtt") / 2);
    if (lossy && lab_p(r, "loss") > 0) {
        lc.ab.impair.loss_model = lc.ba.impair.loss_model = BRISK_SIM_LOSS_RANDOM;
        lc.ab.impair.loss = lc.ba.impair.loss = lab_p(r, "loss");
    }
    struct brisk_sim_rr_config rc = {
        .flows = lossy ? 1 : (uint32_t)lab_u(r, "flows"),
        .transactions = (uint32_t)lab_u(r, lossy ? "loss_transactions" : "transactions"),
        .request_size = 1,
        .response_size = 1,
        .nodelay = 1,
    };
    brisk_sim_rr *rr = NULL;
    if (pa && pb && brisk_sim_link_connect(w, pa, pb, &lc) && lab_capture(r, pa) == 0)
        rr = brisk_sim_rr_start(w, a, b, 0x0a000002u, &rc);
    int rc_ = 0;
    struct lab_watch wt;
    lab_watch_init(&wt, w, "rr-timers", done, rr, NULL);
    if (!rr) {
        fprintf(stderr,
                "brisk-lab rr-timers: could not set up the world (flows 1..45000, transactions >= 1)\n");
        rc_ = 1;
    } else if (!brisk_sim_run_while(w, lab_watch_done, &wt, 3600 * BRISK_NSEC_PER_SEC) || wt.interrupted) {
        lab_watch_end(&wt);
        if (!wt.interrupted)
            fprintf(stderr, "brisk-lab rr-timers: did not finish within an hour of virtual time\n");
        rc_ = 1;
    } else {
        lab_watch_end(&wt);
        brisk_sim_rr_result(rr, out);
        lab_rr_plot_keep(plot, rr);
    }
    brisk_sim_rr_free(rr);
    brisk_sim_world_free(w);
    return rc_;
}

static int run(struct lab_run *r)
{
    lab_report_begin(r);
    struct lab_table t;
    lab_table_init(&t, "rows", "1-byte request / 1-byte response, NODELAY (rows)", cols, NCOLS);
    int rc = 0;
    struct lab_rr_plot plot = {0};
    for (size_t k = 0; k < NROWS && rc == 0; k++) {
        struct brisk_settings s;
        struct brisk_sim_rr_result x;
        if (lab_row_settings(r, rows[k].profile, rows[k].extra, &s) != BRISK_OK ||
            run_row(r, &s, rows[k].lossy, &x, r->plot_dir ? &plot : NULL) != 0) {
            rc = 1;
            break;
        }
        fprintf(stderr, "brisk-lab rr-timers: %s done\n", rows[k].label);
        int i = lab_table_row(&t, rows[k].key, rows[k].label);
        lab_table_how(&t, i, rows[k].profile, rows[k].extra, rows[k].lossy ? "one flow, random loss" : NULL);
        double n = x.transactions ? (double)x.transactions : 1;
        lab_table_set(&t, i, "flows", rows[k].lossy ? 1 : (double)lab_u(r, "flows"));
        lab_table_set(&t, i, "transactions", (double)x.transactions);
        lab_table_set(&t, i, "ops_client", (double)x.client_wheel_ops / n);
        lab_table_set(&t, i, "ops_server", (double)x.server_wheel_ops / n);
        lab_table_set(&t, i, "fires", (double)(x.client_timer_fires + x.server_timer_fires) / n);
        lab_table_set(&t, i, "lat_p50_ns", (double)x.lat_p50);
        lab_table_set(&t, i, "lat_p99_ns", (double)x.lat_p99);
        lab_table_set(&t, i, "lat_max_ns", (double)x.lat_max);
        lab_table_set(&t, i, "tlp_probes", (double)x.tlp_probes);
        lab_table_set(&t, i, "rtos", (double)x.rtos);
        lab_table_set(&t, i, "errors", (double)x.errors);
    }
    if (rc == 0) {
        lab_report_table(r, &t);
        double ec = lab_table_get(&t, 0, "ops_client"), es = lab_table_get(&t, 0, "ops_server");
        double bc = lab_table_get(&t, 1, "ops_client"), bs = lab_table_get(&t, 1, "ops_server");
        double want = (double)lab_u(r, "flows") * (double)lab_u(r, "transactions");
        double lossy_want = (double)lab_u(r, "loss_transactions");
        int complete = lab_table_get(&t, 0, "transactions") == want &&
                       lab_table_get(&t, 1, "transactions") == want &&
                       lab_table_get(&t, 2, "transactions") == lossy_want &&
                       lab_table_get(&t, 3, "transactions") == lossy_want;
        /* On time: with loss, brisk's worst transaction is one RTO (200 ms) plus a lost probe's second RTO at
         * most — never a backed-off chain. */
        int on_time = lab_p(r, "loss") == 0 ||
                      (lab_table_get(&t, 3, "tlp_probes") > 0 && lab_table_get(&t, 3, "lat_max_ns") < 402e6);
        lab_report_shape(r, complete && on_time && ec >= 3 && es >= 3 && bc <= 1 && bs <= 1,
                         "eager >= 3 wheel operations per transaction, brisk <= 1; timers on time under loss",
                         "wheel ops per transaction: eager %.2f / %.2f, brisk %.3f / %.3f (client / server)",
                         ec, es, bc, bs);
    }
    if (rc == 0 && r->plot_dir)
        lab_rr_plot_draw(&plot, r, &t);
    lab_rr_plot_free(&plot);
    lab_report_end(r);
    return rc;
}

const struct lab_scenario lab_scenario_rr = {
    .name = "rr-timers",
    .summary = "seed 004: timer re-arms per transaction, eager (Linux 2019) vs brisk's lazy deadlines",
    .seed = "004_4abbfc25c2dd8f5e",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
