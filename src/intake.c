/*
 * intake.c — the worker's mailbox sources (issue 13; SPEC §9): a timer on the worker's
 * loop, and per source one piece of work at a time on libuv's thread pool.
 *
 * A source's cycle, each step a pool job whose result the loop records:
 *   acknowledge  claim the due acknowledgements (store), set the flag at the source
 *                (pool), record each answer (store: acknowledged / abandoned, or again
 *                later with a backoff). Acknowledgements go first: they finish work.
 *   poll         list the unacknowledged messages (pool); a changed UIDVALIDITY retires
 *                the old records (store); the keys not yet recorded (store) are fetched
 *                in batches (pool) and each recorded with its task in one transaction
 *                (store). A poll that recorded something is followed by another at
 *                once, so "a poll found nothing new" (--until-idle) means what it says.
 * Invariant: nothing here acknowledges a message whose record is not handled or giving
 * up (the store hands out only those), and a record changes only after the source said
 * yes (intake_ack_finish).
 */
#include "intake.h"
#include "instance.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN_BATCH 256           /* keys per intake_known read */
#define FETCH_BATCH 32            /* messages per pool job */
#define ACK_BATCH 64              /* acknowledgements per pool job */
#define ACK_LEASE (60 * WQ__US_PER_S) /* a claimed acknowledgement's owner lease */
#define ACK_BACKOFF_BASE WQ__US_PER_S
#define ACK_BACKOFF_MAX (300 * WQ__US_PER_S)

enum step { ST_IDLE = 0, ST_LIST, ST_FETCH, ST_ACK };

struct src {
	struct wq__intake *in;
	const struct wq__source_config *c;
	const struct wq__intake_backend *be;
	void *conn;            /* the backend's; used by one pool job at a time */
	uv_work_t work;
	enum step step;        /* in flight; ST_IDLE when none */
	int64_t next_poll;
	int clean;             /* the last complete poll recorded nothing new */
	int list_failing;      /* a failed listing is logged once until one works */
	int recorded;          /* records this poll created */
	/* the poll in progress */
	int64_t uidvalidity;
	struct wq__intake_item *unrecorded; /* not yet recorded, to fetch (owned) */
	size_t nunrecorded, next; /* fetched [0, next); the job works on [next, batch_end) */
	size_t batch_end;
	char err[WQ__INTAKE_ERR];
	int failed;
	/* the acknowledgements in flight */
	struct wq__intake_ack_row *acks;
	size_t nacks;
	int *ack_ok;
	char (*ack_errs)[WQ__INTAKE_ERR];
};

struct wq__intake {
	uv_loop_t *loop;
	wq_db *db;
	const wq_config *cfg;
	const char *instance;  /* the worker's current id ("" until registered) */
	wq__intake_log_fn log;
	void *log_ud;
	uv_timer_t timer;
	int timer_open, stopping;
	struct src *srcs;
	size_t n;
};

static void step(struct src *s);

/* ---- pool jobs (no store, no log: results go back to the loop) ---- */

static void work_list(uv_work_t *req)
{
	struct src *s = req->data;

	s->failed = s->be->list(s->conn, s->c, &s->uidvalidity, &s->unrecorded, &s->nunrecorded, s->err,
				sizeof(s->err)) != 0;
}

static void work_fetch(uv_work_t *req)
{
	struct src *s = req->data;

	for (size_t i = s->next; i < s->batch_end; i++)
		s->unrecorded[i].error[0] = '\0', s->be->fetch(s->conn, s->c, s->uidvalidity, &s->unrecorded[i]);
}

static void work_ack(uv_work_t *req)
{
	struct src *s = req->data;

	s->be->ack(s->conn, s->c, s->acks, s->nacks, s->ack_ok, s->ack_errs);
}

static int queue(struct src *s, enum step st, uv_work_cb fn, uv_after_work_cb after)
{
	s->step = st;
	s->work.data = s;
	if (uv_queue_work(s->in->loop, &s->work, fn, after) != 0) {
		s->step = ST_IDLE;
		return -1;
	}
	return 0;
}

/* ---- acknowledgements ---- */

static int64_t ack_backoff(int attempts)
{
	int64_t d = ACK_BACKOFF_BASE;

	for (int i = 1; i < attempts && d < ACK_BACKOFF_MAX; i++)
		d *= 2;
	return d < ACK_BACKOFF_MAX ? d : ACK_BACKOFF_MAX;
}

static void acks_free(struct src *s)
{
	free(s->acks);
	free(s->ack_ok);
	free(s->ack_errs);
	s->acks = NULL;
	s->ack_ok = NULL;
	s->ack_errs = NULL;
	s->nacks = 0;
}

/* The answer for one acknowledgement, recorded; the give-up's log line once recorded. */
static void ack_record(struct src *s, size_t i)
{
	struct wq__intake *in = s->in;
	const struct wq__intake_ack_row *r = &s->acks[i];
	struct wq__intake_acked out;
	struct wq__intake_ack a = {
		.id = r->id, .ack_attempts = r->ack_attempts, .instance = in->instance,
		.ok = s->ack_ok[i], .error = s->ack_errs[i], .now = wq_now(),
	};
	wq_error e;
	wq_rc rc;

	a.next_at = a.now + ack_backoff(r->ack_attempts);
	WQ__STORE_RETRY(rc, in->db, intake_ack_finish, &a, &out, &e);
	if (rc != WQ_OK) {
		/* the record keeps its owner until the lease ends; then it is claimed and the
		 * (idempotent) acknowledgement sent again */
		in->log(in->log_ud, "warning", "intake %s: recording the acknowledgement of %s: %s",
			s->c->name, r->key, e.message);
		return;
	}
	wq__failpoint("intake-acked"); /* crash tests: the answer recorded, not yet logged */
	if (!a.ok)
		in->log(in->log_ud, "warning",
			"intake %s: acknowledging message %s failed (attempt %d): %s; again in %s",
			s->c->name, r->key, r->ack_attempts, a.error,
			wq_duration_format(a.next_at - a.now, (char[32]){0}, 32));
	else if (strcmp(out.state, "abandoned") == 0)
		/* SPEC §9: the first of the give-up's two channels (the operators' inbox got
		 * the second in the same transaction) */
		in->log(in->log_ud, "error",
			"intake %s: message %s abandoned after %d handouts (task %" PRId64 " "
			"failed); acknowledged at the source and reported to inbox:%s",
			s->c->name, out.key, out.handouts, out.task_id, out.operators);
	else
		in->log(in->log_ud, "info", "intake %s: message %s acknowledged (%s, task %" PRId64
			")", s->c->name, out.key, out.outcome, out.task_id);
}

static void after_ack(uv_work_t *req, int status)
{
	struct src *s = req->data;

	s->step = ST_IDLE;
	for (size_t i = 0; i < s->nacks; i++) {
		if (status != 0) { /* cancelled: nothing was sent */
			s->ack_ok[i] = 0;
			snprintf(s->ack_errs[i], sizeof(s->ack_errs[i]), "not sent (worker stopping)");
		}
		ack_record(s, i);
	}
	acks_free(s);
	step(s);
}

/* Claims the due acknowledgements and sends them; 1 when a job started. */
static int start_acks(struct src *s)
{
	struct wq__intake *in = s->in;
	int64_t now = wq_now();
	wq_error e;
	wq_rc rc;

	if (!in->instance[0])
		return 0;
	/* the lease's length: the store measures it on its own clock (issue 15) */
	WQ__STORE_RETRY(rc, in->db, intake_ack_claim, in->instance, s->c->name, ACK_BATCH, now,
			ACK_LEASE, &s->acks, &s->nacks, &e);
	if (rc != WQ_OK) {
		in->log(in->log_ud, "warning", "intake %s: claiming acknowledgements: %s",
			s->c->name, e.message);
		return 0;
	}
	if (s->nacks == 0)
		return 0;
	/* crash tests: stop between the claim (its task handled) and the source's flag */
	wq__failpoint("intake_ack_send");
	s->ack_ok = calloc(s->nacks, sizeof(*s->ack_ok));
	s->ack_errs = calloc(s->nacks, sizeof(*s->ack_errs));
	if (!s->ack_ok || !s->ack_errs || queue(s, ST_ACK, work_ack, after_ack) != 0) {
		/* claimed but not sent: the lease runs out and another claim sends them */
		in->log(in->log_ud, "warning", "intake %s: cannot send acknowledgements now",
			s->c->name);
		acks_free(s);
		return 0;
	}
	return 1;
}

/* ---- polls ---- */

static void poll_done(struct src *s)
{
	wq__intake_items_free(s->unrecorded, s->nunrecorded);
	s->unrecorded = NULL;
	s->nunrecorded = s->next = s->batch_end = 0;
	s->clean = s->recorded == 0;
	/* after a poll that found something, the next comes at once: it will find that
	 * nothing is new (or the next arrivals) */
	s->next_poll = s->recorded ? 0 : wq_now() + s->c->poll;
}

/* Records one fetched message with its task (one transaction). */
static void record(struct src *s, struct wq__intake_item *it)
{
	struct wq__intake *in = s->in;
	char op[WQ_KEY_MAX + 1], sha[WQ_SHA256_HEX], fp[WQ_SHA256_HEX];
	struct wq__intake_msg m;
	int64_t task_id = 0;
	wq_error e;
	wq_rc rc;

	snprintf(op, sizeof(op), "intake:%s:%s", s->c->name, it->key);
	memset(&m, 0, sizeof(m));
	m.source = s->c->name;
	m.key = it->key;
	m.operators = wq__source_operators(in->cfg, s->c);
	m.uidvalidity = s->uidvalidity;
	m.uid = it->uid;
	m.size = it->size;
	m.max_handouts = s->c->max_handouts;
	wq__sha256_hex(it->payload, it->payload_len, sha);
	if ((rc = wq__fingerprint(it->payload, it->payload_len, WQ_INTAKE_PAYLOAD_VERSION, fp,
				  &e)) != WQ_OK)
		goto fail;
	m.task.kind = s->c->kind;
	m.task.tenant = "";
	m.task.scope = "";
	m.task.operation = op;
	m.task.key = op;
	m.task.payload = it->payload;
	m.task.payload_len = it->payload_len;
	m.task.payload_version = WQ_INTAKE_PAYLOAD_VERSION;
	m.task.payload_sha256 = sha;
	m.task.fingerprint = fp;
	m.task.max_attempts = s->c->max_handouts; /* SPEC §9: max_handouts is the limit */
	m.task.now = m.task.due_at = m.task.order_at = wq_now();
	WQ__STORE_RETRY(rc, in->db, intake_record, &m, &task_id, &e);
	if (rc != WQ_OK)
		goto fail;
	wq__failpoint("intake-recorded"); /* crash tests: record and task committed */
	if (task_id > 0) {
		s->recorded++;
		in->log(in->log_ud, "info", "intake %s: message %s is task %" PRId64 " (%" PRId64
			" bytes)", s->c->name, it->key, task_id, it->size);
	}
	return;
fail:
	/* not recorded: the message stays unacknowledged and the next poll offers it again */
	in->log(in->log_ud, "warning", "intake %s: recording message %s: %s", s->c->name,
		it->key, e.message);
}

static void fetch_next(struct src *s);

static void after_fetch(uv_work_t *req, int status)
{
	struct src *s = req->data;

	s->step = ST_IDLE;
	for (size_t i = s->next; status == 0 && i < s->batch_end; i++) {
		if (s->unrecorded[i].payload)
			record(s, &s->unrecorded[i]);
		else
			s->in->log(s->in->log_ud, "warning", "intake %s: reading message %s: %s",
				   s->c->name, s->unrecorded[i].key, s->unrecorded[i].error);
	}
	s->next = s->batch_end;
	if (status != 0 || s->in->stopping || s->next >= s->nunrecorded) {
		poll_done(s);
		step(s);
		return;
	}
	fetch_next(s);
}

static void fetch_next(struct src *s)
{
	s->batch_end = s->next + FETCH_BATCH < s->nunrecorded ? s->next + FETCH_BATCH : s->nunrecorded;
	if (queue(s, ST_FETCH, work_fetch, after_fetch) != 0)
		poll_done(s);
}

/* Keeps in s->unrecorded only the keys the store has no record of. */
static int drop_known(struct src *s, wq_error *e)
{
	const char *keys[KNOWN_BATCH];
	unsigned char known[KNOWN_BATCH];
	size_t i, j, o = 0;
	wq_rc rc;

	for (i = 0; i < s->nunrecorded; i += KNOWN_BATCH) {
		size_t n = s->nunrecorded - i < KNOWN_BATCH ? s->nunrecorded - i : KNOWN_BATCH;

		for (j = 0; j < n; j++)
			keys[j] = s->unrecorded[i + j].key;
		WQ__STORE_RETRY(rc, s->in->db, intake_known, s->c->name, keys, n, known, e);
		if (rc != WQ_OK) { /* keep what is still owned: [0, o) and [i, nunrecorded) */
			memmove(s->unrecorded + o, s->unrecorded + i, (s->nunrecorded - i) * sizeof(*s->unrecorded));
			s->nunrecorded = o + (s->nunrecorded - i);
			return -1;
		}
		for (j = 0; j < n; j++) {
			struct wq__intake_item *it = &s->unrecorded[i + j];

			if (known[j]) {
				free(it->ref);
				free(it->payload);
			} else {
				s->unrecorded[o++] = *it;
			}
		}
	}
	s->nunrecorded = o;
	return 0;
}

static void after_list(uv_work_t *req, int status)
{
	struct src *s = req->data;
	struct wq__intake *in = s->in;
	int retired = 0;
	wq_error e;
	wq_rc rc = WQ_OK;

	s->step = ST_IDLE;
	s->recorded = 0;
	if (status != 0 || s->failed) {
		if (status == 0 && !s->list_failing)
			in->log(in->log_ud, "warning", "intake %s: polling: %s", s->c->name, s->err);
		s->list_failing = status == 0;
		s->nunrecorded = 0;
		poll_done(s);
		s->clean = 0; /* a failed poll did not find "nothing new" */
		step(s);
		return;
	}
	if (s->list_failing)
		in->log(in->log_ud, "info", "intake %s: polling works again", s->c->name);
	s->list_failing = 0;
	if (s->uidvalidity > 0) {
		WQ__STORE_RETRY(rc, in->db, intake_retire, s->c->name, s->uidvalidity, wq_now(),
				&retired, &e);
		if (rc == WQ_OK && retired > 0)
			in->log(in->log_ud, "warning",
				"intake %s: the mailbox's UIDVALIDITY is now %" PRId64 ": %d records "
				"of the old one retired, the mailbox is read again",
				s->c->name, s->uidvalidity, retired);
	}
	if (rc == WQ_OK && drop_known(s, &e) != 0)
		rc = e.code ? e.code : WQ_EIO;
	if (rc != WQ_OK) {
		in->log(in->log_ud, "warning", "intake %s: %s", s->c->name, e.message);
		poll_done(s);
		s->clean = 0;
		step(s);
		return;
	}
	if (s->nunrecorded == 0 || in->stopping) {
		poll_done(s);
		step(s);
		return;
	}
	s->next = 0;
	fetch_next(s);
}

/* The source's next piece of work, if it has none in flight: acknowledgements first,
 * then a due poll. */
static void step(struct src *s)
{
	if (s->step != ST_IDLE || s->in->stopping)
		return;
	if (start_acks(s))
		return;
	if (wq_now() < s->next_poll)
		return;
	s->unrecorded = NULL;
	s->nunrecorded = 0;
	s->err[0] = '\0';
	if (queue(s, ST_LIST, work_list, after_list) != 0)
		s->next_poll = wq_now() + s->c->poll;
}

static void on_tick(uv_timer_t *t)
{
	struct wq__intake *in = t->data;

	for (size_t i = 0; i < in->n; i++)
		step(&in->srcs[i]);
}

/* ---- the worker's hooks ---- */

wq_rc wq__intake_new(uv_loop_t *loop, wq_db *db, const wq_config *cfg, const char *instance,
		     wq__intake_log_fn log, void *log_ud, struct wq__intake **out,
		     wq_error *err)
{
	struct wq__intake *in;
	wq_rc rc;

	*out = NULL;
	if (!cfg->nsources)
		return WQ_OK;
	if (!(in = calloc(1, sizeof(*in))) || !(in->srcs = calloc(cfg->nsources, sizeof(struct src)))) {
		free(in);
		return wq__err(err, WQ_ENOMEM, "out of memory (intake)");
	}
	in->loop = loop;
	in->db = db;
	in->cfg = cfg;
	in->instance = instance;
	in->log = log;
	in->log_ud = log_ud;
	for (size_t i = 0; i < cfg->nsources; i++) {
		struct src *s = &in->srcs[i];

		s->in = in;
		s->c = &cfg->sources[i];
		s->be = s->c->type == WQ__SOURCE_IMAP ? &wq__intake_imap : &wq__intake_maildir;
		if ((rc = s->be->open(s->c, &s->conn, err)) != WQ_OK) {
			wq__intake_free(in);
			return rc;
		}
		in->n++;
	}
	uv_timer_init(loop, &in->timer);
	in->timer.data = in;
	in->timer_open = 1;
	*out = in;
	return WQ_OK;
}

void wq__intake_start(struct wq__intake *in)
{
	uint64_t ms;

	if (!in)
		return;
	/* the worker's own poll interval: an acknowledgement is sent within one tick of
	 * its task's outcome; each source polls its mailbox on its own `poll` */
	ms = (uint64_t)((in->cfg->poll_interval + 999) / 1000);
	uv_timer_start(&in->timer, on_tick, 0, ms ? ms : 1);
}

void wq__intake_stop(struct wq__intake *in)
{
	if (!in)
		return;
	in->stopping = 1;
	if (in->timer_open && !uv_is_closing((uv_handle_t *)&in->timer))
		uv_close((uv_handle_t *)&in->timer, NULL);
}

int wq__intake_keeps_alive(struct wq__intake *in)
{
	int64_t waiting = 0;
	wq_error e;
	wq_rc rc;

	if (!in)
		return 0;
	for (size_t i = 0; i < in->n; i++)
		if (in->srcs[i].step != ST_IDLE || !in->srcs[i].clean)
			return 1;
	for (size_t i = 0; i < in->n; i++) {
		WQ__STORE_RETRY(rc, in->db, intake_acks_waiting, in->srcs[i].c->name, &waiting,
				&e);
		if (rc != WQ_OK || waiting > 0)
			return 1;
	}
	return 0;
}

/* After the loop ran to its end: no job is in flight and the timer is closed. */
void wq__intake_free(struct wq__intake *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n; i++) {
		struct src *s = &in->srcs[i];

		s->be->close(s->conn);
		wq__intake_items_free(s->unrecorded, s->nunrecorded);
		acks_free(s);
	}
	free(in->srcs);
	free(in);
}
