/*
 * ipaddr.c — brisk_ip_parse and brisk_ip_format (declared in brisk.h): dotted-quad IPv4 text, for the tools
 * and for every program that links libbrisk (they need nothing but libc). Parsing is strict: exactly four decimal fields 0-255, no signs, no spaces, at most three digits each (so
 * "010.1.1.1" is ten, never octal), nothing after the last field.
 */
#include <stdio.h>

#include "brisk/brisk.h"

int brisk_ip_parse(const char *s, uint32_t *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    uint32_t addr = 0;
    for (int field = 0; field < 4; field++) {
        if (field > 0 && *s++ != '.')
            return BRISK_ERR_INVAL;
        unsigned v = 0, digits = 0;
        while (*s >= '0' && *s <= '9') {
            if (++digits > 3)
                return BRISK_ERR_INVAL;
            v = v * 10 + (unsigned)(*s++ - '0');
        }
        if (digits == 0 || v > 255)
            return BRISK_ERR_INVAL;
        addr = addr << 8 | v;
    }
    if (*s)
        return BRISK_ERR_INVAL;
    *out = addr;
    return BRISK_OK;
}

char *brisk_ip_format(uint32_t addr, char *buf)
{
    snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 255u, (addr >> 8) & 255u, addr & 255u);
    return buf;
}
