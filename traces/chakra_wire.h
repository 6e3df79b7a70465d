/* hs_pb: the protocol-buffers wire format, the part the Chakra execution trace needs (traces/chakra_read.c,
 * traces/chakra_write.c): varints, fixed 32/64-bit fields and length-delimited fields, and the stream framing
 * of an ET file (each message preceded by its length as a varint, as Chakra's protolib encodeMessage writes it).
 *
 * Our own reader and writer rather than protobuf-c: an ET holds millions of small Node messages, and
 * protobuf-c's unpack allocates every message and its repeated fields (a malloc per node and per attribute);
 * a bad file must be reported at its byte offset (a truncated message, a varint that runs on), which
 * protobuf-c's unpack returns only as NULL; and the schema subset is a dozen fields, which needs no code
 * generator in the build. The wire format is Google's "Encoding" page
 * (https://protobuf.dev/programming-guides/encoding/). */
#ifndef HS_CHAKRA_WIRE_H
#define HS_CHAKRA_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum { HS_PB_VARINT = 0, HS_PB_I64 = 1, HS_PB_LEN = 2, HS_PB_I32 = 5 };

/* A read cursor over bytes [p, end); `at(c)` is the offset in the file of the next byte. */
typedef struct hs_pb {
	const uint8_t *p, *end, *file;
	const char *why; /* after a -1: what was wrong */
} hs_pb;

typedef struct hs_pb_field {
	uint32_t num;
	int wire;
	uint64_t v;           /* VARINT, I64, I32 */
	const uint8_t *data;  /* LEN */
	size_t len;
} hs_pb_field;

static inline size_t hs_pb_at(const hs_pb *c) { return (size_t)(c->p - c->file); }

/* One varint: 0, or -1 (c->why) when it runs past the end or past 10 bytes. */
int hs_pb_varint(hs_pb *c, uint64_t *v);
/* The next field of a message: 1, 0 at the end, -1 (c->why) on a malformed field. */
int hs_pb_next(hs_pb *c, hs_pb_field *f);
/* A sub-cursor over a LEN field's bytes. */
hs_pb hs_pb_sub(const hs_pb *c, const hs_pb_field *f);

/* A growable output buffer. */
typedef struct hs_pbw {
	uint8_t *p;
	size_t n, cap;
} hs_pbw;

void hs_pbw_varint(hs_pbw *w, uint64_t v);
void hs_pbw_uint(hs_pbw *w, uint32_t num, uint64_t v);     /* a VARINT field */
void hs_pbw_double(hs_pbw *w, uint32_t num, double v);     /* an I64 field */
void hs_pbw_bytes(hs_pbw *w, uint32_t num, const void *data, size_t len); /* a LEN field */
void hs_pbw_str(hs_pbw *w, uint32_t num, const char *s);
/* msg's bytes, preceded by their length: one message of an ET stream */
void hs_pbw_delimited(hs_pbw *w, const hs_pbw *msg);
void hs_pbw_clear(hs_pbw *w);
void hs_pbw_free(hs_pbw *w);

#endif
