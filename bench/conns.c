/*
 * conns.c — brisk-bench conns: connection set-up / tear-down rate, and memory per idle connection.
 *
 * Two simulated hosts over a zero-delay, infinite-rate link (as in bulk and rr), one thread.
 *
 * Rate. The client keeps WINDOW connections in flight; each connects, shuts its sending side down as soon as
 * it is established (FIN), reads the server's FIN and closes; the server accepts, reads end-of-stream and
 * closes. That is the full RFC 9293 §3.5 exchange: SYN, SYN-ACK, ACK, FIN, ACK, FIN, ACK (the client's side
 * ends in TIME-WAIT, which holds the 4-tuple). The figure is completed connections per CPU-second of the
 * whole run: both stacks, the simulator and this application together.
 *
 * Memory. N connections (100,000; 10,000 with --quick) are opened and left idle and established; the heap's
 * growth from before the first connect to after the last handshake has settled, read with glibc's
 * mallinfo2() (uordblks: bytes in use in the arenas, + hblkhd: bytes in mmap()ed blocks), is divided by
 * 2 x N: each connection has two endpoints, one on each host, and both are brisk sockets. It includes
 * everything connections cost the stacks: the socket structures, slab pages, the growth of the connection
 * hash, the listener's accept bookkeeping, the packet pool's growth during the handshakes (amortised, it is
 * a few bytes per connection); the benchmark's own arrays are allocated before the baseline is taken.
 * brisk allocates send and receive stream memory on demand, in 16 KB chunks from a per-stack pool, and an
 * idle connection pins none (chunks_in_use is reported to show it): the figure is the memory per idle
 * connection excluding buffers (socket_struct_bytes, sizeof(struct brisk_sock), is reported beside it: it
 * is most of the figure). Including buffers at their default sizes (tcp_sndbuf + tcp_rcvbuf, each
 * 4 MB) the ceiling per endpoint is that figure plus 8 MB — 100,000 of them filled would need 800 GB, so the
 * "including" figure is computed from the defaults, not measured.
 *
 * TIME-WAIT. N connections (60,000, under tcp_max_tw_buckets' 65,536; 10,000 with --quick) are opened and
 * closed as in the rate run, so that the client, the active closer, holds every one in TIME-WAIT; after the
 * last close the world runs 2 s more (well inside the 60 s wait), for whatever a closed connection leaves
 * to settle. Before them a first wave of 2 x WINDOW connections is run and its TIME-WAIT let expire, so that
 * packet pools and tables have grown to what this load needs. The heap's growth over the second wave (the
 * server's sockets are all freed by then), plus the TIME-WAIT record slabs the first wave had carved and
 * the second reuses, divided by the connections the client holds in TIME-WAIT, is the memory per
 * TIME-WAIT connection; the record slabs (timewait.c) divided the same way, the allocator's own count, are
 * reported beside it.
 *
 * Settings: 100,000 connections to one server port would exhaust the 16,384 ephemeral ports (49152-65535) of
 * the client's one address, so the server listens on NPORTS ports and connections are spread over them;
 * the listen backlog and tcp_max_syn_backlog are raised to WINDOW so that the handshakes in flight are
 * never dropped by a full queue (no SYN cookies). Everything else is the default.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "brisk/sim.h"
#include "common/json.h"
#include "stack/stack.h"
#include "tcp/tcp.h"

#define NPORTS    8u
#define BASE_PORT 5001u
#define WINDOW    1024u

struct conns {
    brisk_sim_world *w;
    brisk_sim_host *client, *server;
    brisk_sock *listener[NPORTS];
    brisk_sock **keep_c, **keep_s; /* memory run: the idle sockets, both ends */
    uint32_t target;               /* connections to make */
    uint32_t started, connected, accepted, finished, server_closed, errors;
    int keep; /* memory run: leave connections open */
};

/* Under AddressSanitizer malloc is ASan's, and glibc's mallinfo2() does not see it: the memory figure is then
 * reported as not measured. */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_MEASURED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_MEASURED 0
#endif
#endif
#ifndef HEAP_MEASURED
#define HEAP_MEASURED 1
#endif

static uint64_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

static void start_more(struct conns *c, uint64_t now);

static void client_cb(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct conns *c = ctx;
    if (ev & BRISK_EV_ERROR) {
        c->errors++;
        c->finished++;
        brisk_close(s, now);
        start_more(c, now);
        return;
    }
    if (ev & BRISK_EV_CONNECTED) {
        c->connected++;
        if (c->keep) {
            c->keep_c[c->connected - 1] = s;
            brisk_sock_set_callback(s, NULL, NULL);
            c->finished++;
            start_more(c, now);
            return;
        }
        if (brisk_shutdown_write(s, now) != BRISK_OK) {
            c->errors++;
            c->finished++;
            brisk_close(s, now);
            start_more(c, now);
            return;
        }
    }
    if (ev & BRISK_EV_READABLE) {
        uint8_t buf[64];
        int64_t n;
        while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0)
            ;
        if (n == 0 || n != BRISK_ERR_AGAIN) {
            if (n != 0)
                c->errors++;
            c->finished++;
            brisk_close(s, now);
            start_more(c, now);
        }
    }
}

static void server_cb(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct conns *c = ctx;
    if (ev & (BRISK_EV_READABLE | BRISK_EV_ERROR)) {
        uint8_t buf[64];
        int64_t n;
        while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0)
            ;
        if (n != BRISK_ERR_AGAIN) {
            c->server_closed++;
            brisk_close(s, now);
        }
    }
}

static void accept_cb(void *ctx, brisk_sock *ls, unsigned ev, uint64_t now)
{
    struct conns *c = ctx;
    (void)ev;
    (void)now;
    brisk_sock *s;
    int err;
    while ((s = brisk_accept(ls, &err)) != NULL) {
        if (c->keep) {
            if (c->accepted < c->target)
                c->keep_s[c->accepted] = s;
        } else {
            brisk_sock_set_callback(s, server_cb, c);
        }
        c->accepted++;
    }
}

/* Opens connections until WINDOW are unfinished or the target is reached. */
static void start_more(struct conns *c, uint64_t now)
{
    brisk_stack *st = brisk_sim_host_stack(c->client);
    while (c->started < c->target && c->started - c->finished < WINDOW) {
        int err;
        brisk_sock *s = brisk_socket(st, &err);
        uint16_t port = (uint16_t)(BASE_PORT + c->started % NPORTS);
        c->started++;
        if (!s) {
            c->errors++;
            c->finished++;
            continue;
        }
        brisk_sock_set_callback(s, client_cb, c);
        if (brisk_connect(s, BENCH_B_IP, port, now) != BRISK_ERR_INPROGRESS) {
            c->errors++;
            c->finished++;
            brisk_close(s, now);
        }
    }
    brisk_sim_host_kick(c->client);
}

static void kickoff(void *ctx, uint64_t now)
{
    start_more(ctx, now);
}

static int conns_done(void *ctx)
{
    struct conns *c = ctx;
    if (c->finished < c->target)
        return 0;
    if (c->keep)
        return c->accepted >= c->target;
    /* Every server endpoint closed and gone: only the listeners remain on the server. */
    return brisk_stack_sockets(brisk_sim_host_stack(c->server)) == NPORTS;
}

static int conns_setup(struct conns *c, uint32_t target, int keep, const char *const *sets)
{
    memset(c, 0, sizeof(*c));
    c->target = target;
    c->keep = keep;
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.tcp_max_syn_backlog = WINDOW;
    bench_settings(&s, sets); /* checked by main */
    c->w = brisk_sim_world_new(1);
    c->client = brisk_sim_host_add(c->w, "client", &s);
    c->server = brisk_sim_host_add(c->w, "server", &s);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(c->client, BENCH_A_IP, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(c->server, BENCH_B_IP, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 0, 0);
    if (!c->w || !pa || !pb || !brisk_sim_link_connect(c->w, pa, pb, &lc))
        return 1;
    brisk_stack *ss = brisk_sim_host_stack(c->server);
    for (uint32_t i = 0; i < NPORTS; i++) {
        int err;
        c->listener[i] = brisk_socket(ss, &err);
        if (!c->listener[i] ||
            brisk_bind(c->listener[i], BENCH_B_IP, (uint16_t)(BASE_PORT + i)) != BRISK_OK ||
            brisk_listen(c->listener[i], (int)WINDOW) != BRISK_OK)
            return 1;
        brisk_sock_set_callback(c->listener[i], accept_cb, c);
    }
    if (keep) {
        c->keep_c = calloc(target, sizeof(*c->keep_c));
        c->keep_s = calloc(target, sizeof(*c->keep_s));
        if (!c->keep_c || !c->keep_s)
            return 1;
    }
    /* Resolve the server's MAC first, so that the first wave of SYNs does not queue behind ARP. */
    brisk_stack_resolve(brisk_sim_host_stack(c->client), BENCH_B_IP, 0);
    brisk_sim_host_kick(c->client);
    brisk_sim_run_until(c->w, brisk_sim_now(c->w) + BRISK_NSEC_PER_MSEC);
    return 0;
}

static void conns_free(struct conns *c)
{
    brisk_sim_world_free(c->w);
    free(c->keep_c);
    free(c->keep_s);
}

int bench_conns(int json, int quick, const char *const *sets)
{
    uint32_t nrate = quick ? 10000u : 100000u, nmem = quick ? 10000u : 100000u;
    struct conns c;

    /* Rate. */
    fprintf(stderr, "brisk-bench conns: %u connections opened and closed, %u in flight...\n", nrate, WINDOW);
    if (conns_setup(&c, nrate, 0, sets) != 0) {
        fprintf(stderr, "brisk-bench conns: cannot build the world\n");
        conns_free(&c);
        return 1;
    }
    brisk_sim_at(c.w, brisk_sim_now(c.w), kickoff, &c);
    double w0 = bench_wall_seconds(), c0 = bench_cpu_seconds();
    int ok = brisk_sim_run_while(c.w, conns_done, &c, 3600ull * BRISK_NSEC_PER_SEC);
    double wall = bench_wall_seconds() - w0, cpu = bench_cpu_seconds() - c0;
    uint64_t time_wait = brisk_stack_sockets(brisk_sim_host_stack(c.client));
    uint32_t rate_errors = c.errors, rate_done = c.finished - c.errors;
    conns_free(&c);
    if (!ok || rate_errors || rate_done != nrate) {
        fprintf(stderr, "brisk-bench conns: %u of %u connections completed, %u errors\n", rate_done, nrate,
                rate_errors);
        return 1;
    }

    /* TIME-WAIT memory. */
    uint32_t ntw = quick ? 10000u : 60000u;
    fprintf(stderr, "brisk-bench conns: %u connections closed into TIME-WAIT...\n", ntw);
    if (conns_setup(&c, ntw, 0, sets) != 0) {
        fprintf(stderr, "brisk-bench conns: cannot build the world\n");
        conns_free(&c);
        return 1;
    }
    brisk_stack *tcs = brisk_sim_host_stack(c.client);
    /* A first wave, whose TIME-WAIT is let run out: the packet pools and both stacks' tables reach the size
     * this load keeps them at, so that the heap's growth below is what the waiting connections hold. */
    c.target = 2 * WINDOW;
    brisk_sim_at(c.w, brisk_sim_now(c.w), kickoff, &c);
    ok = brisk_sim_run_while(c.w, conns_done, &c, 3600ull * BRISK_NSEC_PER_SEC);
    brisk_sim_run_until(c.w, brisk_sim_now(c.w) + brisk_stack_settings(tcs)->tcp_time_wait_ns +
                                 BRISK_NSEC_PER_SEC);
    ok = ok && tcs->tcp->tw_count == 0;
#ifdef TCP_TW_SIZE
    uint64_t tw_carved = tcs->tcp->tw.bytes; /* records carved by the first wave, reused by the second */
#else
    uint64_t tw_carved = 0;
#endif
    uint64_t tw_h0 = heap_bytes();
    c.target += ntw;
    brisk_sim_at(c.w, brisk_sim_now(c.w), kickoff, &c);
    ok = ok && brisk_sim_run_while(c.w, conns_done, &c, 3600ull * BRISK_NSEC_PER_SEC);
    brisk_sim_run_until(c.w, brisk_sim_now(c.w) + 2 * BRISK_NSEC_PER_SEC);
    uint64_t tw_h1 = heap_bytes() + tw_carved;
    uint64_t tw_conns = tcs->tcp->tw_count;
    uint64_t tw_socks = brisk_stack_sockets(tcs);
#ifdef TCP_TW_SIZE
    uint64_t tw_slab = tcs->tcp->tw.bytes, tw_records = tcs->tcp->tw.count;
#else
    uint64_t tw_slab = 0, tw_records = 0; /* before TIME-WAIT records: every one is a whole socket */
#endif
    uint32_t tw_errors = c.errors;
    conns_free(&c);
    if (!ok || tw_errors || tw_conns == 0) {
        fprintf(stderr, "brisk-bench conns: TIME-WAIT run: %u errors, %" PRIu64 " in TIME-WAIT\n", tw_errors,
                tw_conns);
        return 1;
    }
    double per_tw = tw_h1 > tw_h0 ? (double)(tw_h1 - tw_h0) / (double)tw_conns : 0;
    double slab_per_tw = (double)tw_slab / (double)tw_conns;

    /* Memory. */
    fprintf(stderr, "brisk-bench conns: %u idle established connections...\n", nmem);
    if (conns_setup(&c, nmem, 1, sets) != 0) {
        fprintf(stderr, "brisk-bench conns: cannot build the world\n");
        conns_free(&c);
        return 1;
    }
    uint64_t h0 = heap_bytes();
    brisk_sim_at(c.w, brisk_sim_now(c.w), kickoff, &c);
    ok = brisk_sim_run_while(c.w, conns_done, &c, 3600ull * BRISK_NSEC_PER_SEC);
    /* Let the last ACKs land and any deferred work run. */
    brisk_sim_run_until(c.w, brisk_sim_now(c.w) + 10 * BRISK_NSEC_PER_MSEC);
    uint64_t h1 = heap_bytes();
    brisk_stack *cs = brisk_sim_host_stack(c.client), *ss = brisk_sim_host_stack(c.server);
    uint64_t sockets = brisk_stack_sockets(cs) + brisk_stack_sockets(ss) - NPORTS;
    uint64_t chunks = brisk_stack_tcp_chunks_in_use(cs) + brisk_stack_tcp_chunks_in_use(ss);
    uint32_t mem_errors = c.errors, established = c.connected;
    const struct brisk_settings *set = brisk_stack_settings(cs);
    uint64_t bufs = (uint64_t)set->tcp_sndbuf + set->tcp_rcvbuf;
    conns_free(&c);
    if (!ok || mem_errors || established != nmem || sockets != 2ull * nmem) {
        fprintf(stderr,
                "brisk-bench conns: %u of %u connections established (%" PRIu64 " sockets), %u errors\n",
                established, nmem, sockets, mem_errors);
        return 1;
    }
    double per_endpoint = h1 > h0 ? (double)(h1 - h0) / (2.0 * nmem) : 0;

    if (json) {
        struct json j;
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_str(&j, "bench", "conns");
        bench_json_sets(&j, sets);
        json_u64(&j, "connections", nrate);
        json_double(&j, "wall_s", wall);
        json_double(&j, "cpu_s", cpu);
        json_double(&j, "connections_per_cpu_s", (double)nrate / cpu);
        json_u64(&j, "client_time_wait_left", time_wait);
        json_u64(&j, "idle_connections", nmem);
        json_bool(&j, "heap_measured", HEAP_MEASURED);
        json_u64(&j, "heap_growth_bytes", h1 > h0 ? h1 - h0 : 0);
        json_u64(&j, "chunks_in_use", chunks);
        json_u64(&j, "socket_struct_bytes", sizeof(struct brisk_sock));
        json_double(&j, "bytes_per_idle_endpoint", per_endpoint);
        json_double(&j, "bytes_per_idle_connection_pair", 2 * per_endpoint);
        json_u64(&j, "default_buffer_bytes", bufs);
        json_double(&j, "bytes_per_endpoint_with_default_buffers", per_endpoint + (double)bufs);
        json_u64(&j, "time_wait_connections", tw_conns);
        json_u64(&j, "time_wait_records", tw_records);
        json_u64(&j, "time_wait_client_sockets", tw_socks);
        json_u64(&j, "time_wait_heap_growth_bytes", tw_h1 > tw_h0 ? tw_h1 - tw_h0 : 0);
        json_double(&j, "bytes_per_time_wait_connection", per_tw);
        json_double(&j, "time_wait_slab_bytes_per_connection", slab_per_tw);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("conns: %u connections opened and closed in %.3f s CPU (%.3f s wall): %.0f connections per "
               "CPU-second (both stacks, one core)\n",
               nrate, cpu, wall, (double)nrate / cpu);
        printf("       %u idle established connections: heap +%.1f MB, %.0f bytes per endpoint (%.0f per "
               "connection, both ends) excluding buffers (%" PRIu64
               " chunks in use; struct brisk_sock is %zu "
               "bytes); with default buffers (%" PRIu64 " KB) %.0f bytes per endpoint\n",
               nmem, (double)(h1 > h0 ? h1 - h0 : 0) / 1e6, per_endpoint, 2 * per_endpoint, chunks,
               sizeof(struct brisk_sock), bufs / 1024, per_endpoint + (double)bufs);
        printf("       %" PRIu64 " connections in TIME-WAIT (%" PRIu64
               " as records): heap +%.1f MB, %.0f bytes "
               "per TIME-WAIT connection (records' slabs: %.0f bytes each)\n",
               tw_conns, tw_records, (double)(tw_h1 > tw_h0 ? tw_h1 - tw_h0 : 0) / 1e6, per_tw, slab_per_tw);
    }
    return 0;
}
