/* topology.h - the Linux topology source: NUMA nodes and memory tiers from
 * sysfs under a root directory.
 *
 * Reads, relative to the root (normally "/sys"):
 *   devices/system/node/{online,has_cpu,has_memory}
 *   devices/system/node/nodeN/{cpulist,distance,meminfo}
 *   devices/system/node/nodeN/access{1,0}/initiators/{read,write}_{latency,bandwidth}
 *       (HMAT; access1 = CPU initiators preferred, access0 otherwise)
 *   devices/virtual/memory_tiering/memory_tierN/nodelist   (kernel >= 6.1)
 * Missing HMAT and a missing memory_tiering directory are normal (old
 * kernels, firmware without HMAT); anything malformed is an error naming the
 * file.
 */
#ifndef TIER_LINUX_TOPOLOGY_H
#define TIER_LINUX_TOPOLOGY_H

#include <stdint.h>

#include "core/err.h"
#include "core/ops.h"

struct tier_linux_topology {
	const char *sysfs_root;		/* borrowed; "/sys" on a live system */
};

/* The ops; priv is a struct tier_linux_topology *. */
extern const struct tier_topology_ops tier_linux_topology_ops;

/* MemTotal and MemFree of node, in bytes, from
 * <sysfs_root>/devices/system/node/nodeN/meminfo ("Node N Key: V kB"
 * lines), read afresh at each call: the one reader of that file, for the
 * topology and for the node memory ops (space.h). Returns 0 or -errno with
 * err (may be NULL) naming the file (and line): -ENOENT no such node (or
 * node < 0), -EINVAL a line of another form or for another node, or no
 * MemTotal or MemFree line. */
int tier_linux_node_meminfo(const char *sysfs_root, int node, uint64_t *total_bytes,
			    uint64_t *free_bytes, struct tier_err *err);

#endif
