/*
 * nstat.c — brisk-nstat: the counters of a running brisk process, like nstat (docs/introspection.md).
 *
 *   brisk-nstat [--ctl PATH] [-a] [-z] [-s] [-n] [--json] [PATTERN ...]
 *
 * Like nstat, it prints how much each counter grew since the previous call and remembers the values in a
 * history file: $BRISK_NSTAT_HISTORY, else $XDG_RUNTIME_DIR/brisk-nstat.<hash>, else
 * /tmp/brisk-nstat.<uid>.<hash>, where <hash> is a hash of the control socket's path, so that two processes
 * keep two histories. The history records the process (pid and start time, from the answer): when it belongs
 * to another one (the server was restarted) it is ignored, as are counters that went backwards. -a prints
 * absolute values; -z zeros too (by default only non-zero values are printed); -s does not update the
 * history, -n only updates it; PATTERNs (shell globs, fnmatch) select counters by name. Lines are
 * "name value rate", rate being per second since the history was written (0.0 with -a); --json prints
 * {"brisk":{name: value, ...}} as nstat --json prints {"kernel":{...}}.
 *
 * The history file is input like any other: it is opened without following symbolic links, used only when
 * it is a regular file of ours, and read line by line with every field checked; anything wrong in it makes
 * it ignored (with a message) rather than trusted. It is replaced atomically (a temporary file in the same
 * directory, then rename), mode 0600.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "introspect/ctl.h"

#define MAX_COUNTERS 1024
#define NAME_MAX_LEN 64

struct hist {
    int valid;
    uint64_t pid, started_ns, at_ns;
    size_t n;
    char names[MAX_COUNTERS][NAME_MAX_LEN];
    uint64_t vals[MAX_COUNTERS];
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: brisk-nstat [--ctl PATH] [-a|--ignore] [-z|--zeros] [-s|--no-update] [-n|--no-output]\n"
            "                   [--json] [PATTERN ...]\n"
            "  prints the counters of the brisk process on control socket PATH (default $BRISK_CTL): their\n"
            "  growth since the last call (history in $BRISK_NSTAT_HISTORY or a per-user file), or with -a\n"
            "  their values\n");
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= NAME_MAX_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return 0;
    return 1;
}

static int hist_path(char *out, size_t n, const char *ctl)
{
    const char *e = getenv("BRISK_NSTAT_HISTORY");
    if (e && e[0])
        return snprintf(out, n, "%s", e) < (int)n ? 0 : -1;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = ctl; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int w = xdg && xdg[0] ? snprintf(out, n, "%s/brisk-nstat.%016" PRIx64, xdg, h)
                          : snprintf(out, n, "/tmp/brisk-nstat.%u.%016" PRIx64, (unsigned)getuid(), h);
    return w > 0 && w < (int)n ? 0 : -1;
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

/* Reads the history; h->valid stays 0 when there is none or it cannot be trusted. */
static void hist_read(struct hist *h, const char *path)
{
    memset(h, 0, sizeof(*h));
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return; /* first call */
    struct stat sb;
    FILE *f = NULL;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != getuid() || !(f = fdopen(fd, "r"))) {
        fprintf(stderr, "brisk-nstat: ignoring history %s: not a regular file of ours\n", path);
        close(fd);
        return;
    }
    char line[256];
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof(line), f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            bad = 1;
            break;
        }
        line[len - 1] = 0;
        char *sp = NULL;
        char *a = strtok_r(line, " ", &sp), *b = strtok_r(NULL, " ", &sp), *c = strtok_r(NULL, " ", &sp);
        char *d = strtok_r(NULL, " ", &sp), *extra = strtok_r(NULL, " ", &sp);
        if (lineno == 1) {
            if (!a || strcmp(a, "#brisk-nstat") || !b || !c || !d || extra || parse_u64(b, &h->pid) ||
                parse_u64(c, &h->started_ns) || parse_u64(d, &h->at_ns))
                bad = 1;
            continue;
        }
        uint64_t v;
        if (!a || !b || c || !name_ok(a) || parse_u64(b, &v) || h->n == MAX_COUNTERS) {
            bad = 1;
            break;
        }
        snprintf(h->names[h->n], NAME_MAX_LEN, "%s", a);
        h->vals[h->n++] = v;
    }
    fclose(f);
    if (bad || lineno == 0) {
        fprintf(stderr, "brisk-nstat: ignoring history %s: malformed at line %d\n", path, lineno);
        h->n = 0;
        return;
    }
    h->valid = 1;
}

static int hist_find(const struct hist *h, const char *name, uint64_t *v)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->names[i], name)) {
            *v = h->vals[i];
            return 1;
        }
    return 0;
}

static int hist_write(const char *path, json_t *ans, json_t *counters)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
        return -1;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    fprintf(f, "#brisk-nstat %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
            (uint64_t)json_integer_value(json_object_get(ans, "pid")),
            (uint64_t)json_integer_value(json_object_get(ans, "started_ns")),
            (uint64_t)json_integer_value(json_object_get(ans, "now_ns")));
    const char *name;
    json_t *v;
    json_object_foreach(counters, name, v)
    {
        if (name_ok(name) && json_is_integer(v) && json_integer_value(v) >= 0)
            fprintf(f, "%s %" PRIu64 "\n", name, (uint64_t)json_integer_value(v));
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *opt_ctl = NULL;
    int absolute = 0, zeros = 0, no_update = 0, no_output = 0, json = 0;
    const char *pats[64];
    int npats = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--ctl")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "brisk-nstat: option --ctl needs a path\n");
                return 2;
            }
            opt_ctl = argv[++i];
        } else if (!strcmp(a, "-a") || !strcmp(a, "--ignore"))
            absolute = 1;
        else if (!strcmp(a, "-z") || !strcmp(a, "--zeros"))
            zeros = 1;
        else if (!strcmp(a, "-s") || !strcmp(a, "--no-update"))
            no_update = 1;
        else if (!strcmp(a, "-n") || !strcmp(a, "--no-output"))
            no_output = 1;
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "brisk-nstat: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else {
            if (npats == 64 || strlen(a) > 256) {
                fprintf(stderr, "brisk-nstat: too many or too long patterns (at most 64 of 256 bytes)\n");
                return 2;
            }
            pats[npats++] = a;
        }
    }
    if (no_update && no_output) {
        fprintf(stderr, "brisk-nstat: -s and -n together would do nothing\n");
        return 2;
    }
    const char *path = ctl_path(opt_ctl);
    if (!path) {
        fprintf(stderr, "brisk-nstat: no control socket: give --ctl PATH or set BRISK_CTL\n");
        return 2;
    }
    char hpath[4096];
    if (hist_path(hpath, sizeof(hpath), path) < 0) {
        fprintf(stderr, "brisk-nstat: history file name too long\n");
        return 2;
    }
    char why[256];
    json_t *ans = ctl_request(path, "counters", why, sizeof(why));
    if (!ans) {
        fprintf(stderr, "brisk-nstat: %s\n", why);
        return 1;
    }
    json_t *counters = json_object_get(ans, "counters");
    if (!json_is_object(counters)) {
        fprintf(stderr, "brisk-nstat: the answer from %s has no counters\n", path);
        json_decref(ans);
        return 1;
    }
    static struct hist h;
    hist_read(&h, hpath);
    uint64_t pid = (uint64_t)json_integer_value(json_object_get(ans, "pid"));
    uint64_t started = (uint64_t)json_integer_value(json_object_get(ans, "started_ns"));
    uint64_t now = (uint64_t)json_integer_value(json_object_get(ans, "now_ns"));
    if (h.valid && (h.pid != pid || h.started_ns != started || h.at_ns > now))
        h.valid = 0; /* another process's counters */
    double secs = h.valid && now > h.at_ns ? (double)(now - h.at_ns) / 1e9 : 0;
    if (!no_output) {
        json_t *out = json ? json_object() : NULL;
        if (!json) {
            const char *prog = json_string_value(json_object_get(ans, "program"));
            printf("#brisk %s pid %" PRIu64 "\n", prog ? prog : "?", pid);
        }
        const char *name;
        json_t *v;
        json_object_foreach(counters, name, v)
        {
            if (!json_is_integer(v) || json_integer_value(v) < 0 || !name_ok(name))
                continue;
            int match = npats == 0;
            for (int k = 0; k < npats && !match; k++)
                match = fnmatch(pats[k], name, 0) == 0;
            if (!match)
                continue;
            uint64_t cur = (uint64_t)json_integer_value(v), old = 0, shown = cur;
            if (!absolute && h.valid && hist_find(&h, name, &old) && old <= cur)
                shown = cur - old;
            if (!shown && !zeros)
                continue;
            if (json)
                json_object_set_new(out, name, json_integer((json_int_t)shown));
            else
                printf("%-32s %-19" PRIu64 " %.1f\n", name, shown,
                       !absolute && secs > 0 ? (double)shown / secs : 0.0);
        }
        if (json) {
            json_t *doc = json_pack("{s:o}", "brisk", out);
            json_dumpf(doc, stdout, JSON_PRESERVE_ORDER);
            printf("\n");
            json_decref(doc);
        }
    }
    int rc = 0;
    if (!no_update && hist_write(hpath, ans, counters) < 0) {
        fprintf(stderr, "brisk-nstat: cannot write history %s: %s\n", hpath, strerror(errno));
        rc = 1;
    }
    json_decref(ans);
    return rc;
}
