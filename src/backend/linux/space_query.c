/* space_query.c - where the managed pages are: move_pages(2) with nodes =
 * NULL, pages that came with the updates first, then round robin over the
 * space, into page_node. Contracts in space.h and space_impl.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/space_impl.h"
#include "backend/linux/sysfs.h"

/* Pages per move_pages(2) query call (bounds scratch memory). */
enum { QUERY_CHUNK = 4096 };

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
	if (st >= 0)
		s->page_node[id] = st < TIER_NODE_NONE ? (uint8_t)st : TIER_NODE_NONE;
	else if (st == -ENOENT || st == -EFAULT)
		s->page_node[id] = TIER_NODE_NONE;
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

			if (tier__space_call_gone(s, pid, e)) {
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
				tier__space_set_node(s, s->reqs[i].id, st >= 0 ? st : -ENOENT);
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
	}
	return ret;
}
