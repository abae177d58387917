/* stderr_tail.c — what of a failed attempt's stderr is kept (issue 14, `keep_stderr` of
 * a kind) and how it is read back (wq_attempt_stderr). Only kinds that opt in keep
 * anything; the tail is stored with the attempt (op_stderr.c) and shown on request,
 * never in a listing, a log line or an event. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

char *wq__stderr_tail(const char *err, size_t len, size_t keep)
{
	const unsigned char *p;
	size_t n, o = 0;
	char *out;

	if (!err || !len || !keep)
		return NULL;
	n = len < keep ? len : keep;
	p = (const unsigned char *)err + (len - n);
	/* start at a character: skip continuation bytes cut off from their lead byte */
	while (n > 0 && (*p & 0xC0) == 0x80) {
		p++;
		n--;
	}
	if (!(out = malloc(n + 1)))
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t seq = p[i] ? wq__utf8_seq(p + i, n - i) : 0;
		if (seq == 0) {
			out[o++] = '?';
			i++;
		} else {
			memcpy(out + o, p + i, seq);
			o += seq;
			i += seq;
		}
	}
	out[o] = '\0';
	return out;
}

wq_rc wq_attempt_stderr(wq_db *db, int64_t task_id, int attempt, char **out, wq_error *err)
{
	if (!db || !out)
		return wq__err(err, WQ_EINVAL, "wq_attempt_stderr needs a store and out");
	if (task_id <= 0 || attempt <= 0)
		return wq__err(err, WQ_EINVAL, "invalid attempt %lld.%d", (long long)task_id,
			       attempt);
	return WQ__STORE(db, attempt_stderr, task_id, attempt, out, err);
}
