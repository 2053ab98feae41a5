/*
 * sim_pair.c — two hosts in brisk's simulator exchanging data over one TCP connection (pkg-config brisk-sim).
 *
 * Host a (10.0.0.1) connects to host b (10.0.0.2) across a simulated 100 Mbit/s link with 1 ms of delay each
 * way and, optionally, random frame loss in both directions. a sends --bytes of a pattern that is a pure
 * function of the byte offset; b checks every byte as it arrives and sends it back; a checks the echo. Each
 * side half-closes once it has sent everything, so the run ends with a FIN each way. Time is virtual: the
 * same options give the same run, event for event, on any machine.
 *
 * The program is an application of the public socket API (brisk.h) driven by the simulator (sim.h): sockets
 * are non-blocking and report through a callback, which the world calls from inside its events. Code that
 * touches a stack outside those callbacks tells the world with brisk_sim_host_kick (here: the connect).
 *
 * Usage: sim_pair [--bytes SIZE] [--loss P] [--seed N] [--pcap FILE]
 * Prints one line of results; exits 0 when every byte arrived intact both ways and both sides saw the
 * other's FIN, 1 otherwise, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <brisk/sim.h>

#define PORT     7
#define BUF_SIZE (64 * 1024)

/* The byte at offset `off` of the stream: both ends compute it, so nothing needs to be kept to check. */
static uint8_t pattern(uint64_t off)
{
    uint32_t x = (uint32_t)off * 2654435761u ^ (uint32_t)(off >> 32);
    return (uint8_t)(x >> 24);
}

/* One end of the connection. */
struct end {
    const char *name;
    brisk_sim_host *host;
    brisk_sock *s;
    uint64_t to_send;  /* a: the stream's length (b sends back what arrives) */
    uint64_t sent;     /* bytes accepted by brisk_send */
    uint64_t received; /* bytes read */
    uint64_t bad_at;   /* offset of the first byte that differs from the pattern, UINT64_MAX if none */
    int eof, fin_sent, error;
    uint8_t echo[BUF_SIZE]; /* b: bytes read and not yet sent back (a ring would do; this keeps it short) */
    size_t echo_len;
};

struct pair {
    brisk_sim_world *w;
    struct end a, b;
    brisk_sock *listener;
    uint32_t b_ip;
    uint64_t bytes;
};

/* Sends what this end still owes: a's pattern, b's echo backlog. Stops when the send buffer is full
 * (BRISK_ERR_AGAIN); BRISK_EV_WRITABLE calls it again. */
static void pump_tx(struct end *e, int echoing, uint64_t now)
{
    uint8_t buf[BUF_SIZE];
    for (;;) {
        const uint8_t *src;
        size_t n;
        if (echoing) {
            src = e->echo;
            n = e->echo_len;
        } else {
            n = e->to_send - e->sent < sizeof(buf) ? (size_t)(e->to_send - e->sent) : sizeof(buf);
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(e->sent + i);
            src = buf;
        }
        if (n == 0)
            break;
        int64_t k = brisk_send(e->s, src, n, 0, now);
        if (k < 0) {
            if (k != BRISK_ERR_AGAIN)
                e->error = (int)k;
            return;
        }
        e->sent += (uint64_t)k;
        if (echoing) {
            memmove(e->echo, e->echo + k, e->echo_len - (size_t)k);
            e->echo_len -= (size_t)k;
        }
    }
    /* Everything sent: a is done after its stream, b once the peer's FIN came and its echo drained. */
    if (!e->fin_sent && !e->error && (echoing ? e->eof : e->sent == e->to_send)) {
        e->fin_sent = 1;
        brisk_shutdown_write(e->s, now);
    }
}

/* Reads everything available, checking it against the pattern; b keeps it to echo. */
static void pump_rx(struct end *e, int echoing, uint64_t now)
{
    uint8_t tmp[BUF_SIZE];
    for (;;) {
        uint8_t *dst = echoing ? e->echo + e->echo_len : tmp;
        size_t room = echoing ? sizeof(e->echo) - e->echo_len : sizeof(tmp);
        if (room == 0)
            return; /* the echo is behind: leave the data in the stack; the window tells the peer to wait */
        int64_t n = brisk_recv(e->s, dst, room, now);
        if (n == BRISK_ERR_AGAIN)
            return;
        if (n < 0) {
            e->error = (int)n;
            return;
        }
        if (n == 0) {
            e->eof = 1;
            return;
        }
        for (int64_t i = 0; i < n; i++)
            if (dst[i] != pattern(e->received + (uint64_t)i) && e->bad_at == UINT64_MAX)
                e->bad_at = e->received + (uint64_t)i;
        e->received += (uint64_t)n;
        if (echoing)
            e->echo_len += (size_t)n;
    }
}

static void on_event(void *ctx, brisk_sock *s, unsigned events, uint64_t now)
{
    struct end *e = ctx;
    int echoing = e->name[0] == 'b';
    (void)s;
    if (events & BRISK_EV_ERROR) {
        e->error = brisk_sock_error(e->s);
        return;
    }
    /* Reading makes echo to send, sending makes room to read: go on until neither moves. */
    uint64_t before;
    do {
        before = e->received + e->sent;
        pump_rx(e, echoing, now);
        pump_tx(e, echoing, now);
    } while (e->received + e->sent != before && !e->error);
}

/* b's listener: take the connection and handle it like any socket. */
static void on_accept(void *ctx, brisk_sock *ls, unsigned events, uint64_t now)
{
    struct pair *p = ctx;
    int err;
    if (!(events & BRISK_EV_ACCEPT) || p->b.s)
        return;
    p->b.s = brisk_accept(ls, &err);
    if (!p->b.s)
        return;
    brisk_sock_set_callback(p->b.s, on_event, &p->b);
    /* Data that arrived with the handshake is already waiting; ask for it now. */
    on_event(&p->b, p->b.s, BRISK_EV_READABLE | BRISK_EV_WRITABLE, now);
}

/* A world event at t = 0: a connects. */
static void start(void *ctx, uint64_t now)
{
    struct pair *p = ctx;
    int err;
    p->a.s = brisk_socket(brisk_sim_host_stack(p->a.host), &err);
    if (!p->a.s) {
        p->a.error = err;
        return;
    }
    brisk_sock_set_callback(p->a.s, on_event, &p->a);
    int rc = brisk_connect(p->a.s, p->b_ip, PORT, now);
    if (rc != BRISK_ERR_INPROGRESS)
        p->a.error = rc;
    brisk_sim_host_kick(p->a.host); /* outside a socket callback: the world must poll a's stack */
}

static int finished(void *ctx)
{
    const struct pair *p = ctx;
    return (p->a.eof && p->b.eof && p->b.echo_len == 0) || p->a.error || p->b.error;
}

static int usage(const char *why, const char *arg)
{
    fprintf(stderr, "sim_pair: %s%s%s\nusage: sim_pair [--bytes SIZE] [--loss P] [--seed N] [--pcap FILE]\n",
            why, arg ? ": " : "", arg ? arg : "");
    return 2;
}

int main(int argc, char **argv)
{
    static struct pair P; /* large (the echo buffers): not on the stack */
    struct pair *p = &P;
    uint64_t seed = 1;
    double loss = 0;
    const char *pcap = NULL;
    p->bytes = 4 << 20;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage("missing value or unknown option", argv[i]);
        if (!strcmp(argv[i], "--bytes")) {
            if (brisk_parse_size(v, &p->bytes) != BRISK_OK || p->bytes == 0)
                return usage("bad --bytes", v);
        } else if (!strcmp(argv[i], "--loss")) {
            if (brisk_parse_prob(v, &loss) != BRISK_OK || loss >= 0.5)
                return usage("bad --loss (a probability below 50%)", v);
        } else if (!strcmp(argv[i], "--seed")) {
            if (brisk_parse_uint(v, &seed) != BRISK_OK)
                return usage("bad --seed", v);
        } else if (!strcmp(argv[i], "--pcap")) {
            pcap = v;
        } else {
            return usage("unknown option", argv[i]);
        }
    }

    /* The world and its two hosts, each with one NIC (default ring and completion model). */
    uint32_t a_ip, b_ip;
    brisk_ip_parse("10.0.0.1", &a_ip);
    brisk_ip_parse("10.0.0.2", &b_ip);
    p->w = brisk_sim_world_new(seed);
    p->a.name = "a";
    p->b.name = "b";
    p->a.bad_at = p->b.bad_at = UINT64_MAX;
    p->a.to_send = p->bytes;
    p->b_ip = b_ip;
    p->a.host = brisk_sim_host_add(p->w, "a", NULL);
    p->b.host = brisk_sim_host_add(p->w, "b", NULL);
    if (!p->w || !p->a.host || !p->b.host) {
        fprintf(stderr, "sim_pair: out of memory\n");
        return 1;
    }
    brisk_sim_port *pa = brisk_sim_nic_add_ip(p->a.host, a_ip, 24, 0);
    brisk_sim_port *pb = brisk_sim_nic_add_ip(p->b.host, b_ip, 24, 0);

    /* The link: 100 Mbit/s, 1 ms each way, a queue of 100 frames in front of each side, seeded loss. */
    struct brisk_sim_link_config lc;
    brisk_sim_link_config_symmetric(&lc, 100 * 1000 * 1000ull, BRISK_NSEC_PER_MSEC);
    lc.ab.queue_packets = lc.ba.queue_packets = 100;
    if (loss > 0) {
        lc.ab.impair.loss_model = lc.ba.impair.loss_model = BRISK_SIM_LOSS_RANDOM;
        lc.ab.impair.loss = lc.ba.impair.loss = loss;
    }
    if (!pa || !pb || !brisk_sim_link_connect(p->w, pa, pb, &lc)) {
        fprintf(stderr, "sim_pair: cannot build the topology\n");
        return 1;
    }
    if (pcap && brisk_sim_capture(pa, pcap) != BRISK_OK) {
        fprintf(stderr, "sim_pair: cannot write %s\n", pcap);
        return 2;
    }

    /* b listens; a connects at t = 0. */
    int err;
    p->listener = brisk_socket(brisk_sim_host_stack(p->b.host), &err);
    if (!p->listener || brisk_bind(p->listener, b_ip, PORT) != BRISK_OK ||
        brisk_listen(p->listener, 4) != BRISK_OK) {
        fprintf(stderr, "sim_pair: cannot listen on port %d\n", PORT);
        return 1;
    }
    brisk_sock_set_callback(p->listener, on_accept, p);
    brisk_sim_at(p->w, 0, start, p);

    /* Run the world until both directions are over (or 10 minutes of virtual time). */
    brisk_sim_run_while(p->w, finished, p, 600 * BRISK_NSEC_PER_SEC);
    uint64_t end = brisk_sim_now(p->w);
    struct brisk_conn_info ci;
    memset(&ci, 0, sizeof(ci));
    if (p->a.s)
        brisk_conn_info(p->a.s, &ci);

    int ok = !p->a.error && !p->b.error && p->b.received == p->bytes && p->a.received == p->bytes &&
             p->b.bad_at == UINT64_MAX && p->a.bad_at == UINT64_MAX && p->a.eof && p->b.eof;
    printf("sim_pair: %s: %llu bytes a->b %s, %llu bytes echoed b->a %s, in %.3f ms of virtual time; "
           "a: srtt %.3f ms, %llu segments retransmitted%s%s\n",
           ok ? "ok" : "FAILED", (unsigned long long)p->b.received,
           p->b.bad_at == UINT64_MAX ? "intact" : "CORRUPT", (unsigned long long)p->a.received,
           p->a.bad_at == UINT64_MAX ? "intact" : "CORRUPT", end / 1e6, ci.srtt_ns / 1e6,
           (unsigned long long)ci.retransmits, p->a.error || p->b.error ? "; error: " : "",
           p->a.error   ? brisk_strerror(p->a.error)
           : p->b.error ? brisk_strerror(p->b.error)
                        : "");

    /* Close both ends, let the FIN exchange and TIME-WAIT finish, free in reverse order. */
    uint64_t now = brisk_sim_now(p->w);
    if (p->a.s)
        brisk_close(p->a.s, now);
    if (p->b.s)
        brisk_close(p->b.s, now);
    brisk_close(p->listener, now);
    brisk_sim_host_kick(p->a.host);
    brisk_sim_host_kick(p->b.host);
    brisk_sim_run_until(p->w, now + 300 * BRISK_NSEC_PER_SEC);
    brisk_sim_world_free(p->w);
    return ok ? 0 : 1;
}
