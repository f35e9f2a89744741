/* probe_file.c - the saved probe report: writing it atomically, reading
 * it back, and the measured tier order it gives as a topology override. */
#include "common/probe_out.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* mkdir -p of path's directory. */
static int make_parents(const char *path, struct tier_err *err)
{
	char dir[PATH_MAX];
	char *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return tier_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(dir, 0755) && errno != EEXIST)
				return tier_err_set(err, -errno, "%s: cannot create %s: %s",
						    path, dir, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int tier_probe_report_save(const struct tier_probe_report *r, const char *path,
			   struct tier_err *err)
{
	char tmp[PATH_MAX];
	struct json_object *o;
	const char *s;
	size_t len;
	FILE *f;
	int fd, ret;

	ret = make_parents(path, err);
	if (ret)
		return ret;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return tier_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
	o = tier_probe_report_to_json(r);
	if (!o)
		return tier_err_set(err, -ENOMEM, "out of memory");
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out_put;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		ret = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out_put;
	}
	if (fwrite(s, 1, len, f) != len || fputc('\n', f) == EOF || fflush(f) ||
	    fsync(fileno(f))) {
		ret = tier_err_set(err, -errno ? -errno : -EIO, "%s: %s", path,
				   strerror(errno ? errno : EIO));
		fclose(f);
		unlink(tmp);
		goto out_put;
	}
	if (fclose(f)) {
		ret = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out_put;
	}
	if (rename(tmp, path)) {
		ret = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
out_put:
	json_object_put(o);
	return ret;
}

/* Probe reports are a few KiB per node; a larger file is a mistake. */
enum { PROBE_FILE_MAX_BYTES = 16 << 20 };

int tier_probe_report_parse(const char *buf, size_t len, const char *name,
			    struct tier_probe_report *r, struct tier_err *err)
{
	struct json_tokener *tok;
	struct json_object *o = NULL;
	int ret;

	tier_probe_report_release(r);
	if (len > PROBE_FILE_MAX_BYTES)
		return tier_err_set(err, -EFBIG, "%s: larger than 16 MiB", name);
	tok = json_tokener_new();
	if (!tok)
		return tier_err_set(err, -ENOMEM, "out of memory");
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		size_t end = json_tokener_get_parse_end(tok);
		enum json_tokener_error je = json_tokener_get_error(tok);

		/* Only whitespace may follow the document (not a NUL byte,
		 * which strchr() would find as the set's end). */
		while (o && end < len && buf[end] && strchr(" \t\r\n", buf[end]))
			end++;
		if (!o || end < len) {
			ret = tier_err_set(err, -EINVAL, "%s: not a JSON document (%s at byte %zu)",
					   name, o ? "trailing data" :
					   je == json_tokener_continue ? "unexpected end" :
					   json_tokener_error_desc(je), end);
			goto out;
		}
	}
	ret = tier_probe_report_from_json(o, r, err);
	if (ret)
		tier_err_prefix(err, "%s", name);
out:
	json_object_put(o);
	json_tokener_free(tok);
	return ret;
}

int tier_probe_report_load(const char *path, struct tier_probe_report *r,
			   struct tier_err *err)
{
	char *buf;
	size_t len = 0;
	FILE *f;
	int ret;

	tier_probe_report_release(r);
	f = fopen(path, "re");
	if (!f)
		return tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
	buf = malloc(PROBE_FILE_MAX_BYTES + 1);
	if (buf)
		len = fread(buf, 1, PROBE_FILE_MAX_BYTES + 1, f);
	ret = !buf ? -ENOMEM : ferror(f) ? -EIO : len > PROBE_FILE_MAX_BYTES ? -EFBIG : 0;
	fclose(f);
	if (ret) {
		free(buf);
		return tier_err_set(err, ret, "%s: %s", path,
				    ret == -EFBIG ? "larger than 16 MiB" : strerror(-ret));
	}
	ret = tier_probe_report_parse(buf, len, path, r, err);
	free(buf);
	return ret;
}

int tier_probe_load_override(const char *path, struct tier_tier_override **tiers,
			     size_t *nr_tiers, int **nodes, struct tier_err *err)
{
	struct tier_probe_report r;
	int ret;

	tier_probe_report_init(&r);
	ret = tier_probe_report_load(path, &r, err);
	if (!ret) {
		ret = tier_probe_override(&r, tiers, nr_tiers, nodes, err);
		if (ret)
			tier_err_prefix(err, "%s", path);
	}
	tier_probe_report_release(&r);
	return ret;
}
