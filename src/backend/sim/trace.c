/* trace.c - tiersim's binary access trace: writer and streaming reader.
 *
 * Layout and rationale in docs/trace-format.md. The reader keeps one
 * fixed-size buffer and decodes straight from it into the caller's array;
 * a record split across two refills is handled by moving the unread tail to
 * the buffer's start before reading more, so the decoder always sees whole
 * records (TIER_TRACE_RECORD_MAX_BYTES at most) until the data ends.
 */
#include "backend/sim/trace.h"

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

/* Buffer sizes: large enough that read/write calls are rare (one per tens
 * of thousands of records), small enough to stay in L2. */
enum {
	WRITER_BUF_BYTES = 64 * 1024,
	READER_BUF_BYTES = 128 * 1024,
};

/* ---- byte helpers ------------------------------------------------------ */

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* LEB128: 7 bits a byte, low first, high bit = more follows. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Zigzag maps small signed deltas to small unsigned ones: 0,-1,1,-2 -> 0,1,2,3. */
static uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (0 - (delta >> 63));
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* ---- writer ------------------------------------------------------------ */

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

static void header_encode(uint8_t *h, unsigned page_shift, unsigned nr_tenants,
			  uint32_t flags, uint64_t footprint_pages, uint64_t nr_records,
			  uint64_t nr_accesses, uint64_t data_bytes)
{
	memset(h, 0, TIER_TRACE_HEADER_BYTES);
	memcpy(h, TIER_TRACE_MAGIC, TIER_TRACE_MAGIC_BYTES);
	put_le16(h + TIER_TRACE_OFF_VERSION, TIER_TRACE_VERSION);
	put_le16(h + TIER_TRACE_OFF_HEADER_BYTES, TIER_TRACE_HEADER_BYTES);
	h[TIER_TRACE_OFF_PAGE_SHIFT] = (uint8_t)page_shift;
	put_le16(h + TIER_TRACE_OFF_NR_TENANTS, (uint16_t)nr_tenants);
	put_le32(h + TIER_TRACE_OFF_FLAGS, flags);
	put_le64(h + TIER_TRACE_OFF_FOOTPRINT_PAGES, footprint_pages);
	put_le64(h + TIER_TRACE_OFF_NR_RECORDS, nr_records);
	put_le64(h + TIER_TRACE_OFF_NR_ACCESSES, nr_accesses);
	put_le64(h + TIER_TRACE_OFF_DATA_BYTES, data_bytes);
}

int tier_trace_writer_new(const char *path, unsigned page_shift,
			  struct tier_trace_writer **out, struct tier_err *err)
{
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
	header_encode(h, page_shift, 1, 0, 0, 0, 0, 0);
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
	head = zigzag(w->p_page - w->prev_page) << TIER_TRACE_R_DELTA_SHIFT;
	if (w->p_write)
		head |= TIER_TRACE_R_WRITE;
	if (w->p_count > 1)
		head |= TIER_TRACE_R_REPEAT;
	if (w->p_tenant != w->enc_tenant)
		head |= TIER_TRACE_R_TENANT;
	n += put_varint(p, head);
	if (head & TIER_TRACE_R_TENANT) {
		p[n++] = w->p_tenant;
		w->enc_tenant = w->p_tenant;
	}
	if (w->p_count > 1)
		n += put_varint(p + n, w->p_count - 2);
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
		header_encode(h, w->page_shift, w->max_tenant + 1, TIER_TRACE_F_COMPLETE,
			      w->footprint_pages, w->nr_records, w->nr_accesses,
			      w->data_bytes);
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

/* ---- reader ------------------------------------------------------------ */

struct tier_trace_reader {
	char *name;
	int fd;			/* -1 for a memory source */
	const uint8_t *mem;	/* memory source: the whole file */
	uint64_t file_bytes;	/* size of the file or memory */
	size_t read_max;	/* largest refill, bytes */

	/* Header. */
	unsigned header_bytes;
	unsigned page_shift;
	unsigned nr_tenants;
	uint64_t footprint_pages;
	uint64_t nr_records;
	uint64_t nr_accesses;
	uint64_t data_bytes;

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

static int header_parse(struct tier_trace_reader *r, struct tier_err *err)
{
	const char *name = r->name;
	uint8_t h[TIER_TRACE_HEADER_BYTES];
	uint64_t total_bytes;
	unsigned version;
	uint32_t flags;
	size_t got = 0;
	long k;

	while (got < sizeof(h)) {
		k = source_read(r, h + got, sizeof(h) - got, got);
		if (k < 0)
			return tier_err_set(err, (int)k, "%s: read: %s", name, strerror((int)-k));
		if (k == 0)
			break;
		got += (size_t)k;
	}
	if (!got)
		return tier_err_set(err, -EINVAL, "%s: empty file, not a tierd trace", name);
	if (memcmp(h, TIER_TRACE_MAGIC, got < TIER_TRACE_MAGIC_BYTES ? got : TIER_TRACE_MAGIC_BYTES))
		return tier_err_set(err, -EINVAL, "%s: bad magic at byte 0, not a tierd trace", name);
	if (got < sizeof(h))
		return tier_err_set(err, -ENODATA, "%s: truncated at byte %zu: the header is %d bytes",
				    name, got, TIER_TRACE_HEADER_BYTES);
	version = get_le16(h + TIER_TRACE_OFF_VERSION);
	if (version != TIER_TRACE_VERSION)
		return tier_err_set(err, -EPROTONOSUPPORT,
				    "%s: trace version %u at byte %d, this build reads version %d",
				    name, version, TIER_TRACE_OFF_VERSION, TIER_TRACE_VERSION);
	r->header_bytes = get_le16(h + TIER_TRACE_OFF_HEADER_BYTES);
	if (r->header_bytes < TIER_TRACE_HEADER_BYTES || r->header_bytes > TIER_TRACE_HEADER_MAX_BYTES)
		return tier_err_set(err, -EINVAL, "%s: header size %u at byte %d outside [%d, %d]",
				    name, r->header_bytes, TIER_TRACE_OFF_HEADER_BYTES,
				    TIER_TRACE_HEADER_BYTES, TIER_TRACE_HEADER_MAX_BYTES);
	r->page_shift = h[TIER_TRACE_OFF_PAGE_SHIFT];
	if (r->page_shift < TIER_TRACE_PAGE_SHIFT_MIN || r->page_shift > TIER_TRACE_PAGE_SHIFT_MAX)
		return tier_err_set(err, -EINVAL, "%s: page shift %u at byte %d outside [%d, %d]",
				    name, r->page_shift, TIER_TRACE_OFF_PAGE_SHIFT,
				    TIER_TRACE_PAGE_SHIFT_MIN, TIER_TRACE_PAGE_SHIFT_MAX);
	if (h[TIER_TRACE_OFF_RESERVED0] || get_le32(h + TIER_TRACE_OFF_RESERVED1) ||
	    get_le64(h + TIER_TRACE_OFF_RESERVED2))
		return tier_err_set(err, -EINVAL, "%s: reserved header bytes are not zero", name);
	r->nr_tenants = get_le16(h + TIER_TRACE_OFF_NR_TENANTS);
	if (r->nr_tenants < 1 || r->nr_tenants > 256)
		return tier_err_set(err, -EINVAL, "%s: tenant count %u at byte %d outside [1, 256]",
				    name, r->nr_tenants, TIER_TRACE_OFF_NR_TENANTS);
	flags = get_le32(h + TIER_TRACE_OFF_FLAGS);
	if (flags & ~TIER_TRACE_F_KNOWN)
		return tier_err_set(err, -EINVAL, "%s: unknown flags 0x%x at byte %d", name,
				    flags & ~TIER_TRACE_F_KNOWN, TIER_TRACE_OFF_FLAGS);
	if (!(flags & TIER_TRACE_F_COMPLETE))
		return tier_err_set(err, -EINVAL,
				    "%s: incomplete trace: its writer did not finish", name);
	r->footprint_pages = get_le64(h + TIER_TRACE_OFF_FOOTPRINT_PAGES);
	r->nr_records = get_le64(h + TIER_TRACE_OFF_NR_RECORDS);
	r->nr_accesses = get_le64(h + TIER_TRACE_OFF_NR_ACCESSES);
	r->data_bytes = get_le64(h + TIER_TRACE_OFF_DATA_BYTES);
	if (r->footprint_pages > TIER_TRACE_MAX_PAGES)
		return tier_err_set(err, -EINVAL, "%s: footprint of %" PRIu64 " pages at byte %d"
				    " exceeds 2^52", name, r->footprint_pages,
				    TIER_TRACE_OFF_FOOTPRINT_PAGES);
	/* Each record takes 1 to TIER_TRACE_RECORD_MAX_BYTES bytes and stands
	 * for at least one access of a page inside the footprint. */
	if (r->nr_records > r->data_bytes ||
	    r->data_bytes / TIER_TRACE_RECORD_MAX_BYTES > r->nr_records ||
	    (r->data_bytes / TIER_TRACE_RECORD_MAX_BYTES == r->nr_records &&
	     r->data_bytes % TIER_TRACE_RECORD_MAX_BYTES))
		return tier_err_set(err, -EINVAL, "%s: header is inconsistent: %" PRIu64
				    " records cannot take %" PRIu64 " bytes", name,
				    r->nr_records, r->data_bytes);
	if (r->nr_accesses < r->nr_records || (r->nr_records && !r->footprint_pages))
		return tier_err_set(err, -EINVAL, "%s: header is inconsistent: %" PRIu64
				    " records, %" PRIu64 " accesses, %" PRIu64 " pages", name,
				    r->nr_records, r->nr_accesses, r->footprint_pages);
	if (r->data_bytes > UINT64_MAX - r->header_bytes)
		return tier_err_set(err, -EINVAL, "%s: data size %" PRIu64 " at byte %d is too large",
				    name, r->data_bytes, TIER_TRACE_OFF_DATA_BYTES);
	total_bytes = r->header_bytes + r->data_bytes;
	if (r->file_bytes < total_bytes)
		return tier_err_set(err, -ENODATA, "%s: truncated at byte %" PRIu64
				    ": the header says the trace is %" PRIu64 " bytes", name,
				    r->file_bytes, total_bytes);
	if (r->file_bytes > total_bytes)
		return tier_err_set(err, -EINVAL, "%s: trailing data at byte %" PRIu64
				    ": the header says the trace is %" PRIu64 " bytes", name,
				    total_bytes, total_bytes);
	/* No larger than the data: a small trace needs no 128 KiB. Refills
	 * happen with under one record left, so two records' room suffices. */
	r->buf_bytes = r->data_bytes < READER_BUF_BYTES ? (size_t)r->data_bytes : READER_BUF_BYTES;
	if (r->buf_bytes < 2 * TIER_TRACE_RECORD_MAX_BYTES)
		r->buf_bytes = 2 * TIER_TRACE_RECORD_MAX_BYTES;
	r->buf = malloc(r->buf_bytes);
	if (!r->buf)
		return tier_err_set(err, -ENOMEM, "%s: out of memory", name);
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
	rc = header_parse(r, err);
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
	rc = header_parse(r, err);
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
		     r->name, rec_idx, r->header_bytes + r->buf_data_off + rec_pos, reason);
	if (err)
		*err = r->error_msg;
	return code;
}

/* Moves the undecoded tail to the buffer's start and reads more data. */
static int reader_refill(struct tier_trace_reader *r, struct tier_err *err)
{
	size_t keep = r->len - r->pos, want = r->buf_bytes - keep;
	uint64_t left = r->data_bytes - r->data_read;
	long k;

	memmove(r->buf, r->buf + r->pos, keep);
	r->buf_data_off += r->pos;
	r->pos = 0;
	r->len = keep;
	if (want > r->read_max)
		want = r->read_max;
	if (want > left)
		want = (size_t)left;
	k = source_read(r, r->buf + keep, want, r->header_bytes + r->data_read);
	if (k < 0)
		return reader_fail(r, (int)k, r->rec_idx, 0, err, "read: %s", strerror((int)-k));
	if (k == 0)	/* the file shrank since it was opened */
		return reader_fail(r, -ENODATA, r->rec_idx, keep, err, "truncated: the header says the trace"
				   " is %" PRIu64 " bytes", r->header_bytes + r->data_bytes);
	r->len += (size_t)k;
	r->data_read += (uint64_t)k;
	return 0;
}

enum { DEC_OK, DEC_MORE, DEC_LONG };

/* Decodes a LEB128 varint from [*pp, end). A 64-bit value takes at most
 * 10 bytes, the 10th holding one bit. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	unsigned shift;

	for (shift = 0;; shift += 7) {
		uint8_t b;

		if (p == end)
			return DEC_MORE;
		b = *p++;
		if (shift == 63 && b > 1)
			return DEC_LONG;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	*v = x;
	return DEC_OK;
}

/* Decodes whole records from the buffer into buf until the batch is full,
 * a record repeats (handed out by the caller), or fewer bytes than a whole
 * record remain. Returns 0 or a decoding error. */
static int reader_decode(struct tier_trace_reader *r, struct tier_sim_access *buf, size_t n,
			 size_t *produced, struct tier_err *err)
{
	const uint8_t *base = r->buf, *p = base + r->pos, *end = base + r->len, *rec = p;
	uint64_t page = r->page, footprint = r->footprint_pages;
	uint64_t rec_idx = r->rec_idx, nr_records = r->nr_records;
	uint64_t acc_left = r->nr_accesses - r->nr_done;
	size_t i = *produced;
	uint8_t tenant = r->tenant;
	int rc = 0, dec;

	while (i < n && p < end) {
		uint64_t h, c, count = 1;

		rec = p;
		if (*p < 0x80) {
			h = *p++;
		} else {
			dec = get_varint(&p, end, &h);
			if (dec != DEC_OK)
				goto out_dec;
		}
		if (h & TIER_TRACE_R_TENANT) {
			if (p == end) {
				dec = DEC_MORE;
				goto out_dec;
			}
			if (*p >= r->nr_tenants) {
				rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
						 "tenant %u outside the header's %u", *p, r->nr_tenants);
				goto out;
			}
			tenant = *p++;
		}
		if (h & TIER_TRACE_R_REPEAT) {
			dec = get_varint(&p, end, &c);
			if (dec != DEC_OK)
				goto out_dec;
			if (c > UINT64_MAX - 2) {
				rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err,
						 "repeat count overflows");
				goto out;
			}
			count = c + 2;
		}
		page += unzigzag(h >> TIER_TRACE_R_DELTA_SHIFT);
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
					 "more accesses than the header's %" PRIu64, r->nr_accesses);
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
	if (dec == DEC_LONG) {
		rc = reader_fail(r, -EINVAL, rec_idx, (size_t)(rec - base), err, "varint longer than 64 bits");
	} else if (r->data_read == r->data_bytes) {
		rc = reader_fail(r, -ENODATA, rec_idx, (size_t)(rec - base), err,
				 "truncated: record runs past the end of the data at byte %" PRIu64,
				 r->header_bytes + r->data_bytes);
	}
	/* else: the record continues in data not yet read; the caller refills. */
out:
	/* Commit what was decoded up to the last whole record. */
	if (!rc) {
		r->pos = (size_t)(rec - base);
		r->page = page;
		r->rec_idx = rec_idx;
		r->nr_done = r->nr_accesses - acc_left;
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
		if (r->len - r->pos < TIER_TRACE_RECORD_MAX_BYTES && r->data_read < r->data_bytes) {
			rc = reader_refill(r, err);
			if (rc)
				return rc;
		}
		if (r->pos == r->len) {
			/* All data decoded: it must add up to the header. */
			if (r->rec_idx != r->nr_records)
				return reader_fail(r, -ENODATA, r->rec_idx, r->pos, err, "end of data, the header"
						   " says %" PRIu64 " records", r->nr_records);
			if (r->nr_done != r->nr_accesses)
				return reader_fail(r, -EINVAL, r->rec_idx, r->pos, err, "end of data after %"
						   PRIu64 " accesses, the header says %" PRIu64,
						   r->nr_done, r->nr_accesses);
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
	return r->footprint_pages;
}

uint64_t tier_trace_reader_nr_accesses(const struct tier_trace_reader *r)
{
	return r->nr_accesses;
}

uint64_t tier_trace_reader_nr_records(const struct tier_trace_reader *r)
{
	return r->nr_records;
}

unsigned tier_trace_reader_page_shift(const struct tier_trace_reader *r)
{
	return r->page_shift;
}

unsigned tier_trace_reader_nr_tenants(const struct tier_trace_reader *r)
{
	return r->nr_tenants;
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
