/* softdirty_picture.h - the soft-dirty tracker's runs of written pages
 * and the picture it hands collect() (tracker_softdirty.c).
 *
 * A round's reads each find the target's dirty pages (softdirty_scan.h);
 * the pages first seen at read k form runs in bracket k, kept in address
 * order. The picture is every page written in the last whole round or in
 * this one, by its two brackets (struct tier__sd_pairs, made by the
 * tracker's thread at each read); collect() rates it - each run at the
 * rate of its two brackets (softdirty_rate.h), the pages of each tier a
 * population of their own - into observations of TIER_OBS_WRITTEN
 * (tier__sd_picture()). Pure: no I/O, no locks. */
#ifndef TIER_BACKEND_LINUX_SOFTDIRTY_PICTURE_H
#define TIER_BACKEND_LINUX_SOFTDIRTY_PICTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/softdirty_rate.h"
#include "backend/linux/softdirty_scan.h"
#include "backend/linux/tracker.h"

#define TIER__SD_PICTURE_MAX	(1u << 21)	/* runs in a picture */
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

/* A piece of a run on one tier (its population's class). */
struct tier__sd_piece {
	uint64_t start, end;
	uint32_t run;			/* index in the pairs' v[] */
	uint32_t cls;
};

/* Observations: a picture. */
struct tier__sd_pic {
	struct tier_linux_addr_obs *v;
	size_t n, cap;
	uint64_t dropped;		/* runs left out: more than TIER__SD_PICTURE_MAX */
	/* Scratch of tier__sd_picture(): a target's runs split by tier, as
	 * its count found them, so that its rates are handed out without
	 * asking for the tiers again. */
	struct tier__sd_piece *pieces;
	size_t nr_pieces, cap_pieces;
};

/* Frees what pic holds and empties it. */
void tier__sd_pic_free(struct tier__sd_pic *pic);

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

/* A piece of a picture: pages of target tg (an index into the picture's
 * targets) written in the same pair of brackets, kp and kc as in
 * tier__sd_rate_table() (0: not written in that round). */
struct tier__sd_pair_run {
	uint64_t start, end;
	uint32_t tg;
	uint8_t kp, kc;
};

/* A target of a picture, as its reads left it (struct tier__sd_rounds);
 * last: the picture was made at its round's end. */
struct tier__sd_pair_tg {
	pid_t pid;
	uint64_t brk_us[TIER__SD_MAX_BRK], prev_brk_us[TIER__SD_MAX_BRK];
	unsigned nbrk, nprev_brk;
	bool steady, last;
};

/* A picture as the tracker's thread makes it: every page written in the
 * last round or in this one, by its pair of brackets; rated by collect()
 * (tier__sd_picture()). */
struct tier__sd_pairs {
	struct tier__sd_pair_run *v;
	size_t n, cap;
	struct tier__sd_pair_tg *tg;
	size_t ntg, cap_tg;
	uint64_t dropped;		/* runs left out: more than TIER__SD_PICTURE_MAX */
};

/* Adds a target's pages written in the last round or in this one to p,
 * address order, by pair; last: at the round's end. Returns 0 or -ENOMEM
 * (no room for the target; runs beyond TIER__SD_PICTURE_MAX are dropped
 * and counted). */
int tier__sd_pairs_add(struct tier__sd_pairs *p, const struct tier__sd_rounds *r, bool last);
void tier__sd_pairs_free(struct tier__sd_pairs *p);

/* The tier each piece of [start, end) of process pid is on: fn(fctx,
 * start', end', tier) over pieces covering it, in address order
 * (tier_linux_ctx.tiers). */
typedef void tier__sd_tier_fn(void *fctx, uint64_t start, uint64_t end, unsigned tier);
typedef void tier__sd_tiers_fn(void *arg, pid_t pid, uint64_t start, uint64_t end,
			       tier__sd_tier_fn *fn, void *fctx);

/* Tiers told apart in the population's fit: ranks 0 to
 * TIER__SD_CLASSES - 2, the rest (and pages of no known tier) together. */
#define TIER__SD_CLASSES 5u

/* A target's fits as a picture left them: its reads, and its pages by
 * class (the whole target's last) and pair of brackets, from which its
 * rates were fitted. */
struct tier__sd_fit {
	pid_t pid;
	bool valid;			/* rate[] is the fit of the rest */
	bool used;			/* by the picture being made */
	bool tiers;			/* tiers were told apart */
	uint64_t brk_us[TIER__SD_MAX_BRK], prev_brk_us[TIER__SD_MAX_BRK];
	unsigned nbrk, nprev_brk;
	uint64_t count[TIER__SD_CLASSES + 1][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rate[TIER__SD_CLASSES + 1][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	/* each population's last fit, the next one's start (softdirty_rate.h) */
	struct tier__sd_priors prior[TIER__SD_CLASSES + 1];
};

/* The fits of the last picture, by target, kept for the next: a target
 * whose reads and counts are as they were takes its rates again rather
 * than fitting anew. A round's pairs change only at its reads, and its
 * pages' tiers when pages move, while collect() rates the picture at
 * every step - and a target's fits (one a class that has pages, one for
 * the whole) cost 10-20 ms of CPU each under an emulator. */
struct tier__sd_fits {
	struct tier__sd_fit *v;
	size_t n, cap;
	size_t next;			/* where fit_of() looks first */
	struct tier__sd_fit spare;	/* a target's where v has no room */
	uint64_t fitted, reused;	/* targets' fits made anew, and taken again */
	/* The first target's pairs as the last picture rated them, for the
	 * debug log: its reads (ms of the writer's time, the last round's
	 * then this one's), and each pair of TIER__SD_SAY_PAGES pages or more
	 * of a class rated TIER__SD_SAY_RATE or more: "tier C KP/KC PAGES@RATE"
	 * (C the class: a tier's rank, TIER__SD_CLASSES - 1 also for the
	 * slower ones and pages of no known tier). */
	char say[512];
};

#define TIER__SD_SAY_PAGES 64u
#define TIER__SD_SAY_RATE 5.0

void tier__sd_fits_free(struct tier__sd_fits *f);

/* Fills pic (emptied first) from pairs p: each run at the rate of its two
 * brackets (tier__sd_rate_table_pop(): the pages written in both rounds as
 * draws of one population, once the target is steady; fits holds each
 * target's rates, and those of the last picture, taken again where a
 * target's reads and counts did not change - the result is the same);
 * at the round's end (last), the pages this round saw written alone.
 * Pages under TIER__SD_PIC_MIN_RATE are left out. A page written in both
 * rounds stands on two draws: the policy's rate at once
 * (TIER_OBS_STANDING); one round alone is a single draw (a page written
 * 5.7 times a second is first written within 20 ms in one round in nine:
 * in the guest's scattered bench, 27,000 pages of the 5.7/s rest moved up
 * after the first round when every rate stood), and a page not seen yet
 * this round may have changed.
 *
 * With tiers (non-NULL), the pages of each tier are a population of their
 * own, fitted apart where 256 pages or more of it were written in both
 * rounds (the target's whole population where fewer): a pair's posterior
 * rate is a mixture's over the pages that give it, and once tierd has
 * placed a hot set the pages left in a slower tier are its cold ones. In
 * the guest's scattered bench a pair one page in three of which is hot
 * (1 and 2: first written within 20 ms in one round, 20-60 ms in the
 * other) reads 35/s over the whole process; the pages of it in the slower
 * tier, after the hot set went up, were all cold - 2,400 pages a round
 * moved up and back for nothing - and read as such in their tier's fit. */
void tier__sd_picture(struct tier__sd_pic *pic, const struct tier__sd_pairs *p,
		      tier__sd_tiers_fn *tiers, void *tiers_arg, struct tier__sd_fits *fits);

#endif
