/*
 * tcpforge.c — forge TCP segments into one stack, parse what it sends (see tcpforge.h for the model).
 *
 * Frames are built with the wire module's own emitters (brisk_tcp_emit, brisk_tcp_csum_fill, and fakedev's
 * Ethernet/IPv4 framing) and read back with its parsers, checksum verified, so a test sees exactly what a
 * peer on the wire would see. Every transmitted frame is completed as soon as it is collected: the TCP tests
 * are about what TCP decides to send and when, and a device that completes at once never throttles it.
 * Failures are reported at the test's own line (the macros pass __FILE__ / __LINE__) with the segment printed
 * in a tcpdump-like form, which is what one wants to read when a sequence number is off by one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/tcpforge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

const char *const *tf_profile_sets(const char *name)
{
    for (size_t i = 0; i < brisk_profiles_count(); i++)
        if (strcmp(brisk_profile_name(i), name) == 0)
            return brisk_profile_settings(i);
    fail_msg("no compatibility profile '%s'", name);
    return NULL;
}

void tf_init(struct tf *t, const char *const *sets)
{
    memset(t, 0, sizeof(*t));
    struct brisk_settings s;
    brisk_settings_default(&s);
    /* A profile first ("profile=linux-6.x" in `sets`), so that the fixture's choices below and the test's
     * own settings apply on top of it. */
    for (const char *const *a = sets; a && *a; a++) {
        if (strncmp(*a, "profile=", 8) == 0 && brisk_settings_apply_profile(&s, *a + 8) != BRISK_OK) {
            print_error("tf_init: unknown profile \"%s\"\n", *a + 8);
            fail();
        }
    }
    assert_int_equal(brisk_settings_set(&s, "arp_reachable=86400s"), BRISK_OK);
    /* The fake device completes frames only when a test collects them, so TCP Small Queues would hold every
     * connection after two packets and auto-corking every small tail: these tests are about TCP's own rules
     * and leave both to test_tsq.c, which turns them back on ("tcp_tsq=1", "tcp_autocorking=1" in `sets`). */
    assert_int_equal(brisk_settings_set(&s, "tcp_tsq=0"), BRISK_OK);
    assert_int_equal(brisk_settings_set(&s, "tcp_autocorking=0"), BRISK_OK);
    /* Pacing would space segments by their departure times; exact-time assertions want them back to back. */
    assert_int_equal(brisk_settings_set(&s, "tcp_pacing=0"), BRISK_OK);
    for (; sets && *sets; sets++) {
        if (strncmp(*sets, "profile=", 8) != 0 && brisk_settings_set(&s, *sets) != BRISK_OK) {
            print_error("tf_init: bad setting \"%s\"\n", *sets);
            fail();
        }
    }
    t->st = brisk_stack_new(&s);
    assert_non_null(t->st);
    fakedev_init(&t->f, t->st, 1, TF_LOCAL_IP, 24);
    /* The peer asks for our MAC: the stack learns the peer's on the way (RFC 826 merge) and answers. */
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memset(eth.dst, 0xff, 6);
    memcpy(eth.src, peer_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = BRISK_ARP_OP_REQUEST, .spa = TF_PEER_IP, .tpa = TF_LOCAL_IP};
    memcpy(a.sha, peer_mac, 6);
    brisk_arp_emit(frame + BRISK_ETH_HLEN, &a);
    assert_int_equal(brisk_stack_input(t->st, t->f.dev, frame, sizeof(frame), 0), BRISK_OK);
    fakedev_complete_all(&t->f, 0);
    fakedev_clear(&t->f); /* the ARP reply */
}

void tf_free(struct tf *t)
{
    tf_collect(t);
    fakedev_destroy(&t->f, t->st->net.now);
    for (size_t i = 0; i < t->nq; i++)
        free(t->q[i].frame);
    free(t->q);
    t->q = NULL;
    t->nq = t->cap = t->head = 0;
    assert_int_equal(brisk_stack_pkts_in_use(t->st), 0);
    brisk_stack_free(t->st);
    t->st = NULL;
}

/* Parses one recorded frame; keeps it (taking ownership of `data`) if it is a TCP segment from us. */
static void absorb(struct tf *t, uint8_t *data, size_t len, uint64_t at)
{
    struct brisk_eth_repr eth;
    struct brisk_ipv4_repr ip;
    if (brisk_eth_parse(data, len, &eth) < 0 || eth.type != BRISK_ETH_P_IPV4 ||
        brisk_ipv4_parse(data + BRISK_ETH_HLEN, len - BRISK_ETH_HLEN, &ip) < 0 || ip.proto != 6) {
        t->nother++;
        free(data);
        return;
    }
    assert_memory_equal(eth.dst, peer_mac, 6);
    if (t->nq == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->q = realloc(t->q, t->cap * sizeof(*t->q));
        assert_non_null(t->q);
    }
    struct tf_seg *s = &t->q[t->nq];
    memset(s, 0, sizeof(*s));
    s->at = at;
    s->src = ip.src;
    s->dst = ip.dst;
    s->frame = data;
    const uint8_t *l4 = data + BRISK_ETH_HLEN + ip.hdr_len;
    size_t l4len = (size_t)ip.total_len - ip.hdr_len;
    int rc = brisk_tcp_parse(l4, l4len, ip.src, ip.dst, 1, &s->h);
    if (rc < 0) {
        print_error("tcpforge: the stack sent a TCP segment that does not parse (%d)\n", rc);
        fail();
    }
    s->len = (uint32_t)s->h.payload_len;
    if (s->h.opts.ts_ok)
        t->last_tsval = s->h.opts.ts_val;
    t->nq++;
}

void tf_collect(struct tf *t)
{
    for (size_t i = 0; i < t->f.ntx; i++) {
        uint8_t *d = t->f.tx[i].data;
        t->f.tx[i].data = NULL;
        absorb(t, d, t->f.tx[i].len, t->f.tx[i].at);
    }
    t->f.ntx = 0;
    if (t->f.nheld && !t->hold_completions)
        fakedev_complete_all(&t->f, t->st->net.now);
}

void tf_run(struct tf *t, uint64_t until)
{
    for (unsigned guard = 0;; guard++) {
        tf_collect(t);
        uint64_t d = brisk_stack_next_deadline(t->st);
        if (d == BRISK_TIME_NONE || d > until)
            break;
        if (guard > 10000000) {
            print_error("tf_run: the stack keeps asking to be polled at %" PRIu64 "\n", d);
            fail();
        }
        brisk_stack_poll(t->st, d);
    }
    brisk_stack_poll(t->st, until);
    tf_collect(t);
}

int tf_run_to_seg(struct tf *t, uint64_t limit)
{
    for (unsigned guard = 0; tf_pending(t) == 0; guard++) {
        uint64_t d = brisk_stack_next_deadline(t->st);
        if (d == BRISK_TIME_NONE || d > limit || guard > 10000000)
            return 0;
        brisk_stack_poll(t->st, d);
    }
    return 1;
}

size_t tf_pending(struct tf *t)
{
    tf_collect(t);
    return t->nq - t->head;
}

static const char *flag_str(uint8_t f, char *buf)
{
    static const char names[] = "FSRP.UEW"; /* FIN SYN RST PSH ACK URG ECE CWR, tcpdump letters */
    char *p = buf;
    for (int i = 0; i < 8; i++)
        if (f & (1u << i))
            *p++ = names[i];
    if (p == buf)
        *p++ = '-';
    *p = 0;
    return buf;
}

void tf_print_seg(const struct tf_seg *s)
{
    char fl[12];
    const struct brisk_tcp_repr *h = &s->h;
    const struct brisk_tcp_opts *o = &h->opts;
    fprintf(stderr, "    at %" PRIu64 ".%09" PRIu64 " %u > %u [%s] seq %" PRIu32 " ack %" PRIu32,
            (uint64_t)(s->at / TF_SEC), (uint64_t)(s->at % TF_SEC), h->sport, h->dport,
            flag_str(h->flags, fl), h->seq, h->ack);
    fprintf(stderr, " win %u len %" PRIu32, h->window, s->len);
    fprintf(stderr, " <");
    if (o->mss_ok)
        fprintf(stderr, "mss %u,", o->mss);
    if (o->wscale_ok)
        fprintf(stderr, "wscale %u,", o->wscale);
    if (o->sack_perm)
        fprintf(stderr, "sackOK,");
    if (o->ts_ok)
        fprintf(stderr, "TS val %" PRIu32 " ecr %" PRIu32 ",", o->ts_val, o->ts_ecr);
    for (unsigned i = 0; i < o->nsack; i++)
        fprintf(stderr, "sack %" PRIu32 "-%" PRIu32 ",", o->sack[i].start, o->sack[i].end);
    fprintf(stderr, ">\n");
}

struct tf_seg *tf_take_at(struct tf *t, const char *file, int line)
{
    tf_collect(t);
    if (t->head == t->nq) {
        print_error("%s:%d: expected a segment from the stack, none was sent (now %" PRIu64 ")\n", file, line,
                    t->st->net.now);
        _fail(file, line);
    }
    return &t->q[t->head++];
}

struct tf_seg *tf_expect_at(struct tf *t, uint64_t at, uint8_t flags, uint32_t seq, uint32_t ack,
                            uint32_t len, const char *file, int line)
{
    struct tf_seg *s = tf_take_at(t, file, line);
    if ((at != TF_ANY_TIME && s->at != at) || s->h.flags != flags || s->h.seq != seq || s->h.ack != ack ||
        s->len != len) {
        char fl[12];
        print_error("%s:%d: segment mismatch\n  expected at %" PRIu64 " [%s] seq %" PRIu32 " ack %" PRIu32
                    " len %" PRIu32 "\n  got:\n",
                    file, line, at, flag_str(flags, fl), seq, ack, len);
        tf_print_seg(s);
        _fail(file, line);
    }
    return s;
}

void tf_expect_none_at(struct tf *t, const char *file, int line)
{
    tf_collect(t);
    if (t->head != t->nq) {
        print_error("%s:%d: expected no segment, the stack sent %zu:\n", file, line, t->nq - t->head);
        for (size_t i = t->head; i < t->nq; i++)
            tf_print_seg(&t->q[i]);
        _fail(file, line);
    }
}

void tf_inject(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len, uint64_t now)
{
    assert_int_equal(tf_inject_rx(t, h, payload, len, 0, 0, now), BRISK_OK);
}

uint8_t *tf_frame(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len,
                  uint16_t csum_xor, size_t *frame_len)
{
    size_t cap = BRISK_TCP_HLEN_MAX + len;
    uint8_t *seg = malloc(cap);
    uint8_t *frame = malloc(cap + BRISK_ETH_HLEN + BRISK_IPV4_HLEN);
    assert_non_null(seg);
    assert_non_null(frame);
    size_t hlen = brisk_tcp_emit(seg, h);
    if (len)
        memcpy(seg + hlen, payload, len);
    brisk_tcp_csum_fill(seg, hlen + len, TF_PEER_IP, TF_LOCAL_IP);
    seg[BRISK_TCP_CSUM_OFF] ^= (uint8_t)(csum_xor >> 8);
    seg[BRISK_TCP_CSUM_OFF + 1] ^= (uint8_t)csum_xor;
    *frame_len =
        fakedev_ipv4_frame(frame, t->f.cfg.mac, peer_mac, TF_PEER_IP, TF_LOCAL_IP, 6, seg, hlen + len);
    free(seg);
    return frame;
}

int tf_inject_rx(struct tf *t, const struct brisk_tcp_repr *h, const void *payload, size_t len,
                 uint16_t csum_xor, unsigned rx_flags, uint64_t now)
{
    size_t n;
    uint8_t *frame = tf_frame(t, h, payload, len, csum_xor, &n);
    int rc = brisk_stack_input_flags(t->st, t->f.dev, frame, n, rx_flags, now);
    free(frame);
    tf_collect(t);
    return rc;
}

uint8_t tf_seg_tos(const struct tf_seg *s)
{
    return s->frame[BRISK_ETH_HLEN + 1];
}

void tf_inject_icmp(struct tf *t, uint32_t from, uint8_t type, uint8_t code, const struct tf_seg *s,
                    size_t tcp_bytes, void (*edit)(uint8_t *quote, size_t len), uint64_t now)
{
    tf_inject_icmp_mtu(t, from, type, code, 0, s, tcp_bytes, edit, now);
}

void tf_inject_icmp_mtu(struct tf *t, uint32_t from, uint8_t type, uint8_t code, uint16_t mtu,
                        const struct tf_seg *s, size_t tcp_bytes, void (*edit)(uint8_t *quote, size_t len),
                        uint64_t now)
{
    const uint8_t *ip = s->frame + BRISK_ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    size_t qlen = ihl + tcp_bytes;
    uint8_t msg[BRISK_ICMP_HLEN + BRISK_IPV4_HLEN_MAX + BRISK_TCP_HLEN_MAX];
    assert_true(qlen <= sizeof(msg) - BRISK_ICMP_HLEN);
    uint8_t *quote = msg + BRISK_ICMP_HLEN;
    memcpy(quote, ip, qlen);
    if (edit)
        edit(quote, qlen);
    struct brisk_icmp_repr r = {.type = type, .code = code, .next_hop_mtu = mtu, .payload = quote,
                                .payload_len = qlen};
    size_t n = brisk_icmp_emit(msg, &r);
    uint8_t frame[BRISK_ETH_HLEN + BRISK_IPV4_HLEN + sizeof(msg)];
    size_t flen =
        fakedev_ipv4_frame(frame, t->f.cfg.mac, peer_mac, from, TF_LOCAL_IP, BRISK_IP_PROTO_ICMP, msg, n);
    assert_int_equal(brisk_stack_input(t->st, t->f.dev, frame, flen, now), BRISK_OK);
    tf_collect(t);
}

void tf_peer_init(struct tf_peer *p, struct tf *t, uint16_t port, uint16_t lport, uint32_t iss)
{
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->port = port;
    p->lport = lport;
    p->iss = iss;
    p->nxt = iss;
    p->win = 65535;
    p->ts_base = 0x10000000u;
}

struct brisk_tcp_repr tf_peer_hdr(const struct tf_peer *p, uint8_t flags, uint64_t now)
{
    struct brisk_tcp_repr h = {
        .sport = p->port,
        .dport = p->lport,
        .seq = p->nxt,
        .ack = (flags & BRISK_TCP_ACK) ? p->ack : 0,
        .flags = flags,
        .window = p->win,
    };
    if (p->ts) {
        h.opts.ts_ok = 1;
        h.opts.ts_val = p->ts_base + (uint32_t)(now / TF_MS);
        h.opts.ts_ecr = (flags & BRISK_TCP_ACK) ? p->t->last_tsval : 0;
    }
    return h;
}

void tf_peer_send(struct tf_peer *p, uint8_t flags, const void *data, size_t len, uint64_t now)
{
    struct brisk_tcp_repr h = tf_peer_hdr(p, flags, now);
    tf_inject(p->t, &h, data, len, now);
    p->nxt += (uint32_t)len + ((flags & BRISK_TCP_SYN) ? 1u : 0u) + ((flags & BRISK_TCP_FIN) ? 1u : 0u);
}

void tf_peer_send_data(struct tf_peer *p, size_t len, uint64_t now)
{
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    tf_pattern(buf, len, (uint32_t)(p->nxt - p->iss - 1));
    tf_peer_send(p, BRISK_TCP_ACK | BRISK_TCP_PSH, buf, len, now);
    free(buf);
}

void tf_conn_open(struct tf_conn *f, const char *const *sets, const char *const *more,
                  const struct brisk_tcp_opts *syn_opts, uint64_t rtt)
{
    memset(f, 0, sizeof(*f));
    tf_init(&f->t, sets);
    for (; more && *more; more++)
        assert_int_equal(brisk_settings_set(&f->t.st->net.s, *more), BRISK_OK);
    f->l = tf_listen(&f->t, 80);
    tf_peer_init(&f->p, &f->t, 40000, 80, 1000);
    f->c = tf_open_passive(&f->p, f->l, syn_opts, 0, rtt);
    f->d = f->p.l_iss + 1;
}

void tf_conn_close(struct tf_conn *f)
{
    fakedev_complete_all(&f->t.f, f->t.st->net.now); /* what a slow device still held: TSQ's charges go */
    if (f->c)
        brisk_abort(f->c, f->t.st->net.now);
    while (tf_pending(&f->t))
        tf_take(&f->t);
    brisk_close(f->l, f->t.st->net.now);
    assert_int_equal(brisk_stack_sockets(f->t.st), 0);
    tf_free(&f->t);
}

struct brisk_tcp_opts tf_opts_full(void)
{
    struct brisk_tcp_opts o = {
        .mss_ok = 1, .mss = 1460, .wscale_ok = 1, .wscale = 7, .sack_perm = 1, .ts_ok = 1};
    return o;
}

brisk_sock *tf_listen(struct tf *t, uint16_t port)
{
    int err;
    brisk_sock *l = brisk_socket(t->st, &err);
    assert_non_null(l);
    assert_int_equal(brisk_bind(l, 0, port), BRISK_OK);
    assert_int_equal(brisk_listen(l, 16), BRISK_OK);
    return l;
}

brisk_sock *tf_open_passive(struct tf_peer *p, brisk_sock *listener, const struct brisk_tcp_opts *syn_opts,
                            uint64_t now, uint64_t rtt)
{
    struct tf *t = p->t;
    struct brisk_tcp_opts o = syn_opts ? *syn_opts : tf_opts_full();
    p->nxt = p->iss;
    struct brisk_tcp_repr h = tf_peer_hdr(p, BRISK_TCP_SYN, now);
    h.opts = o;
    if (o.ts_ok) {
        h.opts.ts_val = p->ts_base + (uint32_t)(now / TF_MS);
        h.opts.ts_ecr = 0;
    }
    tf_inject(t, &h, NULL, 0, now);
    p->nxt = p->iss + 1;
    struct tf_seg *sa = tf_take(t);
    assert_int_equal(sa->h.flags, BRISK_TCP_SYN | BRISK_TCP_ACK);
    assert_int_equal(sa->h.ack, p->iss + 1);
    assert_int_equal(sa->at, now);
    p->l_iss = sa->h.seq;
    p->ack = p->l_iss + 1;
    p->ts = o.ts_ok && sa->h.opts.ts_ok;
    tf_peer_send(p, BRISK_TCP_ACK, NULL, 0, now + rtt);
    int err;
    brisk_sock *c = brisk_accept(listener, &err);
    assert_non_null(c);
    assert_int_equal(err, BRISK_OK);
    return c;
}

brisk_sock *tf_open_active(struct tf_peer *p, const struct brisk_tcp_opts *synack_opts, uint64_t now,
                           uint64_t rtt, struct tf_events *ev)
{
    struct tf *t = p->t;
    int err;
    brisk_sock *s = brisk_socket(t->st, &err);
    assert_non_null(s);
    if (ev)
        brisk_sock_set_callback(s, tf_events_cb, ev);
    assert_int_equal(brisk_connect(s, TF_PEER_IP, p->port, now), BRISK_ERR_INPROGRESS);
    struct tf_seg *syn = tf_take(t);
    assert_int_equal(syn->h.flags, BRISK_TCP_SYN);
    assert_int_equal(syn->at, now);
    p->lport = syn->h.sport;
    p->l_iss = syn->h.seq;
    uint32_t syn_tsval = syn->h.opts.ts_val;
    int syn_ts = syn->h.opts.ts_ok; /* `syn` points into the queue, which injecting may move */
    p->ack = p->l_iss + 1;
    struct brisk_tcp_opts o = synack_opts ? *synack_opts : tf_opts_full();
    p->nxt = p->iss;
    struct brisk_tcp_repr h = tf_peer_hdr(p, BRISK_TCP_SYN | BRISK_TCP_ACK, now + rtt);
    h.opts = o;
    if (o.ts_ok) {
        h.opts.ts_val = p->ts_base + (uint32_t)((now + rtt) / TF_MS);
        h.opts.ts_ecr = syn_tsval;
    }
    int ts = o.ts_ok && syn_ts;
    tf_inject(t, &h, NULL, 0, now + rtt);
    p->nxt = p->iss + 1;
    p->ts = (uint8_t)ts;
    TF_EXPECT(t, now + rtt, BRISK_TCP_ACK, p->l_iss + 1, p->iss + 1, 0);
    return s;
}

uint8_t tf_pattern_byte(uint64_t i)
{
    /* Not periodic at any small power of two, so an off-by-k offset shows. */
    return (uint8_t)((i * 131u) ^ (i >> 7) ^ (i >> 13));
}

void tf_pattern(uint8_t *buf, size_t len, uint64_t off)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = tf_pattern_byte(off + i);
}

void tf_send_pattern(brisk_sock *c, uint64_t off, size_t len, uint64_t now)
{
    static uint8_t buf[1 << 17];
    assert_true(len <= sizeof(buf));
    tf_pattern(buf, len, off);
    assert_int_equal(brisk_send(c, buf, len, 0, now), (int64_t)len);
}

void tf_peer_sack(struct tf_peer *p, uint32_t ack, uint32_t start, uint32_t end, uint64_t now)
{
    p->ack = ack;
    struct brisk_tcp_repr h = tf_peer_hdr(p, BRISK_TCP_ACK, now);
    if (start != end) {
        h.opts.nsack = 1;
        h.opts.sack[0].start = start;
        h.opts.sack[0].end = end;
    }
    tf_inject(p->t, &h, NULL, 0, now);
}

int tf_payload_is(const struct tf_seg *s, uint64_t off)
{
    for (uint32_t i = 0; i < s->len; i++)
        if (s->h.payload[i] != tf_pattern_byte(off + i))
            return 0;
    return 1;
}

void tf_events_cb(void *ctx, brisk_sock *s, unsigned events, uint64_t now)
{
    (void)s;
    struct tf_events *ev = ctx;
    ev->all |= events;
    ev->calls++;
    for (int i = 0; i < 8; i++)
        if (events & (1u << i))
            ev->at[i] = now;
}

struct brisk_counters tf_counters(struct tf *t)
{
    struct brisk_counters c;
    brisk_stack_get_counters(t->st, &c);
    return c;
}

struct brisk_conn_info tf_info(const brisk_sock *s)
{
    struct brisk_conn_info i;
    assert_int_equal(brisk_conn_info(s, &i), BRISK_OK);
    return i;
}
