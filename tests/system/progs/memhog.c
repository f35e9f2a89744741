/* memhog - a workload with a known hot set, for the guest system tests
 * (tests/system/migrate.sh).
 *
 *   memhog [--mib N] [--hot-mib H] [--hot-node X] [--cold-node Y] [--seconds S] [--thp]
 *     maps N MiB of anonymous memory (base pages, no THP; with --thp 2 MiB
 *     aligned and advised MADV_HUGEPAGE: transparent huge pages), binds the first
 *     H MiB (the hot set) to node X and the rest to node Y (mbind
 *     MPOL_BIND; unbound when not given), touches every page, prints
 *       memhog pid=P hot=0xA-0xB cold=0xC-0xD
 *       ready
 *     and then writes one byte per hot page every 10 ms for S seconds
 *     (default 300) or until killed. With --move-cold-after T --move-to Z
 *     it moves the cold part to node Z itself, T seconds in (mbind
 *     MPOL_BIND with MPOL_MF_MOVE: pages moved behind a tiering daemon's
 *     back), and prints "moved" when done.
 *
 *   memhog --fill-node Z [--leave-mib L] [--seconds S]
 *     fills node Z until about L MiB (default 8) of it are free: maps
 *     MemFree - L MiB preferring node Z (MPOL_PREFERRED: what does not fit
 *     goes elsewhere, no OOM kill), touches it, prints
 *       memhog pid=P filled=M node=Z on_node=K
 *       ready
 *     (K: MiB that landed on Z) and sleeps.
 */
#include <errno.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "node_mem.h"

#define MIB (1024ul * 1024)

static long page_size;

static int bind_range(void *p, size_t len, int mode, int node)
{
	unsigned long mask = 1ul << node;

	if (mbind(p, len, mode, &mask, sizeof(mask) * 8, 0)) {
		fprintf(stderr, "memhog: mbind node %d: %s\n", node, strerror(errno));
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fill(int node, unsigned long leave_mib, double seconds)
{
	unsigned long free_mib = node_free_mib(node), mib, i, on_node = 0;
	size_t len;
	char *p;

	if (free_mib <= leave_mib) {
		fprintf(stderr, "memhog: node %d has only %lu MiB free\n", node, free_mib);
		return 1;
	}
	mib = free_mib - leave_mib;
	len = mib * MIB;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	if (bind_range(p, len, MPOL_PREFERRED, node))
		return 1;
	for (i = 0; i < len; i += (size_t)page_size)
		p[i] = 1;
	for (i = 0; i < len; i += MIB) {
		void *pg = p + i;
		int st = -1;

		if (!move_pages(0, 1, &pg, NULL, &st, 0) && st == node)
			on_node++;
	}
	printf("memhog pid=%d filled=%lu node=%d on_node=%lu\nready\n", (int)getpid(), mib,
	       node, on_node);
	fflush(stdout);
	for (double end = now_s() + seconds; now_s() < end;)
		sleep(1);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, hot_mib = 0, leave_mib = 8;
	int hot_node = -1, cold_node = -1, fill_node = -1, move_to = -1, i;
	double seconds = 300, move_after = -1;
	size_t len, hot_len, off;
	bool thp = false;
	char *p;

	page_size = sysconf(_SC_PAGESIZE);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--thp")) {
			thp = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "memhog: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--mib"))
			mib = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--hot-mib"))
			hot_mib = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--hot-node"))
			hot_node = atoi(v);
		else if (!strcmp(a, "--cold-node"))
			cold_node = atoi(v);
		else if (!strcmp(a, "--fill-node"))
			fill_node = atoi(v);
		else if (!strcmp(a, "--leave-mib"))
			leave_mib = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(a, "--move-cold-after"))
			move_after = atof(v);
		else if (!strcmp(a, "--move-to"))
			move_to = atoi(v);
		else {
			fprintf(stderr, "memhog: unknown option %s\n", a);
			return 2;
		}
		i++;
	}
	if (fill_node >= 0)
		return fill(fill_node, leave_mib, seconds);
	if (!hot_mib)
		hot_mib = mib / 4;
	if (!mib || hot_mib > mib) {
		fprintf(stderr, "memhog: need 0 < --hot-mib <= --mib\n");
		return 2;
	}
	len = mib * MIB;
	hot_len = hot_mib * MIB;
	/* With --thp, 2 MiB more to start on a 2 MiB boundary. */
	p = mmap(NULL, len + (thp ? 2 * MIB : 0), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	if (thp) {
		p = (char *)(((uintptr_t)p + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
		madvise(p, len, MADV_HUGEPAGE);
	} else {
		madvise(p, len, MADV_NOHUGEPAGE);
	}
	if (hot_node >= 0 && bind_range(p, hot_len, MPOL_BIND, hot_node))
		return 1;
	if (cold_node >= 0 && len > hot_len &&
	    bind_range(p + hot_len, len - hot_len, MPOL_BIND, cold_node))
		return 1;
	for (off = 0; off < len; off += (size_t)page_size)
		p[off] = 1;
	printf("memhog pid=%d hot=%#lx-%#lx cold=%#lx-%#lx\nready\n", (int)getpid(),
	       (unsigned long)(uintptr_t)p, (unsigned long)(uintptr_t)(p + hot_len),
	       (unsigned long)(uintptr_t)(p + hot_len), (unsigned long)(uintptr_t)(p + len));
	fflush(stdout);
	if ((move_after >= 0) != (move_to >= 0) || (move_to >= 0 && len == hot_len)) {
		fprintf(stderr, "memhog: --move-cold-after and --move-to go together, with a cold part\n");
		return 2;
	}
	for (double start = now_s(), end = start + seconds; now_s() < end;) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };

		if (move_to >= 0 && now_s() - start >= move_after) {
			unsigned long mask = 1ul << move_to;

			if (mbind(p + hot_len, len - hot_len, MPOL_BIND, &mask, sizeof(mask) * 8,
				  MPOL_MF_MOVE)) {
				fprintf(stderr, "memhog: mbind move to node %d: %s\n", move_to,
					strerror(errno));
				return 1;
			}
			printf("moved\n");
			fflush(stdout);
			move_to = -1;
		}
		for (off = 0; off < hot_len; off += (size_t)page_size)
			p[off]++;
		nanosleep(&pause, NULL);
	}
	return 0;
}
