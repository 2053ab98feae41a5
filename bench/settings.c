/*
 * settings.c — brisk-bench's `--set name=value`: the same settings by name every brisk tool takes
 * (brisk_settings_set, brisk.h), applied to both simulated hosts of the benchmarks that run stacks (bulk, rr,
 * conns, sim) after whatever the benchmark itself sets, so a run can be repeated with one mechanism changed
 * (`--set gro=0`, `--set tcp_limit_output_bytes=256K`). The JSON output lists them, so a figure says what it
 * was measured with.
 */
#include "bench.h"

#include <string.h>

#include "brisk/brisk.h"
#include "brisk/netdev.h"
#include "brisk/sim.h"
#include "common/json.h"

int bench_settings(struct brisk_settings *s, const char *const *sets)
{
    for (; sets && *sets; sets++) {
        int rc = brisk_settings_set(s, *sets);
        if (rc != BRISK_OK)
            return rc;
    }
    return BRISK_OK;
}

void bench_json_sets(struct json *j, const char *const *sets)
{
    if (!sets || !*sets)
        return;
    json_array_begin(j, "set");
    for (; *sets; sets++)
        json_str(j, NULL, *sets);
    json_array_end(j);
}

int bench_family(int v6, brisk_sim_port *pa, brisk_sim_port *pb, struct brisk_addr *server)
{
    memset(server, 0, sizeof(*server));
    if (!v6)
        return 0;
    struct brisk_addr a = {.family = BRISK_AF_INET6, .u.v6 = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
    *server = a;
    server->u.v6[15] = 2;
    return brisk_netdev_add_addr(brisk_sim_port_netdev(pa), &a, 64) != BRISK_OK ||
           brisk_netdev_add_addr(brisk_sim_port_netdev(pb), server, 64) != BRISK_OK;
}
