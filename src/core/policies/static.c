/* static.c - the baseline: pages stay where first touch put them. */
#include <errno.h>
#include <stdlib.h>

#include "core/policy.h"

static int static_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	(void)env;
	(void)err;
	*priv = NULL;
	return 0;
}

static void static_destroy(void *priv)
{
	(void)priv;
}

static int static_tick(void *priv, uint64_t now_us)
{
	(void)priv;
	(void)now_us;
	return 0;
}

const struct tier_policy_ops tier_policy_static = {
	.name = "static",
	.description = "first touch, no migration (baseline)",
	.obs_kinds = 0,
	.default_tracker = "none",
	.interval_us = 1000000,
	.create = static_create,
	.destroy = static_destroy,
	.tick = static_tick,
};
