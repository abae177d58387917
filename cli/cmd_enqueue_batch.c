/* cmd_enqueue_batch.c — `wakeq enqueue --batch FILE.jsonl` (issue 11): many tasks, one
 * transaction (wq_enqueue_many).
 *
 * Each non-blank line of FILE (`-`: stdin) is one JSON object with the fields of
 * enqueue's flags: kind (required), payload (any JSON value; default {}),
 * payload_version, key, tenant, scope, priority, max_attempts, in (a duration) or at (an
 * RFC 3339 time), notify (a channel or an array of them), lock. Every line is read and
 * checked before the store is opened; a bad line is a usage error naming its line number
 * and nothing is written. An item whose key exists with other input is a conflict of that
 * item only: the others are enqueued, and the exit status is 3. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One item and the memory its options point into. */
struct item {
	wq_enqueue_opts o;
	json_t *obj;   /* the parsed line: the strings of o belong to it */
	char *payload; /* owned */
	const char *notify[CLI_LIST_MAX];
	long line;
};

struct batch {
	struct item *it;
	size_t n, cap;
};

static int line_error(long line, const char *fmt, const char *detail)
{
	return cli_errorf(CLI_EXIT_USAGE, "enqueue --batch: line %ld: %s%s", line, fmt,
			  detail ? detail : "");
}

/* A string field (NULL when absent); anything but a string is an error. */
static int str_field(json_t *obj, const char *name, long line, const char **out)
{
	json_t *v = json_object_get(obj, name);
	char what[64];

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v)) {
		snprintf(what, sizeof what, "'%s' must be a string", name);
		return line_error(line, what, NULL);
	}
	*out = json_string_value(v);
	return 0;
}

static int int_field(json_t *obj, const char *name, long line, long long min, long long max,
		     int *out)
{
	json_t *v = json_object_get(obj, name);
	char what[96];

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		snprintf(what, sizeof what, "'%s' must be an integer in %lld..%lld", name, min, max);
		return line_error(line, what, NULL);
	}
	*out = (int)json_integer_value(v);
	return 0;
}

static int notify_field(struct item *it)
{
	json_t *v = json_object_get(it->obj, "notify"), *e;
	size_t i;

	if (!v)
		return 0;
	if (json_is_string(v)) {
		it->notify[0] = json_string_value(v);
		it->o.nnotify = 1;
	} else if (json_is_array(v) && json_array_size(v) <= CLI_LIST_MAX) {
		json_array_foreach(v, i, e) {
			if (!json_is_string(e))
				return line_error(it->line, "'notify' must hold strings", NULL);
			it->notify[i] = json_string_value(e);
		}
		it->o.nnotify = json_array_size(v);
	} else {
		return line_error(it->line, "'notify' must be a channel or an array of at most 8",
				  NULL);
	}
	it->o.notify = it->notify;
	return 0;
}

static int due_field(struct item *it)
{
	const char *at = NULL, *in = NULL;
	wq_error err = {0, ""};
	int64_t v;
	int ex;

	if ((ex = str_field(it->obj, "at", it->line, &at)) ||
	    (ex = str_field(it->obj, "in", it->line, &in)))
		return ex;
	if (at && in)
		return line_error(it->line, "give either 'at' or 'in', not both", NULL);
	if (at && wq_time_parse(at, &v, &err) != WQ_OK)
		return line_error(it->line, "at: ", err.message);
	if (in && wq_duration_parse(in, &v, &err) != WQ_OK)
		return line_error(it->line, "in: ", err.message);
	if (at || in)
		it->o.due_at = at ? v : wq_now() + v;
	return 0;
}

static const char *const known[] = {"kind",  "payload", "payload_version", "key",
				    "tenant", "scope",  "priority", "max_attempts",
				    "in",    "at",      "notify", "lock"};

/* The line's object into it->o. */
static int item_fields(struct item *it)
{
	json_t *payload;
	const char *k;
	json_t *v;
	int ex;

	json_object_foreach(it->obj, k, v) {
		size_t i = 0;
		while (i < sizeof known / sizeof known[0] && strcmp(known[i], k) != 0)
			i++;
		if (i == sizeof known / sizeof known[0])
			return line_error(it->line, "unknown field ", k);
	}
	if ((ex = str_field(it->obj, "kind", it->line, &it->o.kind)) ||
	    (ex = str_field(it->obj, "key", it->line, &it->o.key)) ||
	    (ex = str_field(it->obj, "tenant", it->line, &it->o.tenant)) ||
	    (ex = str_field(it->obj, "scope", it->line, &it->o.scope)) ||
	    (ex = str_field(it->obj, "lock", it->line, &it->o.lock)) ||
	    (ex = int_field(it->obj, "payload_version", it->line, 1, 1000000,
			    &it->o.payload_version)) ||
	    (ex = int_field(it->obj, "priority", it->line, -1000, 1000, &it->o.priority)) ||
	    (ex = int_field(it->obj, "max_attempts", it->line, 1, 1000, &it->o.max_attempts)) ||
	    (ex = notify_field(it)) || (ex = due_field(it)))
		return ex;
	if (!it->o.kind)
		return line_error(it->line, "'kind' is missing", NULL);
	payload = json_object_get(it->obj, "payload");
	if (payload) {
		it->payload = json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!it->payload)
			return line_error(it->line, "the payload cannot be encoded", NULL);
		it->o.payload = it->payload;
	}
	return 0;
}

static int add_line(struct batch *b, const char *text, size_t len, long line)
{
	json_error_t je;
	struct item *it;
	char pos[96];

	if (b->n == WQ_ENQUEUE_MANY_MAX)
		return line_error(line, "too many items: at most 100000 per batch", NULL);
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct item *p = realloc(b->it, cap * sizeof *p);
		if (!p)
			return cli_errorf(CLI_EXIT_ERROR, "enqueue --batch: out of memory");
		b->it = p;
		b->cap = cap;
	}
	it = &b->it[b->n++];
	memset(it, 0, sizeof *it);
	it->line = line;
	it->obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!it->obj) {
		snprintf(pos, sizeof pos, " (column %d)", je.column);
		return cli_errorf(CLI_EXIT_USAGE, "enqueue --batch: line %ld: invalid JSON: %s%s",
				  line, je.text, pos);
	}
	if (!json_is_object(it->obj))
		return line_error(line, "not a JSON object", NULL);
	return item_fields(it);
}

static int read_batch(const char *path, struct batch *b)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	long line = 0;
	int ex = 0;

	if (!f)
		return cli_errorf(CLI_EXIT_USAGE, "enqueue --batch: cannot read '%s': %s", path,
				  strerror(errno));
	while (!ex && (len = getline(&buf, &cap, f)) >= 0) {
		line++;
		if (strspn(buf, " \t\r\n") == (size_t)len)
			continue; /* blank */
		ex = add_line(b, buf, (size_t)len, line);
	}
	if (!ex && ferror(f))
		ex = cli_errorf(CLI_EXIT_ERROR, "enqueue --batch: cannot read '%s'", path);
	free(buf);
	if (f != stdin)
		fclose(f);
	return ex;
}

static const char *status_of(const wq_error *e, const wq_enqueued *out)
{
	if (e->code != WQ_OK)
		return "conflict";
	return out->replayed ? "replayed" : "accepted";
}

static int print_results(const struct batch *b, const wq_enqueued *out, const wq_error *errs,
			 int json)
{
	json_t *arr = json ? json_array() : NULL;

	for (size_t i = 0; i < b->n; i++) {
		const char *st = status_of(&errs[i], &out[i]);

		if (!json) {
			if (errs[i].code != WQ_OK)
				printf("%ld - %s: %s\n", b->it[i].line, st, errs[i].message);
			else
				printf("%ld %lld %s\n", b->it[i].line, (long long)out[i].id, st);
			continue;
		}
		json_array_append_new(
			arr, json_pack("{s:I, s:s, s:I, s:s?, s:o, s:s, s:s?}", "line",
				       (json_int_t)b->it[i].line, "status", st, "id",
				       (json_int_t)out[i].id, "state", wq_state_name(out[i].state),
				       "operation", cli_json_str(out[i].operation), "fingerprint",
				       out[i].fingerprint, "error",
				       errs[i].code != WQ_OK ? errs[i].message : NULL));
	}
	return json ? cli_print_json(arr) : 0;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		json_decref(b->it[i].obj);
		free(b->it[i].payload);
	}
	free(b->it);
}

/* Exit 3 after the results: how many lines conflicted, the first one's message. */
static int fail_conflicts(const wq_error *errs, const struct batch *b)
{
	size_t n = 0, first = 0;

	for (size_t i = 0; i < b->n; i++)
		if (errs[i].code == WQ_ECONFLICT && n++ == 0)
			first = i;
	return cli_errorf(CLI_EXIT_OK + 3,
			  "enqueue --batch: %zu of %zu lines conflicted (the others are "
			  "enqueued); line %ld: %s",
			  n, b->n, b->it[first].line, errs[first].message);
}

/* The item a batch-wide failure names, as its line (the library's "item I: " prefix
 * left out). */
static int fail_batch(wq_rc rc, const wq_error *err, const wq_error *errs,
		      const struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (errs[i].code != WQ_OK && errs[i].code != WQ_ECONFLICT) {
			wq_error e = errs[i];
			const char *m = strstr(errs[i].message, ": ");
			char ctx[64];

			if (strncmp(errs[i].message, "item ", 5) == 0 && m)
				memmove(e.message, m + 2, strlen(m + 2) + 1);
			snprintf(ctx, sizeof ctx, "enqueue --batch: line %ld", b->it[i].line);
			return rc == WQ_EINVAL ? cli_fail_usage(rc, &e, ctx)
					       : cli_fail_ctx(rc, &e, ctx);
		}
	return cli_fail_ctx(rc, err, "enqueue --batch");
}

int cmd_enqueue_batch(struct cli *cli, int argc, char **argv)
{
	const char *path = NULL, *config_path = NULL, *pos[1];
	int json = 0, npos, ex;
	const struct cli_opt opts[] = {
		CLI_VALUE("--batch", &path), CLI_VALUE("--config", &config_path),
		CLI_FLAG("--json", &json), CLI_END,
	};
	struct batch b = {0};
	wq_enqueued *out = NULL;
	wq_error *errs = NULL, err = {0, ""};
	wq_config *cfg = NULL;
	wq_db *db = NULL;
	wq_rc rc;

	if ((ex = cli_parse(cli, argc, argv, opts, pos, 0, &npos)))
		return ex;
	if (!path)
		return cli_errorf(CLI_EXIT_USAGE, "enqueue --batch FILE: give a file or - (stdin)");
	if (json)
		cli_set_json_errors(1);
	if (!config_path || !*config_path)
		config_path = getenv("WAKEQ_CONFIG");
	if (config_path && *config_path && (rc = wq_config_load(config_path, &cfg, &err)))
		return cli_fail_usage(rc, &err, NULL);
	if ((ex = read_batch(path, &b)))
		goto out;
	out = calloc(b.n + 1, sizeof *out);
	errs = calloc(b.n + 1, sizeof *errs);
	if (!out || !errs) {
		ex = cli_errorf(CLI_EXIT_ERROR, "enqueue --batch: out of memory");
		goto out;
	}
	for (size_t i = 0; i < b.n; i++)
		b.it[i].o.limits = cfg;
	if ((ex = cli_open(cli, 0, &db)))
		goto out;
	{
		wq_enqueue_opts *items = calloc(b.n + 1, sizeof *items);
		if (!items) {
			ex = cli_errorf(CLI_EXIT_ERROR, "enqueue --batch: out of memory");
			goto out;
		}
		for (size_t i = 0; i < b.n; i++) {
			items[i] = b.it[i].o;
			/* o.notify was set to the item's own array, which a later realloc of
			 * b.it may have moved: point it at where the item is now */
			if (items[i].nnotify)
				items[i].notify = b.it[i].notify;
		}
		rc = wq_enqueue_many(db, items, b.n, out, errs, &err);
		free(items);
	}
	if (rc == WQ_OK || rc == WQ_ECONFLICT)
		ex = print_results(&b, out, errs, json);
	if (rc == WQ_ECONFLICT)
		ex = fail_conflicts(errs, &b);
	else if (rc != WQ_OK)
		ex = fail_batch(rc, &err, errs, &b);
out:
	wq_db_close(db);
	wq_config_free(cfg);
	batch_free(&b);
	free(out);
	free(errs);
	return ex;
}
