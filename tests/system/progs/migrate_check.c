/* migrate_check - drives the Linux address space map, migrator, memory ops
 * and process selection (src/backend/linux/space.h, procs.h) against a
 * live workload (memhog) in the tiered guest, and checks the outcome with
 * move_pages(2) status queries of its own. Prints TAP lines without numbers
 * ("ok - ...", "not ok - ...", "# ...") that tests/system/migrate.sh
 * counts; exits 1 when a check failed.
 *
 *   migrate_check place PID HOT COLD    hot pages to node 0, cold to node 2
 *   migrate_check full PID HOT COLD     the same while node 0 is full
 *   migrate_check exit PID HOT          kills PID between two batches
 *   migrate_check huge PID HOT          huge pages: seen, moved whole, split
 *   migrate_check select [--pid P]... [--cgroup PATH]... [--exe PATTERN]
 *                        [--min-rss-mib N] [--label TEXT] [--expect "P P"]
 *                        [--expect-rc N] [--expect-err TEXT] [--expect-not P]
 * HOT and COLD are address ranges as memhog prints them: 0xSTART-0xEND.
 */
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/procs.h"
#include "backend/linux/space.h"

#define PG 4096ull
/* Pages per migrator call, as the daemon's max_batch would be. */
enum { BATCH = 512 };

static const struct tier_linux_ctx ctx = {
	.sysfs_root = "/sys", .procfs_root = "/proc", .debugfs_root = "/sys/kernel/debug",
};

static int failures;

static void tap(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct range {
	uint64_t start, end;
};

static bool parse_range(const char *s, struct range *r)
{
	char *end;

	r->start = strtoull(s, &end, 0);
	if (*end != '-')
		return false;
	r->end = strtoull(end + 1, &end, 0);
	return !*end && r->start <= r->end && !(r->start % PG) && !(r->end % PG);
}

/* A set of pages of the workload: addresses, ids, wanted node, status. */
struct pageset {
	size_t n;
	uint64_t *addr, *id;
	int *target, *status, *node;	/* node: by our own query */
};

static void pageset_free(struct pageset *ps)
{
	free(ps->addr);
	free(ps->id);
	free(ps->target);
	free(ps->status);
	free(ps->node);
}

/* Fills ps with the pages of r (ids from the space). Returns how many
 * pages the space does not manage. */
static size_t pageset_init(struct pageset *ps, const struct tier_linux_space *s, pid_t pid,
			   struct range r, int target)
{
	size_t i, missing = 0;

	ps->n = (size_t)((r.end - r.start) / PG);
	ps->addr = calloc(ps->n + 1, sizeof(*ps->addr));
	ps->id = calloc(ps->n + 1, sizeof(*ps->id));
	ps->target = calloc(ps->n + 1, sizeof(*ps->target));
	ps->status = calloc(ps->n + 1, sizeof(*ps->status));
	ps->node = calloc(ps->n + 1, sizeof(*ps->node));
	if (!ps->addr || !ps->id || !ps->target || !ps->status || !ps->node) {
		fprintf(stderr, "migrate_check: out of memory\n");
		exit(2);
	}
	for (i = 0; i < ps->n; i++) {
		ps->addr[i] = r.start + i * PG;
		ps->target[i] = target;
		ps->status[i] = 1000;	/* not tried */
		if (!tier_linux_space_page(s, pid, ps->addr[i], &ps->id[i]))
			missing++;
	}
	return missing;
}

/* Where the pages are now, by move_pages(2) with nodes = NULL. */
static int query_nodes(pid_t pid, struct pageset *ps)
{
	void *addrs[1024];
	size_t i, k, n;

	for (i = 0; i < ps->n; i += n) {
		n = ps->n - i < 1024 ? ps->n - i : 1024;
		for (k = 0; k < n; k++)
			addrs[k] = (void *)(uintptr_t)ps->addr[i + k];
		if (numa_move_pages(pid, n, addrs, NULL, ps->node + i, 0) < 0)
			return -errno;
	}
	return 0;
}

static size_t count_on(const struct pageset *ps, int node)
{
	size_t i, c = 0;

	for (i = 0; i < ps->n; i++)
		c += ps->node[i] == node;
	return c;
}

static void diag_nodes(const char *what, const struct pageset *ps)
{
	diag("%s: %zu pages: node0=%zu node1=%zu node2=%zu absent=%zu", what, ps->n,
	     count_on(ps, 0), count_on(ps, 1), count_on(ps, 2), count_on(ps, -ENOENT));
}

/* page_node of the space against our own query. */
static size_t disagreements(const struct tier_linux_space *s, const struct pageset *ps)
{
	const uint8_t *pn = tier_linux_space_page_node(s);
	size_t i, bad = 0;

	for (i = 0; i < ps->n; i++) {
		int want = ps->node[i] >= 0 ? ps->node[i] : TIER_NODE_NONE;

		if (pn[ps->id[i]] != want) {
			if (bad < 3)
				diag("page %#" PRIx64 " (id %" PRIu64 "): page_node %u, query %d",
				     ps->addr[i], ps->id[i], pn[ps->id[i]], ps->node[i]);
			bad++;
		}
	}
	return bad;
}

struct moves {
	size_t batches, whole_failures;
	long moved;
};

/* Sends the pages of the sets (interleaved, BATCH per call) whose status
 * is still `pending` through the migrator. */
static void move_sets(struct tier_linux_space *s, struct pageset **sets, size_t nr_sets,
		      int pending, struct moves *mv)
{
	uint64_t pages[BATCH];
	int nodes[BATCH], status[BATCH];
	int *where[BATCH];
	size_t pos[4] = { 0 }, n, k, set;
	bool more = true;

	while (more) {
		n = 0;
		more = false;
		/* Round robin over the sets so that a batch mixes targets. */
		while (n < BATCH) {
			bool any = false;

			for (set = 0; set < nr_sets && n < BATCH; set++) {
				struct pageset *ps = sets[set];

				while (pos[set] < ps->n && ps->status[pos[set]] != pending)
					pos[set]++;
				if (pos[set] == ps->n)
					continue;
				pages[n] = ps->id[pos[set]];
				nodes[n] = ps->target[pos[set]];
				where[n] = &ps->status[pos[set]];
				pos[set]++;
				n++;
				any = true;
			}
			if (!any)
				break;
		}
		if (!n)
			break;
		more = true;
		for (k = 0; k < n; k++)
			status[k] = 12345;
		{
			long r = tier_linux_migrator_ops.move(s, pages, nodes, status, n);

			mv->batches++;
			if (r < 0) {
				mv->whole_failures++;
				diag("move() failed as a whole: %s", strerror((int)-r));
			} else {
				mv->moved += r;
			}
		}
		for (k = 0; k < n; k++)
			*where[k] = status[k];
	}
}

static size_t count_status(const struct pageset *ps, int st)
{
	size_t i, c = 0;

	for (i = 0; i < ps->n; i++)
		c += ps->status[i] == st;
	return c;
}

static struct tier_linux_space *open_space(pid_t pid)
{
	struct tier_linux_space *s = NULL;
	struct tier_err err = { "" };
	int ret;

	ret = tier_linux_space_new(&ctx, 12, &s, &err);
	if (!ret)
		ret = tier_linux_space_update(s, &pid, 1, NULL, NULL, &err);
	tap(ret == 0 && tier_linux_space_nr_procs(s) == 1,
	    "space: update reads the maps of pid %d (%" PRIu64 " pages managed)%s%s", (int)pid,
	    s ? tier_linux_space_nr_pages(s) : 0, ret ? ": " : "", ret ? err.msg : "");
	if (ret) {
		tier_linux_space_destroy(s);
		exit(1);
	}
	ret = tier_linux_space_query(s, tier_linux_space_nr_pages(s), &err);
	tap(ret == 0, "space: query of every page%s%s", ret ? ": " : "", err.msg);
	return s;
}

static int cmd_place(pid_t pid, struct range hot_r, struct range cold_r)
{
	struct tier_linux_migrate_stats st;
	struct pageset hot, cold, *sets[2] = { &hot, &cold };
	struct moves mv = { 0 };
	struct tier_linux_space *s = open_space(pid);
	size_t missing, round, busy;
	uint64_t query_calls;
	double t0;

	missing = pageset_init(&hot, s, pid, hot_r, 0);
	missing += pageset_init(&cold, s, pid, cold_r, 2);
	tap(missing == 0, "space: all %zu hot and %zu cold pages are managed (%zu missing)", hot.n,
	    cold.n, missing);
	tap(!query_nodes(pid, &hot) && !query_nodes(pid, &cold), "move_pages status query");
	diag_nodes("hot before", &hot);
	diag_nodes("cold before", &cold);
	tap(disagreements(s, &hot) + disagreements(s, &cold) == 0,
	    "space: page_node agrees with move_pages for all %zu pages", hot.n + cold.n);

	tier_linux_space_migrate_stats(s, &st);
	query_calls = st.calls;	/* the queries so far count too */
	t0 = now_ms();
	move_sets(s, sets, 2, 1000, &mv);
	/* -EBUSY means "try later": the daemon does so at its next tick. */
	for (round = 0; round < 3 && (busy = count_status(&hot, -EBUSY) +
					      count_status(&cold, -EBUSY)); round++) {
		diag("retrying %zu busy pages", busy);
		move_sets(s, sets, 2, -EBUSY, &mv);
	}
	diag("moved %ld pages in %zu batches, %.0f ms", mv.moved, mv.batches, now_ms() - t0);
	tier_linux_space_migrate_stats(s, &st);
	diag("stats: moved=%" PRIu64 " calls=%" PRIu64 " busy=%" PRIu64 " nomem=%" PRIu64
	     " gone=%" PRIu64 " access_denied=%" PRIu64 " other=%" PRIu64, st.moved_pages,
	     st.calls, st.busy, st.nomem, st.gone, st.access_denied, st.other);
	tap(mv.whole_failures == 0, "migrator: no batch failed as a whole");
	tap((size_t)mv.moved == hot.n + cold.n, "migrator: moved all %zu pages (moved %ld)",
	    hot.n + cold.n, mv.moved);
	if (st.busy)
		printf("ok - migrator: one move_pages call per batch # SKIP %" PRIu64
		       " busy pages made it stop early\n", st.busy);
	else
		tap(st.calls - query_calls == mv.batches,
		    "migrator: one move_pages call per batch (%" PRIu64 " calls, %zu batches)",
		    st.calls - query_calls, mv.batches);
	tap(count_status(&hot, 0) == hot.n && count_status(&cold, 2) == cold.n,
	    "migrator: statuses name the target nodes");
	tap(!query_nodes(pid, &hot) && !query_nodes(pid, &cold), "move_pages status query");
	diag_nodes("hot after", &hot);
	diag_nodes("cold after", &cold);
	tap(count_on(&hot, 0) == hot.n, "hot set on node 0: %zu of %zu pages (move_pages query)",
	    count_on(&hot, 0), hot.n);
	tap(count_on(&cold, 2) == cold.n, "cold pages on node 2: %zu of %zu pages (move_pages query)",
	    count_on(&cold, 2), cold.n);
	tap(disagreements(s, &hot) + disagreements(s, &cold) == 0,
	    "space: page_node follows the migrator's results");
	pageset_free(&hot);
	pageset_free(&cold);
	tier_linux_space_destroy(s);
	return failures ? 1 : 0;
}

static int cmd_full(pid_t pid, struct range hot_r, struct range cold_r)
{
	struct tier_linux_migrate_stats st;
	struct pageset hot, cold, *sets[2] = { &hot, &cold };
	struct moves mv = { 0 };
	struct tier_linux_space *s = open_space(pid);
	uint64_t total = 0, free_pages = 0;
	size_t i, nomem, bad_moved = 0, bad_refused = 0, odd = 0;
	int ret;

	ret = tier_linux_mem_ops.node_pages(s, 0, &total, &free_pages);
	tap(ret == 0 && total > 0 && free_pages < total,
	    "mem ops: node 0 has %" PRIu64 " of %" PRIu64 " pages free", free_pages, total);
	pageset_init(&hot, s, pid, hot_r, 0);
	pageset_init(&cold, s, pid, cold_r, 2);
	tap(free_pages < hot.n, "node 0 has less room (%" PRIu64 " pages) than the hot set (%zu)",
	    free_pages, hot.n);
	move_sets(s, sets, 2, 1000, &mv);
	tier_linux_space_migrate_stats(s, &st);
	diag("moved %ld pages in %zu batches", mv.moved, mv.batches);
	diag("stats: moved=%" PRIu64 " calls=%" PRIu64 " busy=%" PRIu64 " nomem=%" PRIu64
	     " gone=%" PRIu64 " access_denied=%" PRIu64 " other=%" PRIu64, st.moved_pages,
	     st.calls, st.busy, st.nomem, st.gone, st.access_denied, st.other);
	tap(mv.whole_failures == 0, "migrator: no batch failed as a whole");
	nomem = count_status(&hot, -ENOMEM);
	tap(nomem > 0, "target node full: -ENOMEM reported for %zu of %zu pages bound for node 0",
	    nomem, hot.n);
	tap(st.nomem == nomem, "stats count the -ENOMEM pages (%" PRIu64 ")", st.nomem);
	for (i = 0; i < hot.n; i++)
		odd += hot.status[i] != 0 && hot.status[i] != -ENOMEM && hot.status[i] != -EBUSY;
	for (i = 0; i < cold.n; i++)
		odd += cold.status[i] != 2 && cold.status[i] != -EBUSY;
	tap(odd == 0, "every page got its node, -ENOMEM or -EBUSY (%zu others)", odd);
	tap(!query_nodes(pid, &hot) && !query_nodes(pid, &cold), "move_pages status query");
	diag_nodes("hot after", &hot);
	diag_nodes("cold after", &cold);
	for (i = 0; i < hot.n; i++) {
		if (hot.status[i] == 0 && hot.node[i] != 0)
			bad_moved++;
		if (hot.status[i] == -ENOMEM && (hot.node[i] == 0 || hot.node[i] < 0))
			bad_refused++;
	}
	tap(bad_moved == 0, "pages reported moved are on node 0 (%zu are not)", bad_moved);
	tap(bad_refused == 0, "pages refused with -ENOMEM are still present off node 0 (%zu not)",
	    bad_refused);
	tap(count_on(&cold, 2) + count_status(&cold, -EBUSY) == cold.n,
	    "pages for node 2 in the same batches moved after the stop at full node 0 (%zu of %zu)",
	    count_on(&cold, 2), cold.n);
	tap(disagreements(s, &hot) + disagreements(s, &cold) == 0,
	    "space: page_node follows the migrator's results");
	pageset_free(&hot);
	pageset_free(&cold);
	tier_linux_space_destroy(s);
	return failures ? 1 : 0;
}

static bool gone_or_zombie(pid_t pid)
{
	char path[64], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, "State:\tZ") || strstr(buf, "State:\tX");
}

static uint64_t forgotten;

static void count_forget(void *unused, uint64_t first, uint64_t nr)
{
	(void)unused;
	(void)first;
	forgotten += nr;
}

static int cmd_exit(pid_t pid, struct range hot_r)
{
	struct tier_linux_migrate_stats st;
	struct pageset hot, first, rest, *sets[1];
	struct moves mv1 = { 0 }, mv2 = { 0 };
	struct tier_linux_space *s = open_space(pid);
	struct tier_err err = { "" };
	const uint8_t *pn;
	size_t i, absent = 0;
	uint64_t managed;
	int waited, ret;

	pageset_init(&hot, s, pid, hot_r, 0);
	/* First batch, then the rest after the kill. */
	first = hot;
	first.n = hot.n < BATCH ? hot.n : BATCH;
	rest = hot;
	rest.n = hot.n - first.n;
	rest.addr += first.n;
	rest.id += first.n;
	rest.target += first.n;
	rest.status += first.n;
	rest.node += first.n;
	sets[0] = &first;
	move_sets(s, sets, 1, 1000, &mv1);
	tap((size_t)mv1.moved == first.n, "first batch moved before the workload exits (%ld of %zu)",
	    mv1.moved, first.n);

	kill(pid, SIGKILL);
	for (waited = 0; waited < 1000 && !gone_or_zombie(pid); waited++) {
		struct timespec t = { 0, 10 * 1000 * 1000 };

		nanosleep(&t, NULL);
	}
	tap(gone_or_zombie(pid), "workload killed between batches");
	sets[0] = &rest;
	move_sets(s, sets, 1, 1000, &mv2);
	tap(mv2.whole_failures == 0, "migrator: no batch failed as a whole after the exit");
	tap(mv2.moved == 0 && count_status(&rest, -ENOENT) == rest.n,
	    "after the exit: all %zu pages reported gone (-ENOENT), %ld moved", rest.n, mv2.moved);
	tier_linux_space_migrate_stats(s, &st);
	tap(st.gone == rest.n, "stats count them as gone (%" PRIu64 ")", st.gone);
	ret = tier_linux_space_query(s, tier_linux_space_nr_pages(s), &err);
	tap(ret == 0, "query of an exited process is not an error%s%s", ret ? ": " : "", err.msg);
	pn = tier_linux_space_page_node(s);
	for (i = 0; i < hot.n; i++)
		absent += pn[hot.id[i]] == TIER_NODE_NONE;
	tap(absent == hot.n, "its pages read absent in page_node (%zu of %zu)", absent, hot.n);
	/* Ids that map a page (alignment to huge pages may leave a few
	 * free between mappings). */
	managed = 0;
	for (i = 0; i < tier_linux_space_nr_pages(s); i++)
		managed += tier_linux_space_addr(s, i, NULL, NULL) == 0;
	ret = tier_linux_space_update(s, &pid, 1, count_forget, NULL, &err);
	tap(ret == 0 && tier_linux_space_nr_procs(s) == 0 && forgotten == managed,
	    "update drops the exited process and forgets its %" PRIu64 " ids (forgot %" PRIu64 ")",
	    managed, forgotten);
	pageset_free(&hot);
	tier_linux_space_destroy(s);
	return failures ? 1 : 0;
}

static int cmd_select(int argc, char **argv)
{
	pid_t pids[16], *out = NULL;
	const char *cgroups[16];
	struct tier_linux_select sel = { .pids = pids, .cgroups = cgroups };
	const char *expect = NULL, *expect_err = NULL, *label = "";
	pid_t expect_not = 0;
	struct tier_err err = { "" };
	char got[1024] = "";
	size_t nr = 0, i, len = 0;
	int expect_rc = 0, ret;

	for (i = 0; i + 1 < (size_t)argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "--pid") && sel.nr_pids < 16)
			pids[sel.nr_pids++] = atoi(v);
		else if (!strcmp(a, "--cgroup") && sel.nr_cgroups < 16)
			cgroups[sel.nr_cgroups++] = v;
		else if (!strcmp(a, "--exe"))
			sel.exe_pattern = v;
		else if (!strcmp(a, "--min-rss-mib"))
			sel.min_rss_bytes = strtoull(v, NULL, 10) << 20;
		else if (!strcmp(a, "--expect"))
			expect = v;
		else if (!strcmp(a, "--expect-rc"))
			expect_rc = atoi(v);
		else if (!strcmp(a, "--expect-err"))
			expect_err = v;
		else if (!strcmp(a, "--expect-not"))
			expect_not = atoi(v);
		else if (!strcmp(a, "--label"))
			label = v;
		else {
			fprintf(stderr, "migrate_check select: unknown option %s\n", a);
			return 2;
		}
	}
	if (i != (size_t)argc) {
		fprintf(stderr, "migrate_check select: %s needs a value\n", argv[i]);
		return 2;
	}
	ret = tier_linux_select_processes(&ctx, &sel, &out, &nr, &err);
	for (i = 0; i < nr; i++) {
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%d", i ? " " : "",
					(int)out[i]);
		if (len >= sizeof(got))
			len = sizeof(got) - 1;
		if (expect_not && out[i] == expect_not)
			expect_not = -expect_not;	/* found: fails below */
	}
	free(out);
	diag("select %s: rc=%d selected='%s'%s%s", label, ret, got, err.msg[0] ? " err: " : "",
	     err.msg);
	tap(ret == expect_rc, "select %s: returns %d", label, expect_rc);
	if (expect)
		tap(!strcmp(got, expect), "select %s: picks '%s'", label, expect);
	if (expect_err)
		tap(strstr(err.msg, expect_err) != NULL, "select %s: says '%s'", label, expect_err);
	if (expect_not)
		tap(expect_not > 0, "select %s: leaves out pid %d", label,
		    expect_not > 0 ? expect_not : -expect_not);
	return failures ? 1 : 0;
}

/* AnonHugePages of the process (KiB), from <proc>/PID/smaps_rollup. */
static uint64_t anon_huge_kib(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static size_t count_huge(const struct tier_linux_space *s)
{
	const uint8_t *ph = tier_linux_space_page_huge(s);
	uint64_t k, blocks = tier_linux_space_nr_pages(s) >> tier_linux_space_huge_shift(s);
	size_t n = 0;

	for (k = 0; ph && k < blocks; k++)
		n += ph[k] != 0;
	return n;
}

/* Transparent huge pages (memhog --thp): the space sees the kernel's huge
 * pages (PAGEMAP_SCAN) as aligned blocks of ids, one moves whole, the
 * split op splits one through debugfs, and after that a page of it moves
 * alone. */
static int cmd_huge(pid_t pid, struct range hot_r)
{
	const uint64_t hb = 2 * 1024 * 1024;
	struct tier_linux_space *s = open_space(pid);
	struct pageset blk;
	struct range r;
	unsigned hs = tier_linux_space_huge_shift(s);
	uint64_t kib_before, kib_after, first, id1;
	const uint8_t *ph;
	int ret, node1 = 1, st1 = 0;
	long moved;
	size_t i;

	ret = tier_linux_space_scan_huge(s);
	tap(ret == 0, "space: PAGEMAP_SCAN of huge pages (%s)", ret ? strerror(-ret) : "ok");
	kib_before = anon_huge_kib(pid);
	tap(count_huge(s) > 0 && count_huge(s) * 2048 == kib_before,
	    "space: %zu huge pages, the kernel's AnonHugePages %" PRIu64 " KiB", count_huge(s),
	    kib_before);
	r.start = (hot_r.start + hb - 1) & ~(hb - 1);
	r.end = r.start + hb;
	if (pageset_init(&blk, s, pid, r, 1) || r.end > hot_r.end) {
		tap(false, "space: the hot range's first 2 MiB block is managed");
		return 1;
	}
	first = blk.id[0];
	ph = tier_linux_space_page_huge(s);
	tap(hs == 9 && !(first & 511) && ph && ph[first >> hs],
	    "space: the block at %#" PRIx64 " is one huge page, ids %" PRIu64 "..+511", r.start, first);
	for (i = 0; i < blk.n; i++)
		if (blk.id[i] != first + i)
			break;
	tap(i == blk.n, "space: its 512 pages have consecutive ids");

	moved = tier_linux_migrator_ops.move(s, blk.id, blk.target, blk.status, blk.n);
	ret = query_nodes(pid, &blk);
	tap(!ret && count_on(&blk, 1) == blk.n,
	    "migrator: the huge page moved to node 1 (%zu of %zu pages there, %ld moved)",
	    count_on(&blk, 1), blk.n, moved);
	tier_linux_space_scan_huge(s);
	ph = tier_linux_space_page_huge(s);
	tap(ph && ph[first >> hs], "space: still one huge page on node 1 (moved whole)");

	ret = tier_linux_migrator_ops.split(s, first + 5);
	kib_after = anon_huge_kib(pid);
	tap(ret == 0 && !tier_linux_space_page_huge(s)[first >> hs],
	    "migrator: split through debugfs (%s)", ret ? strerror(-ret) : "ok");
	tap(kib_after + 2048 == kib_before, "kernel: AnonHugePages %" PRIu64 " -> %" PRIu64 " KiB",
	    kib_before, kib_after);
	tap(tier_linux_migrator_ops.split(s, first) == -EINVAL, "migrator: a second split is refused");
	tier_linux_space_scan_huge(s);
	tap(!tier_linux_space_page_huge(s)[first >> hs], "space: a rescan sees it split");

	id1 = first + 7;
	node1 = 2;
	moved = tier_linux_migrator_ops.move(s, &id1, &node1, &st1, 1);
	ret = query_nodes(pid, &blk);
	tap(moved == 1 && st1 == 2 && !ret && count_on(&blk, 2) == 1 &&
		    blk.node[7] == 2 && count_on(&blk, 1) == blk.n - 1,
	    "migrator: after the split one page moves alone (%zu on node 2, %zu on node 1)",
	    count_on(&blk, 2), count_on(&blk, 1));
	pageset_free(&blk);
	tier_linux_space_destroy(s);
	return failures ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: migrate_check place|full PID HOT COLD\n"
			"       migrate_check exit PID HOT\n"
			"       migrate_check huge PID HOT\n"
			"       migrate_check select [OPTIONS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct range hot, cold;
	pid_t pid;

	if (argc >= 2 && !strcmp(argv[1], "select"))
		return cmd_select(argc - 2, argv + 2);
	if (argc < 4)
		return usage();
	pid = atoi(argv[2]);
	if (pid <= 0 || !parse_range(argv[3], &hot))
		return usage();
	if (!strcmp(argv[1], "exit") && argc == 4)
		return cmd_exit(pid, hot);
	if (!strcmp(argv[1], "huge") && argc == 4)
		return cmd_huge(pid, hot);
	if (argc != 5 || !parse_range(argv[4], &cold))
		return usage();
	if (!strcmp(argv[1], "place"))
		return cmd_place(pid, hot, cold);
	if (!strcmp(argv[1], "full"))
		return cmd_full(pid, hot, cold);
	return usage();
}
