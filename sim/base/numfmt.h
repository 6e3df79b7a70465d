/* hs_fmt_6g: a double as printf's "%.6g" writes it, byte for byte, without printf where the digits can be had
 * exactly from one extended-precision product (a sweep's rows are 14 such numbers, and glibc's %g, which
 * works in multi-precision, was a tenth of a point's instructions outside its step). */
#ifndef HS_NUMFMT_H
#define HS_NUMFMT_H

#include <stddef.h>

/* Write v into buf (at least 32 bytes) as snprintf(buf, n, "%.6g", v) would; returns the length. */
size_t hs_fmt_6g(char *buf, double v);

#endif
