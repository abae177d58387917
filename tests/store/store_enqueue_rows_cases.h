/* store_enqueue_rows_cases.h — multi-row enqueues (wave 5, op_enqueue_rows.c): a batch
 * and a group answered item by item exactly as lone enqueues would be; included by
 * test_store.c after store_batch_cases.h (its batch_task and task_count helpers). */

/* The events of task id, in id order (the caller frees *ev). */
static size_t rows_events(struct fx *f, int64_t id, wq_event **ev)
{
	size_t n = 0;
	wq_error e;

	*ev = NULL;
	assert_int_equal(M->events(f->s, id, ev, &n, &e), WQ_OK);
	return n;
}

/* The timeline of task id is exactly the types given, in this order. */
static void rows_timeline(struct fx *f, int64_t id, const char *const *types, size_t ntypes)
{
	wq_event *ev;
	size_t n = rows_events(f, id, &ev);

	assert_int_equal(n, ntypes);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(ev[i].type, types[i]);
		assert_int_equal(ev[i].task_id, id);
		if (i)
			assert_true(ev[i].id > ev[i - 1].id);
	}
	free(ev);
}

/* The detail of the first event of task id (its `accepted`). */
static void rows_accepted_detail(struct fx *f, int64_t id, char *out, size_t outsz)
{
	wq_event *ev;
	size_t n = rows_events(f, id, &ev);

	assert_true(n >= 1);
	assert_string_equal(ev[0].type, "accepted");
	snprintf(out, outsz, "%s", ev[0].detail);
	free(ev);
}

/* new unkeyed, new keyed, stored key same input (replay), stored key other input
 * (conflict), a key taken earlier in the batch with the same input (replays that item's
 * task) and with other input (conflict on it), the same key under another tenant and
 * another kind (new): every slot answered as a lone enqueue would answer it, with its
 * event on the right task in item order, and the new tasks' ids ascending. */
static void enqueue_rows_mixed_batch(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[8];
	const struct wq__new_task *p[8];
	struct wq__enqueued_row rows[8], old;
	wq_rc rc[8];
	wq_error errs[8], e;
	static const char *const old_tl[] = {"accepted", "replayed", "conflict"};
	static const char *const new_tl[] = {"accepted", "replayed", "conflict"};
	static const char *const one_tl[] = {"accepted"};

	batch_task(&t[0], "r-old", NULL, FP, f->now);
	assert_int_equal(M->enqueue(f->s, &t[0], &old, &e), WQ_OK);

	batch_task(&t[0], NULL, "op_rows_1", FP, f->now);  /* new */
	batch_task(&t[1], "r-new", NULL, FP, f->now);      /* new */
	batch_task(&t[2], "r-old", NULL, FP, f->now);      /* replays the stored task */
	batch_task(&t[3], "r-old", NULL, "ff" FP, f->now); /* conflicts with it */
	batch_task(&t[4], "r-new", NULL, FP, f->now);      /* replays item 1 */
	batch_task(&t[5], "r-new", NULL, "ee" FP, f->now); /* conflicts with item 1 */
	batch_task(&t[6], "r-new", NULL, FP, f->now);      /* another tenant: new */
	t[6].tenant = "t2";
	batch_task(&t[7], "r-new", NULL, FP, f->now); /* another kind: new */
	t[7].kind = "k2";
	for (int i = 0; i < 8; i++)
		p[i] = &t[i];
	assert_int_equal(M->enqueue_many(f->s, p, 8, rows, rc, errs, &e), WQ_OK);

	for (int i = 0; i < 8; i++)
		assert_int_equal(rc[i], i == 3 || i == 5 ? WQ_ECONFLICT : WQ_OK);
	assert_int_equal(errs[0].code, WQ_OK);
	assert_int_equal(errs[3].code, WQ_ECONFLICT);
	assert_non_null(strstr(errs[3].message, "'r-old'"));
	assert_non_null(strstr(errs[5].message, "'r-new'"));
	assert_int_equal(rows[0].replayed, 0);
	assert_int_equal(rows[1].replayed, 0);
	assert_int_equal(rows[2].replayed, 1);
	assert_int_equal(rows[2].id, old.id);
	assert_int_equal(rows[2].state, WQ_STATE_PENDING);
	assert_string_equal(rows[2].fingerprint, FP);
	assert_int_equal(rows[4].replayed, 1);
	assert_int_equal(rows[4].id, rows[1].id);
	assert_int_equal(rows[6].replayed, 0);
	assert_int_equal(rows[7].replayed, 0);
	assert_true(old.id < rows[0].id && rows[0].id < rows[1].id && rows[1].id < rows[6].id &&
		    rows[6].id < rows[7].id);
	assert_int_equal(task_count(f), 5);
	rows_timeline(f, old.id, old_tl, 3);
	rows_timeline(f, rows[1].id, new_tl, 3);
	rows_timeline(f, rows[0].id, one_tl, 1);
	rows_timeline(f, rows[7].id, one_tl, 1);

	/* the same batch again: nothing new; the keyed items replay or conflict as before,
	 * the generated id meets its own task (an item-by-item failure of the batch) */
	assert_int_equal(M->enqueue_many(f->s, p + 1, 7, rows, rc, errs, &e), WQ_OK);
	for (int i = 0; i < 7; i++)
		assert_int_equal(rc[i], i == 2 || i == 4 ? WQ_ECONFLICT : WQ_OK);
	assert_int_equal(rows[0].replayed, 1);
	assert_int_equal(rows[5].replayed, 1);
	assert_int_equal(task_count(f), 5);
	assert_int_equal(M->enqueue_many(f->s, p, 1, rows, rc, errs, &e), WQ_ECONFLICT);
	assert_non_null(strstr(e.message, "op_rows_1"));
	assert_int_equal(task_count(f), 5);
}

/* A new task of a batch has the rows of a lone enqueue: the same `accepted` detail text
 * (keyed or not, with a due time and a priority), its payload byte for byte (quotes,
 * control characters, non-ASCII), its notify list or none; in a batch long enough for
 * each of SQLite's bound-parameter statements (32, 4 and 1 rows: 38 = 32 + 4 + 1 + 1). */
#define ROWS_N 38
static void enqueue_rows_same_rows_as_alone(void **state)
{
	struct fx *f = *state;
	static const char payload[] = "{\"q\":\"a\\\"b\\n\t\001 \xc3\xa9\",\"n\":[1,2]}";
	static const char *const kinds[] = {"kp"};
	struct wq__new_task lone, t[ROWS_N];
	const struct wq__new_task *p[ROWS_N];
	struct wq__enqueued_row lrow, rows[ROWS_N];
	struct wq__claim_req req = {.instance = "i-rows", .kinds = kinds, .nkinds = 1,
				    .limit = 64, .now = f->now + 10};
	struct wq__claimed *out = NULL;
	char a[512], b[512], ops[ROWS_N][32];
	wq_rc rc[ROWS_N];
	wq_error e;
	size_t n = 0, special = 0;

	instance(f, "i-rows");
	batch_task(&lone, "same-lone", NULL, FP, f->now);
	lone.priority = 7;
	lone.due_at = lone.order_at = f->now + 5;
	assert_int_equal(M->enqueue(f->s, &lone, &lrow, &e), WQ_OK);
	t[0] = lone;
	t[0].key = t[0].operation = "same-batch";
	for (int i = 1; i < ROWS_N; i++) {
		snprintf(ops[i], sizeof ops[i], "op_rows_%d", i);
		batch_task(&t[i], NULL, ops[i], FP, f->now);
		t[i].kind = "kp";
		if (i == 1 || i == 33 || i == ROWS_N - 1) { /* rows of 32, of 4, of 1 */
			t[i].payload = payload;
			t[i].payload_len = sizeof payload - 1;
			t[i].notify = "[\"inbox:alice\"]";
		}
	}
	for (int i = 0; i < ROWS_N; i++)
		p[i] = &t[i];
	assert_int_equal(M->enqueue_many(f->s, p, ROWS_N, rows, rc, NULL, &e), WQ_OK);

	rows_accepted_detail(f, lrow.id, a, sizeof a);
	rows_accepted_detail(f, rows[0].id, b, sizeof b);
	assert_string_equal(a, b);
	assert_non_null(strstr(b, "\"keyed\":true"));
	assert_non_null(strstr(b, "\"priority\":7"));

	assert_int_equal(M->claim(f->s, &req, &out, &n, &e), WQ_OK);
	assert_int_equal(n, ROWS_N - 1);
	for (size_t i = 0; i < n; i++) {
		int sp = out[i].id == rows[1].id || out[i].id == rows[33].id ||
			 out[i].id == rows[ROWS_N - 1].id;
		const char *want = sp ? payload : "{\"a\":1}";

		special += (size_t)sp;
		assert_int_equal(out[i].payload_len, strlen(want));
		assert_memory_equal(out[i].payload, want, strlen(want));
		free(out[i].payload);
	}
	free(out);
	assert_int_equal(special, 3);
}
#undef ROWS_N

/* A group of concurrent enqueues without limits or lock keys goes the multi-row way:
 * the answers of a mixed group, and a later group replaying them. */
static void enqueue_rows_group_answers_each(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[4];
	const struct wq__new_task *p[4] = {&t[0], &t[1], &t[2], &t[3]};
	struct wq__enqueued_row rows[4], again[4];
	wq_rc rc[4];
	wq_error errs[4], e;

	batch_task(&t[0], "gr-1", NULL, FP, f->now);
	batch_task(&t[1], NULL, "op_gr_1", FP, f->now);
	batch_task(&t[2], "gr-1", NULL, FP, f->now);      /* replays item 0 */
	batch_task(&t[3], "gr-1", NULL, "ff" FP, f->now); /* conflicts with it */
	(void)M->enqueue_group(f->s, p, 4, rows, rc, errs, &e);
	assert_int_equal(rc[0], WQ_OK);
	assert_int_equal(rc[1], WQ_OK);
	assert_int_equal(rc[2], WQ_OK);
	assert_int_equal(rows[2].replayed, 1);
	assert_int_equal(rows[2].id, rows[0].id);
	assert_int_equal(rc[3], WQ_ECONFLICT);
	assert_int_equal(errs[3].code, WQ_ECONFLICT);
	assert_int_equal(events_of(f, rows[0].id, "conflict", NULL), 1);
	assert_int_equal(task_count(f), 2);

	(void)M->enqueue_group(f->s, p, 3, again, rc, errs, &e);
	assert_int_equal(rc[0], WQ_OK);
	assert_int_equal(again[0].replayed, 1);
	assert_int_equal(again[0].id, rows[0].id);
	assert_int_equal(rc[1], WQ_ECONFLICT); /* its generated id again, alone */
	assert_int_equal(rc[2], WQ_OK);
	assert_int_equal(task_count(f), 2);
}

/* After prune removed the newest task, a batch's task and event ids still start above
 * every id those tables ever had (id_floor, as a lone enqueue's D_NEXT_ID); in a batch
 * long enough for SQLite's bound-parameter statements and their remainder. */
#define ROWS_N 35
static void enqueue_rows_ids_above_pruned(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[ROWS_N];
	const struct wq__new_task *p[ROWS_N];
	struct wq__enqueued_row rows[ROWS_N];
	struct wq__claimed c;
	struct wq__outcome o;
	wq_prune_counts pc;
	int64_t a = 0, ev_a = 0, ev_min = INT64_MAX;
	char ops[ROWS_N][32];
	wq_event *ev;
	wq_rc rc[ROWS_N];
	wq_error e;

	instance(f, "w-rows");
	assert_int_equal(enqueue(f, NULL, NULL, &a, &e), WQ_OK);
	events_of(f, a, "accepted", &ev_a);
	assert_int_equal(claim(f, "w-rows", &c), 1);
	o = succeeded(&c, "w-rows", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->prune(f->s, f->now + 1, f->now + 1, &pc, &e), WQ_OK);
	assert_int_equal(pc.tasks, 1);

	for (int i = 0; i < ROWS_N; i++) {
		snprintf(ops[i], sizeof ops[i], "op_pruned_%d", i);
		batch_task(&t[i], NULL, ops[i], FP, f->now);
		p[i] = &t[i];
	}
	assert_int_equal(M->enqueue_many(f->s, p, ROWS_N, rows, rc, NULL, &e), WQ_OK);
	for (int i = 0; i < ROWS_N; i++) {
		size_t n = rows_events(f, rows[i].id, &ev);

		assert_int_equal(rc[i], WQ_OK);
		assert_true(rows[i].id > a);
		assert_true(i == 0 || rows[i].id > rows[i - 1].id);
		assert_int_equal(n, 1);
		if (ev[0].id < ev_min)
			ev_min = ev[0].id;
		free(ev);
	}
	assert_true(ev_min > ev_a);
}
#undef ROWS_N
