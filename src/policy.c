/* policy.c — issue 10's limits and kind policies applied by the core (see policy.h). */
#include "policy.h"
#include "worker_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "limits" or "limits.TENANT": where l was configured, for messages. */
static const char *section_of(const struct wq__limit_config *l, char *buf, size_t sz)
{
	snprintf(buf, sz, l->named ? "limits.%s" : "limits", l->tenant);
	return buf;
}

int wq__policy_version_ok(const struct wq__kind_config *k, int v)
{
	if (!k || !k->payload_versions)
		return 1;
	return v >= 1 && v <= 63 && (k->payload_versions & (UINT64_C(1) << v));
}

/* The versions of k as "1,2" into buf. */
static const char *versions_text(const struct wq__kind_config *k, char *buf, size_t sz)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int v = 1; v <= 63 && n < sz; v++)
		if (k->payload_versions & (UINT64_C(1) << v))
			n += (size_t)snprintf(buf + n, sz - n, "%s%d", n ? "," : "", v);
	return buf;
}

wq_rc wq__policy_enqueue(const wq_config *cfg, const char *kind, const char *tenant,
			 const char *scope, int version, size_t payload_len, wq_error *err)
{
	const struct wq__kind_config *k = wq__config_kind(cfg, kind);
	const struct wq__limit_config *l = wq__config_limits(cfg, tenant);
	char buf[WQ_NAME_MAX + 16];

	if (!cfg)
		return WQ_OK;
	if (!wq__policy_version_ok(k, version))
		return wq__err(err, WQ_EINVAL,
			       "payload version %d is not accepted by kind %s (payload_versions = "
			       "%s in %s)",
			       version, kind, versions_text(k, buf, sizeof buf), cfg->path);
	if (l && l->max_payload_bytes && payload_len > l->max_payload_bytes)
		return wq__err(err, WQ_ELIMIT,
			       "limit reached: max_payload_bytes = %zu ([%s]) for tenant '%s' "
			       "scope '%s': the payload is %zu bytes; nothing was enqueued",
			       l->max_payload_bytes, section_of(l, buf, sizeof buf), tenant, scope,
			       payload_len);
	return WQ_OK;
}

size_t wq__policy_result_max(const wq_config *cfg, const char *tenant, char *name,
			     size_t namesz)
{
	const struct wq__limit_config *l = wq__config_limits(cfg, tenant);
	char buf[WQ_NAME_MAX + 16];

	if (l && l->max_result_bytes && l->max_result_bytes < cfg->result_max) {
		if (name)
			snprintf(name, namesz, "max_result_bytes ([%s])",
				 section_of(l, buf, sizeof buf));
		return l->max_result_bytes;
	}
	if (name)
		snprintf(name, namesz, "result_max");
	return cfg->result_max;
}

/* ---- what claims carry (op_limit.c enforces it) ---- */

static int claim_policy_build(struct wq_worker *w, struct wq__claim_policy *p)
{
	const wq_config *cfg = w->cfg;
	int any = 0;

	for (size_t i = 0; i < w->nkinds; i++) {
		const struct wq__kind_config *k = wq__config_kind(cfg, w->kinds[i]);
		any |= k && k->concurrency > 0;
	}
	if (any && !(p->concurrency = calloc(w->nkinds, sizeof(int))))
		return -1;
	for (size_t i = 0; any && i < w->nkinds; i++) {
		const struct wq__kind_config *k = wq__config_kind(cfg, w->kinds[i]);
		p->concurrency[i] = k ? k->concurrency : 0;
	}
	for (size_t i = 0; i < cfg->nlimits; i++)
		p->nstarts += cfg->limits[i].max_starts_per_day > 0;
	if (!p->nstarts)
		return 0;
	/* every section, also those without the limit: [limits.T] replaces [limits] */
	p->nstarts = cfg->nlimits;
	p->starts = calloc(p->nstarts, sizeof(*p->starts));
	p->sections = calloc(p->nstarts, sizeof(*p->sections));
	if (!p->starts || !p->sections)
		return -1;
	for (size_t i = 0; i < p->nstarts; i++) {
		const struct wq__limit_config *l = &cfg->limits[i];

		p->starts[i].tenant = l->tenant;
		p->starts[i].named = l->named;
		p->starts[i].max = l->max_starts_per_day;
		p->starts[i].section = section_of(l, p->sections[i], sizeof(p->sections[i]));
	}
	return 0;
}

int wq__policy_claim(struct wq_worker *w, struct wq__claim_req *req)
{
	struct wq__claim_policy *p = &w->policy;

	if (!p->ready) {
		if (claim_policy_build(w, p) != 0) {
			wq__policy_free(w);
			wq__worker_log(w, "error", "claim: out of memory for the limits; not claiming");
			return -1;
		}
		p->ready = 1;
	}
	req->concurrency = p->concurrency;
	req->starts = p->starts;
	req->nstarts = p->nstarts;
	return 0;
}

void wq__policy_free(struct wq_worker *w)
{
	free(w->policy.concurrency);
	free(w->policy.starts);
	free(w->policy.sections);
	memset(&w->policy, 0, sizeof(w->policy));
}

/* ---- payload versions a worker accepts ---- */

int wq__policy_version_refused(struct wq_worker *w, struct wq__job *j)
{
	struct wq__run_facts f;
	struct wq__run_policy p;
	struct wq__decided d;
	char why[200], vs[200];

	if (wq__policy_version_ok(j->kind, j->t.payload_version))
		return 0;
	snprintf(why, sizeof(why), "payload version %d; kind %s accepts %s (payload_versions)",
		 j->t.payload_version, j->t.kind, versions_text(j->kind, vs, sizeof(vs)));
	memset(&f, 0, sizeof(f));
	f.version_refused = 1;
	f.spawn_error = why;
	f.exit_status = -1;
	wq__worker_job_policy(j, &p);
	wq__outcome_decide(&f, &p, wq_now(), WQ__RND_LAZY, &d);
	wq__worker_finish_job(w, j, &d.o, NULL);
	return 1;
}
