/* procs.c - the `processes` request: per managed process its bytes by
 * tier and the share of them the policy counts hot (tierctl top). */
#include "tierd/procs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct proc_fig {
	int pid;
	uint64_t pages;				/* managed */
	uint64_t tier_pages[TIER_MAX_TIERS];
	uint64_t sampled, hot;			/* explained pages, those wanting tier 0 */
};

struct walk {
	const struct tier_world *be;
	const struct tier_loop *loop;
	const int *node_rank;
	struct proc_fig *f;
	uint64_t stride, seen, now_us;		/* explain pass */
};

static void count_extent(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct walk *w = ctx;
	const struct tier_env *env = w->be->env;
	uint64_t i;

	(void)addr;
	w->f->pages += nr;
	for (i = page; i < page + nr && i < env->nr_pages; i++) {
		uint8_t n = env->page_node[i];

		if (n != TIER_NODE_NONE && w->node_rank[n] >= 0 && w->node_rank[n] < TIER_MAX_TIERS)
			w->f->tier_pages[w->node_rank[n]]++;
	}
}

static void hot_extent(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct walk *w = ctx;
	uint64_t i;

	(void)addr;
	/* Every stride-th page of the process, counted across its extents. */
	for (i = (w->stride - w->seen % w->stride) % w->stride; i < nr; i += w->stride) {
		struct tier_page_explain ex;

		if (w->loop->policy->explain(w->loop->policy_priv, page + i, w->now_us, &ex))
			continue;
		w->f->sampled++;
		w->f->hot += ex.target_rank == 0;
	}
	w->seen += nr;
}

static int cmp_managed(const void *a, const void *b)
{
	const struct proc_fig *x = a, *y = b;

	if (x->pages != y->pages)
		return x->pages < y->pages ? 1 : -1;
	return x->pid - y->pid;
}

struct json_object *tierd_procs_json(struct tier_world *be, const struct tier_loop *loop,
				     struct json_object *args, int *ret, struct tier_err *err)
{
	const struct tier_env *env = be->env;
	struct json_object *res, *arr, *v;
	int node_rank[TIER_MAX_NODES], *pids;
	size_t n, i, r, limit = TIERD_PROCS_DEFAULT, nr_tiers;
	struct proc_fig *figs;
	bool explains = loop->policy->explain != NULL;

	json_object_object_foreach(args, key, val) {
		(void)val;
		if (strcmp(key, "limit")) {
			*ret = tier_err_set(err, -EINVAL, "processes: unknown argument '%.32s'", key);
			return NULL;
		}
	}
	if (json_object_object_get_ex(args, "limit", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > TIERD_PROCS_MAX) {
			*ret = tier_err_set(err, -EINVAL, "processes: 'limit' must be an integer in 1..%d",
					    TIERD_PROCS_MAX);
			return NULL;
		}
		limit = (size_t)json_object_get_int64(v);
	}
	if (!be->procs || !be->extents) {
		*ret = tier_err_set(err, -EOPNOTSUPP, "processes: %s has no processes", be->name);
		return NULL;
	}
	n = be->procs(be, NULL, 0);
	pids = calloc(n ? n : 1, sizeof(*pids));
	figs = calloc(n ? n : 1, sizeof(*figs));
	if (!pids || !figs) {
		free(pids);
		free(figs);
		*ret = tier_err_set(err, -ENOMEM, "processes: out of memory");
		return NULL;
	}
	n = be->procs(be, pids, n);
	tier_node_rank_map(env->topo, node_rank);
	nr_tiers = env->topo->nr_tiers < TIER_MAX_TIERS ? env->topo->nr_tiers : TIER_MAX_TIERS;
	for (i = 0; i < n; i++) {
		struct walk w = { be, loop, node_rank, &figs[i], 0, 0, 0 };

		figs[i].pid = pids[i];
		be->extents(be, pids[i], count_extent, &w);	/* a process gone has none */
	}
	qsort(figs, n, sizeof(*figs), cmp_managed);
	res = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < n && i < limit; i++) {
		struct json_object *o = json_object_new_object(), *t = json_object_new_array();
		struct walk w = { be, loop, node_rank, &figs[i], figs[i].pages / TIERD_PROCS_HOT_SAMPLES + 1,
				  0, env->clock->now_us(env->clock_priv) };

		if (explains)
			be->extents(be, figs[i].pid, hot_extent, &w);
		for (r = 0; r < nr_tiers; r++)
			json_object_array_add(t, json_object_new_uint64(figs[i].tier_pages[r] << env->page_shift));
		json_object_object_add(o, "pid", json_object_new_int(figs[i].pid));
		json_object_object_add(o, "managed_bytes",
				       json_object_new_uint64(figs[i].pages << env->page_shift));
		json_object_object_add(o, "tier_bytes", t);
		/* The sampled share scaled to the process's pages. */
		json_object_object_add(o, "hot_bytes", figs[i].sampled ?
				       json_object_new_uint64((uint64_t)((double)figs[i].hot / (double)figs[i].sampled *
									 (double)figs[i].pages) << env->page_shift) : NULL);
		json_object_array_add(arr, o);
	}
	json_object_object_add(res, "total", json_object_new_uint64(n));
	json_object_object_add(res, "policy", json_object_new_string(loop->policy->name));
	json_object_object_add(res, "processes", arr);
	free(pids);
	free(figs);
	*ret = 0;
	return res;
}
