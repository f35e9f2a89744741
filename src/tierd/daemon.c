/* daemon.c - tierd's lifecycle: the backend, the policy loop, the control
 * socket and the signals set up; then the step thread runs the policy
 * steps (step.c) while the control thread's event loop answers the control
 * socket (control.c) and signals stop or reload (reload.c); then
 * everything put back. The metrics endpoint's HTTP server has a thread of
 * its own (metrics.h). */
#include "tierd/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cap-ng.h>
#include <systemd/sd-daemon.h>

#include "common/topology_config.h"
#include "tierd/internal.h"

int tierd_epoll_add(struct tierd *d, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void tierd_stop(struct tierd *d)
{
	uint64_t one = 1;

	pthread_mutex_lock(&d->jobs_lock);
	atomic_store(&d->stop, true);
	pthread_cond_broadcast(&d->jobs_cond);
	pthread_mutex_unlock(&d->jobs_lock);
	if (d->done_fd >= 0 && write(d->done_fd, &one, sizeof(one)) < 0)
		tierd_log(&d->log, LOG_DEBUG, "eventfd: %s", strerror(errno));
}

/* --- privileges ------------------------------------------------------------ */

/* daemon.nice on every thread of tierd's (the threads it starts later
 * inherit it from the one that starts them). Raising the priority needs
 * CAP_SYS_NICE (kept, for move_pages of other processes' pages); without
 * it tierd runs on at the priority it has and says so. */
void tierd_set_nice(const struct tierd *d, int nice)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int failed = 0, err = 0;

	if (!dir) {
		tierd_log(&d->log, LOG_WARNING, "daemon.nice %d: /proc/self/task: %s", nice,
			  strerror(errno));
		return;
	}
	while ((de = readdir(dir))) {
		id_t tid = (id_t)strtoul(de->d_name, NULL, 10);

		if (!tid)
			continue;
		if (setpriority(PRIO_PROCESS, tid, nice)) {
			failed++;
			err = errno;
		}
	}
	closedir(dir);
	if (failed) {
		int now;

		errno = 0;
		now = getpriority(PRIO_PROCESS, 0);
		tierd_log(&d->log, LOG_WARNING,
			  "daemon.nice %d: %s (%d threads); tierd runs at nice %d", nice,
			  strerror(err), failed, errno ? 0 : now);
	}
}

/* tierd runs as root but keeps only what it needs: CAP_SYS_NICE and
 * CAP_SYS_PTRACE to move and read other processes' pages (move_pages(2),
 * /proc/PID/pagemap), CAP_SYS_ADMIN for page frame numbers, DAMON and the
 * numa_balancing sysctl, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH for sysfs
 * and procfs files of other users, CAP_IPC_LOCK for the hint-fault
 * tracker's perf rings (a few MiB a thread, past the locked memory perf
 * allows without it: perf_mmap()). Dropped from the bounding set too. */
static void drop_capabilities(const struct tierd_log *log)
{
	if (geteuid() != 0) {
		tierd_log(log, LOG_DEBUG, "not root: no capabilities to drop");
		return;
	}
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
			  CAP_SYS_NICE, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_DAC_OVERRIDE,
			  CAP_DAC_READ_SEARCH, CAP_IPC_LOCK, -1) ||
	    capng_apply(CAPNG_SELECT_BOTH))
		tierd_log(log, LOG_WARNING, "could not drop capabilities; running with all of root's");
	else
		tierd_log(log, LOG_DEBUG, "capabilities kept: sys_nice sys_ptrace sys_admin dac_override dac_read_search ipc_lock");
}

/* A reload of SIGHUP: at once, or by the step thread when a step holds
 * the world. */
static void reload_signal(struct tierd *d)
{
	struct tierd_job *j = calloc(1, sizeof(*j));
	struct tier_err err = { "" };

	if (!j || !(j->req.args = json_object_new_object())) {
		free(j);
		tierd_log(&d->log, LOG_ERR, "reload: out of memory");
		return;
	}
	j->req.cmd = TIER_CMD_RELOAD;
	j->slot = -1;
	if (pthread_mutex_trylock(&d->world_lock) == 0) {
		sd_notify(0, "RELOADING=1");
		tierd_reload(d, &err);
		tierd_publish(d);
		pthread_mutex_unlock(&d->world_lock);
		sd_notify(0, "READY=1");
		tierd_job_free(j);
		return;
	}
	tierd_jobs_push(d, j);
}

/* SIGHUP reloads, SIGTERM and SIGINT stop. */
static void signals(struct tierd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload_signal(d);
		} else {
			tierd_log(&d->log, LOG_INFO, "signal %u: stopping", si.ssi_signo);
			tierd_stop(d);
		}
	}
}

/* What the world says goes to the log. */
static void log_say(void *arg, int level, const char *msg)
{
	tierd_log(arg, level, "%s", msg);
}

int tierd_world_new(struct tierd *d, struct tier_err *err)
{
	struct tier_config_topology ct;
	int ret = tier_config_topology_init(&ct, &d->cfg, err);

	if (!ret) {
		tierd_devices_spec(d, &ct.spec);
		struct tier_world_params wp = {
			.cfg = &d->cfg, .topology = &ct.spec, .say = log_say, .say_arg = &d->log,
			.log_level = d->log.level,
			.preset = d->args->machine ? d->args->machine + 4 : NULL,
			.workload = d->args->workload,
		};

		ret = d->args->machine ? tier_sim_world_new(&wp, &d->be, err)
				       : tier_linux_world_new(&wp, &d->be, err);
	}
	tier_config_topology_release(&ct);
	return ret;
}

/* The condition variable is timed on CLOCK_MONOTONIC, the clock of
 * tier_linux_now_us. */
int tierd_threads_init(struct tierd *d)
{
	pthread_condattr_t ca;
	int ret = pthread_condattr_init(&ca);

	if (!ret)
		ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&d->jobs_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		return ret;
	pthread_mutex_init(&d->world_lock, NULL);
	pthread_mutex_init(&d->read_lock, NULL);
	pthread_mutex_init(&d->jobs_lock, NULL);
	pthread_mutex_init(&d->pub.lock, NULL);
	d->pub.kdamond_cpu_s = -1;
	return 0;
}

void tierd_threads_release(struct tierd *d)
{
	pthread_cond_destroy(&d->jobs_cond);
	pthread_mutex_destroy(&d->world_lock);
	pthread_mutex_destroy(&d->read_lock);
	pthread_mutex_destroy(&d->jobs_lock);
	pthread_mutex_destroy(&d->pub.lock);
}

int tierd_events_open(struct tierd *d, struct tier_err *err)
{
	int ret;

	d->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->done_fd < 0 || d->epfd < 0)
		return tier_err_set(err, -errno, "event setup: %s", strerror(errno));
	ret = tierd_epoll_add(d, d->done_fd, TIERD_TAG_DONE);
	if (ret)
		return tier_err_set(err, ret, "event setup: %s", strerror(-ret));
	ret = tierd_control_open(d, err);
	if (ret)
		tier_err_prefix(err, "control socket");
	return ret;
}

void tierd_events_close(struct tierd *d)
{
	struct tierd_job *j, *next;

	/* Answers the step thread gave as it stopped. */
	for (j = d->done; j; j = next) {
		next = j->next;
		tierd_job_free(j);
	}
	d->done = NULL;
	tierd_control_close(d);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->done_fd >= 0)
		close(d->done_fd);
	d->epfd = d->done_fd = -1;
}

int tierd_serve(struct tierd *d)
{
	int ret;

	/* Figures for status before the first step ends. */
	tierd_publish(d);
	ret = pthread_create(&d->step_thread, NULL, tierd_step_main, d);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "step thread: %s", strerror(ret));
		return -ret;
	}
	/* Named for top -H and /proc/PID/task/TID/comm, apart from the
	 * control thread (this one), which keeps the process's name: a
	 * start tells a live tierd from a dead one's pid by it. */
	pthread_setname_np(d->step_thread, "tierd-step");
	while (!atomic_load(&d->stop)) {
		struct epoll_event evs[16];
		int n = epoll_wait(d->epfd, evs, 16, -1), k;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			tierd_log(&d->log, LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (k = 0; k < n && !atomic_load(&d->stop); k++) {
			uint64_t tag = evs[k].data.u64;

			if (tag == TIERD_TAG_SIGNAL)
				signals(d);
			else
				tierd_control_event(d, tag, evs[k].events);
		}
	}
	tierd_stop(d);
	pthread_join(d->step_thread, NULL);
	return ret;
}

int tierd_run(const struct tierd_args *args, struct tier_config *cfg)
{
	/* On the heap: the client buffers are TIERD_MAX_CLIENTS x 64 KiB. */
	struct tierd *d = calloc(1, sizeof(*d));
	struct tier_err err = { "" };
	const struct tier_policy_ops *pol;
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
	d->epfd = d->sfd = d->done_fd = d->ctl.lfd = -1;
	if (tierd_threads_init(d)) {
		fprintf(stderr, "tierd: cannot set up its threads' locks\n");
		tier_config_release(&d->cfg);
		free(d);
		return 1;
	}
	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		d->ctl.clients[i].fd = -1;
	d->exit_status = 1;
	tierd_history_init(&d->hist);
	tierd_log_init(&d->log, d->cfg.log_level);
	if (args->socket && tier_config_set_string(&d->cfg.socket_path, args->socket))
		goto out;
	d->start_us = tier_linux_now_us();

	pol = tier_policy_find(d->cfg.policy);
	if (!pol) {
		tierd_log(&d->log, LOG_ERR, "policy.name: unknown policy '%s'", d->cfg.policy);
		goto out;
	}
	ret = tierd_devices_start(d, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	/* Before any thread starts (a tracker's, the step thread):
	 * capabilities are per thread. */
	drop_capabilities(&d->log);
	/* Before the world's threads start (soft-dirty's), which inherit
	 * it; on a simulated machine tierd's CPU is the simulated
	 * application's, and no priority is asked for. */
	if (!args->machine)
		tierd_set_nice(d, d->cfg.nice);
	ret = tierd_world_new(d, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	ret = tierd_cgroups_apply(d, &d->cfg, false, &err);
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
	d->hint_supported = d->be->hint != NULL;
	snprintf(d->machine_name, sizeof(d->machine_name), "%s", d->be->name);
	tierd_heat_init(&d->heat, d->be);
	tier_tiercount_init(&d->tiercount);
	d->loop.watch = tierd_heat_watch;
	d->loop.watch_ctx = &d->heat;
	/* Read-only requests are answered within a step, at its pauses. */
	d->be->env->pause = tierd_step_pause;
	d->be->env->wait = tierd_step_wait;
	d->be->env->pause_ctx = d;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sfd < 0) {
		tierd_log(&d->log, LOG_ERR, "event setup: %s", strerror(errno));
		goto out;
	}
	ret = tierd_events_open(d, &err);
	if (!ret && (ret = tierd_epoll_add(d, d->sfd, TIERD_TAG_SIGNAL)))
		tier_err_set(&err, ret, "event setup: %s", strerror(-ret));
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	ret = tierd_metrics_open(d, &err);
	if (!ret)
		ret = tierd_metrics_start(d, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "%s", err.msg);
		goto out;
	}
	tierd_log(&d->log, LOG_INFO, "managing %s: %zu tiers, policy %s, tracker %s, every %llu ms, socket %s",
		  d->be->name, d->be->topo->nr_tiers, pol->name, d->be->tracker_name,
		  (unsigned long long)d->cfg.interval_ms, d->cfg.socket_path);
	sd_notifyf(0, "READY=1\nSTATUS=managing %s with policy %s", d->be->name, pol->name);
	if (tierd_serve(d) == 0) {
		sd_notify(0, "STOPPING=1");
		d->exit_status = 0;
	}
out:
	tierd_metrics_close(d);
	tierd_events_close(d);
	if (d->loop_ready)
		tier_loop_release(&d->loop);
	tierd_heat_release(&d->heat);
	tier_tiercount_release(&d->tiercount);
	if (d->be)
		d->be->destroy(d->be);	/* restores kernel tiering */
	if (d->sfd >= 0)
		close(d->sfd);
	tierd_publish_release(d);
	tierd_threads_release(d);
	tier_config_release(&d->cfg);
	tierd_rules_release(&d->rules);
	tierd_rules_release(&d->rt_rules);
	tierd_history_release(&d->hist);
	ret = d->exit_status;
	free(d);
	return ret;
}
