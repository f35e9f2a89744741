/* probe_table.c - the probe report as a table for people, with one line
 * per disagreement with the firmware or the kernel's order. */
#include "common/probe_out.h"

#include <stdbool.h>
#include <stdint.h>


static const char *fig(const struct tier_probe_stat *s, enum tier_probe_sense sense,
		       int decimals, char *buf, size_t sz)
{
	uint32_t bp = tier_probe_stat_noise_bp(s, sense);
	double best = tier_probe_stat_best(s, sense);

	if (!s->nr_samples)
		snprintf(buf, sz, "-");
	else if (bp == UINT32_MAX)
		snprintf(buf, sz, "%.*f ±?", decimals, best);
	else
		snprintf(buf, sz, "%.*f ±%.1f%%", decimals, best, bp / 100.0);
	return buf;
}

static const char *claim_str(const struct tier_probe_node *n, char *buf, size_t sz)
{
	if (!n->has_claim)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%u %u/%u", n->claim.read_latency_ns,
			 n->claim.read_bw_mbps, n->claim.write_bw_mbps);
	return buf;
}

static const char *rank_str(int rank, char *buf, size_t sz)
{
	if (rank < 0)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%d", rank);
	return buf;
}

static enum tier_probe_sense figure_sense(int f)
{
	return f == TIER_PROBE_READ_BW || f == TIER_PROBE_WRITE_BW ? TIER_PROBE_HIGHER_BETTER
								    : TIER_PROBE_LOWER_BETTER;
}

static const struct tier_probe_stat *figure_stat(const struct tier_probe_pair *p, int f)
{
	return f == TIER_PROBE_READ_BW ? &p->read_bw_mbps :
	       f == TIER_PROBE_WRITE_BW ? &p->write_bw_mbps : &p->latency_ns;
}

static void print_mismatches(const struct tier_probe_report *r,
			     const struct tier_probe_node *n, FILE *out)
{
	static const char *const what[] = {
		"latency", "read bandwidth", "write bandwidth", "SLIT distance",
	};
	const struct tier_probe_node *ref = tier_probe_report_node(r, n->reference);
	const struct tier_probe_pair *p = n->nr_from ? &n->from[0] : NULL;
	const struct tier_probe_pair *rp = p ? tier_probe_node_pair(ref, p->initiator) : NULL;
	size_t i;
	int f;

	for (f = 0; f < TIER_PROBE_NR_FIGURES && p && rp; f++) {
		uint32_t a, b;

		if (!(n->mismatch & (1u << f)) || n->claimed_ratio[f] <= 0)
			continue;
		a = tier_probe_stat_noise_bp(figure_stat(p, f), figure_sense(f));
		b = tier_probe_stat_noise_bp(figure_stat(rp, f), figure_sense(f));
		fprintf(out, "node %d: %s: %s says %.2fx slower than node %d, measured %.2fx "
			"(tolerance %.0f%% + noise %.1f%%)\n",
			n->id, what[f], f == TIER_PROBE_SLIT ? "SLIT" : "HMAT",
			n->claimed_ratio[f], n->reference, n->ratio[f],
			(f == TIER_PROBE_SLIT ? r->slit_tolerance_bp : r->tolerance_bp) / 100.0,
			(a > b ? a : b) / 100.0);
	}
	for (i = 1; i < n->nr_from; i++) {
		const struct tier_probe_pair *q = &n->from[i];

		if (q->slit_mismatch)
			fprintf(out, "node %d from node %d: SLIT distance says %.2fx slower than "
				"the reference, measured %.2fx\n",
				n->id, q->initiator, q->slit_ratio, q->latency_ratio);
	}
}

/* "node 2: order: rank 1 by slit, but measured tier 0 (abstract distance
 * 403): inverted against nodes 0,1" - the partners are the flagged nodes
 * on the other side of it in the two orders. */
static void print_inversions(const struct tier_probe_report *r,
			     const struct tier_probe_node *n, FILE *out)
{
	char list[256] = "";
	size_t i, len = 0, nr = 0;

	for (i = 0; i < r->nr_nodes; i++) {
		const struct tier_probe_node *m = &r->nodes[i];

		if (m == n || !m->order_mismatch || m->kernel_rank == n->kernel_rank)
			continue;
		if ((m->kernel_rank < n->kernel_rank) !=
		    (m->measured_adistance > n->measured_adistance))
			continue;
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
						nr ? "," : "", m->id);
		nr++;
	}
	fprintf(out, "node %d: order: rank %d by %s, but measured tier %d (abstract distance "
		"%.0f): inverted against node%s %s\n", n->id, n->kernel_rank,
		tier_rank_source_name(r->rank_source), n->measured_rank,
		n->measured_adistance, nr == 1 ? "" : "s", nr ? list : "?");
}

/* The verdict column of node n's line for its initiator j: the node's
 * verdict on the first line, the pair's SLIT check on the others. */
static const char *verdict(const struct tier_probe_node *n, size_t j)
{
	if (j)
		return n->from[j].slit_mismatch ? "SLIT mismatch" : "";
	return n->claim_mismatch && n->order_mismatch ? "claim mismatch, order mismatch" :
	       n->claim_mismatch ? "claim mismatch" :
	       n->order_mismatch ? "order mismatch" :
	       n->id == n->reference ? "reference" : "ok";
}

void tier_probe_report_print(const struct tier_probe_report *r, FILE *out)
{
	size_t i, j;
	bool any = false;

	fprintf(out, "%-5s %-5s %-16s %-16s %-16s %-20s %-6s %-8s %s\n",
		"node", "from", "latency ns", "read MB/s", "write MB/s",
		"HMAT ns read/write", "kernel", "measured", "verdict");
	for (i = 0; i < r->nr_nodes; i++) {
		const struct tier_probe_node *n = &r->nodes[i];

		for (j = 0; j < n->nr_from; j++) {
			const struct tier_probe_pair *p = &n->from[j];
			char lat[40], rd[40], wr[40], claim[48], kr[16], mr[16];

			fprintf(out, "%-5d %-5d %-16s %-16s %-16s %-20s %-6s %-8s %s\n",
				n->id, p->initiator,
				fig(&p->latency_ns, figure_sense(TIER_PROBE_LATENCY), 1, lat,
				    sizeof(lat)),
				fig(&p->read_bw_mbps, figure_sense(TIER_PROBE_READ_BW), 0, rd,
				    sizeof(rd)),
				fig(&p->write_bw_mbps, figure_sense(TIER_PROBE_WRITE_BW), 0, wr,
				    sizeof(wr)),
				j == 0 ? claim_str(n, claim, sizeof(claim)) : "",
				j == 0 ? rank_str(n->kernel_rank, kr, sizeof(kr)) : "",
				j == 0 ? rank_str(n->measured_rank, mr, sizeof(mr)) : "",
				verdict(n, j));
		}
	}
	fprintf(out, "\nbest of %u samples; ±: noise (the second best's distance); "
		"ratios against each initiator's reference node\n", r->nr_repeats);
	for (i = 0; i < r->nr_nodes; i++) {
		const struct tier_probe_node *n = &r->nodes[i];

		if (n->mismatch) {
			print_mismatches(r, n, out);
			any = true;
		}
		if (n->order_mismatch) {
			print_inversions(r, n, out);
			any = true;
		}
		for (j = 0; j < n->nr_from; j++)
			if (n->from[j].on_node_bp >= 0 && n->from[j].on_node_bp < 9000) {
				fprintf(out, "node %d from node %d: only %.0f%% of the buffer's pages "
					"were on node %d\n", n->id, n->from[j].initiator,
					n->from[j].on_node_bp / 100.0, n->id);
				any = true;
			}
	}
	if (!any)
		fprintf(out, "no disagreement with the firmware or the kernel's order\n");
}
