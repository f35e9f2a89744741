/* topology.h - the memory topology model: nodes grouped into ordered tiers.
 *
 * A topology source (a backend: Linux sysfs, or a simulated machine) fills
 * the nodes; tier_topology_rank() then groups the nodes that have memory into
 * tiers ordered from fastest (rank 0) to slowest. The model keeps every
 * figure the firmware and kernel offer (SLIT distances, HMAT access
 * attributes, the kernel's memory tier) so that the front ends can show them
 * and the policy can weigh them.
 *
 * Ownership: a struct tier_topology is caller-owned storage
 * (tier_topology_init / tier_topology_release); it owns its arrays.
 */
#ifndef TIER_CORE_TOPOLOGY_H
#define TIER_CORE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Access performance of a memory node as seen from its best initiator.
 * 0 means "not published". */
struct tier_perf {
	uint32_t read_latency_ns;
	uint32_t write_latency_ns;
	uint32_t read_bw_mbps;		/* MB/s, as HMAT and sysfs count */
	uint32_t write_bw_mbps;
};

struct tier_node {
	int id;
	int *cpus;			/* sorted CPU ids; NULL when CPU-less */
	size_t nr_cpus;
	bool has_memory;
	uint64_t mem_total_bytes;
	uint64_t mem_free_bytes;
	/* SLIT row: distance[i] is the distance to topology->nodes[i]
	 * (same order as the nodes array); NULL when unknown. */
	int *distance;
	bool has_hmat;
	struct tier_perf hmat;
	int kernel_tier;		/* memory_tierN id, -1 when none */
	int rank;			/* tier rank, -1 when in no tier */
	/* Held out of the ranking by a spec (pinned to a rank, or being
	 * drained: then in no tier); see struct tier_topology_spec. */
	bool held;
};

struct tier_tier {
	int rank;			/* 0 = fastest */
	int *nodes;			/* node ids, sorted */
	size_t nr_nodes;
};

/* Where the tier order came from, best first. */
enum tier_rank_source {
	TIER_RANK_NONE = 0,		/* not ranked yet */
	TIER_RANK_CONFIG,		/* operator override */
	TIER_RANK_KERNEL,		/* /sys/devices/virtual/memory_tiering */
	TIER_RANK_HMAT,			/* firmware access attributes */
	TIER_RANK_SLIT,			/* firmware distances from CPU nodes */
	TIER_RANK_MEASURED,		/* the figures tierctl probe measured */
};

/* Node ids are below TIER_MAX_NODES (a page's node is kept in a byte,
 * 0xff meaning absent: core/policy.h's TIER_NODE_NONE). A machine ranks
 * into at most TIER_MAX_TIERS tiers; discovery refuses more. */
#define TIER_MAX_NODES 256
#define TIER_MAX_TIERS 8

struct tier_topology {
	struct tier_node *nodes;	/* sorted by id */
	size_t nr_nodes;
	struct tier_tier *tiers;	/* by rank */
	size_t nr_tiers;
	enum tier_rank_source rank_source;
};

/* An operator's tier list: tiers[r] holds the node ids of rank r. */
struct tier_tier_override {
	const int *nodes;
	size_t nr_nodes;
};

void tier_topology_init(struct tier_topology *topo);
void tier_topology_release(struct tier_topology *topo);

/* Allocates nr zeroed nodes (kernel_tier and rank -1). Any previous nodes
 * and tiers are released. Returns 0 or -ENOMEM. */
int tier_topology_alloc_nodes(struct tier_topology *topo, size_t nr);

/* Copies cpus (sorted ids) into node. Returns 0 or -ENOMEM. */
int tier_node_set_cpus(struct tier_node *node, const int *cpus, size_t nr);

/* Copies a distance row of topo->nr_nodes entries. Returns 0 or -ENOMEM. */
int tier_node_set_distance(struct tier_topology *topo, struct tier_node *node,
			   const int *row);

/* The node with that id, or NULL. */
struct tier_node *tier_topology_node(const struct tier_topology *topo, int id);

/* SLIT distance between two node ids; -1 when unknown. */
int tier_topology_distance(const struct tier_topology *topo, int from, int to);

/* Checks what a source produced: node ids unique and sorted, distance rows
 * with a local distance of 10 (the ACPI SLIT convention) or at least no
 * larger than any remote one, free <= total. Returns 0 or -EINVAL with err
 * naming the node. */
int tier_topology_validate(const struct tier_topology *topo, struct tier_err *err);

/* Groups the nodes with memory into ranked tiers, filling topo->tiers,
 * each node's rank and topo->rank_source.
 *
 * Order of precedence:
 *  1. override (nr_override > 0): the operator's list, fastest first. Every
 *     node with memory must appear exactly once; listing an unknown node or a
 *     node without memory is an error.
 *  2. the kernel's memory tiers, when every node with memory has one
 *     (kernel_tier >= 0); smaller memory_tier ids are faster.
 *  3. HMAT, when every node with memory publishes a read latency and read
 *     bandwidth: the kernel's own abstract-distance formula (see
 *     tier_abstract_distance()) chunked as the kernel chunks it.
 *  4. SLIT: each node's distance from its nearest CPU node, scaled to an
 *     abstract distance and chunked the same way.
 * Returns 0, -EINVAL (bad override; err says which node) or -ENOMEM. */
int tier_topology_rank(struct tier_topology *topo,
		       const struct tier_tier_override *override,
		       size_t nr_override, struct tier_err *err);

/* The kernel's abstract distance of a node with performance perf relative
 * to DRAM performance ref (mm/memory-tiers.c mt_perf_to_adistance()):
 *   576 * (rlat + wlat) / (ref_rlat + ref_wlat)
 *       * (ref_rbw + ref_wbw) / (rbw + wbw)
 * A missing write figure is taken equal to the read one. DRAM itself is 576,
 * the kernel's memory_tier4; tiers are 128 wide (adistance >> 7). */
uint64_t tier_abstract_distance(const struct tier_perf *perf,
				const struct tier_perf *ref);

/* Adistance chunk width and the DRAM value, as in the kernel. */
enum {
	TIER_ADISTANCE_DRAM = 576,
	TIER_ADISTANCE_CHUNK_BITS = 7,
};

const char *tier_rank_source_name(enum tier_rank_source src);

/* How to rank a machine's nodes into tiers, as a configuration asks: an
 * override (the operator's tier list, or the order a probe measured), or
 * none (nr_tiers 0: the kernel's memory tiers, else HMAT, else SLIT).
 * measured: the override is the probe's, which rank_source then says. */
struct tier_topology_spec {
	const struct tier_tier_override *tiers;
	size_t nr_tiers;
	bool measured;
	/* Run-time placements, applied after the ranking above: each pinned
	 * node joins the tier of its rank (rank = the number of tiers, or
	 * more, makes it a new slowest tier); a node the operator's tier list leaves out
	 * may be pinned. Each drained node is in no tier (rank -1): no policy
	 * places pages there. A node both pinned and drained is drained. */
	const struct tier_node_pin *pins;
	size_t nr_pins;
	const int *drained;
	size_t nr_drained;
};

/* A node put in a tier at run time (a memory device onlined into it). */
struct tier_node_pin {
	int node;
	int rank;
};

/* The tier rank of node id, or -1. */
int tier_topology_node_rank(const struct tier_topology *topo, int id);

#endif
