/* space_update.c - tier_linux_space_update(): the managed processes' maps
 * read again and matched against the extents, so that unchanged pages keep
 * their ids, new ones take free ids and the ids of pages gone are released
 * (forget() before any reuse). Contracts in space.h and space_impl.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/maps.h"
#include "backend/linux/space_impl.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/topology.h"
#include "core/nodelist.h"

/* A managed mapping as read from maps. */
struct vma {
	uint64_t start, end;
	uint64_t dev, ino;
	int64_t key;
};

static uint8_t owner_of(uint32_t slot)
{
	return slot < TIER_LINUX_OWNER_NONE ? (uint8_t)slot : TIER_LINUX_OWNER_NONE;
}

static bool same_backing(const struct tier__extent *e, const struct vma *v)
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
	{
		/* One more than the ids' chunks: tier_env.node_gen's size. */
		size_t oc = s->cap_pages ? (size_t)(s->cap_pages >> TIER_NODE_GEN_SHIFT) + 1 : 0;
		size_t nc = (size_t)(ncap >> TIER_NODE_GEN_SHIFT) + 1;
		uint32_t *ng = realloc(s->node_gen, nc * sizeof(*ng));

		if (!ng)
			return -ENOMEM;
		memset(ng + oc, 0, (nc - oc) * sizeof(*ng));
		s->node_gen = ng;
	}
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
	if (tier__space_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
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
static uint64_t machine_pages(const struct tier_linux_space *s)
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

/* ---- matching the maps against the extents ---- */

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

/* An update in the making: phase 1 fills it, the space untouched; phase 2
 * moves what it built into the space. */
struct update {
	struct proc_maps *procs;	/* the processes still there, by pid */
	size_t nr_procs;
	bool *survives;			/* [old nr_slots]: the slot's process stays */
	size_t nr_slots;		/* slots after the update */
	struct tier__extent *ext;	/* the new extents */
	size_t nr_ext, cap_ext;
	struct pending *pend;
	size_t nr_pend, cap_pend;
	struct tier__id_range *rel;	/* released ids */
	size_t nr_rel, cap_rel;
	uint64_t pend_pages;

	/* Reserved for phase 2, which cannot fail. */
	struct tier__slot *new_slots;
	struct tier__pid_slot *new_by_pid;
	size_t *new_by_id;
	struct tier__id_key *keys;
};

static void update_release(struct update *u)
{
	size_t i;

	for (i = 0; i < u->nr_procs; i++)
		free(u->procs[i].vmas);
	free(u->procs);
	free(u->survives);
	free(u->ext);
	free(u->pend);
	free(u->rel);
	free(u->new_slots);
	free(u->new_by_pid);
	free(u->new_by_id);
	free(u->keys);
}

static int push_rel(struct update *u, uint64_t first, uint64_t nr)
{
	if (!nr)
		return 0;
	if (tier__space_grow((void **)&u->rel, &u->cap_rel, u->nr_rel + 1, sizeof(*u->rel)))
		return -ENOMEM;
	u->rel[u->nr_rel++] = (struct tier__id_range){ first, nr };
	return 0;
}

static int push_pend(struct tier_linux_space *s, struct update *u, const struct vma *v,
		     uint64_t start, uint64_t end, uint32_t slot)
{
	if (end <= start)
		return 0;
	if (tier__space_grow((void **)&u->pend, &u->cap_pend, u->nr_pend + 1, sizeof(*u->pend)))
		return -ENOMEM;
	u->pend[u->nr_pend++] = (struct pending){
		.start = start, .nr = (end - start) >> s->page_shift,
		.dev = v->dev, .ino = v->ino, .key = v->key, .slot = slot,
	};
	u->pend_pages += (end - start) >> s->page_shift;
	return 0;
}

static int push_ext(struct update *u, const struct tier__extent *e)
{
	if (tier__space_grow((void **)&u->ext, &u->cap_ext, u->nr_ext + 1, sizeof(*u->ext)))
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

		while (j < oe && tier__space_ext_end(s, &s->ext[j]) <= v->start)
			j++;
		for (k = j; k < oe && s->ext[k].start < v->end; k++) {
			const struct tier__extent *o = &s->ext[k];
			uint64_t o_end = tier__space_ext_end(s, o);
			uint64_t lo = o->start > v->start ? o->start : v->start;
			uint64_t hi = o_end < v->end ? o_end : v->end;
			struct tier__extent kept;

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
		const struct tier__extent *o = &s->ext[k];

		ret = push_rel(u, o->first + ((cursor[k - ob] - o->start) >> shift),
			       (tier__space_ext_end(s, o) - cursor[k - ob]) >> shift);
		if (ret)
			goto out;
	}
out:
	free(cursor);
	return ret;
}

static int cmp_range(const void *a, const void *b)
{
	const struct tier__id_range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

static int cmp_ext_addr(const void *a, const void *b)
{
	const struct tier__extent *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int nomem(struct tier_err *err)
{
	return tier_err_set(err, -ENOMEM, "address space update: out of memory");
}

/* ---- phase 1: read and plan; the space is untouched ---- */

/* Reads the managed mappings of pids (sorted, each once, pids <= 0
 * dropped) into u->procs, leaving out the processes that are gone.
 * Returns 0 or -errno with err. */
static int read_procs(const struct tier_linux_space *s, struct update *u, const pid_t *pids,
		      size_t n, struct tier_err *err)
{
	uint64_t max_map_pages;
	size_t i, nr_sorted = 0;
	pid_t *sorted;
	int ret = 0;

	if (!n)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return nomem(err);
	memcpy(sorted, pids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_pid);
	for (i = 0; i < n; i++)
		if (sorted[i] > 0 && (!nr_sorted || sorted[nr_sorted - 1] != sorted[i]))
			sorted[nr_sorted++] = sorted[i];
	u->procs = calloc(nr_sorted ? nr_sorted : 1, sizeof(*u->procs));
	if (!u->procs) {
		free(sorted);
		return nomem(err);
	}
	max_map_pages = machine_pages(s);
	for (i = 0; i < nr_sorted; i++) {
		struct proc_maps *pm = &u->procs[u->nr_procs];

		ret = read_maps(s, sorted[i], max_map_pages, &pm->vmas, &pm->nr, err);
		if (ret < 0)
			break;
		if (ret == 1) {
			ret = 0;
			continue;	/* gone */
		}
		pm->pid = sorted[i];
		u->nr_procs++;
	}
	free(sorted);
	return ret;
}

/* Slots: survivors keep theirs, newcomers take the lowest free one.
 * Returns 0 or -ENOMEM. */
static int assign_slots(const struct tier_linux_space *s, struct update *u)
{
	size_t i, next = 0;
	bool *used;

	u->nr_slots = s->nr_slots > u->nr_procs ? s->nr_slots : u->nr_procs;
	used = calloc(u->nr_slots + 1, sizeof(*used));
	u->survives = calloc(s->nr_slots + 1, sizeof(*u->survives));
	if (!used || !u->survives) {
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < u->nr_procs; i++) {
		long sl = tier__space_slot_of(s, u->procs[i].pid);

		u->procs[i].slot = sl >= 0 ? (uint32_t)sl : UINT32_MAX;
		if (sl >= 0)
			used[sl] = u->survives[sl] = true;
	}
	for (i = 0; i < u->nr_procs; i++) {
		if (u->procs[i].slot != UINT32_MAX)
			continue;
		while (used[next])
			next++;
		used[next] = true;
		u->procs[i].slot = (uint32_t)next;
	}
	while (u->nr_slots && !used[u->nr_slots - 1])
		u->nr_slots--;
	free(used);
	return 0;
}

/* Diffs each process against its old extents; the processes that left
 * release all their ids. Returns 0 or -ENOMEM. */
static int diff_procs(struct tier_linux_space *s, struct update *u)
{
	size_t i, k;
	int ret;

	for (i = 0; i < u->nr_procs; i++) {
		const struct proc_maps *pm = &u->procs[i];
		size_t ob = 0, oe = 0;

		if (pm->slot < s->nr_slots && u->survives[pm->slot] &&
		    s->slots[pm->slot].pid == pm->pid) {
			ob = s->slots[pm->slot].ext_begin;
			oe = s->slots[pm->slot].ext_end;
		}
		ret = diff_proc(s, u, pm, ob, oe);
		if (ret)
			return ret;
	}
	for (i = 0; i < s->nr_slots; i++) {
		if (!s->slots[i].pid || u->survives[i])
			continue;
		for (k = s->slots[i].ext_begin; k < s->slots[i].ext_end; k++) {
			ret = push_rel(u, s->ext[k].first, s->ext[k].nr);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Reserves everything phase 2 needs, so that it cannot fail. Returns 0 or
 * -ENOMEM. */
static int reserve_commit(struct tier_linux_space *s, struct update *u)
{
	size_t max_ext, nr_slots = u->nr_slots ? u->nr_slots : 1;
	int ret;

	/* Each pending piece takes its pages, and at most one alignment gap
	 * before them. */
	ret = reserve_pages(s, s->nr_pages + u->pend_pages +
			    u->nr_pend * tier__space_huge_pages(s));
	if (ret)
		return ret;
	/* Released ranges, and per pending piece one split of a free range
	 * or one alignment gap. */
	if (tier__space_grow((void **)&s->free, &s->cap_free, s->nr_free + u->nr_rel + u->nr_pend,
			     sizeof(*s->free)))
		return -ENOMEM;
	/* A pending piece becomes one extent per free range it takes, plus
	 * one; the free ranges are the old ones, the released ones and at
	 * most one a piece that keeps huge-page alignment makes (a split
	 * range or an alignment gap). */
	if (tier__space_grow((void **)&s->fresh, &s->cap_fresh,
			     s->nr_fresh + 2 * u->nr_pend + s->nr_free + u->nr_rel,
			     sizeof(*s->fresh)))
		return -ENOMEM;
	max_ext = u->nr_ext + 2 * u->nr_pend + s->nr_free + u->nr_rel;
	if (!max_ext)
		max_ext = 1;
	if (tier__space_grow((void **)&u->ext, &u->cap_ext, max_ext, sizeof(*u->ext)))
		return -ENOMEM;
	u->new_slots = calloc(nr_slots, sizeof(*u->new_slots));
	u->new_by_pid = calloc(nr_slots, sizeof(*u->new_by_pid));
	u->new_by_id = malloc(max_ext * sizeof(*u->new_by_id));
	u->keys = malloc(max_ext * sizeof(*u->keys));
	if (!u->new_slots || !u->new_by_pid || !u->new_by_id || !u->keys)
		return -ENOMEM;
	return 0;
}

/* ---- phase 2: commit; cannot fail ---- */

/* Releases u->rel, adjacent ranges merged, in id order: forget() before
 * the ids go to the free ranges (and may be reused). */
static void commit_releases(struct tier_linux_space *s, struct update *u,
			    void (*forget)(void *ctx, uint64_t first, uint64_t nr), void *ctx)
{
	size_t i;

	if (u->nr_rel)
		qsort(u->rel, u->nr_rel, sizeof(*u->rel), cmp_range);
	for (i = 0; i < u->nr_rel;) {
		uint64_t first = u->rel[i].first, nr = u->rel[i].nr;

		for (i++; i < u->nr_rel && u->rel[i].first == first + nr; i++)
			nr += u->rel[i].nr;
		tier__space_nodes_none(s, first, nr);
		memset(s->page_owner + first, TIER_LINUX_OWNER_NONE, (size_t)nr);
		if (forget)
			forget(ctx, first, nr);
		/* Cannot fail: capacity reserved above and merging only shrinks. */
		(void)tier__space_free_add(s, first, nr);
	}
}

/* Appends ids [first, first + nr) to the fresh list (never queried). */
static void fresh_add(struct tier_linux_space *s, uint64_t first, uint64_t nr)
{
	struct tier__id_range *last = s->nr_fresh ? &s->fresh[s->nr_fresh - 1] : NULL;

	if (last && last->first + last->nr == first)
		last->nr += nr;
	else
		s->fresh[s->nr_fresh++] = (struct tier__id_range){ first, nr };
}

/* Gives each pending piece its ids: one new extent per run of ids taken. */
static void commit_pending(struct tier_linux_space *s, struct update *u)
{
	size_t i;

	for (i = 0; i < u->nr_pend; i++) {
		const struct pending *p = &u->pend[i];
		uint64_t addr = p->start, left = p->nr;

		while (left) {
			uint64_t first, got = tier__space_ids_take(s, left, addr, &first);
			struct tier__extent e = {
				.start = addr, .first = first, .nr = got,
				.dev = p->dev, .ino = p->ino, .key = p->key, .slot = p->slot,
			};

			u->ext[u->nr_ext++] = e;
			tier__space_nodes_none(s, first, got);
			memset(s->page_owner + first, owner_of(p->slot), (size_t)got);
			fresh_add(s, first, got);
			addr += got << s->page_shift;
			left -= got;
		}
	}
}

/* Sorts the new extents by (slot, address) and merges those that continue
 * each other in addresses and ids with the same backing. */
static void merge_extents(const struct tier_linux_space *s, struct update *u)
{
	size_t i, w = 0;

	qsort(u->ext, u->nr_ext, sizeof(*u->ext), cmp_ext_addr);
	if (!u->nr_ext)
		return;
	for (i = 1; i < u->nr_ext; i++) {
		struct tier__extent *a = &u->ext[w], *b = &u->ext[i];

		if (a->slot == b->slot && tier__space_ext_end(s, a) == b->start &&
		    a->first + a->nr == b->first && a->dev == b->dev &&
		    a->ino == b->ino && a->key == b->key)
			a->nr += b->nr;
		else
			u->ext[++w] = *b;
	}
	u->nr_ext = w + 1;
}

/* Hands the new extents, slots and indexes over to the space. */
/* Whether the update leaves every address of every process on the page
 * id it had (nothing released or added, the extents and slots as they
 * were). */
static bool same_map(const struct tier_linux_space *s, const struct update *u)
{
	size_t i;

	if (u->nr_rel || u->nr_pend || u->nr_ext != s->nr_ext || u->nr_slots != s->nr_slots)
		return false;
	for (i = 0; i < u->nr_ext; i++) {
		const struct tier__extent *a = &u->ext[i], *b = &s->ext[i];

		if (a->start != b->start || a->first != b->first || a->nr != b->nr ||
		    a->slot != b->slot)
			return false;
	}
	for (i = 0; i < u->nr_procs; i++)
		if (u->procs[i].slot >= s->nr_slots || s->slots[u->procs[i].slot].pid != u->procs[i].pid)
			return false;
	return true;
}

static void install(struct tier_linux_space *s, struct update *u)
{
	size_t i;

	for (i = 0; i < u->nr_procs; i++)
		u->new_slots[u->procs[i].slot].pid = u->procs[i].pid;
	free(s->ext);
	free(s->by_id);
	free(s->slots);
	free(s->by_pid);
	s->ext = u->ext;
	s->nr_ext = u->nr_ext;
	s->by_id = u->new_by_id;
	s->slots = u->new_slots;
	s->nr_slots = u->nr_slots;
	s->by_pid = u->new_by_pid;
	/* The space owns them now. */
	u->ext = NULL;
	u->new_by_id = NULL;
	u->new_slots = NULL;
	u->new_by_pid = NULL;
	tier__space_index(s, u->keys);
}

/* Phase 1 reads and plans (an error leaves the space as it was), phase 2
 * commits what phase 1 reserved room for. */
int tier_linux_space_update(struct tier_linux_space *s, const pid_t *pids, size_t n,
			    void (*forget)(void *ctx, uint64_t first, uint64_t nr), void *ctx,
			    struct tier_err *err)
{
	struct update u = { 0 };
	int ret;

	ret = read_procs(s, &u, pids, n, err);
	if (ret)
		goto out;
	if (assign_slots(s, &u) || diff_procs(s, &u) || reserve_commit(s, &u)) {
		ret = nomem(err);
		goto out;
	}
	commit_releases(s, &u, forget, ctx);
	commit_pending(s, &u);
	merge_extents(s, &u);
	if (!same_map(s, &u))
		s->gen++;	/* what an address maps to may differ */
	install(s, &u);
out:
	update_release(&u);
	return ret;
}
