/* err.c - error detail carried next to a -errno return. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The message is one line whatever the values it quotes hold (a YAML
 * string may span lines, a file name may hold a newline): control
 * characters become '?'. */
static void one_line(char *msg)
{
	for (; *msg; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}

int tier_err_set(struct tier_err *err, int code_errno, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		one_line(err->msg);
	}
	return code_errno;
}

void tier_err_prefix(struct tier_err *err, const char *fmt, ...)
{
	char prefix[256];
	size_t plen, mlen, cap;
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	plen = strlen(prefix);
	cap = sizeof(err->msg) - 1;
	if (plen + 2 > cap)
		plen = cap - 2;
	mlen = strlen(err->msg);
	if (plen + 2 + mlen > cap)
		mlen = cap - plen - 2;
	/* "prefix: old message", cut to fit. */
	memmove(err->msg + plen + 2, err->msg, mlen);
	memcpy(err->msg, prefix, plen);
	err->msg[plen] = ':';
	err->msg[plen + 1] = ' ';
	err->msg[plen + 2 + mlen] = '\0';
	one_line(err->msg);
}

void tier_err_clear(struct tier_err *err)
{
	if (err)
		err->msg[0] = '\0';
}

void tier_vsayf(tier_say_fn fn, void *arg, int level, const char *fmt, va_list ap)
{
	char msg[1024];

	if (!fn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fn(arg, level, msg);
}

void tier_sayf(tier_say_fn fn, void *arg, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tier_vsayf(fn, arg, level, fmt, ap);
	va_end(ap);
}
