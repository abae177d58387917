/* cmd_intake.c — `wakeq intake list|show` (issue 13): what the mailbox sources handed out,
 * each message's state, handouts and acknowledgement. Metadata only: no payload, no
 * header text (those are in the task's payload for whoever may read it). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static json_t *intake_json(const wq_intake *x)
{
	json_t *o = json_object();
	char t[4][WQ_TIME_BUFSZ];

	if (!o)
		return NULL;
	if (json_object_set_new(o, "id", json_integer(x->id)) ||
	    json_object_set_new(o, "source", cli_json_str(x->source)) ||
	    json_object_set_new(o, "key", cli_json_str(x->key)) ||
	    json_object_set_new(o, "uidvalidity", json_integer(x->uidvalidity)) ||
	    json_object_set_new(o, "uid", json_integer(x->uid)) ||
	    json_object_set_new(o, "state", cli_json_str(x->state)) ||
	    json_object_set_new(o, "outcome", cli_json_str(x->outcome)) ||
	    json_object_set_new(o, "task_id", json_integer(x->task_id)) ||
	    json_object_set_new(o, "handouts", json_integer(x->handouts)) ||
	    json_object_set_new(o, "max_handouts", json_integer(x->max_handouts)) ||
	    json_object_set_new(o, "size", json_integer(x->size)) ||
	    json_object_set_new(o, "ack_attempts", json_integer(x->ack_attempts)) ||
	    json_object_set_new(o, "ack_error", cli_json_str(x->ack_error)) ||
	    json_object_set_new(o, "created_at", cli_json_str(cli_time(x->created_at, t[0]))) ||
	    json_object_set_new(o, "handled_at", cli_json_str(cli_time(x->handled_at, t[1]))) ||
	    json_object_set_new(o, "acked_at", cli_json_str(cli_time(x->acked_at, t[2]))) ||
	    json_object_set_new(o, "ack_next_at",
				cli_json_str(cli_time(x->ack_next_at, t[3])))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void print_row(const wq_intake *x)
{
	char src[WQ_INTAKE_SOURCE_MAX + 1], key[WQ_INTAKE_KEY_MAX + 1], err[WQ_DETAIL_MAX + 1];

	printf("%-12s %-28s %-12s %-9s task %-6lld handouts %d/%d  ack %d%s%s\n",
	       cli_safe(x->source, src, sizeof src), cli_safe(x->key, key, sizeof key), x->state,
	       x->outcome[0] ? x->outcome : "-", (long long)x->task_id, x->handouts,
	       x->max_handouts, x->ack_attempts, x->ack_error[0] ? "  last error: " : "",
	       x->ack_error[0] ? cli_safe(x->ack_error, err, sizeof err) : "");
}

static int intake_list(struct cli *cli, int argc, char **argv)
{
	const char *source = NULL, *state = NULL, *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_VALUE("--source", &source),
				       CLI_VALUE("--state", &state), CLI_FLAG("--json", &json),
				       CLI_END};
	wq_intake *x = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	json_t *arr;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)))
		return ex;
	cli_set_json_errors(json);
	if (state && !wq_intake_state_valid(state))
		return cli_errorf(CLI_EXIT_USAGE, "unknown intake state '%s' (expected pending, "
				  "handled, giving-up, acknowledged, abandoned or retired)", state);
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_intake_list(db, source, state, &x, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		arr = json_array();
		for (size_t i = 0; arr && i < n; i++)
			if (json_array_append_new(arr, intake_json(&x[i])))
				json_decref(arr), arr = NULL;
		ex = cli_print_json(arr);
	} else if (n == 0) {
		printf("no intake records\n");
	} else {
		for (size_t i = 0; i < n; i++)
			print_row(&x[i]);
	}
	wq_free(x);
	wq_db_close(db);
	return ex;
}

static int intake_show(struct cli *cli, int argc, char **argv)
{
	const char *pos[2];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_intake x;
	wq_error err = {0};
	wq_db *db = NULL;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 2, &npos)))
		return ex;
	cli_set_json_errors(json);
	if ((ex = cli_want_args("intake show", npos, 2, "SOURCE KEY")) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_intake_get(db, pos[0], pos[1], &x, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		ex = cli_print_json(intake_json(&x));
	} else {
		json_t *o = intake_json(&x);
		const char *k;
		json_t *v;

		if (!o)
			ex = cli_errorf(CLI_EXIT_ERROR, "out of memory");
		json_object_foreach(o, k, v) {
			if (json_is_string(v))
				printf("%s: %s\n", k, *json_string_value(v) ? json_string_value(v) : "-");
			else
				printf("%s: %lld\n", k, (long long)json_integer_value(v));
		}
		json_decref(o);
	}
	wq_db_close(db);
	return ex;
}

int cmd_intake(struct cli *cli, int argc, char **argv)
{
	/* one help entry for both subcommands (cli_parse would look up "list"/"show") */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_help_command(stdout, "intake");
			return CLI_EXIT_HELP;
		}
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return intake_list(cli, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return intake_show(cli, argc - 1, argv + 1);
	return cli_errorf(CLI_EXIT_USAGE, "intake: expected 'list' or 'show' (wakeq help intake)");
}
