/* store_wakeup_cases.h — wake-ups (issues 11, 12); included by test_store.c (its fixture and
 * helpers), kept apart so that file stays readable. */
/* ---- wake-ups (issues 11, 12) ---- */

/* wake_next reports the earliest FUTURE due time of a pending task of the kinds asked
 * for (a paused kind's tasks are not), never work already due; on SQLite an enqueue
 * touches the wake-up file after its commit and a watcher's drain sees it once. */
static void wake_next_and_wake_file(void **state)
{
	static const char *const kinds[] = {"k"}, *const other[] = {"x"};
	struct fx *f = *state;
	int64_t at = -1;
	wq_error e;

	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, 0);
	enqueue_at(f, NULL, f->now + 1);
	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, 0); /* due now: a claim's, not the timer's */
	enqueue_at(f, NULL, T0 + 9000000);
	enqueue_at(f, NULL, T0 + 5000000);
	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, T0 + 5000000);
	assert_int_equal(M->wake_next(f->s, other, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, 0);
	assert_int_equal(M->kind_pause(f->s, "k", 1, f->now, &e), WQ_OK);
	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, 0);
	assert_int_equal(M->kind_pause(f->s, "k", 0, f->now, &e), WQ_OK);

	if (strcmp(backend, "sqlite") == 0) {
		assert_non_null(M->wakeup_fd);
		assert_true(M->wakeup_fd(f->s) >= 0);
		while (M->wakeup_drain(f->s) > 0)
			;
		assert_int_equal(M->wakeup_drain(f->s), 0);
		enqueue_at(f, NULL, T0 + 7000000);
		assert_int_equal(M->wakeup_drain(f->s), 1);
		assert_int_equal(M->wakeup_drain(f->s), 0);
	}
}
