/* node_mem.h - a NUMA node's free memory, for the guest test programs
 * (memhog, intent_check). Header-only. */
#ifndef TIER_TEST_NODE_MEM_H
#define TIER_TEST_NODE_MEM_H

#include <stdio.h>

/* MiB free on node, from its sysfs meminfo; 0 when unreadable. */
static inline unsigned long node_free_mib(int node)
{
	char path[96], line[256];
	unsigned long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int n;

		if (sscanf(line, "Node %d MemFree: %lu", &n, &kb) == 2)
			break;
	}
	fclose(f);
	return kb / 1024;
}

#endif
