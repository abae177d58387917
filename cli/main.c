/* main.c — `wakeq`: global options, command dispatch and the final exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"

struct command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
};

static const struct command commands[] = {
	{"init", cmd_init},         {"enqueue", cmd_enqueue},   {"list", cmd_list},
	{"show", cmd_show},         {"result", cmd_result},     {"cancel", cmd_cancel_ops},
	{"resolve", cmd_resolve},   {"timeline", cmd_timeline}, {"worker", cmd_worker},
	{"effect", cmd_effect},     {"prune", cmd_prune},       {"doctor", cmd_doctor},
	{"deliveries", cmd_deliveries}, {"inbox", cmd_inbox},   {"dead", cmd_dead},
	{"bench", cmd_bench},
	/* operator's side (issue 14) */
	{"retry", cmd_retry},       {"stats", cmd_stats},       {"workers", cmd_workers},
	{"schedule", cmd_schedule},
	/* turn locks, paused kinds (issue 10) */
	{"lock", cmd_lock}, {"pause", cmd_pause}, {"resume", cmd_resume}, {"kinds", cmd_kinds},
	/* intake (issue 13) */
	{"intake", cmd_intake},
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

/* Output that could not be written is an error, even when everything else went well. */
static int finish(int ex)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (ex == 0)
			return cli_errorf(CLI_EXIT_ERROR, "cannot write to standard output: %s",
					  strerror(errno));
	}
	return ex;
}

static int print_version(void)
{
	printf("wakeq %s (schema version %d)\n", wq_version(), wq_schema_version());
	return 0;
}

/* `help --man` and `help --completion bash|zsh`: the generated documents (help_gen.c),
 * for scripts/gen-docs and packagers. */
static int help_generate(int argc, char **argv)
{
	const char *what = NULL;

	if (argc == 2 && strcmp(argv[1], "--man") == 0)
		what = "man";
	else if (argc == 3 && strcmp(argv[1], "--completion") == 0)
		what = argv[2];
	if (!what || cli_help_generate(stdout, what) != 0)
		return cli_errorf(CLI_EXIT_USAGE, "help: expected COMMAND, --man or --completion "
						  "bash|zsh");
	return 0;
}

/* Global options before the command. Returns the index of the command, or -1 with *ex set. */
static int global_options(struct cli *cli, int argc, char **argv, int *ex)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *arg = argv[i];

		if (strcmp(arg, "--db") == 0) {
			if (i + 1 >= argc) {
				*ex = cli_errorf(CLI_EXIT_USAGE, "option '--db' needs a value");
				return -1;
			}
			cli->db_opt = argv[++i];
		} else if (strncmp(arg, "--db=", 5) == 0) {
			cli->db_opt = arg + 5;
		} else if (strcmp(arg, "--config") == 0) {
			if (i + 1 >= argc) {
				*ex = cli_errorf(CLI_EXIT_USAGE, "option '--config' needs a value");
				return -1;
			}
			cli->config_opt = argv[++i];
		} else if (strncmp(arg, "--config=", 9) == 0) {
			cli->config_opt = arg + 9;
		} else if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
			*ex = print_version();
			return -1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			cli_usage(stdout);
			*ex = 0;
			return -1;
		} else {
			*ex = cli_errorf(CLI_EXIT_USAGE, "unknown option '%s' (see 'wakeq help')",
					 arg);
			return -1;
		}
	}
	if (i == argc) {
		*ex = cli_errorf(CLI_EXIT_USAGE, "missing command (see 'wakeq help')");
		return -1;
	}
	return i;
}

int main(int argc, char **argv)
{
	struct cli cli = {0};
	const struct command *cmd;
	int ex = 0;
	int i = global_options(&cli, argc, argv, &ex);

	if (i < 0)
		return finish(ex);
	if (strcmp(argv[i], "help") == 0) {
		if (i + 1 < argc && argv[i + 1][0] == '-')
			return finish(help_generate(argc - i, argv + i));
		if (i + 1 < argc && cli_help_command(stdout, argv[i + 1]) != 0)
			return cli_errorf(CLI_EXIT_USAGE, "help: unknown command '%s' (see 'wakeq "
							  "help')",
					  argv[i + 1]);
		if (i + 1 >= argc)
			cli_usage(stdout);
		return finish(0);
	}
	if (strcmp(argv[i], "version") == 0)
		return finish(print_version());
	/* A command given --json reports its errors as JSON too (issue 14). */
	for (int j = i + 1; j < argc && strcmp(argv[j], "--") != 0; j++)
		if (strcmp(argv[j], "--json") == 0)
			cli_set_json_errors(1);
	cmd = find_command(argv[i]);
	if (!cmd)
		return cli_errorf(CLI_EXIT_USAGE, "unknown command '%s' (see 'wakeq help')",
				  argv[i]);
	ex = cmd->run(&cli, argc - i, argv + i);
	if (ex == CLI_EXIT_HELP)
		ex = 0;
	wq_config_free(cli.config);
	return finish(ex);
}
