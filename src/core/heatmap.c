/* heatmap.c - the access heatmap of one address space. Contracts and the
 * layout of the axis in heatmap.h. */
#include "core/heatmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = TIER_HEATMAP_SLICES + 1 };

/* A scan speaks for the time since its bin was last scanned, but for no
 * more than this many times what it covered (or the step): a bin no scan
 * reached for a minute must not have this step's rate painted over it. */
#define SCAN_SPAN_FACTOR 4

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* --- the axis ------------------------------------------------------------ */

/* The first range that ends after addr (nr_ranges: none). */
static size_t range_from(const struct tier_heatmap_layout *l, uint64_t addr)
{
	size_t lo = 0, hi = l->nr_ranges;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->range[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Axis position of addr; an address in a gap goes to the next range. */
static uint64_t axis_of(const struct tier_heatmap_layout *l, uint64_t addr)
{
	size_t i = range_from(l, addr);

	if (i == l->nr_ranges)
		return l->axis_bytes;
	if (addr < l->range[i].start)
		return l->off[i];
	return l->off[i] + addr - l->range[i].start;
}

/* Address at axis position a < axis_bytes. */
static uint64_t addr_at(const struct tier_heatmap_layout *l, uint64_t a)
{
	size_t lo = 0, hi = l->nr_ranges;

	/* The last range whose offset is <= a. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->off[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return l->range[lo - 1].start + (a - l->off[lo - 1]);
}

static uint64_t bin_len(const struct tier_heatmap_layout *l, size_t b)
{
	uint64_t a0 = (uint64_t)b * l->bin_bytes;

	return min_u64(a0 + l->bin_bytes, l->axis_bytes) - a0;
}

static size_t nr_bins(const struct tier_heatmap_layout *l)
{
	return l->bin_bytes ? (size_t)((l->axis_bytes + l->bin_bytes - 1) / l->bin_bytes) : 0;
}

/* Adds per_byte for each byte of axis [a0, a1) to the bins of dst. */
static void spread_axis(const struct tier_heatmap_layout *l, uint64_t a0, uint64_t a1,
			double per_byte, double *dst)
{
	size_t b = (size_t)(a0 / l->bin_bytes);

	while (a0 < a1) {
		uint64_t e = min_u64(((uint64_t)b + 1) * l->bin_bytes, a1);

		dst[b++] += per_byte * (double)(e - a0);
		a0 = e;
	}
}

/* Adds per_byte for each byte of addresses [lo, hi) the layout holds. */
static void spread_addr(const struct tier_heatmap_layout *l, uint64_t lo, uint64_t hi,
			double per_byte, double *dst)
{
	size_t i;

	for (i = range_from(l, lo); i < l->nr_ranges && l->range[i].start < hi; i++) {
		uint64_t s = lo > l->range[i].start ? lo : l->range[i].start;
		uint64_t e = min_u64(hi, l->range[i].end);

		spread_axis(l, l->off[i] + (s - l->range[i].start), l->off[i] + (e - l->range[i].start),
			    per_byte, dst);
	}
}

/* Calls fn for each address run of axis [a0, a1). */
static void axis_runs(const struct tier_heatmap_layout *l, uint64_t a0, uint64_t a1,
		      void (*fn)(void *ctx, uint64_t start, uint64_t end), void *ctx)
{
	size_t i;

	for (i = 0; i < l->nr_ranges; i++) {
		uint64_t r0 = l->off[i], r1 = r0 + (l->range[i].end - l->range[i].start);
		uint64_t s = a0 > r0 ? a0 : r0, e = min_u64(a1, r1);

		if (s < e)
			fn(ctx, l->range[i].start + (s - r0), l->range[i].start + (e - r0));
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct tier_heatmap_range *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Gaps wider than t among r[0..n) (sorted, disjoint). */
static size_t gaps_above(const struct tier_heatmap_range *r, size_t n, uint64_t t)
{
	size_t i, c = 0;

	for (i = 1; i < n; i++)
		c += r[i].start - r[i - 1].end > t;
	return c;
}

/* Sorts and joins r in place into at most TIER_HEATMAP_MAX_RANGES ranges;
 * returns how many. */
static size_t normalize(struct tier_heatmap_range *r, size_t n)
{
	uint64_t lo = 0, hi = 0;
	size_t i, k;

	if (!n)
		return 0;
	qsort(r, n, sizeof(*r), cmp_range);
	for (i = 1, k = 0; i < n; i++) {
		if (r[i].start <= r[k].end) {
			if (r[i].end > r[k].end)
				r[k].end = r[i].end;
		} else {
			r[++k] = r[i];
		}
	}
	n = k + 1;
	if (n <= TIER_HEATMAP_MAX_RANGES)
		return n;
	/* The smallest gap width t that leaves at most MAX - 1 gaps wider
	 * than t: join every gap up to t (binary search, O(n) a round). */
	for (i = 1; i < n; i++)
		if (r[i].start - r[i - 1].end > hi)
			hi = r[i].start - r[i - 1].end;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (gaps_above(r, n, mid) <= TIER_HEATMAP_MAX_RANGES - 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (i = 1, k = 0; i < n; i++) {
		if (r[i].start - r[k].end <= lo)
			r[k].end = r[i].end;
		else
			r[++k] = r[i];
	}
	return k + 1;
}

static void layout_build(struct tier_heatmap_layout *l, const struct tier_heatmap_range *r,
			 size_t n, unsigned page_shift)
{
	uint64_t page = UINT64_C(1) << page_shift, pages;
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < n; i++) {
		l->range[i] = r[i];
		l->off[i] = l->axis_bytes;
		l->axis_bytes += r[i].end - r[i].start;
	}
	l->nr_ranges = n;
	pages = l->axis_bytes >> page_shift;
	l->bin_bytes = pages ? (pages + TIER_HEATMAP_BINS - 1) / TIER_HEATMAP_BINS * page : 0;
}

/* --- life -------------------------------------------------------------- */

void tier_heatmap_init(struct tier_heatmap *hm, unsigned page_shift, uint64_t now_us)
{
	size_t b;

	memset(hm, 0, sizeof(*hm));
	hm->page_shift = page_shift;
	hm->origin_us = now_us;
	hm->last_us = now_us;
	hm->next_slice = 1;		/* slice 0 is being filled */
	for (b = 0; b < TIER_HEATMAP_BINS; b++)
		hm->scan_since_us[b] = now_us;
}

struct rebin {
	const struct tier_heatmap_layout *to;
	double per_byte;
	double *dst;
};

static void rebin_run(void *ctx, uint64_t start, uint64_t end)
{
	struct rebin *rb = ctx;

	spread_addr(rb->to, start, end, rb->per_byte, rb->dst);
}

int tier_heatmap_set_layout(struct tier_heatmap *hm, struct tier_heatmap_range *r, size_t n)
{
	uint64_t mask = (UINT64_C(1) << hm->page_shift) - 1;
	struct tier_heatmap_layout nl;
	double row[TIER_HEATMAP_BINS];
	size_t i, b, old_bins;

	for (i = 0; i < n; i++)
		if (r[i].start >= r[i].end || (r[i].start & mask) || (r[i].end & mask))
			return -EINVAL;
	n = normalize(r, n);
	if (n == hm->lay.nr_ranges && !memcmp(r, hm->lay.range, n * sizeof(*r)))
		return 0;
	layout_build(&nl, r, n, hm->page_shift);
	/* Each old cell goes to the new bins its addresses fall in. */
	old_bins = nr_bins(&hm->lay);
	for (i = 0; i < ROWS; i++) {
		struct rebin rb = { &nl, 0, row };

		memset(row, 0, sizeof(row));
		for (b = 0; b < old_bins && nl.nr_ranges; b++) {
			uint64_t a0 = (uint64_t)b * hm->lay.bin_bytes;

			if (!hm->cell[i][b])
				continue;
			rb.per_byte = hm->cell[i][b] / (double)bin_len(&hm->lay, b);
			axis_runs(&hm->lay, a0, a0 + bin_len(&hm->lay, b), rebin_run, &rb);
		}
		for (b = 0; b < TIER_HEATMAP_BINS; b++)
			hm->cell[i][b] = (float)row[b];
	}
	hm->lay = nl;
	memset(hm->scan_acc, 0, sizeof(hm->scan_acc));
	memset(hm->scan_cov, 0, sizeof(hm->scan_cov));
	memset(hm->events, 0, sizeof(hm->events));
	for (b = 0; b < TIER_HEATMAP_BINS; b++)
		hm->scan_since_us[b] = hm->last_us;
	return 1;
}

/* --- feeding ------------------------------------------------------------- */

void tier_heatmap_add(struct tier_heatmap *hm, uint64_t addr, uint64_t nr_pages,
		      double accesses_per_page, uint32_t covered_us)
{
	uint64_t end = addr + (nr_pages << hm->page_shift);
	double page = (double)(UINT64_C(1) << hm->page_shift);

	if (!hm->lay.nr_ranges || end <= addr)
		return;
	if (covered_us) {
		spread_addr(&hm->lay, addr, end, accesses_per_page / page, hm->scan_acc);
		spread_addr(&hm->lay, addr, end, covered_us / page, hm->scan_cov);
	} else if (accesses_per_page > 0) {
		spread_addr(&hm->lay, addr, end, accesses_per_page / page, hm->events);
	}
}

/* Rows for every slice begun by now. */
static void advance(struct tier_heatmap *hm, uint64_t now_us)
{
	uint64_t k = (now_us - hm->origin_us) / TIER_HEATMAP_SLICE_US;

	if (k + 1 >= hm->next_slice + ROWS) {
		memset(hm->cell, 0, sizeof(hm->cell));
		hm->next_slice = k + 1;
		return;
	}
	for (; hm->next_slice <= k; hm->next_slice++)
		memset(hm->cell[hm->next_slice % ROWS], 0, sizeof(hm->cell[0]));
}

/* Puts `accesses` of bin b, made evenly over [t0, t1), into the slices. */
static void put(struct tier_heatmap *hm, size_t b, double accesses, uint64_t t0, uint64_t t1)
{
	uint64_t k = (t0 - hm->origin_us) / TIER_HEATMAP_SLICE_US;
	uint64_t oldest = hm->next_slice > ROWS ? hm->next_slice - ROWS : 0;
	double per_us = accesses / (double)(t1 - t0);

	for (k = k > oldest ? k : oldest; k < hm->next_slice; k++) {
		uint64_t s0 = hm->origin_us + k * TIER_HEATMAP_SLICE_US;
		uint64_t s1 = s0 + TIER_HEATMAP_SLICE_US;

		if (s0 >= t1)
			break;
		hm->cell[k % ROWS][b] += (float)(per_us * (double)(min_u64(s1, t1) - (s0 > t0 ? s0 : t0)));
	}
}

void tier_heatmap_commit(struct tier_heatmap *hm, uint64_t now_us)
{
	size_t b, n = nr_bins(&hm->lay);
	uint64_t gap;

	if (now_us < hm->last_us)
		now_us = hm->last_us;
	gap = now_us - hm->last_us;
	if (!gap)
		return;		/* nothing to spread over: keep for the next */
	advance(hm, now_us);
	for (b = 0; b < n; b++) {
		double pages = (double)(bin_len(&hm->lay, b) >> hm->page_shift);
		double ev_rate = hm->events[b] / (double)gap, sc_rate = 0;
		uint64_t since = hm->scan_since_us[b];

		if (hm->scan_cov[b] > 0) {
			/* Accesses per page-microsecond the scans saw, times the
			 * bin's pages: a rate per microsecond for the bin. */
			uint64_t cap = (uint64_t)(SCAN_SPAN_FACTOR * hm->scan_cov[b] / pages);

			sc_rate = hm->scan_acc[b] / hm->scan_cov[b] * pages;
			if (cap < gap)
				cap = gap;
			if (now_us - since > cap)
				since = now_us - cap;
			hm->scan_since_us[b] = now_us;
		}
		if (sc_rate > ev_rate && since < now_us)
			put(hm, b, sc_rate * (double)(now_us - since), since, now_us);
		else if (hm->events[b] > 0)
			put(hm, b, hm->events[b], hm->last_us, now_us);
		hm->scan_acc[b] = hm->scan_cov[b] = hm->events[b] = 0;
	}
	hm->last_us = now_us;
}

/* --- reading ------------------------------------------------------------ */

int tier_heatmap_view(const struct tier_heatmap *hm, uint64_t start, uint64_t end,
		      size_t nr_bins_want, size_t nr_slices, uint64_t now_us,
		      struct tier_heatmap_view *v)
{
	uint64_t mask = (UINT64_C(1) << hm->page_shift) - 1, pages, per, k_now, first;

	if (!nr_bins_want || nr_bins_want > TIER_HEATMAP_BINS || !nr_slices ||
	    nr_slices > TIER_HEATMAP_SLICES || end <= start)
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->axis_lo = axis_of(&hm->lay, start) & ~mask;
	v->axis_hi = end == UINT64_MAX ? hm->lay.axis_bytes : axis_of(&hm->lay, end);
	v->axis_hi = min_u64((v->axis_hi + mask) & ~mask, hm->lay.axis_bytes);
	if (v->axis_hi <= v->axis_lo)
		return -ENOENT;
	pages = (v->axis_hi - v->axis_lo) >> hm->page_shift;
	per = (pages + nr_bins_want - 1) / nr_bins_want;
	v->bin_bytes = per << hm->page_shift;
	v->nr_bins = (size_t)((pages + per - 1) / per);
	v->now_us = now_us < hm->origin_us ? hm->origin_us : now_us;
	/* Slices that ended by now: [0, k_now). */
	k_now = (v->now_us - hm->origin_us) / TIER_HEATMAP_SLICE_US;
	first = k_now > nr_slices ? k_now - nr_slices : 0;
	v->first_slice = first;
	v->nr_slices = (size_t)(k_now - first);
	return 0;
}

double tier_heatmap_view_rate(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      size_t bin, size_t slice)
{
	const struct tier_heatmap_layout *l = &hm->lay;
	uint64_t k = v->first_slice + slice, oldest = hm->next_slice > ROWS ? hm->next_slice - ROWS : 0;
	uint64_t a0 = v->axis_lo + (uint64_t)bin * v->bin_bytes, a1, fb;
	double sum = 0;

	if (bin >= v->nr_bins || slice >= v->nr_slices || k >= hm->next_slice || k < oldest)
		return 0;
	a1 = min_u64(a0 + v->bin_bytes, v->axis_hi);
	/* The layout's bins under [a0, a1), each by the share it lends. */
	for (fb = a0 / l->bin_bytes; fb * l->bin_bytes < a1; fb++) {
		uint64_t f0 = fb * l->bin_bytes, f1 = f0 + bin_len(l, (size_t)fb);
		uint64_t s = a0 > f0 ? a0 : f0, e = min_u64(a1, f1);

		if (s < e)
			sum += hm->cell[k % ROWS][fb] * (double)(e - s) / (double)(f1 - f0);
	}
	return sum / (double)((a1 - a0) >> hm->page_shift) /
	       ((double)TIER_HEATMAP_SLICE_US / 1e6);
}

void tier_heatmap_view_slice(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			     size_t slice, int64_t *start_us, int64_t *end_us)
{
	uint64_t s0 = hm->origin_us + (v->first_slice + slice) * TIER_HEATMAP_SLICE_US;

	*start_us = (int64_t)s0 - (int64_t)v->now_us;
	*end_us = *start_us + (int64_t)TIER_HEATMAP_SLICE_US;
}

void tier_heatmap_view_bin(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			   size_t bin, uint64_t *start, uint64_t *end, uint64_t *bytes)
{
	uint64_t a0 = v->axis_lo + (uint64_t)bin * v->bin_bytes;
	uint64_t a1 = min_u64(a0 + v->bin_bytes, v->axis_hi);

	*start = addr_at(&hm->lay, a0);
	*end = addr_at(&hm->lay, a1 - 1) + 1;
	*bytes = a1 - a0;
}

long tier_heatmap_view_bin_of(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      uint64_t addr)
{
	size_t i = range_from(&hm->lay, addr);
	uint64_t a;

	if (i == hm->lay.nr_ranges || addr < hm->lay.range[i].start)
		return -1;
	a = axis_of(&hm->lay, addr);
	if (a < v->axis_lo || a >= v->axis_hi)
		return -1;
	return (long)((a - v->axis_lo) / v->bin_bytes);
}

void tier_heatmap_view_ranges(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      void (*fn)(void *ctx, uint64_t start, uint64_t end), void *ctx)
{
	axis_runs(&hm->lay, v->axis_lo, v->axis_hi, fn, ctx);
}
