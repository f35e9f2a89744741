/* reload.c - a configuration loaded and put in force: the file (at start,
 * and again on SIGHUP or tierctl reload) and the control groups' rules (at
 * start, on reload, after tierctl cgroup set). */
#include "tierd/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/config_yaml.h"

int tierd_config_load(const struct tierd_args *args, struct tier_config *cfg,
		      struct tier_err *err)
{
	int ret;

	if (!args->config_given && access(args->config, F_OK) && errno == ENOENT)
		ret = tier_config_init(cfg) ? tier_err_set(err, -ENOMEM, "out of memory") : 0;
	else
		ret = tier_config_load_file(args->config, cfg, err);
	if (!ret && args->metrics && tier_config_set_string(&cfg->metrics_addr, args->metrics))
		ret = tier_err_set(err, -ENOMEM, "out of memory");
	return ret;
}

static bool same_string(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The first half of tierd_cgroups_apply: the rules to the backend, and
 * into *merged (release it) for the second half, which cannot fail. */
static int cgroups_set(struct tierd *d, const struct tier_config *cfg, bool strict,
		       struct tierd_rules *merged, struct tier_err *err)
{
	int ret = tierd_rules_merge(cfg, &d->rt_rules, merged);

	if (ret)
		return tier_err_set(err, ret, "cgroups: %s", strerror(-ret));
	if (!d->be->set_groups) {
		if (strict) {
			tierd_rules_release(merged);
			return tier_err_set(err, -EOPNOTSUPP, "cgroups: %s has no control groups",
					    d->be->name);
		}
		if (merged->n)
			tierd_log(&d->log, LOG_WARNING, "cgroups: %s has no control groups; rules ignored",
				  d->be->name);
		return 0;
	}
	ret = d->be->set_groups(d->be, merged->r, merged->n, err);
	if (ret)
		tierd_rules_release(merged);
	return ret;
}

static void cgroups_commit(struct tierd *d, struct tierd_rules *merged)
{
	tierd_rules_release(&d->rules);
	d->rules = *merged;
}

int tierd_cgroups_apply(struct tierd *d, const struct tier_config *cfg, bool strict,
			struct tier_err *err)
{
	struct tierd_rules merged;
	int ret = cgroups_set(d, cfg, strict, &merged, err);

	if (!ret)
		cgroups_commit(d, &merged);
	return ret;
}

/* Loads the configuration again and puts it in force at this safe point
 * between steps: interval, budget, log level, nice, process selection, control
 * groups; the policy is re-created only when its name changed; topology,
 * socket and metrics endpoint changes need a restart. All or nothing: what
 * can fail (the file, the new policy, the backend's control groups) comes
 * first, with the running configuration untouched; what follows cannot
 * fail. */
int tierd_reload(struct tierd *d, struct tier_err *err)
{
	const struct tier_policy_ops *pol = NULL;
	struct tierd_rules merged;
	struct tier_config fresh;
	struct tier_loop nl;
	int ret;

	ret = tierd_config_load(d->args, &fresh, err);
	if (ret)
		goto out_reject;
	if (strcmp(fresh.policy, d->cfg.policy)) {
		pol = tier_policy_find(fresh.policy);
		if (!pol) {
			ret = tier_err_set(err, -EINVAL, "%s: policy.name: unknown policy '%s'",
					   d->args->config, fresh.policy);
			goto out_reject;
		}
	}
	if (strcmp(fresh.socket_path, d->cfg.socket_path) || fresh.nr_tiers != d->cfg.nr_tiers ||
	    strcmp(fresh.sysfs_root, d->cfg.sysfs_root))
		tierd_log(&d->log, LOG_WARNING,
			  "reload: socket and topology changes take effect at restart");
	if (!same_string(fresh.metrics_addr, d->cfg.metrics_addr))
		tierd_log(&d->log, LOG_WARNING,
			  "reload: daemon.metrics changes take effect at restart (until then: %s%s%s)",
			  d->cfg.metrics_addr ? "http://" : "no endpoint",
			  d->cfg.metrics_addr ? d->cfg.metrics_addr : "",
			  d->cfg.metrics_addr ? "/metrics" : "");
	if (pol) {
		ret = tier_loop_init(&nl, d->be->env, pol, d->be->tracker, d->be->tracker_priv, err);
		if (ret)
			goto out_reject;
	}
	/* Last of what can fail: the backend then holds the new rules. */
	ret = cgroups_set(d, &fresh, false, &merged, err);
	if (ret)
		goto out_loop;

	if (pol) {
		nl.watch = d->loop.watch;
		nl.watch_ctx = d->loop.watch_ctx;
		tier_loop_release(&d->loop);
		d->loop = nl;
		tierd_log(&d->log, LOG_INFO, "policy is now %s", pol->name);
	}
	cgroups_commit(d, &merged);
	if (!d->args->machine && fresh.nice != d->cfg.nice)
		tierd_set_nice(d, fresh.nice);
	d->be->env->budget_bytes_per_s = fresh.budget_bytes_per_s;
	__atomic_store_n(&d->log.level, fresh.log_level, __ATOMIC_RELAXED);
	if (d->be->reconfigure)
		d->be->reconfigure(d->be, &fresh);
	{
		/* The socket and the metrics endpoint in use stay until a restart. */
		char *sock = fresh.socket_path, *metrics = fresh.metrics_addr;

		fresh.socket_path = d->cfg.socket_path;
		d->cfg.socket_path = sock;
		fresh.metrics_addr = d->cfg.metrics_addr;
		d->cfg.metrics_addr = metrics;
	}
	tier_config_release(&d->cfg);
	/* The step thread takes a new interval from the next step on. */
	d->cfg = fresh;
	tierd_log(&d->log, LOG_INFO, "configuration reloaded from %s", d->args->config);
	return 0;
out_loop:
	if (pol)
		tier_loop_release(&nl);
out_reject:
	tierd_log(&d->log, LOG_ERR, "reload rejected, keeping the running configuration: %s",
		  err->msg);
	tier_config_release(&fresh);
	return ret;
}
