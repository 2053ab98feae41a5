/*
 * test_iperf_proto.c — the iperf3 protocol pieces of brisk-perf (tools/perf/iperf_proto.c): the cookie,
 * stream numbering, control-connection framing against partial and hostile input, and the parameter and
 * result objects, including what iperf3 3.12 really sends (-1 written as 2^64 - 1).
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perf/iperf_proto.h"

static void test_cookie(void **state)
{
    (void)state;
    char a[IPERF_COOKIE_SIZE], b[IPERF_COOKIE_SIZE], c[IPERF_COOKIE_SIZE];
    iperf_cookie_make(a, 1);
    iperf_cookie_make(b, 1);
    iperf_cookie_make(c, 2);
    assert_int_equal(strlen(a), 36);
    assert_memory_equal(a, b, IPERF_COOKIE_SIZE); /* a function of the seed */
    assert_memory_not_equal(a, c, IPERF_COOKIE_SIZE);
    assert_true(iperf_cookie_valid((const uint8_t *)a));
    for (int i = 0; i < 36; i++)
        assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz234567", a[i]));
    uint8_t bad[IPERF_COOKIE_SIZE];
    memcpy(bad, a, sizeof(bad));
    bad[36] = 'x'; /* not terminated */
    assert_false(iperf_cookie_valid(bad));
    memcpy(bad, a, sizeof(bad));
    bad[5] = '1'; /* outside the alphabet */
    assert_false(iperf_cookie_valid(bad));
    memcpy(bad, a, sizeof(bad));
    bad[10] = 0; /* short */
    assert_false(iperf_cookie_valid(bad));
}

static void test_stream_ids(void **state)
{
    (void)state;
    assert_int_equal(iperf_stream_id(0), 1);
    assert_int_equal(iperf_stream_id(1), 3);
    assert_int_equal(iperf_stream_id(2), 4);
    assert_int_equal(iperf_stream_id(127), 129);
}

/* Moves what was queued for sending into the receive buffer (no socket: the framing alone). */
static void loop_back(struct iperf_ctrl *c, size_t limit)
{
    size_t n = c->out_len < limit ? c->out_len : limit;
    uint8_t *p = realloc(c->in, c->in_len + n + 1);
    assert_non_null(p);
    c->in = p;
    c->in_cap = c->in_len + n + 1;
    memcpy(c->in + c->in_len, c->out, n);
    c->in_len += n;
    memmove(c->out, c->out + n, c->out_len - n);
    c->out_len -= n;
}

static void feed(struct iperf_ctrl *c, const void *p, size_t n)
{
    uint8_t *b = realloc(c->in, c->in_len + n + 1);
    assert_non_null(b);
    c->in = b;
    c->in_cap = c->in_len + n + 1;
    memcpy(c->in + c->in_len, p, n);
    c->in_len += n;
}

static void test_framing(void **state)
{
    (void)state;
    struct iperf_ctrl c;
    iperf_ctrl_init(&c, NULL);
    assert_int_equal(iperf_ctrl_put_state(&c, IPERF_PARAM_EXCHANGE, 0), BRISK_OK);
    assert_int_equal(iperf_ctrl_put_state(&c, IPERF_ACCESS_DENIED, 0), BRISK_OK);
    json_t *j = json_pack("{s:i, s:s}", "parallel", 4, "title", "x\"y");
    assert_int_equal(iperf_ctrl_put_json(&c, j, 0), BRISK_OK);
    assert_int_equal(c.out[1], 0xff); /* a signed byte */
    /* Byte by byte: nothing is taken before it is whole. */
    int st;
    json_t *got = NULL;
    loop_back(&c, 1);
    assert_int_equal(iperf_ctrl_take_state(&c, &st), 1);
    assert_int_equal(st, IPERF_PARAM_EXCHANGE);
    loop_back(&c, 1);
    assert_int_equal(iperf_ctrl_take_state(&c, &st), 1);
    assert_int_equal(st, IPERF_ACCESS_DENIED);
    assert_int_equal(iperf_ctrl_take_state(&c, &st), 0);
    while (c.out_len > 1) {
        loop_back(&c, 1);
        assert_int_equal(iperf_ctrl_take_json(&c, &got), 0);
    }
    loop_back(&c, 1);
    assert_int_equal(iperf_ctrl_take_json(&c, &got), 1);
    /* Integers come back as reals (the reader's rule for iperf3's 2^64 - 1), with the same value. */
    assert_true(json_number_value(json_object_get(got, "parallel")) == 4.0);
    assert_string_equal(json_string_value(json_object_get(got, "title")), "x\"y");
    assert_int_equal(c.in_len, 0);
    json_decref(got);
    json_decref(j);

    /* A length over the bound is refused before any text arrives. */
    static const uint8_t huge[4] = {0x00, 0x04, 0x00, 0x01};
    feed(&c, huge, 4);
    assert_int_equal(iperf_ctrl_take_json(&c, &got), BRISK_ERR_MSGSIZE);
    iperf_ctrl_free(&c);

    /* Not JSON, and JSON that is not an object. */
    iperf_ctrl_init(&c, NULL);
    static const uint8_t junk[] = {0, 0, 0, 3, '{', '{', '}', 0, 0, 0, 3, '[', '1', ']'};
    feed(&c, junk, sizeof(junk));
    assert_int_equal(iperf_ctrl_take_json(&c, &got), BRISK_ERR_INVAL);
    assert_int_equal(iperf_ctrl_take_json(&c, &got), BRISK_ERR_INVAL);
    assert_int_equal(c.in_len, 0);
    iperf_ctrl_free(&c);
}

static void test_params_round_trip(void **state)
{
    (void)state;
    struct perf_params p, q;
    perf_params_default(&p);
    p.duration_ns = 2500 * BRISK_NSEC_PER_MSEC; /* iperf3 speaks whole seconds: rounded up */
    p.parallel = 4;
    p.reverse = 1;
    p.blksize = 65536;
    p.nodelay = 1;
    p.mss = 1400;
    p.window = 1 << 20;
    json_t *j = iperf_params_to_json(&p);
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "tcp")));
    char err[128];
    perf_params_default(&q);
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_OK);
    assert_int_equal(q.duration_ns, 3 * BRISK_NSEC_PER_SEC);
    assert_int_equal(q.parallel, 4);
    assert_true(q.reverse);
    assert_true(q.nodelay);
    assert_int_equal(q.blksize, 65536);
    assert_int_equal(q.mss, 1400);
    assert_int_equal(q.window, 1 << 20);
    json_decref(j);

    /* Flags are sent only when set: iperf3's server tests presence. */
    perf_params_default(&p);
    j = iperf_params_to_json(&p);
    assert_null(json_object_get(j, "reverse"));
    assert_null(json_object_get(j, "nodelay"));
    json_decref(j);
    j = json_pack("{s:b, s:b, s:i}", "tcp", 1, "reverse", 0, "parallel", 1);
    assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_OK);
    assert_true(q.reverse); /* present means set, whatever the value (iperf3's rule) */
    json_decref(j);
}

static void test_params_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"sctp\":true}",
        "{\"udp\":true,\"len\":8}", /* UDP runs, but not with a datagram shorter than iperf3's header */
        "{\"tcp\":true,\"bidirectional\":true}",
        "{\"tcp\":true,\"parallel\":0}",
        "{\"tcp\":true,\"parallel\":129}",
        "{\"tcp\":true,\"len\":0}",
        "{\"tcp\":true,\"len\":\"big\"}",
        "{\"tcp\":true,\"time\":-1}",
        "{\"tcp\":true,\"time\":1.5}",
        "{\"tcp\":true,\"omit\":2}",
        "{\"tcp\":true,\"num\":1e300}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t e;
        json_t *j = json_loads(bad[i], JSON_DECODE_INT_AS_REAL, &e);
        assert_non_null(j);
        struct perf_params q;
        perf_params_default(&q);
        char err[128] = "";
        assert_int_equal(iperf_params_from_json(j, &q, err, sizeof(err)), BRISK_ERR_INVAL);
        assert_true(strlen(err) > 0);
        assert_int_equal(q.parallel, 1); /* untouched */
        json_decref(j);
    }
}

/* Results as iperf3 3.12 sends them: -1 printed as an unsigned 64-bit number, integers where cJSON could,
 * reals otherwise. */
static void test_results_from_iperf3(void **state)
{
    (void)state;
    const char *text =
        "{\"cpu_util_total\":19.9,\"cpu_util_user\":3.6,\"cpu_util_system\":16.2,"
        "\"sender_has_retransmits\":18446744073709551615,\"congestion_used\":\"bbr\","
        "\"streams\":[{\"id\":1,\"bytes\":3303836440,\"retransmits\":18446744073709551615,"
        "\"jitter\":0,\"errors\":0,\"packets\":0,\"start_time\":0,\"end_time\":3.000352},"
        "{\"id\":3,\"bytes\":1.2e10,\"retransmits\":7,\"jitter\":0,\"errors\":0,\"packets\":0}]}";
    struct iperf_ctrl c;
    iperf_ctrl_init(&c, NULL);
    uint32_t len = (uint32_t)strlen(text);
    uint8_t hdr[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    feed(&c, hdr, 4);
    feed(&c, text, len);
    json_t *j = NULL;
    assert_int_equal(iperf_ctrl_take_json(&c, &j), 1);
    struct iperf_stream_result r[4];
    size_t n;
    char err[128];
    assert_int_equal(iperf_results_from_json(j, r, 4, &n, err, sizeof(err)), BRISK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].id, 1);
    assert_int_equal(r[0].bytes, 3303836440ull);
    assert_int_equal(r[0].retransmits, -1);
    assert_true(r[0].end_time > 3.0 && r[0].end_time < 3.001);
    assert_int_equal(r[1].id, 3);
    assert_int_equal(r[1].bytes, 12000000000ull);
    assert_int_equal(r[1].retransmits, 7);
    assert_true(r[1].end_time == 0); /* pre-3.2 peers omit the times */
    /* More streams than expected is refused. */
    assert_int_equal(iperf_results_from_json(j, r, 1, &n, err, sizeof(err)), BRISK_ERR_INVAL);
    json_decref(j);
    iperf_ctrl_free(&c);
}

static void test_results_round_trip_and_refusals(void **state)
{
    (void)state;
    struct iperf_stream_result in[2] = {{1, 123456789012ull, 5, 0, 10.0}, {3, 42, -1, 0, 10.0}}, out[2];
    json_t *j = iperf_results_to_json(1, in, 2);
    assert_non_null(j);
    size_t n;
    char err[128];
    assert_int_equal(iperf_results_from_json(j, out, 2, &n, err, sizeof(err)), BRISK_OK);
    assert_int_equal(n, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out[i].id, in[i].id);
        assert_int_equal(out[i].bytes, in[i].bytes);
        assert_int_equal(out[i].retransmits, in[i].retransmits);
        assert_true(out[i].end_time == 10.0);
    }
    json_decref(j);
    static const char *const bad[] = {
        "{\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0,\"streams\":[]}",
        "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0}",
        "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0,"
        "\"streams\":[{\"id\":0,\"bytes\":1,\"retransmits\":0}]}",
        "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0,"
        "\"streams\":[{\"id\":1,\"bytes\":-5,\"retransmits\":0}]}",
        "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0,"
        "\"streams\":[{\"id\":1,\"bytes\":1.5,\"retransmits\":0}]}",
        "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,\"sender_has_retransmits\":0,"
        "\"streams\":[7]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t e;
        json_t *b = json_loads(bad[i], JSON_DECODE_INT_AS_REAL, &e);
        assert_non_null(b);
        assert_int_equal(iperf_results_from_json(b, out, 2, &n, err, sizeof(err)), BRISK_ERR_INVAL);
        json_decref(b);
    }
}

/* The results' CPU figures and congestion control: round trip, and a hostile peer's values left out. */
static void test_results_meta(void **state)
{
    (void)state;
    struct iperf_stream_result in[1] = {{1, 1000, 0, 0, 1.0}};
    json_t *j = iperf_results_to_json(1, in, 1);
    assert_non_null(j);
    struct iperf_results_meta m = {.cpu = {37.5, 25, 12.5}}, got;
    snprintf(m.congestion, sizeof(m.congestion), "cubic");
    assert_int_equal(iperf_results_set_meta(j, &m), BRISK_OK);
    iperf_results_get_meta(j, &got);
    assert_true(got.cpu.total == 37.5 && got.cpu.user == 25 && got.cpu.system == 12.5);
    assert_string_equal(got.congestion, "cubic");
    json_decref(j);
    static const char *const hostile[] = {
        "{\"cpu_util_total\":-3,\"cpu_util_user\":1e300,\"cpu_util_system\":\"x\"}",
        "{\"congestion_used\":\"a b\"}",
        "{\"cpu_util_total\":1,\"congestion_used\":\"averyveryverylongname\"}",
        "{\"congestion_used\":7}",
    };
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        json_t *b = json_loads(hostile[i], 0, NULL);
        assert_non_null(b);
        iperf_results_get_meta(b, &got);
        assert_true(got.cpu.user == 0 && got.cpu.system == 0);
        assert_true(got.cpu.total == (i == 2 ? 1 : 0));
        assert_string_equal(got.congestion, "");
        json_decref(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie),
        cmocka_unit_test(test_stream_ids),
        cmocka_unit_test(test_framing),
        cmocka_unit_test(test_params_round_trip),
        cmocka_unit_test(test_params_refused),
        cmocka_unit_test(test_results_from_iperf3),
        cmocka_unit_test(test_results_round_trip_and_refusals),
        cmocka_unit_test(test_results_meta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
