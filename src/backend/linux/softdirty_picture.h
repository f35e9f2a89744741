/* softdirty_picture.h - the soft-dirty tracker's runs of written pages
 * and the picture it hands collect() (tracker_softdirty.c).
 *
 * A round's reads each find the target's dirty pages (softdirty_scan.h);
 * the pages first seen at read k form runs in bracket k, kept in address
 * order. The picture is every page written in the last whole round or in
 * this one, each run at the rate of its two brackets
 * (softdirty_rate.h), as observations of TIER_OBS_WRITTEN. Pure: no I/O,
 * no locks. */
#ifndef TIER_BACKEND_LINUX_SOFTDIRTY_PICTURE_H
#define TIER_BACKEND_LINUX_SOFTDIRTY_PICTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/softdirty_rate.h"
#include "backend/linux/softdirty_scan.h"
#include "backend/linux/tracker.h"

#define TIER__SD_PICTURE_MAX	(1u << 20)	/* runs in a picture */
#define TIER__SD_PIC_MIN_RATE	2.0		/* ... at this rate (/s) or more */
#define TIER__SD_CHECKS		2u		/* a run's rate: 1 write in this many checks */

/* A run of pages first seen written at the same read of a round: in its
 * bracket k, between that read and the one before. */
struct tier__sd_run {
	uint64_t start, end;
	unsigned k;
};

struct tier__sd_runs {
	struct tier__sd_run *v;
	size_t n, cap;
};

/* Observations: a picture. */
struct tier__sd_pic {
	struct tier_linux_addr_obs *v;
	size_t n, cap;
	uint64_t dropped;		/* runs left out: more than TIER__SD_PICTURE_MAX */
};

/* The seen runs after a read whose dirty extents are scan's (address
 * order): the pages seen before keep their bracket, the others are new in
 * bracket k_new. The bits only get set within a round, so the scan holds
 * every page seen before (but for one unmapped since: gone). Built in
 * *scratch, then swapped with *seen. Returns 0 or -ENOMEM. */
int tier__sd_seen_update(struct tier__sd_runs *seen, struct tier__sd_runs *scratch,
			 const struct tier__sd_scan *scan, unsigned k_new);

/* What a target's picture is made of: its runs this round and in the last
 * whole one, and both rounds' reads after their clears. */
struct tier__sd_rounds {
	pid_t pid;
	const struct tier__sd_runs *seen, *prev;
	const uint64_t *brk_us, *prev_brk_us;
	unsigned nbrk, nprev_brk;
	/* The last round was not the process's first: dated as this one.
	 * A process's first round is read while tierd catalogues it and
	 * makes its first moves, which block the writer; its pages' brackets
	 * are the least like a later round's (a hot page first seen at its
	 * third read, then within 20 ms), which the population's fit takes
	 * for the cold pages that give such pairs: the pairs go by their
	 * own rates until the population's rounds are alike. */
	bool steady;
};

/* Adds a target's picture to pic, address order: the pages written in the
 * last round or in this one, each at the rate of its two brackets
 * (tier__sd_rate_table_pop(): the pages written in both rounds as draws of
 * one population, once r->steady; rate is its table, filled here); at the round's end
 * (last), the pages this round saw written alone. Pages under
 * TIER__SD_PIC_MIN_RATE are left out. A page written in both rounds
 * stands on two draws: the policy's rate at once (TIER_OBS_STANDING); one
 * round alone is a single draw (a page written 5.7 times a second is
 * first written within 20 ms in one round in nine: in the guest's
 * scattered bench, 27,000 pages of the 5.7/s rest moved up after the
 * first round when every rate stood), and a page not seen yet this round
 * may have changed. */
void tier__sd_picture(struct tier__sd_pic *pic, const struct tier__sd_rounds *r, bool last,
		      double rate[][TIER__SD_MAX_BRK + 1]);

#endif
