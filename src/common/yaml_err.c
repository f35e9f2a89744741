/* yaml_err.c - one-line error messages for YAML files loaded with libcyaml. */
#include "common/yaml_err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

static void path_prepend(struct tier_yaml_log *lc, const char *part, int is_index)
{
	char tmp[sizeof(lc->path)];
	const char *sep = "";

	/* "tiers" + "[1]" + "nodes" -> "tiers[1].nodes" */
	if (lc->path[0] && lc->path[0] != '[')
		sep = ".";
	(void)is_index;
	snprintf(tmp, sizeof(tmp), "%s%s%s", part, sep, lc->path);
	memcpy(lc->path, tmp, sizeof(tmp));
}

void tier_yaml_log_fn(cyaml_log_t level, void *ctx, const char *fmt, va_list args)
{
	struct tier_yaml_log *lc = ctx;
	char msg[512], name[200];
	const char *m = msg;
	unsigned line, col;
	int idx;

	if (level < CYAML_LOG_ERROR)
		return;
	vsnprintf(msg, sizeof(msg), fmt, args);
	msg[strcspn(msg, "\n")] = '\0';
	if (!strncmp(m, "Load: ", 6))
		m += 6;
	if (!strcmp(m, "Backtrace:")) {
		lc->in_backtrace = 1;
		return;
	}
	if (lc->in_backtrace) {
		while (*m == ' ')
			m++;
		if (sscanf(m, "in mapping field '%199[^']' (line: %u, column: %u)",
			   name, &line, &col) == 3) {
			path_prepend(lc, name, 0);
		} else if (sscanf(m, "in sequence entry '%d' (line: %u, column: %u)",
				  &idx, &line, &col) == 3) {
			/* libcyaml counts entries from 1; the docs count from 0. */
			snprintf(name, sizeof(name), "[%d]", idx - 1);
			path_prepend(lc, name, 1);
		} else if (sscanf(m, "in mapping (line: %u, column: %u)", &line, &col) != 2 &&
			   sscanf(m, "in sequence (line: %u, column: %u)", &line, &col) != 2) {
			return;
		}
		if (!lc->line) {
			lc->line = line;
			lc->column = col;
		}
		return;
	}
	if (lc->reason[0])
		return;		/* keep the first, most specific message */
	if (sscanf(m, "Unexpected key: %199s", name) == 1) {
		snprintf(lc->reason, sizeof(lc->reason), "unknown field '%s'", name);
		snprintf(lc->unknown_key, sizeof(lc->unknown_key), "%s", name);
	}
	else
		snprintf(lc->reason, sizeof(lc->reason), "%s", m);
	if (lc->reason[0] >= 'A' && lc->reason[0] <= 'Z' &&
	    !(lc->reason[1] >= 'A' && lc->reason[1] <= 'Z'))
		lc->reason[0] = (char)(lc->reason[0] - 'A' + 'a');
}

/* libcyaml places an unknown key at the end of the previous value; find the
 * key itself: the first scalar with that text at or after that position. */
void tier_yaml_locate_key(const char *yaml, size_t len, const char *key,
			  unsigned *line, unsigned *column)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int done = 0;

	if (!yaml_parser_initialize(&parser))
		return;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		unsigned l = (unsigned)ev.start_mark.line + 1;
		unsigned c = (unsigned)ev.start_mark.column + 1;

		if (ev.type == YAML_SCALAR_EVENT &&
		    (l > *line || (l == *line && c >= *column)) &&
		    ev.data.scalar.length == strlen(key) &&
		    !memcmp(ev.data.scalar.value, key, ev.data.scalar.length)) {
			*line = l;
			*column = c;
			done = 1;
		}
		if (ev.type == YAML_STREAM_END_EVENT)
			done = 1;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
}

int tier_yaml_load_error(struct tier_yaml_log *lc, const char *yaml, size_t len,
			 const char *name, cyaml_err_t cerr, struct tier_err *err)
{
	const char *reason = lc->reason[0] ? lc->reason : cyaml_strerror(cerr);

	if (lc->unknown_key[0])
		tier_yaml_locate_key(yaml, len, lc->unknown_key, &lc->line, &lc->column);
	if (lc->line && lc->path[0])
		return tier_err_set(err, -EINVAL, "%s:%u:%u: %s: %s", name,
				    lc->line, lc->column, lc->path, reason);
	if (lc->line)
		return tier_err_set(err, -EINVAL, "%s:%u:%u: %s", name,
				    lc->line, lc->column, reason);
	return tier_err_set(err, -EINVAL, "%s: %s", name, reason);
}

cyaml_config_t tier_yaml_cyaml_config(struct tier_yaml_log *lc)
{
	cyaml_config_t cc = {
		.log_fn = tier_yaml_log_fn,
		.log_ctx = lc,
		.mem_fn = cyaml_mem,
		.log_level = CYAML_LOG_ERROR,
		.flags = CYAML_CFG_DEFAULT,
	};

	return cc;
}
