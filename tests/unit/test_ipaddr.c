/* tests for src/core/ipaddr.c (libbrisk, declared in brisk.h): brisk_ip_parse accepts exactly four decimal
 * fields 0-255 and nothing else; brisk_ip_format writes the dotted quad back; struct brisk_addr's parser takes
 * both families (IPv6 per RFC 4291 §2.2) and its formatter writes RFC 5952's canonical text, checked against
 * the RFC's own examples and against glibc's inet_pton / inet_ntop on 20,000 generated addresses. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "brisk/brisk.h"

static void test_parse(void **state)
{
    (void)state;
    uint32_t a = 0;
    assert_int_equal(brisk_ip_parse("10.0.0.1", &a), BRISK_OK);
    assert_int_equal(a, 0x0a000001u);
    assert_int_equal(brisk_ip_parse("255.255.255.255", &a), BRISK_OK);
    assert_int_equal(a, 0xffffffffu);
    assert_int_equal(brisk_ip_parse("0.0.0.0", &a), BRISK_OK);
    assert_int_equal(a, 0);
    assert_int_equal(brisk_ip_parse("010.001.0.9", &a), BRISK_OK); /* decimal, never octal */
    assert_int_equal(a, 0x0a010009u);
    static const char *bad[] = {"",           "1.2.3",   "1.2.3.4.",  "1.2.3.4.5", "256.0.0.1",
                                "1.2.3.-4",   "1..2.3",  "1.2.3.4 ",  " 1.2.3.4",  "0x1.2.3.4",
                                "1.2.3.0004", "a.b.c.d", "1.2.3.4/24"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        a = 42;
        assert_int_equal(brisk_ip_parse(bad[i], &a), BRISK_ERR_INVAL);
        assert_int_equal(a, 42);
    }
    assert_int_equal(brisk_ip_parse(NULL, &a), BRISK_ERR_INVAL);
    assert_int_equal(brisk_ip_parse("1.2.3.4", NULL), BRISK_ERR_INVAL);
}

static void test_format(void **state)
{
    (void)state;
    char buf[16];
    assert_string_equal(brisk_ip_format(0x0a000001u, buf), "10.0.0.1");
    assert_string_equal(brisk_ip_format(0xffffffffu, buf), "255.255.255.255");
    assert_string_equal(brisk_ip_format(0, buf), "0.0.0.0");
    uint32_t round = 0;
    assert_int_equal(brisk_ip_parse(brisk_ip_format(0xc0a80a7bu, buf), &round), BRISK_OK);
    assert_int_equal(round, 0xc0a80a7bu);
}

static struct brisk_addr v6(const char *text)
{
    struct brisk_addr a;
    assert_int_equal(brisk_addr_parse(text, &a), BRISK_OK);
    assert_int_equal(a.family, BRISK_AF_INET6);
    return a;
}

static void test_addr_parse(void **state)
{
    (void)state;
    struct brisk_addr a;
    assert_int_equal(brisk_addr_parse("192.0.2.33", &a), BRISK_OK);
    assert_int_equal(a.family, BRISK_AF_INET);
    assert_int_equal(a.u.v4, 0xc0000221u);
    struct brisk_addr b = brisk_addr_v4(0xc0000221u);
    assert_true(brisk_addr_equal(&a, &b));

    /* Every RFC 4291 §2.2 form of one address parses to the same bytes. */
    static const uint8_t doc[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
    static const char *forms[] = {"2001:db8:0:0:0:0:0:1", "2001:0db8:0000:0000:0000:0000:0000:0001",
                                  "2001:db8::1",          "2001:DB8::0:1",
                                  "2001:db8:0::0:0:1",    "2001:db8:0:0:0:0:0.0.0.1"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        a = v6(forms[i]);
        assert_memory_equal(a.u.v6, doc, 16);
    }
    a = v6("::");
    assert_true(brisk_addr_is_any(&a));
    a = v6("::1");
    assert_int_equal(a.u.v6[15], 1);
    assert_false(brisk_addr_is_any(&a));
    a = v6("1::");
    assert_int_equal(a.u.v6[1], 1);
    a = v6("::ffff:10.1.2.3");
    assert_int_equal(a.u.v6[10], 0xff);
    assert_int_equal(a.u.v6[15], 3);
    a = v6("1:2:3:4:5:6:7::"); /* "::" for one zero group: accepted (RFC 4291), never written (RFC 5952) */
    assert_int_equal(a.u.v6[13], 7);
    assert_int_equal(a.u.v6[15], 0);

    static const char *bad[] = {"",
                                ":",
                                ":::",
                                "1:2:3:4:5:6:7",       /* seven groups, no "::" */
                                "1:2:3:4:5:6:7:8:9",   /* nine */
                                "::1:2:3:4:5:6:7:8",   /* "::" and eight groups */
                                "1::2::3",             /* two "::" */
                                "12345::",             /* five digits */
                                "1:2:3:4:5:6:7:8:",    /* trailing colon */
                                ":1:2:3:4:5:6:7:8",    /* leading colon */
                                "1:2:3:4:5:6:7:1.2.3.4", /* the dotted quad is a ninth group */
                                "::1.2.3",             "::1.2.3.256",
                                "g::1",                "fe80::1%eth0", /* a zone is not part of the address */
                                "[::1]",               "1.2.3.4:80",
                                "::1 ",                " ::1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        a = brisk_addr_v4(42);
        assert_int_equal(brisk_addr_parse(bad[i], &a), BRISK_ERR_INVAL);
        assert_int_equal(a.family, BRISK_AF_INET); /* untouched */
        assert_int_equal(a.u.v4, 42);
    }
    assert_int_equal(brisk_addr_parse(NULL, &a), BRISK_ERR_INVAL);
    assert_int_equal(brisk_addr_parse("::1", NULL), BRISK_ERR_INVAL);
}

static void test_addr_format(void **state)
{
    (void)state;
    char buf[BRISK_ADDR_STRLEN];
    /* RFC 5952's examples (§4): leading zeros dropped, the longest zero run compressed, the first of equal
     * runs, a single zero group left alone, lower case; §5: a mapped IPv4 address dotted. */
    static const char *const canon[][2] = {
        {"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
        {"2001:db8:0:0:0:0:2:1", "2001:db8::2:1"},
        {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
        {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
        {"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},
        {"2001:DB8::AAAA", "2001:db8::aaaa"},
        {"0:0:0:0:0:0:0:0", "::"},
        {"0:0:0:0:0:0:0:1", "::1"},
        {"1:0:0:0:0:0:0:0", "1::"},
        {"0:0:0:0:0:ffff:c000:0221", "::ffff:192.0.2.33"},
        {"fe80:0:0:0:200:5eff:fe00:5301", "fe80::200:5eff:fe00:5301"},
    };
    for (size_t i = 0; i < sizeof(canon) / sizeof(canon[0]); i++) {
        struct brisk_addr a = v6(canon[i][0]);
        assert_string_equal(brisk_addr_format(&a, buf), canon[i][1]);
    }
    struct brisk_addr a = brisk_addr_v4(0x0a000001u);
    assert_string_equal(brisk_addr_format(&a, buf), "10.0.0.1");
    memset(&a, 0, sizeof(a));
    assert_string_equal(brisk_addr_format(&a, buf), "-");
    /* The longest text fits. */
    a = v6("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
    assert_string_equal(brisk_addr_format(&a, buf), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

/* Generated addresses with zero groups in every pattern: brisk's text equals glibc's (which follows RFC 5952
 * but for the deprecated IPv4-compatible ::a.b.c.d form, skipped) and parses back, by both, to the bytes. */
static void test_addr_against_libc(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int n = 0; n < 20000; n++) {
        uint8_t b[16];
        for (int g = 0; g < 8; g++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned v = (x >> 8) & 3 ? 0 : (unsigned)(x >> 20); /* mostly zero groups: runs of every length */
            if ((x & 0xf) == 1)
                v = (unsigned)(x >> 40) & 0xf;
            b[2 * g] = (uint8_t)(v >> 8);
            b[2 * g + 1] = (uint8_t)v;
        }
        static const uint8_t zero12[12];
        if (memcmp(b, zero12, 12) == 0)
            continue; /* glibc writes ::a.b.c.d for these */
        char libc[INET6_ADDRSTRLEN], ours[BRISK_ADDR_STRLEN];
        assert_non_null(inet_ntop(AF_INET6, b, libc, sizeof(libc)));
        struct brisk_addr a;
        memset(&a, 0, sizeof(a));
        a.family = BRISK_AF_INET6;
        memcpy(a.u.v6, b, 16);
        assert_string_equal(brisk_addr_format(&a, ours), libc);
        struct brisk_addr back;
        assert_int_equal(brisk_addr_parse(libc, &back), BRISK_OK);
        assert_true(brisk_addr_equal(&a, &back));
        /* And glibc's own parse of the uncompressed form agrees with ours. */
        char full[64];
        snprintf(full, sizeof(full), "%x:%x:%x:%x:%x:%x:%x:%x", b[0] << 8 | b[1], b[2] << 8 | b[3],
                 b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11], b[12] << 8 | b[13],
                 b[14] << 8 | b[15]);
        uint8_t pton[16];
        assert_int_equal(inet_pton(AF_INET6, full, pton), 1);
        assert_int_equal(brisk_addr_parse(full, &back), BRISK_OK);
        assert_memory_equal(back.u.v6, pton, 16);
    }
}

static void test_addr_equal(void **state)
{
    (void)state;
    struct brisk_addr a = brisk_addr_v4(1), b = brisk_addr_v4(1), c = brisk_addr_v4(2), u1, u2;
    assert_true(brisk_addr_equal(&a, &b));
    assert_false(brisk_addr_equal(&a, &c));
    memset(&u1, 0, sizeof(u1));
    memset(&u2, 0xff, sizeof(u2));
    u2.family = BRISK_AF_UNSPEC;
    assert_true(brisk_addr_equal(&u1, &u2)); /* no address equals no address, whatever the bytes */
    struct brisk_addr s6 = v6("::1"), t6 = v6("0::1");
    assert_true(brisk_addr_equal(&s6, &t6));
    struct brisk_addr m = v6("::ffff:0.0.0.1");
    assert_false(brisk_addr_equal(&m, &a)); /* a mapped address is an IPv6 address */
    assert_false(brisk_addr_equal(NULL, &a));
    assert_true(brisk_addr_is_any(NULL));
    struct brisk_addr z = brisk_addr_v4(0);
    assert_true(brisk_addr_is_any(&z));
    assert_false(brisk_addr_is_any(&a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_addr_parse),
        cmocka_unit_test(test_addr_format),
        cmocka_unit_test(test_addr_against_libc),
        cmocka_unit_test(test_addr_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
