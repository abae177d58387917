/*
 * intake.h — the worker's mailbox sources (issue 13; SPEC §9). Not installed.
 *
 * intake.c drives the sources from the worker's loop: a timer per worker, and per source
 * at most one piece of work at a time on libuv's thread pool (listing, fetching or
 * acknowledging), so a slow mail server never blocks the loop. Store calls happen only on
 * the loop thread. The backends (intake_maildir.c, intake_imap.c) run on the pool thread
 * and never touch the store; what they report carries no credential.
 */
#ifndef WQ_INTAKE_H
#define WQ_INTAKE_H

#include "internal.h"
#include "store/store.h"

#include <uv.h>

#define WQ__INTAKE_ERR 200

/* One message of a listing, then of a fetch. */
struct wq__intake_item {
	char key[WQ_INTAKE_KEY_MAX + 1];
	int64_t uid;      /* IMAP */
	char *ref;        /* Maildir: "new/NAME" or "cur/NAME" (malloc'd) */
	char *payload;    /* after fetch: the task's payload, JSON text (malloc'd) */
	size_t payload_len;
	int64_t size;     /* bytes of the message */
	char error[WQ__INTAKE_ERR]; /* fetch failed: why (the message is not recorded) */
};

struct wq__intake_backend {
	const char *name;
	/* On the loop thread, at start: *conn (owned, freed by close). Reads the password
	 * (IMAP); an error names the file or variable, never the password. */
	wq_rc (*open)(const struct wq__source_config *c, void **conn, wq_error *err);
	void (*close)(void *conn);
	/* On a pool thread. The unacknowledged messages: *items malloc'd; *uidvalidity (0
	 * for Maildir). Nonzero with err set on failure. */
	int (*list)(void *conn, const struct wq__source_config *c, int64_t *uidvalidity,
		    struct wq__intake_item **items, size_t *n, char *err, size_t errsz);
	/* Reads one message into it->payload (or it->error; nonzero then). Never
	 * acknowledges. */
	int (*fetch)(void *conn, const struct wq__source_config *c, int64_t uidvalidity,
		     struct wq__intake_item *it);
	/* Acknowledges rows[0..n) at the source (idempotent: an acknowledged message stays
	 * so); ok[i] and errs[i] per row. */
	void (*ack)(void *conn, const struct wq__source_config *c,
		    const struct wq__intake_ack_row *rows, size_t n, int *ok,
		    char (*errs)[WQ__INTAKE_ERR]);
};

extern const struct wq__intake_backend wq__intake_maildir;
extern const struct wq__intake_backend wq__intake_imap;

void wq__intake_items_free(struct wq__intake_item *items, size_t n);

/* intake_msg.c: the payload (version WQ_INTAKE_PAYLOAD_VERSION, README "Intake") of a
 * message: source, key, the header summary read from msg[0..len) (its header part is
 * enough), size, and either the raw message in base64 (with_raw; left out with
 * "raw_omitted": true beyond WQ__INTAKE_RAW_MAX) or path. malloc'd JSON text. */
#define WQ__INTAKE_RAW_MAX (700u * 1024u)
char *wq__intake_payload(const char *source, const char *key, int64_t uidvalidity,
			 int64_t uid, const char *msg, size_t len, int64_t size, int with_raw,
			 const char *path, size_t *out_len);

/* intake_imap_parse.c: an IMAP server's answers (text: as received, NUL-terminated).
 * The UIDVALIDITY of an untagged `OK [UIDVALIDITY n]`, or 0. The message count of the
 * last `* N EXISTS`, or -1 when there is none. The UIDs of every `* SEARCH` line as
 * items keyed "UIDVALIDITY:UID", sorted, each once (*items malloc'd, NULL when none; -1
 * only when out of memory, err says so). The literal {len} after the
 * first `* ... FETCH ... {len}` line of text[0..n): *at and *len, 0 when it is whole. */
int64_t wq__imap_uidvalidity(const char *text);
int64_t wq__imap_exists(const char *text);
/* The `RFC822.SIZE n` of a FETCH answer text[0..n) outside its literal [at, at + len),
 * or -1. */
int64_t wq__imap_rfc822_size(const char *text, size_t n, const char *at, size_t len);
int wq__imap_search(const char *text, int64_t uidvalidity, struct wq__intake_item **items,
		    size_t *n, char *err, size_t errsz);
int wq__imap_literal(const char *text, size_t n, const char **at, size_t *len);

/* ---- intake.c: the worker's side ---- */

struct wq__intake;
typedef void (*wq__intake_log_fn)(void *ud, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* NULL *out (and WQ_OK) when the configuration has no source. instance points at the
 * worker's current instance id (it changes when the worker re-registers). */
wq_rc wq__intake_new(uv_loop_t *loop, wq_db *db, const wq_config *cfg, const char *instance,
		     wq__intake_log_fn log, void *log_ud, struct wq__intake **out,
		     wq_error *err);
/* Starts the timer (each source polls at once). */
void wq__intake_start(struct wq__intake *in);
/* Stops the timer; work in flight finishes (its acknowledgements are recorded). */
void wq__intake_stop(struct wq__intake *in);
/* --until-idle: 1 while a source works, has not yet seen a poll that found nothing new,
 * or has an acknowledgement queued. */
int wq__intake_keeps_alive(struct wq__intake *in);
void wq__intake_free(struct wq__intake *in);

#endif /* WQ_INTAKE_H */
