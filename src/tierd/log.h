/* log.h - tierd's log: levels, one line per message, to stderr. Under
 * systemd (JOURNAL_STREAM set) each line carries the kernel-style "<N>"
 * level prefix that journald understands (sd-daemon(3)). */
#ifndef TIERD_LOG_H
#define TIERD_LOG_H

#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

struct tierd_log {
	int level;		/* LOG_ERR .. LOG_DEBUG: messages above are dropped */
	bool journal;		/* prefix "<N>" for journald */
	FILE *out;
};

void tierd_log_init(struct tierd_log *log, int level);

void tierd_log(const struct tierd_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
