/* store_intake_cases.h — intake (issue 13); included by test_store.c (its fixture and
 * helpers), kept apart so that file stays readable. */
/* ---- intake (issue 13) ---- */

static int64_t intake_record(struct fx *f, const char *key)
{
	struct wq__intake_msg m;
	char op[128];
	int64_t task = -1;
	wq_error e;

	snprintf(op, sizeof(op), "intake:src:%s", key);
	memset(&m, 0, sizeof(m));
	m.source = "src";
	m.key = key;
	m.operators = "ops";
	m.max_handouts = 2;
	m.size = 10;
	m.task.kind = "k";
	m.task.tenant = "";
	m.task.scope = "";
	m.task.operation = op;
	m.task.key = op;
	m.task.payload = "{\"a\":1}";
	m.task.payload_len = 7;
	m.task.payload_version = 1;
	m.task.payload_sha256 = FP;
	m.task.fingerprint = FP;
	m.task.max_attempts = 2;
	m.task.due_at = m.task.order_at = m.task.now = f->now;
	assert_int_equal(M->intake_record(f->s, &m, &task, &e), WQ_OK);
	return task;
}

static wq_intake intake_row(struct fx *f, const char *key)
{
	wq_intake *x = NULL, r;
	size_t n = 0;
	wq_error e;

	assert_int_equal(M->intake_list(f->s, "src", "", key, &x, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	r = x[0];
	free(x);
	return r;
}

/* Claims the due acknowledgements of "src" for inst and answers each with ok. */
static size_t intake_ack(struct fx *f, const char *inst, int ok)
{
	struct wq__intake_ack_row *rows = NULL;
	struct wq__intake_acked out;
	size_t n = 0;
	wq_error e;

	assert_int_equal(M->intake_ack_claim(f->s, inst, "src", 10, f->now, 60 * INT64_C(1000000),
					     &rows, &n, &e), WQ_OK);
	for (size_t i = 0; i < n; i++) {
		struct wq__intake_ack a = {rows[i].id, rows[i].ack_attempts, inst, ok,
					   ok ? "" : "refused", f->now + 10, f->now};

		assert_int_equal(M->intake_ack_finish(f->s, &a, &out, &e), WQ_OK);
		/* the same answer again (a lost COMMIT answer) is recognised */
		if (ok)
			assert_int_equal(M->intake_ack_finish(f->s, &a, &out, &e), WQ_OK);
	}
	free(rows);
	return n;
}

/* A message is recorded with its task once; the acknowledgement is queued only by the
 * finish that records it handled, and the record is acknowledged only with the source's
 * yes; a refused acknowledgement comes again after its backoff. */
static void intake_record_finish_acknowledge(void **state)
{
	struct fx *f = *state;
	struct wq__claimed c;
	struct wq__outcome o;
	int64_t task, waiting = -1;
	unsigned char known[2];
	const char *keys[2] = {"m1", "m2"};
	wq_error e;

	instance(f, "w1");
	task = intake_record(f, "m1");
	assert_true(task > 0);
	assert_int_equal(intake_record(f, "m1"), 0); /* polled again: nothing new */
	assert_int_equal(M->intake_known(f->s, "src", keys, 2, known, &e), WQ_OK);
	assert_int_equal(known[0], 1);
	assert_int_equal(known[1], 0);
	assert_int_equal(intake_ack(f, "w1", 1), 0); /* nothing handled: nothing to send */
	assert_int_equal(claim(f, "w1", &c), 1);
	assert_int_equal(c.id, task);
	o = succeeded(&c, "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_string_equal(intake_row(f, "m1").state, "handled");
	assert_int_equal(M->intake_acks_waiting(f->s, "src", &waiting, &e), WQ_OK);
	assert_int_equal(waiting, 1);
	assert_int_equal(intake_ack(f, "w1", 0), 1); /* refused */
	assert_string_equal(intake_row(f, "m1").state, "handled");
	assert_int_equal(intake_ack(f, "w1", 1), 0); /* not due before its backoff */
	f->now += 10;
	assert_int_equal(intake_ack(f, "w1", 1), 1);
	assert_string_equal(intake_row(f, "m1").state, "acknowledged");
	assert_int_equal(intake_row(f, "m1").ack_attempts, 2);
	assert_int_equal(events_of(f, task, "source-acknowledged", NULL), 1);
	assert_int_equal(events_of(f, task, "source-ack-failed", NULL), 1);
	assert_int_equal(intake_ack(f, "w1", 1), 0);
}

/* The last handout fails: the record gives up, and once the source took the
 * acknowledgement it is abandoned with one operators' notification. */
static void intake_abandon_reports_once(void **state)
{
	struct fx *f = *state;
	wq_notification *nt = NULL;
	struct wq__claimed c;
	struct wq__outcome o;
	int64_t task;
	size_t n = 0;
	wq_error e;

	instance(f, "w1");
	task = intake_record(f, "m9");
	assert_int_equal(claim(f, "w1", &c), 1);
	o = outcome_of(&c, "w1", WQ__FINISH_FAILED, f->now);
	o.reason = "exit-75";
	o.exit_status = 75;
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_string_equal(intake_row(f, "m9").state, "giving-up");
	assert_int_equal(intake_ack(f, "w1", 1), 1);
	assert_string_equal(intake_row(f, "m9").state, "abandoned");
	assert_string_equal(intake_row(f, "m9").outcome, "abandoned");
	assert_int_equal(M->inbox_list(f->s, "ops", 0, &nt, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	assert_string_equal(nt[0].subject, "abandoned-intake");
	assert_int_equal(nt[0].task_id, task);
	free(nt);
	assert_int_equal(events_of(f, task, "intake-abandoned", NULL), 1);
}

/* Clock skew (issue 15): an acknowledgement claimed by w1 (its lease on the store's
 * clock) is not taken by w2 whose clock runs 10 minutes ahead; w1's answer counts. */
static void intake_ack_lease_ignores_the_callers_clock(void **state)
{
	struct fx *f = *state;
	struct wq__intake_ack_row *rows = NULL;
	struct wq__claimed c;
	struct wq__outcome o;
	const int64_t min10 = 600 * INT64_C(1000000);
	size_t n = 0;
	wq_error e;

	instance(f, "w1");
	instance(f, "w2");
	(void)intake_record(f, "m7");
	assert_int_equal(claim(f, "w1", &c), 1);
	o = succeeded(&c, "w1", f->now);
	assert_int_equal(M->finish(f->s, &o, &e), WQ_OK);
	assert_int_equal(M->intake_ack_claim(f->s, "w1", "src", 10, f->now, 60 * INT64_C(1000000),
					     &rows, &n, &e), WQ_OK);
	assert_int_equal(n, 1);
	free(rows);
	rows = NULL;
	assert_int_equal(M->intake_ack_claim(f->s, "w2", "src", 10, f->now + min10,
					     60 * INT64_C(1000000), &rows, &n, &e), WQ_OK);
	assert_int_equal(n, 0);
	free(rows);
	assert_int_equal(intake_row(f, "m7").ack_attempts, 1);
}
