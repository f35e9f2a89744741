/* yaml_err.h - one-line error messages for YAML files loaded with libcyaml:
 * "FILE:LINE:COL: field.path: reason". Shared by the configuration file
 * (config_yaml.c) and tiersim's machine files (src/tiersim/machine_file.c).
 */
#ifndef TIER_COMMON_YAML_ERR_H
#define TIER_COMMON_YAML_ERR_H

#include <cyaml/cyaml.h>
#include <stdarg.h>
#include <stddef.h>

#include "core/err.h"

/* libcyaml reports an error as a message followed by a backtrace, innermost
 * first: "in mapping field 'x' (line: 4, column: 5)". The capture keeps the
 * message, the innermost position and the field path. */
struct tier_yaml_log {
	char reason[256];
	char unknown_key[200];	/* set for "Unexpected key" errors */
	char path[256];		/* "topology.tiers[1].nodes" */
	unsigned line, column;
	int in_backtrace;
};

/* A cyaml_config_t log_fn; ctx is a zeroed struct tier_yaml_log. */
void tier_yaml_log_fn(cyaml_log_t level, void *ctx, const char *fmt, va_list args)
	__attribute__((format(printf, 3, 0)));

/* The libcyaml configuration of the project's loaders: libcyaml's own
 * allocator, errors captured into lc (a zeroed struct tier_yaml_log) for
 * tier_yaml_load_error(). */
cyaml_config_t tier_yaml_cyaml_config(struct tier_yaml_log *lc);

/* Sets err from a failed cyaml_load_data() on document yaml (named name in
 * the message) and the captured log. Returns -EINVAL. */
int tier_yaml_load_error(struct tier_yaml_log *lc, const char *yaml, size_t len,
			 const char *name, cyaml_err_t cerr, struct tier_err *err);

/* Position of the scalar `key` at or after (*line, *column), 1-based;
 * unchanged when there is none. */
void tier_yaml_locate_key(const char *yaml, size_t len, const char *key,
			  unsigned *line, unsigned *column);

#endif
