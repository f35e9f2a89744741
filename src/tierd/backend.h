/* backend.h - what the daemon needs of a machine: the env the policy runs
 * over, a tracker, and a hook run before each step. Two implementations:
 * this host (backend_linux.c) and a simulated machine (backend_sim.c).
 */
#ifndef TIERD_BACKEND_H
#define TIERD_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/policy.h"
#include "tierd/log.h"

struct tierd_backend_stats {
	uint64_t promoted_bytes;
	uint64_t demoted_bytes;
	uint64_t failed_moves;
	uint64_t processes;
	uint64_t metadata_bytes;	/* the backend's own */
	uint64_t huge_pages;		/* managed transparent huge pages now */
	uint64_t split_huge_pages;	/* huge pages the policy had split */
	/* The kernel threads tierd runs (its kdamond): CPU seconds so far. */
	bool has_kthread_cpu;
	double kthread_cpu_seconds;
	/* Faults tracking made the managed processes take (soft-dirty's
	 * write-protect faults), and the tracker's round period. */
	uint64_t tracker_faults;
	uint64_t tracker_period_us;
	/* A simulated machine knows what the application saw: */
	bool has_sim_figures;
	double amat_ns;			/* average memory access time so far */
	double fast_access_ratio;	/* accesses served by tier 0 */
};

/* One control group's figures (tierctl cgroup show). */
struct tierd_group_stat {
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

struct tierd_backend {
	const char *name;		/* "linux", "sim:dram-cxl" */
	const char *tracker_name;
	const struct tier_topology *topo;
	struct tier_env *env;		/* owned by the backend */
	const struct tier_tracker_ops *tracker;
	void *tracker_priv;
	/* Required. Brings the env up to date before a step (re-reads the
	 * processes and their mappings when due, advances a simulated
	 * machine); calls tier_loop_resize/forget on loop as pages come and
	 * go. Returns 0, 1 when the machine is done (a finite simulation), or
	 * -errno with err set. */
	int (*prepare)(struct tierd_backend *b, struct tier_loop *loop, uint64_t now_us,
		       struct tier_err *err);
	/* Required. */
	void (*stats)(struct tierd_backend *b, struct tierd_backend_stats *st);
	/* Optional. Intent for [addr, addr + len) of process pid (enum
	 * tier_hint; TIER_HINT_NONE clears). The range is rounded out to
	 * pages; the hint lasts until the range is unmapped or the process
	 * exits. Returns 0 or -errno (-ESRCH no such process, -EINVAL bad
	 * range); NULL: the backend has no processes (-EOPNOTSUPP). */
	int (*hint)(struct tierd_backend *b, pid_t pid, uint64_t addr, uint64_t len,
		    int advice, struct tier_err *err);
	/* Optional. The control groups' rules: rules[i] is group i + 1
	 * (core/groups.h); the policy sees them from the next step. Returns
	 * 0 or -errno with err set; NULL: the backend has no cgroups
	 * (-EOPNOTSUPP). */
	int (*set_groups)(struct tierd_backend *b, const struct tier_config_cgroup *rules,
			  size_t n, struct tier_err *err);
	/* Optional (with set_groups). Figures of rules[i] of the last
	 * set_groups. Returns 0 or -errno with err set. */
	int (*group_stat)(struct tierd_backend *b, size_t i, struct tierd_group_stat *st,
			  struct tier_err *err);
	/* Optional. The managed page at addr of process pid. Returns 0,
	 * -ESRCH (not a managed process) or -ENOENT (no managed page there). */
	int (*page_of)(struct tierd_backend *b, pid_t pid, uint64_t addr, uint64_t *page);
	/* Heatmaps (tierd/heatmap.h), with the three hooks below; a backend
	 * without them has none. Bumped whenever the managed processes or
	 * their mappings may have changed. */
	uint64_t maps_gen;
	/* Optional. The managed processes: up to max pids into pids (may be
	 * NULL with max 0); returns how many there are. */
	size_t (*procs)(struct tierd_backend *b, pid_t *pids, size_t max);
	/* Optional. Calls fn for each run of process pid's managed pages, in
	 * address order: its first address, its first page id, its pages
	 * (contiguous in both). Returns 0 or -ESRCH (not managed). */
	int (*extents)(struct tierd_backend *b, pid_t pid,
		       void (*fn)(void *ctx, uint64_t addr, uint64_t page, uint64_t nr), void *ctx);
	/* Optional. The process and address of managed page `page`, and in
	 * *run the pages from it on that follow it in both ids and addresses
	 * (at least 1). Returns 0 or -ENOENT. */
	int (*page_addr)(struct tierd_backend *b, uint64_t page, pid_t *pid, uint64_t *addr,
			 uint64_t *run);
	/* Optional. A new configuration (process selection, budget). */
	void (*reconfigure)(struct tierd_backend *b, const struct tier_config *cfg);
	/* Required. Undoes what the backend changed (kernel tiering knobs, a
	 * kdamond) and frees it. */
	void (*destroy)(struct tierd_backend *b);
	void *priv;
};

/* Builds the simulated backend for preset (e.g. "dram-cxl"), running
 * workload under cfg's policy. Returns 0 or -errno. */
int tierd_backend_sim_new(const char *preset, const char *workload,
			  const struct tier_config *cfg, const struct tierd_log *log,
			  struct tierd_backend **out, struct tier_err *err);

/* Builds the Linux backend. Returns 0 or -errno. */
int tierd_backend_linux_new(const struct tier_config *cfg, const struct tierd_log *log,
			    struct tierd_backend **out, struct tier_err *err);

#endif
