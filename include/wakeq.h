/*
 * wakeq.h — the whole public API of libwakeq, a durable background-task engine.
 *
 * If it is not in this file it is not published.
 *
 * Conventions (they hold for every function below unless its comment says otherwise):
 *  - Every function returns a wq_rc. WQ_OK (0) is success.
 *  - The last argument `wq_error *err` is optional (may be NULL). On failure it receives the
 *    code and a one-line message naming what was wrong. On success it is left untouched.
 *  - Out-parameters are written only on success.
 *  - On failure nothing changed in the store ("no partial writes").
 *  - Every *_free / *_close accepts NULL.
 *  - Times are microseconds since the Unix epoch, UTC (int64_t). Durations are microseconds.
 *  - Strings handed in are borrowed for the duration of the call only.
 */
#ifndef WAKEQ_H
#define WAKEQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WQ_VERSION_STRING "0.1.0"

/*
 * Result codes. The numbers never change (append only). Codes 0..6 equal the exit codes
 * of the `wakeq` command-line tool; the CLI maps every other code to exit status 1.
 */
#define WQ_RC_LIST(X)                                                                  \
	X(WQ_OK, 0, "ok")                                                              \
	X(WQ_ERROR, 1, "error")                                                        \
	X(WQ_EINVAL, 2, "invalid argument")                                            \
	X(WQ_ECONFLICT, 3, "idempotency conflict")                                     \
	X(WQ_ENOTFOUND, 4, "not found")                                                \
	X(WQ_ELIMIT, 5, "limit reached")                                               \
	X(WQ_ESTATE, 6, "transition not allowed from the current state")               \
	X(WQ_EBUSY, 7, "store busy (retryable)")                                       \
	X(WQ_ESTALE, 8, "attempt no longer owns the task")                             \
	X(WQ_ESCHEMA, 9, "schema version mismatch")                                    \
	X(WQ_ENOMEM, 10, "out of memory")                                              \
	X(WQ_EIO, 11, "input/output error")                                            \
	X(WQ_ESTORE, 12, "storage error")                                              \
	X(WQ_ECONFIG, 13, "invalid configuration")                                     \
	X(WQ_ETOOBIG, 14, "too large")                                                 \
	X(WQ_EUNKNOWN, 15, "outcome unknown (the commit's answer was lost)")

typedef enum {
#define WQ__RC_ENUM(name, num, text) name = num,
	WQ_RC_LIST(WQ__RC_ENUM)
#undef WQ__RC_ENUM
	WQ__RC_LAST /* never use! */
} wq_rc;

/* Static text for a code; never NULL. */
const char *wq_strerror(wq_rc rc);

typedef struct wq_error {
	wq_rc code;
	char message[512];
} wq_error;

/* ------------------------------------------------------------------ states ---- */

typedef enum {
	WQ_STATE_PENDING = 1,
	WQ_STATE_RUNNING = 2,
	WQ_STATE_SUCCEEDED = 3,
	WQ_STATE_FAILED = 4,
	WQ_STATE_INTERRUPTED = 5,
	WQ_STATE_CANCELLED = 6,
} wq_state;

/* "pending", "running", ...; NULL for a value outside the enum. */
const char *wq_state_name(wq_state s);
/* Parses a state name. WQ_EINVAL (listing the valid names) for anything else. */
wq_rc wq_state_parse(const char *name, wq_state *out, wq_error *err);
/* 1 for succeeded, failed, cancelled: states that never change again. */
int wq_state_is_terminal(wq_state s);

/* ------------------------------------------------------------------ time ---- */

/* Current wall-clock time in microseconds since the epoch. */
int64_t wq_now(void);
/* "500ms", "30s", "5m", "2h", "1d", and sums such as "1h30m". Rejects negative, empty,
 * unknown units and overflow with WQ_EINVAL naming the text. */
wq_rc wq_duration_parse(const char *text, int64_t *out_us, wq_error *err);
/* RFC 3339 ("2026-11-30T10:00:00Z", "...T10:00:00.250+02:00"). */
wq_rc wq_time_parse(const char *text, int64_t *out_us, wq_error *err);
/* Formats as RFC 3339 UTC with milliseconds ("2026-11-30T10:00:00.000Z") into buf
 * (at least WQ_TIME_BUFSZ bytes). Returns buf. */
#define WQ_TIME_BUFSZ 32
char *wq_time_format(int64_t us, char *buf);
/* Formats a duration the way wq_duration_parse reads it ("1m30s", "250ms"). */
char *wq_duration_format(int64_t us, char *buf, size_t bufsz);

/* ------------------------------------------------------------------ store ---- */

/* An open store. One handle is used by one thread at a time, with one exception:
 * several threads may call wq_enqueue on one handle at once (while no other function
 * uses it); their enqueues then share commits (group commit, see wq_enqueue). */
typedef struct wq_db wq_db;

enum {
	/* Create the schema, or migrate it forward, when needed. Without this flag a store
	 * that is uninitialised or older than this binary is refused with WQ_ESCHEMA. */
	WQ_OPEN_MIGRATE = 1u << 0,
};

/*
 * Opens a store. `url` is a SQLite file path (created when missing and WQ_OPEN_MIGRATE is
 * given) or a "postgres://" / "postgresql://" URL. A store whose schema is newer than this
 * binary is always refused with WQ_ESCHEMA and a message naming both versions.
 * On success *out must be closed with wq_db_close().
 */
wq_rc wq_db_open(const char *url, unsigned flags, wq_db **out, wq_error *err);
void wq_db_close(wq_db *db);
/* Name of the backend ("sqlite", "postgres"). */
const char *wq_db_backend(const wq_db *db);
/* Schema version this binary writes. */
int wq_schema_version(void);

/* The library's version ("0.1.0"): the one it was built as, which may differ from the
 * WQ_VERSION_STRING a program was compiled against when it links libwakeq.so. */
const char *wq_version(void);

/* ------------------------------------------------------------------ tasks ---- */

#define WQ_KIND_MAX 64       /* [A-Za-z0-9._-], 1..64 bytes */
#define WQ_NAME_MAX 128      /* tenant, scope: printable, no control characters */
#define WQ_KEY_MAX 256       /* operation key */
#define WQ_REASON_MAX 64
#define WQ_DETAIL_MAX 256
#define WQ_SHA256_HEX 65     /* 64 hex digits + NUL */
#define WQ_PAYLOAD_MAX_DEFAULT (1024 * 1024)

typedef struct wq_enqueue_opts {
	const char *kind;        /* required */
	const char *payload;     /* JSON text; NULL means "{}" */
	size_t payload_len;      /* bytes of payload; 0 with a non-NULL payload means strlen */
	int payload_version;     /* 0 means 1 */
	const char *tenant;      /* NULL means "" (the default tenant) */
	const char *scope;       /* NULL means "" */
	int priority;            /* -1000..1000, higher runs earlier; see docs/architecture.md */
	int64_t due_at;          /* 0 means now */
	int max_attempts;        /* 0 means 3; 1..1000 */
	/* Operation key (SPEC §6): identity = (tenant, scope, kind, key). NULL: the task
	 * gets a generated operation id and is never a replay. */
	const char *key;
	/* Channels notified when the task succeeds (SPEC §8): "inbox:RECIPIENT",
	 * "webhook:NAME", "command:NAME". At most WQ_NOTIFY_MAX. */
	const char *const *notify;
	size_t nnotify;
	/* Turn lock key (issue 10), or NULL: at most one task (or external holder, see
	 * wq_lock_acquire) holds a key at a time; tasks of one key run one after another in
	 * (priority, due) order, tasks of other keys run freely. 1..WQ_KEY_MAX bytes. */
	const char *lock;
	/* A loaded configuration (wq_config_load) whose [limits] / [limits.TENANT] apply,
	 * or NULL: no limits (issue 10). max_active: the (tenant, scope) may have at most
	 * that many pending + running tasks; one more is WQ_ELIMIT naming the limit, its
	 * value, the tenant and the scope (a replay of a keyed task is never refused). */
	const struct wq_config *limits;
} wq_enqueue_opts;

#define WQ_NOTIFY_MAX 8

typedef struct wq_enqueued {
	int64_t id;
	char operation[WQ_KEY_MAX + 1];  /* the key, or the generated operation id */
	char fingerprint[WQ_SHA256_HEX]; /* SHA-256 of canonical payload + version */
	wq_state state; /* of the task; 0 for a replay whose task row was pruned */
	int replayed; /* 1 when an existing task with the same operation was returned */
} wq_enqueued;

/*
 * Validates everything (kind, JSON with the error's position, sizes) before writing.
 * Appends an `accepted` event in the same transaction.
 * With a key: the same identity and fingerprint returns the existing task (replayed = 1,
 * a `replayed` event, nothing created, also after the task row was pruned while the
 * operation record lives); the same identity with another fingerprint (payload or
 * payload version) is WQ_ECONFLICT naming the key, and creates nothing. Uniqueness is
 * enforced by the store (a unique index), so it holds across processes.
 * Threads: concurrent calls on one handle are safe and share one transaction and one
 * durable commit per group (each call keeps its own answer: a conflict, a limit or an
 * error of one fails only that call); no call returns before its commit is durable, and
 * a failed commit fails every call in it.
 */
wq_rc wq_enqueue(wq_db *db, const wq_enqueue_opts *opts, wq_enqueued *out, wq_error *err);

/* A snapshot of one task. Safe evidence only: no payload or result body. */
typedef struct wq_task {
	int64_t id;
	char kind[WQ_KIND_MAX + 1];
	char tenant[WQ_NAME_MAX + 1];
	char scope[WQ_NAME_MAX + 1];
	char operation[WQ_KEY_MAX + 1];  /* key, or generated operation id */
	int keyed;                       /* 1 when the operation came from a caller's key */
	char fingerprint[WQ_SHA256_HEX]; /* operation fingerprint (canonical payload + version) */
	wq_state state;
	int priority;
	int payload_version;
	int64_t payload_size;
	char payload_sha256[WQ_SHA256_HEX];
	int attempts;      /* claims so far; the current/last attempt id is "<id>.<attempts>" */
	int max_attempts;
	int64_t created_at, updated_at, due_at;
	int64_t started_at;  /* of the last attempt; 0 if never */
	int64_t finished_at; /* 0 unless terminal */
	char instance[WQ_NAME_MAX + 1]; /* owning worker instance while running, else last */
	char reason[WQ_REASON_MAX + 1]; /* why interrupted/failed ("worker-lost", "exit-1") */
	char reason_detail[WQ_DETAIL_MAX + 1];
	char outcome[WQ_REASON_MAX + 1]; /* "" or "discarded" for succeeded tasks */
	int cancel_requested;
	int has_result;
	int64_t result_size;
	char result_sha256[WQ_SHA256_HEX];
} wq_task;

wq_rc wq_task_get(wq_db *db, int64_t id, wq_task *out, wq_error *err);

typedef struct wq_list_filter {
	wq_state state;   /* 0 = any */
	const char *kind; /* NULL = any */
	int limit;        /* 0 = 100 */
} wq_list_filter;

/* Ordered by id. *out is an array of *n tasks the caller frees with wq_free(). */
wq_rc wq_task_list(wq_db *db, const wq_list_filter *filter, wq_task **out, size_t *n,
		   wq_error *err);

/*
 * Cancels a task. pending → cancelled (conditional: it is never claimed afterwards).
 * running → a cancel request is recorded; the worker stops the handler and records
 * `cancelled` only when the handler confirms it stopped before any effect (exit 75 after
 * the request), otherwise `interrupted`. *out_state (optional) receives the state after
 * the call. Any other state: WQ_ESTATE naming it.
 */
wq_rc wq_task_cancel(wq_db *db, int64_t id, wq_state *out_state, wq_error *err);

typedef enum {
	WQ_RESOLVE_RETRY = 1,     /* → pending, due now */
	WQ_RESOLVE_SUCCEEDED = 2,
	WQ_RESOLVE_FAILED = 3,
	WQ_RESOLVE_CANCEL = 4,
} wq_resolution;

/* Decides an interrupted task. `note` (may be NULL) is operator text kept on the
 * timeline. Any state but interrupted: WQ_ESTATE. */
wq_rc wq_task_resolve(wq_db *db, int64_t id, wq_resolution decision, const char *note,
		      wq_error *err);

/* The stored result body of a succeeded task. *body (NUL-terminated for convenience, *len
 * bytes) is freed by the caller with wq_free(). WQ_ENOTFOUND when there is no result. */
wq_rc wq_task_result(wq_db *db, int64_t id, char **body, size_t *len, wq_error *err);

/* ------------------------------------------------------------------ timeline ---- */

typedef struct wq_event {
	int64_t id;
	int64_t task_id;
	int64_t at;
	int attempt;             /* 0 when not about an attempt */
	char type[32];           /* "accepted", "claimed", "succeeded", "interrupted", ... */
	char instance[WQ_NAME_MAX + 1];
	char detail[512];        /* a JSON object of safe evidence (sizes, hashes, reasons) */
} wq_event;

/* Events of one task in order. *out freed with wq_free(). */
wq_rc wq_timeline(wq_db *db, int64_t task_id, wq_event **out, size_t *n, wq_error *err);

/* ------------------------------------------------------- operations (§6, §14) ---- */

/* The task of an operation identity (tenant/scope NULL mean ""). WQ_ENOTFOUND when no
 * such operation exists, or its task row was pruned (the message says which). */
wq_rc wq_operation_find(wq_db *db, const char *tenant, const char *scope, const char *kind,
			const char *key, int64_t *task_id, wq_error *err);

/*
 * The idempotency key to hand to outside APIs for one operation: "wq1-" followed by 40
 * lowercase hex digits (the first 160 bits of SHA-256 over a length-prefixed encoding of
 * whether the operation is keyed, tenant, scope, kind and the key or generated id). One
 * string per operation identity, the same in every attempt, different for any two
 * identities (no key can make two encodings equal), [A-Za-z0-9-] only: safe as an HTTP
 * header value. Handlers get it as $WAKEQ_IDEMPOTENCY_KEY. `keyed` is wq_task.keyed.
 * WQ_EINVAL when a field is longer than its maximum.
 */
#define WQ_IDEMPOTENCY_KEY_BUFSZ 45 /* "wq1-" + 40 hex digits + NUL */
wq_rc wq_operation_idempotency_key(const char *tenant, const char *scope, const char *kind,
				   const char *operation, int keyed,
				   char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err);
/* The key for effect `name` of an operation, derived the same way from the operation's
 * idempotency key (above) and the effect's name: what `wakeq effect begin` prints. */
wq_rc wq_effect_idempotency_key(const char *operation_key, const char *name,
				char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err);

/* One attempt (claim) of a task: the attempt id is "<task_id>.<attempt>". */
typedef struct wq_attempt {
	int64_t task_id;
	int attempt;
	char instance[WQ_NAME_MAX + 1]; /* the worker instance that ran it */
	int64_t started_at;
	int64_t finished_at;            /* 0 while it runs */
	char outcome[WQ_REASON_MAX + 1]; /* "succeeded", "retry", "failed", "interrupted",
					    "cancelled"; "" while it runs */
	char reason[WQ_REASON_MAX + 1];
	int exit_status;                /* -1 when none (killed, not applicable) */
} wq_attempt;

/* The attempts of a task by number. *out freed with wq_free(). WQ_ENOTFOUND for an
 * unknown task. */
wq_rc wq_attempts(wq_db *db, int64_t task_id, wq_attempt **out, size_t *n, wq_error *err);

/* Canonical JSON (sorted keys, no insignificant white space, normalised numbers and
 * string escapes) of `text`. *out (NUL-terminated) is freed with wq_free(). */
wq_rc wq_json_canonical(const char *text, size_t len, char **out, wq_error *err);

/* ------------------------------------------------------------ effects (§7) ---- */

typedef enum {
	WQ_EFFECT_NEW = 1,       /* intent recorded: go ahead, then call wq_effect_done */
	WQ_EFFECT_DONE = 2,      /* an earlier attempt completed it: skip; here is its result */
	WQ_EFFECT_UNCERTAIN = 3, /* an earlier attempt began it and never confirmed */
} wq_effect_status;

#define WQ_EFFECT_NAME_MAX 128 /* [A-Za-z0-9._:-] */
#define WQ_EFFECT_RESULT_MAX 4096

/*
 * Begins effect `name` of the running attempt (task_id, attempt). Conditional on the task
 * being running with that attempt (WQ_ESTALE otherwise). On WQ_EFFECT_DONE *result
 * (optional) receives the recorded result (wq_free; may be NULL when none was given).
 * On WQ_EFFECT_UNCERTAIN the attempt is marked: whatever the handler does next, the
 * attempt ends `interrupted` with reason `uncertain-effect` naming the effect.
 * Beginning the same effect again in the same attempt answers WQ_EFFECT_NEW again.
 * The idempotency key to hand to an outside API is wq_effect_key().
 */
wq_rc wq_effect_begin(wq_db *db, int64_t task_id, int attempt, const char *name,
		      wq_effect_status *status, char **result, wq_error *err);
/* Confirms effect `name` of the attempt, with an optional result (safe text, at most
 * WQ_EFFECT_RESULT_MAX bytes; kept for later attempts, never put on the timeline, which
 * gets its size and SHA-256). WQ_ESTALE as for begin; WQ_ESTATE when it was not begun by
 * this attempt (never begun, uncertain, or done by another attempt). Confirming it again
 * with the same result is WQ_OK. */
wq_rc wq_effect_done(wq_db *db, int64_t task_id, int attempt, const char *name,
		     const char *result, wq_error *err);
/* The idempotency key of effect `name` of task_id's operation (see
 * wq_effect_idempotency_key): the same for every attempt of the task, different for every
 * other operation or effect. WQ_ENOTFOUND when there is no such task. */
wq_rc wq_effect_key(wq_db *db, int64_t task_id, const char *name,
		    char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err);

/* ---------------------------------------------------- retention and doctor (§15) ---- */

typedef struct wq_prune_opts {
	int64_t task_retention;      /* 0: 3 days. Tasks finished longer ago than this go
					(succeeded, failed, cancelled; with events, attempts,
					effects). */
	int64_t operation_retention; /* 0: 7 days, counted from the task's completion; never
					shorter than task_retention (WQ_EINVAL). An operation
					record goes only after its task row did. */
} wq_prune_opts;

typedef struct wq_prune_counts {
	int64_t tasks;
	int64_t operations;
} wq_prune_counts;

/* One transaction. A task with a delivery still pending or sending is kept until the
 * delivery is delivered or dead (its notification would go with it). Replay protection (wq_enqueue) holds for the operation retention past
 * completion even when the task row is gone; operations of tasks that are not finished
 * are never pruned. *out (optional) receives what was deleted. */
wq_rc wq_prune(wq_db *db, const wq_prune_opts *opts, wq_prune_counts *out, wq_error *err);

typedef struct wq_finding {
	char type[32];    /* "effect-begun-twice", "uncertain-effect", "interrupted",
			     "stuck-running", "dead-delivery", "operation-expiring" */
	int64_t task_id;  /* 0 when none */
	int64_t delivery_id;
	char operation[WQ_KEY_MAX + 1];
	char detail[256]; /* safe evidence */
} wq_finding;

/* Everything that needs a human: effects two or more attempts got `new` for, effects
 * begun by an attempt that is over and never confirmed (both: unless a resolution of the
 * task answered them), interrupted tasks, tasks running longer than a bound
 * ("stuck-running": an instance alive but no longer running its handler keeps a task
 * running forever), and dead deliveries. "operation-expiring" is never reported: an
 * operation's retention starts only once its task row was pruned. *out freed with
 * wq_free(). wq_doctor uses the default options. */
typedef struct wq_doctor_opts {
	int64_t stuck_after; /* 0: 1 hour. A task running (since its claim) longer than
				this is "stuck-running", whether or not a handler still
				runs: set it above the longest kind timeout. */
} wq_doctor_opts;

#define WQ_DOCTOR_STUCK_AFTER_DEFAULT (INT64_C(3600) * 1000000)

wq_rc wq_doctor(wq_db *db, wq_finding **out, size_t *n, wq_error *err);
wq_rc wq_doctor_opt(wq_db *db, const wq_doctor_opts *opts, wq_finding **out, size_t *n,
		    wq_error *err);

/* -------------------------------------------------------------- outbox (§8) ---- */

typedef enum {
	WQ_DELIVERY_PENDING = 1,
	WQ_DELIVERY_SENDING = 2,
	WQ_DELIVERY_DELIVERED = 3,
	WQ_DELIVERY_DEAD = 4,
} wq_delivery_state;

const char *wq_delivery_state_name(wq_delivery_state s);
wq_rc wq_delivery_state_parse(const char *name, wq_delivery_state *out, wq_error *err);

typedef struct wq_delivery {
	int64_t id;
	int64_t task_id;
	char channel[WQ_NAME_MAX + 1]; /* "inbox:alice", "webhook:ops", "command:pager" */
	wq_delivery_state state;
	int attempts;      /* every attempt so far, also those before a wq_delivery_retry */
	int max_attempts;  /* the attempt after which a failure makes it dead: the channel's
			    * max_attempts counted from the last retry (8 until a worker
			    * has applied its configuration) */
	int64_t created_at, updated_at, next_at, delivered_at;
	char last_error[WQ_DETAIL_MAX + 1]; /* status code, transport error or exit status;
					     * never a response body */
} wq_delivery;

/* Deliveries by id; state 0 = any. *out freed with wq_free(). */
wq_rc wq_delivery_list(wq_db *db, wq_delivery_state state, wq_delivery **out, size_t *n,
		       wq_error *err);
/* dead → pending, due now, with a new round of attempts (event `delivery-retry`). Never
 * re-runs the task. WQ_ENOTFOUND; WQ_ESTATE naming any other state. */
wq_rc wq_delivery_retry(wq_db *db, int64_t id, wq_error *err);

/* One notification in the built-in inbox: metadata only, never the result body. */
typedef struct wq_notification {
	int64_t id;
	char recipient[WQ_NAME_MAX + 1];
	int64_t delivery_id; /* the inbox delivery; for "dead-delivery": the dead one */
	int64_t task_id;
	char kind[WQ_KIND_MAX + 1];
	char operation[WQ_KEY_MAX + 1];
	char subject[64];    /* "succeeded", "dead-delivery", "abandoned-intake" */
	int64_t result_size; /* -1 when no result */
	char result_sha256[WQ_SHA256_HEX];
	int64_t created_at;
	int64_t read_at;     /* 0 while unread */
} wq_notification;

/* The notifications of `recipient` by id (unread_only: those not marked read). Each
 * delivery adds at most one (unique in the store). *out freed with wq_free(). */
wq_rc wq_inbox_list(wq_db *db, const char *recipient, int unread_only,
		    wq_notification **out, size_t *n, wq_error *err);
/* Marks a notification read; one already read stays as it is (WQ_OK). WQ_ENOTFOUND. */
wq_rc wq_inbox_read(wq_db *db, int64_t notification_id, wq_error *err);

/* ------------------------------------------------------------------ config ---- */

/* A validated worker configuration (INI). Unknown sections or keys, bad values and
 * missing commands are WQ_ECONFIG naming the file and line. */
typedef struct wq_config wq_config;

wq_rc wq_config_load(const char *path, wq_config **out, wq_error *err);
/* Same, from text in memory (`name` is used in messages). */
wq_rc wq_config_parse(const char *text, const char *name, wq_config **out, wq_error *err);
void wq_config_free(wq_config *cfg);
/* The `db` key of [worker], or NULL. Borrowed from cfg. */
const char *wq_config_db(const wq_config *cfg);
/* The [retention] section (`tasks`, `operations`) as prune options; 0 for a key the file
 * does not set. */
void wq_config_retention(const wq_config *cfg, wq_prune_opts *out);

/* ------------------------------------------------------------------ worker ---- */

typedef struct wq_worker wq_worker;

typedef struct wq_worker_opts {
	int until_idle;      /* return once no task or delivery is due or in flight here */
	int handle_signals;  /* install SIGTERM/SIGINT handlers (drain, second signal: skip) */
	const char *host;    /* NULL: $WAKEQ_HOST, else gethostname() */
	const char *db_url;  /* handed to handlers as WAKEQ_DB; NULL: none */
	/* Log sink for operator lines (never payloads). NULL: stderr. */
	void (*log)(void *ud, const char *level, const char *line);
	void *log_ud;
} wq_worker_opts;

/* The worker borrows db and cfg; both must outlive it. */
wq_rc wq_worker_new(wq_db *db, const wq_config *cfg, const wq_worker_opts *opts,
		    wq_worker **out, wq_error *err);
/* Registers the instance, recovers lost instances, runs the event loop until stopped
 * (signal, wq_worker_stop, or idle with until_idle), drains, unregisters. */
wq_rc wq_worker_run(wq_worker *w, wq_error *err);
/* Asks a running worker to drain and stop; async-signal-safe. A second call skips the
 * drain wait. */
void wq_worker_stop(wq_worker *w);
/* The instance id, valid after wq_worker_run has registered it (else ""). */
const char *wq_worker_instance(const wq_worker *w);
void wq_worker_free(wq_worker *w);

/* ------------------------------------------------------------------ misc ---- */

/* Frees memory handed out by libwakeq. */
void wq_free(void *p);

/* Validates JSON text; on failure WQ_EINVAL with "line L, column C: <what>". */
wq_rc wq_json_validate(const char *text, size_t len, wq_error *err);

/* ----------------------------------------------- operator retry (issue 14) ---- */

/*
 * Retries a failed or cancelled task: → pending, due now, a new round of attempts under
 * the same task and operation (an enqueue of its key still replays to it). The round's
 * attempt budget counts from the attempts used: max_attempts becomes attempts + the
 * budget the task had (its kind's max_attempts, when the worker's config sets one). Its
 * timeline gets a `retried` event with `by` (NULL: "operator") and `note` (may be NULL,
 * at most 1000 bytes). Any other state: WQ_ESTATE naming it; WQ_ENOTFOUND.
 */
wq_rc wq_task_retry(wq_db *db, int64_t id, const char *note, const char *by, wq_error *err);

/* wq_task_resolve naming who decided in the `resolved` event (NULL: "operator"). */
wq_rc wq_task_resolve_by(wq_db *db, int64_t id, wq_resolution decision, const char *note,
			 const char *by, wq_error *err);

/* ------------------------------------------- operator's view (issue 14) ---- */

/* One count of wq_stats: tasks by (state, kind), running tasks by instance, deliveries
 * by state. */
typedef struct wq_stat_count {
	char state[16];                 /* tasks, deliveries: the state; running: "running" */
	char kind[WQ_KIND_MAX + 1];     /* tasks: the kind; else "" */
	char instance[WQ_NAME_MAX + 1]; /* running: the worker instance; else "" */
	int64_t count;
	int64_t oldest_due_at;          /* tasks pending: the earliest due_at of a due one
					 * (0: none is due yet); else 0 */
} wq_stat_count;

/* A registered worker instance and how many tasks it runs now. */
typedef struct wq_instance_info {
	char id[WQ_NAME_MAX + 1];
	char host[WQ_NAME_MAX + 1];
	int64_t pid;
	int64_t started_at;
	int64_t heartbeat_at;
	int64_t running;
} wq_instance_info;

/* One snapshot (one read transaction). Arrays are freed by wq_stats_free. */
typedef struct wq_stats {
	int64_t now;                  /* when it was taken */
	int64_t oldest_pending_due_at; /* earliest due_at of a due pending task; 0: none */
	wq_stat_count *tasks;         /* by state, then kind */
	size_t ntasks;
	wq_stat_count *running;       /* by instance */
	size_t nrunning;
	wq_stat_count *deliveries;    /* by state */
	size_t ndeliveries;
	wq_instance_info *instances;  /* by id */
	size_t ninstances;
} wq_stats;

wq_rc wq_stats_get(wq_db *db, wq_stats *out, wq_error *err);
void wq_stats_free(wq_stats *st);

/* A task listing with several values per field (any of) and more fields than
 * wq_list_filter. Every part given must match. */
typedef struct wq_task_query {
	const wq_state *states;   /* any of these; nstates 0 = any state */
	size_t nstates;
	const char *const *kinds; /* any of these; nkinds 0 = any kind */
	size_t nkinds;
	const char *tenant;       /* NULL = any */
	const char *scope;        /* NULL = any */
	int64_t since;            /* created at or after (0: no bound) */
	int64_t until;            /* created before (0: no bound) */
	int limit;                /* 0 = 100 */
} wq_task_query;

/* Ordered by id. *out is an array of *n tasks the caller frees with wq_free(). */
wq_rc wq_task_query_list(wq_db *db, const wq_task_query *q, wq_task **out, size_t *n,
			 wq_error *err);

/* What wq_prune would delete now, deleting nothing (prune --dry-run). */
wq_rc wq_prune_preview(wq_db *db, const wq_prune_opts *opts, wq_prune_counts *out,
		       wq_error *err);
/* ------------------------------------------------------------------ schedules ---- */
/* Recurring schedules (issue 12): a named cron expression (in a tz-database zone) or a
 * fixed interval that enqueues a task of `kind` per slot, with the operation key
 * "schedule:NAME:<slot as RFC 3339 UTC>" — so a slot is enqueued at most once whatever
 * number of workers fire it. One worker at a time owns a schedule (a lease renewed on its
 * heartbeat, [worker] schedule_lease); another takes over when the lease expires. */

#define WQ_SCHEDULE_NAME_MAX 64 /* [A-Za-z0-9._-] */
#define WQ_CRON_MAX 256
#define WQ_TZ_MAX 64

typedef enum wq_overlap {
	WQ_OVERLAP_SKIP = 0,  /* a slot whose previous run is pending or running: skipped */
	WQ_OVERLAP_ALLOW = 1, /* always enqueued */
} wq_overlap;

typedef enum wq_catch_up {
	WQ_CATCH_UP_LATEST = 0, /* after downtime: one run for all missed slots */
	WQ_CATCH_UP_ALL = 1,    /* every missed slot runs */
	WQ_CATCH_UP_NONE = 2,   /* missed slots do not run (skipped) */
} wq_catch_up;

typedef struct wq_schedule_opts {
	const char *name;      /* required */
	const char *cron;      /* 5-field cron expression, or NULL with every */
	const char *tz;        /* cron's zone (tz database name); NULL: UTC */
	int64_t every;         /* µs (>= 1s), anchored at the creation time; 0 with cron */
	const char *kind;      /* required */
	const char *payload;   /* JSON text; NULL means "{}" */
	size_t payload_len;    /* 0 with a non-NULL payload means strlen */
	int payload_version;   /* 0 means 1 */
	const char *tenant, *scope;
	const char *const *notify; /* as wq_enqueue_opts */
	size_t nnotify;
	int max_attempts;      /* of each task; 0 means 3 */
	wq_overlap overlap;
	wq_catch_up catch_up;
} wq_schedule_opts;

typedef struct wq_schedule {
	int64_t id;
	char name[WQ_SCHEDULE_NAME_MAX + 1];
	char cron[WQ_CRON_MAX + 1];  /* "" for an interval */
	int64_t every;               /* µs; 0 for cron */
	char tz[WQ_TZ_MAX + 1];
	char kind[WQ_KIND_MAX + 1];
	char tenant[WQ_NAME_MAX + 1];
	char scope[WQ_NAME_MAX + 1];
	char overlap[8];             /* "skip" / "allow" */
	char catch_up[8];            /* "latest" / "all" / "none" */
	int paused;
	int64_t next_slot, last_slot; /* µs; last_slot 0: never fired */
	int64_t last_task;            /* id of the last enqueued task, 0: none */
	char owner[WQ_NAME_MAX + 1];  /* instance holding the lease ("" none) */
	int64_t lease_until;          /* on the store's clock (issue 15) */
	int64_t created_at;
	int64_t payload_size;
	char payload_sha256[WQ_SHA256_HEX];
} wq_schedule;

/* One recorded schedule event: "fired" (task), "skipped-overlap", "skipped-missed". */
typedef struct wq_schedule_event {
	int64_t at, slot;  /* slot: the (first) slot concerned */
	char type[24];
	int64_t task_id;   /* fired: the task; skipped-overlap: the run still in progress */
	int64_t count;     /* slots concerned */
	char instance[WQ_NAME_MAX + 1];
} wq_schedule_event;

/* Validates everything (name, cron with the wrong field named, zone, interval, kind,
 * payload JSON, notify channels), then stores it. WQ_ECONFLICT when the name exists.
 * out (may be NULL) gets the stored schedule, with its first slot. */
wq_rc wq_schedule_add(wq_db *db, const wq_schedule_opts *opts, wq_schedule *out,
		      wq_error *err);
/* The checks of wq_schedule_add without a store (a CLI validates before it opens one). */
wq_rc wq_schedule_check(const wq_schedule_opts *opts, wq_error *err);
/* By name; *out freed with wq_free(). */
wq_rc wq_schedule_list(wq_db *db, wq_schedule **out, size_t *n, wq_error *err);
wq_rc wq_schedule_get(wq_db *db, const char *name, wq_schedule *out, wq_error *err);
/* The newest events first (at most 50); *out freed with wq_free(). */
wq_rc wq_schedule_events(wq_db *db, const char *name, wq_schedule_event **out, size_t *n,
			 wq_error *err);
/* Pause: no slot fires, the owner lets go. Resume: the next slot is the first one after
 * now (slots passed while paused are not run). Rm: the schedule and its events (tasks it
 * enqueued stay). WQ_ENOTFOUND for an unknown name. */
wq_rc wq_schedule_pause(wq_db *db, const char *name, wq_error *err);
wq_rc wq_schedule_resume(wq_db *db, const char *name, wq_error *err);
wq_rc wq_schedule_rm(wq_db *db, const char *name, wq_error *err);
/* Before wq_worker_run: 0 = this worker neither owns nor fires schedules (default 1). */
void wq_worker_set_scheduler(wq_worker *w, int on);
/* ------------------------------------------------ turn locks, paused kinds ---- */
/*
 * Turn locks (issue 10). A key is held by at most one holder at a time, enforced by the
 * store (a unique row per key, written conditionally), so workers on several hosts never
 * run two tasks of one key at once. A task enqueued with wq_enqueue_opts.lock holds its
 * key from its claim until its attempt ends (finish, or recovery when its worker is
 * lost: an interrupted task does not keep the key). An external holder (a chat turn)
 * holds a lease until it releases it or the lease expires; while it holds the key, the
 * key's tasks stay pending.
 */
typedef struct wq_lock {
	char key[WQ_KEY_MAX + 1];
	char holder[WQ_NAME_MAX + 1]; /* "task:<id>" for a task's hold */
	int64_t task_id;              /* the holding task, 0 for an external holder */
	int attempt;                  /* the holding task's attempt */
	int64_t acquired_at;          /* both on the store's clock, which alone judges expiry */
	int64_t expires_at;           /* 0: a task's hold (until its attempt ends) */
} wq_lock;

/* Takes `key` for `holder` (printable, 1..WQ_NAME_MAX bytes) for ttl µs (> 0). The same
 * holder taking it again renews it. WQ_ELIMIT when someone else holds it; *held (may be
 * NULL) then receives who holds it and until when (on success: the new lease). */
wq_rc wq_lock_acquire(wq_db *db, const char *key, const char *holder, int64_t ttl,
		      wq_lock *held, wq_error *err);
/* Moves the lease's expiry to now + ttl (the store's now). WQ_ENOTFOUND when `holder` does not hold it (never
 * did, released, or expired); *held (may be NULL) receives the lease. */
wq_rc wq_lock_renew(wq_db *db, const char *key, const char *holder, int64_t ttl,
		    wq_lock *held, wq_error *err);
/* Ends the lease of `holder` (expired or not). WQ_ENOTFOUND when it holds no lease. */
wq_rc wq_lock_release(wq_db *db, const char *key, const char *holder, wq_error *err);
/* Keys held now (tasks' holds and unexpired leases) by key; *out freed with wq_free(). */
wq_rc wq_lock_list(wq_db *db, wq_lock **out, size_t *n, wq_error *err);

/* Paused kinds: no worker claims a task of a paused kind (running ones finish). Pausing
 * twice or resuming a kind that is not paused is WQ_OK. */
typedef struct wq_kind_pause {
	char kind[WQ_KIND_MAX + 1];
	int64_t paused_at;
} wq_kind_pause;
wq_rc wq_kind_set_paused(wq_db *db, const char *kind, int paused, wq_error *err);
/* The paused kinds by name; *out freed with wq_free(). */
wq_rc wq_kinds_paused(wq_db *db, wq_kind_pause **out, size_t *n, wq_error *err);
/* ------------------------------------------------------ in-process handlers ---- */

/*
 * A kind can be handled by a C function of the program that runs the worker instead of a
 * command. The function runs on one of the worker's own threads (`concurrency` of them,
 * apart from libuv's pool), never on the thread of wq_worker_run; it gets a job context
 * and returns an outcome, with the same meaning as a command handler's exit status.
 * Everything in the job context is valid until the handler returns; no wq_job_* function
 * may be called after that.
 */
typedef struct wq_job wq_job;

typedef enum {
	WQ_JOB_SUCCEEDED = 0, /* exit 0: the result (wq_job_set_result) is stored */
	WQ_JOB_DISCARDED = 1, /* exit 3: handled, nothing to deliver (outcome `discarded`) */
	WQ_JOB_RETRY = 2,     /* exit 75: retryable failure (backoff, while attempts remain) */
	WQ_JOB_FAIL = 3,      /* any other exit: permanent failure */
	WQ_JOB_CANCELLED = 4, /* "I stopped before any effect": after a cancel request the task
			       * ends `cancelled` (`interrupted` when an effect is open); after
			       * any other stop, or none, it counts as RETRY */
} wq_job_result;

/* Why wq_job_cancelled() says stop (0: go on). */
typedef enum {
	WQ_JOB_STOP_NONE = 0,
	WQ_JOB_STOP_CANCEL = 1,        /* `wakeq cancel` of the running task */
	WQ_JOB_STOP_RUNTIME_LIMIT = 2, /* the kind's timeout passed */
	WQ_JOB_STOP_DRAIN = 3,         /* the worker drains and drain_timeout passed */
	WQ_JOB_STOP_LOST = 4,          /* this worker was declared lost: the attempt is not
					* ours any more */
} wq_job_stop;

typedef wq_job_result (*wq_job_fn)(wq_job *job, void *userdata);

/*
 * Registers `fn` as the handler of `kind` (before wq_worker_run). The kind is claimed
 * whether or not the configuration has a [kind.NAME] section; a section gives its
 * timeout, max_attempts, backoff and on_interrupt, and must not give a command
 * (WQ_ECONFIG: a kind is either in-process or a command). WQ_EINVAL for an invalid kind,
 * a kind registered twice, or a call after wq_worker_run.
 *
 * A handler asked to stop (wq_job_cancelled) that has not returned kill_grace later is
 * recorded `interrupted` with the stop's reason (runtime-limit, drain-deadline, killed for
 * a cancel, worker-lost), as a command handler that needed SIGKILL would be. Its thread
 * cannot be killed: the worker starts a replacement thread so that `concurrency`
 * handlers can still run, and the old thread ends when the handler returns (its outcome
 * and result are then ignored, its journal calls answer WQ_ESTALE). wq_worker_free waits
 * for every handler thread to return.
 */
wq_rc wq_worker_register(wq_worker *w, const char *kind, wq_job_fn fn, void *userdata,
			 wq_error *err);

/* The payload (JSON text, not NUL-terminated in general; *len its size). */
const char *wq_job_payload(const wq_job *job, size_t *len);
int64_t wq_job_task_id(const wq_job *job);
int wq_job_attempt(const wq_job *job);            /* 1-based attempt number */
const char *wq_job_attempt_id(const wq_job *job); /* "<task_id>.<attempt>" */
const char *wq_job_kind(const wq_job *job);
const char *wq_job_operation(const wq_job *job);
const char *wq_job_tenant(const wq_job *job);
const char *wq_job_scope(const wq_job *job);
int wq_job_payload_version(const wq_job *job);
/* The key for outside APIs (as $WAKEQ_IDEMPOTENCY_KEY of a command handler). */
const char *wq_job_idempotency_key(const wq_job *job);
/* When the runtime limit passes (µs since the epoch); 0 when the kind has none. */
int64_t wq_job_deadline(const wq_job *job);
/* Nonzero (a wq_job_stop) once the handler should stop: poll it between steps. */
int wq_job_cancelled(const wq_job *job);

/* The effect journal for this attempt: wq_effect_begin / wq_effect_done with the job's
 * task and attempt, through the worker's store handle (the call waits while the worker's
 * loop thread runs it). WQ_ESTALE once the attempt no longer owns the task. */
wq_rc wq_job_effect_begin(wq_job *job, const char *name, wq_effect_status *status,
			  char **result, wq_error *err);
wq_rc wq_job_effect_done(wq_job *job, const char *name, const char *result, wq_error *err);

/* The result to store when the handler returns WQ_JOB_SUCCEEDED (copied; a later call
 * replaces it). Beyond the configured result_max: WQ_ETOOBIG, and a success is recorded
 * failed `result-too-large`, as for a command handler. */
wq_rc wq_job_set_result(wq_job *job, const void *bytes, size_t len, wq_error *err);

/* ---- follow-ups (issue 10) ----
 *
 * A handler may ask for follow-up tasks; they are created in the transaction that records
 * its success (none for any other outcome), in the parent's tenant and scope, with an
 * operation key derived from the parent's kind and operation and the follow-up's key (or
 * its 1-based index): a parent recorded again never doubles them. [limits]
 * max_followups / max_followup_depth / max_payload_bytes beyond: all of them are rejected
 * (a `followups-rejected` event), the parent's outcome is recorded all the same. A
 * command handler writes the JSON array [{"kind", "payload", "key"?, "in"?, "lock"?}] to
 * the file named by $WAKEQ_FOLLOWUPS.
 */

/* Adds a follow-up for the job's success: kind, payload (JSON text; NULL: {}), key
 * (NULL: the index), a delay (µs, 0: due at once) and a turn lock key (NULL: none).
 * WQ_EINVAL for an invalid kind or payload. */
wq_rc wq_job_followup(wq_job *job, const char *kind, const char *payload, const char *key,
		      int64_t delay_us, const char *lock, wq_error *err);

/* A task's parent (0: none) and the ids of its follow-ups, ascending (*children malloc'd,
 * free(); NULL when none). WQ_ENOTFOUND. */
wq_rc wq_task_family(wq_db *db, int64_t id, int64_t *parent, int64_t **children, size_t *n,
		     wq_error *err);
/* ------------------------------------------------------ intake (issue 13) ---- */

/* A mailbox source (`[source.NAME]` in the worker file: Maildir or IMAP) hands each
 * message out as a task of operation key `intake:SOURCE:KEY`; the message is
 * acknowledged at the source (IMAP \Seen, Maildir cur/ with S) only after its task was
 * handled (succeeded or discarded), or after its last handout (abandoned). */
#define WQ_INTAKE_SOURCE_MAX 64 /* [A-Za-z0-9._-] */
#define WQ_INTAKE_KEY_MAX 180   /* IMAP "UIDVALIDITY:UID", Maildir the unique name */
#define WQ_INTAKE_PAYLOAD_VERSION 1

/* One message a source handed out. state: "pending" (its task is not handled yet),
 * "handled" / "giving-up" (the acknowledgement is queued: outcome succeeded or
 * discarded / abandoned), "acknowledged", "abandoned" (both only once the source took
 * the acknowledgement), "retired" (the mailbox's UIDVALIDITY changed). */
typedef struct wq_intake {
	int64_t id;
	char source[WQ_INTAKE_SOURCE_MAX + 1];
	char key[WQ_INTAKE_KEY_MAX + 1];
	int64_t uidvalidity, uid; /* IMAP; 0 for Maildir */
	char state[16];
	char outcome[16];         /* "", "succeeded", "discarded", "abandoned" */
	int64_t task_id;
	int handouts;             /* attempts its task has been given */
	int max_handouts;
	int64_t size;             /* bytes of the message */
	int ack_attempts;
	int64_t ack_next_at;
	char ack_error[WQ_DETAIL_MAX + 1];
	int64_t created_at, updated_at, handled_at, acked_at;
} wq_intake;

/* 1 when name is one of the states above. */
int wq_intake_state_valid(const char *name);
/* Records by id; source and state NULL or "" for any. *out freed with wq_free(). */
wq_rc wq_intake_list(wq_db *db, const char *source, const char *state, wq_intake **out,
		     size_t *n, wq_error *err);
/* One record. WQ_ENOTFOUND. */
wq_rc wq_intake_get(wq_db *db, const char *source, const char *key, wq_intake *out,
		    wq_error *err);
/* How many acknowledgements are queued or in flight (source NULL: all sources). */
wq_rc wq_intake_acks_waiting(wq_db *db, const char *source, int64_t *count, wq_error *err);
/* ------------------------------------------- config names (issue 14, enqueue) ---- */

/* WQ_ECONFIG unless `cfg` defines `kind` (a [kind.NAME]) and every webhook:NAME /
 * command:NAME in notify[0..nnotify) (a [channel.NAME] of that type); the message names
 * every unknown one. inbox:RECIPIENT needs no section. WQ_OK when cfg is NULL. */
wq_rc wq_config_check_names(const wq_config *cfg, const char *kind,
			    const char *const *notify, size_t nnotify, wq_error *err);

/* ------------------------------------------------ kept stderr (issue 14) ---- */

/* The stderr tail a failed attempt kept (its kind's keep_stderr): valid UTF-8 text,
 * *out freed with wq_free(). Untrusted handler output. WQ_ENOTFOUND when it kept none. */
wq_rc wq_attempt_stderr(wq_db *db, int64_t task_id, int attempt, char **out, wq_error *err);
/* ------------------------------------------ batch enqueue (issue 11) ---- */

#define WQ_ENQUEUE_MANY_MAX 100000 /* items of one wq_enqueue_many call */

/*
 * Enqueues items[0..n-1] in ONE write transaction (one commit, one fsync), in order. Each
 * item has exactly wq_enqueue's semantics, including its operation key: a replay
 * returns the existing task (out[i].replayed = 1), and an item whose identity exists
 * with another fingerprint is a conflict OF THAT ITEM: it creates nothing, its
 * `conflict` event is recorded, and the other items are still enqueued. A later item
 * sees the earlier ones (the same key twice in a batch replays, or conflicts).
 *
 * out (n entries) receives each item's answer; item_errs (NULL, or n entries) each
 * item's code and message: WQ_OK (accepted or replayed) or WQ_ECONFLICT.
 *
 * Returns:
 *  - WQ_OK: committed, every item accepted or replayed;
 *  - WQ_ECONFLICT: committed, and at least one item conflicted (see item_errs[i].code;
 *    *err counts them and names the first): the others ARE enqueued;
 *  - anything else: nothing was written. Every item is validated before the store is
 *    touched; an invalid one (bad JSON, kind, key, …) rejects the whole batch with its
 *    code and a message starting "item I: ". A limit reached by one item (WQ_ELIMIT) or
 *    a store failure also rolls the whole batch back, naming the item the same way.
 *    The failing item's item_errs[I] holds the code and why (so a caller can map I back
 *    to its input, as `enqueue --batch` does to a line number).
 *  - WQ_EUNKNOWN: the commit's answer was lost (PostgreSQL): the whole batch is or is not
 *    committed; repeating a batch whose items have keys is safe (they replay).
 */
wq_rc wq_enqueue_many(wq_db *db, const wq_enqueue_opts *items, size_t n, wq_enqueued *out,
		      wq_error *item_errs, wq_error *err);

#ifdef __cplusplus
}
#endif
#endif /* WAKEQ_H */
