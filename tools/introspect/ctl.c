/*
 * ctl.c — the control protocol's answers (ctl.h): one request line in, one JSON line out, built from the
 * stack as it is at that instant.
 *
 * The request is hostile input (any local process of the same user can write to the socket): it is only
 * ever compared with the known words, after checking that it is printable ASCII, and an error answer quotes
 * at most its first 32 bytes. The answers are made with jansson, which escapes every string; the socket
 * fields are brisk_conn_info's, named as in struct brisk_conn_info (docs/introspection.md lists them) so that
 * a reader of the JSON can look each one up in brisk.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "introspect/ctl.h"

static void set_u64(json_t *o, const char *key, uint64_t v)
{
    /* jansson integers are signed 64-bit: BRISK_TIME_NONE and other "none" values (all ones) read -1. */
    json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, json_string(v));
}

static void set_addr(json_t *o, const char *key, uint32_t a)
{
    char b[16];
    snprintf(b, sizeof(b), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    set_str(o, key, b);
}

json_t *ctl_socket_json(const brisk_sock *s)
{
    struct brisk_conn_info i;
    if (brisk_conn_info(s, &i) != BRISK_OK)
        return NULL;
    return ctl_conn_json(&i, brisk_get_congestion(s));
}

json_t *ctl_conn_json(const struct brisk_conn_info *ip, const char *cc)
{
    const struct brisk_conn_info i = *ip;
    json_t *o = json_object();
    if (!o)
        return NULL;
    set_str(o, "state", brisk_tcp_state_name(i.state));
    set_addr(o, "laddr", i.laddr);
    set_u64(o, "lport", i.lport);
    set_addr(o, "raddr", i.raddr);
    set_u64(o, "rport", i.rport);
    /* ss's queues: what the application has not read, and what it wrote that is not acknowledged. */
    set_u64(o, "recv_q", i.rcv_queued);
    set_u64(o, "send_q", i.snd_queued);
    set_str(o, "cc", cc ? cc : "");
    set_u64(o, "mss", i.mss);
    set_u64(o, "advmss", i.advmss);
    set_u64(o, "peer_mss", i.peer_mss);
    set_u64(o, "rcv_mss", i.rcv_mss);
    set_u64(o, "cwnd", i.cwnd);
    set_u64(o, "ssthresh", i.ssthresh);
    set_u64(o, "srtt_ns", i.srtt_ns);
    set_u64(o, "rttvar_ns", i.rttvar_ns);
    set_u64(o, "min_rtt_ns", i.min_rtt_ns);
    set_u64(o, "rto_ns", i.rto_ns);
    set_u64(o, "ato_ns", i.ato_ns);
    set_u64(o, "snd_wnd", i.snd_wnd);
    set_u64(o, "rcv_wnd", i.rcv_wnd);
    set_u64(o, "snd_wscale", i.snd_wscale);
    set_u64(o, "rcv_wscale", i.rcv_wscale);
    json_object_set_new(o, "ts_ok", json_boolean(i.ts_ok));
    json_object_set_new(o, "sack_ok", json_boolean(i.sack_ok));
    json_object_set_new(o, "ws_ok", json_boolean(i.ws_ok));
    set_u64(o, "pacing_rate", i.pacing_rate);
    set_u64(o, "bytes_sent", i.bytes_sent);
    set_u64(o, "bytes_acked", i.bytes_acked);
    set_u64(o, "bytes_received", i.bytes_received);
    set_u64(o, "segs_out", i.segs_out);
    set_u64(o, "segs_in", i.segs_in);
    set_u64(o, "retransmits", i.retransmits);
    set_u64(o, "rto_count", i.rto_count);
    set_u64(o, "fast_retransmits", i.fast_retransmits);
    set_u64(o, "tlp_probes", i.tlp_probes);
    set_u64(o, "tlp_recoveries", i.tlp_recoveries);
    set_u64(o, "undos", i.undos);
    set_u64(o, "ca_state", (uint64_t)i.ca_state);
    set_u64(o, "unacked", i.unacked);
    set_u64(o, "notsent", i.notsent);
    set_u64(o, "sacked_bytes", i.sacked_bytes);
    set_u64(o, "lost_bytes", i.lost_bytes);
    set_u64(o, "retrans_bytes", i.retrans_bytes);
    set_u64(o, "backoff", i.backoff);
    set_u64(o, "reordering", i.reordering);
    set_u64(o, "rcv_ssthresh", i.rcv_ssthresh);
    set_u64(o, "rcv_space", i.rcv_space);
    set_u64(o, "rcv_rtt_us", i.rcv_rtt_us);
    set_u64(o, "wmem", i.wmem);
    set_u64(o, "tsq_limit", i.tsq_limit);
    set_u64(o, "last_data_sent_ns", i.last_data_sent_ns);
    set_u64(o, "last_data_recv_ns", i.last_data_recv_ns);
    set_u64(o, "last_recv_ns", i.last_recv_ns);
    set_str(o, "hold", brisk_hold_name(i.hold));
    /* Every reason, held or not, so a reader finds the same keys on every socket. */
    json_t *holds = json_object();
    for (int r = BRISK_HOLD_NONE + 1; holds && r < BRISK_HOLD_COUNT; r++) {
        json_t *h = json_object();
        if (!h)
            break;
        set_u64(h, "events", i.hold_events[r]);
        set_u64(h, "ns", i.hold_ns[r]);
        json_object_set_new(holds, brisk_hold_name(r), h);
    }
    json_object_set_new(o, "holds", holds);
    return o;
}

struct walk {
    json_t *arr;
    int failed;
};

static int add_socket(void *ctx, brisk_sock *s)
{
    struct walk *w = ctx;
    json_t *o = ctl_socket_json(s);
    if (!o || json_array_append_new(w->arr, o)) {
        w->failed = 1;
        return 1;
    }
    return 0;
}

static const char *const requests[] = {"info", "sockets", "counters"};

static json_t *answer(const struct ctl_source *src, int ok, uint64_t now)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "ok", json_boolean(ok));
    set_str(o, "program", src->program ? src->program : "");
    set_u64(o, "pid", src->pid);
    set_u64(o, "started_ns", src->started_ns);
    set_u64(o, "now_ns", now);
    return o;
}

static char *finish(json_t *o)
{
    if (!o)
        return NULL;
    char *body = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!body)
        return NULL;
    size_t n = strlen(body);
    char *line = realloc(body, n + 2);
    if (!line) {
        free(body);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = 0;
    return line;
}

char *ctl_error(const struct ctl_source *src, uint64_t now, const char *msg)
{
    json_t *o = answer(src, 0, now);
    if (o)
        set_str(o, "error", msg);
    return finish(o);
}

char *ctl_handle(const struct ctl_source *src, const char *req, size_t len, uint64_t now)
{
    /* Trim blanks (and a CR from a telnet-style client). */
    while (len && (req[0] == ' ' || req[0] == '\t'))
        req++, len--;
    while (len && (req[len - 1] == ' ' || req[len - 1] == '\t' || req[len - 1] == '\r'))
        len--;
    if (len == 0)
        return ctl_error(src, now, "empty request (info, sockets, counters)");
    for (size_t k = 0; k < len; k++)
        if (req[k] < 0x20 || req[k] > 0x7e)
            return ctl_error(src, now, "request is not printable ASCII");
    int which = -1;
    for (size_t k = 0; k < sizeof(requests) / sizeof(requests[0]); k++)
        if (strlen(requests[k]) == len && !memcmp(requests[k], req, len))
            which = (int)k;
    if (which < 0) {
        char msg[96];
        snprintf(msg, sizeof(msg), "unknown request '%.*s'%s (info, sockets, counters)",
                 (int)(len > 32 ? 32 : len), req, len > 32 ? "..." : "");
        return ctl_error(src, now, msg);
    }
    json_t *o = answer(src, 1, now);
    if (!o)
        return NULL;
    if (which == 0) {
        json_t *a = json_array();
        for (size_t k = 0; a && k < sizeof(requests) / sizeof(requests[0]); k++)
            json_array_append_new(a, json_string(requests[k]));
        json_object_set_new(o, "requests", a);
        set_u64(o, "sockets", brisk_stack_sockets(src->st));
    } else if (which == 1) {
        struct walk w = {.arr = json_array()};
        if (!w.arr) {
            json_decref(o);
            return NULL;
        }
        int rc = brisk_stack_foreach_socket(src->st, add_socket, &w);
        json_object_set_new(o, "sockets", w.arr);
        if (w.failed || rc < 0) {
            json_decref(o);
            return w.failed ? NULL : ctl_error(src, now, brisk_strerror(rc));
        }
    } else {
        struct brisk_counters c;
        brisk_stack_get_counters(src->st, &c);
        json_t *m = json_object();
        if (!m) {
            json_decref(o);
            return NULL;
        }
        for (size_t k = 0; k < brisk_counters_count(); k++)
            set_u64(m, brisk_counter_name(k), brisk_counter_value(&c, k));
        if (src->extra)
            src->extra(src->extra_ctx, m);
        json_object_set_new(o, "counters", m);
    }
    return finish(o);
}
