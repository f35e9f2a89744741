/* config.c - tierd's configuration struct: defaults and validation. */
#include "core/config.h"
#include "core/probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tier_config_set_sysfs_root(struct tier_config *cfg, const char *root)
{
	char *s = strdup(root);

	if (!s)
		return -ENOMEM;
	free(cfg->sysfs_root);
	cfg->sysfs_root = s;
	return 0;
}

int tier_config_set_string(char **field, const char *value)
{
	char *s = value ? strdup(value) : NULL;

	if (value && !s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

int tier_config_set_probe_file(struct tier_config *cfg, const char *path)
{
	char *s = strdup(path);

	if (!s)
		return -ENOMEM;
	free(cfg->probe_file);
	cfg->probe_file = s;
	return 0;
}

int tier_config_init(struct tier_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rank_by = TIER_CONFIG_RANK_FIRMWARE;
	cfg->interval_ms = 100;
	cfg->refresh_ms = 1000;
	cfg->max_cpu_percent = 5;
	cfg->nice = TIER_CONFIG_DEFAULT_NICE;
	cfg->log_level = TIER_CONFIG_DEFAULT_LOG_LEVEL;
	cfg->kernel_tiering = TIER_CONFIG_KT_DISABLE;
	cfg->budget_bytes_per_s = TIER_CONFIG_DEFAULT_BUDGET_BYTES_PER_S;
	cfg->min_rss_bytes = UINT64_C(64) << 20;
	if (tier_config_set_string(&cfg->socket_path, TIER_CONFIG_DEFAULT_SOCKET) ||
	    tier_config_set_string(&cfg->state_file, "/run/tierd/state") ||
	    tier_config_set_string(&cfg->policy, "tierd") ||
	    tier_config_set_string(&cfg->tracker, "auto"))
		return -ENOMEM;
	if (tier_config_set_probe_file(cfg, TIER_PROBE_DEFAULT_FILE))
		return -ENOMEM;
	return tier_config_set_sysfs_root(cfg, "/sys");
}

void tier_config_release(struct tier_config *cfg)
{
	size_t i;

	free(cfg->sysfs_root);
	free(cfg->probe_file);
	free(cfg->socket_path);
	free(cfg->state_file);
	free(cfg->metrics_addr);
	free(cfg->policy);
	free(cfg->tracker);
	free(cfg->exe_pattern);
	free(cfg->pids);
	for (i = 0; i < cfg->nr_cgroups; i++)
		free(cfg->cgroups[i]);
	free(cfg->cgroups);
	for (i = 0; i < cfg->nr_devices; i++)
		free(cfg->devices[i].name);
	free(cfg->devices);
	for (i = 0; i < cfg->nr_cgroup_rules; i++)
		free(cfg->cgroup_rules[i].path);
	free(cfg->cgroup_rules);
	for (i = 0; i < cfg->nr_tiers; i++)
		free(cfg->tiers[i].nodes);
	free(cfg->tiers);
	memset(cfg, 0, sizeof(*cfg));
}

int tier_config_validate(const struct tier_config *cfg, struct tier_err *err)
{
	size_t i, j, k, l;

	if (!cfg->sysfs_root || cfg->sysfs_root[0] != '/')
		return tier_err_set(err, -EINVAL,
				    "topology.sysfs_root: '%s' is not an absolute path",
				    cfg->sysfs_root ? cfg->sysfs_root : "");
	if (!cfg->socket_path || cfg->socket_path[0] != '/')
		return tier_err_set(err, -EINVAL, "daemon.socket: '%s' is not an absolute path",
				    cfg->socket_path ? cfg->socket_path : "");
	if (strlen(cfg->socket_path) >= 108)
		return tier_err_set(err, -EINVAL, "daemon.socket: longer than 107 bytes");
	if (!cfg->state_file || cfg->state_file[0] != '/' || cfg->state_file[1] == '\0')
		return tier_err_set(err, -EINVAL, "daemon.state_file: '%s' is not an absolute file path",
				    cfg->state_file ? cfg->state_file : "");
	if (cfg->interval_ms < 10 || cfg->interval_ms > 60000)
		return tier_err_set(err, -EINVAL, "daemon.interval_ms: %llu is outside 10..60000",
				    (unsigned long long)cfg->interval_ms);
	if (cfg->refresh_ms < cfg->interval_ms || cfg->refresh_ms > 3600000)
		return tier_err_set(err, -EINVAL,
				    "daemon.refresh_ms: %llu is outside interval_ms..3600000",
				    (unsigned long long)cfg->refresh_ms);
	if (cfg->max_cpu_percent < 1 || cfg->max_cpu_percent > 100)
		return tier_err_set(err, -EINVAL, "daemon.max_cpu_percent: %llu is outside 1..100",
				    (unsigned long long)cfg->max_cpu_percent);
	if (cfg->nice < -20 || cfg->nice > 19)
		return tier_err_set(err, -EINVAL, "daemon.nice: %d is outside -20..19", cfg->nice);
	if (!cfg->budget_bytes_per_s)
		return tier_err_set(err, -EINVAL, "policy.budget_mb_per_s: must be positive");
	for (i = 0; i < cfg->nr_pids; i++)
		if (cfg->pids[i] <= 0)
			return tier_err_set(err, -EINVAL, "processes.pids[%zu]: %d is not a process id",
					    i, cfg->pids[i]);
	for (i = 0; i < cfg->nr_cgroups; i++)
		if (!cfg->cgroups[i][0])
			return tier_err_set(err, -EINVAL, "processes.cgroups[%zu]: empty path", i);
	if (cfg->nr_cgroup_rules > TIER_CONFIG_MAX_CGROUPS)
		return tier_err_set(err, -EINVAL, "cgroups: %zu groups, at most %d",
				    cfg->nr_cgroup_rules, TIER_CONFIG_MAX_CGROUPS);
	for (i = 0; i < cfg->nr_cgroup_rules; i++) {
		const struct tier_config_cgroup *c = &cfg->cgroup_rules[i];
		int ret;

		if (!c->path || !c->path[0])
			return tier_err_set(err, -EINVAL, "cgroups[%zu].path: empty", i);
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->cgroup_rules[j].path, c->path))
				return tier_err_set(err, -EINVAL,
						    "cgroups[%zu].path: '%s' is listed twice", i, c->path);
		ret = tier_group_rule_check(&c->rule, err);
		if (ret) {
			tier_err_prefix(err, "cgroups[%zu] (%s)", i, c->path);
			return ret;
		}
	}
	if (!cfg->probe_file || cfg->probe_file[0] != '/')
		return tier_err_set(err, -EINVAL,
				    "topology.probe_file: '%s' is not an absolute path",
				    cfg->probe_file ? cfg->probe_file : "");
	if (cfg->rank_by == TIER_CONFIG_RANK_MEASURED && cfg->nr_tiers)
		return tier_err_set(err, -EINVAL,
				    "topology.rank_by: 'measured' and an operator tier list (topology.tiers) exclude each other");
	for (i = 0; i < cfg->nr_tiers; i++) {
		const struct tier_config_tier *t = &cfg->tiers[i];

		if (!t->nr_nodes)
			return tier_err_set(err, -EINVAL,
					    "topology.tiers[%zu].nodes: empty", i);
		for (j = 0; j < t->nr_nodes; j++) {
			if (t->nodes[j] < 0)
				return tier_err_set(err, -EINVAL,
						    "topology.tiers[%zu].nodes: node %d is negative",
						    i, t->nodes[j]);
			for (k = 0; k <= i; k++)
				for (l = 0; l < cfg->tiers[k].nr_nodes; l++) {
					if (k == i && l >= j)
						break;
					if (cfg->tiers[k].nodes[l] == t->nodes[j])
						return tier_err_set(err, -EINVAL,
								    "topology.tiers[%zu].nodes: node %d is already in topology.tiers[%zu]",
								    i, t->nodes[j], k);
				}
		}
	}
	return 0;
}

int tier_config_override(const struct tier_config *cfg,
			 struct tier_tier_override **out, size_t *nr_out)
{
	struct tier_tier_override *o;
	size_t i;

	*out = NULL;
	*nr_out = 0;
	if (!cfg->nr_tiers)
		return 0;
	o = calloc(cfg->nr_tiers, sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (i = 0; i < cfg->nr_tiers; i++) {
		o[i].nodes = cfg->tiers[i].nodes;
		o[i].nr_nodes = cfg->tiers[i].nr_nodes;
	}
	*out = o;
	*nr_out = cfg->nr_tiers;
	return 0;
}
