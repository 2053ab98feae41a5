/*
 * lab.c — brisk-lab: the command line and the scenario framework (lab.h).
 *
 *   brisk-lab list [--json]                 the scenarios and their parameters
 *   brisk-lab settings [--json]             every stack setting with its default
 *   brisk-lab profiles [--json]             the compatibility profiles and the settings each sets
 *   brisk-lab run SCENARIO [--profile P] [--set k=v ...] [--json] [--pcap FILE [--pcap-frames N]]
 *                          [--out DIR]      --out: also write DIR/results.{txt,json,csv}, capture.pcap and
 *                                           the plots, as seeds does for each scenario
 *   brisk-lab seeds [--profile P] [--set k=v ...] [--json] [--pcap-frames N] [--out DIR]
 *                                           every seed scenario (docs/lab.md) with its defaults: tables on
 *                                           stdout, and per scenario DIR/<name>/results.json, results.txt,
 *                                           results.csv, capture.pcap (the first 2000 frames of the first
 *                                           row, headers only) and plots (PNG); then a SUMMARY table: one
 *                                           line per scenario, its headline figures, the expected shape and
 *                                           whether it holds (exit 1 if one does not)
 *
 * Every command and scenario has --help. Bad input (unknown command, option, scenario or setting, a
 * malformed or out-of-range value) prints a message naming it and exits with 2; a run that failed (a
 * transfer that did not complete, an expected shape that does not hold) says which check failed on stderr
 * and exits with 1.
 */
#include "lab/lab.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brisk/sim.h"
#include "common/fmt.h"
#include "lab/obs.h"
#include "lab/spec.h"
#include "lab/watch.h"

/* The compiled-in scenarios. The seed scenarios are files (scenarios/NAME.yaml with `reproduces:`, docs/lab.md):
 * `brisk-lab seeds` runs those, and `run NAME` finds a file of the scenarios directory by its name. A
 * compiled-in scenario with .seed set would run under `seeds` too, in the order of the reports' ids. */
static const struct lab_scenario *const scenarios[] = {
    &lab_scenario_ping, /* foundation: ARP + ICMP echo */
    &lab_scenario_bulk, /* foundation: one TCP transfer */
};
#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))


static int parse_param(enum lab_kind kind, const char *s, union lab_value *out)
{
    switch (kind) {
    case LAB_UINT:
        return brisk_parse_uint(s, &out->u);
    case LAB_SIZE:
        return brisk_parse_size(s, &out->u);
    case LAB_TIME:
        return brisk_parse_time(s, &out->u);
    case LAB_RATE:
        return brisk_parse_rate(s, &out->u);
    case LAB_PROB:
        return brisk_parse_prob(s, &out->p);
    }
    return BRISK_ERR_INVAL;
}

static const char *kind_syntax(enum lab_kind kind)
{
    switch (kind) {
    case LAB_UINT:
        return "an integer";
    case LAB_SIZE:
        return "a size like 1500, 64K, 4M";
    case LAB_TIME:
        return "a time like 100us, 10ms, 1s";
    case LAB_RATE:
        return "a rate like 1G, 100M (bit/s)";
    case LAB_PROB:
        return "a probability like 0.01 or 1%";
    }
    return "a value";
}

static const char *setting_syntax(enum brisk_value_kind kind)
{
    switch (kind) {
    case BRISK_VAL_UINT:
        return kind_syntax(LAB_UINT);
    case BRISK_VAL_SIZE:
        return kind_syntax(LAB_SIZE);
    case BRISK_VAL_TIME:
        return kind_syntax(LAB_TIME);
    case BRISK_VAL_RATE:
        return kind_syntax(LAB_RATE);
    case BRISK_VAL_BOOL:
        return "on or off";
    case BRISK_VAL_CHOICE:
        return "one of the names brisk-lab settings shows";
    }
    return "a value";
}

/* Whether v lies within p's bounds (each parsed in p's syntax; a bound that does not parse is a bug). */
static int in_range(const struct lab_param *p, union lab_value v)
{
    union lab_value b;
    if (p->min) {
        int rc = parse_param(p->kind, p->min, &b);
        assert(rc == BRISK_OK);
        (void)rc;
        if (p->kind == LAB_PROB ? v.p < b.p : v.u < b.u)
            return 0;
    }
    if (p->max) {
        int rc = parse_param(p->kind, p->max, &b);
        assert(rc == BRISK_OK);
        (void)rc;
        if (p->kind == LAB_PROB ? v.p > b.p : v.u > b.u)
            return 0;
    }
    return 1;
}

static void say_range(const struct lab_run *r, const struct lab_param *p, const char *value)
{
    fprintf(stderr, "brisk-lab %s: %s=%s is out of range: expected ", r->sc->name, p->name, value);
    if (p->min && p->max)
        fprintf(stderr, "%s to %s", p->min, p->max);
    else if (p->min)
        fprintf(stderr, "at least %s", p->min);
    else
        fprintf(stderr, "at most %s", p->max);
    fprintf(stderr, " (%s)\n", p->help);
}

void lab_run_init(struct lab_run *r, const struct lab_scenario *sc)
{
    memset(r, 0, sizeof(*r));
    r->sc = sc;
    assert(sc->nparams <= LAB_MAX_PARAMS);
    assert(brisk_settings_count() <= LAB_MAX_SETTINGS);
    for (int i = 0; i < sc->nparams; i++) {
        int rc = parse_param(sc->params[i].kind, sc->params[i].dflt, &r->v[i]);
        assert(rc == BRISK_OK && in_range(&sc->params[i], r->v[i]));
        (void)rc;
    }
    brisk_settings_default(&r->settings);
    r->family = 4;
}

void lab_run_table(struct lab_run *r, FILE *f)
{
    assert(r->ntables < LAB_MAX_TABLES);
    r->tables[r->ntables++] = f;
}

void lab_run_json(struct lab_run *r, FILE *f)
{
    r->json_out = f;
}

int lab_set(struct lab_run *r, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        fprintf(stderr, "brisk-lab: --set needs name=value, got '%s'\n", assignment);
        return BRISK_ERR_INVAL;
    }
    size_t n = (size_t)(eq - assignment);
    const char *value = eq + 1;
    if (n == 6 && strncmp(assignment, "family", 6) == 0) {
        /* Not a stack setting (the stack runs both families at once) nor one scenario's parameter: which
         * family the lab's hosts address each other by, in every scenario. */
        if (strcmp(value, "4") != 0 && strcmp(value, "6") != 0) {
            fprintf(stderr, "brisk-lab %s: family: '%s' is not an address family: expected 4 (IPv4) or 6 (IPv6)\n",
                    r->sc->name, value);
            return BRISK_ERR_RANGE;
        }
        r->family = value[0] - '0';
        return BRISK_OK;
    }
    for (int i = 0; i < r->sc->nparams; i++) {
        const struct lab_param *p = &r->sc->params[i];
        if (strlen(p->name) != n || strncmp(p->name, assignment, n) != 0)
            continue;
        union lab_value v;
        int rc = parse_param(p->kind, value, &v);
        if (rc != BRISK_OK) {
            fprintf(stderr, "brisk-lab %s: %s: '%s' is not %s (%s)\n", r->sc->name, p->name, value,
                    kind_syntax(p->kind), brisk_strerror(rc));
            return rc;
        }
        if (!in_range(p, v)) {
            say_range(r, p, value);
            return BRISK_ERR_RANGE;
        }
        r->v[i] = v;
        return BRISK_OK;
    }
    int rc = brisk_settings_set(&r->settings, assignment);
    if (rc == BRISK_OK) {
        if (r->nsets == LAB_MAX_SETS) {
            fprintf(stderr, "brisk-lab: at most %d --set assignments\n", LAB_MAX_SETS);
            return BRISK_ERR_RANGE;
        }
        r->sets[r->nsets++] = assignment;
    }
    if (rc == BRISK_ERR_NOENT) {
        fprintf(stderr,
                "brisk-lab: '%.*s' is neither a parameter of scenario %s nor a stack setting "
                "(see brisk-lab list, brisk-lab settings)\n",
                (int)n, assignment, r->sc->name);
        return rc;
    }
    for (size_t i = 0; i < brisk_settings_count(); i++) {
        const struct brisk_setting_desc *d = brisk_settings_desc(i);
        if (strlen(d->name) == n && strncmp(d->name, assignment, n) == 0) {
            if (rc != BRISK_OK)
                fprintf(stderr, "brisk-lab: %s: '%s' is not %s in range (%s)\n", d->name, value,
                        setting_syntax(d->kind), brisk_strerror(rc));
            else
                r->settings_changed[i] = 1;
        }
    }
    return rc;
}

int lab_profile(struct lab_run *r, const char *name)
{
    if (brisk_settings_apply_profile(&r->settings, name) != BRISK_OK) {
        fprintf(stderr, "brisk-lab: unknown profile '%s' (brisk-lab profiles)\n", name);
        return BRISK_ERR_NOENT;
    }
    r->profile = name;
    for (size_t p = 0; p < brisk_profiles_count(); p++) {
        if (strcmp(brisk_profile_name(p), name) != 0)
            continue;
        for (const char *const *a = brisk_profile_settings(p); *a; a++) {
            size_t n = strcspn(*a, "=");
            for (size_t i = 0; i < brisk_settings_count(); i++)
                if (strlen(brisk_settings_desc(i)->name) == n &&
                    strncmp(brisk_settings_desc(i)->name, *a, n) == 0)
                    r->settings_changed[i] = 1;
        }
    }
    return BRISK_OK;
}

static int param_index(const struct lab_run *r, const char *name)
{
    for (int i = 0; i < r->sc->nparams; i++)
        if (strcmp(r->sc->params[i].name, name) == 0)
            return i;
    assert(!"unknown scenario parameter");
    return 0;
}

int lab_row_settings(const struct lab_run *r, const char *profile, const char *const *extra,
                     struct brisk_settings *out)
{
    *out = r->settings;
    if (profile && brisk_settings_apply_profile(out, profile) != BRISK_OK) {
        fprintf(stderr, "brisk-lab %s: unknown profile '%s'\n", r->sc->name, profile);
        return BRISK_ERR_NOENT;
    }
    for (int i = 0; i < r->nsets; i++)
        brisk_settings_set(out, r->sets[i]); /* already checked by lab_set */
    for (const char *const *a = extra; a && *a; a++) {
        int rc = brisk_settings_set(out, *a);
        if (rc != BRISK_OK) {
            fprintf(stderr, "brisk-lab %s: bad row setting '%s' (%s)\n", r->sc->name, *a, brisk_strerror(rc));
            return rc;
        }
    }
    return BRISK_OK;
}

int lab_capture(struct lab_run *r, struct brisk_sim_port *p)
{
    if (!r->pcap || r->captured)
        return 0;
    r->captured = 1;
    int rc = r->pcap_frames ? brisk_sim_capture_slice(p, r->pcap, r->pcap_frames, 128)
                            : brisk_sim_capture(p, r->pcap);
    if (rc != BRISK_OK) {
        fprintf(stderr, "brisk-lab %s: cannot write capture %s\n", r->sc->name, r->pcap);
        return 1;
    }
    return 0;
}

uint64_t lab_u(const struct lab_run *r, const char *name)
{
    return r->v[param_index(r, name)].u;
}

double lab_p(const struct lab_run *r, const char *name)
{
    return r->v[param_index(r, name)].p;
}

/* ---- reporting: every call writes the JSON value (if JSON is on) and the table row (to every table) ---- */

static char *param_text(char *buf, const struct lab_param *p, union lab_value v)
{
    switch (p->kind) {
    case LAB_PROB:
        snprintf(buf, FMT_LEN, "%g", v.p);
        return buf;
    case LAB_SIZE:
        return fmt_value(buf, BRISK_VAL_SIZE, v.u);
    case LAB_TIME:
        return fmt_value(buf, BRISK_VAL_TIME, v.u);
    case LAB_RATE:
        return fmt_value(buf, BRISK_VAL_RATE, v.u);
    case LAB_UINT:
        break;
    }
    return fmt_value(buf, BRISK_VAL_UINT, v.u);
}

static void begin_json(struct lab_run *r)
{
    json_init(&r->j, r->json_out);
    json_object_begin(&r->j, NULL);
    json_str(&r->j, "scenario", r->sc->name);
    if (r->file && !r->sc->nparams) /* a file with parameters reports them, as a built-in scenario does */
        json_str(&r->j, "file", ((const struct lab_spec *)r->file)->path);
    json_str(&r->j, "profile", r->profile ? r->profile : "brisk");
    json_u64(&r->j, "family", (uint64_t)r->family);
    json_object_begin(&r->j, "parameters");
    for (int i = 0; i < r->sc->nparams; i++) {
        const struct lab_param *p = &r->sc->params[i];
        if (p->kind == LAB_PROB)
            json_double(&r->j, p->name, r->v[i].p);
        else
            json_u64(&r->j, p->name, r->v[i].u);
    }
    json_object_end(&r->j);
    json_object_begin(&r->j, "settings");
    for (size_t i = 0; i < brisk_settings_count(); i++) {
        const char *name = brisk_settings_desc(i)->name;
        if (brisk_settings_desc(i)->kind == BRISK_VAL_CHOICE)
            json_str(&r->j, name, brisk_settings_choice(i, brisk_settings_value(&r->settings, i)));
        else if (strcmp(name, "seed") != 0) /* hosts' seeds derive from the scenario's seed parameter */
            json_u64(&r->j, name, brisk_settings_value(&r->settings, i));
    }
    json_object_end(&r->j);
}

static void begin_table(const struct lab_run *r, FILE *f)
{
    char buf[FMT_LEN];
    if (r->sc->summary && r->sc->summary[0])
        fprintf(f, "== %s: %s ==\n", r->sc->name, r->sc->summary);
    else
        fprintf(f, "== %s ==\n", r->sc->name);
    fprintf(f, "profile:    %s\n", r->profile ? r->profile : "brisk (defaults)");
    if (r->family == 6) /* IPv4 runs read as they did before the family existed */
        fprintf(f, "family:     IPv6 (hosts dual-stack: 2001:db8:0:X::Y beside 10.0.X.Y)\n");
    if (r->file && !r->sc->nparams) {
        fprintf(f, "file:       %s", ((const struct lab_spec *)r->file)->path);
    } else {
        fprintf(f, "parameters:");
        for (int i = 0; i < r->sc->nparams; i++)
            fprintf(f, " %s=%s", r->sc->params[i].name, param_text(buf, &r->sc->params[i], r->v[i]));
    }
    fprintf(f, "\nsettings:  ");
    int any = 0;
    for (size_t i = 0; i < brisk_settings_count(); i++) {
        if (!r->settings_changed[i])
            continue;
        const struct brisk_setting_desc *d = brisk_settings_desc(i);
        fprintf(f, " %s=%s", d->name, fmt_setting(buf, i, brisk_settings_value(&r->settings, i)));
        any = 1;
    }
    fprintf(f, "%s\n", any ? "" : " defaults");
}

void lab_report_begin(struct lab_run *r)
{
    if (r->json_out)
        begin_json(r);
    for (int i = 0; i < r->ntables; i++)
        begin_table(r, r->tables[i]);
    r->depth = 1;
}

static void row(struct lab_run *r, const char *label, const char *text)
{
    int indent = 2 * r->depth;
    for (int i = 0; i < r->ntables; i++)
        fprintf(r->tables[i], "%*s%-*s %s\n", indent, "", 34 - indent, label, text);
}

void lab_report_u64(struct lab_run *r, const char *key, const char *label, uint64_t v)
{
    char buf[FMT_LEN];
    if (r->json_out)
        json_u64(&r->j, key, v);
    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    row(r, label, buf);
}

void lab_report_time(struct lab_run *r, const char *key, const char *label, uint64_t ns)
{
    char buf[FMT_LEN];
    if (r->json_out)
        json_u64(&r->j, key, ns);
    row(r, label, fmt_time(buf, ns));
}

void lab_report_double(struct lab_run *r, const char *key, const char *label, double v, const char *unit)
{
    char buf[64];
    if (r->json_out)
        json_double(&r->j, key, v);
    snprintf(buf, sizeof(buf), "%.3f%s%s", v, unit && *unit ? " " : "", unit ? unit : "");
    row(r, label, buf);
}

void lab_report_bool(struct lab_run *r, const char *key, const char *label, int v)
{
    if (r->json_out)
        json_bool(&r->j, key, v);
    row(r, label, v ? "yes" : "no");
}

void lab_report_rate(struct lab_run *r, const char *key, const char *label, double bps)
{
    char buf[FMT_LEN];
    if (r->json_out)
        json_double(&r->j, key, bps);
    row(r, label, fmt_rate(buf, bps));
}

void lab_report_str(struct lab_run *r, const char *key, const char *label, const char *text)
{
    if (r->json_out)
        json_str(&r->j, key, text);
    row(r, label, text);
}

void lab_report_text(struct lab_run *r, const char *label, const char *text)
{
    row(r, label, text);
}

void lab_report_none(struct lab_run *r, const char *key, const char *label, const char *why)
{
    if (r->json_out)
        json_null(&r->j, key);
    row(r, label, why);
}

void lab_report_group_begin(struct lab_run *r, const char *key, const char *label)
{
    if (r->json_out)
        json_object_begin(&r->j, key);
    for (int i = 0; i < r->ntables; i++)
        fprintf(r->tables[i], "%*s%s\n", 2 * r->depth, "", label);
    r->depth++;
}

void lab_report_group_end(struct lab_run *r)
{
    if (r->json_out)
        json_object_end(&r->j);
    r->depth--;
}

void lab_report_note(struct lab_run *r, const char *key, const char *text)
{
    if (r->json_out)
        json_str(&r->j, key, text);
    for (int i = 0; i < r->ntables; i++)
        fprintf(r->tables[i], "%*s%s\n", 2 * r->depth, "", text);
}

void lab_report_shape(struct lab_run *r, int pass, const char *expect, const char *fmt, ...)
{
    struct lab_shape *sh = &r->shape;
    sh->set = 1;
    sh->pass = pass;
    snprintf(sh->expect, sizeof(sh->expect), "%s", expect);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->headline, sizeof(sh->headline), fmt, ap);
    va_end(ap);
    if (r->json_out) {
        json_object_begin(&r->j, "shape");
        json_str(&r->j, "headline", sh->headline);
        json_str(&r->j, "expected", sh->expect);
        json_bool(&r->j, "pass", pass);
        json_object_end(&r->j);
    }
    for (int i = 0; i < r->ntables; i++)
        fprintf(r->tables[i], "  shape: %s\n  expected: %s -> %s\n", sh->headline, sh->expect,
                pass ? "PASS" : "FAIL");
}

void lab_report_end(struct lab_run *r)
{
    if (r->json_out) {
        json_object_end(&r->j);
        json_finish(&r->j);
    }
    for (int i = 0; i < r->ntables; i++) {
        fputc('\n', r->tables[i]);
        fflush(r->tables[i]);
    }
}

/* ---- commands ---- */

static const struct lab_scenario *find_scenario(const char *name)
{
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (strcmp(scenarios[i]->name, name) == 0)
            return scenarios[i];
    return NULL;
}

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: brisk-lab list [--json]\n"
               "       brisk-lab settings [--json]\n"
               "       brisk-lab profiles [--json]\n"
               "       brisk-lab run SCENARIO [--profile P] [--set name=value ...] [--json] [--pcap FILE "
               "[--pcap-frames N]] [--out DIR]\n"
               "       brisk-lab run FILE.yaml [the same options]   (a scenario file: docs/lab.md)\n"
               "       brisk-lab check FILE.yaml\n"
               "       brisk-lab seeds [--profile P] [--set name=value ...] [--json] [--pcap-frames N] "
               "[--out DIR]\n"
               "       brisk-lab soak [--seeds N] [--first S] [--json] [--verbose]\n"
               "       brisk-lab COMMAND --help, brisk-lab run SCENARIO --help\n"
               "Values: sizes 1500, 64K, 4M; rates 1G, 100M (bit/s); times 100us, 10ms, 1s; "
               "probabilities 0.01 or 1%%.\n"
               "--set family=6 runs any scenario over IPv6 (hosts dual-stack; ping sends ICMPv6 echoes).\n"
               "Exit status: 0 done, 1 the run failed (a transfer did not complete, an expected shape did not "
               "hold), 2 bad input.\n");
    return rc;
}

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* `run SCENARIO --help`: what it does, its parameters with defaults and ranges, and the options. */
static void scenario_help(const struct lab_scenario *sc)
{
    printf("brisk-lab run %s: %s%s%s%s\n", sc->name, sc->summary, sc->seed ? " (seed " : "",
           sc->seed ? sc->seed : "", sc->seed ? ")" : "");
    printf("parameters (--set name=value; default, allowed range):\n");
    for (int i = 0; i < sc->nparams; i++) {
        const struct lab_param *p = &sc->params[i];
        char range[64] = "";
        if (p->min || p->max)
            snprintf(range, sizeof(range), " [%s..%s]", p->min ? p->min : "", p->max ? p->max : "");
        printf("  %-18s %-8s %s%s\n", p->name, p->dflt, p->help, range);
    }
    printf("  %-18s %-8s %s\n", "family", "4",
           "every scenario: 6 gives the hosts IPv6 addresses (beside IPv4) and runs the flows over IPv6 [4, 6]");
    printf("Any stack setting can be --set too (brisk-lab settings), after --profile P (brisk-lab profiles).\n"
           "Options: --json (the report as JSON), --pcap FILE [--pcap-frames N] (capture the first world's "
           "first port), --out DIR (results.txt/json/csv, capture.pcap and plots under DIR), --tseq "
           "[START+]LEN|off (run bulk and scenario files: each bulk flow's time-sequence graph, with --out; default: from the SYN, 50 RTTs, at least 20ms), "
           "--ss-every INTERVAL (their ss lines sampled over virtual time into the JSON).\n");
}

/* The value of option argv[*i] (and moves past it), or NULL after a message: "--pcap needs a value". */
static const char *opt_value(const char *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "brisk-lab %s: option '%s' needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/*
 * Where the scenario files are: $BRISK_LAB_SCENARIOS, else beside the binary as a clone builds it
 * (build/brisk-lab -> scenarios/) or as `make install` puts it (bin/brisk-lab -> share/brisk/scenarios/), else
 * the source tree and the install directory this binary was configured with. The first that exists.
 */
static const char *scenarios_dir(char *buf, size_t cap)
{
    const char *env = getenv("BRISK_LAB_SCENARIOS");
    struct stat st;
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
        return buf;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    const char *rel[] = {"/../scenarios", "/../share/brisk/scenarios"};
    if (n > 0) {
        exe[n] = '\0';
        const char *d = dirname(exe);
        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
            if (snprintf(buf, cap, "%s%s", d, rel[i]) < (int)cap && stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
                return buf;
    }
#ifdef BRISK_LAB_SOURCE_SCENARIOS
    if (stat(BRISK_LAB_SOURCE_SCENARIOS, &st) == 0 && S_ISDIR(st.st_mode))
        return snprintf(buf, cap, "%s", BRISK_LAB_SOURCE_SCENARIOS), buf;
#endif
#ifdef BRISK_LAB_DATA_SCENARIOS
    if (stat(BRISK_LAB_DATA_SCENARIOS, &st) == 0 && S_ISDIR(st.st_mode))
        return snprintf(buf, cap, "%s", BRISK_LAB_DATA_SCENARIOS), buf;
#endif
    return NULL;
}

/* A seed scenario: compiled in, or a file of the scenarios directory that names the report it reproduces. */
struct seed {
    const struct lab_scenario *sc;
    struct lab_scenario file_sc;
    struct lab_spec *spec; /* NULL: compiled in */
};
#define MAX_SEEDS 32

static int seed_cmp(const void *a, const void *b)
{
    return strcmp(((const struct seed *)a)->sc->seed, ((const struct seed *)b)->sc->seed);
}

static void seeds_free(struct seed *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].spec);
}

/* The files of the scenarios directory, by name (seeds_only: those with `reproduces:`; a broken one is an
 * error then, exit 2, and skipped otherwise). Returns the count, or -1. */
static long scenario_files(struct seed *out, const char *dir, int seeds_only)
{
    size_t n = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    char names[MAX_SEEDS][256];
    size_t nnames = 0;
    while (d && (e = readdir(d)) != NULL && nnames < MAX_SEEDS) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < sizeof(names[0]) && !strcmp(e->d_name + len - 5, ".yaml"))
            snprintf(names[nnames++], sizeof(names[0]), "%s", e->d_name);
    }
    if (d)
        closedir(d);
    qsort(names, nnames, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < nnames; i++) {
        char path[4400];
        if (snprintf(path, sizeof(path), "%.4000s/%s", dir, names[i]) >= (int)sizeof(path))
            continue;
        struct lab_spec *spec = calloc(1, sizeof(*spec));
        if (!spec || lab_spec_load(path, spec) != 0) {
            free(spec);
            if (!seeds_only)
                continue;
            seeds_free(out, n);
            return -1;
        }
        if (seeds_only && !spec->reproduces[0]) {
            free(spec);
            continue;
        }
        out[n].spec = spec;
        lab_spec_scenario(spec, &out[n].file_sc);
        out[n].sc = &out[n].file_sc;
        n++;
    }
    return (long)n;
}

/* The seeds, in the order of the reports' ids: the seed files of the directory, and the compiled-in seeds no
 * file replaces. Returns the count, or -1 (a seed file is broken: its message printed). */
static long seeds_collect(struct seed *out, const char *dir)
{
    long got = scenario_files(out, dir, 1);
    if (got < 0)
        return -1;
    size_t n = (size_t)got;
    for (size_t i = 0; i < NSCENARIOS && n < MAX_SEEDS; i++) {
        int replaced = 0;
        for (size_t k = 0; k < n && scenarios[i]->seed; k++)
            replaced |= !strcmp(out[k].sc->name, scenarios[i]->name);
        if (scenarios[i]->seed && !replaced)
            out[n++] = (struct seed){.sc = scenarios[i]};
    }
    qsort(out, n, sizeof(*out), seed_cmp);
    for (size_t i = 0; i < n; i++)
        if (out[i].spec)
            out[i].sc = &out[i].file_sc; /* moved by the sort */
    return (long)n;
}

static int cmd_list(int argc, char **argv)
{
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return fprintf(stderr, "brisk-lab list: unknown option '%s'\n", argv[i]), usage(stderr, 2);
    }
    struct json j;
    json_init(&j, stdout);
    if (json)
        json_array_begin(&j, NULL);
    /* The compiled-in scenarios, then the files of the scenarios directory (the seeds among them). */
    static struct seed files[MAX_SEEDS];
    char dir[4096];
    long nfiles = scenario_files(files, scenarios_dir(dir, sizeof(dir)), 0);
    for (size_t s = 0; s < NSCENARIOS + (size_t)(nfiles > 0 ? nfiles : 0); s++) {
        const struct lab_scenario *sc = s < NSCENARIOS ? scenarios[s] : files[s - NSCENARIOS].sc;
        if (json) {
            json_object_begin(&j, NULL);
            json_str(&j, "name", sc->name);
            json_str(&j, "summary", sc->summary);
            if (sc->seed)
                json_str(&j, "seed", sc->seed);
            json_array_begin(&j, "parameters");
            for (int i = 0; i < sc->nparams; i++) {
                json_object_begin(&j, NULL);
                json_str(&j, "name", sc->params[i].name);
                json_str(&j, "default", sc->params[i].dflt);
                json_str(&j, "help", sc->params[i].help);
                json_object_end(&j);
            }
            json_array_end(&j);
            json_object_end(&j);
            continue;
        }
        printf("%-12s %s\n", sc->name, sc->summary);
        if (s >= NSCENARIOS)
            printf("    (%s)\n", files[s - NSCENARIOS].spec->path);
        for (int i = 0; i < sc->nparams; i++)
            printf("    %-14s %-8s %s\n", sc->params[i].name, sc->params[i].dflt, sc->params[i].help);
    }
    seeds_free(files, nfiles > 0 ? (size_t)nfiles : 0);
    if (json) {
        json_array_end(&j);
        json_finish(&j);
    }
    return 0;
}

static int cmd_settings(int argc, char **argv)
{
    int json = argc == 1 && strcmp(argv[0], "--json") == 0;
    if (argc > 0 && !json)
        return fprintf(stderr, "brisk-lab settings: unknown option '%s'\n", argv[0]), usage(stderr, 2);
    struct brisk_settings s;
    brisk_settings_default(&s);
    struct json j;
    json_init(&j, stdout);
    if (json)
        json_object_begin(&j, NULL);
    for (size_t i = 0; i < brisk_settings_count(); i++) {
        const struct brisk_setting_desc *d = brisk_settings_desc(i);
        char buf[FMT_LEN];
        if (json && d->kind == BRISK_VAL_CHOICE)
            json_str(&j, d->name, brisk_settings_choice(i, brisk_settings_value(&s, i)));
        else if (json)
            json_u64(&j, d->name, brisk_settings_value(&s, i));
        else
            printf("%-24s %-10s %s\n", d->name, fmt_setting(buf, i, brisk_settings_value(&s, i)), d->help);
    }
    if (json) {
        json_object_end(&j);
        json_finish(&j);
    }
    return 0;
}

static int cmd_profiles(int argc, char **argv)
{
    int json = argc == 1 && strcmp(argv[0], "--json") == 0;
    if (argc > 0 && !json)
        return fprintf(stderr, "brisk-lab profiles: unknown option '%s'\n", argv[0]), usage(stderr, 2);
    struct json j;
    json_init(&j, stdout);
    if (json)
        json_array_begin(&j, NULL);
    for (size_t p = 0; p < brisk_profiles_count(); p++) {
        const char *const *sets = brisk_profile_settings(p);
        if (json) {
            json_object_begin(&j, NULL);
            json_str(&j, "name", brisk_profile_name(p));
            json_str(&j, "summary", brisk_profile_help(p));
            json_array_begin(&j, "settings");
            for (const char *const *a = sets; *a; a++)
                json_str(&j, NULL, *a);
            json_array_end(&j);
            json_object_end(&j);
            continue;
        }
        printf("%-16s %s\n", brisk_profile_name(p), brisk_profile_help(p));
        printf("%-16s", "");
        if (!*sets)
            printf(" (the defaults: brisk-lab settings)");
        for (const char *const *a = sets; *a; a++)
            printf(" %s", *a);
        printf("\n");
    }
    if (json) {
        json_array_end(&j);
        json_finish(&j);
    }
    return 0;
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The files a run writes into a directory (seeds, run --out). */
struct outdir {
    char dir[4096], pcap[4200];
    FILE *json, *txt, *csv;
};

static void outdir_close(struct outdir *o)
{
    if (o->json)
        fclose(o->json);
    if (o->txt)
        fclose(o->txt);
    if (o->csv)
        fclose(o->csv);
    o->json = o->txt = o->csv = NULL;
}

/* Creates DIR and opens results.json, results.txt and results.csv there; points the run's table, JSON, CSV,
 * capture (unless one was asked for) and plots at them. Returns 0, or nonzero after a message. */
static int outdir_open(struct outdir *o, struct lab_run *r, const char *dir)
{
    char path[4200];
    memset(o, 0, sizeof(*o));
    if (snprintf(o->dir, sizeof(o->dir), "%s", dir) >= (int)sizeof(o->dir) || mkdir_p(dir) != 0) {
        fprintf(stderr, "brisk-lab: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof(path), "%s/results.json", dir);
    o->json = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/results.txt", dir);
    o->txt = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/results.csv", dir);
    o->csv = fopen(path, "w");
    if (!o->json || !o->txt || !o->csv) {
        fprintf(stderr, "brisk-lab: cannot write under %s: %s\n", dir, strerror(errno));
        outdir_close(o);
        return 1;
    }
    lab_run_table(r, o->txt);
    lab_run_json(r, o->json);
    r->csv_out = o->csv;
    if (!r->pcap) {
        snprintf(o->pcap, sizeof(o->pcap), "%s/capture.pcap", dir);
        r->pcap = o->pcap;
        r->pcap_frames = 2000; /* a representative slice: the first 2000 frames, headers only */
    }
    r->plot_dir = o->dir;
    return 0;
}

/* The options run and seeds share. Unknown options and missing values print a message (exit 2). */
struct run_opts {
    int json;
    const char *out, *profile, *pcap;
    uint64_t pcap_frames;
    int pcap_frames_set;
    const char *sets[LAB_MAX_SETS];
    int nsets;
    const char *tseq, *ss_every; /* run: obs.h */
};

/* is_run: `run` (takes --pcap FILE; --json and --out exclude each other) rather than `seeds`. */
static int parse_opts(const char *cmd, int argc, char **argv, int is_run, struct run_opts *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--out") == 0 || strcmp(a, "--profile") == 0 || strcmp(a, "--set") == 0 ||
                   strcmp(a, "--pcap-frames") == 0 ||
                   (is_run && (strcmp(a, "--pcap") == 0 || strcmp(a, "--tseq") == 0 || strcmp(a, "--ss-every") == 0))) {
            if (!(v = opt_value(cmd, argc, argv, &i)))
                return 2;
            if (strcmp(a, "--out") == 0) {
                o->out = v;
            } else if (strcmp(a, "--profile") == 0) {
                o->profile = v;
            } else if (strcmp(a, "--pcap") == 0) {
                o->pcap = v;
            } else if (strcmp(a, "--tseq") == 0) {
                o->tseq = v;
            } else if (strcmp(a, "--ss-every") == 0) {
                o->ss_every = v;
            } else if (strcmp(a, "--pcap-frames") == 0) {
                if (brisk_parse_uint(v, &o->pcap_frames) != BRISK_OK) {
                    fprintf(stderr, "brisk-lab %s: --pcap-frames needs a frame count (0: all), got '%s'\n",
                            cmd, v);
                    return 2;
                }
                o->pcap_frames_set = 1;
            } else if (o->nsets == LAB_MAX_SETS) {
                fprintf(stderr, "brisk-lab %s: at most %d --set assignments\n", cmd, LAB_MAX_SETS);
                return 2;
            } else {
                o->sets[o->nsets++] = v;
            }
        } else if (strncmp(a, "--set=", 6) == 0 && o->nsets < LAB_MAX_SETS) {
            o->sets[o->nsets++] = a + 6;
        } else {
            fprintf(stderr, "brisk-lab %s: unknown option '%s' (brisk-lab %s --help)\n", cmd, a, cmd);
            return 2;
        }
    }
    if (is_run && o->json && o->out) {
        fprintf(stderr, "brisk-lab %s: --out writes results.json itself; drop --json\n", cmd);
        return 2;
    }
    return 0;
}

/* Whether assignment "name=value" names a parameter of sc or a stack setting. */
static int names_known(const struct lab_scenario *sc, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    size_t n = eq ? (size_t)(eq - assignment) : strlen(assignment);
    if (n == 6 && strncmp(assignment, "family", 6) == 0)
        return 1; /* every scenario's */
    for (int k = 0; k < sc->nparams; k++)
        if (strlen(sc->params[k].name) == n && strncmp(sc->params[k].name, assignment, n) == 0)
            return 1;
    for (size_t k = 0; k < brisk_settings_count(); k++)
        if (strlen(brisk_settings_desc(k)->name) == n && strncmp(brisk_settings_desc(k)->name, assignment, n) == 0)
            return 1;
    return 0;
}

/* A run of sc configured by the options: the profile first, then every --set in order. With only_known,
 * an assignment that is neither a parameter of sc nor a stack setting is skipped (seeds: a parameter of
 * another seed scenario). Returns 0, or 2 after a message. */
static int configure(struct lab_run *r, const struct lab_scenario *sc, const struct run_opts *o,
                     int only_known)
{
    lab_run_init(r, sc);
    if (o->profile && lab_profile(r, o->profile) != BRISK_OK)
        return 2;
    for (int i = 0; i < o->nsets; i++) {
        if (only_known && !names_known(sc, o->sets[i]))
            continue;
        if (lab_set(r, o->sets[i]) != BRISK_OK)
            return 2;
    }
    r->pcap = o->pcap;
    r->pcap_frames = o->pcap_frames;
    return 0;
}

/* What a finished run's exit status says, and on stderr which check failed. */
static int run_status(const struct lab_run *r, int rc)
{
    if (rc == 2)
        return 2; /* the scenario refused its parameters */
    if (lab_signalled()) {
        fprintf(stderr, "brisk-lab %s: interrupted by signal %d: the figures above are partial\n", r->sc->name,
                lab_signalled());
        return 128 + lab_signalled();
    }
    if (rc)
        return 1; /* it said why */
    if (r->shape.set && !r->shape.pass) {
        fprintf(stderr, "brisk-lab %s: FAILED: the expected shape does not hold: %s (got: %s)\n", r->sc->name,
                r->shape.expect, r->shape.headline);
        return 1;
    }
    return 0;
}

/* `run FILE.yaml ...` (or the name of a file in the scenarios directory): a scenario file (spec.h) run with the
 * same options as a built-in scenario. */
static int run_file(const char *path, int argc, char **argv)
{
    struct lab_spec *spec = calloc(1, sizeof(*spec));
    if (!spec)
        return 1;
    int rc = lab_spec_load(path, spec);
    struct lab_scenario sc;
    lab_spec_scenario(spec, &sc);
    for (int i = 1; rc == 0 && i < argc; i++) {
        if (is_help(argv[i])) {
            scenario_help(&sc);
            printf("The scenario file: %s\n", path);
            free(spec);
            return 0;
        }
    }
    struct run_opts o;
    struct lab_run r;
    if (rc == 0 && (parse_opts("run", argc - 1, argv + 1, 1, &o) != 0 || configure(&r, &sc, &o, 0) != 0 ||
                    lab_obs_options(&r, o.tseq, o.ss_every, o.out != NULL) != 0))
        rc = 2;
    struct outdir od = {0};
    if (rc == 0) {
        r.file = spec;
        if (o.json)
            lab_run_json(&r, stdout);
        else
            lab_run_table(&r, stdout);
        if (o.out && outdir_open(&od, &r, o.out) != 0)
            rc = 1;
    }
    if (rc == 0) {
        if (o.out && o.pcap_frames_set)
            r.pcap_frames = o.pcap_frames;
        lab_signals_install();
        rc = run_status(&r, lab_spec_run(&r, spec));
        outdir_close(&od);
    }
    free(spec);
    return rc;
}

/* `check FILE`: read and check a scenario file without running it. */
static int cmd_check(int argc, char **argv)
{
    if (argc != 1 || is_help(argv[0])) {
        printf("usage: brisk-lab check FILE.yaml\nReads and checks a scenario file (docs/lab.md, \"Scenario "
               "files\") without running it: exit 0 if it is valid, else 2 with file:line: and what is wrong.\n");
        return argc == 1 ? 0 : 2;
    }
    struct lab_spec *spec = calloc(1, sizeof(*spec));
    if (!spec)
        return 1;
    int rc = lab_spec_load(argv[0], spec);
    if (rc == 0)
        printf("%s: scenario %s: %d flow(s), %d row(s), %d expected bound(s)\n", argv[0], spec->name,
               spec->nflows, spec->nrows, spec->nexpect);
    free(spec);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    if (argc < 1)
        return fprintf(stderr, "brisk-lab run: which scenario? (brisk-lab list)\n"), 2;
    if (is_help(argv[0])) {
        printf("usage: brisk-lab run SCENARIO [--profile P] [--set name=value ...] [--json] [--pcap FILE "
               "[--pcap-frames N]] [--out DIR]\nscenarios (brisk-lab run SCENARIO --help for one):\n");
        for (size_t i = 0; i < NSCENARIOS; i++)
            printf("  %-12s %s\n", scenarios[i]->name, scenarios[i]->summary);
        static struct seed files[MAX_SEEDS];
        char dir[4096];
        long n = scenario_files(files, scenarios_dir(dir, sizeof(dir)), 0);
        if (n > 0)
            printf("scenario files in %s (run NAME or run PATH):\n", dir);
        for (long i = 0; i < n; i++)
            printf("  %-12s %s\n", files[i].sc->name, files[i].sc->summary);
        seeds_free(files, n > 0 ? (size_t)n : 0);
        return 0;
    }
    if (lab_spec_is_file(argv[0]))
        return run_file(argv[0], argc, argv);
    const struct lab_scenario *sc = find_scenario(argv[0]);
    if (!sc) { /* a file of the scenarios directory, by its name: run xen-tsq is scenarios/xen-tsq.yaml */
        char dir[4096], path[4200];
        if (scenarios_dir(dir, sizeof(dir)) && strchr(argv[0], '.') == NULL &&
            snprintf(path, sizeof(path), "%s/%s.yaml", dir, argv[0]) < (int)sizeof(path) && access(path, R_OK) == 0)
            return run_file(path, argc, argv);
        return fprintf(stderr, "brisk-lab run: unknown scenario '%s' (brisk-lab list)\n", argv[0]), 2;
    }
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            scenario_help(sc);
            return 0;
        }
    }
    struct run_opts o;
    struct lab_run r;
    if (parse_opts("run", argc - 1, argv + 1, 1, &o) != 0 || configure(&r, sc, &o, 0) != 0 ||
        lab_obs_options(&r, o.tseq, o.ss_every, o.out != NULL) != 0)
        return 2;
    if (o.json)
        lab_run_json(&r, stdout);
    else
        lab_run_table(&r, stdout);
    struct outdir od = {0};
    if (o.out && outdir_open(&od, &r, o.out) != 0)
        return 1;
    lab_signals_install();
    if (o.out && o.pcap_frames_set)
        r.pcap_frames = o.pcap_frames;
    int rc = sc->run(&r);
    outdir_close(&od);
    return run_status(&r, rc);
}

static const char *verdict_of(int ran, const struct lab_shape *sh)
{
    if (ran < 0)
        return "STOPPED";
    if (!ran)
        return "ERROR";
    return !sh->set ? "-" : sh->pass ? "PASS" : "FAIL";
}

static int cmd_seeds(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: brisk-lab seeds [--profile P] [--set name=value ...] [--json] [--pcap-frames N] "
                   "[--out DIR]\n"
                   "Runs every seed scenario (docs/lab.md) and prints a SUMMARY: its headline figures, the "
                   "expected shape and PASS / FAIL (exit 1 if one fails or cannot run).\n"
                   "--profile and stack settings given with --set apply to every scenario (beside each one's "
                   "own rows); a scenario parameter applies to the scenarios that have it.\n"
                   "--out DIR (default out/lab): per scenario DIR/<name>/results.txt/json/csv, plots and "
                   "capture.pcap (the first 2000 frames, headers only; --pcap-frames N: N frames, 0: all, "
                   "whole).\n--json: the SUMMARY as JSON on stdout (the tables still go to each results.txt).\n");
            return 0;
        }
    }
    struct run_opts o;
    if (parse_opts("seeds", argc, argv, 0, &o) != 0)
        return 2;
    const char *out = o.out ? o.out : "out/lab";
    static struct seed sd[MAX_SEEDS];
    const struct lab_scenario *seeds[MAX_SEEDS];
    struct lab_shape shapes[MAX_SEEDS];
    int ran[MAX_SEEDS];
    char sdir[4096];
    const char *dir = scenarios_dir(sdir, sizeof(sdir));
    long got = seeds_collect(sd, dir);
    if (got < 0)
        return 2;
    size_t n = (size_t)got;
    for (size_t i = 0; i < n; i++)
        seeds[i] = sd[i].sc;
    /* Every --set must mean something to at least one seed scenario (or be a stack setting). */
    for (int k = 0; k < o.nsets; k++) {
        int known = 0;
        for (size_t i = 0; i < n && !known; i++)
            known = names_known(seeds[i], o.sets[k]);
        if (!known) {
            fprintf(stderr,
                    "brisk-lab seeds: '%s' names neither a parameter of a seed scenario nor a stack setting "
                    "(brisk-lab list, brisk-lab settings)\n",
                    o.sets[k]);
            seeds_free(sd, n);
            return 2;
        }
    }
    lab_signals_install();
    fprintf(stderr, "brisk-lab: %zu seed scenarios:", n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s%s", seeds[i]->name, sd[i].spec ? "" : " (compiled in)");
    fprintf(stderr, " (scenario files from %s)\n", dir ? dir : "nowhere: no scenarios directory found");
    int failed = 0, shape_failed = 0;
    size_t total = n;
    for (size_t i = 0; i < n; i++) {
        if (lab_signalled()) { /* the rest are not run; the SUMMARY lists what was */
            n = i;
            break;
        }
        char odir[4096];
        snprintf(odir, sizeof(odir), "%s/%s", out, seeds[i]->name);
        fprintf(stderr, "brisk-lab: [%zu/%zu] %s (seed %s) -> %s/%s%s\n", i + 1, n, seeds[i]->name,
                seeds[i]->seed, odir, sd[i].spec ? " from " : "", sd[i].spec ? sd[i].spec->path : "");
        struct lab_run r;
        struct outdir od;
        if (configure(&r, seeds[i], &o, 1) != 0) {
            seeds_free(sd, n);
            return 2;
        }
        r.file = sd[i].spec;
        if (!o.json)
            lab_run_table(&r, stdout);
        int rc = 1;
        if (outdir_open(&od, &r, odir) == 0) {
            if (o.pcap_frames_set)
                r.pcap_frames = o.pcap_frames; /* instead of outdir_open's representative slice */
            rc = sd[i].spec ? lab_spec_run(&r, sd[i].spec) : seeds[i]->run(&r);
        }
        outdir_close(&od);
        if (rc == 2) {
            seeds_free(sd, n);
            return 2;
        }
        ran[i] = lab_signalled() ? -1 : rc == 0; /* -1: stopped by a signal, its figures partial */
        shapes[i] = r.shape;
        if (ran[i] < 0) {
            n = i + 1;
            break;
        }
        if (!ran[i])
            failed++;
        else if (r.shape.set && !r.shape.pass)
            shape_failed++;
    }
    if (o.json) {
        struct json j;
        json_init(&j, stdout);
        json_array_begin(&j, NULL);
        for (size_t i = 0; i < n; i++) {
            json_object_begin(&j, NULL);
            json_str(&j, "name", seeds[i]->name);
            json_str(&j, "seed", seeds[i]->seed);
            json_str(&j, "verdict", verdict_of(ran[i], &shapes[i]));
            if (ran[i] > 0 && shapes[i].set) {
                json_str(&j, "headline", shapes[i].headline);
                json_str(&j, "expected", shapes[i].expect);
            }
            json_object_end(&j);
        }
        json_array_end(&j);
        json_finish(&j);
    } else {
        printf("== SUMMARY: the seed scenarios beside their expected shapes (docs/lab.md) ==\n");
        for (size_t i = 0; i < n; i++) {
            printf("%-10s %-6s %s\n", seeds[i]->name, verdict_of(ran[i], &shapes[i]),
                   ran[i] > 0 ? shapes[i].headline : ran[i] < 0 ? "stopped by a signal" : "did not run");
            if (ran[i] > 0 && shapes[i].set)
                printf("%-10s %-6s expected: %s\n", "", "", shapes[i].expect);
        }
    }
    fflush(stdout);
    fprintf(
        stderr,
        "brisk-lab: %zu scenario(s) run, %d failed to run, %d shape(s) not as expected; results under %s/\n",
        n, failed, shape_failed, out);
    for (size_t i = 0; i < n; i++)
        if (ran[i] > 0 && shapes[i].set && !shapes[i].pass)
            fprintf(stderr, "brisk-lab %s: FAILED: the expected shape does not hold: %s\n", seeds[i]->name,
                    shapes[i].expect);
    seeds_free(sd, total);
    if (lab_signalled()) {
        fprintf(stderr, "brisk-lab seeds: interrupted by signal %d after %zu of %zu scenarios: partial results\n",
                lab_signalled(), n, total);
        return 128 + lab_signalled();
    }
    return failed || shape_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 2);
    const char *cmd = argv[1];
    if (argc == 3 && is_help(argv[2]) &&
        (strcmp(cmd, "list") == 0 || strcmp(cmd, "settings") == 0 || strcmp(cmd, "profiles") == 0)) {
        printf("usage: brisk-lab %s [--json]\n%s\n", cmd,
               strcmp(cmd, "list") == 0       ? "The scenarios, each with its parameters and their defaults."
               : strcmp(cmd, "settings") == 0 ? "Every stack setting with its default and what it does."
                                              : "The compatibility profiles and the settings each sets.");
        return 0;
    }
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "settings") == 0)
        return cmd_settings(argc - 2, argv + 2);
    if (strcmp(cmd, "profiles") == 0)
        return cmd_profiles(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "seeds") == 0)
        return cmd_seeds(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "soak") == 0)
        return lab_soak_main(argc - 2, argv + 2);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
        return usage(stdout, 0);
    fprintf(stderr, "brisk-lab: unknown command '%s'\n", cmd);
    return usage(stderr, 2);
}
