/* doctor.c — what needs a human (SPEC §14), as findings of safe evidence: ids, names,
 * reasons, never payloads or results.
 *
 * Not reported: operation records expiring while their task still retries. Retention of
 * an operation counts from its task's completion and only starts once the task row is
 * pruned (prune.c), so it cannot happen. */
#include "internal.h"
#include "schedule.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void finding_of(const struct wq__doctor_row *r, wq_finding *f)
{
	memset(f, 0, sizeof *f);
	f->task_id = r->task_id;
	wq__strlcpy(f->operation, r->operation, sizeof f->operation);
	switch (r->kind) {
	case WQ__DOCTOR_EFFECT_TWICE:
		wq__strlcpy(f->type, "effect-begun-twice", sizeof f->type);
		snprintf(f->detail, sizeof f->detail,
			 "effect %.128s begun by %d attempts (first %" PRId64 ".%d), now %s",
			 r->effect, r->begun_attempts, r->task_id, r->attempt, r->effect_state);
		break;
	case WQ__DOCTOR_UNCERTAIN:
		wq__strlcpy(f->type, "uncertain-effect", sizeof f->type);
		snprintf(f->detail, sizeof f->detail,
			 "effect %.128s begun by attempt %" PRId64 ".%d, never confirmed", r->effect,
			 r->task_id, r->attempt);
		break;
	case WQ__DOCTOR_STUCK: {
		char since[WQ_TIME_BUFSZ];

		wq__strlcpy(f->type, "stuck-running", sizeof f->type);
		snprintf(f->detail, sizeof f->detail,
			 "attempt %" PRId64 ".%d running since %s under instance %.128s",
			 r->task_id, r->attempt, wq_time_format(r->since, since), r->instance);
		break;
	}
	case WQ__DOCTOR_INTERRUPTED:
		wq__strlcpy(f->type, "interrupted", sizeof f->type);
		if (r->reason_detail[0])
			snprintf(f->detail, sizeof f->detail, "reason %.64s: %.180s", r->reason,
				 r->reason_detail);
		else
			snprintf(f->detail, sizeof f->detail, "reason %.64s",
				 r->reason[0] ? r->reason : "unknown");
		break;
	}
}

/* Dead deliveries: a stored result whose notification never arrived (SPEC §8, §14). */
static wq_rc dead_deliveries(wq_db *db, wq_finding **f, size_t *cnt, wq_error *err)
{
	wq_delivery *d = NULL;
	wq_finding *grown;
	size_t nd = 0;
	wq_rc rc = wq_delivery_list(db, WQ_DELIVERY_DEAD, &d, &nd, err);

	if (rc != WQ_OK || nd == 0)
		goto out;
	grown = realloc(*f, (*cnt + nd) * sizeof(**f));
	if (!grown) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory (%zu dead deliveries)", nd);
		goto out;
	}
	*f = grown;
	for (size_t i = 0; i < nd; i++) {
		wq_finding *x = &(*f)[(*cnt)++];
		memset(x, 0, sizeof(*x));
		wq__strlcpy(x->type, "dead-delivery", sizeof(x->type));
		x->task_id = d[i].task_id;
		x->delivery_id = d[i].id;
		snprintf(x->detail, sizeof(x->detail), "channel %s, %d attempts, last error: %s",
			 d[i].channel, d[i].attempts, d[i].last_error[0] ? d[i].last_error : "-");
	}
out:
	wq_free(d);
	return rc;
}

wq_rc wq_doctor(wq_db *db, wq_finding **out, size_t *n, wq_error *err)
{
	return wq_doctor_opt(db, NULL, out, n, err);
}

wq_rc wq_doctor_opt(wq_db *db, const wq_doctor_opts *opts, wq_finding **out, size_t *n,
		    wq_error *err)
{
	struct wq__doctor_row *rows = NULL;
	wq_finding *f = NULL;
	int64_t stuck_after = opts && opts->stuck_after ? opts->stuck_after
							: WQ_DOCTOR_STUCK_AFTER_DEFAULT;
	size_t cnt = 0;
	wq_rc rc;

	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_doctor needs a store and out parameters");
	if (stuck_after < 0)
		return wq__err(err, WQ_EINVAL, "doctor: a negative stuck-after bound");
	rc = WQ__STORE(db, doctor, wq_now() - stuck_after, &rows, &cnt, err);
	if (rc != WQ_OK)
		return rc;
	if (cnt) {
		f = calloc(cnt, sizeof *f);
		if (!f) {
			free(rows);
			return wq__err(err, WQ_ENOMEM, "out of memory (%zu findings)", cnt);
		}
		for (size_t i = 0; i < cnt; i++)
			finding_of(&rows[i], &f[i]);
	}
	free(rows);
	rc = dead_deliveries(db, &f, &cnt, err);
	if (rc == WQ_OK)
		rc = wq__schedule_findings(db, &f, &cnt, err); /* issue 12 */
	if (rc == WQ_OK)
		rc = wq__intake_findings(db, &f, &cnt, err); /* issue 13 */
	if (rc != WQ_OK) {
		free(f);
		return rc;
	}
	*out = f;
	*n = cnt;
	return WQ_OK;
}
