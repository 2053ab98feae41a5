#include "support/simnet.h"

#include <stdlib.h>
#include <string.h>

static brisk_sim_port *nic(brisk_sim_host *h, uint8_t last, uint32_t ip, uint32_t caps)
{
    struct brisk_sim_nic_config c;
    brisk_sim_nic_config_default(&c);
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, last};
    memcpy(c.dev.mac, mac, 6);
    c.dev.ip = ip;
    c.dev.prefix_len = 24;
    c.dev.caps = caps;
    return brisk_sim_nic_add(h, &c);
}

void simnet_init(struct simnet *n, uint64_t seed, const struct brisk_settings *s, uint32_t caps, uint64_t rate,
                 uint64_t delay, const struct brisk_sim_link_config *lc)
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
    n->pa = nic(n->a, 1, SIMNET_A_IP, caps);
    n->pb = nic(n->b, 2, SIMNET_B_IP, caps);
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
