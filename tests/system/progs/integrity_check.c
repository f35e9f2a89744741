/* integrity_check - memory whose every byte is known, rewritten and reshaped
 * while tierd (or the kernel) moves it; for tests/system/integrity.sh and
 * `make soak`.
 *
 *   integrity_check [--workers N] [--mib M] [--seconds S] [--lifetime S]
 *                   [--hot-pages H] [--shift-ms T] [--seed X] [--dir D]
 *                   [--corrupt 1]
 *
 * Runs N worker processes (default 4) for S seconds (default 60). Each maps
 * M MiB (default 16) in four regions of equal size:
 *   anon    private anonymous memory, base pages (MADV_NOHUGEPAGE)
 *   shm     a file in /dev/shm mapped MAP_SHARED, written by the worker and,
 *           block by block, by the worker's forked children
 *   file    a file in D (default /tmp) mapped MAP_PRIVATE: the file's pages
 *           until a page is written, then the worker's own copy
 *   huge    private anonymous memory, 2 MiB aligned, MADV_HUGEPAGE
 * Every page holds 512 words derived from (region seed, page index,
 * generation). While it runs a worker reads a hot window of H pages
 * (default 2048) that jumps to another place every T ms (default 2000), so
 * placement keeps changing, rewrites pages of it (generation + 1), and
 * between those does what races a migration: forks a child that checks the
 * parent's memory as it was at the fork (copy-on-write) and rewrites a block
 * of the shared region, moves a region with mremap, unmaps a chunk and maps
 * it again, drops a chunk with MADV_DONTNEED, frees one with MADV_FREE, and
 * checks every byte of every region every few seconds. A worker exits after
 * its lifetime (default S/3, so workers exit and new ones start while the
 * run goes on), checking everything a last time; each checks everything at
 * the end of the run.
 *
 * What a page may hold after each operation:
 *   rewrite              the next generation
 *   DONTNEED             anon, huge: zeros; file: the file's page again; shm:
 *                        unchanged (the page cache keeps it)
 *   FREE (anon, huge)    the last generation or zeros, until rewritten (or
 *                        both, when the kernel drops the page while it is
 *                        read: then it reads as zeros when read again)
 *   munmap + mmap        anon, huge: zeros (rewritten at once with the next
 *                        generation); file: the file's page; shm: unchanged
 *   mremap               unchanged, at the new address
 * A mismatch prints one line (region, page, word, expected, found; at most
 * 10 per worker). The end prints
 *   integrity workers=W exited=E killed=K forks=F mremaps=R munmaps=U
 *     dontneeds=D frees=R2 pages_written=P pages_checked=C bytes_checked=B
 *     mismatches=M failed_children=F freed_midread=Z
 * on one line (Z: lazily freed pages the kernel dropped while they were
 * being read, found whole zeros when read again: not mismatches); exit 0 only when there was no mismatch and no process of the
 * run (worker or forked child) died of a signal or failed. --corrupt 1 is
 * the checker's own test: the first worker changes one byte of its anon
 * region behind its bookkeeping before its last check, which must then
 * find exactly that mismatch. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul
#define WORDS (PAGE / sizeof(uint64_t))
#define HUGE_SZ (2ul * 1024 * 1024)
#define CHUNK_PAGES 64	/* pages one DONTNEED, FREE or munmap covers */
#define FORK_PAGES 256	/* pages of the shared region a forked child rewrites */
#define MAX_REPORTS 10	/* mismatch lines per process */

enum kind { K_ANON, K_SHM, K_FILE, K_HUGE, NR_KINDS };
static const char *const kind_name[NR_KINDS] = { "anon", "shm", "file", "huge" };

/* What a page is expected to hold. */
enum state {
	ST_GEN,		/* pattern(seed, index, gen) */
	ST_ZERO,	/* zeros */
	ST_GEN_OR_ZERO,	/* after MADV_FREE: the pattern or zeros */
};

struct region {
	enum kind kind;
	char *p;
	size_t nr_pages;
	uint64_t seed;
	uint32_t *gen;		/* per page */
	uint8_t *state;		/* per page, enum state */
	int fd;			/* shm, file: the backing file */
};

struct counts {
	unsigned long forks, mremaps, munmaps, dontneeds, frees;
	unsigned long pages_written, pages_checked, mismatches, failed_children;
	unsigned long freed_midread;	/* lazily freed pages dropped while read */
};

struct worker {
	int id;
	struct region r[NR_KINDS];
	size_t total_pages;
	uint64_t rng;
	struct counts c;
	unsigned reports;
	/* The shared block a forked child rewrites: [busy_lo, busy_hi) of the
	 * shm region, untouched by the worker until the child is reaped. */
	pid_t child;
	size_t busy_lo, busy_hi;
};

struct opts {
	int workers;
	unsigned long mib;
	double seconds, lifetime;
	size_t hot_pages;
	unsigned shift_ms;
	uint64_t seed;
	const char *dir;
	bool corrupt;
};

/* --- the pattern ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(struct worker *w)
{
	w->rng += 0x9e3779b97f4a7c15ull;
	return mix64(w->rng);
}

static uint64_t page_base(uint64_t seed, size_t idx, uint32_t gen)
{
	return mix64(seed ^ mix64((uint64_t)idx * 0x9e3779b97f4a7c15ull + ((uint64_t)gen << 32)));
}

/* Word k of a page is base + k * odd constant: a word moved within the
 * page, a page of another index or generation, a torn copy all differ. */
#define WORD_STEP 0xd1b54a32d192ed03ull

static void page_fill(char *page, uint64_t seed, size_t idx, uint32_t gen)
{
	uint64_t *w = (uint64_t *)page, b = page_base(seed, idx, gen);
	size_t k;

	for (k = 0; k < WORDS; k++)
		w[k] = b + k * WORD_STEP;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- checking -------------------------------------------------------------- */

static void report(struct worker *w, const struct region *r, size_t idx, size_t k,
		   uint64_t want, uint64_t got, const char *what)
{
	if (w->reports++ >= MAX_REPORTS)
		return;
	fprintf(stderr,
		"integrity_check: mismatch: pid %d worker %d region %s page %zu (%p) word %zu: "
		"expected %s %#llx (generation %u), found %#llx\n",
		(int)getpid(), w->id, kind_name[r->kind], idx, (void *)(r->p + idx * PAGE), k,
		what, (unsigned long long)want, r->gen[idx], (unsigned long long)got);
}

static bool page_zero(const volatile uint64_t *p)
{
	size_t k;

	for (k = 0; k < WORDS; k++)
		if (p[k])
			return false;
	return true;
}

/* Checks one page against its state; returns 1 on a mismatch. */
static int page_check(struct worker *w, const struct region *r, size_t idx)
{
	const uint64_t *p = (const uint64_t *)(r->p + idx * PAGE);
	uint64_t b = page_base(r->seed, idx, r->gen[idx]);
	bool zero = true, gen = true;
	size_t k, bad_zero = WORDS, bad_gen = WORDS;

	for (k = 0; k < WORDS; k++) {
		if (p[k] != 0 && bad_zero == WORDS) {
			zero = false;
			bad_zero = k;
		}
		if (p[k] != b + k * WORD_STEP && bad_gen == WORDS) {
			gen = false;
			bad_gen = k;
		}
		if (!zero && !gen)
			break;
	}
	w->c.pages_checked++;
	switch (r->state[idx]) {
	case ST_GEN:
		if (gen)
			return 0;
		report(w, r, idx, bad_gen, b + bad_gen * WORD_STEP, p[bad_gen], "pattern");
		return 1;
	case ST_ZERO:
		if (zero)
			return 0;
		report(w, r, idx, bad_zero, 0, p[bad_zero], "zero");
		return 1;
	default:
		if (zero || gen)
			return 0;
		/* A lazily freed page may be dropped while it is being read:
		 * the words read before hold the pattern, those after read
		 * from the zero page. Then the whole page reads as zeros now;
		 * a page torn while still mapped does not. */
		if (bad_gen >= bad_zero && page_zero(p)) {
			w->c.freed_midread++;
			return 0;
		}
		report(w, r, idx, bad_gen, b + bad_gen * WORD_STEP, p[bad_gen], "pattern or zero");
		return 1;
	}
}

static bool busy(const struct worker *w, const struct region *r, size_t idx)
{
	return r->kind == K_SHM && w->child > 0 && idx >= w->busy_lo && idx < w->busy_hi;
}

/* Every page of every region (but a shared block a child holds). */
static void check_all(struct worker *w)
{
	size_t i, k;

	for (k = 0; k < NR_KINDS; k++)
		for (i = 0; i < w->r[k].nr_pages; i++)
			if (!busy(w, &w->r[k], i))
				w->c.mismatches += (unsigned long)page_check(w, &w->r[k], i);
}

static void page_write(struct worker *w, struct region *r, size_t idx)
{
	r->gen[idx]++;
	r->state[idx] = ST_GEN;
	page_fill(r->p + idx * PAGE, r->seed, idx, r->gen[idx]);
	w->c.pages_written++;
}

/* --- setting up ------------------------------------------------------------ */

/* len bytes of address space at an address aligned to align. */
static char *map_aligned(size_t len, size_t align, int prot, int flags, int fd, off_t off)
{
	char *p = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + len, (size_t)(p + len + align - (a + len)));
	if (mmap(a, len, prot, flags | MAP_FIXED, fd, off) == MAP_FAILED)
		return NULL;
	return a;
}

/* Maps [first, first + n) of region r at its place (MAP_FIXED when the
 * region exists) with the region's kind of mapping. */
static int map_pages(struct region *r, size_t first, size_t n, bool fixed)
{
	int prot = PROT_READ | PROT_WRITE;
	size_t len = n * PAGE;
	char *p;

	switch (r->kind) {
	case K_SHM:
	case K_FILE: {
		int flags = r->kind == K_SHM ? MAP_SHARED : MAP_PRIVATE;

		if (fixed)
			p = mmap(r->p + first * PAGE, len, prot, flags | MAP_FIXED, r->fd,
				 (off_t)(first * PAGE));
		else
			p = mmap(NULL, len, prot, flags, r->fd, 0);
		break;
	}
	default:
		if (fixed)
			p = mmap(r->p + first * PAGE, len, prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		else
			p = map_aligned(len, HUGE_SZ, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p && p != MAP_FAILED)
			madvise(p, len, r->kind == K_HUGE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		break;
	}
	if (!p || p == MAP_FAILED) {
		fprintf(stderr, "integrity_check: mmap %s: %s\n", kind_name[r->kind], strerror(errno));
		return -1;
	}
	if (!fixed)
		r->p = p;
	return 0;
}

/* A backing file of n pages holding generation 0 of every page. */
static int make_file(struct region *r, const char *path)
{
	char page[PAGE] __attribute__((aligned(8)));
	size_t i;

	r->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->fd < 0) {
		fprintf(stderr, "integrity_check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	unlink(path);
	for (i = 0; i < r->nr_pages; i++) {
		page_fill(page, r->seed, i, 0);
		if (pwrite(r->fd, page, PAGE, (off_t)(i * PAGE)) != (ssize_t)PAGE) {
			fprintf(stderr, "integrity_check: %s: write: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int worker_setup(struct worker *w, const struct opts *o, uint64_t seed)
{
	size_t per = o->mib * 1024 * 1024 / NR_KINDS / PAGE, i, k;
	char path[256];

	/* Whole huge pages in every region keeps the sizes equal. */
	per = (per + 511) / 512 * 512;
	w->rng = seed;
	w->child = -1;
	for (k = 0; k < NR_KINDS; k++) {
		struct region *r = &w->r[k];

		r->kind = (enum kind)k;
		r->nr_pages = per;
		r->seed = rnd(w);
		r->fd = -1;
		r->gen = calloc(per, sizeof(*r->gen));
		r->state = calloc(per, 1);
		if (!r->gen || !r->state)
			return -1;
		if (k == K_SHM || k == K_FILE) {
			snprintf(path, sizeof(path), "%s/integrity.%d.%s",
				 k == K_SHM ? "/dev/shm" : o->dir, (int)getpid(), kind_name[k]);
			if (make_file(r, path))
				return -1;
		}
		if (map_pages(r, 0, per, false))
			return -1;
		/* anon, huge: generation 0 written; shm, file: the file's. */
		if (k == K_ANON || k == K_HUGE)
			for (i = 0; i < per; i++)
				page_fill(r->p + i * PAGE, r->seed, i, 0);
		w->total_pages += per;
	}
	return 0;
}

/* Region and page of global index g (the regions laid end to end). */
static struct region *locate(struct worker *w, size_t g, size_t *idx)
{
	size_t k;

	for (k = 0; k < NR_KINDS - 1 && g >= w->r[k].nr_pages; k++)
		g -= w->r[k].nr_pages;
	*idx = g;
	return &w->r[k];
}

/* --- the racing operations ------------------------------------------------- */

/* A child: checks the private regions as they were at the fork, and the
 * shared block; rewrites the block (the worker counts that generation
 * once the child exited 0). */
static void fork_child(struct worker *w)
{
	struct region *s = &w->r[K_SHM];
	size_t i, k;

	w->reports = 0;
	w->c.mismatches = 0;
	for (k = 0; k < NR_KINDS; k++)
		if (k != K_SHM)
			for (i = 0; i < w->r[k].nr_pages; i++)
				w->c.mismatches += (unsigned long)page_check(w, &w->r[k], i);
	for (i = w->busy_lo; i < w->busy_hi; i++)
		w->c.mismatches += (unsigned long)page_check(w, s, i);
	for (i = w->busy_lo; i < w->busy_hi; i++)
		page_write(w, s, i);
	for (i = w->busy_lo; i < w->busy_hi; i++)
		w->c.mismatches += (unsigned long)page_check(w, s, i);
	_exit(w->c.mismatches ? 1 : 0);
}

static void reap_child(struct worker *w, bool block)
{
	int status;
	pid_t p;
	size_t i;

	if (w->child <= 0)
		return;
	p = waitpid(w->child, &status, block ? 0 : WNOHANG);
	if (p == 0)
		return;
	if (p == w->child && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		/* The child wrote the next generation of its block. */
		for (i = w->busy_lo; i < w->busy_hi; i++) {
			w->r[K_SHM].gen[i]++;
			w->r[K_SHM].state[i] = ST_GEN;
		}
	} else {
		fprintf(stderr, "integrity_check: worker %d: forked child %d %s %d\n", w->id,
			(int)w->child, p == w->child && WIFSIGNALED(status) ? "killed by signal" : "failed, status",
			p == w->child && WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		w->c.failed_children++;
		/* What the block holds is unknown now: write it again. */
		for (i = w->busy_lo; i < w->busy_hi; i++)
			page_write(w, &w->r[K_SHM], i);
	}
	w->child = -1;
}

static void op_fork(struct worker *w)
{
	size_t n = w->r[K_SHM].nr_pages;
	pid_t p;

	if (w->child > 0)
		return;
	w->busy_lo = rnd(w) % (n - FORK_PAGES);
	w->busy_hi = w->busy_lo + FORK_PAGES;
	fflush(NULL);
	p = fork();
	if (p < 0)
		return;
	if (p == 0)
		fork_child(w);
	w->child = p;
	w->c.forks++;
}

/* A region other than the shared one while a child holds part of it. */
static struct region *pick_region(struct worker *w)
{
	struct region *r;

	do
		r = &w->r[rnd(w) % NR_KINDS];
	while (r->kind == K_SHM && w->child > 0);
	return r;
}

/* Moves [from, from + len) to [to, to + len) with mremap, one mapping
 * (VMA) at a time as /proc/self/maps lists them: a region whose chunks
 * were unmapped and mapped again may be several, and one mremap call
 * moves only one. Returns 0 or -1. */
static int move_range(char *from, size_t len, char *to)
{
	uintptr_t lo = (uintptr_t)from, hi = lo + len, a, b;
	uintptr_t starts[256], ends[256];
	size_t n = 0, i;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (n < 256 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && b > lo && a < hi) {
			starts[n] = a < lo ? lo : a;
			ends[n++] = b > hi ? hi : b;
		}
	fclose(f);
	for (i = 0; i < n; i++)
		if (mremap((void *)starts[i], ends[i] - starts[i], ends[i] - starts[i],
			   MREMAP_MAYMOVE | MREMAP_FIXED, to + (starts[i] - lo)) == MAP_FAILED) {
			fprintf(stderr, "integrity_check: mremap %#lx-%#lx: %s\n",
				(unsigned long)starts[i], (unsigned long)ends[i], strerror(errno));
			return -1;
		}
	return 0;
}

static void op_mremap(struct worker *w)
{
	struct region *r = pick_region(w);
	size_t len = r->nr_pages * PAGE;
	char *to = map_aligned(len, HUGE_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!to)
		return;
	if (move_range(r->p, len, to))
		exit(1);
	r->p = to;
	w->c.mremaps++;
}

static void chunk(struct worker *w, struct region **r, size_t *first)
{
	*r = pick_region(w);
	*first = rnd(w) % ((*r)->nr_pages - CHUNK_PAGES);
}

/* After a chunk lost its private pages: what each page holds now. */
static void chunk_dropped(struct region *r, size_t first, size_t n)
{
	size_t i;

	for (i = first; i < first + n; i++) {
		if (r->kind == K_ANON || r->kind == K_HUGE) {
			r->state[i] = ST_ZERO;
		} else if (r->kind == K_FILE) {
			r->gen[i] = 0;
			r->state[i] = ST_GEN;
		}
	}
}

static void op_munmap(struct worker *w)
{
	struct region *r;
	size_t first, i;

	chunk(w, &r, &first);
	if (munmap(r->p + first * PAGE, CHUNK_PAGES * PAGE) ||
	    map_pages(r, first, CHUNK_PAGES, true)) {
		fprintf(stderr, "integrity_check: munmap/mmap: %s\n", strerror(errno));
		exit(1);
	}
	chunk_dropped(r, first, CHUNK_PAGES);
	if (r->kind == K_ANON || r->kind == K_HUGE)
		for (i = first; i < first + CHUNK_PAGES; i++)
			page_write(w, r, i);
	w->c.munmaps++;
}

static void op_dontneed(struct worker *w)
{
	struct region *r;
	size_t first;

	chunk(w, &r, &first);
	if (madvise(r->p + first * PAGE, CHUNK_PAGES * PAGE, MADV_DONTNEED))
		return;
	chunk_dropped(r, first, CHUNK_PAGES);
	w->c.dontneeds++;
}

static void op_free(struct worker *w)
{
	struct region *r = &w->r[rnd(w) % 2 ? K_ANON : K_HUGE];
	size_t first = rnd(w) % (r->nr_pages - CHUNK_PAGES), i;

	if (madvise(r->p + first * PAGE, CHUNK_PAGES * PAGE, MADV_FREE))
		return;
	for (i = first; i < first + CHUNK_PAGES; i++)
		if (r->state[i] == ST_GEN)
			r->state[i] = ST_GEN_OR_ZERO;
	w->c.frees++;
}

/* --- a worker -------------------------------------------------------------- */

static volatile uint64_t sink;

/* Runs until the monotonic time until, then hands the counts to *out (the
 * parent's shared memory). */
static void worker_run(struct worker *w, const struct opts *o, double until, struct counts *out)
{
	size_t hot = o->hot_pages < w->total_pages ? o->hot_pages : w->total_pages;
	size_t hot_start = 0, j, idx;
	double next_shift = 0, next_check = now_s() + 5, next_op = 0, t;
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	struct region *r;

	while ((t = now_s()) < until) {
		if (t >= next_shift) {
			hot_start = rnd(w) % (w->total_pages - hot + 1);
			next_shift = t + o->shift_ms / 1000.0;
		}
		/* Read the hot window, rewrite an eighth of it. */
		for (j = 0; j < hot; j++) {
			r = locate(w, hot_start + j, &idx);
			if (busy(w, r, idx))
				continue;
			if (rnd(w) % 8 == 0)
				page_write(w, r, idx);
			else
				sink += *(volatile uint64_t *)(r->p + idx * PAGE + (j % WORDS) * 8);
		}
		reap_child(w, false);
		if (t >= next_op) {
			switch (rnd(w) % 6) {
			case 0: op_fork(w); break;
			case 1: op_mremap(w); break;
			case 2: op_munmap(w); break;
			case 3: op_dontneed(w); break;
			case 4: op_free(w); break;
			default: break;
			}
			next_op = t + 0.05 + (double)(rnd(w) % 100) / 1000.0;
		}
		if (t >= next_check) {
			check_all(w);
			next_check = t + 5;
		}
		/* Room for tierd and its kdamond on a small emulated guest:
		 * with 2 ms here tierd moved a third of what it does with 10. */
		nanosleep(&pause, NULL);
	}
	reap_child(w, true);
	if (o->corrupt && w->id == 0)
		/* The self-test: one byte changed behind the bookkeeping's back. */
		w->r[K_ANON].p[w->r[K_ANON].nr_pages / 2 * PAGE + 100] ^= 0x10;
	check_all(w);
	*out = w->c;
}

/* --- the run --------------------------------------------------------------- */

static int parse(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .workers = 4, .mib = 16, .seconds = 60, .lifetime = 0,
			    .hot_pages = 2048, .shift_ms = 2000, .seed = 1, .dir = "/tmp" };
	for (i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!v) {
			fprintf(stderr, "integrity_check: %s needs a value\n", a);
			return -1;
		}
		if (!strcmp(a, "--workers"))
			o->workers = atoi(v);
		else if (!strcmp(a, "--mib"))
			o->mib = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(a, "--lifetime"))
			o->lifetime = atof(v);
		else if (!strcmp(a, "--hot-pages"))
			o->hot_pages = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--shift-ms"))
			o->shift_ms = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--dir"))
			o->dir = v;
		else if (!strcmp(a, "--corrupt"))
			o->corrupt = atoi(v) != 0;
		else {
			fprintf(stderr, "integrity_check: unknown option %s\n", a);
			return -1;
		}
	}
	if (o->workers < 1 || o->workers > 256 || o->mib < 4 || o->seconds <= 0 ||
	    !o->hot_pages || !o->shift_ms) {
		fprintf(stderr, "integrity_check: need 1..256 workers, --mib >= 4, "
				"--seconds, --hot-pages and --shift-ms above 0\n");
		return -1;
	}
	if (o->lifetime <= 0)
		o->lifetime = o->seconds / 3;
	return 0;
}

static pid_t spawn(const struct opts *o, int id, double until, struct counts *out)
{
	pid_t p = fork();

	if (p != 0)
		return p;
	{
		static struct worker w;

		w.id = id;
		if (worker_setup(&w, o, o->seed + (uint64_t)id * 1000003)) {
			fprintf(stderr, "integrity_check: worker %d: setup failed\n", id);
			_exit(2);
		}
		worker_run(&w, o, until, out);
		_exit(0);
	}
}

static void add(struct counts *sum, struct counts *c)
{
	sum->forks += c->forks;
	sum->mremaps += c->mremaps;
	sum->munmaps += c->munmaps;
	sum->dontneeds += c->dontneeds;
	sum->frees += c->frees;
	sum->pages_written += c->pages_written;
	sum->pages_checked += c->pages_checked;
	sum->mismatches += c->mismatches;
	sum->failed_children += c->failed_children;
	sum->freed_midread += c->freed_midread;
	memset(c, 0, sizeof(*c));
}

int main(int argc, char **argv)
{
	unsigned long started = 0, exited = 0, killed = 0, failed = 0;
	int running = 0, i, status;
	double start = now_s(), end, until;
	struct counts sum = { 0 }, *slot;
	struct opts o;
	pid_t *pids;

	if (parse(argc, argv, &o))
		return 2;
	end = start + o.seconds;
	pids = calloc((size_t)o.workers, sizeof(*pids));
	/* Each worker's counts, in memory it shares with this process. */
	slot = mmap(NULL, (size_t)o.workers * sizeof(*slot), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!pids || slot == MAP_FAILED)
		return 1;
	memset(slot, 0, (size_t)o.workers * sizeof(*slot));
	/* The first workers' lifetimes are staggered, so exits spread over the run. */
	for (i = 0; i < o.workers; i++) {
		until = start + o.lifetime * (1.0 + (double)i / o.workers);
		pids[i] = spawn(&o, (int)started++, until < end ? until : end, &slot[i]);
		running++;
	}
	printf("integrity_check pid=%d workers=%d mib=%lu\nready\n", (int)getpid(), o.workers, o.mib);
	fflush(stdout);
	while (running > 0) {
		pid_t p = wait(&status);

		if (p < 0)
			break;
		for (i = 0; i < o.workers && pids[i] != p; i++)
			;
		if (i == o.workers)
			continue;
		running--;
		exited++;
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "integrity_check: worker %d killed by signal %d\n", (int)p,
				WTERMSIG(status));
			killed++;
		} else if (WEXITSTATUS(status)) {
			fprintf(stderr, "integrity_check: worker %d exited with status %d\n", (int)p,
				WEXITSTATUS(status));
			failed++;
		}
		add(&sum, &slot[i]);
		if (now_s() + 1 < end) {
			until = now_s() + o.lifetime;
			pids[i] = spawn(&o, (int)started++, until < end ? until : end, &slot[i]);
			running++;
		}
	}
	printf("integrity workers=%lu exited=%lu killed=%lu failed=%lu forks=%lu mremaps=%lu "
	       "munmaps=%lu dontneeds=%lu frees=%lu pages_written=%lu pages_checked=%lu "
	       "bytes_checked=%llu mismatches=%lu failed_children=%lu freed_midread=%lu\n",
	       started, exited, killed, failed, sum.forks, sum.mremaps, sum.munmaps,
	       sum.dontneeds, sum.frees, sum.pages_written, sum.pages_checked,
	       (unsigned long long)sum.pages_checked * PAGE, sum.mismatches, sum.failed_children,
	       sum.freed_midread);
	return sum.mismatches || killed || failed || sum.failed_children || exited != started;
}
