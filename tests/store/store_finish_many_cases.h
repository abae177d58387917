/* store_finish_many_cases.h — wave5 pgw: the `succeeded` outcomes of a batch recorded by
 * one multi-row statement where the dialect has it (op_finish_many.c; PostgreSQL), each
 * row exactly as the per-row statement writes it; included by test_store.c. On SQLite
 * the same case checks the per-row path, so both stores must agree. */

/* Three successes in one batch: a binary result (NUL, 0xff, a quote, a backslash, a
 * control byte), no result with outcome "discarded", and a plain one; beside them a
 * success of another instance's attempt (fenced off). Every row carries its own values;
 * the same batch again (a lost COMMIT answer) recognises what it recorded. */
static void finish_batch_many_succeeded(void **state)
{
	static const char bin[] = {'a', 0, (char)0xff, '"', '\\', 1, 'z'};
	struct fx *f = *state;
	struct wq__claimed c[4];
	struct wq__outcome o[4];
	const struct wq__outcome *v[4] = {&o[0], &o[1], &o[2], &o[3]};
	wq_rc rcs[4];
	wq_error errs[4], e;
	int64_t id[4];
	char *body = NULL;
	size_t len = 0;
	wq_task t;
	int i, round;

	instance(f, "w1");
	for (i = 0; i < 4; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, &id[i], &e), WQ_OK);
		assert_int_equal(claim(f, "w1", &c[i]), 1);
		o[i] = succeeded(&c[i], "w1", f->now + 5);
	}
	o[0].result = bin;
	o[0].result_len = sizeof(bin);
	o[0].exit_status = 7;
	o[1].result = NULL;
	o[1].result_len = 0;
	o[1].outcome = "discarded";
	o[3].instance = "w2"; /* not the owner */
	for (round = 0; round < 2; round++) {
		assert_int_equal(M->finish_batch(f->s, v, 4, rcs, errs, NULL, NULL, NULL, &e), WQ_OK);
		assert_int_equal(rcs[0], WQ_OK);
		assert_int_equal(rcs[1], WQ_OK);
		assert_int_equal(rcs[2], WQ_OK);
		assert_int_equal(rcs[3], WQ_ESTALE);
	}
	assert_int_equal(M->get(f->s, id[0], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(t.has_result, 1);
	assert_true(t.result_size == (int64_t)sizeof(bin));
	assert_string_equal(t.result_sha256, FP);
	assert_string_equal(t.outcome, "");
	assert_true(t.finished_at == o[0].now);
	assert_int_equal(M->result(f->s, id[0], &body, &len, &e), WQ_OK);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(body, bin, sizeof(bin));
	free(body);
	assert_int_equal(M->get(f->s, id[1], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(t.has_result, 0);
	assert_true(t.result_size == 0);
	assert_string_equal(t.outcome, "discarded");
	assert_int_equal(M->get(f->s, id[2], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_true(t.result_size == 4);
	assert_int_equal(M->get(f->s, id[3], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_RUNNING);
	assert_string_equal(t.instance, "w1");
	for (i = 0; i < 4; i++) {
		assert_int_equal(events_of(f, id[i], "succeeded", NULL), i == 3 ? 0 : 1);
		assert_int_equal(events_of(f, id[i], "stale-outcome", NULL), i == 3 ? 2 : 0);
	}
}

/* wave8 sqlw2: NB outcomes in one batch, all but the last held by their attempts: on
 * SQLite the first 32 go in one multi-row statement (SQL_FINISH_SUCCEEDED_ROWS32), the
 * next 16 in another (ROWS16), the last held one alone; on PostgreSQL all in one; each
 * row gets its own values (result or none, outcome, exit status, finish time), the last
 * (reported by an instance that does not hold it) is fenced off, and the batch again is
 * recognised as recorded. */
#define NB 50
static void finish_batch_rows_of_32(void **state)
{
	static const char bin[] = {'x', 0, (char)0x80, '\'', 'y'};
	struct fx *f = *state;
	struct wq__claimed c[NB];
	struct wq__outcome o[NB];
	const struct wq__outcome *v[NB];
	wq_rc rcs[NB];
	wq_error errs[NB], e;
	int64_t id[NB];
	char *body = NULL;
	size_t len = 0;
	wq_task t;
	int i, round;

	instance(f, "w1");
	for (i = 0; i < NB; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, &id[i], &e), WQ_OK);
		assert_int_equal(claim(f, "w1", &c[i]), 1);
		o[i] = succeeded(&c[i], "w1", f->now + 100 + i);
		o[i].exit_status = i;
		v[NB - 1 - i] = &o[i]; /* out of task order: the batch sorts them */
	}
	o[2].result = bin;
	o[2].result_len = sizeof(bin);
	o[5].result = NULL;
	o[5].result_len = 0;
	o[5].outcome = "discarded";
	o[NB - 1].instance = "w2"; /* not the owner */
	for (round = 0; round < 2; round++) {
		assert_int_equal(M->finish_batch(f->s, v, NB, rcs, errs, NULL, NULL, NULL, &e),
				 WQ_OK);
		for (i = 0; i < NB; i++)
			assert_int_equal(rcs[NB - 1 - i], i == NB - 1 ? WQ_ESTALE : WQ_OK);
	}
	for (i = 0; i < NB; i++) {
		assert_int_equal(M->get(f->s, id[i], &t, &e), WQ_OK);
		if (i == NB - 1) {
			assert_int_equal(t.state, WQ_STATE_RUNNING);
			assert_int_equal(events_of(f, id[i], "stale-outcome", NULL), 2);
			continue;
		}
		assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
		assert_true(t.finished_at == o[i].now);
		assert_true(t.updated_at == o[i].now);
		assert_int_equal(t.has_result, i == 5 ? 0 : 1);
		assert_true(t.result_size == (i == 5 ? 0 : i == 2 ? (int64_t)sizeof(bin) : 4));
		assert_string_equal(t.result_sha256, i == 5 ? "" : FP);
		assert_string_equal(t.outcome, i == 5 ? "discarded" : "");
		assert_int_equal(events_of(f, id[i], "succeeded", NULL), 1);
		assert_int_equal(events_of(f, id[i], "stale-outcome", NULL), 0);
	}
	assert_int_equal(M->result(f->s, id[2], &body, &len, &e), WQ_OK);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(body, bin, sizeof(bin));
	free(body);
}
#undef NB
