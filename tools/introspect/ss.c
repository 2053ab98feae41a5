/*
 * ss.c — brisk-ss: the sockets of a running brisk process, like `ss -tin` (docs/introspection.md).
 *
 *   brisk-ss [--ctl PATH] [-i] [-l|-a] [--json] [-t] [-n]
 *
 * One line per socket: state, Recv-Q, Send-Q, local and peer address:port, in ss's columns and state
 * names. With -i a second, indented line in ss's vocabulary (cc, wscale, rto, rtt srtt/rttvar in ms, mss,
 * cwnd and ssthresh in segments, bytes, segments, pacing_rate, retrans current/total) and brisk's own: the
 * reason the connection is not sending now (hold:) and, for every reason that ever held it, how often and
 * for how long (held:reason(events,time)). --json prints the answer's socket objects (ctl.h) as they are.
 * By default listeners are left out, as ss does; -l shows only them, -a everything. -t and -n are accepted
 * for ss's habits (brisk has only TCP, and never resolves names).
 *
 * The socket comes from --ctl or $BRISK_CTL. Bad options: a message, exit 2; no process to ask: a
 * message, exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "introspect/ctl.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: brisk-ss [--ctl PATH] [-i|--info] [-l|--listening] [-a|--all] [--json] [-t] [-n]\n"
               "  prints the TCP sockets of the brisk process listening on the control socket PATH\n"
               "  (default $BRISK_CTL), like ss -tin\n");
}

static int64_t num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static const char *ss_state(const char *s)
{
    static const char *const map[][2] = {
        {"ESTABLISHED", "ESTAB"}, {"SYN-RECEIVED", "SYN-RECV"}, {"CLOSED", "UNCONN"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(s, map[i][0]))
            return map[i][1];
    return s;
}

static char *rate(char *b, size_t n, int64_t bytes_per_s)
{
    double bps = (double)bytes_per_s * 8;
    if (bps >= 1e9)
        snprintf(b, n, "%.1fGbps", bps / 1e9);
    else if (bps >= 1e6)
        snprintf(b, n, "%.1fMbps", bps / 1e6);
    else if (bps >= 1e3)
        snprintf(b, n, "%.1fKbps", bps / 1e3);
    else
        snprintf(b, n, "%.0fbps", bps);
    return b;
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

/* A time in ms the way ss prints it: integral when large, three decimals otherwise. */
static char *ms_str(char *b, size_t n, int64_t ns)
{
    if (ns >= 100 * 1000000ll)
        snprintf(b, n, "%.0f", ms(ns));
    else
        snprintf(b, n, "%.3g", ms(ns));
    return b;
}

static void print_info(json_t *s, int64_t now)
{
    char b1[32], b2[32];
    int64_t mss = num(s, "mss") > 0 ? num(s, "mss") : 1;
    printf("\t %s", str(s, "cc"));
    if (json_is_true(json_object_get(s, "ws_ok")))
        printf(" wscale:%lld,%lld", (long long)num(s, "snd_wscale"), (long long)num(s, "rcv_wscale"));
    if (json_is_true(json_object_get(s, "sack_ok")))
        printf(" sack");
    if (json_is_true(json_object_get(s, "ts_ok")))
        printf(" ts");
    printf(" rto:%s", ms_str(b1, sizeof(b1), num(s, "rto_ns")));
    if (num(s, "srtt_ns") > 0)
        printf(" rtt:%.3f/%.3f", ms(num(s, "srtt_ns")), ms(num(s, "rttvar_ns")));
    if (num(s, "min_rtt_ns") > 0)
        printf(" minrtt:%.3f", ms(num(s, "min_rtt_ns")));
    printf(" ato:%s mss:%lld advmss:%lld rcvmss:%lld", ms_str(b2, sizeof(b2), num(s, "ato_ns")),
           (long long)num(s, "mss"), (long long)num(s, "advmss"), (long long)num(s, "rcv_mss"));
    printf(" cwnd:%lld", (long long)(num(s, "cwnd") / mss));
    int64_t ssth = num(s, "ssthresh");
    if (ssth > 0 && ssth < 0x7fffffff) /* ss leaves out the infinite initial one */
        printf(" ssthresh:%lld", (long long)(ssth / mss));
    printf(" bytes_sent:%lld bytes_acked:%lld bytes_received:%lld segs_out:%lld segs_in:%lld",
           (long long)num(s, "bytes_sent"), (long long)num(s, "bytes_acked"),
           (long long)num(s, "bytes_received"), (long long)num(s, "segs_out"), (long long)num(s, "segs_in"));
    const char *last[][2] = {
        {"lastsnd", "last_data_sent_ns"}, {"lastrcv", "last_data_recv_ns"}, {"lastack", "last_recv_ns"}};
    for (size_t i = 0; i < 3; i++) {
        int64_t at = num(s, last[i][1]);
        if (at > 0 && at <= now)
            printf(" %s:%lld", last[i][0], (long long)((now - at) / 1000000));
    }
    printf(" pacing_rate %s", rate(b1, sizeof(b1), num(s, "pacing_rate")));
    if (num(s, "unacked"))
        printf(" unacked:%lld", (long long)(num(s, "unacked") / mss));
    if (num(s, "retransmits") || num(s, "retrans_bytes"))
        printf(" retrans:%lld/%lld", (long long)(num(s, "retrans_bytes") / mss),
               (long long)num(s, "retransmits"));
    if (num(s, "rto_count"))
        printf(" rto_count:%lld", (long long)num(s, "rto_count"));
    if (num(s, "lost_bytes"))
        printf(" lost:%lld", (long long)(num(s, "lost_bytes") / mss));
    if (num(s, "sacked_bytes"))
        printf(" sacked:%lld", (long long)(num(s, "sacked_bytes") / mss));
    if (num(s, "reordering"))
        printf(" reordering:%lld", (long long)num(s, "reordering"));
    printf(" rcv_space:%lld rcv_ssthresh:%lld snd_wnd:%lld rcv_wnd:%lld notsent:%lld",
           (long long)num(s, "rcv_space"), (long long)num(s, "rcv_ssthresh"), (long long)num(s, "snd_wnd"),
           (long long)num(s, "rcv_wnd"), (long long)num(s, "notsent"));
    if (num(s, "tlp_probes"))
        printf(" tlp:%lld/%lld", (long long)num(s, "tlp_recoveries"), (long long)num(s, "tlp_probes"));
    printf(" hold:%s", str(s, "hold"));
    json_t *holds = json_object_get(s, "holds");
    const char *reason;
    json_t *h;
    int first = 1;
    json_object_foreach(holds, reason, h)
    {
        if (num(h, "events") == 0)
            continue;
        printf("%s%s(%lld,%sms)", first ? " held:" : ",", reason, (long long)num(h, "events"),
               ms_str(b1, sizeof(b1), num(h, "ns")));
        first = 0;
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *opt_ctl = NULL;
    int info = 0, json = 0, listening = 0, all = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--ctl")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "brisk-ss: option --ctl needs a path\n");
                return 2;
            }
            opt_ctl = argv[++i];
        } else if (!strcmp(a, "-i") || !strcmp(a, "--info"))
            info = 1;
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "-l") || !strcmp(a, "--listening"))
            listening = 1;
        else if (!strcmp(a, "-a") || !strcmp(a, "--all"))
            all = 1;
        else if (!strcmp(a, "-t") || !strcmp(a, "--tcp") || !strcmp(a, "-n") || !strcmp(a, "--numeric"))
            ;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "brisk-ss: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (listening && all) {
        fprintf(stderr, "brisk-ss: -l and -a exclude each other\n");
        return 2;
    }
    const char *path = ctl_path(opt_ctl);
    if (!path) {
        fprintf(stderr, "brisk-ss: no control socket: give --ctl PATH or set BRISK_CTL\n");
        return 2;
    }
    char why[256];
    json_t *ans = ctl_request(path, "sockets", why, sizeof(why));
    if (!ans) {
        fprintf(stderr, "brisk-ss: %s\n", why);
        return 1;
    }
    json_t *socks = json_object_get(ans, "sockets");
    if (!json_is_array(socks)) {
        fprintf(stderr, "brisk-ss: the answer from %s has no socket list\n", path);
        json_decref(ans);
        return 1;
    }
    int64_t now = num(ans, "now_ns");
    json_t *shown = json_array();
    size_t k;
    json_t *s;
    json_array_foreach(socks, k, s)
    {
        if (!json_is_object(s))
            continue;
        int is_listen = !strcmp(str(s, "state"), "LISTEN");
        if (all || (listening ? is_listen : !is_listen))
            json_array_append(shown, s);
    }
    if (json) {
        json_t *out = json_pack("{s:O,s:O,s:O,s:O}", "program", json_object_get(ans, "program"), "pid",
                                json_object_get(ans, "pid"), "now_ns", json_object_get(ans, "now_ns"),
                                "sockets", shown);
        if (!out || json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
            fprintf(stderr, "brisk-ss: out of memory\n");
            return 1;
        }
        printf("\n");
        json_decref(out);
    } else {
        printf("%-11s %-7s %-7s %-25s %-25s\n", "State", "Recv-Q", "Send-Q", "Local Address:Port",
               "Peer Address:Port");
        json_array_foreach(shown, k, s)
        {
            char la[32], ra[32];
            snprintf(la, sizeof(la), "%s:%lld", str(s, "laddr"), (long long)num(s, "lport"));
            if (num(s, "rport"))
                snprintf(ra, sizeof(ra), "%s:%lld", str(s, "raddr"), (long long)num(s, "rport"));
            else
                snprintf(ra, sizeof(ra), "*:*");
            int is_listen = !strcmp(str(s, "state"), "LISTEN");
            printf("%-11s %-7lld %-7lld %-25s %-25s\n", ss_state(str(s, "state")),
                   (long long)(is_listen ? 0 : num(s, "recv_q")),
                   (long long)(is_listen ? 0 : num(s, "send_q")), la, ra);
            if (info && !is_listen)
                print_info(s, now);
        }
    }
    json_decref(shown);
    json_decref(ans);
    return 0;
}
