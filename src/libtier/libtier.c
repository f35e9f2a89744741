/* libtier.c - libtier's public entry points (see include/tier.h). */
#include "tier.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/linux/topology.h"
#include "common/client.h"
#include "core/config.h"
#include "core/topology.h"
#include "libtier/internal.h"

#define TIER_API __attribute__((visibility("default")))

#define STR_(x) #x
#define STR(x) STR_(x)

/* How long one request may wait for tierd's answer. */
#define CALL_TIMEOUT_MS 5000
/* Pages per move_pages(2) call of tier_query: arrays on the stack. */
#define QUERY_BATCH 256

struct tier_handle {
	pthread_mutex_t lock;		/* serialises fd: one request at a time */
	int fd;				/* connection to tierd; -1 after a failure */
	size_t page_sz;			/* bytes */
	char socket_path[108];		/* sizeof(sockaddr_un.sun_path) */
};


TIER_API const char *tier_version(void)
{
	return STR(TIER_VERSION_MAJOR) "." STR(TIER_VERSION_MINOR) "." STR(TIER_VERSION_PATCH);
}

TIER_API const char *tier_strerror(int err)
{
	const char *msg;

	if (err >= 0)
		return "success";
	if (err < -4095)	/* no errno is that large (and -INT_MIN overflows) */
		return "unknown error";
	switch (-err) {
	case ENOENT:
		return "tierd is not running (no control socket; start tierd or set TIERD_SOCKET)";
	case ECONNREFUSED:
		return "tierd is not running (its control socket refuses connections)";
	case EPERM:
		return "not permitted: only root may advise another user's process";
	case ESRCH:
		return "no such process";
	case EINVAL:
		return "invalid argument (NULL handle, empty or wrapping range, unknown advice)";
	case ETIMEDOUT:
		return "tierd did not answer in time";
	case EBUSY:
		return "tierd is busy (too many clients)";
	case EOPNOTSUPP:
		return "tierd cannot apply advice here (it manages no real processes: a simulated machine)";
	case EPROTO:
		return "unexpected answer from tierd (protocol mismatch or dropped connection)";
	}
	/* Unlike strerror(), never writes a shared buffer (thread-safe). */
	msg = strerrordesc_np(-err);
	return msg ? msg : "unknown error";
}

const char *tier__advice_name(enum tier_advice advice)
{
	return tier_proto_advice_name((int)advice);
}

/* Widens [addr, addr + len) to whole pages. -EINVAL for len 0 or a range
 * that wraps around the address space. */
static int page_range(const void *addr, size_t len, size_t page_sz, uintptr_t *start,
		      size_t *nr_pages)
{
	uintptr_t a = (uintptr_t)addr, last, end;

	if (!len || len - 1 > UINTPTR_MAX - a)
		return -EINVAL;
	last = a + (len - 1);
	/* The last page must not be the top one: its end would wrap to 0. */
	if (last > UINTPTR_MAX - page_sz)
		return -EINVAL;
	*start = a & ~(uintptr_t)(page_sz - 1);
	end = (last + page_sz) & ~(uintptr_t)(page_sz - 1);
	*nr_pages = (size_t)((end - *start) / page_sz);
	return 0;
}

TIER_API int tier_open(tier_t **out)
{
	const char *path;
	struct json_object *res = NULL;
	bool answered;
	tier_t *t;
	long ps;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	path = secure_getenv("TIERD_SOCKET");
	if (!path || !*path)
		path = TIER_CONFIG_DEFAULT_SOCKET;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (strlen(path) >= sizeof(t->socket_path)) {
		ret = -ENAMETOOLONG;
		goto out_free;
	}
	strcpy(t->socket_path, path);
	ps = sysconf(_SC_PAGESIZE);
	t->page_sz = ps > 0 ? (size_t)ps : 4096;
	ret = pthread_mutex_init(&t->lock, NULL);
	if (ret) {
		ret = -ret;
		goto out_free;
	}
	ret = tier_client_connect(t->socket_path, &t->fd, NULL);
	if (ret)
		goto out_mutex;
	/* Something listens: make sure it is a tierd that answers. */
	ret = tier_client_exchange(t->fd, TIER_CMD_PING, NULL, CALL_TIMEOUT_MS, &res, &answered,
				   NULL);
	json_object_put(res);
	if (ret)
		goto out_close;
	*out = t;
	return 0;
out_close:
	close(t->fd);
out_mutex:
	pthread_mutex_destroy(&t->lock);
out_free:
	free(t);
	return ret;
}

TIER_API void tier_close(tier_t *tier)
{
	if (!tier)
		return;
	if (tier->fd >= 0)
		close(tier->fd);
	pthread_mutex_destroy(&tier->lock);
	free(tier);
}

/* One hint request under the handle's lock. A connection that broke (tierd
 * restarted, an earlier timeout left it out of step) is re-opened once. */
static int call_hint(tier_t *tier, struct json_object *args)
{
	struct json_object *res = NULL;
	bool answered = false, fresh = false;
	int ret, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (tier->fd < 0) {
			ret = tier_client_connect(tier->socket_path, &tier->fd, NULL);
			if (ret)
				break;
			fresh = true;
		}
		ret = tier_client_exchange(tier->fd, TIER_CMD_HINT, json_object_get(args),
					   CALL_TIMEOUT_MS, &res, &answered, NULL);
		json_object_put(res);
		res = NULL;
		if (answered)
			break;
		close(tier->fd);
		tier->fd = -1;
		/* A timeout is not worth a second wait; a fresh connection that
		 * fails will fail again. */
		if (ret == -ETIMEDOUT || fresh)
			break;
	}
	return ret;
}

TIER_API int tier_advise_pid(tier_t *tier, pid_t pid, const void *addr, size_t len,
			     enum tier_advice advice)
{
	const char *name = tier__advice_name(advice);
	struct json_object *args;
	uintptr_t start;
	size_t nr_pages;
	int ret;

	if (!tier || pid <= 0 || !name)
		return -EINVAL;
	ret = page_range(addr, len, tier->page_sz, &start, &nr_pages);
	if (ret)
		return ret;
	args = json_object_new_object();
	if (!args)
		return -ENOMEM;
	if (json_object_object_add(args, "pid", json_object_new_int64(pid)) ||
	    json_object_object_add(args, "addr", json_object_new_uint64(start)) ||
	    json_object_object_add(args, "len", json_object_new_uint64((uint64_t)nr_pages *
									   tier->page_sz)) ||
	    json_object_object_add(args, "advice", json_object_new_string(name))) {
		json_object_put(args);
		return -ENOMEM;
	}
	pthread_mutex_lock(&tier->lock);
	ret = call_hint(tier, args);
	pthread_mutex_unlock(&tier->lock);
	json_object_put(args);
	return ret;
}

TIER_API int tier_advise(tier_t *tier, const void *addr, size_t len, enum tier_advice advice)
{
	return tier_advise_pid(tier, getpid(), addr, len, advice);
}

/* Fills out[i].tier from the topology; -1 everywhere when it is unknown. */
static void fill_ranks(const char *sysfs_root, struct tier_page_info *out, size_t n)
{
	struct tier_linux_topology lt = { .sysfs_root = sysfs_root };
	struct tier_topology topo;
	size_t i;

	if (tier_topology_discover(&tier_linux_topology_ops, &lt, NULL, 0, &topo, NULL)) {
		for (i = 0; i < n; i++)
			out[i].tier = -1;
		return;
	}
	for (i = 0; i < n; i++)
		out[i].tier = out[i].node >= 0 ? tier_topology_node_rank(&topo, out[i].node) : -1;
	tier_topology_release(&topo);
}

int tier__query_at(const char *sysfs_root, const void *addr, size_t len,
		   struct tier_page_info *out, size_t nr)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t page_sz = ps > 0 ? (size_t)ps : 4096;
	size_t nr_pages, done, i;
	bool any = false;
	uintptr_t start;
	int ret;

	if (!out && nr)
		return -EINVAL;
	ret = page_range(addr, len, page_sz, &start, &nr_pages);
	if (ret)
		return ret;
	if (nr_pages > nr)
		nr_pages = nr;
	if (nr_pages > INT_MAX)
		nr_pages = INT_MAX;
	for (done = 0; done < nr_pages;) {
		void *pages[QUERY_BATCH];
		int status[QUERY_BATCH];
		size_t n = nr_pages - done < QUERY_BATCH ? nr_pages - done : QUERY_BATCH;

		for (i = 0; i < n; i++)
			pages[i] = (void *)(start + (done + i) * page_sz);
		/* nodes == NULL: report where each page is, move nothing. */
		if (syscall(SYS_move_pages, 0, (unsigned long)n, pages, NULL, status, 0) < 0)
			return -errno;
		for (i = 0; i < n; i++) {
			out[done + i].node = status[i];
			any |= status[i] >= 0;
		}
		done += n;
	}
	/* Reading the topology costs a few dozen sysfs reads: only when some
	 * page has a node to rank. */
	if (any) {
		fill_ranks(sysfs_root, out, nr_pages);
	} else {
		for (i = 0; i < nr_pages; i++)
			out[i].tier = -1;
	}
	return (int)nr_pages;
}

TIER_API int tier_query(const void *addr, size_t len, struct tier_page_info *out, size_t nr)
{
	return tier__query_at("/sys", addr, len, out, nr);
}
