/* control.c - tierd's control socket, on the control thread: a Unix
 * stream socket anyone may connect to, one JSON request per line and one
 * response line each (common/protocol.h, docs/protocol.md); what each peer
 * may do is checked per request from its uid. Non-blocking: a client's
 * next request waits until the socket took the last response whole (a slow
 * reader is never waited for, and never gets a torn line). Never waiting
 * for a policy step: status and cgroups are answered from the
 * figures the last step published, a request that needs the world runs at
 * once when no step holds it and otherwise waits, alone, for the step's
 * next pause (one that only reads the world) or its end (requests.c,
 * step.c), while every other client is served. */
#include "tierd/internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tierd/procs.h"
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
	if (c->fd < 0)
		return;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->waiting = false;
	c->gen++;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->close_after = false;
	c->discard_left = 0;
}

/* What c waits for: room to send while a response is pending, nothing
 * (but a hang-up) while its request waits for the world, else requests. */
static void client_rewatch(struct tierd *d, struct tierd_client *c)
{
	struct epoll_event ev = {
		.events = c->out ? EPOLLOUT : c->waiting ? 0 : EPOLLIN,
		.data.u64 = TIERD_TAG_CLIENT + (uint64_t)(c - d->ctl.clients),
	};

	if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		client_close(d, c);
}

/* Sends what the socket takes of c's pending response. Returns 0 when
 * it went whole, -EAGAIN when some remains, -EPIPE when the client is
 * gone (c closed). */
static int client_flush(struct tierd *d, struct tierd_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -EAGAIN;
		if (w <= 0) {
			client_close(d, c);
			return -EPIPE;
		}
		c->out_off += (size_t)w;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->close_after) {
		c->close_after = false;
		c->len = 0;
		c->discard_left = 1 << 20;
		if (shutdown(c->fd, SHUT_WR)) {
			client_close(d, c);
			return -EPIPE;
		}
		client_rewatch(d, c);
		return -EPIPE;
	}
	return 0;
}

/* Sends line (owned; NULL: out of memory, the client is closed). What
 * the socket does not take now goes when the client reads: until then
 * c waits for room instead of requests. Never called with a response
 * pending (client_lines stops at one). */
static void client_send(struct tierd *d, struct tierd_client *c, char *line)
{
	if (!line) {
		client_close(d, c);
		return;
	}
	c->out = line;
	c->out_len = strlen(line);
	c->out_off = 0;
	if (client_flush(d, c) == -EAGAIN)
		client_rewatch(d, c);
}

/* Reads of a client stop while its request waits for the world (and
 * start again with the answer): its next request is not read before. */
static void client_watch(struct tierd *d, struct tierd_client *c, bool on)
{
	c->waiting = !on;
	client_rewatch(d, c);
}

/* A request that needs the world: run at once when no step holds it,
 * else handed to the step thread, which runs it at the step's next pause
 * when it only reads the world (tierd_step_pause()), else when the step
 * ends (the client waits; a hint is answered at once, being checked
 * already). */
static void world_request(struct tierd *d, struct tierd_client *c, struct tierd_job *j)
{
	/* No step holds the world, or one does but waits on the kernel and
	 * j only reads it: run now. */
	pthread_mutex_t *held = pthread_mutex_trylock(&d->world_lock) == 0 ? &d->world_lock :
				tierd_job_reads_only(j) && pthread_mutex_trylock(&d->read_lock) == 0 ?
							     &d->read_lock : NULL;

	if (held) {
		tierd_job_run(d, j);
		pthread_mutex_unlock(held);
		client_send(d, c, j->response);
		j->response = NULL;
		tierd_job_free(j);
		return;
	}
	if (j->req.cmd == TIER_CMD_HINT) {
		client_send(d, c, tier_response_ok(NULL));
		j->slot = -1;
	} else {
		client_watch(d, c, false);
	}
	tierd_jobs_push(d, j);
}

static void handle_request(struct tierd *d, struct tierd_client *c, const char *line,
			   size_t len)
{
	struct tier_request req;
	struct tier_err err = { "" };
	struct tierd_job *j;
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
		tier_request_release(&req);
		return;
	case TIER_CMD_HISTORY: {
		/* The history ring has a lock of its own. */
		struct json_object *res = tierd_history_json(&d->hist, d->be->topo, req.args,
							     tier_linux_now_us(), &ret, &err);

		client_send(d, c, ret ? tier_response_error(-ret, err.msg) : tier_response_ok(res));
		tier_request_release(&req);
		return;
	}
	case TIER_CMD_STATUS:
	case TIER_CMD_CGROUPS: {
		char *answer = req.cmd == TIER_CMD_STATUS ? tierd_status_line(d) :
							      tierd_cgroups_line(d);

		client_send(d, c, answer ? answer : tier_response_error(ENOMEM, "out of memory"));
		tier_request_release(&req);
		return;
	}
	default:
		break;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		client_send(d, c, tier_response_error(ENOMEM, "out of memory"));
		tier_request_release(&req);
		return;
	}
	j->req = req;
	j->uid = c->uid;
	j->slot = (int)(c - d->ctl.clients);
	j->gen = c->gen;
	ret = tierd_job_check(d, j, &err);
	if (ret) {
		/* A refusal leaves a trace on the operator's side too: who may
		 * not advise or inspect whom (the client only tells its own
		 * user). */
		if (ret == -EPERM)
			log_refusal(d, err.msg);
		client_send(d, c, tier_response_error(-ret, err.msg));
		tierd_job_free(j);
		return;
	}
	world_request(d, c, j);
}

/* --- connections ----------------------------------------------------------- */

/* The complete request lines read so far, until one must wait. */
static void client_lines(struct tierd *d, struct tierd_client *c)
{
	char *nl;

	while (c->fd >= 0 && !c->waiting && !c->out && (nl = memchr(c->buf, '\n', c->len))) {
		size_t l = (size_t)(nl - c->buf) + 1;

		handle_request(d, c, c->buf, l);
		if (c->fd < 0)
			return;
		memmove(c->buf, c->buf + l, c->len - l);
		c->len -= l;
	}
}

static void client_readable(struct tierd *d, struct tierd_client *c, uint32_t events)
{
	if (c->discard_left) {
		for (;;) {
			ssize_t n = recv(c->fd, c->buf, sizeof(c->buf), MSG_DONTWAIT);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (n <= 0 || (size_t)n >= c->discard_left) {
				client_close(d, c);
				return;
			}
			c->discard_left -= (size_t)n;
		}
	}
	if (c->out) {
		/* Room for the pending response; then the requests read
		 * before it stalled, then more. */
		if (client_flush(d, c))
			return;
		client_rewatch(d, c);
		client_lines(d, c);
		if (c->fd < 0 || c->waiting || c->out)
			return;
	}
	if (c->waiting) {
		/* Only a hang-up or an error comes while reads are off. */
		if (events & (EPOLLHUP | EPOLLERR))
			client_close(d, c);
		return;
	}
	for (;;) {
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_close(d, c);
			return;
		}
		c->len += (size_t)n;
		client_lines(d, c);
		if (c->fd < 0 || c->waiting || c->out)
			return;
		if (c->len >= sizeof(c->buf) - 1) {
			c->close_after = true;
			client_send(d, c, tier_response_error(E2BIG, "request line too long"));
			return;
		}
	}
}

/* The step thread's answers: each to its client, if still there, whose
 * reads then start again. */
static void jobs_done(struct tierd *d)
{
	struct tierd_job *j = tierd_jobs_done(d), *next;

	for (; j; j = next) {
		struct tierd_client *c = j->slot >= 0 ? &d->ctl.clients[j->slot] : NULL;

		next = j->next;
		if (c && c->fd >= 0 && c->gen == j->gen) {
			c->waiting = false;
			client_send(d, c, j->response);
			j->response = NULL;
			if (c->fd >= 0 && !c->out) {
				client_rewatch(d, c);
				client_lines(d, c);
			}
		}
		tierd_job_free(j);
	}
}

static void accept_client(struct tierd *d)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	size_t i;
	int fd;

	fd = accept4(d->ctl.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		close(fd);
		return;
	}
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
	snprintf(d->ctl.path, sizeof(d->ctl.path), "%s", path);
	ret = check_socket(path, err);
	if (ret)
		return ret;
	ret = tierd_epoll_add(d, fd, TIERD_TAG_LISTEN);
	if (ret)
		return tier_err_set(err, ret, "%s: epoll: %s", path, strerror(-ret));
	return 0;
}

void tierd_control_event(struct tierd *d, uint64_t tag, uint32_t events)
{
	struct tierd_client *c;

	if (tag == TIERD_TAG_LISTEN) {
		accept_client(d);
		return;
	}
	if (tag == TIERD_TAG_DONE) {
		jobs_done(d);
		return;
	}
	if (tag < TIERD_TAG_CLIENT || tag >= TIERD_TAG_CLIENT + TIERD_MAX_CLIENTS)
		return;
	c = &d->ctl.clients[tag - TIERD_TAG_CLIENT];
	if (c->fd >= 0)
		client_readable(d, c, events);
}

void tierd_control_close(struct tierd *d)
{
	size_t i;

	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		client_close(d, &d->ctl.clients[i]);
	if (d->ctl.lfd >= 0) {
		close(d->ctl.lfd);
		unlink(d->ctl.path);
		d->ctl.lfd = -1;
	}
}
