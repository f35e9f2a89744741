/* procs.h - the `processes` request (tierctl top): each managed process's
 * managed bytes, where they sit by tier, and how much of it the policy
 * counts hot (wants in the fastest tier). docs/protocol.md.
 *
 * Costs: one walk of the managed pages' nodes (O(pages), as `status`),
 * and for each process listed at most TIERD_PROCS_HOT_SAMPLES pages asked
 * of the policy's explain hook, evenly spaced over its pages.
 */
#ifndef TIERD_PROCS_H
#define TIERD_PROCS_H

#include <json-c/json.h>

#include "core/err.h"
#include "core/loop.h"
#include "core/world.h"

/* Processes a request lists at most, and when it names no limit. */
#define TIERD_PROCS_MAX 1024
#define TIERD_PROCS_DEFAULT 64
/* Pages per process the hot share is estimated from (+- 3% at 1024). */
#define TIERD_PROCS_HOT_SAMPLES 1024

/* args {"limit":N} (optional). The result, or NULL with *ret and err
 * set: -EINVAL (bad arguments), -EOPNOTSUPP (a world without processes),
 * -ENOMEM. */
struct json_object *tierd_procs_json(struct tier_world *be, const struct tier_loop *loop,
				     struct json_object *args, int *ret, struct tier_err *err);

#endif
