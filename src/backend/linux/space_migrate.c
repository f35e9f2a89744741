/* space_migrate.c - the migrator over the address space: move_pages(2)
 * with MPOL_MF_MOVE grouped by process, recovering from a kernel that
 * stops at the first failed run of pages, and its counters. Contracts in
 * space.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>

#include "backend/linux/space_impl.h"

static int cmp_req_move(const void *a, const void *b)
{
	const struct tier__page_req *x = a, *y = b;

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
static void move_proc(struct tier_linux_space *s, struct tier__page_req *rq, size_t n, int *status)
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
		if (r < 0 && tier__space_call_gone(s, pid, e)) {
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
	if (tier__space_reserve_scratch(s, n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct tier__extent *e =
			pages[i] < s->nr_pages ? tier__space_ext_by_id(s, pages[i]) : NULL;

		if (!e) {
			status[i] = -EFAULT;
			continue;
		}
		if (nodes[i] < 0 || nodes[i] >= TIER_NODE_NONE) {
			status[i] = -EINVAL;
			continue;
		}
		status[i] = STATUS_UNSET;
		s->reqs[nr++] = (struct tier__page_req){
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
		if (pages[i] < s->nr_pages && tier__space_ext_by_id(s, pages[i]))
			tier__space_set_node(s, pages[i], status[i]);
	}
	return moved;
}

void tier_linux_space_migrate_stats(const struct tier_linux_space *s,
				    struct tier_linux_migrate_stats *out)
{
	*out = s->stats;
}

const struct tier_migrator_ops tier_linux_migrator_ops = {
	.name = "move_pages",
	.move = migrator_move,
	.split = tier__space_split,
};
