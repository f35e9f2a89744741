/* listen_addr.c - "ADDR:PORT" of a TCP listener, with inet_pton(3). */
#include "common/listen_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLE "expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464"

int tier_listen_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
			   struct tier_err *err)
{
	struct sockaddr_storage sa;
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s;
	size_t hlen;
	unsigned long port;
	char *end;

	memset(&sa, 0, sizeof(sa));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return tier_err_set(err, -EINVAL, "'%s': " EXAMPLE, s);
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			return tier_err_set(err, -EINVAL, "'%s': " EXAMPLE, s);
		hlen = (size_t)(colon - s);
	}
	if (!hlen || hlen >= sizeof(host))
		return tier_err_set(err, -EINVAL, "'%s': " EXAMPLE, s);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || port < 1 || port > 65535)
		return tier_err_set(err, -EINVAL, "'%s': the port must be a number in 1..65535", s);
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;

		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return tier_err_set(err, -EINVAL, "'%s': '%s' is not a numeric IPv6 address",
					    s, host);
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (len)
			*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return tier_err_set(err, -EINVAL,
					    "'%s': '%s' is not a numeric IPv4 address (IPv6 goes in brackets)",
					    s, host);
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		if (len)
			*len = sizeof(*a4);
	}
	if (ss)
		*ss = sa;
	return 0;
}
