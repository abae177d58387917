/*
 * cli.h — internals of the `wakeq` command-line tool.
 *
 * The tool is a thin layer over include/wakeq.h: it parses arguments, calls the public API
 * and decides what to print and which exit status to return. It uses nothing of the
 * library but wakeq.h, plus jansson for JSON output and libc.
 *
 * Conventions in cli/:
 *  - A function that can fail for the user returns an exit status (0 ok, else the code to
 *    exit with) after printing exactly one line "wakeq: <message>" on stderr.
 *  - Every argument is validated before the store is opened, so a bad invocation changes
 *    nothing (not even creates the database file).
 */
#ifndef WAKEQ_CLI_H
#define WAKEQ_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "wakeq.h"

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_ERROR = 1,
	CLI_EXIT_USAGE = 2,
	/* Returned by cli_parse after printing the usage for --help: stop, exit 0. */
	CLI_EXIT_HELP = -1,
};

#define CLI_DEFAULT_DB "./wakeq.db"

/* State shared by all commands. */
struct cli {
	const char *db_opt;     /* value of --db, or NULL */
	const char *config_opt; /* value of --config, or NULL */
	wq_config *config;      /* owned: loaded once by cli_config, freed by main */
	int config_loaded;      /* cli_config ran (config may still be NULL: none named) */
};

/* ------------------------------------------------------------------ args.c ---- */

/* The values of a repeatable option, in the order given. */
#define CLI_LIST_MAX 8
struct cli_list {
	const char *v[CLI_LIST_MAX];
	size_t n;
};

/* One option of a command. Exactly one of value/flag/list is set. */
struct cli_opt {
	const char *name;   /* "--payload" */
	const char **value; /* receives the option's argument */
	int *flag;          /* set to 1 when the flag is given */
	struct cli_list *list; /* repeatable: each argument is appended */
};

#define CLI_VALUE(name, ptr) {(name), (ptr), NULL, NULL}
#define CLI_FLAG(name, ptr) {(name), NULL, (ptr), NULL}
#define CLI_LIST(name, ptr) {(name), NULL, NULL, (ptr)}
#define CLI_END {NULL, NULL, NULL, NULL}

/*
 * Parses argv[1..argc-1] of a command (argv[0] is the command name). Options from `opts`
 * (a table ended by a zero entry) may come in any order, as "--name VALUE" or
 * "--name=VALUE"; "--db" and "--help"/"-h" are understood by every command; "--" ends the
 * options. Up to max_pos positional arguments are stored in pos[], their count in *npos.
 * Returns 0, CLI_EXIT_HELP after printing the usage, or CLI_EXIT_USAGE after the error line.
 */
int cli_parse(struct cli *cli, int argc, char **argv, const struct cli_opt *opts,
	      const char **pos, int max_pos, int *npos);

/* Requires exactly `want` positional arguments named `what` (e.g. "task id"). */
int cli_want_args(const char *cmd, int npos, int want, const char *what);

/* Strict integer: optional '-', digits only, within [min, max]. `what` names the option. */
int cli_parse_ll(const char *what, const char *text, long long min, long long max,
		 long long *out);
/* Same for an int option. */
int cli_parse_int(const char *what, const char *text, int min, int max, int *out);
/* A task id: a positive integer ("invalid task id 'abc'"). */
int cli_parse_id(const char *text, int64_t *out);

/* --------------------------------------------------------------- output.c ---- */

/* After it, error lines are JSON objects {error, message, exit} (a command given --json). */
void cli_set_json_errors(int on);
/* Prints "wakeq: <fmt...>" on stderr and returns `code`. */
int cli_errorf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the library's message for `rc` and returns the exit status it maps to. */
int cli_fail(wq_rc rc, const wq_error *err);
/* Same with a context prefix: "wakeq: <ctx>: <message>". */
int cli_fail_ctx(wq_rc rc, const wq_error *err, const char *ctx);
/* For a bad argument the library rejected (a time, a duration, a state, JSON, a config):
 * "wakeq: <ctx>: <message>" (ctx may be NULL), exit status 2 (1 when out of memory). */
int cli_fail_usage(wq_rc rc, const wq_error *err, const char *ctx);
/* wq_rc → exit status: codes 0..6 are the statuses themselves, everything else 1. */
int cli_exit_code(wq_rc rc);

/* help.c: the usage text of all commands, from the one help table. */
void cli_usage(FILE *out);
/* One command's help (usage, options, example, exit statuses); -1 for no such command. */
int cli_help_command(FILE *out, const char *name);

/* The worker configuration named by --config FILE, else $WAKEQ_CONFIG; *out is NULL when
 * neither names one. Loaded once per process (cli owns it). Returns 0, or exit status 2
 * after the error line when the file cannot be read or is invalid. */
int cli_config(struct cli *cli, const wq_config **out);
/* THE store lookup of every command (issue 14), in this order: --db URL, $WAKEQ_DB, the
 * `db =` of the config (cli_config), else `fallback` (may be NULL: *url is then NULL).
 * Returns 0 or the exit status after the error line (an unreadable config). */
int cli_store_url(struct cli *cli, const char *fallback, const char **url);
/* The URL with any password replaced by "***", for printing. */
const char *cli_url_display(const char *url, char *buf, size_t bufsz);
/* Opens cli_store_url(cli, CLI_DEFAULT_DB) with `flags`. */
int cli_open(struct cli *cli, unsigned flags, wq_db **out);
/* Opens `url` with `flags`. */
int cli_open_url(const char *url, unsigned flags, wq_db **out);

/* RFC 3339 time into buf (WQ_TIME_BUFSZ bytes), or "-" for 0 (absent). */
const char *cli_time(int64_t us, char *buf);
/* The attempt id "<task>.<attempt>" into buf, or "-" when attempt is 0. */
const char *cli_attempt_id(int64_t task, int attempt, char *buf, size_t bufsz);
/* `s` with control characters replaced by '?', or "-" when empty: safe for a terminal. */
const char *cli_safe(const char *s, char *buf, size_t bufsz);

/* A JSON string; bytes that are not valid UTF-8 become '?' rather than failing. */
json_t *cli_json_str(const char *s);
/* A task as a JSON object (the fields of wq_task); NULL when out of memory. */
json_t *cli_task_json(const wq_task *t);
/* Prints `j` (stolen) on stdout followed by a newline. NULL means out of memory. */
int cli_print_json(json_t *j);
/* Prints a task as "key: value" lines. */
void cli_print_task(const wq_task *t);

/* -------------------------------------------------------------- commands ---- */

/* Each takes the command's argc/argv (argv[0] = command name) and returns an exit status
 * (or CLI_EXIT_HELP). */
int cmd_init(struct cli *cli, int argc, char **argv);
int cmd_enqueue(struct cli *cli, int argc, char **argv);
int cmd_cancel(struct cli *cli, int argc, char **argv);
int cmd_resolve(struct cli *cli, int argc, char **argv);
int cmd_result(struct cli *cli, int argc, char **argv);
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_show(struct cli *cli, int argc, char **argv);
int cmd_timeline(struct cli *cli, int argc, char **argv);
int cmd_worker(struct cli *cli, int argc, char **argv);
/* cmd_outbox.c */
int cmd_deliveries(struct cli *cli, int argc, char **argv);
int cmd_inbox(struct cli *cli, int argc, char **argv);
int cmd_dead(struct cli *cli, int argc, char **argv);
int cmd_effect(struct cli *cli, int argc, char **argv);
int cmd_prune(struct cli *cli, int argc, char **argv);
int cmd_doctor(struct cli *cli, int argc, char **argv);
/* cmd_bench.c */
int cmd_bench(struct cli *cli, int argc, char **argv);
/* cmd_enqueue_batch.c (issue 11): `enqueue --batch FILE` (cmd_enqueue hands it over) */
int cmd_enqueue_batch(struct cli *cli, int argc, char **argv);
/* cmd_retry.c (issue 14): retry, resolve, and cancel's bulk form (else cmd_cancel) */
int cmd_retry(struct cli *cli, int argc, char **argv);
int cmd_cancel_ops(struct cli *cli, int argc, char **argv);
/* cmd_stats.c (issue 14) */
int cmd_stats(struct cli *cli, int argc, char **argv);
int cmd_workers(struct cli *cli, int argc, char **argv);
/* The operator's name for `by` in events: getlogin(), $USER, the passwd entry. */
const char *cli_login_name(void);
/* cmd_schedule.c */
int cmd_schedule(struct cli *cli, int argc, char **argv);
/* cmd_lock.c (issue 10) */
int cmd_lock(struct cli *cli, int argc, char **argv);
int cmd_pause(struct cli *cli, int argc, char **argv);
int cmd_resume(struct cli *cli, int argc, char **argv);
int cmd_kinds(struct cli *cli, int argc, char **argv);
/* intake (issue 13; cmd_intake.c) */
int cmd_intake(struct cli *cli, int argc, char **argv);

/* ---------------------------------------------------------------- cmd_ops.c ---- */

/* The task `timeline ID|KEY` names: a positive integer is a task id unless one of
 * tenant/scope/kind (NULL when not given) is given; anything else is an operation key
 * (wq_operation_find). Returns 0 or the exit status after the error line. */
int cli_timeline_task(wq_db *db, const char *arg, const char *tenant, const char *scope,
		      const char *kind, int64_t *task_id);
/* Attempts as a JSON array (NULL when out of memory), or as indented text lines. */
json_t *cli_attempts_json(const wq_attempt *a, size_t n);
void cli_print_attempts(const wq_attempt *a, size_t n);

/* ---------------------------------------------------------- stderr_view.c ---- */

/* `--stderr` of show and timeline (issue 14): the stderr tails attempts 1..attempts of
 * task_id kept, as text after a labelled header each, or as obj's member "stderr" (an
 * array of {attempt, stderr}). 0 or the exit status after the error line. */
int cli_print_stderr(wq_db *db, int64_t task_id, int attempts);
int cli_stderr_json(wq_db *db, int64_t task_id, int attempts, json_t *obj);

#endif /* WAKEQ_CLI_H */
