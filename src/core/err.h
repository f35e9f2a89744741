/* err.h - error detail carried next to a -errno return.
 *
 * Functions that can fail for a reason a user must read (a malformed file, an
 * unknown node in a config) return -errno and fill a struct tier_err with one
 * line saying what and where. Callers that do not care pass NULL. The
 * setters keep it one line: control characters in what they quote (a
 * multi-line YAML string, a name holding a newline) come out as '?'.
 */
#ifndef TIER_CORE_ERR_H
#define TIER_CORE_ERR_H

#include <stdarg.h>
#include <stddef.h>

struct tier_err {
	char msg[512];		/* one line, no trailing newline; "" = none */
};

/* Sets err->msg from a printf-style format; no-op when err is NULL.
 * Returns -code_errno so callers can write `return tier_err_set(err, -EINVAL, ...)`.
 * code_errno must be negative (a -errno value). */
int tier_err_set(struct tier_err *err, int code_errno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to an error already set (context from an outer layer). */
void tier_err_prefix(struct tier_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void tier_err_clear(struct tier_err *err);

/* How a part that does not log itself says what it does (a backend's
 * decisions, for the daemon's log): one line, no newline, at a syslog
 * level (3 error .. 7 debug). */
typedef void (*tier_say_fn)(void *arg, int level, const char *msg);

/* Formats one line and hands it to fn (nothing when fn is NULL). */
void tier_sayf(tier_say_fn fn, void *arg, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tier_vsayf(tier_say_fn fn, void *arg, int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
