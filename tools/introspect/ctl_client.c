/*
 * ctl_client.c — the tools' side of the control socket (ctl.h): one connection per request, the answer
 * read up to its newline within CTL_RESP_MAX bytes and 5 seconds, then parsed. The answer comes from
 * another process and is checked as input: a line that is not a JSON object with "ok" is an error, never a
 * crash.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "introspect/ctl.h"

#define CTL_TIMEOUT_MS 5000

const char *ctl_path(const char *opt)
{
    if (opt)
        return opt;
    const char *e = getenv("BRISK_CTL");
    return e && e[0] ? e : NULL;
}

static json_t *fail(char *why, size_t n, const char *fmt, const char *a, const char *b)
{
    snprintf(why, n, fmt, a, b);
    return NULL;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits for fd to be ready for `events` until `deadline` (mono_ms). 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = mono_ms();
        if (now >= deadline)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, (int)(deadline - now));
        if (rc < 0 && errno == EINTR)
            continue;
        return rc < 0 ? -1 : rc > 0;
    }
}

json_t *ctl_request(const char *path, const char *req, char *why, size_t why_len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path))
        return fail(why, why_len, "control socket path '%s' is too long%s", path, "");
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(why, why_len, "socket: %s%s", strerror(errno), "");
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int e = errno;
        close(fd);
        if (e == ENOENT)
            return fail(why, why_len, "no control socket at %s (is brisk-perf running with --ctl %s?)", path,
                        path);
        struct stat sb;
        if (e == ECONNREFUSED && lstat(path, &sb) == 0 && !S_ISSOCK(sb.st_mode))
            return fail(why, why_len, "%s is not a socket%s", path, "");
        if (e == ECONNREFUSED)
            return fail(why, why_len, "nothing answers on %s (the process that made it has exited)%s", path,
                        "");
        return fail(why, why_len, "cannot connect to %s: %s", path, strerror(e));
    }
    uint64_t deadline = mono_ms() + CTL_TIMEOUT_MS;
    char line[CTL_REQ_MAX + 1];
    int n = snprintf(line, sizeof(line), "%s\n", req);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        close(fd);
        return fail(why, why_len, "request '%s' too long%s", req, "");
    }
    /* A server that refuses the connection (busy) answers and closes at once, maybe before the request is
     * written: then the write fails (EPIPE, ECONNRESET) but the answer is there to read. */
    int write_err = 0;
    for (int off = 0; off < n;) {
        ssize_t w = send(fd, line + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE || errno == ECONNRESET) {
                write_err = errno;
                break;
            }
            close(fd);
            return fail(why, why_len, "cannot write to %s: %s", path, strerror(errno));
        }
        off += (int)w;
    }
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap);
    char *nl = NULL;
    while (buf && !nl) {
        int r = wait_fd(fd, POLLIN, deadline);
        if (r <= 0) {
            free(buf);
            close(fd);
            return fail(why, why_len, r == 0 ? "%s did not answer within 5 s%s" : "cannot read from %s%s",
                        path, "");
        }
        if (len == cap) {
            if (cap >= CTL_RESP_MAX) {
                free(buf);
                close(fd);
                return fail(why, why_len, "the answer from %s is longer than 64 MiB%s", path, "");
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = recv(fd, buf + len, cap - len, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            free(buf);
            close(fd);
            if (write_err)
                return fail(why, why_len, "cannot write to %s: %s", path, strerror(write_err));
            return fail(why, why_len, "%s closed the connection before answering%s", path, "");
        }
        nl = memchr(buf + len, '\n', (size_t)got);
        len += (size_t)got;
    }
    close(fd);
    if (!buf)
        return fail(why, why_len, "out of memory%s%s", "", "");
    json_error_t je;
    json_t *o = json_loadb(buf, (size_t)(nl - buf), 0, &je);
    free(buf);
    if (!o || !json_is_object(o) || !json_is_boolean(json_object_get(o, "ok"))) {
        json_decref(o);
        return fail(why, why_len, "the answer from %s is not a control-protocol object%s", path, "");
    }
    if (!json_is_true(json_object_get(o, "ok"))) {
        const char *e = json_string_value(json_object_get(o, "error"));
        snprintf(why, why_len, "%s answered: %s", path, e ? e : "error");
        json_decref(o);
        return NULL;
    }
    return o;
}
