/* operation.c — operation identities (SPEC §6) and the attempts of a task (§14).
 *
 * The identity of a keyed operation is (tenant, scope, kind, key); the store keeps it in
 * its own table, unique by index, so it outlives the task row for its own retention
 * (prune.c). Enqueue itself is in task.c. */
#include "internal.h"

#include <string.h>

wq_rc wq_operation_find(wq_db *db, const char *tenant, const char *scope, const char *kind,
			const char *key, int64_t *task_id, wq_error *err)
{
	int64_t id = 0;
	wq_rc rc;

	if (!db || !task_id)
		return wq__err(err, WQ_EINVAL, "wq_operation_find needs a store and an out id");
	if (!key || !*key)
		return wq__err(err, WQ_EINVAL, "an operation key is required");
	if (strlen(key) > WQ_KEY_MAX)
		return wq__err(err, WQ_EINVAL, "operation key is %zu bytes; at most %d are allowed",
			       strlen(key), WQ_KEY_MAX);
	if (kind && (rc = wq__check_kind(kind, err)) != WQ_OK)
		return rc;
	rc = WQ__STORE(db, operation_find, tenant ? tenant : "", scope ? scope : "", kind, key,
		       &id, err);
	if (rc == WQ_OK)
		*task_id = id;
	return rc;
}

wq_rc wq_attempts(wq_db *db, int64_t task_id, wq_attempt **out, size_t *n, wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_attempts needs a store and out parameters");
	if (task_id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)task_id);
	return WQ__STORE(db, attempts, task_id, out, n, err);
}
