/* store_wakeup_cases.h — wake-ups (issues 11, 12); included by test_store.c (its fixture and
 * helpers), kept apart so that file stays readable. */
/* ---- wake-ups (issues 11, 12) ---- */

/* wave 11: tasks_due holds only the tasks not due at their enqueue (due_at > created_at);
 * both reads still see every pending task. next_due (--until-idle) says "due now" while a
 * task due at its enqueue is pending, else gives the earliest later one; a retry's
 * backoff (due_at past created_at after the enqueue) is seen by both reads. */
static void due_reads_with_tasks_due_at_enqueue(void **state)
{
	static const char *const kinds[] = {"k"};
	struct fx *f = *state;
	struct wq__claimed c[10];
	int64_t due = -1, at = -1, later, ids[10];
	int running = 0;
	wq_error e;

	instance(f, "w1");
	later = enqueue_at(f, NULL, T0 + 9000000);
	assert_int_equal(M->next_due(f->s, kinds, 1, &due, &running, &e), WQ_OK);
	assert_int_equal(due, T0 + 9000000);
	enqueue_at(f, NULL, 0); /* due at its enqueue */
	assert_int_equal(M->next_due(f->s, kinds, 1, &due, &running, &e), WQ_OK);
	assert_true(due > 0 && due <= f->now);
	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, T0 + 9000000);

	/* claimed, then retried with a backoff: pending again, due after its enqueue */
	assert_int_equal(claim_ids(f, "w1", ids, c), 1);
	assert_int_equal(M->next_due(f->s, kinds, 1, &due, &running, &e), WQ_OK);
	assert_int_equal(due, T0 + 9000000);
	assert_int_equal(running, 1);
	{
		struct wq__outcome o = outcome_of(&c[0], "w1", WQ__FINISH_RETRY, f->now);

		o.retry_at = T0 + 4000000;
		assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	}
	assert_int_equal(M->next_due(f->s, kinds, 1, &due, &running, &e), WQ_OK);
	assert_int_equal(due, T0 + 4000000);
	assert_int_equal(running, 0);
	assert_int_equal(M->wake_next(f->s, kinds, 1, f->now, &at, &e), WQ_OK);
	assert_int_equal(at, T0 + 4000000);
	assert_true(later != ids[0]);
}

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
