/* Released migration steps never change: a store in the field already ran them, so an
 * edit would make a fresh store differ from a migrated one without any step saying so
 * (a merge once rewrote step 1's tasks_claim in place). The SHA-256 of each released
 * step's text is pinned here; a schema change is a new step (or an edit of an
 * unreleased one, which is not listed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "internal.h"
#include "store/sql.h"

struct pinned {
	int version;
	const char *sha256;
};

/* Steps 1-3 shipped in 0.1.0 (CHANGELOG.md). */
static const struct pinned sqlite_released[] = {
	{1, "94e429070adf66932a06925ccdada9bb94c744d447e78f17546b3388843052f7"},
	{2, "c9b7ff75769e36bc96cb868363ae2b3b150ac87ca6fed2e8b07a5ceac14bce67"},
	{3, "f374e93ac0d4f69b47a0cbb5c4f16ece7a4e57da73bebd2b17f4fb46e34ccab8"},
};

#ifdef WQ_HAVE_POSTGRES
static const struct pinned postgres_released[] = {
	{1, "ffdc5fa31996be52f6b989dc6d658f0df690740e9f1f2c3f963c733d2557b5c3"},
	{2, "1cd46857fa61235159a98257c6c89fbd2762817e327fc07207be28ad4e1aebc0"},
	{3, "a99b7018f9140c563db9608902813012a3b899e58d504e79c9b0360b125f821d"},
};
#endif

static void check(const struct wq__migration *steps, size_t nsteps, const struct pinned *pin,
		  size_t npin)
{
	size_t i;
	char hex[WQ_SHA256_HEX];

	assert_true(nsteps >= npin);
	for (i = 0; i < npin; i++) {
		assert_int_equal(steps[i].version, pin[i].version);
		wq__sha256_hex(steps[i].sql, strlen(steps[i].sql), hex);
		if (strcmp(hex, pin[i].sha256) != 0)
			fail_msg("released step %d was edited (sha256 %s): add a new step instead",
				 pin[i].version, hex);
	}
}

static void sqlite_released_steps_unchanged(void **state)
{
	(void)state;
	check(wq__sqlite_migrations, wq__sqlite_nmigrations, sqlite_released,
	      sizeof sqlite_released / sizeof sqlite_released[0]);
}

#ifdef WQ_HAVE_POSTGRES
static void postgres_released_steps_unchanged(void **state)
{
	(void)state;
	check(wq__postgres_migrations, wq__postgres_nmigrations, postgres_released,
	      sizeof postgres_released / sizeof postgres_released[0]);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sqlite_released_steps_unchanged),
#ifdef WQ_HAVE_POSTGRES
		cmocka_unit_test(postgres_released_steps_unchanged),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
