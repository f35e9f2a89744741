/* clock.c - this host's monotonic clock. */
#include "backend/linux/clock.h"

#include <time.h>

uint64_t tier_linux_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tier_linux_now_us(void)
{
	return tier_linux_now_ns() / 1000u;
}

uint64_t tier_linux_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tier_linux_process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_now_us(void *priv)
{
	(void)priv;
	return tier_linux_now_us();
}

const struct tier_clock_ops tier_linux_clock_ops = {
	.name = "monotonic",
	.now_us = clock_now_us,
};
