/*
 * ssline.c — the ss-style lines of a socket object (ssline.h), shared by brisk-ss and brisk-lab.
 *
 * The vocabulary is ss's (iproute2's `ss -tin`): times in ms, cwnd / ssthresh / unacked / lost / sacked in
 * segments of the current MSS, pacing_rate in bit/s; then brisk's own, the reason the connection is not
 * sending now (hold:) and every reason that ever held it with how often and how long (held:). The object's
 * fields are brisk_conn_info's (docs/introspection.md), so whatever made the object — a control-socket
 * answer or a simulated run — prints the same way.
 */
#include "introspect/ssline.h"

#include <stdlib.h>
#include <string.h>

int64_t ss_num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

const char *ss_str(json_t *o, const char *k)
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

static void info_body(FILE *f, json_t *s, int64_t now)
{
    char b1[32], b2[32];
    int64_t mss = ss_num(s, "mss") > 0 ? ss_num(s, "mss") : 1;
    fprintf(f, "%s", ss_str(s, "cc"));
    if (json_is_true(json_object_get(s, "ws_ok")))
        fprintf(f, " wscale:%lld,%lld", (long long)ss_num(s, "snd_wscale"),
                (long long)ss_num(s, "rcv_wscale"));
    if (json_is_true(json_object_get(s, "sack_ok")))
        fprintf(f, " sack");
    if (json_is_true(json_object_get(s, "ts_ok")))
        fprintf(f, " ts");
    fprintf(f, " rto:%s", ms_str(b1, sizeof(b1), ss_num(s, "rto_ns")));
    if (ss_num(s, "srtt_ns") > 0)
        fprintf(f, " rtt:%.3f/%.3f", ms(ss_num(s, "srtt_ns")), ms(ss_num(s, "rttvar_ns")));
    if (ss_num(s, "min_rtt_ns") > 0)
        fprintf(f, " minrtt:%.3f", ms(ss_num(s, "min_rtt_ns")));
    fprintf(f, " ato:%s mss:%lld advmss:%lld rcvmss:%lld", ms_str(b2, sizeof(b2), ss_num(s, "ato_ns")),
            (long long)ss_num(s, "mss"), (long long)ss_num(s, "advmss"), (long long)ss_num(s, "rcv_mss"));
    fprintf(f, " cwnd:%lld", (long long)(ss_num(s, "cwnd") / mss));
    int64_t ssth = ss_num(s, "ssthresh");
    if (ssth > 0 && ssth < 0x7fffffff) /* ss leaves out the infinite initial one */
        fprintf(f, " ssthresh:%lld", (long long)(ssth / mss));
    fprintf(f, " bytes_sent:%lld bytes_acked:%lld bytes_received:%lld segs_out:%lld segs_in:%lld",
            (long long)ss_num(s, "bytes_sent"), (long long)ss_num(s, "bytes_acked"),
            (long long)ss_num(s, "bytes_received"), (long long)ss_num(s, "segs_out"),
            (long long)ss_num(s, "segs_in"));
    const char *last[][2] = {
        {"lastsnd", "last_data_sent_ns"}, {"lastrcv", "last_data_recv_ns"}, {"lastack", "last_recv_ns"}};
    for (size_t i = 0; i < 3; i++) {
        int64_t at = ss_num(s, last[i][1]);
        if (at > 0 && at <= now)
            fprintf(f, " %s:%lld", last[i][0], (long long)((now - at) / 1000000));
    }
    fprintf(f, " pacing_rate %s", rate(b1, sizeof(b1), ss_num(s, "pacing_rate")));
    if (ss_num(s, "unacked"))
        fprintf(f, " unacked:%lld", (long long)(ss_num(s, "unacked") / mss));
    if (ss_num(s, "retransmits") || ss_num(s, "retrans_bytes"))
        fprintf(f, " retrans:%lld/%lld", (long long)(ss_num(s, "retrans_bytes") / mss),
                (long long)ss_num(s, "retransmits"));
    if (ss_num(s, "rto_count"))
        fprintf(f, " rto_count:%lld", (long long)ss_num(s, "rto_count"));
    if (ss_num(s, "lost_bytes"))
        fprintf(f, " lost:%lld", (long long)(ss_num(s, "lost_bytes") / mss));
    if (ss_num(s, "sacked_bytes"))
        fprintf(f, " sacked:%lld", (long long)(ss_num(s, "sacked_bytes") / mss));
    if (ss_num(s, "reordering"))
        fprintf(f, " reordering:%lld", (long long)ss_num(s, "reordering"));
    fprintf(f, " rcv_space:%lld rcv_ssthresh:%lld snd_wnd:%lld rcv_wnd:%lld notsent:%lld",
            (long long)ss_num(s, "rcv_space"), (long long)ss_num(s, "rcv_ssthresh"),
            (long long)ss_num(s, "snd_wnd"), (long long)ss_num(s, "rcv_wnd"),
            (long long)ss_num(s, "notsent"));
    if (ss_num(s, "tlp_probes"))
        fprintf(f, " tlp:%lld/%lld", (long long)ss_num(s, "tlp_recoveries"),
                (long long)ss_num(s, "tlp_probes"));
    fprintf(f, " hold:%s", ss_str(s, "hold"));
    json_t *holds = json_object_get(s, "holds");
    const char *reason;
    json_t *h;
    int first = 1;
    json_object_foreach(holds, reason, h)
    {
        if (ss_num(h, "events") == 0)
            continue;
        fprintf(f, "%s%s(%lld,%sms)", first ? " held:" : ",", reason, (long long)ss_num(h, "events"),
                ms_str(b1, sizeof(b1), ss_num(h, "ns")));
        first = 0;
    }
}

void ss_print_header(FILE *f)
{
    fprintf(f, "%-11s %-7s %-7s %-25s %-25s\n", "State", "Recv-Q", "Send-Q", "Local Address:Port",
            "Peer Address:Port");
}

void ss_print_socket(FILE *f, json_t *s)
{
    char la[32], ra[32];
    snprintf(la, sizeof(la), "%s:%lld", ss_str(s, "laddr"), (long long)ss_num(s, "lport"));
    if (ss_num(s, "rport"))
        snprintf(ra, sizeof(ra), "%s:%lld", ss_str(s, "raddr"), (long long)ss_num(s, "rport"));
    else
        snprintf(ra, sizeof(ra), "*:*");
    int is_listen = !strcmp(ss_str(s, "state"), "LISTEN");
    fprintf(f, "%-11s %-7lld %-7lld %-25s %-25s\n", ss_state(ss_str(s, "state")),
            (long long)(is_listen ? 0 : ss_num(s, "recv_q")),
            (long long)(is_listen ? 0 : ss_num(s, "send_q")), la, ra);
}

void ss_print_info(FILE *f, json_t *s, int64_t now)
{
    fputs("\t ", f);
    info_body(f, s, now);
    fputc('\n', f);
}

char *ss_info_string(json_t *s, int64_t now)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    info_body(f, s, now);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
