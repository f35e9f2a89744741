/* protocol.h - tierd's control protocol (docs/protocol.md).
 *
 * A Unix stream socket; each message is one JSON object on one line
 * (UTF-8, ending in '\n', at most TIER_PROTO_MAX_LINE bytes).
 *   request:  {"v":1,"cmd":"status","args":{...}}
 *   response: {"v":1,"ok":true,"result":{...}}
 *             {"v":1,"ok":false,"errno":1,"error":"status: ..."}
 * Parsing is strict and never trusts the peer: unknown commands, wrong
 * types and oversized lines are errors with a clear message.
 */
#ifndef TIER_COMMON_PROTOCOL_H
#define TIER_COMMON_PROTOCOL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

#define TIER_PROTO_VERSION 1
#define TIER_PROTO_MAX_LINE 65536
/* Responses can be larger (status of many processes). */
#define TIER_PROTO_MAX_RESPONSE (16 << 20)

enum tier_cmd {
	TIER_CMD_PING,
	TIER_CMD_STATUS,
	TIER_CMD_RELOAD,
	TIER_CMD_HINT,
	TIER_CMD_CGROUP_SET,
	TIER_CMD_CGROUPS,
	TIER_CMD_EXPLAIN,
	TIER_CMD_HEATMAP,
	TIER_CMD_HISTORY,
	TIER_CMD_PROCESSES,
	TIER_CMD_NODE_TIER,
	TIER_CMD_DRAIN,
	TIER_CMD__COUNT,
};

struct tier_cmd_info {
	const char *name;
	bool root_only;		/* needs uid 0 (SO_PEERCRED) */
	const char *args;	/* the argument names it takes, ", "-separated; "" none */
};

extern const struct tier_cmd_info tier_cmds[TIER_CMD__COUNT];

struct tier_request {
	enum tier_cmd cmd;
	struct json_object *args;	/* owned; an object, never NULL */
};

/* Parses one request line (without or with its '\n'). On success fills
 * req (release with tier_request_release). Returns 0 or -EINVAL /
 * -EPROTO / -E2BIG with err saying what is wrong; an argument the command
 * does not take is -EINVAL (their types and values are the daemon's to
 * check). */
int tier_request_parse(const char *line, size_t len, struct tier_request *req,
		       struct tier_err *err);
void tier_request_release(struct tier_request *req);

/* A request line (with '\n'), malloc'd; args may be NULL. NULL on ENOMEM. */
char *tier_request_format(enum tier_cmd cmd, struct json_object *args);

/* The advice names of the hint request, by value: core/policy.h's
 * enum tier_hint and libtier's enum tier_advice share the values (0
 * "default", 1 "hot", 2 "cold", 3 "pin-fast", 4 "latency", 5 "bandwidth").
 * TIER_PROTO_ADVICES lists them for messages. */
#define TIER_PROTO_ADVICES "hot, cold, pin-fast, latency, bandwidth, default"
/* The name of advice, or NULL when it is none. */
const char *tier_proto_advice_name(int advice);
/* The value of name, or -1 when it names no advice. */
int tier_proto_advice_parse(const char *name);

/* Response lines (with '\n'), malloc'd. ok takes ownership of result. */
char *tier_response_ok(struct json_object *result);
/* The same line around a result already rendered: the text of a JSON
 * object (as json-c renders it plain), put in as it is. */
char *tier_response_ok_text(const char *result);
char *tier_response_error(int errno_value, const char *msg);

/* Parses a response line. On success *result holds the result object
 * (caller puts it). A server-side error returns its -errno with err set
 * to its message. Malformed: -EPROTO. */
int tier_response_parse(const char *line, size_t len, struct json_object **result,
			struct tier_err *err);

#endif
