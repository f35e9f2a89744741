/* damon_modules.h - the kernel's own DAMON users that run DAMON
 * exclusively: damon_stat (enabled by default in Debian's 7.x kernels),
 * damon_reclaim and damon_lru_sort. While one of them runs its kdamond, no
 * other kdamond can start (damon_start() answers EBUSY), so tierd's DAMON
 * tracker cannot run.
 *
 * Each is a built-in module whose switch is
 * <sysfs>/module/NAME/parameters/enabled ("Y" or "N"). Writing "N" stops
 * its kdamond before the write returns; writing "Y" while another kdamond
 * runs fails with EBUSY (seen on Debian's 7.2 kernel).
 */
#ifndef TIER_LINUX_DAMON_MODULES_H
#define TIER_LINUX_DAMON_MODULES_H

#include <stdbool.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

/* The exclusive modules, NULL-terminated: "damon_stat", "damon_reclaim",
 * "damon_lru_sort". */
extern const char *const tier_linux_damon_exclusive[];

/* Reads NAME's switch: *present false (and 0 returned) when the kernel has
 * no such module. Returns 0 or -errno (an unreadable or malformed file). */
int tier_linux_damon_module_read(const struct tier_linux_ctx *ctx, const char *name,
				 bool *present, bool *enabled, struct tier_err *err);

/* Writes "Y" or "N" to NAME's switch. Returns 0 or -errno with err naming
 * the file (EBUSY for "Y" while another kdamond runs). */
int tier_linux_damon_module_set(const struct tier_linux_ctx *ctx, const char *name,
				bool enabled, struct tier_err *err);

/* The first exclusive module that is enabled, or NULL. */
const char *tier_linux_damon_exclusive_holder(const struct tier_linux_ctx *ctx);

#endif
