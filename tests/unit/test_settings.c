/* tests for src/core/settings.c and src/core/stats.c: defaults, setting by name, bounds, descriptions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "brisk/brisk.h"
#include "tcp/cc.h"

static void test_defaults(void **state)
{
    (void)state;
    struct brisk_settings s;
    memset(&s, 0xa5, sizeof(s));
    brisk_settings_default(&s);
    assert_int_equal(s.ip_default_ttl, 64);
    assert_int_equal(s.arp_retries, 3);
    assert_int_equal(s.arp_retrans_ns, BRISK_NSEC_PER_SEC);
    assert_int_equal(s.pkt_pool_bytes, 64ull << 20);
    brisk_stack *st = brisk_stack_new(&s);
    assert_non_null(st);
    brisk_stack_free(st);
}

static void test_set_by_name(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_set(&s, "arp_retries=5"), BRISK_OK);
    assert_int_equal(s.arp_retries, 5);
    assert_int_equal(brisk_settings_set(&s, "arp_retrans=250ms"), BRISK_OK);
    assert_int_equal(s.arp_retrans_ns, 250 * BRISK_NSEC_PER_MSEC);
    assert_int_equal(brisk_settings_set(&s, "pkt_pool_bytes=4M"), BRISK_OK);
    assert_int_equal(s.pkt_pool_bytes, 4u << 20);
    assert_int_equal(brisk_settings_set_kv(&s, "ip_default_ttl", "255"), BRISK_OK);
    assert_int_equal(s.ip_default_ttl, 255);
    assert_int_equal(brisk_settings_set(&s, "seed=0x10"), BRISK_OK);
    assert_int_equal(s.seed, 16);
}

static void test_set_errors_leave_value(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    struct brisk_settings before = s;
    assert_int_equal(brisk_settings_set(&s, "no_such_setting=1"), BRISK_ERR_NOENT);
    assert_int_equal(brisk_settings_set(&s, "arp_retries"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "=3"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "arp_retries=many"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "arp_retries=0"), BRISK_ERR_RANGE);
    assert_int_equal(brisk_settings_set(&s, "ip_default_ttl=256"), BRISK_ERR_RANGE);
    assert_int_equal(brisk_settings_set(&s, "arp_retrans=10"), BRISK_ERR_INVAL); /* a time needs a unit */
    assert_int_equal(brisk_settings_set(&s, "arp_retrans=-1ms"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(NULL, "arp_retries=1"), BRISK_ERR_INVAL);
    assert_memory_equal(&s, &before, sizeof(s));
}

static void test_out_of_range_struct_rejected_by_stack(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    s.ip_default_ttl = 0;
    assert_null(brisk_stack_new(&s));
}

static void test_descriptions(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    size_t n = brisk_settings_count();
    assert_true(n >= 10);
    int seen_ttl = 0;
    for (size_t i = 0; i < n; i++) {
        const struct brisk_setting_desc *d = brisk_settings_desc(i);
        assert_non_null(d);
        assert_non_null(d->help);
        assert_true(strlen(d->help) > 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(d->name, brisk_settings_desc(j)->name);
        if (strcmp(d->name, "ip_default_ttl") == 0) {
            seen_ttl = 1;
            assert_int_equal(brisk_settings_value(&s, i), 64);
        }
    }
    assert_true(seen_ttl);
    assert_null(brisk_settings_desc(n));
}

/* A CHOICE setting: set by name, stored as the index, named back; unknown names rejected. */
static void test_choice_tcp_congestion(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(s.tcp_congestion, 1); /* cubic, as in Linux since 2.6.19 */
    size_t i = 0, n = brisk_settings_count();
    while (i < n && strcmp(brisk_settings_desc(i)->name, "tcp_congestion") != 0)
        i++;
    assert_true(i < n);
    const struct brisk_setting_desc *d = brisk_settings_desc(i);
    assert_int_equal(d->kind, BRISK_VAL_CHOICE);
    assert_non_null(d->choices);
    assert_string_equal(brisk_settings_choice(i, brisk_settings_value(&s, i)), "cubic");
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion=newreno"), BRISK_OK);
    assert_int_equal(s.tcp_congestion, 0);
    assert_string_equal(brisk_settings_choice(i, brisk_settings_value(&s, i)), "newreno");
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion=cubic"), BRISK_OK);
    assert_int_equal(s.tcp_congestion, 1);
    assert_string_equal(brisk_settings_choice(i, brisk_settings_value(&s, i)), "cubic");
    assert_int_equal(brisk_settings_set_kv(&s, "tcp_congestion", "newreno"), BRISK_OK);
    assert_int_equal(s.tcp_congestion, 0);
    /* Names only, exact: no index, no case folding; s unchanged on error. */
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion=1"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion=CUBIC"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion=bbr"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_settings_set(&s, "tcp_congestion="), BRISK_ERR_INVAL);
    assert_int_equal(s.tcp_congestion, 0);
    /* The names are the congestion-control registry's, in its order (the index picks the algorithm). */
    size_t k = 0;
    for (; d->choices[k]; k++) {
        assert_non_null(brisk_cc_get((unsigned)k));
        assert_string_equal(d->choices[k], brisk_cc_get((unsigned)k)->name);
        assert_string_equal(brisk_settings_choice(i, k), d->choices[k]);
    }
    assert_int_equal(k, brisk_cc_count());
    assert_null(brisk_settings_choice(i, k)); /* out of range */
    /* Numeric kinds have no names. */
    for (size_t j = 0; j < n; j++)
        if (brisk_settings_desc(j)->kind != BRISK_VAL_CHOICE)
            assert_null(brisk_settings_desc(j)->choices);
    assert_null(brisk_settings_choice(0, 0));
    assert_null(brisk_settings_choice(n, 0));
    /* A struct holding an index past the list is refused by the stack like any out-of-range value. */
    s.tcp_congestion = (uint32_t)k;
    assert_null(brisk_stack_new(&s));
}

static void test_counter_names(void **state)
{
    (void)state;
    size_t n = brisk_counters_count();
    assert_int_equal(n * sizeof(uint64_t), sizeof(struct brisk_counters));
    struct brisk_counters c;
    memset(&c, 0, sizeof(c));
    c.IpInReceives = 42;
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(brisk_counter_name(i));
        assert_non_null(brisk_counter_help(i));
        if (strcmp(brisk_counter_name(i), "IpInReceives") == 0) {
            found = 1;
            assert_int_equal(brisk_counter_value(&c, i), 42);
        }
    }
    assert_true(found);
    assert_null(brisk_counter_name(n));
}

static void test_profiles(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    struct brisk_settings before = s;
    assert_int_equal(brisk_settings_apply_profile(&s, "linux-9.99"), BRISK_ERR_NOENT);
    assert_memory_equal(&s, &before, sizeof(s));
    assert_int_equal(brisk_settings_apply_profile(&s, "linux-3.19"), BRISK_OK);
    assert_int_equal(s.tcp_tsq_rule, BRISK_TSQ_CEILING);
    assert_int_equal(s.tcp_limit_output_bytes, 128u << 10);
    assert_int_equal(s.tcp_tsq_adaptive, 0);
    assert_int_equal(s.tcp_tsq_shortcut, 0);
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_apply_profile(&s, "linux-3.14-rc2"), BRISK_OK);
    assert_int_equal(s.tcp_resume_nagle, 1);
    assert_int_equal(s.tcp_autocork_first_packet, 1);
    brisk_settings_default(&s);
    assert_int_equal(brisk_settings_apply_profile(&s, "brisk"), BRISK_OK);
    assert_memory_equal(&s, &before, sizeof(s));
    /* Every profile's settings are valid names and values. */
    for (size_t i = 0; i < brisk_profiles_count(); i++) {
        struct brisk_settings t;
        brisk_settings_default(&t);
        assert_non_null(brisk_profile_help(i));
        assert_int_equal(brisk_settings_apply_profile(&t, brisk_profile_name(i)), BRISK_OK);
        /* Every Linux version ends a connect on any ICMP error; brisk keeps RFC 1122's soft errors. */
        int is_linux = strncmp(brisk_profile_name(i), "linux-", 6) == 0;
        assert_int_equal(t.tcp_syn_icmp_errors, is_linux ? 1u : 0u);
    }
}

/* tcp_syn_icmp_errors takes its two names, stored as their index. */
static void test_choice_syn_icmp_errors(void **state)
{
    (void)state;
    struct brisk_settings s;
    brisk_settings_default(&s);
    assert_int_equal(s.tcp_syn_icmp_errors, 0);
    assert_int_equal(brisk_settings_set(&s, "tcp_syn_icmp_errors=linux"), BRISK_OK);
    assert_int_equal(s.tcp_syn_icmp_errors, 1);
    assert_int_equal(brisk_settings_set(&s, "tcp_syn_icmp_errors=bsd"), BRISK_ERR_INVAL);
    assert_int_equal(s.tcp_syn_icmp_errors, 1);
    assert_int_equal(brisk_settings_set(&s, "tcp_syn_icmp_errors=rfc1122"), BRISK_OK);
    assert_int_equal(s.tcp_syn_icmp_errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_set_by_name),
        cmocka_unit_test(test_set_errors_leave_value),
        cmocka_unit_test(test_out_of_range_struct_rejected_by_stack),
        cmocka_unit_test(test_descriptions),
        cmocka_unit_test(test_choice_tcp_congestion),
        cmocka_unit_test(test_counter_names),
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_choice_syn_icmp_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
