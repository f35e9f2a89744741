/* tiersim.h - the verbs of tiersim that live in their own files. Each
 * returns the process exit status: 0, 1 (failed), 2 (usage error). */
#ifndef TIER_TIERSIM_H
#define TIER_TIERSIM_H

#include <getopt.h>
#include <json-c/json.h>
#include <stddef.h>

#include "backend/sim/engine.h"

/* tiersim convert --from lackey [OPTIONS] IN OUT: argv[0] is "convert". */
int tiersim_convert(int argc, char **argv);

/* tiersim run ...: argv[0] is "run". */
int tiersim_run(int argc, char **argv);

/* tiersim compare ...: argv[0] is "compare". */
int tiersim_compare(int argc, char **argv);

/* The getopt_long tables of convert, run and compare, also behind
 * --help's verb list and the completion script (main.c). */
extern const struct option tiersim_convert_opts[];
extern const struct option tiersim_run_opts[];
extern const struct option tiersim_compare_opts[];

struct tier_machine_file;

/* --machine file:PATH: loads the machine file into mf and points p->preset
 * (and p->machine, its name) at it; a preset name is left as it is.
 * Returns 0 or the exit status after printing the error. */
int tiersim_machine_arg(const char *verb, struct tier_sim_params *p,
			struct tier_machine_file *mf);

/* One result as a JSON object (docs/tiersim.md, Output); the caller puts it. */
struct json_object *tiersim_result_json(const struct tier_sim_result *r);

/* Draws AMAT per workload and policy into a PNG. Returns 0 or -errno. */
int tiersim_plot(const char *path, const char *machine, const char **workloads, size_t nw,
		 const char **policies, size_t np, const struct tier_sim_result *res,
		 struct tier_err *err);

#endif
