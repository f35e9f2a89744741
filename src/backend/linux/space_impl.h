/* space_impl.h - what the pieces of the Linux address space share (internal:
 * the contracts callers see are in space.h). The space is split by concern:
 *
 *   space.c          the state, its life cycle, lookups and translate()
 *   space_ids.c      the dense id allocator (free ranges, huge-page alignment)
 *   space_update.c   re-reading the maps: diffing them against the extents
 *   space_query.c    where pages are: pagemap frames, else move_pages(2)
 *                    with nodes = NULL
 *   space_migrate.c  the migrator: move_pages(2) with MPOL_MF_MOVE
 *   space_huge.c     transparent huge pages: PAGEMAP_SCAN and splitting
 *   space_mem.c      the node memory ops (meminfo less the kernel's reserve)
 *
 * Bookkeeping is by extent: a run of pages contiguous both in one process's
 * address space and in ids. s->ext is sorted by (slot, start) for address
 * lookups; s->by_id indexes it by first id for id lookups. An update
 * rebuilds both from the new maps:
 *
 *   old extents of pid 42:  [0x1000-0x5000) ids 0-3     (anon)
 *   new maps of pid 42:     [0x1000-0x7000)             (the heap grew)
 *   -> kept:  [0x1000-0x5000) ids 0-3
 *      new:   [0x5000-0x7000) ids from the free list or appended
 */
#ifndef TIER_LINUX_SPACE_IMPL_H
#define TIER_LINUX_SPACE_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/pfn_node.h"
#include "backend/linux/space.h"

/* move_pages(2) writes node ids and small -errno values: never this. */
#define STATUS_UNSET INT_MIN

struct tier__extent {
	uint64_t start;		/* address of the first page */
	uint64_t first;		/* id of the first page */
	uint64_t nr;		/* pages */
	uint64_t dev, ino;	/* backing file; 0, 0 for anonymous memory */
	int64_t key;		/* file page offset - address page number; 0 anon */
	uint32_t slot;		/* owner slot */
	/* numa_maps checks (space_verify.c): a mapping whose counts keep
	 * differing after its pages were queried is checked less often -
	 * verify_wait checks are skipped, doubling up to VERIFY_MAX_WAIT
	 * with each difference in a row (verify_backoff), back to every
	 * check once they agree. Kept on the mapping's first extent. */
	uint8_t verify_backoff;
	uint8_t verify_wait;
};

struct tier__slot {
	pid_t pid;		/* 0: free */
	size_t ext_begin, ext_end;	/* its extents in s->ext */
};

struct tier__pid_slot {
	pid_t pid;
	uint32_t slot;
};

struct tier__id_range {
	uint64_t first, nr;
};

/* One page on its way to a move_pages(2) call. */
struct tier__page_req {
	uint64_t id;
	uint64_t addr;
	uint32_t slot;
	int node;		/* target (migrator) */
	size_t idx;		/* index in the caller's arrays (migrator) */
};

struct tier_linux_space {
	const struct tier_linux_ctx *ctx;
	unsigned page_shift;

	uint64_t nr_pages, cap_pages;
	uint8_t *page_node, *page_owner;
	/* Per 2^TIER_NODE_GEN_SHIFT ids: bumped whenever a page_node byte
	 * there changes (tier_env.node_gen). */
	uint32_t *node_gen;
	/* Bumped whenever a page's node in page_node changes, or the
	 * extents do (tier_linux_space_gen()). */
	uint64_t gen;

	struct tier__extent *ext;	/* sorted by (slot, start) */
	size_t nr_ext;
	size_t *by_id;		/* indexes of ext sorted by first id */

	struct tier__slot *slots;
	size_t nr_slots;
	struct tier__pid_slot *by_pid;	/* live slots sorted by pid */
	size_t nr_live;

	struct tier__id_range *free;	/* released ids, sorted, merged */
	size_t nr_free, cap_free;
	struct tier__id_range *fresh;	/* ids never queried yet, oldest first */
	size_t nr_fresh, cap_fresh;
	uint64_t rr_next;	/* round-robin query cursor (an id) */
	size_t verify_next;	/* round-robin numa_maps cursor (a slot) */
	struct tier_linux_space_diff last_diff;	/* the check's last difference */

	void (*pause)(void *ctx);	/* between query chunks; NULL: none */
	void *pause_ctx;

	/* Scratch for query and move. */
	struct tier__page_req *reqs;
	void **addrs;
	int *nodes, *status, *qstatus;
	size_t cap_scratch;

	struct tier_linux_migrate_stats stats;

	/* Queries from pagemap's frame numbers (space_query.c): the memory
	 * blocks' nodes, loaded at the first query and again (at most every
	 * PFN_RELOAD_CALLS queries) when a frame falls in no known block;
	 * pagemap_off once frames read as 0 (a reader without CAP_SYS_ADMIN)
	 * or the table cannot be had: move_pages(2) from then on. zero_pfn:
	 * the shared zero page's frame (0 unknown), absent as move_pages
	 * says (-EFAULT). */
	struct tier_linux_pfn_nodes pfn;
	bool pfn_tried, pagemap_off;
	uint64_t zero_pfn;
	uint64_t query_calls, pfn_loaded_call;

	/* Huge pages: [nr_pages >> huge_shift] 1 while an aligned block of
	 * ids is one transparent huge page (PAGEMAP_SCAN); NULL until
	 * scanned, and on kernels without PAGEMAP_SCAN. */
	uint8_t *page_huge;
	size_t cap_huge;
	bool huge_unsupported;

	/* The kernel's reserve per node (its zones' high watermarks and the
	 * min-to-high gap again, pages
	 * of 4 KiB), from <procfs>/zoneinfo, re-read every so many calls of
	 * the node memory ops (space_mem.c). */
	uint64_t reserve_4k[256];
	unsigned reserve_calls;
};

static inline uint64_t tier__space_ext_end(const struct tier_linux_space *s,
					   const struct tier__extent *e)
{
	return e->start + (e->nr << s->page_shift);
}

/* Pages of a huge page (2 MiB) of this space's page size. */
static inline uint64_t tier__space_huge_pages(const struct tier_linux_space *s)
{
	return UINT64_C(1) << tier_linux_space_huge_shift(s);
}

/* ---- space.c ---- */

/* Grows the array *p of *cap elements of elem bytes to hold need (doubling,
 * from 16). Returns 0 or -ENOMEM (*p unchanged). */
int tier__space_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Makes the scratch arrays (reqs, addrs, nodes, status, qstatus) hold n
 * entries. Returns 0 or -ENOMEM. */
int tier__space_reserve_scratch(struct tier_linux_space *s, size_t n);

/* The slot of a managed pid, or -1. */
long tier__space_slot_of(const struct tier_linux_space *s, pid_t pid);

/* The extent holding id, or NULL. */
const struct tier__extent *tier__space_ext_by_id(const struct tier_linux_space *s,
						 uint64_t id);

/* Position in by_id of the first extent that ends after id (nr_ext: none). */
size_t tier__space_by_id_from(const struct tier_linux_space *s, uint64_t id);

/* qsort has no context argument: by_id is sorted through a copy of the
 * keys instead, keys[nr_ext] from the caller (so that it cannot fail). */
struct tier__id_key {
	uint64_t first;
	size_t idx;
};

/* Builds the slots' extent bounds, by_pid and by_id from s->ext (sorted,
 * merged). All arrays were sized by the caller. */
void tier__space_index(struct tier_linux_space *s, struct tier__id_key *keys);

/* ---- space_ids.c ---- */

/* Adds ids [first, first + nr) to the free ranges (merging). Returns 0 or
 * -ENOMEM; cannot fail with room for one more range reserved. */
int tier__space_free_add(struct tier_linux_space *s, uint64_t first, uint64_t nr);

/* Takes up to want ids for the pages at address addr. A piece that can
 * hold a huge page takes all of them, keeping the address's alignment to
 * huge pages: the first aligned place in the free ranges where it fits
 * whole, else new ids at the end (the gap before them freed). Another
 * piece takes a free range that fits whole (first fit), else a whole free
 * range of at least 64 pages, else new ids at the end. Capacity (pages,
 * and free ranges for the splits and gaps) is reserved by the caller.
 * Returns how many, first in *first. */
uint64_t tier__space_ids_take(struct tier_linux_space *s, uint64_t want, uint64_t addr,
			      uint64_t *first);

/* ---- space_query.c ---- */

/* Whether a move_pages(2) call on pid that failed with errno e failed
 * because the process has exited or is exiting. */
bool tier__space_call_gone(const struct tier_linux_space *s, pid_t pid, int e);

/* page_node[id] after a move_pages(2) status st: the node, or
 * TIER_NODE_NONE for -ENOENT/-EFAULT; other errors leave it. */
void tier__space_set_node(struct tier_linux_space *s, uint64_t id, int st);
/* page_node of ids [first, first + nr) to TIER_NODE_NONE (no page there
 * yet, or none any more), their node_gen bumped. */
void tier__space_nodes_none(struct tier_linux_space *s, uint64_t first, uint64_t nr);

/* ---- space_huge.c ---- */

/* The migrator's split op (space.h). */
int tier__space_split(void *priv, uint64_t page);

#endif
