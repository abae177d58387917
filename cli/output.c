/* output.c — error lines, exit statuses, store opening and the shared printers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Set by main when the command was given --json (issue 14): errors are then one JSON
 * object per line on stderr, {"error": NAME, "message": TEXT, "exit": STATUS}. */
static int json_errors;

void cli_set_json_errors(int on)
{
	json_errors = on;
}

/* The name of an exit status in a JSON error (0: a warning that does not end the
 * command). */
static const char *exit_name(int code)
{
	static const char *const names[] = {"warning", "error",    "usage",
					    "conflict", "not-found", "limit",
					    "state",   "unknown-outcome"};

	return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "error";
}

/* One line, whatever the message holds: control characters become spaces. */
static void error_line(const char *msg, int code)
{
	char line[1024];
	json_t *o;
	char *text = NULL;
	size_t i;

	snprintf(line, sizeof line, "%s", msg);
	for (i = 0; line[i]; i++) {
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	}
	fflush(stdout);
	if (json_errors) {
		o = json_pack("{s:s, s:o, s:i}", "error", exit_name(code), "message",
			      cli_json_str(line), "exit", code);
		text = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
	}
	if (text)
		fprintf(stderr, "%s\n", text);
	else
		fprintf(stderr, "wakeq: %s\n", line);
	free(text);
}

int cli_errorf(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	error_line(msg, code);
	return code;
}

int cli_exit_code(wq_rc rc)
{
	if ((int)rc >= (int)WQ_OK && (int)rc <= (int)WQ_ESTATE)
		return (int)rc;
	if (rc == WQ_EUNKNOWN)
		return 7; /* README: outcome unknown; check with `wakeq timeline` */
	return CLI_EXIT_ERROR;
}

static const char *rc_message(wq_rc rc, const wq_error *err)
{
	return err && err->message[0] ? err->message : wq_strerror(rc);
}

int cli_fail(wq_rc rc, const wq_error *err)
{
	error_line(rc_message(rc, err), cli_exit_code(rc));
	return cli_exit_code(rc);
}

int cli_fail_ctx(wq_rc rc, const wq_error *err, const char *ctx)
{
	return cli_errorf(cli_exit_code(rc), "%s: %s", ctx, rc_message(rc, err));
}

int cli_fail_usage(wq_rc rc, const wq_error *err, const char *ctx)
{
	int code = rc == WQ_ENOMEM ? CLI_EXIT_ERROR : CLI_EXIT_USAGE;

	if (!ctx)
		return cli_errorf(code, "%s", rc_message(rc, err));
	return cli_errorf(code, "%s: %s", ctx, rc_message(rc, err));
}

/* ------------------------------------------------------------------ store ---- */

int cli_config(struct cli *cli, const wq_config **out)
{
	const char *path = cli->config_opt;
	wq_error err = {0};
	wq_rc rc;

	if (!cli->config_loaded) {
		cli->config_loaded = 1;
		if (!path || !*path)
			path = getenv("WAKEQ_CONFIG");
		if (path && *path) {
			rc = wq_config_load(path, &cli->config, &err);
			if (rc != WQ_OK) {
				/* not "loaded": a later call fails the same way, never
				 * goes on without the config */
				cli->config = NULL;
				cli->config_loaded = 0;
				return cli_fail_usage(rc, &err, NULL);
			}
		}
	}
	*out = cli->config;
	return 0;
}

/* The config is read only when neither --db nor $WAKEQ_DB decides: a broken
 * $WAKEQ_CONFIG does not stop a command that names its store. */
int cli_store_url(struct cli *cli, const char *fallback, const char **url)
{
	const char *env = getenv("WAKEQ_DB"), *db;
	const wq_config *cfg = NULL;
	int ex;

	*url = fallback;
	if (cli->db_opt) {
		*url = cli->db_opt;
		return 0;
	}
	if (env && env[0]) {
		*url = env;
		return 0;
	}
	if ((ex = cli_config(cli, &cfg)))
		return ex;
	db = wq_config_db(cfg);
	if (db && db[0])
		*url = db;
	return 0;
}

static int is_postgres_url(const char *url)
{
	return strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0;
}

/* Replaces bytes [from, to) of buf (a copy of the URL) with "***". */
static void mask(char *buf, size_t bufsz, size_t from, size_t to)
{
	size_t tail = strlen(buf + to) + 1;

	if (from + 3 + tail > bufsz)
		return;
	memmove(buf + from + 3, buf + to, tail);
	memcpy(buf + from, "***", 3);
}

const char *cli_url_display(const char *url, char *buf, size_t bufsz)
{
	char *auth, *end, *at, *colon, *pw;

	if (!is_postgres_url(url))
		return url;
	if (snprintf(buf, bufsz, "%s", url) >= (int)bufsz)
		return "postgres://***";
	auth = strstr(buf, "://") + 3;
	end = auth + strcspn(auth, "/?#");
	at = memchr(auth, '@', (size_t)(end - auth));
	colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon)
		mask(buf, bufsz, (size_t)(colon + 1 - buf), (size_t)(at - buf));
	pw = strstr(buf, "password=");
	if (pw) {
		pw += strlen("password=");
		mask(buf, bufsz, (size_t)(pw - buf), (size_t)(pw - buf) + strcspn(pw, "&#"));
	}
	return buf;
}

int cli_open(struct cli *cli, unsigned flags, wq_db **out)
{
	const char *url;
	int ex = cli_store_url(cli, CLI_DEFAULT_DB, &url);

	return ex ? ex : cli_open_url(url, flags, out);
}

int cli_open_url(const char *url, unsigned flags, wq_db **out)
{
	wq_error err = {0};
	wq_rc rc;

	if (!url[0])
		return cli_errorf(CLI_EXIT_USAGE, "empty database URL");
	rc = wq_db_open(url, flags, out, &err);
	if (rc != WQ_OK)
		return cli_fail(rc, &err);
	return 0;
}

/* ---------------------------------------------------------------- strings ---- */

const char *cli_time(int64_t us, char *buf)
{
	if (us == 0)
		return "-";
	return wq_time_format(us, buf);
}

const char *cli_attempt_id(int64_t task, int attempt, char *buf, size_t bufsz)
{
	if (attempt <= 0)
		return "-";
	snprintf(buf, bufsz, "%lld.%d", (long long)task, attempt);
	return buf;
}

const char *cli_safe(const char *s, char *buf, size_t bufsz)
{
	size_t i;

	if (!s[0])
		return "-";
	snprintf(buf, bufsz, "%s", s);
	for (i = 0; buf[i]; i++) {
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	}
	return buf;
}

/* ------------------------------------------------------------------- JSON ---- */

json_t *cli_json_str(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j || !(copy = strdup(s)))
		return j;
	for (char *p = copy; *p; p++) {
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	}
	j = json_string(copy);
	free(copy);
	return j;
}

static json_t *jstr_or_null(const char *s)
{
	return s[0] ? cli_json_str(s) : json_null();
}

static json_t *jtime(int64_t us)
{
	char buf[WQ_TIME_BUFSZ];

	return us ? json_string(wq_time_format(us, buf)) : json_null();
}

static json_t *result_json(const wq_task *t)
{
	if (!t->has_result)
		return json_null();
	return json_pack("{s:I, s:s}", "size", (json_int_t)t->result_size, "sha256",
			 t->result_sha256);
}

json_t *cli_task_json(const wq_task *t)
{
	char aid[48];
	const char *state = wq_state_name(t->state);
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	bad |= json_object_set_new(o, "id", json_integer(t->id));
	bad |= json_object_set_new(o, "kind", cli_json_str(t->kind));
	bad |= json_object_set_new(o, "state", state ? json_string(state) : json_null());
	bad |= json_object_set_new(o, "tenant", cli_json_str(t->tenant));
	bad |= json_object_set_new(o, "scope", cli_json_str(t->scope));
	bad |= json_object_set_new(o, "operation", cli_json_str(t->operation));
	bad |= json_object_set_new(o, "keyed", json_boolean(t->keyed));
	bad |= json_object_set_new(o, "fingerprint", jstr_or_null(t->fingerprint));
	bad |= json_object_set_new(o, "priority", json_integer(t->priority));
	bad |= json_object_set_new(o, "payload_version", json_integer(t->payload_version));
	bad |= json_object_set_new(o, "payload_size", json_integer(t->payload_size));
	bad |= json_object_set_new(o, "payload_sha256", cli_json_str(t->payload_sha256));
	bad |= json_object_set_new(o, "attempts", json_integer(t->attempts));
	bad |= json_object_set_new(o, "max_attempts", json_integer(t->max_attempts));
	bad |= json_object_set_new(o, "attempt_id",
				   t->attempts > 0
					   ? json_string(cli_attempt_id(t->id, t->attempts, aid,
									sizeof aid))
					   : json_null());
	bad |= json_object_set_new(o, "created_at", jtime(t->created_at));
	bad |= json_object_set_new(o, "updated_at", jtime(t->updated_at));
	bad |= json_object_set_new(o, "due_at", jtime(t->due_at));
	bad |= json_object_set_new(o, "started_at", jtime(t->started_at));
	bad |= json_object_set_new(o, "finished_at", jtime(t->finished_at));
	bad |= json_object_set_new(o, "instance", jstr_or_null(t->instance));
	bad |= json_object_set_new(o, "reason", jstr_or_null(t->reason));
	bad |= json_object_set_new(o, "reason_detail", jstr_or_null(t->reason_detail));
	bad |= json_object_set_new(o, "outcome", jstr_or_null(t->outcome));
	bad |= json_object_set_new(o, "cancel_requested", json_boolean(t->cancel_requested));
	bad |= json_object_set_new(o, "result", result_json(t));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int cli_print_json(json_t *j)
{
	int rc;

	if (!j)
		return cli_errorf(CLI_EXIT_ERROR, "out of memory");
	rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (rc != 0 || putchar('\n') == EOF)
		return cli_errorf(CLI_EXIT_ERROR, "cannot write to standard output");
	return 0;
}

/* -------------------------------------------------------------- show text ---- */

static void line_str(const char *key, const char *value)
{
	char buf[WQ_DETAIL_MAX + 1];

	printf("%-17s %s\n", key, cli_safe(value, buf, sizeof buf));
}

static void line_int(const char *key, long long value)
{
	printf("%-17s %lld\n", key, value);
}

static void line_time(const char *key, int64_t us)
{
	char buf[WQ_TIME_BUFSZ];

	printf("%-17s %s\n", key, cli_time(us, buf));
}

void cli_print_task(const wq_task *t)
{
	const char *state = wq_state_name(t->state);
	char aid[48];

	line_int("id:", t->id);
	line_str("kind:", t->kind);
	line_str("state:", state ? state : "?");
	line_str("reason:", t->reason);
	line_str("reason_detail:", t->reason_detail);
	line_str("outcome:", t->outcome);
	line_str("tenant:", t->tenant);
	line_str("scope:", t->scope);
	line_str("operation:", t->operation);
	line_str("keyed:", t->keyed ? "yes" : "no");
	line_str("fingerprint:", t->fingerprint);
	line_int("priority:", t->priority);
	line_int("payload_version:", t->payload_version);
	line_int("payload_size:", t->payload_size);
	line_str("payload_sha256:", t->payload_sha256);
	line_int("attempts:", t->attempts);
	line_int("max_attempts:", t->max_attempts);
	line_str("attempt_id:", t->attempts > 0 ? cli_attempt_id(t->id, t->attempts, aid,
								 sizeof aid)
						: "");
	line_time("created_at:", t->created_at);
	line_time("updated_at:", t->updated_at);
	line_time("due_at:", t->due_at);
	line_time("started_at:", t->started_at);
	line_time("finished_at:", t->finished_at);
	line_str("instance:", t->instance);
	line_str("cancel_requested:", t->cancel_requested ? "yes" : "no");
	if (t->has_result)
		printf("%-17s %lld bytes, sha256 %s\n", "result:", (long long)t->result_size,
		       t->result_sha256);
	else
		line_str("result:", "");
}
