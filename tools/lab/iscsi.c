/*
 * iscsi.c — seed 000 (iSCSI over a Linux 3.14-rc2 target, 2014): auto-corking against TCP_NODELAY.
 *
 * The report: creating a 500 GB VMFS file system took 4 s with tcp_autocorking=0 and 2 min 24 s with it on.
 * The capture shows why. For each read the target sends a 48-byte PDU header and then the 512-byte payload,
 * two sends on a TCP_NODELAY socket. The header leaves; the payload is auto-corked because the header is
 * still below TCP (not yet completed by the NIC). On TX completion the 3.14-rc kernels resumed the socket
 * with Nagle forced on (tcp_tsq_handler passed nonagle = 0; fixed by bf06200e732d), so the 512 bytes then
 * waited for the ACK of the 48-byte segment — and the initiator delays that ACK (111 ms in the capture).
 * Every I/O paid one delayed ACK. Eric Dumazet's advice for the application: MSG_MORE on the header, so
 * header and payload leave as one segment.
 *
 * The lab runs `ios` sequential reads at queue depth 1 between an initiator and a target host on one link:
 * the initiator sends a 48-byte command, the target answers with header + payload, the initiator sends the
 * next command when the whole response has arrived. The target runs each row's profile; the initiator runs
 * the defaults (plus --set) with its delayed-ACK timer fixed at `delack` (tcp_delack_min = tcp_delack_max),
 * standing in for the ESXi initiator of the report. Rows: linux-3.14-rc2 with auto-corking on and off,
 * linux-3.14 (both fixes), brisk, and MSG_MORE on the header (on brisk and on the buggy kernel).
 *
 * Figures per row: time for all I/Os, time per I/O (mean, median, 99th percentile), I/Os per second, the
 * slowdown against auto-corking off, data segments per I/O (the target's TCPOrigDataSent), the target's
 * TCPAutoCorking counter, and the hold reasons of the target's connection (brisk_conn_info: how often and,
 * per I/O, how long each reason held the response back) — the rc2 row shows autocork, then nagle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"
#include "lab/watch.h"

static const struct lab_param params[] = {
    {"ios", LAB_UINT, "200", "sequential reads (queue depth 1)", "1", "100000"},
    {"cmd", LAB_SIZE, "48", "initiator's command bytes per I/O", "1", "256"},
    {"hdr", LAB_SIZE, "48", "target's PDU header bytes (first send)", "1", "4096"},
    {"data", LAB_SIZE, "512", "target's payload bytes (second send)", "1", "4096"},
    {"delack", LAB_TIME, "111ms", "initiator's delayed-ACK timer (111 ms in the seed's capture)", "1ns", "10s"},
    {"rate", LAB_RATE, "10G", "link rate", "1", NULL},
    {"rtt", LAB_TIME, "100us", "round-trip propagation delay", NULL, NULL},
    {"sample", LAB_TIME, "1ms", "throughput sampling interval (plot)", NULL, NULL},
    {"seed", LAB_UINT, "1", "world seed", NULL, NULL},
};

#define INI_IP  0x0a000001u /* 10.0.0.1, the initiator */
#define TGT_IP  0x0a000002u /* 10.0.0.2, the target */
#define TGT_PRT 3260

struct row {
    const char *key, *label, *profile;
    const char *const *extra; /* settings on top of the profile and the user's --set */
    int msg_more;             /* the target sets MSG_MORE on the header */
};

static const char *const autocork_off[] = {"tcp_autocorking=0", NULL};

static const struct row rows[] = {
    {"rc2_autocork", "linux-3.14-rc2 autocork on", "linux-3.14-rc2", NULL, 0},
    {"rc2_autocork_off", "linux-3.14-rc2 autocorking=0", "linux-3.14-rc2", autocork_off, 0},
    {"linux_3_14", "linux-3.14 (fixed)", "linux-3.14", NULL, 0},
    {"brisk", "brisk", "brisk", NULL, 0},
    {"brisk_msg_more", "brisk + MSG_MORE on header", "brisk", NULL, 1},
    {"rc2_msg_more", "3.14-rc2 + MSG_MORE on header", "linux-3.14-rc2", NULL, 1},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))
enum { ROW_RC2, ROW_OFF, ROW_FIXED, ROW_BRISK, ROW_MORE };

/* Per hold reason: time per I/O it held the response back, and how often it stopped the transmit function. */
#define HELD_COL(name)                                                                                       \
    {                                                                                                        \
        "held_" name "_ns", name "/IO", LAB_COL_TIME, LAB_HIDE_ZERO                                          \
    }
#define HOLDS_COL(name)                                                                                      \
    {                                                                                                        \
        "holds_" name, name " n", LAB_COL_U64, LAB_HIDE_ZERO                                                 \
    }

static const struct lab_col cols[] = {
    {"ok", "ok", LAB_COL_BOOL, LAB_HIDE_TEXT},
    {"total_ns", "total", LAB_COL_TIME, 0},
    {"io_mean_ns", "per I/O", LAB_COL_TIME, 0},
    {"io_p50_ns", "p50", LAB_COL_TIME, 0},
    {"io_p99_ns", "p99", LAB_COL_TIME, 0},
    {"iops", "IOPS", LAB_COL_DOUBLE, 0},
    {"vs_autocork_off", "x off", LAB_COL_DOUBLE, 0},
    {"data_segs_per_io", "segs/IO", LAB_COL_DOUBLE, 0},
    {"TCPAutoCorking", "AutoCork", LAB_COL_U64, 0},
    HELD_COL("cwnd"),
    HOLDS_COL("cwnd"),
    HELD_COL("rwnd"),
    HOLDS_COL("rwnd"),
    HELD_COL("nagle"),
    HOLDS_COL("nagle"),
    HELD_COL("cork"),
    HOLDS_COL("cork"),
    HELD_COL("tsq"),
    HOLDS_COL("tsq"),
    HELD_COL("autocork"),
    HOLDS_COL("autocork"),
    HELD_COL("pacing"),
    HOLDS_COL("pacing"),
    HELD_COL("device"),
    HOLDS_COL("device"),
};
#define NCOLS ((int)(sizeof(cols) / sizeof(cols[0])))

/* One run of the I/O loop. */
struct iscsi {
    uint32_t ios, cmd, hdr, data;
    int msg_more;
    brisk_sock *ini, *tgt, *listener;
    uint32_t done;      /* I/Os completed */
    uint64_t got;       /* response bytes the initiator holds for the current I/O */
    uint64_t cmd_got;   /* command bytes the target holds */
    uint64_t delivered; /* response bytes read by the initiator (the throughput sampler's count) */
    uint64_t issued_at; /* when the current command was sent */
    uint64_t *lat;      /* per I/O: command sent to whole response read, ns */
    uint64_t start, end;
    int failed; /* a send fell short or the connection failed */
};

static void send_cmd(struct iscsi *x, uint64_t now)
{
    uint8_t buf[256] = {0x01}; /* SCSI READ command PDU (its contents do not matter) */
    x->issued_at = now;
    if (brisk_send(x->ini, buf, x->cmd, 0, now) != (int64_t)x->cmd)
        x->failed = 1;
}

static void on_ini(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    if (ev & BRISK_EV_ERROR)
        x->failed = 1;
    if (ev & BRISK_EV_CONNECTED) {
        x->start = now;
        send_cmd(x, now);
    }
    uint8_t buf[4096];
    int64_t n;
    uint64_t per_io = (uint64_t)x->hdr + x->data;
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->got += (uint64_t)n;
        x->delivered += (uint64_t)n;
        while (x->got >= per_io && x->done < x->ios) {
            x->got -= per_io;
            x->lat[x->done] = now - x->issued_at;
            if (++x->done == x->ios)
                x->end = now;
            else
                send_cmd(x, now);
        }
    }
}

static void on_tgt(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    if (ev & BRISK_EV_ERROR)
        x->failed = 1;
    uint8_t buf[4096];
    int64_t n;
    static const uint8_t zero[4096]; /* header and payload contents do not matter; read-only */
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->cmd_got += (uint64_t)n;
        while (x->cmd_got >= x->cmd) {
            x->cmd_got -= x->cmd;
            if (brisk_send(s, zero, x->hdr, x->msg_more ? BRISK_MSG_MORE : 0, now) != (int64_t)x->hdr ||
                brisk_send(s, zero, x->data, 0, now) != (int64_t)x->data)
                x->failed = 1;
        }
    }
}

static void on_listen(void *ctx, brisk_sock *l, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    (void)ev;
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    if (!s)
        return;
    x->tgt = s;
    brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now); /* the iSCSI target's socket, as in the report */
    brisk_sock_set_callback(s, on_tgt, x);
}

static int all_done(void *ctx)
{
    const struct iscsi *x = ctx;
    return x->done == x->ios || x->failed;
}

static uint64_t delivered(void *ctx)
{
    return ((const struct iscsi *)ctx)->delivered;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct outcome {
    int ok;
    uint64_t total_ns;
    uint64_t *lat; /* sorted */
    uint64_t data_segs, autocork;
    struct brisk_conn_info tgt;
};

/* Runs one row; the latencies are left sorted in o->lat (the caller frees them). Returns 0, or nonzero
 * after a message (the world could not be built). */
static int run_row(struct lab_run *r, const struct brisk_settings *ts, const struct brisk_settings *is,
                   int msg_more, struct lab_timeline *tl, struct outcome *o)
{
    struct iscsi x = {.ios = (uint32_t)lab_u(r, "ios"),
                      .cmd = (uint32_t)lab_u(r, "cmd"),
                      .hdr = (uint32_t)lab_u(r, "hdr"),
                      .data = (uint32_t)lab_u(r, "data"),
                      .msg_more = msg_more};
    memset(o, 0, sizeof(*o));
    x.lat = calloc(x.ios, sizeof(*x.lat));
    brisk_sim_world *w = x.lat ? brisk_sim_world_new(lab_u(r, "seed")) : NULL;
    struct brisk_settings t = *ts, i = *is;
    t.seed = i.seed = 0; /* derived from the world's seed */
    brisk_sim_host *th = w ? brisk_sim_host_add(w, "target", &t) : NULL;
    brisk_sim_host *ih = w ? brisk_sim_host_add(w, "initiator", &i) : NULL;
    brisk_sim_port *pt = th ? brisk_sim_nic_add_ip(th, TGT_IP, 24, 0) : NULL;
    brisk_sim_port *pi = ih ? brisk_sim_nic_add_ip(ih, INI_IP, 24, 0) : NULL;
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, lab_u(r, "rate"), lab_u(r, "rtt") / 2);
    int err = 0;
    if (pt && pi && brisk_sim_link_connect(w, pt, pi, &lc)) {
        x.listener = brisk_socket(brisk_sim_host_stack(th), &err);
        x.ini = brisk_socket(brisk_sim_host_stack(ih), &err);
    }
    if (!x.listener || !x.ini || brisk_bind(x.listener, TGT_IP, TGT_PRT) != BRISK_OK ||
        brisk_listen(x.listener, 4) != BRISK_OK) {
        fprintf(stderr, "brisk-lab iscsi: cannot build the world (check the settings)\n");
        free(x.lat);
        brisk_sim_world_free(w);
        return 1;
    }
    if (lab_capture(r, pt) != 0) {
        free(x.lat);
        brisk_sim_world_free(w);
        return 1;
    }
    brisk_sock_set_callback(x.listener, on_listen, &x);
    brisk_sock_set_callback(x.ini, on_ini, &x);
    if (brisk_connect(x.ini, TGT_IP, TGT_PRT, 0) != BRISK_ERR_INPROGRESS) {
        fprintf(stderr, "brisk-lab iscsi: the initiator cannot connect (check the settings)\n");
        free(x.lat);
        brisk_sim_world_free(w);
        return 1;
    }
    brisk_sim_host_kick(ih);
    if (tl) {
        tl->bytes = delivered;
        tl->done = all_done;
        tl->ctx = &x;
        lab_timeline_start(tl, w);
    }
    /* Generous: every I/O may wait a delayed ACK and an RTO, and the connection its SYN retries. */
    uint64_t limit =
        (uint64_t)x.ios * (lab_u(r, "delack") + 2 * BRISK_NSEC_PER_SEC) + 60 * BRISK_NSEC_PER_SEC;
    struct lab_watch wt;
    lab_watch_init(&wt, w, "iscsi", all_done, &x, NULL);
    o->ok = brisk_sim_run_while(w, lab_watch_done, &wt, limit) && !x.failed && !wt.interrupted;
    lab_watch_end(&wt);
    o->total_ns = o->ok ? x.end - x.start : 0;
    if (x.tgt)
        brisk_conn_info(x.tgt, &o->tgt);
    struct brisk_counters c;
    brisk_stack_get_counters(brisk_sim_host_stack(th), &c);
    o->data_segs = c.TCPOrigDataSent;
    o->autocork = c.TCPAutoCorking;
    qsort(x.lat, x.done, sizeof(*x.lat), cmp_u64);
    o->lat = x.lat;
    uint64_t now = brisk_sim_now(w);
    brisk_abort(x.ini, now);
    if (x.tgt)
        brisk_abort(x.tgt, now);
    brisk_close(x.listener, now);
    brisk_sim_world_free(w);
    return 0;
}

static uint64_t pct(const uint64_t *sorted, uint32_t n, unsigned p)
{
    if (n == 0)
        return 0;
    uint32_t i = (uint32_t)(((uint64_t)n * p + 99) / 100); /* nearest rank */
    return sorted[i ? i - 1 : 0];
}

static int run(struct lab_run *r)
{
    uint64_t ios = lab_u(r, "ios");
    /* The initiator: defaults and the user's --set, with its delayed-ACK timer pinned at `delack`. */
    struct brisk_settings ini;
    if (lab_row_settings(r, NULL, NULL, &ini) != BRISK_OK)
        return 1;
    ini.tcp_delack_min_ns = ini.tcp_delack_max_ns = lab_u(r, "delack");

    struct lab_table t;
    lab_table_init(&t, "rows", "per profile of the target (rows); the initiator delays its ACKs by `delack`",
                   cols, NCOLS);
    struct lab_timeline tl[NROWS];
    struct lab_series thr[NROWS], cum[NROWS], cdf[NROWS];
    double *cdf_x[NROWS], *cdf_y[NROWS];
    memset(tl, 0, sizeof(tl));
    memset(cdf_x, 0, sizeof(cdf_x));
    memset(cdf_y, 0, sizeof(cdf_y));
    int rc = 0;
    lab_report_begin(r);
    lab_report_note(r, "setup",
                    "per I/O the initiator sends a command; the target answers with header + payload, two "
                    "sends on a TCP_NODELAY socket; queue depth 1");
    for (size_t k = 0; k < NROWS && rc == 0; k++) {
        struct brisk_settings ts;
        if (lab_row_settings(r, rows[k].profile, rows[k].extra, &ts) != BRISK_OK) {
            rc = 1;
            break;
        }
        tl[k].every_ns = lab_u(r, "sample");
        struct outcome o;
        if (run_row(r, &ts, &ini, rows[k].msg_more, r->plot_dir ? &tl[k] : NULL, &o) != 0) {
            rc = 1;
            break;
        }
        int i = lab_table_row(&t, rows[k].key, rows[k].label);
        lab_table_how(&t, i, rows[k].profile, rows[k].extra,
                      rows[k].msg_more ? "MSG_MORE on the header" : NULL);
        lab_table_set(&t, i, "ok", o.ok);
        lab_table_set(&t, i, "total_ns", (double)o.total_ns);
        double mean = o.ok ? (double)o.total_ns / (double)ios : 0;
        lab_table_set(&t, i, "io_mean_ns", mean);
        lab_table_set(&t, i, "io_p50_ns", (double)pct(o.lat, o.ok ? (uint32_t)ios : 0, 50));
        lab_table_set(&t, i, "io_p99_ns", (double)pct(o.lat, o.ok ? (uint32_t)ios : 0, 99));
        lab_table_set(&t, i, "iops", mean > 0 ? 1e9 / mean : 0);
        lab_table_set(&t, i, "data_segs_per_io", (double)o.data_segs / (double)ios);
        lab_table_set(&t, i, "TCPAutoCorking", (double)o.autocork);
        for (int h = BRISK_HOLD_NONE + 1; h < BRISK_HOLD_COUNT; h++) {
            char key[40];
            snprintf(key, sizeof(key), "held_%s_ns", brisk_hold_name(h));
            lab_table_set(&t, i, key, (double)o.tgt.hold_ns[h] / (double)ios);
            snprintf(key, sizeof(key), "holds_%s", brisk_hold_name(h));
            lab_table_set(&t, i, key, (double)o.tgt.hold_events[h]);
        }
        /* The latency distribution (CDF) in µs, for the plot. */
        cdf_x[k] = malloc(ios * sizeof(double));
        cdf_y[k] = malloc(ios * sizeof(double));
        size_t n = o.ok && cdf_x[k] && cdf_y[k] ? ios : 0;
        for (size_t j = 0; j < n; j++) {
            cdf_x[k][j] = (double)o.lat[j] / 1e3;
            cdf_y[k][j] = (double)(j + 1) / (double)n;
        }
        cdf[k] = (struct lab_series){rows[k].label, cdf_x[k], cdf_y[k], n};
        thr[k] = (struct lab_series){rows[k].label, tl[k].t_ms, tl[k].mbps, tl[k].n};
        cum[k] = (struct lab_series){rows[k].label, tl[k].t_ms, tl[k].kbytes, tl[k].n};
        free(o.lat);
        fprintf(stderr, "brisk-lab iscsi: %s done\n", rows[k].label);
    }
    if (rc == 0) {
        double off = lab_table_get(&t, ROW_OFF, "io_mean_ns");
        for (int i = 0; i < t.nrows; i++)
            lab_table_set(&t, i, "vs_autocork_off", off > 0 ? lab_table_get(&t, i, "io_mean_ns") / off : 0);
        lab_report_table(r, &t);

        double rc2 = lab_table_get(&t, ROW_RC2, "io_mean_ns");
        double p50 = lab_table_get(&t, ROW_RC2, "io_p50_ns");
        double fixed = lab_table_get(&t, ROW_FIXED, "io_mean_ns");
        double brisk = lab_table_get(&t, ROW_BRISK, "io_mean_ns");
        double segs = lab_table_get(&t, ROW_BRISK, "data_segs_per_io");
        double segs_more = lab_table_get(&t, ROW_MORE, "data_segs_per_io");
        double delack = (double)lab_u(r, "delack");
        int all_ok = 1;
        for (int i = 0; i < t.nrows; i++)
            all_ok &= lab_table_get(&t, i, "ok") != 0;
        int pass = all_ok && off > 0 && rc2 >= 30 * off && p50 >= delack && p50 <= delack * 1.1 &&
                   fixed <= off * 1.05 && fixed >= off * 0.95 && brisk <= off * 1.05 && brisk >= off * 0.95 &&
                   segs_more <= 1.0 + 1e-9 && segs >= 2.0 - 1e-9;
        lab_report_shape(
            r, pass,
            "rc2 autocork >= 30x autocork off, its p50 ~ the delayed ACK; 3.14 and brisk within 5% "
            "of off; MSG_MORE 1 data segment per I/O instead of 2",
            "rc2 %.1fx slower than autocork off (%.1f ms vs %.1f us per I/O, delack %.0f ms); "
            "3.14 %+.1f%%, brisk %+.1f%%; segs/IO %.2f -> %.2f with MSG_MORE",
            off > 0 ? rc2 / off : 0, rc2 / 1e6, off / 1e3, delack / 1e6,
            off > 0 ? 100 * (fixed / off - 1) : 0, off > 0 ? 100 * (brisk / off - 1) : 0, segs, segs_more);
    }
    lab_report_end(r);
    if (rc == 0 && r->plot_dir) {
        struct lab_plot_opts logx = {.logx = 1, .steps = 0}, cdfo = {.logx = 1, .steps = 1};
        lab_plot_ex(r->plot_dir, "latency_cdf", "iscsi: time per I/O, distribution (CDF) per target profile",
                    "time per I/O (us, log scale)", "fraction of I/Os", cdf, NROWS, &cdfo);
        lab_plot_ex(r->plot_dir, "throughput",
                    "iscsi: response bytes delivered to the initiator over time (per profile)",
                    "virtual time (ms, log scale)", "Mbit/s", thr, NROWS, &logx);
        lab_plot_ex(r->plot_dir, "delivered", "iscsi: response data delivered to the initiator (cumulative)",
                    "virtual time (ms, log scale)", "KB", cum, NROWS, &logx);
    }
    for (size_t k = 0; k < NROWS; k++) {
        free(cdf_x[k]);
        free(cdf_y[k]);
        lab_timeline_free(&tl[k]);
    }
    return rc;
}

const struct lab_scenario lab_scenario_iscsi = {
    .name = "iscsi",
    .summary = "seed 000: auto-corking resumed with Nagle on makes every I/O wait for a delayed ACK",
    .seed = "000_1a49bfb366b99c70",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
