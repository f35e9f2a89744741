/* replay.c - one batch of a workload's accesses against the machine model:
 * first touch, the latency each access pays (with THP, a split unit's TLB
 * misses), the accessed and dirty bits the trackers read, and the faults
 * and samples they take on the way.
 */
#include <errno.h>

#include "backend/sim/engine_internal.h"

/* Accesses per chunk of the loop: the per-node counts it keeps in 8-bit
 * fields, one per node (TIER_SIM_MAX_NODES of them) in a word, must not
 * overflow within one. */
#define CHUNK 255

/* Adds a chunk's per-node counts, packed as above, to the machine's. */
static void node_counts_add(uint64_t *to, uint64_t packed)
{
	unsigned k;

	for (k = 0; k < TIER_SIM_MAX_NODES; k++)
		to[k] += (packed >> (8 * k)) & 0xff;
}

/* The access loop, compiled twice (thp a constant) so that the 4 KiB path
 * pays nothing for THP. Everything the loop carries from one access to the
 * next lives in locals (the byte stores to the flags would otherwise make
 * the compiler reload the model's fields at each access, and a sum kept in
 * memory costs a store-to-load round trip per access): the application's
 * time and stalls, the current tenant's time (added in the same order as
 * access by access, so the figures are the same to the bit), the per-node
 * counts and the sample countdowns. */
static inline __attribute__((always_inline)) int
replay_pages(struct tier_sim *s, const struct tier_sim_access *a, size_t n, const bool thp)
{
	const bool samples = s->trackers & TRK_SAMPLES;
	const bool softdirty = s->trackers & (TRK_SOFTDIRTY | TRK_SDROUNDS);
	const bool store_stream = s->sample.store_stream;
	const uint64_t mask = thp ? ~(uint64_t)(THP_PAGES - 1) : ~(uint64_t)0;
	const uint64_t nr_pages = s->nr_pages;
	const uint8_t *const page_node = s->page_node;
	uint8_t *const flags = s->flags;
	const uint8_t *const huge = s->huge;
	uint64_t *const tlb = s->tlb;
	double lat[TIER_SIM_MAX_NODES];
	double t = 0, stall = 0, tn;
	/* Countdown of the load (or every access) and store streams. */
	uint64_t cd0 = samples ? s->sample.countdown[0] : UINT64_MAX;
	uint64_t cd1 = samples ? s->sample.countdown[1] : UINT64_MAX;
	uint64_t tlb_misses = 0, tacc = 0, sd_faults = 0;
	unsigned cur = n ? a[0].tenant & (TIER_SIM_MAX_TENANTS - 1) : 0;
	size_t i;
	int ret = 0;

	/* A workload that sets its own time per access (access_ns: the
	 * guest's, whose code sets its rate) pays it on every node. */
	for (i = 0; i < TIER_SIM_MAX_NODES; i++)
		lat[i] = s->access_ns > 0 ? s->access_ns : s->lat_ns[i];
	tn = s->tenant_ns[cur];
	for (i = 0; i < n;) {
		size_t end = n - i < CHUNK ? n : i + CHUNK;
		uint64_t acc = 0, wr = 0;

		for (; i < end; i++) {
			uint64_t p = a[i].page, fp, inc;
			unsigned tenant = a[i].tenant & (TIER_SIM_MAX_TENANTS - 1);
			const bool write = a[i].write;
			uint8_t node, f;
			bool fire;

			if (p >= nr_pages) {
				ret = -ERANGE;
				break;
			}
			node = page_node[p];
			if (node == TIER_NODE_NONE) {
				if (tier__sim_first_touch(s, p, a[i].tenant)) {
					ret = -ENOMEM;
					break;
				}
				node = page_node[p];
			}
			t += lat[node];
			if (tenant != cur) {
				s->tenant_ns[cur] = tn;
				s->tenant_acc[cur] += tacc;
				cur = tenant;
				tn = s->tenant_ns[cur];
				tacc = 0;
			}
			tn += lat[node];
			tacc++;
			inc = (uint64_t)1 << (node * 8);
			acc += inc;
			wr += inc & -(uint64_t)write;
			fp = p;
			if (thp) {
				if (huge[p >> THP_SHIFT]) {
					fp = p & mask;
				} else {
					uint64_t *e = &tlb[p % TLB_ENTRIES];

					if (*e != p + 1) {
						*e = p + 1;
						t += PAGE_WALK_NS;
						tlb_misses++;
					}
				}
			}
			f = flags[fp];
			if (softdirty && write && !(f & F_DIRTY)) {
				stall += s->cpu_ns.softdirty_fault;
				sd_faults++;
			}
			f |= (uint8_t)(write * F_DIRTY);
			/* The access's sample stream counts down (without
			 * samples neither reaches 0). */
			if (write & store_stream)
				fire = --cd1 == 0;
			else
				fire = --cd0 == 0;
			if (f & F_PROTNONE) {
				f &= (uint8_t)~F_PROTNONE;
				stall += s->cpu_ns.hint_fault;
				if (tier__sim_hint_fault(s, p, fp, write, t)) {
					ret = -ENOMEM;
					break;
				}
			}
			flags[fp] = f | F_ACCESSED;
			if (fire) {
				s->sample.countdown[0] = cd0;
				s->sample.countdown[1] = cd1;
				if (tier__sim_sample(s, p, write)) {
					ret = -ENOMEM;
					break;
				}
				cd0 = s->sample.countdown[0];
				cd1 = s->sample.countdown[1];
			}
		}
		node_counts_add(s->acc_node, acc);
		node_counts_add(s->wr_node, wr);
		if (ret)
			break;
	}
	if (n) {
		s->tenant_ns[cur] = tn;
		s->tenant_acc[cur] += tacc;
	}
	if (samples) {
		s->sample.countdown[0] = cd0;
		s->sample.countdown[1] = cd1;
	}
	s->tlb_misses += tlb_misses;
	s->sd.faults += sd_faults;
	if (ret)
		return ret;
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
