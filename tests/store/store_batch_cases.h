/* store_batch_cases.h — batch enqueue (issue 11); included by test_store.c (its fixture and
 * helpers), kept apart so that file stays readable. */
/* ---- batch enqueue (issue 11) ---- */

static void batch_task(struct wq__new_task *t, const char *key, const char *op, const char *fp,
		       int64_t now)
{
	memset(t, 0, sizeof(*t));
	t->kind = "k";
	t->tenant = t->scope = "";
	t->operation = key ? key : op;
	t->key = key;
	t->payload = "{\"a\":1}";
	t->payload_len = 7;
	t->payload_version = 1;
	t->payload_sha256 = FP;
	t->fingerprint = fp;
	t->due_at = t->order_at = t->now = now;
	t->max_attempts = 3;
}

static size_t task_count(struct fx *f)
{
	wq_list_filter lf = {0, NULL, 1000};
	wq_task *out = NULL;
	size_t n = 0;
	wq_error e;

	assert_int_equal(M->list(f->s, &lf, &out, &n, &e), WQ_OK);
	free(out);
	return n;
}

/* One transaction, each item with its own key semantics: a replayed batch creates
 * nothing; a conflicting item is reported in its slot (and recorded on the existing task)
 * while the others are accepted; the same key twice in a batch replays the first. */
static void enqueue_many_items_answer_each(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[3];
	const struct wq__new_task *p[3] = {&t[0], &t[1], &t[2]};
	struct wq__enqueued_row rows[3], again[3];
	wq_rc item_rc[3];
	wq_error errs[3], e;

	batch_task(&t[0], "b1", NULL, FP, f->now);
	batch_task(&t[1], "b2", NULL, FP, f->now);
	batch_task(&t[2], NULL, "op_batch_1", FP, f->now);
	assert_int_equal(M->enqueue_many(f->s, p, 3, rows, item_rc, errs, &e), WQ_OK);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(item_rc[i], WQ_OK);
		assert_true(rows[i].id > 0);
		assert_int_equal(rows[i].replayed, 0);
		assert_int_equal(rows[i].state, WQ_STATE_PENDING);
		assert_int_equal(events_of(f, rows[i].id, "accepted", NULL), 1);
	}
	assert_true(rows[0].id != rows[1].id && rows[1].id != rows[2].id);
	assert_int_equal(task_count(f), 3);

	/* the keyed items again: replays, nothing new */
	assert_int_equal(M->enqueue_many(f->s, p, 2, again, item_rc, errs, &e), WQ_OK);
	assert_int_equal(again[0].replayed, 1);
	assert_int_equal(again[1].replayed, 1);
	assert_int_equal(again[0].id, rows[0].id);
	assert_int_equal(again[1].id, rows[1].id);
	assert_int_equal(task_count(f), 3);

	/* b1 with other input conflicts; b3 beside it is accepted */
	batch_task(&t[0], "b1", NULL, "ff" FP, f->now);
	batch_task(&t[1], "b3", NULL, FP, f->now);
	assert_int_equal(M->enqueue_many(f->s, p, 2, again, item_rc, errs, &e), WQ_OK);
	assert_int_equal(item_rc[0], WQ_ECONFLICT);
	assert_int_equal(errs[0].code, WQ_ECONFLICT);
	assert_non_null(strstr(errs[0].message, "'b1'"));
	assert_int_equal(item_rc[1], WQ_OK);
	assert_int_equal(again[1].replayed, 0);
	assert_int_equal(events_of(f, rows[0].id, "conflict", NULL), 1);
	assert_int_equal(task_count(f), 4);

	/* one key twice in a batch: the second replays the first */
	batch_task(&t[0], "d1", NULL, FP, f->now);
	batch_task(&t[1], "d1", NULL, FP, f->now);
	assert_int_equal(M->enqueue_many(f->s, p, 2, again, item_rc, errs, &e), WQ_OK);
	assert_int_equal(item_rc[1], WQ_OK);
	assert_int_equal(again[1].replayed, 1);
	assert_int_equal(again[1].id, again[0].id);
	assert_int_equal(task_count(f), 5);
}

/* A failure other than a conflict (here: invalid UTF-8 in one item's kind, which the
 * store refuses) rolls the whole batch back, naming the item. */
static void enqueue_many_failure_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[2];
	const struct wq__new_task *p[2] = {&t[0], &t[1]};
	struct wq__enqueued_row rows[2];
	wq_rc item_rc[2];
	wq_error e;

	batch_task(&t[0], "ok-1", NULL, FP, f->now);
	batch_task(&t[1], "bad-1", NULL, FP, f->now);
	t[1].kind = "k\xff";
	assert_int_equal(M->enqueue_many(f->s, p, 2, rows, item_rc, NULL, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "item 1"));
	assert_int_equal(task_count(f), 0);
}
