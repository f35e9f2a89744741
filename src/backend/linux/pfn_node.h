/* pfn_node.h - the node a physical page frame belongs to.
 *
 * sysfs lists each node's memory blocks (<sysfs>/devices/system/node/nodeN/
 * memoryM, block M holding frames [M * B, (M + 1) * B) where B is
 * <sysfs>/devices/system/memory/block_size_bytes over the page size). With
 * the frame numbers /proc/PID/pagemap gives a privileged reader, where a
 * process's pages are comes from one read of its page tables instead of
 * move_pages(2) asked page by page (Documentation/admin-guide/mm/
 * memory-hotplug.rst, pagemap.rst).
 *
 * A frame in no listed block (device memory, a block onlined since the
 * table was read) has no node here: the caller asks the kernel for it and
 * reloads the table at most once in a while.
 */
#ifndef TIER_LINUX_PFN_NODE_H
#define TIER_LINUX_PFN_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct tier_linux_pfn_nodes {
	uint64_t block_frames;	/* page frames per memory block; 0: not loaded */
	uint8_t *node;		/* [nr_blocks]: node, or 0xff (no node) */
	size_t nr_blocks;
};

/* Reads the memory blocks of every node under sysfs_root, page_size bytes
 * a frame. Replaces t's table only on success. Returns 0, or -ENOENT
 * (no memory blocks listed: the kernel has no memory hotplug sysfs),
 * -EINVAL (block_size_bytes malformed or not a multiple of page_size),
 * -ENOMEM, with err naming the file. */
int tier_linux_pfn_nodes_load(struct tier_linux_pfn_nodes *t, const char *sysfs_root,
			      uint64_t page_size, struct tier_err *err);

/* The node of frame pfn, or -1 when no loaded block holds it. */
static inline int tier_linux_pfn_node(const struct tier_linux_pfn_nodes *t, uint64_t pfn)
{
	uint64_t b;

	if (!t->block_frames)
		return -1;
	b = pfn / t->block_frames;
	return b < t->nr_blocks && t->node[b] != 0xff ? t->node[b] : -1;
}

void tier_linux_pfn_nodes_free(struct tier_linux_pfn_nodes *t);

#endif
