/* cgroups.c - the control-group rules in force, their requests, explain. */
#include "tierd/cgroups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/protocol.h"

void tierd_rules_release(struct tierd_rules *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->r[i].path);
	free(l->r);
	l->r = NULL;
	l->n = 0;
}

static ssize_t find(const struct tierd_rules *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->r[i].path, path))
			return (ssize_t)i;
	return -1;
}

int tierd_rules_put(struct tierd_rules *l, const char *path, const struct tier_group_rule *rule)
{
	ssize_t i = find(l, path);
	struct tier_config_cgroup *nr;
	char *p;

	if (i >= 0) {
		l->r[i].rule = *rule;
		return 0;
	}
	if (l->n >= TIER_CONFIG_MAX_CGROUPS)
		return -E2BIG;
	p = strdup(path);
	nr = realloc(l->r, (l->n + 1) * sizeof(*nr));
	if (!p || !nr) {
		free(p);
		if (nr)
			l->r = nr;
		return -ENOMEM;
	}
	l->r = nr;
	l->r[l->n].path = p;
	l->r[l->n].rule = *rule;
	l->n++;
	return 0;
}

int tierd_rules_del(struct tierd_rules *l, const char *path)
{
	ssize_t i = find(l, path);

	if (i < 0)
		return -ENOENT;
	free(l->r[i].path);
	memmove(&l->r[i], &l->r[i + 1], (l->n - (size_t)i - 1) * sizeof(*l->r));
	l->n--;
	return 0;
}

int tierd_rules_merge(const struct tier_config *cfg, const struct tierd_rules *runtime,
		      struct tierd_rules *out)
{
	size_t i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < cfg->nr_cgroup_rules && !ret; i++)
		ret = tierd_rules_put(out, cfg->cgroup_rules[i].path, &cfg->cgroup_rules[i].rule);
	for (i = 0; i < runtime->n && !ret; i++)
		if (find(out, runtime->r[i].path) < 0)
			ret = tierd_rules_put(out, runtime->r[i].path, &runtime->r[i].rule);
	if (ret)
		tierd_rules_release(out);
	return ret;
}

static int amounts(struct json_object *args, const char *key, const char *which,
		   struct tier_group_rule *rule, struct tier_err *err)
{
	struct json_object *v;
	size_t i, n;

	if (!json_object_object_get_ex(args, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return tier_err_set(err, -EINVAL, "cgroup-set: '%s' must be an array of strings", key);
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		int ret;

		if (!json_object_is_type(e, json_type_string))
			return tier_err_set(err, -EINVAL, "cgroup-set: '%s' must be an array of strings",
					    key);
		ret = tier_group_rule_set(rule, which, json_object_get_string(e), err);
		if (ret) {
			tier_err_prefix(err, "cgroup-set: %s[%zu]", key, i);
			return ret;
		}
	}
	return 0;
}

int tierd_cgroup_set_args(struct json_object *args, const struct tierd_rules *rules,
			  char **path, struct tier_group_rule *rule, bool *clear,
			  struct tier_err *err)
{
	struct json_object *v;
	const char *p;
	ssize_t i;
	int ret;

	*clear = false;
	if (!json_object_object_get_ex(args, "path", &v) || !json_object_is_type(v, json_type_string) ||
	    !*(p = json_object_get_string(v)))
		return tier_err_set(err, -EINVAL, "cgroup-set: 'path' must be a cgroup path");
	if (strlen(p) > 4095)
		return tier_err_set(err, -EINVAL, "cgroup-set: 'path' is too long");
	i = find(rules, p);
	memset(rule, 0, sizeof(*rule));
	if (i >= 0)
		*rule = rules->r[i].rule;
	if (json_object_object_get_ex(args, "clear", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return tier_err_set(err, -EINVAL, "cgroup-set: 'clear' must be true or false");
		*clear = json_object_get_boolean(v);
	}
	if ((ret = amounts(args, "tier_max", "max", rule, err)) ||
	    (ret = amounts(args, "tier_min", "min", rule, err)))
		return ret;
	if (json_object_object_get_ex(args, "weight", &v)) {
		int64_t w = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || w < 0 || w > TIER_GROUP_MAX_WEIGHT)
			return tier_err_set(err, -EINVAL,
					    "cgroup-set: 'weight' must be 1..%d (0 removes it)",
					    TIER_GROUP_MAX_WEIGHT);
		rule->weight = (uint32_t)w;
	}
	ret = tier_group_rule_check(rule, err);
	if (ret) {
		tier_err_prefix(err, "cgroup-set: %s", p);
		return ret;
	}
	*path = strdup(p);
	return *path ? 0 : tier_err_set(err, -ENOMEM, "out of memory");
}

static struct json_object *amount_json(const struct tier_amount *a)
{
	char buf[32];

	if (a->kind == TIER_AMOUNT_NONE)
		return NULL;
	tier_amount_format(a, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static struct json_object *pages_json(uint64_t bytes)
{
	return bytes == UINT64_MAX ? NULL : json_object_new_uint64(bytes);
}

struct json_object *tierd_cgroups_json(struct tier_world *be, const struct tierd_rules *rules)
{
	struct json_object *res = json_object_new_object(), *arr = json_object_new_array();
	const struct tier_topology *topo = be->topo;
	size_t i, r, k;

	for (i = 0; i < rules->n; i++) {
		const struct tier_group_rule *rule = &rules->r[i].rule;
		struct json_object *o = json_object_new_object(), *tiers = json_object_new_array();
		struct tier_world_group_stat st;
		struct tier_err err = { "" };

		memset(&st, 0, sizeof(st));
		if (be->group_stat && be->group_stat(be, i, &st, &err))
			snprintf(st.error, sizeof(st.error), "%s", err.msg);
		json_object_object_add(o, "path", json_object_new_string(rules->r[i].path));
		json_object_object_add(o, "dir", json_object_new_string(st.dir));
		json_object_object_add(o, "exists", json_object_new_boolean(st.exists));
		if (st.error[0])
			json_object_object_add(o, "error", json_object_new_string(st.error));
		json_object_object_add(o, "processes", json_object_new_uint64(st.processes));
		json_object_object_add(o, "weight",
				       rule->weight ? json_object_new_int((int)rule->weight) : NULL);
		for (r = 0; r < topo->nr_tiers && r < TIER_GROUP_RANKS; r++) {
			struct json_object *t = json_object_new_object(), *nodes = json_object_new_array();
			uint64_t cap = 0;

			for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
				const struct tier_node *n = tier_topology_node(topo, topo->tiers[r].nodes[k]);

				json_object_array_add(nodes, json_object_new_int(topo->tiers[r].nodes[k]));
				if (n)
					cap += n->mem_total_bytes;
			}
			json_object_object_add(t, "rank", json_object_new_int((int)r));
			json_object_object_add(t, "nodes", nodes);
			json_object_object_add(t, "capacity_bytes", json_object_new_uint64(cap));
			json_object_object_add(t, "used_bytes",
					       json_object_new_uint64(st.anon_bytes[r] + st.file_bytes[r]));
			json_object_object_add(t, "anon_bytes", json_object_new_uint64(st.anon_bytes[r]));
			json_object_object_add(t, "file_bytes", json_object_new_uint64(st.file_bytes[r]));
			json_object_object_add(t, "managed_bytes",
					       json_object_new_uint64(st.managed_bytes[r]));
			json_object_object_add(t, "max", amount_json(&rule->max[r]));
			json_object_object_add(t, "max_bytes",
					       pages_json(tier_amount_pages(&rule->max[r], cap, 0)));
			json_object_object_add(t, "min", amount_json(&rule->min[r]));
			json_object_object_add(t, "min_bytes",
					       pages_json(tier_amount_pages(&rule->min[r], cap, 0)));
			json_object_array_add(tiers, t);
		}
		json_object_object_add(o, "tiers", tiers);
		json_object_array_add(arr, o);
	}
	json_object_object_add(res, "cgroups", arr);
	return res;
}

#define EXPLAIN_MAX_PAGES 64

struct json_object *tierd_explain_json(struct tier_world *be, const struct tier_loop *loop,
				       pid_t pid, uint64_t addr, uint64_t len, int *ret,
				       struct tier_err *err)
{
	const struct tier_env *env = be->env;
	struct json_object *res, *arr;
	uint64_t a, first = addr & ~UINT64_C(4095), end, now;
	int node_rank[TIER_MAX_NODES];

	if (!be->page_of) {
		*ret = tier_err_set(err, -EOPNOTSUPP, "explain: %s has no processes", be->name);
		return NULL;
	}
	if (!loop->policy->explain) {
		*ret = tier_err_set(err, -EOPNOTSUPP, "explain: policy %s cannot explain its placement",
				    loop->policy->name);
		return NULL;
	}
	end = addr + (len ? len : 1);
	if (end < addr || (end - first + 4095) / 4096 > EXPLAIN_MAX_PAGES)
		end = first + EXPLAIN_MAX_PAGES * UINT64_C(4096);
	tier_node_rank_map(env->topo, node_rank);
	now = env->clock->now_us(env->clock_priv);
	res = json_object_new_object();
	arr = json_object_new_array();
	json_object_object_add(res, "pid", json_object_new_int((int)pid));
	json_object_object_add(res, "policy", json_object_new_string(loop->policy->name));
	for (a = first; a < end; a += 4096) {
		struct json_object *o = json_object_new_object();
		struct tier_page_explain ex;
		uint64_t page;
		char buf[32];
		int r = be->page_of(be, pid, a, &page);

		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
		json_object_object_add(o, "addr", json_object_new_string(buf));
		if (r == -ESRCH) {
			json_object_put(o);
			json_object_put(res);
			json_object_put(arr);
			*ret = tier_err_set(err, -ESRCH, "explain: process %d is not managed by tierd",
					    (int)pid);
			return NULL;
		}
		if (r || loop->policy->explain(loop->policy_priv, page, now, &ex)) {
			json_object_object_add(o, "managed", json_object_new_boolean(false));
			json_object_array_add(arr, o);
			continue;
		}
		json_object_object_add(o, "managed", json_object_new_boolean(true));
		{
			uint8_t nd = env->page_node[page];
			uint8_t h = env->page_hint ? env->page_hint[page] : TIER_HINT_NONE;

			json_object_object_add(o, "node", nd == TIER_NODE_NONE ? NULL :
						   json_object_new_int(nd));
			json_object_object_add(o, "tier", nd == TIER_NODE_NONE || node_rank[nd] < 0 ? NULL :
						   json_object_new_int(node_rank[nd]));
			json_object_object_add(o, "hint", json_object_new_string(
					       tier_proto_advice_name(h) ? tier_proto_advice_name(h) : "?"));
			json_object_object_add(o, "huge_page", json_object_new_boolean(
					       env->page_huge && env->page_huge[page >> env->huge_shift]));
		}
		json_object_object_add(o, "group", json_object_new_int(ex.group));
		json_object_object_add(o, "long_rate", json_object_new_double(ex.long_rate));
		json_object_object_add(o, "short_rate", json_object_new_double(ex.short_rate));
		json_object_object_add(o, "heat", json_object_new_double(ex.heat));
		json_object_object_add(o, "score", json_object_new_double(ex.score));
		json_object_object_add(o, "target_tier", ex.target_rank < 0 ? NULL :
					   json_object_new_int(ex.target_rank));
		json_object_object_add(o, "moved_ago_ms", ex.moved_ago_ms == UINT64_MAX ? NULL :
					   json_object_new_uint64(ex.moved_ago_ms));
		json_object_object_add(o, "last_move", json_object_new_string(ex.last_move));
		json_object_object_add(o, "verdict", json_object_new_string(ex.verdict));
		json_object_array_add(arr, o);
	}
	json_object_object_add(res, "pages", arr);
	*ret = 0;
	return res;
}
