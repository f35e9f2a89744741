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

#include "core/ops.h"

struct tier_linux_topology {
	const char *sysfs_root;		/* borrowed; "/sys" on a live system */
};

/* The ops; priv is a struct tier_linux_topology *. */
extern const struct tier_topology_ops tier_linux_topology_ops;

#endif
