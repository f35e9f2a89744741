/* maps.c - /proc/PID/maps: one line parser, the managed-mapping rule and a
 * reader of the whole file. Contracts in maps.h. */
#include "backend/linux/maps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/sysfs.h"

static bool parse_hex(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	for (;; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool parse_dec(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*out = v;
	return true;
}

static bool expect_char(const char **pp, char c)
{
	if (**pp != c)
		return false;
	(*pp)++;
	return true;
}

/* Whether a mapping holds pages tierd manages: private, accessible,
 * anonymous (incl. [heap], [stack], [anon:name]) or a writable private file
 * mapping (its copied-on-write pages). Special mappings ([vdso], [vvar],
 * [vsyscall], ...) and device files are left out: maps does not show
 * VM_IO, so /dev/ files (but /dev/zero) stand for it. */
static bool managed(const char *perms, uint64_t ino, const char *path)
{
	bool anon;

	if (perms[3] != 'p')
		return false;
	if (perms[0] != 'r' && perms[1] != 'w' && perms[2] != 'x')
		return false;	/* PROT_NONE: reserved or guard pages */
	if (path[0] == '[')
		return !strcmp(path, "[heap]") || !strcmp(path, "[stack]") ||
		       !strncmp(path, "[stack:", 7) || !strncmp(path, "[anon:", 6);
	anon = ino == 0 && path[0] == '\0';
	if (anon)
		return true;
	if (!strncmp(path, "/dev/", 5) && strncmp(path, "/dev/zero", 9))
		return false;
	if (!strncmp(path, "/anon_hugepage", 14))
		return false;	/* hugetlb: not in base pages */
	return perms[1] == 'w';
}

const char *tier__maps_parse_line(const char *line, unsigned page_shift,
				  struct tier__maps_entry *e)
{
	const char *p = line;
	uint64_t mask = (1ull << page_shift) - 1;
	int i;

	if (!parse_hex(&p, &e->start) || !expect_char(&p, '-') || !parse_hex(&p, &e->end) ||
	    !expect_char(&p, ' '))
		return "bad address range";
	if (e->end <= e->start || (e->start & mask) || (e->end & mask))
		return "address range empty or not page aligned";
	for (i = 0; i < 4; i++, p++) {
		static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };

		if (!*p || !memchr(allowed[i], *p, 2))
			return "bad permissions";
		e->perms[i] = *p;
	}
	e->perms[4] = '\0';
	if (!expect_char(&p, ' ') || !parse_hex(&p, &e->offset) || !expect_char(&p, ' '))
		return "bad offset";
	if (!parse_hex(&p, &e->dev_major) || !expect_char(&p, ':') ||
	    !parse_hex(&p, &e->dev_minor) || !expect_char(&p, ' '))
		return "bad device";
	if (!parse_dec(&p, &e->inode))
		return "bad inode";
	if (*p && *p != ' ')
		return "bad inode";
	while (*p == ' ')
		p++;
	/* p: the path, possibly empty (anonymous lines end in a space). */
	e->path = p;
	e->managed = managed(e->perms, e->inode, p);
	return NULL;
}

int tier__maps_read(const struct tier_linux_ctx *ctx, pid_t pid, unsigned page_shift,
		    int (*fn)(void *arg, const struct tier__maps_entry *e), void *arg,
		    size_t *nr_lines, struct tier_err *err)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap_line = 0, lineno = 0;
	uint64_t prev_end = 0;
	ssize_t len;
	FILE *f;
	int ret = 0;

	if (nr_lines)
		*nr_lines = 0;
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/maps", (int)pid))
		return tier_err_set(err, -ENAMETOOLONG, "%s/%d/maps: path too long",
				    ctx->procfs_root, (int)pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT || errno == ESRCH)
			return -ESRCH;
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	errno = 0;
	while ((len = getline(&line, &cap_line, f)) >= 0) {
		struct tier__maps_entry e;
		const char *why;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		why = tier__maps_parse_line(line, page_shift, &e);
		if (why) {
			ret = tier_err_set(err, -EINVAL, "%s:%zu: %s in '%.100s'", path, lineno,
					   why, line);
			goto out;
		}
		if (e.start < prev_end) {
			ret = tier_err_set(err, -EINVAL,
					   "%s:%zu: mapping overlaps the one before in '%.100s'",
					   path, lineno, line);
			goto out;
		}
		prev_end = e.end;
		if (!e.managed)
			continue;
		ret = fn(arg, &e);
		if (ret)
			goto out;
	}
	if (ferror(f)) {
		if (errno == ESRCH || errno == ENOENT) {
			ret = -ESRCH;	/* exited while we read */
		} else {
			ret = errno ? -errno : -EIO;
			tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
		}
	}
out:
	fclose(f);
	free(line);
	if (nr_lines)
		*nr_lines = lineno;
	return ret;
}
