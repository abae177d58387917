/* Time zones read from their TZif files (zone.c): every offset is glibc's localtime_r
 * tm_gmtoff for the same zone (the oracle: this test is single-threaded where it sets
 * $TZ), across transitions, before the first one and in the footer rule's years; bad
 * files are refused by name; and a schedule's zone never reaches the process's $TZ
 * while other threads read it (the defect this file fixed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cron.h"
#include "zone.h"
#include "wakeq.h"

static int64_t glibc_offset(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	assert_non_null(localtime_r(&tt, &tm));
	return tm.tm_gmtoff;
}

static void use_tz(const char *zone)
{
	assert_int_equal(setenv("TZ", zone, 1), 0);
	tzset();
}

/* ours == glibc's at t, with the zone's name and the instant on failure */
static void same_at(const char *name, const struct wq__zone *z, int64_t t)
{
	int64_t ours = wq__zone_offset(z, t), theirs = glibc_offset(t);

	if (ours != theirs)
		fail_msg("%s at %lld: offset %lld, glibc %lld", name, (long long)t,
			 (long long)ours, (long long)theirs);
}

/* Steps of `step` seconds over [from, to); where glibc's offset changes between two
 * steps, the change's exact second is found and both sides compared. */
static int sweep(const char *name, const struct wq__zone *z, int64_t from, int64_t to,
		 int64_t step)
{
	int64_t prev = glibc_offset(from);
	int changes = 0;

	same_at(name, z, from);
	for (int64_t t = from + step; t < to; t += step) {
		int64_t o = glibc_offset(t);

		same_at(name, z, t);
		if (o != prev) {
			int64_t lo = t - step, hi = t; /* offset(lo) == prev != offset(hi) */

			while (hi - lo > 1) {
				int64_t mid = lo + (hi - lo) / 2;
				if (glibc_offset(mid) == prev)
					lo = mid;
				else
					hi = mid;
			}
			same_at(name, z, lo);
			same_at(name, z, hi);
			changes++;
		}
		prev = o;
	}
	return changes;
}

#define Y(y) ((int64_t)((y) - 1970) * 31556952) /* ~1 January of year y */

/* Zones with every shape of rule: both hemispheres, negative daylight time (Dublin),
 * half-hour daylight (Lord Howe), quarter-hour offsets, version 3 footers with rule
 * times past 24 h (Jerusalem) and negative (Nuuk), a zone with no daylight rule left
 * (Casablanca's many listed transitions), skipped days (Apia), +14 and -12. */
static const char *const zones[] = {
	"Europe/Berlin", "Europe/London", "Europe/Dublin", "Europe/Moscow",
	"America/New_York", "America/St_Johns", "America/Santiago", "America/Sao_Paulo",
	"America/Havana", "America/Nuuk", "America/Scoresbysund", "Australia/Sydney",
	"Australia/Lord_Howe", "Pacific/Chatham", "Pacific/Apia", "Pacific/Kiritimati",
	"Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran", "Asia/Jerusalem", "Asia/Gaza",
	"Africa/Casablanca", "Antarctica/Troll", "Etc/GMT+12", "Etc/GMT-14", "UTC",
};

static void offsets_match_glibc(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		struct wq__zone *z = NULL;
		wq_error e = {0};
		int changes;

		if (wq__zone_load(zones[i], &z, &e) != WQ_OK)
			fail_msg("%s: %s", zones[i], e.message);
		use_tz(zones[i]);
		/* weekly over 1850-2100: listed transitions, and the footer's years after */
		changes = sweep(zones[i], z, Y(1850), Y(2100), 7 * 86400);
		/* daily where the footer rule takes over, and around the epoch's limits */
		sweep(zones[i], z, Y(2030), Y(2045), 86400);
		same_at(zones[i], z, -(INT64_C(1) << 40));
		same_at(zones[i], z, INT64_C(1) << 40);
		if (strncmp(zones[i], "Etc/", 4) != 0 && strcmp(zones[i], "UTC") != 0 &&
		    changes < 2)
			fail_msg("%s: only %d changes seen: the sweep tested nothing", zones[i],
				 changes);
		wq__zone_free(z);
	}
	unsetenv("TZ");
}

/* Every zone of the system's database that loads agrees with glibc at 400 instants. */
static int every_zone_in(const char *dir, const char *rel, int *loaded)
{
	char path[1024], name[512];
	struct dirent *d;
	DIR *dd = opendir(dir);

	if (!dd)
		return 0;
	while ((d = readdir(dd))) {
		struct wq__zone *z = NULL;

		if (d->d_name[0] == '.' || strcmp(d->d_name, "right") == 0 ||
		    strcmp(d->d_name, "posix") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", d->d_name);
		if (d->d_type == DT_DIR) {
			every_zone_in(path, name, loaded);
			continue;
		}
		if (wq__zone_load(name, &z, NULL) != WQ_OK)
			continue; /* zone1970.tab, leapseconds, tzdata.zi, ... */
		use_tz(name);
		for (int k = 0; k < 400; k++) /* 1800-2200, spread over the day */
			same_at(name, z, Y(1800) + (int64_t)k * (Y(2200) - Y(1800)) / 400 +
						 k * 3607 % 86400);
		wq__zone_free(z);
		(*loaded)++;
	}
	closedir(dd);
	return 0;
}

static void every_system_zone(void **state)
{
	int loaded = 0;

	(void)state;
	every_zone_in("/usr/share/zoneinfo", "", &loaded);
	unsetenv("TZ");
	if (loaded < 300)
		fail_msg("only %d zones loaded from /usr/share/zoneinfo", loaded);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void bad_zones_refused(void **state)
{
	char dir[] = "/tmp/wq-zone-XXXXXX", path[600], buf[4096];
	struct wq__zone *z = (struct wq__zone *)1;
	wq_error e = {0};
	size_t n;
	FILE *f;

	(void)state;
	assert_int_equal(wq__zone_load("Mars/Olympus", &z, &e), WQ_EINVAL);
	assert_null(z);
	assert_string_equal(e.message, "time zone 'Mars/Olympus' is not in the tz database");
	assert_int_equal(wq__zone_load("../etc/passwd", &z, &e), WQ_EINVAL);
	assert_int_equal(wq__zone_load("/etc/localtime", &z, &e), WQ_EINVAL);
	assert_int_equal(wq__zone_load("Europe", &z, &e), WQ_EINVAL); /* a directory */

	/* a copy of Berlin's file, then cut and damaged copies, under $TZDIR */
	assert_non_null(mkdtemp(dir));
	f = fopen("/usr/share/zoneinfo/Europe/Berlin", "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(n > 100 && n < sizeof(buf));
	setenv("TZDIR", dir, 1);

	snprintf(path, sizeof(path), "%s/Whole", dir);
	write_file(path, buf, n);
	assert_int_equal(wq__zone_load("Whole", &z, &e), WQ_OK);
	wq__zone_free(z);

	snprintf(path, sizeof(path), "%s/Cut", dir);
	for (size_t cut = 0; cut < n - 1; cut += 7) { /* every cut short of the last '\n' */
		write_file(path, buf, cut);
		if (wq__zone_load("Cut", &z, &e) == WQ_OK)
			fail_msg("a file cut at %zu of %zu bytes loaded", cut, n);
		assert_non_null(strstr(e.message, "time zone 'Cut'"));
	}

	snprintf(path, sizeof(path), "%s/Text", dir);
	write_file(path, "TZ=Europe/Berlin\n", 17);
	assert_int_equal(wq__zone_load("Text", &z, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "not a TZif file"));

	buf[n - 3] = '!'; /* the footer's rule "...,M10.5.0/3": now "...,M10.5.0!3" */
	snprintf(path, sizeof(path), "%s/Footer", dir);
	write_file(path, buf, n);
	assert_int_equal(wq__zone_load("Footer", &z, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "footer rule is not a POSIX TZ string"));

	unsetenv("TZDIR");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);

	/* leap seconds: refused with the reason, when the system has right/ zones */
	if (access("/usr/share/zoneinfo/right/UTC", R_OK) == 0) {
		assert_int_equal(wq__zone_load("right/UTC", &z, &e), WQ_EINVAL);
		assert_non_null(strstr(e.message, "leap seconds"));
	}
}

/* The defect: the next slot of a zoned schedule set $TZ for the search, so another
 * thread (a store lane, an in-process handler, the spawn copying environ for a handler)
 * saw the schedule's zone or a half-written environment. */
static atomic_int searching, slot_errors;

/* (no cmocka assertion off the main thread: it would longjmp across threads) */
static void *slots(void *arg)
{
	struct wq__cron c;
	int64_t n = 0;

	(void)arg;
	if (wq__cron_parse("30 2 * * *", &c, NULL) != WQ_OK)
		atomic_fetch_add(&slot_errors, 1);
	for (int i = 0; i < 3000 && !atomic_load(&slot_errors); i++)
		if (wq__cron_next(&c, "Asia/Tokyo", (int64_t)i * 3600000000, &n, NULL) != WQ_OK)
			atomic_fetch_add(&slot_errors, 1);
	atomic_store(&searching, 0);
	return NULL;
}

static void schedule_zone_stays_out_of_environ(void **state)
{
	pthread_t th;
	long reads = 0, wrong = 0;
	int64_t ny;

	(void)state;
	use_tz("America/New_York");
	ny = glibc_offset(1700000000); /* 2023-11-14: EST */
	atomic_store(&searching, 1);
	assert_int_equal(pthread_create(&th, NULL, slots, NULL), 0);
	do {
		const char *tz = getenv("TZ");

		reads++;
		if (!tz || strcmp(tz, "America/New_York") != 0 || glibc_offset(1700000000) != ny)
			wrong++;
	} while (atomic_load(&searching));
	pthread_join(th, NULL);
	unsetenv("TZ");
	assert_int_equal(atomic_load(&slot_errors), 0);
	if (wrong)
		fail_msg("%ld of %ld reads of $TZ and localtime saw another zone", wrong, reads);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offsets_match_glibc),
		cmocka_unit_test(every_system_zone),
		cmocka_unit_test(bad_zones_refused),
		cmocka_unit_test(schedule_zone_stays_out_of_environ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
