/* effect.c — the effect journal (SPEC §7): a handler names each external effect, begins
 * it before doing it and confirms it after. What a later attempt learns from the journal
 * (new, done, uncertain) and the default policy on uncertain (the attempt ends
 * `interrupted`, reason `uncertain-effect`) are kept by the store in one transaction with
 * the fence on the attempt. */
#include "internal.h"

#include <string.h>

/* [A-Za-z0-9._:-], 1..WQ_EFFECT_NAME_MAX bytes: safe in events and logs. */
static wq_rc check_effect(int64_t task_id, int attempt, const char *name, wq_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (task_id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)task_id);
	if (attempt <= 0)
		return wq__err(err, WQ_EINVAL, "invalid attempt %d", attempt);
	if (n == 0)
		return wq__err(err, WQ_EINVAL, "an effect needs a name");
	if (n > WQ_EFFECT_NAME_MAX)
		return wq__err(err, WQ_EINVAL, "effect name is %zu bytes; at most %d are allowed",
			       n, WQ_EFFECT_NAME_MAX);
	if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") !=
	    n)
		return wq__err(err, WQ_EINVAL,
			       "invalid effect name '%.*s': only letters, digits, '.', '_', ':' "
			       "and '-'",
			       (int)n, name);
	return WQ_OK;
}

wq_rc wq_effect_begin(wq_db *db, int64_t task_id, int attempt, const char *name,
		      wq_effect_status *status, char **result, wq_error *err)
{
	wq_effect_status st = 0;
	char *res = NULL;
	wq_rc rc;

	if (!db || !status)
		return wq__err(err, WQ_EINVAL, "wq_effect_begin needs a store and a status");
	if ((rc = check_effect(task_id, attempt, name, err)) != WQ_OK)
		return rc;
	rc = WQ__STORE(db, effect_begin, task_id, attempt, name, wq_now(), &st, &res, err);
	if (rc != WQ_OK)
		return rc;
	wq__failpoint("effect-begun");
	*status = st;
	if (result)
		*result = res;
	else
		wq_free(res);
	return WQ_OK;
}

wq_rc wq_effect_done(wq_db *db, int64_t task_id, int attempt, const char *name,
		     const char *result, wq_error *err)
{
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_effect_done needs a store");
	if ((rc = check_effect(task_id, attempt, name, err)) != WQ_OK)
		return rc;
	if (result && strlen(result) > WQ_EFFECT_RESULT_MAX)
		return wq__err(err, WQ_EINVAL, "effect result is %zu bytes; at most %d are allowed",
			       strlen(result), WQ_EFFECT_RESULT_MAX);
	return WQ__STORE(db, effect_done, task_id, attempt, name, result, wq_now(), err);
}

wq_rc wq_effect_key(wq_db *db, int64_t task_id, const char *name,
		    char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err)
{
	char op[WQ_IDEMPOTENCY_KEY_BUFSZ];
	wq_task t;
	wq_rc rc;

	if (!db || !out)
		return wq__err(err, WQ_EINVAL, "wq_effect_key needs a store and an out buffer");
	if ((rc = check_effect(task_id, 1, name, err)) != WQ_OK)
		return rc;
	if ((rc = WQ__STORE(db, get, task_id, &t, err)) != WQ_OK)
		return rc;
	/* The derivation of operation.c, the one the worker hands to handlers. */
	rc = wq_operation_idempotency_key(t.tenant, t.scope, t.kind, t.operation, t.keyed, op,
					  err);
	if (rc != WQ_OK)
		return rc;
	return wq_effect_idempotency_key(op, name, out, err);
}
