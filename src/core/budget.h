/* budget.h - a token bucket for the migration budget (bytes per second).
 *
 * Tokens accrue at rate_bytes_per_s up to burst_bytes; a move of n bytes
 * may go only when n tokens are there. With a rate of 0 the budget is
 * unlimited. Time in microseconds from the env's clock.
 */
#ifndef TIER_CORE_BUDGET_H
#define TIER_CORE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct tier_budget {
	uint64_t rate_bytes_per_s;	/* 0 = unlimited */
	uint64_t burst_bytes;
	uint64_t tokens;
	uint64_t last_us;
	uint64_t spent_bytes;		/* total taken, for accounting */
};

/* burst_bytes 0 picks one interval's worth: rate * interval_us. */
void tier_budget_init(struct tier_budget *b, uint64_t rate_bytes_per_s,
		      uint64_t burst_bytes, uint64_t now_us);
void tier_budget_refill(struct tier_budget *b, uint64_t now_us);
/* Bytes that may be spent now. */
uint64_t tier_budget_available(const struct tier_budget *b);
/* Takes n bytes if available; returns whether it did. */
bool tier_budget_take(struct tier_budget *b, uint64_t n);
/* Gives back bytes that were taken but not used (a failed move). */
void tier_budget_refund(struct tier_budget *b, uint64_t n);

#endif
