/* cmd_view.c — read-only commands: list, show, timeline. Evidence only, never bodies. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ------------------------------------------------------------------- list ---- */

struct list_widths {
	int id, kind, state, attempts;
};

static int width_of(const char *s, int current)
{
	int n = (int)strlen(s);

	return n > current ? n : current;
}

static struct list_widths list_widths(const wq_task *t, size_t n)
{
	struct list_widths w = {2, 4, 5, 8};
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		const char *state = wq_state_name(t[i].state);

		snprintf(buf, sizeof buf, "%lld", (long long)t[i].id);
		w.id = width_of(buf, w.id);
		w.kind = width_of(t[i].kind, w.kind);
		w.state = width_of(state ? state : "?", w.state);
		snprintf(buf, sizeof buf, "%d/%d", t[i].attempts, t[i].max_attempts);
		w.attempts = width_of(buf, w.attempts);
	}
	return w;
}

static void print_list_table(const wq_task *t, size_t n)
{
	struct list_widths w = list_widths(t, n);
	char due[WQ_TIME_BUFSZ], kind[WQ_KIND_MAX + 1], reason[WQ_REASON_MAX + 1], att[32];

	printf("%*s  %-*s  %-*s  %-*s  %-24s  %s\n", w.id, "ID", w.kind, "KIND", w.state, "STATE",
	       w.attempts, "ATTEMPTS", "DUE", "REASON");
	for (size_t i = 0; i < n; i++) {
		const char *state = wq_state_name(t[i].state);

		snprintf(att, sizeof att, "%d/%d", t[i].attempts, t[i].max_attempts);
		printf("%*lld  %-*s  %-*s  %-*s  %-24s  %s\n", w.id, (long long)t[i].id, w.kind,
		       cli_safe(t[i].kind, kind, sizeof kind), w.state, state ? state : "?",
		       w.attempts, att, cli_time(t[i].due_at, due),
		       cli_safe(t[i].reason, reason, sizeof reason));
	}
}

static int print_list_json(const wq_task *t, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, cli_task_json(&t[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return cli_print_json(arr);
}

/* A time bound of list: an RFC 3339 time, or a duration meaning that long ago. */
static int time_bound(const char *opt, const char *text, int64_t *out)
{
	int64_t v;

	if (!text)
		return 0;
	if (wq_time_parse(text, &v, NULL) == WQ_OK) {
		*out = v;
		return 0;
	}
	if (wq_duration_parse(text, &v, NULL) == WQ_OK) {
		*out = wq_now() - v;
		return *out > 0 ? 0 : cli_errorf(CLI_EXIT_USAGE, "%s: '%s' reaches before 1970", opt, text);
	}
	return cli_errorf(CLI_EXIT_USAGE,
			  "invalid %s '%s': expected an RFC 3339 time or a duration (\"2h\": that "
			  "long ago)",
			  opt, text);
}

/* Validates the filter options into q before anything is opened. Repeated --state and
 * --kind mean any of them. */
static int list_query(const struct cli_list *states, const char *limit, const char *since,
		      const char *until, wq_state *st, wq_task_query *q)
{
	wq_error err = {0};
	wq_rc rc;
	int ex;

	for (size_t i = 0; i < states->n; i++) {
		rc = wq_state_parse(states->v[i], &st[i], &err);
		if (rc != WQ_OK)
			return cli_fail_usage(rc, &err, "--state");
	}
	q->states = st;
	q->nstates = states->n;
	if ((ex = time_bound("--since", since, &q->since)) ||
	    (ex = time_bound("--until", until, &q->until)))
		return ex;
	if (q->until && q->until <= q->since)
		return cli_errorf(CLI_EXIT_USAGE, "--until must be later than --since");
	if (limit)
		return cli_parse_int("--limit", limit, 1, INT_MAX, &q->limit);
	return 0;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	const char *limit = NULL, *since = NULL, *until = NULL, *pos[1];
	struct cli_list states = {{0}, 0}, kinds = {{0}, 0};
	wq_task_query q = {0};
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_LIST("--state", &states),   CLI_LIST("--kind", &kinds),
		CLI_VALUE("--tenant", &q.tenant), CLI_VALUE("--scope", &q.scope),
		CLI_VALUE("--since", &since),   CLI_VALUE("--until", &until),
		CLI_VALUE("--limit", &limit),   CLI_FLAG("--json", &json),
		CLI_END,
	};
	wq_state st[CLI_LIST_MAX];
	wq_task *tasks = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) ||
	    (ex = list_query(&states, limit, since, until, st, &q)))
		return ex;
	q.kinds = kinds.v;
	q.nkinds = kinds.n;
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_task_query_list(db, &q, &tasks, &n, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (json)
		ex = print_list_json(tasks, n);
	else
		print_list_table(tasks, n);
	wq_free(tasks);
	wq_db_close(db);
	return ex;
}

/* ------------------------------------------------------------------- show ---- */

/* Parses "COMMAND ID [--json] [--stderr]", opens the store and reads the task. */
static int open_task(struct cli *cli, int argc, char **argv, int *json, int *with_stderr,
		     wq_db **db, wq_task *t)
{
	const struct cli_opt opts[] = {CLI_FLAG("--json", json), CLI_FLAG("--stderr", with_stderr),
				       CLI_END};
	const char *pos[1];
	wq_error err = {0};
	int64_t id;
	int npos, ex;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args(argv[0], npos, 1, "task id")) || (ex = cli_parse_id(pos[0], &id)) ||
	    (ex = cli_open(cli, 0, db)))
		return ex;
	rc = wq_task_get(*db, id, t, &err);
	if (rc == WQ_OK)
		return 0;
	wq_db_close(*db);
	*db = NULL;
	return cli_fail(rc, &err);
}

int cmd_show(struct cli *cli, int argc, char **argv)
{
	wq_db *db = NULL;
	int json = 0, with_stderr = 0, ex;
	json_t *j;
	wq_task t;
	int64_t parent = 0, *kids = NULL;
	size_t nkids = 0;
	wq_error err = {0};

	if ((ex = open_task(cli, argc, argv, &json, &with_stderr, &db, &t)))
		return ex;
	/* follow-ups (issue 10): the task's parent and children */
	if (wq_task_family(db, t.id, &parent, &kids, &nkids, &err) != WQ_OK) {
		ex = cli_fail(err.code, &err);
		goto out;
	}
	if (json) {
		json_t *c = json_array();

		j = cli_task_json(&t);
		for (size_t i = 0; c && i < nkids; i++)
			json_array_append_new(c, json_integer((json_int_t)kids[i]));
		if (j) {
			json_object_set_new(j, "parent_id",
					    parent ? json_integer((json_int_t)parent) : json_null());
			json_object_set_new(j, "children", c ? c : json_array());
		} else {
			json_decref(c);
		}
		if (j && with_stderr && (ex = cli_stderr_json(db, t.id, t.attempts, j)))
			json_decref(j);
		else
			ex = cli_print_json(j);
	} else {
		cli_print_task(&t);
		printf("%-17s %s", "parent:", parent ? "" : "-");
		if (parent)
			printf("%" PRId64, parent);
		printf("\n%-17s %s", "followups:", nkids ? "" : "-");
		for (size_t i = 0; i < nkids; i++)
			printf("%s%" PRId64, i ? ", " : "", kids[i]);
		printf("\n");
		if (with_stderr)
			ex = cli_print_stderr(db, t.id, t.attempts);
	}
out:
	free(kids);
	wq_db_close(db);
	return ex;
}

/* --------------------------------------------------------------- timeline ---- */

/* The event's detail as JSON; a detail that does not parse is kept as a string. */
static json_t *detail_json(const wq_event *e)
{
	json_t *j;

	if (!e->detail[0])
		return json_object();
	j = json_loads(e->detail, JSON_DECODE_ANY, NULL);
	return j ? j : cli_json_str(e->detail);
}

static json_t *event_json(const wq_event *e)
{
	char at[WQ_TIME_BUFSZ], aid[48];

	return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o}", "id", (json_int_t)e->id, "at",
			 wq_time_format(e->at, at), "type", cli_json_str(e->type), "attempt",
			 e->attempt > 0 ? json_string(cli_attempt_id(e->task_id, e->attempt, aid,
								      sizeof aid))
					: json_null(),
			 "instance", e->instance[0] ? cli_json_str(e->instance) : json_null(),
			 "detail", detail_json(e));
}

/* The operation a timeline is keyed by: its identity, fingerprint and payload version. */
static json_t *operation_json(const wq_task *t)
{
	return json_pack("{s:o, s:b, s:o, s:o, s:o, s:s, s:i}", "id", cli_json_str(t->operation),
			 "keyed", t->keyed, "tenant", cli_json_str(t->tenant), "scope",
			 cli_json_str(t->scope), "kind", cli_json_str(t->kind), "fingerprint",
			 t->fingerprint, "payload_version", t->payload_version);
}

static int print_timeline_json(wq_db *db, const wq_task *t, const wq_attempt *att, size_t na,
			       const wq_event *ev, size_t n, int with_stderr)
{
	json_t *events = json_array(), *j;
	int ex;

	for (size_t i = 0; events && i < n; i++) {
		if (json_array_append_new(events, event_json(&ev[i])) != 0) {
			json_decref(events);
			events = NULL;
		}
	}
	j = json_pack("{s:o, s:o, s:o, s:o}", "operation", operation_json(t), "task",
		      cli_task_json(t), "attempts", cli_attempts_json(att, na), "events", events);
	if (j && with_stderr && (ex = cli_stderr_json(db, t->id, t->attempts, j))) {
		json_decref(j);
		return ex;
	}
	return cli_print_json(j);
}

static void print_timeline_header(const wq_task *t, const wq_attempt *att, size_t na)
{
	char a[WQ_NAME_MAX + 1], b[WQ_NAME_MAX + 1], op[WQ_KEY_MAX + 1];
	char d[WQ_DETAIL_MAX + 1];
	const char *state = wq_state_name(t->state);

	printf("operation:    %s (%s)\n", cli_safe(t->operation, op, sizeof op),
	       t->keyed ? "key" : "generated");
	printf("fingerprint:  %s, payload version %d\n", t->fingerprint[0] ? t->fingerprint : "-",
	       t->payload_version);
	printf("tenant/scope: %s / %s\n", cli_safe(t->tenant, a, sizeof a),
	       cli_safe(t->scope, b, sizeof b));
	printf("task:         %lld\n", (long long)t->id);
	printf("kind:         %s\n", cli_safe(t->kind, a, sizeof a));
	printf("payload:      sha256 %s, %lld bytes\n", t->payload_sha256,
	       (long long)t->payload_size);
	printf("state:        %s", state ? state : "?");
	if (t->reason[0])
		printf(" (%s%s%s)", cli_safe(t->reason, a, sizeof a), t->reason_detail[0] ? ": " : "",
		       t->reason_detail[0] ? cli_safe(t->reason_detail, d, sizeof d) : "");
	printf("\nattempts:     %d/%d\n", t->attempts, t->max_attempts);
	cli_print_attempts(att, na);
	putchar('\n');
}

/* One event line; the detail is re-encoded compactly so that it is always one line. */
static void print_event(const wq_event *e, int wtype, int wattempt, int winstance)
{
	char at[WQ_TIME_BUFSZ], aid[48], type[sizeof e->type], inst[WQ_NAME_MAX + 1];
	char raw[sizeof e->detail];
	json_t *j = e->detail[0] ? json_loads(e->detail, JSON_DECODE_ANY, NULL) : NULL;
	char *detail = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	printf("%s  %-*s  %-*s  %-*s  %s\n", wq_time_format(e->at, at), wtype,
	       cli_safe(e->type, type, sizeof type), wattempt,
	       cli_attempt_id(e->task_id, e->attempt, aid, sizeof aid), winstance,
	       cli_safe(e->instance, inst, sizeof inst),
	       detail ? detail : e->detail[0] ? cli_safe(e->detail, raw, sizeof raw) : "{}");
	free(detail);
	json_decref(j);
}

static void print_timeline_text(const wq_task *t, const wq_attempt *att, size_t na,
				const wq_event *ev, size_t n)
{
	int wtype = 1, wattempt = 1, winstance = 1;
	char aid[48];

	print_timeline_header(t, att, na);
	for (size_t i = 0; i < n; i++) {
		wtype = width_of(ev[i].type, wtype);
		wattempt = width_of(cli_attempt_id(ev[i].task_id, ev[i].attempt, aid, sizeof aid),
				    wattempt);
		winstance = width_of(ev[i].instance, winstance);
	}
	for (size_t i = 0; i < n; i++)
		print_event(&ev[i], wtype, wattempt, winstance);
}

int cmd_timeline(struct cli *cli, int argc, char **argv)
{
	const char *tenant = NULL, *scope = NULL, *kind = NULL, *pos[1];
	int json = 0, with_stderr = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_VALUE("--tenant", &tenant), CLI_VALUE("--scope", &scope),
		CLI_VALUE("--kind", &kind),     CLI_FLAG("--json", &json),
		CLI_FLAG("--stderr", &with_stderr), CLI_END,
	};
	wq_event *events = NULL;
	wq_attempt *att = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0, na = 0;
	int64_t id = 0;
	wq_task t;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args("timeline", npos, 1, "task id or operation key")) ||
	    (ex = cli_open(cli, 0, &db)))
		return ex;
	if ((ex = cli_timeline_task(db, pos[0], tenant, scope, kind, &id)))
		goto out;
	rc = wq_task_get(db, id, &t, &err);
	if (rc == WQ_OK)
		rc = wq_attempts(db, id, &att, &na, &err);
	if (rc == WQ_OK)
		rc = wq_timeline(db, id, &events, &n, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (json)
		ex = print_timeline_json(db, &t, att, na, events, n, with_stderr);
	else {
		print_timeline_text(&t, att, na, events, n);
		if (with_stderr)
			ex = cli_print_stderr(db, t.id, t.attempts);
	}
out:
	wq_free(events);
	wq_free(att);
	wq_db_close(db);
	return ex;
}
