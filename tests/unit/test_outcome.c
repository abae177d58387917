/* The handler exit table (README "Command handlers", SPEC §4) and the on_interrupt=retry
 * policy, row by row, through the pure decision of outcome.c; and the backoff's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "outcome.h"

#define NOW (INT64_C(1000) * WQ__US_PER_S)
#define BASE (2 * WQ__US_PER_S)
#define MAX (60 * WQ__US_PER_S)

static struct wq__run_policy policy(int attempt, int max_attempts, int retry_on_interrupt)
{
	struct wq__run_policy p;

	memset(&p, 0, sizeof p);
	p.attempt = attempt;
	p.max_attempts = max_attempts;
	p.backoff_base = BASE;
	p.backoff_max = MAX;
	p.timeout = 30 * WQ__US_PER_S;
	p.on_interrupt_retry = retry_on_interrupt;
	return p;
}

static struct wq__run_facts exited(int status)
{
	struct wq__run_facts f;

	memset(&f, 0, sizeof f);
	f.exit_status = status;
	f.result_max = 1024;
	return f;
}

static struct wq__run_facts signalled(int sig)
{
	struct wq__run_facts f = exited(-1);

	f.term_signal = sig;
	return f;
}

static void assert_str(const char *got, const char *want)
{
	if (!want) {
		if (got)
			fail_msg("expected NULL, got '%s'", got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void decide(const struct wq__run_facts *f, const struct wq__run_policy *p,
		   struct wq__decided *d)
{
	wq__outcome_decide(f, p, NOW, 0.5, d);
}

static void test_exit_0_succeeded(void **state)
{
	struct wq__run_facts f = exited(0);
	struct wq__run_policy p = policy(1, 3, 0);
	struct wq__decided d;

	(void)state;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
	assert_str(d.o.reason, NULL);
	assert_str(d.o.reason_detail, NULL);
	assert_str(d.o.outcome, NULL);
	assert_int_equal(d.o.exit_status, 0);
	assert_int_equal(d.o.signal, 0);
	/* even after a stop by the worker: a finished handler's word wins */
	f.stop = WQ__STOP_CANCEL;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
}

static void test_exit_3_discarded(void **state)
{
	struct wq__run_facts f = exited(3);
	struct wq__run_policy p = policy(1, 3, 0);
	struct wq__decided d;

	(void)state;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
	assert_str(d.o.outcome, "discarded");
	assert_str(d.o.reason, NULL);
	assert_int_equal(d.o.exit_status, 3);
}

static void test_exit_75_attempts_left_retry(void **state)
{
	struct wq__run_facts f = exited(75);
	struct wq__run_policy p = policy(2, 3, 0);
	struct wq__decided d;

	(void)state;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_str(d.o.reason, "exit-75");
	assert_str(d.o.reason_detail, NULL);
	/* attempt 2: base * 2 = 4 s, jitter 0 at rnd 0.5 */
	assert_true(d.o.retry_at == NOW + 2 * BASE);
	assert_int_equal(d.o.exit_status, 75);
}

static void test_exit_75_exhausted_failed(void **state)
{
	struct wq__run_facts f = exited(75);
	struct wq__run_policy p = policy(3, 3, 0);
	struct wq__decided d;

	(void)state;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason, "exit-75");
	assert_str(d.o.reason_detail, "attempts exhausted (3/3)");
	assert_true(d.o.retry_at == 0);
}

static void test_other_exit_failed(void **state)
{
	struct wq__run_facts f = exited(1);
	struct wq__run_policy p = policy(1, 3, 1);
	struct wq__decided d;

	(void)state;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason, "exit-1");
	assert_str(d.o.reason_detail, NULL);
	assert_int_equal(d.o.exit_status, 1);
	f = exited(2);
	decide(&f, &p, &d);
	assert_str(d.o.reason, "exit-2"); /* permanent even with attempts left */
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
}

/* A mailbox message's task (issue 13): any failing exit is a handout, the message
 * comes back until its handouts are used up. */
static void test_failure_retries_source_kind(void **state)
{
	struct wq__run_facts f = exited(1);
	struct wq__run_policy p = policy(1, 3, 0);
	struct wq__decided d;

	(void)state;
	p.failure_retries = 1;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_str(d.o.reason, "exit-1");
	assert_true(d.o.retry_at > NOW);
	p.attempt = 3;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason_detail, "attempts exhausted (3/3)");
}

static void test_signal_killed(void **state)
{
	struct wq__run_facts f = signalled(SIGKILL);
	struct wq__run_policy hold = policy(1, 3, 0), retry = policy(1, 3, 1);
	struct wq__run_policy last = policy(3, 3, 1);
	struct wq__decided d;

	(void)state;
	decide(&f, &hold, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason, "killed");
	assert_str(d.o.reason_detail, "signal 9");
	assert_int_equal(d.o.exit_status, -1);
	assert_int_equal(d.o.signal, SIGKILL);
	/* on_interrupt=retry: a retry while attempts remain, else failed */
	decide(&f, &retry, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_str(d.o.reason, "killed");
	assert_true(d.o.retry_at == NOW + BASE);
	decide(&f, &last, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason_detail, "signal 9; attempts exhausted (3/3)");
}

static void test_runtime_limit(void **state)
{
	struct wq__run_facts f = signalled(SIGTERM);
	struct wq__run_policy hold = policy(1, 3, 0), retry = policy(1, 3, 1);
	struct wq__decided d;

	(void)state;
	f.timed_out = 1;
	decide(&f, &hold, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason, "runtime-limit");
	assert_str(d.o.reason_detail, "timeout 30s exceeded; signal 15");
	decide(&f, &retry, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_str(d.o.reason, "runtime-limit");
	/* a handler that exits 1 on SIGTERM: still unknown */
	f = exited(1);
	f.timed_out = 1;
	decide(&f, &hold, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason_detail, "timeout 30s exceeded; exit 1 after SIGTERM");
	/* one that exits 75 on SIGTERM said it stopped before any effect: retry */
	f = exited(75);
	f.timed_out = 1;
	decide(&f, &hold, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_str(d.o.reason, "exit-75");
}

static void test_cancel_confirmed_by_75(void **state)
{
	struct wq__run_facts f = exited(75);
	struct wq__run_policy p = policy(3, 3, 1);
	struct wq__decided d;

	(void)state;
	f.stop = WQ__STOP_CANCEL;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_CANCELLED);
	assert_str(d.o.reason, NULL);
	assert_str(d.o.reason_detail, NULL);
}

static void test_cancel_anything_else_interrupted(void **state)
{
	struct wq__run_policy p = policy(1, 3, 1); /* never retried: the cancel wins */
	struct wq__run_facts f = signalled(SIGKILL);
	struct wq__decided d;

	(void)state;
	f.stop = WQ__STOP_CANCEL;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason, "killed");
	assert_str(d.o.reason_detail, "cancel requested");
	f = exited(1);
	f.stop = WQ__STOP_CANCEL;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason, "killed");
}

static void test_drain_deadline(void **state)
{
	struct wq__run_policy p = policy(1, 3, 1);
	struct wq__run_facts f = signalled(SIGKILL);
	struct wq__decided d;

	(void)state;
	f.stop = WQ__STOP_DRAIN;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_str(d.o.reason, "drain-deadline");
	assert_str(d.o.reason_detail, "signal 9");
}

static void test_result_too_large(void **state)
{
	struct wq__run_facts f = exited(0);
	struct wq__run_policy p = policy(1, 3, 0);
	struct wq__decided d;

	(void)state;
	f.result_too_large = 1;
	f.out_total = 5000;
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason, "result-too-large");
	assert_str(d.o.reason_detail, "stdout was 5000 bytes; result_max is 1024 bytes");
	/* too large only matters for a success: exit 1 stays exit-1 */
	f = exited(1);
	f.result_too_large = 1;
	decide(&f, &p, &d);
	assert_str(d.o.reason, "exit-1");
}

static void test_spawn_failed(void **state)
{
	struct wq__run_facts f = exited(127);
	struct wq__run_policy p = policy(1, 3, 1);
	struct wq__decided d;

	(void)state;
	f.spawn_failed = 1;
	f.spawn_error = "/nope: No such file or directory\nsecond line";
	decide(&f, &p, &d);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_str(d.o.reason, "spawn-failed");
	assert_str(d.o.reason_detail, "/nope: No such file or directory");
	f.spawn_error = NULL;
	f.exit_status = -1;
	decide(&f, &p, &d);
	assert_str(d.o.reason_detail, NULL);
	assert_int_equal(d.o.exit_status, -1);
}

/* base * 2^(attempt-1), capped at max, ±25 %: within [0.75, 1.25] of the nominal delay,
 * and the jitter's extremes are reached at rnd 0 and rnd → 1. */
static void test_backoff_bounds(void **state)
{
	(void)state;
	for (int attempt = 1; attempt <= 12; attempt++) {
		struct wq__run_policy p = policy(attempt, 99, 0);
		int64_t nominal = BASE;

		for (int i = 1; i < attempt; i++)
			nominal *= 2;
		if (nominal > MAX)
			nominal = MAX;
		for (int k = 0; k <= 1000; k++) {
			double rnd = k == 1000 ? 0.999999 : k / 1000.0;
			int64_t d = wq__outcome_retry_at(&p, NOW, rnd) - NOW;

			assert_true(d >= nominal - nominal / 4);
			assert_true(d <= nominal + nominal / 4);
		}
		assert_true(wq__outcome_retry_at(&p, NOW, 0.0) - NOW == nominal - nominal / 4);
		assert_true(wq__outcome_retry_at(&p, NOW, 0.5) - NOW == nominal);
		assert_true(wq__outcome_retry_at(&p, NOW, 0.999999) - NOW > nominal + nominal / 5);
		/* WQ__RND_LAZY (wave5 drain): drawn here, within the same bounds; 200 draws
		 * are not all one value */
		for (int k = 0, seen_other = 0; k < 200 && !seen_other; k++) {
			int64_t a = wq__outcome_retry_at(&p, NOW, WQ__RND_LAZY) - NOW;
			int64_t b = wq__outcome_retry_at(&p, NOW, WQ__RND_LAZY) - NOW;

			assert_true(a >= nominal - nominal / 4 && a <= nominal + nominal / 4);
			seen_other = a != b;
			assert_true(seen_other || k < 199);
		}
	}
	/* the README's promise: within [base·0.75, max·1.25], never 0 with a base */
	{
		struct wq__run_policy p = policy(40, 99, 0);
		int64_t d = wq__outcome_retry_at(&p, NOW, 0.999999) - NOW;

		assert_true(d <= MAX + MAX / 4);
		assert_true(d >= MAX - MAX / 4);
	}
}

static void test_interrupt_policy(void **state)
{
	char note[160];

	(void)state;
	assert_int_equal(wq__outcome_interrupt_policy(1, 3, "worker-lost", note, sizeof note),
			 WQ_RESOLVE_RETRY);
	assert_string_equal(note, "on_interrupt=retry: worker-lost; attempt 1/3 done, retrying");
	assert_int_equal(wq__outcome_interrupt_policy(3, 3, "", note, sizeof note),
			 WQ_RESOLVE_FAILED);
	assert_string_equal(note, "on_interrupt=retry: interrupted; attempts exhausted (3/3)");
}

/* ---- in-process handlers: the return value read as the exit status it stands for ---- */

static struct wq__run_facts returned(wq_job_result r, enum wq__stop_why stop)
{
	struct wq__run_facts f = exited(-1);

	f.inproc = 1;
	f.inproc_ret = r;
	f.stop = stop;
	return f;
}

/* Returned by value: read d.reason and d.detail (d.o's pointers point into the copy that
 * was returned from). */
static struct wq__decided decide_inproc(struct wq__run_facts f, int attempt, int retry)
{
	struct wq__run_policy p = policy(attempt, 3, retry);
	struct wq__decided d;

	wq__outcome_decide(&f, &p, NOW, 0.5, &d);
	assert_int_equal(d.o.exit_status, -1); /* no process: no exit status recorded */
	return d;
}

static void test_inproc_returns(void **state)
{
	struct wq__run_facts f;
	struct wq__decided d;

	(void)state;
	d = decide_inproc(returned(WQ_JOB_SUCCEEDED, WQ__STOP_NONE), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
	assert_null(d.o.outcome);
	d = decide_inproc(returned(WQ_JOB_DISCARDED, WQ__STOP_NONE), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
	assert_string_equal(d.o.outcome, "discarded");
	d = decide_inproc(returned(WQ_JOB_RETRY, WQ__STOP_NONE), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_string_equal(d.reason, "handler-retry");
	d = decide_inproc(returned(WQ_JOB_RETRY, WQ__STOP_NONE), 3, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	d = decide_inproc(returned(WQ_JOB_FAIL, WQ__STOP_NONE), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_string_equal(d.reason, "handler-failed");
	/* CANCELLED without a cancel request: a retryable stop, not `cancelled` */
	d = decide_inproc(returned(WQ_JOB_CANCELLED, WQ__STOP_NONE), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	assert_string_equal(d.reason, "handler-cancelled");
	f = returned(WQ_JOB_SUCCEEDED, WQ__STOP_NONE);
	f.result_too_large = 1;
	f.out_total = 5000;
	d = decide_inproc(f, 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_FAILED);
	assert_string_equal(d.reason, "result-too-large");
}

static void test_inproc_stopped(void **state)
{
	struct wq__run_facts f;
	struct wq__decided d;

	(void)state;
	/* a cancel: only CANCELLED ends it cancelled; RETRY and FAIL are unknown */
	d = decide_inproc(returned(WQ_JOB_CANCELLED, WQ__STOP_CANCEL), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_CANCELLED);
	d = decide_inproc(returned(WQ_JOB_RETRY, WQ__STOP_CANCEL), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_string_equal(d.reason, "killed");
	d = decide_inproc(returned(WQ_JOB_FAIL, WQ__STOP_CANCEL), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	/* the handler's success wins even after a stop */
	d = decide_inproc(returned(WQ_JOB_SUCCEEDED, WQ__STOP_DRAIN), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_SUCCEEDED);
	d = decide_inproc(returned(WQ_JOB_FAIL, WQ__STOP_DRAIN), 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_string_equal(d.reason, "drain-deadline");
	/* runtime limit: interrupted, or retried for on_interrupt=retry kinds */
	f = returned(WQ_JOB_FAIL, WQ__STOP_NONE);
	f.timed_out = 1;
	d = decide_inproc(f, 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_string_equal(d.reason, "runtime-limit");
	d = decide_inproc(f, 1, 1);
	assert_int_equal(d.o.kind, WQ__FINISH_RETRY);
	/* abandoned past kill_grace: the SIGKILL case, whatever it returns later */
	f = returned(WQ_JOB_SUCCEEDED, WQ__STOP_CANCEL);
	f.inproc_abandoned = 1;
	d = decide_inproc(f, 1, 0);
	assert_int_equal(d.o.kind, WQ__FINISH_INTERRUPTED);
	assert_string_equal(d.reason, "killed");
	f.stop = WQ__STOP_DRAIN;
	d = decide_inproc(f, 1, 0);
	assert_string_equal(d.reason, "drain-deadline");
	assert_non_null(strstr(d.detail, "did not return within kill_grace"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_0_succeeded),
		cmocka_unit_test(test_exit_3_discarded),
		cmocka_unit_test(test_exit_75_attempts_left_retry),
		cmocka_unit_test(test_exit_75_exhausted_failed),
		cmocka_unit_test(test_other_exit_failed),
		cmocka_unit_test(test_failure_retries_source_kind),
		cmocka_unit_test(test_signal_killed),
		cmocka_unit_test(test_runtime_limit),
		cmocka_unit_test(test_cancel_confirmed_by_75),
		cmocka_unit_test(test_cancel_anything_else_interrupted),
		cmocka_unit_test(test_drain_deadline),
		cmocka_unit_test(test_result_too_large),
		cmocka_unit_test(test_spawn_failed),
		cmocka_unit_test(test_backoff_bounds),
		cmocka_unit_test(test_interrupt_policy),
		cmocka_unit_test(test_inproc_returns),
		cmocka_unit_test(test_inproc_stopped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
