/* test_daemon.c - the daemon's reload, step and threads (src/tierd/
 * reload.c, step.c, control.c) on a simulated machine: a reload puts a
 * configuration in force whole or not at all and leaves the backend
 * nothing freed, a new run of step errors is logged again after a good
 * step, and the control socket answers while a step runs. The backend's
 * hooks are replaced where a failure or a long step is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierd/internal.h"

struct fixture {
	char dir[64];
	char conf[96];
	struct tierd_args args;
	struct tierd *d;		/* on the heap: its client buffers are large */
	char *log;			/* what the daemon logged (open_memstream) */
	size_t log_len;
	/* The hooks replaced: how they answer, how often they were called. */
	int (*sim_prepare)(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			   struct tier_err *err);
	int set_groups_ret, prepare_ret;
	unsigned set_groups_calls, prepare_calls;
	bool news;			/* what fake_news answers */
	/* A step that waits in prepare until the test lets it go. */
	sem_t step_entered, step_release;
	bool step_blocks;
};

/* The hooks reach the fixture here: they have the backend's priv only. */
static struct fixture *hooks_fx;

static int fake_set_groups(struct tier_world *b, const struct tier_config_cgroup *rules,
			   size_t n, struct tier_err *err)
{
	(void)b;
	(void)rules;
	(void)n;
	hooks_fx->set_groups_calls++;
	if (hooks_fx->set_groups_ret)
		return tier_err_set(err, hooks_fx->set_groups_ret, "cgroups: refused by the test");
	return 0;
}

static int fake_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			struct tier_err *err)
{
	if (hooks_fx->prepare_ret)
		return tier_err_set(err, hooks_fx->prepare_ret, "refused by the test");
	return hooks_fx->sim_prepare(b, loop, now_us, err);
}

static bool fake_news(struct tier_world *b)
{
	(void)b;
	return hooks_fx->news;
}

static int counting_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			    struct tier_err *err)
{
	hooks_fx->prepare_calls++;
	return hooks_fx->sim_prepare(b, loop, now_us, err);
}

/* The first step waits for the test; the later ones do not. */
static int blocking_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			    struct tier_err *err)
{
	if (hooks_fx->step_blocks) {
		hooks_fx->step_blocks = false;
		sem_post(&hooks_fx->step_entered);
		sem_wait(&hooks_fx->step_release);
	}
	return hooks_fx->sim_prepare(b, loop, now_us, err);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct tier_err err = { "" };
	struct tierd *d;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/tierd-test-daemon.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->conf, sizeof(f->conf), "%s/tierd.yaml", f->dir);
	f->args.config = f->conf;
	f->args.config_given = true;
	f->args.machine = "sim:dram-cxl";
	f->args.workload = "gups-hotset";
	d = f->d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->args = &f->args;
	d->epfd = d->sfd = d->done_fd = d->ctl.lfd = -1;
	assert_int_equal(tierd_threads_init(d), 0);
	tierd_history_init(&d->hist);
	assert_int_equal(tier_config_init(&d->cfg), 0);
	/* A tracker named in the config, as the simulated world takes it. */
	assert_int_equal(tier_config_set_string(&d->cfg.tracker, "damon"), 0);
	tierd_log_init(&d->log, LOG_INFO);
	d->log.journal = false;
	d->log.out = open_memstream(&f->log, &f->log_len);
	assert_non_null(d->log.out);
	if (tierd_world_new(d, &err))
		fail_msg("%s", err.msg);
	if (tier_loop_init(&d->loop, d->be->env, tier_policy_find(d->cfg.policy), d->be->tracker,
			   d->be->tracker_priv, &err))
		fail_msg("%s", err.msg);
	d->loop_ready = true;
	tierd_heat_init(&d->heat, d->be);
	tier_tiercount_init(&d->tiercount);
	d->loop.watch = tierd_heat_watch;
	d->loop.watch_ctx = &d->heat;
	d->be->env->pause = tierd_step_pause;
	d->be->env->wait = tierd_step_wait;
	d->be->env->pause_ctx = d;
	f->sim_prepare = d->be->prepare;
	hooks_fx = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;

	tier_loop_release(&d->loop);
	tierd_heat_release(&d->heat);
	tier_tiercount_release(&d->tiercount);
	d->be->destroy(d->be);
	tier_config_release(&d->cfg);
	tierd_publish_release(d);
	tierd_threads_release(d);
	tierd_rules_release(&d->rules);
	tierd_rules_release(&d->rt_rules);
	tierd_history_release(&d->hist);
	fclose(d->log.out);
	free(f->log);
	unlink(f->conf);
	rmdir(f->dir);
	free(d);
	free(f);
	hooks_fx = NULL;
	return 0;
}

static void write_conf(const struct fixture *f, const char *yaml)
{
	FILE *fp = fopen(f->conf, "w");

	assert_non_null(fp);
	fputs(yaml, fp);
	assert_int_equal(fclose(fp), 0);
}

/* How many lines the daemon logged that contain what. */
static unsigned logged(struct fixture *f, const char *what)
{
	const char *p;
	unsigned n = 0;

	fflush(f->d->log.out);
	for (p = f->log; p && (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Everything but the control groups is valid: another policy, interval,
 * budget and log level, and one group's rule. */
static const char new_conf[] =
	"daemon:\n"
	"  interval_ms: 200\n"
	"  log_level: debug\n"
	"policy:\n"
	"  name: static\n"
	"  budget_mb_per_s: 64\n"
	"cgroups:\n"
	"  - path: batch\n"
	"    weight: 50\n";

static void test_reload_refused_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;
	const struct tier_policy_ops *pol = d->loop.policy;
	void *priv = d->loop.policy_priv;
	struct tier_err err = { "" };

	write_conf(f, new_conf);
	d->be->set_groups = fake_set_groups;
	f->set_groups_ret = -EIO;
	assert_int_equal(tierd_reload(d, &err), -EIO);
	assert_string_equal(err.msg, "cgroups: refused by the test");
	assert_int_equal(f->set_groups_calls, 1);
	assert_int_equal(logged(f, "reload rejected, keeping the running configuration: "
				   "cgroups: refused by the test"), 1);
	/* The running configuration, all of it. */
	assert_ptr_equal(d->loop.policy, pol);
	assert_ptr_equal(d->loop.policy_priv, priv);
	assert_int_equal(logged(f, "policy is now"), 0);
	assert_string_equal(d->cfg.policy, "tierd");
	assert_int_equal(d->cfg.interval_ms, 100);
	assert_int_equal(d->be->env->budget_bytes_per_s, UINT64_C(256) << 20);
	assert_int_equal(d->log.level, LOG_INFO);
	assert_int_equal(d->rules.n, 0);

	/* The same file once the backend takes the rules: all of it. */
	f->set_groups_ret = 0;
	assert_int_equal(tierd_reload(d, &err), 0);
	assert_int_equal(f->set_groups_calls, 2);
	assert_ptr_equal(d->loop.policy, tier_policy_find("static"));
	assert_ptr_equal(d->loop.watch_ctx, &d->heat);
	assert_string_equal(d->cfg.policy, "static");
	assert_int_equal(d->cfg.interval_ms, 200);
	assert_int_equal(d->be->env->budget_bytes_per_s, UINT64_C(64) << 20);
	assert_int_equal(d->log.level, LOG_DEBUG);
	assert_int_equal(d->rules.n, 1);
	assert_string_equal(d->rules.r[0].path, "batch");
	assert_int_equal(logged(f, "policy is now static"), 1);
}

/* A policy that cannot be set up: the backend is not even asked. */
static void test_reload_bad_policy_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;
	const struct tier_policy_ops *pol = d->loop.policy;
	struct tier_err err = { "" };

	write_conf(f, "policy:\n  name: nope\ncgroups:\n  - path: batch\n    weight: 50\n");
	d->be->set_groups = fake_set_groups;
	assert_int_equal(tierd_reload(d, &err), -EINVAL);
	assert_int_equal(f->set_groups_calls, 0);
	assert_ptr_equal(d->loop.policy, pol);
	assert_int_equal(d->rules.n, 0);
}

/* The backend outlives the configuration it was built from: what status
 * reads of it after a reload freed that configuration (under ASan a read
 * of freed memory stops the test). */
static void test_reload_keeps_backend_names(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;
	struct tier_world_stats st;
	struct tier_err err = { "" };

	write_conf(f, "policy:\n  name: tierd\n  tracker: damon\n");
	assert_int_equal(tierd_reload(d, &err), 0);
	assert_int_equal(tierd_reload(d, &err), 0);
	assert_string_equal(d->be->tracker_name, "damon");
	d->be->stats(d->be, &st);
	assert_true(st.has_sim_figures);
}

static void steps(struct fixture *f, int prepare_ret, unsigned n)
{
	f->prepare_ret = prepare_ret;
	while (n--)
		tierd_step(f->d);
}

/* Step errors: the first 3 of a run are warnings, the rest debug lines; a
 * good step ends the run. */
static void test_step_errors_logged_per_run(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;
	const char *warning = "tierd: warning: step: refused by the test";

	d->be->prepare = fake_prepare;
	steps(f, -EIO, 5);
	assert_int_equal(logged(f, warning), 3);
	assert_int_equal(d->steps, 0);
	steps(f, 0, 1);
	assert_int_equal(d->steps, 1);
	steps(f, -EIO, 5);
	assert_int_equal(logged(f, warning), 6);
	/* The repeats are there at debug level. */
	d->log.level = LOG_DEBUG;
	steps(f, -EIO, 1);
	assert_int_equal(logged(f, "tierd: debug: step: refused by the test"), 1);
}

/* A step due while the tracker has no news is not taken (no prepare, no
 * tick): the next look an interval later; 2 s after the last step taken,
 * or once there is news, a step is taken again. (A simulated machine's
 * steps are its clock: the daemon is made to manage a real one here.) */
static void test_step_waits_for_news(void **state)
{
	struct fixture *f = *state;
	struct tierd *d = f->d;
	uint64_t now, next;

	d->be->prepare = counting_prepare;
	d->be->news = fake_news;
	f->args.machine = NULL;
	f->news = false;
	tierd_step(d);			/* the first: taken, whatever the news */
	assert_int_equal(f->prepare_calls, 1);
	assert_int_equal(d->steps, 1);
	d->next_step_us = 0;
	now = tier_linux_now_us();
	next = tierd_step(d);
	assert_int_equal(f->prepare_calls, 1);
	assert_int_equal(d->steps, 1);
	assert_int_equal(d->quiet_steps, 1);
	assert_true(next >= now + d->cfg.interval_ms * 1000);
	assert_true(next <= tier_linux_now_us() + d->cfg.interval_ms * 1000);
	/* 2 s after the last step taken: taken, news or not. */
	d->last_look_us -= 2000000;
	d->next_step_us = 0;
	tierd_step(d);
	assert_int_equal(f->prepare_calls, 2);
	assert_int_equal(d->steps, 2);
	assert_int_equal(d->quiet_since_step, 0);
	/* News: taken at once. */
	f->news = true;
	d->next_step_us = 0;
	tierd_step(d);
	assert_int_equal(f->prepare_calls, 3);
	assert_int_equal(d->quiet_steps, 1);
	f->args.machine = "sim:dram-cxl";
}

static void *serve_thread(void *arg)
{
	return (void *)(intptr_t)tierd_serve(arg);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The response line to a request sent on fd, or "" when none came within
 * timeout_ms. */
static void ask(int fd, const char *req, int timeout_ms, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t len = 0;

	if (req)
		assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	buf[0] = '\0';
	while (len < size - 1 && !memchr(buf, '\n', len) && poll(&p, 1, timeout_ms) == 1) {
		ssize_t n = recv(fd, buf + len, size - 1 - len, 0);

		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
}

static void wait_sem(sem_t *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	assert_int_equal(sem_timedwait(s, &ts), 0);
}

/* The daemon's threads on the socket sock (f->dir/sock), its first step
 * held in prepare (the hook given) until the test lets it go; the next
 * step a minute away. */
static void serve_start(struct fixture *f, pthread_t *t, char *sock, size_t size,
			int (*prepare)(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
				       struct tier_err *err))
{
	struct tierd *d = f->d;
	struct tier_err err = { "" };
	size_t i;

	snprintf(sock, size, "%s/sock", f->dir);
	assert_int_equal(tier_config_set_string(&d->cfg.socket_path, sock), 0);
	for (i = 0; i < TIERD_MAX_CLIENTS; i++)
		d->ctl.clients[i].fd = -1;
	d->start_us = tier_linux_now_us();
	assert_int_equal(sem_init(&f->step_entered, 0, 0), 0);
	assert_int_equal(sem_init(&f->step_release, 0, 0), 0);
	f->step_blocks = true;
	d->be->prepare = prepare;
	d->cfg.interval_ms = 60000;
	if (tierd_events_open(d, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(pthread_create(t, NULL, serve_thread, d), 0);
	wait_sem(&f->step_entered);
	usleep(20000);
}

static void serve_stop(struct fixture *f, pthread_t t)
{
	void *ret;

	tierd_stop(f->d);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	tierd_events_close(f->d);
	sem_destroy(&f->step_entered);
	sem_destroy(&f->step_release);
}

/* While a step runs (held in prepare here, with no pause), status is
 * answered from the figures published before it, with the running step's
 * age; a request that needs the world waits for the step's end, alone:
 * another client's status is answered meanwhile. */
static void test_socket_answers_during_step(void **state)
{
	struct fixture *f = *state;
	char sock[128], buf[8192], req[256];
	pthread_t t;
	int a, b, i;

	serve_start(f, &t, sock, sizeof(sock), blocking_prepare);

	a = connect_to(sock);
	ask(a, "{\"v\":1,\"cmd\":\"status\"}\n", 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));
	assert_non_null(strstr(buf, "\"steps\":0"));
	assert_null(strstr(buf, "\"step_running_ms\":0,"));
	assert_non_null(strstr(buf, "\"step_running_ms\":"));

	/* explain needs the world: no answer while the step holds it. */
	snprintf(req, sizeof(req),
		 "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":%d,\"addr\":4096}}\n",
		 (int)getpid());
	ask(a, req, 300, buf, sizeof(buf));
	assert_string_equal(buf, "");
	b = connect_to(sock);
	ask(b, "{\"v\":1,\"cmd\":\"status\"}\n", 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ok\":true"));

	/* Let go, the step answers explain at its first pause, and a status
	 * after the step counts it and says no step runs - between two
	 * steps: the next may have begun by the time a status is asked
	 * for (on a loaded machine it had, in two runs of eight), so
	 * statuses are asked for until one falls between them. */
	sem_post(&f->step_release);
	ask(a, NULL, 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"v\":1"));
	for (i = 0; i < 1000; i++) {
		ask(b, "{\"v\":1,\"cmd\":\"status\"}\n", 10000, buf, sizeof(buf));
		if (!strstr(buf, "\"steps\":0,") && strstr(buf, "\"step_running_ms\":0"))
			break;
		usleep(10000);
	}
	assert_null(strstr(buf, "\"steps\":0,"));
	assert_non_null(strstr(buf, "\"step_running_ms\":0"));

	close(a);
	close(b);
	serve_stop(f, t);
}

/* The first step waits for the test as blocking_prepare() does, but
 * pauses every millisecond meanwhile, as a long step does between its
 * batches of moves and the chunks of its node query (tier_env.pause). */
static int pausing_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			   struct tier_err *err)
{
	if (hooks_fx->step_blocks) {
		hooks_fx->step_blocks = false;
		sem_post(&hooks_fx->step_entered);
		while (sem_trywait(&hooks_fx->step_release)) {
			b->env->pause(b->env->pause_ctx);
			usleep(1000);
		}
	}
	return hooks_fx->sim_prepare(b, loop, now_us, err);
}

/* The first step waits for the test inside a wait on the kernel
 * (tier_env.wait), as a DAMON snapshot request does. */
static int waiting_prepare(struct tier_world *b, struct tier_loop *loop, uint64_t now_us,
			   struct tier_err *err)
{
	if (hooks_fx->step_blocks) {
		hooks_fx->step_blocks = false;
		b->env->wait(b->env->pause_ctx, true);
		sem_post(&hooks_fx->step_entered);
		sem_wait(&hooks_fx->step_release);
		b->env->wait(b->env->pause_ctx, false);
	}
	return hooks_fx->sim_prepare(b, loop, now_us, err);
}

/* The requests that only read the world (explain, processes) are
 * answered while a step still runs - at its pauses, or by the control
 * thread while it waits on the kernel; one that changes the world
 * (reload) waits for the step's end. */
static void readers_during_step(struct fixture *f,
				int (*prepare)(struct tier_world *b, struct tier_loop *loop,
					       uint64_t now_us, struct tier_err *err))
{
	char sock[128], buf[8192], req[256];
	pthread_t t;
	int a, b;

	serve_start(f, &t, sock, sizeof(sock), prepare);
	a = connect_to(sock);
	b = connect_to(sock);
	ask(b, "{\"v\":1,\"cmd\":\"reload\"}\n", 300, buf, sizeof(buf));
	assert_string_equal(buf, "");
	snprintf(req, sizeof(req),
		 "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":%d,\"addr\":4096}}\n",
		 (int)getpid());
	ask(a, req, 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"v\":1"));
	ask(a, "{\"v\":1,\"cmd\":\"processes\"}\n", 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"v\":1"));
	/* All that while the step ran, and the reload still waits. */
	ask(a, "{\"v\":1,\"cmd\":\"status\"}\n", 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"steps\":0"));
	assert_null(strstr(buf, "\"step_running_ms\":0,"));
	ask(b, NULL, 300, buf, sizeof(buf));
	assert_string_equal(buf, "");

	sem_post(&f->step_release);
	ask(b, NULL, 10000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"v\":1"));
	close(a);
	close(b);
	serve_stop(f, t);
}

static void test_readers_answered_at_pauses(void **state)
{
	readers_during_step(*state, pausing_prepare);
}

static void test_readers_answered_in_waits(void **state)
{
	readers_during_step(*state, waiting_prepare);
}

/* Steps of the same cost, n of them, each begun when the last one said:
 * their CPU in all; *quick counts those followed by less than 1 s of pause. */
static uint64_t pace_run(struct tier_pace *p, uint64_t *now, int n, uint64_t wall,
			 uint64_t cpu, uint64_t moves, int *quick)
{
	uint64_t next;
	int i;

	for (i = 0; i < n; i++) {
		next = tier_pace_step(p, *now, *now + wall, cpu, moves, 25);
		if (quick && next - (*now + wall) < 1000000)
			(*quick)++;
		*now = next;
	}
	return (uint64_t)n * cpu;
}

/* 10 ms steps until they are 400 ms apart (10 ms / 2.5%), none more than
 * the catch-up pause apart meanwhile: how many it took. */
static int pace_until_steady(struct tier_pace *p, uint64_t *now)
{
	uint64_t next, gap = 0;
	int i;

	for (i = 0; i < 200 && gap != 400000; i++) {
		next = tier_pace_step(p, *now, *now + 10000, 10000, 0, 25);
		gap = next - *now;
		assert_true(gap <= 10000 + TIER_PACE_MAX_CATCHUP_US);
		*now = next;
	}
	assert_int_equal(gap, 400000);
	return i;
}

/* The bound of pace.h at 2.5%: share x (W + 80 s), plus one step. */
static void assert_within_share(uint64_t cpu, uint64_t window, uint64_t step)
{
	assert_true((double)cpu <= 0.025 * (double)(window + 2 * 40000000ull) + (double)step);
}

/* The steps' CPU share (core/pace.h): a one-off expensive first step
 * (the catalogue) pauses the policy at most 2 s at a time; moves do not
 * stretch the steady spacing; a quiet spell buys a burst of at most the
 * bucket's size (40 s of the share); and the share holds over a long run,
 * for cheap steps, for expensive ones and for steps that keep moving. */
static void test_pace_share(void **state)
{
	struct tier_pace p = { 0 };
	uint64_t now = 1000000, next, cpu, t0;
	const uint64_t size = 1000000;	/* 40 s of 2.5% */
	int quick = 0, i;

	(void)state;
	/* A 3 s first step at 2.5%: a one-off, not charged: the next at
	 * once, not 80 s (nor 2 s) later. */
	next = tier_pace_step(&p, now, now + 3000000, 3000000, 0, 25);
	assert_int_equal(next, now + 3000000);
	now = next;
	/* Then 10 ms steps from a full bucket: back to back until about
	 * its size is spent (the share accrues meanwhile: 1 s / 9.75 ms),
	 * then 400 ms apart. */
	i = pace_until_steady(&p, &now);
	assert_true(i >= (int)(size / 10000) && i <= (int)(size / 9750) + 3);
	/* A 1 s step that moved pages right after: within the bucket's
	 * size, paid in 2 s pauses, not at once (40 s). */
	next = tier_pace_step(&p, now, now + 1000000, 1000000, 990000, 25);
	assert_int_equal(next - now, 1000000 + TIER_PACE_MAX_CATCHUP_US);
	now = next;
	assert_true(pace_until_steady(&p, &now) <= 30);
	/* A step that moved pages (500 ms, 490 ms of it moves) does not
	 * stretch the spacing: 2 s to the next (the debt's pause), not 20 s;
	 * the steady 10 ms steps after it are 2 s apart until it is paid. */
	next = tier_pace_step(&p, now, now + 500000, 500000, 490000, 25);
	assert_int_equal(next - now, 500000 + TIER_PACE_MAX_CATCHUP_US);
	now = next;
	pace_until_steady(&p, &now);
	/* Steps that keep moving (500 ms each, 490 ms of it moves): past the
	 * bucket's size the excess is paid at once, so over 200 steps the
	 * share holds within the bound. */
	t0 = now;
	cpu = pace_run(&p, &now, 200, 500000, 500000, 490000, NULL);
	assert_within_share(cpu, now - t0, 500000);
	assert_true((double)cpu / (double)(now - t0) >= 0.024);
	/* Expensive steady steps (100 ms, no moves): 4 s apart, the share
	 * kept over a long run. */
	now += 100ull * 1000000;
	t0 = now;
	cpu = pace_run(&p, &now, 500, 150000, 100000, 0, NULL);
	assert_within_share(cpu, now - t0, 100000);
	assert_true((double)cpu / (double)(now - t0) >= 0.024);
	/* After an hour without steps the bucket is full, no fuller: 200 ms
	 * steps run back to back (their interval apart) until about its size
	 * is spent, then 8 s apart (their steady spacing). */
	now += 3600ull * 1000000;
	t0 = now;
	cpu = pace_run(&p, &now, 100, 200000, 200000, 0, &quick);
	assert_true(quick >= (int)(size / 200000) - 1 && quick <= (int)(size / 200000) + 1);
	assert_within_share(cpu, now - t0, 200000);
	/* No share to keep: no pause. */
	assert_int_equal(tier_pace_step(&p, now, now + 5, 5, 0, 0), now + 5);
}

/* The second step (the trackers' first whole picture, dearer than the
 * steps after it) is no steady cost on its own: one that empties the
 * bucket is followed by the debt's pause (at most 2 s), not by its cost
 * over the share (12 s); from the third on, the steady spacing holds. */
static void test_pace_one_step_no_steady_cost(void **state)
{
	struct tier_pace p = { 0 };
	uint64_t now = 1000000, next;

	(void)state;
	now = tier_pace_step(&p, now, now + 300000, 300000, 0, 25);
	/* 1.05 s of CPU, 0.75 s of it moves: 50 ms past the bucket. */
	next = tier_pace_step(&p, now, now + 1050000, 1050000, 750000, 25);
	assert_true(next - (now + 1050000) <= TIER_PACE_MAX_CATCHUP_US);
	now = next;
	next = tier_pace_step(&p, now, now + 300000, 300000, 0, 25);
	now = next;
	next = tier_pace_step(&p, now, now + 300000, 300000, 0, 25);
	assert_true(next - now >= 300000 * 1000 / 25);
}

/* A step that moved pages is followed by a look as soon as the debt
 * allows, not after the steady spacing: the guest's placement step (0.67
 * s of CPU, 0.46 s of it moves, after steps whose look cost 0.15 s) left
 * 85% of a hot set placed for the steady 9.6 s. The step after a look
 * that moved nothing keeps the steady spacing. */
static void test_pace_look_after_moves(void **state)
{
	struct tier_pace p = { 0 };
	uint64_t now = 1000000, next;
	int i;

	(void)state;

	now = tier_pace_step(&p, now, now + 300000, 300000, 0, 25);	/* the catalogue */
	/* looks of 150 ms until the bucket is spent: then steady, 150 ms
	 * over 2.5% = 6 s from a step's start */
	for (i = 0, next = now; i < 100 && next - now < 150000 * 1000 / 25; i++) {
		now = next;
		next = tier_pace_step(&p, now, now + 150000, 150000, 0, 25);
	}
	assert_true(i < 100);
	now = next;
	/* the placement: within the bucket, the debt's pause at most */
	next = tier_pace_step(&p, now, now + 670000, 670000, 460000, 25);
	assert_true(next - (now + 670000) <= TIER_PACE_MAX_CATCHUP_US);
	assert_true(next - now < 150000 * 1000 / 25);
	now = next;
	/* the look after it moves nothing: the steady spacing again */
	next = tier_pace_step(&p, now, now + 150000, 150000, 0, 25);
	assert_true(next - now >= 150000 * 1000 / 25);
}

/* Resumes between steps (core/pace.h): charged to the bucket like a
 * step's CPU, out of the steady spacing; allowed while the bucket is not
 * overdrawn past its size; the next step waits for their debt. Over a long
 * run of steps each followed by resumes while allowed, the bound holds
 * with one step and one resume over. */
static void test_pace_resume(void **state)
{
	struct tier_pace p = { 0 };
	uint64_t now = 1000000, next, t0, cpu = 0;
	const int64_t size = 1000000;	/* 40 s of 2.5% */
	int i, resumes = 0;

	(void)state;
	/* No share to keep: a resume asks for no pause, and may always run. */
	assert_int_equal(tier_pace_resume(&p, now, 5, 0), now);
	assert_true(tier_pace_may_resume(&p, 0));
	/* First step (a full bucket), then steady 10 ms steps. */
	next = tier_pace_step(&p, now, now + 100000, 100000, 0, 25);
	now = next;
	pace_until_steady(&p, &now);
	assert_true(tier_pace_may_resume(&p, 25));
	/* A 300 ms resume 250 ms after the step: a debt, paid in a pause of
	 * at most 2 s from its end; the steady spacing (400 ms) unchanged. */
	now += 250000;
	next = tier_pace_resume(&p, now, 300000, 25);
	assert_true(next > now && next <= now + TIER_PACE_MAX_CATCHUP_US);
	assert_true(p.debt_us > 0 && p.debt_us < size);
	assert_true(tier_pace_may_resume(&p, 25));
	/* Resumes until overdrawn past the size: then none may run, and the
	 * next step waits for the excess. */
	for (i = 0; i < 100 && tier_pace_may_resume(&p, 25); i++) {
		now += 250000;
		next = tier_pace_resume(&p, now, 300000, 25);
	}
	assert_true(i >= 2 && i < 10);
	assert_false(tier_pace_may_resume(&p, 25));
	assert_true(p.debt_us >= size);
	assert_int_equal(next - now, (uint64_t)(p.debt_us - size) * 1000 / 25 +
					     TIER_PACE_MAX_CATCHUP_US);
	/* The steady spacing is the steps' look, not the resumes' moves. */
	now = next;
	next = tier_pace_step(&p, now, now + 10000, 10000, 0, 25);
	assert_true(next - now >= 400000);
	/* Steps that keep finding moves, each followed by 300 ms resumes
	 * every 250 ms while allowed: the share holds. */
	now = next;
	t0 = now;
	for (i = 0; i < 300; i++) {
		next = tier_pace_step(&p, now, now + 50000, 50000, 40000, 25);
		cpu += 50000;
		now += 50000;
		while (tier_pace_may_resume(&p, 25) && now + 250000 < next) {
			uint64_t after;

			now += 250000;
			after = tier_pace_resume(&p, now + 300000, 300000, 25);
			now += 300000;
			cpu += 300000;
			resumes++;
			if (after > next)
				next = after;
		}
		now = next > now ? next : now;
	}
	assert_true(resumes > 0);
	assert_within_share(cpu, now - t0, 50000 + 300000);
	assert_true((double)cpu / (double)(now - t0) >= 0.02);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reload_refused_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_bad_policy_changes_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reload_keeps_backend_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_errors_logged_per_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_waits_for_news, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_answers_during_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readers_answered_at_pauses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readers_answered_in_waits, setup, teardown),
		cmocka_unit_test(test_pace_share),
		cmocka_unit_test(test_pace_resume),
		cmocka_unit_test(test_pace_one_step_no_steady_cost),
		cmocka_unit_test(test_pace_look_after_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
