/* nodelist.h - the kernel's list format for node and CPU sets ("0-3,8,10-11").
 *
 * Used by sysfs (node/online, nodeN/cpulist, memory_tierN/nodelist), by
 * cpuset.mems and by the command line (--nodes). Parsing is strict: any byte
 * that is not part of the grammar is an error, so a corrupt file is reported
 * instead of being read as a smaller set.
 */
#ifndef TIER_CORE_NODELIST_H
#define TIER_CORE_NODELIST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

/* Largest id accepted in a list (the kernel's largest MAX_NUMNODES and a
 * generous CPU count); a bound on a parser's input, not a tuning knob. */
enum { TIER_NODELIST_MAX_ID = 65535 };

/* Parses s (trailing newline and spaces allowed; "" or "\n" is the empty
 * set) into a sorted, duplicate-free array of ids.
 * On success returns 0, *ids_out is malloc'd (NULL when empty; caller frees)
 * and *nr_out is its length. On failure returns -EINVAL (or -ENOMEM) and
 * err says what is wrong. */
int tier_nodelist_parse(const char *s, int **ids_out, size_t *nr_out,
			struct tier_err *err);

/* Formats ids (sorted) as "0-3,8" into buf of size sz. Returns the length
 * the full string needs (like snprintf), buf is always NUL-terminated. */
size_t tier_nodelist_format(const int *ids, size_t nr, char *buf, size_t sz);

bool tier_nodelist_contains(const int *ids, size_t nr, int id);

#endif
