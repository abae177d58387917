/* args.c — strict argument parsing for the `wakeq` commands. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_opt *find_opt(const struct cli_opt *opts, const char *name,
				      size_t len)
{
	for (; opts->name; opts++) {
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	}
	return NULL;
}

/* Consumes argv[*i] (and its value, when it takes one as the next argument). */
static int take_option(struct cli *cli, int argc, char **argv, int *i,
		       const struct cli_opt *opts)
{
	const struct cli_opt common[] = {CLI_VALUE("--db", &cli->db_opt),
					 CLI_VALUE("--config", &cli->config_opt), CLI_END};
	const char *arg = argv[*i];
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct cli_opt *o = find_opt(opts, arg, len);

	if (!o)
		o = find_opt(common, arg, len);
	if (!o)
		return cli_errorf(CLI_EXIT_USAGE, "unknown option '%.*s' for %s (see 'wakeq help')",
				  (int)len, arg, argv[0]);
	if (o->flag) {
		if (eq)
			return cli_errorf(CLI_EXIT_USAGE, "option '%s' takes no value", o->name);
		*o->flag = 1;
		return 0;
	}
	if (!eq && *i + 1 >= argc)
		return cli_errorf(CLI_EXIT_USAGE, "option '%s' needs a value", o->name);
	const char *v = eq ? eq + 1 : argv[++*i];
	if (!o->list) {
		*o->value = v;
		return 0;
	}
	if (o->list->n == CLI_LIST_MAX)
		return cli_errorf(CLI_EXIT_USAGE, "option '%s' given more than %d times", o->name,
				  CLI_LIST_MAX);
	o->list->v[o->list->n++] = v;
	return 0;
}

int cli_parse(struct cli *cli, int argc, char **argv, const struct cli_opt *opts,
	      const char **pos, int max_pos, int *npos)
{
	int n = 0, options_done = 0;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int ex;

		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			if (n == max_pos)
				return cli_errorf(CLI_EXIT_USAGE, "%s: unexpected argument '%s'",
						  argv[0], arg);
			pos[n++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = 1;
			continue;
		}
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			if (cli_help_command(stdout, argv[0]) != 0)
				cli_usage(stdout);
			return CLI_EXIT_HELP;
		}
		ex = take_option(cli, argc, argv, &i, opts);
		if (ex)
			return ex;
	}
	*npos = n;
	return 0;
}

int cli_want_args(const char *cmd, int npos, int want, const char *what)
{
	if (npos < want)
		return cli_errorf(CLI_EXIT_USAGE, "%s: missing %s (see 'wakeq help')", cmd, what);
	return 0;
}

/* Optional '-', then decimal digits only, fitting a long long. */
static int strict_ll(const char *text, long long *out)
{
	const char *p = text + (text[0] == '-');
	char *end;
	long long v;

	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno == ERANGE || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int cli_parse_ll(const char *what, const char *text, long long min, long long max,
		 long long *out)
{
	long long v;

	if (strict_ll(text, &v) != 0 || v < min || v > max)
		return cli_errorf(CLI_EXIT_USAGE,
				  "invalid %s '%s': expected an integer from %lld to %lld", what,
				  text, min, max);
	*out = v;
	return 0;
}

int cli_parse_int(const char *what, const char *text, int min, int max, int *out)
{
	long long v = 0;
	int ex = cli_parse_ll(what, text, min, max, &v);

	if (ex)
		return ex;
	*out = (int)v;
	return 0;
}

int cli_parse_id(const char *text, int64_t *out)
{
	long long v;

	if (text[0] == '-' || strict_ll(text, &v) != 0 || v < 1)
		return cli_errorf(CLI_EXIT_USAGE, "invalid task id '%s'", text);
	*out = (int64_t)v;
	return 0;
}
