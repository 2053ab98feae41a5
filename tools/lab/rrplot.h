/*
 * rrplot.h — rr-timers' plots (seed 004): timer-wheel operations per transaction per row, client and server
 * side by side (wheel_ops.png), and the distribution of transaction times per row as its complementary CDF
 * on log axes, so that the lossy rows' tails at the probe and the RTO time read as steps (latency_cdf.png).
 * The scenario hands each row's finished request / response run to lab_rr_plot_keep and draws after its
 * table.
 */
#ifndef BRISK_LAB_RRPLOT_H
#define BRISK_LAB_RRPLOT_H

#include <stddef.h>

#include "brisk/sim.h"
#include "lab/lab.h"

#define LAB_RR_PLOT_ROWS 8

struct lab_rr_plot {
    double *lat_us[LAB_RR_PLOT_ROWS]; /* each row's transaction times, ascending */
    size_t n[LAB_RR_PLOT_ROWS];
    int nrows;
};

/* Keeps the next row's transaction times (after brisk_sim_rr_result, which sorts them). p NULL: nothing. */
void lab_rr_plot_keep(struct lab_rr_plot *p, const brisk_sim_rr *rr);
/* Draws both plots into r->plot_dir from the kept times and the table's rows (labels, ops_client,
 * ops_server), then frees what was kept. */
void lab_rr_plot_draw(struct lab_rr_plot *p, const struct lab_run *r, const struct lab_table *t);
void lab_rr_plot_free(struct lab_rr_plot *p);

#endif
