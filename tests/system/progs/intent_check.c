/* intent_check - the workload and the libtier probes of the guest intent
 * tests (tests/system/intent.sh, progs/intent-guest.sh).
 *
 *   intent_check hog [--pin-mib P] [--self-pin-mib S] [--pin-up-mib U]
 *                    [--advised-mib A] [--control-mib C | --fill-leave-mib L]
 *                    [--hot-mib H | --hot-extra-mib X] [--wait-usr2] [--seconds T]
 *     maps one anonymous range per kind (base pages, no THP), places each
 *     with mbind(MPOL_PREFERRED) at first touch (a full node spills over
 *     instead of calling the OOM killer), then drops the policies
 *     (placement is tierd's from then on):
 *       pin       P MiB on node 0, touched once (the shell pins it)
 *       pin_self  S MiB on node 0, touched once; pinned by this process
 *                 with tier_advise(PIN_FAST) as soon as tier_open succeeds
 *       pin_up    U MiB on node 2, touched once (the shell pins it)
 *       advised   A MiB, first half on node 0, second half on node 1, kept
 *                 hot (the shell advises it cold)
 *       control   C MiB preferring node 0, touched once, never advised;
 *                 with --fill-leave-mib, what node 0 has free minus L MiB
 *       hot       H MiB, 60% on node 1, the rest on node 2, kept hot; with
 *                 --hot-extra-mib, C + A/2 + X MiB: more than node 0 has
 *                 room for once the control range and advised pages left
 *     prints "range NAME 0xSTART-0xEND" per non-empty range, then "ready",
 *     and writes one byte per page of hot and advised every 10 ms for T
 *     seconds (default 600); with --wait-usr2 only from SIGUSR2 on (it
 *     prints "hot-phase" then). On SIGUSR1 it reports where its own pages are
 *     with tier_query: "query N NAME pages=.. node0=.. node1=.. node2=..
 *     other=.. tier0=.." per range, then "query-done N".
 *
 *   intent_check advise-pid PID ADDR LEN ADVICE
 *     tier_advise_pid through libtier (hot, cold, pin-fast, default);
 *     prints "advise-pid: 0" or "advise-pid: -EPERM (message)"; exit 0 on
 *     success, 1 otherwise.
 *
 *   intent_check query-pid PID ADDR LEN
 *     the move_pages(2) status query tier_query makes of its caller, made
 *     of another process (tier_query itself has no pid argument); prints
 *     "query-pid: 0 node0=.. node1=.. node2=.. other=.." or
 *     "query-pid: -EPERM (message)"; exit 0 on success, 1 otherwise.
 *
 * ADDR is 0x-prefixed hex or decimal, LEN bytes.
 */
#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tier.h>

#include "node_mem.h"

#define MIB (1024ul * 1024)
#define PAGE 4096ul
/* Pages per move_pages(2) call of query-pid. */
#define BATCH 1024

enum range_kind { R_PIN, R_PIN_SELF, R_PIN_UP, R_ADVISED, R_CONTROL, R_HOT, NR_RANGES };

static const char *const range_names[NR_RANGES] = {
	[R_PIN] = "pin", [R_PIN_SELF] = "pin_self", [R_PIN_UP] = "pin_up",
	[R_ADVISED] = "advised", [R_CONTROL] = "control", [R_HOT] = "hot",
};

struct range {
	char *p;
	size_t len;		/* bytes */
};

static volatile sig_atomic_t query_wanted, hot_phase;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		query_wanted = 1;
	else
		hot_phase = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *errno_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "E?";
}

static int set_policy(char *p, size_t len, int mode, int node)
{
	unsigned long mask = node >= 0 ? 1ul << node : 0;

	if (mbind(p, len, mode, node >= 0 ? &mask : NULL, node >= 0 ? sizeof(mask) * 8 : 0, 0)) {
		fprintf(stderr, "intent_check: mbind node %d: %s\n", node, strerror(errno));
		return -1;
	}
	return 0;
}

/* Maps len bytes and puts its first split bytes on node a, the rest on
 * node b, touching every page; the policy is dropped again afterwards. */
static int place(struct range *r, size_t len, size_t split, int a, int b)
{
	size_t off;

	r->len = len;
	if (!len)
		return 0;
	r->p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->p == MAP_FAILED) {
		perror("intent_check: mmap");
		return -1;
	}
	madvise(r->p, len, MADV_NOHUGEPAGE);
	if (split && set_policy(r->p, split, MPOL_PREFERRED, a))
		return -1;
	if (split < len && set_policy(r->p + split, len - split, MPOL_PREFERRED, b))
		return -1;
	for (off = 0; off < len; off += PAGE)
		r->p[off] = 1;
	/* MPOL_DEFAULT without MPOL_MF_MOVE: forget the policy, move nothing. */
	return set_policy(r->p, len, MPOL_DEFAULT, -1);
}

static void report(const struct range *ranges, struct tier_page_info *info, size_t nr_info,
		   unsigned seq)
{
	int k;

	for (k = 0; k < NR_RANGES; k++) {
		unsigned long node[3] = { 0 }, other = 0, tier0 = 0;
		int n, i;

		if (!ranges[k].len)
			continue;
		n = tier_query(ranges[k].p, ranges[k].len, info, nr_info);
		if (n < 0) {
			printf("query %u %s: %s\n", seq, range_names[k], tier_strerror(n));
			continue;
		}
		for (i = 0; i < n; i++) {
			if (info[i].node >= 0 && info[i].node < 3)
				node[info[i].node]++;
			else
				other++;
			tier0 += info[i].tier == 0;
		}
		printf("query %u %s pages=%d node0=%lu node1=%lu node2=%lu other=%lu tier0=%lu\n",
		       seq, range_names[k], n, node[0], node[1], node[2], other, tier0);
	}
	printf("query-done %u\n", seq);
	fflush(stdout);
}

static int hog(int argc, char **argv)
{
	unsigned long mib[NR_RANGES] = { 0 }, leave_mib = 0, extra_mib = 0;
	bool fill = false, hot_extra = false, wait_usr2 = false, self_pending;
	struct range ranges[NR_RANGES] = { 0 };
	struct tier_page_info *info;
	double seconds = 600, next_try = 0, end;
	size_t nr_info = 0, off;
	unsigned seq = 0;
	int i, k;

	for (i = 0; i < argc; i += 2) {
		const char *a = argv[i];
		unsigned long v;

		if (!strcmp(a, "--wait-usr2")) {
			wait_usr2 = true;
			i--;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "intent_check hog: %s needs a value\n", a);
			return 2;
		}
		v = strtoul(argv[i + 1], NULL, 10);
		if (!strcmp(a, "--pin-mib"))
			mib[R_PIN] = v;
		else if (!strcmp(a, "--self-pin-mib"))
			mib[R_PIN_SELF] = v;
		else if (!strcmp(a, "--pin-up-mib"))
			mib[R_PIN_UP] = v;
		else if (!strcmp(a, "--advised-mib"))
			mib[R_ADVISED] = v;
		else if (!strcmp(a, "--control-mib"))
			mib[R_CONTROL] = v;
		else if (!strcmp(a, "--fill-leave-mib"))
			fill = true, leave_mib = v;
		else if (!strcmp(a, "--hot-mib"))
			mib[R_HOT] = v;
		else if (!strcmp(a, "--hot-extra-mib"))
			hot_extra = true, extra_mib = v;
		else if (!strcmp(a, "--seconds"))
			seconds = atof(argv[i + 1]);
		else {
			fprintf(stderr, "intent_check hog: unknown option %s\n", a);
			return 2;
		}
	}
	if (mib[R_ADVISED] % 2) {
		fprintf(stderr, "intent_check hog: --advised-mib must be even\n");
		return 2;
	}
	/* Node 0's ranges first, then the control range fills what is left
	 * of it, then the hot set goes below. */
	if (place(&ranges[R_PIN], mib[R_PIN] * MIB, mib[R_PIN] * MIB, 0, 0) ||
	    place(&ranges[R_PIN_SELF], mib[R_PIN_SELF] * MIB, mib[R_PIN_SELF] * MIB, 0, 0) ||
	    place(&ranges[R_PIN_UP], mib[R_PIN_UP] * MIB, mib[R_PIN_UP] * MIB, 2, 2) ||
	    place(&ranges[R_ADVISED], mib[R_ADVISED] * MIB, mib[R_ADVISED] / 2 * MIB, 0, 1))
		return 1;
	if (fill) {
		unsigned long free_mib = node_free_mib(0);

		if (free_mib <= leave_mib) {
			fprintf(stderr, "intent_check hog: node 0 has only %lu MiB free\n", free_mib);
			return 1;
		}
		mib[R_CONTROL] = free_mib - leave_mib;
	}
	if (place(&ranges[R_CONTROL], mib[R_CONTROL] * MIB, mib[R_CONTROL] * MIB, 0, 0))
		return 1;
	if (hot_extra)
		mib[R_HOT] = mib[R_CONTROL] + mib[R_ADVISED] / 2 + extra_mib;
	if (place(&ranges[R_HOT], mib[R_HOT] * MIB, mib[R_HOT] * 6 / 10 * MIB, 1, 2))
		return 1;

	for (k = 0; k < NR_RANGES; k++) {
		if (ranges[k].len / PAGE > nr_info)
			nr_info = ranges[k].len / PAGE;
		if (ranges[k].len)
			printf("range %s %#lx-%#lx\n", range_names[k], (unsigned long)(uintptr_t)ranges[k].p,
			       (unsigned long)(uintptr_t)(ranges[k].p + ranges[k].len));
	}
	info = calloc(nr_info ? nr_info : 1, sizeof(*info));
	if (!info) {
		perror("intent_check: calloc");
		return 1;
	}
	hot_phase = !wait_usr2;
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	printf("intent pid=%d node0_free_mib=%lu control_mib=%lu hot_mib=%lu\nready\n",
	       (int)getpid(), node_free_mib(0), mib[R_CONTROL], mib[R_HOT]);
	fflush(stdout);

	self_pending = ranges[R_PIN_SELF].len > 0;
	for (end = now_s() + seconds; now_s() < end;) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };

		if (hot_phase == 1) {
			hot_phase = 2;
			printf("hot-phase\n");
			fflush(stdout);
		}
		for (off = 0; hot_phase && off < ranges[R_HOT].len; off += PAGE)
			ranges[R_HOT].p[off]++;
		for (off = 0; hot_phase && off < ranges[R_ADVISED].len; off += PAGE)
			ranges[R_ADVISED].p[off]++;
		/* An application states intent once tierd is there: try to
		 * reach it every 100 ms until it answers. */
		if (self_pending && now_s() >= next_try) {
			tier_t *tier;
			int ret = tier_open(&tier);

			next_try = now_s() + 0.1;
			if (!ret) {
				ret = tier_advise(tier, ranges[R_PIN_SELF].p, ranges[R_PIN_SELF].len,
						  TIER_ADVICE_PIN_FAST);
				tier_close(tier);
				printf("self-advised pin-fast: %d (%s)\n", ret, tier_strerror(ret));
				fflush(stdout);
				self_pending = false;
			}
		}
		if (query_wanted) {
			query_wanted = 0;
			report(ranges, info, nr_info, ++seq);
		}
		nanosleep(&pause, NULL);
	}
	free(info);
	return 0;
}

static int parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static int advise_pid(int argc, char **argv)
{
	static const struct { const char *name; enum tier_advice advice; } advices[] = {
		{ "default", TIER_ADVICE_DEFAULT }, { "hot", TIER_ADVICE_HOT },
		{ "cold", TIER_ADVICE_COLD }, { "pin-fast", TIER_ADVICE_PIN_FAST },
	};
	unsigned long long pid, addr, len;
	tier_t *tier;
	size_t k;
	int ret;

	if (argc != 4 || parse_u64(argv[0], &pid) || parse_u64(argv[1], &addr) ||
	    parse_u64(argv[2], &len)) {
		fprintf(stderr, "usage: intent_check advise-pid PID ADDR LEN ADVICE\n");
		return 2;
	}
	for (k = 0; k < sizeof(advices) / sizeof(advices[0]); k++)
		if (!strcmp(argv[3], advices[k].name))
			break;
	if (k == sizeof(advices) / sizeof(advices[0])) {
		fprintf(stderr, "intent_check advise-pid: unknown advice '%s'\n", argv[3]);
		return 2;
	}
	ret = tier_open(&tier);
	if (!ret) {
		ret = tier_advise_pid(tier, (pid_t)pid, (const void *)(uintptr_t)addr, (size_t)len,
				      advices[k].advice);
		tier_close(tier);
	}
	if (ret)
		printf("advise-pid: -%s (%s)\n", errno_name(-ret), tier_strerror(ret));
	else
		printf("advise-pid: 0\n");
	return ret ? 1 : 0;
}

static int query_pid(int argc, char **argv)
{
	unsigned long long pid, addr, len, a, end;
	unsigned long node[3] = { 0 }, other = 0;
	void *pages[BATCH];
	int status[BATCH];

	if (argc != 3 || parse_u64(argv[0], &pid) || parse_u64(argv[1], &addr) ||
	    parse_u64(argv[2], &len) || !len) {
		fprintf(stderr, "usage: intent_check query-pid PID ADDR LEN\n");
		return 2;
	}
	addr &= ~(unsigned long long)(PAGE - 1);
	end = addr + len;
	for (a = addr; a < end;) {
		unsigned long n, i;

		for (n = 0; n < BATCH && a < end; n++, a += PAGE)
			pages[n] = (void *)(uintptr_t)a;
		/* nodes == NULL: report where each page is, move nothing. */
		if (syscall(SYS_move_pages, (pid_t)pid, n, pages, NULL, status, 0) < 0) {
			int err = errno;

			printf("query-pid: -%s (%s)\n", errno_name(err), strerror(err));
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (status[i] >= 0 && status[i] < 3)
				node[status[i]]++;
			else
				other++;
		}
	}
	printf("query-pid: 0 node0=%lu node1=%lu node2=%lu other=%lu\n", node[0], node[1], node[2],
	       other);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "hog"))
		return hog(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "advise-pid"))
		return advise_pid(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "query-pid"))
		return query_pid(argc - 2, argv + 2);
	fprintf(stderr, "usage: intent_check hog [OPTIONS] | advise-pid PID ADDR LEN ADVICE |"
			" query-pid PID ADDR LEN\n");
	return 2;
}
