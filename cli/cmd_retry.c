/* cmd_retry.c — the operator's commands on tasks (issue 14): `retry`, `resolve` (with
 * --by), and the bulk forms of retry, resolve and cancel (a filter, --dry-run). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* At most this many tasks in one bulk command: a larger set is done in several runs
 * (each prints what it touched), never silently cut. */
#define BULK_MAX 10000

const char *cli_login_name(void)
{
	const char *name = getlogin();
	struct passwd *pw;

	if (name && *name)
		return name;
	name = getenv("USER");
	if (name && *name)
		return name;
	pw = getpwuid(geteuid());
	return pw && pw->pw_name && *pw->pw_name ? pw->pw_name : "operator";
}

/* --since: an RFC 3339 time, or a duration meaning that long ago ("2h"). */
static int since_arg(const char *text, int64_t *out)
{
	wq_error err = {0};
	int64_t v;

	if (wq_time_parse(text, &v, NULL) == WQ_OK) {
		*out = v;
		return 0;
	}
	if (wq_duration_parse(text, &v, &err) != WQ_OK)
		return cli_errorf(CLI_EXIT_USAGE,
				  "invalid --since '%s': expected an RFC 3339 time or a duration "
				  "(\"2h\": that long ago)",
				  text);
	*out = wq_now() - v;
	return 0;
}

/* ------------------------------------------------------------------- bulk ---- */

enum bulk_action { BULK_RETRY, BULK_RESOLVE, BULK_CANCEL };

struct bulk {
	enum bulk_action action;
	const char *state, *kind, *tenant, *since, *note, *by;
	int dry_run, json;
	wq_resolution decision; /* BULK_RESOLVE */
	const char *verb;       /* "retried", "resolved: retry", "cancelled" */
};

/* The one state each bulk action acts on (a bulk form never guesses). */
static int bulk_check_state(const struct bulk *b, wq_state *st)
{
	static const char *const allowed[] = {
		[BULK_RETRY] = "failed or cancelled",
		[BULK_RESOLVE] = "interrupted",
		[BULK_CANCEL] = "pending",
	};
	wq_error err = {0};
	wq_rc rc = wq_state_parse(b->state, st, &err);

	if (rc != WQ_OK)
		return cli_fail_usage(rc, &err, "--state");
	if ((b->action == BULK_RETRY && *st != WQ_STATE_FAILED && *st != WQ_STATE_CANCELLED) ||
	    (b->action == BULK_RESOLVE && *st != WQ_STATE_INTERRUPTED) ||
	    (b->action == BULK_CANCEL && *st != WQ_STATE_PENDING))
		return cli_errorf(CLI_EXIT_USAGE, "--state %s: this bulk form acts on %s tasks",
				  b->state, allowed[b->action]);
	if (!b->kind)
		return cli_errorf(CLI_EXIT_USAGE,
				  "a bulk form needs --kind as well as --state (one kind at a time)");
	return 0;
}

static wq_rc bulk_one(wq_db *db, const struct bulk *b, int64_t id, wq_error *err)
{
	wq_state after = 0;

	switch (b->action) {
	case BULK_RETRY:
		return wq_task_retry(db, id, b->note, b->by, err);
	case BULK_RESOLVE:
		return wq_task_resolve_by(db, id, b->decision, b->note, b->by, err);
	case BULK_CANCEL:
		return wq_task_cancel(db, id, &after, err);
	}
	return WQ_EINVAL;
}

static void print_ids(const char *label, const int64_t *ids, size_t n)
{
	printf("%s %zu task(s)%s", label, n, n ? ":" : "");
	for (size_t i = 0; i < n; i++)
		printf(" %lld", (long long)ids[i]);
	putchar('\n');
}

static json_t *ids_json(const int64_t *ids, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer(ids[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Selects the tasks the filter names, then acts on each by the same public call as the
 * single form (each is its own conditional transaction: a task that moved on meanwhile
 * is refused and reported, never forced). */
static int bulk_run(struct cli *cli, const struct bulk *b)
{
	wq_list_filter f = {0};
	int64_t since = 0, *done = NULL, *failed = NULL;
	size_t n = 0, nd = 0, nf = 0;
	wq_task *t = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	wq_state st = 0;
	int ex;
	wq_rc rc;

	if ((ex = bulk_check_state(b, &st)) || (b->since && (ex = since_arg(b->since, &since))))
		return ex;
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	f.state = st;
	f.kind = b->kind;
	f.limit = BULK_MAX;
	rc = wq_task_list(db, &f, &t, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
		goto out;
	}
	done = calloc(n ? n : 1, sizeof *done);
	failed = calloc(n ? n : 1, sizeof *failed);
	if (!done || !failed) {
		ex = cli_errorf(CLI_EXIT_ERROR, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		/* updated_at: when the task entered its current state */
		if ((b->tenant && strcmp(t[i].tenant, b->tenant) != 0) ||
		    (b->since && t[i].updated_at < since))
			continue;
		if (b->dry_run) {
			done[nd++] = t[i].id;
			continue;
		}
		memset(&err, 0, sizeof err);
		rc = bulk_one(db, b, t[i].id, &err);
		if (rc == WQ_OK) {
			done[nd++] = t[i].id;
		} else {
			failed[nf++] = t[i].id;
			cli_errorf(0, "task %lld: %s", (long long)t[i].id, err.message);
		}
	}
	if (b->json) {
		ex = cli_print_json(json_pack("{s:s, s:b, s:o, s:o, s:b}", "action", b->verb,
					      "dry_run", b->dry_run, "tasks", ids_json(done, nd),
					      "failed", ids_json(failed, nf), "truncated",
					      n == BULK_MAX));
	} else {
		char label[64];

		snprintf(label, sizeof label, "%s%s", b->dry_run ? "would be " : "", b->verb);
		print_ids(label, done, nd);
		if (nf)
			print_ids("refused", failed, nf);
	}
	if (n == BULK_MAX)
		cli_errorf(0, "only the first %d matching tasks were considered; run it again "
			      "for the rest",
			   BULK_MAX);
	if (!ex && nf)
		ex = CLI_EXIT_ERROR;
out:
	free(done);
	free(failed);
	wq_free(t);
	wq_db_close(db);
	return ex;
}

/* ------------------------------------------------------------------ retry ---- */

int cmd_retry(struct cli *cli, int argc, char **argv)
{
	struct bulk b = {.action = BULK_RETRY, .verb = "retried"};
	const char *pos[1];
	const struct cli_opt opts[] = {
		CLI_VALUE("--note", &b.note),     CLI_VALUE("--by", &b.by),
		CLI_VALUE("--state", &b.state),   CLI_VALUE("--kind", &b.kind),
		CLI_VALUE("--tenant", &b.tenant), CLI_VALUE("--since", &b.since),
		CLI_FLAG("--dry-run", &b.dry_run), CLI_FLAG("--json", &b.json),
		CLI_END,
	};
	wq_error err = {0};
	wq_db *db = NULL;
	int64_t id;
	wq_task t;
	int npos, ex;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)))
		return ex;
	if (!b.by)
		b.by = cli_login_name();
	if (npos == 0 && b.state)
		return bulk_run(cli, &b);
	if (npos == 0)
		return cli_errorf(CLI_EXIT_USAGE, "retry: give a task id, or --state and --kind "
						  "(see 'wakeq help retry')");
	if (b.state || b.kind || b.tenant || b.since || b.dry_run)
		return cli_errorf(CLI_EXIT_USAGE, "retry: a task id and a filter (--state, --kind, "
						  "--tenant, --since, --dry-run) exclude each other");
	if ((ex = cli_parse_id(pos[0], &id)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_task_retry(db, id, b.note, b.by, &err);
	if (rc == WQ_OK)
		rc = wq_task_get(db, id, &t, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (b.json)
		ex = cli_print_json(cli_task_json(&t));
	else
		printf("task %lld retried: pending, attempts %d of %d used\n", (long long)id,
		       t.attempts, t.max_attempts);
	wq_db_close(db);
	return ex;
}

/* ---------------------------------------------------------------- resolve ---- */

static const char *const decision_names[] = {
	[WQ_RESOLVE_RETRY] = "retry",
	[WQ_RESOLVE_SUCCEEDED] = "succeeded",
	[WQ_RESOLVE_FAILED] = "failed",
	[WQ_RESOLVE_CANCEL] = "cancel",
};

int cmd_resolve(struct cli *cli, int argc, char **argv)
{
	int flags[5] = {0}, given = 0, npos, ex;
	struct bulk b = {.action = BULK_RESOLVE};
	const char *pos[1];
	const struct cli_opt opts[] = {
		CLI_FLAG("--retry", &flags[WQ_RESOLVE_RETRY]),
		CLI_FLAG("--succeeded", &flags[WQ_RESOLVE_SUCCEEDED]),
		CLI_FLAG("--failed", &flags[WQ_RESOLVE_FAILED]),
		CLI_FLAG("--cancel", &flags[WQ_RESOLVE_CANCEL]),
		CLI_VALUE("--note", &b.note),
		CLI_VALUE("--by", &b.by),
		CLI_VALUE("--state", &b.state),
		CLI_VALUE("--kind", &b.kind),
		CLI_VALUE("--tenant", &b.tenant),
		CLI_VALUE("--since", &b.since),
		CLI_FLAG("--dry-run", &b.dry_run),
		CLI_FLAG("--json", &b.json),
		CLI_END,
	};
	char verb[32];
	wq_error err = {0};
	wq_db *db = NULL;
	int64_t id;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)))
		return ex;
	for (int d = WQ_RESOLVE_RETRY; d <= WQ_RESOLVE_CANCEL; d++) {
		if (flags[d]) {
			given++;
			b.decision = (wq_resolution)d;
		}
	}
	if (given != 1)
		return cli_errorf(CLI_EXIT_USAGE,
				  "resolve: give exactly one of --retry, --succeeded, --failed, --cancel");
	if (!b.by)
		b.by = cli_login_name();
	snprintf(verb, sizeof verb, "resolved %s", decision_names[b.decision]);
	b.verb = verb;
	if (npos == 0 && b.state)
		return bulk_run(cli, &b);
	if ((ex = cli_want_args("resolve", npos, 1, "task id")))
		return ex;
	if (b.state || b.kind || b.tenant || b.since || b.dry_run)
		return cli_errorf(CLI_EXIT_USAGE, "resolve: a task id and a filter (--state, "
						  "--kind, --tenant, --since, --dry-run) exclude each other");
	if ((ex = cli_parse_id(pos[0], &id)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_task_resolve_by(db, id, b.decision, b.note, b.by, &err);
	if (rc == WQ_OK)
		printf("task %lld resolved: %s\n", (long long)id, decision_names[b.decision]);
	else
		ex = cli_fail(rc, &err);
	wq_db_close(db);
	return ex;
}

/* ----------------------------------------------------------- bulk cancel ---- */

/* `cancel --state pending --kind K ...`; `cancel ID` stays cmd_cancel's. */
int cmd_cancel_ops(struct cli *cli, int argc, char **argv)
{
	struct bulk b = {.action = BULK_CANCEL, .verb = "cancelled"};
	const char *pos[1];
	const struct cli_opt opts[] = {
		CLI_VALUE("--state", &b.state),   CLI_VALUE("--kind", &b.kind),
		CLI_VALUE("--tenant", &b.tenant), CLI_VALUE("--since", &b.since),
		CLI_FLAG("--dry-run", &b.dry_run), CLI_FLAG("--json", &b.json),
		CLI_END,
	};
	int npos, ex, bulk = 0;

	/* Any option of the bulk form makes it the bulk form (`cancel ID` has none). */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		for (const struct cli_opt *o = opts; o->name; o++)
			if (strncmp(argv[i], o->name, strlen(o->name)) == 0)
				bulk = 1;
	if (!bulk)
		return cmd_cancel(cli, argc, argv);
	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)))
		return ex;
	if (npos)
		return cli_errorf(CLI_EXIT_USAGE, "cancel: a task id and a filter (--state, "
						  "--kind, --tenant, --since, --dry-run) exclude each other");
	if (!b.state)
		return cli_errorf(CLI_EXIT_USAGE, "cancel: the bulk form needs --state pending");
	return bulk_run(cli, &b);
}
