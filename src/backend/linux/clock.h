/* clock.h - this host's monotonic clock, the one reader of it: the core's
 * clock ops for the Linux world, and the time base of the daemon, its
 * trackers, the probe and the control-socket client. */
#ifndef TIER_LINUX_CLOCK_H
#define TIER_LINUX_CLOCK_H

#include <stdint.h>

#include "core/ops.h"

/* CLOCK_MONOTONIC in nanoseconds and in microseconds. */
uint64_t tier_linux_now_ns(void);
uint64_t tier_linux_now_us(void);

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), nanoseconds;
 * 0 where it cannot be read. */
uint64_t tier_linux_thread_cpu_ns(void);
/* ... and the whole process's (CLOCK_PROCESS_CPUTIME_ID: every thread). */
uint64_t tier_linux_process_cpu_ns(void);

/* The core's clock ops over it (priv unused). */
extern const struct tier_clock_ops tier_linux_clock_ops;

#endif
