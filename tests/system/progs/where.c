/* where - where a process's pages are: `where PID 0xSTART-0xEND` prints
 * "node0=N node1=N ... absent=N" for the 4 KiB pages of the range, from
 * move_pages(2) status queries (nodes = NULL). For the guest system tests. */
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 1024, MAX_NODES = 64 };

int main(int argc, char **argv)
{
	unsigned long long start, end, a;
	unsigned long counts[MAX_NODES] = { 0 }, absent = 0;
	void *pages[BATCH];
	int status[BATCH], pid, n, i;

	if (argc != 3 || sscanf(argv[2], "%llx-%llx", &start, &end) != 2 || end <= start) {
		fprintf(stderr, "usage: where PID 0xSTART-0xEND\n");
		return 2;
	}
	pid = atoi(argv[1]);
	for (a = start; a < end;) {
		for (n = 0; n < BATCH && a < end; n++, a += 4096)
			pages[n] = (void *)(uintptr_t)a;
		if (numa_move_pages(pid, (unsigned long)n, pages, NULL, status, 0) < 0) {
			perror("where: move_pages");
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (status[i] >= 0 && status[i] < MAX_NODES)
				counts[status[i]]++;
			else
				absent++;
		}
	}
	for (i = 0; i < MAX_NODES; i++)
		if (counts[i] || i < 3)
			printf("node%d=%lu ", i, counts[i]);
	printf("absent=%lu\n", absent);
	return 0;
}
