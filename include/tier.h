/* tier.h - libtier: state memory-placement intent to tierd.
 *
 * Stable ABI: opaque types, versioned symbols (libtier.so.0), errors as
 * negative errno. Link with `pkg-config --libs tier`; see libtier(3).
 *
 * Two halves:
 *  - advice (tier_open, tier_advise, tier_close) goes to the tierd daemon
 *    over its control socket. When tierd is not running, tier_open returns
 *    -ENOENT or -ECONNREFUSED and the application simply carries on without
 *    it: advice only ever changes where pages sit, never what they hold.
 *  - tier_query asks the kernel where pages are (move_pages(2) without
 *    moving anything) and needs no daemon.
 *
 * Thread safety: every function may be called from any thread. One handle
 * may be shared by threads (its connection is serialised by a mutex inside);
 * a handle must not be used in a child after fork() - open a new one there.
 */
#ifndef TIER_H
#define TIER_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIER_VERSION_MAJOR 0
#define TIER_VERSION_MINOR 2
#define TIER_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH" (static storage). Since 0.1. */
const char *tier_version(void);

/* A human-readable message for a negative errno returned by libtier
 * (static storage; never NULL). The codes libtier gives a meaning of its own
 * (-ENOENT, -ECONNREFUSED: tierd is not running; -EPERM: not your process;
 * ...) get a message saying so; any other code its strerror() text.
 * Since 0.1. */
const char *tier_strerror(int err);

/* A connection to tierd. Opaque; since 0.2. */
typedef struct tier_handle tier_t;

/* What an application states about a range of its memory. The values are
 * part of the ABI and never change; new kinds of advice get new values. */
enum tier_advice {
	TIER_ADVICE_DEFAULT = 0,	/* forget earlier advice: the policy decides */
	TIER_ADVICE_HOT = 1,		/* will be used a lot: place it fast */
	TIER_ADVICE_COLD = 2,		/* rarely used: demote it first */
	TIER_ADVICE_PIN_FAST = 3,	/* keep in the fastest tier, whatever its heat
					 * (within the cgroup's limits) */
	TIER_ADVICE_LATENCY = 4,	/* latency-critical: prefer the lowest-latency tier */
	TIER_ADVICE_BANDWIDTH = 5,	/* streamed: prefer the highest-bandwidth tier */
};

/* Opens a connection to tierd at $TIERD_SOCKET, or /run/tierd/tierd.sock
 * when that is unset (ignored in set-user-ID programs), and checks that the
 * daemon answers. On success *out is a handle the caller owns (free it with
 * tier_close) and 0 is returned. Errors: -EINVAL (out is NULL), -ENOENT or
 * -ECONNREFUSED (tierd is not running), -EACCES, -ETIMEDOUT (no answer in
 * 5 s), -EBUSY (the daemon has too many clients), -ENOMEM. *out is NULL on
 * error. Since 0.2. */
int tier_open(tier_t **out);

/* Closes the connection and frees the handle. NULL is a no-op. Since 0.2. */
void tier_close(tier_t *tier);

/* Advises tierd about [addr, addr + len) of the calling process.
 * The range is widened to whole pages: addr is rounded down and the end up
 * to the page size, so the advice covers every page the range touches.
 * Advice replaces earlier advice for the same pages and lasts until the
 * range is unmapped, the process exits or new advice comes.
 * Returns 0 once tierd accepted the advice, or: -EINVAL (tier NULL, len 0,
 * the range wraps around the address space, unknown advice), -EPERM, -ESRCH,
 * the daemon's other errors, -ENOENT/-ECONNREFUSED (tierd went away since
 * tier_open), -ETIMEDOUT, -EPIPE/-EPROTO (the connection broke, and so did
 * the new one), -ENOMEM. A dropped connection (tierd restarted) is re-opened
 * once transparently. Since 0.2. */
int tier_advise(tier_t *tier, const void *addr, size_t len, enum tier_advice advice);

/* tier_advise for another process, for operators and supervisors. addr is
 * an address in that process. tierd allows it when the caller's uid owns
 * pid, or the caller is root: otherwise -EPERM. -ESRCH when there is no
 * such process, -EINVAL when pid <= 0. Since 0.2. */
int tier_advise_pid(tier_t *tier, pid_t pid, const void *addr, size_t len,
		    enum tier_advice advice);

/* Where one page is. The layout is part of the ABI and never changes. */
struct tier_page_info {
	int node;	/* NUMA node id of the page, or a negative errno from
			 * move_pages(2): -ENOENT the page is not present (never
			 * touched, or swapped out), -EFAULT not mapped (or the
			 * shared zero page) */
	int tier;	/* tier rank of that node, 0 = fastest; -1 when node < 0
			 * or the topology is unknown */
};

/* Where the pages of [addr, addr + len) of the calling process are, with no
 * daemon involved. The range is widened to whole pages as for tier_advise;
 * out[i] describes the i-th page from the rounded-down addr. At most nr
 * entries are filled (out may be NULL when nr is 0); pages beyond them are
 * not looked at. Nothing is moved and no page is faulted in.
 * The tier rank comes from the machine's topology in sysfs, ranked as
 * tierctl topology ranks it (kernel memory tiers, else HMAT, else SLIT); a
 * tierd configured with its own tier order may rank differently. When the
 * topology cannot be read, tier is -1 and node is still filled.
 * Returns the number of entries filled (min(pages in range, nr, INT_MAX)),
 * or -EINVAL (len 0, the range wraps, out NULL with nr > 0), -ENOSYS (a
 * kernel without NUMA), -ENOMEM. Reentrant. Since 0.2. */
int tier_query(const void *addr, size_t len, struct tier_page_info *out, size_t nr);

#ifdef __cplusplus
}
#endif

#endif
