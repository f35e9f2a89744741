/* space_query.c - where the managed pages are: pagemap's frame numbers
 * against the nodes' memory blocks, else move_pages(2) with nodes = NULL;
 * pages that came with the updates first, then round robin over the
 * space, into page_node. Contracts in space.h and space_impl.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/linux/space_impl.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

/* Pages per move_pages(2) query call (bounds scratch memory). */
enum { QUERY_CHUNK = 4096 };
/* pagemap entries per read; queries between reloads of the block table
 * prompted by a frame in no known block (device memory never is in one). */
enum { PM_CHUNK = 512, PFN_RELOAD_CALLS = 64 };

/* Whether pid has exited or is exiting. */
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

/* move_pages(2) gives ESRCH once pid is reaped, EINVAL while it is a
 * zombie (no mm left). */
bool tier__space_call_gone(const struct tier_linux_space *s, pid_t pid, int e)
{
	return e == ESRCH || ((e == EINVAL || e == ENOENT) && proc_gone(s, pid));
}

void tier__space_set_node(struct tier_linux_space *s, uint64_t id, int st)
{
	uint8_t nd;

	if (st >= 0)
		nd = st < TIER_NODE_NONE ? (uint8_t)st : TIER_NODE_NONE;
	else if (st == -ENOENT || st == -EFAULT)
		nd = TIER_NODE_NONE;
	else
		return;
	if (s->page_node[id] != nd) {
		s->page_node[id] = nd;
		s->node_gen[id >> TIER_NODE_GEN_SHIFT]++;
		s->gen++;
	}
}

void tier__space_nodes_none(struct tier_linux_space *s, uint64_t first, uint64_t nr)
{
	uint64_t c;

	if (!nr)
		return;
	memset(s->page_node + first, TIER_NODE_NONE, (size_t)nr);
	for (c = first >> TIER_NODE_GEN_SHIFT; c <= (first + nr - 1) >> TIER_NODE_GEN_SHIFT; c++)
		s->node_gen[c]++;
}

uint64_t tier_linux_space_gen(const struct tier_linux_space *s)
{
	return s->gen;
}

uint64_t tier_linux_space_nr_fresh(const struct tier_linux_space *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->nr_fresh; i++)
		n += s->fresh[i].nr;
	return n;
}

static int cmp_req_slot(const void *a, const void *b)
{
	const struct tier__page_req *x = a, *y = b;

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
	size_t k = tier__space_by_id_from(s, first);

	while (id < end && *n < cap) {
		const struct tier__extent *e;
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
			s->reqs[(*n)++] = (struct tier__page_req){
				.id = id, .slot = e->slot,
				.addr = e->start + ((id - e->first) << s->page_shift),
			};
		if (id == stop)
			k++;
	}
	return id - first;
}

/* The shared zero page's frame, from this process's own pagemap: a page
 * read and never written maps it. 0 when it cannot be had (a fixture
 * procfs, frames hidden). */
static uint64_t learn_zero_pfn(const struct tier_linux_space *s)
{
	size_t psz = (size_t)1 << s->page_shift;
	char path[PATH_MAX];
	uint64_t pm = 0;
	volatile char *p;
	int fd;

	if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "self/pagemap"))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	p = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		(void)p[0];
		if (tier__pagemap_read(fd, (uint64_t)(uintptr_t)p, &pm, 1))
			pm = 0;
		munmap((void *)p, psz);
	}
	close(fd);
	return (pm & TIER__PM_PRESENT) ? pm & TIER__PM_PFN_MASK : 0;
}

/* Whether pagemap can answer: the block table loaded (at the first query,
 * and again when misses call for it). */
static bool pagemap_ready(struct tier_linux_space *s, bool missed)
{
	struct tier_err e;

	if (s->pagemap_off)
		return false;
	if (s->page_shift != 12) {	/* pagemap has an entry per 4 KiB page */
		s->pagemap_off = true;
		return false;
	}
	if (!s->pfn_tried || (missed && s->query_calls - s->pfn_loaded_call >= PFN_RELOAD_CALLS)) {
		if (!s->pfn_tried)
			s->zero_pfn = learn_zero_pfn(s);
		s->pfn_tried = true;
		s->pfn_loaded_call = s->query_calls;
		if (tier_linux_pfn_nodes_load(&s->pfn, s->ctx->sysfs_root,
					      (uint64_t)1 << s->page_shift, &e) &&
		    !s->pfn.block_frames)
			s->pagemap_off = true;
	}
	return !s->pagemap_off;
}

/* Resolves reqs[a, b) (one process, pid) from its pagemap. The requests
 * it cannot resolve (a frame in no known block; all of them once frames
 * read as 0) are moved, in order, to reqs[a, a + k). Returns k; *missed
 * is set when a frame fell in no known block. */
static size_t pagemap_resolve(struct tier_linux_space *s, size_t a, size_t b, pid_t pid,
			      bool *missed)
{
	uint64_t pm[PM_CHUNK], psz = (uint64_t)1 << s->page_shift;
	char path[PATH_MAX];
	size_t i = a, j, k = a, x;
	int fd;

	if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "%d/pagemap", (int)pid))
		return b - a;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return b - a;	/* move_pages tells gone from denied */
	for (; i < b; i = j) {
		/* A run of consecutive addresses, one read. */
		for (j = i + 1; j < b && j - i < PM_CHUNK &&
				s->reqs[j].addr == s->reqs[j - 1].addr + psz; j++)
			;
		if (tier__pagemap_read(fd, s->reqs[i].addr, pm, j - i))
			break;	/* gone mid-way: move_pages says so */
		for (x = i; x < j; x++) {
			uint64_t e = pm[x - i], pfn = e & TIER__PM_PFN_MASK;
			int node;

			if (!(e & TIER__PM_PRESENT)) {
				/* Never touched, or swapped out: as move_pages's -ENOENT. */
				tier__space_set_node(s, s->reqs[x].id, -ENOENT);
				s->stats.pagemap_pages++;
				continue;
			}
			if (!pfn) {
				/* Frames hidden from this reader: move_pages from now on. */
				s->pagemap_off = true;
				goto rest;
			}
			node = pfn == s->zero_pfn ? -EFAULT : tier_linux_pfn_node(&s->pfn, pfn);
			if (node == -1) {
				*missed = true;
				s->reqs[k++] = s->reqs[x];
				continue;
			}
			tier__space_set_node(s, s->reqs[x].id, node);
			s->stats.pagemap_pages++;
		}
	}
	close(fd);
	for (; i < b; i++)
		s->reqs[k++] = s->reqs[i];
	return k - a;
rest:
	close(fd);
	for (; x < b; x++)
		s->reqs[k++] = s->reqs[x];
	return k - a;
}

/* Asks move_pages(2) where reqs[a, b) (one process, pid) are. Returns 0 or
 * -errno with err set (a process that is gone is not an error). */
static int move_pages_query(struct tier_linux_space *s, size_t a, size_t b, pid_t pid,
			    struct tier_err *err)
{
	size_t i;
	long r;

	if (a == b)
		return 0;
	for (i = a; i < b; i++) {
		s->addrs[i - a] = (void *)(uintptr_t)s->reqs[i].addr;
		s->status[i - a] = STATUS_UNSET;
	}
	r = numa_move_pages(pid, b - a, s->addrs, NULL, s->status, 0);
	s->stats.calls++;
	s->stats.queried_pages += b - a;
	if (r < 0) {
		int e = errno;

		if (tier__space_call_gone(s, pid, e)) {
			for (i = a; i < b; i++)
				tier__space_set_node(s, s->reqs[i].id, -ENOENT);
			return 0;
		}
		return tier_err_set(err, -e, "move_pages(%d) query of %zu pages: %s", (int)pid,
				    b - a, strerror(e));
	}
	for (i = a; i < b; i++) {
		int st = s->status[i - a];

		if (st != STATUS_UNSET)
			tier__space_set_node(s, s->reqs[i].id, st >= 0 ? st : -ENOENT);
	}
	return 0;
}

/* Queries reqs[0, n) (sorted by slot) and updates page_node. */
static int query_reqs(struct tier_linux_space *s, size_t n, struct tier_err *err)
{
	bool missed = false;
	size_t a, b, k;
	int ret = 0, r;

	s->query_calls++;
	for (a = 0; a < n; a = b) {
		uint32_t slot = s->reqs[a].slot;
		pid_t pid = s->slots[slot].pid;

		for (b = a; b < n && s->reqs[b].slot == slot; b++)
			;
		k = pagemap_ready(s, false) ? pagemap_resolve(s, a, b, pid, &missed) : b - a;
		/* The first error's text is kept. */
		r = move_pages_query(s, a, a + k, pid, ret ? NULL : err);
		if (r && !ret)
			ret = r;
	}
	if (missed)
		pagemap_ready(s, true);	/* the block table again, now and then */
	return ret;
}

void tier_linux_space_set_pause(struct tier_linux_space *s, void (*pause)(void *ctx), void *ctx)
{
	s->pause = pause;
	s->pause_ctx = ctx;
}

int tier_linux_space_query(struct tier_linux_space *s, uint64_t max_pages,
			   struct tier_err *err)
{
	uint64_t left = max_pages, live = 0, rr_done = 0;
	size_t i;
	int ret = 0, r;

	for (i = 0; i < s->nr_ext; i++)
		live += s->ext[i].nr;
	if (tier__space_reserve_scratch(s, QUERY_CHUNK))
		return tier_err_set(err, -ENOMEM, "address space query: out of memory");
	while (left) {
		size_t n = 0, cap = left < QUERY_CHUNK ? (size_t)left : QUERY_CHUNK;

		/* Pages never queried first. */
		while (s->nr_fresh && n < cap) {
			struct tier__id_range *f = &s->fresh[0];
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

			if (tier__space_by_id_from(s, s->rr_next) == s->nr_ext)
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
		if (s->pause && left)
			s->pause(s->pause_ctx);
	}
	return ret;
}
