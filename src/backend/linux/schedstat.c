/* schedstat.c - a process's threads' time waiting for a CPU (contract in
 * schedstat.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/schedstat.h"
#include "backend/linux/sysfs.h"

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The process's CPU clock as w's one entry (tier_linux_waits.cpu_clock). */
static void read_cpu_clock(pid_t pid, struct tier_linux_waits *w)
{
	struct timespec ts;
	clockid_t c;

	if (clock_getcpuclockid(pid, &c) || clock_gettime(c, &ts))
		return;
	w->v[0].tid = pid;
	w->v[0].run_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	w->v[0].wait_ns = 0;
	w->n = 1;
	w->cpu_clock = true;
}

int tier_linux_waits_read(const char *procfs_root, pid_t pid, struct tier_linux_waits *w)
{
	pid_t tids[TIER_LINUX_WAITS_MAX];
	size_t n = 0, i;
	char path[512];
	struct dirent *de;
	DIR *d;

	w->n = 0;
	w->cpu_clock = false;
	if (tier_sysfs_path(path, sizeof(path), procfs_root, "%d/task", (int)pid))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while (n < TIER_LINUX_WAITS_MAX && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		tids[n++] = (pid_t)tid;
	}
	closedir(d);
	qsort(tids, n, sizeof(*tids), cmp_tid);
	for (i = 0; i < n; i++) {
		unsigned long long run, wait;
		FILE *f;

		if (tier_sysfs_path(path, sizeof(path), procfs_root, "%d/task/%d/schedstat",
				    (int)pid, (int)tids[i])) {
			w->n = 0;
			return -ENAMETOOLONG;
		}
		f = fopen(path, "re");
		if (!f)
			continue;	/* gone since, or no CONFIG_SCHED_INFO */
		if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
			w->v[w->n].tid = tids[i];
			w->v[w->n].run_ns = run;
			w->v[w->n].wait_ns = wait;
			w->n++;
		}
		fclose(f);
	}
	if (n && !w->n)
		read_cpu_clock(pid, w);
	return 0;
}

/* Advances *i and *j (readings a and b, by tid ascending) to the next
 * thread in both; false when there is none left. */
static bool next_common(const struct tier_linux_waits *a, const struct tier_linux_waits *b,
			size_t *i, size_t *j)
{
	while (*i < a->n && *j < b->n) {
		if (a->v[*i].tid < b->v[*j].tid)
			(*i)++;
		else if (a->v[*i].tid > b->v[*j].tid)
			(*j)++;
		else
			return true;
	}
	return false;
}

/* A counter that went back is another thread that got the tid: left out. */
void tier_linux_waits_delta(const struct tier_linux_waits *a, const struct tier_linux_waits *b,
			    struct tier_linux_waits_delta *d)
{
	size_t i = 0, j = 0;

	d->ran_ns = d->waited_ns = d->max_ran_ns = d->threads = 0;
	for (; next_common(a, b, &i, &j); i++, j++) {
		uint64_t run, wait;

		if (b->v[j].run_ns < a->v[i].run_ns || b->v[j].wait_ns < a->v[i].wait_ns)
			continue;
		run = b->v[j].run_ns - a->v[i].run_ns;
		wait = b->v[j].wait_ns - a->v[i].wait_ns;
		d->ran_ns += run;
		d->waited_ns += wait;
		if (run > d->max_ran_ns)
			d->max_ran_ns = run;
		d->threads += run + wait > 0;
	}
}

/* The thread's stat file, from its state on (field 3): after the ')' that
 * ends its name, which may hold spaces. NULL when it cannot be read. */
static const char *thread_stat(const char *procfs_root, pid_t pid, pid_t tid, char *buf,
			       size_t sz)
{
	char path[512];
	size_t n;
	FILE *f;
	char *p;

	if (tier_sysfs_path(path, sizeof(path), procfs_root, "%d/task/%d/stat", (int)pid, (int)tid))
		return NULL;
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sz - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

/* The thread's start, in clock ticks after boot: stat's 22nd field. */
static bool thread_start(const char *procfs_root, pid_t pid, pid_t tid, unsigned long long *ticks)
{
	char buf[1024];
	const char *p = thread_stat(procfs_root, pid, tid, buf, sizeof(buf));
	int field;

	/* "S ppid ...": p is at field 3 */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p && sscanf(p, "%llu", ticks) == 1;
}

bool tier_linux_waits_stalled(const char *procfs_root, pid_t pid, const struct tier_linux_waits *a,
			      const struct tier_linux_waits *b)
{
	size_t i = 0, j = 0;

	if (a->cpu_clock || b->cpu_clock)
		return false;	/* no thread's own times */
	for (; next_common(a, b, &i, &j); i++, j++) {
		char buf[1024];
		const char *st;

		if (b->v[j].run_ns != a->v[i].run_ns || b->v[j].wait_ns != a->v[i].wait_ns)
			continue;
		st = thread_stat(procfs_root, pid, b->v[j].tid, buf, sizeof(buf));
		if (st && (*st == 'R' || *st == 'D'))
			return true;
	}
	return false;
}

double tier_linux_runnable_share(const char *procfs_root, pid_t pid,
				 const struct tier_linux_waits *w)
{
	long hz = sysconf(_SC_CLK_TCK);
	double uptime, best = 0;
	char path[512];
	size_t i;
	FILE *f;
	int ok;

	if (!w->n || hz <= 0 || tier_sysfs_path(path, sizeof(path), procfs_root, "uptime"))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%lf", &uptime) == 1;
	fclose(f);
	if (!ok)
		return 0;
	for (i = 0; i < w->n; i++) {
		unsigned long long start;
		double age, share;

		if (!thread_start(procfs_root, pid, w->v[i].tid, &start))
			continue;
		age = uptime - (double)start / (double)hz;
		if (age <= 0)
			continue;
		share = (double)(w->v[i].run_ns + w->v[i].wait_ns) / 1e9 / age;
		if (share > best)
			best = share;
	}
	return best > 1 ? 1 : best;
}

uint64_t tier_linux_waits_mean(const struct tier_linux_waits *a, const struct tier_linux_waits *b)
{
	struct tier_linux_waits_delta d;

	tier_linux_waits_delta(a, b, &d);
	return tier_linux_waits_delta_mean(&d);
}

uint64_t tier_linux_waits_ran(const struct tier_linux_waits *a, const struct tier_linux_waits *b)
{
	struct tier_linux_waits_delta d;

	tier_linux_waits_delta(a, b, &d);
	return d.ran_ns;
}
