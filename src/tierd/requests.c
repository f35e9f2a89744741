/* requests.c - what the control socket's requests do: each is checked
 * first on the control thread (its arguments, and whether the peer may ask
 * it), then, when it needs the world, run under the world lock, by
 * whichever thread holds it (control.c, step.c). The figures status and
 * cgroups report are rendered under the world lock at the end of every
 * step and published for the control thread to answer from. */
#include "backend/linux/procs.h"
#include "tierd/internal.h"
#include "tierd/procs.h"
#include "version.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* --- published figures ------------------------------------------------------ */

double tierd_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* tierd's CPU by thread (tier_linux_own_threads_cpu()), threads of one
 * name summed: at most 32 names. */
struct thread_cpu {
	struct {
		char name[32];
		double s;
	} v[32];
	size_t n;
};

static void thread_cpu_add(void *arg, const char *name, double seconds)
{
	struct thread_cpu *tc = arg;
	size_t i;

	for (i = 0; i < tc->n && strcmp(tc->v[i].name, name); i++)
		;
	if (i == tc->n) {
		if (tc->n == sizeof(tc->v) / sizeof(tc->v[0]))
			return;
		snprintf(tc->v[i].name, sizeof(tc->v[i].name), "%s", name);
		tc->v[tc->n++].s = 0;
	}
	tc->v[i].s += seconds;
}

/* NULL where the threads cannot be listed. */
static struct json_object *thread_cpu_json(void)
{
	struct thread_cpu tc = { .n = 0 };
	struct json_object *o;
	size_t i;

	if (tier_linux_own_threads_cpu(thread_cpu_add, &tc) || !(o = json_object_new_object()))
		return NULL;
	for (i = 0; i < tc.n; i++)
		json_object_object_add(o, tc.v[i].name, json_object_new_double(tc.v[i].s));
	return o;
}

/* The figures of status that only the world knows (world lock held). */
/* The step thread's CPU by part: where the world measures its parts,
 * "policy" is the rest (the policy's decisions, the heatmaps, the
 * figures). Cumulative seconds. */
static struct json_object *step_cpu_json(const struct tierd *d, const struct tier_world_stats *st)
{
	struct json_object *o = json_object_new_object();
	double total = (double)d->step_cpu_us / 1e6, rest = total;

	json_object_object_add(o, "total", json_object_new_double(total));
	if (st->has_tracker_cpu) {
		json_object_object_add(o, "tracker", json_object_new_double(st->tracker_cpu_seconds));
		rest -= st->tracker_cpu_seconds;
	}
	if (st->has_step_cpu) {
		json_object_object_add(o, "maps", json_object_new_double(st->maps_cpu_seconds));
		json_object_object_add(o, "placement_check",
				       json_object_new_double(st->verify_cpu_seconds));
		json_object_object_add(o, "node_query", json_object_new_double(st->query_cpu_seconds));
		json_object_object_add(o, "moves", json_object_new_double(st->move_cpu_seconds));
		rest -= st->maps_cpu_seconds + st->verify_cpu_seconds + st->query_cpu_seconds +
			st->move_cpu_seconds;
	}
	if (st->has_tracker_cpu || st->has_step_cpu)
		json_object_object_add(o, "policy", json_object_new_double(rest > 0 ? rest : 0));
	if (st->has_step_cpu) {
		json_object_object_add(o, "node_query_pagemap_pages",
				       json_object_new_uint64(st->pagemap_pages));
		json_object_object_add(o, "node_query_move_pages_pages",
				       json_object_new_uint64(st->queried_pages));
	}
	return o;
}

/* kd_s: the kdamonds' CPU seconds, or -1 where the world has none. */
static struct json_object *status_figures(struct tierd *d, double *kd_s)
{
	const struct tier_env *env = d->be->env;
	const struct tier_topology *topo = d->be->topo;
	struct json_object *o = json_object_new_object(), *tiers = json_object_new_array();
	struct tier_world_stats st;
	uint64_t per_tier[TIER_MAX_TIERS];
	unsigned step_share = tierd_step_share_milli(d);
	size_t r, k;
	size_t meta = 0;

	/* what changed since the last publish, not every page */
	tier_tiercount_read(&d->tiercount, env, topo, per_tier, NULL);
	for (r = 0; r < topo->nr_tiers; r++) {
		struct json_object *t = json_object_new_object(), *nodes = json_object_new_array();
		uint64_t total, free;

		for (k = 0; k < topo->tiers[r].nr_nodes; k++)
			json_object_array_add(nodes, json_object_new_int(topo->tiers[r].nodes[k]));
		json_object_object_add(t, "rank", json_object_new_int((int)r));
		json_object_object_add(t, "nodes", nodes);
		json_object_object_add(t, "managed_bytes",
				       json_object_new_uint64(r < TIER_MAX_TIERS ?
								      per_tier[r] << env->page_shift : 0));
		json_object_object_add(t, "capacity_bytes",
				       json_object_new_uint64(tierd_tier_capacity(topo, r)));
		/* the room the policy fills from: Linux, the nodes' MemFree
		 * less the kernel's reserve (space_mem.c) */
		if (!tier_tier_pages(env, (int)r, &total, &free))
			json_object_object_add(t, "free_bytes",
					       json_object_new_uint64(free << env->page_shift));
		json_object_array_add(tiers, t);
	}
	d->be->stats(d->be, &st);
	if (d->loop_ready && d->loop.policy->metadata_bytes)
		meta = d->loop.policy->metadata_bytes(d->loop.policy_priv);
	json_object_object_add(o, "machine", json_object_new_string(d->be->name));
	json_object_object_add(o, "tiers", tiers);
	json_object_object_add(o, "managed_bytes",
			       json_object_new_uint64(env->nr_pages << env->page_shift));
	json_object_object_add(o, "promoted_bytes", json_object_new_uint64(st.promoted_bytes));
	json_object_object_add(o, "demoted_bytes", json_object_new_uint64(st.demoted_bytes));
	json_object_object_add(o, "failed_moves", json_object_new_uint64(st.failed_moves));
	json_object_object_add(o, "processes", json_object_new_uint64(st.processes));
	json_object_object_add(o, "huge_pages", json_object_new_uint64(st.huge_pages));
	json_object_object_add(o, "split_huge_pages", json_object_new_uint64(st.split_huge_pages));
	json_object_object_add(o, "rechecked_pages", json_object_new_uint64(st.rechecked_pages));
	json_object_object_add(o, "placement_checks", json_object_new_uint64(st.placement_checks));
	json_object_object_add(o, "placement_checks_skipped",
			       json_object_new_uint64(st.placement_checks_skipped));
	if (st.refresh_interval_ms > 0)
		json_object_object_add(o, "refresh_interval_ms",
				       json_object_new_double(st.refresh_interval_ms));
	json_object_object_add(o, "tracker", json_object_new_string(d->be->tracker_name));
	json_object_object_add(o, "policy", json_object_new_string(d->cfg.policy));
	json_object_object_add(o, "version", json_object_new_string(TIER_BUILD_VERSION));
	*kd_s = st.has_kthread_cpu ? st.kthread_cpu_seconds : -1;
	if (st.has_kthread_cpu)
		json_object_object_add(o, "kdamond_cpu_seconds",
				       json_object_new_double(st.kthread_cpu_seconds));
	json_object_object_add(o, "step_cpu_seconds", step_cpu_json(d, &st));
	json_object_object_add(o, "move_page_ns", json_object_new_double(st.move_page_ns));
	if (st.tracker_period_us) {
		json_object_object_add(o, "tracker_workload_faults",
				       json_object_new_uint64(st.tracker_faults));
		json_object_object_add(o, "tracker_workload_fault_seconds",
				       json_object_new_double(st.tracker_fault_seconds));
		json_object_object_add(o, "tracker_fault_ns",
				       json_object_new_uint64(st.tracker_fault_ns));
		json_object_object_add(o, "tracker_fault_ns_seen",
				       json_object_new_uint64(st.tracker_fault_ns_seen));
		json_object_object_add(o, "tracker_period_ms",
				       json_object_new_uint64(st.tracker_period_us / 1000));
		json_object_object_add(o, "tracker_rounds", json_object_new_uint64(st.tracker_rounds));
		json_object_object_add(o, "tracker_dropped",
				       json_object_new_uint64(st.tracker_dropped));
		json_object_object_add(o, "tracker_scan_reads",
				       json_object_new_uint64(st.tracker_scan_reads));
		json_object_object_add(o, "tracker_restarts",
				       json_object_new_uint64(st.tracker_restarts));
		{
			struct json_object *own = json_object_new_array(), *wall = json_object_new_array();
			struct json_object *pages = json_object_new_array(), *ran = json_object_new_array();
			unsigned j;

			for (j = 0; j < st.tracker_nr_reads && j < 8; j++) {
				json_object_array_add(own, json_object_new_double(st.tracker_read_us[j] / 1e3));
				json_object_array_add(wall,
						      json_object_new_double(st.tracker_read_wall_us[j] / 1e3));
				json_object_array_add(pages, json_object_new_uint64(st.tracker_read_pages[j]));
				json_object_array_add(ran, json_object_new_double(st.tracker_read_ran_us[j] / 1e3));
			}
			json_object_object_add(o, "tracker_read_ms", own);
			json_object_object_add(o, "tracker_read_wall_ms", wall);
			json_object_object_add(o, "tracker_read_pages", pages);
			json_object_object_add(o, "tracker_read_ran_ms", ran);
		}
		if (st.tracker_writer_time)
			json_object_object_add(o, "tracker_writer_time",
					       json_object_new_string(st.tracker_writer_time));
	} else if (st.tracker_faults || st.tracker_dropped) {
		/* the hint-fault tracker: no rounds, the faults it read */
		json_object_object_add(o, "tracker_workload_faults",
				       json_object_new_uint64(st.tracker_faults));
		json_object_object_add(o, "tracker_dropped",
				       json_object_new_uint64(st.tracker_dropped));
	}
	json_object_object_add(o, "metadata_bytes",
			       json_object_new_uint64(meta + st.metadata_bytes));
	json_object_object_add(o, "heatmap_bytes", json_object_new_uint64(tierd_heat_bytes(&d->heat)));
	json_object_object_add(o, "steps", json_object_new_uint64(d->steps));
	json_object_object_add(o, "resumes", json_object_new_uint64(d->resumes));
	json_object_object_add(o, "steps_without_news", json_object_new_uint64(d->quiet_steps));
	json_object_object_add(o, "interval_ms", json_object_new_uint64(d->cfg.interval_ms));
	json_object_object_add(o, "max_cpu_percent", json_object_new_uint64(d->cfg.max_cpu_percent));
	if (step_share)
		json_object_object_add(o, "step_cpu_percent",
				       json_object_new_double(step_share / 10.0));
	json_object_object_add(o, "budget_bytes_per_s",
			       json_object_new_uint64(d->cfg.budget_bytes_per_s));
	if (st.has_sim_figures) {
		json_object_object_add(o, "amat_ns", json_object_new_double(st.amat_ns));
		json_object_object_add(o, "fast_access_ratio",
				       json_object_new_double(st.fast_access_ratio));
	}
	tierd_devices_status(d, o);
	return o;
}

static char *render(struct json_object *o)
{
	char *s = o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;

	json_object_put(o);
	return s;
}

void tierd_publish(struct tierd *d)
{
	double kd_s = -1;
	char *status = render(status_figures(d, &kd_s));
	char *cgroups = render(tierd_cgroups_json(d->be, &d->rules));
	uint64_t now = tier_linux_now_us();

	pthread_mutex_lock(&d->pub.lock);
	if (status) {
		free(d->pub.status);
		d->pub.status = status;
		d->pub.status_us = now;
		d->pub.kdamond_cpu_s = kd_s;
	}
	if (cgroups) {
		free(d->pub.cgroups);
		d->pub.cgroups = cgroups;
	}
	pthread_mutex_unlock(&d->pub.lock);
	if (!status || !cgroups)
		tierd_log(&d->log, LOG_DEBUG, "status: out of memory; the last figures stay");
}

void tierd_publish_release(struct tierd *d)
{
	free(d->pub.status);
	free(d->pub.cgroups);
	d->pub.status = d->pub.cgroups = NULL;
}

/* A published JSON text (an object's) with the members of the object
 * `more` spliced in before its closing brace. NULL out of memory. */
static char *splice(const char *text, struct json_object *more)
{
	const char *m = json_object_to_json_string_ext(more, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(text), k = m ? strlen(m) : 0;
	char *s;

	if (!m || n < 2 || text[n - 1] != '}' || k < 2)
		return NULL;
	if (!(s = malloc(n + k)))
		return NULL;
	memcpy(s, text, n - 1);
	if (k > 2 && n > 2) {
		s[n - 1] = ',';
		memcpy(s + n, m + 1, k);	/* its members, brace and end */
	} else if (k > 2) {
		memcpy(s + n - 1, m + 1, k);
	} else {
		s[n - 1] = '}';
		s[n] = '\0';
	}
	return s;
}

/* status: the last step's figures, and what the control thread can read
 * now: uptime, CPU, whether a step runs and how old the figures are. The
 * published text is answered as it is, the live figures spliced in: no
 * parse of it and no second rendering at each request (under QEMU's
 * emulation a request from tierctl cost the control thread 7.0 ms of CPU
 * that way, 5.5 ms now, 2.6 of them the connection's:
 * bench/results/guest-status-cost.txt). */
char *tierd_status_line(struct tierd *d)
{
	uint64_t at_us, now = tier_linux_now_us(), step_us;
	struct json_object *o = json_object_new_object(), *v;
	double cpu = tierd_cpu_seconds(), kd_s;
	char *text, *line = NULL, *res;

	if (!o)
		return NULL;
	pthread_mutex_lock(&d->pub.lock);
	text = d->pub.status ? strdup(d->pub.status) : NULL;
	at_us = d->pub.status_us;
	kd_s = d->pub.kdamond_cpu_s;
	pthread_mutex_unlock(&d->pub.lock);
	json_object_object_add(o, "cpu_seconds", json_object_new_double(cpu));
	v = thread_cpu_json();
	if (v)
		json_object_object_add(o, "thread_cpu_seconds", v);
	if (kd_s >= 0)
		json_object_object_add(o, "system_cpu_seconds", json_object_new_double(cpu + kd_s));
	json_object_object_add(o, "uptime_seconds",
			       json_object_new_double((double)(now - d->start_us) / 1e6));
	json_object_object_add(o, "figures_age_ms",
			       json_object_new_uint64(now > at_us ? (now - at_us) / 1000 : 0));
	step_us = atomic_load(&d->step_started_us);
	json_object_object_add(o, "step_running_ms",
			       json_object_new_uint64(step_us && now > step_us ?
							      (now - step_us) / 1000 : 0));
	if (text && (res = splice(text, o))) {
		line = tier_response_ok_text(res);
		free(res);
	}
	free(text);
	json_object_put(o);
	return line;
}

char *tierd_cgroups_line(struct tierd *d)
{
	char *line = NULL;

	pthread_mutex_lock(&d->pub.lock);
	if (d->pub.cgroups)
		line = tier_response_ok_text(d->pub.cgroups);
	pthread_mutex_unlock(&d->pub.lock);
	return line;
}

/* --- checks on the control thread ------------------------------------------ */

static bool get_u64_arg(struct json_object *args, const char *key, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_uint64(v);
	return json_object_get_int64(v) >= 0 || *out > INT64_MAX;
}

/* A user may advise or look into only its own processes (the owner of
 * /proc/PID); root any. */
static int may_touch(const char *what, uid_t uid, uint64_t pid, struct tier_err *err)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%llu", (unsigned long long)pid);
	if (stat(path, &st))
		return tier_err_set(err, -ESRCH, "%s: no process %llu", what, (unsigned long long)pid);
	if (uid != 0 && uid != st.st_uid)
		return tier_err_set(err, -EPERM, "%s: uid %u may not %s process %llu (owned by uid %u)",
				    what, (unsigned)uid, !strcmp(what, "hint") ? "advise" : "inspect",
				    (unsigned long long)pid, (unsigned)st.st_uid);
	return 0;
}

/* explain: {"pid":P,"addr":A,"len":L}. */
static int check_explain(struct tierd_job *j, struct tier_err *err)
{
	struct json_object *v;

	j->len = 4096;
	if (!get_u64_arg(j->req.args, "pid", &j->pid) || !j->pid || j->pid > INT32_MAX)
		return tier_err_set(err, -EINVAL, "explain: 'pid' must be a process id");
	if (!get_u64_arg(j->req.args, "addr", &j->addr) ||
	    (json_object_object_get_ex(j->req.args, "len", &v) &&
	     !get_u64_arg(j->req.args, "len", &j->len)))
		return tier_err_set(err, -EINVAL, "explain: 'addr' and 'len' must be unsigned integers");
	return may_touch("explain", j->uid, j->pid, err);
}

/* heatmap: {"pid":P,"bins":N,"slices":N,"start":A,"end":A} (all but pid
 * optional). */
static int check_heatmap(struct tierd_job *j, struct tier_err *err)
{
	static const struct {
		const char *key;
		uint64_t min, max;
	} limits[] = {
		{ "bins", 1, TIER_HEATMAP_BINS },
		{ "slices", 1, TIER_HEATMAP_SLICES },
		{ "start", 0, UINT64_MAX },
		{ "end", 1, UINT64_MAX },
	};
	uint64_t val[4] = { TIERD_HEAT_DEFAULT_BINS, TIER_HEATMAP_SLICES, 0, UINT64_MAX };
	size_t i;

	json_object_object_foreach(j->req.args, key, v) {
		(void)v;
		for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
			if (!strcmp(key, limits[i].key))
				break;
		if (strcmp(key, "pid") && i == sizeof(limits) / sizeof(limits[0]))
			return tier_err_set(err, -EINVAL, "heatmap: unknown argument '%.32s'", key);
	}
	if (!get_u64_arg(j->req.args, "pid", &j->pid) || !j->pid || j->pid > INT32_MAX)
		return tier_err_set(err, -EINVAL, "heatmap: 'pid' must be a process id");
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct json_object *jv;

		if (!json_object_object_get_ex(j->req.args, limits[i].key, &jv))
			continue;
		if (!get_u64_arg(j->req.args, limits[i].key, &val[i]) || val[i] < limits[i].min ||
		    val[i] > limits[i].max)
			return tier_err_set(err, -EINVAL, "heatmap: '%s' must be an integer in %llu..%llu",
					    limits[i].key, (unsigned long long)limits[i].min,
					    (unsigned long long)limits[i].max);
	}
	j->heat = (struct tierd_heat_query){ (pid_t)j->pid, (size_t)val[0], (size_t)val[1],
					     val[2], val[3] };
	if (j->heat.end <= j->heat.start)
		return tier_err_set(err, -EINVAL, "heatmap: 'end' must be above 'start'");
	return may_touch("heatmap", j->uid, j->pid, err);
}

/* hint: {"pid":P,"addr":A,"len":L,"advice":"hot"}. */
static int check_hint(struct tierd_job *j, struct tier_err *err)
{
	struct json_object *v;

	if (!get_u64_arg(j->req.args, "pid", &j->pid) || !j->pid || j->pid > INT32_MAX)
		return tier_err_set(err, -EINVAL, "hint: 'pid' must be a process id");
	if (!get_u64_arg(j->req.args, "addr", &j->addr) || !get_u64_arg(j->req.args, "len", &j->len))
		return tier_err_set(err, -EINVAL, "hint: 'addr' and 'len' must be unsigned integers");
	if (!j->len || j->addr + j->len < j->addr)
		return tier_err_set(err, -EINVAL, "hint: empty or wrapping range");
	if (!json_object_object_get_ex(j->req.args, "advice", &v) ||
	    !json_object_is_type(v, json_type_string))
		return tier_err_set(err, -EINVAL, "hint: 'advice' must be a string");
	j->advice = tier_proto_advice_parse(json_object_get_string(v));
	if (j->advice < 0 || j->advice >= TIER_HINT__COUNT)
		return tier_err_set(err, -EINVAL, "hint: unknown advice '%.32s' (" TIER_PROTO_ADVICES ")",
				    json_object_get_string(v));
	return may_touch("hint", j->uid, j->pid, err);
}

int tierd_job_check(struct tierd *d, struct tierd_job *j, struct tier_err *err)
{
	switch (j->req.cmd) {
	case TIER_CMD_EXPLAIN:
		return check_explain(j, err);
	case TIER_CMD_HEATMAP:
		return check_heatmap(j, err);
	case TIER_CMD_HINT: {
		int ret = check_hint(j, err);

		if (!ret && !d->hint_supported)
			ret = tier_err_set(err, -EOPNOTSUPP, "hint: %s has no processes to advise",
					   d->machine_name);
		return ret;
	}
	default:
		return 0;
	}
}

/* --- runs under the world lock --------------------------------------------- */

/* cgroup-set: changes one group's run-time rule (root only). */
static int run_cgroup_set(struct tierd *d, struct json_object *args, struct tier_err *err)
{
	struct tier_group_rule rule;
	struct tierd_rules saved = { NULL, 0 };
	char *path = NULL;
	bool clear;
	size_t i;
	int ret;

	ret = tierd_cgroup_set_args(args, &d->rules, &path, &rule, &clear, err);
	if (ret)
		return ret;
	/* Keep the old run-time rules to put back if the backend refuses. */
	for (i = 0; i < d->rt_rules.n && !ret; i++)
		ret = tierd_rules_put(&saved, d->rt_rules.r[i].path, &d->rt_rules.r[i].rule);
	if (!ret) {
		if (clear) {
			ret = tierd_rules_del(&d->rt_rules, path);
			if (ret == -ENOENT)
				tier_err_set(err, ret,
					     "cgroup-set: %s has no rule set with tierctl (a rule of the config file is changed there)",
					     path);
		} else {
			ret = tierd_rules_put(&d->rt_rules, path, &rule);
			if (ret)
				tier_err_set(err, ret, "cgroup-set: %s", ret == -E2BIG ?
					     "too many control groups" : strerror(-ret));
		}
	} else {
		tier_err_set(err, ret, "out of memory");
	}
	if (!ret)
		ret = tierd_cgroups_apply(d, &d->cfg, true, err);
	if (ret) {
		tierd_rules_release(&d->rt_rules);
		d->rt_rules = saved;
	} else {
		tierd_rules_release(&saved);
		tierd_log(&d->log, LOG_INFO, "cgroup %s: rule %s", path, clear ? "cleared" : "set");
	}
	free(path);
	return ret;
}

bool tierd_job_reads_only(const struct tierd_job *j)
{
	return j->req.cmd == TIER_CMD_EXPLAIN || j->req.cmd == TIER_CMD_HEATMAP ||
	       j->req.cmd == TIER_CMD_PROCESSES;
}

void tierd_job_run(struct tierd *d, struct tierd_job *j)
{
	struct tier_err err = { "" };
	struct json_object *res = NULL;
	bool changed = false;
	int ret = 0;

	switch (j->req.cmd) {
	case TIER_CMD_RELOAD:
		ret = tierd_reload(d, &err);
		changed = !ret;
		break;
	case TIER_CMD_CGROUP_SET:
		ret = run_cgroup_set(d, j->req.args, &err);
		changed = !ret;
		break;
	case TIER_CMD_HINT:
		ret = d->be->hint(d->be, (pid_t)j->pid, j->addr, j->len, j->advice, &err);
		if (ret && j->slot < 0)	/* answered already */
			tierd_log(&d->log, LOG_WARNING, "%s", err.msg);
		break;
	case TIER_CMD_EXPLAIN:
		res = tierd_explain_json(d->be, &d->loop, (pid_t)j->pid, j->addr, j->len, &ret, &err);
		break;
	case TIER_CMD_PROCESSES:
		res = tierd_procs_json(d->be, &d->loop, j->req.args, &ret, &err);
		break;
	case TIER_CMD_NODE_TIER:
		ret = tierd_node_tier(d, j->req.args, &err);
		changed = !ret;
		break;
	case TIER_CMD_DRAIN:
		res = tierd_drain(d, j->req.args, &ret, &err);
		changed = !ret;
		break;
	case TIER_CMD_HEATMAP:
		res = tierd_heat_json(&d->heat, &j->heat,
				      d->be->env->clock->now_us(d->be->env->clock_priv), &ret, &err);
		/* "Not managed" names the managed pids, other users' among
		 * them: root's to read. */
		if (ret == -ESRCH && j->uid != 0)
			tier_err_set(&err, -ESRCH,
				     "heatmap: process %llu has no heatmap (not managed by tierd)",
				     (unsigned long long)j->pid);
		break;
	default:
		ret = tier_err_set(&err, -EPROTO, "%s: not a request of the world",
				   tier_cmds[j->req.cmd].name);
		break;
	}
	if (changed)
		tierd_publish(d);
	if (j->slot >= 0)
		j->response = ret ? tier_response_error(-ret, err.msg) : tier_response_ok(res);
	else
		json_object_put(res);
}

void tierd_job_free(struct tierd_job *j)
{
	tier_request_release(&j->req);
	free(j->response);
	free(j);
}
