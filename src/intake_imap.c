/* intake_imap.c — an IMAP mailbox as a source, through libcurl (issue 13; SPEC §9).
 * Runs on a pool thread; one connection per source, reused between calls.
 *
 *   list   a fresh connection: SELECT (curl does it for the mailbox of the url; its
 *          untagged `OK [UIDVALIDITY n]` and `* N EXISTS` reach the header callback)
 *          and `UID SEARCH UNSEEN`; key "UIDVALIDITY:UID". A mailbox of more than
 *          search_window messages is searched in windows of message numbers instead
 *          (`UID SEARCH a:b UNSEEN`): libcurl (7.88 here) drops 16 KiB pieces of an
 *          answer line longer than its 16 KiB buffer, without an error (14,000 unseen
 *          messages: 1,243 UIDs answered, 1-13 and 12,773-14,000; a window of 4,096:
 *          1-13, a fragment "197", 3,498-4,096), so one search of a large mailbox
 *          misses messages and a cut inside a number names a wrong one. A window's
 *          answer holds at most search_window UIDs of at most 11 bytes: under 12 KiB.
 *   fetch  `UID FETCH uid BODY.PEEK[]` — never BODY[], which sets \Seen. libcurl before
 *          8.17 hands a custom command's literal to the header callback line by line,
 *          later versions to the write callback: both are collected and the literal
 *          {n} is taken whole from whichever holds it, else the fetch fails (the message
 *          stays unseen and unrecorded).
 *   ack    `NOOP` on a fresh connection to read the mailbox's UIDVALIDITY; if it is the
 *          records' one, `UID STORE uid,uid,... +FLAGS.SILENT (\Seen)` (idempotent);
 *          otherwise nothing is stored (the next poll retires those records).
 *
 * The password is read once at open (password_file: the first line; password_env) and
 * handed to curl with CURLOPT_PASSWORD only; it is never in a url, message or log. */
#include "intake.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSWORD_MAX 1024
#define RESPONSE_MAX (64u << 20) /* a larger answer is refused, not buffered */
#define STORE_BATCH 64
/* Bytes of a message one FETCH asks for (`BODY.PEEK[]<offset.FETCH_PIECE>`): libcurl
 * (7.88) hands a custom FETCH's literal to the header callback line by line, caps their
 * total at 300 KiB (a larger message failed every poll: "Too large response headers")
 * and drops pieces of a line longer than its 16 KiB buffer; a piece's lines stay under
 * 16 KiB with the FETCH line, and its total far under the cap. */
#define FETCH_PIECE 12288u

struct buf {
	char *p;
	size_t n, cap;
	int over;
};

struct conn {
	CURL *h;
	char *password;
	struct buf hdr, body;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t collect(char *data, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t len = size * nmemb;

	if (b->n + len + 1 > RESPONSE_MAX) {
		b->over = 1;
		return 0;
	}
	if (b->n + len + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		char *g;

		while (nc < b->n + len + 1)
			nc *= 2;
		if (!(g = realloc(b->p, nc)))
			return 0;
		b->p = g;
		b->cap = nc;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	b->p[b->n] = '\0';
	return len;
}

static wq_rc read_password(const struct wq__source_config *c, char **out, wq_error *err)
{
	char buf[PASSWORD_MAX + 2];
	const char *v;
	FILE *f;
	size_t n;

	if (c->password_env) {
		if (!(v = getenv(c->password_env)) || !*v)
			return wq__err(err, WQ_ECONFIG, "[source.%s]: environment variable %s is not "
				       "set", c->name, c->password_env);
		n = strlen(v);
	} else {
		if (!(f = fopen(c->password_file, "re")))
			return wq__err(err, WQ_ECONFIG, "[source.%s]: cannot read password_file %s: "
				       "%s", c->name, c->password_file, strerror(errno));
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		n = strcspn(buf, "\r\n"); /* the first line */
		buf[n] = '\0';
		v = buf;
		if (n == 0 || n > PASSWORD_MAX)
			return wq__err(err, WQ_ECONFIG, "[source.%s]: password_file %s holds no "
				       "password on its first line (or one over %d bytes)",
				       c->name, c->password_file, PASSWORD_MAX);
	}
	*out = strndup(v, n);
	explicit_bzero(buf, sizeof(buf));
	return *out ? WQ_OK : wq__err(err, WQ_ENOMEM, "out of memory");
}

static wq_rc im_open(const struct wq__source_config *c, void **out, wq_error *err)
{
	struct conn *k = calloc(1, sizeof(*k));
	wq_rc rc;

	if (!k)
		return wq__err(err, WQ_ENOMEM, "out of memory");
	if ((rc = read_password(c, &k->password, err)) != WQ_OK) {
		free(k);
		return rc;
	}
	if (!(k->h = curl_easy_init())) {
		explicit_bzero(k->password, strlen(k->password));
		free(k->password);
		free(k);
		return wq__err(err, WQ_ENOMEM, "curl_easy_init failed");
	}
	*out = k;
	return WQ_OK;
}

static void im_close(void *conn)
{
	struct conn *k = conn;

	if (!k)
		return;
	curl_easy_cleanup(k->h);
	explicit_bzero(k->password, strlen(k->password));
	free(k->password);
	free(k->hdr.p);
	free(k->body.p);
	free(k);
}

/* One command on the mailbox of the url; the server's answers in k->hdr and k->body.
 * fresh: a new connection (so curl SELECTs and the UIDVALIDITY is heard). */
static int perform(struct conn *k, const struct wq__source_config *c, const char *cmd,
		   int fresh, char *err, size_t errsz)
{
	CURLcode cc;
	CURL *h = k->h;

	k->hdr.n = k->body.n = 0;
	k->hdr.over = k->body.over = 0;
	k->errbuf[0] = '\0';
	curl_easy_reset(h); /* keeps the connection */
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_USERNAME, c->username);
	curl_easy_setopt(h, CURLOPT_PASSWORD, k->password);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, cmd);
	curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, fresh ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &k->hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &k->body);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, k->errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 15L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "imap,imaps");
	/* one connection per source: a fresh one closes the one before (servers limit
	 * connections per user and address, Dovecot to 10 by default) */
	curl_easy_setopt(h, CURLOPT_MAXCONNECTS, 1L);
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK && !k->hdr.over && !k->body.over)
		return 0;
	/* curl's words name the host or the server's refusal, never the password (it is
	 * not in the url and curl does not print it) */
	snprintf(err, errsz, "IMAP %.*s: %s", (int)strcspn(cmd, " "), cmd,
		 k->hdr.over || k->body.over ? "answer too large"
		 : k->errbuf[0]		      ? k->errbuf
					      : curl_easy_strerror(cc));
	return -1;
}

/* The UIDVALIDITY a SELECT reported into hdr, or 0 (intake_imap_parse.c). */
static int64_t uidvalidity_of(const struct buf *b)
{
	return wq__imap_uidvalidity(b->p);
}

/* The answers of `UID SEARCH a:b UNSEEN` for the message numbers 1..exists in windows
 * of c->search_window, one after another in *all (malloc'd). 0, or -1 with err. */
static int search_windows(struct conn *k, const struct wq__source_config *c, int64_t exists,
			  struct buf *all, char *err, size_t errsz)
{
	char cmd[64];

	for (int64_t lo = 1; lo <= exists; lo += c->search_window) {
		int64_t hi = lo + c->search_window - 1 < exists ? lo + c->search_window - 1
								: exists;

		snprintf(cmd, sizeof(cmd), "UID SEARCH %" PRId64 ":%" PRId64 " UNSEEN", lo, hi);
		if (perform(k, c, cmd, 0, err, errsz))
			return -1;
		if (k->body.n && collect(k->body.p, 1, k->body.n, all) != k->body.n) {
			snprintf(err, errsz, "%s listing the mailbox",
				 all->over ? "answer too large" : "out of memory");
			return -1;
		}
	}
	return 0;
}

static int im_list(void *conn, const struct wq__source_config *c, int64_t *uidvalidity,
		   struct wq__intake_item **items, size_t *n, char *err, size_t errsz)
{
	struct conn *k = conn;
	struct buf all = {0};
	int64_t exists;
	int rc;

	*items = NULL;
	*n = 0;
	if (perform(k, c, "UID SEARCH UNSEEN", 1, err, errsz))
		return -1;
	if ((*uidvalidity = uidvalidity_of(&k->hdr)) <= 0) {
		snprintf(err, errsz, "the server reported no UIDVALIDITY for the mailbox");
		return -1;
	}
	exists = wq__imap_exists(k->hdr.p);
	if (exists <= c->search_window) /* -1: not said; the answer is all there is */
		return wq__imap_search(k->body.p, *uidvalidity, items, n, err, errsz);
	/* the answer above may have been cut (see the top of this file): not used */
	rc = search_windows(k, c, exists, &all, err, errsz);
	if (!rc)
		rc = wq__imap_search(all.p, *uidvalidity, items, n, err, errsz);
	free(all.p);
	return rc;
}

/* The literal {len} that follows the FETCH line in b: *at, *len; 0 when whole. */
static int literal_in(const struct buf *b, const char **at, size_t *len)
{
	return wq__imap_literal(b->p, b->n, at, len);
}

/* One piece of message `it`, from byte `off`, appended to *msg; the first piece also
 * asks for the message's size (*size; -1 when the server did not say it). 0, or -1 with
 * it->error. */
static int fetch_piece(struct conn *k, const struct wq__source_config *c, int64_t uidvalidity,
		       struct wq__intake_item *it, size_t off, struct buf *msg, int64_t *size)
{
	char cmd[96];
	const char *at = NULL;
	const struct buf *b = &k->body;
	size_t len = 0;
	int64_t seen;

	snprintf(cmd, sizeof(cmd), "UID FETCH %" PRId64 " (%sBODY.PEEK[]<%zu.%u>)", it->uid,
		 off ? "" : "RFC822.SIZE ", off, FETCH_PIECE);
	if (perform(k, c, cmd, 0, it->error, sizeof(it->error)))
		return -1;
	/* a reconnect SELECTed again: the UIDs must still mean what they meant */
	seen = uidvalidity_of(&k->hdr);
	if (seen && seen != uidvalidity) {
		snprintf(it->error, sizeof(it->error), "UIDVALIDITY changed during the poll");
		return -1;
	}
	if (literal_in(b, &at, &len) && literal_in((b = &k->hdr), &at, &len)) {
		snprintf(it->error, sizeof(it->error),
			 "UID %" PRId64 ": no complete message in the FETCH answer", it->uid);
		return -1;
	}
	if (!off)
		*size = wq__imap_rfc822_size(b->p, b->n, at, len);
	if (len && collect((char *)at, 1, len, msg) != len) {
		snprintf(it->error, sizeof(it->error), "UID %" PRId64 ": %s", it->uid,
			 msg->over ? "message too large" : "out of memory");
		return -1;
	}
	return 0;
}

static int im_fetch(void *conn, const struct wq__source_config *c, int64_t uidvalidity,
		    struct wq__intake_item *it)
{
	struct conn *k = conn;
	char key[WQ_INTAKE_KEY_MAX + 1];
	struct buf msg = {0};
	int64_t size = -1;
	size_t got;
	int rc = 0;

	/* in pieces until the size the server gave, or, when it gave none, until a piece
	 * comes back short */
	do {
		got = msg.n;
		rc = fetch_piece(k, c, uidvalidity, it, msg.n, &msg, &size);
	} while (!rc && msg.n > got &&
		 (size > 0 ? msg.n < (size_t)size : msg.n - got == FETCH_PIECE));
	if (!rc && size > 0 && msg.n != (size_t)size) {
		snprintf(it->error, sizeof(it->error),
			 "UID %" PRId64 ": %zu of its %" PRId64 " bytes answered", it->uid, msg.n,
			 size);
		rc = -1;
	}
	if (!rc) {
		snprintf(key, sizeof(key), "%s", it->key);
		it->size = (int64_t)msg.n;
		it->payload = wq__intake_payload(c->name, key, uidvalidity, it->uid,
						 msg.p ? msg.p : "", msg.n, it->size, 1, NULL,
						 &it->payload_len);
		if (!it->payload) {
			snprintf(it->error, sizeof(it->error), "out of memory building the payload");
			rc = -1;
		}
	}
	free(msg.p);
	return rc;
}

/* STORE \Seen on rows[from..to) (all of uidvalidity), answering ok/errs for them. */
static void store_seen(struct conn *k, const struct wq__source_config *c,
		       const struct wq__intake_ack_row *rows, size_t from, size_t to, int *ok,
		       char (*errs)[WQ__INTAKE_ERR])
{
	char cmd[STORE_BATCH * 12 + 64], err[WQ__INTAKE_ERR];
	size_t i, o;
	int r;

	o = (size_t)snprintf(cmd, sizeof(cmd), "UID STORE ");
	for (i = from; i < to; i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%" PRId64, i > from ? "," : "",
				      rows[i].uid);
	snprintf(cmd + o, sizeof(cmd) - o, " +FLAGS.SILENT (\\Seen)");
	r = perform(k, c, cmd, 0, err, sizeof(err));
	for (i = from; i < to; i++) {
		ok[i] = r == 0;
		snprintf(errs[i], sizeof(errs[i]), "%s", r ? err : "");
	}
}

static void im_ack(void *conn, const struct wq__source_config *c,
		   const struct wq__intake_ack_row *rows, size_t n, int *ok,
		   char (*errs)[WQ__INTAKE_ERR])
{
	struct conn *k = conn;
	char err[WQ__INTAKE_ERR] = "";
	size_t i, from;
	int64_t current = 0;

	if (perform(k, c, "NOOP", 1, err, sizeof(err)) ||
	    (current = uidvalidity_of(&k->hdr)) <= 0) {
		if (!err[0] || !strstr(err, "IMAP"))
			snprintf(err, sizeof(err), "the server reported no UIDVALIDITY");
		for (i = 0; i < n; i++) {
			ok[i] = 0;
			snprintf(errs[i], sizeof(errs[i]), "%s", err);
		}
		return;
	}
	for (from = 0; from < n;) {
		size_t to = from;

		if (rows[from].uidvalidity != current) {
			ok[from] = 0;
			snprintf(errs[from], sizeof(errs[from]), "UIDVALIDITY is now %" PRId64
				 "; the message is retired at the next poll", current);
			from++;
			continue;
		}
		while (to < n && to - from < STORE_BATCH && rows[to].uidvalidity == current)
			to++;
		store_seen(k, c, rows, from, to, ok, errs);
		from = to;
	}
}

const struct wq__intake_backend wq__intake_imap = {
	.name = "imap", .open = im_open, .close = im_close, .list = im_list,
	.fetch = im_fetch, .ack = im_ack,
};
