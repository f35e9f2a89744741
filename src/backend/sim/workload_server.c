/* workload_server.c - workloads at a server's access density.
 *
 * The other generated workloads draw every access by share: on a 128 MiB
 * footprint at one core's rate even their coldest pages are touched many
 * times a second. A server's memory is mostly far colder than that
 * (docs/tiersim.md, "Server density", gives the published figures). Here
 * the footprint falls into four classes and the colder two are driven by
 * rate in simulated time, not by share, so a page's accesses per second
 * are the same on a 256 MiB and a 16 GiB footprint:
 *
 *   hot    3% of the footprint: every access not taken by the others
 *          (about 90% of them at 16 GiB, more on smaller footprints)
 *   warm  27%: each page 1 access per second
 *   cold  15%: each page 1 access per 30 s
 *   idle  55%: never touched after first touch
 *
 * Classes are laid out in 2 MiB chunks (512 pages) whose places are a
 * seeded shuffle, so each class is spread over the whole address range,
 * as a heap's objects are, and no contiguous range is all hot.
 *
 *   server          the classes stay where they are
 *   server-moving   the hot set moves by its own length through the hot
 *                   and warm chunks every 20 s (yesterday's hot data turns
 *                   warm, some warm data turns hot)
 *
 * Time: the engine asks for a batch at the application's current time, so
 * the warm and cold accesses due since the last batch are spread evenly
 * through this one (at most half of it; what is left waits for the next).
 */
#include "backend/sim/workload.h"

#include <errno.h>
#include <stdlib.h>

#include "backend/sim/rng.h"

enum { CHUNK_PAGES = 512 };

/* Class sizes in thousandths of the footprint, rates per page. */
#define HOT_PERMILLE 30
#define WARM_PERMILLE 270
#define COLD_PERMILLE 150
#define WARM_HZ 1.0
#define COLD_HZ (1.0 / 30)
#define WRITE_SHARE 0.2
#define MOVE_PERIOD_US UINT64_C(20000000)

struct server {
	struct tier_rng rng;
	uint64_t footprint;
	uint64_t hot, warm, cold;	/* pages per class; idle: the rest */
	uint64_t span;			/* hot + warm: where the hot set moves */
	uint64_t move_period_us;	/* 0: it stays */
	uint32_t *chunk;		/* logical chunk -> its place */
	uint64_t nr_chunks;		/* whole chunks; a partial tail stays */
	double warm_rate, cold_rate;	/* accesses per second, all pages */
	double due;			/* warm and cold accesses due, not issued */
	uint64_t last_us;
};

static uint64_t place(const struct server *g, uint64_t logical)
{
	uint64_t c = logical / CHUNK_PAGES;

	if (c >= g->nr_chunks)
		return logical;
	return (uint64_t)g->chunk[c] * CHUNK_PAGES + logical % CHUNK_PAGES;
}

static uint64_t hot_shift(const struct server *g, uint64_t now_us)
{
	if (!g->move_period_us)
		return 0;
	return (now_us / g->move_period_us) % g->span * g->hot % g->span;
}

static int create(const struct tier_sim_workload_params *prm, void **priv,
		  uint64_t move_period_us, const char *name, struct tier_err *err)
{
	struct server *g;
	uint64_t i;

	if (prm->arg)
		return tier_err_set(err, -EINVAL, "workload '%s' takes no parameters (got '%s')",
				    name, prm->arg);
	g = calloc(1, sizeof(*g));
	if (!g)
		return tier_err_set(err, -ENOMEM, "out of memory");
	/* 80% of the machine, as the other generated workloads. */
	g->footprint = prm->total_pages / 5 * 4;
	g->hot = g->footprint * HOT_PERMILLE / 1000;
	g->warm = g->footprint * WARM_PERMILLE / 1000;
	g->cold = g->footprint * COLD_PERMILLE / 1000;
	if (g->hot < 16 || !g->warm || !g->cold) {
		free(g);
		return tier_err_set(err, -EINVAL,
				    "workload '%s': a footprint of %llu pages is too small (at least 534)",
				    name, (unsigned long long)(prm->total_pages / 5 * 4));
	}
	g->span = g->hot + g->warm;
	g->move_period_us = move_period_us;
	g->warm_rate = (double)g->warm * WARM_HZ;
	g->cold_rate = (double)g->cold * COLD_HZ;
	tier_rng_seed(&g->rng, prm->seed);
	g->nr_chunks = g->footprint / CHUNK_PAGES;
	g->chunk = malloc((g->nr_chunks ? g->nr_chunks : 1) * sizeof(*g->chunk));
	if (!g->chunk) {
		free(g);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < g->nr_chunks; i++)
		g->chunk[i] = (uint32_t)i;
	for (i = g->nr_chunks; i > 1; i--) {
		uint64_t j = tier_rng_below(&g->rng, i);
		uint32_t t = g->chunk[i - 1];

		g->chunk[i - 1] = g->chunk[j];
		g->chunk[j] = t;
	}
	*priv = g;
	return 0;
}

static int server_create(const struct tier_sim_workload_params *p, void **priv,
			 struct tier_err *err)
{
	return create(p, priv, 0, "server", err);
}

static int moving_create(const struct tier_sim_workload_params *p, void **priv,
			 struct tier_err *err)
{
	return create(p, priv, MOVE_PERIOD_US, "server-moving", err);
}

static void destroy(void *priv)
{
	struct server *g = priv;

	if (!g)
		return;
	free(g->chunk);
	free(g);
}

static uint64_t footprint_pages(void *priv)
{
	return ((struct server *)priv)->footprint;
}

static long next(void *priv, uint64_t now_us, struct tier_sim_access *buf, size_t n,
		 struct tier_err *err)
{
	struct server *g = priv;
	struct tier_rng rng = g->rng;
	uint64_t shift = hot_shift(g, now_us);
	uint64_t write_thr = (uint64_t)(WRITE_SHARE * 4294967296.0);
	double warm_p = g->warm_rate / (g->warm_rate + g->cold_rate);
	size_t nr_bg, i;

	(void)err;
	if (now_us > g->last_us) {
		g->due += (g->warm_rate + g->cold_rate) * (double)(now_us - g->last_us) / 1e6;
		g->last_us = now_us;
	}
	nr_bg = g->due < (double)(n / 2) ? (size_t)g->due : n / 2;
	g->due -= (double)nr_bg;
	for (i = 0; i < n; i++) {
		uint64_t l;

		/* nr_bg slots spread evenly: where floor(i * nr_bg / n) steps. */
		if ((i + 1) * nr_bg / n > i * nr_bg / n) {
			if (tier_rng_double(&rng) < warm_p)
				l = (shift + g->hot + tier_rng_below(&rng, g->warm)) % g->span;
			else
				l = g->span + tier_rng_below(&rng, g->cold);
		} else {
			l = (shift + tier_rng_below(&rng, g->hot)) % g->span;
		}
		buf[i].page = place(g, l);
		buf[i].write = (tier_rng_next(&rng) >> 32) < write_thr;
		buf[i].tenant = 0;
	}
	g->rng = rng;
	return (long)n;
}

/* Accesses per second per page. The hot pages share what is left of 10^7
 * accesses a second (100 ns an access, about the best placement's AMAT on
 * the server preset): a fixed figure, so the weights change only when the
 * hot set moves and the oracle re-sorts only then. */
static int weights(void *priv, uint64_t now_us, double *w)
{
	struct server *g = priv;
	uint64_t shift = hot_shift(g, now_us), l;
	double hot_rate = 1e7 - g->warm_rate - g->cold_rate;

	if (hot_rate < 1e6)
		hot_rate = 1e6;
	for (l = 0; l < g->footprint; l++) {
		double r = 0;

		if (l < g->span)
			r = (l + g->span - shift) % g->span < g->hot ? hot_rate / (double)g->hot
								     : WARM_HZ;
		else if (l < g->span + g->cold)
			r = COLD_HZ;
		w[place(g, l)] = r;
	}
	return 0;
}

const struct tier_sim_workload_ops tier__sim_workload_server = {
	.name = "server",
	.description = "server density: 3% hot, 27% warm (1/s a page), 15% cold (1/30 s), 55% idle",
	.create = server_create,
	.destroy = destroy,
	.footprint_pages = footprint_pages,
	.next = next,
	.weights = weights,
};

const struct tier_sim_workload_ops tier__sim_workload_server_moving = {
	.name = "server-moving",
	.description = "server, the hot set moving by its length through hot and warm every 20 s",
	.create = moving_create,
	.destroy = destroy,
	.footprint_pages = footprint_pages,
	.next = next,
	.weights = weights,
};
