/*
 * fresh_store.h — an empty store for each test of a program that runs once per backend
 * (`PROG sqlite` or `PROG postgres`, as ctest calls it): a SQLite file in a temporary
 * directory of its own, or a database created on the server of $WAKEQ_TEST_PG_URL (the
 * maintenance URL) and dropped after the test. Used by tests/store/test_store.c and
 * tests/inproc/test_inproc.c.
 */
#ifndef WQ_TEST_FRESH_STORE_H
#define WQ_TEST_FRESH_STORE_H

/* Before the tests. argv[1] names the backend (default sqlite); `name` goes into
 * messages, the directory's and the databases' names. 0: run the tests; 77: skip them
 * (no $WAKEQ_TEST_PG_URL, or built without PostgreSQL; said on stderr); 1: failed. */
int fresh_store_begin(const char *name, int argc, char **argv);

/* "sqlite" or "postgres". */
const char *fresh_store_backend(void);

/* A new empty store (a file not created yet, or an empty database): its URL, valid until
 * the next call. Fails the running test when the database cannot be created. */
const char *fresh_store_new(void);

/* After a test: drops the database of the last fresh_store_new (PostgreSQL). */
void fresh_store_drop(void);

/* After the tests: removes the temporary directory and what is in it. */
void fresh_store_end(void);

#endif
