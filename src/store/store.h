/*
 * store.h — the storage interface the core calls (through WQ__STORE in internal.h, where
 * the failpoints are): one method table per database, the same operations (op_*.c) behind
 * both. Rules every method keeps (tests/store and tests/conformance prove them on each):
 *  - One transaction per method; on any error nothing changed, except where a method
 *    says it records the refusal (stale-outcome, conflict, delivery-stale).
 *  - Every state change is one conditional UPDATE whose row count is checked, with its
 *    event(s) in the same transaction (detail keys: docs/architecture.md, "Events"; safe
 *    evidence, never payloads or results).
 *  - WQ_EBUSY: busy or connection lost (retry). WQ_EUNKNOWN: a COMMIT's answer was lost —
 *    except where the method's repeat recognises its outcome (finish, claims, instance
 *    writes): WQ_EBUSY.
 *  - Times are int64 µs since the epoch, passed in (`now`), except a lease's expiry:
 *    leases (instances, turn locks, schedule owners, source acknowledgements) are
 *    written and judged on the store's own clock (op_clock.c, issue 15), so a method
 *    that takes one takes its duration, not an expiry time.
 *  - Identity fields with invalid UTF-8 are refused (WQ_EINVAL); free text is made valid.
 *  - Out-parameters are written only on success; arrays are malloc'd (free()).
 */
#ifndef WQ_STORE_H
#define WQ_STORE_H

#include "wakeq.h"

#include <stdint.h>
#include <stddef.h>

#define WQ_SCHEMA_VERSION 5

struct wq__store; /* op.h: a driver connection and the core's state about it */

/* A new task, fully validated by the core (task.c). */
struct wq__new_task {
	const char *kind, *tenant, *scope, *operation;
	const char *payload;
	size_t payload_len;
	int payload_version;
	const char *payload_sha256; /* hex */
	int priority;
	int64_t due_at;
	int64_t order_at; /* due_at minus the priority's head start; claim order key */
	int max_attempts;
	const char *key;         /* operation key, or NULL: `operation` is a generated id */
	const char *fingerprint; /* hex: SHA-256 of "jcs1\nv<version>\n" + RFC 8785 payload */
	const char *fingerprint_legacy; /* hex, or NULL: wq__fingerprint_legacy; a replay also matches it */
	const char *notify;      /* JSON array of channel strings ("inbox:alice"), or NULL */
	int64_t now;
	const char *lock;        /* turn lock key (issue 10), or NULL */
	/* [limits] (issue 10): at most max_active pending + running tasks per (tenant,
	 * scope), counted in the enqueue's transaction (0: no limit); limit_section names
	 * where it was configured ("limits" or "limits.TENANT"), for the message. */
	int max_active;
	const char *limit_section;
};

/* What enqueue() did. */
struct wq__enqueued_row {
	int64_t id;
	int replayed;                    /* 1: an existing task of the same operation */
	wq_state state;                  /* of that task; 0 when its row was pruned */
	char fingerprint[WQ_SHA256_HEX]; /* the stored operation fingerprint */
};

/* A new schedule (issue 12), validated by the core (schedule.c). */
struct wq__new_schedule {
	const char *name, *cron, *tz, *kind, *tenant, *scope;
	int64_t every;
	const char *payload;
	size_t payload_len;
	int payload_version;
	const char *payload_sha256, *fingerprint; /* as struct wq__new_task */
	const char *notify;                       /* JSON array text, or NULL */
	int max_attempts;
	const char *overlap, *catch_up;           /* "skip"/"allow"; "latest"/"all"/"none" */
	int64_t next_slot, now;
};

/* intake (issue 13): one message to record with its task. */
struct wq__intake_msg {
	const char *source, *key, *operators;
	int64_t uidvalidity, uid, size;
	int max_handouts;
	struct wq__new_task task; /* key/operation `intake:SOURCE:KEY` */
};

/* An acknowledgement claimed for sending. */
struct wq__intake_ack_row {
	int64_t id;
	char key[WQ_INTAKE_KEY_MAX + 1];
	int64_t uidvalidity, uid;
	char state[16]; /* handled | giving-up */
	int ack_attempts;
	int64_t task_id;
};

/* The source's answer to one acknowledgement. */
struct wq__intake_ack {
	int64_t id;
	int ack_attempts;     /* as claimed */
	const char *instance; /* the claiming instance */
	int ok;
	const char *error;    /* when !ok: free text, no credential */
	int64_t next_at;      /* when !ok */
	int64_t now;
};

/* The record after intake_ack_finish. */
struct wq__intake_acked {
	char source[WQ_INTAKE_SOURCE_MAX + 1];
	char key[WQ_INTAKE_KEY_MAX + 1];
	char state[16];
	char outcome[16];
	int64_t task_id;
	char operators[WQ_NAME_MAX + 1];
	int handouts;
};

/* One row of doctor(). */
enum wq__doctor_kind {
	WQ__DOCTOR_EFFECT_TWICE = 1, /* an effect two or more attempts got `new` for */
	WQ__DOCTOR_UNCERTAIN,        /* an effect begun by an attempt that is over, not done */
	/* (effect rows: only those no resolution of the task answered) */
	WQ__DOCTOR_INTERRUPTED,      /* an interrupted task */
	WQ__DOCTOR_STUCK,            /* a task running since before the bound */
};

struct wq__doctor_row {
	enum wq__doctor_kind kind;
	int64_t task_id;
	char operation[WQ_KEY_MAX + 1];
	char effect[WQ_EFFECT_NAME_MAX + 1];  /* effect rows */
	char effect_state[16];                /* "begun" or "done" */
	int attempt;                          /* effect rows: the attempt that began it */
	int begun_attempts;                   /* effect rows */
	char reason[WQ_REASON_MAX + 1];       /* interrupted rows */
	char reason_detail[WQ_DETAIL_MAX + 1];
	char instance[WQ_NAME_MAX + 1];       /* stuck rows: the owning instance */
	int64_t since;                        /* stuck rows: started_at */
};

/* One task handed to a worker by claim(). The caller owns the array and each payload. */
struct wq__claimed {
	int64_t id;
	int attempt; /* the fencing token: every transition out of running names it */
	char kind[WQ_KIND_MAX + 1];
	char tenant[WQ_NAME_MAX + 1];
	char scope[WQ_NAME_MAX + 1];
	char operation[WQ_KEY_MAX + 1];
	int keyed;     /* operation is a caller's key (else a generated id) */
	int payload_version;
	int max_attempts;
	char *payload; /* malloc'd, NUL-terminated */
	size_t payload_len;
	char lock[WQ_KEY_MAX + 1]; /* turn lock key held by this attempt, "" for none */
};

struct wq__claim_req {
	const char *instance;     /* the claiming worker instance */
	const char *const *kinds; /* kinds this worker can run */
	size_t nkinds;
	int limit;                /* at most this many tasks */
	int64_t now;
	/* Parallel to kinds, or NULL: the kind's attempt limit (0: none), which overrides
	 * the task's own. The claim records it on the task row (tasks.max_attempts, so
	 * list/show print the limit that applies) and hands it out in max_attempts. */
	const int *max_attempts;
	/* Parallel to kinds, or NULL: 1 for a kind run by an in-process handler. Each
	 * claimed attempt's `started` event is appended in the claim's transaction (no
	 * transaction of its own per start) and says in_process for those. */
	const int *in_process;
	/* issue 10 (op_limit.c). Parallel to kinds, or NULL: at most this many running
	 * tasks of the kind across all instances (0: no limit); the claim counts them in
	 * its transaction (serialised per kind) and takes no more. */
	const int *concurrency;
	/* [limits] max_starts_per_day by tenant (NULL/0: none): a claim counts each start of
	 * a (tenant, scope) on its UTC day and defers a task beyond the limit to the next
	 * day's 00:00 UTC (pending, `deferred` event) instead of handing it out. */
	const struct wq__starts_limit *starts;
	size_t nstarts;
};

/* One [limits] section's max_starts_per_day (issue 10): tenant "" and named 0 for
 * [limits], the default of every tenant without a section of its own. */
struct wq__starts_limit {
	const char *tenant;
	int named;
	int max;             /* 0: no limit for these tenants */
	const char *section; /* "limits" or "limits.TENANT", for the event */
};

/* The outcome of one attempt, recorded by finish(). */
enum wq__finish_kind {
	WQ__FINISH_SUCCEEDED = 1, /* result stored in the same transaction */
	WQ__FINISH_RETRY,         /* → pending, due at retry_at */
	WQ__FINISH_FAILED,        /* → failed */
	WQ__FINISH_INTERRUPTED,   /* → interrupted (reason says why) */
	WQ__FINISH_CANCELLED,     /* → cancelled (handler confirmed it stopped) */
};

struct wq__outcome {
	int64_t task_id;
	int attempt;              /* fencing token from claim */
	const char *instance;     /* fencing: the owning instance */
	enum wq__finish_kind kind;
	const char *reason;       /* "exit-1", "killed", "runtime-limit", ... or NULL */
	const char *reason_detail;/* safe one-line text or NULL */
	const char *outcome;      /* "discarded" or NULL (succeeded only) */
	const char *result;       /* succeeded only; may be NULL (no result) */
	size_t result_len;
	const char *result_sha256;/* hex, with result */
	int exit_status;          /* -1 when killed by a signal or not applicable */
	int signal;               /* 0 unless killed by a signal */
	int64_t retry_at;         /* WQ__FINISH_RETRY only */
	int64_t now;
	/* Out, optional (WQ_EFFECT_NAME_MAX + 1 bytes): when the attempt had found an effect
	 * uncertain, finish() recorded `interrupted` (uncertain-effect) instead of `kind` and
	 * writes the effect's name here; untouched otherwise. */
	char *uncertain_out;
	/* Out, optional (WQ_EFFECT_NAME_MAX + 1 bytes): when a CANCELLED outcome was
	 * recorded `interrupted` (cancelled-while-running) because the attempt left an effect
	 * begun and unconfirmed, finish() writes the effect's name here; untouched
	 * otherwise. */
	char *cancel_effect_out;
	/* Follow-ups (issue 10; op_followup.c), SUCCEEDED only: created in this transaction.
	 * `followups`: the JSON array text the handler gave (NUL-terminated), or NULL;
	 * `followups_error`: why it could not be read (then rejected with that detail). */
	const char *followups;
	const char *followups_error;
	const struct wq__followup_limits *followup_limits; /* NULL: none */
	/* Issue 14: a failed attempt's stderr tail (the kind's keep_stderr), stored with the
	 * attempt in finish()'s transaction; NULL: none. */
	const char *stderr_tail;
};

/* The [limits] on a task's follow-ups (issue 10); -1 / 0: no limit. */
struct wq__followup_limits {
	int max_followups;   /* per task */
	int max_depth;       /* a follow-up's depth (the root task's is 0) */
	size_t max_payload;  /* bytes of a follow-up's payload (max_payload_bytes) */
	char section[WQ_NAME_MAX + 8]; /* "limits" or "limits.TENANT" */
};

/* A registered worker instance. */
struct wq__instance {
	char id[WQ_NAME_MAX + 1];
	char host[WQ_NAME_MAX + 1];
	/* Which kernel and PID namespace `pid` belongs to: "<boot id>/<pid ns inode>"
	 * (empty when unknown). Two instances compare pids only when these are equal and
	 * non-empty: a host name alone is never trusted (containers share names). */
	char host_id[WQ_NAME_MAX + 1];
	int64_t pid;
	int64_t proc_start;  /* process start time token (Linux: /proc/PID/stat field 22) */
	int64_t started_at;
	int64_t heartbeat_at;
	/* instance_list only: µs since its last heartbeat, both ends read on the store's
	 * clock (issue 15: a lease's age never compares two hosts' clocks). */
	int64_t lease_age;
};

/* Resolution targets for interrupted tasks. */
struct wq__resolve {
	int64_t task_id;
	wq_resolution decision;
	const char *note;     /* operator text or NULL */
	const char *by;       /* "operator" or "policy" */
	int64_t now;
};

/* --- outbox (schema v3): deliveries of results and the notification inbox (SPEC §8) --- */

#define WQ__DELIVERY_MAX_ATTEMPTS 8 /* stored at insert; see delivery_finish() */

/* One delivery handed to a worker by delivery_claim(), with the task's metadata the
 * notification carries (never the result body). */
struct wq__delivery_claimed {
	int64_t id;
	int64_t task_id;
	char channel[WQ_NAME_MAX + 1];
	int attempts;   /* this attempt's number: the fencing token */
	int retry_base; /* attempts when an operator last retried it (0: never); the attempt
			 * budget of the current round is counted from here */
	char kind[WQ_KIND_MAX + 1];
	char operation[WQ_KEY_MAX + 1];
	wq_state task_state;
	char outcome[WQ_REASON_MAX + 1];
	int has_result;
	int64_t result_size;
	char result_sha256[WQ_SHA256_HEX];
};

enum wq__delivery_finish_kind {
	WQ__DELIVERY_DELIVERED = 1, /* → delivered */
	WQ__DELIVERY_RETRY,         /* → pending, due at next_at, last_error kept */
	WQ__DELIVERY_DEAD,          /* → dead, reported to the operators' inbox */
};

/* The outcome of one delivery attempt, recorded by delivery_finish(). */
struct wq__delivery_outcome {
	int64_t id;
	int attempts;            /* fencing: the attempt number from the claim */
	const char *instance;    /* fencing: the claiming instance */
	enum wq__delivery_finish_kind kind;
	/* DELIVERED through an inbox channel: the recipient. The notification row is
	 * inserted in the same transaction (unique per delivery: a repeat adds nothing). */
	const char *inbox;
	int status;              /* HTTP status or exit status for the event; -1: none */
	const char *error;       /* RETRY, DEAD: last_error, safe one-line text */
	int64_t next_at;         /* RETRY */
	int max_attempts;        /* RETRY, DEAD: the attempt limit that was applied */
	const char *operators;   /* DEAD: recipient of the report in the inbox */
	int64_t now;
};

/* An operator's retry of a finished task (operator retry, issue 14). */
struct wq__retry {
	int64_t task_id;
	const char *note; /* operator text or NULL */
	const char *by;   /* who decided; NULL: "operator" */
	int64_t now;
};

struct wq__store_methods {
	int version; /* 1: all methods below are valid */
	const char *name;
	/* How many connections a worker writes through at once (worker_store.c lanes):
	 * SQLite 1 (one writer at a time: a second connection would only wait on the
	 * write lock), PostgreSQL 2 (a second transaction in flight uses the server's
	 * other core and overlaps the first one's WAL flush). */
	int writers;

	/* Opens a connection. With WQ_OPEN_MIGRATE creates/migrates the schema. Refuses a
	 * newer schema (WQ_ESCHEMA naming both versions), and without MIGRATE an absent or
	 * older one. On failure *out is untouched and everything opened is closed. */
	wq_rc (*open)(const char *url, unsigned flags, struct wq__store **out, wq_error *err);
	void (*close)(struct wq__store *s);

	/* Inserts a pending task and its `accepted` event. With t->key, first claims the
	 * operation identity (tenant, scope, kind, key) through the unique index (never a
	 * read-then-write). Taken: the same fingerprint returns its task (replayed = 1, a
	 * `replayed` event), another records `conflict` on it and returns WQ_ECONFLICT. */
	wq_rc (*enqueue)(struct wq__store *s, const struct wq__new_task *t,
			 struct wq__enqueued_row *out, wq_error *err);

	wq_rc (*get)(struct wq__store *s, int64_t id, wq_task *out, wq_error *err);
	/* Tasks by id ascending; *out malloc'd (may be NULL when *n == 0). */
	wq_rc (*list)(struct wq__store *s, const wq_list_filter *f, wq_task **out, size_t *n,
		      wq_error *err);
	wq_rc (*result)(struct wq__store *s, int64_t id, char **body, size_t *len,
			wq_error *err);
	wq_rc (*events)(struct wq__store *s, int64_t task_id, wq_event **out, size_t *n,
			wq_error *err);

	/* Batch claim: up to req->limit due pending tasks of req->kinds by (order_at, id),
	 * pending → running with attempt+1 under req->instance, only while that instance's
	 * row exists; a `claimed` event and an attempts row each. A kind's limit in
	 * req->max_attempts replaces the task's max_attempts in the same UPDATE. */
	wq_rc (*claim)(struct wq__store *s, const struct wq__claim_req *req,
		       struct wq__claimed **out, size_t *n, wq_error *err);

	/* Records the outcome of one attempt, fenced by running, attempt and instance. The
	 * same outcome recorded already (a retry) is WQ_OK; otherwise no row means the task
	 * moved on: only a `stale-outcome` event, and WQ_ESTALE. The journal can override
	 * the outcome: an attempt that found an effect uncertain ends `interrupted`
	 * (uncertain-effect); a CANCELLED attempt that began an effect and never confirmed
	 * it ends `interrupted` (cancelled-while-running, reason_detail naming the effect),
	 * the handler's report kept in the event as handler_outcome. */
	wq_rc (*finish)(struct wq__store *s, const struct wq__outcome *o, wq_error *err);

	/* pending → cancelled (event `cancelled`), or on running sets cancel_requested
	 * (event `cancel-requested`). *state_out receives the state after the call.
	 * WQ_ENOTFOUND / WQ_ESTATE (message names the current state). */
	wq_rc (*cancel)(struct wq__store *s, int64_t id, int64_t now, wq_state *state_out,
			wq_error *err);

	/* interrupted → decision (event `resolved` with decision, by, note). Retry sets
	 * due_at = now. In the same transaction the task's effect rows are marked resolved:
	 * doctor() no longer reports them, until an attempt begins one again.
	 * WQ_ENOTFOUND / WQ_ESTATE. */
	wq_rc (*resolve)(struct wq__store *s, const struct wq__resolve *r, wq_error *err);

	/* Appends one event that changes no state (e.g. `started` with the handler's pid,
	 * `log` lines about an attempt). `detail` is a JSON object text of safe evidence or
	 * NULL for "{}". */
	wq_rc (*event)(struct wq__store *s, int64_t task_id, int attempt, const char *type,
		       const char *instance, const char *detail, int64_t now, wq_error *err);

	/* Ids of running tasks of `instance` with cancel_requested set. */
	wq_rc (*cancel_requests)(struct wq__store *s, const char *instance, int64_t **ids,
				 size_t *n, wq_error *err);

	/* Interrupted tasks of `kind` (for on_interrupt=retry), at most `limit`. */
	wq_rc (*interrupted_of_kind)(struct wq__store *s, const char *kind, int limit,
				     int64_t **ids, size_t *n, wq_error *err);

	/* When the next pending task of these kinds is due, 0 when none: a past time when
	 * one is due already (that task's, not necessarily the earliest: statements.h
	 * WQ__SERVED_NEXT_DUE), else the earliest future one; and whether any task is
	 * running (any instance). Used by --until-idle. */
	wq_rc (*next_due)(struct wq__store *s, const char *const *kinds, size_t nkinds,
			  int64_t *due_out, int *running_out, wq_error *err);

	/* Worker instances. register inserts (the same row again is WQ_OK, another under
	 * the id WQ_ECONFLICT). heartbeat: WQ_ENOTFOUND when the row is gone (declared
	 * lost). unregister deletes the row (clean stop; it owns no running task). */
	wq_rc (*instance_register)(struct wq__store *s, const struct wq__instance *in,
				   wq_error *err);
	wq_rc (*instance_heartbeat)(struct wq__store *s, const char *id, int64_t now,
				    wq_error *err);
	wq_rc (*instance_unregister)(struct wq__store *s, const char *id, wq_error *err);
	wq_rc (*instance_list)(struct wq__store *s, struct wq__instance **out, size_t *n,
			       wq_error *err);
	/* Declares an instance lost: deletes its row only if heartbeat_at still equals
	 * `seen_heartbeat`, and in the same transaction interrupts its running tasks with
	 * `reason`. *count: how many (0 and nothing changed when the row moved on). */
	wq_rc (*instance_reap)(struct wq__store *s, const char *id, int64_t seen_heartbeat,
			       const char *reason, int64_t now, int *count, wq_error *err);
	/* Running tasks that name no registered instance (e.g. the row was deleted by a
	 * crash in between): interrupted with `reason`. */
	wq_rc (*reap_orphans)(struct wq__store *s, const char *reason, int64_t now, int *count,
			      wq_error *err);

	/* Wake-ups: PostgreSQL LISTEN/NOTIFY; SQLite a wake-up file next to the database,
	 * watched with inotify (op_wake.c); NULL when the store has neither (":memory:").
	 * Every transaction that creates pending work (enqueue, finish RETRY, resolve or
	 * retry, deliveries queued or retried) wakes them once it committed.
	 * wakeup_fd: the descriptor to watch (the store's: never close it) after subscribing
	 * (LISTEN, redone after a reconnect), or -1 with no connection now (ask again at the
	 * next poll). wakeup_drain, without blocking: 1 wake-ups arrived, 0 none, -1 the
	 * descriptor from the last wakeup_fd is not the one to watch any more (any call may
	 * reconnect; the new one often has the old number). So before every wait: drain;
	 * 1: claim; -1: stop watching, call wakeup_fd, watch it and claim once; 0: wait on
	 * the descriptor and the poll timer. */
	int (*wakeup_fd)(struct wq__store *s);
	int (*wakeup_drain)(struct wq__store *s);

	/* --- operations, effects, retention, doctor (operation.c, effect.c, prune.c) --- */

	/* The task of operation (tenant, scope, kind, key); kind NULL means any kind.
	 * WQ_ENOTFOUND when there is none, or its task row was pruned (the message says
	 * which); WQ_EINVAL naming the kinds when kind is NULL and several match. */
	wq_rc (*operation_find)(struct wq__store *s, const char *tenant, const char *scope,
				const char *kind, const char *key, int64_t *task_id,
				wq_error *err);
	/* The attempts of a task by number; *out malloc'd (NULL when *n == 0).
	 * WQ_ENOTFOUND when there is no such task. */
	wq_rc (*attempts)(struct wq__store *s, int64_t task_id, wq_attempt **out, size_t *n,
			  wq_error *err);

	/* The effect journal (SPEC §7). Both are conditional on the task being running with
	 * `attempt` (WQ_ESTALE naming its state otherwise; nothing changes).
	 * effect_begin: no entry → one is recorded `begun` by this attempt, WQ_EFFECT_NEW
	 * (event effect-begun); begun by this attempt → WQ_EFFECT_NEW again, nothing written;
	 * done → WQ_EFFECT_DONE with *result (malloc'd, NULL when none; event
	 * effect-skipped); begun by an earlier attempt → WQ_EFFECT_UNCERTAIN: the task's
	 * uncertain_effect is set, so finish() records this attempt `interrupted`
	 * (`uncertain-effect`) whatever the handler reports; the entry notes the attempt
	 * (last_attempt; it does not count in begun_attempts, which counts `new` answers
	 * only) and is a doctor finding again if a resolution had answered it (event
	 * effect-uncertain, once per attempt).
	 * effect_done: begun by this attempt → done with `result` (may be NULL; event
	 * effect-done with its size and SHA-256, never the text); done by this attempt with
	 * the same result → WQ_OK, nothing written; anything else → WQ_ESTATE saying why. */
	wq_rc (*effect_begin)(struct wq__store *s, int64_t task_id, int attempt,
			      const char *name, int64_t now, wq_effect_status *status,
			      char **result, wq_error *err);
	wq_rc (*effect_done)(struct wq__store *s, int64_t task_id, int attempt,
			     const char *name, const char *result, int64_t now, wq_error *err);

	/* Retention, one transaction: terminal tasks finished before task_cutoff, none of
	 * whose deliveries is still pending or sending (issue 14), are deleted
	 * (their events, attempts and effects with them), their operation rows kept with the
	 * task's finished_at; then operation rows whose task row is gone and which finished
	 * before operation_cutoff are deleted. Operations of existing tasks never go. */
	wq_rc (*prune)(struct wq__store *s, int64_t task_cutoff, int64_t operation_cutoff,
		       wq_prune_counts *out, wq_error *err);
	/* What needs a human (doctor.c words it); *out malloc'd, ordered by kind of row,
	 * then task id. Tasks running since before `stuck_before` (started_at) are stuck
	 * rows (0: none are): an instance that is alive but lost track of its task keeps it
	 * running forever, and no recovery sees that. */
	wq_rc (*doctor)(struct wq__store *s, int64_t stuck_before, struct wq__doctor_row **out,
			size_t *n, wq_error *err);

	/* --- outbox: deliveries and the inbox (schema v3; outbox.c, deliver.c) ---
	 * finish() of a succeeded task (not `discarded`) inserts one pending delivery per
	 * notify channel (WQ__DELIVERY_MAX_ATTEMPTS, due now), a `delivery-queued` event
	 * each, in the same transaction. Delivery events go on the task's timeline with
	 * attempt 0 (docs/architecture.md lists them). */

	/* Batch claim: up to `limit` pending deliveries with next_at <= now, ordered by
	 * (next_at, id), each moved pending → sending with attempts+1 and instance set by
	 * one conditional UPDATE (`AND state='pending' AND next_at <= now`; PostgreSQL picks
	 * FOR UPDATE SKIP LOCKED), only while the instance row exists. A `delivery-attempt`
	 * event each. *out malloc'd array of *n (0 is fine). */
	wq_rc (*delivery_claim)(struct wq__store *s, const char *instance, int limit, int64_t now,
				struct wq__delivery_claimed **out, size_t *n, wq_error *err);
	/* Records one attempt's outcome, conditional on state='sending' AND attempts AND
	 * instance. The row's max_attempts becomes o->max_attempts (RETRY, DEAD). DEAD also
	 * inserts the operators' notification (subject `dead-delivery`, unique per delivery
	 * and attempt count, so a repeat adds nothing). When the condition finds no row: the
	 * same outcome already recorded (a retry after a lost COMMIT answer) is WQ_OK;
	 * anything else records a `delivery-stale` event and returns WQ_ESTALE. */
	wq_rc (*delivery_finish)(struct wq__store *s, const struct wq__delivery_outcome *o,
				 wq_error *err);
	/* Recovery: sending deliveries whose instance is not registered (reason
	 * `worker-lost`), or that belong to `instance` and are not among held[0..nheld) (a
	 * claim whose answer was lost, an outcome that could not be recorded: `unrecorded`),
	 * go back to pending, due now, each with a `delivery-uncertain` event: the receiver
	 * may or may not have the notification. *count receives how many. */
	wq_rc (*delivery_recover)(struct wq__store *s, const char *instance,
				  const int64_t *held, size_t nheld, int64_t now, int *count,
				  wq_error *err);
	/* The earliest next_at of a pending delivery, or 0 when there is none. */
	wq_rc (*delivery_next)(struct wq__store *s, int64_t *due_out, wq_error *err);
	/* Deliveries by id (state 0 = any); *out malloc'd (NULL when *n == 0). */
	wq_rc (*delivery_list)(struct wq__store *s, wq_delivery_state state, wq_delivery **out,
			       size_t *n, wq_error *err);
	/* dead → pending, due now, a new round of attempts (retry_base = attempts);
	 * event `delivery-retry`. WQ_ENOTFOUND / WQ_ESTATE naming the current state. */
	wq_rc (*delivery_retry)(struct wq__store *s, int64_t id, int64_t now, wq_error *err);
	/* Notifications of `recipient` by id (unread_only: read_at = 0). */
	wq_rc (*inbox_list)(struct wq__store *s, const char *recipient, int unread_only,
			    wq_notification **out, size_t *n, wq_error *err);
	/* Marks a notification read (conditional on read_at = 0; already read is WQ_OK and
	 * changes nothing). WQ_ENOTFOUND. */
	wq_rc (*inbox_read)(struct wq__store *s, int64_t id, int64_t now, wq_error *err);

	/* --- operator retry (issue 14; op_retry.c) --- */
	/* failed or cancelled → pending, due now: a new round of attempts under the same
	 * task and operation (retry_base = attempts; max_attempts = attempts + the round's
	 * budget, max_attempts - retry_base before). One conditional UPDATE and a `retried`
	 * event (by, note, attempts, max_attempts) in one transaction; the effect journal is
	 * kept (done effects are skipped again, begun ones are found uncertain).
	 * WQ_ENOTFOUND / WQ_ESTATE naming the current state. */
	wq_rc (*retry)(struct wq__store *s, const struct wq__retry *r, wq_error *err);
	/* One read transaction: the counts and instances of wq_stats (arrays malloc'd;
	 * on error none is handed out). `now` decides which pending tasks are due. */
	wq_rc (*stats)(struct wq__store *s, int64_t now, wq_stats *out, wq_error *err);
	/* prune's counts without its deletions: the same statements in a transaction that
	 * is rolled back, so the numbers are exactly what prune would delete now. */
	wq_rc (*prune_preview)(struct wq__store *s, int64_t task_cutoff,
			       int64_t operation_cutoff, wq_prune_counts *out, wq_error *err);
	/* Tasks by id ascending matching every given part of q (wq_task_query_list);
	 * *out malloc'd (NULL when *n == 0). */
	wq_rc (*query)(struct wq__store *s, const wq_task_query *q, wq_task **out, size_t *n,
		       wq_error *err);
	/* ---- schedules (issue 12; op_schedule.c) ---- */
	/* WQ_ECONFLICT when the name exists. */
	wq_rc (*schedule_add)(struct wq__store *s, const struct wq__new_schedule *ns,
			      wq_error *err);
	wq_rc (*schedule_list)(struct wq__store *s, wq_schedule **out, size_t *n, wq_error *err);
	wq_rc (*schedule_get)(struct wq__store *s, const char *name, wq_schedule *out,
			      wq_error *err);
	wq_rc (*schedule_events)(struct wq__store *s, const char *name, wq_schedule_event **out,
				 size_t *n, wq_error *err);
	/* paused 1: pause; 0: resume with next_slot (µs). WQ_ENOTFOUND. */
	wq_rc (*schedule_pause)(struct wq__store *s, const char *name, int paused,
				int64_t next_slot, wq_error *err);
	wq_rc (*schedule_rm)(struct wq__store *s, const char *name, wq_error *err);
	/* Takes or renews, for `ttl` µs on the store's clock (issue 15), the lease of every
	 * unpaused schedule that instance owns or whose lease expired on that clock
	 * (conditional update); *owned / *next_due: how many it holds now and their
	 * earliest next slot (0: none). */
	wq_rc (*schedule_lease)(struct wq__store *s, const char *instance, int64_t ttl,
				int *owned, int64_t *next_due, wq_error *err);
	/* Lets go of every lease of instance (drain, --no-scheduler). */
	wq_rc (*schedule_release)(struct wq__store *s, const char *instance, wq_error *err);
	/* Fires the slots due by `now` (the caller's clock) of the schedules instance holds
	 * (leases judged on the store's clock), one transaction each (see op_schedule.c);
	 * *fired: tasks enqueued; *next_due as for schedule_lease. */
	wq_rc (*schedule_fire)(struct wq__store *s, const char *instance, int64_t now,
			       int64_t grace, int *fired, int64_t *next_due, wq_error *err);
	/* --- turn locks, paused kinds (issue 10; op_lock.c) ---
	 * claim() takes a pending task with a lock key only when the key is free and the
	 * task is the oldest due pending task of its key; in the claim's transaction it
	 * inserts the key's row (the primary key is the arbiter; a conflict rolls the claim
	 * back: WQ_EBUSY) and records `lock-acquired`. finish() and recovery (instance_reap,
	 * reap_orphans) delete the attempt's row in their transaction (`lock-released`).
	 * claim() never takes a task of a paused kind. */

	/* An external lease of `ttl` µs (> 0) on the store's clock: acquired_at and
	 * expires_at of *out are store times, and expiry is judged on that clock only (a
	 * skewed caller can neither take a live lease nor keep an expired one). The same
	 * holder renews. WQ_ELIMIT when held by another (*out: that hold); *out: the lease
	 * on success. lock_list: the unexpired holds, on the store's clock. */
	wq_rc (*lock_acquire)(struct wq__store *s, const char *key, const char *holder,
			      int64_t ttl, wq_lock *out, wq_error *err);
	/* WQ_ENOTFOUND when `holder` holds no unexpired lease of key. */
	wq_rc (*lock_renew)(struct wq__store *s, const char *key, const char *holder,
			    int64_t ttl, wq_lock *out, wq_error *err);
	/* WQ_ENOTFOUND when `holder` has no lease row of key. */
	wq_rc (*lock_release)(struct wq__store *s, const char *key, const char *holder,
			      wq_error *err);
	wq_rc (*lock_list)(struct wq__store *s, wq_lock **out, size_t *n, wq_error *err);
	wq_rc (*kind_pause)(struct wq__store *s, const char *kind, int paused, int64_t now,
			    wq_error *err);
	wq_rc (*kinds_paused)(struct wq__store *s, wq_kind_pause **out, size_t *n,
			      wq_error *err);

	/* group commit (issue 11) */
	/* Records n outcomes, each with finish()'s semantics, and then (req non-NULL) makes
	 * claim()'s claim, in ONE write transaction: one commit serves both. WQ_OK: it
	 * committed; rcs[i] / errs[i] hold each outcome's own answer — WQ_OK, WQ_ESTALE
	 * (only its stale-outcome event), or a refusal of that outcome alone (then each
	 * outcome is recorded in its own transaction, and the claim in its own) — and
	 * *got / *ngot the claimed tasks as claim() hands them out. Any other return (busy,
	 * I/O, a lost COMMIT answer: WQ_EBUSY, as the repeat recognises its outcomes and
	 * the claim is remembered) means nothing was recorded: every rcs[i] says so and
	 * nothing was claimed. */
	wq_rc (*finish_batch)(struct wq__store *s, const struct wq__outcome *const *o, size_t n,
			      wq_rc *rcs, wq_error *errs, const struct wq__claim_req *req,
			      struct wq__claimed **got, size_t *ngot, wq_error *err);
	/* --- follow-ups (issue 10; op_followup.c): finish() creates them --- */
	/* A task's parent (0: none) and its follow-ups' ids (ascending; *children malloc'd,
	 * NULL when none). WQ_ENOTFOUND. */
	wq_rc (*family)(struct wq__store *s, int64_t id, int64_t *parent, int64_t **children,
			size_t *n, wq_error *err);
	/* --- intake (issue 13; op_intake.c) ---
	 * finish() of a task that has a pending intake record moves the record, in its
	 * transaction: succeeded → handled (outcome succeeded or discarded), failed →
	 * giving-up (abandoned); each queues the acknowledgement (due now, a
	 * `source-ack-queued` event); other outcomes only count the handout. */

	/* known[i] = 1 when source has a record of keys[i] (any state). A read. */
	wq_rc (*intake_known)(struct wq__store *s, const char *source, const char *const *keys,
			      size_t n, unsigned char *known, wq_error *err);
	/* Records of source with another UIDVALIDITY that wait for something → retired (an
	 * `intake-retired` event on their tasks). *count: how many. */
	wq_rc (*intake_retire)(struct wq__store *s, const char *source, int64_t uidvalidity,
			       int64_t now, int *count, wq_error *err);
	/* One transaction: the record (pending) and its task (m->task, keyed
	 * `intake:SOURCE:KEY`). *task_id: the new task, 0 when the record existed (nothing
	 * written). */
	wq_rc (*intake_record)(struct wq__store *s, const struct wq__intake_msg *m,
			       int64_t *task_id, wq_error *err);
	/* Up to limit acknowledgements of source due by `now`, owned by instance for `lease`
	 * µs on the store's clock, where other owners' leases are judged too (issue 15)
	 * (conditional update; ack_attempts + 1), only while the instance row exists. */
	wq_rc (*intake_ack_claim)(struct wq__store *s, const char *instance, const char *source,
				  int limit, int64_t now, int64_t lease,
				  struct wq__intake_ack_row **out, size_t *n, wq_error *err);
	/* The source's answer, fenced by (ack_attempts, instance): ok → acknowledged /
	 * abandoned (`source-acknowledged`; an abandoned one also the operators' inbox
	 * notification `abandoned-intake`), else due again at next_at (`source-ack-failed`).
	 * *out: the record after it. A repeat after a lost COMMIT answer is WQ_OK; a lost
	 * fence WQ_ESTALE. */
	wq_rc (*intake_ack_finish)(struct wq__store *s, const struct wq__intake_ack *a,
				   struct wq__intake_acked *out, wq_error *err);
	/* Records by id; source, state and key "" for any. */
	wq_rc (*intake_list)(struct wq__store *s, const char *source, const char *state,
			     const char *key, wq_intake **out, size_t *n, wq_error *err);
	/* Acknowledgements queued or in flight (source "": all). */
	wq_rc (*intake_acks_waiting)(struct wq__store *s, const char *source, int64_t *count,
				     wq_error *err);
	/* --- kept stderr (issue 14; op_stderr.c) ---
	 * The stderr tail stored with attempt `attempt` of task_id (malloc'd *out).
	 * WQ_ENOTFOUND when the attempt has none. */
	wq_rc (*attempt_stderr)(struct wq__store *s, int64_t task_id, int attempt, char **out,
				wq_error *err);
	/* --- batch enqueue (issue 11; op_task.c) ---
	 * The n tasks (validated by the core) in ONE write transaction, in order, each with
	 * enqueue()'s operation-key semantics: rows[i] is its answer and item_rc[i] WQ_OK
	 * (accepted or replayed) or WQ_ECONFLICT (its identity holds another fingerprint:
	 * nothing created for it, a `conflict` event on the existing task, the message in
	 * item_errs[i] when item_errs is non-NULL). A later item sees the earlier ones (the
	 * same identity twice replays or conflicts). Returns WQ_OK once committed, whatever
	 * the items' codes; any other failure (a limit, a store error) rolls the whole batch
	 * back and *err names the item: nothing is written. */
	wq_rc (*enqueue_many)(struct wq__store *s, const struct wq__new_task *const *t,
			      size_t n, struct wq__enqueued_row *rows, wq_rc *item_rc,
			      wq_error *item_errs, wq_error *err);
	/* --- wake-ups (issues 11, 12; op_wake.c) --- */
	/* The earliest time after `now` at which a pending task of `kinds` (not paused) or a
	 * pending delivery becomes due; 0 when none. Work already due is not reported (a
	 * claim takes it, or it waits for something else: a turn lock, a limit). */
	wq_rc (*wake_next)(struct wq__store *s, const char *const *kinds, size_t nkinds,
			   int64_t now, int64_t *at, wq_error *err);
	/* --- wave4 batch: prefetch (op_rows.c) --- */
	/* Gives back the n claimed tasks c that `instance` held without starting them (a
	 * worker's prefetch, at its drain), in one transaction: each still owned by that very
	 * attempt goes back to pending where it was in the queue, its attempt ended
	 * (`retry`, reason prefetch-returned) without using up an attempt of its limit
	 * (retry_base and max_attempts + 1), with a `prefetch-returned` event; rcs[i]:
	 * WQ_OK, or WQ_ESTALE when the task no longer belongs to the attempt (nothing
	 * written for it). */
	wq_rc (*unclaim)(struct wq__store *s, const struct wq__claimed *c, size_t n,
			 const char *instance, int64_t now, wq_rc *rcs, wq_error *err);
	/* --- wave4 enqueue: group commit (op_enqueue_group.c) ---
	 * The n enqueues of concurrent wq_enqueue callers (validated by the core) in ONE
	 * write transaction, in order, each exactly as enqueue() would answer it alone:
	 * item_rc[i] and item_errs[i] are item i's code and message, rows[i] its answer when
	 * WQ_OK. Each item runs inside its own savepoint: an item's failure (a conflict, a
	 * limit, a unique clash) undoes that item only (a conflict keeps its `conflict`
	 * event, as enqueue() does). Returns WQ_OK once the shared commit is durable. When
	 * the transaction breaks before its commit, nothing of it is written and every item
	 * runs again alone (as enqueue()); when the commit fails, every written item
	 * carries that failure (a lost commit answer names each item's own operation). The
	 * items' answers are final either way; the return code only says which it was. */
	wq_rc (*enqueue_group)(struct wq__store *s, const struct wq__new_task *const *t,
			       size_t n, struct wq__enqueued_row *rows, wq_rc *item_rc,
			       wq_error *item_errs, wq_error *err);
	/* --- wave4 clock (issue 15; op_clock.c) ---
	 * The store's clock, on which every lease's expiry is written and judged (what
	 * reads it for a finding, such as doctor's expired schedule owner). */
	wq_rc (*store_now)(struct wq__store *s, int64_t *now, wq_error *err);
};

/* The backends compiled in. */
extern const struct wq__store_methods wq__sqlite_methods;
#ifdef WQ_HAVE_POSTGRES
extern const struct wq__store_methods wq__postgres_methods;
#endif

#endif /* WQ_STORE_H */
