/* history.h - the daemon's recent past (tierctl history): the managed
 * bytes in each tier and the bytes promoted and demoted, sampled at most
 * once a second from the steps, for the last hour, and the `history`
 * request that reads them (docs/protocol.md).
 *
 * Costs: a fixed ring of TIERD_HISTORY_SAMPLES samples (about 300 KiB, no
 * allocation); a sample stores the managed bytes per tier its caller
 * counted (the daemon: exactly, with status's counts, core/tiercount.h, at
 * the cost of what changed). A request is O(samples kept).
 *
 * Thread-safe: the ring has its own mutex, so the request may be answered
 * from another thread than the one that steps.
 */
#ifndef TIERD_HISTORY_H
#define TIERD_HISTORY_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/policy.h"
#include "core/topology.h"

/* One hour of one-second samples. */
#define TIERD_HISTORY_SAMPLES 3600
#define TIERD_HISTORY_SAMPLE_US UINT64_C(1000000)
/* Points of a request: at most, and when it names none. */
#define TIERD_HISTORY_MAX_POINTS 720
#define TIERD_HISTORY_DEFAULT_POINTS 360

struct tierd_history_sample {
	uint64_t t_us;				/* tier_linux_now_us() */
	uint64_t tier_bytes[TIER_MAX_TIERS];	/* managed bytes per tier rank */
	uint64_t promoted_bytes;		/* so far (the backend's count) */
	uint64_t demoted_bytes;
};

struct tierd_history {
	pthread_mutex_t lock;			/* guards everything below */
	struct tierd_history_sample ring[TIERD_HISTORY_SAMPLES];
	size_t head;				/* the next slot to write */
	size_t nr;				/* samples kept */
	uint64_t taken;				/* samples ever */
	size_t nr_tiers;			/* of the last sample */
	uint64_t capacity_bytes[TIER_MAX_TIERS];	/* per tier, of the last sample */
};

void tierd_history_init(struct tierd_history *h);
void tierd_history_release(struct tierd_history *h);

/* The capacity of tier rank r: its nodes' memory. */
uint64_t tierd_tier_capacity(const struct tier_topology *topo, size_t r);

/* Whether a sample is due at now_us (the last is a second old or more). */
bool tierd_history_due(struct tierd_history *h, uint64_t now_us);

/* After a step at now_us (tier_linux_now_us()): a sample of the managed
 * bytes in each tier rank of topo (tier_bytes[rank]) and the bytes moved so
 * far, unless the last is younger than a second. */
void tierd_history_step(struct tierd_history *h, const struct tier_topology *topo,
			const uint64_t tier_bytes[TIER_MAX_TIERS], uint64_t promoted_bytes,
			uint64_t demoted_bytes, uint64_t now_us);

/* A `history` request: args {"seconds":S, "points":P} (both optional:
 * the hour, TIERD_HISTORY_DEFAULT_POINTS). Its result (docs/protocol.md),
 * or NULL with *ret and err set: -EINVAL (bad arguments), -ENOMEM. */
struct json_object *tierd_history_json(struct tierd_history *h, const struct tier_topology *topo,
				       struct json_object *args, uint64_t now_us, int *ret,
				       struct tier_err *err);

#endif
