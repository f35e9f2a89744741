/* world.c - a simulated tiered machine as a world (core/world.h), for the daemon (tierd --machine
 * sim:PRESET): the same loop, the simulator advancing one interval of
 * simulated time per step, so it runs in real time.
 *
 * The simulated workload shows as one managed process: tierd's own pid,
 * its pages laid out from SIM_BASE (page p at SIM_BASE + p * page size), so
 * that `tierctl heatmap $(pidof tierd)` draws it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/sim/engine.h"
#include "core/world.h"

/* Where the simulated process's pages start (an mmap-area address). */
#define SIM_BASE UINT64_C(0x7f0000000000)

struct sim_backend {
	struct tier_world b;
	struct tier_sim *sim;
	pid_t pid;		/* the simulated workload's: tierd's own */
	char name[96];
	/* The config's names the simulator and tracker_name keep: copies, as
	 * a reload frees the config they came from. */
	char *policy, *tracker;
	uint64_t interval_us;
	uint64_t sim_us;	/* simulated time run so far */
};

static int sim_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
		       struct tier_err *err)
{
	struct sim_backend *sb = b->priv;
	int ret;

	(void)loop;
	(void)now_us;
	sb->sim_us += sb->interval_us;
	ret = tier_sim_advance(sb->sim, sb->sim_us, err);
	if (ret < 0)
		return ret;
	return ret == 0 ? 1 : 0;
}

static void sim_stats(struct tier_world *b, struct tier_world_stats *st)
{
	struct sim_backend *sb = b->priv;
	struct tier_sim_result r;
	size_t i, j;

	tier_sim_result(sb->sim, 0, &r);
	memset(st, 0, sizeof(*st));
	st->promoted_bytes = r.promoted_bytes;
	st->demoted_bytes = r.demoted_bytes;
	st->has_moves_by_tier = true;
	for (i = 0; i < r.nr_tiers && i < TIER_MAX_TIERS; i++)
		for (j = 0; j < r.nr_tiers && j < TIER_MAX_TIERS; j++)
			st->moved_pages[i][j] = r.moved_bytes[i][j] >> b->env->page_shift;
	st->processes = 1;
	st->metadata_bytes = r.metadata_bytes;
	st->move_page_ns = r.move_page_ns;
	st->has_sim_figures = true;
	st->amat_ns = r.amat_ns;
	st->fast_access_ratio = r.fast_access_ratio;
}

static size_t sim_procs(struct tier_world *b, pid_t *pids, size_t max)
{
	struct sim_backend *sb = b->priv;

	if (max)
		pids[0] = sb->pid;
	return 1;
}

static int sim_extents(struct tier_world *b, pid_t pid,
		       void (*fn)(void *ctx, uint64_t addr, uint64_t page, uint64_t nr), void *ctx)
{
	struct sim_backend *sb = b->priv;

	if (pid != sb->pid)
		return -ESRCH;
	if (b->env->nr_pages)
		fn(ctx, SIM_BASE, 0, b->env->nr_pages);
	return 0;
}

static int sim_page_addr(struct tier_world *b, uint64_t page, pid_t *pid, uint64_t *addr,
			 uint64_t *run)
{
	struct sim_backend *sb = b->priv;

	if (page >= b->env->nr_pages)
		return -ENOENT;
	*pid = sb->pid;
	*addr = SIM_BASE + (page << b->env->page_shift);
	*run = b->env->nr_pages - page;
	return 0;
}

static void sim_destroy(struct tier_world *b)
{
	struct sim_backend *sb = b->priv;

	tier_sim_destroy(sb->sim);
	free(sb->policy);
	free(sb->tracker);
	free(sb);
}

int tier_sim_world_new(const struct tier_world_params *wp, struct tier_world **out,
		       struct tier_err *err)
{
	const struct tier_config *cfg = wp->cfg;
	const char *preset = wp->preset, *workload = wp->workload;
	struct sim_backend *sb = calloc(1, sizeof(*sb));
	bool named_tracker = cfg->tracker && strcmp(cfg->tracker, "auto");
	struct tier_sim_params p;
	int ret;

	if (!sb)
		return tier_err_set(err, -ENOMEM, "out of memory");
	sb->policy = strdup(cfg->policy);
	sb->tracker = named_tracker ? strdup(cfg->tracker) : NULL;
	if (!sb->policy || (named_tracker && !sb->tracker)) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out_free;
	}
	memset(&p, 0, sizeof(p));
	p.machine = preset;
	p.workload = workload;
	p.policy = sb->policy;
	p.tracker = sb->tracker;
	p.seed = 1;
	/* A daemon runs until stopped: a long simulated day. */
	p.duration_us = UINT64_C(86400) * 1000000;
	p.budget_bytes_per_s = cfg->budget_bytes_per_s;
	p.topology = wp->topology;
	ret = tier_sim_new(&p, &sb->sim, err);
	if (ret)
		goto out_free;
	if (!tier_sim_policy(sb->sim)) {
		ret = tier_err_set(err, -EINVAL, "policy '%s' is simulator-only", cfg->policy);
		goto out_sim;
	}
	snprintf(sb->name, sizeof(sb->name), "sim:%s", preset);
	sb->interval_us = cfg->interval_ms * 1000;
	sb->b.name = sb->name;
	sb->b.env = tier_sim_env(sb->sim);
	sb->b.env->interval_us = sb->interval_us;
	sb->b.env->budget_bytes_per_s = cfg->budget_bytes_per_s;
	sb->b.topo = sb->b.env->topo;
	sb->b.tracker = tier_sim_tracker(sb->sim, &sb->b.tracker_priv);
	sb->b.tracker_name = sb->tracker ? sb->tracker : tier_sim_policy(sb->sim)->default_tracker;
	sb->pid = getpid();
	sb->b.prepare = sim_prepare;
	sb->b.stats = sim_stats;
	sb->b.maps_gen = 1;	/* the simulated process never remaps */
	sb->b.procs = sim_procs;
	sb->b.extents = sim_extents;
	sb->b.page_addr = sim_page_addr;
	sb->b.destroy = sim_destroy;
	sb->b.priv = sb;
	*out = &sb->b;
	return 0;
out_sim:
	tier_sim_destroy(sb->sim);
out_free:
	free(sb->policy);
	free(sb->tracker);
	free(sb);
	return ret;
}
