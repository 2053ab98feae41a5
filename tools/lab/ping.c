/*
 * ping.c — the foundation scenario: two simulated hosts on one link; host a resolves b with ARP, then sends
 * `count` ICMP echo requests, one every `interval`, and reports what came back. With --set family=6 it is
 * ping6: the hosts also have 2001:db8::1 and ::2, and a sends ICMPv6 echo requests (RFC 4443 §4.1) to b's
 * IPv6 address, b resolved first by Neighbour Discovery (RFC 4861 §7.2). The stack has no call that
 * resolves an IPv6 neighbour alone (brisk_stack_resolve is ARP's), so a first echo of its own identifier
 * does it, as ping6's first echo would: it waits behind the solicitation, and its reply says b is resolved
 * (b learnt a's MAC from the solicitation's source link-layer option, so its replies need none). That echo
 * is not one of the `count`.
 *
 * It exercises the whole foundation — ARP, IPv4, ICMP, the packet pool, the timer wheel, the simulator's link
 * model and capture — and its figure has a closed form: on a loss-free link each echo's round trip is exactly
 * 2 × (serialization of the frame + propagation delay), because both frames are the same size and nothing
 * else is queued. The report prints that expectation beside the measurement, so a discrepancy is visible at a
 * glance (and the tests assert it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk/sim.h"
#include "common/fmt.h"
#include "lab/flow.h"
#include "lab/lab.h"
#include "lab/plot.h"

static const struct lab_param params[] = {
    {"count", LAB_UINT, "10", "echo requests to send", "1", "65536"},
    {"interval", LAB_TIME, "1ms", "time between requests", NULL, NULL},
    {"size", LAB_SIZE, "56", "ICMP data bytes per request (like ping -s)", NULL, "65507"},
    {"rate", LAB_RATE, "10G", "link rate, both directions", "1", NULL},
    {"delay", LAB_TIME, "50us", "one-way propagation delay", NULL, NULL},
    {"loss", LAB_PROB, "0", "random loss probability per frame, both directions", NULL, NULL},
    {"seed", LAB_UINT, "1", "world seed (impairments, stack seeds)", NULL, NULL},
};

#define A_IP    0x0a000001u /* 10.0.0.1 (2001:db8::1) */
#define B_IP    0x0a000002u /* 10.0.0.2 (2001:db8::2) */
#define ECHO_ID 0x4242
#define ND_ID   0x4243 /* family 6: the echo that resolves b first */

struct ping {
    struct lab_run *run;
    brisk_sim_world *w;
    brisk_sim_host *a;
    uint64_t count, received, duplicates;
    uint64_t rtt_min, rtt_max, rtt_sum;
    uint8_t *seen;  /* per sequence number: reply arrived */
    double *rtt_us; /* per sequence number: round-trip time, µs */
    uint64_t next_seq;
    uint64_t interval, size;
    int send_errors;
    struct brisk_addr target; /* b's address of the run's family */
    uint64_t nd_reply_at;     /* family 6: when the resolving echo came back (BRISK_TIME_NONE: not yet) */
};

static void on_reply(void *ctx, const struct brisk_echo_reply_addr *r, uint64_t now)
{
    struct ping *p = ctx;
    if (!brisk_addr_equal(&r->from, &p->target))
        return;
    if (r->id == ND_ID && p->nd_reply_at == BRISK_TIME_NONE)
        p->nd_reply_at = now;
    if (r->id != ECHO_ID || r->seq >= p->count)
        return;
    if (p->seen[r->seq]) {
        p->duplicates++;
        return;
    }
    p->seen[r->seq] = 1;
    uint64_t rtt = now - r->sent_at;
    p->rtt_us[r->seq] = (double)rtt / 1e3;
    p->received++;
    p->rtt_sum += rtt;
    if (rtt < p->rtt_min)
        p->rtt_min = rtt;
    if (rtt > p->rtt_max)
        p->rtt_max = rtt;
}

/* Sends the next request and schedules the one after. */
static void send_next(void *ctx, uint64_t now)
{
    struct ping *p = ctx;
    brisk_stack *st = brisk_sim_host_stack(p->a);
    int rc = brisk_icmp_echo_send_addr(st, &p->target, ECHO_ID, (uint16_t)p->next_seq, (uint16_t)p->size, now);
    if (rc != BRISK_OK)
        p->send_errors++;
    brisk_sim_host_kick(p->a);
    if (++p->next_seq < p->count)
        brisk_sim_at(p->w, now + p->interval, send_next, p);
}

static int resolved(void *ctx)
{
    struct ping *p = ctx;
    if (p->target.family == BRISK_AF_INET6)
        return p->nd_reply_at != BRISK_TIME_NONE;
    return brisk_stack_resolve(brisk_sim_host_stack(p->a), B_IP, brisk_sim_now(p->w)) == BRISK_OK;
}

static int all_back(void *ctx)
{
    struct ping *p = ctx;
    return p->next_seq == p->count && p->received == p->count;
}

static int run(struct lab_run *r)
{
    struct ping p = {.run = r,
                     .count = lab_u(r, "count"),
                     .interval = lab_u(r, "interval"),
                     .size = lab_u(r, "size"),
                     .rtt_min = UINT64_MAX,
                     .target = lab_addr(r->family, B_IP),
                     .nd_reply_at = BRISK_TIME_NONE};
    int v6 = r->family == 6;
    uint64_t rate = lab_u(r, "rate"), delay = lab_u(r, "delay");
    double loss = lab_p(r, "loss");
    p.seen = calloc(p.count, 1);
    p.rtt_us = calloc(p.count, sizeof(*p.rtt_us));
    p.w = brisk_sim_world_new(lab_u(r, "seed"));
    if (!p.seen || !p.rtt_us || !p.w) {
        fprintf(stderr, "brisk-lab ping: out of memory\n");
        free(p.seen);
        free(p.rtt_us);
        brisk_sim_world_free(p.w);
        return 1;
    }
    struct brisk_settings s = r->settings;
    s.seed = 0; /* let the world derive one per host */
    p.a = brisk_sim_host_add(p.w, "a", &s);
    brisk_sim_host *b = brisk_sim_host_add(p.w, "b", &s);
    brisk_sim_port *pa = brisk_sim_nic_add_ip(p.a, A_IP, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(b, B_IP, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, rate, delay);
    if (loss > 0) {
        lc.ab.impair.loss_model = lc.ba.impair.loss_model = BRISK_SIM_LOSS_RANDOM;
        lc.ab.impair.loss = lc.ba.impair.loss = loss;
    }
    brisk_sim_link *link = brisk_sim_link_connect(p.w, pa, pb, &lc);
    if (link && (lab_nic_family(pa, r->family, A_IP) != 0 || lab_nic_family(pb, r->family, B_IP) != 0)) {
        free(p.seen);
        free(p.rtt_us);
        brisk_sim_world_free(p.w);
        return 1;
    }
    if (!link) {
        fprintf(stderr, "brisk-lab ping: cannot build the world\n");
        free(p.seen);
        free(p.rtt_us);
        brisk_sim_world_free(p.w);
        return 1;
    }
    if (lab_capture(r, pa) != 0) {
        free(p.seen);
        free(p.rtt_us);
        brisk_sim_world_free(p.w);
        return 1;
    }
    brisk_icmp_set_echo_addr_handler(brisk_sim_host_stack(p.a), on_reply, &p);

    /* ARP (ND) first, so every echo's RTT is the link's alone. Resolution gives up after arp_retries requests
     * (solicitations: the same settings); IPv6's resolving echo may take one second more (ping's wait). */
    const struct brisk_settings *as = brisk_stack_settings(brisk_sim_host_stack(p.a));
    uint64_t arp_limit = (uint64_t)(as->arp_retries + 1) * as->arp_retrans_ns;
    if (v6) {
        arp_limit += BRISK_NSEC_PER_SEC;
        if (brisk_icmp_echo_send_addr(brisk_sim_host_stack(p.a), &p.target, ND_ID, 0, (uint16_t)p.size, 0) !=
            BRISK_OK)
            p.send_errors++;
    } else {
        brisk_stack_resolve(brisk_sim_host_stack(p.a), B_IP, 0);
    }
    brisk_sim_host_kick(p.a);
    int arp_ok = brisk_sim_run_while(p.w, resolved, &p, arp_limit);
    uint64_t arp_ns = brisk_sim_now(p.w);

    uint64_t start = arp_ns, deadline = arp_ns;
    if (arp_ok) {
        brisk_sim_at(p.w, start, send_next, &p);
        /* Wait for every reply, or one second after the last request (ping's default wait). */
        deadline = start + (p.count - 1) * p.interval + BRISK_NSEC_PER_SEC;
        brisk_sim_run_while(p.w, all_back, &p, deadline);
    }
    /* Ethernet, IPv4's 20-byte header or IPv6's 40, the 8-byte ICMP header, the data. */
    uint64_t ser = ((14u + (v6 ? 40u : 20u) + 8u + p.size) * 8u * BRISK_NSEC_PER_SEC + rate - 1) / rate;
    uint64_t expected = 2 * (ser + delay);

    struct brisk_sim_stats ws;
    brisk_sim_world_stats(p.w, &ws);
    struct brisk_counters ca;
    brisk_stack_get_counters(brisk_sim_host_stack(p.a), &ca);

    lab_report_begin(r);
    char ta[BRISK_ADDR_STRLEN];
    if (v6) { /* the same keys as ARP's, so one test reads both families */
        lab_report_str(r, "target", "target", brisk_addr_format(&p.target, ta));
        lab_report_bool(r, "arp_resolved", "neighbour resolved (ND)", arp_ok);
        if (arp_ok)
            lab_report_time(r, "arp_resolve_ns", "ND + the resolving echo's reply", arp_ns);
        else
            lab_report_none(r, "arp_resolve_ns", "ND + the resolving echo's reply",
                            "failed (no advertisement or no reply)");
    } else {
        lab_report_bool(r, "arp_resolved", "ARP resolved", arp_ok);
        if (arp_ok)
            lab_report_time(r, "arp_resolve_ns", "ARP resolution time", arp_ns);
        else
            lab_report_none(r, "arp_resolve_ns", "ARP resolution time", "failed (no reply to any request)");
    }
    lab_report_u64(r, "requested", "echo requests asked for", p.count);
    lab_report_u64(r, "sent", "echo requests sent", p.next_seq);
    lab_report_u64(r, "received", "echo replies received", p.received);
    lab_report_u64(r, "duplicates", "duplicate replies", p.duplicates);
    /* Of the requests asked for: one that could not be sent (the ARP failed) is lost as surely as one the
     * link dropped (Linux's ping counts it as an error and the echo as unanswered). */
    lab_report_double(r, "loss_pct", "loss", 100.0 * (double)(p.count - p.received) / (double)p.count, "%");
    lab_report_group_begin(r, "rtt_ns", "round-trip time");
    if (p.received) {
        lab_report_time(r, "min", "min", p.rtt_min);
        lab_report_time(r, "avg", "avg", p.rtt_sum / p.received);
        lab_report_time(r, "max", "max", p.rtt_max);
    } else {
        lab_report_none(r, "min", "min / avg / max", "no reply");
    }
    lab_report_time(r, "expected_lossless", "2 x (serialization + delay)", expected);
    lab_report_group_end(r);
    lab_report_group_begin(r, "host_a", "host a counters");
    if (v6) {
        lab_report_u64(r, "Icmp6OutNeighborSolicits", "Icmp6OutNeighborSolicits", ca.Icmp6OutNeighborSolicits);
        lab_report_u64(r, "Icmp6OutEchos", "Icmp6OutEchos", ca.Icmp6OutEchos); /* count + 1 */
        lab_report_u64(r, "Icmp6InEchoReplies", "Icmp6InEchoReplies", ca.Icmp6InEchoReplies);
    } else {
        lab_report_u64(r, "ArpOutRequests", "ArpOutRequests", ca.ArpOutRequests);
        lab_report_u64(r, "IcmpOutEchos", "IcmpOutEchos", ca.IcmpOutEchos);
        lab_report_u64(r, "IcmpInEchoReps", "IcmpInEchoReps", ca.IcmpInEchoReps);
    }
    lab_report_group_end(r);
    lab_report_time(r, "elapsed_ns", "virtual time elapsed", brisk_sim_now(p.w));
    lab_report_u64(r, "sim_events", "simulator events", ws.events);
    lab_report_end(r);

    if (r->plot_dir && p.received) {
        double *x = malloc(p.received * sizeof(*x)), *y = malloc(p.received * sizeof(*y));
        size_t n = 0;
        for (uint64_t i = 0; x && y && i < p.count; i++) {
            if (p.seen[i]) {
                x[n] = (double)i;
                y[n++] = p.rtt_us[i];
            }
        }
        struct lab_series series = {"echo RTT", x, y, n};
        if (x && y)
            lab_plot(r->plot_dir, "rtt", "ping: round-trip time per echo", "sequence number", "RTT (us)",
                     &series, 1);
        free(x);
        free(y);
    }
    free(p.seen);
    free(p.rtt_us);
    brisk_sim_world_free(p.w);
    /* As ping(8): no reply at all is a failure (exit 1), saying why. */
    if (!arp_ok && v6) {
        fprintf(stderr, "brisk-lab ping: FAILED: neighbour discovery of %s failed (%" PRIu64
                        " solicitations, no echo reply); no echo request was sent\n",
                ta, ca.Icmp6OutNeighborSolicits);
        return 1;
    }
    if (!arp_ok) {
        fprintf(stderr, "brisk-lab ping: FAILED: ARP resolution of 10.0.0.2 failed (%" PRIu64
                        " requests unanswered); no echo request could be sent\n",
                ca.ArpOutRequests);
        return 1;
    }
    if (p.received == 0) {
        fprintf(stderr, "brisk-lab ping: FAILED: no echo reply (%" PRIu64 " requests sent)\n", p.next_seq);
        return 1;
    }
    return 0;
}

const struct lab_scenario lab_scenario_ping = {
    .name = "ping",
    .summary = "ARP, then ICMP echoes between two simulated hosts",
    .params = params,
    .nparams = (int)(sizeof(params) / sizeof(params[0])),
    .run = run,
};
