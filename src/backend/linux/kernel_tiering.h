/* kernel_tiering.h - the kernel's own memory tiering, which tierd must not
 * fight: NUMA balancing (/proc/sys/kernel/numa_balancing, a bitmask: 1 =
 * NUMA balancing, which also pulls pages towards the CPUs' node; 2 =
 * memory tiering promotion, 5.18+) and demotion in reclaim
 * (/sys/kernel/mm/numa/demotion_enabled, 5.15+).
 *
 * The daemon reads both at start-up, warns when either moves pages, and
 * when configured to, switches both off while it runs and restores what
 * it found on exit. Paths are under the context's roots.
 */
#ifndef TIER_LINUX_KERNEL_TIERING_H
#define TIER_LINUX_KERNEL_TIERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

#define TIER_NUMA_BALANCING_NORMAL	1u
#define TIER_NUMA_BALANCING_TIERING	2u

struct tier_linux_kernel_tiering {
	bool has_numa_balancing;	/* the sysctl exists */
	unsigned numa_balancing;	/* its value (bitmask) */
	bool has_demotion;		/* demotion_enabled exists */
	bool demotion_enabled;
	/* /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps (6.0+):
	 * what memory tiering mode may promote a second; 0 promotes nothing */
	bool has_rate_limit;
	uint64_t rate_limit_mbps;
};

/* Reads both settings into *out; a file that does not exist (an older
 * kernel, no CONFIG_NUMA_BALANCING) is reported as absent, not an error.
 * Returns 0 or -errno (an unreadable or malformed file). */
int tier_linux_kernel_tiering_read(const struct tier_linux_ctx *ctx,
				   struct tier_linux_kernel_tiering *out, struct tier_err *err);

/* True when the kernel moves pages by itself: numa_balancing non-zero (any
 * mode migrates) or demotion enabled. */
bool tier_linux_kernel_tiering_active(const struct tier_linux_kernel_tiering *kt);

/* "numa_balancing=2 (memory tiering), demotion_enabled=true" into buf. */
void tier_linux_kernel_tiering_describe(const struct tier_linux_kernel_tiering *kt,
					char *buf, size_t sz);

/* Reads the current settings into *saved (the rate limit left out: not
 * changed), then writes numa_balancing = 0
 * and demotion_enabled = false (only those present and not already off).
 * On failure nothing stays half-done: what was written is put back.
 * Returns 0 or -errno with err naming the file ("... Permission denied;
 * switching off kernel tiering needs root"). */
int tier_linux_kernel_tiering_disable(const struct tier_linux_ctx *ctx,
				      struct tier_linux_kernel_tiering *saved,
				      struct tier_err *err);

/* Reads the current settings into *saved, then leaves the kernel's NUMA
 * balancing taking hint faults on the slower tiers' pages and moving
 * none: numa_balancing = 2 (memory tiering alone, which scans only pages
 * off the top tier), its promotion rate limit 0 (should_numa_migrate_memory()
 * finds the limit reached at every fault), demotion_enabled = false - for
 * the hint-fault tracker (tracker_hint.c), which reads the faults. Needs
 * all three; -EOPNOTSUPP (err says which is missing) without. On failure
 * what was written is put back. Returns 0 or -errno. */
int tier_linux_kernel_tiering_hint_only(const struct tier_linux_ctx *ctx,
					struct tier_linux_kernel_tiering *saved,
					struct tier_err *err);

/* Writes back the settings in *saved (those present). Returns 0 or the
 * first -errno; tries both either way. */
int tier_linux_kernel_tiering_restore(const struct tier_linux_ctx *ctx,
				      const struct tier_linux_kernel_tiering *saved,
				      struct tier_err *err);

#endif
