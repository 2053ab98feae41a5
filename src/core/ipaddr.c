/*
 * ipaddr.c — addresses as text and as values (declared in brisk.h), for the tools and for every program that
 * links libbrisk (they need nothing but libc).
 *
 * IPv4: brisk_ip_parse and brisk_ip_format, dotted quad. Parsing is strict: exactly four decimal fields
 * 0-255, no signs, no spaces, at most three digits each (so "010.1.1.1" is ten, never octal), nothing after
 * the last field.
 *
 * struct brisk_addr, either family: brisk_addr_parse takes IPv4 as above or IPv6 text as RFC 4291 §2.2
 * writes it — eight 16-bit groups of one to four hex digits separated by colons, at most one "::" standing
 * for one or more zero groups, and optionally a dotted quad for the last 32 bits. No zone index ("%eth0")
 * and no brackets: they belong to a URL or a socket address, not to the address. brisk_addr_format writes
 * RFC 5952 §4's canonical text, the one form every tool prints and tests compare: lower-case hex without
 * leading zeros, "::" for the longest run of two or more zero groups (the first when two runs tie; a single
 * zero group stays "0"), and the IPv4-mapped prefix ::ffff:0:0/96 with its last 32 bits dotted (§5).
 */
#include <stdio.h>
#include <string.h>

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

struct brisk_addr brisk_addr_v4(uint32_t v4)
{
    struct brisk_addr a;
    memset(&a, 0, sizeof(a));
    a.family = BRISK_AF_INET;
    a.u.v4 = v4;
    return a;
}

int brisk_addr_equal(const struct brisk_addr *a, const struct brisk_addr *b)
{
    if (!a || !b || a->family != b->family)
        return 0;
    switch (a->family) {
    case BRISK_AF_INET:
        return a->u.v4 == b->u.v4;
    case BRISK_AF_INET6:
        return memcmp(a->u.v6, b->u.v6, 16) == 0;
    default:
        return a->family == BRISK_AF_UNSPEC;
    }
}

int brisk_addr_is_any(const struct brisk_addr *a)
{
    static const uint8_t zero[16];
    if (!a || a->family == BRISK_AF_UNSPEC)
        return 1;
    if (a->family == BRISK_AF_INET)
        return a->u.v4 == 0;
    return a->family == BRISK_AF_INET6 && memcmp(a->u.v6, zero, 16) == 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* IPv6 text into 16 bytes (RFC 4291 §2.2). Groups before a "::" fill from the front, groups after it are
 * gathered and moved to the back; the "::" stands for at least one zero group (RFC 5952 §4.2.2 says write it
 * only for two or more, but §2.2 accepts one, and so does every parser). */
static int parse_v6(const char *s, uint8_t out[16])
{
    uint8_t b[16];
    int n = 0;       /* bytes written into b */
    int gap = -1;    /* where "::" was, in bytes, or -1 */
    if (s[0] == ':') {
        if (s[1] != ':')
            return BRISK_ERR_INVAL; /* a lone leading colon */
        gap = 0;
        s += 2;
        if (!*s)
            goto done; /* "::" */
    }
    for (;;) {
        /* A group, or (where two groups are left and the text has a dot ahead) a dotted quad. */
        const char *dot = strchr(s, '.');
        if (dot && !strchr(s, ':')) {
            uint32_t v4;
            if (n > 12 || brisk_ip_parse(s, &v4) != BRISK_OK)
                return BRISK_ERR_INVAL;
            b[n++] = (uint8_t)(v4 >> 24);
            b[n++] = (uint8_t)(v4 >> 16);
            b[n++] = (uint8_t)(v4 >> 8);
            b[n++] = (uint8_t)v4;
            break;
        }
        unsigned v = 0;
        int digits = 0, h;
        while ((h = hexval(*s)) >= 0) {
            if (++digits > 4)
                return BRISK_ERR_INVAL;
            v = v << 4 | (unsigned)h;
            s++;
        }
        if (digits == 0 || n > 14)
            return BRISK_ERR_INVAL;
        b[n++] = (uint8_t)(v >> 8);
        b[n++] = (uint8_t)v;
        if (!*s)
            break;
        if (*s++ != ':')
            return BRISK_ERR_INVAL;
        if (*s == ':') {
            if (gap >= 0)
                return BRISK_ERR_INVAL; /* a second "::" */
            gap = n;
            s++;
            if (!*s)
                break; /* a trailing "::" */
        } else if (!*s) {
            return BRISK_ERR_INVAL; /* a trailing single colon */
        }
    }
done:
    if (gap < 0 ? n != 16 : n > 14)
        return BRISK_ERR_INVAL; /* eight groups without "::", at most seven with it */
    memset(out, 0, 16);
    if (gap < 0) {
        memcpy(out, b, 16);
    } else {
        memcpy(out, b, (size_t)gap);
        memcpy(out + 16 - (n - gap), b + gap, (size_t)(n - gap));
    }
    return BRISK_OK;
}

int brisk_addr_parse(const char *s, struct brisk_addr *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    struct brisk_addr a;
    memset(&a, 0, sizeof(a));
    if (strchr(s, ':')) {
        if (parse_v6(s, a.u.v6) != BRISK_OK)
            return BRISK_ERR_INVAL;
        a.family = BRISK_AF_INET6;
    } else {
        if (brisk_ip_parse(s, &a.u.v4) != BRISK_OK)
            return BRISK_ERR_INVAL;
        a.family = BRISK_AF_INET;
    }
    *out = a;
    return BRISK_OK;
}

static void format_v6(const uint8_t b[16], char *buf)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(b, mapped, 12) == 0) {
        snprintf(buf, BRISK_ADDR_STRLEN, "::ffff:%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
        return;
    }
    unsigned g[8];
    for (int i = 0; i < 8; i++)
        g[i] = (unsigned)b[2 * i] << 8 | b[2 * i + 1];
    /* The longest run of zero groups, two or more long; the first of equal runs (RFC 5952 §4.2.3). */
    int best = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        if (g[i]) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && !g[j])
            j++;
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j;
    }
    char *p = buf;
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            *p++ = ':';
            if (i == 0)
                *p++ = ':';
            i += best_len - 1;
            continue;
        }
        p += sprintf(p, "%x", g[i]);
        if (i < 7)
            *p++ = ':';
    }
    *p = '\0';
}

char *brisk_addr_format(const struct brisk_addr *a, char *buf)
{
    if (!a || a->family == BRISK_AF_UNSPEC)
        snprintf(buf, BRISK_ADDR_STRLEN, "-");
    else if (a->family == BRISK_AF_INET)
        brisk_ip_format(a->u.v4, buf);
    else if (a->family == BRISK_AF_INET6)
        format_v6(a->u.v6, buf);
    else
        snprintf(buf, BRISK_ADDR_STRLEN, "?");
    return buf;
}
