/* The generated operation id (operation_id.c): its hand-written hex digits are what the
 * snprintf it replaced ("op_%013" PRIx64 of the clock's low 52 bits, then 19 nibbles of
 * the random bytes) wrote, on edge values of the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "enqueue.h"

/* The former formatter, kept here as the reference. */
static void reference(char out[WQ__OPERATION_ID_BUFSZ], uint64_t us,
		      const unsigned char rnd[10])
{
	static const char digits[] = "0123456789abcdef";

	snprintf(out, WQ__OPERATION_ID_BUFSZ, "op_%013" PRIx64, us & UINT64_C(0xfffffffffffff));
	for (size_t i = 0; i < 19; i++) {
		unsigned b = rnd[i / 2];

		out[3 + 13 + i] = digits[i % 2 ? b & 15 : b >> 4];
	}
	out[3 + 32] = '\0';
}

static void matches_snprintf(void **state)
{
	static const uint64_t clocks[] = {0,
					  1,
					  15,
					  16,
					  UINT64_C(0xfffffffffffff),
					  UINT64_C(0x10000000000000),
					  UINT64_C(0x1fffffffffffff),
					  UINT64_C(1764748800000000), /* 2025-12-03 */
					  UINT64_C(0x0123456789abcdef),
					  UINT64_MAX};
	unsigned char rnd[10];
	char got[WQ__OPERATION_ID_BUFSZ], want[WQ__OPERATION_ID_BUFSZ];

	(void)state;
	for (size_t c = 0; c < sizeof clocks / sizeof clocks[0]; c++) {
		for (unsigned fill = 0; fill < 256; fill += 51) {
			for (size_t i = 0; i < sizeof rnd; i++)
				rnd[i] = (unsigned char)(fill + 37 * i);
			memset(got, 'x', sizeof got);
			wq__operation_id_at(got, clocks[c], rnd);
			reference(want, clocks[c], rnd);
			assert_string_equal(got, want);
			assert_int_equal(strlen(got), 35);
		}
	}
}

static void ids_differ(void **state)
{
	char a[WQ__OPERATION_ID_BUFSZ], b[WQ__OPERATION_ID_BUFSZ];

	(void)state;
	wq__operation_id(a);
	wq__operation_id(b);
	assert_int_equal(strncmp(a, "op_", 3), 0);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_snprintf),
		cmocka_unit_test(ids_differ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
