/*
 * tcp.h (internal) — the TCP connection and the functions the TCP files share.
 *
 * One struct brisk_sock is one TCP endpoint: a listener, or a connection from SYN to the end of TIME-WAIT
 * (an orphan's TIME-WAIT goes on as a smaller struct tcp_tw, timewait.h).
 * State is grouped the way RFC 9293 §3.3.1 names it (snd.*, rcv.*), plus the option state (RFC 7323, 2018),
 * the RTT estimator, congestion control, timers, delayed-ACK state and the socket side (callback, pending
 * events, accept queue).
 *
 * Files: conn.c (table, lifetime, events), input.c (segment arrival, RFC 9293 §3.10.7), output.c (the one
 * transmit function tcp_write_xmit and segment construction), mark.c (where writes end: PSH and records),
 * piece.c (the send queue as Linux's skbs, and Linux's packets under tcp_sw_gso),
 * timer.c (retransmit / persist, delayed ACK, keepalive / TIME-WAIT / FIN-WAIT-2), socket.c (the public API),
 * isn.c (RFC 6528). The transmit engine's checks, one mechanism per file, each with its header: tail.c (the
 * small-tail decision: Nagle, TCP_CORK, MSG_MORE, auto-corking), tsq.c (below-TCP accounting and TSQ),
 * pacing.c, tso.c (TSO autosizing), hold.c (hold reasons).
 *
 * A mechanism header holds the state the mechanism owns (a sub-struct of struct brisk_sock) and its
 * interface — tsq.h, pacing.h, hold.h, tail.h, tso.h, sack.h (the scoreboard), rack.h, recovery.h (the
 * episode, PRR, undo, recovery without SACK), tlp.h, txt.h (send times), timer.h, and the older rtt.h, cc.h,
 * rwin.h, mark.h, piece.h, reass.h, sbuf.h, timewait.h —, so that this file is down to struct brisk_sock,
 * the per-stack state and what the connection's own files (conn.c, input.c, output.c, socket.c) share; where
 * it has inline fast paths that need struct brisk_sock complete, they follow in a second part, guarded by
 * BRISK_TCP_SOCK_COMPLETE, which this file defines after the struct before including those headers again
 * (pacing.h, recovery.h, rwin.h, sack.h, timer.h, tsq.h, txt.h).
 */
#ifndef BRISK_TCP_TCP_H
#define BRISK_TCP_TCP_H

#include <stddef.h>

#include "core/addr.h"
#include "core/evq.h"
#include "core/timer.h"
#include "net/gro.h"
#include "net/ip.h"
#include "net/net.h"
#include "tcp/ackcomp.h"
#include "tcp/cc.h"
#include "tcp/hold.h"
#include "tcp/mark.h"
#include "tcp/pacing.h"
#include "tcp/piece.h"
#include "tcp/rack.h"
#include "tcp/reass.h"
#include "tcp/recovery.h"
#include "tcp/rtt.h"
#include "tcp/rwin.h"
#include "tcp/sack.h"
#include "tcp/sbuf.h"
#include "tcp/tail.h"
#include "tcp/timer.h"
#include "tcp/timewait.h"
#include "tcp/tlp.h"
#include "tcp/tso.h"
#include "tcp/tsq.h"
#include "tcp/txt.h"
#include "wire/tcp.h"

/* Largest window a segment header can express unscaled, and the scale limit (RFC 7323 §2.3). */
#define TCP_MAX_WIN    65535u
#define TCP_MAX_WSCALE 14
/* Send-time records per connection (see struct brisk_sock.txt). */
#define TCP_PORT_BUCKETS  4096 /* struct brisk_tcp.port_refs */
#define TCP_ACK_DEFER_MAX 64   /* connections whose ACK a receive batch holds until its end */

/* Linux's TCP_TIMEOUT_MIN, 2 jiffies (the linux-* timer rules count in 1 ms jiffies): how soon a SYN goes
 * again after an unacceptable ACK in SYN-SENT (tcp_syn_rtx_soon). */
#define TCP_TIMEOUT_MIN_NS (2 * BRISK_NSEC_PER_MSEC)

/* Default MSS when the peer sends none (RFC 9293 §3.7.1, RFC 6691). */
#define TCP_DEFAULT_MSS 536u

/* Layout: hot and cold cache lines. An established connection's segment (arrival, ACK, send, the
 * application's read and write) runs through most of this struct, and with hundreds of connections every
 * line it touches is a cache miss (`brisk-bench rr --flows 256`: docs/performance.md). So the fields the
 * per-segment path reads or writes sit together, in three runs of whole cache lines — the socket is
 * allocated on a 64-byte boundary (tcp_conn_alloc) and every offset below counts from it — and the state
 * only a handshake, a loss episode, a timer expiry, a listener or brisk_conn_info reads fills the lines
 * between and after them:
 *
 *   lines  0-6    hot   identity and route (either family: two lines), snd (its stream first), ack, tsq,
 *                       rcv's hot head (128 bytes)
 *   lines  7-9    cold  rcv's tail (reassembly list, handshake numbers), the listener side, cc's undo copy
 *   lines 10-18   hot   cc (cwnd, CUBIC's per-ACK state), pace, events, rtt, sb, opt, rack, timer's head
 *   lines 19-23   cold  cork / pace / misc timers, rtt_probe, prr, hold's history
 *   line  24      hot   hold.reason, dupacks, the per-segment stat counters (wheel_ops: eager timers)
 *   lines 25-30   cold  the other counters; txt's ring (two of its lines per ACK), then its head (hot)
 *   line  31      cold  the socket options and error state only socket calls, timers and ICMP errors read
 *   lines 32-34   cold  write marks (PSH / end of record, mark.c): read only when snd.marks says there are
 *   lines 34-37   cold  Linux's receive-window state (rwin.c): read only under tcp_rcv_window=linux
 *   lines 37-38   cold  the send queue's pieces (piece.c): per write, and per packet only under tcp_sw_gso
 *   line  38      cold  loss recovery's episode state (RACK.fack, the D-SACK round, the first retransmission)
 *
 * Within a group, fields are ordered so that its hot ones are at the end that borders a hot line (sub-struct
 * comments say which). 2,496 bytes (2,496 allocated), 39 lines. When adding a field, add it to a cold line
 * unless the per-segment path needs it, and check the result: `gdb -batch -ex 'ptype /o struct brisk_sock'
 * build/brisk-bench` shows the offsets, and `valgrind --tool=cachegrind --cache-sim=yes build/brisk-bench rr
 * --flows 256 --tx 400` the D1 misses per transaction (docs/performance.md has the figures). */
struct brisk_sock {
    /* --- lines 0-6: hot --- */
    struct brisk_sock *hnext; /* hash chain */
    struct brisk_net *net;
    struct brisk_route rt; /* cached route to raddr (device, next hop, source): line 0 ends here */
    /* Line 1: the 4-tuple (either family; a listener's laddr may be 0.0.0.0 or ::, unbound: BRISK_AF_UNSPEC),
     * then the state bytes. */
    struct brisk_tuple id;
    uint8_t state;    /* enum brisk_tcp_state */
    uint8_t orphan;   /* the application closed it: the stack frees it when done */
    uint8_t in_table; /* in the connection (or listener) hash */
    uint8_t bound;    /* bind() or connect() fixed the local port */
    uint8_t in_aq;    /* a child on its listener's accept queue (else half-open, if listener) */
    uint8_t blocked;  /* on the stack's list of connections waiting for a device or buffers */
    uint8_t tos;      /* IP_TOS of every datagram it sends, ECN bits clear (BRISK_SO_TOS) */
    int error;        /* the error that closed the connection */
    brisk_sock_fn fn; /* the application's callback (socket side) */

    struct {
        struct brisk_sbuf buf; /* bytes from una: sent-unacked, then unsent */
        uint32_t una;          /* oldest unacknowledged sequence number */
        uint32_t nxt;          /* next sequence number to send */
        uint32_t max;          /* highest sequence number sent + 1 (snd.nxt before a rewind on RTO) */
        uint32_t wnd;          /* peer's window, bytes (scaled) */
        uint32_t wl1, wl2;     /* seq and ack of the segment that last updated wnd (RFC 9293 §3.10.7.4) */
        uint32_t max_wnd;      /* largest window the peer offered (Nagle's half-window push rule) */
        uint32_t mss;          /* effective send MSS: payload bytes per segment, options excluded */
        uint32_t sml;          /* Minshall: end of the last small segment sent */
        uint32_t sndbuf;       /* bound on buf.len */
        uint32_t lowat;        /* notsent_lowat: writable only while unsent < lowat (0 = off) */
        uint8_t fin_queued;    /* shutdown/close asked for a FIN after the data */
        uint8_t nodelay, cork; /* socket options */
        uint8_t more;          /* the last send carried MSG_MORE */
        uint8_t wscale;        /* shift the peer applies to its windows (we apply it to theirs) */
        uint8_t was_full;      /* send() hit the buffer limit: wake the writer when space returns */
        /* Not per segment, except marks and the push flags (in what was padding, so the lines stay put): */
        uint8_t fin_sent;    /* the FIN occupies sequence number snd.max - 1 */
        uint8_t syn_refused; /* our SYN / SYN-ACK was refused by the device: resend it on resume */
        uint8_t marks;       /* write marks in `mark` (mark.c); 0: the transmit path skips them */
        uint32_t iss;        /* initial send sequence number */
        uint8_t push_once;   /* TCP_NODELAY was set: TCP_CORK and Nagle yield until a write starts a piece */
        uint8_t push_write;  /* this send was cut short (buffer, low-water mark): push its tail now */
        uint8_t fin_alone;   /* the FIN last went out in a segment of its own, not on the last data */
        uint8_t push_mode;   /* TCP_PUSH_*: how this one call of the transmit function pushes (tcp_sw_gso) */
    } snd;

    struct {
        uint64_t ato;          /* current delayed-ACK timeout */
        uint64_t last_data_rx; /* for ato estimation */
        uint16_t unacked_segs; /* full-sized segments received since our last ACK (bounded by the window) */
        uint8_t comp;          /* ACKs held by SACK compression since the last one sent (ackcomp.h) */
        uint8_t comp_dup;      /* its duplicate-ACK count, and TCP_ACKCOMP_ARMED */
        uint8_t pending;       /* an ACK is owed */
        uint8_t pingpong;      /* interactive: delay ACKs, they ride on our data */
        uint8_t quick;         /* ACKs still to send at once (quickack mode, start of connection) */
        uint8_t refused;       /* the device or pool refused the ACK: resend when the stack resumes us */
    } ack;

    struct tcp_tsq tsq; /* below-TCP accounting, TSQ's throttle (tsq.h) */

    /* Hot head (128 bytes: the scalars, the stream, ooo's counts), then the cold tail: lines 7-9 begin. */
    struct {
        uint32_t nxt;           /* next sequence number expected */
        uint32_t adv;           /* right edge of the window we last advertised (rcv.nxt + rcv.wnd) */
        uint32_t last_win;      /* the window we last advertised, bytes (zero-window transitions) */
        uint32_t rcvbuf;        /* bound on buffered bytes (in-order + out-of-order) */
        uint8_t wscale;         /* shift we apply to our advertised window */
        uint8_t fin;            /* the peer's FIN was received in order */
        uint8_t fin_pending;    /* a FIN arrived out of order: it takes effect when rcv.nxt reaches fin_seq */
        uint8_t dsack;          /* a duplicate arrived: report it as a D-SACK block (RFC 2883) */
        uint32_t wup;           /* RCV.NXT our last ACK carried (RFC 7323's Last.ACK.sent, Linux rcv_wup) */
        struct brisk_sbuf buf;  /* in-order bytes not yet read by the application */
        struct brisk_reass ooo; /* out-of-order data (RFC 9293 §3.10.7.4, RFC 2018); its counts first */
        /* Not per segment: */
        uint32_t irs;     /* initial receive sequence number */
        uint32_t fin_seq; /* sequence number of a FIN that arrived out of order (fin_pending) */
        uint32_t dsack_start, dsack_end;
    } rcv;

    /* --- lines 7-9: cold --- */
    struct {
        struct brisk_sock *head, *tail; /* established children awaiting accept */
        uint32_t len, backlog;
        uint32_t syn_count; /* children in SYN-RECEIVED */
    } lq;
    struct brisk_sock *listener;     /* for a child: its listener until accepted */
    struct brisk_sock *aq_next;      /* accept queue / SYN queue link */
    struct brisk_sock *blocked_next; /* the stack's list of blocked connections */
    /* Starts 48 bytes before line 10: its first 48 bytes are CUBIC's undo copy (cold), the rest is hot. */
    struct brisk_cc_state cc;

    /* --- lines 10-18: hot --- */
    struct tcp_pace pace; /* the next departure time (pacing.h) */
    const struct brisk_cc_ops *cc_ops;
    void *ctx; /* the callback's argument */
    struct brisk_evq_node ev; /* pending events, on the stack's queue (core/evq.h) */

    struct brisk_rtt rtt;
    struct tcp_undo undo; /* undo (recovery.h) */

    struct tcp_sb sb; /* the SACK scoreboard (sack.h) */

    struct {
        uint8_t keepalive; /* read per segment (tcp_keepalive_reset); the rest only by the keepalive timer */
        uint32_t keepcnt;
        uint64_t keepidle, keepintvl;
    } so;

    struct {
        uint64_t ts_recent_age; /* when TS.Recent was set (PAWS 24-day rule) */
        uint32_t ts_recent;     /* TS.Recent (RFC 7323 §4.3) */
        uint32_t ts_offset;     /* random per-connection TSval offset (RFC 7323 §5.4) */
        uint8_t ts;             /* timestamps in use (RFC 7323) */
        uint8_t sack;           /* SACK permitted both ways (RFC 2018) */
        uint8_t ws;             /* window scaling in use */
        uint32_t mss_clamp;     /* MAXSEG option, 0 = none */
        uint32_t peer_mss;      /* MSS the peer announced */
    } opt;

    struct tcp_rack rack; /* RACK (rack.h) */

    struct tcp_timers timer; /* the deadlines and timers (tcp/timer.h) */

    /* --- lines 19-23: cold (the timer's tail above, then) --- */
    struct {
        uint64_t at; /* when the SYN (or SYN-ACK) was first sent: the handshake's RTT sample; BRISK_TIME_NONE
                        when there is none to take (not sent yet, retransmitted, taken, or a SYN cookie) */
    } rtt_probe;
    struct tcp_prr prr;   /* PRR (recovery.h) */
    struct tcp_reno reno; /* recovery without SACK (recovery.h) */
    /* Why the transmit function stopped (hold.h): the reason is checked per segment (line 24), the history
     * is not. */
    struct tcp_hold hold;

    /* --- line 24: hot (hold.reason above, then) --- */
    uint32_t dupacks;     /* consecutive duplicate ACKs (RFC 5681 §2) */
    uint32_t reno_sacked; /* tcp_nosack_prr: duplicate ACKs counted as segments gone (Linux sacked_out) */
    struct {
        uint64_t bytes_sent, bytes_acked, bytes_received;
        uint64_t segs_out, segs_in;
        uint64_t wheel_ops; /* timer arm / cancel operations of this connection (per segment: eager) */
        /* --- lines 25-30: cold --- */
        uint64_t retransmits, rto_count, fast_retransmits;
        uint64_t tlp_probes, tlp_recoveries;
        uint64_t undos; /* reductions undone (F-RTO, D-SACK) */
        /* Linux timers only (tcp_loss_timers): the largest reordering seen, in segments: how far below the
         * highest SACKed sequence an original transmission arrived (Linux's tp->reordering beyond 3). */
        uint64_t reordering;
    } stat;

    struct tcp_txt txt; /* send times for RTT samples (txt.h) */

    /* --- line 31: cold --- */
    /* Socket options no segment reads (the rest of `so`; a child copies both from its listener). */
    struct {
        uint64_t user_timeout; /* TCP_USER_TIMEOUT (RFC 5482), ns; 0 = off */
        uint64_t linger;       /* SO_LINGER time, ns, when linger_on (0: close aborts) */
        uint8_t linger_on;     /* SO_LINGER set */
        uint8_t lingering;     /* brisk_close returned INPROGRESS: the next close releases the handle */
        uint8_t v6only;        /* BRISK_SO_V6ONLY: bound to ::, it takes and reaches IPv6 only */
        uint32_t nd_tick;      /* now >> 30 (~1.07 s) when progress last confirmed the IPv6 next hop */
    } sox;
    /* Where the user timeout counts from (timer.c). */
    struct {
        uint64_t rtx_first;    /* first retransmission of the timeouts in progress (Linux retrans_stamp) */
        uint64_t probe0_first; /* the first zero-window probe of the closed window (icsk_probes_tstamp) */
        uint8_t rtx_on;        /* rtx_first is set: retransmitted data is outstanding */
        uint8_t probe0_on;     /* probe0_first is set */
    } uto;
    /* The last ICMP error the connection kept instead of failing (Linux sk_err_soft, icmp_err.c): reported in
     * place of BRISK_ERR_TIMEDOUT if the connection times out before the peer is heard from again. */
    struct {
        int err;          /* BRISK_ERR_*, 0 = none */
        uint64_t segs_in; /* stat.segs_in when it came: a segment since clears it */
    } soft;
    uint64_t oow_ack_at; /* the last ACK to an invalid segment (tcp_invalid_ratelimit); NONE: never */

    /* --- lines 32-34: cold --- */
    struct tcp_marks mark; /* write boundaries: PSH and end-of-record marks (mark.c) */

    /* --- lines 34-37: cold --- */
    struct tcp_rwin rw; /* Linux's receive-window state (rwin.c; tcp_rcv_window=linux only) */

    /* --- lines 37-38: cold --- */
    struct tcp_pieces pieces; /* the unsent bytes as Linux's skbs (piece.c) */
    uint32_t mss_full;        /* the MSS the options allow; snd.mss may be less (tcp_half_window_mss) */
    /* --- line 38: cold --- */
    struct tcp_recov recov; /* loss recovery's episode state (recovery.h) */
    uint32_t ackcomp_nxt;   /* RCV.NXT the compression's duplicate ACKs were counted for (ackcomp.c) */
};

/* The layout described before the struct is a performance decision: these lock it, so that a field added in
 * the wrong place fails the build rather than a benchmark. Moving a hot field, or growing the struct, means
 * updating the layout comment and these together (and measuring: docs/performance.md). */
#define TCP_SOCK_LINE(field) (offsetof(struct brisk_sock, field) / 64)
_Static_assert(sizeof(struct brisk_sock) == 39 * 64, "struct brisk_sock is 39 cache lines");
_Static_assert(offsetof(struct brisk_sock, id) == 64 && TCP_SOCK_LINE(fn) == 1,
               "line 0: the route, line 1: the 4-tuple and the state bytes");
_Static_assert(TCP_SOCK_LINE(snd.una) <= 6 && TCP_SOCK_LINE(ack.pending) <= 6 &&
                   TCP_SOCK_LINE(tsq.throttled) <= 6 && offsetof(struct brisk_sock, rcv) + 128 <= 7 * 64,
               "lines 0-6: identity, snd, ack, tsq and rcv's 128-byte hot head");
_Static_assert(offsetof(struct brisk_sock, cc) + 48 == 10 * 64,
               "cc begins with its 48 cold bytes before line 10");
_Static_assert(TCP_SOCK_LINE(pace) >= 10 && TCP_SOCK_LINE(ev) >= 10 && TCP_SOCK_LINE(rtt) >= 10 &&
                   TCP_SOCK_LINE(sb) <= 18 && TCP_SOCK_LINE(opt) <= 18 && TCP_SOCK_LINE(rack) <= 18 &&
                   TCP_SOCK_LINE(timer.rtx_deadline) <= 18 && TCP_SOCK_LINE(timer.rtx) <= 18 &&
                   TCP_SOCK_LINE(timer.delack.expires) <= 18,
               "lines 10-18: cc, pace, events, rtt, sb, opt, rack and the timer an ACK checks");
_Static_assert(TCP_SOCK_LINE(hold.reason) == 24 && TCP_SOCK_LINE(dupacks) == 24 &&
                   TCP_SOCK_LINE(stat.segs_out) == 24 && TCP_SOCK_LINE(stat.wheel_ops) == 24,
               "line 24: hold.reason, dupacks, the per-segment counters");
_Static_assert(TCP_SOCK_LINE(txt.rtx_high) == 30 && TCP_SOCK_LINE(txt.head) == 30, "line 30: txt's head");

/* snd.push_mode: a push from inside a write, as Linux's tcp_sendmsg_locked pushes (tcp_sw_gso). */
#define TCP_PUSH_CALL 0x1u /* Nagle and TCP_CORK yield for this call (TCP_NAGLE_PUSH) */
#define TCP_PUSH_ONE  0x2u /* one packet, never deferred (tcp_push_one) */
#define TCP_PUSH_FIN  0x4u /* the FIN was just queued: Nagle off for this call (tcp_send_fin) */

/* Per-stack TCP state: the ctx of the stack's IP protocol table entry for TCP (tcp_of). */
struct brisk_tcp {
    struct brisk_net *net;     /* the layer TCP runs on */
    struct brisk_evq *evq;     /* the stack's event queue */
    struct brisk_sock **conns; /* hash of connections by 4-tuple */
    uint32_t nconns_buckets;
    struct brisk_sock *last; /* the connection the last lookup found (NULL once it leaves the table) */
    /* Connections in the table per local port, folded to TCP_PORT_BUCKETS counters: a zero answers "is this
     * port in use?" (bind) without scanning the table. */
    uint32_t port_refs[TCP_PORT_BUCKETS];
    struct brisk_sock **listen; /* hash of listeners by port */
    uint32_t nlisten_buckets;
    uint8_t key[16];                      /* hash key and RFC 6528 secret, from the stack's seed */
    uint16_t next_port;                   /* ephemeral port cursor */
    uint64_t nsocks;                      /* live socket structs and TIME-WAIT records (leak checks) */
    struct brisk_sock *blocked_head;      /* connections whose last segment the device (or pool) refused */
    struct brisk_sock *zombies;           /* freed connections whose packets are still below TCP */
    struct brisk_chunkpool chunks;        /* send / receive buffer memory */
    uint32_t tw_count;                    /* connections in TIME-WAIT (bounded by tcp_max_tw_buckets) */
    struct tcp_tw_table tw;               /* TIME-WAIT records (timewait.c) */
    struct brisk_sock *tw_enter;          /* entered TIME-WAIT during this input: to settle at its end */
    /* A receive batch with coalescing is in progress: the ACK a connection owes for in-order data waits for
     * its end, so a batch gets one cumulative ACK per connection (input.c, brisk_tcp_batch_end). */
    int ack_defer;
    uint32_t ndeferred;
    struct brisk_sock *deferred[TCP_ACK_DEFER_MAX];
    struct {
        uint64_t window_start; /* RFC 5961 challenge ACK rate limit: one-second window */
        uint32_t count;
    } challenge;
};

/* TCP's state on a network layer (the stack registered it in the protocol table). */
static inline struct brisk_tcp *tcp_of(const struct brisk_net *net)
{
    return (struct brisk_tcp *)net->ip_proto[BRISK_IP_PROTO_TCP].ctx;
}

/* conn.c */
/* TCP's state for a stack: connection tables, buffer memory, its key; events go to `evq`. NULL if out of
 * memory. The stack registers it as IP protocol 6 with brisk_tcp_proto (input.c). */
struct brisk_tcp *brisk_tcp_init(struct brisk_net *net, struct brisk_evq *evq);
void brisk_tcp_destroy(struct brisk_tcp *t);
/* What TCP gives the IP layer's protocol table (net.h). */
extern const struct brisk_ip_proto_ops brisk_tcp_proto;
brisk_sock *tcp_conn_alloc(struct brisk_net *net);
void tcp_conn_free(brisk_sock *c);
/* A connection for a SYN (or a SYN cookie's ACK) to listener l: routed, addressed, with l's options. NULL if
 * out of memory or unroutable. */
brisk_sock *tcp_child_new(brisk_sock *l, const struct brisk_tuple *id, const struct brisk_tcp_repr *seg);
/* SipHash of a 4-tuple under the stack's secret (connection table, and RFC 6528 ISNs in isn.c). An IPv4
 * tuple hashes the same 12 bytes it always did, so IPv4 ISNs and table order are as before IPv6 came. */
uint64_t tcp_tuple_hash(const struct brisk_tcp *t, const struct brisk_tuple *id);
int tcp_conn_hash_add(brisk_sock *c);
void tcp_conn_hash_del(brisk_sock *c);
/* The connection with this 4-tuple (laddr: ours), or NULL. */
brisk_sock *tcp_conn_lookup(struct brisk_net *net, const struct brisk_tuple *id);
/* The listener for a segment to laddr:lport: one bound to laddr itself, else to its family's any address,
 * else to :: (which takes IPv4 too, as Linux's IPv6 sockets without IPV6_V6ONLY, unless BRISK_SO_V6ONLY). */
brisk_sock *tcp_listener_lookup(struct brisk_net *net, const struct brisk_addr *laddr, uint16_t lport);
/* Whether two local addresses overlap for port sharing: equal, or one an any address that covers the other
 * (:: covers IPv4 addresses too unless its socket is IPv6-only: a_v6only / b_v6only). */
int tcp_laddr_overlap(const struct brisk_addr *a, int a_v6only, const struct brisk_addr *b, int b_v6only);
/* Whether local port lport is held on an address overlapping laddr (of a socket IPv6-only or not). */
int tcp_port_in_use(struct brisk_net *net, const struct brisk_addr *laddr, int v6only, uint16_t lport);
/* Literals for the IPv4 tuples and addresses tests and tools name (host order). */
#define TCP_TUPLE4(la, lp, ra, rp)                                                                             \
    (&(const struct brisk_tuple){.laddr = {.family = BRISK_AF_INET, .u.v4 = (la)},                          \
                                 .raddr = {.family = BRISK_AF_INET, .u.v4 = (ra)},                          \
                                 .lport = (lp),                                                             \
                                 .rport = (rp)})
#define TCP_ADDR4(a) (&(const struct brisk_addr){.family = BRISK_AF_INET, .u.v4 = (a)})
void tcp_set_state(brisk_sock *c, int state, uint64_t now);
/* Records events for delivery at the end of the current stack call. */
void tcp_raise(brisk_sock *c, unsigned events);
/* Puts c on the stack's event queue for its pending events (tcp_raise adds to them first). */
void tcp_ev_queue(brisk_sock *c);
/* Delivers one socket's pending events to its callback (the stack's event-queue dispatch for TCP); a socket
 * without a callback keeps them. */
void brisk_tcp_deliver(struct brisk_evq_node *n, uint64_t now);
/* Delivers the stack's pending events, unless a delivery is running (at the end of a socket call). */
static inline void tcp_deliver_events(struct brisk_net *net, uint64_t now)
{
    brisk_evq_deliver(tcp_of(net)->evq, now);
}
/* The stack-level calls' bodies (brisk_socket, brisk_stack_foreach_socket in brisk.h). */
brisk_sock *tcp_socket(struct brisk_tcp *t, int *err);
int tcp_foreach_socket(struct brisk_tcp *t, int (*fn)(void *ctx, brisk_sock *s), void *ctx);
/* Ends the connection with an error (reset, timeout): CLOSED, error set, timers off, app told. */
void tcp_conn_fail(brisk_sock *c, int err, uint64_t now);
/* The connection reached CLOSED normally or by failure: frees it if orphaned. */
void tcp_conn_done(brisk_sock *c, uint64_t now);
/* Smallest window scale that lets the window field express rcvbuf (RFC 7323 §2.3). */
uint8_t tcp_wscale_for(uint32_t rcvbuf);
/* Starts the handshake: ISN, TSval offset, `state` (SYN-SENT or SYN-RECEIVED), hashed, SYN (or SYN-ACK)
 * sent and its retransmission timer armed. The caller has set the 4-tuple, route and options. */
void tcp_open(brisk_sock *c, int state, uint64_t now);
/* Free payload space of the receive buffer, bytes: rcvbuf less what is queued in order and out of order
 * (the window under tcp_rcv_window=rfc9293). */
uint32_t tcp_rcv_space(const brisk_sock *c);

/* A segment could not be handed to the device (ring full) or built (pool empty): park the connection until
 * a TX completion frees room; brisk_stack_poll then runs it through tcp_write_xmit again. */
void tcp_block(brisk_sock *c);
void brisk_tcp_run_blocked(struct brisk_net *net, uint64_t now);

/* socket.c */
/* After an ACK and the transmit function it ran: BRISK_EV_WRITABLE for a writer that found the buffer full
 * (or its low-water mark reached), once there is room again (see socket.c). */
void tcp_check_writable(brisk_sock *c);

/* a * b / c, exact (floor) for every input whose result fits 64 bits; the 128-bit division (a libgcc call)
 * only when a * b overflows 64 bits, which per-packet rates and sizes never do. */
static inline uint64_t tcp_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t p;
    if (!__builtin_mul_overflow(a, b, &p))
        return p / c;
    return (uint64_t)((unsigned __int128)a * b / c);
}

/* input.c */
/* A segment for us (the protocol table's input; ctx: struct brisk_tcp). With BRISK_RX_CSUM_VALID in rx_flags
 * the device vouched for the checksum, so it is not verified again. */
void brisk_tcp_input(void *ctx, const struct brisk_ipv4_repr *ip, const uint8_t *seg, size_t len,
                     unsigned rx_flags, uint64_t now);
/* The same for a segment carried by IPv6 (the protocol table's input6). */
void brisk_tcp_input6(void *ctx, const struct brisk_ipv6_repr *ip, const uint8_t *seg, size_t len,
                      unsigned rx_flags, uint64_t now);

/* Takes a coalesced segment: `seg` is the first segment's header (parsed, checksum verified) with
 * payload_len the total of the `n` pieces, in sequence order, whose headers the caller found identical but
 * for the sequence number (and PSH). Returns 0 without touching anything when no synchronized connection
 * owns the segment — the caller then hands each frame to brisk_tcp_input() — else 1. */
int brisk_tcp_input_gro(void *ctx, const struct brisk_tuple *l3, const struct brisk_tcp_repr *seg,
                        const struct brisk_gro_piece *pieces, uint32_t n, uint64_t now);

/* A receive batch begins / ends (brisk_stack_input_batch with gro): in between, ACKs owed for in-order data
 * are held, and the end sends each connection's one cumulative ACK. An ACK owed for anything else (out of
 * order data, a hole filled, a FIN, a duplicate) goes at once and carries the held one with it. */
void brisk_tcp_batch_begin(struct brisk_net *net);
void brisk_tcp_batch_end(struct brisk_net *net, uint64_t now);
/* Forgets a connection's held ACK (it is being freed). */
void tcp_ack_undefer(brisk_sock *c);

/* Moves out-of-order data that became in order into the receive stream, as far as buffer memory allows. */
void tcp_rcv_drain_ooo(brisk_sock *c);

/* output.c */
/* Why the transmit function runs: what a call may send depends on it (tail.c, output.c). */
enum tcp_xmit_why {
    TCP_XMIT_SEND,   /* the application's send (brisk_send): auto-corking may hold the tail */
    TCP_XMIT_CALL,   /* another socket call: shutdown, TCP_NODELAY / TCP_CORK set, a push inside a write */
    TCP_XMIT_INPUT,  /* a segment arrived: data acknowledged, a window opened, an ACK owed */
    TCP_XMIT_TIMER,  /* a timer: retransmission, TLP, RACK's reordering deadline, a pacing departure */
    TCP_XMIT_PROBE,  /* a probe timer (cork ceiling, window probe): the head goes, held or not, with PSH */
    TCP_XMIT_RESUME, /* the stack's poll after a TX completion (TSQ, auto-cork, device): tcp_resume_nagle */
};
/* THE transmit function: sends whatever the windows, Nagle / cork and the queue allow for `why`. */
void tcp_write_xmit(brisk_sock *c, int why, uint64_t now);
/* New data [snd.nxt, +len) (and the FIN, if in flags) went out: advance snd.nxt / snd.max and the Minshall
 * mark. */
void tcp_advance_nxt(brisk_sock *c, uint32_t len, uint8_t flags, uint32_t mss);
/* PSH (BRISK_TCP_PSH or 0) for data [seq, seq + len), first sent or resent: with tcp_push_each_write, a PSH
 * mark at its end (Linux: the flag of the skb that ended a write); otherwise when it empties the send queue
 * (RFC 9293 MUST-61) or ends a record. */
uint8_t tcp_psh(brisk_sock *c, uint32_t seq, uint32_t len);
/* Shared by the two ways new data leaves (output.c's segments, piece.c's packets under tcp_sw_gso): */
/* TSQ, pacing and the device before a segment or packet goes: the hold reason, or BRISK_HOLD_NONE. */
int tcp_below_holds(brisk_sock *c, uint64_t now);
/* The FIN alone, once every byte is sent: BRISK_HOLD_DEVICE if the device refused it, else NONE; *sent set
 * if it went. */
int tcp_send_fin_alone(brisk_sock *c, uint64_t now, int *sent);
/* Sends `len` bytes at `seq` (a retransmission when seq is before snd.nxt) with `flags`. */
int tcp_transmit(brisk_sock *c, uint32_t seq, uint32_t len, uint8_t flags, uint64_t now);
void tcp_send_ack(brisk_sock *c, uint64_t now);
void tcp_send_syn(brisk_sock *c, uint64_t now);
/* A RST answering `seg`, which arrived on the 4-tuple id (laddr ours) and found no connection. */
void tcp_send_rst_for(struct brisk_net *net, const struct brisk_tuple *id,
                      const struct brisk_tcp_repr *seg, uint64_t now);
/* Sends the header h (no payload) from rt's source to dst outside any connection (a RST, a cookie SYN-ACK),
 * with a full checksum; counts TcpOutSegs. */
void tcp_send_bare(struct brisk_net *net, const struct brisk_route *rt, const struct brisk_addr *dst,
                   const struct brisk_tcp_repr *h, uint8_t tos, uint64_t now);

/* The segment b[0, len)'s checksum from src to dst (either family): complete, or with `partial` the
 * CHECKSUM_PARTIAL seed a device completes. */
static inline void tcp_csum_fill(uint8_t *b, size_t len, const struct brisk_addr *src, const struct brisk_addr *dst,
                                 int partial)
{
    if (src->family == BRISK_AF_INET6) {
        if (partial)
            brisk_tcp_csum_fill_partial6(b, len, src->u.v6, dst->u.v6);
        else
            brisk_tcp_csum_fill6(b, len, src->u.v6, dst->u.v6);
    } else if (partial) {
        brisk_tcp_csum_fill_partial(b, len, src->u.v4, dst->u.v4);
    } else {
        brisk_tcp_csum_fill(b, len, src->u.v4, dst->u.v4);
    }
}
void tcp_send_rst(brisk_sock *c, uint64_t now);
/* Challenge ACK (RFC 5961 §3.2, §4.2), rate limited per connection (tcp_invalid_ratelimit) and per stack. */
void tcp_send_challenge_ack(brisk_sock *c, uint64_t now);
/* Whether an ACK to an invalid segment must be skipped under tcp_invalid_ratelimit (Linux's
 * __tcp_oow_rate_limited): 1 within the interval of the last one (`*skipped` is counted), else 0, and the
 * interval starts now. */
int tcp_oow_limited(brisk_sock *c, uint64_t *skipped, uint64_t now);
/* Whether the peer's FIN is held out of order (it arrived ahead of a hole). */
int tcp_fin_held(const brisk_sock *c);
/* The SACK blocks (RFC 2018) of what is held out of order, most recent first, at most `max`: the data's
 * (reass.c), with a FIN held out of order in them — the block its data ends, or a block of its own, first
 * when nothing else is held, else last (its order of arrival is not kept). A FIN is one octet of sequence
 * space and Linux queues and SACKs it like data (tcp_data_queue_ofo): "sack 101:102" for a bare FIN, 101:202
 * for 100 bytes and a FIN. Returns how many. */
int tcp_sack_blocks(const brisk_sock *c, uint32_t (*blocks)[2], int max);
/* The IP and TCP headers without options on c's route: 40 bytes over IPv4, 60 over IPv6 (what an MSS is
 * taken from an MTU by, RFC 9293 §3.7.1, RFC 8200 §8.3). */
static inline uint32_t tcp_hdrs_len(const brisk_sock *c)
{
    return (uint32_t)brisk_route_l3_hlen(&c->rt) + BRISK_TCP_HLEN;
}
/* Our MSS to announce on a SYN: device MTU - tcp_hdrs_len, clamped by MAXSEG. */
uint32_t tcp_local_mss(const brisk_sock *c);
/* The effective send MSS once the options are agreed: the smaller of ours and the peer's, at least
 * tcp_min_snd_mss, less the timestamp option when it is in use. */
uint32_t tcp_snd_mss(const brisk_sock *c);
/* snd.mss from it: bounded to half the largest window the peer offered under tcp_half_window_mss (Linux
 * tcp_sync_mss, tcp_bound_to_half_wnd). A change after the handshake keeps the congestion window's count of
 * segments (Linux counts segments). */
void tcp_sync_mss(brisk_sock *c);
/* The payload a data segment may carry now: snd.mss less the SACK blocks our ACKs must carry (Linux's
 * tcp_current_mss). */
uint32_t tcp_mss_now(brisk_sock *c);
/* TSval for `now` on this connection (1 ms clock, RFC 7323 §5.4). */
uint32_t tcp_ts_now(const brisk_sock *c, uint64_t now);

/* icmp_err.c — ICMP errors about segments we sent (RFC 1122 §4.2.3.9, RFC 5927) */
/* How tcp_syn_icmp_errors treats errors for an opening connection. */
#define TCP_SYN_ICMP_RFC1122 0 /* hard errors end it; soft ones are kept for the timeout */
#define TCP_SYN_ICMP_LINUX   1 /* every error ends it (tcp_v4_err); half-open children: tcp_req_err */
/* An ICMP error of `type` / `code` quoting a TCP segment: `quoted` is the quoted IPv4 header and `th` the
 * first `len` (>= 8) bytes of its TCP header. Validated against the connection it names (ports, sequence
 * number), then it fails the connection, is kept as its soft error, or is ignored. */
void brisk_tcp_icmp_error(void *ctx, uint8_t type, uint8_t code, uint32_t info, const struct brisk_ipv4_repr *quoted,
                          const uint8_t *th, size_t len, uint64_t now);
/* The same for an ICMPv6 error quoting a segment sent over IPv6 (the protocol table's icmp6_error). */
void brisk_tcp_icmp6_error(void *ctx, uint8_t type, uint8_t code, uint32_t info,
                           const struct brisk_ipv6_repr *quoted, const uint8_t *th, size_t len, uint64_t now);
/* The error a timeout reports: the soft error kept since the peer was last heard from, else
 * BRISK_ERR_TIMEDOUT (Linux tcp_write_err). */
int tcp_timeout_error(const brisk_sock *c);

/* isn.c */
uint32_t tcp_isn(struct brisk_net *net, const struct brisk_tuple *id, uint64_t now);

/* invariants.c — internal consistency of a connection (sequence space, buffers, scoreboard, TSQ, timers) */
/* NULL when every invariant holds, else a description of the first broken one, written into buf[n]. */
const char *tcp_invariants_violation(const brisk_sock *c, char *buf, size_t n);
/* Prints the connection and the broken invariant to stderr and aborts; returns if all hold. */
void tcp_check_invariants(const brisk_sock *c);
/* Checks the connection and the listener a 4-tuple names now, if they exist (the caller's may be freed). */
void tcp_check_tuple(struct brisk_net *net, const struct brisk_tuple *id);
/* Hooks after each segment and timer callback: compiled in only with BRISK_INVARIANTS (debug, sanitizer). */
#ifdef BRISK_INVARIANTS
#define TCP_CHECK_TUPLE(net, id) tcp_check_tuple(net, id)
#else
#define TCP_CHECK_TUPLE(net, id) ((void)0)
#endif

/* RFC 9293 §3.10.7.4 "first": whether a segment [seq, seq + seglen) is (partly) inside the receive window
 * [nxt, adv) — for a connection (input.c) and for a TIME-WAIT record's frozen window (timewait.c). */
static inline int tcp_seq_acceptable(uint32_t nxt, uint32_t adv, uint32_t seq, uint32_t seglen)
{
    uint32_t wnd = brisk_seq_gt(adv, nxt) ? adv - nxt : 0;
    if (seglen == 0)
        return wnd == 0 ? seq == nxt : brisk_seq_leq(nxt, seq) && brisk_seq_lt(seq, nxt + wnd);
    if (wnd == 0)
        return 0;
    uint32_t last = seq + seglen - 1;
    return (brisk_seq_leq(nxt, seq) && brisk_seq_lt(seq, nxt + wnd)) ||
           (brisk_seq_leq(nxt, last) && brisk_seq_lt(last, nxt + wnd));
}

static inline uint32_t tcp_flight(const brisk_sock *c)
{
    return c->snd.nxt - c->snd.una;
}

/* The send buffer's first byte is sequence number snd.una (data is only queued once the SYN is acknowledged),
 * so the data ends at snd.una + buf.len; the FIN, when sent, takes the sequence number after it. */
static inline uint32_t tcp_data_end(const brisk_sock *c)
{
    return c->snd.una + (uint32_t)c->snd.buf.len;
}

/* Bytes queued and not yet sent. */
static inline uint32_t tcp_notsent(const brisk_sock *c)
{
    int32_t d = (int32_t)(tcp_data_end(c) - c->snd.nxt);
    return d > 0 ? (uint32_t)d : 0;
}

/* The mechanism headers' inline parts, which need struct brisk_sock (pacing.h explains the two parts). */
#define BRISK_TCP_SOCK_COMPLETE
/* In this order: the timers' and the scoreboard's interfaces come before the fast paths that use them. */
#include "tcp/timer.h"

#include "tcp/rwin.h"

#include "tcp/sack.h"

#include "tcp/recovery.h"

#include "tcp/txt.h"

#include "tcp/pacing.h"

#include "tcp/tsq.h"

#endif
