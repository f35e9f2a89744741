/* replay.c - one batch of a workload's accesses against the machine model:
 * first touch, the latency each access pays (with THP, a split unit's TLB
 * misses), the accessed and dirty bits the trackers read, and the faults
 * and samples they take on the way.
 */
#include <errno.h>

#include "backend/sim/engine_internal.h"

/* The access loop, compiled twice (thp a constant) so that the 4 KiB path
 * pays nothing for THP. */
static inline __attribute__((always_inline)) int
replay_pages(struct tier_sim *s, const struct tier_sim_access *a, size_t n, const bool thp)
{
	const unsigned trk = s->trackers;
	const uint64_t mask = thp ? ~(uint64_t)(THP_PAGES - 1) : ~(uint64_t)0;
	double t = 0, stall = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t p = a[i].page, fp;
		uint8_t node, f;
		double lat;

		if (p >= s->nr_pages)
			return -ERANGE;
		node = s->page_node[p];
		if (node == TIER_NODE_NONE) {
			if (tier__sim_first_touch(s, p, a[i].tenant))
				return -ENOMEM;
			node = s->page_node[p];
		}
		lat = s->access_ns > 0 ? s->access_ns : s->lat_ns[node];
		t += lat;
		s->acc_node[node]++;
		s->tenant_acc[a[i].tenant & (TIER_SIM_MAX_TENANTS - 1)]++;
		s->tenant_ns[a[i].tenant & (TIER_SIM_MAX_TENANTS - 1)] += lat;
		fp = p;
		if (thp) {
			if (s->huge[p >> THP_SHIFT]) {
				fp = p & mask;
			} else {
				uint64_t *e = &s->tlb[p % TLB_ENTRIES];

				if (*e != p + 1) {
					*e = p + 1;
					t += PAGE_WALK_NS;
					s->tlb_misses++;
				}
			}
		}
		f = s->flags[fp];
		if (a[i].write) {
			s->wr_node[node]++;
			if ((trk & TRK_SOFTDIRTY) && !(f & F_DIRTY))
				stall += SOFTDIRTY_FAULT_NS;
			f |= F_DIRTY;
		}
		if (f & F_PROTNONE) {
			f &= (uint8_t)~F_PROTNONE;
			stall += HINT_FAULT_NS;
			if (tier__sim_hint_fault(s, p, fp, a[i].write, t))
				return -ENOMEM;
		}
		s->flags[fp] = f | F_ACCESSED;
		if (trk & TRK_SAMPLES) {
			unsigned k = a[i].write && s->sample.store_stream;

			if (--s->sample.countdown[k] == 0 && tier__sim_sample(s, p, a[i].write))
				return -ENOMEM;
		}
	}
	/* Traffic per node is added per batch by the caller, from the
	 * per-node counters. */
	s->app_ns += t + stall;
	s->cost.stall_ns += stall;
	s->accesses += n;
	return 0;
}

int tier__sim_replay(struct tier_sim *s, const struct tier_sim_access *a, size_t n)
{
	return s->thp ? replay_pages(s, a, n, true) : replay_pages(s, a, n, false);
}
