/*
 * iperf_proto.c — the iperf3 control protocol's pieces, as brisk-perf understands them from iperf3's
 * documentation and behaviour (version 3.12, which Debian ships).
 *
 * An iperf3 test runs over one TCP control connection plus one TCP connection per stream, all to the server's
 * port (5201). The client opens the control connection and sends a 37-byte cookie; from then on the server
 * drives the test with state bytes and the two sides trade JSON objects:
 *
 *   server                          client
 *   PARAM_EXCHANGE (9)      ->
 *                           <-      {"tcp":true,"time":10,"parallel":1,"len":131072,...}   (4-byte length +
 * JSON) CREATE_STREAMS (10)     ->
 *                           <-      one connection per stream, each opened with the same cookie
 *   TEST_START (1), TEST_RUNNING (2) ->   data flows (client -> server, or server -> client with -R)
 *                           <-      TEST_END (4)   when the client's time or byte budget is spent
 *   EXCHANGE_RESULTS (13)   ->
 *                           <-      client results JSON
 *   server results JSON     ->
 *   DISPLAY_RESULTS (14)    ->
 *                           <-      IPERF_DONE (16), then the client closes
 *
 * With -u the parameters say "udp" instead of "tcp" and add the pacing ("bandwidth", bit/s per stream) and
 * "udp_counters_64bit"; each stream is then a UDP socket opened by a 4-byte datagram instead of a connection
 * and its cookie (udp.c), and the results carry each stream's jitter, lost datagrams ("errors") and packet
 * count.
 *
 * A second client arriving while a test runs gets ACCESS_DENIED (-1). SERVER_ERROR (-2) is followed by two
 * 32-bit big-endian error numbers. Parameter flags (reverse, nodelay, ...) mean "set" by their presence: the
 * server looks them up, not at their value, so they are only sent when true.
 *
 * Everything that comes off the control connection is hostile input: the framing bounds JSON messages to
 * IPERF_JSON_MAX, and the parsers check every type and range before using a value.
 */
#include "perf/iperf_proto.h"
#include "perf/udp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *iperf_state_name(int state)
{
    switch (state) {
    case IPERF_TEST_START:
        return "TEST_START";
    case IPERF_TEST_RUNNING:
        return "TEST_RUNNING";
    case IPERF_RESULT_REQUEST:
        return "RESULT_REQUEST";
    case IPERF_TEST_END:
        return "TEST_END";
    case IPERF_STREAM_BEGIN:
        return "STREAM_BEGIN";
    case IPERF_STREAM_RUNNING:
        return "STREAM_RUNNING";
    case IPERF_STREAM_END:
        return "STREAM_END";
    case IPERF_ALL_STREAMS_END:
        return "ALL_STREAMS_END";
    case IPERF_PARAM_EXCHANGE:
        return "PARAM_EXCHANGE";
    case IPERF_CREATE_STREAMS:
        return "CREATE_STREAMS";
    case IPERF_SERVER_TERMINATE:
        return "SERVER_TERMINATE";
    case IPERF_CLIENT_TERMINATE:
        return "CLIENT_TERMINATE";
    case IPERF_EXCHANGE_RESULTS:
        return "EXCHANGE_RESULTS";
    case IPERF_DISPLAY_RESULTS:
        return "DISPLAY_RESULTS";
    case IPERF_IPERF_START:
        return "IPERF_START";
    case IPERF_IPERF_DONE:
        return "IPERF_DONE";
    case IPERF_ACCESS_DENIED:
        return "ACCESS_DENIED";
    case IPERF_SERVER_ERROR:
        return "SERVER_ERROR";
    default:
        return "unknown";
    }
}

static const char cookie_alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

/* splitmix64: the cookie needs to be unlikely to collide between tests, not secret. */
static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void iperf_cookie_make(char cookie[IPERF_COOKIE_SIZE], uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < IPERF_COOKIE_SIZE - 1; i++)
        cookie[i] = cookie_alphabet[mix(&x) & 31];
    cookie[IPERF_COOKIE_SIZE - 1] = '\0';
}

int iperf_cookie_valid(const uint8_t c[IPERF_COOKIE_SIZE])
{
    if (c[IPERF_COOKIE_SIZE - 1] != '\0')
        return 0;
    for (int i = 0; i < IPERF_COOKIE_SIZE - 1; i++)
        if (!c[i] || !memchr(cookie_alphabet, c[i], sizeof(cookie_alphabet) - 1))
            return 0;
    return 1;
}

int iperf_stream_id(uint32_t index)
{
    return index == 0 ? 1 : (int)index + 2;
}

/* ---- control connection framing ---- */

void iperf_ctrl_init(struct iperf_ctrl *c, brisk_sock *s)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
}

void iperf_ctrl_free(struct iperf_ctrl *c)
{
    free(c->in);
    free(c->out);
    memset(c, 0, sizeof(*c));
}

/* Makes room for `more` bytes after `len` in a buffer bounded by `max`. */
static int reserve(uint8_t **buf, size_t *cap, size_t len, size_t more, size_t max)
{
    if (len + more > max)
        return BRISK_ERR_MSGSIZE;
    if (len + more <= *cap)
        return BRISK_OK;
    size_t n = *cap ? *cap : 512;
    while (n < len + more)
        n *= 2;
    if (n > max)
        n = max;
    uint8_t *p = realloc(*buf, n);
    if (!p)
        return BRISK_ERR_NOMEM;
    *buf = p;
    *cap = n;
    return BRISK_OK;
}

/* Input holds at most one maximal JSON message with its length and a few state bytes. */
#define CTRL_IN_MAX (IPERF_JSON_MAX + 64)

int64_t iperf_ctrl_read(struct iperf_ctrl *c, uint64_t now)
{
    int64_t total = 0;
    while (c->s && !c->eof && !c->error) {
        int rc = reserve(&c->in, &c->in_cap, c->in_len, 1, CTRL_IN_MAX);
        if (rc < 0) {
            c->error = rc;
            return rc;
        }
        int64_t n = brisk_recv(c->s, c->in + c->in_len, c->in_cap - c->in_len, now);
        if (n > 0) {
            c->in_len += (size_t)n;
            total += n;
        } else if (n == 0) {
            c->eof = 1;
        } else if (n == BRISK_ERR_AGAIN) {
            break;
        } else {
            c->error = (int)n;
            return n;
        }
    }
    return total;
}

static void consume(struct iperf_ctrl *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

int iperf_ctrl_take_state(struct iperf_ctrl *c, int *state)
{
    if (c->in_len < 1)
        return 0;
    *state = (int)(signed char)c->in[0];
    consume(c, 1);
    return 1;
}

int iperf_ctrl_take_json(struct iperf_ctrl *c, json_t **out)
{
    if (c->in_len < 4)
        return 0;
    uint32_t len = (uint32_t)c->in[0] << 24 | (uint32_t)c->in[1] << 16 | (uint32_t)c->in[2] << 8 | c->in[3];
    if (len > IPERF_JSON_MAX)
        return BRISK_ERR_MSGSIZE;
    if (c->in_len < 4 + (size_t)len)
        return 0;
    json_error_t jerr;
    /* Integers as reals: iperf3 3.12 writes -1 as 18446744073709551615 ("sender_has_retransmits"), which
     * jansson would reject as an integer; the readers below take whole reals and bound every value. */
    json_t *j =
        json_loadb((const char *)c->in + 4, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
    consume(c, 4 + (size_t)len);
    if (!j)
        return BRISK_ERR_INVAL;
    if (!json_is_object(j)) {
        json_decref(j);
        return BRISK_ERR_INVAL;
    }
    *out = j;
    return 1;
}

int iperf_ctrl_flush(struct iperf_ctrl *c, uint64_t now)
{
    while (c->out_len && c->s) {
        int64_t n = brisk_send(c->s, c->out, c->out_len, 0, now);
        if (n == BRISK_ERR_AGAIN)
            return BRISK_OK;
        if (n < 0) {
            c->error = (int)n;
            return (int)n;
        }
        memmove(c->out, c->out + n, c->out_len - (size_t)n);
        c->out_len -= (size_t)n;
    }
    return BRISK_OK;
}

int iperf_ctrl_put_raw(struct iperf_ctrl *c, const void *p, size_t n, uint64_t now)
{
    int rc = reserve(&c->out, &c->out_cap, c->out_len, n, 4 + (size_t)IPERF_JSON_MAX + 64);
    if (rc < 0)
        return rc;
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
    return iperf_ctrl_flush(c, now);
}

int iperf_ctrl_put_state(struct iperf_ctrl *c, int state, uint64_t now)
{
    uint8_t b = (uint8_t)(signed char)state;
    return iperf_ctrl_put_raw(c, &b, 1, now);
}

int iperf_ctrl_put_json(struct iperf_ctrl *c, const json_t *j, uint64_t now)
{
    char *text = json_dumps(j, JSON_COMPACT);
    if (!text)
        return BRISK_ERR_NOMEM;
    size_t len = strlen(text);
    if (len > IPERF_JSON_MAX) {
        free(text);
        return BRISK_ERR_MSGSIZE;
    }
    /* Length and text in one send: iperf3 reads the text right after the length and gives up when it is not
     * there yet, so the two must not be split by Nagle into segments an RTT apart. */
    char *msg = malloc(4 + len);
    if (!msg) {
        free(text);
        return BRISK_ERR_NOMEM;
    }
    msg[0] = (char)(len >> 24);
    msg[1] = (char)(len >> 16);
    msg[2] = (char)(len >> 8);
    msg[3] = (char)len;
    memcpy(msg + 4, text, len);
    int rc = iperf_ctrl_put_raw(c, msg, 4 + len, now);
    free(msg);
    free(text);
    return rc;
}

/* ---- JSON objects ---- */

int iperf_json_u64(const json_t *v, uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            return 0;
        *out = (uint64_t)i;
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d < 0 || d >= 9.2e18 || d != floor(d))
            return 0;
        *out = (uint64_t)d;
        return 1;
    }
    return 0;
}

static int json_f64(const json_t *v, double *out)
{
    if (!json_is_number(v))
        return 0;
    double d = json_number_value(v);
    if (!isfinite(d))
        return 0;
    *out = d;
    return 1;
}

static int set_u64(json_t *o, const char *key, uint64_t v)
{
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

json_t *iperf_params_to_json(const struct perf_params *p)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
    int rc = 0;
    rc |= json_object_set_new(j, p->udp ? "udp" : "tcp", json_true());
    rc |= set_u64(j, "omit", 0);
    /* iperf3 counts whole seconds; brisk-perf's own end of test is exact, the server only uses this for
     * its watchdog, so round up. */
    rc |= set_u64(j, "time", (p->duration_ns + BRISK_NSEC_PER_SEC - 1) / BRISK_NSEC_PER_SEC);
    rc |= set_u64(j, "num", p->bytes);
    rc |= set_u64(j, "blockcount", 0);
    if (p->mss)
        rc |= set_u64(j, "MSS", p->mss);
    if (p->nodelay)
        rc |= json_object_set_new(j, "nodelay", json_true());
    rc |= set_u64(j, "parallel", p->parallel);
    if (p->reverse)
        rc |= json_object_set_new(j, "reverse", json_true());
    if (p->window)
        rc |= set_u64(j, "window", p->window);
    rc |= set_u64(j, "len", p->blksize);
    if (p->udp)
        rc |= set_u64(j, "bandwidth", p->rate);
    rc |= set_u64(j, "pacing_timer", 1000);
    if (p->udp && p->counters64)
        rc |= set_u64(j, "udp_counters_64bit", 1);
    rc |= json_object_set_new(j, "client_version", json_string("3.12"));
    if (rc) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* Reads an optional unsigned member bounded to [lo, hi]: 1 present and valid, 0 absent, -1 invalid. */
static int get_bounded(const json_t *j, const char *key, uint64_t lo, uint64_t hi, uint64_t *out)
{
    const json_t *v = json_object_get(j, key);
    if (!v)
        return 0;
    uint64_t x;
    if (!iperf_json_u64(v, &x) || x < lo || x > hi)
        return -1;
    *out = x;
    return 1;
}

int iperf_params_from_json(const json_t *j, struct perf_params *p, char *err, size_t errlen)
{
    if (!json_is_object(j)) {
        snprintf(err, errlen, "parameters are not a JSON object");
        return BRISK_ERR_INVAL;
    }
    if (json_object_get(j, "sctp")) {
        snprintf(err, errlen, "only TCP and UDP tests are supported");
        return BRISK_ERR_INVAL;
    }
    if (json_object_get(j, "bidirectional")) {
        snprintf(err, errlen, "bidirectional tests are not supported");
        return BRISK_ERR_INVAL;
    }
    static const struct {
        const char *key;
        uint64_t lo, hi;
    } lim[] = {
        {"time", 0, 86400},
        {"num", 0, UINT64_C(1) << 60},
        {"parallel", 1, PERF_MAX_STREAMS},
        {"len", 1, 1u << 24},
        {"MSS", 0, 65535},
        {"window", 0, 1u << 30},
        {"omit", 0, 0},
        {"blockcount", 0, 0},
        {"bandwidth", 0, UINT64_C(1) << 44}, /* 17 Tbit/s: beyond any link, far from overflow */
    };
    uint64_t v[sizeof(lim) / sizeof(lim[0])];
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        int r = get_bounded(j, lim[i].key, lim[i].lo, lim[i].hi, &v[i]);
        if (r < 0) {
            snprintf(err, errlen, "parameter \"%s\" missing a valid value in [%llu, %llu]", lim[i].key,
                     (unsigned long long)lim[i].lo, (unsigned long long)lim[i].hi);
            return BRISK_ERR_INVAL;
        }
        if (r == 0)
            v[i] = UINT64_MAX;
    }
    struct perf_params q;
    perf_params_default(&q);
    q.port = p->port;
    if (v[0] != UINT64_MAX)
        q.duration_ns = v[0] * BRISK_NSEC_PER_SEC;
    if (v[1] != UINT64_MAX)
        q.bytes = v[1];
    if (v[2] != UINT64_MAX)
        q.parallel = (uint32_t)v[2];
    if (v[3] != UINT64_MAX)
        q.blksize = (uint32_t)v[3];
    if (v[4] != UINT64_MAX)
        q.mss = (uint32_t)v[4];
    if (v[5] != UINT64_MAX)
        q.window = (uint32_t)v[5];
    q.reverse = json_object_get(j, "reverse") != NULL;
    q.nodelay = json_object_get(j, "nodelay") != NULL;
    q.udp = json_object_get(j, "udp") != NULL;
    if (q.udp) {
        q.rate = v[8] != UINT64_MAX ? v[8] : PERF_UDP_DEFAULT_RATE;
        q.counters64 = json_object_get(j, "udp_counters_64bit") != NULL;
        if (v[3] == UINT64_MAX) /* iperf3 always sends len; without it, what its client would pick */
            q.blksize = PERF_UDP_DEFAULT_LEN;
        if (q.blksize < PERF_UDP_MIN_LEN || q.blksize > PERF_UDP_MAX_LEN) {
            snprintf(err, errlen, "UDP datagram length %u outside [%u, %u]", q.blksize, PERF_UDP_MIN_LEN,
                     PERF_UDP_MAX_LEN);
            return BRISK_ERR_INVAL;
        }
    }
    *p = q;
    return BRISK_OK;
}

json_t *iperf_results_to_json(int sender_has_retransmits, const struct iperf_stream_result *r, size_t n)
{
    json_t *j = json_object();
    json_t *streams = json_array();
    if (!j || !streams) {
        json_decref(j);
        json_decref(streams);
        return NULL;
    }
    int rc = 0;
    rc |= json_object_set_new(j, "cpu_util_total", json_real(0));
    rc |= json_object_set_new(j, "cpu_util_user", json_real(0));
    rc |= json_object_set_new(j, "cpu_util_system", json_real(0));
    rc |= json_object_set_new(j, "sender_has_retransmits", json_integer(sender_has_retransmits));
    rc |= json_object_set_new(j, "streams", streams);
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *s = json_object();
        if (!s || json_array_append_new(streams, s)) {
            rc = 1;
            break;
        }
        rc |= json_object_set_new(s, "id", json_integer(r[i].id));
        rc |= set_u64(s, "bytes", r[i].bytes);
        rc |= json_object_set_new(s, "retransmits", json_integer(r[i].retransmits));
        rc |= json_object_set_new(s, "jitter", json_integer(0));
        rc |= json_object_set_new(s, "errors", json_integer(0));
        rc |= json_object_set_new(s, "packets", json_integer(0));
        rc |= json_object_set_new(s, "start_time", json_real(r[i].start_time));
        rc |= json_object_set_new(s, "end_time", json_real(r[i].end_time));
    }
    if (rc) {
        json_decref(j);
        return NULL;
    }
    return j;
}

int iperf_results_from_json(const json_t *j, struct iperf_stream_result *r, size_t cap, size_t *n, char *err,
                            size_t errlen)
{
    *n = 0;
    static const char *const required[] = {"cpu_util_total", "cpu_util_user", "cpu_util_system",
                                           "sender_has_retransmits"};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        if (!json_is_number(json_object_get(j, required[i]))) {
            snprintf(err, errlen, "results lack a number \"%s\"", required[i]);
            return BRISK_ERR_INVAL;
        }
    }
    const json_t *streams = json_object_get(j, "streams");
    if (!json_is_array(streams)) {
        snprintf(err, errlen, "results lack a \"streams\" array");
        return BRISK_ERR_INVAL;
    }
    size_t count = json_array_size(streams);
    if (count > cap) {
        snprintf(err, errlen, "results list %zu streams, at most %zu expected", count, cap);
        return BRISK_ERR_INVAL;
    }
    for (size_t i = 0; i < count; i++) {
        const json_t *s = json_array_get(streams, i);
        const json_t *rt = json_object_get(s, "retransmits");
        uint64_t id, bytes;
        if (!json_is_object(s) || !iperf_json_u64(json_object_get(s, "id"), &id) || id < 1 || id > 100000 ||
            !iperf_json_u64(json_object_get(s, "bytes"), &bytes) || !json_is_number(rt)) {
            snprintf(err, errlen, "results stream %zu lacks a valid id, bytes or retransmits", i);
            return BRISK_ERR_INVAL;
        }
        r[i].id = (int)id;
        r[i].bytes = bytes;
        double d = json_number_value(rt);
        r[i].retransmits = isfinite(d) && d >= -1 && d < 9e18 ? (int64_t)d : -1;
        r[i].start_time = r[i].end_time = 0;
        /* start_time / end_time came with iperf 3.2; older peers omit them. */
        double st, et;
        if (json_f64(json_object_get(s, "start_time"), &st) &&
            json_f64(json_object_get(s, "end_time"), &et)) {
            r[i].start_time = st;
            r[i].end_time = et;
        }
    }
    *n = count;
    return BRISK_OK;
}

int iperf_results_set_udp(json_t *j, const struct iperf_udp_result *u, size_t n)
{
    json_t *streams = json_object_get(j, "streams");
    int rc = 0;
    for (size_t i = 0; i < n && i < json_array_size(streams); i++) {
        json_t *s = json_array_get(streams, i);
        rc |= json_object_set_new(s, "jitter", json_real(u[i].jitter));
        rc |= set_u64(s, "errors", u[i].errors);
        rc |= set_u64(s, "packets", u[i].packets);
    }
    return rc ? BRISK_ERR_NOMEM : BRISK_OK;
}

void iperf_results_get_udp(const json_t *j, struct iperf_udp_result *u, size_t n)
{
    const json_t *streams = json_object_get(j, "streams");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(streams, i);
        double jit;
        memset(&u[i], 0, sizeof(u[i]));
        if (json_f64(json_object_get(s, "jitter"), &jit) && jit >= 0 && jit < 86400)
            u[i].jitter = jit;
        if (!iperf_json_u64(json_object_get(s, "errors"), &u[i].errors) || u[i].errors > (UINT64_C(1) << 60))
            u[i].errors = 0;
        if (!iperf_json_u64(json_object_get(s, "packets"), &u[i].packets) ||
            u[i].packets > (UINT64_C(1) << 60))
            u[i].packets = 0;
    }
}

int iperf_results_set_meta(json_t *j, const struct iperf_results_meta *m)
{
    int rc = 0;
    rc |= json_object_set_new(j, "cpu_util_total", json_real(m->cpu.total));
    rc |= json_object_set_new(j, "cpu_util_user", json_real(m->cpu.user));
    rc |= json_object_set_new(j, "cpu_util_system", json_real(m->cpu.system));
    if (m->congestion[0])
        rc |= json_object_set_new(j, "congestion_used", json_string(m->congestion));
    return rc ? BRISK_ERR_NOMEM : BRISK_OK;
}

void iperf_results_get_meta(const json_t *j, struct iperf_results_meta *m)
{
    memset(m, 0, sizeof(*m));
    double *dst[] = {&m->cpu.total, &m->cpu.user, &m->cpu.system};
    const char *keys[] = {"cpu_util_total", "cpu_util_user", "cpu_util_system"};
    for (int i = 0; i < 3; i++) {
        double d;
        /* A percentage of one CPU: a peer with many cores can pass 100; nothing sane passes 100 000. */
        if (json_f64(json_object_get(j, keys[i]), &d) && d >= 0 && d < 1e5)
            *dst[i] = d;
    }
    const char *cc = json_string_value(json_object_get(j, "congestion_used"));
    if (cc && strlen(cc) < sizeof(m->congestion)) {
        for (const char *p = cc; *p; p++)
            if (*p < 0x21 || *p > 0x7e)
                return;
        memcpy(m->congestion, cc, strlen(cc) + 1);
    }
}

void perf_params_default(struct perf_params *p)
{
    memset(p, 0, sizeof(*p));
    p->port = PERF_DEFAULT_PORT;
    p->duration_ns = 10 * BRISK_NSEC_PER_SEC;
    p->parallel = 1;
    p->blksize = PERF_DEFAULT_BLKSIZE;
}
