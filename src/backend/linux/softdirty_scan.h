/* softdirty_scan.h - the runs of a process's pages that are present and
 * soft-dirty (Documentation/admin-guide/mm/soft-dirty.rst): by PAGEMAP_SCAN
 * where the kernel has it (Linux 6.7), else from /proc/PID/pagemap's
 * entries one by one. The soft-dirty tracker reads them after each clear.
 */
#ifndef TIER_LINUX_SOFTDIRTY_SCAN_H
#define TIER_LINUX_SOFTDIRTY_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

struct tier__sd_extent {
	uint64_t start, end;
};

struct page_region;

/* Zeroed to start; the runs of the last read are v[0..n). */
struct tier__sd_scan {
	struct tier__sd_extent *v;	/* address order, disjoint */
	size_t n, cap;
	struct page_region *vec;	/* PAGEMAP_SCAN's answer */
	bool no_ioctl;			/* the kernel has no PAGEMAP_SCAN for soft-dirty bits */
};

/* Reads pid's runs of present, soft-dirty pages in the mappings a tracker
 * watches (tier__vmas_read()) into s. Returns 0, *by_ioctl telling whether
 * PAGEMAP_SCAN read them, or -errno with err set (-ESRCH: no such
 * process). */
int tier__sd_scan_read(struct tier__sd_scan *s, const struct tier_linux_ctx *ctx, pid_t pid,
		       bool *by_ioctl, struct tier_err *err);

/* Frees what s holds. */
void tier__sd_scan_free(struct tier__sd_scan *s);

#endif
