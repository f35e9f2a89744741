/* metrics.c - tierd's Prometheus metrics endpoint: the exposition text
 * (text format 0.0.4) rendered by the daemon's loop, served by
 * libmicrohttpd's own thread. Every metric is listed in docs/metrics.md;
 * keep the two in step. */
#include "tierd/metrics.h"

#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/listen_addr.h"
#include "tierd/internal.h"

/* Upper bounds of the step latency histogram, in seconds. */
static const double step_buckets_s[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
};
#define NR_STEP_BUCKETS (sizeof(step_buckets_s) / sizeof(step_buckets_s[0]))

struct tierd_metrics {
	char addr[256];			/* as configured */
	int lfd;			/* ours until libmicrohttpd takes it */
	struct MHD_Daemon *mhd;
	/* The text served: written by the loop, read by the HTTP thread,
	 * both under lock. */
	pthread_mutex_t lock;
	char *text;
	size_t len;
	/* The loop's own: */
	uint64_t step_hits[NR_STEP_BUCKETS + 1];	/* per bucket, the last +Inf */
	uint64_t step_count;
	double step_sum_s;
	uint64_t step_failures;
	uint64_t rendered_us;		/* when the text served was rendered */
};

/* --- the HTTP thread ------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     size_t len, bool copy, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8"
						      : "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET (or HEAD) /metrics: the last text published, copied under the lock
 * (a few KiB; the loop may publish the next one meanwhile). */
static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **con_cls)
{
	static const char not_found[] = "not found: tierd's metrics are at /metrics\n";
	static const char not_allowed[] = "only GET and HEAD\n";
	struct tierd_metrics *m = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, sizeof(not_allowed) - 1,
			     false, "GET, HEAD");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1, false, NULL);
	pthread_mutex_lock(&m->lock);
	ret = reply(c, MHD_HTTP_OK, m->text, m->len, true, NULL);
	pthread_mutex_unlock(&m->lock);
	return ret;
}

/* --- rendering (the loop) ------------------------------------------------- */

/* A label value: backslash, double quote and newline escaped. */
static void put_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_info(const struct tierd *d, FILE *f)
{
	family(f, "tierd_info", "gauge",
	       "The machine tierd manages, its policy and its tracker; always 1.");
	fputs("tierd_info{machine=\"", f);
	put_value(f, d->be->name);
	fputs("\",policy=\"", f);
	put_value(f, d->cfg.policy);
	fputs("\",tracker=\"", f);
	put_value(f, d->be->tracker_name);
	fputs("\"} 1\n", f);
}

/* Managed bytes and capacity per node and per tier (the counts status
 * keeps: what changed since the last reading is read, core/tiercount.h). */
static void render_placement(struct tierd *d, FILE *f)
{
	const struct tier_env *env = d->be->env;
	const struct tier_topology *topo = d->be->topo;
	uint64_t per_node[TIER_MAX_NODES], per_tier[TIER_MAX_TIERS];
	size_t r, k;

	tier_tiercount_read(&d->tiercount, env, topo, per_tier, per_node);
	family(f, "tierd_tier_managed_bytes", "gauge",
	       "Managed memory now in each tier (rank 0 is the fastest).");
	for (r = 0; r < topo->nr_tiers; r++)
		fprintf(f, "tierd_tier_managed_bytes{tier=\"%zu\"} %llu\n", r,
			(unsigned long long)(per_tier[r] << env->page_shift));
	family(f, "tierd_node_managed_bytes", "gauge",
	       "Managed memory now on each memory node of a tier.");
	for (r = 0; r < topo->nr_tiers; r++)
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			int n = topo->tiers[r].nodes[k];

			if (n >= 0 && n < TIER_MAX_NODES)
				fprintf(f, "tierd_node_managed_bytes{node=\"%d\",tier=\"%zu\"} %llu\n", n,
					r, (unsigned long long)(per_node[n] << env->page_shift));
		}
	family(f, "tierd_node_capacity_bytes", "gauge",
	       "Memory of each node of a tier, as discovered at start.");
	for (r = 0; r < topo->nr_tiers; r++)
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			const struct tier_node *n = tier_topology_node(topo, topo->tiers[r].nodes[k]);

			if (n)
				fprintf(f, "tierd_node_capacity_bytes{node=\"%d\",tier=\"%zu\"} %llu\n",
					topo->tiers[r].nodes[k], r,
					(unsigned long long)n->mem_total_bytes);
		}
}

/* Moves by tier pair: one family for each of promoted/demoted x
 * pages/bytes; every pair is listed, zeros too (rate() needs the
 * series from the start). */
static void render_moves(const struct tierd *d, const struct tier_world_stats *st, FILE *f)
{
	static const struct {
		const char *name, *help;
		bool up, bytes;
	} fams[] = {
		{ "tierd_promoted_pages_total", "Pages moved to a faster tier, by tier pair.", true, false },
		{ "tierd_promoted_bytes_total", "Bytes moved to a faster tier, by tier pair.", true, true },
		{ "tierd_demoted_pages_total", "Pages moved to a slower tier, by tier pair.", false, false },
		{ "tierd_demoted_bytes_total", "Bytes moved to a slower tier, by tier pair.", false, true },
	};
	size_t nr = d->be->topo->nr_tiers < TIER_MAX_TIERS ? d->be->topo->nr_tiers : TIER_MAX_TIERS;
	size_t k, from, to;
	int e;

	if (st->has_moves_by_tier)
		for (k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
			family(f, fams[k].name, "counter", fams[k].help);
			for (from = 0; from < nr; from++)
				for (to = 0; to < nr; to++) {
					uint64_t v = st->moved_pages[from][to];

					if (fams[k].up ? to >= from : to <= from)
						continue;
					if (fams[k].bytes)
						v <<= d->be->env->page_shift;
					fprintf(f, "%s{from_tier=\"%zu\",to_tier=\"%zu\"} %llu\n",
						fams[k].name, from, to, (unsigned long long)v);
				}
		}
	family(f, "tierd_failed_moves_total", "counter",
	       "Page moves that failed, by reason: nomem (target node full; the page is "
	       "retried in the next tier), busy, gone (unmapped), shared (mapped by other "
	       "processes), other.");
	for (e = 0; e < TIER_MOVE_FAIL__COUNT; e++)
		fprintf(f, "tierd_failed_moves_total{reason=\"%s\"} %llu\n", tier_move_fail_name(e),
			(unsigned long long)st->failed_by_reason[e]);
}

static void render_cpu(const struct tierd_metrics *m, const struct tierd *d,
		       const struct tier_world_stats *st, FILE *f)
{
	size_t i;
	uint64_t cum = 0;

	family(f, "tierd_cpu_seconds_total", "counter",
	       "CPU time of the tierd process (user and system, all its threads).");
	fprintf(f, "tierd_cpu_seconds_total %.6f\n", tierd_cpu_seconds());
	if (st->has_tracker_cpu) {
		family(f, "tierd_tracker_cpu_seconds_total", "counter",
		       "CPU time tierd spent in its hotness tracker, collecting observations.");
		fprintf(f, "tierd_tracker_cpu_seconds_total %.6f\n", st->tracker_cpu_seconds);
	}
	if (st->has_step_cpu) {
		family(f, "tierd_step_cpu_seconds_total", "counter",
		       "CPU time of tierd's policy steps by part: maps (reading address spaces), "
		       "placement_check (numa_maps), node_query (move_pages without nodes), "
		       "moves (page moves, kernel time included).");
		fprintf(f, "tierd_step_cpu_seconds_total{part=\"maps\"} %.6f\n", st->maps_cpu_seconds);
		fprintf(f, "tierd_step_cpu_seconds_total{part=\"placement_check\"} %.6f\n",
			st->verify_cpu_seconds);
		fprintf(f, "tierd_step_cpu_seconds_total{part=\"node_query\"} %.6f\n",
			st->query_cpu_seconds);
		fprintf(f, "tierd_step_cpu_seconds_total{part=\"moves\"} %.6f\n", st->move_cpu_seconds);
	}
	if (st->has_kthread_cpu) {
		family(f, "tierd_kdamond_cpu_seconds_total", "counter",
		       "CPU time of the kernel's DAMON threads (kdamond) tierd runs.");
		fprintf(f, "tierd_kdamond_cpu_seconds_total %.6f\n", st->kthread_cpu_seconds);
	}
	family(f, "tierd_steps_total", "counter", "Policy steps completed.");
	fprintf(f, "tierd_steps_total %llu\n", (unsigned long long)d->steps);
	family(f, "tierd_step_failures_total", "counter",
	       "Policy steps that failed (logged; the next step tries again).");
	fprintf(f, "tierd_step_failures_total %llu\n", (unsigned long long)m->step_failures);
	family(f, "tierd_step_duration_seconds", "histogram",
	       "Wall-clock time of a policy step: machine update, tracker, policy, moves.");
	for (i = 0; i < NR_STEP_BUCKETS; i++) {
		cum += m->step_hits[i];
		fprintf(f, "tierd_step_duration_seconds_bucket{le=\"%g\"} %llu\n", step_buckets_s[i],
			(unsigned long long)cum);
	}
	cum += m->step_hits[NR_STEP_BUCKETS];
	fprintf(f, "tierd_step_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
		(unsigned long long)cum);
	fprintf(f, "tierd_step_duration_seconds_sum %.6f\n", m->step_sum_s);
	fprintf(f, "tierd_step_duration_seconds_count %llu\n", (unsigned long long)m->step_count);
}

static void render_misc(const struct tierd *d, const struct tier_world_stats *st, FILE *f)
{
	size_t meta = 0;

	if (d->loop_ready && d->loop.policy->metadata_bytes)
		meta = d->loop.policy->metadata_bytes(d->loop.policy_priv);
	family(f, "tierd_managed_processes", "gauge", "Processes tierd manages now.");
	fprintf(f, "tierd_managed_processes %llu\n", (unsigned long long)st->processes);
	family(f, "tierd_metadata_bytes", "gauge",
	       "Memory tierd keeps about the managed pages (policy and backend).");
	fprintf(f, "tierd_metadata_bytes %llu\n", (unsigned long long)(meta + st->metadata_bytes));
}

/* --- per control group ---------------------------------------------------- */

static void cgroup_sample(FILE *f, const char *name, const char *path, int rank,
			  uint64_t v)
{
	fprintf(f, "%s{cgroup=\"", name);
	put_value(f, path);
	if (rank >= 0)
		fprintf(f, "\",tier=\"%d", rank);
	fprintf(f, "\"} %llu\n", (unsigned long long)v);
}

/* The groups' caps, protected shares and weights: a family only where
 * some group sets one. */
static void render_limits(const struct tierd *d, const uint64_t *cap, size_t nr, FILE *f)
{
	static const struct {
		const char *name, *help;
		bool min;
	} fams[] = {
		{ "tierd_cgroup_max_bytes", "Each control group's cap in a tier, in bytes (only where a cap is set).", false },
		{ "tierd_cgroup_min_bytes", "Each control group's protected share of a tier, in bytes (only where set).", true },
	};
	bool head;
	size_t k, i, r;

	for (k = 0; k < sizeof(fams) / sizeof(fams[0]); k++)
		for (head = false, i = 0; i < d->rules.n; i++)
			for (r = 0; r < nr; r++) {
				const struct tier_group_rule *rule = &d->rules.r[i].rule;
				uint64_t b = tier_amount_pages(fams[k].min ? &rule->min[r] : &rule->max[r],
							       cap[r], 0);

				if (b == UINT64_MAX)
					continue;
				if (!head)
					family(f, fams[k].name, "gauge", fams[k].help);
				head = true;
				cgroup_sample(f, fams[k].name, d->rules.r[i].path, (int)r, b);
			}
	for (head = false, i = 0; i < d->rules.n; i++) {
		if (!d->rules.r[i].rule.weight)
			continue;
		if (!head)
			family(f, "tierd_cgroup_weight", "gauge",
			       "Each control group's weight in sharing the tiers (only where set).");
		head = true;
		cgroup_sample(f, "tierd_cgroup_weight", d->rules.r[i].path, -1,
			      d->rules.r[i].rule.weight);
	}
}

/* The rules in force, each group's use per tier (memory.numa_stat) and
 * its limits in bytes. */
static void render_cgroups(const struct tierd *d, FILE *f)
{
	const struct tier_topology *topo = d->be->topo;
	size_t nr = topo->nr_tiers < TIER_GROUP_RANKS ? topo->nr_tiers : TIER_GROUP_RANKS;
	struct tier_world_group_stat *st;
	uint64_t cap[TIER_GROUP_RANKS] = { 0 };
	size_t i, r, k;

	if (!d->rules.n)
		return;
	st = calloc(d->rules.n, sizeof(*st));
	if (!st)
		return;
	for (r = 0; r < nr; r++)
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			const struct tier_node *n = tier_topology_node(topo, topo->tiers[r].nodes[k]);

			if (n)
				cap[r] += n->mem_total_bytes;
		}
	for (i = 0; i < d->rules.n; i++) {
		struct tier_err err = { "" };

		if (!d->be->group_stat || d->be->group_stat(d->be, i, &st[i], &err) ||
		    st[i].error[0] || !st[i].exists)
			st[i].exists = false;
	}
	family(f, "tierd_cgroup_processes", "gauge",
	       "Managed processes in each control group that has a rule.");
	for (i = 0; i < d->rules.n; i++)
		if (st[i].exists)
			cgroup_sample(f, "tierd_cgroup_processes", d->rules.r[i].path, -1,
				      st[i].processes);
	family(f, "tierd_cgroup_used_bytes", "gauge",
	       "Memory of each control group in each tier (anon and file, memory.numa_stat).");
	for (i = 0; i < d->rules.n; i++)
		for (r = 0; r < nr && st[i].exists; r++)
			cgroup_sample(f, "tierd_cgroup_used_bytes", d->rules.r[i].path, (int)r,
				      st[i].anon_bytes[r] + st[i].file_bytes[r]);
	family(f, "tierd_cgroup_managed_bytes", "gauge",
	       "Managed memory of each control group in each tier.");
	for (i = 0; i < d->rules.n; i++)
		for (r = 0; r < nr && st[i].exists; r++)
			cgroup_sample(f, "tierd_cgroup_managed_bytes", d->rules.r[i].path, (int)r,
				      st[i].managed_bytes[r]);
	render_limits(d, cap, nr, f);
	free(st);
}

/* --- per process ---------------------------------------------------------- */

struct proc_pages {
	int pid;
	uint64_t pages;
	uint64_t per_tier[TIER_MAX_TIERS];
	const struct tier_env *env;
	const int *node_rank;
};

static void count_extent(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct proc_pages *p = ctx;

	(void)addr;
	(void)page;
	p->pages += nr;
}

static void count_extent_tiers(void *ctx, uint64_t addr, uint64_t page, uint64_t nr)
{
	struct proc_pages *p = ctx;
	uint64_t i;

	(void)addr;
	for (i = page; i < page + nr && i < p->env->nr_pages; i++) {
		uint8_t n = p->env->page_node[i];

		if (n != TIER_NODE_NONE && p->node_rank[n] >= 0 && p->node_rank[n] < TIER_MAX_TIERS)
			p->per_tier[p->node_rank[n]]++;
	}
}

/* /proc/PID/comm, "" when it cannot be read (the process is gone). */
static void read_comm(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *cf;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	cf = fopen(path, "re");
	if (!cf)
		return;
	if (!fgets(buf, (int)len, cf))
		buf[0] = '\0';
	fclose(cf);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The TIERD_METRICS_TOP_PROCESSES processes with the most managed
 * pages, each per tier: their sizes from the extents (cheap), their
 * placement from page_node over their pages only. */
static void render_processes(const struct tierd *d, FILE *f)
{
	struct proc_pages top[TIERD_METRICS_TOP_PROCESSES];
	const struct tier_env *env = d->be->env;
	int node_rank[TIER_MAX_NODES];
	size_t n, got, i, ntop = 0, r;
	int *pids;

	if (!d->be->procs || !d->be->extents)
		return;
	n = d->be->procs(d->be, NULL, 0);
	pids = n ? calloc(n, sizeof(*pids)) : NULL;
	if (n && !pids)
		return;
	got = d->be->procs(d->be, pids, n);
	if (got < n)
		n = got;
	tier_node_rank_map(d->be->topo, node_rank);
	for (i = 0; i < n; i++) {
		struct proc_pages p = { .pid = pids[i] };
		size_t j;

		if (d->be->extents(d->be, pids[i], count_extent, &p) || !p.pages)
			continue;
		if (ntop == TIERD_METRICS_TOP_PROCESSES && p.pages <= top[ntop - 1].pages)
			continue;
		/* Insertion into the list, largest first. */
		j = ntop < TIERD_METRICS_TOP_PROCESSES ? ntop++ : ntop - 1;
		for (; j > 0 && top[j - 1].pages < p.pages; j--)
			top[j] = top[j - 1];
		top[j] = p;
	}
	free(pids);
	family(f, "tierd_process_managed_bytes", "gauge",
	       "Managed memory of a process in each tier; only the 20 processes with the "
	       "most managed memory are listed.");
	for (i = 0; i < ntop; i++) {
		char comm[64];

		top[i].env = env;
		top[i].node_rank = node_rank;
		if (d->be->extents(d->be, top[i].pid, count_extent_tiers, &top[i]))
			continue;
		read_comm(top[i].pid, comm, sizeof(comm));
		for (r = 0; r < d->be->topo->nr_tiers && r < TIER_MAX_TIERS; r++) {
			fprintf(f, "tierd_process_managed_bytes{pid=\"%d\",comm=\"", top[i].pid);
			put_value(f, comm);
			fprintf(f, "\",tier=\"%zu\"} %llu\n", r,
				(unsigned long long)(top[i].per_tier[r] << env->page_shift));
		}
	}
}

_Static_assert(TIERD_METRICS_TOP_PROCESSES == 20, "the HELP text of tierd_process_managed_bytes says 20");

/* The whole text, into a malloc'd buffer (*text, *len). Returns 0 or
 * -ENOMEM. */
static int render(const struct tierd_metrics *m, struct tierd *d, char **text, size_t *len)
{
	struct tier_world_stats st;
	FILE *f = open_memstream(text, len);

	if (!f)
		return -ENOMEM;
	d->be->stats(d->be, &st);
	render_info(d, f);
	render_placement(d, f);
	render_moves(d, &st, f);
	render_cpu(m, d, &st, f);
	render_misc(d, &st, f);
	render_cgroups(d, f);
	render_processes(d, f);
	if (ferror(f)) {
		fclose(f);
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return fclose(f) ? -ENOMEM : 0;
}

static int publish(struct tierd *d)
{
	struct tierd_metrics *m = d->metrics;
	char *text = NULL, *old;
	size_t len = 0;
	int ret = render(m, d, &text, &len);

	if (ret)
		return ret;
	pthread_mutex_lock(&m->lock);
	old = m->text;
	m->text = text;
	m->len = len;
	pthread_mutex_unlock(&m->lock);
	free(old);
	m->rendered_us = tier_linux_now_us();
	return 0;
}

/* --- lifecycle ------------------------------------------------------------ */

int tierd_metrics_open(struct tierd *d, struct tier_err *err)
{
	const char *addr = d->cfg.metrics_addr;
	struct sockaddr_storage ss;
	struct tierd_metrics *m;
	socklen_t slen;
	int one = 1, ret;

	d->metrics = NULL;
	if (!addr)
		return 0;
	ret = tier_listen_addr_parse(addr, &ss, &slen, err);
	if (ret) {
		tier_err_prefix(err, "daemon.metrics");
		return ret;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return tier_err_set(err, -ENOMEM, "metrics endpoint: out of memory");
	snprintf(m->addr, sizeof(m->addr), "%s", addr);
	pthread_mutex_init(&m->lock, NULL);
	m->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (m->lfd < 0) {
		ret = tier_err_set(err, -errno, "metrics endpoint %s: socket: %s", addr, strerror(errno));
		goto out_free;
	}
	/* A restart may find the last run's connections in TIME_WAIT. */
	setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(m->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(m->lfd, (struct sockaddr *)&ss, slen) || listen(m->lfd, 16)) {
		ret = tier_err_set(err, -errno, "metrics endpoint %s: %s", addr, strerror(errno));
		goto out_close;
	}
	d->metrics = m;
	return 0;
out_close:
	close(m->lfd);
out_free:
	pthread_mutex_destroy(&m->lock);
	free(m);
	return ret;
}

int tierd_metrics_start(struct tierd *d, struct tier_err *err)
{
	struct tierd_metrics *m = d->metrics;
	int ret;

	if (!m)
		return 0;
	ret = publish(d);
	if (ret)
		return tier_err_set(err, ret, "metrics endpoint %s: out of memory", m->addr);
	/* Its own thread, which inherits the loop's blocked signals and the
	 * capabilities left after they were dropped. */
	m->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
				  serve, m, MHD_OPTION_LISTEN_SOCKET, m->lfd,
				  MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				  MHD_OPTION_END);
	if (!m->mhd)
		return tier_err_set(err, -EIO, "metrics endpoint %s: the HTTP server did not start",
				    m->addr);
	m->lfd = -1;		/* libmicrohttpd's now; closed by MHD_stop_daemon */
	tierd_log(&d->log, LOG_INFO, "metrics at http://%s/metrics", m->addr);
	return 0;
}

void tierd_metrics_step(struct tierd *d, uint64_t step_us)
{
	struct tierd_metrics *m = d->metrics;
	double s = (double)step_us / 1e6;
	size_t i;

	if (!m)
		return;
	for (i = 0; i < NR_STEP_BUCKETS && s > step_buckets_s[i]; i++)
		;
	m->step_hits[i]++;
	m->step_count++;
	m->step_sum_s += s;
	if (d->step_errors)
		m->step_failures++;
	/* At most once a period, but the first step at once: status
	 * publishes every step, and a scrape must not lag it by a period
	 * from the start. */
	if (m->step_count > 1 &&
	    tier_linux_now_us() - m->rendered_us < TIERD_METRICS_RENDER_PERIOD_US)
		return;
	if (publish(d))
		tierd_log(&d->log, LOG_DEBUG, "metrics: out of memory; serving the last figures");
}

void tierd_metrics_close(struct tierd *d)
{
	struct tierd_metrics *m = d->metrics;

	if (!m)
		return;
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	if (m->lfd >= 0)
		close(m->lfd);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
	d->metrics = NULL;
}
