/* trace_read.c - tiersim's trace reader: streams the records of a trace
 * file (or of a trace in memory) into arrays of accesses, checking each
 * record against the header as it goes (docs/trace-format.md).
 *
 * The reader keeps one fixed-size buffer and decodes straight from it into
 * the caller's array; a record split across two refills is handled by
 * moving the unread tail to the buffer's start before reading more, so the
 * decoder always sees whole records (TIER_TRACE_RECORD_MAX_BYTES at most)
 * until the data ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/sim/trace_impl.h"

/* Large enough that read calls are rare (one per tens of thousands of
 * records), small enough to stay in L2. */
enum { READER_BUF_BYTES = 128 * 1024 };

struct tier_trace_reader {
	char *name;
	int fd;			/* -1 for a memory source */
	const uint8_t *mem;	/* memory source: the whole file */
	uint64_t file_bytes;	/* size of the file or memory */
	size_t read_max;	/* largest refill, bytes */

	struct tier__trace_header hdr;	/* decoded and checked at open */

	/* buf[pos, len) holds data bytes not yet decoded; buf[0] is data byte
	 * buf_data_off; data_read = buf_data_off + len bytes loaded so far. */
	size_t pos, len;
	uint64_t buf_data_off;
	uint64_t data_read;

	/* Decoding state. */
	uint64_t page;		/* page of the last record */
	uint8_t tenant;
	uint64_t rec_idx;	/* records decoded */
	uint64_t nr_done;	/* accesses decoded (repeats counted whole) */
	uint64_t rep_left;	/* accesses of the last record still to hand out */
	uint8_t rep_write;

	int error;		/* sticky failure of _next */
	struct tier_err error_msg;

	uint8_t *buf;		/* buf_bytes: data size, 64 B to 128 KiB */
	size_t buf_bytes;
};

static int reader_new(const char *name, struct tier_trace_reader **out, struct tier_err *err)
{
	struct tier_trace_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return tier_err_set(err, -ENOMEM, "%s: out of memory", name);
	r->name = strdup(name);
	if (!r->name) {
		free(r);
		return tier_err_set(err, -ENOMEM, "%s: out of memory", name);
	}
	r->fd = -1;
	r->read_max = SIZE_MAX;
	*out = r;
	return 0;
}

/* Reads up to n bytes at file offset off; returns the bytes read (0 at the
 * end of the file) or -errno. */
static long source_read(struct tier_trace_reader *r, uint8_t *dst, size_t n, uint64_t off)
{
	ssize_t k;

	if (r->fd >= 0) {
		do
			k = pread(r->fd, dst, n, (off_t)off);
		while (k < 0 && errno == EINTR);
		return k < 0 ? -errno : (long)k;
	}
	if (off >= r->file_bytes)
		return 0;
	if (n > r->file_bytes - off)
		n = (size_t)(r->file_bytes - off);
	memcpy(dst, r->mem + off, n);
	return (long)n;
}

/* Reads and checks the header, then sizes the buffer to the data. */
static int header_read(struct tier_trace_reader *r, struct tier_err *err)
{
	uint8_t h[TIER_TRACE_HEADER_BYTES];
	size_t got = 0;
	long k;
	int rc;

	while (got < sizeof(h)) {
		k = source_read(r, h + got, sizeof(h) - got, got);
		if (k < 0)
			return tier_err_set(err, (int)k, "%s: read: %s", r->name, strerror((int)-k));
		if (k == 0)
			break;
		got += (size_t)k;
	}
	rc = tier__trace_header_decode(h, got, r->file_bytes, r->name, &r->hdr, err);
	if (rc)
		return rc;
	/* No larger than the data: a small trace needs no 128 KiB. Refills
	 * happen with under one record left, so two records' room suffices. */
	r->buf_bytes = r->hdr.data_bytes < READER_BUF_BYTES ? (size_t)r->hdr.data_bytes
							    : READER_BUF_BYTES;
	if (r->buf_bytes < 2 * TIER_TRACE_RECORD_MAX_BYTES)
		r->buf_bytes = 2 * TIER_TRACE_RECORD_MAX_BYTES;
	r->buf = malloc(r->buf_bytes);
	if (!r->buf)
		return tier_err_set(err, -ENOMEM, "%s: out of memory", r->name);
	return 0;
}

int tier_trace_reader_open(const char *path, struct tier_trace_reader **out,
			   struct tier_err *err)
{
	struct tier_trace_reader *r;
	struct stat st;
	int rc;

	*out = NULL;
	rc = reader_new(path, &r, err);
	if (rc)
		return rc;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rc = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out_free;
	}
	if (fstat(r->fd, &st)) {
		rc = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out_free;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tier_err_set(err, -EINVAL, "%s: not a regular file", path);
		goto out_free;
	}
	r->file_bytes = (uint64_t)st.st_size;
	rc = header_read(r, err);
	if (rc)
		goto out_free;
	*out = r;
	return 0;

out_free:
	tier_trace_reader_destroy(r);
	return rc;
}

int tier_trace_reader_open_mem(const void *data, size_t sz_bytes, const char *name,
			       struct tier_trace_reader **out, struct tier_err *err)
{
	struct tier_trace_reader *r;
	int rc;

	*out = NULL;
	rc = reader_new(name, &r, err);
	if (rc)
		return rc;
	r->mem = data;
	r->file_bytes = sz_bytes;
	rc = header_read(r, err);
	if (rc) {
		tier_trace_reader_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* Records a sticky decoding error at record rec_idx, which starts at
 * buf[rec_pos], and returns code. */
__attribute__((format(printf, 6, 7)))
static int reader_fail(struct tier_trace_reader *r, int code, uint64_t rec_idx, size_t rec_pos,
		       struct tier_err *err, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	r->error = code;
	tier_err_set(&r->error_msg, code, "%s: record %" PRIu64 " at byte %" PRIu64 ": %s",
		     r->name, rec_idx, r->hdr.header_bytes + r->buf_data_off + rec_pos, reason);
	if (err)
		*err = r->error_msg;
	return code;
}

/* Moves the undecoded tail to the buffer's start and reads more data. */
static int reader_refill(struct tier_trace_reader *r, struct tier_err *err)
{
	size_t keep = r->len - r->pos, want = r->buf_bytes - keep;
	uint64_t left = r->hdr.data_bytes - r->data_read;
	long k;

	memmove(r->buf, r->buf + r->pos, keep);
	r->buf_data_off += r->pos;
	r->pos = 0;
	r->len = keep;
	if (want > r->read_max)
		want = r->read_max;
	if (want > left)
		want = (size_t)left;
	k = source_read(r, r->buf + keep, want, r->hdr.header_bytes + r->data_read);
	if (k < 0)
		return reader_fail(r, (int)k, r->rec_idx, 0, err, "read: %s", strerror((int)-k));
	if (k == 0)	/* the file shrank since it was opened */
		return reader_fail(r, -ENODATA, r->rec_idx, keep, err, "truncated: the header says the trace"
				   " is %" PRIu64 " bytes", r->hdr.header_bytes + r->hdr.data_bytes);
	r->len += (size_t)k;
	r->data_read += (uint64_t)k;
	return 0;
}

/* Decodes whole records from the buffer into buf until the batch is full,
 * a record repeats (handed out by the caller), or fewer bytes than a whole
 * record remain. Returns 0 or a decoding error. */
static int reader_decode(struct tier_trace_reader *r, struct tier_sim_access *buf, size_t n,
			 size_t *produced, struct tier_err *err)
{
	const uint8_t *base = r->buf, *p = base + r->pos, *end = base + r->len, *rec = p;
	uint64_t page = r->page, footprint = r->hdr.footprint_pages;
	uint64_t rec_idx = r->rec_idx, nr_records = r->hdr.nr_records;
	uint64_t acc_left = r->hdr.nr_accesses - r->nr_done;
	size_t i = *produced;
	uint8_t tenant = r->tenant;
	int rc = 0, dec;

	while (i < n && p < end) {
		uint64_t h, c, count = 1;

		rec = p;
		if (*p < 0x80) {
			h = *p++;
		} else {
			dec = trace_get_varint(&p, end, &h);
			if (dec != TRACE_DEC_OK)
				goto out_dec;
		}
		if (h & TIER_TRACE_R_TENANT) {
			if (p == end) {
				dec = TRACE_DEC_MORE;
				goto out_dec;
			}
			if (*p >= r->hdr.nr_tenants) {
				rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
						 "tenant %u outside the header's %u", *p, r->hdr.nr_tenants);
				goto out;
			}
			tenant = *p++;
		}
		if (h & TIER_TRACE_R_REPEAT) {
			dec = trace_get_varint(&p, end, &c);
			if (dec != TRACE_DEC_OK)
				goto out_dec;
			if (c > UINT64_MAX - 2) {
				rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
						 "repeat count overflows");
				goto out;
			}
			count = c + 2;
		}
		page += trace_unzigzag(h >> TIER_TRACE_R_DELTA_SHIFT);
		if (page >= footprint) {
			rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
					 "page %" PRIu64 " outside the footprint of %" PRIu64 " pages",
					 page, footprint);
			goto out;
		}
		if (rec_idx == nr_records) {
			rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
					 "more records than the header's %" PRIu64, nr_records);
			goto out;
		}
		if (count > acc_left) {
			rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
					 "more accesses than the header's %" PRIu64, r->hdr.nr_accesses);
			goto out;
		}
		rec_idx++;
		acc_left -= count;
		r->tenant = tenant;
		rec = p;
		if (count == 1) {
			buf[i++] = (struct tier_sim_access){
				.page = page,
				.write = (uint8_t)(h & TIER_TRACE_R_WRITE),
				.tenant = tenant,
			};
		} else {
			r->rep_left = count;
			r->rep_write = (uint8_t)(h & TIER_TRACE_R_WRITE);
			break;
		}
	}
	goto out;

out_dec:
	if (dec == TRACE_DEC_LONG) {
		rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err, "varint longer than 64 bits");
	} else if (r->data_read == r->hdr.data_bytes) {
		rc = reader_fail(r, -ENODATA, rec_idx, (size_t)(rec - base), err,
				 "truncated: record runs past the end of the data at byte %" PRIu64,
				 r->hdr.header_bytes + r->hdr.data_bytes);
	}
	/* else: the record continues in data not yet read; the caller refills. */
out:
	/* Commit what was decoded up to the last whole record. */
	if (!rc) {
		r->pos = (size_t)(rec - base);
		r->page = page;
		r->rec_idx = rec_idx;
		r->nr_done = r->hdr.nr_accesses - acc_left;
	}
	*produced = i;
	return rc;
}

long tier_trace_reader_next(struct tier_trace_reader *r, struct tier_sim_access *buf,
			    size_t n, struct tier_err *err)
{
	size_t produced = 0, k, i;
	int rc;

	if (r->error) {
		if (err)
			*err = r->error_msg;
		return r->error;
	}
	if (n > LONG_MAX)
		n = LONG_MAX;
	while (produced < n) {
		if (r->rep_left) {
			struct tier_sim_access a = {
				.page = r->page, .write = r->rep_write, .tenant = r->tenant,
			};

			k = n - produced;
			if (k > r->rep_left)
				k = (size_t)r->rep_left;
			for (i = 0; i < k; i++)
				buf[produced + i] = a;
			produced += k;
			r->rep_left -= k;
			continue;
		}
		if (r->len - r->pos < TIER_TRACE_RECORD_MAX_BYTES && r->data_read < r->hdr.data_bytes) {
			rc = reader_refill(r, err);
			if (rc)
				return rc;
		}
		if (r->pos == r->len) {
			/* All data decoded: it must add up to the header. */
			if (r->rec_idx != r->hdr.nr_records)
				return reader_fail(r, -ENODATA, r->rec_idx, r->pos, err, "end of data, the header"
						   " says %" PRIu64 " records", r->hdr.nr_records);
			if (r->nr_done != r->hdr.nr_accesses)
				return reader_fail(r, -EINVAL, r->rec_idx, r->pos, err, "end of data after %"
						   PRIu64 " accesses, the header says %" PRIu64,
						   r->nr_done, r->hdr.nr_accesses);
			break;
		}
		rc = reader_decode(r, buf, n, &produced, err);
		if (rc)
			return rc;
	}
	return (long)produced;
}

uint64_t tier_trace_reader_footprint_pages(const struct tier_trace_reader *r)
{
	return r->hdr.footprint_pages;
}

uint64_t tier_trace_reader_nr_accesses(const struct tier_trace_reader *r)
{
	return r->hdr.nr_accesses;
}

uint64_t tier_trace_reader_nr_records(const struct tier_trace_reader *r)
{
	return r->hdr.nr_records;
}

unsigned tier_trace_reader_page_shift(const struct tier_trace_reader *r)
{
	return r->hdr.page_shift;
}

unsigned tier_trace_reader_nr_tenants(const struct tier_trace_reader *r)
{
	return r->hdr.nr_tenants;
}

int tier_trace_reader_rewind(struct tier_trace_reader *r)
{
	/* pread needs no seek; only the decoding state starts over. */
	r->pos = r->len = 0;
	r->buf_data_off = r->data_read = 0;
	r->page = 0;
	r->tenant = 0;
	r->rec_idx = r->nr_done = r->rep_left = 0;
	r->rep_write = 0;
	r->error = 0;
	tier_err_clear(&r->error_msg);
	return 0;
}

void tier_trace_reader_destroy(struct tier_trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->name);
	free(r);
}

void tier__trace_reader_set_read_max(struct tier_trace_reader *r, size_t max_bytes)
{
	r->read_max = max_bytes ? max_bytes : 1;
}
