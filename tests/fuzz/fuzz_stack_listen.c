/*
 * fuzz_stack_listen.c — one hostile frame into a stack with a listener on port 80 (brisk_stack_input: eth,
 * ARP, IPv4, ICMP, TCP lookup, LISTEN processing). Input: [flags u8][frame], flags FH_FIX_CSUM /
 * FH_FIX_ADDR (harness.h), FH_COOKIES (every SYN answered with a SYN cookie, so ACKs test cookie validation).
 * Then a second of timers (SYN-ACK retransmission), invariants, and the leak check after everything is
 * closed.
 */
#include "fuzz/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct fh h;
    fh_init_with(&h, FH_LISTEN, (data[0] & FH_COOKIES) ? "tcp_syncookies=2" : NULL);
    fh_input(&h, data + 1, size - 1, data[0]);
    fh_check(&h);
    fh_run(&h, h.now + BRISK_NSEC_PER_SEC);
    fh_check(&h);
    fh_finish(&h);
    return 0;
}
