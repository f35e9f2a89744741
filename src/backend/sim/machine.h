/* machine.h - the simulated tiered machine: presets and its topology source.
 *
 * A machine is a list of memory tiers, one NUMA node each, described by
 * latency, read/write bandwidth and capacity. Node 0 of a preset carries the
 * CPUs (the DRAM next to them); other nodes are CPU-less, as CXL expanders,
 * persistent memory and HBM in flat mode appear on Linux. The topology
 * source publishes the figures as HMAT would, so the core ranks simulated
 * and real machines with the same code.
 */
#ifndef TIER_SIM_MACHINE_H
#define TIER_SIM_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/ops.h"

struct tier_sim_node_spec {
	const char *kind;		/* "dram", "cxl", "hbm", ... */
	uint32_t latency_ns;		/* idle load-to-use latency */
	uint32_t read_bw_mbps;
	uint32_t write_bw_mbps;
	unsigned ratio;			/* capacity share, e.g. 1 of 1:4 */
	int nr_cpus;			/* CPUs on this node */
	uint64_t size_mb;		/* fixed capacity in MiB; 0: by ratio */
};

enum { TIER_SIM_MAX_NODES = 8 };

struct tier_sim_preset {
	const char *name;
	const char *description;
	size_t nr_nodes;
	struct tier_sim_node_spec nodes[TIER_SIM_MAX_NODES];
	/* How many times slower than the cost model's CPU this machine's
	 * CPU runs the tiering work: every modelled CPU cost (faults, scans,
	 * moves, kswapd, daemons' and policies' work) is multiplied by it.
	 * Measured, not tuned (docs/tiersim.md, "Machine files"); 0: 1, the
	 * cost model's own machine, as every built-in preset. */
	double cpu_slowdown;
};

/* A machine built from a preset and a capacity ratio. */
struct tier_sim_machine {
	const struct tier_sim_preset *preset;
	size_t nr_nodes;
	struct tier_sim_node_spec nodes[TIER_SIM_MAX_NODES];
	uint64_t node_bytes[TIER_SIM_MAX_NODES];
	double cpu_slowdown;		/* the preset's, 1 when it gives none */
};

/* Capacity of one ratio unit when none is given: 1 GiB. */
#define TIER_SIM_UNIT_BYTES_DEFAULT (UINT64_C(1) << 30)

/* The presets, terminated by an entry with name == NULL. */
extern const struct tier_sim_preset tier_sim_presets[];

const struct tier_sim_preset *tier_sim_preset_find(const char *name);

/* The CPUs of a machine: the sum of its nodes' nr_cpus. */
unsigned tier_sim_preset_cores(const struct tier_sim_preset *p);

/* The preset's cpu_slowdown: 1 when it gives none (0). */
double tier_sim_preset_cpu_slowdown(const struct tier_sim_preset *p);

/* Builds machine m from preset `name`. ratio is NULL (the preset's own) or
 * "A:B[:C...]" with one positive integer per node, fastest first as the
 * preset lists them; unit_bytes is the capacity of one ratio unit.
 * Returns 0, -ENOENT (unknown preset) or -EINVAL (bad ratio), err says why. */
int tier_sim_machine_init(struct tier_sim_machine *m, const char *name,
			  const char *ratio, uint64_t unit_bytes,
			  struct tier_err *err);

/* Same from a preset the caller holds (a machine file's, see
 * src/tiersim/machine_file.h); m->preset points to it. A node with size_mb
 * has that capacity unless ratio is given. */
int tier_sim_machine_from_preset(struct tier_sim_machine *m,
				 const struct tier_sim_preset *p, const char *ratio,
				 uint64_t unit_bytes, struct tier_err *err);

/* Sizes m's ratio units from a workload that has a size of its own (a
 * trace) rather than one it takes from the machine: the tiers together
 * hold footprint_bytes with a quarter to spare, as the synthetic
 * workloads' footprint is 80% of the machine (workload.c), and each unit
 * is a whole number of pages of page_bytes (at least one). At 1:8 a
 * 41-page footprint gives units of 6 pages: 6 + 48 pages. A machine whose
 * nodes have fixed sizes (size_mb, no --ratio) keeps them. */
void tier_sim_machine_fit(struct tier_sim_machine *m, uint64_t footprint_bytes,
			  uint64_t page_bytes);

/* Topology source over a simulated machine; priv is a
 * const struct tier_sim_machine *. */
extern const struct tier_topology_ops tier_sim_topology_ops;

#endif
