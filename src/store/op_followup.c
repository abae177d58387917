/*
 * op_followup.c — follow-up tasks (issue 10, SPEC §4): what a handler asked to run next,
 * created inside finish() in the transaction that records the parent's success, so an
 * interrupted or failed attempt leaves none and a recorded success has all of them.
 *
 * Identity: each follow-up's operation key is derived from the parent (its kind and
 * operation) and the follow-up's own key, or its 1-based index when it gave none:
 * "PARENTKIND/PARENTOP/KEY" or ".../#N" (or "fu1-" + SHA-256 of those parts when that
 * does not fit WQ_KEY_MAX). The operations' unique index makes a repeat a replay, so a
 * parent that is run and recorded again never doubles them.
 *
 * All or nothing: a follow-ups array that is malformed, beyond max_followups or
 * max_followup_depth, with a payload beyond the limits, or whose key meets an existing
 * operation with other input is rejected as a whole — one `followups-rejected` event on
 * the parent with the reason and a detail of safe evidence (positions, counts, limits;
 * never payload text) — and the parent's outcome is recorded all the same.
 */
#include "op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FU_MAX 10000 /* follow-ups per task, whatever the limits say */

struct fu_parent {
	char tenant[WQ_NAME_MAX + 1];
	char scope[WQ_NAME_MAX + 1];
	char kind[WQ_KIND_MAX + 1];
	char operation[WQ_KEY_MAX + 1];
	int depth;
};

static const struct wq__col parent_cols[] = {
	WQ__COL('s', struct fu_parent, tenant),
	WQ__COL('s', struct fu_parent, scope),
	WQ__COL('s', struct fu_parent, kind),
	WQ__COL('s', struct fu_parent, operation),
	WQ__COL('i', struct fu_parent, depth),
};

struct fu_child {
	const char *kind, *key, *lock; /* borrowed from the parsed array */
	char *payload;                 /* malloc'd, compact JSON */
	size_t len;
	int64_t delay;                 /* µs */
	char op[WQ_KEY_MAX + 1];
	char fp[WQ_SHA256_HEX], sha[WQ_SHA256_HEX];
};

struct fu_set {
	json_t *doc;
	struct fu_child *c;
	size_t n;
	char why[32];                  /* reason of a rejection */
	char detail[WQ_DETAIL_MAX + 1];
};

static int reject(struct fu_set *f, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int reject(struct fu_set *f, const char *why, const char *fmt, ...)
{
	va_list ap;

	snprintf(f->why, sizeof(f->why), "%s", why);
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
	return -1;
}

/* A key or lock member: 1..WQ_KEY_MAX bytes, no control characters, valid UTF-8. */
static int key_ok(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > WQ_KEY_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return 0;
	return wq__check_utf8("key", v, NULL) == WQ_OK;
}

/* "in": a duration ("30s", "5m") or whole seconds. */
static int delay_of(json_t *v, int64_t *out)
{
	if (!v)
		return *out = 0, 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= 10LL * 365 * 86400)
		return *out = json_integer_value(v) * WQ__US_PER_S, 0;
	if (json_is_string(v) && wq_duration_parse(json_string_value(v), out, NULL) == WQ_OK &&
	    *out >= 0)
		return 0;
	return -1;
}

/* One element: {kind, payload?, key?, in?, lock?}, nothing else. */
static int child_read(struct fu_set *f, size_t i, json_t *e, const struct wq__followup_limits *l)
{
	struct fu_child *c = &f->c[i];
	json_t *kind, *key, *lock, *payload;
	const char *name;
	json_t *v;

	if (!json_is_object(e))
		return reject(f, "malformed", "follow-up #%zu is not an object", i + 1);
	json_object_foreach(e, name, v) {
		if (strcmp(name, "kind") && strcmp(name, "payload") && strcmp(name, "key") &&
		    strcmp(name, "in") && strcmp(name, "lock"))
			return reject(f, "malformed", "follow-up #%zu has an unknown member (expected "
				      "kind, payload, key, in, lock)", i + 1);
	}
	kind = json_object_get(e, "kind");
	key = json_object_get(e, "key");
	lock = json_object_get(e, "lock");
	payload = json_object_get(e, "payload");
	if (!json_is_string(kind) || wq__check_kind(json_string_value(kind), NULL) != WQ_OK)
		return reject(f, "malformed", "follow-up #%zu: kind must be 1..%d bytes of "
			      "[A-Za-z0-9._-]", i + 1, WQ_KIND_MAX);
	if (key && (!json_is_string(key) || !key_ok(json_string_value(key))))
		return reject(f, "malformed", "follow-up #%zu: key must be a string of 1..%d bytes "
			      "without control characters", i + 1, WQ_KEY_MAX);
	if (lock && (!json_is_string(lock) ||
		     wq__check_lock_key(json_string_value(lock), NULL) != WQ_OK))
		return reject(f, "malformed", "follow-up #%zu: lock must be a string of 1..%d "
			      "bytes without control characters", i + 1, WQ_KEY_MAX);
	if (delay_of(json_object_get(e, "in"), &c->delay) != 0)
		return reject(f, "malformed", "follow-up #%zu: in must be a duration (30s, 5m) or "
			      "whole seconds", i + 1);
	c->kind = json_string_value(kind);
	c->key = key ? json_string_value(key) : NULL;
	c->lock = lock ? json_string_value(lock) : NULL;
	c->payload = payload ? json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY)
			     : strdup("{}");
	if (!c->payload)
		return reject(f, "error", "out of memory (follow-up #%zu)", i + 1);
	c->len = strlen(c->payload);
	if (c->len > WQ_PAYLOAD_MAX_DEFAULT || (l && l->max_payload && c->len > l->max_payload))
		return reject(f, "max_payload_bytes", "follow-up #%zu: its payload is %zu bytes; "
			      "the limit is %zu ([%s])", i + 1, c->len,
			      l && l->max_payload && l->max_payload < WQ_PAYLOAD_MAX_DEFAULT
				      ? l->max_payload : (size_t)WQ_PAYLOAD_MAX_DEFAULT,
			      l && l->max_payload ? l->section : "built-in");
	return 0;
}

/* The child's operation key, from the parent and the child's key or index. */
static void child_op(const struct fu_parent *p, struct fu_child *c, size_t i)
{
	char part[WQ_KEY_MAX + 16], hex[WQ_SHA256_HEX];
	size_t need;

	if (c->key)
		snprintf(part, sizeof(part), "%s", c->key);
	else
		snprintf(part, sizeof(part), "#%zu", i + 1);
	need = strlen(p->kind) + strlen(p->operation) + strlen(part) + 2;
	if (need <= WQ_KEY_MAX) {
		snprintf(c->op, sizeof(c->op), "%s/%s/%s", p->kind, p->operation, part);
		return;
	}
	/* none of the parts holds a control character: "\n" separates them unambiguously */
	{
		size_t n = need + 1;
		char *buf = malloc(n);

		if (buf) {
			snprintf(buf, n, "%s\n%s\n%s", p->kind, p->operation, part);
			wq__sha256_hex(buf, strlen(buf), hex);
			free(buf);
		} else {
			wq__sha256_hex(part, strlen(part), hex); /* never reached in practice */
		}
	}
	snprintf(c->op, sizeof(c->op), "fu1-%s", hex);
}

/* Parses, checks the limits and derives the identities; -1: rejected (f->why). */
static int fu_read(struct fu_set *f, const struct wq__outcome *o, const struct fu_parent *p)
{
	const struct wq__followup_limits *l = o->followup_limits;
	json_error_t je;
	size_t i, k;

	if (o->followups_error)
		return reject(f, "unreadable", "%s", o->followups_error);
	f->doc = json_loads(o->followups, JSON_REJECT_DUPLICATES, &je);
	if (!f->doc) /* the position only: jansson's text may quote the input */
		return reject(f, "malformed", "not a valid JSON array (error at line %d, column "
			      "%d)", je.line, je.column);
	if (!json_is_array(f->doc))
		return reject(f, "malformed", "not a JSON array of follow-ups");
	f->n = json_array_size(f->doc);
	if (l && l->max_followups >= 0 && f->n > (size_t)l->max_followups)
		return reject(f, "max_followups", "max_followups = %d ([%s]): the handler asked "
			      "for %zu follow-ups", l->max_followups, l->section, f->n);
	if (f->n > FU_MAX)
		return reject(f, "max_followups", "at most %d follow-ups per task; the handler "
			      "asked for %zu", FU_MAX, f->n);
	if (f->n && l && l->max_depth >= 0 && p->depth + 1 > l->max_depth)
		return reject(f, "max_followup_depth", "max_followup_depth = %d ([%s]): these "
			      "follow-ups would be at depth %d", l->max_depth, l->section,
			      p->depth + 1);
	if (f->n && !(f->c = calloc(f->n, sizeof(*f->c))))
		return reject(f, "error", "out of memory (%zu follow-ups)", f->n);
	for (i = 0; i < f->n; i++) {
		if (child_read(f, i, json_array_get(f->doc, i), l))
			return -1;
		child_op(p, &f->c[i], i);
		if (wq__fingerprint(f->c[i].payload, f->c[i].len, 1, f->c[i].fp, NULL) != WQ_OK)
			return reject(f, "malformed", "follow-up #%zu: payload is not JSON", i + 1);
		wq__sha256_hex(f->c[i].payload, f->c[i].len, f->c[i].sha);
		for (k = 0; k < i; k++)
			if (strcmp(f->c[k].kind, f->c[i].kind) == 0 &&
			    strcmp(f->c[k].op, f->c[i].op) == 0)
				return reject(f, "malformed", "follow-ups #%zu and #%zu have the same "
					      "kind and key", k + 1, i + 1);
	}
	return 0;
}

static wq_rc read_fp(const struct wq__row *r, void *ctx)
{
	wq__str(r, 0, ctx, WQ_SHA256_HEX);
	return WQ_OK;
}

/* A child whose identity exists with other input would fail the whole transaction (a
 * conflict): found first, so the set is rejected and the parent's outcome kept. */
static wq_rc fu_conflicts(struct wq__store *s, struct fu_set *f, const struct fu_parent *p,
			  int *bad, wq_error *err)
{
	char stored[WQ_SHA256_HEX];
	size_t got;
	wq_rc rc;

	*bad = 0;
	for (size_t i = 0; i < f->n; i++) {
		got = 0;
		rc = wq__rows(s, SQL_FOLLOWUP_OP_FP,
			      WQ__ARGS(WQ__AT(p->tenant), WQ__AT(p->scope), WQ__AT(f->c[i].kind),
				       WQ__AT(f->c[i].op)),
			      read_fp, stored, &got, "read follow-up operation", err);
		if (rc)
			return rc;
		if (got && strcmp(stored, f->c[i].fp) != 0) {
			*bad = 1;
			reject(f, "conflict", "follow-up #%zu: operation %s exists with other input",
			       i + 1, f->c[i].op);
			return WQ_OK;
		}
	}
	return WQ_OK;
}

static wq_rc fu_create(struct wq__store *s, const struct wq__outcome *o, struct fu_set *f,
		       const struct fu_parent *p, wq_error *err)
{
	struct wq__new_task t;
	struct wq__enqueued_row row;
	wq_rc rc;

	for (size_t i = 0; i < f->n; i++) {
		struct fu_child *c = &f->c[i];

		memset(&t, 0, sizeof(t));
		memset(&row, 0, sizeof(row));
		t.kind = c->kind;
		t.tenant = p->tenant;
		t.scope = p->scope;
		t.operation = t.key = c->op;
		t.payload = c->payload;
		t.payload_len = c->len;
		t.payload_version = 1;
		t.payload_sha256 = c->sha;
		t.fingerprint = c->fp;
		t.now = o->now;
		t.due_at = t.order_at = o->now + c->delay;
		t.max_attempts = 3;
		t.lock = c->lock;
		rc = wq__enqueue_in(s, &t, &row, err);
		if (!rc && !row.replayed)
			rc = wq__run(s, SQL_FOLLOWUP_SET_PARENT,
				     WQ__ARGS(WQ__AI(row.id), WQ__AI(o->task_id),
					      WQ__AI(p->depth + 1)),
				     NULL, "link follow-up", err);
		if (!rc)
			rc = wq__eventf(s, o->task_id, o->now, o->attempt, "followup-created",
					o->instance, err, "aisssbt", o->task_id, o->attempt,
					"child_id", row.id, "kind", c->kind, WQ_KIND_MAX, "operation",
					c->op, WQ_KEY_MAX, "lock", wq__nz(c->lock), WQ_KEY_MAX,
					"replayed", row.replayed, "due_at", t.due_at);
		if (rc)
			return rc;
	}
	return WQ_OK;
}

static void fu_free(struct fu_set *f)
{
	for (size_t i = 0; f->c && i < f->n; i++)
		free(f->c[i].payload);
	free(f->c);
	json_decref(f->doc);
}

int wq__followups_check(const char *text, const struct wq__followup_limits *l,
			const char *kind, const char *operation, int depth, size_t *n,
			char **ops, size_t maxops, char *why, size_t whysz)
{
	struct wq__outcome o;
	struct fu_parent p;
	struct fu_set f;
	int bad;

	memset(&o, 0, sizeof(o));
	memset(&p, 0, sizeof(p));
	memset(&f, 0, sizeof(f));
	o.kind = WQ__FINISH_SUCCEEDED;
	o.followups = text;
	o.followup_limits = l;
	snprintf(p.kind, sizeof(p.kind), "%s", kind);
	snprintf(p.operation, sizeof(p.operation), "%s", operation);
	p.depth = depth;
	bad = fu_read(&f, &o, &p) != 0;
	*n = f.n;
	snprintf(why, whysz, "%s%s%s", f.why, bad ? ": " : "", f.detail);
	for (size_t i = 0; !bad && ops && i < f.n && i < maxops; i++)
		ops[i] = strdup(f.c[i].op); /* the caller frees them */
	fu_free(&f);
	return bad ? -1 : 0;
}

wq_rc wq__followups_create(struct wq__store *s, const struct wq__outcome *o, wq_error *err)
{
	struct fu_set f;
	struct fu_parent p;
	size_t found = 0;
	int bad = 0;
	wq_rc rc;

	if (o->kind != WQ__FINISH_SUCCEEDED || (!o->followups && !o->followups_error))
		return WQ_OK;
	memset(&f, 0, sizeof(f));
	rc = wq__select1(s, SQL_FOLLOWUP_PARENT, WQ__ARGS(WQ__AI(o->task_id)),
			 WQ__COLS(parent_cols), &p, &found, "read the parent task", err);
	if (!rc && !found)
		rc = wq__err(err, WQ_ENOTFOUND, "task %" PRId64 " not found", o->task_id);
	if (rc)
		return rc;
	bad = fu_read(&f, o, &p) != 0;
	if (!bad)
		rc = fu_conflicts(s, &f, &p, &bad, err);
	if (!rc && bad)
		rc = wq__eventf(s, o->task_id, o->now, o->attempt, "followups-rejected",
				o->instance, err, "assi", o->task_id, o->attempt, "reason", f.why,
				WQ_REASON_MAX, "detail", f.detail, WQ_DETAIL_MAX, "count",
				(int64_t)f.n);
	else if (!rc)
		rc = fu_create(s, o, &f, &p, err);
	fu_free(&f);
	return rc;
}

/* ---- reads: a task's parent and children (`show`) ---- */

wq_rc wq__op_family(struct wq__store *s, int64_t id, int64_t *parent, int64_t **children,
		   size_t *n, wq_error *err)
{
	struct { int64_t parent_id; } row = {0};
	static const struct wq__col pcols[] = {{'i', 0, sizeof(int64_t)}};
	int64_t *ids = NULL;
	size_t found = 0;
	wq_rc rc;

	rc = wq__select1(s, SQL_FOLLOWUP_FAMILY_PARENT, WQ__ARGS(WQ__AI(id)), pcols, 1, &row,
			 &found, "read the task's parent", err);
	if (!rc && !found)
		rc = wq__err(err, WQ_ENOTFOUND, "task %" PRId64 " not found", id);
	if (!rc)
		rc = wq__select(s, SQL_FOLLOWUP_CHILDREN, WQ__ARGS(WQ__AI(id)), pcols, 1,
				sizeof(int64_t), &ids, n, "read the task's follow-ups", err);
	if (rc)
		return rc;
	*parent = row.parent_id;
	*children = ids;
	return WQ_OK;
}
