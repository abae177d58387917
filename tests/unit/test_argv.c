/* argv.c (issue 14): a configured command is split with a POSIX shell's word rules —
 * quotes and backslashes — and nothing else (no expansion, no globbing, no operators).
 * Table cases, then two properties over random input: any text splits or is refused
 * without a crash (run under ASan), and any words quoted back join and split to
 * themselves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Splits line and compares with the NULL-terminated want[]. */
static void expect_words(const char *line, const char *const *want)
{
	char **argv = NULL;
	wq_error e = {0};
	size_t i;

	if (wq__argv_split(line, &argv, &e) != WQ_OK)
		fail_msg("'%s': %s", line, e.message);
	for (i = 0; want[i]; i++) {
		if (!argv[i])
			fail_msg("'%s': word %zu missing (want '%s')", line, i, want[i]);
		if (strcmp(argv[i], want[i]) != 0)
			fail_msg("'%s': word %zu is '%s', want '%s'", line, i, argv[i], want[i]);
	}
	if (argv[i])
		fail_msg("'%s': extra word '%s'", line, argv[i]);
	wq__argv_free(argv);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void shell_word_rules(void **state)
{
	(void)state;
	expect_words("a b\tc\nd", WORDS("a", "b", "c", "d"));
	expect_words("  lead and trail  ", WORDS("lead", "and", "trail"));
	expect_words("", (const char *const[]){NULL});
	expect_words("   ", (const char *const[]){NULL});
	/* single quotes: everything literal, no escapes */
	expect_words("'a b' 'c\\d' '\"'", WORDS("a b", "c\\d", "\""));
	/* double quotes: \ escapes $ ` " \ only */
	expect_words("\"a\\\"b\" \"c\\\\d\" \"e\\$f\" \"g\\xh\" \"i\\`j\"",
		     WORDS("a\"b", "c\\d", "e$f", "g\\xh", "i`j"));
	expect_words("\"it's\" 'say \"hi\"'", WORDS("it's", "say \"hi\""));
	/* unquoted backslash escapes anything; \newline disappears */
	expect_words("a\\ b c\\'d e\\\\f g\\\nh", WORDS("a b", "c'd", "e\\f", "gh"));
	/* concatenation of quoted and unquoted parts is one word */
	expect_words("pre'mid'\"post\"x", WORDS("premidpostx"));
	/* empty words */
	expect_words("'' \"\" a''b", WORDS("", "", "ab"));
	/* no expansion, no globbing, no operators: bytes of words */
	expect_words("$HOME * ~ a;b > out | c `id` $(id)",
		     WORDS("$HOME", "*", "~", "a;b", ">", "out", "|", "c", "`id`", "$(id)"));
	expect_words("\"$HOME\" '$HOME'", WORDS("$HOME", "$HOME"));
}

static void refused(void **state)
{
	const char *bad[] = {"'open", "a \"open", "x\\", "\"a\\\"", "ok 'a''b", NULL};
	(void)state;
	for (int i = 0; bad[i]; i++) {
		char **argv = (char **)0x1;
		wq_error e = {0};
		assert_int_equal(wq__argv_split(bad[i], &argv, &e), WQ_EINVAL);
		assert_ptr_equal(argv, (char **)0x1);
		assert_non_null(strstr(e.message, "in '"));
	}
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* Random bytes from a small alphabet heavy in quoting characters: never a crash or an
 * overrun (ASan), and when accepted, no word longer than the line. */
static void random_text_never_breaks(void **state)
{
	static const char alpha[] = "ab '\"\\\t\n$`;#";
	unsigned seed = 14;
	char line[64];
	(void)state;
	for (int round = 0; round < 200000; round++) {
		size_t len = rnd(&seed) % (sizeof line - 1);
		char **argv = NULL;
		wq_error e;

		for (size_t i = 0; i < len; i++)
			line[i] = alpha[rnd(&seed) % (sizeof alpha - 1)];
		line[len] = '\0';
		if (wq__argv_split(line, &argv, &e) != WQ_OK)
			continue;
		for (char **a = argv; *a; a++)
			assert_true(strlen(*a) <= len);
		wq__argv_free(argv);
	}
}

/* Appends word quoted for a shell: 'x' with each ' written as '\''. */
static size_t quote(char *out, const char *word)
{
	size_t n = 0;

	out[n++] = '\'';
	for (const char *c = word; *c; c++) {
		if (*c == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *c;
		}
	}
	out[n++] = '\'';
	return n;
}

static void quoted_words_round_trip(void **state)
{
	static const char alpha[] = "ab '\"\\\t$*;#\n";
	unsigned seed = 2026;
	(void)state;
	for (int round = 0; round < 50000; round++) {
		char words[6][16], line[6 * (16 * 4 + 3) + 1];
		const char *want[7];
		size_t n = 1 + rnd(&seed) % 6, at = 0;

		for (size_t w = 0; w < n; w++) {
			size_t len = rnd(&seed) % 15;
			for (size_t i = 0; i < len; i++)
				words[w][i] = alpha[rnd(&seed) % (sizeof alpha - 1)];
			words[w][len] = '\0';
			want[w] = words[w];
			at += quote(line + at, words[w]);
			line[at++] = ' ';
		}
		line[at] = '\0';
		want[n] = NULL;
		expect_words(line, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shell_word_rules),
		cmocka_unit_test(refused),
		cmocka_unit_test(random_text_never_breaks),
		cmocka_unit_test(quoted_words_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
