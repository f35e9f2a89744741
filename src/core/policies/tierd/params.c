/* params.c - the tierd policy's parameters as it runs with them, and why
 * each is what it is (meanings and units: core/policies/tierd.h). */
#include "core/policies/tierd.h"

const struct tier_tierd_params tier_tierd_params_default = {
	.long_tau_us = 2000000.0,
	/* A step's observations are a short window - a DAMON snapshot is
	 * one aggregation of 10-20 checks per region - yet speak for the gap
	 * since the last step (heat.c, rate_weight()). Where a daemon's CPU
	 * share spaces steps seconds apart, a 2 s time constant kept one
	 * snapshot only, and its noise made pages of half the rate a move
	 * must pay for read above it: in the guest's bench, 1 region in 20
	 * of a GUPS array's 5/s rest read over 10/s in a step, and 43,000
	 * to 54,000 of its pages were moved up in 60 s. Over 3 steps the
	 * rate's standard deviation is 0.4 of one snapshot's; a page that
	 * heats up still shows at once in the momentum score. */
	.long_min_steps = 3.0,
	.short_tau_us = 250000.0,
	/* Cooling needs more standard deviations than heating: a sparse
	 * page's short-window count is skewed (it cannot go below zero, and
	 * is zero most of the time), so low counts are the common swing. */
	.momentum_sd = 2.0,
	.cooling_sd = 4.0,
	/* A region is tested every tick, and at 3 the false alarms of
	 * thousands of regions cost a stationary workload (zipf at 1:8) 0.8%. */
	.region_sd = 4.0,
	.rate_floor_per_s = 1e-3f,
	/* An advised-hot page never counts less than a warm one. */
	.hot_hint_ratio = 4.0,
	.hot_hint_min_per_s = 1000.0,

	.headroom_bp = 50,		/* 0.5% of tier 0 */
	.hysteresis_bins = 4,		/* a quarter octave */

	.cooldown_us = 2000000,
	/* A TLB shootdown's share and the bandwidth the copy takes. */
	.move_cost_ns = 3000.0,
	/* Estimates from sparse observations are noisy: a smaller margin
	 * churns pages of equal heat, see tiersim's thrash and uniform. */
	.swap_margin_ratio = 2.0,
	.swap_min_delta_per_s = 1.0,
	.swap_noise_sd = 0.5,

	.demand_min_per_s = 1.0,

	/* Every access to a split huge page's pages is counted as a page walk
	 * (as if every access missed the TLB: an upper bound, the hot pages'
	 * entries mostly stay cached); the split itself costs ~30 us of the
	 * kernel's and a TLB shootdown. 64 splits a tick: ~2 ms of kernel
	 * time per 100 ms. */
	.split_walk_ns = 30.0,
	.split_cost_ns = 40000.0,
	.split_margin_ratio = 2.0,
	.max_splits_per_tick = 64,

	.loaded_smooth_ratio = 0.3,
	.loaded_gain_ratio = 0.5,
	.loaded_deadband_ratio = 0.02,
	.fill_min_ratio = 0.1,
};
