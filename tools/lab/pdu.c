/*
 * pdu.c — the PDU exchange (pdu.h): an iSCSI-style target and initiator at queue depth 1.
 *
 * Seed 000's mechanism lives in the server's two sends: the header leaves, the payload meets a header still
 * below TCP (not yet completed by the NIC) and may be auto-corked; what happens at TX completion decides
 * whether it leaves one serialization later or waits for the client's delayed ACK. Nothing here chooses: the
 * stacks' settings do. The latencies are kept (one per I/O, allocated at the start: a tool, not the stack) so
 * that the report can give percentiles and a distribution.
 */
#include "lab/pdu.h"

#include <stdlib.h>
#include <string.h>

struct lab_pdu {
    struct lab_pdu_config c;
    brisk_sock *cli, *srv, *listener;
    uint32_t done;      /* I/Os completed */
    uint64_t got;       /* response bytes the client holds for the current I/O */
    uint64_t req_got;   /* request bytes the server holds */
    uint64_t delivered; /* response bytes read by the client */
    uint64_t issued_at; /* when the current request was sent */
    uint64_t *lat;      /* per I/O: request sent -> whole response read, ns */
    uint64_t start, end;
    int failed; /* a send fell short or a connection failed */
};

static void send_request(lab_pdu *x, uint64_t now)
{
    uint8_t buf[4096] = {0x01}; /* a SCSI READ command PDU, say (its contents do not matter) */
    x->issued_at = now;
    if (brisk_send(x->cli, buf, x->c.request, 0, now) != (int64_t)x->c.request)
        x->failed = 1;
}

static void on_client(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    lab_pdu *x = ctx;
    if (ev & BRISK_EV_ERROR)
        x->failed = 1;
    if (ev & BRISK_EV_CONNECTED) {
        x->start = now;
        send_request(x, now);
    }
    uint8_t buf[4096];
    int64_t n;
    uint64_t per_io = (uint64_t)x->c.header + x->c.payload;
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->got += (uint64_t)n;
        x->delivered += (uint64_t)n;
        while (x->got >= per_io && x->done < x->c.ios) {
            x->got -= per_io;
            x->lat[x->done] = now - x->issued_at;
            if (++x->done == x->c.ios)
                x->end = now;
            else
                send_request(x, now);
        }
    }
}

static void on_server(void *ctx, brisk_sock *s, unsigned ev, uint64_t now)
{
    lab_pdu *x = ctx;
    if (ev & BRISK_EV_ERROR)
        x->failed = 1;
    uint8_t buf[4096];
    int64_t n;
    static const uint8_t zero[4096]; /* header and payload contents do not matter; read-only */
    while ((n = brisk_recv(s, buf, sizeof(buf), now)) > 0) {
        x->req_got += (uint64_t)n;
        while (x->req_got >= x->c.request) {
            x->req_got -= x->c.request;
            if (brisk_send(s, zero, x->c.header, x->c.more ? BRISK_MSG_MORE : 0, now) != (int64_t)x->c.header ||
                brisk_send(s, zero, x->c.payload, 0, now) != (int64_t)x->c.payload)
                x->failed = 1;
        }
    }
}

static void on_listen(void *ctx, brisk_sock *l, unsigned ev, uint64_t now)
{
    lab_pdu *x = ctx;
    (void)ev;
    int err;
    brisk_sock *s = brisk_accept(l, &err);
    if (!s)
        return;
    x->srv = s;
    brisk_setsockopt(s, BRISK_SO_NODELAY, 1, now); /* the iSCSI target's socket, as in the report */
    brisk_sock_set_callback(s, on_server, x);
}

lab_pdu *lab_pdu_start(brisk_sim_host *client, brisk_sim_host *server, const struct brisk_addr *server_addr,
                       const struct lab_pdu_config *c)
{
    if (!client || !server || c->ios < 1 || c->request < 1 || c->request > 4096 || c->header < 1 ||
        c->header > 4096 || c->payload < 1 || c->payload > 4096)
        return NULL;
    lab_pdu *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->c = *c;
    uint16_t port = c->port ? c->port : 3260;
    x->lat = calloc(c->ios, sizeof(*x->lat));
    int err = 0;
    if (x->lat) {
        x->listener = brisk_socket(brisk_sim_host_stack(server), &err);
        x->cli = brisk_socket(brisk_sim_host_stack(client), &err);
    }
    if (!x->listener || !x->cli || brisk_bind_addr(x->listener, server_addr, port) != BRISK_OK ||
        brisk_listen(x->listener, 4) != BRISK_OK) {
        lab_pdu_free(x, 0);
        return NULL;
    }
    brisk_sock_set_callback(x->listener, on_listen, x);
    brisk_sock_set_callback(x->cli, on_client, x);
    if (brisk_connect_addr(x->cli, server_addr, port, 0) != BRISK_ERR_INPROGRESS) {
        lab_pdu_free(x, 0);
        return NULL;
    }
    brisk_sim_host_kick(client);
    return x;
}

int lab_pdu_done(const lab_pdu *x)
{
    return x->done == x->c.ios || x->failed;
}

uint64_t lab_pdu_delivered(const lab_pdu *x)
{
    return x->delivered;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void lab_pdu_result(lab_pdu *x, int interrupted, struct lab_pdu_result *out)
{
    memset(out, 0, sizeof(*out));
    out->ok = x->done == x->c.ios && !x->failed && !interrupted;
    out->done = x->done;
    out->total_ns = out->ok ? x->end - x->start : 0;
    out->delivered = x->delivered;
    if (x->srv)
        brisk_conn_info(x->srv, &out->server);
    qsort(x->lat, x->done, sizeof(*x->lat), cmp_u64);
    out->lat = x->lat;
}

void lab_pdu_free(lab_pdu *x, uint64_t now)
{
    if (!x)
        return;
    lab_pair_end(x->cli, x->srv, x->listener, now);
    free(x->lat);
    free(x);
}

void lab_pair_end(brisk_sock *cli, brisk_sock *srv, brisk_sock *listener, uint64_t now)
{
    if (cli)
        brisk_abort(cli, now);
    if (srv)
        brisk_abort(srv, now);
    if (listener)
        brisk_close(listener, now);
}
