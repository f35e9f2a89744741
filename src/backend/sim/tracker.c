/* tracker.c - the simulated trackers and the tracker ops that deliver their
 * observations: accessed-bit (idle) and soft-dirty scans, 1-in-N sampled
 * accesses, NUMA hint faults from a scan that unmaps pages as the kernel's
 * NUMA balancing does, and the young bits as the hardware leaves them
 * (young); DAMON's regions are in tracker_damon.c, the daemon's soft-dirty
 * rounds (softdirty-rounds) in tracker_sd.c. Each charges the costs
 * of engine_internal.h to the policy's CPU or the application.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine_internal.h"

/* Kernel NUMA balancing defaults (debugfs sched/numa_balancing). */
#define HINT_SCAN_PERIOD_NS 1000000000.0		/* scan_period_min_ms 1000 */
#define HINT_SCAN_PERIOD_MAX_NS 60000000000.0	/* scan_period_max_ms 60000 */
#define HINT_SCAN_PAGES (256u << (20 - PAGE_SHIFT))	/* scan_size_mb 256 */
#define HINT_CHUNK_SHIFT 9				/* unmap time per 2 MiB */
#define HINT_SCAN_ALIGN 512u				/* HPAGE_SIZE in pages */

const char *const tier_sim_trackers[] = {
	"damon", "idle", "softdirty", "samples", "hintfault", "young", "softdirty-rounds", NULL,
};

int tier__sim_obs_push(struct tier_sim *s, const struct tier_obs *o)
{
	if (s->nr_obs == s->cap_obs) {
		size_t cap = s->cap_obs ? s->cap_obs * 2 : 4096;
		struct tier_obs *n = realloc(s->obs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->obs = n;
		s->cap_obs = cap;
	}
	s->obs[s->nr_obs++] = *o;
	return 0;
}

/* The end of the run of pages from q whose flags byte has `bit` as v
 * (F_* bit or 0), at most `end`: eight flags a word while they all match
 * (a 16 GiB footprint is 4M flags, read at every tick of the young
 * tracker). 4 KiB pages only: with THP a page's flags may be its unit's. */
static uint64_t run_end(const uint8_t *flags, uint64_t q, uint64_t end, uint8_t bit, uint8_t v)
{
	const uint64_t mask = UINT64_C(0x0101010101010101) * bit;
	const uint64_t want = v ? mask : 0;

	while (q + 8 <= end) {
		uint64_t w;

		memcpy(&w, flags + q, sizeof(w));
		if ((w & mask) != want)
			break;
		q += 8;
	}
	while (q < end && (flags[q] & bit) == v)
		q++;
	return q;
}

/* Accessed-bit (idle) or soft-dirty scan of every page, reported as runs;
 * charged unless `free` (the young tracker: no software scans). */
static int bit_scan(struct tier_sim *s, uint8_t bit, uint16_t kind, uint32_t interval_us,
		    bool free)
{
	uint64_t p = 0;
	int ret;

	while (p < s->nr_pages) {
		uint8_t v = s->flags[tier__sim_flag_idx(s, p)] & bit;
		uint64_t q = p + 1;
		struct tier_obs o;

		if (!s->thp)
			q = run_end(s->flags, q, s->nr_pages - p > UINT32_MAX ? p + UINT32_MAX
									   : s->nr_pages, bit, v);
		while (q < s->nr_pages && (s->flags[tier__sim_flag_idx(s, q)] & bit) == v &&
		       q - p < UINT32_MAX)
			q++;
		memset(&o, 0, sizeof(o));
		o.page = p;
		o.nr_pages = (uint32_t)(q - p);
		o.kind = kind;
		o.count = v ? 1 : 0;
		o.max = 1;
		o.interval_us = interval_us;
		ret = tier__sim_obs_push(s, &o);
		if (ret)
			return ret;
		if (v && !s->thp) {	/* only set runs have bits to clear */
			uint64_t i;

			for (i = p; i < q; i++)
				s->flags[i] &= (uint8_t)~bit;
		}
		p = q;
	}
	if (s->thp) {
		/* In locals: through s, every byte stored would reload both. */
		uint8_t *flags = s->flags, keep = (uint8_t)~bit;
		uint64_t n = s->nr_pages;

		for (p = 0; p < n; p++)
			flags[p] &= keep;
	}
	if (free)
		return 0;
	if (bit == F_ACCESSED) {
		s->policy_cpu_ns += s->cpu_ns.idle_scan_page * (double)s->nr_pages;
	} else {
		s->policy_cpu_ns += s->cpu_ns.idle_scan_page * (double)s->nr_pages;
		s->app_ns += s->cpu_ns.softdirty_clear_page * (double)s->nr_pages;
		s->cost.stall_ns += s->cpu_ns.softdirty_clear_page * (double)s->nr_pages;
	}
	return 0;
}

/* One run of task_numa_work() (kernel/sched/fair.c, Linux 6.12): from
 * where the last one stopped, ranges of up to the scan size's pages
 * (start + pages rounded up to 2 MiB, as end = ALIGN(start + (pages <<
 * PAGE_SHIFT), HPAGE_SIZE)) are unmapped (protnone) page by page, so the
 * next access to each faults. In tiering mode only pages below the top
 * tier are unmapped; a page already protnone or not present is no update
 * either. A range counts against the scan size (HINT_SCAN_PAGES, 256 MB)
 * only when it updated a PTE, and against eight times that (virtpages)
 * always:
 *	if (nr_pte_updates)
 *		pages -= (end - start) >> PAGE_SHIFT;
 *	virtpages -= (end - start) >> PAGE_SHIFT;
 * so a stretch already on the top tier is skipped at up to 2 GB a run.
 * The page ids are the one address space: at its end the run stops and
 * the next starts from page 0 (reset_ptenuma_scan()), and the period
 * backs off. Each page walked costs change_prot_numa()'s per-page time
 * in the task (with THP, per huge page). Until now every page walked
 * counted against the 256 MB, a pass wrapped round within a run, and a
 * top-tier stretch took as long to cross as any. */
static void hint_scan(struct tier_sim *s)
{
	int64_t pages = HINT_SCAN_PAGES, virtpages = 8 * (int64_t)HINT_SCAN_PAGES;
	uint64_t walked = 0;
	double cost;

	while (pages > 0 && virtpages > 0) {
		uint64_t start = s->hint.pos, end, p, updates = 0;

		end = (start + (uint64_t)pages + HINT_SCAN_ALIGN - 1) & ~(uint64_t)(HINT_SCAN_ALIGN - 1);
		if (end > s->nr_pages)
			end = s->nr_pages;
		for (p = start; p < end; p++) {
			uint8_t node = s->page_node[p];
			uint64_t i = tier__sim_flag_idx(s, p);

			if (node == TIER_NODE_NONE || s->node_rank[node] == 0 ||
			    (s->flags[i] & F_PROTNONE))
				continue;
			s->flags[i] |= F_PROTNONE;
			s->hint.chunk_unmap_ns[p >> HINT_CHUNK_SHIFT] = s->app_ns;
			updates++;
		}
		if (updates)
			pages -= (int64_t)(end - start);
		virtpages -= (int64_t)(end - start);
		walked += end - start;
		s->hint.pos = end;
		if (end == s->nr_pages) {
			/* A full pass done: the scan period backs off, as
			 * task_numa_work's does when the task's faults give no
			 * reason to scan faster (in tiering mode only faults
			 * that promote count): measured in the test guest as
			 * scans at about 1, 3, 7, 15, 31 s. */
			s->hint.pos = 0;
			if (s->hint.period_ns < HINT_SCAN_PERIOD_MAX_NS) {
				s->hint.period_ns *= 2;
				if (s->hint.period_ns > HINT_SCAN_PERIOD_MAX_NS)
					s->hint.period_ns = HINT_SCAN_PERIOD_MAX_NS;
			}
			break;
		}
	}
	/* change_prot_numa() changes one PMD for a THP. */
	cost = s->cpu_ns.hint_scan_page *
	       (double)(s->thp ? (walked + THP_PAGES - 1) >> THP_SHIFT : walked);
	s->app_ns += cost;
	s->cost.stall_ns += cost;
}

int tier__sim_hint_fault(struct tier_sim *s, uint64_t p, uint64_t fp, bool write, double t_ns)
{
	struct tier_obs o;
	uint64_t base;

	memset(&o, 0, sizeof(o));
	/* A THP faults as a whole (task_numa_fault of 512 pages). */
	o.page = fp;
	o.nr_pages = s->thp && s->huge[p >> THP_SHIFT] ? (uint32_t)tier__sim_unit_range(s, p, &base)
						       : 1;
	o.kind = TIER_OBS_HINT_FAULT;
	o.write = write;
	o.count = 1;
	o.latency_us = (uint32_t)((s->app_ns + t_ns - s->hint.chunk_unmap_ns[p >> HINT_CHUNK_SHIFT]) /
				  1000.0);
	return tier__sim_obs_push(s, &o);
}

int tier__sim_sample(struct tier_sim *s, uint64_t p, bool write)
{
	unsigned k = write && s->sample.store_stream;
	uint64_t period = s->sample.period[k];
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.page = p;
	o.nr_pages = 1;
	o.kind = TIER_OBS_SAMPLE;
	o.write = write;
	o.count = (uint32_t)period;
	if (tier__sim_obs_push(s, &o))
		return -ENOMEM;
	s->policy_cpu_ns += s->cpu_ns.sample;
	/* Jitter of +-1/8 so periodic patterns do not alias. */
	s->sample.countdown[k] = period - period / 8 + tier_rng_below(&s->rng, period / 4 + 1);
	return 0;
}

int tier__sim_trackers_tick(struct tier_sim *s, struct tier_err *err)
{
	int ret;

	if (s->trackers & TRK_DAMON) {
		ret = tier__sim_damon_tick(s);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	if (s->trackers & TRK_SDROUNDS) {
		ret = tier__sim_sd_tick(s);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	if ((s->trackers & TRK_HINT) && s->app_ns >= s->hint.next_scan_ns) {
		hint_scan(s);
		s->hint.next_scan_ns += s->hint.period_ns;
	}
	return 0;
}

static int sim_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
		       void *ctx, struct tier_err *err)
{
	struct tier_sim *s = priv;
	uint32_t interval_us = (uint32_t)s->env.interval_us;
	int ret = 0;

	/* Scanning trackers look at the bits right before the policy runs.
	 * young hands over the same bits without a scan's cost: the page
	 * table's young bits, which a policy that reads them page by page
	 * (kernel-nb's kswapd, through test_and_clear_young) pays for per
	 * page it reads. Handing them over each tick makes the accesses of a
	 * tick count after the reads in it: the tick's hint faults, and the
	 * kswapd runs they start, are replayed at the tick's end, where the
	 * kernel's kswapd runs beside the application and sees its accesses
	 * meanwhile (a hot page is touched between its deactivation and its
	 * turn at the inactive tail). */
	if (s->trackers & (TRK_IDLE | TRK_YOUNG))
		ret = bit_scan(s, F_ACCESSED, TIER_OBS_ACCESSED, interval_us,
			       !(s->trackers & TRK_IDLE));
	if (!ret && (s->trackers & TRK_SOFTDIRTY))
		ret = bit_scan(s, F_DIRTY, TIER_OBS_WRITTEN, interval_us, false);
	if (!ret && (s->trackers & TRK_SDROUNDS))
		ret = tier__sim_sd_collect(s);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	if (s->nr_obs)
		sink(ctx, s->obs, s->nr_obs);
	s->nr_obs = 0;
	s->damon.snap_n = 0;
	return 0;
}

const struct tier_tracker_ops tier__sim_tracker_ops = {
	.name = "sim",
	.kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE | TIER_OBS_HINT_FAULT,
	.collect = sim_collect,
};

int tier__sim_trackers_parse(struct tier_sim *s, const char *list, struct tier_err *err)
{
	char buf[64], *save = NULL, *tok;
	size_t k;

	if (strlen(list) >= sizeof(buf))
		return tier_err_set(err, -EINVAL, "tracker list '%s' too long", list);
	snprintf(buf, sizeof(buf), "%s", list);
	snprintf(s->tracker_names, sizeof(s->tracker_names), "%s", list);
	if (!strcmp(list, "none"))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; tier_sim_trackers[k]; k++)
			if (!strcmp(tok, tier_sim_trackers[k]))
				break;
		if (!tier_sim_trackers[k])
			return tier_err_set(err, -EINVAL,
					    "unknown tracker '%s' (none, damon, idle, softdirty, samples, hintfault, young, softdirty-rounds)",
					    tok);
		s->trackers |= 1u << k;
	}
	if (!s->trackers)
		return tier_err_set(err, -EINVAL, "no tracker named in '%s'", list);
	/* Both read and clear the one soft-dirty bit. */
	if ((s->trackers & TRK_SOFTDIRTY) && (s->trackers & TRK_SDROUNDS))
		return tier_err_set(err, -EINVAL,
				    "tracker list '%s': softdirty and softdirty-rounds both clear the soft-dirty bits; name one",
				    list);
	return 0;
}

int tier__sim_trackers_init(struct tier_sim *s, struct tier_err *err)
{
	unsigned k;

	if ((s->trackers & TRK_DAMON) && tier__sim_damon_init(s))
		return tier_err_set(err, -ENOMEM, "out of memory");
	if (s->trackers & TRK_HINT) {
		s->hint.chunk_unmap_ns = calloc((s->nr_pages >> HINT_CHUNK_SHIFT) + 1,
						sizeof(*s->hint.chunk_unmap_ns));
		if (!s->hint.chunk_unmap_ns)
			return tier_err_set(err, -ENOMEM, "out of memory");
	}
	s->sample.period[0] = (s->pol && s->pol->sample_period_lines ? s->pol->sample_period_lines
								     : SAMPLE_PERIOD_LINES) /
			      LINES_PER_ACCESS;
	s->sample.store_stream = s->pol && s->pol->sample_period_store_lines;
	s->sample.period[1] = s->sample.store_stream
				      ? s->pol->sample_period_store_lines / LINES_PER_ACCESS
				      : s->sample.period[0];
	for (k = 0; k < 2; k++) {
		if (!s->sample.period[k])
			s->sample.period[k] = 1;
		s->sample.countdown[k] = s->sample.period[k];
	}
	s->hint.next_scan_ns = HINT_SCAN_PERIOD_NS;
	s->hint.period_ns = HINT_SCAN_PERIOD_NS;
	return 0;
}
