/* Declarations about statements that the store relies on, checked against the texts
 * every dialect runs: WQ__SQL_EVENT_WRITERS (statements.h) names exactly the statements
 * whose text inserts into events, besides SQL_EVENT_INSERT_AT. A writer missing from it
 * would let sql.c's event-id count hand out an id another statement already took (a
 * UNIQUE failure at run time). Texts are whole C strings once compiled, so a literal
 * split as "INSERT INTO " "events" is found too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "internal.h"
#include "store/sql.h"
#include "store/statements.h"

#ifdef WQ_HAVE_POSTGRES
#define PG_TEXT(id) wq__sql_text(&wq__postgres_dialect, id)
#else
#define PG_TEXT(id) ((const char *)NULL)
#endif

static const char *const names[WQ__SQL_COUNT] = {
#define NAME(id, text) [id] = #id,
	WQ__SQL_STATEMENTS(NAME)
#undef NAME
};

static int declared_writer(int id)
{
#define IS(w) if (id == w) return 1;
	WQ__SQL_EVENT_WRITERS(IS)
#undef IS
	return 0;
}

static void check_dialect(const struct wq__dialect *d, const char *dname)
{
	for (int id = 0; id < WQ__SQL_COUNT; id++) {
		const char *text = wq__sql_text(d, id);
		int writes = text && strstr(text, "INTO events") != NULL;

		if (id == SQL_EVENT_INSERT_AT)
			continue;
		if (writes && !declared_writer(id))
			fail_msg("%s: %s inserts into events but is not in WQ__SQL_EVENT_WRITERS",
				 dname, names[id]);
	}
}

static void event_writers_declared(void **state)
{
	(void)state;
	check_dialect(&wq__sqlite_dialect, "sqlite");
#ifdef WQ_HAVE_POSTGRES
	check_dialect(&wq__postgres_dialect, "postgres");
#endif
}

/* Every declared writer inserts into events on at least one dialect (a stale entry
 * would only cost a re-read, but says something false). */
static void event_writers_write(void **state)
{
	(void)state;
#define CHECK(w)                                                                          \
	{                                                                                  \
		const char *a = wq__sql_text(&wq__sqlite_dialect, w);                      \
		const char *b = PG_TEXT(w);                                            \
		if (!(a && strstr(a, "INTO events")) && !(b && strstr(b, "INTO events")))  \
			fail_msg("%s is in WQ__SQL_EVENT_WRITERS but inserts no event", #w); \
	}
	WQ__SQL_EVENT_WRITERS(CHECK)
#undef CHECK
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_writers_declared),
		cmocka_unit_test(event_writers_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
