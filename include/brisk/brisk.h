/*
 * brisk.h — the public API of the brisk userspace TCP/IP stack.
 *
 * brisk is a sans-IO stack: it makes no system calls and reads no clock. Every entry point takes `now`,
 * a monotonic time in nanoseconds chosen by the caller (the simulator's virtual clock, or the real-time
 * loop's CLOCK_MONOTONIC). A process may run any number of stacks; they share nothing.
 *
 * The life of a stack:
 *   brisk_settings_default(&s); brisk_settings_set(&s, "arp_retries=5"); s.seed = 42;
 *   st = brisk_stack_new(&s);                                (NULL settings: the defaults)
 *   dev = brisk_netdev_add(st, &cfg, &ops, driver, &err);    (netdev.h)
 *   loop: brisk_stack_input(st, dev, frame, len, now) for each received frame,
 *         brisk_netdev_tx_done(dev, pkt, now) for each completed transmission,
 *         brisk_stack_poll(st, now) whenever now reaches brisk_stack_next_deadline(st).
 *
 * Errors are negative BRISK_ERR_* values; each function's comment lists the ones it returns.
 */
#ifndef BRISK_BRISK_H
#define BRISK_BRISK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "No deadline": brisk_stack_next_deadline() returns it when nothing is scheduled. */
#define BRISK_TIME_NONE UINT64_MAX

#define BRISK_NSEC_PER_USEC 1000ull
#define BRISK_NSEC_PER_MSEC 1000000ull
#define BRISK_NSEC_PER_SEC  1000000000ull

/* Error codes. Every brisk function that can fail returns one of these (negative) or a value >= 0. */
enum brisk_err {
    BRISK_OK = 0,
    BRISK_ERR_INVAL = -1,    /* an argument is invalid (null, out of range, malformed) */
    BRISK_ERR_NOMEM = -2,    /* an allocation failed or a configured memory bound was reached */
    BRISK_ERR_NOENT = -3,    /* no such name (setting, device, entry) */
    BRISK_ERR_RANGE = -4,    /* a value parsed but lies outside the allowed range */
    BRISK_ERR_NOROUTE = -5,  /* no device prefix or gateway covers the destination */
    BRISK_ERR_AGAIN = -6,    /* the operation would block: retry after the next event */
    BRISK_ERR_BUSY = -7,     /* the device cannot take a packet now (TX ring full) */
    BRISK_ERR_NOBUFS = -8,   /* the packet-buffer pool is exhausted */
    BRISK_ERR_MSGSIZE = -9,  /* the message does not fit in one packet */
    BRISK_ERR_EXIST = -10,   /* the object already exists (address, device) */
    BRISK_ERR_UNREACH = -11, /* the host is unreachable (ARP resolution failed; ICMP host unreachable or time
                                exceeded: EHOSTUNREACH) */
    BRISK_ERR_TOOMANY = -12, /* a fixed-size table is full */
    BRISK_ERR_CONNREFUSED = -13,  /* the peer answered the SYN with a reset (or ICMP port unreachable) */
    BRISK_ERR_RESET = -14,        /* the connection was reset by the peer (in CLOSE-WAIT: BRISK_ERR_PIPE) */
    BRISK_ERR_TIMEDOUT = -15,     /* retransmissions (or keepalive probes) went unanswered */
    BRISK_ERR_NOTCONN = -16,      /* the socket is not connected */
    BRISK_ERR_ISCONN = -17,       /* the socket is already connected or connecting */
    BRISK_ERR_ADDRINUSE = -18,    /* the local address/port is taken */
    BRISK_ERR_PIPE = -19,         /* sending after shutdown or close */
    BRISK_ERR_INPROGRESS = -20,   /* connect started; BRISK_EV_CONNECTED or an error follows */
    BRISK_ERR_ADDRNOTAVAIL = -21, /* no such local address, or no free ephemeral port */
    /* ICMP errors that ended a connection attempt (or, kept as its soft error, a connection that timed out),
     * one per errno Linux reports for them (icmp_err_convert), so a POSIX facade can map them back. */
    BRISK_ERR_NETUNREACH = -22, /* ICMP net unreachable / unknown / prohibited (ENETUNREACH) */
    BRISK_ERR_HOSTDOWN = -23,   /* ICMP destination host unknown (EHOSTDOWN) */
    BRISK_ERR_NONET = -24,      /* ICMP source host isolated (ENONET) */
    BRISK_ERR_NOPROTOOPT = -25, /* ICMP protocol unreachable: the peer does not run TCP (ENOPROTOOPT) */
    BRISK_ERR_PROTO = -26,      /* ICMP parameter problem (EPROTO) */
    BRISK_ERR_OPNOTSUPP = -27,  /* ICMP source route failed (EOPNOTSUPP) */
    BRISK_ERR_AFNOSUPPORT = -28, /* an address of a family the stack does not run (IPv6 with ipv6 off; UDP) */
};

/* A short English description of a BRISK_ERR_* code ("invalid argument"); never NULL. */
const char *brisk_strerror(int err);
/* The code's name as it is spelled here ("BRISK_ERR_RESET"), for logs and JSON; "BRISK_ERR_UNKNOWN" for a
 * value that is not a code; never NULL. */
const char *brisk_error_name(int err);

/* ---------------------------------------------------------------------------------------------------------
 * Settings. Names follow Linux sysctls where one exists. Every field can be set by name with the shared value
 * syntax (see brisk_parse_* below): "arp_retries=5", "arp_reachable=30s", "pkt_pool_bytes=64M".
 * ------------------------------------------------------------------------------------------------------- */
struct brisk_settings {
    uint64_t seed;                 /* keys the stack's PRNG and hashes; same seed => same behaviour */
    uint32_t ip_default_ttl;       /* TTL of emitted IPv4 packets (Linux net.ipv4.ip_default_ttl) */
    uint64_t arp_reachable_ns;     /* how long a resolved neighbour stays valid (base_reachable_time) */
    uint64_t arp_retrans_ns;       /* interval between ARP requests for an unresolved neighbour */
    uint32_t arp_retries;          /* requests sent before resolution fails (mcast_solicit) */
    uint32_t unres_qlen;           /* packets queued per unresolved neighbour (Linux neigh unres_qlen) */
    uint32_t arp_unres_max;        /* neighbours resolving at once; a new one beyond is refused (brisk) */
    uint32_t gc_thresh3;           /* neighbour entries per stack (Linux gc_thresh3); see docs/design.md */
    uint64_t icmp_ratelimit_ns;    /* minimum spacing of ICMP errors, as a token bucket (0 = unlimited) */
    uint32_t icmp_ratelimit_burst; /* token bucket depth for ICMP errors */
    uint32_t ipv6;                 /* IPv6 on every device: link-local address, ND, ICMPv6 (docs/ipv6.md) */
    uint64_t ipfrag_high_thresh;   /* bytes held by IPv4 reassembly (net.ipv4.ipfrag_high_thresh; 0: none) */
    uint64_t ipfrag_time_ns;       /* reassembly timeout from a datagram's first fragment (ipfrag_time) */
    uint32_t ipfrag_evict;         /* full: evict the oldest datagrams (brisk) or drop the fragment (Linux) */
    uint64_t ip6frag_high_thresh;  /* bytes held by IPv6 reassembly (net.ipv6.ip6frag_high_thresh; 0: none) */
    uint64_t ip6frag_time_ns;      /* IPv6 reassembly timeout (ip6frag_time); ipfrag_evict serves both */
    uint32_t route_min_pmtu;       /* path MTU discovery: the smallest MTU an ICMP report may set (552) */
    uint64_t route_mtu_expires_ns; /* ... and how long a lowered path MTU is kept (10 min) */
    uint32_t bql;                  /* byte queue limits on devices that support them (BRISK_NETDEV_CAP_BQL) */
    uint32_t bql_limit_min; /* BQL limit bounds, bytes (Linux byte_queue_limits/limit_min, limit_max) */
    uint32_t bql_limit_max;
    uint64_t bql_hold_time_ns; /* how long the limit must have been too big before it shrinks */
    uint32_t gro; /* coalesce in-order TCP segments of a batch handed to brisk_stack_input_batch (netdev.h) */
    uint32_t tcp_tlp;            /* tail loss probes (RFC 8985 §7) on SACK connections */
    uint32_t tcp_recovery_probe; /* brisk: probes in fast recovery too (tlp.c); the linux-* profiles: 0 */
    uint32_t tcp_loss_timers;    /* TLP / RACK timer arithmetic: enum brisk_compat (docs/recovery.md) */
    uint32_t tcp_timer_eager;    /* compat: re-arm the retransmit and delayed-ACK timers on every event */
    uint32_t tcp_frto;           /* F-RTO: detect and undo spurious retransmission timeouts (RFC 5682) */
    uint32_t tcp_nosack_prr;     /* compat: recovery without SACK the Linux way (docs/recovery.md) */
    uint32_t tcp_unsent_ack_reply; /* ACK an ACK of unsent data in ESTABLISHED (0: drop silently, Linux) */
    uint32_t tcp_synack_data;      /* queue a SYN-ACK's text (0: discard it, Linux without Fast Open) */
    uint32_t tcp_fin_delack;       /* delay the ACK of the FIN that ends ESTABLISHED (Linux's pingpong) */
    uint32_t tcp_synrecv_reset;    /* an in-window SYN drops a half-open connection, with a RST (Linux) */
    uint64_t pkt_pool_bytes;     /* bound on packet-buffer memory per stack */
    uint64_t tcp_mem_bytes;      /* bound on TCP buffer memory (send + receive chunks) per stack */
    uint32_t tcp_sndbuf;         /* default send buffer per connection, bytes */
    uint32_t tcp_rcvbuf;         /* default receive buffer per connection, bytes */
    uint32_t tcp_sack;           /* negotiate SACK-permitted (RFC 2018) */
    uint32_t tcp_timestamps;     /* negotiate timestamps (RFC 7323) */
    uint32_t tcp_window_scaling; /* negotiate window scaling (RFC 7323) */
    uint32_t tcp_initial_cwnd;   /* initial congestion window, segments (RFC 6928) */
    uint32_t tcp_min_snd_mss;    /* floor of the send MSS whatever the peer announces (Linux sysctl) */
    uint32_t tcp_abc_limit;      /* slow start: most segments one ACK adds (RFC 3465 L); 0 = all (Linux) */
    uint32_t tcp_cubic;          /* CUBIC's arithmetic: enum brisk_compat (RFC 9438 / Linux's tcp_cubic.c) */
    uint32_t tcp_slow_start_after_idle; /* enum brisk_idle_restart (Linux sysctl of the same name) */
    uint64_t tcp_rto_initial_ns; /* RTO before the first sample (RFC 6298 §2.1) */
    uint64_t tcp_rto_min_ns;     /* RTO lower bound (Linux 200 ms) */
    uint64_t tcp_rto_max_ns;     /* RTO upper bound (Linux 120 s) */
    uint32_t tcp_rtt_estimator;  /* RTO estimator: enum brisk_compat (docs/timers.md) */
    uint64_t tcp_delack_min_ns;  /* delayed-ACK timeout bounds */
    uint64_t tcp_delack_max_ns;
    uint32_t tcp_comp_sack_nr;       /* SACK compression: ACKs held in a row for out-of-order data (0: off) */
    uint64_t tcp_comp_sack_delay_ns; /* ... held at most this long (and 5 % of the RTT) */
    uint64_t tcp_comp_sack_slack_ns; /* ... plus the timer's slack */
    uint32_t tcp_syn_retries;       /* SYN retransmissions before connect fails with BRISK_ERR_TIMEDOUT */
    uint32_t tcp_syn_linear_timeouts; /* SYN timeouts before the RTO doubles; they add to tcp_syn_retries */
    uint32_t tcp_synack_retries;    /* SYN-ACK retransmissions before a half-open child is dropped */
    uint32_t tcp_retries2;          /* RTO backoffs on data before the connection aborts */
    uint32_t tcp_retries2_timed;    /* tcp_retries2 as the time those backoffs take from rto_min (Linux) */
    uint64_t tcp_fin_timeout_ns;    /* orphaned FIN-WAIT-2 lifetime */
    uint64_t tcp_time_wait_ns;      /* TIME-WAIT duration */
    uint64_t tcp_keepalive_time_ns; /* keepalive: idle time, probe interval, probes */
    uint64_t tcp_keepalive_intvl_ns;
    uint32_t tcp_keepalive_probes;
    uint32_t tcp_max_syn_backlog; /* half-open connections per listener */
    uint32_t tcp_syncookies;      /* SYN cookies (RFC 4987): 0 off, 1 when the SYN queue is full, 2 always */
    uint32_t tcp_ooo_max_segs;    /* out-of-order pieces held per connection */
    uint32_t tcp_max_tw_buckets;  /* connections in TIME-WAIT per stack; beyond, closed at once */
    uint32_t tcp_challenge_ack_limit; /* RFC 5961 challenge ACKs per second per stack */
    uint64_t tcp_invalid_ratelimit_ns; /* per connection: one ACK per this to invalid segments (0: off) */
    uint32_t tcp_rst_edges; /* a RST resets at RCV.NXT - 1 after the peer's FIN, or at a SACK edge (Linux) */
    uint32_t tcp_tsq;                 /* TCP Small Queues on */
    uint32_t tcp_limit_output_bytes;  /* TSQ cap (Linux sysctl of the same name) */
    uint32_t tcp_tsq_rule; /* the TSQ budget: enum brisk_tsq_rule ("cap", "floor", "ceiling") */
    uint32_t tcp_tsq_shortcut; /* send anyway with at most one segment unacknowledged */
    uint32_t tcp_pacing_shift; /* TSQ hold time = 1 s >> shift */
    uint32_t tcp_tsq_adaptive; /* hold time >= factor x measured TX-completion latency (brisk) */
    uint32_t tcp_tsq_latency_factor;
    uint32_t tcp_buf_overhead;    /* per-packet memory charged on top of the frame (skb truesize) */
    uint32_t tcp_pacing_ss_ratio; /* pacing rate, % of cwnd/srtt, in slow start / congestion avoidance */
    uint32_t tcp_pacing_ca_ratio;
    uint32_t tcp_pacing;                /* internal pacing at the pacing rate */
    uint64_t tcp_pacing_catchup_ns;     /* a late pacing timer catches up by at most this much (brisk) */
    uint32_t tcp_tso;                   /* TSO super-segments on GSO devices */
    uint32_t tcp_min_tso_segs;          /* smallest TSO burst (Linux sysctl of the same name) */
    uint32_t tcp_tso_rtt_log;           /* bigger TSO bursts on short paths (Linux sysctl; 0 = off) */
    uint32_t tcp_sw_gso;                /* Linux's software GSO: pieces, packets, PSH per packet */
    uint32_t tcp_half_window_mss;       /* segments at most half the peer's largest window (Linux) */
    uint32_t tcp_autocorking;           /* auto-corking (Linux sysctl of the same name) */
    uint32_t tcp_autocork_first_packet; /* compat: may hold with nothing in flight (3.14-rc bug) */
    uint32_t tcp_resume_nagle;          /* compat: completion resume with Nagle forced on (3.14-rc bug) */
    uint32_t tcp_push_each_write;       /* PSH on every write's last segment and on forced pushes (Linux) */
    uint32_t tcp_cork_probe_timer; /* a held tail leaves on Linux's probe timer, not 200 ms after the hold */
    uint32_t tcp_sws_partial;      /* RFC 9293 §3.8.6.2.1 partial segments into a small window (0: Linux) */
    uint32_t tcp_wspace_hysteresis; /* writable only with free >= queued / 2 (1: Linux), else with any room */
    uint32_t tcp_congestion; /* congestion control of new connections: index of a name in the setting's
                                choices, "newreno" (0) or "cubic" (1) (Linux tcp_congestion_control) */
    uint32_t tcp_syn_icmp_errors; /* which ICMP errors end an opening connection: "rfc1122" (0, hard errors
                                     only) or "linux" (1, every error; tcp_v4_err) */
    uint32_t tcp_rcv_window;      /* the rules of the advertised window: "rfc9293" (0: the free payload
                                     space of tcp_rcvbuf) or "linux" (1: Linux 6.x's, from receive memory) */
    uint32_t tcp_rmem_max;        /* linux: autotuning's ceiling, and the window scale's (tcp_rmem[2]) */
    uint32_t rmem_max;            /* linux: the largest SO_RCVBUF, also sizing the scale (core.rmem_max) */
    uint32_t tcp_app_win;         /* linux: window_clamp keeps 1/2^n of the buffer for the application */
    uint32_t tcp_moderate_rcvbuf; /* linux: receive buffer autotuning (DRS) */
    uint32_t udp_rcvbuf;          /* default receive buffer per UDP socket, bytes (Linux rmem_default) */
};

/* Values of tcp_rtt_estimator and tcp_loss_timers: brisk's RFC arithmetic, or Linux 6.x's where the two
 * differ (the linux-* profiles set BRISK_COMPAT_LINUX). */
enum brisk_compat {
    BRISK_COMPAT_RFC = 0,   /* the RFC as brisk implements it ("rfc6298", "rfc8985") */
    BRISK_COMPAT_LINUX = 1, /* what Linux 6.x computes ("linux") */
};

/* Values of tcp_slow_start_after_idle: what the congestion window becomes when the connection sends again
 * after an idle period longer than the RTO. 0 and 1 mean what they mean in Linux. */
enum brisk_idle_restart {
    BRISK_IDLE_KEEP = 0,    /* keep cwnd */
    BRISK_IDLE_LINUX = 1,   /* halve cwnd per RTO idle, not below min(IW, cwnd) (Linux's tcp_cwnd_restart) */
    BRISK_IDLE_RFC5681 = 2, /* restart at min(IW, cwnd) (RFC 5681 §4.1): brisk's default */
};

/* Values of tcp_tsq_rule: how the TCP Small Queues budget follows the pacing rate (docs/transmit-engine.md;
 * the table of limit functions is src/tcp/tsq.c's). "cap" is Linux 3.12's, "floor" 3.13's, "ceiling" 3.19's
 * on; the names are the setting's values. */
enum brisk_tsq_rule {
    BRISK_TSQ_CAP = 0,     /* "cap": tcp_limit_output_bytes, whatever the rate */
    BRISK_TSQ_FLOOR = 1,   /* "floor": max(cap, rate x hold) */
    BRISK_TSQ_CEILING = 2, /* "ceiling": min(cap, max(2 buffers, rate x hold)): brisk's default */
    BRISK_TSQ_RULES,       /* how many there are */
};

/* Fills `s` with brisk's defaults. */
void brisk_settings_default(struct brisk_settings *s);

/* Sets one setting from "name=value". Returns BRISK_OK, BRISK_ERR_NOENT (unknown name), BRISK_ERR_INVAL
 * (malformed value) or BRISK_ERR_RANGE (value outside the setting's bounds); `s` is unchanged on error. */
int brisk_settings_set(struct brisk_settings *s, const char *assignment);

/* Same with name and value apart. */
int brisk_settings_set_kv(struct brisk_settings *s, const char *name, const char *value);

/* Describes the settings for tools (listing, JSON). `i` in [0, brisk_settings_count()). */
enum brisk_value_kind {
    BRISK_VAL_UINT,
    BRISK_VAL_BOOL,
    BRISK_VAL_SIZE,
    BRISK_VAL_TIME,
    BRISK_VAL_RATE,
    BRISK_VAL_CHOICE, /* one name of `choices`, stored as its index */
};
struct brisk_setting_desc {
    const char *name;
    enum brisk_value_kind kind;
    const char *help;
    const char *const *choices; /* BRISK_VAL_CHOICE: the names, NULL-terminated; NULL for other kinds */
};
size_t brisk_settings_count(void);
const struct brisk_setting_desc *brisk_settings_desc(size_t i);
/* The value of setting `i` as a plain integer (ns for times, bytes for sizes, bit/s for rates). */
uint64_t brisk_settings_value(const struct brisk_settings *s, size_t i);
/* The name a BRISK_VAL_CHOICE setting `i` has for value v ("cubic"), NULL if `i` is no choice or v is out of
 * range. */
const char *brisk_settings_choice(size_t i, uint64_t v);

/* Compatibility profiles: named sets of settings reproducing historical Linux behaviour ("linux-3.19") or
 * brisk's defaults ("brisk"). apply: BRISK_OK or BRISK_ERR_NOENT (unknown name); `s` unchanged on error. */
int brisk_settings_apply_profile(struct brisk_settings *s, const char *name);
size_t brisk_profiles_count(void);
const char *brisk_profile_name(size_t i);
const char *brisk_profile_help(size_t i);
const char *const *brisk_profile_settings(size_t i); /* NULL-terminated "name=value" list */

/* ---------------------------------------------------------------------------------------------------------
 * Value syntax shared by every tool and by brisk_settings_set. Each returns BRISK_OK or BRISK_ERR_INVAL
 * (malformed) / BRISK_ERR_RANGE (overflow), and leaves *out untouched on error.
 *   sizes:  "1500", "64K", "4M", "1G" (powers of 1024; "KB"/"KiB" accepted)
 *   rates:  "1G", "100M", "10k", "1500" (bit/s, powers of 1000; an optional "bit"/"bps" suffix)
 *   times:  "100us", "10ms", "1s", "250ns", "2m" is rejected (ambiguous) — units ns, us, ms, s required
 *           except for "0"; decimals allowed ("1.5ms")
 *   probabilities: "0.01" or "1%" into parts per 2^32 via a double in [0, 1]
 * ------------------------------------------------------------------------------------------------------- */
int brisk_parse_size(const char *s, uint64_t *out);
int brisk_parse_rate(const char *s, uint64_t *out);
int brisk_parse_time(const char *s, uint64_t *out);
int brisk_parse_prob(const char *s, double *out);
int brisk_parse_uint(const char *s, uint64_t *out);
int brisk_parse_bool(const char *s, int *out); /* 0/1, on/off, true/false, yes/no */

/* ---------------------------------------------------------------------------------------------------------
 * Counters. Linux SNMP / TcpExt names where one exists; brisk's own otherwise. All are uint64 event counts.
 * ------------------------------------------------------------------------------------------------------- */
#define BRISK_COUNTERS(X)                                                                                    \
    X(EthInFrames, "frames received from devices")                                                           \
    X(EthInErrors, "frames dropped: truncated Ethernet header")                                              \
    X(EthInNotForUs, "frames dropped: destination MAC is neither ours nor broadcast")                        \
    X(EthInUnknownType, "frames dropped: EtherType neither IPv4 nor ARP")                                    \
    X(EthOutFrames, "frames handed to devices")                                                              \
    X(EthOutBusy, "frames dropped: device TX ring full")                                                     \
    X(ArpInRequests, "ARP requests received")                                                                \
    X(ArpInReplies, "ARP replies received")                                                                  \
    X(ArpInGratuitous, "gratuitous ARP packets received")                                                    \
    X(ArpInErrors, "ARP packets dropped: malformed or unsupported hardware/protocol")                        \
    X(ArpInNotForUs, "ARP requests for an address that is not ours")                                         \
    X(ArpOutRequests, "ARP requests sent")                                                                   \
    X(ArpOutReplies, "ARP replies sent")                                                                     \
    X(ArpResolveFailed, "neighbour resolutions that gave up after arp_retries")                              \
    X(NeighUnresolvedDiscards, "packets dropped: unresolved neighbour's queue full or resolution failed")    \
    X(ArpCacheEvictions, "neighbour entries evicted for room: idle resolved, or resolving for a learned")    \
    X(NeighTableOverflow, "neighbour entries not made: every slot held a live or resolving entry")           \
    X(NeighUnresolvedLimit, "neighbour entries not made: arp_unres_max neighbours were already resolving")   \
    X(IpInReceives, "IPv4 datagrams received")                                                               \
    X(IpInHdrErrors, "IPv4 datagrams dropped: bad header (version, length, checksum, TTL)")                  \
    X(IpInTruncated, "IPv4 datagrams dropped: frame shorter than total length")                              \
    X(IpInAddrErrors, "IPv4 datagrams dropped: destination is not ours")                                     \
    X(IpInUnknownProtos, "IPv4 datagrams dropped: no handler for the protocol")                              \
    X(IpInDelivers, "IPv4 datagrams delivered to ICMP or transport")                                         \
    X(PmtuLowered, "path MTUs lowered by ICMP fragmentation needed (RFC 1191)")                             \
    X(IpReasmReqds, "IPv4 fragments received for reassembly")                                                \
    X(IpReasmOKs, "IPv4 datagrams reassembled")                                                              \
    X(IpReasmFails, "IPv4 reassembly failures: datagrams dropped, fragments refused for memory")            \
    X(IpReasmTimeout, "IPv4 datagrams dropped: not reassembled within ipfrag_time")                          \
    X(IpReasmOverlaps, "IPv4 datagrams dropped: overlapping fragments (RFC 5722's rule)")                    \
    X(IpOutRequests, "IPv4 datagrams sent")                                                                  \
    X(IpOutNoRoutes, "IPv4 datagrams dropped: no route")                                                     \
    X(IpOutDiscards, "IPv4 datagrams dropped on output: no buffer, device busy")                             \
    X(IcmpInMsgs, "ICMP messages received")                                                                  \
    X(IcmpInErrors, "ICMP messages dropped: malformed, bad checksum, or an error for no connection of ours") \
    X(IcmpInEchos, "ICMP echo requests received")                                                            \
    X(IcmpInEchoReps, "ICMP echo replies received")                                                          \
    X(IcmpInDestUnreachs, "ICMP destination unreachable received")                                           \
    X(IcmpInTimeExcds, "ICMP time exceeded received")                                                        \
    X(IcmpInParmProbs, "ICMP parameter problem received")                                                    \
    X(IcmpOutMsgs, "ICMP messages sent")                                                                     \
    X(IcmpOutEchos, "ICMP echo requests sent")                                                               \
    X(IcmpOutEchoReps, "ICMP echo replies sent")                                                             \
    X(IcmpOutDestUnreachs, "ICMP destination unreachable sent")                                              \
    X(IcmpOutTimeExcds, "ICMP time exceeded sent (fragment reassembly timeouts)")                            \
    X(IcmpOutRateLimited, "ICMP errors suppressed by icmp_ratelimit")                                        \
    X(Ip6InReceives, "IPv6 packets received")                                                                \
    X(Ip6InHdrErrors, "IPv6 packets dropped: bad header or extension header chain, an option asking it")    \
    X(Ip6InTruncatedPkts, "IPv6 packets dropped: frame shorter than 40 + payload length")                   \
    X(Ip6InAddrErrors, "IPv6 packets dropped: destination not ours, or a source no node may use")           \
    X(Ip6InUnknownProtos, "IPv6 packets dropped: no IPv6 handler for the upper-layer protocol")             \
    X(Ip6InDiscards, "IPv6 packets dropped: No Next Header, or the ipv6 setting off")                       \
    X(Ip6InDelivers, "IPv6 packets delivered to ICMPv6 or transport")                                        \
    X(Ip6InMcastPkts, "IPv6 multicast packets received (to a group we joined)")                             \
    X(Ip6ReasmReqds, "IPv6 fragments received for reassembly (atomic fragments included)")                  \
    X(Ip6ReasmOKs, "IPv6 packets reassembled (atomic fragments included)")                                   \
    X(Ip6ReasmFails, "IPv6 reassembly failures: packets dropped, fragments refused for memory")             \
    X(Ip6ReasmTimeout, "IPv6 packets dropped: not reassembled within ip6frag_time")                          \
    X(Ip6ReasmOverlaps, "IPv6 packets dropped: overlapping fragments (RFC 5722)")                            \
    X(Ip6OutRequests, "IPv6 packets sent")                                                                   \
    X(Ip6OutNoRoutes, "IPv6 packets dropped: no route")                                                      \
    X(Ip6OutDiscards, "IPv6 packets dropped on output: no buffer, larger than the MTU")                      \
    X(Icmp6InMsgs, "ICMPv6 messages received")                                                               \
    X(Icmp6InErrors, "ICMPv6 messages dropped: malformed, bad checksum, invalid ND message")                 \
    X(Icmp6InCsumErrors, "ICMPv6 messages dropped: bad checksum")                                            \
    X(Icmp6InEchos, "ICMPv6 echo requests received")                                                         \
    X(Icmp6InEchoReplies, "ICMPv6 echo replies received")                                                    \
    X(Icmp6InDestUnreachs, "ICMPv6 destination unreachable received")                                        \
    X(Icmp6InPktTooBigs, "ICMPv6 packet too big received")                                                   \
    X(Icmp6InTimeExcds, "ICMPv6 time exceeded received")                                                     \
    X(Icmp6InParmProblems, "ICMPv6 parameter problem received")                                              \
    X(Icmp6InRouterSolicits, "ICMPv6 router solicitations received (ignored: a host)")                      \
    X(Icmp6InRouterAdvertisements, "ICMPv6 router advertisements received")                                  \
    X(Icmp6InNeighborSolicits, "ICMPv6 neighbour solicitations received")                                    \
    X(Icmp6InNeighborAdvertisements, "ICMPv6 neighbour advertisements received")                            \
    X(Icmp6InRedirects, "ICMPv6 redirects received (ignored)")                                               \
    X(Icmp6OutMsgs, "ICMPv6 messages sent")                                                                  \
    X(Icmp6OutEchos, "ICMPv6 echo requests sent")                                                            \
    X(Icmp6OutEchoReplies, "ICMPv6 echo replies sent")                                                       \
    X(Icmp6OutParmProblems, "ICMPv6 parameter problem sent")                                                 \
    X(Icmp6OutDestUnreachs, "ICMPv6 destination unreachable sent (UDP port unreachable)")                    \
    X(Icmp6OutNeighborSolicits, "ICMPv6 neighbour solicitations sent")                                       \
    X(Icmp6OutNeighborAdvertisements, "ICMPv6 neighbour advertisements sent")                               \
    X(Icmp6OutRateLimited, "ICMPv6 errors suppressed by icmp_ratelimit (ICMPv6's own bucket)")              \
    X(Nd6InBadHopLimit, "ND messages dropped: IP hop limit not 255 (RFC 4861: sent from off-link)")         \
    X(Nd6InInvalid, "ND messages dropped: a validity rule of RFC 4861 (target not ours, no link address)") \
    X(Nd6ResolveFailed, "IPv6 neighbour resolutions that gave up after arp_retries solicitations")          \
    X(Nd6UnresolvedDiscards, "IPv6 packets dropped: unresolved neighbour's queue full or resolution failed")\
    X(Nd6CacheEvictions, "IPv6 neighbour entries evicted for room (idle resolved, or resolving)")          \
    X(Nd6TableOverflow, "IPv6 neighbour entries not made: every slot held a live or resolving entry")       \
    X(Nd6UnresolvedLimit, "IPv6 neighbour entries not made: arp_unres_max already resolving")               \
    X(TSQThrottles, "times TCP Small Queues held a connection (bytes below TCP over budget)")                \
    X(TSQResumes, "throttled connections resumed after a TX completion")                                     \
    X(PacingHolds, "times a connection waited for its next departure time")                                  \
    X(TCPAutoCorking, "small tails held by auto-corking (resumed on TX completion)")                         \
    X(TcpActiveOpens, "connections opened by connect (SYN-SENT)")                                            \
    X(TcpPassiveOpens, "connections opened from a listener (SYN-RECEIVED)")                                  \
    X(TcpAttemptFails, "connection attempts that failed (refused, timed out, reset while opening)")          \
    X(TcpEstabResets, "connections reset from ESTABLISHED or CLOSE-WAIT")                                    \
    X(TcpInSegs, "TCP segments received")                                                                    \
    X(TcpOutSegs, "TCP segments sent (retransmissions excluded)")                                            \
    X(TcpRetransSegs, "TCP segments retransmitted")                                                          \
    X(TcpInErrs, "TCP segments dropped: malformed header (data offset, zero port)")                         \
    X(TcpInCsumErrors, "TCP segments dropped: bad checksum")                                                 \
    X(TcpInBadOptions, "malformed TCP options ignored, segment kept (brisk's own: Linux counts none)")      \
    X(TcpOutRsts, "TCP resets sent")                                                                         \
    X(TcpNoPort, "segments to a port with no socket (answered with RST)")                                    \
    X(TCPTimeouts, "retransmission timeouts")                                                                \
    X(TCPFastRetrans, "fast retransmissions (three duplicate ACKs)")                                         \
    X(TCPLossProbes, "tail loss probes sent (RFC 8985)")                                                     \
    X(TCPLossProbeRecovery, "losses repaired by a tail loss probe (cwnd reduced without an RTO)")            \
    X(TCPRecoveryProbes, "probes of new data sent in fast recovery after a silence (tcp_recovery_probe)")   \
    X(TCPSpuriousRTOs, "retransmission timeouts found spurious by F-RTO and undone (RFC 5682)")              \
    X(TCPDSACKUndo, "recovery episodes undone: every retransmission reported duplicate by D-SACK")           \
    X(TCPPartialUndo, "recovery episodes undone by timestamps (Eifel) at an ACK inside the episode")         \
    X(TCPFullUndo, "recovery episodes undone by timestamps (Eifel) at the ACK that ended the episode")       \
    X(TCPTimerWheelOps, "timer wheel arm / cancel operations made by TCP connections")                       \
    X(TCPOrigDataSent, "segments with new data sent")                                                        \
    X(DelayedACKs, "delayed ACKs sent by the timer")                                                         \
    X(TCPAckCompressed, "ACKs for out-of-order data never sent: SACK compression (tcp_comp_sack_nr)")      \
    X(TCPChallengeACK, "challenge ACKs sent (RFC 5961)")                                                     \
    X(TCPChallengeACKLimited, "challenge ACKs suppressed by tcp_challenge_ack_limit")                        \
    X(TCPSYNChallenge, "SYNs in a synchronized state answered with a challenge ACK")                         \
    X(TCPRSTChallenge, "in-window RSTs not at rcv.nxt answered with a challenge ACK")                        \
    X(TCPACKOutOfWindow, "ACKs for data never sent, dropped (RFC 5961 §5)")                                  \
    X(OutOfWindowIcmps, "ICMP errors ignored: the quoted sequence number is not in SND.UNA..SND.NXT")        \
    X(PAWSEstab, "segments dropped by PAWS (RFC 7323 §5)")                                                   \
    X(PAWSActive, "SYN-ACKs dropped in SYN-SENT: their timestamp echo names no TSval we sent")             \
    X(TCPOutOfWindow, "segments outside the receive window (answered with an ACK)")                          \
    X(TCPOFOQueue, "segments queued out of order")                                                           \
    X(TCPOFODrop, "out-of-order segments dropped: reassembly bound")                                         \
    X(TCPRcvQDrop, "segments dropped: receive buffer full")                                                  \
    X(TCPDSACKSent, "D-SACK blocks sent for duplicate data (RFC 2883)")                                      \
    X(TCPWinProbe, "zero-window probes sent")                                                                \
    X(TCPKeepAlive, "keepalive probes sent")                                                                 \
    X(TCPAbortOnTimeout, "connections aborted after retransmission or keepalive timeouts")                   \
    X(TCPAbortOnClose, "connections reset on close with unread data or LINGER 0")                            \
    X(TCPAbortOnData, "connections reset: new data arrived after the application closed (RFC 1122)")       \
    X(TCPACKSkippedSeq, "ACKs not sent to out-of-window segments: tcp_invalid_ratelimit")                    \
    X(TCPACKSkippedPAWS, "ACKs not sent to segments PAWS rejected: tcp_invalid_ratelimit")                  \
    X(TCPACKSkippedChallenge, "challenge ACKs not sent: tcp_invalid_ratelimit")                              \
    X(ListenOverflows, "SYNs dropped: listener's queues full")                                               \
    X(TCPTimeWaitOverflow, "connections closed without TIME-WAIT: tcp_max_tw_buckets reached")               \
    X(SyncookiesSent, "SYN-ACKs sent with a SYN cookie (RFC 4987)")                                          \
    X(SyncookiesRecv, "ACKs with a valid SYN cookie (connections made from a cookie)")                       \
    X(SyncookiesFailed, "ACKs to a listener without a valid SYN cookie while cookies are on")                \
    X(TCPToZeroWindowAdv, "times our advertised window went to zero")                                        \
    X(TCPFromZeroWindowAdv, "times our advertised window reopened from zero")                                \
    X(TCPZeroWindowDrop, "in-order segments dropped: our advertised window was zero (tcp_rcv_window linux)") \
    X(PruneCalled, "times receive memory ran out and the queue was pruned (tcp_rcv_window linux)")         \
    X(TCPRcvCollapsed, "receive buffers copied into compact ones to free memory (tcp_rcv_window linux)")    \
    X(PktAllocFails, "packet-buffer allocations refused (pool bound reached)")                               \
    X(TxCompletions, "TX completions reported by devices")                                                   \
    X(UdpInDatagrams, "UDP datagrams over IPv4 delivered to a socket's queue")                               \
    X(UdpNoPorts, "UDP datagrams over IPv4 to a port with no socket (ICMP port unreachable)")                \
    X(UdpInErrors, "UDP datagrams over IPv4 dropped: malformed, bad checksum or receive buffer full")        \
    X(UdpOutDatagrams, "UDP datagrams sent over IPv4")                                                       \
    X(UdpRcvbufErrors, "UDP datagrams over IPv4 dropped: receive buffer full (or no packet buffer)")         \
    X(UdpInCsumErrors, "UDP datagrams over IPv4 dropped: bad checksum")                                      \
    X(Udp6InDatagrams, "UDP datagrams over IPv6 delivered to a socket's queue")                              \
    X(Udp6NoPorts, "UDP datagrams over IPv6 to a port with no socket (ICMPv6 port unreachable)")             \
    X(Udp6InErrors, "UDP datagrams over IPv6 dropped: malformed, bad or zero checksum, receive buffer full") \
    X(Udp6OutDatagrams, "UDP datagrams sent over IPv6")                                                      \
    X(Udp6RcvbufErrors, "UDP datagrams over IPv6 dropped: the socket's receive buffer was full")             \
    X(Udp6InCsumErrors, "UDP datagrams over IPv6 dropped: bad checksum, or none (a zero field)")             \
    X(TimerArms, "timer wheel arm operations")                                                               \
    X(TimerCancels, "timer wheel cancel operations")                                                         \
    X(TimerFires, "timer expirations")

struct brisk_counters {
#define BRISK_COUNTER_FIELD(name, help) uint64_t name;
    BRISK_COUNTERS(BRISK_COUNTER_FIELD)
#undef BRISK_COUNTER_FIELD
};

/* Names and help texts of the counters, in struct order, for tools. */
size_t brisk_counters_count(void);
const char *brisk_counter_name(size_t i);
const char *brisk_counter_help(size_t i);
uint64_t brisk_counter_value(const struct brisk_counters *c, size_t i);

/* ---------------------------------------------------------------------------------------------------------
 * Stack.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct brisk_stack brisk_stack;
typedef struct brisk_netdev brisk_netdev;

/* Creates a stack. `s` may be NULL for defaults; it is copied. Returns NULL when out of memory or when `s`
 * holds an out-of-range value. */
brisk_stack *brisk_stack_new(const struct brisk_settings *s);
void brisk_stack_free(brisk_stack *st);

const struct brisk_settings *brisk_stack_settings(const brisk_stack *st);
/* A snapshot of the stack's counters. */
void brisk_stack_get_counters(const brisk_stack *st, struct brisk_counters *out);

/* Packet buffers in use (allocated and not yet freed): a leak check for tests and tools. */
uint64_t brisk_stack_pkts_in_use(const brisk_stack *st);
/* TCP socket structures alive (listeners, connections, TIME-WAIT included), and TCP buffer chunks in use. */
uint64_t brisk_stack_sockets(const brisk_stack *st);
uint64_t brisk_stack_tcp_chunks_in_use(const brisk_stack *st);

/* Feeds one received Ethernet frame. The stack does not keep `frame` after returning. Malformed frames are
 * counted and dropped: this never fails for bad input. Returns BRISK_OK, or BRISK_ERR_INVAL for a NULL
 * argument or a device of another stack. */
int brisk_stack_input(brisk_stack *st, brisk_netdev *dev, const uint8_t *frame, size_t len, uint64_t now);

/* Runs deferred work and every timer due at `now`. Call it when `now` reaches brisk_stack_next_deadline(),
 * and after a batch of input / completions. Returns BRISK_OK. */
int brisk_stack_poll(brisk_stack *st, uint64_t now);

/* The earliest time at which brisk_stack_poll() has work, BRISK_TIME_NONE if none. It may be earlier than
 * needed (a poll then does nothing and the deadline moves on) but never later. */
uint64_t brisk_stack_next_deadline(const brisk_stack *st);

/* Sets (gw != 0) or clears (gw == 0) the default gateway, an IPv4 address in host byte order that must lie in
 * a device's prefix. Returns BRISK_OK, or BRISK_ERR_NOROUTE when no device prefix covers it. */
int brisk_stack_set_gateway(brisk_stack *st, uint32_t gw);

/* Starts or checks link-layer resolution of the next hop towards dst (like arping). Returns BRISK_OK when the
 * next hop's MAC is known (or dst is a broadcast), BRISK_ERR_AGAIN while resolution is in progress (a request
 * was sent now or earlier; poll and ask again), BRISK_ERR_NOROUTE, or BRISK_ERR_TOOMANY (arp_unres_max
 * neighbours already resolving, or the cache full of live ones: docs/design.md, "Neighbour bounds"). */
int brisk_stack_resolve(brisk_stack *st, uint32_t dst, uint64_t now);

/* ---------------------------------------------------------------------------------------------------------
 * ICMP echo (ping) for tools. Addresses are IPv4 in host byte order.
 * ------------------------------------------------------------------------------------------------------- */
struct brisk_echo_reply {
    uint32_t from;    /* source of the reply */
    uint16_t id, seq; /* as sent */
    uint16_t len;     /* payload bytes */
    uint8_t ttl;      /* TTL of the reply datagram */
    uint64_t sent_at; /* the `now` the request was sent with, carried in its payload (0 if payload < 8) */
};
typedef void (*brisk_echo_fn)(void *ctx, const struct brisk_echo_reply *r, uint64_t now);

/* Registers the callback for echo replies (one per stack; NULL to remove). */
void brisk_icmp_set_echo_handler(brisk_stack *st, brisk_echo_fn fn, void *ctx);

/* Sends an echo request with `payload_len` bytes (the first 8 carry `now`, the rest a fixed pattern).
 * Returns BRISK_OK (sent or queued behind ARP resolution), BRISK_ERR_NOROUTE, BRISK_ERR_MSGSIZE (does not fit
 * the device MTU; brisk does not fragment), BRISK_ERR_NOBUFS, BRISK_ERR_BUSY or BRISK_ERR_INVAL. */
int brisk_icmp_echo_send(brisk_stack *st, uint32_t dst, uint16_t id, uint16_t seq, uint16_t payload_len,
                         uint64_t now);

/* Formats an IPv4 address (host order) as dotted quad into buf (>= 16 bytes); returns buf. */
char *brisk_ip_format(uint32_t addr, char *buf);
/* Parses "a.b.c.d" into host order. Returns BRISK_OK or BRISK_ERR_INVAL. */
int brisk_ip_parse(const char *s, uint32_t *out);

/* ---------------------------------------------------------------------------------------------------------
 * Addresses of either family. Every call that names an IPv4 address with a uint32_t (host order) has a form
 * taking a struct brisk_addr (brisk_bind_addr, brisk_connect_addr, brisk_sock_tuple); the uint32_t calls
 * stay as IPv4 shorthands (README, "Addresses"). An IPv6 address is accepted by the parser and formatter,
 * and TCP and UDP run over either family (with the ipv6 setting on).
 */
enum brisk_af {
    BRISK_AF_UNSPEC = 0, /* no address: "any" for bind, unset in a tuple */
    BRISK_AF_INET = 4,
    BRISK_AF_INET6 = 6,
};

struct brisk_addr {
    uint8_t family;      /* enum brisk_af */
    uint8_t reserved[3]; /* zero */
    union {
        uint32_t v4;    /* BRISK_AF_INET: host order, as the uint32_t calls take it */
        uint8_t v6[16]; /* BRISK_AF_INET6: network order */
    } u;
};

/* A connection's four-tuple: its local and remote address and port. */
struct brisk_tuple {
    struct brisk_addr laddr, raddr;
    uint16_t lport, rport;
};

/* The IPv4 address `v4` (host order); 0 is the IPv4 unspecified address 0.0.0.0, not BRISK_AF_UNSPEC. */
struct brisk_addr brisk_addr_v4(uint32_t v4);
/* The same family and address (reserved bytes ignored; two BRISK_AF_UNSPEC addresses are equal). */
int brisk_addr_equal(const struct brisk_addr *a, const struct brisk_addr *b);
/* No address: BRISK_AF_UNSPEC, 0.0.0.0 or :: (what bind takes as "any of the stack's"). */
int brisk_addr_is_any(const struct brisk_addr *a);
/* Longest text brisk_addr_format writes, its NUL included (an IPv6 address with an embedded IPv4 one). */
#define BRISK_ADDR_STRLEN 46
/* Parses dotted-quad IPv4 ("192.0.2.1", as brisk_ip_parse) or IPv6 text (RFC 4291 §2.2: eight groups of up
 * to four hex digits, one "::" for a run of zero groups, a trailing dotted quad; no zone, no brackets).
 * BRISK_OK, or BRISK_ERR_INVAL naming nothing: the text is not an address. */
int brisk_addr_parse(const char *s, struct brisk_addr *out);
/* Formats an address into buf (>= BRISK_ADDR_STRLEN bytes): IPv4 dotted, IPv6 in RFC 5952's canonical form
 * (lower case, leading zeros dropped, the longest run of two or more zero groups as "::", the first of equal
 * runs; ::ffff:a.b.c.d for a mapped IPv4 address), "-" for BRISK_AF_UNSPEC. Returns buf. */
char *brisk_addr_format(const struct brisk_addr *a, char *buf);

/* ---------------------------------------------------------------------------------------------------------
 * IPv6 in the network layer (docs/ipv6.md): with the ipv6 setting on, each device has a link-local address
 * from its MAC, answers Neighbour Discovery and ICMPv6 echo; static addresses come from
 * brisk_netdev_add_addr (netdev.h). TCP runs over IPv6 with every mechanism it has over IPv4
 * (brisk_connect_addr / brisk_bind_addr with an IPv6 address; docs/ipv6.md), and so does UDP (docs/udp.md).
 * ------------------------------------------------------------------------------------------------------- */

/* Sets (gw a unicast IPv6 address) or clears (gw NULL or ::) the default router, reached through dev (NULL:
 * the device whose on-link prefix holds gw; a link-local router needs its device). BRISK_OK,
 * BRISK_ERR_AFNOSUPPORT (IPv6 off, or gw not IPv6), BRISK_ERR_INVAL (a multicast or loopback gw, a device of
 * another stack), BRISK_ERR_NOROUTE (no device given or found for it). A static router outlives router
 * advertisements; without one, an RA's router becomes the default for its lifetime. */
int brisk_stack_set_gateway6(brisk_stack *st, brisk_netdev *dev, const struct brisk_addr *gw);

/* An echo reply of either family (brisk_icmp_set_echo_addr_handler). */
struct brisk_echo_reply_addr {
    struct brisk_addr from; /* source of the reply */
    uint16_t id, seq;       /* as sent */
    uint16_t len;           /* payload bytes */
    uint8_t hops;           /* TTL or hop limit of the reply */
    uint64_t sent_at;       /* the `now` the request was sent with (0 if payload < 8) */
};
typedef void (*brisk_echo_addr_fn)(void *ctx, const struct brisk_echo_reply_addr *r, uint64_t now);

/* Registers the callback for echo replies of both families (one per stack; NULL to remove); IPv4 replies
 * also go to brisk_icmp_set_echo_handler's callback. */
void brisk_icmp_set_echo_addr_handler(brisk_stack *st, brisk_echo_addr_fn fn, void *ctx);

/* brisk_icmp_echo_send to an address of either family: ICMPv6 echo (RFC 4443 §4.1) for IPv6, from the
 * source address that suits dst (link-local for a link-local dst, which leaves through the first IPv6
 * device: struct brisk_addr has no zone). The same returns, BRISK_ERR_AFNOSUPPORT for IPv6 with ipv6 off. */
int brisk_icmp_echo_send_addr(brisk_stack *st, const struct brisk_addr *dst, uint16_t id, uint16_t seq,
                              uint16_t payload_len, uint64_t now);

/* ---------------------------------------------------------------------------------------------------------
 * TCP sockets. Non-blocking and event-driven: a callback reports what changed, and the calls never wait.
 * Callbacks run at the end of brisk_stack_input / brisk_stack_poll (and of the socket calls themselves), when
 * the stack is consistent, so they may call any socket function, including close.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct brisk_sock brisk_sock;

enum brisk_sock_event {
    BRISK_EV_CONNECTED = 0x01, /* an active open completed */
    BRISK_EV_READABLE = 0x02,  /* data or the peer's FIN can be read (recv returns > 0 or 0) */
    BRISK_EV_WRITABLE = 0x04,  /* a send fell short and brisk_sock_poll says BRISK_POLL_OUT again */
    BRISK_EV_ACCEPT = 0x08,    /* a listener has an established connection to accept */
    BRISK_EV_CLOSED = 0x10,    /* the connection finished (both directions closed, or TIME-WAIT entered) */
    BRISK_EV_ERROR = 0x20,     /* a fatal error: brisk_sock_error() says which; the socket is closed */
    BRISK_EV_FIN_ACKED = 0x40, /* the peer acknowledged our FIN, so every byte sent before it: the sending
                                  direction is finished (FIN-WAIT-1 / CLOSING / LAST-ACK left) */
};
typedef void (*brisk_sock_fn)(void *ctx, brisk_sock *s, unsigned events, uint64_t now);

#define BRISK_MSG_MORE 0x1 /* more data follows soon: do not push a partial segment for this call */
/* End of record: no segment carries both this write's last byte and a later write's first (MSG_EOR). */
#define BRISK_MSG_EOR 0x2

enum brisk_sockopt {
    BRISK_SO_NODELAY = 1,   /* disable Nagle */
    BRISK_SO_CORK,          /* hold partial segments until uncorked (TCP_CORK) */
    BRISK_SO_SNDBUF,        /* bytes */
    BRISK_SO_RCVBUF,        /* bytes (set before connect/listen to size the window scale); under
                               tcp_rcv_window=linux Linux's SO_RCVBUF: doubled, capped at 2 x rmem_max, at
                               least 2304, autotuning off, and read back as the doubled sk_rcvbuf */
    BRISK_SO_NOTSENT_LOWAT, /* a send stops at this many unsent bytes; writable again below half of it */
    BRISK_SO_KEEPALIVE,     /* 0/1 */
    BRISK_SO_KEEPIDLE,      /* ns */
    BRISK_SO_KEEPINTVL,     /* ns */
    BRISK_SO_KEEPCNT,       /* probes */
    BRISK_SO_QUICKACK,      /* 1: ACK at once for a while (leaves delayed-ACK pingpong mode) */
    BRISK_SO_MAXSEG,        /* clamp the MSS (set before connect/listen) */
    BRISK_SO_LINGER0,       /* 1: close() aborts with RST (the same as BRISK_SO_LINGER 0); 0: no linger */
    /* TCP_USER_TIMEOUT (RFC 5482), ns; 0 = off (default). With it set, a connection whose retransmissions go
     * unacknowledged this long after the first of them (or whose zero-window probes have gone on this long,
     * or that has been idle this long with a keepalive probe out) fails with BRISK_ERR_TIMEDOUT, in place of
     * the tcp_retries2 / KEEPCNT counts; retransmissions are brought forward to meet the deadline. */
    BRISK_SO_USER_TIMEOUT,
    /* Read only: the bytes a read returns now (Linux's ioctl SIOCINQ / FIONREAD, tcp_inq): the peer's FIN is
     * not counted; 0 while the handshake is in progress. A facade building Linux's TCP_CM_INQ cmsg adds 1
     * once the FIN is in (brisk_recv_peek at this offset returns 0), as tcp_inq_hint does. Linux's own
     * getsockopt(TCP_INQ) only says whether that cmsg is on. setsockopt: BRISK_ERR_INVAL. */
    BRISK_SO_INQ,
    /* IP_TOS: the TOS byte of every IPv4 datagram the connection sends (SYN, SYN-ACK, data, ACK, RST), 0..255
     * (else BRISK_ERR_RANGE). As Linux does for TCP sockets, the two ECN bits stay TCP's: brisk has no ECN,
     * so they are sent (and read back) as 0. A listener passes its value to the connections it accepts. */
    BRISK_SO_TOS,
    /* SO_LINGER, ns: BRISK_TIME_NONE = off (default: close returns at once, the stack finishes the close);
     * 0 = close aborts with RST (LINGER0); more = a lingering close (brisk_close), which a blocking POSIX
     * facade turns into close() waiting up to this long for the FIN to be acknowledged. */
    BRISK_SO_LINGER,
    /* IPV6_V6ONLY, 0/1 (default 0, Linux's net.ipv6.bindv6only): 1 makes the socket IPv6 only — bound to ::
     * it takes IPv6 connections only and its port can be shared with a socket bound to 0.0.0.0 (nginx's
     * `listen [::]:80 ipv6only=on` beside `listen 80`); it binds to IPv6 addresses only and connects to IPv6
     * peers only (else BRISK_ERR_AFNOSUPPORT). Set before bind or connect (else BRISK_ERR_INVAL); values
     * above 1 BRISK_ERR_RANGE. */
    BRISK_SO_V6ONLY,
};

/* Creates a TCP socket. Returns NULL (and *err) on BRISK_ERR_NOMEM / BRISK_ERR_INVAL. */
brisk_sock *brisk_socket(brisk_stack *st, int *err);
/* Calls fn(ctx, s, events, now) when events happen on s (NULL to stop). Accepted sockets start without one;
 * events raised while a socket has none (data that arrived between accept and this call, an error) are kept
 * and delivered when a callback is set (inside a callback: once it returns), as the end of any call delivers
 * events. */
void brisk_sock_set_callback(brisk_sock *s, brisk_sock_fn fn, void *ctx);
/* Binds a local address (0 = any of the stack's) and port (0 = ephemeral at connect). BRISK_ERR_ADDRINUSE,
 * BRISK_ERR_ADDRNOTAVAIL, BRISK_ERR_INVAL (already bound or not a fresh socket). */
int brisk_bind(brisk_sock *s, uint32_t addr, uint16_t port);
/* brisk_bind with an address of either family. BRISK_AF_UNSPEC and 0.0.0.0 mean any IPv4 address, :: any
 * address of either family (as a Linux IPv6 socket without IPV6_V6ONLY): a listener bound to 0.0.0.0 takes
 * IPv4 connections only, one bound to :: both; a connecting socket bound to either any address (or not
 * bound) may connect to either family, one bound to an address only to that family. BRISK_ERR_ADDRNOTAVAIL
 * (not an address of the stack's), BRISK_ERR_AFNOSUPPORT (IPv6 with the ipv6 setting off),
 * BRISK_ERR_INVAL for an unknown family or NULL. */
int brisk_bind_addr(brisk_sock *s, const struct brisk_addr *addr, uint16_t port);
/* Listens (the socket must be bound to a port). backlog bounds established connections awaiting accept
 * (below 1: 1); listening again only changes it. Returns BRISK_OK, or BRISK_ERR_INVAL (NULL socket, no
 * port bound, or a socket that is connecting or connected). */
int brisk_listen(brisk_sock *s, int backlog);
/* An established connection from the listener's queue, or NULL with *err = BRISK_ERR_AGAIN (none yet) or
 * BRISK_ERR_INVAL (not a listener). */
brisk_sock *brisk_accept(brisk_sock *ls, int *err);
/* Starts an active open; returns BRISK_ERR_INPROGRESS on success (BRISK_EV_CONNECTED or BRISK_EV_ERROR
 * follows), or BRISK_ERR_ISCONN, BRISK_ERR_NOROUTE, BRISK_ERR_ADDRNOTAVAIL, BRISK_ERR_INVAL. */
int brisk_connect(brisk_sock *s, uint32_t addr, uint16_t port, uint64_t now);
/* brisk_connect with an address of either family: BRISK_ERR_AFNOSUPPORT for IPv6 with the ipv6 setting
 * off, BRISK_ERR_INVAL for BRISK_AF_UNSPEC, an any address, an unknown family, NULL, or a family other than
 * that of the address the socket is bound to. */
int brisk_connect_addr(brisk_sock *s, const struct brisk_addr *addr, uint16_t port, uint64_t now);
/* The socket's local and remote address and port (getsockname and getpeername in one): the local end once
 * bound or connected (0.0.0.0 or :: when bound to any address), the remote end once connecting; BRISK_AF_UNSPEC
 * and port 0 for an end that is neither. BRISK_ERR_INVAL for NULL. */
int brisk_sock_tuple(const brisk_sock *s, struct brisk_tuple *out);
/* Queues up to len bytes; returns the number queued (> 0), or BRISK_ERR_AGAIN (send buffer full, or as many
 * unsent bytes as BRISK_SO_NOTSENT_LOWAT allows: wait for BRISK_EV_WRITABLE), BRISK_ERR_PIPE (after
 * shutdown/close), BRISK_ERR_NOTCONN, or the connection's error. Fewer than len bytes are queued when the
 * send buffer fills or, with a low-water mark, when a new segment-sized piece would start with that many
 * unsent bytes queued already (Linux's per-skb check); BRISK_EV_WRITABLE follows when there is room again.
 * flags: BRISK_MSG_MORE, BRISK_MSG_EOR (the record ends after the last byte of a write queued whole; send
 * the rest of a shorter one with the flag again. A write that would end a record is refused with
 * BRISK_ERR_AGAIN while 32 records are unacknowledged). */
int64_t brisk_send(brisk_sock *s, const void *buf, size_t len, unsigned flags, uint64_t now);
/* Reads up to len bytes; returns the number read (> 0), 0 at end of stream (the peer's FIN), BRISK_ERR_AGAIN
 * (nothing yet), BRISK_ERR_NOTCONN, or the connection's error (BRISK_ERR_RESET, BRISK_ERR_TIMEDOUT). */
int64_t brisk_recv(brisk_sock *s, void *buf, size_t len, uint64_t now);
/*
 * Zero-copy receive, for applications that can work on the data where it lies (checksumming, parsing,
 * writing it to a file): brisk_recv_peek sets *data to the unread bytes at offset `off` of the receive
 * stream and returns how many of them are contiguous there (> 0: up to the end of a 16 KB buffer chunk; peek
 * again at off + that for the rest). Nothing is consumed. With nothing at `off` it returns what brisk_recv
 * would with nothing to read: 0 at end of stream, BRISK_ERR_AGAIN, BRISK_ERR_NOTCONN or the connection's
 * error. The bytes stay valid and unchanged until they are consumed or the socket is closed or aborted;
 * brisk_recv_consume(s, n) then consumes the first n unread bytes exactly as a brisk_recv of n bytes would
 * (buffer space freed, a window update when it is worth one) and returns n, or BRISK_ERR_INVAL if n is more
 * than is unread.
 */
int64_t brisk_recv_peek(brisk_sock *s, size_t off, const uint8_t **data);
int64_t brisk_recv_consume(brisk_sock *s, size_t n, uint64_t now);
/* Closes the sending direction (FIN after queued data). BRISK_ERR_NOTCONN if not connected. */
int brisk_shutdown_write(brisk_sock *s, uint64_t now);
/* Releases the socket: queued data is still sent and the connection closes gracefully (or aborts with RST
 * when LINGER0 is set or unread data remains, RFC 2525 §2.17). The handle must not be used afterwards, and
 * BRISK_OK is returned — except for a lingering close: with BRISK_SO_LINGER above 0, a close that leaves our
 * FIN unacknowledged (FIN-WAIT-1, CLOSING, LAST-ACK) returns BRISK_ERR_INPROGRESS and keeps the handle and
 * its callback. BRISK_EV_FIN_ACKED, BRISK_EV_CLOSED or BRISK_EV_ERROR follows; on it, or when the linger time
 * has passed (the caller's clock: the core never waits), call brisk_close again, which releases the handle as
 * a close without linger would from the state reached. Linux's close() waits that way in sk_stream_wait_close
 * and returns 0 either way; a blocking facade does the same around these two calls (docs/sockets.md). */
int brisk_close(brisk_sock *s, uint64_t now);
/* Sends a RST and releases the socket at once. */
int brisk_abort(brisk_sock *s, uint64_t now);
/* Sets an option (enum brisk_sockopt says each one's unit). Returns BRISK_OK, BRISK_ERR_RANGE (value out of
 * the option's bounds) or BRISK_ERR_INVAL (NULL socket, unknown or read-only option). */
int brisk_setsockopt(brisk_sock *s, enum brisk_sockopt opt, uint64_t value, uint64_t now);
/* Reads an option into *value. Returns BRISK_OK or BRISK_ERR_INVAL (NULL argument, unknown option, or
 * BRISK_SO_INQ on a listener). */
int brisk_getsockopt(const brisk_sock *s, enum brisk_sockopt opt, uint64_t *value);
/* The error that closed the connection (BRISK_ERR_RESET, ...), or BRISK_OK. */
int brisk_sock_error(const brisk_sock *s);
/* Selects the socket's congestion control by name ("newreno", "cubic"; new sockets take the stack's
 * tcp_congestion). Allowed before connect and on a live connection, where the new algorithm starts from the
 * current cwnd and ssthresh (like Linux's TCP_CONGESTION). Returns BRISK_OK, or BRISK_ERR_INVAL for a NULL
 * argument or an unknown name (the socket keeps its algorithm). */
int brisk_set_congestion(brisk_sock *s, const char *name);
/* The name of the socket's congestion control, NULL for a NULL socket. */
const char *brisk_get_congestion(const brisk_sock *s);

enum brisk_tcp_state {
    BRISK_TCP_CLOSED,
    BRISK_TCP_LISTEN,
    BRISK_TCP_SYN_SENT,
    BRISK_TCP_SYN_RECEIVED,
    BRISK_TCP_ESTABLISHED,
    BRISK_TCP_FIN_WAIT_1,
    BRISK_TCP_FIN_WAIT_2,
    BRISK_TCP_CLOSE_WAIT,
    BRISK_TCP_CLOSING,
    BRISK_TCP_LAST_ACK,
    BRISK_TCP_TIME_WAIT,
};
const char *brisk_tcp_state_name(int state);

/* Why the transmit function last declined to send (hold reasons, docs/design.md principle 5). */
enum brisk_hold {
    BRISK_HOLD_NONE,     /* sending, or nothing to send */
    BRISK_HOLD_CWND,     /* congestion window full */
    BRISK_HOLD_RWND,     /* peer's receive window full (or sender silly-window avoidance) */
    BRISK_HOLD_NAGLE,    /* a partial segment waits for the ACK of the previous small one */
    BRISK_HOLD_CORK,     /* TCP_CORK or MSG_MORE holds a partial segment */
    BRISK_HOLD_TSQ,      /* too many bytes below TCP (TCP Small Queues) */
    BRISK_HOLD_AUTOCORK, /* a small tail waits for this connection's data below TCP to complete */
    BRISK_HOLD_PACING,   /* the next packet's departure time has not come yet */
    BRISK_HOLD_DEVICE,   /* the device refused the packet (ring full) or no buffer */
    BRISK_HOLD_COUNT,
};
const char *brisk_hold_name(int reason); /* "cwnd", "rwnd", ... */

struct brisk_conn_info {
    int state;             /* enum brisk_tcp_state */
    uint32_t laddr, raddr; /* host order; 0 for IPv6 (tuple has both families) */
    uint16_t lport, rport;
    uint64_t srtt_ns, rttvar_ns, rto_ns, min_rtt_ns;
    uint32_t mss;              /* send MSS */
    uint32_t cwnd, ssthresh;   /* bytes */
    uint32_t snd_wnd, rcv_wnd; /* bytes (scaled); rcv_wnd under tcp_rcv_window=linux: the last advertised */
    uint64_t bytes_sent;       /* payload bytes transmitted, retransmissions included */
    uint64_t bytes_acked;
    uint64_t bytes_received; /* in-order payload bytes */
    uint64_t inq;            /* bytes a read returns now (BRISK_SO_INQ): rcv_queued, 0 in the handshake */
    uint64_t segs_out, segs_in;
    uint64_t retransmits; /* segments retransmitted */
    uint64_t rto_count;   /* retransmission timeouts */
    uint64_t fast_retransmits;
    uint64_t unacked;              /* bytes in flight */
    uint64_t notsent;              /* bytes queued, not yet sent */
    uint8_t ts_ok, sack_ok, ws_ok; /* options negotiated */
    uint8_t snd_wscale, rcv_wscale;
    uint64_t wmem;        /* bytes below TCP (charged truesize, not yet completed by the device) */
    uint64_t tsq_limit;   /* the TSQ budget at the time of the call */
    uint64_t pacing_rate; /* bytes/s, from cwnd / srtt and the pacing ratios */
    int hold;             /* enum brisk_hold: why the connection is not sending now */
    uint64_t hold_events[BRISK_HOLD_COUNT]; /* times each reason stopped the transmit function */
    uint64_t hold_ns[BRISK_HOLD_COUNT];     /* time each reason held data back (while data was waiting) */
    uint64_t tlp_probes;                    /* tail loss probes sent */
    uint64_t tlp_recoveries;                /* losses a probe repaired */
    uint64_t undos;                         /* congestion responses undone as spurious (F-RTO, D-SACK) */
    uint64_t wheel_ops;                     /* timer wheel arm / cancel operations for this connection */
    /* Loss recovery and timers, in Linux's tcp_info terms. */
    int ca_state;              /* enum brisk_ca_state */
    uint32_t sacked_bytes;     /* in flight and SACKed by the peer */
    uint32_t lost_bytes;       /* marked lost (retransmitted or not) */
    uint32_t retrans_bytes;    /* lost, retransmitted, not yet acknowledged */
    uint32_t backoff;          /* consecutive timeouts: RTO backoffs, zero-window probes, SYN resends */
    uint32_t keepalive_probes; /* keepalive probes sent without an answer */
    uint64_t ato_ns;           /* delayed-ACK timeout now */
    uint64_t last_data_sent_ns; /* `now` of the last data segment sent (0: never) */
    uint64_t last_data_recv_ns; /* `now` of the last data segment received (0: never) */
    uint64_t last_recv_ns;      /* `now` of the last segment received (0: never) */
    uint64_t rcv_queued;        /* in-order bytes waiting for the application (Linux FIONREAD / TCP_INQ) */
    uint64_t snd_queued;        /* bytes in the send buffer: unacknowledged + not sent (Linux SIOCOUTQ) */
    uint32_t advmss;            /* the MSS we announced */
    uint32_t peer_mss;          /* the MSS the peer announced (0: none) */
    uint32_t reordering;        /* under Linux's loss timers (tcp_loss_timers=linux): Linux's tp->reordering,
                                   the reordering degree in segments, 3 until more is seen; 0 when the
                                   connection does not measure it (brisk's RACK rules) */
    /* The receive window's state (Linux's tcpi_rcv_*): */
    uint32_t rcv_ssthresh; /* the window as far as it has grown (tcp_rcv_window=rfc9293: the largest) */
    uint32_t rcv_space;    /* bytes read in the last measured round trip (autotuning; rfc9293: 0) */
    uint32_t rcv_mss;      /* the peer's segment size as seen (rfc9293: the send MSS) */
    uint32_t rcv_rtt_us;   /* the receiver's RTT estimate, us (autotuning; rfc9293: 0) */
    struct brisk_tuple tuple; /* both ends, either family (as brisk_sock_tuple) */
};
/* Congestion states as Linux's tcpi_ca_state numbers them (there is no CWR: brisk has no ECN). */
enum brisk_ca_state {
    BRISK_CA_OPEN = 0,     /* no loss suspected */
    BRISK_CA_DISORDER = 1, /* duplicate ACKs or SACKs seen, no loss declared yet */
    BRISK_CA_RECOVERY = 3, /* fast recovery */
    BRISK_CA_LOSS = 4,     /* a retransmission timeout, until the ACK of what was outstanding */
};
int brisk_conn_info(const brisk_sock *s, struct brisk_conn_info *out);

/* Readiness of a socket, with the rules of Linux's tcp_poll (what poll(2) and epoll report), for event
 * loops and POSIX-style facades:
 *   BRISK_POLL_IN     a read would not wait: data, the peer's FIN, an error, or (listener) a connection to
 *                     accept
 *   BRISK_POLL_OUT    a write would not wait: the send buffer has room (with tcp_wspace_hysteresis, as in
 *                     the linux-* profiles, free space at least half of what is queued — Linux's wakeup
 *                     rule; and with notsent_lowat, unsent bytes below half the low-water mark), or sending
 *                     was shut down (a write fails at once). BRISK_EV_WRITABLE is this level's edge.
 *   BRISK_POLL_RDHUP  the peer closed its sending direction
 *   BRISK_POLL_HUP    both directions are closed, or the connection is over
 *   BRISK_POLL_ERR    the connection ended with an error (brisk_sock_error)
 * Returns 0 for a NULL socket. */
#define BRISK_POLL_IN    0x01u
#define BRISK_POLL_OUT   0x04u
#define BRISK_POLL_ERR   0x08u
#define BRISK_POLL_HUP   0x10u
#define BRISK_POLL_RDHUP 0x2000u
unsigned brisk_sock_poll(const brisk_sock *s);

/* Visits the stack's sockets, for introspection (brisk-ss, docs/introspection.md): fn(ctx, s) is called for
 * every listener, then for every connection in the connection table — SYN-SENT through TIME-WAIT, half-open
 * (SYN-RECEIVED) children and established children not yet accepted included, orphans (closed by the
 * application, finishing their FIN exchange or TIME-WAIT) too — and for children on an accept queue that
 * have already left the table. Sockets in CLOSED are not visited: fresh or bound sockets that neither
 * connect nor listen, and connections that failed or ended and wait for the application's brisk_close (the
 * application holds all of those). The order is the tables' (fixed by the seed: same seed, same order).
 * fn may read a socket (brisk_conn_info, brisk_getsockopt, brisk_get_congestion, brisk_sock_poll) but must
 * not change any socket's state (close, abort, connect, listen, send, recv): the tables are walked as they
 * are. A non-zero return from fn stops the walk. Returns that value, BRISK_OK when every socket was visited,
 * or BRISK_ERR_INVAL for a NULL stack or fn. */
int brisk_stack_foreach_socket(brisk_stack *st, int (*fn)(void *ctx, brisk_sock *s), void *ctx);

/* ---------------------------------------------------------------------------------------------------------
 * UDP sockets (RFC 768; the API follows RFC 8085 §3's guidance and Linux's behaviour; docs/udp.md).
 * Non-blocking and event-driven like the TCP calls: a callback reports what changed. A socket is an endpoint:
 * bound to a local address and port (brisk_udp_bind, or an ephemeral port chosen at the first connect or
 * send), optionally connected to one peer, which names where brisk_udp_send goes and filters what is
 * received. Datagrams are sent whole or not at all: brisk does not fragment outgoing datagrams, so one larger
 * than the path MTU is refused with BRISK_ERR_MSGSIZE. Received ones wait in a queue bounded by the socket's
 * receive buffer (BRISK_SO_RCVBUF, default the udp_rcvbuf setting); beyond it they are dropped and counted
 * (UdpRcvbufErrors). Either family (IPv6 with the ipv6 setting on): the local address decides, as for TCP —
 * 0.0.0.0 (or BRISK_AF_UNSPEC) is IPv4 only, :: both (a Linux IPv6 socket without IPV6_V6ONLY), an address
 * its own family; a socket never bound takes :: at its first connect or send. A sender is reported in its
 * own family (an IPv4 one as IPv4, never v4-mapped); Udp* counters count datagrams over IPv4, Udp6* over
 * IPv6.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct brisk_udp brisk_udp;
/* Events on a UDP socket: BRISK_EV_READABLE (a datagram is queued), BRISK_EV_WRITABLE (a send refused for
 * want of a packet buffer or device room may be retried), BRISK_EV_ERROR (an ICMP error for a connected
 * socket's peer: brisk_udp_error says which). */
typedef void (*brisk_udp_fn)(void *ctx, brisk_udp *u, unsigned events, uint64_t now);
/* recvfrom's out flag: the datagram was longer than the buffer; the rest of it is discarded (MSG_TRUNC). */
#define BRISK_MSG_TRUNC 0x20

/* Creates a UDP socket. NULL (and *err) on BRISK_ERR_NOMEM / BRISK_ERR_INVAL. */
brisk_udp *brisk_udp_socket(brisk_stack *st, int *err);
/* Calls fn(ctx, u, events, now) when events happen on u (NULL to stop); events raised without a callback are
 * kept and delivered when one is set. BRISK_ERR_INVAL for NULL. */
int brisk_udp_set_callback(brisk_udp *u, brisk_udp_fn fn, void *ctx);
/* Binds a local address (BRISK_AF_UNSPEC or 0.0.0.0: any IPv4 address of the stack's; ::: any address of
 * either family; or one of the stack's addresses) and port (0: an ephemeral one now). BRISK_ERR_ADDRINUSE
 * (another socket has the port on an overlapping address: the same one, either side's any address of its
 * family, or :: on either side), BRISK_ERR_ADDRNOTAVAIL (not an address of ours, or no free ephemeral
 * port), BRISK_ERR_INVAL (already bound, NULL, an unknown family), BRISK_ERR_AFNOSUPPORT (IPv6 with the
 * ipv6 setting off). */
int brisk_udp_bind(brisk_udp *u, const struct brisk_addr *addr, uint16_t port);
/* Connects to addr:port: sends go there, only its datagrams are received, and ICMP / ICMPv6 errors about it
 * are reported (BRISK_EV_ERROR). An unbound socket gets an ephemeral port on ::. Connecting again replaces
 * the peer; BRISK_AF_UNSPEC disconnects (as connect(2) with AF_UNSPEC). BRISK_ERR_NOROUTE,
 * BRISK_ERR_ADDRNOTAVAIL, BRISK_ERR_AFNOSUPPORT (an IPv6 peer for a socket bound to an IPv4 address, as
 * Linux's AF_INET socket; IPv6 with the ipv6 setting off), BRISK_ERR_INVAL (NULL, port 0, address 0.0.0.0
 * or ::, an IPv4 peer for a socket bound to a specific IPv6 address). */
int brisk_udp_connect(brisk_udp *u, const struct brisk_addr *addr, uint16_t port);
/* Sends one datagram of len bytes (0 allowed) to dst:port, or to the connected peer when dst is NULL.
 * Returns len, or: BRISK_ERR_MSGSIZE (over the path MTU less the headers, 28 bytes over IPv4 and 48 over
 * IPv6: never fragmented),
 * BRISK_ERR_NOTCONN (dst NULL, not connected), BRISK_ERR_NOROUTE, BRISK_ERR_AGAIN (no packet buffer or the device is full:
 * BRISK_EV_WRITABLE follows when a transmission completes), BRISK_ERR_ADDRNOTAVAIL (no ephemeral port), the
 * pending error of a connected socket (read once, as Linux's), BRISK_ERR_AFNOSUPPORT and BRISK_ERR_INVAL
 * (as connect's family rules, and for an any address or port 0), the neighbour cache's BRISK_ERR_TOOMANY. */
int64_t brisk_udp_sendto(brisk_udp *u, const void *buf, size_t len, const struct brisk_addr *dst,
                         uint16_t port, uint64_t now);
/* brisk_udp_sendto to the connected peer. */
int64_t brisk_udp_send(brisk_udp *u, const void *buf, size_t len, uint64_t now);
/* Takes the oldest queued datagram: copies up to len bytes of it to buf and returns the number copied; the
 * sender's address and port into *from / *port (each may be NULL); *flags (may be NULL) gets BRISK_MSG_TRUNC
 * when the datagram was longer than len (the rest is discarded), else 0. BRISK_ERR_AGAIN (nothing queued),
 * the pending error (read once), BRISK_ERR_INVAL. */
int64_t brisk_udp_recvfrom(brisk_udp *u, void *buf, size_t len, struct brisk_addr *from, uint16_t *port,
                           unsigned *flags);
/* The pending error, cleared (SO_ERROR): BRISK_ERR_CONNREFUSED after an ICMP or ICMPv6 port unreachable,
 * BRISK_ERR_MSGSIZE after fragmentation needed or Packet Too Big, ... (docs/udp.md has the table); BRISK_OK
 * if none or for NULL. */
int brisk_udp_error(brisk_udp *u);
/* Options: BRISK_SO_RCVBUF (bytes of queued datagrams' buffers, 2048 .. 1 GB), BRISK_SO_TOS (0..255: the
 * IPv4 TOS byte and the IPv6 traffic class alike);
 * read only: BRISK_SO_INQ (the next datagram's length, 0 if none, as Linux's SIOCINQ). BRISK_OK,
 * BRISK_ERR_RANGE, BRISK_ERR_INVAL (NULL, an option UDP does not have). */
int brisk_udp_setsockopt(brisk_udp *u, enum brisk_sockopt opt, uint64_t value);
int brisk_udp_getsockopt(const brisk_udp *u, enum brisk_sockopt opt, uint64_t *value);
/* The local end (once bound) and the peer (once connected); BRISK_AF_UNSPEC and port 0 for neither. */
int brisk_udp_tuple(const brisk_udp *u, struct brisk_tuple *out);
/* Readiness (brisk_sock_poll's bits): BRISK_POLL_IN (a datagram or an error to read), BRISK_POLL_OUT (a send
 * would not be refused for room, as far as is known), BRISK_POLL_ERR (an error pending). 0 for NULL. */
unsigned brisk_udp_poll(const brisk_udp *u);
/* Releases the socket and its queued datagrams; the handle must not be used afterwards. BRISK_ERR_INVAL for
 * NULL. */
int brisk_udp_close(brisk_udp *u);
/* UDP sockets alive in the stack (a leak check for tests and tools). */
uint64_t brisk_stack_udp_sockets(const brisk_stack *st);

#ifdef __cplusplus
}
#endif
#endif
