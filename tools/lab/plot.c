/*
 * plot.c — the lab's plots: the data goes to a .dat file next to the PNG (so anyone can re-plot it), and a
 * gnuplot script drawn from it is piped to gnuplot. Figures are lines with points, one series per block.
 */
#include "lab/plot.h"

#include <stdio.h>
#include <string.h>

int lab_plot(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
             const struct lab_series *s, size_t nseries)
{
    return lab_plot_ex(dir, name, title, xlabel, ylabel, s, nseries, NULL);
}

int lab_plot_ex(const char *dir, const char *name, const char *title, const char *xlabel, const char *ylabel,
                const struct lab_series *s, size_t nseries, const struct lab_plot_opts *o)
{
    static const struct lab_plot_opts plain = {0, 0};
    if (!o)
        o = &plain;
    char dat[4200], png[4200];
    snprintf(dat, sizeof(dat), "%s/%s.dat", dir, name);
    snprintf(png, sizeof(png), "%s/%s.png", dir, name);
    FILE *f = fopen(dat, "w");
    if (!f) {
        fprintf(stderr, "brisk-lab: cannot write %s\n", dat);
        return 1;
    }
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
    fprintf(g, "set terminal pngcairo size 900,500 noenhanced\n");
    fprintf(g, "set output '%s'\n", png);
    fprintf(g,
            "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset grid\nset key below\nset yrange "
            "[0:*]\n",
            title, xlabel, ylabel);
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
    fprintf(g, "plot ");
    for (size_t k = 0; k < nseries; k++)
        fprintf(g, "%s'%s' index %zu with %s title '%s'", k ? ", " : "", dat, k,
                o->steps ? "steps linewidth 2" : "linespoints pointsize 0.5", s[k].name);
    fprintf(g, "\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "brisk-lab: gnuplot failed drawing %s (status %d); %s has the data\n", png, rc, dat);
        return 1;
    }
    return 0;
}
