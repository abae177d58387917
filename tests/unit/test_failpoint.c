/* test_failpoint.c — the test hooks of issue 15: the clock offset (wq__clock_set_offset
 * moves wq_now without sleeping), wq__failpoint_rc's `error` and count, and `hold`. */
#include "internal.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Specs of one name firing on the same hit all act, in order: fp-m's second hit is
 * delayed and then fails (a hold then an error orders a failure in a test); hits of
 * the name before and after pass. */
static void one_hit_several_actions(void **state)
{
	wq_error e;

	(void)state;
	assert_int_equal(wq__failpoint_rc("fp-m", &e), WQ_OK);
	assert_int_equal(wq__failpoint_rc("fp-m", &e), WQ_EIO);
	assert_int_equal(wq__failpoint_rc("fp-m", &e), WQ_OK);
	assert_int_equal(wq__failpoint_hit("fp-n"), 1); /* two specs, one answer */
	assert_int_equal(wq__failpoint_hit("fp-n"), 0);
}

/* fp-h holds until hold_path exists (main arms it with that path). */
static char hold_path[64];
static atomic_int held_returned;

static void *hold_thread(void *arg)
{
	(void)arg;
	wq__failpoint("fp-h");
	atomic_store(&held_returned, 1);
	return NULL;
}

/* `hold:PATH` does not go on before PATH exists (the thread cannot have returned before
 * the file is made, wherever it is then), and goes on once it does. */
static void hold_waits_for_the_file(void **state)
{
	pthread_t th;
	FILE *f;

	(void)state;
	unlink(hold_path);
	assert_int_equal(pthread_create(&th, NULL, hold_thread, NULL), 0);
	assert_int_equal(atomic_load(&held_returned), 0);
	assert_non_null(f = fopen(hold_path, "w"));
	fclose(f);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(atomic_load(&held_returned), 1);
	unlink(hold_path);
}
#endif

int main(void)
{
#ifdef WQ_FAILPOINTS
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clock_offset_moves_now),
		cmocka_unit_test(error_action_and_count),
		cmocka_unit_test(one_name_several_counts),
		cmocka_unit_test(one_hit_several_actions),
		cmocka_unit_test(hold_waits_for_the_file),
	};
	char spec[256];

	snprintf(hold_path, sizeof(hold_path), "/tmp/wq-test-hold.%ld", (long)getpid());
	snprintf(spec, sizeof(spec),
		 "fp-a:2:error,fp-b:error,fp-e:delay:1ms,fp-r:2:error,fp-r:3:error,"
		 "fp-r:4:error,fp-m:2:delay:1ms,fp-m:2:error,fp-n:1:error,fp-n:1:delay:1ms,"
		 "fp-h:hold:%s", hold_path);
	setenv("WAKEQ_FAILPOINT", spec, 1);
	unsetenv("WAKEQ_FAILPOINT_LOG");
	return cmocka_run_group_tests(tests, NULL, NULL);
#else
	return 0; /* a release build has no failpoints */
#endif
}
