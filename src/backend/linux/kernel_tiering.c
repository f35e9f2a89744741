/* kernel_tiering.c - reading, switching off and restoring the kernel's own
 * memory tiering (NUMA balancing and demotion). */
#include "backend/linux/kernel_tiering.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

#define NUMA_BALANCING	"sys/kernel/numa_balancing"
#define DEMOTION	"kernel/mm/numa/demotion_enabled"
#define RATE_LIMIT	"sys/kernel/numa_balancing_promote_rate_limit_MBps"

static int paths(const struct tier_linux_ctx *ctx, char *nb, char *dem, size_t sz,
		 struct tier_err *err)
{
	if (tier_sysfs_path(nb, sz, ctx->procfs_root, NUMA_BALANCING) ||
	    tier_sysfs_path(dem, sz, ctx->sysfs_root, DEMOTION))
		return tier_err_set(err, -ENAMETOOLONG, "kernel tiering: root path too long");
	return 0;
}

static int rate_path(const struct tier_linux_ctx *ctx, char *rl, size_t sz, struct tier_err *err)
{
	if (tier_sysfs_path(rl, sz, ctx->procfs_root, RATE_LIMIT))
		return tier_err_set(err, -ENAMETOOLONG, "kernel tiering: root path too long");
	return 0;
}

int tier_linux_kernel_tiering_read(const struct tier_linux_ctx *ctx,
				   struct tier_linux_kernel_tiering *out, struct tier_err *err)
{
	char nb[512], dem[512], rl[512], buf[64];
	uint64_t v;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = paths(ctx, nb, dem, sizeof(nb), err);
	if (!ret)
		ret = rate_path(ctx, rl, sizeof(rl), err);
	if (ret)
		return ret;
	if (tier_sysfs_exists(rl)) {
		ret = tier_sysfs_read_u64(rl, &out->rate_limit_mbps, err);
		if (ret)
			return ret;
		out->has_rate_limit = true;
	}
	if (tier_sysfs_exists(nb)) {
		ret = tier_sysfs_read_u64(nb, &v, err);
		if (ret)
			return ret;
		out->has_numa_balancing = true;
		out->numa_balancing = (unsigned)v;
	}
	if (tier_sysfs_exists(dem)) {
		ret = tier__read_line(dem, buf, sizeof(buf), err);
		if (ret)
			return ret;
		if (!strcmp(buf, "true") || !strcmp(buf, "1"))
			out->demotion_enabled = true;
		else if (strcmp(buf, "false") && strcmp(buf, "0"))
			return tier_err_set(err, -EINVAL, "%s: expected true or false, found '%s'",
					    dem, buf);
		out->has_demotion = true;
	}
	return 0;
}

bool tier_linux_kernel_tiering_active(const struct tier_linux_kernel_tiering *kt)
{
	return (kt->has_numa_balancing && kt->numa_balancing) ||
	       (kt->has_demotion && kt->demotion_enabled);
}

void tier_linux_kernel_tiering_describe(const struct tier_linux_kernel_tiering *kt,
					char *buf, size_t sz)
{
	char nb[96];
	const char *mode;

	if (!kt->has_numa_balancing) {
		snprintf(nb, sizeof(nb), "numa_balancing absent");
	} else {
		switch (kt->numa_balancing) {
		case 0: mode = "off"; break;
		case TIER_NUMA_BALANCING_NORMAL: mode = "NUMA balancing"; break;
		case TIER_NUMA_BALANCING_TIERING: mode = "memory tiering"; break;
		case TIER_NUMA_BALANCING_NORMAL | TIER_NUMA_BALANCING_TIERING:
			mode = "NUMA balancing and memory tiering"; break;
		default: mode = "unknown mode"; break;
		}
		snprintf(nb, sizeof(nb), "numa_balancing=%u (%s)", kt->numa_balancing, mode);
	}
	snprintf(buf, sz, "%s, %s", nb,
		 !kt->has_demotion ? "demotion_enabled absent" :
		 kt->demotion_enabled ? "demotion_enabled=true" : "demotion_enabled=false");
}

static int write_setting(const char *path, const char *val, struct tier_err *err)
{
	int ret = tier__write_str(path, val, err);

	if (ret == -EACCES || ret == -EPERM)
		tier_err_set(err, ret, "%s: writing '%s': %s; switching kernel tiering needs "
			     "root", path, val, strerror(-ret));
	return ret;
}

int tier_linux_kernel_tiering_disable(const struct tier_linux_ctx *ctx,
				      struct tier_linux_kernel_tiering *saved,
				      struct tier_err *err)
{
	char nb[512], dem[512];
	bool nb_written = false;
	int ret;

	ret = tier_linux_kernel_tiering_read(ctx, saved, err);
	if (!ret)
		ret = paths(ctx, nb, dem, sizeof(nb), err);
	if (ret)
		return ret;
	saved->has_rate_limit = false;	/* not changed: nothing to put back */
	if (saved->has_numa_balancing && saved->numa_balancing) {
		ret = write_setting(nb, "0", err);
		if (ret)
			return ret;
		nb_written = true;
	}
	if (saved->has_demotion && saved->demotion_enabled) {
		ret = write_setting(dem, "false", err);
		if (ret) {
			if (nb_written) {
				char v[16];

				snprintf(v, sizeof(v), "%u", saved->numa_balancing);
				tier__write_str(nb, v, NULL);
			}
			return ret;
		}
	}
	return 0;
}

int tier_linux_kernel_tiering_hint_only(const struct tier_linux_ctx *ctx,
					struct tier_linux_kernel_tiering *saved,
					struct tier_err *err)
{
	char nb[512], dem[512], rl[512], v[32];
	bool nb_written = false, rl_written = false;
	int ret;

	ret = tier_linux_kernel_tiering_read(ctx, saved, err);
	if (!ret)
		ret = paths(ctx, nb, dem, sizeof(nb), err);
	if (!ret)
		ret = rate_path(ctx, rl, sizeof(rl), err);
	if (ret)
		return ret;
	if (!saved->has_numa_balancing || !saved->has_rate_limit)
		return tier_err_set(err, -EOPNOTSUPP, "%s missing (a kernel without memory "
				    "tiering's NUMA balancing, before 6.0)",
				    !saved->has_numa_balancing ? nb : rl);
	if (saved->rate_limit_mbps) {
		ret = write_setting(rl, "0", err);
		if (ret)
			return ret;
		rl_written = true;
	}
	if (saved->numa_balancing != TIER_NUMA_BALANCING_TIERING) {
		snprintf(v, sizeof(v), "%u", TIER_NUMA_BALANCING_TIERING);
		ret = write_setting(nb, v, err);
		if (ret)
			goto undo;
		nb_written = true;
	}
	if (saved->has_demotion && saved->demotion_enabled) {
		ret = write_setting(dem, "false", err);
		if (ret)
			goto undo;
	}
	return 0;
undo:
	if (nb_written) {
		snprintf(v, sizeof(v), "%u", saved->numa_balancing);
		tier__write_str(nb, v, NULL);
	}
	if (rl_written) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)saved->rate_limit_mbps);
		tier__write_str(rl, v, NULL);
	}
	return ret;
}

int tier_linux_kernel_tiering_restore(const struct tier_linux_ctx *ctx,
				      const struct tier_linux_kernel_tiering *saved,
				      struct tier_err *err)
{
	char nb[512], dem[512], rl[512], v[32];
	int ret, first = 0;

	ret = paths(ctx, nb, dem, sizeof(nb), err);
	if (!ret)
		ret = rate_path(ctx, rl, sizeof(rl), err);
	if (ret)
		return ret;
	/* The rate limit before the mode that reads it. */
	if (saved->has_rate_limit) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)saved->rate_limit_mbps);
		first = write_setting(rl, v, err);
	}
	if (saved->has_numa_balancing) {
		snprintf(v, sizeof(v), "%u", saved->numa_balancing);
		ret = write_setting(nb, v, first ? NULL : err);
		if (!first)
			first = ret;
	}
	if (saved->has_demotion) {
		ret = write_setting(dem, saved->demotion_enabled ? "true" : "false",
				    first ? NULL : err);
		if (!first)
			first = ret;
	}
	return first;
}
