/* history.h - `tierctl history`: the daemon's last hour as tierctl reads
 * it from the `history` request (docs/protocol.md), and its drawing. */
#ifndef TIERCTL_HISTORY_H
#define TIERCTL_HISTORY_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/topology.h"

struct tierctl_history {
	char machine[64];			/* "sim:dram-cxl", "linux" */
	uint64_t seconds;			/* the window */
	uint64_t step_s;			/* a point's span */
	size_t nr_tiers;
	uint64_t capacity_bytes[TIER_MAX_TIERS];
	size_t nr_points;			/* oldest first */
	double *end_s;				/* [nr_points], <= 0: now is 0 */
	uint64_t *tier_bytes;			/* [nr_points * nr_tiers] */
	uint64_t *promoted_bytes;		/* [nr_points], in the point's span */
	uint64_t *demoted_bytes;
};

/* Reads the result of a `history` request into h. Returns 0, or -EPROTO
 * with err naming the field the answer lacks; -ENOMEM. */
int tierctl_history_parse(struct json_object *res, struct tierctl_history *h,
			  struct tier_err *err);
void tierctl_history_release(struct tierctl_history *h);

/* Draws h into the PNG file path: the managed bytes per tier over time
 * above, the bytes promoted and demoted per second below. Returns 0 or
 * -errno with err set ("--png FILE: ..."). */
int tierctl_history_png(const struct tierctl_history *h, const char *path, struct tier_err *err);

#endif
