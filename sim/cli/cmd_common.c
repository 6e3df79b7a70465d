#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cmd.h"

int hs_cmd_fail(const char *cmd, const hs_err *err)
{
	const char *kind = err->code == HS_EINTERNAL ? " (this is a bug in hetsim; please report it)" : "";
	fprintf(stderr, "hetsim %s: %s%s\n", cmd, err->msg[0] ? err->msg : "failed", kind);
	return err->code ? err->code : HS_EINTERNAL;
}

int hs_cmd_finish(int status)
{
	static int reported; /* commands call this, and main again after them: one message */
	if (reported)
		return status ? status : HS_EINPUT;
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		reported = 1;
		if (!errno)
			errno = EIO;
		fprintf(stderr, "hetsim: error writing to standard output: %s\n", strerror(errno));
		return status ? status : HS_EINPUT; /* the environment (a full disk, a closed pipe), not a bug */
	}
	return status;
}
