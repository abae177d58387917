/* stderr_tail.c (issue 14): the kept tail of a failed attempt's stderr is its last
 * `keep` bytes, starting at a character, with invalid UTF-8 and NUL bytes as '?'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void expect_tail(const char *err, size_t len, size_t keep, const char *want)
{
	char *got = wq__stderr_tail(err, len, keep);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void tails(void **state)
{
	(void)state;
	expect_tail("abcdef", 6, 3, "def");
	expect_tail("abcdef", 6, 100, "abcdef");
	/* "é" is C3 A9: a cut after C3 drops the orphaned A9 */
	expect_tail("x\xC3\xA9yz", 5, 3, "yz");
	expect_tail("x\xC3\xA9yz", 5, 4, "\xC3\xA9yz");
	/* invalid bytes and NUL */
	expect_tail("a\xFF" "b\0c", 5, 5, "a?b?c");
	expect_tail("\xC3(", 2, 2, "?(");
	assert_null(wq__stderr_tail("abc", 3, 0));
	assert_null(wq__stderr_tail("abc", 0, 5));
	assert_null(wq__stderr_tail(NULL, 0, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(tails)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
