/* probe.h - measured memory performance, judged against the firmware's claims.
 *
 * `tierctl probe` measures, for each memory node and from each CPU node
 * (initiator), the idle load latency and the streaming read and write
 * bandwidth. The measuring is the backend's job (src/backend/linux/probe.c);
 * this module is the pure part:
 *   - plan: which nodes, from which initiators, against which reference;
 *   - statistics: repeated samples reduced to the best sample, its noise,
 *     and the median and quartiles for the record;
 *   - judgement: measured figures against the firmware's claims (HMAT
 *     latency and bandwidth, SLIT distance) and against the kernel's tier
 *     order;
 *   - the measured tier order, as an override the topology ranking takes.
 *
 * The rule (docs/probe.md has the worked example): every comparison is
 * relative. Each initiator has a reference node (its own memory, or the
 * nearest node with memory); a node's figures are divided by the reference's
 * figures from the same initiator, and the claims are divided the same way.
 * Each figure is the best of its samples (lowest latency, highest
 * bandwidth): other work on the machine only ever slows a sample down.
 * A claim and a measurement disagree when the larger of the two ratios
 * exceeds the smaller by more than the tolerance plus the measurement's own
 * noise (the larger noise of the two nodes' figures). Absolute figures are
 * never judged: under emulation, or with TLB and prefetch effects, they say
 * little, while two nodes measured the same way compare well.
 *
 * Ownership: struct tier_probe_report is caller-owned storage
 * (tier_probe_report_init / tier_probe_report_release); it owns its arrays.
 */
#ifndef TIER_CORE_PROBE_H
#define TIER_CORE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/topology.h"

/* Where `tierctl probe` saves its results and the tier model reads them
 * (config topology.probe_file). */
#define TIER_PROBE_DEFAULT_FILE "/var/lib/tierd/probe.json"

/* Default tolerances, in basis points (2500 = 25%). A claimed ratio of
 * HMAT figures is held to the first; SLIT, which the ACPI specification
 * defines only as a "relative distance", to the second. */
enum {
	TIER_PROBE_TOLERANCE_BP = 2500,
	TIER_PROBE_SLIT_TOLERANCE_BP = 5000,
};

/* Most samples one figure keeps (the --repeats limit). */
enum { TIER_PROBE_MAX_SAMPLES = 100 };

/* Repeated samples of one figure, kept whole (the saved file holds them)
 * with their summary. The unit is in the name of the field that holds the
 * stat (latency_ns, read_bw_mbps). nr_samples == 0: not measured. q1 and
 * q3 are Tukey's hinges: the medians of the lower and upper halves, each
 * half holding the median when the count is odd. */
struct tier_probe_stat {
	double samples[TIER_PROBE_MAX_SAMPLES];	/* sorted, ascending */
	unsigned nr_samples;
	double min;
	double q1;
	double median;
	double q3;
	double max;
};

/* The figures the judgement compares. */
enum tier_probe_figure {
	TIER_PROBE_LATENCY = 0,		/* HMAT read latency vs measured load latency */
	TIER_PROBE_READ_BW,		/* HMAT read bandwidth vs streaming read */
	TIER_PROBE_WRITE_BW,		/* HMAT write bandwidth vs streaming write */
	TIER_PROBE_SLIT,		/* SLIT distance vs measured load latency */
	TIER_PROBE_NR_FIGURES,
};

/* One initiator -> node measurement. */
struct tier_probe_pair {
	int initiator;			/* CPU node the measuring threads ran on */
	int slit_distance;		/* SLIT initiator -> node; -1 unknown */
	struct tier_probe_stat latency_ns;	/* per dependent load */
	struct tier_probe_stat read_bw_mbps;	/* MB/s (10^6 B/s), all CPUs of the initiator */
	struct tier_probe_stat write_bw_mbps;
	uint64_t buffer_bytes;		/* size of the buffer actually measured */
	int on_node_bp;			/* share of the buffer's pages found on the
					 * node afterwards, bp; -1 unknown */
	/* Filled by tier_probe_judge(); 0 = cannot say. */
	double latency_ratio;		/* latency / the reference's, same initiator */
	double slit_ratio;		/* SLIT distance / the reference's */
	bool slit_mismatch;
};

struct tier_probe_node {
	int id;
	int reference;			/* node the ratios are relative to */
	/* One pair per initiator; from[0] is the home initiator (the nearest
	 * CPU node), the others follow by distance, then id. */
	struct tier_probe_pair *from;
	size_t nr_from;
	bool has_claim;			/* HMAT figures published */
	struct tier_perf claim;
	int kernel_rank;		/* the topology's rank (kernel tiers, else
					 * HMAT, else SLIT); -1 none */
	/* Filled by tier_probe_judge(), from the home initiator's pair.
	 * Ratios read "times slower than the reference": latency ratios
	 * are node / reference, bandwidth ratios reference / node. 0 = n/a. */
	double ratio[TIER_PROBE_NR_FIGURES];		/* measured */
	double claimed_ratio[TIER_PROBE_NR_FIGURES];	/* firmware */
	unsigned mismatch;		/* bit (1u << figure) per disagreeing figure */
	bool claim_mismatch;		/* mismatch != 0 */
	/* The kernel's abstract-distance formula fed with the measured
	 * ratios (576 = as fast as the reference); 0 = not measured. */
	double measured_adistance;
	int measured_rank;		/* group of nodes within tolerance; -1 n/a */
	bool order_mismatch;		/* ranked faster than a node measured slower,
					 * or the other way round */
};

struct tier_probe_initiator {
	int id;				/* CPU node */
	int reference;			/* its reference node */
	size_t nr_cpus;			/* CPUs of the node (bandwidth threads) */
};

struct tier_probe_report {
	struct tier_probe_node *nodes;	/* sorted by id */
	size_t nr_nodes;
	struct tier_probe_initiator *initiators;	/* sorted by id */
	size_t nr_initiators;
	enum tier_rank_source rank_source;	/* where kernel_rank came from */
	uint32_t tolerance_bp;		/* HMAT claims; TIER_PROBE_TOLERANCE_BP */
	uint32_t slit_tolerance_bp;	/* SLIT; TIER_PROBE_SLIT_TOLERANCE_BP */
	/* How it was measured, filled by the backend (informational). */
	unsigned nr_repeats;
	uint64_t buffer_bytes;		/* requested buffer per node */
	uint64_t llc_bytes;		/* last-level cache as found; 0 unknown */
	uint64_t nr_chase_steps;	/* dependent loads per latency sample */
	uint64_t stream_bytes;		/* bytes moved per bandwidth sample */
};

/* Progress of a running probe, for a front end to show. */
struct tier_probe_progress {
	int node;
	int initiator;
	const char *stage;		/* "preparing", "latency", "read", "write" */
	unsigned repeat;		/* 1-based; 0 for "preparing" */
	unsigned nr_repeats;
	size_t step;			/* 1-based count of this step ... */
	size_t nr_steps;		/* ... of all steps */
};

void tier_probe_report_init(struct tier_probe_report *r);
void tier_probe_report_release(struct tier_probe_report *r);

/* Fills out from nr samples, each rounded to a multiple of step (0: not
 * rounded), then sorted and summarised. Figures are kept at the resolution
 * they are reported and saved with (TIER_PROBE_*_STEP), so a saved report
 * reads back to the same numbers and the same verdicts. Returns 0, or
 * -EINVAL when nr is 0 or above TIER_PROBE_MAX_SAMPLES or a sample is
 * negative or not finite (out is then left unmeasured). */
int tier_probe_stat_compute(const double *samples, size_t nr, double step,
			    struct tier_probe_stat *out);

/* Resolutions of the figures: latency in 0.1 ns, bandwidth in 1 MB/s. */
#define TIER_PROBE_LATENCY_STEP 0.1
#define TIER_PROBE_BW_STEP 1.0

/* Which way a figure is better: latency lower, bandwidth higher. */
enum tier_probe_sense {
	TIER_PROBE_LOWER_BETTER,
	TIER_PROBE_HIGHER_BETTER,
};

/* The figure a verdict rests on: the best sample (min for latency, max for
 * bandwidth), as STREAM reports its best run. Other work on the machine
 * only ever adds time, so the best sample is the one nearest the idle
 * machine, while the median moves with whatever else runs (under an
 * emulator sharing a busy host, by a factor of two). 0 when not measured. */
double tier_probe_stat_best(const struct tier_probe_stat *s, enum tier_probe_sense sense);

/* The noise of the best figure: how far the second best sample lies from
 * it, over the best, in basis points. Samples untouched by other work
 * cluster near the best; a best sample without a close second is the one
 * to doubt, and the verdict widens its tolerance by this much. 0 for fewer
 * than two samples; UINT32_MAX when the best is 0 but the samples differ. */
uint32_t tier_probe_stat_noise_bp(const struct tier_probe_stat *s, enum tier_probe_sense sense);

/* Parses a --nodes list ("0-2,4") and checks it against topo: every id
 * online and with memory. *ids is malloc'd (caller frees), sorted.
 * Returns 0 or -EINVAL with err saying which node and why, e.g.
 * "node 7 is not online (online: 0-2)". An empty list is an error. */
int tier_probe_select_nodes(const struct tier_topology *topo, const char *list,
			    int **ids, size_t *nr, struct tier_err *err);

/* Lays out a probe of the nodes ids (all nodes with memory when nr_ids is
 * 0) on a ranked topology: every CPU node is an initiator; each initiator's
 * reference node (itself when it has memory, else the node with memory
 * nearest to it, then lowest rank, then lowest id) is added to the nodes.
 * Fills claims, SLIT distances and kernel ranks; leaves the figures
 * unmeasured and the tolerances at their defaults. Any previous content of
 * r is released. Returns 0, -EINVAL (an id without memory, no CPU node) or
 * -ENOMEM, with err set. */
int tier_probe_plan(struct tier_probe_report *r, const struct tier_topology *topo,
		    const int *ids, size_t nr_ids, struct tier_err *err);

/* The node with that id, or NULL. */
struct tier_probe_node *tier_probe_report_node(const struct tier_probe_report *r, int id);

/* The pair of node measured from initiator, or NULL. */
struct tier_probe_pair *tier_probe_node_pair(const struct tier_probe_node *node,
					     int initiator);

/* Fills every verdict field (ratios, mismatches, measured ranks) from the
 * measured figures, the claims and the tolerances; see the rule above.
 * Pairs not measured are left out. Idempotent. */
void tier_probe_judge(struct tier_probe_report *r);

/* The measured tier order as a topology override (see tier_topology_rank):
 * nodes grouped by measured_rank, fastest first; ranks without nodes make
 * no tier (a saved report may skip some). *tiers and *nodes are
 * malloc'd (caller frees both; the tiers point into *nodes). Returns 0,
 * -EINVAL when no node was measured (err set) or -ENOMEM. */
int tier_probe_override(const struct tier_probe_report *r,
			struct tier_tier_override **tiers, size_t *nr_tiers,
			int **nodes, struct tier_err *err);

/* "latency", "read_bandwidth", "write_bandwidth", "slit". */
const char *tier_probe_figure_name(enum tier_probe_figure f);

#endif
