/* cmd_schedule.c — `wakeq schedule add|list|show|pause|resume|rm` (issue 12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_overlap(const char *s, wq_overlap *out)
{
	if (!s || strcmp(s, "skip") == 0)
		*out = WQ_OVERLAP_SKIP;
	else if (strcmp(s, "allow") == 0)
		*out = WQ_OVERLAP_ALLOW;
	else
		return cli_errorf(CLI_EXIT_USAGE, "schedule: --overlap must be skip or allow");
	return 0;
}

static int parse_catch_up(const char *s, wq_catch_up *out)
{
	if (!s || strcmp(s, "latest") == 0)
		*out = WQ_CATCH_UP_LATEST;
	else if (strcmp(s, "all") == 0)
		*out = WQ_CATCH_UP_ALL;
	else if (strcmp(s, "none") == 0)
		*out = WQ_CATCH_UP_NONE;
	else
		return cli_errorf(CLI_EXIT_USAGE, "schedule: --catch-up must be latest, all or none");
	return 0;
}

static json_t *schedule_json(const wq_schedule *s)
{
	char a[WQ_TIME_BUFSZ], b[WQ_TIME_BUFSZ], c[WQ_TIME_BUFSZ], d[WQ_TIME_BUFSZ];
	char every[64] = "";
	json_t *j;

	if (s->every)
		wq_duration_format(s->every, every, sizeof every);
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s?, s:I, s:s?, "
		      "s:s?, s:s, s:I, s:s}",
		      "name", s->name, "cron", s->cron, "every", every, "tz", s->tz, "kind",
		      s->kind, "tenant", s->tenant, "scope", s->scope, "overlap", s->overlap,
		      "catch_up", s->catch_up, "paused", s->paused, "next_slot",
		      cli_time(s->next_slot, a), "last_slot",
		      s->last_slot ? cli_time(s->last_slot, b) : NULL, "last_task",
		      (json_int_t)s->last_task, "owner", s->owner[0] ? s->owner : NULL,
		      "lease_until", s->lease_until ? cli_time(s->lease_until, c) : NULL,
		      "created_at", cli_time(s->created_at, d), "payload_size",
		      (json_int_t)s->payload_size, "payload_sha256", s->payload_sha256);
	return j;
}

static const char *timing(const wq_schedule *s, char *buf, size_t sz)
{
	char d[64];

	if (s->every)
		snprintf(buf, sz, "every %s", wq_duration_format(s->every, d, sizeof d));
	else
		snprintf(buf, sz, "cron \"%s\"%s%s", s->cron, s->tz[0] ? " tz " : "", s->tz);
	return buf;
}

static void print_schedule(const wq_schedule *s)
{
	char a[WQ_TIME_BUFSZ], t[WQ_CRON_MAX + WQ_TZ_MAX + 32], o[WQ_NAME_MAX + 1];

	printf("name: %s\n", s->name);
	printf("timing: %s\n", timing(s, t, sizeof t));
	printf("kind: %s\n", s->kind);
	printf("tenant: %s\n", cli_safe(s->tenant, o, sizeof o));
	printf("scope: %s\n", cli_safe(s->scope, o, sizeof o));
	printf("overlap: %s\n", s->overlap);
	printf("catch_up: %s\n", s->catch_up);
	printf("paused: %s\n", s->paused ? "yes" : "no");
	printf("next_slot: %s\n", cli_time(s->next_slot, a));
	printf("last_slot: %s\n", cli_time(s->last_slot, a));
	printf("last_task: %lld\n", (long long)s->last_task);
	printf("owner: %s\n", cli_safe(s->owner, o, sizeof o));
	printf("lease_until: %s\n", cli_time(s->lease_until, a));
	printf("created_at: %s\n", cli_time(s->created_at, a));
	printf("payload: %lld bytes, sha256 %s\n", (long long)s->payload_size, s->payload_sha256);
}

static int sched_add(struct cli *cli, int argc, char **argv)
{
	const char *pos[2], *cron = NULL, *tz = NULL, *every = NULL, *payload = NULL;
	const char *tenant = NULL, *scope = NULL, *overlap = NULL, *catch_up = NULL;
	const char *max_attempts = NULL;
	struct cli_list notify = {{0}, 0};
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_VALUE("--cron", &cron),         CLI_VALUE("--tz", &tz),
		CLI_VALUE("--every", &every),       CLI_VALUE("--payload", &payload),
		CLI_VALUE("--tenant", &tenant),     CLI_VALUE("--scope", &scope),
		CLI_LIST("--notify", &notify),      CLI_VALUE("--overlap", &overlap),
		CLI_VALUE("--catch-up", &catch_up), CLI_VALUE("--max-attempts", &max_attempts),
		CLI_FLAG("--json", &json),          CLI_END,
	};
	wq_schedule_opts o;
	wq_schedule s;
	wq_error err = {0};
	wq_db *db = NULL;
	wq_rc rc;

	memset(&o, 0, sizeof o);
	if ((ex = cli_parse(cli, argc, argv, opts, pos, 2, &npos)) ||
	    (ex = cli_want_args("schedule add", npos, 2, "NAME and KIND")))
		return ex;
	if (!cron == !every)
		return cli_errorf(CLI_EXIT_USAGE, "schedule add: give --cron EXPR or --every DUR");
	if (every && (rc = wq_duration_parse(every, &o.every, &err)) != WQ_OK)
		return cli_fail_usage(rc, &err, "--every");
	if (every && o.every == 0)
		return cli_errorf(CLI_EXIT_USAGE, "schedule add: --every must be at least 1s");
	if (max_attempts && (ex = cli_parse_int("--max-attempts", max_attempts, 1, 1000,
						&o.max_attempts)))
		return ex;
	if ((ex = parse_overlap(overlap, &o.overlap)) || (ex = parse_catch_up(catch_up, &o.catch_up)))
		return ex;
	o.name = pos[0];
	o.kind = pos[1];
	o.cron = cron;
	o.tz = tz;
	o.payload = payload;
	o.tenant = tenant;
	o.scope = scope;
	o.notify = notify.v;
	o.nnotify = notify.n;
	/* a bad invocation changes nothing, not even creates the database */
	if ((rc = wq_schedule_check(&o, &err)) != WQ_OK)
		return cli_fail_usage(rc, &err, NULL);
	if ((ex = cli_open(cli, WQ_OPEN_MIGRATE, &db)))
		return ex;
	rc = wq_schedule_add(db, &o, &s, &err);
	if (rc == WQ_EINVAL)
		ex = cli_fail_usage(rc, &err, NULL);
	else if (rc != WQ_OK)
		ex = cli_fail(rc, &err);
	else if (json)
		ex = cli_print_json(schedule_json(&s));
	else {
		char a[WQ_TIME_BUFSZ];
		printf("schedule %s added; next slot %s\n", s.name, cli_time(s.next_slot, a));
	}
	wq_db_close(db);
	return ex;
}

static int sched_list(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_schedule *s = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_schedule_list(db, &s, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			if (json_array_append_new(a, schedule_json(&s[i])) != 0) {
				json_decref(a);
				a = NULL;
			}
		ex = cli_print_json(a); /* a listing: an array at the top level */
	} else if (n == 0) {
		printf("no schedules\n");
	} else {
		printf("%-20s %-8s %-24s %-24s %-9s %s\n", "NAME", "STATE", "NEXT SLOT", "LAST SLOT",
		       "LAST TASK", "OWNER");
		for (size_t i = 0; i < n; i++) {
			char a[WQ_TIME_BUFSZ], b[WQ_TIME_BUFSZ], o[WQ_NAME_MAX + 1];
			printf("%-20s %-8s %-24s %-24s %-9lld %s\n", s[i].name,
			       s[i].paused ? "paused" : "active", cli_time(s[i].next_slot, a),
			       cli_time(s[i].last_slot, b), (long long)s[i].last_task,
			       cli_safe(s[i].owner, o, sizeof o));
		}
	}
	wq_free(s);
	wq_db_close(db);
	return ex;
}

static int sched_show(struct cli *cli, int argc, char **argv)
{
	const char *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
	wq_schedule s;
	wq_schedule_event *ev = NULL;
	wq_error err = {0};
	wq_db *db = NULL;
	size_t n = 0;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args("schedule show", npos, 1, "NAME")) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = wq_schedule_get(db, pos[0], &s, &err);
	if (rc == WQ_OK)
		rc = wq_schedule_events(db, pos[0], &ev, &n, &err);
	if (rc != WQ_OK) {
		ex = cli_fail(rc, &err);
	} else if (json) {
		json_t *j = schedule_json(&s), *a = json_array();
		for (size_t i = 0; j && a && i < n; i++) {
			char x[WQ_TIME_BUFSZ], y[WQ_TIME_BUFSZ];
			json_array_append_new(
				a, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "at",
					     cli_time(ev[i].at, x), "slot", cli_time(ev[i].slot, y),
					     "type", ev[i].type, "task_id", (json_int_t)ev[i].task_id,
					     "count", (json_int_t)ev[i].count, "instance",
					     ev[i].instance));
		}
		if (j && a)
			json_object_set_new(j, "events", a);
		else
			json_decref(a);
		ex = cli_print_json(j);
	} else {
		print_schedule(&s);
		printf("events (newest first):\n");
		for (size_t i = 0; i < n; i++) {
			char x[WQ_TIME_BUFSZ], y[WQ_TIME_BUFSZ];
			printf("  %s %-16s slot %s", cli_time(ev[i].at, x), ev[i].type,
			       cli_time(ev[i].slot, y));
			if (ev[i].count > 1)
				printf(" (%lld slots)", (long long)ev[i].count);
			if (ev[i].task_id)
				printf(" task %lld", (long long)ev[i].task_id);
			printf("\n");
		}
	}
	wq_free(ev);
	wq_db_close(db);
	return ex;
}

/* pause, resume, rm: one name, one call. */
static int sched_simple(struct cli *cli, int argc, char **argv,
			wq_rc (*fn)(wq_db *, const char *, wq_error *), const char *done)
{
	const char *pos[1];
	const struct cli_opt opts[] = {CLI_END};
	wq_error err = {0};
	wq_db *db = NULL;
	int npos, ex;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 1, &npos)) ||
	    (ex = cli_want_args(argv[0], npos, 1, "NAME")) || (ex = cli_open(cli, 0, &db)))
		return ex;
	rc = fn(db, pos[0], &err);
	if (rc != WQ_OK)
		ex = rc == WQ_EINVAL ? cli_fail_usage(rc, &err, NULL) : cli_fail(rc, &err);
	else
		printf("schedule %s %s\n", pos[0], done);
	wq_db_close(db);
	return ex;
}

int cmd_schedule(struct cli *cli, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "add") == 0)
		return sched_add(cli, argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0)
		return sched_list(cli, argc - 1, argv + 1);
	if (strcmp(sub, "show") == 0)
		return sched_show(cli, argc - 1, argv + 1);
	if (strcmp(sub, "pause") == 0)
		return sched_simple(cli, argc - 1, argv + 1, wq_schedule_pause, "paused");
	if (strcmp(sub, "resume") == 0)
		return sched_simple(cli, argc - 1, argv + 1, wq_schedule_resume, "resumed");
	if (strcmp(sub, "rm") == 0)
		return sched_simple(cli, argc - 1, argv + 1, wq_schedule_rm, "removed");
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
		cli_usage(stdout);
		return CLI_EXIT_HELP;
	}
	return cli_errorf(CLI_EXIT_USAGE,
			  "schedule: expected add, list, show, pause, resume or rm (see 'wakeq help')");
}
