/* config_yaml.h - load tierd's YAML configuration file (libcyaml).
 *
 * The schema mirrors struct tier_config (src/core/config.h); docs/config.md
 * documents the file. Errors are one line: "FILE:LINE:COL: field.path:
 * reason", e.g. "tierd.yaml:4:5: topology.sysfs_rot: unknown field".
 */
#ifndef TIER_COMMON_CONFIG_YAML_H
#define TIER_COMMON_CONFIG_YAML_H

#include <stddef.h>

#include "core/config.h"

/* Initialises cfg with the defaults, then applies the file at path and
 * validates the result. On error cfg holds the defaults (never a half-read
 * file). Returns 0 or -errno (-ENOENT: no such file) with err set. */
int tier_config_load_file(const char *path, struct tier_config *cfg,
			  struct tier_err *err);

/* Same for an in-memory document; name is used in error messages. */
int tier_config_load_string(const char *yaml, size_t len, const char *name,
			    struct tier_config *cfg, struct tier_err *err);

#endif
