/* trace.h - tiersim's binary access trace: format constants, a buffered
 * writer and a streaming reader.
 *
 * A trace is a 64-byte header followed by page-granular records, each a
 * page delta, a read/write bit and an optional repeat count, varint-coded
 * (docs/trace-format.md has the byte-level layout). The reader decodes into
 * arrays of struct tier_sim_access through one buffer of at most 128 KiB,
 * so memory stays bounded whatever the trace's length, and validates as it goes: a
 * page outside the footprint, a truncated record or counts that disagree
 * with the header give one error naming the file, the record and its byte
 * offset.
 */
#ifndef TIER_SIM_TRACE_H
#define TIER_SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/sim/access.h"
#include "core/err.h"

/* Format constants (see docs/trace-format.md). All integers little-endian. */
#define TIER_TRACE_MAGIC		"TIERTRC\n"	/* 8 bytes, no NUL */
#define TIER_TRACE_MAGIC_BYTES		8
#define TIER_TRACE_VERSION		1
#define TIER_TRACE_HEADER_BYTES		64	/* version 1 writes this size */
#define TIER_TRACE_HEADER_MAX_BYTES	4096	/* larger header_bytes is corrupt */

/* Header field offsets. */
#define TIER_TRACE_OFF_VERSION		8	/* u16 */
#define TIER_TRACE_OFF_HEADER_BYTES	10	/* u16 */
#define TIER_TRACE_OFF_PAGE_SHIFT	12	/* u8 */
#define TIER_TRACE_OFF_RESERVED0	13	/* u8, zero */
#define TIER_TRACE_OFF_NR_TENANTS	14	/* u16, 1..256 */
#define TIER_TRACE_OFF_FLAGS		16	/* u32 */
#define TIER_TRACE_OFF_RESERVED1	20	/* u32, zero */
#define TIER_TRACE_OFF_FOOTPRINT_PAGES	24	/* u64 */
#define TIER_TRACE_OFF_NR_RECORDS	32	/* u64 */
#define TIER_TRACE_OFF_NR_ACCESSES	40	/* u64 */
#define TIER_TRACE_OFF_DATA_BYTES	48	/* u64 */
#define TIER_TRACE_OFF_RESERVED2	56	/* u64, zero */

/* Header flags. */
#define TIER_TRACE_F_COMPLETE		(1u << 0)	/* writer finished */
#define TIER_TRACE_F_KNOWN		TIER_TRACE_F_COMPLETE

/* Record head bits: head = zigzag(page - prev_page) << 3 | bits. */
#define TIER_TRACE_R_WRITE		(1u << 0)	/* store */
#define TIER_TRACE_R_REPEAT		(1u << 1)	/* varint count - 2 follows */
#define TIER_TRACE_R_TENANT		(1u << 2)	/* u8 tenant follows the head */
#define TIER_TRACE_R_DELTA_SHIFT	3

/* Longest record: 10-byte head, tenant byte, 10-byte count. */
#define TIER_TRACE_RECORD_MAX_BYTES	21

#define TIER_TRACE_PAGE_SHIFT_MIN	12
#define TIER_TRACE_PAGE_SHIFT_MAX	30
/* Page ids are below 2^52 (a 64-bit address space of 4 KiB pages). */
#define TIER_TRACE_MAX_PAGES		(UINT64_C(1) << 52)

/* ---- writer ------------------------------------------------------------ */

struct tier_trace_writer;

/* Creates (or truncates) the trace at path for pages of 2^page_shift bytes
 * and writes a provisional header (not marked complete). Returns 0 and
 * *out, -EINVAL (page_shift outside [12, 30]), -ENOMEM or the -errno of
 * open/write; err names path and cause. */
int tier_trace_writer_new(const char *path, unsigned page_shift,
			  struct tier_trace_writer **out, struct tier_err *err);

/* Tenant of the accesses added from now on (0 at start). */
void tier_trace_writer_set_tenant(struct tier_trace_writer *w, uint8_t tenant);

/* Appends count (>= 1) accesses to page by the current tenant; write is 1
 * for a store. Consecutive adds of the same page, kind and tenant merge into
 * one repeat record. Returns 0, -EINVAL (count 0), -ERANGE (page >=
 * TIER_TRACE_MAX_PAGES) or the -errno of a failed write; the first failure
 * sticks and _finish reports it with a message. */
int tier_trace_writer_add(struct tier_trace_writer *w, uint64_t page, bool write,
			  uint64_t count);

/* Flushes, fills in the header (footprint = highest page + 1, counts, data
 * size), marks it complete and closes the file. Returns 0 or -errno with
 * err set. The writer must still be destroyed. */
int tier_trace_writer_finish(struct tier_trace_writer *w, struct tier_err *err);

/* Counters so far (records after merging, accesses, highest page + 1). */
uint64_t tier_trace_writer_nr_records(const struct tier_trace_writer *w);
uint64_t tier_trace_writer_nr_accesses(const struct tier_trace_writer *w);
uint64_t tier_trace_writer_footprint_pages(const struct tier_trace_writer *w);

/* Frees w. A trace that was not finished successfully is removed, so an
 * interrupted conversion leaves no half file behind. NULL is a no-op. */
void tier_trace_writer_destroy(struct tier_trace_writer *w);

/* ---- reader ------------------------------------------------------------ */

struct tier_trace_reader;

/* Opens the trace at path (a regular file) and validates its header.
 * Returns 0 and *out, or -errno with err "PATH: reason": -ENOENT and other
 * open errors, -EINVAL (not a trace, bad header), -EPROTONOSUPPORT (newer
 * version), -ENODATA (truncated: file shorter than the header says). */
int tier_trace_reader_open(const char *path, struct tier_trace_reader **out,
			   struct tier_err *err);

/* Same over sz_bytes of memory at data, which must outlive the reader;
 * name stands for the file in messages. */
int tier_trace_reader_open_mem(const void *data, size_t sz_bytes, const char *name,
			       struct tier_trace_reader **out, struct tier_err *err);

/* Decodes up to n (> 0) accesses into buf, expanding repeat counts. Returns the
 * number produced (< n only at the end), 0 at the end of the trace, or
 * -errno on corrupt or truncated data (-EINVAL, -ENODATA, -EIO) with err
 * "NAME: record N at byte B: reason" (N counts from 0, B from the file's
 * start); the batch is then void. Errors stick: later calls repeat them. */
long tier_trace_reader_next(struct tier_trace_reader *r, struct tier_sim_access *buf,
			    size_t n, struct tier_err *err);

/* Header figures. Every page the reader returns is < footprint_pages. */
uint64_t tier_trace_reader_footprint_pages(const struct tier_trace_reader *r);
uint64_t tier_trace_reader_nr_accesses(const struct tier_trace_reader *r);
uint64_t tier_trace_reader_nr_records(const struct tier_trace_reader *r);
unsigned tier_trace_reader_page_shift(const struct tier_trace_reader *r);
unsigned tier_trace_reader_nr_tenants(const struct tier_trace_reader *r);

/* Starts again from the first record (also clears a stuck error).
 * Returns 0 (reads use pread, so nothing can fail today). */
int tier_trace_reader_rewind(struct tier_trace_reader *r);

/* Closes and frees r. NULL is a no-op. */
void tier_trace_reader_destroy(struct tier_trace_reader *r);

/* Test hook: caps each refill of the reader's buffer at max_bytes (>= 1),
 * as short reads would, to exercise records split across refills. */
void tier__trace_reader_set_read_max(struct tier_trace_reader *r, size_t max_bytes);

#endif
