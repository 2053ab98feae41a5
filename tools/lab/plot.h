/*
 * plot.h — PNG plots for the lab, drawn by gnuplot (Debian's gnuplot-nox, installed by scripts/deps.sh).
 */
#ifndef BRISK_LAB_PLOT_H
#define BRISK_LAB_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct lab_series {
    const char *name; /* legend */
    const double *x, *y;
    size_t n;
};

/* A horizontal reference line (the line rate, a model's figure), labelled in the legend. */
struct lab_plot_ref {
    const char *name;
    double y;
};

#define LAB_PLOT_MAX_REFS 4

struct lab_plot_opts {
    int logx;  /* logarithmic x axis (latencies spanning decades) */
    int log2x; /* base-2 x axis, one tick per doubling (sweeps over 32K, 64K, 128K ...) */
    int steps; /* draw each series as steps (a CDF) instead of lines with points */
    int logy;  /* logarithmic y axis (a distribution's tail: the share of samples above x, 1 - CDF) */
    struct lab_plot_ref refs[LAB_PLOT_MAX_REFS];
    int nrefs;
};

/* Writes DIR/NAME.dat (the points, one series per block) and DIR/NAME.png. Returns 0, or nonzero after a
 * message on stderr (gnuplot missing or failing is reported, not fatal to the caller). */
/* A plot's two files, DIR/NAME.dat and DIR/NAME.png (paths into dat[n] and png[n]): the .dat opened for
 * writing, or NULL after a message naming it. */
FILE *lab_plot_open(const char *dir, const char *name, char *dat, char *png, size_t n);
int lab_plot(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
             const struct lab_series *s, size_t nseries);
/* The same with options (NULL: lines with points, linear axes). */
int lab_plot_ex(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
                const struct lab_series *s, size_t nseries, const struct lab_plot_opts *o);

/* A bar chart: one group of bars per category (a row), one bar per series in each (client, server), its value
 * written above it — so a bar a hundred times shorter than its neighbour still reads as a number. */
struct lab_bars {
    const char *name;
    const double *v; /* one value per category */
};
int lab_plot_bars(const char *dir, const char *name, const char *title, const char *ylabel,
                  const char *const *cats, size_t ncats, const struct lab_bars *s, size_t nseries);

#endif
