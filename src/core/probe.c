/* probe.c - measured memory performance, judged against the firmware's
 * claims. Pure logic: no OS calls. See probe.h. */
#include "core/probe.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/nodelist.h"

void tier_probe_report_init(struct tier_probe_report *r)
{
	memset(r, 0, sizeof(*r));
	r->rank_source = TIER_RANK_NONE;
	r->tolerance_bp = TIER_PROBE_TOLERANCE_BP;
	r->slit_tolerance_bp = TIER_PROBE_SLIT_TOLERANCE_BP;
}

void tier_probe_report_release(struct tier_probe_report *r)
{
	size_t i;

	for (i = 0; i < r->nr_nodes; i++)
		free(r->nodes[i].from);
	free(r->nodes);
	free(r->initiators);
	tier_probe_report_init(r);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* v to the nearest multiple of step; k / 10.0 is the double nearest to the
 * decimal k/10, the same one a reader of "%.1f" gets back. */
static double snap(double v, double step)
{
	double k;

	if (step <= 0)
		return v;
	k = (double)(uint64_t)(v / step + 0.5);
	return step < 1 ? k / (1 / step) : k * step;
}

/* Median of sorted v[0..n-1], n > 0. */
static double median_of(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int tier_probe_stat_compute(const double *samples, size_t nr, double step,
			    struct tier_probe_stat *out)
{
	double *v = out->samples;
	size_t i, h;

	memset(out, 0, sizeof(*out));
	if (!nr || nr > TIER_PROBE_MAX_SAMPLES)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!isfinite(samples[i]) || samples[i] < 0 ||
		    samples[i] / (step > 0 ? step : 1) >= 1e18) {
			memset(out, 0, sizeof(*out));
			return -EINVAL;
		}
		v[i] = snap(samples[i], step);
	}
	qsort(v, nr, sizeof(*v), cmp_double);
	h = (nr + 1) / 2;	/* each half, with the median when nr is odd */
	out->min = v[0];
	out->max = v[nr - 1];
	out->median = snap(median_of(v, nr), step);
	out->q1 = snap(median_of(v, h), step);
	out->q3 = snap(median_of(v + nr - h, h), step);
	out->nr_samples = (unsigned)nr;
	return 0;
}

double tier_probe_stat_best(const struct tier_probe_stat *s, enum tier_probe_sense sense)
{
	if (!s->nr_samples)
		return 0;
	return sense == TIER_PROBE_LOWER_BETTER ? s->min : s->max;
}

uint32_t tier_probe_stat_noise_bp(const struct tier_probe_stat *s, enum tier_probe_sense sense)
{
	double best = tier_probe_stat_best(s, sense), gap, bp;

	if (s->nr_samples < 2)
		return 0;
	gap = sense == TIER_PROBE_LOWER_BETTER ? s->samples[1] - s->samples[0]
					       : s->samples[s->nr_samples - 1] -
						 s->samples[s->nr_samples - 2];
	if (gap <= 0)
		return 0;
	if (best <= 0)
		return UINT32_MAX;
	bp = gap / best * 10000.0;
	return bp >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(bp + 0.5);
}

static bool measured(const struct tier_probe_stat *s)
{
	return s->nr_samples > 0 && s->min > 0;
}

static double lat_best(const struct tier_probe_stat *s)
{
	return tier_probe_stat_best(s, TIER_PROBE_LOWER_BETTER);
}

static double bw_best(const struct tier_probe_stat *s)
{
	return tier_probe_stat_best(s, TIER_PROBE_HIGHER_BETTER);
}

int tier_probe_select_nodes(const struct tier_topology *topo, const char *list,
			    int **ids, size_t *nr, struct tier_err *err)
{
	char online[256];
	int *online_ids;
	size_t i, j;
	int ret;

	*ids = NULL;
	*nr = 0;
	ret = tier_nodelist_parse(list, ids, nr, err);
	if (ret)
		return ret;
	if (!*nr)
		return tier_err_set(err, -EINVAL, "empty node list");
	online_ids = malloc((topo->nr_nodes ? topo->nr_nodes : 1) * sizeof(int));
	if (!online_ids) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out_free;
	}
	for (j = 0; j < topo->nr_nodes; j++)
		online_ids[j] = topo->nodes[j].id;
	tier_nodelist_format(online_ids, topo->nr_nodes, online, sizeof(online));
	free(online_ids);
	for (i = 0; i < *nr; i++) {
		const struct tier_node *n = tier_topology_node(topo, (*ids)[i]);

		if (!n) {
			ret = tier_err_set(err, -EINVAL, "node %d is not online (online: %s)",
					   (*ids)[i], online);
			goto out_free;
		}
		if (!n->has_memory) {
			ret = tier_err_set(err, -EINVAL,
					   "node %d has no memory to probe", n->id);
			goto out_free;
		}
	}
	return 0;
out_free:
	free(*ids);
	*ids = NULL;
	*nr = 0;
	return ret;
}

/* Distance for ordering: unknown sorts last. */
static int dist_key(const struct tier_topology *topo, int from, int to)
{
	int d = tier_topology_distance(topo, from, to);

	return d < 0 ? INT_MAX : d;
}

static int rank_key(int rank)
{
	return rank < 0 ? INT_MAX : rank;
}

/* The reference node of initiator node ini: itself when it has memory,
 * else the node with memory nearest to it, then lowest rank, then id. */
static const struct tier_node *pick_reference(const struct tier_topology *topo,
					      const struct tier_node *ini)
{
	const struct tier_node *best = NULL;
	size_t i;

	if (ini->has_memory)
		return ini;
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		int d, bd;

		if (!n->has_memory)
			continue;
		if (!best) {
			best = n;
			continue;
		}
		d = dist_key(topo, ini->id, n->id);
		bd = dist_key(topo, ini->id, best->id);
		if (d < bd || (d == bd && rank_key(n->rank) < rank_key(best->rank)))
			best = n;	/* equal keys keep the lower id */
	}
	return best;
}

/* Initiators by distance to the target, then id (insertion sort: the list
 * is a handful of CPU nodes). */
static void sort_from(const struct tier_topology *topo, int target,
		      struct tier_probe_pair *p, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct tier_probe_pair tmp = p[i];
		int dk = dist_key(topo, tmp.initiator, target);

		for (j = i; j > 0; j--) {
			int dj = dist_key(topo, p[j - 1].initiator, target);

			if (dj < dk || (dj == dk && p[j - 1].initiator < tmp.initiator))
				break;
			p[j] = p[j - 1];
		}
		p[j] = tmp;
	}
}

int tier_probe_plan(struct tier_probe_report *r, const struct tier_topology *topo,
		    const int *ids, size_t nr_ids, struct tier_err *err)
{
	bool *want = NULL;
	size_t i, j, k, nr_ini = 0, nr_want = 0;
	int ret = 0;

	tier_probe_report_release(r);
	if (!topo->nr_nodes)
		return tier_err_set(err, -EINVAL, "no memory node to probe");
	for (i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].nr_cpus)
			nr_ini++;
	if (!nr_ini)
		return tier_err_set(err, -EINVAL,
				    "no node has CPUs: nothing to measure from");
	want = calloc(topo->nr_nodes, sizeof(*want));
	r->initiators = calloc(nr_ini, sizeof(*r->initiators));
	if (!want || !r->initiators) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nr_ids; i++) {
		const struct tier_node *n = tier_topology_node(topo, ids[i]);

		if (!n || !n->has_memory) {
			ret = tier_err_set(err, -EINVAL, "node %d %s", ids[i],
					   n ? "has no memory to probe" : "is not online");
			goto out;
		}
		want[n - topo->nodes] = true;
	}
	for (i = 0; i < topo->nr_nodes; i++)
		if (!nr_ids && topo->nodes[i].has_memory)
			want[i] = true;
	for (i = 0, k = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		const struct tier_node *ref;

		if (!n->nr_cpus)
			continue;
		ref = pick_reference(topo, n);
		if (!ref) {
			ret = tier_err_set(err, -EINVAL, "no node has memory");
			goto out;
		}
		r->initiators[k].id = n->id;
		r->initiators[k].reference = ref->id;
		r->initiators[k].nr_cpus = n->nr_cpus;
		want[ref - topo->nodes] = true;
		k++;
	}
	r->nr_initiators = nr_ini;
	for (i = 0; i < topo->nr_nodes; i++)
		nr_want += want[i];
	r->nodes = calloc(nr_want, sizeof(*r->nodes));
	if (!r->nodes) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < topo->nr_nodes; i++) {
		const struct tier_node *n = &topo->nodes[i];
		struct tier_probe_node *pn;

		if (!want[i])
			continue;
		pn = &r->nodes[r->nr_nodes++];
		pn->id = n->id;
		pn->has_claim = n->has_hmat;
		pn->claim = n->hmat;
		pn->kernel_rank = n->rank;
		pn->measured_rank = -1;
		pn->from = calloc(nr_ini, sizeof(*pn->from));
		if (!pn->from) {
			ret = tier_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		pn->nr_from = nr_ini;
		for (j = 0; j < nr_ini; j++) {
			struct tier_probe_pair *p = &pn->from[j];

			p->initiator = r->initiators[j].id;
			p->slit_distance = tier_topology_distance(topo, p->initiator, n->id);
			p->on_node_bp = -1;
		}
		sort_from(topo, n->id, pn->from, pn->nr_from);
		for (j = 0; j < nr_ini; j++)
			if (r->initiators[j].id == pn->from[0].initiator)
				pn->reference = r->initiators[j].reference;
	}
	r->rank_source = topo->rank_source;
out:
	free(want);
	if (ret)
		tier_probe_report_release(r);
	return ret;
}

struct tier_probe_node *tier_probe_report_node(const struct tier_probe_report *r, int id)
{
	size_t i;

	for (i = 0; i < r->nr_nodes; i++)
		if (r->nodes[i].id == id)
			return &r->nodes[i];
	return NULL;
}

struct tier_probe_pair *tier_probe_node_pair(const struct tier_probe_node *node,
					     int initiator)
{
	size_t i;

	for (i = 0; node && i < node->nr_from; i++)
		if (node->from[i].initiator == initiator)
			return &node->from[i];
	return NULL;
}

static const struct tier_probe_initiator *find_initiator(const struct tier_probe_report *r,
							int id)
{
	size_t i;

	for (i = 0; i < r->nr_initiators; i++)
		if (r->initiators[i].id == id)
			return &r->initiators[i];
	return NULL;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Noise allowance of a comparison of two measurements: the larger noise. */
static uint32_t noise_bp(const struct tier_probe_stat *a, const struct tier_probe_stat *b,
			 enum tier_probe_sense sense)
{
	return max_u32(tier_probe_stat_noise_bp(a, sense), tier_probe_stat_noise_bp(b, sense));
}

/* Whether two ratios differ by more than tol_bp: the larger over the
 * smaller above 1 + tol. E.g. claimed 2.5, measured 1.02, tol 25% + 4%:
 * 2.5 / 1.02 = 2.45 > 1.29, a mismatch. */
static bool disagree(double claimed, double meas, uint64_t tol_bp)
{
	double q = claimed > meas ? claimed / meas : meas / claimed;

	return q > 1.0 + (double)tol_bp / 10000.0;
}

/* The reference's pair from the same initiator as p. */
static const struct tier_probe_pair *reference_pair(const struct tier_probe_report *r,
						    const struct tier_probe_pair *p)
{
	const struct tier_probe_initiator *ini = find_initiator(r, p->initiator);

	if (!ini)
		return NULL;
	return tier_probe_node_pair(tier_probe_report_node(r, ini->reference),
				    p->initiator);
}

static void judge_pair(const struct tier_probe_report *r, struct tier_probe_pair *p)
{
	const struct tier_probe_pair *rp = reference_pair(r, p);

	p->latency_ratio = 0;
	p->slit_ratio = 0;
	p->slit_mismatch = false;
	if (!rp)
		return;
	if (measured(&p->latency_ns) && measured(&rp->latency_ns))
		p->latency_ratio = lat_best(&p->latency_ns) / lat_best(&rp->latency_ns);
	if (p->slit_distance > 0 && rp->slit_distance > 0)
		p->slit_ratio = (double)p->slit_distance / rp->slit_distance;
	if (p->latency_ratio > 0 && p->slit_ratio > 0)
		p->slit_mismatch = disagree(p->slit_ratio, p->latency_ratio,
					    (uint64_t)r->slit_tolerance_bp +
					    noise_bp(&p->latency_ns, &rp->latency_ns,
						     TIER_PROBE_LOWER_BETTER));
}

/* The noise of a node's verdict: the largest noise of its home pair and
 * its reference's pair. */
static uint32_t node_noise_bp(const struct tier_probe_pair *p,
			      const struct tier_probe_pair *rp)
{
	uint32_t n = noise_bp(&p->latency_ns, &rp->latency_ns, TIER_PROBE_LOWER_BETTER);

	n = max_u32(n, noise_bp(&p->read_bw_mbps, &rp->read_bw_mbps, TIER_PROBE_HIGHER_BETTER));
	return max_u32(n, noise_bp(&p->write_bw_mbps, &rp->write_bw_mbps,
				   TIER_PROBE_HIGHER_BETTER));
}

static double bw_ratio(const struct tier_probe_stat *ref, const struct tier_probe_stat *s)
{
	return measured(ref) && measured(s) ? bw_best(ref) / bw_best(s) : 0;
}

static double claim_ratio(uint32_t num, uint32_t den)
{
	return num && den ? (double)num / den : 0;
}

static void judge_node(const struct tier_probe_report *r, struct tier_probe_node *n)
{
	const struct tier_probe_node *ref = tier_probe_report_node(r, n->reference);
	const struct tier_probe_pair *p, *rp;
	const struct tier_probe_stat *s[3], *rs[3];
	size_t f;
	double bw, rbw;

	if (!n->nr_from)
		return;
	for (f = 0; f < n->nr_from; f++)
		if (n->from[f].slit_mismatch)
			n->mismatch |= 1u << TIER_PROBE_SLIT;
	p = &n->from[0];
	rp = tier_probe_node_pair(ref, p->initiator);
	if (!rp)
		goto out;
	n->ratio[TIER_PROBE_LATENCY] = p->latency_ratio;
	n->ratio[TIER_PROBE_READ_BW] = bw_ratio(&rp->read_bw_mbps, &p->read_bw_mbps);
	n->ratio[TIER_PROBE_WRITE_BW] = bw_ratio(&rp->write_bw_mbps, &p->write_bw_mbps);
	n->ratio[TIER_PROBE_SLIT] = p->slit_ratio > 0 ? p->latency_ratio : 0;
	n->claimed_ratio[TIER_PROBE_SLIT] = p->slit_ratio;
	if (n->has_claim && ref->has_claim) {
		n->claimed_ratio[TIER_PROBE_LATENCY] =
			claim_ratio(n->claim.read_latency_ns, ref->claim.read_latency_ns);
		n->claimed_ratio[TIER_PROBE_READ_BW] =
			claim_ratio(ref->claim.read_bw_mbps, n->claim.read_bw_mbps);
		n->claimed_ratio[TIER_PROBE_WRITE_BW] =
			claim_ratio(ref->claim.write_bw_mbps, n->claim.write_bw_mbps);
	}
	s[0] = &p->latency_ns, rs[0] = &rp->latency_ns;
	s[1] = &p->read_bw_mbps, rs[1] = &rp->read_bw_mbps;
	s[2] = &p->write_bw_mbps, rs[2] = &rp->write_bw_mbps;
	for (f = TIER_PROBE_LATENCY; f <= TIER_PROBE_WRITE_BW; f++) {
		enum tier_probe_sense sense = f == TIER_PROBE_LATENCY ? TIER_PROBE_LOWER_BETTER
								       : TIER_PROBE_HIGHER_BETTER;

		if (n->claimed_ratio[f] > 0 && n->ratio[f] > 0 &&
		    disagree(n->claimed_ratio[f], n->ratio[f],
			     (uint64_t)r->tolerance_bp + noise_bp(s[f], rs[f], sense)))
			n->mismatch |= 1u << f;
	}
	/* mm/memory-tiers.c's formula with measured figures relative to the
	 * reference: 576 * lat / ref_lat * (ref_rbw + ref_wbw) / (rbw + wbw). */
	if (n->ratio[TIER_PROBE_LATENCY] > 0) {
		bw = bw_best(&p->read_bw_mbps) + bw_best(&p->write_bw_mbps);
		rbw = bw_best(&rp->read_bw_mbps) + bw_best(&rp->write_bw_mbps);
		n->measured_adistance = TIER_ADISTANCE_DRAM * n->ratio[TIER_PROBE_LATENCY];
		if (bw > 0 && rbw > 0)
			n->measured_adistance *= rbw / bw;
	}
out:
	n->claim_mismatch = n->mismatch != 0;
}

/* Noise of a node's measured adistance (see node_noise_bp); 0 if unknown. */
static uint32_t adistance_noise_bp(const struct tier_probe_report *r,
				   const struct tier_probe_node *n)
{
	const struct tier_probe_pair *rp;

	if (!n->nr_from)
		return 0;
	rp = tier_probe_node_pair(tier_probe_report_node(r, n->reference),
				  n->from[0].initiator);
	return rp ? node_noise_bp(&n->from[0], rp) : 0;
}

/* a is slower than b beyond tolerance and both nodes' noise. */
static bool slower(const struct tier_probe_report *r, const struct tier_probe_node *a,
		   const struct tier_probe_node *b)
{
	uint64_t tol = (uint64_t)r->tolerance_bp +
		       max_u32(adistance_noise_bp(r, a), adistance_noise_bp(r, b));

	return a->measured_adistance > b->measured_adistance * (1.0 + (double)tol / 10000.0);
}

static void judge_order(struct tier_probe_report *r)
{
	struct tier_probe_node *leader = NULL;
	size_t i, j, nr_sorted = 0;
	size_t *idx;
	int rank = -1;

	for (i = 0; i < r->nr_nodes; i++) {
		struct tier_probe_node *a = &r->nodes[i];

		if (a->measured_adistance <= 0 || a->kernel_rank < 0)
			continue;
		for (j = i + 1; j < r->nr_nodes; j++) {
			struct tier_probe_node *b = &r->nodes[j];

			if (b->measured_adistance <= 0 || b->kernel_rank < 0)
				continue;
			if ((a->kernel_rank < b->kernel_rank && slower(r, a, b)) ||
			    (b->kernel_rank < a->kernel_rank && slower(r, b, a)))
				a->order_mismatch = b->order_mismatch = true;
		}
	}
	/* Measured tiers: by adistance, a new tier wherever a node is slower
	 * than the first node of the current tier beyond tolerance and noise. */
	idx = malloc((r->nr_nodes ? r->nr_nodes : 1) * sizeof(*idx));
	if (!idx)
		return;		/* measured_rank stays -1: "cannot say" */
	for (i = 0; i < r->nr_nodes; i++)
		if (r->nodes[i].measured_adistance > 0)
			idx[nr_sorted++] = i;
	for (i = 1; i < nr_sorted; i++) {
		size_t t = idx[i];

		for (j = i; j > 0 && r->nodes[idx[j - 1]].measured_adistance >
				     r->nodes[t].measured_adistance; j--)
			idx[j] = idx[j - 1];
		idx[j] = t;
	}
	for (i = 0; i < nr_sorted; i++) {
		struct tier_probe_node *n = &r->nodes[idx[i]];

		if (!leader || slower(r, n, leader)) {
			leader = n;
			rank++;
		}
		n->measured_rank = rank;
	}
	free(idx);
}

void tier_probe_judge(struct tier_probe_report *r)
{
	size_t i, j;

	for (i = 0; i < r->nr_nodes; i++) {
		struct tier_probe_node *n = &r->nodes[i];

		memset(n->ratio, 0, sizeof(n->ratio));
		memset(n->claimed_ratio, 0, sizeof(n->claimed_ratio));
		n->mismatch = 0;
		n->claim_mismatch = false;
		n->measured_adistance = 0;
		n->measured_rank = -1;
		n->order_mismatch = false;
		for (j = 0; j < n->nr_from; j++)
			judge_pair(r, &n->from[j]);
	}
	for (i = 0; i < r->nr_nodes; i++)
		judge_node(r, &r->nodes[i]);
	judge_order(r);
}

int tier_probe_override(const struct tier_probe_report *r,
			struct tier_tier_override **tiers, size_t *nr_tiers,
			int **nodes, struct tier_err *err)
{
	struct tier_tier_override *t;
	size_t i, k = 0, nr = 0, nr_nodes = 0;
	int rank = -1, next;
	int *ids;

	*tiers = NULL;
	*nodes = NULL;
	*nr_tiers = 0;
	for (i = 0; i < r->nr_nodes; i++)
		nr_nodes += r->nodes[i].measured_rank >= 0;
	if (!nr_nodes)
		return tier_err_set(err, -EINVAL, "no node was measured");
	/* At most one tier a node: a saved report may skip ranks (a node
	 * left out by hand) or hold any number there, and a tier is made of
	 * the ranks that have nodes only, in their order. */
	t = calloc(nr_nodes, sizeof(*t));
	ids = malloc(nr_nodes * sizeof(*ids));
	if (!t || !ids) {
		free(t);
		free(ids);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	/* Nodes are sorted by id, so each tier's list comes out sorted. */
	for (;;) {
		next = -1;
		for (i = 0; i < r->nr_nodes; i++)
			if (r->nodes[i].measured_rank > rank &&
			    (next < 0 || r->nodes[i].measured_rank < next))
				next = r->nodes[i].measured_rank;
		if (next < 0)
			break;
		rank = next;
		t[nr].nodes = ids + k;
		for (i = 0; i < r->nr_nodes; i++)
			if (r->nodes[i].measured_rank == rank)
				ids[k++] = r->nodes[i].id;
		t[nr].nr_nodes = (size_t)(ids + k - t[nr].nodes);
		nr++;
	}
	*tiers = t;
	*nr_tiers = nr;
	*nodes = ids;
	return 0;
}

const char *tier_probe_figure_name(enum tier_probe_figure f)
{
	switch (f) {
	case TIER_PROBE_LATENCY:
		return "latency";
	case TIER_PROBE_READ_BW:
		return "read_bandwidth";
	case TIER_PROBE_WRITE_BW:
		return "write_bandwidth";
	case TIER_PROBE_SLIT:
		return "slit";
	case TIER_PROBE_NR_FIGURES:
		break;
	}
	return "?";
}
