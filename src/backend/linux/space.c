/* space.c - the managed address space on Linux: its state and life cycle,
 * the lookups between ids and (pid, address), and translate(). Contracts
 * in space.h; the other concerns, and how the state is kept, in
 * space_impl.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <stdlib.h>

#include "backend/linux/space_impl.h"

/* ---- small helpers ---- */

int tier__space_grow(void **p, size_t *cap, size_t need, size_t elem)
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

int tier__space_reserve_scratch(struct tier_linux_space *s, size_t n)
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

/* ---- lookups ---- */

static int cmp_pid_slot(const void *a, const void *b)
{
	const struct tier__pid_slot *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

long tier__space_slot_of(const struct tier_linux_space *s, pid_t pid)
{
	struct tier__pid_slot key = { .pid = pid }, *hit;

	if (!s->nr_live)
		return -1;
	hit = bsearch(&key, s->by_pid, s->nr_live, sizeof(key), cmp_pid_slot);
	return hit ? (long)hit->slot : -1;
}

const struct tier__extent *tier__space_ext_by_id(const struct tier_linux_space *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ext;
	const struct tier__extent *e;

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

size_t tier__space_by_id_from(const struct tier_linux_space *s, uint64_t id)
{
	size_t lo = 0, hi = s->nr_ext;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct tier__extent *e = &s->ext[s->by_id[mid]];

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

		if (tier__space_ext_end(s, &s->ext[mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tier_linux_space_run(const struct tier_linux_space *s, uint64_t page, pid_t *pid,
			 uint64_t *addr, uint64_t *nr)
{
	const struct tier__extent *e = tier__space_ext_by_id(s, page);

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
	long slot = tier__space_slot_of(s, pid);
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
	long slot = tier__space_slot_of(s, pid);
	const struct tier__extent *e;
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

void tier_linux_space_nodes(const struct tier_linux_space *s, pid_t pid, uint64_t start,
			    uint64_t end, tier_linux_node_fn *fn, void *ctx)
{
	long slot = tier__space_slot_of(s, pid);
	size_t i;

	if (slot < 0) {
		fn(ctx, start, end, TIER_NODE_NONE);
		return;
	}
	for (i = ext_from_addr(s, (uint32_t)slot, start); start < end; i++) {
		const struct tier__extent *e = &s->ext[i];
		uint64_t stop, id, a;

		if (i == s->slots[slot].ext_end || e->start >= end) {
			fn(ctx, start, end, TIER_NODE_NONE);
			return;
		}
		if (start < e->start) {
			fn(ctx, start, e->start, TIER_NODE_NONE);
			start = e->start;
		}
		stop = tier__space_ext_end(s, e) < end ? tier__space_ext_end(s, e) : end;
		id = e->first + ((start - e->start) >> s->page_shift);
		for (a = start; start < stop; id++) {
			start += UINT64_C(1) << s->page_shift;
			if (start >= stop || s->page_node[id + 1] != s->page_node[id]) {
				fn(ctx, a, start < stop ? start : stop, s->page_node[id]);
				a = start;
			}
		}
		start = stop;
	}
}

/* ---- the lookup indexes, rebuilt by each update ---- */

static int cmp_id_key(const void *a, const void *b)
{
	const struct tier__id_key *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

void tier__space_index(struct tier_linux_space *s, struct tier__id_key *keys)
{
	size_t i;

	for (i = 0; i < s->nr_slots; i++)
		s->slots[i].ext_begin = s->slots[i].ext_end = 0;
	for (i = 0; i < s->nr_ext; i++) {
		struct tier__slot *sl = &s->slots[s->ext[i].slot];

		if (sl->ext_begin == sl->ext_end)
			sl->ext_begin = i;
		sl->ext_end = i + 1;
		keys[i] = (struct tier__id_key){ s->ext[i].first, i };
	}
	qsort(keys, s->nr_ext, sizeof(*keys), cmp_id_key);
	for (i = 0; i < s->nr_ext; i++)
		s->by_id[i] = keys[i].idx;
	s->nr_live = 0;
	for (i = 0; i < s->nr_slots; i++)
		if (s->slots[i].pid)
			s->by_pid[s->nr_live++] =
				(struct tier__pid_slot){ s->slots[i].pid, (uint32_t)i };
	qsort(s->by_pid, s->nr_live, sizeof(*s->by_pid), cmp_pid_slot);
}

/* ---- accessors ---- */

uint64_t tier_linux_space_nr_pages(const struct tier_linux_space *s)
{
	return s->nr_pages;
}

const uint8_t *tier_linux_space_page_node(const struct tier_linux_space *s)
{
	return s->page_node;
}

const uint32_t *tier_linux_space_node_gen(const struct tier_linux_space *s)
{
	return s->node_gen;
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
	free(s->node_gen);
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
	tier_linux_pfn_nodes_free(&s->pfn);
	free(s);
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
		long slot = tier__space_slot_of(s, o->pid);
		size_t k;

		if (slot < 0 || o->end <= o->start)
			continue;
		end = o->end > UINT64_MAX - mask ? UINT64_MAX & ~mask : (o->end + mask) & ~mask;
		for (k = ext_from_addr(s, (uint32_t)slot, start);
		     k < s->slots[slot].ext_end && s->ext[k].start < end; k++) {
			const struct tier__extent *e = &s->ext[k];
			uint64_t e_end = tier__space_ext_end(s, e);
			uint64_t lo = e->start > start ? e->start : start;
			uint64_t hi = e_end < end ? e_end : end;
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

