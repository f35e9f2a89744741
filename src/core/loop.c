/* loop.c - the driving loop that tierd and tiersim share. */
#include "core/loop.h"

#include <errno.h>
#include <string.h>

int tier_loop_init(struct tier_loop *l, const struct tier_env *env,
		   const struct tier_policy_ops *policy,
		   const struct tier_tracker_ops *tracker, void *tracker_priv,
		   struct tier_err *err)
{
	int ret;

	memset(l, 0, sizeof(*l));
	l->env = env;
	l->policy = policy;
	l->tracker = tracker;
	l->tracker_priv = tracker_priv;
	ret = policy->create(env, &l->policy_priv, err);
	if (ret) {
		tier_err_prefix(err, "policy %s", policy->name);
		l->policy_priv = NULL;
		return ret;
	}
	l->last_step_us = env->clock->now_us(env->clock_priv);
	return 0;
}

static void deliver(void *ctx, const struct tier_obs *obs, size_t n)
{
	struct tier_loop *l = ctx;

	l->observations += n;
	if (l->policy->observe)
		l->policy->observe(l->policy_priv, obs, n);
	if (l->watch)
		l->watch(l->watch_ctx, obs, n);
}

/* A policy's tick or resume failed with ret: err says so, named. */
static int policy_failed(const struct tier_loop *l, int ret, struct tier_err *err)
{
	if (!err || !err->msg[0])
		tier_err_set(err, ret, "%s", strerror(-ret));
	tier_err_prefix(err, "policy %s", l->policy->name);
	return ret;
}

int tier_loop_step(struct tier_loop *l, struct tier_err *err)
{
	uint64_t now;
	int ret;

	if (l->tracker) {
		ret = l->tracker->collect(l->tracker_priv, deliver, l, err);
		if (ret) {
			tier_err_prefix(err, "tracker %s", l->tracker->name);
			return ret;
		}
	}
	if (l->env->pause)
		l->env->pause(l->env->pause_ctx);
	now = l->env->clock->now_us(l->env->clock_priv);
	ret = l->policy->tick(l->policy_priv, now);
	if (ret)
		return policy_failed(l, ret, err);
	l->steps++;
	l->last_step_us = now;
	return 0;
}

bool tier_loop_held_back(const struct tier_loop *l)
{
	return l->policy->resume && l->policy->held_back &&
	       l->policy->held_back(l->policy_priv);
}

int tier_loop_resume(struct tier_loop *l, struct tier_err *err)
{
	int ret;

	if (!l->policy->resume)
		return 0;
	ret = l->policy->resume(l->policy_priv, l->env->clock->now_us(l->env->clock_priv));
	if (ret)
		return policy_failed(l, ret, err);
	l->resumes++;
	return 0;
}

int tier_loop_resize(struct tier_loop *l, struct tier_err *err)
{
	void *fresh;
	int ret;

	if (l->policy->resize) {
		ret = l->policy->resize(l->policy_priv);
		return ret ? tier_err_set(err, ret, "policy %s: cannot grow to %llu pages",
					  l->policy->name,
					  (unsigned long long)l->env->nr_pages) : 0;
	}
	ret = l->policy->create(l->env, &fresh, err);
	if (ret) {
		tier_err_prefix(err, "policy %s", l->policy->name);
		return ret;
	}
	l->policy->destroy(l->policy_priv);
	l->policy_priv = fresh;
	return 0;
}

void tier_loop_forget(struct tier_loop *l, uint64_t first, uint64_t nr)
{
	if (l->policy->forget)
		l->policy->forget(l->policy_priv, first, nr);
}

void tier_loop_release(struct tier_loop *l)
{
	if (l->policy && l->policy_priv)
		l->policy->destroy(l->policy_priv);
	l->policy_priv = NULL;
}
