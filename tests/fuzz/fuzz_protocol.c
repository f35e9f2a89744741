/* fuzz_protocol.c - fuzz target of the control protocol's parsers: any
 * bytes a peer sends must give a parsed request or a clear error, never a
 * crash, leak or hang; a parsed request formats back to a line that parses
 * to the same command. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier_request req, again;
	struct tier_err err = { "" };
	struct json_object *res = NULL;
	char *line;

	if (!tier_request_parse((const char *)data, size, &req, &err)) {
		line = tier_request_format(req.cmd, json_object_get(req.args));
		if (!line)
			abort();
		if (tier_request_parse(line, strlen(line), &again, &err) || again.cmd != req.cmd)
			abort();
		tier_request_release(&again);
		free(line);
		tier_request_release(&req);
	} else if (!err.msg[0]) {
		abort();	/* every rejection says why */
	}
	if (!tier_response_parse((const char *)data, size, &res, &err))
		json_object_put(res);
	return 0;
}
