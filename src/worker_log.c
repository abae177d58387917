/* worker_log.c — how the worker's operator lines reach stderr (issue 14): every line
 * has an RFC 3339 timestamp and a level, as text or, with `[worker] log_format = json`,
 * as one JSON object per line: {"ts", "level", "msg", "fields"}.
 *
 * "fields" holds the ids the message names — task, attempt, delivery, instance — taken
 * from the message's own words ("task 42", "attempt 42.1", "delivery 7", "instance
 * h-1-2"), so a log collector can filter without parsing prose. The messages are the
 * worker's own, which never hold payloads, results, credentials or headers (SPEC §14):
 * the JSON form adds nothing that is not in the text form. */
#include "internal.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After `word ` in msg, the token made of the bytes in `set`: copied into out (1 when
 * found and not empty). Matches whole words only ("task" not "subtask"). */
static int word_value(const char *msg, const char *word, const char *set, char *out,
		      size_t outsz)
{
	size_t wl = strlen(word);

	for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
		size_t n;

		if ((p > msg && isalnum((unsigned char)p[-1])) || p[wl] != ' ')
			continue;
		n = strspn(p + wl + 1, set);
		if (n == 0 || n >= outsz)
			continue;
		memcpy(out, p + wl + 1, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

/* A JSON string of s; bytes that are not valid UTF-8 (a handler's stderr line quoted in
 * a message) become '?' rather than losing the line. NULL when out of memory. */
static json_t *json_text(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j)
		return j;
	if (!(copy = strdup(s)))
		return NULL;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

static json_t *fields_of(const char *msg)
{
	static const char digits[] = "0123456789", id[] = "0123456789.";
	static const char inst[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789.-_:";
	json_t *f = json_object();
	char v[160];

	if (!f)
		return NULL;
	if (word_value(msg, "task", digits, v, sizeof v))
		json_object_set_new(f, "task", json_integer(strtoll(v, NULL, 10)));
	if (word_value(msg, "attempt", id, v, sizeof v) && strchr(v, '.'))
		json_object_set_new(f, "attempt", json_string(v));
	if (word_value(msg, "delivery", digits, v, sizeof v))
		json_object_set_new(f, "delivery", json_integer(strtoll(v, NULL, 10)));
	if (word_value(msg, "instance", inst, v, sizeof v))
		json_object_set_new(f, "instance", json_text(v));
	return f;
}

void wq__log_stderr(int json, const char *level, const char *msg)
{
	FILE *out = stderr;
	char ts[WQ_TIME_BUFSZ];
	json_t *o;
	char *line;

	wq_time_format(wq_now(), ts);
	if (!json) {
		fprintf(out, "%s wakeq: %s: %s\n", ts, level, msg);
		return;
	}
	o = json_pack("{s:s, s:s, s:o, s:o}", "ts", ts, "level", level, "msg", json_text(msg),
		      "fields", fields_of(msg));
	line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (line)
		fprintf(out, "%s\n", line);
	else /* out of memory: the line still goes out, as text */
		fprintf(out, "%s wakeq: %s: %s\n", ts, level, msg);
	free(line);
	json_decref(o);
}
