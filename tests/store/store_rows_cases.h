/* store_rows_cases.h — multi-row writes (issue 11, wave 4: op_rows.c); included by
 * test_store.c (its fixture and helpers). */

/* The attempt row `attempt` of task id into *a; 1 when found. */
static int attempt_of(struct fx *f, int64_t id, int attempt, wq_attempt *a)
{
	wq_attempt *v = NULL;
	size_t n = 0, i;
	int found = 0;
	wq_error e;

	assert_int_equal(M->attempts(f->s, id, &v, &n, &e), WQ_OK);
	for (i = 0; i < n; i++)
		if (v[i].attempt == attempt) {
			*a = v[i];
			found = 1;
		}
	free(v);
	return found;
}

/* The id of the first event of `type` on task id; 0 when none. */
static int64_t event_id(struct fx *f, int64_t id, const char *type)
{
	wq_event *ev = NULL;
	size_t n = 0, i;
	int64_t at = 0;
	wq_error e;

	assert_int_equal(M->events(f->s, id, &ev, &n, &e), WQ_OK);
	for (i = 0; i < n && !at; i++)
		if (strcmp(ev[i].type, type) == 0)
			at = ev[i].id;
	free(ev);
	return at;
}

/* One batch mixing outcome kinds with a stale attempt, and a claim riding in it: every
 * fresh outcome has its task row, its attempt row (outcome, reason, exit status) and its
 * event; the stale one changes nothing but its stale-outcome event (its attempt row still
 * running); the claimed tasks have their attempts rows and claimed < started events; the
 * event ids of the multi-row insert are unique and in the order the rows were decided. */
static void finish_batch_rows_mixed(void **state)
{
	static const char *const kinds[] = {"k"};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 1, .limit = 5};
	struct wq__claimed c[4], *got = NULL;
	struct wq__outcome o[4];
	const struct wq__outcome *v[4] = {&o[0], &o[1], &o[2], &o[3]};
	wq_rc rcs[4];
	wq_error errs[4], e;
	int64_t id[6], done_at;
	size_t ngot = 0, i;
	wq_attempt a;
	wq_task t;

	instance(f, "w1");
	for (i = 0; i < 4; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, &id[i], &e), WQ_OK);
		assert_int_equal(claim(f, "w1", &c[i]), 1);
	}
	for (i = 4; i < 6; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, &id[i], &e), WQ_OK);
	}
	done_at = f->now + 5;
	o[0] = succeeded(&c[0], "w1", done_at);
	o[1] = succeeded(&c[1], "w1", done_at);
	o[1].attempt = c[1].attempt + 1; /* stale: not the attempt that owns the task */
	o[2] = outcome_of(&c[2], "w1", WQ__FINISH_RETRY, done_at);
	o[2].reason = "boom";
	o[2].exit_status = 2;
	o[2].retry_at = done_at + 3600000000LL; /* not due for the riding claim */
	o[3] = outcome_of(&c[3], "w1", WQ__FINISH_FAILED, done_at);
	o[3].reason = "exit-status";
	o[3].exit_status = 3;
	req.now = done_at;
	assert_int_equal(M->finish_batch(f->s, v, 4, rcs, errs, &req, &got, &ngot, &e), WQ_OK);
	assert_int_equal(rcs[0], WQ_OK);
	assert_int_equal(rcs[1], WQ_ESTALE);
	assert_int_equal(rcs[2], WQ_OK);
	assert_int_equal(rcs[3], WQ_OK);
	assert_int_equal(ngot, 2);
	for (i = 0; i < ngot; i++) {
		assert_true(got[i].id == id[4 + i]);
		free(got[i].payload);
	}
	free(got);
	/* task rows */
	static const wq_state want[] = {WQ_STATE_SUCCEEDED, WQ_STATE_RUNNING, WQ_STATE_PENDING,
					WQ_STATE_FAILED, WQ_STATE_RUNNING, WQ_STATE_RUNNING};
	for (i = 0; i < 6; i++) {
		assert_int_equal(M->get(f->s, id[i], &t, &e), WQ_OK);
		assert_int_equal(t.state, want[i]);
	}
	/* attempt rows: the fresh ones finished as decided, the stale one untouched */
	assert_true(attempt_of(f, id[0], 1, &a));
	assert_string_equal(a.outcome, "succeeded");
	assert_true(a.finished_at == done_at);
	assert_true(attempt_of(f, id[1], 1, &a));
	assert_string_equal(a.outcome, "");
	assert_true(a.finished_at == 0);
	assert_false(attempt_of(f, id[1], 2, &a));
	assert_true(attempt_of(f, id[2], 1, &a));
	assert_string_equal(a.outcome, "retry");
	assert_string_equal(a.reason, "boom");
	assert_int_equal(a.exit_status, 2);
	assert_true(attempt_of(f, id[3], 1, &a));
	assert_string_equal(a.outcome, "failed");
	assert_int_equal(a.exit_status, 3);
	for (i = 4; i < 6; i++) { /* claimed in the batch */
		assert_true(attempt_of(f, id[i], 1, &a));
		assert_string_equal(a.instance, "w1");
		assert_true(a.started_at == done_at);
		assert_true(a.finished_at == 0);
		assert_int_equal(events_of(f, id[i], "claimed", NULL), 1);
		assert_int_equal(events_of(f, id[i], "started", NULL), 1);
		assert_true(event_id(f, id[i], "claimed") < event_id(f, id[i], "started"));
	}
	/* events: one each, after the attempt's start, in the order decided */
	assert_int_equal(events_of(f, id[0], "succeeded", NULL), 1);
	assert_int_equal(events_of(f, id[1], "succeeded", NULL), 0);
	assert_int_equal(events_of(f, id[1], "stale-outcome", NULL), 1);
	assert_int_equal(events_of(f, id[2], "retry-scheduled", NULL), 1);
	assert_int_equal(events_of(f, id[3], "failed", NULL), 1);
	assert_true(event_id(f, id[0], "started") < event_id(f, id[0], "succeeded"));
	assert_true(event_id(f, id[0], "succeeded") < event_id(f, id[1], "stale-outcome"));
	assert_true(event_id(f, id[1], "stale-outcome") < event_id(f, id[2], "retry-scheduled"));
	assert_true(event_id(f, id[2], "retry-scheduled") < event_id(f, id[3], "failed"));
	assert_true(event_id(f, id[3], "failed") < event_id(f, id[4], "claimed"));
}
