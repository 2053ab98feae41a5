/*
 * main.c — brisk-pkt: run packetdrill scripts against brisk in virtual time, or against Linux (--kernel).
 *
 *   brisk-pkt [options] FILE.pkt        one script: exit 0 pass, 1 fail, 2 malformed, 3 unsupported
 *   brisk-pkt [options] DIR|FILE...     every *.pkt under each directory (sorted), a pass/fail table;
 *                                       exit 0 when none failed or was malformed (with --strict: and none
 *                                       was unsupported), else 1
 *
 * Options: --profile P (default linux-6.x), --set name=value (brisk settings, after the script's own
 * sysctls), packetdrill's --tolerance_usecs=N / --tolerance_percent=N / --tcp_ts_tick_usecs=N and the
 * address options, --seed N, --json, --verbose, --strict, --help. --kernel runs the same scripts against
 * this machine's kernel in real time (kernel.c; exit 77 when it cannot: not root, no /dev/net/tun).
 * docs/conformance.md is the manual.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/json.h"
#include "pkt/pkt.h"

/* Scripts are small; a larger file is not a script. */
#define SCRIPT_MAX (4u << 20)

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: brisk-pkt [options] FILE.pkt | DIR ...\n"
        "Runs packetdrill scripts against one brisk stack on a virtual clock.\n"
        "  --profile P            compatibility profile (default linux-6.x; brisk-lab profiles lists them)\n"
        "  --set name=value       a brisk setting, applied after the script's sysctls (repeatable)\n"
        "  --tolerance_usecs=N    timing tolerance (default 4000, as packetdrill)\n"
        "  --tolerance_percent=N  tolerance as a share of the time since the previous event, when larger\n"
        "  --tcp_ts_tick_usecs=N  check outbound TSvals against the script's at this tick (default: not)\n"
        "  --seed N               the stack's seed (ISNs, timestamps offsets; default 1)\n"
        "  --json                 results as JSON on stdout\n"
        "  --verbose              every packet and call as it runs\n"
        "  --strict               with several scripts, an unsupported one fails the run\n"
        "  --kernel               run against this machine's Linux instead (real time, root, a TAP\n"
        "                         device in a network namespace of its own; exit 77 if it cannot)\n"
        "One script: exit 0 pass, 1 fail, 2 malformed script, 3 unsupported feature.\n"
        "Several (or a directory): a table; exit 1 if any failed or was malformed.\n");
}

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(SCRIPT_MAX + 1);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    size_t n = fread(buf, 1, SCRIPT_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > SCRIPT_MAX) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path, bad ? "read error" : "larger than 4 MB: not a script");
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        snprintf(err, errlen, "%s: contains a NUL byte: not a script", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static void run_one(const char *path, const struct pkt_config *cfg, struct pkt_result *res)
{
    memset(res, 0, sizeof(*res));
    char *src = read_file(path, res->msg, sizeof(res->msg));
    if (!src) {
        res->status = PKT_BAD_SCRIPT;
        return;
    }
    struct pkt_script s;
    int rc = pkt_parse(path, src, &s, res->msg, sizeof(res->msg));
    free(src);
    if (rc != PKT_PASS) {
        res->status = rc;
        pkt_script_free(&s);
        return;
    }
    pkt_run(&s, cfg, res);
    pkt_script_free(&s);
}

struct list {
    char **v;
    size_t n, cap;
};

static int list_add(struct list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.pkt file under dir, depth first. */
static int collect(const char *dir, struct list *out, int depth)
{
    if (depth > 16)
        return 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "brisk-pkt: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct list names = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (list_add(&names, e->d_name) < 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof(char *), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        size_t len = strlen(dir) + strlen(names.v[i]) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, len, "%s/%s", dir, names.v[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc = collect(p, out, depth + 1);
        else if (strlen(names.v[i]) > 4 && !strcmp(names.v[i] + strlen(names.v[i]) - 4, ".pkt"))
            rc = list_add(out, p);
        free(p);
    }
    for (size_t i = 0; i < names.n; i++)
        free(names.v[i]);
    free(names.v);
    return rc;
}

static const char *status_name(int s)
{
    switch (s) {
    case PKT_PASS:
        return "pass";
    case PKT_FAIL:
        return "FAIL";
    case PKT_BAD_SCRIPT:
        return "malformed";
    default:
        return "unsupported";
    }
}

int main(int argc, char **argv)
{
    int rc = 0;
    struct pkt_result *res = NULL;
    struct pkt_config cfg;
    pkt_config_default(&cfg);
    struct list sets = {0}, opts = {0}, paths = {0};
    int json = 0, strict = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            {
                rc = 0;
                goto out;
            }
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            cfg.verbose = 1;
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (!strcmp(a, "--kernel")) {
            cfg.kernel = 1;
        } else if (!strcmp(a, "--profile") || !strncmp(a, "--profile=", 10)) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                fprintf(stderr, "brisk-pkt: --profile needs a name\n");
                {
                    rc = 2;
                    goto out;
                }
            }
            struct brisk_settings probe;
            brisk_settings_default(&probe);
            if (brisk_settings_apply_profile(&probe, v) != BRISK_OK) {
                fprintf(stderr, "brisk-pkt: unknown profile \"%s\" (brisk-lab profiles lists them)\n", v);
                {
                    rc = 2;
                    goto out;
                }
            }
            cfg.profile = v;
        } else if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            struct brisk_settings probe;
            brisk_settings_default(&probe);
            int set_rc = v ? brisk_settings_set(&probe, v) : BRISK_ERR_INVAL;
            if (set_rc != BRISK_OK) {
                fprintf(stderr, "brisk-pkt: --set %s: %s\n", v ? v : "(missing)", brisk_strerror(set_rc));
                {
                    rc = 2;
                    goto out;
                }
            }
            if (list_add(&sets, v) < 0) {
                rc = 2;
                goto out;
            }
        } else if (!strcmp(a, "--seed")) {
            char *end;
            unsigned long long v = i + 1 < argc ? strtoull(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end || end == argv[i + 1]) {
                fprintf(stderr, "brisk-pkt: --seed needs a number\n");
                {
                    rc = 2;
                    goto out;
                }
            }
            cfg.seed = v;
            i++;
        } else if (!strncmp(a, "--", 2) && strchr(a, '=')) {
            if (list_add(&opts, a + 2) < 0) {
                rc = 2;
                goto out;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "brisk-pkt: unknown option %s (--help lists them)\n", a);
            {
                rc = 2;
                goto out;
            }
        } else {
            struct stat st;
            if (stat(a, &st) != 0) {
                fprintf(stderr, "brisk-pkt: %s: %s\n", a, strerror(errno));
                {
                    rc = 2;
                    goto out;
                }
            }
            if (S_ISDIR(st.st_mode)) {
                if (collect(a, &paths, 0) < 0) {
                    rc = 2;
                    goto out;
                }
                if (paths.n == 0) {
                    fprintf(stderr, "brisk-pkt: %s: no *.pkt scripts\n", a);
                    {
                        rc = 2;
                        goto out;
                    }
                }
            } else if (list_add(&paths, a) < 0) {
                {
                    rc = 2;
                    goto out;
                }
            }
        }
    }
    if (paths.n == 0) {
        usage(stderr);
        {
            rc = 2;
            goto out;
        }
    }
    char kname[128] = "";
    if (cfg.kernel) {
        if (sets.n) {
            fprintf(stderr, "brisk-pkt: --set changes brisk settings, which the kernel does not have "
                            "(write the sysctl in the script)\n");
            {
                rc = 2;
                goto out;
            }
        }
        char why[256];
        if (kernel_probe(why, sizeof(why)) < 0) {
            fprintf(stderr, "brisk-pkt --kernel: cannot run here: %s\n", why);
            {
                rc = 77;
                goto out;
            }
        }
        struct utsname u;
        snprintf(kname, sizeof(kname), "kernel %s", uname(&u) == 0 ? u.release : "?");
    }
    /* What ran the scripts, for the summary: the profile of a brisk stack, or the kernel. */
    const char *what = cfg.kernel ? kname : cfg.profile;
    cfg.sets = (const char *const *)sets.v;
    cfg.nsets = sets.n;
    cfg.opts = (const char *const *)opts.v;
    cfg.nopts = opts.n;
    int single = paths.n == 1;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (argv[i][0] != '-' && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            single = 0;
    }
    res = calloc(paths.n, sizeof(*res));
    if (!res) {
        rc = 2;
        goto out;
    }
    size_t count[4] = {0};
    int progress = !single && paths.n > 20 && isatty(2); /* long runs show progress on a terminal */
    for (size_t i = 0; i < paths.n; i++) {
        if (progress)
            fprintf(stderr, "\r[%zu/%zu] %s\033[K", i + 1, paths.n, paths.v[i]);
        run_one(paths.v[i], &cfg, &res[i]);
        count[res[i].status]++;
    }
    if (progress)
        fprintf(stderr, "\r\033[K");
    if (single) {
        rc = res[0].status;
        if (json) {
            struct json j;
            json_init(&j, stdout);
            json_object_begin(&j, NULL);
            json_str(&j, "script", paths.v[0]);
            json_str(&j, "profile", cfg.profile);
            if (cfg.kernel)
                json_str(&j, "backend", kname);
            json_str(&j, "status", status_name(rc));
            if (rc != PKT_PASS) {
                json_i64(&j, "line", res[0].line);
                json_str(&j, "message", res[0].msg);
            }
            json_double(&j, "virtual_seconds", (double)res[0].virtual_ns / 1e9);
            json_object_end(&j);
            json_finish(&j);
        } else if (rc != PKT_PASS) {
            fprintf(stderr, "%s\n", res[0].msg);
        }
    } else {
        rc = (count[PKT_FAIL] || count[PKT_BAD_SCRIPT] || (strict && count[PKT_UNSUPPORTED])) ? 1 : 0;
        if (json) {
            struct json j;
            json_init(&j, stdout);
            json_object_begin(&j, NULL);
            json_str(&j, "profile", cfg.profile);
            if (cfg.kernel)
                json_str(&j, "backend", kname);
            json_array_begin(&j, "scripts");
            for (size_t i = 0; i < paths.n; i++) {
                json_object_begin(&j, NULL);
                json_str(&j, "script", paths.v[i]);
                json_str(&j, "status", status_name(res[i].status));
                if (res[i].status != PKT_PASS) {
                    json_i64(&j, "line", res[i].line);
                    json_str(&j, "message", res[i].msg);
                }
                json_double(&j, "virtual_seconds", (double)res[i].virtual_ns / 1e9);
                json_object_end(&j);
            }
            json_array_end(&j);
            json_u64(&j, "passed", count[PKT_PASS]);
            json_u64(&j, "failed", count[PKT_FAIL]);
            json_u64(&j, "malformed", count[PKT_BAD_SCRIPT]);
            json_u64(&j, "unsupported", count[PKT_UNSUPPORTED]);
            json_object_end(&j);
            json_finish(&j);
        } else {
            size_t w = 6;
            for (size_t i = 0; i < paths.n; i++)
                if (strlen(paths.v[i]) > w)
                    w = strlen(paths.v[i]);
            printf("%-*s  %-11s  %9s\n", (int)w, "script", "result", cfg.kernel ? "seconds" : "virtual s");
            for (size_t i = 0; i < paths.n; i++)
                printf("%-*s  %-11s  %9.3f\n", (int)w, paths.v[i], status_name(res[i].status),
                       (double)res[i].virtual_ns / 1e9);
            for (size_t i = 0; i < paths.n; i++)
                if (res[i].status != PKT_PASS)
                    printf("\n%s\n", res[i].msg);
            printf("\n%s%s: %zu passed, %zu failed, %zu malformed, %zu unsupported (of %zu)\n",
                   cfg.kernel ? "" : "profile ", what, count[PKT_PASS], count[PKT_FAIL],
                   count[PKT_BAD_SCRIPT], count[PKT_UNSUPPORTED], paths.n);
        }
    }
out:
    for (size_t i = 0; i < paths.n; i++)
        free(paths.v[i]);
    free(paths.v);
    for (size_t i = 0; i < sets.n; i++)
        free(sets.v[i]);
    free(sets.v);
    for (size_t i = 0; i < opts.n; i++)
        free(opts.v[i]);
    free(opts.v);
    free(res);
    return rc;
}
