#include "reports/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Run gnuplot on a script file, its output thrown away; the exit status, or -1 when it could not start. */
static int run_gnuplot(const char *script, const char *errlog)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errlog ? errlog : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char *argv[] = {"gnuplot", (char *)script, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
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
	char data[1100];
	snprintf(data, sizeof data, "%s/data", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(data, 0755) && errno != EEXIST))
		return hs_err_set(err, HS_EINPUT, "%s: cannot create the report folder: %s", dir, strerror(errno));
	/* does this gnuplot have pngcairo? */
	char probe[1200];
	snprintf(probe, sizeof probe, "%s/data/probe.gp", dir);
	FILE *f = fopen(probe, "w");
	if (!f)
		return hs_err_set(err, HS_EINPUT, "%s: cannot write: %s", probe, strerror(errno));
	fprintf(f, "set terminal pngcairo\n");
	fclose(f);
	int rc = run_gnuplot(probe, NULL);
	remove(probe);
	if (rc < 0)
		return hs_err_set(err, HS_EINPUT, "cannot run gnuplot (install gnuplot-nox)");
	int png = rc == 0 && (!format || strcmp(format, "png") == 0);
	if (format && strcmp(format, "png") && strcmp(format, "svg"))
		return hs_err_set(err, HS_EINPUT, "--format '%s' (expected png or svg)", format);
	g->ext = png ? "png" : "svg";
	snprintf(g->term, sizeof g->term, png ? "pngcairo enhanced font 'DejaVu Sans,10'"
					      : "svg enhanced font 'DejaVu Sans,10' background '#ffffff'");
	return 0;
}

FILE *hs_gp_data(hs_gp *g, const char *name, char *path, size_t n)
{
	snprintf(path, n, "%s/data/%s.dat", g->dir, name);
	return fopen(path, "w");
}

int hs_gp_plot(hs_gp *g, const char *name, int w, int h, const char *script, char *image, size_t n, hs_err *err)
{
	char gp[1200], out[1200], tmp[1300], log[1200];
	snprintf(gp, sizeof gp, "%s/data/%s.gp", g->dir, name);
	snprintf(out, sizeof out, "%s/%s.%s", g->dir, name, g->ext);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
	snprintf(log, sizeof log, "%s/data/%s.log", g->dir, name);
	FILE *f = fopen(gp, "w");
	if (!f)
		return hs_err_set(err, HS_EINPUT, "%s: cannot write: %s", gp, strerror(errno));
	fprintf(f, "set terminal %s size %d,%d\nset output '%s'\nset datafile separator '\\t'\n"
		   "set datafile missing 'nan'\nset border lw 0.8\nset grid ytics lc rgb '#dddddd'\n%s\nunset output\n",
		g->term, w, h, tmp, script);
	fclose(f);
	int rc = run_gnuplot(gp, log);
	struct stat st;
	if (rc != 0 || stat(tmp, &st) || st.st_size == 0) {
		remove(tmp);
		return hs_err_set(err, HS_EINTERNAL, "gnuplot failed on %s (exit %d; messages in %s)", gp, rc, log);
	}
	remove(log);
	if (rename(tmp, out)) {
		remove(tmp);
		return hs_err_set(err, HS_EINPUT, "%s: cannot rename into place: %s", out, strerror(errno));
	}
	snprintf(image, n, "%s.%s", name, g->ext);
	return 0;
}
