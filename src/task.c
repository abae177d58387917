/* task.c — the public task API: validation in front of the store's transitions.
 *
 * Everything a caller hands in is checked here, before the store is touched, so a bad
 * input changes nothing. The store then does each transition as one conditional UPDATE. */
#include "internal.h"
#include "policy.h"
#include "store/evidence.h"
#include "enqueue.h"

#include <ctype.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

wq_rc wq__check_kind(const char *kind, wq_error *err)
{
	size_t n = kind ? strlen(kind) : 0;

	if (n == 0)
		return wq__err(err, WQ_EINVAL, "a task needs a kind");
	if (n > WQ_KIND_MAX)
		return wq__err(err, WQ_EINVAL, "kind is %zu bytes; at most %d are allowed", n,
			       WQ_KIND_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)kind[i];
		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return wq__err(err, WQ_EINVAL,
				       "invalid kind '%s': only letters, digits, '.', '_' and '-'",
				       kind);
	}
	return WQ_OK;
}

static wq_rc check_name(const char *what, const char *v, wq_error *err)
{
	size_t n = strlen(v);

	if (n > WQ_NAME_MAX)
		return wq__err(err, WQ_EINVAL, "%s is %zu bytes; at most %d are allowed", what, n,
			       WQ_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return wq__err(err, WQ_EINVAL, "%s contains a control character", what);
	/* An identity: two different byte strings must never become one. */
	return wq__check_utf8(what, v, err);
}

static wq_rc check_enqueue(const wq_enqueue_opts *o, size_t payload_len, wq_error *err)
{
	wq_rc rc;

	if ((rc = wq__check_kind(o->kind, err)) != WQ_OK)
		return rc;
	if (o->tenant && (rc = check_name("tenant", o->tenant, err)) != WQ_OK)
		return rc;
	if (o->scope && (rc = check_name("scope", o->scope, err)) != WQ_OK)
		return rc;
	if (o->priority < WQ__PRIORITY_MIN || o->priority > WQ__PRIORITY_MAX)
		return wq__err(err, WQ_EINVAL, "priority %d is outside %d..%d", o->priority,
			       WQ__PRIORITY_MIN, WQ__PRIORITY_MAX);
	if (o->max_attempts < 0 || o->max_attempts > 1000)
		return wq__err(err, WQ_EINVAL, "max attempts %d is outside 1..1000",
			       o->max_attempts);
	if (o->payload_version < 0)
		return wq__err(err, WQ_EINVAL, "payload version %d is negative",
			       o->payload_version);
	if (o->due_at < 0)
		return wq__err(err, WQ_EINVAL, "due time is before 1970");
	if (payload_len > WQ_PAYLOAD_MAX_DEFAULT)
		return wq__err(err, WQ_EINVAL, "payload is %zu bytes; the limit is %d",
			       payload_len, WQ_PAYLOAD_MAX_DEFAULT);
	return WQ_OK;
}

/* "inbox:RECIPIENT", "webhook:NAME" or "command:NAME"; NAME and RECIPIENT are printable,
 * without spaces. Whether a webhook/command channel is configured is the worker's to
 * check (the enqueuer has no worker configuration). */
static wq_rc check_channel(const char *c, wq_error *err)
{
	static const char *const types[] = {"inbox:", "webhook:", "command:"};
	size_t n = c ? strlen(c) : 0;

	for (size_t i = 0; i < WQ__ARRAY_LEN(types); i++) {
		size_t tl = strlen(types[i]);
		if (n <= tl || strncmp(c, types[i], tl) != 0)
			continue;
		if (n > WQ_NAME_MAX)
			return wq__err(err, WQ_EINVAL, "channel '%.40s...' is longer than %d bytes", c,
				       WQ_NAME_MAX);
		for (size_t k = tl; k < n; k++)
			if ((unsigned char)c[k] <= ' ' || c[k] == 0x7f)
				return wq__err(err, WQ_EINVAL,
					       "channel '%s' contains a space or control character", c);
		return wq__check_utf8("channel", c, err);
	}
	return wq__err(err, WQ_EINVAL,
		       "invalid channel '%s' (expected inbox:RECIPIENT, webhook:NAME or command:NAME)",
		       c ? c : "");
}

/* The channels as a JSON array text (malloc'd) in *out, or NULL when there are none. */
static wq_rc notify_json(const wq_enqueue_opts *o, char **out, wq_error *err)
{
	json_t *a;
	wq_rc rc;

	*out = NULL;
	if (o->nnotify == 0)
		return WQ_OK;
	if (o->nnotify > WQ_NOTIFY_MAX || !o->notify)
		return wq__err(err, WQ_EINVAL, "at most %d channels may be notified", WQ_NOTIFY_MAX);
	for (size_t i = 0; i < o->nnotify; i++) {
		if ((rc = check_channel(o->notify[i], err)) != WQ_OK)
			return rc;
		for (size_t k = 0; k < i; k++)
			if (strcmp(o->notify[i], o->notify[k]) == 0)
				return wq__err(err, WQ_EINVAL, "channel '%s' given twice",
					       o->notify[i]);
	}
	if (!(a = json_array()))
		return wq__err(err, WQ_ENOMEM, "out of memory");
	for (size_t i = 0; i < o->nnotify; i++)
		json_array_append_new(a, json_string(o->notify[i]));
	*out = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return *out ? WQ_OK : wq__err(err, WQ_ENOMEM, "out of memory");
}

static wq_rc check_key(const char *key, wq_error *err)
{
	size_t n = strlen(key);

	if (n == 0 || n > WQ_KEY_MAX)
		return wq__err(err, WQ_EINVAL, "operation key must be 1..%d bytes", WQ_KEY_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			return wq__err(err, WQ_EINVAL, "operation key contains a control character");
	return wq__check_utf8("operation key", key, err);
}

/* [limits] of o->limits for the task's tenant (issue 10): into t, with the section's name. */
static void enqueue_limits(const wq_enqueue_opts *o, struct wq__new_task *t, char *sec,
			   size_t secsz)
{
	const struct wq__limit_config *l = wq__config_limits(o->limits, t->tenant);

	if (!l || l->max_active <= 0)
		return;
	snprintf(sec, secsz, l->named ? "limits.%s" : "limits", l->tenant);
	t->max_active = l->max_active;
	t->limit_section = sec;
}

/* Everything wq_enqueue checks and derives before the store is touched (enqueue.h). */
wq_rc wq__enqueue_prepare(const wq_enqueue_opts *o, struct wq__enqueue_prep *p, wq_error *err)
{
	const char *payload = o->payload ? o->payload : "{}";
	size_t len = o->payload ? (o->payload_len ? o->payload_len : strlen(payload)) : 2;
	struct wq__new_task *t = &p->t;
	int version;
	wq_rc rc;

	memset(p, 0, sizeof *p);
	if ((rc = check_enqueue(o, len, err)) != WQ_OK)
		return rc;
	if (o->key && (rc = check_key(o->key, err)) != WQ_OK)
		return rc;
	if (o->lock && (rc = wq__check_lock_key(o->lock, err)) != WQ_OK)
		return rc;
	version = o->payload_version ? o->payload_version : 1;
	/* issue 10: the kind's payload versions and the tenant's payload bytes (policy.c) */
	if ((rc = wq__policy_enqueue(o->limits, o->kind, o->tenant ? o->tenant : "",
				     o->scope ? o->scope : "", version, len, err)) != WQ_OK)
		return rc;
	/* also the JSON validation, with the error's position */
	if ((rc = wq__fingerprint(payload, len, version, p->fp, err)) != WQ_OK)
		return rc;
	/* Operations recorded by 0.1.0 hold the legacy fingerprint: a replay of one must still
	 * be recognised. Inputs 0.1.0 refused have none (and cannot match a stored one). */
	if (o->key && wq__fingerprint_legacy(payload, len, version, p->fp_legacy, NULL) == WQ_OK)
		t->fingerprint_legacy = p->fp_legacy;
	if ((rc = notify_json(o, &p->notify, err)) != WQ_OK)
		return rc;

	wq__sha256_hex(payload, len, p->sha);
	wq__operation_id(p->op);
	t->kind = o->kind;
	t->tenant = o->tenant ? o->tenant : "";
	t->scope = o->scope ? o->scope : "";
	t->operation = o->key ? o->key : p->op;
	t->key = o->key;
	t->fingerprint = p->fp;
	t->notify = p->notify;
	t->payload = payload;
	t->payload_len = len;
	t->payload_version = version;
	t->payload_sha256 = p->sha;
	t->priority = o->priority;
	t->now = wq_now();
	t->due_at = o->due_at ? o->due_at : t->now;
	t->order_at = t->due_at - (int64_t)o->priority * WQ__PRIORITY_STEP_US;
	t->max_attempts = o->max_attempts ? o->max_attempts : 3;
	t->lock = o->lock;
	enqueue_limits(o, t, p->limit_section, sizeof p->limit_section);
	return WQ_OK;
}

void wq__enqueued_fill(wq_enqueued *out, const struct wq__new_task *t,
		       const struct wq__enqueued_row *row)
{
	out->id = row->id;
	wq__strlcpy(out->operation, t->operation, sizeof out->operation);
	wq__strlcpy(out->fingerprint, row->fingerprint, sizeof out->fingerprint);
	out->state = row->state;
	out->replayed = row->replayed;
}

wq_rc wq_enqueue(wq_db *db, const wq_enqueue_opts *o, wq_enqueued *out, wq_error *err)
{
	struct wq__enqueue_prep p;
	struct wq__enqueued_row row;
	wq_rc rc;

	if (!db || !o)
		return wq__err(err, WQ_EINVAL, "wq_enqueue needs a store and options");
	if ((rc = wq__enqueue_prepare(o, &p, err)) != WQ_OK) {
		free(p.notify);
		return rc;
	}
	memset(&row, 0, sizeof row);
	rc = wq__enqueue_shared(db, &p.t, &row, err); /* group commit: enqueue_group.c */
	free(p.notify);
	if (rc == WQ_OK && out)
		wq__enqueued_fill(out, &p.t, &row);
	return rc;
}

static wq_rc check_id(int64_t id, wq_error *err)
{
	if (id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)id);
	return WQ_OK;
}

wq_rc wq_task_get(wq_db *db, int64_t id, wq_task *out, wq_error *err)
{
	wq_rc rc = check_id(id, err);
	return rc != WQ_OK ? rc : WQ__STORE(db, get, id, out, err);
}

wq_rc wq_task_list(wq_db *db, const wq_list_filter *filter, wq_task **out, size_t *n,
		   wq_error *err)
{
	wq_list_filter f = {0};

	if (filter)
		f = *filter;
	if (f.state && !wq_state_name(f.state))
		return wq__err(err, WQ_EINVAL, "invalid state filter %d", (int)f.state);
	if (f.limit < 0)
		return wq__err(err, WQ_EINVAL, "invalid limit %d", f.limit);
	if (f.limit == 0)
		f.limit = 100;
	return WQ__STORE(db, list, &f, out, n, err);
}

wq_rc wq_task_cancel(wq_db *db, int64_t id, wq_state *out_state, wq_error *err)
{
	wq_state st = 0;
	wq_rc rc = check_id(id, err);

	if (rc == WQ_OK)
		rc = WQ__STORE(db, cancel, id, wq_now(), &st, err);
	if (rc == WQ_OK && out_state)
		*out_state = st;
	return rc;
}

wq_rc wq_task_resolve(wq_db *db, int64_t id, wq_resolution decision, const char *note,
		      wq_error *err)
{
	return wq_task_resolve_by(db, id, decision, note, NULL, err);
}

wq_rc wq_task_resolve_by(wq_db *db, int64_t id, wq_resolution decision, const char *note,
			 const char *by, wq_error *err)
{
	struct wq__resolve r;
	wq_rc rc = check_id(id, err);

	if (rc != WQ_OK)
		return rc;
	if (decision < WQ_RESOLVE_RETRY || decision > WQ_RESOLVE_CANCEL)
		return wq__err(err, WQ_EINVAL, "invalid resolution %d", (int)decision);
	if (note && strlen(note) > 1000)
		return wq__err(err, WQ_EINVAL, "note is %zu bytes; at most 1000 are allowed",
			       strlen(note));
	r.task_id = id;
	r.decision = decision;
	r.note = note;
	r.by = by && *by ? by : "operator";
	r.now = wq_now();
	return WQ__STORE(db, resolve, &r, err);
}

wq_rc wq_task_result(wq_db *db, int64_t id, char **body, size_t *len, wq_error *err)
{
	wq_rc rc = check_id(id, err);
	return rc != WQ_OK ? rc : WQ__STORE(db, result, id, body, len, err);
}

wq_rc wq_timeline(wq_db *db, int64_t task_id, wq_event **out, size_t *n, wq_error *err)
{
	wq_task t;
	wq_rc rc = wq_task_get(db, task_id, &t, err); /* unknown id: WQ_ENOTFOUND */

	return rc != WQ_OK ? rc : WQ__STORE(db, events, task_id, out, n, err);
}

/* The checks of wq_enqueue for a schedule's task template (issue 12): everything but the
 * key, and the notify channels as JSON array text (*notify malloc'd, or NULL). */
wq_rc wq__enqueue_check(const wq_enqueue_opts *o, size_t payload_len, char **notify,
			wq_error *err)
{
	wq_rc rc = check_enqueue(o, payload_len, err);

	return rc ? rc : notify_json(o, notify, err);
}
