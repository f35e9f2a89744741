/* advise.c - libtier's example: state intent for two ranges, then ask the
 * kernel where their pages are.
 *
 * Build:  cc advise.c $(pkg-config --cflags --libs tier) -o advise
 * Run:    ./advise            (with or without tierd running)
 *
 * Maps 16 pages, touches them, advises the first half HOT and the second
 * half COLD, then prints each page's node and tier rank. Without tierd the
 * advice is skipped with a note and the program goes on: advice only ever
 * changes where pages sit, never what they hold.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tier.h>

#define NR_PAGES 16

int main(void)
{
	struct tier_page_info info[NR_PAGES];
	size_t page_sz = (size_t)sysconf(_SC_PAGESIZE);
	size_t half = NR_PAGES / 2 * page_sz;
	tier_t *tier = NULL;
	char *mem;
	int ret, i;

	mem = mmap(NULL, NR_PAGES * page_sz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("advise: mmap");
		return 1;
	}
	/* Touch every page so that it exists somewhere. */
	memset(mem, 1, NR_PAGES * page_sz);

	printf("libtier %s\n", tier_version());
	ret = tier_open(&tier);
	if (ret) {
		printf("note: advice skipped: %s (%d)\n", tier_strerror(ret), ret);
	} else {
		ret = tier_advise(tier, mem, half, TIER_ADVICE_HOT);
		printf("advise %p +%zu HOT: %s\n", (void *)mem, half, tier_strerror(ret));
		ret = tier_advise(tier, mem + half, half, TIER_ADVICE_COLD);
		printf("advise %p +%zu COLD: %s\n", (void *)(mem + half), half,
		       tier_strerror(ret));
		tier_close(tier);
	}

	ret = tier_query(mem, NR_PAGES * page_sz, info, NR_PAGES);
	if (ret < 0) {
		fprintf(stderr, "advise: tier_query: %s\n", tier_strerror(ret));
		munmap(mem, NR_PAGES * page_sz);
		return 1;
	}
	for (i = 0; i < ret; i++)
		printf("page %2d %p: node %d tier %d\n", i, (void *)(mem + (size_t)i * page_sz),
		       info[i].node, info[i].tier);
	munmap(mem, NR_PAGES * page_sz);
	return 0;
}
