/* test_failpoint.c — the test hooks of issue 15: the clock offset (wq__clock_set_offset
 * moves wq_now without sleeping) and wq__failpoint_rc's `error` and count. */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef WQ_FAILPOINTS
static void clock_offset_moves_now(void **state)
{
	int64_t before, after;

	(void)state;
	wq__clock_set_offset(0);
	before = wq_now();
	wq__clock_set_offset(3600 * WQ__US_PER_S);
	after = wq_now();
	assert_true(after - before >= 3600 * WQ__US_PER_S);
	assert_true(after - before < 3601 * WQ__US_PER_S);
	wq__clock_set_offset(-3600 * WQ__US_PER_S);
	assert_true(wq_now() < before);
	wq__clock_set_offset(0);
}

/* $WAKEQ_FAILPOINT is set in main before the first use: fp-a fails on its 2nd hit only,
 * fp-b on its 1st; other names never. */
static void error_action_and_count(void **state)
{
	wq_error e;

	(void)state;
	assert_int_equal(wq__failpoint_rc("fp-a", &e), WQ_OK);
	assert_int_equal(wq__failpoint_rc("fp-a", &e), WQ_EIO);
	assert_non_null(strstr(e.message, "fp-a"));
	assert_int_equal(wq__failpoint_rc("fp-a", &e), WQ_OK);
	assert_int_equal(wq__failpoint_rc("fp-b", &e), WQ_EIO);
	assert_int_equal(wq__failpoint_rc("fp-c", &e), WQ_OK);
	assert_int_equal(wq__failpoint_hit("fp-d"), 0);
	wq__failpoint("fp-e"); /* delay: returns */
}

/* One name given several counts fails exactly those hits, consecutive ones included
 * (each spec once counted only the hits the earlier specs did not fire on, so
 * fp-r:2,fp-r:3,fp-r:4 failed hits 2, 4 and 6). */
static void one_name_several_counts(void **state)
{
	static const wq_rc want[] = {WQ_OK, WQ_EIO, WQ_EIO, WQ_EIO, WQ_OK, WQ_OK, WQ_OK};
	wq_error e;

	(void)state;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_int_equal(wq__failpoint_rc("fp-r", &e), want[i]);
}
#endif

int main(void)
{
#ifdef WQ_FAILPOINTS
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clock_offset_moves_now),
		cmocka_unit_test(error_action_and_count),
		cmocka_unit_test(one_name_several_counts),
	};
	setenv("WAKEQ_FAILPOINT",
	       "fp-a:2:error,fp-b:error,fp-e:delay:1ms,fp-r:2:error,fp-r:3:error,fp-r:4:error", 1);
	unsetenv("WAKEQ_FAILPOINT_LOG");
	return cmocka_run_group_tests(tests, NULL, NULL);
#else
	return 0; /* a release build has no failpoints */
#endif
}
