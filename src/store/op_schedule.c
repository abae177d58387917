/*
 * op_schedule.c — recurring schedules (issue 12): their rows, the owner lease, and the
 * firing of due slots.
 *
 * Invariants:
 *  - A slot becomes a task only through wq__enqueue_in with the operation key
 *    "schedule:NAME:<slot RFC 3339 UTC>": two workers that both believe they own a
 *    schedule (an expired lease taken over while the old owner still fires) enqueue
 *    a slot once; the second is a replay and is neither counted nor recorded.
 *  - A schedule fires only in a transaction that re-reads its row as still owned by
 *    the caller with an unexpired lease (row-locked on PostgreSQL), and that same
 *    transaction advances next_slot: a slot is decided once.
 *  - Skipped slots have no task; they are recorded in schedule_events.
 *  - The owner lease (lease_until) is written and judged on the store's clock only
 *    (issue 15, op_clock.c): each operation reads it once, so an owner or a would-be
 *    owner whose clock is skewed can neither take a live lease nor lose its own early.
 *    Slots are wall-clock times and stay on the caller's clock (`now`): whoever owns
 *    the schedule decides when a slot is due; the slot's operation key keeps a slot
 *    from running twice when ownership moves between hosts that disagree.
 */
#include "op.h"
#include "cron.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slots looked at per schedule and round; with catch-up `all`, runs per round. A longer
 * downtime continues in the next round (a `latest` or `none` schedule then gets one more
 * decision per WQ__SLOTS_MAX missed slots). */
#define WQ__SLOTS_MAX 1000
#define WQ__RUNS_MAX 100

#define C(type, f) WQ__COL(type, wq_schedule, f)
static const struct wq__col sched_cols[] = { /* WQ__SCHED_COLUMNS */
	C('i', id), C('s', name), C('s', cron), C('i', every), C('s', tz), C('s', kind),
	C('s', tenant), C('s', scope), C('s', overlap), C('s', catch_up), C('i', paused),
	C('i', next_slot), C('i', last_slot), C('i', last_task), C('s', owner),
	C('i', lease_until), C('i', created_at), C('i', payload_size), C('s', payload_sha256),
};
#undef C

#define E(type, f) WQ__COL(type, wq_schedule_event, f)
static const struct wq__col event_cols[] = { /* SQL_SCHED_EVENTS */
	E('i', at), E('i', slot), E('s', type), E('i', task_id), E('i', count), E('s', instance),
};
#undef E

wq_rc wq__op_schedule_add(struct wq__store *s, const struct wq__new_schedule *ns, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc;

	if ((rc = wq__check_utf8("tenant", ns->tenant, err)) ||
	    (rc = wq__check_utf8("scope", ns->scope, err)))
		return rc;
	rc = wq__write1(s, SQL_SCHED_INSERT,
			WQ__ARGS(WQ__AT(ns->name), WQ__AT(wq__nz(ns->cron)), WQ__AI(ns->every),
				 WQ__AT(wq__nz(ns->tz)), WQ__AT(ns->kind), WQ__AT(wq__nz(ns->tenant)),
				 WQ__AT(wq__nz(ns->scope)), WQ__AT(ns->payload),
				 WQ__AI(ns->payload_version), WQ__AI(ns->payload_len),
				 WQ__AT(ns->payload_sha256), WQ__AT(ns->fingerprint),
				 ns->notify ? WQ__AT(ns->notify) : WQ__ANULL,
				 WQ__AI(ns->max_attempts), WQ__AT(ns->overlap), WQ__AT(ns->catch_up),
				 WQ__AI(ns->next_slot), WQ__AI(ns->now)),
			&changes, "insert schedule", err);
	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ECONFLICT, "schedule '%s' already exists", ns->name);
	return rc;
}

wq_rc wq__op_schedule_list(struct wq__store *s, wq_schedule **out, size_t *n, wq_error *err)
{
	return wq__select(s, SQL_SCHED_LIST, WQ__NOARGS, WQ__COLS(sched_cols),
			  sizeof(wq_schedule), out, n, "list schedules", err);
}

wq_rc wq__op_schedule_get(struct wq__store *s, const char *name, wq_schedule *out,
			  wq_error *err)
{
	wq_schedule sc;
	size_t found = 0;
	wq_rc rc = wq__select1(s, SQL_SCHED_GET, WQ__ARGS(WQ__AT(name)), WQ__COLS(sched_cols),
			       &sc, &found, "read schedule", err);

	if (!rc && !found)
		rc = wq__err(err, WQ_ENOTFOUND, "no schedule '%s'", name);
	if (!rc)
		*out = sc;
	return rc;
}

wq_rc wq__op_schedule_events(struct wq__store *s, const char *name, wq_schedule_event **out,
			     size_t *n, wq_error *err)
{
	return wq__select(s, SQL_SCHED_EVENTS, WQ__ARGS(WQ__AT(name)), WQ__COLS(event_cols),
			  sizeof(wq_schedule_event), out, n, "read schedule events", err);
}

wq_rc wq__op_schedule_pause(struct wq__store *s, const char *name, int paused,
			    int64_t next_slot, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = paused ? wq__write1(s, SQL_SCHED_PAUSE, WQ__ARGS(WQ__AT(name)), &changes,
				       "pause schedule", err)
			  : wq__write1(s, SQL_SCHED_RESUME,
				       WQ__ARGS(WQ__AT(name), WQ__AI(next_slot)), &changes,
				       "resume schedule", err);

	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no schedule '%s'", name);
	return rc;
}

static wq_rc rm_body(struct wq__store *s, const char *name, wq_error *err)
{
	int64_t changes = 0;
	wq_rc rc = wq__run(s, SQL_SCHED_RM_EVENTS, WQ__ARGS(WQ__AT(name)), NULL,
			   "delete schedule events", err);

	if (!rc)
		rc = wq__run(s, SQL_SCHED_RM, WQ__ARGS(WQ__AT(name)), &changes, "delete schedule",
			     err);
	if (!rc && changes == 0)
		rc = wq__err(err, WQ_ENOTFOUND, "no schedule '%s'", name);
	return rc;
}

wq_rc wq__op_schedule_rm(struct wq__store *s, const char *name, wq_error *err)
{
	wq_rc rc = wq__begin(s, 1, err);

	if (!rc) {
		s->retry_safe = 1; /* a repeat finds nothing: WQ_ENOTFOUND, no harm */
		rc = wq__end(s, rm_body(s, name, err), err);
	}
	return rc;
}

/* ---- the owner lease ---- */

struct owned {
	int n;
	int64_t next_due;
};

static wq_rc read_owned(const struct wq__row *r, void *ctx)
{
	struct owned *o = ctx;
	o->n = wq__int(r, 0);
	o->next_due = wq__i64(r, 1);
	return WQ_OK;
}

/* The schedules instance holds at store time `now` (the store's clock). */
static wq_rc owned(struct wq__store *s, const char *instance, int64_t now, int *n,
		   int64_t *next_due, wq_error *err)
{
	struct owned o = {0, 0};
	wq_rc rc = wq__rows(s, SQL_SCHED_OWNED, WQ__ARGS(WQ__AT(instance), WQ__AI(now)),
			    read_owned, &o, NULL, "read owned schedules", err);
	if (!rc) {
		*n = o.n;
		*next_due = o.next_due;
	}
	return rc;
}

wq_rc wq__op_schedule_lease(struct wq__store *s, const char *instance, int64_t ttl,
			    int *n, int64_t *next_due, wq_error *err)
{
	int64_t leasable = 0, now = 0;
	wq_rc rc;

	if (ttl <= 0)
		return wq__err(err, WQ_EINVAL, "a schedule lease needs a positive duration");
	/* Every worker calls this every heartbeat: on a store without schedules (or with
	 * all of them held by live owners) a read answers, and no write lock is taken. The
	 * clock is read before both: the write's `now` may be older than its transaction
	 * by the wait for the write lock, which only delays a takeover and shortens the
	 * new lease by as much (renewed every heartbeat, it is at least two long). */
	rc = wq__store_clock(s, &now, err);
	if (!rc)
		rc = wq__rows(s, SQL_SCHED_LEASABLE, WQ__ARGS(WQ__AT(instance), WQ__AI(now)),
			      wq__read_i64, &leasable, NULL, "count leasable schedules", err);
	if (!rc && leasable > 0)
		rc = wq__write1(s, SQL_SCHED_LEASE,
				WQ__ARGS(WQ__AT(instance), WQ__AI(now + ttl), WQ__AI(now)), NULL,
				"take schedule leases", err);
	return rc ? rc : owned(s, instance, now, n, next_due, err);
}

wq_rc wq__op_schedule_release(struct wq__store *s, const char *instance, wq_error *err)
{
	return wq__write1(s, SQL_SCHED_RELEASE, WQ__ARGS(WQ__AT(instance)), NULL,
			  "release schedule leases", err);
}

/* ---- firing ---- */

struct fire_row {
	int found;
	int64_t id, every, next_slot, last_slot, last_task, created_at;
	char name[WQ_SCHEDULE_NAME_MAX + 1], cron[WQ_CRON_MAX + 1], tz[WQ_TZ_MAX + 1];
	char kind[WQ_KIND_MAX + 1], tenant[WQ_NAME_MAX + 1], scope[WQ_NAME_MAX + 1];
	char sha[WQ_SHA256_HEX], fp[WQ_SHA256_HEX], overlap[8], catch_up[8];
	char *payload, *notify; /* owned */
	size_t payload_len;
	int payload_version, max_attempts;
};

static wq_rc read_fire_row(const struct wq__row *r, void *ctx)
{
	struct fire_row *f = ctx;
	const char *p;
	size_t len = 0;

	f->found = 1;
	f->id = wq__i64(r, 0);
	wq__str(r, 1, f->name, sizeof f->name);
	wq__str(r, 2, f->cron, sizeof f->cron);
	f->every = wq__i64(r, 3);
	wq__str(r, 4, f->tz, sizeof f->tz);
	wq__str(r, 5, f->kind, sizeof f->kind);
	wq__str(r, 6, f->tenant, sizeof f->tenant);
	wq__str(r, 7, f->scope, sizeof f->scope);
	p = wq__text(r, 8, &len);
	if (!(f->payload = strndup(p, len)))
		return WQ_ENOMEM;
	f->payload_len = len;
	f->payload_version = wq__int(r, 9);
	wq__str(r, 10, f->sha, sizeof f->sha);
	wq__str(r, 11, f->fp, sizeof f->fp);
	if (!wq__null(r, 12) && !(f->notify = strdup(wq__text(r, 12, NULL))))
		return WQ_ENOMEM;
	f->max_attempts = wq__int(r, 13);
	wq__str(r, 14, f->overlap, sizeof f->overlap);
	wq__str(r, 15, f->catch_up, sizeof f->catch_up);
	f->next_slot = wq__i64(r, 16);
	f->last_slot = wq__i64(r, 17);
	f->last_task = wq__i64(r, 18);
	f->created_at = wq__i64(r, 19);
	return WQ_OK;
}

static wq_rc sched_event(struct wq__store *s, const struct fire_row *f, int64_t now,
			 int64_t slot, const char *type, int64_t task_id, int64_t count,
			 const char *instance, wq_error *err)
{
	return wq__run(s, SQL_SCHED_EVENT,
		       WQ__ARGS(WQ__AI(f->id), WQ__AI(now), WQ__AI(slot), WQ__AT(type),
				WQ__AI(task_id), WQ__AI(count), WQ__AT(instance)),
		       NULL, "record schedule event", err);
}

/* 1 when the schedule's previous run is still pending or running (overlap `skip`). */
static wq_rc previous_busy(struct wq__store *s, int64_t task_id, int *busy, wq_error *err)
{
	struct { char state[16]; } st = {""};
	static const struct wq__col cols[] = {{'s', 0, 16}};
	size_t found = 0;
	wq_rc rc;

	*busy = 0;
	if (task_id <= 0)
		return WQ_OK;
	rc = wq__select1(s, SQL_SCHED_TASK_STATE, WQ__ARGS(WQ__AI(task_id)), WQ__COLS(cols), &st,
			 &found, "read the previous run", err);
	if (!rc && found)
		*busy = strcmp(st.state, "pending") == 0 || strcmp(st.state, "running") == 0;
	return rc;
}

/* Enqueues the task of one slot; *task_id its id, *new_task 0 for a replay (another owner
 * enqueued this slot already). */
static wq_rc enqueue_slot(struct wq__store *s, const struct fire_row *f, int64_t slot,
			  int64_t now, int64_t *task_id, int *new_task, wq_error *err)
{
	char key[WQ_KEY_MAX + 1], ts[WQ_TIME_BUFSZ];
	struct wq__new_task t;
	struct wq__enqueued_row row;
	wq_rc rc;

	snprintf(key, sizeof key, "schedule:%s:%s", f->name, wq_time_format(slot, ts));
	memset(&t, 0, sizeof t);
	memset(&row, 0, sizeof row);
	t.kind = f->kind;
	t.tenant = f->tenant;
	t.scope = f->scope;
	t.operation = key;
	t.key = key;
	t.payload = f->payload;
	t.payload_len = f->payload_len;
	t.payload_version = f->payload_version;
	t.payload_sha256 = f->sha;
	t.fingerprint = f->fp;
	t.notify = f->notify;
	t.max_attempts = f->max_attempts;
	t.now = now;
	t.due_at = now;
	t.order_at = now;
	if ((rc = wq__enqueue_in(s, &t, &row, err)) != WQ_OK)
		return rc;
	*task_id = row.id;
	*new_task = !row.replayed;
	return WQ_OK;
}

/* One schedule's due slots, within the caller's write transaction. */
static wq_rc fire_body(struct wq__store *s, struct fire_row *f, const char *name,
		       const char *instance, int64_t now, int64_t grace, int *fired,
		       wq_error *err)
{
	int64_t *slots = NULL, next, last_slot, last_task, store_now = 0;
	int n = 0, first = 0, nrun = 0, busy = 0;
	wq_rc rc;

	/* still mine: the lease judged on the store's clock, inside this transaction */
	rc = wq__store_clock(s, &store_now, err);
	if (!rc)
		rc = wq__rows(s, SQL_SCHED_LOCK,
			      WQ__ARGS(WQ__AT(name), WQ__AT(instance), WQ__AI(store_now)),
			      read_fire_row, f, NULL, "read schedule", err);
	if (rc == WQ_ENOMEM)
		return wq__err(err, WQ_ENOMEM, "out of memory (schedule '%s')", name);
	if (rc || !f->found)
		return rc; /* not (or no longer) mine, paused or gone: nothing to decide */
	if (!(slots = malloc(WQ__SLOTS_MAX * sizeof *slots)))
		return wq__err(err, WQ_ENOMEM, "out of memory (schedule '%s')", name);
	/* The due slots, oldest first; `next` ends as the first slot not looked at. */
	next = f->next_slot;
	while (next <= now && n < WQ__SLOTS_MAX) {
		slots[n++] = next;
		if ((rc = wq__slot_next(f->cron, f->tz, f->every, f->created_at, next, &next, err)))
			goto out;
	}
	if (n == 0)
		goto out;
	if (strcmp(f->catch_up, "all") == 0) {
		nrun = n < WQ__RUNS_MAX ? n : WQ__RUNS_MAX;
		if (nrun < n)
			next = slots[nrun]; /* the rest in the next round */
	} else {
		/* latest: the newest due slot runs for all; none: only when it is not late */
		first = n - 1;
		nrun = strcmp(f->catch_up, "none") == 0 && now - slots[n - 1] > grace ? 0 : 1;
		if (n - nrun > 0 &&
		    (rc = sched_event(s, f, now, slots[0], "skipped-missed", 0, n - nrun, instance,
				      err)))
			goto out;
	}
	if (nrun > 0 && strcmp(f->overlap, "skip") == 0) {
		if ((rc = previous_busy(s, f->last_task, &busy, err)))
			goto out;
		if (busy) {
			rc = sched_event(s, f, now, slots[first], "skipped-overlap", f->last_task,
					 nrun, instance, err);
			if (rc)
				goto out;
			nrun = 0;
		}
	}
	last_slot = f->last_slot;
	last_task = f->last_task;
	for (int i = first; i < first + nrun; i++) {
		int64_t id = 0;
		int created = 0;

		rc = enqueue_slot(s, f, slots[i], now, &id, &created, err);
		if (rc == WQ_ECONFLICT) {
			/* the slot's key was taken by another payload (a schedule removed and
			 * added again under its name): that slot is not ours to run */
			s->keep = 0;
			rc = sched_event(s, f, now, slots[i], "skipped-conflict", 0, 1, instance,
					 err);
			if (rc)
				goto out;
			continue;
		}
		if (rc)
			goto out;
		last_slot = slots[i];
		last_task = id;
		if (created) {
			(*fired)++;
			if ((rc = sched_event(s, f, now, slots[i], "fired", id, 1, instance, err)))
				goto out;
		}
	}
	rc = wq__run(s, SQL_SCHED_ADVANCE,
		     WQ__ARGS(WQ__AI(f->id), WQ__AI(next), WQ__AI(last_slot), WQ__AI(last_task)),
		     NULL, "advance schedule", err);
out:
	free(slots);
	return rc;
}

struct due_name {
	char name[WQ_SCHEDULE_NAME_MAX + 1];
};

wq_rc wq__op_schedule_fire(struct wq__store *s, const char *instance, int64_t now,
			   int64_t grace, int *fired, int64_t *next_due, wq_error *err)
{
	static const struct wq__col cols[] = {WQ__COL('s', struct due_name, name)};
	struct due_name *due = NULL;
	size_t n = 0;
	int nowned = 0;
	int64_t store_now = 0;
	wq_rc rc;

	*fired = 0;
	/* slots due by the caller's clock, leases live on the store's */
	rc = wq__store_clock(s, &store_now, err);
	if (!rc)
		rc = wq__select(s, SQL_SCHED_DUE,
				WQ__ARGS(WQ__AT(instance), WQ__AI(now), WQ__AI(store_now)),
				WQ__COLS(cols), sizeof *due, &due, &n, "read due schedules", err);
	for (size_t i = 0; !rc && i < n; i++) {
		struct fire_row f;

		memset(&f, 0, sizeof f);
		if ((rc = wq__begin(s, 1, err)) == WQ_OK) {
			s->retry_safe = 1; /* a repeat replays the slots' keys */
			rc = wq__end(s, fire_body(s, &f, due[i].name, instance, now, grace, fired,
						  err), err);
		}
		free(f.payload);
		free(f.notify);
	}
	free(due);
	return rc ? rc : owned(s, instance, store_now, &nowned, next_due, err);
}
