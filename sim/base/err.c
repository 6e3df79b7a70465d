#include "sim/base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int hs_err_set(hs_err *err, int code, const char *fmt, ...)
{
	if (!err || err->code != HS_OK)
		return -1;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

void hs_err_prefix(hs_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	char pre[512], old[sizeof err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	snprintf(err->msg, sizeof err->msg, "%s%s", pre, old);
}
