/*
 * obs.h — looking at a run's bulk flows from inside the simulation, the way a kernel developer looks at a
 * real connection: `ss -ti` (its line at the end of the run, and sampled over virtual time into the JSON)
 * and the time-sequence graph (tcptrace / Wireshark's Stevens graph: every segment sent, retransmissions
 * marked, the ACK line and the receive window's right edge) with brisk's hold reasons drawn as coloured
 * bands under it — the picture of why a byte waited.
 *
 * Everything comes from the running mechanism and changes nothing in it: the segments and ACKs from a
 * port observer (brisk_sim_port_observe: the frames a capture would record, at the same moments), the hold
 * reason from the sender's brisk_conn_info read after every simulator event in the graph's window (the
 * reason changes only inside the transmit function, which runs inside an event, so each band starts and
 * ends at the exact virtual time the reason did), the ss lines from brisk_conn_info through the same JSON
 * object and formatter as brisk-ss (tools/introspect/ssline.h). Reading a socket does not touch it, and the
 * sampling events touch no host, so the run, its figures and its capture stay what they were.
 *
 * Use, per world (one row): lab_obs_new, lab_obs_add per bulk flow once it is started, lab_obs_watch on the
 * run's lab_watch, run, lab_obs_end per flow with its result, lab_obs_finish (draws the graphs, removes the
 * observers) before the world is freed; after every row's table, lab_obs_report with every row's lab_obs.
 */
#ifndef BRISK_LAB_OBS_H
#define BRISK_LAB_OBS_H

#include "brisk/sim.h"
#include "lab/lab.h"
#include "lab/watch.h"

/* The options of `run` that ask for it: --tseq WINDOW|off, --ss-every INTERVAL. WINDOW is LEN or START+LEN
 * of virtual time from the SYN that opened the flow ("20ms", "1s+5ms"); the graphs are drawn with --out
 * (default window: from the SYN, 50 round trips of the handshake and at least 20 ms) unless --tseq off.
 * Returns 0, or 2 after a message naming the bad value. */
int lab_obs_options(struct lab_run *r, const char *tseq, const char *ss_every, int out);

struct lab_obs;

struct lab_obs_flow {
    brisk_sim_host *client, *server;
    brisk_sim_port *client_port, *server_port; /* their NICs (the sender's is observed) */
    struct brisk_addr server_addr; /* the address the client connects to (either family) */
    uint16_t port;               /* the server's */
    enum brisk_sim_bulk_dir dir; /* the sender: the client (up, both: a -> b is drawn) or the server (down) */
    const brisk_sim_bulk *bulk;  /* sampling stops once every flow is done */
};

/* A row's observation (row_key "" for a scenario of one row); NULL when out of memory (then nothing is
 * observed, and the report says so). */
struct lab_obs *lab_obs_new(const struct lab_run *r, brisk_sim_world *w, const char *row_key);
/* Adds flow number n (1-based, as the report names it). Returns 0, or nonzero after a message. */
int lab_obs_add(struct lab_obs *o, int n, const struct lab_obs_flow *f);
/* Hooks the per-event reading into the run's watch and starts the ss sampling (if asked). */
void lab_obs_watch(struct lab_obs *o, struct lab_watch *wt);
/* After the run: flow n's end (its sockets' brisk_conn_info as the bulk result has them). */
void lab_obs_end(struct lab_obs *o, int n, const struct brisk_sim_bulk_result *res);
/* Before the world is freed: draws the time-sequence graphs (with r->plot_dir), removes the observers. */
void lab_obs_finish(struct lab_obs *o);
/* After the table: per row and flow the ss lines at the end (human report) and, in the JSON under "ss",
 * the socket objects at the end and sampled (rows[i] may be NULL: a row that did not run). */
/* text: the ss lines after the table too (a seed's report keeps to its table: JSON only). */
void lab_obs_report(struct lab_run *r, struct lab_obs *const *rows, const char *const *row_labels, int nrows,
                    int text);
void lab_obs_free(struct lab_obs *o);

#endif
