/* cmd_outbox.c — the outbox (SPEC §8): deliveries, the inbox, the dead list.
 *
 *   deliveries [--state S] [--json]     deliveries retry ID
 *   inbox RECIPIENT [--unread] [--json] inbox read ID
 *   dead [--json]
 *
 * Evidence only: channels, states, attempts, errors, result sizes and SHA-256; never a
 * result body (that is `wakeq result ID`, labelled untrusted). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_id(const char *what, const char *text, int64_t *out)
{
	long long v = 0;
	int ex = cli_parse_ll(what, text, 1, LLONG_MAX, &v);

	if (!ex)
		*out = (int64_t)v;
	return ex;
}

static json_t *jtime_or_null(int64_t us)
{
	char buf[WQ_TIME_BUFSZ];

	return us ? json_string(wq_time_format(us, buf)) : json_null();
}

/* ------------------------------------------------------------- deliveries ---- */

static json_t *delivery_json(const wq_delivery *d)
{
	const char *state = wq_delivery_state_name(d->state);

	return json_pack("{s:I, s:I, s:o, s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o}", "id",
			 (json_int_t)d->id, "task_id", (json_int_t)d->task_id, "channel",
			 cli_json_str(d->channel), "state",
			 state ? json_string(state) : json_null(), "attempts", d->attempts,
			 "max_attempts", d->max_attempts, "created_at", jtime_or_null(d->created_at),
			 "updated_at", jtime_or_null(d->updated_at), "next_at",
			 d->state == WQ_DELIVERY_PENDING ? jtime_or_null(d->next_at) : json_null(),
			 "delivered_at", jtime_or_null(d->delivered_at), "last_error",
			 d->last_error[0] ? cli_json_str(d->last_error) : json_null());
}

static json_t *deliveries_json(const wq_delivery *d, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, delivery_json(&d[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static int width(const char *s, int current)
{
	int n = (int)strlen(s);

	return n > current ? n : current;
}

static void print_deliveries(const wq_delivery *d, size_t n)
{
	int wid = 2, wtask = 4, wch = 7, wst = 5;
	char buf[64], ch[WQ_NAME_MAX + 1], err[WQ_DETAIL_MAX + 1], when[WQ_TIME_BUFSZ];

	for (size_t i = 0; i < n; i++) {
		const char *st = wq_delivery_state_name(d[i].state);

		snprintf(buf, sizeof buf, "%lld", (long long)d[i].id);
		wid = width(buf, wid);
		snprintf(buf, sizeof buf, "%lld", (long long)d[i].task_id);
		wtask = width(buf, wtask);
		wch = width(d[i].channel, wch);
		wst = width(st ? st : "?", wst);
	}
	printf("%*s  %*s  %-*s  %-*s  %-8s  %-24s  %s\n", wid, "ID", wtask, "TASK", wch,
	       "CHANNEL", wst, "STATE", "ATTEMPTS", "NEXT/DELIVERED", "LAST ERROR");
	for (size_t i = 0; i < n; i++) {
		const char *st = wq_delivery_state_name(d[i].state);
		int64_t t = d[i].state == WQ_DELIVERY_DELIVERED ? d[i].delivered_at
			    : d[i].state == WQ_DELIVERY_PENDING ? d[i].next_at
								: 0;

		snprintf(buf, sizeof buf, "%d/%d", d[i].attempts, d[i].max_attempts);
		printf("%*lld  %*lld  %-*s  %-*s  %-8s  %-24s  %s\n", wid, (long long)d[i].id, wtask,
		       (long long)d[i].task_id, wch, cli_safe(d[i].channel, ch, sizeof ch), wst,
		       st ? st : "?", buf, cli_time(t, when),
		       cli_safe(d[i].last_error, err, sizeof err));
	}
}

static int deliveries_retry(struct cli *cli, const char *id_text)
{
	wq_error err = {0};
	wq_db *db = NULL;
	int64_t id;
	wq_rc rc;
	int ex;

	if ((ex = parse_id("delivery id", id_text, &id)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_delivery_retry(db, id, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else
		printf("delivery %lld is pending again (its task is not run again)\n",
		       (long long)id);
	wq_db_close(db);
	return ex;
}

int cmd_deliveries(struct cli *cli, int argc, char **argv)
{
	const char *state = NULL, *pos[2];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_VALUE("--state", &state),
		CLI_FLAG("--json", &json),
		CLI_END,
	};
	wq_delivery_state st = 0;
	wq_delivery *d = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 2, &npos)))
		return ex;
	if (npos > 0) {
		if (strcmp(pos[0], "retry") != 0)
			return cli_errorf(CLI_EXIT_USAGE,
					  "deliveries: unknown subcommand '%s' (expected retry ID)",
					  pos[0]);
		if ((ex = cli_want_args("deliveries retry", npos, 2, "delivery id")))
			return ex;
		if (state || json)
			return cli_errorf(CLI_EXIT_USAGE,
					  "deliveries retry takes no --state or --json");
		return deliveries_retry(cli, pos[1]);
	}
	if (state) {
		rc = wq_delivery_state_parse(state, &st, &err);
		if (rc != WQ_OK)
			return cli_fail_usage(rc, &err, "--state");
	}
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_delivery_list(db, st, &d, &n, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (json)
		ex = cli_print_json(deliveries_json(d, n));
	else
		print_deliveries(d, n);
	wq_free(d);
	wq_db_close(db);
	return ex;
}

/* ------------------------------------------------------------------ inbox ---- */

static json_t *notification_json(const wq_notification *x)
{
	char fetch[64];
	json_t *result = json_null();

	snprintf(fetch, sizeof fetch, "wakeq result %lld", (long long)x->task_id);
	if (x->result_size >= 0)
		result = json_pack("{s:I, s:s}", "size", (json_int_t)x->result_size, "sha256",
				   x->result_sha256);
	return json_pack("{s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:s}", "id",
			 (json_int_t)x->id, "recipient", cli_json_str(x->recipient), "subject",
			 cli_json_str(x->subject), "task_id", (json_int_t)x->task_id,
			 "delivery_id", (json_int_t)x->delivery_id, "kind", cli_json_str(x->kind),
			 "operation", cli_json_str(x->operation), "result", result, "created_at",
			 jtime_or_null(x->created_at), "read_at", jtime_or_null(x->read_at), "fetch",
			 fetch);
}

static json_t *inbox_json(const wq_notification *x, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, notification_json(&x[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static void print_inbox(const wq_notification *x, size_t n)
{
	int wid = 2, wtask = 4, wsub = 7, wkind = 4;
	char buf[64], sub[sizeof x->subject], kind[WQ_KIND_MAX + 1], when[WQ_TIME_BUFSZ];
	char res[96];

	for (size_t i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, "%lld", (long long)x[i].id);
		wid = width(buf, wid);
		snprintf(buf, sizeof buf, "%lld", (long long)x[i].task_id);
		wtask = width(buf, wtask);
		wsub = width(x[i].subject, wsub);
		wkind = width(x[i].kind, wkind);
	}
	printf("%*s  %-6s  %*s  %-*s  %-*s  %-24s  %s\n", wid, "ID", "READ", wtask, "TASK", wsub,
	       "SUBJECT", wkind, "KIND", "CREATED", "RESULT");
	for (size_t i = 0; i < n; i++) {
		if (x[i].result_size >= 0)
			snprintf(res, sizeof res, "%lld bytes, sha256 %.16s...",
				 (long long)x[i].result_size, x[i].result_sha256);
		else
			snprintf(res, sizeof res, "-");
		printf("%*lld  %-6s  %*lld  %-*s  %-*s  %-24s  %s\n", wid, (long long)x[i].id,
		       x[i].read_at ? "yes" : "no", wtask, (long long)x[i].task_id, wsub,
		       cli_safe(x[i].subject, sub, sizeof sub), wkind,
		       cli_safe(x[i].kind, kind, sizeof kind), cli_time(x[i].created_at, when), res);
	}
}

static int inbox_read(struct cli *cli, const char *id_text)
{
	wq_error err = {0};
	wq_db *db = NULL;
	int64_t id;
	wq_rc rc;
	int ex;

	if ((ex = parse_id("notification id", id_text, &id)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_inbox_read(db, id, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	wq_db_close(db);
	return ex;
}

int cmd_inbox(struct cli *cli, int argc, char **argv)
{
	const char *pos[2];
	int json = 0, unread = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", &json),
		CLI_FLAG("--unread", &unread),
		CLI_END,
	};
	wq_notification *x = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 2, &npos)) ||
	    (ex = cli_want_args(argv[0], npos, 1, "recipient")))
		return ex;
	if (npos == 2) {
		/* `inbox read ID`; a recipient named "read" is listed as `inbox read`. */
		if (strcmp(pos[0], "read") != 0)
			return cli_errorf(CLI_EXIT_USAGE, "inbox: unexpected argument '%s'", pos[1]);
		if (json || unread)
			return cli_errorf(CLI_EXIT_USAGE, "inbox read takes no --json or --unread");
		return inbox_read(cli, pos[1]);
	}
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_inbox_list(db, pos[0], unread, &x, &n, &err);
	if (rc != WQ_OK)
		ex = rc == WQ_EINVAL ? cli_fail_usage(rc, &err, NULL) : cli_fail(rc, &err);
	else if (json)
		ex = cli_print_json(inbox_json(x, n));
	else
		print_inbox(x, n);
	wq_free(x);
	wq_db_close(db);
	return ex;
}

/* ------------------------------------------------------------------- dead ---- */

/* What was given up, each with the command that acts on it: failed tasks
 * (`wakeq retry ID`, a new round under the same operation) and dead deliveries
 * (`wakeq deliveries retry ID`, the task is not run again). --json: one array of
 * objects, "type" "task" or "delivery", the fields of `show --json` / `deliveries --json`
 * and "command". (Before issue 14 it was an object {"deliveries": [...]}.) */
#define DEAD_TASKS_MAX 1000

static int dead_json(const wq_task *t, size_t nt, const wq_delivery *d, size_t nd)
{
	json_t *arr = json_array();
	char cmd[64];

	for (size_t i = 0; arr && i < nt; i++) {
		json_t *o = cli_task_json(&t[i]);

		snprintf(cmd, sizeof cmd, "wakeq retry %lld", (long long)t[i].id);
		if (!o || json_object_set_new(o, "type", json_string("task")) ||
		    json_object_set_new(o, "command", json_string(cmd)) ||
		    json_array_append_new(arr, o)) {
			json_decref(arr);
			arr = NULL;
		}
	}
	for (size_t i = 0; arr && i < nd; i++) {
		json_t *o = delivery_json(&d[i]);

		snprintf(cmd, sizeof cmd, "wakeq deliveries retry %lld", (long long)d[i].id);
		if (!o || json_object_set_new(o, "type", json_string("delivery")) ||
		    json_object_set_new(o, "command", json_string(cmd)) ||
		    json_array_append_new(arr, o)) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return cli_print_json(arr);
}

static void dead_text(const wq_task *t, size_t nt, const wq_delivery *d, size_t nd)
{
	char kind[WQ_KIND_MAX + 1], op[WQ_KEY_MAX + 1], why[WQ_REASON_MAX + 1];
	char detail[WQ_DETAIL_MAX + 1], ch[WQ_NAME_MAX + 1], err[WQ_DETAIL_MAX + 1];
	char when[WQ_TIME_BUFSZ];

	if (nt)
		printf("failed tasks (retry runs a new round of attempts under the same "
		       "operation):\n");
	for (size_t i = 0; i < nt; i++)
		printf("  task %lld  kind %s  operation %s  attempts %d/%d  failed %s  %s%s%s"
		       "  ->  wakeq retry %lld\n",
		       (long long)t[i].id, cli_safe(t[i].kind, kind, sizeof kind),
		       cli_safe(t[i].operation, op, sizeof op), t[i].attempts, t[i].max_attempts,
		       cli_time(t[i].finished_at, when), cli_safe(t[i].reason, why, sizeof why),
		       t[i].reason_detail[0] ? ": " : "",
		       t[i].reason_detail[0] ? cli_safe(t[i].reason_detail, detail, sizeof detail)
					     : "",
		       (long long)t[i].id);
	if (nd)
		printf("dead deliveries (retry sends one again; its task is not run again):\n");
	for (size_t i = 0; i < nd; i++)
		printf("  delivery %lld  task %lld  channel %s  attempts %d/%d  last error %s"
		       "  ->  wakeq deliveries retry %lld\n",
		       (long long)d[i].id, (long long)d[i].task_id,
		       cli_safe(d[i].channel, ch, sizeof ch), d[i].attempts, d[i].max_attempts,
		       cli_safe(d[i].last_error, err, sizeof err), (long long)d[i].id);
}

int cmd_dead(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_list_filter f = {.state = WQ_STATE_FAILED, .limit = DEAD_TASKS_MAX};
	wq_delivery *d = NULL;
	wq_task *t = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0, nt = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_task_list(db, &f, &t, &nt, &err);
	if (rc == WQ_OK)
		rc = wq_delivery_list(db, WQ_DELIVERY_DEAD, &d, &n, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (json)
		ex = dead_json(t, nt, d, n);
	else if (n == 0 && nt == 0)
		printf("nothing is dead\n");
	else
		dead_text(t, nt, d, n);
	if (!ex && nt == DEAD_TASKS_MAX)
		cli_errorf(0, "only the first %d failed tasks are listed ('wakeq list --state "
			      "failed' shows more)",
			   DEAD_TASKS_MAX);
	wq_free(t);
	wq_free(d);
	wq_db_close(db);
	return ex;
}
