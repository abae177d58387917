/*
 * schedule.c — recurring schedules (issue 12): the public API (validation, then one
 * store operation each) and the worker's scheduler hook. The firing decisions (overlap,
 * catch-up, the slot's key) live in src/store/op_schedule.c; slot arithmetic in cron.c.
 */
#include "schedule.h"
#include "cron.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wq_rc check_name(const char *name, wq_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > WQ_SCHEDULE_NAME_MAX)
		return wq__err(err, WQ_EINVAL, "schedule name must be 1..%d bytes",
			       WQ_SCHEDULE_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return wq__err(err, WQ_EINVAL,
				       "schedule name may hold only [A-Za-z0-9._-]");
	}
	return WQ_OK;
}

static const char *const overlap_names[] = {[WQ_OVERLAP_SKIP] = "skip",
					    [WQ_OVERLAP_ALLOW] = "allow"};
static const char *const catch_up_names[] = {[WQ_CATCH_UP_LATEST] = "latest",
					     [WQ_CATCH_UP_ALL] = "all",
					     [WQ_CATCH_UP_NONE] = "none"};

/* The timing: a cron expression (in its zone) or an interval, never both. */
static wq_rc check_timing(const wq_schedule_opts *o, wq_error *err)
{
	struct wq__cron c;
	wq_rc rc;

	if ((o->cron && *o->cron) == (o->every != 0))
		return wq__err(err, WQ_EINVAL, "a schedule needs either a cron expression or an "
					       "interval (--cron or --every), not both");
	if (o->every) {
		if (o->tz && *o->tz)
			return wq__err(err, WQ_EINVAL, "a time zone applies to --cron only");
		if (o->every < WQ__US_PER_S)
			return wq__err(err, WQ_EINVAL, "the interval must be at least 1s");
		return WQ_OK;
	}
	if ((rc = wq__cron_parse(o->cron, &c, err)) != WQ_OK)
		return rc;
	return wq__tz_check(o->tz, err);
}

/* Everything wq_schedule_add checks before the store: *notify gets the channels' JSON
 * text (malloc'd, or NULL). */
static wq_rc validate(const wq_schedule_opts *o, const char *payload, size_t len,
		      char **notify, wq_error *err)
{
	wq_enqueue_opts eo;
	wq_rc rc;

	*notify = NULL;
	if (!o)
		return wq__err(err, WQ_EINVAL, "schedule options are required");
	if ((rc = check_name(o->name, err)) || (rc = check_timing(o, err)))
		return rc;
	if ((unsigned)o->overlap >= WQ__ARRAY_LEN(overlap_names) ||
	    (unsigned)o->catch_up >= WQ__ARRAY_LEN(catch_up_names))
		return wq__err(err, WQ_EINVAL, "unknown overlap or catch-up policy");
	/* The task template passes every check wq_enqueue makes, so a slot never fails on
	 * its input. */
	memset(&eo, 0, sizeof eo);
	eo.kind = o->kind;
	eo.payload = payload;
	eo.payload_len = len;
	eo.payload_version = o->payload_version;
	eo.tenant = o->tenant;
	eo.scope = o->scope;
	eo.max_attempts = o->max_attempts;
	eo.notify = o->notify;
	eo.nnotify = o->nnotify;
	return wq__enqueue_check(&eo, len, notify, err);
}

wq_rc wq_schedule_check(const wq_schedule_opts *o, wq_error *err)
{
	const char *payload = o && o->payload ? o->payload : "{}";
	size_t len = o && o->payload ? (o->payload_len ? o->payload_len : strlen(payload)) : 2;
	char fp[WQ_SHA256_HEX];
	char *notify = NULL;
	wq_rc rc = validate(o, payload, len, &notify, err);

	free(notify);
	if (rc == WQ_OK)
		rc = wq__fingerprint(payload, len, o->payload_version ? o->payload_version : 1, fp,
				     err);
	return rc;
}

wq_rc wq_schedule_add(wq_db *db, const wq_schedule_opts *o, wq_schedule *out, wq_error *err)
{
	const char *payload = o && o->payload ? o->payload : "{}";
	size_t len = o && o->payload ? (o->payload_len ? o->payload_len : strlen(payload)) : 2;
	char sha[WQ_SHA256_HEX], fp[WQ_SHA256_HEX];
	char *notify = NULL;
	struct wq__new_schedule ns;
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_schedule_add needs a store");
	if ((rc = validate(o, payload, len, &notify, err)) != WQ_OK)
		goto out;
	memset(&ns, 0, sizeof ns);
	ns.payload_version = o->payload_version ? o->payload_version : 1;
	if ((rc = wq__fingerprint(payload, len, ns.payload_version, fp, err)) != WQ_OK)
		goto out;
	wq__sha256_hex(payload, len, sha);
	ns.name = o->name;
	ns.cron = o->every ? "" : o->cron;
	ns.tz = o->every ? "" : (o->tz ? o->tz : "");
	ns.every = o->every;
	ns.kind = o->kind;
	ns.tenant = o->tenant ? o->tenant : "";
	ns.scope = o->scope ? o->scope : "";
	ns.payload = payload; /* valid JSON: no NUL inside, so text up to len */
	ns.payload_len = len;
	ns.payload_sha256 = sha;
	ns.fingerprint = fp;
	ns.notify = notify;
	ns.max_attempts = o->max_attempts ? o->max_attempts : 3;
	ns.overlap = overlap_names[o->overlap];
	ns.catch_up = catch_up_names[o->catch_up];
	/* Whole seconds: an interval's slots (created_at + k * every) then print as whole
	 * seconds in their operation keys. */
	ns.now = wq_now() / WQ__US_PER_S * WQ__US_PER_S;
	rc = wq__slot_next(ns.cron, ns.tz, ns.every, ns.now, ns.now, &ns.next_slot, err);
	if (rc == WQ_OK)
		rc = WQ__STORE(db, schedule_add, &ns, err);
	if (rc == WQ_OK && out)
		rc = WQ__STORE(db, schedule_get, o->name, out, err);
out:
	free(notify);
	return rc;
}

wq_rc wq_schedule_list(wq_db *db, wq_schedule **out, size_t *n, wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_schedule_list needs a store and outputs");
	return WQ__STORE(db, schedule_list, out, n, err);
}

wq_rc wq_schedule_get(wq_db *db, const char *name, wq_schedule *out, wq_error *err)
{
	wq_rc rc;

	if (!db || !out)
		return wq__err(err, WQ_EINVAL, "wq_schedule_get needs a store and an output");
	if ((rc = check_name(name, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, schedule_get, name, out, err);
}

wq_rc wq_schedule_events(wq_db *db, const char *name, wq_schedule_event **out, size_t *n,
			 wq_error *err)
{
	wq_rc rc;

	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_schedule_events needs a store and outputs");
	if ((rc = check_name(name, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, schedule_events, name, out, n, err);
}

wq_rc wq_schedule_pause(wq_db *db, const char *name, wq_error *err)
{
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_schedule_pause needs a store");
	if ((rc = check_name(name, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, schedule_pause, name, 1, 0, err);
}

wq_rc wq_schedule_resume(wq_db *db, const char *name, wq_error *err)
{
	wq_schedule sc;
	int64_t next;
	wq_rc rc;

	if ((rc = wq_schedule_get(db, name, &sc, err)) != WQ_OK)
		return rc;
	/* Slots that passed while paused are not run: the next one after now. */
	rc = wq__slot_next(sc.cron, sc.tz, sc.every, sc.created_at, wq_now(), &next, err);
	return rc ? rc : WQ__STORE(db, schedule_pause, name, 0, next, err);
}

wq_rc wq_schedule_rm(wq_db *db, const char *name, wq_error *err)
{
	wq_rc rc;

	if (!db)
		return wq__err(err, WQ_EINVAL, "wq_schedule_rm needs a store");
	if ((rc = check_name(name, err)) != WQ_OK)
		return rc;
	return WQ__STORE(db, schedule_rm, name, err);
}

/* ---- doctor ---- */

wq_rc wq__schedule_findings(wq_db *db, wq_finding **f, size_t *cnt, wq_error *err)
{
	wq_schedule *s = NULL;
	size_t n = 0;
	int64_t now = 0; /* the store's clock, on which lease_until is written (issue 15) */
	wq_rc rc = WQ__STORE(db, store_now, &now, err);

	if (rc == WQ_OK)
		rc = WQ__STORE(db, schedule_list, &s, &n, err);

	for (size_t i = 0; rc == WQ_OK && i < n; i++) {
		char at[WQ_TIME_BUFSZ], next[WQ_TIME_BUFSZ];
		wq_finding *grown, *x;

		/* an owner whose lease ran out: it died (or lost the store) and no worker with
		 * the scheduler on has taken the schedule over since */
		if (s[i].paused || !s[i].owner[0] || s[i].lease_until >= now)
			continue;
		if (!(grown = realloc(*f, (*cnt + 1) * sizeof **f))) {
			rc = wq__err(err, WQ_ENOMEM, "out of memory (schedule findings)");
			break;
		}
		*f = grown;
		x = &(*f)[(*cnt)++];
		memset(x, 0, sizeof *x);
		wq__strlcpy(x->type, "schedule-owner-gone", sizeof x->type);
		snprintf(x->detail, sizeof x->detail,
			 "schedule %s: the lease of owner %.128s expired at %s and no worker took it "
			 "over; next slot %s (is a worker with the scheduler running?)",
			 s[i].name, s[i].owner, wq_time_format(s[i].lease_until, at),
			 wq_time_format(s[i].next_slot, next));
	}
	wq_free(s);
	return rc;
}

/* ---- the worker's hook ---- */

wq_rc wq__sched_tick(wq_db *db, struct wq__sched *sc, const wq_config *cfg,
		     const char *instance, int *fired, wq_error *err)
{
	int64_t now = wq_now(), grace;
	wq_rc rc;

	*fired = 0;
	if (sc->off || !instance || !*instance)
		return WQ_OK;
	if (!sc->renewed || now - sc->renewed >= cfg->heartbeat) {
		/* the lease's length only: the store measures it on its clock (issue 15);
		 * `renewed` is this process's own clock, compared with itself */
		rc = WQ__STORE(db, schedule_lease, instance, cfg->schedule_lease, &sc->owned,
			       &sc->next_due, err);
		if (rc != WQ_OK)
			return rc;
		sc->renewed = now;
	}
	if (sc->owned == 0 || sc->next_due == 0 || sc->next_due > now)
		return WQ_OK;
	/* catch-up `none`: a slot later than one tick of this worker (poll + heartbeat, at
	 * least 1s) was missed, not merely noticed late */
	grace = cfg->poll_interval + cfg->heartbeat;
	if (grace < WQ__US_PER_S)
		grace = WQ__US_PER_S;
	return WQ__STORE(db, schedule_fire, instance, now, grace, fired, &sc->next_due, err);
}

wq_rc wq__sched_release(wq_db *db, struct wq__sched *sc, const char *instance,
			wq_error *err)
{
	int was_off = sc->off;

	sc->off = 1; /* stop producing: no tick fires from now on */
	sc->owned = 0;
	if (was_off || !instance || !*instance)
		return WQ_OK;
	return WQ__STORE(db, schedule_release, instance, err);
}
