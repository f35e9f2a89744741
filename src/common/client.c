/* client.c - a client of tierd's control socket. */
#include "common/client.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/clock.h"

static long now_ms(void)
{
	return (long)(tier_linux_now_us() / 1000u);
}

static int wait_fd(int fd, short events, long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long left = deadline - now_ms();
	int r;

	if (left <= 0)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)left);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

int tier_client_connect(const char *socket_path, int *fd, struct tier_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, ret;

	*fd = -1;
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return tier_err_set(err, -ENAMETOOLONG, "%s: socket path too long", socket_path);
	strcpy(sa.sun_path, socket_path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return tier_err_set(err, -errno, "socket: %s", strerror(errno));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(s);
		if (ret == -ENOENT || ret == -ECONNREFUSED)
			return tier_err_set(err, ret, "tierd is not running (no daemon at %s)",
					    socket_path);
		return tier_err_set(err, ret, "%s: %s", socket_path, strerror(-ret));
	}
	*fd = s;
	return 0;
}

/* What a send() or recv() that returned n means: 0 done (n bytes), 1 try
 * again (interrupted, or the socket became ready in time), or -errno: with
 * *waiting set, waiting for the socket failed (-ETIMEDOUT: the deadline
 * passed), else the call failed and err says so. */
static int io_result(ssize_t n, int fd, short events, long deadline, const char *what,
		     bool *waiting, struct tier_err *err)
{
	int ret;

	*waiting = false;
	if (n >= 0)
		return 0;
	if (errno == EINTR)
		return 1;
	if (errno != EAGAIN)
		return tier_err_set(err, -errno, "tierd: %s: %s", what, strerror(errno));
	ret = wait_fd(fd, events, deadline);
	*waiting = ret != 0;
	return ret ? ret : 1;
}

int tier_client_exchange(int fd, enum tier_cmd cmd, struct json_object *args, int timeout_ms,
			 struct json_object **result, bool *answered, struct tier_err *err)
{
	long deadline = now_ms() + timeout_ms;
	char *req = NULL, *buf = NULL;
	size_t len = 0, cap = 0, off = 0, rlen;
	bool waiting;
	int ret;

	*result = NULL;
	*answered = false;
	req = tier_request_format(cmd, args);
	if (!req)
		return tier_err_set(err, -ENOMEM, "out of memory");
	rlen = strlen(req);
	while (off < rlen) {
		ssize_t n = send(fd, req + off, rlen - off, MSG_NOSIGNAL);

		ret = io_result(n, fd, POLLOUT, deadline, "send", &waiting, err);
		if (waiting)
			goto out_timeout;
		if (ret < 0)
			goto out;
		if (!ret)
			off += (size_t)n;
	}
	for (;;) {
		ssize_t n;

		if (len + 4096 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if (cap > TIER_PROTO_MAX_RESPONSE + 1) {
				ret = tier_err_set(err, -E2BIG, "response from tierd too large");
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				ret = tier_err_set(err, -ENOMEM, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		ret = io_result(n, fd, POLLIN, deadline, "recv", &waiting, err);
		if (waiting)
			goto out_timeout;
		if (ret < 0)
			goto out;
		if (ret)
			continue;
		if (n == 0) {
			ret = tier_err_set(err, -EPROTO, "tierd closed the connection without answering");
			goto out;
		}
		len += (size_t)n;
		if (memchr(buf + len - n, '\n', (size_t)n))
			break;
	}
	*answered = true;
	ret = tier_response_parse(buf, len, result, err);
	goto out;
out_timeout:
	ret = tier_err_set(err, ret, ret == -ETIMEDOUT ? "tierd did not answer within %d ms" :
			   "poll failed (%d ms)", timeout_ms);
out:
	free(req);
	free(buf);
	return ret;
}

int tier_client_call(const char *socket_path, enum tier_cmd cmd, struct json_object *args,
		     int timeout_ms, struct json_object **result, struct tier_err *err)
{
	bool answered;
	int fd, ret;

	*result = NULL;
	ret = tier_client_connect(socket_path, &fd, err);
	if (ret) {
		json_object_put(args);
		return ret;
	}
	ret = tier_client_exchange(fd, cmd, args, timeout_ms, result, &answered, err);
	if (ret && !answered)
		tier_err_prefix(err, "%s", socket_path);
	close(fd);
	return ret;
}
