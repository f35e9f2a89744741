/* heatmap.h - the daemon's access heatmaps (tierctl heatmap): one core
 * heatmap (core/heatmap.h: 256 address bins x the last 60 slices of 1 s)
 * per managed process, fed from the observations the loop hands the policy
 * (tier_loop.watch), and the `heatmap` request that reads one.
 *
 * Costs: per managed process sizeof(struct tier_heatmap), about 70 KiB,
 * for at most TIERD_HEAT_MAX_PROCS processes (70 MiB in all at worst; a
 * process tierd manages by default has 64 MiB or more, so 0.1% of it).
 * Per step: per observation one page -> address lookup of the backend and
 * O(1 + bins it spans); per process O(bins) at the end of the step. The
 * layouts (the processes' managed ranges) are rebuilt only when the
 * backend's maps_gen changes, O(extents). A request walks the process's
 * pages for their tiers (at most 2^20 of them, evenly sampled beyond).
 */
#ifndef TIERD_HEATMAP_H
#define TIERD_HEATMAP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/heatmap.h"
#include "core/world.h"
#include "tierd/log.h"

/* Processes with a heatmap at most; the rest (by pid order) have none. */
#define TIERD_HEAT_MAX_PROCS 1024
/* Bins of a request that names none (a terminal's worth). */
#define TIERD_HEAT_DEFAULT_BINS 32

struct tierd_heat_proc {
	pid_t pid;
	struct tier_heatmap *hm;	/* owned */
};

struct tierd_heat {
	struct tier_world *be;	/* borrowed */
	struct tierd_heat_proc *procs;	/* sorted by pid */
	size_t nr;
	bool synced;
	uint64_t maps_gen;		/* of the last sync */
	size_t more;			/* managed processes left without one */
	size_t hit;			/* index of the last lookup */
	struct tier_heatmap_range *ranges;	/* scratch of a sync */
	size_t nr_ranges, cap_ranges;
};

/* Heatmaps over be's processes; none when be lacks the hooks. */
void tierd_heat_init(struct tierd_heat *h, struct tier_world *be);
void tierd_heat_release(struct tierd_heat *h);

/* Before a step: when the backend's processes or mappings changed,
 * heatmaps for new processes, none for those gone, layouts brought up to
 * date (history carried over). Returns 0 or -ENOMEM (the heatmaps that
 * were kept stay valid). */
int tierd_heat_sync(struct tierd_heat *h, uint64_t now_us);

/* The loop's watch (ctx: struct tierd_heat *). */
void tierd_heat_watch(void *ctx, const struct tier_obs *obs, size_t n);

/* After a step at now_us (the env clock). */
void tierd_heat_commit(struct tierd_heat *h, uint64_t now_us);

/* Bytes the heatmaps take. */
size_t tierd_heat_bytes(const struct tierd_heat *h);

/* A `heatmap` request, its arguments checked. */
struct tierd_heat_query {
	pid_t pid;
	size_t bins;			/* 1..TIER_HEATMAP_BINS */
	size_t slices;			/* 1..TIER_HEATMAP_SLICES */
	uint64_t start, end;		/* addresses; 0, UINT64_MAX: all */
};

/* Its result (docs/protocol.md). NULL with *ret and err set on failure:
 * -ESRCH (not a managed process), -ENOENT (no managed memory in the
 * range), -EOPNOTSUPP (a backend without heatmaps), -ENOMEM. */
struct json_object *tierd_heat_json(struct tierd_heat *h, const struct tierd_heat_query *q,
				    uint64_t now_us, int *ret, struct tier_err *err);

#endif
