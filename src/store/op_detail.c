/*
 * op_detail.c — wave5 drain: an event's detail text written straight from wq__eventf's
 * arguments into a caller's buffer, without building a jansson object first (a claimed
 * task's `claimed` and `started` and its outcome's event cost a dozen allocations each
 * that way, on the store thread that every claim and outcome waits for).
 *
 * Invariant: the text is byte for byte what wq__detail_text(detailv(fmt, ...)) gives —
 * keys sorted by strcmp (JSON_SORT_KEYS), compact, jansson's escapes (\" \\ \b \f \n \r
 * \t, \u%04X for other control characters, UTF-8 kept as is), strings cleaned and cut by
 * wq__utf8_clean's rule, 'S' and negative non-'i' integers left out as detailv does. When
 * it would not be (a key given twice, a text longer than WQ__DETAIL_MAX that
 * wq__detail_text would cut), wq__detail_fast answers -1 and the caller takes the jansson
 * path. tests/unit/test_detail.c checks both paths against each other.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DETAIL_KEYS_MAX 12

struct entry {
	const char *key;
	char type;       /* 'a' attempt id, 's' string, 'b' boolean, 'i' integer, 't' time */
	const char *str; /* 's' */
	size_t max;      /* 's': at most this many bytes of cleaned text */
	int64_t v;       /* 'a' task id, 'b', 'i', 't' */
	int attempt;     /* 'a' */
};

struct out {
	char *p;
	size_t n, cap;
	int full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || o->n + n >= o->cap) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

/* One cleaned character c (its n bytes) as jansson writes it in a string. */
static void put_char(struct out *o, const unsigned char *c, size_t n)
{
	char esc[8];

	if (n > 1 || (c[0] >= 0x20 && c[0] != '"' && c[0] != '\\')) {
		put(o, (const char *)c, n);
		return;
	}
	switch (c[0]) {
	case '"': put(o, "\\\"", 2); return;
	case '\\': put(o, "\\\\", 2); return;
	case '\b': put(o, "\\b", 2); return;
	case '\f': put(o, "\\f", 2); return;
	case '\n': put(o, "\\n", 2); return;
	case '\r': put(o, "\\r", 2); return;
	case '\t': put(o, "\\t", 2); return;
	default:
		snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c[0]);
		put(o, esc, 6);
	}
}

/* 1 for a byte jansson copies as is and that wq__utf8_clean keeps: printable ASCII (and
 * DEL, 0x20-0x7F) other than the two it escapes ('"' 0x22, '\\' 0x5C); one load a byte
 * in put_string's loop instead of four comparisons. */
static const unsigned char plain_byte[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* 1 when none of the 8 bytes of x is below 0x20, above 0x7F, '"' or '\\': all plain
 * (plain_byte). The tests of "some byte is zero" ((v - 0x01..) & ~v & 0x80..) and "some
 * byte is below n" are exact as yes/no answers, so a word passes only when every byte
 * would. */
static int word_plain(uint64_t x)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), high = UINT64_C(0x8080808080808080);
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

	return !((x & high) | ((x - ones * 0x20) & ~x & high) | ((q - ones) & ~q & high) |
		 ((b - ones) & ~b & high));
}

/* The length of the run of plain bytes at p, at most lim: 8 bytes a step while whole
 * words are plain (hex digests, kinds, times: ~1 instruction a byte instead of ~5),
 * then byte by byte. */
static size_t plain_run(const unsigned char *p, size_t lim)
{
	size_t run = 0;
	uint64_t x;

	for (; lim - run >= 8; run += 8) {
		memcpy(&x, p + run, 8);
		if (!word_plain(x))
			break;
	}
	while (run < lim && plain_byte[p[run]])
		run++;
	return run;
}

/* text as a JSON string after wq__utf8_clean(text, max): invalid bytes become '?', cut
 * on a character boundary at max bytes of cleaned text. Runs of plain bytes (the whole
 * of most texts: kinds, hex digests, times) are copied at once, within max; anything
 * else goes one character at a time as before. */
static void put_string(struct out *o, const char *text, size_t max)
{
	const unsigned char *p = (const unsigned char *)text, q = '?';
	size_t len = strlen(text), i = 0, used = 0, n, run, lim;

	put(o, "\"", 1);
	while (i < len) {
		lim = len - i < max - used ? len - i : max - used; /* used <= max always */
		run = plain_run(p + i, lim);
		if (run) {
			put(o, (const char *)p + i, run);
			used += run;
			i += run;
			continue;
		}
		n = wq__utf8_seq(p + i, len - i);
		if (used + (n ? n : 1) > max)
			break;
		put_char(o, n ? p + i : &q, n ? n : 1);
		used += n ? n : 1;
		i += n ? n : 1;
	}
	put(o, "\"", 1);
}

/* v in decimal as printf's PRId64 writes it, into num (at least 21 bytes); its length. */
static size_t int_text(int64_t v, char *num)
{
	char tmp[24];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0, k = 0;

	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		num[k++] = '-';
	while (n)
		num[k++] = tmp[--n];
	return k;
}

/* e[0 .. n) by key (strcmp), in place: an insertion sort, cheaper than qsort for the
 * dozen entries at most that a detail has. Equal keys make the caller give up, so their
 * order does not matter. */
static void sort_entries(struct entry *e, int n)
{
	for (int i = 1; i < n; i++) {
		struct entry x = e[i];
		int j = i;

		for (; j > 0 && strcmp(e[j - 1].key, x.key) > 0; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

/* The entries of fmt (detailv's letters); their count, or -1 when there are too many. */
static int entries_of(const char *fmt, va_list ap, struct entry *e)
{
	int n = 0;

	for (; *fmt; fmt++) {
		struct entry x = {0};

		if (n == DETAIL_KEYS_MAX)
			return -1;
		if (*fmt == 'a') {
			x.key = "attempt_id";
			x.type = 'a';
			x.v = va_arg(ap, int64_t);
			x.attempt = va_arg(ap, int);
			e[n++] = x;
			continue;
		}
		x.key = va_arg(ap, const char *);
		if (*fmt == 's' || *fmt == 'S') {
			x.type = 's';
			x.str = va_arg(ap, const char *);
			x.max = (size_t)va_arg(ap, int);
			if (*fmt == 'S' && (!x.str || !*x.str))
				continue;
			x.str = x.str ? x.str : "";
		} else if (*fmt == 'b') {
			x.type = 'b';
			x.v = va_arg(ap, int);
		} else {
			x.v = va_arg(ap, int64_t);
			x.type = *fmt == 't' ? 't' : 'i';
			if (*fmt != 't' && *fmt != 'i' && x.v < 0)
				continue;
		}
		e[n++] = x;
	}
	return n;
}

static void put_value(struct out *o, const struct entry *x)
{
	char num[WQ_TIME_BUFSZ + 48];
	size_t k;

	switch (x->type) {
	case 'a': /* "<task id>.<attempt>" */
		num[0] = '"';
		k = 1 + int_text(x->v, num + 1);
		num[k++] = '.';
		k += int_text(x->attempt, num + k);
		num[k++] = '"';
		put(o, num, k);
		break;
	case 's':
		put_string(o, x->str, x->max);
		break;
	case 'b':
		put(o, x->v ? "true" : "false", x->v ? 4 : 5);
		break;
	case 't':
		put_string(o, wq_time_format(x->v, num), sizeof num);
		break;
	default:
		put(o, num, int_text(x->v, num));
	}
}

int wq__detail_fast(char *buf, size_t sz, const char *fmt, va_list ap)
{
	struct entry e[DETAIL_KEYS_MAX];
	struct out o = {buf, 0, sz < WQ__DETAIL_MAX + 1 ? sz : WQ__DETAIL_MAX + 1, 0};
	int n = entries_of(fmt, ap, e);

	if (n < 0)
		return -1;
	sort_entries(e, n);
	put(&o, "{", 1);
	for (int i = 0; i < n; i++) {
		if (i > 0 && strcmp(e[i - 1].key, e[i].key) == 0)
			return -1; /* detailv keeps the last one: its path decides */
		if (i > 0)
			put(&o, ",", 1);
		put_string(&o, e[i].key, (size_t)-1);
		put(&o, ":", 1);
		put_value(&o, &e[i]);
	}
	put(&o, "}", 1);
	if (o.full) /* longer than WQ__DETAIL_MAX: wq__detail_text cuts its free text */
		return -1;
	buf[o.n] = '\0';
	return (int)o.n;
}

#define PUT_LIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* ",\"<key>\":<v>" as an 'i' entry (kept when negative, as entries_of keeps it). */
static void put_int_field(struct out *o, const char *key_lit, size_t key_len, int64_t v)
{
	char num[24];

	put(o, key_lit, key_len);
	put(o, num, int_text(v, num));
}
#define PUT_INT(o, lit, v) put_int_field((o), (lit), sizeof(lit) - 1, (v))

/* ACCEPTED_FIELDS(t) (op.h) without the format: the nine keys in their strcmp order,
 * written in that order, the values as put_value writes them; no sort, no va_list (a
 * third of wq__detail_fast's cost for the event every new task has). tests/unit/
 * test_detail.c checks it against wq__detail_fastf and the jansson path. */
int wq__detail_accepted(char *buf, size_t sz, const struct wq__new_task *t)
{
	char num[WQ_TIME_BUFSZ + 48];
	struct out o = {buf, 0, sz < WQ__DETAIL_MAX + 1 ? sz : WQ__DETAIL_MAX + 1, 0};

	PUT_LIT(&o, "{\"due_at\":");
	put_string(&o, wq_time_format(t->due_at, num), sizeof num);
	PUT_LIT(&o, ",\"fingerprint\":");
	put_string(&o, wq__nz(t->fingerprint), WQ_SHA256_HEX - 1);
	if (t->key)
		PUT_LIT(&o, ",\"keyed\":true,\"kind\":");
	else
		PUT_LIT(&o, ",\"keyed\":false,\"kind\":");
	put_string(&o, wq__nz(t->kind), WQ_KIND_MAX);
	PUT_INT(&o, ",\"max_attempts\":", (int64_t)t->max_attempts);
	PUT_LIT(&o, ",\"payload_sha256\":");
	put_string(&o, wq__nz(t->payload_sha256), WQ_SHA256_HEX - 1);
	PUT_INT(&o, ",\"payload_size\":", (int64_t)t->payload_len);
	PUT_INT(&o, ",\"payload_version\":", (int64_t)t->payload_version);
	PUT_INT(&o, ",\"priority\":", (int64_t)t->priority);
	PUT_LIT(&o, "}");
	if (o.full)
		return -1;
	buf[o.n] = '\0';
	return (int)o.n;
}

int wq__detail_fastf(char *buf, size_t sz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = wq__detail_fast(buf, sz, fmt, ap);
	va_end(ap);
	return n;
}
