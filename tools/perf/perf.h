/*
 * perf.h — brisk-perf's protocol engines: an iperf3-compatible client and server, a request/response client
 * and an echo server, all running on brisk sockets.
 *
 * The engines are sans-IO in the brisk sense: they make no system calls and read no clock. They own brisk
 * sockets, react to socket events (the callbacks of brisk.h) and to `perf_*_tick(now)` when their own
 * deadline (`perf_*_deadline()`) comes, and they produce a `struct perf_report`. Whoever drives the stack —
 * the real-time loop over a TAP device (main.c) or the simulator (tests/perf/) — also drives the engine:
 *
 *   e = perf_iperf_client_new(&env, &params, &server, &err);
 *   loop: on every stack event the engine's socket callbacks run by themselves;
 *         when now >= perf_iperf_client_deadline(e): perf_iperf_client_tick(e, now);
 *   until perf_iperf_client_done(e); then perf_iperf_client_report(e, &r).
 *
 * `env.kick` is called when the engine touched the stack outside a stack callback (from tick), so that the
 * driver polls the stack before it sleeps again (the simulator's brisk_sim_host_kick).
 */
#ifndef BRISK_PERF_H
#define BRISK_PERF_H

#include <stdint.h>
#include <stdio.h>

#include "brisk/brisk.h"

#define PERF_DEFAULT_PORT    5201
#define PERF_DEFAULT_BLKSIZE (128u * 1024u) /* iperf3's TCP default */
#define PERF_MAX_STREAMS     128            /* iperf3 caps -P at 128 as well */
#define PERF_ERR_LEN         160

/* One reading of the driver's clocks: monotonic time, Unix time, and the CPU time the process has used. */
struct perf_cpu_sample {
    uint64_t mono_ns;            /* for the elapsed time CPU use is divided by */
    uint64_t unix_s;             /* start.timestamp */
    uint64_t user_ns, system_ns; /* getrusage(RUSAGE_SELF) ru_utime / ru_stime */
};

/* CPU use over the test, percent of one CPU's elapsed time (iperf3's cpu_util: user + system over wall). */
struct perf_cpu_util {
    double total, user, system;
};
/* CPU use between two samples (zero when no time passed). */
void perf_cpu_util_between(const struct perf_cpu_sample *a, const struct perf_cpu_sample *b,
                           struct perf_cpu_util *out);

/* One interval of one stream, as iperf3's intervals[].streams[] has it. The TCP figures are sampled at the
 * end of the interval and are set only for a stream this side sends on (have_tcp). */
struct perf_interval_stream {
    int id;
    int sender;
    int have_tcp;
    uint64_t bytes;       /* moved in this interval */
    uint64_t retransmits; /* segments retransmitted in this interval */
    uint32_t snd_cwnd;    /* bytes */
    uint32_t snd_wnd;     /* the peer's advertised window, bytes (brisk_conn_info.snd_wnd) */
    uint32_t rtt_us, rttvar_us;
    uint32_t pmtu; /* send MSS + 40 (IPv4 and TCP headers without options): brisk keeps no path MTU */
    /* UDP (have_udp): the sender's datagrams sent in the interval; the receiver's packet numbers advanced
     * (iperf3's interval packets), datagrams counted lost, and the jitter at the interval's end. */
    int have_udp;
    uint64_t packets;
    int64_t lost;  /* negative when late datagrams took back more than were lost (as iperf3's) */
    double jitter; /* seconds */
};
/* Times are since the test's start (TEST_START). */
struct perf_interval {
    uint64_t start_ns, end_ns;
};
/* The intervals of one test: interval i's streams are st[i * nstreams ... + nstreams). The arrays belong to
 * the engine; they hold until its next test starts or it is freed. */
struct perf_intervals_view {
    const struct perf_interval *iv;
    const struct perf_interval_stream *st;
    uint32_t n, nstreams;
    int truncated; /* memory ran out: later intervals were not kept */
};

struct perf_env {
    brisk_stack *st;
    void (*kick)(void *ctx); /* may be NULL */
    void *kick_ctx;
    FILE *log; /* progress and diagnostics, one line each; NULL = quiet */
    /* Optional fine clock for latency stamps (rr): a real-time driver hands every callback of one loop
     * iteration the same `now`, so a reply read in the iteration that sent its request would measure 0.
     * NULL: use `now` (the simulator's exact virtual time). */
    uint64_t (*clock)(void *ctx);
    void *clock_ctx;
    uint64_t seed; /* makes the client's cookie (deterministic in the simulator) */
    /* iperf3's -i: the engines close an interval report (intervals[] in the JSON) every interval_ns of the
     * test, and a last one when the counts freeze. 0 = none. */
    uint64_t interval_ns;
    /* The process's CPU time and the clocks, as iperf3 reads them (getrusage and the wall clock), sampled at
     * TEST_START and when the results are built: end.cpu_utilization_percent and start.timestamp. NULL (the
     * simulator without a scripted clock): all zero. */
    void (*cpu)(void *ctx, struct perf_cpu_sample *out);
    void *cpu_ctx;
};

/* One iperf3 test as the client asks for it (the parameter exchange carries it to the server). */
struct perf_params {
    uint16_t port;        /* server port (5201) */
    uint64_t duration_ns; /* -t; 0 when the test is bounded by bytes */
    uint64_t bytes;       /* -n: total bytes over all streams; 0 = by time */
    uint32_t parallel;    /* -P streams (1 ... PERF_MAX_STREAMS) */
    int reverse;          /* -R: the server sends */
    uint32_t blksize;     /* -l: bytes per write */
    int nodelay;          /* -N: TCP_NODELAY on the data streams */
    uint32_t mss;         /* -M: clamp the data streams' MSS (0 = leave) */
    uint32_t window;      /* -w: socket buffers of the data streams (0 = stack default) */
    int udp;              /* -u: UDP streams (datagrams of blksize bytes) instead of TCP */
    uint64_t rate;        /* -b: UDP: each stream's pacing, bit/s (0 = as fast as the socket takes them) */
    int counters64;       /* --udp-counters-64bit: 64-bit packet numbers in the UDP header */
};
void perf_params_default(struct perf_params *p); /* 10 s, one stream, 128 KB blocks, port 5201 */

/* What one side saw of one test. "local" figures are measured here; "remote" ones come from the peer's
 * results in the exchange (iperf3's EXCHANGE_RESULTS). */
struct perf_stream_report {
    int id;                 /* iperf3 stream id: 1, 3, 4, 5, ... (iperf3's numbering) */
    int sender;             /* this side sent on it */
    uint64_t bytes;         /* sent (sender) or received (receiver) here */
    uint64_t remote_bytes;  /* the peer's figure for the same stream */
    uint64_t retransmits;   /* sender side: segments retransmitted (brisk_conn_info) */
    int64_t remote_retrans; /* the peer's figure (-1 = not reported) */
    uint64_t seconds_ns;    /* here: test start to the end of this stream's activity */
    double remote_seconds;  /* the peer's end_time - start_time */
    uint32_t mss;           /* negotiated send MSS */
    uint64_t srtt_ns;
    struct brisk_addr laddr, raddr; /* the data connection's addresses (start.connected[]) */
    uint16_t lport, rport;
    int have_info;               /* info holds the stream's brisk_conn_info (taken at close or now) */
    struct brisk_conn_info info; /* for the JSON's "brisk" object: recovery events and hold times */
    /* UDP: this side's figures (sender: datagrams sent; receiver: the highest packet number, lost,
     * out-of-order, jitter in seconds, datagrams too short for a header) and the peer's from its results. */
    int udp;
    uint64_t packets, lost, out_of_order, short_drops;
    double jitter;
    uint64_t remote_packets, remote_lost;
    double remote_jitter;
};
struct perf_report {
    int role;     /* 'c' or 's' */
    int reverse;  /* the server sent */
    int complete; /* the whole exchange ran (through DISPLAY_RESULTS / IPERF_DONE) */
    int error;    /* 0, or what failed (err holds the text) */
    char err[PERF_ERR_LEN];
    uint32_t nstreams;
    struct perf_stream_report streams[PERF_MAX_STREAMS];
    uint64_t duration_ns;                  /* TEST_START to TEST_END here */
    uint64_t sent, received;               /* this side, all streams */
    uint64_t remote_sent, remote_received; /* from the peer's results */
    struct perf_params params;             /* as negotiated */
    /* For iperf3's start and end objects: */
    char cookie[40];
    struct brisk_addr ctrl_laddr,
        ctrl_raddr; /* the control connection (connecting_to / accepted_connection) */
    uint16_t ctrl_lport, ctrl_rport;
    uint32_t ctrl_mss;        /* client: the control connection's send MSS (tcp_mss_default) */
    uint64_t sndbuf, rcvbuf;  /* the first data stream's buffer sizes (sndbuf_actual, ...) */
    uint64_t timestamp_s;     /* Unix time at TEST_START (0: no clock) */
    int have_cpu;             /* the driver gave a CPU clock */
    struct perf_cpu_util cpu; /* here, TEST_START to the results */
    int have_remote_cpu;
    struct perf_cpu_util remote_cpu; /* the peer's, from the results exchange */
    char congestion[16];             /* this side's data streams' congestion control */
    char remote_congestion[16];      /* the peer's (results exchange "congestion_used"), "" if not sent */
    struct perf_intervals_view intervals;
    uint64_t udp_strays; /* server, UDP: datagrams that belonged to no stream of the test */
};

/* ---- iperf3 client (speaks to iperf3 -s or brisk-perf server) ---- */
struct perf_iperf_client;
/* Starts the control connection to server (either family). NULL with *err (BRISK_ERR_*) on failure. */
struct perf_iperf_client *perf_iperf_client_new(const struct perf_env *env, const struct perf_params *p,
                                                const struct brisk_addr *server, uint64_t now, int *err);
uint64_t perf_iperf_client_deadline(const struct perf_iperf_client *c);
void perf_iperf_client_tick(struct perf_iperf_client *c, uint64_t now);
int perf_iperf_client_done(const struct perf_iperf_client *c); /* finished or failed */
/* Progress while a test runs: 1 and the payload bytes moved so far (sent + received here), or 0 when no
 * test is running. */
int perf_iperf_client_progress(const struct perf_iperf_client *c, uint64_t *bytes);
void perf_iperf_client_report(const struct perf_iperf_client *c, struct perf_report *out);
/* The running (or last) test's intervals so far: for live interval lines. */
void perf_iperf_client_intervals(const struct perf_iperf_client *c, struct perf_intervals_view *out);
void perf_iperf_client_free(struct perf_iperf_client *c, uint64_t now); /* closes what is still open */

/* ---- iperf3 server (serves iperf3 -c or brisk-perf client), one test at a time like iperf3 ---- */
struct perf_iperf_server;
/* Listens on ip:port (ip 0 = any of the stack's addresses). once: stop after the first test. */
struct perf_iperf_server *perf_iperf_server_new(const struct perf_env *env, const struct brisk_addr *ip,
                                                uint16_t port, int once, int *err);
uint64_t perf_iperf_server_deadline(const struct perf_iperf_server *s);
void perf_iperf_server_tick(struct perf_iperf_server *s, uint64_t now);
int perf_iperf_server_done(const struct perf_iperf_server *s); /* `once` and the test ended */
/* Tests finished so far (complete or failed), and the report of the last one (0 if none yet). */
uint32_t perf_iperf_server_tests(const struct perf_iperf_server *s);
int perf_iperf_server_progress(const struct perf_iperf_server *s, uint64_t *bytes); /* as the client's */
int perf_iperf_server_last_report(const struct perf_iperf_server *s, struct perf_report *out);
void perf_iperf_server_intervals(const struct perf_iperf_server *s, struct perf_intervals_view *out);
/* The current test's report so far (no streams when idle): for the lines printed when a test starts. */
void perf_iperf_server_report(const struct perf_iperf_server *s, struct perf_report *out);
/* Called with each finished test's report (may be NULL). */
void perf_iperf_server_on_report(struct perf_iperf_server *s,
                                 void (*fn)(void *ctx, const struct perf_report *r), void *ctx);
void perf_iperf_server_free(struct perf_iperf_server *s, uint64_t now);

/* ---- request/response ---- */
struct perf_rr_params {
    uint16_t port;
    uint32_t req_size, resp_size; /* the echo server answers as many bytes as it received: keep them equal
                                     against it */
    uint64_t duration_ns;         /* run this long ... */
    uint64_t count;               /* ... or this many transactions (0 = by time) */
    uint32_t parallel;            /* connections, each with one transaction outstanding */
    int nodelay;                  /* TCP_NODELAY (default on) */
};
void perf_rr_params_default(struct perf_rr_params *p); /* 64/64 bytes, 10 s, 1 connection, NODELAY */
struct perf_rr_report {
    int complete, error;
    char err[PERF_ERR_LEN];
    uint64_t transactions;
    uint64_t duration_ns; /* first request to last response */
    double tps;           /* transactions per second */
    uint64_t lat_min_ns, lat_max_ns, lat_mean_ns;
    uint64_t p50_ns, p90_ns, p99_ns;
    struct perf_rr_params params;
};
struct perf_rr_client;
struct perf_rr_client *perf_rr_client_new(const struct perf_env *env, const struct perf_rr_params *p,
                                          const struct brisk_addr *server, uint64_t now, int *err);
uint64_t perf_rr_client_deadline(const struct perf_rr_client *c);
void perf_rr_client_tick(struct perf_rr_client *c, uint64_t now);
int perf_rr_client_done(const struct perf_rr_client *c);
void perf_rr_client_report(const struct perf_rr_client *c, struct perf_rr_report *out);
void perf_rr_client_free(struct perf_rr_client *c, uint64_t now);

/* Echo server: every byte read is written back; many connections at once. */
struct perf_echo_server;
struct perf_echo_server *perf_echo_server_new(const struct perf_env *env, const struct brisk_addr *ip,
                                              uint16_t port, int nodelay, int *err);
uint64_t perf_echo_server_bytes(const struct perf_echo_server *s);       /* echoed so far */
uint32_t perf_echo_server_connections(const struct perf_echo_server *s); /* accepted so far */
void perf_echo_server_free(struct perf_echo_server *s, uint64_t now);

/* ---- output (report.c) ---- */
void perf_report_print(FILE *f, const struct perf_report *r);
/* Interval i in iperf3's text format (one line per stream, [SUM] with several, the separator); header: the
 * "[ ID] Interval ..." line first. */
void perf_interval_print(FILE *f, const struct perf_intervals_view *v, uint32_t i, int header);
/* The lines iperf3 prints when a test starts: "Connecting to host ..." (client) or "Accepted connection
 * from ..." (server), then "[ ID] local A port P connected to B port Q" per stream. */
void perf_report_print_connected(FILE *f, const struct perf_report *r);
void perf_report_json(FILE *f, const struct perf_report *r);
void perf_rr_report_print(FILE *f, const struct perf_rr_report *r);
void perf_rr_report_json(FILE *f, const struct perf_rr_report *r);

#endif
