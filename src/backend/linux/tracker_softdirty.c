/* tracker_softdirty.c - soft-dirty bits (Documentation/admin-guide/mm/
 * soft-dirty.rst): writes only.
 *
 * Writing "4" to /proc/PID/clear_refs clears the soft-dirty bits of every
 * page of the process (and write-protects them, so the next write to each
 * takes one fault); bit 55 of a /proc/PID/pagemap entry then says whether
 * the page was written since.
 *
 * set_targets() clears the bits of each new process before its first
 * scan (otherwise every page looks written: a new mapping starts
 * soft-dirty); collect() reads bit 55 of the present pages of the watched
 * mappings, reports each run of consecutive pages that were (not) written
 * as one WRITTEN observation (count 1 or 0, max 1, interval = time since
 * the clear), and clears again.
 *
 * probe() looks for the "sd" flag in /proc/self/smaps VmFlags, which
 * exists only with CONFIG_MEM_SOFT_DIRTY (a mapping made since the last
 * clear carries it; this process never clears its own bits).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

struct sd_tracker {
	struct tier__roots roots;
	struct tier__targets targets;
};

static bool smaps_has_soft_dirty(const char *path)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, "VmFlags:", 8))
			continue;
		for (p = strtok(line + 8, " \n"); p; p = strtok(NULL, " \n"))
			if (!strcmp(p, "sd"))
				found = true;
	}
	fclose(f);
	return found;
}

static int sd_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	char path[512];

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/clear_refs"))
		return tier_err_set(err, -ENAMETOOLONG, "softdirty: procfs root too long");
	if (!tier_sysfs_exists(path))
		return tier_err_set(err, -ENOENT, "softdirty: %s missing (kernel without "
				    "CONFIG_PROC_PAGE_MONITOR)", path);
	tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/smaps");
	if (!smaps_has_soft_dirty(path))
		return tier_err_set(err, -EOPNOTSUPP,
				    "softdirty: no 'sd' flag in %s VmFlags (kernel without "
				    "CONFIG_MEM_SOFT_DIRTY)", path);
	return 0;
}

static void sd_destroy(void *priv)
{
	struct sd_tracker *t = priv;

	if (!t)
		return;
	tier__targets_release(&t->targets);
	tier__roots_release(&t->roots);
	free(t);
}

static int sd_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		     struct tier_err *err)
{
	struct sd_tracker *t;
	int ret;

	(void)interval_us;
	*priv = NULL;
	ret = sd_probe(ctx, err);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t || tier__roots_init(&t->roots, ctx)) {
		free(t);
		return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
	}
	*priv = t;
	return 0;
}

static int clear_refs(struct sd_tracker *t, pid_t pid, struct tier_err *err)
{
	char path[512];
	int ret;

	if (tier_sysfs_path(path, sizeof(path), t->roots.ctx.procfs_root, "%d/clear_refs",
			    (int)pid))
		return tier_err_set(err, -ENAMETOOLONG, "softdirty: procfs root too long");
	ret = tier__write_str(path, "4", err);
	if (ret == -ENOENT)
		ret = -ESRCH;	/* exited */
	return ret;
}

static int sd_reset(void *arg, pid_t pid, struct tier_err *err)
{
	int ret = clear_refs(arg, pid, err);

	if (ret && ret != -ESRCH)
		tier_err_prefix(err, "softdirty: pid %d", (int)pid);
	return ret;
}

static int sd_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct sd_tracker *t = priv;

	return tier__targets_update(&t->targets, &t->roots.ctx, pids, n, sd_reset, t, err);
}

static int sd_chunk(void *arg, uint64_t vaddr, const uint64_t *pm, size_t n)
{
	struct tier__run *run = arg;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pm[i] & TIER__PM_PRESENT)
			tier__run_page(run, vaddr + ((uint64_t)i << 12),
				       (pm[i] & TIER__PM_SOFT_DIRTY) ? 1 : 0);
		else
			tier__run_gap(run);
	}
	return 0;
}

static int sd_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct sd_tracker *t = priv;
	struct tier__obs_batch *b;
	size_t i;
	int ret = 0;

	b = malloc(sizeof(*b));
	if (!b)
		return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
	tier__batch_init(b, sink, ctx);
	for (i = 0; i < t->targets.n; i++) {
		struct tier__target *tg = &t->targets.v[i];
		uint64_t now = tier__now_us(), span = now - tg->since_us;
		struct tier__run run;

		tier__run_init(&run, b, tg->pid, TIER_OBS_WRITTEN,
			       span > UINT32_MAX ? UINT32_MAX : (uint32_t)span);
		ret = tier__pagemap_walk(&t->roots.ctx, tg->pid, sd_chunk, &run, err);
		if (!ret) {
			tier__run_gap(&run);
			ret = clear_refs(t, tg->pid, err);
		}
		if (ret == -ESRCH) {
			tier_err_clear(err);	/* exited: skipped */
			ret = 0;
			continue;
		}
		if (ret) {
			tier_err_prefix(err, "softdirty: pid %d", (int)tg->pid);
			break;
		}
		tg->since_us = now;
	}
	tier__batch_flush(b);
	free(b);
	return ret;
}

const struct tier_linux_tracker_ops tier__linux_tracker_softdirty = {
	.name = "softdirty",
	.kinds = TIER_OBS_WRITTEN,
	.probe = sd_probe,
	.create = sd_create,
	.destroy = sd_destroy,
	.set_targets = sd_set_targets,
	.collect = sd_collect,
};
