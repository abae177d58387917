/*
 * pool.c — the worker's own threads for in-process handlers (see job.h).
 *
 * Not libuv's uv_queue_work pool: that one is shared by the whole process (deliveries'
 * webhooks use it) and sized by UV_THREADPOOL_SIZE, so a slow handler could hold up a
 * delivery and `concurrency` could not be honoured. Here `nthreads` threads wait on one
 * queue; a returned job goes on a done list and the loop is woken (notify.h).
 *
 * Invariants (all under `mu`):
 *  - wq__notify_send is called only while !closed, under mu (the eventfd is open until
 *    close).
 *  - `live` threads exist that have not decided to exit, `stuck` of them run abandoned
 *    handlers; a free thread exits when `quit`, or when live - stuck > want (its own
 *    abandoned handler returned after a replacement had been started for it).
 *  - an ABANDONED job belongs to the thread running it, which frees it on return.
 *  - wave5 drain: `idle` threads wait on `work`; `wakes` of them were signalled and have
 *    not yet returned from the wait (a hint, never more than will return: it is raised only
 *    while a thread waits, and every return lowers it). A queued job is always either
 *    about to be seen by a thread already awake (`wakes` > 0, or a thread between two
 *    jobs) or signalled for: submit signals only when no wake is under way, and a thread
 *    that takes a job and leaves others queued signals the next one. So a burst of short
 *    jobs wakes threads one after another as they are needed, instead of every thread at
 *    once for one job each (the ping-pong that cost the drain its second core), and a
 *    slow handler still never holds up a queued job while a thread is idle.
 */
#include "job.h"
#include "notify.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct wq__call {
	struct wq__call *next;
	struct wq_job *job;
	enum wq__job_call_op op;
	const char *name, *result_in;      /* borrowed from the caller, who waits */
	wq_effect_status status;
	char *result_out;
	wq_rc rc;
	wq_error err;
	int done;
	pthread_cond_t cv;
};

struct wq__pool {
	pthread_mutex_t mu;
	pthread_cond_t work;               /* queue non-empty, quit, or a thread is surplus */
	struct wq__notify async;           /* loop side: done jobs and journal calls */
	wq_db *db;                         /* the loop's store handle (loop thread only) */
	wq__pool_done_cb on_done;
	void *ud;
	struct wq_job *queue, *queue_tail;
	struct wq_job *done;               /* returned, not yet handed to the loop */
	struct wq__call *calls;            /* journal calls waiting for the loop */
	pthread_t *threads;                /* every thread ever started (joined in free) */
	size_t nthreads, cap;
	int want, live, stuck;
	int idle, wakes;                   /* wave5 drain: see the invariants */
	int quit, closed;
};

static void *thread_main(void *arg);

/* Under mu: 1 when an idle thread is to be woken for the queued jobs (none is waking
 * yet). The caller signals `work` after unlocking mu: signalled under it, the woken
 * thread blocks at once on the mutex still held (glibc's waiter retakes it itself), one
 * more futex round trip before a handler starts. The waiter re-checks the queue under
 * mu, so a signal that finds it already awake is harmless. */
static int wake_due(struct wq__pool *p)
{
	if (!p->queue || p->idle == 0 || p->wakes > 0)
		return 0;
	p->wakes++;
	return 1;
}

/* Under mu. 0 on success. */
static int start_thread(struct wq__pool *p)
{
	sigset_t all, old;
	int rc;

	if (p->nthreads == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		pthread_t *t = realloc(p->threads, cap * sizeof(*t));

		if (!t)
			return -1;
		p->threads = t;
		p->cap = cap;
	}
	/* Handler threads take no signals: the loop thread handles SIGTERM/SIGINT and blocks
	 * SIGPIPE; a handler's thread inherits an all-blocked mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->threads[p->nthreads], NULL, thread_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	p->nthreads++;
	p->live++;
	return 0;
}

static void *thread_main(void *arg)
{
	struct wq__pool *p = arg;
	struct wq_job *job;
	wq_job_result ret;
	int wake;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->queue && !p->quit && p->live - p->stuck <= p->want) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->mu);
			p->idle--;
			if (p->wakes > 0)
				p->wakes--;
		}
		if (p->quit || p->live - p->stuck > p->want) {
			p->live--;
			break;
		}
		job = p->queue;
		p->queue = job->qnext;
		if (!p->queue)
			p->queue_tail = NULL;
		job->qnext = NULL;
		job->state = WQ__JOB_RUNNING;
		wake = wake_due(p); /* more queued: the next thread, while this one runs its job */
		pthread_mutex_unlock(&p->mu);
		if (wake)
			pthread_cond_signal(&p->work);

		ret = job->fn(job, job->ud);

		pthread_mutex_lock(&p->mu);
		if (job->state == WQ__JOB_ABANDONED) {
			wq__job_free(job); /* recorded without it; nobody else holds it */
			p->stuck--;
			continue;
		}
		job->ret = ret;
		job->state = WQ__JOB_DONE;
		job->qnext = p->done;
		p->done = job;
		if (!p->closed)
			wq__notify_send(&p->async);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void run_call(struct wq__pool *p, struct wq__call *c)
{
	const struct wq_job *j = c->job;

	memset(&c->err, 0, sizeof(c->err));
	if (c->op == WQ__CALL_EFFECT_BEGIN)
		c->rc = wq_effect_begin(p->db, j->task_id, j->attempt, c->name, &c->status,
					&c->result_out, &c->err);
	else
		c->rc = wq_effect_done(p->db, j->task_id, j->attempt, c->name, c->result_in,
				       &c->err);
}

/* Loop thread: journal calls first (their handlers are waiting), then returned jobs. */
static void on_async(struct wq__notify *a)
{
	struct wq__pool *p = a->data;
	struct wq__call *calls, *c, *next;
	struct wq_job *done, *j;

	pthread_mutex_lock(&p->mu);
	calls = p->calls;
	p->calls = NULL;
	done = p->done;
	p->done = NULL;
	pthread_mutex_unlock(&p->mu);

	for (c = calls; c; c = next) {
		next = c->next; /* c lives on its caller's stack until done is seen */
		run_call(p, c);
		pthread_mutex_lock(&p->mu);
		c->done = 1;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&p->mu);
	}
	while (done) { /* oldest first does not matter: each is its own attempt */
		j = done;
		done = j->qnext;
		j->qnext = NULL;
		p->on_done(j, p->ud);
	}
}

wq_rc wq__pool_call(struct wq_job *job, enum wq__job_call_op op, const char *name,
		    const char *result_in, wq_effect_status *status, char **result_out,
		    wq_error *err)
{
	struct wq__pool *p = job->pool;
	struct wq__call c;
	wq_rc rc;

	memset(&c, 0, sizeof(c));
	c.job = job;
	c.op = op;
	c.name = name;
	c.result_in = result_in;
	pthread_cond_init(&c.cv, NULL);
	pthread_mutex_lock(&p->mu);
	if (p->closed || job->state == WQ__JOB_ABANDONED) {
		pthread_mutex_unlock(&p->mu);
		pthread_cond_destroy(&c.cv);
		return wq__err(err, WQ_ESTALE,
			       "attempt %s: its outcome was already recorded (the handler did not "
			       "stop within kill_grace) or the worker stopped",
			       job->attempt_id);
	}
	c.next = p->calls;
	p->calls = &c;
	wq__notify_send(&p->async);
	while (!c.done)
		pthread_cond_wait(&c.cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	pthread_cond_destroy(&c.cv);
	rc = c.rc;
	if (rc != WQ_OK) {
		if (err)
			*err = c.err;
		return rc;
	}
	if (status)
		*status = c.status;
	if (result_out)
		*result_out = c.result_out;
	else
		wq_free(c.result_out);
	return WQ_OK;
}

wq_rc wq__pool_new(uv_loop_t *loop, wq_db *db, int nthreads, wq__pool_done_cb on_done,
		   void *ud, struct wq__pool **out, wq_error *err)
{
	struct wq__pool *p = calloc(1, sizeof(*p));
	int uerr;

	if (!p)
		return wq__err(err, WQ_ENOMEM, "handler threads: out of memory");
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	p->db = db;
	p->on_done = on_done;
	p->ud = ud;
	p->want = nthreads > 0 ? nthreads : 1;
	uerr = wq__notify_init(loop, &p->async, on_async, p);
	if (uerr != 0) {
		if (!p->async.open) { /* nothing the loop knows of */
			wq__pool_free(p);
			p = NULL;
		}
		wq__pool_close(p);
		*out = p; /* when set: the caller closes the loop, then frees */
		return wq__err(err, WQ_EIO, "handler threads' wake-up: %s", uv_strerror(uerr));
	}
	pthread_mutex_lock(&p->mu);
	for (int i = 0; i < p->want; i++) {
		if (start_thread(p) != 0) {
			pthread_mutex_unlock(&p->mu);
			wq__pool_close(p);
			*out = p; /* the caller closes the loop, then frees */
			return wq__err(err, WQ_ELIMIT, "handler threads: cannot start thread %d of %d",
				       i + 1, p->want);
		}
	}
	pthread_mutex_unlock(&p->mu);
	*out = p;
	return WQ_OK;
}

void wq__pool_submit(struct wq__pool *p, struct wq_job *job)
{
	int wake;

	job->pool = p;
	job->state = WQ__JOB_QUEUED;
	job->qnext = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->queue_tail)
		p->queue_tail->qnext = job;
	else
		p->queue = job;
	p->queue_tail = job;
	wake = wake_due(p);
	pthread_mutex_unlock(&p->mu);
	if (wake)
		pthread_cond_signal(&p->work);
}

/* Removes a queued job from the queue (under mu); 1 when it was there. */
static int unqueue(struct wq__pool *p, struct wq_job *job)
{
	struct wq_job **pp = &p->queue, *prev = NULL;

	for (; *pp; prev = *pp, pp = &(*pp)->qnext) {
		if (*pp != job)
			continue;
		*pp = job->qnext;
		if (p->queue_tail == job)
			p->queue_tail = prev;
		return 1;
	}
	return 0;
}

int wq__pool_abandon(struct wq__pool *p, struct wq_job *job)
{
	int r = 0;

	pthread_mutex_lock(&p->mu);
	if (job->state == WQ__JOB_QUEUED && unqueue(p, job)) {
		/* Never started (every thread busy with abandoned handlers): nobody holds
		 * it but us. */
		pthread_mutex_unlock(&p->mu);
		wq__job_free(job);
		return 1;
	}
	if (job->state == WQ__JOB_RUNNING) {
		job->state = WQ__JOB_ABANDONED;
		p->stuck++;
		/* Keep `want` threads free of abandoned handlers; should the thread not start,
		 * the slot stays taken until the handler returns. */
		if (!p->quit)
			start_thread(p);
		r = 1;
	}
	pthread_mutex_unlock(&p->mu);
	return r;
}

void wq__pool_close(struct wq__pool *p)
{
	struct wq__call *c;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->closed) {
		pthread_mutex_unlock(&p->mu);
		return;
	}
	p->closed = 1;
	for (c = p->calls; c; c = c->next) {
		c->rc = wq__err(&c->err, WQ_ESTALE, "the worker stopped");
		c->done = 1;
		pthread_cond_signal(&c->cv);
	}
	p->calls = NULL;
	pthread_mutex_unlock(&p->mu);
	wq__notify_close(&p->async);
}

void wq__pool_free(struct wq__pool *p)
{
	struct wq_job *j;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	while ((j = p->queue)) {
		p->queue = j->qnext;
		wq__job_free(j);
	}
	while ((j = p->done)) {
		p->done = j->qnext;
		wq__job_free(j);
	}
	free(p->threads);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
