/* Worker configuration: defaults, every key, and each kind of bad file named by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static wq_config *parse_ok(const char *text)
{
	wq_config *c = NULL;
	wq_error e = {0};
	if (wq_config_parse(text, "t.ini", &c, &e) != WQ_OK)
		fail_msg("unexpected error: %s", e.message);
	return c;
}

static void expect_error(const char *text, const char *needle)
{
	wq_config *c = (wq_config *)0x1;
	wq_error e = {0};
	assert_int_equal(wq_config_parse(text, "t.ini", &c, &e), WQ_ECONFIG);
	assert_ptr_equal(c, (wq_config *)0x1); /* untouched on failure */
	if (!strstr(e.message, needle))
		fail_msg("message '%s' lacks '%s'", e.message, needle);
}

static void full_example(void **state)
{
	wq_config *c = parse_ok("[worker]\n"
				"concurrency = 8\n"
				"drain_timeout = 10s\n"
				"heartbeat = 2s\n"
				"[kind.summarize]\n"
				"command = /usr/local/bin/summarize --model \"small model\"   # no shell\n"
				"timeout = 2m\n"
				"max_attempts = 5\n"
				"retry_backoff = 250ms\n"
				"on_interrupt = retry\n");
	const struct wq__kind_config *k = wq__config_kind(c, "summarize");
	(void)state;
	assert_int_equal(c->concurrency, 8);
	assert_int_equal(c->drain_timeout, 10 * WQ__US_PER_S);
	assert_int_equal(c->lease, 20 * WQ__US_PER_S); /* default: 10 heartbeats */
	assert_non_null(k);
	assert_string_equal(k->argv[0], "/usr/local/bin/summarize");
	assert_string_equal(k->argv[1], "--model");
	assert_string_equal(k->argv[2], "small model");
	assert_null(k->argv[3]);
	assert_int_equal(k->timeout, 120 * WQ__US_PER_S);
	assert_int_equal(k->max_attempts, 5);
	assert_int_equal(k->retry_backoff, 250 * WQ__US_PER_MS);
	assert_int_equal(k->on_interrupt, WQ__ON_INTERRUPT_RETRY);
	assert_null(wq__config_kind(c, "other"));
	wq_config_free(c);
}

static void defaults(void **state)
{
	wq_config *c = parse_ok("[kind.a]\ncommand = /bin/true\n");
	(void)state;
	assert_int_equal(c->concurrency, 4);
	assert_int_equal(c->drain_timeout, 10 * WQ__US_PER_S);
	assert_int_equal(c->result_max, 1 << 20);
	assert_int_equal(c->kinds[0].on_interrupt, WQ__ON_INTERRUPT_HOLD);
	assert_null(wq_config_db(c));
	wq_config_free(c);
}

static void errors_name_the_line(void **state)
{
	(void)state;
	expect_error("[worker]\nconcurrency = 4\nbogus = 1\n[kind.a]\ncommand=x\n",
		     "t.ini:3: [worker] unknown key 'bogus'");
	expect_error("[kind.a]\ncommand=x\n[queue]\n", "t.ini:3: unknown section [queue]");
	expect_error("[worker]\n[worker]\n", "t.ini:2: section [worker] given twice");
	expect_error("[kind.a]\ncommand=x\n[kind.a]\ncommand=y\n", "t.ini:3: [kind.a]: section given twice");
	expect_error("[kind.a]\ncommand = x\ntimeout = soon\n", "t.ini:3: timeout: invalid duration 'soon'");
	expect_error("[worker]\nconcurrency = 0\n[kind.a]\ncommand=x\n", "t.ini:2: concurrency");
	expect_error("[worker]\nconcurrency = 4x\n[kind.a]\ncommand=x\n", "t.ini:2: concurrency");
	expect_error("[kind.a]\ncommand = x\non_interrupt = maybe\n", "t.ini:3: on_interrupt: 'maybe'");
	expect_error("[kind.a]\ncommand = \"unterminated\n", "t.ini:2: command: unterminated");
	expect_error("[kind.a]\ncommand = x\ncommand = y\n", "t.ini:3: [kind.a] command: key given twice");
	expect_error("[kind.a b]\ncommand = x\n", "t.ini:1: [kind.a b]");
	expect_error("orphan = 1\n[kind.a]\ncommand=x\n", "t.ini:1: key 'orphan' outside a section");
	expect_error("[worker]\nthis line is not a key\n", "t.ini:2: syntax error");
	expect_error("[worker]\nheartbeat = 2s\nlease = 3s\n[kind.a]\ncommand=x\n", "lease must be at least twice");
}

/* A kind without a command (or no kind at all) is for in-process handlers: the file is
 * valid, and wq_worker_run refuses it unless a handler is registered (test_inproc.c). */
static void kind_without_command_parses(void **state)
{
	wq_config *c = parse_ok("[worker]\nconcurrency = 2\n[kind.b]\ntimeout = 1s\n");
	const struct wq__kind_config *k = wq__config_kind(c, "b");
	(void)state;
	assert_non_null(k);
	assert_null(k->argv);
	assert_int_equal(k->timeout, WQ__US_PER_S);
	assert_int_equal(k->retry_backoff, WQ__US_PER_S);
	wq_config_free(c);
	c = parse_ok("[worker]\nconcurrency = 2\n");
	assert_int_equal(c->nkinds, 0);
	wq_config_free(c);
}

/* Issue 14: lines beyond libinih's 200 bytes are read whole (a long webhook URL, a long
 * command); beyond WQ__CONFIG_LINE_MAX a line is refused naming it, never split. */
static void long_lines(void **state)
{
	static char text[WQ__CONFIG_LINE_MAX + 200];
	const struct wq__channel_config *ch;
	wq_config *c;
	size_t n;
	(void)state;
	strcpy(text, "[kind.a]\ncommand = /bin/echo ");
	n = strlen(text);
	memset(text + n, 'x', 5000);
	strcpy(text + n + 5000, " end\n[channel.h]\ntype = webhook\nurl = http://h/");
	n = strlen(text);
	memset(text + n, 'u', 6000);
	strcpy(text + n + 6000, "\n");
	c = parse_ok(text);
	assert_int_equal(strlen(wq__config_kind(c, "a")->argv[1]), 5000);
	assert_string_equal(wq__config_kind(c, "a")->argv[2], "end");
	ch = wq__config_channel(c, "h");
	assert_int_equal(strlen(ch->url), strlen("http://h/") + 6000);
	wq_config_free(c);
	strcpy(text, "[kind.a]\ncommand = /bin/echo ");
	n = strlen(text);
	memset(text + n, 'x', WQ__CONFIG_LINE_MAX);
	strcpy(text + n + WQ__CONFIG_LINE_MAX, "\n");
	expect_error(text, "t.ini:2: line is longer than 65536 bytes");
}

/* Issue 14: a port out of range in a URL is refused naming the key. */
static void ports(void **state)
{
	wq_config *c;
	(void)state;
	expect_error("[worker]\ndb = postgres://u:p@h:70000/db\n", "t.ini:2: db: port '70000' is out of range");
	expect_error("[worker]\ndb = postgres://h:0/db\n", "db: port '0'");
	expect_error("[worker]\ndb = postgres://h:12a/db\n", "db: port '12a'");
	expect_error("[channel.h]\ntype = webhook\nurl = http://h:65536/x\n",
		     "t.ini:3: url: port '65536' is out of range");
	c = parse_ok("[worker]\ndb = postgres://u:p@[::1]:5432/db\n"
		     "[channel.h]\ntype = webhook\nurl = https://h:65535/x?a=b:c\n");
	wq_config_free(c);
	c = parse_ok("[worker]\ndb = /var/lib/wakeq/x:1.db\n");
	wq_config_free(c);
}

/* Issue 14: `command =` is split as a shell splits words; an inline comment starts at
 * " #" or " ;" outside quotes only. */
static void command_quoting(void **state)
{
	wq_config *c = parse_ok("[kind.a]\n"
				"command = sh -c 'echo a ; b # c' \"x #y\" z\\ w  # comment\n"
				"[kind.b]\n"
				"command = /bin/b ; comment\n");
	char **a = wq__config_kind(c, "a")->argv;
	(void)state;
	assert_string_equal(a[0], "sh");
	assert_string_equal(a[1], "-c");
	assert_string_equal(a[2], "echo a ; b # c");
	assert_string_equal(a[3], "x #y");
	assert_string_equal(a[4], "z w");
	assert_null(a[5]);
	assert_null(wq__config_kind(c, "b")->argv[1]);
	wq_config_free(c);
	expect_error("[kind.a]\ncommand = sh -c 'oops\n", "t.ini:2: command: unterminated single quote");
}

static void load_missing_file(void **state)
{
	wq_config *c = NULL;
	wq_error e;
	(void)state;
	assert_int_equal(wq_config_load("/nonexistent/wakeq.ini", &c, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "/nonexistent/wakeq.ini"));
}

static void argv_split(void **state)
{
	char **argv = NULL;
	wq_error e;
	(void)state;
	assert_int_equal(wq__argv_split("  a  \"b c\" \"\" \"q\\\"x\" $HOME;rm ", &argv, &e), WQ_OK);
	assert_string_equal(argv[0], "a");
	assert_string_equal(argv[1], "b c");
	assert_string_equal(argv[2], "");
	assert_string_equal(argv[3], "q\"x");
	assert_string_equal(argv[4], "$HOME;rm"); /* no shell: nothing is expanded */
	assert_null(argv[5]);
	wq__argv_free(argv);
	assert_int_equal(wq__argv_split("a \"b", &argv, &e), WQ_EINVAL);
}

static void channels(void **state)
{
	wq_config *c = parse_ok("[worker]\n"
				"delivery_concurrency = 2\n"
				"operators_inbox = oncall\n"
				"[channel.ops]\n"
				"url = http://127.0.0.1:8080/hooks/wakeq   # before its type\n"
				"type = webhook                # HTTP POST\n"
				"timeout = 2s\n"
				"max_attempts = 3\n"
				"retry_backoff = 100ms\n"
				"[channel.pager]\n"
				"type = command\n"
				"command = /usr/local/bin/page-oncall --urgent\n"
				"[kind.a]\n"
				"command = /bin/true\n");
	const struct wq__channel_config *ops = wq__config_channel(c, "ops");
	const struct wq__channel_config *pager = wq__config_channel(c, "pager");
	(void)state;
	assert_int_equal(c->delivery_concurrency, 2);
	assert_string_equal(wq__config_operators(c), "oncall");
	assert_int_equal(c->nchannels, 2);
	assert_non_null(ops);
	assert_int_equal(ops->type, WQ__CHANNEL_WEBHOOK);
	assert_string_equal(ops->url, "http://127.0.0.1:8080/hooks/wakeq");
	assert_null(ops->argv);
	assert_int_equal(ops->timeout, 2 * WQ__US_PER_S);
	assert_int_equal(ops->max_attempts, 3);
	assert_int_equal(ops->retry_backoff, 100 * WQ__US_PER_MS);
	assert_non_null(pager);
	assert_int_equal(pager->type, WQ__CHANNEL_COMMAND);
	assert_string_equal(pager->argv[0], "/usr/local/bin/page-oncall");
	assert_string_equal(pager->argv[1], "--urgent");
	assert_null(pager->url);
	/* defaults */
	assert_int_equal(pager->timeout, 5 * WQ__US_PER_S);
	assert_int_equal(pager->max_attempts, 8);
	assert_int_equal(pager->retry_backoff, 1 * WQ__US_PER_S);
	assert_null(wq__config_channel(c, "other"));
	wq_config_free(c);

	c = parse_ok("[kind.a]\ncommand = /bin/true\n");
	assert_int_equal(c->delivery_concurrency, 4);
	assert_string_equal(wq__config_operators(c), "operators");
	assert_int_equal(c->nchannels, 0);
	wq_config_free(c);
}

static void channel_errors(void **state)
{
	(void)state;
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = http://h/\n"
		     "colour = red\n",
		     "t.ini:6: [channel.ops] unknown key 'colour'");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = smoke\n",
		     "t.ini:4: type: 'smoke' is not webhook or command");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\nurl = http://h/\n",
		     "t.ini:3: [channel.ops] has no type");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\n",
		     "t.ini:3: [channel.ops] is a webhook without a url");
	expect_error("[kind.a]\ncommand=x\n[channel.p]\ntype = command\n",
		     "t.ini:3: [channel.p] has no command");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = ftp://h/x\n",
		     "t.ini:5: url: 'ftp://h/x' is not an http:// or https:// URL");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = http://\n",
		     "t.ini:5: url:");
	/* a key that does not fit the type, whichever comes first */
	expect_error("[kind.a]\ncommand=x\n[channel.p]\ntype = command\ncommand = /bin/p\n"
		     "url = http://h/\n",
		     "t.ini:6: [channel.p] url: a command channel has no url");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ncommand = /bin/p\nurl = http://h/\n"
		     "type = webhook\n",
		     "t.ini:4: [channel.ops] command: a webhook channel has no command");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = http://h/\n"
		     "max_attempts = 0\n",
		     "t.ini:6: max_attempts");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = http://h/\n"
		     "timeout = 0s\n",
		     "t.ini:6: timeout");
	expect_error("[kind.a]\ncommand=x\n[channel.ops]\ntype = webhook\nurl = http://h/\n"
		     "[channel.ops]\n",
		     "t.ini:6: [channel.ops]: section given twice");
	expect_error("[kind.a]\ncommand=x\n[channel.a b]\ntype = webhook\n", "t.ini:3: [channel.a b]");
	expect_error("[worker]\noperators_inbox = two words\n[kind.a]\ncommand=x\n",
		     "t.ini:2: operators_inbox: 'two words'");
	expect_error("[worker]\ndelivery_concurrency = 0\n[kind.a]\ncommand=x\n",
		     "t.ini:2: delivery_concurrency");
}

static void url_shown(const char *url, const char *want)
{
	char buf[256];
	assert_string_equal(wq__url_safe(url, buf, sizeof buf), want);
}

/* URLs in messages: scheme, host, port and path; never user, password, query, fragment */
static void urls_are_redacted(void **state)
{
	char msg[160];
	wq_error e = {0};
	wq_config *c = NULL;
	(void)state;
	url_shown("http://user:secret@127.0.0.1:9/hook?token=abc", "http://127.0.0.1:9/hook");
	url_shown("https://example.org/a/b#frag", "https://example.org/a/b");
	url_shown("https://[::1]:8443/x?k=v", "https://[::1]:8443/x");
	url_shown("http://h", "http://h/");
	url_shown("postgresql://u:pw@db.local:5433/wq?password=pw&sslmode=require",
		  "postgresql://db.local:5433/wq");
	url_shown("http://user:secret@h/a b?token=abc", "(unparseable URL)");
	url_shown("user:secret", "(unparseable URL)");
	/* a message that quotes parts of the URL */
	snprintf(msg, sizeof msg, "curl: failed for user 'bob' with s3cr%%21t at h/x?tok=42 (s3cr!t)");
	wq__url_scrub(msg, "http://bob:s3cr%21t@h/x?tok=42");
	assert_null(strstr(msg, "bob"));
	assert_null(strstr(msg, "s3cr"));
	assert_null(strstr(msg, "tok=42"));
	assert_non_null(strstr(msg, "curl: failed for user"));
	/* the config error about a bad url, and about a key next to a good one */
	assert_int_equal(wq_config_parse("[kind.a]\ncommand=x\n[channel.o]\ntype = webhook\n"
					 "url = ftp://user:secret@h:21/x?token=abc\n",
					 "t.ini", &c, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "t.ini:5: url: 'ftp://h:21/x' is not"));
	assert_null(strstr(e.message, "secret"));
	assert_null(strstr(e.message, "token"));
	assert_int_equal(wq_config_parse("[kind.a]\ncommand=x\n[channel.o]\ntype = webhook\n"
					 "url = http://user:secret@h/x?token=abc\ntimeout = soon\n",
					 "t.ini", &c, &e), WQ_ECONFIG);
	assert_non_null(strstr(e.message, "t.ini:6: timeout"));
	assert_null(strstr(e.message, "secret"));
	assert_null(strstr(e.message, "token"));
}

/* Issue 10: the limit keys per tenant, a kind's concurrency and payload versions. */
static void limits_and_kind_policy(void **state)
{
	wq_config *c = parse_ok("[kind.a]\ncommand = /bin/true\nconcurrency = 3\n"
				"payload_versions = 1, 3\n[limits]\nmax_payload_bytes = 1KiB\n"
				"max_result_bytes = 200\nmax_starts_per_day = 5\nmax_followups = 0\n"
				"[limits.acme]\nmax_followup_depth = 2\n");
	const struct wq__kind_config *k = wq__config_kind(c, "a");
	const struct wq__limit_config *l = wq__config_limits(c, "other");
	(void)state;
	assert_int_equal(k->concurrency, 3);
	assert_true(k->payload_versions == ((UINT64_C(1) << 1) | (UINT64_C(1) << 3)));
	assert_int_equal(l->max_payload_bytes, 1024);
	assert_int_equal(l->max_result_bytes, 200);
	assert_int_equal(l->max_starts_per_day, 5);
	assert_int_equal(l->max_followups, 0);
	assert_int_equal(l->max_followup_depth, -1); /* not set: no limit */
	l = wq__config_limits(c, "acme");            /* replaces [limits] */
	assert_int_equal(l->max_followup_depth, 2);
	assert_int_equal(l->max_followups, -1);
	assert_int_equal(l->max_starts_per_day, 0);
	wq_config_free(c);
	expect_error("[kind.a]\ncommand = x\npayload_versions = 0\n", "payload_versions");
	expect_error("[kind.a]\ncommand = x\npayload_versions = 1,,2\n", "payload_versions");
	expect_error("[kind.a]\ncommand = x\nconcurrency = 0\n", "concurrency");
	expect_error("[limits]\nmax_starts_per_day = -1\n", "max_starts_per_day");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_example),	   cmocka_unit_test(defaults),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(kind_without_command_parses),
		cmocka_unit_test(long_lines), cmocka_unit_test(ports),
		cmocka_unit_test(command_quoting),
		cmocka_unit_test(load_missing_file), cmocka_unit_test(argv_split),
		cmocka_unit_test(channels),	   cmocka_unit_test(channel_errors),
		cmocka_unit_test(urls_are_redacted),
		cmocka_unit_test(limits_and_kind_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
