/* fuzz_maps.c - fuzz target of the /proc/PID/maps parser (backend/linux/
 * maps.h) and of both its readers: the address space map's
 * (backend/linux/space.h) and the page-walking trackers'
 * (backend/linux/tracker_util.h; libFuzzer ABI).
 *
 * Each input becomes <tmp>/proc/1/maps of a scratch procfs tree (next to a
 * sysfs tree of one 64 MiB node, which bounds a mapping to 16384 pages).
 * Each line goes through tier__maps_parse_line(), which must either give a
 * reason or a well-formed entry. Then the file is read by
 * tier_linux_space_update(): it must fail with -EINVAL and an error naming
 * the file and the first line that does not parse (or overlaps the one
 * before), leaving the space empty, exactly when there is one; or succeed
 * with a consistent map: every id maps to an address that maps back to it,
 * translate() of the whole address space covers each id once, a second
 * update of the same maps keeps every id and forgets nothing, and dropping
 * the process forgets every id. The trackers' reader (tier__vmas_read())
 * fails on the same line, or watches exactly the mappings the space
 * manages (but for those larger than the machine, which the space leaves
 * out).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/maps.h"
#include "backend/linux/space.h"
#include "backend/linux/tracker_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The most pages a mapping the space manages has (64 MiB of 4 KiB). */
#define MACHINE_PAGES 16384u

static char tmp[PATH_MAX], maps_path[PATH_MAX + 32];
static char proc_root[PATH_MAX + 16], sys_root[PATH_MAX + 16];

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_maps: invariant broken: %s\n", what);
		abort();
	}
}

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	f = fopen(path, "w");
	must(f && fputs(text, f) >= 0 && fclose(f) == 0, "write scratch tree");
}

static void cleanup(void)
{
	static const char *const files[] = {
		"proc/1/maps", "sys/devices/system/node/node0/meminfo",
		"sys/devices/system/node/online",
	};
	static const char *const dirs[] = {
		"proc/1", "proc", "sys/devices/system/node/node0", "sys/devices/system/node",
		"sys/devices/system", "sys/devices", "sys", "",
	};
	char path[PATH_MAX + 64];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, files[i]);
		unlink(path);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
		rmdir(path);
	}
}

static void setup(void)
{
	static const char *const dirs[] = {
		"proc", "proc/1", "sys", "sys/devices", "sys/devices/system",
		"sys/devices/system/node", "sys/devices/system/node/node0",
	};
	const char *base = getenv("TMPDIR");
	char path[PATH_MAX + 64];
	struct stat st;
	size_t i;

	/* Rewriting a file thousands of times: tmpfs, not a disk that flushes
	 * on every truncate-and-rewrite (ext4 auto_da_alloc). */
	if (!base || !*base)
		base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/fuzz-maps.XXXXXX", base);
	must(mkdtemp(tmp) != NULL, "mkdtemp");
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
		must(mkdir(path, 0755) == 0, "mkdir");
	}
	put("sys/devices/system/node/online", "0\n");
	put("sys/devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:          65536 kB\nNode 0 MemFree:           32768 kB\n");
	snprintf(maps_path, sizeof(maps_path), "%s/proc/1/maps", tmp);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", tmp);
	snprintf(sys_root, sizeof(sys_root), "%s/sys", tmp);
	atexit(cleanup);
}

struct tally {
	uint64_t nr_forgotten, calls;
	uint8_t *seen;
	uint64_t nr_pages, covered;
};

static void on_forget(void *ctx, uint64_t first, uint64_t nr)
{
	struct tally *t = ctx;

	t->nr_forgotten += nr;
	t->calls++;
	must(first + nr <= t->nr_pages, "forget inside the id space");
}

static void on_obs(void *ctx, const struct tier_obs *obs, size_t n)
{
	struct tally *t = ctx;
	size_t i;
	uint64_t k;

	for (i = 0; i < n; i++) {
		must(obs[i].nr_pages > 0, "translate: empty observation");
		for (k = 0; k < obs[i].nr_pages; k++) {
			must(obs[i].page + k < t->nr_pages, "translate: id inside the space");
			must(!t->seen[obs[i].page + k], "translate: each id once");
			t->seen[obs[i].page + k] = 1;
			t->covered++;
		}
	}
}

/* Parses each line of data (split at newlines, as getline(3) reads them)
 * and checks the entries. Returns the number of the first line that does
 * not parse or starts before the end of the line before, 0 for none. */
static size_t check_lines(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	size_t at = 0, lineno = 0, bad = 0;
	uint64_t prev_end = 0;

	must(line != NULL, "malloc");
	while (at < size && !bad) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		struct tier__maps_entry e;
		const char *why;

		memcpy(line, data + at, len);
		line[len] = '\0';
		at += len + (nl != NULL);
		lineno++;
		why = tier__maps_parse_line(line, 12, &e);
		if (why) {
			must(*why != '\0', "parse: a reason");
			bad = lineno;
			break;
		}
		must(e.start < e.end && !(e.start & 4095) && !(e.end & 4095),
		     "parse: a page-aligned range");
		must(strlen(e.perms) == 4 && strchr("ps", e.perms[3]), "parse: permissions");
		must(e.path >= line && e.path <= line + strlen(line), "parse: path in the line");
		must(!e.managed || e.perms[3] == 'p', "parse: managed memory is private");
		if (e.start < prev_end)
			bad = lineno;
		prev_end = e.end;
	}
	free(line);
	return bad;
}

struct watched {
	const struct tier__vma *v;
	size_t n;
};

/* An extent may span adjacent mappings (the space merges anonymous ones
 * whose ids continue each other): covered by a run of watched mappings. */
static void in_watched(void *ctx, uint64_t addr, uint64_t first, uint64_t nr)
{
	const struct watched *w = ctx;
	uint64_t end = addr + nr * 4096;
	size_t i;

	(void)first;
	for (i = 0; i < w->n && w->v[i].end <= addr; i++)
		;
	must(i < w->n && w->v[i].start <= addr, "trackers: an extent's start watched");
	for (; i + 1 < w->n && w->v[i].end < end; i++)
		must(w->v[i + 1].start == w->v[i].end, "trackers: an extent's pages watched");
	must(i < w->n && end <= w->v[i].end, "trackers: an extent's end watched");
}

/* The trackers' reader against the space's outcome (ret, and the pages
 * it holds). */
static void check_trackers(const struct tier_linux_ctx *ctx, const struct tier_linux_space *s,
			   int ret, uint64_t held)
{
	struct tier_err err = { "" };
	struct tier__vma *v = NULL;
	uint64_t pages = 0;
	size_t n = 0, i;
	int r;

	r = tier__vmas_read(ctx, 1, &v, &n, &err);
	must(r == ret, "trackers: the space's outcome");
	if (r) {
		must(strstr(err.msg, "/proc/1/maps:") != NULL, "trackers: error names the line");
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t nr = (v[i].end - v[i].start) / 4096;

		must(!i || v[i].start >= v[i - 1].end, "trackers: mappings in order");
		if (nr <= MACHINE_PAGES)
			pages += nr;
	}
	must(pages == held, "trackers: as many pages as the space holds");
	if (held) {
		struct watched w = { v, n };

		must(tier_linux_space_extents(s, 1, in_watched, &w) == 0, "extents");
	}
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tier_linux_ctx ctx = {
		.sysfs_root = sys_root, .procfs_root = proc_root, .debugfs_root = "/nonexistent",
	};
	struct tier_linux_addr_obs all = {
		.pid = 1, .start = 0, .end = UINT64_MAX & ~4095ull, .kind = TIER_OBS_ACCESSED,
	};
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	struct tally t = { 0 };
	uint64_t id, held = 0, nr;
	size_t bad;
	pid_t pid = 1;
	FILE *f;
	int ret;

	if (!tmp[0])
		setup();
	f = fopen(maps_path, "w");
	must(f && (size == 0 || fwrite(data, 1, size, f) == size) && fclose(f) == 0,
	     "write maps");
	bad = check_lines(data, size);
	must(tier_linux_space_new(&ctx, 12, &s, &err) == 0, "space_new");
	ret = tier_linux_space_update(s, &pid, 1, on_forget, &t, &err);
	must(ret == 0 || ret == -EINVAL, "update returns 0 or -EINVAL");
	must((ret != 0) == (bad != 0), "update fails exactly on a bad line");
	if (ret) {
		char where[64];

		snprintf(where, sizeof(where), "/proc/1/maps:%zu:", bad);
		must(strstr(err.msg, where) != NULL, "error names the file and the bad line");
		must(tier_linux_space_nr_pages(s) == 0 && tier_linux_space_nr_procs(s) == 0,
		     "failed update leaves the space empty");
		check_trackers(&ctx, s, ret, 0);
		tier_linux_space_destroy(s);
		return 0;
	}
	nr = tier_linux_space_nr_pages(s);
	t.nr_pages = nr;
	must(t.calls == 0, "first update forgets nothing");
	for (id = 0; id < nr; id++) {
		pid_t owner = 0;
		uint64_t addr = 0, back = UINT64_MAX;

		if (tier_linux_space_addr(s, id, &owner, &addr))
			continue;
		held++;
		must(owner == 1 && !(addr & 4095), "addr: pid and alignment");
		must(tier_linux_space_page(s, 1, addr, &back) && back == id, "page(addr(id)) == id");
		must(tier_linux_space_page_owner(s)[id] == 0, "owner slot 0");
	}
	{
		size_t lines = 1, k;

		for (k = 0; k < size; k++)
			lines += data[k] == '\n';
		/* Dense but for the gaps that keep huge-page alignment: fewer
		 * than 512 ids a mapping. */
		must(held <= nr && nr - held < 512 * (uint64_t)lines,
		     "ids are dense on a first update, but for alignment gaps");
	}
	check_trackers(&ctx, s, 0, held);
	t.seen = calloc(nr + 1, 1);
	must(t.seen != NULL, "calloc");
	tier_linux_space_translate(s, &all, 1, on_obs, &t);
	must(t.covered == held, "translate covers every id");
	free(t.seen);

	must(tier_linux_space_update(s, &pid, 1, on_forget, &t, &err) == 0, "same maps again");
	must(t.calls == 0 && tier_linux_space_nr_pages(s) == nr, "same maps: same ids");
	must(tier_linux_space_update(s, NULL, 0, on_forget, &t, &err) == 0, "drop the process");
	must(t.nr_forgotten == held, "dropping forgets every id");
	tier_linux_space_destroy(s);
	return 0;
}
