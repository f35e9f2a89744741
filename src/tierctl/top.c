/* top.c - `tierctl top` on a terminal: a full-screen view of the daemon
 * refreshed every interval (ncurses). Tiers with occupancy bars, migration
 * rates, tierd's CPU, and the managed processes with their bytes per tier
 * and the share the policy counts hot. Keys: q quit, m/h/p/c sort by
 * managed bytes, hot bytes, pid, CPU; + and - slow and quicken the refresh.
 * The terminal is put back on every way out (q, the daemon gone, SIGINT,
 * SIGTERM). Not on a terminal, cmd_status.c prints status blocks. */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/client.h"
#include "common/topology_out.h"
#include "core/topology.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 5000
/* Processes asked of the daemon (the screen shows what fits). */
#define TOP_PROCS 256
/* How often keys and signals are looked at while waiting. */
#define POLL_MS 100

enum sort_key { SORT_MANAGED, SORT_HOT, SORT_PID, SORT_CPU };
static const char *const sort_name[] = { "managed", "hot", "pid", "cpu" };

struct proc_row {
	int pid;
	char name[17];
	uint64_t managed, hot, tier[TIER_MAX_TIERS];
	bool has_hot;
	uint64_t ticks;			/* utime + stime from /proc/PID/stat */
	double cpu_pct;			/* -1: unknown */
};

struct view {
	const char *socket;
	int interval_ms;
	enum sort_key sort;
	struct json_object *st;		/* the last status */
	double st_at, prev_at;		/* when it was read (monotonic s) */
	/* Rates between the last two statuses. */
	double promoted_per_s, demoted_per_s, cpu_pct;
	uint64_t prev_promoted, prev_demoted;
	double prev_cpu;
	bool has_prev;
	struct proc_row *rows, *prev_rows;
	size_t nr_rows, nr_prev, total_procs;
	size_t nr_tiers;
	char err[256];
	bool slow;			/* the last refresh timed out */
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t growth(uint64_t from, uint64_t to)
{
	return to > from ? to - from : 0;
}

/* The process's name and CPU ticks from /proc (this host's view: a daemon
 * in another pid namespace shows "?"). */
static void read_proc(struct proc_row *r)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(r->name, sizeof(r->name), "?");
	r->ticks = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", r->pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(r->name, sizeof(r->name), f))
			r->name[strcspn(r->name, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", r->pid);
	if (!(f = fopen(path, "r")))
		return;
	/* Fields 14 and 15 (utime, stime), counted after the name's ')'. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
		r->ticks = ut + st;
	fclose(f);
}

/* Reads status and processes. Returns 0, or -errno of the failed call
 * with v->err set (-ETIMEDOUT: tierd is slow, not gone). */
static int fetch(struct view *v)
{
	struct tier_err err = { "" };
	struct json_object *st, *pr, *args, *arr;
	double at, dt;
	long hz = sysconf(_SC_CLK_TCK);
	size_t i, k;

	int ret;

	ret = tier_client_call(v->socket, TIER_CMD_STATUS, NULL, CALL_TIMEOUT_MS, &st, &err);
	if (ret) {
		snprintf(v->err, sizeof(v->err), "%s", err.msg);
		return ret;
	}
	args = json_object_new_object();
	json_object_object_add(args, "limit", json_object_new_int(TOP_PROCS));
	ret = tier_client_call(v->socket, TIER_CMD_PROCESSES, args, CALL_TIMEOUT_MS, &pr, &err);
	if (ret) {
		json_object_put(st);
		snprintf(v->err, sizeof(v->err), "%s", err.msg);
		return ret;
	}
	at = now_s();
	dt = at - v->st_at;
	if (v->st) {
		v->has_prev = true;
		v->prev_promoted = tierctl_json_u64(v->st, "promoted_bytes");
		v->prev_demoted = tierctl_json_u64(v->st, "demoted_bytes");
		v->prev_cpu = tierctl_json_dbl(v->st, "cpu_seconds");
		json_object_put(v->st);
	}
	v->st = st;
	/* Counts that went back (another daemon on the socket) read as 0. */
	if (v->has_prev && dt > 0) {
		v->promoted_per_s = (double)growth(v->prev_promoted, tierctl_json_u64(st, "promoted_bytes")) / dt;
		v->demoted_per_s = (double)growth(v->prev_demoted, tierctl_json_u64(st, "demoted_bytes")) / dt;
		v->cpu_pct = tierctl_json_dbl(st, "cpu_seconds") >= v->prev_cpu ?
				     (tierctl_json_dbl(st, "cpu_seconds") - v->prev_cpu) / dt * 100 : 0;
	}
	v->prev_at = v->st_at;
	v->st_at = at;
	/* The rows: the last ones kept to take CPU deltas from. */
	free(v->prev_rows);
	v->prev_rows = v->rows;
	v->nr_prev = v->nr_rows;
	v->rows = NULL;
	v->nr_rows = 0;
	v->total_procs = tierctl_json_u64(pr, "total");
	if (json_object_object_get_ex(pr, "processes", &arr) && json_object_is_type(arr, json_type_array)) {
		size_t n = json_object_array_length(arr);

		v->rows = calloc(n ? n : 1, sizeof(*v->rows));
		for (i = 0; v->rows && i < n; i++) {
			struct json_object *o = json_object_array_get_idx(arr, i), *tb, *hot;
			struct proc_row *r = &v->rows[v->nr_rows++];

			r->pid = (int)tierctl_json_u64(o, "pid");
			r->managed = tierctl_json_u64(o, "managed_bytes");
			r->has_hot = json_object_object_get_ex(o, "hot_bytes", &hot) && hot;
			r->hot = r->has_hot ? (uint64_t)json_object_get_int64(hot) : 0;
			if (json_object_object_get_ex(o, "tier_bytes", &tb))
				for (k = 0; k < json_object_array_length(tb) && k < TIER_MAX_TIERS; k++)
					r->tier[k] = (uint64_t)json_object_get_int64(json_object_array_get_idx(tb, k));
			read_proc(r);
			r->cpu_pct = -1;
			for (k = 0; k < v->nr_prev; k++)
				if (v->prev_rows[k].pid == r->pid && dt > 0 && hz > 0 &&
				    r->ticks >= v->prev_rows[k].ticks) {
					r->cpu_pct = (double)(r->ticks - v->prev_rows[k].ticks) / (double)hz / dt * 100;
					break;
				}
		}
	}
	json_object_put(pr);
	return 0;
}

static enum sort_key sort_by;

static int cmp_rows(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	switch (sort_by) {
	case SORT_HOT:
		if (x->hot != y->hot)
			return x->hot < y->hot ? 1 : -1;
		break;
	case SORT_CPU:
		if (x->cpu_pct != y->cpu_pct)
			return x->cpu_pct < y->cpu_pct ? 1 : -1;
		break;
	case SORT_MANAGED:
		if (x->managed != y->managed)
			return x->managed < y->managed ? 1 : -1;
		break;
	case SORT_PID:
		break;
	}
	return x->pid - y->pid;
}

/* A column's header, "*" marking the one sorted by. */
static const char *col(char *buf, size_t sz, const char *name, bool sorted)
{
	snprintf(buf, sz, "%s%s", sorted ? "*" : "", name);
	return buf;
}

/* Prints one line at row y, cut to the screen's width. */
static void line(int y, int attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y >= LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	move(y, 0);
	clrtoeol();
	attron(attr);
	addnstr(buf, COLS);
	attroff(attr);
}

/* A bar of width w, filled to fraction f with c. */
static const char *bar(char *buf, int w, double f, char c, char rest)
{
	int i, n = (int)(f * w + 0.5);

	if (w < 1)
		w = 1;
	if (n > w)
		n = w;
	for (i = 0; i < w; i++)
		buf[i] = i < n ? c : rest;
	buf[w] = '\0';
	return buf;
}

static void draw(struct view *v)
{
	struct json_object *tiers, *st = v->st;
	char b1[32], b2[32], b3[32], bb[256], head[256];
	int y = 0, w;
	size_t i, r, len;

	erase();
	line(y++, A_REVERSE, " tierd on %s   policy %s   tracker %s   up %.0f s   %llu process%s   refresh %.1f s%*s",
	     tierctl_json_str(st, "machine"), tierctl_json_str(st, "policy"), tierctl_json_str(st, "tracker"),
	     tierctl_json_dbl(st, "uptime_seconds"), (unsigned long long)tierctl_json_u64(st, "processes"),
	     tierctl_json_u64(st, "processes") == 1 ? "" : "es", v->interval_ms / 1000.0, COLS, "");
	y++;
	line(y++, A_BOLD, "TIER  NODES      MANAGED / CAPACITY      OCCUPANCY");
	v->nr_tiers = 0;
	if (json_object_object_get_ex(st, "tiers", &tiers)) {
		v->nr_tiers = json_object_array_length(tiers);
		for (r = 0; r < v->nr_tiers; r++) {
			struct json_object *t = json_object_array_get_idx(tiers, r), *nodes;
			uint64_t m = tierctl_json_u64(t, "managed_bytes"), cap = tierctl_json_u64(t, "capacity_bytes");
			char list[64] = "";
			size_t k;

			len = 0;
			if (json_object_object_get_ex(t, "nodes", &nodes))
				for (k = 0; k < json_object_array_length(nodes) && len < sizeof(list) - 8; k++)
					len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", k ? "," : "",
								json_object_get_int(json_object_array_get_idx(nodes, k)));
			w = COLS - 50;
			w = w < 10 ? 10 : w > 60 ? 60 : w;
			line(y++, 0, "%4zu  %-9s %9s / %-9s  [%s] %3.0f%%", r, list,
			     tier_format_bytes(m, b1, sizeof(b1)), tier_format_bytes(cap, b2, sizeof(b2)),
			     bar(bb, w, cap ? (double)m / (double)cap : 0, '#', '.'),
			     cap ? 100.0 * (double)m / (double)cap : 0.0);
		}
	}
	y++;
	line(y++, 0, "migrations  promoted %s/s  demoted %s/s   (so far %s up, %s down, %llu failed)",
	     tier_format_bytes((uint64_t)v->promoted_per_s, b1, sizeof(b1)),
	     tier_format_bytes((uint64_t)v->demoted_per_s, b2, sizeof(b2)),
	     tier_format_bytes(tierctl_json_u64(st, "promoted_bytes"), b3, sizeof(b3)),
	     tier_format_bytes(tierctl_json_u64(st, "demoted_bytes"), bb, sizeof(bb)),
	     (unsigned long long)tierctl_json_u64(st, "failed_moves"));
	line(y++, 0, "tierd       CPU %.1f%%   metadata %s   managed %s",
	     v->has_prev ? v->cpu_pct : 0.0, tier_format_bytes(tierctl_json_u64(st, "metadata_bytes"), b1, sizeof(b1)),
	     tier_format_bytes(tierctl_json_u64(st, "managed_bytes"), b2, sizeof(b2)));
	if (json_object_object_get_ex(st, "amat_ns", &tiers))
		line(y++, 0, "simulated   AMAT %.1f ns, %.1f%% of accesses served by tier 0",
		     tierctl_json_dbl(st, "amat_ns"), tierctl_json_dbl(st, "fast_access_ratio") * 100);
	y++;
	/* The processes' header: the sorted column marked with '*'. */
	len = (size_t)snprintf(head, sizeof(head), " %6s %-16s  %9s", col(b1, sizeof(b1), "PID", v->sort == SORT_PID),
			       "NAME", col(b2, sizeof(b2), "MANAGED", v->sort == SORT_MANAGED));
	for (r = 0; r < v->nr_tiers && r < 4; r++) {
		char t[16];

		snprintf(t, sizeof(t), "TIER %zu", r);
		len += (size_t)snprintf(head + len, sizeof(head) - len, " %9s", t);
	}
	w = COLS - (int)len - 44;
	w = w < 10 ? 10 : w > 40 ? 40 : w;
	snprintf(head + len, sizeof(head) - len, "  %9s %9s  %-*s  %5s", col(b1, sizeof(b1), "HOT", v->sort == SORT_HOT),
		 "COLD", w + 2, "HOT/COLD", col(b2, sizeof(b2), "CPU%", v->sort == SORT_CPU));
	line(y++, A_REVERSE, "%-*s", COLS, head);
	sort_by = v->sort;
	qsort(v->rows, v->nr_rows, sizeof(*v->rows), cmp_rows);
	for (i = 0; i < v->nr_rows && y < LINES - 2; i++) {
		const struct proc_row *p = &v->rows[i];
		char cpu[16], hot[32], cold[32];

		len = (size_t)snprintf(head, sizeof(head), " %6d %-16s  %9s", p->pid, p->name,
				       tier_format_bytes(p->managed, b1, sizeof(b1)));
		for (r = 0; r < v->nr_tiers && r < 4; r++)
			len += (size_t)snprintf(head + len, sizeof(head) - len, " %9s",
						tier_format_bytes(p->tier[r], b1, sizeof(b1)));
		snprintf(cpu, sizeof(cpu), p->cpu_pct < 0 ? "-" : "%.1f", p->cpu_pct);
		snprintf(hot, sizeof(hot), "%s", p->has_hot ? tier_format_bytes(p->hot, b1, sizeof(b1)) : "-");
		snprintf(cold, sizeof(cold), "%s", p->has_hot ?
			 tier_format_bytes(p->managed > p->hot ? p->managed - p->hot : 0, b1, sizeof(b1)) : "-");
		snprintf(head + len, sizeof(head) - len, "  %9s %9s  [%s]  %5s", hot, cold,
			 bar(bb, w, p->has_hot && p->managed ? (double)p->hot / (double)p->managed : 0,
			     '#', p->has_hot ? '.' : ' '), cpu);
		line(y++, 0, "%s", head);
	}
	if (!v->nr_rows)
		line(y++, 0, "  no managed process");
	else if (v->total_procs > i)
		line(y++, 0, "  ... %zu more", v->total_procs - i);
	if (v->slow)
		line(LINES - 2, A_BOLD, " %s; the figures above are from %.0f s ago, retrying", v->err,
		     now_s() - v->st_at);
	line(LINES - 1, A_REVERSE, " q quit   m managed   h hot   p pid   c cpu   +/- refresh   sorted by %s%*s",
	     sort_name[v->sort], COLS, "");
	refresh();
}

int tierctl_top_screen(const char *socket, int interval_ms, long iterations)
{
	struct view v = { .socket = socket, .interval_ms = interval_ms, .sort = SORT_MANAGED };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	double next;
	long done = 0;
	int ret = 0, ch;

	/* Reach the daemon before taking the screen: a wrong socket is one
	 * line on a normal terminal. */
	if (fetch(&v)) {
		fprintf(stderr, "tierctl top: %s\n", v.err);
		return 1;
	}
	/* Our handlers before initscr(): ncurses then leaves SIGINT and
	 * SIGTERM to us, and we put the terminal back before dying of them. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	setlocale(LC_ALL, "");
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(POLL_MS);
	draw(&v);
	done = 1;
	next = now_s() + interval_ms / 1000.0;
	while (!got_signal && (iterations < 0 || done < iterations)) {
		ch = getch();
		switch (ch) {
		case 'q': case 'Q':
			goto out;
		case 'm': v.sort = SORT_MANAGED; draw(&v); continue;
		case 'h': v.sort = SORT_HOT; draw(&v); continue;
		case 'p': v.sort = SORT_PID; draw(&v); continue;
		case 'c': v.sort = SORT_CPU; draw(&v); continue;
		case '+':
			v.interval_ms = v.interval_ms * 2 > 60000 ? 60000 : v.interval_ms * 2;
			next = v.st_at + v.interval_ms / 1000.0;
			draw(&v);
			continue;
		case '-':
			v.interval_ms = v.interval_ms / 2 < 100 ? 100 : v.interval_ms / 2;
			next = v.st_at + v.interval_ms / 1000.0;
			draw(&v);
			continue;
		case KEY_RESIZE:
			draw(&v);
			continue;
		default:
			break;
		}
		if (now_s() < next)
			continue;
		ret = fetch(&v);
		/* A daemon busy past the call's timeout is slow, not gone: the
		 * last figures stay, marked, and the next refresh tries again. */
		v.slow = ret == -ETIMEDOUT;
		if (ret && !v.slow) {
			ret = 1;
			break;
		}
		ret = 0;
		draw(&v);
		done++;
		next = v.st_at + v.interval_ms / 1000.0;
	}
out:
	endwin();
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	json_object_put(v.st);
	free(v.rows);
	free(v.prev_rows);
	if (got_signal) {
		/* Die of the signal as if unhandled, the terminal put back. */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	if (ret)
		fprintf(stderr, "tierctl top: tierd no longer answers: %s\n", v.err);
	return ret;
}
