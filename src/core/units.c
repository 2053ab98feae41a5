/*
 * units.c — the value syntax every tool and brisk_settings_set share, and brisk_strerror.
 *
 * One grammar for numbers: ASCII digits, optionally '.' and more digits ("1.5"), immediately followed by a
 * unit suffix that depends on the kind of value:
 *   size   bytes, powers of 1024: "", "B", or K M G T P E (either case) alone or followed by "B" or "iB"
 *   rate   bit/s, powers of 1000: optional k M G T (either case), then optional "bit", "bps" or "bit/s"
 *   time   ns: "ns", "us", "µs" (micro sign or Greek mu, UTF-8), "ms", "s"; a value of zero needs no unit,
 *          anything else does ("2m" is rejected: minutes or milli?)
 *   prob   a fraction in [0, 1], or a percentage with "%"
 *   uint   decimal, or hexadecimal after "0x"/"0X"; no fraction, no suffix
 *   bool   0/1, on/off, true/false, yes/no, in any letter case
 * Nothing else is accepted: no spaces anywhere, no sign, no exponent, no empty string, no junk after the
 * suffix. A malformed string is BRISK_ERR_INVAL; a well-formed one whose value does not fit (past
 * UINT64_MAX, a probability above 1) is BRISK_ERR_RANGE; a decimal that does not give a whole number of the
 * base unit ("1.3" bytes, "1.5ns") is BRISK_ERR_INVAL. On any error *out is left untouched.
 *
 * Why no strtod / strtoull: they honour the locale (a ',' decimal separator), accept spaces and signs, and a
 * binary double cannot hold 1.5 ms as exactly 1500000 ns after scaling in every case. Instead parse_decimal
 * reads the digits into integers: the integer part, and the fraction as frac / 10^f (up to 19 significant
 * decimals; leading zeros are only counted). to_integer then multiplies by the unit exactly: with
 * g = gcd(frac, 10^f), the fraction contributes (frac / g) * (unit / (10^f / g)), a whole number exactly when
 * 10^f / g divides the unit, so "1.5ms" is 1500000 ns and "1.3" bytes is rejected. (For integer kinds a
 * fraction may have at most 19 decimal places.) Probabilities become a double only at the end, with one
 * correctly rounded division whenever the digits allow it ("1%" is exactly the double 0.01).
 *
 * Functions: brisk_parse_size, brisk_parse_rate, brisk_parse_time, brisk_parse_prob, brisk_parse_uint,
 * brisk_parse_bool, brisk_strerror.
 */
#include "brisk/brisk.h"

#include <stddef.h>
#include <stdint.h>

/* A parsed decimal: ip + frac / 10^fdigits, with trailing zeros of the fraction removed. */
struct decimal {
    uint64_t ip;      /* integer part */
    uint64_t frac;    /* up to MAX_SIG significant decimals */
    unsigned fdigits; /* decimal places frac stands for: leading zeros + its significant digits */
    int overflow;     /* the integer part alone exceeds UINT64_MAX */
    int dropped;      /* non-zero decimals beyond MAX_SIG significant ones were discarded */
};

#define MAX_SIG 19 /* 10^19 < 2^64 */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static uint64_t pow10_u64(unsigned e) /* e <= 19 */
{
    uint64_t p = 1;
    while (e--)
        p *= 10;
    return p;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Appends a digit to *m unless that overflows; returns 0 on overflow. */
static int push_digit(uint64_t *m, unsigned d)
{
    if (*m > (UINT64_MAX - d) / 10)
        return 0;
    *m = *m * 10 + d;
    return 1;
}

/* Reads digits [ '.' digits ] from *pp and advances it. Returns BRISK_OK or BRISK_ERR_INVAL (no digit first,
 * or no digit after the '.'). Overflow is only recorded: the syntax is judged first. Leading zeros of the
 * fraction cost no precision ("0.000000000000000000000001" is 1e-24). */
static int parse_decimal(const char **pp, struct decimal *d)
{
    const char *p = *pp;
    d->ip = 0;
    d->frac = 0;
    d->fdigits = 0;
    d->overflow = 0;
    d->dropped = 0;
    if (!is_digit(*p))
        return BRISK_ERR_INVAL;
    for (; is_digit(*p); p++)
        if (!d->overflow && !push_digit(&d->ip, (unsigned)(*p - '0')))
            d->overflow = 1;
    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return BRISK_ERR_INVAL;
        unsigned lead = 0, sig = 0;
        for (; is_digit(*p); p++) {
            unsigned dg = (unsigned)(*p - '0');
            if (sig == 0 && dg == 0) {
                if (lead < 1000) /* beyond that the value is 0 for every purpose; keep the count bounded */
                    lead++;
            } else if (sig < MAX_SIG) {
                d->frac = d->frac * 10 + dg;
                sig++;
            } else if (dg) {
                d->dropped = 1; /* later digits are never kept: positions must not shift */
            }
        }
        while (sig && d->frac % 10 == 0) {
            d->frac /= 10;
            sig--;
        }
        d->fdigits = sig ? lead + sig : 0;
    }
    *pp = p;
    return BRISK_OK;
}

static int decimal_is_zero(const struct decimal *d)
{
    return !d->overflow && !d->ip && !d->frac && !d->dropped;
}

/* d * unit as an exact integer. A fraction that does not make a whole number of units is malformed (INVAL),
 * even when the value would also be too large. */
static int to_integer(const struct decimal *d, uint64_t unit, uint64_t *out)
{
    if (d->overflow || d->ip > UINT64_MAX / unit)
        return BRISK_ERR_RANGE;
    uint64_t v = d->ip * unit, fval = 0;
    if (d->dropped || d->fdigits > MAX_SIG)
        return BRISK_ERR_INVAL; /* more decimals than any unit here can turn into a whole number */
    if (d->frac) {
        uint64_t den = pow10_u64(d->fdigits);
        uint64_t g = gcd_u64(d->frac, den);
        uint64_t rden = den / g;
        if (unit % rden)
            return BRISK_ERR_INVAL;           /* not a whole number of the base unit */
        fval = (d->frac / g) * (unit / rden); /* frac < den, so fval < unit: no overflow */
    }
    if (v > UINT64_MAX - fval)
        return BRISK_ERR_RANGE;
    *out = v + fval;
    return BRISK_OK;
}

static int str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static char lower_ascii(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static int str_eq_nocase(const char *a, const char *b)
{
    while (*a && lower_ascii(*a) == lower_ascii(*b)) {
        a++;
        b++;
    }
    return lower_ascii(*a) == lower_ascii(*b);
}

/* Common driver: number, then a suffix that `unit_of` turns into a multiplier (0 = not a valid suffix). */
static int parse_scaled(const char *s, uint64_t *out, uint64_t (*unit_of)(const char *suffix, int zero))
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    struct decimal d;
    int rc = parse_decimal(&s, &d);
    if (rc)
        return rc;
    uint64_t unit = unit_of(s, decimal_is_zero(&d));
    if (!unit)
        return BRISK_ERR_INVAL;
    uint64_t v;
    rc = to_integer(&d, unit, &v);
    if (rc)
        return rc;
    *out = v;
    return BRISK_OK;
}

/* The power of the multiplier letter, or -1. */
static int letter_power(char c, const char *letters)
{
    for (int i = 0; letters[i]; i++)
        if (lower_ascii(c) == letters[i])
            return i + 1;
    return -1;
}

static uint64_t size_unit(const char *sfx, int zero)
{
    (void)zero;
    if (str_eq(sfx, "") || str_eq(sfx, "B"))
        return 1;
    int pw = letter_power(sfx[0], "kmgtpe");
    if (pw < 0 || !(str_eq(sfx + 1, "") || str_eq(sfx + 1, "B") || str_eq(sfx + 1, "iB")))
        return 0;
    return UINT64_C(1) << (10 * pw);
}

static uint64_t rate_unit(const char *sfx, int zero)
{
    (void)zero;
    uint64_t unit = 1;
    int pw = letter_power(sfx[0], "kmgt");
    if (pw > 0) {
        unit = pow10_u64(3 * (unsigned)pw);
        sfx++;
    }
    if (str_eq(sfx, "") || str_eq(sfx, "bit") || str_eq(sfx, "bps") || str_eq(sfx, "bit/s"))
        return unit;
    return 0;
}

static uint64_t time_unit(const char *sfx, int zero)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", BRISK_NSEC_PER_USEC},
        {"\xc2\xb5s", BRISK_NSEC_PER_USEC}, /* U+00B5 MICRO SIGN */
        {"\xce\xbcs", BRISK_NSEC_PER_USEC}, /* U+03BC GREEK SMALL LETTER MU */
        {"ms", BRISK_NSEC_PER_MSEC},
        {"s", BRISK_NSEC_PER_SEC},
    };
    if (!*sfx)
        return zero ? 1 : 0; /* zero is zero in any unit; anything else must say which */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (str_eq(sfx, units[i].name))
            return units[i].ns;
    return 0;
}

int brisk_parse_size(const char *s, uint64_t *out)
{
    return parse_scaled(s, out, size_unit);
}

int brisk_parse_rate(const char *s, uint64_t *out)
{
    return parse_scaled(s, out, rate_unit);
}

int brisk_parse_time(const char *s, uint64_t *out)
{
    return parse_scaled(s, out, time_unit);
}

/* 10^e as a double: exact up to 10^22, rounded beyond (and inf past ~10^308, which divides to 0). */
static double pow10_double(unsigned e)
{
    double p = 1.0;
    for (unsigned i = 0; i < e && i < 400; i++)
        p *= 10.0;
    return p;
}

int brisk_parse_prob(const char *s, double *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    struct decimal d;
    int rc = parse_decimal(&s, &d);
    if (rc)
        return rc;
    int pct = 0;
    if (*s == '%') {
        pct = 1;
        s++;
    }
    if (*s)
        return BRISK_ERR_INVAL;
    /* At most 1 (100%): the integer part decides, except at exactly 1 where any fraction is too much. */
    uint64_t one = pct ? 100 : 1;
    if (d.overflow || d.ip > one || (d.ip == one && (d.frac || d.dropped)))
        return BRISK_ERR_RANGE;
    double v;
    if (d.fdigits <= 16) {
        /* (ip * 10^f + frac) / 10^(f [+2]): an exact power, and one rounding while the digits fit 53 bits. */
        uint64_t num = d.ip * pow10_u64(d.fdigits) + d.frac;
        v = (double)num / pow10_double(d.fdigits + (pct ? 2u : 0u));
    } else {
        v = (double)d.ip + (double)d.frac / pow10_double(d.fdigits);
        if (pct)
            v /= 100.0;
    }
    *out = v;
    return BRISK_OK;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = lower_ascii(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int brisk_parse_uint(const char *s, uint64_t *out)
{
    if (!s || !out)
        return BRISK_ERR_INVAL;
    uint64_t v = 0;
    int overflow = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        const char *p = s + 2;
        if (hex_value(*p) < 0)
            return BRISK_ERR_INVAL;
        for (; *p; p++) {
            int h = hex_value(*p);
            if (h < 0)
                return BRISK_ERR_INVAL;
            if (v >> 60)
                overflow = 1;
            v = (v << 4) | (uint64_t)h;
        }
    } else {
        if (!is_digit(*s))
            return BRISK_ERR_INVAL;
        for (const char *p = s; *p; p++) {
            if (!is_digit(*p))
                return BRISK_ERR_INVAL;
            if (!overflow && !push_digit(&v, (unsigned)(*p - '0')))
                overflow = 1;
        }
    }
    if (overflow)
        return BRISK_ERR_RANGE;
    *out = v;
    return BRISK_OK;
}

int brisk_parse_bool(const char *s, int *out)
{
    static const struct {
        const char *word;
        int value;
    } words[] = {
        {"0", 0}, {"1", 1}, {"off", 0}, {"on", 1}, {"false", 0}, {"true", 1}, {"no", 0}, {"yes", 1},
    };
    if (!s || !out)
        return BRISK_ERR_INVAL;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (str_eq_nocase(s, words[i].word)) {
            *out = words[i].value;
            return BRISK_OK;
        }
    }
    return BRISK_ERR_INVAL;
}

const char *brisk_strerror(int err)
{
    switch (err) {
    case BRISK_OK:
        return "success";
    case BRISK_ERR_INVAL:
        return "invalid argument";
    case BRISK_ERR_NOMEM:
        return "out of memory";
    case BRISK_ERR_NOENT:
        return "no such entry";
    case BRISK_ERR_RANGE:
        return "value out of range";
    case BRISK_ERR_NOROUTE:
        return "no route to destination";
    case BRISK_ERR_AGAIN:
        return "operation would block";
    case BRISK_ERR_BUSY:
        return "device busy";
    case BRISK_ERR_NOBUFS:
        return "no packet buffers available";
    case BRISK_ERR_MSGSIZE:
        return "message too long";
    case BRISK_ERR_EXIST:
        return "already exists";
    case BRISK_ERR_UNREACH:
        return "destination unreachable";
    case BRISK_ERR_CONNREFUSED:
        return "connection refused";
    case BRISK_ERR_RESET:
        return "connection reset by peer";
    case BRISK_ERR_TIMEDOUT:
        return "connection timed out";
    case BRISK_ERR_NOTCONN:
        return "not connected";
    case BRISK_ERR_ISCONN:
        return "already connected";
    case BRISK_ERR_ADDRINUSE:
        return "address in use";
    case BRISK_ERR_PIPE:
        return "sending side closed";
    case BRISK_ERR_INPROGRESS:
        return "operation in progress";
    case BRISK_ERR_ADDRNOTAVAIL:
        return "address not available";
    case BRISK_ERR_TOOMANY:
        return "table full";
    case BRISK_ERR_NETUNREACH:
        return "network unreachable";
    case BRISK_ERR_HOSTDOWN:
        return "host is down";
    case BRISK_ERR_NONET:
        return "host not on the network";
    case BRISK_ERR_NOPROTOOPT:
        return "protocol not available";
    case BRISK_ERR_PROTO:
        return "protocol error";
    case BRISK_ERR_OPNOTSUPP:
        return "operation not supported";
    case BRISK_ERR_AFNOSUPPORT:
        return "address family not supported";
    default:
        return "unknown error";
    }
}

const char *brisk_error_name(int err)
{
    /* Indexed by -err: the codes are dense from BRISK_OK down to BRISK_ERR_AFNOSUPPORT. */
    static const char *const names[] = {
        "BRISK_OK",
        "BRISK_ERR_INVAL",
        "BRISK_ERR_NOMEM",
        "BRISK_ERR_NOENT",
        "BRISK_ERR_RANGE",
        "BRISK_ERR_NOROUTE",
        "BRISK_ERR_AGAIN",
        "BRISK_ERR_BUSY",
        "BRISK_ERR_NOBUFS",
        "BRISK_ERR_MSGSIZE",
        "BRISK_ERR_EXIST",
        "BRISK_ERR_UNREACH",
        "BRISK_ERR_TOOMANY",
        "BRISK_ERR_CONNREFUSED",
        "BRISK_ERR_RESET",
        "BRISK_ERR_TIMEDOUT",
        "BRISK_ERR_NOTCONN",
        "BRISK_ERR_ISCONN",
        "BRISK_ERR_ADDRINUSE",
        "BRISK_ERR_PIPE",
        "BRISK_ERR_INPROGRESS",
        "BRISK_ERR_ADDRNOTAVAIL",
        "BRISK_ERR_NETUNREACH",
        "BRISK_ERR_HOSTDOWN",
        "BRISK_ERR_NONET",
        "BRISK_ERR_NOPROTOOPT",
        "BRISK_ERR_PROTO",
        "BRISK_ERR_OPNOTSUPP",
        "BRISK_ERR_AFNOSUPPORT",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == 1 - BRISK_ERR_AFNOSUPPORT, "one name per code");
    if (err > 0 || err < BRISK_ERR_AFNOSUPPORT)
        return "BRISK_ERR_UNKNOWN";
    return names[-err];
}
