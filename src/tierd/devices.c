/* devices.c - memory devices as tiered nodes, the daemon's side
 * (docs/devices.md): the devices the configuration onlines at start, a
 * node put in a tier at run time (node-tier), and drains (drain): tierd
 * stops placing pages on the node and moves every managed page off it to
 * the next tiers, within the migration budget and the control groups'
 * caps, a step at a time. Offlining the node's memory afterwards is
 * tierctl's (it needs no policy). */
#include "tierd/internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/devices.h"
#include "common/topology_config.h"
#include "core/budget.h"

/* At most this many pages leave a drained node in one step, whatever the
 * budget (an unlimited budget included), and no more batches once a step
 * has spent DRAIN_STEP_US: the daemon answers its socket between steps. */
#define DRAIN_MAX_PAGES_PER_STEP 16384
#define DRAIN_STEP_US 50000

static struct tierd_drain *drain_of(struct tierd *d, int node)
{
	size_t i;

	for (i = 0; i < d->dev.nr_drains; i++)
		if (d->dev.drains[i].node == node)
			return &d->dev.drains[i];
	return NULL;
}

void tierd_devices_spec(struct tierd *d, struct tier_topology_spec *spec)
{
	size_t i;

	spec->pins = d->dev.pins;
	spec->nr_pins = d->dev.nr_pins;
	for (i = 0; i < d->dev.nr_drains; i++)
		d->dev.drained[i] = d->dev.drains[i].node;
	spec->drained = d->dev.drained;
	spec->nr_drained = d->dev.nr_drains;
}

/* Pins node to rank (replacing an older pin of it); rank -1 removes it. */
static void pin_set(struct tierd_devices *dev, int node, int rank)
{
	size_t i;

	for (i = 0; i < dev->nr_pins; i++)
		if (dev->pins[i].node == node)
			break;
	if (rank < 0) {
		if (i < dev->nr_pins)
			dev->pins[i] = dev->pins[--dev->nr_pins];
		return;
	}
	if (i == dev->nr_pins) {
		if (dev->nr_pins == TIER_MAX_NODES)
			return;
		dev->nr_pins++;
	}
	dev->pins[i].node = node;
	dev->pins[i].rank = rank;
}

/* The machine's nodes read and ranked again with the pins and drains in
 * force; the policy re-created over the new tiers and the control groups'
 * rules put back (their amounts may be fractions of a tier). */
static int retopology(struct tierd *d, struct tier_err *err)
{
	struct tier_config_topology ct;
	struct tier_loop nl;
	int ret;

	if (!d->be->retopology)
		return tier_err_set(err, -EOPNOTSUPP, "%s: its nodes never change", d->be->name);
	ret = tier_config_topology_init(&ct, &d->cfg, err);
	if (!ret) {
		tierd_devices_spec(d, &ct.spec);
		ret = d->be->retopology(d->be, &ct.spec, err);
	}
	tier_config_topology_release(&ct);
	if (ret)
		return ret;
	ret = tier_loop_init(&nl, d->be->env, d->loop.policy, d->be->tracker, d->be->tracker_priv,
			     err);
	if (ret)
		return ret;
	nl.watch = d->loop.watch;
	nl.watch_ctx = d->loop.watch_ctx;
	tier_loop_release(&d->loop);
	d->loop = nl;
	if (tierd_cgroups_apply(d, &d->cfg, false, err))
		tierd_log(&d->log, LOG_WARNING, "after a topology change: %s", err->msg);
	return 0;
}

static void log_tiers(struct tierd *d, const char *why)
{
	const struct tier_topology *t = d->be->topo;
	char line[512];
	size_t r, k, l = 0;

	line[0] = '\0';
	for (r = 0; r < t->nr_tiers && l < sizeof(line); r++) {
		l += (size_t)snprintf(line + l, sizeof(line) - l, "%s[", r ? " " : "");
		for (k = 0; k < t->tiers[r].nr_nodes && l < sizeof(line); k++)
			l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%d", k ? "," : "",
					      t->tiers[r].nodes[k]);
		if (l < sizeof(line))
			l += (size_t)snprintf(line + l, sizeof(line) - l, "]");
	}
	tierd_log(&d->log, LOG_INFO, "%s: tiers now %s", why, line);
}

int tierd_devices_start(struct tierd *d, struct tier_err *err)
{
	size_t i;
	int ret;

	for (i = 0; i < d->cfg.nr_devices; i++) {
		const struct tier_config_device *cd = &d->cfg.devices[i];
		int node = -1;

		if (d->args->machine)
			return tier_err_set(err, -EOPNOTSUPP, "devices[%zu] (%s): %s has no devices", i,
					    cd->name, d->args->machine);
		ret = tier_linux_dax_online(d->cfg.sysfs_root, cd->name, &node, err);
		if (ret == -EALREADY) {
			/* Onlined before (an earlier start): its node is kept. */
			struct tier_devices devs;
			size_t k;

			if (!tier_linux_devices_read(&devs, err))
				for (k = 0; k < devs.nr_dax; k++)
					if (!strcmp(devs.dax[k].name, cd->name))
						node = devs.dax[k].target_node;
			tier_linux_devices_release(&devs);
			ret = node < 0 ? -ENOENT : 0;
		}
		if (ret) {
			tier_err_prefix(err, "devices[%zu]", i);
			return ret;
		}
		tierd_log(&d->log, LOG_INFO, "device %s: system RAM on node %d%s", cd->name, node,
			  cd->tier >= 0 ? "" : ", in the kernel's tier");
		if (cd->tier >= 0)
			pin_set(&d->dev, node, cd->tier);
	}
	return 0;
}

/* --- node-tier -------------------------------------------------------------- */

static bool get_int_arg(struct json_object *args, const char *key, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static int check_args(const char *what, struct json_object *args, const char *const *keys,
		      struct tier_err *err)
{
	json_object_object_foreach(args, key, v) {
		size_t i;

		(void)v;
		for (i = 0; keys[i]; i++)
			if (!strcmp(key, keys[i]))
				break;
		if (!keys[i])
			return tier_err_set(err, -EINVAL, "%s: unknown argument '%.32s'", what, key);
	}
	return 0;
}

int tierd_node_tier(struct tierd *d, struct json_object *args, struct tier_err *err)
{
	static const char *const keys[] = { "node", "rank", NULL };
	struct tier_node_pin saved[TIER_MAX_NODES];
	size_t nr_saved = d->dev.nr_pins;
	struct tierd_drain *dr;
	int64_t node, rank;
	int ret = check_args("node-tier", args, keys, err);

	if (ret)
		return ret;
	if (!get_int_arg(args, "node", &node) || node < 0 || node >= TIER_MAX_NODES)
		return tier_err_set(err, -EINVAL, "node-tier: 'node' must be a node id (0..%d)",
				    TIER_MAX_NODES - 1);
	if (!get_int_arg(args, "rank", &rank) || rank < -1 || rank > TIER_MAX_TIERS)
		return tier_err_set(err, -EINVAL,
				    "node-tier: 'rank' must be a tier rank, or -1 for the kernel's tier");
	if (rank > (int64_t)d->be->topo->nr_tiers)
		return tier_err_set(err, -EINVAL,
				    "node-tier: no tier %d (ranks 0..%zu; %zu is a new slowest tier)",
				    (int)rank, d->be->topo->nr_tiers, d->be->topo->nr_tiers);
	dr = drain_of(d, (int)node);
	if (dr && !dr->done)
		return tier_err_set(err, -EBUSY, "node-tier: node %d is being drained", (int)node);
	memcpy(saved, d->dev.pins, sizeof(saved));
	pin_set(&d->dev, (int)node, (int)rank);
	/* A drained node that comes back (its device onlined again) is
	 * placed again. */
	if (dr)
		*dr = d->dev.drains[--d->dev.nr_drains];
	ret = retopology(d, err);
	if (ret) {
		memcpy(d->dev.pins, saved, sizeof(saved));
		d->dev.nr_pins = nr_saved;
		tier_err_prefix(err, "node-tier");
		return ret;
	}
	tierd_log(&d->log, LOG_INFO, "node %d placed in tier %d", (int)node,
		  tier_topology_node_rank(d->be->topo, (int)node));
	log_tiers(d, "node-tier");
	return 0;
}

/* --- drains ------------------------------------------------------------------- */

static struct json_object *drain_json(const struct tierd *d, const struct tierd_drain *dr)
{
	struct json_object *o = json_object_new_object();
	uint64_t page = UINT64_C(1) << d->be->env->page_shift;
	uint64_t now = tier_linux_now_us();

	json_object_object_add(o, "node", json_object_new_int(dr->node));
	json_object_object_add(o, "state", json_object_new_string(dr->done ? "done" : "draining"));
	json_object_object_add(o, "former_tier", json_object_new_int(dr->former_rank));
	json_object_object_add(o, "start_bytes", json_object_new_uint64(dr->pages_at_start * page));
	json_object_object_add(o, "moved_bytes", json_object_new_uint64(dr->moved_pages * page));
	json_object_object_add(o, "left_bytes", json_object_new_uint64(dr->left_pages * page));
	json_object_object_add(o, "failed_moves", json_object_new_uint64(dr->failed_pages));
	json_object_object_add(o, "seconds",
			       json_object_new_double((double)((dr->done ? dr->done_us : now) -
							       dr->start_us) / 1e6));
	return o;
}

/* Managed pages on node now. */
static uint64_t pages_on(const struct tier_env *env, int node)
{
	uint64_t p, n = 0;

	for (p = 0; p < env->nr_pages; p++)
		n += env->page_node[p] == node;
	return n;
}

struct json_object *tierd_drain(struct tierd *d, struct json_object *args, int *ret,
				struct tier_err *err)
{
	static const char *const keys[] = { "node", NULL };
	struct tier_node *n;
	struct tierd_drain *dr;
	int64_t node;

	*ret = check_args("drain", args, keys, err);
	if (*ret)
		return NULL;
	if (!get_int_arg(args, "node", &node) || node < 0 || node >= TIER_MAX_NODES) {
		*ret = tier_err_set(err, -EINVAL, "drain: 'node' must be a node id (0..%d)",
				    TIER_MAX_NODES - 1);
		return NULL;
	}
	dr = drain_of(d, (int)node);
	if (dr)		/* already: its progress */
		return drain_json(d, dr);
	n = tier_topology_node(d->be->topo, (int)node);
	if (!n || !n->has_memory || n->rank < 0) {
		*ret = tier_err_set(err, -ENOENT, "drain: node %d is in no tier (tierctl topology)",
				    (int)node);
		return NULL;
	}
	if (d->be->topo->nr_tiers < 2 && d->be->topo->tiers[0].nr_nodes < 2) {
		*ret = tier_err_set(err, -EINVAL, "drain: node %d is the only node with memory",
				    (int)node);
		return NULL;
	}
	if (d->dev.nr_drains == TIERD_MAX_DRAINS) {
		*ret = tier_err_set(err, -E2BIG, "drain: %d drains at once at most", TIERD_MAX_DRAINS);
		return NULL;
	}
	dr = &d->dev.drains[d->dev.nr_drains++];
	memset(dr, 0, sizeof(*dr));
	dr->node = (int)node;
	dr->former_rank = n->rank;
	dr->start_us = tier_linux_now_us();
	dr->pages_at_start = dr->left_pages = pages_on(d->be->env, (int)node);
	tier_budget_init(&dr->budget, d->cfg.budget_bytes_per_s, d->cfg.budget_bytes_per_s,
			 dr->start_us);
	*ret = retopology(d, err);
	if (*ret) {
		d->dev.nr_drains--;
		tier_err_prefix(err, "drain");
		return NULL;
	}
	tierd_log(&d->log, LOG_INFO, "draining node %d (tier %d): %llu managed pages on it", dr->node,
		  dr->former_rank, (unsigned long long)dr->pages_at_start);
	log_tiers(d, "drain");
	return drain_json(d, dr);
}

/* Pages of each group in each tier now, for the caps. */
static void group_use(const struct tier_env *env, const int *node_rank,
		      uint64_t use[TIER_GROUPS_MAX][TIER_GROUP_RANKS])
{
	uint64_t p;

	memset(use, 0, sizeof(uint64_t) * TIER_GROUPS_MAX * TIER_GROUP_RANKS);
	if (!env->groups || !env->page_owner)
		return;
	for (p = 0; p < env->nr_pages; p++) {
		uint8_t nd = env->page_node[p];
		int r = nd == TIER_NODE_NONE ? -1 : node_rank[nd];

		if (r >= 0 && r < TIER_GROUP_RANKS)
			use[env->groups->owner_group[env->page_owner[p]]][r]++;
	}
}

/* The tier a page of group g leaving the drained node goes to: the next
 * slower tier than the node was in first, then slower ones, then faster
 * ones, skipping any whose cap the group has reached or with no free
 * page; the slowest tier when every one is capped (its cap cannot be
 * enforced: the pages must live somewhere). -1: nowhere has room. */
static int target_node(const struct tier_env *env, int former_rank, unsigned g,
		       uint64_t use[TIER_GROUPS_MAX][TIER_GROUP_RANKS], int64_t *free_pages,
		       const uint64_t *tier_total)
{
	const struct tier_topology *t = env->topo;
	int order[TIER_MAX_TIERS], nr = 0, r, i;
	size_t k;

	for (r = former_rank; r < (int)t->nr_tiers; r++)
		order[nr++] = r;
	for (r = former_rank - 1; r >= 0; r--)
		order[nr++] = r;
	for (i = 0; i < nr; i++) {
		int node;

		r = order[i];
		if (env->groups && g < env->groups->nr && r < TIER_GROUP_RANKS &&
		    r != (int)t->nr_tiers - 1 &&
		    use[g][r] >= tier_amount_pages(&env->groups->rule[g].max[r], tier_total[r],
						   env->page_shift))
			continue;
		/* The roomiest node of the tier, from the step's own count
		 * (reading each node's meminfo per page would cost more than
		 * the move). */
		node = -1;
		for (k = 0; k < t->tiers[r].nr_nodes; k++) {
			int id = t->tiers[r].nodes[k];

			if (node < 0 || free_pages[id] > free_pages[node])
				node = id;
		}
		if (node < 0 || free_pages[node] <= 0)
			continue;
		free_pages[node]--;
		if (r < TIER_GROUP_RANKS)
			use[g][r]++;
		return node;
	}
	return -1;
}

static void drain_one(struct tierd *d, struct tierd_drain *dr, uint64_t now)
{
	const struct tier_env *env = d->be->env;
	uint64_t use[TIER_GROUPS_MAX][TIER_GROUP_RANKS];
	int node_rank[TIER_MAX_NODES];
	int64_t free_pages[TIER_MAX_NODES] = { 0 };
	uint64_t tier_total[TIER_MAX_TIERS] = { 0 };
	size_t r;
	uint64_t page = UINT64_C(1) << env->page_shift, p, want, n = 0;
	uint64_t *pages;
	int *nodes, *status;
	long moved;

	dr->left_pages = pages_on(env, dr->node);
	if (!dr->left_pages) {
		dr->done = true;
		dr->done_us = now;
		tierd_log(&d->log, LOG_INFO,
			  "node %d drained: %llu pages moved off in %.1f s (%llu failed moves retried)",
			  dr->node, (unsigned long long)dr->moved_pages,
			  (double)(now - dr->start_us) / 1e6, (unsigned long long)dr->failed_pages);
		return;
	}
	tier_budget_refill(&dr->budget, now);
	want = dr->budget.rate_bytes_per_s ? tier_budget_available(&dr->budget) / page :
					     DRAIN_MAX_PAGES_PER_STEP;
	if (want > DRAIN_MAX_PAGES_PER_STEP)
		want = DRAIN_MAX_PAGES_PER_STEP;
	if (want > dr->left_pages)
		want = dr->left_pages;
	if (!want) {
		tierd_log(&d->log, LOG_DEBUG, "drain of node %d: no budget this step", dr->node);
		return;
	}
	pages = malloc(want * sizeof(*pages));
	nodes = malloc(want * sizeof(*nodes));
	status = malloc(want * sizeof(*status));
	if (!pages || !nodes || !status)
		goto out;
	tier_node_rank_map(env->topo, node_rank);
	group_use(env, node_rank, use);
	tier_node_free_pages(env, free_pages);
	for (r = 0; r < env->topo->nr_tiers && r < TIER_MAX_TIERS; r++) {
		uint64_t fr;

		tier_tier_pages(env, (int)r, &tier_total[r], &fr);
	}
	for (p = 0; p < env->nr_pages && n < want; p++) {
		unsigned g = 0;
		int to;

		if (env->page_node[p] != dr->node)
			continue;
		if (env->groups && env->page_owner)
			g = env->groups->owner_group[env->page_owner[p]];
		to = target_node(env, dr->former_rank < (int)env->topo->nr_tiers ?
					      dr->former_rank : (int)env->topo->nr_tiers - 1,
				 g, use, free_pages, tier_total);
		if (to < 0)
			break;
		pages[n] = p;
		nodes[n] = to;
		n++;
	}
	tierd_log(&d->log, LOG_DEBUG, "drain of node %d: %llu pages left, %llu to move now",
		  dr->node, (unsigned long long)dr->left_pages, (unsigned long long)n);
	if (!n) {
		tierd_log(&d->log, LOG_WARNING, "drain of node %d: no tier has room for its pages",
			  dr->node);
		goto out;
	}
	tier_budget_take(&dr->budget, n * page);
	for (p = 0; p < n; p += env->max_batch) {
		size_t k = n - p < env->max_batch ? (size_t)(n - p) : env->max_batch, i;

		if (tier_linux_now_us() - now > DRAIN_STEP_US) {
			/* The rest waits for the next step. */
			tier_budget_refund(&dr->budget, (n - p) * page);
			break;
		}
		moved = env->migrator->move(env->migrator_priv, pages + p, nodes + p, status + p, k);
		if (moved < 0) {
			dr->failed_pages += k;
			continue;
		}
		for (i = 0; i < k; i++) {
			if (status[p + i] >= 0 && status[p + i] != dr->node)
				dr->moved_pages++;
			else
				dr->failed_pages++;
		}
	}
out:
	free(pages);
	free(nodes);
	free(status);
}

void tierd_drain_step(struct tierd *d)
{
	uint64_t now = tier_linux_now_us();
	size_t i;

	for (i = 0; i < d->dev.nr_drains; i++)
		if (!d->dev.drains[i].done)
			drain_one(d, &d->dev.drains[i], now);
}

void tierd_devices_status(const struct tierd *d, struct json_object *o)
{
	struct json_object *drains = json_object_new_array(), *pins = json_object_new_array();
	size_t i;

	for (i = 0; i < d->dev.nr_drains; i++)
		json_object_array_add(drains, drain_json(d, &d->dev.drains[i]));
	for (i = 0; i < d->dev.nr_pins; i++) {
		struct json_object *p = json_object_new_object();

		json_object_object_add(p, "node", json_object_new_int(d->dev.pins[i].node));
		json_object_object_add(p, "tier", json_object_new_int(d->dev.pins[i].rank));
		json_object_array_add(pins, p);
	}
	json_object_object_add(o, "drains", drains);
	json_object_object_add(o, "placed_nodes", pins);
}
