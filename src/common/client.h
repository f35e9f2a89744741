/* client.h - a client of tierd's control socket (tierctl, libtier). */
#ifndef TIER_COMMON_CLIENT_H
#define TIER_COMMON_CLIENT_H

#include <json-c/json.h>

#include "common/protocol.h"

/* Sends one request (args may be NULL; ownership taken) and waits for the
 * response, at most timeout_ms. On success *result is the result object
 * (caller puts it). Returns 0, or -errno: the daemon's own error, -ENOENT /
 * -ECONNREFUSED when tierd is not running (err says so), -ETIMEDOUT. */
int tier_client_call(const char *socket_path, enum tier_cmd cmd, struct json_object *args,
		     int timeout_ms, struct json_object **result, struct tier_err *err);

/* The two halves of tier_client_call, for a connection kept open over
 * several requests (libtier).
 *
 * tier_client_connect: a connected, non-blocking, close-on-exec socket in
 * *fd. Returns 0 or -errno: -ENOENT / -ECONNREFUSED when tierd is not
 * running (err says so).
 *
 * tier_client_exchange: one request (args may be NULL; ownership taken) and
 * its response on fd, at most timeout_ms. Returns as tier_client_call.
 * *answered tells whether a response line arrived: when it is false (send or
 * receive failed, timeout, the daemon closed the connection) the connection
 * is out of step and must be closed. */
int tier_client_connect(const char *socket_path, int *fd, struct tier_err *err);
int tier_client_exchange(int fd, enum tier_cmd cmd, struct json_object *args, int timeout_ms,
			 struct json_object **result, bool *answered, struct tier_err *err);

#endif
