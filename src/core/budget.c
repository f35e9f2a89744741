/* budget.c - token bucket for the migration budget. */
#include "core/budget.h"

void tier_budget_init(struct tier_budget *b, uint64_t rate_bytes_per_s,
		      uint64_t burst_bytes, uint64_t now_us)
{
	b->rate_bytes_per_s = rate_bytes_per_s;
	b->burst_bytes = burst_bytes;
	b->tokens = 0;
	b->last_us = now_us;
	b->spent_bytes = 0;
}

void tier_budget_refill(struct tier_budget *b, uint64_t now_us)
{
	uint64_t dt, add;

	if (!b->rate_bytes_per_s || now_us <= b->last_us)
		return;
	dt = now_us - b->last_us;
	/* rate * dt / 1e6 without overflow for rates up to ~1 TB/s. */
	add = b->rate_bytes_per_s / 1000000 * dt +
	      b->rate_bytes_per_s % 1000000 * dt / 1000000;
	b->tokens += add;
	if (b->burst_bytes && b->tokens > b->burst_bytes)
		b->tokens = b->burst_bytes;
	b->last_us = now_us;
}

uint64_t tier_budget_available(const struct tier_budget *b)
{
	return b->rate_bytes_per_s ? b->tokens : UINT64_MAX;
}

bool tier_budget_take(struct tier_budget *b, uint64_t n)
{
	if (b->rate_bytes_per_s) {
		if (b->tokens < n)
			return false;
		b->tokens -= n;
	}
	b->spent_bytes += n;
	return true;
}

void tier_budget_refund(struct tier_budget *b, uint64_t n)
{
	if (b->rate_bytes_per_s)
		b->tokens += n;
	b->spent_bytes -= n < b->spent_bytes ? n : b->spent_bytes;
}
