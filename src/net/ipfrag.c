/*
 * ipfrag.c — IPv4 reassembly (RFC 791 §3.2 "Reassembly", RFC 815, RFC 1122 §3.3.2).
 *
 * RFC 1122 §3.3.2: a host MUST reassemble, MUST be able to take datagrams of 576 bytes and SHOULD take
 * more, MUST time a partial datagram out, and SHOULD send an ICMP Time Exceeded (code 1, "fragment
 * reassembly time exceeded") when it does — only if the first fragment (offset 0) came, since only it names
 * the transport, and not about a datagram sent to a broadcast address (§3.2.2). brisk sets DF on everything it sends, but a peer behind a path that fragments (a tunnel, a
 * sender without PMTUD) must still be understood.
 *
 * A datagram being reassembled is a queue keyed, as RFC 791 says, by (source, destination, identification,
 * protocol), found through a keyed hash (SipHash under a key derived from the stack's seed, so an attacker
 * cannot aim fragments at one chain; no draw from the stack's generator, whose stream stays as it was). It
 * holds its fragments in a list ordered by offset, each a copy of the fragment's bytes: RFC 815's holes are
 * the gaps of that list, and completeness is the byte count ("meat", Linux's word) reaching the length the
 * last fragment (MF clear) gave, once the first one is in. Fragments arrive in any order; a list is enough
 * because a datagram has at most 8,192 fragment positions and, in practice, a handful of fragments, and
 * every insertion that is not at the tail is where a sender misbehaved.
 *
 * What a fragment may do, as Linux's ip_frag_queue and inet_frag_queue_insert decide it (every profile):
 *   - the last fragment fixes the length; a later last fragment with another end, or any fragment with
 *     data past that end, drops the whole datagram; so does a fragment that ends up empty;
 *   - a fragment with MF set whose length is not a multiple of 8 (RFC 791 forbids it) is cut down to one —
 *     Linux keeps the first part, so a sender that wrote 1,483 bytes and then went on at 1,480 still gets
 *     its datagram through; one shorter than 8 bytes is empty after the cut, and drops the datagram;
 *   - overlaps (RFC 5722's rule for IPv6, which Linux applies to IPv4 too since 4.19's "ip: discard IPv4
 *     datagrams with overlapping segments"): a fragment that lies wholly inside data already held as one
 *     *run* is a duplicate — a retransmission, dropped alone, the datagram kept; any other overlap drops the
 *     whole datagram (IpReasmOverlaps). A run, as in Linux, is the data built up by fragments that each
 *     continued the highest one exactly; a fragment placed below the highest starts a run of its own, so a
 *     fragment spanning two runs that touch counts as an overlap, as in Linux;
 *   - a datagram longer than 65,535 bytes (the "ping of death") is dropped as soon as a fragment reaches
 *     past that (Linux notices when the datagram completes: the same datagrams are lost, earlier here).
 * A dropped datagram counts once in IpReasmFails; a fragment dropped for want of memory counts too, a
 * duplicate does not (Linux's counting). IpReasmReqds counts every fragment, IpReasmOKs every datagram
 * made whole, IpReasmTimeout every timeout (also in IpReasmFails).
 *
 * Bounds. ipfrag_time (30 s, Linux's default) runs from a datagram's first fragment and is never extended.
 * ipfrag_high_thresh (4 MB, Linux's) bounds the bytes held: each datagram is charged its bookkeeping and
 * each fragment its allocation (header and data). Above it Linux (4.17 on) drops every fragment until
 * timeouts free memory — bugzilla 212515: 1,766 fragments block all reassembly for 30 s; the linux-*
 * profiles keep that (ipfrag_evict=0). brisk's profile makes room by dropping the oldest incomplete
 * datagrams instead (ipfrag_evict=1, brisk's own), never the one the fragment belongs to: a flood must then
 * keep flooding, and a datagram that completes within the flood's turnover gets through. Either way the
 * bytes held never pass the bound by more than one fragment, and ipfrag_high_thresh=0 turns reassembly off
 * (Linux's rule: every fragment dropped). Memory is taken when a fragment arrives (as Linux does) and given
 * back when its datagram completes, times out, is dropped or evicted, or the stack is freed.
 *
 * The whole datagram is handed back to ip_input.c in one malloc'ed buffer: the first fragment's header
 * (options included) with the total length and fragment fields rewritten and a new checksum, then the
 * payload. It is delivered as if it had come whole; the device's checksum verdict covered only the last
 * fragment, so TCP checks the reassembled segment itself. Not done: Linux's ECN check across fragments
 * (RFC 3168 §5.3) and ipfrag_max_dist.
 */
#include "net/ipfrag.h"

#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "net/ip.h"
#include "wire/csum.h"
#include "wire/icmp.h"
#include "wire/wire.h"

#define IPFRAG_BUCKETS 1024u  /* hash chains: a power of two */
#define IPV4_MAX_LEN   65535u /* the largest datagram the total length field can give */
#define ICMP_FRAGTIME  1      /* ICMP Time Exceeded code: fragment reassembly time exceeded (RFC 792) */
#define QUOTE_MAX      548u   /* the first fragment's bytes quoted: 576 - 20 (IP) - 8 (ICMP) */

/* One fragment's payload bytes [off, end) of the datagram. */
struct frag {
    struct frag *next; /* by offset */
    uint32_t off, end;
    uint8_t run_start; /* begins a run: was not placed right after the highest fragment */
    uint8_t data[];
};

/* One datagram being reassembled. */
struct fq {
    struct fq *hnext;         /* hash chain */
    struct fq *older, *newer; /* age list (creation order): eviction takes the oldest */
    struct brisk_timer timer; /* ipfrag_time after the first fragment */
    struct brisk_net *net;
    uint32_t src, dst;
    uint16_t id;
    uint8_t proto;
    uint8_t first_in, last_in; /* the fragment at offset 0 / the one with MF clear has come */
    uint8_t hdr_len;           /* of the first fragment */
    uint8_t bcast;             /* the first fragment came to a broadcast address: no ICMP about it */
    uint32_t len;              /* payload length: exact once last_in, else the largest end seen */
    uint32_t meat;             /* payload bytes held */
    uint64_t mem;              /* bytes charged: this struct and the fragments' allocations */
    struct frag *head, *tail;  /* tail: the highest fragment */
    uint8_t hdr[BRISK_IPV4_HLEN_MAX]; /* the first fragment's header */
};

struct brisk_ipfrag {
    struct fq *bucket[IPFRAG_BUCKETS];
    struct fq *oldest, *newest;
    uint64_t mem;
    uint32_t nqueues;
    uint8_t key[16];
};

int brisk_ipfrag_init(struct brisk_net *net)
{
    struct brisk_ipfrag *fr = calloc(1, sizeof(*fr));
    if (!fr)
        return BRISK_ERR_NOMEM;
    uint64_t k0 = brisk_mix64(net->s.seed ^ 0x6970667261676b30ull), k1 = brisk_mix64(k0 ^ 0x6b31u);
    memcpy(fr->key, &k0, 8);
    memcpy(fr->key + 8, &k1, 8);
    net->ipfrag = fr;
    return BRISK_OK;
}

static unsigned bucket_of(const struct brisk_ipfrag *fr, uint32_t src, uint32_t dst, uint16_t id, uint8_t proto)
{
    uint8_t k[11];
    brisk_put32(k, src);
    brisk_put32(k + 4, dst);
    brisk_put16(k + 8, id);
    k[10] = proto;
    return (unsigned)brisk_siphash24(fr->key, k, sizeof k) & (IPFRAG_BUCKETS - 1);
}

/* Unlinks and frees a datagram and its fragments, returning its charge. */
static void fq_free(struct brisk_net *net, struct fq *q)
{
    struct brisk_ipfrag *fr = net->ipfrag;
    struct fq **pp = &fr->bucket[bucket_of(fr, q->src, q->dst, q->id, q->proto)];
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
    brisk_timer_cancel(&net->wheel, &q->timer);
    for (struct frag *f = q->head, *n; f; f = n) {
        n = f->next;
        free(f);
    }
    fr->mem -= q->mem;
    fr->nqueues--;
    free(q);
}

/* The datagram is given up: counted once, freed. */
static void fq_fail(struct brisk_net *net, struct fq *q)
{
    net->c.IpReasmFails++;
    fq_free(net, q);
}

void brisk_ipfrag_destroy(struct brisk_net *net)
{
    if (!net->ipfrag)
        return;
    while (net->ipfrag->oldest)
        fq_free(net, net->ipfrag->oldest);
    free(net->ipfrag);
    net->ipfrag = NULL;
}

uint64_t brisk_ipfrag_mem(const struct brisk_net *net)
{
    return net->ipfrag ? net->ipfrag->mem : 0;
}

uint32_t brisk_ipfrag_queues(const struct brisk_net *net)
{
    return net->ipfrag ? net->ipfrag->nqueues : 0;
}

/* The timeout (RFC 1122 §3.3.2): dropped, and reported to the sender when the first fragment came. */
static void fq_expire(struct brisk_timer *t, void *arg, uint64_t now)
{
    (void)t;
    struct fq *q = arg;
    struct brisk_net *net = q->net;
    net->c.IpReasmTimeout++;
    if (q->first_in && !q->bcast) {
        /* The first fragment as it came (its data as held: cut to a multiple of 8), quoted. */
        uint8_t quote[BRISK_IPV4_HLEN_MAX + QUOTE_MAX];
        uint32_t n = q->head->end < QUOTE_MAX ? q->head->end : QUOTE_MAX;
        memcpy(quote, q->hdr, q->hdr_len);
        memcpy(quote + q->hdr_len, q->head->data, n);
        brisk_put16(quote + 2, (uint16_t)(q->hdr_len + n));
        brisk_put16(quote + 10, 0);
        brisk_put16(quote + 10, brisk_csum_hdr(quote, q->hdr_len));
        brisk_icmp_send_error(net, BRISK_ICMP_TIME_EXCEEDED, ICMP_FRAGTIME, quote, q->hdr_len + n, now);
    }
    fq_fail(net, q);
}

/* Drops the oldest datagrams other than `keep` until `need` more bytes fit the bound (ipfrag_evict). */
static void evict(struct brisk_net *net, uint64_t need, const struct fq *keep)
{
    struct brisk_ipfrag *fr = net->ipfrag;
    uint64_t high = net->s.ipfrag_high_thresh;
    struct fq *v = fr->oldest;
    while (v && fr->mem + need > high) {
        struct fq *n = v->newer;
        if (v != keep)
            fq_fail(net, v);
        v = n;
    }
}

static struct fq *fq_find(struct brisk_net *net, const struct brisk_ipv4_repr *ip, unsigned b)
{
    for (struct fq *q = net->ipfrag->bucket[b]; q; q = q->hnext)
        if (q->id == ip->id && q->src == ip->src && q->dst == ip->dst && q->proto == ip->proto)
            return q;
    return NULL;
}

static struct fq *fq_create(struct brisk_net *net, const struct brisk_ipv4_repr *ip, unsigned b, uint64_t now)
{
    struct brisk_ipfrag *fr = net->ipfrag;
    if (net->s.ipfrag_evict)
        evict(net, sizeof(struct fq), NULL);
    if (fr->mem + sizeof(struct fq) > net->s.ipfrag_high_thresh && net->s.ipfrag_evict)
        return NULL;
    struct fq *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->net = net;
    q->src = ip->src;
    q->dst = ip->dst;
    q->id = ip->id;
    q->proto = ip->proto;
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
    brisk_timer_arm(&net->wheel, &q->timer, now + net->s.ipfrag_time_ns);
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

/* The whole datagram from a complete queue (then freed), or NULL (no memory: the datagram is dropped). */
static uint8_t *reassemble(struct brisk_net *net, struct fq *q, size_t *len)
{
    size_t total = (size_t)q->hdr_len + q->len;
    if (total > IPV4_MAX_LEN) {
        fq_fail(net, q);
        return NULL;
    }
    uint8_t *d = malloc(total);
    if (!d) {
        fq_fail(net, q);
        return NULL;
    }
    memcpy(d, q->hdr, q->hdr_len);
    brisk_put16(d + 2, (uint16_t)total);
    brisk_put16(d + 6, 0); /* no flags, offset 0: whole */
    brisk_put16(d + 10, 0);
    brisk_put16(d + 10, brisk_csum_hdr(d, q->hdr_len));
    for (const struct frag *f = q->head; f; f = f->next)
        memcpy(d + q->hdr_len + f->off, f->data, f->end - f->off);
    net->c.IpReasmOKs++;
    fq_free(net, q);
    *len = total;
    return d;
}

uint8_t *brisk_ipfrag_input(struct brisk_net *net, const struct brisk_ipv4_repr *ip, const uint8_t *p,
                            int bcast, size_t *len, uint64_t now)
{
    struct brisk_ipfrag *fr = net->ipfrag;
    net->c.IpReasmReqds++;
    uint64_t high = net->s.ipfrag_high_thresh;
    if (!high || (!net->s.ipfrag_evict && fr->mem > high)) { /* Linux's inet_frag_find */
        net->c.IpReasmFails++;
        return NULL;
    }
    unsigned b = bucket_of(fr, ip->src, ip->dst, ip->id, ip->proto);
    struct fq *q = fq_find(net, ip, b);
    if (!q && !(q = fq_create(net, ip, b, now))) {
        net->c.IpReasmFails++;
        return NULL;
    }

    uint32_t hl = ip->hdr_len, off = ip->frag_off;
    uint32_t end = off + (ip->total_len - hl);
    if (!ip->mf) {
        if (end < q->len || (q->last_in && end != q->len)) {
            fq_fail(net, q); /* a second, different end, or data already past this one */
            return NULL;
        }
        q->last_in = 1;
        q->len = end;
    } else {
        end &= ~7u; /* RFC 791: all but the last carry multiples of 8 bytes; Linux keeps what is whole */
        if (end > q->len) {
            if (q->last_in) {
                fq_fail(net, q); /* data past the end the last fragment gave */
                return NULL;
            }
            q->len = end;
        }
    }
    if (end == off || BRISK_IPV4_HLEN + end > IPV4_MAX_LEN) {
        fq_fail(net, q); /* empty, or past the largest datagram */
        return NULL;
    }

    struct frag *prev;
    uint8_t run_start;
    int where = place(q, off, end, &prev, &run_start);
    if (where == PLACE_DUP)
        return NULL; /* a retransmitted fragment: already held */
    if (where == PLACE_OVERLAP) {
        net->c.IpReasmOverlaps++;
        fq_fail(net, q);
        return NULL;
    }
    uint64_t need = sizeof(struct frag) + (end - off);
    if (net->s.ipfrag_evict) {
        evict(net, need, q);
        if (fr->mem + need > high) {
            net->c.IpReasmFails++; /* the bound is smaller than this one datagram */
            return NULL;
        }
    }
    struct frag *f = malloc(sizeof(*f) + (end - off));
    if (!f) {
        net->c.IpReasmFails++;
        return NULL;
    }
    f->off = off;
    f->end = end;
    f->run_start = run_start;
    memcpy(f->data, p + hl, end - off);
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
        q->bcast = bcast != 0;
        q->hdr_len = (uint8_t)hl;
        memcpy(q->hdr, p, hl);
    }
    if (q->first_in && q->last_in && q->meat == q->len)
        return reassemble(net, q, len);
    return NULL;
}

int brisk_ipfrag_check(const struct brisk_net *net)
{
    const struct brisk_ipfrag *fr = net->ipfrag;
    if (!fr)
        return -1;
    uint64_t mem = 0;
    uint32_t n = 0;
    const struct fq *prev = NULL;
    for (const struct fq *q = fr->oldest; q; prev = q, q = q->newer) {
        if (q->older != prev || ++n > fr->nqueues)
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
            meat += f->end - f->off;
            qm += sizeof(*f) + (f->end - f->off);
            last_end = f->end;
        }
        if (q->tail != last || meat != q->meat || qm != q->mem || last_end > q->len)
            return -7;
        if (q->first_in != (q->head && q->head->off == 0) || (q->first_in && q->last_in && q->meat == q->len))
            return -8;
        if (BRISK_IPV4_HLEN + q->len > IPV4_MAX_LEN)
            return -9;
        mem += qm;
        /* Reachable from its hash chain. */
        const struct fq *h = fr->bucket[bucket_of(fr, q->src, q->dst, q->id, q->proto)];
        while (h && h != q)
            h = h->hnext;
        if (!h)
            return -10;
    }
    if (prev != fr->newest || n != fr->nqueues || mem != fr->mem)
        return -11;
    return 0;
}
