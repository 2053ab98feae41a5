/*
 * soak.c — `brisk-lab soak`: randomized impairments x randomized settings, many seeds, one verdict.
 *
 * Each seed builds a fresh two-host world from a seeded generator: a link (100 Mbit/s … 10 Gbit/s, 5 µs …
 * 5 ms one way, loss 0 … 30 % random or in bursts, reordering, duplication, corruption, sometimes a drop-tail
 * queue), NICs (completion immediate, delayed or coalesced, with or without GSO and BQL, small or large
 * rings) and stack settings (SACK, timestamps, window scaling, congestion control, TLP, F-RTO, the eager
 * timer discipline, TSQ, pacing, auto-corking, buffer sizes, initial window, RTO bounds), then runs one bulk
 * transfer (10 KB … 2 MB, 160 KB above 10 % loss; up, down or both ways, random write and read sizes). The
 * verdict for a seed:
 *
 *   ok      every byte arrived and equals the byte sent, both sides saw the FIN, both connections closed;
 *   error   the transfer ended with a clear socket error (a timeout under extreme loss — during the transfer,
 *           or while closing: every byte arrived but a FIN was never acknowledged) within the bound;
 *   FAIL    corrupted data, a transfer still running at the bound (a stall), or — after everything is closed
 *           and TIME-WAIT has run out — a socket, packet buffer or buffer chunk still in use (a leak).
 *
 * Any FAIL makes the command exit 1 and prints the seed with its configuration, so `brisk-lab soak --first S
 * --seeds 1` replays it exactly (same seed, same world, same pcap).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "common/json.h"
#include "lab/lab.h"

#define SOAK_LIMIT_NS (3600ull * BRISK_NSEC_PER_SEC) /* the bound: retries are capped well inside it */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
    return n ? next(s) % n : 0;
}

static double unit(uint64_t *s)
{
    return (double)(next(s) >> 11) / (double)(1ull << 53);
}

struct soak_case {
    char desc[512];
    struct brisk_settings set;
    struct brisk_sim_link_config lc;
    struct brisk_sim_nic_config nic[2];
    struct brisk_sim_bulk_config bc;
};

static void setf(struct brisk_settings *s, char *desc, size_t cap, const char *kv)
{
    if (brisk_settings_set(s, kv) == BRISK_OK) {
        size_t n = strlen(desc);
        snprintf(desc + n, cap - n, " %s", kv);
    }
}

static void make_case(uint64_t seed, struct soak_case *c)
{
    uint64_t r = seed * 0x2545f4914f6cdd1dull + 1;
    memset(c, 0, sizeof(*c));
    brisk_settings_default(&c->set);
    c->set.seed = seed;
    char *d = c->desc;
    size_t cap = sizeof(c->desc);
    static const uint64_t rates[] = {100000000ull, 1000000000ull, 10000000000ull};
    uint64_t rate = rates[below(&r, 3)];
    uint64_t delay = 5000 + below(&r, 5000000);
    brisk_sim_link_config_symmetric(&c->lc, rate, delay);
    /* Loss: half the seeds light (≤ 1 %), the rest up to 30 %; a third of them in bursts. */
    double loss = below(&r, 2) ? unit(&r) * 0.01 : unit(&r) * 0.30;
    int burst = below(&r, 3) == 0;
    double reorder = below(&r, 3) == 0 ? unit(&r) * 0.1 : 0;
    double dup = below(&r, 4) == 0 ? unit(&r) * 0.05 : 0;
    double corrupt = below(&r, 4) == 0 ? unit(&r) * 0.05 : 0;
    struct brisk_sim_impair *im[2] = {&c->lc.ab.impair, &c->lc.ba.impair};
    for (int i = 0; i < 2; i++) {
        if (burst && loss > 0) {
            im[i]->loss_model = BRISK_SIM_LOSS_GILBERT;
            im[i]->ge_p_bad_to_good = 0.25;
            im[i]->ge_loss_bad = 0.5;
            double pi = loss / 0.5;
            im[i]->ge_p_good_to_bad = pi * 0.25 / (1 - pi);
        } else if (loss > 0) {
            im[i]->loss_model = BRISK_SIM_LOSS_RANDOM;
            im[i]->loss = loss;
        }
        im[i]->reorder = reorder;
        im[i]->reorder_delay_ns = 1000 + below(&r, delay);
        im[i]->duplicate = dup;
        im[i]->corrupt = corrupt;
    }
    if (below(&r, 4) == 0)
        c->lc.ab.queue_bytes = c->lc.ba.queue_bytes = 30000 + below(&r, 2000000);
    snprintf(d, cap,
             "rate=%" PRIu64 "M delay=%" PRIu64 "us loss=%.2f%%%s reorder=%.2f%% dup=%.2f%% corrupt=%.2f%% "
             "queue=%" PRIu64,
             rate / 1000000, delay / 1000, loss * 100, burst ? "(bursts)" : "", reorder * 100, dup * 100,
             corrupt * 100, c->lc.ab.queue_bytes);
    for (int i = 0; i < 2; i++) {
        struct brisk_sim_nic_config *n = &c->nic[i];
        brisk_sim_nic_config_default(n);
        n->dev.ip = 0x0a000001u + (uint32_t)i;
        n->tx_ring = 16 + (uint32_t)below(&r, 2048);
        if (below(&r, 2))
            n->dev.caps |= BRISK_NETDEV_CAP_GSO | BRISK_NETDEV_CAP_CSUM;
        if (below(&r, 3) == 0)
            n->dev.caps |= BRISK_NETDEV_CAP_BQL;
        switch (below(&r, 3)) {
        case 0:
            n->txc.model = BRISK_SIM_TXC_IMMEDIATE;
            break;
        case 1:
            n->txc.model = BRISK_SIM_TXC_DELAY;
            n->txc.delay_ns = below(&r, 500000);
            break;
        default:
            n->txc.model = BRISK_SIM_TXC_COALESCE;
            n->txc.frames = 1 + (uint32_t)below(&r, 64);
            n->txc.timeout_ns = 1 + below(&r, 10000000);
            break;
        }
        size_t len = strlen(d);
        snprintf(d + len, cap - len, " nic%d=%s/%u%s%s", i,
                 n->txc.model == BRISK_SIM_TXC_IMMEDIATE ? "imm"
                 : n->txc.model == BRISK_SIM_TXC_DELAY   ? "delay"
                                                         : "coalesce",
                 n->tx_ring, (n->dev.caps & BRISK_NETDEV_CAP_GSO) ? "/gso" : "",
                 (n->dev.caps & BRISK_NETDEV_CAP_BQL) ? "/bql" : "");
    }
    /* Bounded retries keep every transfer inside the bound even at 30 % loss. */
    setf(&c->set, d, cap, "tcp_retries2=8");
    setf(&c->set, d, cap, "tcp_rto_max=10s");
    static const char *const flags[] = {"tcp_sack",   "tcp_timestamps",  "tcp_window_scaling",
                                        "tcp_tlp",    "tcp_frto",        "tcp_tsq",
                                        "tcp_pacing", "tcp_autocorking", "tcp_timer_eager"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char kv[64];
        int on = strcmp(flags[i], "tcp_timer_eager") == 0 ? below(&r, 4) == 0 : below(&r, 5) != 0;
        snprintf(kv, sizeof(kv), "%s=%d", flags[i], on);
        setf(&c->set, d, cap, kv);
    }
    setf(&c->set, d, cap, below(&r, 2) ? "tcp_congestion=cubic" : "tcp_congestion=newreno");
    char kv[64];
    snprintf(kv, sizeof(kv), "tcp_sndbuf=%" PRIu64, 16384 + below(&r, 4u << 20));
    setf(&c->set, d, cap, kv);
    snprintf(kv, sizeof(kv), "tcp_rcvbuf=%" PRIu64, 16384 + below(&r, 4u << 20));
    setf(&c->set, d, cap, kv);
    snprintf(kv, sizeof(kv), "tcp_initial_cwnd=%" PRIu64, 1 + below(&r, 20));
    setf(&c->set, d, cap, kv);
    snprintf(kv, sizeof(kv), "tcp_rto_min=%" PRIu64 "ms", 1 + below(&r, 200));
    setf(&c->set, d, cap, kv);
    static const enum brisk_sim_bulk_dir dirs[] = {BRISK_SIM_BULK_UP, BRISK_SIM_BULK_DOWN,
                                                   BRISK_SIM_BULK_BOTH};
    c->bc.dir = dirs[below(&r, 3)];
    /* Above 10 % loss every loss costs RTOs of up to 10 s at a window of a segment or two: keep such
     * transfers small enough to finish well inside the bound (they crawl, but they must not stall). */
    c->bc.bytes = 10000 + below(&r, loss > 0.10 ? 150000 : 2000000);
    c->bc.write_size = 1 + (uint32_t)below(&r, 65536);
    c->bc.read_size = 1 + (uint32_t)below(&r, 65536);
    c->bc.port = 5001;
    c->bc.seed = seed;
    size_t len = strlen(d);
    snprintf(d + len, cap - len, " bytes=%" PRIu64 " dir=%d write=%u read=%u", c->bc.bytes, (int)c->bc.dir,
             c->bc.write_size, c->bc.read_size);
}

/* Finished, or one side failed: its peer may then wait forever for data that will not come (a connection the
 * failed side reset by an RST that was lost is half-open, RFC 9293 §3.10.7.3) — that is the error's outcome,
 * not a stall. */
static int done(void *ctx)
{
    return brisk_sim_bulk_done(ctx) || brisk_sim_bulk_error(ctx) != BRISK_OK;
}

enum verdict { V_OK, V_ERROR, V_FAIL };

/* Runs one seed; fills why (FAIL or error reason). */
static enum verdict run_case(uint64_t seed, const struct soak_case *c, char *why, size_t whycap,
                             uint64_t *virt_ns)
{
    brisk_sim_world *w = brisk_sim_world_new(seed);
    brisk_sim_host *h[2] = {brisk_sim_host_add(w, "a", &c->set), brisk_sim_host_add(w, "b", &c->set)};
    brisk_sim_port *p[2] = {brisk_sim_nic_add(h[0], &c->nic[0]), brisk_sim_nic_add(h[1], &c->nic[1])};
    if (!p[0] || !p[1] || !brisk_sim_link_connect(w, p[0], p[1], &c->lc)) {
        snprintf(why, whycap, "could not build the world");
        brisk_sim_world_free(w);
        return V_FAIL;
    }
    brisk_sim_bulk *b = brisk_sim_bulk_start(w, h[0], h[1], 0x0a000002u, &c->bc);
    int finished = b && brisk_sim_run_while(w, done, b, SOAK_LIMIT_NS);
    struct brisk_sim_bulk_result res;
    memset(&res, 0, sizeof(res));
    if (b)
        brisk_sim_bulk_result(b, &res);
    *virt_ns = brisk_sim_now(w);
    enum verdict v;
    if (!b) {
        snprintf(why, whycap, "could not start the transfer");
        v = V_FAIL;
    } else if (res.client.bad_at != UINT64_MAX || res.server.bad_at != UINT64_MAX) {
        snprintf(why, whycap, "CORRUPT: client bad_at %" PRIu64 ", server bad_at %" PRIu64, res.client.bad_at,
                 res.server.bad_at);
        v = V_FAIL;
    } else if (!finished) {
        snprintf(why, whycap,
                 "STALL: not done after %.0f s virtual (client got %" PRIu64 ", server got %" PRIu64 ")",
                 (double)SOAK_LIMIT_NS / 1e9, res.client.received, res.server.received);
        v = V_FAIL;
    } else if (res.hash_ok) {
        v = V_OK;
    } else if (res.client.error != BRISK_OK || res.server.error != BRISK_OK) {
        snprintf(why, whycap, "%s",
                 brisk_strerror(res.client.error != BRISK_OK ? res.client.error : res.server.error));
        v = V_ERROR;
    } else {
        snprintf(why, whycap, "INCOMPLETE without an error (client got %" PRIu64 ", server got %" PRIu64 ")",
                 res.client.received, res.server.received);
        v = V_FAIL;
    }
    brisk_sim_bulk_free(b);
    /* Everything closed or aborted: once TIME-WAIT (and any FIN-WAIT-2) has run out, nothing may remain. */
    brisk_sim_run_until(w, brisk_sim_now(w) + 200ull * BRISK_NSEC_PER_SEC);
    for (int i = 0; i < 2 && v != V_FAIL; i++) {
        brisk_stack *st = brisk_sim_host_stack(h[i]);
        uint64_t socks = brisk_stack_sockets(st), chunks = brisk_stack_tcp_chunks_in_use(st),
                 pkts = brisk_stack_pkts_in_use(st);
        if (socks || chunks || pkts) {
            snprintf(why, whycap,
                     "LEAK on host %c: %" PRIu64 " sockets, %" PRIu64 " chunks, %" PRIu64 " packets", 'a' + i,
                     socks, chunks, pkts);
            v = V_FAIL;
        }
    }
    brisk_sim_world_free(w);
    return v;
}

int lab_soak_main(int argc, char **argv)
{
    uint64_t nseeds = 100, first = 1;
    int json = 0, verbose = 0;
    for (int i = 0; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: brisk-lab soak [--seeds N] [--first S] [--json] [--verbose]\n"
                   "Runs N seeds (default 100, from S = 1), each one bulk transfer under randomized impairments, "
                   "NICs and stack settings. Per seed: ok (complete, intact, closed), error (a clear socket "
                   "error under extreme loss) or FAIL (corrupt data, a stall, a leak). Exit 1 on any FAIL; "
                   "--first S --seeds 1 replays seed S exactly.\n");
            return 0;
        }
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            nseeds = strtoull(argv[++i], &end, 10);
            if (!end || *end || nseeds == 0 || nseeds > 100000000ull) {
                fprintf(stderr, "brisk-lab soak: --seeds needs a count from 1 to 100000000\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc) {
            first = strtoull(argv[++i], &end, 10);
            if (!end || *end) {
                fprintf(stderr, "brisk-lab soak: --first needs a seed number\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else {
            fprintf(
                stderr,
                "brisk-lab soak: unknown option '%s'\nusage: brisk-lab soak [--seeds N] [--first S] [--json] "
                "[--verbose]\n",
                argv[i]);
            return 2;
        }
    }
    uint64_t ok = 0, errors = 0, fails = 0, virt_total = 0;
    struct json j;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j, NULL);
        json_u64(&j, "first", first);
        json_u64(&j, "seeds", nseeds);
        json_array_begin(&j, "failures");
    }
    for (uint64_t k = 0; k < nseeds; k++) {
        uint64_t seed = first + k;
        struct soak_case c;
        make_case(seed, &c);
        char why[256] = "";
        uint64_t virt = 0;
        enum verdict v = run_case(seed, &c, why, sizeof(why), &virt);
        virt_total += virt;
        if (v == V_OK)
            ok++;
        else if (v == V_ERROR)
            errors++;
        else
            fails++;
        if (v == V_FAIL || (verbose && !json)) {
            if (json) {
                json_object_begin(&j, NULL);
                json_u64(&j, "seed", seed);
                json_str(&j, "why", why);
                json_str(&j, "config", c.desc);
                json_object_end(&j);
            } else {
                printf("seed %-8" PRIu64 " %-5s %s\n    %s\n", seed,
                       v == V_OK      ? "ok"
                       : v == V_ERROR ? "error"
                                      : "FAIL",
                       why, c.desc);
            }
        }
        if ((k + 1) % 50 == 0 || k + 1 == nseeds)
            fprintf(stderr, "brisk-lab soak: %" PRIu64 "/%" PRIu64 " seeds (%" PRIu64 " failed)\n", k + 1,
                    nseeds, fails);
    }
    if (json) {
        json_array_end(&j);
        json_u64(&j, "ok", ok);
        json_u64(&j, "clean_errors", errors);
        json_u64(&j, "failed", fails);
        json_double(&j, "virtual_s", (double)virt_total / 1e9);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("soak: seeds %" PRIu64 "..%" PRIu64 ": %" PRIu64 " byte-exact, %" PRIu64
               " ended with a clear error, %" PRIu64 " failed (%.1f s of virtual time)\n",
               first, first + nseeds - 1, ok, errors, fails, (double)virt_total / 1e9);
    }
    return fails ? 1 : 0;
}
