/*
 * zone.c — a zone of the tz database from its TZif file (RFC 8536); see zone.h for why
 * not glibc's $TZ. The file is read whole (at most ZONE_FILE_MAX bytes), every count is
 * checked against what was read before any array is indexed, and the footer's POSIX TZ
 * string is parsed by rules that accept exactly what tzdata writes (RFC 8536 section
 * 3.3, with its version 3 extension: rule times from -167 to 167 hours).
 */
#include "zone.h"
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZONE_FILE_MAX (256 * 1024) /* tzdata's largest "fat" file is under 4 KiB */
#define DAY INT64_C(86400)

/* A change of a POSIX TZ rule: "Jn" (1-365, Feb 29 never counted), "n" (0-365) or
 * "Mm.w.d" (month, week 1-5 where 5 is the last, weekday 0 = Sunday), then "/time"
 * (local time of day, default 02:00). */
struct change {
	char type; /* 'J', 'D' (plain n) or 'M' */
	int m, w, d;
	int64_t secs;
};

struct posix_tz {
	int64_t std_off, dst_off; /* seconds east of UTC */
	int has_dst;
	struct change start, end; /* into and out of daylight time */
};

struct wq__zone {
	int64_t *times; /* ntimes transition instants, strictly ascending */
	uint8_t *types; /* the time type in force from each transition */
	size_t ntimes;
	int32_t utoff[256];
	uint8_t isdst[256];
	size_t ntypes;
	int64_t before; /* the offset before the first transition */
	int has_footer;
	struct posix_tz footer;
};

/* ---- calendar (proleptic Gregorian, days since 1970-01-01) ---- */

static int is_leap(int64_t y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* The UTC year of instant t. */
static int64_t year_of(int64_t t)
{
	int64_t z = (t >= 0 ? t / DAY : (t - DAY + 1) / DAY) + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);

	return yoe + era * 400 + ((5 * doy + 2) / 153 >= 10);
}

/* ---- the footer's POSIX TZ string ---- */

/* An unsigned number of at most 4 digits, at most max. */
static int num(const char **s, long max, long *v)
{
	const char *p = *s;
	long x = 0;
	int n = 0;

	while (isdigit((unsigned char)*p) && n < 4) {
		x = x * 10 + (*p++ - '0');
		n++;
	}
	if (n == 0 || isdigit((unsigned char)*p) || x > max)
		return -1;
	*v = x;
	*s = p;
	return 0;
}

/* A zone abbreviation: three or more letters, or <...> of letters, digits, + and -. */
static int tz_name(const char **s)
{
	const char *p = *s, *q;

	if (*p == '<') {
		for (q = ++p; isalnum((unsigned char)*q) || *q == '+' || *q == '-'; q++)
			;
		if (*q != '>' || q - p < 3)
			return -1;
		*s = q + 1;
		return 0;
	}
	for (q = p; isalpha((unsigned char)*q); q++)
		;
	if (q - p < 3)
		return -1;
	*s = q;
	return 0;
}

/* [+-]hh[:mm[:ss]], hours at most max_h, into seconds with the sign. */
static int tz_hms(const char **s, long max_h, int64_t *secs)
{
	const char *p = *s;
	long v[3] = {0, 0, 0};
	int neg = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (num(&p, max_h, &v[0]))
		return -1;
	for (int i = 1; i < 3 && *p == ':'; i++) {
		p++;
		if (num(&p, 59, &v[i]))
			return -1;
	}
	*secs = (neg ? -1 : 1) * (v[0] * 3600 + v[1] * 60 + v[2]);
	*s = p;
	return 0;
}

static int tz_change(const char **s, struct change *c)
{
	const char *p = *s;
	long m, w, d;

	memset(c, 0, sizeof(*c));
	if (*p == 'M') {
		p++;
		if (num(&p, 12, &m) || m < 1 || *p++ != '.' || num(&p, 5, &w) || w < 1 ||
		    *p++ != '.' || num(&p, 6, &d))
			return -1;
		*c = (struct change){'M', (int)m, (int)w, (int)d, 0};
	} else if (*p == 'J') {
		p++;
		if (num(&p, 365, &d) || d < 1)
			return -1;
		*c = (struct change){'J', 0, 0, (int)d, 0};
	} else {
		if (num(&p, 365, &d))
			return -1;
		*c = (struct change){'D', 0, 0, (int)d, 0};
	}
	c->secs = 2 * 3600;
	if (*p == '/') {
		p++;
		if (tz_hms(&p, 167, &c->secs))
			return -1;
	}
	*s = p;
	return 0;
}

/* std offset [dst [offset] [,start[/time],end[/time]]]; POSIX offsets count west. */
static int posix_tz_parse(const char *s, struct posix_tz *tz)
{
	int64_t off;

	memset(tz, 0, sizeof(*tz));
	if (tz_name(&s) || tz_hms(&s, 24, &off))
		return -1;
	tz->std_off = -off;
	if (!*s)
		return 0;
	if (tz_name(&s))
		return -1;
	tz->has_dst = 1;
	tz->dst_off = tz->std_off + 3600;
	if (*s && *s != ',') {
		if (tz_hms(&s, 24, &off))
			return -1;
		tz->dst_off = -off;
	}
	if (!*s) { /* no rule: glibc's default, the United States' since 2007 */
		tz->start = (struct change){'M', 3, 2, 0, 2 * 3600};
		tz->end = (struct change){'M', 11, 1, 0, 2 * 3600};
		return 0;
	}
	if (*s++ != ',' || tz_change(&s, &tz->start) || *s++ != ',' ||
	    tz_change(&s, &tz->end))
		return -1;
	return *s ? -1 : 0;
}

/* The instant of change c in year y, its local time read with offset off. */
static int64_t change_at(const struct change *c, int64_t y, int64_t off)
{
	static const int mdays[2][12] = {{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
					 {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}};
	int64_t day = days_from_civil(y, 1, 1);

	if (c->type == 'J') {
		day += c->d - 1 + (is_leap(y) && c->d >= 60);
	} else if (c->type == 'D') {
		day += c->d;
	} else {
		int64_t first = days_from_civil(y, c->m, 1);
		int dd = c->d - (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01: a Thursday */

		if (dd < 0)
			dd += 7;
		for (int i = 1; i < c->w && dd + 7 < mdays[is_leap(y)][c->m - 1]; i++)
			dd += 7;
		day = first + dd;
	}
	return day * DAY + c->secs - off;
}

/* As glibc: the changes of t's UTC year; a start after the end is a southern zone. */
static int64_t footer_offset(const struct posix_tz *tz, int64_t t)
{
	int64_t y, start, end;
	int dst;

	if (!tz->has_dst)
		return tz->std_off;
	y = year_of(t);
	start = change_at(&tz->start, y, tz->std_off);
	end = change_at(&tz->end, y, tz->dst_off);
	dst = start > end ? (t < end || t >= start) : (t >= start && t < end);
	return dst ? tz->dst_off : tz->std_off;
}

/* ---- the TZif file ---- */

struct counts {
	uint32_t isut, isstd, leap, time, type, chr;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* The header at p (44 bytes), into *c; its version byte, or -1 when not TZif. */
static int header(const unsigned char *p, size_t len, struct counts *c)
{
	if (len < 44 || memcmp(p, "TZif", 4) != 0)
		return -1;
	*c = (struct counts){be32(p + 20), be32(p + 24), be32(p + 28),
			     be32(p + 32), be32(p + 36), be32(p + 40)};
	return p[4];
}

/* Bytes of the data block the counts describe, with ts-byte times; counts up to 2^32
 * keep this far below SIZE_MAX on the 64-bit targets wakeq builds for. */
static uint64_t block_len(const struct counts *c, uint64_t ts)
{
	return (uint64_t)c->time * (ts + 1) + (uint64_t)c->type * 6 + c->chr +
	       (uint64_t)c->leap * (ts + 4) + c->isstd + c->isut;
}

static const char *check_counts(const struct counts *c)
{
	if (c->type < 1 || c->type > 256 || c->chr < 1)
		return "no time types, or more than 256";
	if ((c->isut && c->isut != c->type) || (c->isstd && c->isstd != c->type))
		return "inconsistent counts";
	if (c->leap)
		return "it counts leap seconds (schedules use POSIX time: pick the zone "
		       "without \"right/\")";
	return NULL;
}

/* The data block at p (its counts c, ts-byte times) into z; why not, or NULL. */
static const char *read_block(struct wq__zone *z, const unsigned char *p,
			      const struct counts *c, size_t ts)
{
	const unsigned char *idx = p + (size_t)c->time * ts, *tt = idx + c->time;

	if (!(z->times = malloc((c->time ? c->time : 1) * sizeof(*z->times))) ||
	    !(z->types = malloc(c->time ? c->time : 1)))
		return "out of memory";
	z->ntimes = c->time;
	z->ntypes = c->type;
	for (size_t i = 0; i < z->ntimes; i++) {
		z->times[i] = ts == 8 ? be64(p + 8 * i) : (int32_t)be32(p + 4 * i);
		z->types[i] = idx[i];
		if (idx[i] >= c->type || (i && z->times[i] <= z->times[i - 1]))
			return "its transitions are out of order or name no time type";
	}
	for (size_t i = 0; i < z->ntypes; i++) {
		z->utoff[i] = (int32_t)be32(tt + 6 * i);
		z->isdst[i] = tt[6 * i + 4];
		if (z->utoff[i] == INT32_MIN || z->isdst[i] > 1 || tt[6 * i + 5] >= c->chr)
			return "a time type is out of range";
	}
	/* as glibc: before the first transition, the first type not in daylight time */
	z->before = z->utoff[0];
	for (size_t i = 0; i < z->ntypes; i++)
		if (!z->isdst[i]) {
			z->before = z->utoff[i];
			break;
		}
	return NULL;
}

/* The file's bytes (len of them) into z; why not, or NULL. */
static const char *parse(struct wq__zone *z, const unsigned char *p, size_t len)
{
	struct counts c;
	const char *why;
	int version = header(p, len, &c);
	uint64_t n;

	if (version < 0)
		return "not a TZif file";
	if ((why = check_counts(&c)))
		return why;
	if ((n = 44 + block_len(&c, 4)) > len)
		return "truncated";
	if (version == 0) /* version 1: 32-bit times, no footer */
		return read_block(z, p + 44, &c, 4);
	p += n;
	len -= n;
	if (header(p, len, &c) < 0 || (why = check_counts(&c)))
		return why ? why : "its second header is missing";
	if ((n = 44 + block_len(&c, 8)) >= len)
		return "truncated";
	if ((why = read_block(z, p + 44, &c, 8)))
		return why;
	p += n;
	len -= n;
	/* the footer: "\n" TZ string "\n"; an empty string: none */
	if (p[0] != '\n' || !memchr(p + 1, '\n', len - 1))
		return "its footer is missing";
	if (p[1] != '\n') {
		size_t sl = (size_t)((const unsigned char *)memchr(p + 1, '\n', len - 1) - p - 1);
		char s[128];

		if (sl >= sizeof(s))
			return "its footer rule is too long";
		memcpy(s, p + 1, sl);
		s[sl] = '\0';
		if (posix_tz_parse(s, &z->footer))
			return "its footer rule is not a POSIX TZ string";
		z->has_footer = 1;
	}
	return NULL;
}

/* The whole file at path into *buf (malloc'd), its size into *len; errno on failure. */
static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	*buf = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		e = errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > ZONE_FILE_MAX) {
		e = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		goto fail;
	}
	if (!(*buf = malloc((size_t)st.st_size + 1))) {
		e = ENOMEM;
		goto fail;
	}
	while (got < (size_t)st.st_size &&
	       (r = read(fd, *buf + got, (size_t)st.st_size - got)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			goto fail;
		}
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 0;
fail:
	close(fd);
	free(*buf);
	*buf = NULL;
	errno = e;
	return -1;
}

static int name_ok(const char *name)
{
	if (strlen(name) > 64 || name[0] == '/' || strstr(name, ".."))
		return 0;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_+-/", *p))
			return 0;
	return 1;
}

wq_rc wq__zone_parse(const void *buf, size_t len, struct wq__zone **out, const char **why)
{
	struct wq__zone *z;

	*out = NULL;
	*why = "out of memory";
	if (!(z = calloc(1, sizeof(*z))))
		return WQ_ENOMEM;
	if ((*why = parse(z, buf, len))) {
		wq__zone_free(z);
		return strcmp(*why, "out of memory") == 0 ? WQ_ENOMEM : WQ_EINVAL;
	}
	*out = z;
	return WQ_OK;
}

wq_rc wq__zone_load(const char *name, struct wq__zone **out, wq_error *err)
{
	const char *dir = getenv("TZDIR"), *why;
	unsigned char *buf = NULL;
	char path[512];
	size_t len = 0;
	wq_rc rc;

	*out = NULL;
	if (!name || !*name || strcmp(name, "UTC") == 0) {
		/* one type, offset 0, no transitions */
		if (!(*out = calloc(1, sizeof(**out))))
			return wq__err(err, WQ_ENOMEM, "out of memory (time zone)");
		(*out)->ntypes = 1;
		return WQ_OK;
	}
	if (!name_ok(name))
		goto missing;
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
	if (read_file(path, &buf, &len) != 0) {
		if (errno == ENOMEM)
			return wq__err(err, WQ_ENOMEM, "out of memory (time zone)");
		goto missing;
	}
	rc = wq__zone_parse(buf, len, out, &why);
	free(buf);
	if (rc == WQ_ENOMEM)
		return wq__err(err, WQ_ENOMEM, "out of memory (time zone)");
	if (rc != WQ_OK)
		return wq__err(err, WQ_EINVAL, "time zone '%.64s': its file %s: %s", name, path, why);
	return WQ_OK;
missing:
	return wq__err(err, WQ_EINVAL, "time zone '%.64s' is not in the tz database", name);
}

int64_t wq__zone_offset(const struct wq__zone *z, int64_t t)
{
	size_t lo = 0, hi;

	if (z->ntimes == 0 || t < z->times[0])
		return z->before;
	hi = z->ntimes - 1;
	if (t >= z->times[hi])
		return z->has_footer ? footer_offset(&z->footer, t) : z->utoff[z->types[hi]];
	while (hi - lo > 1) { /* times[lo] <= t < times[hi] */
		size_t mid = lo + (hi - lo) / 2;

		if (t < z->times[mid])
			hi = mid;
		else
			lo = mid;
	}
	return z->utoff[z->types[lo]];
}

void wq__zone_free(struct wq__zone *z)
{
	if (!z)
		return;
	free(z->times);
	free(z->types);
	free(z);
}
