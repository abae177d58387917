/* stderr_view.c — `wakeq show|timeline ID --stderr` (issue 14): the stderr tails failed
 * attempts kept (a kind's keep_stderr). Shown only on request and labelled untrusted
 * handler output; control characters other than newline and tab are printed as '?'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Calls fn for each attempt 1..attempts of task_id that kept a tail. Returns 0 or the
 * exit status after the error line. */
static int each_tail(wq_db *db, int64_t task_id, int attempts,
		     int (*fn)(void *ctx, int attempt, const char *tail), void *ctx)
{
	for (int a = 1; a <= attempts; a++) {
		wq_error err = {0};
		char *tail = NULL;
		wq_rc rc = wq_attempt_stderr(db, task_id, a, &tail, &err);
		int ex;

		if (rc == WQ_ENOTFOUND)
			continue;
		if (rc != WQ_OK)
			return cli_fail(rc, &err);
		ex = fn(ctx, a, tail);
		wq_free(tail);
		if (ex)
			return ex;
	}
	return 0;
}

struct text_ctx {
	int64_t task_id;
	int shown;
};

static int print_one(void *ctx, int attempt, const char *tail)
{
	struct text_ctx *c = ctx;

	printf("\n--- stderr of attempt %lld.%d (kept tail; untrusted handler output) ---\n",
	       (long long)c->task_id, attempt);
	for (const char *p = tail; *p; p++)
		putchar((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t' ? '?' : *p);
	if (!*tail || tail[strlen(tail) - 1] != '\n')
		putchar('\n');
	c->shown++;
	return 0;
}

int cli_print_stderr(wq_db *db, int64_t task_id, int attempts)
{
	struct text_ctx c = {task_id, 0};
	int ex = each_tail(db, task_id, attempts, print_one, &c);

	if (!ex && c.shown == 0)
		printf("\nno stderr kept (only failed attempts of kinds with keep_stderr keep it)\n");
	return ex;
}

static int add_one(void *ctx, int attempt, const char *tail)
{
	json_t *arr = ctx;

	return json_array_append_new(arr, json_pack("{s:i, s:o}", "attempt", attempt, "stderr",
						     cli_json_str(tail))) == 0
		       ? 0
		       : cli_errorf(CLI_EXIT_ERROR, "out of memory");
}

int cli_stderr_json(wq_db *db, int64_t task_id, int attempts, json_t *obj)
{
	json_t *arr = json_array();
	int ex;

	if (!arr)
		return cli_errorf(CLI_EXIT_ERROR, "out of memory");
	ex = each_tail(db, task_id, attempts, add_one, arr);
	if (ex) {
		json_decref(arr);
		return ex;
	}
	return json_object_set_new(obj, "stderr", arr) == 0
		       ? 0
		       : cli_errorf(CLI_EXIT_ERROR, "out of memory");
}
