/* listen_addr.h - an "ADDR:PORT" a TCP listener binds to (tierd's metrics
 * endpoint: daemon.metrics, tierd --metrics): one parser for the
 * configuration file, the command line and the daemon that binds it. */
#ifndef TIER_COMMON_LISTEN_ADDR_H
#define TIER_COMMON_LISTEN_ADDR_H

#include <sys/socket.h>

#include "core/err.h"

/* Parses s: a numeric IPv4 address and a port ("127.0.0.1:9464") or an
 * IPv6 address in brackets and a port ("[::1]:9464"); the port 1..65535.
 * No host names: the daemon resolves nothing at start. Fills *ss and *len
 * for bind(2) (either may be NULL to check the syntax only). Returns 0 or
 * -EINVAL with err saying what is wrong with s (no field name: the caller
 * prefixes it). */
int tier_listen_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
			   struct tier_err *err);

#endif
