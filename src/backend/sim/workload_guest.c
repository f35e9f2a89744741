/* workload_guest.c - gups-guest: bench/progs/gups.c as the guest bench runs
 * it (bench/guest-tiering.sh), for the calibration of the simulator
 * against the test guest (docs/tiersim.md, "Calibration against the
 * guest").
 *
 * The same sizes and placement as gups with its defaults:
 *   array  640 MiB (163840 pages, ids [0, 163840)), first touched page by
 *          page bound to node 1 (mbind MPOL_BIND, then MPOL_DEFAULT)
 *   hot    96 MiB of its pages (24576) take 90% of the updates, uniform
 *          over them; the other 10% are uniform over the rest of the array
 *          layout=contiguous: the array's first 96 MiB
 *          layout=scattered: gups's partial Fisher-Yates shuffle with its
 *          seed and xorshift (pick_pages()), so the very same pages
 *   idle   600 MiB (153600 pages, ids after the array) first touched
 *          preferring node 0 (MPOL_PREFERRED: what does not fit goes by
 *          distance), never touched again
 * One simulated access is one 8-byte read-modify-write update (a store).
 * The update rate is the guest's, not the memory model's: QEMU TCG runs
 * the program's code 5.6 times slower than the host (measured with this
 * program: bench/machines/guest.yaml's cpu_slowdown) and the guest's
 * nodes are all host memory, so the HMAT's latencies set nothing there.
 * Each update takes 1 / rate of application time whatever node it hits
 * (access_ns); stalls (hint faults, shootdowns) add to it as elsewhere.
 *   rate=M  million updates per second; default the recorded bench's
 *           no-tiering mean for the layout (bench/results/guest-tiering.txt,
 *           Linux 6.12 at 941e57c: contiguous 9.23, scattered 5.44)
 */
#include "backend/sim/workload.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/rng.h"

#define GUPS_ARRAY_PAGES UINT64_C(163840)	/* --array-mib 640 */
#define GUPS_HOT_PAGES UINT64_C(24576)		/* --hot-mib 96 */
#define GUPS_IDLE_PAGES UINT64_C(153600)	/* --cold-mib 600 */
#define GUPS_HOT_SHARE 0.90			/* --hot-pct 90 */
#define GUPS_ARRAY_NODE 1			/* --array-node 1 */
#define GUPS_IDLE_NODE 0			/* --cold-node 0 */
#define GUPS_SHUFFLE_SEED UINT64_C(0x2545f4914f6cdd1d)	/* gups.c pick_pages() */
/* Mean update rates of the no-tiering runs, M/s (bench/results/
 * guest-tiering.txt: "contiguous/none update rate: mean 9.23 M/s",
 * "scattered/none update rate: mean 5.44 M/s"). */
#define RATE_CONTIGUOUS 9.23
#define RATE_SCATTERED 5.44
#define RATE_MAX 1000.0

struct guest_knobs {
	bool scattered;
	double rate;		/* M updates/s */
};

struct guest {
	struct tier_rng rng;
	struct guest_knobs k;
	uint32_t *hot_pg, *rest_pg;	/* sorted page ids, as gups's */
	uint8_t *is_hot;		/* per array page */
};

static int parse(const char *arg, struct guest_knobs *k, struct tier_err *err)
{
	char buf[256], *save = NULL, *kv;
	bool rate_set = false;

	k->scattered = false;
	k->rate = 0;
	if (arg) {
		if (strlen(arg) >= sizeof(buf))
			return tier_err_set(err, -EINVAL, "workload 'gups-guest': parameters too long");
		strcpy(buf, arg);
		for (kv = strtok_r(buf, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
			char *v = strchr(kv, '='), *end;

			if (!v)
				return tier_err_set(err, -EINVAL,
						    "workload 'gups-guest': '%s': expected key=value", kv);
			*v++ = '\0';
			if (!strcmp(kv, "layout")) {
				if (!strcmp(v, "contiguous"))
					k->scattered = false;
				else if (!strcmp(v, "scattered"))
					k->scattered = true;
				else
					return tier_err_set(err, -EINVAL,
							    "workload 'gups-guest': layout '%s': expected contiguous or scattered",
							    v);
			} else if (!strcmp(kv, "rate")) {
				errno = 0;
				k->rate = strtod(v, &end);
				if (errno || end == v || *end || !(k->rate > 0) || k->rate > RATE_MAX)
					return tier_err_set(err, -EINVAL,
							    "workload 'gups-guest': rate '%s': expected millions of updates per second above 0 and at most 1000",
							    v);
				rate_set = true;
			} else {
				return tier_err_set(err, -EINVAL,
						    "workload 'gups-guest': unknown parameter '%s' (layout, rate)",
						    kv);
			}
		}
	}
	if (!rate_set)
		k->rate = k->scattered ? RATE_SCATTERED : RATE_CONTIGUOUS;
	return 0;
}

static int check(const char *arg, struct tier_err *err)
{
	struct guest_knobs k;

	return parse(arg, &k, err);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* gups.c pick_pages(), step for step. */
static int pick_pages(struct guest *g)
{
	uint64_t n = GUPS_ARRAY_PAGES, nhot = GUPS_HOT_PAGES, s = GUPS_SHUFFLE_SEED, i;
	uint32_t *all = malloc(n * sizeof(*all));

	if (!all)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		all[i] = (uint32_t)i;
	for (i = 0; g->k.scattered && i < nhot; i++) {
		uint64_t j;
		uint32_t t;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		j = i + s % (n - i);
		t = all[i];
		all[i] = all[j];
		all[j] = t;
	}
	qsort(all, nhot, sizeof(*all), cmp_u32);
	qsort(all + nhot, n - nhot, sizeof(*all), cmp_u32);
	g->hot_pg = all;
	g->rest_pg = all + nhot;
	for (i = 0; i < nhot; i++)
		g->is_hot[all[i]] = 1;
	return 0;
}

static void destroy(void *priv)
{
	struct guest *g = priv;

	if (!g)
		return;
	free(g->hot_pg);
	free(g->is_hot);
	free(g);
}

static int create(const struct tier_sim_workload_params *prm, void **priv, struct tier_err *err)
{
	struct guest *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return tier_err_set(err, -ENOMEM, "out of memory");
	ret = parse(prm->arg, &g->k, err);
	if (ret) {
		free(g);
		return ret;
	}
	tier_rng_seed(&g->rng, prm->seed);
	g->is_hot = calloc(GUPS_ARRAY_PAGES, 1);
	if (!g->is_hot || pick_pages(g)) {
		destroy(g);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	*priv = g;
	return 0;
}

static uint64_t footprint_pages(void *priv)
{
	(void)priv;
	return GUPS_ARRAY_PAGES + GUPS_IDLE_PAGES;
}

static long next(void *priv, uint64_t now_us, struct tier_sim_access *buf, size_t n,
		 struct tier_err *err)
{
	struct guest *g = priv;
	struct tier_rng rng = g->rng;
	const uint64_t hot_thr = (uint64_t)(GUPS_HOT_SHARE * 4294967296.0);
	size_t i;

	(void)now_us;
	(void)err;
	for (i = 0; i < n; i++) {
		if ((tier_rng_next(&rng) >> 32) < hot_thr)
			buf[i].page = g->hot_pg[tier_rng_below(&rng, GUPS_HOT_PAGES)];
		else
			buf[i].page = g->rest_pg[tier_rng_below(&rng, GUPS_ARRAY_PAGES - GUPS_HOT_PAGES)];
		buf[i].write = 1;
		buf[i].tenant = 0;
	}
	g->rng = rng;
	return (long)n;
}

static int weights(void *priv, uint64_t now_us, double *w)
{
	struct guest *g = priv;
	double hot = GUPS_HOT_SHARE / (double)GUPS_HOT_PAGES;
	double rest = (1 - GUPS_HOT_SHARE) / (double)(GUPS_ARRAY_PAGES - GUPS_HOT_PAGES);
	uint64_t p;

	(void)now_us;
	for (p = 0; p < GUPS_ARRAY_PAGES; p++)
		w[p] = g->is_hot[p] ? hot : rest;
	for (; p < GUPS_ARRAY_PAGES + GUPS_IDLE_PAGES; p++)
		w[p] = 0;
	return 0;
}

static int first_touch_node(void *priv, uint64_t page)
{
	(void)priv;
	return page < GUPS_ARRAY_PAGES ? GUPS_ARRAY_NODE : GUPS_IDLE_NODE;
}

static double access_ns(void *priv)
{
	const struct guest *g = priv;

	return 1e3 / g->k.rate;
}

static bool page_hot(void *priv, uint64_t page)
{
	const struct guest *g = priv;

	return page < GUPS_ARRAY_PAGES && g->is_hot[page];
}

const struct tier_sim_workload_ops tier__sim_workload_gups_guest = {
	.name = "gups-guest",
	.description = "the guest bench's gups, 1.2 GiB (file:bench/machines/guest.yaml; compare: only when named)",
	.params = "layout=contiguous:rate=9.23",
	.named_only = true,
	.check = check,
	.create = create,
	.destroy = destroy,
	.footprint_pages = footprint_pages,
	.next = next,
	.weights = weights,
	.first_touch_node = first_touch_node,
	.access_ns = access_ns,
	.page_hot = page_hot,
};
