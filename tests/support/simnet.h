/*
 * simnet.h — a two-host simulated network for tests: hosts a (10.0.0.1) and b (10.0.0.2) on one link.
 */
#ifndef BRISK_SIMNET_H
#define BRISK_SIMNET_H

#include "brisk/sim.h"

#define SIMNET_A_IP 0x0a000001u
#define SIMNET_B_IP 0x0a000002u

struct simnet {
    brisk_sim_world *w;
    brisk_sim_host *a, *b;
    brisk_sim_port *pa, *pb;
    brisk_sim_link *link;
};

/* Builds the world with settings `s` for both hosts (NULL = defaults), NICs with default config except
 * `caps`, and a symmetric link of `rate` and one-way `delay`; `lc` (may be NULL) overrides the link. */
void simnet_init(struct simnet *n, uint64_t seed, const struct brisk_settings *s, uint32_t caps,
                 uint64_t rate, uint64_t delay, const struct brisk_sim_link_config *lc);
void simnet_free(struct simnet *n);

#endif
