/* world.c - this host as a world (core/world.h), for the daemon: built
 * in one call over the managed processes' memory (space.h), the best
 * tracker the kernel offers (tracker.h), move_pages(2) and the guard that
 * keeps the kernel's own tiering and damon_stat out of the way
 * (kernel_guard.h); driven a step at a time. The pieces it is made of:
 * world_impl.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/world_impl.h"

/* The trackers' waits on the kernel, handed to whoever set env.wait. */
static void lw_wait(void *arg, bool begin)
{
	struct linux_backend *lb = arg;

	if (lb->env.wait)
		lb->env.wait(lb->env.pause_ctx, begin);
}

struct lw_tiers_ctx {
	const struct linux_backend *lb;
	void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier);
	void *fctx;
};

static void lw_tier_of(void *ctx, uint64_t start, uint64_t end, uint8_t node)
{
	const struct lw_tiers_ctx *c = ctx;
	int rank = node == TIER_NODE_NONE ? -1 : c->lb->node_rank[node];

	c->fn(c->fctx, start, end, rank >= 0 ? (unsigned)rank : TIER_LINUX_TIER_NONE);
}

/* The trackers' view of where pages are: the space's (tier_linux_ctx.tiers). */
static void lw_tiers(void *arg, pid_t pid, uint64_t start, uint64_t end,
		     void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier), void *fctx)
{
	const struct linux_backend *lb = arg;
	struct lw_tiers_ctx c = { lb, fn, fctx };

	if (!lb->space) {
		fn(fctx, start, end, TIER_LINUX_TIER_NONE);
		return;
	}
	tier_linux_space_nodes(lb->space, pid, start, end, lw_tier_of, &c);
}

/* ... and when what it says may have changed: the space's pages' nodes
 * and extents, and the tiers of the nodes (tier_linux_ctx.tiers_gen). */
static uint64_t lw_tiers_gen(void *arg)
{
	const struct linux_backend *lb = arg;

	return (lb->space ? tier_linux_space_gen(lb->space) : 0) + lb->ranks_gen;
}

void tier__lw_say(const struct linux_backend *lb, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > lb->log_level)
		return;
	va_start(ap, fmt);
	tier_vsayf(lb->say_fn, lb->say_arg, level, fmt, ap);
	va_end(ap);
}

/* Whether the tracker wanted may run DAMON (auto picks a tracker with a
 * kdamond first). */
static bool wants_damon(const struct tier_config *cfg)
{
	const struct tier_linux_tracker_ops *t;

	if (!cfg->tracker || !strcmp(cfg->tracker, "auto"))
		return true;
	t = tier_linux_tracker_find(cfg->tracker);
	return t && t->kthreads;
}

/* Before the tracker's set_targets, which may start its kdamond or start
 * it again (6.12 restarts it when the count of targets changes): the
 * kdamond it holds goes into the state file as its index with any
 * thread, so that a tierd killed before the new thread's pid is saved
 * (tier__lw_sync_kdamond() after) has it stopped at the next start.
 * Recorded with the old thread's pid, such a kdamond is left running, and
 * the next start finds every kdamond running for someone else and cannot
 * take DAMON (tierd killed while the processes it manages come and go). */
void tier__lw_kdamond_starting(struct linux_backend *lb, const pid_t *pids, size_t nr)
{
	struct tier_err err = { "" };
	unsigned idx = UINT_MAX;
	pid_t pid = 0, *v;
	bool running;

	if (!lb->trk->kdamond)
		return;
	running = lb->trk->kdamond(lb->trk_priv, &idx, &pid);
	/* The same targets, the kdamond running: set_targets writes nothing
	 * and starts nothing (two writes of the state file each refresh,
	 * each synced, otherwise). */
	if (running && nr == lb->nr_marked_pids &&
	    (!nr || !memcmp(pids, lb->marked_pids, nr * sizeof(*pids))))
		return;
	v = nr ? realloc(lb->marked_pids, nr * sizeof(*v)) : lb->marked_pids;
	if (v) {
		if (nr)
			memcpy(v, pids, nr * sizeof(*v));
		lb->marked_pids = v;
		lb->nr_marked_pids = nr;
	} else {
		lb->nr_marked_pids = SIZE_MAX;	/* compared unequal: marked again */
	}
	if (idx != UINT_MAX && tier_linux_guard_kdamond(&lb->guard, true, idx, 0, &err))
		tier__lw_say(lb, LOG_WARNING, "%s", err.msg);
}

/* The kdamond the tracker runs goes into the state file, so that a start
 * after a crash stops it. */
void tier__lw_sync_kdamond(struct linux_backend *lb)
{
	struct tier_err err = { "" };
	unsigned idx = 0;
	pid_t pid = 0;
	bool running = lb->trk->kdamond && lb->trk->kdamond(lb->trk_priv, &idx, &pid);

	if (tier_linux_guard_kdamond(&lb->guard, running, idx, pid, &err))
		tier__lw_say(lb, LOG_WARNING, "%s", err.msg);
}

/* --- clock ----------------------------------------------------------------- */


/* Tierd's own successful moves so far (pages). */
static uint64_t own_moves(const struct linux_backend *lb)
{
	return lb->promoted_pages + lb->demoted_pages;
}

/* The kernel's churn counters as the baseline of the next turn. */
static void churn_mark(struct linux_backend *lb)
{
	lb->churn_ok = !tier_linux_churn_read(lb->ctx.procfs_root, &lb->churn);
	lb->churn_own = own_moves(lb);
}

/* Whether the picture is checked against numa_maps at this turn: when
 * the kernel's counters say pages moved by other hands than tierd's since
 * the last turn (vmstat.h), when they cannot be read, and at least every
 * VERIFY_QUIET_US. A check reads every managed mapping's numa_maps: 35-75
 * ms of a step under TCG for 1.3 GiB, in the steps where nothing else
 * moves anything. */
static bool verify_due(struct linux_backend *lb, uint64_t now_us)
{
	struct tier_linux_churn was = lb->churn;
	uint64_t own = own_moves(lb) - lb->churn_own;
	bool had = lb->churn_ok, due;

	churn_mark(lb);
	due = !had || !lb->churn_ok || now_us >= lb->next_full_verify_us;
	if (!due && tier_linux_churn_foreign(&was, &lb->churn, own)) {
		due = true;
		tier__lw_say(lb, LOG_DEBUG, "placement check: since the last turn the kernel "
			     "migrated %lld pages, tierd moved %llu; %lld swap-ins, %lld huge-page "
			     "collapses",
			     (long long)(lb->churn.migrated - was.migrated), (unsigned long long)own,
			     (long long)(lb->churn.swapped_in - was.swapped_in),
			     (long long)(lb->churn.collapsed - was.collapsed));
	}
	if (due)
		lb->next_full_verify_us = now_us + VERIFY_QUIET_US;
	else
		lb->verify_skipped++;
	return due;
}

static int linux_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			 struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	uint64_t cpu = tier_linux_thread_cpu_ns(), t;
	int ret;

	if (now_us >= lb->next_refresh_us) {
		uint64_t cost;

		ret = tier__lw_refresh(lb, loop, err);
		t = tier_linux_thread_cpu_ns();
		cost = t - cpu;
		lb->maps_cpu_ns += cost;
		cpu = t;
		if (ret)
			return ret;
		/* kept to its part of the steps' share (procs.h); the first,
		 * which catalogues every process anew, is a one-off */
		lb->refresh_gap_us = !lb->refresh_gap_us ? lb->refresh_us :
			tier_linux_refresh_gap_us(
			cost, lb->refresh_us,
			lb->max_cpu_percent * (lb->b.step_cpu_share > 0 ? lb->b.step_cpu_share : 1));
		lb->next_refresh_us = now_us + lb->refresh_gap_us;
		cpu += tier__lw_upkeep(lb, false);
	}
	/* New pages all at once (the policy cannot place a page whose node
	 * it does not know), then a round-robin share of the rest; read-only
	 * requests are answered between its chunks. */
	tier_linux_space_set_pause(lb->space, lb->env.pause, lb->env.pause_ctx);
	ret = tier_linux_space_query(lb->space,
				     tier_linux_space_nr_fresh(lb->space) + QUERY_PAGES_PER_STEP, err);
	t = tier_linux_thread_cpu_ns();
	lb->query_cpu_ns += t - cpu;
	cpu = t;
	/* Pages moved by someone else: where numa_maps disagrees with the
	 * picture, queried again now. After the new pages' query: before
	 * it, their mappings disagreed with a picture that had them on no
	 * node yet, and the next step queried the whole address space a
	 * second time (170 ms of a step under TCG for 1.3 GiB). */
	if (!ret && now_us >= lb->next_verify_us && verify_due(lb, now_us)) {
		long long q = tier_linux_space_verify(lb->space, VERIFY_MAX_PAGES);

		lb->next_verify_us = now_us + VERIFY_EVERY_US;
		lb->verify_done++;
		t = tier_linux_thread_cpu_ns();
		lb->verify_cpu_ns += t - cpu;
		cpu = t;
		if (q > 0) {
			struct tier_linux_space_diff d;

			tier_linux_space_last_diff(lb->space, &d);
			tier__lw_say(lb, LOG_DEBUG, "placement check: %lld pages to query again; pid %d's "
				     "mapping at %#llx has %llu/%llu/%llu/%llu pages on nodes 0-3, "
				     "%llu/%llu/%llu/%llu in the picture", q, (int)d.pid,
				     (unsigned long long)d.start,
				     (unsigned long long)d.theirs[0], (unsigned long long)d.theirs[1],
				     (unsigned long long)d.theirs[2], (unsigned long long)d.theirs[3],
				     (unsigned long long)d.mine[0], (unsigned long long)d.mine[1],
				     (unsigned long long)d.mine[2], (unsigned long long)d.mine[3]);
			lb->verify_queued += (uint64_t)q;
			ret = tier_linux_space_query(lb->space, tier_linux_space_nr_fresh(lb->space),
						     err);
			lb->query_cpu_ns += tier_linux_thread_cpu_ns() - cpu;
		}
	}
	tier__lw_sync_env(lb);
	tier__lw_upkeep(lb, false);
	/* New pages reach the policy with their nodes: it counts its
	 * chunks' pages per tier when they arrive, and only a rotating
	 * slice of them later (its victims in a full tier come from those
	 * counts). Told before the query, it saw every new page on no
	 * node, and found a twentieth of the fast tier's pages to exchange
	 * at its first steps. */
	if (lb->resize_pending) {
		struct tier_err rerr = { "" };
		int r = tier_loop_resize(loop, ret ? &rerr : err);

		lb->resize_pending = false;
		if (!ret)
			ret = r;
	}
	/* A full target node is normal under pressure (the policy spills to
	 * the next tier and makes room); say so at most every 10 s. */
	if (lb->nomem_moves > lb->nomem_logged && now_us - lb->nomem_log_us >= 10000000) {
		tier__lw_say(lb, LOG_INFO,
			  "%llu page moves found their target node full (ENOMEM); spilled to the next tier or retried after demotions",
			  (unsigned long long)(lb->nomem_moves - lb->nomem_logged));
		lb->nomem_logged = lb->nomem_moves;
		lb->nomem_log_us = now_us;
	}
	return ret;
}

/* The CPU of the kdamonds tierd ran: the one running now read from its
 * /proc/PID/stat, those before it as last read. False without kdamonds. */
static bool kdamond_cpu(struct linux_backend *lb, double *seconds)
{
	unsigned idx;
	pid_t pid = 0;
	double s;

	if (!lb->trk->kdamond)
		return false;
	if (!lb->trk->kdamond(lb->trk_priv, &idx, &pid))
		pid = 0;
	if (pid != lb->kdamond_pid) {
		lb->kdamond_cpu_done += lb->kdamond_cpu_last;
		lb->kdamond_cpu_last = 0;
		lb->kdamond_pid = pid;
	}
	if (pid && !tier_linux_cpu_seconds(&lb->ctx, pid, &s))
		lb->kdamond_cpu_last = s;
	*seconds = lb->kdamond_cpu_done + lb->kdamond_cpu_last;
	return true;
}

static void kthread_cpu(struct linux_backend *lb, struct tier_world_stats *st)
{
	st->has_kthread_cpu = kdamond_cpu(lb, &st->kthread_cpu_seconds);
}

/* The steps' share from what everything else tierd causes used lately:
 * the kdamonds' CPU and that of tierd's threads but the steps' own (the
 * tracker's thread, and the main thread's answers on the control socket:
 * 0.3-0.4 s a minute in the guest under a status every 0.5 s), read
 * again, its rate averaged (tier_linux_others_update()), from the
 * tracker threads' parts (what they may use) at start. Called in the step
 * thread. Where the tracker has no threads, the steps have it all
 * already. */
static void update_step_share(struct linux_backend *lb, uint64_t now)
{
	uint64_t proc = tier_linux_process_cpu_ns(), own = tier_linux_thread_cpu_ns();
	double cpu = 0, kd, pct;

	if (lb->step_share_own >= 1)
		return;
	if (kdamond_cpu(lb, &kd))
		cpu += kd;
	if (proc > own)
		cpu += (double)(proc - own) / 1e9;
	pct = tier_linux_others_update(&lb->others, now, cpu,
				       lb->max_cpu_percent * (1 - lb->step_share_own));
	lb->b.step_cpu_share = tier_linux_step_share(lb->step_share_own, lb->max_cpu_percent, pct);
}

/* Within a step too: the first one catalogues the address space and
 * moves the hot set for seconds, while a new kdamond samples at its
 * fastest (a third of a core under TCG) until its share is checked. */
#define UPKEEP_EVERY_US 1000000

uint64_t tier__lw_upkeep(struct linux_backend *lb, bool force)
{
	uint64_t now = tier_linux_now_us(), cpu;

	if (!force && now < lb->upkeep_due_us)
		return 0;
	cpu = tier_linux_thread_cpu_ns();
	lb->upkeep_due_us = now + UPKEEP_EVERY_US;
	if (lb->trk->maintain)
		lb->trk->maintain(lb->trk_priv);
	update_step_share(lb, now);
	return tier_linux_thread_cpu_ns() - cpu;
}

static void linux_maintain(struct tier_world *b)
{
	tier__lw_upkeep(b->priv, true);
}

static void linux_ahead(struct tier_world *b, uint64_t step_us)
{
	struct linux_backend *lb = b->priv;

	if (lb->trk->ahead)
		lb->trk->ahead(lb->trk_priv, step_us);
}

static bool linux_news(struct tier_world *b)
{
	struct linux_backend *lb = b->priv;

	return !lb->trk->news || lb->trk->news(lb->trk_priv);
}

static void linux_stats(struct tier_world *b, struct tier_world_stats *st)
{
	struct linux_backend *lb = b->priv;
	uint64_t page = UINT64_C(1) << lb->env.page_shift;

	memset(st, 0, sizeof(*st));
	st->promoted_bytes = lb->promoted_pages * page;
	st->demoted_bytes = lb->demoted_pages * page;
	st->failed_moves = lb->failed_moves;
	st->has_moves_by_tier = true;
	memcpy(st->moved_pages, lb->moved_pages, sizeof(st->moved_pages));
	memcpy(st->failed_by_reason, lb->failed_by_reason, sizeof(st->failed_by_reason));
	st->has_tracker_cpu = true;
	st->tracker_cpu_seconds = (double)lb->tracker_cpu_ns / 1e9;
	st->has_step_cpu = true;
	st->maps_cpu_seconds = (double)lb->maps_cpu_ns / 1e9;
	st->verify_cpu_seconds = (double)lb->verify_cpu_ns / 1e9;
	st->query_cpu_seconds = (double)lb->query_cpu_ns / 1e9;
	st->move_cpu_seconds = (double)lb->move_cpu_ns / 1e9;
	st->move_wall_seconds = (double)lb->move_wall_ns / 1e9;
	st->move_page_ns = tier_linux_move_page_ns(lb->move_cpu_ns, lb->moves_done);
	{
		struct tier_linux_migrate_stats ms;

		tier_linux_space_migrate_stats(lb->space, &ms);
		st->pagemap_pages = ms.pagemap_pages;
		st->queried_pages = ms.queried_pages;
	}
	st->rechecked_pages = lb->verify_queued;
	st->placement_checks = lb->verify_done;
	st->placement_checks_skipped = lb->verify_skipped;
	st->refresh_interval_ms = (double)(lb->refresh_gap_us ? lb->refresh_gap_us : lb->refresh_us) / 1e3;
	st->processes = lb->nr_procs;
	/* page_node + page_owner per page, plus the id map. */
	st->metadata_bytes = lb->env.nr_pages * 2;
	st->split_huge_pages = lb->splits;
	kthread_cpu(lb, st);
	if (lb->trk->stats) {
		struct tier_linux_tracker_stats ts;

		lb->trk->stats(lb->trk_priv, &ts);
		st->tracker_faults = ts.workload_faults;
		st->tracker_fault_seconds = (double)ts.workload_fault_ns / 1e9;
		st->tracker_fault_ns = ts.fault_ns;
		st->tracker_fault_ns_seen = ts.fault_ns_seen;
		st->tracker_period_us = ts.period_us;
		st->tracker_rounds = ts.rounds;
		st->tracker_dropped = ts.dropped;
		st->tracker_scan_reads = ts.scan_reads;
		st->tracker_restarts = ts.restarts;
		memcpy(st->tracker_read_us, ts.read_us, sizeof(st->tracker_read_us));
		memcpy(st->tracker_read_wall_us, ts.read_wall_us, sizeof(st->tracker_read_wall_us));
		memcpy(st->tracker_read_pages, ts.read_pages, sizeof(st->tracker_read_pages));
		memcpy(st->tracker_read_ran_us, ts.read_ran_us, sizeof(st->tracker_read_ran_us));
		st->tracker_nr_reads = ts.nr_reads;
		st->tracker_writer_time = tier_linux_writer_time_name(ts.writer_time);
	}
	if (lb->env.page_huge) {
		uint64_t k, blocks = lb->env.nr_pages >> lb->env.huge_shift;

		for (k = 0; k < blocks; k++)
			st->huge_pages += lb->env.page_huge[k] != 0;
	}
}

static int linux_page_of(struct tier_world *b, pid_t pid, uint64_t addr, uint64_t *page)
{
	struct linux_backend *lb = b->priv;
	size_t slot, nr = tier_linux_space_nr_procs(lb->space);

	for (slot = 0; slot < nr; slot++)
		if (tier_linux_space_proc_pid(lb->space, slot) == pid)
			break;
	if (slot == nr)
		return -ESRCH;
	return tier_linux_space_page(lb->space, pid, addr & ~UINT64_C(4095), page) ? 0 : -ENOENT;
}

static size_t linux_procs(struct tier_world *b, pid_t *pids, size_t max)
{
	struct linux_backend *lb = b->priv;
	size_t slot, nr = tier_linux_space_nr_procs(lb->space), n = 0;

	for (slot = 0; slot < nr; slot++) {
		pid_t pid = tier_linux_space_proc_pid(lb->space, slot);

		if (!pid)
			continue;
		if (n < max)
			pids[n] = pid;
		n++;
	}
	return n;
}

static int linux_extents(struct tier_world *b, pid_t pid,
			 void (*fn)(void *ctx, uint64_t addr, uint64_t page, uint64_t nr), void *ctx)
{
	struct linux_backend *lb = b->priv;

	return tier_linux_space_extents(lb->space, pid, fn, ctx);
}

static int linux_page_addr(struct tier_world *b, uint64_t page, pid_t *pid, uint64_t *addr,
			   uint64_t *run)
{
	struct linux_backend *lb = b->priv;

	return tier_linux_space_run(lb->space, page, pid, addr, run);
}

/* tierd's CPU budget is for all it causes: equal parts for its steps
 * (tierd/step.c), the tracker's kernel threads and the tracker's own
 * thread, as far as it runs them; the steps also take what the threads
 * leave (update_step_share()). At start, and again when a reload changes
 * daemon.max_cpu_percent: the tracker keeps its new parts from then on. */
static void split_budget(struct linux_backend *lb, const struct tier_config *cfg)
{
	lb->step_share_own = tier_linux_tracker_budget(lb->trk, (double)cfg->max_cpu_percent,
						       &lb->ctx.kthread_cpu_percent,
						       &lb->ctx.thread_cpu_percent);
	lb->max_cpu_percent = (double)cfg->max_cpu_percent;
	lb->b.step_cpu_share = lb->others.at_us ?
			       tier_linux_step_share(lb->step_share_own, lb->max_cpu_percent,
						     lb->others.percent) :
			       lb->step_share_own;
	if (lb->trk_priv && lb->trk->set_budget)
		lb->trk->set_budget(lb->trk_priv, lb->ctx.kthread_cpu_percent,
				    lb->ctx.thread_cpu_percent);
}

static void linux_reconfigure(struct tier_world *b, const struct tier_config *cfg)
{
	struct linux_backend *lb = b->priv;

	if (tier__lw_copy_selection(lb, cfg))
		tier__lw_say(lb, LOG_ERR, "reload: out of memory copying the process selection");
	lb->next_refresh_us = 0;	/* apply at the next step */
	if ((double)cfg->max_cpu_percent != lb->max_cpu_percent)
		split_budget(lb, cfg);
}

static int linux_retopology(struct tier_world *b, const struct tier_topology_spec *spec,
			    struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	struct tier_linux_topology lt = { .sysfs_root = lb->ctx.sysfs_root };
	struct tier_topology fresh;
	int ret = tier_topology_build(&tier_linux_topology_ops, &lt, spec, &fresh, err);

	if (ret)
		return ret;
	/* env->topo points at lb->topo: the new one takes its place. */
	tier_topology_release(&lb->topo);
	lb->topo = fresh;
	tier_node_rank_map(&lb->topo, lb->node_rank);
	lb->ranks_gen++;
	return 0;
}

static void linux_destroy(struct tier_world *b)
{
	struct linux_backend *lb = b->priv;
	struct tier_err err = { "" };

	if (lb->trk_priv)
		lb->trk->destroy(lb->trk_priv);
	if (lb->guard_open) {
		tier_linux_guard_kdamond(&lb->guard, false, 0, 0, NULL);
		if (tier_linux_guard_close(&lb->guard, &err))
			tier__lw_say(lb, LOG_ERR, "putting back the kernel's settings: %s (%s keeps "
				  "them for the next start or tierd --restore)", err.msg,
				  lb->guard.state_path);
	}
	if (lb->space)
		tier_linux_space_destroy(lb->space);
	tier_topology_release(&lb->topo);
	tier__lw_free_selection(lb);
	free(lb->hints);
	free(lb->marked_pids);
	free(lb->page_hint);
	free(lb->sysfs_root);
	free(lb);
}

int tier_linux_world_new(const struct tier_world_params *p, struct tier_world **out,
			 struct tier_err *err)
{
	const struct tier_config *cfg = p->cfg;
	struct linux_backend *lb = calloc(1, sizeof(*lb));
	struct tier_linux_topology lt = { .sysfs_root = cfg->sysfs_root };
	char why[1024] = "";
	int ret;

	if (!lb)
		return tier_err_set(err, -ENOMEM, "out of memory");
	lb->sysfs_root = strdup(cfg->sysfs_root);
	if (!lb->sysfs_root) {
		free(lb);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	lb->say_fn = p->say;
	lb->say_arg = p->say_arg;
	lb->log_level = p->log_level;
	lb->ctx.sysfs_root = lb->sysfs_root;
	lb->ctx.procfs_root = "/proc";
	lb->ctx.debugfs_root = "/sys/kernel/debug";
	lb->ctx.wait = lw_wait;
	lb->ctx.wait_arg = lb;
	lb->ctx.tiers = lw_tiers;
	lb->ctx.tiers_gen = lw_tiers_gen;
	lb->ctx.tiers_arg = lb;
	ret = tier_topology_build(&tier_linux_topology_ops, &lt, p->topology, &lb->topo, err);
	if (ret)
		goto out_free;
	if (lb->topo.nr_tiers < 2)
		tier__lw_say(lb, LOG_WARNING,
			  "this host has one memory tier: nothing to place (try --machine sim:dram-cxl)");
	tier_node_rank_map(&lb->topo, lb->node_rank);
	/* The kernel's settings: a crashed tierd's leftovers first, then
	 * DAMON freed from damon_stat before the trackers are probed. */
	ret = tier_linux_guard_open(&lb->guard, &lb->ctx, cfg->state_file, p->say, p->say_arg,
				    err);
	if (ret)
		goto out_free;
	lb->guard_open = true;
	if (wants_damon(cfg)) {
		ret = tier_linux_guard_damon_stat(&lb->guard,
						  cfg->damon_stat == TIER_CONFIG_DS_DISABLE, err);
		if (ret)
			goto out_free;
	}
	ret = tier__lw_copy_selection(lb, cfg);
	if (ret) {
		tier_err_set(err, ret, "out of memory");
		goto out_free;
	}
	ret = tier_linux_tracker_pick(&lb->ctx, cfg->tracker, &lb->trk, why, sizeof(why));
	if (ret && cfg->tracker && strcmp(cfg->tracker, "auto")) {
		/* The tracker the configuration names cannot run: one line. */
		why[strcspn(why, "\n")] = '\0';
		tier_err_set(err, ret, "policy.tracker: %s cannot run here: %s", cfg->tracker, why);
		goto out_free;
	}
	{
		/* One log line per tracker that cannot run here, and why. */
		char *line, *save = NULL;

		for (line = strtok_r(why, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			tier__lw_say(lb, ret ? LOG_ERR : LOG_INFO, "tracker %s", line);
	}
	if (ret) {
		tier_err_set(err, ret, "no usable hotness tracker (see the lines above)");
		goto out_free;
	}
	split_budget(lb, cfg);	/* before the tracker: its parts go in lb->ctx */
	/* The first step queries every page it finds: nothing to check
	 * before the counters say something else moved pages. */
	churn_mark(lb);
	lb->next_full_verify_us = tier_linux_now_us() + VERIFY_QUIET_US;
	ret = tier_linux_space_new(&lb->ctx, 12, &lb->space, err);
	if (ret)
		goto out_free;
	ret = lb->trk->create(&lb->ctx, cfg->interval_ms * 1000, &lb->trk_priv, err);
	if (ret) {
		lb->trk_priv = NULL;
		goto out_free;
	}
	if (lb->trk->hint_faults && cfg->kernel_tiering != TIER_CONFIG_KT_DISABLE) {
		ret = tier_err_set(err, -EINVAL, "policy.tracker: %s needs daemon.kernel_tiering: "
				   "disable (tierd sets the kernel's NUMA balancing to take hint "
				   "faults and move nothing while it runs)", lb->trk->name);
		goto out_free;
	}
	ret = lb->trk->hint_faults ? tier_linux_guard_hint_faults(&lb->guard, err) :
		tier_linux_guard_kernel_tiering(&lb->guard,
						cfg->kernel_tiering == TIER_CONFIG_KT_DISABLE, err);
	if (ret)
		goto out_free;
	lb->core_trk.name = lb->trk->name;
	lb->core_trk.kinds = lb->trk->kinds;
	lb->core_trk.collect = tier__lw_collect;
	lb->env.topo = &lb->topo;
	lb->env.page_shift = 12;
	lb->env.obs_kinds = lb->trk->kinds;
	lb->env.migrator = &tier__lw_migrator;
	lb->env.migrator_priv = lb;
	lb->env.mem = &tier_linux_mem_ops;
	lb->env.mem_priv = lb->space;
	lb->env.clock = &tier_linux_clock_ops;
	lb->env.clock_priv = lb;
	lb->env.budget_bytes_per_s = cfg->budget_bytes_per_s;
	lb->env.budget_starts_full = true;
	/* A move_pages call of 256 pages holds the target's mmap lock for
	 * well under a millisecond. */
	lb->env.max_batch = 256;
	lb->env.interval_us = cfg->interval_ms * 1000;
	lb->env.work_units = &lb->work_units;
	tier__lw_sync_env(lb);
	lb->b.name = "linux";
	lb->b.tracker_name = lb->trk->name;
	lb->b.topo = &lb->topo;
	lb->b.env = &lb->env;
	lb->b.tracker = &lb->core_trk;
	lb->b.tracker_priv = lb;
	lb->b.prepare = linux_prepare;
	lb->b.stats = linux_stats;
	lb->b.reconfigure = linux_reconfigure;
	lb->b.maintain = linux_maintain;
	lb->b.ahead = linux_ahead;
	lb->b.news = linux_news;
	lb->b.retopology = linux_retopology;
	lb->b.hint = tier__lw_hint;
	lb->b.set_groups = tier__lw_set_groups;
	lb->b.group_stat = tier__lw_group_stat;
	lb->b.page_of = linux_page_of;
	lb->b.procs = linux_procs;
	lb->b.extents = linux_extents;
	lb->b.page_addr = linux_page_addr;
	lb->b.destroy = linux_destroy;
	lb->b.priv = lb;
	*out = &lb->b;
	return 0;
out_free:
	lb->b.priv = lb;
	linux_destroy(&lb->b);
	return ret;
}

