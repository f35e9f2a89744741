/* daemon.h - tierd's main loop. */
#ifndef TIERD_DAEMON_H
#define TIERD_DAEMON_H

#include <stdbool.h>

#include "core/config.h"
#include "core/world.h"
#include "tierd/log.h"

#define TIERD_DEFAULT_CONFIG "/etc/tierd/tierd.yaml"

struct tierd_args {
	const char *config;
	bool config_given;
	const char *socket;		/* overrides daemon.socket */
	const char *metrics;		/* overrides daemon.metrics (ADDR:PORT) */
	const char *machine;		/* NULL = this host; "sim:PRESET" */
	const char *workload;		/* for sim: the built-in workload */
	bool foreground;
	bool check;
	bool restore;			/* --restore: put back a dead tierd's changes, exit */
};

/* Loads the configuration of args into cfg (release it): a missing
 * default file means the built-in defaults, a missing file named with
 * --config is an error; --metrics overrides the file's daemon.metrics. Returns 0 or -errno with err set; cfg holds the
 * defaults on error. */
int tierd_config_load(const struct tierd_args *args, struct tier_config *cfg,
		      struct tier_err *err);

/* Runs the daemon until SIGTERM/SIGINT (or the end of a finite simulated
 * run). Takes ownership of cfg. Returns the process exit status. */
int tierd_run(const struct tierd_args *args, struct tier_config *cfg);

#endif
