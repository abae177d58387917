/* intake_config.c — [source.NAME] sections of the worker file (issue 13), called by
 * config.c: one function per step of its parse (section header, key, whole file).
 *
 * The password is never part of the configuration text: `password_file` names a file,
 * `password_env` an environment variable, read when the worker starts the source
 * (intake_imap.c). A url with user information is refused for the same reason. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_TYPE, S_URL, S_USERNAME, S_PASSWORD_FILE, S_PASSWORD_ENV, S_PATH, S_KIND, S_POLL,
       S_MAX_HANDOUTS, S_OPERATORS, S_SEARCH_WINDOW };

static const char *const keys[] = {
	[S_TYPE] = "type", [S_URL] = "url", [S_USERNAME] = "username",
	[S_PASSWORD_FILE] = "password_file", [S_PASSWORD_ENV] = "password_env",
	[S_PATH] = "path", [S_KIND] = "kind", [S_POLL] = "poll",
	[S_MAX_HANDOUTS] = "max_handouts", [S_OPERATORS] = "operators",
	[S_SEARCH_WINDOW] = "search_window",
};

static struct wq__source_config *find(wq_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nsources; i++)
		if (strcmp(cfg->sources[i].name, name) == 0)
			return &cfg->sources[i];
	return NULL;
}

const char *wq__source_add(wq_config *cfg, const char *name, int line)
{
	struct wq__source_config *s;

	if (wq__intake_check_source(name, NULL) != WQ_OK)
		return "a source name is 1..64 characters of A-Z a-z 0-9 . _ -";
	if (find(cfg, name))
		return "section given twice";
	s = realloc(cfg->sources, (cfg->nsources + 1) * sizeof(*s));
	if (!s)
		return "out of memory";
	cfg->sources = s;
	s = &cfg->sources[cfg->nsources++];
	memset(s, 0, sizeof(*s));
	wq__strlcpy(s->name, name, sizeof(s->name));
	s->poll = 30 * WQ__US_PER_S;
	s->max_handouts = 3;
	s->search_window = WQ__IMAP_SEARCH_WINDOW;
	s->line = line;
	return NULL;
}

/* A decimal integer lo..hi into *dst; NULL, or what is wrong, written into msg. */
static const char *int_in(const char *v, const char *key, long lo, long hi, int *dst,
			  char *msg, size_t msgsz)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (!*v || *end || n < lo || n > hi)
		return snprintf(msg, msgsz, "%s must be %ld..%ld", key, lo, hi), msg;
	*dst = (int)n;
	return NULL;
}

/* A copy into *dst (malloc'd), refusing an empty value. */
static const char *set_text(char **dst, const char *v, const char *key, char *msg,
			    size_t msgsz)
{
	if (!*v) {
		snprintf(msg, msgsz, "%s needs a value", key);
		return msg;
	}
	if (!(*dst = strdup(v))) {
		snprintf(msg, msgsz, "out of memory");
		return msg;
	}
	return NULL;
}

/* imaps://HOST[:PORT]/MAILBOX, or imap:// to 127.0.0.1 only (the tests' Dovecot: plain
 * text never leaves the host). No user information: credentials are not config text. */
static const char *check_url(const char *v, char *msg, size_t msgsz)
{
	const char *host, *end;

	if (strncmp(v, "imaps://", 8) == 0)
		host = v + 8;
	else if (strncmp(v, "imap://", 7) == 0)
		host = v + 7;
	else
		return snprintf(msg, msgsz, "url must start with imaps:// (or imap:// to "
			       "127.0.0.1)"), msg;
	end = host + strcspn(host, "/");
	if (memchr(host, '@', (size_t)(end - host)))
		return snprintf(msg, msgsz, "url must not contain a user or password (use "
			       "username and password_file or password_env)"), msg;
	if (end == host || *end != '/' || !end[1])
		return snprintf(msg, msgsz, "url needs a host and a mailbox "
			       "(imaps://HOST/INBOX)"), msg;
	if (host == v + 7 && !(strncmp(host, "127.0.0.1", 9) == 0 &&
			       (host[9] == ':' || host[9] == '/')))
		return snprintf(msg, msgsz, "imap:// (without TLS) is only allowed to "
			       "127.0.0.1; use imaps://"), msg;
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return snprintf(msg, msgsz, "url contains a space or control "
				       "character"), msg;
	return NULL;
}

const char *wq__source_entry(wq_config *cfg, const char *name, const char *key,
			     const char *v, char *msg, size_t msgsz)
{
	struct wq__source_config *s = find(cfg, name);
	wq_error e;
	int64_t us;
	size_t k;

	if (!s)
		return snprintf(msg, msgsz, "no such source %s", name), msg;
	for (k = 0; k < WQ__ARRAY_LEN(keys); k++)
		if (strcmp(keys[k], key) == 0)
			break;
	if (k == WQ__ARRAY_LEN(keys))
		return snprintf(msg, msgsz, "unknown key '%s' in [source.%s] (expected type, url, "
			       "username, password_file, password_env, path, kind, poll, "
			       "max_handouts, operators or search_window)", key, name), msg;
	if (s->seen & (1u << k))
		return snprintf(msg, msgsz, "key '%s' given twice", key), msg;
	s->seen |= 1u << k;
	switch (k) {
	case S_TYPE:
		if (strcmp(v, "maildir") == 0)
			s->type = WQ__SOURCE_MAILDIR;
		else if (strcmp(v, "imap") == 0)
			s->type = WQ__SOURCE_IMAP;
		else
			return snprintf(msg, msgsz, "type must be imap or maildir"), msg;
		return NULL;
	case S_URL:
		return check_url(v, msg, msgsz) ? msg : set_text(&s->url, v, key, msg, msgsz);
	case S_USERNAME:
		return set_text(&s->username, v, key, msg, msgsz);
	case S_PASSWORD_FILE:
		return set_text(&s->password_file, v, key, msg, msgsz);
	case S_PASSWORD_ENV:
		return set_text(&s->password_env, v, key, msg, msgsz);
	case S_PATH:
		return set_text(&s->path, v, key, msg, msgsz);
	case S_KIND:
		if (wq__check_kind(v, &e) != WQ_OK)
			return snprintf(msg, msgsz, "kind: %s", e.message), msg;
		wq__strlcpy(s->kind, v, sizeof(s->kind));
		return NULL;
	case S_POLL:
		if (wq_duration_parse(v, &us, NULL) != WQ_OK || us < WQ__US_PER_MS ||
		    us > 86400LL * WQ__US_PER_S)
			return snprintf(msg, msgsz, "poll must be a duration from 1ms to 1d"), msg;
		s->poll = us;
		return NULL;
	case S_MAX_HANDOUTS:
		return int_in(v, key, 1, 1000, &s->max_handouts, msg, msgsz);
	case S_SEARCH_WINDOW:
		return int_in(v, key, 1, WQ__IMAP_SEARCH_WINDOW, &s->search_window, msg, msgsz);
	default: /* S_OPERATORS */
		if (!*v || strlen(v) > WQ_NAME_MAX - 6 || strpbrk(v, " \t"))
			return snprintf(msg, msgsz, "operators must be an inbox recipient "
				       "(1..%d bytes, no space)", WQ_NAME_MAX - 6), msg;
		return set_text(&s->operators, v, key, msg, msgsz);
	}
}

static wq_rc check_source(wq_config *c, struct wq__source_config *s, wq_error *err)
{
	struct wq__kind_config *k;

	if (!s->type)
		return wq__err(err, WQ_ECONFIG, "%s:%d: [source.%s] has no type (imap or maildir)",
			       c->path, s->line, s->name);
	if (!s->kind[0])
		return wq__err(err, WQ_ECONFIG, "%s:%d: [source.%s] has no kind", c->path, s->line,
			       s->name);
	if (s->type == WQ__SOURCE_MAILDIR &&
	    (!s->path || s->url || s->username || s->password_file || s->password_env ||
	     (s->seen & (1u << S_SEARCH_WINDOW))))
		return wq__err(err, WQ_ECONFIG, "%s:%d: [source.%s] (maildir) needs path and takes "
			       "no url, username, password or search_window", c->path, s->line,
			       s->name);
	if (s->type == WQ__SOURCE_IMAP &&
	    (!s->url || !s->username || !s->password_file == !s->password_env || s->path))
		return wq__err(err, WQ_ECONFIG, "%s:%d: [source.%s] (imap) needs url, username and "
			       "one of password_file or password_env (no path)",
			       c->path, s->line, s->name);
	/* max_handouts is the attempt limit of the messages' tasks; a claim writes the
	 * kind's max_attempts over a task's, so the kind carries it. */
	k = (struct wq__kind_config *)wq__config_kind(c, s->kind);
	if (k && k->max_attempts && k->max_attempts != s->max_handouts)
		return wq__err(err, WQ_ECONFIG, "%s:%d: [source.%s] max_handouts is %d but [kind.%s] "
			       "max_attempts is %d; a source's kind takes its attempt limit from "
			       "max_handouts (remove max_attempts or make them equal)",
			       c->path, s->line, s->name, s->max_handouts, s->kind, k->max_attempts);
	if (k) {
		k->max_attempts = s->max_handouts;
		k->failure_retries = 1; /* every handout is an attempt: a failure comes back */
	}
	return WQ_OK;
}

wq_rc wq__sources_validate(wq_config *c, wq_error *err)
{
	wq_rc rc;

	for (size_t i = 0; i < c->nsources; i++)
		if ((rc = check_source(c, &c->sources[i], err)) != WQ_OK)
			return rc;
	return WQ_OK;
}

void wq__sources_free(wq_config *c)
{
	for (size_t i = 0; i < c->nsources; i++) {
		struct wq__source_config *s = &c->sources[i];

		free(s->url);
		free(s->username);
		free(s->password_file);
		free(s->password_env);
		free(s->path);
		free(s->operators);
	}
	free(c->sources);
	c->sources = NULL;
	c->nsources = 0;
}

const char *wq__source_operators(const wq_config *cfg, const struct wq__source_config *src)
{
	return src->operators ? src->operators : wq__config_operators(cfg);
}
