/*
 * test_capture.c — pcap capture on simulated ports: the file format byte by byte, the timestamps of transmit
 * (start of serialization) and receive (delivery) records, determinism, and readability by tcpdump.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brisk/sim.h"
#include "support/testutil.h"

static uint64_t g_seed;
static unsigned g_file_no;

static void tmp_path(char *buf, size_t len)
{
    snprintf(buf, len, "/tmp/brisk_test_capture_%d_%u.pcap", (int)getpid(), g_file_no++);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* An ARP request "who-has 10.0.0.<target> tell 10.0.0.<sender>" (42 bytes), from 02:00:00:00:00:<sender>. */
static size_t arp_request(uint8_t *f, uint8_t sender, uint8_t target)
{
    static const uint8_t tmpl[42] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0, 0x08, 0x06, /* Ethernet */
        0,    1,    0x08, 0,    6,    4,    0,    1,       /* htype, ptype, hlen, plen, op */
        0x02, 0,    0,    0,    0,    0,    10,   0, 0, 0, /* sender MAC, IP */
        0,    0,    0,    0,    0,    0,    10,   0, 0, 0, /* target MAC, IP */
    };
    memcpy(f, tmpl, sizeof(tmpl));
    f[11] = sender;
    f[27] = sender;
    f[31] = sender;
    f[41] = target;
    return sizeof(tmpl);
}

struct rec {
    uint64_t t;
    uint32_t incl, orig;
    const uint8_t *data;
};

/* Parses a whole pcap file into records (pointing into buf); checks the global header. */
static size_t parse_pcap(const uint8_t *buf, size_t len, struct rec *out, size_t max)
{
    static const uint8_t hdr[24] = {0x4d, 0x3c, 0xb2, 0xa1, 2,    0,    4, 0, 0, 0, 0, 0,
                                    0,    0,    0,    0,    0xff, 0xff, 0, 0, 1, 0, 0, 0};
    assert_true(len >= 24);
    assert_memory_equal(buf, hdr, 24);
    size_t n = 0, off = 24;
    while (off < len) {
        assert_true(off + 16 <= len);
        assert_true(n < max);
        struct rec *r = &out[n++];
        uint32_t ns = le32(buf + off + 4);
        assert_true(ns < 1000000000u);
        r->t = (uint64_t)le32(buf + off) * 1000000000u + ns;
        r->incl = le32(buf + off + 8);
        r->orig = le32(buf + off + 12);
        assert_true(r->incl <= r->orig && r->incl <= 65535);
        off += 16;
        assert_true(off + r->incl <= len);
        r->data = buf + off;
        off += r->incl;
    }
    return n;
}

static void test_records_and_timestamps(void **state)
{
    (void)state;
    char pa[128], pb[128];
    tmp_path(pa, sizeof(pa));
    tmp_path(pb, sizeof(pb));
    brisk_sim_world *w = brisk_sim_world_new(g_seed);
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", NULL, NULL);
    brisk_sim_port *b = brisk_sim_raw_port_add(w, "b", NULL, NULL);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 30000); /* 42 bytes: 336 ns */
    assert_non_null(brisk_sim_link_connect(w, a, b, &c));
    assert_int_equal(brisk_sim_capture(a, pa), BRISK_OK);
    assert_int_equal(brisk_sim_capture(b, pb), BRISK_OK);
    assert_int_equal(brisk_sim_capture(a, pb), BRISK_ERR_INVAL); /* already capturing */

    uint8_t f[64];
    const uint64_t t0 = 2500000123ull; /* 2.5 s + 123 ns: seconds and nanoseconds both nonzero */
    brisk_sim_run_until(w, t0);
    size_t len = arp_request(f, 1, 2);
    assert_int_equal(brisk_sim_raw_send(a, f, len), BRISK_OK);
    arp_request(f, 1, 3);
    assert_int_equal(brisk_sim_raw_send(a, f, len), BRISK_OK); /* queued behind the first */
    brisk_sim_run_until(w, t0 + 10000);
    arp_request(f, 2, 1);
    assert_int_equal(brisk_sim_raw_send(b, f, len), BRISK_OK);
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    brisk_sim_world_free(w); /* flushes and closes both files */

    size_t na, nb;
    uint8_t *fa = brisk_test_read_file(pa, &na);
    uint8_t *fb = brisk_test_read_file(pb, &nb);
    assert_non_null(fa);
    assert_non_null(fb);
    struct rec ra[8], rb[8];
    size_t ca = parse_pcap(fa, na, ra, 8);
    size_t cb = parse_pcap(fb, nb, rb, 8);
    /* a: tx 1 at t0, tx 2 at t0 + 336 (start of its serialization), rx of b's frame at t0+10000+336+30000. */
    assert_int_equal(ca, 3);
    assert_int_equal(ra[0].t, t0);
    assert_int_equal(ra[1].t, t0 + 336);
    assert_int_equal(ra[2].t, t0 + 10000 + 336 + 30000);
    /* b: rx 1 at t0 + 336 + 30000, tx at t0 + 10000, rx 2 at t0 + 672 + 30000: event order, not by kind. */
    assert_int_equal(cb, 3);
    assert_int_equal(rb[0].t, t0 + 10000);
    assert_int_equal(rb[1].t, t0 + 336 + 30000);
    assert_int_equal(rb[2].t, t0 + 672 + 30000);
    uint8_t want[64];
    arp_request(want, 1, 2);
    assert_int_equal(ra[0].incl, 42);
    assert_int_equal(ra[0].orig, 42);
    assert_memory_equal(ra[0].data, want, 42);
    assert_memory_equal(rb[1].data, want, 42);
    arp_request(want, 1, 3);
    assert_memory_equal(ra[1].data, want, 42);
    assert_memory_equal(rb[2].data, want, 42);
    arp_request(want, 2, 1);
    assert_memory_equal(rb[0].data, want, 42);
    assert_memory_equal(ra[2].data, want, 42);
    assert_int_equal(na, 24 + 3 * (16 + 42));
    free(fa);
    free(fb);
    unlink(pa);
    unlink(pb);
}

/* An observer sees what a capture records: the same frames, at the same moments, tx and rx told apart. */
struct seen {
    uint64_t t[8];
    int rx[8];
    uint8_t data[8][64];
    size_t len[8], n;
    brisk_sim_port *port;
};

static void observe(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, int rx, uint64_t now)
{
    struct seen *s = ctx;
    assert_ptr_equal(p, s->port);
    assert_true(s->n < 8 && len <= 64);
    s->t[s->n] = now;
    s->rx[s->n] = rx;
    memcpy(s->data[s->n], frame, len);
    s->len[s->n++] = len;
}

static void test_observer_sees_what_capture_records(void **state)
{
    (void)state;
    char pa[128];
    tmp_path(pa, sizeof(pa));
    brisk_sim_world *w = brisk_sim_world_new(g_seed);
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", NULL, NULL);
    brisk_sim_port *b = brisk_sim_raw_port_add(w, "b", NULL, NULL);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 1000000000ull, 30000);
    assert_non_null(brisk_sim_link_connect(w, a, b, &c));
    struct seen s = {.port = a}, other = {.port = a};
    assert_int_equal(brisk_sim_capture(a, pa), BRISK_OK);
    assert_int_equal(brisk_sim_port_observe(a, observe, &s), BRISK_OK);
    assert_int_equal(brisk_sim_port_observe(a, observe, &other), BRISK_ERR_INVAL); /* one per port */
    assert_int_equal(brisk_sim_port_observe(NULL, observe, &s), BRISK_ERR_INVAL);
    uint8_t f[64];
    size_t len = arp_request(f, 1, 2);
    assert_int_equal(brisk_sim_raw_send(a, f, len), BRISK_OK);
    arp_request(f, 1, 3);
    assert_int_equal(brisk_sim_raw_send(a, f, len), BRISK_OK);
    brisk_sim_run_until(w, 5000);
    arp_request(f, 2, 1);
    assert_int_equal(brisk_sim_raw_send(b, f, len), BRISK_OK);
    brisk_sim_run_until(w, 100000);
    /* Removed: the next frame is captured but not observed. */
    assert_int_equal(brisk_sim_port_observe(a, NULL, NULL), BRISK_OK);
    assert_int_equal(brisk_sim_raw_send(a, f, len), BRISK_OK);
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    brisk_sim_world_free(w);
    size_t n;
    uint8_t *buf = brisk_test_read_file(pa, &n);
    assert_non_null(buf);
    struct rec r[8];
    assert_int_equal(parse_pcap(buf, n, r, 8), 4);
    assert_int_equal(s.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s.t[i], r[i].t);
        assert_int_equal(s.len[i], r[i].incl);
        assert_memory_equal(s.data[i], r[i].data, s.len[i]);
    }
    assert_int_equal(s.rx[0], 0);
    assert_int_equal(s.rx[1], 0);
    assert_int_equal(s.rx[2], 1);
    assert_int_equal(other.n, 0);
    free(buf);
    unlink(pa);
}

static void test_snaplen_truncates(void **state)
{
    (void)state;
    char p[128];
    tmp_path(p, sizeof(p));
    brisk_sim_world *w = brisk_sim_world_new(1);
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", NULL, NULL);
    brisk_sim_port *b = brisk_sim_raw_port_add(w, "b", NULL, NULL);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 10000000000ull, 0);
    assert_non_null(brisk_sim_link_connect(w, a, b, &c));
    assert_int_equal(brisk_sim_capture(b, p), BRISK_OK);
    uint8_t *big = malloc(70000);
    assert_non_null(big);
    for (size_t i = 0; i < 70000; i++)
        big[i] = (uint8_t)(i * 13);
    assert_int_equal(brisk_sim_raw_send(a, big, 70000), BRISK_OK);
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    brisk_sim_world_free(w);
    size_t n;
    uint8_t *buf = brisk_test_read_file(p, &n);
    assert_non_null(buf);
    struct rec r[2];
    assert_int_equal(parse_pcap(buf, n, r, 2), 1);
    assert_int_equal(r[0].incl, 65535);
    assert_int_equal(r[0].orig, 70000);
    assert_int_equal(r[0].t, 56000); /* 70000 bytes at 10 Gbit/s */
    assert_memory_equal(r[0].data, big, 65535);
    free(buf);
    free(big);
    unlink(p);
}

/* A world with random impairments on both directions, capturing on both ports; returns nothing, writes two
 * files. */
static void impaired_run(uint64_t seed, const char *pa, const char *pb, size_t *frames_a, size_t *frames_b)
{
    brisk_sim_world *w = brisk_sim_world_new(seed);
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", NULL, NULL);
    brisk_sim_port *b = brisk_sim_raw_port_add(w, "b", NULL, NULL);
    struct brisk_sim_link_config c;
    brisk_sim_link_config_symmetric(&c, 100000000ull, 12345);
    struct brisk_sim_impair im = {.loss_model = BRISK_SIM_LOSS_RANDOM,
                                  .loss = 0.1,
                                  .duplicate = 0.1,
                                  .corrupt = 0.1,
                                  .reorder = 0.1,
                                  .reorder_delay_ns = 20000};
    c.ab.impair = im;
    c.ba.impair = im;
    brisk_sim_link *l = brisk_sim_link_connect(w, a, b, &c);
    assert_non_null(l);
    assert_int_equal(brisk_sim_capture(a, pa), BRISK_OK);
    assert_int_equal(brisk_sim_capture(b, pb), BRISK_OK);
    uint8_t f[64];
    for (unsigned i = 0; i < 400; i++) {
        size_t len = arp_request(f, (uint8_t)(1 + i % 7), (uint8_t)(i % 251));
        assert_int_equal(brisk_sim_raw_send(i % 3 ? a : b, f, len), BRISK_OK);
        brisk_sim_run_until(w, brisk_sim_now(w) + 1000 + (i % 5) * 700);
    }
    brisk_sim_run_until(w, BRISK_TIME_NONE);
    struct brisk_sim_link_stats s0, s1;
    brisk_sim_link_stats(l, 0, &s0);
    brisk_sim_link_stats(l, 1, &s1);
    /* Each port records what it sent and what was delivered to it. */
    *frames_a = (size_t)(s0.frames_in + s1.delivered);
    *frames_b = (size_t)(s1.frames_in + s0.delivered);
    brisk_sim_world_free(w);
}

/* Packet lines printed by tcpdump -r (a corrupted ARP header makes it add indented hex-dump lines). */
static size_t tcpdump_lines(const char *path, int *status)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "tcpdump -r %s -nn 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t lines = 0;
    int ch, bol = 1;
    while ((ch = fgetc(p)) != EOF) {
        if (bol)
            lines += ch != '\t' && ch != ' ';
        bol = ch == '\n';
    }
    *status = pclose(p);
    return lines;
}

static void test_deterministic_and_readable(void **state)
{
    (void)state;
    char p1[128], p2[128], p3[128], p4[128], p5[128], p6[128];
    tmp_path(p1, sizeof(p1));
    tmp_path(p2, sizeof(p2));
    tmp_path(p3, sizeof(p3));
    tmp_path(p4, sizeof(p4));
    tmp_path(p5, sizeof(p5));
    tmp_path(p6, sizeof(p6));
    size_t na1, nb1, na2, nb2, na3, nb3;
    impaired_run(g_seed, p1, p2, &na1, &nb1);
    impaired_run(g_seed, p3, p4, &na2, &nb2);
    impaired_run(g_seed + 1, p5, p6, &na3, &nb3);
    size_t l1, l2, l3, l4, l5;
    uint8_t *f1 = brisk_test_read_file(p1, &l1);
    uint8_t *f2 = brisk_test_read_file(p2, &l2);
    uint8_t *f3 = brisk_test_read_file(p3, &l3);
    uint8_t *f4 = brisk_test_read_file(p4, &l4);
    uint8_t *f5 = brisk_test_read_file(p5, &l5);
    assert_true(f1 && f2 && f3 && f4 && f5);
    if (l1 != l3 || memcmp(f1, f3, l1) != 0 || l2 != l4 || memcmp(f2, f4, l2) != 0)
        fail_msg("same seed, different capture (seed %llu)", (unsigned long long)g_seed);
    if (l1 == l5 && memcmp(f1, f5, l1) == 0)
        fail_msg("different seeds, same capture (seed %llu)", (unsigned long long)g_seed);
    struct rec *r = malloc(2000 * sizeof(*r));
    assert_non_null(r);
    assert_int_equal(parse_pcap(f1, l1, r, 2000), na1);
    for (size_t i = 1; i < na1; i++)
        assert_true(r[i].t >= r[i - 1].t); /* event order is time order */
    assert_int_equal(parse_pcap(f2, l2, r, 2000), nb1);
    free(r);

    if (system("command -v tcpdump >/dev/null 2>&1") != 0) {
        print_message("tcpdump not in PATH: skipping the tcpdump -r check\n");
    } else {
        int status;
        size_t lines = tcpdump_lines(p1, &status);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(lines, na1);
        lines = tcpdump_lines(p2, &status);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(lines, nb1);
    }
    free(f1);
    free(f2);
    free(f3);
    free(f4);
    free(f5);
    unlink(p1);
    unlink(p2);
    unlink(p3);
    unlink(p4);
    unlink(p5);
    unlink(p6);
}

static void test_capture_errors(void **state)
{
    (void)state;
    brisk_sim_world *w = brisk_sim_world_new(1);
    brisk_sim_port *a = brisk_sim_raw_port_add(w, "a", NULL, NULL);
    assert_int_equal(brisk_sim_capture(NULL, "/tmp/x.pcap"), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_capture(a, NULL), BRISK_ERR_INVAL);
    assert_int_equal(brisk_sim_capture(a, "/nonexistent-dir/brisk/x.pcap"), BRISK_ERR_NOENT);
    /* A failed open leaves the port free to capture elsewhere; an empty capture is a valid pcap. */
    char p[128];
    tmp_path(p, sizeof(p));
    assert_int_equal(brisk_sim_capture(a, p), BRISK_OK);
    brisk_sim_world_free(w);
    size_t n;
    uint8_t *buf = brisk_test_read_file(p, &n);
    assert_non_null(buf);
    struct rec r[1];
    assert_int_equal(parse_pcap(buf, n, r, 1), 0);
    assert_int_equal(n, 24);
    free(buf);
    unlink(p);
}

int main(void)
{
    g_seed = brisk_test_seed(77);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_and_timestamps),
        cmocka_unit_test(test_snaplen_truncates),
        cmocka_unit_test(test_observer_sees_what_capture_records),
        cmocka_unit_test(test_deterministic_and_readable),
        cmocka_unit_test(test_capture_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
