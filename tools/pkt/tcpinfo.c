/*
 * tcpinfo.c — the tcp_info a script's %{ }% blocks read, from brisk_conn_info under Linux's tcpi_* names.
 *
 * Linux reports windows and queues in segments (a partial one counts whole for what is in flight, not for
 * cwnd and ssthresh), times in microseconds and "last" times in milliseconds since; brisk reports bytes and
 * nanoseconds, so each field is converted here as tcp_get_info does its own. A field brisk does not measure
 * under the running profile is left out, so that a script reading it is unsupported rather than failed.
 */
#include <stdio.h>
#include <string.h>

#include "pkt/vsys.h"

static uint32_t segs(uint64_t bytes, uint32_t mss, int round_up)
{
    if (!mss)
        return 0;
    return (uint32_t)(round_up ? (bytes + mss - 1) / mss : bytes / mss);
}

/* tcpi_state as Linux reports it for the application's socket. A connection entering TIME-WAIT is handed
 * to a timewait socket and the application's is closed (tcp_time_wait, then tcp_done), so it reads
 * TCP_CLOSE; brisk keeps one socket through TIME-WAIT. */
static int linux_state(int s)
{
    switch (s) {
    case BRISK_TCP_ESTABLISHED: return 1;
    case BRISK_TCP_SYN_SENT: return 2;
    case BRISK_TCP_SYN_RECEIVED: return 3;
    case BRISK_TCP_FIN_WAIT_1: return 4;
    case BRISK_TCP_FIN_WAIT_2: return 5;
    case BRISK_TCP_TIME_WAIT: return 7;
    case BRISK_TCP_CLOSED: return 7;
    case BRISK_TCP_CLOSE_WAIT: return 8;
    case BRISK_TCP_LAST_ACK: return 9;
    case BRISK_TCP_LISTEN: return 10;
    case BRISK_TCP_CLOSING: return 11;
    default: return 0;
    }
}

static int64_t ms_since(uint64_t now, uint64_t t)
{
    return t && now >= t ? (int64_t)((now - t) / BRISK_NSEC_PER_MSEC) : 0;
}

int sys_info(struct run *r, const struct pkt_event *ev, struct pkt_var *out, size_t cap, size_t *n)
{
    brisk_sock *s = sys_sut_sock(r);
    if (!s)
        return run_fail(r, PKT_BAD_SCRIPT, ev, "a %%{ }%% block needs a socket to read tcp_info from");
    struct brisk_conn_info ci;
    brisk_conn_info(s, &ci);
    uint32_t mss = ci.mss;
    /* Linux's icsk_backoff counts the RTO's doublings; in SYN-SENT the first tcp_syn_linear_timeouts
     * timeouts do not double it (tcpi_retransmits still counts them). */
    uint32_t linear = brisk_stack_settings(r->st)->tcp_syn_linear_timeouts;
    uint32_t backoff = ci.backoff;
    if (ci.state == BRISK_TCP_SYN_SENT)
        backoff = backoff > linear ? backoff - linear : 0;
    struct pkt_var v[] = {
        {"tcpi_state", linux_state(ci.state)},
        {"tcpi_ca_state", ci.ca_state},
        {"tcpi_retransmits", ci.backoff},
        {"tcpi_backoff", backoff},
        {"tcpi_probes", ci.keepalive_probes},
        {"tcpi_options", (ci.ts_ok ? 1 : 0) | (ci.sack_ok ? 2 : 0) | (ci.ws_ok ? 4 : 0)},
        {"tcpi_snd_wscale", ci.snd_wscale},
        {"tcpi_rcv_wscale", ci.rcv_wscale},
        {"tcpi_rto", (int64_t)(ci.rto_ns / 1000)},
        {"tcpi_ato", (int64_t)(ci.ato_ns / 1000)},
        {"tcpi_snd_mss", mss},
        {"tcpi_advmss", ci.advmss},
        {"tcpi_unacked", segs(ci.unacked, mss, 1)},
        {"tcpi_sacked", segs(ci.sacked_bytes, mss, 1)},
        {"tcpi_lost", segs(ci.lost_bytes, mss, 1)},
        {"tcpi_retrans", segs(ci.retrans_bytes, mss, 1)},
        {"tcpi_last_data_sent", ms_since(r->now, ci.last_data_sent_ns)},
        {"tcpi_last_data_recv", ms_since(r->now, ci.last_data_recv_ns)},
        {"tcpi_last_ack_recv", ms_since(r->now, ci.last_recv_ns)},
        {"tcpi_pmtu", r->mtu},
        {"tcpi_rtt", (int64_t)(ci.srtt_ns / 1000)},
        {"tcpi_rttvar", (int64_t)(ci.rttvar_ns / 1000)},
        {"tcpi_snd_ssthresh", ci.ssthresh >= 0x7fffffffu ? 0x7fffffff : segs(ci.ssthresh, mss, 0)},
        {"tcpi_snd_cwnd", segs(ci.cwnd, mss, 0)},
        {"tcpi_total_retrans", (int64_t)ci.retransmits},
        {"tcpi_pacing_rate", (int64_t)ci.pacing_rate},
        {"tcpi_bytes_acked", (int64_t)ci.bytes_acked},
        {"tcpi_bytes_received", (int64_t)ci.bytes_received},
        {"tcpi_bytes_sent", (int64_t)ci.bytes_sent},
        {"tcpi_segs_out", (int64_t)ci.segs_out},
        {"tcpi_segs_in", (int64_t)ci.segs_in},
        {"tcpi_notsent_bytes", (int64_t)ci.notsent},
        {"tcpi_min_rtt", (int64_t)(ci.min_rtt_ns / 1000)},
        {"tcpi_snd_wnd", ci.snd_wnd},
        {"tcpi_rcv_wnd", ci.rcv_wnd},
        {"tcpi_rcv_ssthresh", ci.rcv_ssthresh},
        {"tcpi_rcv_space", ci.rcv_space},
        {"tcpi_rcv_mss", ci.rcv_mss},
        {"tcpi_rcv_rtt", ci.rcv_rtt_us},
        {"tcpi_reordering", ci.reordering},
    };
    size_t k = sizeof(v) / sizeof(v[0]);
    if (!ci.reordering)
        k--; /* not measured under brisk's RACK rules: a script that reads it is unsupported there */
    if (k > cap)
        k = cap;
    memcpy(out, v, k * sizeof(v[0]));
    *n = k;
    return 0;
}
