/* internal.h - the daemon's state and the calls between its modules; not
 * for the front end (main.c calls tierd_run of daemon.h only).
 *
 *   daemon.c   lifecycle: setup, the event loop, signals, teardown
 *   step.c     one policy step and tierd's CPU share
 *   reload.c   a configuration put in force (start, reload) and the
 *              control groups' rules in force
 *   control.c  the control socket: clients, requests, responses
 *
 * One thread: every function here runs from the event loop.
 */
#ifndef TIERD_INTERNAL_H
#define TIERD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "backend/linux/clock.h"
#include "common/protocol.h"
#include "core/config.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/world.h"
#include "tierd/cgroups.h"
#include "tierd/daemon.h"
#include "tierd/heatmap.h"
#include "tierd/log.h"

/* Connections at once: tierctl calls are short, but every application that
 * holds a libtier handle keeps one open. */
#define TIERD_MAX_CLIENTS 256

/* What an epoll event is about (its data.u64). */
enum {
	TIERD_TAG_TIMER = 1,
	TIERD_TAG_SIGNAL,
	TIERD_TAG_LISTEN,
	TIERD_TAG_CLIENT = 100,		/* + the client's slot */
};

/* One connection to the control socket. */
struct tierd_client {
	int fd;				/* -1: a free slot */
	uid_t uid;			/* the peer's, from SO_PEERCRED */
	char buf[TIER_PROTO_MAX_LINE + 2];	/* a request line read so far */
	size_t len;
	/* A response the socket did not take whole (owned; NULL: none).
	 * While one is pending no further request is read or handled: a
	 * client that does not read its answers stops being answered, and
	 * costs one response and its request buffer, never a torn line. */
	char *out;
	size_t out_len, out_off;
	bool close_after;		/* close once out went whole */
};

/* The control socket (control.c). */
struct tierd_control {
	int lfd;			/* listening socket, -1 when not open */
	struct tierd_client clients[TIERD_MAX_CLIENTS];
	/* Refusals logged in the current minute, and those left out. */
	uint64_t refusal_window_us;
	unsigned refusals_logged, refusals_dropped;
	/* Managed pages per node for status, counted once after each step
	 * (a count walks every managed page: per request, a client sending
	 * status after status held the daemon for minutes at 1000 processes
	 * under emulation). */
	uint64_t pages_on_node[TIER_MAX_NODES];
	bool pages_on_node_fresh;	/* cleared by each step and reload */
};

/* The daemon: owned by tierd_run, on the heap (the client buffers are
 * TIERD_MAX_CLIENTS x 64 KiB). */
struct tierd {
	const struct tierd_args *args;
	struct tier_config cfg;		/* the configuration in force */
	struct tierd_log log;
	struct tier_world *be;
	struct tier_loop loop;
	bool loop_ready;
	struct tierd_heat heat;		/* the processes' access heatmaps */
	int epfd, tfd, sfd;
	uint64_t tfd_interval_ms;	/* the interval the timer is armed at */
	struct tierd_control ctl;
	uint64_t start_us;
	uint64_t steps;
	uint64_t step_errors;		/* failed steps since the last good one */
	uint64_t next_step_us;		/* CPU share: no step before this */
	bool stop;
	int exit_status;
	/* control groups: set at run time (tierctl cgroup set), and in force */
	struct tierd_rules rt_rules;
	struct tierd_rules rules;
};

/* daemon.c */

/* Builds the world tierd runs on from d->cfg and d->args (this host, or
 * --machine sim:PRESET) into d->be. Returns 0 or -errno with err set. */
int tierd_world_new(struct tierd *d, struct tier_err *err);

/* Watches fd for input, its events tagged with tag. Returns 0 or -errno. */
int tierd_epoll_add(struct tierd *d, int fd, uint64_t tag);

/* step.c */

/* A timer tick: one policy step unless tierd's CPU share asks for a pause.
 * Errors are logged, never fatal; the end of a finite simulated run sets
 * d->stop. */
void tierd_step(struct tierd *d);

/* reload.c */

/* Loads the configuration file again and puts it in force, all of it or
 * (a bad file, a policy or control groups that cannot be set up) none:
 * the running configuration is then kept. A new interval_ms is left to
 * the event loop, which re-arms the timer. Returns 0 or -errno with err
 * set (and logged). */
int tierd_reload(struct tierd *d, struct tier_err *err);

/* The control groups' rules of cfg and those set at run time to the
 * backend, and into d->rules. A backend without control groups: a warning,
 * or with strict an error (-EOPNOTSUPP). Returns 0 or -errno with err set;
 * on error d->rules is unchanged. */
int tierd_cgroups_apply(struct tierd *d, const struct tier_config *cfg, bool strict,
			struct tier_err *err);

/* control.c */

/* Opens the control socket at d->cfg.socket_path (a stale one of a dead
 * daemon is replaced, a live daemon's refused with -EADDRINUSE) and watches
 * it. Returns 0 or -errno with err set. */
int tierd_control_open(struct tierd *d, struct tier_err *err);

/* An event of the control socket: a tag of TIERD_TAG_LISTEN or
 * TIERD_TAG_CLIENT + i. */
void tierd_control_event(struct tierd *d, uint64_t tag);

/* Closes every connection and the socket, and removes it. */
void tierd_control_close(struct tierd *d);

#endif
