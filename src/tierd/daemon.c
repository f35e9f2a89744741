/* daemon.c - tierd's lifecycle: the backend, the policy loop, the control
 * socket and the signals set up; then one event loop where a timer drives
 * the policy steps (step.c), the control socket answers tierctl
 * (control.c) and signals stop or reload (reload.c); then everything put
 * back. One thread; every wait is epoll. */
#include "tierd/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
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

/* The step timer at d->cfg.interval_ms. Returns 0 or -errno. */
static int arm_timer(struct tierd *d)
{
	struct itimerspec its;
	uint64_t ns = d->cfg.interval_ms * 1000000;

	its.it_interval.tv_sec = (time_t)(ns / 1000000000);
	its.it_interval.tv_nsec = (long)(ns % 1000000000);
	its.it_value = its.it_interval;
	if (timerfd_settime(d->tfd, 0, &its, NULL))
		return -errno;
	d->tfd_interval_ms = d->cfg.interval_ms;
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

/* SIGHUP reloads, SIGTERM and SIGINT stop. */
static void signals(struct tierd *d)
{
	struct signalfd_siginfo si;
	struct tier_err err = { "" };

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			sd_notify(0, "RELOADING=1");
			tierd_reload(d, &err);
			sd_notify(0, "READY=1");
		} else {
			tierd_log(&d->log, LOG_INFO, "signal %u: stopping", si.ssi_signo);
			d->stop = true;
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
	d->epfd = d->tfd = d->sfd = d->ctl.lfd = -1;
	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		d->ctl.clients[i].fd = -1;
	d->exit_status = 1;
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
	ret = tierd_control_open(d, &err);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "control socket: %s", err.msg);
		goto out;
	}
	drop_capabilities(&d->log);
	ret = tierd_epoll_add(d, d->sfd, TIERD_TAG_SIGNAL);
	if (!ret)
		ret = tierd_epoll_add(d, d->tfd, TIERD_TAG_TIMER);
	if (!ret)
		ret = arm_timer(d);
	if (ret) {
		tierd_log(&d->log, LOG_ERR, "event setup: %s", strerror(-ret));
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

			if (tag == TIERD_TAG_TIMER) {
				uint64_t expirations;

				if (read(d->tfd, &expirations, sizeof(expirations)) > 0)
					tierd_step(d);
			} else if (tag == TIERD_TAG_SIGNAL) {
				signals(d);
			} else {
				tierd_control_event(d, tag);
			}
		}
		/* A reload (a signal or a request above) changed the interval. */
		if (d->cfg.interval_ms != d->tfd_interval_ms) {
			ret = arm_timer(d);
			if (ret) {
				tierd_log(&d->log, LOG_ERR, "timer: %s", strerror(-ret));
				goto out;
			}
		}
	}
	sd_notify(0, "STOPPING=1");
	d->exit_status = 0;
out:
	tierd_control_close(d);
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
