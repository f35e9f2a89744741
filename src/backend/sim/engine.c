/* engine.c - tiersim's engine: builds the simulated machine, its workload,
 * trackers and policy (or the oracle) into one backend, runs the workload
 * in simulated time and reports the figures. See engine.h for the model and
 * engine_internal.h for the modules that carry it.
 */
#include "backend/sim/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/sim/engine_internal.h"
#include "core/loop.h"
#include "core/pace.h"

#define EPOCH_NS 100000000.0		/* timeline row and oracle epoch: 100 ms */

static uint64_t sim_now_us(void *priv)
{
	return (uint64_t)(((struct tier_sim *)priv)->app_ns / 1000.0);
}

static const struct tier_clock_ops sim_clock_ops = {
	.name = "sim",
	.now_us = sim_now_us,
};

/* --- the run ------------------------------------------------------------- */

/* Replays the workload's next batch. Returns 1 when it ran, 0 when the
 * workload has ended, -errno with err set on failure. */
static int run_batch(struct tier_sim *s, uint64_t now_us, struct tier_err *err)
{
	long n;
	int ret;

	n = s->wl->next(s->wl_priv, now_us, s->buf, BATCH, err);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	ret = tier__sim_replay(s, s->buf, (size_t)n);
	if (ret)
		return tier_err_set(err, ret, ret == -ERANGE ?
				    "workload touched a page beyond its footprint" :
				    "simulated machine out of memory");
	if (s->antagonist_bps == 0 && s->wl->antagonist_bytes_per_s)
		s->antagonist_bps = s->wl->antagonist_bytes_per_s(s->wl_priv, now_us);
	return 1;
}

/* The end of an epoch: a timeline row, the tenants' census. */
static void end_epochs(struct tier_sim *s)
{
	if (s->app_ns < s->next_epoch)
		return;
	tier__sim_timeline_row(s, s->p.timeline);
	tier__sim_tenant_census(s);
	while (s->next_epoch <= s->app_ns)
		s->next_epoch += EPOCH_NS;
}

static void report_progress(struct tier_sim *s)
{
	const struct tier_sim_params *p = &s->p;

	if (p->progress && s->app_ns >= s->next_progress) {
		p->progress(p->progress_ctx, s->app_ns / s->duration_ns);
		s->next_progress += s->duration_ns / 100;
	}
}

/* Runs accesses until simulated time until_ns, the duration or the end of
 * the workload. Each batch: the oracle's placement at an epoch's start, the
 * accesses, their traffic into the latency model, the trackers' timed
 * work, the epoch's records. Returns 1 when there is more to run, 0 when
 * the run is over, -errno on failure. */
static int advance(struct tier_sim *s, double until_ns, struct tier_err *err)
{
	int ret;

	if (s->ended)
		return 0;
	if (until_ns > s->duration_ns)
		until_ns = s->duration_ns;
	while (s->app_ns < until_ns) {
		uint64_t now_us = (uint64_t)(s->app_ns / 1000);

		ret = tier__sim_oracle_step(s, now_us, err);
		if (ret)
			return ret;
		ret = run_batch(s, now_us, err);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			s->ended = true;	/* a trace ended */
			break;
		}
		if (!s->half.taken && s->app_ns >= s->duration_ns / 2) {
			s->half.taken = true;
			s->half.app_ns = s->app_ns;
			s->half.acc = s->accesses;
		}
		tier__sim_account_traffic(s);
		tier__sim_quanta(s);
		ret = tier__sim_trackers_tick(s, err);
		if (ret)
			return ret;
		if (s->oracle.enabled) {
			s->nr_obs = 0;
			s->damon.snap_n = 0;
		}
		end_epochs(s);
		report_progress(s);
	}
	if (s->app_ns >= s->duration_ns)
		s->ended = true;
	if (s->ended && s->accesses != s->ep.acc)
		tier__sim_timeline_row(s, s->p.timeline);
	return s->ended ? 0 : 1;
}

int tier_sim_advance(struct tier_sim *s, uint64_t until_us, struct tier_err *err)
{
	return advance(s, (double)until_us * 1e3, err);
}

uint64_t tier_sim_now_us(const struct tier_sim *s)
{
	return (uint64_t)(s->app_ns / 1000);
}

struct tier_env *tier_sim_env(struct tier_sim *s)
{
	return &s->env;
}

const struct tier_tracker_ops *tier_sim_tracker(struct tier_sim *s, void **priv)
{
	*priv = s;
	return s->oracle.enabled ? NULL : &tier__sim_tracker_ops;
}

const struct tier_policy_ops *tier_sim_policy(const struct tier_sim *s)
{
	return s->pol;
}

/* --- construction -------------------------------------------------------- */

void tier_sim_destroy(struct tier_sim *s)
{
	if (!s)
		return;
	if (s->wl && s->wl_priv)
		s->wl->destroy(s->wl_priv);
	tier_topology_release(&s->topo);
	free(s->page_node);
	free(s->node_gen);
	free(s->page_owner);
	free(s->flags);
	free(s->huge);
	free(s->tlb);
	free(s->unit_gen);
	free(s->unit_status);
	free(s->last_move_ms);
	free(s->prev_rank);
	free(s->obs);
	free(s->damon.regions);
	free(s->hint.chunk_unmap_ns);
	tier__sim_sd_release(s);
	tier__sim_oracle_release(s);
	free(s->buf);
	free(s);
}

/* Creates the workload s->wl (found by tier_sim_new), sized to the
 * machine unless it has a footprint of its own (then it comes first and
 * the machine figures are 0). */
static int setup_workload(struct tier_sim *s, const struct tier_sim_params *p,
			  const char *wl_arg, struct tier_err *err)
{
	struct tier_sim_workload_params wp;
	size_t i;
	int ret;

	memset(&wp, 0, sizeof(wp));
	wp.seed = p->seed;
	wp.duration_us = (uint64_t)(s->duration_ns / 1e3);
	wp.arg = wl_arg;
	if (!s->wl->own_footprint) {
		wp.fast_pages = tier__sim_tier_cap(s, 0);
		for (i = 0; i < s->nr_nodes; i++)
			wp.total_pages += s->cap_pages[i];
		wp.fast_bw_bytes_per_s = (uint64_t)(s->rd_bw[s->fast_node] * 1e9);
	}
	ret = s->wl->create(&wp, &s->wl_priv, err);
	if (ret)
		s->wl_priv = NULL;
	else if (s->wl->access_ns)
		s->access_ns = s->wl->access_ns(s->wl_priv);
	return ret;
}

/* The machine's cores and the application's (the cost model). */
static int setup_cores(struct tier_sim *s, const struct tier_sim_params *p,
		       struct tier_err *err)
{
	s->machine_cores = tier_sim_preset_cores(s->machine.preset);
	if (p->app_cores > s->machine_cores)
		return tier_err_set(err, -EINVAL,
				    "app cores %u: the machine '%s' has %u cores",
				    p->app_cores, s->p.machine ? s->p.machine : s->machine.preset->name,
				    s->machine_cores);
	s->app_cores = p->app_cores ? p->app_cores : s->machine_cores;
	return 0;
}

/* The policy p names and its trackers, or the oracle. */
static int setup_policy(struct tier_sim *s, const struct tier_sim_params *p,
			struct tier_err *err)
{
	if (!strcmp(p->policy, "oracle")) {
		snprintf(s->tracker_names, sizeof(s->tracker_names), "future");
		return tier__sim_oracle_init(s, err);
	}
	s->pol = tier_policy_find(p->policy);
	if (!s->pol)
		return tier_err_set(err, -ENOENT, "unknown policy '%s' (see 'tiersim list')",
				    p->policy);
	return tier__sim_trackers_parse(s, p->tracker ? p->tracker : s->pol->default_tracker, err);
}

/* What the policy sees: the pages, the groups, the ops over this
 * simulator. */
static void setup_env(struct tier_sim *s, const struct tier_sim_params *p)
{
	s->env.topo = &s->topo;
	s->env.nr_pages = s->nr_pages;
	s->env.page_node = s->page_node;
	s->env.node_gen = s->node_gen;
	s->env.page_owner = s->page_owner;
	if (p->groups) {
		s->groups = *p->groups;
		s->env.groups = &s->groups;
	}
	s->env.page_shift = PAGE_SHIFT;
	if (s->thp) {
		s->env.huge_shift = THP_SHIFT;
		s->env.page_huge = s->huge;
	}
	s->env.obs_kinds = tier__sim_tracker_ops.kinds;
	s->env.migrator = &tier__sim_migrator_ops;
	s->env.migrator_priv = s;
	s->env.mem = &tier__sim_mem_ops;
	s->env.mem_priv = s;
	s->env.clock = &sim_clock_ops;
	s->env.clock_priv = s;
	s->env.budget_bytes_per_s = p->budget_bytes_per_s ? p->budget_bytes_per_s
							   : TIER_SIM_DEFAULT_BUDGET;
	/* One budget for every policy: the bucket starts full. */
	s->budget.on = p->budget_every_policy && p->budget_bytes_per_s;
	s->budget.rate_bps = (double)s->env.budget_bytes_per_s;
	s->budget.tokens = s->budget.rate_bps;
	s->budget.last_ns = 0;
	s->env.max_batch = 1024;
	s->env.interval_us = s->pol && s->pol->interval_us ? s->pol->interval_us : 100000;
	s->damon.snapshot = s->pol && s->pol->damon_snapshot;
	s->env.work_units = &s->work_units;
	s->env.in_task = &s->in_task;
	s->env.cpu_slowdown = s->machine.cpu_slowdown;
}

int tier_sim_new(const struct tier_sim_params *p, struct tier_sim **out,
		 struct tier_err *err)
{
	struct tier_sim *s = calloc(1, sizeof(*s));
	const char *wl_arg = NULL;
	int ret;

	*out = NULL;
	if (!s)
		return tier_err_set(err, -ENOMEM, "out of memory");
	s->p = *p;
	s->duration_ns = (double)(p->duration_us ? p->duration_us : TIER_SIM_DEFAULT_DURATION_US) * 1e3;
	s->next_epoch = EPOCH_NS;
	s->next_progress = s->duration_ns / 100;
	tier_topology_init(&s->topo);
	tier_rng_seed(&s->rng, p->seed ^ UINT64_C(0x7469657273696d));	/* "tiersim" */
	s->buf = malloc(BATCH * sizeof(*s->buf));
	if (!s->buf) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	s->wl = tier_sim_workload_find(p->workload, &wl_arg);
	if (!s->wl) {
		ret = tier_err_set(err, -ENOENT, "unknown workload '%s' (see 'tiersim list')",
				   p->workload);
		goto out;
	}
	/* A trace has its size; a generated workload takes the machine's. */
	if (s->wl->own_footprint) {
		ret = setup_workload(s, p, wl_arg, err);
		if (ret)
			goto out;
		ret = tier__sim_machine_setup(s, p, s->wl->footprint_pages(s->wl_priv), err);
	} else {
		ret = tier__sim_machine_setup(s, p, 0, err);
		if (!ret)
			ret = setup_workload(s, p, wl_arg, err);
	}
	if (ret)
		goto out;
	s->thp = p->thp;
	ret = tier__sim_pages_setup(s, err);
	if (ret)
		goto out;
	ret = setup_cores(s, p, err);
	if (ret)
		goto out;
	ret = setup_policy(s, p, err);
	if (ret)
		goto out;
	ret = tier__sim_trackers_init(s, err);
	if (ret)
		goto out;
	s->nr_tenants = s->wl->nr_tenants ? s->wl->nr_tenants(s->wl_priv) : 1;
	if (s->nr_tenants > TIER_SIM_MAX_TENANTS)
		s->nr_tenants = TIER_SIM_MAX_TENANTS;
	setup_env(s, p);
	if (p->timeline)
		tier__sim_timeline_header(s, p->timeline);
	*out = s;
	return 0;
out:
	tier_sim_destroy(s);
	return ret;
}

/* --- results ------------------------------------------------------------- */

/* Bytes moved per tier pair, and in sum, up and down. */
static void result_moves(const struct tier_sim *s, struct tier_sim_result *r)
{
	size_t i, j;

	for (i = 0; i < s->nr_tiers; i++)
		for (j = 0; j < s->nr_tiers; j++) {
			uint64_t b = s->moved[i][j] * PAGE_BYTES;

			r->moved_bytes[i][j] = b;
			r->migrated_bytes += b;
			if (j < i)
				r->promoted_bytes += b;
			else if (j > i)
				r->demoted_bytes += b;
		}
}

static void result_tenants(const struct tier_sim *s, struct tier_sim_result *r)
{
	uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	size_t i, j;

	r->nr_tenants = s->nr_tenants;
	tier__sim_tenant_pages(s, pages);
	for (i = 0; i < s->nr_tenants; i++) {
		struct tier_sim_tenant_result *t = &r->tenant[i];

		t->accesses = s->tenant_acc[i];
		t->amat_ns = s->tenant_acc[i] ? s->tenant_ns[i] / (double)s->tenant_acc[i] : 0;
		for (j = 0; j < s->nr_tiers; j++) {
			t->pages[j] = pages[i][j];
			t->peak_pages[j] = s->tenant_peak[i][j];
		}
	}
}

/* The cost model: each CPU second of tiering work is charged to the core
 * it runs on. Work in the application's threads (faults, shootdowns,
 * task-context scans and moves) is its time. Kernel threads and daemons
 * run on the spare cores (the machine's less the application's) as far as
 * those have room over the run, the rest on the application's cores in
 * proportion. The machine runs app_cores streams like the simulated one,
 * each with as much tiering work as the simulation sees, so per stream:
 * spare room is k = (machine - app) / app times the wall time T, and the
 * daemon CPU D that does not fit adds to T:
 *   on_app = max(0, D - k T), T = own + on_app
 *   => on_app = (D - k own) / (1 + k) when D > k own.
 * E.g. 2 cores, the application on 1 (k = 1): a daemon's 0.3 s in a 10 s
 * run fits the spare core and costs nothing; on both cores (k = 0) it
 * adds 0.3 s, as 0.3 s of faults would. */
static void result_costs(const struct tier_sim *s, struct tier_sim_result *r)
{
	double base = s->app_ns - s->cost.stall_ns;
	double stall = s->cost.stall_ns + s->cost.task_ns + s->cost.task_cpu_ns;
	double daemon = s->policy_cpu_ns + (double)s->work_units * s->cpu_ns.work_unit -
			s->cost.task_cpu_ns;
	double k = s->app_cores ? (double)(s->machine_cores - s->app_cores) / s->app_cores : 0;
	double own = base + stall, on_app = 0;

	if (daemon > k * own)
		on_app = (daemon - k * own) / (1 + k);
	r->machine_cores = s->machine_cores;
	r->app_cores = s->app_cores;
	r->access_s = base / 1e9;
	r->app_stall_s = stall / 1e9;
	r->daemon_cpu_s = daemon / 1e9;
	r->daemon_on_app_s = on_app / 1e9;
	r->slowdown = base > 0 ? (own + on_app) / base : 1;
}

void tier_sim_result(struct tier_sim *s, size_t policy_metadata_bytes,
		     struct tier_sim_result *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->machine, sizeof(r->machine), "%s",
		 s->p.machine ? s->p.machine : s->machine.preset->name);
	snprintf(r->workload, sizeof(r->workload), "%s", s->p.workload);
	snprintf(r->policy, sizeof(r->policy), "%s", s->p.policy);
	snprintf(r->tracker, sizeof(r->tracker), "%s", s->tracker_names);
	r->accesses = s->accesses;
	r->footprint_pages = s->nr_pages;
	r->fast_tier_pages = tier__sim_tier_cap(s, 0);
	r->amat_ns = s->accesses ? s->app_ns / (double)s->accesses : 0;
	if (s->half.taken && s->accesses > s->half.acc)
		r->amat_second_half_ns = (s->app_ns - s->half.app_ns) /
					 (double)(s->accesses - s->half.acc);
	r->fast_access_ratio = s->accesses ? (double)s->fast_accesses / (double)s->accesses : 0;
	r->nr_tiers = s->nr_tiers;
	result_moves(s, r);
	r->pingpong_pages = s->pingpong;
	r->policy_cpu_s = (s->policy_cpu_ns + (double)s->work_units * s->cpu_ns.work_unit) / 1e9;
	r->policy_work_units = s->work_units;
	r->move_page_ns = s->cpu_ns.migrate_page;
	r->sim_time_s = s->app_ns / 1e9;
	r->metadata_bytes = policy_metadata_bytes +
			    s->damon.nr_regions * sizeof(*s->damon.regions);
	r->thp = s->thp;
	r->split_units = s->splits;
	r->tlb_misses = s->tlb_misses;
	result_costs(s, r);
	result_tenants(s, r);
}

/* CPU seconds of the calling thread (what the loop's steps cost this
 * host, as against the modelled policy_cpu_s). */
static double thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A paced policy's share of a core for its steps, thousandths (the
 * daemon's first split, tier_linux_tracker_budget(): max_cpu_percent in
 * equal parts between the steps, a kdamond, and the soft-dirty rounds'
 * thread); 0: not paced. */
static unsigned step_share_milli(const struct tier_sim *s, const struct tier_sim_params *p)
{
	unsigned pct = p->max_cpu_percent ? p->max_cpu_percent : TIER_SIM_DEFAULT_MAX_CPU_PERCENT;
	unsigned parts = 1u + !!(s->trackers & TRK_DAMON) + !!(s->trackers & TRK_SDROUNDS);

	if (!s->pol || !s->pol->paced)
		return 0;
	return pct * 10 / parts;
}

/* The tiering CPU modelled so far, ns: trackers', mover's, the policy's
 * work. */
static double modelled_cpu_ns(const struct tier_sim *s)
{
	return s->policy_cpu_ns + (double)s->work_units * s->cpu_ns.work_unit;
}

int tier_sim_run(const struct tier_sim_params *p, struct tier_sim_result *r,
		 struct tier_err *err)
{
	struct tier_loop loop;
	const struct tier_tracker_ops *trk;
	struct tier_pace pace;
	struct tier_sim *s;
	void *trk_priv;
	uint64_t at, next_step, next_resume = 0, steps = 0, resumes = 0;
	double step_cpu_s = 0;
	unsigned share;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(&pace, 0, sizeof(pace));
	ret = tier_sim_new(p, &s, err);
	if (ret)
		return ret;
	memset(&loop, 0, sizeof(loop));
	trk = tier_sim_tracker(s, &trk_priv);
	if (s->pol) {
		ret = tier_loop_init(&loop, &s->env, s->pol, trk, trk_priv, err);
		if (ret)
			goto out;
	}
	share = step_share_milli(s, p);
	at = next_step = s->env.interval_us;
	while ((ret = tier_sim_advance(s, at, err)) > 0) {
		/* A paced policy (core/pace.h): its steps spaced by their
		 * modelled CPU, which runs beside the application (the
		 * daemon's thread) and takes no simulated time; between them,
		 * resumes of the moves the budget held back. */
		double cpu0 = modelled_cpu_ns(s), move0 = s->cost.move_cpu_ns;
		uint64_t cpu_us, move_us, paced;

		if (!s->pol) {
			at += s->env.interval_us;
			continue;
		}
		if (next_resume && at == next_resume) {
			ret = tier_loop_resume(&loop, err);
			if (ret)
				goto out;
			resumes++;
			cpu_us = (uint64_t)((modelled_cpu_ns(s) - cpu0) / 1e3);
			paced = tier_pace_resume(&pace, at + cpu_us, cpu_us, share);
			if (paced > next_step)
				next_step = paced;
		} else {
			double t0 = p->step_cpu ? thread_cpu_s() : 0;

			ret = tier_loop_step(&loop, err);
			if (p->step_cpu)
				step_cpu_s += thread_cpu_s() - t0;
			steps++;
			if (ret)
				goto out;
			cpu_us = (uint64_t)((modelled_cpu_ns(s) - cpu0) / 1e3);
			move_us = (uint64_t)((s->cost.move_cpu_ns - move0) / 1e3);
			next_step = at + s->env.interval_us;
			if (share) {
				paced = tier_pace_step(&pace, at, at + cpu_us, cpu_us, move_us, share);
				if (paced > next_step)
					next_step = paced;
			}
		}
		next_resume = 0;
		if (share && tier_loop_held_back(&loop) && tier_pace_may_resume(&pace, share)) {
			uint64_t gap = s->env.interval_us;

			if (gap < TIER_PACE_RESUME_GAP_US)
				gap = TIER_PACE_RESUME_GAP_US;
			if (at + gap < next_step)
				next_resume = at + gap;
		}
		at = next_resume ? next_resume : next_step;
	}
	if (ret)
		goto out;
	tier_sim_result(s, s->pol && s->pol->metadata_bytes ?
			   s->pol->metadata_bytes(loop.policy_priv) : 0, r);
	r->policy_steps = steps;
	r->policy_resumes = resumes;
	r->step_cpu = p->step_cpu;
	r->policy_step_cpu_s = step_cpu_s;
out:
	tier_loop_release(&loop);
	tier_sim_destroy(s);
	return ret;
}
