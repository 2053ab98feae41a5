/*
 * sysctl.c — a script's shell commands: split into sysctl assignments, which each backend honours its way.
 *
 * packetdrill scripts configure the kernel under test with shell commands: `sysctl -q net.ipv4.tcp_sack=0`,
 * `sysctl -w net.ipv4.tcp_rmem="4096 87380 6291456"`, or `echo 0 > /proc/sys/net/ipv4/tcp_timestamps`, often
 * several joined by ';' or '&&'. pkt_command_run splits a command into those assignments (quotes group
 * words; no other shell syntax) and hands each to the backend: the kernel backend writes it to /proc/sys
 * (kernel.c), the virtual one maps it here (pkt_command_apply). Commands that configure only what both
 * backends' devices already are (offloads off with ethtool) are accepted; any other command is unsupported.
 *
 * The mapping: each recognised sysctl becomes the brisk setting with the same meaning, converting Linux's
 * units (seconds for keepalive and FIN timeouts, "min default max" triples for buffers, names for congestion
 * control). A sysctl brisk has no setting for is reported as unsupported, naming it: running the script
 * without it would test something else.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"

enum conv {
    CV_PLAIN,   /* the number as it is */
    CV_BOOL,    /* nonzero -> 1 */
    CV_SECS,    /* seconds -> a time setting */
    CV_MSECS,   /* milliseconds -> a time setting */
    CV_TRIPLE,  /* "min default max": the default */
    CV_RMEM,    /* tcp_rmem's "min default max": tcp_rcvbuf the default, tcp_rmem_max the max */
    CV_CC,      /* congestion control name */
    CV_EARLY,   /* tcp_early_retrans: TLP is on for 3 and 4 */
    CV_ZERO_OK, /* only 0 (the feature off, as brisk has it) is accepted */
    CV_ACCEPT,  /* any value: brisk's behaviour does not depend on it */
};

struct map {
    const char *sysctl; /* after "net.ipv4." or "net.core." */
    const char *setting;
    enum conv conv;
};

static const struct map maps[] = {
    {"tcp_timestamps", "tcp_timestamps", CV_BOOL},
    {"tcp_sack", "tcp_sack", CV_BOOL},
    {"tcp_window_scaling", "tcp_window_scaling", CV_BOOL},
    {"tcp_autocorking", "tcp_autocorking", CV_BOOL},
    {"tcp_limit_output_bytes", "tcp_limit_output_bytes", CV_PLAIN},
    {"tcp_min_tso_segs", "tcp_min_tso_segs", CV_PLAIN},
    {"tcp_tso_rtt_log", "tcp_tso_rtt_log", CV_PLAIN},
    {"tcp_syncookies", "tcp_syncookies", CV_PLAIN},
    {"tcp_syn_retries", "tcp_syn_retries", CV_PLAIN},
    {"tcp_syn_linear_timeouts", "tcp_syn_linear_timeouts", CV_PLAIN},
    {"tcp_min_snd_mss", "tcp_min_snd_mss", CV_PLAIN},
    {"tcp_synack_retries", "tcp_synack_retries", CV_PLAIN},
    {"tcp_retries2", "tcp_retries2", CV_PLAIN},
    {"tcp_fin_timeout", "tcp_fin_timeout", CV_SECS},
    {"tcp_keepalive_time", "tcp_keepalive_time", CV_SECS},
    {"tcp_keepalive_intvl", "tcp_keepalive_intvl", CV_SECS},
    {"tcp_invalid_ratelimit", "tcp_invalid_ratelimit", CV_MSECS},
    {"tcp_keepalive_probes", "tcp_keepalive_probes", CV_PLAIN},
    {"tcp_max_syn_backlog", "tcp_max_syn_backlog", CV_PLAIN},
    {"tcp_challenge_ack_limit", "tcp_challenge_ack_limit", CV_PLAIN},
    {"tcp_max_tw_buckets", "tcp_max_tw_buckets", CV_PLAIN},
    {"tcp_pacing_ss_ratio", "tcp_pacing_ss_ratio", CV_PLAIN},
    {"tcp_pacing_ca_ratio", "tcp_pacing_ca_ratio", CV_PLAIN},
    {"tcp_frto", "tcp_frto", CV_BOOL},
    {"tcp_early_retrans", "tcp_tlp", CV_EARLY},
    {"tcp_congestion_control", "tcp_congestion", CV_CC},
    {"tcp_rmem", "tcp_rcvbuf", CV_RMEM},
    {"tcp_wmem", "tcp_sndbuf", CV_TRIPLE},
    {"tcp_slow_start_after_idle", "tcp_slow_start_after_idle", CV_BOOL},
    {"tcp_ecn", NULL, CV_ZERO_OK},
    {"tcp_fastopen", NULL, CV_ZERO_OK},
    {"tcp_mtu_probing", NULL, CV_ZERO_OK},
    {"tcp_no_metrics_save", NULL, CV_ACCEPT}, /* brisk keeps no per-destination metrics */
    {"tcp_moderate_rcvbuf", "tcp_moderate_rcvbuf", CV_BOOL},
    {"tcp_app_win", "tcp_app_win", CV_PLAIN},
    {"core.rmem_max", "rmem_max", CV_PLAIN}, /* net.core.rmem_max */
};

static int set(struct brisk_settings *s, const char *name, const char *value, char *err, size_t errlen)
{
    int rc = brisk_settings_set_kv(s, name, value);
    if (rc == BRISK_ERR_NOENT) {
        snprintf(err, errlen, "unsupported: brisk has no setting %s", name);
        return PKT_UNSUPPORTED;
    }
    if (rc != BRISK_OK) {
        snprintf(err, errlen, "%s=%s: %s", name, value, brisk_strerror(rc));
        return PKT_BAD_SCRIPT;
    }
    return PKT_PASS;
}

/* One "name=value" (or name and value apart, for the /proc form) as a brisk setting. */
static int apply_one(void *ctx, const char *name, const char *value, char *err, size_t errlen)
{
    struct brisk_settings *s = ctx;
    const char *leaf = name;
    if (!strncmp(leaf, "net.ipv4.", 9))
        leaf += 9;
    else if (!strncmp(leaf, "net/ipv4/", 9))
        leaf += 9;
    else if (!strcmp(leaf, "net.core.rmem_max") || !strcmp(leaf, "net/core/rmem_max"))
        leaf = "core.rmem_max";
    else {
        snprintf(err, errlen, "unsupported: sysctl %s", name);
        return PKT_UNSUPPORTED;
    }
    const struct map *m = NULL;
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
        if (!strcmp(maps[i].sysctl, leaf))
            m = &maps[i];
    if (!m) {
        snprintf(err, errlen, "unsupported: sysctl %s (brisk has no setting for it)", name);
        return PKT_UNSUPPORTED;
    }
    char *end;
    char buf[64];
    unsigned long long v = strtoull(value, &end, 10);
    int numeric = end != value && *end == 0;
    switch (m->conv) {
    case CV_PLAIN:
    case CV_BOOL:
    case CV_SECS:
    case CV_MSECS:
    case CV_EARLY:
    case CV_ZERO_OK:
        if (!numeric) {
            snprintf(err, errlen, "sysctl %s: expected a number, got \"%s\"", name, value);
            return PKT_BAD_SCRIPT;
        }
        break;
    default:
        break;
    }
    switch (m->conv) {
    case CV_PLAIN:
        return set(s, m->setting, value, err, errlen);
    case CV_BOOL:
        return set(s, m->setting, v ? "1" : "0", err, errlen);
    case CV_SECS:
        snprintf(buf, sizeof(buf), "%llus", v);
        return set(s, m->setting, buf, err, errlen);
    case CV_MSECS:
        snprintf(buf, sizeof(buf), "%llums", v);
        return set(s, m->setting, buf, err, errlen);
    case CV_EARLY:
        return set(s, m->setting, v >= 3 ? "1" : "0", err, errlen);
    case CV_TRIPLE:
    case CV_RMEM: {
        unsigned long long lo, def, hi;
        if (sscanf(value, "%llu %llu %llu", &lo, &def, &hi) != 3) {
            snprintf(err, errlen, "sysctl %s: expected \"min default max\", got \"%s\"", name, value);
            return PKT_BAD_SCRIPT;
        }
        snprintf(buf, sizeof(buf), "%llu", def);
        int rc = set(s, m->setting, buf, err, errlen);
        if (rc != PKT_PASS || m->conv != CV_RMEM)
            return rc;
        snprintf(buf, sizeof(buf), "%llu", hi); /* Linux's window scale and autotuning ceiling */
        return set(s, "tcp_rmem_max", buf, err, errlen);
    }
    case CV_CC:
        return set(s, m->setting, !strcmp(value, "reno") ? "newreno" : value, err, errlen);
    case CV_ZERO_OK:
        if (v == 0 || (!strcmp(leaf, "tcp_ecn") && v == 2))
            return PKT_PASS; /* tcp_ecn=2 (Linux's default) only answers ECN; no script SYN asks for it */
        snprintf(err, errlen, "unsupported: sysctl %s=%s (brisk does not have this feature)", name, value);
        return PKT_UNSUPPORTED;
    case CV_ACCEPT:
        return PKT_PASS;
    }
    return PKT_PASS;
}

/* Splits the command into simple commands and words (quotes group words; no other shell syntax). */
#define WORDS_MAX 32

static int run_simple(char **w, int n, pkt_sysctl_fn fn, void *ctx, char *err, size_t errlen)
{
    if (n == 0)
        return PKT_PASS;
    if (!strcmp(w[0], "sysctl")) {
        int any = 0;
        for (int i = 1; i < n; i++) {
            if (w[i][0] == '-')
                continue; /* -q, -w, -e */
            char *eq = strchr(w[i], '=');
            if (!eq) {
                snprintf(err, errlen, "unsupported: sysctl without an assignment (%s)", w[i]);
                return PKT_UNSUPPORTED;
            }
            *eq = 0;
            int rc = fn(ctx, w[i], eq + 1, err, errlen);
            if (rc != PKT_PASS)
                return rc;
            any = 1;
        }
        if (!any) {
            snprintf(err, errlen, "unsupported: sysctl command without a setting");
            return PKT_UNSUPPORTED;
        }
        return PKT_PASS;
    }
    if (!strcmp(w[0], "echo") && n == 4 && !strcmp(w[2], ">") && !strncmp(w[3], "/proc/sys/", 10))
        return fn(ctx, w[3] + 10, w[1], err, errlen);
    if (!strcmp(w[0], "ethtool") && n >= 2 && !strcmp(w[1], "-K")) {
        for (int i = 3; i + 1 < n; i += 2) {
            if (strcmp(w[i + 1], "off") != 0) {
                snprintf(err, errlen, "unsupported: ethtool -K ... %s %s (brisk-pkt's device has no offloads)",
                         w[i], w[i + 1]);
                return PKT_UNSUPPORTED;
            }
        }
        return PKT_PASS;
    }
    if (!strcmp(w[0], "true") || !strcmp(w[0], ":"))
        return PKT_PASS;
    snprintf(err, errlen, "unsupported: shell command '%s'", w[0]);
    return PKT_UNSUPPORTED;
}

int pkt_command_run(const char *cmd, pkt_sysctl_fn fn, void *ctx, char *err, size_t errlen)
{
    size_t len = strlen(cmd);
    char *buf = malloc(len + 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return PKT_BAD_SCRIPT;
    }
    char *w[WORDS_MAX];
    int n = 0, rc = PKT_PASS;
    size_t o = 0;
    for (size_t i = 0; i <= len && rc == PKT_PASS;) {
        char c = cmd[i];
        if (c == 0 || c == ';' || c == '\n' || (c == '&' && cmd[i + 1] == '&')) {
            rc = run_simple(w, n, fn, ctx, err, errlen);
            n = 0;
            i += (c == '&') ? 2 : 1;
            if (c == 0)
                break;
            continue;
        }
        if (isspace((unsigned char)c)) {
            i++;
            continue;
        }
        if (n == WORDS_MAX) {
            snprintf(err, errlen, "unsupported: command with more than %d words", WORDS_MAX);
            rc = PKT_UNSUPPORTED;
            break;
        }
        w[n++] = buf + o;
        while (i < len && !isspace((unsigned char)cmd[i]) && cmd[i] != ';' && !(cmd[i] == '&' && cmd[i + 1] == '&')) {
            if (cmd[i] == '"' || cmd[i] == '\'') {
                char q = cmd[i++];
                while (i < len && cmd[i] != q)
                    buf[o++] = cmd[i++];
                if (i < len)
                    i++;
            } else {
                buf[o++] = cmd[i++];
            }
        }
        buf[o++] = 0;
    }
    free(buf);
    return rc;
}

int pkt_command_apply(const char *cmd, struct brisk_settings *s, char *err, size_t errlen)
{
    return pkt_command_run(cmd, apply_one, s, err, errlen);
}
