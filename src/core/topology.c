/* topology.c - the memory topology model and tier ranking. */
#include "core/topology.h"
#include "core/ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


void tier_topology_init(struct tier_topology *topo)
{
	memset(topo, 0, sizeof(*topo));
}

static void release_tiers(struct tier_topology *topo)
{
	size_t i;

	for (i = 0; i < topo->nr_tiers; i++)
		free(topo->tiers[i].nodes);
	free(topo->tiers);
	topo->tiers = NULL;
	topo->nr_tiers = 0;
	topo->rank_source = TIER_RANK_NONE;
	for (i = 0; i < topo->nr_nodes; i++)
		topo->nodes[i].rank = -1;
}

void tier_topology_release(struct tier_topology *topo)
{
	size_t i;

	release_tiers(topo);
	for (i = 0; i < topo->nr_nodes; i++) {
		free(topo->nodes[i].cpus);
		free(topo->nodes[i].distance);
	}
	free(topo->nodes);
	tier_topology_init(topo);
}

int tier_topology_alloc_nodes(struct tier_topology *topo, size_t nr)
{
	size_t i;

	tier_topology_release(topo);
	if (!nr)
		return 0;
	topo->nodes = calloc(nr, sizeof(*topo->nodes));
	if (!topo->nodes)
		return -ENOMEM;
	topo->nr_nodes = nr;
	for (i = 0; i < nr; i++) {
		topo->nodes[i].kernel_tier = -1;
		topo->nodes[i].rank = -1;
	}
	return 0;
}

int tier_node_set_cpus(struct tier_node *node, const int *cpus, size_t nr)
{
	int *c = NULL;

	if (nr) {
		c = malloc(nr * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memcpy(c, cpus, nr * sizeof(*c));
	}
	free(node->cpus);
	node->cpus = c;
	node->nr_cpus = nr;
	return 0;
}

int tier_node_set_distance(struct tier_topology *topo, struct tier_node *node,
			   const int *row)
{
	int *d = malloc(topo->nr_nodes * sizeof(*d));

	if (!d)
		return -ENOMEM;
	memcpy(d, row, topo->nr_nodes * sizeof(*d));
	free(node->distance);
	node->distance = d;
	return 0;
}

static long node_index(const struct tier_topology *topo, int id)
{
	size_t i;

	for (i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].id == id)
			return (long)i;
	return -1;
}

struct tier_node *tier_topology_node(const struct tier_topology *topo, int id)
{
	long i = node_index(topo, id);

	return i < 0 ? NULL : &topo->nodes[i];
}

int tier_topology_distance(const struct tier_topology *topo, int from, int to)
{
	long f = node_index(topo, from), t = node_index(topo, to);

	if (f < 0 || t < 0 || !topo->nodes[f].distance)
		return -1;
	return topo->nodes[f].distance[t];
}

int tier_topology_node_rank(const struct tier_topology *topo, int id)
{
	const struct tier_node *n = tier_topology_node(topo, id);

	return n ? n->rank : -1;
}

int tier_topology_validate(const struct tier_topology *topo, struct tier_err *err)
{
	size_t i, j;

	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];

		if (n->id < 0)
			return tier_err_set(err, -EINVAL, "node id %d is negative", n->id);
		if (i && topo->nodes[i - 1].id >= n->id)
			return tier_err_set(err, -EINVAL,
					    "node ids not unique and ascending at node %d",
					    n->id);
		if (n->mem_free_bytes > n->mem_total_bytes)
			return tier_err_set(err, -EINVAL,
					    "node %d: free memory %llu bytes exceeds total %llu",
					    n->id, (unsigned long long)n->mem_free_bytes,
					    (unsigned long long)n->mem_total_bytes);
		if (!n->distance)
			continue;
		for (j = 0; j < topo->nr_nodes; j++) {
			if (n->distance[j] <= 0)
				return tier_err_set(err, -EINVAL,
						    "node %d: distance to node %d is %d, must be positive",
						    n->id, topo->nodes[j].id, n->distance[j]);
			if (j != i && n->distance[j] < n->distance[i])
				return tier_err_set(err, -EINVAL,
						    "node %d: distance to node %d (%d) is below its local distance (%d)",
						    n->id, topo->nodes[j].id, n->distance[j],
						    n->distance[i]);
		}
	}
	return 0;
}

uint64_t tier_abstract_distance(const struct tier_perf *perf,
				const struct tier_perf *ref)
{
	uint64_t lat = (uint64_t)perf->read_latency_ns +
		       (perf->write_latency_ns ? perf->write_latency_ns : perf->read_latency_ns);
	uint64_t bw = (uint64_t)perf->read_bw_mbps +
		      (perf->write_bw_mbps ? perf->write_bw_mbps : perf->read_bw_mbps);
	uint64_t ref_lat = (uint64_t)ref->read_latency_ns +
			   (ref->write_latency_ns ? ref->write_latency_ns : ref->read_latency_ns);
	uint64_t ref_bw = (uint64_t)ref->read_bw_mbps +
			  (ref->write_bw_mbps ? ref->write_bw_mbps : ref->read_bw_mbps);

	if (!ref_lat || !bw)
		return UINT64_MAX;
	/* Same order of operations as the kernel, so the chunks agree with
	 * what a kernel that ranks by HMAT would pick. */
	return TIER_ADISTANCE_DRAM * lat / ref_lat * ref_bw / bw;
}

const char *tier_rank_source_name(enum tier_rank_source src)
{
	switch (src) {
	case TIER_RANK_CONFIG:
		return "config";
	case TIER_RANK_KERNEL:
		return "kernel";
	case TIER_RANK_HMAT:
		return "hmat";
	case TIER_RANK_SLIT:
		return "slit";
	case TIER_RANK_MEASURED:
		return "measured";
	case TIER_RANK_NONE:
		break;
	}
	return "none";
}

/* Builds topo->tiers from a per-node sort key (nodes with equal keys share a
 * tier; smaller keys are faster). key[i] is for topo->nodes[i]; nodes
 * without memory are skipped. */
static int group_by_key(struct tier_topology *topo, const uint64_t *key)
{
	size_t i, nr_tiers = 0;
	uint64_t prev = 0;
	bool first = true;

	for (;;) {
		/* Next smallest key above prev. */
		uint64_t best = UINT64_MAX;
		bool found = false;
		struct tier_tier *t, *nt;

		for (i = 0; i < topo->nr_nodes; i++) {
			if (!topo->nodes[i].has_memory || topo->nodes[i].held)
				continue;
			if (!first && key[i] <= prev)
				continue;
			if (!found || key[i] < best) {
				best = key[i];
				found = true;
			}
		}
		if (!found)
			break;
		nt = realloc(topo->tiers, (nr_tiers + 1) * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		topo->tiers = nt;
		t = &topo->tiers[nr_tiers];
		memset(t, 0, sizeof(*t));
		t->rank = (int)nr_tiers;
		topo->nr_tiers = ++nr_tiers;
		for (i = 0; i < topo->nr_nodes; i++) {
			int *nn;

			if (!topo->nodes[i].has_memory || topo->nodes[i].held || key[i] != best)
				continue;
			nn = realloc(t->nodes, (t->nr_nodes + 1) * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			t->nodes = nn;
			t->nodes[t->nr_nodes++] = topo->nodes[i].id;
			topo->nodes[i].rank = t->rank;
		}
		prev = best;
		first = false;
	}
	return 0;
}

static int rank_override(struct tier_topology *topo,
			 const struct tier_tier_override *ovr, size_t nr,
			 uint64_t *key, struct tier_err *err)
{
	size_t i, r, k;

	for (i = 0; i < topo->nr_nodes; i++)
		key[i] = UINT64_MAX;
	for (r = 0; r < nr; r++) {
		if (!ovr[r].nr_nodes)
			return tier_err_set(err, -EINVAL, "tier %zu lists no node", r);
		for (k = 0; k < ovr[r].nr_nodes; k++) {
			int id = ovr[r].nodes[k];
			long ni = node_index(topo, id);

			if (ni < 0)
				return tier_err_set(err, -EINVAL,
						    "tier %zu: node %d does not exist", r, id);
			if (!topo->nodes[ni].has_memory)
				return tier_err_set(err, -EINVAL,
						    "tier %zu: node %d has no memory", r, id);
			if (key[ni] != UINT64_MAX)
				return tier_err_set(err, -EINVAL,
						    "tier %zu: node %d is already in tier %llu",
						    r, id, (unsigned long long)key[ni]);
			key[ni] = r;
		}
	}
	for (i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].has_memory && !topo->nodes[i].held && key[i] == UINT64_MAX)
			return tier_err_set(err, -EINVAL,
					    "node %d has memory but is in no tier of the override",
					    topo->nodes[i].id);
	return 0;
}

static bool keys_from_kernel(const struct tier_topology *topo, uint64_t *key)
{
	size_t i;
	bool any = false;

	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];

		if (!n->has_memory)
			continue;
		if (n->kernel_tier < 0)
			return false;
		key[i] = (uint64_t)n->kernel_tier;
		any = true;
	}
	return any;
}

static bool keys_from_hmat(const struct tier_topology *topo, uint64_t *key)
{
	const struct tier_node *ref = NULL;
	size_t i;
	bool any = false;

	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];

		if (!n->has_memory)
			continue;
		if (!n->has_hmat || !n->hmat.read_latency_ns || !n->hmat.read_bw_mbps)
			return false;
		any = true;
	}
	if (!any)
		return false;
	/* The reference is DRAM next to the CPUs: the fastest node with CPUs,
	 * else the fastest node. */
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];

		if (!n->has_memory || !n->nr_cpus)
			continue;
		if (!ref || n->hmat.read_latency_ns < ref->hmat.read_latency_ns)
			ref = n;
	}
	for (i = 0; !ref && i < topo->nr_nodes; i++)
		if (topo->nodes[i].has_memory)
			ref = &topo->nodes[i];
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];

		if (n->has_memory)
			key[i] = tier_abstract_distance(&n->hmat, &ref->hmat) >>
				 TIER_ADISTANCE_CHUNK_BITS;
	}
	return true;
}

static bool keys_from_slit(const struct tier_topology *topo, uint64_t *key)
{
	size_t i, c;
	bool have_cpu_node = false;

	for (c = 0; c < topo->nr_nodes; c++)
		if (topo->nodes[c].nr_cpus && topo->nodes[c].distance)
			have_cpu_node = true;
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		int d = -1, local = n->distance ? n->distance[i] : -1;

		if (!n->has_memory)
			continue;
		for (c = 0; c < topo->nr_nodes; c++) {
			const struct tier_node *cn = &topo->nodes[c];

			if (have_cpu_node && (!cn->nr_cpus || !cn->distance))
				continue;
			if (!have_cpu_node && c != i)
				continue;
			if (cn->distance && (d < 0 || cn->distance[i] < d))
				d = cn->distance[i];
		}
		if (d < 0 || local <= 0)
			return false;
		/* Distance 10 is local DRAM, like the kernel's adistance 576. */
		key[i] = ((uint64_t)TIER_ADISTANCE_DRAM * (uint64_t)d / 10) >>
			 TIER_ADISTANCE_CHUNK_BITS;
	}
	return true;
}

int tier_topology_rank(struct tier_topology *topo,
		       const struct tier_tier_override *override,
		       size_t nr_override, struct tier_err *err)
{
	uint64_t *key;
	enum tier_rank_source src;
	int ret;

	release_tiers(topo);
	if (!topo->nr_nodes)
		return tier_err_set(err, -EINVAL, "topology has no node");
	key = calloc(topo->nr_nodes, sizeof(*key));
	if (!key)
		return tier_err_set(err, -ENOMEM, "out of memory");
	if (nr_override) {
		ret = rank_override(topo, override, nr_override, key, err);
		if (ret)
			goto out_free;
		src = TIER_RANK_CONFIG;
	} else if (keys_from_kernel(topo, key)) {
		src = TIER_RANK_KERNEL;
	} else if (keys_from_hmat(topo, key)) {
		src = TIER_RANK_HMAT;
	} else if (keys_from_slit(topo, key)) {
		src = TIER_RANK_SLIT;
	} else {
		/* No figure at all: every node with memory is one tier. */
		memset(key, 0, topo->nr_nodes * sizeof(*key));
		src = TIER_RANK_NONE;
	}
	ret = group_by_key(topo, key);
	if (ret) {
		release_tiers(topo);
		tier_err_set(err, ret, "out of memory");
		goto out_free;
	}
	if (!topo->nr_tiers) {
		ret = tier_err_set(err, -EINVAL, "no node has memory");
		goto out_free;
	}
	topo->rank_source = src;
out_free:
	free(key);
	return ret;
}

/* Holds the spec's pinned and drained nodes out of the ranking. */
static int hold_nodes(struct tier_topology *topo, const struct tier_topology_spec *spec,
		      struct tier_err *err)
{
	size_t k;

	for (k = 0; k < spec->nr_pins + spec->nr_drained; k++) {
		int id = k < spec->nr_pins ? spec->pins[k].node : spec->drained[k - spec->nr_pins];
		struct tier_node *n = tier_topology_node(topo, id);

		if (!n)
			return tier_err_set(err, -ENOENT, "node %d does not exist", id);
		if (!n->has_memory && k < spec->nr_pins)
			return tier_err_set(err, -EINVAL, "node %d has no memory to put in a tier", id);
		n->held = true;
	}
	return 0;
}

/* Puts the pinned nodes into their tiers; the drained ones stay out. */
static int place_pins(struct tier_topology *topo, const struct tier_topology_spec *spec,
		      struct tier_err *err)
{
	uint64_t *key;
	size_t i, k, nr_tiers = topo->nr_tiers;
	int ret;

	key = calloc(topo->nr_nodes, sizeof(*key));
	if (!key)
		return tier_err_set(err, -ENOMEM, "out of memory");
	/* Two keys a rank: a pinned node shares its rank's key. */
	for (i = 0; i < topo->nr_nodes; i++)
		key[i] = (uint64_t)(topo->nodes[i].rank < 0 ? 0 : topo->nodes[i].rank) * 2 + 1;
	for (k = 0; k < spec->nr_pins; k++) {
		long ni = node_index(topo, spec->pins[k].node);
		bool drained = false;

		for (i = 0; i < spec->nr_drained; i++)
			drained |= spec->drained[i] == spec->pins[k].node;
		if (spec->pins[k].rank < 0) {
			free(key);
			return tier_err_set(err, -EINVAL, "node %d: no tier %d", spec->pins[k].node,
					    spec->pins[k].rank);
		}
		if (drained)
			continue;
		topo->nodes[ni].held = false;
		/* Past the tiers (another node was drained since): the slowest. */
		key[ni] = (uint64_t)((size_t)spec->pins[k].rank > nr_tiers ? nr_tiers :
				     (size_t)spec->pins[k].rank) * 2 + 1;
	}
	release_tiers(topo);
	ret = group_by_key(topo, key);
	free(key);
	if (ret) {
		release_tiers(topo);
		return tier_err_set(err, ret, "out of memory");
	}
	if (!topo->nr_tiers)
		return tier_err_set(err, -EINVAL, "no node with memory is left in a tier");
	return 0;
}

/* Reads, validates and ranks, as tier_topology_discover() does, with the
 * run-time pins and drains of spec (NULL: none). */
static int discover(const struct tier_topology_ops *ops, void *priv,
		    const struct tier_tier_override *override, size_t nr_override,
		    const struct tier_topology_spec *spec, struct tier_topology *topo,
		    struct tier_err *err)
{
	bool runtime = spec && (spec->nr_pins || spec->nr_drained);
	int ret;

	tier_topology_init(topo);
	ret = ops->read(priv, topo, err);
	if (ret)
		goto out_release;
	ret = tier_topology_validate(topo, err);
	if (ret) {
		tier_err_prefix(err, "%s", ops->name);
		goto out_release;
	}
	if (runtime) {
		ret = hold_nodes(topo, spec, err);
		if (ret)
			goto out_release;
	}
	ret = tier_topology_rank(topo, override, nr_override, err);
	if (ret) {
		if (nr_override)
			tier_err_prefix(err, "tier override");
		goto out_release;
	}
	if (runtime) {
		ret = place_pins(topo, spec, err);
		if (ret)
			goto out_release;
	}
	if (topo->nr_tiers > TIER_MAX_TIERS) {
		ret = tier_err_set(err, -E2BIG, "%s: %zu tiers, at most %d (merge some with "
				   "topology.tiers)", ops->name, topo->nr_tiers, TIER_MAX_TIERS);
		goto out_release;
	}
	return 0;
out_release:
	tier_topology_release(topo);
	return ret;
}

int tier_topology_discover(const struct tier_topology_ops *ops, void *priv,
			   const struct tier_tier_override *override,
			   size_t nr_override, struct tier_topology *topo,
			   struct tier_err *err)
{
	return discover(ops, priv, override, nr_override, NULL, topo, err);
}

int tier_topology_build(const struct tier_topology_ops *ops, void *priv,
			const struct tier_topology_spec *spec, struct tier_topology *topo,
			struct tier_err *err)
{
	int ret = discover(ops, priv, spec ? spec->tiers : NULL, spec ? spec->nr_tiers : 0, spec,
			   topo, err);

	if (!ret && spec && spec->measured)
		topo->rank_source = TIER_RANK_MEASURED;
	return ret;
}
