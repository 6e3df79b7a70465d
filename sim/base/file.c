#include "sim/base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/alloc.h"

char *hs_read_file(const char *path, size_t max, const char *what, size_t *len, hs_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 14, n = 0;
	char *buf = hs_xmalloc(cap + 1);
	for (;;) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		if (cap >= max) {
			fclose(f);
			free(buf);
			hs_err_set(err, HS_EINPUT, "%s: larger than %zu MiB; not %s", path, max >> 20, what);
			return NULL;
		}
		cap *= 2;
		buf = hs_xrealloc(buf, cap + 1);
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		hs_err_set(err, HS_EINPUT, "%s: read error", path);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}
