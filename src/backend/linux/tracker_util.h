/* tracker_util.h - internal helpers shared by the Linux trackers (not part
 * of the backend's interface): writing control files, the monotonic clock,
 * the mappings a tracker watches, pagemap entries, and the pure decoders
 * the unit tests call directly.
 *
 * Paths are always built from the roots in struct tier_linux_ctx, so the
 * tests run every tracker against fixture trees.
 */
#ifndef TIER_LINUX_TRACKER_UTIL_H
#define TIER_LINUX_TRACKER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/clock.h"
#include "backend/linux/tracker.h"
#include "core/err.h"

/* The trackers (tracker.c lists them in tier_linux_trackers[]). */
extern const struct tier_linux_tracker_ops tier__linux_tracker_damon;
extern const struct tier_linux_tracker_ops tier__linux_tracker_idle;
extern const struct tier_linux_tracker_ops tier__linux_tracker_softdirty;
extern const struct tier_linux_tracker_ops tier__linux_tracker_perf;
extern const struct tier_linux_tracker_ops tier__linux_tracker_combo;
extern const struct tier_linux_tracker_ops tier__linux_tracker_hint;
extern const struct tier_linux_tracker_ops tier__linux_tracker_combo_hint;

/* ---- files ------------------------------------------------------------ */

/* Writes val to the existing file at path (O_WRONLY | O_TRUNC, never
 * creates it: a missing control file is an error, -ENOENT). Returns 0 or
 * -errno with err naming the path and the value. */
int tier__write_str(const char *path, const char *val, struct tier_err *err);

/* Reads a one-line file into buf with the trailing newline removed.
 * Returns 0 or -errno. */
int tier__read_line(const char *path, char *buf, size_t sz, struct tier_err *err);

/* True when <procfs_root>/PID exists. */
bool tier__pid_alive(const struct tier_linux_ctx *ctx, pid_t pid);

/* ---- mappings --------------------------------------------------------- */

struct tier__vma {
	uint64_t start, end;
};

/* The mappings of pid that trackers watch: those the address space
 * manages (maps.h: private anonymous memory, heap, stack, private writable
 * file mappings; not special mappings, device files or guard pages).
 * Reads <procfs_root>/PID/maps into *out (malloc'd, caller frees). A
 * process that is gone gives -ESRCH, a malformed line -EINVAL. Returns 0
 * or -errno. */
int tier__vmas_read(const struct tier_linux_ctx *ctx, pid_t pid, struct tier__vma **out,
		    size_t *n, struct tier_err *err);

/* ---- pagemap ---------------------------------------------------------- */

/* Bits of a /proc/PID/pagemap entry (Documentation/admin-guide/mm/pagemap.rst). */
#define TIER__PM_PRESENT	(1ull << 63)
#define TIER__PM_SWAPPED	(1ull << 62)
#define TIER__PM_FILE		(1ull << 61)
#define TIER__PM_EXCLUSIVE	(1ull << 56)
#define TIER__PM_SOFT_DIRTY	(1ull << 55)
#define TIER__PM_PFN_MASK	((1ull << 55) - 1)

/* /proc/kpageflags bits used here. */
#define TIER__KPF_COMPOUND_HEAD	15
#define TIER__KPF_COMPOUND_TAIL	16

/* Reads n pagemap entries for the pages starting at vaddr (page_shift
 * 12) from the open pagemap fd. A short file (fixtures) reads as zeros.
 * Returns 0 or -errno. */
int tier__pagemap_read(int fd, uint64_t vaddr, uint64_t *entries, size_t n);

/* Walks the pagemap entries of the mappings of pid that trackers watch
 * (tier__vmas_read), in address order: fn(arg, vaddr, entries, n) per chunk
 * of at most 512 pages; a non-zero return from fn stops the walk and is
 * returned. -ESRCH when the process is gone. Returns 0 or -errno. */
int tier__pagemap_walk(const struct tier_linux_ctx *ctx, pid_t pid,
		       int (*fn)(void *arg, uint64_t vaddr, const uint64_t *pm, size_t n),
		       void *arg, struct tier_err *err);

/* The processes a page-walking tracker watches, with the time each one's
 * bits were last reset. */
struct tier__target {
	pid_t pid;
	uint64_t since_us;
};

struct tier__targets {
	struct tier__target *v;
	size_t n;
};

/* Replaces the set with pids (duplicates and processes that are gone
 * dropped). Processes already in the set keep their since_us; for a new
 * one reset(arg, pid, err) runs first (it resets the bits, so that the
 * first scan covers only the time since): -ESRCH from it drops the
 * process, another error leaves the set as it was and is returned.
 * Returns 0 or -errno (-ENOMEM). */
int tier__targets_update(struct tier__targets *set, const struct tier_linux_ctx *ctx,
			 const pid_t *pids, size_t n,
			 int (*reset)(void *arg, pid_t pid, struct tier_err *err), void *arg,
			 struct tier_err *err);
void tier__targets_release(struct tier__targets *set);

/* Copies ctx, its roots into owned storage (freed by _release). */
struct tier__roots {
	struct tier_linux_ctx ctx;
	char *sysfs_root, *procfs_root, *debugfs_root;
};
int tier__roots_init(struct tier__roots *r, const struct tier_linux_ctx *ctx);
void tier__roots_release(struct tier__roots *r);

/* Batches address observations for a sink. */
struct tier__obs_batch {
	struct tier_linux_addr_obs obs[256];
	size_t n;
	tier_linux_obs_sink sink;
	void *ctx;
	uint64_t total;
};

void tier__batch_init(struct tier__obs_batch *b, tier_linux_obs_sink sink, void *ctx);
void tier__batch_add(struct tier__obs_batch *b, const struct tier_linux_addr_obs *o);
void tier__batch_flush(struct tier__obs_batch *b);

/* Builds runs of equal 0/1 values over consecutive pages: feed pages in
 * address order; a page that has no value (not present) ends the run.
 * Each run becomes one observation of `kind` (count = the value, max 1). */
struct tier__run {
	struct tier__obs_batch *batch;
	pid_t pid;
	uint16_t kind;
	uint32_t interval_us;
	bool open;
	uint64_t start, end;
	uint32_t value;
};

void tier__run_init(struct tier__run *r, struct tier__obs_batch *b, pid_t pid, uint16_t kind,
		    uint32_t interval_us);
void tier__run_page(struct tier__run *r, uint64_t addr, uint32_t value);
void tier__run_gap(struct tier__run *r);

/* ---- soft-dirty (tracker_softdirty.c) ---------------------------------- */

/* For tests: a soft-dirty tracker without its sampling thread, whose
 * rounds (of period_us) the test drives: CLEAR takes the targets and
 * clears their bits, READ reads them (queues what is newly written),
 * READ_LAST reads them at the round's end (and counts the faults). */
enum tier__softdirty_op { TIER__SD_CLEAR, TIER__SD_READ, TIER__SD_READ_LAST };
int tier__softdirty_create_manual(const struct tier_linux_ctx *ctx, uint64_t period_us,
				  void **priv, struct tier_err *err);
int tier__softdirty_step(void *priv, enum tier__softdirty_op op, struct tier_err *err);
/* Whether a target's threads since its clear waited for a CPU more than
 * they ran and ran, on the mean over those that ran or waited, less than
 * half of need_us: a read now would see little (the thread holds its early
 * reads back while one is, SD_HOLD). */
bool tier__softdirty_starved(void *priv, uint64_t need_us);
/* How far a target's own time since its clear, as a read now would date
 * it with its minor faults since the clear for its dirty pages, is still
 * under need_us, in us, the most of any target; 0: none is (the thread
 * holds its early reads back while one is, up to SD_STRETCH times the
 * read's wall time). */
uint64_t tier__softdirty_behind(void *priv, uint64_t need_us);
/* Whether a whole round of pid's reads is over since it became a target
 * (its last read done: the rates of its picture rest on every bracket of
 * a round; the damon+softdirty tracker holds DAMON's lukewarm regions of
 * pid until then). */
bool tier__softdirty_has_round(void *priv, pid_t pid);
/* Whether the DAMON tracker's collect (priv: its private data) would wait
 * for the kdamond now: no snapshot made ahead stands, and it would not
 * hand on the last one again (tier__damon_ahead_take()). */
bool tier__damon_collect_waits(void *priv);
/* What one write-protect fault costs here (ns of CPU), taken by a child
 * of the caller; 0 when it cannot be measured. */
uint64_t tier__softdirty_calibrate(const struct tier_linux_ctx *ctx);

/* ---- DAMON (tracker_damon.c; the trace line parser in damon_trace.c) - */

/* One damon:damon_aggregated trace line:
 *   "kdamond.0-179 [001] ..... 12.3: damon_aggregated: target_id=0
 *    nr_regions=15 4194304-49410048: 3 8"
 * (age since 5.17; has_age false before). */
struct tier__damon_trace_rec {
	pid_t task_pid;			/* the kdamond that emitted it */
	unsigned long target_id;	/* index of the target in the context */
	unsigned nr_regions;
	uint64_t start, end;
	unsigned nr_accesses;
	unsigned age;
	bool has_age;
};

/* Returns 0, -ENOENT for a line that is not a damon_aggregated event (a
 * lost-events note, another event), or -EINVAL for a malformed one. */
int tier__damon_parse_trace_line(const char *line, struct tier__damon_trace_rec *rec);

/* Test hooks: every control-file write goes through on_write (the path
 * relative to <sysfs>/kernel/mm/damon/admin, or "tracing/..." relative to
 * the tracefs directory, and the value) before it reaches the file. A
 * negative return fails that write with that errno (to inject EBUSY), a
 * positive one makes it succeed without touching the file (a fixture
 * cannot act like the kernel's state file), 0 lets it through. */
struct tier__damon_hooks {
	int (*on_write)(void *ctx, const char *rel, const char *val);
	/* Every control-file read (rel as above) goes through on_read first:
	 * a negative return fails that read with that errno. */
	int (*on_read)(void *ctx, const char *rel);
	void *ctx;
	unsigned busy_retry_us;		/* pause between EBUSY retries (writes and
					 * reads); 0 = default */
	uint64_t (*now_us)(void *ctx);	/* the kdamond's CPU share's clock; NULL:
					 * tier_linux_now_us */
	/* Waits us microseconds on that clock; NULL: usleep, or no wait
	 * at all where now_us is a test's. */
	void (*sleep_us)(void *ctx, uint64_t us);
};

int tier__damon_create(const struct tier_linux_ctx *ctx, uint64_t interval_us,
		       const struct tier__damon_hooks *hooks, void **priv,
		       struct tier_err *err);

/* What the DAMON tracker chose, for tests and the daemon's log. */
struct tier__damon_info {
	unsigned kdamond;		/* index under kdamonds/ */
	bool grew;			/* nr_kdamonds was raised for it */
	bool tracepoint;		/* no tried_regions: damon_aggregated */
	bool per_target_schemes;	/* a target filter per scheme */
	uint64_t sample_us, aggr_us, update_us;
	uint64_t empty_snapshots;	/* empty tried_regions, asked again */
	double kdamond_cpu_percent;	/* measured over the last window, -1: not yet */
	unsigned interval_changes;	/* sample intervals committed to keep the share */
	unsigned max_regions;		/* nr_regions/max now (the share may lower it) */
};
void tier__damon_info(void *priv, struct tier__damon_info *out);

/* ---- damon+softdirty (obs_merge.c) ----------------------------------- */

/* Accesses per second per page that an ACCESSED or WRITTEN observation
 * stands for (tier_obs_accesses() over its interval); 0 for other kinds. */
double tier__obs_rate(const struct tier_linux_addr_obs *o);

/* What the merge of DAMON's regions with soft-dirty's written runs
 * gathers from the runs for the regions (tier__obs_written()): per region
 * k, the accesses per second its written pages stand for (wsum[k]: a
 * run's rate times its bytes under the region) and the bytes of those
 * whose rate is a lower bound (lsum[k], TIER_OBS_AT_LEAST), and the pieces
 * of those runs under each region (low[0, nlow)). */
struct tier__obs_low {
	pid_t pid;
	uint64_t start, end;
	size_t k;			/* the region it lies under */
};

struct tier__obs_sums {
	double *wsum, *lsum;
	size_t cap;
	struct tier__obs_low *low;
	size_t nlow, cap_low;
	bool lost;			/* a piece found no room: lsum counts it, low not */
};

/* Empties s for nacc regions (zero sums). False out of memory (s then
 * has no room: tier__obs_written() and tier__obs_rest() pass the
 * observations on as they are). */
bool tier__obs_sums_reset(struct tier__obs_sums *s, size_t nacc);
void tier__obs_sums_free(struct tier__obs_sums *s);

/* The merge of DAMON's regions acc[0, nacc) (sorted by pid, then start;
 * not overlapping within a pid) with soft-dirty's written runs, in two
 * parts, so that a page's rates add up to what it was accessed, not to
 * its writes counted twice (a written page is also an accessed one, and
 * the region over it counts its writes already):
 * - tier__obs_written() hands sink the observations wr[0, n) unchanged
 *   and adds up s (above); called for each batch of written runs, s
 *   reset for acc before the first;
 * - tier__obs_rest() then hands sink each region with the accesses its
 *   written pages do not explain: first to its pages whose written rate
 *   is only a lower bound, up to the most DAMON could have seen a page
 *   accessed (an ACCESSED observation over each such piece, adding to its
 *   written rate), the remainder spread over all its pages (count 1 of 2
 *   over the interval that makes the rate), count 0 where nothing is
 *   left; a region with nothing written under it, or seen idle, passes
 *   unchanged.
 * A scattered hot set's region (one hot page in seven) reads lukewarm; its
 * hot pages' writes explain it, and its cold pages keep their own rate
 * instead of the region's. A hot page first written before the rounds'
 * first reads reads at the table's highest rate (35/s at reads 20 ms
 * after the clears) whatever its own (180/s in the guest's bench): the
 * region's accesses its written rate leaves unexplained are its own, not
 * its cold neighbours' - spread over all, in tiersim's model of the
 * guest bench with DAMON seeing every access, they lifted the region's
 * 139,000 cold pages (4.5/s) to 26/s, above the 10/s a move must pay for,
 * and 32,768 of them were exchanged up at a step, three times a minute. */
void tier__obs_written(const struct tier_linux_addr_obs *acc, size_t nacc,
		       struct tier__obs_sums *s, const struct tier_linux_addr_obs *wr, size_t n,
		       tier_linux_obs_sink sink, void *ctx);
void tier__obs_rest(const struct tier_linux_addr_obs *acc, size_t nacc,
		    struct tier__obs_sums *s, tier_linux_obs_sink sink, void *ctx);

/* The regions of pid in acc[0, nacc) that DAMON saw accessed in fewer
 * than half their checks (lukewarm: one page in seven hot reads so, and
 * so does every page at a lukewarm rate) at no more than max_rate accesses
 * per second a page (count 1 of 2 over the interval that makes it); the
 * others, and idle ones, as they are. */
void tier__obs_hold(struct tier_linux_addr_obs *acc, size_t nacc, pid_t pid, double max_rate);
/* Until soft-dirty's first whole round of a process is over, the merge
 * holds DAMON's lukewarm regions of it at no more than TIER__OBS_HOLD_RATE
 * accesses/s a page, for at most TIER__OBS_HOLD_US after DAMON first
 * reported it (tracker_combo.c; tiersim's model, src/backend/sim/tracker_sd.c). */
#define TIER__OBS_HOLD_RATE	1.0
#define TIER__OBS_HOLD_US	3000000u

/* ---- hint faults (tracker_hint.c) ---------------------------------------- */

#define HINT_RANGE_SHIFT	26	/* passes told apart per 64 MiB */
#define HINT_RANGE_PAGES	(1u << (HINT_RANGE_SHIFT - 12))
#define HINT_KEEP_PASSES	2	/* a page's estimate holds for its pass and the next */
#define HINT_MIN_LAT_MS		1.0	/* latencies count as at least this */
#define HINT_MIN_RATE		2.0	/* estimates below it are left out, accesses/s */
#define HINT_FIRST_PASS_US	200000u	/* a process's first pass, after its first fault */

/* The passes of the kernel's scans, per process and range, and each
 * page's last latency. */
struct tier__hint_range;
struct tier__hint_first {
	pid_t pid;
	uint64_t first_us;	/* its first fault */
};
struct tier__hint_passes {
	struct tier__hint_range **slot;	/* open addressing by (pid, range) */
	size_t n, cap;
	struct tier__hint_first *read;
	size_t nr_read;
	uint64_t faults;		/* counted so far */
};
void tier__hint_passes_init(struct tier__hint_passes *hp);
void tier__hint_passes_release(struct tier__hint_passes *hp);
/* A fault of pid at addr, t_us on the monotonic clock; faults come in time
 * order. Returns 0 or -ENOMEM. */
int tier__hint_fault(struct tier__hint_passes *hp, pid_t pid, uint64_t addr, uint64_t t_us);
/* Hands sink every page's standing estimate that still holds: runs of
 * pages, ACCESSED, TIER_OBS_STANDING, 1 of 2 checks over twice the
 * latency (tier__obs_rate() then reads ln 2 over it). */
void tier__hint_passes_hand(struct tier__hint_passes *hp, tier_linux_obs_sink sink, void *ctx);
/* Forgets the processes not in keep[0, n). */
void tier__hint_passes_drop(struct tier__hint_passes *hp, const pid_t *keep, size_t n);
/* Whether pid's first pass is over by now_us: HINT_FIRST_PASS_US after its
 * first fault (a scattered hot set's pages faulted within 200 ms of their
 * pass's start). */
bool tier__hint_passes_read(const struct tier__hint_passes *hp, pid_t pid, uint64_t now_us);
/* Whether the kernel's scans cover pid's pages at start: their range had
 * a page fault again (protected again since it faulted: every page present
 * there had a pass to fault in), so the hint faults rate its pages; a
 * range of a process the kernel seldom scans (its scan follows its own CPU
 * time) may have had one pass or none. *run_end receives the end of the
 * run from start, at most end, with the same answer. */
bool tier__hint_passes_covers(const struct tier__hint_passes *hp, pid_t pid, uint64_t start,
			      uint64_t end, uint64_t *run_end);
/* The rate a latency stands for: ln 2 over it, lat_ms + 1 (0: none). */
double tier__hint_rate(uint16_t lat_ms_plus_1);
/* The tracker's (priv: hint's) tier__hint_passes_read() now. */
bool tier__hint_has_read(void *priv, pid_t pid);
/* The tracker's (priv: hint's) tier__hint_passes_covers(). */
bool tier__hint_covers(void *priv, pid_t pid, uint64_t start, uint64_t end, uint64_t *run_end);

/* Whether a tracker rates pid's pages from start: *run_end receives the
 * end of the run, at most end, with the same answer
 * (tier__hint_covers()). */
typedef bool (*tier__covers_fn)(void *arg, pid_t pid, uint64_t start, uint64_t end,
				uint64_t *run_end);

/* DAMON's regions acc[0, nacc) to sink: where covered(cov_arg, ...) says a
 * hint-fault tracker rates the pages, only their pieces on the top tier
 * (rank 0) or of no known tier (ctx->tiers(); the kernel scans only the
 * slower tiers, whose pages the hint faults rate); elsewhere, and where
 * ctx has no tiers(), whole. */
void tier__obs_top_tier(const struct tier_linux_addr_obs *acc, size_t nacc,
			const struct tier_linux_ctx *ctx, tier__covers_fn covered, void *cov_arg,
			tier_linux_obs_sink sink, void *sctx);

/* ---- perf (tracker_perf.c) -------------------------------------------- */

struct tier__perf_sample {
	uint32_t pid, tid;
	uint64_t time;		/* 0 when PERF_SAMPLE_TIME is not sampled */
	uint64_t addr;
	uint64_t period;	/* 0 when PERF_SAMPLE_PERIOD is not sampled */
	uint64_t weight;
	uint64_t data_src;
};

struct tier__perf_stats {
	uint64_t samples;
	uint64_t lost;		/* sum of PERF_RECORD_LOST counts */
	uint64_t other;		/* other record types, skipped */
	uint64_t bad;		/* malformed records: the rest was dropped */
};

/* Supported sample_type bits (others: -EINVAL from the check below). */
bool tier__perf_sample_type_ok(uint64_t sample_type);

/* Decodes the records in [tail, head) of a perf ring buffer's data area
 * (data_sz bytes, a power of two; positions are free-running counters as
 * in struct perf_event_mmap_page), including records that wrap around the
 * end. Calls fn for each PERF_RECORD_SAMPLE. Returns the new tail (head,
 * unless the last record is incomplete). */
uint64_t tier__perf_decode(const uint8_t *data, size_t data_sz, uint64_t tail,
			   uint64_t head, uint64_t sample_type,
			   void (*fn)(void *ctx, const struct tier__perf_sample *s), void *ctx,
			   struct tier__perf_stats *st);

/* True when a sample's PERF_SAMPLE_DATA_SRC says store (mem_op bits). */
bool tier__perf_data_src_is_store(uint64_t data_src);

/* Ring buffers of perf events (one mmap'd ring each: struct
 * perf_event_mmap_page and data_pages pages of records). */
struct perf_event_attr;
struct tier__perf_ring {
	int fd;
	void *base;
	size_t map_sz;
	size_t data_pages;	/* its data area's pages, a power of two */
	pid_t tid;		/* the thread it follows (-1: a CPU's) */
	bool seen;		/* its thread was listed at the last look */
};
/* A ring opened while the rings' data reach max_bytes gets fewer pages,
 * down to this many. */
#define TIER__PERF_MIN_PAGES 8u
/* The trackers' bound on their rings' data (struct tier__perf_rings). */
#define TIER__PERF_RINGS_MAX_BYTES (64u << 20)
struct tier__perf_rings {
	struct tier__perf_ring *v;
	size_t n, cap;
	size_t data_pages;	/* a ring's pages at most, a power of two; set
				 * before the first open */
	/* The rings' data together, at most (0: no bound), but
	 * TIER__PERF_MIN_PAGES a ring: each ring is locked memory (4 MiB
	 * rings for a process of a thousand threads would be 4 GiB). Set
	 * before the first open. */
	size_t max_bytes;
	size_t bytes;		/* their data now */
};

/* perf_event_open(2) (glibc has no wrapper): the fd, or -1 with errno. */
long tier__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			   unsigned long flags);

/* Opens *attr for thread tid (-1: any) on cpu (-1: any) with a ring of
 * its own, added to rs. Returns 0 or -errno with err saying what (ESRCH:
 * the thread is gone). */
int tier__perf_ring_open(struct tier__perf_rings *rs, struct perf_event_attr *attr, pid_t tid,
			 int cpu, struct tier_err *err);
/* ... one for each thread of pid (<procfs_root>/PID/task) that has none
 * in rs yet: 0, -ESRCH when the process is gone (no thread), or -errno.
 * The kernel maps no ring of an event that inherits to new threads
 * (perf_mmap(): per-task and inherit, -EINVAL), so attr must not: call it
 * again now and then for threads started since. */
int tier__perf_open_threads(struct tier__perf_rings *rs, const char *procfs_root, pid_t pid,
			    struct perf_event_attr *attr, struct tier_err *err);
/* ... for each of pids[0, n), at most every TIER__PERF_THREADS_US
 * (*last_us: the last time, on the monotonic clock; 0: now): the threads
 * started since; and the rings of threads no longer listed (exited, or
 * of a process gone) closed, so that a process whose threads come and go
 * does not leave tierd holding a ring for each. Read the rings first:
 * what a closed ring held is lost. Returns 0 or -errno (a process gone is
 * not an error). */
#define TIER__PERF_THREADS_US 1000000u
int tier__perf_follow_threads(struct tier__perf_rings *rs, const char *procfs_root,
			      const pid_t *pids, size_t n, struct perf_event_attr *attr,
			      uint64_t *last_us, struct tier_err *err);
/* Decodes every ring's new records (tier__perf_decode()), calling fn for
 * each sample, and hands the space back to the kernel. */
void tier__perf_rings_read(struct tier__perf_rings *rs, uint64_t sample_type,
			   void (*fn)(void *ctx, const struct tier__perf_sample *s), void *ctx,
			   struct tier__perf_stats *st);
/* Closes every ring (rs stays usable); _free also frees the array. */
void tier__perf_rings_close(struct tier__perf_rings *rs);
void tier__perf_rings_free(struct tier__perf_rings *rs);

/* Parses a PMU event alias ("event=0xcd,umask=0x1,ldlat=3") into config
 * (event | umask << 8) and config1 (ldlat). Returns 0 or -EINVAL. */
int tier__perf_parse_event(const char *alias, uint64_t *config, uint64_t *config1);

#endif
