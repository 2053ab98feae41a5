/*
 * sim.h — brisk's deterministic network simulator (libbrisk_sim).
 *
 * A world has a virtual clock in nanoseconds and one event queue ordered by (time, insertion sequence), so a
 * run is a pure function of its configuration and seed. It holds hosts (each a brisk stack), NICs on hosts,
 * raw ports (a test or scripted peer sees frames directly), routers (ports that forward IPv4 through output
 * queues), and point-to-point links between two ports.
 *
 * Timeline of one frame sent by a host:
 *   xmit at t0 -> a TX-ring descriptor is taken (ring full => BRISK_ERR_BUSY to the stack)
 *   -> the frame enters the link direction's drop-tail queue (over the byte/packet limit => dropped, counted)
 *   -> serialized at the link rate: start = max(t0, previous end), end = start + bytes*8/rate
 *      (bytes = the Ethernet frame without preamble/FCS; GSO super-frames are cut into MSS frames first and
 *      checksum-partial packets are completed, as a NIC does)
 *   -> TX completion reported to the stack per the NIC's completion model, relative to `end`
 *      (the descriptor is held until then, so slow completions fill the ring, as in real drivers)
 *   -> impairments (loss, burst loss, corruption, duplication, reordering) decide the frame's fate
 *   -> delivered to the peer port at end + propagation delay (+ reorder delay).
 * So on an idle link a B-byte frame arrives exactly B*8/rate + delay after it was sent.
 *
 * Hosts are driven by the world: after every event that touches a host, the world calls brisk_stack_poll()
 * and keeps one wake-up event at brisk_stack_next_deadline().
 */
#ifndef BRISK_SIM_H
#define BRISK_SIM_H

#include <stdio.h>

#include "brisk/brisk.h"
#include "brisk/netdev.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct brisk_sim_world brisk_sim_world;
typedef struct brisk_sim_host brisk_sim_host;
typedef struct brisk_sim_port brisk_sim_port;
typedef struct brisk_sim_link brisk_sim_link;

/* ---- world ---- */
brisk_sim_world *brisk_sim_world_new(uint64_t seed);
void brisk_sim_world_free(brisk_sim_world *w); /* frees hosts, ports, links, captures (closing files) */
uint64_t brisk_sim_now(const brisk_sim_world *w);

/* Runs events in order until the queue is empty or the next event is later than `until` (then the clock is
 * set to `until`). Returns the number of events run. */
uint64_t brisk_sim_run_until(brisk_sim_world *w, uint64_t until);
/* Runs until `done(ctx)` returns nonzero (checked after every event), the queue empties, or the clock would
 * pass `limit`. Returns 1 if done() became true, 0 otherwise. */
int brisk_sim_run_while(brisk_sim_world *w, int (*done)(void *ctx), void *ctx, uint64_t limit);

/* Schedules fn(ctx, now) at virtual time `at` (>= now). Returns BRISK_OK or BRISK_ERR_NOMEM / INVAL. */
int brisk_sim_at(brisk_sim_world *w, uint64_t at, void (*fn)(void *ctx, uint64_t now), void *ctx);

struct brisk_sim_stats {
    uint64_t events;           /* events run */
    uint64_t frames_delivered; /* frames handed to a receiving port */
};
void brisk_sim_world_stats(const brisk_sim_world *w, struct brisk_sim_stats *out);

/* ---- hosts ---- */
/* Adds a host running a brisk stack made from `s` (NULL = defaults; its seed is replaced by one derived from
 * the world seed and the host index, unless s->seed is nonzero). */
brisk_sim_host *brisk_sim_host_add(brisk_sim_world *w, const char *name, const struct brisk_settings *s);
brisk_stack *brisk_sim_host_stack(brisk_sim_host *h);
const char *brisk_sim_host_name(const brisk_sim_host *h);
/* Tells the world that application code touched the host's stack outside a world event (it sent data), so it
 * must poll the stack and re-read its deadline. Safe to call from anywhere, including event callbacks. */
void brisk_sim_host_kick(brisk_sim_host *h);

/* ---- NICs ---- */
enum brisk_sim_completion {
    BRISK_SIM_TXC_IMMEDIATE, /* complete at the end of serialization */
    BRISK_SIM_TXC_DELAY,     /* complete `delay_ns` after the end of serialization */
    BRISK_SIM_TXC_COALESCE,  /* complete in batches: when `frames` frames are waiting, or `timeout_ns` after
                                the oldest waiting frame finished serializing, whichever comes first */
};
struct brisk_sim_txc {
    enum brisk_sim_completion model;
    uint64_t delay_ns;   /* DELAY */
    uint32_t frames;     /* COALESCE threshold */
    uint64_t timeout_ns; /* COALESCE timer */
};
/* Parses "immediate", "delay 190us" / "delay:190us", "coalesce 16 10ms" / "coalesce:16:10ms". */
int brisk_sim_txc_parse(const char *s, struct brisk_sim_txc *out);

struct brisk_sim_nic_config {
    struct brisk_netdev_config dev; /* MAC, MTU, caps (GSO / CSUM), IPv4 address and prefix */
    uint32_t tx_ring;               /* TX descriptors (packets held from xmit until completion) */
    struct brisk_sim_txc txc;       /* TX-completion model */
    /* Receive polling (NAPI): 0 = each arriving frame goes to the stack at once, on its own
     * (brisk_stack_input_flags); N = an arriving frame waits for a poll at the same instant, which hands the
     * stack every frame that arrived by then, up to N per poll, in one brisk_stack_input_batch (so the
     * stack's receive coalescing, the gro setting, can join them). At most SIM_RX_BATCH_MAX (256). */
    uint32_t rx_batch;
    /* With rx_batch: interrupt moderation (ethtool's rx-usecs). The poll runs this long after the first frame
     * of a batch arrived, or at once when rx_batch frames wait, so frames serialized back to back join one
     * poll — and the stack's GRO makes of them one segment, answered by one ACK, as a receiver of offloaded
     * super-frames does. 0: the poll runs at the same instant (only frames arriving together join). */
    uint64_t rx_coalesce_ns;
};
void brisk_sim_nic_config_default(struct brisk_sim_nic_config *c); /* ring 1024, immediate, MTU 1500 */

/* Adds a NIC to a host (registering a netdev with its stack) and returns its port. */
brisk_sim_port *brisk_sim_nic_add(brisk_sim_host *h, const struct brisk_sim_nic_config *c);
brisk_netdev *brisk_sim_port_netdev(brisk_sim_port *p); /* NULL for raw ports */
/* A NIC with the default configuration (MAC 02:00:00:<host>:<nic>) and address ip/prefix_len, plus `caps`. */
brisk_sim_port *brisk_sim_nic_add_ip(brisk_sim_host *h, uint32_t ip, uint8_t prefix_len, uint32_t caps);

/* ---- raw ports: a test or scripted peer sends and receives frames itself ---- */
typedef void (*brisk_sim_rx_fn)(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, uint64_t now);
brisk_sim_port *brisk_sim_raw_port_add(brisk_sim_world *w, const char *name, brisk_sim_rx_fn rx, void *ctx);
/* Sends a frame from a raw port at the current time (copied). Raw ports have an unbounded ring and immediate
 * completion. Returns BRISK_OK, BRISK_ERR_INVAL, or BRISK_ERR_NOMEM. */
int brisk_sim_raw_send(brisk_sim_port *p, const uint8_t *frame, size_t len);

/* ---- links ---- */
enum brisk_sim_loss_model {
    BRISK_SIM_LOSS_NONE,
    BRISK_SIM_LOSS_RANDOM,
    BRISK_SIM_LOSS_GILBERT,
    BRISK_SIM_LOSS_BURST, /* runs of exactly burst_len consecutive frames, about `loss` of all frames */
};
struct brisk_sim_impair {
    double loss;        /* RANDOM: drop probability per frame; BURST: the share of frames lost */
    uint32_t burst_len; /* BURST: frames per loss event (a lost 64 KB offloaded frame is ~45 segments) */
    enum brisk_sim_loss_model loss_model;
    double ge_p_good_to_bad; /* GILBERT: per-frame transition probabilities and loss in each state */
    double ge_p_bad_to_good;
    double ge_loss_good;
    double ge_loss_bad;
    const uint64_t
        *loss_mask;       /* exact loss: drop the frames whose 0-based index on this direction is listed */
    size_t loss_mask_len; /* (sorted ascending; the array must outlive the link) */
    double reorder;       /* probability a frame is held back by reorder_delay_ns */
    uint64_t reorder_delay_ns;
    double duplicate; /* probability a frame is delivered twice */
    double corrupt;   /* probability one byte of the frame is flipped (at an offset >= 14) */
    /* A scripted drop (tests): asked about each frame the other impairments let through, before corruption;
     * nonzero drops it. Must not change the frame; ctx must outlive the link. */
    int (*drop_fn)(void *ctx, const uint8_t *frame, size_t len);
    void *drop_ctx;
};
struct brisk_sim_link_dir {
    uint64_t rate_bps;    /* serialization rate */
    uint64_t delay_ns;    /* propagation delay */
    uint64_t queue_bytes; /* drop-tail limits of the queue in front of the transmitter (0 = none) */
    uint32_t queue_packets;
    struct brisk_sim_impair impair;
};
struct brisk_sim_link_config {
    struct brisk_sim_link_dir ab, ba; /* a -> b and b -> a */
};
/* Both directions: rate, delay, no queue limits, no impairments. */
void brisk_sim_link_config_symmetric(struct brisk_sim_link_config *c, uint64_t rate_bps, uint64_t delay_ns);

/* Connects two unconnected ports. Returns the link, or NULL (INVAL: a port already connected). */
brisk_sim_link *brisk_sim_link_connect(brisk_sim_world *w, brisk_sim_port *a, brisk_sim_port *b,
                                       const struct brisk_sim_link_config *c);

struct brisk_sim_link_stats {
    uint64_t frames_in; /* frames offered to this direction */
    uint64_t bytes_in;
    uint64_t queue_drops; /* drop-tail */
    uint64_t frames_sent; /* serialized */
    uint64_t bytes_sent;
    uint64_t lost; /* random / Gilbert-Elliott / mask */
    uint64_t corrupted;
    uint64_t duplicated;
    uint64_t reordered;
    uint64_t delivered;
    uint64_t queue_max_bytes; /* high-water mark of the queue */
};
/* dir 0 = a -> b, 1 = b -> a */
void brisk_sim_link_stats(const brisk_sim_link *l, int dir, struct brisk_sim_link_stats *out);

struct brisk_sim_nic_stats {
    uint64_t tx_frames;      /* wire frames (after GSO) */
    uint64_t tx_busy;        /* xmit refused: ring full */
    uint64_t tx_completions; /* completions reported to the stack */
    uint32_t ring_used, ring_max_used;
    uint64_t rx_frames;
};
void brisk_sim_nic_stats(const brisk_sim_port *p, struct brisk_sim_nic_stats *out);

/* ---- routers ----
 * A forwarding element with N ports, each a port a link attaches to (router.c; IPv6 in router6.c, on ports
 * given an IPv6 address: brisk_sim_router_port_add_addr6). It forwards IPv4 by longest
 * prefix match over its connected prefixes and the routes added, rewrites the Ethernet addresses (source: the
 * output port; destination: the next hop's, resolved by ARP and learnt from the ARP packets it sees), answers
 * ARP for its port addresses, decrements the TTL (a datagram arriving with TTL <= 1 is dropped, counted and
 * answered with ICMP time exceeded, at most one a millisecond) and queues the datagram on the output port's queueing discipline, which feeds the link one
 * frame at a time at the link's rate (router_qdisc.c). Nothing is addressed to the router itself but ARP.
 */
typedef struct brisk_sim_router brisk_sim_router;

enum brisk_sim_qdisc_kind {
    BRISK_SIM_QDISC_DROPTAIL, /* one FIFO; an arrival over the limit is dropped */
    BRISK_SIM_QDISC_FQ_CODEL, /* RFC 8290: flow queues served by DRR, CoDel (RFC 8289) in each */
};
struct brisk_sim_qdisc {
    enum brisk_sim_qdisc_kind kind;
    uint32_t limit_packets; /* 0 = the default: 1000 (drop-tail, a txqueuelen), 10240 (fq_codel, Linux's) */
    uint64_t limit_bytes;   /* 0 = no byte limit */
    uint32_t flows;         /* fq_codel queues (0 = 1024; at most 65536) */
    uint32_t quantum;       /* fq_codel DRR quantum in bytes (0 = 1514) */
    uint64_t target_ns;     /* CoDel target (0 = 5 ms) */
    uint64_t interval_ns;   /* CoDel interval (0 = 100 ms; at most 1000 s) */
};
/* Parses "droptail" / "drop-tail" / "fifo" or "fq_codel" / "fq-codel". BRISK_OK or BRISK_ERR_INVAL. */
int brisk_sim_qdisc_parse(const char *s, enum brisk_sim_qdisc_kind *out);

/* Adds a router (no ports yet). NULL when out of memory. */
brisk_sim_router *brisk_sim_router_add(brisk_sim_world *w, const char *name);
/* Adds a port with address ip/prefix_len (its connected route) and a queueing discipline (NULL = drop-tail
 * with the defaults); MAC 02:00:01:<router>:<port>. At most 64 ports. NULL: bad argument or out of memory. */
brisk_sim_port *brisk_sim_router_port_add(brisk_sim_router *r, uint32_t ip, uint8_t prefix_len,
                                          const struct brisk_sim_qdisc *q);
/* Adds a route to prefix/prefix_len through `gateway`, which a port's connected prefix must cover (that port
 * is the way out). BRISK_OK, BRISK_ERR_INVAL (no port reaches the gateway, bad length) or BRISK_ERR_TOOMANY
 * (256 routes). */
int brisk_sim_router_route_add(brisk_sim_router *r, uint32_t prefix, uint8_t prefix_len, uint32_t gateway);
/* IPv6 on a router port (router6.c): its global address and on-link prefix (one per port; the port also
 * answers for its link-local address from its MAC). With it the router forwards IPv6 between such ports as
 * IPv4 (RFC 8200, RFC 4861 as a router needs them): Neighbour Discovery for ARP (solicitations answered with
 * the router flag, next hops resolved by solicitation and learnt from the ND messages it sees), the hop limit
 * for the TTL (a packet arriving with hop limit <= 1 is answered with ICMPv6 time exceeded, RFC 4443 §3.3),
 * never fragmenting (larger than the port's MTU: Packet Too Big with the MTU, RFC 4443 §3.2, or dropped
 * silently as set by brisk_sim_router_port_set_mtu), link-local destinations never forwarded. ICMPv6 errors
 * share the router's rate limit with ICMP's. BRISK_OK, BRISK_ERR_INVAL (not a router port, not a unicast
 * global address, a prefix above 128) or BRISK_ERR_EXIST (the port has one). */
int brisk_sim_router_port_add_addr6(brisk_sim_port *p, const struct brisk_addr *addr, uint8_t prefix_len);
/* An IPv6 route to prefix/prefix_len through `gateway`, which a port's connected IPv6 prefix must cover.
 * BRISK_OK, BRISK_ERR_INVAL (not IPv6, no port reaches the gateway, bad length) or BRISK_ERR_TOOMANY. */
int brisk_sim_router_route_add6(brisk_sim_router *r, const struct brisk_addr *prefix, uint8_t prefix_len,
                                const struct brisk_addr *gateway);
/* The largest datagram a router port sends (68..65535; the default is 65535: no limit), and whether a larger
 * one with DF is answered with ICMP fragmentation needed and the MTU (RFC 1191, RFC 1812 §5.2.7.1; rate-
 * limited with the router's other ICMP errors) or dropped silently (a "black hole", as behind a firewall
 * that filters ICMP). Datagrams without DF are dropped too: the router does not fragment (every stack in the
 * simulator sets DF). BRISK_OK or BRISK_ERR_INVAL (not a router port, MTU out of range). */
int brisk_sim_router_port_set_mtu(brisk_sim_port *p, uint32_t mtu, int send_icmp);

struct brisk_sim_router_stats {
    uint64_t forwarded;   /* datagrams queued on an output port (whatever the queue then did with them) */
    uint64_t ttl_expired; /* arrived with TTL (IPv6: hop limit) <= 1 */
    uint64_t icmp_sent;   /* ICMP / ICMPv6 errors sent back (time exceeded, too big) */
    uint64_t icmp_limited; /* ... not sent: at most one a millisecond */
    uint64_t no_route;    /* no prefix covers the destination */
    uint64_t neigh_drops; /* next hop unresolved and its hold queue full, or the neighbour table full */
    uint64_t local;       /* IPv4 / IPv6 addressed to the router but ND (it runs no stack: dropped) */
    uint64_t bad;         /* not Ethernet/IPv4/ARP/IPv6, a bad IP header, not addressed to the port's MAC,
                             IPv6 at a port without an IPv6 address, or a link-local destination not ours */
    uint64_t arp_requests, arp_replies; /* sent */
    uint64_t too_big;      /* larger than the output port's MTU: dropped (the router does not fragment) */
    uint64_t frag_needed;  /* ... of them DF, answered with ICMP fragmentation needed (RFC 1191) or, IPv6,
                              with Packet Too Big (RFC 4443 §3.2) */
    uint64_t nd_solicits, nd_adverts; /* IPv6 neighbour solicitations and advertisements sent */
};
void brisk_sim_router_stats(const brisk_sim_router *r, struct brisk_sim_router_stats *out);

struct brisk_sim_qdisc_stats {
    uint64_t enqueued;         /* frames accepted */
    uint64_t dequeued;         /* frames handed to the link */
    uint64_t bytes_dequeued;
    uint64_t dropped_overflow; /* over the limit (fq_codel: from the head of the fattest queue) */
    uint64_t dropped_codel;    /* CoDel's drops at dequeue */
    uint32_t max_packets;      /* high-water marks of the backlog */
    uint64_t max_bytes;
    uint64_t sojourn_sum_ns;   /* enqueue -> handed to the link, over the dequeued frames */
    uint64_t sojourn_max_ns;
    uint32_t backlog_packets;  /* now */
    uint64_t backlog_bytes;
};
/* The queue statistics of a router port. BRISK_OK, or BRISK_ERR_INVAL (not a router port). */
int brisk_sim_router_port_stats(const brisk_sim_port *p, struct brisk_sim_qdisc_stats *out);

/* ---- capture ---- */
/* Writes every frame a port sends (at the start of serialization) and receives (at delivery) to a pcap file
 * with nanosecond timestamps (readable by tcpdump -r, Wireshark). The file is opened here and closed by
 * brisk_sim_world_free. Returns BRISK_OK, BRISK_ERR_INVAL, or BRISK_ERR_NOENT (cannot open). */
int brisk_sim_capture(brisk_sim_port *p, const char *path);
/* The same, keeping only the first max_frames records and snaplen bytes of each (>= 14): a representative
 * slice of a long run (headers only with snaplen 128). */
int brisk_sim_capture_slice(brisk_sim_port *p, const char *path, uint64_t max_frames, uint32_t snaplen);

/* An observer sees the same frames at the same moments as a capture (rx 0: the port starts serializing it;
 * rx 1: it was delivered to the port), read-only and in memory: a tool reads headers as they pass instead of
 * parsing a file afterwards. The frame's checksums may still be pending (offload). One observer per port;
 * fn NULL removes it. BRISK_OK, or BRISK_ERR_INVAL (NULL port, or one observer already there). */
typedef void (*brisk_sim_observe_fn)(void *ctx, brisk_sim_port *p, const uint8_t *frame, size_t len, int rx,
                                     uint64_t now);
int brisk_sim_port_observe(brisk_sim_port *p, brisk_sim_observe_fn fn, void *ctx);

/* ---- applications: scripted TCP endpoints that drive real brisk sockets ---- */
/*
 * Bulk transfer: the client host connects to server_ip:port on the server host (which listens there), and
 * `bytes` flow client -> server, server -> client, or both ways at once. The data is a deterministic
 * pseudo-random stream (from `seed`), written in `write_size` pieces whenever the socket is writable; each
 * receiver compares what it reads with what was sent, so a run ends with a byte-exact verdict. Every side
 * shuts down its sending once it has written everything, and is finished when it has read the peer's FIN and
 * its connection is over (BRISK_EV_CLOSED: its own FIN acknowledged) — so a sender's figures cover the
 * delivery of its last send buffer. Its socket stays open until brisk_sim_bulk_free.
 */
enum brisk_sim_bulk_dir { BRISK_SIM_BULK_UP = 1, BRISK_SIM_BULK_DOWN = 2, BRISK_SIM_BULK_BOTH = 3 };
struct brisk_sim_bulk_config {
    uint64_t bytes;      /* per direction */
    uint32_t write_size; /* bytes per send() call (default 64 KB) */
    uint32_t read_size;  /* bytes per recv() call (default 64 KB) */
    enum brisk_sim_bulk_dir dir;
    uint16_t port;
    uint64_t seed;     /* data stream seed */
    uint64_t start_at; /* virtual time of the connect */
    struct brisk_addr server_addr; /* the server's address of either family; BRISK_AF_UNSPEC: server_ip */
};
struct brisk_sim_bulk_side {
    uint64_t sent, received;     /* payload bytes written / read by this side */
    uint64_t bad_at;             /* offset of the first received byte that differs from the sent stream,
                                    UINT64_MAX if none */
    uint64_t done_at;            /* when this side read the peer's FIN (BRISK_TIME_NONE if never) */
    int error;                   /* socket error seen, BRISK_OK if none */
    struct brisk_conn_info info; /* when brisk_sim_bulk_result was called, or when the side failed */
};
struct brisk_sim_bulk_result {
    struct brisk_sim_bulk_side client, server;
    uint64_t connected_at;  /* BRISK_EV_CONNECTED at the client */
    uint64_t first_byte_at; /* first payload byte read by either side */
    uint64_t last_byte_at;  /* last payload byte read by either side */
    int complete;           /* every byte arrived and both sides saw the FIN */
    int hash_ok;            /* complete and every received byte equals the one sent */
};
typedef struct brisk_sim_bulk brisk_sim_bulk;
brisk_sim_bulk *brisk_sim_bulk_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                                     uint32_t server_ip, const struct brisk_sim_bulk_config *c);
int brisk_sim_bulk_done(const brisk_sim_bulk *b);  /* both sides finished (or failed) */
int brisk_sim_bulk_error(const brisk_sim_bulk *b); /* the first socket error either side saw, or BRISK_OK */
uint64_t brisk_sim_bulk_received(const brisk_sim_bulk *b); /* bytes read so far, both sides together */
void brisk_sim_bulk_result(const brisk_sim_bulk *b, struct brisk_sim_bulk_result *out);
void brisk_sim_bulk_free(brisk_sim_bulk *b); /* before the world; closes what is still open */

/* ---- request / response application ----
 * `flows` connections from client to server; once every one is connected, each runs `transactions` request /
 * response exchanges back to back: the client writes request_size bytes, the server answers response_size
 * bytes when the whole request has arrived, the client sends the next request when the whole response has.
 * The seed-004 workload (netperf TCP_RR). Timer work is measured from the moment all flows are connected to
 * the last response, on each host's stack (TCPTimerWheelOps).
 */
struct brisk_sim_rr_config {
    uint32_t flows;         /* 1 ... 65535 */
    uint32_t request_size;  /* bytes (default 1) */
    uint32_t response_size; /* bytes (default 1) */
    uint32_t transactions;  /* per flow (default 100) */
    uint16_t port;          /* server port (default 5001) */
    int nodelay;            /* TCP_NODELAY on both sides */
    uint64_t start_at;      /* virtual time of the connects */
    struct brisk_addr server_addr; /* the server's address of either family; BRISK_AF_UNSPEC: server_ip */
};
struct brisk_sim_rr_result {
    uint64_t transactions;                       /* completed, all flows */
    uint64_t errors;                             /* flows that failed (socket error or short send) */
    uint64_t measure_start, measure_end;         /* all connected -> last response */
    uint64_t lat_min, lat_p50, lat_p99, lat_max; /* per-transaction time, ns */
    uint64_t client_wheel_ops, server_wheel_ops; /* TCP timer wheel operations in the window, per host */
    uint64_t client_timer_fires,
        server_timer_fires;    /* wheel expirations in the window (stale ones included) */
    uint64_t tlp_probes, rtos; /* both hosts, in the window */
};
typedef struct brisk_sim_rr brisk_sim_rr;
brisk_sim_rr *brisk_sim_rr_start(brisk_sim_world *w, brisk_sim_host *client, brisk_sim_host *server,
                                 uint32_t server_ip, const struct brisk_sim_rr_config *c);
int brisk_sim_rr_done(const brisk_sim_rr *r); /* every flow finished (or failed) */
void brisk_sim_rr_result(const brisk_sim_rr *r, struct brisk_sim_rr_result *out);
void brisk_sim_rr_free(brisk_sim_rr *r); /* before the world; aborts what is still open */
/* Every completed transaction's time (ns), all flows; *n gets how many. In completion order until
 * brisk_sim_rr_result has been called, ascending after it. Valid until brisk_sim_rr_free. */
const uint64_t *brisk_sim_rr_latencies(const brisk_sim_rr *r, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
