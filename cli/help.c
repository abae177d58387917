/* help.c — the one table of the commands' help: usage, what it does, every option, an
 * example and its exit statuses. `wakeq help`, `wakeq help COMMAND`, `COMMAND --help`
 * and `-h` print from it; a man page can be generated from it (one entry per command,
 * plain text fields, no formatting beyond line breaks). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"

#define EXIT_STD "0 ok, 1 error, 2 usage"

static const struct help helps[] = {
	{"init", "init", "create the store, or migrate it to this version",
	 {{NULL, NULL}}, "wakeq --db /var/lib/wakeq/wakeq.db init", EXIT_STD},
	{"enqueue",
	 "enqueue KIND [--payload JSON|@FILE|-] [--payload-version N] [--tenant T] [--scope S]\n"
	 "        [--key KEY] [--priority N] [--at TIME|--in DURATION] [--max-attempts N]\n"
	 "        [--notify CHANNEL]... [--lock KEY] [--config FILE] [--json]",
	 "add a task and print its id; with --key, the same (tenant, scope, kind, key) and\n"
	 "input returns the existing task, other input is refused",
	 {{"--payload JSON|@FILE|-", "the input: JSON text, a file, or stdin"},
	  {"--payload-version N", "version of the payload's format (default 1)"},
	  {"--tenant T", "tenant of the operation identity"},
	  {"--scope S", "scope of the operation identity"},
	  {"--key KEY", "operation key: an idempotent enqueue"},
	  {"--priority N", "higher runs earlier"},
	  {"--at TIME", "due at an RFC 3339 time"},
	  {"--in DURATION", "due after a duration (30s, 5m, 1h30m)"},
	  {"--max-attempts N", "attempt limit (a kind's max_attempts overrides it)"},
	  {"--notify CHANNEL", "inbox:RECIPIENT, webhook:NAME or command:NAME (repeatable)"},
	  {"--lock KEY", "a turn lock: at most one task of KEY runs at a time"},
	  {"--config FILE", "the worker config (or $WAKEQ_CONFIG): its [limits] and\n"
			    "payload_versions apply, and a kind or webhook:/command:\n"
			    "channel it does not define is refused (exit 2)"},
	  {"--json", "print {id, replayed, ...} as JSON"},
	  {"--batch FILE|-", "instead of KIND: one JSON object per line with the fields\n"
			     "kind, payload, key, tenant, scope, priority, in, at,\n"
			     "max_attempts, payload_version, notify, lock; one transaction;\n"
			     "prints 'LINE ID accepted|replayed' or 'LINE - conflict: ...'\n"
			     "per line (--json: an array); a bad line: exit 2, nothing written"}},
	 "wakeq enqueue send-invoice --key inv-42 --payload '{\"invoice\":42}'",
	 EXIT_STD " (also an undefined kind or channel), 3 the key exists with other input"},
	{"list",
	 "list [--state STATE]... [--kind KIND]... [--tenant T] [--scope S] [--since TIME]\n"
	 "     [--until TIME] [--limit N] [--json]",
	 "list tasks by id (--state interrupted: the tasks waiting for a decision); a\n"
	 "repeated --state or --kind means any of them",
	 {{"--state STATE", "pending, running, succeeded, failed, interrupted, cancelled\n"
			    "(repeatable: any of)"},
	  {"--kind KIND", "only this kind (repeatable: any of)"},
	  {"--tenant T", "only this tenant"},
	  {"--scope S", "only this scope"},
	  {"--since TIME", "created at or after TIME (RFC 3339, or a duration ago: 2h)"},
	  {"--until TIME", "created before TIME (RFC 3339, or a duration ago)"},
	  {"--limit N", "at most N tasks (default 100)"},
	  {"--json", "an array of tasks"}},
	 "wakeq list --state failed --state interrupted --kind send-invoice --since 1d",
	 EXIT_STD},
	{"show", "show ID [--json] [--stderr]",
	 "one task's fields; the result as size and SHA-256, never its body",
	 {{"--json", "the task as a JSON object"},
	  {"--stderr", "also the stderr tails failed attempts kept (a kind's keep_stderr;\n"
		       "untrusted handler output); JSON: \"stderr\": [{attempt, stderr}]"}}, "wakeq show 42", EXIT_STD ", 4 no such task"},
	{"result", "result ID",
	 "write a succeeded task's result body to stdout; it is untrusted output",
	 {{NULL, NULL}}, "wakeq result 42 > result.json", EXIT_STD ", 4 no task or no result"},
	{"cancel",
	 "cancel ID\n"
	 "cancel --state pending --kind KIND [--tenant T] [--since TIME] [--dry-run] [--json]",
	 "cancel a pending task, or request cancellation of a running one; the bulk form\n"
	 "cancels every pending task the filter names and prints how many and their ids",
	 {{"--state pending", "bulk form: the state to act on (only pending)"},
	  {"--kind KIND", "bulk form: the kind (required)"},
	  {"--tenant T", "bulk form: only this tenant"},
	  {"--since TIME", "bulk form: entered the state at or after TIME (RFC 3339, or a\n"
			   "duration meaning that long ago: 2h)"},
	  {"--dry-run", "bulk form: print what would be cancelled, change nothing"},
	  {"--json", "bulk form: {action, dry_run, tasks, failed, truncated}"}},
	 "wakeq cancel --state pending --kind send-invoice --tenant acme --dry-run",
	 EXIT_STD " (bulk: some task refused), 4 no such task, 6 not pending or running"},
	{"resolve",
	 "resolve ID --retry|--succeeded|--failed|--cancel [--note TEXT] [--by NAME]\n"
	 "resolve --state interrupted --kind KIND --retry|... [--tenant T] [--since TIME]\n"
	 "        [--dry-run] [--json]",
	 "decide an interrupted task; the decision, who decided and the note go on its\n"
	 "timeline (a `resolved` event); the bulk form decides every interrupted task the\n"
	 "filter names",
	 {{"--retry", "run it again (due now)"},
	  {"--succeeded", "record it succeeded (the effect is known to have happened)"},
	  {"--failed", "record it failed"},
	  {"--cancel", "record it cancelled"},
	  {"--note TEXT", "why (kept on the timeline)"},
	  {"--by NAME", "who decided (default: the login name)"},
	  {"--state interrupted", "bulk form: the state to act on"},
	  {"--kind KIND", "bulk form: the kind (required)"},
	  {"--tenant T", "bulk form: only this tenant"},
	  {"--since TIME", "bulk form: interrupted at or after TIME (or a duration ago)"},
	  {"--dry-run", "bulk form: print what would be resolved, change nothing"},
	  {"--json", "bulk form: {action, dry_run, tasks, failed, truncated}"}},
	 "wakeq resolve 42 --succeeded --note 'the invoice was sent (checked upstream)'",
	 EXIT_STD ", 4 no such task, 6 not interrupted"},
	{"retry",
	 "retry ID [--note TEXT] [--by NAME] [--json]\n"
	 "retry --state failed|cancelled --kind KIND [--tenant T] [--since TIME] [--dry-run]\n"
	 "      [--note TEXT] [--by NAME] [--json]",
	 "run a failed or cancelled task again: a new round of attempts under the same\n"
	 "operation (the key still names it), its attempt budget counted from the attempts\n"
	 "used; a `retried` event records who and why. The bulk form retries every task the\n"
	 "filter names and prints how many and their ids",
	 {{"--note TEXT", "why (kept on the timeline)"},
	  {"--by NAME", "who decided (default: the login name)"},
	  {"--state failed|cancelled", "bulk form: the state to act on"},
	  {"--kind KIND", "bulk form: the kind (required)"},
	  {"--tenant T", "bulk form: only this tenant"},
	  {"--since TIME", "bulk form: finished at or after TIME (or a duration ago: 2h)"},
	  {"--dry-run", "bulk form: print what would be retried, change nothing"},
	  {"--json", "the task after the retry; bulk: {action, dry_run, tasks, failed,\n"
		     "truncated}"}},
	 "wakeq retry --state failed --kind send-invoice --since 2h --dry-run",
	 EXIT_STD " (bulk: some task refused), 4 no such task, 6 not failed or cancelled"},
	{"timeline", "timeline ID|KEY [--tenant T] [--scope S] [--kind K] [--json] [--stderr]",
	 "one operation: identity, fingerprint, attempts and every event in order (a positive\n"
	 "integer is a task id unless --tenant/--scope/--kind is given)",
	 {{"--tenant T", "the key's tenant"},
	  {"--scope S", "the key's scope"},
	  {"--kind K", "the key's kind (needed when several kinds use the key)"},
	  {"--json", "{operation, task, attempts, events}"},
	  {"--stderr", "also the stderr tails failed attempts kept (keep_stderr)"}},
	 "wakeq timeline inv-42 --kind send-invoice", EXIT_STD ", 4 no such task or key"},
	{"effect", "effect begin NAME\neffect done NAME [--result TEXT]",
	 "in a handler (WAKEQ_TASK_ID, WAKEQ_ATTEMPT_ID, WAKEQ_DB): begin records intent and\n"
	 "prints `new` and the idempotency key, `done` and the recorded result, or\n"
	 "`uncertain`; done confirms the effect",
	 {{"--result TEXT", "effect done: the result to hand to later attempts"}},
	 "if wakeq effect begin charge >/dev/null; then charge-card; wakeq effect done charge; fi",
	 EXIT_STD ", 6 stale attempt, 10 done already (skip it), 11 uncertain"},
	{"prune",
	 "prune [--task-retention DUR] [--operation-retention DUR] [--config FILE] [--dry-run]\n"
	 "      [--json]",
	 "delete finished tasks older than 3d and operation records completed more than 7d\n"
	 "ago (defaults; [retention] in the config; operations >= tasks); a task whose\n"
	 "delivery is still pending or sending is kept until it is delivered or dead",
	 {{"--dry-run", "print what would be deleted, delete nothing"},
	  {"--task-retention DUR", "keep finished tasks this long (default 3d)"},
	  {"--operation-retention DUR", "keep operation records this long (default 7d)"},
	  {"--config FILE", "read [retention] (and db) from a worker config"},
	  {"--json", "{tasks, operations, task_retention, operation_retention, dry_run}"}},
	 "wakeq prune --task-retention 1d --operation-retention 30d", EXIT_STD},
	{"doctor", "doctor [--stuck-after DUR] [--json]",
	 "what needs a human, one line each",
	 {{"--stuck-after DUR", "report tasks running longer than this"},
	  {"--json", "{clean, findings}"}},
	 "wakeq doctor --stuck-after 2h", "0 clean, 1 found something (or an error), 2 usage"},
	{"worker", "worker --config FILE [--until-idle] [--no-scheduler]",
	 "run a worker (the config's db is used when neither --db nor $WAKEQ_DB is set)",
	 {{"--config FILE", "the worker's configuration (kinds, channels, timings)"},
	  {"--until-idle", "stop once nothing is due or running"},
	  {"--no-scheduler", "never own schedules (fire no slots)"}},
	 "wakeq worker --config /etc/wakeq/worker.ini", EXIT_STD},
	{"deliveries", "deliveries [--state pending|sending|delivered|dead] [--json]\n"
		       "deliveries retry ID",
	 "notifications of results to their channels: state, attempts, last error; retry\n"
	 "sends a dead delivery again (never runs its task again)",
	 {{"--state STATE", "pending, sending, delivered or dead"},
	  {"--json", "an array of deliveries"}},
	 "wakeq deliveries retry 7", EXIT_STD ", 4 no such delivery, 6 not dead"},
	{"inbox", "inbox RECIPIENT [--unread] [--json]\ninbox read ID",
	 "the built-in inbox: one notification per delivery, metadata only; read marks one",
	 {{"--unread", "only notifications not read yet"}, {"--json", "an array"}},
	 "wakeq inbox operators --unread", EXIT_STD ", 4 no such notification"},
	{"dead", "dead [--json]",
	 "what was given up, each with the command that acts on it: failed tasks (wakeq retry\n"
	 "ID) and dead deliveries (wakeq deliveries retry ID)",
	 {{"--json", "one array: {type: task|delivery, ..., command}"}}, "wakeq dead", EXIT_STD},
	{"stats", "stats [--json]",
	 "one snapshot: tasks by state and kind, how long the oldest due pending task has\n"
	 "waited, running tasks per worker instance, deliveries by state",
	 {{"--json", "{at, tasks: [{state, kind, count}], oldest_pending: {due_at,\n"
		     "age_seconds} or null, running: [{instance, count}], deliveries:\n"
		     "[{state, count}]}"}},
	 "wakeq stats --json", EXIT_STD},
	{"workers", "workers [--json]",
	 "the registered worker instances: host, pid, start, last heartbeat, running tasks",
	 {{"--json", "an array of {id, host, pid, started_at, heartbeat_at, running}"}},
	 "wakeq workers", EXIT_STD},
	{"bench",
	 "bench [--workload W[,W...]] [--tasks N] [--concurrency C] [--processes] [--batch B]\n"
	 "      [--rows R[,R...]] [--handler CMD] [--poll DURATION] [--pause DURATION] [--json]\n"
	 "      [--prefetch N]",
	 "pgbench-like workloads on a throwaway SQLite store (or --db): one line per result,\n"
	 "e.g. workload=W2 backend=sqlite synchronous=full handler=in-process n=2000 ...\n"
	 "tasks_per_s=...; a table at the end on a terminal (bench/README.md)",
	 {{"--workload W", "W1 single enqueues, W1c concurrent enqueuers, W1b batches,\n"
			   "W2 drain in-process no-op (default), W2c drain with a command,\n"
			   "W3 enqueue-to-start latency across processes, W5 claim cost by\n"
			   "finished rows; a comma list runs several"},
	  {"--tasks N", "tasks per result (W3: samples; default 2000)"},
	  {"--concurrency C", "W1c: enqueuers; W2, W2c, W5: the worker's (default 8)"},
	  {"--prefetch N", "W2, W2c, W5: the worker's prefetch: tasks claimed beyond its\n"
			   "free slots (default 0)"},
	  {"--processes", "W1c: enqueuers are processes, not threads"},
	  {"--batch B", "items per wq_enqueue_many (W1b and the untimed fills; 1000)"},
	  {"--rows R,...", "W5: finished rows before each measurement (10000,100000)"},
	  {"--handler CMD", "W2c's command (default: /bin/true)"},
	  {"--poll DURATION", "the worker's poll_interval (default: the worker's)"},
	  {"--pause DURATION", "W3: pause between samples, uniform up to it (10ms)"},
	  {"--json", "one JSON object per result line"}},
	 "wakeq bench --workload W1,W1b,W2 --tasks 10000", EXIT_STD},
	{"schedule",
	 "schedule add NAME (--cron \"EXPR\" [--tz ZONE] | --every DUR) KIND [--payload JSON]\n"
	 "         [--tenant T] [--scope S] [--notify CH]... [--overlap skip|allow]\n"
	 "         [--catch-up latest|all|none] [--max-attempts N]\n"
	 "schedule list [--json] | show NAME [--json] | pause NAME | resume NAME | rm NAME",
	 "recurring tasks; each slot is enqueued once (operation key schedule:NAME:<slot>)\n"
	 "by the one worker that holds the schedule's lease",
	 {{"--cron \"EXPR\"", "5-field cron: minute hour day-of-month month day-of-week"},
	  {"--tz ZONE", "time zone of the cron expression (default UTC)"},
	  {"--every DUR", "a fixed interval instead of cron"},
	  {"--overlap skip|allow", "skip a slot while the previous run is pending or running"},
	  {"--catch-up latest|all|none", "after downtime: one run, every slot, or none"},
	  {"--json", "list: an array of schedules; show: one schedule object"}},
	 "wakeq schedule add nightly --cron \"0 3 * * *\" --tz Europe/Berlin report",
	 EXIT_STD ", 3 the name exists, 4 no such schedule"},
	{"lock",
	 "lock acquire|renew KEY --holder NAME --ttl DUR\n"
	 "lock release KEY --holder NAME\n"
	 "lock run KEY --ttl DUR [--holder NAME] -- CMD [ARGS]\n"
	 "lock list [--json]",
	 "turn locks: hold a key so that no task of that key runs meanwhile (a chat turn);\n"
	 "run holds KEY while CMD runs (renewed every DUR/3) and exits with CMD's status",
	 {{"--holder NAME", "who holds it (shown to others)"},
	  {"--ttl DUR", "the lease: the key is free again after it unless renewed"},
	  {"--json", "list: an array of {key, holder, task_id, attempt, acquired_at,\n"
		     "expires_at}"}},
	 "wakeq lock run agent-7 --ttl 30s -- ./chat-turn",
	 EXIT_STD ", 5 held by someone else (naming who and until when)"},
	{"pause", "pause KIND", "stop claims of KIND by every worker", {{NULL, NULL}},
	 "wakeq pause summarize", EXIT_STD},
	{"resume", "resume KIND", "let workers claim KIND again", {{NULL, NULL}},
	 "wakeq resume summarize", EXIT_STD},
	{"kinds", "kinds [--json]", "the kinds paused now",
	 {{"--json", "an array of {kind, paused, paused_at}"}},
	 "wakeq kinds", EXIT_STD},
	{"intake", "intake list [--source S] [--state STATE] [--json]\n"
		   "intake show SOURCE KEY [--json]",
	 "mailbox messages the [source.NAME] sections handed out as tasks: state, handouts,\n"
	 "acknowledgement (a message is marked seen only after its task was handled)",
	 {{"--source S", "only this source"},
	  {"--state STATE", "pending, handled, giving-up, acknowledged, abandoned or retired"},
	  {"--json", "an array (show: one object)"}},
	 "wakeq intake list --state abandoned", EXIT_STD ", 4 no such message"},
	{"help", "help [COMMAND]",
	 "this text, or one command's usage, options, example and exit statuses (as\n"
	 "COMMAND --help and COMMAND -h)",
	 {{NULL, NULL}}, "wakeq help retry", "0 ok, 2 unknown command"},
	{"version", "version", "the version of wakeq and of its store schema (also -V, --version)",
	 {{NULL, NULL}}, "wakeq version", "0 ok"},
};

const struct help *cli_help_table(size_t *n)
{
	*n = sizeof helps / sizeof helps[0];
	return helps;
}

static const struct help *find_help(const char *name)
{
	for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
		if (strcmp(helps[i].name, name) == 0)
			return &helps[i];
	return NULL;
}

/* Prints `text` with every line after a newline indented by `indent` spaces. */
static void put_indented(FILE *out, const char *text, int indent)
{
	for (const char *p = text; *p; p++) {
		fputc(*p, out);
		if (*p == '\n')
			fprintf(out, "%*s", indent, "");
	}
}

void cli_usage(FILE *out)
{
	fputs("usage: wakeq [--db URL] [--config FILE] COMMAND [ARGS]\n\n"
	      "URL is a SQLite file path or a postgres:// URL. The store is, in this order:\n"
	      "--db URL, $WAKEQ_DB, the db = of --config FILE (else $WAKEQ_CONFIG), ./wakeq.db.\n"
	      "\ncommands ('wakeq help COMMAND' for options and an example):\n",
	      out);
	for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
		fputs("  ", out);
		put_indented(out, helps[i].usage, 2);
		fputs("\n      ", out);
		put_indented(out, helps[i].summary, 6);
		fputc('\n', out);
	}
	fputs("\nexit status: 0 ok, 1 error, 2 usage, 3 idempotency conflict, 4 not found,\n"
	      "5 limit reached, 6 transition not allowed from the current state, 7 outcome\n"
	      "unknown (the answer to a commit was lost; check with `wakeq timeline`).\n",
	      out);
}

/* 1 when the command's own table names `opt` (its own text replaces the common one). */
static int names_option(const struct help *h, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 0; i < HELP_OPTS_MAX && h->opts[i].name; i++)
		if (strncmp(h->opts[i].name, opt, n) == 0 &&
		    (h->opts[i].name[n] == ' ' || h->opts[i].name[n] == '\0'))
			return 1;
	return 0;
}

int cli_help_command(FILE *out, const char *name)
{
	const struct help *h = find_help(name);

	if (!h)
		return -1;
	fputs("usage: wakeq ", out);
	put_indented(out, h->usage, 13);
	fputs("\n\n", out);
	put_indented(out, h->summary, 0);
	fputs("\n", out);
	if (h->opts[0].name) {
		fputs("\noptions:\n", out);
		for (int i = 0; i < HELP_OPTS_MAX && h->opts[i].name; i++) {
			fprintf(out, "  %-26s ", h->opts[i].name);
			put_indented(out, h->opts[i].text, 29);
			fputc('\n', out);
		}
	}
	fputs("  --db URL                   the store (default $WAKEQ_DB, else the config's db,\n"
	      "                             else ./wakeq.db)\n",
	      out);
	if (!names_option(h, "--config"))
		fputs("  --config FILE              the worker config whose db = names the store\n"
		      "                             (default $WAKEQ_CONFIG)\n",
		      out);
	fputs("  -h, --help                 this text\n", out);
	fprintf(out, "\nexample:\n  %s\n\nexit status: %s\n", h->example, h->exits);
	return 0;
}
