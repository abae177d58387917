/* failpoint.c — crash and fault injection for the tests (see failpoint.h for the
 * syntax of $WAKEQ_FAILPOINT and the list of named points).
 *
 * The specification is read once per process (pthread_once: the worker's handler threads
 * reach store calls too). A malformed specification is fatal: a sweep whose failpoint
 * silently never fires would pass without testing anything. */
#include "internal.h"

#ifdef WQ_FAILPOINTS

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum fp_action { FP_KILL, FP_ERROR, FP_DELAY, FP_HOLD };

struct fp {
	char name[64];
	long count;           /* fire on this hit (1-based) */
	enum fp_action action;
	int64_t delay_us;
	char hold_path[256]; /* FP_HOLD: go on once this file exists */
	atomic_long hits;
};

#define FP_MAX 16
static struct fp fps[FP_MAX];
static int nfps;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *log_path;

/* The store method whose call should fail (armed by wq__failpoint_store). */
static _Thread_local const char *armed_error;

static void die_bad(const char *spec, const char *why)
{
	fprintf(stderr, "wakeq: invalid WAKEQ_FAILPOINT '%s': %s\n", spec, why);
	_exit(70);
}

/* Parses one `name[:count][:action]` (modified in place). */
static void parse_one(char *spec, const char *whole)
{
	struct fp *f;
	char *tok, *save = NULL;

	if (nfps == FP_MAX)
		die_bad(whole, "too many failpoints");
	f = &fps[nfps++];
	memset(f, 0, sizeof(*f));
	f->count = 1;
	f->action = FP_KILL;
	tok = strtok_r(spec, ":", &save);
	if (!tok || wq__strlcpy(f->name, tok, sizeof(f->name)))
		die_bad(whole, "empty or too long name");
	tok = strtok_r(NULL, ":", &save);
	if (tok && tok[0] >= '0' && tok[0] <= '9') {
		char *end;
		f->count = strtol(tok, &end, 10);
		if (*end || f->count < 1)
			die_bad(whole, "count must be a number >= 1");
		tok = strtok_r(NULL, ":", &save);
	}
	if (!tok || strcmp(tok, "kill") == 0) {
		f->action = FP_KILL;
	} else if (strcmp(tok, "error") == 0) {
		f->action = FP_ERROR;
	} else if (strcmp(tok, "delay") == 0) {
		wq_error e;
		f->action = FP_DELAY;
		tok = strtok_r(NULL, ":", &save);
		if (!tok || wq_duration_parse(tok, &f->delay_us, &e) != WQ_OK)
			die_bad(whole, "delay needs a duration (delay:200ms)");
	} else if (strcmp(tok, "hold") == 0) {
		f->action = FP_HOLD;
		tok = strtok_r(NULL, "", &save); /* the rest: a path may hold ':' */
		if (!tok || !tok[0] || wq__strlcpy(f->hold_path, tok, sizeof(f->hold_path)))
			die_bad(whole, "hold needs a file path (hold:/tmp/go)");
		return;
	} else {
		die_bad(whole, "action must be kill, error, delay:DUR or hold:PATH");
	}
	if (strtok_r(NULL, ":", &save))
		die_bad(whole, "trailing fields");
}

static void load(void)
{
	const char *env = getenv("WAKEQ_FAILPOINT");
	char *copy, *item, *save = NULL;

	log_path = getenv("WAKEQ_FAILPOINT_LOG");
	if (!env || !env[0])
		return;
	if (!(copy = strdup(env)))
		die_bad(env, "out of memory");
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
		parse_one(item, env);
	free(copy);
}

static const char *action_name(const struct fp *f)
{
	return f->action == FP_KILL    ? "kill"
	       : f->action == FP_ERROR ? "error"
	       : f->action == FP_DELAY ? "delay"
				       : "hold";
}

/* Appends "<pid> <name> <action>" to $WAKEQ_FAILPOINT_LOG (one write: O_APPEND keeps
 * lines of concurrent processes whole). */
static void note_fired(const struct fp *f)
{
	char line[128];
	int fd, n;

	if (!log_path || !log_path[0])
		return;
	n = snprintf(line, sizeof(line), "%ld %s %s\n", (long)getpid(), f->name, action_name(f));
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* nothing to do: the log is a test's aid */
	}
	close(fd);
}

/* The specs of `name` that fire on this hit, in the order given, in fired[] (at most
 * max); their number. Every spec of the name counts every hit
 * (`heartbeat:2:error,heartbeat:3:error` fails hits 2 and 3): returning at the first
 * that fires left the later ones a hit behind, so specs of one name fired on every other
 * hit. Several may fire on one hit: `claim:1:hold:PATH,claim:1:error` holds the call,
 * then fails it (a test orders a failure after events it sets up meanwhile). */
static int fires(const char *name, struct fp **fired, int max)
{
	int n = 0;

	pthread_once(&once, load);
	for (int i = 0; i < nfps; i++) {
		if (strcmp(fps[i].name, name) != 0)
			continue;
		if (atomic_fetch_add(&fps[i].hits, 1) + 1 == fps[i].count && n < max)
			fired[n++] = &fps[i];
	}
	return n;
}

/* Kills or sleeps for f; returns 1 when f's action is `error` (the caller fails). */
static int act(struct fp *f)
{
	note_fired(f);
	switch (f->action) {
	case FP_KILL:
		kill(getpid(), SIGKILL);
		for (;;)
			pause(); /* SIGKILL to self is delivered before kill() returns */
	case FP_DELAY: {
		struct timespec ts = {(time_t)(f->delay_us / WQ__US_PER_S),
				      (long)(f->delay_us % WQ__US_PER_S) * 1000};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		return 0;
	}
	case FP_HOLD: {
		/* A test goes on when it has seen this firing in the log and set up what
		 * must happen meanwhile: an order made by states, not by a sleep's length. */
		struct timespec ts = {0, 5 * 1000 * 1000};

		while (access(f->hold_path, F_OK) != 0)
			nanosleep(&ts, NULL);
		return 0;
	}
	case FP_ERROR:
		return 1;
	}
	return 0;
}

#define FIRED_MAX 4 /* specs of one name acting on one hit */

/* Acts for every spec of `name` firing on this hit, in order; 1 when one was `error`. */
static int act_all(const char *name)
{
	struct fp *fired[FIRED_MAX];
	int n = fires(name, fired, FIRED_MAX), failed = 0;

	for (int i = 0; i < n; i++)
		failed |= act(fired[i]);
	return failed;
}

void wq__failpoint(const char *name)
{
	act_all(name);
}

wq_rc wq__failpoint_rc(const char *name, wq_error *err)
{
	if (act_all(name))
		return wq__err(err, WQ_EIO, "injected I/O error (failpoint %s)", name);
	return WQ_OK;
}

int wq__failpoint_hit(const char *name)
{
	struct fp *fired[FIRED_MAX];
	int n = fires(name, fired, FIRED_MAX);

	for (int i = 0; i < n; i++)
		note_fired(fired[i]);
	return n > 0;
}

void wq__failpoint_store(const char *method)
{
	armed_error = act_all(method) ? method : NULL;
}

wq_rc wq__failpoint_store_end(wq_rc rc)
{
	armed_error = NULL;
	return rc;
}

const char *wq__failpoint_take(void)
{
	const char *name = armed_error;

	armed_error = NULL;
	return name;
}

#else

/* A release build: no failpoints (ISO C wants a declaration in every file). */
typedef int wq__no_failpoints;

#endif
