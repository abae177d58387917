/* wave5 drain: an event detail written straight from wq__eventf's arguments
 * (op_detail.c) is the same text as the jansson path (detailv + wq__detail_text) makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/op.h"

/* Both paths for one argument list: the same text, or (want_fast 0) the fast one declines. */
#define SAME(want_fast, fmt, ...)                                                          \
	do {                                                                               \
		char buf_[WQ__DETAIL_MAX + 1];                                             \
		wq_error e_;                                                               \
		json_t *d_ = wq__detailf(&e_, fmt, __VA_ARGS__);                           \
		char *slow_ = d_ ? wq__detail_text(d_) : NULL;                             \
		int n_ = wq__detail_fastf(buf_, sizeof buf_, fmt, __VA_ARGS__);                        \
		assert_non_null(slow_);                                                    \
		if (want_fast) {                                                           \
			assert_true(n_ >= 0);                                              \
			assert_string_equal(buf_, slow_);                                  \
			assert_int_equal((size_t)n_, strlen(slow_));                       \
		} else {                                                                   \
			assert_int_equal(n_, -1);                                          \
		}                                                                          \
		free(slow_);                                                               \
		json_decref(d_);                                                           \
	} while (0)

static void the_drain_events(void **state)
{
	(void)state;
	SAME(1, "as", (int64_t)42, 1, "instance", "host-1234-abcdef", WQ_NAME_MAX);
	SAME(1, "a", (int64_t)42, 3);
	SAME(1, "ab", (int64_t)42, 3, "in_process", 1);
	SAME(1, "aiSSSS", (int64_t)7, 2, "result_size", (int64_t)0, "result_sha256",
	     (const char *)NULL, WQ_SHA256_HEX - 1, "outcome", (const char *)NULL, WQ_REASON_MAX,
	     "effect", "", WQ_EFFECT_NAME_MAX, "handler_outcome", (const char *)NULL,
	     WQ_REASON_MAX);
	SAME(1, "asitSS", (int64_t)9, 1, "reason", "handler-failed", WQ_REASON_MAX,
	     "exit_status", (int64_t)1, "retry_at", (int64_t)1700000000123456, "effect",
	     "charge", WQ_EFFECT_NAME_MAX, "handler_outcome", "", WQ_REASON_MAX);
}

static void escapes_cuts_and_omissions(void **state)
{
	(void)state;
	/* quotes, backslashes, every control character, DEL, UTF-8 kept, invalid bytes */
	SAME(1, "ss", "a", "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f end", 100, "b",
	     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xff\xc3 x", 100);
	/* cut at max bytes, on a character boundary */
	SAME(1, "s", "r", "\xc3\xa9\xc3\xa9\xc3\xa9", 5);
	SAME(1, "s", "r", "abcdef", 0);
	/* 'S' empty and NULL left out; 's' NULL is ""; 'I' negative left out, 'i' kept */
	SAME(1, "SsIi", "x", "", 10, "y", (const char *)NULL, 10, "n", (int64_t)-1, "m",
	     (int64_t)-5);
	SAME(1, "bb", "t", 1, "f", 0);
	SAME(1, "t", "at", (int64_t)0);
	/* keys in strcmp order whatever the order given */
	SAME(1, "iiia", "zeta", (int64_t)1, "Alpha", (int64_t)2, "attempt", (int64_t)3,
	     (int64_t)5, 1);
}

/* wave6 sqcpu: plain runs copied at once (cut inside a run and at its end, runs broken
 * by escapes and UTF-8), integers written by hand (zero, negatives, the int64 limits),
 * the accepted event's nine keys, times of many years. */
static void runs_integers_and_times(void **state)
{
	static const char hex[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const int64_t ints[] = {0, 1, -1, 9, 10, -10, 99, 100, 123456789,
				       INT64_C(-1234567890123), INT64_MAX, INT64_MIN};
	(void)state;
	for (int max = 0; max < 12; max++)
		SAME(1, "s", "r", "abc\"de\xc3\xa9" "fg\nhij", max);
	SAME(1, "s", "r", "plain run then \x7f" " and \xff" " and \\ end", 64);
	for (int c = 1; c < 256; c++) { /* every byte, alone and inside a run */
		char one[8] = {'a', 'b', (char)c, 'c', '\0'};

		SAME(1, "s", "r", one, 100);
		SAME(1, "s", "r", one + 2, 100);
	}
	for (int c = 1; c < 256; c++) /* issue 11: runs taken 8 bytes a step, any byte in */
		for (int at = 0; at < 19; at++) {
			char run[21];

			memset(run, 'a', 20);
			run[20] = '\0';
			run[at] = (char)c;
			SAME(1, "s", "r", run, 100);
			SAME(1, "s", "r", run, at + 1);
			SAME(1, "s", "r", run + at, 9);
		}
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
		SAME(1, "i", "v", ints[i]);
		SAME(1, "I", "v", ints[i]);
		if (ints[i] >= INT32_MIN && ints[i] <= INT32_MAX)
			SAME(1, "a", ints[i], (int)ints[i]);
		SAME(1, "a", ints[i], 1);
	}
	SAME(1, "sitisiisb", "kind", "bench-w1b", WQ_KIND_MAX, "priority", (int64_t)0,
	     "due_at", INT64_C(1796032800123456), "payload_size", (int64_t)7, "payload_sha256",
	     hex, WQ_SHA256_HEX - 1, "payload_version", (int64_t)1, "max_attempts",
	     (int64_t)3, "fingerprint", hex, WQ_SHA256_HEX - 1, "keyed", 0);
	for (int64_t t = INT64_C(-62135596800000000); t < INT64_C(253402300800000000);
	     t += INT64_C(86400000000) * 997 + 3600123457)
		SAME(1, "t", "at", t);
}

static void declines_what_jansson_must_write(void **state)
{
	char big[600];

	(void)state;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	/* too long: wq__detail_text cuts the free text */
	SAME(0, "as", (int64_t)1, 1, "reason_detail", big, 1000);
	/* a key twice: detailv keeps the last */
	SAME(0, "ii", "k", (int64_t)1, "k", (int64_t)2);
	/* exactly at the limit still fits */
	big[WQ__DETAIL_MAX - 8] = '\0'; /* {"r":"..."} is 8 bytes around the text */
	SAME(1, "s", "r", big, 1000);
}

/* issue 11: the accepted event's writer without a format (wq__detail_accepted) against
 * wq__detail_fastf of ACCEPTED_FIELDS and the jansson path, on edge values; with small
 * buffers both decline alike. */
static void accepted_same(const struct wq__new_task *t)
{
	char got[WQ__DETAIL_MAX + 1], want[WQ__DETAIL_MAX + 1];
	wq_error e;
	json_t *d = wq__detailf(&e, ACCEPTED_FIELDS(t));
	char *slow = d ? wq__detail_text(d) : NULL;
	int n = wq__detail_accepted(got, sizeof got, t);
	int m = wq__detail_fastf(want, sizeof want, ACCEPTED_FIELDS(t));

	assert_non_null(slow);
	assert_int_equal(n, m);
	if (m >= 0) {
		assert_string_equal(got, want);
		assert_string_equal(got, slow);
	}
	for (size_t sz = 1; m >= 0 && sz <= (size_t)m + 1; sz += 7) {
		n = wq__detail_accepted(got, sz, t);
		assert_int_equal(n, wq__detail_fastf(want, sz, ACCEPTED_FIELDS(t)));
		if (n >= 0)
			assert_string_equal(got, want);
	}
	free(slow);
	json_decref(d);
}

static void accepted_without_format(void **state)
{
	static const char hex[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const char *kinds[] = {"bench-w1b", "", "q\"b\\s\x01\x7f\xc3\xa9\xff end",
				      "a-kind-name-that-is-rather-long-0123456789-0123456789-"
				      "0123456789-0123456789-0123456789-0123456789-0123456789-"
				      "0123456789-0123456789-0123456789-0123456789-0123456789-"
				      "0123456789-0123456789-0123456789-0123456789-0123456789"};
	static const int64_t ints[] = {0, 1, -1, 3, 100, INT32_MAX, INT32_MIN};
	static const int64_t times[] = {0, INT64_C(1796032800123456), -1,
					INT64_C(-62135596800000000), INT64_C(253402300799999999)};
	static const char *digests[] = {hex, "", "not\"hex\n", NULL};
	struct wq__new_task t;

	(void)state;
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
		for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
			for (size_t d = 0; d < sizeof digests / sizeof *digests; d++) {
				memset(&t, 0, sizeof t);
				t.kind = kinds[k];
				t.priority = (int)ints[i];
				t.max_attempts = (int)ints[(i + 1) % 7];
				t.payload_version = (int)ints[(i + 2) % 7];
				t.payload_len = (size_t)(ints[i] < 0 ? 0 : ints[i]);
				t.due_at = times[(k + i) % 5];
				t.payload_sha256 = digests[d];
				t.fingerprint = digests[(d + 1) % 4];
				t.key = (i + d) % 2 ? "key-1" : NULL;
				accepted_same(&t);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_drain_events),
		cmocka_unit_test(escapes_cuts_and_omissions),
		cmocka_unit_test(declines_what_jansson_must_write),
		cmocka_unit_test(runs_integers_and_times),
		cmocka_unit_test(accepted_without_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
