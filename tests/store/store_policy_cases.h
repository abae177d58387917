/*
 * store_policy_cases.h — the store contract of issue 10's limits and follow-ups
 * (op_limit.c, op_followup.c), included by test_store.c (which is near its size limit)
 * for its fixtures and helpers: per-kind concurrency across instances, starts per day
 * deferred in the claim, follow-ups created with the success, once, or rejected whole.
 */
#define DAY_US INT64_C(86400000000)

/* A claim of kind "k" by inst under a concurrency and a starts-per-day limit (0: none). */
static size_t claim_limited(struct fx *f, const char *inst, int concurrency, int starts,
			    int64_t *ids)
{
	static const char *const kinds[] = {"k"};
	const int conc[] = {concurrency};
	const struct wq__starts_limit sl[] = {{"", 0, starts, "limits"}};
	struct wq__claim_req req = {.instance = inst, .kinds = kinds, .nkinds = 1, .limit = 10, .now = f->now};
	struct wq__claimed *out = NULL;
	size_t n = 0, i;
	wq_error e;

	req.concurrency = concurrency ? conc : NULL;
	req.starts = starts ? sl : NULL;
	req.nstarts = starts ? 1 : 0;
	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	for (i = 0; i < n; i++) {
		if (ids)
			ids[i] = out[i].id;
		free(out[i].payload);
	}
	free(out);
	return n;
}

/* Two instances share kind k's concurrency = 2: the second claims only what the first
 * left, and a finished task makes room. */
static void kind_concurrency_across_instances(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	int64_t ids[10];
	wq_error e;

	instance(f, "w1");
	instance(f, "w2");
	for (int i = 0; i < 5; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, NULL, &e), WQ_OK);
	}
	f->now++;
	assert_int_equal(claim_limited(f, "w1", 2, 0, ids), 2);
	assert_int_equal(claim_limited(f, "w2", 2, 0, ids), 0);
	memset(&c, 0, sizeof(c));
	c.id = 1;
	c.attempt = 1;
	o = succeeded(&c, "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(claim_limited(f, "w2", 2, 0, ids), 1);
	assert_int_equal(ids[0], 3);
	assert_int_equal(claim_limited(f, "w1", 0, 0, ids), 2); /* no limit: the rest */
}

/* max_starts_per_day = 2: the third task of the day is deferred to the next UTC day's
 * 00:00 (pending, attempt 0, one `deferred` event), not claimed again that day, and
 * claimed once the day begins. */
static void starts_per_day_defer_in_claim(void **state)
{
	struct fx *f = *state;
	int64_t ids[10], day_end = (T0 / DAY_US + 1) * DAY_US;
	wq_task t;
	wq_error e;

	instance(f, "w1");
	for (int i = 0; i < 3; i++) {
		f->now++;
		assert_int_equal(enqueue(f, NULL, NULL, NULL, &e), WQ_OK);
	}
	f->now++;
	assert_int_equal(claim_limited(f, "w1", 0, 2, ids), 2);
	assert_int_equal(M->get(f->s, 3, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_PENDING);
	assert_int_equal(t.due_at, day_end);
	assert_int_equal(t.attempts, 0);
	assert_string_equal(t.reason, "deferred");
	assert_int_equal(events_of(f, 3, "deferred", NULL), 1);
	assert_int_equal(events_of(f, 3, "claimed", NULL), 0);
	assert_int_equal(claim_limited(f, "w1", 0, 2, ids), 0);
	assert_int_equal(events_of(f, 3, "deferred", NULL), 1);
	f->now = day_end;
	assert_int_equal(claim_limited(f, "w1", 0, 2, ids), 1);
	assert_int_equal(ids[0], 3);
	assert_int_equal(M->get(f->s, 3, &t, &e), WQ_OK);
	assert_int_equal(t.attempts, 1);
}

static void finish_with(struct fx *f, int64_t id, const char *fu,
			const struct wq__followup_limits *l, wq_rc want)
{
	struct wq__claimed c;
	struct wq__outcome o;
	wq_error e;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.attempt = 1;
	o = succeeded(&c, "w1", f->now);
	o.followups = fu;
	o.followup_limits = l;
	assert_int_equal(M->finish(f->s, &o, &e), want);
}

/* Follow-ups are created by the finish that records the success, linked to their parent;
 * that finish repeated creates nothing more; beyond a limit or malformed, none are
 * created, a `followups-rejected` event is, and the parent succeeded all the same. */
static void followups_with_success_once(void **state)
{
	struct fx *f = *state;
	struct wq__followup_limits l = {1, 5, 0, "limits"};
	int64_t parent = 0, *kids = NULL, id;
	size_t n = 0;
	wq_task t;
	wq_error e;
	const char *two = "[{\"kind\":\"k2\",\"key\":\"a\",\"payload\":{\"x\":1}},{\"kind\":\"k2\"}]";

	instance(f, "w1");
	assert_int_equal(enqueue(f, "p1", NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", NULL), 1);
	f->now++;
	finish_with(f, id, two, NULL, WQ_OK);
	finish_with(f, id, two, NULL, WQ_OK); /* a repeat: recognised, nothing doubled */
	assert_int_equal(M->family(f->s, id, &parent, &kids, &n, &e), WQ_OK);
	assert_int_equal(parent, 0);
	assert_int_equal(n, 2);
	assert_int_equal(events_of(f, id, "followup-created", NULL), 2);
	assert_int_equal(M->get(f->s, kids[0], &t, &e), WQ_OK);
	assert_string_equal(t.operation, "k/p1/a");
	assert_string_equal(t.kind, "k2");
	{
		int64_t *none = NULL, child = kids[1];

		assert_int_equal(M->family(f->s, child, &parent, &none, &n, &e), WQ_OK);
		assert_int_equal(parent, id);
		assert_int_equal(n, 0);
	}
	free(kids);

	/* beyond max_followups = 1, then malformed: rejected whole, parent succeeded */
	f->now++;
	assert_int_equal(enqueue(f, "p2", NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", NULL), 1);
	finish_with(f, id, two, &l, WQ_OK);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(events_of(f, id, "followups-rejected", NULL), 1);
	assert_int_equal(M->family(f->s, id, &parent, &kids, &n, &e), WQ_OK);
	assert_int_equal(n, 0);
	f->now++;
	assert_int_equal(enqueue(f, "p3", NULL, &id, &e), WQ_OK);
	assert_int_equal(claim(f, "w1", NULL), 1);
	finish_with(f, id, "[{\"kind\":", NULL, WQ_OK);
	assert_int_equal(M->get(f->s, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_SUCCEEDED);
	assert_int_equal(events_of(f, id, "followups-rejected", NULL), 1);
}
