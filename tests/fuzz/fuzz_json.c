/* fuzz_json.c — canonical JSON and the operation fingerprint (src/json.c).
 * Properties, for every input the fingerprint accepts:
 *  - the canonical form is a fixed point: canonical(canonical(x)) == canonical(x), and
 *    has the same fingerprint as x;
 *  - key order and white space never change it: x re-serialised by jansson with every
 *    object's keys reversed and indented has the same fingerprint;
 *  - a changed value does: x with its first integer incremented (or first string
 *    extended) has another fingerprint. */
#include "internal.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A deep copy of v with every object's keys inserted in reverse order. */
static json_t *reversed(json_t *v)
{
	if (json_is_object(v)) {
		json_t *o = json_object();
		size_t n = json_object_size(v), i = 0;
		const char **keys = calloc(n ? n : 1, sizeof(*keys));
		const char *k;
		json_t *x;

		json_object_foreach(v, k, x) keys[i++] = k;
		while (i > 0) {
			i--;
			json_object_set_new(o, keys[i], reversed(json_object_get(v, keys[i])));
		}
		free(keys);
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) json_array_append_new(a, reversed(x));
		return a;
	}
	return json_deep_copy(v);
}

/* Changes the first integer (+1) or string (+"x") in v; 1 when one was changed. */
static int mutate(json_t *v)
{
	const char *k;
	size_t i;
	json_t *x;

	if (json_is_integer(v) && json_integer_value(v) < INT64_MAX)
		return json_integer_set(v, json_integer_value(v) + 1) == 0;
	if (json_is_string(v)) {
		size_t n = json_string_length(v);
		char *s = malloc(n + 2);
		memcpy(s, json_string_value(v), n);
		s[n] = 'x';
		s[n + 1] = '\0';
		int ok = json_string_setn(v, s, n + 1) == 0;
		free(s);
		return ok;
	}
	if (json_is_object(v))
		json_object_foreach(v, k, x) if (mutate(x)) return 1;
	if (json_is_array(v))
		json_array_foreach(v, i, x) if (mutate(x)) return 1;
	return 0;
}

static void fp_of(json_t *v, size_t flags, char hex[WQ_SHA256_HEX], int *ok)
{
	char *text = json_dumps(v, flags | JSON_ENCODE_ANY);
	wq_error e;

	*ok = text && wq__fingerprint(text, strlen(text), 1, hex, &e) == WQ_OK;
	free(text);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char fp[WQ_SHA256_HEX], fp2[WQ_SHA256_HEX], *canon = NULL, *canon2 = NULL;
	json_error_t je;
	json_t *v, *r;
	wq_error e;
	int ok;

	if (wq__fingerprint((const char *)data, size, 1, fp, &e) != WQ_OK)
		return 0;
	if (wq_json_canonical((const char *)data, size, &canon, &e) != WQ_OK)
		abort(); /* fingerprinted but not canonicalisable */
	if (wq_json_canonical(canon, strlen(canon), &canon2, &e) != WQ_OK || strcmp(canon, canon2))
		abort(); /* the canonical form is not a fixed point */
	if (wq__fingerprint(canon, strlen(canon), 1, fp2, &e) != WQ_OK || strcmp(fp, fp2))
		abort(); /* canonical text fingerprints differently */
	wq_free(canon);
	wq_free(canon2);

	/* jansson reads a subset (64-bit integers, no NUL in strings): others are skipped */
	v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return 0;
	r = reversed(v);
	fp_of(r, JSON_INDENT(3) | JSON_PRESERVE_ORDER, fp2, &ok);
	if (ok && strcmp(fp, fp2))
		abort(); /* key order or white space changed the fingerprint */
	if (mutate(r)) {
		fp_of(r, JSON_COMPACT, fp2, &ok);
		if (ok && strcmp(fp, fp2) == 0)
			abort(); /* a changed value kept the fingerprint */
	}
	json_decref(r);
	json_decref(v);
	return 0;
}
