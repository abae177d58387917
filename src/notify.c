/* notify.c — the loop's wake-up from other threads (notify.h). */
#include "notify.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

/*
 * pending is cleared after the eventfd is read and before the callback: a send that
 * found it set published its data before that and the callback now sees it; a send
 * after the clear writes again and wakes the loop again.
 */
static void on_readable(uv_poll_t *h, int status, int events)
{
	struct wq__notify *n = h->data;
	uint64_t v;

	(void)status;
	(void)events;
	while (read(n->fd, &v, sizeof v) < 0 && errno == EINTR)
		;
	atomic_store(&n->pending, 0);
	n->cb(n);
}

int wq__notify_init(uv_loop_t *loop, struct wq__notify *n, wq__notify_cb cb, void *data)
{
	int r;

	n->cb = cb;
	n->data = data;
	atomic_init(&n->pending, 0);
	n->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->fd < 0)
		return -errno;
	r = uv_poll_init(loop, &n->poll, n->fd);
	if (r != 0) {
		close(n->fd);
		n->fd = -1;
		return r;
	}
	n->poll.data = n;
	n->open = 1; /* from here on the owner's close path closes it, failure or not */
	return uv_poll_start(&n->poll, UV_READABLE, on_readable);
}

void wq__notify_send(struct wq__notify *n)
{
	uint64_t one = 1;

	if (atomic_exchange(&n->pending, 1))
		return;
	while (write(n->fd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

static void on_closed(uv_handle_t *h)
{
	struct wq__notify *n = h->data;

	close(n->fd);
	n->fd = -1;
}

void wq__notify_close(struct wq__notify *n)
{
	if (!n->open)
		return;
	n->open = 0;
	uv_close((uv_handle_t *)&n->poll, on_closed);
}
