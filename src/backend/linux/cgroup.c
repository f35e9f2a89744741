/* cgroup.c - cgroup v2 membership and memory per node. */
#include "backend/linux/cgroup.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tier_linux_proc_cgroup(const struct tier_linux_ctx *ctx, pid_t pid, char *buf, size_t sz,
			   struct tier_err *err)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/cgroup", ctx->procfs_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return tier_err_set(err, errno == ENOENT ? -ESRCH : -errno, "%s: %s", path,
				    strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		size_t len = strcspn(line, "\n");

		lineno++;
		line[len] = '\0';
		if (strncmp(line, "0::", 3))
			continue;	/* a v1 hierarchy */
		if (line[3] != '/') {
			ret = tier_err_set(err, -EINVAL, "%s:%u: '%.64s': not a cgroup path", path,
					   lineno, line);
			break;
		}
		/* A deleted group reads "/db (deleted)". */
		if (len > 13 && !strcmp(line + len - 10, " (deleted)"))
			line[len - 10] = '\0';
		if (strlen(line + 3) >= sz) {
			ret = tier_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
			break;
		}
		strcpy(buf, line + 3);
		ret = 0;
		break;
	}
	if (ret == -ENOENT)
		tier_err_set(err, -ENOENT, "%s: no cgroup v2 line", path);
	free(line);
	fclose(f);
	return ret;
}

int tier_linux_cgroup_relative(const char *mount, const char *path, char *buf, size_t sz)
{
	size_t ml = strlen(mount);
	int n;

	while (ml > 1 && mount[ml - 1] == '/')
		ml--;
	if (path[0] == '/' && !strncmp(path, mount, ml) && (path[ml] == '/' || !path[ml]))
		path += ml;
	while (path[0] == '/')
		path++;
	n = snprintf(buf, sz, "/%s", path);
	if (n < 0 || (size_t)n >= sz)
		return -ENAMETOOLONG;
	/* No trailing slash: "/db/" is "/db". */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return 0;
}

int tier_linux_cgroup_contains(const char *group, const char *proc)
{
	size_t gl = strlen(group);

	if (!strcmp(group, "/"))
		return 1;
	return !strncmp(group, proc, gl) && (proc[gl] == '/' || !proc[gl]);
}

int tier_linux_cgroup_numa_stat(const char *dir, uint64_t anon[TIER_LINUX_MAX_NODES],
				uint64_t file[TIER_LINUX_MAX_NODES], struct tier_err *err)
{
	char path[4200], *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;
	FILE *f;

	memset(anon, 0, TIER_LINUX_MAX_NODES * sizeof(*anon));
	memset(file, 0, TIER_LINUX_MAX_NODES * sizeof(*file));
	snprintf(path, sizeof(path), "%s/memory.numa_stat", dir);
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		if (e == ENOENT)
			return tier_err_set(err, -ENOENT, "%s: %s", path,
					    access(dir, F_OK) == 0 ? "the memory controller is not enabled"
								   : "no such cgroup");
		return tier_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	while (getline(&line, &cap, f) > 0) {
		char *tok, *save = NULL;
		uint64_t *dst;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		tok = strtok_r(line, " ", &save);
		if (!tok)
			continue;
		if (!strcmp(tok, "anon"))
			dst = anon;
		else if (!strcmp(tok, "file"))
			dst = file;
		else
			continue;
		while ((tok = strtok_r(NULL, " ", &save))) {
			unsigned long node = 0;
			unsigned long long bytes = 0;
			char *end = tok, *num;
			bool ok = tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9';

			errno = 0;
			if (ok) {
				node = strtoul(tok + 1, &end, 10);
				ok = *end == '=' && node < TIER_LINUX_MAX_NODES;
			}
			if (ok) {
				num = end + 1;
				bytes = strtoull(num, &end, 10);
				ok = end != num && !*end && *num != '-' && !errno;
			}
			if (!ok) {
				ret = tier_err_set(err, -EINVAL, "%s:%u: '%.32s': expected N<node>=<bytes>",
						   path, lineno, tok);
				goto out;
			}
			dst[node] = bytes;
		}
	}
out:
	free(line);
	fclose(f);
	return ret;
}
