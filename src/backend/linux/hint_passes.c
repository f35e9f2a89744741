/* hint_passes.c - the kernel's scans' passes told apart from the hint
 * faults of a process, and each page's rate from its latency (contract in
 * tracker_util.h, "hint faults"; the tracker is tracker_hint.c). Pure: no
 * I/O, no locks. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/tracker_util.h"
#include "core/policy.h"

struct tier__hint_range {
	pid_t pid;
	uint64_t base;			/* address >> HINT_RANGE_SHIFT */
	uint64_t start_us;		/* the current pass's start */
	uint32_t pass;			/* the current pass (1 the first) */
	uint8_t seen[HINT_RANGE_PAGES / 8];	/* faulted in the current pass */
	uint16_t lat_ms[HINT_RANGE_PAGES];	/* each page's last latency, ms + 1 (0: none) */
	uint8_t pass_of[HINT_RANGE_PAGES];	/* ... its pass, mod 256 */
	/* The blocks of 64 pages with an estimate that may still hold: the
	 * pages hand() looks at (a process's faults are a few ranges' few
	 * pages, and at 1,000 processes a pass over every page of their
	 * ranges at each collect was a third of the step's CPU). */
	uint64_t live[HINT_RANGE_PAGES / 64 / 64];
};

void tier__hint_passes_init(struct tier__hint_passes *hp)
{
	memset(hp, 0, sizeof(*hp));
}

void tier__hint_passes_release(struct tier__hint_passes *hp)
{
	size_t i;

	for (i = 0; i < hp->cap; i++)
		free(hp->slot[i]);
	free(hp->slot);
	free(hp->read);
	memset(hp, 0, sizeof(*hp));
}

static size_t slot_of(const struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) ^ (base * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h >> 17) & (hp->cap - 1);
}

/* The slot of pid's range base, or the empty slot where it would go (the
 * table has room: at most half full). */
static size_t slot_find(const struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	size_t i;

	for (i = slot_of(hp, pid, base); hp->slot[i]; i = (i + 1) & (hp->cap - 1))
		if (hp->slot[i]->pid == pid && hp->slot[i]->base == base)
			break;
	return i;
}

/* A table of nc slots for the ranges in the present one (open addressing:
 * each put back where a lookup finds it). Returns 0, or -ENOMEM leaving
 * the table as it was. */
static int rehash(struct tier__hint_passes *hp, size_t nc)
{
	struct tier__hint_range **old = hp->slot;
	size_t oc = hp->cap, k;

	hp->slot = calloc(nc, sizeof(*hp->slot));
	if (!hp->slot) {
		hp->slot = old;
		return -ENOMEM;
	}
	hp->cap = nc;
	for (k = 0; k < oc; k++)
		if (old[k])
			hp->slot[slot_find(hp, old[k]->pid, old[k]->base)] = old[k];
	free(old);
	return 0;
}

static struct tier__hint_range *range_get(struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	size_t i;

	if ((hp->n + 1) * 2 > hp->cap && rehash(hp, hp->cap ? hp->cap * 2 : 64))
		return NULL;
	i = slot_find(hp, pid, base);
	if (hp->slot[i])
		return hp->slot[i];
	hp->slot[i] = calloc(1, sizeof(**hp->slot));
	if (!hp->slot[i])
		return NULL;
	hp->slot[i]->pid = pid;
	hp->slot[i]->base = base;
	hp->n++;
	return hp->slot[i];
}

/* pid's range base, or NULL where none faulted. */
static const struct tier__hint_range *range_find(const struct tier__hint_passes *hp, pid_t pid,
						 uint64_t base)
{
	return hp->cap ? hp->slot[slot_find(hp, pid, base)] : NULL;
}

/* Whether the range is in its second pass or later (see
 * tier__hint_passes_covers()). */
static bool range_covered(const struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	const struct tier__hint_range *r = range_find(hp, pid, base);

	return r && r->pass >= 2;
}

bool tier__hint_passes_covers(const struct tier__hint_passes *hp, pid_t pid, uint64_t start,
			      uint64_t end, uint64_t *run_end)
{
	const uint64_t last = (end - 1) >> HINT_RANGE_SHIFT;	/* end > start */
	uint64_t base = start >> HINT_RANGE_SHIFT, next = UINT64_MAX;
	size_t i;

	if (range_covered(hp, pid, base)) {
		/* Covered ranges are ranges of the table: a walk of them. */
		while (base < last && range_covered(hp, pid, base + 1))
			base++;
		*run_end = base < last ? (base + 1) << HINT_RANGE_SHIFT : end;
		return true;
	}
	/* Not covered up to the next covered range of pid, if any (a region
	 * may span terabytes of address space: not range by range). */
	for (i = 0; i < hp->cap; i++) {
		const struct tier__hint_range *r = hp->slot[i];

		if (r && r->pid == pid && r->pass >= 2 && r->base > base && r->base < next)
			next = r->base;
	}
	*run_end = next <= last ? next << HINT_RANGE_SHIFT : end;
	return false;
}

/* The first fault seen of pid at t_us (kept once). */
static void mark_first(struct tier__hint_passes *hp, pid_t pid, uint64_t t_us)
{
	struct tier__hint_first *nv;
	size_t i;

	for (i = 0; i < hp->nr_read; i++)
		if (hp->read[i].pid == pid)
			return;
	nv = realloc(hp->read, (hp->nr_read + 1) * sizeof(*nv));
	if (!nv)
		return;
	hp->read = nv;
	hp->read[hp->nr_read].pid = pid;
	hp->read[hp->nr_read++].first_us = t_us;
}

int tier__hint_fault(struct tier__hint_passes *hp, pid_t pid, uint64_t addr, uint64_t t_us)
{
	struct tier__hint_range *r = range_get(hp, pid, addr >> HINT_RANGE_SHIFT);
	uint64_t i = (addr >> 12) & (HINT_RANGE_PAGES - 1), lat;

	if (!r)
		return -ENOMEM;
	if (!r->pass || (r->seen[i / 8] & (1u << (i % 8)))) {
		/* Protected again since it faulted: the range's next pass. */
		r->pass++;
		r->start_us = t_us;
		memset(r->seen, 0, sizeof(r->seen));
		if (r->pass == 1)
			mark_first(hp, pid, t_us);
	}
	r->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	lat = t_us > r->start_us ? (t_us - r->start_us) / 1000 : 0;
	r->lat_ms[i] = (uint16_t)(lat >= 65534 ? 65535 : lat + 1);
	r->pass_of[i] = (uint8_t)r->pass;
	r->live[i / 4096] |= UINT64_C(1) << (i / 64 % 64);
	hp->faults++;
	return 0;
}

bool tier__hint_passes_read(const struct tier__hint_passes *hp, pid_t pid, uint64_t now_us)
{
	size_t i;

	for (i = 0; i < hp->nr_read; i++)
		if (hp->read[i].pid == pid)
			return now_us >= hp->read[i].first_us + HINT_FIRST_PASS_US;
	return false;
}

/* The rate of a fault latency_ms + 1 = l after its pass began: ln 2 over
 * it (at least HINT_MIN_LAT_MS). */
double tier__hint_rate(uint16_t l)
{
	double ms = l ? (double)(l - 1) : 0;

	if (ms < HINT_MIN_LAT_MS)
		ms = HINT_MIN_LAT_MS;
	return M_LN2 / (ms / 1000.0);
}

/* Hands block b of range r (its pages' estimates that hold) to batch b,
 * continuing the open run o; returns whether any still holds. */
static bool hand_block(struct tier__hint_range *r, uint32_t blk, struct tier__obs_batch *b,
		       struct tier_linux_addr_obs *o, bool *open)
{
	uint32_t i;
	bool any = false;

	for (i = blk * 64; i < blk * 64 + 64; i++) {
		uint8_t age = (uint8_t)((uint8_t)r->pass - r->pass_of[i]);
		uint64_t addr = (r->base << HINT_RANGE_SHIFT) + ((uint64_t)i << 12);
		double rate;
		uint32_t iv;

		if (!r->lat_ms[i])
			continue;
		if (age >= HINT_KEEP_PASSES) {
			/* lapsed for good: its pass, mod 256, would read as
			 * the current one again 256 passes on */
			r->lat_ms[i] = 0;
			continue;
		}
		any = true;
		if ((rate = tier__hint_rate(r->lat_ms[i])) < HINT_MIN_RATE)
			continue;
		/* one access seen in two checks over 2 ln 2 / rate */
		iv = (uint32_t)(2.0 * M_LN2 / rate * 1e6);
		if (*open && o->end == addr && o->interval_us == iv) {
			o->end += 4096;
			continue;
		}
		if (*open)
			tier__batch_add(b, o);
		memset(o, 0, sizeof(*o));
		o->pid = r->pid;
		o->start = addr;
		o->end = addr + 4096;
		o->kind = TIER_OBS_ACCESSED;
		o->write = TIER_OBS_STANDING;
		o->count = 1;
		o->max = 2;
		o->interval_us = iv;
		*open = true;
	}
	return any;
}

void tier__hint_passes_hand(struct tier__hint_passes *hp, tier_linux_obs_sink sink, void *ctx)
{
	struct tier__obs_batch b;
	size_t s;

	tier__batch_init(&b, sink, ctx);
	for (s = 0; s < hp->cap; s++) {
		struct tier__hint_range *r = hp->slot[s];
		struct tier_linux_addr_obs o;
		bool open = false;
		uint32_t w;

		if (!r)
			continue;
		/* Runs join across blocks where their pages are adjacent (a
		 * block skipped has none: o.end then differs from the next
		 * page's address). Blocks whose estimates all lapsed leave
		 * the live set. */
		for (w = 0; w < sizeof(r->live) / sizeof(r->live[0]); w++) {
			uint64_t bits = r->live[w];

			while (bits) {
				uint32_t blk = w * 64 + (uint32_t)__builtin_ctzll(bits);

				bits &= bits - 1;
				if (!hand_block(r, blk, &b, &o, &open))
					r->live[w] &= ~(UINT64_C(1) << (blk % 64));
			}
		}
		if (open)
			tier__batch_add(&b, &o);
	}
	tier__batch_flush(&b);
}

void tier__hint_passes_drop(struct tier__hint_passes *hp, const pid_t *keep, size_t n)
{
	size_t s, k, w = 0;

	for (s = 0; s < hp->cap; s++) {
		struct tier__hint_range *r = hp->slot[s];

		if (!r)
			continue;
		for (k = 0; k < n && keep[k] != r->pid; k++)
			;
		if (k < n)
			continue;
		free(r);
		hp->slot[s] = NULL;
		hp->n--;
	}
	/* Open addressing: the survivors put back where a lookup finds them
	 * (out of memory, left as they are: a lookup may miss one, no harm). */
	if (hp->cap)
		(void)rehash(hp, hp->cap);
	for (s = 0; s < hp->nr_read; s++) {
		for (k = 0; k < n && keep[k] != hp->read[s].pid; k++)
			;
		if (k < n)
			hp->read[w++] = hp->read[s];
	}
	hp->nr_read = w;
}
