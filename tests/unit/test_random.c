/* random.c's per-thread pools of kernel randomness: no byte sequence is handed out twice,
 * neither to a forked child (the pool's page is MADV_WIPEONFORK) nor across threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* The draws after a fork: the child's must differ from the parent's. Without the wipe
 * both continue from the same pool and the two draws are byte for byte equal. */
static void fork_draws_fresh_bytes(void **state)
{
	unsigned char warm[10], mine[16], theirs[16];
	int fds[2];
	pid_t pid;
	int st;

	(void)state;
	wq__random_bytes(warm, sizeof warm); /* this thread's pool is filled now */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsigned char b[16];

		wq__random_bytes(b, sizeof b);
		_exit(write(fds[1], b, sizeof b) == (ssize_t)sizeof b ? 0 : 1);
	}
	close(fds[1]);
	wq__random_bytes(mine, sizeof mine);
	assert_int_equal(read(fds[0], theirs, sizeof theirs), (ssize_t)sizeof theirs);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_memory_not_equal(mine, theirs, sizeof mine);
}

#define DRAWS 200 /* several refills of a pool at 10 bytes a draw */

static void *draw_many(void *arg)
{
	unsigned char *out = arg;

	for (int i = 0; i < DRAWS; i++)
		wq__random_bytes(out + 10 * i, 10);
	return NULL;
}

/* Two threads' draws, and a thread's successive draws, are all distinct. */
static void threads_draw_distinct_bytes(void **state)
{
	static unsigned char a[DRAWS * 10], b[DRAWS * 10];
	pthread_t ta, tb;

	(void)state;
	assert_int_equal(pthread_create(&ta, NULL, draw_many, a), 0);
	assert_int_equal(pthread_create(&tb, NULL, draw_many, b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	for (int i = 0; i < DRAWS; i++)
		for (int j = 0; j < DRAWS; j++) {
			assert_memory_not_equal(a + 10 * i, b + 10 * j, 10);
			if (j > i) {
				assert_memory_not_equal(a + 10 * i, a + 10 * j, 10);
				assert_memory_not_equal(b + 10 * i, b + 10 * j, 10);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fork_draws_fresh_bytes),
		cmocka_unit_test(threads_draw_distinct_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
