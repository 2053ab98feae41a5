/*
 * rrplot.c — rr-timers' plots (rrplot.h). The figures are the table's own (wheel operations per transaction
 * per host, TCPTimerWheelOps over the measurement window) and every transaction's time as the request /
 * response application measured it (brisk_sim_rr_latencies), so the plots say what the table says, drawn.
 */
#include "lab/rrplot.h"

#include <stdio.h>
#include <stdlib.h>

#include "lab/plot.h"

void lab_rr_plot_keep(struct lab_rr_plot *p, const brisk_sim_rr *rr)
{
    if (!p || p->nrows == LAB_RR_PLOT_ROWS)
        return;
    size_t n;
    const uint64_t *lat = brisk_sim_rr_latencies(rr, &n);
    double *v = n ? malloc(n * sizeof(*v)) : NULL;
    for (size_t i = 0; v && i < n; i++)
        v[i] = (double)lat[i] / 1e3;
    p->lat_us[p->nrows] = v;
    p->n[p->nrows++] = v ? n : 0;
}

void lab_rr_plot_free(struct lab_rr_plot *p)
{
    for (int k = 0; p && k < p->nrows; k++) {
        free(p->lat_us[k]);
        p->lat_us[k] = NULL;
    }
    if (p)
        p->nrows = 0;
}

void lab_rr_plot_draw(struct lab_rr_plot *p, const struct lab_run *r, const struct lab_table *t)
{
    int rows = t->nrows < LAB_RR_PLOT_ROWS ? t->nrows : LAB_RR_PLOT_ROWS;
    const char *cats[LAB_RR_PLOT_ROWS] = {0};
    double client[LAB_RR_PLOT_ROWS] = {0}, server[LAB_RR_PLOT_ROWS] = {0};
    for (int k = 0; k < rows; k++) {
        cats[k] = t->rows[k].label;
        client[k] = lab_table_get(t, k, "ops_client");
        server[k] = lab_table_get(t, k, "ops_server");
    }
    const struct lab_bars bars[] = {{"client", client}, {"server", server}};
    lab_plot_bars(r->plot_dir, "wheel_ops",
                  "rr-timers: timer-wheel operations per transaction (TCPTimerWheelOps)",
                  "operations per transaction", cats, (size_t)rows, bars, 2);
    /* The distribution as its tail reads best: y = the share of transactions that took x or longer (1 - CDF
     * just below x), on a log axis, so the 1 in 40 that waited for a probe and the 1 in 400 that waited for
     * an RTO show as steps of their own instead of hiding in the top 3 % of a CDF. */
    struct lab_series cdf[LAB_RR_PLOT_ROWS];
    double *y[LAB_RR_PLOT_ROWS] = {0};
    int n = 0;
    for (int k = 0; k < rows && k < p->nrows; k++) {
        y[k] = p->n[k] ? malloc(p->n[k] * sizeof(double)) : NULL;
        size_t m = y[k] ? p->n[k] : 0;
        for (size_t i = 0; i < m; i++)
            y[k][i] = (double)(m - i) / (double)m;
        cdf[n++] = (struct lab_series){t->rows[k].label, p->lat_us[k], y[k], m};
    }
    struct lab_plot_opts o = {.logx = 1, .steps = 1, .logy = 1};
    lab_plot_ex(
        r->plot_dir, "latency_cdf",
        "rr-timers: transaction time distribution per row, as 1 - CDF: with loss the tail is the probe / RTO",
        "transaction time (us, log scale)", "share of transactions taking this long or longer (log)", cdf,
        (size_t)n, &o);
    for (int k = 0; k < rows; k++)
        free(y[k]);
    lab_rr_plot_free(p);
}
