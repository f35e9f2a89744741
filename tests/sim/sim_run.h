/* sim_run.h - what the engine's test files share: the small machine they
 * run on and a run that must succeed. Included by one test file each
 * (static functions; needs cmocka.h first). */
#ifndef TIERD_TESTS_SIM_RUN_H
#define TIERD_TESTS_SIM_RUN_H

#include <string.h>

#include "backend/sim/engine.h"
#include "core/err.h"

/* workload under policy on dram-cxl (2 cores, both on node 0) in 8 MiB
 * units - a small machine: fast tests - for 3 s, seed 7. */
static struct tier_sim_params params(const char *workload, const char *policy)
{
	struct tier_sim_params p;

	memset(&p, 0, sizeof(p));
	p.machine = "dram-cxl";
	p.unit_bytes = 8u << 20;
	p.workload = workload;
	p.policy = policy;
	p.seed = 7;
	p.duration_us = 3000000;
	return p;
}

static void run_ok(const struct tier_sim_params *p, struct tier_sim_result *r)
{
	struct tier_err err = { "" };

	if (tier_sim_run(p, r, &err))
		fail_msg("%s/%s: %s", p->workload, p->policy, err.msg);
}

#endif
