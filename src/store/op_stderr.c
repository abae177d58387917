/*
 * op_stderr.c — a failed attempt's stderr tail (issue 14, `keep_stderr` of a kind): the
 * one place handler output is stored. Written in finish()'s transaction with the
 * attempt's outcome, read only on request (`wakeq show|timeline ID --stderr`), never by
 * a listing.
 */
#include "op.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

wq_rc wq__attempt_stderr_set(struct wq__store *s, const struct wq__outcome *o,
			     wq_error *err)
{
	return wq__run(s, SQL_ATTEMPT_STDERR_SET,
		       WQ__ARGS(WQ__AI(o->task_id), WQ__AI(o->attempt), WQ__AT(o->stderr_tail)),
		       NULL, "record the attempt's stderr", err);
}

static wq_rc read_tail(const struct wq__row *r, void *ctx)
{
	char **out = ctx;
	size_t len = 0;
	const char *p = wq__text(r, 0, &len);

	free(*out);
	if (!(*out = malloc(len + 1)))
		return WQ_ENOMEM;
	memcpy(*out, p, len);
	(*out)[len] = '\0';
	return WQ_OK;
}

wq_rc wq__op_attempt_stderr(struct wq__store *s, int64_t task_id, int attempt, char **out,
			    wq_error *err)
{
	char *tail = NULL;
	wq_rc rc = wq__rows(s, SQL_ATTEMPT_STDERR_GET,
			    WQ__ARGS(WQ__AI(task_id), WQ__AI(attempt)), read_tail, &tail, NULL,
			    "read the attempt's stderr", err);

	if (rc == WQ_ENOMEM && !tail)
		return wq__err(err, WQ_ENOMEM, "out of memory reading an attempt's stderr");
	if (!rc && !tail)
		rc = wq__err(err, WQ_ENOTFOUND, "attempt %" PRId64 ".%d kept no stderr", task_id,
			     attempt);
	if (rc) {
		free(tail);
		return rc;
	}
	*out = tail;
	return WQ_OK;
}
