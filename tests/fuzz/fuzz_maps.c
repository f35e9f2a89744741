/* fuzz_maps.c - fuzz target of the /proc/PID/maps reader of the address
 * space map (backend/linux/space.h; libFuzzer ABI).
 *
 * Each input becomes <tmp>/proc/1/maps of a scratch procfs tree (next to a
 * sysfs tree of one 64 MiB node, which bounds a mapping to 16384 pages) and
 * is read by tier_linux_space_update(). It must either fail with -EINVAL
 * and an error naming the file and line, leaving the space empty, or
 * succeed with a consistent map: every id maps to an address that maps back
 * to it, translate() of the whole address space covers each id once, a
 * second update of the same maps keeps every id and forgets nothing, and
 * dropping the process forgets every id.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	pid_t pid = 1;
	FILE *f;
	int ret;

	if (!tmp[0])
		setup();
	f = fopen(maps_path, "w");
	must(f && (size == 0 || fwrite(data, 1, size, f) == size) && fclose(f) == 0,
	     "write maps");
	must(tier_linux_space_new(&ctx, 12, &s, &err) == 0, "space_new");
	ret = tier_linux_space_update(s, &pid, 1, on_forget, &t, &err);
	must(ret == 0 || ret == -EINVAL, "update returns 0 or -EINVAL");
	if (ret) {
		must(strstr(err.msg, "/proc/1/maps:") != NULL, "error names the file and line");
		must(tier_linux_space_nr_pages(s) == 0 && tier_linux_space_nr_procs(s) == 0,
		     "failed update leaves the space empty");
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
