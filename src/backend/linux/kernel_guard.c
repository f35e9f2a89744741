/* kernel_guard.c - kernel features switched off while tierd runs, put back
 * after it (also after a crash, from the state file). */
#include "backend/linux/kernel_guard.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "backend/linux/damon_modules.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

/* True when pid is a live process named tierd other than this one. */
static bool other_tierd(const struct tier_linux_ctx *ctx, pid_t pid)
{
	char path[512], comm[64];

	if (pid <= 0 || pid == getpid() || !tier__pid_alive(ctx, pid))
		return false;
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/comm", (int)pid) ||
	    tier__read_line(path, comm, sizeof(comm), NULL))
		return false;
	return !strcmp(comm, "tierd");
}

static int leftovers(const struct tier_linux_ctx *ctx, const char *path, tier_say_fn fn,
		     void *arg, bool *found, struct tier_err *err)
{
	struct tier_linux_kernel_state st;
	char done[512];
	int ret;

	*found = false;
	ret = tier_linux_kernel_state_load(path, &st, err);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	*found = true;
	if (other_tierd(ctx, st.pid))
		return tier_err_set(err, -EBUSY,
				    "another tierd (pid %d) runs and holds the kernel settings in %s",
				    (int)st.pid, path);
	ret = tier_linux_kernel_state_restore(ctx, &st, done, sizeof(done), err);
	if (ret) {
		tier_err_prefix(err, "putting back what a tierd (pid %d) that did not exit left "
				"changed (%s)", (int)st.pid, path);
		return ret;
	}
	tier_sayf(fn, arg, LOG_NOTICE,
	    "a tierd (pid %d) did not exit cleanly; put back what it left changed: %s",
	    (int)st.pid, done[0] ? done : "nothing was still changed");
	return tier_linux_kernel_state_remove(path, err);
}

int tier_linux_guard_restore_leftovers(const struct tier_linux_ctx *ctx,
				       const char *state_path, tier_say_fn fn,
				       void *arg, bool *found, struct tier_err *err)
{
	return leftovers(ctx, state_path, fn, arg, found, err);
}

int tier_linux_guard_open(struct tier_linux_guard *g, const struct tier_linux_ctx *ctx,
			  const char *state_path, tier_say_fn fn, void *arg,
			  struct tier_err *err)
{
	bool found;

	memset(g, 0, sizeof(*g));
	g->ctx = *ctx;
	g->say = fn;
	g->say_arg = arg;
	g->st.pid = getpid();
	if (strlen(state_path) >= sizeof(g->state_path))
		return tier_err_set(err, -ENAMETOOLONG, "daemon.state_file: path too long");
	strcpy(g->state_path, state_path);
	return leftovers(ctx, state_path, fn, arg, &found, err);
}

/* Writes the state file with what is changed now (or is about to be). */
static int save(struct tier_linux_guard *g, struct tier_err *err)
{
	int ret = tier_linux_kernel_state_save(g->state_path, &g->st, err);

	if (ret)
		tier_err_prefix(err, "daemon.state_file");
	else
		g->saved = true;
	return ret;
}

static void describe_loss(char *buf, size_t sz, const char *holder)
{
	snprintf(buf, sz,
		 "tierd cannot use DAMON while %s holds it and tracks with the next tracker; "
		 "lost: DAMON's access counts per address region of the managed processes%s",
		 holder,
		 strcmp(holder, "damon_stat") ? "" :
		 " (damon_stat publishes only system-wide figures of physical memory, "
		 "estimated_memory_bandwidth and memory_idle_ms_percentiles, with no "
		 "addresses: nothing to place pages by)");
}

int tier_linux_guard_damon_stat(struct tier_linux_guard *g, bool disable, struct tier_err *err)
{
	bool present, enabled;
	char loss[512];
	size_t i;
	int ret;

	ret = tier_linux_damon_module_read(&g->ctx, "damon_stat", &present, &enabled, err);
	if (ret)
		return ret;
	if (present && enabled && disable) {
		g->st.damon_stat = true;
		ret = save(g, err);
		if (!ret)
			ret = tier_linux_damon_module_set(&g->ctx, "damon_stat", false, err);
		if (ret) {
			g->st.damon_stat = false;
			return ret;
		}
		tier_sayf(g->say, g->say_arg, LOG_INFO,
		    "damon_stat switched off while tierd runs, so that DAMON can track the "
		    "managed processes (it is switched on again when tierd exits; "
		    "daemon.damon_stat: keep leaves it on)");
	} else if (present && enabled) {
		describe_loss(loss, sizeof(loss), "damon_stat");
		tier_sayf(g->say, g->say_arg, LOG_WARNING, "damon_stat kept on (daemon.damon_stat: keep): %s",
		    loss);
	}
	for (i = 0; tier_linux_damon_exclusive[i]; i++) {
		const char *m = tier_linux_damon_exclusive[i];

		if (!strcmp(m, "damon_stat") ||
		    tier_linux_damon_module_read(&g->ctx, m, &present, &enabled, NULL) || !enabled)
			continue;
		describe_loss(loss, sizeof(loss), m);
		tier_sayf(g->say, g->say_arg, LOG_WARNING,
		    "%s is enabled (the operator's memory policy; tierd leaves it): %s", m, loss);
	}
	return 0;
}

int tier_linux_guard_kernel_tiering(struct tier_linux_guard *g, bool disable,
				    struct tier_err *err)
{
	struct tier_linux_kernel_tiering kt;
	char desc[128];
	int ret;

	ret = tier_linux_kernel_tiering_read(&g->ctx, &kt, err);
	if (ret) {
		tier_sayf(g->say, g->say_arg, LOG_WARNING, "cannot read the kernel's tiering settings: %s",
		    err ? err->msg : "");
		return 0;
	}
	if (!tier_linux_kernel_tiering_active(&kt))
		return 0;
	tier_linux_kernel_tiering_describe(&kt, desc, sizeof(desc));
	if (!disable) {
		tier_sayf(g->say, g->say_arg, LOG_WARNING,
		    "the kernel's own tiering is on (%s) and will move pages tierd places; set "
		    "daemon.kernel_tiering: disable", desc);
		return 0;
	}
	kt.has_rate_limit = false;	/* switching off leaves the rate limit */
	g->st.tiering = kt;
	ret = save(g, err);
	if (!ret)
		ret = tier_linux_kernel_tiering_disable(&g->ctx, &kt, err);
	if (ret) {
		memset(&g->st.tiering, 0, sizeof(g->st.tiering));
		return ret;
	}
	tier_sayf(g->say, g->say_arg, LOG_INFO, "kernel tiering switched off while tierd runs (was %s)",
	    desc);
	return 0;
}

int tier_linux_guard_hint_faults(struct tier_linux_guard *g, struct tier_err *err)
{
	struct tier_linux_kernel_tiering kt;
	char desc[128];
	int ret;

	ret = tier_linux_kernel_tiering_read(&g->ctx, &kt, err);
	if (ret)
		return ret;
	g->st.tiering = kt;
	ret = save(g, err);
	if (!ret)
		ret = tier_linux_kernel_tiering_hint_only(&g->ctx, &kt, err);
	if (ret) {
		memset(&g->st.tiering, 0, sizeof(g->st.tiering));
		return ret;
	}
	tier_linux_kernel_tiering_describe(&kt, desc, sizeof(desc));
	tier_sayf(g->say, g->say_arg, LOG_INFO,
	    "kernel NUMA balancing takes hint faults for tierd and moves nothing while tierd runs "
	    "(numa_balancing=2, numa_balancing_promote_rate_limit_MBps=0, demotion off; was %s, "
	    "rate limit %llu)", desc, (unsigned long long)kt.rate_limit_mbps);
	return 0;
}

int tier_linux_guard_kdamond(struct tier_linux_guard *g, bool running, unsigned index,
			     pid_t pid, struct tier_err *err)
{
	if (running == g->st.has_kdamond &&
	    (!running || (index == g->st.kdamond && pid == g->st.kdamond_pid)))
		return 0;
	g->st.has_kdamond = running;
	g->st.kdamond = running ? index : 0;
	g->st.kdamond_pid = running ? pid : 0;
	if (!running && !g->saved)
		return 0;
	return save(g, err);
}

int tier_linux_guard_close(struct tier_linux_guard *g, struct tier_err *err)
{
	char done[512];
	int ret;

	if (!g->saved)
		return 0;
	ret = tier_linux_kernel_state_restore(&g->ctx, &g->st, done, sizeof(done), err);
	if (ret)
		return ret;
	if (done[0])
		tier_sayf(g->say, g->say_arg, LOG_INFO, "put back: %s", done);
	memset(&g->st.tiering, 0, sizeof(g->st.tiering));
	g->st.damon_stat = g->st.has_kdamond = false;
	g->saved = false;
	return tier_linux_kernel_state_remove(g->state_path, err);
}
