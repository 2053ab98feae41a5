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
    const struct lab_param *params;
    int nparams;
    /* Runs the scenario; returns 0, or nonzero after printing why it could not run. */
    int (*run)(struct lab_run *r);
};

#define LAB_MAX_SETTINGS 256
#define LAB_MAX_TABLES   2

struct lab_run {
    const struct lab_scenario *sc;
    union lab_value v[LAB_MAX_PARAMS];          /* parameter values, in the scenario's order */
    struct brisk_settings settings;             /* stack settings for every host (defaults + --set) */
    uint8_t settings_changed[LAB_MAX_SETTINGS]; /* which settings were --set, by index (printed) */
    const char *pcap;                           /* capture file, or NULL */
    uint64_t pcap_frames; /* capture only the first N frames, headers only (0 = everything) */
    const char *plot_dir; /* where to draw plots (PNG + data), or NULL for none */
    const char *profile;  /* compatibility profile applied before --set, or NULL */
    /* Where the report goes: human tables to each of tables[], JSON to json_out (either may be absent). */
    FILE *tables[LAB_MAX_TABLES];
    int ntables;
    FILE *json_out;
    struct json j; /* the JSON writer on json_out */
    int depth;     /* table indentation level */
};

/* Parses one --set assignment into the run (scenario parameter first, then stack setting). Returns BRISK_OK,
 * or an error after writing a message to stderr. */
int lab_set(struct lab_run *r, const char *assignment);
/* Applies a compatibility profile to the run's settings (before any --set). Returns BRISK_OK, or an error
 * after a message on stderr. */
int lab_profile(struct lab_run *r, const char *name);
/* Initializes a run of sc with defaults and no output; add outputs with lab_run_table / lab_run_json. */
void lab_run_init(struct lab_run *r, const struct lab_scenario *sc);
void lab_run_table(struct lab_run *r, FILE *f);
void lab_run_json(struct lab_run *r, FILE *f);

/* Starts the run's capture (if any) on port p; prints a message and returns nonzero on failure. */
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
/* Groups: a JSON object; in the table, an indented section. */
void lab_report_group_begin(struct lab_run *r, const char *key, const char *label);
void lab_report_group_end(struct lab_run *r);
void lab_report_end(struct lab_run *r);

/* The registered scenarios. */
extern const struct lab_scenario lab_scenario_ping;
extern const struct lab_scenario lab_scenario_bulk;
extern const struct lab_scenario lab_scenario_xen;
extern const struct lab_scenario lab_scenario_mvneta;

#endif
