/*
 * spec.h — a lab scenario described in a file instead of C (docs/lab.md, "Scenario files").
 *
 * A scenario file is YAML (parsed by libyaml): two hosts, a and b, joined by one link, or a topology of
 * named hosts and routers and the links between them (dumbbells, parking lots); host a's NIC (a topology:
 * every host's); the flows the hosts run (bulk transfers, request/response exchanges and on/off sources, each with a start time); the rows to
 * compare (each a profile, stack settings, and changes to the link or the NIC, so a row can also be one point
 * of a sweep; a row with a `sweep:` key is written out once per value of its variables, `${VAR}` in its texts,
 * and the rows it writes are hand-written rows to everything after the parse); and the expected shape, a list of bounds on the rows' figures that gives PASS or FAIL as the
 * seed scenarios do. The seed scenarios themselves are such files (scenarios/iscsi.yaml ...): for them the format
 * has parameters (--set), values computed from the parameters (${...}), a report of the file's own (columns,
 * named values, lines, headline, plots; expressions of expr.h over the rows' figures), pdu flows (pdu.h) and
 * the few facts of a seed's world (which host runs the rows' settings, which is made first). spec_parse.c
 * reads and checks a file into a struct lab_spec, naming the file, line and key of anything wrong;
 * spec_run.c builds one world per row, runs it and reports.
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
#define SPEC_MAX_NODES   32 /* hosts and routers of a topology */
#define SPEC_MAX_LINKS   48
#define SPEC_MAX_ROW_LINKS 8 /* links a row changes by name */
#define SPEC_NAME        24
#define SPEC_EXPR        512 /* an expression or a {..}-formatted text (expr.h) */

enum spec_flow_kind { SPEC_BULK, SPEC_RR, SPEC_PDU, SPEC_ONOFF };
const char *lab_spec_flow_kind_name(enum spec_flow_kind k); /* "bulk", "rr", "pdu", "onoff" */

struct spec_flow {
    enum spec_flow_kind kind;
    int line;          /* where the file describes it */
    int from, to;      /* node indices: the client (connects; "up" is from -> to) and the server */
    char from_name[SPEC_NAME], to_name[SPEC_NAME]; /* as written ("" = a, b), resolved at the end */
    uint64_t start_ns; /* virtual time of its connect */
    /* bulk */
    uint64_t bytes;
    enum brisk_sim_bulk_dir dir;
    uint32_t write_size;
    /* rr */
    uint32_t conns, transactions, request, response;
    int nodelay;
    /* pdu (pdu.h): request above, then per I/O the server's header and payload sends */
    uint32_t ios, header, payload;
    int more; /* MSG_MORE on the header */
    /* onoff (onoff.h): bursts of `burst` bytes and / or `on` long, `off` idle between them, `cycles` of them */
    uint64_t burst, on_ns, off_ns;
    uint32_t cycles;
    uint16_t port;     /* server port (0: 5001 + i for bulk, 6001 + i for rr, 3260 for pdu, 7001 + i for onoff) */
    unsigned set_mask; /* which keys the file gave (a row's flows: change only those), SPEC_FLOW_* bits */
};
enum {
    SPEC_FLOW_BYTES = 1,
    SPEC_FLOW_DIR = 2,
    SPEC_FLOW_WRITE = 4,
    SPEC_FLOW_START = 8,
    SPEC_FLOW_CONNS = 16,
    SPEC_FLOW_TRANSACTIONS = 32,
    SPEC_FLOW_REQUEST = 64,
    SPEC_FLOW_RESPONSE = 128,
    SPEC_FLOW_NODELAY = 256,
    SPEC_FLOW_PORT = 512,
    SPEC_FLOW_IOS = 1024,
    SPEC_FLOW_HEADER = 2048,
    SPEC_FLOW_PAYLOAD = 4096,
    SPEC_FLOW_MORE = 8192,
    SPEC_FLOW_BURST = 16384,
    SPEC_FLOW_ON = 32768,
    SPEC_FLOW_OFF = 65536,
    SPEC_FLOW_CYCLES = 131072,
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
    int has_tx_ring, has_completion, has_gso, has_bql, has_rx_batch, has_rx_coalesce, has_mtu, has_csum;
    uint32_t tx_ring, gso, rx_batch, mtu;
    uint64_t rx_coalesce_ns; /* with rx_batch: interrupt moderation (brisk_sim_nic_config.rx_coalesce_ns) */
    struct brisk_sim_txc completion;
    int bql;
    int csum; /* checksum offload (CAP_CSUM); off also turns TSO off, as Linux does (TSO needs it) */
};

/* A router's queueing discipline, as the file or a row changes it (has_ flags as for links). */
struct spec_qdisc {
    int has_kind, has_limit_packets, has_limit_bytes, has_flows, has_quantum, has_target, has_interval;
    struct brisk_sim_qdisc q;
};

/* A topology (the file's hosts, routers and links keys); without one, hosts a and b on one link. */
#define SPEC_MAX_HOST_SETS 8
struct spec_node {
    char name[SPEC_NAME];
    int line;
    int router;             /* 0: a host (one NIC, on exactly one link) */
    struct spec_qdisc qdisc; /* routers: every port's queue */
    /* Hosts: their own profile and settings, over the row's (a receiver kept at linux-6.x while the rows
     * change the sender's). "" / 0: the row's alone. */
    char profile[32];
    char sets[SPEC_MAX_HOST_SETS][96];
    int nsets;
};
struct spec_tlink {
    char name[SPEC_NAME]; /* optional: rows change a link by its name */
    int line;
    int a, b;             /* node indices; forward is a -> b */
    char an[SPEC_NAME], bn[SPEC_NAME]; /* as written, resolved at the end of the parse */
    struct spec_link link;
    struct spec_qdisc queue; /* the queue of a router end of this link, over the router's */
};
struct spec_row_link {
    char name[SPEC_NAME];
    int line;
    int index; /* into lab_spec.tlinks, resolved at the end of the parse */
    struct spec_link link;
    struct spec_qdisc queue;
};

struct spec_row {
    int line;
    char name[40];
    char profile[32]; /* "" = none */
    char sets[SPEC_MAX_SETS][96]; /* "name=value" stack settings, after the profile */
    int nsets;
    struct spec_link link; /* over the file's link */
    struct spec_nic nic;   /* over the file's NIC */
    struct spec_qdisc router; /* over every router's queues */
    struct spec_row_link links[SPEC_MAX_ROW_LINKS]; /* topology: changes to named links */
    int nlinks;
    int link_line; /* where the row's `link` is (0: none): a topology changes links by name instead */
    char how[SPEC_TEXT];   /* the row's link and NIC changes as written ("nic.completion=coalesce 64 10ms") */
    char label[64];        /* the table's label ("" = the name) */
    char how_fmt[SPEC_EXPR]; /* `how:` text ({EXPR:%FMT} fields) instead of the changes as written */
    struct spec_flow flows[SPEC_MAX_FLOWS]; /* changes to the file's flows, in its order (set_mask: which) */
    int nflows;
    int flows_line;
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
    char check[SPEC_EXPR]; /* instead of a figure's bounds: an expression over the rows that must hold */
};

/* A parameter of the file (`params:`): set with --set NAME=VALUE, used in ${...} values and expressions. */
#define SPEC_MAX_PARAMS 16
struct spec_param {
    char name[32], dflt[32], min[32], max[32], help[SPEC_TEXT];
    enum lab_kind kind;
};

/* A value given as ${EXPR} where the file describes the world (a rate, a delay, a count): evaluated over
 * the parameters before each row, into the field at byte offset `off` of the struct lab_spec. */
#define SPEC_MAX_BINDS 64
struct spec_bind {
    int line;
    char path[64];
    size_t off;
    int width;   /* 8: uint64_t, 4: uint32_t, -8: double (a probability) */
    int integer; /* a count, size, time or rate: floored, and checked within [lo, hi] */
    uint64_t lo, hi;
    char expr[SPEC_EXPR];
};

/* The report of a file with a `report:` section: its own columns, lines above the table, named values, the
 * shape's headline and expected text, plots. Without one, the default table and headline. */
#define SPEC_MAX_COLS   LAB_TABLE_MAX_COLS
#define SPEC_MAX_LINES  4
#define SPEC_MAX_VALUES 16
#define SPEC_MAX_PLOTS  4
#define SPEC_MAX_SERIES 4
#define SPEC_MAX_POINTS 12
struct spec_col {
    int line;
    char key[40], head[32];
    enum lab_col_kind kind;
    int hide;
    char value[SPEC_EXPR]; /* "" = the row's figure called key */
};
struct spec_line {
    int line;
    char key[40], label[64];
    enum lab_col_kind kind; /* RATE, TIME, U64, DOUBLE */
    char value[SPEC_EXPR];
};
struct spec_value {
    int line;
    char name[32];
    char expr[SPEC_EXPR];
};
struct spec_series {
    char name[64];
    int n;
    double x[SPEC_MAX_POINTS];
    char y[SPEC_MAX_POINTS][96]; /* expressions */
};
struct spec_plot {
    int line;
    char name[32], title[SPEC_TEXT], xlabel[64], ylabel[32];
    int logx, log2x, steps;
    int timeline;              /* one series per row: Mbit/s delivered over time (rows: which; none = all) */
    int cumulative;            /* timeline: KB delivered so far instead of Mbit/s */
    int cdf;                   /* one series per row: the distribution of its pdu flows' I/O times */
    char rows[SPEC_MAX_ROWS][40];
    int nrows;
    struct spec_series series[SPEC_MAX_SERIES]; /* or points computed from the rows' figures */
    int nseries;
    char ref_name[4][64], ref_y[4][96];
    int nrefs;
};
struct spec_report {
    int on;
    char title[SPEC_TEXT];
    char note_key[32], note[SPEC_TEXT * 2]; /* a line above the table ("" = none) */
    struct spec_col cols[SPEC_MAX_COLS];
    int ncols;
    struct spec_line lines[SPEC_MAX_LINES];
    int nlines;
    struct spec_value values[SPEC_MAX_VALUES];
    int nvalues;
    char headline[SPEC_EXPR * 2], expected[SPEC_TEXT];
    int headline_line;
    struct spec_plot plots[SPEC_MAX_PLOTS];
    int nplots;
};
enum { SPEC_PEER_ROW, SPEC_PEER_RUN, SPEC_PEER_DEFAULTS };

/* A condition on the parameters that must hold before anything runs (else exit 2 with the message). */
#define SPEC_MAX_REQUIRE 4
struct spec_require {
    int line;
    char check[SPEC_EXPR], message[SPEC_TEXT];
};

struct lab_spec {
    char path[512];
    char name[40], summary[SPEC_TEXT];
    uint64_t seed, limit_ns;
    struct spec_link link;
    struct spec_nic nic;
    int topology; /* hosts / routers / links given: nodes and tlinks below, else a and b on `link` */
    struct spec_node nodes[SPEC_MAX_NODES];
    int nnodes;
    struct spec_tlink tlinks[SPEC_MAX_LINKS];
    int ntlinks;
    int topo_line; /* where the topology keys are, for messages about it */
    int link_line; /* where the file's `link` is (0: none) */
    struct spec_flow flows[SPEC_MAX_FLOWS];
    int nflows;
    struct spec_row rows[SPEC_MAX_ROWS];
    int nrows;
    struct spec_expect expect[SPEC_MAX_EXPECT];
    int nexpect;
    /* Parameters, ${...} values and the report (docs/lab.md, "Parameters and reports"). */
    char reproduces[40]; /* the netdev report a seed file reproduces ("000_1a49bfb366b99c70"): `seeds` runs it */
    struct spec_param params[SPEC_MAX_PARAMS];
    int nparams;
    struct lab_param lab_params[SPEC_MAX_PARAMS]; /* the same as the framework's (pointing into params) */
    struct spec_bind binds[SPEC_MAX_BINDS];
    int nbinds;
    struct spec_require require[SPEC_MAX_REQUIRE];
    int nrequire;
    int has_stack_seed;  /* every host's stack seeded with stack_seed instead of one derived per host */
    uint64_t stack_seed;
    uint64_t sample_ns;  /* the timeline plots' sampling interval */
    int peer;            /* host b of a two-host file: the row's settings, the run's, or brisk's defaults */
    char peer_sets[SPEC_MAX_HOST_SETS][96]; /* and these over them (peer_set) */
    int npeer_sets;
    int peer_line;
    int peer_host;  /* which host is the peer: 1 = b (the default), 0 = a */
    int first_b;    /* host b (its stack, its NIC, its end of the link) is made first: it gets the first host seed */
    int capture_b;  /* --pcap records host b's port instead of a's */
    struct spec_report report;
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
#define SPEC_NFIGURES 58
extern const char *const lab_spec_figures[SPEC_NFIGURES + 1];
/* Topology routing: the link a packet from node `from` takes first towards link `target` (a router forwards,
 * a host does not), by the fewest router hops and then the file's link order; -1 when none reaches it. */
int lab_spec_first_link(const struct lab_spec *s, int from, int target);
/* The link a host is on (-1: none). */
int lab_spec_host_link(const struct lab_spec *s, int host);

/* Where an expression is evaluated, which decides what its names mean (docs/lab.md): WORLD (${...} values,
 * require, a row's how: the parameters), COLUMN (a row's figures, its settings as set.NAME, other rows' as
 * ROW.FIGURE, the parameters), REPORT (named values, parameters, the run's settings as set.NAME, ROW.COLUMN
 * or ROW.FIGURE, ROW.set.NAME). */
enum spec_scope { SPEC_SCOPE_WORLD, SPEC_SCOPE_COLUMN, SPEC_SCOPE_REPORT };
int lab_spec_param_index(const struct lab_spec *s, const char *name);
int lab_spec_figure_index(const char *name);
int lab_spec_setting_index(const char *name);
int lab_spec_col_index(const struct lab_spec *s, const char *name);
/* "ROW.REST" -> REST and *row, or NULL when no row's name begins name and a dot. */
const char *lab_spec_split_row(const struct lab_spec *s, const char *name, int *row);

/* The framework's scenario for a file: its name, summary, seed id and parameters (pointing into s). */
void lab_spec_scenario(const struct lab_spec *s, struct lab_scenario *sc);

/* A row's I/O-time distribution (pdu flows): x in us, y the fraction of I/Os (a cdf plot's series). */
struct spec_cdf {
    double *x, *y;
    size_t n;
};

/* Whether plot number `plot` of the file draws row `row`'s timeline. */
int lab_spec_plots_row(const struct lab_spec *s, int plot, int row);
int lab_spec_rows_row(const struct lab_spec *s, int plot, int row);

/* Runs every row of the file and reports through r (whose scenario is the file's; its --set assignments
 * apply to every row before the row's own). Returns 0, 1 (a row could not run) or 2. */
int lab_spec_run(struct lab_run *r, const struct lab_spec *s);

#endif
