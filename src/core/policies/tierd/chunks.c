/* chunks.c - the tierd policy's chunks: the managed pages in runs of
 * TIERD_CHUNK_PAGES (2 MiB of 4 KiB pages, the sample-pooling regions),
 * so that a step costs what was observed and what moves, not what is
 * managed.
 *
 * A chunk whose pages and region carry no rate at all is idle: its pages
 * score 0 and sit in bin 0, which every pass knows without visiting them.
 * The live chunks (any rate) and the hinted ones (any page with a hint)
 * are the chunks a tick visits; the others count into the histogram by
 * their per-tier page counts, and give the coldest victims of a full tier
 * from a cursor, only as many as a tick may move.
 *
 * A chunk is uniform while all its pages have the same rates and no
 * samples: a DAMON region that covers it whole adds to one pair of rates,
 * decay decays one pair, and without a hint (flat) its pages share one
 * score, one bin (the histogram adds its count) and - below the threshold,
 * or where no move up pays - are victims of that one score, expanded in
 * order of score only as far as a tick needs them. A partial region, a
 * sample or a huge page's share gives the pages their own rates
 * (tier__tierd_chunk_split()) until the chunk goes idle again.
 *
 * The per-tier counts follow env->page_node, which the backend writes.
 * Where the backend keeps env->node_gen (both do), a chunk is counted
 * again when its counter moved since it was counted: a visited chunk at
 * each tick, a chunk the policy moved pages of after each flush, any other
 * at each tick's recheck, which reads one counter a chunk - so pages
 * moved behind the policy's back (or newly present) are noticed at the
 * next tick, and a step's recounts cost what changed rather than what is
 * managed (on a 64 GiB machine, the 512 chunks a tick of the rotating
 * slice below were a quarter of a million pages read a tick). Without it,
 * every visited chunk each tick, every moved chunk after each flush, and
 * a rotating slice of the others (every chunk within TIERD_RECHECK_TICKS
 * ticks). A recount reads a chunk's page_node bytes: one work unit per
 * eight pages; a counter, one per 64 chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/tierd/internal.h"

static inline bool bit_test(const uint64_t *map, uint64_t c)
{
	return map[c >> 6] >> (c & 63) & 1;
}

static inline void bit_set(uint64_t *map, uint64_t c)
{
	map[c >> 6] |= UINT64_C(1) << (c & 63);
}

static uint64_t nr_words(uint64_t nr_chunks)
{
	return (nr_chunks + 63) >> 6;
}

uint64_t tier__tierd_chunk_end(const struct tier__tierd *t, uint64_t c)
{
	uint64_t end = (c + 1) << TIERD_REGION_SHIFT;

	return end < t->nr_pages ? end : t->nr_pages;
}

void tier__tierd_chunk_recount(struct tier__tierd *t, uint64_t c)
{
	const uint8_t *node = t->env->page_node;
	uint16_t *cnt = &t->cnt[c * TIERD_CNT_SLOTS];
	uint64_t i, end = tier__tierd_chunk_end(t, c);
	uint16_t now[TIERD_CNT_SLOTS] = { 0 };
	size_t k;

	for (i = c << TIERD_REGION_SHIFT; i < end; i++) {
		int rank;

		if (node[i] == TIER_NODE_NONE)
			continue;
		rank = t->node_rank[node[i]];
		now[rank >= 0 && rank < TIER_MAX_TIERS ? rank : TIER_MAX_TIERS]++;
	}
	for (k = 0; k < TIERD_CNT_SLOTS; k++) {
		t->tier_present[k] += (uint64_t)now[k] - cnt[k];
		cnt[k] = now[k];
	}
	if (t->env->node_gen)
		t->seen_gen[c] = t->env->node_gen[c];
	*t->env->work_units += (end - (c << TIERD_REGION_SHIFT) + 7) / 8;
}

_Static_assert(TIERD_REGION_SHIFT == TIER_NODE_GEN_SHIFT, "a chunk is a node_gen counter's pages");

void tier__tierd_chunk_refresh(struct tier__tierd *t, uint64_t c)
{
	if (!t->env->node_gen || t->env->node_gen[c] != t->seen_gen[c])
		tier__tierd_chunk_recount(t, c);
}

int tier__tierd_chunks_grow(struct tier__tierd *t, uint64_t new_pages)
{
	uint64_t n = (new_pages + TIERD_CHUNK_PAGES - 1) >> TIERD_REGION_SHIFT;
	uint64_t old = t->nr_chunks, ow = nr_words(old), nw = nr_words(n) ? nr_words(n) : 1;
	size_t slots = n ? n : 1;

#define GROW_ZERO(field, count, from)                                              \
	do {                                                                       \
		void *q = realloc(t->field, (count) * sizeof(*t->field));          \
		if (!q)                                                            \
			return -ENOMEM;                                            \
		t->field = q;                                                      \
		memset(t->field + (from), 0, ((count) - (from)) * sizeof(*t->field)); \
	} while (0)
	GROW_ZERO(live, nw, ow);
	GROW_ZERO(vis, nw, ow);
	GROW_ZERO(hinted, nw, ow);
	GROW_ZERO(dirty, nw, ow);
	GROW_ZERO(uni, nw, ow);
	GROW_ZERO(ulng, slots, old);
	GROW_ZERO(ushrt, slots, old);
	GROW_ZERO(uborn, slots, old);
	GROW_ZERO(dirty_list, slots, old);
	GROW_ZERO(flat, slots, old);
	GROW_ZERO(cnt, slots * TIERD_CNT_SLOTS, old * TIERD_CNT_SLOTS);
	GROW_ZERO(seen_gen, slots, old);
#undef GROW_ZERO
	return 0;
}

void tier__tierd_chunks_count_new(struct tier__tierd *t, uint64_t old_pages)
{
	uint64_t n = (t->nr_pages + TIERD_CHUNK_PAGES - 1) >> TIERD_REGION_SHIFT, c;

	/* New chunks are uniform at no rate (the old last one, grown, stays
	 * as it was: its new pages start at 0 in pages[], and it was split
	 * before it grew when uniform). */
	for (c = t->nr_chunks; c < n; c++)
		t->uni[c >> 6] |= UINT64_C(1) << (c & 63);
	t->nr_chunks = n;
	/* The old last chunk may have grown: it is counted again. */
	for (c = old_pages >> TIERD_REGION_SHIFT; c < n; c++)
		tier__tierd_chunk_recount(t, c);
}

void tier__tierd_chunk_split(struct tier__tierd *t, uint64_t c)
{
	uint64_t i, end;

	if (c >= t->nr_chunks || !bit_test(t->uni, c))
		return;
	end = tier__tierd_chunk_end(t, c);
	for (i = c << TIERD_REGION_SHIFT; i < end; i++) {
		t->pages[i].lng = t->ulng[c];
		t->pages[i].shrt = t->ushrt[c];
		t->pages[i].born = t->uborn[c];
	}
	t->uni[c >> 6] &= ~(UINT64_C(1) << (c & 63));
	t->ulng[c] = 0;
	t->ushrt[c] = 0;
	*t->env->work_units += end - (c << TIERD_REGION_SHIFT);
}

void tier__tierd_chunks_free(struct tier__tierd *t)
{
	free(t->live);
	free(t->vis);
	free(t->hinted);
	free(t->uni);
	free(t->ulng);
	free(t->ushrt);
	free(t->uborn);
	free(t->dirty);
	free(t->dirty_list);
	free(t->flat);
	free(t->cnt);
	free(t->seen_gen);
}

void tier__tierd_mark_live(struct tier__tierd *t, uint64_t first, uint64_t end)
{
	uint64_t c;

	for (c = first >> TIERD_REGION_SHIFT; c < t->nr_chunks && (c << TIERD_REGION_SHIFT) < end; c++)
		bit_set(t->live, c);
}

void tier__tierd_mark_moved(struct tier__tierd *t, uint64_t page)
{
	uint64_t c = page >> TIERD_REGION_SHIFT;

	if (c >= t->nr_chunks || bit_test(t->dirty, c))
		return;
	bit_set(t->dirty, c);
	t->dirty_list[t->nr_dirty++] = c;
}

void tier__tierd_recount_moved(struct tier__tierd *t)
{
	size_t k;

	for (k = 0; k < t->nr_dirty; k++) {
		uint64_t c = t->dirty_list[k];

		t->dirty[c >> 6] &= ~(UINT64_C(1) << (c & 63));
		tier__tierd_chunk_refresh(t, c);
	}
	t->nr_dirty = 0;
}

void tier__tierd_recheck(struct tier__tierd *t)
{
	uint64_t n = (t->nr_chunks + TIERD_RECHECK_TICKS - 1) / TIERD_RECHECK_TICKS, k;

	if (!t->nr_chunks)
		return;
	if (t->env->node_gen) {
		const uint32_t *gen = t->env->node_gen;

		for (k = 0; k < t->nr_chunks; k++)
			if (gen[k] != t->seen_gen[k] && !bit_test(t->vis, k))
				tier__tierd_chunk_recount(t, k);
		*t->env->work_units += (t->nr_chunks + 63) / 64;
		return;
	}
	for (k = 0; k < n; k++) {
		if (t->recheck_next >= t->nr_chunks)
			t->recheck_next = 0;
		if (!bit_test(t->vis, t->recheck_next))
			tier__tierd_chunk_recount(t, t->recheck_next);
		t->recheck_next++;
	}
}

uint64_t tier__tierd_next_chunk(const struct tier__tierd *t, const uint64_t *map, uint64_t c)
{
	uint64_t w, words = nr_words(t->nr_chunks), bits;

	if (c >= t->nr_chunks)
		return t->nr_chunks;
	w = c >> 6;
	bits = map[w] & (~UINT64_C(0) << (c & 63));
	for (;;) {
		if (bits) {
			c = (w << 6) + (uint64_t)__builtin_ctzll(bits);
			return c < t->nr_chunks ? c : t->nr_chunks;
		}
		if (++w >= words)
			return t->nr_chunks;
		bits = map[w];
	}
}

/* Whether any page of chunk c has a hint (page_hint read a word of eight
 * pages at a time). */
static bool chunk_hinted(const struct tier__tierd *t, uint64_t c)
{
	const uint8_t *h = t->env->page_hint;
	uint64_t i = c << TIERD_REGION_SHIFT, end = tier__tierd_chunk_end(t, c);

	for (; i + 8 <= end; i += 8) {
		uint64_t w;

		memcpy(&w, h + i, sizeof(w));
		if (w)
			return true;
	}
	for (; i < end; i++)
		if (h[i] != TIER_HINT_NONE)
			return true;
	return false;
}

void tier__tierd_visit_begin(struct tier__tierd *t)
{
	const struct tier_env *env = t->env;
	uint64_t words = nr_words(t->nr_chunks), w, c;

	for (w = 0; w < words; w++) {
		uint64_t now = t->live[w], gone;

		t->hinted[w] = 0;
		if (env->page_hint) {
			uint64_t k;

			for (k = 0; k < 64 && (w << 6) + k < t->nr_chunks; k++)
				if (chunk_hinted(t, (w << 6) + k))
					t->hinted[w] |= UINT64_C(1) << k;
			now |= t->hinted[w];
		}
		/* A huge page larger than a chunk may carry its score into
		 * chunks of no state: visit everything. */
		if (env->page_huge && env->huge_shift > TIERD_REGION_SHIFT)
			now = ~UINT64_C(0);
		if ((w << 6) + 64 > t->nr_chunks)
			now &= (UINT64_C(1) << (t->nr_chunks - (w << 6))) - 1;
		/* Chunks no longer visited keep no score: bin 0, as idle. */
		for (gone = t->vis[w] & ~now; gone; gone &= gone - 1) {
			uint64_t first, end;

			c = (w << 6) + (uint64_t)__builtin_ctzll(gone);
			first = c << TIERD_REGION_SHIFT;
			end = tier__tierd_chunk_end(t, c);
			memset(t->score + first, 0, (end - first) * sizeof(*t->score));
			memset(t->bin + first, 0, (end - first) * sizeof(*t->bin));
			*env->work_units += (end - first) / 8;
		}
		t->vis[w] = now;
	}
	*env->work_units += words;
	if (env->page_hint)
		*env->work_units += t->nr_pages / 8;
}

size_t tier__tierd_idle_victims(struct tier__tierd *t, int r, uint64_t now_us, uint64_t *out,
				size_t max)
{
	const uint64_t n = t->nr_chunks;
	uint64_t c = t->victim_next[r] < n ? t->victim_next[r] : 0, k, scanned = 0;
	size_t got = 0;

	for (k = 0; k < n && got < max; k++, c = c + 1 < n ? c + 1 : 0) {
		uint64_t i, end;

		if (bit_test(t->vis, c) || !t->cnt[c * TIERD_CNT_SLOTS + (size_t)r])
			continue;
		end = tier__tierd_chunk_end(t, c);
		for (i = c << TIERD_REGION_SHIFT; i < end && got < max; i++) {
			if (tier_page_rank(t->env, t->node_rank, i) != r ||
			    tier__tierd_unit_tail(t, i) || tier__tierd_cooling_down(t, i, now_us))
				continue;
			/* The next tick starts where this one found its first:
			 * what it did not take is still there. */
			if (!got)
				t->victim_next[r] = c;
			out[got++] = i;
		}
		scanned += i - (c << TIERD_REGION_SHIFT);
	}
	*t->env->work_units += scanned + k / 8;
	return got;
}

/* The pages of chunk c in tier r that may move now, into out[got, max). */
static size_t chunk_victims(struct tier__tierd *t, uint64_t c, int r, uint64_t now_us,
			    uint64_t *out, size_t got, size_t max)
{
	uint64_t i, end = tier__tierd_chunk_end(t, c);

	for (i = c << TIERD_REGION_SHIFT; i < end && got < max; i++)
		if (tier_page_rank(t->env, t->node_rank, i) == r && !tier__tierd_unit_tail(t, i) &&
		    !tier__tierd_cooling_down(t, i, now_us))
			out[got++] = i;
	*t->env->work_units += i - (c << TIERD_REGION_SHIFT);
	return got;
}

/* qsort_r() order of chunk ids by their one score, coldest first (ctx:
 * the policy); equal scores by id. */
static int cmp_chunk_score(const void *a, const void *b, void *ctx)
{
	const struct tier__tierd *t = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	float sx = t->score[x << TIERD_REGION_SHIFT], sy = t->score[y << TIERD_REGION_SHIFT];

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return (x > y) - (x < y);
}

size_t tier__tierd_flat_victims(struct tier__tierd *t, int r, uint64_t now_us, uint64_t *out,
				size_t max)
{
	size_t k, got = 0;

	if (!t->nr_flat)
		return 0;
	qsort_r(t->flat, t->nr_flat, sizeof(*t->flat), cmp_chunk_score, t);
	*t->env->work_units += t->nr_flat;
	for (k = 0; k < t->nr_flat && got < max; k++)
		got = chunk_victims(t, t->flat[k], r, now_us, out, got, max);
	return got;
}
