/*
 * cron.h — 5-field cron expressions and the next slot of a schedule (issue 12).
 * Not installed. `wq__` prefix.
 */
#ifndef WQ_CRON_H
#define WQ_CRON_H

#include "wakeq.h"

#include <stdint.h>

/* The sets an expression allows, one bit per value. dom_any / dow_any record a field
 * written as a bare `*` (or `*` /1): the day fields combine with OR only when both are
 * restricted (the usual cron rule). */
struct wq__cron {
	uint64_t minute;   /* bits 0-59 */
	uint32_t hour;     /* bits 0-23 */
	uint32_t dom;      /* bits 1-31 */
	uint16_t month;    /* bits 1-12 */
	uint8_t dow;       /* bits 0-6, 0 = Sunday (7 is folded onto 0) */
	int dom_any;
	int dow_any;
};

/* Parses "minute hour day-of-month month day-of-week": numbers, `*`, ranges `a-b`, steps
 * `*` /n and `a-b/n` (and `a/n`: a to the field's end), comma lists, JAN-DEC and SUN-SAT
 * (case-insensitive), 0 and 7 both Sunday. Bounded work for any input (fuzz-safe). On
 * error WQ_EINVAL naming the field ("cron: day-of-month: 32 is out of range 1-31") and
 * *out untouched. An expression that can never match (`0 0 30 2 *`) is refused too. */
wq_rc wq__cron_parse(const char *expr, struct wq__cron *out, wq_error *err);

/* WQ_EINVAL unless zone names a zone of the system tz database (/usr/share/zoneinfo or
 * $TZDIR) that wq__zone_load reads: a relative path of [A-Za-z0-9_+-/] without "..", a
 * TZif file without leap seconds. "UTC" is always valid. */
wq_rc wq__tz_check(const char *zone, wq_error *err);

/* The first slot strictly after `after_us` (µs since the epoch, UTC) in zone `zone`
 * (NULL or "" = UTC), in µs, into *next_us. A local time that a DST change skips runs once
 * at the first valid instant after the gap (02:30 on a spring-forward day runs at 03:00);
 * a local time that occurs twice runs once, at its first occurrence.
 *
 * Time zone machinery: the zone's offsets come from its TZif file (zone.h), never from
 * $TZ: no process-wide state is touched, so any thread may call this. The local-to-UTC
 * conversion is our own (not mktime, whose choice for skipped and repeated times
 * varies), and assumes a zone's offset changes by less than 3 hours at a time. */
wq_rc wq__cron_next(const struct wq__cron *c, const char *zone, int64_t after_us,
		    int64_t *next_us, wq_error *err);

/* `--every`: slots at anchor + k*interval (k >= 1); the first one strictly after after_us. */
int64_t wq__every_next(int64_t anchor_us, int64_t interval_us, int64_t after_us);

/* A schedule's next slot strictly after after_us: by cron (in tz) when cron is non-empty,
 * else every interval from anchor. WQ_EINVAL for a bad expression or zone. */
wq_rc wq__slot_next(const char *cron, const char *tz, int64_t every, int64_t anchor,
		    int64_t after_us, int64_t *next_us, wq_error *err);

#endif /* WQ_CRON_H */
