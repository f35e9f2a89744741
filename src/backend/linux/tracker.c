/* tracker.c - the Linux trackers, best first, and picking one at start-up. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"

const struct tier_linux_tracker_ops *const tier_linux_trackers[] = {
	&tier__linux_tracker_combo,
	&tier__linux_tracker_damon,
	&tier__linux_tracker_idle,
	&tier__linux_tracker_softdirty,
	&tier__linux_tracker_perf,
	&tier__linux_tracker_combo_hint,
	&tier__linux_tracker_hint,
	NULL,
};

const struct tier_linux_tracker_ops *tier_linux_tracker_find(const char *name)
{
	size_t i;

	for (i = 0; name && tier_linux_trackers[i]; i++)
		if (!strcmp(tier_linux_trackers[i]->name, name))
			return tier_linux_trackers[i];
	return NULL;
}

const char *tier_linux_writer_time_name(enum tier_linux_writer_time wt)
{
	switch (wt) {
	case TIER_LINUX_WT_SCHEDSTAT:
		return "schedstat";
	case TIER_LINUX_WT_CPU_CLOCK:
		return "cpu-clock";
	case TIER_LINUX_WT_WALL:
		return "wall";
	default:
		return NULL;
	}
}

double tier_linux_tracker_budget(const struct tier_linux_tracker_ops *t, double max_cpu_percent,
				 double *kthread_percent, double *thread_percent)
{
	unsigned parts = 1u + t->kthreads + t->own_thread;
	double part = max_cpu_percent / parts;

	*kthread_percent = t->kthreads ? part : 0;
	*thread_percent = t->own_thread ? part : 0;
	return 1.0 / parts;
}

double tier_linux_step_share(double own, double max_cpu_percent, double others_percent)
{
	double left;

	if (max_cpu_percent <= 0)
		return own;
	left = 1.0 - (others_percent > 0 ? others_percent : 0) / max_cpu_percent;
	if (left > 1)
		left = 1;
	return left > own ? left : own;
}

double tier_linux_others_update(struct tier_linux_others *o, uint64_t now_us, double cpu_s,
				double start_percent)
{
	double dt, rate;

	if (!o->at_us) {
		o->at_us = now_us;
		o->cpu_s = cpu_s;
		o->percent = start_percent;
		return o->percent;
	}
	if (now_us < o->at_us + 1000000)
		return o->percent;
	dt = (double)(now_us - o->at_us);
	rate = (cpu_s - o->cpu_s) / (dt / 1e6) * 100;
	o->percent += -expm1(-dt / TIER_LINUX_OTHERS_TAU_US) * (rate - o->percent);
	o->cpu_s = cpu_s;
	o->at_us = now_us;
	return o->percent;
}

/* Appends "line\n" to why, cut to fit. */
static void why_add(char *why, size_t why_sz, const char *line)
{
	size_t len;

	if (!why || !why_sz)
		return;
	len = strlen(why);
	if (len + 1 < why_sz)
		snprintf(why + len, why_sz - len, "%s\n", line);
}

int tier_linux_tracker_pick(const struct tier_linux_ctx *ctx, const char *wanted,
			    const struct tier_linux_tracker_ops **out, char *why, size_t why_sz)
{
	const struct tier_linux_tracker_ops *chosen = NULL;
	struct tier_err err;
	bool any = !wanted || !strcmp(wanted, "auto");
	size_t i;
	int ret, first_ret = 0;

	*out = NULL;
	if (why && why_sz)
		why[0] = '\0';
	if (!any && !tier_linux_tracker_find(wanted)) {
		char line[256];
		size_t len;

		len = (size_t)snprintf(line, sizeof(line), "unknown tracker '%s' (known:", wanted);
		for (i = 0; tier_linux_trackers[i] && len < sizeof(line); i++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %s",
						tier_linux_trackers[i]->name);
		if (len < sizeof(line))
			snprintf(line + len, sizeof(line) - len, ", auto)");
		why_add(why, why_sz, line);
		return -EINVAL;
	}
	/* Every tracker is probed, so the log tells what this machine lacks
	 * even when the best one runs. */
	for (i = 0; tier_linux_trackers[i]; i++) {
		const struct tier_linux_tracker_ops *t = tier_linux_trackers[i];

		if (!any && strcmp(t->name, wanted))
			continue;
		tier_err_clear(&err);
		ret = t->probe(ctx, &err);
		if (ret) {
			if (!err.msg[0])
				snprintf(err.msg, sizeof(err.msg), "%s: unavailable (%s)", t->name,
					 strerror(-ret));
			why_add(why, why_sz, err.msg);
			if (!first_ret)
				first_ret = ret;
			continue;
		}
		if (!chosen)
			chosen = t;
	}
	if (!chosen)
		return any ? -ENODEV : first_ret;
	*out = chosen;
	return 0;
}
