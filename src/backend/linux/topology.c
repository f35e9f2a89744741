/* topology.c - the Linux topology source (sysfs), and the reader of a
 * node's meminfo it shares with the node memory ops. See topology.h. */
#include "backend/linux/topology.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/sysfs.h"
#include "core/nodelist.h"

#define NODE_DIR "devices/system/node"
#define TIERING_DIR "devices/virtual/memory_tiering"

/* Cpulist of a large machine is a few KiB; node meminfo ~1.5 KiB. */
enum { FILE_BUF_SZ = 64 * 1024, MEMINFO_BUF_SZ = 16 * 1024 };

struct reader {
	const char *root;
	char *buf;		/* FILE_BUF_SZ scratch */
	struct tier_err *err;
};

static long read_rel(struct reader *r, char *path, size_t psz, const char *rel)
{
	if (tier_sysfs_path(path, psz, r->root, "%s", rel))
		return tier_err_set(r->err, -ENAMETOOLONG, "%s/%s: path too long",
				    r->root, rel);
	return tier_sysfs_read(path, r->buf, FILE_BUF_SZ, r->err);
}

/* Reads a node list file; *present=false when it does not exist and
 * optional is set. */
static int read_list(struct reader *r, const char *rel, bool optional,
		     bool *present, int **ids, size_t *nr)
{
	char path[PATH_MAX];
	long n;
	int ret;

	*ids = NULL;
	*nr = 0;
	if (present)
		*present = false;
	n = read_rel(r, path, sizeof(path), rel);
	if (n == -ENOENT && optional) {
		tier_err_clear(r->err);
		return 0;
	}
	if (n < 0)
		return (int)n;
	ret = tier_nodelist_parse(r->buf, ids, nr, r->err);
	if (ret) {
		tier_err_prefix(r->err, "%s", path);
		return ret;
	}
	if (present)
		*present = true;
	return 0;
}

static int read_distance(struct reader *r, struct tier_topology *topo,
			 struct tier_node *node)
{
	char rel[64], path[PATH_MAX], *p, *end;
	int *row;
	size_t i = 0;
	long n;
	int ret = 0;

	snprintf(rel, sizeof(rel), NODE_DIR "/node%d/distance", node->id);
	n = read_rel(r, path, sizeof(path), rel);
	if (n < 0)
		return (int)n;
	row = calloc(topo->nr_nodes, sizeof(*row));
	if (!row)
		return tier_err_set(r->err, -ENOMEM, "out of memory");
	p = r->buf;
	for (;;) {
		long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
		if (*p < '0' || *p > '9') {
			ret = tier_err_set(r->err, -EINVAL,
					   "%s: field %zu is not a number", path, i + 1);
			goto out_free;
		}
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v > INT_MAX || (*end && *end != ' ' && *end != '\t' &&
					      *end != '\n')) {
			ret = tier_err_set(r->err, -EINVAL,
					   "%s: field %zu is not a number", path, i + 1);
			goto out_free;
		}
		if (i == topo->nr_nodes) {
			ret = tier_err_set(r->err, -EINVAL,
					   "%s: more than %zu fields (one per online node)",
					   path, topo->nr_nodes);
			goto out_free;
		}
		row[i++] = (int)v;
		p = end;
	}
	if (i != topo->nr_nodes) {
		ret = tier_err_set(r->err, -EINVAL,
				   "%s: %zu fields, expected %zu (one per online node)",
				   path, i, topo->nr_nodes);
		goto out_free;
	}
	ret = tier_node_set_distance(topo, node, row);
	if (ret)
		tier_err_set(r->err, ret, "out of memory");
out_free:
	free(row);
	return ret;
}

int tier_linux_node_meminfo(const char *sysfs_root, int node, uint64_t *total_bytes,
			    uint64_t *free_bytes, struct tier_err *err)
{
	char rel[64], path[PATH_MAX], buf[MEMINFO_BUF_SZ], *line, *save = NULL;
	bool have_total = false, have_free = false;
	unsigned lineno = 0;
	long n;

	if (node < 0)
		return tier_err_set(err, -ENOENT, "node %d: no such node", node);
	snprintf(rel, sizeof(rel), NODE_DIR "/node%d/meminfo", node);
	if (tier_sysfs_path(path, sizeof(path), sysfs_root, "%s", rel))
		return tier_err_set(err, -ENAMETOOLONG, "%s/%s: path too long", sysfs_root, rel);
	n = tier_sysfs_read(path, buf, sizeof(buf), err);
	if (n < 0)
		return (int)n;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64];
		unsigned long long v;
		int nid, used = 0;

		lineno++;
		if (sscanf(line, "Node %d %63[^:]: %llu%n", &nid, key, &v, &used) < 3) {
			return tier_err_set(err, -EINVAL,
					    "%s:%u: expected 'Node %d <Key>: <value>', found '%.60s'",
					    path, lineno, node, line);
		}
		if (nid != node)
			return tier_err_set(err, -EINVAL, "%s:%u: line is for node %d, not %d",
					    path, lineno, nid, node);
		if (!strcmp(key, "MemTotal")) {
			*total_bytes = v * 1024;
			have_total = true;
		} else if (!strcmp(key, "MemFree")) {
			*free_bytes = v * 1024;
			have_free = true;
		}
	}
	if (!have_total || !have_free)
		return tier_err_set(err, -EINVAL, "%s: no %s line", path,
				    have_total ? "MemFree" : "MemTotal");
	return 0;
}

/* HMAT access attributes. Both access classes are read (so a corrupt file
 * is reported wherever it is); access1 (CPU initiators) is preferred since
 * tierd places memory for CPU threads, access0 (any initiator) otherwise. */
static int read_hmat(struct reader *r, struct tier_node *node)
{
	static const char *const classes[] = { "access1", "access0" };
	static const char *const files[] = {
		"read_latency", "write_latency", "read_bandwidth", "write_bandwidth",
	};
	struct tier_perf perf[2];
	char path[PATH_MAX];
	size_t c, f;

	memset(perf, 0, sizeof(perf));
	for (c = 0; c < 2; c++) {
		uint32_t *dst[] = {
			&perf[c].read_latency_ns, &perf[c].write_latency_ns,
			&perf[c].read_bw_mbps, &perf[c].write_bw_mbps,
		};

		for (f = 0; f < 4; f++) {
			uint64_t v;
			int ret;

			if (tier_sysfs_path(path, sizeof(path), r->root,
					    NODE_DIR "/node%d/%s/initiators/%s",
					    node->id, classes[c], files[f]))
				return tier_err_set(r->err, -ENAMETOOLONG,
						    "sysfs root path too long");
			if (!tier_sysfs_exists(path))
				continue;	/* no HMAT, or a figure not published */
			ret = tier_sysfs_read_u64(path, &v, r->err);
			if (ret)
				return ret;
			if (v > UINT32_MAX)
				return tier_err_set(r->err, -ERANGE, "%s: %llu is out of range",
						    path, (unsigned long long)v);
			*dst[f] = (uint32_t)v;
		}
	}
	for (c = 0; c < 2; c++) {
		if (perf[c].read_latency_ns || perf[c].read_bw_mbps) {
			node->hmat = perf[c];
			node->has_hmat = true;
			break;
		}
	}
	return 0;
}

static int read_memory_tiers(struct reader *r, struct tier_topology *topo)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	if (tier_sysfs_path(path, sizeof(path), r->root, TIERING_DIR))
		return tier_err_set(r->err, -ENAMETOOLONG, "sysfs root path too long");
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 :
		       tier_err_set(r->err, -errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(dir))) {
		char rel[sizeof(TIERING_DIR) + 300];
		int tier, end = 0, *ids;
		size_t nr, i;

		if (sscanf(de->d_name, "memory_tier%d%n", &tier, &end) != 1 ||
		    de->d_name[end] != '\0' || tier < 0)
			continue;
		snprintf(rel, sizeof(rel), TIERING_DIR "/%s/nodelist", de->d_name);
		ret = read_list(r, rel, false, NULL, &ids, &nr);
		if (ret)
			break;
		for (i = 0; i < nr; i++) {
			struct tier_node *n = tier_topology_node(topo, ids[i]);

			if (!n)
				continue;	/* offline node */
			if (n->kernel_tier >= 0 && n->kernel_tier != tier) {
				ret = tier_err_set(r->err, -EINVAL,
						   "%s/%s: node %d also in memory_tier%d",
						   path, de->d_name, ids[i], n->kernel_tier);
				break;
			}
			n->kernel_tier = tier;
		}
		free(ids);
		if (ret)
			break;
	}
	closedir(dir);
	return ret;
}

static int linux_topology_read(void *priv, struct tier_topology *topo,
			       struct tier_err *err)
{
	const struct tier_linux_topology *lt = priv;
	struct reader r = { .root = lt->sysfs_root, .err = err };
	int *online = NULL, *has_cpu = NULL, *has_mem = NULL;
	size_t nr_online, nr_cpu, nr_mem, i;
	bool cpu_known, mem_known;
	char path[PATH_MAX];
	int ret;

	if (tier_sysfs_path(path, sizeof(path), r.root, NODE_DIR))
		return tier_err_set(err, -ENAMETOOLONG, "sysfs root path too long");
	if (!tier_sysfs_exists(path))
		return tier_err_set(err, -ENOENT,
				    "%s: not found (not a sysfs root, or a kernel without NUMA support)",
				    path);
	r.buf = malloc(FILE_BUF_SZ);
	if (!r.buf)
		return tier_err_set(err, -ENOMEM, "out of memory");
	ret = read_list(&r, NODE_DIR "/online", false, NULL, &online, &nr_online);
	if (ret)
		goto out;
	if (!nr_online) {
		ret = tier_err_set(err, -EINVAL, "%s/online: no node online", path);
		goto out;
	}
	ret = read_list(&r, NODE_DIR "/has_cpu", true, &cpu_known, &has_cpu, &nr_cpu);
	if (ret)
		goto out;
	ret = read_list(&r, NODE_DIR "/has_memory", true, &mem_known, &has_mem, &nr_mem);
	if (ret)
		goto out;
	ret = tier_topology_alloc_nodes(topo, nr_online);
	if (ret) {
		tier_err_set(err, ret, "out of memory");
		goto out;
	}
	for (i = 0; i < nr_online; i++)
		topo->nodes[i].id = online[i];
	for (i = 0; i < nr_online; i++) {
		struct tier_node *n = &topo->nodes[i];
		char rel[64];
		int *cpus;
		size_t nr;

		snprintf(rel, sizeof(rel), NODE_DIR "/node%d", n->id);
		tier_sysfs_path(path, sizeof(path), r.root, "%s", rel);
		if (!tier_sysfs_exists(path)) {
			ret = tier_err_set(err, -ENOENT,
					   "%s: missing, but node %d is listed in %s/%s/online",
					   path, n->id, r.root, NODE_DIR);
			goto out;
		}
		snprintf(rel, sizeof(rel), NODE_DIR "/node%d/cpulist", n->id);
		ret = read_list(&r, rel, false, NULL, &cpus, &nr);
		if (ret)
			goto out;
		ret = tier_node_set_cpus(n, cpus, nr);
		free(cpus);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			goto out;
		}
		if (cpu_known && !tier_nodelist_contains(has_cpu, nr_cpu, n->id) && nr) {
			/* A node can list CPUs that are all offline; trust has_cpu. */
			tier_node_set_cpus(n, NULL, 0);
		}
		ret = read_distance(&r, topo, n);
		if (ret)
			goto out;
		ret = tier_linux_node_meminfo(r.root, n->id, &n->mem_total_bytes,
					      &n->mem_free_bytes, err);
		if (ret)
			goto out;
		n->has_memory = mem_known ? tier_nodelist_contains(has_mem, nr_mem, n->id)
					  : n->mem_total_bytes > 0;
		ret = read_hmat(&r, n);
		if (ret)
			goto out;
	}
	ret = read_memory_tiers(&r, topo);
out:
	if (ret)
		tier_topology_release(topo);
	free(online);
	free(has_cpu);
	free(has_mem);
	free(r.buf);
	return ret;
}

const struct tier_topology_ops tier_linux_topology_ops = {
	.name = "linux-sysfs",
	.read = linux_topology_read,
};
