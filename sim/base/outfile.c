#include "sim/base/outfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void hs_outfile_tmpname(const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s.tmp.%ld", path, (long)getpid());
}

int hs_outfile_open(hs_outfile *o, const char *path, hs_err *err)
{
	memset(o, 0, sizeof *o);
	snprintf(o->path, sizeof o->path, "%s", path);
	hs_outfile_tmpname(path, o->tmp, sizeof o->tmp);
	o->f = fopen(o->tmp, "w");
	if (!o->f)
		return hs_err_set(err, HS_EINPUT, "%s: cannot write: %s", path, strerror(errno));
	return 0;
}

int hs_outfile_rename(const char *tmp, const char *path, hs_err *err)
{
	if (rename(tmp, path)) {
		int e = errno;
		remove(tmp);
		return hs_err_set(err, HS_EINPUT, "%s: cannot rename the finished file into place: %s", path,
				  strerror(e));
	}
	return 0;
}

int hs_outfile_commit(hs_outfile *o, hs_err *err)
{
	if (!o->f)
		return hs_err_set(err, HS_EINTERNAL, "%s: committed twice", o->path);
	int bad = fflush(o->f) != 0 || ferror(o->f);
	int e = errno;
	bad |= fclose(o->f) != 0;
	o->f = NULL;
	if (bad) {
		remove(o->tmp);
		return hs_err_set(err, HS_EINPUT, "%s: write failed: %s", o->path, strerror(e));
	}
	return hs_outfile_rename(o->tmp, o->path, err);
}

void hs_outfile_abort(hs_outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		remove(o->tmp);
	}
}
