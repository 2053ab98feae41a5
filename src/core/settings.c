/*
 * settings.c — brisk_settings: defaults, setting by name, description for tools.
 *
 * One table lists every setting: its name (a Linux sysctl's where one exists), the kind of value (which
 * decides the syntax accepted: sizes "64K", times "200ms", rates "1G", booleans "on"), the struct field, the
 * default and the bounds. brisk_settings_default() and brisk_settings_set() both read it, so a setting added to
 * the table is at once settable from every tool's `--set name=value` and listed by them.
 */
#include <stddef.h>
#include <string.h>

#include "brisk/brisk.h"

#define MS BRISK_NSEC_PER_MSEC
#define SEC BRISK_NSEC_PER_SEC

/* X(name, kind, field, field type, default, min, max, help) */
#define BRISK_SETTINGS(X)                                                                                     \
    X(seed, UINT, seed, uint64_t, 1, 0, UINT64_MAX, "seed for the stack's PRNG and keyed hashes")            \
    X(ip_default_ttl, UINT, ip_default_ttl, uint32_t, 64, 1, 255, "TTL of IPv4 datagrams the stack sends")   \
    X(arp_reachable, TIME, arp_reachable_ns, uint64_t, 30 * SEC, 1 * MS, 86400 * SEC,                        \
      "time a resolved neighbour is trusted before it is re-probed")                                        \
    X(arp_retrans, TIME, arp_retrans_ns, uint64_t, 1 * SEC, 1 * MS, 3600 * SEC,                              \
      "interval between ARP requests while resolving")                                                       \
    X(arp_retries, UINT, arp_retries, uint32_t, 3, 1, 100, "ARP requests before resolution fails")           \
    X(arp_queue_len, UINT, arp_queue_len, uint32_t, 16, 0, 65536,                                            \
      "packets held per unresolved neighbour (excess dropped)")                                             \
    X(arp_cache_size, UINT, arp_cache_size, uint32_t, 256, 4, 1u << 20, "neighbour cache entries")           \
    X(icmp_ratelimit, TIME, icmp_ratelimit_ns, uint64_t, 1 * MS, 0, 60 * SEC,                                \
      "token interval of the ICMP error rate limit (0 = unlimited)")                                         \
    X(icmp_ratelimit_burst, UINT, icmp_ratelimit_burst, uint32_t, 50, 1, 1u << 20,                           \
      "ICMP errors that may be sent back to back")                                                           \
    X(pkt_pool_bytes, SIZE, pkt_pool_bytes, uint64_t, 64ull << 20, 1ull << 20, 1ull << 40,                   \
      "bound on packet-buffer memory per stack")

struct setting {
    struct brisk_setting_desc desc;
    size_t offset;
    size_t width; /* 4 or 8 bytes */
    uint64_t dflt, min, max;
};

static const struct setting table[] = {
#define ROW(name, kind, field, type, dflt, min, max, help)                                                    \
    {{#name, BRISK_VAL_##kind, help}, offsetof(struct brisk_settings, field), sizeof(type), (dflt), (min), (max)},
    BRISK_SETTINGS(ROW)
#undef ROW
};

#define NSETTINGS (sizeof(table) / sizeof(table[0]))

static void store(struct brisk_settings *s, const struct setting *d, uint64_t v)
{
    uint8_t *p = (uint8_t *)s + d->offset;
    if (d->width == sizeof(uint32_t)) {
        uint32_t v32 = (uint32_t)v;
        memcpy(p, &v32, sizeof(v32));
    } else {
        memcpy(p, &v, sizeof(v));
    }
}

static uint64_t load(const struct brisk_settings *s, const struct setting *d)
{
    const uint8_t *p = (const uint8_t *)s + d->offset;
    if (d->width == sizeof(uint32_t)) {
        uint32_t v32;
        memcpy(&v32, p, sizeof(v32));
        return v32;
    }
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void brisk_settings_default(struct brisk_settings *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < NSETTINGS; i++)
        store(s, &table[i], table[i].dflt);
}

static int parse_value(enum brisk_value_kind kind, const char *value, uint64_t *out)
{
    switch (kind) {
    case BRISK_VAL_UINT:
        return brisk_parse_uint(value, out);
    case BRISK_VAL_SIZE:
        return brisk_parse_size(value, out);
    case BRISK_VAL_TIME:
        return brisk_parse_time(value, out);
    case BRISK_VAL_RATE:
        return brisk_parse_rate(value, out);
    case BRISK_VAL_BOOL: {
        int b;
        int rc = brisk_parse_bool(value, &b);
        if (rc == BRISK_OK)
            *out = (uint64_t)b;
        return rc;
    }
    }
    return BRISK_ERR_INVAL;
}

int brisk_settings_set_kv(struct brisk_settings *s, const char *name, const char *value)
{
    if (!s || !name || !value)
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < NSETTINGS; i++) {
        const struct setting *d = &table[i];
        if (strcmp(d->desc.name, name) != 0)
            continue;
        uint64_t v;
        int rc = parse_value(d->desc.kind, value, &v);
        if (rc != BRISK_OK)
            return rc;
        if (v < d->min || v > d->max)
            return BRISK_ERR_RANGE;
        store(s, d, v);
        return BRISK_OK;
    }
    return BRISK_ERR_NOENT;
}

int brisk_settings_set(struct brisk_settings *s, const char *assignment)
{
    if (!s || !assignment)
        return BRISK_ERR_INVAL;
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return BRISK_ERR_INVAL;
    char name[64];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof(name))
        return BRISK_ERR_NOENT;
    memcpy(name, assignment, n);
    name[n] = '\0';
    return brisk_settings_set_kv(s, name, eq + 1);
}

size_t brisk_settings_count(void)
{
    return NSETTINGS;
}

const struct brisk_setting_desc *brisk_settings_desc(size_t i)
{
    return i < NSETTINGS ? &table[i].desc : NULL;
}

uint64_t brisk_settings_value(const struct brisk_settings *s, size_t i)
{
    return i < NSETTINGS ? load(s, &table[i]) : 0;
}

/* Used by brisk_stack_new: every field within its bounds. */
int brisk_settings_check(const struct brisk_settings *s);
int brisk_settings_check(const struct brisk_settings *s)
{
    for (size_t i = 0; i < NSETTINGS; i++) {
        uint64_t v = load(s, &table[i]);
        if (v < table[i].min || v > table[i].max)
            return BRISK_ERR_RANGE;
    }
    return BRISK_OK;
}
