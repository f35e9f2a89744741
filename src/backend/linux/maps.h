/* maps.h - the one reader of /proc/PID/maps in the Linux backend (internal:
 * not part of the backend's interface): a line parsed into its fields, and
 * the rule of which mappings hold pages tierd manages. The address space
 * (space.h) lays the managed mappings out as page ids and the page-walking
 * trackers (tracker_util.h) scan them, so what one manages the others see.
 *
 * A line is "START-END PERMS OFFSET MAJ:MIN INODE [PATH]", the kernel's
 * format byte for byte (fs/proc/task_mmu.c; tests/fixtures/procfs/README.md):
 *
 *   7f3a46ff9000-7f3a46ffb000 rw-p 001f8000 fe:01 2049   /usr/lib/.../libc.so.6
 *   7f3a46ffb000-7f3a47008000 rw-p 00000000 00:00 0
 */
#ifndef TIER_LINUX_MAPS_H
#define TIER_LINUX_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

struct tier__maps_entry {
	uint64_t start, end;		/* [start, end), bytes */
	char perms[5];			/* "rw-p": r, w, x or '-', then p or s */
	uint64_t offset;		/* into the file, bytes; 0 for anonymous */
	uint64_t dev_major, dev_minor;	/* 0:0 for anonymous memory */
	uint64_t inode;			/* 0 for anonymous memory */
	const char *path;		/* in the parsed line; "" when unnamed */
	bool managed;			/* holds pages tierd manages (maps.c) */
};

/* Parses one line, without its newline. Addresses must be multiples of
 * 1 << page_shift. Returns NULL, filling *e, or what is wrong ("bad
 * permissions"; *e is then undefined). e->path points into line. */
const char *tier__maps_parse_line(const char *line, unsigned page_shift,
				  struct tier__maps_entry *e);

/* Reads <ctx->procfs_root>/PID/maps and calls fn(arg, e) for each managed
 * mapping, in address order (e and its path are valid during the call
 * only); a non-zero return from fn stops the read and is returned as is.
 * Every line must parse (page_shift as above) and start at or after the end
 * of the line before. *nr_lines (may be NULL): the lines read, 0 for a
 * process without memory (a kernel thread, a zombie).
 * Returns 0 or -errno, with err naming the file (and line): -ESRCH when the
 * process is gone (no maps file, or it exited while read; err untouched),
 * -EINVAL for a malformed line ("/proc/42/maps:7: bad inode in '...'"),
 * -EACCES when maps cannot be read, -ENOMEM, -ENAMETOOLONG. */
int tier__maps_read(const struct tier_linux_ctx *ctx, pid_t pid, unsigned page_shift,
		    int (*fn)(void *arg, const struct tier__maps_entry *e), void *arg,
		    size_t *nr_lines, struct tier_err *err);

#endif
