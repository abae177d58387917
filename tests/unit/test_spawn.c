/* test_spawn.c — the handler's environment (spawn.c keeps the filtered parent
 * environment between spawns: it must follow every change of the environment and of
 * the names changed) and a program named by a path exec'd without a lookup (its errors
 * come from execve, in the same "PATH: reason" form). */
#include "internal.h"
#include "spawn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct run {
	int done;
	int exit_status;
	char *out;
};

static void on_done(struct wq__spawn *sp, struct wq__spawn_result *res, void *ud)
{
	struct run *r = ud;

	(void)sp;
	r->done = 1;
	r->exit_status = res->exit_status;
	r->out = res->out; /* taken */
	res->out = NULL;
}

/* Runs argv with the environment changes; its stdout (to be freed), NULL when the start
 * failed (*e then says why). */
static char *run(char *const *argv, const char *const *changes, wq_error *e)
{
	uv_loop_t loop;
	struct wq__spawn *sp;
	struct run r = {0};
	struct wq__spawn_opts o;

	assert_int_equal(uv_loop_init(&loop), 0);
	memset(&o, 0, sizeof(o));
	o.loop = &loop;
	o.argv = argv;
	o.env = changes;
	o.input = "";
	o.result_max = 1 << 20;
	o.stderr_max = 4096;
	o.kill_grace = WQ__US_PER_S;
	o.on_done = on_done;
	o.ud = &r;
	if (wq__spawn_start(&o, &sp, e) != WQ_OK) {
		uv_run(&loop, UV_RUN_DEFAULT); /* the handles a failed start opened close */
		assert_int_equal(uv_loop_close(&loop), 0);
		return NULL;
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	assert_true(r.done);
	assert_int_equal(r.exit_status, 0);
	return r.out ? r.out : strdup("");
}

/* How many lines of env's output are exactly `line`. */
static int count_line(const char *out, const char *line)
{
	size_t len = strlen(line);
	int n = 0;

	for (const char *p = out; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		n += l == len && memcmp(p, line, len) == 0;
		p = nl ? nl + 1 : p + l;
	}
	return n;
}

/* Lines of env's output that start with `name=`. */
static int count_name(const char *out, const char *name)
{
	size_t len = strlen(name);
	int n = 0;

	for (const char *p = out; p && *p;) {
		const char *nl = strchr(p, '\n');

		n += strncmp(p, name, len) == 0 && p[len] == '=';
		p = nl ? nl + 1 : p + strlen(p);
	}
	return n;
}

static char *const env_argv[] = {"/usr/bin/env", NULL};

static void changes_set_and_remove(void **state)
{
	const char *changes[] = {"WQT_SET=2", "WQT_GONE", "WQT_KEPT=new", NULL};
	wq_error e;
	char *out;

	(void)state;
	setenv("WQT_GONE", "1", 1);
	setenv("WQT_KEPT", "old", 1);
	assert_non_null(out = run(env_argv, changes, &e));
	assert_int_equal(count_line(out, "WQT_SET=2"), 1);
	assert_int_equal(count_name(out, "WQT_GONE"), 0);
	assert_int_equal(count_line(out, "WQT_KEPT=new"), 1);
	assert_int_equal(count_name(out, "WQT_KEPT"), 1);
	assert_int_equal(count_name(out, "PATH"), 1); /* the rest of the parent's is there */
	free(out);
	unsetenv("WQT_GONE");
	unsetenv("WQT_KEPT");
}

/* The same changes spawn after spawn while the parent's environment changes between
 * them: each child sees the environment of its own start. */
static void follows_the_parent_environment(void **state)
{
	const char *changes[] = {"WQT_TASK=1", NULL};
	wq_error e;
	char *out;

	(void)state;
	setenv("WQT_VAR", "x", 1);
	assert_non_null(out = run(env_argv, changes, &e));
	assert_int_equal(count_line(out, "WQT_VAR=x"), 1);
	free(out);
	setenv("WQT_VAR", "y", 1); /* a value replaced */
	assert_non_null(out = run(env_argv, changes, &e));
	assert_int_equal(count_line(out, "WQT_VAR=y"), 1);
	assert_int_equal(count_name(out, "WQT_VAR"), 1);
	free(out);
	setenv("WQT_MORE", "z", 1); /* one added */
	assert_non_null(out = run(env_argv, changes, &e));
	assert_int_equal(count_line(out, "WQT_MORE=z"), 1);
	free(out);
	unsetenv("WQT_VAR"); /* one removed */
	assert_non_null(out = run(env_argv, changes, &e));
	assert_int_equal(count_name(out, "WQT_VAR"), 0);
	assert_int_equal(count_line(out, "WQT_MORE=z"), 1);
	assert_int_equal(count_line(out, "WQT_TASK=1"), 1);
	free(out);
	unsetenv("WQT_MORE");
}

/* Other names changed with the parent's environment unchanged: the parent's variable
 * a change now names is replaced (not repeated), the one it no longer names is back. */
static void follows_the_names_changed(void **state)
{
	const char *first[] = {"WQT_A=changed", NULL};
	const char *second[] = {"WQT_B=changed", NULL};
	wq_error e;
	char *out;

	(void)state;
	setenv("WQT_A", "parent", 1);
	setenv("WQT_B", "parent", 1);
	assert_non_null(out = run(env_argv, first, &e));
	assert_int_equal(count_line(out, "WQT_A=changed"), 1);
	assert_int_equal(count_name(out, "WQT_A"), 1);
	assert_int_equal(count_line(out, "WQT_B=parent"), 1);
	free(out);
	assert_non_null(out = run(env_argv, second, &e));
	assert_int_equal(count_line(out, "WQT_A=parent"), 1);
	assert_int_equal(count_line(out, "WQT_B=changed"), 1);
	assert_int_equal(count_name(out, "WQT_B"), 1);
	free(out);
	assert_non_null(out = run(env_argv, NULL, &e));
	assert_int_equal(count_line(out, "WQT_A=parent"), 1);
	assert_int_equal(count_line(out, "WQT_B=parent"), 1);
	free(out);
	unsetenv("WQT_A");
	unsetenv("WQT_B");
}

/* A path goes to execve as it is; what the kernel refuses comes back as before. */
static void path_errors_from_execve(void **state)
{
	char *const missing[] = {"/nonexistent-wq/prog", NULL};
	char *const dir[] = {"/", NULL};
	char *const bare[] = {"wq-no-such-program-anywhere", NULL};
	wq_error e;

	(void)state;
	assert_null(run(missing, NULL, &e));
	assert_string_equal(e.message, "/nonexistent-wq/prog: No such file or directory");
	assert_null(run(dir, NULL, &e));
	assert_string_equal(e.message, "/: Permission denied");
	assert_null(run(bare, NULL, &e));
	assert_string_equal(e.message, "wq-no-such-program-anywhere: not found in PATH");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(changes_set_and_remove),
		cmocka_unit_test(follows_the_parent_environment),
		cmocka_unit_test(follows_the_names_changed),
		cmocka_unit_test(path_errors_from_execve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
