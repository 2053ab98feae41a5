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
#include "introspect/ssline.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: brisk-ss [--ctl PATH] [-i|--info] [-l|--listening] [-a|--all] [--json] [-t] [-n]\n"
               "  prints the TCP sockets of the brisk process listening on the control socket PATH\n"
               "  (default $BRISK_CTL), like ss -tin\n");
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
    int64_t now = ss_num(ans, "now_ns");
    json_t *shown = json_array();
    size_t k;
    json_t *s;
    json_array_foreach(socks, k, s)
    {
        if (!json_is_object(s))
            continue;
        int is_listen = !strcmp(ss_str(s, "state"), "LISTEN");
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
        ss_print_header(stdout);
        json_array_foreach(shown, k, s)
        {
            ss_print_socket(stdout, s);
            if (info && strcmp(ss_str(s, "state"), "LISTEN"))
                ss_print_info(stdout, s, now);
        }
    }
    json_decref(shown);
    json_decref(ans);
    return 0;
}
