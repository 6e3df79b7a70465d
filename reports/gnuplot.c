#include "reports/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Run gnuplot on a script file; its standard output (the image) is copied into `img` when img is not NULL,
 * else thrown away; its messages go to `errlog` (or nowhere). The exit status, or -1 when it could not start. */
static int run_gnuplot(const char *script, const char *errlog, hs_outfile *img, size_t *bytes)
{
	int fd[2] = {-1, -1};
	if (img && pipe(fd))
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (img) {
		posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
		posix_spawn_file_actions_addclose(&fa, fd[0]);
		posix_spawn_file_actions_addclose(&fa, fd[1]);
	} else {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	}
	posix_spawn_file_actions_addopen(&fa, 2, errlog ? errlog : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char *argv[] = {"gnuplot", (char *)script, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (img)
		close(fd[1]);
	if (rc) {
		if (img)
			close(fd[0]);
		return -1;
	}
	if (img) {
		/* read to the end even when writing fails, so gnuplot never blocks on a full pipe */
		char buf[1 << 15];
		ssize_t got;
		*bytes = 0;
		while ((got = read(fd[0], buf, sizeof buf)) != 0) {
			if (got < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			hs_outfile_write(img, buf, (size_t)got);
			*bytes += (size_t)got;
		}
		close(fd[0]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int hs_gp_init(hs_gp *g, const char *dir, const char *format, hs_err *err)
{
	memset(g, 0, sizeof *g);
	snprintf(g->dir, sizeof g->dir, "%s", dir);
	if (format && strcmp(format, "png") && strcmp(format, "svg"))
		return hs_err_set(err, HS_EINPUT, "--format '%s' (expected png or svg)", format);
	if (hs_outdir_open(&g->out, dir, err) || hs_outdir_mkdir(&g->out, "data", err))
		goto fail;
	/* does this gnuplot have pngcairo? */
	hs_outfile pf;
	if (hs_outdir_file(&g->out, &pf, "data/probe.gp", err))
		goto fail;
	fprintf(pf.f, "set terminal pngcairo\n");
	if (hs_outfile_commit(&pf, err))
		goto fail;
	int rc = run_gnuplot(pf.path, NULL, NULL, NULL);
	remove(pf.path);
	if (rc < 0) {
		hs_err_set(err, HS_EINPUT, "cannot run gnuplot (install gnuplot-nox)");
		goto fail;
	}
	int png = rc == 0 && (!format || strcmp(format, "png") == 0);
	g->ext = png ? "png" : "svg";
	snprintf(g->term, sizeof g->term, png ? "pngcairo enhanced font 'DejaVu Sans,10'"
					      : "svg enhanced font 'DejaVu Sans,10' background '#ffffff'");
	return 0;
fail:
	hs_outdir_abort(&g->out);
	return -1;
}

FILE *hs_gp_data(hs_gp *g, const char *name, char *path, size_t n)
{
	snprintf(path, n, "%s/data/%s.dat", g->dir, name);
	char rel[300];
	snprintf(rel, sizeof rel, "data/%s.dat", name);
	if (g->ndata < HS_GP_MAXDATA && hs_outdir_file(&g->out, &g->data[g->ndata], rel, &g->data_err) == 0) {
		/* written where the script will read it: the data file is renamed into place before gnuplot runs */
		return g->data[g->ndata++].f;
	}
	if (g->ndata >= HS_GP_MAXDATA)
		hs_err_set(&g->data_err, HS_EINTERNAL, "%s: more than %d data files for one plot", path, HS_GP_MAXDATA);
	if (!g->sink && !(g->sink = fopen("/dev/null", "w")))
		abort(); /* no /dev/null: not a system hetsim runs on */
	return g->sink;
}

/* Close (and check) the data files opened since the last plot. */
static int close_data(hs_gp *g, hs_err *err)
{
	int bad = 0;
	for (int i = 0; i < g->ndata; i++)
		bad |= hs_outfile_commit(&g->data[i], err) != 0;
	g->ndata = 0;
	if (g->data_err.code) {
		hs_err_set(err, g->data_err.code, "%s", g->data_err.msg);
		return -1;
	}
	return bad ? -1 : 0;
}

int hs_gp_plot(hs_gp *g, const char *name, int w, int h, const char *script, char *image, size_t n, hs_err *err)
{
	if (close_data(g, err))
		return -1;
	char rel[300], log[1200];
	snprintf(log, sizeof log, "%s/data/%s.log", g->dir, name);
	hs_outfile gp, img;
	snprintf(rel, sizeof rel, "data/%s.gp", name);
	if (hs_outdir_file(&g->out, &gp, rel, err))
		return -1;
	fprintf(gp.f, "set terminal %s size %d,%d\nset datafile separator '\\t'\n"
		   "set datafile missing 'nan'\nset border lw 0.8\nset grid ytics lc rgb '#dddddd'\n%s\n",
		g->term, w, h, script);
	if (hs_outfile_commit(&gp, err))
		return -1;
	snprintf(rel, sizeof rel, "%s.%s", name, g->ext);
	if (hs_outdir_file(&g->out, &img, rel, err))
		return -1;
	size_t bytes = 0;
	int rc = run_gnuplot(gp.path, log, &img, &bytes);
	if (rc != 0 || bytes == 0) {
		hs_outfile_abort(&img);
		if (rc < 0)
			return hs_err_set(err, HS_EINPUT, "cannot run gnuplot (install gnuplot-nox)");
		return hs_err_set(err, HS_EINTERNAL, "gnuplot failed on %s (exit %d; messages in %s)", gp.path, rc, log);
	}
	remove(log);
	if (hs_outfile_commit(&img, err))
		return -1;
	snprintf(image, n, "%s", rel);
	return 0;
}

void hs_gp_add(hs_gp *g, const char *name)
{
	char p[1100];
	snprintf(p, sizeof p, "%s/%s", g->dir, name);
	hs_outdir_add(&g->out, p);
}

static void close_sink(hs_gp *g)
{
	if (g->sink)
		fclose(g->sink);
	g->sink = NULL;
}

void hs_gp_abort(hs_gp *g)
{
	close_sink(g);
	for (int i = 0; i < g->ndata; i++)
		hs_outfile_abort(&g->data[i]);
	g->ndata = 0;
	hs_outdir_abort(&g->out);
}

int hs_gp_done(hs_gp *g, hs_err *err)
{
	close_sink(g);
	if (close_data(g, err)) {
		hs_gp_abort(g);
		return -1;
	}
	hs_outdir_close(&g->out);
	return 0;
}
