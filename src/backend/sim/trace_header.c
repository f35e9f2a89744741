/* trace_header.c - the trace's 64-byte header (docs/trace-format.md):
 * encoding for the writer, and decoding with every check the reader makes
 * before it trusts the header's figures.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "backend/sim/trace_impl.h"

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

/* ---- encoding ---------------------------------------------------------- */

void tier__trace_header_encode(uint8_t h[TIER_TRACE_HEADER_BYTES],
			       const struct tier__trace_header *hd)
{
	memset(h, 0, TIER_TRACE_HEADER_BYTES);
	memcpy(h, TIER_TRACE_MAGIC, TIER_TRACE_MAGIC_BYTES);
	put_le16(h + TIER_TRACE_OFF_VERSION, TIER_TRACE_VERSION);
	put_le16(h + TIER_TRACE_OFF_HEADER_BYTES, TIER_TRACE_HEADER_BYTES);
	h[TIER_TRACE_OFF_PAGE_SHIFT] = (uint8_t)hd->page_shift;
	put_le16(h + TIER_TRACE_OFF_NR_TENANTS, (uint16_t)hd->nr_tenants);
	put_le32(h + TIER_TRACE_OFF_FLAGS, hd->flags);
	put_le64(h + TIER_TRACE_OFF_FOOTPRINT_PAGES, hd->footprint_pages);
	put_le64(h + TIER_TRACE_OFF_NR_RECORDS, hd->nr_records);
	put_le64(h + TIER_TRACE_OFF_NR_ACCESSES, hd->nr_accesses);
	put_le64(h + TIER_TRACE_OFF_DATA_BYTES, hd->data_bytes);
}

/* ---- decoding ---------------------------------------------------------- */

/* The fixed fields, each against its own range: magic, version, header
 * size, page shift, reserved bytes, tenants, flags. */
static int decode_fields(const uint8_t *h, size_t got, const char *name,
			 struct tier__trace_header *hd, struct tier_err *err)
{
	unsigned version;

	if (!got)
		return tier_err_set(err, -EINVAL, "%s: empty file, not a tierd trace", name);
	if (memcmp(h, TIER_TRACE_MAGIC, got < TIER_TRACE_MAGIC_BYTES ? got : TIER_TRACE_MAGIC_BYTES))
		return tier_err_set(err, -EINVAL, "%s: bad magic at byte 0, not a tierd trace", name);
	if (got < TIER_TRACE_HEADER_BYTES)
		return tier_err_set(err, -ENODATA, "%s: truncated at byte %zu: the header is %d bytes",
				    name, got, TIER_TRACE_HEADER_BYTES);
	version = get_le16(h + TIER_TRACE_OFF_VERSION);
	if (version != TIER_TRACE_VERSION)
		return tier_err_set(err, -EPROTONOSUPPORT,
				    "%s: trace version %u at byte %d, this build reads version %d",
				    name, version, TIER_TRACE_OFF_VERSION, TIER_TRACE_VERSION);
	hd->header_bytes = get_le16(h + TIER_TRACE_OFF_HEADER_BYTES);
	if (hd->header_bytes < TIER_TRACE_HEADER_BYTES || hd->header_bytes > TIER_TRACE_HEADER_MAX_BYTES)
		return tier_err_set(err, -EINVAL, "%s: header size %u at byte %d outside [%d, %d]",
				    name, hd->header_bytes, TIER_TRACE_OFF_HEADER_BYTES,
				    TIER_TRACE_HEADER_BYTES, TIER_TRACE_HEADER_MAX_BYTES);
	hd->page_shift = h[TIER_TRACE_OFF_PAGE_SHIFT];
	if (hd->page_shift < TIER_TRACE_PAGE_SHIFT_MIN || hd->page_shift > TIER_TRACE_PAGE_SHIFT_MAX)
		return tier_err_set(err, -EINVAL, "%s: page shift %u at byte %d outside [%d, %d]",
				    name, hd->page_shift, TIER_TRACE_OFF_PAGE_SHIFT,
				    TIER_TRACE_PAGE_SHIFT_MIN, TIER_TRACE_PAGE_SHIFT_MAX);
	if (h[TIER_TRACE_OFF_RESERVED0] || get_le32(h + TIER_TRACE_OFF_RESERVED1) ||
	    get_le64(h + TIER_TRACE_OFF_RESERVED2))
		return tier_err_set(err, -EINVAL, "%s: reserved header bytes are not zero", name);
	hd->nr_tenants = get_le16(h + TIER_TRACE_OFF_NR_TENANTS);
	if (hd->nr_tenants < 1 || hd->nr_tenants > 256)
		return tier_err_set(err, -EINVAL, "%s: tenant count %u at byte %d outside [1, 256]",
				    name, hd->nr_tenants, TIER_TRACE_OFF_NR_TENANTS);
	hd->flags = get_le32(h + TIER_TRACE_OFF_FLAGS);
	if (hd->flags & ~TIER_TRACE_F_KNOWN)
		return tier_err_set(err, -EINVAL, "%s: unknown flags 0x%x at byte %d", name,
				    hd->flags & ~TIER_TRACE_F_KNOWN, TIER_TRACE_OFF_FLAGS);
	if (!(hd->flags & TIER_TRACE_F_COMPLETE))
		return tier_err_set(err, -EINVAL,
				    "%s: incomplete trace: its writer did not finish", name);
	return 0;
}

/* The counts, against each other and against the file's size. */
static int check_counts(const struct tier__trace_header *hd, uint64_t file_bytes,
			const char *name, struct tier_err *err)
{
	uint64_t total_bytes;

	if (hd->footprint_pages > TIER_TRACE_MAX_PAGES)
		return tier_err_set(err, -EINVAL, "%s: footprint of %" PRIu64 " pages at byte %d"
				    " exceeds 2^52", name, hd->footprint_pages,
				    TIER_TRACE_OFF_FOOTPRINT_PAGES);
	/* Each record takes 1 to TIER_TRACE_RECORD_MAX_BYTES bytes and stands
	 * for at least one access of a page inside the footprint. */
	if (hd->nr_records > hd->data_bytes ||
	    hd->data_bytes / TIER_TRACE_RECORD_MAX_BYTES > hd->nr_records ||
	    (hd->data_bytes / TIER_TRACE_RECORD_MAX_BYTES == hd->nr_records &&
	     hd->data_bytes % TIER_TRACE_RECORD_MAX_BYTES))
		return tier_err_set(err, -EINVAL, "%s: header is inconsistent: %" PRIu64
				    " records cannot take %" PRIu64 " bytes", name,
				    hd->nr_records, hd->data_bytes);
	if (hd->nr_accesses < hd->nr_records || (hd->nr_records && !hd->footprint_pages))
		return tier_err_set(err, -EINVAL, "%s: header is inconsistent: %" PRIu64
				    " records, %" PRIu64 " accesses, %" PRIu64 " pages", name,
				    hd->nr_records, hd->nr_accesses, hd->footprint_pages);
	if (hd->data_bytes > UINT64_MAX - hd->header_bytes)
		return tier_err_set(err, -EINVAL, "%s: data size %" PRIu64 " at byte %d is too large",
				    name, hd->data_bytes, TIER_TRACE_OFF_DATA_BYTES);
	total_bytes = hd->header_bytes + hd->data_bytes;
	if (file_bytes < total_bytes)
		return tier_err_set(err, -ENODATA, "%s: truncated at byte %" PRIu64
				    ": the header says the trace is %" PRIu64 " bytes", name,
				    file_bytes, total_bytes);
	if (file_bytes > total_bytes)
		return tier_err_set(err, -EINVAL, "%s: trailing data at byte %" PRIu64
				    ": the header says the trace is %" PRIu64 " bytes", name,
				    total_bytes, total_bytes);
	return 0;
}

int tier__trace_header_decode(const uint8_t *h, size_t got, uint64_t file_bytes,
			      const char *name, struct tier__trace_header *hd,
			      struct tier_err *err)
{
	int rc;

	rc = decode_fields(h, got, name, hd, err);
	if (rc)
		return rc;
	hd->footprint_pages = get_le64(h + TIER_TRACE_OFF_FOOTPRINT_PAGES);
	hd->nr_records = get_le64(h + TIER_TRACE_OFF_NR_RECORDS);
	hd->nr_accesses = get_le64(h + TIER_TRACE_OFF_NR_ACCESSES);
	hd->data_bytes = get_le64(h + TIER_TRACE_OFF_DATA_BYTES);
	return check_counts(hd, file_bytes, name, err);
}
