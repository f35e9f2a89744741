/* heatmap.c - the daemon's access heatmaps, one per managed process, and
 * the `heatmap` request. Costs and contracts in heatmap.h. */
#include "tierd/heatmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pages a request visits for the bins' tiers at most. */
#define SAMPLE_PAGES (UINT64_C(1) << 20)

static bool has_hooks(const struct tier_world *be)
{
	return be->procs && be->extents && be->page_addr;
}

void tierd_heat_init(struct tierd_heat *h, struct tier_world *be)
{
	memset(h, 0, sizeof(*h));
	h->be = be;
}

void tierd_heat_release(struct tierd_heat *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++)
		free(h->procs[i].hm);
	free(h->procs);
	free(h->ranges);
	memset(h, 0, sizeof(*h));
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static struct tierd_heat_proc *find(struct tierd_heat *h, pid_t pid)
{
	size_t lo = 0, hi = h->nr;

	/* Observations come a process at a time: the last hit first. */
	if (h->hit < h->nr && h->procs[h->hit].pid == pid)
		return &h->procs[h->hit];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->nr || h->procs[lo].pid != pid)
		return NULL;
	h->hit = lo;
	return &h->procs[lo];
}

/* Extents to ranges, address-adjacent ones joined. */
static void add_extent(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct tierd_heat *h = ctx;
	uint64_t end = addr + (nr << h->be->env->page_shift);

	(void)page;
	if (h->nr_ranges && h->ranges[h->nr_ranges - 1].end == addr) {
		h->ranges[h->nr_ranges - 1].end = end;
		return;
	}
	if (h->nr_ranges == h->cap_ranges) {
		size_t cap = h->cap_ranges ? 2 * h->cap_ranges : 64;
		struct tier_heatmap_range *r = realloc(h->ranges, cap * sizeof(*r));

		if (!r)
			return;		/* the layout misses the rest */
		h->ranges = r;
		h->cap_ranges = cap;
	}
	h->ranges[h->nr_ranges++] = (struct tier_heatmap_range){ addr, end };
}

int tierd_heat_sync(struct tierd_heat *h, uint64_t now_us)
{
	struct tier_world *be = h->be;
	struct tierd_heat_proc *np;
	size_t n, i, k = 0;
	pid_t *pids;
	int ret = 0;

	if (!has_hooks(be) || (h->synced && h->maps_gen == be->maps_gen))
		return 0;
	n = be->procs(be, NULL, 0);
	pids = calloc(n ? n : 1, sizeof(*pids));
	np = calloc(n ? n : 1, sizeof(*np));
	if (!pids || !np) {
		free(pids);
		free(np);
		return -ENOMEM;
	}
	n = be->procs(be, pids, n);
	qsort(pids, n, sizeof(*pids), cmp_pid);
	h->more = n > TIERD_HEAT_MAX_PROCS ? n - TIERD_HEAT_MAX_PROCS : 0;
	for (i = 0; i < n && k < TIERD_HEAT_MAX_PROCS; i++) {
		struct tierd_heat_proc *old = find(h, pids[i]);

		if (old) {
			np[k++] = *old;
			old->hm = NULL;		/* moved */
			continue;
		}
		np[k].pid = pids[i];
		np[k].hm = malloc(sizeof(*np[k].hm));
		if (!np[k].hm) {
			ret = -ENOMEM;
			continue;
		}
		tier_heatmap_init(np[k].hm, be->env->page_shift, now_us);
		k++;
	}
	for (i = 0; i < h->nr; i++)
		free(h->procs[i].hm);	/* processes gone */
	free(h->procs);
	free(pids);
	h->procs = np;
	h->nr = k;
	h->hit = 0;
	for (i = 0; i < h->nr; i++) {
		h->nr_ranges = 0;
		if (be->extents(be, h->procs[i].pid, add_extent, h))
			continue;	/* gone since procs(): drops at the next sync */
		tier_heatmap_set_layout(h->procs[i].hm, h->ranges, h->nr_ranges);
	}
	h->synced = ret == 0;
	h->maps_gen = be->maps_gen;
	return ret;
}

void tierd_heat_watch(void *ctx, const struct tier_obs *obs, size_t n)
{
	struct tierd_heat *h = ctx;
	struct tier_world *be = h->be;
	/* Soft-dirty beside an accessed-bit tracker sees a subset of the
	 * same accesses: counting both would pull the estimate down. */
	bool skip_written = be->env->obs_kinds & TIER_OBS_ACCESSED;
	size_t i;

	if (!h->nr)
		return;
	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];
		bool scan = o->kind == TIER_OBS_ACCESSED || o->kind == TIER_OBS_WRITTEN;
		double acc = tier_obs_accesses(o);
		uint64_t page = o->page, left = o->nr_pages;

		if (o->kind == TIER_OBS_WRITTEN && skip_written)
			continue;
		while (left) {
			struct tierd_heat_proc *p;
			uint64_t addr, run;
			pid_t pid;

			if (be->page_addr(be, page, &pid, &addr, &run))
				break;
			run = run < left ? run : left;
			p = find(h, pid);
			if (p)
				tier_heatmap_add(p->hm, addr, run, acc, scan ? o->interval_us : 0);
			page += run;
			left -= run;
		}
	}
}

void tierd_heat_commit(struct tierd_heat *h, uint64_t now_us)
{
	size_t i;

	for (i = 0; i < h->nr; i++)
		tier_heatmap_commit(h->procs[i].hm, now_us);
}

size_t tierd_heat_bytes(const struct tierd_heat *h)
{
	return h->nr * (sizeof(struct tier_heatmap) + sizeof(*h->procs)) +
	       h->cap_ranges * sizeof(*h->ranges);
}

/* --- the request ----------------------------------------------------------- */

/* Pages per tier rank in each view bin, from a walk of the process's pages
 * (every stride-th). */
struct bin_tiers {
	const struct tier_env *env;
	const struct tier_heatmap *hm;
	const struct tier_heatmap_view *v;
	const int *node_rank;
	uint64_t (*pages)[TIER_GROUP_RANKS];	/* [v->nr_bins] */
	uint64_t stride, seen;
};

static void count_extent(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct bin_tiers *tc = ctx;
	uint64_t i = (tc->stride - tc->seen % tc->stride) % tc->stride;

	for (; i < nr; i += tc->stride) {
		uint8_t node = page + i < tc->env->nr_pages ? tc->env->page_node[page + i] :
							       TIER_NODE_NONE;
		long b;

		if (node == TIER_NODE_NONE || tc->node_rank[node] < 0 ||
		    tc->node_rank[node] >= TIER_GROUP_RANKS)
			continue;
		b = tier_heatmap_view_bin_of(tc->hm, tc->v, addr + (i << tc->env->page_shift));
		if (b >= 0)
			tc->pages[b][tc->node_rank[node]]++;
	}
	tc->seen += nr;
}

static struct json_object *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

/* A number as JSON to six digits, not seventeen. */
static struct json_object *num(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6g", v);
	return json_object_new_double_s(v, buf);
}

static void add_range(void *ctx, uint64_t start, uint64_t end)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "start", hex(start));
	json_object_object_add(r, "end", hex(end));
	json_object_array_add(ctx, r);
}

static int not_managed(struct tierd_heat *h, pid_t pid, struct tier_err *err)
{
	char list[160] = "";
	size_t i, off = 0;

	if (!has_hooks(h->be))
		return tier_err_set(err, -EOPNOTSUPP, "heatmap: %s keeps no heatmaps", h->be->name);
	for (i = 0; i < h->nr && i < 8 && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d", i ? ", " : "",
					(int)h->procs[i].pid);
	if (h->nr > 8 && off < sizeof(list))
		snprintf(list + off, sizeof(list) - off, ", ... (%zu)", h->nr);
	if (h->more)
		return tier_err_set(err, -ESRCH,
				    "heatmap: process %d has no heatmap (tierd keeps %d of its %zu managed processes'; managed: %s)",
				    (int)pid, TIERD_HEAT_MAX_PROCS, h->nr + h->more, list);
	return tier_err_set(err, -ESRCH, "heatmap: process %d is not managed by tierd (%s%s)",
			    (int)pid, h->nr ? "managed: " : "no process is managed", list);
}

static struct json_object *bins_json(struct tierd_heat *h, const struct tierd_heat_proc *p,
				     const struct tier_heatmap_view *v, double *max_rate, int *ret)
{
	const struct tier_env *env = h->be->env;
	struct json_object *bins = json_object_new_array();
	struct bin_tiers tc = { env, p->hm, v, NULL, NULL, 1, 0 };
	int node_rank[TIER_MAX_NODES];
	size_t b, k;

	tier_node_rank_map(env->topo, node_rank);
	tc.node_rank = node_rank;
	tc.pages = calloc(v->nr_bins, sizeof(*tc.pages));
	if (!tc.pages) {
		json_object_put(bins);
		*ret = -ENOMEM;
		return NULL;
	}
	tc.stride = (p->hm->lay.axis_bytes >> env->page_shift) / SAMPLE_PAGES + 1;
	h->be->extents(h->be, p->pid, count_extent, &tc);
	for (b = 0; b < v->nr_bins; b++) {
		struct json_object *o = json_object_new_object(), *rates = json_object_new_array();
		uint64_t start, end, bytes, most = 0;
		double sum = 0;
		int tier = -1, r;

		tier_heatmap_view_bin(p->hm, v, b, &start, &end, &bytes);
		for (k = 0; k < v->nr_slices; k++) {
			double rate = tier_heatmap_view_rate(p->hm, v, b, k);

			json_object_array_add(rates, num(rate));
			sum += rate;
			if (rate > *max_rate)
				*max_rate = rate;
		}
		for (r = 0; r < TIER_GROUP_RANKS; r++)
			if (tc.pages[b][r] > most) {
				most = tc.pages[b][r];
				tier = r;
			}
		json_object_object_add(o, "start", hex(start));
		json_object_object_add(o, "end", hex(end));
		json_object_object_add(o, "bytes", json_object_new_uint64(bytes));
		json_object_object_add(o, "tier", tier < 0 ? NULL : json_object_new_int(tier));
		json_object_object_add(o, "mean_rate",
				       num(v->nr_slices ? sum / (double)v->nr_slices : 0));
		json_object_object_add(o, "rates", rates);
		json_object_array_add(bins, o);
	}
	free(tc.pages);
	return bins;
}

struct json_object *tierd_heat_json(struct tierd_heat *h, const struct tierd_heat_query *q,
				    uint64_t now_us, int *ret, struct tier_err *err)
{
	struct tierd_heat_proc *p = has_hooks(h->be) ? find(h, q->pid) : NULL;
	struct json_object *res, *ranges, *slices, *bins;
	struct tier_heatmap_view v;
	double max_rate = 0;
	size_t k;

	if (!p) {
		*ret = not_managed(h, q->pid, err);
		return NULL;
	}
	*ret = tier_heatmap_view(p->hm, q->start, q->end, q->bins, q->slices, now_us, &v);
	if (*ret) {
		if (*ret == -ENOENT)
			tier_err_set(err, *ret, "heatmap: process %d has no managed memory in [0x%llx, 0x%llx)",
				     (int)q->pid, (unsigned long long)q->start, (unsigned long long)q->end);
		else
			tier_err_set(err, *ret, "heatmap: bad window");
		return NULL;
	}
	bins = bins_json(h, p, &v, &max_rate, ret);
	if (!bins) {
		tier_err_set(err, *ret, "heatmap: out of memory");
		return NULL;
	}
	res = json_object_new_object();
	ranges = json_object_new_array();
	slices = json_object_new_array();
	tier_heatmap_view_ranges(p->hm, &v, add_range, ranges);
	for (k = 0; k < v.nr_slices; k++) {
		struct json_object *s = json_object_new_object();
		int64_t s0, s1;

		tier_heatmap_view_slice(p->hm, &v, k, &s0, &s1);
		/* To the millisecond. */
		json_object_object_add(s, "start_s", num((double)(s0 / 1000) / 1e3));
		json_object_object_add(s, "end_s", num((double)(s1 / 1000) / 1e3));
		json_object_array_add(slices, s);
	}
	json_object_object_add(res, "pid", json_object_new_int((int)q->pid));
	json_object_object_add(res, "tracker", json_object_new_string(h->be->tracker_name));
	json_object_object_add(res, "unit", json_object_new_string("accesses/s per page"));
	json_object_object_add(res, "page_bytes",
			       json_object_new_uint64(UINT64_C(1) << h->be->env->page_shift));
	json_object_object_add(res, "slice_ms",
			       json_object_new_uint64(TIER_HEATMAP_SLICE_US / 1000));
	json_object_object_add(res, "bin_bytes", json_object_new_uint64(v.bin_bytes));
	json_object_object_add(res, "ranges", ranges);
	json_object_object_add(res, "slices", slices);
	json_object_object_add(res, "bins", bins);
	json_object_object_add(res, "max_rate", num(max_rate));
	*ret = 0;
	return res;
}
