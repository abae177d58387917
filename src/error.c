/* error.c — result codes, their texts, and the optional error struct. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wq_strerror(wq_rc rc)
{
	switch (rc) {
#define WQ__RC_CASE(name, num, text) \
	case name:                   \
		return text;
		WQ_RC_LIST(WQ__RC_CASE)
#undef WQ__RC_CASE
	default:
		return "unknown error code";
	}
}

wq_rc wq__err(wq_error *err, wq_rc code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return code;
}

int wq__strlcpy(char *dst, const char *src, size_t dstsz)
{
	size_t n;

	if (dstsz == 0)
		return 1;
	if (!src)
		src = "";
	n = strlen(src);
	if (n >= dstsz) {
		memcpy(dst, src, dstsz - 1);
		dst[dstsz - 1] = '\0';
		return 1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

void wq_free(void *p)
{
	free(p);
}
