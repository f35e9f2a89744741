/* damon_modules.c - the kernel's exclusive DAMON users' switches. */
#include "backend/linux/damon_modules.h"

#include <errno.h>
#include <string.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

const char *const tier_linux_damon_exclusive[] = {
	"damon_stat", "damon_reclaim", "damon_lru_sort", NULL,
};

static int switch_path(const struct tier_linux_ctx *ctx, const char *name, char *path,
		       size_t sz, struct tier_err *err)
{
	if (tier_sysfs_path(path, sz, ctx->sysfs_root, "module/%s/parameters/enabled", name))
		return tier_err_set(err, -ENAMETOOLONG, "%s: sysfs root too long", name);
	return 0;
}

int tier_linux_damon_module_read(const struct tier_linux_ctx *ctx, const char *name,
				 bool *present, bool *enabled, struct tier_err *err)
{
	char path[512], buf[16];
	int ret;

	*present = *enabled = false;
	ret = switch_path(ctx, name, path, sizeof(path), err);
	if (ret || !tier_sysfs_exists(path))
		return ret;
	ret = tier__read_line(path, buf, sizeof(buf), err);
	if (ret)
		return ret;
	if (!strcmp(buf, "Y") || !strcmp(buf, "1"))
		*enabled = true;
	else if (strcmp(buf, "N") && strcmp(buf, "0"))
		return tier_err_set(err, -EINVAL, "%s: expected Y or N, found '%s'", path, buf);
	*present = true;
	return 0;
}

int tier_linux_damon_module_set(const struct tier_linux_ctx *ctx, const char *name,
				bool enabled, struct tier_err *err)
{
	char path[512];
	int ret = switch_path(ctx, name, path, sizeof(path), err);

	return ret ? ret : tier__write_str(path, enabled ? "Y" : "N", err);
}

const char *tier_linux_damon_exclusive_holder(const struct tier_linux_ctx *ctx)
{
	size_t i;

	for (i = 0; tier_linux_damon_exclusive[i]; i++) {
		bool present, enabled;

		if (!tier_linux_damon_module_read(ctx, tier_linux_damon_exclusive[i], &present,
						  &enabled, NULL) && enabled)
			return tier_linux_damon_exclusive[i];
	}
	return NULL;
}
