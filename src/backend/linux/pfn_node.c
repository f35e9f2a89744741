/* pfn_node.c - the node of a page frame, from the memory blocks sysfs
 * lists under each node. Contract in pfn_node.h. */
#include "backend/linux/pfn_node.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/sysfs.h"

/* A name "PREFIX<decimal>" (no sign, no trailing bytes) into *out. */
static bool numbered(const char *name, const char *prefix, unsigned long *out)
{
	size_t len = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, len) || name[len] < '0' || name[len] > '9')
		return false;
	errno = 0;
	*out = strtoul(name + len, &end, 10);
	return !errno && !*end;
}

/* Adds node's blocks to *tab (grown as needed, new entries 0xff). */
static int add_node(const char *dir, unsigned long node, uint8_t **tab, size_t *nr,
		    struct tier_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned long b;

	if (!d)
		return errno == ENOENT ? 0 : tier_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!numbered(de->d_name, "memory", &b))
			continue;
		if (b >= *nr) {
			size_t want = b + 1 > 2 * *nr ? b + 1 : 2 * *nr;
			uint8_t *grown = realloc(*tab, want);

			if (!grown) {
				closedir(d);
				return tier_err_set(err, -ENOMEM, "memory blocks: out of memory");
			}
			memset(grown + *nr, 0xff, want - *nr);
			*tab = grown;
			*nr = want;
		}
		(*tab)[b] = (uint8_t)node;
	}
	closedir(d);
	return 0;
}

int tier_linux_pfn_nodes_load(struct tier_linux_pfn_nodes *t, const char *sysfs_root,
			      uint64_t page_size, struct tier_err *err)
{
	char path[1024], buf[64], *end;
	unsigned long long block;
	struct dirent *de;
	uint8_t *tab = NULL;
	size_t nr = 0, i;
	bool any = false;
	unsigned long node;
	long n;
	DIR *d;
	int ret = 0;

	if (tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/memory/block_size_bytes"))
		return tier_err_set(err, -ENAMETOOLONG, "sysfs root too long");
	n = tier_sysfs_read(path, buf, sizeof(buf), err);
	if (n < 0)
		return (int)n;
	errno = 0;
	block = strtoull(buf, &end, 16);	/* hexadecimal, no 0x */
	if (errno || end == buf || (*end && *end != '\n') || !block || !page_size ||
	    block % page_size)
		return tier_err_set(err, -EINVAL, "%s: expected a block size in hexadecimal, "
				    "a multiple of %llu bytes, found '%.20s'", path,
				    (unsigned long long)page_size, buf);
	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/node");
	d = opendir(path);
	if (!d)
		return tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(d)) && !ret) {
		char dir[1100];

		if (!numbered(de->d_name, "node", &node) || node >= 0xff)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", path, de->d_name);
		ret = add_node(dir, node, &tab, &nr, err);
	}
	closedir(d);
	for (i = 0; i < nr && !any; i++)
		any = tab[i] != 0xff;
	if (!ret && !any)
		ret = tier_err_set(err, -ENOENT, "%s: no node lists a memory block", path);
	if (ret) {
		free(tab);
		return ret;
	}
	free(t->node);
	t->node = tab;
	t->nr_blocks = nr;
	t->block_frames = block / page_size;
	return 0;
}

void tier_linux_pfn_nodes_free(struct tier_linux_pfn_nodes *t)
{
	free(t->node);
	memset(t, 0, sizeof(*t));
}
