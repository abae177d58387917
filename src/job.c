/* job.c — the job context of an in-process handler (see job.h, wakeq.h). Accessors read
 * what the loop set before the job was submitted; the journal calls are marshalled to the
 * loop thread by pool.c. */
#include "job.h"

#include <jansson.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

void wq__job_free(struct wq_job *job)
{
	if (!job)
		return;
	free(job->payload);
	free(job->result);
	json_decref(job->followups);
	free(job);
}

const char *wq_job_payload(const wq_job *job, size_t *len)
{
	if (len)
		*len = job->payload_len;
	return job->payload;
}

int64_t wq_job_task_id(const wq_job *job) { return job->task_id; }
int wq_job_attempt(const wq_job *job) { return job->attempt; }
const char *wq_job_attempt_id(const wq_job *job) { return job->attempt_id; }
const char *wq_job_kind(const wq_job *job) { return job->kind; }
const char *wq_job_operation(const wq_job *job) { return job->operation; }
const char *wq_job_tenant(const wq_job *job) { return job->tenant; }
const char *wq_job_scope(const wq_job *job) { return job->scope; }
int wq_job_payload_version(const wq_job *job) { return job->payload_version; }
/* Computed once, by the first caller; a caller meanwhile on another thread of the
 * handler waits for it. The identity was checked before the job started (inproc_job),
 * so the computation cannot fail. */
const char *wq_job_idempotency_key(const wq_job *job)
{
	struct wq_job *j = (struct wq_job *)job;
	int st = atomic_load_explicit(&j->idem_state, memory_order_acquire), zero = 0;
	wq_error e;

	if (st == 2)
		return j->idem;
	if (atomic_compare_exchange_strong(&j->idem_state, &zero, 1)) {
		if (wq_operation_idempotency_key(j->tenant, j->scope, j->kind, j->operation,
						 j->keyed, j->idem, &e) != WQ_OK)
			j->idem[0] = '\0';
		atomic_store_explicit(&j->idem_state, 2, memory_order_release);
		return j->idem;
	}
	while (atomic_load_explicit(&j->idem_state, memory_order_acquire) != 2)
		sched_yield();
	return j->idem;
}
int64_t wq_job_deadline(const wq_job *job) { return job->deadline; }

int wq_job_cancelled(const wq_job *job)
{
	return atomic_load(&((struct wq_job *)job)->stop);
}

wq_rc wq_job_effect_begin(wq_job *job, const char *name, wq_effect_status *status,
			  char **result, wq_error *err)
{
	if (!job || !status)
		return wq__err(err, WQ_EINVAL, "wq_job_effect_begin needs a job and a status");
	return wq__pool_call(job, WQ__CALL_EFFECT_BEGIN, name, NULL, status, result, err);
}

wq_rc wq_job_effect_done(wq_job *job, const char *name, const char *result, wq_error *err)
{
	if (!job)
		return wq__err(err, WQ_EINVAL, "wq_job_effect_done needs a job");
	return wq__pool_call(job, WQ__CALL_EFFECT_DONE, name, result, NULL, NULL, err);
}

/* The result is kept up to result_max; a larger one is refused and remembered, so that a
 * success without a smaller result afterwards is recorded result-too-large. */
wq_rc wq_job_set_result(wq_job *job, const void *bytes, size_t len, wq_error *err)
{
	char *copy;

	if (!job || (!bytes && len))
		return wq__err(err, WQ_EINVAL, "wq_job_set_result needs a job and the bytes");
	if (len > job->result_total)
		job->result_total = len;
	if (len > job->result_max) {
		job->result_too_large = 1;
		return wq__err(err, WQ_ETOOBIG, "result is %zu bytes; %s is %zu bytes", len,
			       job->result_limit[0] ? job->result_limit : "result_max",
			       job->result_max);
	}
	if (!(copy = malloc(len + 1)))
		return wq__err(err, WQ_ENOMEM, "wq_job_set_result: out of memory");
	if (len)
		memcpy(copy, bytes, len);
	copy[len] = '\0';
	free(job->result);
	job->result = copy;
	job->result_len = len;
	job->result_too_large = 0;
	return WQ_OK;
}
