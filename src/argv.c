/* argv.c — splitting a configured command line into argv, without a shell: spaces
 * separate, "double quotes" group, and inside quotes \" and \\ escape. Nothing else is
 * special, so no configuration can smuggle in a redirection or a substitution. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void wq__argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

wq_rc wq__argv_split(const char *line, char ***argv_out, wq_error *err)
{
	size_t n = 0, len = strlen(line);
	char **argv = calloc(len / 2 + 2, sizeof *argv); /* at most len/2+1 words */
	char *word = malloc(len + 1);
	const char *p = line;
	wq_rc rc = WQ_OK;

	if (!argv || !word) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory splitting a command");
		goto fail;
	}
	while (*p) {
		size_t w = 0;
		int quoted = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
			if (*p == '"') {
				quoted = !quoted; /* "" alone is a real, empty argument */
				p++;
			} else if (quoted && *p == '\\' && (p[1] == '"' || p[1] == '\\')) {
				word[w++] = p[1];
				p += 2;
			} else {
				word[w++] = *p++;
			}
		}
		if (quoted) {
			rc = wq__err(err, WQ_EINVAL, "unterminated double quote in '%s'", line);
			goto fail;
		}
		word[w] = '\0';
		if (!(argv[n++] = strdup(word))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory splitting a command");
			goto fail;
		}
	}
	free(word);
	*argv_out = argv;
	return WQ_OK;
fail:
	free(word);
	wq__argv_free(argv);
	return rc;
}
