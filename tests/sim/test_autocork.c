/*
 * test_autocork.c — the iSCSI seed's mechanism (000_1a49bfb366b99c70) end to end: an initiator sends 48-byte
 * commands one at a time; the target answers each with a 48-byte PDU header and a 512-byte payload as two
 * sends on a TCP_NODELAY socket. With auto-corking the payload waits for the header's TX completion; the
 * 2014 bug (tcp_resume_nagle) resumed it with Nagle on, so it then waited for the initiator's delayed ACK of
 * the header — every I/O paid a delayed ACK. Fixed, and in brisk, the I/O costs about one RTT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/simnet.h"

#define US BRISK_NSEC_PER_USEC
#define MS BRISK_NSEC_PER_MSEC

struct iscsi {
    brisk_sim_host *ini_host, *tgt_host;
    brisk_sock *ini, *tgt, *listener;
    int msg_more;       /* the target sets MSG_MORE on the header (Eric Dumazet's suggestion) */
    uint32_t ios, done; /* I/Os to run, completed */
    uint32_t got;       /* response bytes the initiator has for the current I/O */
    uint32_t cmd_got;   /* command bytes the target has */
    uint64_t start, end;
};

static void ini_send_cmd(struct iscsi *x, uint64_t now)
{
    uint8_t cmd[48] = {0x01};
    assert_int_equal(brisk_send(x->ini, cmd, sizeof(cmd), 0, now), 48);
}

static void on_ini(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    if (ev & BRISK_EV_CONNECTED) {
        x->start = now;
        ini_send_cmd(x, now);
    }
    uint8_t buf[4096];
    int64_t n;
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->got += (uint32_t)n;
        while (x->got >= 560) {
            x->got -= 560;
            if (++x->done == x->ios)
                x->end = now;
            else
                ini_send_cmd(x, now);
        }
    }
}

static void on_tgt(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    (void)ev;
    uint8_t buf[4096];
    int64_t n;
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->cmd_got += (uint32_t)n;
        while (x->cmd_got >= 48) {
            x->cmd_got -= 48;
            uint8_t hdr[48] = {0x25}, data[512] = {0};
            assert_int_equal(brisk_send(s, hdr, sizeof(hdr), x->msg_more ? BRISK_MSG_MORE : 0, now), 48);
            assert_int_equal(brisk_send(s, data, sizeof(data), 0, now), 512);
        }
    }
}

static void on_listen(void *ctx, brisk_sock *l, unsigned ev, uint64_t now)
{
    struct iscsi *x = ctx;
    (void)ev;
    (void)now;
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    if (!s)
        return;
    x->tgt = s;
    brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now);
    brisk_sock_set_callback(s, on_tgt, x);
}

static int all_done(void *ctx)
{
    struct iscsi *x = ctx;
    return x->done == x->ios;
}

struct outcome {
    uint64_t per_io_ns;
    uint64_t target_data_segs; /* data segments the target sent during the I/Os */
};

/* `ios` sequential 512-byte reads over 10 Gbit/s, 100 µs RTT; target settings `sets`. */
static struct outcome run(const char *const *sets, int msg_more, uint32_t ios)
{
    struct brisk_settings tgt;
    brisk_settings_default(&tgt);
    for (; sets && *sets; sets++)
        assert_int_equal(brisk_settings_set(&tgt, *sets), BRISK_OK);
    struct brisk_settings ini;
    brisk_settings_default(&ini);
    ini.tcp_delack_min_ns = 40 * MS; /* the initiator delays ACKs 40 .. 200 ms */
    brisk_sim_world *w = brisk_sim_world_new(3);
    tgt.seed = 0;
    ini.seed = 0;
    struct iscsi x = {.msg_more = msg_more, .ios = ios};
    x.tgt_host = brisk_sim_host_add(w, "target", &tgt);
    x.ini_host = brisk_sim_host_add(w, "initiator", &ini);
    brisk_sim_port *pt = brisk_sim_nic_add_ip(x.tgt_host, SIMNET_A_IP, 24, 0);
    brisk_sim_port *pi = brisk_sim_nic_add_ip(x.ini_host, SIMNET_B_IP, 24, 0);
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 10000000000ull, 50 * US);
    assert_non_null(brisk_sim_link_connect(w, pt, pi, &lc));
    int err;
    x.listener = brisk_socket(brisk_sim_host_stack(x.tgt_host), &err);
    assert_int_equal(brisk_bind(x.listener, SIMNET_A_IP, 3260), BRISK_OK);
    assert_int_equal(brisk_listen(x.listener, 4), BRISK_OK);
    brisk_sock_set_callback(x.listener, on_listen, &x);
    x.ini = brisk_socket(brisk_sim_host_stack(x.ini_host), &err);
    brisk_sock_set_callback(x.ini, on_ini, &x);
    assert_int_equal(brisk_connect(x.ini, SIMNET_A_IP, 3260, 0), BRISK_ERR_INPROGRESS);
    brisk_sim_host_kick(x.ini_host);
    assert_true(brisk_sim_run_while(w, all_done, &x, 3600ull * BRISK_NSEC_PER_SEC));
    struct brisk_conn_info ti;
    brisk_conn_info(x.tgt, &ti);
    struct outcome o = {.per_io_ns = (x.end - x.start) / ios, .target_data_segs = ti.segs_out};
    brisk_abort(x.ini, brisk_sim_now(w));
    brisk_abort(x.tgt, brisk_sim_now(w));
    brisk_close(x.listener, brisk_sim_now(w));
    brisk_sim_world_free(w);
    return o;
}

static void test_iscsi_resume_bug_costs_a_delayed_ack_per_io(void **state)
{
    (void)state;
    const uint32_t ios = 200;
    /* The 3.14-rc2 behaviour, as that kernel ran it: no internal pacing (a pacing timer would resume the
     * corked payload with the connection's real Nagle mode, which is exactly what the bug did not do). */
    struct outcome bug = run((const char *const[]){"tcp_resume_nagle=1", "tcp_pacing=0", NULL}, 0, ios);
    struct outcome off = run((const char *const[]){"tcp_autocorking=0", NULL}, 0, ios);
    struct outcome fixed = run(NULL, 0, ios);
    struct outcome more = run(NULL, 1, ios);
    printf("# per I/O: 3.14-rc2 resume bug %.3f ms, autocork off %.1f us, brisk %.1f us, brisk + MSG_MORE "
           "%.1f us\n",
           (double)bug.per_io_ns / 1e6, (double)off.per_io_ns / 1e3, (double)fixed.per_io_ns / 1e3,
           (double)more.per_io_ns / 1e3);
    printf("# target segments: brisk %" PRIu64 ", with MSG_MORE %" PRIu64 "\n", fixed.target_data_segs,
           more.target_data_segs);
    /* The bug: each I/O waits for the initiator's delayed ACK (>= tcp_delack_min = 40 ms). */
    assert_true(bug.per_io_ns >= 30 * off.per_io_ns);
    assert_true(bug.per_io_ns >= 40 * MS * 9 / 10);
    /* Fixed (brisk's default, auto-corking on) matches auto-corking off within 5 %. */
    assert_true(fixed.per_io_ns <= off.per_io_ns * 105 / 100);
    /* MSG_MORE on the header: one data segment per I/O instead of two. */
    assert_true(more.target_data_segs * 10 <= fixed.target_data_segs * 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iscsi_resume_bug_costs_a_delayed_ack_per_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
