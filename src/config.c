/* config.c — the worker configuration file (INI, parsed by libinih), validated whole at
 * load: an unknown section or key, a bad value or a missing command is an error naming
 * the file and line, and no half-read configuration is ever returned.
 *
 * Two rules on top of libinih: " #" starts an inline comment (libinih only knows ";"),
 * except inside "double quotes"; and a line longer than libinih's buffer is refused
 * instead of being split in two. */
#include "internal.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INI_LINE_LIMIT 199 /* libinih's INI_MAX_LINE (200) minus the terminator */

struct parse {
	wq_config *cfg;
	const char *name;
	wq_error *err;        /* never NULL while parsing */
	wq_rc rc;             /* first error wins */
	char section[160];    /* current section, to detect a repeated one */
	unsigned seen;        /* keys seen in the current section (bit per key index) */
	struct wq__kind_config *kind; /* the [kind.X] being read */
};

enum key_type { K_DURATION, K_INT, K_SIZE, K_STRING, K_COMMAND, K_ON_INTERRUPT };

struct key {
	const char *name;
	enum key_type type;
	size_t offset; /* into wq_config or wq__kind_config */
	long long min, max;
};

#define WK(n, t, f, lo, hi) {n, t, offsetof(struct wq_config, f), lo, hi}
#define KK(n, t, f, lo, hi) {n, t, offsetof(struct wq__kind_config, f), lo, hi}
#define DAY (86400LL * WQ__US_PER_S)

static const struct key worker_keys[] = {
	WK("db", K_STRING, db, 0, 0),
	WK("concurrency", K_INT, concurrency, 1, 1024),
	WK("drain_timeout", K_DURATION, drain_timeout, 0, DAY),
	WK("heartbeat", K_DURATION, heartbeat, 10 * WQ__US_PER_MS, 3600 * WQ__US_PER_S),
	WK("lease", K_DURATION, lease, 20 * WQ__US_PER_MS, DAY),
	WK("poll_interval", K_DURATION, poll_interval, 1 * WQ__US_PER_MS, 3600 * WQ__US_PER_S),
	WK("kill_grace", K_DURATION, kill_grace, 0, 3600 * WQ__US_PER_S),
	WK("result_max", K_SIZE, result_max, 0, 256LL << 20),
	WK("stderr_max", K_SIZE, stderr_max, 0, 16LL << 20),
};

static const struct key kind_keys[] = {
	KK("command", K_COMMAND, argv, 0, 0),
	KK("timeout", K_DURATION, timeout, 0, 30 * DAY),
	KK("max_attempts", K_INT, max_attempts, 1, 1000),
	KK("retry_backoff", K_DURATION, retry_backoff, 0, DAY),
	KK("retry_backoff_max", K_DURATION, retry_backoff_max, 0, 30 * DAY),
	KK("on_interrupt", K_ON_INTERRUPT, on_interrupt, 0, 0),
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

/* Cuts an inline " #" comment outside double quotes, then trailing blanks. */
static void strip_comment(char *v)
{
	int quoted = 0;
	char *end;

	for (char *c = v; *c; c++) {
		if (*c == '"')
			quoted = !quoted;
		else if (*c == '#' && !quoted && (c == v || c[-1] == ' ' || c[-1] == '\t')) {
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

static int set_value(struct parse *p, const struct key *k, void *base, const char *v)
{
	char *field = (char *)base + k->offset;
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
	memset(k, 0, sizeof *k);
	wq__strlcpy(k->name, name, sizeof k->name);
	k->retry_backoff = 1 * WQ__US_PER_S;
	k->retry_backoff_max = 3600 * WQ__US_PER_S;
	return k;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	char v[INI_LINE_LIMIT + 1];

	if (p->rc != WQ_OK)
		return 0;
	if (strcmp(section, p->section) != 0) {
		wq__strlcpy(p->section, section, sizeof p->section);
		p->seen = 0;
		p->kind = strncmp(section, "kind.", 5) == 0
				  ? (struct wq__kind_config *)wq__config_kind(p->cfg, section + 5)
				  : NULL;
	}
	if (!*section)
		return fail(p, WQ_ECONFIG, "key '%s' outside a section%s", name, "");
	wq__strlcpy(v, value ? value : "", sizeof v);
	strip_comment(v);
	if (p->kind)
		return apply_key(p, kind_keys, WQ__ARRAY_LEN(kind_keys), p->kind, section, name, v);
	return apply_key(p, worker_keys, WQ__ARRAY_LEN(worker_keys), p->cfg, section, name, v);
}

/* Checks what libinih cannot: line lengths and section names (also of empty sections),
 * and registers the kinds in file order. Returns the failing line, or 0. */
static int prescan(struct parse *p, const char *text)
{
	int line = 0, worker_seen = 0;

	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n'), *c = l, *close;
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char sec[160];

		line++;
		if (len > INI_LINE_LIMIT) {
			fail(p, WQ_ECONFIG, "line is longer than %s characters%s", "199", "");
			return line;
		}
		while (c < l + len && (*c == ' ' || *c == '\t'))
			c++;
		if (c < l + len && *c == '[') {
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
			} else if (strncmp(sec, "kind.", 5) == 0) {
				if (!add_kind(p, sec + 5))
					return line;
				p->cfg->kinds[p->cfg->nkinds - 1].line = line;
			} else {
				fail(p, WQ_ECONFIG, "unknown section [%s] (expected [worker] or [kind.NAME])",
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
}

/* Whole-file checks once every key is read. */
static wq_rc validate(wq_config *c, wq_error *err)
{
	if (c->lease == 0)
		c->lease = 10 * c->heartbeat;
	if (c->lease < 2 * c->heartbeat)
		return wq__err(err, WQ_ECONFIG,
			       "%s: [worker] lease must be at least twice the heartbeat", c->path);
	for (size_t i = 0; i < c->nkinds; i++)
		if (!c->kinds[i].argv)
			return wq__err(err, WQ_ECONFIG, "%s:%d: [kind.%s] has no command", c->path,
				       c->kinds[i].line, c->kinds[i].name);
	if (c->nkinds == 0)
		return wq__err(err, WQ_ECONFIG, "%s: no [kind.NAME] section: the worker has nothing to run",
			       c->path);
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
		line = ini_parse_string(text, on_entry, &p);
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
	free(cfg->db);
	free(cfg->path);
	free(cfg);
}

const char *wq_config_db(const wq_config *cfg)
{
	return cfg ? cfg->db : NULL;
}

const struct wq__kind_config *wq__config_kind(const wq_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->nkinds; i++)
		if (strcmp(cfg->kinds[i].name, name) == 0)
			return &cfg->kinds[i];
	return NULL;
}
