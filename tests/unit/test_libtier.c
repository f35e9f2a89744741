/* test_libtier.c - libtier's argument checks, its hint requests (against a
 * fake tierd on a temporary socket) and tier_query on this process's pages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "libtier/internal.h"
#include "tier.h"

#define FIXTURES TIERD_SOURCE_ROOT "/tests/fixtures/sysfs/"

/* --- a fake tierd: answers every request line with a canned reply ---------- */

struct fake {
	char dir[64];
	char path[128];
	int lfd;
	pthread_t thread;
	pthread_mutex_t lock;
	bool stop;
	char reply[256];		/* response line, without '\n' */
	bool drop_after_reply;		/* close the connection after one reply */
	unsigned nr_requests;
	unsigned nr_connections;
	char last[1024];		/* the last request line */
};

static void fake_serve(struct fake *f, int fd)
{
	char buf[4096];
	size_t len = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		char *nl;

		if (n <= 0)
			return;
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			size_t l = (size_t)(nl - buf) + 1;
			char out[300];
			bool drop;

			pthread_mutex_lock(&f->lock);
			snprintf(f->last, sizeof(f->last), "%.*s", (int)(l - 1), buf);
			f->nr_requests++;
			snprintf(out, sizeof(out), "%s\n", f->reply);
			drop = f->drop_after_reply;
			f->drop_after_reply = false;
			pthread_mutex_unlock(&f->lock);
			if (send(fd, out, strlen(out), MSG_NOSIGNAL) < 0 || drop)
				return;
			memmove(buf, buf + l, len - l);
			len -= l;
		}
	}
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	for (;;) {
		int fd = accept(f->lfd, NULL, NULL);
		bool stop;

		pthread_mutex_lock(&f->lock);
		stop = f->stop;
		if (fd >= 0 && !stop)
			f->nr_connections++;
		pthread_mutex_unlock(&f->lock);
		if (stop) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		if (fd < 0)
			continue;
		/* One client at a time is enough: the handle keeps one
		 * connection and serialises its requests. */
		fake_serve(f, fd);
		close(fd);
	}
}

static void fake_reply(struct fake *f, const char *reply)
{
	pthread_mutex_lock(&f->lock);
	snprintf(f->reply, sizeof(f->reply), "%s", reply);
	pthread_mutex_unlock(&f->lock);
}

static struct json_object *fake_last(struct fake *f)
{
	struct json_object *o;

	pthread_mutex_lock(&f->lock);
	o = json_tokener_parse(f->last);
	pthread_mutex_unlock(&f->lock);
	assert_non_null(o);
	return o;
}

static unsigned fake_requests(struct fake *f)
{
	unsigned n;

	pthread_mutex_lock(&f->lock);
	n = f->nr_requests;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static int fake_setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test-libtier-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/tierd.sock", f->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 8), 0);
	pthread_mutex_init(&f->lock, NULL);
	fake_reply(f, "{\"v\":1,\"ok\":true,\"result\":{}}");
	assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
	setenv("TIERD_SOCKET", f->path, 1);
	*state = f;
	return 0;
}

static int fake_teardown(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fake *f = *state;
	int fd;

	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_mutex_unlock(&f->lock);
	/* Wake accept(). */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			perror("connect");
		close(fd);
	}
	pthread_join(f->thread, NULL);
	close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
	unsetenv("TIERD_SOCKET");
	free(f);
	return 0;
}

static int64_t get_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

/* --- tests ------------------------------------------------------------------ */

static void test_version_and_messages(void **state)
{
	char want[32];

	(void)state;
	snprintf(want, sizeof(want), "%d.%d.%d", TIER_VERSION_MAJOR, TIER_VERSION_MINOR,
		 TIER_VERSION_PATCH);
	assert_string_equal(tier_version(), want);
	assert_string_equal(tier_strerror(0), "success");
	assert_non_null(strstr(tier_strerror(-ENOENT), "tierd is not running"));
	assert_non_null(strstr(tier_strerror(-ECONNREFUSED), "tierd is not running"));
	assert_string_equal(tier_strerror(-ENOMEM), strerror(ENOMEM));
	assert_string_equal(tier_strerror(INT_MIN), "unknown error");
	assert_string_equal(tier_strerror(-4000), "unknown error");
}

static void test_advice_names(void **state)
{
	(void)state;
	/* The ABI's values and the protocol's names. */
	assert_int_equal(TIER_ADVICE_DEFAULT, 0);
	assert_int_equal(TIER_ADVICE_HOT, 1);
	assert_int_equal(TIER_ADVICE_COLD, 2);
	assert_int_equal(TIER_ADVICE_PIN_FAST, 3);
	assert_int_equal(TIER_ADVICE_LATENCY, 4);
	assert_int_equal(TIER_ADVICE_BANDWIDTH, 5);
	assert_string_equal(tier__advice_name(TIER_ADVICE_DEFAULT), "default");
	assert_string_equal(tier__advice_name(TIER_ADVICE_HOT), "hot");
	assert_string_equal(tier__advice_name(TIER_ADVICE_COLD), "cold");
	assert_string_equal(tier__advice_name(TIER_ADVICE_PIN_FAST), "pin-fast");
	assert_string_equal(tier__advice_name(TIER_ADVICE_LATENCY), "latency");
	assert_string_equal(tier__advice_name(TIER_ADVICE_BANDWIDTH), "bandwidth");
	assert_null(tier__advice_name((enum tier_advice)6));
	assert_null(tier__advice_name((enum tier_advice)-1));
}

static void test_no_daemon(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test-libtier-XXXXXX";
	tier_t *t = (tier_t *)1;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/none.sock", dir);
	setenv("TIERD_SOCKET", sa.sun_path, 1);
	assert_int_equal(tier_open(&t), -ENOENT);
	assert_null(t);
	/* A socket file nobody listens on: a daemon that died. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	t = (tier_t *)1;
	assert_int_equal(tier_open(&t), -ECONNREFUSED);
	assert_null(t);
	close(fd);
	unlink(sa.sun_path);
	rmdir(dir);
	unsetenv("TIERD_SOCKET");
	assert_int_equal(tier_open(NULL), -EINVAL);
	tier_close(NULL);
}

static void test_argument_checks(void **state)
{
	struct fake *f = *state;
	char buf[64] = "";
	tier_t *t;
	unsigned before;

	assert_int_equal(tier_advise(NULL, buf, sizeof(buf), TIER_ADVICE_HOT), -EINVAL);
	assert_int_equal(tier_advise_pid(NULL, getpid(), buf, sizeof(buf), TIER_ADVICE_HOT),
			 -EINVAL);
	assert_int_equal(tier_open(&t), 0);
	assert_non_null(t);
	before = fake_requests(f);
	assert_int_equal(before, 1);	/* tier_open's ping */
	assert_int_equal(tier_advise(t, buf, 0, TIER_ADVICE_HOT), -EINVAL);
	assert_int_equal(tier_advise(t, buf, sizeof(buf), (enum tier_advice)6), -EINVAL);
	assert_int_equal(tier_advise(t, buf, sizeof(buf), (enum tier_advice)-1), -EINVAL);
	assert_int_equal(tier_advise(t, (void *)(UINTPTR_MAX - 10), 100, TIER_ADVICE_HOT),
			 -EINVAL);
	assert_int_equal(tier_advise(t, (void *)(UINTPTR_MAX - 10), 5, TIER_ADVICE_HOT),
			 -EINVAL);
	assert_int_equal(tier_advise_pid(t, 0, buf, sizeof(buf), TIER_ADVICE_HOT), -EINVAL);
	assert_int_equal(tier_advise_pid(t, -1, buf, sizeof(buf), TIER_ADVICE_HOT), -EINVAL);
	/* None of them reached the daemon. */
	assert_int_equal(fake_requests(f), before);
	tier_close(t);
}

static void expect_hint(struct fake *f, long pid, uintptr_t addr, uint64_t len,
			const char *advice)
{
	struct json_object *o = fake_last(f), *args;

	assert_int_equal(get_int(o, "v"), 1);
	assert_string_equal(get_str(o, "cmd"), "hint");
	assert_true(json_object_object_get_ex(o, "args", &args));
	assert_int_equal(get_int(args, "pid"), pid);
	assert_int_equal((uint64_t)get_int(args, "addr"), (uint64_t)addr);
	assert_int_equal((uint64_t)get_int(args, "len"), len);
	assert_string_equal(get_str(args, "advice"), advice);
	assert_int_equal(json_object_object_length(args), 4);
	json_object_put(o);
}

static void test_rounding(void **state)
{
	struct fake *f = *state;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t base = 0x7f0000000000;
	tier_t *t;

	assert_int_equal(tier_open(&t), 0);
	/* Inside one page: that page. */
	assert_int_equal(tier_advise(t, (void *)(base + 100), 10, TIER_ADVICE_HOT), 0);
	expect_hint(f, getpid(), base, ps, "hot");
	/* Two bytes across a page boundary: both pages. */
	assert_int_equal(tier_advise(t, (void *)(base + ps - 1), 2, TIER_ADVICE_COLD), 0);
	expect_hint(f, getpid(), base, 2 * ps, "cold");
	/* Aligned already: unchanged. */
	assert_int_equal(tier_advise(t, (void *)base, 3 * ps, TIER_ADVICE_PIN_FAST), 0);
	expect_hint(f, getpid(), base, 3 * ps, "pin-fast");
	/* Ending exactly at a page boundary does not take the next page. */
	assert_int_equal(tier_advise(t, (void *)(base + 1), ps - 1, TIER_ADVICE_LATENCY), 0);
	expect_hint(f, getpid(), base, ps, "latency");
	assert_int_equal(tier_advise_pid(t, 4242, (void *)(base + ps), 1,
					 TIER_ADVICE_BANDWIDTH), 0);
	expect_hint(f, 4242, base + ps, ps, "bandwidth");
	assert_int_equal(tier_advise(t, (void *)base, 1, TIER_ADVICE_DEFAULT), 0);
	expect_hint(f, getpid(), base, ps, "default");
	tier_close(t);
}

static void test_daemon_errors(void **state)
{
	struct fake *f = *state;
	char buf[64] = "";
	tier_t *t;

	assert_int_equal(tier_open(&t), 0);
	fake_reply(f, "{\"v\":1,\"ok\":false,\"errno\":1,\"error\":\"hint: pid 1 is not yours\"}");
	assert_int_equal(tier_advise_pid(t, 1, buf, sizeof(buf), TIER_ADVICE_HOT), -EPERM);
	fake_reply(f, "{\"v\":1,\"ok\":false,\"errno\":3,\"error\":\"hint: no process 99999\"}");
	assert_int_equal(tier_advise_pid(t, 99999, buf, sizeof(buf), TIER_ADVICE_HOT), -ESRCH);
	fake_reply(f, "{\"v\":1,\"ok\":false,\"errno\":22,\"error\":\"hint: bad range\"}");
	assert_int_equal(tier_advise(t, buf, sizeof(buf), TIER_ADVICE_HOT), -EINVAL);
	/* The connection stays in step after an error answer. */
	fake_reply(f, "{\"v\":1,\"ok\":true,\"result\":{}}");
	assert_int_equal(tier_advise(t, buf, sizeof(buf), TIER_ADVICE_HOT), 0);
	tier_close(t);
	/* A daemon that does not speak the protocol. */
	fake_reply(f, "hello");
	assert_int_equal(tier_open(&t), -EPROTO);
	fake_reply(f, "{\"v\":1,\"ok\":true,\"result\":{}}");
}

static void test_reconnect(void **state)
{
	struct fake *f = *state;
	char buf[64] = "";
	unsigned conns;
	tier_t *t;

	assert_int_equal(tier_open(&t), 0);
	pthread_mutex_lock(&f->lock);
	conns = f->nr_connections;
	f->drop_after_reply = true;	/* as a restarting tierd would */
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(tier_advise(t, buf, sizeof(buf), TIER_ADVICE_HOT), 0);
	/* The next request finds the connection closed and opens a new one. */
	assert_int_equal(tier_advise(t, buf, sizeof(buf), TIER_ADVICE_COLD), 0);
	expect_hint(f, getpid(), (uintptr_t)buf & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1),
		    (((uintptr_t)buf + sizeof(buf) - 1) / (uintptr_t)sysconf(_SC_PAGESIZE) -
		     (uintptr_t)buf / (uintptr_t)sysconf(_SC_PAGESIZE) + 1) *
			    (uint64_t)sysconf(_SC_PAGESIZE),
		    "cold");
	pthread_mutex_lock(&f->lock);
	assert_int_equal(f->nr_connections, conns + 1);
	pthread_mutex_unlock(&f->lock);
	tier_close(t);
}

enum { NR_THREADS = 4, NR_CALLS = 50 };

static void *advise_many(void *arg)
{
	tier_t *t = arg;
	char buf[16] = "";
	long failed = 0;
	int i;

	for (i = 0; i < NR_CALLS; i++)
		failed += tier_advise(t, buf, sizeof(buf), TIER_ADVICE_HOT) != 0;
	return (void *)failed;
}

static void test_threads(void **state)
{
	struct fake *f = *state;
	pthread_t th[NR_THREADS];
	unsigned before;
	tier_t *t;
	int i;

	assert_int_equal(tier_open(&t), 0);
	before = fake_requests(f);
	for (i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, advise_many, t), 0);
	for (i = 0; i < NR_THREADS; i++) {
		void *failed;

		pthread_join(th[i], &failed);
		assert_int_equal((long)failed, 0);
	}
	assert_int_equal(fake_requests(f), before + NR_THREADS * NR_CALLS);
	tier_close(t);
}

static void test_query(void **state)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	struct tier_page_info info[4];
	char *mem;
	int i;

	(void)state;
	mem = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	mem[0] = 1;
	mem[2 * ps] = 1;
	assert_int_equal(tier_query(mem, 0, info, 4), -EINVAL);
	assert_int_equal(tier_query(mem, ps, NULL, 1), -EINVAL);
	assert_int_equal(tier_query(mem, ps, NULL, 0), 0);
	assert_int_equal(tier_query((void *)(UINTPTR_MAX - 10), 100, info, 4), -EINVAL);
	assert_int_equal(tier_query(mem, 4 * ps, info, 4), 4);
	assert_true(info[0].node >= 0);
	assert_int_equal(info[1].node, -ENOENT);	/* never touched */
	assert_int_equal(info[1].tier, -1);
	assert_true(info[2].node >= 0);
	assert_int_equal(info[3].node, -ENOENT);
	/* Fewer entries than pages: only those are filled. */
	memset(info, 0x55, sizeof(info));
	assert_int_equal(tier_query(mem, 4 * ps, info, 2), 2);
	assert_true(info[0].node >= 0);
	assert_int_equal(info[2].node, 0x55555555);
	/* Two bytes across a boundary: two pages, from the rounded-down start. */
	assert_int_equal(tier_query(mem + ps - 1, 2, info, 4), 2);
	assert_true(info[0].node >= 0);
	assert_int_equal(info[1].node, -ENOENT);
	/* The rank comes from the topology under a sysfs root. */
	assert_int_equal(tier__query_at(FIXTURES "one-node", mem, 4 * ps, info, 4), 4);
	for (i = 0; i < 4; i += 2)
		assert_int_equal(info[i].tier, info[i].node == 0 ? 0 : -1);
	/* No topology: the node is still there, the tier unknown. */
	assert_int_equal(tier__query_at("/nonexistent", mem, 4 * ps, info, 4), 4);
	assert_true(info[0].node >= 0);
	assert_int_equal(info[0].tier, -1);
	munmap(mem, 4 * ps);
	/* Unmapped now. */
	assert_int_equal(tier_query(mem, ps, info, 1), 1);
	assert_int_equal(info[0].node, -EFAULT);
	assert_int_equal(info[0].tier, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_messages),
		cmocka_unit_test(test_advice_names),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test_setup_teardown(test_argument_checks, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_rounding, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_daemon_errors, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_reconnect, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_threads, fake_setup, fake_teardown),
		cmocka_unit_test(test_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
