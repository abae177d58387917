/*
 * op_clock.c — the store's clock (issue 15).
 *
 * A lease is written by one process and judged by others, possibly on other hosts whose
 * clocks disagree. Every lease's expiry (turn-lock leases, schedule owner leases, source
 * acknowledgement leases) is therefore written AND compared on one clock, the store's:
 * an operation reads it once (wq__store_clock) and uses that reading both for the
 * expiry it writes and for the expiries it judges. Instance heartbeats do the same in
 * SQL (instances.seen_at). What the clock is, per dialect: D_NOW_US — PostgreSQL's
 * clock_timestamp() on the server; SQLite's julianday('now'), i.e. the clock of the host
 * the database file is on. The test clock ($WAKEQ_TEST_CLOCK_OFFSET, src/time.c) moves
 * only the processes' clocks, never this one: two "hosts" of a test share one store
 * clock, as two real hosts do.
 *
 * Times that stay on the caller's clock (a wall-clock meaning, not a lease): a task's
 * due time, a delivery's or an acknowledgement's next attempt, a schedule's slots, and
 * every event's `at` (display).
 */
#include "op.h"

/* Within a transaction the first reading serves the rest of it: one operation, one
 * clock (a claim taking several lock keys reads it once). */
wq_rc wq__store_clock(struct wq__store *s, int64_t *now, wq_error *err)
{
	int64_t v = 0;
	size_t rows = 0;
	wq_rc rc;

	if (s->in_tx && s->clock_now > 0) {
		*now = s->clock_now;
		return WQ_OK;
	}
	rc = wq__rows(s, SQL_STORE_NOW, WQ__NOARGS, wq__read_i64, &v, &rows,
		      "read the store's clock", err);
	if (rc)
		return rc;
	if (rows != 1 || v <= 0)
		return wq__err(err, WQ_ESTORE, "the store's clock gave no time");
	if (s->in_tx)
		s->clock_now = v;
	*now = v;
	return WQ_OK;
}

wq_rc wq__op_store_now(struct wq__store *s, int64_t *now, wq_error *err)
{
	return wq__store_clock(s, now, err);
}
