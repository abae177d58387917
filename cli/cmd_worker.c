/* cmd_worker.c — `wakeq worker --config FILE [--until-idle] [--no-scheduler]`. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Handlers get the store as WAKEQ_DB and may run in another directory: a SQLite path is
 * made absolute (it exists once opened). NULL means "use url as it is". */
static char *absolute_db_path(const char *url)
{
	if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0)
		return NULL;
	return realpath(url, NULL);
}

static int run_worker(wq_db *db, const wq_config *cfg, const char *url, int until_idle,
		      int no_scheduler)
{
	char *abs = absolute_db_path(url);
	wq_worker_opts o = {
		.until_idle = until_idle,
		.handle_signals = 1,
		.db_url = abs ? abs : url,
	};
	wq_worker *w = NULL;
	wq_error err = {0};
	wq_rc rc;
	int ex = 0;

	rc = wq_worker_new(db, cfg, &o, &w, &err);
	if (rc != WQ_OK) {
		ex = rc == WQ_ECONFIG ? cli_fail_usage(rc, &err, NULL) : cli_fail(rc, &err);
		goto cleanup;
	}
	wq_worker_set_scheduler(w, !no_scheduler);
	rc = wq_worker_run(w, &err);
	if (rc != WQ_OK) {
		cli_fail(rc, &err);
		ex = CLI_EXIT_ERROR;
	}
cleanup:
	wq_worker_free(w);
	free(abs);
	return ex;
}

int cmd_worker(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int until_idle = 0, no_scheduler = 0, npos, ex;
	const struct cli_opt opts[] = {
		/* --config FILE (or $WAKEQ_CONFIG) is common to all commands (cli_config) */
		CLI_FLAG("--until-idle", &until_idle),
		CLI_FLAG("--no-scheduler", &no_scheduler),
		CLI_END,
	};
	const wq_config *cfg = NULL;
	wq_db *db = NULL;
	const char *url;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) ||
	    (ex = cli_config(cli, &cfg)))
		return ex;
	if (!cfg)
		return cli_errorf(CLI_EXIT_USAGE, "worker: missing --config FILE (or $WAKEQ_CONFIG)");
	if ((ex = cli_store_url(cli, CLI_DEFAULT_DB, &url)) ||
	    (ex = cli_open_url(url, WQ_OPEN_MIGRATE, &db)))
		return ex;
	ex = run_worker(db, cfg, url, until_idle, no_scheduler);
	wq_db_close(db);
	return ex;
}
