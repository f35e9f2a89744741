/* internal.h - libtier's internals shared with its unit tests (not part of
 * the ABI; hidden from libtier.so by libtier.map). */
#ifndef TIER_LIBTIER_INTERNAL_H
#define TIER_LIBTIER_INTERNAL_H

#include "tier.h"

/* The protocol's name of an advice ("hot", "pin-fast", ...), NULL when
 * advice is not one of enum tier_advice. */
const char *tier__advice_name(enum tier_advice advice);

/* tier_query reading the topology under sysfs_root instead of "/sys". */
int tier__query_at(const char *sysfs_root, const void *addr, size_t len,
		   struct tier_page_info *out, size_t nr);

#endif
