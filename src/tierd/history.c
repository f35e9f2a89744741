/* history.c - the daemon's last hour: managed bytes per tier and the bytes
 * promoted and demoted, one sample a second in a fixed ring, read back as
 * at most TIERD_HISTORY_MAX_POINTS points (tierctl history). */
#include "tierd/history.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void tierd_history_init(struct tierd_history *h)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
}

void tierd_history_release(struct tierd_history *h)
{
	pthread_mutex_destroy(&h->lock);
}

uint64_t tierd_tier_capacity(const struct tier_topology *topo, size_t r)
{
	const struct tier_node *node;
	uint64_t bytes = 0;
	size_t k;

	for (k = 0; r < topo->nr_tiers && k < topo->tiers[r].nr_nodes; k++)
		if ((node = tier_topology_node(topo, topo->tiers[r].nodes[k])))
			bytes += node->mem_total_bytes;
	return bytes;
}

/* Sample i, oldest first (lock held). */
static const struct tierd_history_sample *sample_at(const struct tierd_history *h, size_t i)
{
	return &h->ring[(h->head + TIERD_HISTORY_SAMPLES - h->nr + i) % TIERD_HISTORY_SAMPLES];
}

bool tierd_history_due(struct tierd_history *h, uint64_t now_us)
{
	bool due;

	pthread_mutex_lock(&h->lock);
	/* A tenth short of a second: steps that drift late by a few
	 * milliseconds must not skip one second in ten. */
	due = !h->nr || now_us - sample_at(h, h->nr - 1)->t_us >= TIERD_HISTORY_SAMPLE_US * 9 / 10;
	pthread_mutex_unlock(&h->lock);
	return due;
}

void tierd_history_step(struct tierd_history *h, const struct tier_topology *topo,
			const uint64_t tier_bytes[TIER_MAX_TIERS], uint64_t promoted_bytes,
			uint64_t demoted_bytes, uint64_t now_us)
{
	struct tierd_history_sample s = { .t_us = now_us };
	uint64_t cap[TIER_MAX_TIERS] = { 0 };
	size_t r, nr_tiers = topo->nr_tiers < TIER_MAX_TIERS ? topo->nr_tiers : TIER_MAX_TIERS;

	if (!tierd_history_due(h, now_us))
		return;
	for (r = 0; r < nr_tiers; r++) {
		s.tier_bytes[r] = tier_bytes[r];
		cap[r] = tierd_tier_capacity(topo, r);
	}
	s.promoted_bytes = promoted_bytes;
	s.demoted_bytes = demoted_bytes;
	pthread_mutex_lock(&h->lock);
	h->ring[h->head] = s;
	h->head = (h->head + 1) % TIERD_HISTORY_SAMPLES;
	if (h->nr < TIERD_HISTORY_SAMPLES)
		h->nr++;
	h->taken++;
	h->nr_tiers = nr_tiers;
	memcpy(h->capacity_bytes, cap, sizeof(cap));
	pthread_mutex_unlock(&h->lock);
}

/* A count that went back (a backend that restarted its count) adds 0. */
static uint64_t delta(uint64_t from, uint64_t to)
{
	return to > from ? to - from : 0;
}

static int parse_args(struct json_object *args, uint64_t *seconds, uint64_t *points,
		      struct tier_err *err)
{
	static const struct {
		const char *key;
		uint64_t min, max;
	} limits[] = {
		{ "seconds", 1, TIERD_HISTORY_SAMPLES },
		{ "points", 1, TIERD_HISTORY_MAX_POINTS },
	};
	uint64_t *val[2] = { seconds, points };
	size_t i;

	json_object_object_foreach(args, key, v) {
		for (i = 0; i < 2; i++)
			if (!strcmp(key, limits[i].key))
				break;
		if (i == 2)
			return tier_err_set(err, -EINVAL, "history: unknown argument '%.32s'", key);
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < (int64_t)limits[i].min ||
		    json_object_get_int64(v) > (int64_t)limits[i].max)
			return tier_err_set(err, -EINVAL, "history: '%s' must be an integer in %llu..%llu",
					    key, (unsigned long long)limits[i].min,
					    (unsigned long long)limits[i].max);
		*val[i] = (uint64_t)json_object_get_int64(v);
	}
	return 0;
}

static struct json_object *u64_array(const uint64_t *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_uint64(v[i]));
	return a;
}

struct json_object *tierd_history_json(struct tierd_history *h, const struct tier_topology *topo,
				       struct json_object *args, uint64_t now_us, int *ret,
				       struct tier_err *err)
{
	uint64_t seconds = TIERD_HISTORY_SAMPLES, points = TIERD_HISTORY_DEFAULT_POINTS;
	uint64_t step_us, nb, b, cap[TIER_MAX_TIERS];
	struct tierd_history_sample *copy, zero = { 0 };
	bool from_start;
	struct json_object *res, *tiers, *pts;
	size_t nr, nr_tiers, i, r, k;

	*ret = parse_args(args, &seconds, &points, err);
	if (*ret)
		return NULL;
	/* Buckets of whole seconds, the last ending now: 3600 s in 360
	 * points are 10 s each; 100 s in 360 points are 1 s each (100). */
	step_us = (seconds + points - 1) / points * TIERD_HISTORY_SAMPLE_US;
	nb = (seconds * TIERD_HISTORY_SAMPLE_US + step_us - 1) / step_us;
	copy = malloc(sizeof(*copy) * TIERD_HISTORY_SAMPLES);
	if (!copy) {
		*ret = tier_err_set(err, -ENOMEM, "history: out of memory");
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	nr = h->nr;
	from_start = h->taken == h->nr;
	for (i = 0; i < nr; i++)
		copy[i] = *sample_at(h, i);
	nr_tiers = h->nr_tiers;
	memcpy(cap, h->capacity_bytes, sizeof(cap));
	pthread_mutex_unlock(&h->lock);

	res = json_object_new_object();
	tiers = json_object_new_array();
	pts = json_object_new_array();
	for (r = 0; r < nr_tiers; r++) {
		struct json_object *t = json_object_new_object(), *nodes = json_object_new_array();

		for (k = 0; r < topo->nr_tiers && k < topo->tiers[r].nr_nodes; k++)
			json_object_array_add(nodes, json_object_new_int(topo->tiers[r].nodes[k]));
		json_object_object_add(t, "rank", json_object_new_int((int)r));
		json_object_object_add(t, "nodes", nodes);
		json_object_object_add(t, "capacity_bytes", json_object_new_uint64(cap[r]));
		json_object_array_add(tiers, t);
	}
	/* Walk the samples once, oldest first; bucket b ends at
	 * now - (nb - 1 - b) * step. A bucket's occupancy is its last
	 * sample's; its moves are the counts' growth from the last sample
	 * before it (from 0 for the daemon's first sample: what its first
	 * step moved counts; from its own first for the oldest kept of a
	 * ring that went round). */
	i = 0;
	for (b = 0; b < nb; b++) {
		const struct tierd_history_sample *first = NULL, *last = NULL, *base;
		struct json_object *p;
		uint64_t end, start;

		if ((nb - 1 - b) * step_us > now_us)
			continue;
		end = now_us - (nb - 1 - b) * step_us;
		start = end > step_us ? end - step_us : 0;
		while (i < nr && copy[i].t_us <= start)
			i++;
		while (i < nr && copy[i].t_us <= end) {
			if (!first)
				first = &copy[i];
			last = &copy[i];
			i++;
		}
		if (!last)
			continue;
		base = first > copy ? first - 1 : from_start ? &zero : first;
		p = json_object_new_object();
		/* + 0.0: the newest point ends at 0, not -0. */
		json_object_object_add(p, "end_s",
				       json_object_new_double(-(double)(now_us - end) / 1e6 + 0.0));
		json_object_object_add(p, "tier_bytes", u64_array(last->tier_bytes, nr_tiers));
		json_object_object_add(p, "promoted_bytes",
				       json_object_new_uint64(delta(base->promoted_bytes, last->promoted_bytes)));
		json_object_object_add(p, "demoted_bytes",
				       json_object_new_uint64(delta(base->demoted_bytes, last->demoted_bytes)));
		json_object_array_add(pts, p);
	}
	json_object_object_add(res, "sample_ms", json_object_new_uint64(TIERD_HISTORY_SAMPLE_US / 1000));
	json_object_object_add(res, "seconds", json_object_new_uint64(seconds));
	json_object_object_add(res, "step_s", json_object_new_uint64(step_us / TIERD_HISTORY_SAMPLE_US));
	json_object_object_add(res, "samples", json_object_new_uint64(nr));
	json_object_object_add(res, "tiers", tiers);
	json_object_object_add(res, "points", pts);
	free(copy);
	*ret = 0;
	return res;
}
