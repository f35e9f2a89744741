/* tierd.h - the tierd policy's parameters: what its heat estimate, its
 * thresholds and its moves are tuned by (why each default is what it is:
 * tierd/params.c). The policy itself is reached through
 * tier_policy_find() like any other; its modules are in tierd/
 * (internal.h).
 */
#ifndef TIER_CORE_POLICIES_TIERD_H
#define TIER_CORE_POLICIES_TIERD_H

#include <stdint.h>

struct tier_tierd_params {
	/* --- heat ---------------------------------------------------------- */
	/* Time constant of the frequency score (what deserves the fast
	 * tier), microseconds. */
	double long_tau_us;
	/* Steps the frequency score spans at least, where steps come further
	 * apart than long_tau_us / long_min_steps: its time constant is then
	 * that many steps' gap. */
	double long_min_steps;
	/* Time constant of the momentum score (what just became hot),
	 * microseconds. */
	double short_tau_us;
	/* Standard deviations of its noise by which a page's recent rate
	 * must exceed its long-term rate to count as heating up. */
	double momentum_sd;
	/* Standard deviations by which it must fall below to count as
	 * cooling down. */
	double cooling_sd;
	/* Standard deviations by which a 2 MiB region's pooled sampled rate
	 * must move, either way, to count as the region's momentum. */
	double region_sd;
	/* Accesses/s below which a decayed rate is zero. */
	float rate_floor_per_s;
	/* A page advised hot scores this many times its heat... */
	double hot_hint_ratio;
	/* ...plus this many accesses/s. */
	double hot_hint_min_per_s;

	/* --- thresholds ---------------------------------------------------- */
	/* Share of tier 0 kept free for promotions, basis points. */
	uint32_t headroom_bp;
	/* Score bins (1/16 octave each) by which a page must lie below its
	 * tier's threshold to be demoted to keep the headroom. */
	int hysteresis_bins;

	/* --- moves --------------------------------------------------------- */
	/* Time a page that moved waits before it may move again,
	 * microseconds (resolution: milliseconds). */
	uint64_t cooldown_us;
	/* What a move costs the application, nanoseconds; a promotion must
	 * save more (its rate x the latency gap x long_tau_us). */
	double move_cost_ns;
	/* An exchange needs the promoted page this many times as hot as the
	 * demoted one... */
	double swap_margin_ratio;
	/* ...plus this many accesses/s... */
	double swap_min_delta_per_s;
	/* ...and, with sampled rates, hotter by this many standard deviations
	 * of the two estimates' sampling noise. */
	double swap_noise_sd;

	/* --- control groups ------------------------------------------------ */
	/* Accesses/s below which a page does not count toward its group's
	 * demand for fast memory. */
	double demand_min_per_s;

	/* --- huge pages ---------------------------------------------------- */
	/* Page walk each access to a split huge page's pages is charged,
	 * nanoseconds. */
	double split_walk_ns;
	/* One split's own cost (the kernel's work, a TLB shootdown),
	 * nanoseconds, spread over long_tau_us. */
	double split_cost_ns;
	/* A split must save this many times its cost. */
	double split_margin_ratio;
	/* Huge pages split at most per tick. */
	unsigned max_splits_per_tick;

	/* --- loaded-latency balance ---------------------------------------- */
	/* Weight of a new loaded-latency measurement in its running mean
	 * (0, 1]. */
	double loaded_smooth_ratio;
	/* Change of a tier's filled share per unit of the ratio by which its
	 * loaded latency exceeds the next tier's. */
	double loaded_gain_ratio;
	/* Latency ratios within 1 +- this leave the share as it is. */
	double loaded_deadband_ratio;
	/* The least share of a tier's capacity the balance keeps filled. */
	double fill_min_ratio;
};

/* The parameters the policy runs with. */
extern const struct tier_tierd_params tier_tierd_params_default;

#endif
