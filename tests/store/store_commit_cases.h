/* store_commit_cases.h — group commit (issue 11); included by test_store.c (its fixture and
 * helpers), kept apart so that file stays readable. */
/* ---- group commit (issue 11) ---- */

/* The claim's transaction appends each claimed attempt's `started` event. */
static void claim_records_started(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	int64_t id;
	wq_error e;

	instance(f, "w1");
	assert_int_equal(enqueue(f, NULL, NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	assert_int_equal(events_of(f, id, "claimed", NULL), 1);
	assert_int_equal(events_of(f, id, "started", NULL), 1);
}

/* Three outcomes in one transaction, the middle one fenced off (a stale attempt): the
 * other two are recorded, the stale one leaves only its stale-outcome event; the same
 * batch again (as after a lost COMMIT answer) recognises the recorded two. An outcome
 * refused on its own (invalid) does not sink the others either. */
static void finish_batch_one_stale(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c[4];
	struct wq__outcome o[4];
	const struct wq__outcome *v[4] = {&o[0], &o[1], &o[2], &o[3]};
	wq_rc rcs[4];
	wq_error errs[4], e;
	int64_t id[4];
	wq_task t;
	int i, round;

	instance(f, "w1");
	for (i = 0; i < 4; i++) {
		f->now++; /* the operation id is made of it */
		assert_int_equal(enqueue(f, NULL, NULL, &id[i], &e), WQ_OK);
		assert_int_equal(claim(f, "w1", &c[i]), 1);
		o[i] = succeeded(&c[i], "w1", f->now + 5);
	}
	o[1].attempt = c[1].attempt + 1;
	for (round = 0; round < 2; round++) {
		assert_int_equal(M->finish_batch(f->s, v, 3, rcs, errs, NULL, NULL, NULL, &e), WQ_OK);
		assert_int_equal(rcs[0], WQ_OK);
		assert_int_equal(rcs[1], WQ_ESTALE);
		assert_int_equal(rcs[2], WQ_OK);
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(M->get(f->s, id[i], &t, &e), WQ_OK);
		assert_int_equal(t.state, i == 1 ? WQ_STATE_RUNNING : WQ_STATE_SUCCEEDED);
		assert_int_equal(events_of(f, id[i], "succeeded", NULL), i == 1 ? 0 : 1);
		assert_int_equal(events_of(f, id[i], "stale-outcome", NULL), i == 1 ? 2 : 0);
	}
	/* one invalid outcome (no instance) beside two good ones */
	o[1].attempt = c[1].attempt;
	o[2].instance = NULL;
	v[0] = &o[1];
	v[1] = &o[2];
	v[2] = &o[3];
	assert_int_equal(M->finish_batch(f->s, v, 3, rcs, errs, NULL, NULL, NULL, &e), WQ_OK);
	assert_int_equal(rcs[0], WQ_OK);
	assert_int_equal(rcs[1], WQ_EINVAL);
	assert_int_equal(rcs[2], WQ_OK);
	assert_int_equal(M->get(f->s, id[1], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(M->get(f->s, id[3], &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
}

/* Outcomes and the next claim in one transaction: the outcome is recorded, the next
 * task claimed (with its claimed and started events), and a claim for more than there
 * is takes what there is. */
static void finish_batch_with_claim(void **state)
{
	static const char *const kinds[] = {"k"};
	struct fx *f = *state;
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 1, .limit = 5};
	struct wq__claimed c, *got = NULL;
	struct wq__outcome o;
	const struct wq__outcome *v[1] = {&o};
	wq_rc rcs[1];
	wq_error errs[1], e;
	int64_t first, second;
	size_t ngot = 9;
	wq_task t;

	instance(f, "w1");
	f->now++;
	assert_int_equal(enqueue(f, NULL, NULL, &first, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", &c), 1);
	f->now++;
	assert_int_equal(enqueue(f, NULL, NULL, &second, &e), WQ_OK);
	o = succeeded(&c, "w1", f->now + 5);
	req.now = f->now + 5;
	assert_int_equal(M->finish_batch(f->s, v, 1, rcs, errs, &req, &got, &ngot, &e), WQ_OK);
	assert_int_equal(rcs[0], WQ_OK);
	assert_int_equal(ngot, 1);
	assert_true(got[0].id == second);
	free(got[0].payload);
	free(got);
	assert_int_equal(M->get(f->s, first, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(M->get(f->s, second, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_RUNNING);
	assert_int_equal(events_of(f, second, "started", NULL), 1);
}
