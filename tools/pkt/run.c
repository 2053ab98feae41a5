/*
 * run.c — the interpreter: one script against one brisk stack, on a virtual clock.
 *
 * Events run in order. Each has a script time: absolute, or relative to when the previous event finished
 * (packetdrill anchors a relative time to the live clock, except between two inbound packets, which anchor
 * to the previous one's script time; on a virtual clock both are exact). Before an inbound packet, a system
 * call, a command or a code block, the clock is moved to the event's time, the stack polled at every
 * deadline on the way; an outbound packet is waited for deadline by deadline and must arrive within the
 * tolerance of its time (packetdrill's default 4 ms, --tolerance_usecs, and --tolerance_percent of the time
 * since the previous event when that is larger).
 *
 * The stack is made once, before the first event: brisk's defaults, then the profile (linux-6.x unless told
 * otherwise: the scripts are Linux's), then the script's options and init command (sysctls, sysctl.c),
 * then the caller's --set. Commands at time 0 before any other event count as init commands; a sysctl later
 * in a script would need a live setting change, which brisk does not have (unsupported).
 *
 * %{ }% blocks read the script connection's brisk_conn_info under Linux's tcp_info names (code.c); values
 * Linux counts in segments (cwnd, ssthresh, unacked, sacked, lost, retrans) are brisk's bytes divided by the
 * MSS, rounded up where brisk keeps a partial segment.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/run.h"

void pkt_config_default(struct pkt_config *c)
{
    memset(c, 0, sizeof(*c));
    c->profile = "linux-6.x";
    c->tolerance_us = 4000;
    c->seed = 1;
}

int run_fail(struct run *r, int status, const struct pkt_event *ev, const char *fmt, ...)
{
    if (r->stopped)
        return -1;
    char what[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (ev)
        snprintf(r->res->msg, sizeof(r->res->msg), "%s:%d: %s%s", r->s->path, ev->line,
                 status == PKT_UNSUPPORTED ? "unsupported: " : "", what);
    else
        snprintf(r->res->msg, sizeof(r->res->msg), "%s: %s%s", r->s->path,
                 status == PKT_UNSUPPORTED ? "unsupported: " : "", what);
    r->res->status = status;
    r->res->line = ev ? ev->line : 0;
    r->stopped = 1;
    return -1;
}

int64_t run_tolerance(const struct run *r, int64_t script_us)
{
    int64_t tol = r->tolerance_us;
    int64_t delta = script_us - r->last_script_us;
    if (r->tolerance_percent > 0 && delta > 0) {
        int64_t dyn = delta * r->tolerance_percent / 100;
        if (dyn > tol)
            tol = dyn;
    }
    return tol;
}

int run_time_ok(const struct run *r, int64_t actual_us, int64_t lo_us, int64_t hi_us)
{
    int64_t tol = run_tolerance(r, lo_us);
    return actual_us >= lo_us - tol && actual_us <= hi_us + tol;
}

/* ---- options ---- */

static int opt_int(struct run *r, const char *name, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return run_fail(r, PKT_BAD_SCRIPT, NULL, "option --%s: expected an integer in %" PRId64 "..%" PRId64
                        ", got \"%s\"", name, lo, hi, v);
    *out = x;
    return 0;
}

/* packetdrill's options that mean something here; the ones about its own machinery are accepted. */
static int apply_option(struct run *r, const char *name, const char *v, struct brisk_settings *s,
                        const char **profile)
{
    int64_t x;
    uint32_t a;
    if (!strcmp(name, "tolerance_usecs")) {
        if (opt_int(r, name, v, 0, INT32_MAX, &x) < 0)
            return -1;
        r->tolerance_us = x;
    } else if (!strcmp(name, "tolerance_percent")) {
        if (opt_int(r, name, v, 0, 100, &x) < 0)
            return -1;
        r->tolerance_percent = (int)x;
    } else if (!strcmp(name, "tcp_ts_tick_usecs")) {
        if (opt_int(r, name, v, 0, INT32_MAX, &x) < 0)
            return -1;
        r->tcp_ts_tick_us = x;
    } else if (!strcmp(name, "bind_port") || !strcmp(name, "connect_port")) {
        if (opt_int(r, name, v, 1, 65535, &x) < 0)
            return -1;
        if (name[0] == 'b')
            r->bind_port = (uint16_t)x;
        else
            r->connect_port = (uint16_t)x;
    } else if (!strcmp(name, "mtu")) {
        if (opt_int(r, name, v, 576, 9000, &x) < 0)
            return -1;
        r->mtu = (uint32_t)x;
    } else if (!strcmp(name, "local_ip") || !strcmp(name, "remote_ip") || !strcmp(name, "gateway_ip")) {
        if (brisk_ip_parse(v, &a) != BRISK_OK)
            return run_fail(r, PKT_BAD_SCRIPT, NULL, "option --%s: malformed IPv4 address \"%s\"", name, v);
        if (name[0] == 'l')
            r->local_ip = a;
        else if (name[0] == 'r')
            r->remote_ip = a;
        else
            r->gateway_ip = a;
    } else if (!strcmp(name, "netmask_ip")) {
        if (brisk_ip_parse(v, &a) != BRISK_OK)
            return run_fail(r, PKT_BAD_SCRIPT, NULL, "option --netmask_ip: malformed mask \"%s\"", v);
        uint32_t p = 0;
        while (p < 32 && (a & (0x80000000u >> p)))
            p++;
        r->prefix = p;
    } else if (!strcmp(name, "ip_version")) {
        if (strcmp(v, "ipv4") != 0)
            return run_fail(r, PKT_UNSUPPORTED, NULL, "--ip_version=%s (brisk has IPv4 only)", v);
    } else if (!strcmp(name, "profile")) {
        *profile = v;
    } else if (!strcmp(name, "set")) {
        int rc = brisk_settings_set(s, v);
        if (rc != BRISK_OK)
            return run_fail(r, rc == BRISK_ERR_NOENT ? PKT_UNSUPPORTED : PKT_BAD_SCRIPT, NULL,
                            "option --set=%s: %s", v, brisk_strerror(rc));
    } else if (!strcmp(name, "non_fatal") || !strcmp(name, "verbose") || !strcmp(name, "dry_run") ||
               !strcmp(name, "strict_segments") || !strcmp(name, "speed") || !strcmp(name, "init_scripts") ||
               !strcmp(name, "define")) {
        /* packetdrill's own machinery: nothing to do in a virtual run */
    } else {
        return run_fail(r, PKT_UNSUPPORTED, NULL, "option --%s", name);
    }
    return 0;
}

static int make_settings(struct run *r, struct brisk_settings *s)
{
    brisk_settings_default(s);
    const char *profile = r->cfg->profile;
    for (size_t i = 0; i < r->s->nopt; i++)
        if (!strcmp(r->s->opt_name[i], "profile"))
            profile = r->s->opt_value[i];
    if (profile && brisk_settings_apply_profile(s, profile) != BRISK_OK)
        return run_fail(r, PKT_BAD_SCRIPT, NULL, "unknown profile \"%s\" (brisk-lab profiles lists them)", profile);
    s->seed = r->cfg->seed;
    for (size_t i = 0; i < r->s->nopt; i++) {
        const char *dummy = profile;
        if (apply_option(r, r->s->opt_name[i], r->s->opt_value[i], s, &dummy) < 0)
            return -1;
    }
    for (size_t i = 0; i < r->cfg->nopts; i++) {
        char name[64];
        const char *eq = strchr(r->cfg->opts[i], '=');
        size_t n = eq ? (size_t)(eq - r->cfg->opts[i]) : strlen(r->cfg->opts[i]);
        if (n >= sizeof(name))
            return run_fail(r, PKT_BAD_SCRIPT, NULL, "option --%s: unknown", r->cfg->opts[i]);
        memcpy(name, r->cfg->opts[i], n);
        name[n] = 0;
        const char *dummy = profile;
        if (apply_option(r, name, eq ? eq + 1 : "", s, &dummy) < 0)
            return -1;
    }
    if (!r->be->sysctls_to_settings)
        return 0; /* the backend runs the script's commands itself */
    char err[256];
    if (r->s->init_cmd) {
        int rc = pkt_command_apply(r->s->init_cmd, s, err, sizeof(err));
        if (rc != PKT_PASS)
            return run_fail(r, rc, NULL, "init command: %s", err);
    }
    /* Commands at time 0 before any other event configure the stack too. */
    for (size_t i = 0; i < r->s->nev && r->s->ev[i].act == ACT_COMMAND && r->s->ev[i].t_us == 0; i++) {
        int rc = pkt_command_apply(r->s->ev[i].text, s, err, sizeof(err));
        if (rc != PKT_PASS)
            return run_fail(r, rc, &r->s->ev[i], "%s", err);
    }
    /* The harness's own needs: the gateway's MAC stays known for any virtual duration. */
    brisk_settings_set(s, "arp_reachable=86400s");
    for (size_t i = 0; i < r->cfg->nsets; i++) {
        int rc = brisk_settings_set(s, r->cfg->sets[i]);
        if (rc != BRISK_OK)
            return run_fail(r, PKT_BAD_SCRIPT, NULL, "--set %s: %s", r->cfg->sets[i], brisk_strerror(rc));
    }
    return 0;
}

/* ---- %{ }% ---- */

static int run_code(struct run *r, const struct pkt_event *ev)
{
    struct pkt_var v[RUN_VARS];
    size_t n = 0;
    if (r->be->info(r, ev, v, RUN_VARS, &n) < 0)
        return -1;
    char out[1024], err[512];
    int rc = pkt_code_run(ev->text, v, n, out, sizeof(out), err, sizeof(err));
    if (out[0])
        fputs(out, stdout);
    if (rc != PKT_PASS)
        return run_fail(r, rc, ev, "%s", err);
    return 0;
}

/* ---- commands ---- */

int run_command_virtual(struct run *r, const struct pkt_event *ev, size_t i)
{
    if ((ev->t_us == 0 && i == 0) || (i > 0 && r->s->ev[i - 1].act == ACT_COMMAND && ev->t_us == 0))
        return 0; /* applied with the settings (make_settings) */
    struct brisk_settings probe;
    brisk_settings_default(&probe);
    char err[256];
    int rc = pkt_command_apply(ev->text, &probe, err, sizeof(err));
    if (rc != PKT_PASS)
        return run_fail(r, rc, ev, "%s", err);
    return run_fail(r, PKT_UNSUPPORTED, ev, "a sysctl after the first event (brisk's settings are fixed when "
                    "the stack is made: move it before the first event)");
}

/* ---- the loop ---- */

static const char *act_name(const struct pkt_event *ev)
{
    switch (ev->act) {
    case ACT_INBOUND: return "inbound packet";
    case ACT_OUTBOUND: return "outbound packet";
    case ACT_SYSCALL: return "system call start";
    case ACT_COMMAND: return "command";
    default: return "data collection for code";
    }
}

static void run_events(struct run *r)
{
    int prev_abs = 0;
    int64_t prev_abs_us = 0;
    for (size_t i = 0; i < r->s->nev && !r->stopped; i++) {
        const struct pkt_event *ev = &r->s->ev[i];
        r->cur = ev;
        if (r->be->sync)
            r->be->sync(r);
        if (r->stopped)
            return;
        int64_t now_us = run_now_us(r);
        int64_t base = (r->prev_inbound && ev->act == ACT_INBOUND) ? r->prev_event_us : now_us;
        int64_t t = 0, t_end = 0;
        switch (ev->tkind) {
        case TIME_ABS:
            t = t_end = ev->t_us;
            break;
        case TIME_ABS_RANGE:
            t = ev->t_us;
            t_end = ev->t_end_us;
            break;
        case TIME_REL:
            t = t_end = base + ev->t_us;
            break;
        case TIME_REL_RANGE:
            t = base + ev->t_us;
            t_end = base + ev->t_end_us;
            break;
        case TIME_ANY:
            t = t_end = now_us;
            break;
        }
        if ((ev->tkind == TIME_ABS || ev->tkind == TIME_ABS_RANGE) && prev_abs && ev->t_us < prev_abs_us) {
            run_fail(r, PKT_BAD_SCRIPT, ev, "time goes backward in script from %" PRId64 " usec to %" PRId64
                     " usec", prev_abs_us, ev->t_us);
            return;
        }
        if (ev->tkind == TIME_ABS || ev->tkind == TIME_ABS_RANGE) {
            prev_abs = 1;
            prev_abs_us = ev->t_us;
        }
        if (ev->act != ACT_OUTBOUND) {
            if (t > now_us)
                r->be->advance(r, (uint64_t)t * 1000);
            if (r->stopped)
                return;
            int64_t at = run_now_us(r);
            if (!run_time_ok(r, at, t, t)) {
                run_fail(r, PKT_FAIL, ev, "timing error: expected %s at %.6f sec but happened at %.6f sec; "
                         "tolerance %.6f sec", act_name(ev), (double)t / 1e6, (double)at / 1e6,
                         (double)run_tolerance(r, t) / 1e6);
                return;
            }
        }
        switch (ev->act) {
        case ACT_INBOUND:
            net_inbound(r, ev);
            break;
        case ACT_OUTBOUND:
            net_outbound(r, ev, t, t_end);
            break;
        case ACT_SYSCALL:
            r->be->syscall(r, ev);
            break;
        case ACT_COMMAND:
            r->be->command(r, ev, i);
            break;
        case ACT_CODE:
            run_code(r, ev);
            break;
        }
        r->res->events++;
        r->last_script_us = t;
        r->prev_event_us = t;
        r->prev_inbound = ev->act == ACT_INBOUND;
    }
    if (!r->stopped)
        r->be->finish(r);
}

struct run *run_new(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *res,
                    const struct run_backend *be)
{
    memset(res, 0, sizeof(*res));
    struct run *r = calloc(1, sizeof(*r));
    if (!r) {
        res->status = PKT_FAIL;
        snprintf(res->msg, sizeof(res->msg), "%s: out of memory", s->path);
        return NULL;
    }
    r->s = s;
    r->cfg = cfg;
    r->res = res;
    r->be = be;
    r->local_ip = 0xc0a80001u;   /* 192.168.0.1 */
    r->gateway_ip = 0xc0a80002u; /* 192.168.0.2 */
    r->remote_ip = 0xc0000201u;  /* 192.0.2.1 */
    r->prefix = 16;
    r->bind_port = 8080;
    r->connect_port = 8080;
    r->next_eph = 48000;
    r->mtu = 1500;
    static const uint8_t lmac[6] = {0x02, 0, 0, 0, 0, 0x01}, gmac[6] = {0x02, 0, 0, 0, 0, 0x02};
    memcpy(r->local_mac, lmac, 6);
    memcpy(r->gw_mac, gmac, 6);
    r->tolerance_us = cfg->tolerance_us;
    r->tolerance_percent = cfg->tolerance_percent;
    return r;
}

void run_script(struct run *r)
{
    struct brisk_settings st;
    if (make_settings(r, &st) == 0 && r->be->init(r, &st) == 0)
        run_events(r);
    r->res->virtual_ns = r->now;
    r->be->free(r);
    free(r);
}

void pkt_run(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *res)
{
    if (cfg->kernel) {
        kernel_run(s, cfg, res);
        return;
    }
    struct run *r = run_new(s, cfg, res, &virtual_backend);
    if (r)
        run_script(r);
}
