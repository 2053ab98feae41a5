/*
 * table.c — the lab's comparison tables (lab.h): rows are profiles (or sweep points), columns are figures.
 *
 * A scenario fills a struct lab_table cell by cell (lab_table_set, by column key) and reports it once with
 * lab_report_table, which writes the same numbers three ways:
 *   - a human table, columns aligned, units in the cells ("111.2 ms", "9.412 Gbit/s"); columns marked
 *     LAB_HIDE_ZERO are left out when every row is zero (the hold reasons that never held anything);
 *   - JSON: an object under the table's key with one object per row (its label, then every column);
 *   - CSV (the run's first table only, so results.csv has one header): scenario,row,label,<column keys>,
 *     raw numbers in the JSON's units (ns, bit/s, bytes, percent).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "lab/lab.h"

void lab_table_init(struct lab_table *t, const char *key, const char *title, const struct lab_col *cols,
                    int ncols)
{
    assert(ncols <= LAB_TABLE_MAX_COLS);
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->title = title;
    t->cols = cols;
    t->ncols = ncols;
}

int lab_table_row(struct lab_table *t, const char *key, const char *label)
{
    assert(t->nrows < LAB_TABLE_MAX_ROWS);
    struct lab_table_row *row = &t->rows[t->nrows];
    snprintf(row->key, sizeof(row->key), "%s", key);
    snprintf(row->label, sizeof(row->label), "%s", label);
    return t->nrows++;
}

void lab_table_how(struct lab_table *t, int row, const char *profile, const char *const *extra,
                   const char *text)
{
    assert(row >= 0 && row < t->nrows);
    char *b = t->rows[row].how;
    size_t cap = sizeof(t->rows[row].how), n = 0;
    b[0] = '\0';
    if (profile)
        n += (size_t)snprintf(b + n, cap - n, "profile %s", profile);
    for (const char *const *a = extra; a && *a && n < cap; a++)
        n += (size_t)snprintf(b + n, cap - n, "%s%s", n ? ", " : "", *a);
    if (text && n < cap)
        snprintf(b + n, cap - n, "%s%s", n ? ", " : "", text);
}

static int col_index(const struct lab_table *t, const char *col)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].key, col) == 0)
            return c;
    assert(!"unknown table column");
    return 0;
}

void lab_table_set(struct lab_table *t, int row, const char *col, double v)
{
    assert(row >= 0 && row < t->nrows);
    t->rows[row].v[col_index(t, col)] = v;
}

double lab_table_get(const struct lab_table *t, int row, const char *col)
{
    assert(row >= 0 && row < t->nrows);
    return t->rows[row].v[col_index(t, col)];
}

static char *cell(char *buf, const struct lab_col *c, double v)
{
    switch (c->kind) {
    case LAB_COL_U64:
        snprintf(buf, FMT_LEN, "%" PRIu64, (uint64_t)v);
        return buf;
    case LAB_COL_DOUBLE:
        snprintf(buf, FMT_LEN, "%.2f", v);
        return buf;
    case LAB_COL_PCT:
        snprintf(buf, FMT_LEN, "%.1f %%", v);
        return buf;
    case LAB_COL_TIME:
        return fmt_time(buf, (uint64_t)v);
    case LAB_COL_RATE:
        return fmt_rate(buf, v);
    case LAB_COL_SIZE:
        return fmt_value(buf, BRISK_VAL_SIZE, (uint64_t)v);
    case LAB_COL_BOOL:
        snprintf(buf, FMT_LEN, "%s", v != 0 ? "yes" : "no");
        return buf;
    }
    return buf;
}

static void json_cell(struct json *j, const struct lab_col *c, double v)
{
    switch (c->kind) {
    case LAB_COL_U64:
    case LAB_COL_TIME:
    case LAB_COL_SIZE:
        json_u64(j, c->key, (uint64_t)v);
        return;
    case LAB_COL_BOOL:
        json_bool(j, c->key, v != 0);
        return;
    case LAB_COL_DOUBLE:
    case LAB_COL_PCT:
    case LAB_COL_RATE:
        json_double(j, c->key, v);
        return;
    }
}

static void print_table(const struct lab_table *t, FILE *f)
{
    char buf[FMT_LEN];
    int show[LAB_TABLE_MAX_COLS], width[LAB_TABLE_MAX_COLS];
    int lw = 0;
    for (int r = 0; r < t->nrows; r++) {
        int n = (int)strlen(t->rows[r].label);
        lw = n > lw ? n : lw;
    }
    for (int c = 0; c < t->ncols; c++) {
        show[c] = !t->cols[c].hide;
        width[c] = (int)strlen(t->cols[c].head);
        for (int r = 0; r < t->nrows; r++) {
            if (t->rows[r].v[c] != 0 && t->cols[c].hide == LAB_HIDE_ZERO)
                show[c] = 1;
            int n = (int)strlen(cell(buf, &t->cols[c], t->rows[r].v[c]));
            width[c] = n > width[c] ? n : width[c];
        }
    }
    fprintf(f, "  %s\n", t->title);
    fprintf(f, "  %-*s", lw, "");
    for (int c = 0; c < t->ncols; c++)
        if (show[c])
            fprintf(f, "  %*s", width[c], t->cols[c].head);
    fputc('\n', f);
    for (int r = 0; r < t->nrows; r++) {
        fprintf(f, "  %-*s", lw, t->rows[r].label);
        for (int c = 0; c < t->ncols; c++)
            if (show[c])
                fprintf(f, "  %*s", width[c], cell(buf, &t->cols[c], t->rows[r].v[c]));
        fputc('\n', f);
    }
    for (int r = 0; r < t->nrows; r++)
        if (t->rows[r].how[0])
            fprintf(f, "  %-*s  = %s\n", lw, t->rows[r].label, t->rows[r].how);
}

/* CSV fields: keys and labels are the lab's own strings, quoted when they hold a separator or a quote. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(struct lab_run *r, const struct lab_table *t)
{
    FILE *f = r->csv_out;
    if (!r->csv_cols) {
        r->csv_cols = t->cols;
        fputs("scenario,row,label", f);
        for (int c = 0; c < t->ncols; c++)
            fprintf(f, ",%s", t->cols[c].key);
        fputc('\n', f);
    } else if (r->csv_cols != t->cols) {
        return; /* one header per file: only tables with the first table's columns */
    }
    for (int row = 0; row < t->nrows; row++) {
        csv_field(f, r->sc->name);
        fputc(',', f);
        csv_field(f, t->rows[row].key);
        fputc(',', f);
        csv_field(f, t->rows[row].label);
        for (int c = 0; c < t->ncols; c++) {
            double v = t->rows[row].v[c];
            switch (t->cols[c].kind) {
            case LAB_COL_U64:
            case LAB_COL_TIME:
            case LAB_COL_SIZE:
            case LAB_COL_BOOL:
                fprintf(f, ",%" PRIu64, (uint64_t)v);
                break;
            default:
                fprintf(f, ",%.10g", v);
            }
        }
        fputc('\n', f);
    }
    fflush(f);
}

void lab_report_table(struct lab_run *r, const struct lab_table *t)
{
    if (r->json_out) {
        json_object_begin(&r->j, t->key);
        for (int row = 0; row < t->nrows; row++) {
            json_object_begin(&r->j, t->rows[row].key);
            json_str(&r->j, "label", t->rows[row].label);
            if (t->rows[row].how[0])
                json_str(&r->j, "how", t->rows[row].how);
            for (int c = 0; c < t->ncols; c++)
                json_cell(&r->j, &t->cols[c], t->rows[row].v[c]);
            json_object_end(&r->j);
        }
        json_object_end(&r->j);
    }
    for (int i = 0; i < r->ntables; i++)
        print_table(t, r->tables[i]);
    if (r->csv_out)
        write_csv(r, t);
}
