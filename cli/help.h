/* help.h — the help table's entries (help.c), shared with the generators of the man
 * page and the shell completions (help_gen.c): one source, so they cannot drift. */
#ifndef WAKEQ_CLI_HELP_H
#define WAKEQ_CLI_HELP_H

#include <stddef.h>
#include <stdio.h>

#define HELP_OPTS_MAX 16

struct help_opt {
	const char *name; /* "--state STATE" */
	const char *text;
};

struct help {
	const char *name;    /* the command word */
	const char *usage;   /* after "wakeq " (may hold several lines: several forms) */
	const char *summary; /* what it does, one or a few lines */
	struct help_opt opts[HELP_OPTS_MAX];
	const char *example;
	const char *exits;   /* the exit statuses this command returns */
};

/* The table, in the order `wakeq help` prints it; *n entries. */
const struct help *cli_help_table(size_t *n);

/* help_gen.c: `wakeq help --man` (wakeq(1) in roff), `--completion bash|zsh`. Returns 0,
 * or -1 for an unknown `what`. */
int cli_help_generate(FILE *out, const char *what);

#endif /* WAKEQ_CLI_HELP_H */
