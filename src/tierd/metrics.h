/* metrics.h - tierd's Prometheus metrics endpoint (docs/metrics.md): off
 * unless daemon.metrics (or tierd --metrics) names an ADDR:PORT.
 *
 * Two threads, one hand-over. The daemon's loop renders the whole
 * exposition text from its live state after a step (and once at start)
 * and publishes it; libmicrohttpd's own thread serves the last text
 * published and never reads the daemon's state. The hand-over is a
 * pointer swap under a mutex.
 *
 *   tierd_metrics_open    bind the socket (before capabilities are dropped)
 *   tierd_metrics_start   first render, start the HTTP thread (after)
 *   tierd_metrics_step    a step's latency; render and publish
 *   tierd_metrics_close   stop the thread, close, free
 */
#ifndef TIERD_METRICS_H
#define TIERD_METRICS_H

#include <stdint.h>

#include "core/err.h"

struct tierd;
struct tierd_metrics;

/* Per-process series: the processes with the most managed bytes, at
 * most this many (bounded cardinality whatever the machine runs). */
#define TIERD_METRICS_TOP_PROCESSES 20

/* The text is rendered after a step at most this often: a scrape sees
 * figures at most this old plus one step; a short interval_ms does not
 * make tierd walk its page table for metrics ten times a second. */
#define TIERD_METRICS_RENDER_PERIOD_US UINT64_C(1000000)

/* Binds and listens on d->cfg.metrics_addr into d->metrics; nothing
 * (d->metrics NULL) when it is NULL. Returns 0 or -errno with err set
 * ("metrics endpoint 127.0.0.1:9464: Address already in use"). */
int tierd_metrics_open(struct tierd *d, struct tier_err *err);

/* Renders the first text and starts serving it on the HTTP thread. A
 * no-op without an endpoint. Returns 0 or -errno with err set. */
int tierd_metrics_start(struct tierd *d, struct tier_err *err);

/* After a step that took step_us (wall clock): counts it in the
 * latency histogram and, when the last text is older than
 * TIERD_METRICS_RENDER_PERIOD_US, renders and publishes a new one. A
 * no-op without an endpoint. Never fails: a text that cannot be built
 * (out of memory) leaves the last one served. */
void tierd_metrics_step(struct tierd *d, uint64_t step_us);

/* Stops serving, closes the socket, frees d->metrics. */
void tierd_metrics_close(struct tierd *d);

#endif
