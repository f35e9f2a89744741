/* world_procs.c - the Linux world's managed processes: which ones (the
 * configured selection), and their mappings re-read into the address
 * space when due, with the tracker's targets, huge pages, hints and
 * control groups following. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/world_impl.h"

/* --- refresh ---------------------------------------------------------------- */

static void forget_range(void *ctx, uint64_t first, uint64_t nr)
{
	struct linux_backend *lb = ctx;

	if (lb->loop)
		tier_loop_forget(lb->loop, first, nr);
}

void tier__lw_sync_env(struct linux_backend *lb)
{
	lb->env.nr_pages = tier_linux_space_nr_pages(lb->space);
	lb->env.page_node = tier_linux_space_page_node(lb->space);
	lb->env.node_gen = tier_linux_space_node_gen(lb->space);
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
		tier__lw_say(lb, LOG_INFO,
			  "the kernel has no PAGEMAP_SCAN (Linux 6.7): transparent huge pages are placed as 4 KiB pages");
		lb->huge_warned = true;
	}
}

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int tier__lw_refresh(struct linux_backend *lb, struct tier_loop *loop, struct tier_err *err)
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
			tier__lw_say(lb, LOG_WARNING, "process selection: %s", err->msg);
			snprintf(lb->last_select_error, sizeof(lb->last_select_error), "%s", err->msg);
		}
		tier_err_clear(err);
	} else if (ret) {
		free(pids);
		if (lb->select_warnings++ < 3)
			tier__lw_say(lb, LOG_WARNING, "process selection: %s", err->msg);
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
		tier__lw_say(lb, LOG_INFO, "managing %zu process%s", nr, nr == 1 ? "" : "es");
	lb->nr_procs = nr;
	lb->loop = loop;
	ret = tier_linux_space_update(lb->space, pids, nr, forget_range, lb, err);
	lb->loop = NULL;
	lb->b.maps_gen++;
	if (!ret) {
		tier__lw_kdamond_starting(lb, pids, nr);
		ret = lb->trk->set_targets(lb->trk_priv, pids, nr, err);
		tier__lw_sync_kdamond(lb);
	}
	free(pids);
	if (ret)
		return ret;
	scan_huge(lb);
	tier__lw_sync_env(lb);
	tier__lw_map_groups(lb);
	ret = tier__lw_apply_hints(lb);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	if (lb->env.nr_pages > before)
		lb->resize_pending = true;	/* after the query (world.c) */
	return ret;
}

void tier__lw_free_selection(struct linux_backend *lb)
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

int tier__lw_copy_selection(struct linux_backend *lb, const struct tier_config *cfg)
{
	size_t i;

	tier__lw_free_selection(lb);
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

