/* tracker_combo.c - DAMON and soft-dirty together ("damon+softdirty"):
 * DAMON's regions for what is hot as a range (reads and writes, at the
 * cost of a kdamond), soft-dirty's per-page first-write times for what
 * DAMON's regions cannot resolve (a hot page among cold ones, a hash
 * table's hot keys: a region of pages of which one in seven is hot reads
 * as lukewarm throughout).
 *
 * Each keeps its own bounds: the kdamond its share of a core (its sample
 * interval and regions), the soft-dirty thread its own CPU share and the
 * workload's write-protect faults (its round's period). Both report into
 * the same sink; the policy adds the accesses a region's count stands for
 * to each of its pages and a page's writes to that page.
 */
#include <errno.h>
#include <stdlib.h>

#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

struct combo {
	void *damon, *sd;
};

#define DAMON (&tier__linux_tracker_damon)
#define SD (&tier__linux_tracker_softdirty)

static int combo_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	int ret = DAMON->probe(ctx, err);

	return ret ? ret : SD->probe(ctx, err);
}

static void combo_destroy(void *priv)
{
	struct combo *c = priv;

	if (!c)
		return;
	if (c->sd)
		SD->destroy(c->sd);
	if (c->damon)
		DAMON->destroy(c->damon);
	free(c);
}

static int combo_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
			struct tier_err *err)
{
	struct combo *c = calloc(1, sizeof(*c));
	int ret;

	*priv = NULL;
	if (!c)
		return tier_err_set(err, -ENOMEM, "damon+softdirty: out of memory");
	ret = DAMON->create(ctx, interval_us, &c->damon, err);
	if (!ret)
		ret = SD->create(ctx, interval_us, &c->sd, err);
	if (ret) {
		combo_destroy(c);
		return ret;
	}
	*priv = c;
	return 0;
}

static int combo_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct combo *c = priv;
	struct tier_err err2 = { "" };
	int ret = DAMON->set_targets(c->damon, pids, n, err);
	int ret2 = SD->set_targets(c->sd, pids, n, ret ? &err2 : err);

	return ret ? ret : ret2;
}

/* Both collect every time: one failing (a process gone mid-read) must not
 * starve the other. The first error is returned. */
static int combo_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct combo *c = priv;
	struct tier_err err2 = { "" };
	int ret = DAMON->collect(c->damon, sink, ctx, err);
	int ret2 = SD->collect(c->sd, sink, ctx, ret ? &err2 : err);

	return ret ? ret : ret2;
}

static void combo_maintain(void *priv)
{
	struct combo *c = priv;

	if (DAMON->maintain)
		DAMON->maintain(c->damon);
	if (SD->maintain)
		SD->maintain(c->sd);
}

static bool combo_kdamond(void *priv, unsigned *index, pid_t *pid)
{
	struct combo *c = priv;

	return DAMON->kdamond && DAMON->kdamond(c->damon, index, pid);
}

/* The workload's faults and the rounds are soft-dirty's: the kdamond
 * causes none. */
static void combo_stats(void *priv, struct tier_linux_tracker_stats *st)
{
	struct combo *c = priv;
	struct tier_linux_tracker_stats d = { 0 };

	if (SD->stats)
		SD->stats(c->sd, st);
	if (DAMON->stats) {
		DAMON->stats(c->damon, &d);
		st->dropped += d.dropped;
	}
}

const struct tier_linux_tracker_ops tier__linux_tracker_damon_softdirty = {
	.name = "damon+softdirty",
	.kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN,
	.probe = combo_probe,
	.create = combo_create,
	.destroy = combo_destroy,
	.set_targets = combo_set_targets,
	.collect = combo_collect,
	.maintain = combo_maintain,
	.kdamond = combo_kdamond,
	.stats = combo_stats,
};
