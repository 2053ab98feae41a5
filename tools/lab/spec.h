/*
 * spec.h — a lab scenario described in a file instead of C (docs/lab.md, "Scenario files").
 *
 * A scenario file is YAML (parsed by libyaml): two hosts, a and b, joined by one link; host a's NIC; the
 * flows the hosts run (bulk transfers and request/response exchanges, each with a start time); the rows to
 * compare (each a profile, stack settings, and changes to the link or the NIC, so a row can also be one point
 * of a sweep); and the expected shape, a list of bounds on the rows' figures that gives PASS or FAIL as the
 * seed scenarios do. spec_parse.c reads and checks a file into a struct lab_spec, naming the file, line and
 * key of anything wrong; spec_run.c builds one world per row, runs it and reports.
 */
#ifndef BRISK_LAB_SPEC_H
#define BRISK_LAB_SPEC_H

#include <stdint.h>
#include <stdio.h>

#include "brisk/sim.h"
#include "lab/lab.h"

#define SPEC_MAX_FLOWS   16
#define SPEC_MAX_ROWS    LAB_TABLE_MAX_ROWS
#define SPEC_MAX_SETS    32
#define SPEC_MAX_EXPECT  32
#define SPEC_TEXT        160

enum spec_flow_kind { SPEC_BULK, SPEC_RR };

struct spec_flow {
    enum spec_flow_kind kind;
    int line;          /* where the file describes it */
    uint64_t start_ns; /* virtual time of its connect */
    /* bulk */
    uint64_t bytes;
    enum brisk_sim_bulk_dir dir;
    uint32_t write_size;
    /* rr */
    uint32_t conns, transactions, request, response;
    int nodelay;
};

/* What a row may change about the path (a field is applied only when its `has_` flag is set). */
struct spec_link_dir {
    int has_rate, has_delay, has_queue_packets, has_queue_bytes, has_loss, has_gilbert, has_reorder,
        has_reorder_delay, has_duplicate, has_corrupt;
    uint64_t rate_bps, delay_ns, queue_bytes, reorder_delay_ns;
    uint32_t queue_packets;
    double loss, reorder, duplicate, corrupt;
    double ge_p_good_bad, ge_p_bad_good, ge_loss_good, ge_loss_bad;
};
struct spec_link {
    struct spec_link_dir both, forward, reverse; /* forward: a -> b, reverse: b -> a (over `both`) */
};
struct spec_nic {
    int has_tx_ring, has_completion, has_gso, has_bql, has_rx_batch, has_mtu;
    uint32_t tx_ring, gso, rx_batch, mtu;
    struct brisk_sim_txc completion;
    int bql;
};

struct spec_row {
    char name[40];
    char profile[32]; /* "" = none */
    char sets[SPEC_MAX_SETS][96]; /* "name=value" stack settings, after the profile */
    int nsets;
    struct spec_link link; /* over the file's link */
    struct spec_nic nic;   /* over the file's NIC */
    char how[SPEC_TEXT];   /* the row's link and NIC changes as written ("nic.completion=coalesce 64 10ms") */
};

/* One bound of the expected shape: `figure` of row `row` (every row when empty), of flow `flow` (1-based;
 * 0 = the row's total), at least min and / or at most max. */
struct spec_expect {
    int line;
    char row[40];
    char figure[32];
    uint32_t flow;
    int has_min, has_max;
    double min, max;
    char text[SPEC_TEXT]; /* the bound as written, for the report */
};

struct lab_spec {
    char path[512];
    char name[40], summary[SPEC_TEXT];
    uint64_t seed, limit_ns;
    struct spec_link link;
    struct spec_nic nic;
    struct spec_flow flows[SPEC_MAX_FLOWS];
    int nflows;
    struct spec_row rows[SPEC_MAX_ROWS];
    int nrows;
    struct spec_expect expect[SPEC_MAX_EXPECT];
    int nexpect;
};

/* Whether a command-line argument names a scenario file rather than a built-in scenario. */
int lab_spec_is_file(const char *arg);
#define SPEC_MAX_FILE (1 << 20) /* bytes: a scenario file is a page of text, not a data set */

/* Reads and checks path into *s. Returns 0, or 2 after a message "path:line: ..." on stderr. */
int lab_spec_load(const char *path, struct lab_spec *s);
/* The same for a file already in memory (len bytes of text; path names it in messages, which go to err, or
 * nowhere if err is NULL). */
int lab_spec_parse(const char *path, const unsigned char *text, size_t len, struct lab_spec *s, FILE *err);
/* The figures a row has (and an expectation may name), NULL-terminated. */
#define SPEC_NFIGURES 12
extern const char *const lab_spec_figures[SPEC_NFIGURES + 1];
/* Runs every row of the file and reports through r (whose scenario is the file's; its --set assignments
 * apply to every row before the row's own). Returns 0, 1 (a row could not run) or 2. */
int lab_spec_run(struct lab_run *r, const struct lab_spec *s);

#endif
