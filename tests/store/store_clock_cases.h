/*
 * store_clock_cases.h — store contract cases of the store's clock (issue 15), included
 * by test_store.c after the policy cases (claim_limited, DAY_US).
 */

/* prune forgets what nothing else deletes: an external lease that expired on the
 * store's clock (a live one and a task's hold stay), and starts-per-day counters of
 * days before yesterday (today's stay). */
static void prune_forgets_expired_leases_and_old_start_days(void **state)
{
	struct fx *f = *state;
	int64_t ids[10], store_now = 0, today;
	wq_prune_counts pc;
	wq_lock held;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(M->store_now(f->s, &store_now, &e), WQ_OK);
	today = store_now / DAY_US * DAY_US;
	/* leases: E expires, L lives, T is a task's hold */
	assert_int_equal(M->lock_acquire(f->s, "E", "gone", INT64_C(1000000) / 2, &held, &e),
			 WQ_OK);
	assert_int_equal(M->lock_acquire(f->s, "L", "live", 600 * INT64_C(1000000), &held, &e),
			 WQ_OK);
	(void)enqueue_locked(f, "T");
	assert_int_equal(claim_ids(f, "w1", ids, NULL), 1);
	wait_locks_below(f, 3);
	/* starts: one on a day of 2023 (the limit reached), one today (likewise) */
	f->now = T0 + 1000; /* (operation keys are op_<now>: none used before) */
	(void)enqueue_locked(f, NULL);
	(void)enqueue_locked(f, NULL);
	assert_int_equal(claim_limited(f, "w1", 0, 1, ids), 1);
	f->now = today + 1;
	(void)enqueue_locked(f, NULL);
	(void)enqueue_locked(f, NULL);
	assert_int_equal(claim_limited(f, "w1", 0, 1, ids), 1);

	assert_int_equal(M->prune(f->s, 1, 1, &pc, &e), WQ_OK);
	/* E's row is gone (its release finds nothing), L's and T's are there */
	assert_int_equal(M->lock_release(f->s, "E", "gone", &e), WQ_ENOTFOUND);
	assert_int_equal(locks_held(f), 2);
	assert_int_equal(M->lock_release(f->s, "L", "live", &e), WQ_OK);
	/* the 2023 day starts from zero again; today's count is kept */
	f->now = T0 + 2000;
	(void)enqueue_locked(f, NULL);
	assert_int_equal(claim_limited(f, "w1", 0, 1, ids), 1);
	f->now = today + 10;
	(void)enqueue_locked(f, NULL);
	assert_int_equal(claim_limited(f, "w1", 0, 1, ids), 0);
}
