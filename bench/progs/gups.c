/* gups - a GUPS-like workload for the guest tiering benchmark
 * (bench/guest-tiering.sh, `make bench-guest`).
 *
 *   gups [--array-mib 640] [--hot-mib 96] [--hot-pct 90] [--array-node 1]
 *        [--cold-mib 600] [--cold-node 0] [--seconds 60] [--settle 0]
 *        [--layout contiguous|scattered] [--tierd TIERD_PID] [--go-file FILE]
 *        [--hot-list FILE] [--move-at S]
 *
 * --layout: where the hot set's --hot-mib MiB of pages lie in the array.
 * contiguous (the default): the first --hot-mib MiB. scattered: as many
 * pages, picked one by one by a seeded shuffle of the array's pages (the
 * same pages every run), so that every stretch of the array holds hot and
 * cold pages mixed: --hot-mib / --array-mib of its pages are hot (15% with
 * the defaults, about one page in 6.7).
 *
 * Set-up: maps the array (base pages, no THP) preferring --array-node (mbind
 * MPOL_PREFERRED: with MPOL_BIND, a boot that left the node a few MiB short
 * of the array - its free memory before set-up varied from 650 to 750 MiB
 * between boots of the test guest - got gups OOM-killed; the tail that does
 * not fit goes to the next node, and the first tick's hot share shows it),
 * touches every page, then unbinds it (MPOL_DEFAULT) so that the
 * kernel's NUMA balancing may promote it too (move_pages ignores the policy,
 * NUMA balancing does not). Then maps the cold memory preferring --cold-node
 * (MPOL_PREFERRED: what does not fit goes elsewhere, no OOM kill), touches it
 * and unbinds it. The cold memory is never touched again. Prints
 *   gups pid=P hot=0xA-0xB rest=0xB-0xC cold=0xD-0xE
 *   ready
 * --move-at S: at second S of the run the hot set moves: contiguous, to
 * the array's last --hot-mib MiB; scattered, to as many pages picked by a
 * shuffle of another seed (about --hot-mib / --array-mib of them were hot
 * before). The pages of the first set join the rest; from that tick on,
 * hot0 and hot count the new set, and a line "move t=S" comes before it.
 *
 * With --hot-list, the hot pages' addresses go to FILE first, one per line
 * (hex), for probes that ask tierd about them (tierctl explain).
 * With --go-file, it then waits until FILE holds a number (tierd's pid,
 * or 0 without tierd: the tiering under test is switched on by then) and
 * prints "go tierd_pid=N".
 *
 * Run: random read-modify-write updates of 8-byte words, --hot-pct % of them
 * uniform over the hot set's pages, the rest uniform over the rest of the
 * array. A monitor thread wakes once per second, on
 * absolute deadlines from the first update (late when the guest's CPUs are
 * busy), and prints
 *   tick t=T at=A rate=U hot0=H hot=N rest0=R restn=M cold0=D coldn=K
 *        vm_moved=V vm_migrated=G kd_cpu=Q [tierd_moved=B[*] tierd_cpu=C
 *        tierd_kd=S[*] steps=P[*]]
 * A: seconds since the first update; U: updates per second since the previous tick;
 * H of N hot pages on node 0 (move_pages status queries of every hot page);
 * R of M sampled pages (every 16th) of the rest of the array on node 0;
 * D of K sampled pages (every 16th) of the cold memory on node 0;
 * Q: CPU seconds (user + system) since the first update of every kdamond
 * whose pid DAMON's sysfs lists (/sys/kernel/mm/damon/admin/kdamonds/N/pid,
 * read each tick; one that stopped counts as last read);
 * V: cumulative kernel migrations in pages since the first update (/proc/vmstat
 * numa_pages_migrated, which counts promotions, plus every pgdemote_*);
 * G: cumulative pgmigrate_success since then (every migration, move_pages(2)
 * included); with --tierd, B: tierd's promoted_bytes + demoted_bytes
 * since the first update from tierd's status, asked on its control socket
 * (TIERD_SOCKET, default /run/tierd/tierd.sock; one connection) by a
 * thread of its own every 0.5 s ("*": no answer
 * since the previous tick, the last figure) and C: tierd's CPU seconds (user + system, the status's
 * cpu_seconds, every thread of it) since the first update, read from
 * /proc/TIERD_PID/stat so that a busy tierd is measured too; S: the status's
 * kdamond_cpu_seconds since the first update (-1: the status has none), P:
 * the status's steps since the first update (both from the same poll as B).
 * Stops after --seconds ticks, or --settle seconds after the hot share
 * first reached 90% (0: never early), then prints
 *   end t=T hot0=H hot=N rest0=R rest=M cold0=C cold=K reached90=S followed90=F
 * from full queries (S: first tick with >= 90% of the hot set on node 0,
 * -1 if never; with --move-at, of the first set before the move; F: the
 * seconds from the move to the first tick with >= 90% of the new set on
 * node 0, -1 if never or no move), and with tierd
 *   threads NAME=C ...
 * C: the CPU seconds since the first update of tierd's threads of that
 * name (/proc/TIERD_PID/task/TID/stat, read every tick).
 */
#include <dirent.h>
#include <errno.h>
#include <numaif.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

#define MIB (1024ul * 1024)
#define PAGE 4096ul

enum { BATCH = 1024, REST_STRIDE = 16 };

static char *array, *cold;
static size_t array_len, hot_len, cold_len;
/* The array's pages (indices) of the hot set and of the rest, ascending,
 * and where the contiguous layout's hot set and rest begin: before the
 * move (set 0) and after it (set 1). */
struct pageset {
	uint32_t *hot_pg, *rest_pg;
	size_t nhot_pg, nrest_pg;
	size_t hot_off, rest_off;
};
static struct pageset sets[2];
static int phase;	/* the set the updates go to: 1 from --move-at */
static int move_at = -1, followed90 = -1;
static unsigned long updates; /* written by the updater, read by the monitor */
static volatile int stop;
static int seconds = 60, settle;
static int reached90 = -1;

static int bind_range(void *p, size_t len, int mode, int node)
{
	unsigned long mask = 1ul << node;

	if (mbind(p, len, mode, node >= 0 ? &mask : NULL, node >= 0 ? sizeof(mask) * 8 : 0, 0)) {
		fprintf(stderr, "gups: mbind: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Pages of [p, p+len) on node 0, counting every stride-th page; *total gets
 * the number queried. */
static unsigned long on_node0(char *p, size_t len, size_t stride, unsigned long *total)
{
	void *pages[BATCH];
	int status[BATCH];
	unsigned long n0 = 0, tot = 0;
	size_t off = 0;

	while (off < len) {
		int n = 0;

		for (; n < BATCH && off < len; n++, off += stride * PAGE)
			pages[n] = p + off;
		if (move_pages(0, (unsigned long)n, pages, NULL, status, 0) < 0)
			break;
		for (int i = 0; i < n; i++)
			n0 += status[i] == 0;
		tot += (unsigned long)n;
	}
	*total = tot;
	return n0;
}

/* Pages of the array listed in pg[0..n) on node 0, counting every
 * stride-th; *total gets the number queried. */
static unsigned long list_on_node0(const uint32_t *pg, size_t n, size_t stride,
				   unsigned long *total)
{
	void *pages[BATCH];
	int status[BATCH];
	unsigned long n0 = 0, tot = 0;
	size_t i = 0;

	while (i < n) {
		int k = 0;

		for (; k < BATCH && i < n; k++, i += stride)
			pages[k] = array + (size_t)pg[i] * PAGE;
		if (move_pages(0, (unsigned long)k, pages, NULL, status, 0) < 0)
			break;
		for (int j = 0; j < k; j++)
			n0 += status[j] == 0;
		tot += (unsigned long)k;
	}
	*total = tot;
	return n0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Fills set ps: the first nhot pages (moved: the last), or (scattered)
 * nhot pages picked by a partial Fisher-Yates shuffle with a fixed seed
 * (moved: another). */
static int pick_pages(struct pageset *ps, size_t npages, size_t nhot, int scattered, int moved)
{
	uint32_t *all = malloc(npages * sizeof(*all));
	uint64_t s = moved ? 0x9b05688c2b3e6c1full : 0x2545f4914f6cdd1dull;

	if (!all)
		return -1;
	for (size_t i = 0; i < npages; i++)
		all[i] = (uint32_t)((i + (!scattered && moved ? npages - nhot : 0)) % npages);
	ps->hot_off = !scattered && moved ? (npages - nhot) * PAGE : 0;
	ps->rest_off = !scattered && moved ? 0 : nhot * PAGE;
	for (size_t i = 0; scattered && i < nhot; i++) {
		size_t j;
		uint32_t t;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		j = i + (size_t)(s % (npages - i));
		t = all[i];
		all[i] = all[j];
		all[j] = t;
	}
	qsort(all, nhot, sizeof(*all), cmp_u32);
	qsort(all + nhot, npages - nhot, sizeof(*all), cmp_u32);
	ps->hot_pg = all;
	ps->nhot_pg = nhot;
	ps->rest_pg = all + nhot;
	ps->nrest_pg = npages - nhot;
	return 0;
}

/* From /proc/vmstat: the kernel tiering's moves (numa_pages_migrated, which
 * counts promotions, plus every pgdemote_*) and every migration of a page
 * (pgmigrate_success, which counts move_pages(2) too). */
static void vm_moved(unsigned long *tiering, unsigned long *migrated)
{
	char name[128];
	unsigned long v;
	FILE *f = fopen("/proc/vmstat", "r");

	*tiering = *migrated = 0;
	if (!f)
		return;
	while (fscanf(f, "%127s %lu", name, &v) == 2) {
		if (!strcmp(name, "numa_pages_migrated") || !strncmp(name, "pgdemote_", 9))
			*tiering += v;
		else if (!strcmp(name, "pgmigrate_success"))
			*migrated = v;
	}
	fclose(f);
}

static double json_num(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	return p ? strtod(p + strlen(pat), NULL) : -1;
}

static pid_t tierd_pid;
static const char *go_file;
static const char *hot_list;

/* The user and system CPU seconds in a /proc stat file (fields 14 and
 * 15); false when it cannot be read (the process is gone). */
static bool stat_cpu(const char *path, double *user, double *sys)
{
	char buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after ") ": state is field 3; utime and stime are fields 14, 15 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return false;
	*user = (double)ut / (double)sysconf(_SC_CLK_TCK);
	*sys = (double)st / (double)sysconf(_SC_CLK_TCK);
	return true;
}

/* A process's or kernel thread's CPU seconds (user + system, every
 * thread) from /proc/PID/stat, -1 when it is gone: read even while tierd
 * is busy in a step and does not answer its socket. */
static double proc_cpu(pid_t pid)
{
	char path[64];
	double user, sys;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return stat_cpu(path, &user, &sys) ? user + sys : -1;
}

/* The updating (main) thread's user and system CPU seconds, from
 * /proc/self/task/PID/stat; false when unreadable. Under an emulator the
 * update rate swings 2-5 times between runs of the same set-up in one
 * boot (what the emulator's own caches hold), while the share of the CPU
 * the updates get does not: what tiering takes from the workload - its
 * CPU, the faults and moves it makes the workload take - shows in it. */
static bool updater_cpu(double *user, double *sys)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	return stat_cpu(path, user, sys);
}

static double tierd_cpu(void)
{
	return proc_cpu(tierd_pid);
}

/* A thread or kdamond whose CPU seconds are followed: when first seen
 * and when last read (one that ended keeps its last figure). */
struct followed {
	pid_t id;
	char comm[32];
	double base, last;
};

/* The entry of v[0..*n) for id, added with base when new; NULL when new
 * and v is full. */
static struct followed *follow(struct followed *v, int *n, int max, pid_t id, double base)
{
	int i;

	for (i = 0; i < *n && v[i].id != id; i++)
		;
	if (i == *n) {
		if (*n == max)
			return NULL;
		(*n)++;
		v[i].id = id;
		v[i].comm[0] = 0;
		v[i].base = base;
	}
	return &v[i];
}

/* tierd's threads by name (/proc/PID/task/TID/stat's comm: tierd,
 * tierd-step, tierd-softdirty, ...), each with its CPU seconds when first
 * seen: what each costs since the first update. */
enum { MAX_THREADS = 64 };
static struct followed thr[MAX_THREADS];
static int nthr;

static void tierd_threads(void)
{
	char path[64], buf[1024];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tierd_pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		unsigned long ut, st;
		struct followed *e;
		char *l, *r;
		double c;
		size_t n;
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tierd_pid, (int)tid);
		if (!(f = fopen(path, "r")))
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		l = strchr(buf, '(');
		r = strrchr(buf, ')');
		if (!l || !r || r < l ||
		    sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
			continue;
		c = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		if (!(e = follow(thr, &nthr, MAX_THREADS, tid, c)))
			continue;
		if (!e->comm[0])
			snprintf(e->comm, sizeof(e->comm), "%.*s", (int)(r - l - 1), l + 1);
		e->last = c;
	}
	closedir(d);
}

/* "threads NAME=SECONDS ...": the CPU of tierd's threads since the first
 * update, summed by name. */
static void print_tierd_threads(void)
{
	int i, j;

	tierd_threads();
	printf("threads");
	for (i = 0; i < nthr; i++) {
		double sum = 0;

		for (j = 0; j < i && strcmp(thr[j].comm, thr[i].comm); j++)
			;
		if (j < i)
			continue;	/* printed with the first of its name */
		for (j = i; j < nthr; j++)
			if (!strcmp(thr[j].comm, thr[i].comm))
				sum += thr[j].last - thr[j].base;
		printf(" %s=%.3f", thr[i].comm, sum);
	}
	printf("\n");
}

/* The kdamonds DAMON's sysfs lists, each with its CPU when first seen
 * (those seen at the first call count from then, later ones from their
 * start) and when last read (a kdamond that stopped keeps that). */
enum { MAX_KDAMONDS = 32 };
static struct followed kd[MAX_KDAMONDS];
static int nkd, kd_started;

static double kdamond_cpu(void)
{
	const char *dir = "/sys/kernel/mm/damon/admin/kdamonds";
	char path[128];
	unsigned long nr = 0;
	double sum = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/nr_kdamonds", dir);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%lu", &nr) != 1)
			nr = 0;
		fclose(f);
	}
	for (unsigned long i = 0; i < nr; i++) {
		struct followed *e;
		int pid = -1;
		double c;

		snprintf(path, sizeof(path), "%s/%lu/pid", dir, i);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%d", &pid) != 1)
			pid = -1;
		fclose(f);
		if (pid <= 0 || (c = proc_cpu(pid)) < 0)
			continue;
		if (!(e = follow(kd, &nkd, MAX_KDAMONDS, pid, kd_started ? 0 : c)))
			continue;
		e->last = c;
	}
	kd_started = 1;
	for (int j = 0; j < nkd; j++)
		sum += kd[j].last - kd[j].base;
	return sum;
}

/* tierd's status over its control socket (docs/protocol.md), on one
 * connection kept open: a tierctl process every poll would cost the
 * guest's CPUs, and so the workload, in the tierd run alone. */
static int status_fd = -1;

static int status_request(char *buf, size_t size)
{
	static const char req[] = "{\"v\":1,\"cmd\":\"status\",\"args\":{}}\n";
	size_t n = 0;

	if (status_fd < 0) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		const char *path = getenv("TIERD_SOCKET");

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path ? path : "/run/tierd/tierd.sock");
		status_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (status_fd < 0)
			return -1;
		if (connect(status_fd, (struct sockaddr *)&a, sizeof(a)))
			goto fail;
	}
	if (write(status_fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		goto fail;
	while (n + 1 < size) {
		ssize_t r = read(status_fd, buf + n, size - 1 - n);

		if (r <= 0)
			goto fail;
		n += (size_t)r;
		if (buf[n - 1] == '\n')
			break;
	}
	buf[n] = 0;
	return n && buf[n - 1] == '\n' && strstr(buf, "\"ok\":true") ? 0 : -1;
fail:
	close(status_fd);
	status_fd = -1;
	return -1;
}

/* From tierd's status: promoted_bytes + demoted_bytes (-1 when it did not
 * answer), its kdamond_cpu_seconds in ms (-1: none reported) and its
 * steps. */
static double tierd_moved(long long *kd_ms, long long *steps)
{
	static char buf[65536];
	double k;

	if (status_request(buf, sizeof(buf)))
		return -1;
	k = json_num(buf, "kdamond_cpu_seconds");
	*kd_ms = k < 0 ? -1 : (long long)(k * 1000 + 0.5);
	*steps = (long long)json_num(buf, "steps");
	return json_num(buf, "promoted_bytes") + json_num(buf, "demoted_bytes");
}

/* Its own thread polls the status and the monitor takes the latest
 * answer (-1 until the first one), so that a slow answer never delays a
 * tick. Twice a tick: every answer costs tierd's control thread CPU that
 * the run counts as tierd's (at five a second, 0.9% of a core under TCG
 * in the test guest). */
static long long moved_latest = -1, kd_latest = -1, steps_latest = -1;
static int moved_fresh;

static void *poll_status(void *arg)
{
	(void)arg;
	while (!stop) {
		long long k, st;
		double m = tierd_moved(&k, &st);

		if (m >= 0) {
			__atomic_store_n(&moved_latest, (long long)m, __ATOMIC_RELAXED);
			__atomic_store_n(&kd_latest, k, __ATOMIC_RELAXED);
			__atomic_store_n(&steps_latest, st, __ATOMIC_RELAXED);
			__atomic_store_n(&moved_fresh, 1, __ATOMIC_RELAXED);
		}
		usleep(500000);
	}
	return NULL;
}

static void *monitor(void *arg)
{
	struct timespec t0, prev, now;
	unsigned long last = 0, vm0, mig0, vm, mig;
	double moved0 = 0, cpu0 = 0, user0 = 0, sys0 = 0;
	long long kd0 = -1, steps0 = 0;
	pthread_t poller;

	(void)arg;
	updater_cpu(&user0, &sys0);
	vm_moved(&vm0, &mig0);
	kdamond_cpu();
	if (tierd_pid) {
		moved0 = tierd_moved(&kd0, &steps0);
		cpu0 = tierd_cpu();
		tierd_threads();
		if (moved0 < 0)
			moved0 = 0;
		if (pthread_create(&poller, NULL, poll_status, NULL))
			tierd_pid = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	prev = t0;
	for (int t = 1; t <= seconds; t++) {
		struct timespec dl = { t0.tv_sec + t, t0.tv_nsec };
		unsigned long u, hot, hot0, restn, rest0, coldn = 0, cold0 = 0;
		double dt, user = -1, sys = -1;
		const struct pageset *ps;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR)
			;
		u = __atomic_load_n(&updates, __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (updater_cpu(&user, &sys)) {
			user -= user0;
			sys -= sys0;
		}
		dt = (double)(now.tv_sec - prev.tv_sec) + (double)(now.tv_nsec - prev.tv_nsec) / 1e9;
		prev = now;
		if (t == move_at) {
			__atomic_store_n(&phase, 1, __ATOMIC_RELAXED);
			printf("move t=%d\n", t);
		}
		ps = &sets[__atomic_load_n(&phase, __ATOMIC_RELAXED)];
		hot0 = list_on_node0(ps->hot_pg, ps->nhot_pg, 1, &hot);
		rest0 = list_on_node0(ps->rest_pg, ps->nrest_pg, REST_STRIDE, &restn);
		if (cold_len)
			cold0 = on_node0(cold, cold_len, REST_STRIDE, &coldn);
		vm_moved(&vm, &mig);
		printf("tick t=%d at=%.2f rate=%.0f hot0=%lu hot=%lu rest0=%lu restn=%lu cold0=%lu "
		       "coldn=%lu vm_moved=%lu vm_migrated=%lu kd_cpu=%.3f wl_user=%.2f wl_sys=%.2f", t,
		       (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9,
		       (double)(u - last) / dt, hot0, hot, rest0, restn, cold0, coldn, vm - vm0,
		       mig - mig0, kdamond_cpu(), user, sys);
		last = u;
		if (tierd_pid) {
			double moved = (double)__atomic_load_n(&moved_latest, __ATOMIC_RELAXED);
			long long k = __atomic_load_n(&kd_latest, __ATOMIC_RELAXED);
			long long st = __atomic_load_n(&steps_latest, __ATOMIC_RELAXED);
			int fresh = __atomic_exchange_n(&moved_fresh, 0, __ATOMIC_RELAXED);
			const char *mark = fresh ? "" : "*";

			/* no answer since the last tick: the last figures, marked */
			printf(" tierd_moved=%.0f%s tierd_cpu=%.3f tierd_kd=%.3f%s steps=%lld%s",
			       moved < 0 ? 0 : moved - moved0, mark, tierd_cpu() - cpu0,
			       k < 0 || kd0 < 0 ? -1.0 : (double)(k - kd0) / 1000, mark,
			       st < 0 ? 0 : st - steps0, mark);
			tierd_threads();
		}
		printf("\n");
		fflush(stdout);
		if (reached90 < 0 && (move_at < 0 || t < move_at) && hot0 * 10 >= hot * 9)
			reached90 = t;
		if (move_at > 0 && t >= move_at && followed90 < 0 && hot0 * 10 >= hot * 9)
			followed90 = t - move_at;
		if (settle > 0 && reached90 >= 0 && t >= reached90 + settle &&
		    (move_at < 0 || followed90 >= 0))
			break;
	}
	stop = 1;
	if (tierd_pid)
		pthread_join(poller, NULL);
	return NULL;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	unsigned long array_mib = 640, hot_mib = 96, cold_mib = 600, hot_pct = 90;
	int array_node = 1, cold_node = 0, scattered = 0;
	unsigned long hot0, hot, rest0, rest, cold0, coldn, t_end;
	struct timespec a, b;
	pthread_t th;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "gups: %s needs a value\n", o);
			return 2;
		}
		if (!strcmp(o, "--array-mib"))
			array_mib = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--hot-mib"))
			hot_mib = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--hot-pct"))
			hot_pct = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--array-node"))
			array_node = atoi(v);
		else if (!strcmp(o, "--cold-mib"))
			cold_mib = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--cold-node"))
			cold_node = atoi(v);
		else if (!strcmp(o, "--seconds"))
			seconds = atoi(v);
		else if (!strcmp(o, "--tierd"))
			tierd_pid = atoi(v);
		else if (!strcmp(o, "--go-file"))
			go_file = v;
		else if (!strcmp(o, "--hot-list"))
			hot_list = v;
		else if (!strcmp(o, "--settle"))
			settle = atoi(v);
		else if (!strcmp(o, "--move-at"))
			move_at = atoi(v);
		else if (!strcmp(o, "--layout") && (!strcmp(v, "contiguous") || !strcmp(v, "scattered")))
			scattered = !strcmp(v, "scattered");
		else if (!strcmp(o, "--layout")) {
			fprintf(stderr, "gups: --layout %s: contiguous or scattered\n", v);
			return 2;
		}
		else {
			fprintf(stderr, "gups: unknown option %s\n", o);
			return 2;
		}
		i++;
	}
	if (!hot_mib || hot_mib >= array_mib || hot_pct > 100 || seconds < 1) {
		fprintf(stderr, "gups: need 0 < --hot-mib < --array-mib, --hot-pct <= 100\n");
		return 2;
	}
	if (move_at == 0 || move_at > seconds || move_at < -1) {
		fprintf(stderr, "gups: --move-at %d: a second of the run, 1 to --seconds (%d)\n",
			move_at, seconds);
		return 2;
	}
	array_len = array_mib * MIB;
	hot_len = hot_mib * MIB;
	cold_len = cold_mib * MIB;
	if (pick_pages(&sets[0], array_len / PAGE, hot_len / PAGE, scattered, 0) ||
	    (move_at > 0 && pick_pages(&sets[1], array_len / PAGE, hot_len / PAGE, scattered, 1))) {
		fprintf(stderr, "gups: out of memory for the page lists\n");
		return 1;
	}

	array = mmap(NULL, array_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (array == MAP_FAILED) {
		perror("gups: mmap");
		return 1;
	}
	madvise(array, array_len, MADV_NOHUGEPAGE);
	if (bind_range(array, array_len, MPOL_PREFERRED, array_node))
		return 1;
	for (size_t off = 0; off < array_len; off += PAGE)
		array[off] = 1;
	if (bind_range(array, array_len, MPOL_DEFAULT, -1))
		return 1;
	if (cold_len) {
		cold = mmap(NULL, cold_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (cold == MAP_FAILED) {
			perror("gups: mmap");
			return 1;
		}
		madvise(cold, cold_len, MADV_NOHUGEPAGE);
		if (bind_range(cold, cold_len, MPOL_PREFERRED, cold_node))
			return 1;
		for (size_t off = 0; off < cold_len; off += PAGE)
			cold[off] = 1;
		if (bind_range(cold, cold_len, MPOL_DEFAULT, -1))
			return 1;
	}
	if (hot_list) {
		FILE *h = fopen(hot_list, "w");

		if (!h) {
			fprintf(stderr, "gups: --hot-list %s: %s\n", hot_list, strerror(errno));
			return 1;
		}
		for (size_t i = 0; i < sets[0].nhot_pg; i++)
			fprintf(h, "%#lx\n",
				(unsigned long)(uintptr_t)(array + (size_t)sets[0].hot_pg[i] * PAGE));
		if (fclose(h)) {
			fprintf(stderr, "gups: --hot-list %s: %s\n", hot_list, strerror(errno));
			return 1;
		}
	}
	printf("gups pid=%d layout=%s array=%#lx-%#lx hot_pages=%zu cold=%#lx-%#lx\nready\n",
	       (int)getpid(), scattered ? "scattered" : "contiguous",
	       (unsigned long)(uintptr_t)array, (unsigned long)(uintptr_t)(array + array_len),
	       sets[0].nhot_pg, (unsigned long)(uintptr_t)cold, (unsigned long)(uintptr_t)(cold + cold_len));
	fflush(stdout);
	if (go_file) {
		/* Wait for the tiering under test to be switched on; the file
		 * holds tierd's pid, or 0. */
		FILE *g;

		while (!(g = fopen(go_file, "r")) || fscanf(g, "%d", &tierd_pid) != 1) {
			if (g)
				fclose(g);
			usleep(50000);
		}
		fclose(g);
		printf("go tierd_pid=%d\n", (int)tierd_pid);
		fflush(stdout);
	}

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pthread_create(&th, NULL, monitor, NULL)) {
		fprintf(stderr, "gups: pthread_create failed\n");
		return 1;
	}
	{
		uint64_t nhot = hot_len / 8, nrest = (array_len - hot_len) / 8;
		uint64_t cut = (uint64_t)((double)hot_pct / 100.0 * 65536.0);
		unsigned long n = 0;

		/* scattered: word w of the hot set (or the rest) is word w % 512
		 * of its page w / 512 in the list */
		const uint64_t wpp = PAGE / 8;

		while (!stop) {
			const struct pageset *ps = &sets[__atomic_load_n(&phase, __ATOMIC_RELAXED)];
			const uint32_t *hot_pg = ps->hot_pg, *rest_pg = ps->rest_pg;
			uint64_t *hw = (uint64_t *)(array + ps->hot_off);
			uint64_t *rw = (uint64_t *)(array + ps->rest_off);

			if (scattered) {
				for (int k = 0; k < 4096; k++) {
					uint64_t r = next(), hi = r >> 16, w;

					if ((r & 0xffff) < cut) {
						w = (unsigned __int128)hi * nhot >> 48;
						((uint64_t *)(array + (size_t)hot_pg[w / wpp] * PAGE))[w % wpp] ^= r;
					} else {
						w = (unsigned __int128)hi * nrest >> 48;
						((uint64_t *)(array + (size_t)rest_pg[w / wpp] * PAGE))[w % wpp] ^= r;
					}
				}
			} else {
				for (int k = 0; k < 4096; k++) {
					uint64_t r = next(), hi = r >> 16;

					if ((r & 0xffff) < cut)
						hw[(unsigned __int128)hi * nhot >> 48] ^= r;
					else
						rw[(unsigned __int128)hi * nrest >> 48] ^= r;
				}
			}
			n += 4096;
			__atomic_store_n(&updates, n, __ATOMIC_RELAXED);
		}
	}
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	t_end = (unsigned long)(b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 + 0.5);
	{
		const struct pageset *ps = &sets[phase];

		hot0 = list_on_node0(ps->hot_pg, ps->nhot_pg, 1, &hot);
		rest0 = list_on_node0(ps->rest_pg, ps->nrest_pg, 1, &rest);
	}
	cold0 = cold_len ? on_node0(cold, cold_len, 1, &coldn) : (coldn = 0);
	printf("end t=%lu hot0=%lu hot=%lu rest0=%lu rest=%lu cold0=%lu cold=%lu reached90=%d "
	       "followed90=%d\n",
	       t_end, hot0, hot, rest0, rest, cold0, coldn, reached90, followed90);
	if (tierd_pid)
		print_tierd_threads();
	free(sets[0].hot_pg);
	free(sets[1].hot_pg);
	return 0;
}
