/*
 * fault.c — the fault wrapper: seeded random loss around a real device.
 *
 * In the simulator, impairments belong to the link (src/sim/fault.c). On a real path the link is the
 * kernel, which loses nothing between a TAP and a local socket, so loss has to be injected at the device:
 * the TAP driver asks the wrapper before each write (transmit) and before each brisk_stack_input (receive).
 * A dropped transmission still counts as sent and completes like any other — to the stack it left the host
 * and vanished on the wire, which is what a loss test wants TCP to recover from. Dropping received frames
 * tests the other direction: the kernel's TCP must retransmit to brisk.
 *
 * Each direction draws from its own xoshiro256** stream derived from the seed, so the sequence of decisions
 * in one direction is the same for a given seed whatever the other direction does. Real-time runs are not
 * deterministic as a whole (the kernel's timing varies), but the n-th frame of a direction always meets the
 * same decision.
 */
#include "drivers/fault.h"

#include <math.h>
#include <string.h>

static int prob_ok(double p)
{
    return !isnan(p) && p >= 0.0 && p <= 1.0;
}

int brisk_fault_init(struct brisk_fault *f, const struct brisk_fault_config *cfg)
{
    memset(f, 0, sizeof(*f));
    if (cfg) {
        if (!prob_ok(cfg->tx_loss) || !prob_ok(cfg->rx_loss))
            return BRISK_ERR_RANGE;
        f->cfg = *cfg;
    }
    brisk_rand_seed(&f->tx, brisk_mix64(f->cfg.seed ^ 0x7478u)); /* "tx" */
    brisk_rand_seed(&f->rx, brisk_mix64(f->cfg.seed ^ 0x7278u)); /* "rx" */
    return BRISK_OK;
}

static int drop(struct brisk_rand *r, double p, uint64_t *seen, uint64_t *dropped)
{
    (*seen)++;
    if (p <= 0.0 || !brisk_rand_chance(r, p))
        return 0;
    (*dropped)++;
    return 1;
}

int brisk_fault_drop_tx(struct brisk_fault *f)
{
    return drop(&f->tx, f->cfg.tx_loss, &f->tx_seen, &f->tx_dropped);
}

int brisk_fault_drop_rx(struct brisk_fault *f)
{
    return drop(&f->rx, f->cfg.rx_loss, &f->rx_seen, &f->rx_dropped);
}
