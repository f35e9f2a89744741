/* mover.h - issues a policy's planned moves through the migrator: in
 * bounded batches, within the migration budget, to the roomiest node of the
 * target tier, spilling to the next tier when a node is full (-ENOMEM).
 *
 * A policy queues (page, target rank) pairs with tier_mover_add() while it
 * plans and calls tier_mover_flush() at the end of its tick.
 */
#ifndef TIER_CORE_MOVER_H
#define TIER_CORE_MOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/budget.h"
#include "core/policy.h"

/* Why a page did not move: move_pages(2)'s per-page status (and the
 * simulator's, which mimics it) in the classes the mover and the metrics
 * count. */
enum tier_move_fail {
	TIER_MOVE_FAIL_NOMEM = 0,	/* -ENOMEM: the target node was full */
	TIER_MOVE_FAIL_BUSY,		/* -EBUSY, -EAGAIN: in use, retried later */
	TIER_MOVE_FAIL_GONE,		/* -ENOENT, -EFAULT: unmapped, not present */
	TIER_MOVE_FAIL_SHARED,		/* -EACCES, -EPERM: mapped by other processes */
	TIER_MOVE_FAIL_OTHER,
	TIER_MOVE_FAIL__COUNT,
};

/* The class of a failed move's status (a -errno). */
enum tier_move_fail tier_move_fail_of(int status);

/* Its name: "nomem", "busy", "gone", "shared", "other". */
const char *tier_move_fail_name(enum tier_move_fail f);

struct tier_mover_stats {
	uint64_t moved_pages;		/* pages now on their (possibly spilled) target */
	uint64_t promoted_pages;	/* moved to a faster tier */
	uint64_t demoted_pages;		/* moved to a slower tier */
	uint64_t spilled_pages;		/* landed in another tier than asked */
	uint64_t failed_nomem;		/* no tier had room */
	uint64_t failed_busy;		/* -EBUSY: retry in a later tick */
	uint64_t failed_gone;		/* -ENOENT/-EFAULT: page went away */
	uint64_t failed_shared;		/* -EACCES: shared page, not moved */
	uint64_t failed_other;
};

struct tier_mover {
	const struct tier_env *env;
	struct tier_budget *budget;	/* NULL = no budget */
	int node_rank[TIER_MAX_NODES];
	uint64_t *pages;
	int *nodes;
	int *ranks;			/* asked rank per queued page */
	int *from_ranks;		/* rank when queued */
	int *status;
	size_t nr, cap;
	int64_t *node_free;		/* free-page estimate per node id */
	struct tier_mover_stats stats;
};

/* Returns 0 or -ENOMEM. */
int tier_mover_init(struct tier_mover *m, const struct tier_env *env,
		    struct tier_budget *budget);
void tier_mover_release(struct tier_mover *m);

/* Refreshes the free-page estimates from env->mem (call once per tick). */
void tier_mover_begin(struct tier_mover *m);

/* Queues page to move to tier rank. Returns false, queueing nothing, when
 * the budget has no room for another page (the caller stops planning) or
 * the page is absent or already in that tier. */
bool tier_mover_add(struct tier_mover *m, uint64_t page, int rank);

/* Bytes the budget still allows (UINT64_MAX when unlimited). */
uint64_t tier_mover_budget_left(const struct tier_mover *m);

/* Free pages left in tier rank after the queued moves (estimate). */
int64_t tier_mover_tier_free(const struct tier_mover *m, int rank);

/* Issues the queued moves. Returns 0 or the -errno of a failed call. */
int tier_mover_flush(struct tier_mover *m);

#endif
