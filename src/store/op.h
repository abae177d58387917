/*
 * op.h — what the store operations (op_*.c) share: the store handle and the helpers of
 * sql.c through which they reach a driver. Every operation: validate (WQ_EINVAL, nothing
 * touched), wq__begin, statements (wq__run, wq__select, ...), wq__end, which commits when
 * the body succeeded or asked to keep its writes (s->keep), and rolls back otherwise.
 */
#ifndef WQ_STORE_OP_H
#define WQ_STORE_OP_H

#include "internal.h"
#include "evidence.h"
#include "sql.h"
#include "statements.h"

#include <stdarg.h>

#include <jansson.h>

/* Claims whose COMMIT answer was lost, remembered at most (consecutive losses). */
#define WQ__LOST_CLAIMS_MAX 8
/* wave7 drain: the most queued events (struct wq__store's evq), the rows of the largest
 * multi-row event insert (SQL_EVENTS_INSERT_AT32) */
#define WQ__EVQ_MAX 32
#define WQ__NOTE_MAX 200

struct wq__store {
	const struct wq__sql_driver *drv;
	struct wq__conn *c; /* owned */
	const struct wq__dialect *d;
	/* Within wq__begin..wq__end: */
	int keep;        /* commit although the body returns an error (stale, conflict) */
	int retry_safe;  /* a repeat of this operation recognises its own earlier commit: a
			  * lost COMMIT answer is WQ_EBUSY (retry), not WQ_EUNKNOWN */
	int commit_lost; /* the last wq__end lost its COMMIT answer */
	/* Within an enqueue: its operation (the key, or the generated id), for the message
	 * of a lost COMMIT answer (wq__sql_fail); NULL otherwise. */
	const char *lost_op;
	int lost_op_keyed;
	int last_sqlerr; /* enum wq__sqlerr of the last failure wq__sql_fail worded */
	/* Claims whose COMMIT answer was lost (since the last claim that got one): the
	 * tasks they may have taken run under lost_instance since these times, and no one
	 * will run them unless this handle does (op_claim.c). */
	int64_t lost_claims[WQ__LOST_CLAIMS_MAX];
	int nlost_claims;
	char lost_instance[WQ_NAME_MAX + 1];
	/* Wake-ups without NOTIFY (SQLite, op_wake.c): the wake-up file (owned; NULL for
	 * ":memory:"), and within wq__begin..wq__end whether wq__notify asked for a poke
	 * after the commit. */
	struct wq__wakefile *wake;
	int poke;
	/* wave4 batch (op_rows.c): within a write transaction that called wq__rows_on, the
	 * events and attempt finishes it writes, each kind of row written by one statement
	 * just before COMMIT (wq__end); the buffers are kept for the next transaction.
	 * facts: the batch's tasks read in one statement (finish_batch), NULL otherwise. */
	int rows_on;
	struct wq__rowbuf {
		char *p; /* owned: JSON array text being built, "[" ... */
		size_t n, cap, rows;
		int bad; /* out of memory while appending: the transaction fails */
	} ev_rows, att_rows;
	const struct wq__task_facts *facts;
	size_t nfacts;
	/* Within wq__begin..wq__end (in_tx): the store's clock once read (0: not yet), so a
	 * claim taking several lock keys reads it once, after its claim statement. */
	int in_tx;
	int64_t clock_now;
	/* wave5 pgw (op_finish_many.c): within finish_batch, the outcomes recorded by the
	 * multi-row UPDATE (owned, in task id order), NULL otherwise. */
	struct wq__fin_many *fin_many;
	size_t nfin_many;
	/* wave6 sqcpu (sql.c event_counted, SQLite): within wq__begin..wq__end, the id the
	 * next event takes, counted on from one read of the highest id events ever had
	 * (0: not read yet). Valid while every event of the transaction went through it:
	 * any other statement that inserts into events (statements.h WQ__SQL_EVENT_WRITERS)
	 * sets it back to 0 (query). The write lock (or, for a transaction that began
	 * reading, SQLite's refusal of a write on an outdated snapshot) keeps other
	 * connections' events out meanwhile. A rolled-back savepoint leaves a gap in the
	 * ids, never a repeat. */
	int64_t ev_next;
	/* wave7 drain (sql.c, SQLite): within wq__begin..wq__end, the counted events not
	 * written yet, in id order: written WQ__EVQ_MAX rows per statement when the queue
	 * fills, before any statement of WQ__SQL_EVENT_WRITERS or WQ__SQL_EVENT_BARRIERS
	 * (statements.h), and before COMMIT; dropped with a rollback. Nothing else in a
	 * transaction reads events. text: owned, "type\0instance\0detail\0". */
	struct wq__evq_row {
		int64_t id, task_id, at;
		int attempt;
		char *text;
	} evq[WQ__EVQ_MAX];
	int nevq;
};

/* Arguments of one statement: `WQ__ARGS(WQ__AI(id), WQ__AT(name))` expands to the array
 * and its count. */
#define WQ__ARGS(...)                                                                      \
	((const struct wq__arg[]){__VA_ARGS__}),                                           \
		(int)(sizeof((const struct wq__arg[]){__VA_ARGS__}) / sizeof(struct wq__arg))
#define WQ__NOARGS NULL, 0

/* One row of a query, handed to a row function. */
struct wq__row {
	struct wq__store *s;
	struct wq__cursor *cur;
};

/* Called once per row; a non-zero return stops the query with that code (WQ_ENOMEM:
 * worded by the caller of the query). */
typedef wq_rc (*wq__row_fn)(const struct wq__row *r, void *ctx);

/* ---- sql.c ---- */

/* Words a driver failure (enum wq__sqlerr) as a wq_rc with a message. */
wq_rc wq__sql_fail(struct wq__store *s, int sqlerr, const char *what, wq_error *err);

wq_rc wq__begin(struct wq__store *s, int write, wq_error *err);
/* Ends the transaction: commits when rc is WQ_OK or s->keep is set, else rolls back.
 * Returns rc, or the commit's failure. */
wq_rc wq__end(struct wq__store *s, wq_rc rc, wq_error *err);

/* Runs a statement that returns no rows the caller needs; *changes (may be NULL) gets
 * its row count. */
wq_rc wq__run(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *changes,
	      const char *what, wq_error *err);
/* An INSERT ... D_RETURNING_ID: *newid is the new row's id, 0 when it inserted nothing
 * (ON CONFLICT DO NOTHING). */
wq_rc wq__insert(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *newid,
		 const char *what, wq_error *err);
/* One write statement in its own write transaction; safe to repeat (a lost COMMIT
 * answer is WQ_EBUSY). */
wq_rc wq__write1(struct wq__store *s, int id, const struct wq__arg *a, int n, int64_t *changes,
		 const char *what, wq_error *err);
/* Runs a query, calling fn for each row (fn may be NULL: rows are counted only);
 * *nrows (may be NULL) gets how many rows came. Outside a transaction: reads only. */
wq_rc wq__rows(struct wq__store *s, int id, const struct wq__arg *a, int n, wq__row_fn fn,
	       void *ctx, size_t *nrows, const char *what, wq_error *err);

/* Where the columns of a row go in a struct, one entry per column in order: type 'i' an
 * integer field (int or int64_t by its size), 's' a char array, 'S' a wq_state, 'D' a
 * wq_delivery_state (by name), 'x' an exit status (NULL: -1). */
struct wq__col {
	char type;
	unsigned short off, size;
};
#define WQ__COL(type, st, f)                                                               \
	{ type, (unsigned short)offsetof(st, f), (unsigned short)sizeof(((st *)0)->f) }
#define WQ__COLS(arr) (arr), WQ__ARRAY_LEN(arr)
/* wq__select: the rows, filled by cols, into a malloc'd array of `size`-byte elements
 * handed out in *(T **)out (NULL when there are none) and *cnt. wq__select1: the (last)
 * row into dst, and how many rows came into *found (may be NULL). */
wq_rc wq__select(struct wq__store *s, int id, const struct wq__arg *a, int n,
		 const struct wq__col *cols, size_t ncols, size_t size, void *out, size_t *cnt,
		 const char *what, wq_error *err);
wq_rc wq__select1(struct wq__store *s, int id, const struct wq__arg *a, int n,
		  const struct wq__col *cols, size_t ncols, void *dst, size_t *found,
		  const char *what, wq_error *err);

/* Column reads of the current row (sql.h: text is "" for NULL, valid until the next row). */
#define wq__i64(r, col) ((r)->s->drv->col_i64((r)->cur, (col)))
#define wq__int(r, col) ((int)wq__i64(r, col))
#define wq__null(r, col) ((r)->s->drv->is_null((r)->cur, (col)))
#define wq__text(r, col, len) ((r)->s->drv->col_text((r)->cur, (col), (len)))
#define wq__str(r, col, dst, dstsz) wq__strlcpy((dst), wq__text(r, col, NULL), (dstsz))
/* A row function: column 0 as int64 (NULL: 0) into *(int64_t *)ctx. */
wq_rc wq__read_i64(const struct wq__row *r, void *ctx);

/* A growable array of `size`-byte elements. */
struct wq__vec {
	void *p;
	size_t n, cap, size;
};
/* A zeroed new last element, or NULL (out of memory). */
void *wq__push(struct wq__vec *v);

/* Appends one event; `detail` (NULL: "{}") is consumed. */
wq_rc wq__event(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		const char *type, const char *instance, json_t *detail, wq_error *err);
/* Appends one event whose detail is built from fmt, each letter taking its arguments:
 *   a  attempt_id: (int64_t task_id, int attempt)
 *   s  (const char *key, const char *text, int max): always set (NULL: "")
 *   S  the same, left out when text is NULL or ""
 *   i  (const char *key, int64_t v)     I  the same, left out when v < 0
 *   t  (const char *key, int64_t µs), as RFC 3339
 *   b  (const char *key, int) as a JSON boolean
 * Text is made valid UTF-8 and cut to max bytes (wq__jset_str). Pass int64_t where it
 * says so (cast). */
wq_rc wq__eventf(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		 const char *type, const char *instance, wq_error *err, const char *fmt, ...);
/* wave5 drain (op_detail.c): the detail text wq__eventf's fmt and arguments make, written
 * into buf without a jansson object; its length, or -1 when the jansson path must write
 * it (it would be cut, a key repeats, ...). */
int wq__detail_fast(char *buf, size_t sz, const char *fmt, va_list ap);
int wq__detail_fastf(char *buf, size_t sz, const char *fmt, ...);
/* The `accepted` event's fields in wq__detailf's format: written once for every path
 * that records an acceptance (enqueue_body, op_enqueue_one.c, op_enqueue_rows.c). */
#define ACCEPTED_FIELDS(t)                                                                 \
	"sitisiisb", "kind", (t)->kind, WQ_KIND_MAX, "priority", (int64_t)(t)->priority,   \
	    "due_at", (t)->due_at, "payload_size", (int64_t)(t)->payload_len,              \
	    "payload_sha256", (t)->payload_sha256, WQ_SHA256_HEX - 1, "payload_version",   \
	    (int64_t)(t)->payload_version, "max_attempts", (int64_t)(t)->max_attempts,     \
	    "fingerprint", (t)->fingerprint, WQ_SHA256_HEX - 1, "keyed", (t)->key != NULL

/* issue 11 (op_detail.c): wq__detail_fast of ACCEPTED_FIELDS(t), written without the
 * format: the same text or -1 the same way, at a third of the cost. */
int wq__detail_accepted(char *buf, size_t sz, const struct wq__new_task *t);
/* The detail object wq__eventf would append (the caller owns it), or NULL with *err. */
json_t *wq__detailf(wq_error *err, const char *fmt, ...);
/* Within a write transaction: wakes LISTENing workers when it commits (drivers with
 * WQ__SQL_CAP_NOTIFY; nothing otherwise). */
wq_rc wq__notify(struct wq__store *s, wq_error *err);

/* The JSON array text of strings / integers (for D_TEXTS / D_IDS); malloc'd. */
wq_rc wq__json_texts(const char *const *v, size_t n, const char *what, char **out,
		     wq_error *err);
wq_rc wq__json_ids(const int64_t *v, size_t n, char **out, wq_error *err);

/* ---- encodings (op_task.c): the store writes wq_state_name() and
 * wq_delivery_state_name() (one table each, state.c and outbox.c); 0 for unknown text ---- */
wq_state wq__state_parse(const char *text);
wq_delivery_state wq__delivery_state_parse(const char *text);
const char *wq__finish_text(enum wq__finish_kind k); /* "succeeded", "retry", ... */

static inline const char *wq__nz(const char *s)
{
	return s ? s : "";
}

/* ---- shared between op files ---- */

/* op_claim.c: reads and interrupts running tasks with reason; see interrupt_rows. */
wq_rc wq__interrupt(struct wq__store *s, int id, const struct wq__arg *a, int n,
		    const char *reason, int64_t now, int *count, wq_error *err);
/* op_outbox.c: within finish() of a succeeded task, its deliveries. */
wq_rc wq__deliveries_queue(struct wq__store *s, int64_t task_id, int64_t now, wq_error *err);
/* op_effect.c: the open effect of an attempt, and its note. */
struct wq__open_effect {
	char name[WQ_EFFECT_NAME_MAX + 1]; /* "" when none */
	char note[WQ_DETAIL_MAX + 1];      /* "effect X begun, not confirmed" */
};
wq_rc wq__open_effect(struct wq__store *s, int64_t task_id, int attempt,
		      struct wq__open_effect *oe, wq_error *err);
/* op_task.c: WQ_OK when the task exists, WQ_ENOTFOUND otherwise. */
wq_rc wq__task_exists(struct wq__store *s, int64_t id, wq_error *err);
/* op_task.c: within a write transaction, the state of a task (row-locked where the
 * dialect locks rows), or WQ_ENOTFOUND. */
struct wq__task_state {
	char state[16];
	int attempt;
	char instance[WQ_NAME_MAX + 1];
	int cancel_requested;
	char uncertain[WQ_EFFECT_NAME_MAX + 1]; /* the effect its attempt found uncertain */
};
wq_rc wq__task_state(struct wq__store *s, int64_t id, struct wq__task_state *ts,
		     wq_error *err);
/* op_task.c: the rows of query `id` about one existing task (WQ_ENOTFOUND otherwise),
 * read in one transaction as wq__select does. */
wq_rc wq__task_rows(struct wq__store *s, int id, int64_t task_id, const struct wq__col *cols,
		    size_t ncols, size_t size, void *out, size_t *n, const char *what,
		    wq_error *err);

/* op_task.c: the columns of WQ__TASK_COLUMNS into a wq_task. */
extern const struct wq__col *const wq__task_cols;
extern const size_t wq__task_ncols;
/* op_task.c: enqueue's body within the caller's write transaction (the schedules'
 * firing, op_schedule.c: the same operation-key idempotency as wq_enqueue). */
wq_rc wq__enqueue_in(struct wq__store *s, const struct wq__new_task *t,
		     struct wq__enqueued_row *out, wq_error *err);
/* op_task.c: the detail text of new task t's `accepted` event: in buf (bufsz at least
 * WQ__DETAIL_MAX + 1 for the fast path), else in *owned (the caller frees it); NULL with
 * *err when out of memory. */
const char *wq__accepted_text(const struct wq__new_task *t, char *buf, size_t bufsz,
			      char **owned, wq_error *err);
/* op_enqueue_one.c (wave 4): on a driver with WQ__SQL_CAP_AUTOCOMMIT (PostgreSQL), t as
 * a NEW task in one autocommitted statement (operation row, task, `accepted` event,
 * NOTIFY): one round trip. WQ__ENQUEUE_ONE_NO when it does not apply (SQLite, a limit,
 * a lock key) or the key exists already (nothing was written): the caller then runs the
 * transactional path, which replays or reports the conflict. payload: NUL-terminated. */
#define WQ__ENQUEUE_ONE_NO ((wq_rc)-1)
wq_rc wq__enqueue_one(struct wq__store *s, const struct wq__new_task *t, const char *payload,
		      struct wq__enqueued_row *row, wq_error *err);
/* The same within the caller's write transaction (a group commit): a failure leaves the
 * transaction unusable on PostgreSQL. */
wq_rc wq__enqueue_one_in(struct wq__store *s, const struct wq__new_task *t,
			 const char *payload, struct wq__enqueued_row *row, wq_error *err);
/* op_task.c: the store's own checks of a task before its transaction (kind, operation,
 * hashes present; texts valid UTF-8). */
wq_rc wq__enqueue_store_check(const struct wq__new_task *t, wq_error *err);
/* op_claim.c: finish()'s body for one outcome inside an open write transaction (the
 * batch's too); WQ_ESTALE sets s->keep. */
wq_rc wq__finish_in(struct wq__store *s, const struct wq__outcome *in, wq_error *err);
/* op_lock.c (issue 10): within claim(), take the key of each newly claimed task
 * (WQ_EBUSY when one was taken concurrently: the claim rolls back); within finish() and
 * recovery, release the attempt's key. Both record their event on the task. */
wq_rc wq__locks_take(struct wq__store *s, const struct wq__claimed *c, const char *instance,
		     int64_t now, wq_error *err);
/* wave 12: keyed task `task_id` left pending (claimed, cancelled) in this transaction:
 * the first held task of its key is held no longer (statements.h, WQ__HELD). */
wq_rc wq__key_unhold(struct wq__store *s, int64_t task_id, wq_error *err);
wq_rc wq__locks_drop(struct wq__store *s, int64_t task_id, int attempt, const char *instance,
		     const char *reason, int64_t now, wq_error *err);

/* op_limit.c (issue 10): within enqueue, before a new task row: WQ_ELIMIT when its
 * (tenant, scope) has t->max_active pending + running tasks already. */
wq_rc wq__limit_check(struct wq__store *s, const struct wq__new_task *t, wq_error *err);
/* op_limit.c (issue 10): within claim(), SQL_CLAIM for up to `want` tasks (kinds JSON
 * kj, attempt limits JSON `limits`), rows appended to v by `push` (elements start with a
 * struct wq__claimed); with req->concurrency / req->starts it keeps each kind under its
 * concurrency and defers the tasks beyond their (tenant, scope)'s starts of the day. */
wq_rc wq__claim_pick(struct wq__store *s, const struct wq__claim_req *req, const char *kj,
		     const char *limits, int want, wq__row_fn push, struct wq__vec *v,
		     wq_error *err);

/* op_followup.c (issue 10): within finish() of a success, the follow-ups the handler
 * asked for (o->followups), created or rejected as a whole (a `followups-rejected`
 * event); only a store failure is an error. */
wq_rc wq__followups_create(struct wq__store *s, const struct wq__outcome *o, wq_error *err);
/* The same parse and checks without a store (the fuzzer, tests/fuzz/fuzz_followup.c):
 * text as a handler's $WAKEQ_FOLLOWUPS file for a parent (kind, operation, depth) under
 * limits l (NULL: none). 0 when accepted: *n follow-ups, the first maxops operation keys
 * strdup'd into ops (the caller frees them); -1 when rejected: why holds the reason. */
int wq__followups_check(const char *text, const struct wq__followup_limits *l,
			const char *kind, const char *operation, int depth, size_t *n,
			char **ops, size_t maxops, char *why, size_t whysz);

/* op_intake.c (issue 13): within finish(), after the outcome is recorded: the task's
 * pending intake record, if it has one, becomes handled / giving-up with its
 * acknowledgement queued, or counts the handout. One call, nothing else to know. */
wq_rc wq__intake_finished(struct wq__store *s, const struct wq__outcome *o, wq_error *err);

/* op_stderr.c (issue 14): within finish(), stores o->stderr_tail with the attempt. */
wq_rc wq__attempt_stderr_set(struct wq__store *s, const struct wq__outcome *o,
			     wq_error *err);

/* The operations (the methods of store.h), defined in the op_*.c files as wq__op_NAME and
 * gathered into the method tables in op_store.c. */
#define WQ__OPS(X)                                                                         \
	X(enqueue) X(get) X(list) X(result) X(events) X(claim) X(finish) X(cancel) X(resolve) \
	X(event) X(cancel_requests) X(interrupted_of_kind) X(next_due) X(instance_register)  \
	X(instance_heartbeat) X(instance_unregister) X(instance_list) X(instance_reap)       \
	X(reap_orphans) X(operation_find) X(attempts) X(effect_begin) X(effect_done)         \
	X(prune) X(doctor) X(delivery_claim) X(delivery_finish) X(delivery_recover)          \
	X(delivery_next) X(delivery_list) X(delivery_retry) X(inbox_list) X(inbox_read)     \
	/* operator retry (issue 14) */                                                    \
	X(retry) X(stats) X(prune_preview) X(query)                                        \
	/* schedules (issue 12) */                                                         \
	X(schedule_add) X(schedule_list) X(schedule_get) X(schedule_events)                  \
	X(schedule_pause) X(schedule_rm) X(schedule_lease) X(schedule_release)               \
	X(schedule_fire)                                                                    \
	/* turn locks, paused kinds (issue 10) */                                            \
	X(lock_acquire) X(lock_renew) X(lock_release) X(lock_list) X(kind_pause)              \
	X(kinds_paused)                                                                     \
	/* group commit (issue 11) */                                                      \
	X(finish_batch)                                                                     \
	/* follow-ups (issue 10) */                                                         \
	X(family)                                                                           \
	/* intake (issue 13) */                                                            \
	X(intake_known) X(intake_retire) X(intake_record) X(intake_ack_claim)                \
	X(intake_ack_finish) X(intake_list) X(intake_acks_waiting)                            \
	/* kept stderr (issue 14) */                                                        \
	X(attempt_stderr)                                                                   \
	/* batch enqueue (issue 11) */                                                      \
	X(enqueue_many)                                                                     \
	/* wake-ups (issues 11, 12) */                                                      \
	X(wake_next) \
	/* wave4 batch: prefetched tasks given back (op_rows.c) */ \
	X(unclaim) \
	/* wave4 enqueue: group commit */                                                   \
	X(enqueue_group) \
	/* wave4 clock: the store's clock (issue 15) */                                     \
	X(store_now)
/* op_wake.c: the wake-up file `<database>-wake` of a SQLite store. new: NULL when there
 * is no file to name (":memory:") or no memory. poke: touches it (creates it when
 * missing); failures are silent (a worker then finds the work at its next poll). fd /
 * drain: as store.h's wakeup_fd / wakeup_drain (an inotify descriptor on the file). */
struct wq__wakefile *wq__wakefile_new(const char *db_path);
void wq__wakefile_free(struct wq__wakefile *wf);
void wq__wakefile_poke(struct wq__wakefile *wf);
int wq__wakefile_fd(struct wq__store *s);
int wq__wakefile_drain(struct wq__store *s);

/* ---- wave4 batch: multi-row writes (op_rows.c) ---- */
/* A task of a batch as read by SQL_TASK_STATES: its state and whether its finish has a
 * notify list, a turn lock row or an intake record to handle (0: that step would find
 * nothing, and is skipped). */
struct wq__task_facts {
	int64_t id;
	struct wq__task_state ts;
	int notify, lock, intake;
};
/* 1 when rows go to the store as multi-row statements (a server store: round trips). */
/* op_claim.c: finish_effects' rule: an uncertain effect open on the attempt that still
 * holds its task (ts read in the outcome's transaction) turns outcome o into
 * `interrupted` (uncertain-effect). op_finish_many.c leaves such outcomes to it. */
int wq__finish_uncertain(const struct wq__task_state *ts, const struct wq__outcome *o);
/* op_claim.c: outcome o's attempt still holds its task (running under that attempt and
 * instance, ts read in the outcome's transaction): the finish's fence will match. */
int wq__attempt_holds(const struct wq__task_state *ts, const struct wq__outcome *o);
int wq__rows_batched(const struct wq__store *s);
void wq__rows_on(struct wq__store *s); /* within wq__begin..wq__end */
/* Buffering on whatever the driver: for a caller whose rows must be written after rows it
 * inserts later in the same transaction (op_enqueue_rows.c: the events of a batch's items
 * name tasks inserted after the loop over them; written one at a time they would name
 * tasks not yet there). */
void wq__rows_on_always(struct wq__store *s);
wq_rc wq__rows_flush(struct wq__store *s, wq_error *err); /* wq__end, before COMMIT */
void wq__rows_reset(struct wq__store *s);                 /* wq__begin, wq__end */
void wq__rows_free(struct wq__store *s);                  /* the store's close */
void wq__events_drop(struct wq__store *s); /* sql.c: queued events dropped (close) */
/* Appends an event (detail: JSON object text) or an attempt's finish to the buffers;
 * 0 when buffering is off (the caller writes the row itself). */
int wq__rows_event(struct wq__store *s, int64_t task_id, int64_t at, int attempt,
		   const char *type, const char *instance, const char *detail);
int wq__rows_attempt_finish(struct wq__store *s, int64_t task_id, int attempt, int64_t now,
			    const char *outcome, const char *reason, int exit_status);
/* A row appended to b: fmt 'i' an int64_t, 's' a string (valid UTF-8); the array's text
 * (closed) or NULL when out of memory; the rows dropped. */
void wq__rb_row(struct wq__rowbuf *b, const char *fmt, ...);
const char *wq__rb_text(struct wq__rowbuf *b);
void wq__rb_clear(struct wq__rowbuf *b);
/* The attempts rows [task_id, attempt] of `rows` (claimed tasks), one statement. */
wq_rc wq__rows_attempts_insert(struct wq__store *s, struct wq__rowbuf *rows,
			       const char *instance, int64_t now, wq_error *err);
/* The facts of the n tasks ids (sorted: the rows come in id order, as wq__rows_fact
 * searches them) into *out (malloc'd). */
wq_rc wq__rows_facts(struct wq__store *s, const int64_t *ids, size_t n,
		     struct wq__task_facts **out, size_t *nout, wq_error *err);
/* The facts of task id in s->facts, NULL when not read. */
const struct wq__task_facts *wq__rows_fact(const struct wq__store *s, int64_t id);
/* op_clock.c (wave4 clock, issue 15): the store's clock, read once by an operation that
 * writes or judges a lease's expiry (D_NOW_US; WQ_ESTORE when it gives nothing). */
wq_rc wq__store_clock(struct wq__store *s, int64_t *now, wq_error *err);

/* ---- wave5 enq: multi-row enqueues (op_enqueue_rows.c) ---- */
/* op_task.c: t's identity is taken (the stored fingerprint, its task and that task's
 * state, 0 when pruned): a replay (*row) or WQ_ECONFLICT (s->keep set), each with its
 * event on the task when the task exists; exactly what a lone enqueue decides. */
wq_rc wq__enqueue_existing(struct wq__store *s, const struct wq__new_task *t,
			   const char *stored, int64_t task_id, wq_state state,
			   struct wq__enqueued_row *row, wq_error *err);
/* Whether the n tasks may go the multi-row way: none has a limit or a turn lock key. */
int wq__enqueue_rows_fit(const struct wq__new_task *const *t, size_t n);
/* Within the caller's write transaction: the n tasks (checked) in a few multi-row
 * statements, each item answered in item_rc / item_errs (may be NULL) / rows as a lone
 * enqueue would be (WQ_OK or WQ_ECONFLICT); *made: WQ__ROWS_MADE_NEW when a task is new,
 * WQ__ROWS_MADE_DUE too when one of them is due now (who is woken: the caller). Returns
 * WQ_OK, a failure of the whole (roll back), or WQ__ENQUEUE_ROWS_NO: roll back and run
 * the items one by one (a key was taken concurrently, a generated id met another's). */
#define WQ__ENQUEUE_ROWS_NO ((wq_rc)-2)
#define WQ__ROWS_MADE_NEW 1
#define WQ__ROWS_MADE_DUE 2
wq_rc wq__enqueue_rows(struct wq__store *s, const struct wq__new_task *const *t, size_t n,
		       struct wq__enqueued_row *rows, wq_rc *item_rc, wq_error *item_errs,
		       int *made, wq_error *err);
/* enqueue_many's body through wq__enqueue_rows in its own transaction; WQ__ENQUEUE_ROWS_NO
 * after rolling it back. */
wq_rc wq__enqueue_many_rows(struct wq__store *s, const struct wq__new_task *const *t,
			    size_t n, struct wq__enqueued_row *rows, wq_rc *item_rc,
			    wq_error *item_errs, wq_error *err);

#define WQ__OP_DECLARE(name)                                                               \
	extern __typeof__(*((struct wq__store_methods *)0)->name) wq__op_##name;
WQ__OPS(WQ__OP_DECLARE)
#undef WQ__OP_DECLARE

/* ---- wave5 pgw: multi-row `succeeded` outcomes (op_finish_many.c) ---- */
/* Within finish_batch's transaction, after the facts are read (v: in task order): the
 * SUCCEEDED outcomes that fit recorded by one fenced statement, where the dialect has it;
 * WQ_OK with nothing done otherwise. An error: the caller rolls back. */
wq_rc wq__finish_many(struct wq__store *s, const struct wq__outcome *const *v, size_t n,
		      wq_error *err);
/* 1 when o's UPDATE ran in wq__finish_many: *changes is what it changed (1 or 0); 0 when
 * the caller runs SQL_FINISH_SUCCEEDED itself. */
int wq__finish_many_take(struct wq__store *s, const struct wq__outcome *o, int64_t *changes);
/* SQL_FINISH_SUCCEEDED's arguments for outcome o ($1..$10), into a; the row of
 * SQL_FINISH_SUCCEEDED_ROWS16/32 (wave8 sqlw2) */
#define WQ__SUCCEEDED_ARGS 10
void wq__succeeded_args(struct wq__arg *a, const struct wq__outcome *o);
void wq__finish_many_end(struct wq__store *s); /* forgets (frees) the batch's answers */
/* sql.c: within a write transaction, statement id whose answer the caller does not
 * read (a multi-row write before COMMIT), sent without waiting where the driver can
 * (exec_queued: PostgreSQL's pipeline); its failure may come with the next statement or
 * the commit instead, which then fail (nothing commits). Elsewhere: wq__run. */
/* A multi-row write of bound parameters (SQLite: binding costs less than taking JSON
 * rows apart), one statement per size: stmts[k].id takes stmts[k].rows rows, largest
 * first, the last of one row. n rows of `cols` arguments each, row r's written by
 * fill(a, r, ctx), in as few statements as the sizes allow (a statement's fixed cost
 * once per statement, not per row). The last size may be more than one row when n is a
 * multiple of it. *changes (NULL: not asked): the rows the statements changed. */
struct wq__rows_stmt {
	int id;
	size_t rows;
};
typedef void wq__row_args_fn(struct wq__arg *a, size_t row, const void *ctx);
wq_rc wq__run_rows(struct wq__store *s, const struct wq__rows_stmt *stmts, size_t n,
		   size_t cols, wq__row_args_fn *fill, const void *ctx, int64_t *changes,
		   const char *what, wq_error *err);
wq_rc wq__run_queued(struct wq__store *s, int id, const struct wq__arg *a, int n,
		     const char *what, wq_error *err);

#endif /* WQ_STORE_OP_H */
