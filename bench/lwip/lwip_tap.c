/*
 * lwip_tap.c — lwip-tap: Debian's liblwip (lwIP 2.1.3) on a TAP device, playing the roles brisk-peer plays,
 * so bench/compare.sh can put lwIP beside brisk and the kernel with the same kernel-side tool (ksock) and
 * the same byte stream (tests/interop/pattern.h). Issue 8: "brisk (TAP) <-> kernel >= 2 x lwIP (TAP) <->
 * kernel".
 *
 * How lwIP runs here. Debian builds liblwip for the Hurd's TCP/IP translator: NO_SYS=0, the socket and
 * netconn APIs, a pthread sys layer and core locking (lwipopts.h in /usr/include/lwip — the library's own
 * options; this program compiles against them unchanged, since struct layouts depend on them). We use none of
 * the threads: main() calls lwip_init() instead of tcpip_init(), so no tcpip thread exists, and one thread
 * drives the raw callback API (tcp_new / tcp_bind / tcp_listen / tcp_accept / tcp_connect / tcp_recv /
 * tcp_write / tcp_output / tcp_sent) the way a NO_SYS port would. The library's core-lock check
 * (sys_check_core_locking) only asserts once a tcpip thread has marked itself, so it stays quiet.
 *
 * The netif is a TAP we open ourselves (/dev/net/tun, IFF_TAP | IFF_NO_PI; not contrib's tapif, which
 * configures the host side itself): the loop polls the descriptor, reads each frame into a PBUF_RAM pbuf and
 * hands it to netif->input (ethernet_input); lwIP's linkoutput (tap_linkoutput) writes one frame per
 * write(). Between reads the loop calls sys_check_timeouts() — lwIP's TCP fast (250 ms: delayed ACKs,
 * refused data) and slow timers, ARP — and sleeps no longer than sys_timeouts_sleeptime() says.
 *
 * Roles, with brisk-peer's names and output (one key=value line on stdout, the same keys):
 *   source  send --bytes of the pattern, then FIN; read until the peer's FIN;
 *   sink    read and check until the peer's FIN, then FIN (goodput: accept to the peer's FIN);
 *   echo    send back what arrives (the receive window stays closed for bytes not yet echoed);
 *   rr      --count request/response transactions of --size bytes, Nagle off; latency percentiles.
 * A connecting role first resolves the peer with ARP (like brisk-peer), so the SYN does not wait out lwIP's
 * 3 s initial RTO when the kernel side of the TAP is configured after we start.
 * `--info` prints the options the library was built with and exits. Exit status: 0 when the connection ended
 * with a clean FIN both ways and every byte was right, 1 otherwise, 2 on bad usage, 77 when the TAP cannot be
 * opened (no root, no /dev/net/tun).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lwip/etharp.h"
#include "lwip/ethip6.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h" /* tcp_active_pcbs: is our closed connection's FIN exchange over? */
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "interop/pattern.h"

#define FRAME_MAX 2048 /* read buffer per frame: an MTU-1500 frame is 1514 bytes */
#define ECHO_LEN  (256 * 1024)
#define MAX_RR    1000000
#define RX_BATCH  256 /* frames read per wake-up before timers get a turn */

enum mode { M_SOURCE, M_SINK, M_ECHO, M_RR };
static const char *const mode_names[] = {"source", "sink", "echo", "rr"};

struct harness {
    /* options */
    enum mode mode;
    uint64_t bytes, size, count, seed, timeout_ns;
    int listen_port, nodelay;
    char ifname[IFNAMSIZ];
    ip4_addr_t ip, mask, gw, dst;
    uint16_t dst_port;
    /* the device */
    int fd;
    struct netif netif;
    uint64_t rx_frames, tx_frames, tx_errors, rx_oversize;
    /* the connection */
    struct tcp_pcb *lpcb, *pcb;
    int connecting, resolved, tx_fin, rx_eof, closed, done;
    err_t error;
    uint64_t next_arp, t_start, t_end;
    uint16_t mss; /* pcb->mss, kept: the pcb is lwIP's once closed */
    /* data */
    struct pattern pat;
    struct pattern_hash txh;
    uint64_t tx_off;
    struct pattern_rx rx; /* what arrived: offset, first bad byte, hash */
    uint8_t *echo;        /* bytes received and not yet sent back */
    size_t echo_len;
    uint8_t *req;
    uint64_t rr_done, rr_got, rr_sent_at;
    uint64_t *lat;
};

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the TAP netif ------------------------------------------------------------------------------------- */

static int tap_open(struct harness *h, char *why, size_t whylen)
{
    h->fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (h->fd < 0) {
        snprintf(why, whylen, "/dev/net/tun: %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", h->ifname);
    if (ioctl(h->fd, TUNSETIFF, &ifr) < 0) {
        snprintf(why, whylen, "TUNSETIFF %s: %s", h->ifname, strerror(errno));
        close(h->fd);
        return -1;
    }
    snprintf(h->ifname, sizeof(h->ifname), "%s", ifr.ifr_name);
    fcntl(h->fd, F_SETFL, fcntl(h->fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* One frame per write(). lwIP is built with LWIP_NETIF_TX_SINGLE_PBUF, so TCP segments arrive as one pbuf;
 * ARP and the rare chain go out through writev(). A failed write is a lost frame: TCP retransmits it. */
static err_t tap_linkoutput(struct netif *netif, struct pbuf *p)
{
    struct harness *h = netif->state;
    struct iovec iov[16];
    int n = 0;
    for (struct pbuf *q = p; q && n < 16; q = q->next)
        iov[n++] = (struct iovec){.iov_base = q->payload, .iov_len = q->len};
    ssize_t k = n == 1 ? write(h->fd, iov[0].iov_base, iov[0].iov_len) : writev(h->fd, iov, n);
    if (k != (ssize_t)p->tot_len) {
        h->tx_errors++;
        return ERR_OK;
    }
    h->tx_frames++;
    return ERR_OK;
}

static err_t tap_netif_init(struct netif *netif)
{
    struct harness *h = netif->state;
    netif->name[0] = 't';
    netif->name[1] = 'p';
    netif->output = etharp_output;
    netif->output_ip6 = ethip6_output;
    netif->linkoutput = tap_linkoutput;
    netif->mtu = 1500;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    /* locally administered unicast, varying with the address so two harnesses on one bridge differ */
    uint32_t a = lwip_ntohl(ip4_addr_get_u32(&h->ip));
    const u8_t mac[ETH_HWADDR_LEN] = {0x02, 0x4c, (u8_t)(a >> 24), (u8_t)(a >> 16), (u8_t)(a >> 8), (u8_t)a};
    memcpy(netif->hwaddr, mac, sizeof(mac));
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

/* Reads what the kernel queued on the TAP (at most RX_BATCH frames) into lwIP. Returns the frame count. */
static int tap_input(struct harness *h)
{
    int n = 0;
    while (n < RX_BATCH) {
        struct pbuf *p = pbuf_alloc(PBUF_RAW, FRAME_MAX, PBUF_RAM);
        if (!p)
            return n;
        ssize_t k = read(h->fd, p->payload, FRAME_MAX);
        if (k <= 0 || k >= FRAME_MAX) {
            pbuf_free(p);
            if (k >= FRAME_MAX) { /* truncated: the kernel side's MTU is larger than ours */
                h->rx_oversize++;
                continue;
            }
            return n;
        }
        pbuf_realloc(p, (u16_t)k);
        n++;
        h->rx_frames++;
        if (h->netif.input(p, &h->netif) != ERR_OK)
            pbuf_free(p);
    }
    return n;
}

/* ---- the roles ----------------------------------------------------------------------------------------- */

/* Detaches our callbacks and closes: from here on the pcb is lwIP's (it finishes the FIN exchange). */
static void conn_close(struct harness *h)
{
    struct tcp_pcb *pcb = h->pcb;
    h->mss = pcb->mss;
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_sent(pcb, NULL);
    tcp_err(pcb, NULL);
    if (tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb); /* out of memory for the FIN: the peer sees a reset, the run fails */
    h->pcb = NULL;
    h->closed = 1;
    h->done = 1;
}

static void conn_shutdown_tx(struct harness *h)
{
    h->tx_fin = 1;
    tcp_shutdown(h->pcb, 0, 1);
}

/* Queues pattern bytes while lwIP has send buffer and queue room. tcp_write copies (TX_SINGLE_PBUF forces
 * it): the bytes go from the pattern table into segments, one copy, as brisk-peer's send does. */
static void source_push(struct harness *h)
{
    while (h->tx_off < h->bytes) {
        size_t n = h->bytes - h->tx_off;
        size_t room = tcp_sndbuf(h->pcb);
        if (n > room)
            n = room;
        if (n > 0xffff)
            n = 0xffff;
        if (!n || tcp_sndqueuelen(h->pcb) >= TCP_SND_QUEUELEN)
            break;
        const uint8_t *src = pattern_at(&h->pat, h->tx_off, &n);
        u8_t more = h->tx_off + n < h->bytes ? TCP_WRITE_FLAG_MORE : 0;
        if (tcp_write(h->pcb, src, (u16_t)n, TCP_WRITE_FLAG_COPY | more) != ERR_OK)
            break;
        pattern_hash_add(&h->txh, src, n);
        h->tx_off += n;
    }
    if (h->tx_off == h->bytes && !h->tx_fin)
        conn_shutdown_tx(h);
}

static void echo_flush(struct harness *h)
{
    size_t n = h->echo_len;
    if (n > tcp_sndbuf(h->pcb))
        n = tcp_sndbuf(h->pcb);
    if (n > 0xffff)
        n = 0xffff;
    if (n && tcp_write(h->pcb, h->echo, (u16_t)n, TCP_WRITE_FLAG_COPY) == ERR_OK) {
        pattern_hash_add(&h->txh, h->echo, n);
        h->tx_off += n;
        memmove(h->echo, h->echo + n, h->echo_len - n);
        h->echo_len -= n;
        tcp_recved(h->pcb, (u16_t)n); /* the window opens as bytes leave our buffer */
    }
    if (h->rx_eof && !h->echo_len && !h->tx_fin)
        conn_shutdown_tx(h);
}

static void rr_send(struct harness *h)
{
    pattern_fill(&h->pat, h->tx_off, h->req, h->size);
    if (tcp_write(h->pcb, h->req, (u16_t)h->size, TCP_WRITE_FLAG_COPY) != ERR_OK) {
        h->error = ERR_MEM; /* a request always fits an idle connection */
        h->done = 1;
        return;
    }
    pattern_hash_add(&h->txh, h->req, h->size);
    h->tx_off += h->size;
    h->rr_sent_at = clock_ns();
    h->rr_got = 0;
}

/* Moves the role forward after an event; tcp_output is a no-op inside lwIP's input processing (it sends
 * once the segment is processed) and sends now when called from the loop. */
static void conn_kick(struct harness *h)
{
    if (!h->pcb)
        return;
    switch (h->mode) {
    case M_SOURCE:
        source_push(h);
        break;
    case M_ECHO:
        echo_flush(h);
        break;
    case M_SINK:
    case M_RR:
        break;
    }
    if (h->rx_eof && h->tx_fin) {
        conn_close(h);
        return;
    }
    tcp_output(h->pcb);
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct harness *h = arg;
    (void)err;
    if (!p) { /* the peer's FIN */
        h->rx_eof = 1;
        if (h->mode == M_SINK) {
            h->t_end = clock_ns();
            conn_shutdown_tx(h);
        }
        conn_kick(h);
        return ERR_OK;
    }
    uint16_t total = p->tot_len;
    if (h->mode == M_ECHO && h->echo_len + total > ECHO_LEN)
        return ERR_MEM; /* cannot happen (the window is smaller than the buffer); lwIP keeps the data */
    for (struct pbuf *q = p; q; q = q->next) {
        pattern_rx_take(&h->pat, &h->rx, q->payload, q->len);
        if (h->mode == M_ECHO) {
            memcpy(h->echo + h->echo_len, q->payload, q->len);
            h->echo_len += q->len;
        }
    }
    pbuf_free(p);
    if (h->mode != M_ECHO)
        tcp_recved(pcb, total);
    if (h->mode == M_RR) {
        h->rr_got += total;
        if (h->rr_got >= h->size) {
            uint64_t now = clock_ns();
            if (h->rr_done < MAX_RR)
                h->lat[h->rr_done] = now - h->rr_sent_at;
            if (++h->rr_done == h->count) {
                h->t_end = now;
                conn_shutdown_tx(h);
            } else {
                rr_send(h);
            }
        }
    }
    conn_kick(h);
    return ERR_OK;
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    (void)len;
    conn_kick(arg);
    return ERR_OK;
}

/* lwIP has freed the pcb already (reset, or too many retransmissions). */
static void on_err(void *arg, err_t err)
{
    struct harness *h = arg;
    h->pcb = NULL;
    h->error = err;
    h->done = 1;
}

static void conn_start(struct harness *h, struct tcp_pcb *pcb)
{
    h->pcb = pcb;
    h->mss = pcb->mss;
    tcp_arg(pcb, h);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
    if (h->nodelay || h->mode == M_RR)
        tcp_nagle_disable(pcb);
    h->t_start = clock_ns();
    if (h->mode == M_RR)
        rr_send(h);
    conn_kick(h);
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct harness *h = arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    if (h->pcb) {
        tcp_abort(pcb); /* one connection per run */
        return ERR_ABRT;
    }
    conn_start(h, pcb); /* the listener is closed from the loop, outside lwIP's input processing */
    return ERR_OK;
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct harness *h = arg;
    if (err != ERR_OK)
        return err;
    conn_start(h, pcb);
    return ERR_OK;
}

/* Connects once the peer answers ARP; until then asks every 20 ms. */
static void try_connect(struct harness *h, uint64_t now)
{
    struct eth_addr *eth;
    const ip4_addr_t *ip;
    if (etharp_find_addr(&h->netif, &h->dst, &eth, &ip) < 0) {
        if (now >= h->next_arp) {
            etharp_request(&h->netif, &h->dst);
            h->next_arp = now + 20000000ull;
        }
        return;
    }
    h->resolved = 1;
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (!pcb) {
        h->error = ERR_MEM;
        h->done = 1;
        return;
    }
    tcp_arg(pcb, h);
    tcp_err(pcb, on_err);
    ip_addr_t dst;
    ip_addr_copy_from_ip4(dst, h->dst);
    err_t e = tcp_connect(pcb, &dst, h->dst_port, on_connected);
    if (e != ERR_OK) {
        tcp_abort(pcb);
        h->error = e;
        h->done = 1;
    }
}

/* lwip_strerr() is compiled only into LWIP_DEBUG builds; Debian's is not one. */
static const char *err_name(err_t e)
{
    switch (e) {
    case ERR_OK:
        return "none";
    case ERR_MEM:
        return "out-of-memory";
    case ERR_TIMEOUT:
        return "timeout";
    case ERR_RTE:
        return "no-route";
    case ERR_VAL:
        return "illegal-value";
    case ERR_USE:
        return "address-in-use";
    case ERR_CONN:
        return "not-connected";
    case ERR_ABRT:
        return "aborted";
    case ERR_RST:
        return "reset";
    case ERR_CLSD:
        return "closed";
    default:
        return "error";
    }
}

/* ---- options and the loop ------------------------------------------------------------------------------ */

/* The library's build options that decide its figures: printed by --info and with every result. */
static void print_options(FILE *f)
{
    fprintf(f,
            "lwip=%s no_sys=%d tcp_mss=%d tcp_wnd=%d wnd_scale=%d rcv_scale=%d tcp_snd_buf=%d "
            "tcp_snd_queuelen=%d tcp_oversize=%d ooseq=%d sack_out=%d timestamps=%d checksum_on_copy=%d "
            "csum_gen_tcp=%d csum_check_tcp=%d mem_libc_malloc=%d memp_mem_malloc=%d tx_single_pbuf=%d "
            "core_locking=%d",
            LWIP_VERSION_STRING, NO_SYS, TCP_MSS, (int)TCP_WND, LWIP_WND_SCALE, TCP_RCV_SCALE,
            (int)TCP_SND_BUF, (int)TCP_SND_QUEUELEN, (int)TCP_OVERSIZE, TCP_QUEUE_OOSEQ, LWIP_TCP_SACK_OUT,
            LWIP_TCP_TIMESTAMPS, LWIP_CHECKSUM_ON_COPY, CHECKSUM_GEN_TCP, CHECKSUM_CHECK_TCP, MEM_LIBC_MALLOC,
            MEMP_MEM_MALLOC, LWIP_NETIF_TX_SINGLE_PBUF, LWIP_TCPIP_CORE_LOCKING);
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: lwip-tap --tap NAME --ip A.B.C.D/NN [--gw A.B.C.D] (--listen PORT | --connect A.B.C.D:PORT)\n"
        "                [--mode source|sink|echo|rr] [--bytes N[K|M|G]] [--size N] [--count N] [--seed N]\n"
        "                [--nodelay] [--timeout SECS[s]]\n"
        "       lwip-tap --info      (the options liblwip was built with)\n");
}

static int bad(const char *what, const char *val)
{
    fprintf(stderr, "lwip-tap: invalid %s: '%s'\n", what, val ? val : "(missing)");
    usage();
    return 2;
}

static int parse_ip(const char *s, ip4_addr_t *ip)
{
    unsigned a, b, c, d;
    char tail;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
        return -1;
    IP4_ADDR(ip, a, b, c, d);
    return 0;
}

static int parse_cidr(const char *s, ip4_addr_t *ip, ip4_addr_t *mask)
{
    char host[32];
    const char *slash = strchr(s, '/');
    uint64_t len;
    if (!slash || (size_t)(slash - s) >= sizeof(host) || pattern_parse_count(slash + 1, &len) || len < 1 ||
        len > 32)
        return -1;
    memcpy(host, s, (size_t)(slash - s));
    host[slash - s] = '\0';
    if (parse_ip(host, ip))
        return -1;
    ip4_addr_set_u32(mask, lwip_htonl(len == 32 ? 0xffffffffu : ~(0xffffffffu >> len)));
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int parse_args(struct harness *h, int argc, char **argv)
{
    int have_tap = 0, have_ip = 0, roles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(a, "--nodelay")) {
            h->nodelay = 1;
            continue;
        }
        if (!v)
            return bad(a, NULL);
        i++;
        if (!strcmp(a, "--tap")) {
            if (!*v || strlen(v) >= sizeof(h->ifname))
                return bad(a, v);
            snprintf(h->ifname, sizeof(h->ifname), "%s", v);
            have_tap = 1;
        } else if (!strcmp(a, "--ip")) {
            if (parse_cidr(v, &h->ip, &h->mask))
                return bad(a, v);
            have_ip = 1;
        } else if (!strcmp(a, "--gw")) {
            if (parse_ip(v, &h->gw))
                return bad(a, v);
        } else if (!strcmp(a, "--listen")) {
            if (pattern_parse_count(v, &u) || u == 0 || u > 65535)
                return bad(a, v);
            h->listen_port = (int)u;
            roles++;
        } else if (!strcmp(a, "--connect")) {
            char host[32];
            const char *c = strchr(v, ':');
            if (!c || (size_t)(c - v) >= sizeof(host))
                return bad(a, v);
            memcpy(host, v, (size_t)(c - v));
            host[c - v] = '\0';
            if (parse_ip(host, &h->dst) || pattern_parse_count(c + 1, &u) || u == 0 || u > 65535)
                return bad(a, v);
            h->dst_port = (uint16_t)u;
            roles++;
        } else if (!strcmp(a, "--mode")) {
            int m = -1;
            for (int k = 0; k < 4; k++)
                if (!strcmp(v, mode_names[k]))
                    m = k;
            if (m < 0)
                return bad(a, v);
            h->mode = (enum mode)m;
        } else if (!strcmp(a, "--bytes")) {
            if (pattern_parse_count(v, &h->bytes))
                return bad(a, v);
        } else if (!strcmp(a, "--size")) {
            if (pattern_parse_count(v, &h->size) || h->size == 0 || h->size > 65535)
                return bad(a, v);
        } else if (!strcmp(a, "--count")) {
            if (pattern_parse_count(v, &h->count) || h->count == 0 || h->count > MAX_RR)
                return bad(a, v);
        } else if (!strcmp(a, "--seed")) {
            if (pattern_parse_count(v, &h->seed))
                return bad(a, v);
        } else if (!strcmp(a, "--timeout")) {
            char secs[24]; /* "120" or brisk-peer's "120s" */
            size_t len = strlen(v);
            if (len && len < sizeof(secs) && v[len - 1] == 's')
                len--;
            if (len >= sizeof(secs))
                return bad(a, v);
            memcpy(secs, v, len);
            secs[len] = '\0';
            if (pattern_parse_count(secs, &u) || u == 0 || u > 86400)
                return bad(a, v);
            h->timeout_ns = u * 1000000000ull;
        } else {
            return bad("option", a);
        }
    }
    if (!have_tap || !have_ip || roles != 1)
        return bad("arguments", "need --tap, --ip and exactly one of --listen / --connect");
    if (h->mode == M_RR && h->listen_port)
        return bad("mode", "rr is a client role (use --connect)");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--info")) {
        print_options(stdout);
        printf("\n");
        return 0;
    }
    struct harness *h = calloc(1, sizeof(*h));
    if (!h) {
        fprintf(stderr, "lwip-tap: out of memory\n");
        return 1;
    }
    h->mode = M_SINK;
    h->size = 1;
    h->count = 1000;
    h->seed = 1;
    h->timeout_ns = 120 * 1000000000ull;
    h->fd = -1;
    int rc = parse_args(h, argc, argv);
    if (rc) {
        free(h); /* nothing else is allocated yet (and a sanitizer build checks for leaks at exit) */
        return rc;
    }
    h->echo = malloc(ECHO_LEN);
    h->req = malloc(65536);
    h->lat = h->mode == M_RR ? calloc(MAX_RR, sizeof(uint64_t)) : NULL;
    if (!h->echo || !h->req || (h->mode == M_RR && !h->lat) || pattern_init(&h->pat, h->seed) < 0) {
        fprintf(stderr, "lwip-tap: out of memory\n");
        return 1;
    }
    pattern_hash_init(&h->txh);
    pattern_rx_init(&h->rx);
    char why[160];
    if (tap_open(h, why, sizeof(why)) < 0) {
        fprintf(stderr, "lwip-tap: cannot open the TAP: %s\n", why);
        return 77;
    }
    fprintf(stderr, "tap %s\n", h->ifname);

    lwip_init(); /* not tcpip_init(): no tcpip thread, this thread is lwIP's only caller */
    if (!netif_add(&h->netif, &h->ip, &h->mask, &h->gw, h, tap_netif_init, ethernet_input)) {
        fprintf(stderr, "lwip-tap: netif_add failed\n");
        return 1;
    }
    netif_set_default(&h->netif);
    netif_set_up(&h->netif);
    netif_set_link_up(&h->netif);
    if (h->listen_port) {
        struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
        err_t e = pcb ? tcp_bind(pcb, IP4_ADDR_ANY, (u16_t)h->listen_port) : ERR_MEM;
        if (e == ERR_OK)
            h->lpcb = tcp_listen_with_backlog_and_err(pcb, 4, &e);
        if (!h->lpcb) {
            fprintf(stderr, "lwip-tap: listen on %d: %s\n", h->listen_port, err_name(e));
            return 1;
        }
        tcp_arg(h->lpcb, h);
        tcp_accept(h->lpcb, on_accept);
    }

    uint64_t deadline = clock_ns() + h->timeout_ns, linger_until = 0;
    const char *result = NULL;
    for (;;) {
        uint64_t now = clock_ns();
        if (!h->listen_port && !h->resolved && !h->done)
            try_connect(h, now);
        if (h->pcb && h->lpcb) { /* accepted: no second connection */
            tcp_close(h->lpcb);
            h->lpcb = NULL;
        }
        if (h->done && !linger_until)
            linger_until = now + 1000000000ull;
        /* After our close, lwIP finishes the FIN exchange: stay until the pcb leaves the active list (the
         * peer acknowledged our FIN; TIME-WAIT needs no one) or a second has passed. */
        if (h->done && (!tcp_active_pcbs || now >= linger_until))
            break;
        if (now >= deadline) {
            result = "timeout";
            break;
        }
        u32_t sleep_ms = sys_timeouts_sleeptime();
        if (sleep_ms > 20)
            sleep_ms = 20; /* ARP retries, the deadline and the linger are ours, not lwIP's timers */
        struct pollfd pf = {.fd = h->fd, .events = POLLIN};
        if (poll(&pf, 1, (int)sleep_ms) > 0)
            tap_input(h);
        sys_check_timeouts();
        /* a window update after a full send buffer, or an echo backlog: push what the callbacks could not */
        if (h->pcb && !h->done)
            conn_kick(h);
    }
    if (!result) {
        if (h->error == ERR_RST || h->error == ERR_ABRT)
            result = "reset";
        else if (h->error != ERR_OK)
            result = "error";
        else if (h->rx_eof)
            result = "eof";
        else
            result = "closed";
    }
    if (!h->t_end)
        h->t_end = clock_ns();
    if (h->pcb)
        h->mss = h->pcb->mss;

    double secs = h->t_start && h->t_end > h->t_start ? (double)(h->t_end - h->t_start) / 1e9 : 0;
    uint64_t moved = h->mode == M_SINK ? h->rx.off : h->tx_off;
    printf("side=lwip mode=%d result=%s err=%s tx_bytes=%llu tx_hash=%016llx rx_bytes=%llu rx_hash=%016llx "
           "rx_bad=%d rx_bad_at=%llu secs=%.6f mbps=%.1f mss=%u tap_rx=%llu tap_tx=%llu tap_tx_errors=%llu "
           "tap_rx_oversize=%llu",
           (int)h->mode, result, err_name(h->error), (unsigned long long)h->tx_off,
           (unsigned long long)pattern_hash_final(&h->txh), (unsigned long long)h->rx.off,
           (unsigned long long)pattern_hash_final(&h->rx.h), h->rx.bad, (unsigned long long)h->rx.bad_at,
           secs, secs > 0 ? (double)moved * 8 / secs / 1e6 : 0.0, h->mss, (unsigned long long)h->rx_frames,
           (unsigned long long)h->tx_frames, (unsigned long long)h->tx_errors,
           (unsigned long long)h->rx_oversize);
    if (h->mode == M_RR && h->rr_done) {
        uint64_t n = h->rr_done < MAX_RR ? h->rr_done : MAX_RR;
        qsort(h->lat, n, sizeof(uint64_t), cmp_u64);
        printf(" rr=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f", (unsigned long long)h->rr_done,
               (double)h->lat[n / 2] / 1e3, (double)h->lat[n * 9 / 10] / 1e3,
               (double)h->lat[n * 99 / 100] / 1e3);
    }
    printf(" ");
    print_options(stdout);
    printf("\n");
    fflush(stdout);

    int ok = !h->rx.bad && !strcmp(result, "eof") && h->tx_fin;
    if (h->mode == M_SOURCE)
        ok = ok && h->tx_off == h->bytes;
    if (h->mode == M_RR)
        ok = ok && h->rr_done == h->count;
    close(h->fd);
    pattern_free(&h->pat);
    free(h->echo);
    free(h->req);
    free(h->lat);
    free(h);
    return ok ? 0 : 1;
}
