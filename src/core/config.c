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
	if (tier_config_set_probe_file(cfg, TIER_PROBE_DEFAULT_FILE))
		return -ENOMEM;
	return tier_config_set_sysfs_root(cfg, "/sys");
}

void tier_config_release(struct tier_config *cfg)
{
	size_t i;

	free(cfg->sysfs_root);
	free(cfg->probe_file);
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
