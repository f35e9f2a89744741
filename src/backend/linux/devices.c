/* devices.c - memory devices as tiered nodes (devices.h): device-DAX
 * through libdaxctl, CXL through libcxl, the memory blocks of a node from
 * sysfs (libdaxctl counts a device's blocks but does not list them). */
#include "backend/linux/devices.h"

#include <cxl/libcxl.h>
#include <daxctl/libdaxctl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"

/* --- reading ---------------------------------------------------------------- */

static void dax_fill(struct daxctl_dev *dev, struct tier_dax_dev *out)
{
	struct daxctl_memory *mem = daxctl_dev_get_memory(dev);

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", daxctl_dev_get_devname(dev));
	out->region_id = daxctl_region_get_id(daxctl_dev_get_region(dev));
	out->target_node = daxctl_dev_get_target_node(dev);
	out->size_bytes = daxctl_dev_get_size(dev);
	out->resource = daxctl_dev_get_resource(dev);
	if (!daxctl_dev_is_enabled(dev)) {
		snprintf(out->mode, sizeof(out->mode), "disabled");
	} else if (mem) {
		int online = daxctl_memory_is_online(mem);

		snprintf(out->mode, sizeof(out->mode), "system-ram");
		out->block_bytes = daxctl_memory_get_block_size(mem);
		out->blocks = daxctl_memory_num_sections(mem);
		out->online_blocks = online > 0 ? online : 0;
		out->movable = daxctl_memory_is_movable(mem) > 0;
	} else {
		snprintf(out->mode, sizeof(out->mode), "devdax");
	}
}

static int read_dax(struct tier_devices *d, struct tier_err *err)
{
	struct daxctl_ctx *ctx;
	struct daxctl_region *region;
	struct daxctl_dev *dev;
	int ret = daxctl_new(&ctx);

	if (ret)
		return tier_err_set(err, ret < 0 ? ret : -ENOMEM, "libdaxctl: %s", strerror(-ret));
	daxctl_region_foreach(ctx, region) {
		daxctl_dev_foreach(region, dev) {
			struct tier_dax_dev *n;

			if (!daxctl_dev_get_size(dev))
				continue;	/* a seed without capacity */
			n = realloc(d->dax, (d->nr_dax + 1) * sizeof(*n));
			if (!n) {
				daxctl_unref(ctx);
				return tier_err_set(err, -ENOMEM, "out of memory");
			}
			d->dax = n;
			dax_fill(dev, &d->dax[d->nr_dax++]);
		}
	}
	daxctl_unref(ctx);
	return 0;
}

static int read_cxl(struct tier_devices *d, struct tier_err *err)
{
	struct cxl_ctx *ctx;
	struct cxl_memdev *memdev;
	struct cxl_bus *bus;
	int ret = cxl_new(&ctx);

	if (ret)
		return tier_err_set(err, ret < 0 ? ret : -ENOMEM, "libcxl: %s", strerror(-ret));
	cxl_memdev_foreach(ctx, memdev) {
		struct tier_cxl_memdev *m = realloc(d->memdevs, (d->nr_memdevs + 1) * sizeof(*m));
		const char *s;

		if (!m)
			goto out_nomem;
		d->memdevs = m;
		m = &d->memdevs[d->nr_memdevs++];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", cxl_memdev_get_devname(memdev));
		s = cxl_memdev_get_host(memdev);
		snprintf(m->host, sizeof(m->host), "%s", s ? s : "");
		m->ram_bytes = cxl_memdev_get_ram_size(memdev);
		m->pmem_bytes = cxl_memdev_get_pmem_size(memdev);
		m->numa_node = cxl_memdev_get_numa_node(memdev);
		m->serial = cxl_memdev_get_serial(memdev);
		s = cxl_memdev_get_firmware_verison(memdev);
		snprintf(m->firmware, sizeof(m->firmware), "%s", s ? s : "");
	}
	cxl_bus_foreach(ctx, bus) {
		struct cxl_port *port = cxl_bus_get_port(bus);
		struct cxl_decoder *decoder;
		struct cxl_region *region;

		cxl_decoder_foreach(port, decoder) {
			cxl_region_foreach(decoder, region) {
				struct tier_cxl_region *r =
					realloc(d->regions, (d->nr_regions + 1) * sizeof(*r));

				if (!r)
					goto out_nomem;
				d->regions = r;
				r = &d->regions[d->nr_regions++];
				memset(r, 0, sizeof(*r));
				snprintf(r->name, sizeof(r->name), "%s", cxl_region_get_devname(region));
				snprintf(r->decoder, sizeof(r->decoder), "%s",
					 cxl_decoder_get_devname(decoder));
				snprintf(r->mode, sizeof(r->mode), "%s",
					 cxl_decoder_mode_name(cxl_decoder_get_mode(decoder)));
				r->size_bytes = cxl_region_get_size(region);
				r->resource = cxl_region_get_resource(region);
				r->enabled = cxl_region_is_enabled(region) > 0;
			}
		}
	}
	if (!cxl_bus_get_first(ctx))
		snprintf(d->cxl_note, sizeof(d->cxl_note), "no CXL bus (no CXL host bridge, or the cxl_acpi module is not loaded)");
	cxl_unref(ctx);
	return 0;
out_nomem:
	cxl_unref(ctx);
	return tier_err_set(err, -ENOMEM, "out of memory");
}

int tier_linux_devices_read(struct tier_devices *d, struct tier_err *err)
{
	int ret;

	memset(d, 0, sizeof(*d));
	ret = read_dax(d, err);
	if (!ret)
		ret = read_cxl(d, err);
	return ret;
}

void tier_linux_devices_release(struct tier_devices *d)
{
	free(d->dax);
	free(d->memdevs);
	free(d->regions);
	memset(d, 0, sizeof(*d));
}

/* --- onlining ----------------------------------------------------------------- */

/* A process that has /dev/NAME open or mapped: its pid and command into
 * who, and true. The way fuser(1) finds one: /proc/PID/fd and maps. */
static bool dev_in_use(const char *name, char *who, size_t len)
{
	char want[64], path[PATH_MAX], link[PATH_MAX], line[PATH_MAX + 128];
	DIR *proc = opendir("/proc");
	struct dirent *de;
	bool found = false;

	snprintf(want, sizeof(want), "/dev/%s", name);
	if (!proc)
		return false;
	while (!found && (de = readdir(proc))) {
		DIR *fds;
		struct dirent *fe;
		FILE *f;
		char comm[64] = "?";

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fds = opendir(path);
		while (fds && !found && (fe = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", de->d_name, fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0) {
				link[n] = '\0';
				found = !strcmp(link, want);
			}
		}
		if (fds)
			closedir(fds);
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		f = found ? NULL : fopen(path, "re");
		while (f && !found && fgets(line, sizeof(line), f)) {
			size_t l = strcspn(line, "\n");

			line[l] = '\0';
			found = l >= strlen(want) && !strcmp(line + l - strlen(want), want);
		}
		if (f)
			fclose(f);
		if (!found)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(who, len, "process %s (%s)", de->d_name, comm);
	}
	closedir(proc);
	return found;
}

static struct daxctl_dev *find_dax(struct daxctl_ctx *ctx, const char *name)
{
	struct daxctl_region *region;
	struct daxctl_dev *dev;

	daxctl_region_foreach(ctx, region)
		daxctl_dev_foreach(region, dev)
			if (!strcmp(daxctl_dev_get_devname(dev), name))
				return dev;
	return NULL;
}

/* Reads the kernel's auto-online policy into old and writes val. */
static int auto_online_set(const char *sysfs_root, const char *val, char *old, size_t len,
			   struct tier_err *err)
{
	char path[PATH_MAX];
	int fd, ret = 0;
	long n;

	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/memory/auto_online_blocks");
	if (old) {
		n = tier_sysfs_read(path, old, len, err);
		if (n < 0)
			return (int)n;
		old[strcspn(old, "\n")] = '\0';
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		ret = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret;
}

int tier_linux_dax_online(const char *sysfs_root, const char *name, int *node,
			  struct tier_err *err)
{
	struct daxctl_ctx *ctx;
	struct daxctl_dev *dev;
	struct daxctl_memory *mem;
	char who[128], policy[32] = "";
	int ret = daxctl_new(&ctx), online;

	if (ret)
		return tier_err_set(err, ret < 0 ? ret : -ENOMEM, "libdaxctl: %s", strerror(-ret));
	dev = find_dax(ctx, name);
	if (!dev) {
		ret = tier_err_set(err, -ENOENT, "%s: no such device-DAX device (tierctl device list shows them)", name);
		goto out;
	}
	if (daxctl_dev_get_memory(dev)) {
		ret = tier_err_set(err, -EALREADY, "%s is already system RAM on node %d", name,
				   daxctl_dev_get_target_node(dev));
		goto out;
	}
	if (daxctl_dev_get_target_node(dev) < 0) {
		ret = tier_err_set(err, -EINVAL, "%s has no target node: its memory cannot become a node", name);
		goto out;
	}
	if (dev_in_use(name, who, sizeof(who))) {
		ret = tier_err_set(err, -EBUSY, "%s is in use: %s has /dev/%s open or mapped", name, who, name);
		goto out;
	}
	/* The kernel would online the new blocks in its default zone; with
	 * its policy at offline for a moment, they go to ZONE_MOVABLE here,
	 * so that the device can be drained and taken out again. */
	ret = auto_online_set(sysfs_root, "offline", policy, sizeof(policy), err);
	if (ret)
		goto out;
	if (daxctl_dev_is_enabled(dev)) {
		ret = daxctl_dev_disable(dev);
		if (ret) {
			tier_err_set(err, ret, "%s: disabling devdax: %s", name, strerror(-ret));
			goto out_policy;
		}
	}
	ret = daxctl_dev_enable_ram(dev);
	if (ret) {
		tier_err_set(err, ret, "%s: enabling system-ram (dax kmem): %s", name, strerror(-ret));
		daxctl_dev_enable_devdax(dev);
		goto out_policy;
	}
	mem = daxctl_dev_get_memory(dev);
	online = mem ? daxctl_memory_online(mem) : -ENXIO;
	if (online < 0) {
		ret = tier_err_set(err, online, "%s: onlining its memory blocks movable: %s", name,
				   strerror(-online));
		goto out_policy;
	}
	*node = daxctl_dev_get_target_node(dev);
out_policy:
	if (policy[0]) {
		struct tier_err e2 = { "" };

		if (auto_online_set(sysfs_root, policy, NULL, 0, &e2) && !ret)
			ret = tier_err_set(err, -EIO, "%s", e2.msg);
	}
out:
	daxctl_unref(ctx);
	return ret;
}

/* --- memory blocks ----------------------------------------------------------- */

/* Calls fn for each memory block of node (its number). Returns 0, -ENOENT
 * (no such node) or fn's first nonzero return. */
static int node_blocks(const char *sysfs_root, int node,
		       int (*fn)(void *ctx, const char *sysfs_root, long block), void *ctx)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/node/node%d", node);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while (!ret && (de = readdir(dir))) {
		char *end;
		long b;

		if (strncmp(de->d_name, "memory", 6) || !de->d_name[6])
			continue;
		b = strtol(de->d_name + 6, &end, 10);
		if (*end)
			continue;
		ret = fn(ctx, sysfs_root, b);
	}
	closedir(dir);
	return ret;
}

static int block_read(const char *sysfs_root, long block, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct tier_err err;
	long n;

	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/memory/memory%ld/%s", block,
			file);
	n = tier_sysfs_read(path, buf, len, &err);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

struct block_scan {
	int blocks, online;
	int unmovable;			/* online blocks outside ZONE_MOVABLE */
	long first_unmovable, last_unmovable;
	char zone[64];			/* of the first unmovable one */
	char still[256];		/* blocks left online */
	int err;			/* the last offlining error */
};

static int count_block(void *ctx, const char *sysfs_root, long block)
{
	struct block_scan *s = ctx;
	char state[32], zones[64];

	s->blocks++;
	if (block_read(sysfs_root, block, "state", state, sizeof(state)) || strcmp(state, "online"))
		return 0;
	s->online++;
	/* An online block's valid_zones names the zone it is in. */
	if (block_read(sysfs_root, block, "valid_zones", zones, sizeof(zones)) ||
	    !strcmp(zones, "Movable"))
		return 0;
	if (!s->unmovable++) {
		s->first_unmovable = block;
		snprintf(s->zone, sizeof(s->zone), "%s", zones);
	}
	s->last_unmovable = block;
	return 0;
}

int tier_linux_node_blocks(const char *sysfs_root, int node, int *blocks, int *online)
{
	struct block_scan s = { 0 };
	int ret = node_blocks(sysfs_root, node, count_block, &s);

	*blocks = s.blocks;
	*online = s.online;
	return ret;
}

int tier_linux_node_movable(const char *sysfs_root, int node, struct tier_err *err)
{
	struct block_scan s = { 0 };
	char path[PATH_MAX], cpus[256] = "";
	struct tier_err e2;
	int ret;

	if (node < 0)
		return tier_err_set(err, -EINVAL, "node %d: node ids are not negative", node);
	ret = node_blocks(sysfs_root, node, count_block, &s);
	if (ret == -ENOENT)
		return tier_err_set(err, -ENOENT, "node %d does not exist", node);
	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/node/node%d/cpulist", node);
	if (tier_sysfs_read(path, cpus, sizeof(cpus), &e2) > 0 && cpus[0] != '\n')
		return tier_err_set(err, -EINVAL, "node %d has CPUs (%.*s): its memory holds the kernel's own pages and cannot be drained",
				    node, (int)strcspn(cpus, "\n"), cpus);
	if (!s.online)
		return tier_err_set(err, -EINVAL, "node %d has no online memory to drain", node);
	if (s.unmovable)
		return tier_err_set(err, -EINVAL, "node %d: %d of its %d online memory blocks (memory%ld..memory%ld) are in zone %s, not Movable: the kernel's unmovable pages there cannot be moved off",
				    node, s.unmovable, s.online, s.first_unmovable, s.last_unmovable,
				    s.zone);
	return 0;
}

static int offline_block(void *ctx, const char *sysfs_root, long block)
{
	struct block_scan *s = ctx;
	char path[PATH_MAX], state[32];
	size_t l;
	int fd;

	if (block_read(sysfs_root, block, "state", state, sizeof(state)) || strcmp(state, "online"))
		return 0;
	tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/memory/memory%ld/state", block);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, "offline", 7) == 7) {
		close(fd);
		return 0;
	}
	s->err = errno;
	if (fd >= 0)
		close(fd);
	l = strlen(s->still);
	snprintf(s->still + l, sizeof(s->still) - l, "%smemory%ld", l ? ", " : "", block);
	return 0;
}

/* The device-DAX device whose memory is node's, or NULL. */
static struct daxctl_dev *dax_of_node(struct daxctl_ctx *ctx, int node)
{
	struct daxctl_region *region;
	struct daxctl_dev *dev;

	daxctl_region_foreach(ctx, region)
		daxctl_dev_foreach(region, dev)
			if (daxctl_dev_get_memory(dev) && daxctl_dev_get_target_node(dev) == node)
				return dev;
	return NULL;
}

int tier_linux_node_offline(const char *sysfs_root, int node, char *devname, size_t dev_len,
			    struct tier_err *err)
{
	struct block_scan s = { 0 };
	struct daxctl_ctx *ctx = NULL;
	struct daxctl_dev *dev = NULL;
	int ret;

	devname[0] = '\0';
	ret = node_blocks(sysfs_root, node, offline_block, &s);
	if (ret == -ENOENT)
		return tier_err_set(err, -ENOENT, "node %d does not exist", node);
	if (s.still[0])
		return tier_err_set(err, -s.err, "node %d: memory blocks %s stay online: %s%s", node,
				    s.still, strerror(s.err),
				    s.err == EBUSY ? " (pages the kernel could not migrate: unmovable, or pinned)" : "");
	if (daxctl_new(&ctx) == 0)
		dev = dax_of_node(ctx, node);
	if (dev) {
		snprintf(devname, dev_len, "%s", daxctl_dev_get_devname(dev));
		ret = daxctl_dev_disable(dev);
		if (!ret)
			ret = daxctl_dev_enable_devdax(dev);
		if (ret)
			tier_err_set(err, ret, "node %d is offline, but %s did not go back to devdax: %s",
				     node, devname, strerror(-ret));
	}
	if (ctx)
		daxctl_unref(ctx);
	return ret;
}
