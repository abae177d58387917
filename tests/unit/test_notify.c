/* notify.c: the loop's wake-up from other threads. Every send is followed by a callback
 * that sees what was published before it; the loop thread never yields the CPU to wait
 * for a sender (uv_async_t in libuv 1.44 does: spin, then sched_yield(), until the sender
 * has returned from uv_async_send; under load one yield cost 8-19 ms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "notify.h"

/* Every sched_yield() of this process, libuv's included, comes here: counted. */
static atomic_long yields;

int sched_yield(void)
{
	atomic_fetch_add(&yields, 1);
	return 0;
}

#define SENDS 20000
#define ROUNDS 3000

struct ctx {
	struct wq__notify n;
	atomic_long published; /* the sender's count, stored before each send */
	long seen;             /* the value the last callback read (under mu) */
	long callbacks;
	atomic_int done;       /* the sender finished (stored before its last send) */
	long last;             /* the count whose callback closes the handle */
	int ping_pong;         /* the sender waits for each answer */
	pthread_mutex_t mu;
	pthread_cond_t cv;     /* seen changed */
};

static void on_notify(struct wq__notify *n)
{
	struct ctx *c = n->data;

	pthread_mutex_lock(&c->mu);
	c->callbacks++;
	c->seen = atomic_load(&c->published);
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (atomic_load(&c->done) && c->seen == c->last)
		wq__notify_close(n); /* the last send's data seen: the loop ends */
}

/* Publishes 1..last, a send after each. ping_pong (the store thread's pattern) then
 * waits for the loop's answer before the next: the loop wakes while the sender is still
 * returning from its send, where uv_async_t spins and yields (thousands of yields in
 * 3,000 rounds with libuv 1.44). Otherwise a burst: the handler threads' returned jobs. */
static void *sender(void *arg)
{
	struct ctx *c = arg;

	for (long i = 1; i <= c->last; i++) {
		atomic_store(&c->published, i);
		if (i == c->last)
			atomic_store(&c->done, 1);
		wq__notify_send(&c->n);
		if (!c->ping_pong)
			continue;
		pthread_mutex_lock(&c->mu);
		while (c->seen < i)
			pthread_cond_wait(&c->cv, &c->mu);
		pthread_mutex_unlock(&c->mu);
	}
	return NULL;
}

static void run(struct ctx *c, long last, int ping_pong)
{
	uv_loop_t loop;
	pthread_t th;

	c->last = last;
	c->ping_pong = ping_pong;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(wq__notify_init(&loop, &c->n, on_notify, c), 0);
	atomic_store(&yields, 0);
	assert_int_equal(pthread_create(&th, NULL, sender, c), 0);
	/* Returns when the handle is closed: only after a callback saw the last value. */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	pthread_join(th, NULL);
	assert_int_equal(c->seen, last);
	assert_true(c->callbacks >= 1 && c->callbacks <= last);
	assert_int_equal(c->n.fd, -1); /* the eventfd was closed with the handle */
	assert_int_equal(atomic_load(&yields), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void every_answer_is_seen_without_yielding(void **state)
{
	static struct ctx c;

	(void)state;
	run(&c, ROUNDS, 1);
	assert_int_equal(c.callbacks, ROUNDS); /* one wake-up per round */
}

static void a_burst_is_seen_to_its_end(void **state)
{
	static struct ctx c;

	(void)state;
	run(&c, SENDS, 0);
}

/* A send before the loop runs is not lost, and many sends coalesce into one callback. */
static void sends_before_the_loop_runs_coalesce(void **state)
{
	static struct ctx c;
	uv_loop_t loop;

	(void)state;
	c.last = SENDS;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(wq__notify_init(&loop, &c.n, on_notify, &c), 0);
	for (long i = 1; i <= SENDS; i++) {
		atomic_store(&c.published, i);
		wq__notify_send(&c.n);
	}
	atomic_store(&c.done, 1);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(c.callbacks, 1);
	assert_int_equal(c.seen, SENDS);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_answer_is_seen_without_yielding),
		cmocka_unit_test(a_burst_is_seen_to_its_end),
		cmocka_unit_test(sends_before_the_loop_runs_coalesce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
