/* softdirty_rate.h - the soft-dirty tracker's rate estimate
 * (tracker_softdirty.c). */
#ifndef TIER_BACKEND_LINUX_SOFTDIRTY_RATE_H
#define TIER_BACKEND_LINUX_SOFTDIRTY_RATE_H

#include <stdint.h>

/* Reads a round at most (the last one's bracket widens beyond). */
#define TIER__SD_MAX_BRK 8u

/* The rates of a target's picture at its latest read, by the bracket a page was
 * first written in in the last round (kp, 0 where it was not written
 * then) and in this one (kc, 0 where not yet): rate[kp][kc], bracket k at
 * index k + 1. prev_brk_us[0, nprev) and brk_us[0, nbrk) (nbrk >= 1) are
 * the last round's and this one's reads after their clears, rising. A page's two rounds are taken together - a page written
 * 2 times a second is first written within 60 ms in one round in nine,
 * in both in one in 80, and one written 100 times a second in nearly
 * every round - but for a page not written in the whole last round: it
 * has changed, and its last round says nothing of now. */
void tier__sd_rate_table(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			 unsigned nbrk, double rate[][TIER__SD_MAX_BRK + 1]);

#endif
