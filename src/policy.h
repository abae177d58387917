/*
 * policy.h — the limits and kind policies of issue 10 that the core applies outside the
 * store (policy.c): payload bytes and payload versions at enqueue, the result limit of an
 * attempt, the payload versions a worker accepts, and what a worker's claims carry for
 * the store to enforce (per-kind concurrency, starts per day). The store's side is in
 * src/store/op_limit.c and op_followup.c.
 */
#ifndef WQ_POLICY_H
#define WQ_POLICY_H

#include "internal.h"

/* Before an enqueue touches the store, against cfg (NULL: nothing to check):
 * WQ_EINVAL when the kind's payload_versions do not list `version`; WQ_ELIMIT when the
 * payload is beyond the tenant's max_payload_bytes, naming the limit, its value, its
 * section, the tenant and the scope. */
wq_rc wq__policy_enqueue(const wq_config *cfg, const char *kind, const char *tenant,
			 const char *scope, int version, size_t payload_len, wq_error *err);

/* The largest result an attempt of a task of `tenant` may store: [worker] result_max,
 * or the tenant's max_result_bytes when smaller. `name` (may be NULL) gets the limit's
 * name for messages: "result_max" or "max_result_bytes ([limits.T])". */
size_t wq__policy_result_max(const wq_config *cfg, const char *tenant, char *name,
			     size_t namesz);

/* 1 when kind k (NULL: no section) accepts payload version v. */
int wq__policy_version_ok(const struct wq__kind_config *k, int v);

#endif /* WQ_POLICY_H */
