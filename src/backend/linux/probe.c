/* probe.c - measuring memory nodes on Linux: latency and bandwidth. See
 * probe.h for the method. */
#include "backend/linux/probe.h"
#include "backend/linux/clock.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"
#include "core/nodelist.h"

enum {
	LINE_BYTES = 64,		/* one link of the chain per cache line */
	CHASE_WINDOWS = 10,		/* timed windows per latency sample */
	HUGE_BYTES = 2 << 20,		/* buffer alignment: one THP */
	PLACEMENT_SAMPLES = 1024,	/* pages asked about after a run */
};

#define MIB (1024ull * 1024)
#define DEFAULT_STREAM_BYTES (256 * MIB)

void tier_linux_probe_init(struct tier_linux_probe *lp, bool quick)
{
	memset(lp, 0, sizeof(*lp));
	lp->sysfs_root = "/sys";
	lp->seed = 0x7469657264ull;	/* "tierd" */
	/* Many short samples rather than a few long ones: a sample that other
	 * work interrupts is lost, so the shorter the samples the more come
	 * through clean, and the best of them is the figure. */
	if (quick) {
		lp->buffer_bytes = TIER_LINUX_PROBE_QUICK_BUFFER_MB * MIB;
		lp->nr_repeats = 15;
		lp->nr_chase_steps = 20 * 1000;
		lp->stream_bytes = 4 * MIB;
	} else {
		lp->nr_repeats = 11;
		lp->nr_chase_steps = 500 * 1000;
		lp->stream_bytes = DEFAULT_STREAM_BYTES;
	}
}

/* "32768K", "1M", "512" (bytes) as in sysfs cache/indexN/size. */
static uint64_t parse_cache_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'K':
		return v << 10;
	case 'M':
		return v << 20;
	case 'G':
		return v << 30;
	default:
		return v;
	}
}

uint64_t tier_linux_probe_llc_bytes(const char *sysfs_root)
{
	char path[PATH_MAX], buf[64];
	uint64_t best = 0, level, best_level = 0;
	struct dirent *de;
	DIR *dir;
	long sc;

	if (!tier_sysfs_path(path, sizeof(path), sysfs_root, "devices/system/cpu/cpu0/cache") &&
	    (dir = opendir(path))) {
		while ((de = readdir(dir))) {
			uint64_t sz;

			if (strncmp(de->d_name, "index", 5))
				continue;
			if (tier_sysfs_path(path, sizeof(path), sysfs_root,
					    "devices/system/cpu/cpu0/cache/%s/level", de->d_name) ||
			    tier_sysfs_read_u64(path, &level, NULL))
				continue;
			if (tier_sysfs_path(path, sizeof(path), sysfs_root,
					    "devices/system/cpu/cpu0/cache/%s/size", de->d_name) ||
			    tier_sysfs_read(path, buf, sizeof(buf), NULL) <= 0)
				continue;
			sz = parse_cache_size(buf);
			if (level > best_level || (level == best_level && sz > best)) {
				best_level = level;
				best = sz;
			}
		}
		closedir(dir);
	}
	if (best)
		return best;
	sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (sc <= 0)
		sc = sysconf(_SC_LEVEL2_CACHE_SIZE);
	return sc > 0 ? (uint64_t)sc : 0;
}

/* splitmix64: a seeded, reproducible shuffle. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- buffer */

struct buffer {
	void *map;
	size_t map_len;
	char *base;		/* HUGE_BYTES aligned */
	size_t len;
};

static void buffer_unmap(struct buffer *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	memset(b, 0, sizeof(*b));
}

/* Maps len bytes bound to node (no page is touched yet). */
static int buffer_map(struct buffer *b, size_t len, int node, struct tier_err *err)
{
	const size_t bits = sizeof(unsigned long) * CHAR_BIT;
	size_t nr_words = (size_t)node / bits + 1;
	unsigned long *mask;
	uintptr_t p;
	int e;

	memset(b, 0, sizeof(*b));
	b->map_len = len + HUGE_BYTES;
	b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->map == MAP_FAILED) {
		e = errno;
		b->map = NULL;
		return tier_err_set(err, -e, "node %d: mmap of %zu MiB: %s", node,
				    len >> 20, strerror(e));
	}
	p = ((uintptr_t)b->map + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
	b->base = (char *)p;
	b->len = len;
	/* Huge pages keep the chase's loads from also missing the TLB; a
	 * kernel without THP simply ignores the advice. */
	madvise(b->base, b->len, MADV_HUGEPAGE);
	mask = calloc(nr_words, sizeof(*mask));
	if (!mask) {
		buffer_unmap(b);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	mask[node / bits] = 1ul << (node % bits);
	/* maxnode counts one past the mask's bits, as libnuma passes it. */
	if (mbind(b->base, b->len, MPOL_BIND, mask, nr_words * bits + 1, MPOL_MF_STRICT)) {
		e = errno;
		free(mask);
		buffer_unmap(b);
		return tier_err_set(err, -e, "node %d: mbind: %s%s", node, strerror(e),
				    e == EINVAL || e == EPERM ?
				    " (is the node in this process's cpuset?)" : "");
	}
	free(mask);
	return 0;
}

/* Share of a sample of the buffer's pages that sit on node, in bp; -1
 * when the kernel cannot say. */
static int buffer_on_node_bp(const struct buffer *b, int node)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t nr_pages, stride, n, i, on = 0;
	void *pages[PLACEMENT_SAMPLES];
	int status[PLACEMENT_SAMPLES];

	if (page <= 0)
		return -1;
	nr_pages = b->len / (size_t)page;
	if (!nr_pages)
		return -1;
	stride = nr_pages > PLACEMENT_SAMPLES ? nr_pages / PLACEMENT_SAMPLES : 1;
	for (n = 0; n < PLACEMENT_SAMPLES && n * stride < nr_pages; n++)
		pages[n] = b->base + n * stride * (size_t)page;
	if (move_pages(0, n, pages, NULL, status, 0))
		return -1;
	for (i = 0; i < n; i++)
		on += status[i] == node;
	return (int)(on * 10000 / n);
}

/* ---------------------------------------------------------------- threads */

struct cpuset {
	cpu_set_t *set;
	size_t sz;
};

static int cpuset_one(struct cpuset *cs, int cpu)
{
	cs->set = CPU_ALLOC((size_t)cpu + 1);
	if (!cs->set)
		return -ENOMEM;
	cs->sz = CPU_ALLOC_SIZE((size_t)cpu + 1);
	CPU_ZERO_S(cs->sz, cs->set);
	CPU_SET_S((size_t)cpu, cs->sz, cs->set);
	return 0;
}

/* The CPUs of cpus[] that this process may run on, into allowed[]. */
static int allowed_cpus(const int *cpus, size_t nr, int *allowed, size_t *nr_allowed)
{
	size_t ncpu = 1024, i;
	cpu_set_t *set;

	*nr_allowed = 0;
	for (;;) {
		size_t sz;

		set = CPU_ALLOC(ncpu);
		if (!set)
			return -ENOMEM;
		sz = CPU_ALLOC_SIZE(ncpu);
		if (!sched_getaffinity(0, sz, set)) {
			for (i = 0; i < nr; i++)
				if (cpus[i] >= 0 && (size_t)cpus[i] < ncpu &&
				    CPU_ISSET_S((size_t)cpus[i], sz, set))
					allowed[(*nr_allowed)++] = cpus[i];
			CPU_FREE(set);
			return 0;
		}
		CPU_FREE(set);
		if (errno != EINVAL || ncpu > (1u << 20))
			return -errno;
		ncpu *= 2;
	}
}

/* Starts fn(arg) on a thread bound to cpu. Returns 0 or -errno. */
static int start_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	struct cpuset cs;
	pthread_attr_t attr;
	int ret;

	ret = cpuset_one(&cs, cpu);
	if (ret)
		return ret;
	ret = pthread_attr_init(&attr);
	if (!ret) {
		ret = pthread_attr_setaffinity_np(&attr, cs.sz, cs.set);
		if (!ret)
			ret = pthread_create(t, &attr, fn, arg);
		pthread_attr_destroy(&attr);
	}
	CPU_FREE(cs.set);
	return -ret;
}

/* ---------------------------------------------------------------- latency */

struct chase_job {
	char *base;
	size_t nr_lines;
	uint64_t seed;
	uint64_t steps;
	bool build;		/* build the chain first */
	double ns_per_step;	/* the sample: the fastest window's time per load */
	void *end;		/* where the chase stopped; keeps it from being elided */
};

/* Sattolo's shuffle: a random cyclic permutation, so the chain visits every
 * line once before it comes back. Each line first holds its successor's
 * index, then that index is turned into an address in place. */
static void chain_build(char *base, size_t nr_lines, uint64_t seed)
{
	size_t i;

	for (i = 0; i < nr_lines; i++)
		*(uint64_t *)(base + i * LINE_BYTES) = i;
	for (i = nr_lines - 1; i > 0; i--) {
		size_t j = (size_t)(rng_next(&seed) % i);
		uint64_t *a = (uint64_t *)(base + i * LINE_BYTES);
		uint64_t *b = (uint64_t *)(base + j * LINE_BYTES);
		uint64_t t = *a;

		*a = *b;
		*b = t;
	}
	for (i = 0; i < nr_lines; i++) {
		uint64_t *slot = (uint64_t *)(base + i * LINE_BYTES);

		*slot = (uint64_t)(uintptr_t)(base + *slot * LINE_BYTES);
	}
}

static void *chase(void *start, uint64_t steps)
{
	void **p = start;

	for (; steps >= 8; steps -= 8) {
		p = *p; p = *p; p = *p; p = *p;
		p = *p; p = *p; p = *p; p = *p;
	}
	while (steps--)
		p = *p;
	return p;
}

static void *chase_thread(void *arg)
{
	struct chase_job *j = arg;
	uint64_t t0, dt, per, best = UINT64_MAX;
	void *p;
	int w;

	if (j->build) {
		chain_build(j->base, j->nr_lines, j->seed);
		/* Warm up: page tables and TLB, off the clock. */
		j->end = chase(j->base, j->steps / 4 + 1);
		return NULL;
	}
	/* The sample is the fastest of its windows: a window that the
	 * scheduler (or, in a guest, the host) interrupts is lost rather than
	 * averaged in, and short windows more often run through clean. */
	per = j->steps / CHASE_WINDOWS ? j->steps / CHASE_WINDOWS : 1;
	p = j->end ? j->end : j->base;
	for (w = 0; w < CHASE_WINDOWS; w++) {
		t0 = tier_linux_now_ns();
		p = chase(p, per);
		dt = tier_linux_now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	j->end = p;
	j->ns_per_step = (double)best / (double)per;
	return NULL;
}

/* ---------------------------------------------------------------- bandwidth */

/* The threads of one sample wait at a gate until all have started, then
 * run together; if one cannot be started the others are sent home. */
struct stream_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int gate;		/* 0 wait, 1 go, -1 give up */
	bool write;
};

/* One thread's part of a sample: bytes from offset off of its slice,
 * wrapping around the slice's end. */
struct stream_job {
	struct stream_shared *sh;
	char *base;		/* the slice */
	size_t len;
	size_t off;
	uint64_t bytes;
	uint64_t t0, t1;
	uint64_t sink;
};

static uint64_t stream_read(const uint64_t *p, size_t nr_words)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t i;

	for (i = 0; i + 4 <= nr_words; i += 4) {
		a += p[i];
		b += p[i + 1];
		c += p[i + 2];
		d += p[i + 3];
	}
	return a ^ b ^ c ^ d;
}

static void *stream_thread(void *arg)
{
	struct stream_job *j = arg;
	uint64_t left = j->bytes;
	size_t off = j->off;
	int fill = 0, gate;

	pthread_mutex_lock(&j->sh->lock);
	while (!j->sh->gate)
		pthread_cond_wait(&j->sh->cond, &j->sh->lock);
	gate = j->sh->gate;
	pthread_mutex_unlock(&j->sh->lock);
	if (gate < 0)
		return NULL;
	j->t0 = tier_linux_now_ns();
	while (left) {
		size_t chunk = j->len - off;

		if (chunk > left)
			chunk = (size_t)left;
		if (j->sh->write)
			memset(j->base + off, ++fill, chunk);
		else
			j->sink += stream_read((const uint64_t *)(j->base + off), chunk / 8);
		left -= chunk;
		off = off + chunk == j->len ? 0 : off + chunk;
	}
	j->t1 = tier_linux_now_ns();
	return NULL;
}

/* ---------------------------------------------------------------- driver */

/* One node's buffer while an initiator measures. */
struct slot {
	int node;
	struct tier_probe_pair *pair;
	struct buffer buf;
	struct chase_job chase;
	size_t stream_off;	/* where the next bandwidth sample starts */
	double *samples[3];	/* latency, read, write: nr_repeats each */
};

struct run {
	const struct tier_linux_probe *lp;
	struct tier_err *err;
	int initiator;
	const int *cpus;	/* the initiator's CPUs we may run on */
	size_t nr_cpus;
	size_t step, nr_steps;
};

static void progress(struct run *run, const char *stage, int node, unsigned repeat)
{
	struct tier_probe_progress p = {
		.node = node,
		.initiator = run->initiator,
		.stage = stage,
		.repeat = repeat,
		.nr_repeats = run->lp->nr_repeats,
		.step = ++run->step,
		.nr_steps = run->nr_steps,
	};

	if (run->lp->progress)
		run->lp->progress(run->lp->progress_ctx, &p);
}

static int thread_error(struct run *run, int node, const char *what, int ret)
{
	return tier_err_set(run->err, ret, "node %d from node %d: %s: %s",
			    node, run->initiator, what, strerror(-ret));
}

/* Runs the slot's chase job (building the chain first when asked) on the
 * initiator's first CPU. */
static int run_chase(struct run *run, struct slot *sl)
{
	pthread_t t;
	int ret;

	ret = start_pinned(&t, run->cpus[0], chase_thread, &sl->chase);
	if (ret)
		return thread_error(run, sl->node, "starting the chase thread", ret);
	pthread_join(t, NULL);
	return 0;
}

/* One bandwidth sample of a slot: every allowed CPU of the initiator
 * streams stream_bytes / CPUs over its own slice (one pass when
 * stream_bytes is 0), each sample going on where the last one stopped;
 * MB/s over the time from the first start to the last end. */
static int run_stream(struct run *run, struct slot *sl, bool write, double *mbps)
{
	struct stream_shared sh = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.write = write,
	};
	size_t n = run->nr_cpus, slice, i, started;
	const struct buffer *b = &sl->buf;
	uint64_t t0 = UINT64_MAX, t1 = 0, per, want = run->lp->stream_bytes;
	struct stream_job *jobs;
	pthread_t *threads;
	int ret = 0;

	/* Slices of whole huge pages, so two threads never share a page. */
	slice = b->len / n / HUGE_BYTES * HUGE_BYTES;
	if (!slice)
		slice = b->len / n / LINE_BYTES * LINE_BYTES;
	/* Whole 32-byte steps of stream_read(), at least one cache line. */
	per = want ? want / n / 32 * 32 : slice;
	if (per < LINE_BYTES)
		per = LINE_BYTES;
	sl->stream_off %= slice;
	jobs = calloc(n, sizeof(*jobs));
	threads = calloc(n, sizeof(*threads));
	if (!jobs || !threads) {
		ret = tier_err_set(run->err, -ENOMEM, "out of memory");
		goto out_free;
	}
	for (started = 0; started < n; started++) {
		jobs[started] = (struct stream_job){
			.sh = &sh,
			.base = b->base + started * slice,
			.len = slice,
			.off = sl->stream_off,
			.bytes = per,
		};
		ret = start_pinned(&threads[started], run->cpus[started], stream_thread,
				   &jobs[started]);
		if (ret)
			break;
	}
	pthread_mutex_lock(&sh.lock);
	sh.gate = ret ? -1 : 1;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	for (i = 0; i < started; i++) {
		pthread_join(threads[i], NULL);
		if (jobs[i].t0 < t0)
			t0 = jobs[i].t0;
		if (jobs[i].t1 > t1)
			t1 = jobs[i].t1;
	}
	if (ret) {
		ret = thread_error(run, sl->node, "starting the stream threads", ret);
		goto out_free;
	}
	sl->stream_off = (size_t)((sl->stream_off + per) % slice);
	/* bytes per microsecond = MB/s (10^6 bytes per second) */
	*mbps = t1 > t0 ? (double)per * n * 1000.0 / (double)(t1 - t0) : 0;
out_free:
	free(threads);
	free(jobs);
	return ret;
}

static void slots_release(struct slot *slots, size_t nr)
{
	size_t i, k;

	for (i = 0; i < nr; i++) {
		buffer_unmap(&slots[i].buf);
		for (k = 0; k < 3; k++)
			free(slots[i].samples[k]);
	}
	free(slots);
}

/* Maps and prepares one node's buffer: bound to the node, the chain built
 * and walked once by the initiator's CPU. */
static int slot_prepare(struct run *run, const struct tier_topology *topo,
			uint64_t want_bytes, struct slot *sl)
{
	const struct tier_node *node = tier_topology_node(topo, sl->node);
	uint64_t len = want_bytes;
	size_t k;
	int ret;

	if (!node)
		return tier_err_set(run->err, -EINVAL, "node %d: not in the topology", sl->node);
	if (node->mem_free_bytes / 2 < len)
		len = node->mem_free_bytes / 2;
	len = len / HUGE_BYTES * HUGE_BYTES;
	if (len < TIER_LINUX_PROBE_LEAST_BUFFER_MB * MIB)
		return tier_err_set(run->err, -ENOMEM,
				    "node %d: %llu MiB free; the probe needs at least %d MiB (twice its buffer)",
				    sl->node, (unsigned long long)(node->mem_free_bytes >> 20),
				    2 * TIER_LINUX_PROBE_LEAST_BUFFER_MB);
	for (k = 0; k < 3; k++) {
		sl->samples[k] = calloc(run->lp->nr_repeats, sizeof(double));
		if (!sl->samples[k])
			return tier_err_set(run->err, -ENOMEM, "out of memory");
	}
	ret = buffer_map(&sl->buf, (size_t)len, sl->node, run->err);
	if (ret)
		return ret;
	sl->pair->buffer_bytes = len;
	sl->chase = (struct chase_job){
		.base = sl->buf.base,
		.nr_lines = sl->buf.len / LINE_BYTES,
		.seed = run->lp->seed,
		.steps = run->lp->nr_chase_steps,
		.build = true,
	};
	progress(run, "preparing", sl->node, 0);
	ret = run_chase(run, sl);
	sl->chase.build = false;
	return ret;
}

/* Measures every node from one initiator. The samples are interleaved
 * (node 0, 1, 2, node 0, 1, 2, ...), so that background load and slow
 * drift fall on every node alike instead of on whichever ran at the time:
 * the comparison between nodes is what the judgement rests on. */
static int measure_initiator(struct run *run, const struct tier_topology *topo,
			     struct tier_probe_report *r, uint64_t want_bytes)
{
	static const char *const stages[] = { "latency", "read", "write" };
	static const double steps[] = { TIER_PROBE_LATENCY_STEP, TIER_PROBE_BW_STEP,
					TIER_PROBE_BW_STEP };
	const unsigned nr_rep = run->lp->nr_repeats;
	struct slot *slots;
	size_t i, nr = 0, k;
	unsigned rep;
	int ret = 0;

	slots = calloc(r->nr_nodes, sizeof(*slots));
	if (!slots)
		return tier_err_set(run->err, -ENOMEM, "out of memory");
	for (i = 0; i < r->nr_nodes; i++) {
		struct tier_probe_pair *p = tier_probe_node_pair(&r->nodes[i], run->initiator);

		if (!p)
			continue;
		slots[nr].node = r->nodes[i].id;
		slots[nr].pair = p;
		nr++;
	}
	for (i = 0; i < nr && !ret; i++)
		ret = slot_prepare(run, topo, want_bytes, &slots[i]);
	for (k = 0; k < 3 && !ret; k++) {
		for (rep = 0; rep < nr_rep && !ret; rep++) {
			for (i = 0; i < nr && !ret; i++) {
				struct slot *sl = &slots[i];

				progress(run, stages[k], sl->node, rep + 1);
				if (k == 0) {
					ret = run_chase(run, sl);
					sl->samples[0][rep] = sl->chase.ns_per_step;
				} else {
					ret = run_stream(run, sl, k == 2, &sl->samples[k][rep]);
				}
			}
		}
	}
	for (i = 0; i < nr && !ret; i++) {
		struct tier_probe_pair *p = slots[i].pair;
		struct tier_probe_stat *out[3] = {
			&p->latency_ns, &p->read_bw_mbps, &p->write_bw_mbps,
		};

		for (k = 0; k < 3 && !ret; k++)
			ret = tier_probe_stat_compute(slots[i].samples[k], nr_rep, steps[k], out[k]);
		if (ret)
			ret = tier_err_set(run->err, ret, "node %d: no valid samples", slots[i].node);
		p->on_node_bp = buffer_on_node_bp(&slots[i].buf, slots[i].node);
	}
	slots_release(slots, nr);
	return ret;
}

int tier_linux_probe_run(const struct tier_linux_probe *lp,
			 const struct tier_topology *topo,
			 struct tier_probe_report *r, struct tier_err *err)
{
	struct run run = { .lp = lp, .err = err };
	uint64_t want;
	size_t i, nr_pairs = 0;
	int ret = 0;

	if (!lp->nr_repeats)
		return tier_err_set(err, -EINVAL, "repeat count must be at least 1");
	if (!lp->nr_chase_steps)
		return tier_err_set(err, -EINVAL, "chase step count must be at least 1");
	r->llc_bytes = tier_linux_probe_llc_bytes(lp->sysfs_root);
	want = lp->buffer_bytes;
	if (!want) {
		want = r->llc_bytes * 8;
		if (want < TIER_LINUX_PROBE_MIN_BUFFER_MB * MIB)
			want = TIER_LINUX_PROBE_MIN_BUFFER_MB * MIB;
		if (want > TIER_LINUX_PROBE_MAX_BUFFER_MB * MIB)
			want = TIER_LINUX_PROBE_MAX_BUFFER_MB * MIB;
	}
	r->buffer_bytes = want;
	r->nr_repeats = lp->nr_repeats;
	r->nr_chase_steps = lp->nr_chase_steps;
	r->stream_bytes = lp->stream_bytes;
	for (i = 0; i < r->nr_nodes; i++)
		nr_pairs += r->nodes[i].nr_from;
	/* One "preparing" step per pair, then three figures' samples. */
	run.nr_steps = nr_pairs * (1 + 3 * (size_t)lp->nr_repeats);
	for (i = 0; i < r->nr_initiators && !ret; i++) {
		const struct tier_node *ini = tier_topology_node(topo, r->initiators[i].id);
		int *cpus;

		if (!ini || !ini->nr_cpus)
			return tier_err_set(err, -EINVAL, "node %d: no CPUs to measure from",
					    r->initiators[i].id);
		cpus = malloc(ini->nr_cpus * sizeof(*cpus));
		if (!cpus)
			return tier_err_set(err, -ENOMEM, "out of memory");
		ret = allowed_cpus(ini->cpus, ini->nr_cpus, cpus, &run.nr_cpus);
		if (ret) {
			tier_err_set(err, ret, "sched_getaffinity: %s", strerror(-ret));
		} else if (!run.nr_cpus) {
			char list[128];

			tier_nodelist_format(ini->cpus, ini->nr_cpus, list, sizeof(list));
			ret = tier_err_set(err, -EPERM,
					   "node %d: none of its CPUs (%s) is in this process's affinity mask",
					   ini->id, list);
		} else {
			run.initiator = ini->id;
			run.cpus = cpus;
			ret = measure_initiator(&run, topo, r, want);
		}
		free(cpus);
	}
	return ret;
}
