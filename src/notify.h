/*
 * notify.h — a wake-up of the event loop from another thread: uv_async_t's contract
 * (sends from any thread coalesce; the callback runs on the loop's thread) without its
 * busy wait.
 *
 * libuv before 1.45 (Debian 12 ships 1.44.2) makes the loop thread, when it takes an
 * async wake-up, spin and then sched_yield() until the sending thread has returned from
 * uv_async_send(). The sender is usually still inside its write(2) to the eventfd when
 * the loop wakes on the other core, so most wake-ups yield; on a loaded machine one
 * yield gave the CPU away for 8-19 ms (perf trace of W3: the store thread's claim answer
 * and the handler threads' returned jobs waited that long). Upstream removed the spin in
 * 1.45 (libuv pull request 3879). An eventfd watched by a uv_poll_t has no such wait.
 */
#ifndef WQ_NOTIFY_H
#define WQ_NOTIFY_H

#include <stdatomic.h>
#include <uv.h>

struct wq__notify;
typedef void (*wq__notify_cb)(struct wq__notify *n);

struct wq__notify {
	uv_poll_t poll;      /* watches fd; its data is this struct */
	int fd;              /* the eventfd (closed with the handle) */
	/* 1 from init's uv_poll_init until close: the handle exists and close must be
	 * called. A zeroed struct reads closed, so owners keep no flag of their own. */
	int open;
	atomic_int pending;  /* 1: a write is on its way or unread; later sends skip theirs */
	wq__notify_cb cb;
	void *data;          /* the owner's */
};

/* Opens the eventfd and starts watching it on `loop`. 0, or a negative errno / libuv
 * code; after a failure `open` says whether the handle exists (then it must be closed
 * like a working one, with the loop run afterwards). The handle is referenced:
 * uv_unref() it like any other. */
int wq__notify_init(uv_loop_t *loop, struct wq__notify *n, wq__notify_cb cb, void *data);

/* Any thread, async-signal-safe: cb runs on the loop's thread after this call (once for
 * any number of sends meanwhile). Only between init and close. */
void wq__notify_send(struct wq__notify *n);

/* Loop thread: stops watching; the eventfd is closed once the handle is. No send may
 * follow (the owner's invariant: its senders are gone or told to stop first). Does
 * nothing unless open (never initialised, a failed init before the handle, closed). */
void wq__notify_close(struct wq__notify *n);

#endif
