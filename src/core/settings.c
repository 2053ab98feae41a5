/*
 * settings.c — brisk_settings: defaults, setting by name, description for tools.
 *
 * One table lists every setting: its name (a Linux sysctl's where one exists), the kind of value (which
 * decides the syntax accepted: sizes "64K", times "200ms", rates "1G", booleans "on"), the struct field, the
 * default and the bounds. brisk_settings_default() and brisk_settings_set() both read it, so a setting added
 * to the table is at once settable from every tool's `--set name=value` and listed by them.
 *
 * Most values are numbers. A CHOICE setting takes one name from a fixed list and stores its index; its kind
 * token in the table (e.g. CONGESTION) names both the value kind and the list (VALKIND_ / CHOICES_ below).
 */
#include <stddef.h>
#include <string.h>

#include "core/settings.h"

#define MS  BRISK_NSEC_PER_MSEC
#define SEC BRISK_NSEC_PER_SEC
#define US  (BRISK_NSEC_PER_MSEC / 1000)

/* tcp_congestion: the order is src/tcp/cc.c's registry order, so the index is brisk_cc_get()'s. */
static const char *const congestion_names[] = {"newreno", "cubic", NULL};
#define CONGESTION_MAX (sizeof(congestion_names) / sizeof(congestion_names[0]) - 2)
/* tcp_rtt_estimator and tcp_loss_timers: brisk's RFC arithmetic (0) or Linux 6.x's (1), enum brisk_compat. */
static const char *const estimator_names[] = {"rfc6298", "linux", NULL};
static const char *const loss_timer_names[] = {"rfc8985", "linux", NULL};
/* tcp_cubic: CUBIC's arithmetic, RFC 9438 with HyStart++ (0) or Linux 6.x's tcp_cubic.c (1), brisk_compat. */
static const char *const cubic_names[] = {"rfc9438", "linux", NULL};

#define VALKIND_UINT       BRISK_VAL_UINT
#define VALKIND_BOOL       BRISK_VAL_BOOL
#define VALKIND_SIZE       BRISK_VAL_SIZE
#define VALKIND_TIME       BRISK_VAL_TIME
#define VALKIND_RATE       BRISK_VAL_RATE
/* tcp_syn_icmp_errors: the index is the value src/tcp/icmp_err.c tests (TCP_SYN_ICMP_*). */
static const char *const syn_icmp_names[] = {"rfc1122", "linux", NULL};
#define SYN_ICMP_MAX (sizeof(syn_icmp_names) / sizeof(syn_icmp_names[0]) - 2)
/* tcp_rcv_window: the index is the value src/tcp/rwin.c tests (TCP_RWIN_*). */
static const char *const rcv_window_names[] = {"rfc9293", "linux", NULL};
#define RCV_WINDOW_MAX (sizeof(rcv_window_names) / sizeof(rcv_window_names[0]) - 2)

/* tcp_tsq_rule: the index is enum brisk_tsq_rule, src/tcp/tsq.c's table of limit functions. */
static const char *const tsq_rule_names[] = {"cap", "floor", "ceiling", NULL};
_Static_assert(sizeof(tsq_rule_names) / sizeof(tsq_rule_names[0]) == BRISK_TSQ_RULES + 1,
               "a name for every TSQ rule");

#define VALKIND_CONGESTION BRISK_VAL_CHOICE
#define VALKIND_SYN_ICMP   BRISK_VAL_CHOICE
#define VALKIND_ESTIMATOR  BRISK_VAL_CHOICE
#define VALKIND_LOSSTIMERS BRISK_VAL_CHOICE
#define VALKIND_CUBIC      BRISK_VAL_CHOICE
#define VALKIND_RCV_WINDOW BRISK_VAL_CHOICE
#define VALKIND_TSQ_RULE   BRISK_VAL_CHOICE
#define CHOICES_UINT       NULL
#define CHOICES_BOOL       NULL
#define CHOICES_SIZE       NULL
#define CHOICES_TIME       NULL
#define CHOICES_RATE       NULL
#define CHOICES_CONGESTION congestion_names
#define CHOICES_SYN_ICMP   syn_icmp_names
#define CHOICES_ESTIMATOR  estimator_names
#define CHOICES_LOSSTIMERS loss_timer_names
#define CHOICES_CUBIC      cubic_names
#define CHOICES_RCV_WINDOW rcv_window_names
#define CHOICES_TSQ_RULE   tsq_rule_names

/* X(name, kind, field, field type, default, min, max, help) */
#define BRISK_SETTINGS(X)                                                                                    \
    X(seed, UINT, seed, uint64_t, 1, 0, UINT64_MAX, "seed for the stack's PRNG and keyed hashes")            \
    X(ip_default_ttl, UINT, ip_default_ttl, uint32_t, 64, 1, 255, "TTL of IPv4 datagrams the stack sends")   \
    X(arp_reachable, TIME, arp_reachable_ns, uint64_t, 30 * SEC, 1 * MS, 86400 * SEC,                        \
      "time a resolved neighbour is trusted before it is re-probed")                                         \
    X(arp_retrans, TIME, arp_retrans_ns, uint64_t, 1 * SEC, 1 * MS, 3600 * SEC,                              \
      "interval between ARP requests while resolving")                                                       \
    X(arp_retries, UINT, arp_retries, uint32_t, 3, 1, 100, "ARP requests before resolution fails")           \
    X(unres_qlen, UINT, unres_qlen, uint32_t, 16, 0, 65536,                                                  \
      "packets held per unresolved neighbour (excess dropped, oldest first)")                                \
    X(arp_unres_max, UINT, arp_unres_max, uint32_t, 64, 1, 1u << 20,                                         \
      "neighbour entries that may be resolving at once (bounds ARP requests and held packets)")              \
    X(gc_thresh3, UINT, gc_thresh3, uint32_t, 1024, 4, 1u << 20, "neighbour cache entries (hard maximum)")   \
    X(icmp_ratelimit, TIME, icmp_ratelimit_ns, uint64_t, 1 * MS, 0, 60 * SEC,                                \
      "token interval of the ICMP error rate limit (0 = unlimited)")                                         \
    X(icmp_ratelimit_burst, UINT, icmp_ratelimit_burst, uint32_t, 50, 1, 1u << 20,                           \
      "ICMP errors that may be sent back to back")                                                           \
    X(ipv6, BOOL, ipv6, uint32_t, 1, 0, 1,                                                                   \
      "IPv6 on every device: link-local address, neighbour discovery, ICMPv6 (0: 0x86DD frames dropped)")   \
    X(ipfrag_high_thresh, SIZE, ipfrag_high_thresh, uint64_t, 4ull << 20, 0, 1ull << 32,                     \
      "bytes IPv4 reassembly may hold (0: no reassembly, every fragment dropped)")                          \
    X(ipfrag_time, TIME, ipfrag_time_ns, uint64_t, 30 * SEC, 1 * MS, 3600 * SEC,                             \
      "time a datagram may take to reassemble, from its first fragment")                                     \
    X(ipfrag_evict, BOOL, ipfrag_evict, uint32_t, 1, 0, 1,                                                    \
      "reassembly memory full: drop the oldest datagrams to make room (0: drop the fragment, Linux 4.17+)")  \
    X(ip6frag_high_thresh, SIZE, ip6frag_high_thresh, uint64_t, 4ull << 20, 0, 1ull << 32,                   \
      "bytes IPv6 reassembly may hold (0: no reassembly, every fragment dropped)")                          \
    X(ip6frag_time, TIME, ip6frag_time_ns, uint64_t, 60 * SEC, 1 * MS, 3600 * SEC,                           \
      "time an IPv6 packet may take to reassemble, from its first fragment")                                \
    X(route_min_pmtu, UINT, route_min_pmtu, uint32_t, 552, 68, 65535,                                        \
      "path MTU discovery: an ICMP report of a smaller MTU sets this one (Linux's route/min_pmtu)")           \
    X(route_mtu_expires, TIME, route_mtu_expires_ns, uint64_t, 600 * SEC, 1 * MS, 86400 * SEC,               \
      "how long a path MTU lowered by ICMP is kept before the device MTU is tried again (RFC 1191 §6.3)")    \
    X(bql, BOOL, bql, uint32_t, 1, 0, 1, "byte queue limits on devices whose driver supports them")          \
    X(bql_limit_min, SIZE, bql_limit_min, uint32_t, 0, 0, 1u << 30, "BQL: smallest ring byte limit")         \
    X(bql_limit_max, SIZE, bql_limit_max, uint32_t, 1u << 30, 0, 1u << 30, "BQL: largest ring byte limit")   \
    X(bql_hold_time, TIME, bql_hold_time_ns, uint64_t, 1 * SEC, 1 * MS, 60 * SEC,                            \
      "BQL: the limit shrinks after it has had slack for this long")                                         \
    X(gro, BOOL, gro, uint32_t, 1, 0, 1, "coalesce in-order TCP segments of a received batch (GRO)")         \
    X(tcp_tlp, BOOL, tcp_tlp, uint32_t, 1, 0, 1, "tail loss probes (RFC 8985 §7) on SACK connections")       \
    X(tcp_recovery_probe, BOOL, tcp_recovery_probe, uint32_t, 1, 0, 1,                                       \
      "brisk: a probe of new data after 2 SRTT of silence in fast recovery (a lost last ACK, not an RTO)")   \
    X(tcp_loss_timers, LOSSTIMERS, tcp_loss_timers, uint32_t, 0, 0, 1,                                       \
      "TLP, RACK timers and PRR: rfc8985 (brisk) or linux (6.x: 2 srtt + 2 ms / rto_min, ms ticks, packets)")\
    X(tcp_timer_eager, BOOL, tcp_timer_eager, uint32_t, 0, 0, 1,                                             \
      "compat (Linux until 2019): re-arm RTO/TLP on every send and ACK, arm/cancel delayed ACKs each time")  \
    X(tcp_frto, BOOL, tcp_frto, uint32_t, 1, 0, 1, "F-RTO: detect and undo spurious timeouts (RFC 5682)")    \
    X(tcp_nosack_prr, BOOL, tcp_nosack_prr, uint32_t, 0, 0, 1,                                               \
      "compat (Linux): recovery without SACK counts duplicate ACKs as SACKed segments and sizes the window "  \
      "by PRR, not by RFC 6582's inflation")                                                                 \
    X(tcp_unsent_ack_reply, BOOL, tcp_unsent_ack_reply, uint32_t, 1, 0, 1,                                   \
      "answer an ACK of data never sent with an ACK in ESTABLISHED (RFC 9293; 0: drop it silently, Linux)")  \
    X(tcp_synack_data, BOOL, tcp_synack_data, uint32_t, 1, 0, 1,                                             \
      "queue text (and a FIN) carried by a SYN-ACK (RFC 9293 3.10.7.3; 0: discard it, Linux without TFO)")  \
    X(tcp_fin_delack, BOOL, tcp_fin_delack, uint32_t, 0, 0, 1,                                               \
      "compat (Linux): the peer's FIN in ESTABLISHED makes the connection interactive, so its ACK is "       \
      "delayed and may ride on our FIN; 0: the FIN is acknowledged at once")                                 \
    X(tcp_synrecv_reset, BOOL, tcp_synrecv_reset, uint32_t, 0, 0, 1,                                         \
      "compat (Linux): a SYN in the window of a half-open connection drops it and gets a RST "              \
      "(tcp_check_req); 0: a challenge ACK (RFC 5961 §4.2)")                                                 \
    X(pkt_pool_bytes, SIZE, pkt_pool_bytes, uint64_t, 64ull << 20, 1ull << 20, 1ull << 40,                   \
      "bound on packet-buffer memory per stack")                                                             \
    X(tcp_mem_bytes, SIZE, tcp_mem_bytes, uint64_t, 1ull << 30, 1ull << 20, 1ull << 40,                      \
      "bound on TCP send/receive buffer memory per stack")                                                   \
    X(tcp_sndbuf, SIZE, tcp_sndbuf, uint32_t, 4u << 20, 4096, 1u << 30,                                      \
      "default send buffer per connection")                                                                  \
    X(tcp_rcvbuf, SIZE, tcp_rcvbuf, uint32_t, 4u << 20, 4096, 1u << 30,                                      \
      "default receive buffer per connection (bounds the advertised window)")                                \
    X(tcp_sack, BOOL, tcp_sack, uint32_t, 1, 0, 1, "negotiate SACK (RFC 2018)")                              \
    X(tcp_timestamps, BOOL, tcp_timestamps, uint32_t, 1, 0, 1, "negotiate timestamps (RFC 7323)")            \
    X(tcp_window_scaling, BOOL, tcp_window_scaling, uint32_t, 1, 0, 1,                                       \
      "negotiate window scaling (RFC 7323)")                                                                 \
    X(tcp_initial_cwnd, UINT, tcp_initial_cwnd, uint32_t, 10, 1, 1000,                                       \
      "initial window, segments (RFC 6928)")                                                                 \
    X(tcp_min_snd_mss, UINT, tcp_min_snd_mss, uint32_t, 48, 48, 1460,                                        \
      "smallest send MSS whatever MSS the peer announces, before the timestamp option (Linux sysctl)")       \
    X(tcp_abc_limit, UINT, tcp_abc_limit, uint32_t, 2, 0, 64,                                                \
      "slow start: segments one ACK may add to cwnd (RFC 3465 L); 0 = every full segment acked (Linux)")     \
    X(tcp_cubic, CUBIC, tcp_cubic, uint32_t, 0, 0, 1,                                                        \
      "CUBIC: rfc9438 (brisk: bytes, HyStart++) or linux (6.x tcp_cubic.c: packets, jiffies, HyStart)")      \
    X(tcp_slow_start_after_idle, UINT, tcp_slow_start_after_idle, uint32_t, 2, 0, 2,                         \
      "idle > RTO: 0 keep cwnd, 1 halve per RTO idle down to min(IW, cwnd) (Linux), 2 min(IW, cwnd) (RFC)")  \
    X(tcp_rto_initial, TIME, tcp_rto_initial_ns, uint64_t, 1 * SEC, 1 * MS, 600 * SEC,                       \
      "RTO before the first RTT sample (RFC 6298)")                                                          \
    X(tcp_rto_min, TIME, tcp_rto_min_ns, uint64_t, 200 * MS, 1000, 600 * SEC, "lower bound of the RTO")      \
    X(tcp_rto_max, TIME, tcp_rto_max_ns, uint64_t, 120 * SEC, 1 * MS, 3600 * SEC, "upper bound of the RTO")  \
    X(tcp_rtt_estimator, ESTIMATOR, tcp_rtt_estimator, uint32_t, 0, 0, 1,                                    \
      "RTO estimator: rfc6298 (brisk) or linux (srtt + max(mdev, rto_min) per RTT, ms ticks)")               \
    X(tcp_delack_min, TIME, tcp_delack_min_ns, uint64_t, 40 * MS, 0, 10 * SEC,                               \
      "shortest delayed-ACK timeout")                                                                        \
    X(tcp_delack_max, TIME, tcp_delack_max_ns, uint64_t, 200 * MS, 1000, 10 * SEC,                           \
      "longest delayed-ACK timeout (RFC 1122: at most 500 ms)")                                              \
    X(tcp_comp_sack_nr, UINT, tcp_comp_sack_nr, uint32_t, 0, 0, 255,                                         \
      "compat (Linux 4.18+, 44): out-of-order segments past the third duplicate ACK whose ACKs are held and "  \
      "sent as one (SACK compression); 0: every one is acknowledged at once (RFC 5681 §4.2)")                 \
    X(tcp_comp_sack_delay, TIME, tcp_comp_sack_delay_ns, uint64_t, 1 * MS, 0, 1 * SEC,                       \
      "longest a compressed ACK waits (Linux's tcp_comp_sack_delay_ns; also at most 5 % of the RTT)")         \
    X(tcp_comp_sack_slack, TIME, tcp_comp_sack_slack_ns, uint64_t, 100 * US, 0, 1 * SEC,                     \
      "the compressed-ACK timer's slack, added to its delay (Linux's tcp_comp_sack_slack_ns)")                \
    X(tcp_syn_retries, UINT, tcp_syn_retries, uint32_t, 6, 1, 127,                                           \
      "SYN retransmissions before connect fails")                                                            \
    X(tcp_syn_linear_timeouts, UINT, tcp_syn_linear_timeouts, uint32_t, 0, 0, 127,                           \
      "SYN-SENT timeouts that keep the initial RTO before it doubles, in addition to tcp_syn_retries "      \
      "(Linux sysctl; 4 on Linux 6.18: SYNs at 1, 2, 3, 4, 5 s, then 7, 11, ...)")                           \
    X(tcp_synack_retries, UINT, tcp_synack_retries, uint32_t, 5, 1, 127,                                     \
      "SYN-ACK retransmissions before a half-open connection is dropped")                                    \
    X(tcp_retries2, UINT, tcp_retries2, uint32_t, 15, 1, 127,                                                \
      "data retransmissions (RTO backoffs) before the connection is aborted")                                \
    X(tcp_retries2_timed, BOOL, tcp_retries2_timed, uint32_t, 0, 0, 1,                                       \
      "compat (Linux): abort once the first retransmission is as old as tcp_retries2 backoffs from "        \
      "tcp_rto_min would make it (retransmits_timed_out; 924.6 s for 15), whatever the RTO; 0: after "       \
      "tcp_retries2 timeouts")                                                                               \
    X(tcp_fin_timeout, TIME, tcp_fin_timeout_ns, uint64_t, 60 * SEC, 1 * MS, 3600 * SEC,                     \
      "how long an orphaned connection waits in FIN-WAIT-2")                                                 \
    X(tcp_time_wait, TIME, tcp_time_wait_ns, uint64_t, 60 * SEC, 0, 3600 * SEC,                              \
      "TIME-WAIT duration (2 MSL)")                                                                          \
    X(tcp_keepalive_time, TIME, tcp_keepalive_time_ns, uint64_t, 7200 * SEC, 1 * SEC, 86400 * SEC * 7,       \
      "idle time before keepalive probes (when enabled on the socket)")                                      \
    X(tcp_keepalive_intvl, TIME, tcp_keepalive_intvl_ns, uint64_t, 75 * SEC, 1 * SEC, 86400 * SEC,           \
      "interval between keepalive probes")                                                                   \
    X(tcp_keepalive_probes, UINT, tcp_keepalive_probes, uint32_t, 9, 1, 127,                                 \
      "unanswered probes before abort")                                                                      \
    X(tcp_max_syn_backlog, UINT, tcp_max_syn_backlog, uint32_t, 256, 1, 1u << 20,                            \
      "half-open connections per listener")                                                                  \
    X(tcp_syncookies, UINT, tcp_syncookies, uint32_t, 1, 0, 2,                                               \
      "SYN cookies (RFC 4987): 0 off, 1 when the SYN queue is full, 2 for every SYN")                        \
    X(tcp_ooo_max_segs, UINT, tcp_ooo_max_segs, uint32_t, 65536, 1, 1u << 20,                                \
      "out-of-order pieces held per connection (the receive buffer's memory bound usually binds first)")     \
    X(tcp_max_tw_buckets, UINT, tcp_max_tw_buckets, uint32_t, 65536, 0, 1u << 24,                            \
      "connections held in TIME-WAIT per stack; beyond it a closing connection skips TIME-WAIT")             \
    X(tcp_challenge_ack_limit, UINT, tcp_challenge_ack_limit, uint32_t, 1000, 1, 1u << 30,                   \
      "challenge ACKs per second per stack (RFC 5961 §7)")                                                   \
    X(tcp_invalid_ratelimit, TIME, tcp_invalid_ratelimit_ns, uint64_t, 0, 0, 60 * SEC,                       \
      "compat (Linux, 500ms): per connection, at most one ACK per this long answers out-of-window or PAWS-"  \
      "failed segments without data, and challenge ACKs (an ACK-loop limit); 0: every one is answered")      \
    X(tcp_rst_edges, BOOL, tcp_rst_edges, uint32_t, 0, 0, 1,                                                 \
      "compat (Linux 6.x): a RST also resets at RCV.NXT - 1 after the peer's FIN and at the right edge of "  \
      "the highest SACK block we send; 0: only at RCV.NXT (RFC 5961 §3.2), elsewhere a challenge ACK")       \
    X(tcp_tsq, BOOL, tcp_tsq, uint32_t, 1, 0, 1,                                                             \
      "TCP Small Queues: bound each connection's bytes below TCP")                                           \
    X(tcp_limit_output_bytes, SIZE, tcp_limit_output_bytes, uint32_t, 4u << 20, 2048, 1u << 30,              \
      "TSQ cap on a connection's bytes below TCP (truesize)")                                                \
    X(tcp_tsq_rule, TSQ_RULE, tcp_tsq_rule, uint32_t, BRISK_TSQ_CEILING, 0, BRISK_TSQ_RULES - 1,             \
      "TSQ budget: cap = the static cap (3.12), floor = max(cap, rate x hold) (3.13), ceiling = min(cap, "    \
      "max(2 bufs, rate x hold)) (3.19 on)")                                                                 \
    X(tcp_tsq_shortcut, BOOL, tcp_tsq_shortcut, uint32_t, 1, 0, 1,                                           \
      "TSQ never holds a connection with at most one segment unacknowledged (Linux 2016/2023)")              \
    X(tcp_pacing_shift, UINT, tcp_pacing_shift, uint32_t, 10, 0, 20,                                         \
      "TSQ hold time = 1 s >> shift (10: about 1 ms of data at the pacing rate)")                            \
    X(tcp_tsq_adaptive, BOOL, tcp_tsq_adaptive, uint32_t, 1, 0, 1,                                           \
      "brisk: hold time also at least tcp_tsq_latency_factor x the device's measured TX-completion latency") \
    X(tcp_tsq_latency_factor, UINT, tcp_tsq_latency_factor, uint32_t, 2, 1, 64,                              \
      "multiple of the TX-completion latency the adaptive TSQ hold time covers")                             \
    X(tcp_buf_overhead, SIZE, tcp_buf_overhead, uint32_t, 790, 0, 65536,                                     \
      "bytes charged per packet on top of its frame (an skb's truesize: 2304 for a 1514-byte frame)")        \
    X(tcp_pacing_ss_ratio, UINT, tcp_pacing_ss_ratio, uint32_t, 200, 1, 10000,                               \
      "pacing rate in slow start, % of cwnd / srtt")                                                         \
    X(tcp_pacing_ca_ratio, UINT, tcp_pacing_ca_ratio, uint32_t, 120, 1, 10000,                               \
      "pacing rate in congestion avoidance, % of cwnd / srtt")                                               \
    X(tcp_pacing, BOOL, tcp_pacing, uint32_t, 1, 0, 1,                                                       \
      "pace each connection at its pacing rate (earliest departure time per packet, internal timer)")        \
    X(tcp_pacing_catchup, TIME, tcp_pacing_catchup_ns, uint64_t, 250 * MS / 1000, 0, 1 * SEC,                \
      "brisk: a pacing timer that fires late sends what it is late by back to back, up to this much")        \
    X(tcp_tso, BOOL, tcp_tso, uint32_t, 1, 0, 1, "send TSO super-segments to devices that segment (GSO)")    \
    X(tcp_min_tso_segs, UINT, tcp_min_tso_segs, uint32_t, 2, 1, 64, "smallest TSO burst, segments")          \
    X(tcp_tso_rtt_log, UINT, tcp_tso_rtt_log, uint32_t, 0, 0, 31,                                            \
      "compat (Linux 5.18+, 9): TSO bursts of a connection whose min RTT is R us take 64 KB >> (R >> this) " \
      "more bytes (short paths get bigger bursts); 0 = off")                                                 \
    X(tcp_sw_gso, BOOL, tcp_sw_gso, uint32_t, 0, 0, 1,                                                       \
      "compat (Linux): send as to a device that segments whatever the device (Linux's software GSO): writes " \
      "fill pieces of half the largest window (up to 64 KB), each send is a packet of up to min(cwnd / 2, "  \
      "autosized) segments cut from one piece, with PSH on its last segment; 0: segment by segment on a "    \
      "device without GSO")                                                                                  \
    X(tcp_half_window_mss, BOOL, tcp_half_window_mss, uint32_t, 0, 0, 1,                                     \
      "compat (Linux tcp_bound_to_half_wnd): segments at most half the largest window the peer offered "     \
      "(the whole window if it is under 536 bytes)")                                                         \
    X(tcp_autocorking, BOOL, tcp_autocorking, uint32_t, 1, 0, 1,                                             \
      "hold a small tail while this connection's data is still below TCP (resumed on TX completion)")        \
    X(tcp_autocork_first_packet, BOOL, tcp_autocork_first_packet, uint32_t, 0, 0, 1,                         \
      "compat (Linux 3.14-rc, before a181ceb501b3): auto-corking may hold a segment with nothing in flight") \
    X(tcp_resume_nagle, BOOL, tcp_resume_nagle, uint32_t, 0, 0, 1,                                           \
      "compat (Linux 3.14-rc, before bf06200e732d): the TX-completion resume runs with Nagle forced on")     \
    X(tcp_push_each_write, BOOL, tcp_push_each_write, uint32_t, 0, 0, 1,                                     \
      "compat (Linux): PSH on the last segment of every write and on forced pushes; 0: PSH on the segment "  \
      "that empties the send queue or ends a record (RFC 9293 MUST-61), so bursts keep receivers' GRO "      \
      "batches whole")                                                                                       \
    X(tcp_cork_probe_timer, BOOL, tcp_cork_probe_timer, uint32_t, 0, 0, 1,                                   \
      "compat (Linux): a TCP_CORK / MSG_MORE tail leaves on the zero-window probe timer, max(RTO, 200 ms) "  \
      "once nothing is in flight, restarted by each ACK; 0: at most 200 ms after the hold began")            \
    X(tcp_sws_partial, BOOL, tcp_sws_partial, uint32_t, 1, 0, 1,                                             \
      "a segment cut short by the peer's window goes if it is at least half the largest window offered or "  \
      "nothing is in flight (RFC 9293 §3.8.6.2.1); 0 (Linux): only whole segments, a window-sized piece "   \
      "from the probe timer")                                                                                \
    X(tcp_wspace_hysteresis, BOOL, tcp_wspace_hysteresis, uint32_t, 0, 0, 1,                                 \
      "compat (Linux): a socket is writable (poll, BRISK_EV_WRITABLE) only once free space is at least "     \
      "half of what is queued (sk_stream_min_wspace); 0: whenever the send buffer has room, so a writer "    \
      "tops it up as segments leave and the bytes are still in cache when they are sent")                  \
    X(tcp_congestion, CONGESTION, tcp_congestion, uint32_t, 1, 0, CONGESTION_MAX,                            \
      "congestion control of new connections: newreno or cubic")                                           \
    X(tcp_syn_icmp_errors, SYN_ICMP, tcp_syn_icmp_errors, uint32_t, 0, 0, SYN_ICMP_MAX,                      \
      "ICMP errors that end an opening connection: rfc1122 = hard ones only (port / protocol unreachable; "  \
      "the rest are kept and reported if the open times out, RFC 1122 4.2.3.9), linux = all (tcp_v4_err)")  \
    X(tcp_rcv_window, RCV_WINDOW, tcp_rcv_window, uint32_t, 0, 0, RCV_WINDOW_MAX,                            \
      "advertised window: rfc9293 = the free payload space of tcp_rcvbuf (RFC 9293 3.8.6.2.2 receiver SWS "  \
      "avoidance); linux = Linux 6.x's, from receive memory as Linux charges it (truesize, rcv_ssthresh, "   \
      "autotuning); tcp_rcvbuf and SO_RCVBUF are then Linux's sk_rcvbuf")                                   \
    X(tcp_rmem_max, SIZE, tcp_rmem_max, uint32_t, 6u << 20, 4096, 1u << 30,                                  \
      "linux window: the receive buffer autotuning grows to at most, and the scale is chosen for "           \
      "(tcp_rmem[2])")                                                                                       \
    X(rmem_max, SIZE, rmem_max, uint32_t, 4u << 20, 4096, 1u << 30,                                          \
      "linux window: the largest SO_RCVBUF (doubled as Linux does), also considered by the window scale "    \
      "(net.core.rmem_max)")                                                                                 \
    X(tcp_app_win, UINT, tcp_app_win, uint32_t, 31, 0, 31,                                                   \
      "linux window: 1/2^n of the buffer is kept from the window for the application (0: none)")            \
    X(tcp_moderate_rcvbuf, BOOL, tcp_moderate_rcvbuf, uint32_t, 1, 0, 1,                                     \
      "linux window: grow the receive buffer to twice what the application reads per round trip (DRS)")   \
    X(udp_rcvbuf, SIZE, udp_rcvbuf, uint32_t, 212992, 2048, 1u << 30,                                       \
      "default receive buffer per UDP socket: truesize of queued datagrams (Linux net.core.rmem_default)")

struct setting {
    struct brisk_setting_desc desc;
    size_t offset;
    size_t width; /* 4 or 8 bytes */
    uint64_t dflt, min, max;
};

static const struct setting table[] = {
#define ROW(name, kind, field, type, dflt, min, max, help)                                                   \
    {{#name, VALKIND_##kind, help, CHOICES_##kind},                                                          \
     offsetof(struct brisk_settings, field),                                                                 \
     sizeof(type),                                                                                           \
     (dflt),                                                                                                 \
     (min),                                                                                                  \
     (max)},
    BRISK_SETTINGS(ROW)
#undef ROW
};

#define NSETTINGS (sizeof(table) / sizeof(table[0]))

static void store(struct brisk_settings *s, const struct setting *d, uint64_t v)
{
    uint8_t *p = (uint8_t *)s + d->offset;
    if (d->width == sizeof(uint32_t)) {
        uint32_t v32 = (uint32_t)v;
        memcpy(p, &v32, sizeof(v32));
    } else {
        memcpy(p, &v, sizeof(v));
    }
}

static uint64_t load(const struct brisk_settings *s, const struct setting *d)
{
    const uint8_t *p = (const uint8_t *)s + d->offset;
    if (d->width == sizeof(uint32_t)) {
        uint32_t v32;
        memcpy(&v32, p, sizeof(v32));
        return v32;
    }
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void brisk_settings_default(struct brisk_settings *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < NSETTINGS; i++)
        store(s, &table[i], table[i].dflt);
}

static int parse_choice(const char *const *choices, const char *value, uint64_t *out)
{
    for (uint64_t i = 0; choices && choices[i]; i++) {
        if (strcmp(choices[i], value) == 0) {
            *out = i;
            return BRISK_OK;
        }
    }
    return BRISK_ERR_INVAL;
}

static int parse_value(const struct brisk_setting_desc *d, const char *value, uint64_t *out)
{
    switch (d->kind) {
    case BRISK_VAL_UINT:
        return brisk_parse_uint(value, out);
    case BRISK_VAL_SIZE:
        return brisk_parse_size(value, out);
    case BRISK_VAL_TIME:
        return brisk_parse_time(value, out);
    case BRISK_VAL_RATE:
        return brisk_parse_rate(value, out);
    case BRISK_VAL_CHOICE:
        return parse_choice(d->choices, value, out);
    case BRISK_VAL_BOOL: {
        int b;
        int rc = brisk_parse_bool(value, &b);
        if (rc == BRISK_OK)
            *out = (uint64_t)b;
        return rc;
    }
    }
    return BRISK_ERR_INVAL;
}

int brisk_settings_set_kv(struct brisk_settings *s, const char *name, const char *value)
{
    if (!s || !name || !value)
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < NSETTINGS; i++) {
        const struct setting *d = &table[i];
        if (strcmp(d->desc.name, name) != 0)
            continue;
        uint64_t v;
        int rc = parse_value(&d->desc, value, &v);
        if (rc != BRISK_OK)
            return rc;
        if (v < d->min || v > d->max)
            return BRISK_ERR_RANGE;
        store(s, d, v);
        return BRISK_OK;
    }
    return BRISK_ERR_NOENT;
}

int brisk_settings_set(struct brisk_settings *s, const char *assignment)
{
    if (!s || !assignment)
        return BRISK_ERR_INVAL;
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return BRISK_ERR_INVAL;
    char name[64];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof(name))
        return BRISK_ERR_NOENT;
    memcpy(name, assignment, n);
    name[n] = '\0';
    return brisk_settings_set_kv(s, name, eq + 1);
}

size_t brisk_settings_count(void)
{
    return NSETTINGS;
}

const struct brisk_setting_desc *brisk_settings_desc(size_t i)
{
    return i < NSETTINGS ? &table[i].desc : NULL;
}

uint64_t brisk_settings_value(const struct brisk_settings *s, size_t i)
{
    return i < NSETTINGS ? load(s, &table[i]) : 0;
}

const char *brisk_settings_choice(size_t i, uint64_t v)
{
    if (i >= NSETTINGS || table[i].desc.kind != BRISK_VAL_CHOICE || v > table[i].max)
        return NULL;
    return table[i].desc.choices[v];
}

/* Used by brisk_stack_new: every field within its bounds. */
int brisk_settings_check(const struct brisk_settings *s);
int brisk_settings_check(const struct brisk_settings *s)
{
    for (size_t i = 0; i < NSETTINGS; i++) {
        uint64_t v = load(s, &table[i]);
        if (v < table[i].min || v > table[i].max)
            return BRISK_ERR_RANGE;
    }
    return BRISK_OK;
}
