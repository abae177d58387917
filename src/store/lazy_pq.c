/* lazy_pq.c — libpq's table, filled by dlopen on the first PostgreSQL store (lazy_pq.h):
 * a client command on a SQLite store never loads libpq or what it pulls in. */
#define WQ_LAZY_NO_MACROS 1
#include "internal.h"
#include "lazy.h"
#include "lazy_pq.h"

#include <stdio.h>

struct wq__pq_api wq__pq_api;
static const char *const pq_names[] = {WQ__PQ_FUNCS(WQ__LAZY_NAME)};
static struct wq__lazy pq_lib = {PTHREAD_ONCE_INIT, WQ_LIBPQ_SONAME, &wq__pq_api,
				 pq_names, WQ__ARRAY_LEN(pq_names), 0, ""};
_Static_assert(sizeof(struct wq__pq_api) == sizeof(pq_names) / sizeof(char *) * sizeof(void *),
	       "one slot per name");

static void pq_open(void)
{
	wq__lazy_open(&pq_lib);
}

int wq__lazy_pq_load(char *msg, size_t msgsz)
{
	pthread_once(&pq_lib.once, pq_open);
	if (pq_lib.rc && msg)
		snprintf(msg, msgsz, "cannot load the PostgreSQL client library (%s): %s",
			 WQ_LIBPQ_SONAME, pq_lib.msg);
	return pq_lib.rc;
}
