/* load_check - load on tierd, for tests/system/load.sh and `make load`.
 *
 *   load_check procs N [--kib K] [--seconds S]
 *     forks N small processes, each touching K KiB (default 128) of its
 *     own anonymous memory once a second, prints
 *       load_check pid=P procs=N
 *       ready
 *     and ends them all after S seconds (default 600) or on SIGTERM.
 *
 *   load_check clients N --socket PATH [--seconds S]
 *     N concurrent control clients (threads) for S seconds (default 30),
 *     each repeating its kind of conversation (client i is kind i % 6):
 *       well-behaved  one status request, one response
 *       slow reader   300 status requests at once, the responses read 256
 *                     bytes every 20 ms
 *       half-written  half a request, 2 s of silence, the other half
 *       abandoned     half a request, then the connection closed
 *       oversized     a line of 70000 bytes (no newline in the first 65536)
 *       malformed     lines that are not JSON, not an object, of another
 *                     version, with an unknown command or field, bytes
 *                     that are not UTF-8, a NUL
 *     Every response must be one whole line of JSON with "v":1 (the right
 *     "ok" for its request); a connection may end only after whole lines
 *     (a clean close). A torn line, a reset before any answer where one
 *     was due, or 60 s without a byte is a failure (tierd answers in order,
 *     in the thread that runs its steps; a status walks every managed page). Prints
 *       clients=N conversations=C answers=A clean_closes=K failures=F
 *     and exits 0 only when F is 0. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum kind { WELL, SLOW, HALF, ABANDON, OVERSIZED, MALFORMED, NR_KINDS };
static const char *const kind_name[NR_KINDS] = {
	"well-behaved", "slow reader", "half-written", "abandoned", "oversized", "malformed",
};

#define STATUS_REQ "{\"v\":1,\"cmd\":\"status\"}\n"
#define SLOW_REQUESTS 300
#define READ_TIMEOUT_S 60

static const char *sock_path;
static double deadline;
static atomic_ulong conversations, answers, clean_closes, failures;
static atomic_uint fail_reports;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void fail(int id, const char *what, const char *detail)
{
	atomic_fetch_add(&failures, 1);
	if (atomic_fetch_add(&fail_reports, 1) < 20)
		fprintf(stderr, "load_check: client %d (%s): %s%s%s\n", id, kind_name[id % NR_KINDS],
			what, detail ? ": " : "", detail ? detail : "");
}

static int connect_tierd(int id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = READ_TIMEOUT_S };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fail(id, "connect", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static bool send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* A response line: JSON with "v":1 and the expected "ok". */
static bool line_ok(const char *line, size_t len, bool want_ok)
{
	const char *ok = want_ok ? "\"ok\":true" : "\"ok\":false";

	return len >= 2 && line[0] == '{' && line[len - 1] == '}' && memmem(line, len, "\"v\":1", 5) &&
	       memmem(line, len, ok, strlen(ok));
}

/* Reads up to `want` response lines (each checked against want_ok[i], or
 * all against want_ok[0] when one_kind), chunk bytes at a time with
 * pause_ms between reads. Returns the number of whole, valid lines read
 * before the end; sets *clean when the connection ended after a whole
 * line (EOF, or a reset with nothing torn). A torn or invalid line, or
 * silence for READ_TIMEOUT_S, is a failure (returns -1). */
static int read_lines(int id, int fd, int want, const bool *want_ok, bool one_kind, size_t chunk,
		      unsigned pause_ms, bool *clean)
{
	static __thread char buf[1 << 20];
	size_t len = 0;
	int got = 0;

	*clean = false;
	while (got < want) {
		ssize_t n = recv(fd, buf + len, chunk < sizeof(buf) - len ? chunk : sizeof(buf) - len, 0);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			fail(id, "no answer", "60 s without a byte");
			return -1;
		}
		if (n <= 0) {
			if (len) {
				fail(id, "torn response", n < 0 ? strerror(errno) : "end of stream");
				return -1;
			}
			*clean = true;
			return got;
		}
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			size_t l = (size_t)(nl - buf);

			if (!line_ok(buf, l, want_ok[one_kind ? 0 : got])) {
				buf[l < 200 ? l : 200] = '\0';
				fail(id, "bad response", buf);
				return -1;
			}
			got++;
			memmove(buf, nl + 1, len - l - 1);
			len -= l + 1;
		}
		if (len == sizeof(buf)) {
			fail(id, "response line over 1 MiB", NULL);
			return -1;
		}
		if (pause_ms)
			sleep_ms(pause_ms);
	}
	return got;
}

/* One conversation of client id's kind. */
static void converse(int id)
{
	static const bool yes = true, no = false;
#define LINE(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
		LINE("not json\n"),
		LINE("[]\n"),
		LINE("{\"v\":2,\"cmd\":\"status\"}\n"),
		LINE("{\"v\":1,\"cmd\":\"no-such-command\"}\n"),
		LINE("{\"v\":1,\"cmd\":\"status\",\"extra\":1}\n"),
		LINE("{\"v\":1,\"cmd\":\"hint\",\"args\":{\"pid\":\"x\"}}\n"),
		LINE("{\"v\":1,\"cmd\":\"st\xff\xfe\"}\n"),
		LINE("{\"v\":1,\"cmd\":\"status\"\0}\n"),
		LINE("{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":1,\"bins\":100000}}\n"),
	};
#undef LINE
	bool want[SLOW_REQUESTS], clean;
	int fd = connect_tierd(id), got, i;
	char *big;

	if (fd < 0) {
		sleep_ms(100);
		return;
	}
	atomic_fetch_add(&conversations, 1);
	switch ((enum kind)(id % NR_KINDS)) {
	case WELL:
		if (!send_all(fd, STATUS_REQ, strlen(STATUS_REQ)))
			fail(id, "send", strerror(errno));
		else if ((got = read_lines(id, fd, 1, &yes, true, 4096, 0, &clean)) == 1)
			atomic_fetch_add(&answers, 1);
		else if (got == 0)
			fail(id, "closed without an answer to a good request", NULL);
		break;
	case SLOW: {
		size_t n = strlen(STATUS_REQ);
		char *reqs = malloc(n * SLOW_REQUESTS);

		for (i = 0; i < SLOW_REQUESTS; i++)
			memcpy(reqs + (size_t)i * n, STATUS_REQ, n);
		/* tierd may drop a reader this slow: whole answers, then a
		 * clean close, is right too. */
		if (send_all(fd, reqs, n * SLOW_REQUESTS)) {
			got = read_lines(id, fd, SLOW_REQUESTS, &yes, true, 256, 20, &clean);
			if (got == SLOW_REQUESTS)
				atomic_fetch_add(&answers, 1);
			else if (got >= 0 && clean)
				atomic_fetch_add(&clean_closes, 1);
		} else {
			/* tierd stopped reading and closed: the whole answers
			 * before that must still be whole. */
			got = read_lines(id, fd, SLOW_REQUESTS, &yes, true, 4096, 0, &clean);
			if (got >= 0)
				atomic_fetch_add(&clean_closes, 1);
		}
		free(reqs);
		break;
	}
	case HALF:
		if (!send_all(fd, "{\"v\":1,\"cmd\":\"sta", 17)) {
			fail(id, "send", strerror(errno));
			break;
		}
		sleep_ms(2000);
		if (!send_all(fd, "tus\"}\n", 6))
			fail(id, "send of the second half", strerror(errno));
		else if ((got = read_lines(id, fd, 1, &yes, true, 4096, 0, &clean)) == 1)
			atomic_fetch_add(&answers, 1);
		else if (got == 0)
			fail(id, "closed without an answer to a completed request", NULL);
		break;
	case ABANDON:
		send_all(fd, "{\"v\":1,\"cmd\":\"sta", 17);
		sleep_ms(200);
		atomic_fetch_add(&clean_closes, 1);
		break;
	case OVERSIZED:
		big = malloc(70001);
		memset(big, 'x', 70000);
		big[70000] = '\n';
		/* tierd answers E2BIG and closes; it may close before all
		 * was sent. */
		send_all(fd, big, 70001);
		free(big);
		got = read_lines(id, fd, 1, &no, true, 4096, 0, &clean);
		if (got == 1)
			atomic_fetch_add(&answers, 1);
		else if (got == 0)
			atomic_fetch_add(&clean_closes, 1);
		break;
	case MALFORMED:
		for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
			want[i] = false;
			if (!send_all(fd, bad[i].s, bad[i].n))
				break;
		}
		got = read_lines(id, fd, i, want, false, 4096, 0, &clean);
		if (got == i)
			atomic_fetch_add(&answers, 1);
		else if (got >= 0)
			atomic_fetch_add(&clean_closes, 1);
		break;
	default:
		break;
	}
	close(fd);
}

static void *client_main(void *arg)
{
	int id = (int)(long)arg;

	while (now_s() < deadline)
		converse(id);
	return NULL;
}

static int run_clients(int n, double seconds)
{
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	int i;

	deadline = now_s() + seconds;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, client_main, (void *)(long)i)) {
			fprintf(stderr, "load_check: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("clients=%d conversations=%lu answers=%lu clean_closes=%lu failures=%lu\n", n,
	       atomic_load(&conversations), atomic_load(&answers), atomic_load(&clean_closes),
	       atomic_load(&failures));
	free(th);
	return atomic_load(&failures) ? 1 : 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void small_process(size_t kib, double until)
{
	size_t len = kib * 1024, i;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(1);
	while (!stop && now_s() < until) {
		for (i = 0; i < len; i += 4096)
			p[i]++;
		sleep(1);
	}
	_exit(0);
}

static int run_procs(int n, size_t kib, double seconds)
{
	struct sigaction sa = { .sa_handler = on_term };
	double until = now_s() + seconds;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int i, started = 0, bad = 0, status;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			small_process(kib, until);
		if (pids[i] < 0) {
			fprintf(stderr, "load_check: fork %d: %s\n", i, strerror(errno));
			break;
		}
		started++;
	}
	printf("load_check pid=%d procs=%d\nready\n", (int)getpid(), started);
	fflush(stdout);
	while (!stop && now_s() < until)
		sleep(1);
	for (i = 0; i < started; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < started; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	printf("load_check procs=%d ended_badly=%d\n", started, bad);
	free(pids);
	return started == n && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	double seconds = -1;
	size_t kib = 128;
	int n, i;

	if (argc < 3 || (strcmp(argv[1], "procs") && strcmp(argv[1], "clients"))) {
		fprintf(stderr, "usage: load_check procs N [--kib K] [--seconds S]\n"
				"       load_check clients N --socket PATH [--seconds S]\n");
		return 2;
	}
	n = atoi(argv[2]);
	for (i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--kib"))
			kib = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--socket"))
			sock_path = argv[i + 1];
		else {
			fprintf(stderr, "load_check: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (i != argc || n < 1 || n > 100000 || !kib) {
		fprintf(stderr, "load_check: need N >= 1, options with values, --kib > 0\n");
		return 2;
	}
	if (!strcmp(argv[1], "procs"))
		return run_procs(n, kib, seconds > 0 ? seconds : 600);
	if (!sock_path) {
		fprintf(stderr, "load_check: clients needs --socket PATH\n");
		return 2;
	}
	return run_clients(n, seconds > 0 ? seconds : 30);
}
