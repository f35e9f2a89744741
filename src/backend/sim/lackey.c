/* lackey.c - valgrind lackey text to tiersim trace, streamed.
 *
 * Input arrives in chunks; whole lines are parsed where they lie and only a
 * line cut by a chunk boundary is copied (into a fixed line buffer). Pages
 * get dense ids from an open-addressing hash table, so a program that
 * touches 3 pages at 0x4000000, 0x1ffefff000 and 0x4001000 yields a trace
 * with footprint 3 and pages 0, 1, 2.
 */
#include "backend/sim/lackey.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	READ_CHUNK_BYTES = 1 << 20,
	MAP_MIN_SLOTS = 1024,
	EXCERPT_BYTES = 40,
};

/* ---- line parsing ------------------------------------------------------ */

/* Copies up to EXCERPT_BYTES of s into out as printable text. */
static const char *excerpt(char out[EXCERPT_BYTES + 4], const char *s, size_t len)
{
	size_t i, n = len < EXCERPT_BYTES ? len : EXCERPT_BYTES;

	for (i = 0; i < n; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (n < len)
		memcpy(out + n, "...", 4);
	else
		out[n] = '\0';
	return out;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* valgrind's own lines: "==PID== ..." always, "--PID-- ..." with -v. */
static bool is_valgrind_message(const char *s, size_t len)
{
	size_t i = 2;

	if (len >= 2 && s[0] == '=' && s[1] == '=')
		return true;
	if (len < 5 || s[0] != '-' || s[1] != '-' || !is_digit(s[2]))
		return false;
	while (i < len && is_digit(s[i]))
		i++;
	return i + 1 < len && s[i] == '-' && s[i + 1] == '-';
}

void tier_lackey_opts_init(struct tier_lackey_opts *o)
{
	*o = (struct tier_lackey_opts){
		.include_instr = false,
		.skip_bad = false,
		.sample_every = 1,
		.seed = 1,
	};
}

int tier_lackey_parse_line(const char *s, size_t len, struct tier_lackey_access *out,
			   struct tier_err *err)
{
	char ex[EXCERPT_BYTES + 4];
	uint64_t addr = 0, size = 0;
	size_t i, start;
	int v;

	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	*out = (struct tier_lackey_access){ .kind = TIER_LACKEY_NONE };
	if (!len || is_valgrind_message(s, len))
		return 0;
	if (s[0] == 'I') {
		out->kind = TIER_LACKEY_INSTR;
		i = 1;
	} else if (len > 1 && s[0] == ' ' && (s[1] == 'L' || s[1] == 'S' || s[1] == 'M')) {
		out->kind = s[1] == 'L' ? TIER_LACKEY_LOAD :
			    s[1] == 'S' ? TIER_LACKEY_STORE : TIER_LACKEY_MODIFY;
		i = 2;
	} else {
		out->kind = TIER_LACKEY_NONE;
		return tier_err_set(err, -EINVAL, "not a lackey line (expected 'I', ' L', ' S',"
				    " ' M' or '=='): '%s'", excerpt(ex, s, len));
	}
	if (i == len || s[i] != ' ') {
		out->kind = TIER_LACKEY_NONE;
		return tier_err_set(err, -EINVAL, "expected a space after the access kind: '%s'",
				    excerpt(ex, s, len));
	}
	while (i < len && s[i] == ' ')
		i++;
	start = i;
	while (i < len && (v = hexval(s[i])) >= 0) {
		if (i - start == 16)
			goto bad_addr;
		addr = addr << 4 | (uint64_t)v;
		i++;
	}
	if (i == start)
		goto bad_addr;
	if (i == len || s[i] != ',') {
		out->kind = TIER_LACKEY_NONE;
		return tier_err_set(err, -EINVAL, "expected ',SIZE' after the address: '%s'",
				    excerpt(ex, s, len));
	}
	start = ++i;
	while (i < len && is_digit(s[i])) {
		size = size * 10 + (uint64_t)(s[i] - '0');
		if (size > TIER_LACKEY_ACCESS_MAX_BYTES)
			goto bad_size;
		i++;
	}
	if (i == start)
		goto bad_size;
	if (i != len) {
		out->kind = TIER_LACKEY_NONE;
		return tier_err_set(err, -EINVAL, "unexpected text after the size: '%s'",
				    excerpt(ex, s, len));
	}
	if (!size)
		size = 1;
	if (addr > UINT64_MAX - (size - 1)) {
		out->kind = TIER_LACKEY_NONE;
		return tier_err_set(err, -EINVAL, "access wraps past the top of the address space:"
				    " '%s'", excerpt(ex, s, len));
	}
	out->addr = addr;
	out->sz_bytes = size;
	return 0;

bad_addr:
	out->kind = TIER_LACKEY_NONE;
	return tier_err_set(err, -EINVAL, "bad address (expected 1 to 16 hex digits): '%s'",
			    excerpt(ex, s, len));
bad_size:
	out->kind = TIER_LACKEY_NONE;
	return tier_err_set(err, -EINVAL, "bad size (expected 0 to %u): '%s'",
			    TIER_LACKEY_ACCESS_MAX_BYTES, excerpt(ex, s, len));
}

/* ---- page map: virtual page -> dense id -------------------------------- */

struct map_slot {
	uint64_t key;		/* virtual page + 1; 0 = empty */
	uint64_t id;
};

struct page_map {
	struct map_slot *slots;
	size_t mask;		/* slots - 1, a power of two minus one */
	unsigned shift;		/* 64 - log2(slots) */
	uint64_t nr;		/* ids handed out */
};

static size_t map_hash(uint64_t key, unsigned shift)
{
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> shift);
}

static int map_init(struct page_map *m, size_t nr_slots, unsigned shift)
{
	m->slots = calloc(nr_slots, sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	m->mask = nr_slots - 1;
	m->shift = shift;
	return 0;
}

static int map_grow(struct page_map *m)
{
	struct page_map g = { .nr = m->nr };
	size_t i, j;

	if (map_init(&g, (m->mask + 1) * 2, m->shift - 1))
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++) {
		if (!m->slots[i].key)
			continue;
		for (j = map_hash(m->slots[i].key, g.shift); g.slots[j].key; j = (j + 1) & g.mask)
			;
		g.slots[j] = m->slots[i];
	}
	free(m->slots);
	*m = g;
	return 0;
}

/* Dense id of virtual page vpage, handing out the next one on first touch. */
static int map_get(struct page_map *m, uint64_t vpage, uint64_t *id)
{
	uint64_t key = vpage + 1;
	size_t j;

	for (j = map_hash(key, m->shift); m->slots[j].key; j = (j + 1) & m->mask) {
		if (m->slots[j].key == key) {
			*id = m->slots[j].id;
			return 0;
		}
	}
	/* Keep the load under 1/2 so probes stay short. */
	if ((m->nr + 1) * 2 > m->mask + 1) {
		if (map_grow(m))
			return -ENOMEM;
		for (j = map_hash(key, m->shift); m->slots[j].key; j = (j + 1) & m->mask)
			;
	}
	m->slots[j].key = key;
	m->slots[j].id = m->nr;
	*id = m->nr++;
	return 0;
}

/* ---- importer ---------------------------------------------------------- */

struct tier_lackey_importer {
	char *name;
	struct tier_lackey_opts opts;
	struct tier_trace_writer *w;
	struct tier_lackey_stats stats;
	struct page_map map;
	uint64_t last_vpage;	/* one-entry cache in front of the map */
	uint64_t last_id;
	bool have_last;
	uint64_t rng;		/* xorshift64* state for sampling */
	bool discarding;	/* skipping the rest of an over-long line */
	size_t line_len;	/* bytes of a line cut by a chunk boundary */
	char line[TIER_LACKEY_LINE_MAX_BYTES];
};

int tier_lackey_importer_new(const char *name, const struct tier_lackey_opts *opts,
			     struct tier_trace_writer *w, struct tier_lackey_importer **out,
			     struct tier_err *err)
{
	struct tier_lackey_importer *imp;

	*out = NULL;
	imp = calloc(1, sizeof(*imp));
	if (!imp)
		return tier_err_set(err, -ENOMEM, "%s: out of memory", name);
	imp->name = strdup(name);
	if (!imp->name || map_init(&imp->map, MAP_MIN_SLOTS, 64 - 10)) {
		tier_lackey_importer_destroy(imp);
		return tier_err_set(err, -ENOMEM, "%s: out of memory", name);
	}
	imp->opts = *opts;
	if (!imp->opts.sample_every)
		imp->opts.sample_every = 1;
	/* xorshift needs a non-zero state; mix the seed so nearby seeds differ. */
	imp->rng = (opts->seed ^ UINT64_C(0x2545f4914f6cdd1d)) | 1;
	imp->w = w;
	*out = imp;
	return 0;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

static int import_line(struct tier_lackey_importer *imp, const char *s, size_t len,
		       struct tier_err *err)
{
	struct tier_lackey_stats *st = &imp->stats;
	struct tier_lackey_access a;
	struct tier_err why;
	uint64_t vp, last_vp, id;
	bool write;
	int rc;

	st->nr_lines++;
	rc = tier_lackey_parse_line(s, len, &a, &why);
	if (rc) {
		if (!imp->opts.skip_bad)
			return tier_err_set(err, rc, "%s:%" PRIu64 ": %s", imp->name, st->nr_lines,
					    why.msg);
		if (!st->nr_bad_lines++)
			tier_err_set(&st->first_bad, rc, "%s:%" PRIu64 ": %s", imp->name,
				     st->nr_lines, why.msg);
		return 0;
	}
	switch (a.kind) {
	case TIER_LACKEY_NONE:
		st->nr_ignored_lines++;
		return 0;
	case TIER_LACKEY_INSTR:
		st->nr_instr_lines++;
		if (!imp->opts.include_instr)
			return 0;
		break;
	default:
		st->nr_data_lines++;
		break;
	}
	if (imp->opts.sample_every > 1 && rng_next(&imp->rng) % imp->opts.sample_every) {
		st->nr_sampled_out++;
		return 0;
	}
	write = a.kind == TIER_LACKEY_STORE || a.kind == TIER_LACKEY_MODIFY;
	last_vp = (a.addr + a.sz_bytes - 1) >> TIER_LACKEY_PAGE_SHIFT;
	for (vp = a.addr >> TIER_LACKEY_PAGE_SHIFT; vp <= last_vp; vp++) {
		if (imp->have_last && vp == imp->last_vpage) {
			id = imp->last_id;
		} else {
			if (map_get(&imp->map, vp, &id))
				return tier_err_set(err, -ENOMEM, "%s:%" PRIu64 ": out of memory"
						    " for the page map (%" PRIu64 " pages)",
						    imp->name, st->nr_lines, imp->map.nr);
			imp->last_vpage = vp;
			imp->last_id = id;
			imp->have_last = true;
		}
		rc = tier_trace_writer_add(imp->w, id, write, 1);
		if (rc)
			return tier_err_set(err, rc, "%s:%" PRIu64 ": writing the trace: %s",
					    imp->name, st->nr_lines, strerror(-rc));
		st->nr_accesses++;
	}
	st->nr_pages = imp->map.nr;
	return 0;
}

static int too_long(struct tier_lackey_importer *imp, struct tier_err *err)
{
	struct tier_lackey_stats *st = &imp->stats;

	/* Counted as a line now; its rest is discarded up to the newline. */
	st->nr_lines++;
	imp->line_len = 0;
	if (!imp->opts.skip_bad)
		return tier_err_set(err, -EINVAL, "%s:%" PRIu64 ": line longer than %d bytes",
				    imp->name, st->nr_lines, TIER_LACKEY_LINE_MAX_BYTES);
	if (!st->nr_bad_lines++)
		tier_err_set(&st->first_bad, -EINVAL, "%s:%" PRIu64 ": line longer than %d bytes",
			     imp->name, st->nr_lines, TIER_LACKEY_LINE_MAX_BYTES);
	imp->discarding = true;
	return 0;
}

int tier_lackey_importer_feed(struct tier_lackey_importer *imp, const char *data, size_t len,
			      struct tier_err *err)
{
	const char *p = data, *end = data + len, *nl;
	size_t n;
	int rc;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl ? nl : end) - p);
		if (imp->discarding) {
			if (nl)
				imp->discarding = false;
		} else if (!nl || imp->line_len) {
			/* A line cut by a chunk boundary: gather it. */
			if (imp->line_len + n > sizeof(imp->line)) {
				rc = too_long(imp, err);
				if (rc)
					return rc;
				imp->discarding = !nl;
			} else {
				memcpy(imp->line + imp->line_len, p, n);
				imp->line_len += n;
				if (nl) {
					n = imp->line_len;
					imp->line_len = 0;
					rc = import_line(imp, imp->line, n, err);
					if (rc)
						return rc;
				}
			}
		} else if (n > sizeof(imp->line)) {
			rc = too_long(imp, err);
			if (rc)
				return rc;
			imp->discarding = false;
		} else {
			rc = import_line(imp, p, n, err);
			if (rc)
				return rc;
		}
		p += (nl ? nl + 1 : end) - p;
	}
	return 0;
}

int tier_lackey_importer_finish(struct tier_lackey_importer *imp, struct tier_err *err)
{
	size_t n = imp->line_len;

	imp->discarding = false;
	if (!n)
		return 0;
	imp->line_len = 0;
	return import_line(imp, imp->line, n, err);
}

const struct tier_lackey_stats *tier_lackey_importer_stats(const struct tier_lackey_importer *imp)
{
	return &imp->stats;
}

void tier_lackey_importer_destroy(struct tier_lackey_importer *imp)
{
	if (!imp)
		return;
	free(imp->map.slots);
	free(imp->name);
	free(imp);
}

/* ---- whole-file conversion --------------------------------------------- */

int tier_lackey_convert(const char *in_path, const char *out_path,
			const struct tier_lackey_opts *opts, struct tier_lackey_stats *stats,
			struct tier_err *err)
{
	bool from_stdin = !strcmp(in_path, "-");
	const char *name = from_stdin ? "<stdin>" : in_path;
	struct tier_lackey_importer *imp = NULL;
	struct tier_trace_writer *w = NULL;
	struct stat in_st, out_st;
	char *chunk = NULL;
	int fd, rc;
	ssize_t k;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	fd = from_stdin ? STDIN_FILENO : open(in_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tier_err_set(err, -errno, "%s: %s", in_path, strerror(errno));
	/* Truncating the output must not destroy the input. */
	if (!fstat(fd, &in_st) && !stat(out_path, &out_st) && in_st.st_dev == out_st.st_dev &&
	    in_st.st_ino == out_st.st_ino) {
		rc = tier_err_set(err, -EINVAL, "%s: input and output are the same file", out_path);
		goto out_close;
	}
	chunk = malloc(READ_CHUNK_BYTES);
	if (!chunk) {
		rc = tier_err_set(err, -ENOMEM, "%s: out of memory", name);
		goto out_close;
	}
	rc = tier_trace_writer_new(out_path, TIER_LACKEY_PAGE_SHIFT, &w, err);
	if (rc)
		goto out_free;
	rc = tier_lackey_importer_new(name, opts, w, &imp, err);
	if (rc)
		goto out_writer;
	for (;;) {
		k = read(fd, chunk, READ_CHUNK_BYTES);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = tier_err_set(err, -errno, "%s: read: %s", name, strerror(errno));
			goto out_importer;
		}
		if (!k)
			break;
		rc = tier_lackey_importer_feed(imp, chunk, (size_t)k, err);
		if (rc)
			goto out_importer;
	}
	rc = tier_lackey_importer_finish(imp, err);
	if (rc)
		goto out_importer;
	if (!tier_lackey_importer_stats(imp)->nr_accesses) {
		rc = tier_err_set(err, -ENODATA, "%s: no memory accesses found (was valgrind run"
				  " with --tool=lackey --trace-mem=yes?)", name);
		goto out_importer;
	}
	rc = tier_trace_writer_finish(w, err);

out_importer:
	if (stats)
		*stats = *tier_lackey_importer_stats(imp);
	tier_lackey_importer_destroy(imp);
out_writer:
	tier_trace_writer_destroy(w);	/* removes the output unless finished */
out_free:
	free(chunk);
out_close:
	if (!from_stdin)
		close(fd);
	return rc;
}
