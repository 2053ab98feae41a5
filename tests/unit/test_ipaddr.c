/* tests for src/core/ipaddr.c (libbrisk, declared in brisk.h): brisk_ip_parse accepts exactly four decimal
 * fields 0-255 and nothing else; brisk_ip_format writes the dotted quad back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
