/* cmd_stats.c — the operator's view (issue 14): `stats` (counts by state and kind, the
 * oldest due pending task's wait, running tasks per worker instance, deliveries by
 * state) and `workers` (the registered instances). One snapshot each (wq_stats_get). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int stats_open(struct cli *cli, int argc, char **argv, int *json, wq_db **db,
		      wq_stats *st)
{
	const char *pos[1];
	const struct cli_opt opts[] = {CLI_FLAG("--json", json), CLI_END};
	wq_error err = {0};
	int npos, ex;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)) || (ex = cli_open(cli, 0, db)))
		return ex;
	rc = wq_stats_get(*db, st, &err);
	return rc == WQ_OK ? 0 : cli_fail(rc, &err);
}

static json_t *jtime(int64_t us)
{
	char buf[WQ_TIME_BUFSZ];

	return us ? json_string(wq_time_format(us, buf)) : json_null();
}

static json_t *stats_json(const wq_stats *st)
{
	json_t *o = json_object(), *tasks = json_array(), *run = json_array(),
	       *dlv = json_array();
	int bad = !o || !tasks || !run || !dlv;

	for (size_t i = 0; !bad && i < st->ntasks; i++)
		bad = json_array_append_new(
			tasks, json_pack("{s:s, s:o, s:I}", "state", st->tasks[i].state, "kind",
					 cli_json_str(st->tasks[i].kind), "count",
					 (json_int_t)st->tasks[i].count));
	for (size_t i = 0; !bad && i < st->nrunning; i++)
		bad = json_array_append_new(run, json_pack("{s:o, s:I}", "instance",
							   cli_json_str(st->running[i].instance),
							   "count", (json_int_t)st->running[i].count));
	for (size_t i = 0; !bad && i < st->ndeliveries; i++)
		bad = json_array_append_new(dlv, json_pack("{s:s, s:I}", "state",
							   st->deliveries[i].state, "count",
							   (json_int_t)st->deliveries[i].count));
	if (!bad)
		bad = json_object_set_new(o, "at", jtime(st->now)) ||
		      json_object_set_new(o, "tasks", tasks) ||
		      json_object_set_new(
			      o, "oldest_pending",
			      st->oldest_pending_due_at
				      ? json_pack("{s:o, s:f}", "due_at",
						  jtime(st->oldest_pending_due_at), "age_seconds",
						  (double)(st->now - st->oldest_pending_due_at) / 1e6)
				      : json_null()) ||
		      json_object_set_new(o, "running", run) ||
		      json_object_set_new(o, "deliveries", dlv);
	else {
		json_decref(tasks);
		json_decref(run);
		json_decref(dlv);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void stats_text(const wq_stats *st)
{
	char kind[WQ_KIND_MAX + 1], inst[WQ_NAME_MAX + 1], when[WQ_TIME_BUFSZ], age[64];
	int64_t total = 0;

	printf("tasks by state and kind:\n");
	if (!st->ntasks)
		printf("  none\n");
	for (size_t i = 0; i < st->ntasks; i++) {
		printf("  %-12s %-24s %lld\n", st->tasks[i].state,
		       cli_safe(st->tasks[i].kind, kind, sizeof kind),
		       (long long)st->tasks[i].count);
		total += st->tasks[i].count;
	}
	printf("  total %lld\n", (long long)total);
	if (st->oldest_pending_due_at)
		printf("oldest due pending task: due %s, waiting %s\n",
		       cli_time(st->oldest_pending_due_at, when),
		       wq_duration_format(st->now > st->oldest_pending_due_at
						  ? st->now - st->oldest_pending_due_at
						  : 0,
					  age, sizeof age));
	else
		printf("oldest due pending task: none\n");
	printf("running by worker instance:\n");
	if (!st->nrunning)
		printf("  none\n");
	for (size_t i = 0; i < st->nrunning; i++)
		printf("  %-40s %lld\n", cli_safe(st->running[i].instance, inst, sizeof inst),
		       (long long)st->running[i].count);
	printf("deliveries by state:\n");
	if (!st->ndeliveries)
		printf("  none\n");
	for (size_t i = 0; i < st->ndeliveries; i++)
		printf("  %-12s %lld\n", st->deliveries[i].state,
		       (long long)st->deliveries[i].count);
}

int cmd_stats(struct cli *cli, int argc, char **argv)
{
	wq_stats st = {0};
	wq_db *db = NULL;
	int json = 0, ex = stats_open(cli, argc, argv, &json, &db, &st);

	if (!ex && json)
		ex = cli_print_json(stats_json(&st));
	else if (!ex)
		stats_text(&st);
	wq_stats_free(&st);
	wq_db_close(db);
	return ex;
}

int cmd_workers(struct cli *cli, int argc, char **argv)
{
	char id[WQ_NAME_MAX + 1], host[WQ_NAME_MAX + 1], s[WQ_TIME_BUFSZ], h[WQ_TIME_BUFSZ];
	wq_stats st = {0};
	wq_db *db = NULL;
	json_t *arr;
	int json = 0, ex = stats_open(cli, argc, argv, &json, &db, &st);

	if (!ex && json) {
		arr = json_array();
		for (size_t i = 0; arr && i < st.ninstances; i++) {
			const wq_instance_info *w = &st.instances[i];

			if (json_array_append_new(
				    arr, json_pack("{s:o, s:o, s:I, s:o, s:o, s:I}", "id",
						   cli_json_str(w->id), "host", cli_json_str(w->host),
						   "pid", (json_int_t)w->pid, "started_at",
						   jtime(w->started_at), "heartbeat_at",
						   jtime(w->heartbeat_at), "running",
						   (json_int_t)w->running))) {
				json_decref(arr);
				arr = NULL;
			}
		}
		ex = cli_print_json(arr);
	} else if (!ex && st.ninstances == 0) {
		printf("no worker instance is registered\n");
	} else if (!ex) {
		printf("%-40s %-20s %8s  %-24s  %-24s  %s\n", "INSTANCE", "HOST", "PID", "STARTED",
		       "LAST HEARTBEAT", "RUNNING");
		for (size_t i = 0; i < st.ninstances; i++) {
			const wq_instance_info *w = &st.instances[i];

			printf("%-40s %-20s %8lld  %-24s  %-24s  %lld\n",
			       cli_safe(w->id, id, sizeof id), cli_safe(w->host, host, sizeof host),
			       (long long)w->pid, cli_time(w->started_at, s),
			       cli_time(w->heartbeat_at, h), (long long)w->running);
		}
	}
	wq_stats_free(&st);
	wq_db_close(db);
	return ex;
}
