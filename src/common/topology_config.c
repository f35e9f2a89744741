/* topology_config.c - a configuration's tier ranking. */
#include "common/topology_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/probe_out.h"

int tier_config_topology_init(struct tier_config_topology *ct, const struct tier_config *cfg,
			      struct tier_err *err)
{
	struct tier_tier_override *tiers = NULL;
	size_t nr = 0;
	int ret;

	memset(ct, 0, sizeof(*ct));
	if (cfg->rank_by == TIER_CONFIG_RANK_MEASURED) {
		ret = tier_probe_load_override(cfg->probe_file, &tiers, &nr, &ct->nodes, err);
		if (ret) {
			tier_err_prefix(err, "topology.rank_by: measured");
			return ret;
		}
		ct->spec.measured = true;
	} else {
		ret = tier_config_override(cfg, &tiers, &nr);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	ct->tiers = tiers;
	ct->spec.tiers = tiers;
	ct->spec.nr_tiers = nr;
	return 0;
}

void tier_config_topology_release(struct tier_config_topology *ct)
{
	free(ct->tiers);
	free(ct->nodes);
	memset(ct, 0, sizeof(*ct));
}

int tier_config_topology_discover(const struct tier_config *cfg,
				  const struct tier_topology_ops *ops, void *priv,
				  struct tier_topology *topo, struct tier_err *err)
{
	struct tier_config_topology ct;
	int ret = tier_config_topology_init(&ct, cfg, err);

	if (!ret)
		ret = tier_topology_build(ops, priv, &ct.spec, topo, err);
	tier_config_topology_release(&ct);
	return ret;
}
