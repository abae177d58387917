/* json.c — payload validation (jansson) and SHA-256 fingerprints (libcrypto). */
#include "internal.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

wq_rc wq_json_validate(const char *text, size_t len, wq_error *err)
{
	json_error_t jerr;
	json_t *v;

	if (!text)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload: no text");
	/* Duplicate keys are rejected: their meaning differs between parsers, and an
	 * operation's fingerprint must not depend on which one wins. */
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!v)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload at line %d, column %d: %s",
			       jerr.line, jerr.column, jerr.text);
	json_decref(v);
	return WQ_OK;
}

void wq__sha256_hex(const void *data, size_t len, char hex[WQ_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL))
		mdlen = 0; /* leaves an empty string rather than garbage */
	for (unsigned int i = 0; i < mdlen && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[mdlen >= 32 ? 64 : 2 * mdlen] = '\0';
}

/* Integral reals become integers, so 1, 1.0 and 1e0 have one canonical form. Only within
 * ±2^53, where a double represents every integer exactly. */
static json_t *normalise(json_t *v)
{
	const char *k;
	json_t *child;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_REAL: {
		double d = json_real_value(v);
		if (d == (double)(json_int_t)d && d >= -9007199254740992.0 &&
		    d <= 9007199254740992.0) {
			json_t *n = json_integer((json_int_t)d);
			if (n)
				return n;
		}
		return json_incref(v);
	}
	case JSON_OBJECT:
		json_object_foreach(v, k, child) {
			json_t *n = normalise(child);
			if (!n || json_object_set_new(v, k, n) != 0)
				return NULL;
		}
		return json_incref(v);
	case JSON_ARRAY:
		json_array_foreach(v, i, child) {
			json_t *n = normalise(child);
			if (!n || json_array_set_new(v, i, n) != 0)
				return NULL;
		}
		return json_incref(v);
	default:
		return json_incref(v);
	}
}

wq_rc wq_json_canonical(const char *text, size_t len, char **out, wq_error *err)
{
	json_error_t jerr;
	json_t *v, *n;
	char *s;

	if (!text)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload: no text");
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!v)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload at line %d, column %d: %s",
			       jerr.line, jerr.column, jerr.text);
	n = normalise(v);
	json_decref(v);
	if (!n)
		return wq__err(err, WQ_ENOMEM, "out of memory normalising JSON");
	/* Sorted keys, no white space, raw UTF-8 with only the escapes JSON requires, and
	 * reals with enough digits to round-trip. */
	s = json_dumps(n, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	json_decref(n);
	if (!s)
		return wq__err(err, WQ_ENOMEM, "out of memory writing canonical JSON");
	*out = s;
	return WQ_OK;
}

wq_rc wq__fingerprint(const char *payload, size_t len, int version, char hex[WQ_SHA256_HEX],
		      wq_error *err)
{
	char *canon = NULL, *buf;
	size_t clen, blen;
	wq_rc rc = wq_json_canonical(payload, len, &canon, err);

	if (rc != WQ_OK)
		return rc;
	clen = strlen(canon);
	blen = clen + 32;
	buf = malloc(blen);
	if (!buf) {
		free(canon);
		return wq__err(err, WQ_ENOMEM, "out of memory fingerprinting the payload");
	}
	/* "v<version>\n<canonical JSON>": the version is part of the identity of the input */
	blen = (size_t)snprintf(buf, blen, "v%d\n", version);
	memcpy(buf + blen, canon, clen);
	wq__sha256_hex(buf, blen + clen, hex);
	free(buf);
	free(canon);
	return WQ_OK;
}
