/* config.h - tierd's configuration: one typed struct, defaults in one place.
 *
 * The file format (YAML) is parsed by src/common/config_yaml.c with libcyaml
 * into this struct; the core validates it (tier_config_validate) and the
 * daemon applies it at a safe point of its loop. docs/config.md documents
 * every field; keep the two in step.
 *
 * Ownership: caller-owned storage (tier_config_init / tier_config_release);
 * the struct owns its strings and arrays.
 */
#ifndef TIER_CORE_CONFIG_H
#define TIER_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/groups.h"
#include "core/topology.h"

/* Where the tier order comes from when the operator lists no tiers. */
enum tier_config_rank_by {
	TIER_CONFIG_RANK_FIRMWARE = 0,	/* kernel memory tiers, else HMAT, else SLIT */
	TIER_CONFIG_RANK_MEASURED,	/* the figures `tierctl probe` saved */
};

/* What tierd does about the kernel's own tiering (NUMA balancing mode 2,
 * demotion in reclaim), which would fight its placement. */
enum tier_config_kernel_tiering {
	TIER_CONFIG_KT_DISABLE = 0,	/* switch it off while tierd runs, restore on exit */
	TIER_CONFIG_KT_WARN,		/* leave it, log a warning */
};

/* What tierd does about damon_stat (the kernel's DAMON monitor, on by
 * default in Debian's 7.x kernels), which holds DAMON exclusively. */
enum tier_config_damon_stat {
	TIER_CONFIG_DS_DISABLE = 0,	/* switch it off while tierd uses DAMON, restore on exit */
	TIER_CONFIG_DS_KEEP,		/* leave it on; tierd tracks with another tracker */
};

/* Log levels: syslog(3)'s numbers, named here because the core includes
 * no OS header (tierd/log.c checks that they agree). */
enum tier_log_level {
	TIER_LOG_ERR = 3,
	TIER_LOG_WARNING = 4,
	TIER_LOG_NOTICE = 5,
	TIER_LOG_INFO = 6,
	TIER_LOG_DEBUG = 7,
};

/* Defaults that more than the config itself needs: clients find the
 * daemon's socket there, tierd's --help names it. */
#define TIER_CONFIG_DEFAULT_SOCKET "/run/tierd/tierd.sock"
#define TIER_CONFIG_DEFAULT_BUDGET_BYTES_PER_S (UINT64_C(256) << 20)	/* 256 MiB/s */
#define TIER_CONFIG_DEFAULT_LOG_LEVEL TIER_LOG_INFO

/* One tier of the operator's override: the node ids in it. */
struct tier_config_tier {
	int *nodes;
	size_t nr_nodes;
};

/* One control group's shares of the tiers (docs/cgroups.md). */
struct tier_config_cgroup {
	char *path;			/* cgroup v2 directory, absolute or relative to the mount */
	struct tier_group_rule rule;
};

#define TIER_CONFIG_MAX_CGROUPS (TIER_GROUPS_MAX - 1)

/* A memory device tierd onlines at start (docs/devices.md). */
struct tier_config_device {
	char *name;			/* a device-DAX device, "dax0.0" */
	int tier;			/* rank to put its node in; -1: the kernel's tier */
};

#define TIER_CONFIG_MAX_DEVICES 64

/* Raised: tierd's CPU is bounded by max_cpu_percent whatever its priority;
 * the priority decides only whether a step's work lands in the second it
 * is due or is stretched over the workloads' time slices. */
#define TIER_CONFIG_DEFAULT_NICE (-10)

struct tier_config {
	/* Where sysfs is mounted; read by the Linux topology source.
	 * Default "/sys". */
	char *sysfs_root;
	/* Operator tier override, fastest first; nr_tiers == 0 means ranking
	 * comes from the kernel's memory tiers, else HMAT, else SLIT. */
	struct tier_config_tier *tiers;
	size_t nr_tiers;
	/* Without an override: rank by what the firmware and kernel say
	 * (default) or by the measured tiers in probe_file. Excludes tiers. */
	enum tier_config_rank_by rank_by;
	/* The probe results file (tierctl probe --output). Absolute path.
	 * Default TIER_PROBE_DEFAULT_FILE. */
	char *probe_file;

	/* daemon: */
	char *socket_path;		/* control socket; default TIER_CONFIG_DEFAULT_SOCKET */
	uint64_t interval_ms;		/* policy tick; default 100, 10..60000 */
	uint64_t refresh_ms;		/* processes and mappings re-read; default 1000 */
	int log_level;			/* enum tier_log_level, ERR..DEBUG; default info */
	enum tier_config_kernel_tiering kernel_tiering;	/* default disable */
	enum tier_config_damon_stat damon_stat;		/* default disable */
	/* The kernel settings tierd changed, for a restart after a crash;
	 * absolute path, default /run/tierd/state. */
	char *state_file;
	uint64_t max_cpu_percent;	/* tierd's own CPU, % of one core; default 5, 1..100 */
	/* The nice value of tierd's threads on Linux; default
	 * TIER_CONFIG_DEFAULT_NICE, -20..19. */
	int nice;
	/* The Prometheus metrics endpoint's "ADDR:PORT" (127.0.0.1:9464,
	 * [::1]:9464; common/listen_addr.h checks it); NULL = none, the
	 * default (docs/metrics.md). */
	char *metrics_addr;

	/* policy: */
	char *policy;			/* placement policy; default "tierd" */
	char *tracker;			/* "auto" (best available) or a tracker name */
	uint64_t budget_bytes_per_s;	/* migration budget; default 256 MiB/s
					 * (TIER_CONFIG_DEFAULT_BUDGET_BYTES_PER_S) */

	/* processes: which to manage; none of pids/cgroups = every process
	 * whose RSS is at least min_rss_bytes. */
	int *pids;
	size_t nr_pids;
	char **cgroups;			/* cgroup v2 paths */
	size_t nr_cgroups;
	char *exe_pattern;		/* fnmatch(3) pattern on the executable; NULL = any */
	uint64_t min_rss_bytes;		/* default 64 MiB */

	/* cgroups: each group's shares of the tiers, at most
	 * TIER_CONFIG_MAX_CGROUPS. */
	struct tier_config_cgroup *cgroup_rules;
	size_t nr_cgroup_rules;

	/* devices: device-DAX devices to online as system RAM at start, each
	 * into a tier, at most TIER_CONFIG_MAX_DEVICES. */
	struct tier_config_device *devices;
	size_t nr_devices;
};

/* Fills cfg with the defaults. Returns 0 or -ENOMEM. */
int tier_config_init(struct tier_config *cfg);
void tier_config_release(struct tier_config *cfg);

/* Checks values that the file format cannot: no empty tier, no node listed
 * twice, paths absolute. Returns 0 or -EINVAL with err naming the field
 * (e.g. "topology.tiers[1].nodes: node 2 listed twice"). */
int tier_config_validate(const struct tier_config *cfg, struct tier_err *err);

/* The tier override as the topology ranking takes it. *out is malloc'd
 * (NULL when no override; caller frees); entries point into cfg. */
int tier_config_override(const struct tier_config *cfg,
			 struct tier_tier_override **out, size_t *nr_out);

/* Replaces cfg->sysfs_root by a copy of root. Returns 0 or -ENOMEM. */
int tier_config_set_sysfs_root(struct tier_config *cfg, const char *root);

/* Replaces *field (a string of the config) by a copy of value (NULL
 * clears it). Returns 0 or -ENOMEM. */
int tier_config_set_string(char **field, const char *value);

/* Replaces cfg->probe_file by a copy of path. Returns 0 or -ENOMEM. */
int tier_config_set_probe_file(struct tier_config *cfg, const char *path);

#endif
