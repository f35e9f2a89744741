/* topology_config.h - a configuration's tier ranking, in one place: the
 * operator's tier list (topology.tiers), or the order `tierctl probe`
 * measured (topology.rank_by: measured, read from topology.probe_file),
 * or none. Every front end (tierd, tierctl) gets its tiers through here. */
#ifndef TIER_COMMON_TOPOLOGY_CONFIG_H
#define TIER_COMMON_TOPOLOGY_CONFIG_H

#include "core/config.h"
#include "core/ops.h"
#include "core/topology.h"

/* A configuration's ranking spec and the memory behind it. */
struct tier_config_topology {
	struct tier_topology_spec spec;
	struct tier_tier_override *tiers;	/* owned */
	int *nodes;				/* owned (a probe file's order) */
};

/* Fills ct from cfg. Returns 0 or -errno with err set (the probe file is
 * missing or malformed; out of memory). Release with
 * tier_config_topology_release() either way. */
int tier_config_topology_init(struct tier_config_topology *ct, const struct tier_config *cfg,
			      struct tier_err *err);
void tier_config_topology_release(struct tier_config_topology *ct);

/* Discovers the machine through ops and ranks it as cfg asks. Returns 0
 * or -errno with err set. */
int tier_config_topology_discover(const struct tier_config *cfg,
				  const struct tier_topology_ops *ops, void *priv,
				  struct tier_topology *topo, struct tier_err *err);

#endif
