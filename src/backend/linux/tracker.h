/* tracker.h - hotness trackers on Linux, and the address form of their
 * observations.
 *
 * A Linux tracker watches a set of processes and reports what it saw per
 * address range of a process (struct tier_linux_addr_obs). The address
 * space map (space.h) turns those into the core's dense-page observations
 * (struct tier_obs), splitting ranges at mapping boundaries and dropping
 * what no managed mapping covers.
 *
 * Trackers, best first: DAMON and soft-dirty together, DAMON (sysfs, vaddr),
 * idle page tracking, soft-dirty, perf memory sampling, DAMON and the
 * kernel's NUMA hint faults together, the hint faults alone. Each is probed at start-up; one that is unavailable
 * says why in one line (tier_err) and the next is tried.
 */
#ifndef TIER_LINUX_TRACKER_H
#define TIER_LINUX_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

/* Where the kernel's files are; tests point these at fixture trees. */
struct tier_linux_ctx {
	const char *sysfs_root;		/* "/sys" */
	const char *procfs_root;	/* "/proc" */
	const char *debugfs_root;	/* "/sys/kernel/debug" (tracefs events) */
	/* The share of one core, in percent, the tracker's kernel threads
	 * (DAMON's kdamond) may take; 0: no bound. */
	double kthread_cpu_percent;
	/* The same for the thread of its own a tracker runs in tierd
	 * (soft-dirty's clears and page walks); 0: its default. */
	double thread_cpu_percent;
	/* Called around a collect's waits on the kernel that touch nothing
	 * of the world (DAMON's snapshot request, which returns at the end
	 * of the kdamond's next aggregation): begin true before, false
	 * after (tier_env.wait). NULL: none. */
	void (*wait)(void *arg, bool begin);
	void *wait_arg;
	/* The tier (rank, 0 the fastest) of the pages of [start, end) of
	 * process pid as the world last found them: fn(fctx, start', end',
	 * tier) over pieces that cover it, in address order, tier
	 * TIER_LINUX_TIER_NONE where it does not know. Called by a tracker's
	 * collect() alone (on the step's thread, the world held). NULL: not
	 * known. */
	void (*tiers)(void *arg, pid_t pid, uint64_t start, uint64_t end,
		      void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier),
		      void *fctx);
	/* A number that changes whenever tiers() may say otherwise of some
	 * range than it said before (a page moved, a mapping changed, the
	 * tiers were rebuilt); the same arg. NULL: not known (ask tiers()
	 * each time). */
	uint64_t (*tiers_gen)(void *arg);
	void *tiers_arg;
};

#define TIER_LINUX_TIER_NONE 255u

/* What a tracker saw in [start, end) of process pid. Fields as in struct
 * tier_obs (core/policy.h): kind is one enum tier_obs_kind; for ACCESSED
 * and WRITTEN, count of max checks over interval_us; SAMPLE: count =
 * sampling period; HINT_FAULT: latency_us. */
struct tier_linux_addr_obs {
	pid_t pid;
	uint64_t start, end;		/* virtual addresses, page aligned */
	uint16_t kind;
	uint16_t write;
	uint32_t count;
	uint32_t max;
	uint32_t latency_us;
	uint32_t interval_us;
};

typedef void (*tier_linux_obs_sink)(void *ctx, const struct tier_linux_addr_obs *obs,
				    size_t n);

/* A tracker's running figures (zero where it has none). */
/* What the soft-dirty tracker dates a page's first write by: its writer's
 * time since the clear (tracker_softdirty.c), read as well as the kernel
 * lets it. */
enum tier_linux_writer_time {
	TIER_LINUX_WT_UNKNOWN = 0,	/* no target read yet (or no soft-dirty) */
	TIER_LINUX_WT_SCHEDSTAT,	/* per thread, its runs and waits (schedstat.h) */
	TIER_LINUX_WT_CPU_CLOCK,	/* the process's CPU clock: its waits unknown */
	TIER_LINUX_WT_WALL,		/* neither: the wall clock less its faults */
};

/* Its name in status and the log: "schedstat", "cpu-clock", "wall"; NULL
 * for TIER_LINUX_WT_UNKNOWN. */
const char *tier_linux_writer_time_name(enum tier_linux_writer_time wt);

/* What a DAMON snapshot showed: its regions seen accessed (nr_accesses
 * > 0), their KiB, the KiB of those seen in every sample of the
 * aggregation, and their KiB weighted by the share of samples that saw
 * them; and what it cost the step's wall clock: the time the collect
 * waited for the kdamond (update_schemes_tried_regions returns after the
 * next aggregation has ended; a new kdamond's first aggregations), and the
 * requests it made. */
struct tier_linux_damon_snap {
	uint64_t regions, kib, full_kib;
	double weighted_kib;
	uint64_t wait_us;
	unsigned requests;
	uint64_t ahead_wait_us;		/* taken from a request made ahead
					 * (damon_ahead.c): the kdamond's time
					 * to answer it; 0: none */
	bool restated;			/* the last snapshot handed on again
					 * while the next is being made */
	bool reused;			/* not read: damon+softdirty (or
					 * damon+hint) handed on DAMON's last
					 * observations rather than wait for
					 * the kdamond, the other tracker
					 * having news */
};

struct tier_linux_tracker_stats {
	uint64_t workload_faults;	/* faults it made the watched processes take
					 * (soft-dirty: one write-protect fault per
					 * page written after each clear) */
	uint64_t workload_fault_ns;	/* ... what they cost them (soft-dirty:
					 * each at what its round saw one cost
					 * its writer, tier__sd_writer_fault_ns()) */
	uint64_t rounds;		/* clear-and-read rounds done */
	uint64_t period_us;		/* the current round's period */
	uint64_t dropped;		/* observations dropped (soft-dirty: runs past
					 * the picture's size) */
	uint64_t restarts;		/* soft-dirty: reads that saw more pages
					 * written than the writer could have written
					 * (a mapping made or grown since the clear),
					 * after which its round started over */
	uint64_t scan_reads;		/* reads by PAGEMAP_SCAN (soft-dirty; the
					 * others read pagemap's entries) */
	uint64_t fault_ns;		/* what one of those faults costs here,
					 * measured at start (soft-dirty) */
	uint64_t fault_ns_seen;		/* ... and at most what one cost the first
					 * target, by its CPU per page dirty in
					 * its last whole round (0: not known) */
	/* The reads of the last whole round of its first target, in the
	 * writer's own time since the clear (soft-dirty: wall time less the
	 * faults the writer took by then), and in wall time. */
	uint64_t read_us[8], read_wall_us[8];
	uint64_t read_ran_us[8];	/* ... its busiest thread's time on a CPU (0: unknown) */
	uint64_t read_pages[8];		/* ... the pages first seen written at each */
	unsigned nr_reads;
	enum tier_linux_writer_time writer_time;	/* ... what they were dated by */
	/* damon+softdirty: the CPU its last collect took in DAMON's part
	 * (reading the snapshot) and in soft-dirty's (handing over the
	 * picture), each with what the sink did with it. */
	uint64_t collect_damon_ns, collect_sd_ns;
	/* soft-dirty: the CPU its last collect took rating the picture
	 * (tier__sd_picture(): the fits and the pages' tiers), the sink's
	 * part left out */
	uint64_t collect_sd_rate_ns;
	/* soft-dirty: the picture's populations fitted anew at a collect, and
	 * their fits taken again (the same reads and counts), so far */
	uint64_t sd_fitted, sd_fits_reused;
	/* ... and pictures handed over again as rated at the last collect
	 * (neither the picture nor the pages' tiers changed since) */
	uint64_t sd_pictures_reused;
	/* ... and its first target's pairs as the last rating saw them
	 * (struct tier__sd_fits.say; the debug log's) */
	char sd_pairs[512];
	/* DAMON: the kdamond's sample interval and most regions now, and
	 * its CPU over the last window of its share (% of a core; -1: no
	 * window yet). */
	uint64_t damon_sample_us;
	unsigned damon_max_regions;
	double damon_share_percent;
	/* DAMON: its aggregation interval, and what the last collect's
	 * snapshot showed (weighted_kib / kib: how often, on average, an
	 * accessed region's check found it accessed). */
	uint64_t damon_aggr_us;
	struct tier_linux_damon_snap damon_snap;
};

struct tier_linux_tracker_ops {
	const char *name;		/* "damon", "idle", "softdirty", "perf" */
	unsigned kinds;			/* enum tier_obs_kind bits it reports */
	/* What takes CPU besides the daemon's steps, each kept to its part
	 * of the budget (tier_linux_ctx): kernel threads (a kdamond), a
	 * thread of its own in tierd. */
	bool kthreads, own_thread;
	/* It reads the kernel's NUMA hint faults: while it runs, the kernel's
	 * NUMA balancing must take them and move nothing (the daemon sets it
	 * so: kernel_guard.h, tier_linux_guard_hint_faults()). */
	bool hint_faults;
	/* Required. 0 when the tracker can run here; else -errno and err says
	 * why in one line ("DAMON: /sys/kernel/mm/damon/admin missing (kernel
	 * without CONFIG_DAMON_SYSFS)"). Changes nothing. */
	int (*probe)(const struct tier_linux_ctx *ctx, struct tier_err *err);
	/* Required. interval_us: how often collect() will be called. */
	int (*create)(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		      struct tier_err *err);
	/* Required. Stops whatever it started in the kernel (a kdamond). */
	void (*destroy)(void *priv);
	/* Required. The processes to watch (replaces the previous set). A pid
	 * that is gone is dropped silently. Returns 0 or -errno. */
	int (*set_targets)(void *priv, const pid_t *pids, size_t n, struct tier_err *err);
	/* Required. Hands what was seen since the last call to sink, in
	 * batches. Processes that exited since are skipped without error. */
	int (*collect)(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err);
	/* Keeps the tracker's running cost within its bounds (the kdamond's
	 * CPU share, tier_linux_ctx.kthread_cpu_percent): called about every
	 * second, also while collects pause. Optional. */
	void (*maintain)(void *priv);
	/* Optional. The next collect is due at step_us (tier_linux_now_us()):
	 * the tracker may ask the kernel ahead for what that collect reads
	 * (DAMON: its snapshot, damon_ahead.c), so that it does not wait. */
	void (*ahead)(void *priv, uint64_t step_us);
	/* Optional. Whether a collect now would hand over anything the last
	 * one did not: false when all it has restates the last collect's
	 * (DAMON's last snapshot while the next is being made, soft-dirty's
	 * picture unchanged and rated as before), so that a step may wait
	 * for news rather than take the same picture in again. NULL: always
	 * news. */
	bool (*news)(void *priv);
	/* Optional. The kdamond the tracker runs now: true with its index
	 * under kdamonds/ and its kernel thread's pid (for the state file
	 * that lets a later start stop it, and for its CPU time); false when
	 * none runs, with *index set to the kdamond the tracker holds (and
	 * may start at set_targets), if any. */
	bool (*kdamond)(void *priv, unsigned *index, pid_t *pid);
	/* Optional. What tracking cost and did so far. */
	void (*stats)(void *priv, struct tier_linux_tracker_stats *st);
	/* Optional. New parts of the CPU budget (tier_linux_ctx's
	 * kthread_cpu_percent and thread_cpu_percent; a reload that changed
	 * daemon.max_cpu_percent), kept from now on. */
	void (*set_budget)(void *priv, double kthread_percent, double thread_percent);
};

/* The trackers, best first, NULL-terminated. */
extern const struct tier_linux_tracker_ops *const tier_linux_trackers[];

const struct tier_linux_tracker_ops *tier_linux_tracker_find(const char *name);

/* tierd's CPU budget (daemon.max_cpu_percent, % of one core) split in
 * equal parts among what runs: the daemon's steps always, the tracker's
 * kernel threads and its own thread where it has them. Sets the parts of
 * the two latter (0 where the tracker has none) and returns the steps'
 * share of the budget (1, 1/2 or 1/3). */
double tier_linux_tracker_budget(const struct tier_linux_tracker_ops *t, double max_cpu_percent,
				 double *kthread_percent, double *thread_percent);

/* The steps' share of the budget when the tracker's threads used
 * others_percent of a core lately: their own part (own, from
 * tier_linux_tracker_budget()) at least, and whatever of max_cpu_percent
 * the threads leave - a soft-dirty thread whose rounds the writer's faults
 * stretch uses a tenth of its part - at most all of it. The threads keep
 * their parts (they pace themselves by them): what the steps take of an
 * unused part, a thread that needs it again gets back as the average
 * follows it (the Linux world averages over 10 s). */
double tier_linux_step_share(double own, double max_cpu_percent, double others_percent);

/* The tracker's threads' CPU as a share of a core, averaged over
 * TIER_LINUX_OTHERS_TAU_US: seeded with what they may use (start_percent,
 * their parts), then moved by each reading of their CPU (cpu_s, seconds
 * in total so far) toward the rate since the last one read at least 1 s
 * before (a reading sooner is ignored). */
#define TIER_LINUX_OTHERS_TAU_US 10000000.0
struct tier_linux_others {
	uint64_t at_us;		/* the last reading counted (0: none yet) */
	double cpu_s;		/* the CPU then */
	double percent;		/* the average */
};
double tier_linux_others_update(struct tier_linux_others *o, uint64_t now_us, double cpu_s,
				double start_percent);

/* Picks the tracker to run: wanted NULL or "auto" = the best available,
 * else the one named. Probes every candidate (all of them for "auto") and
 * appends one line per unavailable tracker to why ("idle: ... missing
 * (kernel without CONFIG_IDLE_PAGE_TRACKING ...)\n"), cut to why_sz, for
 * the daemon's log. Returns 0 with *out set, -ENODEV when none can run,
 * -EINVAL for an unknown name, or the named tracker's probe error. */
int tier_linux_tracker_pick(const struct tier_linux_ctx *ctx, const char *wanted,
			    const struct tier_linux_tracker_ops **out, char *why, size_t why_sz);

#endif
