/* store_enqueue_group_cases.h — group commit of concurrent enqueues (wave 4); included by
 * test_store.c after store_batch_cases.h (its batch_task and task_count helpers). */
#include <pthread.h>

/* One shared transaction, each item answered as a lone enqueue would be: accepted,
 * replayed, a conflict (its event kept), the same key twice (the second replays the
 * first), and a failure of one item (a clash of its operation id, rolled back to its
 * savepoint; a limit) that leaves the others written. */
static void enqueue_group_items_answer_each(void **state)
{
	struct fx *f = *state;
	struct wq__new_task t[7];
	const struct wq__new_task *p[7];
	struct wq__enqueued_row rows[7], first[1];
	wq_rc rc[7];
	wq_error errs[7], e;

	batch_task(&t[0], "g-old", NULL, FP, f->now);
	p[0] = &t[0];
	assert_int_equal(M->enqueue_group(f->s, p, 1, first, rc, errs, &e), WQ_OK);
	assert_int_equal(rc[0], WQ_OK);

	batch_task(&t[0], "g-new", NULL, FP, f->now);       /* accepted */
	batch_task(&t[1], "g-old", NULL, FP, f->now);       /* replayed */
	batch_task(&t[2], "g-old", NULL, "ff" FP, f->now);  /* conflict */
	batch_task(&t[3], NULL, "op_group_1", FP, f->now);  /* accepted */
	batch_task(&t[4], NULL, "op_group_1", FP, f->now);  /* its id again: clash, undone */
	batch_task(&t[5], "g-new", NULL, FP, f->now);       /* replays item 0 */
	batch_task(&t[6], "g-limit", NULL, FP, f->now);     /* over its tenant's limit */
	t[6].tenant = "busy";
	t[6].max_active = 1;
	for (int i = 0; i < 7; i++)
		p[i] = &t[i];
	t[0].tenant = "busy"; /* item 0 makes tenant "busy" reach its limit of 1 */
	t[5].tenant = "busy";
	/* The answers are final whichever way the group went: on PostgreSQL item 4's clash
	 * aborts the shared transaction and every item runs again alone (store.h). */
	(void)M->enqueue_group(f->s, p, 7, rows, rc, errs, &e);

	assert_int_equal(rc[0], WQ_OK);
	assert_int_equal(rows[0].replayed, 0);
	assert_int_equal(rc[1], WQ_OK);
	assert_int_equal(rows[1].replayed, 1);
	assert_int_equal(rows[1].id, first[0].id);
	assert_int_equal(rc[2], WQ_ECONFLICT);
	assert_int_equal(errs[2].code, WQ_ECONFLICT);
	assert_non_null(strstr(errs[2].message, "'g-old'"));
	assert_int_equal(events_of(f, first[0].id, "conflict", NULL), 1);
	assert_int_equal(rc[3], WQ_OK);
	assert_int_equal(rc[4], WQ_ECONFLICT);
	assert_non_null(strstr(errs[4].message, "op_group_1"));
	assert_int_equal(rc[5], WQ_OK);
	assert_int_equal(rows[5].replayed, 1);
	assert_int_equal(rows[5].id, rows[0].id);
	assert_int_equal(rc[6], WQ_ELIMIT);
	assert_int_equal(errs[6].code, WQ_ELIMIT);
	/* g-old, g-new, op_group_1: nothing of items 4 and 6 */
	assert_int_equal(task_count(f), 3);
	assert_int_equal(events_of(f, rows[3].id, "accepted", NULL), 1);
}

/* ---- threads sharing one handle (the public API) ---- */

#define GT_THREADS 8
#define GT_EACH 24

/* Per round r: "u-<thread>-<r>" is the thread's own key (accepted), "s-<r>" is offered
 * by every thread with the same input (one accepts, the others replay its task) and
 * "c-<r>" by every thread with its own input (one accepts, the others conflict). */
struct gt_thread {
	wq_db *db;
	int id;
	wq_enqueued own[GT_EACH], same[GT_EACH], diff[GT_EACH];
	wq_rc own_rc[GT_EACH], same_rc[GT_EACH], diff_rc[GT_EACH];
	wq_error diff_err[GT_EACH];
};

static void *gt_main(void *arg)
{
	struct gt_thread *g = arg;
	char key[48], payload[48];
	wq_error e;

	for (int r = 0; r < GT_EACH; r++) {
		wq_enqueue_opts o = {.kind = "grp", .payload = "{\"same\":true}", .key = key};

		snprintf(key, sizeof key, "u-%d-%d", g->id, r);
		g->own_rc[r] = wq_enqueue(g->db, &o, &g->own[r], &e);
		snprintf(key, sizeof key, "s-%d", r);
		g->same_rc[r] = wq_enqueue(g->db, &o, &g->same[r], &e);
		snprintf(key, sizeof key, "c-%d", r);
		snprintf(payload, sizeof payload, "{\"thread\":%d}", g->id);
		o.payload = payload;
		g->diff_rc[r] = wq_enqueue(g->db, &o, &g->diff[r], &g->diff_err[r]);
	}
	return NULL;
}

/* Checks round r's shared keys across the threads: exactly one accepted, the rest
 * replayed (same input) or refused as a conflict naming the key (other input). */
static void gt_check_round(struct gt_thread *g, int r)
{
	int fresh_same = 0, won = -1;
	int64_t same_id = g[0].same[r].id;
	char key[32];

	snprintf(key, sizeof key, "'c-%d'", r);
	for (int i = 0; i < GT_THREADS; i++) {
		assert_int_equal(g[i].same_rc[r], WQ_OK);
		assert_int_equal(g[i].same[r].id, same_id);
		fresh_same += !g[i].same[r].replayed;
		if (g[i].diff_rc[r] == WQ_OK) {
			assert_int_equal(won, -1);
			assert_int_equal(g[i].diff[r].replayed, 0);
			won = i;
		} else {
			assert_int_equal(g[i].diff_rc[r], WQ_ECONFLICT);
			assert_non_null(strstr(g[i].diff_err[r].message, key));
		}
	}
	assert_int_equal(fresh_same, 1);
	assert_true(won >= 0);
}

static void enqueue_threads_share_a_handle(void **state)
{
	struct fx *f = *state;
	struct gt_thread *g = calloc(GT_THREADS, sizeof *g);
	pthread_t th[GT_THREADS];
	wq_db *db = NULL;
	wq_error e;

	(void)f;
	assert_non_null(g);
	assert_int_equal(wq_db_open(url, 0, &db, &e), WQ_OK);
	for (int i = 0; i < GT_THREADS; i++) {
		g[i].db = db;
		g[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, gt_main, &g[i]), 0);
	}
	for (int i = 0; i < GT_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < GT_THREADS; i++)
		for (int r = 0; r < GT_EACH; r++) {
			assert_int_equal(g[i].own_rc[r], WQ_OK);
			assert_int_equal(g[i].own[r].replayed, 0);
			for (int j = 0; j < i; j++) /* own keys: distinct tasks */
				assert_true(g[j].own[r].id != g[i].own[r].id);
		}
	for (int r = 0; r < GT_EACH; r++)
		gt_check_round(g, r);
	/* own keys + one task per shared key of each kind */
	assert_int_equal(task_count(f), GT_THREADS * GT_EACH + 2 * GT_EACH);
	wq_db_close(db);
	free(g);
}
