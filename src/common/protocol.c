/* protocol.c - tierd's control protocol: parse and format messages. */
#include "common/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct tier_cmd_info tier_cmds[TIER_CMD__COUNT] = {
	[TIER_CMD_PING] = { "ping", false, "" },
	[TIER_CMD_STATUS] = { "status", false, "" },
	[TIER_CMD_RELOAD] = { "reload", true, "" },
	/* Who may advise which process is checked per pid by the daemon. */
	[TIER_CMD_HINT] = { "hint", false, "pid, addr, len, advice" },
	[TIER_CMD_CGROUP_SET] = { "cgroup-set", true, "path, tier_max, tier_min, weight, clear" },
	[TIER_CMD_CGROUPS] = { "cgroups", false, "" },
	/* Like hint: per pid. */
	[TIER_CMD_EXPLAIN] = { "explain", false, "pid, addr, len" },
	/* Like explain: per pid. */
	[TIER_CMD_HEATMAP] = { "heatmap", false, "pid, bins, slices, start, end" },
	/* Figures anyone may read, as status. */
	[TIER_CMD_HISTORY] = { "history", false, "seconds, points" },
	[TIER_CMD_PROCESSES] = { "processes", false, "limit" },
	/* Memory devices (docs/devices.md): a node put in a tier, drained. */
	[TIER_CMD_NODE_TIER] = { "node-tier", true, "node, rank" },
	[TIER_CMD_DRAIN] = { "drain", true, "node" },
};

/* Whether name is one of list's ", "-separated names. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t l = strcspn(list, ",");

		if (l == n && !strncmp(list, name, n))
			return true;
		list += l;
		while (*list == ',' || *list == ' ')
			list++;
	}
	return false;
}

/* Every argument is one cmd takes: a misspelt one must not be ignored. */
static int check_args(enum tier_cmd cmd, struct json_object *args, struct tier_err *err)
{
	const struct tier_cmd_info *ci = &tier_cmds[cmd];

	json_object_object_foreach(args, key, v) {
		(void)v;
		if (!in_list(ci->args, key))
			return tier_err_set(err, -EINVAL, "%s: unknown argument '%.32s' (%s%s)", ci->name,
					    key, ci->args[0] ? "it takes " : "it takes none",
					    ci->args);
	}
	return 0;
}

static struct json_object *parse_object(const char *line, size_t len, struct tier_err *err,
					int *ret)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len > TIER_PROTO_MAX_LINE) {
		*ret = tier_err_set(err, -E2BIG, "message of %zu bytes exceeds %d", len,
				    TIER_PROTO_MAX_LINE);
		return NULL;
	}
	if (memchr(line, '\0', len) || memchr(line, '\n', len)) {
		*ret = tier_err_set(err, -EPROTO, "message holds a NUL or newline byte");
		return NULL;
	}
	tok = json_tokener_new_ex(32);
	if (!tok) {
		*ret = tier_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		*ret = tier_err_set(err, -EPROTO, "incomplete JSON");
		json_object_put(o);
		o = NULL;
	} else if (jerr != json_tokener_success) {
		*ret = tier_err_set(err, -EPROTO, "invalid JSON at byte %zu: %s",
				    json_tokener_get_parse_end(tok), json_tokener_error_desc(jerr));
		o = NULL;
	} else if (json_tokener_get_parse_end(tok) != len) {
		*ret = tier_err_set(err, -EPROTO, "trailing bytes after the JSON object");
		json_object_put(o);
		o = NULL;
	} else if (!json_object_is_type(o, json_type_object)) {
		*ret = tier_err_set(err, -EPROTO, "message is not a JSON object");
		json_object_put(o);
		o = NULL;
	} else {
		*ret = 0;
	}
	json_tokener_free(tok);
	return o;
}

static int check_version(struct json_object *o, struct tier_err *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, "v", &v))
		return tier_err_set(err, -EPROTO, "missing field 'v' (protocol version)");
	if (!json_object_is_type(v, json_type_int))
		return tier_err_set(err, -EPROTO, "field 'v' is not an integer");
	if (json_object_get_int64(v) != TIER_PROTO_VERSION)
		return tier_err_set(err, -EPROTO, "protocol version %lld, this end speaks %d",
				    (long long)json_object_get_int64(v), TIER_PROTO_VERSION);
	return 0;
}

int tier_request_parse(const char *line, size_t len, struct tier_request *req,
		       struct tier_err *err)
{
	struct json_object *o, *cmd, *args;
	const char *name;
	int ret, i;

	memset(req, 0, sizeof(*req));
	o = parse_object(line, len, err, &ret);
	if (!o)
		return ret;
	ret = check_version(o, err);
	if (ret)
		goto out;
	if (!json_object_object_get_ex(o, "cmd", &cmd) ||
	    !json_object_is_type(cmd, json_type_string)) {
		ret = tier_err_set(err, -EPROTO, "missing or non-string field 'cmd'");
		goto out;
	}
	name = json_object_get_string(cmd);
	for (i = 0; i < TIER_CMD__COUNT; i++)
		if (!strcmp(name, tier_cmds[i].name))
			break;
	if (i == TIER_CMD__COUNT) {
		ret = tier_err_set(err, -EINVAL, "unknown command '%.64s'", name);
		goto out;
	}
	req->cmd = (enum tier_cmd)i;
	if (json_object_object_get_ex(o, "args", &args)) {
		if (!json_object_is_type(args, json_type_object)) {
			ret = tier_err_set(err, -EPROTO, "field 'args' is not an object");
			goto out;
		}
		ret = check_args(req->cmd, args, err);
		if (ret)
			goto out;
		req->args = json_object_get(args);
	} else {
		req->args = json_object_new_object();
		if (!req->args) {
			ret = tier_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	{
		/* Unknown top-level fields are errors: a typo must not pass. */
		struct json_object_iterator it = json_object_iter_begin(o);
		struct json_object_iterator end = json_object_iter_end(o);

		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *k = json_object_iter_peek_name(&it);

			if (strcmp(k, "v") && strcmp(k, "cmd") && strcmp(k, "args")) {
				ret = tier_err_set(err, -EPROTO, "unknown field '%.64s'", k);
				tier_request_release(req);
				goto out;
			}
		}
	}
	ret = 0;
out:
	json_object_put(o);
	return ret;
}

void tier_request_release(struct tier_request *req)
{
	json_object_put(req->args);
	req->args = NULL;
}

static char *line_of(struct json_object *o)
{
	const char *s;
	char *line;
	size_t n;

	if (!o)
		return NULL;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = strlen(s);
	line = malloc(n + 2);
	if (line) {
		memcpy(line, s, n);
		line[n] = '\n';
		line[n + 1] = '\0';
	}
	json_object_put(o);
	return line;
}

char *tier_request_format(enum tier_cmd cmd, struct json_object *args)
{
	struct json_object *o = json_object_new_object();

	if (!o || cmd >= TIER_CMD__COUNT) {
		json_object_put(o);
		json_object_put(args);
		return NULL;
	}
	json_object_object_add(o, "v", json_object_new_int(TIER_PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(tier_cmds[cmd].name));
	if (args)
		json_object_object_add(o, "args", args);
	return line_of(o);
}

char *tier_response_ok(struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		json_object_put(result);
		return NULL;
	}
	json_object_object_add(o, "v", json_object_new_int(TIER_PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "result", result ? result : json_object_new_object());
	return line_of(o);
}

char *tier_response_ok_text(const char *result)
{
	static const char head[] = "{\"v\":%d,\"ok\":true,\"result\":";
	size_t n = strlen(result) + sizeof(head) + 16;
	char *line = malloc(n);

	if (line) {
		int k = snprintf(line, n, head, TIER_PROTO_VERSION);

		snprintf(line + k, n - (size_t)k, "%s}\n", result);
	}
	return line;
}

char *tier_response_error(int errno_value, const char *msg)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "v", json_object_new_int(TIER_PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "errno", json_object_new_int(errno_value));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return line_of(o);
}

int tier_response_parse(const char *line, size_t len, struct json_object **result,
			struct tier_err *err)
{
	struct json_object *o, *ok, *f;
	int ret;

	*result = NULL;
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len > TIER_PROTO_MAX_RESPONSE)
		return tier_err_set(err, -E2BIG, "response too large");
	{
		/* Responses may exceed the request limit: parse directly. */
		struct json_tokener *tok = json_tokener_new_ex(64);
		enum json_tokener_error jerr;

		if (!tok)
			return tier_err_set(err, -ENOMEM, "out of memory");
		o = json_tokener_parse_ex(tok, line, (int)len);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_success || json_tokener_get_parse_end(tok) != len ||
		    !json_object_is_type(o, json_type_object)) {
			json_tokener_free(tok);
			json_object_put(o);
			return tier_err_set(err, -EPROTO, "malformed response from tierd");
		}
		json_tokener_free(tok);
	}
	ret = check_version(o, err);
	if (ret)
		goto out;
	if (!json_object_object_get_ex(o, "ok", &ok) || !json_object_is_type(ok, json_type_boolean)) {
		ret = tier_err_set(err, -EPROTO, "response without 'ok'");
		goto out;
	}
	if (json_object_get_boolean(ok)) {
		if (!json_object_object_get_ex(o, "result", &f) ||
		    !json_object_is_type(f, json_type_object)) {
			ret = tier_err_set(err, -EPROTO, "response without a 'result' object");
			goto out;
		}
		*result = json_object_get(f);
		ret = 0;
	} else {
		struct json_object *e;
		int code = EIO;

		if (json_object_object_get_ex(o, "errno", &e) && json_object_is_type(e, json_type_int))
			code = json_object_get_int(e);
		if (code <= 0 || code > 4095)
			code = EIO;
		ret = tier_err_set(err, -code, "%s",
				   json_object_object_get_ex(o, "error", &e) &&
						   json_object_is_type(e, json_type_string) ?
					   json_object_get_string(e) :
					   "tierd reported an error");
	}
out:
	json_object_put(o);
	return ret;
}

static const char *const advice_names[] = {
	"default", "hot", "cold", "pin-fast", "latency", "bandwidth",
};

const char *tier_proto_advice_name(int advice)
{
	if (advice < 0 || (size_t)advice >= sizeof(advice_names) / sizeof(advice_names[0]))
		return NULL;
	return advice_names[advice];
}

int tier_proto_advice_parse(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(advice_names) / sizeof(advice_names[0]); i++)
		if (!strcmp(name, advice_names[i]))
			return (int)i;
	return -1;
}
