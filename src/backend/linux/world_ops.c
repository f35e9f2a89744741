/* world_ops.c - the Linux world's tracker and migrator as the core sees
 * them: observations per address turned into dense page ids, and
 * move_pages(2) counted by direction and failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/world_impl.h"

/* --- tracker adapter: address observations -> dense ones ----------------- */

/* Observations of the first few processes per collect, for the debug log. */
#define SEEN_PIDS 4

struct collect_ctx {
	struct linux_backend *lb;
	void (*sink)(void *, const struct tier_obs *, size_t);
	void *sink_ctx;
	pid_t pid[SEEN_PIDS];
	uint64_t obs[SEEN_PIDS], accessed_kib[SEEN_PIDS];
	uint64_t sink_ns;	/* the sink's CPU (the policy taking them in) */
};

/* The core's sink, its CPU counted apart. */
static void timed_sink(void *ctx, const struct tier_obs *obs, size_t n)
{
	struct collect_ctx *cc = ctx;
	uint64_t cpu0 = tier_linux_thread_cpu_ns();

	cc->sink(cc->sink_ctx, obs, n);
	cc->sink_ns += tier_linux_thread_cpu_ns() - cpu0;
}

static void addr_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct collect_ctx *cc = ctx;
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < SEEN_PIDS && cc->pid[k] && cc->pid[k] != obs[i].pid; k++)
			;
		if (k == SEEN_PIDS)
			continue;
		cc->pid[k] = obs[i].pid;
		if (obs[i].count) {
			cc->obs[k]++;
			cc->accessed_kib[k] += (obs[i].end - obs[i].start) >> 10;
		}
	}
	if (cc->lb->log_level >= LOG_DEBUG)
		tier_linux_space_translate(cc->lb->space, obs, n, timed_sink, cc);
	else
		tier_linux_space_translate(cc->lb->space, obs, n, cc->sink, cc->sink_ctx);
}

/* Once, and again when it changes: soft-dirty dating writes by less than
 * the writer's runs and waits per thread (docs/linux-trackers.md). */
static void say_writer_time(struct linux_backend *lb, const struct tier_linux_tracker_stats *ts)
{
	if (ts->writer_time == TIER_LINUX_WT_UNKNOWN || ts->writer_time == lb->writer_time_said)
		return;
	if (ts->writer_time == TIER_LINUX_WT_CPU_CLOCK)
		tier__lw_say(lb, LOG_INFO,
			     "tracker %s: no per-thread scheduler statistics "
			     "(/proc/PID/task/TID/schedstat; kernel without CONFIG_SCHED_INFO): "
			     "writes dated by the writer's CPU clock, its waits for a CPU unknown",
			     lb->trk->name);
	else if (ts->writer_time == TIER_LINUX_WT_WALL)
		tier__lw_say(lb, LOG_WARNING,
			     "tracker %s: neither per-thread scheduler statistics nor the "
			     "writer's CPU clock readable: writes dated by the wall clock less the "
			     "writer's faults, the time it waited or was blocked counted as writing",
			     lb->trk->name);
	else if (lb->writer_time_said != TIER_LINUX_WT_UNKNOWN)
		tier__lw_say(lb, LOG_INFO, "tracker %s: writes dated by schedstat again",
			     lb->trk->name);
	lb->writer_time_said = ts->writer_time;
}

int tier__lw_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
			   void *ctx, struct tier_err *err)
{
	struct linux_backend *lb = priv;
	struct collect_ctx cc = { lb, sink, ctx, { 0 }, { 0 }, { 0 }, 0 };
	struct tier_linux_tracker_stats ts;
	uint64_t cpu0 = tier_linux_thread_cpu_ns();
	int ret = lb->trk->collect(lb->trk_priv, addr_sink, &cc, err);
	uint64_t cpu_ns = tier_linux_thread_cpu_ns() - cpu0;

	lb->tracker_cpu_ns += cpu_ns;
	tier__lw_upkeep(lb, false);
	/* The tracker's figures, read once for what is said below. */
	memset(&ts, 0, sizeof(ts));
	if (lb->trk->stats)
		lb->trk->stats(lb->trk_priv, &ts);
	say_writer_time(lb, &ts);

	if (lb->log_level >= LOG_DEBUG) {
		char line[1536] = "", ahead[64] = "";
		size_t k, off = 0;

		for (k = 0; k < SEEN_PIDS && cc.pid[k] && off < sizeof(line); k++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						" pid %d: %llu ranges, %llu KiB accessed;", (int)cc.pid[k],
						(unsigned long long)cc.obs[k],
						(unsigned long long)cc.accessed_kib[k]);
		if ((ts.collect_damon_ns || ts.collect_sd_ns) && off < sizeof(line)) {
			/* the combination's other tracker: damon+softdirty, damon+hint */
			bool hint = !strcmp(lb->trk->name, "damon+hint");

			snprintf(line + off, sizeof(line) - off,
				 " CPU: DAMON's part %.1f ms, %s %.1f ms (rating %.1f)",
				 (double)ts.collect_damon_ns / 1e6,
				 hint ? "the hint faults'" : "soft-dirty's",
				 (double)ts.collect_sd_ns / 1e6, (double)ts.collect_sd_rate_ns / 1e6);
		}
		off = strlen(line);
		if (off < sizeof(line))
			snprintf(line + off, sizeof(line) - off,
				 "; the collect's CPU %.1f ms, the policy taking them in %.1f ms",
				 (double)cpu_ns / 1e6, (double)cc.sink_ns / 1e6);
		off = strlen(line);
		if (ts.collect_sd_rate_ns && !ts.collect_sd_ns && off < sizeof(line))
			snprintf(line + off, sizeof(line) - off, ", rating the picture %.1f ms",
				 (double)ts.collect_sd_rate_ns / 1e6);
		off = strlen(line);
		if ((ts.sd_fitted || ts.sd_fits_reused) && off < sizeof(line))
			snprintf(line + off, sizeof(line) - off,
				 "; soft-dirty fits so far: %llu made, %llu taken again; pictures "
				 "rated as at the last collect: %llu",
				 (unsigned long long)ts.sd_fitted, (unsigned long long)ts.sd_fits_reused,
				 (unsigned long long)ts.sd_pictures_reused);
		off = strlen(line);
		if (ts.sd_pairs[0] && off < sizeof(line))
			snprintf(line + off, sizeof(line) - off, "; soft-dirty's %s", ts.sd_pairs);
		off = strlen(line);
		if (ts.damon_snap.ahead_wait_us)
			snprintf(ahead, sizeof(ahead), "; the first asked ahead, answered in %.1f ms",
				 (double)ts.damon_snap.ahead_wait_us / 1e3);
		else if (ts.damon_snap.reused)
			snprintf(ahead, sizeof(ahead), "; its last observations reused rather than "
				 "wait, the next on its way");
		else if (ts.damon_snap.restated)
			snprintf(ahead, sizeof(ahead), "; the last one restated, the next on its way");
		if (ts.damon_sample_us && off < sizeof(line))
			snprintf(line + off, sizeof(line) - off,
				 "; kdamond: %.0f ms samples, %.0f ms aggregations, %u regions at "
				 "most, %s%.1f%% of a core; its snapshot: %llu regions accessed, "
				 "%llu MiB, %llu MiB of them in every sample, %.0f%% of samples on "
				 "average; waited for it %.1f ms (%u requests of the step's own%s)",
				 (double)ts.damon_sample_us / 1e3, (double)ts.damon_aggr_us / 1e3,
				 ts.damon_max_regions,
				 ts.damon_share_percent < 0 ? "no window yet, " : "",
				 ts.damon_share_percent < 0 ? 0.0 : ts.damon_share_percent,
				 (unsigned long long)ts.damon_snap.regions,
				 (unsigned long long)(ts.damon_snap.kib >> 10),
				 (unsigned long long)(ts.damon_snap.full_kib >> 10),
				 ts.damon_snap.kib ? 100.0 * ts.damon_snap.weighted_kib /
							     (double)ts.damon_snap.kib : 0.0,
				 (double)ts.damon_snap.wait_us / 1e3, ts.damon_snap.requests,
				 ahead);
		tier__lw_say(lb, LOG_DEBUG, "tracker %s:%s", lb->trk->name, line[0] ? line : " nothing");
	}
	return ret;
}

/* --- migrator wrapper: direction accounting ------------------------------ */

static long counted_move(void *priv, const uint64_t *pages, const int *nodes, int *status,
			 size_t n)
{
	struct linux_backend *lb = priv;
	int from[1024];
	size_t i, done = 0;
	long total = 0;
	uint64_t cpu0 = tier_linux_thread_cpu_ns();

	/* In chunks, remembering each page's rank before the move. */
	while (done < n) {
		size_t k = n - done < 1024 ? n - done : 1024;
		uint64_t w;
		long moved;

		for (i = 0; i < k; i++) {
			uint8_t nd = lb->env.page_node[pages[done + i]];

			from[i] = nd == TIER_NODE_NONE ? -1 : lb->node_rank[nd];
		}
		w = tier_linux_now_ns();
		moved = tier_linux_migrator_ops.move(lb->space, pages + done, nodes + done,
						     status + done, k);
		lb->move_wall_ns += tier_linux_now_ns() - w;
		if (moved < 0) {
			lb->move_cpu_ns += tier_linux_thread_cpu_ns() - cpu0;
			return total ? total : moved;
		}
		for (i = 0; i < k; i++) {
			int st = status[done + i];

			if (st < 0) {
				lb->failed_moves++;
				lb->failed_by_reason[tier_move_fail_of(st)]++;
				if (st == -ENOMEM)
					lb->nomem_moves++;
				continue;
			}
			if (from[i] < 0 || st >= TIER_MAX_NODES)
				continue;
			if (from[i] < TIER_MAX_TIERS && lb->node_rank[st] >= 0 &&
			    lb->node_rank[st] < TIER_MAX_TIERS)
				lb->moved_pages[from[i]][lb->node_rank[st]]++;
			if (lb->node_rank[st] < from[i])
				lb->promoted_pages++;
			else if (lb->node_rank[st] > from[i])
				lb->demoted_pages++;
		}
		total += moved;
		done += k;
		cpu0 += tier__lw_upkeep(lb, false);
	}
	lb->move_cpu_ns += tier_linux_thread_cpu_ns() - cpu0;
	lb->moves_done += (uint64_t)total;	/* the move cost's (linux_stats()) */
	return total;
}

const struct tier_migrator_ops tier__lw_migrator_nosplit = {
	.name = "move_pages",
	.move = counted_move,
};

/* Splits through the kernel (debugfs); where the kernel offers no way,
 * says so once and offers the policy no split from then on. */
static int counted_split(void *priv, uint64_t page)
{
	struct linux_backend *lb = priv;
	int ret = tier_linux_migrator_ops.split(lb->space, page);

	if (!ret) {
		lb->splits++;
	} else if ((ret == -EOPNOTSUPP || ret == -EPERM || ret == -EACCES) && !lb->split_warned) {
		tier__lw_say(lb, LOG_WARNING,
			  "huge pages cannot be split (/sys/kernel/debug/split_huge_pages: %s); they are placed whole",
			  strerror(-ret));
		lb->split_warned = true;
		lb->env.migrator = &tier__lw_migrator_nosplit;
	}
	return ret;
}

const struct tier_migrator_ops tier__lw_migrator = {
	.name = "move_pages",
	.move = counted_move,
	.split = counted_split,
};

