/* retry.c — an operator's retry of a failed or cancelled task (issue 14): the checks of
 * the public call; the decision itself is the store's (src/store/op_retry.c). */
#include "internal.h"

#include <string.h>

#define RETRY_NOTE_MAX 1000 /* as wq_task_resolve's note */
#define RETRY_BY_MAX 200

wq_rc wq_task_retry(wq_db *db, int64_t id, const char *note, const char *by, wq_error *err)
{
	struct wq__retry r;

	if (id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)id);
	if (note && strlen(note) > RETRY_NOTE_MAX)
		return wq__err(err, WQ_EINVAL, "note is %zu bytes; at most %d are allowed",
			       strlen(note), RETRY_NOTE_MAX);
	if (by && strlen(by) > RETRY_BY_MAX)
		return wq__err(err, WQ_EINVAL, "--by is %zu bytes; at most %d are allowed",
			       strlen(by), RETRY_BY_MAX);
	memset(&r, 0, sizeof(r));
	r.task_id = id;
	r.note = note;
	r.by = by && *by ? by : "operator";
	r.now = wq_now();
	return WQ__STORE(db, retry, &r, err);
}
