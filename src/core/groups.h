/* groups.h - control groups' shares of each tier.
 *
 * A group is a set of managed pages: the processes of a cgroup on Linux, a
 * tenant in the simulator. Each page has an owner (env->page_owner: a
 * process slot, a tenant) and each owner belongs to one group
 * (owner_group); group 0 holds every owner no rule names and has no
 * limits. Per tier rank a group may have:
 *   max    - a cap on its bytes in that tier: the policy demotes the excess
 *            and never promotes past it; pages that spill from a faster
 *            tier skip a tier whose cap the group has reached. A cap on
 *            the slowest tier cannot be enforced (the pages must live
 *            somewhere) and is only reported.
 *   min    - protected bytes: while the group holds no more than this in
 *            the tier, none of its pages there are another group's victim.
 *   weight - when a tier is contended, groups that set a weight share it
 *            in proportion (weighted max-min fairness over the pages each
 *            group has in use); a group below its share may displace a
 *            group above its share even when the displaced pages are
 *            warmer. Without any weight, heat alone decides, within max
 *            and min.
 * Amounts are bytes or a fraction of the tier's capacity.
 */
#ifndef TIER_CORE_GROUPS_H
#define TIER_CORE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/topology.h"

#include "core/err.h"

#define TIER_GROUPS_MAX 64		/* groups, the catch-all group 0 included */
#define TIER_GROUP_RANKS TIER_MAX_TIERS	/* tier ranks a rule may name */
#define TIER_GROUP_DEFAULT_WEIGHT 100	/* of a group without a weight */
#define TIER_GROUP_MAX_WEIGHT 10000

enum tier_amount_kind {
	TIER_AMOUNT_NONE = 0,		/* no limit */
	TIER_AMOUNT_BYTES,		/* value: bytes */
	TIER_AMOUNT_PERMYRIAD,		/* value: 1/10000 of the tier's capacity */
};

struct tier_amount {
	uint8_t kind;			/* enum tier_amount_kind */
	uint64_t value;
};

/* One group's rule. */
struct tier_group_rule {
	struct tier_amount max[TIER_GROUP_RANKS];
	struct tier_amount min[TIER_GROUP_RANKS];
	uint32_t weight;		/* 1..TIER_GROUP_MAX_WEIGHT; 0 = not set */
};

struct tier_groups {
	size_t nr;			/* groups in use, 1..TIER_GROUPS_MAX */
	struct tier_group_rule rule[TIER_GROUPS_MAX];
	uint8_t owner_group[256];	/* group of each page owner id */
};

/* Empties g: one group (0, no limits), every owner in it. */
void tier_groups_init(struct tier_groups *g);

/* Parses "RANK=AMOUNT", AMOUNT a size with an optional K, M, G or T suffix
 * (binary units, "128M", "4096") or a percentage ("25%", "12.5%") of the
 * tier, or "none" (no limit). Returns 0 or -EINVAL with err saying what is wrong. */
int tier_amount_parse(const char *s, int *rank, struct tier_amount *out,
		      struct tier_err *err);

/* Writes an amount as the parser reads it ("128M", "25%"; "-" for none).
 * Returns the length snprintf would write. */
int tier_amount_format(const struct tier_amount *a, char *buf, size_t len);

/* The amount in pages of (1 << page_shift) bytes for a tier of tier_pages
 * pages; UINT64_MAX for none. */
uint64_t tier_amount_pages(const struct tier_amount *a, uint64_t tier_pages,
			   unsigned page_shift);

/* Parses a whole rule option: "max" or "min" with "RANK=AMOUNT", into
 * rule. Returns 0 or -EINVAL with err set. */
int tier_group_rule_set(struct tier_group_rule *rule, const char *which,
			const char *spec, struct tier_err *err);

/* Checks a rule: min <= max where both are the same kind. Returns 0 or
 * -EINVAL with err set. */
int tier_group_rule_check(const struct tier_group_rule *rule, struct tier_err *err);

/* Weighted max-min fair split of cap pages among n groups: group i wants
 * demand[i], is guaranteed floor[i] (capped by its demand) and may have no
 * more than ceil[i]; weights w[i] > 0. share[i] receives its part: its
 * demand when all demands fit; else clamp(L * w[i], floor, min(demand,
 * ceil)) at the water level L where the shares fill cap (floors that do
 * not fit together are scaled down). */
void tier_fair_share(size_t n, const uint64_t *demand, const uint64_t *floor,
		     const uint64_t *ceil, const uint32_t *w, uint64_t cap,
		     uint64_t *share);

#endif
