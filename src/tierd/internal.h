/* internal.h - the daemon's state and the calls between its modules; not
 * for the front end (main.c calls tierd_run of daemon.h only).
 *
 *   daemon.c   lifecycle: setup, the control thread's event loop,
 *              signals, teardown
 *   step.c     the step thread: policy steps, tierd's CPU share, and
 *              the requests that wait for the world
 *   reload.c   a configuration put in force (start, reload) and the
 *              control groups' rules in force
 *   control.c  the control socket: clients, requests, responses
 *   requests.c what each request does; the published figures
 *   metrics.c  the Prometheus endpoint (metrics.h)
 *   history.c  the last hour of tier bytes and migrations (history.h;
 *              its ring has its own lock)
 *   procs.c    the managed processes' figures (procs.h)
 *   devices.c  memory devices: onlined at start, nodes placed in a tier,
 *              drains
 *
 * Two threads. The control thread (the main one) runs the event loop:
 * signals and the control socket. The step thread runs the policy steps.
 * The world (the backend, the policy loop, the heatmaps, the
 * configuration and the rules in force) belongs to whichever thread holds
 * world_lock; the control thread only ever tries it, so it never waits
 * for a step. While a step waits on the kernel it lets go of read_lock,
 * and the control thread may read the world then (read-only requests).
 * The other fields say which thread owns them. The metrics
 * endpoint's HTTP thread reads only the text the step thread hands it.
 */
#ifndef TIERD_INTERNAL_H
#define TIERD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "backend/linux/clock.h"
#include "common/protocol.h"
#include "core/budget.h"
#include "core/config.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/tiercount.h"
#include "core/world.h"
#include "tierd/cgroups.h"
#include "tierd/daemon.h"
#include "tierd/heatmap.h"
#include "core/pace.h"
#include "tierd/history.h"
#include "tierd/log.h"
#include "tierd/metrics.h"

/* Connections at once: tierctl calls are short, but every application that
 * holds a libtier handle keeps one open. */
#define TIERD_MAX_CLIENTS 256

/* What an epoll event is about (its data.u64). */
enum {
	TIERD_TAG_DONE = 1,		/* the step thread answered, or stopped */
	TIERD_TAG_SIGNAL,
	TIERD_TAG_LISTEN,
	TIERD_TAG_CLIENT = 100,		/* + the client's slot */
};

/* One connection to the control socket. */
struct tierd_client {
	int fd;				/* -1: a free slot */
	uid_t uid;			/* the peer's, from SO_PEERCRED */
	uint64_t gen;			/* counts the slot's connections */
	bool waiting;			/* a request waits for the world */
	char buf[TIER_PROTO_MAX_LINE + 2];	/* a request line read so far */
	size_t len;
	/* A response the socket did not take whole (owned; NULL: none).
	 * While one is pending no further request is read or handled: a
	 * client that does not read its answers stops being answered, and
	 * costs one response and its request buffer, never a torn line. */
	char *out;
	size_t out_len, out_off;
	bool close_after;		/* close once out went whole */
	/* After a refused line: the answer went, the write side is shut;
	 * what the peer still sends is read and dropped (up to this many
	 * bytes) until it closes, so that it reads the answer rather than
	 * a broken pipe. */
	size_t discard_left;
};

/* The control socket (control.c). */
struct tierd_control {
	int lfd;			/* listening socket, -1 when not open */
	char path[108];			/* its path */
	struct tierd_client clients[TIERD_MAX_CLIENTS];
	/* Refusals logged in the current minute, and those left out. */
	uint64_t refusal_window_us;
	unsigned refusals_logged, refusals_dropped;
};

/* A request that needs the world, on its way between the threads. */
struct tierd_job {
	struct tierd_job *next;
	struct tier_request req;	/* owned */
	uid_t uid;			/* the asking peer's */
	int slot;			/* its client, -1: nobody waits (answered) */
	uint64_t gen;			/* the client slot's generation then */
	/* the arguments, checked on the control thread */
	uint64_t pid, addr, len;
	int advice;
	struct tierd_heat_query heat;
	char *response;			/* the answer line, once run */
};

/* The figures of the last step, for the control thread (JSON texts). */
struct tierd_published {
	pthread_mutex_t lock;
	char *status, *cgroups;
	uint64_t status_us;		/* when rendered */
	double kdamond_cpu_s;		/* the kdamonds' CPU in it, -1: none */
};

/* A node being drained (devices.c). */
struct tierd_drain {
	int node;
	int former_rank;		/* its tier when the drain began */
	bool done;			/* no managed page left on it */
	uint64_t start_us, done_us;
	uint64_t pages_at_start, moved_pages, failed_pages, left_pages;
	struct tier_budget budget;	/* the migration budget, for the drain */
};

#define TIERD_MAX_DRAINS 8

/* Nodes placed in a tier at run time, and drains. */
struct tierd_devices {
	struct tier_node_pin pins[TIER_MAX_NODES];
	size_t nr_pins;
	struct tierd_drain drains[TIERD_MAX_DRAINS];
	size_t nr_drains;
	int drained[TIERD_MAX_DRAINS];	/* the drains' nodes, for a spec */
};

/* The daemon: owned by tierd_run, on the heap (the client buffers are
 * TIERD_MAX_CLIENTS x 64 KiB). */
struct tierd {
	const struct tierd_args *args;
	struct tierd_log log;		/* level changed under world_lock */
	/* The world: under world_lock once the step thread runs. */
	pthread_mutex_t world_lock;
	/* Held by the step thread with world_lock, but while its step waits
	 * on the kernel (tierd_step_wait()): then whoever holds it may read
	 * the world (the control thread, for a read-only request). */
	pthread_mutex_t read_lock;
	struct tier_config cfg;		/* the configuration in force */
	struct tier_world *be;
	struct tier_loop loop;
	bool loop_ready;
	struct tierd_heat heat;		/* the processes' access heatmaps */
	struct tier_tiercount tiercount;	/* status's pages per tier (world lock) */
	struct tierd_metrics *metrics;	/* NULL: no metrics endpoint */
	struct tierd_history hist;	/* the last hour (its own lock) */
	uint64_t steps;
	uint64_t step_cpu_us;		/* the step thread's CPU in steps, all told */
	/* The last step's CPU (us) in the policy loop's step (the tracker's
	 * collect and the policy's tick with its moves), in the heatmaps and
	 * in publishing the figures: the step's debug line. */
	uint64_t step_loop_us, step_heat_us, step_publish_us;
	/* Steps not taken for want of news from the tracker (tierd_step):
	 * all told, and since the last step taken; when that one began. */
	uint64_t quiet_steps, quiet_since_step, last_look_us;
	uint64_t step_errors;		/* failed steps since the last good one */
	uint64_t next_step_us;		/* CPU share: no step before this */
	struct tier_pace pace;		/* the steps' CPU share (pace.h) */
	uint64_t next_resume_us;	/* a resume is due then; 0: none */
	uint64_t resumes;		/* resumes that ran */
	/* control groups: set at run time (tierctl cgroup set), and in force */
	struct tierd_rules rt_rules;
	struct tierd_rules rules;
	struct tierd_devices dev;	/* nodes placed in a tier, drains */
	/* Set at start, read-only after. */
	uint64_t start_us;
	bool hint_supported;		/* the world has processes to advise */
	char machine_name[64];
	/* The control thread's. */
	int epfd, sfd;
	struct tierd_control ctl;
	int exit_status;
	/* Between the threads: under jobs_lock. */
	pthread_mutex_t jobs_lock;
	pthread_cond_t jobs_cond;	/* signalled for a job, and to stop */
	struct tierd_job *jobs;		/* waiting for the world, oldest first */
	struct tierd_job *done;		/* answered, for the control thread */
	int done_fd;			/* eventfd: done has jobs, or stop is set */
	atomic_bool stop;
	atomic_uint_fast64_t step_started_us;	/* 0 between steps */
	/* Read-only jobs in jobs (tierd_job_reads_only()): changed under
	 * jobs_lock, read without it at a step's pauses. */
	atomic_uint readers;
	pthread_t step_thread;
	struct tierd_published pub;
};

/* daemon.c */

/* Builds the world tierd runs on from d->cfg and d->args (this host, or
 * --machine sim:PRESET) into d->be. Returns 0 or -errno with err set. */
int tierd_world_new(struct tierd *d, struct tier_err *err);

/* Watches fd for input, its events tagged with tag. Returns 0 or -errno. */
int tierd_epoll_add(struct tierd *d, int fd, uint64_t tag);

/* The locks and the condition variable between the threads. Returns 0
 * or an error number. */
int tierd_threads_init(struct tierd *d);
void tierd_threads_release(struct tierd *d);

/* The control thread's events: the step thread's eventfd and the control
 * socket (d->epfd). Returns 0 or -errno with err set; close them with
 * tierd_events_close, also after a failure. */
int tierd_events_open(struct tierd *d, struct tier_err *err);
void tierd_events_close(struct tierd *d);

/* Starts the step thread and runs the control thread's event loop on the
 * calling thread until d->stop; then stops the step thread. Returns 0, or
 * -errno when the loop failed (logged). */
int tierd_serve(struct tierd *d);

/* Sets stop and wakes both threads. */
void tierd_stop(struct tierd *d);

/* step.c */

/* One policy step now (world lock held), its figures published. Returns
 * when the next is due (tier_linux_now_us): interval_ms on, or later when
 * tierd's CPU share asks for a pause. */
uint64_t tierd_step(struct tierd *d);
/* Goes on with the last step's moves that the migration budget held back
 * (tier_loop_resume()), due at d->next_resume_us; returns the earliest
 * time the next step may begin. */
uint64_t tierd_resume(struct tierd *d);
/* daemon.nice on all of tierd's threads (daemon.c); a failure is logged. */
void tierd_set_nice(const struct tierd *d, int nice);
/* The CPU share the policy steps keep, in thousandths of one core: the part
 * of daemon.max_cpu_percent the world leaves them (the tracker's threads
 * keep the rest); 0 on a simulated machine, where no share is kept. */
unsigned tierd_step_share_milli(const struct tierd *d);

/* The step thread: a policy step every interval_ms unless tierd's CPU
 * share asks for a pause (the first at once), each under the world lock;
 * between steps, the jobs that wait for the world. Errors are logged,
 * never fatal; the end of a finite simulated run stops the daemon. Runs
 * until d->stop. */
void *tierd_step_main(void *arg);

/* A job for the step thread (the control thread's). */
void tierd_jobs_push(struct tierd *d, struct tierd_job *j);

/* The world's pause hook (tier_env.pause), in the step thread with the
 * world lock held: runs the read-only jobs waiting (explain, heatmap,
 * processes) and hands their answers to the control thread; the others
 * wait for the step's end. A step answers those within a batch of moves
 * or a chunk of its node query, not after its last move. */
void tierd_step_pause(void *ctx);

/* The world's wait hook (tier_env.wait), in the step thread: before a
 * wait on the kernel (begin) it lets the world be read - read_lock
 * released, for the control thread's read-only requests - and after it
 * takes read_lock back. */
void tierd_step_wait(void *ctx, bool begin);

/* The answered jobs, oldest first, taken off the done list (the control
 * thread's, on TIERD_TAG_DONE). */
struct tierd_job *tierd_jobs_done(struct tierd *d);

/* requests.c */

/* tierd's CPU seconds so far, all its threads (user + system). */
double tierd_cpu_seconds(void);

/* Renders status's and cgroups's figures from the world (world lock
 * held) and publishes them for the control thread. */
void tierd_publish(struct tierd *d);
void tierd_publish_release(struct tierd *d);

/* The answer lines (protocol.h's, newline-terminated) of status (the
 * published figures and what is read now: uptime, CPU, the figures' age,
 * the running step) and of cgroups; NULL out of memory (or none yet). */
char *tierd_status_line(struct tierd *d);
char *tierd_cgroups_line(struct tierd *d);

/* Checks a request's arguments and whether j->uid may ask it, on the
 * control thread, without the world. Returns 0 or -errno with err set
 * (-EPERM for a refusal). */
int tierd_job_check(struct tierd *d, struct tierd_job *j, struct tier_err *err);

/* Runs a checked request (world lock held): the answer into j->response
 * when someone waits for it. */
void tierd_job_run(struct tierd *d, struct tierd_job *j);

/* Whether a job only reads the world (explain, heatmap, processes): it
 * may run at a step's pause. */
bool tierd_job_reads_only(const struct tierd_job *j);

void tierd_job_free(struct tierd_job *j);

/* reload.c */

/* Loads the configuration file again and puts it in force, all of it or
 * (a bad file, a policy or control groups that cannot be set up) none:
 * the running configuration is then kept. A new interval_ms counts from
 * the next step. World lock held. Returns 0 or -errno with err set (and
 * logged). */
int tierd_reload(struct tierd *d, struct tier_err *err);

/* The control groups' rules of cfg and those set at run time to the
 * backend, and into d->rules. A backend without control groups: a warning,
 * or with strict an error (-EOPNOTSUPP). Returns 0 or -errno with err set;
 * on error d->rules is unchanged. */
int tierd_cgroups_apply(struct tierd *d, const struct tier_config *cfg, bool strict,
			struct tier_err *err);

/* devices.c */

/* Onlines the configuration's devices (d->cfg.devices) as system RAM and
 * pins their nodes to their tiers; before the world is built. Returns 0
 * or -errno with err set. */
int tierd_devices_start(struct tierd *d, struct tier_err *err);

/* Puts the pins and drains in force into spec (which borrows them). */
void tierd_devices_spec(struct tierd *d, struct tier_topology_spec *spec);

/* node-tier: {"node":N,"rank":R}: node N in tier R (R = the number of
 * tiers: a new slowest one; -1: back to the kernel's ranking). Returns 0
 * or -errno with err set, nothing changed. */
int tierd_node_tier(struct tierd *d, struct json_object *args, struct tier_err *err);

/* drain: {"node":N}: starts draining node N (or reports the drain under
 * way). Returns the drain's progress, or NULL with *ret and err set. */
struct json_object *tierd_drain(struct tierd *d, struct json_object *args, int *ret,
				struct tier_err *err);

/* One step of every drain under way; after the policy's step. */
void tierd_drain_step(struct tierd *d);

/* Adds "drains" and "placed_nodes" to a status object. */
void tierd_devices_status(const struct tierd *d, struct json_object *o);

/* control.c */

/* Opens the control socket at d->cfg.socket_path (a stale one of a dead
 * daemon is replaced, a live daemon's refused with -EADDRINUSE) and watches
 * it. Returns 0 or -errno with err set. */
int tierd_control_open(struct tierd *d, struct tier_err *err);

/* An event of the control socket: a tag of TIERD_TAG_LISTEN,
 * TIERD_TAG_DONE or TIERD_TAG_CLIENT + i, with its epoll events. */
void tierd_control_event(struct tierd *d, uint64_t tag, uint32_t events);

/* Closes every connection and the socket, and removes it. */
void tierd_control_close(struct tierd *d);

#endif
