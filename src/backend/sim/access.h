/* access.h - one memory access of a simulated workload.
 *
 * Workload generators and trace readers produce accesses in batches (arrays)
 * so the engine's inner loop stays tight. Pages are dense ids in
 * [0, footprint_pages) of one simulated address space; a tenant id tells
 * processes apart in multi-tenant workloads.
 */
#ifndef TIER_SIM_ACCESS_H
#define TIER_SIM_ACCESS_H

#include <stdint.h>

struct tier_sim_access {
	uint64_t page;		/* dense page id, 4 KiB pages */
	uint8_t write;		/* 1 = store (or read-modify-write), 0 = load */
	uint8_t tenant;		/* process id within the workload, 0-based */
};

#endif
