/* answer-probe.c - how long tierd's control socket takes to answer, from
 * one connection kept open (so that no client's start-up is counted):
 * every INTERVAL_MS, `status`, `heatmap` of PID and `explain` of the
 * first page of PID's largest writable mapping, one after the other, each
 * timed from the request's send to its answer's last byte (CLOCK_MONOTONIC).
 *   answer-probe SOCKET PID SECONDS [INTERVAL_MS]
 * Prints a line per answer ("answer T_MS CMD MS", T from the start) and,
 * at the end, per request "answer-ms CMD n=N median=M p90=P max=X". Exit
 * status 1 when the socket cannot be reached or a request gets no answer
 * within 30 s. For bench/progs/answer-guest.sh. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SAMPLES = 100000 };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The first address of pid's largest writable private mapping, or 0. */
static unsigned long long largest_mapping(int pid)
{
	char path[64], line[512], perms[8];
	unsigned long long a, b, best = 0, best_len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 && perms[1] == 'w' &&
		    b - a > best_len) {
			best = a;
			best_len = b - a;
		}
	fclose(f);
	return best;
}

/* Sends req on fd and reads one answer line; its time in ms, or -1. */
static double ask(int fd, const char *req)
{
	static char buf[1 << 16];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double t0 = now_ms();
	size_t len = strlen(req);

	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	for (;;) {
		ssize_t n;

		if (poll(&p, 1, 30000) != 1)
			return -1;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return -1;
		if (memchr(buf, '\n', (size_t)n))
			return now_ms() - t0;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summary(const char *name, double *v, size_t n)
{
	if (!n) {
		printf("answer-ms %s n=0\n", name);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	printf("answer-ms %s n=%zu median=%.1f p90=%.1f max=%.1f\n", name, n, v[n / 2],
	       v[(n * 9) / 10], v[n - 1]);
}

int main(int argc, char **argv)
{
	static const char *const names[3] = { "status", "heatmap", "explain" };
	static double times[3][MAX_SAMPLES];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n[3] = { 0, 0, 0 };
	char req[3][256];
	double start, end, interval;
	int fd, pid, k;

	if (argc < 4) {
		fprintf(stderr, "usage: answer-probe SOCKET PID SECONDS [INTERVAL_MS]\n");
		return 2;
	}
	pid = atoi(argv[2]);
	interval = argc > 4 ? atof(argv[4]) : 250;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "answer-probe: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	snprintf(req[0], sizeof(req[0]), "{\"v\":1,\"cmd\":\"status\"}\n");
	snprintf(req[1], sizeof(req[1]), "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":%d}}\n", pid);
	snprintf(req[2], sizeof(req[2]),
		 "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":%d,\"addr\":%llu}}\n", pid,
		 largest_mapping(pid));
	start = now_ms();
	end = start + atof(argv[3]) * 1e3;
	while (now_ms() < end) {
		double t = now_ms();

		for (k = 0; k < 3; k++) {
			double ms = ask(fd, req[k]);

			if (ms < 0) {
				fprintf(stderr, "answer-probe: no answer to %s\n", names[k]);
				return 1;
			}
			printf("answer %.0f %s %.1f\n", now_ms() - start, names[k], ms);
			if (n[k] < MAX_SAMPLES)
				times[k][n[k]++] = ms;
		}
		fflush(stdout);
		t = interval - (now_ms() - t);
		if (t > 0)
			usleep((useconds_t)(t * 1e3));
	}
	for (k = 0; k < 3; k++)
		summary(names[k], times[k], n[k]);
	return 0;
}
