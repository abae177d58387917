/*
 * worker_lease.c — the worker's own lease: its heartbeat (and what follows when another
 * worker declared it lost), when a claim may go out under it, and by which lease the
 * heartbeats of other instances are judged.
 */
#include "worker_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The heartbeat is overdue and its last try, less than a heartbeat ago, failed (a full
 * disk, a store away): it is tried again on the heartbeat timer, not on every poll (each
 * try logs), and nothing (no task, no delivery) is claimed under the unconfirmed lease. */
int wq__worker_lease_unconfirmed(const struct wq_worker *w)
{
	int64_t now = wq_now();

	return now - w->last_beat > w->cfg->heartbeat + w->cfg->heartbeat / 2 &&
	       now - w->beat_tried < w->cfg->heartbeat;
}

/*
 * We were declared lost: the tasks of our old id are interrupted, perhaps already retried
 * and running elsewhere. Their handlers must not go on: SIGTERM now, SIGKILL after
 * kill_grace, to each handler's process group. Nothing is recorded for them here (no
 * stop-requested: the attempts are no longer ours); their outcomes, once they exit, are
 * refused by fencing and leave only a stale-outcome event. Returns how many were stopped.
 */
static int stop_lost(struct wq_worker *w, const char *old_id)
{
	int n = 0;

	wq__prefetch_drop(w); /* claimed under old_id, never started: no longer ours */
	for (struct wq__job *j = w->jobs; j; j = j->next) {
		if ((!j->sp && !j->ip) || strcmp(j->instance, old_id) != 0)
			continue;
		wq__job_terminate(w, j, WQ_JOB_STOP_LOST);
		if (j->stop == WQ__STOP_NONE)
			j->stop = WQ__STOP_LOST;
		n++;
	}
	return n;
}

/* A handler of a lost id still runs (see stop_lost). */
int wq__worker_lost_running(const struct wq_worker *w)
{
	for (const struct wq__job *j = w->jobs; j; j = j->next)
		if ((j->sp || j->ip) && strcmp(j->instance, w->self.id) != 0)
			return 1;
	return 0;
}

/* Heartbeat; when our row is gone we were declared lost: stop the old attempts'
 * handlers and take a fresh id for new claims (the old attempts keep the old id and are
 * fenced off by the store). */
void wq__worker_beat(struct wq_worker *w)
{
	int64_t now = wq_now();
	wq_error e;
	wq_rc rc;

	w->beat_tried = now;
	if (w->registered) {
		wq__failpoint("lease-renew");
		rc = wq__instance_heartbeat(w->db, &w->self, now, &e);
		if (rc == WQ_OK) {
			wq__worker_store_wrote(w);
			if (now - w->last_beat > w->cfg->lease)
				w->beats_since = now; /* we were cut off from the store */
			w->last_beat = now;
		} else if (rc == WQ_ENOTFOUND) {
			char g[32];
			int mine = stop_lost(w, w->self.id);

			wq__worker_log(w, "error",
			     "instance %s was declared lost by another worker: stopping its %d "
			     "running handler(s) (SIGTERM, SIGKILL after %s); their outcomes will not "
			     "be recorded (stale-outcome)",
			     w->self.id, mine, wq_duration_format(w->cfg->kill_grace, g, sizeof(g)));
			w->registered = 0;
			wq__instance_new_id(&w->self, &e);
		} else {
			wq__worker_store_failed_how(w, "heartbeat", &e, 0);
		}
	}
	if (!w->registered && w->phase <= WQ__PH_RUNNING) {
		rc = wq__instance_register(w->db, &w->self, now, &e);
		if (rc == WQ_OK) {
			w->registered = 1;
			w->last_beat = w->beats_since = now;
			wq__worker_log(w, "info", "re-registered as instance %s", w->self.id);
		} else {
			char what[WQ_NAME_MAX + 32];

			snprintf(what, sizeof(what), "registering instance %s", w->self.id);
			wq__worker_store_failed_how(w, what, &e, 0);
		}
	}
}

/*
 * The lease by which other instances' heartbeat ages are judged now: the configured one
 * once our own heartbeats have gone through without a gap for a lease, otherwise none
 * (only proven deaths, a dead pid on our host, are reaped). A worker cut off from the
 * store (a PostgreSQL restart, a stopped SQLite writer holding the write lock) finds every
 * other heartbeat stale when it comes back first; the others were cut off too and get one
 * lease to come back before they are judged. A freshly started worker waits the same.
 */
int64_t wq__worker_judged_lease(const struct wq_worker *w)
{
	int64_t now = wq_now();

	/* A gap no heartbeat has closed yet is a gap too: while our heartbeats fail,
	 * beats_since still dates from before it (only a beat that gets through resets it),
	 * and a recovery pass whose read gets through first would judge the others with
	 * it (t_pg_outage_peers, under load: the server took longer to accept writes). */
	if (now - w->last_beat > w->cfg->lease)
		return INT64_MAX;
	return now - w->beats_since >= w->cfg->lease ? w->cfg->lease : INT64_MAX;
}

