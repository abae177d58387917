/* intake_msg.c — a mailbox message as a task payload (issue 13): the header summary and
 * the payload's JSON (version WQ_INTAKE_PAYLOAD_VERSION, documented in README "Intake").
 * Pure functions of their input; run on the pool thread. */
#include "intake.h"
#include "store/evidence.h"

#include <jansson.h>
#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEADER_VALUE_MAX 998 /* RFC 5322's line limit: a summary, not the whole header */

/* The end of the header part of msg (the blank line), or len. */
static size_t header_end(const char *msg, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (msg[i] == '\n' && msg[i + 1] == '\n')
			return i + 1;
		if (msg[i] == '\n' && msg[i + 1] == '\r' && i + 2 < len && msg[i + 2] == '\n')
			return i + 1;
	}
	return len;
}

/* The unfolded value of the first header field `name` in msg[0..hend), malloc'd valid
 * UTF-8 cut to HEADER_VALUE_MAX; NULL when absent (or out of memory). */
static char *header_value(const char *msg, size_t hend, const char *name)
{
	size_t nlen = strlen(name), i = 0, o = 0;
	char *buf, *clean;

	while (i < hend) {
		size_t eol = i;

		while (eol < hend && msg[eol] != '\n')
			eol++;
		if (eol - i > nlen && strncasecmp(msg + i, name, nlen) == 0 && msg[i + nlen] == ':')
			break;
		i = eol + 1;
	}
	if (i >= hend)
		return NULL;
	i += nlen + 1;
	if (!(buf = malloc(HEADER_VALUE_MAX + 1)))
		return NULL;
	while (i < hend && (msg[i] == ' ' || msg[i] == '\t'))
		i++;
	/* the value runs on over continuation lines (starting with a space or tab): the
	 * line break goes, the blank stays (RFC 5322 unfolding) */
	for (; i < hend && o < HEADER_VALUE_MAX; i++) {
		if (msg[i] == '\r')
			continue;
		if (msg[i] == '\n') {
			if (i + 1 < hend && (msg[i + 1] == ' ' || msg[i + 1] == '\t'))
				continue;
			break;
		}
		buf[o++] = msg[i] == '\t' ? ' ' : msg[i];
	}
	while (o > 0 && buf[o - 1] == ' ')
		o--;
	buf[o] = '\0';
	clean = wq__utf8_clean(buf, HEADER_VALUE_MAX);
	free(buf);
	return clean;
}

static int set_str(json_t *o, const char *key, const char *v)
{
	return json_object_set_new(o, key, json_string(v ? v : "")) != 0;
}

static json_t *summary(const char *msg, size_t len)
{
	static const char *const fields[][2] = {
		{"From", "from"}, {"To", "to"}, {"Subject", "subject"}, {"Date", "date"},
		{"Message-ID", "message_id"},
	};
	size_t hend = header_end(msg, len);
	json_t *h = json_object();
	int bad = !h;

	for (size_t i = 0; !bad && i < WQ__ARRAY_LEN(fields); i++) {
		char *v = header_value(msg, hend, fields[i][0]);

		bad = set_str(h, fields[i][1], v);
		free(v);
	}
	if (bad) {
		json_decref(h);
		return NULL;
	}
	return h;
}

static int set_raw(json_t *o, const char *msg, size_t len)
{
	unsigned char *b64;
	int bad;

	if (len > WQ__INTAKE_RAW_MAX)
		return json_object_set_new(o, "raw_omitted", json_true()) != 0;
	if (!(b64 = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1)))
		return 1;
	base64_encode_raw((char *)b64, len, (const uint8_t *)msg);
	b64[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
	bad = json_object_set_new(o, "raw_base64", json_string((const char *)b64)) != 0;
	free(b64);
	return bad;
}

char *wq__intake_payload(const char *source, const char *key, int64_t uidvalidity,
			 int64_t uid, const char *msg, size_t len, int64_t size, int with_raw,
			 const char *path, size_t *out_len)
{
	json_t *o = json_object(), *h = summary(msg, len);
	char *text = NULL, *p = NULL;
	int bad = !o || !h;

	/* headers first: json_object_set_new takes h (or frees it) whatever follows */
	if (!bad)
		bad = json_object_set_new(o, "headers", h) ||
		      json_object_set_new(o, "v", json_integer(WQ_INTAKE_PAYLOAD_VERSION)) ||
		      set_str(o, "source", source) || set_str(o, "key", key) ||
		      json_object_set_new(o, "size", json_integer(size));
	else
		json_decref(h);
	if (!bad && uidvalidity)
		bad = json_object_set_new(o, "uidvalidity", json_integer(uidvalidity)) ||
		      json_object_set_new(o, "uid", json_integer(uid));
	if (!bad && path) {
		bad = !(p = wq__utf8_clean(path, strlen(path))) || set_str(o, "path", p);
		free(p);
	}
	if (!bad && with_raw)
		bad = set_raw(o, msg, len);
	if (!bad)
		text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (text)
		*out_len = strlen(text);
	return text;
}

void wq__intake_items_free(struct wq__intake_item *items, size_t n)
{
	for (size_t i = 0; items && i < n; i++) {
		free(items[i].ref);
		free(items[i].payload);
	}
	free(items);
}
