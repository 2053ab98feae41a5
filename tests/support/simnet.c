#include "support/simnet.h"

#include <stdlib.h>
#include <string.h>

void simnet_init(struct simnet *n, uint64_t seed, const struct brisk_settings *s, uint32_t caps,
                 uint64_t rate, uint64_t delay, const struct brisk_sim_link_config *lc)
{
    memset(n, 0, sizeof(*n));
    n->w = brisk_sim_world_new(seed);
    struct brisk_settings st;
    if (s)
        st = *s;
    else
        brisk_settings_default(&st);
    st.seed = 0;
    n->a = brisk_sim_host_add(n->w, "a", &st);
    n->b = brisk_sim_host_add(n->w, "b", &st);
    n->pa = brisk_sim_nic_add_ip(n->a, SIMNET_A_IP, 24, caps);
    n->pb = brisk_sim_nic_add_ip(n->b, SIMNET_B_IP, 24, caps);
    struct brisk_sim_link_config c;
    if (lc)
        c = *lc;
    else
        brisk_sim_link_config_symmetric(&c, rate, delay);
    n->link = brisk_sim_link_connect(n->w, n->pa, n->pb, &c);
    if (!n->w || !n->a || !n->b || !n->pa || !n->pb || !n->link)
        abort();
}

void simnet_free(struct simnet *n)
{
    brisk_sim_world_free(n->w);
    memset(n, 0, sizeof(*n));
}
