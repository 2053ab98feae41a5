/*
 * iperf_proto.h — the iperf3 wire protocol as brisk-perf speaks it: control-state values, the cookie, the
 * framing of the control connection (one signed byte per state, JSON behind a 4-byte big-endian length),
 * the parameter and result objects, and the data-stream pump shared by the client and the server.
 */
#ifndef BRISK_PERF_IPERF_PROTO_H
#define BRISK_PERF_IPERF_PROTO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"

/* Control states (iperf.h): each is sent as one signed byte on the control connection. */
enum iperf_state {
    IPERF_TEST_START = 1,
    IPERF_TEST_RUNNING = 2,
    IPERF_RESULT_REQUEST = 3, /* unused by iperf3 itself */
    IPERF_TEST_END = 4,
    IPERF_STREAM_BEGIN = 5,
    IPERF_STREAM_RUNNING = 6,
    IPERF_STREAM_END = 7,
    IPERF_ALL_STREAMS_END = 8,
    IPERF_PARAM_EXCHANGE = 9,
    IPERF_CREATE_STREAMS = 10,
    IPERF_SERVER_TERMINATE = 11,
    IPERF_CLIENT_TERMINATE = 12,
    IPERF_EXCHANGE_RESULTS = 13,
    IPERF_DISPLAY_RESULTS = 14,
    IPERF_IPERF_START = 15,
    IPERF_IPERF_DONE = 16,
    IPERF_ACCESS_DENIED = -1,
    IPERF_SERVER_ERROR = -2,
};
const char *iperf_state_name(int state);

/* The cookie: 36 characters from a 32-letter alphabet and a NUL, sent first on every connection of a test
 * (control and data) so the server can tell which test a data connection belongs to. */
#define IPERF_COOKIE_SIZE 37
void iperf_cookie_make(char cookie[IPERF_COOKIE_SIZE], uint64_t seed);
/* 1 if `c` has the cookie's shape (36 alphabet characters and a NUL). */
int iperf_cookie_valid(const uint8_t c[IPERF_COOKIE_SIZE]);

/* Largest JSON message accepted on the control connection. iperf3 sends a few hundred bytes (more with
 * --get-server-output, which brisk-perf never asks for); anything bigger is treated as hostile. */
#define IPERF_JSON_MAX (256u * 1024u)

/*
 * The control connection: what arrived and was not consumed yet, and what waits to be sent. Reads drain the
 * socket; the parser takes one state byte or one whole JSON message at a time, so the engines never see a
 * partial message.
 */
struct iperf_ctrl {
    brisk_sock *s;
    uint8_t *in;
    size_t in_len, in_cap;
    uint8_t *out;
    size_t out_len, out_cap;
    int eof;   /* the peer's FIN arrived */
    int error; /* BRISK_ERR_* from the socket, or BRISK_ERR_NOMEM / BRISK_ERR_MSGSIZE from the framing */
};
void iperf_ctrl_init(struct iperf_ctrl *c, brisk_sock *s);
void iperf_ctrl_free(struct iperf_ctrl *c);
/* Reads everything the socket has; returns bytes read (>= 0) or the error. */
int64_t iperf_ctrl_read(struct iperf_ctrl *c, uint64_t now);
/* Takes one state byte: 1 and *state, or 0 when none is buffered. */
int iperf_ctrl_take_state(struct iperf_ctrl *c, int *state);
/* Takes one length-prefixed JSON object: 1 and *out (caller frees with json_decref), 0 when incomplete,
 * BRISK_ERR_MSGSIZE for a length over IPERF_JSON_MAX, BRISK_ERR_INVAL for text that is not a JSON object. */
int iperf_ctrl_take_json(struct iperf_ctrl *c, json_t **out);
/* Queue a state byte / a JSON object (compact) and send what the socket takes. BRISK_OK or an error. */
int iperf_ctrl_put_state(struct iperf_ctrl *c, int state, uint64_t now);
int iperf_ctrl_put_json(struct iperf_ctrl *c, const json_t *j, uint64_t now);
/* Sends queued bytes; BRISK_OK (all sent or the rest waits for WRITABLE) or the socket's error. */
int iperf_ctrl_flush(struct iperf_ctrl *c, uint64_t now);
/* Appends raw bytes to the output (the cookie). */
int iperf_ctrl_put_raw(struct iperf_ctrl *c, const void *p, size_t n, uint64_t now);

/* Parameters as iperf3's client sends them (flags are present only when set: iperf3's server tests presence,
 * not value). */
json_t *iperf_params_to_json(const struct perf_params *p);
/* Reads the parameters a client sent. Returns BRISK_OK, or BRISK_ERR_INVAL with a reason in err for a test
 * brisk-perf cannot run (SCTP, bidirectional, out-of-range values; a UDP -l outside PERF_UDP_MIN_LEN ...
 * PERF_UDP_MAX_LEN). Unknown keys are ignored. */
int iperf_params_from_json(const json_t *j, struct perf_params *p, char *err, size_t errlen);

/* One stream's figures in the results exchange. */
struct iperf_stream_result {
    int id;
    uint64_t bytes;
    int64_t retransmits;
    double start_time, end_time; /* seconds */
};
/* One stream's UDP figures in the results exchange: the receiver's jitter (seconds) and datagrams lost
 * ("errors"); packets: the sender's datagrams sent, or the receiver's highest packet number. iperf3 sends all
 * three over TCP too, as 0. */
struct iperf_udp_result {
    double jitter;
    uint64_t errors, packets;
};
/* Results object: cpu figures (zero here; iperf_results_set_meta puts the measured ones),
 * sender_has_retransmits (1, 0, or -1 for "not the sender", which iperf3 writes as 2^64 - 1), streams. */
json_t *iperf_results_to_json(int sender_has_retransmits, const struct iperf_stream_result *r, size_t n);
/* Parses the peer's results into r[0..*n) (at most cap). BRISK_OK or BRISK_ERR_INVAL with a reason. */
int iperf_results_from_json(const json_t *j, struct iperf_stream_result *r, size_t cap, size_t *n, char *err,
                            size_t errlen);

/* What else a results object carries: the sender's CPU use (cpu_util_total / _user / _system, percent) and
 * its congestion control ("congestion_used", iperf3 3.x; "" = leave out / not sent). */
struct iperf_results_meta {
    struct perf_cpu_util cpu;
    char congestion[16];
};
/* Sets them on a results object made by iperf_results_to_json. BRISK_OK or BRISK_ERR_NOMEM. */
int iperf_results_set_meta(json_t *j, const struct iperf_results_meta *m);
/* Reads them from a peer's results (which iperf_results_from_json accepted); a congestion name that is not a
 * short printable string is left out. */
void iperf_results_get_meta(const json_t *j, struct iperf_results_meta *m);

/* Puts u[0..n) into the streams of a results object made by iperf_results_to_json (in its stream order).
 * BRISK_OK or BRISK_ERR_NOMEM. */
int iperf_results_set_udp(json_t *j, const struct iperf_udp_result *u, size_t n);
/* Reads the UDP figures of a peer's results (which iperf_results_from_json accepted) into u[0..n): absent or
 * out of range (a jitter of a day, a count past 2^60) reads as 0. */
void iperf_results_get_udp(const json_t *j, struct iperf_udp_result *u, size_t n);

/* iperf3 numbers stream ids 1, 3, 4, 5, ... (its list insertion starts the second stream at 3). */
int iperf_stream_id(uint32_t index);

/* A JSON number as an unsigned integer: integers, or reals that are whole and in range (cJSON prints large
 * integers as %g reals). Returns 1 and *out, or 0. */
int iperf_json_u64(const json_t *v, uint64_t *out);

#endif
