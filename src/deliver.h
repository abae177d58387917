/*
 * deliver.h — the worker's delivery side (SPEC §8): claims deliveries of stored results
 * and sends them through their channels, in slots of their own, on the worker's loop.
 *
 *   inbox:RECIPIENT   written by the store in the transaction that marks the delivery
 *                     delivered (unique per delivery: exactly once)
 *   webhook:NAME      HTTP POST of the notification JSON (libcurl, in libuv's thread
 *                     pool), headers Content-Type: application/json and
 *                     Idempotency-Key: <delivery id>; 2xx = delivered
 *   command:NAME      argv of [channel.NAME] (spawn.c), the notification JSON on stdin,
 *                     exit 0 = delivered
 *
 * The notification is metadata only (task id, kind, operation, state, result size and
 * SHA-256, how to fetch the body), never the result body. A failed attempt backs off
 * per channel (retry_backoff with jitter); after max_attempts the delivery is dead,
 * logged as an error and reported to the operators' inbox.
 *
 * Everything here runs on the loop's thread, store calls included; only the blocking
 * curl_easy_perform runs in the thread pool, on copies it owns.
 */
#ifndef WQ_DELIVER_H
#define WQ_DELIVER_H

#include "internal.h"

#include <uv.h>

struct wq__deliver;

typedef void (*wq__deliver_log_fn)(void *ud, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct wq__deliver_opts {
	uv_loop_t *loop;
	wq_db *db;
	const wq_config *cfg;       /* channels, delivery_concurrency, operators_inbox */
	wq__deliver_log_fn log;     /* operator lines; never bodies */
	/* Called on the loop after a delivery left its slot (recorded or not). */
	void (*on_settled)(void *ud);
	void *ud;
};

/* Borrows everything in o (the loop, db and cfg must outlive it). */
wq_rc wq__deliver_new(const struct wq__deliver_opts *o, struct wq__deliver **out,
		      wq_error *err);
/* Call only once the loop has run to its end (no delivery in flight). Accepts NULL. */
void wq__deliver_free(struct wq__deliver *d);

/* Claims deliveries for the free slots under `instance` and starts them. A failing
 * claim is the caller's to report (*err): the worker counts it with its other store
 * failures, so it neither floods the log nor claims again before the store took a write. */
wq_rc wq__deliver_claim(struct wq__deliver *d, const char *instance, wq_error *err);
/* Deliveries in flight (each holds a slot). */
int wq__deliver_inflight(const struct wq__deliver *d);
/* For --until-idle: 1 while a delivery is in flight, the last claim found some, or a
 * pending delivery is due before `horizon_end`. */
int wq__deliver_keeps_alive(struct wq__deliver *d, int64_t horizon_end);
/* Recovery (heartbeat): deliveries left `sending` by gone instances, or by `instance`
 * without being in flight here, go back to pending with their uncertainty recorded. */
void wq__deliver_recover(struct wq__deliver *d, const char *instance);
/* Offers the outcomes the store did not take yet again (every tick); with `give_up`
 * (the drain's deadline) the ones it still does not take are logged and dropped. */
void wq__deliver_retry_unrecorded(struct wq__deliver *d, int give_up);
/* Drain deadline: stops what is in flight without recording an outcome (the deliveries
 * stay `sending`; recovery retries them and records the uncertainty). on_settled follows
 * for each once it has stopped. */
void wq__deliver_abort(struct wq__deliver *d);
/* Before the loop is torn down (wq_worker_free): like abort, but nothing is called back
 * any more; running the loop to its end then lets the rest finish quietly. */
void wq__deliver_close(struct wq__deliver *d);

#endif /* WQ_DELIVER_H */
