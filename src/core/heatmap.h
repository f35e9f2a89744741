/* heatmap.h - the access heatmap of one address space (tierctl heatmap):
 * address on one axis, time on the other, access rate as intensity, kept
 * at a fixed, small cost.
 *
 * The address axis is the address space's managed ranges laid end to end,
 * the unmapped gaps between them left out (a process's heap, its mmap area
 * and its stack are terabytes apart; a linear axis would put all of them in
 * one bin). It is cut into TIER_HEATMAP_BINS equal bins of whole pages.
 * Time is cut into slices of TIER_HEATMAP_SLICE_US; a ring keeps the last
 * TIER_HEATMAP_SLICES of them. A cell holds the accesses estimated in its
 * bin during its slice, read back as accesses per second per page.
 *
 *   ranges   [0x1000, 0x5000) [0x9000, 0xb000)     (6 pages)
 *   axis     0 ........ 4 pages | 4 .. 6 pages      (gap left out)
 *   bins     of 1 page each (6 bins used of 256)
 *
 * It is fed the observations a tracker hands the policy (core/policy.h),
 * in address form: tier_heatmap_add() per observation costs O(1 + the bins
 * it spans), tier_heatmap_commit() once per step O(bins x slices the step
 * spans). Nothing walks the pages. Memory: the struct itself, fixed (about
 * 70 KiB; sizeof(struct tier_heatmap)), no allocation.
 *
 * Accesses per observation: tier_obs_accesses() (core/policy.h), as the
 * policies read them:
 *  - ACCESSED/WRITTEN, k of m checks over interval_us: such a scan gives a
 *    rate, which speaks for the time since the bin was last scanned (a
 *    snapshot of DAMON's last aggregation taken every few seconds speaks
 *    for those seconds);
 *  - SAMPLE and HINT_FAULT are events, counted where they fall.
 * Where a step brings both kinds for a bin (the simulator's "damon,samples"
 * tracker), the larger estimate counts: scans saturate at one access per
 * check, samples miss pages touched rarely.
 *
 * Not thread-safe. Core code: no OS calls; time comes from the caller.
 */
#ifndef TIER_CORE_HEATMAP_H
#define TIER_CORE_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"

/* Resolution: 256 address bins x the last 60 slices of 1 s. */
#define TIER_HEATMAP_BINS 256
#define TIER_HEATMAP_SLICES 60
#define TIER_HEATMAP_SLICE_US UINT64_C(1000000)
/* Address ranges of a layout; more are merged across their smallest gaps. */
#define TIER_HEATMAP_MAX_RANGES 64

struct tier_heatmap_range {
	uint64_t start, end;		/* bytes, page aligned, start < end */
};

/* The axis: ranges sorted and disjoint, off[i] the axis offset of range
 * i's first byte. */
struct tier_heatmap_layout {
	struct tier_heatmap_range range[TIER_HEATMAP_MAX_RANGES];
	uint64_t off[TIER_HEATMAP_MAX_RANGES];
	size_t nr_ranges;
	uint64_t axis_bytes;		/* sum of the ranges' lengths */
	uint64_t bin_bytes;		/* axis bytes per bin, whole pages */
};

struct tier_heatmap {
	unsigned page_shift;
	struct tier_heatmap_layout lay;
	/* This step's observations, per bin (page units). */
	double scan_acc[TIER_HEATMAP_BINS];	/* accesses, scans */
	double scan_cov[TIER_HEATMAP_BINS];	/* page-microseconds the scans covered */
	double events[TIER_HEATMAP_BINS];	/* accesses, samples and faults */
	uint64_t scan_since_us[TIER_HEATMAP_BINS];	/* last scan credited up to */
	/* History: slice k is [origin_us + k * SLICE, ...) in row k % ROWS:
	 * the last SLICES slices that ended and the one being filled. */
	float cell[TIER_HEATMAP_SLICES + 1][TIER_HEATMAP_BINS];
	uint64_t origin_us;
	uint64_t next_slice;		/* slices [0, next_slice) have rows */
	uint64_t last_us;		/* last commit */
};

/* Starts an empty heatmap at now_us (no ranges: observations are dropped
 * until tier_heatmap_set_layout()). page_shift 12 for 4 KiB pages. */
void tier_heatmap_init(struct tier_heatmap *hm, unsigned page_shift, uint64_t now_us);

/* Sets the address ranges the axis covers (any order: r is sorted and
 * joined in place; overlapping and touching ranges are joined; beyond
 * TIER_HEATMAP_MAX_RANGES the ranges closest together are joined across
 * their gaps). History is carried over
 * onto the new bins, each old cell spread by the bytes its addresses share
 * with the new ones (what no new range holds is dropped). Call between
 * steps (after tier_heatmap_commit()). Returns 1 when the layout changed,
 * 0 when it is the same, -EINVAL for a range not page aligned or empty. */
int tier_heatmap_set_layout(struct tier_heatmap *hm, struct tier_heatmap_range *r,
			    size_t n);

/* Adds accesses_per_page for pages [addr, addr + nr_pages << page_shift):
 * covered_us > 0 for a scan (the time its checks covered), 0 for events.
 * Addresses outside the layout are dropped. */
void tier_heatmap_add(struct tier_heatmap *hm, uint64_t addr, uint64_t nr_pages,
		      double accesses_per_page, uint32_t covered_us);

/* Ends a step at now_us: this step's observations go into the slices they
 * speak for (events over the time since the last commit, scans over the
 * time since each bin was last scanned, capped), slices that began since
 * get rows. now_us earlier than the last commit is taken as the last. */
void tier_heatmap_commit(struct tier_heatmap *hm, uint64_t now_us);

/* A window on the heatmap: nr_bins equal bins over [start, end) of the
 * axis (addresses; the part of the layout they hold) by the last nr_slices
 * slices that ended by now_us, oldest first. */
struct tier_heatmap_view {
	uint64_t axis_lo, axis_hi;	/* window on the axis, bytes */
	uint64_t bin_bytes;		/* axis bytes per view bin, whole pages */
	size_t nr_bins;
	uint64_t first_slice;		/* slice index of column 0 */
	size_t nr_slices;
	uint64_t now_us;
};

/* Fills v. nr_bins 1..TIER_HEATMAP_BINS (fewer when the window has fewer
 * pages), nr_slices 1..TIER_HEATMAP_SLICES (fewer when the heatmap is
 * younger; 0 slices when none has ended yet). start/end: 0, UINT64_MAX
 * for the whole layout. Returns 0, -ENOENT when the window holds no
 * managed address (or the layout is empty), -EINVAL for nr_bins or
 * nr_slices out of range or end <= start. */
int tier_heatmap_view(const struct tier_heatmap *hm, uint64_t start, uint64_t end,
		      size_t nr_bins, size_t nr_slices, uint64_t now_us,
		      struct tier_heatmap_view *v);

/* Accesses per second per page of view bin `bin` in view slice `slice`. */
double tier_heatmap_view_rate(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      size_t bin, size_t slice);

/* Slice `slice` of the view: its start and end, microseconds relative to
 * v->now_us (negative: in the past). */
void tier_heatmap_view_slice(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			     size_t slice, int64_t *start_us, int64_t *end_us);

/* View bin `bin`: the address of its first byte and the end of its last
 * (a bin may span a gap between ranges), and its size on the axis. */
void tier_heatmap_view_bin(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			   size_t bin, uint64_t *start, uint64_t *end, uint64_t *bytes);

/* The view bin holding address addr, or -1 (outside the view). */
long tier_heatmap_view_bin_of(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      uint64_t addr);

/* Ranges of the layout inside the view, in address order: calls fn for
 * each (clipped to the view). */
void tier_heatmap_view_ranges(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			      void (*fn)(void *ctx, uint64_t start, uint64_t end), void *ctx);

#endif
