/* space_ids.c - the address space's dense page ids: released ids kept as
 * sorted, merged free ranges and handed out again before the id space
 * grows, so that nr_pages stays near the most pages managed at once; the
 * ids of a piece that can hold a transparent huge page keep the addresses'
 * alignment (a huge page is one aligned block of ids). Contracts in
 * space_impl.h.
 */
#include <errno.h>
#include <string.h>

#include "backend/linux/space_impl.h"

/* A new mapping is split over free id ranges only down to this size, so
 * a large mapping does not end up as thousands of one-page extents. */
enum { MIN_SPLIT_PAGES = 64 };

int tier__space_free_add(struct tier_linux_space *s, uint64_t first, uint64_t nr)
{
	size_t lo = 0, hi = s->nr_free;
	struct tier__id_range *r;

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
	if (tier__space_grow((void **)&s->free, &s->cap_free, s->nr_free + 1, sizeof(*s->free)))
		return -ENOMEM;
	r = s->free;
	memmove(&r[lo + 1], &r[lo], (s->nr_free - lo) * sizeof(*r));
	r[lo].first = first;
	r[lo].nr = nr;
	s->nr_free++;
	return 0;
}

/* Whether a piece of a mapping [addr, addr + nr pages) holds a whole
 * aligned huge page: then its ids keep the addresses' alignment. */
static bool can_hold_huge(const struct tier_linux_space *s, uint64_t addr, uint64_t nr)
{
	uint64_t hb = tier__space_huge_pages(s) << s->page_shift;
	uint64_t up = (addr + hb - 1) & ~(hb - 1);

	return tier__space_huge_pages(s) > 1 && up + hb <= addr + (nr << s->page_shift);
}

/* Removes ids [first, first + nr) from free range i (they lie inside it):
 * what is left before and after stays free. Needs room for one more range
 * (reserved by the caller). */
static void free_cut(struct tier_linux_space *s, size_t i, uint64_t first, uint64_t nr)
{
	struct tier__id_range *r = &s->free[i];
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
		s->free[i + 1] = (struct tier__id_range){ first + nr, end - (first + nr) };
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
	const uint64_t h = tier__space_huge_pages(s), key = (addr >> s->page_shift) & (h - 1);
	uint64_t f;
	size_t i;

	for (i = 0; i < s->nr_free; i++) {
		const struct tier__id_range *r = &s->free[i];

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
		tier__space_nodes_none(s, s->nr_pages, f - s->nr_pages);
		memset(s->page_owner + s->nr_pages, TIER_LINUX_OWNER_NONE, (size_t)(f - s->nr_pages));
		(void)tier__space_free_add(s, s->nr_pages, f - s->nr_pages);
	}
	*first = f;
	s->nr_pages = f + want;
	return want;
}

uint64_t tier__space_ids_take(struct tier_linux_space *s, uint64_t want, uint64_t addr,
			 uint64_t *first)
{
	size_t i;

	if (can_hold_huge(s, addr, want))
		return ids_take_aligned(s, want, addr, first);
	for (i = 0; i < s->nr_free; i++) {
		struct tier__id_range *r = &s->free[i];

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
