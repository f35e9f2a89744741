/* trace_impl.h - what the trace's writer and reader share (internal: the
 * contracts callers see are in trace.h; the byte layout is in
 * docs/trace-format.md):
 *   trace_header.c  the 64-byte header: encoding, and decoding with every
 *                   check a reader makes before the first record
 *   trace_write.c   the buffered writer
 *   trace_read.c    the streaming reader and its record decoder
 * The record coding (zigzag deltas, LEB128 varints) is here, inline, as
 * the writer and the decoder's inner loops use it.
 * Not for use outside src/backend/sim/trace*.c.
 */
#ifndef TIER_SIM_TRACE_IMPL_H
#define TIER_SIM_TRACE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/sim/trace.h"
#include "core/err.h"

/* ---- record coding ----------------------------------------------------- */

/* Zigzag maps small signed deltas to small unsigned ones: 0,-1,1,-2 -> 0,1,2,3. */
static inline uint64_t trace_zigzag(uint64_t delta)
{
	return (delta << 1) ^ (0 - (delta >> 63));
}

static inline uint64_t trace_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* LEB128: 7 bits a byte, low first, high bit = more follows. Writes at most
 * 10 bytes at p; returns how many. */
static inline size_t trace_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* trace_get_varint() results. */
enum {
	TRACE_DEC_OK,	/* decoded, *pp moved past it */
	TRACE_DEC_MORE,	/* the varint runs past end */
	TRACE_DEC_LONG,	/* longer than 64 bits: corrupt */
};

/* Decodes a LEB128 varint from [*pp, end). A 64-bit value takes at most
 * 10 bytes, the 10th holding one bit. */
static inline int trace_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	unsigned shift;

	for (shift = 0;; shift += 7) {
		uint8_t b;

		if (p == end)
			return TRACE_DEC_MORE;
		b = *p++;
		if (shift == 63 && b > 1)
			return TRACE_DEC_LONG;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	*v = x;
	return TRACE_DEC_OK;
}

/* ---- trace_header.c: the header ---------------------------------------- */

/* The header's fields (version and reserved bytes aside). */
struct tier__trace_header {
	unsigned header_bytes;	/* as read; encoding writes TIER_TRACE_HEADER_BYTES */
	unsigned page_shift;
	unsigned nr_tenants;
	uint32_t flags;		/* TIER_TRACE_F_* */
	uint64_t footprint_pages;
	uint64_t nr_records;
	uint64_t nr_accesses;
	uint64_t data_bytes;
};

/* Writes hd as a version-1 header of TIER_TRACE_HEADER_BYTES into h. */
void tier__trace_header_encode(uint8_t h[TIER_TRACE_HEADER_BYTES],
			       const struct tier__trace_header *hd);

/* Decodes the got (<= TIER_TRACE_HEADER_BYTES) bytes at h, the start of
 * the trace called name whose whole size is file_bytes, into *hd, checking
 * the magic, the version, each field's range, that the counts agree with
 * each other and that the file is as long as the header says. Returns 0,
 * or -errno with err "NAME: reason" (as tier_trace_reader_open()). */
int tier__trace_header_decode(const uint8_t *h, size_t got, uint64_t file_bytes,
			      const char *name, struct tier__trace_header *hd,
			      struct tier_err *err);

#endif
