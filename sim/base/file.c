#include "sim/base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "sim/base/alloc.h"

static int not_regular(const char *path, const char *what, mode_t m, hs_err *err)
{
	const char *is = S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) || S_ISBLK(m) ? "a device"
			 : S_ISSOCK(m) ? "a socket" : "not a regular file";
	return hs_err_set(err, HS_EINPUT, "%s: is %s, not %s", path, is, what);
}

int hs_file_check(const char *path, const char *what, hs_err *err)
{
	struct stat st;
	if (stat(path, &st))
		return hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return not_regular(path, what, st.st_mode, err);
	if (access(path, R_OK))
		return hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
	return 0;
}

FILE *hs_file_open(const char *path, const char *what, hs_err *err)
{
	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused just below */
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		not_regular(path, what, st.st_mode, err);
		close(fd);
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		hs_err_set(err, HS_EINPUT, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

int hs_file_head(const char *path, const char *what, unsigned char *buf, size_t n, size_t *got, hs_err *err)
{
	FILE *f = hs_file_open(path, what, err);
	if (!f)
		return -1;
	*got = fread(buf, 1, n, f);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return hs_err_set(err, HS_EINPUT, "%s: read error", path);
	return 0;
}

char *hs_read_file(const char *path, size_t max, const char *what, size_t *len, hs_err *err)
{
	FILE *f = hs_file_open(path, what, err);
	if (!f)
		return NULL;
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
