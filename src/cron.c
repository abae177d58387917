/*
 * cron.c — 5-field cron expressions, time zones and the next slot (issue 12).
 *
 * The parser reads at most WQ__CRON_MAX bytes and every loop is bounded by the field's
 * range, so any input costs a bounded amount of work. The next-slot search walks local
 * calendar days (our own civil-date arithmetic, no time zone involved) and converts each
 * matching local minute to UTC with the zone's offsets (see cron.h for the machinery).
 */
#include "cron.h"
#include "internal.h"
#include "zone.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WQ__CRON_MAX 256
#define WQ__SEARCH_DAYS (29 * 366 + 2) /* a 28-year calendar cycle: every date meets
					   every weekday, Feb 29 included */

struct field_def {
	const char *name;
	int lo, hi;
	const char *const *names; /* 3-letter names for values lo.., or NULL */
};

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
					  "JUL", "AUG", "SEP", "OCT", "NOV", "DEC", NULL};
static const char *const dow_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT",
					NULL};

static const struct field_def fields[5] = {
	{"minute", 0, 59, NULL},
	{"hour", 0, 23, NULL},
	{"day-of-month", 1, 31, NULL},
	{"month", 1, 12, month_names},
	{"day-of-week", 0, 7, dow_names},
};

/* One value (number or name) at *p; advances *p. */
static wq_rc parse_value(const struct field_def *f, const char **p, int *out, wq_error *err)
{
	const char *s = *p;
	if (isdigit((unsigned char)*s)) {
		int v = 0, n = 0;
		while (isdigit((unsigned char)*s)) {
			if (++n > 3)
				return wq__err(err, WQ_EINVAL, "cron: %s: number too long", f->name);
			v = v * 10 + (*s++ - '0');
		}
		if (v < f->lo || v > f->hi)
			return wq__err(err, WQ_EINVAL, "cron: %s: %d is out of range %d-%d",
				       f->name, v, f->lo, f->hi);
		*out = v;
		*p = s;
		return WQ_OK;
	}
	if (f->names && isalpha((unsigned char)s[0]) && isalpha((unsigned char)s[1]) &&
	    isalpha((unsigned char)s[2]) && !isalpha((unsigned char)s[3])) {
		for (int i = 0; f->names[i]; i++) {
			if (strncasecmp(s, f->names[i], 3) == 0) {
				*out = f->lo + i;
				*p = s + 3;
				return WQ_OK;
			}
		}
		return wq__err(err, WQ_EINVAL, "cron: %s: unknown name '%.3s'", f->name, s);
	}
	return wq__err(err, WQ_EINVAL, "cron: %s: expected a number%s at '%.16s'", f->name,
		       f->names ? " or a name" : "", s);
}

/* One comma-separated field [s, s+len) into the bit set *bits. */
static wq_rc parse_field(const struct field_def *f, const char *s, size_t len, uint64_t *bits,
			 int *any, wq_error *err)
{
	char buf[WQ__CRON_MAX + 1];
	uint64_t set = 0;
	wq_rc rc;

	memcpy(buf, s, len);
	buf[len] = '\0';
	*any = buf[0] == '*';
	for (char *item = buf, *next; item; item = next) {
		int a, b, step = 1;
		const char *p = item;
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (*p == '\0')
			return wq__err(err, WQ_EINVAL, "cron: %s: empty list item", f->name);
		if (*p == '*') {
			a = f->lo;
			b = f->hi == 7 ? 6 : f->hi;
			p++;
		} else {
			if ((rc = parse_value(f, &p, &a, err)) != WQ_OK)
				return rc;
			b = a;
			if (*p == '-') {
				p++;
				if ((rc = parse_value(f, &p, &b, err)) != WQ_OK)
					return rc;
				if (b < a)
					return wq__err(err, WQ_EINVAL,
						       "cron: %s: range %d-%d runs backwards",
						       f->name, a, b);
			} else if (*p == '/') {
				b = f->hi == 7 ? 6 : f->hi; /* "a/n": from a to the end */
			}
		}
		if (*p == '/') {
			int n = 0;
			p++;
			if (!isdigit((unsigned char)*p))
				return wq__err(err, WQ_EINVAL, "cron: %s: step needs a number",
					       f->name);
			step = 0;
			while (isdigit((unsigned char)*p)) {
				if (++n > 3)
					return wq__err(err, WQ_EINVAL, "cron: %s: step too large",
						       f->name);
				step = step * 10 + (*p++ - '0');
			}
			if (step < 1 || step > f->hi)
				return wq__err(err, WQ_EINVAL, "cron: %s: step %d is out of range 1-%d",
					       f->name, step, f->hi);
		}
		if (*p != '\0')
			return wq__err(err, WQ_EINVAL, "cron: %s: unexpected '%.16s'", f->name, p);
		if (a > b) /* "7/2" in day-of-week: 7 lies past the end of a step's range */
			return wq__err(err, WQ_EINVAL, "cron: %s: '%.16s' selects no value", f->name,
				       item);
		for (int v = a; v <= b; v += step)
			set |= UINT64_C(1) << v;
	}
	*bits = set;
	return WQ_OK;
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int64_t y, int m)
{
	static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

wq_rc wq__cron_parse(const char *expr, struct wq__cron *out, wq_error *err)
{
	struct wq__cron c = {0};
	uint64_t bits[5];
	int any[5];
	const char *p = expr;
	wq_rc rc;

	if (!expr || strlen(expr) > WQ__CRON_MAX)
		return wq__err(err, WQ_EINVAL, "cron: expression missing or longer than %d bytes",
			       WQ__CRON_MAX);
	for (int i = 0; i < 5; i++) {
		const char *start;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return wq__err(err, WQ_EINVAL,
				       "cron: %s: missing (expected 5 fields: minute hour "
				       "day-of-month month day-of-week)", fields[i].name);
		start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if ((rc = parse_field(&fields[i], start, (size_t)(p - start), &bits[i], &any[i],
				      err)) != WQ_OK)
			return rc;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0')
		return wq__err(err, WQ_EINVAL, "cron: more than 5 fields at '%.16s'", p);

	c.minute = bits[0];
	c.hour = (uint32_t)bits[1];
	c.dom = (uint32_t)bits[2];
	c.month = (uint16_t)bits[3];
	c.dow = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f); /* 7 is Sunday too */
	c.dom_any = any[2];
	c.dow_any = any[4];

	/* When the day fields combine with AND (one is `*`), some listed month must have
	 * one of the listed days (Feb 29 counts), else the expression never matches. */
	if (c.dom_any || c.dow_any) {
		int ok = 0;
		for (int m = 1; m <= 12 && !ok; m++)
			for (int d = 1; d <= (m == 2 ? 29 : month_days(2001, m)) && !ok; d++)
				ok = (c.month >> m & 1) && (c.dom >> d & 1);
		if (!ok)
			return wq__err(err, WQ_EINVAL,
				       "cron: day-of-month: no listed month has such a day");
	}
	*out = c;
	return WQ_OK;
}

/* ---- civil dates (proleptic Gregorian; H. Hinnant's algorithms) ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = floor_div(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int day_matches(const struct wq__cron *c, int64_t day)
{
	int64_t y;
	int m, d;
	int dow = (int)(((day + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
	int dom_ok, dow_ok;

	civil_from_days(day, &y, &m, &d);
	if (!(c->month >> m & 1))
		return 0;
	dom_ok = c->dom >> d & 1;
	dow_ok = c->dow >> dow & 1;
	return (c->dom_any || c->dow_any) ? dom_ok && dow_ok : dom_ok || dow_ok;
}

/* ---- zones ---- */

wq_rc wq__tz_check(const char *zone, wq_error *err)
{
	struct wq__zone *z;
	wq_rc rc = wq__zone_load(zone, &z, err);

	wq__zone_free(z);
	return rc;
}

/* The instant of local wall time w (seconds, as if the local time were UTC): its first
 * occurrence when repeated, the end of the gap when skipped. */
static int64_t wall_to_utc(const struct wq__zone *z, int64_t w)
{
	int64_t offs[3] = {wq__zone_offset(z, w - 36 * 3600), wq__zone_offset(z, w),
			   wq__zone_offset(z, w + 36 * 3600)};
	int64_t best = INT64_MAX, lo, hi, olo;

	for (int i = 0; i < 3; i++) {
		int64_t t = w - offs[i];
		if (wq__zone_offset(z, t) == offs[i] && t < best)
			best = t;
	}
	if (best != INT64_MAX)
		return best;
	/* Skipped: the first instant after the gap, between the two candidates. */
	lo = w - (offs[0] > offs[2] ? offs[0] : offs[2]);
	hi = w - (offs[0] > offs[2] ? offs[2] : offs[0]);
	olo = wq__zone_offset(z, lo);
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		if (wq__zone_offset(z, mid) == olo)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

wq_rc wq__cron_next(const struct wq__cron *c, const char *zone, int64_t after_us,
		    int64_t *next_us, wq_error *err)
{
	struct wq__zone *z;
	int64_t start, start_wall, day0, found = -1;
	wq_rc rc;

	if ((rc = wq__zone_load(zone, &z, err)) != WQ_OK)
		return rc;
	start = floor_div(after_us, 60 * WQ__US_PER_S) * 60 + 60; /* next whole minute */

	start_wall = start + wq__zone_offset(z, start);
	day0 = floor_div(start_wall, 86400) - 1;
	for (int64_t day = day0; day < day0 + WQ__SEARCH_DAYS && found < 0; day++) {
		if (!day_matches(c, day))
			continue;
		for (int h = 0; h < 24 && found < 0; h++) {
			if (!(c->hour >> h & 1))
				continue;
			for (int mi = 0; mi < 60; mi++) {
				int64_t w = day * 86400 + h * 3600 + mi * 60, t;
				if (!(c->minute >> mi & 1) || w < start_wall - 3 * 3600)
					continue;
				t = wall_to_utc(z, w);
				if (t >= start) {
					found = t;
					break;
				}
			}
		}
	}

	wq__zone_free(z);
	if (found < 0)
		return wq__err(err, WQ_EINVAL, "cron: the expression matches no time");
	*next_us = found * WQ__US_PER_S;
	return WQ_OK;
}

int64_t wq__every_next(int64_t anchor_us, int64_t interval_us, int64_t after_us)
{
	int64_t k;
	if (interval_us <= 0)
		return INT64_MAX;
	if (after_us < anchor_us)
		return anchor_us + interval_us;
	k = (after_us - anchor_us) / interval_us + 1;
	return anchor_us + k * interval_us;
}

wq_rc wq__slot_next(const char *cron, const char *tz, int64_t every, int64_t anchor,
		    int64_t after_us, int64_t *next_us, wq_error *err)
{
	struct wq__cron c;
	wq_rc rc;

	if (!cron || !*cron) {
		if (every <= 0)
			return wq__err(err, WQ_EINVAL, "schedule has neither cron nor interval");
		*next_us = wq__every_next(anchor, every, after_us);
		return WQ_OK;
	}
	if ((rc = wq__cron_parse(cron, &c, err)) != WQ_OK)
		return rc;
	return wq__cron_next(&c, tz, after_us, next_us, err);
}
