/* Worker configuration: defaults, every key, and each kind of bad file named by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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
	expect_error("[worker]\nconcurrency = 2\n[kind.b]\ntimeout = 1s\n", "t.ini:3: [kind.b] has no command");
	expect_error("[worker]\nconcurrency = 2\n", "no [kind.NAME] section");
	expect_error("orphan = 1\n[kind.a]\ncommand=x\n", "t.ini:1: key 'orphan' outside a section");
	expect_error("[worker]\nthis line is not a key\n", "t.ini:2: syntax error");
	expect_error("[worker]\nheartbeat = 2s\nlease = 3s\n[kind.a]\ncommand=x\n", "lease must be at least twice");
}

static void long_line_is_refused_not_split(void **state)
{
	char text[400];
	(void)state;
	strcpy(text, "[kind.a]\ncommand = /bin/echo ");
	memset(text + strlen(text), 'x', 250);
	strcpy(text + strlen(text) - 0, "\n");
	expect_error(text, "t.ini:2: line is longer than 199 characters");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_example),	   cmocka_unit_test(defaults),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(long_line_is_refused_not_split),
		cmocka_unit_test(load_missing_file), cmocka_unit_test(argv_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
