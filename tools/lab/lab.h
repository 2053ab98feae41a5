/*
 * lab.h — brisk-lab's scenario framework.
 *
 * A scenario is a named experiment run in the simulator: a table of parameters (with defaults, overridable
 * by --set name=value), and a run function that builds a world, drives it and reports. Every `--set` that is
 * not a scenario parameter must be a stack setting (brisk_settings_set); the run applies those to every host.
 * A scenario reports through the lab_report calls below, which print a human table or JSON, so every
 * scenario's output states the parameters and settings it used.
 */
#ifndef BRISK_LAB_H
#define BRISK_LAB_H

#include <stdint.h>
#include <stdio.h>

#include "brisk/brisk.h"
#include "common/json.h"

enum lab_kind { LAB_UINT, LAB_SIZE, LAB_TIME, LAB_RATE, LAB_PROB };

struct lab_param {
    const char *name;
    enum lab_kind kind;
    const char *dflt; /* in the syntax of its kind: "10G", "50us", "0", "1%" */
    const char *help;
    /* The values allowed, inclusive, in the same syntax (NULL: no bound; probabilities lie in [0, 1]
     * anyway): --set checks them and names the parameter and its range when a value lies outside. */
    const char *min, *max;
};

union lab_value {
    uint64_t u;
    double p;
};

#define LAB_MAX_PARAMS 32

struct lab_run;

struct lab_scenario {
    const char *name;
    const char *summary;
    const char *seed; /* the netdev report it reproduces (docs/lab.md), or NULL: `seeds` runs those */
    const struct lab_param *params;
    int nparams;
    /* Runs the scenario; returns 0, or nonzero after printing why it could not run. */
    int (*run)(struct lab_run *r);
};

#define LAB_MAX_SETTINGS 256
#define LAB_MAX_TABLES   2
#define LAB_MAX_SETS     64

/* A scenario's verdict on its expected shape (docs/lab.md), for the seeds SUMMARY table. */
struct lab_shape {
    int set;            /* the scenario judged its shape */
    int pass;           /* the expected shape holds */
    char headline[160]; /* the headline comparison, with the figures */
    char expect[160];   /* the expected shape, in words */
};

struct lab_run {
    const struct lab_scenario *sc;
    union lab_value v[LAB_MAX_PARAMS];          /* parameter values, in the scenario's order */
    struct brisk_settings settings;             /* stack settings for every host (defaults + --set) */
    uint8_t settings_changed[LAB_MAX_SETTINGS]; /* which settings were --set, by index (printed) */
    const char *pcap;                           /* capture file, or NULL */
    uint64_t pcap_frames;           /* capture only the first N frames, headers only (0 = everything) */
    const char *plot_dir;           /* where to draw plots (PNG + data), or NULL for none */
    const char *profile;            /* compatibility profile applied before --set, or NULL */
    /* The address family the scenario's flows and echoes run over (--set family=4|6): with 6 every host
     * has an IPv6 address beside its IPv4 one (2001:db8:0:X::Y for 10.0.X.Y, as a dual-stack host) and
     * connects to its peers' IPv6 addresses (lab_addr, flow.h). */
    int family;
    const char *sets[LAB_MAX_SETS]; /* the stack-setting assignments given with --set, in order */
    int nsets;
    int captured;         /* the capture is taken once, of the first world that asks (lab_capture) */
    FILE *csv_out;        /* the first table (lab_report_table) as CSV, or NULL */
    const void *csv_cols; /* columns of the table the CSV holds (its header) */
    struct lab_shape shape;
    const void *file; /* a scenario file's description (spec.h) when the run is one, else NULL */
    /* `run`'s looks at the bulk flows (obs.h): time-sequence graphs with hold bands (tseq, into plot_dir;
     * their window from each flow's SYN), and ss lines sampled every ss_every_ns into the JSON (0: the
     * end-of-run line only). */
    int tseq;
    uint64_t tseq_from_ns, tseq_len_ns, ss_every_ns;
    /* Where the report goes: human tables to each of tables[], JSON to json_out (either may be absent). */
    FILE *tables[LAB_MAX_TABLES];
    int ntables;
    FILE *json_out;
    struct json j; /* the JSON writer on json_out */
    int depth;     /* table indentation level */
};

/* Parses one --set assignment into the run (the lab's own `family` first, then a scenario parameter, then a
 * stack setting). Returns BRISK_OK, or an error after writing a message to stderr. */
int lab_set(struct lab_run *r, const char *assignment);
/* Applies a compatibility profile to the run's settings (before any --set). Returns BRISK_OK, or an error
 * after a message on stderr. */
int lab_profile(struct lab_run *r, const char *name);
/* Initializes a run of sc with defaults and no output; add outputs with lab_run_table / lab_run_json. */
void lab_run_init(struct lab_run *r, const struct lab_scenario *sc);
void lab_run_table(struct lab_run *r, FILE *f);
void lab_run_json(struct lab_run *r, FILE *f);

/* Settings for one row of a comparison: the run's settings (defaults, --profile, --set), then the row's
 * profile (NULL: none), then the user's --set assignments again (so they win over the profile), then the
 * row's own NULL-terminated assignments (the knob that defines the row wins over everything). Returns
 * BRISK_OK, or an error after a message on stderr. */
int lab_row_settings(const struct lab_run *r, const char *profile, const char *const *extra,
                     struct brisk_settings *out);

/* Starts the run's capture (if any) on port p, the first time it is called in a run (a comparison captures
 * its first row); prints a message and returns nonzero on failure. */
struct brisk_sim_port;
int lab_capture(struct lab_run *r, struct brisk_sim_port *p);

/* Parameter value by name (the name must exist: asserted). */
uint64_t lab_u(const struct lab_run *r, const char *name);
double lab_p(const struct lab_run *r, const char *name);

/* Reporting. Begin prints the header and the parameters / changed settings; each row is one named figure
 * with its JSON key; end closes the document. */
void lab_report_begin(struct lab_run *r);
void lab_report_u64(struct lab_run *r, const char *key, const char *label, uint64_t v);
void lab_report_time(struct lab_run *r, const char *key, const char *label, uint64_t ns);
void lab_report_double(struct lab_run *r, const char *key, const char *label, double v, const char *unit);
void lab_report_bool(struct lab_run *r, const char *key, const char *label, int v);
void lab_report_rate(struct lab_run *r, const char *key, const char *label, double bps);
void lab_report_str(struct lab_run *r, const char *key, const char *label, const char *text);
/* A table row only (its figures go into the JSON under keys of their own). */
void lab_report_text(struct lab_run *r, const char *label, const char *text);
/* A figure that was not measured (no RTT sample, no byte delivered): `why` in the table, null in the JSON,
 * never a made-up zero. */
void lab_report_none(struct lab_run *r, const char *key, const char *label, const char *why);
/* Groups: a JSON object; in the table, an indented section. */
void lab_report_group_begin(struct lab_run *r, const char *key, const char *label);
void lab_report_group_end(struct lab_run *r);
void lab_report_end(struct lab_run *r);
/* A free-text line in the table (JSON: a string under key). */
void lab_report_note(struct lab_run *r, const char *key, const char *text);
/* The scenario's verdict on its expected shape: JSON "shape" object, a line in the table, and the seeds
 * SUMMARY row. Call before lab_report_end. */
void lab_report_shape(struct lab_run *r, int pass, const char *expect, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- tables: rows (profiles) by columns (figures), printed aligned, as JSON objects and as CSV ---- */
enum lab_col_kind {
    LAB_COL_U64,
    LAB_COL_DOUBLE,
    LAB_COL_PCT,
    LAB_COL_TIME,
    LAB_COL_RATE,
    LAB_COL_SIZE,
    LAB_COL_BOOL
};

enum { LAB_HIDE_ZERO = 1, LAB_HIDE_TEXT = 2 };

struct lab_col {
    const char *key;  /* JSON key and CSV header */
    const char *head; /* table heading (short) */
    enum lab_col_kind kind;
    int hide; /* human table only (JSON and CSV keep every column): LAB_HIDE_ZERO leaves the column out when
                 every row is zero, LAB_HIDE_TEXT always */
};

#define LAB_TABLE_MAX_ROWS 16
#define LAB_TABLE_MAX_COLS 40

struct lab_table {
    const char *key, *title;
    const struct lab_col *cols;
    int ncols, nrows;
    struct lab_table_row {
        char key[40], label[64];
        char how[128]; /* what defines the row (profile and settings), printed under the table */
        double v[LAB_TABLE_MAX_COLS];
    } rows[LAB_TABLE_MAX_ROWS];
};

void lab_table_init(struct lab_table *t, const char *key, const char *title, const struct lab_col *cols,
                    int ncols);
/* Adds a row (all zero) and returns its index. */
int lab_table_row(struct lab_table *t, const char *key, const char *label);
/* Says what defines a row: "profile P" plus its extra assignments (NULL-terminated), plus free text. */
void lab_table_how(struct lab_table *t, int row, const char *profile, const char *const *extra,
                   const char *text);
/* Sets a cell by column key (the key must exist: asserted). */
void lab_table_set(struct lab_table *t, int row, const char *col, double v);
double lab_table_get(const struct lab_table *t, int row, const char *col);
/* Prints the table to the run's tables, as an object of rows under t->key in the JSON, and (the first table
 * of a run) as results.csv rows: scenario,row,label,<column keys>. */
void lab_report_table(struct lab_run *r, const struct lab_table *t);

/* `brisk-lab soak` (soak.c): randomized impairments x settings over many seeds. */
int lab_soak_main(int argc, char **argv);

/* The registered scenarios. */
extern const struct lab_scenario lab_scenario_ping;
extern const struct lab_scenario lab_scenario_bulk;

#endif
