/* machine_file.h - tiersim's machine files (--machine file:PATH; YAML,
 * libcyaml, like tierd's configuration file). docs/tiersim.md documents
 * the format; an example is tests/fixtures/machines/dram-cxl-pmem.yaml.
 *
 *   name: my-box                # optional
 *   description: DRAM + CXL     # optional
 *   cpu_slowdown: 1             # optional: CPU costs' factor, 0.01 to 1000
 *   nodes:                      # fastest first, 1 to TIER_SIM_MAX_NODES
 *     - kind: dram
 *       latency_ns: 90
 *       read_bw_mbps: 100000
 *       write_bw_mbps: 90000
 *       ratio: 1                # capacity share (or size_mb: fixed MiB)
 *       cpus: 2                 # optional, default 0
 *
 * Every value must be positive (cpus may be 0); every node gives ratio, or
 * every node gives size_mb; at least one node has CPUs. Errors are one line:
 * "FILE:LINE:COL: nodes[1].latency_ns: must be positive",
 * "FILE:LINE:COL: cpu_slowdown: a factor from 0.01 to 1000 ...".
 *
 * The result is a struct tier_sim_preset the simulator takes as it takes a
 * built-in one. The format is the front end's: the simulator backend
 * depends neither on it nor on libcyaml, and the shared front-end helpers
 * (src/common/) not on the simulator.
 */
#ifndef TIER_TIERSIM_MACHINE_FILE_H
#define TIER_TIERSIM_MACHINE_FILE_H

#include <stddef.h>

#include "backend/sim/machine.h"
#include "core/err.h"

struct tier_machine_file {
	struct tier_sim_preset preset;	/* points into the arrays below: do
					 * not copy the struct, pass it */
	char name[64];
	char description[128];
	char kinds[TIER_SIM_MAX_NODES][32];
};

/* Loads and validates the machine file at path. Returns 0 or -errno
 * (-ENOENT: no such file, -EINVAL: bad content) with err set. */
int tier_machine_file_load(const char *path, struct tier_machine_file *mf,
			   struct tier_err *err);

/* Same for an in-memory document; name is used in error messages. */
int tier_machine_file_load_string(const char *yaml, size_t len, const char *name,
				  struct tier_machine_file *mf, struct tier_err *err);

/* The path of a `--machine file:PATH` argument, or NULL for a preset name. */
const char *tier_machine_file_arg(const char *arg);

#endif
