/* groups.c - control groups' shares of each tier: amounts and fair split. */
#include "core/groups.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tier_groups_init(struct tier_groups *g)
{
	memset(g, 0, sizeof(*g));
	g->nr = 1;
}

int tier_amount_parse(const char *s, int *rank, struct tier_amount *out,
		      struct tier_err *err)
{
	const char *eq = strchr(s, '='), *v;
	char *end;
	unsigned long r;

	if (!eq || eq == s)
		return tier_err_set(err, -EINVAL, "'%s': expected RANK=SIZE or RANK=PCT%%", s);
	errno = 0;
	r = strtoul(s, &end, 10);
	if (end != eq || errno || r >= TIER_GROUP_RANKS || *s == '-' || *s == '+')
		return tier_err_set(err, -EINVAL, "'%s': tier rank must be 0..%d", s,
				    TIER_GROUP_RANKS - 1);
	v = eq + 1;
	if (!*v)
		return tier_err_set(err, -EINVAL, "'%s': no amount after '='", s);
	if (!strcmp(v, "none")) {
		out->kind = TIER_AMOUNT_NONE;
		out->value = 0;
		*rank = (int)r;
		return 0;
	}
	if (v[strlen(v) - 1] == '%') {
		double pct;

		errno = 0;
		pct = strtod(v, &end);
		if (end != v + strlen(v) - 1 || errno || !(pct >= 0 && pct <= 100) || *v == '-' ||
		    *v == '+' || *v == ' ')
			return tier_err_set(err, -EINVAL,
					    "'%s': a percentage must be 0..100%%", s);
		out->kind = TIER_AMOUNT_PERMYRIAD;
		out->value = (uint64_t)(pct * 100 + 0.5);
	} else {
		unsigned long long n;
		unsigned shift = 0;

		if (*v < '0' || *v > '9')
			return tier_err_set(err, -EINVAL,
					    "'%s': the amount must be a size (128M) or a percentage (25%%)", s);
		errno = 0;
		n = strtoull(v, &end, 10);
		if (errno)
			return tier_err_set(err, -EINVAL, "'%s': size out of range", s);
		switch (*end) {
		case '\0': break;
		case 'k': case 'K': shift = 10; end++; break;
		case 'm': case 'M': shift = 20; end++; break;
		case 'g': case 'G': shift = 30; end++; break;
		case 't': case 'T': shift = 40; end++; break;
		default: end = (char *)"?"; break;
		}
		if (*end == 'i' && shift)
			end++;
		if (*end == 'B' && shift)
			end++;
		if (*end)
			return tier_err_set(err, -EINVAL,
					    "'%s': unknown size suffix (K, M, G or T)", s);
		if (shift && n > (UINT64_MAX >> shift))
			return tier_err_set(err, -EINVAL, "'%s': size out of range", s);
		out->kind = TIER_AMOUNT_BYTES;
		out->value = (uint64_t)n << shift;
	}
	*rank = (int)r;
	return 0;
}

int tier_amount_format(const struct tier_amount *a, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	uint64_t v = a->value;
	int i = -1;

	switch (a->kind) {
	case TIER_AMOUNT_BYTES:
		while (v && !(v & 1023) && i < 3) {
			v >>= 10;
			i++;
		}
		if (i < 0)
			return snprintf(buf, len, "%" PRIu64, v);
		return snprintf(buf, len, "%" PRIu64 "%c", v, suffix[i]);
	case TIER_AMOUNT_PERMYRIAD:
		if (v % 100 == 0)
			return snprintf(buf, len, "%" PRIu64 "%%", v / 100);
		return snprintf(buf, len, "%" PRIu64 ".%02" PRIu64 "%%", v / 100, v % 100);
	default:
		return snprintf(buf, len, "-");
	}
}

uint64_t tier_amount_pages(const struct tier_amount *a, uint64_t tier_pages,
			   unsigned page_shift)
{
	switch (a->kind) {
	case TIER_AMOUNT_BYTES:
		return a->value >> page_shift;
	case TIER_AMOUNT_PERMYRIAD:
		return (uint64_t)((double)tier_pages * (double)a->value / 10000.0);
	default:
		return UINT64_MAX;
	}
}

int tier_group_rule_set(struct tier_group_rule *rule, const char *which,
			const char *spec, struct tier_err *err)
{
	struct tier_amount a;
	int rank, ret = tier_amount_parse(spec, &rank, &a, err);

	if (ret)
		return ret;
	if (!strcmp(which, "max"))
		rule->max[rank] = a;
	else if (!strcmp(which, "min"))
		rule->min[rank] = a;
	else
		return tier_err_set(err, -EINVAL, "unknown limit '%s' (max or min)", which);
	return 0;
}

int tier_group_rule_check(const struct tier_group_rule *rule, struct tier_err *err)
{
	int r;

	if (rule->weight > TIER_GROUP_MAX_WEIGHT)
		return tier_err_set(err, -EINVAL, "weight %u is above %d", rule->weight,
				    TIER_GROUP_MAX_WEIGHT);
	for (r = 0; r < TIER_GROUP_RANKS; r++) {
		const struct tier_amount *mx = &rule->max[r], *mn = &rule->min[r];

		if (mx->kind != TIER_AMOUNT_NONE && mx->kind == mn->kind && mn->value > mx->value) {
			char a[32], b[32];

			tier_amount_format(mn, a, sizeof(a));
			tier_amount_format(mx, b, sizeof(b));
			return tier_err_set(err, -EINVAL,
					    "tier %d: min %s is above max %s", r, a, b);
		}
	}
	return 0;
}

void tier_fair_share(size_t n, const uint64_t *demand, const uint64_t *floor,
		     const uint64_t *ceil, const uint32_t *w, uint64_t cap,
		     uint64_t *share)
{
	double want[TIER_GROUPS_MAX], low[TIER_GROUPS_MAX], sum_want = 0, sum_low = 0;
	double lo = 0, hi = 0, total;
	size_t i, it;

	if (n > TIER_GROUPS_MAX)
		n = TIER_GROUPS_MAX;
	for (i = 0; i < n; i++) {
		want[i] = (double)(demand[i] < ceil[i] ? demand[i] : ceil[i]);
		low[i] = (double)floor[i] < want[i] ? (double)floor[i] : want[i];
		sum_want += want[i];
		sum_low += low[i];
	}
	if (sum_want <= (double)cap) {
		/* Not contended: everyone gets what it wants. */
		for (i = 0; i < n; i++)
			share[i] = (uint64_t)want[i];
		return;
	}
	if (sum_low >= (double)cap) {
		/* Even the floors do not fit: in proportion to them. */
		for (i = 0; i < n; i++)
			share[i] = (uint64_t)(low[i] * (double)cap / sum_low);
		return;
	}
	/* The water level L: group i gets clamp(L * w[i], low[i], want[i]),
	 * and the shares add up to cap (bisection; the sum grows with L). */
	for (i = 0; i < n; i++)
		if (w[i] && want[i] / w[i] > hi)
			hi = want[i] / w[i];
	for (it = 0; it < 64; it++) {
		double mid = (lo + hi) / 2;

		total = 0;
		for (i = 0; i < n; i++) {
			double x = mid * w[i];

			total += x < low[i] ? low[i] : x > want[i] ? want[i] : x;
		}
		if (total > (double)cap)
			hi = mid;
		else
			lo = mid;
	}
	for (i = 0; i < n; i++) {
		double x = lo * w[i];

		share[i] = (uint64_t)(x < low[i] ? low[i] : x > want[i] ? want[i] : x);
	}
}
