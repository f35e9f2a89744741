/* timeline.c - what the simulator records per epoch: the timeline CSV
 * (tiersim run --timeline: AMAT, fast-tier share, moves, and per tier its
 * used pages and latency) and each tenant's pages per tier, the most at any
 * epoch after settling kept for the results.
 */
#include <string.h>

#include "backend/sim/engine_internal.h"

void tier__sim_timeline_header(const struct tier_sim *s, FILE *f)
{
	size_t r;

	fprintf(f, "time_s,amat_ns,fast_access_ratio,promoted_pages,demoted_pages");
	for (r = 0; r < s->nr_tiers; r++)
		fprintf(f, ",tier%zu_used_pages,tier%zu_latency_ns", r, r);
	if (s->wl->page_hot)
		fprintf(f, ",hot_fast_share");
	fprintf(f, "\n");
}

/* The workload's hot set's share on the fastest tier (page_hot). */
static double hot_fast_share(const struct tier_sim *s)
{
	uint64_t p, hot = 0, fast = 0;

	for (p = 0; p < s->nr_pages; p++) {
		if (!s->wl->page_hot(s->wl_priv, p))
			continue;
		hot++;
		fast += s->page_node[p] != TIER_NODE_NONE && s->node_rank[s->page_node[p]] == 0;
	}
	return hot ? (double)fast / (double)hot : 0;
}

/* Per tier: used pages, then the mean latency of its nodes. */
static void timeline_tiers(const struct tier_sim *s, FILE *f)
{
	size_t r, k;

	for (r = 0; r < s->nr_tiers; r++) {
		const struct tier_tier *t = &s->topo.tiers[r];
		uint64_t used = 0;
		double lat = 0;

		for (k = 0; k < t->nr_nodes; k++) {
			used += s->used_pages[t->nodes[k]];
			lat += s->lat_ns[t->nodes[k]];
		}
		fprintf(f, ",%llu,%.1f", (unsigned long long)used, lat / (double)t->nr_nodes);
	}
}

void tier__sim_timeline_row(struct tier_sim *s, FILE *f)
{
	uint64_t acc = s->accesses - s->ep.acc;
	uint64_t fast = s->fast_accesses - s->ep.fast;
	double app = s->app_ns - s->ep.app_ns;

	if (f && acc) {
		fprintf(f, "%.3f,%.2f,%.4f,%llu,%llu", s->app_ns / 1e9, app / (double)acc,
			(double)fast / (double)acc, (unsigned long long)s->ep.promoted,
			(unsigned long long)s->ep.demoted);
		timeline_tiers(s, f);
		if (s->wl->page_hot)
			fprintf(f, ",%.4f", hot_fast_share(s));
		fprintf(f, "\n");
	}
	s->ep.acc = s->accesses;
	s->ep.fast = s->fast_accesses;
	s->ep.app_ns = s->app_ns;
	s->ep.promoted = s->ep.demoted = 0;
	s->ep.start_ns = s->app_ns;
}

void tier__sim_tenant_pages(const struct tier_sim *s,
			    uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS])
{
	uint64_t p;

	memset(pages, 0, sizeof(uint64_t) * TIER_SIM_MAX_TENANTS * TIER_SIM_MAX_TIERS);
	for (p = 0; p < s->nr_pages; p++) {
		uint8_t n = s->page_node[p];

		if (n != TIER_NODE_NONE && s->page_owner[p] < TIER_SIM_MAX_TENANTS)
			pages[s->page_owner[p]][s->node_rank[n]]++;
	}
}

void tier__sim_tenant_census(struct tier_sim *s)
{
	uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	size_t k, r;

	if (s->nr_tenants < 2 || s->app_ns < TIER_SIM_SETTLE_US * 1e3)
		return;
	tier__sim_tenant_pages(s, pages);
	for (k = 0; k < s->nr_tenants; k++)
		for (r = 0; r < s->nr_tiers; r++)
			if (pages[k][r] > s->tenant_peak[k][r])
				s->tenant_peak[k][r] = pages[k][r];
}
