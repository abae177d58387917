/* cmd_lock.c — turn locks and paused kinds (issue 10): `lock acquire|release|renew|list|
 * run`, `pause KIND`, `resume KIND`, `kinds`. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

static json_t *lock_json(const wq_lock *l)
{
	char a[WQ_TIME_BUFSZ], e[WQ_TIME_BUFSZ];

	return json_pack("{s:o,s:o,s:I,s:i,s:s,s:s?}", "key", cli_json_str(l->key), "holder",
			 cli_json_str(l->holder), "task_id", (json_int_t)l->task_id, "attempt",
			 l->attempt, "acquired_at", cli_time(l->acquired_at, a), "expires_at",
			 l->expires_at ? cli_time(l->expires_at, e) : NULL);
}

static void print_lock(const wq_lock *l)
{
	char k[WQ_KEY_MAX + 1], h[WQ_NAME_MAX + 1], t[WQ_TIME_BUFSZ];

	if (l->task_id)
		printf("%s  task %lld attempt %d (until its attempt ends)\n",
		       cli_safe(l->key, k, sizeof k), (long long)l->task_id, l->attempt);
	else
		printf("%s  %s until %s\n", cli_safe(l->key, k, sizeof k),
		       cli_safe(l->holder, h, sizeof h), cli_time(l->expires_at, t));
}

static int parse_ttl(const char *text, int64_t *ttl)
{
	wq_error err = {0};
	wq_rc rc;

	if (!text)
		return cli_errorf(CLI_EXIT_USAGE, "lock: --ttl DURATION is required");
	rc = wq_duration_parse(text, ttl, &err);
	if (rc != WQ_OK)
		return cli_fail_usage(rc, &err, "--ttl");
	if (*ttl <= 0)
		return cli_errorf(CLI_EXIT_USAGE, "--ttl must be positive");
	return 0;
}

/* acquire / renew / release KEY --holder NAME [--ttl DUR] */
static int lock_lease(struct cli *cli, const char *sub, int argc, char **argv)
{
	const char *holder = NULL, *ttl_text = NULL, *pos[1];
	const struct cli_opt opts[] = {CLI_VALUE("--holder", &holder),
				       CLI_VALUE("--ttl", &ttl_text), CLI_END};
	int release = strcmp(sub, "release") == 0, npos, ex;
	char t[WQ_TIME_BUFSZ];
	wq_error err = {0};
	wq_lock l;
	wq_db *db = NULL;
	int64_t ttl = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args(sub, npos, 1, "KEY")))
		return ex;
	if (!holder)
		return cli_errorf(CLI_EXIT_USAGE, "lock %s: --holder NAME is required", sub);
	if (!release && (ex = parse_ttl(ttl_text, &ttl)))
		return ex;
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	memset(&l, 0, sizeof l);
	if (release)
		rc = wq_lock_release(db, pos[0], holder, &err);
	else if (strcmp(sub, "renew") == 0)
		rc = wq_lock_renew(db, pos[0], holder, ttl, &l, &err);
	else
		rc = wq_lock_acquire(db, pos[0], holder, ttl, &l, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err); /* held by another: exit 5, naming holder and expiry */
	else if (release)
		printf("lock released\n");
	else
		printf("lock %s until %s\n", strcmp(sub, "renew") == 0 ? "renewed" : "acquired",
		       cli_time(l.expires_at, t));
	wq_db_close(db);
	return ex;
}

static int lock_list(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_error err = {0};
	wq_lock *l = NULL;
	wq_db *db = NULL;
	json_t *arr;
	size_t n = 0, i;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_lock_list(db, &l, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		arr = json_array();
		for (i = 0; arr && i < n; i++)
			if (json_array_append_new(arr, lock_json(&l[i])) != 0) {
				json_decref(arr);
				arr = NULL;
			}
		ex = cli_print_json(arr); /* a listing: an array at the top level */
	} else if (n == 0) {
		printf("no lock is held\n");
	} else {
		for (i = 0; i < n; i++)
			print_lock(&l[i]);
	}
	wq_free(l);
	wq_db_close(db);
	return ex;
}

/* ---- lock run KEY --ttl DUR [--holder NAME] -- CMD ARGS ---- */

static volatile sig_atomic_t run_signal;

static void on_signal(int sig)
{
	run_signal = sig;
}

/* One store call with its own connection: the command never inherits a descriptor of
 * the store. op: 0 renew, 1 release. */
static wq_rc lease_call(struct cli *cli, int op, const char *key, const char *holder,
			int64_t ttl, wq_error *err)
{
	const char *url;
	wq_db *db = NULL;
	wq_rc rc;

	/* `lock run` opened the store through the same lookup before it started the child,
	 * so the config (if any) is loaded already and this cannot fail now. */
	if (cli_store_url(cli, CLI_DEFAULT_DB, &url) != 0)
		return WQ_ECONFIG;
	rc = wq_db_open(url, 0, &db, err);
	if (rc != WQ_OK)
		return rc;
	rc = op == 0 ? wq_lock_renew(db, key, holder, ttl, NULL, err)
		     : wq_lock_release(db, key, holder, err);
	wq_db_close(db);
	return rc;
}

/* Waits for the child, renewing the lease every ttl/3; SIGINT/SIGTERM are passed on to
 * the child. Returns the exit status to report (128 + signal when killed). */
static int run_wait(struct cli *cli, pid_t child, const char *key, const char *holder,
		    int64_t ttl)
{
	int64_t next = wq_now() + ttl / 3;
	struct timespec step = {0, 50 * 1000 * 1000};
	wq_error err = {0};
	int status, lost = 0;
	pid_t got;

	for (;;) {
		got = waitpid(child, &status, WNOHANG);
		if (got == child)
			break;
		if (got < 0 && errno != EINTR)
			return cli_errorf(CLI_EXIT_ERROR, "lock run: waitpid: %s", strerror(errno));
		if (run_signal) {
			kill(child, run_signal);
			run_signal = 0;
		}
		if (!lost && wq_now() >= next) {
			if (lease_call(cli, 0, key, holder, ttl, &err) == WQ_OK) {
				next = wq_now() + ttl / 3;
			} else if (err.code == WQ_ENOTFOUND) {
				cli_errorf(0, "warning: lock %s: the lease was lost (%s); the command "
					      "keeps running without it", key, err.message);
				lost = 1;
			} else {
				next = wq_now() + ttl / 10; /* store busy: try again soon */
			}
		}
		nanosleep(&step, NULL);
	}
	if (lease_call(cli, 1, key, holder, 0, &err) != WQ_OK && !lost)
		cli_errorf(0, "warning: lock %s: release: %s", key, err.message);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : CLI_EXIT_ERROR;
}

static int lock_run(struct cli *cli, int argc, char **argv)
{
	const char *holder = NULL, *ttl_text = NULL, *pos[1];
	const struct cli_opt opts[] = {CLI_VALUE("--holder", &holder),
				       CLI_VALUE("--ttl", &ttl_text), CLI_END};
	char defholder[64], host[48] = "";
	struct sigaction sa;
	wq_error err = {0};
	wq_lock l;
	wq_db *db = NULL;
	int64_t ttl = 0;
	int dash, npos, ex;
	pid_t child;
	wq_rc rc;

	for (dash = 1; dash < argc && strcmp(argv[dash], "--") != 0; dash++)
		;
	if (dash >= argc - 1)
		return cli_errorf(CLI_EXIT_USAGE, "lock run: usage: wakeq lock run KEY --ttl DUR "
						  "[--holder NAME] -- CMD [ARGS...]");
	if ((ex = cli_parse(cli, dash, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args("lock run", npos, 1, "KEY")) || (ex = parse_ttl(ttl_text, &ttl)))
		return ex;
	if (!holder) {
		gethostname(host, sizeof host - 1);
		snprintf(defholder, sizeof defholder, "run:%s:%ld", host, (long)getpid());
		holder = defholder;
	}
	if ((ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_lock_acquire(db, pos[0], holder, ttl, &l, &err);
	wq_db_close(db);
	if (rc != WQ_OK)
		return cli_fail(rc, &err);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fflush(NULL);
	ex = posix_spawnp(&child, argv[dash + 1], NULL, NULL, argv + dash + 1, environ);
	if (ex != 0) {
		lease_call(cli, 1, pos[0], holder, 0, &err);
		return cli_errorf(127, "lock run: cannot run '%s': %s", argv[dash + 1],
				  strerror(ex));
	}
	return run_wait(cli, child, pos[0], holder, ttl);
}

int cmd_lock(struct cli *cli, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "acquire") == 0 || strcmp(sub, "release") == 0 ||
	    strcmp(sub, "renew") == 0)
		return lock_lease(cli, sub, argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0)
		return lock_list(cli, argc - 1, argv + 1);
	if (strcmp(sub, "run") == 0)
		return lock_run(cli, argc - 1, argv + 1);
	return cli_errorf(CLI_EXIT_USAGE,
			  "lock: expected acquire, release, renew, list or run (see 'wakeq help')");
}

/* ---- paused kinds ---- */

static int pause_resume(struct cli *cli, int argc, char **argv, int paused)
{
	const struct cli_opt none[] = {CLI_END};
	const char *pos[1];
	wq_error err = {0};
	wq_db *db = NULL;
	int npos, ex;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, none, pos, 1, &npos)) ||
	    (ex = cli_want_args(argv[0], npos, 1, "KIND")) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_kind_set_paused(db, pos[0], paused, &err);
	if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else
		printf("kind %s %s\n", pos[0], paused ? "paused" : "resumed");
	wq_db_close(db);
	return ex;
}

int cmd_pause(struct cli *cli, int argc, char **argv)
{
	return pause_resume(cli, argc, argv, 1);
}

int cmd_resume(struct cli *cli, int argc, char **argv)
{
	return pause_resume(cli, argc, argv, 0);
}

int cmd_kinds(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_kind_pause *k = NULL;
	char t[WQ_TIME_BUFSZ];
	wq_error err = {0};
	wq_db *db = NULL;
	json_t *arr;
	size_t n = 0, i;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_kinds_paused(db, &k, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		arr = json_array();
		for (i = 0; arr && i < n; i++)
			if (json_array_append_new(arr, json_pack("{s:s,s:b,s:s}", "kind", k[i].kind,
								 "paused", 1, "paused_at",
								 cli_time(k[i].paused_at, t))) != 0) {
				json_decref(arr);
				arr = NULL;
			}
		ex = cli_print_json(arr); /* a listing: an array at the top level */
	} else if (n == 0) {
		printf("no kind is paused\n");
	} else {
		for (i = 0; i < n; i++)
			printf("%s paused since %s\n", k[i].kind, cli_time(k[i].paused_at, t));
	}
	wq_free(k);
	wq_db_close(db);
	return ex;
}
