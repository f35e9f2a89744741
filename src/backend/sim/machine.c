/* machine.c - the simulated tiered machine: presets and topology source.
 *
 * Calibration (published figures):
 *  - local DRAM: 80-100 ns idle; ~100 GB/s per socket on current servers;
 *  - CXL memory expanders: 170-300 ns (2-3x DRAM), up to ~32 GB/s (x8 link);
 *  - Optane-like persistent memory: 305 ns, 39 GB/s read, 14 GB/s write;
 *  - HBM in flat mode: latency close to DRAM (slightly higher), several times
 *    its bandwidth.
 * dram-cxl-slow mirrors the project's test guest (100/250/500 ns, 20/8/2 GB/s).
 *
 * Density: the ratio presets size their tiers in --unit bytes (32 MiB by
 * default), so the generated workloads' footprint is 128 MiB at 1:4 and
 * one core's accesses touch every page many times a second. server-dram-cxl
 * has a server's capacity instead, fixed: 4 GiB of DRAM and 16 GiB of CXL,
 * a 16 GiB footprint for the one simulated core (docs/tiersim.md, "Server
 * density", gives the figures it stands on). --ratio turns it back into a
 * ratio preset.
 */
#include "backend/sim/machine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct tier_sim_preset tier_sim_presets[] = {
	{
		.name = "dram-cxl",
		.description = "local DRAM + one CXL expander (2 tiers)",
		.nr_nodes = 2,
		.nodes = {
			{ "dram", 90, 100000, 90000, 1, 2, 0 },
			{ "cxl", 250, 32000, 28000, 4, 0, 0 },
		},
	},
	{
		.name = "dram-cxl-slow",
		.description = "DRAM + CXL + a slow tier, like the test guest (3 tiers)",
		.nr_nodes = 3,
		.nodes = {
			{ "dram", 100, 20000, 20000, 1, 2, 0 },
			{ "cxl", 250, 8000, 8000, 4, 0, 0 },
			{ "slow", 500, 2000, 2000, 8, 0, 0 },
		},
	},
	{
		.name = "hbm-dram-cxl",
		.description = "HBM (flat mode) + DRAM + CXL (3 tiers)",
		.nr_nodes = 3,
		.nodes = {
			{ "hbm", 120, 800000, 700000, 1, 0, 0 },
			{ "dram", 100, 100000, 90000, 4, 2, 0 },
			{ "cxl", 250, 32000, 28000, 8, 0, 0 },
		},
	},
	{
		.name = "dram-pmem",
		.description = "DRAM + Optane-like persistent memory (2 tiers)",
		.nr_nodes = 2,
		.nodes = {
			{ "dram", 90, 100000, 90000, 1, 2, 0 },
			{ "pmem", 305, 39000, 14000, 4, 0, 0 },
		},
	},
	{
		.name = "server-dram-cxl",
		.description = "dram-cxl at a server's size: 4 GiB DRAM + 16 GiB CXL, 16 GiB footprint",
		.nr_nodes = 2,
		.nodes = {
			{ "dram", 90, 100000, 90000, 1, 2, 4096 },
			{ "cxl", 250, 32000, 28000, 4, 0, 16384 },
		},
	},
	{ 0 },
};

const struct tier_sim_preset *tier_sim_preset_find(const char *name)
{
	const struct tier_sim_preset *p;

	for (p = tier_sim_presets; p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

unsigned tier_sim_preset_cores(const struct tier_sim_preset *p)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < p->nr_nodes; i++)
		n += p->nodes[i].nr_cpus > 0 ? (unsigned)p->nodes[i].nr_cpus : 0;
	return n;
}

double tier_sim_preset_cpu_slowdown(const struct tier_sim_preset *p)
{
	return p->cpu_slowdown > 0 ? p->cpu_slowdown : 1.0;
}

static int parse_ratio(const char *s, unsigned *out, size_t nr, struct tier_err *err)
{
	const char *p = s;
	size_t i = 0;

	while (*p) {
		unsigned long v = 0;

		if (i == nr)
			return tier_err_set(err, -EINVAL,
					    "ratio '%s': more than %zu parts (the machine has %zu tiers)",
					    s, nr, nr);
		if (*p < '0' || *p > '9')
			return tier_err_set(err, -EINVAL,
					    "ratio '%s': expected numbers like 1:4, found '%c'",
					    s, *p);
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned long)(*p - '0');
			if (v > 1000000)
				return tier_err_set(err, -EINVAL,
						    "ratio '%s': part %zu too large", s, i + 1);
			p++;
		}
		if (!v)
			return tier_err_set(err, -EINVAL,
					    "ratio '%s': part %zu is zero", s, i + 1);
		out[i++] = (unsigned)v;
		if (*p == ':' && p[1])
			p++;
		else if (*p)
			return tier_err_set(err, -EINVAL,
					    "ratio '%s': expected ':' between numbers", s);
	}
	if (i != nr)
		return tier_err_set(err, -EINVAL,
				    "ratio '%s': %zu parts, the machine has %zu tiers",
				    s, i, nr);
	return 0;
}

int tier_sim_machine_init(struct tier_sim_machine *m, const char *name,
			  const char *ratio, uint64_t unit_bytes,
			  struct tier_err *err)
{
	const struct tier_sim_preset *p = tier_sim_preset_find(name);

	memset(m, 0, sizeof(*m));
	if (!p)
		return tier_err_set(err, -ENOENT,
				    "unknown machine preset '%s' (see 'tiersim list')", name);
	return tier_sim_machine_from_preset(m, p, ratio, unit_bytes, err);
}

int tier_sim_machine_from_preset(struct tier_sim_machine *m,
				 const struct tier_sim_preset *p, const char *ratio,
				 uint64_t unit_bytes, struct tier_err *err)
{
	unsigned parts[TIER_SIM_MAX_NODES];
	size_t i;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!p->nr_nodes || p->nr_nodes > TIER_SIM_MAX_NODES)
		return tier_err_set(err, -EINVAL, "machine '%s': %zu nodes (1 to %d)",
				    p->name, p->nr_nodes, TIER_SIM_MAX_NODES);
	m->preset = p;
	m->nr_nodes = p->nr_nodes;
	m->cpu_slowdown = tier_sim_preset_cpu_slowdown(p);
	memcpy(m->nodes, p->nodes, sizeof(m->nodes));
	if (ratio) {
		ret = parse_ratio(ratio, parts, p->nr_nodes, err);
		if (ret)
			return ret;
		for (i = 0; i < p->nr_nodes; i++) {
			m->nodes[i].ratio = parts[i];
			m->nodes[i].size_mb = 0;	/* --ratio wins over sizes */
		}
	}
	for (i = 0; i < p->nr_nodes; i++)
		m->node_bytes[i] = m->nodes[i].size_mb ? m->nodes[i].size_mb << 20
						       : unit_bytes * m->nodes[i].ratio;
	return 0;
}

void tier_sim_machine_fit(struct tier_sim_machine *m, uint64_t footprint_bytes,
			  uint64_t page_bytes)
{
	uint64_t parts = 0, pages, unit_pages;
	size_t i;

	for (i = 0; i < m->nr_nodes; i++) {
		if (m->nodes[i].size_mb)
			return;
		parts += m->nodes[i].ratio;
	}
	if (!parts || !page_bytes)
		return;
	pages = (footprint_bytes + page_bytes - 1) / page_bytes;
	/* total = footprint * 5 / 4, rounded up to whole units */
	unit_pages = (pages * 5 + 4 * parts - 1) / (4 * parts);
	if (!unit_pages)
		unit_pages = 1;
	for (i = 0; i < m->nr_nodes; i++)
		m->node_bytes[i] = unit_pages * page_bytes * m->nodes[i].ratio;
}

static int sim_topology_read(void *priv, struct tier_topology *topo,
			     struct tier_err *err)
{
	const struct tier_sim_machine *m = priv;
	uint32_t cpu_lat = 0;
	int row[TIER_SIM_MAX_NODES];
	int cpu = 0;
	size_t i, j;
	int ret;

	ret = tier_topology_alloc_nodes(topo, m->nr_nodes);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	for (i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i].nr_cpus && !cpu_lat)
			cpu_lat = m->nodes[i].latency_ns;
	if (!cpu_lat)
		cpu_lat = m->nodes[0].latency_ns;
	for (i = 0; i < m->nr_nodes; i++) {
		const struct tier_sim_node_spec *s = &m->nodes[i];
		struct tier_node *n = &topo->nodes[i];
		int cpus[64];
		int k;

		n->id = (int)i;
		for (k = 0; k < s->nr_cpus && k < 64; k++)
			cpus[k] = cpu++;
		ret = tier_node_set_cpus(n, cpus, (size_t)k);
		if (ret)
			goto out_nomem;
		n->has_memory = m->node_bytes[i] > 0;
		n->mem_total_bytes = m->node_bytes[i];
		n->mem_free_bytes = m->node_bytes[i];
		n->has_hmat = true;
		n->hmat.read_latency_ns = s->latency_ns;
		n->hmat.write_latency_ns = s->latency_ns;
		n->hmat.read_bw_mbps = s->read_bw_mbps;
		n->hmat.write_bw_mbps = s->write_bw_mbps;
		/* SLIT-like distances: 10 locally, scaled by latency relative to
		 * the CPUs' memory, as firmware commonly derives them. */
		for (j = 0; j < m->nr_nodes; j++) {
			uint32_t lat = m->nodes[j].latency_ns > s->latency_ns ?
				       m->nodes[j].latency_ns : s->latency_ns;
			int d = (int)((10u * lat + cpu_lat / 2) / cpu_lat);

			row[j] = i == j ? 10 : (d > 10 ? d : 11);
		}
		ret = tier_node_set_distance(topo, n, row);
		if (ret)
			goto out_nomem;
	}
	return 0;
out_nomem:
	tier_topology_release(topo);
	return tier_err_set(err, -ENOMEM, "out of memory");
}

const struct tier_topology_ops tier_sim_topology_ops = {
	.name = "sim",
	.read = sim_topology_read,
};
