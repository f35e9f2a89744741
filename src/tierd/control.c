/* control.c - tierd's control socket: a Unix stream socket anyone may
 * connect to, one JSON request per line and one response line each
 * (common/protocol.h, docs/protocol.md); what each peer may do is checked
 * per request from its uid. Non-blocking; a request is answered whole
 * before the next event. */
#include "tierd/internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* --- status ---------------------------------------------------------------- */

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static struct json_object *status_json(struct tierd *d)
{
	const struct tier_env *env = d->be->env;
	const struct tier_topology *topo = d->be->topo;
	struct json_object *o = json_object_new_object(), *tiers = json_object_new_array();
	struct tier_world_stats st;
	uint64_t per_node[TIER_MAX_NODES] = { 0 }, i;
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
			if (n >= 0 && n < TIER_MAX_NODES)
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
			       json_object_new_double((double)(tier_linux_now_us() - d->start_us) / 1e6));
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

/* --- requests -------------------------------------------------------------- */

/* Refusals go to the log at notice level, at most REFUSALS_PER_MINUTE a
 * minute: a local user who keeps asking for what it may not do must not
 * flood the journal. The next line after a quiet minute says how many
 * were left out. */
#define REFUSALS_PER_MINUTE 10

static void log_refusal(struct tierd *d, const char *msg)
{
	uint64_t now = tier_linux_now_us();

	if (now - d->ctl.refusal_window_us >= 60000000) {
		if (d->ctl.refusals_dropped)
			tierd_log(&d->log, LOG_NOTICE, "refused %u more requests in the last minute",
				  d->ctl.refusals_dropped);
		d->ctl.refusal_window_us = now;
		d->ctl.refusals_logged = d->ctl.refusals_dropped = 0;
	}
	if (d->ctl.refusals_logged < REFUSALS_PER_MINUTE) {
		d->ctl.refusals_logged++;
		tierd_log(&d->log, LOG_NOTICE, "refused: %s", msg);
	} else {
		d->ctl.refusals_dropped++;
	}
}

static void client_close(struct tierd *d, struct tierd_client *c)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void client_send(struct tierd *d, struct tierd_client *c, char *line)
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

/* A user may advise or look into only its own processes (the owner of
 * /proc/PID); root any. */
static int may_touch(const char *what, const struct tierd_client *c, uint64_t pid,
		      struct tier_err *err)
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
static struct json_object *handle_explain(struct tierd *d, const struct tierd_client *c,
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
static struct json_object *handle_heatmap(struct tierd *d, const struct tierd_client *c,
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
	struct json_object *res;
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
	res = tierd_heat_json(&d->heat, &q, d->be->env->clock->now_us(d->be->env->clock_priv),
			      ret, err);
	/* "Not managed" names the managed pids, other users' among them:
	 * root's to read. */
	if (*ret == -ESRCH && c->uid != 0)
		tier_err_set(err, -ESRCH, "heatmap: process %llu has no heatmap (not managed by tierd)",
			     (unsigned long long)pid);
	return res;
}

/* hint: {"pid":P,"addr":A,"len":L,"advice":"hot"}. A user may advise only
 * its own processes (the owner of /proc/PID); root any. */
static int handle_hint(struct tierd *d, const struct tierd_client *c, struct json_object *args,
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
	advice = tier_proto_advice_parse(json_object_get_string(v));
	if (advice < 0 || advice >= TIER_HINT__COUNT)
		return tier_err_set(err, -EINVAL, "hint: unknown advice '%.32s' (" TIER_PROTO_ADVICES ")",
				    json_object_get_string(v));
	ret = may_touch("hint", c, pid, err);
	if (ret)
		return ret;
	if (!d->be->hint)
		return tier_err_set(err, -EOPNOTSUPP, "hint: %s has no processes to advise",
				    d->be->name);
	return d->be->hint(d->be, (pid_t)pid, addr, len, advice, err);
}

static void handle_request(struct tierd *d, struct tierd_client *c, const char *line,
			   size_t len)
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
		ret = tierd_reload(d, &err);
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

/* --- connections ----------------------------------------------------------- */

static void client_readable(struct tierd *d, struct tierd_client *c)
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

	fd = accept4(d->ctl.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		if (d->ctl.clients[i].fd < 0)
			break;
	if (i == TIERD_MAX_CLIENTS) {
		char *line = tier_response_error(EBUSY, "too many clients");

		if (line) {
			if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				tierd_log(&d->log, LOG_DEBUG, "client dropped: %s", strerror(errno));
			free(line);
		}
		close(fd);
		return;
	}
	d->ctl.clients[i].fd = fd;
	d->ctl.clients[i].uid = cred.uid;
	d->ctl.clients[i].len = 0;
	if (tierd_epoll_add(d, fd, TIERD_TAG_CLIENT + i)) {
		close(fd);
		d->ctl.clients[i].fd = -1;
	}
}

/* The socket's directory must be tierd's alone: a directory owned by
 * tierd's user or root that no one else may write. Whoever may write it
 * may unlink tierd's socket and bind their own in its place, answering
 * tierctl and libtier in tierd's name. */
static int check_socket_dir(const char *dir, struct tier_err *err)
{
	struct stat st;
	int ret;

	if (stat(dir, &st)) {
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", dir, strerror(-ret));
	}
	if (!S_ISDIR(st.st_mode))
		return tier_err_set(err, -ENOTDIR, "%s: not a directory", dir);
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return tier_err_set(err, -EPERM,
				    "%s: owned by uid %u, neither tierd's (uid %u) nor root's: refusing to put the socket there",
				    dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return tier_err_set(err, -EPERM,
				    "%s: writable by %s (mode %04o): refusing to put the socket there",
				    dir, st.st_mode & S_IWOTH ? "every user" : "its group",
				    (unsigned)(st.st_mode & 07777));
	return 0;
}

/* The socket as bound: tierd's, mode 0666 (anyone may connect; each
 * request is checked). */
static int check_socket(const char *path, struct tier_err *err)
{
	struct stat st;
	int ret;

	if (chmod(path, 0666) || lstat(path, &st)) {
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0666)
		return tier_err_set(err, -EPERM,
				    "%s: a %s of uid %u mode %04o once bound, not tierd's socket (uid %u mode 0666)",
				    path, S_ISSOCK(st.st_mode) ? "socket" : "file", (unsigned)st.st_uid,
				    (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
	return 0;
}

int tierd_control_open(struct tierd *d, struct tier_err *err)
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
	} else {
		snprintf(dir, sizeof(dir), "/");
	}
	ret = check_socket_dir(dir, err);
	if (ret)
		return ret;
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
	d->ctl.lfd = fd;
	ret = check_socket(path, err);
	if (ret)
		return ret;
	ret = tierd_epoll_add(d, fd, TIERD_TAG_LISTEN);
	if (ret)
		return tier_err_set(err, ret, "%s: epoll: %s", path, strerror(-ret));
	return 0;
}

void tierd_control_event(struct tierd *d, uint64_t tag)
{
	struct tierd_client *c;

	if (tag == TIERD_TAG_LISTEN) {
		accept_client(d);
		return;
	}
	if (tag < TIERD_TAG_CLIENT || tag >= TIERD_TAG_CLIENT + TIERD_MAX_CLIENTS)
		return;
	c = &d->ctl.clients[tag - TIERD_TAG_CLIENT];
	if (c->fd >= 0)
		client_readable(d, c);
}

void tierd_control_close(struct tierd *d)
{
	size_t i;

	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		if (d->ctl.clients[i].fd >= 0) {
			close(d->ctl.clients[i].fd);
			d->ctl.clients[i].fd = -1;
		}
	if (d->ctl.lfd >= 0) {
		close(d->ctl.lfd);
		unlink(d->cfg.socket_path);
		d->ctl.lfd = -1;
	}
}
