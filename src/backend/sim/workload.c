/* workload.c - built-in simulated workloads.
 *
 * One parametrised generator covers the synthetic workloads: a hot set
 * (contiguous, optionally moving or changing by phase) taking a share of
 * accesses, a sequential scan taking another share, and the rest spread
 * uniformly or by a Zipf law over the remaining pages. Sizes are in units of
 * F, the fastest tier's capacity; the footprint is 80% of the machine (4F
 * at a 1:4 ratio, 7.2F at 1:8), so the ratio sets how much of the data the
 * fast tier can hold.
 *
 *   gups-hotset          hot set 0.4F takes 90% of updates (GUPS with a hot set)
 *   gups-moving-hotset   the same hot set shifts by its length every 5 s
 *   zipf                 Zipf(0.99) over the footprint, ranks scattered over the pages
 *   uniform              uniform over the footprint
 *   phase-change         hot set A (0.4F, 90%) for the first half, then B (0.6F, 80%)
 *   thrash               hot set 2F (larger than the fast tier) takes 90%
 *   scan-plus-hotset     hot set 0.9F takes 99%, a slow sequential scan over the rest 1%
 *   bandwidth-antagonist gups-hotset while another process streams 60% of the
 *                        fast tier's bandwidth
 *   multi-tenant         two processes: A (2F, hot 0.3F) issues 60% of accesses,
 *                        B (2F, hot 0.9F) 40%; together their hot sets exceed F
 *
 * server and server-moving (workload_server.c) drive their colder pages by
 * rate in simulated time instead, at a server's density.
 *
 * Parameters follow the name, NAME:key=value[:key=value]: the GUPS
 * workloads take hot (the hot set, in F) and share (its share of the
 * accesses), zipf takes alpha; e.g. gups-hotset:hot=0.2:share=0.95,
 * zipf:alpha=1.2. The oracle's weights follow them.
 */
#include "backend/sim/workload.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/rng.h"

/* One tenant's address range and access pattern. */
struct pattern {
	uint64_t base, len;		/* pages [base, base + len) */
	uint64_t hot_start, hot_len;	/* relative to base; hot_len 0 = none */
	double hot_share;
	double scan_share;		/* sequential scan over the non-hot pages */
	double write_share;
	int zipf;			/* cold part by the alias table */
	/* moving hot set */
	uint64_t move_period_us;
	/* phase change at phase_at_us: hot set and share after */
	uint64_t phase_at_us;
	uint64_t hot_start2, hot_len2;
	double hot_share2;
	/* state */
	uint64_t scan_pos;		/* in accesses; 64 per page */
};

struct gen {
	struct tier_rng rng;
	uint64_t footprint;
	struct pattern pat[2];
	unsigned nr_pat;
	double tenant0_share;
	double antagonist_share;	/* of the fast tier's bandwidth */
	uint64_t antagonist_bw;		/* bytes/s, set by the engine's figure */
	/* Zipf alias table over `len` ranks, ranks scattered by perm. */
	uint32_t *alias;
	float *prob;
	uint32_t *perm;
	double *zipf_p;
};

/* The scan reads every line of a page once: 64 lines, and one simulated
 * access stands for 8 lines (engine.h). */
enum { SCAN_ACCESSES_PER_PAGE = 8 };

static void pattern_now(const struct pattern *p, uint64_t now_us, uint64_t *hs,
			uint64_t *hl, double *share)
{
	*hs = p->hot_start;
	*hl = p->hot_len;
	*share = p->hot_share;
	if (p->phase_at_us && now_us >= p->phase_at_us) {
		*hs = p->hot_start2;
		*hl = p->hot_len2;
		*share = p->hot_share2;
	}
	if (p->move_period_us && *hl && p->len > *hl) {
		uint64_t step = now_us / p->move_period_us;

		*hs = (p->hot_start + step * *hl) % (p->len - *hl + 1);
	}
}

/* Parameters a workload may take after its name (the KNOB_* bits) and
 * their values; 0 = the workload's own. */
enum { KNOB_HOT = 1, KNOB_SHARE = 2, KNOB_ALPHA = 4 };

struct knobs {
	double hot;	/* hot set, in F: (0, 2] */
	double share;	/* the hot set's share of accesses: (0, 1] */
	double alpha;	/* Zipf exponent: (0, 10] */
};

static const struct knob_def {
	const char *key;
	unsigned bit;
	double max;
	size_t off;
} knob_defs[] = {
	{ "hot", KNOB_HOT, 2, offsetof(struct knobs, hot) },
	{ "share", KNOB_SHARE, 1, offsetof(struct knobs, share) },
	{ "alpha", KNOB_ALPHA, 10, offsetof(struct knobs, alpha) },
};

/* The parameters a workload takes: the keys of its params line ("hot=0.4:
 * share=0.9"), as KNOB_* bits. */
static unsigned knob_bits(const char *params)
{
	unsigned bits = 0;
	size_t i;

	while (params && *params) {
		size_t klen = strcspn(params, "=:");

		for (i = 0; i < sizeof(knob_defs) / sizeof(knob_defs[0]); i++)
			if (strlen(knob_defs[i].key) == klen && !strncmp(params, knob_defs[i].key, klen))
				bits |= knob_defs[i].bit;
		params += strcspn(params, ":");
		if (*params)
			params++;
	}
	return bits;
}

/* Parses "key=value[:key=value]" (arg) for workload `name`, which takes
 * the parameters in `allowed`. Returns 0, or -EINVAL with err naming the
 * workload, the parameter and what is wrong. */
static int parse_knobs(const char *name, const char *arg, unsigned allowed, struct knobs *k,
		       struct tier_err *err)
{
	const char *c = arg;

	memset(k, 0, sizeof(*k));
	if (!arg)
		return 0;
	if (!allowed)
		return tier_err_set(err, -EINVAL, "workload '%s' takes no parameters (got '%s')",
				    name, arg);
	for (;;) {
		size_t len = strcspn(c, ":"), klen = strcspn(c, "=:"), i;
		const struct knob_def *d = NULL;
		char val[64], *end;
		double v;

		for (i = 0; i < sizeof(knob_defs) / sizeof(knob_defs[0]); i++)
			if ((allowed & knob_defs[i].bit) && strlen(knob_defs[i].key) == klen &&
			    !strncmp(c, knob_defs[i].key, klen))
				d = &knob_defs[i];
		if (!d) {
			char known[64] = "";

			for (i = 0; i < sizeof(knob_defs) / sizeof(knob_defs[0]); i++)
				if (allowed & knob_defs[i].bit)
					snprintf(known + strlen(known), sizeof(known) - strlen(known),
						 "%s%s", known[0] ? ", " : "", knob_defs[i].key);
			if (!klen)
				return tier_err_set(err, -EINVAL,
						    "workload '%s': empty parameter (takes %s, as key=value)",
						    name, known);
			return tier_err_set(err, -EINVAL,
					    "workload '%s': unknown parameter '%.*s' (takes %s, as key=value)",
					    name, (int)klen, c, known);
		}
		if (c[klen] != '=' || len - klen - 1 >= sizeof(val))
			return tier_err_set(err, -EINVAL, "workload '%s': %s: expected %s=NUMBER",
					    name, d->key, d->key);
		memcpy(val, c + klen + 1, len - klen - 1);
		val[len - klen - 1] = '\0';
		errno = 0;
		v = strtod(val, &end);
		if (!val[0] || *end || errno || !(v > 0 && v <= d->max))
			return tier_err_set(err, -EINVAL,
					    "workload '%s': %s '%s': expected a number above 0 and at most %g",
					    name, d->key, val, d->max);
		*(double *)((char *)k + d->off) = v;
		if (!c[len])
			return 0;
		c += len + 1;
	}
}

static int build_zipf(struct gen *g, uint64_t n, double alpha)
{
	double sum = 0, *scaled;
	uint32_t *small, *large;
	size_t ns = 0, nl = 0, i;

	g->alias = calloc(n, sizeof(*g->alias));
	g->prob = calloc(n, sizeof(*g->prob));
	g->perm = calloc(n, sizeof(*g->perm));
	g->zipf_p = calloc(n, sizeof(*g->zipf_p));
	scaled = calloc(n, sizeof(*scaled));
	small = calloc(n, sizeof(*small));
	large = calloc(n, sizeof(*large));
	if (!g->alias || !g->prob || !g->perm || !g->zipf_p || !scaled || !small || !large) {
		free(scaled);
		free(small);
		free(large);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		g->zipf_p[i] = 1.0 / pow((double)(i + 1), alpha);
		sum += g->zipf_p[i];
	}
	/* Walker/Vose alias method: O(1) per draw. */
	for (i = 0; i < n; i++) {
		g->zipf_p[i] /= sum;
		scaled[i] = g->zipf_p[i] * (double)n;
		if (scaled[i] < 1.0)
			small[ns++] = (uint32_t)i;
		else
			large[nl++] = (uint32_t)i;
	}
	while (ns && nl) {
		uint32_t s = small[--ns], l = large[--nl];

		g->prob[s] = (float)scaled[s];
		g->alias[s] = l;
		scaled[l] = scaled[l] + scaled[s] - 1.0;
		if (scaled[l] < 1.0)
			small[ns++] = l;
		else
			large[nl++] = l;
	}
	while (nl)
		g->prob[large[--nl]] = 1.0f;
	while (ns)
		g->prob[small[--ns]] = 1.0f;
	/* Ranks scattered over the pages: a seeded permutation. */
	for (i = 0; i < n; i++)
		g->perm[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = tier_rng_below(&g->rng, i + 1);
		uint32_t t = g->perm[i];

		g->perm[i] = g->perm[j];
		g->perm[j] = t;
	}
	free(scaled);
	free(small);
	free(large);
	return 0;
}

static uint64_t footprint_pages(void *priv)
{
	return ((struct gen *)priv)->footprint;
}

static unsigned nr_tenants(void *priv)
{
	return ((struct gen *)priv)->nr_pat;
}

static unsigned page_tenant(void *priv, uint64_t page)
{
	const struct gen *g = priv;
	unsigned k;

	for (k = 0; k < g->nr_pat; k++)
		if (page >= g->pat[k].base && page < g->pat[k].base + g->pat[k].len)
			return k;
	return 0;
}

static void gen_destroy(void *priv)
{
	struct gen *g = priv;

	if (!g)
		return;
	free(g->alias);
	free(g->prob);
	free(g->perm);
	free(g->zipf_p);
	free(g);
}

static inline uint64_t draw_cold(const struct gen *g, struct tier_rng *rng,
				 const struct pattern *p, uint64_t hs, uint64_t hl)
{
	uint64_t c;

	if (p->zipf) {
		uint64_t i = tier_rng_below(rng, p->len);

		if (tier_rng_double(rng) >= g->prob[i])
			i = g->alias[i];
		return p->base + g->perm[i];
	}
	if (hl >= p->len)
		return p->base + tier_rng_below(rng, p->len);
	c = tier_rng_below(rng, p->len - hl);
	return p->base + (c < hs ? c : c + hl);
}

/* A batch's view of one pattern, for the uniform generators' loop. */
struct plan {
	uint64_t base, hs, hl, cold_len;
	uint64_t scan_thr, hot_thr, write_thr;
};

/* The loop of gen_next for patterns without a Zipf part whose hot set
 * leaves cold pages (hl < len), compiled once for one tenant and once for
 * two. The same draws in the same order as the general loop, but the hot
 * or cold choice (one access in ten goes the other way) is made without a
 * branch: either side draws once, from its own range. */
static inline __attribute__((always_inline)) void
gen_uniform(struct gen *g, struct tier_rng *rng, const struct plan *pl, uint64_t tenant_thr,
	    struct tier_sim_access *buf, size_t n, const bool two)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t r = tier_rng_next(rng);
		uint64_t u = r >> 32, w = r & 0xffffffffu;
		unsigned k = 0;
		const struct plan *q;

		if (two && (tier_rng_next(rng) >> 32) >= tenant_thr)
			k = 1;
		q = &pl[two ? k : 0];
		if (u < q->scan_thr) {
			/* The scan walks the non-hot pages, each read once. */
			struct pattern *p = &g->pat[two ? k : 0];
			uint64_t c = (p->scan_pos++ / SCAN_ACCESSES_PER_PAGE) %
				     (q->cold_len ? q->cold_len : 1);

			buf[i].page = q->base + (c < q->hs ? c : c + q->hl);
			buf[i].write = 0;
		} else {
			/* All ones for the hot set (hot_thr is 0 without
			 * one); masks, as a compiler turns ?: back into
			 * branches. */
			const uint64_t hot = -(uint64_t)(u < q->hot_thr);
			uint64_t c = tier_rng_below(rng, q->cold_len ^ ((q->hl ^ q->cold_len) & hot));
			uint64_t cold = c + (q->hl & -(uint64_t)(c >= q->hs));

			buf[i].page = q->base + (cold ^ (((q->hs + c) ^ cold) & hot));
			buf[i].write = w < q->write_thr;
		}
		buf[i].tenant = (uint8_t)k;
	}
}

static long gen_next(void *priv, uint64_t now_us, struct tier_sim_access *buf, size_t n,
		     struct tier_err *err)
{
	struct gen *g = priv;
	/* The stream in a local for the loop: stored through buf, which may
	 * alias it as far as the compiler knows, g->rng would be reloaded and
	 * stored at every draw. Same draws in the same order. */
	struct tier_rng rng = g->rng;
	struct plan pl[2];
	uint64_t tenant_thr;
	bool uniform = true;
	unsigned k;
	size_t i;

	(void)err;
	for (k = 0; k < g->nr_pat; k++) {
		const struct pattern *p = &g->pat[k];
		double share;

		pattern_now(p, now_us, &pl[k].hs, &pl[k].hl, &share);
		pl[k].base = p->base;
		pl[k].cold_len = p->len - pl[k].hl;
		/* Thresholds on 32-bit draws. */
		pl[k].scan_thr = (uint64_t)(p->scan_share * 4294967296.0);
		pl[k].hot_thr = pl[k].scan_thr + (uint64_t)(share * 4294967296.0);
		pl[k].write_thr = (uint64_t)(p->write_share * 4294967296.0);
		if (p->zipf || pl[k].hl >= p->len)
			uniform = false;
		if (!pl[k].hl)
			pl[k].hot_thr = 0;
	}
	tenant_thr = (uint64_t)(g->tenant0_share * 4294967296.0);
	if (uniform) {
		if (g->nr_pat > 1)
			gen_uniform(g, &rng, pl, tenant_thr, buf, n, true);
		else
			gen_uniform(g, &rng, pl, tenant_thr, buf, n, false);
		g->rng = rng;
		return (long)n;
	}
	for (i = 0; i < n; i++) {
		uint64_t r = tier_rng_next(&rng);
		uint64_t u = r >> 32, w = r & 0xffffffffu;
		const struct plan *q;
		struct pattern *p;

		k = 0;
		if (g->nr_pat > 1 && (tier_rng_next(&rng) >> 32) >= tenant_thr)
			k = 1;
		p = &g->pat[k];
		q = &pl[k];
		if (u < q->scan_thr) {
			/* The scan walks the non-hot pages, each read once. */
			uint64_t cold_len = q->cold_len;
			uint64_t c = (p->scan_pos++ / SCAN_ACCESSES_PER_PAGE) % (cold_len ? cold_len : 1);

			buf[i].page = p->base + (c < q->hs ? c : c + q->hl);
			buf[i].write = 0;
		} else {
			if (u < q->hot_thr && q->hl)
				buf[i].page = p->base + q->hs + tier_rng_below(&rng, q->hl);
			else
				buf[i].page = draw_cold(g, &rng, p, q->hs, q->hl);
			buf[i].write = w < q->write_thr;
		}
		buf[i].tenant = (uint8_t)k;
	}
	g->rng = rng;
	return (long)n;
}

static int gen_weights(void *priv, uint64_t now_us, double *wt)
{
	struct gen *g = priv;
	unsigned k;
	uint64_t i;

	for (k = 0; k < g->nr_pat; k++) {
		const struct pattern *p = &g->pat[k];
		double tshare = g->nr_pat > 1 ? (k == 0 ? g->tenant0_share : 1 - g->tenant0_share)
					      : 1.0;
		uint64_t hs, hl, cold_len;
		double share, cold_share, scan_w;

		pattern_now(p, now_us, &hs, &hl, &share);
		cold_len = p->len - hl;
		cold_share = 1.0 - share - p->scan_share;
		scan_w = cold_len ? p->scan_share / (double)cold_len : 0;
		for (i = 0; i < p->len; i++) {
			double w;

			if (i >= hs && i < hs + hl) {
				w = share / (double)hl;
			} else if (p->zipf) {
				w = 0;	/* filled below */
			} else {
				w = (cold_len ? cold_share / (double)cold_len : 0) + scan_w;
			}
			wt[p->base + i] = w * tshare;
		}
		if (p->zipf) {
			for (i = 0; i < p->len; i++)
				wt[p->base + g->perm[i]] += g->zipf_p[i] * cold_share * tshare;
		}
	}
	return 0;
}

static uint64_t gen_antagonist(void *priv, uint64_t now_us)
{
	(void)now_us;
	return ((struct gen *)priv)->antagonist_bw;
}

/* Creates a generator with one pattern over 4F; setup() fills the rest,
 * then the parameters given after the name apply (those in params). */
static int gen_create(const struct tier_sim_workload_params *prm, void **priv,
		      void (*setup)(struct gen *g, uint64_t F,
				    const struct tier_sim_workload_params *prm),
		      int zipf, const char *name, const char *params, struct tier_err *err)
{
	struct gen *g;
	uint64_t F = prm->fast_pages;
	struct knobs k;
	int ret = parse_knobs(name, prm->arg, knob_bits(params), &k, err);

	if (ret)
		return ret;
	g = calloc(1, sizeof(*g));
	if (!g)
		return tier_err_set(err, -ENOMEM, "out of memory");
	if (F < 16) {
		free(g);
		return tier_err_set(err, -EINVAL, "fast tier of %llu pages is too small",
				    (unsigned long long)F);
	}
	tier_rng_seed(&g->rng, prm->seed);
	g->nr_pat = 1;
	/* The footprint is 80% of the machine: 4F at 1:4, 7.2F at 1:8, so
	 * the capacity ratio sets how much of the data the fast tier holds. */
	g->footprint = prm->total_pages / 5 * 4;
	if (g->footprint < 2 * F)
		g->footprint = 2 * F;
	if (g->footprint > prm->total_pages)
		g->footprint = prm->total_pages;
	g->pat[0].len = g->footprint;
	g->pat[0].write_share = 0.2;
	setup(g, F, prm);
	if (k.hot) {
		struct pattern *p = &g->pat[0];

		p->hot_len = (uint64_t)(k.hot * (double)F);
		if (p->hot_len < 1)
			p->hot_len = 1;
		if (p->hot_len > p->len)
			p->hot_len = p->len;
		/* Where the workload puts its hot set, as far as it still fits. */
		if (p->hot_start > p->len - p->hot_len)
			p->hot_start = p->len - p->hot_len;
	}
	if (k.share)
		g->pat[0].hot_share = k.share;
	g->antagonist_bw = (uint64_t)(g->antagonist_share * (double)prm->fast_bw_bytes_per_s);
	if (zipf) {
		g->pat[0].zipf = 1;
		if (build_zipf(g, g->pat[0].len, k.alpha ? k.alpha : 0.99)) {
			gen_destroy(g);
			return tier_err_set(err, -ENOMEM, "out of memory");
		}
	}
	*priv = g;
	return 0;
}

static void setup_hotset(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	(void)p;
	g->pat[0].hot_len = F * 2 / 5;
	g->pat[0].hot_start = g->pat[0].len / 3;
	g->pat[0].hot_share = 0.9;
	g->pat[0].write_share = 1.0;	/* GUPS updates are read-modify-write */
}

static void setup_moving(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	setup_hotset(g, F, p);
	g->pat[0].hot_start = 0;
	g->pat[0].move_period_us = 5000000;
}

static void setup_uniform(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	(void)g;
	(void)F;
	(void)p;
}

static void setup_phase(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	g->pat[0].hot_len = F * 2 / 5;
	g->pat[0].hot_start = g->pat[0].len / 10;
	g->pat[0].hot_share = 0.9;
	g->pat[0].phase_at_us = p->duration_us / 2 ? p->duration_us / 2 : 1;
	g->pat[0].hot_len2 = F * 3 / 5;
	g->pat[0].hot_start2 = g->pat[0].len * 3 / 5;
	g->pat[0].hot_share2 = 0.8;
}

static void setup_thrash(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	(void)p;
	g->pat[0].hot_len = 2 * F;
	g->pat[0].hot_start = F;
	g->pat[0].hot_share = 0.9;
}

/* Scan resistance: a hot set filling 90% of the fast tier takes 99% of the
 * accesses; a sequential scan over the other 3.1F pages takes 1%, so it
 * comes back to a page only every few seconds. A policy that promotes what
 * was just touched pulls scanned pages in and pushes hot ones out. */
static void setup_scan(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	(void)p;
	g->pat[0].hot_len = F * 9 / 10;
	g->pat[0].hot_start = g->pat[0].len / 2;
	g->pat[0].hot_share = 0.99;
	g->pat[0].scan_share = 0.01;
}

static void setup_antagonist(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	setup_hotset(g, F, p);
	g->antagonist_share = 0.6;
}

static void setup_tenants(struct gen *g, uint64_t F, const struct tier_sim_workload_params *p)
{
	(void)p;
	g->nr_pat = 2;
	g->tenant0_share = 0.6;
	g->pat[0].base = 0;
	g->pat[0].len = g->footprint / 2;
	g->pat[0].hot_start = F / 2;
	g->pat[0].hot_len = F * 3 / 10;
	g->pat[0].hot_share = 0.9;
	g->pat[0].write_share = 0.3;
	g->pat[1] = g->pat[0];
	g->pat[1].base = g->pat[0].len;
	g->pat[1].len = g->footprint - g->pat[0].len;
	g->pat[1].hot_start = F / 4;
	g->pat[1].hot_len = F * 9 / 10;
	g->pat[1].hot_share = 0.9;
}

#define GEN_WORKLOAD(ident, wname, desc, setupfn, zipf, knob_doc)                      \
	static int ident##_create(const struct tier_sim_workload_params *p, void **priv, \
				  struct tier_err *err)                                  \
	{                                                                                \
		return gen_create(p, priv, setupfn, zipf, wname, knob_doc, err);         \
	}                                                                                \
	static const struct tier_sim_workload_ops ident = {                              \
		.name = wname,                                                           \
		.description = desc,                                                     \
		.params = knob_doc,                                                      \
		.create = ident##_create,                                                \
		.destroy = gen_destroy,                                                  \
		.footprint_pages = footprint_pages,                                      \
		.next = gen_next,                                                        \
		.weights = gen_weights,                                                  \
		.antagonist_bytes_per_s = gen_antagonist,                                \
		.nr_tenants = nr_tenants,                                                \
		.page_tenant = page_tenant,                                              \
	}

#define GUPS_KNOBS "hot=0.4:share=0.9"

GEN_WORKLOAD(wl_hotset, "gups-hotset", "hot set of 0.4F takes 90% of updates", setup_hotset, 0,
	     GUPS_KNOBS);
GEN_WORKLOAD(wl_moving, "gups-moving-hotset", "the hot set shifts by its length every 5 s",
	     setup_moving, 0, GUPS_KNOBS);
GEN_WORKLOAD(wl_zipf, "zipf", "Zipf(0.99) over the footprint, ranks scattered", setup_uniform, 1,
	     "alpha=0.99");
GEN_WORKLOAD(wl_uniform, "uniform", "uniform over the footprint", setup_uniform, 0, NULL);
GEN_WORKLOAD(wl_phase, "phase-change", "hot set A for the first half, then B", setup_phase, 0,
	     NULL);
GEN_WORKLOAD(wl_thrash, "thrash", "hot set of 2F (larger than the fast tier) takes 90%",
	     setup_thrash, 0, NULL);
GEN_WORKLOAD(wl_scan, "scan-plus-hotset", "hot set 0.9F takes 99%, a slow sequential scan 1%",
	     setup_scan, 0, NULL);
GEN_WORKLOAD(wl_antagonist, "bandwidth-antagonist",
	     "gups-hotset while another process uses 60% of the fast tier's bandwidth",
	     setup_antagonist, 0, GUPS_KNOBS);
GEN_WORKLOAD(wl_tenants, "multi-tenant", "two processes whose hot sets together exceed F",
	     setup_tenants, 0, NULL);

const struct tier_sim_workload_ops *const tier_sim_workloads[] = {
	&wl_hotset, &wl_moving, &wl_zipf, &wl_uniform, &wl_phase,
	&wl_thrash, &wl_scan, &wl_antagonist, &wl_tenants,
	&tier__sim_workload_server, &tier__sim_workload_server_moving,
	&tier__sim_workload_gups_guest,
	NULL,
};

const struct tier_sim_workload_ops *tier_sim_workload_find(const char *name,
							   const char **arg)
{
	size_t i;

	*arg = NULL;
	if (!strncmp(name, "trace:", 6)) {
		*arg = name + 6;
		return tier_sim_workload_trace_ops();
	}
	for (i = 0; tier_sim_workloads[i]; i++) {
		size_t n = strlen(tier_sim_workloads[i]->name);

		if (!strncmp(tier_sim_workloads[i]->name, name, n) &&
		    (name[n] == '\0' || name[n] == ':')) {
			*arg = name[n] ? name + n + 1 : NULL;
			return tier_sim_workloads[i];
		}
	}
	return NULL;
}

int tier_sim_workload_check(const char *name, struct tier_err *err)
{
	const char *arg;
	const struct tier_sim_workload_ops *w = tier_sim_workload_find(name, &arg);
	size_t i;
	struct knobs k;

	if (!w)
		return tier_err_set(err, -ENOENT, "unknown workload");
	for (i = 0; tier_sim_workloads[i]; i++)
		if (tier_sim_workloads[i] == w)
			break;
	if (!tier_sim_workloads[i])
		return 0;	/* trace:FILE: the file is read when the run starts */
	if (w->check)
		return w->check(arg, err);
	return parse_knobs(w->name, arg, knob_bits(w->params), &k, err);
}
