/* linux_mm.h - what Linux's memory management computes for the managed
 * nodes, for the peer policies that re-implement kernel mechanisms
 * (kernel-nb, damon): zone watermarks, the CPU node, demotion targets.
 *
 * Each node is modelled as one ZONE_NORMAL zone holding all its pages
 * (no DMA32/MOVABLE split, no lowmem_reserve, no watermark boosting).
 */
#ifndef TIER_CORE_POLICIES_LINUX_MM_H
#define TIER_CORE_POLICIES_LINUX_MM_H

#include <stdint.h>

#include "core/policy.h"

/* vm.watermark_scale_factor default (Documentation/admin-guide/sysctl/vm.rst):
 * 10 = 0.1% of the zone between watermarks. */
#define TIER_LMM_WATERMARK_SCALE_FACTOR 10

/* Watermarks of one node, in pages. */
struct tier__lmm_wmarks {
	uint64_t min, low, high, promo;
};

/* Fills wm[id] for every node id of env's topology (others zeroed), as
 * mm/page_alloc.c does at boot:
 *   calculate_min_free_kbytes(): min_free_kbytes =
 *       clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144)
 *   __setup_per_zone_wmarks(): a zone's min = its share of min_free_kbytes
 *       (managed / lowmem pages); tmp = max(min / 4, managed * wsf / 10000);
 *       low = min + tmp; high = low + tmp; promo = high + tmp.
 * lowmem_kbytes counts every node's pages (nr_free_buffer_pages() counts
 * all non-highmem zones; CXL memory onlined as ZONE_MOVABLE would not
 * count, which we do not model). wsf is vm.watermark_scale_factor.
 * Returns 0 or -errno from env->mem. */
int tier__lmm_wmarks_init(const struct tier_env *env, unsigned wsf,
			  struct tier__lmm_wmarks wm[TIER_MAX_NODES]);

/* The node whose CPUs run the workload: the first node with CPUs in rank
 * order (numa_node_id() of the faulting task), else a node of tier 0. */
int tier__lmm_cpu_node(const struct tier_env *env);

/* The preferred demotion target of node (mm/memory-tiers.c
 * establish_demotion_targets()): the nearest node (SLIT distance, then
 * lowest id) of the next slower tier; -1 on the slowest tier. */
int tier__lmm_demotion_target(const struct tier_env *env, int node);

/* lib/math/int_sqrt.c: floor(sqrt(x)). */
uint64_t tier__lmm_int_sqrt(uint64_t x);

/* Free and total pages of node through env->mem (0/0 on error). */
void tier__lmm_node_pages(const struct tier_env *env, int node, uint64_t *total,
			  uint64_t *free);

#endif
