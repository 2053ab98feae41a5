/*
 * plot.c — the lab's plots: the data goes to a .dat file next to the PNG (so anyone can re-plot it), and a
 * gnuplot script drawn from it is piped to gnuplot. Figures are lines with points, one series per block.
 *
 * Series often coincide (three profiles at line rate draw the same line), so each is drawn so that one on
 * top of another still shows: the first series widest, each later one narrower, in its own colour, dash
 * pattern and point shape — a line hidden under another shows as a coloured border around it. Reference
 * lines (line rate, a model's figure) are thin grey dashes with their own legend entry.
 */
#include "lab/plot.h"

#include <stdio.h>
#include <string.h>

int lab_plot(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
             const struct lab_series *s, size_t nseries)
{
    return lab_plot_ex(dir, name, title, xlabel, ylabel, s, nseries, NULL);
}

FILE *lab_plot_open(const char *dir, const char *name, char *dat, char *png, size_t n)
{
    snprintf(dat, n, "%s/%s.dat", dir, name);
    snprintf(png, n, "%s/%s.png", dir, name);
    FILE *f = fopen(dat, "w");
    if (!f)
        fprintf(stderr, "brisk-lab: cannot write %s\n", dat);
    return f;
}

int lab_plot_ex(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
                const struct lab_series *s, size_t nseries, const struct lab_plot_opts *o)
{
    static const struct lab_plot_opts plain = {0};
    if (!o)
        o = &plain;
    char dat[4200], png[4200];
    FILE *f = lab_plot_open(dir, name, dat, png, sizeof(dat));
    if (!f)
        return 1;
    for (size_t k = 0; k < nseries; k++) {
        fprintf(f, "# %s\n", s[k].name);
        for (size_t i = 0; i < s[k].n; i++)
            fprintf(f, "%.9g %.9g\n", s[k].x[i], s[k].y[i]);
        fprintf(f, "\n\n");
    }
    fclose(f);
    FILE *g = popen("gnuplot 2>/dev/null", "w");
    if (!g) {
        fprintf(stderr, "brisk-lab: gnuplot not available; %s has the data\n", dat);
        return 1;
    }
    /* The legend goes below in one column; the picture grows with it so the plot keeps its height. */
    fprintf(g, "set terminal pngcairo size 1000,%zu noenhanced\n", 440 + 18 * (nseries + (size_t)o->nrefs));
    fprintf(g, "set output '%s'\n", png);
    fprintf(g, "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset grid\nset key below\n", title, xlabel,
            ylabel);
    /* Headroom above the highest series or reference line, so that a line at the top (the line rate) is not
     * drawn on the border. */
    double ymax = 0;
    for (size_t k = 0; k < nseries; k++)
        for (size_t i = 0; i < s[k].n; i++)
            ymax = s[k].y[i] > ymax ? s[k].y[i] : ymax;
    for (int i = 0; i < o->nrefs && i < LAB_PLOT_MAX_REFS; i++)
        ymax = o->refs[i].y > ymax ? o->refs[i].y : ymax;
    if (o->logy) {
        /* Down to the smallest positive value (the last sample of a tail, 1/n), a third of a decade beyond. */
        double ymin = 0;
        for (size_t k = 0; k < nseries; k++)
            for (size_t i = 0; i < s[k].n; i++)
                ymin = s[k].y[i] > 0 && (ymin == 0 || s[k].y[i] < ymin) ? s[k].y[i] : ymin;
        fprintf(g, "set logscale y\nset format y '%%g'\n");
        if (ymin > 0 && ymax > 0)
            fprintf(g, "set yrange [%.9g:%.9g]\n", ymin / 2, ymax * 2);
    } else if (ymax > 0)
        fprintf(g, "set yrange [0:%.9g]\n", ymax * 1.08);
    else
        fprintf(g, "set yrange [0:*]\n");
    if (o->logx) {
        /* Half a decade of room on both sides, so a curve at the smallest value does not hide in the border.
         */
        double lo = 0, hi = 0;
        for (size_t k = 0; k < nseries; k++) {
            for (size_t i = 0; i < s[k].n; i++) {
                double v = s[k].x[i];
                if (v > 0 && (lo == 0 || v < lo))
                    lo = v;
                if (v > hi)
                    hi = v;
            }
        }
        fprintf(g, "set logscale x\n");
        if (lo > 0)
            fprintf(g, "set xrange [%.9g:%.9g]\n", lo / 2, hi * 2);
    }
    if (o->log2x) {
        fprintf(g, "set logscale x 2\n");
        double lo = 0, hi = 0;
        for (size_t k = 0; k < nseries; k++)
            for (size_t i = 0; i < s[k].n; i++) {
                double v = s[k].x[i];
                lo = v > 0 && (lo == 0 || v < lo) ? v : lo;
                hi = v > hi ? v : hi;
            }
        if (lo > 0)
            fprintf(g, "set xrange [%.9g:%.9g]\n", lo / 1.25, hi * 1.25);
    }
    fprintf(g, "plot ");
    for (size_t k = 0; k < nseries; k++) {
        /* Widest first: 1 + 2.5 px per later series, down to 1 px for the last one. */
        double lw = 1.0 + 2.5 * (double)(nseries - 1 - k) / (nseries > 1 ? (double)(nseries - 1) : 1.0);
        if (o->steps)
            fprintf(g, "%s'%s' index %zu with steps linewidth %.2f dashtype %zu title '%s'", k ? ", " : "", dat,
                    k, lw + 1, k % 5 + 1, s[k].name);
        else
            fprintf(g,
                    "%s'%s' index %zu with linespoints linewidth %.2f dashtype %zu pointtype %zu pointsize 0.8 "
                    "pointinterval %zu title '%s'",
                    k ? ", " : "", dat, k, lw, k % 5 + 1, k % 12 + 1, s[k].n > 40 ? s[k].n / 20 : (size_t)1,
                    s[k].name);
    }
    for (int i = 0; i < o->nrefs && i < LAB_PLOT_MAX_REFS; i++)
        fprintf(g, ", %.9g with lines linewidth 1.5 dashtype %d linecolor rgb '%s' title '%s'", o->refs[i].y,
                i + 2, i % 2 ? "#555555" : "#999999", o->refs[i].name);
    fprintf(g, "\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "brisk-lab: gnuplot failed drawing %s (status %d); %s has the data\n", png, rc, dat);
        return 1;
    }
    return 0;
}

int lab_plot_bars(const char *dir, const char *name, const char *title, const char *ylabel,
                  const char *const *cats, size_t ncats, const struct lab_bars *s, size_t nseries)
{
    static const char *const colour[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"};
    char dat[4200], png[4200];
    FILE *f = lab_plot_open(dir, name, dat, png, sizeof(dat));
    if (!f)
        return 1;
    /* Bar k of category i stands at i + (k - (n - 1) / 2) * width: the group centred on its tick. */
    double width = 0.8 / (double)(nseries ? nseries : 1), ymax = 0;
    for (size_t k = 0; k < nseries; k++) {
        fprintf(f, "# %s: category, bar position, value\n", s[k].name);
        for (size_t i = 0; i < ncats; i++) {
            fprintf(f, "%zu %.4f %.9g\n", i, (double)i + ((double)k - (double)(nseries - 1) / 2) * width, s[k].v[i]);
            ymax = s[k].v[i] > ymax ? s[k].v[i] : ymax;
        }
        fprintf(f, "\n\n");
    }
    fclose(f);
    FILE *g = popen("gnuplot 2>/dev/null", "w");
    if (!g) {
        fprintf(stderr, "brisk-lab: gnuplot not available; %s has the data\n", dat);
        return 1;
    }
    fprintf(g, "set terminal pngcairo size 1000,520 noenhanced\nset output '%s'\n", png);
    fprintf(g, "set title '%s'\nset ylabel '%s'\nset grid ytics\nset key top right\n", title, ylabel);
    fprintf(g, "set yrange [0:%.9g]\nset xrange [-0.6:%.1f]\nset boxwidth %.4f\nset style fill solid 0.9\n",
            ymax > 0 ? ymax * 1.18 : 1, (double)ncats - 0.4, width * 0.92);
    fprintf(g, "set xtics (");
    for (size_t i = 0; i < ncats; i++)
        fprintf(g, "%s'%s' %zu", i ? ", " : "", cats[i], i);
    fprintf(g, ")\nplot ");
    for (size_t k = 0; k < nseries; k++)
        fprintf(g,
                "%s'%s' index %zu using 2:3 with boxes linecolor rgb '%s' title '%s', '' index %zu using "
                "2:3:(sprintf('%%.2f', $3)) with labels offset 0,0.8 notitle",
                k ? ", " : "", dat, k, colour[k % 4], s[k].name, k);
    fprintf(g, "\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "brisk-lab: gnuplot failed drawing %s (status %d); %s has the data\n", png, rc, dat);
        return 1;
    }
    return 0;
}
