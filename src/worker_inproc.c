/*
 * worker_inproc.c — in-process C handlers (wq_worker_register): kinds that run as a
 * function on the worker's own thread pool (pool.c, job.c) instead of a command. The
 * loop thread starts them, times them out, stops them through their cancellation flag
 * and records their outcome through outcome.c like a command's.
 */
#include "worker_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- in-process handlers ---- */

/*
 * A kind registered with wq_worker_register runs as a function on the pool's threads
 * (pool.c) instead of as a command. The loop keeps the same roles as for a spawn: it
 * starts the attempt, runs its runtime limit, sets the stop flag where a command would
 * get SIGTERM, and, kill_grace after a stop, records the attempt `interrupted` without
 * the handler (the SIGKILL case); the pool starts a replacement thread and the old one
 * frees the job when the handler returns. Outcomes go through outcome.c and finish_job
 * like a command's.
 */

static const struct wq__inproc_kind *inproc_find(const struct wq_worker *w, const char *kind)
{
	for (size_t i = 0; i < w->ninproc; i++)
		if (strcmp(w->inproc[i].kc.name, kind) == 0)
			return &w->inproc[i];
	return NULL;
}

wq_rc wq_worker_register(wq_worker *w, const char *kind, wq_job_fn fn, void *userdata,
			 wq_error *err)
{
	const struct wq__kind_config *kc;
	struct wq__inproc_kind *k;
	wq_rc rc;

	if (!w || !fn)
		return wq__err(err, WQ_EINVAL, "wq_worker_register needs a worker and a function");
	if (w->ran)
		return wq__err(err, WQ_EINVAL, "wq_worker_register: the worker is already running");
	if ((rc = wq__check_kind(kind, err)) != WQ_OK)
		return rc;
	if (inproc_find(w, kind))
		return wq__err(err, WQ_EINVAL, "kind %s: an in-process handler is already registered",
			       kind);
	kc = wq__config_kind(w->cfg, kind);
	if (kc && kc->argv)
		return wq__err(err, WQ_ECONFIG,
			       "%s:%d: [kind.%s] has a command: a kind is handled either by a "
			       "command or in-process, not both",
			       w->cfg->path ? w->cfg->path : "config", kc->line, kind);
	k = realloc(w->inproc, (w->ninproc + 1) * sizeof(*k));
	if (!k)
		return wq__err(err, WQ_ENOMEM, "wq_worker_register: out of memory");
	w->inproc = k;
	k = &w->inproc[w->ninproc++];
	if (kc)
		k->kc = *kc;
	else
		wq__kind_defaults(&k->kc, kind);
	k->fn = fn;
	k->ud = userdata;
	return WQ_OK;
}

static void on_inproc_done(struct wq_job *job, void *ud);

/*
 * At wq_worker_run: every configured kind has a command or a registered handler; the
 * registered kinds without a section join the claimed kinds; the pool starts. The
 * configuration file no longer refuses a kind without a command (config.c): only here is
 * it known whether a handler was registered for it.
 */
wq_rc wq__inproc_prepare(struct wq_worker *w, wq_error *err)
{
	const char *path = w->cfg->path ? w->cfg->path : "config";
	size_t n = w->nkinds;

	for (size_t i = 0; i < w->cfg->nkinds; i++) {
		const struct wq__kind_config *kc = &w->cfg->kinds[i];

		if (!kc->argv && !inproc_find(w, kc->name))
			return wq__err(err, WQ_ECONFIG,
				       "%s:%d: [kind.%s] has no command (and no in-process handler "
				       "is registered for it)",
				       path, kc->line, kc->name);
	}
	for (size_t i = 0; i < w->ninproc; i++)
		if (!wq__config_kind(w->cfg, w->inproc[i].kc.name))
			n++;
	if (n == 0)
		return wq__err(err, WQ_ECONFIG, "%s: no [kind.NAME] section and no in-process "
				"handler: the worker has nothing to run", path);
	if (n > w->nkinds) {
		const char **k = realloc(w->kinds, n * sizeof(*k));
		int *m;

		if (k)
			w->kinds = k;
		m = k ? realloc(w->kind_max_attempts, n * sizeof(*m)) : NULL;
		if (!m)
			return wq__err(err, WQ_ENOMEM, "wq_worker_run: out of memory");
		w->kind_max_attempts = m;
		for (size_t i = 0; i < w->ninproc; i++) {
			if (wq__config_kind(w->cfg, w->inproc[i].kc.name))
				continue;
			w->kinds[w->nkinds] = w->inproc[i].kc.name;
			w->kind_max_attempts[w->nkinds++] = 0;
		}
	}
	if (w->ninproc == 0)
		return WQ_OK;
	return wq__pool_new(&w->loop, w->db, w->concurrency, on_inproc_done, w, &w->pool, err);
}

/* start_job: marks j in-process when its kind is registered; a registered kind without a
 * section gets the defaults as its settings. */
void wq__inproc_bind(struct wq_worker *w, struct wq__job *j)
{
	j->ipk = inproc_find(w, j->t.kind);
	if (j->ipk && !j->kind)
		j->kind = &j->ipk->kc;
}

static void free_timer(uv_handle_t *h)
{
	free(h);
}

static void inproc_timer_close(struct wq__job *j)
{
	if (!j->ip_timer)
		return;
	uv_timer_stop(j->ip_timer);
	uv_close((uv_handle_t *)j->ip_timer, free_timer);
	j->ip_timer = NULL;
}

static void on_inproc_grace(uv_timer_t *t);

/* Sets the handler's stop flag (the SIGTERM of a command) and gives it kill_grace. 1 when
 * this call started the stop. */
static int inproc_stop(struct wq_worker *w, struct wq__job *j, wq_job_stop why)
{
	int none = WQ_JOB_STOP_NONE;

	if (!j->ip || !atomic_compare_exchange_strong(&j->ip->stop, &none, (int)why))
		return 0;
	if (j->ip_timer)
		uv_timer_start(j->ip_timer, on_inproc_grace, ms_of(w->cfg->kill_grace), 0);
	return 1;
}

/* Stops j's handler, a command (SIGTERM, SIGKILL after kill_grace) or in-process (the
 * flag, abandoned after kill_grace). 1 when this call started the stop. */
int wq__job_terminate(struct wq_worker *w, struct wq__job *j, wq_job_stop why)
{
	if (j->ip)
		return inproc_stop(w, j, why);
	return j->sp ? wq__spawn_terminate(j->sp, w->cfg->kill_grace) : 0;
}

static void on_inproc_timeout(uv_timer_t *t)
{
	struct wq__job *j = t->data;
	char d[32], g[32];

	if (!inproc_stop(j->w, j, WQ_JOB_STOP_RUNTIME_LIMIT))
		return; /* already stopping for another reason: that one is recorded */
	j->ip_timed_out = 1;
	wq__worker_log(j->w, "warning",
	     "task %" PRId64 " attempt %s exceeded its runtime limit (%s): in-process handler "
	     "asked to stop; recorded without it unless it returns within %s",
	     j->t.id, j->attempt_id, wq_duration_format(j->kind->timeout, d, sizeof(d)),
	     wq_duration_format(j->w->cfg->kill_grace, g, sizeof(g)));
	wq__worker_stop_event(j->w, j, "runtime-limit");
}

/* The facts of an in-process attempt for outcome.c (job: NULL when abandoned). */
static void inproc_facts(const struct wq__job *j, const struct wq_job *job,
			 struct wq__run_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->inproc = 1;
	f->inproc_abandoned = job == NULL;
	f->inproc_ret = job ? (int)job->ret : WQ_JOB_FAIL;
	f->exit_status = -1;
	f->timed_out = j->ip_timed_out;
	f->stop = j->stop;
	f->result_max = job ? job->result_max : j->w->cfg->result_max;
	f->result_limit = job ? job->result_limit : NULL;
	if (job && job->ret == WQ_JOB_SUCCEEDED && job->result_too_large) {
		f->result_too_large = 1;
		f->out_total = job->result_total;
	}
}

/* kill_grace after the stop and the handler has not returned: recorded without it. */
static void on_inproc_grace(uv_timer_t *t)
{
	struct wq__job *j = t->data;
	struct wq__run_facts f;
	struct wq__run_policy p;
	struct wq__decided d;
	char g[32];

	if (!j->ip || !wq__pool_abandon(j->w->pool, j->ip))
		return; /* it returned meanwhile: on_inproc_done is on its way */
	j->ip = NULL;
	inproc_timer_close(j);
	wq__worker_log(j->w, "warning",
	     "task %" PRId64 " attempt %s: in-process handler did not return within %s of the "
	     "stop; recorded without it (its thread is left to finish; a new thread takes its "
	     "place)",
	     j->t.id, j->attempt_id, wq_duration_format(j->w->cfg->kill_grace, g, sizeof(g)));
	inproc_facts(j, NULL, &f);
	wq__worker_job_policy(j, &p);
	wq__outcome_decide(&f, &p, wq_now(), WQ__RND_LAZY, &d);
	wq__worker_finish_job(j->w, j, &d.o, NULL);
}

/* The handler returned (loop thread): decide, attach the result, record. */
static void on_inproc_done(struct wq_job *job, void *ud)
{
	struct wq__job *j = job->owner;
	struct wq__run_facts f;
	struct wq__run_policy p;
	struct wq__decided d;
	char sha[WQ_SHA256_HEX];

	(void)ud;
	j->ip = NULL;
	inproc_timer_close(j);
	inproc_facts(j, job, &f);
	wq__worker_job_policy(j, &p);
	wq__outcome_decide(&f, &p, wq_now(), WQ__RND_LAZY, &d);
	if (d.o.kind == WQ__FINISH_SUCCEEDED && !d.o.outcome && job->result_len > 0) {
		wq__sha256_hex(job->result, job->result_len, sha);
		d.o.result = job->result;
		d.o.result_len = job->result_len;
		d.o.result_sha256 = sha;
	}
	wq__followup_collect_inproc(j->w, j, job, &d.o); /* issue 10 */
	wq__worker_finish_job(j->w, j, &d.o, NULL); /* a kept outcome copies the result */
	wq__job_free(job);
}

/* The job context of j (payload moved from j->t), or NULL (out of memory). */
static struct wq_job *inproc_job(struct wq_worker *w, struct wq__job *j, wq_error *e)
{
	struct wq_job *job = calloc(1, sizeof(*job));

	if (!job) {
		wq__err(e, WQ_ENOMEM, "out of memory before the in-process handler started");
		return NULL;
	}
	/* the key itself is computed when the handler asks for it (job.c); a stored
	 * identity it could not be computed for fails the job here, as before */
	if (wq__operation_identity_check(j->t.tenant, j->t.scope, j->t.kind, j->t.operation,
					 e) != WQ_OK) {
		free(job);
		return NULL;
	}
	job->fn = j->ipk->fn;
	job->ud = j->ipk->ud;
	job->payload = j->t.payload ? j->t.payload : strdup("{}");
	job->payload_len = j->t.payload ? j->t.payload_len : 2;
	j->t.payload = NULL;
	if (!job->payload) {
		free(job);
		wq__err(e, WQ_ENOMEM, "out of memory before the in-process handler started");
		return NULL;
	}
	job->task_id = j->t.id;
	job->keyed = j->t.keyed;
	atomic_init(&job->idem_state, 0);
	job->attempt = j->t.attempt;
	job->payload_version = j->t.payload_version;
	job->deadline = j->kind->timeout > 0 ? j->started_at + j->kind->timeout : 0;
	job->result_max = wq__policy_result_max(w->cfg, j->t.tenant, job->result_limit,
						sizeof(job->result_limit)); /* issue 10 */
	wq__strlcpy(job->attempt_id, j->attempt_id, sizeof(job->attempt_id));
	wq__strlcpy(job->kind, j->t.kind, sizeof(job->kind));
	wq__strlcpy(job->operation, j->t.operation, sizeof(job->operation));
	wq__strlcpy(job->tenant, j->t.tenant, sizeof(job->tenant));
	wq__strlcpy(job->scope, j->t.scope, sizeof(job->scope));
	atomic_init(&job->stop, WQ_JOB_STOP_NONE);
	job->owner = j;
	return job;
}

void wq__inproc_start(struct wq_worker *w, struct wq__job *j)
{
	struct wq_job *job;
	wq_error e;

	if (!(job = inproc_job(w, j, &e))) {
		wq__worker_spawn_failed(j, e.message, e.code == WQ_ENOMEM);
		return;
	}
	if (!(j->ip_timer = malloc(sizeof(*j->ip_timer)))) {
		wq__job_free(job);
		wq__worker_spawn_failed(j, "out of memory before the in-process handler started", 1);
		return;
	}
	uv_timer_init(&w->loop, j->ip_timer);
	j->ip_timer->data = j;
	if (j->kind->timeout > 0)
		uv_timer_start(j->ip_timer, on_inproc_timeout, ms_of(j->kind->timeout), 0);
	j->ip = job;
	wq__pool_submit(w->pool, job);

	/* Its `started` event (in_process) was appended by the claim (worker.c). */
}

