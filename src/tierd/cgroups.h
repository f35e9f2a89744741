/* cgroups.h - the daemon's control-group rules (the cgroups section of the
 * config plus what `tierctl cgroup set` changed at run time) and the
 * requests that read and change them, and `explain`. */
#ifndef TIERD_CGROUPS_H
#define TIERD_CGROUPS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/world.h"
#include "tierd/log.h"

/* Names of enum tier_hint, as the protocol and tierctl spell them. */

/* A list of rules (owned paths). */
struct tierd_rules {
	struct tier_config_cgroup *r;
	size_t n;
};

void tierd_rules_release(struct tierd_rules *l);

/* Sets the rule of path (replacing one there). Returns 0 or -ENOMEM /
 * -E2BIG (too many groups). */
int tierd_rules_put(struct tierd_rules *l, const char *path, const struct tier_group_rule *rule);

/* Removes the rule of path. Returns 0 or -ENOENT. */
int tierd_rules_del(struct tierd_rules *l, const char *path);

/* The rules in force: the file's, then the run-time ones for paths the
 * file does not name, into *out (release it). Returns 0 or -errno. */
int tierd_rules_merge(const struct tier_config *cfg, const struct tierd_rules *runtime,
		      struct tierd_rules *out);

/* cgroup-set: {"path":P, "tier_max":["0=128M"], "tier_min":[...],
 * "weight":N, "clear":true}: the change of path's run-time rule, merged
 * over the rule in force (rules). Returns 0 or -EINVAL with err set. */
int tierd_cgroup_set_args(struct json_object *args, const struct tierd_rules *rules,
			  char **path, struct tier_group_rule *rule, bool *clear,
			  struct tier_err *err);

/* The result of `cgroups`: every rule with its figures per tier. */
struct json_object *tierd_cgroups_json(struct tier_world *be, const struct tierd_rules *rules);

/* The result of `explain`: pages [addr, addr + len) of pid (at most 64),
 * each with its node, tier, hint, group and the policy's account. Returns
 * NULL with err set on failure (-ESRCH, -ENOENT, -EOPNOTSUPP). */
struct json_object *tierd_explain_json(struct tier_world *be, const struct tier_loop *loop,
				       pid_t pid, uint64_t addr, uint64_t len, int *ret,
				       struct tier_err *err);

#endif
