/* cmd_ops.c — operations and their upkeep: `effect begin|done` (for handlers), `prune`,
 * `doctor`, and how `timeline` finds an operation by its key. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ----------------------------------------------------------------- effect ---- */

/* The handler's context: WAKEQ_TASK_ID and WAKEQ_ATTEMPT_ID ("<task>.<n>"), both
 * required and consistent. */
static int effect_context(int64_t *task_id, int *attempt)
{
	const char *tid = getenv("WAKEQ_TASK_ID"), *aid = getenv("WAKEQ_ATTEMPT_ID");
	long long t = 0, at, a;
	char *end;

	if (!tid || !*tid)
		return cli_errorf(CLI_EXIT_USAGE, "effect: WAKEQ_TASK_ID is not set (run it inside a "
						  "handler started by a wakeq worker)");
	if (!aid || !*aid)
		return cli_errorf(CLI_EXIT_USAGE, "effect: WAKEQ_ATTEMPT_ID is not set (run it "
						  "inside a handler started by a wakeq worker)");
	if (cli_parse_ll("WAKEQ_TASK_ID", tid, 1, INT64_MAX, &t))
		return CLI_EXIT_USAGE;
	errno = 0;
	at = isdigit((unsigned char)aid[0]) ? strtoll(aid, &end, 10) : 0;
	if (at != t || errno || *end != '.' || !isdigit((unsigned char)end[1]) ||
	    (a = strtoll(end + 1, &end, 10)) < 1 || a > 1000000 || errno || *end)
		return cli_errorf(CLI_EXIT_USAGE,
				  "effect: WAKEQ_ATTEMPT_ID '%s' is not an attempt of task %s "
				  "(expected %s.N)",
				  aid, tid, tid);
	*task_id = (int64_t)t;
	*attempt = (int)a;
	return 0;
}

/* stdout of `effect begin`: its first line is the answer (new, done, uncertain); after
 * `new` and `uncertain` a second line `key <idempotency key>` names the key to hand to
 * the outside API for this effect (the same in every attempt; with `uncertain`, the key
 * to ask the outside API whether the earlier attempt's effect happened). After `done`
 * the recorded result follows instead.
 *
 * Exit statuses of `effect begin` beyond 0 (new): a shell handler's idiom
 *   if wakeq effect begin NAME >/dev/null; then do-it; wakeq effect done NAME; fi
 * does the effect only when it is new. */
enum { EFFECT_EXIT_DONE = 10, EFFECT_EXIT_UNCERTAIN = 11 };

static int effect_fail(wq_rc rc, const wq_error *err)
{
	/* A stale attempt or a confirmation the journal refuses: a transition not allowed. */
	if (rc == WQ_ESTALE || rc == WQ_ESTATE) {
		cli_fail(rc, err);
		return cli_exit_code(WQ_ESTATE);
	}
	return cli_fail(rc, err);
}

static int effect_begin(wq_db *db, int64_t task_id, int attempt, const char *name)
{
	wq_effect_status st = 0;
	wq_error err = {0};
	char *result = NULL, key[WQ_IDEMPOTENCY_KEY_BUFSZ];
	size_t len;
	wq_rc rc;
	int ex = 0;

	/* The key first: once the intent is recorded the handler must be able to act on it. */
	rc = wq_effect_key(db, task_id, name, key, &err);
	if (rc == WQ_OK)
		rc = wq_effect_begin(db, task_id, attempt, name, &st, &result, &err);
	if (rc != WQ_OK)
		return effect_fail(rc, &err);
	switch (st) {
	case WQ_EFFECT_NEW:
		printf("new\nkey %s\n", key);
		break;
	case WQ_EFFECT_DONE:
		printf("done\n");
		len = result ? strlen(result) : 0;
		if (len && (fwrite(result, 1, len, stdout) != len ||
			    (result[len - 1] != '\n' && putchar('\n') == EOF)))
			ex = cli_errorf(CLI_EXIT_ERROR, "cannot write to standard output: %s",
					strerror(errno));
		if (!ex)
			ex = EFFECT_EXIT_DONE;
		break;
	case WQ_EFFECT_UNCERTAIN:
		printf("uncertain\nkey %s\n", key);
		cli_errorf(0, "effect %s is uncertain: an earlier attempt began it and never "
			      "confirmed it; attempt %lld.%d will end interrupted (uncertain-effect)",
			   name, (long long)task_id, attempt);
		ex = EFFECT_EXIT_UNCERTAIN;
		break;
	}
	wq_free(result);
	return ex;
}

int cmd_effect(struct cli *cli, int argc, char **argv)
{
	const char *result = NULL, *pos[2];
	const struct cli_opt opts[] = {CLI_VALUE("--result", &result), CLI_END};
	wq_error err = {0};
	wq_db *db = NULL;
	int64_t task_id = 0;
	int attempt = 0, npos, ex, begin;
	const char *url;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 2, &npos)))
		return ex;
	if (npos < 1 || (strcmp(pos[0], "begin") != 0 && strcmp(pos[0], "done") != 0))
		return cli_errorf(CLI_EXIT_USAGE, "effect: expected 'begin NAME' or 'done NAME "
						  "[--result TEXT]' (see 'wakeq help')");
	begin = strcmp(pos[0], "begin") == 0;
	if ((ex = cli_want_args("effect", npos, 2, "effect NAME")))
		return ex;
	if (begin && result)
		return cli_errorf(CLI_EXIT_USAGE, "effect begin: --result belongs to 'effect done'");
	if ((ex = effect_context(&task_id, &attempt)))
		return ex;
	if ((ex = cli_store_url(cli, NULL, &url)))
		return ex;
	if (!url || !*url)
		return cli_errorf(CLI_EXIT_USAGE, "effect: WAKEQ_DB is not set (run it inside a "
						  "handler started by a wakeq worker, or give --db)");
	if ((ex = cli_open_url(url, 0, &db)))
		return ex;
	if (begin) {
		ex = effect_begin(db, task_id, attempt, pos[1]);
	} else {
		rc = wq_effect_done(db, task_id, attempt, pos[1], result, &err);
		ex = rc == WQ_OK ? 0 : effect_fail(rc, &err);
	}
	wq_db_close(db);
	return ex;
}

/* ------------------------------------------------------------------ prune ---- */

/* A retention option (or doctor's bound): a positive duration. */
static int retention_arg(const char *opt, const char *text, int64_t *out)
{
	wq_error err = {0};
	int64_t v;
	wq_rc rc;

	if (!text)
		return 0;
	rc = wq_duration_parse(text, &v, &err);
	if (rc != WQ_OK)
		return cli_fail_usage(rc, &err, opt);
	if (v <= 0)
		return cli_errorf(CLI_EXIT_USAGE, "%s: the duration must be longer than 0", opt);
	*out = v;
	return 0;
}

int cmd_prune(struct cli *cli, int argc, char **argv)
{
	const char *task_ret = NULL, *op_ret = NULL, *pos[1];
	int json = 0, dry_run = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_FLAG("--dry-run", &dry_run),
		CLI_VALUE("--task-retention", &task_ret),
		CLI_VALUE("--operation-retention", &op_ret),
		CLI_FLAG("--json", &json),
		CLI_END, /* --config FILE (or $WAKEQ_CONFIG): its [retention] (cli_config) */
	};
	char a[32], b[32];
	wq_prune_opts po = {0};
	wq_prune_counts c = {0};
	const wq_config *cfg = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)))
		return ex;
	if ((ex = cli_config(cli, &cfg)))
		return ex;
	if (cfg)
		wq_config_retention(cfg, &po);
	if ((ex = retention_arg("--task-retention", task_ret, &po.task_retention)) ||
	    (ex = retention_arg("--operation-retention", op_ret, &po.operation_retention)))
		goto out;
	/* The defaults of wq_prune, named here to check and show them. */
	if (!po.task_retention)
		po.task_retention = INT64_C(3) * 86400 * 1000000;
	if (!po.operation_retention)
		po.operation_retention = INT64_C(7) * 86400 * 1000000;
	if (po.operation_retention < po.task_retention) {
		ex = cli_errorf(CLI_EXIT_USAGE,
				"prune: operation retention %s is shorter than task retention %s; "
				"operation records must be kept at least as long as task rows",
				wq_duration_format(po.operation_retention, a, sizeof a),
				wq_duration_format(po.task_retention, b, sizeof b));
		goto out;
	}
	if ((ex = cli_open(cli, 0, &db)))
		goto out;
	rc = dry_run ? wq_prune_preview(db, &po, &c, &err) : wq_prune(db, &po, &c, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
		goto out;
	}
	wq_duration_format(po.task_retention, a, sizeof a);
	wq_duration_format(po.operation_retention, b, sizeof b);
	if (json)
		ex = cli_print_json(json_pack("{s:I, s:I, s:s, s:s, s:b}", "tasks",
					      (json_int_t)c.tasks, "operations",
					      (json_int_t)c.operations, "task_retention", a,
					      "operation_retention", b, "dry_run", dry_run));
	else
		printf("%s %lld task(s) finished more than %s ago and %lld operation "
		       "record(s) completed more than %s ago\n",
		       dry_run ? "would prune" : "pruned", (long long)c.tasks, a,
		       (long long)c.operations, b);
out:
	wq_db_close(db);
	return ex;
}

/* ----------------------------------------------------------------- doctor ---- */

int cmd_doctor(struct cli *cli, int argc, char **argv)
{
	const char *pos[1], *stuck = NULL;
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json),
				       CLI_VALUE("--stuck-after", &stuck), CLI_END};
	char op[WQ_KEY_MAX + 1], detail[sizeof ((wq_finding *)0)->detail];
	wq_doctor_opts dopts = {0};
	wq_finding *f = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	json_t *arr;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)))
		return ex;
	/* a positive duration, checked before the store is opened */
	if (stuck && (ex = retention_arg("--stuck-after", stuck, &dopts.stuck_after)))
		return ex;
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_doctor_opt(db, &dopts, &f, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
		goto out;
	}
	if (json) {
		arr = json_array();
		for (size_t i = 0; arr && i < n; i++) {
			json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:o}", "type", f[i].type,
					      "task_id", (json_int_t)f[i].task_id, "delivery_id",
					      f[i].delivery_id ? json_integer(f[i].delivery_id)
							       : json_null(),
					      "operation", cli_json_str(f[i].operation), "detail",
					      cli_json_str(f[i].detail));
			if (json_array_append_new(arr, o) != 0) {
				json_decref(arr);
				arr = NULL;
			}
		}
		ex = cli_print_json(json_pack("{s:b, s:o}", "clean", n == 0, "findings", arr));
	} else if (n == 0) {
		printf("clean: nothing needs attention\n");
	} else {
		for (size_t i = 0; i < n; i++) {
			printf("%s task %lld", f[i].type, (long long)f[i].task_id);
			if (f[i].delivery_id)
				printf(" delivery %lld", (long long)f[i].delivery_id);
			printf(" operation %s: %s\n", cli_safe(f[i].operation, op, sizeof op),
			       cli_safe(f[i].detail, detail, sizeof detail));
		}
	}
	if (!ex && n > 0)
		ex = CLI_EXIT_ERROR; /* found something */
out:
	wq_free(f);
	wq_db_close(db);
	return ex;
}

/* --------------------------------------------------------- timeline ID|KEY ---- */

int cli_timeline_task(wq_db *db, const char *arg, const char *tenant, const char *scope,
		      const char *kind, int64_t *task_id)
{
	wq_error err = {0};
	wq_rc rc;

	/* A positive integer is a task id, unless the identity options say it is a key. */
	if (!tenant && !scope && !kind && arg[0] != '-' && arg[0] &&
	    strspn(arg, "0123456789") == strlen(arg))
		return cli_parse_id(arg, task_id);
	rc = wq_operation_find(db, tenant, scope, kind, arg, task_id, &err);
	return rc == WQ_OK ? 0 : cli_fail(rc, &err);
}

static json_t *attempt_json(const wq_attempt *a)
{
	char aid[48], s[WQ_TIME_BUFSZ], f[WQ_TIME_BUFSZ];

	return json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:o}", "attempt_id",
			 cli_attempt_id(a->task_id, a->attempt, aid, sizeof aid), "instance",
			 cli_json_str(a->instance), "started_at", wq_time_format(a->started_at, s),
			 "finished_at",
			 a->finished_at ? json_string(wq_time_format(a->finished_at, f)) : json_null(),
			 "outcome", a->outcome[0] ? cli_json_str(a->outcome) : json_null(), "reason",
			 a->reason[0] ? cli_json_str(a->reason) : json_null(), "exit_status",
			 a->exit_status >= 0 ? json_integer(a->exit_status) : json_null());
}

json_t *cli_attempts_json(const wq_attempt *a, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, attempt_json(&a[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

void cli_print_attempts(const wq_attempt *a, size_t n)
{
	char aid[48], inst[WQ_NAME_MAX + 1], s[WQ_TIME_BUFSZ], f[WQ_TIME_BUFSZ];
	char out[WQ_REASON_MAX + 1], why[WQ_REASON_MAX + 1];

	for (size_t i = 0; i < n; i++) {
		printf("  attempt %s  instance %s  started %s  ",
		       cli_attempt_id(a[i].task_id, a[i].attempt, aid, sizeof aid),
		       cli_safe(a[i].instance, inst, sizeof inst), wq_time_format(a[i].started_at, s));
		if (!a[i].finished_at) {
			printf("running\n");
			continue;
		}
		printf("finished %s  %s", wq_time_format(a[i].finished_at, f),
		       cli_safe(a[i].outcome, out, sizeof out));
		if (a[i].reason[0])
			printf(" (%s)", cli_safe(a[i].reason, why, sizeof why));
		if (a[i].exit_status >= 0)
			printf(" exit %d", a[i].exit_status);
		putchar('\n');
	}
}
