/*
 * fuzz_icmp6.c — the ICMPv6 and Neighbour Discovery parser (src/wire/icmp6.c, RFC 4443, RFC 4861) on
 * arbitrary bytes, ND options included. Input: [flags u8][source address 16][destination address 16]
 * [message]; flags bit 0 repairs the checksum first, so that mutations reach the type-specific checks and
 * the options instead of dying at the checksum. What parse accepts lies inside the message (the payload,
 * the redirected header), the options of an accepted ND message walk to their end without a fault and
 * hold as many prefixes as parse counted, and emitting the repr parses back to the same repr.
 *
 * Seeds (corpus/icmp6/): the vectors of tests/wire/test_icmp6.c — the kernel's echo request and port
 * unreachable, NS, NA, RS, RA (link-layer address, MTU and prefix options), redirect, packet too big —
 * and edge cases: an NS from :: (DAD), an option of length 0, an RA from a global address.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "wire/csum.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/wire.h"

#define FIX_CSUM 0x01

static int same(const struct brisk_icmp6_repr *a, const struct brisk_icmp6_repr *b)
{
    const struct brisk_nd_opts *x = &a->opts, *y = &b->opts;
    return a->type == b->type && a->code == b->code && a->id == b->id && a->seq == b->seq &&
           a->mtu == b->mtu && a->pointer == b->pointer && a->nd == b->nd &&
           memcmp(a->target, b->target, 16) == 0 && memcmp(a->dest, b->dest, 16) == 0 &&
           a->na_router == b->na_router && a->na_solicited == b->na_solicited &&
           a->na_override == b->na_override && a->ra_hop_limit == b->ra_hop_limit &&
           a->ra_managed == b->ra_managed && a->ra_other == b->ra_other && a->ra_flags == b->ra_flags &&
           a->ra_lifetime == b->ra_lifetime && a->ra_reachable == b->ra_reachable &&
           a->ra_retrans == b->ra_retrans && a->payload_len == b->payload_len &&
           memcmp(a->payload, b->payload, a->payload_len) == 0 && x->have_sll == y->have_sll &&
           x->have_tll == y->have_tll && x->have_mtu == y->have_mtu && x->have_redir == y->have_redir &&
           memcmp(x->sll, y->sll, 6) == 0 && memcmp(x->tll, y->tll, 6) == 0 && x->mtu == y->mtu &&
           x->nprefix == y->nprefix && x->bad == y->bad && x->redir_len == y->redir_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 33)
        return 0;
    unsigned flags = data[0];
    const uint8_t *src = data + 1, *dst = data + 17;
    size_t len = size - 33;
    uint8_t *m = malloc(len ? len : 1); /* exactly sized: ASan sees any read past the message */
    if (!m)
        abort();
    memcpy(m, data + 33, len);
    if ((flags & FIX_CSUM) && len >= 4) {
        brisk_put16(m + 2, 0);
        uint32_t s = brisk_csum_pseudo6(src, dst, BRISK_IP_PROTO_ICMPV6, (uint32_t)len);
        brisk_put16(m + 2, brisk_csum_fold(brisk_csum_add(s, m, len)));
    }

    struct brisk_icmp6_repr r;
    int rc = brisk_icmp6_parse(m, len, src, dst, &r);
    if (rc < 0) {
        free(m);
        return 0;
    }
    if ((size_t)rc != brisk_icmp6_fixed_len(r.type) || (size_t)rc > len || r.payload != m + rc ||
        r.payload_len != len - (size_t)rc)
        fh_fail("icmp6: fixed part %d, payload %zu of %zu", rc, r.payload_len, len);
    if (r.nd && (r.type < BRISK_ICMP6_ND_RS || r.type > BRISK_ICMP6_ND_REDIRECT || r.code != 0))
        fh_fail("icmp6: type %u code %u taken as ND", r.type, r.code);
    if (r.opts.have_redir &&
        (r.opts.redir < r.payload || r.opts.redir + r.opts.redir_len > r.payload + r.payload_len))
        fh_fail("icmp6: redirected header outside the options");

    /* The options, walked by the iterator (on any message: it must stay inside whatever it is given). */
    size_t pos = 0;
    struct brisk_nd_opt o;
    int orc;
    unsigned prefixes = 0;
    while ((orc = brisk_nd_opt_next(r.payload, r.payload_len, &pos, &o)) > 0) {
        if (o.len == 0 || o.data < r.payload || o.data + o.len > r.payload + r.payload_len ||
            pos > r.payload_len)
            fh_fail("icmp6: option of %zu bytes outside the options", o.len);
        struct brisk_nd_prefix p;
        if (brisk_nd_opt_prefix(&o, &p) == 0) {
            prefixes++;
            if (p.prefix_len > 128)
                fh_fail("icmp6: prefix length %u", p.prefix_len);
        }
    }
    if (r.nd && (orc != 0 || pos != r.payload_len || (prefixes < 255 && prefixes != r.opts.nprefix)))
        fh_fail("icmp6: an accepted ND message's options: rc %d at %zu of %zu, %u prefixes vs %u", orc, pos,
                r.payload_len, prefixes, r.opts.nprefix);

    uint8_t *out = malloc(len ? len : 1);
    if (!out)
        abort();
    if (brisk_icmp6_emit(out, &r, src, dst) != len)
        fh_fail("icmp6: emit length");
    struct brisk_icmp6_repr b;
    if (brisk_icmp6_parse(out, len, src, dst, &b) != rc)
        fh_fail("icmp6: an emitted message does not parse");
    if (!same(&r, &b))
        fh_fail("icmp6: parse(emit(parse(x))) differs from parse(x)");
    free(out);
    free(m);
    return 0;
}
