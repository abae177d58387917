/* config.c — the worker configuration file (INI, parsed by libinih), validated whole at
 * load: an unknown section or key, a bad value or a missing command is an error naming
 * the file and line, and no half-read configuration is ever returned.
 *
 * The INI grammar is read by config_ini.c (not libinih: its Debian build splits lines
 * over 200 bytes). Inline comments start at " #" or " ;" outside quotes ('...', "..."
 * and \ as in the command splitter, argv.c); a line longer than WQ__CONFIG_LINE_MAX is
 * refused naming it, never truncated. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define URL_MAX 8192 /* a webhook URL, in bytes */

struct parse {
	wq_config *cfg;
	const char *name;
	wq_error *err;        /* never NULL while parsing */
	wq_rc rc;             /* first error wins */
	char section[160];    /* current section, to detect a repeated one */
	unsigned seen;        /* keys seen in the current section (bit per key index) */
	struct wq__kind_config *kind; /* the [kind.X] being read */
	struct wq__channel_config *channel; /* the [channel.X] being read */
	struct wq__limit_config *limit; /* the [limits] / [limits.T] being read */
};

enum key_type {
	K_DURATION, K_INT, K_SIZE, K_STRING, K_COMMAND, K_ON_INTERRUPT,
	K_CHANNEL_TYPE, K_URL, K_RECIPIENT, K_VERSIONS, K_DB, K_LOG_FORMAT,
};

struct key {
	const char *name;
	enum key_type type;
	size_t offset; /* into wq_config or wq__kind_config */
	long long min, max;
};

#define WK(n, t, f, lo, hi) {n, t, offsetof(struct wq_config, f), lo, hi}
#define KK(n, t, f, lo, hi) {n, t, offsetof(struct wq__kind_config, f), lo, hi}
#define CK(n, t, f, lo, hi) {n, t, offsetof(struct wq__channel_config, f), lo, hi}
#define DAY (86400LL * WQ__US_PER_S)

static const struct key worker_keys[] = {
	WK("db", K_DB, db, 0, 0),
	WK("concurrency", K_INT, concurrency, 1, 1024),
	WK("drain_timeout", K_DURATION, drain_timeout, 0, DAY),
	WK("heartbeat", K_DURATION, heartbeat, 10 * WQ__US_PER_MS, 3600 * WQ__US_PER_S),
	WK("lease", K_DURATION, lease, 20 * WQ__US_PER_MS, DAY),
	WK("poll_interval", K_DURATION, poll_interval, 1 * WQ__US_PER_MS, 3600 * WQ__US_PER_S),
	WK("kill_grace", K_DURATION, kill_grace, 0, 3600 * WQ__US_PER_S),
	WK("result_max", K_SIZE, result_max, 0, 256LL << 20),
	WK("stderr_max", K_SIZE, stderr_max, 0, 16LL << 20),
	WK("delivery_concurrency", K_INT, delivery_concurrency, 1, 1024),
	WK("operators_inbox", K_RECIPIENT, operators_inbox, 0, 0),
	WK("schedule_lease", K_DURATION, schedule_lease, 20 * WQ__US_PER_MS, DAY), /* issue 12 */
	WK("log_format", K_LOG_FORMAT, log_json, 0, 0), /* issue 14 */
	WK("prefetch", K_INT, prefetch, 0, 100000), /* wave4 batch (worker_prefetch.c) */
	WK("store_connections", K_INT, store_connections, 1, WQ__LANES_MAX), /* worker_store.c */
};

/* [retention] (SPEC §15), read by `wakeq prune --config`. */
static const struct key retention_keys[] = {
	WK("tasks", K_DURATION, task_retention, 1, 3650 * DAY),
	WK("operations", K_DURATION, operation_retention, 1, 3650 * DAY),
};

static const struct key kind_keys[] = {
	KK("command", K_COMMAND, argv, 0, 0),
	KK("timeout", K_DURATION, timeout, 0, 30 * DAY),
	KK("max_attempts", K_INT, max_attempts, 1, 1000),
	KK("retry_backoff", K_DURATION, retry_backoff, 0, DAY),
	KK("retry_backoff_max", K_DURATION, retry_backoff_max, 0, 30 * DAY),
	KK("on_interrupt", K_ON_INTERRUPT, on_interrupt, 0, 0),
	KK("concurrency", K_INT, concurrency, 1, 100000),        /* issue 10 */
	KK("payload_versions", K_VERSIONS, payload_versions, 0, 0), /* issue 10 */
	KK("keep_stderr", K_SIZE, keep_stderr, 0, 64LL << 10), /* issue 14 */
};

/* [channel.NAME]; `url` only for webhooks, `command` only for commands. */
static const struct key channel_keys[] = {
	CK("type", K_CHANNEL_TYPE, type, 0, 0),
	CK("url", K_URL, url, 0, 0),
	CK("command", K_COMMAND, argv, 0, 0),
	CK("timeout", K_DURATION, timeout, 1 * WQ__US_PER_MS, 3600 * WQ__US_PER_S),
	CK("max_attempts", K_INT, max_attempts, 1, 1000),
	CK("retry_backoff", K_DURATION, retry_backoff, 0, DAY),
	CK("retry_backoff_max", K_DURATION, retry_backoff_max, 0, 30 * DAY),
};

/* [limits], [limits.TENANT] (issue 10). */
#define LK(n, t, f, lo, hi) {n, t, offsetof(struct wq__limit_config, f), lo, hi}
static const struct key limit_keys[] = {
	LK("max_active", K_INT, max_active, 1, 1000000000),
	LK("max_payload_bytes", K_SIZE, max_payload_bytes, 1, 1LL << 30),
	LK("max_result_bytes", K_SIZE, max_result_bytes, 1, 1LL << 30),
	LK("max_starts_per_day", K_INT, max_starts_per_day, 1, 1000000000),
	LK("max_followups", K_INT, max_followups, 0, 10000),
	LK("max_followup_depth", K_INT, max_followup_depth, 0, 1000),
};

static int fail(struct parse *p, wq_rc code, const char *fmt, const char *a, const char *b)
{
	if (p->rc == WQ_OK) {
		p->rc = code;
		/* the file and line are added by the caller once libinih reports the line */
		snprintf(p->err->message, sizeof p->err->message, fmt, a, b);
	}
	return 0;
}

/* Cuts an inline comment — '#' or ';' at the start or after a blank, outside quotes
 * (the quoting of argv.c: '...', "...", \) — then trailing blanks. */
static void strip_comment(char *v)
{
	char quote = 0; /* the open quote, or 0 */
	char *end;

	for (char *c = v; *c; c++) {
		if (quote) {
			if (*c == quote)
				quote = 0;
			else if (quote == '"' && *c == '\\' && c[1])
				c++;
		} else if (*c == '\'' || *c == '"') {
			quote = *c;
		} else if (*c == '\\' && c[1]) {
			c++;
		} else if ((*c == '#' || *c == ';') && (c == v || c[-1] == ' ' || c[-1] == '\t')) {
			*c = '\0';
			break;
		}
	}
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
}

static int parse_size(const char *v, long long *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || n < 0)
		return -1;
	if (strcmp(end, "") == 0 || strcmp(end, "B") == 0)
		*out = n;
	else if (strcmp(end, "KiB") == 0 || strcmp(end, "K") == 0)
		*out = n << 10;
	else if (strcmp(end, "MiB") == 0 || strcmp(end, "M") == 0)
		*out = n << 20;
	else
		return -1;
	return (n > (1LL << 40)) ? -1 : 0;
}

/* "1,2, 3" into a bit set (bit v for version v, 1..63); -1 when malformed. */
static int parse_versions(const char *v, uint64_t *out)
{
	uint64_t set = 0;
	char *end;
	long n;

	for (;;) {
		while (*v == ' ' || *v == '\t')
			v++;
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || end == v || n < 1 || n > 63)
			return -1;
		set |= UINT64_C(1) << n;
		v = end;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!*v)
			break;
		if (*v++ != ',')
			return -1;
	}
	*out = set;
	return 0;
}

/* 1 when v is 1..max bytes, none of them a space or control character. */
static int token_ok(const char *v, size_t max)
{
	size_t n = strlen(v);

	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f)
			return 0;
	return 1;
}

/* The port of a scheme://[user@]host[:port]/... URL: 0 when it names none or names one
 * in 1..65535, else -1 with the port's text in port (at most portsz-1 bytes). */
static int url_port_check(const char *url, char *port, size_t portsz)
{
	const char *a = strstr(url, "://"), *end, *at, *colon;
	size_t n;

	if (!a)
		return 0;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (at = end; at > a && at[-1] != '@'; at--)
		;
	a = at; /* past any user:password@ */
	if (*a == '[') { /* [IPv6]:port */
		const char *close = memchr(a, ']', (size_t)(end - a));
		if (!close)
			return 0;
		a = close;
	}
	colon = memchr(a, ':', (size_t)(end - a));
	if (!colon || colon + 1 == end)
		return 0;
	n = (size_t)(end - colon - 1);
	snprintf(port, portsz, "%.*s", (int)n, colon + 1);
	if (n > 5 || strspn(colon + 1, "0123456789") < n)
		return -1;
	return atoi(port) >= 1 && atoi(port) <= 65535 ? 0 : -1;
}

static int set_value(struct parse *p, const struct key *k, void *base, const char *v)
{
	char *field = (char *)base + k->offset;
	char port[16]; /* a bad port's text, for the message */
	long long n = 0;
	int64_t us;
	char *end;

	switch (k->type) {
	case K_DURATION:
		if (wq_duration_parse(v, &us, NULL) != WQ_OK)
			return fail(p, WQ_ECONFIG, "%s: invalid duration '%s' (e.g. 500ms, 30s, 5m)",
				    k->name, v);
		if (us < k->min || us > k->max)
			return fail(p, WQ_ECONFIG, "%s: duration '%s' is out of range", k->name, v);
		*(int64_t *)field = us;
		return 1;
	case K_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno || end == v || *end || n < k->min || n > k->max)
			return fail(p, WQ_ECONFIG, "%s: '%s' is not a whole number in range", k->name, v);
		*(int *)field = (int)n;
		return 1;
	case K_SIZE:
		if (parse_size(v, &n) != 0 || n < k->min || n > k->max)
			return fail(p, WQ_ECONFIG, "%s: invalid size '%s' (bytes, or with KiB/MiB)",
				    k->name, v);
		*(size_t *)field = (size_t)n;
		return 1;
	case K_DB:
		if (url_port_check(v, port, sizeof port) != 0)
			return fail(p, WQ_ECONFIG, "%s: port '%s' is out of range (1..65535)", k->name,
				    port);
		/* fall through */
	case K_STRING:
		free(*(char **)field);
		*(char **)field = strdup(v);
		return *(char **)field ? 1 : fail(p, WQ_ENOMEM, "%s%s: out of memory", k->name, "");
	case K_COMMAND: {
		wq_error e;
		char **argv = NULL;
		if (wq__argv_split(v, &argv, &e) != WQ_OK)
			return fail(p, WQ_ECONFIG, "command: %.300s%s", e.message, "");
		if (!argv[0]) {
			wq__argv_free(argv);
			return fail(p, WQ_ECONFIG, "command is empty%s%s", "", "");
		}
		wq__argv_free(*(char ***)field);
		*(char ***)field = argv;
		return 1;
	}
	case K_ON_INTERRUPT:
		if (strcmp(v, "hold") == 0)
			*(enum wq__on_interrupt *)field = WQ__ON_INTERRUPT_HOLD;
		else if (strcmp(v, "retry") == 0)
			*(enum wq__on_interrupt *)field = WQ__ON_INTERRUPT_RETRY;
		else
			return fail(p, WQ_ECONFIG, "on_interrupt: '%s' is not hold or retry%s", v, "");
		return 1;
	case K_LOG_FORMAT:
		if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)
			return fail(p, WQ_ECONFIG, "log_format: '%s' is not text or json%s", v, "");
		*(int *)field = strcmp(v, "json") == 0;
		return 1;
	case K_CHANNEL_TYPE:
		if (strcmp(v, "webhook") == 0)
			*(enum wq__channel_type *)field = WQ__CHANNEL_WEBHOOK;
		else if (strcmp(v, "command") == 0)
			*(enum wq__channel_type *)field = WQ__CHANNEL_COMMAND;
		else
			return fail(p, WQ_ECONFIG, "type: '%s' is not webhook or command%s", v, "");
		return 1;
	case K_URL: {
		char shown[512];
		if ((strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) ||
		    !token_ok(v, URL_MAX) || strcmp(v, "http://") == 0 ||
		    strcmp(v, "https://") == 0)
			/* shown without user, password or query: they are credentials */
			return fail(p, WQ_ECONFIG,
				    "url: '%s' is not an http:// or https:// URL (no spaces, at "
				    "most 8192 bytes)%s",
				    wq__url_safe(v, shown, sizeof shown), "");
		if (url_port_check(v, port, sizeof port) != 0)
			return fail(p, WQ_ECONFIG, "url: port '%s' is out of range (1..65535)%s",
				    port, "");
		free(*(char **)field);
		*(char **)field = strdup(v);
		return *(char **)field ? 1 : fail(p, WQ_ENOMEM, "%s%s: out of memory", k->name, "");
	}
	case K_VERSIONS: /* issue 10: "1,2" → bit v set for each version v */
		return parse_versions(v, (uint64_t *)field) == 0
			       ? 1
			       : fail(p, WQ_ECONFIG, "%s: '%s' is not a list of versions 1..63 "
						     "(e.g. 1,2)", k->name, v);
	case K_RECIPIENT:
		if (!token_ok(v, WQ_NAME_MAX - 6))
			return fail(p, WQ_ECONFIG,
				    "%s: '%s' is not a recipient name (1..122 bytes, no spaces)",
				    k->name, v);
		free(*(char **)field);
		*(char **)field = strdup(v);
		return *(char **)field ? 1 : fail(p, WQ_ENOMEM, "%s%s: out of memory", k->name, "");
	}
	return 0;
}

static int apply_key(struct parse *p, const struct key *keys, size_t nkeys, void *base,
		     const char *section, const char *name, const char *v)
{
	for (size_t i = 0; i < nkeys; i++) {
		if (strcmp(keys[i].name, name) != 0)
			continue;
		if (p->seen & (1u << i))
			return fail(p, WQ_ECONFIG, "[%s] %s: key given twice", section, name);
		p->seen |= 1u << i;
		return set_value(p, &keys[i], base, v);
	}
	return fail(p, WQ_ECONFIG, "[%s] unknown key '%s'", section, name);
}

static struct wq__kind_config *add_kind(struct parse *p, const char *name)
{
	wq_config *c = p->cfg;
	struct wq__kind_config *k;

	wq_error e;

	if (wq__check_kind(name, &e) != WQ_OK) {
		fail(p, WQ_ECONFIG, "[kind.%.64s]: %.300s", name, e.message);
		return NULL;
	}
	if (wq__config_kind(c, name)) {
		fail(p, WQ_ECONFIG, "[kind.%s]: section given twice%s", name, "");
		return NULL;
	}
	k = realloc(c->kinds, (c->nkinds + 1) * sizeof *k);
	if (!k) {
		fail(p, WQ_ENOMEM, "out of memory%s%s", "", "");
		return NULL;
	}
	c->kinds = k;
	k = &c->kinds[c->nkinds++];
	wq__kind_defaults(k, name);
	return k;
}

static struct wq__channel_config *add_channel(struct parse *p, const char *name)
{
	wq_config *c = p->cfg;
	struct wq__channel_config *ch;

	/* "webhook:NAME" must fit a task's channel (WQ_NAME_MAX bytes). */
	if (!token_ok(name, WQ_NAME_MAX - 8)) {
		fail(p, WQ_ECONFIG, "[channel.%.64s]: a channel name is 1..120 bytes without "
				    "spaces%s", name, "");
		return NULL;
	}
	if (wq__config_channel(c, name)) {
		fail(p, WQ_ECONFIG, "[channel.%s]: section given twice%s", name, "");
		return NULL;
	}
	ch = realloc(c->channels, (c->nchannels + 1) * sizeof *ch);
	if (!ch) {
		fail(p, WQ_ENOMEM, "out of memory%s%s", "", "");
		return NULL;
	}
	c->channels = ch;
	ch = &c->channels[c->nchannels++];
	memset(ch, 0, sizeof *ch);
	wq__strlcpy(ch->name, name, sizeof ch->name);
	ch->timeout = 5 * WQ__US_PER_S;
	ch->max_attempts = WQ__DELIVERY_MAX_ATTEMPTS;
	ch->retry_backoff = 1 * WQ__US_PER_S;
	ch->retry_backoff_max = 3600 * WQ__US_PER_S;
	return ch;
}

/* A [channel.X] key. The type is known before its keys are read (prescan), so a key
 * that does not fit it is refused on its own line. */
static int channel_entry(struct parse *p, const char *section, const char *name,
			 const char *v)
{
	enum wq__channel_type t = p->channel->type;

	if (strcmp(name, "url") == 0 && t == WQ__CHANNEL_COMMAND)
		return fail(p, WQ_ECONFIG, "[%s] url: a command channel has no url (type = "
					   "webhook takes one)%s", section, "");
	if (strcmp(name, "command") == 0 && t == WQ__CHANNEL_WEBHOOK)
		return fail(p, WQ_ECONFIG, "[%s] command: a webhook channel has no command (type = "
					   "command takes one)%s", section, "");
	return apply_key(p, channel_keys, WQ__ARRAY_LEN(channel_keys), p->channel, section, name,
			 v);
}

/* ---- [limits] (issue 10) ---- */

static struct wq__limit_config *find_limit(const wq_config *c, int named, const char *tenant)
{
	for (size_t i = 0; i < c->nlimits; i++)
		if (c->limits[i].named == named && strcmp(c->limits[i].tenant, tenant) == 0)
			return &c->limits[i];
	return NULL;
}

const struct wq__limit_config *wq__config_limits(const wq_config *cfg, const char *tenant)
{
	const struct wq__limit_config *l;

	if (!cfg)
		return NULL;
	l = tenant && *tenant ? find_limit(cfg, 1, tenant) : NULL;
	return l ? l : find_limit(cfg, 0, "");
}

/* The section "limits" or "limits.TENANT", registered by the prescan. */
static struct wq__limit_config *add_limit(struct parse *p, const char *sec)
{
	int named = sec[6] == '.';
	const char *tenant = named ? sec + 7 : "";
	wq_config *c = p->cfg;
	struct wq__limit_config *l;

	if (named && (!*tenant || strlen(tenant) > WQ_NAME_MAX)) {
		fail(p, WQ_ECONFIG, "[%s]: a tenant name of 1..128 bytes%s", sec, "");
		return NULL;
	}
	if (find_limit(c, named, tenant)) {
		fail(p, WQ_ECONFIG, "[%s]: section given twice%s", sec, "");
		return NULL;
	}
	l = realloc(c->limits, (c->nlimits + 1) * sizeof *l);
	if (!l) {
		fail(p, WQ_ENOMEM, "out of memory%s%s", "", "");
		return NULL;
	}
	c->limits = l;
	l = &c->limits[c->nlimits++];
	memset(l, 0, sizeof *l);
	l->named = named;
	l->max_followups = l->max_followup_depth = -1; /* not set: no limit */
	wq__strlcpy(l->tenant, tenant, sizeof l->tenant);
	return l;
}

static int is_limits_section(const char *sec)
{
	return strcmp(sec, "limits") == 0 || strncmp(sec, "limits.", 7) == 0;
}

/* One key of `section` (the value's comment already cut) to the table that section reads. */
static int section_entry(struct parse *p, const char *section, const char *name,
			 const char *v)
{
	if (p->channel)
		return channel_entry(p, section, name, v);
	if (strncmp(section, "source.", 7) == 0) { /* issue 13 */
		char msg[200];

		if (wq__source_entry(p->cfg, section + 7, name, v, msg, sizeof msg))
			return fail(p, WQ_ECONFIG, "%s%s", msg, "");
		return 1;
	}
	if (p->limit)
		return apply_key(p, limit_keys, WQ__ARRAY_LEN(limit_keys), p->limit, section, name,
				 v);
	if (strcmp(section, "retention") == 0)
		return apply_key(p, retention_keys, WQ__ARRAY_LEN(retention_keys), p->cfg, section,
				 name, v);
	if (p->kind)
		return apply_key(p, kind_keys, WQ__ARRAY_LEN(kind_keys), p->kind, section, name, v);
	return apply_key(p, worker_keys, WQ__ARRAY_LEN(worker_keys), p->cfg, section, name, v);
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	char *v;
	int ok;

	if (p->rc != WQ_OK)
		return 0;
	if (strcmp(section, p->section) != 0) {
		wq__strlcpy(p->section, section, sizeof p->section);
		p->seen = 0;
		p->kind = strncmp(section, "kind.", 5) == 0
				  ? (struct wq__kind_config *)wq__config_kind(p->cfg, section + 5)
				  : NULL;
		p->channel = strncmp(section, "channel.", 8) == 0
				     ? (struct wq__channel_config *)wq__config_channel(p->cfg,
										       section + 8)
				     : NULL;
		p->limit = is_limits_section(section)
				   ? find_limit(p->cfg, section[6] == '.',
						section[6] == '.' ? section + 7 : "")
				   : NULL;
	}
	if (!*section)
		return fail(p, WQ_ECONFIG, "key '%s' outside a section%s", name, "");
	if (!(v = strdup(value ? value : "")))
		return fail(p, WQ_ENOMEM, "out of memory%s%s", "", "");
	strip_comment(v);
	ok = section_entry(p, section, name, v);
	free(v);
	return ok;
}

/* Checks what libinih cannot: line lengths and section names (also of empty sections),
 * and registers the kinds in file order. Returns the failing line, or 0. */
/* Within a [channel.X] section: a "type = webhook|command" line sets ch->type ahead of
 * the other keys (on_entry checks the value again, on its own line). */
static void prescan_type(struct wq__channel_config *ch, const char *l, size_t len)
{
	char buf[256], *c = buf, *v;

	if (len >= sizeof buf) /* not a type line; on_entry reads it */
		return;
	memcpy(buf, l, len);
	buf[len] = '\0';
	while (*c == ' ' || *c == '\t')
		c++;
	if (strncmp(c, "type", 4) != 0)
		return;
	c += 4;
	while (*c == ' ' || *c == '\t')
		c++;
	if (*c != '=' && *c != ':')
		return;
	v = c + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	strip_comment(v);
	if (strcmp(v, "webhook") == 0)
		ch->type = WQ__CHANNEL_WEBHOOK;
	else if (strcmp(v, "command") == 0)
		ch->type = WQ__CHANNEL_COMMAND;
}

static int prescan(struct parse *p, const char *text)
{
	int line = 0, worker_seen = 0, retention_seen = 0;
	size_t channel = 0; /* 1 + index of the [channel.X] being read, 0 outside one */

	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n'), *c = l, *close;
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char sec[160];

		line++;
		if (len > WQ__CONFIG_LINE_MAX) {
			fail(p, WQ_ECONFIG, "line is longer than %s bytes (the limit of a config "
					    "line)%s", "65536", "");
			return line;
		}
		while (c < l + len && (*c == ' ' || *c == '\t'))
			c++;
		if (channel && c < l + len && *c != '[')
			prescan_type(&p->cfg->channels[channel - 1], l, len);
		if (c < l + len && *c == '[') {
			channel = 0;
			close = memchr(c, ']', (size_t)(l + len - c));
			if (!close || (size_t)(close - c - 1) >= sizeof sec) {
				fail(p, WQ_ECONFIG, "malformed section header%s%s", "", "");
				return line;
			}
			memcpy(sec, c + 1, (size_t)(close - c - 1));
			sec[close - c - 1] = '\0';
			if (strcmp(sec, "worker") == 0) {
				if (worker_seen++) {
					fail(p, WQ_ECONFIG, "section [worker] given twice%s%s", "", "");
					return line;
				}
			} else if (strcmp(sec, "retention") == 0) {
				if (retention_seen++) {
					fail(p, WQ_ECONFIG, "section [retention] given twice%s%s", "", "");
					return line;
				}
			} else if (strncmp(sec, "kind.", 5) == 0) {
				if (!add_kind(p, sec + 5))
					return line;
				p->cfg->kinds[p->cfg->nkinds - 1].line = line;
			} else if (is_limits_section(sec)) {
				if (!add_limit(p, sec))
					return line;
				p->cfg->limits[p->cfg->nlimits - 1].line = line;
			} else if (strncmp(sec, "source.", 7) == 0) { /* issue 13 */
				const char *why = wq__source_add(p->cfg, sec + 7, line);

				if (why) {
					fail(p, WQ_ECONFIG, "[%s]: %s", sec, why);
					return line;
				}
			} else if (strncmp(sec, "channel.", 8) == 0) {
				if (!add_channel(p, sec + 8))
					return line;
				channel = p->cfg->nchannels;
				p->cfg->channels[channel - 1].line = line;
			} else {
				fail(p, WQ_ECONFIG, "unknown section [%s] (expected [worker], [retention], "
				     "[kind.NAME], [channel.NAME], [source.NAME] or [limits[.TENANT]])",
				     sec, "");
				return line;
			}
		}
		l += len + (nl ? 1 : 0);
	}
	return 0;
}

static void set_defaults(wq_config *c)
{
	c->concurrency = 4;
	c->drain_timeout = 10 * WQ__US_PER_S;
	c->heartbeat = 2 * WQ__US_PER_S;
	c->poll_interval = 250 * WQ__US_PER_MS;
	c->kill_grace = 5 * WQ__US_PER_S;
	c->result_max = 1u << 20;
	c->stderr_max = 64u << 10;
	c->delivery_concurrency = 4;
}

/* Whole-file checks once every key is read. */
static wq_rc validate(wq_config *c, wq_error *err)
{
	if (c->lease == 0)
		c->lease = 10 * c->heartbeat;
	if (c->lease < 2 * c->heartbeat)
		return wq__err(err, WQ_ECONFIG,
			       "%s: [worker] lease must be at least twice the heartbeat", c->path);
	if (c->schedule_lease == 0) /* schedules (issue 12): renewed every heartbeat */
		c->schedule_lease = 10 * c->heartbeat;
	if (c->schedule_lease < 2 * c->heartbeat)
		return wq__err(err, WQ_ECONFIG,
			       "%s: [worker] schedule_lease must be at least twice the heartbeat",
			       c->path);
	/* A kind without a command, and a file without kinds, are for a program that
	 * registers in-process handlers (wq_worker_register): wq_worker_run decides, once
	 * it knows them (worker.c, inproc_prepare). */
	if (c->task_retention && c->operation_retention &&
	    c->operation_retention < c->task_retention)
		return wq__err(err, WQ_ECONFIG,
			       "%s: [retention] operations is shorter than tasks; operation records "
			       "must be kept at least as long as task rows",
			       c->path);
	if (wq__sources_validate(c, err) != WQ_OK) /* issue 13 */
		return WQ_ECONFIG;
	for (size_t i = 0; i < c->nchannels; i++) {
		const struct wq__channel_config *ch = &c->channels[i];

		if (!ch->type)
			return wq__err(err, WQ_ECONFIG, "%s:%d: [channel.%s] has no type (webhook or "
				       "command)", c->path, ch->line, ch->name);
		if (ch->type == WQ__CHANNEL_WEBHOOK && !ch->url)
			return wq__err(err, WQ_ECONFIG, "%s:%d: [channel.%s] is a webhook without a url",
				       c->path, ch->line, ch->name);
		if (ch->type == WQ__CHANNEL_COMMAND && !ch->argv)
			return wq__err(err, WQ_ECONFIG, "%s:%d: [channel.%s] has no command", c->path,
				       ch->line, ch->name);
	}
	return WQ_OK;
}

wq_rc wq_config_parse(const char *text, const char *name, wq_config **out, wq_error *err)
{
	struct parse p = {0};
	wq_error local;
	int line;

	p.err = err ? err : &local;
	p.name = name ? name : "config";
	p.cfg = calloc(1, sizeof *p.cfg);
	if (!p.cfg || !(p.cfg->path = strdup(p.name))) {
		free(p.cfg);
		return wq__err(err, WQ_ENOMEM, "out of memory reading %s", p.name);
	}
	set_defaults(p.cfg);
	line = prescan(&p, text);
	if (line == 0 && p.rc == WQ_OK)
		line = wq__ini_parse(text, on_entry, &p);
	if (line != 0 || p.rc != WQ_OK) {
		char msg[sizeof p.err->message];
		if (p.rc == WQ_OK) /* a syntax error libinih found on its own */
			snprintf(msg, sizeof msg, "syntax error (expected key = value)");
		else
			wq__strlcpy(msg, p.err->message, sizeof msg);
		wq_config_free(p.cfg);
		return wq__err(err, WQ_ECONFIG, "%s:%d: %s", p.name, line, msg);
	}
	if (validate(p.cfg, err) != WQ_OK) {
		wq_config_free(p.cfg);
		return WQ_ECONFIG;
	}
	*out = p.cfg;
	return WQ_OK;
}

wq_rc wq_config_load(const char *path, wq_config **out, wq_error *err)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	wq_rc rc;

	if (!f)
		return wq__err(err, WQ_ECONFIG, "cannot open config %s: %s", path, strerror(errno));
	for (;;) {
		if (cap - len < 4096) {
			char *n = cap > (1u << 20) ? NULL : realloc(text, cap + 8192);
			if (!n) {
				rc = wq__err(err, WQ_ECONFIG, "config %s is too large (over 1 MiB)", path);
				goto out;
			}
			text = n;
			cap += 8192;
		}
		size_t got = fread(text + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		rc = wq__err(err, WQ_ECONFIG, "cannot read config %s", path);
		goto out;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		rc = wq__err(err, WQ_ECONFIG, "config %s contains a NUL byte", path);
		goto out;
	}
	rc = wq_config_parse(text, path, out, err);
out:
	free(text);
	fclose(f);
	return rc;
}

void wq_config_free(wq_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nkinds; i++)
		wq__argv_free(cfg->kinds[i].argv);
	free(cfg->kinds);
	free(cfg->limits);
	for (size_t i = 0; i < cfg->nchannels; i++) {
		free(cfg->channels[i].url);
		wq__argv_free(cfg->channels[i].argv);
	}
	free(cfg->channels);
	wq__sources_free(cfg); /* issue 13 */
	free(cfg->operators_inbox);
	free(cfg->db);
	free(cfg->path);
	free(cfg);
}

const char *wq_config_db(const wq_config *cfg)
{
	return cfg ? cfg->db : NULL;
}

void wq_config_retention(const wq_config *cfg, wq_prune_opts *out)
{
	out->task_retention = cfg ? cfg->task_retention : 0;
	out->operation_retention = cfg ? cfg->operation_retention : 0;
}

void wq__kind_defaults(struct wq__kind_config *k, const char *name)
{
	memset(k, 0, sizeof *k);
	wq__strlcpy(k->name, name, sizeof k->name);
	k->retry_backoff = 1 * WQ__US_PER_S;
	k->retry_backoff_max = 3600 * WQ__US_PER_S;
}

const struct wq__kind_config *wq__config_kind(const wq_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->nkinds; i++)
		if (strcmp(cfg->kinds[i].name, name) == 0)
			return &cfg->kinds[i];
	return NULL;
}

const struct wq__channel_config *wq__config_channel(const wq_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->nchannels; i++)
		if (strcmp(cfg->channels[i].name, name) == 0)
			return &cfg->channels[i];
	return NULL;
}

const char *wq__config_operators(const wq_config *cfg)
{
	return cfg && cfg->operators_inbox ? cfg->operators_inbox : "operators";
}
