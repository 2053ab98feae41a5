/*
 * fault.h (internal) — seeded frame loss wrapped around a device's transmit and receive paths (fault.c).
 */
#ifndef BRISK_DRIVERS_FAULT_H
#define BRISK_DRIVERS_FAULT_H

#include "brisk/tap.h"
#include "core/rand.h"

struct brisk_fault {
    struct brisk_fault_config cfg;
    struct brisk_rand tx, rx; /* one stream per direction: TX decisions do not depend on RX traffic */
    uint64_t tx_seen, tx_dropped, rx_seen, rx_dropped;
};

/* Validates and installs `cfg` (NULL = no loss). Returns BRISK_OK or BRISK_ERR_RANGE (a probability outside
 * [0, 1] or NaN); `f` is then unusable. */
int brisk_fault_init(struct brisk_fault *f, const struct brisk_fault_config *cfg);

/* Nonzero when the next transmitted (received) frame is to be dropped. Consumes one draw of that direction's
 * stream only when its loss probability is nonzero, so a loss-free direction costs nothing. */
int brisk_fault_drop_tx(struct brisk_fault *f);
int brisk_fault_drop_rx(struct brisk_fault *f);

#endif
