/* Operations, the effect journal, prune and doctor through the C API (SPEC §6, §7, §15),
 * on a SQLite store in a temporary directory. The worker's part (claim, finish) is driven
 * through the store interface directly, as the worker does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define INSTANCE "unit:1:0000"

struct fixture {
	char dir[64];
	char path[96];
	wq_db *db;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct wq__instance in = {0};
	wq_error e;

	snprintf(f->dir, sizeof f->dir, "/tmp/wakeq-unit.XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof f->path, "%s/wakeq.db", f->dir);
	if (wq_db_open(f->path, WQ_OPEN_MIGRATE, &f->db, &e) != WQ_OK)
		fail_msg("open: %s", e.message);
	snprintf(in.id, sizeof in.id, INSTANCE);
	snprintf(in.host, sizeof in.host, "unit");
	in.pid = 1;
	in.started_at = in.heartbeat_at = wq_now();
	if (WQ__STORE(f->db, instance_register, &in, &e) != WQ_OK)
		fail_msg("register: %s", e.message);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char p[128];

	wq_db_close(f->db);
	snprintf(p, sizeof p, "%s/wakeq.db-wal", f->dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/wakeq.db-shm", f->dir);
	unlink(p);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int64_t enqueue(wq_db *db, const char *tenant, const char *kind, const char *key,
		       const char *payload, int version, wq_rc want, int want_replayed)
{
	wq_enqueue_opts o = {0};
	wq_enqueued out = {0};
	wq_error e = {0};
	wq_rc rc;

	o.kind = kind;
	o.tenant = tenant;
	o.key = key;
	o.payload = payload;
	o.payload_version = version;
	rc = wq_enqueue(db, &o, &out, &e);
	if (rc != want)
		fail_msg("enqueue %s/%s: rc %d (%s), expected %d", kind, key ? key : "-", rc,
			 e.message, want);
	if (rc == WQ_OK)
		assert_int_equal(out.replayed, want_replayed);
	return rc == WQ_OK ? out.id : 0;
}

/* Claims `id` (the only due task) for INSTANCE; returns the attempt. */
static int claim(wq_db *db, int64_t id)
{
	const char *kinds[] = {"mail"};
	struct wq__claim_req req = {.instance = INSTANCE, .kinds = kinds, .nkinds = 1, .limit = 1, .now = wq_now()};
	struct wq__claimed *c = NULL;
	size_t n = 0;
	wq_error e;
	int attempt;

	if (WQ__STORE(db, claim, &req, &c, &n, &e) != WQ_OK)
		fail_msg("claim: %s", e.message);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].id, id);
	attempt = c[0].attempt;
	free(c[0].payload);
	free(c);
	return attempt;
}

static wq_rc finish(wq_db *db, int64_t id, int attempt, enum wq__finish_kind kind,
		    char *uncertain_out)
{
	struct wq__outcome o = {0};
	wq_error e;

	o.task_id = id;
	o.attempt = attempt;
	o.instance = INSTANCE;
	o.kind = kind;
	o.reason = kind == WQ__FINISH_INTERRUPTED ? "killed" : NULL;
	o.reason_detail = kind == WQ__FINISH_INTERRUPTED ? "signal 9" : NULL;
	o.result = kind == WQ__FINISH_SUCCEEDED ? "ok" : NULL;
	o.result_len = 2;
	o.result_sha256 = "x";
	o.exit_status = -1;
	o.now = wq_now();
	o.uncertain_out = uncertain_out;
	return WQ__STORE(db, finish, &o, &e);
}

static wq_effect_status begin(wq_db *db, int64_t id, int attempt, const char *name,
			      char **result)
{
	wq_effect_status st = 0;
	wq_error e;

	if (wq_effect_begin(db, id, attempt, name, &st, result, &e) != WQ_OK)
		fail_msg("begin %s: %s", name, e.message);
	return st;
}

static void identities(void **state)
{
	struct fixture *f = *state;
	int64_t id, other, found = 0;
	wq_error e;

	id = enqueue(f->db, "acme", "mail", "k1", "{\"b\":[1,2],\"a\":\"x\"}", 1, WQ_OK, 0);
	assert_int_equal(enqueue(f->db, "acme", "mail", "k1", "{\"a\":\"x\",\"b\":[1.0,2]}", 1,
				 WQ_OK, 1),
			 id);
	enqueue(f->db, "acme", "mail", "k1", "{\"a\":\"y\",\"b\":[1,2]}", 1, WQ_ECONFLICT, 0);
	enqueue(f->db, "acme", "mail", "k1", "{\"a\":\"x\",\"b\":[1,2]}", 2, WQ_ECONFLICT, 0);
	other = enqueue(f->db, "other", "mail", "k1", "{}", 1, WQ_OK, 0);
	assert_true(other != id);
	enqueue(f->db, "acme", "sms", "k1", "{}", 1, WQ_OK, 0);

	assert_int_equal(wq_operation_find(f->db, "acme", NULL, "mail", "k1", &found, &e), WQ_OK);
	assert_int_equal(found, id);
	assert_int_equal(wq_operation_find(f->db, "other", NULL, NULL, "k1", &found, &e), WQ_OK);
	assert_int_equal(found, other);
	assert_int_equal(wq_operation_find(f->db, "acme", NULL, NULL, "k1", &found, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "mail, sms"));
	assert_int_equal(wq_operation_find(f->db, "acme", NULL, NULL, "k2", &found, &e),
			 WQ_ENOTFOUND);
}

static void journal(void **state)
{
	struct fixture *f = *state;
	char uncertain[WQ_EFFECT_NAME_MAX + 1] = "", *result = NULL;
	wq_effect_status st;
	wq_attempt *att = NULL;
	wq_finding *fd = NULL;
	size_t n = 0;
	wq_task t;
	wq_error e;
	int64_t id;
	int a1, a2;

	id = enqueue(f->db, NULL, "mail", "m1", "{}", 1, WQ_OK, 0);
	a1 = claim(f->db, id);
	assert_int_equal(begin(f->db, id, a1, "send", NULL), WQ_EFFECT_NEW);
	assert_int_equal(begin(f->db, id, a1, "send", NULL), WQ_EFFECT_NEW); /* same attempt */
	assert_int_equal(wq_effect_done(f->db, id, a1, "send", "msg-1", &e), WQ_OK);
	assert_int_equal(wq_effect_done(f->db, id, a1, "send", "msg-1", &e), WQ_OK);
	assert_int_equal(wq_effect_done(f->db, id, a1, "send", "msg-2", &e), WQ_ESTATE);
	assert_int_equal(wq_effect_done(f->db, id, a1, "never", NULL, &e), WQ_ESTATE);
	assert_int_equal(wq_effect_begin(f->db, id, a1, "bad name", &st, NULL, &e), WQ_EINVAL);
	assert_int_equal(begin(f->db, id, a1, "archive", NULL), WQ_EFFECT_NEW);
	/* killed with `archive` begun, not confirmed */
	assert_int_equal(finish(f->db, id, a1, WQ__FINISH_INTERRUPTED, NULL), WQ_OK);
	assert_int_equal(wq_task_get(f->db, id, &t, &e), WQ_OK);
	assert_string_equal(t.reason_detail, "signal 9; effect archive begun, not confirmed");
	assert_int_equal(wq_effect_begin(f->db, id, a1, "send", &st, NULL, &e), WQ_ESTALE);

	assert_int_equal(wq_task_resolve(f->db, id, WQ_RESOLVE_RETRY, NULL, &e), WQ_OK);
	a2 = claim(f->db, id);
	assert_int_equal(begin(f->db, id, a2, "send", &result), WQ_EFFECT_DONE);
	assert_string_equal(result, "msg-1");
	wq_free(result);
	assert_int_equal(begin(f->db, id, a2, "archive", NULL), WQ_EFFECT_UNCERTAIN);
	assert_int_equal(begin(f->db, id, a2, "archive", NULL), WQ_EFFECT_UNCERTAIN);
	assert_int_equal(wq_effect_done(f->db, id, a2, "archive", NULL, &e), WQ_ESTATE);
	/* the handler reports success; the journal's policy wins */
	assert_int_equal(finish(f->db, id, a2, WQ__FINISH_SUCCEEDED, uncertain), WQ_OK);
	assert_string_equal(uncertain, "archive");
	assert_int_equal(wq_task_get(f->db, id, &t, &e), WQ_OK);
	assert_int_equal(t.state, WQ_STATE_INTERRUPTED);
	assert_string_equal(t.reason, "uncertain-effect");
	assert_string_equal(t.reason_detail, "archive");
	assert_int_equal(t.has_result, 0);

	assert_int_equal(wq_attempts(f->db, id, &att, &n, &e), WQ_OK);
	assert_int_equal(n, 2);
	assert_string_equal(att[0].instance, INSTANCE);
	assert_string_equal(att[1].outcome, "interrupted");
	assert_string_equal(att[1].reason, "uncertain-effect");
	wq_free(att);

	assert_int_equal(wq_doctor(f->db, &fd, &n, &e), WQ_OK);
	/* attempt 2 got `uncertain`: it did not begin archive, so not "begun twice" */
	assert_int_equal(n, 2); /* uncertain, interrupted */
	assert_string_equal(fd[0].type, "uncertain-effect");
	assert_string_equal(fd[1].type, "interrupted");
	assert_int_equal(fd[1].task_id, id);
	assert_string_equal(fd[1].operation, "m1");
	wq_free(fd);
}

static void retention(void **state)
{
	struct fixture *f = *state;
	wq_prune_opts po = {0};
	wq_prune_counts c = {0};
	wq_config *cfg = NULL;
	wq_error e;
	int64_t id;
	int a;

	po.task_retention = 2 * WQ__US_PER_S;
	po.operation_retention = 1 * WQ__US_PER_S;
	assert_int_equal(wq_prune(f->db, &po, &c, &e), WQ_EINVAL);

	id = enqueue(f->db, NULL, "mail", "p1", "{\"n\":1}", 1, WQ_OK, 0);
	a = claim(f->db, id);
	assert_int_equal(finish(f->db, id, a, WQ__FINISH_SUCCEEDED, NULL), WQ_OK);
	usleep(2000);
	po.task_retention = 1000;
	po.operation_retention = 3600 * WQ__US_PER_S;
	assert_int_equal(wq_prune(f->db, &po, &c, &e), WQ_OK);
	assert_int_equal(c.tasks, 1);
	assert_int_equal(c.operations, 0);
	assert_int_equal(enqueue(f->db, NULL, "mail", "p1", "{\"n\":1.0}", 1, WQ_OK, 1), id);
	enqueue(f->db, NULL, "mail", "p1", "{\"n\":2}", 1, WQ_ECONFLICT, 0);
	po.operation_retention = 1000;
	assert_int_equal(wq_prune(f->db, &po, &c, &e), WQ_OK);
	assert_int_equal(c.operations, 1);
	assert_true(enqueue(f->db, NULL, "mail", "p1", "{\"n\":2}", 1, WQ_OK, 0) != id);

	assert_int_equal(wq_config_parse("[retention]\ntasks = 1d\noperations = 2d\n"
					 "[kind.mail]\ncommand = true\n",
					 "t.ini", &cfg, &e),
			 WQ_OK);
	wq_config_retention(cfg, &po);
	assert_int_equal(po.task_retention, 86400 * WQ__US_PER_S);
	assert_int_equal(po.operation_retention, 2 * 86400 * WQ__US_PER_S);
	wq_config_free(cfg);
	assert_int_equal(wq_config_parse("[retention]\ntasks = 2d\noperations = 1d\n"
					 "[kind.mail]\ncommand = true\n",
					 "t.ini", &cfg, &e),
			 WQ_ECONFIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(identities, setup, teardown),
		cmocka_unit_test_setup_teardown(journal, setup, teardown),
		cmocka_unit_test_setup_teardown(retention, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
