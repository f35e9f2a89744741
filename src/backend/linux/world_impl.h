/* world_impl.h - what the pieces of the Linux world (world.c: building
 * and driving it; world_ops.c: the tracker and migrator the core sees;
 * world_procs.c: the managed processes; world_intent.c: hints and
 * control groups) share. Internal to src/backend/linux/world*.c. */
#ifndef TIER_LINUX_WORLD_IMPL_H
#define TIER_LINUX_WORLD_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/cgroup.h"
#include "backend/linux/clock.h"
#include "backend/linux/kernel_guard.h"
#include "backend/linux/procs.h"
#include "backend/linux/space.h"
#include "backend/linux/topology.h"
#include "backend/linux/tracker.h"
#include "backend/linux/vmstat.h"
#include "core/world.h"

/* Pages whose node is re-queried per step (move_pages with nodes = NULL),
 * round robin: what the kernel moved behind tierd's back (reclaim,
 * compaction) shows within nr_pages / this many steps. A status query
 * walks the page tables page by page; 16384 a step keeps it a small part
 * of the step. */
#define QUERY_PAGES_PER_STEP 16384
/* The picture checked against numa_maps at most this often, and the pages
 * a check may queue for a query. */
#define VERIFY_EVERY_US 500000
#define VERIFY_MAX_PAGES 262144
/* ... and while the kernel's counters say that nothing but tierd moved
 * pages (vmstat.h), only this often: what they cannot tell (a page freed
 * and faulted in again elsewhere) shows here or in the round-robin
 * query. */
#define VERIFY_QUIET_US 10000000
/* The moves' CPU over the pages they moved is the measured move cost
 * (tier_world_stats' move_page_ns) once this many pages moved. */
#define TIER_LINUX_MOVE_COST_PAGES 256

static inline double tier_linux_move_page_ns(uint64_t move_cpu_ns, uint64_t pages_moved)
{
	return pages_moved >= TIER_LINUX_MOVE_COST_PAGES ?
	       (double)move_cpu_ns / (double)pages_moved : 0;
}

struct linux_backend {
	struct tier_world b;
	struct tier_env env;
	struct tier_topology topo;
	struct tier_linux_ctx ctx;
	/* ctx.sysfs_root's own copy: the configuration it came from is
	 * replaced by a reload while the trackers and the guard of the
	 * kernel's settings keep using it. */
	char *sysfs_root;
	struct tier_linux_space *space;
	const struct tier_linux_tracker_ops *trk;
	void *trk_priv;
	struct tier_tracker_ops core_trk;
	tier_say_fn say_fn;
	void *say_arg;
	int log_level;
	struct tier_loop *loop;		/* for forget() during an update */
	int node_rank[TIER_MAX_NODES];
	uint64_t ranks_gen;		/* node_rank[] rebuilt (retopology) */
	/* selection */
	pid_t *sel_pids;
	size_t nr_sel_pids;
	char **cgroups;
	size_t nr_cgroups;
	char *exe_pattern;
	uint64_t min_rss_bytes;
	uint64_t refresh_us;
	uint64_t refresh_gap_us;	/* the last re-read's to the next (0: none yet) */
	uint64_t next_refresh_us;
	/* The managed pages grew at the last refresh: the policy is told
	 * (tier_loop_resize) once their nodes are known, after the query
	 * of the fresh pages, so that it counts them where they are. */
	bool resize_pending;
	uint64_t next_verify_us;
	/* The kernel's churn counters at the last placement check's turn and
	 * tierd's own moves then (churn_ok: read), the next check due
	 * whatever they say, and the checks they made unnecessary. */
	struct tier_linux_churn churn;
	uint64_t churn_own;
	bool churn_ok;
	uint64_t next_full_verify_us;
	uint64_t verify_done, verify_skipped;
	uint64_t upkeep_due_us;		/* the tracker's next upkeep within a step */
	uint64_t verify_queued;		/* pages numa_maps sent to be queried again */
	size_t nr_procs;
	pid_t *marked_pids;		/* the targets at the last tier__lw_kdamond_starting() mark */
	size_t nr_marked_pids;
	/* accounting */
	uint64_t work_units;
	uint64_t promoted_pages, demoted_pages, failed_moves;
	uint64_t moved_pages[TIER_MAX_TIERS][TIER_MAX_TIERS];	/* [from rank][to rank] */
	uint64_t failed_by_reason[TIER_MOVE_FAIL__COUNT];
	uint64_t tracker_cpu_ns;		/* this thread's CPU in the tracker's collect */
	/* ... in the world's other parts of a step (tier_world_stats) */
	uint64_t maps_cpu_ns, verify_cpu_ns, query_cpu_ns, move_cpu_ns;
	uint64_t move_wall_ns;		/* the move calls' wall time */
	uint64_t moves_done;			/* pages the move calls moved */
	uint64_t nomem_moves, nomem_logged;	/* -ENOMEM: the target node was full */
	uint64_t nomem_log_us;
	uint64_t splits;			/* huge pages split */
	pid_t kdamond_pid;			/* the kdamond whose CPU is read */
	double kdamond_cpu_done;		/* CPU of the kdamonds before it */
	double kdamond_cpu_last;		/* its CPU when last read */
	/* The steps' share of the budget (b.step_cpu_share): their own part,
	 * and what the tracker's threads leave of the whole, from their CPU
	 * averaged (tier_linux_others_update(), tier_linux_step_share()). */
	double step_share_own, max_cpu_percent;
	struct tier_linux_others others;
	bool huge_warned, split_warned;
	/* what soft-dirty's writer time was last said to be read from */
	enum tier_linux_writer_time writer_time_said;
	struct tier_linux_guard guard;	/* kernel settings changed, state file */
	bool guard_open;
	unsigned select_warnings;
	char last_select_error[512];
	/* intent */
	struct hint *hints;
	size_t nr_hints, cap_hints;
	uint8_t *page_hint;		/* [env.nr_pages] */
	uint64_t page_hint_len;
	/* control groups: rule i is group i + 1 */
	struct tier_groups groups;
	size_t nr_rules;
	char rule_path[TIER_CONFIG_MAX_CGROUPS][512];	/* as configured */
	char rule_rel[TIER_CONFIG_MAX_CGROUPS][512];	/* as /proc/PID/cgroup shows */
	char cgroup_mount[512];
};

struct hint {
	pid_t pid;
	uint64_t start, end;		/* page-aligned addresses */
	uint8_t advice;			/* enum tier_hint */
};


/* One line to the driver's log (dropped above its level). */
void tier__lw_say(const struct linux_backend *lb, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The tracker's kdamond into the state file (kernel_guard.h). */
void tier__lw_kdamond_starting(struct linux_backend *lb, const pid_t *pids, size_t nr);
void tier__lw_sync_kdamond(struct linux_backend *lb);
/* The tracker's upkeep (ops->maintain: a kdamond's CPU share): now when
 * force, else when a second has passed since the last; called between
 * steps by the daemon and within a step between its parts. Returns the
 * thread CPU it took (ns), which the caller leaves out of its part. */
uint64_t tier__lw_upkeep(struct linux_backend *lb, bool force);
/* env's arrays and page count from the address space. */
void tier__lw_sync_env(struct linux_backend *lb);

/* world_ops.c: the tracker adapter (address observations to dense ones)
 * and the migrator counting directions and failures. */
int tier__lw_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
		     void *ctx, struct tier_err *err);
extern const struct tier_migrator_ops tier__lw_migrator, tier__lw_migrator_nosplit;

/* world_procs.c: the process selection and the refresh of the managed
 * processes and their mappings. */
int tier__lw_copy_selection(struct linux_backend *lb, const struct tier_config *cfg);
void tier__lw_free_selection(struct linux_backend *lb);
int tier__lw_refresh(struct linux_backend *lb, struct tier_loop *loop, struct tier_err *err);

/* world_intent.c: hints and control groups (core/world.h's hooks). */
int tier__lw_apply_hints(struct linux_backend *lb);
void tier__lw_map_groups(struct linux_backend *lb);
int tier__lw_hint(struct tier_world *b, pid_t pid, uint64_t addr, uint64_t len, int advice,
		  struct tier_err *err);
int tier__lw_set_groups(struct tier_world *b, const struct tier_config_cgroup *rules,
			size_t n, struct tier_err *err);
int tier__lw_group_stat(struct tier_world *b, size_t i, struct tier_world_group_stat *st,
			struct tier_err *err);

#endif
