/* config_yaml.c - load tierd's YAML configuration file with libcyaml. */
#include "common/config_yaml.h"
#include "common/listen_addr.h"
#include "common/yaml_err.h"

#include <cyaml/cyaml.h>
#include <yaml.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's shape, as libcyaml loads it; converted to struct tier_config. */
struct yaml_tier {
	int *nodes;
	unsigned nodes_count;
};

struct yaml_topology {
	char *sysfs_root;
	struct yaml_tier *tiers;
	unsigned tiers_count;
	enum tier_config_rank_by rank_by;
	char *probe_file;
};

struct yaml_daemon {
	char *socket;
	uint64_t *interval_ms;		/* pointers: NULL when absent */
	uint64_t *refresh_ms;
	int *log_level;
	enum tier_config_kernel_tiering *kernel_tiering;
	enum tier_config_damon_stat *damon_stat;
	char *state_file;
	uint64_t *max_cpu_percent;
	int *nice;
	char *metrics;
};

struct yaml_policy {
	char *name;
	char *tracker;
	uint64_t *budget_mb_per_s;
};

struct yaml_processes {
	int *pids;
	unsigned pids_count;
	char **cgroups;
	unsigned cgroups_count;
	char *exe;
	uint64_t *min_rss_mb;
};

struct yaml_cgroup {
	char *path;
	char **tier_max;
	unsigned tier_max_count;
	char **tier_min;
	unsigned tier_min_count;
	uint64_t *weight;
};

struct yaml_device {
	char *name;
	int *tier;
};

struct yaml_config {
	struct yaml_device *devices;
	unsigned devices_count;
	struct yaml_topology *topology;
	struct yaml_daemon *daemon;
	struct yaml_policy *policy;
	struct yaml_processes *processes;
	struct yaml_cgroup *cgroups;
	unsigned cgroups_count;
};

static const cyaml_schema_value_t node_id_schema = {
	CYAML_VALUE_INT(CYAML_FLAG_DEFAULT, int),
};

static const cyaml_schema_field_t tier_fields[] = {
	CYAML_FIELD_SEQUENCE("nodes", CYAML_FLAG_POINTER, struct yaml_tier, nodes,
			     &node_id_schema, 1, CYAML_UNLIMITED),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t tier_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, struct yaml_tier, tier_fields),
};

static const cyaml_strval_t rank_by_strings[] = {
	{ "firmware", TIER_CONFIG_RANK_FIRMWARE },
	{ "measured", TIER_CONFIG_RANK_MEASURED },
};

static const cyaml_schema_field_t topology_fields[] = {
	CYAML_FIELD_STRING_PTR("sysfs_root", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
			       struct yaml_topology, sysfs_root, 1, 4095),
	CYAML_FIELD_SEQUENCE("tiers", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
			     struct yaml_topology, tiers, &tier_schema, 1,
			     CYAML_UNLIMITED),
	CYAML_FIELD_ENUM("rank_by", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT,
			 struct yaml_topology, rank_by, rank_by_strings,
			 CYAML_ARRAY_LEN(rank_by_strings)),
	CYAML_FIELD_STRING_PTR("probe_file", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
			       struct yaml_topology, probe_file, 1, 4095),
	CYAML_FIELD_END
};

static const cyaml_strval_t kernel_tiering_strings[] = {
	{ "disable", TIER_CONFIG_KT_DISABLE },
	{ "warn", TIER_CONFIG_KT_WARN },
};

static const cyaml_strval_t damon_stat_strings[] = {
	{ "disable", TIER_CONFIG_DS_DISABLE },
	{ "keep", TIER_CONFIG_DS_KEEP },
};

static const cyaml_strval_t log_level_strings[] = {
	{ "error", TIER_LOG_ERR }, { "warning", TIER_LOG_WARNING },
	{ "info", TIER_LOG_INFO }, { "debug", TIER_LOG_DEBUG },
};

#define OPT_PTR (CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL)

static const cyaml_schema_field_t daemon_fields[] = {
	CYAML_FIELD_STRING_PTR("socket", OPT_PTR, struct yaml_daemon, socket, 1, 107),
	CYAML_FIELD_UINT_PTR("interval_ms", OPT_PTR, struct yaml_daemon, interval_ms),
	CYAML_FIELD_UINT_PTR("refresh_ms", OPT_PTR, struct yaml_daemon, refresh_ms),
	CYAML_FIELD_UINT_PTR("max_cpu_percent", OPT_PTR, struct yaml_daemon, max_cpu_percent),
	CYAML_FIELD_INT_PTR("nice", OPT_PTR, struct yaml_daemon, nice),
	CYAML_FIELD_ENUM_PTR("log_level", OPT_PTR | CYAML_FLAG_STRICT, struct yaml_daemon, log_level,
			 log_level_strings, CYAML_ARRAY_LEN(log_level_strings)),
	CYAML_FIELD_ENUM_PTR("kernel_tiering", OPT_PTR | CYAML_FLAG_STRICT, struct yaml_daemon,
			 kernel_tiering, kernel_tiering_strings,
			 CYAML_ARRAY_LEN(kernel_tiering_strings)),
	CYAML_FIELD_ENUM_PTR("damon_stat", OPT_PTR | CYAML_FLAG_STRICT, struct yaml_daemon,
			 damon_stat, damon_stat_strings, CYAML_ARRAY_LEN(damon_stat_strings)),
	CYAML_FIELD_STRING_PTR("state_file", OPT_PTR, struct yaml_daemon, state_file, 2, 4095),
	CYAML_FIELD_STRING_PTR("metrics", OPT_PTR, struct yaml_daemon, metrics, 1, 255),
	CYAML_FIELD_END
};

static const cyaml_schema_field_t policy_fields[] = {
	CYAML_FIELD_STRING_PTR("name", OPT_PTR, struct yaml_policy, name, 1, 64),
	CYAML_FIELD_STRING_PTR("tracker", OPT_PTR, struct yaml_policy, tracker, 1, 64),
	CYAML_FIELD_UINT_PTR("budget_mb_per_s", OPT_PTR, struct yaml_policy, budget_mb_per_s),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t pid_schema = {
	CYAML_VALUE_INT(CYAML_FLAG_DEFAULT, int),
};

static const cyaml_schema_value_t cgroup_schema = {
	CYAML_VALUE_STRING(CYAML_FLAG_POINTER, char, 1, 4095),
};

static const cyaml_schema_field_t processes_fields[] = {
	CYAML_FIELD_SEQUENCE("pids", OPT_PTR, struct yaml_processes, pids, &pid_schema, 0,
			     CYAML_UNLIMITED),
	CYAML_FIELD_SEQUENCE("cgroups", OPT_PTR, struct yaml_processes, cgroups,
			     &cgroup_schema, 0, CYAML_UNLIMITED),
	CYAML_FIELD_STRING_PTR("exe", OPT_PTR, struct yaml_processes, exe, 1, 4095),
	CYAML_FIELD_UINT_PTR("min_rss_mb", OPT_PTR, struct yaml_processes, min_rss_mb),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t amount_schema = {
	CYAML_VALUE_STRING(CYAML_FLAG_POINTER, char, 1, 64),
};

static const cyaml_schema_field_t cgroup_fields[] = {
	CYAML_FIELD_STRING_PTR("path", CYAML_FLAG_POINTER, struct yaml_cgroup, path, 1, 4095),
	CYAML_FIELD_SEQUENCE("tier_max", OPT_PTR, struct yaml_cgroup, tier_max, &amount_schema,
			     0, TIER_GROUP_RANKS),
	CYAML_FIELD_SEQUENCE("tier_min", OPT_PTR, struct yaml_cgroup, tier_min, &amount_schema,
			     0, TIER_GROUP_RANKS),
	CYAML_FIELD_UINT_PTR("weight", OPT_PTR, struct yaml_cgroup, weight),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t cgroup_rule_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, struct yaml_cgroup, cgroup_fields),
};

static const cyaml_schema_field_t device_fields[] = {
	CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, struct yaml_device, name, 1, 31),
	CYAML_FIELD_INT_PTR("tier", OPT_PTR, struct yaml_device, tier),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t device_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, struct yaml_device, device_fields),
};

static const cyaml_schema_field_t config_fields[] = {
	CYAML_FIELD_SEQUENCE("devices", OPT_PTR, struct yaml_config, devices, &device_schema, 0,
			     TIER_CONFIG_MAX_DEVICES),
	CYAML_FIELD_MAPPING_PTR("topology", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL,
				struct yaml_config, topology, topology_fields),
	CYAML_FIELD_MAPPING_PTR("daemon", OPT_PTR, struct yaml_config, daemon, daemon_fields),
	CYAML_FIELD_MAPPING_PTR("policy", OPT_PTR, struct yaml_config, policy, policy_fields),
	CYAML_FIELD_MAPPING_PTR("processes", OPT_PTR, struct yaml_config, processes,
				processes_fields),
	CYAML_FIELD_SEQUENCE("cgroups", OPT_PTR, struct yaml_config, cgroups,
			     &cgroup_rule_schema, 0, TIER_CONFIG_MAX_CGROUPS),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t config_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_POINTER, struct yaml_config, config_fields),
};

static int convert_sections(const struct yaml_config *y, struct tier_config *cfg,
			    struct tier_err *err)
{
	const struct yaml_daemon *d = y->daemon;
	const struct yaml_policy *p = y->policy;
	const struct yaml_processes *pr = y->processes;
	size_t i;

	if (d) {
		if (d->socket && tier_config_set_string(&cfg->socket_path, d->socket))
			goto out_nomem;
		if (d->interval_ms)
			cfg->interval_ms = *d->interval_ms;
		if (d->refresh_ms)
			cfg->refresh_ms = *d->refresh_ms;
		if (d->log_level)
			cfg->log_level = *d->log_level;
		if (d->kernel_tiering)
			cfg->kernel_tiering = *d->kernel_tiering;
		if (d->damon_stat)
			cfg->damon_stat = *d->damon_stat;
		if (d->state_file && tier_config_set_string(&cfg->state_file, d->state_file))
			goto out_nomem;
		if (d->max_cpu_percent)
			cfg->max_cpu_percent = *d->max_cpu_percent;
		if (d->nice)
			cfg->nice = *d->nice;
		if (d->metrics) {
			if (tier_listen_addr_parse(d->metrics, NULL, NULL, err)) {
				tier_err_prefix(err, "daemon.metrics");
				return -EINVAL;
			}
			if (tier_config_set_string(&cfg->metrics_addr, d->metrics))
				goto out_nomem;
		}
	}
	if (p) {
		if (p->name && tier_config_set_string(&cfg->policy, p->name))
			goto out_nomem;
		if (p->tracker && tier_config_set_string(&cfg->tracker, p->tracker))
			goto out_nomem;
		if (p->budget_mb_per_s) {
			if (*p->budget_mb_per_s > (UINT64_C(1) << 40))
				return tier_err_set(err, -EINVAL,
						    "policy.budget_mb_per_s: %llu is too large",
						    (unsigned long long)*p->budget_mb_per_s);
			cfg->budget_bytes_per_s = *p->budget_mb_per_s << 20;
		}
	}
	if (pr) {
		if (pr->pids_count) {
			cfg->pids = malloc(pr->pids_count * sizeof(*cfg->pids));
			if (!cfg->pids)
				goto out_nomem;
			memcpy(cfg->pids, pr->pids, pr->pids_count * sizeof(*cfg->pids));
			cfg->nr_pids = pr->pids_count;
		}
		if (pr->cgroups_count) {
			cfg->cgroups = calloc(pr->cgroups_count, sizeof(*cfg->cgroups));
			if (!cfg->cgroups)
				goto out_nomem;
			cfg->nr_cgroups = pr->cgroups_count;
			for (i = 0; i < pr->cgroups_count; i++)
				if (tier_config_set_string(&cfg->cgroups[i], pr->cgroups[i]))
					goto out_nomem;
		}
		if (pr->exe && tier_config_set_string(&cfg->exe_pattern, pr->exe))
			goto out_nomem;
		if (pr->min_rss_mb) {
			if (*pr->min_rss_mb > (UINT64_C(1) << 40))
				return tier_err_set(err, -EINVAL, "processes.min_rss_mb: %llu is too large",
						    (unsigned long long)*pr->min_rss_mb);
			cfg->min_rss_bytes = *pr->min_rss_mb << 20;
		}
	}
	if (y->devices_count) {
		cfg->devices = calloc(y->devices_count, sizeof(*cfg->devices));
		if (!cfg->devices)
			goto out_nomem;
		cfg->nr_devices = y->devices_count;
		for (i = 0; i < y->devices_count; i++) {
			const struct yaml_device *yd = &y->devices[i];
			size_t k;

			if (tier_config_set_string(&cfg->devices[i].name, yd->name))
				goto out_nomem;
			cfg->devices[i].tier = yd->tier ? *yd->tier : -1;
			if (yd->tier && (*yd->tier < 0 || *yd->tier >= TIER_MAX_TIERS))
				return tier_err_set(err, -EINVAL, "devices[%zu].tier: %d is outside 0..%d",
						    i, *yd->tier, TIER_MAX_TIERS - 1);
			for (k = 0; k < i; k++)
				if (!strcmp(cfg->devices[k].name, yd->name))
					return tier_err_set(err, -EINVAL,
							    "devices[%zu].name: '%s' is listed twice", i,
							    yd->name);
		}
	}
	if (y->cgroups_count) {
		cfg->cgroup_rules = calloc(y->cgroups_count, sizeof(*cfg->cgroup_rules));
		if (!cfg->cgroup_rules)
			goto out_nomem;
		cfg->nr_cgroup_rules = y->cgroups_count;
		for (i = 0; i < y->cgroups_count; i++) {
			const struct yaml_cgroup *c = &y->cgroups[i];
			struct tier_config_cgroup *o = &cfg->cgroup_rules[i];
			unsigned k;

			if (tier_config_set_string(&o->path, c->path))
				goto out_nomem;
			for (k = 0; k < c->tier_max_count; k++)
				if (tier_group_rule_set(&o->rule, "max", c->tier_max[k], err)) {
					tier_err_prefix(err, "cgroups[%zu].tier_max[%u]", i, k);
					return -EINVAL;
				}
			for (k = 0; k < c->tier_min_count; k++)
				if (tier_group_rule_set(&o->rule, "min", c->tier_min[k], err)) {
					tier_err_prefix(err, "cgroups[%zu].tier_min[%u]", i, k);
					return -EINVAL;
				}
			if (c->weight) {
				if (!*c->weight || *c->weight > TIER_GROUP_MAX_WEIGHT)
					return tier_err_set(err, -EINVAL,
							    "cgroups[%zu].weight: %llu is outside 1..%d", i,
							    (unsigned long long)*c->weight,
							    TIER_GROUP_MAX_WEIGHT);
				o->rule.weight = (uint32_t)*c->weight;
			}
		}
	}
	return 0;
out_nomem:
	return tier_err_set(err, -ENOMEM, "out of memory");
}

static int convert(const struct yaml_config *y, struct tier_config *cfg,
		   struct tier_err *err)
{
	const struct yaml_topology *t = y ? y->topology : NULL;
	size_t i;
	int ret;

	if (y) {
		ret = convert_sections(y, cfg, err);
		if (ret)
			return ret;
	}
	if (!t)
		return 0;
	if (t->sysfs_root) {
		ret = tier_config_set_sysfs_root(cfg, t->sysfs_root);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	cfg->rank_by = t->rank_by;
	if (t->probe_file) {
		ret = tier_config_set_probe_file(cfg, t->probe_file);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	if (t->tiers_count) {
		cfg->tiers = calloc(t->tiers_count, sizeof(*cfg->tiers));
		if (!cfg->tiers)
			return tier_err_set(err, -ENOMEM, "out of memory");
		cfg->nr_tiers = t->tiers_count;
		for (i = 0; i < t->tiers_count; i++) {
			size_t n = t->tiers[i].nodes_count;

			cfg->tiers[i].nodes = malloc(n * sizeof(int));
			if (!cfg->tiers[i].nodes)
				return tier_err_set(err, -ENOMEM, "out of memory");
			memcpy(cfg->tiers[i].nodes, t->tiers[i].nodes, n * sizeof(int));
			cfg->tiers[i].nr_nodes = n;
		}
	}
	return 0;
}

static int load(const char *yaml, size_t len, const char *name,
		struct tier_config *cfg, struct tier_err *err)
{
	struct tier_yaml_log lc = { 0 };
	cyaml_config_t cc = tier_yaml_cyaml_config(&lc);
	struct yaml_config *y = NULL;
	cyaml_err_t cerr;
	int ret;

	ret = tier_config_init(cfg);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	cerr = cyaml_load_data((const uint8_t *)yaml, len, &cc, &config_schema,
			       (cyaml_data_t **)&y, NULL);
	if (cerr != CYAML_OK) {
		ret = tier_yaml_load_error(&lc, yaml, len, name, cerr, err);
		goto out_defaults;
	}
	ret = convert(y, cfg, err);
	cyaml_free(&cc, &config_schema, y, 0);
	if (ret) {
		if (ret != -ENOMEM)
			tier_err_prefix(err, "%s", name);
		goto out_defaults;
	}
	ret = tier_config_validate(cfg, err);
	if (ret) {
		tier_err_prefix(err, "%s", name);
		goto out_defaults;
	}
	return 0;
out_defaults:
	tier_config_release(cfg);
	if (tier_config_init(cfg))
		memset(cfg, 0, sizeof(*cfg));
	return ret;
}

/* Configuration files are small; a larger one is a mistake. */
enum { CONFIG_MAX_BYTES = 1 << 20 };

int tier_config_load_file(const char *path, struct tier_config *cfg,
			  struct tier_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		ret = tier_config_init(cfg);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
		return tier_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	buf = malloc(CONFIG_MAX_BYTES + 1);
	if (buf)
		len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	ret = !buf ? -ENOMEM : ferror(f) ? -EIO : len > CONFIG_MAX_BYTES ? -EFBIG : 0;
	fclose(f);
	if (ret) {
		free(buf);
		if (tier_config_init(cfg))
			return tier_err_set(err, -ENOMEM, "out of memory");
		return tier_err_set(err, ret, "%s: %s", path,
				    ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
	}
	ret = load(buf, len, path, cfg, err);
	free(buf);
	return ret;
}

int tier_config_load_string(const char *yaml, size_t len, const char *name,
			    struct tier_config *cfg, struct tier_err *err)
{
	return load(yaml, len, name, cfg, err);
}
