/* Durations and RFC 3339 times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "internal.h"
#include "wakeq.h"

static int64_t dur(const char *s)
{
	int64_t v = -1;
	wq_error e;
	assert_int_equal(wq_duration_parse(s, &v, &e), WQ_OK);
	return v;
}

static void durations(void **state)
{
	(void)state;
	assert_int_equal(dur("500ms"), 500000);
	assert_int_equal(dur("30s"), 30000000);
	assert_int_equal(dur("5m"), 300000000);
	assert_int_equal(dur("2h"), INT64_C(7200000000));
	assert_int_equal(dur("1d"), INT64_C(86400000000));
	assert_int_equal(dur("1h30m"), INT64_C(5400000000));
	assert_int_equal(dur("0"), 0);
}

static void bad_durations(void **state)
{
	const char *bad[] = {"", "5", "-5s", "5x", "s", "1.5s", "5 s", "99999999999999999999s",
			     "9999999999999d", "5ms3"};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int64_t v = 42;
		wq_error e = {0};
		assert_int_equal(wq_duration_parse(bad[i], &v, &e), WQ_EINVAL);
		assert_int_equal(v, 42); /* out-parameter untouched on failure */
		assert_int_equal(e.code, WQ_EINVAL);
		assert_non_null(strstr(e.message, "duration"));
	}
}

static void duration_roundtrip(void **state)
{
	char buf[64];
	(void)state;
	assert_string_equal(wq_duration_format(dur("1h30m"), buf, sizeof buf), "1h30m");
	assert_string_equal(wq_duration_format(dur("250ms"), buf, sizeof buf), "250ms");
	assert_string_equal(wq_duration_format(0, buf, sizeof buf), "0s");
}

static void times(void **state)
{
	int64_t t;
	char buf[WQ_TIME_BUFSZ];
	(void)state;
	assert_int_equal(wq_time_parse("1970-01-01T00:00:00Z", &t, NULL), WQ_OK);
	assert_int_equal(t, 0);
	assert_int_equal(wq_time_parse("2026-11-30T10:00:00Z", &t, NULL), WQ_OK);
	assert_int_equal(t, INT64_C(1796032800) * 1000000);
	assert_string_equal(wq_time_format(t, buf), "2026-11-30T10:00:00.000Z");
	assert_int_equal(wq_time_parse("2026-11-30T12:00:00.250+02:00", &t, NULL), WQ_OK);
	assert_string_equal(wq_time_format(t, buf), "2026-11-30T10:00:00.250Z");
	assert_int_equal(wq_time_parse("2024-02-29T00:00:00-00:30", &t, NULL), WQ_OK);
	assert_string_equal(wq_time_format(t, buf), "2024-02-29T00:30:00.000Z");
}

/* wave6 sqcpu: wq_time_format's hand-written path (years 1000-9999) gives what gmtime_r
 * and strftime give (wq__time_format_libc), byte for byte: every day boundary and leap
 * rule near 1000, 1600, 1900, 1970, 2000, 2100 and 9999, a stride over the whole range
 * with odd seconds and milliseconds, negative times' milliseconds, and the years
 * outside the range (the library path itself). */
static void same_as_libc(int64_t us)
{
	char a[WQ_TIME_BUFSZ], b[WQ_TIME_BUFSZ];

	memset(a, 'A', sizeof a);
	memset(b, 'B', sizeof b);
	assert_string_equal(wq_time_format(us, a), wq__time_format_libc(us, b));
}

static void format_against_libc(void **state)
{
	static const int64_t years_at[] = {
		INT64_C(-30610224000), INT64_C(-11676096000), INT64_C(-2208988800), 0,
		INT64_C(946684800),    INT64_C(951782400),    INT64_C(4102444800),
		INT64_C(253402300799), INT64_C(-62135596800), INT64_C(253402300800)};
	const int64_t s = INT64_C(1000000), day = INT64_C(86400) * s;
	(void)state;
	for (size_t i = 0; i < sizeof years_at / sizeof *years_at; i++)
		for (int64_t d = -400 * day; d <= 400 * day; d += day)
			for (int64_t off = -1001; off <= 1001; off += 143)
				same_as_libc(years_at[i] * s + d + off * 1000 - 1);
	for (int64_t t = INT64_C(-30610224000) * s - 3 * day; t < INT64_C(253402300800) * s;
	     t += INT64_C(7777777777777) + 123457)
		same_as_libc(t);
	for (int64_t t = -5 * s; t <= 5 * s; t += 999)
		same_as_libc(t);
}

static void bad_times(void **state)
{
	const char *bad[] = {"", "2026-11-30", "2026-11-30T10:00:00", "2026-13-01T00:00:00Z",
			     "2025-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T10:00Z",
			     "tomorrow", "2026-11-30T10:00:00Zjunk", "2026-11-30T10:00:00.Z"};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int64_t v = 7;
		wq_error e;
		assert_int_equal(wq_time_parse(bad[i], &v, &e), WQ_EINVAL);
		assert_int_equal(v, 7);
		assert_non_null(strstr(e.message, "RFC 3339"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),	 cmocka_unit_test(bad_durations),
		cmocka_unit_test(duration_roundtrip), cmocka_unit_test(times),
		cmocka_unit_test(bad_times),	 cmocka_unit_test(format_against_libc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
