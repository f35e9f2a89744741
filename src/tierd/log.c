/* log.c - tierd's log. */
#include "tierd/log.h"

#include <stdarg.h>
#include <stdlib.h>

#include "core/config.h"

/* The configuration's levels are syslog's (core/config.h cannot say so). */
_Static_assert(TIER_LOG_ERR == LOG_ERR && TIER_LOG_WARNING == LOG_WARNING &&
	       TIER_LOG_NOTICE == LOG_NOTICE && TIER_LOG_INFO == LOG_INFO &&
	       TIER_LOG_DEBUG == LOG_DEBUG, "tier_log_level is not syslog's");

void tierd_log_init(struct tierd_log *log, int level)
{
	log->level = level;
	log->journal = getenv("JOURNAL_STREAM") != NULL;
	log->out = stderr;
}

void tierd_log(const struct tierd_log *log, int level, const char *fmt, ...)
{
	static const char *const names[] = {
		[LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	char line[1024];
	va_list ap;

	/* The level changes on reload, on the step thread. */
	if (level > __atomic_load_n(&log->level, __ATOMIC_RELAXED))
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
