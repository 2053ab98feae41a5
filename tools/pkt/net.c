/*
 * net.c — brisk-pkt's virtual backend: one brisk stack on a virtual clock, its device, its deadlines.
 *
 * The stack under test has one device (192.168.0.1/16 by default, like packetdrill's local address) and a
 * gateway (192.168.0.2) through which the script's peer (192.0.2.1) is reached; the gateway's MAC is learned
 * at time 0 from an ARP request, so no ARP exchange interrupts a script. The device has no offloads: every
 * segment leaves as one MSS-sized frame with its checksums, which is what packetdrill sees on a tun device.
 * Frames are recorded at the virtual time of their xmit and completed at the end of the stack call that sent
 * them — the same instant, since tun frees a packet as soon as it takes it — so TX completion never holds a
 * connection (TSQ and auto-corking behave as they do under packetdrill).
 *
 * The clock only moves when the interpreter moves it: to the next event's time, or deadline by deadline
 * while an outbound packet or a blocking call is waited for. The frames themselves are built and compared by
 * match.c, which the kernel backend (kernel.c) shares; the system calls are sys.c's. virtual_backend at the
 * end is the table run.c drives.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/run.h"
#include "wire/arp.h"
#include "wire/eth.h"

static int dev_xmit(void *driver, brisk_pkt *pkt, uint64_t now)
{
    struct run *r = driver;
    if (r->nheld == RUN_HELD)
        return BRISK_ERR_BUSY;
    if (r->nout == r->outcap) {
        size_t cap = r->outcap ? r->outcap * 2 : 256;
        struct run_frame *q = realloc(r->outq, cap * sizeof(*q));
        if (!q)
            return BRISK_ERR_NOMEM;
        r->outq = q;
        r->outcap = cap;
    }
    uint8_t *copy = malloc(pkt->len);
    if (!copy)
        return BRISK_ERR_NOMEM;
    memcpy(copy, pkt->data, pkt->len);
    r->outq[r->nout++] = (struct run_frame){.at = now, .data = copy, .len = pkt->len};
    r->held[r->nheld++] = pkt;
    return BRISK_OK;
}

static const struct brisk_netdev_ops dev_ops = {.xmit = dev_xmit};

/* Feeds a frame to the stack at the current time. */
static void inject(struct run *r, const uint8_t *frame, size_t len)
{
    brisk_stack_input(r->st, r->dev, frame, len, r->now);
}

static void arp_from_gateway(struct run *r, uint16_t op, const uint8_t *dst_mac)
{
    uint8_t frame[60] = {0};
    struct brisk_eth_repr eth = {.type = BRISK_ETH_P_ARP};
    memcpy(eth.dst, dst_mac, 6);
    memcpy(eth.src, r->gw_mac, 6);
    brisk_eth_emit(frame, &eth);
    struct brisk_arp_repr a = {.op = op, .spa = r->gateway_ip, .tpa = r->local_ip};
    memcpy(a.sha, r->gw_mac, 6);
    if (op == BRISK_ARP_OP_REPLY)
        memcpy(a.tha, r->local_mac, 6);
    brisk_arp_emit(frame + BRISK_ETH_HLEN, &a);
    inject(r, frame, sizeof(frame));
}

int net_init(struct run *r, const struct brisk_settings *s)
{
    r->st = brisk_stack_new(s);
    if (!r->st)
        return run_fail(r, PKT_BAD_SCRIPT, NULL, "a stack setting is out of range");
    /* A tun device orphans what it takes (tun_net_xmit: skb_orphan), so nothing a connection sent stays
     * charged to it: TCP Small Queues and auto-corking never hold it back, within one call or across. */
    struct brisk_netdev_config cfg = {.name = "tun0",
                                      .mtu = r->mtu,
                                      .ip = r->local_ip,
                                      .prefix_len = (uint8_t)r->prefix,
                                      .caps = BRISK_NETDEV_CAP_ORPHAN};
    memcpy(cfg.mac, r->local_mac, 6);
    int err = 0;
    r->dev = brisk_netdev_add(r->st, &cfg, &dev_ops, r, &err);
    if (!r->dev)
        return run_fail(r, PKT_BAD_SCRIPT, NULL, "cannot add the device: %s", brisk_strerror(err));
    if (brisk_stack_set_gateway(r->st, r->gateway_ip) != BRISK_OK)
        return run_fail(r, PKT_BAD_SCRIPT, NULL, "the gateway is not in the local prefix");
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    arp_from_gateway(r, BRISK_ARP_OP_REQUEST, bcast);
    net_settle(r);
    return 0;
}

void net_free(struct run *r)
{
    for (size_t i = 0; i < r->nheld; i++)
        brisk_netdev_tx_done(r->dev, r->held[i], r->now);
    r->nheld = 0;
    for (size_t i = 0; i < r->nout; i++)
        free(r->outq[i].data);
    free(r->outq);
    r->outq = NULL;
    r->nout = 0;
    if (r->st)
        brisk_stack_free(r->st);
    r->st = NULL;
}

/* Answers the stack's ARP requests for the gateway (after a cache expiry) and drops ARP from the queue. */
static void handle_arp(struct run *r)
{
    size_t w = 0;
    int reply = 0;
    for (size_t i = 0; i < r->nout; i++) {
        struct brisk_eth_repr eth;
        struct run_frame *f = &r->outq[i];
        if (brisk_eth_parse(f->data, f->len, &eth) >= 0 && eth.type == BRISK_ETH_P_ARP) {
            struct brisk_arp_repr a;
            if (brisk_arp_parse(f->data + BRISK_ETH_HLEN, f->len - BRISK_ETH_HLEN, &a) >= 0 &&
                a.op == BRISK_ARP_OP_REQUEST && a.tpa == r->gateway_ip)
                reply = 1;
            free(f->data);
            continue;
        }
        r->outq[w++] = *f;
    }
    r->nout = w;
    if (reply)
        arp_from_gateway(r, BRISK_ARP_OP_REPLY, r->local_mac);
}

static void settle_stack(struct run *r)
{
    for (int round = 0; round < 1000; round++) {
        size_t n = r->nheld;
        for (size_t i = 0; i < n; i++)
            brisk_netdev_tx_done(r->dev, r->held[i], r->now);
        r->nheld = 0;
        brisk_stack_poll(r->st, r->now);
        handle_arp(r);
        if (r->nheld == 0)
            return;
    }
}

void net_settle(struct run *r)
{
    settle_stack(r);
    if (r->call.active && !r->stopped) {
        sys_retry(r);
        settle_stack(r);
    }
}

void net_advance(struct run *r, uint64_t t)
{
    unsigned same = 0;
    while (!r->stopped) {
        uint64_t d = brisk_stack_next_deadline(r->st);
        if (r->call.active && r->call.wake_ns && r->call.wake_ns < d)
            d = r->call.wake_ns; /* a poll timeout: the pending call returns then */
        if (d == BRISK_TIME_NONE || d > t)
            break;
        if (d > r->now) {
            r->now = d;
            same = 0;
        } else if (++same > 100000) {
            run_fail(r, PKT_FAIL, r->cur, "the stack's next deadline does not move (%" PRIu64 " ns)", d);
            return;
        }
        brisk_stack_poll(r->st, r->now);
        net_settle(r);
    }
    if (t > r->now)
        r->now = t;
    if (!r->stopped) {
        brisk_stack_poll(r->st, r->now);
        net_settle(r);
    }
}

/* ---- the backend table ---- */

static int virt_init(struct run *r, const struct brisk_settings *s)
{
    if (sys_init(r) < 0)
        return -1;
    return net_init(r, s);
}

static void virt_free(struct run *r)
{
    r->call.active = 0;
    sys_free(r);
    if (r->st) {
        net_settle(r);
        net_free(r);
    }
}

static void virt_inject(struct run *r, const uint8_t *frame, size_t len)
{
    inject(r, frame, len);
    net_settle(r);
}

/* Runs the stack deadline by deadline until it has transmitted a frame, no further than `limit`. */
static int virt_wait_out(struct run *r, uint64_t limit, uint64_t *ran_to)
{
    while (r->nout == 0) {
        uint64_t d = brisk_stack_next_deadline(r->st);
        if (r->stopped)
            return -1;
        if (d == BRISK_TIME_NONE || d > limit) {
            *ran_to = d == BRISK_TIME_NONE ? r->now : limit;
            return 0;
        }
        net_advance(r, d > r->now ? d : r->now);
        if (r->stopped)
            return -1;
    }
    return 1;
}

/* packetdrill waits up to a second for a blocking call still running at the end. */
static void virt_finish(struct run *r)
{
    if (!r->call.active)
        return;
    uint64_t limit = r->now + BRISK_NSEC_PER_SEC;
    while (r->call.active && !r->stopped && r->now < limit) {
        uint64_t d = brisk_stack_next_deadline(r->st);
        if (r->call.wake_ns && r->call.wake_ns < d)
            d = r->call.wake_ns;
        net_advance(r, d == BRISK_TIME_NONE || d > limit ? limit : d);
    }
    if (r->call.active && !r->stopped)
        run_fail(r, PKT_FAIL, r->call.ev,
                 "runtime error: exiting while a blocking system call is in progress");
}

const struct run_backend virtual_backend = {
    .name = "virtual",
    .late_search_ns = 30 * BRISK_NSEC_PER_SEC,
    .any_wait_ns = 600 * BRISK_NSEC_PER_SEC,
    .sysctls_to_settings = 1,
    .init = virt_init,
    .free = virt_free,
    .advance = net_advance,
    .inject = virt_inject,
    .wait_out = virt_wait_out,
    .syscall = sys_event,
    .command = run_command_virtual,
    .info = sys_info,
    .finish = virt_finish,
};
