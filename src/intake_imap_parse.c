/* intake_imap_parse.c — the parsing of an IMAP server's answers for the IMAP source
 * (intake_imap.c; issue 13), apart from the network so that a fuzzer reaches it
 * (tests/fuzz/fuzz_imap.c). Pure functions of their input; text is the server's answer
 * as collected (NUL-terminated; it may hold other NUL bytes, which end the search). */
#include "intake.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAP_NZ_MAX INT64_C(4294967295) /* RFC 3501 nz-number: UIDs and UIDVALIDITY */

/* A number 1..IMAP_NZ_MAX at p (no sign, no blank before it), its end in *end; 0 when
 * there is none. */
static int64_t nz_number(const char *p, const char **end)
{
	int64_t v = 0;
	const char *q = p;

	while (*q >= '0' && *q <= '9' && v <= IMAP_NZ_MAX)
		v = v * 10 + (*q++ - '0');
	*end = q;
	return q == p || v < 1 || v > IMAP_NZ_MAX ? 0 : v;
}

int64_t wq__imap_uidvalidity(const char *text)
{
	const char *p = text ? strstr(text, "[UIDVALIDITY ") : NULL, *end;

	return p ? nz_number(p + 13, &end) : 0;
}

int64_t wq__imap_exists(const char *text)
{
	const char *p = text, *end;
	int64_t last = -1, v;

	/* "* N EXISTS"; N may be 0 (nz_number refuses it), and a later one is newer */
	while (p && (p = strstr(p, "* ")) != NULL) {
		p += 2;
		if (p[0] == '0' && strncmp(p + 1, " EXISTS", 7) == 0)
			last = 0;
		else if ((v = nz_number(p, &end)) && strncmp(end, " EXISTS", 7) == 0)
			last = v;
	}
	return last;
}

/* The first `RFC822.SIZE n` (n > 0) in [p, stop), or -1. */
static int64_t size_in(const char *p, const char *stop)
{
	const char *end;
	int64_t v;

	for (; p < stop && (p = memmem(p, (size_t)(stop - p), "RFC822.SIZE ", 12)) != NULL; p++)
		if ((v = nz_number(p + 12, &end)) != 0 && end <= stop)
			return v;
	return -1;
}

int64_t wq__imap_rfc822_size(const char *text, size_t n, const char *at, size_t len)
{
	/* outside the literal: the message's own text may say anything */
	int64_t v = size_in(text, at);

	return v >= 0 ? v : size_in(at + len, text + n);
}

static int by_uid(const void *a, const void *b)
{
	int64_t x = ((const struct wq__intake_item *)a)->uid,
		y = ((const struct wq__intake_item *)b)->uid;

	return x < y ? -1 : x > y;
}

int wq__imap_search(const char *text, int64_t uidvalidity, struct wq__intake_item **items,
		    size_t *n, char *err, size_t errsz)
{
	const char *p = text ? strstr(text, "* SEARCH") : NULL, *end;
	size_t cap = 0, i, o;

	*items = NULL;
	*n = 0;
	/* every `* SEARCH` line: a listing in windows answers one per window */
	for (p = p ? p + 8 : NULL; p;) {
		struct wq__intake_item *it;
		int64_t uid;

		while (*p == ' ')
			p++;
		if (!(uid = nz_number(p, &end))) {
			if ((p = strstr(p, "* SEARCH")) != NULL)
				p += 8;
			continue;
		}
		p = end;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct wq__intake_item *g = realloc(*items, nc * sizeof(*g));

			if (!g) {
				wq__intake_items_free(*items, *n);
				*items = NULL;
				*n = 0;
				snprintf(err, errsz, "out of memory listing the mailbox");
				return -1;
			}
			*items = g;
			cap = nc;
		}
		it = &(*items)[(*n)++];
		memset(it, 0, sizeof(*it));
		it->uid = uid;
		snprintf(it->key, sizeof(it->key), "%" PRId64 ":%" PRId64, uidvalidity, uid);
	}
	if (*n > 1)
		qsort(*items, *n, sizeof(**items), by_uid);
	/* a UID answered twice is one message: one record, one task */
	for (i = o = 0; i < *n; i++)
		if (o == 0 || (*items)[o - 1].uid != (*items)[i].uid)
			(*items)[o++] = (*items)[i];
	*n = o;
	return 0;
}

int wq__imap_literal(const char *text, size_t n, const char **at, size_t *len)
{
	const char *p = text, *brace, *eol;
	char *end;
	unsigned long long v;

	for (; p && (p = strstr(p, "* ")); p++) {
		eol = strstr(p, "\r\n");
		if (!eol)
			return -1;
		brace = memchr(p, '{', (size_t)(eol - p));
		if (!brace || !memmem(p, (size_t)(eol - p), " FETCH ", 7)) {
			p = eol;
			continue;
		}
		if (brace[1] < '0' || brace[1] > '9')
			return -1;
		errno = 0;
		v = strtoull(brace + 1, &end, 10);
		if (errno || *end != '}' || end + 1 != eol)
			return -1;
		if ((size_t)(text + n - (eol + 2)) < v)
			return -1; /* cut short */
		*at = eol + 2;
		*len = (size_t)v;
		return 0;
	}
	return -1;
}
