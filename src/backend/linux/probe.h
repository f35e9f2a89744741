/* probe.h - measuring memory nodes on Linux: latency and bandwidth.
 *
 * For each planned (initiator, node) pair of a struct tier_probe_report
 * (see core/probe.h), a buffer is mapped and bound to the node with
 * mbind(MPOL_BIND) (libnuma), then:
 *   - latency: a dependent pointer chase over a random cyclic chain of
 *     cache lines (Sattolo's shuffle) spanning the buffer, run by one
 *     thread pinned to a CPU of the initiator; the buffer is much larger
 *     than the last-level cache and asks for transparent huge pages so that
 *     a load misses the caches but rarely the TLB; a sample is the fastest
 *     of ten timed windows of nr_chase_steps / 10 loads;
 *   - read and write bandwidth: one thread pinned to each CPU of the
 *     initiator streams over its own slice of the buffer, all released
 *     together; bytes over the time from the first start to the last end;
 *   - placement: afterwards move_pages(2) (query mode) reports where a
 *     sample of the buffer's pages really are.
 * Each figure is sampled nr_repeats times, the nodes' samples interleaved
 * (node 0, 1, 2, node 0, 1, 2, ...) so that other work on the machine falls
 * on every node alike; the core keeps the best sample as the figure.
 * Nothing here prints: progress goes to a callback, on the calling thread.
 */
#ifndef TIER_LINUX_PROBE_H
#define TIER_LINUX_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/probe.h"

struct tier_linux_probe {
	const char *sysfs_root;		/* borrowed; "/sys": cache sizes */
	uint64_t buffer_bytes;		/* per node; 0 = from the LLC size */
	unsigned nr_repeats;		/* samples per figure, >= 1 */
	uint64_t nr_chase_steps;	/* dependent loads per latency sample */
	uint64_t stream_bytes;		/* bytes per bandwidth sample, all threads
					 * together; 0 = one pass over the buffer */
	uint64_t seed;			/* chain shuffle; same seed, same chain */
	/* Optional: called before each step of the measurement. */
	void (*progress)(void *ctx, const struct tier_probe_progress *p);
	void *progress_ctx;
};

/* Buffer sizes chosen from the LLC when buffer_bytes is 0: 8 x LLC, at
 * least 256 MiB, at most 1 GiB (some hypervisors report absurd caches);
 * quick: 32 MiB. Never more than half of a node's free memory. */
enum {
	TIER_LINUX_PROBE_MIN_BUFFER_MB = 256,
	TIER_LINUX_PROBE_MAX_BUFFER_MB = 1024,
	TIER_LINUX_PROBE_QUICK_BUFFER_MB = 32,
	TIER_LINUX_PROBE_LEAST_BUFFER_MB = 4,	/* below this: refuse */
};

/* Fills lp with the defaults: 11 samples per figure, of 500 K chase steps
 * and 256 MiB streamed; quick: 15 samples of 20 K steps and 4 MiB over a
 * 32 MiB buffer (for emulators and tests: a QEMU TCG guest finishes three
 * nodes in seconds; on real hardware the buffer may sit in the cache). */
void tier_linux_probe_init(struct tier_linux_probe *lp, bool quick);

/* The last-level cache size from sysfs (devices/system/cpu/cpuN/cache/indexM),
 * else from the C library (sysconf), else 0. */
uint64_t tier_linux_probe_llc_bytes(const char *sysfs_root);

/* Measures every pair planned in r (tier_probe_plan) on this machine; topo
 * is the topology r was planned from (CPUs, free memory). Fills the pairs'
 * figures and r's measurement fields; does not judge. Returns 0 or -errno
 * with err naming the node and the step (e.g. "node 2: mbind: Invalid
 * argument (not in this process's cpuset?)"). */
int tier_linux_probe_run(const struct tier_linux_probe *lp,
			 const struct tier_topology *topo,
			 struct tier_probe_report *r, struct tier_err *err);

#endif
