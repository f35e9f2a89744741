/* log.c - tierd's log. */
#include "tierd/log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tierd_log_init(struct tierd_log *log, int level)
{
	log->level = level;
	log->journal = getenv("JOURNAL_STREAM") != NULL;
	log->out = stderr;
}

int tierd_log_level_parse(const char *s)
{
	if (!strcmp(s, "error"))
		return LOG_ERR;
	if (!strcmp(s, "warning"))
		return LOG_WARNING;
	if (!strcmp(s, "info"))
		return LOG_INFO;
	if (!strcmp(s, "debug"))
		return LOG_DEBUG;
	return -1;
}

void tierd_log(const struct tierd_log *log, int level, const char *fmt, ...)
{
	static const char *const names[] = {
		[LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	char line[1024];
	va_list ap;

	if (level > log->level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log->journal)
		fprintf(log->out, "<%d>%s\n", level, line);
	else
		fprintf(log->out, "tierd: %s: %s\n",
			level >= 0 && level <= LOG_DEBUG && names[level] ? names[level] : "log", line);
	fflush(log->out);
}
