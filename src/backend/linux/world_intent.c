/* world_intent.c - what applications and operators ask of the Linux
 * world: hints over address ranges (tierctl hint, libtier) laid onto the
 * managed pages, and control groups' rules mapped onto their pages. */
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

/* Lays the hints over the dense pages (after every update of the space:
 * ids come and go). A hint none of whose pages is mapped any more - the
 * range was unmapped or the process exited - is dropped. Without hints
 * env.page_hint is NULL (policy.h): nothing to clear or scan per page. */
int tier__lw_apply_hints(struct linux_backend *lb)
{
	uint64_t n = lb->env.nr_pages;
	size_t h, keep = 0;

	if (!lb->nr_hints) {
		lb->env.page_hint = NULL;
		return 0;
	}
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
	lb->env.page_hint = n && keep ? lb->page_hint : NULL;
	return 0;
}

int tier__lw_hint(struct tier_world *b, pid_t pid, uint64_t addr, uint64_t len,
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
	tier__lw_say(lb, LOG_INFO, "hint: pid %d [0x%llx, 0x%llx) %d", (int)pid,
		  (unsigned long long)start, (unsigned long long)end, advice);
	return 0;
}

/* Puts each managed process's slot in the group of the deepest rule
 * whose cgroup holds it (group 0: none). */
void tier__lw_map_groups(struct linux_backend *lb)
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

int tier__lw_set_groups(struct tier_world *b, const struct tier_config_cgroup *rules,
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
	tier__lw_map_groups(lb);
	lb->next_refresh_us = 0;	/* the selection may have changed */
	return 0;
}

int tier__lw_group_stat(struct tier_world *b, size_t i, struct tier_world_group_stat *st,
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

