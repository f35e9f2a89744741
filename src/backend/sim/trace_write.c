/* trace_write.c - tiersim's trace writer: records buffered and written in
 * 64 KiB blocks behind a provisional header, repeats of a record merged
 * into its count, the header rewritten complete when the writer finishes
 * (docs/trace-format.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/sim/trace_impl.h"

/* Large enough that write calls are rare (one per tens of thousands of
 * records), small enough to stay in L2. */
enum { WRITER_BUF_BYTES = 64 * 1024 };

struct tier_trace_writer {
	char *path;
	int fd;			/* -1 once closed */
	unsigned page_shift;
	uint8_t tenant;		/* tenant of the next _add */
	uint8_t enc_tenant;	/* tenant in force in the encoded stream */
	unsigned max_tenant;
	bool finished;

	/* A record held back so that repeats of it merge into its count. */
	bool pending;
	bool p_write;
	uint8_t p_tenant;
	uint64_t p_page;
	uint64_t p_count;

	uint64_t prev_page;	/* page of the last encoded record */
	uint64_t nr_records;	/* encoded records */
	uint64_t nr_accesses;	/* including the pending record */
	uint64_t footprint_pages;
	uint64_t data_bytes;	/* encoded record bytes, flushed or not */

	int error;		/* first failure, sticky */
	struct tier_err error_msg;

	size_t len;		/* bytes in buf */
	uint8_t buf[WRITER_BUF_BYTES];
};

static int write_all(int fd, const uint8_t *p, size_t n, off_t off)
{
	while (n) {
		ssize_t k = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
		if (off >= 0)
			off += k;
	}
	return 0;
}

static int writer_fail(struct tier_trace_writer *w, int code, const char *what)
{
	if (!w->error) {
		w->error = code;
		tier_err_set(&w->error_msg, code, "%s: %s: %s", w->path, what, strerror(-code));
	}
	return w->error;
}

static int writer_flush(struct tier_trace_writer *w)
{
	int rc;

	if (!w->len)
		return 0;
	rc = write_all(w->fd, w->buf, w->len, -1);
	if (rc)
		return writer_fail(w, rc, "write");
	w->len = 0;
	return 0;
}

int tier_trace_writer_new(const char *path, unsigned page_shift,
			  struct tier_trace_writer **out, struct tier_err *err)
{
	const struct tier__trace_header hd = { .page_shift = page_shift, .nr_tenants = 1 };
	uint8_t h[TIER_TRACE_HEADER_BYTES];
	struct tier_trace_writer *w;
	int rc;

	*out = NULL;
	if (page_shift < TIER_TRACE_PAGE_SHIFT_MIN || page_shift > TIER_TRACE_PAGE_SHIFT_MAX)
		return tier_err_set(err, -EINVAL, "%s: page shift %u outside [%d, %d]", path,
				    page_shift, TIER_TRACE_PAGE_SHIFT_MIN,
				    TIER_TRACE_PAGE_SHIFT_MAX);
	w = calloc(1, sizeof(*w));
	if (!w)
		return tier_err_set(err, -ENOMEM, "%s: out of memory", path);
	w->path = strdup(path);
	if (!w->path) {
		rc = tier_err_set(err, -ENOMEM, "%s: out of memory", path);
		goto out_free;
	}
	w->page_shift = page_shift;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out_free_path;
	}
	/* Provisional header, not complete: a crash leaves a file that
	 * readers reject as unfinished rather than misread. */
	tier__trace_header_encode(h, &hd);
	rc = write_all(w->fd, h, sizeof(h), -1);
	if (rc) {
		tier_err_set(err, rc, "%s: write: %s", path, strerror(-rc));
		goto out_close;
	}
	*out = w;
	return 0;

out_close:
	close(w->fd);
	unlink(path);
out_free_path:
	free(w->path);
out_free:
	free(w);
	return rc;
}

void tier_trace_writer_set_tenant(struct tier_trace_writer *w, uint8_t tenant)
{
	w->tenant = tenant;
}

/* Encodes the pending record into the buffer. */
static int writer_emit(struct tier_trace_writer *w)
{
	uint64_t head;
	uint8_t *p;
	size_t n = 0;

	if (!w->pending)
		return 0;
	w->pending = false;
	if (w->len + TIER_TRACE_RECORD_MAX_BYTES > sizeof(w->buf) && writer_flush(w))
		return w->error;
	p = w->buf + w->len;
	head = trace_zigzag(w->p_page - w->prev_page) << TIER_TRACE_R_DELTA_SHIFT;
	if (w->p_write)
		head |= TIER_TRACE_R_WRITE;
	if (w->p_count > 1)
		head |= TIER_TRACE_R_REPEAT;
	if (w->p_tenant != w->enc_tenant)
		head |= TIER_TRACE_R_TENANT;
	n += trace_put_varint(p, head);
	if (head & TIER_TRACE_R_TENANT) {
		p[n++] = w->p_tenant;
		w->enc_tenant = w->p_tenant;
	}
	if (w->p_count > 1)
		n += trace_put_varint(p + n, w->p_count - 2);
	w->len += n;
	w->data_bytes += n;
	w->prev_page = w->p_page;
	w->nr_records++;
	return 0;
}

int tier_trace_writer_add(struct tier_trace_writer *w, uint64_t page, bool write,
			  uint64_t count)
{
	if (w->error)
		return w->error;
	if (w->finished)
		return -EINVAL;
	if (!count)
		return -EINVAL;
	if (page >= TIER_TRACE_MAX_PAGES)
		return -ERANGE;
	if (count > UINT64_MAX - w->nr_accesses)
		return writer_fail(w, -EOVERFLOW, "access count");
	if (w->pending && w->p_page == page && w->p_write == write &&
	    w->p_tenant == w->tenant && count <= UINT64_MAX - w->p_count) {
		w->p_count += count;
	} else {
		if (writer_emit(w))
			return w->error;
		w->pending = true;
		w->p_page = page;
		w->p_write = write;
		w->p_tenant = w->tenant;
		w->p_count = count;
	}
	w->nr_accesses += count;
	if (page >= w->footprint_pages)
		w->footprint_pages = page + 1;
	if (w->tenant > w->max_tenant)
		w->max_tenant = w->tenant;
	return 0;
}

int tier_trace_writer_finish(struct tier_trace_writer *w, struct tier_err *err)
{
	uint8_t h[TIER_TRACE_HEADER_BYTES];
	int rc;

	if (w->finished)
		return 0;
	if (!w->error && !writer_emit(w))
		writer_flush(w);
	if (!w->error) {
		const struct tier__trace_header hd = {
			.page_shift = w->page_shift,
			.nr_tenants = w->max_tenant + 1,
			.flags = TIER_TRACE_F_COMPLETE,
			.footprint_pages = w->footprint_pages,
			.nr_records = w->nr_records,
			.nr_accesses = w->nr_accesses,
			.data_bytes = w->data_bytes,
		};

		tier__trace_header_encode(h, &hd);
		rc = write_all(w->fd, h, sizeof(h), 0);
		if (rc)
			writer_fail(w, rc, "write header");
	}
	if (!w->error) {
		rc = close(w->fd);
		w->fd = -1;
		if (rc)
			writer_fail(w, -errno, "close");
	}
	if (w->error) {
		if (err)
			*err = w->error_msg;
		return w->error;
	}
	w->finished = true;
	return 0;
}

uint64_t tier_trace_writer_nr_records(const struct tier_trace_writer *w)
{
	return w->nr_records + (w->pending ? 1 : 0);
}

uint64_t tier_trace_writer_nr_accesses(const struct tier_trace_writer *w)
{
	return w->nr_accesses;
}

uint64_t tier_trace_writer_footprint_pages(const struct tier_trace_writer *w)
{
	return w->footprint_pages;
}

void tier_trace_writer_destroy(struct tier_trace_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (!w->finished)
		unlink(w->path);
	free(w->path);
	free(w);
}
