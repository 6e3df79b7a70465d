#include "sim/base/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/alloc.h"

void hs_outfile_tmpname(const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s.tmp.%ld", path, (long)getpid());
}

/* The temporaries of the files open now, so that a process that exits before committing them (out of memory
 * is exit(1) from deep inside, sim/base/alloc.c) removes them at exit instead of leaving "<path>.tmp.<pid>"
 * behind. Static storage: registering must not allocate. Past MAXOPEN open files the extra ones are not
 * registered (no run keeps that many open). */
enum { MAXOPEN = 16 };
static char open_tmp[MAXOPEN][1100];
static int cleanup_set;

static void remove_open_tmps(void)
{
	for (int i = 0; i < MAXOPEN; i++)
		if (open_tmp[i][0])
			remove(open_tmp[i]);
}

static void track(const char *tmp)
{
	if (!cleanup_set)
		cleanup_set = atexit(remove_open_tmps) == 0;
	for (int i = 0; i < MAXOPEN; i++)
		if (!open_tmp[i][0]) {
			snprintf(open_tmp[i], sizeof open_tmp[i], "%s", tmp);
			return;
		}
}

static void untrack(const char *tmp)
{
	for (int i = 0; i < MAXOPEN; i++)
		if (strcmp(open_tmp[i], tmp) == 0) {
			open_tmp[i][0] = 0;
			return;
		}
}

int hs_outfile_open(hs_outfile *o, const char *path, hs_err *err)
{
	memset(o, 0, sizeof *o);
	snprintf(o->path, sizeof o->path, "%s", path);
	hs_outfile_tmpname(path, o->tmp, sizeof o->tmp);
	o->f = fopen(o->tmp, "w");
	if (!o->f)
		return hs_err_set(err, HS_EINPUT, "%s: cannot write: %s", path, strerror(errno));
	track(o->tmp);
	return 0;
}

int hs_outfile_write(hs_outfile *o, const void *buf, size_t n)
{
	if (!o->f)
		return -1;
	errno = 0;
	if (n && fwrite(buf, 1, n, o->f) != n) {
		if (!o->werr)
			o->werr = errno ? errno : EIO;
		return -1;
	}
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
	/* the errno of the first call that failed: an earlier write, the flush, or the close */
	int e = o->werr;
	errno = 0;
	if (fflush(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	if (ferror(o->f) && !e)
		e = errno ? errno : EIO;
	errno = 0;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	untrack(o->tmp);
	if (e) {
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
		untrack(o->tmp);
	}
}

static int make_dir(hs_outdir *d, const char *path, hs_err *err)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return hs_err_set(err, HS_EINPUT, "%s: exists and is not a folder", path);
		return 0;
	}
	if (mkdir(path, 0755))
		return hs_err_set(err, HS_EINPUT, "%s: cannot create the folder: %s", path, strerror(errno));
	if (d->nmade < HS_OUTDIR_MAXDIRS)
		snprintf(d->made[d->nmade++], sizeof d->made[0], "%s", path);
	return 0;
}

int hs_outdir_open(hs_outdir *d, const char *path, hs_err *err)
{
	memset(d, 0, sizeof *d);
	snprintf(d->path, sizeof d->path, "%s", path);
	return make_dir(d, path, err);
}

int hs_outdir_mkdir(hs_outdir *d, const char *sub, hs_err *err)
{
	char p[1100];
	snprintf(p, sizeof p, "%s/%s", d->path, sub);
	return make_dir(d, p, err);
}

void hs_outdir_add(hs_outdir *d, const char *file)
{
	for (size_t i = 0; i < d->nfiles; i++)
		if (strcmp(d->files[i], file) == 0)
			return;
	hs_xgrow(&d->files, &d->capfiles, d->nfiles + 1, sizeof *d->files);
	d->files[d->nfiles++] = hs_xstrdup(file);
}

int hs_outdir_file(hs_outdir *d, hs_outfile *o, const char *name, hs_err *err)
{
	char p[1100];
	snprintf(p, sizeof p, "%s/%s", d->path, name);
	if (hs_outfile_open(o, p, err))
		return -1;
	hs_outdir_add(d, p);
	return 0;
}

static void forget(hs_outdir *d, int remove_them)
{
	for (size_t i = 0; i < d->nfiles; i++) {
		if (remove_them)
			remove(d->files[i]);
		free(d->files[i]);
	}
	free(d->files);
	d->files = NULL;
	d->nfiles = d->capfiles = 0;
	if (remove_them)
		for (int i = d->nmade - 1; i >= 0; i--)
			rmdir(d->made[i]); /* fails, and keeps the folder, when something else is inside */
	d->nmade = 0;
}

void hs_outdir_abort(hs_outdir *d) { forget(d, 1); }
void hs_outdir_close(hs_outdir *d) { forget(d, 0); }
