/* vmstat.c - the kernel's page-churn counters (contract in vmstat.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/vmstat.h"

int tier_linux_churn_read(const char *procfs_root, struct tier_linux_churn *c)
{
	char path[512], name[64];
	unsigned long long v;
	bool migrated = false;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (tier_sysfs_path(path, sizeof(path), procfs_root, "vmstat"))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, "pgmigrate_success")) {
			c->migrated = v;
			migrated = true;
		} else if (!strcmp(name, "pswpin")) {
			c->swapped_in = v;
		} else if (!strcmp(name, "thp_collapse_alloc")) {
			c->collapsed = v;
		}
	}
	fclose(f);
	return migrated ? 0 : -ENODATA;
}

bool tier_linux_churn_foreign(const struct tier_linux_churn *a, const struct tier_linux_churn *b,
			      uint64_t own_moved)
{
	if (b->migrated < a->migrated || b->swapped_in < a->swapped_in ||
	    b->collapsed < a->collapsed)
		return true;
	return b->migrated - a->migrated > own_moved || b->swapped_in != a->swapped_in ||
	       b->collapsed != a->collapsed;
}
