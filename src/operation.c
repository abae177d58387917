/* operation.c — operation identities (SPEC §6) and the attempts of a task (§14).
 *
 * The identity of a keyed operation is (tenant, scope, kind, key); the store keeps it in
 * its own table, unique by index, so it outlives the task row for its own retention
 * (prune.c). Enqueue itself is in task.c. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The longest encoding below: a tag and five length-prefixed fields. */
#define IDEM_BUF (32 + 5 * 16 + WQ_NAME_MAX * 2 + WQ_KIND_MAX + WQ_KEY_MAX + 1)

/* Appends "<decimal length>:<bytes>" to buf at *len: a netstring without its comma. The
 * length prefix ends where ':' is and says where the field ends, so no content of one
 * field can shift bytes into the next: two different field lists never encode the same. */
static void put_field(char *buf, size_t *len, const char *field, size_t n)
{
	*len += (size_t)snprintf(buf + *len, IDEM_BUF - *len, "%zu:", n);
	memcpy(buf + *len, field, n);
	*len += n;
}

/* "wq1-" + the first 40 hex digits of SHA-256 over buf[0..len). */
static void idem_key(const char *buf, size_t len, char out[WQ_IDEMPOTENCY_KEY_BUFSZ])
{
	char hex[WQ_SHA256_HEX];

	wq__sha256_hex(buf, len, hex);
	snprintf(out, WQ_IDEMPOTENCY_KEY_BUFSZ, "wq1-%.40s", hex);
}

wq_rc wq__operation_identity_check(const char *tenant, const char *scope, const char *kind,
				   const char *operation, wq_error *err)
{
	size_t nt = tenant ? strlen(tenant) : 0, ns = scope ? strlen(scope) : 0;
	size_t nk = kind ? strlen(kind) : 0, no = operation ? strlen(operation) : 0;

	if (nt > WQ_NAME_MAX || ns > WQ_NAME_MAX || nk == 0 || nk > WQ_KIND_MAX || no == 0 ||
	    no > WQ_KEY_MAX)
		return wq__err(err, WQ_EINVAL, "an operation identity needs a kind of 1..%d bytes, "
					       "a key of 1..%d and tenant and scope of at most %d",
			       WQ_KIND_MAX, WQ_KEY_MAX, WQ_NAME_MAX);
	return WQ_OK;
}

wq_rc wq_operation_idempotency_key(const char *tenant, const char *scope, const char *kind,
				   const char *operation, int keyed,
				   char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err)
{
	const char *t = tenant ? tenant : "", *s = scope ? scope : "";
	size_t nt = strlen(t), ns = strlen(s), nk = kind ? strlen(kind) : 0;
	size_t no = operation ? strlen(operation) : 0, len = 0;
	char buf[IDEM_BUF];
	wq_rc rc;

	if (!out)
		return wq__err(err, WQ_EINVAL, "wq_operation_idempotency_key needs an out buffer");
	if ((rc = wq__operation_identity_check(tenant, scope, kind, operation, err)))
		return rc;
	/* "keyed" vs "generated": a caller's key may look like a generated id (op_…) of
	 * another task in the same tenant, scope and kind; they are still two operations. */
	len = (size_t)snprintf(buf, sizeof(buf), "wakeq-operation\n%s\n",
			       keyed ? "keyed" : "generated");
	put_field(buf, &len, t, nt);
	put_field(buf, &len, s, ns);
	put_field(buf, &len, kind, nk);
	put_field(buf, &len, operation, no);
	idem_key(buf, len, out);
	return WQ_OK;
}

wq_rc wq_effect_idempotency_key(const char *operation_key, const char *name,
				char out[WQ_IDEMPOTENCY_KEY_BUFSZ], wq_error *err)
{
	size_t nk = operation_key ? strlen(operation_key) : 0, nn = name ? strlen(name) : 0;
	size_t len;
	char buf[IDEM_BUF];

	if (!out)
		return wq__err(err, WQ_EINVAL, "wq_effect_idempotency_key needs an out buffer");
	if (nk == 0 || nk >= WQ_IDEMPOTENCY_KEY_BUFSZ || nn == 0 || nn > WQ_EFFECT_NAME_MAX)
		return wq__err(err, WQ_EINVAL, "an effect key needs an operation key (wq1-…) and "
					       "an effect name of 1..%d bytes",
			       WQ_EFFECT_NAME_MAX);
	len = (size_t)snprintf(buf, sizeof(buf), "wakeq-effect\n");
	put_field(buf, &len, operation_key, nk);
	put_field(buf, &len, name, nn);
	idem_key(buf, len, out);
	return WQ_OK;
}

wq_rc wq_operation_find(wq_db *db, const char *tenant, const char *scope, const char *kind,
			const char *key, int64_t *task_id, wq_error *err)
{
	int64_t id = 0;
	wq_rc rc;

	if (!db || !task_id)
		return wq__err(err, WQ_EINVAL, "wq_operation_find needs a store and an out id");
	if (!key || !*key)
		return wq__err(err, WQ_EINVAL, "an operation key is required");
	if (strlen(key) > WQ_KEY_MAX)
		return wq__err(err, WQ_EINVAL, "operation key is %zu bytes; at most %d are allowed",
			       strlen(key), WQ_KEY_MAX);
	if (kind && (rc = wq__check_kind(kind, err)) != WQ_OK)
		return rc;
	rc = WQ__STORE(db, operation_find, tenant ? tenant : "", scope ? scope : "", kind, key,
		       &id, err);
	if (rc == WQ_OK)
		*task_id = id;
	return rc;
}

wq_rc wq_attempts(wq_db *db, int64_t task_id, wq_attempt **out, size_t *n, wq_error *err)
{
	if (!db || !out || !n)
		return wq__err(err, WQ_EINVAL, "wq_attempts needs a store and out parameters");
	if (task_id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)task_id);
	return WQ__STORE(db, attempts, task_id, out, n, err);
}
