/* nodelist.c - parse and format the kernel's "0-3,8" list format. */
#include "core/nodelist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Reads a decimal id at *p; advances *p. */
static int parse_id(const char **p, int *out)
{
	long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > TIER_NODELIST_MAX_ID)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = (int)v;
	return 0;
}

int tier_nodelist_parse(const char *s, int **ids_out, size_t *nr_out,
			struct tier_err *err)
{
	const char *p = s, *end;
	int *ids = NULL;
	size_t nr = 0, cap = 0, i, j;
	int ret;

	*ids_out = NULL;
	*nr_out = 0;
	end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	while (p < end) {
		int lo, hi, id;

		ret = parse_id(&p, &lo);
		if (ret)
			goto out_bad;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			ret = parse_id(&p, &hi);
			if (ret)
				goto out_bad;
			if (hi < lo) {
				ret = -EINVAL;
				goto out_bad;
			}
		}
		if (p < end) {
			if (*p != ',' || p + 1 == end) {
				ret = -EINVAL;
				goto out_bad;
			}
			p++;
		}
		for (id = lo; id <= hi; id++) {
			if (nr == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				int *n = realloc(ids, ncap * sizeof(*ids));

				if (!n) {
					free(ids);
					return tier_err_set(err, -ENOMEM, "out of memory");
				}
				ids = n;
				cap = ncap;
			}
			ids[nr++] = id;
		}
	}
	if (p != end) {
		ret = -EINVAL;
		goto out_bad;
	}
	if (nr)
		qsort(ids, nr, sizeof(*ids), cmp_int);
	for (i = 0, j = 0; i < nr; i++)
		if (j == 0 || ids[j - 1] != ids[i])
			ids[j++] = ids[i];
	*ids_out = ids;
	*nr_out = j;
	if (j == 0) {
		free(ids);
		*ids_out = NULL;
	}
	return 0;

out_bad:
	free(ids);
	return tier_err_set(err, -EINVAL,
			    "invalid list '%.*s' at offset %zu (expected ids like 0-3,8%s)",
			    (int)(end - s), s, (size_t)(p - s),
			    ret == -ERANGE ? "; id too large" : "");
}

size_t tier_nodelist_format(const int *ids, size_t nr, char *buf, size_t sz)
{
	size_t i = 0, len = 0;
	char tmp[32];

	if (sz)
		buf[0] = '\0';
	while (i < nr) {
		size_t j = i;
		int n;

		while (j + 1 < nr && ids[j + 1] == ids[j] + 1)
			j++;
		if (j == i)
			n = snprintf(tmp, sizeof(tmp), "%s%d", len ? "," : "", ids[i]);
		else
			n = snprintf(tmp, sizeof(tmp), "%s%d-%d", len ? "," : "",
				     ids[i], ids[j]);
		if (sz && len + (size_t)n < sz)
			memcpy(buf + len, tmp, (size_t)n + 1);
		else if (sz)
			buf[sz - 1] = '\0';
		len += (size_t)n;
		i = j + 1;
	}
	return len;
}

bool tier_nodelist_contains(const int *ids, size_t nr, int id)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (ids[i] == id)
			return true;
	return false;
}
