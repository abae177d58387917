/*
 * internal.h — what the library's own files share. Not installed. `wq__` prefix.
 */
#ifndef WQ_INTERNAL_H
#define WQ_INTERNAL_H

#include "wakeq.h"
#include "store/store.h"
#include "failpoint.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>

#define WQ__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define WQ__US_PER_MS INT64_C(1000)
#define WQ__US_PER_S INT64_C(1000000)

/* ---- error.c ---- */

/* Fills err (if non-NULL) with code and a formatted message; returns code. */
wq_rc wq__err(wq_error *err, wq_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Bounded copy that always terminates dst; returns 1 when src did not fit. */
int wq__strlcpy(char *dst, const char *src, size_t dstsz);

/* ---- db.c ---- */

/* enqueue_group.c (wave 4): the handle's concurrent wq_enqueue calls sharing commits.
 * mu guards the queue and busy; busy: a leader is running a group on the store. */
struct wq__enq_req;
struct wq__enq_group {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* broadcast when a group is answered */
	struct wq__enq_req *head, *tail;
	int busy;
	/* wave5 enq: gathering a group (enqueue_group.c). queued: requests in the queue;
	 * inside: callers inside wq__enqueue_shared; peak: the most inside at once since
	 * the last group was taken; last_us: how long the last group took; lead_cv: a
	 * gathering leader waits on it (leader_waiting), signalled by each new request. */
	size_t queued, inside, peak;
	int64_t last_us;
	pthread_cond_t lead_cv;
	int leader_waiting;
};

struct wq_db {
	const struct wq__store_methods *m;
	struct wq__store *s;
	char *url; /* as opened (owned): a worker opens a second connection with it */
	struct wq__enq_group enq; /* wave 4 enqueue: group commit */
};

void wq__enq_group_init(struct wq__enq_group *g);
void wq__enq_group_destroy(struct wq__enq_group *g);
/* wq_enqueue's store call: t (validated) joins the handle's next group commit; returns
 * once the commit holding it returned, with t's own answer in *row / *err. Safe to call
 * from several threads at once on one handle. */
wq_rc wq__enqueue_shared(wq_db *db, const struct wq__new_task *t,
			 struct wq__enqueued_row *row, wq_error *err);

/* Calls a store method: `WQ__STORE(db, claim, &req, &out, &n, err)`. The single place
 * the core reaches the backend, so a failpoint named after the method can kill the
 * process right before a chosen store call, or make it fail (see failpoint.h). */
#ifdef WQ_FAILPOINTS
#define WQ__STORE(db, method, ...)                                                         \
	(wq__failpoint_store(#method),                                                     \
	 wq__failpoint_store_end((db)->m->method((db)->s, __VA_ARGS__)))
#else
#define WQ__STORE(db, method, ...) ((db)->m->method((db)->s, __VA_ARGS__))
#endif

/* ---- failpoint.c: see failpoint.h ---- */

/* ---- store/evidence.c ---- */

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), or 0 if invalid (RFC
 * 3629: no overlongs, no surrogates, nothing above U+10FFFF). */
size_t wq__utf8_seq(const unsigned char *p, size_t avail);

/* ---- operation.c ---- */

/* WQ_OK when wq_operation_idempotency_key would accept the identity (the lengths of its
 * fields), else its WQ_EINVAL: a check without the hash, for callers that compute the
 * key later (an in-process job's, job.c). */
wq_rc wq__operation_identity_check(const char *tenant, const char *scope, const char *kind,
				   const char *operation, wq_error *err);

/* ---- time.c ---- */

/* wq_time_format through gmtime_r and strftime: what it gives outside years 1000-9999,
 * and the reference its hand-written path is tested against. Returns buf. */
char *wq__time_format_libc(int64_t us, char *buf);

/* ---- random.c ---- */

void wq__random_bytes(void *buf, size_t len);
/* 2*nbytes lowercase hex digits + NUL into out (nbytes <= 64). */
void wq__random_hex(char *out, size_t nbytes);
/* Uniform in [0,1). */
double wq__random_unit(void);

/* ---- json.c ---- */

/* The operation fingerprint: SHA-256 over "jcs1\nv<version>\n" + the canonical JSON of
 * the payload (RFC 8785, integers keeping all their digits: see json.c). WQ_EINVAL for
 * invalid JSON. */
wq_rc wq__fingerprint(const char *payload, size_t len, int version, char hex[WQ_SHA256_HEX],
		      wq_error *err);
/* "<head>v<version>\n" as snprintf "%sv%d\n" writes it (head: at most 16 bytes), into
 * buf; its length. The fingerprint's prefix, written without snprintf (tested against
 * it in tests/unit/test_json.c). */
size_t wq__fingerprint_prefix(char buf[32], const char *head, int version);

/* The fingerprint of version 0.1.0, unchanged: SHA-256 over "v<version>\n" + jansson's
 * sorted compact form. Only to compare with fingerprints stored by that version (a replay
 * matches when the stored fingerprint equals either). Fails (WQ_EINVAL) for payloads
 * 0.1.0 refused, such as integers beyond 64 bits or "\u0000": those have no legacy
 * fingerprint and so no legacy match. */
wq_rc wq__fingerprint_legacy(const char *payload, size_t len, int version,
			     char hex[WQ_SHA256_HEX], wq_error *err);

/* SHA-256 of data as 64 lowercase hex digits + NUL into hex[WQ_SHA256_HEX]. */
void wq__sha256_hex(const void *data, size_t len, char hex[WQ_SHA256_HEX]);

/* ---- url.c ---- */

/* url as it may be shown (messages, logs, events, doctor): "scheme://host[:port]/path",
 * never its user, password, query or fragment; "(unparseable URL)" when libcurl cannot
 * parse it. Written into buf (truncated to bufsz); returns buf. */
const char *wq__url_safe(const char *url, char *buf, size_t bufsz);

/* Overwrites with '*' whatever of url's user, password, options, query and fragment
 * appears in text (a message from libcurl about url, say). */
void wq__url_scrub(char *text, const char *url);

/* ---- state.c ---- */

/* 1 when `from → to` is an allowed transition of SPEC §2. */
int wq__transition_allowed(wq_state from, wq_state to);

/* ---- backoff.c ---- */

/* Delay before the retry that follows failed attempt `attempt` (1-based):
 * base * 2^(attempt-1), capped at `max`, with ±25% jitter from `rnd` in [0,1). */
int64_t wq__backoff(int64_t base, int64_t max, int attempt, double rnd);

/* ---- task.c ---- */

/* WQ_EINVAL unless kind is 1..WQ_KIND_MAX bytes of [A-Za-z0-9._-]. */
wq_rc wq__check_kind(const char *kind, wq_error *err);
/* wq_enqueue's checks without the key; *notify the channels' JSON text (schedules). */
wq_rc wq__enqueue_check(const wq_enqueue_opts *o, size_t payload_len, char **notify,
			wq_error *err);

/* ---- lock.c (issue 10) ---- */

/* WQ_EINVAL unless a turn lock key is 1..WQ_KEY_MAX bytes of valid UTF-8 without
 * control characters. */
wq_rc wq__check_lock_key(const char *key, wq_error *err);

/* ---- priority (task.c) ---- */

/* Each priority point is a head start of this much waiting time: strict priority among
 * tasks that became due close together, yet a long-waiting low-priority task is never
 * starved (it overtakes once it has waited longer than the difference). */
#define WQ__PRIORITY_STEP_US (60 * WQ__US_PER_S)
#define WQ__PRIORITY_MIN (-1000)
#define WQ__PRIORITY_MAX 1000

/* ---- config.c ---- */

enum wq__on_interrupt { WQ__ON_INTERRUPT_HOLD = 0, WQ__ON_INTERRUPT_RETRY = 1 };

struct wq__kind_config {
	char name[WQ_KIND_MAX + 1];
	char **argv;            /* NULL-terminated; argv[0] is the program */
	int64_t timeout;        /* runtime limit, µs; 0 = none */
	int max_attempts;       /* 0 = the task's own value */
	int64_t retry_backoff;  /* base, µs */
	int64_t retry_backoff_max;
	enum wq__on_interrupt on_interrupt;
	int line;               /* of its section header, for messages */
	/* issue 10 (policy.c): at most this many running at once across all workers of
	 * the store, enforced by claim (0: no limit); the payload versions accepted (bit v
	 * for version v; 0: any). */
	int concurrency;
	uint64_t payload_versions;
	size_t keep_stderr;     /* issue 14: bytes of a failed attempt's stderr tail stored
				 * with the attempt; 0 = none (the default) */
	/* issue 13: the kind of a [source.NAME]: a failed attempt (any exit status, not only
	 * 75) is the message coming back, retried until max_handouts (SPEC §9). */
	int failure_retries;
};

/* [limits] (tenant "" here: every tenant without a section of its own) and
 * [limits.TENANT] (issue 10): enforced by enqueue per (tenant, scope). */
struct wq__limit_config {
	char tenant[WQ_NAME_MAX + 1];
	int named;       /* 1: [limits.TENANT], 0: [limits] */
	int max_active;  /* pending + running tasks per (tenant, scope); 0 = no limit */
	int line;
	/* policy.c: 0 (or -1 for the follow-up limits) = no limit */
	size_t max_payload_bytes;  /* enqueue beyond it: WQ_ELIMIT */
	size_t max_result_bytes;   /* a result beyond it: failed, result-too-large */
	int max_starts_per_day;    /* claims beyond it defer to the next UTC day */
	int max_followups;         /* per task; beyond: followups-rejected */
	int max_followup_depth;    /* a follow-up's depth (root task: 0) at most this */
};

/* The limits that apply to `tenant`: its own section, else [limits], else NULL. */
const struct wq__limit_config *wq__config_limits(const wq_config *cfg, const char *tenant);

/* [channel.NAME] (SPEC §8): where `webhook:NAME` / `command:NAME` deliveries go. */
enum wq__channel_type { WQ__CHANNEL_WEBHOOK = 1, WQ__CHANNEL_COMMAND = 2 };

struct wq__channel_config {
	char name[WQ_NAME_MAX + 1];
	enum wq__channel_type type;
	char *url;              /* webhook: http:// or https:// */
	char **argv;            /* command: NULL-terminated */
	int64_t timeout;        /* one attempt, µs; default 5s */
	int max_attempts;       /* default 8; then the delivery is dead */
	int64_t retry_backoff;  /* base, µs; default 1s */
	int64_t retry_backoff_max; /* default 1h */
	int line;               /* of its section header, for messages */
};

struct wq_config {
	char *path;             /* for messages */
	char *db;               /* [worker] db, or NULL */
	int concurrency;        /* default 4 */
	int64_t drain_timeout;  /* default 10s */
	int64_t heartbeat;      /* default 2s */
	int64_t lease;          /* instance lease; default 10 * heartbeat, >= 2 * heartbeat */
	int64_t poll_interval;  /* default 250ms */
	int64_t kill_grace;     /* SIGTERM → SIGKILL, default 5s */
	size_t result_max;      /* default 1 MiB */
	size_t stderr_max;      /* default 64 KiB */
	int64_t task_retention;      /* [retention] tasks, µs; 0 when not set (prune.c) */
	int64_t operation_retention; /* [retention] operations, µs; 0 when not set */
	struct wq__kind_config *kinds;
	size_t nkinds;
	int delivery_concurrency;  /* delivery slots, apart from handler slots; default 4 */
	char *operators_inbox;     /* recipient of dead-delivery reports; NULL: "operators" */
	struct wq__channel_config *channels;
	size_t nchannels;
	int64_t schedule_lease;    /* schedules' owner lease; default 10 * heartbeat (issue 12) */
	/* [limits] and [limits.TENANT] (issue 10), in file order */
	struct wq__limit_config *limits;
	size_t nlimits;
	/* [source.NAME] (issue 13; intake_config.c), in file order */
	struct wq__source_config *sources;
	size_t nsources;
	int log_json;              /* [worker] log_format = json (issue 14); 0: text */
	/* wave4 batch: tasks claimed beyond the free slots, waiting in memory for one
	 * (worker_prefetch.c); at most `concurrency` with a command kind; default 0 */
	int prefetch;
	/* wave 11: the most store lanes (connections on which claims and outcomes commit,
	 * worker_store.c) this worker opens; 0: as many as the store takes (store.h
	 * `writers`). A server short of connections is given fewer, by its operator's
	 * choice instead of by a refused connection that may have been another client's. */
	int store_connections;
};
#define WQ__LANES_MAX 2 /* the most `writers` a store has (store.h): store_connections' top */

/* worker_log.c (issue 14): one operator line on stderr, "<RFC 3339> wakeq: <level>:
 * <msg>", or with json a JSON object {ts, level, msg, fields} (fields: the ids msg names). */
void wq__log_stderr(int json, const char *level, const char *msg);

/* sd_notify.c (issue 14): a systemd notification ("READY=1", "STOPPING=1") to
 * $NOTIFY_SOCKET; nothing without one. wq__sd_watchdog sends WATCHDOG=1 when
 * $WATCHDOG_USEC asks for it. */
void wq__sd_notify(const char *state);
void wq__sd_watchdog(void);

/* stderr_tail.c (issue 14): the last `keep` bytes of a handler's stderr (err, len) as
 * text a store column takes: starting at a character boundary, invalid UTF-8 and NUL
 * bytes as '?'. Malloc'd; NULL when keep or len is 0, or out of memory. */
char *wq__stderr_tail(const char *err, size_t len, size_t keep);

/* Splits a command line into words as a POSIX shell would (blanks separate; '...',
 * "..." and \ quote), with no expansion, globbing or operators (argv.c). No shell. On
 * success *argv_out is a NULL-terminated array freed with wq__argv_free(). */
wq_rc wq__argv_split(const char *line, char ***argv_out, wq_error *err);

/* config_ini.c: the INI reader of the worker configuration. Calls handler(user, section,
 * name, value) for each "name = value" (or "name: value") line with name and value
 * trimmed (value as written: inline comments are the handler's to cut); ";" or "#"
 * first on a line is a comment. Lines may be up to WQ__CONFIG_LINE_MAX bytes (the
 * caller refuses longer ones before). Returns 0, or the number of the first line that
 * is malformed or whose handler returned 0. */
#define WQ__CONFIG_LINE_MAX 65536
int wq__ini_parse(const char *text,
		  int (*handler)(void *user, const char *section, const char *name,
				 const char *value),
		  void *user);
void wq__argv_free(char **argv);

const struct wq__kind_config *wq__config_kind(const wq_config *cfg, const char *name);
/* A kind's settings when its section sets nothing (also for an in-process kind without a
 * section). */
void wq__kind_defaults(struct wq__kind_config *k, const char *name);
/* The channel [channel.NAME], or NULL. */
const struct wq__channel_config *wq__config_channel(const wq_config *cfg, const char *name);
/* The operators' inbox recipient ("operators" unless configured). */
const char *wq__config_operators(const wq_config *cfg);

/* ---- intake (issue 13): [source.NAME] sections (intake_config.c) ---- */

enum wq__source_type { WQ__SOURCE_MAILDIR = 1, WQ__SOURCE_IMAP = 2 };

struct wq__source_config {
	char name[WQ_INTAKE_SOURCE_MAX + 1];
	enum wq__source_type type;
	char *url;           /* imap: imaps://HOST[:PORT]/MAILBOX; imap:// only to 127.0.0.1 */
	char *username;      /* imap */
	char *password_file; /* imap: exactly one of the two; the password itself is never */
	char *password_env;  /* part of the configuration text */
	char *path;          /* maildir: the directory holding new/ cur/ tmp/ */
	char kind[WQ_KIND_MAX + 1];
	int64_t poll;        /* µs; default 30s */
	int max_handouts;    /* default 3: the attempt limit of the messages' tasks */
	int search_window;   /* imap: messages a UID SEARCH covers (intake_imap.c) */
	char *operators;     /* inbox recipient of give-up reports; NULL: [worker]'s */
	unsigned seen;       /* keys given (a key twice is an error) */
	int line;            /* of its section header, for messages */
};

/* imap: the most messages one `UID SEARCH` covers, the default and top of
 * search_window: its answer, at most 11 bytes a UID, stays under 12 KiB, within the
 * 16 KiB libcurl reads a line into (intake_imap.c says why). */
#define WQ__IMAP_SEARCH_WINDOW 1024

/* prescan: a new [source.NAME]; NULL, or what is wrong (static text). */
const char *wq__source_add(wq_config *cfg, const char *name, int line);
/* One key of [source.NAME]; NULL, or what is wrong, written into msg. */
const char *wq__source_entry(wq_config *cfg, const char *name, const char *key,
			     const char *value, char *msg, size_t msgsz);
/* Whole-file checks once every key is read (kinds exist; their max_attempts is the
 * source's max_handouts, which it sets when the kind has none). */
wq_rc wq__sources_validate(wq_config *cfg, wq_error *err);
void wq__sources_free(wq_config *cfg);
/* The source's operators' inbox recipient. */
const char *wq__source_operators(const wq_config *cfg, const struct wq__source_config *src);
/* intake_api.c: doctor's `abandoned-message` findings (one per abandoned record), appended
 * to *f (realloc'd). */
wq_rc wq__intake_findings(wq_db *db, wq_finding **f, size_t *cnt, wq_error *err);
/* intake_api.c: WQ_EINVAL unless name is 1..WQ_INTAKE_SOURCE_MAX of [A-Za-z0-9._-]. */
wq_rc wq__intake_check_source(const char *name, wq_error *err);

/* command_check.c (issue 14): every kind's and command channel's program exists and is
 * executable (found as execvp would), else WQ_ECONFIG naming the kind or channel, the
 * program and the config line: a worker that cannot run a kind refuses to start rather
 * than fail each of its tasks. */
wq_rc wq__check_commands(const wq_config *cfg, wq_error *err);

#endif /* WQ_INTERNAL_H */
