/* probe_json.c - the probe report as JSON (json-c): the writer and the
 * reader of the document docs/probe.md describes, which `tierctl probe`
 * prints and saves (probe_file.c). */
#include "common/probe_out.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

/* A number printed with a fixed number of decimals; the object holds the
 * printed value, so what is saved and what is read back agree. */
static struct json_object *jnum(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/* 0 means "cannot say": JSON null. */
static struct json_object *jnum_or_null(double v, int decimals)
{
	return v > 0 ? jnum(v, decimals) : NULL;
}

static struct json_object *jpct(uint64_t bp)
{
	return jnum((double)bp / 100.0, bp % 100 ? 2 : 0);
}

static struct json_object *stat_json(const struct tier_probe_stat *s, int decimals)
{
	struct json_object *o;

	if (!s->nr_samples)
		return NULL;
	struct json_object *a;
	unsigned i;

	o = json_object_new_object();
	a = json_object_new_array_ext((int)s->nr_samples);
	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	json_object_object_add(o, "min", jnum(s->min, decimals));
	json_object_object_add(o, "q1", jnum(s->q1, decimals));
	json_object_object_add(o, "median", jnum(s->median, decimals));
	json_object_object_add(o, "q3", jnum(s->q3, decimals));
	json_object_object_add(o, "max", jnum(s->max, decimals));
	for (i = 0; i < s->nr_samples; i++)
		json_object_array_add(a, jnum(s->samples[i], decimals));
	json_object_object_add(o, "samples", a);
	return o;
}

static const enum tier_probe_sense senses[3] = {
	TIER_PROBE_LOWER_BETTER, TIER_PROBE_HIGHER_BETTER, TIER_PROBE_HIGHER_BETTER,
};

static struct json_object *best_json(const struct tier_probe_stat *s,
				     enum tier_probe_sense sense, int decimals)
{
	return s->nr_samples ? jnum(tier_probe_stat_best(s, sense), decimals) : NULL;
}

static struct json_object *int_or_null(int v)
{
	return v >= 0 ? json_object_new_int(v) : NULL;
}

static struct json_object *pair_json(const struct tier_probe_pair *p)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "initiator", json_object_new_int(p->initiator));
	json_object_object_add(o, "slit_distance", int_or_null(p->slit_distance));
	json_object_object_add(o, "buffer_bytes", json_object_new_uint64(p->buffer_bytes));
	json_object_object_add(o, "on_node_pct",
			       p->on_node_bp >= 0 ? jnum(p->on_node_bp / 100.0, 1) : NULL);
	json_object_object_add(o, "latency_ns", stat_json(&p->latency_ns, 1));
	json_object_object_add(o, "read_bandwidth_mbps", stat_json(&p->read_bw_mbps, 0));
	json_object_object_add(o, "write_bandwidth_mbps", stat_json(&p->write_bw_mbps, 0));
	json_object_object_add(o, "latency_ratio", jnum_or_null(p->latency_ratio, 3));
	json_object_object_add(o, "slit_ratio", jnum_or_null(p->slit_ratio, 3));
	json_object_object_add(o, "slit_mismatch", json_object_new_boolean(p->slit_mismatch));
	return o;
}

static struct json_object *ratios_json(const double *v)
{
	struct json_object *o = json_object_new_object();
	int f;

	for (f = 0; o && f < TIER_PROBE_NR_FIGURES; f++)
		json_object_object_add(o, tier_probe_figure_name(f), jnum_or_null(v[f], 3));
	return o;
}

static struct json_object *node_json(const struct tier_probe_node *n)
{
	static const char *const noise_keys[] = { "latency", "read_bandwidth", "write_bandwidth" };
	const struct tier_probe_pair *p = n->nr_from ? &n->from[0] : NULL;
	const struct tier_probe_stat *s[3] = { NULL, NULL, NULL };
	struct json_object *o = json_object_new_object();
	struct json_object *noise, *claim = NULL, *mm, *from;
	size_t i;
	int f;

	if (!o)
		return NULL;
	if (p) {
		s[0] = &p->latency_ns;
		s[1] = &p->read_bw_mbps;
		s[2] = &p->write_bw_mbps;
	}
	json_object_object_add(o, "id", json_object_new_int(n->id));
	json_object_object_add(o, "initiator", p ? json_object_new_int(p->initiator) : NULL);
	json_object_object_add(o, "reference", json_object_new_int(n->reference));
	json_object_object_add(o, "latency_ns", p ? best_json(s[0], senses[0], 1) : NULL);
	json_object_object_add(o, "read_bandwidth_mbps", p ? best_json(s[1], senses[1], 0) : NULL);
	json_object_object_add(o, "write_bandwidth_mbps", p ? best_json(s[2], senses[2], 0) : NULL);
	noise = json_object_new_object();
	for (f = 0; noise && f < 3; f++)
		json_object_object_add(noise, noise_keys[f],
				       s[f] && s[f]->nr_samples ?
				       jpct(tier_probe_stat_noise_bp(s[f], senses[f])) : NULL);
	json_object_object_add(o, "noise_pct", noise);
	if (n->has_claim) {
		claim = json_object_new_object();
		if (claim) {
			json_object_object_add(claim, "read_latency_ns",
					       json_object_new_int64(n->claim.read_latency_ns));
			json_object_object_add(claim, "write_latency_ns",
					       json_object_new_int64(n->claim.write_latency_ns));
			json_object_object_add(claim, "read_bandwidth_mbps",
					       json_object_new_int64(n->claim.read_bw_mbps));
			json_object_object_add(claim, "write_bandwidth_mbps",
					       json_object_new_int64(n->claim.write_bw_mbps));
		}
	}
	json_object_object_add(o, "claim", claim);
	json_object_object_add(o, "slit_distance", p ? int_or_null(p->slit_distance) : NULL);
	json_object_object_add(o, "ratio", ratios_json(n->ratio));
	json_object_object_add(o, "claimed_ratio", ratios_json(n->claimed_ratio));
	mm = json_object_new_array();
	for (f = 0; mm && f < TIER_PROBE_NR_FIGURES; f++)
		if (n->mismatch & (1u << f))
			json_object_array_add(mm, json_object_new_string(tier_probe_figure_name(f)));
	json_object_object_add(o, "mismatch", mm);
	json_object_object_add(o, "claim_mismatch", json_object_new_boolean(n->claim_mismatch));
	json_object_object_add(o, "kernel_rank", int_or_null(n->kernel_rank));
	json_object_object_add(o, "measured_adistance", jnum_or_null(n->measured_adistance, 0));
	json_object_object_add(o, "measured_rank", int_or_null(n->measured_rank));
	json_object_object_add(o, "order_mismatch", json_object_new_boolean(n->order_mismatch));
	from = json_object_new_array();
	for (i = 0; from && i < n->nr_from; i++)
		json_object_array_add(from, pair_json(&n->from[i]));
	json_object_object_add(o, "from", from);
	return o;
}

struct json_object *tier_probe_report_to_json(const struct tier_probe_report *r)
{
	struct json_object *root = json_object_new_object();
	struct json_object *inis = json_object_new_array();
	struct json_object *nodes = json_object_new_array();
	size_t i;

	if (!root || !inis || !nodes)
		goto out_nomem;
	json_object_object_add(root, "version", json_object_new_int(TIER_PROBE_FILE_VERSION));
	json_object_object_add(root, "tolerance_pct", jpct(r->tolerance_bp));
	json_object_object_add(root, "slit_tolerance_pct", jpct(r->slit_tolerance_bp));
	json_object_object_add(root, "rank_source",
			       json_object_new_string(tier_rank_source_name(r->rank_source)));
	json_object_object_add(root, "repeats", json_object_new_int64(r->nr_repeats));
	json_object_object_add(root, "buffer_bytes", json_object_new_uint64(r->buffer_bytes));
	json_object_object_add(root, "llc_bytes",
			       r->llc_bytes ? json_object_new_uint64(r->llc_bytes) : NULL);
	json_object_object_add(root, "chase_steps", json_object_new_uint64(r->nr_chase_steps));
	json_object_object_add(root, "stream_bytes", json_object_new_uint64(r->stream_bytes));
	for (i = 0; i < r->nr_initiators; i++) {
		struct json_object *o = json_object_new_object();

		if (!o)
			goto out_nomem;
		json_object_object_add(o, "id", json_object_new_int(r->initiators[i].id));
		json_object_object_add(o, "reference",
				       json_object_new_int(r->initiators[i].reference));
		json_object_object_add(o, "cpus",
				       json_object_new_uint64(r->initiators[i].nr_cpus));
		json_object_array_add(inis, o);
	}
	for (i = 0; i < r->nr_nodes; i++) {
		struct json_object *o = node_json(&r->nodes[i]);

		if (!o)
			goto out_nomem;
		json_object_array_add(nodes, o);
	}
	json_object_object_add(root, "initiators", inis);
	json_object_object_add(root, "nodes", nodes);
	return root;
out_nomem:
	json_object_put(root);
	json_object_put(inis);
	json_object_put(nodes);
	return NULL;
}

/* ---------------------------------------------------------------- reader */

struct loader {
	struct tier_err *err;
	char where[128];	/* "nodes[1].from[0]"; "" at the top */
};

static int bad(struct loader *l, const char *key, const char *what)
{
	return tier_err_set(l->err, -EINVAL, "%s%s%s: %s", l->where,
			    l->where[0] && key[0] ? "." : "", key, what);
}

/* The member key of o; NULL for a JSON null when nullable. */
static int member(struct loader *l, struct json_object *o, const char *key,
		  enum json_type type, bool nullable, struct json_object **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return bad(l, key, "missing");
	if (!v)
		return nullable ? 0 : bad(l, key, "is null");
	if (type == json_type_double ? !json_object_is_type(v, json_type_double) &&
				       !json_object_is_type(v, json_type_int)
				     : !json_object_is_type(v, type))
		return bad(l, key, type == json_type_double ? "not a number" :
				   type == json_type_int ? "not an integer" :
				   type == json_type_boolean ? "not true or false" :
				   type == json_type_string ? "not a string" :
				   type == json_type_array ? "not an array" : "not an object");
	*out = v;
	return 0;
}

/* A number >= 0; null (when nullable) reads as 0. */
static int get_num(struct loader *l, struct json_object *o, const char *key,
		   bool nullable, double *out)
{
	struct json_object *v;
	int ret = member(l, o, key, json_type_double, nullable, &v);

	*out = 0;
	if (ret || !v)
		return ret;
	*out = json_object_get_double(v);
	if (!(*out >= 0))
		return bad(l, key, "negative");
	return 0;
}

/* An integer in [min, max]; null (when nullable) reads as null_value. */
static int get_int(struct loader *l, struct json_object *o, const char *key,
		   bool nullable, int64_t min, int64_t max, int64_t null_value, int64_t *out)
{
	struct json_object *v;
	int ret = member(l, o, key, json_type_int, nullable, &v);

	*out = null_value;
	if (ret || !v)
		return ret;
	*out = json_object_get_int64(v);
	if (*out < min || *out > max)
		return bad(l, key, "out of range");
	return 0;
}

static int get_bool(struct loader *l, struct json_object *o, const char *key, bool *out)
{
	struct json_object *v;
	int ret = member(l, o, key, json_type_boolean, false, &v);

	*out = ret ? false : json_object_get_boolean(v);
	return ret;
}

enum { NO_INDEX = -1 };

/* Descends into key (key[idx] unless idx is NO_INDEX); leave() goes back. */
static void enter(struct loader *l, char *saved, size_t sz, const char *key, long idx)
{
	size_t len = strlen(l->where);

	snprintf(saved, sz, "%s", l->where);
	if (idx == NO_INDEX)
		snprintf(l->where + len, sizeof(l->where) - len, "%s%s", len ? "." : "", key);
	else
		snprintf(l->where + len, sizeof(l->where) - len, "%s%s[%ld]",
			 len ? "." : "", key, idx);
}

static void leave(struct loader *l, const char *saved)
{
	snprintf(l->where, sizeof(l->where), "%s", saved);
}

/* A stat is read back from its samples; the summary next to them in the
 * file is for people and is computed again. */
static int get_stat(struct loader *l, struct json_object *o, const char *key,
		    double step, struct tier_probe_stat *s)
{
	double v[TIER_PROBE_MAX_SAMPLES];
	struct json_object *obj, *a;
	char saved[sizeof(l->where)];
	size_t i, n;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = member(l, o, key, json_type_object, true, &obj);
	if (ret || !obj)
		return ret;
	enter(l, saved, sizeof(saved), key, NO_INDEX);
	ret = member(l, obj, "samples", json_type_array, false, &a);
	n = ret ? 0 : json_object_array_length(a);
	if (!ret && (n < 1 || n > TIER_PROBE_MAX_SAMPLES))
		ret = bad(l, "samples", "not 1 to 100 samples");
	for (i = 0; !ret && i < n; i++) {
		struct json_object *x = json_object_array_get_idx(a, i);

		if (!json_object_is_type(x, json_type_double) &&
		    !json_object_is_type(x, json_type_int))
			ret = bad(l, "samples", "not a list of numbers");
		else
			v[i] = json_object_get_double(x);
	}
	if (!ret && tier_probe_stat_compute(v, n, step, s))
		ret = bad(l, "samples", "a sample is negative");
	leave(l, saved);
	return ret;
}

static int get_ratios(struct loader *l, struct json_object *o, const char *key, double *v)
{
	struct json_object *obj;
	char saved[sizeof(l->where)];
	int f, ret;

	ret = member(l, o, key, json_type_object, false, &obj);
	if (ret)
		return ret;
	enter(l, saved, sizeof(saved), key, NO_INDEX);
	for (f = 0; !ret && f < TIER_PROBE_NR_FIGURES; f++)
		ret = get_num(l, obj, tier_probe_figure_name(f), true, &v[f]);
	leave(l, saved);
	return ret;
}

static int get_pair(struct loader *l, struct json_object *o, struct tier_probe_pair *p)
{
	int64_t v;
	double d = 0;
	int ret;

	ret = get_int(l, o, "initiator", false, 0, INT_MAX, 0, &v);
	p->initiator = (int)v;
	if (!ret)
		ret = get_int(l, o, "slit_distance", true, 0, INT_MAX, -1, &v);
	p->slit_distance = (int)v;
	if (!ret)
		ret = get_int(l, o, "buffer_bytes", false, 0, INT64_MAX, 0, &v);
	p->buffer_bytes = (uint64_t)v;
	if (!ret) {
		struct json_object *x;

		ret = member(l, o, "on_node_pct", json_type_double, true, &x);
		if (!ret)
			ret = get_num(l, o, "on_node_pct", true, &d);
		if (!ret && d > 100)
			ret = bad(l, "on_node_pct", "above 100");
		p->on_node_bp = x && !ret ? (int)(d * 100 + 0.5) : -1;
	}
	if (!ret)
		ret = get_stat(l, o, "latency_ns", TIER_PROBE_LATENCY_STEP, &p->latency_ns);
	if (!ret)
		ret = get_stat(l, o, "read_bandwidth_mbps", TIER_PROBE_BW_STEP, &p->read_bw_mbps);
	if (!ret)
		ret = get_stat(l, o, "write_bandwidth_mbps", TIER_PROBE_BW_STEP, &p->write_bw_mbps);
	if (!ret)
		ret = get_num(l, o, "latency_ratio", true, &p->latency_ratio);
	if (!ret)
		ret = get_num(l, o, "slit_ratio", true, &p->slit_ratio);
	if (!ret)
		ret = get_bool(l, o, "slit_mismatch", &p->slit_mismatch);
	return ret;
}

static int get_claim(struct loader *l, struct json_object *o, struct tier_probe_node *n)
{
	static const char *const keys[] = {
		"read_latency_ns", "write_latency_ns", "read_bandwidth_mbps", "write_bandwidth_mbps",
	};
	uint32_t *dst[] = {
		&n->claim.read_latency_ns, &n->claim.write_latency_ns,
		&n->claim.read_bw_mbps, &n->claim.write_bw_mbps,
	};
	struct json_object *c;
	char saved[sizeof(l->where)];
	size_t i;
	int64_t v;
	int ret;

	ret = member(l, o, "claim", json_type_object, true, &c);
	if (ret || !c)
		return ret;
	n->has_claim = true;
	enter(l, saved, sizeof(saved), "claim", NO_INDEX);
	for (i = 0; !ret && i < 4; i++) {
		ret = get_int(l, c, keys[i], false, 0, UINT32_MAX, 0, &v);
		*dst[i] = (uint32_t)v;
	}
	leave(l, saved);
	return ret;
}

static int get_node(struct loader *l, struct json_object *o, struct tier_probe_node *n)
{
	struct json_object *from, *mm;
	char saved[sizeof(l->where)];
	size_t i, nr;
	int64_t v;
	int ret, f;

	n->measured_rank = -1;
	ret = get_int(l, o, "id", false, 0, INT_MAX, 0, &v);
	n->id = (int)v;
	if (!ret)
		ret = get_int(l, o, "reference", false, 0, INT_MAX, 0, &v);
	n->reference = (int)v;
	if (!ret)
		ret = get_claim(l, o, n);
	if (!ret)
		ret = get_ratios(l, o, "ratio", n->ratio);
	if (!ret)
		ret = get_ratios(l, o, "claimed_ratio", n->claimed_ratio);
	if (!ret)
		ret = member(l, o, "mismatch", json_type_array, false, &mm);
	for (i = 0; !ret && i < json_object_array_length(mm); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(mm, i));

		for (f = 0; f < TIER_PROBE_NR_FIGURES; f++)
			if (name && !strcmp(name, tier_probe_figure_name(f)))
				break;
		if (f == TIER_PROBE_NR_FIGURES)
			ret = bad(l, "mismatch", "unknown figure");
		else
			n->mismatch |= 1u << f;
	}
	if (!ret)
		ret = get_bool(l, o, "claim_mismatch", &n->claim_mismatch);
	if (!ret)
		ret = get_int(l, o, "kernel_rank", true, 0, INT_MAX, -1, &v);
	n->kernel_rank = (int)v;
	if (!ret)
		ret = get_num(l, o, "measured_adistance", true, &n->measured_adistance);
	if (!ret)
		ret = get_int(l, o, "measured_rank", true, 0, INT_MAX, -1, &v);
	n->measured_rank = (int)v;
	if (!ret)
		ret = get_bool(l, o, "order_mismatch", &n->order_mismatch);
	if (!ret)
		ret = member(l, o, "from", json_type_array, false, &from);
	if (ret)
		return ret;
	nr = json_object_array_length(from);
	if (!nr)
		return bad(l, "from", "empty");
	n->from = calloc(nr, sizeof(*n->from));
	if (!n->from)
		return tier_err_set(l->err, -ENOMEM, "out of memory");
	n->nr_from = nr;
	for (i = 0; !ret && i < nr; i++) {
		struct json_object *p = json_object_array_get_idx(from, i);

		enter(l, saved, sizeof(saved), "from", (long)i);
		ret = json_object_is_type(p, json_type_object) ? get_pair(l, p, &n->from[i])
							       : bad(l, "", "not an object");
		leave(l, saved);
	}
	return ret;
}

static int get_source(struct loader *l, struct json_object *o, enum tier_rank_source *src)
{
	struct json_object *v;
	int s, ret = member(l, o, "rank_source", json_type_string, false, &v);

	if (ret)
		return ret;
	for (s = TIER_RANK_NONE; s <= TIER_RANK_SLIT; s++) {
		if (!strcmp(json_object_get_string(v), tier_rank_source_name(s))) {
			*src = s;
			return 0;
		}
	}
	return bad(l, "rank_source", "unknown source");
}

/* A tolerance in percent, 0 to TOLERANCE_MAX_PCT (what tierctl probe
 * --tolerance takes), as basis points. Anything larger (up to infinity,
 * which json-c reads) is refused before it is converted. */
enum { TOLERANCE_MAX_PCT = 1000 };
static int get_tolerance(struct loader *l, struct json_object *o, const char *key,
			 uint32_t *bp)
{
	double d;
	int ret = get_num(l, o, key, false, &d);

	*bp = 0;
	if (!ret && d > TOLERANCE_MAX_PCT)
		ret = bad(l, key, "above 1000");
	if (!ret)
		*bp = (uint32_t)(d * 100 + 0.5);
	return ret;
}

/* The report's settings, version first. */
static int get_settings(struct loader *l, struct json_object *o, struct tier_probe_report *r)
{
	int64_t v = 0;
	int ret;

	ret = get_int(l, o, "version", false, 0, INT_MAX, 0, &v);
	if (!ret && v != TIER_PROBE_FILE_VERSION)
		ret = tier_err_set(l->err, -EINVAL, "version %lld, expected %d",
				   (long long)v, TIER_PROBE_FILE_VERSION);
	if (!ret)
		ret = get_tolerance(l, o, "tolerance_pct", &r->tolerance_bp);
	if (!ret)
		ret = get_tolerance(l, o, "slit_tolerance_pct", &r->slit_tolerance_bp);
	if (!ret)
		ret = get_source(l, o, &r->rank_source);
	if (!ret)
		ret = get_int(l, o, "repeats", false, 0, UINT_MAX, 0, &v);
	r->nr_repeats = (unsigned)v;
	if (!ret)
		ret = get_int(l, o, "buffer_bytes", false, 0, INT64_MAX, 0, &v);
	r->buffer_bytes = (uint64_t)v;
	if (!ret)
		ret = get_int(l, o, "llc_bytes", true, 0, INT64_MAX, 0, &v);
	r->llc_bytes = (uint64_t)v;
	if (!ret)
		ret = get_int(l, o, "chase_steps", false, 0, INT64_MAX, 0, &v);
	r->nr_chase_steps = (uint64_t)v;
	if (!ret)
		ret = get_int(l, o, "stream_bytes", false, 0, INT64_MAX, 0, &v);
	r->stream_bytes = (uint64_t)v;
	return ret;
}

static int get_initiators(struct loader *l, struct json_object *inis,
			  struct tier_probe_report *r)
{
	char saved[sizeof(l->where)];
	size_t i, nr = json_object_array_length(inis);
	int64_t v = 0;
	int ret = 0;

	r->initiators = calloc(nr ? nr : 1, sizeof(*r->initiators));
	if (!r->initiators)
		return tier_err_set(l->err, -ENOMEM, "out of memory");
	r->nr_initiators = nr;
	for (i = 0; !ret && i < nr; i++) {
		struct json_object *p = json_object_array_get_idx(inis, i);
		struct tier_probe_initiator *ini = &r->initiators[i];

		enter(l, saved, sizeof(saved), "initiators", (long)i);
		if (!json_object_is_type(p, json_type_object)) {
			ret = bad(l, "", "not an object");
		} else {
			ret = get_int(l, p, "id", false, 0, INT_MAX, 0, &v);
			ini->id = (int)v;
			if (!ret)
				ret = get_int(l, p, "reference", false, 0, INT_MAX, 0, &v);
			ini->reference = (int)v;
			if (!ret)
				ret = get_int(l, p, "cpus", false, 0, INT_MAX, 0, &v);
			ini->nr_cpus = (size_t)v;
		}
		leave(l, saved);
	}
	return ret;
}

/* The nodes, sorted by id. r->nr_nodes counts the nodes read so far, so
 * that releasing r after an error frees what they hold. */
static int get_nodes(struct loader *l, struct json_object *nodes, struct tier_probe_report *r)
{
	char saved[sizeof(l->where)];
	size_t i, nr = json_object_array_length(nodes);
	int ret = 0;

	r->nodes = calloc(nr ? nr : 1, sizeof(*r->nodes));
	if (!r->nodes)
		return tier_err_set(l->err, -ENOMEM, "out of memory");
	for (i = 0; !ret && i < nr; i++) {
		struct json_object *p = json_object_array_get_idx(nodes, i);

		r->nr_nodes++;
		enter(l, saved, sizeof(saved), "nodes", (long)i);
		ret = json_object_is_type(p, json_type_object) ? get_node(l, p, &r->nodes[i])
							       : bad(l, "", "not an object");
		if (!ret && i > 0 && r->nodes[i].id <= r->nodes[i - 1].id)
			ret = bad(l, "id", "nodes not sorted by id");
		leave(l, saved);
	}
	return ret;
}

int tier_probe_report_from_json(struct json_object *o, struct tier_probe_report *r,
				struct tier_err *err)
{
	struct loader l = { .err = err };
	struct json_object *inis, *nodes;
	int ret;

	tier_probe_report_release(r);
	if (!json_object_is_type(o, json_type_object))
		return tier_err_set(err, -EINVAL, "not a JSON object");
	ret = get_settings(&l, o, r);
	if (!ret)
		ret = member(&l, o, "initiators", json_type_array, false, &inis);
	if (!ret)
		ret = member(&l, o, "nodes", json_type_array, false, &nodes);
	if (!ret)
		ret = get_initiators(&l, inis, r);
	if (!ret)
		ret = get_nodes(&l, nodes, r);
	if (ret)
		tier_probe_report_release(r);
	return ret;
}
