/* daemon.c - tierd's event loop: a timer drives the shared policy loop over
 * the backend, the control socket answers tierctl, signals stop or reload.
 * One thread; every wait is epoll. */
#include "tierd/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>
#include <systemd/sd-daemon.h>

#include "common/config_yaml.h"
#include "common/protocol.h"
#include "common/topology_config.h"
#include "tierd/cgroups.h"
#include "tierd/heatmap.h"

/* Connections at once: tierctl calls are short, but every application that
 * holds a libtier handle keeps one open. */
enum { MAX_CLIENTS = 256 };

struct client {
	int fd;
	uid_t uid;
	char buf[TIER_PROTO_MAX_LINE + 2];
	size_t len;
};

struct tierd {
	const struct tierd_args *args;
	struct tier_config cfg;
	struct tierd_log log;
	struct tier_world *be;
	struct tier_loop loop;
	bool loop_ready;
	struct tierd_heat heat;		/* the processes' access heatmaps */
	int epfd, tfd, sfd, lfd;
	struct client clients[MAX_CLIENTS];
	uint64_t start_us;
	uint64_t steps;
	uint64_t step_errors;
	uint64_t next_step_us;		/* CPU share: no step before this */
	bool stop;
	int exit_status;
	/* control groups: set at run time (tierctl cgroup set), and in force */
	struct tierd_rules rt_rules;
	struct tierd_rules rules;
	/* Refusals logged in the current minute, and those left out. */
	uint64_t refusal_window_us;
	unsigned refusals_logged, refusals_dropped;
};

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int epoll_add(struct tierd *d, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

enum { TAG_TIMER = 1, TAG_SIGNAL, TAG_LISTEN, TAG_CLIENT = 100 };

static int arm_timer(struct tierd *d)
{
	struct itimerspec its;
	uint64_t ns = d->cfg.interval_ms * 1000000;

	its.it_interval.tv_sec = (time_t)(ns / 1000000000);
	its.it_interval.tv_nsec = (long)(ns % 1000000000);
	its.it_value = its.it_interval;
	return timerfd_settime(d->tfd, 0, &its, NULL) ? -errno : 0;
}

/* --- status ---------------------------------------------------------------- */

static struct json_object *status_json(struct tierd *d)
{
	const struct tier_env *env = d->be->env;
	const struct tier_topology *topo = d->be->topo;
	struct json_object *o = json_object_new_object(), *tiers = json_object_new_array();
	struct tier_world_stats st;
	uint64_t per_node[256] = { 0 }, i;
	size_t r, k;
	size_t meta = 0;

	for (i = 0; i < env->nr_pages; i++)
		if (env->page_node[i] != TIER_NODE_NONE)
			per_node[env->page_node[i]]++;
	for (r = 0; r < topo->nr_tiers; r++) {
		struct json_object *t = json_object_new_object(), *nodes = json_object_new_array();
		uint64_t bytes = 0;

		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			int n = topo->tiers[r].nodes[k];

			json_object_array_add(nodes, json_object_new_int(n));
			if (n >= 0 && n < 256)
				bytes += per_node[n] << env->page_shift;
		}
		json_object_object_add(t, "rank", json_object_new_int((int)r));
		json_object_object_add(t, "nodes", nodes);
		json_object_object_add(t, "managed_bytes", json_object_new_uint64(bytes));
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
	json_object_object_add(o, "tracker", json_object_new_string(d->be->tracker_name));
	json_object_object_add(o, "policy", json_object_new_string(d->cfg.policy));
	json_object_object_add(o, "cpu_seconds", json_object_new_double(cpu_seconds()));
	if (st.has_kthread_cpu) {
		json_object_object_add(o, "kdamond_cpu_seconds",
				       json_object_new_double(st.kthread_cpu_seconds));
		json_object_object_add(o, "system_cpu_seconds",
				       json_object_new_double(cpu_seconds() + st.kthread_cpu_seconds));
	}
	if (st.tracker_period_us) {
		json_object_object_add(o, "tracker_workload_faults",
				       json_object_new_uint64(st.tracker_faults));
		json_object_object_add(o, "tracker_period_ms",
				       json_object_new_uint64(st.tracker_period_us / 1000));
	}
	json_object_object_add(o, "metadata_bytes",
			       json_object_new_uint64(meta + st.metadata_bytes));
	json_object_object_add(o, "heatmap_bytes", json_object_new_uint64(tierd_heat_bytes(&d->heat)));
	json_object_object_add(o, "uptime_seconds",
			       json_object_new_double((double)(mono_us() - d->start_us) / 1e6));
	json_object_object_add(o, "steps", json_object_new_uint64(d->steps));
	json_object_object_add(o, "interval_ms", json_object_new_uint64(d->cfg.interval_ms));
	json_object_object_add(o, "max_cpu_percent", json_object_new_uint64(d->cfg.max_cpu_percent));
	json_object_object_add(o, "budget_bytes_per_s",
			       json_object_new_uint64(d->cfg.budget_bytes_per_s));
	if (st.has_sim_figures) {
		json_object_object_add(o, "amat_ns", json_object_new_double(st.amat_ns));
		json_object_object_add(o, "fast_access_ratio",
				       json_object_new_double(st.fast_access_ratio));
	}
	return o;
}

/* --- reload ---------------------------------------------------------------- */

static int apply_rules(struct tierd *d, const struct tier_config *cfg, bool strict,
		       struct tier_err *err);

/* Loads the configuration again. A bad file is rejected and the running
 * one kept. Applied at this safe point between steps: interval, budget,
 * log level, process selection; the policy is re-created only when its
 * name changed; topology and socket changes need a restart. */
static int reload(struct tierd *d, struct tier_err *err)
{
	struct tier_config fresh;
	int ret;

	if (!d->args->config_given && access(d->args->config, F_OK) && errno == ENOENT)
		ret = tier_config_init(&fresh);
	else
		ret = tier_config_load_file(d->args->config, &fresh, err);
	if (ret)
		goto out_reject;
	if (strcmp(fresh.policy, d->cfg.policy) && !tier_policy_find(fresh.policy)) {
		ret = tier_err_set(err, -EINVAL, "%s: policy.name: unknown policy '%s'",
				   d->args->config, fresh.policy);
		goto out_reject;
	}
	if (strcmp(fresh.socket_path, d->cfg.socket_path) || fresh.nr_tiers != d->cfg.nr_tiers ||
	    strcmp(fresh.sysfs_root, d->cfg.sysfs_root))
		tierd_log(&d->log, LOG_WARNING,
			  "reload: socket and topology changes take effect at restart");
	if (strcmp(fresh.policy, d->cfg.policy)) {
		const struct tier_policy_ops *pol = tier_policy_find(fresh.policy);
		struct tier_loop nl;

		ret = tier_loop_init(&nl, d->be->env, pol, d->be->tracker, d->be->tracker_priv, err);
		if (ret)
			goto out_reject;
		nl.watch = d->loop.watch;
		nl.watch_ctx = d->loop.watch_ctx;
		tier_loop_release(&d->loop);
		d->loop = nl;
		tierd_log(&d->log, LOG_INFO, "policy is now %s", pol->name);
	}
	ret = apply_rules(d, &fresh, false, err);
	if (ret)
		goto out_reject;
	d->be->env->budget_bytes_per_s = fresh.budget_bytes_per_s;
	d->log.level = fresh.log_level;
	if (d->be->reconfigure)
		d->be->reconfigure(d->be, &fresh);
	{
		/* The socket in use stays until a restart. */
		char *sock = fresh.socket_path;

		fresh.socket_path = d->cfg.socket_path;
		d->cfg.socket_path = sock;
	}
	tier_config_release(&d->cfg);
	d->cfg = fresh;
	ret = arm_timer(d);
	if (ret)
		return tier_err_set(err, ret, "timer: %s", strerror(-ret));
	tierd_log(&d->log, LOG_INFO, "configuration reloaded from %s", d->args->config);
	return 0;
out_reject:
	tierd_log(&d->log, LOG_ERR, "reload rejected, keeping the running configuration: %s",
		  err->msg);
	tier_config_release(&fresh);
	return ret;
}

/* --- control socket ---------------------------------------------------------- */

/* Refusals go to the log at notice level, at most REFUSALS_PER_MINUTE a
 * minute: a local user who keeps asking for what it may not do must not
 * flood the journal. The next line after a quiet minute says how many
 * were left out. */
#define REFUSALS_PER_MINUTE 10

static void log_refusal(struct tierd *d, const char *msg)
{
	uint64_t now = mono_us();

	if (now - d->refusal_window_us >= 60000000) {
		if (d->refusals_dropped)
			tierd_log(&d->log, LOG_NOTICE, "refused %u more requests in the last minute",
				  d->refusals_dropped);
		d->refusal_window_us = now;
		d->refusals_logged = d->refusals_dropped = 0;
	}
	if (d->refusals_logged < REFUSALS_PER_MINUTE) {
		d->refusals_logged++;
		tierd_log(&d->log, LOG_NOTICE, "refused: %s", msg);
	} else {
		d->refusals_dropped++;
	}
}

static void client_close(struct tierd *d, struct client *c)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void client_send(struct tierd *d, struct client *c, char *line)
{
	size_t off = 0, n;

	if (!line) {
		client_close(d, c);
		return;
	}
	n = strlen(line);
	/* Responses are small next to the socket buffer; a client that does
	 * not read within the send timeout is dropped, never waited for. */
	while (off < n) {
		ssize_t w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(line);
}

static bool get_u64_arg(struct json_object *args, const char *key, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_uint64(v);
	return json_object_get_int64(v) >= 0 || *out > INT64_MAX;
}

/* The control groups' rules in force (file + run time) to the backend.
 * A backend without control groups: a warning, or with strict an error.
 * Returns 0 or -errno with err set. */
static int apply_rules(struct tierd *d, const struct tier_config *cfg, bool strict,
		       struct tier_err *err)
{
	struct tierd_rules merged;
	int ret = tierd_rules_merge(cfg, &d->rt_rules, &merged);

	if (ret)
		return tier_err_set(err, ret, "cgroups: %s", strerror(-ret));
	if (!d->be->set_groups) {
		if (strict) {
			tierd_rules_release(&merged);
			return tier_err_set(err, -EOPNOTSUPP, "cgroups: %s has no control groups",
					    d->be->name);
		}
		if (merged.n)
			tierd_log(&d->log, LOG_WARNING, "cgroups: %s has no control groups; rules ignored",
				  d->be->name);
	} else {
		ret = d->be->set_groups(d->be, merged.r, merged.n, err);
		if (ret) {
			tierd_rules_release(&merged);
			return ret;
		}
	}
	tierd_rules_release(&d->rules);
	d->rules = merged;
	return 0;
}

/* cgroup-set: changes one group's run-time rule (root only). */
static int handle_cgroup_set(struct tierd *d, struct json_object *args, struct tier_err *err)
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
		ret = apply_rules(d, &d->cfg, true, err);
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

/* A user may advise or look into only its own processes (the owner of
 * /proc/PID); root any. */
static int may_touch(const char *what, const struct client *c, uint64_t pid, struct tier_err *err)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%llu", (unsigned long long)pid);
	if (stat(path, &st))
		return tier_err_set(err, -ESRCH, "%s: no process %llu", what, (unsigned long long)pid);
	if (c->uid != 0 && c->uid != st.st_uid)
		return tier_err_set(err, -EPERM, "%s: uid %u may not %s process %llu (owned by uid %u)",
				    what, (unsigned)c->uid, !strcmp(what, "hint") ? "advise" : "inspect",
				    (unsigned long long)pid, (unsigned)st.st_uid);
	return 0;
}

/* explain: {"pid":P,"addr":A,"len":L}. */
static struct json_object *handle_explain(struct tierd *d, const struct client *c,
					  struct json_object *args, int *ret, struct tier_err *err)
{
	uint64_t pid, addr, len = 4096;
	struct json_object *v;

	if (!get_u64_arg(args, "pid", &pid) || !pid || pid > INT32_MAX) {
		*ret = tier_err_set(err, -EINVAL, "explain: 'pid' must be a process id");
		return NULL;
	}
	if (!get_u64_arg(args, "addr", &addr) ||
	    (json_object_object_get_ex(args, "len", &v) && !get_u64_arg(args, "len", &len))) {
		*ret = tier_err_set(err, -EINVAL, "explain: 'addr' and 'len' must be unsigned integers");
		return NULL;
	}
	*ret = may_touch("explain", c, pid, err);
	if (*ret)
		return NULL;
	return tierd_explain_json(d->be, &d->loop, (pid_t)pid, addr, len, ret, err);
}

/* heatmap: {"pid":P,"bins":N,"slices":N,"start":A,"end":A} (all but pid
 * optional). */
static struct json_object *handle_heatmap(struct tierd *d, const struct client *c,
					  struct json_object *args, int *ret, struct tier_err *err)
{
	struct tierd_heat_query q = { 0, TIERD_HEAT_DEFAULT_BINS, TIER_HEATMAP_SLICES, 0, UINT64_MAX };
	static const struct {
		const char *key;
		uint64_t min, max;
	} limits[] = {
		{ "bins", 1, TIER_HEATMAP_BINS },
		{ "slices", 1, TIER_HEATMAP_SLICES },
		{ "start", 0, UINT64_MAX },
		{ "end", 1, UINT64_MAX },
	};
	uint64_t pid, val[4] = { q.bins, q.slices, q.start, q.end };
	size_t i;

	json_object_object_foreach(args, key, v) {
		(void)v;
		for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
			if (!strcmp(key, limits[i].key))
				break;
		if (strcmp(key, "pid") && i == sizeof(limits) / sizeof(limits[0])) {
			*ret = tier_err_set(err, -EINVAL, "heatmap: unknown argument '%.32s'", key);
			return NULL;
		}
	}
	if (!get_u64_arg(args, "pid", &pid) || !pid || pid > INT32_MAX) {
		*ret = tier_err_set(err, -EINVAL, "heatmap: 'pid' must be a process id");
		return NULL;
	}
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct json_object *jv;

		if (!json_object_object_get_ex(args, limits[i].key, &jv))
			continue;
		if (!get_u64_arg(args, limits[i].key, &val[i]) || val[i] < limits[i].min ||
		    val[i] > limits[i].max) {
			*ret = tier_err_set(err, -EINVAL, "heatmap: '%s' must be an integer in %llu..%llu",
					    limits[i].key, (unsigned long long)limits[i].min,
					    (unsigned long long)limits[i].max);
			return NULL;
		}
	}
	q.pid = (pid_t)pid;
	q.bins = (size_t)val[0];
	q.slices = (size_t)val[1];
	q.start = val[2];
	q.end = val[3];
	if (q.end <= q.start) {
		*ret = tier_err_set(err, -EINVAL, "heatmap: 'end' must be above 'start'");
		return NULL;
	}
	*ret = may_touch("heatmap", c, pid, err);
	if (*ret)
		return NULL;
	return tierd_heat_json(&d->heat, &q, d->be->env->clock->now_us(d->be->env->clock_priv),
			       ret, err);
}

/* hint: {"pid":P,"addr":A,"len":L,"advice":"hot"}. A user may advise only
 * its own processes (the owner of /proc/PID); root any. */
static int handle_hint(struct tierd *d, const struct client *c, struct json_object *args,
		       struct tier_err *err)
{
	struct json_object *v;
	uint64_t pid, addr, len;
	int advice, ret;

	if (!get_u64_arg(args, "pid", &pid) || !pid || pid > INT32_MAX)
		return tier_err_set(err, -EINVAL, "hint: 'pid' must be a process id");
	if (!get_u64_arg(args, "addr", &addr) || !get_u64_arg(args, "len", &len))
		return tier_err_set(err, -EINVAL, "hint: 'addr' and 'len' must be unsigned integers");
	if (!json_object_object_get_ex(args, "advice", &v) || !json_object_is_type(v, json_type_string))
		return tier_err_set(err, -EINVAL, "hint: 'advice' must be a string");
	for (advice = 0; advice < TIER_HINT__COUNT; advice++)
		if (!strcmp(json_object_get_string(v), tierd_advice_names[advice]))
			break;
	if (advice == TIER_HINT__COUNT)
		return tier_err_set(err, -EINVAL,
				    "hint: unknown advice '%.32s' (hot, cold, pin-fast, latency, bandwidth, default)",
				    json_object_get_string(v));
	ret = may_touch("hint", c, pid, err);
	if (ret)
		return ret;
	if (!d->be->hint)
		return tier_err_set(err, -EOPNOTSUPP, "hint: %s has no processes to advise",
				    d->be->name);
	return d->be->hint(d->be, (pid_t)pid, addr, len, advice, err);
}

static void handle_request(struct tierd *d, struct client *c, const char *line, size_t len)
{
	struct tier_request req;
	struct tier_err err = { "" };
	int ret;

	ret = tier_request_parse(line, len, &req, &err);
	if (ret) {
		tierd_log(&d->log, LOG_DEBUG, "bad request from uid %u: %s", (unsigned)c->uid, err.msg);
		client_send(d, c, tier_response_error(-ret, err.msg));
		return;
	}
	if (tier_cmds[req.cmd].root_only && c->uid != 0) {
		snprintf(err.msg, sizeof(err.msg), "%s: only root may do this (uid %u)",
			 tier_cmds[req.cmd].name, (unsigned)c->uid);
		log_refusal(d, err.msg);
		client_send(d, c, tier_response_error(EPERM, err.msg));
		tier_request_release(&req);
		return;
	}
	switch (req.cmd) {
	case TIER_CMD_PING:
		client_send(d, c, tier_response_ok(NULL));
		break;
	case TIER_CMD_STATUS:
		client_send(d, c, tier_response_ok(status_json(d)));
		break;
	case TIER_CMD_RELOAD:
		ret = reload(d, &err);
		client_send(d, c, ret ? tier_response_error(-ret, err.msg) : tier_response_ok(NULL));
		break;
	case TIER_CMD_HINT:
		ret = handle_hint(d, c, req.args, &err);
		/* A refusal leaves a trace on the operator's side too: who may
		 * not advise whom (the client only tells its own user). */
		if (ret == -EPERM)
			log_refusal(d, err.msg);
		client_send(d, c, ret ? tier_response_error(-ret, err.msg) : tier_response_ok(NULL));
		break;
	case TIER_CMD_CGROUP_SET:
		ret = handle_cgroup_set(d, req.args, &err);
		client_send(d, c, ret ? tier_response_error(-ret, err.msg) : tier_response_ok(NULL));
		break;
	case TIER_CMD_CGROUPS:
		client_send(d, c, tier_response_ok(tierd_cgroups_json(d->be, &d->rules)));
		break;
	case TIER_CMD_EXPLAIN:
	case TIER_CMD_HEATMAP: {
		struct json_object *res = req.cmd == TIER_CMD_EXPLAIN ?
						  handle_explain(d, c, req.args, &ret, &err) :
						  handle_heatmap(d, c, req.args, &ret, &err);

		if (ret == -EPERM)
			log_refusal(d, err.msg);

		client_send(d, c, ret ? tier_response_error(-ret, err.msg) : tier_response_ok(res));
		break;
	}
	case TIER_CMD__COUNT:
		break;
	}
	tier_request_release(&req);
}

static void client_readable(struct tierd *d, struct client *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_close(d, c);
			return;
		}
		c->len += (size_t)n;
		while ((nl = memchr(c->buf, '\n', c->len))) {
			size_t l = (size_t)(nl - c->buf) + 1;

			handle_request(d, c, c->buf, l);
			if (c->fd < 0)
				return;
			memmove(c->buf, c->buf + l, c->len - l);
			c->len -= l;
		}
		if (c->len >= sizeof(c->buf) - 1) {
			client_send(d, c, tier_response_error(E2BIG, "request line too long"));
			client_close(d, c);
			return;
		}
	}
}

static void accept_client(struct tierd *d)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct timeval tv = { .tv_sec = 1 };
	size_t i;
	int fd;

	fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < MAX_CLIENTS; i++)
		if (d->clients[i].fd < 0)
			break;
	if (i == MAX_CLIENTS) {
		char *line = tier_response_error(EBUSY, "too many clients");

		if (line) {
			if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				tierd_log(&d->log, LOG_DEBUG, "client dropped: %s", strerror(errno));
			free(line);
		}
		close(fd);
		return;
	}
	d->clients[i].fd = fd;
	d->clients[i].uid = cred.uid;
	d->clients[i].len = 0;
	if (epoll_add(d, fd, TAG_CLIENT + i)) {
		close(fd);
		d->clients[i].fd = -1;
	}
}

static int open_socket(struct tierd *d, struct tier_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = d->cfg.socket_path;
	char dir[sizeof(sa.sun_path)], *slash;
	int fd, ret;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return tier_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return tier_err_set(err, -errno, "socket: %s", strerror(errno));
	/* A stale socket of a dead daemon goes; a live daemon's stays. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return tier_err_set(err, -EADDRINUSE, "%s: another tierd is running", path);
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		ret = -errno;
		close(fd);
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	/* Anyone may connect; what each may do is checked per request. */
	chmod(path, 0666);
	d->lfd = fd;
	return 0;
}

/* --- privileges ------------------------------------------------------------ */

/* tierd runs as root but keeps only what it needs: CAP_SYS_NICE and
 * CAP_SYS_PTRACE to move and read other processes' pages (move_pages(2),
 * /proc/PID/pagemap), CAP_SYS_ADMIN for page frame numbers, DAMON and the
 * numa_balancing sysctl, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH for sysfs
 * and procfs files of other users. Dropped from the bounding set too. */
static void drop_capabilities(const struct tierd_log *log)
{
	if (geteuid() != 0) {
		tierd_log(log, LOG_DEBUG, "not root: no capabilities to drop");
		return;
	}
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
			  CAP_SYS_NICE, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_DAC_OVERRIDE,
			  CAP_DAC_READ_SEARCH, -1) ||
	    capng_apply(CAPNG_SELECT_BOTH))
		tierd_log(log, LOG_WARNING, "could not drop capabilities; running with all of root's");
	else
		tierd_log(log, LOG_DEBUG, "capabilities kept: sys_nice sys_ptrace sys_admin dac_override dac_read_search");
}

/* What the world says goes to the log. */
static void log_say(void *arg, int level, const char *msg)
{
	tierd_log(arg, level, "%s", msg);
}

/* --- the step -------------------------------------------------------------- */

static void step_once(struct tierd *d);

static uint64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void step(struct tierd *d)
{
	uint64_t now = mono_us(), cpu0;

	/* The CPU share: a step that cost c microseconds of CPU is followed
	 * by a pause of c * 100 / max_cpu_percent before the next one, so
	 * tierd never takes more than its share of a core, however large the
	 * managed memory (the policy then reacts more slowly, never harder). */
	if (now < d->next_step_us)
		return;
	cpu0 = cpu_us();
	step_once(d);
	/* On a simulated machine tierd's CPU is mostly the simulated
	 * application's: no share to keep. */
	if (!d->args->machine)
		d->next_step_us = now + (cpu_us() - cpu0) * 100 / d->cfg.max_cpu_percent;
}

static uint64_t env_now_us(const struct tierd *d)
{
	return d->be->env->clock->now_us(d->be->env->clock_priv);
}

static void step_once(struct tierd *d)
{
	struct tier_err err = { "" };
	int ret;

	ret = d->be->prepare(d->be, &d->loop, mono_us(), &err);
	if (ret == 1) {
		tierd_log(&d->log, LOG_INFO, "the machine's run is over; stopping");
		d->stop = true;
		return;
	}
	if (!ret && tierd_heat_sync(&d->heat, env_now_us(d)))
		tierd_log(&d->log, LOG_DEBUG, "heatmaps: out of memory; some processes have none");
	if (!ret)
		ret = tier_loop_step(&d->loop, &err);
	/* The step's observations go into the heatmaps' time slices. */
	tierd_heat_commit(&d->heat, env_now_us(d));
	if (ret) {
		/* Errors of one step are logged, not fatal: a workload that
		 * exits mid-batch must not take the daemon down. Repeats are
		 * logged at debug level to avoid storms. */
		d->step_errors++;
		tierd_log(&d->log, d->step_errors <= 3 ? LOG_WARNING : LOG_DEBUG, "step: %s", err.msg);
		return;
	}
	d->steps++;
}

int tierd_run(const struct tierd_args *args, struct tier_config *cfg)
{
	/* On the heap: the client buffers are MAX_CLIENTS x 64 KiB. */
	struct tierd *d = calloc(1, sizeof(*d));
	struct tier_err err = { "" };
	const struct tier_policy_ops *pol;
	struct tier_config_topology ct;
	sigset_t mask;
	size_t i;
	int ret;

	if (!d) {
		tier_config_release(cfg);
		fprintf(stderr, "tierd: out of memory\n");
		return 1;
	}
	d->args = args;
	d->cfg = *cfg;		/* takes ownership */
	memset(cfg, 0, sizeof(*cfg));
	d->epfd = d->tfd = d->sfd = d->lfd = -1;
	for (i = 0; i < MAX_CLIENTS; i++)
		d->clients[i].fd = -1;
	d->exit_status = 1;
	tierd_log_init(&d->log, d->cfg.log_level);
	if (args->socket && tier_config_set_string(&d->cfg.socket_path, args->socket))
		goto out;
	d->start_us = mono_us();

	pol = tier_policy_find(d->cfg.policy);
	if (!pol) {
		tierd_log(&d->log, LOG_ERR, "policy.name: unknown policy '%s'", d->cfg.policy);
		goto out;
	}
	ret = tier_config_topology_init(&ct, &d->cfg, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		tier_config_topology_release(&ct);
		goto out;
	}
	{
		struct tier_world_params wp = {
			.cfg = &d->cfg, .topology = &ct.spec, .say = log_say, .say_arg = &d->log,
			.log_level = d->log.level, .preset = args->machine ? args->machine + 4 : NULL,
			.workload = args->workload,
		};

		ret = args->machine ? tier_sim_world_new(&wp, &d->be, &err)
				    : tier_linux_world_new(&wp, &d->be, &err);
	}
	tier_config_topology_release(&ct);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	ret = apply_rules(d, &d->cfg, false, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	ret = tier_loop_init(&d->loop, d->be->env, pol, d->be->tracker, d->be->tracker_priv, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	d->loop_ready = true;
	tierd_heat_init(&d->heat, d->be);
	d->loop.watch = tierd_heat_watch;
	d->loop.watch_ctx = &d->heat;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sfd < 0 || d->tfd < 0 || d->epfd < 0) {
		tierd_log(&d->log, LOG_ERR, "event setup: %s", strerror(errno));
		goto out;
	}
	ret = open_socket(d, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "control socket: %s", err.msg);
		goto out;
	}
	drop_capabilities(&d->log);
	if (epoll_add(d, d->sfd, TAG_SIGNAL) || epoll_add(d, d->tfd, TAG_TIMER) ||
	    epoll_add(d, d->lfd, TAG_LISTEN) || arm_timer(d)) {
		tierd_log(&d->log, LOG_ERR, "event setup: %s", strerror(errno));
		goto out;
	}
	tierd_log(&d->log, LOG_INFO, "managing %s: %zu tiers, policy %s, tracker %s, every %llu ms, socket %s",
		  d->be->name, d->be->topo->nr_tiers, pol->name, d->be->tracker_name,
		  (unsigned long long)d->cfg.interval_ms, d->cfg.socket_path);
	sd_notifyf(0, "READY=1\nSTATUS=managing %s with policy %s", d->be->name, pol->name);

	while (!d->stop) {
		struct epoll_event evs[16];
		int n = epoll_wait(d->epfd, evs, 16, -1), k;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tierd_log(&d->log, LOG_ERR, "epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (k = 0; k < n && !d->stop; k++) {
			uint64_t tag = evs[k].data.u64;

			if (tag == TAG_TIMER) {
				uint64_t expirations;

				if (read(d->tfd, &expirations, sizeof(expirations)) > 0)
					step(d);
			} else if (tag == TAG_SIGNAL) {
				struct signalfd_siginfo si;

				while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						sd_notify(0, "RELOADING=1");
						reload(d, &err);
						sd_notify(0, "READY=1");
					} else {
						tierd_log(&d->log, LOG_INFO, "signal %u: stopping",
							  si.ssi_signo);
						d->stop = true;
					}
				}
			} else if (tag == TAG_LISTEN) {
				accept_client(d);
			} else if (tag >= TAG_CLIENT && tag < TAG_CLIENT + MAX_CLIENTS) {
				struct client *c = &d->clients[tag - TAG_CLIENT];

				if (c->fd >= 0)
					client_readable(d, c);
			}
		}
	}
	sd_notify(0, "STOPPING=1");
	d->exit_status = 0;
out:
	for (i = 0; i < MAX_CLIENTS; i++)
		if (d->clients[i].fd >= 0)
			close(d->clients[i].fd);
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->cfg.socket_path);
	}
	if (d->loop_ready)
		tier_loop_release(&d->loop);
	tierd_heat_release(&d->heat);
	if (d->be)
		d->be->destroy(d->be);	/* restores kernel tiering */
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
	tier_config_release(&d->cfg);
	tierd_rules_release(&d->rules);
	tierd_rules_release(&d->rt_rules);
	ret = d->exit_status;
	free(d);
	return ret;
}
