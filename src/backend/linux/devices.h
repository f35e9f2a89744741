/* devices.h - memory devices that can become tiered nodes, through the
 * ecosystem's libraries: device-DAX devices (libdaxctl: devdax or
 * system-ram through the dax kmem driver) and CXL memory devices and
 * regions (libcxl). Onlining a device-DAX device as system RAM in the
 * movable zone, offlining a node's memory blocks and returning the device
 * to devdax. Used by tierctl (device list/online, node drain --offline)
 * and by tierd (devices the configuration onlines at start).
 *
 * Every call needs root for its writes; reads work for anyone. libdaxctl
 * and libcxl read /sys themselves; the memory-block figures are read under
 * sysfs_root (as the rest of the backend).
 */
#ifndef TIER_LINUX_DEVICES_H
#define TIER_LINUX_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* A device-DAX device. */
struct tier_dax_dev {
	char name[32];			/* "dax0.0" */
	int region_id;			/* its dax region */
	char mode[16];			/* "devdax", "system-ram" or "disabled" */
	int target_node;		/* the node its memory becomes; -1 unknown */
	uint64_t size_bytes;
	uint64_t resource;		/* physical start */
	/* system-ram only: */
	uint64_t block_bytes;		/* memory block size */
	int blocks, online_blocks;
	bool movable;			/* its online blocks are in ZONE_MOVABLE */
};

/* A CXL memory device (a type-3 expander). */
struct tier_cxl_memdev {
	char name[32];			/* "mem0" */
	char host[64];			/* its PCI device */
	uint64_t ram_bytes, pmem_bytes;
	int numa_node;			/* of the device itself, -1 */
	uint64_t serial;
	char firmware[64];
};

/* A CXL region (memory interleaved over memdevs, in a root decoder). */
struct tier_cxl_region {
	char name[32];			/* "region0" */
	char decoder[32];		/* the root decoder that holds it */
	char mode[8];			/* "ram", "pmem", "none" */
	uint64_t size_bytes, resource;
	bool enabled;
};

struct tier_devices {
	struct tier_dax_dev *dax;
	size_t nr_dax;
	struct tier_cxl_memdev *memdevs;
	size_t nr_memdevs;
	struct tier_cxl_region *regions;
	size_t nr_regions;
	/* Why there are no CXL figures (libcxl found no CXL bus), or "". */
	char cxl_note[128];
};

/* Reads the devices. Returns 0 or -errno with err set; release either way. */
int tier_linux_devices_read(struct tier_devices *d, struct tier_err *err);
void tier_linux_devices_release(struct tier_devices *d);

/* Makes devdax device `name` system RAM on its target node, every memory
 * block online in the movable zone (so it can be taken out again), and
 * puts *node to that node. Checks first and changes nothing on error:
 * -ENOENT no such device; -EALREADY already system RAM; -EBUSY a process
 * has it open or mapped (err names one); -EINVAL not a devdax device. The
 * kernel's auto-online policy (memory/auto_online_blocks) is set to
 * offline for the duration and put back. */
int tier_linux_dax_online(const char *sysfs_root, const char *name, int *node,
			  struct tier_err *err);

/* Whether node's memory can all be moved off it: the node exists, has no
 * CPUs, and every online memory block of it is in ZONE_MOVABLE. Returns 0
 * or -ENOENT / -EINVAL with err saying which blocks hold what. */
int tier_linux_node_movable(const char *sysfs_root, int node, struct tier_err *err);

/* Offlines every memory block of node (the kernel migrates what is still
 * there); when the node's memory is a device-DAX device's, the device goes
 * back to devdax and its name is put in dev (else dev is ""). Returns 0 or
 * -errno with err naming the blocks that stayed online and why. */
int tier_linux_node_offline(const char *sysfs_root, int node, char *dev, size_t dev_len,
			    struct tier_err *err);

/* The memory blocks of node and how many are online; -errno. */
int tier_linux_node_blocks(const char *sysfs_root, int node, int *blocks, int *online);

#endif
