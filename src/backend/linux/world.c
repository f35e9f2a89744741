/* world.c - this host as a world (core/world.h), for the daemon: the managed processes'
 * memory (backend/linux/space), the best available tracker
 * (backend/linux/tracker), move_pages(2), and the kernel's own tiering kept
 * from fighting tierd (backend/linux/kernel_tiering). */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <syslog.h>
#include <unistd.h>

#include "backend/linux/cgroup.h"
#include "backend/linux/kernel_guard.h"
#include "backend/linux/procs.h"
#include "backend/linux/space.h"
#include "backend/linux/topology.h"
#include "backend/linux/tracker.h"
#include "core/world.h"

/* Pages whose node is re-queried per step (move_pages with nodes = NULL),
 * round robin: what the kernel moved behind tierd's back (reclaim,
 * compaction) shows within nr_pages / this many steps. A status query
 * walks the page tables page by page; 16384 a step keeps it a small part
 * of the step. */
#define QUERY_PAGES_PER_STEP 16384

struct linux_backend {
	struct tier_world b;
	struct tier_env env;
	struct tier_topology topo;
	struct tier_linux_ctx ctx;
	struct tier_linux_space *space;
	const struct tier_linux_tracker_ops *trk;
	void *trk_priv;
	struct tier_tracker_ops core_trk;
	tier_say_fn say_fn;
	void *say_arg;
	int log_level;
	struct tier_loop *loop;		/* for forget() during an update */
	int node_rank[256];
	/* selection */
	pid_t *sel_pids;
	size_t nr_sel_pids;
	char **cgroups;
	size_t nr_cgroups;
	char *exe_pattern;
	uint64_t min_rss_bytes;
	uint64_t refresh_us;
	uint64_t next_refresh_us;
	size_t nr_procs;
	/* accounting */
	uint64_t work_units;
	uint64_t promoted_pages, demoted_pages, failed_moves;
	uint64_t nomem_moves, nomem_logged;	/* -ENOMEM: the target node was full */
	uint64_t nomem_log_us;
	uint64_t splits;			/* huge pages split */
	pid_t kdamond_pid;			/* the kdamond whose CPU is read */
	double kdamond_cpu_done;		/* CPU of the kdamonds before it */
	double kdamond_cpu_last;		/* its CPU when last read */
	bool huge_warned, split_warned;
	struct tier_linux_guard guard;	/* kernel settings changed, state file */
	bool guard_open;
	unsigned select_warnings;
	char last_select_error[512];
	/* intent */
	struct hint *hints;
	size_t nr_hints, cap_hints;
	uint8_t *page_hint;		/* [env.nr_pages] */
	uint64_t page_hint_len;
	/* control groups: rule i is group i + 1 */
	struct tier_groups groups;
	size_t nr_rules;
	char rule_path[TIER_CONFIG_MAX_CGROUPS][512];	/* as configured */
	char rule_rel[TIER_CONFIG_MAX_CGROUPS][512];	/* as /proc/PID/cgroup shows */
	char cgroup_mount[512];
};

struct hint {
	pid_t pid;
	uint64_t start, end;		/* page-aligned addresses */
	uint8_t advice;			/* enum tier_hint */
};

static void say(const struct linux_backend *lb, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(const struct linux_backend *lb, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!lb->say_fn || level > lb->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lb->say_fn(lb->say_arg, level, msg);
}

/* Whether the tracker wanted may be DAMON (auto picks it first). */
static bool wants_damon(const struct tier_config *cfg)
{
	return !cfg->tracker || !strcmp(cfg->tracker, "auto") || !strcmp(cfg->tracker, "damon");
}

/* The kdamond the tracker runs goes into the state file, so that a start
 * after a crash stops it. */
static void sync_kdamond(struct linux_backend *lb)
{
	struct tier_err err = { "" };
	unsigned idx = 0;
	pid_t pid = 0;
	bool running = lb->trk->kdamond && lb->trk->kdamond(lb->trk_priv, &idx, &pid);

	if (tier_linux_guard_kdamond(&lb->guard, running, idx, pid, &err))
		say(lb, LOG_WARNING, "%s", err.msg);
}

/* --- tracker adapter: address observations -> dense ones ----------------- */

/* Observations of the first few processes per collect, for the debug log. */
#define SEEN_PIDS 4

struct collect_ctx {
	struct linux_backend *lb;
	void (*sink)(void *, const struct tier_obs *, size_t);
	void *sink_ctx;
	pid_t pid[SEEN_PIDS];
	uint64_t obs[SEEN_PIDS], accessed_kib[SEEN_PIDS];
};

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
		cc->obs[k]++;
		if (obs[i].count)
			cc->accessed_kib[k] += (obs[i].end - obs[i].start) >> 10;
	}
	tier_linux_space_translate(cc->lb->space, obs, n, cc->sink, cc->sink_ctx);
}

static int adapter_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
			   void *ctx, struct tier_err *err)
{
	struct linux_backend *lb = priv;
	struct collect_ctx cc = { lb, sink, ctx, { 0 }, { 0 }, { 0 } };
	int ret = lb->trk->collect(lb->trk_priv, addr_sink, &cc, err);

	if (lb->log_level >= LOG_DEBUG) {
		char line[256] = "";
		size_t k, off = 0;

		for (k = 0; k < SEEN_PIDS && cc.pid[k] && off < sizeof(line); k++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						" pid %d: %llu regions, %llu KiB accessed;", (int)cc.pid[k],
						(unsigned long long)cc.obs[k],
						(unsigned long long)cc.accessed_kib[k]);
		say(lb, LOG_DEBUG, "tracker %s:%s", lb->trk->name, line[0] ? line : " nothing");
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

	/* In chunks, remembering each page's rank before the move. */
	while (done < n) {
		size_t k = n - done < 1024 ? n - done : 1024;
		long moved;

		for (i = 0; i < k; i++) {
			uint8_t nd = lb->env.page_node[pages[done + i]];

			from[i] = nd == TIER_NODE_NONE ? -1 : lb->node_rank[nd];
		}
		moved = tier_linux_migrator_ops.move(lb->space, pages + done, nodes + done,
						     status + done, k);
		if (moved < 0)
			return total ? total : moved;
		for (i = 0; i < k; i++) {
			int st = status[done + i];

			if (st < 0) {
				lb->failed_moves++;
				if (st == -ENOMEM)
					lb->nomem_moves++;
				continue;
			}
			if (from[i] < 0 || st >= 256)
				continue;
			if (lb->node_rank[st] < from[i])
				lb->promoted_pages++;
			else if (lb->node_rank[st] > from[i])
				lb->demoted_pages++;
		}
		total += moved;
		done += k;
	}
	return total;
}

static const struct tier_migrator_ops counted_migrator_nosplit = {
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
		say(lb, LOG_WARNING,
			  "huge pages cannot be split (/sys/kernel/debug/split_huge_pages: %s); they are placed whole",
			  strerror(-ret));
		lb->split_warned = true;
		lb->env.migrator = &counted_migrator_nosplit;
	}
	return ret;
}

static const struct tier_migrator_ops counted_migrator = {
	.name = "move_pages",
	.move = counted_move,
	.split = counted_split,
};

/* --- clock ----------------------------------------------------------------- */

static uint64_t linux_now_us(void *priv)
{
	struct timespec ts;

	(void)priv;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static const struct tier_clock_ops linux_clock = {
	.name = "monotonic",
	.now_us = linux_now_us,
};

/* --- refresh ---------------------------------------------------------------- */

static void forget_range(void *ctx, uint64_t first, uint64_t nr)
{
	struct linux_backend *lb = ctx;

	if (lb->loop)
		tier_loop_forget(lb->loop, first, nr);
}

static void sync_env(struct linux_backend *lb)
{
	lb->env.nr_pages = tier_linux_space_nr_pages(lb->space);
	lb->env.page_node = tier_linux_space_page_node(lb->space);
	lb->env.page_owner = tier_linux_space_page_owner(lb->space);
	lb->env.huge_shift = tier_linux_space_huge_shift(lb->space);
	lb->env.page_huge = tier_linux_space_page_huge(lb->space);
}

/* Which blocks of pages are transparent huge pages now (they move whole;
 * their accessed bits speak for 512 pages): after each update of the
 * address space, every refresh_ms (huge pages come and go at the pace of
 * faults and khugepaged; a split tierd asks for updates the map itself).
 * Without PAGEMAP_SCAN (Linux before 6.7) every page counts as a base
 * page, said once. */
static void scan_huge(struct linux_backend *lb)
{
	int ret = tier_linux_space_scan_huge(lb->space);

	if (ret == -EOPNOTSUPP && !lb->huge_warned) {
		say(lb, LOG_INFO,
			  "the kernel has no PAGEMAP_SCAN (Linux 6.7): transparent huge pages are placed as 4 KiB pages");
		lb->huge_warned = true;
	}
}

/* Lays the hints over the dense pages (after every update of the space:
 * ids come and go). A hint none of whose pages is mapped any more - the
 * range was unmapped or the process exited - is dropped. */
static int apply_hints(struct linux_backend *lb)
{
	uint64_t n = lb->env.nr_pages;
	size_t h, keep = 0;

	if (n > lb->page_hint_len) {
		uint8_t *ph = realloc(lb->page_hint, n);

		if (!ph)
			return -ENOMEM;
		lb->page_hint = ph;
		lb->page_hint_len = n;
	}
	if (n)
		memset(lb->page_hint, TIER_HINT_NONE, n);
	for (h = 0; h < lb->nr_hints; h++) {
		struct hint *hi = &lb->hints[h];
		uint64_t a, page, mapped = 0;

		for (a = hi->start; a < hi->end; a += 4096) {
			if (!tier_linux_space_page(lb->space, hi->pid, a, &page) || page >= n)
				continue;
			lb->page_hint[page] = hi->advice;
			mapped++;
		}
		if (mapped)
			lb->hints[keep++] = *hi;
	}
	lb->nr_hints = keep;
	lb->env.page_hint = n ? lb->page_hint : NULL;
	return 0;
}

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Puts each managed process's slot in the group of the deepest rule
 * whose cgroup holds it (group 0: none). */
static void map_groups(struct linux_backend *lb)
{
	size_t slot, nr = tier_linux_space_nr_procs(lb->space), i;
	struct tier_err err = { "" };
	char cg[512];

	memset(lb->groups.owner_group, 0, sizeof(lb->groups.owner_group));
	if (!lb->nr_rules)
		return;
	for (slot = 0; slot < nr && slot < 255; slot++) {
		pid_t pid = tier_linux_space_proc_pid(lb->space, slot);
		size_t best = 0, best_len = 0;

		if (!pid || tier_linux_proc_cgroup(&lb->ctx, pid, cg, sizeof(cg), &err))
			continue;
		for (i = 0; i < lb->nr_rules; i++) {
			size_t l = strlen(lb->rule_rel[i]);

			if (tier_linux_cgroup_contains(lb->rule_rel[i], cg) && l >= best_len) {
				best = i + 1;
				best_len = l;
			}
		}
		lb->groups.owner_group[slot] = (uint8_t)best;
	}
}

static int refresh(struct linux_backend *lb, struct tier_loop *loop, struct tier_err *err)
{
	const char *cgroups[64 + TIER_CONFIG_MAX_CGROUPS];
	struct tier_linux_select sel = {
		.pids = lb->sel_pids,
		.nr_pids = lb->nr_sel_pids,
		.cgroups = (const char *const *)lb->cgroups,
		.nr_cgroups = lb->nr_cgroups,
		.exe_pattern = lb->exe_pattern,
		.min_rss_bytes = lb->min_rss_bytes,
	};
	/* An explicit selection takes in the ruled cgroups too (the default,
	 * every large process, has them already). */
	if ((lb->nr_sel_pids || lb->nr_cgroups) && lb->nr_rules && lb->nr_cgroups <= 64) {
		size_t i;

		for (i = 0; i < lb->nr_cgroups; i++)
			cgroups[i] = lb->cgroups[i];
		for (i = 0; i < lb->nr_rules; i++)
			cgroups[lb->nr_cgroups + i] = lb->rule_path[i];
		sel.cgroups = cgroups;
		sel.nr_cgroups = lb->nr_cgroups + lb->nr_rules;
	}
	uint64_t before = lb->env.nr_pages;
	pid_t *pids = NULL;
	size_t nr = 0;
	int ret;

	ret = tier_linux_select_processes(&lb->ctx, &sel, &pids, &nr, err);
	if (ret == -ENOENT) {
		/* A configured cgroup is gone: the others are still managed.
		 * Say so when the message changes, not every refresh. */
		if (strcmp(err->msg, lb->last_select_error)) {
			say(lb, LOG_WARNING, "process selection: %s", err->msg);
			snprintf(lb->last_select_error, sizeof(lb->last_select_error), "%s", err->msg);
		}
		tier_err_clear(err);
	} else if (ret) {
		free(pids);
		if (lb->select_warnings++ < 3)
			say(lb, LOG_WARNING, "process selection: %s", err->msg);
		tier_err_clear(err);
		return 0;
	} else {
		lb->last_select_error[0] = '\0';
	}
	{
		/* A process that stated intent is managed whatever its size.
		 * kill(pid, 0) fails with EPERM for another user's process
		 * (tierd keeps no CAP_KILL): only ESRCH means it is gone. */
		size_t h;

		for (h = 0; h < lb->nr_hints; h++) {
			pid_t *np;

			if (pid_listed(pids, nr, lb->hints[h].pid) ||
			    (kill(lb->hints[h].pid, 0) && errno == ESRCH))
				continue;
			np = realloc(pids, (nr + 1) * sizeof(*np));
			if (!np)
				break;
			pids = np;
			pids[nr++] = lb->hints[h].pid;
		}
	}
	if (nr != lb->nr_procs)
		say(lb, LOG_INFO, "managing %zu process%s", nr, nr == 1 ? "" : "es");
	lb->nr_procs = nr;
	lb->loop = loop;
	ret = tier_linux_space_update(lb->space, pids, nr, forget_range, lb, err);
	lb->loop = NULL;
	lb->b.maps_gen++;
	if (!ret) {
		ret = lb->trk->set_targets(lb->trk_priv, pids, nr, err);
		sync_kdamond(lb);
	}
	free(pids);
	if (ret)
		return ret;
	scan_huge(lb);
	sync_env(lb);
	map_groups(lb);
	ret = apply_hints(lb);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	if (lb->env.nr_pages > before)
		ret = tier_loop_resize(loop, err);
	return ret;
}

static int linux_hint(struct tier_world *b, pid_t pid, uint64_t addr, uint64_t len,
		      int advice, struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	uint64_t start, end;
	size_t h;

	if (!len || addr + len < addr)
		return tier_err_set(err, -EINVAL, "hint: empty or wrapping range");
	if (advice < 0 || advice >= TIER_HINT__COUNT)
		return tier_err_set(err, -EINVAL, "hint: unknown advice %d", advice);
	if (kill(pid, 0) && errno == ESRCH)
		return tier_err_set(err, -ESRCH, "hint: no process %d", (int)pid);
	start = addr & ~UINT64_C(4095);
	end = (addr + len + 4095) & ~UINT64_C(4095);
	/* The new hint replaces what older ones said of its range: rebuild
	 * the list, cutting overlapping hints down to what lies outside. */
	{
		size_t cap = 2 * lb->nr_hints + 1;
		struct hint *nh = calloc(cap, sizeof(*nh));
		size_t n = 0;

		if (!nh)
			return tier_err_set(err, -ENOMEM, "out of memory");
		for (h = 0; h < lb->nr_hints; h++) {
			struct hint hi = lb->hints[h];

			if (hi.pid != pid || hi.end <= start || hi.start >= end) {
				nh[n++] = hi;
				continue;
			}
			if (hi.start < start) {
				nh[n] = hi;
				nh[n++].end = start;
			}
			if (hi.end > end) {
				nh[n] = hi;
				nh[n++].start = end;
			}
		}
		if (advice != TIER_HINT_NONE)
			nh[n++] = (struct hint){ pid, start, end, (uint8_t)advice };
		free(lb->hints);
		lb->hints = nh;
		lb->nr_hints = n;
		lb->cap_hints = cap;
	}
	lb->next_refresh_us = 0;	/* take the process in, lay the hint, next step */
	say(lb, LOG_INFO, "hint: pid %d [0x%llx, 0x%llx) %d", (int)pid,
		  (unsigned long long)start, (unsigned long long)end, advice);
	return 0;
}

static int linux_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			 struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	int ret;

	if (now_us >= lb->next_refresh_us) {
		ret = refresh(lb, loop, err);
		if (ret)
			return ret;
		lb->next_refresh_us = now_us + lb->refresh_us;
	}
	/* New pages all at once (the policy cannot place a page whose node
	 * it does not know), then a round-robin share of the rest. */
	ret = tier_linux_space_query(lb->space,
				     tier_linux_space_nr_fresh(lb->space) + QUERY_PAGES_PER_STEP, err);
	sync_env(lb);
	/* A full target node is normal under pressure (the policy spills to
	 * the next tier and makes room); say so at most every 10 s. */
	if (lb->nomem_moves > lb->nomem_logged && now_us - lb->nomem_log_us >= 10000000) {
		say(lb, LOG_INFO,
			  "%llu page moves found their target node full (ENOMEM); spilled to the next tier or retried after demotions",
			  (unsigned long long)(lb->nomem_moves - lb->nomem_logged));
		lb->nomem_logged = lb->nomem_moves;
		lb->nomem_log_us = now_us;
	}
	return ret;
}

/* The CPU of the kdamonds tierd ran: the one running now read from its
 * /proc/PID/stat, those before it as last read. */
static void kthread_cpu(struct linux_backend *lb, struct tier_world_stats *st)
{
	unsigned idx;
	pid_t pid = 0;
	double s;

	if (!lb->trk->kdamond)
		return;
	if (!lb->trk->kdamond(lb->trk_priv, &idx, &pid))
		pid = 0;
	if (pid != lb->kdamond_pid) {
		lb->kdamond_cpu_done += lb->kdamond_cpu_last;
		lb->kdamond_cpu_last = 0;
		lb->kdamond_pid = pid;
	}
	if (pid && !tier_linux_cpu_seconds(&lb->ctx, pid, &s))
		lb->kdamond_cpu_last = s;
	st->has_kthread_cpu = true;
	st->kthread_cpu_seconds = lb->kdamond_cpu_done + lb->kdamond_cpu_last;
}

static void linux_stats(struct tier_world *b, struct tier_world_stats *st)
{
	struct linux_backend *lb = b->priv;
	uint64_t page = UINT64_C(1) << lb->env.page_shift;

	memset(st, 0, sizeof(*st));
	st->promoted_bytes = lb->promoted_pages * page;
	st->demoted_bytes = lb->demoted_pages * page;
	st->failed_moves = lb->failed_moves;
	st->processes = lb->nr_procs;
	/* page_node + page_owner per page, plus the id map. */
	st->metadata_bytes = lb->env.nr_pages * 2;
	st->split_huge_pages = lb->splits;
	kthread_cpu(lb, st);
	if (lb->trk->stats) {
		struct tier_linux_tracker_stats ts;

		lb->trk->stats(lb->trk_priv, &ts);
		st->tracker_faults = ts.workload_faults;
		st->tracker_period_us = ts.period_us;
	}
	if (lb->env.page_huge) {
		uint64_t k, blocks = lb->env.nr_pages >> lb->env.huge_shift;

		for (k = 0; k < blocks; k++)
			st->huge_pages += lb->env.page_huge[k] != 0;
	}
}

static int linux_set_groups(struct tier_world *b, const struct tier_config_cgroup *rules,
			    size_t n, struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	size_t i;

	if (n > TIER_CONFIG_MAX_CGROUPS)
		return tier_err_set(err, -E2BIG, "cgroups: %zu groups, at most %d", n,
				    TIER_CONFIG_MAX_CGROUPS);
	if (n && !lb->cgroup_mount[0]) {
		int ret = tier_linux_cgroup2_mount(&lb->ctx, lb->cgroup_mount,
						   sizeof(lb->cgroup_mount), err);

		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		if (strlen(rules[i].path) >= sizeof(lb->rule_path[i]) ||
		    tier_linux_cgroup_relative(lb->cgroup_mount, rules[i].path, lb->rule_rel[i],
					       sizeof(lb->rule_rel[i])))
			return tier_err_set(err, -ENAMETOOLONG, "cgroup %.64s...: path too long",
					    rules[i].path);
	}
	tier_groups_init(&lb->groups);
	for (i = 0; i < n; i++) {
		snprintf(lb->rule_path[i], sizeof(lb->rule_path[i]), "%s", rules[i].path);
		lb->groups.rule[i + 1] = rules[i].rule;
	}
	lb->groups.nr = n + 1;
	lb->nr_rules = n;
	lb->env.groups = n ? &lb->groups : NULL;
	map_groups(lb);
	lb->next_refresh_us = 0;	/* the selection may have changed */
	return 0;
}

static int linux_group_stat(struct tier_world *b, size_t i, struct tier_world_group_stat *st,
			    struct tier_err *err)
{
	struct linux_backend *lb = b->priv;
	uint64_t anon[TIER_LINUX_MAX_NODES], file[TIER_LINUX_MAX_NODES], p;
	size_t slot, nr = tier_linux_space_nr_procs(lb->space);
	int n, ret;

	(void)err;
	memset(st, 0, sizeof(*st));
	if (i >= lb->nr_rules)
		return tier_err_set(err, -ENOENT, "no group %zu", i);
	snprintf(st->dir, sizeof(st->dir), "%s%s", lb->cgroup_mount,
		 strcmp(lb->rule_rel[i], "/") ? lb->rule_rel[i] : "");
	for (slot = 0; slot < nr && slot < 255; slot++)
		if (lb->groups.owner_group[slot] == i + 1 && tier_linux_space_proc_pid(lb->space, slot))
			st->processes++;
	for (p = 0; p < lb->env.nr_pages; p++) {
		uint8_t nd = lb->env.page_node[p];

		if (nd != TIER_NODE_NONE && lb->env.page_owner[p] < 255 &&
		    lb->groups.owner_group[lb->env.page_owner[p]] == i + 1 &&
		    lb->node_rank[nd] >= 0 && lb->node_rank[nd] < TIER_GROUP_RANKS)
			st->managed_bytes[lb->node_rank[nd]] += UINT64_C(1) << lb->env.page_shift;
	}
	ret = tier_linux_cgroup_numa_stat(st->dir, anon, file, err);
	st->exists = ret != -ENOENT || access(st->dir, F_OK) == 0;
	if (ret) {
		snprintf(st->error, sizeof(st->error), "%s", err->msg);
		tier_err_clear(err);
		return 0;
	}
	for (n = 0; n < TIER_LINUX_MAX_NODES; n++) {
		int r = lb->node_rank[n];

		if (r < 0 || r >= TIER_GROUP_RANKS)
			continue;
		st->anon_bytes[r] += anon[n];
		st->file_bytes[r] += file[n];
	}
	return 0;
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

static void free_selection(struct linux_backend *lb)
{
	size_t i;

	free(lb->sel_pids);
	for (i = 0; i < lb->nr_cgroups; i++)
		free(lb->cgroups[i]);
	free(lb->cgroups);
	free(lb->exe_pattern);
	lb->sel_pids = NULL;
	lb->cgroups = NULL;
	lb->exe_pattern = NULL;
	lb->nr_sel_pids = lb->nr_cgroups = 0;
}

static int copy_selection(struct linux_backend *lb, const struct tier_config *cfg)
{
	size_t i;

	free_selection(lb);
	if (cfg->nr_pids) {
		lb->sel_pids = calloc(cfg->nr_pids, sizeof(*lb->sel_pids));
		if (!lb->sel_pids)
			return -ENOMEM;
		for (i = 0; i < cfg->nr_pids; i++)
			lb->sel_pids[i] = cfg->pids[i];
		lb->nr_sel_pids = cfg->nr_pids;
	}
	if (cfg->nr_cgroups) {
		lb->cgroups = calloc(cfg->nr_cgroups, sizeof(*lb->cgroups));
		if (!lb->cgroups)
			return -ENOMEM;
		lb->nr_cgroups = cfg->nr_cgroups;
		for (i = 0; i < cfg->nr_cgroups; i++) {
			lb->cgroups[i] = strdup(cfg->cgroups[i]);
			if (!lb->cgroups[i])
				return -ENOMEM;
		}
	}
	if (cfg->exe_pattern) {
		lb->exe_pattern = strdup(cfg->exe_pattern);
		if (!lb->exe_pattern)
			return -ENOMEM;
	}
	lb->min_rss_bytes = cfg->min_rss_bytes;
	lb->refresh_us = cfg->refresh_ms * 1000;
	return 0;
}

static void linux_reconfigure(struct tier_world *b, const struct tier_config *cfg)
{
	struct linux_backend *lb = b->priv;

	if (copy_selection(lb, cfg))
		say(lb, LOG_ERR, "reload: out of memory copying the process selection");
	lb->next_refresh_us = 0;	/* apply at the next step */
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
			say(lb, LOG_ERR, "putting back the kernel's settings: %s (%s keeps "
				  "them for the next start or tierd --restore)", err.msg,
				  lb->guard.state_path);
	}
	if (lb->space)
		tier_linux_space_destroy(lb->space);
	tier_topology_release(&lb->topo);
	free_selection(lb);
	free(lb->hints);
	free(lb->page_hint);
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
	lb->say_fn = p->say;
	lb->say_arg = p->say_arg;
	lb->log_level = p->log_level;
	lb->ctx.sysfs_root = cfg->sysfs_root;
	lb->ctx.procfs_root = "/proc";
	lb->ctx.debugfs_root = "/sys/kernel/debug";
	ret = tier_topology_build(&tier_linux_topology_ops, &lt, p->topology, &lb->topo, err);
	if (ret)
		goto out_free;
	if (lb->topo.nr_tiers < 2)
		say(lb, LOG_WARNING,
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
	ret = copy_selection(lb, cfg);
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
			say(lb, ret ? LOG_ERR : LOG_INFO, "tracker %s", line);
	}
	if (ret) {
		tier_err_set(err, ret, "no usable hotness tracker (see the lines above)");
		goto out_free;
	}
	ret = tier_linux_space_new(&lb->ctx, 12, &lb->space, err);
	if (ret)
		goto out_free;
	ret = lb->trk->create(&lb->ctx, cfg->interval_ms * 1000, &lb->trk_priv, err);
	if (ret) {
		lb->trk_priv = NULL;
		goto out_free;
	}
	ret = tier_linux_guard_kernel_tiering(&lb->guard,
					      cfg->kernel_tiering == TIER_CONFIG_KT_DISABLE, err);
	if (ret)
		goto out_free;
	lb->core_trk.name = lb->trk->name;
	lb->core_trk.kinds = lb->trk->kinds;
	lb->core_trk.collect = adapter_collect;
	lb->env.topo = &lb->topo;
	lb->env.page_shift = 12;
	lb->env.obs_kinds = lb->trk->kinds;
	lb->env.migrator = &counted_migrator;
	lb->env.migrator_priv = lb;
	lb->env.mem = &tier_linux_mem_ops;
	lb->env.mem_priv = lb->space;
	lb->env.clock = &linux_clock;
	lb->env.clock_priv = lb;
	lb->env.budget_bytes_per_s = cfg->budget_bytes_per_s;
	/* A move_pages call of 256 pages holds the target's mmap lock for
	 * well under a millisecond. */
	lb->env.max_batch = 256;
	lb->env.interval_us = cfg->interval_ms * 1000;
	lb->env.work_units = &lb->work_units;
	sync_env(lb);
	lb->b.name = "linux";
	lb->b.tracker_name = lb->trk->name;
	lb->b.topo = &lb->topo;
	lb->b.env = &lb->env;
	lb->b.tracker = &lb->core_trk;
	lb->b.tracker_priv = lb;
	lb->b.prepare = linux_prepare;
	lb->b.stats = linux_stats;
	lb->b.reconfigure = linux_reconfigure;
	lb->b.hint = linux_hint;
	lb->b.set_groups = linux_set_groups;
	lb->b.group_stat = linux_group_stat;
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
