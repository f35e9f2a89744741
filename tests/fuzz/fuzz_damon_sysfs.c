/* fuzz_damon_sysfs.c - fuzz target of the DAMON tracker's sysfs reader: the
 * schemes' tried_regions snapshots (backend/linux/damon_collect.c, over
 * sysfs.c's number reader; libFuzzer ABI).
 *
 * Each input describes a kdamond's schemes/ directory, one line each:
 *
 *   targets 2              the tracker's targets (1 to 3; default 1)
 *   per_target             one scheme per target (target filters)
 *   0/13/start 4194304     file schemes/0/tried_regions/13/start, its text
 *                          and a newline (none when the line ends in '\')
 *   0/total_bytes 0        file schemes/0/tried_regions/total_bytes
 *
 * Other lines are ignored. The tree is written under a scratch admin
 * directory on tmpfs and collected by tier__damon_collect_tried() with
 * the kernel's state commands stood in for by the tracker's write hook.
 * The collect must succeed, or fail with one line of message; every
 * observation names one of the targets, a region that is not empty and a
 * count within the aggregation's maximum, and without target filters each
 * target's regions come in address order.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/damon_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_SCHEMES = 3, MAX_PATHS = 512, MAX_OBS = 4096, NAME_MAX_BYTES = 24 };

#define SCHEMES_REL "kdamonds/0/contexts/0/schemes"

static char tmp[PATH_MAX], admin[PATH_MAX + 16];
static pid_t pids[] = { 100, 200, 300 };

/* What one input made, removed in reverse order. */
static char *made[MAX_PATHS];
static bool made_dir[MAX_PATHS];
static size_t nr_made;

static struct tier_linux_addr_obs seen[MAX_OBS];
static size_t nr_seen;

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_damon_sysfs: invariant broken: %s\n", what);
		abort();
	}
}

static void remove_made(void)
{
	while (nr_made) {
		nr_made--;
		if (made_dir[nr_made])
			rmdir(made[nr_made]);
		else
			unlink(made[nr_made]);
		free(made[nr_made]);
	}
}

static void cleanup(void)
{
	static const char *const dirs[] = {
		SCHEMES_REL, "kdamonds/0/contexts/0", "kdamonds/0/contexts", "kdamonds/0",
		"kdamonds",
	};
	char path[PATH_MAX + 128];
	size_t i;

	remove_made();
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", admin, dirs[i]);
		rmdir(path);
	}
	rmdir(admin);
	rmdir(tmp);
}

static void setup(void)
{
	static const char *const dirs[] = {
		"kdamonds", "kdamonds/0", "kdamonds/0/contexts", "kdamonds/0/contexts/0",
		SCHEMES_REL,
	};
	const char *base = getenv("TMPDIR");
	char path[PATH_MAX + 128];
	struct stat st;
	size_t i;

	if (!base || !*base)
		base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/fuzz-damon.XXXXXX", base);
	must(mkdtemp(tmp) != NULL, "mkdtemp");
	snprintf(admin, sizeof(admin), "%s/admin", tmp);
	must(mkdir(admin, 0755) == 0, "mkdir admin");
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", admin, dirs[i]);
		must(mkdir(path, 0755) == 0, "mkdir");
	}
	atexit(cleanup);
}

/* Makes the directory path unless there; remembers it. */
static bool make_dir(const char *path)
{
	if (nr_made == MAX_PATHS)
		return false;
	if (mkdir(path, 0755))
		return errno == EEXIST;
	made[nr_made] = strdup(path);
	made_dir[nr_made] = true;
	must(made[nr_made] != NULL, "strdup");
	nr_made++;
	return true;
}

/* A directory entry name: 1 to NAME_MAX_BYTES bytes, no '/', not "." or
 * "..". */
static bool good_name(const char *s, size_t len)
{
	return len && len <= NAME_MAX_BYTES && !memchr(s, '/', len) &&
	       !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

/* "S/REGION/FILE VALUE" or "S/FILE VALUE": writes the file. */
static void make_file(const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len), *slash, *p;
	char dir[PATH_MAX + 256], path[PATH_MAX + 512];
	size_t plen, vlen;
	bool newline = true;
	unsigned long s;
	char *end;
	FILE *f;

	if (!sp || line[0] < '0' || line[0] > '9')
		return;
	s = strtoul(line, &end, 10);
	if (s >= MAX_SCHEMES || *end != '/' || end > sp)
		return;
	p = end + 1;
	plen = (size_t)(sp - p);
	vlen = len - (size_t)(sp + 1 - line);
	if (vlen && line[len - 1] == '\\') {
		vlen--;
		newline = false;
	}
	snprintf(dir, sizeof(dir), "%s/" SCHEMES_REL "/%lu", admin, s);
	if (!make_dir(dir))
		return;
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/tried_regions");
	if (!make_dir(dir))
		return;
	slash = memchr(p, '/', plen);
	if (slash) {
		size_t dlen = (size_t)(slash - p);

		if (!good_name(p, dlen))
			return;
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%.*s", (int)dlen, p);
		if (!make_dir(dir))
			return;
		plen -= dlen + 1;
		p = slash + 1;
	}
	if (!good_name(p, plen) || nr_made == MAX_PATHS)
		return;
	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)plen, p);
	f = fopen(path, "wx");
	if (!f)
		return;		/* there already, or a directory */
	made[nr_made] = strdup(path);
	made_dir[nr_made] = false;
	must(made[nr_made] != NULL, "strdup");
	nr_made++;
	must(fwrite(sp + 1, 1, vlen, f) == vlen && (!newline || fputc('\n', f) == '\n') &&
	     fclose(f) == 0, "write a file");
}

static int on_write(void *ctx, const char *rel, const char *val)
{
	(void)ctx;
	(void)rel;
	(void)val;
	return 1;	/* the kernel's state commands: done */
}

static void sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < n && nr_seen < MAX_OBS; i++)
		seen[nr_seen++] = obs[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier__damon_tracker t;
	struct tier_err err = { "" };
	struct tier__obs_batch b;
	char *text, *line, *save = NULL;
	size_t i, k;
	int ret;

	if (!tmp[0])
		setup();
	memset(&t, 0, sizeof(t));
	snprintf(t.fs.admin, sizeof(t.fs.admin), "%s", admin);
	t.fs.hooks.on_write = on_write;
	t.pids = pids;
	t.nr_pids = 1;
	t.sample_us = 5000;
	t.aggr_us = 100000;
	tier__damon_trace_init(&t.trace);

	text = malloc(size + 1);
	must(text != NULL, "malloc");
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "targets ", 8) && line[8] >= '1' && line[8] <= '3' && !line[9])
			t.nr_pids = (size_t)(line[8] - '0');
		else if (!strcmp(line, "per_target"))
			t.per_target = true;
		else
			make_file(line, strlen(line));
	}
	free(text);

	nr_seen = 0;
	tier__batch_init(&b, sink, NULL);
	ret = tier__damon_collect_tried(&t, &b, &err);
	tier__batch_flush(&b);
	tier__damon_collect_release(&t);
	remove_made();
	if (ret) {
		must(ret < 0, "collect returns 0 or -errno");
		must(err.msg[0] && !strchr(err.msg, '\n'), "a failed collect says why, on one line");
	}
	for (i = 0; i < nr_seen; i++) {
		const struct tier_linux_addr_obs *o = &seen[i];
		bool known = false;

		for (k = 0; k < t.nr_pids; k++)
			known |= o->pid == pids[k];
		must(known, "observations of the targets only");
		must(o->start < o->end, "regions that are not empty");
		must(o->kind == TIER_OBS_ACCESSED && o->max == 20 && o->count <= o->max,
		     "counts within the aggregation's maximum");
		if (!t.per_target && t.nr_pids > 1 && i && o->pid == seen[i - 1].pid)
			must(o->start >= seen[i - 1].end, "a target's regions in address order");
	}
	return 0;
}
