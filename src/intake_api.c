/* intake_api.c — the public intake API (issue 13): looking at what the mailbox sources
 * handed out. Inputs are checked before the store is touched; the worker's side is
 * intake.c. */
#include "internal.h"
#include "store/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const intake_states[] = {
	"pending", "handled", "giving-up", "acknowledged", "abandoned", "retired",
};

int wq_intake_state_valid(const char *name)
{
	for (size_t i = 0; name && i < WQ__ARRAY_LEN(intake_states); i++)
		if (strcmp(name, intake_states[i]) == 0)
			return 1;
	return 0;
}

/* A source name as [source.NAME] takes it (config.c checks it the same way). */
wq_rc wq__intake_check_source(const char *name, wq_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > WQ_INTAKE_SOURCE_MAX)
		return wq__err(err, WQ_EINVAL, "a source name has 1..%d bytes",
			       WQ_INTAKE_SOURCE_MAX);
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    name[i]))
			return wq__err(err, WQ_EINVAL,
				       "source name '%s' may only contain A-Z a-z 0-9 . _ -", name);
	return WQ_OK;
}

wq_rc wq_intake_list(wq_db *db, const char *source, const char *state, wq_intake **out,
		     size_t *n, wq_error *err)
{
	wq_rc rc;

	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_intake_list needs a store and out-parameters");
	if (source && *source && (rc = wq__intake_check_source(source, err)) != WQ_OK)
		return rc;
	if (state && *state && !wq_intake_state_valid(state))
		return wq__err(err, WQ_EINVAL,
			       "unknown intake state '%s' (expected pending, handled, giving-up, "
			       "acknowledged, abandoned or retired)",
			       state);
	return WQ__STORE(db, intake_list, source ? source : "", state ? state : "", "", out, n,
			 err);
}

wq_rc wq_intake_get(wq_db *db, const char *source, const char *key, wq_intake *out,
		    wq_error *err)
{
	wq_intake *rows = NULL;
	size_t n = 0, klen = key ? strlen(key) : 0;
	wq_rc rc;

	if (!db || !out)
		return wq__err(err, WQ_EINVAL, "wq_intake_get needs a store and an out-parameter");
	if ((rc = wq__intake_check_source(source, err)) != WQ_OK)
		return rc;
	if (klen == 0 || klen > WQ_INTAKE_KEY_MAX)
		return wq__err(err, WQ_EINVAL, "an intake key has 1..%d bytes", WQ_INTAKE_KEY_MAX);
	if ((rc = wq__check_utf8("intake key", key, err)) != WQ_OK)
		return rc;
	rc = WQ__STORE(db, intake_list, source, "", key, &rows, &n, err);
	if (rc == WQ_OK && n == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "source %s has no message %s", source, key);
	if (rc == WQ_OK)
		*out = rows[0];
	wq_free(rows);
	return rc;
}

wq_rc wq_intake_acks_waiting(wq_db *db, const char *source, int64_t *count, wq_error *err)
{
	if (!db || !count)
		return wq__err(err, WQ_EINVAL, "wq_intake_acks_waiting needs a store and a count");
	return WQ__STORE(db, intake_acks_waiting, source ? source : "", count, err);
}

/* Abandoned messages: given up after their last handout (SPEC §9), acknowledged at the
 * source so they do not come back: a person decides what becomes of them. */
wq_rc wq__intake_findings(wq_db *db, wq_finding **f, size_t *cnt, wq_error *err)
{
	wq_intake *x = NULL;
	wq_finding *grown;
	size_t n = 0;
	wq_rc rc = WQ__STORE(db, intake_list, "", "abandoned", "", &x, &n, err);

	if (rc != WQ_OK || n == 0)
		goto out;
	if (!(grown = realloc(*f, (*cnt + n) * sizeof(**f)))) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (%zu abandoned messages)", n);
		goto out;
	}
	*f = grown;
	for (size_t i = 0; i < n; i++) {
		wq_finding *y = &(*f)[(*cnt)++];

		memset(y, 0, sizeof(*y));
		wq__strlcpy(y->type, "abandoned-message", sizeof(y->type));
		y->task_id = x[i].task_id;
		snprintf(y->detail, sizeof(y->detail), "source %s, message %.120s: %d handouts, "
			 "acknowledged at the source", x[i].source, x[i].key, x[i].handouts);
	}
out:
	wq_free(x);
	return rc;
}
