/*
 * followup.c — follow-ups (issue 10, SPEC §4), the worker's side: a command handler
 * writes a JSON array [{kind, payload, key?, in?, lock?}] to the file named by
 * $WAKEQ_FOLLOWUPS; an in-process handler calls wq_job_followup. Either way the text is
 * handed, with the success that asked for it, to the store's finish, which creates the
 * follow-ups in that transaction or rejects them as a whole (op_followup.c). Nothing
 * here decides about them; it only carries them.
 *
 * The file: created empty by the worker for each attempt (mkostemp: mode 0600, O_EXCL,
 * close-on-exec) in $TMPDIR, else in /dev/shm when that is a tmpfs, else in /tmp; read
 * once the handler ended with a success, and removed whatever the outcome as soon as
 * the handler ended (the text read is kept until the job ends, followup_release).
 * Why /dev/shm before /tmp (issue 11, wave 5): one file is created and removed per
 * command attempt, and on a disk filesystem that is an inode allocated and freed each
 * time (~35 µs of the worker's thread per task on ext4, ~14 µs on tmpfs, measured).
 */
#include "followup.h"
#include "job.h"
#include "worker_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define FU_FILE_MAX (8u << 20) /* bytes of a follow-ups file the worker reads */

/* The [limits] that apply to j's tenant, into j->fu_limits. */
static void limits_of(const struct wq_worker *w, struct wq__job *j)
{
	const struct wq__limit_config *l = wq__config_limits(w->cfg, j->t.tenant);
	struct wq__followup_limits *fl = &j->fu_limits;

	memset(fl, 0, sizeof(*fl));
	fl->max_followups = l ? l->max_followups : -1;
	fl->max_depth = l ? l->max_followup_depth : -1;
	fl->max_payload = l ? l->max_payload_bytes : 0;
	if (l)
		snprintf(fl->section, sizeof(fl->section), l->named ? "limits.%s" : "limits",
			 l->tenant);
}

static const char *default_dir = "/tmp";

/* Once per process: /dev/shm when it is a tmpfs directory we may create files in. */
static void choose_default_dir(void)
{
	struct statfs fs;

	if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		default_dir = "/dev/shm";
}

int wq__followup_prepare(struct wq__job *j, char *env, size_t envsz)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir || strlen(dir) > 3000) {
		pthread_once(&once, choose_default_dir);
		dir = default_dir;
	}
	snprintf(path, sizeof(path), "%s/wakeq-followups-%" PRId64 ".%d-XXXXXX", dir, j->t.id,
		 j->t.attempt);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0 || !(j->fu_path = strdup(path))) {
		char why[256];

		snprintf(why, sizeof(why), "cannot create the follow-ups file in %s: %s", dir,
			 fd < 0 ? strerror(errno) : "out of memory");
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		/* nothing ran; the task is not at fault: pending again after the backoff */
		wq__worker_spawn_failed(j, why, 1);
		return -1;
	}
	close(fd);
	snprintf(env, envsz, "WAKEQ_FOLLOWUPS=%s", path);
	return 0;
}

/* The file's text into j->fu_text (NULL when empty), or why not into j->fu_error. */
static void read_file(struct wq__job *j)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd;

	/* The common case, still the empty regular file we made: nothing to open. Anything
	 * else (a symbolic link, a replaced file) goes the way below. */
	if (lstat(j->fu_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		return;
	fd = open(j->fu_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(j->fu_error, sizeof(j->fu_error), "the follow-ups file could not be "
			 "read: %s", fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	if ((size_t)st.st_size > FU_FILE_MAX) {
		snprintf(j->fu_error, sizeof(j->fu_error), "the follow-ups file is %lld bytes; "
			 "at most %u are read", (long long)st.st_size, FU_FILE_MAX);
		goto out;
	}
	if (st.st_size == 0 || !(j->fu_text = malloc((size_t)st.st_size + 1)))
		goto out; /* empty: no follow-ups */
	while (got < (size_t)st.st_size &&
	       (r = read(fd, j->fu_text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)r;
	j->fu_text[got] = '\0';
	if (strlen(j->fu_text) != got)
		snprintf(j->fu_error, sizeof(j->fu_error), "the follow-ups file holds a NUL byte");
	else if (strspn(j->fu_text, " \t\r\n") == got) { /* only blanks: none */
		free(j->fu_text);
		j->fu_text = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
}

/* The follow-ups of j (text or error) onto a success o, with the limits. */
static void attach(struct wq_worker *w, struct wq__job *j, struct wq__outcome *o)
{
	if (o->kind != WQ__FINISH_SUCCEEDED || (!j->fu_text && !j->fu_error[0]))
		return;
	limits_of(w, j);
	o->followups = j->fu_text;
	o->followups_error = j->fu_error[0] ? j->fu_error : NULL;
	o->followup_limits = &j->fu_limits;
}

void wq__followup_collect(struct wq_worker *w, struct wq__job *j, struct wq__outcome *o)
{
	if (!j->fu_path)
		return;
	if (o->kind == WQ__FINISH_SUCCEEDED)
		read_file(j);
	unlink(j->fu_path);
	free(j->fu_path); /* removed: nothing left for followup_release to remove */
	j->fu_path = NULL;
	attach(w, j, o);
}

void wq__followup_collect_inproc(struct wq_worker *w, struct wq__job *j, struct wq_job *job,
				 struct wq__outcome *o)
{
	if (o->kind != WQ__FINISH_SUCCEEDED || !job->followups)
		return;
	if (!(j->fu_text = json_dumps(job->followups, JSON_COMPACT)))
		snprintf(j->fu_error, sizeof(j->fu_error), "out of memory (follow-ups)");
	attach(w, j, o);
}

void wq__followup_release(struct wq__job *j)
{
	if (j->fu_path) {
		unlink(j->fu_path); /* not collected (the handler never ended) */
		free(j->fu_path);
	}
	free(j->fu_text);
	j->fu_path = j->fu_text = NULL;
}

/* ---- the in-process handler's side (public API) ---- */

wq_rc wq_job_followup(wq_job *job, const char *kind, const char *payload, const char *key,
		      int64_t delay_us, const char *lock, wq_error *err)
{
	json_t *e, *p = NULL;
	json_error_t je;
	char in[32];
	int bad;

	if (!job || !kind)
		return wq__err(err, WQ_EINVAL, "wq_job_followup needs a job and a kind");
	if (wq__check_kind(kind, err) != WQ_OK)
		return WQ_EINVAL;
	if (delay_us < 0)
		return wq__err(err, WQ_EINVAL, "wq_job_followup: negative delay");
	if (payload && !(p = json_loads(payload, JSON_DECODE_ANY, &je)))
		return wq__err(err, WQ_EINVAL, "follow-up payload is not JSON (line %d, column %d)",
			       je.line, je.column);
	if (!job->followups && !(job->followups = json_array())) {
		json_decref(p);
		return wq__err(err, WQ_ENOMEM, "wq_job_followup: out of memory");
	}
	snprintf(in, sizeof(in), "%" PRId64 "ms", (delay_us + 999) / 1000);
	e = json_object();
	bad = !e || json_object_set_new(e, "kind", json_string(kind)) ||
	      (p && json_object_set_new(e, "payload", p)) ||
	      (key && json_object_set_new(e, "key", json_string(key))) ||
	      (delay_us && json_object_set_new(e, "in", json_string(in))) ||
	      (lock && json_object_set_new(e, "lock", json_string(lock)));
	if (bad || json_array_append_new(job->followups, e)) {
		/* the store checks key and lock; an invalid string is refused there as a whole */
		if (bad)
			json_decref(e);
		return wq__err(err, WQ_ENOMEM, "wq_job_followup: out of memory or invalid text");
	}
	return WQ_OK;
}

wq_rc wq_task_family(wq_db *db, int64_t id, int64_t *parent, int64_t **children, size_t *n,
		     wq_error *err)
{
	if (!db || !parent || !children || !n)
		return wq__err(err, WQ_EINVAL, "wq_task_family needs a store and out-parameters");
	if (id <= 0)
		return wq__err(err, WQ_EINVAL, "invalid task id %lld", (long long)id);
	return WQ__STORE(db, family, id, parent, children, n, err);
}
