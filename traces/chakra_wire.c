/* The protocol-buffers wire format (traces/chakra_wire.h). */
#include "traces/chakra_wire.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

int hs_pb_varint(hs_pb *c, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (c->p >= c->end) {
			c->why = "a varint runs past the end of its message";
			return -1;
		}
		uint8_t b = *c->p++;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	c->why = "a varint runs past 10 bytes";
	return -1;
}

int hs_pb_next(hs_pb *c, hs_pb_field *f)
{
	if (c->p >= c->end)
		return 0;
	uint64_t key;
	if (hs_pb_varint(c, &key))
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	/* every member defined whatever the wire type: a reader that takes a field by number alone (a name sent as
	 * a varint) sees no bytes, never a previous field's pointer (fuzz_chakra found one from a freed input) */
	f->data = NULL;
	f->len = 0;
	f->v = 0;
	if (f->num == 0 || key >> 32) {
		c->why = "a field number outside 1 to 2^29 - 1";
		return -1;
	}
	switch (f->wire) {
	case HS_PB_VARINT:
		return hs_pb_varint(c, &f->v) ? -1 : 1;
	case HS_PB_I64:
	case HS_PB_I32: {
		size_t n = f->wire == HS_PB_I64 ? 8 : 4;
		if ((size_t)(c->end - c->p) < n) {
			c->why = "a fixed-width field runs past the end of its message";
			return -1;
		}
		f->v = 0;
		for (size_t i = 0; i < n; i++)
			f->v |= (uint64_t)c->p[i] << (8 * i); /* little-endian on the wire */
		c->p += n;
		return 1;
	}
	case HS_PB_LEN: {
		uint64_t n;
		if (hs_pb_varint(c, &n))
			return -1;
		if (n > (uint64_t)(c->end - c->p)) {
			c->why = "a length-delimited field is longer than what is left of its message";
			return -1;
		}
		f->data = c->p;
		f->len = (size_t)n;
		c->p += n;
		return 1;
	}
	default:
		c->why = "a wire type other than 0, 1, 2 or 5 (groups are not part of the Chakra schema)";
		return -1;
	}
}

hs_pb hs_pb_sub(const hs_pb *c, const hs_pb_field *f)
{
	return (hs_pb){.p = f->data, .end = f->data + f->len, .file = c->file};
}

static void put(hs_pbw *w, const void *d, size_t n)
{
	hs_xgrow(&w->p, &w->cap, w->n + n, 1);
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

void hs_pbw_varint(hs_pbw *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	put(w, b, n);
}

void hs_pbw_uint(hs_pbw *w, uint32_t num, uint64_t v)
{
	hs_pbw_varint(w, (uint64_t)num << 3 | HS_PB_VARINT);
	hs_pbw_varint(w, v);
}

void hs_pbw_double(hs_pbw *w, uint32_t num, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	hs_pbw_varint(w, (uint64_t)num << 3 | HS_PB_I64);
	put(w, b, 8);
}

void hs_pbw_bytes(hs_pbw *w, uint32_t num, const void *data, size_t len)
{
	hs_pbw_varint(w, (uint64_t)num << 3 | HS_PB_LEN);
	hs_pbw_varint(w, len);
	if (len)
		put(w, data, len);
}

void hs_pbw_str(hs_pbw *w, uint32_t num, const char *s) { hs_pbw_bytes(w, num, s, strlen(s)); }

void hs_pbw_delimited(hs_pbw *w, const hs_pbw *msg)
{
	hs_pbw_varint(w, msg->n);
	if (msg->n)
		put(w, msg->p, msg->n);
}

void hs_pbw_clear(hs_pbw *w) { w->n = 0; }

void hs_pbw_free(hs_pbw *w)
{
	free(w->p);
	memset(w, 0, sizeof *w);
}
