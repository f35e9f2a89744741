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
 *
 * Ids are handed out as extents: runs of pages contiguous both in a
 * process's address space and in ids. A new mapping takes ids from ranges
 * released earlier (first fit, or split over free ranges of at least 64
 * pages) before the id space grows, so nr_pages stays near the largest
 * number of pages managed at once. Released ids read TIER_NODE_NONE in
 * page_node and TIER_LINUX_OWNER_NONE in page_owner until reused.
 *
 * A page keeps its id across updates when the page is still mapped by the
 * same process with the same backing: the same file and file offset, or
 * anonymous memory. A mapping that grows (heap, stack) keeps its old ids
 * and gets new ones for the new pages only; one that shrinks or is split
 * by mprotect(2) releases only the pages that left the managed set.
 *
 * A mapping larger than the machine's memory (the MemTotal of all online
 * nodes under ctx->sysfs_root) is a sparse reservation (sanitizer shadow
 * memory, MAP_NORESERVE heaps) and is left out: its ids would outnumber
 * the pages that exist.
 *
 * Not thread-safe: one caller at a time.
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

/* page_owner of a released id, and of the pages of processes in owner slots
 * 255 and above (look those up with tier_linux_space_addr()). */
#define TIER_LINUX_OWNER_NONE 0xff

/* page_shift: 12 (4 KiB pages; 10..30 accepted). ctx is borrowed: it must
 * outlive the space, and its roots are read at every call (procfs_root for
 * maps and status, sysfs_root for node meminfo). Returns 0 or -errno
 * (-EINVAL for a page_shift out of range, -ENOMEM). */
int tier_linux_space_new(const struct tier_linux_ctx *ctx, unsigned page_shift,
			 struct tier_linux_space **out, struct tier_err *err);
void tier_linux_space_destroy(struct tier_linux_space *s);

/* Makes pids the managed processes and re-reads their mappings
 * (/proc/PID/maps: private anonymous and private writable file mappings;
 * not [vsyscall], not shared, not VM_IO). forget(ctx, first, nr) is called
 * for every id range released (adjacent ranges merged, in id order; forget
 * may be NULL), before any id is reused. A pid that exited (maps missing,
 * empty, or ESRCH while read) is dropped, not an error.
 * Owner indexes are slots: a process keeps its slot while it is managed;
 * the slot of a process that left is reused by the next new one.
 * Returns 0 or -errno; on error the space is unchanged and err names the
 * file (and line): -EINVAL for a malformed maps line ("/proc/42/maps:7:
 * ..."), -EACCES when maps cannot be read, -ENOMEM. */
int tier_linux_space_update(struct tier_linux_space *s, const pid_t *pids, size_t n,
			    void (*forget)(void *ctx, uint64_t first, uint64_t nr), void *ctx,
			    struct tier_err *err);

/* Queries where up to max_pages pages are and updates page_node: pages that
 * came with the last updates and were never queried first, then round robin
 * over the space (each page at most once per call). Pages not present
 * become TIER_NODE_NONE, as do the pages of a process that has exited.
 * The nodes come from <procfs>/PID/pagemap's frame numbers and the memory
 * blocks each node lists (pfn_node.h): one read of the page tables per run
 * of pages, where move_pages(2) looks up every page on its own. Frames in
 * no known block,
 * and every page when the frames read as 0 (no CAP_SYS_ADMIN) or sysfs
 * lists no memory blocks, are asked of move_pages(2): one call per
 * process per 4096 pages.
 * Returns 0 or -errno (-EPERM/-EACCES: not allowed to query a process; err
 * names it; the other processes are still queried). */
int tier_linux_space_query(struct tier_linux_space *s, uint64_t max_pages,
			   struct tier_err *err);

/* Called between the query's chunks of 4096 pages, where the picture is
 * whole and may be read (tier_env.pause); NULL: none. */
void tier_linux_space_set_pause(struct tier_linux_space *s, void (*pause)(void *ctx), void *ctx);

/* Checks the picture of where pages are against the kernel's: for each
 * managed process, the pages per node of each mapping in
 * <procfs>/PID/numa_maps against page_node over the extents in it. The
 * extents of a mapping whose pages lie on other nodes (as many pages in
 * all, spread otherwise: moved) are queued to be queried first by the
 * next tier_linux_space_query, up to max_pages in all (the first mapping
 * found whatever its size); one whose total differs too is changing, and
 * is queued only where the difference is a 64th of it or more (else left
 * to the next read of the maps and the round-robin query). At most 16 processes a call, round robin
 * over the managed ones. Returns the pages queued or -ENOMEM. A process
 * whose numa_maps cannot be read is left to the query. */
long long tier_linux_space_verify(struct tier_linux_space *s, uint64_t max_pages);

/* The last mapping the check found different: its process and start, and
 * its pages on nodes 0-3 as numa_maps counts them and as the picture does
 * (for the debug log). */
struct tier_linux_space_diff {
	pid_t pid;
	uint64_t start;
	uint64_t theirs[4], mine[4];
};

void tier_linux_space_last_diff(const struct tier_linux_space *s,
				struct tier_linux_space_diff *d);

/* Pages that came with the updates and were never queried. */
uint64_t tier_linux_space_nr_fresh(const struct tier_linux_space *s);

uint64_t tier_linux_space_nr_pages(const struct tier_linux_space *s);
/* A number that changes whenever a page's node in page_node does, or an
 * update maps an address of a process to another page id (or none): what
 * tier_linux_space_nodes() says of an address range is what it said at
 * the same number. */
uint64_t tier_linux_space_gen(const struct tier_linux_space *s);
/* [nr_pages]; the pointers may change across tier_linux_space_update(). */
const uint8_t *tier_linux_space_page_node(const struct tier_linux_space *s);
/* Per 2^TIER_NODE_GEN_SHIFT ids, bumped whenever a page_node byte there
 * changes (tier_env.node_gen); moves as page_node does. */
const uint32_t *tier_linux_space_node_gen(const struct tier_linux_space *s);
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

/* As tier_linux_space_addr(), and *nr (may be NULL): the pages from page on
 * that follow it in both ids and addresses (the rest of its extent). */
int tier_linux_space_run(const struct tier_linux_space *s, uint64_t page, pid_t *pid,
			 uint64_t *addr, uint64_t *nr);

/* Calls fn(ctx, start', end', node) over [start, end) of process pid, in
 * address order, in pieces of one node as the space last found them
 * (page_node; TIER_NODE_NONE where no managed mapping covers it or its
 * node is not known). */
typedef void tier_linux_node_fn(void *ctx, uint64_t start, uint64_t end, uint8_t node);
void tier_linux_space_nodes(const struct tier_linux_space *s, pid_t pid, uint64_t start,
			    uint64_t end, tier_linux_node_fn *fn, void *ctx);

/* Calls fn for each extent of process pid, in address order: its first
 * address, its first id and its pages. Returns 0 or -ESRCH (not managed). */
int tier_linux_space_extents(const struct tier_linux_space *s, pid_t pid,
			     void (*fn)(void *ctx, uint64_t addr, uint64_t first, uint64_t nr),
			     void *ctx);

/* Managed processes now (owner index -> pid). nr_procs is the number of
 * slots; a free slot (its process left) gives pid 0. */
size_t tier_linux_space_nr_procs(const struct tier_linux_space *s);
pid_t tier_linux_space_proc_pid(const struct tier_linux_space *s, size_t idx);

/* Migrator over a space (priv: struct tier_linux_space *): move_pages(2)
 * grouped by process, in the caller's batches, MPOL_MF_MOVE; per-page
 * statuses as in struct tier_migrator_ops; a process gone mid-batch gives
 * -ENOENT for its pages. Counters of what happened:
 *
 * One move_pages(2) call per process, unless the kernel stops early: since
 * Linux 4.17 a failed run of pages (target node full: whole-call ENOMEM;
 * pages busy: a positive return) leaves that run's statuses and all later
 * ones unwritten. The unwritten pages of the failed run are then queried
 * (those that made it before the failure count as moved, the rest get
 * -ENOMEM, or -EBUSY for a positive return, or the call's -errno) and the
 * pages for other nodes are sent again in another call.
 * Statuses: the node (>= 0) on success; -ENOMEM (target full), -EBUSY
 * (busy or pinned, also the kernel's -EAGAIN), -ENOENT (not present, or
 * the process has exited), -EFAULT (no such page: unmapped, zero page, or
 * an id that no extent holds), -EACCES (shared page, or no permission on
 * the process), -EINVAL (node < 0 or > 254), other kernel -errno values
 * (-ENODEV: node without memory). page_node follows: the node on success,
 * TIER_NODE_NONE for -ENOENT/-EFAULT. move() returns the number of pages
 * with status >= 0; -ENOMEM only when its own scratch memory ran out. */
extern const struct tier_migrator_ops tier_linux_migrator_ops;

struct tier_linux_migrate_stats {
	uint64_t moved_pages;		/* status >= 0 */
	uint64_t calls;			/* move_pages(2) calls, queries included */
	uint64_t pagemap_pages;		/* pages a query placed from pagemap */
	uint64_t queried_pages;		/* pages whose node a query asked move_pages */
	uint64_t busy;			/* -EBUSY */
	uint64_t nomem;			/* -ENOMEM */
	uint64_t gone;			/* -ENOENT, -EFAULT */
	uint64_t access_denied;		/* -EACCES */
	uint64_t other;
};
void tier_linux_space_migrate_stats(const struct tier_linux_space *s,
				    struct tier_linux_migrate_stats *out);

/* Memory ops over the machine's nodes (priv: struct tier_linux_space *):
 * MemTotal/MemFree of /sys/devices/system/node/nodeN/meminfo (under
 * ctx->sysfs_root; tier_linux_node_meminfo() in topology.h) in pages, read
 * afresh at every call (one small file), MemFree less the kernel's reserve
 * (the node's zones' high watermarks in <procfs>/zoneinfo, and the gap
 * between their min and high watermarks again: room for others'
 * allocations before kswapd wakes, which cannot reclaim while tierd has
 * demotion off).
 * -ENOENT: no such node; -EINVAL: meminfo malformed or without those
 * lines. */
extern const struct tier_mem_ops tier_linux_mem_ops;

/* Huge pages. Ids of a mapping that can hold a huge page keep the
 * addresses' alignment, so a transparent huge page is the aligned block of
 * 1 << tier_linux_space_huge_shift() ids (9 for 4 KiB pages) holding its
 * pages. tier_linux_space_scan_huge() asks the kernel (PAGEMAP_SCAN on
 * <procfs>/PID/pagemap, Linux 6.7) which blocks are one huge page now; call
 * it after each update (and as often as the map should follow the kernel).
 * Returns 0, -EOPNOTSUPP (no PAGEMAP_SCAN: every page counts as a base page
 * from then on) or -ENOMEM. tier_linux_space_page_huge() is its map
 * ([nr_pages >> shift], 1: one huge page; env->page_huge), NULL before the
 * first scan, when the space grew since, or without PAGEMAP_SCAN; valid
 * until the next update or scan. The migrator's split op writes
 * "PID,0xSTART,0xEND" to <debugfs>/split_huge_pages and checks the outcome
 * with PAGEMAP_SCAN: 0, -EINVAL (not a huge page), -EBUSY (the
 * kernel left it whole), -EOPNOTSUPP (no debugfs file), -EPERM. */
unsigned tier_linux_space_huge_shift(const struct tier_linux_space *s);
int tier_linux_space_scan_huge(struct tier_linux_space *s);
const uint8_t *tier_linux_space_page_huge(const struct tier_linux_space *s);

#endif
