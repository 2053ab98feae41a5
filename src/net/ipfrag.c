/*
 * ipfrag.c — IP reassembly, one mechanism for both families: IPv4 (RFC 791 §3.2 "Reassembly", RFC 815,
 * RFC 1122 §3.3.2) and IPv6 (RFC 8200 §4.5, RFC 5722, RFC 6946, RFC 7112).
 *
 * RFC 1122 §3.3.2: a host MUST reassemble, MUST be able to take datagrams of 576 bytes and SHOULD take
 * more, MUST time a partial datagram out, and SHOULD send an ICMP Time Exceeded (code 1, "fragment
 * reassembly time exceeded") when it does — only if the first fragment (offset 0) came, since only it names
 * the transport, and not about a datagram sent to a broadcast address (§3.2.2). RFC 8200 §4.5 asks the same
 * of IPv6 (ICMPv6 Time Exceeded code 1, only when the first fragment came; icmp6.c adds RFC 4443 §2.4 (e):
 * not about a packet to a multicast group). brisk sets DF on everything it sends and never fragments IPv6,
 * but a peer behind a path that fragments (a tunnel, a sender without PMTUD, a DNS server answering over
 * UDP) must still be understood.
 *
 * A datagram being reassembled is a queue found through a keyed hash (SipHash under a key derived from the
 * stack's seed, so an attacker cannot aim fragments at one chain; no draw from the stack's generator, whose
 * stream stays as it was). Its key is family-neutral (struct fq_key): IPv4's is RFC 791's (source,
 * destination, identification, protocol); IPv6's is RFC 8200's (source, destination, the 32-bit
 * identification) plus, as Linux's, the device when the destination is link-local or multicast (the same
 * addresses on two links are two hosts). Each family has a table of its own, with its own bound, timeout
 * and counters (Linux's net.ipv4.ipfrag_* and net.ipv6.ip6frag_*). A queue holds its fragments in a list
 * ordered by offset, each a copy of the fragment's bytes: RFC 815's holes are the gaps of that list, and
 * completeness is the byte count ("meat", Linux's word) reaching the length the last fragment (MF / M clear)
 * gave, once the first one is in. The first fragment is held with its header in front of its data: IPv4's
 * header (options included), IPv6's unfragmentable part (the fixed header and the extension headers before
 * the fragment header). Fragments arrive in any order; a list is enough because a datagram has at most
 * 8,192 fragment positions and, in practice, a handful of fragments, and every insertion that is not at the
 * tail is where a sender misbehaved.
 *
 * What a fragment may do, as Linux's ip_frag_queue / ip6_frag_queue and inet_frag_queue_insert decide it
 * (every profile, both families):
 *   - the last fragment fixes the length; a later last fragment with another end, or any fragment with
 *     data past that end, drops the whole datagram; so does a fragment that ends up empty;
 *   - IPv4: a fragment with MF set whose length is not a multiple of 8 (RFC 791 forbids it) is cut down to
 *     one — Linux keeps the first part, so a sender that wrote 1,483 bytes and then went on at 1,480 still
 *     gets its datagram through; one shorter than 8 bytes is empty after the cut, and drops the datagram.
 *     IPv6 never gets here with one: the walker (wire/ipv6.c) answers it with a parameter problem, code 0
 *     at the payload length (RFC 8200 §4.5), as it answers a fragment reaching past 65,535 bytes (code 0
 *     at the fragment offset) and a first fragment without the whole header chain (code 3, RFC 7112);
 *   - overlaps (RFC 5722, which Linux applies to IPv4 too since 4.19's "ip: discard IPv4 datagrams with
 *     overlapping segments"): a fragment that lies wholly inside data already held as one *run* is a
 *     duplicate — a retransmission, dropped alone, the datagram kept (RFC 8200 §4.5 allows dropping
 *     duplicates alone); any other overlap drops the whole datagram (IpReasmOverlaps, Ip6ReasmOverlaps). A
 *     run, as in Linux, is the data built up by fragments that each continued the highest one exactly; a
 *     fragment placed below the highest starts a run of its own, so a fragment spanning two runs that touch
 *     counts as an overlap, as in Linux. IPv6 goes one step further, as RFC 5722 §4 says ("and any
 *     constituent fragments, including those not yet received"): the dropped datagram's queue stays, empty,
 *     until its timeout, and every later fragment of it is dropped silently (Linux frees the queue, so its
 *     later fragments start a new one, which then times out);
 *   - a datagram longer than the family allows — IPv4's 65,535 bytes (the "ping of death"), IPv6's payload
 *     length of 65,535 — is dropped: IPv4 as soon as a fragment reaches past it (Linux notices when the
 *     datagram completes: the same datagrams are lost, earlier here), IPv6 when the datagram completes
 *     with an unfragmentable part too long for it (Linux's ip6_frag_reasm).
 * A dropped datagram counts once in Ip(6)ReasmFails; a fragment dropped for want of memory counts too, a
 * duplicate does not (Linux's counting). Ip(6)ReasmReqds counts every fragment, Ip(6)ReasmOKs every
 * datagram made whole, Ip(6)ReasmTimeout every timeout (also in the Fails). IPv6's atomic fragments
 * (offset 0, M 0: RFC 6946) never come here: ip6_input.c delivers them at once, counted as Linux counts
 * them (one Ip6ReasmReqds, one Ip6ReasmOKs).
 *
 * Bounds. The family's time (ipfrag_time 30 s, ip6frag_time 60 s: Linux's defaults) runs from a datagram's
 * first fragment and is never extended. Its high threshold (ipfrag_high_thresh, ip6frag_high_thresh: 4 MB
 * each, Linux's) bounds the bytes its table holds: each datagram is charged its bookkeeping and each
 * fragment its allocation (header and data). Above it Linux (4.17 on) drops every fragment until timeouts
 * free memory — bugzilla 212515: 1,766 fragments block all reassembly for 30 s; the linux-* profiles keep
 * that (ipfrag_evict=0, for both families as in Linux). brisk's profile makes room by dropping the oldest
 * incomplete datagrams instead (ipfrag_evict=1, brisk's own), never the one the fragment belongs to: a flood
 * must then keep flooding, and a datagram that completes within the flood's turnover gets through. Either
 * way the bytes held never pass the bound by more than one fragment, and a threshold of 0 turns the
 * family's reassembly off (Linux's rule: every fragment dropped). Memory is taken when a fragment arrives
 * (as Linux does) and given back when its datagram completes, times out, is dropped or evicted, or the stack
 * is freed.
 *
 * The whole datagram is handed back to the family's input in one malloc'ed buffer, its header rebuilt —
 * the only family-specific step besides the key and the timeout's error: IPv4's first header with the total
 * length and fragment fields rewritten and a new checksum; IPv6's unfragmentable part with the payload
 * length set and, in place of the fragment header, the Next Header the first fragment's fragment header
 * gave (RFC 8200 §4.5). It is delivered as if it had come whole; the device's checksum verdict covered only
 * the last fragment, so the upper layer checks the datagram itself. Not done: Linux's ECN check across
 * fragments (RFC 3168 §5.3) and ipfrag_max_dist.
 */
#include "net/ipfrag.h"

#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "net/ip.h"
#include "net/ip6.h"
#include "wire/csum.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/wire.h"

#define IPFRAG_BUCKETS 1024u  /* hash chains: a power of two */
#define IPV4_MAX_LEN   65535u /* the largest datagram the total length field can give */
#define IPV6_MAX_PLEN  65535u /* the largest payload the payload length field can give (no jumbograms) */
#define ICMP_FRAGTIME  1      /* Time Exceeded code: fragment reassembly time exceeded (RFC 792, RFC 4443) */
#define QUOTE_MAX      548u   /* the first fragment's bytes quoted: 576 - 20 (IP) - 8 (ICMP) */

/* What names a datagram, for either family. Built zeroed, compared and hashed whole. */
struct fq_key {
    uint8_t src[16], dst[16]; /* IPv4: the first 4 bytes */
    uint32_t id;              /* IPv4: 16 bits */
    uint16_t iif;             /* IPv6 to a link-local or multicast destination: device index + 1; else 0 */
    uint8_t proto;            /* IPv4: the protocol (RFC 791 keys on it); IPv6: 0 */
    uint8_t zero;
};
_Static_assert(sizeof(struct fq_key) == 40, "fq_key has no padding: it is hashed and compared as bytes");

/* One fragment's payload bytes [off, end) of the datagram, the first one's header in front of them. */
struct frag {
    struct frag *next; /* by offset */
    uint32_t off, end;
    uint8_t run_start; /* begins a run: was not placed right after the highest fragment */
    uint16_t hdr_len;  /* the first fragment (off 0): its header's bytes at data[0, hdr_len); else 0 */
    uint8_t data[];
};

/* One datagram being reassembled. */
struct fq {
    struct fq *hnext;         /* hash chain */
    struct fq *older, *newer; /* age list (creation order): eviction takes the oldest */
    struct brisk_timer timer; /* the family's time after the first fragment */
    struct brisk_ipfrag *fr;  /* the family's table */
    struct fq_key key;
    uint8_t first_in, last_in; /* the fragment at offset 0 / the one with MF (M) clear has come */
    uint8_t dead;              /* IPv6, dropped for an overlap: held empty until the timeout (RFC 5722) */
    uint32_t len;              /* payload length: exact once last_in, else the largest end seen */
    uint32_t meat;             /* payload bytes held */
    uint64_t mem;              /* bytes charged: this struct and the fragments' allocations */
    struct frag *head, *tail;  /* tail: the highest fragment */
    /* What the first fragment said besides its header (first_in), for the rebuild and the timeout. */
    uint8_t bcast;      /* IPv4: to a broadcast address (no ICMP); IPv6: to a multicast MAC (RFC 4443 §2.4 (e)) */
    uint8_t nh;         /* IPv6: its fragment header's Next Header, the fragmentable part's first header */
    uint16_t nh_ptr;    /* IPv6: the Next Header field (in its header) that named the fragment header */
    brisk_netdev *dev;  /* IPv6: where it came (the Time Exceeded leaves there) */
};

struct brisk_ipfrag {
    struct brisk_net *net;
    uint8_t family;              /* 4 or 6 */
    uint32_t max_end;            /* the highest payload end a fragment may reach */
    uint32_t max_total;          /* the longest whole datagram, header included */
    const uint64_t *high_thresh; /* the family's settings, read at each use (tests set them on a live stack) */
    const uint64_t *time_ns;
    uint64_t *reqds, *oks, *fails, *timeout, *overlaps; /* the family's counters */
    struct fq *bucket[IPFRAG_BUCKETS];
    struct fq *oldest, *newest;
    uint64_t mem;
    uint32_t nqueues;
    uint8_t key[16];
};

/* One fragment as the family's entry describes it. */
struct fragment {
    struct fq_key key;
    uint32_t off, end;  /* its payload bytes [off, end) of the datagram, as its header says */
    int mf;             /* more fragments follow */
    const uint8_t *hdr; /* the header to hold if it is the first (off 0) */
    uint16_t hdr_len;
    const uint8_t *data; /* its payload bytes */
    uint8_t bcast, nh;   /* for struct fq's first-fragment fields */
    uint16_t nh_ptr;
    brisk_netdev *dev;
};

static struct brisk_ipfrag *table_new(struct brisk_net *net, uint8_t family, uint64_t salt)
{
    struct brisk_ipfrag *fr = calloc(1, sizeof(*fr));
    if (!fr)
        return NULL;
    fr->net = net;
    fr->family = family;
    struct brisk_counters *c = &net->c;
    if (family == 4) {
        fr->max_end = IPV4_MAX_LEN - BRISK_IPV4_HLEN;
        fr->max_total = IPV4_MAX_LEN;
        fr->high_thresh = &net->s.ipfrag_high_thresh;
        fr->time_ns = &net->s.ipfrag_time_ns;
        fr->reqds = &c->IpReasmReqds, fr->oks = &c->IpReasmOKs, fr->fails = &c->IpReasmFails;
        fr->timeout = &c->IpReasmTimeout, fr->overlaps = &c->IpReasmOverlaps;
    } else {
        fr->max_end = IPV6_MAX_PLEN; /* the walker refuses more (RFC 8200 §4.5) */
        fr->max_total = BRISK_IPV6_HLEN + IPV6_MAX_PLEN;
        fr->high_thresh = &net->s.ip6frag_high_thresh;
        fr->time_ns = &net->s.ip6frag_time_ns;
        fr->reqds = &c->Ip6ReasmReqds, fr->oks = &c->Ip6ReasmOKs, fr->fails = &c->Ip6ReasmFails;
        fr->timeout = &c->Ip6ReasmTimeout, fr->overlaps = &c->Ip6ReasmOverlaps;
    }
    uint64_t k0 = brisk_mix64(net->s.seed ^ salt), k1 = brisk_mix64(k0 ^ 0x6b31u);
    memcpy(fr->key, &k0, 8);
    memcpy(fr->key + 8, &k1, 8);
    return fr;
}

int brisk_ipfrag_init(struct brisk_net *net)
{
    net->ipfrag = table_new(net, 4, 0x6970667261676b30ull);
    net->ip6frag = table_new(net, 6, 0x6970366672616b30ull);
    return net->ipfrag && net->ip6frag ? BRISK_OK : BRISK_ERR_NOMEM;
}

static unsigned bucket_of(const struct brisk_ipfrag *fr, const struct fq_key *k)
{
    return (unsigned)brisk_siphash24(fr->key, k, sizeof(*k)) & (IPFRAG_BUCKETS - 1);
}

/* Unlinks and frees a datagram and its fragments, returning its charge. */
static void fq_free(struct fq *q)
{
    struct brisk_ipfrag *fr = q->fr;
    struct fq **pp = &fr->bucket[bucket_of(fr, &q->key)];
    while (*pp != q)
        pp = &(*pp)->hnext;
    *pp = q->hnext;
    if (q->older)
        q->older->newer = q->newer;
    else
        fr->oldest = q->newer;
    if (q->newer)
        q->newer->older = q->older;
    else
        fr->newest = q->older;
    brisk_timer_cancel(&fr->net->wheel, &q->timer);
    for (struct frag *f = q->head, *n; f; f = n) {
        n = f->next;
        free(f);
    }
    fr->mem -= q->mem;
    fr->nqueues--;
    free(q);
}

/* The datagram is given up: counted once (a dead one was already), freed. */
static void fq_fail(struct fq *q)
{
    if (!q->dead)
        (*q->fr->fails)++;
    fq_free(q);
}

/* IPv6's overlap (RFC 5722 §4): the datagram given up, counted, its fragments freed; the queue stays,
 * charged its bookkeeping only, to drop the fragments still to come until the timeout frees it. */
static void fq_kill(struct fq *q)
{
    (*q->fr->fails)++;
    for (struct frag *f = q->head, *n; f; f = n) {
        n = f->next;
        free(f);
    }
    q->fr->mem -= q->mem - sizeof(*q);
    q->mem = sizeof(*q);
    q->head = q->tail = NULL;
    q->first_in = q->last_in = 0;
    q->len = q->meat = 0;
    q->dead = 1;
}

static void table_free(struct brisk_ipfrag *fr)
{
    if (!fr)
        return;
    while (fr->oldest)
        fq_free(fr->oldest);
    free(fr);
}

void brisk_ipfrag_destroy(struct brisk_net *net)
{
    table_free(net->ipfrag);
    table_free(net->ip6frag);
    net->ipfrag = net->ip6frag = NULL;
}

uint64_t brisk_ipfrag_mem(const struct brisk_ipfrag *fr)
{
    return fr ? fr->mem : 0;
}

uint32_t brisk_ipfrag_queues(const struct brisk_ipfrag *fr)
{
    return fr ? fr->nqueues : 0;
}

/* IPv4's Time Exceeded: the first fragment as it came (its data as held: cut to a multiple of 8), quoted
 * as RFC 792 asks (its header and 64 bits of data, here up to QUOTE_MAX bytes). */
static void time_exceeded4(const struct fq *q, uint64_t now)
{
    const struct frag *h = q->head;
    uint8_t quote[BRISK_IPV4_HLEN_MAX + QUOTE_MAX];
    uint32_t n = h->end < QUOTE_MAX ? h->end : QUOTE_MAX;
    memcpy(quote, h->data, h->hdr_len + n);
    brisk_put16(quote + 2, (uint16_t)(h->hdr_len + n));
    brisk_put16(quote + 10, 0);
    brisk_put16(quote + 10, brisk_csum_hdr(quote, h->hdr_len));
    brisk_icmp_send_error(q->fr->net, BRISK_ICMP_TIME_EXCEEDED, ICMP_FRAGTIME, quote, h->hdr_len + n, now);
}

/* IPv6's: the first fragment as it came — its unfragmentable part, its fragment header, its data — as far
 * as an ICMPv6 error may quote (RFC 4443 §2.4 (c)); icmp6.c applies §2.4 (e) and the rate limit. */
static void time_exceeded6(const struct fq *q, uint64_t now)
{
    const struct frag *h = q->head;
    uint8_t quote[BRISK_ICMP6_QUOTE_MAX];
    uint8_t fh[BRISK_IPV6_FRAG_HLEN];
    brisk_ipv6_frag_emit(fh, q->nh, 0, 1, q->key.id);
    const struct {
        const uint8_t *b;
        size_t len;
    } part[3] = {{h->data, h->hdr_len}, {fh, sizeof fh}, {h->data + h->hdr_len, h->end}};
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        size_t k = part[i].len < sizeof quote - n ? part[i].len : sizeof quote - n;
        memcpy(quote + n, part[i].b, k);
        n += k;
    }
    /* The payload length it came with: the quote is shorter by design (brisk_ipv6_parse_quoted). */
    brisk_put16(quote + 4, (uint16_t)(h->hdr_len - BRISK_IPV6_HLEN + BRISK_IPV6_FRAG_HLEN + h->end));
    brisk_icmp6_send_error(q->fr->net, q->dev, BRISK_ICMP6_TIME_EXCEEDED, ICMP_FRAGTIME, 0, quote, n, q->bcast,
                           0, now);
}

/* The timeout (RFC 1122 §3.3.2, RFC 8200 §4.5): dropped, and reported to the sender when the first
 * fragment came. A dead queue (IPv6 overlap) only goes. */
static void fq_expire(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    struct fq *q = arg;
    struct brisk_ipfrag *fr = q->fr;
    if (!q->dead) {
        (*fr->timeout)++;
        if (q->first_in && fr->family == 4 && !q->bcast)
            time_exceeded4(q, now);
        else if (q->first_in && fr->family == 6)
            time_exceeded6(q, now);
    }
    fq_fail(q);
}

/* Drops the oldest datagrams other than `keep` until `need` more bytes fit the bound (ipfrag_evict). */
static void evict(struct brisk_ipfrag *fr, uint64_t need, const struct fq *keep)
{
    uint64_t high = *fr->high_thresh;
    struct fq *v = fr->oldest;
    while (v && fr->mem + need > high) {
        struct fq *n = v->newer;
        if (v != keep)
            fq_fail(v);
        v = n;
    }
}

static struct fq *fq_find(const struct brisk_ipfrag *fr, const struct fq_key *k, unsigned b)
{
    for (struct fq *q = fr->bucket[b]; q; q = q->hnext)
        if (memcmp(&q->key, k, sizeof(*k)) == 0)
            return q;
    return NULL;
}

static struct fq *fq_create(struct brisk_ipfrag *fr, const struct fq_key *k, unsigned b, uint64_t now)
{
    struct brisk_net *net = fr->net;
    if (net->s.ipfrag_evict)
        evict(fr, sizeof(struct fq), NULL);
    if (fr->mem + sizeof(struct fq) > *fr->high_thresh && net->s.ipfrag_evict)
        return NULL;
    struct fq *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->fr = fr;
    q->key = *k;
    q->mem = sizeof(*q);
    q->hnext = fr->bucket[b];
    fr->bucket[b] = q;
    q->older = fr->newest;
    if (fr->newest)
        fr->newest->newer = q;
    else
        fr->oldest = q;
    fr->newest = q;
    fr->mem += q->mem;
    fr->nqueues++;
    brisk_timer_init(&q->timer, fq_expire, q);
    brisk_timer_arm(&net->wheel, &q->timer, now + *fr->time_ns);
    return q;
}

enum { PLACE_OK, PLACE_DUP, PLACE_OVERLAP };

/* Where [off, end) goes (Linux's inet_frag_queue_insert): *prev is the fragment it follows (NULL: first),
 * *run_start whether it begins a run. */
static int place(const struct fq *q, uint32_t off, uint32_t end, struct frag **prev, uint8_t *run_start)
{
    *prev = NULL;
    *run_start = 1;
    struct frag *t = q->tail;
    if (!t)
        return PLACE_OK;
    if (end > t->end) { /* the usual case: past the highest fragment */
        if (off < t->end)
            return PLACE_OVERLAP;
        *prev = t;
        *run_start = off != t->end;
        return PLACE_OK;
    }
    /* Below the highest fragment: run by run. */
    struct frag *before = NULL; /* the last fragment of the runs wholly below [off, end) */
    struct frag *f = q->head;
    while (f) {
        uint32_t rs = f->off;
        struct frag *last = f;
        while (last->next && !last->next->run_start)
            last = last->next;
        uint32_t re = last->end;
        if (end <= rs)
            break;
        if (off >= re) {
            before = last;
            f = last->next;
            continue;
        }
        return off >= rs && end <= re ? PLACE_DUP : PLACE_OVERLAP;
    }
    *prev = before;
    return PLACE_OK;
}

/* The whole datagram from a complete queue (then freed), or NULL (too long, or no memory: the datagram is
 * dropped). The family's header rebuild is the one step that differs. */
static uint8_t *reassemble(struct fq *q, size_t *len)
{
    struct brisk_ipfrag *fr = q->fr;
    size_t hl = q->head->hdr_len, total = hl + q->len;
    uint8_t *d = total <= fr->max_total ? malloc(total) : NULL;
    if (!d) {
        fq_fail(q);
        return NULL;
    }
    memcpy(d, q->head->data, hl);
    for (const struct frag *f = q->head; f; f = f->next)
        memcpy(d + hl + f->off, f->data + f->hdr_len, f->end - f->off);
    if (fr->family == 4) {
        brisk_put16(d + 2, (uint16_t)total);
        brisk_put16(d + 6, 0); /* no flags, offset 0: whole */
        brisk_put16(d + 10, 0);
        brisk_put16(d + 10, brisk_csum_hdr(d, hl));
    } else {
        brisk_put16(d + 4, (uint16_t)(total - BRISK_IPV6_HLEN));
        d[q->nh_ptr] = q->nh; /* the fragment header is gone: what it named follows the unfragmentable part */
    }
    (*fr->oks)++;
    fq_free(q);
    *len = total;
    return d;
}

/* Either family's fragment into its table: the rules of the opening comment. */
static uint8_t *frag_input(struct brisk_ipfrag *fr, const struct fragment *in, size_t *len, uint64_t now)
{
    struct brisk_net *net = fr->net;
    (*fr->reqds)++;
    uint64_t high = *fr->high_thresh;
    if (!high || (!net->s.ipfrag_evict && fr->mem > high)) { /* Linux's inet_frag_find */
        (*fr->fails)++;
        return NULL;
    }
    unsigned b = bucket_of(fr, &in->key);
    struct fq *q = fq_find(fr, &in->key, b);
    if (!q && !(q = fq_create(fr, &in->key, b, now))) {
        (*fr->fails)++;
        return NULL;
    }
    if (q->dead)
        return NULL; /* a later fragment of a datagram dropped for an overlap (RFC 5722 §4): silently */

    uint32_t off = in->off, end = in->end;
    if (!in->mf) {
        if (end < q->len || (q->last_in && end != q->len)) {
            fq_fail(q); /* a second, different end, or data already past this one */
            return NULL;
        }
        q->last_in = 1;
        q->len = end;
    } else {
        end &= ~7u; /* RFC 791: all but the last carry multiples of 8 bytes; Linux keeps what is whole */
        if (end > q->len) {
            if (q->last_in) {
                fq_fail(q); /* data past the end the last fragment gave */
                return NULL;
            }
            q->len = end;
        }
    }
    if (end == off || end > fr->max_end) {
        fq_fail(q); /* empty, or past the largest datagram */
        return NULL;
    }

    struct frag *prev;
    uint8_t run_start;
    int where = place(q, off, end, &prev, &run_start);
    if (where == PLACE_DUP)
        return NULL; /* a retransmitted fragment: already held */
    if (where == PLACE_OVERLAP) {
        (*fr->overlaps)++;
        if (fr->family == 6)
            fq_kill(q);
        else
            fq_fail(q);
        return NULL;
    }
    uint16_t hl = off == 0 ? in->hdr_len : 0;
    uint64_t need = sizeof(struct frag) + hl + (end - off);
    if (net->s.ipfrag_evict) {
        evict(fr, need, q);
        if (fr->mem + need > high) {
            (*fr->fails)++; /* the bound is smaller than this one datagram */
            return NULL;
        }
    }
    struct frag *f = malloc(need);
    if (!f) {
        (*fr->fails)++;
        return NULL;
    }
    f->off = off;
    f->end = end;
    f->run_start = run_start;
    f->hdr_len = hl;
    memcpy(f->data, in->hdr, hl);
    memcpy(f->data + hl, in->data, end - off);
    if (prev) {
        f->next = prev->next;
        prev->next = f;
    } else {
        f->next = q->head;
        q->head = f;
    }
    if (!f->next)
        q->tail = f;
    q->meat += end - off;
    q->mem += need;
    fr->mem += need;
    if (off == 0) {
        q->first_in = 1;
        q->bcast = in->bcast;
        q->nh = in->nh;
        q->nh_ptr = in->nh_ptr;
        q->dev = in->dev;
    }
    if (q->first_in && q->last_in && q->meat == q->len)
        return reassemble(q, len);
    return NULL;
}

uint8_t *brisk_ipfrag_input(struct brisk_net *net, const struct brisk_ipv4_repr *ip, const uint8_t *p,
                            int bcast, size_t *len, uint64_t now)
{
    struct fragment in = {.off = ip->frag_off, .mf = ip->mf, .hdr = p, .hdr_len = ip->hdr_len};
    brisk_put32(in.key.src, ip->src);
    brisk_put32(in.key.dst, ip->dst);
    in.key.id = ip->id;
    in.key.proto = ip->proto;
    in.end = ip->frag_off + (uint32_t)(ip->total_len - ip->hdr_len);
    in.data = p + ip->hdr_len;
    in.bcast = bcast != 0;
    return frag_input(net->ipfrag, &in, len, now);
}

uint8_t *brisk_ip6frag_input(struct brisk_net *net, brisk_netdev *dev, const struct brisk_ipv6_repr *ip,
                             const struct brisk_ipv6_ext *x, const uint8_t *p, size_t end, int l2_mcast,
                             size_t *len, uint64_t now)
{
    size_t data_off = (size_t)x->frag_hdr_off + BRISK_IPV6_FRAG_HLEN;
    struct fragment in = {.off = x->frag_off, .mf = x->frag_mf, .hdr = p, .hdr_len = x->frag_hdr_off};
    memcpy(in.key.src, ip->src, 16);
    memcpy(in.key.dst, ip->dst, 16);
    in.key.id = x->frag_id;
    if (brisk_ipv6_is_link_local(ip->dst) || brisk_ipv6_is_multicast(ip->dst))
        in.key.iif = (uint16_t)(dev - net->devs + 1);
    in.end = x->frag_off + (uint32_t)(end - data_off);
    in.data = p + data_off;
    in.bcast = l2_mcast != 0;
    in.nh = x->frag_nh;
    in.nh_ptr = x->frag_prev_nh;
    in.dev = dev;
    return frag_input(net->ip6frag, &in, len, now);
}

int brisk_ipfrag_check(const struct brisk_ipfrag *fr)
{
    if (!fr)
        return -1;
    uint64_t mem = 0;
    uint32_t n = 0;
    const struct fq *prev = NULL;
    for (const struct fq *q = fr->oldest; q; prev = q, q = q->newer) {
        if (q->older != prev || ++n > fr->nqueues || q->fr != fr)
            return -2;
        if (!brisk_timer_armed(&q->timer))
            return -3;
        uint64_t qm = sizeof(*q);
        uint32_t meat = 0, last_end = 0;
        const struct frag *last = NULL;
        for (const struct frag *f = q->head; f; last = f, f = f->next) {
            if (f->end <= f->off || (last && f->off < last_end) || (!last && !f->run_start))
                return -4;
            if (f->next && (f->end - f->off) % 8)
                return -5;
            if (!f->run_start && f->off != last_end)
                return -6;
            if ((f->off == 0) != (f->hdr_len >= (fr->family == 4 ? BRISK_IPV4_HLEN : BRISK_IPV6_HLEN)) ||
                (f->off && f->hdr_len))
                return -12;
            meat += f->end - f->off;
            qm += sizeof(*f) + f->hdr_len + (f->end - f->off);
            last_end = f->end;
        }
        if (q->tail != last || meat != q->meat || qm != q->mem || last_end > q->len)
            return -7;
        if (q->first_in != (q->head && q->head->off == 0) || (q->first_in && q->last_in && q->meat == q->len))
            return -8;
        if (q->len > fr->max_end)
            return -9;
        if (q->dead && (q->head || q->last_in || q->len))
            return -13;
        if (q->first_in && fr->family == 6 && q->nh_ptr >= q->head->hdr_len)
            return -14;
        mem += qm;
        /* Reachable from its hash chain. */
        const struct fq *h = fr->bucket[bucket_of(fr, &q->key)];
        while (h && h != q)
            h = h->hnext;
        if (!h)
            return -10;
    }
    if (prev != fr->newest || n != fr->nqueues || mem != fr->mem)
        return -11;
    return 0;
}
