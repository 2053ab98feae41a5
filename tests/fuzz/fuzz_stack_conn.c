/*
 * fuzz_stack_conn.c — one hostile frame into a stack with an established connection: accepted from
 * 10.0.0.2:40000 on port 80 (flag bit 0x04 clear) or opened by us to 10.0.0.2:80 (0x04 set), both with MSS,
 * window scale, SACK and timestamps negotiated. Input: [flags u8][frame] (FH_FIX_CSUM, FH_FIX_ADDR as in
 * harness.h). The connection then has 10 s of timers (delayed ACK, retransmission, persist), invariants are
 * checked, and everything is closed and checked for leaks.
 */
#include "fuzz/harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct fh h;
    fh_init(&h, (data[0] & 0x04) ? FH_ACTIVE : FH_PASSIVE);
    fh_input(&h, data + 1, size - 1, data[0]);
    fh_check(&h);
    fh_run(&h, h.now + 10 * BRISK_NSEC_PER_SEC);
    fh_check(&h);
    fh_finish(&h);
    return 0;
}
