/* hs_err: how library code reports failure without printing or exiting.
 *
 * Library functions return -1 (or NULL) and fill an hs_err; only main and the cmd_* layer print it and
 * choose the exit status (DESIGN.md: 0 done, 1 internal error, 2 usage or bad input, 3 infeasible, 4 validation drift). */
#ifndef HS_ERR_H
#define HS_ERR_H

enum hs_status {
	HS_OK = 0,
	HS_EINTERNAL = 1,   /* a bug: an invariant broke */
	HS_EINPUT = 2,      /* usage or bad input */
	HS_EINFEASIBLE = 3, /* a configuration that cannot run: does not fit, does not divide */
	HS_EDRIFT = 4,      /* `validate`: a prediction beyond its tolerance (chosen by the command layer only) */
};

typedef struct hs_err {
	int code;       /* enum hs_status; HS_OK when nothing failed */
	char msg[1024]; /* one line, no trailing newline; "file:line:col: key.path: what (expected ...)" */
} hs_err;

/* Set code and message; returns -1 so callers can write `return hs_err_set(err, ...)`. Keeps the first
 * error: a later call on an already-failed hs_err is ignored, so the root cause is what gets reported. */
int hs_err_set(hs_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefix an existing message with context ("while loading x: "). */
void hs_err_prefix(hs_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void hs_err_clear(hs_err *err) { err->code = HS_OK; err->msg[0] = 0; }

#endif
