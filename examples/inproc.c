/*
 * inproc.c — a complete worker program with an in-process C handler (wq_worker_register).
 *
 *   cc -o inproc examples/inproc.c $(pkg-config --cflags --libs --static wakeq)
 *   wakeq enqueue greet --payload '{"name":"Ada"}'       # WAKEQ_DB names the store
 *   ./inproc                                             # SIGTERM/SIGINT drain it
 *
 * The store is $WAKEQ_DB (a SQLite file or a postgres:// URL); the configuration is
 * $WAKEQ_CONFIG when set, else the built-in text below. With WAKEQ_UNTIL_IDLE=1 it
 * returns once nothing is due (as `wakeq worker --until-idle`). The `greet` kind has no command:
 * the function `greet` handles it, on one of the worker's `concurrency` threads.
 */
#include <wakeq.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *default_config = "[worker]\n"
				    "concurrency = 4\n"
				    "[kind.greet]\n"
				    "timeout = 30s\n"
				    "max_attempts = 5\n";

/* One external effect, recorded in the journal so that a retry never repeats it. */
static int send_greeting(wq_job *job, const char *text, wq_error *err)
{
	wq_effect_status st;
	char *earlier = NULL;
	wq_rc rc;

	rc = wq_job_effect_begin(job, "send", &st, &earlier, err);
	if (rc != WQ_OK)
		return -1;
	if (st == WQ_EFFECT_DONE) { /* an earlier attempt sent it: skip */
		wq_free(earlier);
		return 0;
	}
	if (st == WQ_EFFECT_UNCERTAIN) /* begun and never confirmed: a person decides */
		return -1;
	/* ... call the outside API here, with wq_job_idempotency_key(job) ... */
	printf("greeting sent: %s\n", text);
	return wq_job_effect_done(job, "send", "sent", err) == WQ_OK ? 0 : -1;
}

/* The handler. It must not block the worker: it runs on a worker thread, polls its stop
 * flag between steps, and answers like a command handler's exit status. */
static wq_job_result greet(wq_job *job, void *userdata)
{
	const char *prefix = userdata;
	size_t len;
	const char *payload = wq_job_payload(job, &len);
	char text[256];
	wq_error err;

	for (int step = 0; step < 3; step++) { /* some preparation work */
		if (wq_job_cancelled(job))
			return WQ_JOB_CANCELLED; /* stopped before any effect */
		usleep(10 * 1000);
	}
	snprintf(text, sizeof(text), "%s %.*s (task %lld, attempt %s)", prefix,
		 (int)(len < 200 ? len : 200), payload, (long long)wq_job_task_id(job),
		 wq_job_attempt_id(job));
	if (send_greeting(job, text, &err) != 0)
		return WQ_JOB_RETRY;
	if (wq_job_set_result(job, "{\"greeted\":true}", 16, &err) != WQ_OK)
		return WQ_JOB_FAIL;
	return WQ_JOB_SUCCEEDED;
}

int main(void)
{
	const char *url = getenv("WAKEQ_DB"), *cfg_path = getenv("WAKEQ_CONFIG");
	const char *idle = getenv("WAKEQ_UNTIL_IDLE");
	wq_worker_opts opts = { .handle_signals = 1, .until_idle = idle && !strcmp(idle, "1") };
	wq_config *cfg = NULL;
	wq_worker *w = NULL;
	wq_db *db = NULL;
	wq_error err;
	int status = 1;

	if (!url || !*url) {
		fprintf(stderr, "inproc: set WAKEQ_DB to a SQLite file or a postgres:// URL\n");
		return 2;
	}
	if ((cfg_path ? wq_config_load(cfg_path, &cfg, &err)
		      : wq_config_parse(default_config, "built-in", &cfg, &err)) != WQ_OK ||
	    wq_db_open(url, WQ_OPEN_MIGRATE, &db, &err) != WQ_OK ||
	    wq_worker_new(db, cfg, &opts, &w, &err) != WQ_OK ||
	    wq_worker_register(w, "greet", greet, "Hello,", &err) != WQ_OK ||
	    wq_worker_run(w, &err) != WQ_OK) {
		fprintf(stderr, "inproc: %s\n", err.message);
		goto out;
	}
	status = 0;
out:
	wq_worker_free(w); /* waits for every handler thread */
	wq_db_close(db);
	wq_config_free(cfg);
	return status;
}
