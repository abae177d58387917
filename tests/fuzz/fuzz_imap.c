/* fuzz_imap.c — an IMAP server's answers to the IMAP source (src/intake_imap_parse.c:
 * UIDVALIDITY, UID SEARCH, the literal of a UID FETCH). Any answer, never a crash, a
 * read outside it or a leak. Properties: a UIDVALIDITY is 0 or 1..2^32-1; the SEARCH
 * UIDs are in that range, strictly increasing (each message once: one task) and keyed
 * "UIDVALIDITY:UID"; a FETCH literal lies wholly inside the answer, and the message in
 * it becomes a JSON payload (src/intake_msg.c: the header summary, base64). The answer
 * is held as the source holds it: its bytes and a NUL after them. */
#include "intake.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1), key[64], err[128];
	struct wq__intake_item *items = NULL;
	const char *at = NULL;
	size_t n = 0, len = 0;
	int64_t v;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	v = wq__imap_uidvalidity(text);
	if (wq__imap_exists(text) < -1 || wq__imap_exists(text) > INT64_C(4294967295))
		abort();
	if (v < 0 || v > INT64_C(4294967295))
		abort();
	if (wq__imap_search(text, v ? v : 1, &items, &n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (items[i].uid < 1 || items[i].uid > INT64_C(4294967295) ||
			    (i && items[i].uid <= items[i - 1].uid))
				abort();
			snprintf(key, sizeof(key), "%" PRId64 ":%" PRId64, v ? v : 1, items[i].uid);
			if (strcmp(key, items[i].key) != 0)
				abort();
		}
		wq__intake_items_free(items, n);
	}
	if (wq__imap_literal(text, size, &at, &len) == 0) {
		char *payload;
		size_t plen = 0;
		json_t *j;

		if (at < text || at > text + size || len > (size_t)(text + size - at))
			abort();
		if (wq__imap_rfc822_size(text, size, at, len) < -1)
			abort();
		/* the message itself, as intake_imap.c hands it on: its payload is JSON */
		payload = wq__intake_payload("mail", "1:1", 1, 1, at, len, (int64_t)len, 1, NULL,
					     &plen);
		if (!payload || !(j = json_loadb(payload, plen, 0, NULL)))
			abort();
		json_decref(j);
		free(payload);
	}
	free(text);
	return 0;
}
