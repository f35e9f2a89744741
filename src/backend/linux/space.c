/* space.c - the managed address space on Linux: the managed processes'
 * /proc/PID/maps laid out as dense page ids, plus the move_pages(2)
 * migrator and the node memory ops over it. Contracts in space.h.
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
#include "backend/linux/space.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <numaif.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "backend/linux/maps.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/topology.h"
#include "core/nodelist.h"

/* PAGEMAP_SCAN (Linux 6.7, include/uapi/linux/fs.h), for C libraries whose
 * kernel headers predate it (Debian 12's are 6.1). */
#ifndef PAGEMAP_SCAN
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_HUGE (1 << 6)
struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};
struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* A new mapping is split over free id ranges only down to this size, so
 * a large mapping does not end up as thousands of one-page extents. */
enum { MIN_SPLIT_PAGES = 64 };
/* Pages per move_pages(2) query call (bounds scratch memory). */
enum { QUERY_CHUNK = 4096 };
/* move_pages(2) writes node ids and small -errno values: never this. */
#define STATUS_UNSET INT_MIN

struct extent {
	uint64_t start;		/* address of the first page */
	uint64_t first;		/* id of the first page */
	uint64_t nr;		/* pages */
	uint64_t dev, ino;	/* backing file; 0, 0 for anonymous memory */
	int64_t key;		/* file page offset - address page number; 0 anon */
	uint32_t slot;		/* owner slot */
};

/* A managed mapping as read from maps. */
struct vma {
	uint64_t start, end;
	uint64_t dev, ino;
	int64_t key;
};

struct slot {
	pid_t pid;		/* 0: free */
	size_t ext_begin, ext_end;	/* its extents in s->ext */
};

struct pid_slot {
	pid_t pid;
	uint32_t slot;
};

struct range {
	uint64_t first, nr;
};

/* One page on its way to a move_pages(2) call. */
struct req {
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

	struct extent *ext;	/* sorted by (slot, start) */
	size_t nr_ext;
	size_t *by_id;		/* indexes of ext sorted by first id */

	struct slot *slots;
	size_t nr_slots;
	struct pid_slot *by_pid;	/* live slots sorted by pid */
	size_t nr_live;

	struct range *free;	/* released ids, sorted, merged */
	size_t nr_free, cap_free;
	struct range *fresh;	/* ids never queried yet, oldest first */
	size_t nr_fresh, cap_fresh;
	uint64_t rr_next;	/* round-robin query cursor (an id) */

	/* Scratch for query and move. */
	struct req *reqs;
	void **addrs;
	int *nodes, *status, *qstatus;
	size_t cap_scratch;

	struct tier_linux_migrate_stats stats;

	/* Huge pages: [nr_pages >> huge_shift] 1 while an aligned block of
	 * ids is one transparent huge page (PAGEMAP_SCAN); NULL until
	 * scanned, and on kernels without PAGEMAP_SCAN. */
	uint8_t *page_huge;
	size_t cap_huge;
	bool huge_unsupported;

	/* The kernel's reserve per node (its zones' high watermarks, pages
	 * of 4 KiB), from <procfs>/zoneinfo, re-read every
	 * RESERVE_REREAD calls. */
	uint64_t reserve_4k[256];
	unsigned reserve_calls;
};

#define RESERVE_REREAD 1000

/* ---- small helpers ---- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static uint8_t owner_of(uint32_t slot)
{
	return slot < TIER_LINUX_OWNER_NONE ? (uint8_t)slot : TIER_LINUX_OWNER_NONE;
}

static uint64_t ext_end(const struct tier_linux_space *s, const struct extent *e)
{
	return e->start + (e->nr << s->page_shift);
}

static bool same_backing(const struct extent *e, const struct vma *v)
{
	return e->dev == v->dev && e->ino == v->ino && e->key == v->key;
}

static int reserve_pages(struct tier_linux_space *s, uint64_t need)
{
	uint64_t ncap = s->cap_pages ? s->cap_pages : 1024;
	uint8_t *pn, *po;

	if (need <= s->cap_pages)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX)
		return -ENOMEM;
	pn = realloc(s->page_node, (size_t)ncap);
	if (!pn)
		return -ENOMEM;
	s->page_node = pn;
	po = realloc(s->page_owner, (size_t)ncap);
	if (!po)
		return -ENOMEM;
	s->page_owner = po;
	s->cap_pages = ncap;
	return 0;
}

static int reserve_scratch(struct tier_linux_space *s, size_t n)
{
	size_t ncap = s->cap_scratch ? s->cap_scratch : 256;
	void *p;

	if (n <= s->cap_scratch)
		return 0;
	while (ncap < n)
		ncap *= 2;
#define GROW_ONE(field) do { \
		p = realloc(s->field, ncap * sizeof(*s->field)); \
		if (!p) \
			return -ENOMEM; \
		s->field = p; \
	} while (0)
	GROW_ONE(reqs);
	GROW_ONE(addrs);
	GROW_ONE(nodes);
	GROW_ONE(status);
	GROW_ONE(qstatus);
#undef GROW_ONE
	s->cap_scratch = ncap;
	return 0;
}

/* ---- reading the managed mappings ---- */

struct maps_reading {
	const struct tier_linux_space *s;
	uint64_t max_pages;
	struct vma *v;
	size_t n, cap;
	struct tier_err *err;
};

static int add_vma(void *arg, const struct tier__maps_entry *e)
{
	struct maps_reading *r = arg;
	unsigned shift = r->s->page_shift;
	struct vma *v;

	if (r->max_pages && (e->end - e->start) >> shift > r->max_pages)
		return 0;	/* a sparse reservation (see space.h) */
	if (grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return tier_err_set(r->err, -ENOMEM, "out of memory");
	v = &r->v[r->n++];
	v->start = e->start;
	v->end = e->end;
	v->dev = e->dev_major << 32 | e->dev_minor;
	v->ino = e->inode;
	if (e->inode == 0 && e->dev_major == 0 && e->dev_minor == 0)
		v->key = 0;	/* anonymous: maps shows offset 0 */
	else
		v->key = (int64_t)(e->offset >> shift) - (int64_t)(e->start >> shift);
	return 0;
}

/* Reads the managed mappings of pid, leaving out those larger than
 * max_pages (0: no limit). Returns 0 (mappings in *out, malloc'd, sorted by
 * address), 1 when the process is gone, or -errno with err. */
static int read_maps(const struct tier_linux_space *s, pid_t pid, uint64_t max_pages,
		     struct vma **out, size_t *nr, struct tier_err *err)
{
	struct maps_reading r = { .s = s, .max_pages = max_pages, .err = err };
	size_t nr_lines;
	int ret;

	*out = NULL;
	*nr = 0;
	ret = tier__maps_read(s->ctx, pid, s->page_shift, add_vma, &r, &nr_lines, err);
	if (!ret && !nr_lines)
		ret = 1;	/* no mm: a zombie, or a kernel thread */
	else if (ret == -ESRCH)
		ret = 1;
	if (ret) {
		free(r.v);
		return ret;
	}
	*out = r.v;
	*nr = r.n;
	return 0;
}

/* Pages of memory in the machine (all online nodes), 0 when unknown. */
static uint64_t machine_pages(struct tier_linux_space *s)
{
	char path[PATH_MAX], buf[4096];
	uint64_t sum = 0, total_bytes, free_bytes;
	int *ids = NULL;
	size_t nr = 0, i;

	if (tier_sysfs_path(path, sizeof(path), s->ctx->sysfs_root,
			    "devices/system/node/online") ||
	    tier_sysfs_read(path, buf, sizeof(buf), NULL) < 0 ||
	    tier_nodelist_parse(buf, &ids, &nr, NULL))
		return 0;
	for (i = 0; i < nr; i++) {
		if (tier_linux_node_meminfo(s->ctx->sysfs_root, ids[i], &total_bytes, &free_bytes,
					    NULL)) {
			sum = 0;
			break;
		}
		sum += total_bytes >> s->page_shift;
	}
	free(ids);
	return sum;
}

/* ---- id allocation ---- */

static int free_add(struct tier_linux_space *s, uint64_t first, uint64_t nr)
{
	size_t lo = 0, hi = s->nr_free;
	struct range *r;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->free[mid].first < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	r = s->free;
	if (lo > 0 && r[lo - 1].first + r[lo - 1].nr == first) {
		r[lo - 1].nr += nr;
		if (lo < s->nr_free && first + nr == r[lo].first) {
			r[lo - 1].nr += r[lo].nr;
			memmove(&r[lo], &r[lo + 1], (s->nr_free - lo - 1) * sizeof(*r));
			s->nr_free--;
		}
		return 0;
	}
	if (lo < s->nr_free && first + nr == r[lo].first) {
		r[lo].first = first;
		r[lo].nr += nr;
		return 0;
	}
	if (grow((void **)&s->free, &s->cap_free, s->nr_free + 1, sizeof(*s->free)))
		return -ENOMEM;
	r = s->free;
	memmove(&r[lo + 1], &r[lo], (s->nr_free - lo) * sizeof(*r));
	r[lo].first = first;
	r[lo].nr = nr;
	s->nr_free++;
	return 0;
}

unsigned tier_linux_space_huge_shift(const struct tier_linux_space *s)
{
	return s->page_shift < 21 ? 21 - s->page_shift : 0;
}

/* Pages of a huge page (2 MiB) of this space's page size. */
static uint64_t huge_pages(const struct tier_linux_space *s)
{
	return UINT64_C(1) << tier_linux_space_huge_shift(s);
}

/* Whether a piece of a mapping [addr, addr + nr pages) holds a whole
 * aligned huge page: then its ids keep the addresses' alignment. */
static bool can_hold_huge(const struct tier_linux_space *s, uint64_t addr, uint64_t nr)
{
	uint64_t hb = huge_pages(s) << s->page_shift;
	uint64_t up = (addr + hb - 1) & ~(hb - 1);

	return huge_pages(s) > 1 && up + hb <= addr + (nr << s->page_shift);
}

/* Removes ids [first, first + nr) from free range i (they lie inside it):
 * what is left before and after stays free. Needs room for one more range
 * (reserved by the caller). */
static void free_cut(struct tier_linux_space *s, size_t i, uint64_t first, uint64_t nr)
{
	struct range *r = &s->free[i];
	uint64_t end = r->first + r->nr;

	if (first == r->first) {
		r->first += nr;
		r->nr -= nr;
		if (!r->nr) {
			memmove(r, r + 1, (s->nr_free - i - 1) * sizeof(*r));
			s->nr_free--;
		}
		return;
	}
	r->nr = first - r->first;
	if (first + nr < end) {
		memmove(&s->free[i + 2], &s->free[i + 1], (s->nr_free - i - 1) * sizeof(*r));
		s->free[i + 1] = (struct range){ first + nr, end - (first + nr) };
		s->nr_free++;
	}
}

/* Takes up to want ids for the pages at address addr, keeping the
 * address's alignment to huge pages (id = page number modulo 512 with 4
 * KiB pages) when the piece can hold a huge page, so that a huge page's
 * pages are one aligned block of ids (env->page_huge): the first aligned
 * place in the free ranges where the piece fits whole, else new ids at the
 * end (the gap before them freed). The ids of smaller pieces are taken as they come.
 * Capacity (pages, and free ranges for the splits) is reserved by the
 * caller. Takes all want ids (one extent per piece: the caller's bounds
 * rely on it). Returns how many, first in *first. */
static uint64_t ids_take_aligned(struct tier_linux_space *s, uint64_t want, uint64_t addr,
				 uint64_t *first)
{
	const uint64_t h = huge_pages(s), key = (addr >> s->page_shift) & (h - 1);
	uint64_t f;
	size_t i;

	for (i = 0; i < s->nr_free; i++) {
		const struct range *r = &s->free[i];

		f = r->first + ((key - r->first) & (h - 1));
		if (f + want > r->first + r->nr)
			continue;
		*first = f;
		free_cut(s, i, f, want);
		return want;
	}
	f = s->nr_pages + ((key - s->nr_pages) & (h - 1));
	if (f > s->nr_pages) {
		/* The gap is free: no page there. */
		memset(s->page_node + s->nr_pages, TIER_NODE_NONE, (size_t)(f - s->nr_pages));
		memset(s->page_owner + s->nr_pages, TIER_LINUX_OWNER_NONE, (size_t)(f - s->nr_pages));
		(void)free_add(s, s->nr_pages, f - s->nr_pages);
	}
	*first = f;
	s->nr_pages = f + want;
	return want;
}

/* Takes up to want ids: a free range that fits whole (first fit), else a
 * whole free range of at least MIN_SPLIT_PAGES, else new ids at the end
 * (capacity reserved by the caller). Returns how many, first in *first. */
static uint64_t ids_take(struct tier_linux_space *s, uint64_t want, uint64_t addr,
			 uint64_t *first)
{
	size_t i;

	if (can_hold_huge(s, addr, want))
		return ids_take_aligned(s, want, addr, first);
	for (i = 0; i < s->nr_free; i++) {
		struct range *r = &s->free[i];

		if (r->nr < want)
			continue;
		*first = r->first;
		r->first += want;
		r->nr -= want;
		if (!r->nr) {
			memmove(r, r + 1, (s->nr_free - i - 1) * sizeof(*r));
			s->nr_free--;
		}
		return want;
	}
	for (i = 0; i < s->nr_free; i++) {
		uint64_t got = s->free[i].nr;

		if (got < MIN_SPLIT_PAGES)
			continue;
		*first = s->free[i].first;
		memmove(&s->free[i], &s->free[i + 1], (s->nr_free - i - 1) * sizeof(*s->free));
		s->nr_free--;
		return got;
	}
	*first = s->nr_pages;
	s->nr_pages += want;
	return want;
}

/* ---- lookups ---- */

static int cmp_pid_slot(const void *a, const void *b)
{
	const struct pid_slot *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static long slot_of(const struct tier_linux_space *s, pid_t pid)
{
	struct pid_slot key = { .pid = pid }, *hit;

	if (!s->nr_live)
		return -1;
	hit = bsearch(&key, s->by_pid, s->nr_live, sizeof(key), cmp_pid_slot);
	return hit ? (long)hit->slot : -1;
}

/* The extent holding id, or NULL. */
static const struct extent *ext_by_id(const struct tier_linux_space *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ext;
	const struct extent *e;

	/* Last extent with first <= id. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ext[s->by_id[mid]].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &s->ext[s->by_id[lo - 1]];
	return id < e->first + e->nr ? e : NULL;
}

/* Position in by_id of the first extent that ends after id (nr_ext: none). */
static size_t by_id_from(const struct tier_linux_space *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ext;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct extent *e = &s->ext[s->by_id[mid]];

		if (e->first + e->nr <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index in s->ext of the first extent of slot that ends after addr. */
static size_t ext_from_addr(const struct tier_linux_space *s, uint32_t slot, uint64_t addr)
{
	size_t lo = s->slots[slot].ext_begin, hi = s->slots[slot].ext_end;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ext_end(s, &s->ext[mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tier_linux_space_run(const struct tier_linux_space *s, uint64_t page, pid_t *pid,
			 uint64_t *addr, uint64_t *nr)
{
	const struct extent *e = ext_by_id(s, page);

	if (!e)
		return -ENOENT;
	if (pid)
		*pid = s->slots[e->slot].pid;
	if (addr)
		*addr = e->start + ((page - e->first) << s->page_shift);
	if (nr)
		*nr = e->first + e->nr - page;
	return 0;
}

int tier_linux_space_addr(const struct tier_linux_space *s, uint64_t page, pid_t *pid,
			  uint64_t *addr)
{
	return tier_linux_space_run(s, page, pid, addr, NULL);
}

int tier_linux_space_extents(const struct tier_linux_space *s, pid_t pid,
			     void (*fn)(void *ctx, uint64_t addr, uint64_t first, uint64_t nr),
			     void *ctx)
{
	long slot = slot_of(s, pid);
	size_t i;

	if (slot < 0)
		return -ESRCH;
	for (i = s->slots[slot].ext_begin; i < s->slots[slot].ext_end; i++)
		fn(ctx, s->ext[i].start, s->ext[i].first, s->ext[i].nr);
	return 0;
}

bool tier_linux_space_page(const struct tier_linux_space *s, pid_t pid, uint64_t addr,
			   uint64_t *page)
{
	long slot = slot_of(s, pid);
	const struct extent *e;
	size_t i;

	if (slot < 0)
		return false;
	i = ext_from_addr(s, (uint32_t)slot, addr);
	if (i == s->slots[slot].ext_end)
		return false;
	e = &s->ext[i];
	if (addr < e->start)
		return false;
	if (page)
		*page = e->first + ((addr - e->start) >> s->page_shift);
	return true;
}

uint64_t tier_linux_space_nr_pages(const struct tier_linux_space *s)
{
	return s->nr_pages;
}

const uint8_t *tier_linux_space_page_node(const struct tier_linux_space *s)
{
	return s->page_node;
}

uint64_t tier_linux_space_nr_fresh(const struct tier_linux_space *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->nr_fresh; i++)
		n += s->fresh[i].nr;
	return n;
}

const uint8_t *tier_linux_space_page_owner(const struct tier_linux_space *s)
{
	return s->page_owner;
}

size_t tier_linux_space_nr_procs(const struct tier_linux_space *s)
{
	return s->nr_slots;
}

pid_t tier_linux_space_proc_pid(const struct tier_linux_space *s, size_t idx)
{
	return idx < s->nr_slots ? s->slots[idx].pid : 0;
}

void tier_linux_space_migrate_stats(const struct tier_linux_space *s,
				    struct tier_linux_migrate_stats *out)
{
	*out = s->stats;
}

/* ---- life cycle ---- */

int tier_linux_space_new(const struct tier_linux_ctx *ctx, unsigned page_shift,
			 struct tier_linux_space **out, struct tier_err *err)
{
	struct tier_linux_space *s;

	*out = NULL;
	if (page_shift < 10 || page_shift > 30)
		return tier_err_set(err, -EINVAL, "page shift %u out of range 10..30",
				    page_shift);
	if (!ctx || !ctx->procfs_root || !ctx->sysfs_root)
		return tier_err_set(err, -EINVAL, "address space: procfs and sysfs roots needed");
	s = calloc(1, sizeof(*s));
	if (!s)
		return tier_err_set(err, -ENOMEM, "out of memory");
	s->ctx = ctx;
	s->page_shift = page_shift;
	*out = s;
	return 0;
}

void tier_linux_space_destroy(struct tier_linux_space *s)
{
	if (!s)
		return;
	free(s->page_node);
	free(s->page_owner);
	free(s->ext);
	free(s->by_id);
	free(s->slots);
	free(s->by_pid);
	free(s->free);
	free(s->fresh);
	free(s->reqs);
	free(s->addrs);
	free(s->nodes);
	free(s->status);
	free(s->qstatus);
	free(s->page_huge);
	free(s);
}

/* ---- update ---- */

struct proc_maps {
	pid_t pid;
	uint32_t slot;
	struct vma *vmas;
	size_t nr;
};

/* A piece of a new mapping that needs ids. */
struct pending {
	uint64_t start, nr;
	uint64_t dev, ino;
	int64_t key;
	uint32_t slot;
};

struct update {
	struct proc_maps *procs;
	size_t nr_procs;
	struct extent *ext;		/* the new extents */
	size_t nr_ext, cap_ext;
	struct pending *pend;
	size_t nr_pend, cap_pend;
	struct range *rel;		/* released ids */
	size_t nr_rel, cap_rel;
	uint64_t pend_pages;
};

static void update_release(struct update *u)
{
	size_t i;

	for (i = 0; i < u->nr_procs; i++)
		free(u->procs[i].vmas);
	free(u->procs);
	free(u->ext);
	free(u->pend);
	free(u->rel);
}

static int push_rel(struct update *u, uint64_t first, uint64_t nr)
{
	if (!nr)
		return 0;
	if (grow((void **)&u->rel, &u->cap_rel, u->nr_rel + 1, sizeof(*u->rel)))
		return -ENOMEM;
	u->rel[u->nr_rel++] = (struct range){ first, nr };
	return 0;
}

static int push_pend(struct tier_linux_space *s, struct update *u, const struct vma *v,
		     uint64_t start, uint64_t end, uint32_t slot)
{
	if (end <= start)
		return 0;
	if (grow((void **)&u->pend, &u->cap_pend, u->nr_pend + 1, sizeof(*u->pend)))
		return -ENOMEM;
	u->pend[u->nr_pend++] = (struct pending){
		.start = start, .nr = (end - start) >> s->page_shift,
		.dev = v->dev, .ino = v->ino, .key = v->key, .slot = slot,
	};
	u->pend_pages += (end - start) >> s->page_shift;
	return 0;
}

static int push_ext(struct update *u, const struct extent *e)
{
	if (grow((void **)&u->ext, &u->cap_ext, u->nr_ext + 1, sizeof(*u->ext)))
		return -ENOMEM;
	u->ext[u->nr_ext++] = *e;
	return 0;
}

/* Matches the new mappings of one process against its old extents
 * [ob, oe): pages mapped before with the same backing keep their ids, the
 * rest of each mapping is pending, old pages no mapping keeps are
 * released. Both lists are sorted by address and do not overlap. */
static int diff_proc(struct tier_linux_space *s, struct update *u,
		     const struct proc_maps *pm, size_t ob, size_t oe)
{
	uint64_t shift = s->page_shift;
	uint64_t *cursor = NULL;	/* per old extent: address released up to */
	size_t i, j = ob, k;
	int ret = 0;

	if (oe > ob) {
		cursor = malloc((oe - ob) * sizeof(*cursor));
		if (!cursor)
			return -ENOMEM;
		for (k = ob; k < oe; k++)
			cursor[k - ob] = s->ext[k].start;
	}
	for (i = 0; i < pm->nr; i++) {
		const struct vma *v = &pm->vmas[i];
		uint64_t at = v->start;	/* v is settled below at */

		while (j < oe && ext_end(s, &s->ext[j]) <= v->start)
			j++;
		for (k = j; k < oe && s->ext[k].start < v->end; k++) {
			const struct extent *o = &s->ext[k];
			uint64_t lo = o->start > v->start ? o->start : v->start;
			uint64_t hi = ext_end(s, o) < v->end ? ext_end(s, o) : v->end;
			struct extent kept;

			if (!same_backing(o, v))
				continue;	/* remapped: those pages are new */
			ret = push_pend(s, u, v, at, lo, pm->slot);
			if (ret)
				goto out;
			kept = *o;
			kept.start = lo;
			kept.first = o->first + ((lo - o->start) >> shift);
			kept.nr = (hi - lo) >> shift;
			kept.dev = v->dev;
			kept.ino = v->ino;
			kept.key = v->key;
			ret = push_ext(u, &kept);
			if (ret)
				goto out;
			ret = push_rel(u, o->first + ((cursor[k - ob] - o->start) >> shift),
				       (lo - cursor[k - ob]) >> shift);
			if (ret)
				goto out;
			cursor[k - ob] = hi;
			at = hi;
		}
		ret = push_pend(s, u, v, at, v->end, pm->slot);
		if (ret)
			goto out;
	}
	for (k = ob; k < oe; k++) {
		const struct extent *o = &s->ext[k];

		ret = push_rel(u, o->first + ((cursor[k - ob] - o->start) >> shift),
			       (ext_end(s, o) - cursor[k - ob]) >> shift);
		if (ret)
			goto out;
	}
out:
	free(cursor);
	return ret;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

static int cmp_ext_addr(const void *a, const void *b)
{
	const struct extent *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* qsort has no context argument: by_id is sorted through a copy of the
 * keys instead. */
struct id_key {
	uint64_t first;
	size_t idx;
};

static int cmp_id_key(const void *a, const void *b)
{
	const struct id_key *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* Builds slots, by_pid and by_id from s->ext (sorted, merged). All arrays
 * were sized by the caller. */
static void index_extents(struct tier_linux_space *s, struct id_key *keys)
{
	size_t i;

	for (i = 0; i < s->nr_slots; i++)
		s->slots[i].ext_begin = s->slots[i].ext_end = 0;
	for (i = 0; i < s->nr_ext; i++) {
		struct slot *sl = &s->slots[s->ext[i].slot];

		if (sl->ext_begin == sl->ext_end)
			sl->ext_begin = i;
		sl->ext_end = i + 1;
		keys[i] = (struct id_key){ s->ext[i].first, i };
	}
	qsort(keys, s->nr_ext, sizeof(*keys), cmp_id_key);
	for (i = 0; i < s->nr_ext; i++)
		s->by_id[i] = keys[i].idx;
	s->nr_live = 0;
	for (i = 0; i < s->nr_slots; i++)
		if (s->slots[i].pid)
			s->by_pid[s->nr_live++] = (struct pid_slot){ s->slots[i].pid, (uint32_t)i };
	qsort(s->by_pid, s->nr_live, sizeof(*s->by_pid), cmp_pid_slot);
}

int tier_linux_space_update(struct tier_linux_space *s, const pid_t *pids, size_t n,
			    void (*forget)(void *ctx, uint64_t first, uint64_t nr), void *ctx,
			    struct tier_err *err)
{
	struct update u = { 0 };
	pid_t *sorted = NULL;
	struct slot *new_slots = NULL;
	struct pid_slot *new_by_pid = NULL;
	size_t *new_by_id = NULL;
	struct id_key *keys = NULL;
	size_t i, nr_sorted = 0, nr_new_slots, max_ext;
	uint64_t max_map_pages = machine_pages(s);
	bool *slot_used = NULL, *survives = NULL;
	int ret = 0;

	/* Phase 1: read everything; the space is untouched until phase 2. */
	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			goto out_nomem;
		memcpy(sorted, pids, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_pid);
		for (i = 0; i < n; i++)
			if (sorted[i] > 0 && (!nr_sorted || sorted[nr_sorted - 1] != sorted[i]))
				sorted[nr_sorted++] = sorted[i];
		u.procs = calloc(nr_sorted ? nr_sorted : 1, sizeof(*u.procs));
		if (!u.procs)
			goto out_nomem;
	}
	for (i = 0; i < nr_sorted; i++) {
		struct proc_maps *pm = &u.procs[u.nr_procs];

		ret = read_maps(s, sorted[i], max_map_pages, &pm->vmas, &pm->nr, err);
		if (ret < 0)
			goto out;
		if (ret == 1)
			continue;	/* gone */
		pm->pid = sorted[i];
		u.nr_procs++;
	}
	ret = 0;

	/* Slots: survivors keep theirs, newcomers take the lowest free one. */
	nr_new_slots = s->nr_slots > u.nr_procs ? s->nr_slots : u.nr_procs;
	slot_used = calloc(nr_new_slots + 1, sizeof(*slot_used));
	survives = calloc(s->nr_slots + 1, sizeof(*survives));
	if (!slot_used || !survives)
		goto out_nomem;
	for (i = 0; i < u.nr_procs; i++) {
		long sl = slot_of(s, u.procs[i].pid);

		u.procs[i].slot = sl >= 0 ? (uint32_t)sl : UINT32_MAX;
		if (sl >= 0)
			slot_used[sl] = survives[sl] = true;
	}
	{
		size_t next = 0;

		for (i = 0; i < u.nr_procs; i++) {
			if (u.procs[i].slot != UINT32_MAX)
				continue;
			while (slot_used[next])
				next++;
			slot_used[next] = true;
			u.procs[i].slot = (uint32_t)next;
		}
	}
	while (nr_new_slots && !slot_used[nr_new_slots - 1])
		nr_new_slots--;

	/* Diff each process against its old extents. */
	for (i = 0; i < u.nr_procs; i++) {
		const struct proc_maps *pm = &u.procs[i];
		size_t ob = 0, oe = 0;

		if (pm->slot < s->nr_slots && survives[pm->slot] &&
		    s->slots[pm->slot].pid == pm->pid) {
			ob = s->slots[pm->slot].ext_begin;
			oe = s->slots[pm->slot].ext_end;
		}
		ret = diff_proc(s, &u, pm, ob, oe);
		if (ret)
			goto out_nomem;
	}
	/* Processes that left: all their ids go. */
	for (i = 0; i < s->nr_slots; i++) {
		size_t k;

		if (!s->slots[i].pid || survives[i])
			continue;
		for (k = s->slots[i].ext_begin; k < s->slots[i].ext_end; k++) {
			ret = push_rel(&u, s->ext[k].first, s->ext[k].nr);
			if (ret)
				goto out_nomem;
		}
	}

	/* Reserve everything phase 2 needs, so that it cannot fail. Each
	 * pending piece becomes one extent per free range it takes, plus one. */
	ret = reserve_pages(s, s->nr_pages + u.pend_pages + u.nr_pend * huge_pages(s));
	if (ret)
		goto out_nomem;
	/* Released ranges, and per pending piece one split of a free range
	 * or one alignment gap. */
	if (grow((void **)&s->free, &s->cap_free, s->nr_free + u.nr_rel + u.nr_pend,
		 sizeof(*s->free)))
		goto out_nomem;
	/* A pending piece becomes one extent per free range it takes, plus
	 * one; the free ranges are the old ones, the released ones and at
	 * most one a piece that keeps huge-page alignment makes (a split
	 * range or an alignment gap). */
	if (grow((void **)&s->fresh, &s->cap_fresh,
		 s->nr_fresh + 2 * u.nr_pend + s->nr_free + u.nr_rel, sizeof(*s->fresh)))
		goto out_nomem;
	max_ext = u.nr_ext + 2 * u.nr_pend + s->nr_free + u.nr_rel;
	if (grow((void **)&u.ext, &u.cap_ext, max_ext ? max_ext : 1, sizeof(*u.ext)))
		goto out_nomem;
	new_slots = calloc(nr_new_slots ? nr_new_slots : 1, sizeof(*new_slots));
	new_by_pid = calloc(nr_new_slots ? nr_new_slots : 1, sizeof(*new_by_pid));
	new_by_id = malloc((max_ext ? max_ext : 1) * sizeof(*new_by_id));
	keys = malloc((max_ext ? max_ext : 1) * sizeof(*keys));
	if (!new_slots || !new_by_pid || !new_by_id || !keys)
		goto out_nomem;

	/* Phase 2: commit. Release first (forget before reuse). */
	if (u.nr_rel)
		qsort(u.rel, u.nr_rel, sizeof(*u.rel), cmp_range);
	for (i = 0; i < u.nr_rel;) {
		uint64_t first = u.rel[i].first, nr = u.rel[i].nr;

		for (i++; i < u.nr_rel && u.rel[i].first == first + nr; i++)
			nr += u.rel[i].nr;
		memset(s->page_node + first, TIER_NODE_NONE, (size_t)nr);
		memset(s->page_owner + first, TIER_LINUX_OWNER_NONE, (size_t)nr);
		if (forget)
			forget(ctx, first, nr);
		/* Cannot fail: capacity reserved above and merging only shrinks. */
		(void)free_add(s, first, nr);
	}
	for (i = 0; i < u.nr_pend; i++) {
		const struct pending *p = &u.pend[i];
		uint64_t addr = p->start, left = p->nr;

		while (left) {
			uint64_t first, got = ids_take(s, left, addr, &first);
			struct extent e = {
				.start = addr, .first = first, .nr = got,
				.dev = p->dev, .ino = p->ino, .key = p->key, .slot = p->slot,
			};

			u.ext[u.nr_ext++] = e;
			memset(s->page_node + first, TIER_NODE_NONE, (size_t)got);
			memset(s->page_owner + first, owner_of(p->slot), (size_t)got);
			if (s->nr_fresh && s->fresh[s->nr_fresh - 1].first +
						   s->fresh[s->nr_fresh - 1].nr == first)
				s->fresh[s->nr_fresh - 1].nr += got;
			else
				s->fresh[s->nr_fresh++] = (struct range){ first, got };
			addr += got << s->page_shift;
			left -= got;
		}
	}

	/* Sort by (slot, address) and merge extents that continue each other
	 * in addresses and ids with the same backing. */
	qsort(u.ext, u.nr_ext, sizeof(*u.ext), cmp_ext_addr);
	if (u.nr_ext) {
		size_t w = 0;

		for (i = 1; i < u.nr_ext; i++) {
			struct extent *a = &u.ext[w], *b = &u.ext[i];

			if (a->slot == b->slot && ext_end(s, a) == b->start &&
			    a->first + a->nr == b->first && a->dev == b->dev &&
			    a->ino == b->ino && a->key == b->key)
				a->nr += b->nr;
			else
				u.ext[++w] = *b;
		}
		u.nr_ext = w + 1;
	}
	free(s->ext);
	s->ext = u.ext;
	s->nr_ext = u.nr_ext;
	u.ext = NULL;
	free(s->by_id);
	s->by_id = new_by_id;
	new_by_id = NULL;
	for (i = 0; i < u.nr_procs; i++)
		new_slots[u.procs[i].slot].pid = u.procs[i].pid;
	free(s->slots);
	s->slots = new_slots;
	s->nr_slots = nr_new_slots;
	new_slots = NULL;
	free(s->by_pid);
	s->by_pid = new_by_pid;
	new_by_pid = NULL;
	index_extents(s, keys);
	goto out;

out_nomem:
	ret = tier_err_set(err, -ENOMEM, "address space update: out of memory");
out:
	free(keys);
	free(new_by_id);
	free(new_by_pid);
	free(new_slots);
	free(survives);
	free(slot_used);
	free(sorted);
	update_release(&u);
	return ret;
}

/* ---- translate ---- */

void tier_linux_space_translate(struct tier_linux_space *s,
				const struct tier_linux_addr_obs *obs, size_t n,
				void (*sink)(void *ctx, const struct tier_obs *obs, size_t n),
				void *ctx)
{
	struct tier_obs out[64];
	uint64_t mask = (1ull << s->page_shift) - 1;
	size_t nr_out = 0, i;

	for (i = 0; i < n; i++) {
		const struct tier_linux_addr_obs *o = &obs[i];
		uint64_t start = o->start & ~mask, end;
		long slot = slot_of(s, o->pid);
		size_t k;

		if (slot < 0 || o->end <= o->start)
			continue;
		end = o->end > UINT64_MAX - mask ? UINT64_MAX & ~mask : (o->end + mask) & ~mask;
		for (k = ext_from_addr(s, (uint32_t)slot, start);
		     k < s->slots[slot].ext_end && s->ext[k].start < end; k++) {
			const struct extent *e = &s->ext[k];
			uint64_t lo = e->start > start ? e->start : start;
			uint64_t hi = ext_end(s, e) < end ? ext_end(s, e) : end;
			uint64_t page = e->first + ((lo - e->start) >> s->page_shift);
			uint64_t left = (hi - lo) >> s->page_shift;

			while (left) {
				uint32_t chunk = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;

				out[nr_out++] = (struct tier_obs){
					.page = page, .nr_pages = chunk, .kind = o->kind,
					.write = o->write, .count = o->count, .max = o->max,
					.latency_us = o->latency_us, .interval_us = o->interval_us,
				};
				page += chunk;
				left -= chunk;
				if (nr_out == sizeof(out) / sizeof(out[0])) {
					sink(ctx, out, nr_out);
					nr_out = 0;
				}
			}
		}
	}
	if (nr_out)
		sink(ctx, out, nr_out);
}

/* ---- querying and moving ---- */

/* Whether pid has exited or is exiting: move_pages(2) gives ESRCH once it
 * is reaped, EINVAL while it is a zombie (no mm left). */
static bool proc_gone(const struct tier_linux_space *s, pid_t pid)
{
	char path[PATH_MAX], buf[16384];
	long n;

	if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "%d/status", (int)pid))
		return false;
	n = tier_sysfs_read(path, buf, sizeof(buf), NULL);
	if (n == -ENOENT || n == -ESRCH)
		return true;
	if (n < 0)
		return false;
	return !strstr(buf, "\nVmRSS:") || strstr(buf, "\nState:\tZ") ||
	       strstr(buf, "\nState:\tX");
}

static void set_node(struct tier_linux_space *s, uint64_t id, int st)
{
	if (st >= 0)
		s->page_node[id] = st < TIER_NODE_NONE ? (uint8_t)st : TIER_NODE_NONE;
	else if (st == -ENOENT || st == -EFAULT)
		s->page_node[id] = TIER_NODE_NONE;
}

static int cmp_req_slot(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Adds the pages of ids [first, first + nr) that extents hold to reqs, up
 * to cap entries. Returns the ids consumed (held or not). */
static uint64_t collect_ids(struct tier_linux_space *s, uint64_t first, uint64_t nr,
			    size_t *n, size_t cap)
{
	uint64_t id = first, end = first + nr;
	size_t k = by_id_from(s, first);

	while (id < end && *n < cap) {
		const struct extent *e;
		uint64_t stop;

		if (k == s->nr_ext)
			return nr;
		e = &s->ext[s->by_id[k]];
		if (e->first >= end)
			return nr;
		if (id < e->first)
			id = e->first;
		stop = e->first + e->nr < end ? e->first + e->nr : end;
		for (; id < stop && *n < cap; id++)
			s->reqs[(*n)++] = (struct req){
				.id = id, .slot = e->slot,
				.addr = e->start + ((id - e->first) << s->page_shift),
			};
		if (id == stop)
			k++;
	}
	return id - first;
}

/* Queries reqs[0, n) (sorted by slot) and updates page_node. */
static int query_reqs(struct tier_linux_space *s, size_t n, struct tier_err *err)
{
	size_t a, b, i;
	int ret = 0;

	for (a = 0; a < n; a = b) {
		uint32_t slot = s->reqs[a].slot;
		pid_t pid = s->slots[slot].pid;
		long r;

		for (b = a; b < n && s->reqs[b].slot == slot; b++)
			s->addrs[b - a] = (void *)(uintptr_t)s->reqs[b].addr;
		for (i = 0; i < b - a; i++)
			s->status[i] = STATUS_UNSET;
		r = numa_move_pages(pid, b - a, s->addrs, NULL, s->status, 0);
		s->stats.calls++;
		if (r < 0) {
			int e = errno;

			if (e == ESRCH || ((e == EINVAL || e == ENOENT) && proc_gone(s, pid))) {
				for (i = a; i < b; i++)
					s->page_node[s->reqs[i].id] = TIER_NODE_NONE;
				continue;
			}
			if (!ret)
				ret = tier_err_set(err, -e, "move_pages(%d) query of %zu pages: %s",
						   (int)pid, b - a, strerror(e));
			continue;
		}
		for (i = a; i < b; i++) {
			int st = s->status[i - a];

			if (st != STATUS_UNSET)
				set_node(s, s->reqs[i].id, st >= 0 ? st : -ENOENT);
		}
	}
	return ret;
}

int tier_linux_space_query(struct tier_linux_space *s, uint64_t max_pages,
			   struct tier_err *err)
{
	uint64_t left = max_pages, live = 0, rr_done = 0;
	size_t i;
	int ret = 0, r;

	for (i = 0; i < s->nr_ext; i++)
		live += s->ext[i].nr;
	if (reserve_scratch(s, QUERY_CHUNK))
		return tier_err_set(err, -ENOMEM, "address space query: out of memory");
	while (left) {
		size_t n = 0, cap = left < QUERY_CHUNK ? (size_t)left : QUERY_CHUNK;

		/* Pages never queried first. */
		while (s->nr_fresh && n < cap) {
			struct range *f = &s->fresh[0];
			uint64_t used = collect_ids(s, f->first, f->nr, &n, cap);

			f->first += used;
			f->nr -= used;
			if (!f->nr)
				memmove(f, f + 1, --s->nr_fresh * sizeof(*f));
		}
		/* Then round robin, each page at most once per call. */
		while (n < cap && rr_done < live && s->nr_ext) {
			size_t before = n;
			uint64_t used;

			if (by_id_from(s, s->rr_next) == s->nr_ext)
				s->rr_next = 0;
			used = collect_ids(s, s->rr_next, UINT64_MAX - s->rr_next, &n, cap);
			(void)used;
			if (n == before) {
				s->rr_next = 0;
				continue;
			}
			s->rr_next = s->reqs[n - 1].id + 1;
			rr_done += n - before;
			if (rr_done > live)
				n -= (size_t)(rr_done - live);	/* wrapped onto itself */
		}
		if (!n)
			break;
		qsort(s->reqs, n, sizeof(*s->reqs), cmp_req_slot);
		r = query_reqs(s, n, err);
		if (r && !ret)
			ret = r;
		left -= n;
	}
	return ret;
}

static int cmp_req_move(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static void count_status(struct tier_linux_migrate_stats *st, int status)
{
	if (status >= 0)
		st->moved_pages++;
	else if (status == -EBUSY)
		st->busy++;
	else if (status == -ENOMEM)
		st->nomem++;
	else if (status == -ENOENT || status == -EFAULT)
		st->gone++;
	else if (status == -EACCES)
		st->access_denied++;
	else
		st->other++;
}

static int normalize(int st)
{
	if (st == -EAGAIN)
		return -EBUSY;
	if (st == -EPERM)
		return -EACCES;
	return st;
}

/* Moves reqs[0, n) of one process (sorted by target node). Writes the
 * caller's status[] and page_node. May reorder reqs. */
static void move_proc(struct tier_linux_space *s, struct req *rq, size_t n, int *status)
{
	pid_t pid = s->slots[rq[0].slot].pid;
	size_t i;

	while (n) {
		size_t m = 0, kept = 0;
		int code, fnode = -1, e = 0;
		long r;

		for (i = 0; i < n; i++) {
			s->addrs[i] = (void *)(uintptr_t)rq[i].addr;
			s->nodes[i] = rq[i].node;
			s->status[i] = STATUS_UNSET;
		}
		r = numa_move_pages(pid, n, s->addrs, s->nodes, s->status, MPOL_MF_MOVE);
		s->stats.calls++;
		if (r < 0)
			e = errno;
		for (i = 0; i < n; i++)
			if (s->status[i] != STATUS_UNSET)
				status[rq[i].idx] = normalize(s->status[i]);
		if (r < 0 && (e == ESRCH || ((e == EINVAL || e == ENOENT) && proc_gone(s, pid)))) {
			code = -ENOENT;		/* the process is gone */
		} else if (r < 0 && (e == EPERM || e == EINVAL || e == EFAULT || e == E2BIG)) {
			code = e == EPERM ? -EACCES : -e;	/* the whole call */
		} else {
			/* Kernel stopped at a failed run (see space.h), or not. */
			for (i = 0; i < n && s->status[i] != STATUS_UNSET; i++)
				;
			if (i == n)
				return;
			fnode = s->nodes[i];
			code = r < 0 ? normalize(-e) : -EBUSY;
		}
		if (fnode < 0) {
			for (i = 0; i < n; i++)
				if (s->status[i] == STATUS_UNSET)
					status[rq[i].idx] = code;
			return;
		}
		/* Unwritten pages bound for fnode: where are they now? The
		 * others were not tried: keep them for the next call. */
		for (i = 0; i < n; i++) {
			if (s->status[i] != STATUS_UNSET)
				continue;
			if (s->nodes[i] == fnode)
				s->addrs[m++] = (void *)(uintptr_t)rq[i].addr;
		}
		for (i = 0; i < m; i++)
			s->qstatus[i] = STATUS_UNSET;
		r = numa_move_pages(pid, m, s->addrs, NULL, s->qstatus, 0);
		s->stats.calls++;
		if (r < 0) {
			int q = errno == ESRCH ? -ENOENT : STATUS_UNSET;

			for (i = 0; i < m; i++)
				s->qstatus[i] = q;
		}
		m = 0;
		for (i = 0; i < n; i++) {
			int q;

			if (s->status[i] != STATUS_UNSET)
				continue;
			if (s->nodes[i] != fnode) {
				rq[kept++] = rq[i];
				continue;
			}
			q = s->qstatus[m++];
			if (q == fnode)
				status[rq[i].idx] = fnode;	/* made it before the failure */
			else if (q == -ENOENT || q == -EFAULT)
				status[rq[i].idx] = q;
			else
				status[rq[i].idx] = code;
		}
		n = kept;
	}
}

static long migrator_move(void *priv, const uint64_t *pages, const int *nodes, int *status,
			  size_t n)
{
	struct tier_linux_space *s = priv;
	size_t i, a, b, nr = 0;
	long moved = 0;

	if (!n)
		return 0;
	if (reserve_scratch(s, n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct extent *e = pages[i] < s->nr_pages ? ext_by_id(s, pages[i]) : NULL;

		if (!e) {
			status[i] = -EFAULT;
			continue;
		}
		if (nodes[i] < 0 || nodes[i] >= TIER_NODE_NONE) {
			status[i] = -EINVAL;
			continue;
		}
		status[i] = STATUS_UNSET;
		s->reqs[nr++] = (struct req){
			.id = pages[i], .slot = e->slot, .node = nodes[i], .idx = i,
			.addr = e->start + ((pages[i] - e->first) << s->page_shift),
		};
	}
	qsort(s->reqs, nr, sizeof(*s->reqs), cmp_req_move);
	for (a = 0; a < nr; a = b) {
		for (b = a; b < nr && s->reqs[b].slot == s->reqs[a].slot; b++)
			;
		move_proc(s, s->reqs + a, b - a, status);
	}
	for (i = 0; i < n; i++) {
		if (status[i] == STATUS_UNSET)
			status[i] = -EBUSY;	/* not reached; keeps the contract */
		count_status(&s->stats, status[i]);
		if (status[i] >= 0)
			moved++;
		if (pages[i] < s->nr_pages && ext_by_id(s, pages[i]))
			set_node(s, pages[i], status[i]);
	}
	return moved;
}

/* ---- huge pages ---- */

const uint8_t *tier_linux_space_page_huge(const struct tier_linux_space *s)
{
	/* Not scanned since the space grew (or the scan ran out of memory):
	 * no map rather than one too short. */
	if (s->huge_unsupported ||
	    s->cap_huge < (size_t)(s->nr_pages >> tier_linux_space_huge_shift(s)) + 1)
		return NULL;
	return s->page_huge;
}

/* Marks in s->page_huge the blocks of extent e whose 2 MiB are one huge
 * page, asking the kernel over [start, end) (2 MiB aligned, inside e) with
 * PAGEMAP_SCAN on the process's pagemap fd. Returns 0 or -errno of the
 * ioctl (-ENOTTY, -EINVAL: the kernel has no PAGEMAP_SCAN). */
static int scan_extent(struct tier_linux_space *s, int fd, const struct extent *e,
		       uint64_t start, uint64_t end)
{
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hb = UINT64_C(1) << (hs + s->page_shift);
	struct page_region vec[64];
	struct pm_scan_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = start;
	arg.end = end;
	arg.vec = (uintptr_t)vec;
	arg.vec_len = sizeof(vec) / sizeof(vec[0]);
	arg.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT;
	arg.return_mask = PAGE_IS_HUGE;
	for (;;) {
		long n = ioctl(fd, PAGEMAP_SCAN, &arg), i;

		if (n < 0)
			return -errno;
		for (i = 0; i < n; i++) {
			uint64_t a = (vec[i].start + hb - 1) & ~(hb - 1);

			for (; a + hb <= vec[i].end; a += hb)
				s->page_huge[(e->first + ((a - e->start) >> s->page_shift)) >> hs] = 1;
		}
		if (arg.walk_end >= end || (size_t)n < arg.vec_len)
			return 0;
		arg.start = arg.walk_end;
	}
}

int tier_linux_space_scan_huge(struct tier_linux_space *s)
{
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hp = UINT64_C(1) << hs, hb = hp << s->page_shift;
	size_t blocks = (size_t)(s->nr_pages >> hs) + 1, i, k;
	char path[PATH_MAX];

	if (s->huge_unsupported || !hs)
		return -EOPNOTSUPP;
	if (grow((void **)&s->page_huge, &s->cap_huge, blocks, 1))
		return -ENOMEM;
	memset(s->page_huge, 0, blocks);
	for (i = 0; i < s->nr_slots; i++) {
		const struct slot *sl = &s->slots[i];
		int fd, ret = 0;

		if (!sl->pid)
			continue;
		snprintf(path, sizeof(path), "%s/%d/pagemap", s->ctx->procfs_root, (int)sl->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* gone, or not ours to read: base pages */
		for (k = sl->ext_begin; k < sl->ext_end && !ret; k++) {
			const struct extent *e = &s->ext[k];
			uint64_t a = (e->start + hb - 1) & ~(hb - 1);
			uint64_t b = ext_end(s, e) & ~(hb - 1);

			/* Only where ids keep the alignment (an extent taken
			 * before it grew past 2 MiB may not). */
			if (a >= b || ((e->first + ((a - e->start) >> s->page_shift)) & (hp - 1)))
				continue;
			ret = scan_extent(s, fd, e, a, b);
		}
		close(fd);
		if (ret == -ENOTTY || ret == -EINVAL) {
			s->huge_unsupported = true;
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* Splits the huge page holding id page through the kernel's
 * <debugfs>/split_huge_pages ("PID,0xSTART,0xEND"), then asks PAGEMAP_SCAN
 * whether it is still one. */
static int migrator_split(void *priv, uint64_t page)
{
	struct tier_linux_space *s = priv;
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hb = UINT64_C(1) << (hs + s->page_shift);
	const struct extent *e = page < s->nr_pages ? ext_by_id(s, page) : NULL;
	uint64_t addr, a;
	char path[PATH_MAX], cmd[80];
	pid_t pid;
	int fd, len, ret;
	ssize_t w;

	if (!e)
		return -EFAULT;
	if (!s->page_huge || s->huge_unsupported || !s->page_huge[page >> hs])
		return -EINVAL;
	if (!s->ctx->debugfs_root)
		return -EOPNOTSUPP;
	pid = s->slots[e->slot].pid;
	addr = e->start + ((page - e->first) << s->page_shift);
	a = addr & ~(hb - 1);
	snprintf(path, sizeof(path), "%s/split_huge_pages", s->ctx->debugfs_root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	len = snprintf(cmd, sizeof(cmd), "%d,0x%llx,0x%llx", (int)pid, (unsigned long long)a,
		       (unsigned long long)(a + hb));
	w = write(fd, cmd, (size_t)len);
	ret = w < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	/* Did it split? The kernel skips a page it cannot lock or pin. */
	snprintf(path, sizeof(path), "%s/%d/pagemap", s->ctx->procfs_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	s->page_huge[page >> hs] = 0;
	ret = scan_extent(s, fd, e, a, a + hb);
	close(fd);
	if (ret)
		return ret;
	return s->page_huge[page >> hs] ? -EBUSY : 0;
}

const struct tier_migrator_ops tier_linux_migrator_ops = {
	.name = "move_pages",
	.move = migrator_move,
	.split = migrator_split,
};

/* ---- node memory ---- */

/* Sums each node's zones' high watermarks from <procfs>/zoneinfo ("Node N,
 * zone Z" then "        high     PAGES"). A missing or unreadable file
 * leaves no reserve. */
static void read_reserves(struct tier_linux_space *s)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int node = -1;
	FILE *f;

	memset(s->reserve_4k, 0, sizeof(s->reserve_4k));
	if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "zoneinfo"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long v;
		int n;

		if (sscanf(line, "Node %d, zone", &n) == 1)
			node = n >= 0 && n < 256 ? n : -1;
		else if (node >= 0 && sscanf(line, " high %llu", &v) == 1)
			s->reserve_4k[node] += v;
	}
	free(line);
	fclose(f);
}

static int mem_node_pages(void *priv, int node, uint64_t *total, uint64_t *free_pages)
{
	struct tier_linux_space *s = priv;
	uint64_t total_bytes, free_bytes;
	int ret;

	ret = tier_linux_node_meminfo(s->ctx->sysfs_root, node, &total_bytes, &free_bytes, NULL);
	if (ret)
		return ret;
	*total = total_bytes >> s->page_shift;
	*free_pages = free_bytes >> s->page_shift;
	/* What the kernel keeps free is not room for migrations: a move into
	 * a node at its watermark fails (ENOMEM) or waits for reclaim. */
	if (s->reserve_calls++ % RESERVE_REREAD == 0)
		read_reserves(s);
	if (node < 256) {
		uint64_t r = (s->reserve_4k[node] << 12) >> s->page_shift;

		*free_pages = *free_pages > r ? *free_pages - r : 0;
	}
	return 0;
}

const struct tier_mem_ops tier_linux_mem_ops = {
	.name = "node-meminfo",
	.node_pages = mem_node_pages,
};
