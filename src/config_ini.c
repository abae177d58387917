/* config_ini.c — the INI reader of the worker configuration.
 *
 * Why not libinih: Debian's libinih (55) is built with INI_MAX_LINE = 200 and without
 * INI_ALLOW_REALLOC (both compile-time options of the shared library), so a longer line
 * (a long webhook URL, a command with many arguments) is split silently; and its inline
 * ";" comments ignore quotes, so `command = sh -c 'a ; b'` would lose its end. This
 * reader has the same grammar for everything else (sections, "name = value" or
 * "name: value", ";" and "#" comment lines, a UTF-8 BOM) and no line limit of its own;
 * the configuration caps lines at WQ__CONFIG_LINE_MAX with an error naming the line. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Trims blanks from both ends of [*b, *e). */
static void trim(const char **b, const char **e)
{
	while (*b < *e && (**b == ' ' || **b == '\t' || **b == '\r'))
		(*b)++;
	while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

/* A copy of [b, e) as a string; NULL when out of memory. */
static char *span(const char *b, const char *e)
{
	char *s = malloc((size_t)(e - b) + 1);

	if (s) {
		memcpy(s, b, (size_t)(e - b));
		s[e - b] = '\0';
	}
	return s;
}

/* One line [b, e) (trimmed, not empty, not a comment). *section is replaced on a header.
 * 1 to go on, 0 for an error on this line. */
static int one_line(const char *b, const char *e, char **section,
		    int (*handler)(void *, const char *, const char *, const char *),
		    void *user)
{
	const char *sep, *ne, *vb;
	char *name, *value;
	int ok;

	if (*b == '[') {
		const char *close = memchr(b, ']', (size_t)(e - b));
		if (!close)
			return 0;
		free(*section);
		*section = span(b + 1, close);
		return *section != NULL;
	}
	for (sep = b; sep < e && *sep != '=' && *sep != ':'; sep++)
		;
	if (sep == e)
		return 0;
	ne = sep;
	vb = sep + 1;
	trim(&b, &ne);
	trim(&vb, &e);
	if (b == ne)
		return 0;
	name = span(b, ne);
	value = span(vb, e);
	ok = name && value && handler(user, *section ? *section : "", name, value);
	free(name);
	free(value);
	return ok;
}

int wq__ini_parse(const char *text,
		  int (*handler)(void *user, const char *section, const char *name,
				 const char *value),
		  void *user)
{
	char *section = NULL;
	int line = 0, bad = 0;

	if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
		text += 3;
	for (const char *l = text; *l && !bad;) {
		const char *nl = strchr(l, '\n');
		const char *b = l, *e = nl ? nl : l + strlen(l);

		line++;
		trim(&b, &e);
		if (b < e && *b != ';' && *b != '#' && !one_line(b, e, &section, handler, user))
			bad = line;
		l = nl ? nl + 1 : e;
	}
	free(section);
	return bad;
}
