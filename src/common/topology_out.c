/* topology_out.c - the topology as JSON (json-c) and as a readable table. */
#include "common/topology_out.h"

#include <string.h>

#include "core/nodelist.h"

static struct json_object *int_array(const int *v, size_t n)
{
	struct json_object *a = json_object_new_array_ext((int)n);
	size_t i;

	for (i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_int(v[i]));
	return a;
}

struct json_object *tier_topology_to_json(const struct tier_topology *topo)
{
	struct json_object *root = json_object_new_object();
	struct json_object *nodes = json_object_new_array();
	struct json_object *tiers = json_object_new_array();
	size_t i;

	if (!root || !nodes || !tiers)
		goto out_nomem;
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		struct json_object *o = json_object_new_object();
		struct json_object *h = NULL;

		if (!o)
			goto out_nomem;
		json_object_object_add(o, "id", json_object_new_int(n->id));
		json_object_object_add(o, "cpus", int_array(n->cpus, n->nr_cpus));
		json_object_object_add(o, "mem_total_bytes",
				       json_object_new_uint64(n->mem_total_bytes));
		json_object_object_add(o, "mem_free_bytes",
				       json_object_new_uint64(n->mem_free_bytes));
		json_object_object_add(o, "distance",
				       n->distance ? int_array(n->distance, topo->nr_nodes)
						   : NULL);
		if (n->has_hmat) {
			h = json_object_new_object();
			json_object_object_add(h, "read_latency_ns",
					       json_object_new_int64(n->hmat.read_latency_ns));
			json_object_object_add(h, "write_latency_ns",
					       json_object_new_int64(n->hmat.write_latency_ns));
			json_object_object_add(h, "read_bandwidth_mbps",
					       json_object_new_int64(n->hmat.read_bw_mbps));
			json_object_object_add(h, "write_bandwidth_mbps",
					       json_object_new_int64(n->hmat.write_bw_mbps));
		}
		json_object_object_add(o, "hmat", h);
		json_object_object_add(o, "kernel_tier",
				       n->kernel_tier >= 0 ? json_object_new_int(n->kernel_tier)
							   : NULL);
		json_object_object_add(o, "has_memory", json_object_new_boolean(n->has_memory));
		json_object_object_add(o, "rank", n->rank >= 0 ? json_object_new_int(n->rank)
							       : NULL);
		json_object_array_add(nodes, o);
	}
	for (i = 0; i < topo->nr_tiers; i++) {
		struct json_object *t = json_object_new_object();

		if (!t)
			goto out_nomem;
		json_object_object_add(t, "rank", json_object_new_int(topo->tiers[i].rank));
		json_object_object_add(t, "nodes",
				       int_array(topo->tiers[i].nodes, topo->tiers[i].nr_nodes));
		json_object_array_add(tiers, t);
	}
	json_object_object_add(root, "nodes", nodes);
	json_object_object_add(root, "tiers", tiers);
	json_object_object_add(root, "rank_source",
			       json_object_new_string(tier_rank_source_name(topo->rank_source)));
	return root;
out_nomem:
	json_object_put(root);
	json_object_put(nodes);
	json_object_put(tiers);
	return NULL;
}

const char *tier_format_bytes(unsigned long long bytes, char *buf, size_t sz)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 100 || v == (double)(unsigned long long)v)
		snprintf(buf, sz, "%.0f %s", v, units[u]);
	else
		snprintf(buf, sz, "%.1f %s", v, units[u]);
	return buf;
}

static const char *perf_pair(uint32_t r, uint32_t w, char *buf, size_t sz)
{
	if (!r && !w)
		snprintf(buf, sz, "-");
	else if (r == w || !w)
		snprintf(buf, sz, "%u", r);
	else
		snprintf(buf, sz, "%u/%u", r, w);
	return buf;
}

void tier_topology_print(const struct tier_topology *topo, FILE *out)
{
	size_t i, j;

	fprintf(out, "%-5s %-10s %-10s %-10s %-14s %-13s %-15s %-7s %s\n",
		"node", "cpus", "memory", "free", "distance", "latency ns",
		"bandwidth MB/s", "kernel", "tier");
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		char cpus[64], total[32], freeb[32], dist[128] = "-", lat[32], bw[32];
		char ktier[16] = "-", rank[16] = "-";
		size_t len = 0;

		if (n->nr_cpus)
			tier_nodelist_format(n->cpus, n->nr_cpus, cpus, sizeof(cpus));
		else
			snprintf(cpus, sizeof(cpus), "-");
		if (n->distance)
			for (j = 0; j < topo->nr_nodes && len < sizeof(dist); j++)
				len += (size_t)snprintf(dist + len, sizeof(dist) - len,
							"%s%d", j ? " " : "", n->distance[j]);
		if (n->kernel_tier >= 0)
			snprintf(ktier, sizeof(ktier), "%d", n->kernel_tier);
		if (n->rank >= 0)
			snprintf(rank, sizeof(rank), "%d", n->rank);
		fprintf(out, "%-5d %-10s %-10s %-10s %-14s %-13s %-15s %-7s %s\n",
			n->id, cpus,
			n->has_memory ? tier_format_bytes(n->mem_total_bytes, total, sizeof(total)) : "none",
			n->has_memory ? tier_format_bytes(n->mem_free_bytes, freeb, sizeof(freeb)) : "-",
			dist,
			n->has_hmat ? perf_pair(n->hmat.read_latency_ns, n->hmat.write_latency_ns, lat, sizeof(lat)) : "-",
			n->has_hmat ? perf_pair(n->hmat.read_bw_mbps, n->hmat.write_bw_mbps, bw, sizeof(bw)) : "-",
			ktier, rank);
	}
	fprintf(out, "\n%zu tier%s, ranked by %s:\n", topo->nr_tiers,
		topo->nr_tiers == 1 ? "" : "s",
		topo->rank_source == TIER_RANK_CONFIG ? "the configuration's override" :
		topo->rank_source == TIER_RANK_KERNEL ? "the kernel's memory tiers" :
		topo->rank_source == TIER_RANK_HMAT ? "HMAT latency and bandwidth" :
		topo->rank_source == TIER_RANK_SLIT ? "SLIT distance from the CPU nodes" :
		topo->rank_source == TIER_RANK_MEASURED ? "measured latency and bandwidth (tierctl probe)" :
						      "nothing (no figures)");
	for (i = 0; i < topo->nr_tiers; i++) {
		const struct tier_tier *t = &topo->tiers[i];
		unsigned long long total = 0;
		char nodes[128], sz[32];

		for (j = 0; j < t->nr_nodes; j++) {
			const struct tier_node *n = tier_topology_node(topo, t->nodes[j]);

			if (n)
				total += n->mem_total_bytes;
		}
		tier_nodelist_format(t->nodes, t->nr_nodes, nodes, sizeof(nodes));
		fprintf(out, "  tier %d: node%s %s (%s)\n", t->rank,
			t->nr_nodes == 1 ? "" : "s", nodes,
			tier_format_bytes(total, sz, sizeof(sz)));
	}
}
