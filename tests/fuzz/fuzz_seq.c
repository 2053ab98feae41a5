/*
 * fuzz_seq.c — time-stamped sequences of frames and application calls that drive connections through their
 * states: handshake, data both ways, out-of-order arrival, FINs in any order, resets, TIME-WAIT, timeouts.
 *
 * Input: [mode u8] then records [delay u16][len u16][body], big-endian:
 *   mode    bits 0-1: FH_FIX_CSUM / FH_FIX_ADDR for every frame; bits 2-3: the scenario (0 a listener only,
 *           1 a listener and an accepted connection, 2 a connection we opened; 3 as 1); bit 4: SYN cookies
 * for every SYN (tcp_syncookies=2); bit 5: frames that arrive together (records with delay 0 after a frame)
 * go in as one receive batch (brisk_stack_input_batch: receive coalescing). delay   milliseconds of virtual
 * time to run (every timer due fires) before the record. len     < 0x8000: a frame of `len` bytes follows. >=
 * 0x8000: an application call, no body: op = (len >> 8) & 7, arg = len & 0xff: 0 recv up to 64 * (arg + 1)
 * bytes      1 send 64 * arg + 1 bytes (MSG_MORE if arg is odd) 2 shutdown (write side)                3
 * close (the stack finishes the connection) 4 setsockopt NODELAY / CORK per arg    5 accept from the listener
 * (closed again at once) 6 abort                                7 run 100 ms more After every record the
 * harness checks the invariants; at the end everything is closed, time runs out, and no socket, packet buffer
 * or buffer chunk may remain. BRISK_FUZZ_TRACE=1 in the environment prints each record's effect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/wire.h"

#define MAX_RECORDS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0];
    static const enum fh_scenario sc[4] = {FH_LISTEN, FH_PASSIVE, FH_ACTIVE, FH_PASSIVE};
    /* BRISK_FUZZ_TRACE=1 prints each record's effect (for writing seeds and reading crashes). */
    const char *tr = getenv("BRISK_FUZZ_TRACE");
    int trace = tr && *tr == '1';
    struct fh h;
    fh_init_with(&h, sc[(mode >> 2) & 3], (mode & 0x10) ? "tcp_syncookies=2" : NULL);
    size_t off = 1;
    int batch = (mode & 0x20) != 0;
    const uint8_t *bf[FH_BATCH_MAX];
    size_t bl[FH_BATCH_MAX], nb = 0;
    unsigned fix = mode & (FH_FIX_CSUM | FH_FIX_ADDR | FH_REL_SEQ);
    for (unsigned n = 0; n < MAX_RECORDS && off + 4 <= size; n++) {
        uint16_t delay = brisk_get16(data + off);
        uint16_t len = brisk_get16(data + off + 2);
        off += 4;
        if (nb && (delay || len >= 0x8000 || nb == FH_BATCH_MAX)) {
            fh_input_batch(&h, bf, bl, nb, fix);
            nb = 0;
            fh_check(&h);
        }
        fh_run(&h, h.now + (uint64_t)delay * BRISK_NSEC_PER_MSEC);
        if (len >= 0x8000) {
            fh_app_call(&h, (len >> 8) & 7, len & 0xff);
        } else {
            if (len > size - off)
                len = (uint16_t)(size - off);
            if (batch) {
                bf[nb] = data + off;
                bl[nb++] = len;
            } else {
                fh_input(&h, data + off, len, fix);
            }
            off += len;
        }
        fh_check(&h);
        if (trace) {
            struct brisk_conn_info i = {.state = -1};
            if (h.conn)
                brisk_conn_info(h.conn, &i);
            fprintf(stderr, "record %u at %llu ms: %s, conn %s, %llu frames out, %llu sockets\n", n,
                    (unsigned long long)(h.now / BRISK_NSEC_PER_MSEC), len >= 0x8000 ? "call" : "frame",
                    h.conn ? brisk_tcp_state_name(i.state) : "-", (unsigned long long)h.frames_out,
                    (unsigned long long)brisk_stack_sockets(h.st));
        }
    }
    if (nb) {
        fh_input_batch(&h, bf, bl, nb, fix);
        fh_check(&h);
    }
    fh_finish(&h);
    return 0;
}
