/*
 * zone.h — a time zone of the system tz database, read from its TZif file (RFC 8536),
 * for the schedules' local times (cron.c).
 *
 * Why not the C library: glibc converts only in the process's zone, chosen by $TZ.
 * Switching $TZ for a schedule's zone wrote the environment while other threads read it
 * (the store lanes, in-process handlers, the spawn's copy of environ): a handler started
 * meanwhile inherited the schedule's TZ, and a getenv() could read a half-written
 * environ. Reading the file here changes no process-wide state.
 *
 * The answers are glibc's (localtime_r's tm_gmtoff), checked zone by zone in
 * tests/unit/test_zone.c: before the first transition the first standard-time type;
 * after the last one the file's footer rule (a POSIX TZ string), else the last type.
 */
#ifndef WQ_ZONE_H
#define WQ_ZONE_H

#include "wakeq.h"

#include <stddef.h>
#include <stdint.h>

struct wq__zone;

/* Loads zone `name` ("" or "UTC": UTC, no file) from $TZDIR, else /usr/share/zoneinfo.
 * WQ_EINVAL naming the zone when the name is not a plain relative path of
 * [A-Za-z0-9_+-/] without "..", or its file is missing or not a TZif file wakeq reads
 * (one that counts leap seconds, "right/...", is refused: slots are POSIX time).
 * *out is the caller's, freed with wq__zone_free. */
wq_rc wq__zone_load(const char *name, struct wq__zone **out, wq_error *err);

/* The zone of TZif file bytes buf (len of them), for wq__zone_load and the fuzzer:
 * WQ_EINVAL with *why (a static text) when they are not a TZif file wakeq reads,
 * WQ_ENOMEM. *out is the caller's. */
wq_rc wq__zone_parse(const void *buf, size_t len, struct wq__zone **out, const char **why);

/* The zone's offset from UTC in seconds (east positive) at instant t (seconds since
 * the epoch, UTC). */
int64_t wq__zone_offset(const struct wq__zone *z, int64_t t);

void wq__zone_free(struct wq__zone *z);

#endif /* WQ_ZONE_H */
