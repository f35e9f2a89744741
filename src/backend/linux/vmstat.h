/* vmstat.h - the kernel's counters of pages that changed node or frame
 * (<procfs>/vmstat, Documentation/admin-guide/mm/ and mm/vmstat.c): what
 * tells tierd, for a file read, whether anything but its own moves can
 * have changed where the managed pages are since it last looked.
 *
 * pgmigrate_success counts every base page migrated by anyone: move_pages(2)
 * and mbind(2) (tierd's own moves among them, and an application's),
 * NUMA balancing's promotions, demotion in reclaim, compaction, memory
 * hot-remove's offlining. A page can also come back on another node without
 * a migration: swapped out and in (pswpin), or collapsed into a new huge
 * page (thp_collapse_alloc). A page freed and faulted in again counts in
 * none of these; the round-robin query and a slow periodic check are what
 * see those. */
#ifndef TIER_LINUX_VMSTAT_H
#define TIER_LINUX_VMSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct tier_linux_churn {
	uint64_t migrated;	/* pgmigrate_success */
	uint64_t swapped_in;	/* pswpin */
	uint64_t collapsed;	/* thp_collapse_alloc */
};

/* Reads the counters from <procfs_root>/vmstat. Returns 0, or -errno
 * (-ENOENT: no such file; -ENODATA: pgmigrate_success missing, a kernel
 * without CONFIG_MIGRATION). A counter the kernel lacks (pswpin without
 * swap support, thp_collapse_alloc without THP) reads 0. */
int tier_linux_churn_read(const char *procfs_root, struct tier_linux_churn *c);

/* Whether pages can have changed node by anything but own_moved pages of
 * tierd's own migrations between readings a and then b: more migrations
 * than tierd made, any swap-in or any huge-page collapse; a counter that
 * went back (a different kernel's, or a wrap) says yes too. */
bool tier_linux_churn_foreign(const struct tier_linux_churn *a, const struct tier_linux_churn *b,
			      uint64_t own_moved);

#endif
