/* The state machine of SPEC §2: exactly the listed transitions, terminal states final. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "internal.h"

#define P WQ_STATE_PENDING
#define R WQ_STATE_RUNNING
#define S WQ_STATE_SUCCEEDED
#define F WQ_STATE_FAILED
#define I WQ_STATE_INTERRUPTED
#define C WQ_STATE_CANCELLED

static void allowed_transitions(void **state)
{
	/* the table of SPEC §2, written out independently of state.c */
	static const int expect[7][7] = {
		[P] = {[R] = 1, [C] = 1},
		[R] = {[S] = 1, [P] = 1, [F] = 1, [I] = 1, [C] = 1},
		[I] = {[P] = 1, [S] = 1, [F] = 1, [C] = 1},
	};
	(void)state;
	for (int from = P; from <= C; from++)
		for (int to = P; to <= C; to++) {
			if (wq__transition_allowed((wq_state)from, (wq_state)to) != expect[from][to])
				fail_msg("%s -> %s: expected %s", wq_state_name((wq_state)from),
					 wq_state_name((wq_state)to),
					 expect[from][to] ? "allowed" : "refused");
		}
}

static void terminal_states_never_change(void **state)
{
	(void)state;
	for (int from = P; from <= C; from++) {
		int any = 0;
		for (int to = P; to <= C; to++)
			any |= wq__transition_allowed((wq_state)from, (wq_state)to);
		assert_int_equal(wq_state_is_terminal((wq_state)from), !any);
	}
	assert_int_equal(wq__transition_allowed(0, P), 0);
	assert_int_equal(wq__transition_allowed(P, 99), 0);
}

static void names_roundtrip(void **state)
{
	wq_state s;
	wq_error e;
	(void)state;
	for (int i = P; i <= C; i++) {
		assert_int_equal(wq_state_parse(wq_state_name((wq_state)i), &s, NULL), WQ_OK);
		assert_int_equal(s, i);
	}
	assert_int_equal(wq_state_parse("done", &s, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "unknown state 'done'"));
	assert_null(wq_state_name(0));
}

static void error_codes_are_stable(void **state)
{
	(void)state;
	/* these numbers are the CLI's exit codes and must never be renumbered */
	assert_int_equal(WQ_EINVAL, 2);
	assert_int_equal(WQ_ECONFLICT, 3);
	assert_int_equal(WQ_ENOTFOUND, 4);
	assert_int_equal(WQ_ELIMIT, 5);
	assert_int_equal(WQ_ESTATE, 6);
	assert_string_equal(wq_strerror(WQ_ESTALE), "attempt no longer owns the task");
	assert_string_equal(wq_strerror((wq_rc)999), "unknown error code");
}

static void backoff_grows_with_jitter(void **state)
{
	int64_t base = 1000000;
	(void)state;
	assert_int_equal(wq__backoff(base, 0, 1, 0.5), base);
	assert_int_equal(wq__backoff(base, 0, 3, 0.5), 4 * base);
	assert_int_equal(wq__backoff(base, 3 * base, 10, 0.5), 3 * base); /* capped */
	assert_true(wq__backoff(base, 0, 2, 0.0) == 2 * base - base / 2);
	assert_true(wq__backoff(base, 0, 2, 0.999) < 2 * base + base / 2);
	assert_true(wq__backoff(base, 0, 200, 0.5) > 0); /* no overflow */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allowed_transitions),
		cmocka_unit_test(terminal_states_never_change),
		cmocka_unit_test(names_roundtrip),
		cmocka_unit_test(error_codes_are_stable),
		cmocka_unit_test(backoff_grows_with_jitter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
