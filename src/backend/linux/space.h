/* space.h - the managed address space on Linux: the mappings of the managed
 * processes laid out as dense page ids [0, nr_pages), which is what the
 * policy core works on (core/policy.h), plus the migrator and memory ops over
 * it.
 *
 * Ids are stable while a mapping lives: an update keeps the ids of
 * unchanged mappings, gives new mappings fresh ids, and releases the ids of
 * mappings (and processes) that went away, telling the caller which ranges
 * to forget. page_node[] is kept current by move_pages(2) queries (nodes =
 * NULL), a bounded number of pages per call, and by the migrator's own
 * results.
 */
#ifndef TIER_LINUX_SPACE_H
#define TIER_LINUX_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/tracker.h"
#include "core/policy.h"

struct tier_linux_space;

/* page_shift: 12 (4 KiB pages). Returns 0 or -errno. */
int tier_linux_space_new(const struct tier_linux_ctx *ctx, unsigned page_shift,
			 struct tier_linux_space **out, struct tier_err *err);
void tier_linux_space_destroy(struct tier_linux_space *s);

/* Makes pids the managed processes and re-reads their mappings
 * (/proc/PID/maps: private anonymous and private writable file mappings;
 * not [vsyscall], not shared, not VM_IO). forget(ctx, first, nr) is called
 * for every id range released. A pid that exited is dropped, not an error.
 * Returns 0 or -errno (-ENOMEM). */
int tier_linux_space_update(struct tier_linux_space *s, const pid_t *pids, size_t n,
			    void (*forget)(void *ctx, uint64_t first, uint64_t nr), void *ctx,
			    struct tier_err *err);

/* Queries where up to max_pages pages are (round robin over the space) and
 * updates page_node. Returns 0 or -errno. */
int tier_linux_space_query(struct tier_linux_space *s, uint64_t max_pages,
			   struct tier_err *err);

uint64_t tier_linux_space_nr_pages(const struct tier_linux_space *s);
/* [nr_pages]; the pointers may change across tier_linux_space_update(). */
const uint8_t *tier_linux_space_page_node(const struct tier_linux_space *s);
const uint8_t *tier_linux_space_page_owner(const struct tier_linux_space *s);

/* Translates address observations into dense ones for sink (ranges split
 * at mapping boundaries; addresses outside managed mappings dropped). */
void tier_linux_space_translate(struct tier_linux_space *s,
				const struct tier_linux_addr_obs *obs, size_t n,
				void (*sink)(void *ctx, const struct tier_obs *obs, size_t n),
				void *ctx);

/* id -> (pid, address) and back. Return 0 / true when found. */
int tier_linux_space_addr(const struct tier_linux_space *s, uint64_t page, pid_t *pid,
			  uint64_t *addr);
bool tier_linux_space_page(const struct tier_linux_space *s, pid_t pid, uint64_t addr,
			   uint64_t *page);

/* Managed processes now (owner index -> pid). */
size_t tier_linux_space_nr_procs(const struct tier_linux_space *s);
pid_t tier_linux_space_proc_pid(const struct tier_linux_space *s, size_t idx);

/* Migrator over a space (priv: struct tier_linux_space *): move_pages(2)
 * grouped by process, in the caller's batches, MPOL_MF_MOVE; per-page
 * statuses as in struct tier_migrator_ops; a process gone mid-batch gives
 * -ENOENT for its pages. Counters of what happened: */
extern const struct tier_migrator_ops tier_linux_migrator_ops;

struct tier_linux_migrate_stats {
	uint64_t moved_pages;
	uint64_t calls;
	uint64_t busy, nomem, gone, access_denied, other;
};
void tier_linux_space_migrate_stats(const struct tier_linux_space *s,
				    struct tier_linux_migrate_stats *out);

/* Memory ops over the machine's nodes (priv: struct tier_linux_space *):
 * MemTotal/MemFree of /sys/devices/system/node/nodeN/meminfo in pages. */
extern const struct tier_mem_ops tier_linux_mem_ops;

#endif
