/* time.c — the clock, durations ("1h30m") and RFC 3339 times, all in microseconds. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef WQ_FAILPOINTS
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The test clock (failpoint.h): an offset added to every reading, so that tests move
 * time (leases, backoff, retention, schedules) without sleeping and give two processes
 * clocks that disagree. Loaded from $WAKEQ_TEST_CLOCK_OFFSET on the first reading. */
static atomic_llong clock_offset;
static atomic_int clock_loaded;

static void clock_load(void)
{
	const char *env;
	int64_t us = 0;
	wq_error e;

	/* loaded already: no getenv (it walks the environment: ~290 instructions, on every
	 * reading of the clock) */
	if (atomic_load(&clock_loaded))
		return;
	env = getenv("WAKEQ_TEST_CLOCK_OFFSET");
	if (atomic_exchange(&clock_loaded, 1))
		return;
	if (!env || !env[0])
		return;
	if (wq_duration_parse(env + (env[0] == '-'), &us, &e) != WQ_OK) {
		fprintf(stderr, "wakeq: invalid WAKEQ_TEST_CLOCK_OFFSET: %s\n", e.message);
		_exit(70);
	}
	atomic_store(&clock_offset, env[0] == '-' ? -us : us);
}

void wq__clock_set_offset(int64_t us)
{
	atomic_store(&clock_loaded, 1);
	atomic_store(&clock_offset, us);
}

int64_t wq__clock_offset(void)
{
	clock_load();
	return atomic_load(&clock_offset);
}
#endif

int64_t wq_now(void)
{
	struct timespec ts;
	int64_t us;

	clock_gettime(CLOCK_REALTIME, &ts);
	us = (int64_t)ts.tv_sec * WQ__US_PER_S + ts.tv_nsec / 1000;
#ifdef WQ_FAILPOINTS
	us += wq__clock_offset();
#endif
	return us;
}

struct unit {
	const char *name;
	int64_t us;
};

/* Longest names first so "ms" is not read as "m" followed by garbage. */
static const struct unit units[] = {
	{"ms", WQ__US_PER_MS},	     {"us", 1},
	{"s", WQ__US_PER_S},	     {"m", 60 * WQ__US_PER_S},
	{"h", 3600 * WQ__US_PER_S}, {"d", 86400 * WQ__US_PER_S},
};

static const struct unit *unit_at(const char *p, size_t *len)
{
	for (size_t i = 0; i < WQ__ARRAY_LEN(units); i++) {
		size_t n = strlen(units[i].name);
		if (strncmp(p, units[i].name, n) == 0 && !isalpha((unsigned char)p[n])) {
			*len = n;
			return &units[i];
		}
	}
	return NULL;
}

wq_rc wq_duration_parse(const char *text, int64_t *out_us, wq_error *err)
{
	const char *p = text;
	int64_t total = 0;

	if (!text || !*text)
		return wq__err(err, WQ_EINVAL, "empty duration (expected e.g. 500ms, 30s, 5m, 2h, 1d)");
	if (strcmp(text, "0") == 0) {
		*out_us = 0;
		return WQ_OK;
	}
	while (*p) {
		int64_t n = 0;
		size_t ulen;
		const struct unit *u;

		if (!isdigit((unsigned char)*p))
			goto bad;
		while (isdigit((unsigned char)*p)) {
			if (n > (INT64_MAX - 9) / 10)
				goto overflow;
			n = n * 10 + (*p++ - '0');
		}
		u = unit_at(p, &ulen);
		if (!u)
			goto bad;
		p += ulen;
		if (n > INT64_MAX / u->us || total > INT64_MAX - n * u->us)
			goto overflow;
		total += n * u->us;
	}
	*out_us = total;
	return WQ_OK;
bad:
	return wq__err(err, WQ_EINVAL,
		       "invalid duration '%s' (expected a number and a unit: ms, s, m, h or d, "
		       "e.g. 500ms, 30s, 1h30m)",
		       text);
overflow:
	return wq__err(err, WQ_EINVAL, "duration '%s' is too large", text);
}

char *wq_duration_format(int64_t us, char *buf, size_t bufsz)
{
	static const struct unit desc[] = {
		{"d", 86400 * WQ__US_PER_S}, {"h", 3600 * WQ__US_PER_S}, {"m", 60 * WQ__US_PER_S},
		{"s", WQ__US_PER_S},	     {"ms", WQ__US_PER_MS},	  {"us", 1},
	};
	size_t off = 0;

	if (bufsz == 0)
		return buf;
	snprintf(buf, bufsz, "0s");
	for (size_t i = 0; i < WQ__ARRAY_LEN(desc) && us > 0; i++) {
		if (us < desc[i].us)
			continue;
		int w = snprintf(buf + off, bufsz - off, "%lld%s", (long long)(us / desc[i].us),
				 desc[i].name);
		if (w < 0 || (size_t)w >= bufsz - off)
			break;
		off += (size_t)w;
		us %= desc[i].us;
	}
	return buf;
}

/* Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dim[m - 1];
}

static int digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *set)
{
	if (!**p || !strchr(set, **p))
		return -1;
	(*p)++;
	return 0;
}

wq_rc wq_time_parse(const char *text, int64_t *out_us, wq_error *err)
{
	const char *p = text;
	int y, mo, d, h, mi, s, oh = 0, om = 0, sign = 1;
	int64_t frac = 0;

	if (!text)
		goto bad;
	if (digits(&p, 4, &y) || expect(&p, "-") || digits(&p, 2, &mo) || expect(&p, "-") ||
	    digits(&p, 2, &d) || expect(&p, "Tt ") || digits(&p, 2, &h) || expect(&p, ":") ||
	    digits(&p, 2, &mi) || expect(&p, ":") || digits(&p, 2, &s))
		goto bad;
	if (*p == '.') {
		int64_t scale = WQ__US_PER_S;
		p++;
		if (!isdigit((unsigned char)*p))
			goto bad;
		while (isdigit((unsigned char)*p)) {
			scale /= 10;
			frac += (*p++ - '0') * scale; /* digits past microseconds add 0 */
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (digits(&p, 2, &oh) || expect(&p, ":") || digits(&p, 2, &om) || oh > 23 || om > 59)
			goto bad;
	} else {
		goto bad;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    s > 60)
		goto bad;
	if (s == 60)
		s = 59; /* a leap second reads as the second before it */
	int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
		       mi * 60 + s - sign * (oh * 3600 + om * 60);
	/* An offset may carry a time past year 9999 or before year 0 in UTC, which
	 * wq_time_format cannot write back as RFC 3339 (found by tests/fuzz/fuzz_time). */
	if (secs < days_from_civil(0, 1, 1) * 86400 || secs >= days_from_civil(10000, 1, 1) * 86400)
		goto bad;
	*out_us = secs * WQ__US_PER_S + frac;
	return WQ_OK;
bad:
	return wq__err(err, WQ_EINVAL,
		       "invalid time '%s' (expected RFC 3339, e.g. 2026-11-30T10:00:00Z)",
		       text ? text : "");
}

/* The seconds and milliseconds of us (floor division: a time before 1970 keeps a
 * millisecond part in 0..999). */
static void split_ms(int64_t us, int64_t *secs, unsigned *ms)
{
	int64_t rem = us % WQ__US_PER_S;

	*secs = us / WQ__US_PER_S;
	if (rem < 0) {
		rem += WQ__US_PER_S;
		*secs -= 1;
	}
	*ms = (unsigned)(rem / WQ__US_PER_MS) % 1000u;
}

char *wq__time_format_libc(int64_t us, char *buf)
{
	int64_t secs;
	unsigned ms;
	struct tm tm;
	time_t t;

	split_ms(us, &secs, &ms);
	t = (time_t)secs;
	gmtime_r(&t, &tm);
	size_t n = strftime(buf, WQ_TIME_BUFSZ - 6, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, WQ_TIME_BUFSZ - n, ".%03uZ", ms);
	return buf;
}

/* n decimal digits of v, zero-padded, at p. */
static char *put_digits(char *p, unsigned v, int n)
{
	for (int i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

/* 1000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: within them every field has a fixed
 * width, which the hand-written path below relies on. */
#define FAST_MIN_S (-30610224000LL)
#define FAST_MAX_S 253402300799LL

/* Byte for byte what wq__time_format_libc gives (tests/unit/test_time.c compares them
 * over many values): for years 1000-9999 written here (civil_from_days, Howard
 * Hinnant's algorithm, the inverse of days_from_civil above), without gmtime_r and
 * strftime, which cost ~2,000 instructions a call in every event detail that holds a
 * time; other years through the C library. */
char *wq_time_format(int64_t us, char *buf)
{
	int64_t secs, days, z, era;
	unsigned ms, sod, doe, yoe, doy, mp, d, m;
	int64_t y;
	char *p = buf;

	split_ms(us, &secs, &ms);
	if (secs < FAST_MIN_S || secs > FAST_MAX_S)
		return wq__time_format_libc(us, buf);
	days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	sod = (unsigned)(secs - days * 86400);
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	p = put_digits(p, (unsigned)y, 4);
	*p++ = '-';
	p = put_digits(p, m, 2);
	*p++ = '-';
	p = put_digits(p, d, 2);
	*p++ = 'T';
	p = put_digits(p, sod / 3600, 2);
	*p++ = ':';
	p = put_digits(p, sod / 60 % 60, 2);
	*p++ = ':';
	p = put_digits(p, sod % 60, 2);
	*p++ = '.';
	p = put_digits(p, ms, 3);
	*p++ = 'Z';
	*p = '\0';
	return buf;
}
