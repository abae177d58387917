/* evidence.c — event details as safe evidence (see evidence.h), one implementation for
 * every backend. */
#include "evidence.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), or 0 if invalid.
 * Follows RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF), which is what
 * jansson accepts. */
size_t wq__utf8_seq(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (len > avail)
		return 0;
	for (i = 1; i < len; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xBF;
	}
	return len;
}

/* A copy of text with every invalid UTF-8 byte replaced by '?', cut to at most `max`
 * bytes on a character boundary. NULL only when out of memory. */
char *wq__utf8_clean(const char *text, size_t max)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = strlen(text), i = 0, o = 0, n;
	char *out = malloc((len < max ? len : max) + 1);

	if (!out)
		return NULL;
	while (i < len) {
		n = wq__utf8_seq(p + i, len - i);
		if (o + (n ? n : 1) > max)
			break;
		if (n) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			out[o++] = '?';
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

/* Sets key to a JSON string made safe from text (cut to max bytes). 0 or -1 (no memory). */
int wq__jset_str(json_t *obj, const char *key, const char *text, size_t max)
{
	char *clean = wq__utf8_clean(nz(text), max);
	int rc;

	if (!clean)
		return -1;
	rc = json_object_set_new(obj, key, json_string(clean));
	free(clean);
	return rc;
}

int wq__jset_int(json_t *obj, const char *key, json_int_t v)
{
	return json_object_set_new(obj, key, json_integer(v));
}

/* Times in event details are RFC 3339, like every time wakeq shows. */
int wq__jset_time(json_t *obj, const char *key, int64_t us)
{
	char buf[WQ_TIME_BUFSZ];

	return json_object_set_new(obj, key, json_string(wq_time_format(us, buf)));
}

int wq__jset_attempt(json_t *obj, int64_t task_id, int attempt)
{
	char id[48];

	snprintf(id, sizeof(id), "%" PRId64 ".%d", task_id, attempt);
	return json_object_set_new(obj, "attempt_id", json_string(id));
}

/* The detail text of obj, at most WQ__DETAIL_MAX bytes so it survives wq_event intact: when
 * longer, the free-text fields (operator note first) are cut, never the structure.
 * malloc'd; NULL only when out of memory. */
char *wq__detail_text(json_t *obj)
{
	static const char *const cuttable[] = {"note", "reason_detail", "instance", "reason",
					       "by"};
	char *text, *shorter;
	const char *val;
	size_t len, over, vlen, i;

	for (;;) {
		text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
		if (!text)
			return NULL;
		len = strlen(text);
		if (len <= WQ__DETAIL_MAX)
			return text;
		free(text);
		over = len - WQ__DETAIL_MAX;
		for (i = 0; i < WQ__ARRAY_LEN(cuttable); i++) {
			val = json_string_value(json_object_get(obj, cuttable[i]));
			if (val && (vlen = strlen(val)) > 0)
				break;
		}
		if (i == WQ__ARRAY_LEN(cuttable))
			return strdup("{\"truncated\":true}");
		shorter = wq__utf8_clean(val, vlen > over ? vlen - over : 0);
		if (!shorter)
			return NULL;
		if (json_object_set_new(obj, cuttable[i], json_string(shorter))) {
			free(shorter);
			return NULL;
		}
		free(shorter);
	}
}

/* A JSON object, or NULL with err set. */
json_t *wq__jobj(wq_error *err)
{
	json_t *o = json_object();

	if (!o)
		wq__err(err, WQ_ENOMEM, "out of memory (event detail)");
	return o;
}

wq_rc wq__jfail(json_t *o, wq_error *err)
{
	json_decref(o);
	return wq__err(err, WQ_ENOMEM, "out of memory (event detail)");
}

wq_rc wq__check_utf8(const char *field, const char *text, wq_error *err)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = text ? strlen(text) : 0, i = 0, k;

	while (i < len) {
		if (p[i] < 0x80) { /* ASCII (most names, keys, ids): a sequence of one */
			i++;
			continue;
		}
		k = wq__utf8_seq(p + i, len - i);
		if (!k)
			return wq__err(err, WQ_EINVAL, "%s is not valid UTF-8 (byte %zu)", field,
				       i + 1);
		i += k;
	}
	return WQ_OK;
}
