/* policy.c — issue 10's limits and kind policies applied by the core (see policy.h). */
#include "policy.h"

#include <stdio.h>
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
