/*
 * op_wake.c — wake-ups (issues 11, 12): when a worker's next claim is worth making.
 *
 * PostgreSQL has LISTEN/NOTIFY (the driver). SQLite has nothing that crosses processes,
 * so a SQLite store names a wake-up file next to the database, `<database>-wake`: a
 * transaction that creates pending work asks for a poke (wq__notify), and wq__end opens
 * and closes the file once the commit succeeded (nothing is written, not even a time).
 * Workers of the same file on the same host watch it with inotify (IN_OPEN), so
 * an enqueue in another process wakes an idle worker within a millisecond. The file is a
 * doorbell, never state: a poke that fails (a read-only directory, another user's file)
 * or a lost inotify event only delays the work to the worker's next poll, and a poke
 * without work costs one empty claim. A file on a network file system may not deliver
 * inotify events at all: the poll remains.
 *
 * wake_next: the earliest future due time, for the worker's one timer (src/wakeup.c).
 */
#include "op.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

struct wq__wakefile {
	char *path;  /* owned: "<database>-wake", absolute when the database's path resolved */
	mode_t mode; /* the database file's permission bits: who may open it may poke */
	int ifd;     /* inotify descriptor (close-on-exec, non-blocking); -1 until watched */
	int wd;      /* its watch on path; -1 when not watching */
};

struct wq__wakefile *wq__wakefile_new(const char *db_path)
{
	struct wq__wakefile *wf = calloc(1, sizeof(*wf));
	char *abs = realpath(db_path, NULL);
	const char *base = abs ? abs : db_path;
	struct stat st;

	if (!wf)
		goto fail;
	wf->path = malloc(strlen(base) + sizeof("-wake"));
	if (!wf->path)
		goto fail;
	strcpy(wf->path, base);
	strcat(wf->path, "-wake");
	wf->mode = stat(base, &st) == 0 ? (st.st_mode & 0666) : 0644;
	wf->ifd = -1;
	wf->wd = -1;
	free(abs);
	return wf;
fail:
	free(abs);
	free(wf);
	return NULL;
}

void wq__wakefile_free(struct wq__wakefile *wf)
{
	if (!wf)
		return;
	if (wf->ifd >= 0)
		close(wf->ifd);
	free(wf->path);
	free(wf);
}

/* Creates the file if it is missing; never follows a symbolic link. */
static void create_file(const struct wq__wakefile *wf)
{
	int fd = open(wf->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      wf->mode);

	if (fd >= 0)
		close(fd);
}

void wq__wakefile_poke(struct wq__wakefile *wf)
{
	if (!wf)
		return;
	/* An open for reading is the doorbell (IN_OPEN): it changes nothing on disk, where
	 * touching the times would dirty an inode that the next fdatasync's journal commit
	 * then has to carry. */
	int fd = open(wf->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return;
	}
	if (errno == ENOENT)
		create_file(wf); /* its watchers, if any, watch a file that is gone: they rewatch */
}

/* Watches the file (creating it first); 0, or -1 when it cannot be watched now. */
static int watch(struct wq__wakefile *wf)
{
	if (wf->ifd < 0 && (wf->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return -1;
	if (wf->wd >= 0)
		return 0;
	create_file(wf);
	wf->wd = inotify_add_watch(wf->ifd, wf->path,
				   IN_OPEN | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF |
					   IN_MOVE_SELF | IN_DONT_FOLLOW);
	return wf->wd >= 0 ? 0 : -1;
}

int wq__wakefile_fd(struct wq__store *s)
{
	struct wq__wakefile *wf = s->wake;

	if (!wf || watch(wf) != 0)
		return -1;
	return wf->ifd;
}

/*
 * Reads every pending event without blocking: 1 when any arrived. The file deleted or
 * renamed (its watch ends with IN_IGNORED), or an overflowed queue: the file is watched
 * again at once, on the same descriptor, and the answer is 1 (something may have been
 * missed). -1 only when the descriptor itself is gone.
 */
int wq__wakefile_drain(struct wq__store *s)
{
	struct wq__wakefile *wf = s->wake;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int got = 0, rewatch = 0;
	ssize_t n;

	if (!wf || wf->ifd < 0 || wf->wd < 0)
		return -1; /* not watching: the caller asks wakeup_fd again */
	while ((n = read(wf->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			got = 1;
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW))
				rewatch = 1;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return -1;
	if (rewatch) {
		if (wf->wd >= 0)
			inotify_rm_watch(wf->ifd, wf->wd); /* fails harmlessly once IN_IGNORED */
		wf->wd = -1;
		if (watch(wf) != 0)
			return -1; /* the worker's poll is what is left; wakeup_fd retries */
	}
	return got;
}

/* ---- the earliest future due time ---- */

static wq_rc read_next(const struct wq__row *r, void *ctx)
{
	int64_t *at = ctx;

	for (int i = 0; i < 2; i++) {
		int64_t v = wq__null(r, i) ? 0 : wq__i64(r, i);

		if (v > 0 && (*at == 0 || v < *at))
			*at = v;
	}
	return WQ_OK;
}

wq_rc wq__op_wake_next(struct wq__store *s, const char *const *kinds, size_t nkinds,
		       int64_t now, int64_t *at, wq_error *err)
{
	int64_t next = 0;
	char *kj;
	wq_rc rc = wq__json_texts(kinds, nkinds, "kind", &kj, err);

	if (rc)
		return rc;
	rc = wq__rows(s, SQL_WAKE_NEXT, WQ__ARGS(WQ__AT(kj), WQ__AI(now)), read_next, &next,
		      NULL, "read the next due time", err);
	free(kj);
	if (!rc)
		*at = next;
	return rc;
}
