/* softdirty_impl.h - what the soft-dirty tracker's files share
 * (tracker_softdirty.c: the rounds, the thread, the tracker's ops;
 * softdirty_writer.c: the writer's own time and what its faults cost it,
 * and the rounds' period): the constants, the tracker and its targets.
 * Private to them. */
#ifndef TIER_BACKEND_LINUX_SOFTDIRTY_IMPL_H
#define TIER_BACKEND_LINUX_SOFTDIRTY_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/softdirty_scan.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"

#define SD_MIN_US	TIER__SD_MIN_US
#define SD_MAX_US	TIER__SD_MAX_US
#define SD_READ1_US	TIER__SD_READ1_US	/* the reads after a clear */
#define SD_READ2_US	TIER__SD_READ2_US
#define SD_READ3_US	TIER__SD_READ3_US
#define SD_HOLD		4u		/* an early read waits for a starved writer until
					 * this many times its time after the clear */
#define SD_STRETCH	TIER__SD_STRETCH	/* ... and for its own time to reach the read's
					 * until this many */
#define SD_HOLD_STEP_US	10000u		/* ... looking again this often */
#define SD_MAX_BRK	TIER__SD_MAX_BRK
#define SD_UNWRITTEN	4.0		/* tier__sd_dirty_unwritten(): faults at a quarter of
					 * the child's cost, at the fastest */
#define SD_FAULT_NS	1000u		/* a write-protect fault, natively: the least */
#define SD_SEEN_PAGES	256u		/* a read's dirty pages that bound a fault's cost */
#define SD_SEEN_MAX	4u		/* ... at most this many times the calibration's */
#define SD_FAULT_SHARE	TIER__SD_FAULT_SHARE
#define SD_CPU_SHARE	TIER__SD_CPU_SHARE

struct sd_target {
	pid_t pid;
	uint64_t t0_us;			/* its last clear */
	/* the round's reads, after the clear: bracket k is
	 * (brk_us[k - 1], brk_us[k]], (0, brk_us[0]] the first */
	uint64_t brk_us[SD_MAX_BRK];
	uint64_t wall_us[SD_MAX_BRK];	/* ... in wall time */
	uint64_t ran_us[SD_MAX_BRK];	/* ... its busiest thread's time on a CPU */
	unsigned nbrk;
	/* its threads' times before and after its last clear (schedstat.h) */
	struct tier_linux_waits wait_c0, wait_c1;
	/* its CPU per dirty page: the least over this round's reads so far,
	 * and over the last whole round's (0: none yet) */
	uint64_t cpu_page_ns, fault_ns_seen;
	/* the share of the wall clock its busiest thread wants a CPU, at
	 * its last clear (tier_linux_runnable_share(); 0: not known) */
	double duty;
	/* its minor faults at its last clear (minflt_known: read then) */
	uint64_t minflt_c0;
	bool minflt_known;
	struct tier__sd_runs seen;	/* written this round, address order */
	struct tier__sd_runs prev;	/* written in the last whole round */
	uint64_t prev_brk_us[SD_MAX_BRK];	/* ... and its reads */
	uint64_t prev_wall_us[SD_MAX_BRK];
	uint64_t prev_ran_us[SD_MAX_BRK];
	unsigned nprev_brk;
	unsigned whole_rounds;		/* rounds ended since it became a target */
	bool cleared;
};

struct sd_tracker {
	struct tier__roots roots;
	bool threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* wakes the thread to stop, or to start */
	bool stop;
	/* A round without targets ends as soon as targets arrive (kick), so
	 * that a new process's first reads come within SD_READ2_US, not a
	 * round later. */
	bool idle_round, kick;
	/* under lock: what set_targets() asked for, what the thread saw */
	pid_t *want;
	size_t nr_want;
	struct tier__sd_pairs pic;	/* the latest picture (empty while collect() reads it) */
	pid_t *read;			/* the targets read a whole round (tier__softdirty_has_round()) */
	size_t nr_read, cap_read;
	uint64_t pic_gen;		/* pictures made */
	struct tier_linux_tracker_stats stats;
	int error;			/* the thread's last error, for collect() */
	char error_msg[256];
	/* the thread's own */
	struct sd_target *tg;
	size_t nr_tg;
	uint64_t period_us;
	uint64_t faults_last;		/* pages dirty at the last round's end */
	uint64_t faults_last_ns;	/* ... what their faults cost the writers */
	uint64_t fault_ns;		/* what one cost the writer, measured */
	uint64_t cpu_last_us;		/* the thread's CPU in the last round */
	/* a read in progress */
	struct tier__sd_scan scan;	/* a target's dirty runs (softdirty_scan.h) */
	struct tier__sd_runs next;	/* a target's seen runs, rebuilt */
	struct tier_linux_waits wait_r0, wait_r1;	/* a target's threads around a read */
	struct tier__sd_pairs build;	/* the next picture */
	/* collect()'s own: the picture's runs, rated, and the rates */
	struct tier__sd_pic obs;
	struct tier__sd_fits fits;	/* the picture's fits, kept from collect to collect */
	/* obs rates the picture pic_gen as the world's tiers were at
	 * tiers_gen (tier_linux_ctx.tiers_gen): handed over again while
	 * both hold */
	bool obs_valid;
	uint64_t obs_pic_gen, obs_tiers_gen;
};

/* ---- softdirty_writer.c ---- */

/* Whether a read that saw `dirty` pages first written since the clear, the
 * writer having run ran_ns since, saw more than it could have written. */
bool tier__sd_dirty_unwritten(const struct sd_tracker *t, uint64_t dirty, uint64_t ran_ns);
/* What a fault cost tg's writer, ns. */
uint64_t tier__sd_writer_fault_ns(const struct sd_tracker *t, const struct sd_target *tg);
/* The writer's own time at wall_us after tg's clear, `dirty` pages
 * written since, its threads' runs and waits from the clear's two ends,
 * and whether it is stalled (tier__sd_stalled()). */
uint64_t tier__sd_writer_us(const struct sd_tracker *t, const struct sd_target *tg,
			    uint64_t wall_us, uint64_t dirty, const struct tier_linux_waits_delta *d0,
			    const struct tier_linux_waits_delta *d1, bool stalled);
/* Whether none of tg's threads ran since its clear (d0, d1: from the
 * clear's two ends to `now`, a reading of its threads) and one of them is
 * runnable or blocked in the kernel (tier_linux_waits_stalled()). Reads
 * the threads' stat files only when none ran. */
bool tier__sd_stalled(const struct sd_tracker *t, const struct sd_target *tg,
		      const struct tier_linux_waits_delta *d0, const struct tier_linux_waits_delta *d1,
		      const struct tier_linux_waits *now);
/* The next round's period (tier__softdirty_period_us()), into t->period_us
 * and the stats. */
void tier__sd_plan_period(struct sd_tracker *t);

#endif
