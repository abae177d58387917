/*
 * wakeup.c — when the worker claims (issues 11, 12), besides the zero-delay kick after
 * every finished task:
 *  - a wake-up from the store: a readable descriptor (PostgreSQL LISTEN; SQLite the
 *    inotify watch on the wake-up file, src/store/op_wake.c) means "claim now", so an
 *    idle worker starts a task enqueued by another process within milliseconds;
 *  - the due timer: after each claim round, one timer for the earliest future due time
 *    (a delayed task, a retry's backoff, a delivery's next attempt, a schedule's next
 *    slot or lease renewal), when that comes before the next poll;
 *  - the poll timer (`poll_interval`, worker.c): only the fallback for a lost wake-up, a
 *    store without any, or work that became claimable without a commit that wakes (a
 *    turn lock's lease ran out, a kind resumed).
 * Work already due but not claimable (a held turn lock, a limit) is left to the poll and
 * to wake-ups, so an idle worker never spins: it wakes at most once per poll_interval,
 * plus once per future due time and per wake-up, and its claims only read.
 */
#include "worker_int.h"

#include <stdlib.h>

/* ---- the store's wake-up descriptor ---- */

/*
 * After a reconnect the old descriptor is dead even when the new one has the same
 * number, so the watch is rebuilt whenever the store says so (-1).
 */
static void free_handle(uv_handle_t *h)
{
	free(h);
}

static void on_wakeup(uv_poll_t *h, int status, int events)
{
	wq__wakeup_check(h->data);
}

void wq__wakeup_watch(struct wq_worker *w)
{
	int fd;

	if (w->wakeup) {
		uv_poll_stop(w->wakeup);
		uv_close((uv_handle_t *)w->wakeup, free_handle);
		w->wakeup = NULL;
	}
	if (w->phase != WQ__PH_RUNNING) {
		if (w->due_ready && !uv_is_closing((uv_handle_t *)&w->due))
			uv_close((uv_handle_t *)&w->due, NULL);
		w->due_at = 0;
		return;
	}
	if (!w->db->m->wakeup_fd)
		return;
	fd = w->db->m->wakeup_fd(w->db->s);
	if (fd < 0 || !(w->wakeup = malloc(sizeof(*w->wakeup))))
		return;
	if (uv_poll_init(&w->loop, w->wakeup, fd) != 0) {
		free(w->wakeup);
		w->wakeup = NULL;
		return;
	}
	w->wakeup->data = w;
	uv_poll_start(w->wakeup, UV_READABLE, on_wakeup);
}

/* Reads pending wake-ups; claims when one arrived or the watch had to be rebuilt. */
void wq__wakeup_check(struct wq_worker *w)
{
	int r;

	if (!w->db->m->wakeup_drain || w->phase != WQ__PH_RUNNING)
		return;
	r = w->db->m->wakeup_drain(w->db->s);
	if (r < 0 || !w->wakeup)
		wq__wakeup_watch(w);
	if (r != 0)
		wq__worker_kick(w);
}

/* ---- the due timer ---- */

static void arm(struct wq_worker *w, int64_t at);

/* libuv's clock is coarse (and a timer due in 0 ms may run a little early against the
 * wall clock the due times are in): never claim before the time, wait the rest. */
static void on_due(uv_timer_t *t)
{
	struct wq_worker *w = t->data;
	int64_t at = w->due_at;

	w->due_at = 0;
	if (wq_now() < at) {
		arm(w, at);
		return;
	}
	wq__worker_kick(w);
}

/* Sets the due timer to `at` (wall clock, µs) unless it is not in the future or the
 * poll timer comes first; stops it otherwise. */
static void arm(struct wq_worker *w, int64_t at)
{
	int64_t now = wq_now();
	uint64_t ms;

	if (!w->due_ready) {
		if (uv_timer_init(&w->loop, &w->due) != 0)
			return;
		w->due.data = w;
		w->due_ready = 1;
	}
	if (uv_is_closing((uv_handle_t *)&w->due))
		return;
	ms = at > now ? ms_of(at - now) : 0;
	uv_update_time(&w->loop);
	if (at <= now || (uv_is_active((uv_handle_t *)&w->poll) &&
			  ms >= uv_timer_get_due_in(&w->poll))) {
		uv_timer_stop(&w->due);
		w->due_at = 0;
		return;
	}
	w->due_at = at;
	uv_timer_start(&w->due, on_due, ms, 0);
}

static int64_t earlier(int64_t a, int64_t b)
{
	return a == 0 || (b != 0 && b < a) ? b : a;
}

void wq__wakeup_plan(struct wq_worker *w)
{
	int64_t now = wq_now(), at = 0;
	wq_error e;

	if (w->phase != WQ__PH_RUNNING || !w->registered)
		return;
	/* Every handler slot busy: the next finished task claims again (and plans). */
	if (w->running >= w->concurrency) {
		arm(w, 0);
	} else {
		/* A failed read leaves the worker to its poll, which reports the store's state. */
		if (WQ__STORE(w->db, wake_next, w->kinds, w->nkinds, now, &at, &e) != WQ_OK)
			at = 0;
		if (!w->sched.off) {
			if (w->sched.owned && w->sched.next_due > now)
				at = earlier(at, w->sched.next_due);
			/* the leases are renewed once per heartbeat, on a claim round */
			if (w->sched.renewed)
				at = earlier(at, w->sched.renewed + w->cfg->heartbeat);
		}
		arm(w, at);
	}
	/* Last, after this round's store calls: a wake-up that arrived during one of them may
	 * have been read off the descriptor already (libpq keeps the NOTIFYs it meets while
	 * reading any answer), and then the descriptor does not signal it: look now, or it
	 * waits for the next heartbeat or poll. */
	wq__wakeup_check(w);
}
