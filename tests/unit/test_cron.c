/* Cron expressions and next slots (issue 12): parse errors per field, steps, names,
 * Feb 29, DST transitions in Europe/Berlin and America/New_York, --every. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "wakeq.h"

static int64_t t(const char *rfc3339)
{
	int64_t v;
	assert_int_equal(wq_time_parse(rfc3339, &v, NULL), WQ_OK);
	return v;
}

static const char *fmt(int64_t us, char buf[WQ_TIME_BUFSZ])
{
	char *dot;
	wq_time_format(us, buf);
	/* every slot is a whole minute: compare without the ".000" */
	if ((dot = strstr(buf, ".000Z")) != NULL)
		memmove(dot, dot + 4, 2);
	return buf;
}

/* The next slot after `after` as RFC 3339 UTC. */
static const char *next(const char *expr, const char *zone, const char *after,
			char buf[WQ_TIME_BUFSZ])
{
	struct wq__cron c;
	wq_error e = {0};
	int64_t n = 0;
	if (wq__cron_parse(expr, &c, &e) != WQ_OK)
		fail_msg("%s: %s", expr, e.message);
	assert_int_equal(wq__cron_next(&c, zone, t(after), &n, &e), WQ_OK);
	return fmt(n, buf);
}

static void parse_errors(void **state)
{
	static const struct {
		const char *expr, *msg;
	} bad[] = {
		{"60 * * * *", "cron: minute: 60 is out of range 0-59"},
		{"* 24 * * *", "cron: hour: 24 is out of range 0-23"},
		{"0 0 32 * *", "cron: day-of-month: 32 is out of range 1-31"},
		{"0 0 0 * *", "cron: day-of-month: 0 is out of range 1-31"},
		{"0 0 * 13 *", "cron: month: 13 is out of range 1-12"},
		{"0 0 * * 8", "cron: day-of-week: 8 is out of range 0-7"},
		{"0 0 * FOO *", "cron: month: unknown name"},
		{"0 0 * * XYZ", "cron: day-of-week: unknown name"},
		{"*/0 * * * *", "cron: minute: step 0"},
		{"5-2 * * * *", "cron: minute: range 5-2 runs backwards"},
		{"* * * *", "cron: day-of-week: missing"},
		{"* * * * * *", "cron: more than 5 fields"},
		{"1,,2 * * * *", "cron: minute: empty list item"},
		{"a * * * *", "cron: minute: expected a number"},
		{"0 0 30 2 *", "cron: day-of-month: no listed month"},
		{"9999 * * * *", "cron: minute: number too long"},
		{"", "cron: minute: missing"},
		{"0 0 * * 7/2", "cron: day-of-week: '7/2' selects no value"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct wq__cron c;
		wq_error e = {0};
		memset(&c, 0xab, sizeof c);
		assert_int_equal(wq__cron_parse(bad[i].expr, &c, &e), WQ_EINVAL);
		if (strncmp(e.message, bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("'%s': got '%s', want '%s'", bad[i].expr, e.message, bad[i].msg);
	}
}

static void fuzz_safe(void **state)
{
	char expr[300];
	struct wq__cron c;
	(void)state;
	srand(12);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)rand() % (sizeof expr - 1);
		for (size_t j = 0; j < n; j++)
			expr[j] = "0123456789*/,- \tJANMONsun"[rand() % 25];
		expr[n] = '\0';
		(void)wq__cron_parse(expr, &c, NULL);
	}
}

static void steps(void **state)
{
	struct wq__cron c;
	char b[WQ_TIME_BUFSZ];
	(void)state;
	assert_int_equal(wq__cron_parse("*/7 * * * *", &c, NULL), WQ_OK);
	/* 0,7,...,56: after :56 comes :00 of the next hour */
	assert_int_equal(c.minute, 0x0102040810204081ULL & ((1ULL << 60) - 1));
	assert_string_equal(next("*/7 * * * *", NULL, "2026-01-01T10:56:00Z", b),
			    "2026-01-01T11:00:00Z");
	assert_string_equal(next("*/7 * * * *", NULL, "2026-01-01T10:00:00Z", b),
			    "2026-01-01T10:07:00Z");
	assert_string_equal(next("10-30/10 * * * *", NULL, "2026-01-01T10:30:00Z", b),
			    "2026-01-01T11:10:00Z");
	assert_string_equal(next("0 9-17/4 * * *", NULL, "2026-01-01T13:00:00Z", b),
			    "2026-01-01T17:00:00Z");
	assert_string_equal(next("5,35 * * * *", NULL, "2026-01-01T10:05:00Z", b),
			    "2026-01-01T10:35:00Z");
	/* seconds within the current minute: the next whole minute */
	assert_string_equal(next("* * * * *", NULL, "2026-01-01T10:05:30Z", b),
			    "2026-01-01T10:06:00Z");
}

static void feb29(void **state)
{
	char b[WQ_TIME_BUFSZ];
	(void)state;
	assert_string_equal(next("0 12 29 2 *", NULL, "2025-03-01T00:00:00Z", b),
			    "2028-02-29T12:00:00Z");
	assert_string_equal(next("0 12 29 2 *", NULL, "2028-02-29T12:00:00Z", b),
			    "2032-02-29T12:00:00Z");
	/* 2100 is not a leap year */
	assert_string_equal(next("0 0 29 FEB *", NULL, "2096-03-01T00:00:00Z", b),
			    "2104-02-29T00:00:00Z");
}

static void day_names(void **state)
{
	struct wq__cron a, b7, c;
	char b[WQ_TIME_BUFSZ];
	(void)state;
	assert_int_equal(wq__cron_parse("0 0 * * sun", &a, NULL), WQ_OK);
	assert_int_equal(wq__cron_parse("0 0 * * 7", &b7, NULL), WQ_OK);
	assert_int_equal(wq__cron_parse("0 0 * * 0", &c, NULL), WQ_OK);
	assert_int_equal(a.dow, 1);
	assert_int_equal(b7.dow, 1);
	assert_int_equal(c.dow, 1);
	assert_int_equal(wq__cron_parse("0 0 * jan-Mar Mon-FRI", &a, NULL), WQ_OK);
	assert_int_equal(a.dow, 0x3e);
	assert_int_equal(a.month, 0xe);
	/* 2026-01-01 is a Thursday; the next Saturday 2026-01-03 */
	assert_string_equal(next("30 8 * * SAT", NULL, "2026-01-01T00:00:00Z", b),
			    "2026-01-03T08:30:00Z");
	assert_string_equal(next("0 0 * * 5-7", NULL, "2026-01-02T00:00:00Z", b),
			    "2026-01-03T00:00:00Z");
	/* both day fields restricted: either matches (the 13th, or a Friday) */
	assert_string_equal(next("0 0 13 * FRI", NULL, "2026-01-03T00:00:00Z", b),
			    "2026-01-09T00:00:00Z");
	assert_string_equal(next("0 0 13 * FRI", NULL, "2026-01-09T00:00:00Z", b),
			    "2026-01-13T00:00:00Z");
	/* `*` in day-of-month: only the weekday counts */
	assert_string_equal(next("0 0 * * MON", NULL, "2026-01-01T00:00:00Z", b),
			    "2026-01-05T00:00:00Z");
}

static void zones(void **state)
{
	char b[WQ_TIME_BUFSZ];
	wq_error e = {0};
	struct wq__cron c;
	int64_t n;
	(void)state;
	assert_string_equal(next("0 9 * * *", "Europe/Berlin", "2026-01-10T00:00:00Z", b),
			    "2026-01-10T08:00:00Z");
	assert_string_equal(next("0 9 * * *", "Europe/Berlin", "2026-07-10T00:00:00Z", b),
			    "2026-07-10T07:00:00Z");
	assert_int_equal(wq__cron_parse("0 9 * * *", &c, NULL), WQ_OK);
	assert_int_equal(wq__cron_next(&c, "Mars/Olympus", 0, &n, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "time zone"));
	assert_int_equal(wq__cron_next(&c, "../etc/passwd", 0, &n, &e), WQ_EINVAL);
	assert_int_equal(wq__tz_check("America/New_York", NULL), WQ_OK);
	/* $TZ of the process is left as it was */
	setenv("TZ", "Asia/Tokyo", 1);
	(void)next("0 9 * * *", "Europe/Berlin", "2026-01-10T00:00:00Z", b);
	assert_string_equal(getenv("TZ"), "Asia/Tokyo");
	unsetenv("TZ");
	(void)next("0 9 * * *", "Europe/Berlin", "2026-01-10T00:00:00Z", b);
	assert_null(getenv("TZ"));
}

/* Spring forward: 02:30 does not exist that day; the daily 02:30 runs at 03:00, once. */
static void dst_spring_forward(void **state)
{
	char b[WQ_TIME_BUFSZ];
	(void)state;
	/* Berlin 2026-03-29: 02:00 CET → 03:00 CEST (01:00Z) */
	assert_string_equal(next("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", b),
			    "2026-03-29T01:00:00Z");
	assert_string_equal(next("30 2 * * *", "Europe/Berlin", "2026-03-29T01:00:00Z", b),
			    "2026-03-30T00:30:00Z");
	/* every minute of the skipped hour collapses onto one run at 03:00 */
	assert_string_equal(next("* 2 * * *", "Europe/Berlin", "2026-03-29T00:59:00Z", b),
			    "2026-03-29T01:00:00Z");
	assert_string_equal(next("* 2 * * *", "Europe/Berlin", "2026-03-29T01:00:00Z", b),
			    "2026-03-30T00:00:00Z");
	/* New York 2026-03-08: 02:00 EST → 03:00 EDT (07:00Z) */
	assert_string_equal(next("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", b),
			    "2026-03-08T07:00:00Z");
	assert_string_equal(next("30 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", b),
			    "2026-03-09T06:30:00Z");
}

/* Fall back: 01:30 happens twice; the daily 01:30 runs once, at the first. */
static void dst_fall_back(void **state)
{
	char b[WQ_TIME_BUFSZ];
	(void)state;
	/* New York 2026-11-01: 02:00 EDT → 01:00 EST (06:00Z) */
	assert_string_equal(next("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", b),
			    "2026-11-01T05:30:00Z");
	assert_string_equal(next("30 1 * * *", "America/New_York", "2026-11-01T05:30:00Z", b),
			    "2026-11-02T06:30:00Z");
	/* asked during the second 01:xx: the repeat is not a new slot */
	assert_string_equal(next("30 1 * * *", "America/New_York", "2026-11-01T06:10:00Z", b),
			    "2026-11-02T06:30:00Z");
	/* Berlin 2026-10-25: 03:00 CEST → 02:00 CET (01:00Z) */
	assert_string_equal(next("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", b),
			    "2026-10-25T00:30:00Z");
	assert_string_equal(next("30 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", b),
			    "2026-10-26T01:30:00Z");
	/* hourly across the repeated hour: 02:00 CEST, then 03:00 CET (the repeated 02:00
	 * runs once) */
	assert_string_equal(next("0 * * * *", "Europe/Berlin", "2026-10-24T23:30:00Z", b),
			    "2026-10-25T00:00:00Z");
	assert_string_equal(next("0 * * * *", "Europe/Berlin", "2026-10-25T00:00:00Z", b),
			    "2026-10-25T02:00:00Z");
}

static void every(void **state)
{
	(void)state;
	assert_int_equal(wq__every_next(1000, 500, 0), 1500);
	assert_int_equal(wq__every_next(1000, 500, 1000), 1500);
	assert_int_equal(wq__every_next(1000, 500, 1499), 1500);
	assert_int_equal(wq__every_next(1000, 500, 1500), 2000);
	assert_int_equal(wq__every_next(1000, 500, 9999), 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_errors),  cmocka_unit_test(fuzz_safe),
		cmocka_unit_test(steps),         cmocka_unit_test(feb29),
		cmocka_unit_test(day_names),     cmocka_unit_test(zones),
		cmocka_unit_test(dst_spring_forward), cmocka_unit_test(dst_fall_back),
		cmocka_unit_test(every),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
