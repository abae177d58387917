/*
 * deliver.c — the worker's delivery side (SPEC §8); see deliver.h.
 *
 * Invariants:
 *  - A delivery is claimed (pending → sending, attempts+1, instance) before anything is
 *    sent, and every outcome is recorded conditionally on that very attempt and instance,
 *    so an attempt that was recovered meanwhile (its worker declared lost) records
 *    nothing over the next one.
 *  - An outcome the store does not take (see wq__outcome_keep: a full disk, a lost
 *    connection) is kept in its slot, still in flight (so recovery leaves it alone), and
 *    offered again on every tick (wq__deliver_retry_unrecorded) until it is recorded.
 *    Only when the worker gives up (the drain's deadline) or on a definite refusal is it
 *    dropped: the delivery stays `sending` and the next recovery turns it back to
 *    pending with a `delivery-uncertain` event. A receiver may then see the same
 *    notification twice, always with the same Idempotency-Key; the inbox never does
 *    (its row is unique per delivery).
 *  - The notification carries evidence only; the result body never leaves the store
 *    except through `wakeq result`.
 */
#include "deliver.h"
#include "instance.h"
#include "outcome.h"
#include "spawn.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define WQ__DELIVERY_OUTPUT_MAX 4096 /* what a channel command may print; discarded */
#define WQ__UNCONFIGURED_BACKOFF (1 * WQ__US_PER_S)
#define WQ__UNCONFIGURED_BACKOFF_MAX (3600 * WQ__US_PER_S)

enum dtype { D_INBOX = 1, D_WEBHOOK, D_COMMAND };

struct djob {
	struct djob *next, *prev;
	struct wq__deliver *d;
	struct wq__delivery_claimed c;
	char instance[WQ_NAME_MAX + 1]; /* the id it was claimed under */
	enum dtype type;
	const char *name;               /* after "inbox:", "webhook:", "command:" */
	const struct wq__channel_config *ch; /* NULL: inbox, or not configured here */
	char *body;                     /* the notification JSON */
	size_t body_len;
	int aborted;                    /* stopped by drain/close: record nothing */

	/* webhook: the pool thread writes these, the loop reads them in after_work */
	uv_work_t work;
	atomic_int stop;
	CURLcode cres;
	long http_status;
	char curl_err[CURL_ERROR_SIZE];

	/* command */
	struct wq__spawn *sp;

	/* The outcome, kept until the store takes it (settle); pointers into this job, the
	 * claim and the config. */
	int unrecorded;
	struct wq__delivery_outcome out;
	char out_error[WQ_DETAIL_MAX + 1];
};

struct wq__deliver {
	struct wq__deliver_opts o;
	int slots;
	struct djob *jobs;
	int inflight;
	int last_claim_empty;
	int closing;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ------------------------------------------------------------------ helpers ---- */

/* text as one printable line (bytes outside ' '..'~' become '?'), at most dstsz-1. */
static void safe_line(char *dst, size_t dstsz, const char *text)
{
	size_t o = 0;

	for (; text && *text && o + 1 < dstsz; text++)
		dst[o++] = (*text >= ' ' && *text <= '~') ? *text : '?';
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

/* A JSON string of text; bytes that are not valid UTF-8 become '?'. */
static json_t *jstr(const char *text)
{
	json_t *j = json_string(text);
	char *copy;

	if (j || !text)
		return j;
	copy = strdup(text);
	if (!copy)
		return NULL;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* The notification (SPEC §8): metadata, never the result body. 0, or -1 (no memory). */
static int build_body(struct djob *j)
{
	const struct wq__delivery_claimed *c = &j->c;
	const char *state = wq_state_name(c->task_state);
	char fetch[64];
	json_t *o, *r = NULL;

	snprintf(fetch, sizeof(fetch), "wakeq result %" PRId64, c->task_id);
	if (c->has_result)
		r = json_pack("{s:I, s:s}", "size", (json_int_t)c->result_size, "sha256",
			      c->result_sha256);
	else
		r = json_null();
	o = json_pack("{s:I, s:I, s:o, s:o, s:s, s:o, s:o, s:s}", "delivery_id",
		      (json_int_t)c->id, "task_id", (json_int_t)c->task_id, "kind", jstr(c->kind),
		      "operation", jstr(c->operation), "state", state ? state : "succeeded",
		      "outcome", c->outcome[0] ? jstr(c->outcome) : json_null(), "result", r,
		      "fetch", fetch);
	if (!o)
		return -1;
	j->body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!j->body)
		return -1;
	j->body_len = strlen(j->body);
	return 0;
}

static void unlink_job(struct wq__deliver *d, struct djob *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		d->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	d->inflight--;
	free(j->body);
	free(j);
}

/* The job left its slot: forget it and tell the worker (unless it is closing). */
static void release(struct djob *j)
{
	struct wq__deliver *d = j->d;

	unlink_job(d, j);
	if (!d->closing && d->o.on_settled)
		d->o.on_settled(d->o.ud);
}

static void left_sending(struct djob *j)
{
	struct wq__deliver *d = j->d;

	if (!d->closing)
		d->o.log(d->o.ud, "warning",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " attempt %d stopped by the "
			 "drain deadline: it stays sending; recovery retries it and records the "
			 "uncertainty",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts);
	release(j);
}

static void offer(struct djob *j, int give_up);

/*
 * Records the attempt's outcome and releases the job. A failure retries after the
 * channel's backoff while the round's attempt budget lasts (counted from retry_base, the
 * attempt count when an operator last retried it), else the delivery is dead: an error
 * line here and, in the same transaction, a notification in the operators' inbox.
 */
static void settle(struct djob *j, int failed, int status, const char *error)
{
	struct wq__deliver *d = j->d;
	struct wq__delivery_outcome *o = &j->out;
	int max = j->ch ? j->ch->max_attempts : WQ__DELIVERY_MAX_ATTEMPTS;
	int64_t base = j->ch ? j->ch->retry_backoff : WQ__UNCONFIGURED_BACKOFF;
	int64_t bmax = j->ch ? j->ch->retry_backoff_max : WQ__UNCONFIGURED_BACKOFF_MAX;

	wq__failpoint("delivery-sent");
	memset(o, 0, sizeof(*o));
	o->id = j->c.id;
	o->attempts = j->c.attempts;
	o->instance = j->instance;
	o->status = status;
	o->now = wq_now();
	if (!failed) {
		o->kind = WQ__DELIVERY_DELIVERED;
		o->inbox = j->type == D_INBOX ? j->name : NULL;
	} else {
		wq__strlcpy(j->out_error, error ? error : "", sizeof(j->out_error));
		o->error = j->out_error;
		o->max_attempts = j->c.retry_base + max;
		if (j->c.attempts >= o->max_attempts) {
			o->kind = WQ__DELIVERY_DEAD;
			o->operators = wq__config_operators(d->o.cfg);
		} else {
			o->kind = WQ__DELIVERY_RETRY;
			o->next_at = o->now + wq__backoff(base, bmax, j->c.attempts - j->c.retry_base,
							  wq__random_unit());
		}
	}
	offer(j, 0);
}

/* Offers j's outcome to the store; logs and releases the job unless the store did not
 * take it and `give_up` is 0 (then it is kept for the next offer). */
static void offer(struct djob *j, int give_up)
{
	struct wq__deliver *d = j->d;
	const struct wq__delivery_outcome *o = &j->out;
	int max = j->ch ? j->ch->max_attempts : WQ__DELIVERY_MAX_ATTEMPTS;
	char when[WQ_TIME_BUFSZ], what[64] = "";
	wq_error e;
	wq_rc rc;

	WQ__STORE_RETRY(rc, d->o.db, delivery_finish, o, &e);
	if (wq__outcome_keep(rc) && !give_up) {
		if (!j->unrecorded)
			d->o.log(d->o.ud, "warning",
				 "delivery %" PRId64 " (%s) of task %" PRId64 " attempt %d: the store "
				 "did not take the outcome (%s); it is kept and recorded once the "
				 "store takes writes again",
				 j->c.id, j->c.channel, j->c.task_id, j->c.attempts, e.message);
		j->unrecorded = 1;
		return;
	}
	if (o->status >= 0)
		snprintf(what, sizeof(what), j->type == D_WEBHOOK ? ", HTTP %d" : ", exit %d",
			 o->status);
	if (rc == WQ_ESTALE) {
		d->o.log(d->o.ud, "warning",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " attempt %d: outcome not "
			 "recorded: %s",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts, e.message);
	} else if (rc != WQ_OK) {
		d->o.log(d->o.ud, "error",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " attempt %d: outcome NOT "
			 "recorded: %s (it stays sending until recovery retries it)",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts, e.message);
	} else if (o->kind == WQ__DELIVERY_DELIVERED) {
		d->o.log(d->o.ud, "info",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " delivered (attempt %d%s)",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts, what);
	} else if (o->kind == WQ__DELIVERY_RETRY) {
		d->o.log(d->o.ud, "warning",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " attempt %d/%d failed: %s; "
			 "retry at %s",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts - j->c.retry_base, max,
			 o->error, wq_time_format(o->next_at, when));
	} else {
		d->o.log(d->o.ud, "error",
			 "delivery %" PRId64 " (%s) of task %" PRId64 " is dead after %d attempt(s): "
			 "%s; reported to inbox:%s ('wakeq deliveries retry %" PRId64 "' sends it "
			 "again)",
			 j->c.id, j->c.channel, j->c.task_id, j->c.attempts - j->c.retry_base,
			 o->error, o->operators, j->c.id);
	}
	release(j);
}

void wq__deliver_retry_unrecorded(struct wq__deliver *d, int give_up)
{
	struct djob *j, *next;

	if (!d || d->closing)
		return;
	for (j = d->jobs; j; j = next) {
		next = j->next;
		if (j->unrecorded)
			offer(j, give_up);
	}
}

/* ------------------------------------------------------------------ webhook ---- */

static size_t discard(char *ptr, size_t size, size_t n, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * n;
}

static int xfer_check(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct djob *j = ud;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(&j->stop) ? 1 : 0;
}

/*
 * Every socket libcurl opens for a connection is close-on-exec from the start, so a
 * handler the worker spawns meanwhile never inherits it (libcurl itself does not set the
 * flag; setting it later, from CURLOPT_SOCKOPTFUNCTION, would leave a window).
 */
static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)ud;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* One step of the transfer. libcurl may open descriptors of its own without
 * close-on-exec (its multi handle's wake-up socketpair, the threaded resolver's pair):
 * every call that may open one runs inside a close-on-exec section (spawn.h). */
static CURLMcode multi_step(CURLM *m, int *running)
{
	struct wq__fdset before;
	CURLMcode mc;

	wq__spawn_cloexec_begin(&before);
	mc = curl_multi_perform(m, running);
	wq__spawn_cloexec_end(&before);
	return mc;
}

/* Runs c to completion on a multi handle of its own (curl_easy_perform would create one
 * outside any close-on-exec section); the result in j->cres. */
static void perform(struct djob *j, CURL *c)
{
	struct wq__fdset before;
	CURLM *m;
	CURLMsg *msg;
	CURLMcode mc;
	int running = 1, left;

	wq__spawn_cloexec_begin(&before);
	m = curl_multi_init();
	mc = m ? curl_multi_add_handle(m, c) : CURLM_OUT_OF_MEMORY;
	wq__spawn_cloexec_end(&before);
	if (mc != CURLM_OK)
		goto fail;
	while (running) {
		if ((mc = multi_step(m, &running)) != CURLM_OK)
			goto fail;
		/* A short wait: the progress callback (drain abort) runs only in a step. */
#if LIBCURL_VERSION_NUM >= 0x074200
		if (running && (mc = curl_multi_poll(m, NULL, 0, 250, NULL)) != CURLM_OK)
			goto fail;
#else
		if (running && (mc = curl_multi_wait(m, NULL, 0, 250, NULL)) != CURLM_OK)
			goto fail;
#endif
	}
	j->cres = CURLE_RECV_ERROR;
	while ((msg = curl_multi_info_read(m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == c)
			j->cres = msg->data.result;
	curl_multi_remove_handle(m, c);
	curl_multi_cleanup(m);
	return;
fail:
	snprintf(j->curl_err, sizeof(j->curl_err), "%s", curl_multi_strerror(mc));
	j->cres = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
	if (m) {
		curl_multi_remove_handle(m, c);
		curl_multi_cleanup(m);
	}
}

/* In the thread pool: one POST. Touches only j's own fields and the (immutable) config. */
static void webhook_work(uv_work_t *w)
{
	struct djob *j = w->data;
	struct curl_slist *h = NULL, *t;
	char key[64];
	long ms = (long)((j->ch->timeout + 999) / 1000);
	CURL *c;

	j->curl_err[0] = '\0';
	j->http_status = 0;
	c = curl_easy_init();
	if (!c) {
		j->cres = CURLE_FAILED_INIT;
		return;
	}
	snprintf(key, sizeof(key), "Idempotency-Key: %" PRId64, j->c.id);
	t = curl_slist_append(h, "Content-Type: application/json");
	if (t && (h = t) && (t = curl_slist_append(h, key)) && (h = t) &&
	    (t = curl_slist_append(h, "Expect:")))
		h = t;
	if (!t) {
		j->cres = CURLE_OUT_OF_MEMORY;
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, j->ch->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, j->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)j->body_len);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "wakeq/" WQ_VERSION_STRING);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* The response (body and headers) is read and dropped: never stored, never logged. */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, j->curl_err);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xfer_check);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, j);
	perform(j, c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &j->http_status);
out:
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}

/* Back on the loop: 2xx = delivered; any other status or a transport error = failure,
 * described by the status code or curl's error text (never the response). */
static void webhook_done(uv_work_t *w, int status)
{
	struct djob *j = w->data;
	char err[CURL_ERROR_SIZE + 32], line[CURL_ERROR_SIZE];

	if (j->aborted || status == UV_ECANCELED) {
		left_sending(j);
		return;
	}
	if (j->cres == CURLE_OK && j->http_status >= 200 && j->http_status < 300) {
		settle(j, 0, (int)j->http_status, NULL);
		return;
	}
	if (j->cres == CURLE_OK) {
		snprintf(err, sizeof(err), "HTTP %ld", j->http_status);
		settle(j, 1, (int)j->http_status, err);
		return;
	}
	safe_line(line, sizeof(line), j->curl_err[0] ? j->curl_err : curl_easy_strerror(j->cres));
	wq__url_scrub(line, j->ch->url); /* curl may quote the URL: no credentials in events */
	snprintf(err, sizeof(err), "curl: %s", line);
	settle(j, 1, -1, err);
}

static void start_webhook(struct wq__deliver *d, struct djob *j)
{
	char err[160];
	int r;

	/* libcurl (and the TLS libraries it pulls in, ~4 MiB resident) is loaded with the
	 * first webhook, not when the worker starts: an idle worker without webhooks stays
	 * small (issue 11). On the loop thread, before any request runs on the pool. */
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		snprintf(err, sizeof(err), "libcurl could not be initialised: %s",
			 curl_easy_strerror(curl_init_rc));
		settle(j, 1, -1, err);
		return;
	}
	j->work.data = j;
	r = uv_queue_work(d->o.loop, &j->work, webhook_work, webhook_done);
	if (r != 0) {
		snprintf(err, sizeof(err), "cannot start the request: %s", uv_strerror(r));
		settle(j, 1, -1, err);
	}
}

/* ------------------------------------------------------------------ command ---- */

static void command_done(struct wq__spawn *sp, struct wq__spawn_result *r, void *ud)
{
	struct djob *j = ud;
	char err[WQ_DETAIL_MAX + 1], g[32];

	j->sp = NULL;
	if (j->aborted) {
		left_sending(j);
		return;
	}
	if (r->timed_out) {
		snprintf(err, sizeof(err), "timeout %s exceeded",
			 wq_duration_format(j->ch->timeout, g, sizeof(g)));
		settle(j, 1, -1, err);
	} else if (r->term_signal) {
		snprintf(err, sizeof(err), "killed by signal %d", r->term_signal);
		settle(j, 1, -1, err);
	} else if (r->exit_status == 0) {
		settle(j, 0, 0, NULL);
	} else {
		snprintf(err, sizeof(err), "exit %d", r->exit_status);
		settle(j, 1, r->exit_status, err);
	}
}

static void start_command(struct wq__deliver *d, struct djob *j)
{
	struct wq__spawn_opts so;
	char e_id[48], e_task[48], e_ch[WQ_NAME_MAX + 32];
	const char *env[5];
	char err[WQ_DETAIL_MAX + 1];
	wq_error e;

	snprintf(e_id, sizeof(e_id), "WAKEQ_DELIVERY_ID=%" PRId64, j->c.id);
	snprintf(e_task, sizeof(e_task), "WAKEQ_TASK_ID=%" PRId64, j->c.task_id);
	snprintf(e_ch, sizeof(e_ch), "WAKEQ_CHANNEL=%s", j->c.channel);
	env[0] = e_id;
	env[1] = e_task;
	env[2] = e_ch;
	env[3] = "WAKEQ_DB"; /* a channel command gets no store */
	env[4] = NULL;
	memset(&so, 0, sizeof(so));
	so.loop = d->o.loop;
	so.argv = j->ch->argv;
	so.env = env;
	so.input = j->body;
	so.input_len = j->body_len;
	so.result_max = WQ__DELIVERY_OUTPUT_MAX;
	so.stderr_max = WQ__DELIVERY_OUTPUT_MAX;
	so.timeout = j->ch->timeout;
	so.kill_grace = d->o.cfg->kill_grace;
	so.on_done = command_done;
	so.ud = j;
	if (wq__spawn_start(&so, &j->sp, &e) != WQ_OK) {
		j->sp = NULL;
		snprintf(err, sizeof(err), "cannot run the command: %.200s", e.message);
		safe_line(err, sizeof(err), err);
		settle(j, 1, -1, err);
	}
}

/* ------------------------------------------------------------------ claiming ---- */

static void start_delivery(struct wq__deliver *d, const struct wq__delivery_claimed *c,
			   const char *instance)
{
	struct djob *j = calloc(1, sizeof(*j));
	const char *colon;
	char err[WQ_NAME_MAX + 64];

	if (!j) {
		d->o.log(d->o.ud, "error",
			 "delivery %" PRId64 ": out of memory (it stays sending until recovery "
			 "retries it)",
			 c->id);
		return;
	}
	j->d = d;
	j->c = *c;
	wq__strlcpy(j->instance, instance, sizeof(j->instance));
	atomic_init(&j->stop, 0);
	j->next = d->jobs;
	if (d->jobs)
		d->jobs->prev = j;
	d->jobs = j;
	d->inflight++;

	colon = strchr(j->c.channel, ':');
	j->name = colon ? colon + 1 : "";
	if (strncmp(j->c.channel, "inbox:", 6) == 0 && *j->name) {
		j->type = D_INBOX;
		settle(j, 0, -1, NULL);
		return;
	}
	if (strncmp(j->c.channel, "webhook:", 8) == 0)
		j->type = D_WEBHOOK;
	else if (strncmp(j->c.channel, "command:", 8) == 0)
		j->type = D_COMMAND;
	if (!j->type) {
		snprintf(err, sizeof(err), "channel '%s' is not valid", j->c.channel);
		settle(j, 1, -1, err);
		return;
	}
	j->ch = wq__config_channel(d->o.cfg, j->name);
	if (j->ch && (j->ch->type == WQ__CHANNEL_WEBHOOK) != (j->type == D_WEBHOOK))
		j->ch = NULL;
	if (!j->ch) {
		/* Another worker may have it: back off like any failure. */
		snprintf(err, sizeof(err), "channel '%s' is not configured", j->c.channel);
		settle(j, 1, -1, err);
		return;
	}
	if (build_body(j) != 0) {
		settle(j, 1, -1, "out of memory building the notification");
		return;
	}
	if (j->type == D_WEBHOOK)
		start_webhook(d, j);
	else
		start_command(d, j);
}

wq_rc wq__deliver_claim(struct wq__deliver *d, const char *instance, wq_error *err)
{
	struct wq__delivery_claimed *got = NULL;
	size_t n = 0;
	int free_slots;
	wq_rc rc;

	if (!d || d->closing)
		return WQ_OK;
	free_slots = d->slots - d->inflight;
	if (free_slots <= 0)
		return WQ_OK;
	WQ__STORE_RETRY(rc, d->o.db, delivery_claim, instance, free_slots, wq_now(), &got, &n,
			err);
	if (rc != WQ_OK)
		return rc;
	d->last_claim_empty = n == 0;
	for (size_t i = 0; i < n; i++)
		start_delivery(d, &got[i], instance);
	free(got);
	return WQ_OK;
}

int wq__deliver_inflight(const struct wq__deliver *d)
{
	return d ? d->inflight : 0;
}

int wq__deliver_keeps_alive(struct wq__deliver *d, int64_t horizon_end)
{
	int64_t due = 0;
	wq_error e;
	wq_rc rc;

	if (!d)
		return 0;
	if (d->inflight > 0 || !d->last_claim_empty)
		return 1;
	WQ__STORE_RETRY(rc, d->o.db, delivery_next, &due, &e);
	if (rc != WQ_OK) {
		d->o.log(d->o.ud, "error", "next delivery: %s", e.message);
		return 1;
	}
	return due != 0 && due <= horizon_end;
}

void wq__deliver_recover(struct wq__deliver *d, const char *instance)
{
	int64_t *held = NULL;
	size_t n = 0;
	int count = 0;
	wq_error e;
	wq_rc rc;

	if (!d || d->closing)
		return;
	if (d->inflight > 0) {
		held = malloc((size_t)d->inflight * sizeof(*held));
		if (!held)
			return; /* next time */
		for (struct djob *j = d->jobs; j; j = j->next)
			held[n++] = j->c.id;
	}
	WQ__STORE_RETRY(rc, d->o.db, delivery_recover, instance, held, n, wq_now(), &count, &e);
	free(held);
	if (rc != WQ_OK)
		d->o.log(d->o.ud, "error", "delivery recovery: %s", e.message);
	else if (count > 0)
		d->o.log(d->o.ud, "warning",
			 "%d delivery(ies) found sending with no live sender: back to pending; "
			 "whether the receiver got them is unknown (delivery-uncertain on the "
			 "timeline)",
			 count);
}

static void stop_all(struct wq__deliver *d)
{
	for (struct djob *j = d->jobs; j; j = j->next) {
		if (j->unrecorded)
			continue; /* nothing running: only its outcome waits (see offer) */
		j->aborted = 1;
		if (j->type == D_WEBHOOK) {
			atomic_store(&j->stop, 1);
			uv_cancel((uv_req_t *)&j->work); /* only if it has not started yet */
		} else if (j->sp) {
			wq__spawn_kill(j->sp);
		}
	}
}

void wq__deliver_abort(struct wq__deliver *d)
{
	if (d)
		stop_all(d);
}

void wq__deliver_close(struct wq__deliver *d)
{
	if (!d)
		return;
	d->closing = 1;
	stop_all(d);
}

/* ------------------------------------------------------------------ lifecycle ---- */

wq_rc wq__deliver_new(const struct wq__deliver_opts *o, struct wq__deliver **out,
		      wq_error *err)
{
	struct wq__deliver *d;

	if (!o || !o->loop || !o->db || !o->cfg || !o->log)
		return wq__err(err, WQ_EINVAL, "wq__deliver_new: loop, db, cfg and log are required");
	d = calloc(1, sizeof(*d));
	if (!d)
		return wq__err(err, WQ_ENOMEM, "out of memory (delivery slots)");
	d->o = *o;
	d->slots = o->cfg->delivery_concurrency > 0 ? o->cfg->delivery_concurrency : 1;
	d->last_claim_empty = 1;
	*out = d;
	return WQ_OK;
}

void wq__deliver_free(struct wq__deliver *d)
{
	if (!d)
		return;
	while (d->jobs) {
		struct djob *j = d->jobs;

		d->jobs = j->next;
		free(j->body);
		free(j);
	}
	free(d);
}
