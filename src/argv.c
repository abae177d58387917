/* argv.c — splitting a configured command line into argv with the word rules of a POSIX
 * shell (XCU 2.2 Quoting, 2.6.5 Field Splitting), and nothing else: no parameter,
 * command or arithmetic expansion, no globbing, no redirection, no operators. A config
 * line therefore means the words a shell would see, and never more: `$HOME`, `*`, `;` or
 * `>` are ordinary bytes of a word (use `sh -c '...'` for a shell).
 *
 *  - blanks (space, tab, newline) outside quotes separate words;
 *  - '...' keeps every byte literally up to the next ' (no escapes inside);
 *  - "..." keeps bytes literally, except that \ before $ ` " \ or newline escapes it
 *    (a \ before anything else stays a \);
 *  - outside quotes, \ escapes the next byte (\ newline is removed, as in a shell);
 *  - '' and "" make an empty word; an unterminated quote or a trailing \ is an error.
 *
 * wordexp(3) with WRDE_NOCMD would also split, but it expands variables and globs. */
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

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Reads one word starting at *pp (not a blank) into word (NUL-terminated); advances *pp
 * past it. 0, or -1 with *why set (an unterminated quote or a trailing backslash). */
static int read_word(const char **pp, char *word, const char **why)
{
	const char *p = *pp;
	size_t w = 0;

	while (*p && !is_blank(*p)) {
		if (*p == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end) {
				*why = "unterminated single quote";
				return -1;
			}
			memcpy(word + w, p + 1, (size_t)(end - p - 1));
			w += (size_t)(end - p - 1);
			p = end + 1;
		} else if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (!*p) {
					*why = "unterminated double quote";
					return -1;
				}
				if (*p == '\\' && p[1] && strchr("$`\"\\\n", p[1])) {
					if (p[1] != '\n')
						word[w++] = p[1];
					p++;
				} else {
					word[w++] = *p;
				}
			}
			p++;
		} else if (*p == '\\') {
			if (!p[1]) {
				*why = "backslash at the end of the line";
				return -1;
			}
			if (p[1] != '\n')
				word[w++] = p[1];
			p += 2;
		} else {
			word[w++] = *p++;
		}
	}
	word[w] = '\0';
	*pp = p;
	return 0;
}

wq_rc wq__argv_split(const char *line, char ***argv_out, wq_error *err)
{
	size_t n = 0, len = strlen(line);
	/* Each word but the last ends in a blank: at most len/2 + 1 words. A word is never
	 * longer than its text, so one buffer of len + 1 bytes holds any of them. */
	char **argv = calloc(len / 2 + 2, sizeof *argv);
	char *word = malloc(len + 1);
	const char *p = line, *why = NULL;
	wq_rc rc = WQ_OK;

	if (!argv || !word) {
		rc = wq__err(err, WQ_ENOMEM, "out of memory splitting a command");
		goto fail;
	}
	for (;;) {
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		if (read_word(&p, word, &why) != 0) {
			rc = wq__err(err, WQ_EINVAL, "%s in '%.200s%s'", why, line,
				     len > 200 ? "..." : "");
			goto fail;
		}
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
