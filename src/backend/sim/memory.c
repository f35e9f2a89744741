/* memory.c - the simulated machine's memory: each node's capacity and
 * pages, first touch, and the bandwidth and loaded-latency model (see
 * engine.h); the mem ops a policy reads them through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine_internal.h"

/* The loaded-latency curve's knee and cap. */
#define QUEUE_GAIN 0.5
#define UTIL_CAP 0.95

#define QUANTUM_NS 1000000.0		/* latency model update: 1 ms */

double tier__sim_loaded_latency(double idle, double util)
{
	double r = util < UTIL_CAP ? util : UTIL_CAP;

	return idle * (1.0 + QUEUE_GAIN * r / (1.0 - r));
}

static void end_quantum(struct tier_sim *s, double span_ns)
{
	size_t n;

	if (span_ns <= 0)
		return;
	/* The antagonist streams reads on the fast tier. */
	if (s->fast_node >= 0)
		s->q_rd[s->fast_node] += (double)s->antagonist_bps * span_ns / 1e9;
	for (n = 0; n < s->nr_nodes; n++) {
		double util = (s->q_rd[n] / s->rd_bw[n] + s->q_wr[n] / s->wr_bw[n]) / span_ns;
		double target = tier__sim_loaded_latency(s->idle_ns[n], util);

		/* Damped, so the closed loop (latency -> rate -> load) settles. */
		s->lat_ns[n] = 0.5 * s->lat_ns[n] + 0.5 * target;
		s->q_rd[n] = s->q_wr[n] = 0;
	}
	s->q_start_ns = s->app_ns;
}

void tier__sim_quanta(struct tier_sim *s)
{
	while (s->app_ns >= s->next_quantum) {
		end_quantum(s, s->app_ns - s->q_start_ns);
		s->next_quantum += QUANTUM_NS;
	}
}

void tier__sim_account_traffic(struct tier_sim *s)
{
	size_t k;

	for (k = 0; k < s->nr_nodes; k++) {
		uint64_t da = s->acc_node[k] - s->last_acc[k];
		uint64_t dw = s->wr_node[k] - s->last_wr[k];

		/* Loads read; a store is a read for ownership plus a
		 * write-back. */
		s->q_rd[k] += (double)da * LINES_PER_ACCESS * LINE_BYTES;
		s->q_wr[k] += (double)dw * LINES_PER_ACCESS * LINE_BYTES;
		if (s->node_rank[k] == 0)
			s->fast_accesses += da;
		s->writes += dw;
		s->last_acc[k] = s->acc_node[k];
		s->last_wr[k] = s->wr_node[k];
	}
}

static int sim_node_pages(void *priv, int node, uint64_t *total, uint64_t *free)
{
	struct tier_sim *s = priv;

	if (node < 0 || (size_t)node >= s->nr_nodes)
		return -ENOENT;
	*total = s->cap_pages[node];
	*free = s->cap_pages[node] - s->used_pages[node];
	return 0;
}

/* The loaded latency of the last quantum, as a policy with memory
 * controller counters would read it. */
static int sim_node_latency(void *priv, int node, double *ns)
{
	struct tier_sim *s = priv;

	if (node < 0 || (size_t)node >= s->nr_nodes)
		return -ENOENT;
	*ns = s->lat_ns[node];
	return 0;
}

/* folio_referenced() on one page (with THP, its unit): the same rmap walk
 * and PTE test-and-clear that page_idle's bitmap read does per page
 * (mm/page_idle.c page_idle_clear_pte_refs()), so at the idle scan's cost
 * per page, charged to the caller's CPU (kswapd, not the application). */
static int sim_test_and_clear_young(void *priv, uint64_t page)
{
	struct tier_sim *s = priv;
	uint64_t i;
	bool young;

	if (page >= s->nr_pages)
		return -EFAULT;
	i = tier__sim_flag_idx(s, page);
	young = s->flags[i] & F_ACCESSED;
	s->flags[i] &= (uint8_t)~F_ACCESSED;
	s->policy_cpu_ns += s->cpu_ns.idle_scan_page;
	return young;
}

const struct tier_mem_ops tier__sim_mem_ops = {
	.name = "sim",
	.node_pages = sim_node_pages,
	.node_latency_ns = sim_node_latency,
	.test_and_clear_young = sim_test_and_clear_young,
};

uint64_t tier__sim_tier_cap(const struct tier_sim *s, size_t rank)
{
	uint64_t c = 0;
	size_t i;

	for (i = 0; i < s->topo.tiers[rank].nr_nodes; i++)
		c += s->cap_pages[s->topo.tiers[rank].nodes[i]];
	return c;
}

void tier__sim_place_page(struct tier_sim *s, uint64_t page, int node)
{
	uint8_t from = s->page_node[page];

	if (from != TIER_NODE_NONE)
		s->used_pages[from]--;
	s->page_node[page] = (uint8_t)node;
	s->node_gen[page >> TIER_NODE_GEN_SHIFT]++;
	s->placed_gen++;
	s->used_pages[node]++;
}

/* First touch of page p by tenant: the CPUs' node, then by distance. With
 * THP the whole 2 MiB unit is allocated on the first node with room for it;
 * when none has, its pages go one by one (the kernel falls back to 4 KiB
 * pages). */
int tier__sim_first_touch(struct tier_sim *s, uint64_t p, uint8_t tenant)
{
	uint64_t base = p, len = 1, need = 0, q;
	size_t k;

	if (s->thp)
		len = tier__sim_unit_range(s, p, &base);
	for (q = base; q < base + len; q++)
		need += s->page_node[q] == TIER_NODE_NONE;
	for (k = 0; k < s->nr_nodes; k++) {
		int c = s->alloc_order[k];

		if (s->cap_pages[c] - s->used_pages[c] >= need) {
			for (q = base; q < base + len; q++)
				if (s->page_node[q] == TIER_NODE_NONE) {
					tier__sim_place_page(s, q, c);
					s->page_owner[q] = tenant;
				}
			return 0;
		}
	}
	if (s->thp)
		s->huge[base >> THP_SHIFT] = 0;
	for (q = base; q < base + len; q++) {
		if (s->page_node[q] != TIER_NODE_NONE)
			continue;
		for (k = 0; k < s->nr_nodes; k++) {
			int c = s->alloc_order[k];

			if (s->used_pages[c] < s->cap_pages[c]) {
				tier__sim_place_page(s, q, c);
				s->page_owner[q] = tenant;
				break;
			}
		}
		if (k == s->nr_nodes)
			return -ENOMEM;
	}
	return 0;
}

/* --- setup --------------------------------------------------------------- */

/* Each node's capacity, idle latency and bandwidth from the machine. */
static void setup_node_figures(struct tier_sim *s)
{
	size_t i;

	for (i = 0; i < s->nr_nodes; i++) {
		const struct tier_sim_node_spec *n = &s->machine.nodes[i];

		s->cap_pages[i] = s->machine.node_bytes[i] >> PAGE_SHIFT;
		s->idle_ns[i] = n->latency_ns;
		s->lat_ns[i] = n->latency_ns;
		s->rd_bw[i] = n->read_bw_mbps * 1e6 / 1e9;	/* MB/s -> bytes/ns */
		s->wr_bw[i] = n->write_bw_mbps * 1e6 / 1e9;
	}
}

/* First-touch order: the node with CPUs, then by distance from it. */
static void setup_alloc_order(struct tier_sim *s)
{
	int cpu = 0;
	size_t i, j;

	for (i = 0; i < s->nr_nodes; i++)
		if (s->topo.nodes[i].nr_cpus) {
			cpu = (int)i;
			break;
		}
	for (i = 0; i < s->nr_nodes; i++)
		s->alloc_order[i] = (int)i;
	for (i = 0; i < s->nr_nodes; i++)
		for (j = i + 1; j < s->nr_nodes; j++) {
			int a = s->alloc_order[i], b = s->alloc_order[j];
			int da = tier_topology_distance(&s->topo, cpu, a);
			int db = tier_topology_distance(&s->topo, cpu, b);

			if (db < da || (db == da && b < a)) {
				s->alloc_order[i] = b;
				s->alloc_order[j] = a;
			}
		}
}

/* The model's CPU costs on this machine's CPU: each times its
 * cpu_slowdown (1 for every preset: the constants as they are). */
static void setup_cpu_costs(struct tier_sim *s)
{
	double f = s->machine.cpu_slowdown;

	s->cpu_ns.migrate_page = MIGRATE_PAGE_CPU_NS * f;
	s->cpu_ns.shootdown = TLB_SHOOTDOWN_NS * f;
	s->cpu_ns.split = SPLIT_CPU_NS * f;
	s->cpu_ns.hint_fault = HINT_FAULT_NS * f;
	s->cpu_ns.hint_scan_page = HINT_SCAN_PAGE_NS * f;
	s->cpu_ns.idle_scan_page = IDLE_SCAN_PAGE_NS * f;
	s->cpu_ns.softdirty_clear_page = SOFTDIRTY_CLEAR_PAGE_NS * f;
	s->cpu_ns.softdirty_fault = SOFTDIRTY_FAULT_NS * f;
	s->cpu_ns.damon_check = DAMON_CHECK_NS * f;
	s->cpu_ns.sample = SAMPLE_NS * f;
	s->cpu_ns.work_unit = WORK_UNIT_NS * f;
}

int tier__sim_machine_setup(struct tier_sim *s, const struct tier_sim_params *p,
			    uint64_t fit_pages, struct tier_err *err)
{
	uint64_t unit = p->unit_bytes ? p->unit_bytes : TIER_SIM_DEFAULT_UNIT_BYTES;
	int ret;

	ret = p->preset ? tier_sim_machine_from_preset(&s->machine, p->preset, p->ratio, unit, err)
			: tier_sim_machine_init(&s->machine, p->machine, p->ratio, unit, err);
	if (ret)
		return ret;
	if (fit_pages && !p->unit_bytes)
		tier_sim_machine_fit(&s->machine, fit_pages << PAGE_SHIFT, PAGE_BYTES);
	ret = tier_topology_build(&tier_sim_topology_ops, &s->machine, s->p.topology, &s->topo,
				  err);
	if (ret)
		return ret;
	if (s->topo.nr_tiers > TIER_SIM_MAX_TIERS)
		return tier_err_set(err, -EINVAL, "more than %d tiers", TIER_SIM_MAX_TIERS);
	s->nr_nodes = s->machine.nr_nodes;
	s->nr_tiers = s->topo.nr_tiers;
	tier_node_rank_map(&s->topo, s->node_rank);
	s->fast_node = s->topo.tiers[0].nodes[0];
	setup_node_figures(s);
	setup_alloc_order(s);
	setup_cpu_costs(s);
	s->next_quantum = QUANTUM_NS;
	return 0;
}

/* The page arrays, and with THP the huge units' and the TLB's. */
static int alloc_pages(struct tier_sim *s)
{
	s->page_node = malloc(s->nr_pages);
	s->node_gen = calloc((s->nr_pages >> TIER_NODE_GEN_SHIFT) + 1, sizeof(*s->node_gen));
	s->page_owner = calloc(s->nr_pages, 1);
	s->flags = calloc(s->nr_pages, 1);
	s->last_move_ms = calloc(s->nr_pages, sizeof(*s->last_move_ms));
	s->prev_rank = calloc(s->nr_pages, 1);
	if (!s->page_node || !s->node_gen || !s->page_owner || !s->flags || !s->last_move_ms || !s->prev_rank)
		return -ENOMEM;
	memset(s->page_node, TIER_NODE_NONE, s->nr_pages);
	if (s->thp) {
		uint64_t units = (s->nr_pages + THP_PAGES - 1) >> THP_SHIFT;

		s->unit_gen = calloc(units + 1, sizeof(*s->unit_gen));
		s->unit_status = calloc(units + 1, sizeof(*s->unit_status));
		s->huge = malloc(units + 1);
		s->tlb = calloc(TLB_ENTRIES, sizeof(*s->tlb));
		if (!s->unit_gen || !s->unit_status || !s->huge || !s->tlb)
			return -ENOMEM;
		memset(s->huge, 1, units + 1);
	}
	return 0;
}

/* The tenant a page belongs to, for the first touch before the run. */
static uint8_t owner_at(const struct tier_sim *s, uint64_t p)
{
	return s->wl->page_tenant ? (uint8_t)s->wl->page_tenant(s->wl_priv, p) : 0;
}

/* A workload that names each page's node (first_touch_node: a program
 * that binds its memory) touches its pages in page order, each on its node
 * while it has room, else by distance as any first touch. */
static int first_touch_placed(struct tier_sim *s)
{
	uint64_t p;

	for (p = 0; p < s->nr_pages; p++) {
		int c = s->wl->first_touch_node(s->wl_priv, p);

		if (c >= 0 && (size_t)c < s->nr_nodes && s->used_pages[c] < s->cap_pages[c]) {
			tier__sim_place_page(s, p, c);
			s->page_owner[p] = owner_at(s, p);
		} else if (tier__sim_first_touch(s, p, owner_at(s, p))) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* The application first touches its pages in a random order (it
 * initialises its data structures), so the fastest node holds a random
 * subset at the start; with THP a random subset of 2 MiB units. */
static int first_touch_all(struct tier_sim *s)
{
	unsigned shift = s->thp ? THP_SHIFT : 0;
	uint64_t n = s->thp ? (s->nr_pages + THP_PAGES - 1) >> THP_SHIFT : s->nr_pages;
	uint64_t i, *perm = malloc(n * sizeof(*perm));

	if (!perm)
		return -ENOMEM;
	if (s->wl->first_touch_node && !s->thp) {
		free(perm);
		return first_touch_placed(s);
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = tier_rng_below(&s->rng, i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/* The footprint fits the machine (checked), so every page finds a
	 * node. */
	for (i = 0; i < n; i++)
		tier__sim_first_touch(s, perm[i] << shift, owner_at(s, perm[i] << shift));
	free(perm);
	return 0;
}

int tier__sim_pages_setup(struct tier_sim *s, struct tier_err *err)
{
	uint64_t total = 0;
	size_t k;

	for (k = 0; k < s->nr_nodes; k++)
		total += s->cap_pages[k];
	s->nr_pages = s->wl->footprint_pages(s->wl_priv);
	if (!s->nr_pages)
		return tier_err_set(err, -EINVAL, "workload has no pages");
	if (s->nr_pages > total)
		return tier_err_set(err, -EINVAL,
				    "workload footprint (%llu pages) exceeds the machine (%llu pages)",
				    (unsigned long long)s->nr_pages, (unsigned long long)total);
	if (alloc_pages(s) || first_touch_all(s))
		return tier_err_set(err, -ENOMEM, "out of memory");
	return 0;
}
