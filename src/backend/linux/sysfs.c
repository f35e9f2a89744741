/* sysfs.c - small readers for sysfs/procfs files under a root directory. */
#include "backend/linux/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tier_sysfs_path(char *buf, size_t sz, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n, m;

	size_t rlen = strlen(root);

	while (rlen > 1 && root[rlen - 1] == '/')
		rlen--;		/* "fixtures/x/" and "fixtures/x" alike */
	n = snprintf(buf, sz, "%.*s/", (int)rlen, root);
	if (n < 0 || (size_t)n >= sz)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sz - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)(n + m) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

long tier_sysfs_read(const char *path, char *buf, size_t sz, struct tier_err *err)
{
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= sz) {
			char probe;

			/* Full buffer: only fine if the file ends here. */
			n = read(fd, &probe, 1);
			if (n == 0)
				break;
			close(fd);
			return tier_err_set(err, -EFBIG, "%s: larger than %zu bytes",
					    path, sz - 1);
		}
		n = read(fd, buf + len, sz - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			close(fd);
			return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (long)len;
}

bool tier_sysfs_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int tier_sysfs_read_u64(const char *path, uint64_t *out, struct tier_err *err)
{
	char buf[64], *end;
	unsigned long long v;
	long n;

	n = tier_sysfs_read(path, buf, sizeof(buf), err);
	if (n < 0)
		return (int)n;
	if (buf[0] < '0' || buf[0] > '9')
		goto out_bad;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno)
		goto out_bad;
	while (*end == '\n' || *end == ' ')
		end++;
	if (*end)
		goto out_bad;
	*out = v;
	return 0;
out_bad:
	buf[strcspn(buf, "\n")] = '\0';
	return tier_err_set(err, -EINVAL, "%s: expected an unsigned number, found '%s'",
			    path, buf);
}
