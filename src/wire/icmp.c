/*
 * icmp.c — ICMP message parse and emit (RFC 792; RFC 1122 §3.2.2; RFC 1191 §4 for the next-hop MTU).
 *
 * Every ICMP message starts with type, code, checksum and a 4-byte field whose meaning depends on the type:
 * identifier and sequence number for echo / echo reply, the next-hop MTU in its low 16 bits for
 * "fragmentation needed" (dest unreachable code 4), unused otherwise. The checksum covers the whole message
 * (RFC 792), so brisk_icmp_parse verifies it over the full IP payload. The rest of the message is returned as
 * a payload slice: echo data to reflect, or the quoted datagram of an error, which brisk_ipv4_parse_quoted
 * reads.
 *
 * brisk_icmp_emit moves the payload first and writes the header after, so an echo reply can be built in
 * place over the request (RFC 1122 §3.2.2.6: the reply returns the request's data unchanged) and an error can
 * be built with the quoted datagram already sitting after the header.
 */
#include "wire/icmp.h"

#include <string.h>

#include "wire/csum.h"
#include "wire/wire.h"

/* Which types carry which meaning in bytes 4..7. */
static int is_echo(uint8_t type)
{
    return type == BRISK_ICMP_ECHO || type == BRISK_ICMP_ECHO_REPLY;
}

static int has_mtu(uint8_t type, uint8_t code)
{
    return type == BRISK_ICMP_DEST_UNREACH && code == BRISK_ICMP_UNREACH_FRAG_NEEDED;
}

int brisk_icmp_parse(const uint8_t *b, size_t len, struct brisk_icmp_repr *r)
{
    if (len < BRISK_ICMP_HLEN)
        return BRISK_WIRE_TRUNCATED;
    if (brisk_csum_buf(b, len) != 0)
        return BRISK_WIRE_BAD_CSUM;
    r->type = b[0];
    r->code = b[1];
    r->id = is_echo(r->type) ? brisk_get16(b + 4) : 0;
    r->seq = is_echo(r->type) ? brisk_get16(b + 6) : 0;
    r->next_hop_mtu = has_mtu(r->type, r->code) ? brisk_get16(b + 6) : 0;
    r->payload = b + BRISK_ICMP_HLEN;
    r->payload_len = len - BRISK_ICMP_HLEN;
    return BRISK_ICMP_HLEN;
}

size_t brisk_icmp_emit(uint8_t *b, const struct brisk_icmp_repr *r)
{
    if (r->payload_len > 0 && r->payload != b + BRISK_ICMP_HLEN)
        memmove(b + BRISK_ICMP_HLEN, r->payload, r->payload_len);
    b[0] = r->type;
    b[1] = r->code;
    brisk_put16(b + 2, 0);
    if (is_echo(r->type)) {
        brisk_put16(b + 4, r->id);
        brisk_put16(b + 6, r->seq);
    } else {
        brisk_put16(b + 4, 0);
        brisk_put16(b + 6, has_mtu(r->type, r->code) ? r->next_hop_mtu : 0);
    }
    size_t len = BRISK_ICMP_HLEN + r->payload_len;
    brisk_put16(b + 2, brisk_csum_buf(b, len));
    return len;
}
