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

/* What a worker's claims carry for the store to enforce (op_limit.c): the kinds'
 * concurrency (parallel to the worker's kinds) and the [limits] max_starts_per_day. Built
 * once, at the first claim (the kinds are final by then); owned by the worker. */
struct wq__claim_policy {
	int ready;
	int *concurrency;                 /* NULL: no kind is limited */
	struct wq__starts_limit *starts;  /* NULL: no starts limit */
	size_t nstarts;
	char (*sections)[WQ_NAME_MAX + 8]; /* starts[i].section points here */
};

struct wq_worker;
struct wq__job;
/* Before j's handler starts: when its kind's payload_versions do not list the task's
 * version, records the attempt failed (unsupported-payload-version, outcome.c) without
 * running anything and returns 1; else 0. */
int wq__policy_version_refused(struct wq_worker *w, struct wq__job *j);
/* Fills req->concurrency / starts / nstarts for w's claim; -1 when out of memory (the
 * claim must then wait: a limit is never dropped silently). */
int wq__policy_claim(struct wq_worker *w, struct wq__claim_req *req);
void wq__policy_free(struct wq_worker *w);

#endif /* WQ_POLICY_H */
