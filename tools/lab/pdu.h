/*
 * pdu.h — a PDU exchange between two simulated hosts (the iSCSI target of seed 000, anyone's RPC): the client
 * sends a request of `request` bytes; the server answers with a header and a payload as two sends (MSG_MORE on
 * the header if asked) on a TCP_NODELAY socket; the client sends the next request when the whole response has
 * arrived (queue depth 1), `ios` times. Each I/O's time is request sent -> whole response read.
 */
#ifndef BRISK_LAB_PDU_H
#define BRISK_LAB_PDU_H

#include "brisk/sim.h"

struct lab_pdu_config {
    uint32_t ios;                       /* I/Os, one after another (1 ... 1000000) */
    uint32_t request, header, payload;  /* bytes: the client's request, the server's two sends (1 ... 4096) */
    int more;                           /* MSG_MORE on the header send */
    uint16_t port;                      /* the server's (0: 3260) */
};

struct lab_pdu_result {
    int ok;            /* every I/O completed without a short send or a socket error */
    uint32_t done;     /* I/Os completed */
    uint64_t total_ns; /* connected -> last response read (ok only, else 0) */
    const uint64_t *lat; /* the I/Os' times, sorted (done of them; owned by the exchange) */
    uint64_t delivered;  /* response bytes the client read */
    struct brisk_conn_info server; /* the server's connection (its hold reasons) */
};

typedef struct lab_pdu lab_pdu;
/* Listens on the server, connects the client and sends the first request once connected. NULL: out of
 * memory, bad sizes, or a socket the settings do not allow. */
lab_pdu *lab_pdu_start(brisk_sim_host *client, brisk_sim_host *server,
                       const struct brisk_addr *server_addr,
                       const struct lab_pdu_config *c);
int lab_pdu_done(const lab_pdu *x);           /* every I/O completed, or the exchange failed */
uint64_t lab_pdu_delivered(const lab_pdu *x); /* response bytes read so far */
void lab_pdu_result(lab_pdu *x, int interrupted, struct lab_pdu_result *out);
void lab_pdu_free(lab_pdu *x, uint64_t now); /* before the world; aborts what is open */

/* Ends an exchange's sockets at `now`: both ends of the connection aborted (what is unread is no longer
 * wanted), the listener closed; NULLs are skipped. pdu and onoff flows both end this way. */
void lab_pair_end(brisk_sock *cli, brisk_sock *srv, brisk_sock *listener, uint64_t now);

#endif
