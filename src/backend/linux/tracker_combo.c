/* tracker_combo.c - DAMON and soft-dirty together ("damon+softdirty").
 *
 * DAMON checks one random address per region per sample, so a region's
 * nr_accesses is the share of its pages that are hot. A hot set that is
 * contiguous becomes regions of its own within a few aggregations; one
 * that is scattered page by page among cold pages (a hash table's hot
 * keys, one hot page in seven) never does: every region reads lukewarm,
 * and the policy cannot tell which of its pages deserve the fast tier.
 * Soft-dirty bits are per page: the pages written since a clear are the
 * ones a scattered write-hot set is made of, and their first-write faults
 * flush the TLB, so even an emulator's long-lived TLB entries cannot hide
 * them.
 *
 * So both run: DAMON (tracker_damon.c) over the targets as always, and the
 * soft-dirty thread (tracker_softdirty.c) over the same targets, each
 * target from when it arrived. (Handed on at the collect after, so that a
 * round's first clear - every page the process writes takes a fault, and
 * its page walks take CPU - would not slow the first step, the soft-dirty
 * round began only after the catalogue and the first collect, a second
 * into the guest bench, while the kdamond, whose regions resolve a hot set
 * only after some aggregations, had placed nothing yet: 4-8 s to 90% of a
 * contiguous hot set in three runs, 3 s in each of three at once; a
 * scattered one's median of six 5.5 s, 4 s at once;
 * bench/results/guest-ab-sd-at-once.txt.) collect()
 * hands both trackers' observations to the same sink, and the policy adds
 * the rates they stand for. A written page is also an accessed one, and
 * DAMON's region over it counts its writes already: so the written runs go
 * on whole, and each region with only the accesses its written pages do
 * not explain, spread over all its pages (tier__obs_written(),
 * tier__obs_rest()). A region of a scattered hot set reads lukewarm (one
 * page in 6.7 at 180/s, the rest at 4/s: about 30/s); its hot pages'
 * writes explain all of that, so its cold pages read at their own 4/s
 * rather than at the region's 30/s, which is above the 10/s a move must
 * pay for. Added as they were, a page
 * written as often as its region is accessed counted twice its rate: in
 * the guest's bench, the rest of a GUPS array (5 accesses/s a page) read
 * as 10/s, what a move must pay for, and 43,000 of its pages were moved
 * up, against 9,900 with DAMON alone. DAMON's kdamond keeps its share as alone; the soft-dirty
 * thread keeps its own (SD_CPU_SHARE, and SD_FAULT_SHARE of the workload's
 * faults).
 *
 * "damon+hint" is DAMON and the kernel's hint faults (tracker_hint.c)
 * together, the same way but for what each rates: the kernel scans only
 * the pages off the top tier, and their faults rate each of them, so
 * where the kernel's scans cover a process's pages (a range of it had a
 * page fault twice, tier__hint_covers()), DAMON's regions go on only where
 * they lie on the top tier (tier__obs_top_tier()); a scattered hot set's
 * lukewarm region on a slower tier would otherwise lift its cold pages to
 * its rate. Elsewhere DAMON rates them whole: the kernel scans a process
 * per second of its own CPU time, so a mostly sleeping one may have had
 * one pass or none (in a sid guest run, taken as covered from 200 ms
 * after its first fault, 825 hot pages of such a process were rated by
 * neither tracker for 60 s). Until its first pass is over, as above,
 * DAMON's lukewarm regions are held.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/clock.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define DAMON	(&tier__linux_tracker_damon)
#define SD	(&tier__linux_tracker_softdirty)


/* DAMON's observations of a collect are kept, and a collect that comes
 * while the second tracker has news and DAMON's own collect would wait for
 * the kdamond (no snapshot made ahead stands, none to restate: after a
 * change of its intervals, the first snapshot in the new ones is made
 * only at the end of an aggregation, up to a second) hands them on again,
 * for at most COMBO_REUSE_US after they were read, and asks for the next
 * snapshot ahead. The observations carry their own sample counts and
 * aggregation, so a change of intervals since does not alter what they
 * say. (In the guest bench, the steps that first had soft-dirty's picture
 * of the hot set waited 0.7-1.1 s for such snapshots before moving a
 * page: a run took 8 s to 90% of the hot set where the runs without the
 * waits took 3.) */
#define COMBO_REUSE_US	3000000u

struct combo_seen {
	pid_t pid;
	uint64_t since_us;	/* DAMON's first report of it */
};

struct combo {
	const struct tier_linux_tracker_ops *second;	/* soft-dirty or hint */
	bool (*rated_whole)(void *priv, pid_t pid);	/* the second has looked at all of it */
	bool by_tier;			/* hint: DAMON on the top tier alone */
	struct tier_linux_ctx ctx;	/* tiers() and its arg (by_tier) */
	void *damon, *sd;
	struct tier_linux_addr_obs *acc;	/* DAMON's observations in this collect */
	struct tier__obs_sums sums;	/* the written runs per region (obs_merge.c) */
	size_t nr_acc, cap_acc;
	bool acc_lost;			/* out of memory keeping them: passed on, and added */
	uint64_t damon_ns, sd_ns;	/* the last collect's parts (stats) */
	struct combo_seen *seen, *seen_next;	/* the processes in DAMON's reports, by pid */
	size_t nr_seen, cap_seen;
	pid_t *pending;		/* targets the second refused, again at the next collect */
	size_t nr_pending;
	bool has_pending;
	struct tier_linux_addr_obs *last;	/* DAMON's observations of the last
						 * collect that read them, sorted */
	size_t nr_last, cap_last;
	uint64_t last_us;		/* ... read then; 0: none to reuse */
	bool reused;			/* the last collect reused them */
};

static int combo_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	int ret = DAMON->probe(ctx, err);

	return ret ? ret : SD->probe(ctx, err);
}

static int combo_hint_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	int ret = DAMON->probe(ctx, err);

	return ret ? ret : tier__linux_tracker_hint.probe(ctx, err);
}

static void combo_destroy(void *priv)
{
	struct combo *c = priv;

	if (!c)
		return;
	if (c->sd)
		c->second->destroy(c->sd);
	if (c->damon)
		DAMON->destroy(c->damon);
	free(c->pending);
	free(c->last);
	free(c->acc);
	tier__obs_sums_free(&c->sums);
	free(c->seen);
	free(c->seen_next);
	free(c);
}

static int combo_make(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		      const struct tier_linux_tracker_ops *second, struct tier_err *err)
{
	struct combo *c = calloc(1, sizeof(*c));
	int ret;

	*priv = NULL;
	if (!c)
		return tier_err_set(err, -ENOMEM, "damon+%s: out of memory", second->name);
	c->second = second;
	c->by_tier = second == &tier__linux_tracker_hint;
	c->rated_whole = c->by_tier ? tier__hint_has_read : tier__softdirty_has_round;
	c->ctx = *ctx;
	ret = DAMON->create(ctx, interval_us, &c->damon, err);
	if (!ret)
		ret = second->create(ctx, interval_us, &c->sd, err);
	if (ret) {
		combo_destroy(c);
		return ret;
	}
	*priv = c;
	return 0;
}

static int combo_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
			struct tier_err *err)
{
	return combo_make(ctx, interval_us, priv, SD, err);
}

static int combo_hint_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
			     struct tier_err *err)
{
	return combo_make(ctx, interval_us, priv, &tier__linux_tracker_hint, err);
}

/* No targets left for the second to take. */
static void drop_pending(struct combo *c)
{
	free(c->pending);
	c->pending = NULL;
	c->nr_pending = 0;
	c->has_pending = false;
}

static int combo_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct combo *c = priv;
	struct tier_err sd_err = { "" };
	pid_t *v = NULL;
	int ret = DAMON->set_targets(c->damon, pids, n, err);

	c->last_us = 0;		/* of other targets */
	if (ret)
		return ret;
	/* At once: the second's first picture is what places a hot set the
	 * kdamond has not resolved yet. Refused, the next collect hands them
	 * on again. */
	if (!c->second->set_targets(c->sd, pids, n, &sd_err)) {
		drop_pending(c);
		return 0;
	}
	if (n && !(v = malloc(n * sizeof(*v))))
		return tier_err_set(err, -ENOMEM, "damon+%s: out of memory", c->second->name);
	if (n)
		memcpy(v, pids, n * sizeof(*v));
	free(c->pending);
	c->pending = v;
	c->nr_pending = n;
	c->has_pending = true;
	return 0;
}

static int acc_cmp(const void *x, const void *y)
{
	const struct tier_linux_addr_obs *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

struct pass {
	struct combo *c;
	tier_linux_obs_sink sink;
	void *ctx;
};

/* Room in c->acc for need entries, grown by doubling; false out of
 * memory. */
static bool acc_room(struct combo *c, size_t need)
{
	size_t nc = c->cap_acc ? c->cap_acc : 256;
	struct tier_linux_addr_obs *nv;

	if (need <= c->cap_acc)
		return true;
	while (nc < need)
		nc *= 2;
	nv = realloc(c->acc, nc * sizeof(*nv));
	if (!nv)
		return false;
	c->acc = nv;
	c->cap_acc = nc;
	return true;
}

/* DAMON's observations: kept until soft-dirty's are in. Out of memory,
 * those kept and the rest are passed on as they come, and soft-dirty's
 * add to them. */
static void keep_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct pass *p = ctx;
	struct combo *c = p->c;

	if (!c->acc_lost && !acc_room(c, c->nr_acc + n)) {
		c->acc_lost = true;
		if (c->nr_acc)
			p->sink(p->ctx, c->acc, c->nr_acc);
		c->nr_acc = 0;
	}
	if (c->acc_lost) {
		p->sink(p->ctx, obs, n);
		return;
	}
	memcpy(c->acc + c->nr_acc, obs, n * sizeof(*obs));
	c->nr_acc += n;
}

/* DAMON's lukewarm regions of the processes soft-dirty has not read a
 * whole round of yet, held (tier__obs_hold()): in the first step a
 * scattered hot set's regions read lukewarm and would spend the step's
 * budget on pages that are mostly cold (65,536 moves in the sid guest, and
 * the CPU share's pause after them) a second before soft-dirty names the
 * hot ones. Not only until its first read: one run in four or five of the
 * guest bench's scattered layout, the round's first two reads (at 24-34
 * and 60-65 ms of the writer's time) rated no run of its hot pages at 5/s
 * or more, the hold ended, and the step moved 26,000-28,000 pages up at
 * the regions' rate, most of them cold, then paused 4-5 s; the round's
 * last read (about 1.3 s after its clear) rates them from every bracket.
 * A contiguous hot set's regions read hot and go on at once. acc sorted
 * by pid. Out of memory, nothing is held. */
static void hold_unread(struct combo *c)
{
	uint64_t now = tier_linux_now_us();
	size_t i = 0, j = 0, n = 0;

	if (c->nr_acc > c->cap_seen) {
		struct combo_seen *a = realloc(c->seen, c->nr_acc * sizeof(*a));
		struct combo_seen *b = a ? realloc(c->seen_next, c->nr_acc * sizeof(*b)) : NULL;

		if (a)
			c->seen = a;
		if (!b)
			return;
		c->seen_next = b;
		c->cap_seen = c->nr_acc;
	}
	while (i < c->nr_acc) {
		pid_t pid = c->acc[i].pid;
		uint64_t since = now;
		size_t end = i;

		while (j < c->nr_seen && c->seen[j].pid < pid)
			j++;
		if (j < c->nr_seen && c->seen[j].pid == pid)
			since = c->seen[j].since_us;
		while (end < c->nr_acc && c->acc[end].pid == pid)
			end++;
		c->seen_next[n++] = (struct combo_seen){ pid, since };
		if (now - since < TIER__OBS_HOLD_US && !c->rated_whole(c->sd, pid))
			tier__obs_hold(c->acc + i, end - i, pid, TIER__OBS_HOLD_RATE);
		i = end;
	}
	{
		struct combo_seen *t = c->seen;

		c->seen = c->seen_next;
		c->seen_next = t;
		c->nr_seen = n;
	}
}

static void written_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct pass *p = ctx;

	tier__obs_written(p->c->acc, p->c->nr_acc, &p->c->sums, obs, n, p->sink, p->ctx);
}

/* DAMON's observations just read (c->acc, sorted) kept for reuse_last();
 * after an error or out of memory, none. */
static void keep_last(struct combo *c, int ret)
{
	c->last_us = 0;
	if (ret || c->acc_lost)
		return;
	if (c->nr_acc > c->cap_last) {
		struct tier_linux_addr_obs *v = realloc(c->last, c->nr_acc * sizeof(*v));

		if (!v)
			return;
		c->last = v;
		c->cap_last = c->nr_acc;
	}
	if (c->nr_acc)
		memcpy(c->last, c->acc, c->nr_acc * sizeof(*c->acc));
	c->nr_last = c->nr_acc;
	c->last_us = tier_linux_now_us();
}

/* Whether this collect hands on DAMON's last observations (into c->acc)
 * rather than wait for the kdamond (COMBO_REUSE_US above). */
static bool reuse_last(struct combo *c)
{
	if (!c->last_us || tier_linux_now_us() - c->last_us > COMBO_REUSE_US ||
	    !c->second->news || !c->second->news(c->sd) || !tier__damon_collect_waits(c->damon))
		return false;
	if (!acc_room(c, c->nr_last))
		return false;
	if (c->nr_last)
		memcpy(c->acc, c->last, c->nr_last * sizeof(*c->last));
	c->nr_acc = c->nr_last;
	return true;
}

/* Both, DAMON first; an error of either is returned after both ran. */
static int combo_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct combo *c = priv;
	struct tier_err sd_err = { "" };
	struct pass p = { c, sink, ctx };
	int ret, sd_ret;

	uint64_t t0 = tier_linux_thread_cpu_ns(), t1;

	c->nr_acc = 0;
	c->acc_lost = false;
	c->reused = reuse_last(c);
	if (c->reused) {
		ret = 0;
		DAMON->ahead(c->damon, tier_linux_now_us());
	} else {
		ret = DAMON->collect(c->damon, keep_sink, &p, err);
		if (c->nr_acc > 1)
			qsort(c->acc, c->nr_acc, sizeof(*c->acc), acc_cmp);
		keep_last(c, ret);
	}
	/* Out of memory for the sums, the regions pass as DAMON read them. */
	tier__obs_sums_reset(&c->sums, c->nr_acc);
	if (c->nr_acc)
		hold_unread(c);
	t1 = tier_linux_thread_cpu_ns();
	if (c->by_tier) {
		/* The hint faults' rates, then DAMON's where they do not rate. */
		sd_ret = c->second->collect(c->sd, sink, ctx, &sd_err);
		tier__obs_top_tier(c->acc, c->nr_acc, &c->ctx, tier__hint_covers, c->sd, sink, ctx);
	} else {
		sd_ret = SD->collect(c->sd, written_sink, &p, &sd_err);
		/* The regions, each with what its written pages leave
		 * unexplained (nothing written: as DAMON read it). */
		tier__obs_rest(c->acc, c->nr_acc, &c->sums, sink, ctx);
	}
	c->damon_ns = t1 - t0;
	c->sd_ns = tier_linux_thread_cpu_ns() - t1;

	if (!sd_ret && c->has_pending) {
		sd_ret = c->second->set_targets(c->sd, c->pending, c->nr_pending, &sd_err);
		if (!sd_ret)
			drop_pending(c);
	}

	if (!ret && sd_ret) {
		*err = sd_err;
		ret = sd_ret;
	}
	return ret;
}

static void combo_ahead(void *priv, uint64_t step_us)
{
	struct combo *c = priv;

	DAMON->ahead(c->damon, step_us);
	if (c->second->ahead)
		c->second->ahead(c->sd, step_us);
}

/* News from either tracker, or targets the second has still to take. */
static bool combo_news(void *priv)
{
	struct combo *c = priv;

	return c->has_pending || DAMON->news(c->damon) || !c->second->news ||
	       c->second->news(c->sd);
}

static void combo_maintain(void *priv)
{
	struct combo *c = priv;

	DAMON->maintain(c->damon);
	if (c->second->maintain)
		c->second->maintain(c->sd);
}

static bool combo_kdamond(void *priv, unsigned *index, pid_t *pid)
{
	struct combo *c = priv;

	return DAMON->kdamond(c->damon, index, pid);
}

static void combo_stats(void *priv, struct tier_linux_tracker_stats *st)
{
	struct combo *c = priv;
	struct tier_linux_tracker_stats d;

	DAMON->stats(c->damon, &d);
	c->second->stats(c->sd, st);
	st->damon_sample_us = d.damon_sample_us;
	st->damon_max_regions = d.damon_max_regions;
	st->damon_share_percent = d.damon_share_percent;
	st->damon_aggr_us = d.damon_aggr_us;
	st->damon_snap = d.damon_snap;
	if (c->reused) {
		/* Nothing read or waited for: DAMON's figures are the
		 * snapshot's its observations came from. */
		st->damon_snap.wait_us = 0;
		st->damon_snap.requests = 0;
		st->damon_snap.ahead_wait_us = 0;
		st->damon_snap.restated = false;
		st->damon_snap.reused = true;
	}
	st->collect_damon_ns = c->damon_ns;
	st->collect_sd_ns = c->sd_ns;
}

static void combo_set_budget(void *priv, double kthread_percent, double thread_percent)
{
	struct combo *c = priv;

	DAMON->set_budget(c->damon, kthread_percent, thread_percent);
	if (c->second->set_budget)
		c->second->set_budget(c->sd, kthread_percent, thread_percent);
}

const struct tier_linux_tracker_ops tier__linux_tracker_combo = {
	.name = "damon+softdirty",
	.kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN,
	.kthreads = true,
	.own_thread = true,
	.probe = combo_probe,
	.create = combo_create,
	.destroy = combo_destroy,
	.set_targets = combo_set_targets,
	.collect = combo_collect,
	.maintain = combo_maintain,
	.ahead = combo_ahead,
	.news = combo_news,
	.kdamond = combo_kdamond,
	.stats = combo_stats,
	.set_budget = combo_set_budget,
};

const struct tier_linux_tracker_ops tier__linux_tracker_combo_hint = {
	.name = "damon+hint",
	.kinds = TIER_OBS_ACCESSED,
	.kthreads = true,
	.hint_faults = true,
	.probe = combo_hint_probe,
	.create = combo_hint_create,
	.destroy = combo_destroy,
	.set_targets = combo_set_targets,
	.collect = combo_collect,
	.maintain = combo_maintain,
	.ahead = combo_ahead,
	.news = combo_news,
	.kdamond = combo_kdamond,
	.stats = combo_stats,
	.set_budget = combo_set_budget,
};
