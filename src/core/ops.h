/* ops.h - what the core asks of a backend.
 *
 * The core never touches the OS. A backend (src/backend/linux: sysfs,
 * procfs, DAMON, move_pages; src/backend/sim: the simulated machine) hands
 * the core small ops tables, after DAMON's struct damon_operations: a name
 * plus documented hooks. Each table travels with an opaque `priv` pointer
 * that the backend owns.
 */
#ifndef TIER_CORE_OPS_H
#define TIER_CORE_OPS_H

#include <stdint.h>

#include "core/err.h"
#include "core/topology.h"

/* Topology source: describes the machine's memory nodes. */
struct tier_topology_ops {
	const char *name;
	/* Required. Fills topo's nodes (ids, CPUs, memory, distances, HMAT,
	 * kernel tier), not its tiers; topo arrives initialised and empty.
	 * Returns 0 or -errno with err saying what and where (a path, a
	 * preset name). */
	int (*read)(void *priv, struct tier_topology *topo, struct tier_err *err);
};

/* Clock: monotonic time, so the simulator can run on virtual time. */
struct tier_clock_ops {
	const char *name;
	/* Required. Monotonic microseconds since an arbitrary origin. */
	uint64_t (*now_us)(void *priv);
};

/* Reads the topology through ops, validates it and ranks it into tiers
 * (override as in tier_topology_rank(); NULL/0 for none). On failure topo
 * is left empty. Returns 0 or -errno with err set. */
int tier_topology_discover(const struct tier_topology_ops *ops, void *priv,
			   const struct tier_tier_override *override,
			   size_t nr_override, struct tier_topology *topo,
			   struct tier_err *err);

/* tier_topology_discover() with the ranking spec asks for (NULL: none),
 * and rank_source set to say where the order came from. The one way
 * every front end and world turns a configuration into tiers. */
int tier_topology_build(const struct tier_topology_ops *ops, void *priv,
			const struct tier_topology_spec *spec, struct tier_topology *topo,
			struct tier_err *err);

#endif
