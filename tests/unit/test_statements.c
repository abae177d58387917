/* Declarations about statements that the store relies on, checked against the texts
 * every dialect runs: WQ__SQL_EVENT_WRITERS (statements.h) names exactly the statements
 * whose text inserts into events, besides the counted ones (SQL_EVENT_INSERT_AT,
 * SQL_EVENTS_INSERT_AT4/8/32). A writer missing from it would let sql.c's event-id count
 * hand out an id another statement already took (a UNIQUE failure at run time).
 * WQ__SQL_EVENT_BARRIERS (wave7 drain) names, with the writers, every statement that
 * reads events, deletes tasks or works a savepoint: one missing would run while events
 * sql.c queued are not in the table yet. Texts are whole C strings once compiled, so a
 * literal split as "INSERT INTO " "events" is found too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
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

/* The counted event inserts (sql.c event_counted): their ids are counted, so they are in
 * neither list. */
static int counted(int id)
{
	return id == SQL_EVENT_INSERT_AT || id == SQL_EVENTS_INSERT_AT4 ||
	       id == SQL_EVENTS_INSERT_AT8 || id == SQL_EVENTS_INSERT_AT32;
}

static int declared_barrier(int id)
{
#define IS(w) if (id == w) return 1;
	WQ__SQL_EVENT_BARRIERS(IS)
#undef IS
	return 0;
}

/* Whether text names the table events (not schedule_events). */
static int names_events(const char *text)
{
	for (const char *p = text; (p = strstr(p, "events")) != NULL; p += 6) {
		char before = p == text ? ' ' : p[-1], after = p[6];

		if (before != '_' && !isalnum((unsigned char)before) && after != '_' &&
		    !isalnum((unsigned char)after))
			return 1;
	}
	return 0;
}

/* What the queued events must be written before (sql.c events_flush): a statement that
 * reads or writes events, deletes tasks (cascading to their events) or works a
 * savepoint. */
static int needs_events_written(const char *text)
{
	return names_events(text) || strstr(text, "DELETE FROM tasks") != NULL ||
	       strstr(text, "SAVEPOINT") != NULL;
}

static void check_dialect(const struct wq__dialect *d, const char *dname)
{
	for (int id = 0; id < WQ__SQL_COUNT; id++) {
		const char *text = wq__sql_text(d, id);
		int writes = text && strstr(text, "INTO events") != NULL;

		if (counted(id))
			continue;
		if (writes && !declared_writer(id))
			fail_msg("%s: %s inserts into events but is not in WQ__SQL_EVENT_WRITERS",
				 dname, names[id]);
		if (text && needs_events_written(text) && !declared_writer(id) &&
		    !declared_barrier(id))
			fail_msg("%s: %s reads events, deletes tasks or works a savepoint but is "
				 "in neither WQ__SQL_EVENT_WRITERS nor WQ__SQL_EVENT_BARRIERS",
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

/* Every declared barrier does what makes it one, on at least one dialect; the counted
 * inserts are SQLite's and insert events. */
static void event_barriers_declared(void **state)
{
	(void)state;
#define CHECK(w)                                                                          \
	{                                                                                  \
		const char *a = wq__sql_text(&wq__sqlite_dialect, w);                      \
		const char *b = PG_TEXT(w);                                                \
		if (!(a && needs_events_written(a)) && !(b && needs_events_written(b)))    \
			fail_msg("%s is in WQ__SQL_EVENT_BARRIERS but needs no event", #w);  \
	}
	WQ__SQL_EVENT_BARRIERS(CHECK)
#undef CHECK
	for (int id = 0; id < WQ__SQL_COUNT; id++) {
		const char *a = wq__sql_text(&wq__sqlite_dialect, id);

		if (counted(id) && !(a && strstr(a, "INTO events")))
			fail_msg("%s is counted but inserts no event on SQLite", names[id]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_writers_declared),
		cmocka_unit_test(event_writers_write),
		cmocka_unit_test(event_barriers_declared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
