/*
 * test_units.c — the shared value syntax (brisk_parse_*), brisk_strerror and brisk_error_name.
 *
 * Each parser gets a table of good strings with their exact results and a table of bad strings with the
 * exact error code; every failing call must leave *out untouched (checked with a sentinel).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "brisk/brisk.h"

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

struct good_u64 {
    const char *s;
    uint64_t v;
};
struct bad {
    const char *s;
    int err;
};

typedef int (*parse_u64_fn)(const char *, uint64_t *);

static void check_u64_tables(const char *what, parse_u64_fn fn, const struct good_u64 *good, size_t ngood,
                             const struct bad *bad, size_t nbad)
{
    for (size_t i = 0; i < ngood; i++) {
        uint64_t v = SENTINEL;
        int rc = fn(good[i].s, &v);
        if (rc != BRISK_OK || v != good[i].v)
            fail_msg("%s(\"%s\") = %d, %" PRIu64 "; want 0, %" PRIu64, what, good[i].s, rc, v, good[i].v);
    }
    for (size_t i = 0; i < nbad; i++) {
        uint64_t v = SENTINEL;
        int rc = fn(bad[i].s, &v);
        if (rc != bad[i].err || v != SENTINEL)
            fail_msg("%s(\"%s\") = %d (out %s); want %d", what, bad[i].s, rc,
                     v == SENTINEL ? "untouched" : "WRITTEN", bad[i].err);
    }
    uint64_t v = SENTINEL;
    assert_int_equal(fn(NULL, &v), BRISK_ERR_INVAL);
    assert_true(v == SENTINEL);
    assert_int_equal(fn(good[0].s, NULL), BRISK_ERR_INVAL);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define KI   UINT64_C(1024)

static void test_parse_size(void **state)
{
    (void)state;
    static const struct good_u64 good[] = {
        {"1500", 1500},
        {"0", 0},
        {"007", 7},
        {"1500B", 1500},
        {"64K", 64 * KI},
        {"64k", 64 * KI},
        {"64KB", 64 * KI},
        {"64kB", 64 * KI},
        {"64KiB", 64 * KI},
        {"4M", 4 * KI * KI},
        {"4m", 4 * KI * KI},
        {"4MiB", 4 * KI * KI},
        {"1G", KI * KI * KI},
        {"1GB", KI * KI * KI},
        {"2T", 2 * KI * KI * KI * KI},
        {"1P", UINT64_C(1) << 50},
        {"15E", UINT64_C(15) << 60},
        {"1.5K", 1536},
        {"0.5K", 512},
        {"1.25M", 1310720},
        {"1.0", 1},
        {"2.000", 2},
        {"0.0009765625K", 1}, /* 2^-10 K */
        {"18446744073709551615", UINT64_MAX},
        {"18446744073709551615.000", UINT64_MAX},
        {"15.9990234375E", UINT64_MAX - (UINT64_C(1) << 50) + 1}, /* 16 E - 1 P */
        {"16383.9990234375P", (UINT64_C(16384) << 50) - (UINT64_C(1) << 40)},
    };
    static const struct bad bad[] = {
        {"", BRISK_ERR_INVAL},
        {" 1500", BRISK_ERR_INVAL},
        {"1500 ", BRISK_ERR_INVAL},
        {"-1", BRISK_ERR_INVAL},
        {"+1", BRISK_ERR_INVAL},
        {"1.3", BRISK_ERR_INVAL}, /* not a whole number of bytes */
        {"1.1K", BRISK_ERR_INVAL},
        {"1.", BRISK_ERR_INVAL},
        {".5K", BRISK_ERR_INVAL},
        {"K", BRISK_ERR_INVAL},
        {"1X", BRISK_ERR_INVAL},
        {"64Kb", BRISK_ERR_INVAL},
        {"64KIB", BRISK_ERR_INVAL},
        {"64K B", BRISK_ERR_INVAL},
        {"64KBx", BRISK_ERR_INVAL},
        {"1e3", BRISK_ERR_INVAL},
        {"0x10", BRISK_ERR_INVAL},
        {"1,5K", BRISK_ERR_INVAL},
        {"1.00000000000000000000001", BRISK_ERR_INVAL},
        {"18446744073709551616", BRISK_ERR_RANGE},
        {"99999999999999999999999999", BRISK_ERR_RANGE},
        {"16E", BRISK_ERR_RANGE},
        {"16384P", BRISK_ERR_RANGE},
        {"17179869184G", BRISK_ERR_RANGE},
        {"15.999999999999999999E", BRISK_ERR_INVAL},   /* close to 2^64, but not whole bytes */
        {"15.9999999999999999999E", BRISK_ERR_INVAL},  /* more decimals than are kept */
        {"0.000000000000000000001K", BRISK_ERR_INVAL}, /* more than 19 decimal places */
        {"16.5E", BRISK_ERR_RANGE},
        {"99999999999999999999999999x", BRISK_ERR_INVAL}, /* malformed beats overflow */
    };
    check_u64_tables("brisk_parse_size", brisk_parse_size, good, N(good), bad, N(bad));
}

static void test_parse_rate(void **state)
{
    (void)state;
    static const struct good_u64 good[] = {
        {"1500", 1500},
        {"0", 0},
        {"10k", 10000},
        {"10K", 10000},
        {"100M", 100000000},
        {"100m", 100000000},
        {"1G", 1000000000},
        {"2.5G", 2500000000u},
        {"40G", 40000000000u},
        {"1T", 1000000000000u},
        {"1.5k", 1500},
        {"0.001k", 1},
        {"1500bit", 1500},
        {"1500bps", 1500},
        {"1500bit/s", 1500},
        {"100Mbit", 100000000},
        {"100mbit", 100000000},
        {"10Gbps", 10000000000u},
        {"1.544Mbit/s", 1544000},
        {"18446744073709551615", UINT64_MAX},
        {"18446744.073709551615T", UINT64_MAX},
    };
    static const struct bad bad[] = {
        {"", BRISK_ERR_INVAL},
        {" 1G", BRISK_ERR_INVAL},
        {"1G ", BRISK_ERR_INVAL},
        {"-1G", BRISK_ERR_INVAL},
        {"1.5", BRISK_ERR_INVAL},
        {"1.0001k", BRISK_ERR_INVAL},
        {"1Gb", BRISK_ERR_INVAL},
        {"1GB", BRISK_ERR_INVAL},
        {"1Gbit/", BRISK_ERR_INVAL},
        {"1Gbits", BRISK_ERR_INVAL},
        {"1P", BRISK_ERR_INVAL},
        {"1GiB", BRISK_ERR_INVAL},
        {"G", BRISK_ERR_INVAL},
        {"bit", BRISK_ERR_INVAL},
        {"18446744073709551616", BRISK_ERR_RANGE},
        {"18446744.073709551616T", BRISK_ERR_RANGE},
        {"18446745T", BRISK_ERR_RANGE},
    };
    check_u64_tables("brisk_parse_rate", brisk_parse_rate, good, N(good), bad, N(bad));
}

static void test_parse_time(void **state)
{
    (void)state;
    static const struct good_u64 good[] = {
        {"0", 0},
        {"0.0", 0},
        {"0s", 0},
        {"250ns", 250},
        {"100us", 100000},
        {"100\xc2\xb5s", 100000}, /* micro sign */
        {"100\xce\xbcs", 100000}, /* Greek mu */
        {"10ms", 10000000},
        {"1s", 1000000000},
        {"1.5ms", 1500000},
        {"1.5us", 1500},
        {"0.000001ms", 1},
        {"2.5s", 2500000000u},
        {"0.000000001s", 1},
        {"3600s", UINT64_C(3600000000000)},
        {"18446744073.709551615s", UINT64_MAX},
        {"18446744073709551615ns", UINT64_MAX},
    };
    static const struct bad bad[] = {
        {"", BRISK_ERR_INVAL},
        {"10", BRISK_ERR_INVAL}, /* a unit is required */
        {"1.5", BRISK_ERR_INVAL},
        {"2m", BRISK_ERR_INVAL}, /* minutes or milli? */
        {"1min", BRISK_ERR_INVAL},
        {"1h", BRISK_ERR_INVAL},
        {"10msx", BRISK_ERR_INVAL},
        {"10 ms", BRISK_ERR_INVAL},
        {" 10ms", BRISK_ERR_INVAL},
        {"10ms ", BRISK_ERR_INVAL},
        {"10MS", BRISK_ERR_INVAL},
        {"-1s", BRISK_ERR_INVAL},
        {"1.5ns", BRISK_ERR_INVAL}, /* not a whole number of ns */
        {"0.0000000001s", BRISK_ERR_INVAL},
        {"ms", BRISK_ERR_INVAL},
        {"1e3ns", BRISK_ERR_INVAL},
        {"0x", BRISK_ERR_INVAL},
        {"\xc2\xb5s", BRISK_ERR_INVAL},
        {"1\xc2s", BRISK_ERR_INVAL},
        {"18446744073.709551616s", BRISK_ERR_RANGE},
        {"18446744074s", BRISK_ERR_RANGE},
        {"18446744073709551616ns", BRISK_ERR_RANGE},
        {"18446744073709552ms", BRISK_ERR_RANGE},
    };
    check_u64_tables("brisk_parse_time", brisk_parse_time, good, N(good), bad, N(bad));
}

static void test_parse_uint(void **state)
{
    (void)state;
    static const struct good_u64 good[] = {
        {"0", 0},
        {"42", 42},
        {"0042", 42}, /* decimal, not octal */
        {"0x0", 0},
        {"0x1f", 31},
        {"0X1F", 31},
        {"0xdeadBEEF", 0xdeadbeef},
        {"18446744073709551615", UINT64_MAX},
        {"0xffffffffffffffff", UINT64_MAX},
        {"0x0000000000000000ffffffffffffffff", UINT64_MAX},
    };
    static const struct bad bad[] = {
        {"", BRISK_ERR_INVAL},
        {"0x", BRISK_ERR_INVAL},
        {"x10", BRISK_ERR_INVAL},
        {"0xg", BRISK_ERR_INVAL},
        {"0x1g", BRISK_ERR_INVAL},
        {"1.0", BRISK_ERR_INVAL},
        {"1K", BRISK_ERR_INVAL},
        {"-1", BRISK_ERR_INVAL},
        {"+1", BRISK_ERR_INVAL},
        {" 1", BRISK_ERR_INVAL},
        {"1 ", BRISK_ERR_INVAL},
        {"12a", BRISK_ERR_INVAL},
        {"18446744073709551616", BRISK_ERR_RANGE},
        {"0x10000000000000000", BRISK_ERR_RANGE},
        {"0x10000000000000000z", BRISK_ERR_INVAL},
        {"184467440737095516160", BRISK_ERR_RANGE},
    };
    check_u64_tables("brisk_parse_uint", brisk_parse_uint, good, N(good), bad, N(bad));
}

static void test_parse_prob(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double v;
    } good[] = {
        {"0", 0.0},
        {"1", 1.0},
        {"0.01", 0.01},
        {"0.5", 0.5},
        {"1.0", 1.0},
        {"1%", 0.01},
        {"100%", 1.0},
        {"0%", 0.0},
        {"50%", 0.5},
        {"0.5%", 0.005},
        {"0.1", 0.1},
        {"0.25", 0.25},
        {"0.001%", 0.00001},
        {"1.000", 1.0},
        {"100.0%", 1.0},
        {"0.000000000000000000000001", 1e-24}, /* many leading zeros keep their meaning */
        {"0.3333333333333333333333", 0.3333333333333333},
    };
    static const struct bad bad[] = {
        {"", BRISK_ERR_INVAL},
        {"%", BRISK_ERR_INVAL},
        {"-0.1", BRISK_ERR_INVAL},
        {" 0.1", BRISK_ERR_INVAL},
        {"0.1 ", BRISK_ERR_INVAL},
        {"0.1x", BRISK_ERR_INVAL},
        {"1%%", BRISK_ERR_INVAL},
        {"50 %", BRISK_ERR_INVAL},
        {".5", BRISK_ERR_INVAL},
        {"1e-3", BRISK_ERR_INVAL},
        {"0,5", BRISK_ERR_INVAL},
        {"1.5", BRISK_ERR_RANGE},
        {"2", BRISK_ERR_RANGE},
        {"101%", BRISK_ERR_RANGE},
        {"100.001%", BRISK_ERR_RANGE},
        {"1.0000000000000000000001", BRISK_ERR_RANGE},
        {"99999999999999999999999", BRISK_ERR_RANGE},
    };
    for (size_t i = 0; i < N(good); i++) {
        double v = -7.0;
        int rc = brisk_parse_prob(good[i].s, &v);
        double tol = good[i].v * 1e-15;
        if (rc != BRISK_OK || fabs(v - good[i].v) > tol)
            fail_msg("brisk_parse_prob(\"%s\") = %d, %.17g; want 0, %.17g", good[i].s, rc, v, good[i].v);
    }
    for (size_t i = 0; i < N(bad); i++) {
        double v = -7.0;
        int rc = brisk_parse_prob(bad[i].s, &v);
        if (rc != bad[i].err || v != -7.0)
            fail_msg("brisk_parse_prob(\"%s\") = %d, %g; want %d, untouched", bad[i].s, rc, v, bad[i].err);
    }
    /* Short decimals give exactly the double a C literal gives. */
    double v;
    assert_int_equal(brisk_parse_prob("0.01", &v), BRISK_OK);
    assert_true(v == 0.01);
    assert_int_equal(brisk_parse_prob("1%", &v), BRISK_OK);
    assert_true(v == 0.01);
    assert_int_equal(brisk_parse_prob("0.1", &v), BRISK_OK);
    assert_true(v == 0.1);
    assert_int_equal(brisk_parse_prob(NULL, &v), BRISK_ERR_INVAL);
    assert_int_equal(brisk_parse_prob("0.5", NULL), BRISK_ERR_INVAL);
}

static void test_parse_bool(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int v;
    } good[] = {
        {"0", 0},  {"1", 1},   {"off", 0}, {"on", 1},  {"false", 0}, {"true", 1},
        {"no", 0}, {"yes", 1}, {"ON", 1},  {"Off", 0}, {"TRUE", 1},  {"No", 0},
    };
    static const char *bad[] = {"",     "2",   "01", "y",     "n",      "t",  "f",  "yes ",
                                " yes", "onn", "o",  "truee", "enable", "-1", "0x1"};
    for (size_t i = 0; i < N(good); i++) {
        int v = -7;
        int rc = brisk_parse_bool(good[i].s, &v);
        if (rc != BRISK_OK || v != good[i].v)
            fail_msg("brisk_parse_bool(\"%s\") = %d, %d; want 0, %d", good[i].s, rc, v, good[i].v);
    }
    for (size_t i = 0; i < N(bad); i++) {
        int v = -7;
        int rc = brisk_parse_bool(bad[i], &v);
        if (rc != BRISK_ERR_INVAL || v != -7)
            fail_msg("brisk_parse_bool(\"%s\") = %d, %d; want INVAL, untouched", bad[i], rc, v);
    }
    int v = -7;
    assert_int_equal(brisk_parse_bool(NULL, &v), BRISK_ERR_INVAL);
    assert_int_equal(brisk_parse_bool("on", NULL), BRISK_ERR_INVAL);
}

static void test_strerror(void **state)
{
    (void)state;
    static const int codes[] = {
        BRISK_OK,
        BRISK_ERR_INVAL,
        BRISK_ERR_NOMEM,
        BRISK_ERR_NOENT,
        BRISK_ERR_RANGE,
        BRISK_ERR_NOROUTE,
        BRISK_ERR_AGAIN,
        BRISK_ERR_BUSY,
        BRISK_ERR_NOBUFS,
        BRISK_ERR_MSGSIZE,
        BRISK_ERR_EXIST,
        BRISK_ERR_UNREACH,
        BRISK_ERR_TOOMANY,
        BRISK_ERR_CONNREFUSED,
        BRISK_ERR_RESET,
        BRISK_ERR_TIMEDOUT,
        BRISK_ERR_NOTCONN,
        BRISK_ERR_ISCONN,
        BRISK_ERR_ADDRINUSE,
        BRISK_ERR_PIPE,
        BRISK_ERR_INPROGRESS,
        BRISK_ERR_ADDRNOTAVAIL,
        BRISK_ERR_NETUNREACH,
        BRISK_ERR_HOSTDOWN,
        BRISK_ERR_NONET,
        BRISK_ERR_NOPROTOOPT,
        BRISK_ERR_PROTO,
        BRISK_ERR_OPNOTSUPP,
        BRISK_ERR_AFNOSUPPORT,
    };
    const char *unknown = brisk_strerror(-1000);
    assert_non_null(unknown);
    assert_string_equal(unknown, "unknown error");
    assert_string_equal(brisk_strerror(1), "unknown error");
    assert_string_equal(brisk_strerror(BRISK_ERR_AFNOSUPPORT - 1), "unknown error");
    assert_string_equal(brisk_strerror(BRISK_ERR_INVAL), "invalid argument");
    for (size_t i = 0; i < N(codes); i++) {
        const char *s = brisk_strerror(codes[i]);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        assert_string_not_equal(s, unknown);
        for (size_t j = 0; j < i; j++) /* each code has its own text */
            assert_string_not_equal(s, brisk_strerror(codes[j]));
    }
}

static void test_error_name(void **state)
{
    (void)state;
#define NAMED(code) {code, #code}
    static const struct {
        int code;
        const char *name;
    } codes[] = {
        NAMED(BRISK_OK),
        NAMED(BRISK_ERR_INVAL),
        NAMED(BRISK_ERR_NOMEM),
        NAMED(BRISK_ERR_NOENT),
        NAMED(BRISK_ERR_RANGE),
        NAMED(BRISK_ERR_NOROUTE),
        NAMED(BRISK_ERR_AGAIN),
        NAMED(BRISK_ERR_BUSY),
        NAMED(BRISK_ERR_NOBUFS),
        NAMED(BRISK_ERR_MSGSIZE),
        NAMED(BRISK_ERR_EXIST),
        NAMED(BRISK_ERR_UNREACH),
        NAMED(BRISK_ERR_TOOMANY),
        NAMED(BRISK_ERR_CONNREFUSED),
        NAMED(BRISK_ERR_RESET),
        NAMED(BRISK_ERR_TIMEDOUT),
        NAMED(BRISK_ERR_NOTCONN),
        NAMED(BRISK_ERR_ISCONN),
        NAMED(BRISK_ERR_ADDRINUSE),
        NAMED(BRISK_ERR_PIPE),
        NAMED(BRISK_ERR_INPROGRESS),
        NAMED(BRISK_ERR_ADDRNOTAVAIL),
        NAMED(BRISK_ERR_NETUNREACH),
        NAMED(BRISK_ERR_HOSTDOWN),
        NAMED(BRISK_ERR_NONET),
        NAMED(BRISK_ERR_NOPROTOOPT),
        NAMED(BRISK_ERR_PROTO),
        NAMED(BRISK_ERR_OPNOTSUPP),
        NAMED(BRISK_ERR_AFNOSUPPORT),
    };
#undef NAMED
    for (size_t i = 0; i < N(codes); i++)
        assert_string_equal(brisk_error_name(codes[i].code), codes[i].name);
    assert_string_equal(brisk_error_name(1), "BRISK_ERR_UNKNOWN");
    assert_string_equal(brisk_error_name(BRISK_ERR_AFNOSUPPORT - 1), "BRISK_ERR_UNKNOWN");
    assert_string_equal(brisk_error_name(-1000), "BRISK_ERR_UNKNOWN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size), cmocka_unit_test(test_parse_rate),
        cmocka_unit_test(test_parse_time), cmocka_unit_test(test_parse_uint),
        cmocka_unit_test(test_parse_prob), cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_strerror),     cmocka_unit_test(test_error_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
