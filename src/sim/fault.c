/*
 * fault.c — impairments of one link direction: what happens to a frame between the end of its serialization
 * and its delivery.
 *
 * Every frame that finishes serializing gets the next 0-based index on its direction and goes through, in
 * this order:
 *   1. the exact loss mask: frames whose index is listed are lost (deterministic scenarios: "drop the 3rd");
 *   2. the loss model: RANDOM drops each frame with probability `loss`; GILBERT is the Gilbert-Elliott
 *      two-state Markov chain (Gilbert 1960, Elliott 1963): stepped once per frame (good -> bad with
 *      ge_p_good_to_bad, bad -> good with ge_p_bad_to_good), then the frame is lost with the loss
 *      probability of the state it is in. Time spent in the bad state is geometric, so losses come in bursts
 *      of mean length 1 / ge_p_bad_to_good when ge_loss_bad = 1 — the shape of real congestion and fading
 *      losses that independent random loss cannot produce; BURST is what a path that drops
 *      whole offloaded super-frames (64 KB, ~45 segments, before segmentation) does to the wire segments
 *      the peer sees: an event starts at a frame with probability loss / burst_len and loses the frames
 *      that begin within the wire time of burst_len such frames from its start, burst_len of them at most:
 *      the super-frame's segments, back to back or paced closely behind each other — not a retransmission
 *      sent alone a timeout later, which a per-frame count would lose with the burst it repairs. About
 *      `loss` of the frames of a busy link go;
 *   3. corruption: one bit of one byte at an offset >= 14 is flipped, past the Ethernet header, so the IPv4
 *      header or L4 checksum catches it (a single-bit error always changes a one's-complement sum) instead of
 *      the frame silently going to another MAC;
 *   4. duplication: a second copy is delivered right behind the original;
 *   5. reordering: the frame is held back reorder_delay_ns so that frames sent after it overtake it.
 * A lost frame takes no further decisions. All randomness comes from the direction's own brisk_rand stream,
 * drawn only for impairments that are configured, so a run is reproducible from the world seed.
 *
 * Functions: brisk_sim_fault_check (validates a configuration), brisk_sim_fault_init (seeds a direction),
 * brisk_sim_fault_apply (decides one frame's fate; BURST's run counter is in it), ge_step (the Markov chain).
 */
#include "sim/internal.h"

static int prob_ok(double p)
{
    return p >= 0.0 && p <= 1.0; /* false for NaN too */
}

int brisk_sim_fault_check(const struct brisk_sim_impair *im)
{
    if (!prob_ok(im->loss) || !prob_ok(im->ge_p_good_to_bad) || !prob_ok(im->ge_p_bad_to_good) ||
        !prob_ok(im->ge_loss_good) || !prob_ok(im->ge_loss_bad) || !prob_ok(im->reorder) ||
        !prob_ok(im->duplicate) || !prob_ok(im->corrupt))
        return BRISK_ERR_INVAL;
    if (im->loss_model != BRISK_SIM_LOSS_NONE && im->loss_model != BRISK_SIM_LOSS_RANDOM &&
        im->loss_model != BRISK_SIM_LOSS_GILBERT && im->loss_model != BRISK_SIM_LOSS_BURST)
        return BRISK_ERR_INVAL;
    if (im->loss_model == BRISK_SIM_LOSS_BURST && im->burst_len == 0)
        return BRISK_ERR_INVAL;
    if (im->loss_mask_len && !im->loss_mask)
        return BRISK_ERR_INVAL;
    for (size_t i = 1; i < im->loss_mask_len; i++)
        if (im->loss_mask[i] < im->loss_mask[i - 1])
            return BRISK_ERR_INVAL;
    return BRISK_OK;
}

void brisk_sim_fault_init(struct sim_fault *f, uint64_t seed)
{
    brisk_rand_seed(&f->rng, seed);
    f->index = 0;
    f->mask_pos = 0;
    f->ge_bad = 0;
    f->burst_left = 0;
    f->burst_until = 0;
}

static inline __attribute__((always_inline)) int chance(struct sim_fault *f, double p)
{
    return p > 0.0 && brisk_rand_chance(&f->rng, p);
}

/* One step of the Gilbert-Elliott chain; returns the loss probability of the state it lands in. */
static double ge_step(struct sim_fault *f, const struct brisk_sim_impair *im)
{
    if (f->ge_bad) {
        if (chance(f, im->ge_p_bad_to_good))
            f->ge_bad = 0;
    } else if (chance(f, im->ge_p_good_to_bad)) {
        f->ge_bad = 1;
    }
    return f->ge_bad ? im->ge_loss_bad : im->ge_loss_good;
}

unsigned brisk_sim_fault_apply(struct sim_fault *f, const struct brisk_sim_impair *im, uint8_t *data,
                               size_t len, uint64_t start, uint64_t end)
{
    uint64_t idx = f->index++;
    unsigned fate = 0;

    if (f->mask_pos < im->loss_mask_len) {
        /* The mask is sorted, so one cursor walks it once over the whole run (repeated entries skip). */
        while (f->mask_pos < im->loss_mask_len && im->loss_mask[f->mask_pos] < idx)
            f->mask_pos++;
        if (f->mask_pos < im->loss_mask_len && im->loss_mask[f->mask_pos] == idx)
            fate |= SIM_FATE_LOST;
    }
    switch (im->loss_model) {
    case BRISK_SIM_LOSS_NONE:
        break;
    case BRISK_SIM_LOSS_RANDOM:
        if (chance(f, im->loss))
            fate |= SIM_FATE_LOST;
        break;
    case BRISK_SIM_LOSS_GILBERT:
        /* Stepped for masked frames too: the chain advances once per frame on the wire. */
        if (chance(f, ge_step(f, im)))
            fate |= SIM_FATE_LOST;
        break;
    case BRISK_SIM_LOSS_BURST:
        /* Counted over masked frames too, as the chain above: a burst is frames on the wire. */
        if (f->burst_left && start > f->burst_until)
            f->burst_left = 0; /* the super-frame's time is over */
        if (f->burst_left == 0 && chance(f, im->loss / (double)im->burst_len)) {
            f->burst_left = im->burst_len;
            f->burst_until = start + (uint64_t)im->burst_len * (end - start);
        }
        if (f->burst_left) {
            f->burst_left--;
            fate |= SIM_FATE_LOST;
        }
        break;
    }
    if (!(fate & SIM_FATE_LOST) && im->drop_fn && im->drop_fn(im->drop_ctx, data, len))
        fate |= SIM_FATE_LOST;
    if (fate & SIM_FATE_LOST)
        return fate;

    if (len > 14 && chance(f, im->corrupt)) {
        uint64_t r = brisk_rand_u64(&f->rng);
        size_t off = 14 + (size_t)((r >> 3) % (len - 14));
        data[off] ^= (uint8_t)(1u << (r & 7));
        fate |= SIM_FATE_CORRUPT;
    }
    if (chance(f, im->duplicate))
        fate |= SIM_FATE_DUP;
    if (im->reorder_delay_ns && chance(f, im->reorder))
        fate |= SIM_FATE_REORDER;
    return fate;
}
