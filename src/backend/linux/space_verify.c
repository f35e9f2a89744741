/* space_verify.c - the picture of where the managed pages are, checked
 * against the kernel's: pages move without tierd (the application's own
 * move_pages(2) or mbind(2), NUMA balancing, compaction, another tool).
 * <procfs>/PID/numa_maps gives, per mapping, the pages the kernel has on
 * each node (one page-table walk in the kernel, no per-page call); where
 * a mapping's counts differ from page_node over its extents, those extents
 * are queried first at the next tier_linux_space_query. Contracts in
 * space.h and space_impl.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/space_impl.h"
#include "backend/linux/sysfs.h"

/* Nodes counted per mapping (node ids above are not compared), the
 * processes one call reads at most, and the most checks a mapping that
 * keeps differing skips (numa_maps and move_pages(2) may go on disagreeing
 * about a mapping - seen on 7.2 while its owner moved it - and each
 * difference costs a query of the whole mapping). */
enum { VERIFY_NODES = 64, VERIFY_PROCS = 16, VERIFY_MAX_WAIT = 63, VERIFY_MIN_OFF = 64 };

/* One mapping of numa_maps: its start and its pages per node. */
struct nm_line {
	uint64_t start;
	uint64_t pages[VERIFY_NODES];
	bool base_pages;	/* kernelpagesize_kB=4: comparable */
};

/* Parses one line of numa_maps ("7f0000000000 default anon=3 N0=2 N1=1
 * kernelpagesize_kB=4"). Returns false for a line that is not one. */
static bool parse_line(char *line, struct nm_line *l)
{
	char *save = NULL, *tok = strtok_r(line, " \n", &save), *end;

	memset(l, 0, sizeof(*l));
	if (!tok)
		return false;
	errno = 0;
	l->start = strtoull(tok, &end, 16);
	if (errno || *end)
		return false;
	while ((tok = strtok_r(NULL, " \n", &save))) {
		unsigned long node;
		uint64_t n;

		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
			node = strtoul(tok + 1, &end, 10);
			if (*end != '=')
				continue;
			n = strtoull(end + 1, &end, 10);
			if (node < VERIFY_NODES)
				l->pages[node] = n;
		} else if (!strncmp(tok, "kernelpagesize_kB=", 18)) {
			l->base_pages = !strcmp(tok + 18, "4");
		}
	}
	return true;
}

/* Queues ids [first, first + nr) to be queried first. */
static int queue_ids(struct tier_linux_space *s, uint64_t first, uint64_t nr)
{
	struct tier__id_range *last;

	if (tier__space_grow((void **)&s->fresh, &s->cap_fresh, s->nr_fresh + 1,
			     sizeof(*s->fresh)))
		return -ENOMEM;
	last = s->nr_fresh ? &s->fresh[s->nr_fresh - 1] : NULL;
	if (last && last->first + last->nr == first)
		last->nr += nr;
	else
		s->fresh[s->nr_fresh++] = (struct tier__id_range){ first, nr };
	return 0;
}

/* Compares one mapping [l->start, next) of slot's extents [*k, ext_end);
 * queues them when the same number of pages lies on other nodes, when
 * they fit the budget. Advances *k past them. A mapping that differed the last time too skips checks first
 * (struct tier__extent's verify_wait). Returns the pages queued or
 * -ENOMEM. */
static long long check_mapping(struct tier_linux_space *s, const struct tier__slot *sl,
			       size_t *k, const struct nm_line *l, uint64_t next,
			       uint64_t budget)
{
	uint64_t mine[VERIFY_NODES] = { 0 }, pages = 0, sum_mine = 0, sum_theirs = 0, off = 0;
	size_t a, b;
	bool differ = false;
	int n;

	while (*k < sl->ext_end && s->ext[*k].start < l->start)
		(*k)++;
	for (a = b = *k; b < sl->ext_end && s->ext[b].start < next; b++) {
		const struct tier__extent *e = &s->ext[b];
		uint64_t id;

		for (id = e->first; id < e->first + e->nr; id++)
			if (s->page_node[id] < VERIFY_NODES)
				mine[s->page_node[id]]++;
		pages += e->nr;
	}
	*k = b;
	if (a == b || !l->base_pages || s->page_shift != 12)
		return 0;
	if (s->ext[a].verify_wait) {
		s->ext[a].verify_wait--;
		return 0;
	}
	for (n = 0; n < VERIFY_NODES; n++) {
		differ |= mine[n] != l->pages[n];
		sum_mine += mine[n];
		sum_theirs += l->pages[n];
		off += mine[n] > l->pages[n] ? mine[n] - l->pages[n] : l->pages[n] - mine[n];
	}
	/* Pages that moved leave the mapping's total as it was. A total
	 * that differs is the mapping itself changing too - pages faulted
	 * in or freed, or a new mapping merged into it (a thread's stack
	 * next to a 1.3 GiB array: 3 pages more, and all 317,000 were
	 * queried again) - which the next read of the maps and the
	 * round-robin query catch up with: the check queries the mapping
	 * again only where the pages in question are 1/VERIFY_MIN_OFF of it
	 * or more. */
	if (!differ || (sum_mine != sum_theirs && off * VERIFY_MIN_OFF < pages)) {
		s->ext[a].verify_backoff = 0;
		return 0;
	}
	if (pages > budget)
		return 0;
	s->last_diff.pid = sl->pid;
	s->last_diff.start = l->start;
	for (n = 0; n < 4; n++) {
		s->last_diff.theirs[n] = l->pages[n];
		s->last_diff.mine[n] = mine[n];
	}
	/* Skip 0, 1, 3, 7, ... checks after a difference in a row. */
	s->ext[a].verify_wait = (uint8_t)((1u << s->ext[a].verify_backoff) - 1);
	if (s->ext[a].verify_wait < VERIFY_MAX_WAIT)
		s->ext[a].verify_backoff++;
	for (; a < b; a++)
		if (queue_ids(s, s->ext[a].first, s->ext[a].nr))
			return -ENOMEM;
	return (long long)pages;
}

void tier_linux_space_last_diff(const struct tier_linux_space *s,
				struct tier_linux_space_diff *d)
{
	*d = s->last_diff;
}

long long tier_linux_space_verify(struct tier_linux_space *s, uint64_t max_pages)
{
	char path[PATH_MAX], *line = NULL;
	uint64_t queued = 0;
	size_t i, n, cap = 0, read = 0;
	long long ret = 0;

	/* At most VERIFY_PROCS processes a call, round robin: the cost of a
	 * check stays bounded however many processes are managed. */
	for (n = 0; n < s->nr_slots && read < VERIFY_PROCS && ret >= 0; n++) {
		const struct tier__slot *sl;

		i = s->verify_next++ % s->nr_slots;
		sl = &s->slots[i];
		struct nm_line cur, nxt;
		bool have = false;
		size_t k = sl->ext_begin;
		FILE *f;

		if (!sl->pid || sl->ext_begin == sl->ext_end)
			continue;
		if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "%d/numa_maps",
				    (int)sl->pid))
			continue;
		f = fopen(path, "re");
		if (!f)
			continue;	/* exited, or not ours to read: the query says */
		read++;
		while (ret >= 0 && getline(&line, &cap, f) > 0) {
			if (!parse_line(line, &nxt))
				continue;
			if (have)
				ret = check_mapping(s, sl, &k, &cur, nxt.start, queued ? max_pages - queued : UINT64_MAX);
			if (ret > 0)
				queued += (uint64_t)ret;
			cur = nxt;
			have = true;
		}
		if (have && ret >= 0)
			ret = check_mapping(s, sl, &k, &cur, UINT64_MAX, queued ? max_pages - queued : UINT64_MAX);
		if (ret > 0)
			queued += (uint64_t)ret;
		fclose(f);
	}
	free(line);
	return ret < 0 ? ret : (long long)queued;
}
