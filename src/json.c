/* json.c — payload validation (jansson) and SHA-256 fingerprints (libcrypto). */
#include "internal.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <string.h>

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
