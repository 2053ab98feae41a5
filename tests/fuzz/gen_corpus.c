/*
 * gen_corpus.c — writes the seed corpora under tests/fuzz/corpus/<target>/: valid inputs of every kind each
 * target parses, so fuzzing starts from deep inside the accepted input space. Frames come from the wire
 * module's own emitters; the stack and sequence seeds are played live against the harness's scenarios, so
 * every sequence number, acknowledgment and timestamp in them is the one the stack expects.
 *
 * Usage: fuzz-gen-corpus DIR   (DIR/<target>/seed-*; existing files of the same name are overwritten).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/harness.h"
#include "stack/stack.h"
#include "tcp/tcp.h"
#include "wire/arp.h"
#include "wire/csum.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/ipv4.h"
#include "wire/udp.h"
#include "wire/wire.h"

static const char *out_dir;

static void put(const char *target, const char *name, const uint8_t *b, size_t n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", out_dir, target);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/%s/seed-%s", out_dir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gen: cannot write %s\n", path);
        exit(1);
    }
}

static const uint8_t mac_us[6] = {0x02, 0, 0, 0, 0, 1}, mac_peer[6] = {0x02, 0, 0, 0, 0, 2};

static size_t ip_frame(uint8_t *buf, uint8_t proto, const uint8_t *l4, size_t n)
{
    return fakedev_ipv4_frame(buf, mac_us, mac_peer, FH_PEER_IP, FH_LOCAL_IP, proto, l4, n);
}

static size_t arp_frame(uint8_t *buf, uint16_t op, uint32_t tpa)
{
    memset(buf, 0, 60);
    struct brisk_eth_repr e = {.type = BRISK_ETH_P_ARP};
    memset(e.dst, 0xff, 6);
    memcpy(e.src, mac_peer, 6);
    brisk_eth_emit(buf, &e);
    struct brisk_arp_repr a = {.op = op, .spa = FH_PEER_IP, .tpa = tpa};
    memcpy(a.sha, mac_peer, 6);
    brisk_arp_emit(buf + BRISK_ETH_HLEN, &a);
    return 60;
}

static size_t echo(uint8_t *b, uint8_t type, size_t payload)
{
    uint8_t data[64];
    for (size_t i = 0; i < payload; i++)
        data[i] = (uint8_t)i;
    struct brisk_icmp_repr r = {.type = type, .id = 7, .seq = 1, .payload = data, .payload_len = payload};
    return brisk_icmp_emit(b, &r);
}

static size_t tcp_seg(uint8_t *b, const struct brisk_tcp_repr *t, size_t payload)
{
    size_t hl = brisk_tcp_emit(b, t);
    for (size_t i = 0; i < payload; i++)
        b[hl + i] = (uint8_t)(i * 7);
    brisk_tcp_csum_fill(b, hl + payload, FH_PEER_IP, FH_LOCAL_IP);
    return hl + payload;
}

static struct brisk_tcp_opts full(void)
{
    struct brisk_tcp_opts o = {
        .mss_ok = 1, .mss = 1460, .wscale_ok = 1, .wscale = 7, .sack_perm = 1, .ts_ok = 1, .ts_val = 100};
    return o;
}

static void gen_parsers(void)
{
    uint8_t f[2048], l4[1600];
    size_t n = arp_frame(f, BRISK_ARP_OP_REQUEST, FH_LOCAL_IP);
    put("eth", "arp", f, n);
    put("arp", "request", f + BRISK_ETH_HLEN, BRISK_ARP_LEN);
    n = arp_frame(f, BRISK_ARP_OP_REPLY, FH_LOCAL_IP);
    put("arp", "reply", f + BRISK_ETH_HLEN, n - BRISK_ETH_HLEN);

    size_t m = echo(l4, BRISK_ICMP_ECHO, 56);
    put("icmp", "echo", l4, m);
    n = ip_frame(f, BRISK_IP_PROTO_ICMP, l4, m);
    put("eth", "ipv4-icmp", f, n);
    put("ipv4", "icmp", f + BRISK_ETH_HLEN, n - BRISK_ETH_HLEN);
    /* Fragmentation needed, quoting a TCP segment of ours. */
    uint8_t quote[48];
    struct brisk_ipv4_repr qi = {
        .total_len = 40, .ttl = 64, .df = 1, .proto = 6, .src = FH_LOCAL_IP, .dst = FH_PEER_IP};
    brisk_ipv4_emit(quote, &qi);
    struct brisk_tcp_repr qt = {.sport = 80, .dport = FH_PEER_PORT, .seq = 1, .flags = BRISK_TCP_ACK};
    brisk_tcp_emit(quote + 20, &qt);
    struct brisk_icmp_repr un = {.type = BRISK_ICMP_DEST_UNREACH,
                                 .code = BRISK_ICMP_UNREACH_FRAG_NEEDED,
                                 .next_hop_mtu = 1280,
                                 .payload = quote,
                                 .payload_len = 40};
    m = brisk_icmp_emit(l4, &un);
    put("icmp", "frag-needed", l4, m);
    put("ipv4", "quoted", quote, 40);

    struct brisk_tcp_repr t = {.sport = FH_PEER_PORT,
                               .dport = FH_PORT,
                               .seq = 1000,
                               .flags = BRISK_TCP_SYN,
                               .window = 65535,
                               .opts = full()};
    m = tcp_seg(l4, &t, 0);
    put("tcp", "syn-full", l4, m);
    n = ip_frame(f, BRISK_IP_PROTO_TCP, l4, m);
    put("eth", "ipv4-tcp", f, n);
    put("ipv4", "tcp", f + BRISK_ETH_HLEN, n - BRISK_ETH_HLEN);
    t.flags = BRISK_TCP_ACK | BRISK_TCP_PSH;
    t.opts = (struct brisk_tcp_opts){.ts_ok = 1, .ts_val = 5, .ts_ecr = 6, .nsack = 3};
    for (int i = 0; i < 3; i++) {
        t.opts.sack[i].start = 5000u + 2000u * (uint32_t)i;
        t.opts.sack[i].end = 6000u + 2000u * (uint32_t)i;
    }
    m = tcp_seg(l4, &t, 100);
    put("tcp", "data-sack-ts", l4, m);
    t.opts = (struct brisk_tcp_opts){.nsack = 4};
    for (int i = 0; i < 4; i++) {
        t.opts.sack[i].start = 1u + 10u * (uint32_t)i;
        t.opts.sack[i].end = 5u + 10u * (uint32_t)i;
    }
    m = tcp_seg(l4, &t, 0);
    put("tcp", "sack4", l4, m);
    /* IPv4 with options (IHL 6) and a fragment. */
    uint8_t ipo[64] = {0x46, 0, 0, 32, 0, 1, 0x20, 0x01, 64, 17};
    brisk_put32(ipo + 12, FH_PEER_IP);
    brisk_put32(ipo + 16, FH_LOCAL_IP);
    ipo[20] = 1; /* NOP option */
    brisk_put16(ipo + 10, 0);
    brisk_put16(ipo + 10, brisk_csum_buf(ipo, 24));
    put("ipv4", "options-frag", ipo, 32);
}

static void single(const char *target, const char *name, uint8_t flags, const uint8_t *frame, size_t n)
{
    uint8_t b[2100];
    b[0] = flags;
    memcpy(b + 1, frame, n);
    put(target, name, b, n + 1);
}

/* Stack seeds: frames valid for the scenario's state right after setup. */
static void gen_stack(void)
{
    uint8_t f[2100];
    struct fh h;
    fh_init(&h, FH_LISTEN);
    struct brisk_tcp_repr syn = {.sport = FH_PEER_PORT + 1,
                                 .dport = FH_PORT,
                                 .seq = 5000,
                                 .flags = BRISK_TCP_SYN,
                                 .window = 65535,
                                 .opts = full()};
    single("stack_listen", "syn-full", 3, f, fh_tcp_frame(&h, f, &syn, NULL, 0));
    syn.opts = (struct brisk_tcp_opts){0};
    single("stack_listen", "syn-bare", 3, f, fh_tcp_frame(&h, f, &syn, NULL, 0));
    struct brisk_tcp_repr ack = syn;
    ack.flags = BRISK_TCP_ACK;
    ack.ack = 12345;
    single("stack_listen", "ack", 3, f, fh_tcp_frame(&h, f, &ack, NULL, 0));
    ack.flags = BRISK_TCP_RST;
    single("stack_listen", "rst", 3, f, fh_tcp_frame(&h, f, &ack, NULL, 0));
    single("stack_listen", "arp-request", 0, f, arp_frame(f, BRISK_ARP_OP_REQUEST, FH_LOCAL_IP));
    syn.opts = full();
    single("stack_listen", "cookie-syn", 3 | FH_COOKIES, f, fh_tcp_frame(&h, f, &syn, NULL, 0));
    fh_finish(&h);
    /* A cookie ACK valid at the harness's start time: learn the cookie from a stack in the same state. */
    fh_init_with(&h, FH_LISTEN, "tcp_syncookies=2");
    fh_input(&h, f, fh_tcp_frame(&h, f, &syn, NULL, 0), 0);
    ack = syn;
    ack.seq = syn.seq + 1;
    ack.ack = h.last.seq + 1;
    ack.flags = BRISK_TCP_ACK;
    ack.opts = (struct brisk_tcp_opts){.ts_ok = 1, .ts_val = 101, .ts_ecr = h.last.opts.ts_val};
    single("stack_listen", "cookie-ack", 3 | FH_COOKIES, f, fh_tcp_frame(&h, f, &ack, NULL, 0));
    uint8_t l4[128];
    size_t m = echo(l4, BRISK_ICMP_ECHO, 32);
    single("stack_listen", "echo", 3, f, ip_frame(f, BRISK_IP_PROTO_ICMP, l4, m));
    /* UDP: to the harness's socket on port 80, and to a closed port (ICMP port unreachable). */
    for (int closed = 0; closed < 2; closed++) {
        struct brisk_udp_repr u = {.sport = 5353, .dport = closed ? 81 : FH_PORT, .payload_len = 40};
        size_t ul = brisk_udp_emit(l4, &u);
        memset(l4 + ul, 0x5a, 40);
        brisk_udp_csum_fill(l4, ul + 40, FH_PEER_IP, FH_LOCAL_IP);
        single("stack_listen", closed ? "udp-closed" : "udp-bound", 3, f,
               ip_frame(f, BRISK_IP_PROTO_UDP, l4, ul + 40));
    }
    fh_finish(&h);

    for (int active = 0; active < 2; active++) {
        fh_init(&h, active ? FH_ACTIVE : FH_PASSIVE);
        uint8_t fl = (uint8_t)(3 | (active ? 4 : 0));
        const char *pre = active ? "active-" : "passive-";
        char name[64];
        struct brisk_tcp_repr t = {.sport = h.peer_port,
                                   .dport = h.local_port,
                                   .seq = h.peer_nxt,
                                   .ack = h.peer_ack,
                                   .flags = BRISK_TCP_ACK | BRISK_TCP_PSH,
                                   .window = 1024,
                                   .opts = {.ts_ok = 1, .ts_val = h.peer_tsval + 5, .ts_ecr = h.local_tsval}};
        uint8_t pay[1400];
        memset(pay, 'x', sizeof(pay));
#define SEED(label, tt, plen)                                                                                \
    do {                                                                                                     \
        snprintf(name, sizeof(name), "%s%s", pre, label);                                                    \
        single("stack_conn", name, fl, f, fh_tcp_frame(&h, f, &(tt), pay, (plen)));                          \
    } while (0)
        SEED("data", t, 100);
        SEED("data-full", t, 1400);
        struct brisk_tcp_repr u = t;
        u.flags = BRISK_TCP_ACK | BRISK_TCP_FIN;
        SEED("fin", u, 0);
        u = t;
        u.seq += 3000;
        SEED("ooo", u, 500);
        u.flags = BRISK_TCP_RST;
        u.seq = h.peer_nxt;
        u.opts.ts_ok = 0;
        SEED("rst", u, 0);
        u.seq += 100;
        SEED("rst-inwin", u, 0);
        u = t;
        u.flags = BRISK_TCP_SYN;
        SEED("syn", u, 0);
        u = t;
        u.flags = BRISK_TCP_ACK;
        u.opts.nsack = 2;
        u.opts.sack[0].start = h.peer_ack + 100;
        u.opts.sack[0].end = h.peer_ack + 200;
        u.opts.sack[1].start = h.peer_ack - 100;
        u.opts.sack[1].end = h.peer_ack;
        SEED("ack-sack", u, 0);
        u = t;
        u.ack += 5000;
        SEED("ack-unsent", u, 0);
        u = t;
        u.window = 0;
        SEED("zero-window", u, 10);
        u = t;
        u.opts.ts_val = 1;
        SEED("paws-old", u, 10);
        fh_finish(&h);
    }
}

/* A sequence seed built while it is played against the harness, so the stack's numbers are known. */
struct gseq {
    struct fh h;
    uint8_t buf[1 << 16];
    size_t len;
    uint32_t nxt, tsval; /* peer's next sequence number and TSval */
    uint16_t lport, pport;
    int hold_ts; /* the next segments repeat the TSval (a burst sent within one peer clock tick) */
};

static void g_begin(struct gseq *g, uint8_t mode)
{
    static const enum fh_scenario sc[4] = {FH_LISTEN, FH_PASSIVE, FH_ACTIVE, FH_PASSIVE};
    fh_init_with(&g->h, sc[(mode >> 2) & 3], (mode & 0x10) ? "tcp_syncookies=2" : NULL);
    g->buf[0] = mode;
    g->len = 1;
    g->nxt = g->h.peer_nxt;
    g->tsval = g->h.peer_tsval;
    g->pport = g->h.peer_port;
    g->lport = g->h.local_port;
    g->hold_ts = 0;
}

static void g_app(struct gseq *g, uint16_t delay_ms, unsigned op, unsigned arg)
{
    brisk_put16(g->buf + g->len, delay_ms);
    brisk_put16(g->buf + g->len + 2, (uint16_t)(0x8000u | op << 8 | arg));
    g->len += 4;
    fh_run(&g->h, g->h.now + (uint64_t)delay_ms * BRISK_NSEC_PER_MSEC);
    fh_app_call(&g->h, op, arg);
}

/* The peer sends `flags` with `plen` bytes at its next sequence number + `off`, acknowledging everything the
 * stack sent so far; the peer's sequence number advances only for a segment at off 0. */
static void g_seg_at(struct gseq *g, uint16_t delay_ms, uint8_t flags, size_t plen, uint32_t off)
{
    fh_run(&g->h, g->h.now + (uint64_t)delay_ms * BRISK_NSEC_PER_MSEC);
    struct brisk_tcp_repr t = {
        .sport = g->pport,
        .dport = g->lport,
        .seq = g->nxt + off,
        .ack = (flags & BRISK_TCP_ACK) ? g->h.local_end : 0,
        .flags = flags,
        .window = 2048,
        .opts = {.ts_ok = 1, .ts_val = g->hold_ts ? g->tsval : ++g->tsval, .ts_ecr = g->h.local_tsval}};
    if (flags & BRISK_TCP_SYN) {
        t.opts = full();
        t.opts.ts_val = g->tsval;
        t.window = 65535;
    }
    if (flags & BRISK_TCP_RST)
        t.opts.ts_ok = 0;
    if (g->buf[0] & FH_REL_SEQ) {
        brisk_sock *c = tcp_conn_lookup(&g->h.st->net, TCP_TUPLE4(FH_LOCAL_IP, g->lport, FH_PEER_IP, g->pport));
        if (c) {
            t.seq -= c->rcv.nxt;
            t.ack -= c->snd.una;
        }
    }
    uint8_t pay[1400], f[2100];
    for (size_t i = 0; i < plen; i++)
        pay[i] = (uint8_t)(g->nxt + off + i);
    size_t n = fh_tcp_frame(&g->h, f, &t, pay, plen);
    brisk_put16(g->buf + g->len, delay_ms);
    brisk_put16(g->buf + g->len + 2, (uint16_t)n);
    memcpy(g->buf + g->len + 4, f, n);
    g->len += 4 + n;
    fh_input(&g->h, f, n, g->buf[0] & (FH_FIX_CSUM | FH_FIX_ADDR | FH_REL_SEQ));
    if (off == 0)
        g->nxt += (uint32_t)plen + ((flags & BRISK_TCP_SYN) ? 1u : 0u) + ((flags & BRISK_TCP_FIN) ? 1u : 0u);
}

static void g_seg(struct gseq *g, uint16_t delay_ms, uint8_t flags, size_t plen)
{
    g_seg_at(g, delay_ms, flags, plen, 0);
}

static void g_end(struct gseq *g, const char *name)
{
    put("seq", name, g->buf, g->len);
    fh_finish(&g->h);
}

#define ACK BRISK_TCP_ACK
#define PSH BRISK_TCP_PSH
#define FIN BRISK_TCP_FIN
#define SYN BRISK_TCP_SYN
#define RST BRISK_TCP_RST

static void gen_seq(void)
{
    static struct gseq g;
    /* Passive: data in, data out, the peer closes first, then we do. */
    for (int rel = 0; rel < 2; rel++) {
        g_begin(&g, (uint8_t)(0x07 | (rel ? FH_REL_SEQ : 0)));
        g_seg(&g, 0, ACK | PSH, 200);
        g_app(&g, 1, 0, 7);
        g_app(&g, 0, 1, 15);
        g_seg(&g, 10, ACK, 0);
        g_seg(&g, 5, ACK | FIN, 0);
        g_app(&g, 1, 0, 0);
        g_app(&g, 1, 3, 0);
        g_seg(&g, 10, ACK, 0);
        g_app(&g, 2000, 7, 0);
        g_end(&g, rel ? "passive-close-wait-rel" : "passive-close-wait");
    }

    /* Passive, frames in receive batches (mode bit 5): bursts of in-order segments that coalesce, one with a
     * hole in the middle, the hole filled, the peer's FIN. The generator plays them one by one: the stack
     * sends only ACKs meanwhile, so the numbers the seed carries are the same either way. */
    g_begin(&g, 0x27);
    g_seg(&g, 0, ACK, 0);
    g.hold_ts = 1;
    for (int k = 0; k < 6; k++)
        g_seg(&g, 0, ACK, 1000);
    g_seg_at(&g, 1, ACK, 1000, 1000);
    g_seg_at(&g, 0, ACK, 1000, 2000);
    g_seg(&g, 0, ACK | PSH, 1000);
    g.hold_ts = 0;
    g_app(&g, 0, 0, 255);
    g_seg(&g, 1, ACK | FIN, 0);
    g_app(&g, 0, 3, 0);
    g_seg(&g, 1, ACK, 0);
    g_end(&g, "passive-gro-batches");

    /* Active: we send and shut down first; the peer answers with data and FIN; TIME-WAIT runs out. */
    g_begin(&g, 0x0b);
    g_app(&g, 0, 1, 2);
    g_seg(&g, 5, ACK, 0);
    g_app(&g, 0, 2, 0);
    g_seg(&g, 5, ACK | PSH | FIN, 50);
    g_app(&g, 1, 0, 0);
    g_app(&g, 1500, 7, 0);
    g_end(&g, "active-time-wait");

    /* Listener: a handshake, data out of order then in order, accept, read, abort. */
    g_begin(&g, 0x03);
    g.pport = FH_PEER_PORT + 2;
    g.lport = FH_PORT;
    g.nxt = 7000;
    g.tsval = 50;
    g_seg(&g, 0, SYN, 0);
    g_seg(&g, 1, ACK, 0);
    g_app(&g, 0, 5, 0);
    g_seg_at(&g, 1, ACK | PSH, 300, 300);
    g_seg(&g, 0, ACK | PSH, 300);
    g_seg(&g, 0, ACK | PSH, 300);
    g_app(&g, 0, 0, 15);
    g_app(&g, 0, 6, 0);
    g_end(&g, "listen-handshake-ooo");

    /* Listener with SYN cookies: the handshake through a cookie, data, the peer's FIN, our close. */
    g_begin(&g, 0x13);
    g.pport = FH_PEER_PORT + 3;
    g.lport = FH_PORT;
    g.nxt = 9000;
    g.tsval = 70;
    g_seg(&g, 0, SYN, 0);
    g_seg(&g, 3, ACK | PSH, 100);
    g_app(&g, 0, 5, 0);
    g_app(&g, 0, 0, 3);
    g_seg(&g, 1, ACK | FIN, 0);
    g_app(&g, 0, 3, 0);
    g_seg(&g, 1, ACK, 0);
    g_end(&g, "listen-cookie");

    /* Passive: a burst we send is lost (RTO), then acknowledged; the peer's out-of-order FIN. */
    for (int rel = 0; rel < 2; rel++) {
        g_begin(&g, (uint8_t)(0x07 | (rel ? FH_REL_SEQ : 0)));
        g_app(&g, 0, 4, 1);
        g_app(&g, 0, 1, 40);
        g_seg(&g, 300, ACK, 0);
        g_app(&g, 0, 7, 0);
        g_seg(&g, 2, ACK, 0);
        g_seg_at(&g, 1, ACK | FIN, 0, 100);
        g_seg(&g, 1, ACK | PSH, 100);
        g_seg(&g, 1, ACK, 0);
        g_app(&g, 0, 3, 0);
        g_seg(&g, 5, ACK, 0);
        g_end(&g, rel ? "passive-rto-ooo-fin-rel" : "passive-rto-ooo-fin");
    }

    /* Active: reset by the peer at rcv.nxt, then an in-window RST and SYN first (challenge ACKs). */
    g_begin(&g, 0x0b);
    g_seg_at(&g, 1, RST, 0, 10);
    g_seg_at(&g, 1, SYN, 0, 5);
    g_seg(&g, 1, RST, 0);
    g_app(&g, 0, 0, 0);
    g_app(&g, 0, 3, 0);
    g_end(&g, "active-reset");

    /* Passive: simultaneous close, and a zero-window peer probed by us. */
    g_begin(&g, 0x07);
    g_app(&g, 0, 1, 200);
    g_seg(&g, 1, ACK, 0);
    g_app(&g, 0, 3, 0);
    g_seg(&g, 0, FIN | ACK, 0);
    g_seg(&g, 1, ACK, 0);
    g_app(&g, 1200, 7, 0);
    g_end(&g, "passive-simultaneous-close");
}


/* fuzz_ipfrag seeds: [mode][tlen u16][template] then 8-byte fragment records (see fuzz_ipfrag.c). */
struct fseed {
    uint8_t b[8192];
    size_t n;
};

static void fs_begin(struct fseed *s, uint8_t mode, const uint8_t *tpl, size_t tlen)
{
    s->b[0] = mode;
    brisk_put16(s->b + 1, (uint16_t)tlen);
    memcpy(s->b + 3, tpl, tlen);
    s->n = 3 + tlen;
}

/* flags: bit 0 MF, bits 2-3 protocol (0 TCP, 1 ICMP); off in bytes (a multiple of 8). */
static void fs_frag(struct fseed *s, uint16_t delay_ms, uint8_t id, uint8_t flags, uint32_t off, uint32_t len)
{
    uint8_t *r = s->b + s->n;
    brisk_put16(r, delay_ms);
    r[2] = id;
    r[3] = flags;
    brisk_put16(r + 4, (uint16_t)(off / 8));
    brisk_put16(r + 6, (uint16_t)len);
    s->n += 8;
}

static void gen_ipfrag(void)
{
    struct fh h;
    fh_init(&h, FH_PASSIVE);
    struct brisk_tcp_repr t = {.sport = h.peer_port,
                               .dport = h.local_port,
                               .seq = h.peer_nxt,
                               .ack = h.peer_ack,
                               .flags = BRISK_TCP_ACK | BRISK_TCP_PSH,
                               .window = 1024,
                               .opts = {.ts_ok = 1, .ts_val = h.peer_tsval + 5, .ts_ecr = h.local_tsval}};
    uint8_t seg[BRISK_TCP_HLEN_MAX + 1400];
    size_t hl = brisk_tcp_emit(seg, &t);
    memset(seg + hl, 'f', 1400);
    size_t slen = hl + 1400; /* the fuzzer fills the checksum (mode bit 2) */
    fh_finish(&h);
    static struct fseed s;
    const uint8_t MF = 1, TCP = 0, ICMP = 4;

    fs_begin(&s, 4, seg, slen);
    fs_frag(&s, 0, 1, TCP | MF, 0, 512);
    fs_frag(&s, 0, 1, TCP | MF, 512, 512);
    fs_frag(&s, 0, 1, TCP, 1024, (uint32_t)slen - 1024);
    put("ipfrag", "tcp-in-order", s.b, s.n);

    fs_begin(&s, 4, seg, slen);
    fs_frag(&s, 0, 2, TCP, 1024, (uint32_t)slen - 1024);
    fs_frag(&s, 1, 2, TCP | MF, 512, 512);
    fs_frag(&s, 1, 2, TCP | MF, 512, 512); /* a duplicate */
    fs_frag(&s, 1, 2, TCP | MF, 0, 512);
    put("ipfrag", "tcp-reverse-dup", s.b, s.n);

    fs_begin(&s, 4, seg, slen);
    fs_frag(&s, 0, 3, TCP | MF, 0, 512);
    fs_frag(&s, 0, 3, TCP | MF, 504, 512); /* overlaps */
    fs_frag(&s, 0, 3, TCP, 1024, (uint32_t)slen - 1024);
    fs_frag(&s, 0, 4, TCP | MF, 0, 517); /* cut to 512 */
    fs_frag(&s, 0, 4, TCP | MF, 512, 0); /* empty */
    put("ipfrag", "tcp-overlap-bounds", s.b, s.n);

    /* An ICMP echo request in four fragments, then a datagram whose first fragment times out. */
    uint8_t echo_msg[8 + 1000], echo_data[1000];
    for (size_t i = 0; i < sizeof echo_data; i++)
        echo_data[i] = (uint8_t)(i * 13);
    struct brisk_icmp_repr er = {
        .type = BRISK_ICMP_ECHO, .id = 9, .seq = 1, .payload = echo_data, .payload_len = sizeof echo_data};
    size_t em = brisk_icmp_emit(echo_msg, &er);
    fs_begin(&s, 0, echo_msg, em);
    fs_frag(&s, 0, 5, ICMP | MF, 256, 256);
    fs_frag(&s, 0, 5, ICMP | MF, 0, 256);
    fs_frag(&s, 0, 5, ICMP, 768, (uint32_t)em - 768);
    fs_frag(&s, 0, 5, ICMP | MF, 512, 256);
    fs_frag(&s, 0, 6, ICMP | MF, 0, 256);
    fs_frag(&s, 3000, 6, ICMP | MF, 256, 256); /* after the timeout: a new datagram */
    fs_frag(&s, 3000, 7, ICMP | MF | 0x20, 0, 64); /* to the broadcast address */
    fs_frag(&s, 0, 8, ICMP, 65528, 1480);           /* past 65,535 */
    put("ipfrag", "icmp-timeout", s.b, s.n);

    /* Floods against the 16 KB bound: brisk's eviction, then Linux's refusal. */
    for (int linux_rule = 0; linux_rule < 2; linux_rule++) {
        fs_begin(&s, (uint8_t)(2 | linux_rule), echo_msg, em);
        for (int i = 0; i < 40; i++)
            fs_frag(&s, 0, (uint8_t)(10 + i), ICMP | MF, 0, 1000);
        fs_frag(&s, 0, 60, ICMP | MF, 0, 512);
        fs_frag(&s, 0, 60, ICMP, 512, (uint32_t)em - 512);
        put("ipfrag", linux_rule ? "flood-linux" : "flood-evict", s.b, s.n);
    }
}

/* fuzz_stack_ip6 seeds: [mode] then records [delay u16][kind][sel][hops][nh][len u16][bytes] (see
 * fuzz_stack_ip6.c). ICMPv6 checksums are left 0: mode bit 0 repairs them. */
static void s6_rec(struct fseed *s, uint16_t delay_ms, uint8_t kind, uint8_t sel, uint8_t hops, uint8_t nh,
                   const uint8_t *b, size_t len)
{
    uint8_t *r = s->b + s->n;
    brisk_put16(r, delay_ms);
    r[2] = kind;
    r[3] = sel;
    r[4] = hops;
    r[5] = nh;
    brisk_put16(r + 6, (uint16_t)len);
    if (b)
        memcpy(r + 8, b, len);
    else
        memset(r + 8, 0, len); /* an echo's payload length: the bytes are skipped */
    s->n += 8 + len;
}

/* An ND message (NS / NA for `target`, RA with a prefix) with a link-layer option for the peer's MAC. */
static size_t nd_msg(uint8_t *b, uint8_t type, const uint8_t target[16], int solicited)
{
    uint8_t opts[48];
    size_t n = 0;
    if (type == BRISK_ICMP6_ND_RA) {
        struct brisk_nd_prefix p = {.prefix_len = 64, .onlink = 1, .valid_lifetime = 600,
                                    .preferred_lifetime = 300, .prefix = {0x20, 0x01, 0x0d, 0xb8, 0, 9}};
        n += brisk_nd_opt_prefix_emit(opts, &p);
    }
    n += brisk_nd_opt_lla_emit(opts + n, type == BRISK_ICMP6_ND_NA ? BRISK_ND_OPT_TLLA : BRISK_ND_OPT_SLLA,
                               mac_peer);
    struct brisk_icmp6_repr r = {.type = type, .na_solicited = (uint8_t)solicited, .na_override = 1,
                                 .ra_lifetime = 1800, .payload = opts, .payload_len = n};
    if (target)
        memcpy(r.target, target, 16);
    static const uint8_t zero[16];
    size_t len = brisk_icmp6_emit(b, &r, zero, zero);
    b[2] = b[3] = 0;
    return len;
}

static void gen_stack_ip6(void)
{
    uint8_t us_ll[16], peer_ll[16], m[256];
    brisk_ipv6_link_local_from_mac(us_ll, mac_us);
    brisk_ipv6_link_local_from_mac(peer_ll, mac_peer);
    struct fseed s;
    struct brisk_icmp6_repr echo6 = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 1, .seq = 1};
    static const uint8_t zero[16];

    /* Resolution both ways: the peer solicits us, we ping it, it advertises, time passes (NUD). */
    s.b[0] = 1;
    s.n = 1;
    s6_rec(&s, 0, 0, 3, 255, BRISK_IP_PROTO_ICMPV6, m, nd_msg(m, BRISK_ICMP6_ND_NS, us_ll, 0));
    s6_rec(&s, 1, 2, 0, 0, 0, NULL, 56);
    s6_rec(&s, 1, 0, 0, 255, BRISK_IP_PROTO_ICMPV6, m, nd_msg(m, BRISK_ICMP6_ND_NA, peer_ll, 1));
    size_t n = brisk_icmp6_emit(m, &echo6, zero, zero);
    s6_rec(&s, 1, 0, 0, 64, BRISK_IP_PROTO_ICMPV6, m, n);
    s6_rec(&s, 40000, 2, 0, 0, 0, NULL, 8);
    s6_rec(&s, 6000, 0, 2, 255, BRISK_IP_PROTO_ICMPV6, m, nd_msg(m, BRISK_ICMP6_ND_RA, NULL, 0));
    s6_rec(&s, 1, 2, 7, 0, 0, NULL, 8);
    put("stack_ip6", "nd-echo", s.b, s.n);

    /* Extension headers: unknown next header behind options, an option asking for an error even to
     * multicast, hop-by-hop out of place, a fragment, an atomic fragment carrying an echo request. */
    s.b[0] = 1;
    s.n = 1;
    uint8_t seg[20] = {0};
    s6_rec(&s, 0, 0, 0, 64, BRISK_IP_PROTO_TCP, seg, sizeof seg);
    uint8_t d1[8 + 20] = {BRISK_IP_PROTO_UDP, 0, 1, 4, 0, 0, 0, 0};
    s6_rec(&s, 1, 0, 1, 64, BRISK_IP_PROTO_DSTOPTS, d1, sizeof d1);
    uint8_t d2[8] = {BRISK_IP_PROTO_NONE, 0, 0x81, 4, 0, 0, 0, 0};
    s6_rec(&s, 1, 0, 2, 64, BRISK_IP_PROTO_DSTOPTS, d2, sizeof d2);
    uint8_t d3[16] = {BRISK_IP_PROTO_HOPOPTS, 0, 1, 4, 0, 0, 0, 0, BRISK_IP_PROTO_NONE, 0, 1, 4};
    s6_rec(&s, 1, 0, 0, 64, BRISK_IP_PROTO_DSTOPTS, d3, sizeof d3);
    uint8_t f[8 + 16] = {BRISK_IP_PROTO_ICMPV6, 0, 0, 8, 0, 0, 0, 1};
    s6_rec(&s, 1, 0, 0, 64, BRISK_IP_PROTO_FRAGMENT, f, sizeof f);
    uint8_t af[8 + 8] = {BRISK_IP_PROTO_ICMPV6, 0, 0, 0, 0, 0, 0, 2};
    brisk_icmp6_emit(af + 8, &echo6, zero, zero);
    s6_rec(&s, 1, 0, 0, 64, BRISK_IP_PROTO_FRAGMENT, af, sizeof af);
    uint8_t rh[8 + 16] = {BRISK_IP_PROTO_NONE, 2, 0, 1};
    s6_rec(&s, 1, 0, 1, 64, BRISK_IP_PROTO_ROUTING, rh, sizeof rh);
    put("stack_ip6", "exthdrs", s.b, s.n);

    /* The cache's bounds: echoes to 12 silent global neighbours, 3 each, then time for them to fail. */
    s.b[0] = 3;
    s.n = 1;
    for (uint8_t i = 0; i < 12; i++)
        for (int k = 0; k < 3; k++)
            s6_rec(&s, 10, 2, (uint8_t)(1 | i << 3), 0, 0, NULL, 16);
    s6_rec(&s, 5000, 2, 1, 0, 0, NULL, 16);
    put("stack_ip6", "nd-bounds", s.b, s.n);

    /* Reassembly (kind 3): an echo request of 1,008 bytes in four fragments, the last first, answered once
     * whole; a datagram with an overlap; a first fragment left to time out (Time Exceeded). Mode 5: the
     * peer's checksums repaired, reassembly's 16 KB bound and 2 s timeout. */
    s.b[0] = 5;
    s.n = 1;
    s6_rec(&s, 0, 0, 3, 255, BRISK_IP_PROTO_ICMPV6, m, nd_msg(m, BRISK_ICMP6_ND_NS, us_ll, 0));
    static uint8_t big[1008], rec[2 + 256];
    struct brisk_icmp6_repr e1k = {.type = BRISK_ICMP6_ECHO_REQUEST, .id = 2, .seq = 2, .payload = big + 8,
                                   .payload_len = 1000};
    brisk_icmp6_emit(big, &e1k, peer_ll, us_ll);
    for (int i = 3; i >= 0; i--) {
        uint16_t off = (uint16_t)(256 * i), len = i == 3 ? 240 : 256;
        brisk_put16(rec, off);
        memcpy(rec + 2, big + off, len);
        s6_rec(&s, 1, 3, 0, (uint8_t)(i == 3 ? 0 : 0x80), i ? BRISK_IP_PROTO_UDP : BRISK_IP_PROTO_ICMPV6, rec,
               2u + len);
    }
    brisk_put16(rec, 0);
    s6_rec(&s, 1, 3, 0, 0x81, BRISK_IP_PROTO_ICMPV6, rec, 2 + 64);
    brisk_put16(rec, 32);
    s6_rec(&s, 1, 3, 0, 0x81, BRISK_IP_PROTO_ICMPV6, rec, 2 + 64);
    brisk_put16(rec, 0);
    s6_rec(&s, 1, 3, 0, 0x82, BRISK_IP_PROTO_ICMPV6, rec, 2 + 64);
    s6_rec(&s, 2500, 2, 0, 0, 0, NULL, 8);
    put("stack_ip6", "reassembly", s.b, s.n);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    mkdir(out_dir, 0755);
    gen_parsers();
    gen_stack();
    gen_seq();
    gen_ipfrag();
    gen_stack_ip6();
    return 0;
}
