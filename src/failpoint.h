/*
 * failpoint.h — crash and fault injection for the tests (issue 15).
 *
 * $WAKEQ_FAILPOINT=<spec>[,<spec>...], each spec `name[:count][:action]`:
 *   count   fire on the Nth hit of `name` in this process (default 1), once
 *   action  kill        SIGKILL this process there (the default): a real crash, no
 *                       clean close, nothing flushed
 *           error       the call fails: a store call (a failpoint named after the
 *                       store method) returns WQ_EIO with an "injected" message; a
 *                       named point checked with wq__failpoint_rc returns WQ_EIO; at
 *                       a point that cannot fail (wq__failpoint) nothing happens
 *           delay:DUR   sleep DUR (a wakeq duration: 50ms, 2s) there, then go on
 *           hold:PATH   wait there until the file PATH exists (checked every 5 ms),
 *                       then go on: a test orders events around the point without
 *                       timing (it waits for the firing in the log, acts, creates PATH)
 * e.g. WAKEQ_FAILPOINT=claim-committed:3, WAKEQ_FAILPOINT=finish:error,delivery-sent:delay:2s
 * Specs of one name firing on the same hit act in the order given:
 * `claim:1:hold:PATH,claim:1:error` holds the first claim, then fails it.
 * When $WAKEQ_FAILPOINT_LOG names a file, every firing appends "<pid> <name> <action>"
 * to it before acting, so a sweep can tell a point that fired from one never reached.
 * The variable is inherited by child processes (handlers, and the `wakeq effect`
 * calls they make); counts are per process.
 *
 * Compiled in only when WQ_FAILPOINTS is defined (CMake option WQ_FAILPOINTS: ON
 * unless CMAKE_BUILD_TYPE=Release); a release build has no failpoint code, symbol or
 * string (tests/abi_exports.sh checks it with nm and strings).
 *
 * The call API is stable and small, for every file that adds a point:
 *   wq__failpoint("name");               kill / delay here
 *   rc = wq__failpoint_rc("name", err);  kill / delay here, or WQ_EIO for `error`
 *   if (wq__failpoint_hit("name")) ...   a fault injected in place (commit-lost)
 * A new point gets a line in WQ__FAILPOINT_NAMES below (the crash sweep runs each).
 */
#ifndef WQ_FAILPOINT_H
#define WQ_FAILPOINT_H

#include "wakeq.h"

/* The named points beyond the store methods (every WQ__STORE(db, method, ...) is a
 * point named `method` too, e.g. `claim`, `finish`, `instance_heartbeat`). X(name,
 * where) — the crash sweep (tests/crash/sweep) reads this list. */
#define WQ__FAILPOINT_NAMES(X)                                                             \
	/* src/worker.c: claim committed, the handler not started yet */                   \
	X("claim-committed", "after a claim's COMMIT, before its handlers start")          \
	/* src/worker.c: the handler's exit seen, nothing recorded yet */                  \
	X("handler-exited", "after a handler exited, before its outcome is recorded")      \
	/* src/worker_record.c: the outcome queued for the next batch, not recorded yet */ \
	X("outcome-queued", "after a handler's outcome was queued for its batch")          \
	/* src/worker.c: the outcome is durable, the worker has not moved on */            \
	X("outcome-committed", "after an outcome's COMMIT (finish)")                       \
	/* src/effect.c: `effect begin` recorded, its answer not yet given */              \
	X("effect-begun", "between an effect's begin (committed) and its done")            \
	/* src/deliver.c: the receiver answered, the delivery's state not recorded */      \
	X("delivery-sent", "after a delivery was sent, before it is recorded")             \
	/* src/worker.c: an instance heartbeat (the lease renewal) is due */               \
	X("lease-renew", "before a lease renewal (instance heartbeat)")                    \
	/* src/worker.c: stop asked, handlers still running */                            \
	X("drain", "during the drain, after the stop was asked")                           \
	/* src/store/sql.c: COMMIT done, its answer reported lost (WQ_EUNKNOWN) */         \
	X("commit-lost", "a COMMIT reported lost although it happened (fault in place)")  \
	/* src/store/op_finish_many.c: the multi-row finish's self-check fails (PostgreSQL) */ \
	X("finish-many-mismatch", "a batch's multi-row finish changed fewer rows than told") \
	/* src/intake.c: a message's record and its task committed, the poll goes on */    \
	X("intake-recorded", "after a source message and its task were recorded")         \
	/* src/intake.c: acknowledgements claimed, the source not told yet */              \
	X("intake_ack_send", "before a source acknowledgement is sent")                   \
	/* src/intake.c: the source took the acknowledgement and the store recorded it */  \
	X("intake-acked", "after a source acknowledgement was sent and recorded")

#ifdef WQ_FAILPOINTS

/* Kill or delay here when `name` is armed; `error` does nothing at such a point. */
void wq__failpoint(const char *name);
/* Like wq__failpoint; for `error` fills err and returns WQ_EIO. WQ_OK otherwise. */
wq_rc wq__failpoint_rc(const char *name, wq_error *err);
/* 1 when `name` fires now (its count reached; no action taken): for faults injected
 * in place. `commit-lost`: every COMMIT of an operation whose repeat would not
 * recognise it (enqueue, cancel, resolve, …) commits for real and is then reported as
 * WQ__SQL_COMMIT_UNKNOWN, as when PostgreSQL's answer is lost (src/store/sql.c). */
int wq__failpoint_hit(const char *name);

/* Store calls (WQ__STORE): wq__failpoint_store(method) before the call acts like
 * wq__failpoint and, for `error`, arms an injected I/O error for this thread that the
 * store's first begin or statement takes (wq__failpoint_take, src/store/sql.c);
 * wq__failpoint_store_end(rc) disarms what the call did not take and returns rc. */
void wq__failpoint_store(const char *method);
wq_rc wq__failpoint_store_end(wq_rc rc);
/* The armed store call's name (and disarms it), or NULL. */
const char *wq__failpoint_take(void);

/* The test clock (src/time.c): wq_now() = the real clock + this offset, in µs. Starts
 * at $WAKEQ_TEST_CLOCK_OFFSET (a duration, "-" allowed: "-90s") when set. */
void wq__clock_set_offset(int64_t us);
int64_t wq__clock_offset(void);

#else

#define wq__failpoint(name) ((void)0)
#define wq__failpoint_rc(name, err) ((void)(err), WQ_OK)
#define wq__failpoint_hit(name) 0
#define wq__failpoint_take() ((const char *)0)

#endif

#endif
