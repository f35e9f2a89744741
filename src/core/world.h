/* world.h - a machine a driver (the daemon) runs the policy on: the env
 * the policy runs over, the tracker that feeds it, and the hooks around a
 * step (processes and mappings, intent, control groups, figures). One
 * complete world per backend, each built by one constructor that fills
 * every hook: this host (src/backend/linux/world.c, over sysfs, procfs,
 * DAMON and move_pages) and a simulated machine (src/backend/sim/world.c).
 * Process ids are plain ints here (the core includes no OS headers).
 */
#ifndef TIER_CORE_WORLD_H
#define TIER_CORE_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/mover.h"
#include "core/policy.h"

struct tier_world_stats {
	uint64_t promoted_bytes;
	uint64_t demoted_bytes;
	uint64_t failed_moves;
	/* The same moves by tier rank before and after: moved_pages[from][to]
	 * (promotions have to < from); has_moves_by_tier when the world
	 * keeps them. */
	bool has_moves_by_tier;
	uint64_t moved_pages[TIER_MAX_TIERS][TIER_MAX_TIERS];
	/* failed_moves by class (enum tier_move_fail); they sum to it. */
	uint64_t failed_by_reason[TIER_MOVE_FAIL__COUNT];
	uint64_t processes;
	uint64_t metadata_bytes;	/* the backend's own */
	uint64_t huge_pages;		/* managed transparent huge pages now */
	uint64_t split_huge_pages;	/* huge pages the policy had split */
	/* Pages whose node was found to differ from the kernel's (moved by
	 * someone else) and queried again; 0 where nothing else moves pages. */
	uint64_t rechecked_pages;
	/* Checks of that picture made, and left out because nothing but
	 * tierd had moved pages (the Linux world's placement checks). */
	uint64_t placement_checks, placement_checks_skipped;
	/* How often the processes and their mappings are re-read now, ms:
	 * daemon.refresh_ms, or longer where re-reading would take more than
	 * its part of the CPU budget (the Linux world); 0: not re-read. */
	double refresh_interval_ms;
	/* The kernel threads tierd runs (its kdamond): CPU seconds so far. */
	bool has_kthread_cpu;
	double kthread_cpu_seconds;
	/* tierd's own CPU in its tracker (collecting observations), when
	 * the world measures it. */
	bool has_tracker_cpu;
	double tracker_cpu_seconds;
	/* ... and in the world's other parts of its steps, when it measures
	 * them: reading the address spaces (maps), checking placement
	 * against the kernel's (numa_maps), querying the nodes of new and
	 * round-robin pages (move_pages without nodes), and moving pages
	 * (the move_pages calls, kernel time included). */
	bool has_step_cpu;
	double maps_cpu_seconds, verify_cpu_seconds, query_cpu_seconds, move_cpu_seconds;
	double move_wall_seconds;	/* ... the move calls' wall time */
	/* What a page move has cost the mover's CPU, ns a page: the move
	 * calls' thread CPU over the pages they moved (the Linux world), the
	 * cost model's (tiersim); 0: not known yet. Under an emulator 5-10
	 * times a server's. A reported figure: no policy's gate uses it (at
	 * 12 us a move, tierd's bar for a promotion - the cost over the
	 * latency gap times 2 s - is 40 accesses a second, above the 35/s the
	 * soft-dirty tracker can read, and no hot page went up in the guest). */
	double move_page_ns;
	/* Pages whose node the node queries read from pagemap, and asked of
	 * move_pages(2) (both 0 where the world does not query). */
	uint64_t pagemap_pages, queried_pages;
	/* Faults tracking made the managed processes take (soft-dirty's
	 * write-protect faults), what one cost them (measured; 0: not
	 * known), and the tracker's round period. */
	uint64_t tracker_faults;
	double tracker_fault_seconds;	/* ... the CPU they cost them, as each
					 * round saw one cost its writer */
	uint64_t tracker_fault_ns, tracker_fault_ns_seen;
	uint64_t tracker_period_us;
	/* The tracker's rounds done, observations it dropped (more runs than
	 * its picture holds) and reads it made by PAGEMAP_SCAN. */
	uint64_t tracker_rounds, tracker_dropped, tracker_scan_reads;
	/* Soft-dirty: reads that saw more pages written than the writer could
	 * have written (a mapping made or grown since the clear), after
	 * which the process's round started over. */
	uint64_t tracker_restarts;
	/* The reads of its last round after the clear, in the writer's own
	 * time and in wall time, and the pages first seen written at each
	 * (soft-dirty). */
	uint64_t tracker_read_us[8], tracker_read_wall_us[8], tracker_read_pages[8];
	uint64_t tracker_read_ran_us[8];	/* ... the writer's busiest thread's time on a CPU */
	unsigned tracker_nr_reads;
	/* ... and what the writer's time was read from ("schedstat",
	 * "cpu-clock", "wall"; NULL: not reported) */
	const char *tracker_writer_time;
	/* A simulated machine knows what the application saw: */
	bool has_sim_figures;
	double amat_ns;			/* average memory access time so far */
	double fast_access_ratio;	/* accesses served by tier 0 */
};

/* One control group's figures (tierctl cgroup show). */
struct tier_world_group_stat {
	char dir[512];			/* its cgroup directory */
	bool exists;
	char error[256];		/* why the figures below are missing, or "" */
	uint64_t processes;		/* managed processes in it */
	/* Per tier rank: memory.numa_stat's anon and file bytes summed over
	 * the tier's nodes, and the managed pages tierd sees there. */
	uint64_t anon_bytes[TIER_GROUP_RANKS];
	uint64_t file_bytes[TIER_GROUP_RANKS];
	uint64_t managed_bytes[TIER_GROUP_RANKS];
};

struct tier_world {
	const char *name;		/* "linux", "sim:dram-cxl" */
	const char *tracker_name;
	const struct tier_topology *topo;
	struct tier_env *env;		/* owned by the backend */
	const struct tier_tracker_ops *tracker;
	void *tracker_priv;
	/* The part of the daemon's CPU budget (max_cpu_percent) its steps may
	 * take; the rest is the tracker's threads' (a kdamond, a thread of
	 * its own). 0: all of it. */
	double step_cpu_share;
	/* Required. Brings the env up to date before a step (re-reads the
	 * processes and their mappings when due, advances a simulated
	 * machine); calls tier_loop_resize/forget on loop as pages come and
	 * go, resize once env->page_node holds the new pages' nodes (a
	 * policy counts them where they are then). Returns 0, 1 when the
	 * machine is done (a finite simulation), or
	 * -errno with err set. */
	int (*prepare)(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
		       struct tier_err *err);
	/* Required. */
	void (*stats)(struct tier_world *b, struct tier_world_stats *st);
	/* Optional. Intent for [addr, addr + len) of process pid (enum
	 * tier_hint; TIER_HINT_NONE clears). The range is rounded out to
	 * pages; the hint lasts until the range is unmapped or the process
	 * exits. Returns 0 or -errno (-ESRCH no such process, -EINVAL bad
	 * range); NULL: the backend has no processes (-EOPNOTSUPP). */
	int (*hint)(struct tier_world *b, int pid, uint64_t addr, uint64_t len,
		    int advice, struct tier_err *err);
	/* Optional. The control groups' rules: rules[i] is group i + 1
	 * (core/groups.h); the policy sees them from the next step. Returns
	 * 0 or -errno with err set; NULL: the backend has no cgroups
	 * (-EOPNOTSUPP). */
	int (*set_groups)(struct tier_world *b, const struct tier_config_cgroup *rules,
			  size_t n, struct tier_err *err);
	/* Optional (with set_groups). Figures of rules[i] of the last
	 * set_groups. Returns 0 or -errno with err set. */
	int (*group_stat)(struct tier_world *b, size_t i, struct tier_world_group_stat *st,
			  struct tier_err *err);
	/* Optional. The managed page at addr of process pid. Returns 0,
	 * -ESRCH (not a managed process) or -ENOENT (no managed page there). */
	int (*page_of)(struct tier_world *b, int pid, uint64_t addr, uint64_t *page);
	/* Heatmaps (tierd/heatmap.h), with the three hooks below; a backend
	 * without them has none. Bumped whenever the managed processes or
	 * their mappings may have changed. */
	uint64_t maps_gen;
	/* Optional. The managed processes: up to max pids into pids (may be
	 * NULL with max 0); returns how many there are. */
	size_t (*procs)(struct tier_world *b, int *pids, size_t max);
	/* Optional. Calls fn for each run of process pid's managed pages, in
	 * address order: its first address, its first page id, its pages
	 * (contiguous in both). Returns 0 or -ESRCH (not managed). */
	int (*extents)(struct tier_world *b, int pid,
		       void (*fn)(void *ctx, uint64_t addr, uint64_t page, uint64_t nr), void *ctx);
	/* Optional. The process and address of managed page `page`, and in
	 * *run the pages from it on that follow it in both ids and addresses
	 * (at least 1). Returns 0 or -ENOENT. */
	int (*page_addr)(struct tier_world *b, uint64_t page, int *pid, uint64_t *addr,
			 uint64_t *run);
	/* Optional. Reads the machine's nodes again (a memory device came
	 * or went) and ranks them as spec asks (its run-time pins and
	 * drains). The driver re-creates the policy afterwards (its tables
	 * follow the tiers) and puts the control groups' rules back. Returns
	 * 0 or -errno with err set, the topology in force kept; NULL: the
	 * machine's nodes never change (-EOPNOTSUPP). */
	int (*retopology)(struct tier_world *b, const struct tier_topology_spec *spec,
			  struct tier_err *err);
	/* Optional. A new configuration (process selection, budget). */
	void (*reconfigure)(struct tier_world *b, const struct tier_config *cfg);
	/* Upkeep that must not wait for a step, about every second, also
	 * while tierd's CPU share pauses the steps: the tracker's cost
	 * bounds (a kdamond runs whether or not tierd steps). Optional. */
	void (*maintain)(struct tier_world *b);
	/* The next step is due at step_us (the daemon's monotonic clock):
	 * the world may ask the kernel ahead for what that step's collect
	 * reads. Optional. */
	void (*ahead)(struct tier_world *b, uint64_t step_us);
	/* Optional. Whether the tracker has news for a step: false when all
	 * a collect would hand over restates the last one's (the daemon then
	 * waits an interval, within a bound, rather than take the same
	 * picture in again). NULL: always. */
	bool (*news)(struct tier_world *b);
	/* Required. Undoes what the backend changed (kernel tiering knobs, a
	 * kdamond) and frees it. */
	void (*destroy)(struct tier_world *b);
	void *priv;
};

/* What a world is built from. */
struct tier_world_params {
	const struct tier_config *cfg;	/* copied where kept */
	/* How to rank the machine's nodes into tiers (the configuration's
	 * override: common/topology_config.h); NULL: no override. */
	const struct tier_topology_spec *topology;
	tier_say_fn say;		/* how it says what it does (core/err.h); may be NULL */
	void *say_arg;
	int log_level;			/* the most verbose level the driver keeps: a
					 * world skips building lines above it */
	/* The simulated machine: */
	const char *preset;		/* e.g. "dram-cxl" */
	const char *workload;		/* its built-in workload */
};

/* This host. Returns 0 or -errno with err set. */
int tier_linux_world_new(const struct tier_world_params *p, struct tier_world **out,
			 struct tier_err *err);

/* A simulated machine (p->preset) running p->workload under the
 * configured policy. Returns 0 or -errno with err set. */
int tier_sim_world_new(const struct tier_world_params *p, struct tier_world **out,
		       struct tier_err *err);

#endif
