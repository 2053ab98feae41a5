/*
 * fuzz_tcp.c — the TCP header and option parser (src/wire/tcp.c: RFC 9293 §3.1, RFC 7323, RFC 2018) on
 * arbitrary bytes, checksum verified and not (so the options are reached). What it accepts lies inside the
 * buffer; the option emitter's length agrees with what it writes; and re-emitting the repr parses back to
 * the same header and options (SACK blocks cut to what fits, as brisk_tcp_sack_fit says).
 */
#include <string.h>

#include "fuzz/harness.h"
#include "wire/tcp.h"
#include "wire/wire.h"

#define SRC 0x0a000002u
#define DST 0x0a000001u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brisk_tcp_repr r;
    int checked = brisk_tcp_parse(data, size, SRC, DST, 1, &r);
    int rc = brisk_tcp_parse(data, size, SRC, DST, 0, &r);
    if (checked >= 0 && checked != rc)
        fh_fail("tcp: the checksum changed the parse (%d vs %d)", checked, rc);
    if (rc < 0)
        return 0;
    if (rc != r.hdr_len || rc < BRISK_TCP_HLEN || rc > BRISK_TCP_HLEN_MAX || (size_t)rc > size)
        fh_fail("tcp: header length %d of %zu bytes", rc, size);
    if (r.payload != data + rc || r.payload_len != size - (size_t)rc)
        fh_fail("tcp: payload outside the segment");
    if (r.opts.nsack > BRISK_TCP_MAX_SACK)
        fh_fail("tcp: %u SACK blocks", r.opts.nsack);

    struct brisk_tcp_repr e = r;
    unsigned fit = brisk_tcp_sack_fit(&e.opts);
    if (fit > e.opts.nsack)
        fh_fail("tcp: sack_fit %u > nsack %u", fit, e.opts.nsack);
    e.opts.nsack = (uint8_t)fit;
    size_t olen = brisk_tcp_opts_len(&e.opts);
    if (olen > BRISK_TCP_OPTS_MAX || olen % 4)
        fh_fail("tcp: options length %zu", olen);
    uint8_t out[BRISK_TCP_HLEN_MAX + 4];
    memset(out, 0xee, sizeof(out));
    size_t hl = brisk_tcp_emit(out, &e);
    if (hl != BRISK_TCP_HLEN + olen)
        fh_fail("tcp: emit wrote %zu bytes, opts_len said %zu", hl, BRISK_TCP_HLEN + olen);
    struct brisk_tcp_repr b;
    if (brisk_tcp_parse(out, hl, SRC, DST, 0, &b) != (int)hl)
        fh_fail("tcp: an emitted header does not parse");
    const struct brisk_tcp_opts *x = &e.opts, *y = &b.opts;
    if (b.sport != r.sport || b.dport != r.dport || b.seq != r.seq || b.ack != r.ack || b.flags != r.flags ||
        b.window != r.window || b.urg != r.urg)
        fh_fail("tcp: header fields changed through emit");
    if (x->mss_ok != y->mss_ok || (x->mss_ok && x->mss != y->mss) || x->wscale_ok != y->wscale_ok ||
        (x->wscale_ok && x->wscale != y->wscale) || x->sack_perm != y->sack_perm || x->ts_ok != y->ts_ok ||
        (x->ts_ok && (x->ts_val != y->ts_val || x->ts_ecr != y->ts_ecr)) || x->nsack != y->nsack)
        fh_fail("tcp: options changed through emit");
    for (unsigned i = 0; i < x->nsack; i++)
        if (x->sack[i].start != y->sack[i].start || x->sack[i].end != y->sack[i].end)
            fh_fail("tcp: SACK block %u changed through emit", i);
    return 0;
}
